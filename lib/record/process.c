/* SPDX-License-Identifier: MIT */
/*
 * process.c - process and thread tracking for the recorder.  A pid names
 * a process only until it is reused, so every table entry is a new spool
 * id; the pid and tid indexes point at the latest one.  Modules are written
 * to the spool lazily, when a sample first needs them, and retired when an
 * mmap replaces them, the process execs, or it exits.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "jit_names.h"
#include "jitdump.h"
#include "proc.h"
#include "process.h"

#define RETIRE_MAX 256

int64_t pt_write_process(struct proc_table *pt, struct proc *p, uint64_t time)
{
	int64_t id = prof_spool_writer_add_process(pt->w, &PROF_INIT(prof_process,
		.pid = p->pid, .ppid = p->ppid, .time_ns = time,
		.start_time_ns = p->start_time_ns, .comm = p->comm, .exe = p->exe));

	if (id > 0)
		p->spool_id = (uint32_t)id;
	return id;
}

int64_t pt_write_thread(struct proc_table *pt, struct thr *t, uint64_t time)
{
	int64_t id = prof_spool_writer_add_thread(pt->w, &PROF_INIT(prof_thread,
		.process = t->proc->spool_id, .tid = t->tid, .time_ns = time, .name = t->name));

	if (id > 0)
		t->spool_id = (uint32_t)id;
	return id;
}

void pt_set_writer(struct proc_table *pt, struct prof_spool_writer *w)
{
	pt->w = w;
	intern_release(&pt->frame_modules);	/* ids of the old file */
	intern_init(&pt->frame_modules);
	pt->ngone = 0;
}

void pt_init(struct proc_table *pt, struct prof_spool_writer *w)
{
	memset(pt, 0, sizeof(*pt));
	intern_init(&pt->pid_index);
	intern_init(&pt->tid_index);
	intern_init(&pt->frame_modules);
	pt->w = w;
}

void pt_release(struct proc_table *pt)
{
	size_t i;

	for (i = 0; i < pt->nprocs; i++) {
		as_release(&pt->procs[i]->as);
		free(pt->procs[i]->exe);
		free(pt->procs[i]);
	}
	free(pt->procs);
	free(pt->thrs);
	intern_release(&pt->pid_index);
	intern_release(&pt->tid_index);
	intern_release(&pt->frame_modules);
	free(pt->gone);
	for (i = 0; i < pt->njitdumps; i++) {
		free(pt->jitdumps[i].path);
		if (pt->jitdumps[i].tail)
			jitdump_tail_release(pt->jitdumps[i].tail);
		free(pt->jitdumps[i].tail);
		if (pt->jitdumps[i].names)
			jit_names_release(pt->jitdumps[i].names);
		free(pt->jitdumps[i].names);
	}
	free(pt->jitdumps);
}

const char *pt_jitdump(const struct proc_table *pt, pid_t pid)
{
	size_t i;

	for (i = pt->njitdumps; i-- > 0;)
		if (pt->jitdumps[i].pid == pid)
			return pt->jitdumps[i].path;
	return NULL;
}

static int load_cfi(void *arg, uint64_t lo, uint64_t hi, const struct cfi_row *rows, size_t n)
{
	struct pt_jitdump *j = arg;
	struct proc *p = j->tail_proc;

	return jit_rules_load(&p->as.jit, lo, hi, rows, n);
}

static int load_name(void *arg, uint64_t lo, uint64_t hi, uint64_t time, const char *name,
		     uint64_t from)
{
	struct pt_jitdump *j = arg;

	if (!j->names)
		return 0;
	return name ? jit_names_load(j->names, lo, hi, time, name)
		    : jit_names_move(j->names, from, lo, hi - lo, time);
}

/* What J's file gained, while its process lives; its file closed once it is gone. */
static int read_jitdump(struct proc_table *pt, struct pt_jitdump *j)
{
	struct proc *p = pt_find_process(pt, j->pid);
	char *alive;
	int r;

	struct jitdump_sink sink = { .cfi = load_cfi, .code = load_name, .arg = j };

	if (!p || p->exited || p->start_time_ns != j->start_time_ns) {
		/* gone: what its samples' frames were named stays, for the capture */
		if (j->tail)
			jitdump_tail_release(j->tail);
		free(j->tail);
		j->tail = NULL;
		if (j->names)
			jit_names_forget_code(j->names);
		return 0;
	}
	if (!j->tail)
		return 0;
	/* through its root: the file is in its mount namespace */
	if (asprintf(&alive, "/proc/%d/root%s", (int)j->pid, j->path) < 0)
		return error_setx(-ENOMEM, "out of memory");
	j->tail_proc = p;
	r = jitdump_tail_read(j->tail, alive, &sink);
	free(alive);
	return r;
}

int pt_jit_frames(struct proc *p, struct unwind_result *u, uint64_t time)
{
	return p->jit_names ? jit_names_frames(p->jit_names, &p->as, u, time) : 0;
}

const struct jit_sym *pt_jit_names(struct proc_table *pt, pid_t pid, size_t *n)
{
	size_t i;

	for (i = pt->njitdumps; i-- > 0;)
		if (pt->jitdumps[i].pid == pid && pt->jitdumps[i].names)
			return jit_names_used(pt->jitdumps[i].names, n);
	*n = 0;
	return NULL;
}

int pt_read_jitdumps(struct proc_table *pt)
{
	size_t i;
	int r = 0;

	for (i = 0; i < pt->njitdumps && r >= 0; i++)
		if (pt->jitdumps[i].tail)
			r = read_jitdump(pt, &pt->jitdumps[i]);
	return r;
}

/*
 * P mapped its jitdump at PATH: the CFI of its code is read as the file
 * grows (from now: samples follow), its names at the end.
 */
static int note_jitdump(struct proc_table *pt, struct proc *p, const char *path)
{
	const char *have = pt_jitdump(pt, p->pid);
	struct jitdump_tail *tail;
	struct jit_names *names;
	void *v = pt->jitdumps;
	char *copy;

	if (have && !strcmp(have, path))
		return 0;
	if (grow_array(&v, &pt->jitdumps_cap, pt->njitdumps + 1, sizeof(*pt->jitdumps)) < 0)
		return -ENOMEM;
	pt->jitdumps = v;
	copy = xstrdup(path);
	tail = malloc(sizeof(*tail));
	names = calloc(1, sizeof(*names));
	if (!copy || !tail || !names) {
		free(copy);
		free(tail);
		free(names);
		return error_setx(-ENOMEM, "out of memory");
	}
	jitdump_tail_init(tail);
	pt->jitdumps[pt->njitdumps++] = (struct pt_jitdump){
		.pid = p->pid, .start_time_ns = p->start_time_ns, .path = copy, .tail = tail,
		.names = names,
	};
	p->jit_names = names;
	return read_jitdump(pt, &pt->jitdumps[pt->njitdumps - 1]);
}

struct proc *pt_find_process(struct proc_table *pt, pid_t pid)
{
	uint32_t i = intern_find(&pt->pid_index, (uint32_t)pid, 0);

	return i ? pt->procs[i - 1] : NULL;
}

static struct thr *find_thread(struct proc_table *pt, pid_t tid)
{
	uint32_t i = intern_find(&pt->tid_index, (uint32_t)tid, 0);

	return i ? &pt->thrs[i - 1] : NULL;
}

struct thr *pt_find_thread(struct proc_table *pt, pid_t tid)
{
	struct thr *t = find_thread(pt, tid);

	return t && !t->exited ? t : NULL;
}

static int retire(struct proc_table *pt, const uint32_t *ids, size_t n, uint64_t time)
{
	size_t i;
	int r;

	for (i = 0; i < n; i++) {
		r = prof_spool_writer_retire_module(pt->w, ids[i], time);
		if (r < 0)
			return r;
	}
	return 0;
}

/* HotSpot's library, whatever JDK it comes from: the process is a JVM */
static bool is_libjvm(const char *path)
{
	const char *slash = strrchr(path, '/');

	return !strcmp(slash ? slash + 1 : path, "libjvm.so");
}

static int add_mapping(struct proc_table *pt, struct proc *p, const struct map_entry *e,
		       uint64_t time)
{
	uint32_t retired[RETIRE_MAX];
	size_t n = RETIRE_MAX;
	struct as_module m;
	int r;

	/* a JIT maps its jitdump executable to announce it: a marker, not code */
	if (jitdump_is_marker(e->path))
		return note_jitdump(pt, p, e->path);
	if (e->build_id_len)
		r = as_describe_build_id(&p->as, e->start, e->end, e->pgoff, e->build_id,
					 e->build_id_len, e->path, &m);
	else
		r = as_describe(&p->as, e->start, e->end, e->pgoff, e->dev_major, e->dev_minor,
				e->inode, e->path, &m);
	if (r < 0)
		return r;
	if (is_libjvm(e->path))
		p->jvm = true;
	r = as_add(&p->as, &m, retired, &n);
	if (r < 0) {
		free(m.path);
		if (m.open_path != m.path)
			free(m.open_path);
		return r;
	}
	return retire(pt, retired, n, time);
}

/* Executable memory that no file backs: a JIT's code, trampolines. */
static bool is_anon_code(const struct map_entry *e)
{
	static const char *const anon[] = { "//anon", "/dev/zero", "/anon_hugepage", "/SYSV" };
	size_t i;

	if (!e->exec)
		return false;
	if (!e->path[0] || (e->path[0] == '[' && strcmp(e->path, "[vdso]") &&
			    strcmp(e->path, "[vsyscall]")))
		return true;	/* unnamed, [heap], [stack], [anon:...] */
	for (i = 0; i < sizeof(anon) / sizeof(anon[0]); i++)
		if (!strncmp(e->path, anon[i], strlen(anon[i])))
			return true;
	return false;
}

static bool is_code_mapping(const struct map_entry *e)
{
	if (!e->exec || is_anon_code(e))
		return false;
	/* anonymous code (a JIT's) is named per address, through the perf map */
	return !strcmp(e->path, "[vdso]") || e->path[0] == '/';
}

int pt_refresh_maps(struct proc_table *pt, struct proc *p, uint64_t time)
{
	struct map_entry *maps;
	int n, i, r = 0;

	n = maps_read(p->pid, &maps);
	if (n == -EACCES || n == -EPERM) {
		/* another user's process, to a recorder of the machine with CAP_PERFMON alone */
		prof_errmsg_clear();
		return 0;
	}
	if (n < 0)
		return n == -ESRCH ? 0 : n;
	for (i = 0; i < n && r >= 0; i++) {
		struct as_module *have;

		if (is_anon_code(&maps[i])) {
			/* what frame pointers may return into (mprotect makes no record) */
			r = as_add_anon(&p->as, maps[i].start, maps[i].end);
			continue;
		}
		if (!is_code_mapping(&maps[i]))
			continue;
		have = as_find(&p->as, maps[i].start);
		if (have && have->start == maps[i].start && have->end == maps[i].end &&
		    have->inode == maps[i].inode)
			continue;
		r = add_mapping(pt, p, &maps[i], time);
	}
	maps_free(maps, n);
	return r;
}

/* Clock ticks since boot (/proc/PID/stat's starttime) in ns. */
static uint64_t ticks_ns(uint64_t ticks)
{
	static uint64_t hz;

	if (!hz) {
		long v = sysconf(_SC_CLK_TCK);

		hz = v > 0 ? (uint64_t)v : 100;
	}
	return ticks * (1000000000ull / hz);
}

/* When PID started, in ns since boot (/proc/PID/stat), or 0: with the pid it names a process. */
static uint64_t start_time(pid_t pid)
{
	uint64_t ticks = 0;
	char comm[16];

	if (proc_stat(pid, comm, NULL, &ticks) < 0)
		return 0;
	return ticks_ns(ticks);
}

static int new_process(struct proc_table *pt, pid_t pid, pid_t ppid, const char *comm,
		       const char *exe, uint64_t start_ns, uint64_t time, struct proc **ret)
{
	struct proc *p;
	void *arr = pt->procs;
	int64_t id;
	int r;

	r = grow_array(&arr, &pt->procs_cap, pt->nprocs + 1, sizeof(*pt->procs));
	pt->procs = arr;
	if (r < 0)
		return r;
	p = calloc(1, sizeof(*p));
	if (!p)
		return error_setx(-ENOMEM, "out of memory");
	p->pid = pid;
	p->first_thread = pt->nthrs;
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	as_init(&p->as, pid, pt->spaces);
	p->ppid = ppid;
	p->start_time_ns = start_ns;
	p->exe = xstrdup(exe);
	p->time_ns = time;
	id = p->exe ? pt_write_process(pt, p, time) : error_setx(-ENOMEM, "out of memory");
	if (id < 0) {
		as_release(&p->as);
		free(p->exe);
		free(p);
		return (int)id;
	}
	pt->procs[pt->nprocs++] = p;
	pt->processes_seen++;
	r = intern_set(&pt->pid_index, (uint32_t)pid, 0, (uint32_t)pt->nprocs);
	if (r < 0)
		return r;
	pt->live_processes++;
	*ret = p;
	return 0;
}

int pt_process(struct proc_table *pt, pid_t pid, uint64_t time, bool snapshot, struct proc **ret)
{
	struct proc *p = pt_find_process(pt, pid);
	uint64_t ticks = 0;
	char comm[16] = "";
	pid_t ppid = 0;

	/*
	 * A record from before the exit (rings deliver late, an exit found in
	 * /proc is stamped "now") still belongs to the process that exited; only
	 * a later one can be a new process with the pid reused.
	 */
	if (p && (!p->exited || (time <= p->exit_ns && p->spool_id))) {
		*ret = p;
		return 0;
	}
	if (proc_stat(pid, comm, &ppid, &ticks) < 0)
		snprintf(comm, sizeof(comm), "%d", (int)pid);
	return pt_process_read(pt, pid, ppid, comm, ticks_ns(ticks), time, snapshot, ret);
}

int pt_process_read(struct proc_table *pt, pid_t pid, pid_t ppid, const char *comm,
		    uint64_t start_ns, uint64_t time, bool snapshot, struct proc **ret)
{
	char exe[PATH_MAX];
	struct proc *p;
	int r;

	proc_exe(pid, exe, sizeof(exe));
	r = new_process(pt, pid, ppid, comm, exe, start_ns, time, &p);
	if (r < 0)
		return r;
	if (ppid > 0) {
		/* where its files are, if it is gone when its mmaps are read */
		struct proc *parent = pt_find_process(pt, ppid);

		if (parent && !parent->exited)
			as_set_parent(&p->as, &parent->as);
		else
			p->as.ancestors[0] = ppid;
	}
	if (snapshot) {
		r = pt_refresh_maps(pt, p, time);
		if (r < 0)
			return r;
	}
	*ret = p;
	return 0;
}

static int new_thread(struct proc_table *pt, struct proc *p, pid_t tid, const char *name,
		      uint64_t time, struct thr **ret)
{
	void *arr = pt->thrs;
	struct thr *t;
	int64_t id;
	int r;

	r = grow_array(&arr, &pt->thrs_cap, pt->nthrs + 1, sizeof(*pt->thrs));
	pt->thrs = arr;
	if (r < 0)
		return r;
	t = &pt->thrs[pt->nthrs];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->proc = p;
	snprintf(t->name, sizeof(t->name), "%s", name);
	id = pt_write_thread(pt, t, time);
	if (id < 0)
		return (int)id;
	pt->nthrs++;
	pt->threads_seen++;
	r = intern_set(&pt->tid_index, (uint32_t)tid, 0, (uint32_t)pt->nthrs);
	if (r < 0)
		return r;
	*ret = t;
	return 0;
}

int pt_thread_named(struct proc_table *pt, struct proc *p, pid_t tid, const char *name,
		    uint64_t time, struct thr **ret)
{
	return new_thread(pt, p, tid, name, time, ret);
}

int pt_thread(struct proc_table *pt, pid_t pid, pid_t tid, uint64_t time, struct thr **ret)
{
	struct thr *t = find_thread(pt, tid);
	struct proc *p;
	char name[16];
	int r;

	/* (a process forgotten by a switch of files, spool id 0, is not taken back) */
	if (t && t->proc->pid == pid && t->spool_id &&
	    ((!t->exited && !t->proc->exited) || (t->proc->exited && time <= t->proc->exit_ns))) {
		*ret = t;
		return 0;
	}
	r = pt_process(pt, pid, time, true, &p);
	if (r < 0)
		return r;
	proc_thread_name(pid, tid, name, p->comm);
	return new_thread(pt, p, tid, name, time, ret);
}

int pt_fork(struct proc_table *pt, pid_t pid, pid_t ppid, pid_t tid, uint64_t time)
{
	struct proc *parent, *child;
	struct thr *t;
	int r;

	if (pid == ppid) {	/* a new thread: its name is its creator's until renamed */
		r = pt_process(pt, pid, time, true, &parent);
		if (r < 0)
			return r;
		t = find_thread(pt, tid);
		if (t && !t->exited && t->proc == parent)
			return 0;
		return new_thread(pt, parent, tid, parent->comm, time, &t);
	}
	if (pt->no_children)
		return 0;	/* its parent's events did not pass to it: nothing will come */
	r = pt_process(pt, ppid, time, true, &parent);
	if (r < 0)
		return r;
	child = pt_find_process(pt, pid);
	if (child && !child->exited) {
		/* already known (seen through a sample or mmap first, from another CPU's ring) */
		if (!child->as.ancestors[0]) {
			as_set_parent(&child->as, &parent->as);
			as_find_files(&child->as);
		}
		return 0;
	}
	char exe[PATH_MAX];

	/*
	 * The child runs its parent's image, and it started at the record's
	 * time: nothing to read of /proc, which a fork storm (a make -j, a
	 * preforking server, a test suite's thousands of children) would read
	 * twice a child, while the rings fill.  The start time tells a pid's
	 * processes apart in the spool; every later file of the recording
	 * writes this one's as it is.
	 */
	r = pt_settle_exec(pt, parent, NULL);
	if (r < 0)
		return r;
	if (parent->exe && *parent->exe)
		snprintf(exe, sizeof(exe), "%s", parent->exe);
	else
		proc_exe(ppid, exe, sizeof(exe));
	r = new_process(pt, pid, ppid, parent->comm, exe, time ? time : start_time(pid), time,
			&child);
	if (r < 0)
		return r;
	/* the child starts with its parent's mappings; no mmap record will say so */
	r = as_clone(&child->as, &parent->as);
	if (r < 0)
		return r;
	return new_thread(pt, child, tid, parent->comm, time, &t);
}

int pt_comm(struct proc_table *pt, pid_t pid, pid_t tid, const char *comm, bool exec,
	    uint64_t time)
{
	uint32_t retired[RETIRE_MAX];
	size_t n = RETIRE_MAX;
	struct proc *p;
	struct thr *t;
	int r;

	if (exec) {
		p = pt_find_process(pt, pid);
		if (!p || p->exited)
			/* first sight: the mmap records of the new image follow */
			return pt_process(pt, pid, time, false, &p) ?: pt_thread(pt, pid, tid, time, &t);
		as_clear(&p->as, retired, &n);
		p->jvm = false;
		p->jit_names = NULL;	/* the old image's JIT */
		r = retire(pt, retired, n, time);
		if (r < 0)
			return r;
		/* an exec with no mapping since (none seen): its own record first */
		r = pt_settle_exec(pt, p, NULL);
		if (r < 0)
			return r;
		snprintf(p->comm, sizeof(p->comm), "%s", comm);
		/*
		 * Its executable is the first file its mmap records name: the
		 * kernel maps the program before its interpreter, in the same
		 * execve, so that record follows this one.  Not a readlink of
		 * /proc/PID/exe here: a path walk of /proc for each exec (~15 us
		 * each here, 74 of them in a make -j2), and read late, when the
		 * process may have exec'd again or gone.
		 */
		p->exe_pending = true;
		p->exec_ns = time;
	}
	r = pt_thread(pt, pid, tid, time, &t);
	if (r < 0 || !strncmp(t->name, comm, sizeof(t->name) - 1))
		return r;
	snprintf(t->name, sizeof(t->name), "%s", comm);
	return prof_spool_writer_rename_thread(pt->w, t->spool_id, time, comm);
}

/* Rebuild the indexes of the table, and where each process's threads begin. */
static int reindex(struct proc_table *pt)
{
	size_t i;
	int r = 0;

	intern_release(&pt->pid_index);
	intern_release(&pt->tid_index);
	intern_init(&pt->pid_index);
	intern_init(&pt->tid_index);
	for (i = 0; i < pt->nprocs && r == 0; i++) {
		pt->procs[i]->first_thread = pt->nthrs;
		r = intern_set(&pt->pid_index, (uint32_t)pt->procs[i]->pid, 0, (uint32_t)i + 1);
	}
	for (i = pt->nthrs; i-- > 0;)
		if (pt->thrs[i].proc->first_thread > i)
			pt->thrs[i].proc->first_thread = i;
	/* in order: a reused tid maps to its latest thread */
	for (i = 0; i < pt->nthrs && r == 0; i++)
		r = intern_set(&pt->tid_index, (uint32_t)pt->thrs[i].tid, 0, (uint32_t)i + 1);
	return r;
}

int pt_collect(struct proc_table *pt, uint64_t now, uint64_t grace_ns)
{
	size_t i, k;
	bool any = false;

	for (i = k = 0; i < pt->nthrs; i++) {
		const struct thr *t = &pt->thrs[i];

		if (t->exited && t->exit_ns + grace_ns < now &&
		    (!t->proc->exited || t->proc->exit_ns + grace_ns < now)) {
			any = true;
			continue;
		}
		pt->thrs[k++] = *t;
	}
	pt->nthrs = k;
	for (i = 0; i < pt->nprocs; i++)
		pt->procs[i]->has_threads = false;
	for (i = 0; i < pt->nthrs; i++)
		pt->thrs[i].proc->has_threads = true;
	for (i = k = 0; i < pt->nprocs; i++) {
		struct proc *p = pt->procs[i];

		if (!p->exited || p->exit_ns + grace_ns >= now || p->has_threads) {
			pt->procs[k++] = p;
			continue;
		}
		if (p->ran_anon && p->spool_id) {
			void *v = pt->gone;

			if (grow_array(&v, &pt->gone_cap, pt->ngone + 1, sizeof(*pt->gone)) < 0)
				return error_setx(-ENOMEM, "out of memory");
			pt->gone = v;
			pt->gone[pt->ngone++] = (struct pt_gone){ p->pid, p->spool_id };
		}
		as_release(&p->as);
		free(p->exe);
		free(p);
		any = true;
	}
	pt->nprocs = k;
	return any ? reindex(pt) : 0;
}

int pt_settle_exec(struct proc_table *pt, struct proc *p, const char *path)
{
	char exe[PATH_MAX];

	if (!p->exe_pending)
		return 0;
	p->exe_pending = false;
	if (!path) {
		proc_exe(p->pid, exe, sizeof(exe));
		path = exe;
	}
	free(p->exe);
	p->exe = xstrdup(path);
	if (!p->exe)
		return error_setx(-ENOMEM, "out of memory");
	return prof_spool_writer_add_exec(pt->w, p->spool_id, p->exec_ns, p->comm, p->exe);
}

int pt_process_exit(struct proc_table *pt, struct proc *p, uint64_t time)
{
	size_t i;
	int r;

	if (p->exited)
		return 0;
	r = pt_settle_exec(pt, p, NULL);
	if (r < 0)
		return r;
	p->exited = true;
	p->exit_ns = time;
	pt->live_processes--;
	/* only threads created since it started can be its own: an exit costs its lifetime */
	for (i = p->first_thread; i < pt->nthrs; i++)
		if (pt->thrs[i].proc == p && !pt->thrs[i].exited) {
			pt->thrs[i].exited = true;
			pt->thrs[i].exit_ns = time;
		}
	r = prof_spool_writer_add_process_exit(pt->w, p->spool_id, time);
	/* nothing will be unwound here again: drop the modules and libdwfl state */
	as_release(&p->as);
	return r;
}

int pt_exit(struct proc_table *pt, pid_t pid, pid_t tid, uint64_t time)
{
	struct proc *p = pt_find_process(pt, pid);
	struct thr *t = find_thread(pt, tid);
	int r = 0;

	if (t && !t->exited && t->proc->pid == pid) {
		t->exited = true;
		t->exit_ns = time;
		r = prof_spool_writer_add_thread_exit(pt->w, t->spool_id, time);
	}
	if (r >= 0 && p && pid == tid)
		r = pt_process_exit(pt, p, time);
	return r;
}

int pt_mmap(struct proc_table *pt, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
	    uint32_t maj, uint32_t min, uint64_t inode, const uint8_t *build_id,
	    uint8_t build_id_len, const char *path, uint64_t time)
{
	struct map_entry e = { .start = start, .end = start + len, .pgoff = pgoff,
			       .dev_major = maj, .dev_minor = min, .inode = inode, .exec = true,
			       .path = (char *)path, .build_id = build_id,
			       .build_id_len = build_id_len };
	struct proc *p;
	int r;

	if (!is_code_mapping(&e) && !is_anon_code(&e))
		return 0;
	r = pt_process(pt, pid, time, false, &p);
	if (r >= 0 && p->exe_pending && path[0] == '/')
		r = pt_settle_exec(pt, p, path);
	if (r < 0)
		return r;
	/* anonymous code (JIT) is named by frames, not modules: only its range is kept */
	if (is_anon_code(&e)) {
		p->ran_anon = true;
		return as_add_anon(&p->as, start, start + len);
	}
	return add_mapping(pt, p, &e, time);
}

int64_t pt_module_id(struct proc_table *pt, struct proc *p, struct as_module *m)
{
	struct prof_module rec = {
		.sz = sizeof(rec),
		.process = p->spool_id, .start = m->start, .end = m->end, .pgoff = m->pgoff,
		.dev_major = m->dev_major, .dev_minor = m->dev_minor, .inode = m->inode,
		.build_id_len = m->build_id_len, .path = m->path,
	};
	int64_t id;

	if (m->spool_id)
		return m->spool_id;
	memcpy(rec.build_id, m->build_id, m->build_id_len);
	if (m->vdso)
		rec.flags |= PROF_MODULE_VDSO;
	if (m->replaced)
		rec.flags |= PROF_MODULE_DELETED;
	id = prof_spool_writer_add_module(pt->w, &rec);
	if (id <= 0)
		return id;
	m->spool_id = (uint32_t)id;
	return id;
}

/* What tells a file apart from another, in two words: device, inode, path, offset, build-id. */
static void file_key(const struct as_module *m, uint64_t *a, uint64_t *b)
{
	uint64_t h = 14695981039346656037ull;
	const unsigned char *c;
	uint8_t i;

	for (c = (const unsigned char *)m->path; *c; c++)
		h = (h ^ *c) * 1099511628211ull;
	for (i = 0; i < m->build_id_len; i++)
		h = (h ^ m->build_id[i]) * 1099511628211ull;
	*a = ((uint64_t)m->dev_major << 52) ^ ((uint64_t)m->dev_minor << 32) ^ m->inode;
	*b = h ^ (m->pgoff * 0x9e3779b97f4a7c15ull);
}

int64_t pt_frame_module_id(struct proc_table *pt, struct proc *p, struct as_module *m,
			   bool *ret_first)
{
	uint64_t a, b;
	int64_t id;
	int r;

	if (m->frame_module_id) {
		*ret_first = false;
		return m->frame_module_id;
	}
	id = pt_module_id(pt, p, m);	/* its own record, for the spool's map of P */
	if (id <= 0)
		return id;
	file_key(m, &a, &b);
	m->frame_module_id = intern_find(&pt->frame_modules, a, b);
	if (m->frame_module_id) {
		*ret_first = false;
		return m->frame_module_id;
	}
	r = intern_insert(&pt->frame_modules, a, b, (uint32_t)id);
	if (r < 0)
		return r;
	m->frame_module_id = (uint32_t)id;
	*ret_first = true;
	return id;
}
