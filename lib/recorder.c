/* SPDX-License-Identifier: MIT */
/*
 * recorder.c - the recorder: perf events and their rings, the poll loop,
 * and the handling of each record in timestamp order (samples are unwound
 * and interned into the spool; side-band records update the process table).
 *
 * One event per online CPU for the target, with inheritance, each mapping
 * its own ring: a per-task event with inherit cannot be mmapped, and per-CPU
 * events follow every thread and child wherever they run.  Rings deliver
 * out of order across CPUs, so records pass through the sorter and leave it
 * only once the watermark (the start of the previous drain) passes them.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "capture.h"
#include "internal.h"
#include "perf_ring.h"
#include "proc_maps.h"
#include "process.h"
#include "sorter.h"
#include "unwind.h"

#define MAX_CPUS 4096
/*
 * The writer closes a block at least this often: a killed recorder loses at
 * most this much, and a reader following the spool sees samples this late.
 */
#define BLOCK_INTERVAL_NS 1000000000ull

struct prof_recorder {
	struct prof_recorder_opts opts;
	struct prof_spool_writer *w;
	char *path, *tmp_path;		/* final and temporary spool names */
	pid_t target;
	bool on_exec;
	int *cpus;			/* online CPUs */
	struct perf_ring *rings;	/* one per CPU, mapped by its first event */
	size_t ncpus;
	int *fds;			/* every event */
	size_t nfds, fds_cap;
	struct held_process *held;	/* attached processes, stopped until enable */
	size_t nheld;
	bool enabled;
	int epfd;
	struct sorter sorter;
	struct proc_table pt;
	struct capture capture;
	uint64_t prev_drain_ns;
	uint64_t last_block_ns;
	uint64_t last_reconcile_ns;
	bool need_reconcile;		/* side-band records may have been lost */
	uint64_t start_ns;
	bool ring_had_data;
	struct prof_recording_summary sum;
	struct unwind_result unwound;
	uint32_t frames[UNWIND_MAX_FRAMES / 2 + UNWIND_MAX_FRAMES + 1];
	bool kernel;			/* kernel callchains are sampled */
	int error;			/* the first processing error, sticky */
};

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int read_u64_file(const char *path, uint64_t *ret)
{
	unsigned long long v;
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return error_set(-errno, "cannot read '%s'", path);
	ok = fscanf(f, "%llu", &v) == 1;
	fclose(f);
	if (!ok)
		return error_setx(-EIO, "cannot parse '%s'", path);
	*ret = v;
	return 0;
}

int prof_max_sample_rate(uint64_t *ret)
{
	return read_u64_file("/proc/sys/kernel/perf_event_max_sample_rate", ret);
}

/* Online CPUs from /sys (e.g. "0-3,6"); at least CPU 0. */
static int online_cpus(int *cpus, int max)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int n = 0, a, b;
	char sep;

	if (f) {
		while (n < max && fscanf(f, "%d", &a) == 1) {
			b = a;
			if (fscanf(f, "%c", &sep) == 1 && sep == '-') {
				if (fscanf(f, "%d", &b) != 1)
					break;
				if (fscanf(f, "%c", &sep) != 1)
					sep = '\n';
			}
			for (; a <= b && n < max; a++)
				cpus[n++] = a;
			if (sep != ',')
				break;
		}
		fclose(f);
	}
	if (n == 0)
		cpus[n++] = 0;
	return n;
}

static const char *event_name(enum prof_event_kind e)
{
	switch (e) {
	case PROF_EVENT_CPU_CLOCK: return "cpu-clock";
	case PROF_EVENT_TASK_CLOCK: return "task-clock";
	default: return "cycles";
	}
}

static void fill_attr(struct perf_event_attr *a, enum prof_event_kind ev, uint64_t freq,
		      uint32_t stack, bool on_exec, bool no_inherit, bool kernel,
		      size_t ring_bytes)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	if (ev == PROF_EVENT_CYCLES || ev == PROF_EVENT_DEFAULT) {
		a->type = PERF_TYPE_HARDWARE;
		a->config = PERF_COUNT_HW_CPU_CYCLES;
	} else {
		a->type = PERF_TYPE_SOFTWARE;
		a->config = ev == PROF_EVENT_TASK_CLOCK ? PERF_COUNT_SW_TASK_CLOCK
							: PERF_COUNT_SW_CPU_CLOCK;
	}
	a->freq = 1;
	a->sample_freq = freq;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			 PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a->sample_regs_user = PERF_REGS_MASK;
	a->sample_stack_user = stack;
	a->disabled = 1;
	a->enable_on_exec = on_exec;
	a->inherit = 1;
	/* --no-inherit: new threads are followed, new processes are not */
	a->inherit_thread = no_inherit;
	a->exclude_hv = 1;
	if (kernel) {
		/* the kernel part of the stack as a callchain; the user part is unwound */
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		a->exclude_callchain_user = 1;
	} else {
		a->exclude_kernel = 1;
		a->exclude_callchain_kernel = 1;
	}
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(ring_bytes / 4);
}

static size_t ring_pages(const struct prof_recorder_opts *o, size_t page)
{
	size_t want, pages = 1;

	if (o->mmap_pages)
		return o->mmap_pages;
	/* room for ~64 samples at full stack size: 100 ms of a busy CPU at 640 Hz */
	want = ((size_t)o->stack_bytes + 512) * 64 / page;
	if (o->freq_hz > 2000)
		want *= 4;
	while (pages < want && pages < 16384)
		pages <<= 1;
	return pages < 16 ? 16 : pages;
}

static int perf_error(int err, const char *ev)
{
	uint64_t paranoid = 0;

	if (err == -EACCES || err == -EPERM) {
		read_u64_file("/proc/sys/kernel/perf_event_paranoid", &paranoid);
		return error_set(err, "cannot open the %s event (kernel.perf_event_paranoid is %llu: "
				 "run as root, or lower it with sysctl)", ev,
				 (unsigned long long)paranoid);
	}
	if (err == -ESRCH)
		return error_setx(err, "the target process is gone");
	return error_set(err, "cannot open the %s event", ev);
}

/* Remember an event fd (for enable, disable and close). */
static int keep_fd(struct prof_recorder *rec, int fd)
{
	void *p = rec->fds;
	int r = grow_array(&p, &rec->fds_cap, rec->nfds + 1, sizeof(*rec->fds));

	rec->fds = p;
	if (r < 0)
		return r;
	rec->fds[rec->nfds++] = fd;
	return 0;
}

/*
 * Open TID's event on every online CPU (with inherit, so its new threads
 * and children follow).  The first event on a CPU owns that CPU's ring;
 * later ones send their records into it (PERF_EVENT_IOC_SET_OUTPUT).
 * When ENABLE, the new events start at once (attaching during a recording).
 */
static int open_task_events(struct prof_recorder *rec, pid_t tid, bool on_exec, bool enable)
{
	struct prof_recorder_opts *o = &rec->opts;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = ring_pages(o, page), i;
	struct perf_event_attr attr;
	int fd, r;

	for (i = 0; i < rec->ncpus; i++) {
		struct perf_ring *ring = &rec->rings[i];

		fill_attr(&attr, o->event, o->freq_hz, o->stack_bytes, on_exec, o->no_inherit,
			  rec->kernel, pages * page);
		fd = perf_open(&attr, tid, rec->cpus[i], -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && rec->kernel && rec->nfds == 0 && (errno == EACCES || errno == EPERM)) {
			uint64_t paranoid = 0;

			read_u64_file("/proc/sys/kernel/perf_event_paranoid", &paranoid);
			pr_warn("kernel sampling refused (kernel.perf_event_paranoid is %llu): "
				"recording user space only", (unsigned long long)paranoid);
			rec->kernel = false;
			rec->sum.kernel_refused = true;
			i--;
			continue;
		}
		if (fd < 0 && o->event == PROF_EVENT_DEFAULT &&
		    (errno == ENOENT || errno == ENODEV || errno == EOPNOTSUPP || errno == ENXIO ||
		     errno == EINVAL)) {
			/* no PMU here (VMs, containers): the software clock samples alike */
			rec->sum.event_fell_back = true;
			o->event = PROF_EVENT_CPU_CLOCK;
			i--;
			continue;
		}
		if (fd < 0 && o->event == PROF_EVENT_CYCLES &&
		    (errno == ENOENT || errno == ENODEV || errno == EOPNOTSUPP))
			return error_setx(-ENOTSUP, "the cycles event is not supported here (no "
					  "hardware PMU): use -e cpu-clock");
		if (fd < 0 && errno == ESRCH)
			return error_setx(-ESRCH, "thread %d exited while prof was attaching",
					  (int)tid);
		if (fd < 0)
			return perf_error(-errno, event_name(o->event));
		r = keep_fd(rec, fd);
		if (r < 0) {
			close(fd);
			return r;
		}
		if (ring->base) {
			if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring->fd) < 0)
				return error_set(-errno, "cannot share a perf ring");
		} else {
			r = perf_ring_map(ring, fd, rec->cpus[i], pages);
			if (r == -EPERM || r == -ENOMEM)
				return error_set(r, "cannot map a %zu KiB perf ring (the locked-memory "
						 "limit, kernel.perf_event_mlock_kb, is too low; try "
						 "-m with fewer pages)", pages * page / 1024);
			if (r < 0)
				return error_set(r, "cannot map a perf ring");
			if (epoll_ctl(rec->epfd, EPOLL_CTL_ADD, fd,
				      &(struct epoll_event){ .events = EPOLLIN, .data.u64 = i }) < 0)
				return error_set(-errno, "cannot poll a perf ring");
		}
		if (enable && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
			return error_set(-errno, "cannot enable the perf events");
	}
	rec->sum.event = event_name(o->event);
	rec->sum.ring_bytes = pages * page;
	return 0;
}

static int init_rings(struct prof_recorder *rec)
{
	int cpus[MAX_CPUS], n = online_cpus(cpus, MAX_CPUS), i;

	rec->cpus = calloc((size_t)n, sizeof(*rec->cpus));
	rec->rings = calloc((size_t)n, sizeof(*rec->rings));
	if (!rec->cpus || !rec->rings)
		return error_setx(-ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		rec->cpus[i] = cpus[i];
		rec->rings[i].fd = -1;
	}
	rec->ncpus = (size_t)n;
	return 0;
}

static int make_meta_and_writer(struct prof_recorder *rec, const struct prof_writer *sink)
{
	struct prof_recorder_opts *o = &rec->opts;
	struct utsname u;
	char host[256] = "";
	struct prof_meta m = {
		.argc = o->argc, .argv = o->argv,
		.npids = 1, .pids = &(int32_t){ rec->target },
		.wall_start_ns = now_ns(CLOCK_REALTIME), .mono_start_ns = rec->start_ns,
		.event = rec->sum.event, .freq_hz = o->freq_hz, .stack_bytes = o->stack_bytes,
		.hostname = host, .page_size = (uint64_t)sysconf(_SC_PAGESIZE),
		.prof_version = PROF_VERSION,
		.flags = (o->no_inherit ? 0 : PROF_META_INHERIT) |
			 (rec->on_exec ? 0 : PROF_META_ATTACHED) | (rec->kernel ? PROF_META_KERNEL : 0),
	};
	int32_t pids[64];
	size_t i;

	if (o->npids) {
		for (i = 0; i < o->npids && i < 64; i++)
			pids[i] = o->pids[i];
		m.pids = pids;
		m.npids = i;
	}

	if (uname(&u) == 0) {
		m.kernel_release = u.release;
		m.arch = u.machine;
	}
	gethostname(host, sizeof(host) - 1);
	if (o->argc && rec->on_exec)
		m.npids = 0;	/* a launched command is named by its command line */
	if (sink)
		return prof_spool_writer_new(sink, &m, NULL, &rec->w);
	return prof_spool_writer_open(rec->tmp_path, &m, NULL, &rec->w);
}

static int check_opts(struct prof_recorder_opts *o)
{
	uint64_t max = 0;

	if (o->stack_bytes == 0)
		o->stack_bytes = PROF_DEFAULT_STACK;
	o->stack_bytes = (o->stack_bytes + 7) & ~7u;
	if (o->stack_bytes > PROF_MAX_STACK)
		return error_setx(-EINVAL, "stack size %u is above the kernel's maximum of %u bytes",
				  o->stack_bytes, PROF_MAX_STACK);
	if (prof_max_sample_rate(&max) < 0)
		max = 100000;
	if (o->freq_max)
		o->freq_hz = max;
	if (o->freq_hz == 0)
		o->freq_hz = PROF_DEFAULT_FREQ;
	if (o->freq_hz > max)
		return error_setx(-EINVAL, "sampling frequency %llu Hz is above the kernel's maximum "
				  "of %llu Hz (kernel.perf_event_max_sample_rate)",
				  (unsigned long long)o->freq_hz, (unsigned long long)max);
	if (o->mmap_pages & (o->mmap_pages - 1))
		return error_setx(-EINVAL, "mmap pages must be a power of two, not %u",
				  o->mmap_pages);
	return 0;
}

static int attach_descendants(struct prof_recorder *rec, pid_t pid);

static int keep_held(struct prof_recorder *rec, struct held_process *h)
{
	struct held_process *p = realloc(rec->held, (rec->nheld + 1) * sizeof(*p));

	if (!p) {
		release_process(h);
		return error_setx(-ENOMEM, "out of memory");
	}
	rec->held = p;
	rec->held[rec->nheld++] = *h;
	memset(h, 0, sizeof(*h));
	return 0;
}

static int open_held_events(struct prof_recorder *rec, const struct held_process *h, bool enable)
{
	size_t i;
	int r;

	for (i = 0; i < h->n; i++) {
		r = open_task_events(rec, h->threads[i].tid, false, enable);
		if (r < 0)
			return r;
	}
	return 0;
}

/* While H is still: its process, threads (with names) and mappings. */
static int snapshot_held(struct prof_recorder *rec, const struct held_process *h)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	struct proc *p;
	struct thr *t;
	size_t i;
	int r;

	r = pt_process(&rec->pt, h->pid, now, true, &p);
	for (i = 0; i < h->n && r >= 0; i++)
		r = pt_thread(&rec->pt, h->pid, h->threads[i].tid, now, &t);
	return r;
}

int prof_recorder_attach_process(struct prof_recorder *rec, pid_t pid,
				 enum prof_attach_mode mode, enum prof_attach_outcome *ret)
{
	struct held_process h;
	struct proc *p = pt_find_process(&rec->pt, pid);
	int r;

	if (mode != PROF_ATTACH_STOP_WHILE_ATTACHING)
		return error_setx(-EINVAL, "a process joins a recording by stopping it while "
				  "attaching");
	if (p && !p->exited && kill(pid, 0) == 0) {
		*ret = PROF_ALREADY_ATTACHED;
		return 0;
	}
	r = hold_process(pid, &h);
	if (r == -ESRCH) {
		prof_errmsg_clear();
		*ret = PROF_EXITED;
		return 0;
	}
	if (r < 0)
		return r;
	r = keep_held(rec, &h);
	if (r >= 0)
		r = open_held_events(rec, &rec->held[rec->nheld - 1], rec->enabled);
	if (r >= 0)
		r = snapshot_held(rec, &rec->held[rec->nheld - 1]);
	if (rec->enabled) {
		release_process(&rec->held[rec->nheld - 1]);
		rec->nheld--;
	}
	if (r >= 0 && rec->opts.children)
		r = attach_descendants(rec, pid);
	if (r < 0)
		return r;
	*ret = PROF_ATTACHED;
	return 0;
}

/* The children PID has now, and theirs: each attached (those gone are skipped). */
static int attach_descendants(struct prof_recorder *rec, pid_t pid)
{
	enum prof_attach_outcome outcome;
	bool children = rec->opts.children;
	pid_t *kids;
	int n, i, r = 0;

	n = list_descendants(pid, &kids);
	if (n < 0)
		return n == -ESRCH ? 0 : error_set(n, "cannot list the children of pid %d", (int)pid);
	rec->opts.children = false;	/* the list holds them all already */
	for (i = 0; i < n && r >= 0; i++)
		r = prof_recorder_attach_process(rec, kids[i], PROF_ATTACH_STOP_WHILE_ATTACHING,
						 &outcome);
	rec->opts.children = children;
	free(kids);
	return r;
}

int prof_recorder_refresh_threads(struct prof_recorder *rec, pid_t pid,
				  enum prof_refresh_outcome *ret)
{
	struct proc *p = pt_find_process(&rec->pt, pid);
	pid_t *tids;
	int n, i, r = 0;

	if (!p)
		return error_setx(-EINVAL, "pid %d is not part of this recording", (int)pid);
	n = list_tasks(pid, &tids);
	if (n == -ESRCH || p->exited) {
		if (n >= 0)
			free(tids);
		*ret = PROF_REFRESH_EXITED;
		return 0;
	}
	if (n < 0)
		return error_set(n, "cannot list the threads of pid %d", (int)pid);
	/* a thread the recording never heard of has no event, inherited or own */
	for (i = 0; i < n && r >= 0; i++) {
		struct thr *t;

		if (pt_find_thread(&rec->pt, tids[i]))
			continue;
		r = open_task_events(rec, tids[i], false, rec->enabled);
		if (r == -ESRCH) {
			prof_errmsg_clear();
			r = 0;
			continue;
		}
		if (r >= 0)
			r = pt_thread(&rec->pt, pid, tids[i], now_ns(CLOCK_MONOTONIC), &t);
	}
	free(tids);
	if (r < 0)
		return r;
	*ret = PROF_REFRESHED;
	return 0;
}

static int recorder_new(pid_t pid, const char *path, const struct prof_writer *sink,
			enum prof_attach_mode mode, const struct prof_recorder_opts *opts,
			struct prof_recorder **ret)
{
	struct prof_recorder *rec;
	int r;

	struct held_process held = { 0 };

	if (pid <= 0)
		return error_setx(-EINVAL, "invalid pid %d", (int)pid);
	if (mode != PROF_ATTACH_ON_EXEC && mode != PROF_ATTACH_STOP_WHILE_ATTACHING)
		return error_setx(-EINVAL, "unknown attach mode %d", (int)mode);
	if (opts && opts->sz < sizeof(size_t))
		return error_setx(-EINVAL, "recorder: opts.sz not set");
	rec = calloc(1, sizeof(*rec));
	if (!rec)
		return error_setx(-ENOMEM, "out of memory");
	if (opts)
		memcpy(&rec->opts, opts, opts->sz < sizeof(*opts) ? opts->sz : sizeof(*opts));
	rec->opts.sz = sizeof(rec->opts);
	rec->target = pid;
	rec->on_exec = mode == PROF_ATTACH_ON_EXEC;
	rec->kernel = rec->opts.include_kernel;
	rec->epfd = -1;
	sorter_init(&rec->sorter);
	pt_init(&rec->pt, NULL);
	capture_init(&rec->capture);
	r = check_opts(&rec->opts);
	if (r < 0)
		goto out_free;
	rec->sum.freq_hz = rec->opts.freq_hz;
	rec->sum.stack_bytes = rec->opts.stack_bytes;
	if (path) {
		const char *slash = strrchr(path, '/');
		int dir_len = slash ? (int)(slash - path + 1) : 0;

		rec->path = xstrdup(path);
		if (rec->path && asprintf(&rec->tmp_path, "%.*s.%s.tmp.%d", dir_len, path,
					  slash ? slash + 1 : path, (int)getpid()) < 0)
			rec->tmp_path = NULL;
		if (!rec->path || !rec->tmp_path) {
			r = error_setx(-ENOMEM, "out of memory");
			goto out_free;
		}
	}
	rec->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (rec->epfd < 0) {
		r = error_set(-errno, "cannot create an epoll instance");
		goto out_free;
	}
	r = init_rings(rec);
	if (r < 0)
		goto out_free;
	if (rec->on_exec) {
		r = open_task_events(rec, pid, true, false);
	} else {
		/* the threads stay still from before the events open until enable() */
		r = hold_process(pid, &held);
		if (r >= 0)
			r = keep_held(rec, &held);
		if (r >= 0)
			r = open_held_events(rec, &rec->held[rec->nheld - 1], false);
	}
	if (r < 0)
		goto out_free;
	rec->start_ns = now_ns(CLOCK_MONOTONIC);
	rec->prev_drain_ns = 0;
	rec->last_block_ns = rec->start_ns;
	r = make_meta_and_writer(rec, sink);
	if (r < 0)
		goto out_free;
	pt_init(&rec->pt, rec->w);
	rec->pt.no_children = rec->opts.no_inherit;
	rec->pt.capture = &rec->capture;
	if (!rec->on_exec) {
		r = snapshot_held(rec, &rec->held[0]);
		if (r >= 0 && rec->opts.children)
			r = attach_descendants(rec, pid);
		if (r < 0)
			goto out_free;
	}
	*ret = rec;
	return 0;
out_free:
	release_process(&held);
	prof_recorder_free(rec);
	return r;
}

int prof_recorder_attach(pid_t pid, const char *spool_path, enum prof_attach_mode mode,
			 const struct prof_recorder_opts *opts, struct prof_recorder **ret)
{
	if (!spool_path)
		return error_setx(-EINVAL, "no spool path");
	return recorder_new(pid, spool_path, NULL, mode, opts, ret);
}

int prof_recorder_attach_writer(pid_t pid, const struct prof_writer *sink,
				enum prof_attach_mode mode, const struct prof_recorder_opts *opts,
				struct prof_recorder **ret)
{
	if (!sink)
		return error_setx(-EINVAL, "no spool writer");
	return recorder_new(pid, NULL, sink, mode, opts, ret);
}

int prof_recorder_enable(struct prof_recorder *rec)
{
	size_t i;
	int r = 0;

	if (!rec->on_exec)	/* launched: the kernel enables them at the exec, not before */
		for (i = 0; i < rec->nfds && r == 0; i++)
			if (ioctl(rec->fds[i], PERF_EVENT_IOC_ENABLE, 0) < 0)
				r = error_set(-errno, "cannot enable the perf events");
	rec->enabled = true;
	/* the attach window ends here, even when enabling failed */
	for (i = 0; i < rec->nheld; i++)
		release_process(&rec->held[i]);
	rec->nheld = 0;
	return r;
}

/* ---- record handling ---------------------------------------------------- */

/* The sample_id trailer of a side-band record: pid, tid, time, cpu, res. */
static uint64_t record_time(const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)h;
	uint64_t t;

	if (h->type == PERF_RECORD_SAMPLE) {
		if (h->size < 32)
			return 0;
		memcpy(&t, p + 24, sizeof(t));	/* header, ip, pid/tid, then time */
		return t;
	}
	if (h->size < sizeof(*h) + 24)
		return 0;
	memcpy(&t, p + h->size - 16, sizeof(t));
	return t;
}

static int handle_sample(struct prof_recorder *rec, const uint8_t *p, size_t size)
{
	const uint8_t *end = p + size;
	struct {
		uint64_t ip;
		uint32_t pid, tid;
		uint64_t time;
		uint32_t cpu, res;
		uint64_t period;
	} s;
	uint64_t regs[PERF_REGS_COUNT], stack_size = 0, dyn_size = 0, abi = 0, nchain = 0;
	const uint8_t *stack = NULL, *chain = NULL;
	struct unwind_result *u = &rec->unwound;
	struct thr *t;
	struct proc *proc;
	size_t i, n = 0;
	int64_t id;
	int r;

	p += sizeof(struct perf_event_header);
	if (end - p < 40)
		return 0;
	memcpy(&s, p, 40);
	p += 40;
	if (rec->kernel) {
		/* kernel callchain: nr, then nr entries with context markers */
		if (end - p < 8)
			return 0;
		memcpy(&nchain, p, 8);
		p += 8;
		if (nchain > (uint64_t)(end - p) / 8)
			return 0;
		chain = p;
		p += nchain * 8;
	}
	if (end - p < 8)
		return 0;
	memcpy(&abi, p, 8);
	p += 8;
	rec->sum.sample_events++;
	if (s.pid == 0 || s.tid == 0 || (int32_t)s.pid < 0)
		return 0;	/* the idle task or a sample without a task */
	if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
		if ((size_t)(end - p) < sizeof(regs))
			return 0;
		memcpy(regs, p, sizeof(regs));
		p += sizeof(regs);
	}
	if (end - p >= 8) {
		memcpy(&stack_size, p, 8);
		p += 8;
		if (stack_size && (uint64_t)(end - p) >= stack_size + 8) {
			stack = p;
			memcpy(&dyn_size, p + stack_size, 8);
			if (dyn_size > stack_size)
				dyn_size = stack_size;
		}
	}
	r = pt_thread(&rec->pt, (pid_t)s.pid, (pid_t)s.tid, s.time, &t);
	if (r < 0)
		return r;
	proc = t->proc;
	/* kernel frames first (the leaf side), as the callchain gives them */
	for (i = 0; chain && i < nchain && n < UNWIND_MAX_FRAMES / 2; i++) {
		uint64_t ip;
		bool first;

		memcpy(&ip, chain + i * 8, 8);
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			if (ip != (uint64_t)PERF_CONTEXT_KERNEL)
				break;	/* user, guest or hypervisor parts: not ours */
			continue;
		}
		/* the first kernel entry is where it was; the others return addresses */
		first = i == 1;
		id = prof_spool_intern_frame(rec->w, &(struct prof_frame){
			.kind = PROF_FRAME_KERNEL, .addr = first ? ip : ip - 1 });
		if (id < 0)
			return (int)id;
		rec->frames[n++] = (uint32_t)id;
	}
	if (abi != PERF_SAMPLE_REGS_ABI_64) {
		u->n = 1;
		u->pc[0] = s.ip;
		u->cause = PROF_UNWIND_NO_REGS;
	} else {
		/* a pc in no known module: the maps may have moved on without us */
		if (!as_find(&proc->as, regs[8]) && s.time - proc->maps_refreshed_ns > 50000000u) {
			proc->maps_refreshed_ns = s.time;
			r = pt_refresh_maps(&rec->pt, proc, s.time);
			if (r < 0)
				return r;
		}
		unwind_sample(&proc->as, (pid_t)s.tid, regs, stack, dyn_size, u);
	}
	for (i = 0; i < u->n; i++) {
		struct as_module *m = as_find(&proc->as, u->pc[i]);
		struct prof_frame f = { .kind = PROF_FRAME_ANON, .ref = proc->spool_id,
					.addr = u->pc[i] };

		if (m) {
			id = pt_module_id(&rec->pt, proc, m);
			if (id < 0)
				return (int)id;
			f = (struct prof_frame){ .kind = PROF_FRAME_USER, .ref = (uint32_t)id,
						 .addr = u->pc[i] - m->start + m->pgoff };
		}
		id = prof_spool_intern_frame(rec->w, &f);
		if (id < 0)
			return (int)id;
		rec->frames[n++] = (uint32_t)id;
	}
	if (u->cause) {
		id = prof_spool_intern_frame(rec->w, &(struct prof_frame){
			.kind = PROF_FRAME_TRUNCATED, .addr = (uint64_t)u->cause });
		if (id < 0)
			return (int)id;
		rec->frames[n++] = (uint32_t)id;
		rec->sum.truncated_stacks++;
		rec->sum.unwind_errors[u->cause]++;
	}
	id = prof_spool_intern_frames(rec->w, rec->frames, n);
	if (id < 0)
		return (int)id;
	r = prof_spool_add_sample(rec->w, &(struct prof_sample){
		.time_ns = s.time, .thread = t->spool_id, .stack = (uint32_t)id,
		.period = s.period, .cpu = s.cpu });
	if (r < 0)
		return r;
	rec->sum.samples++;
	return 0;
}

static int handle_lost(struct prof_recorder *rec, uint8_t kind, uint64_t count, uint64_t time)
{
	rec->sum.lost_events += count;
	/* any record may be among them: an mmap, a fork, an exit, a rename */
	rec->need_reconcile |= kind == PROF_LOST_RECORDS;
	rec->sum.lifecycle_gaps += kind == PROF_LOST_RECORDS;
	return prof_spool_add_lost(rec->w, &(struct prof_lost){ .time_ns = time, .kind = kind,
								.count = count });
}

static int handle_record(struct prof_recorder *rec, const struct sorted_rec *sr)
{
	const struct perf_event_header *h = (const void *)sr->data;
	const uint8_t *p = sr->data + sizeof(*h);
	size_t body = h->size - sizeof(*h);
	uint32_t u32[4];
	uint64_t u64[4];

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		return handle_sample(rec, sr->data, h->size);
	case PERF_RECORD_MMAP2: {
		/* pid tid addr len pgoff maj min ino ino_gen prot flags filename */
		uint32_t maj, min, prot;
		uint64_t ino;
		char path[PATH_MAX];

		if (body < 64 + 1 || (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID))
			return 0;
		memcpy(u32, p, 8);
		memcpy(u64, p + 8, 24);
		memcpy(&maj, p + 32, 4);
		memcpy(&min, p + 36, 4);
		memcpy(&ino, p + 40, 8);
		memcpy(&prot, p + 56, 4);
		snprintf(path, sizeof(path), "%.*s", (int)(body - 64), (const char *)p + 64);
		(void)prot;
		return pt_mmap(&rec->pt, (pid_t)u32[0], u64[0], u64[1], u64[2], maj, min, ino,
			       path, sr->time);
	}
	case PERF_RECORD_COMM: {
		char comm[17];

		if (body < 9)
			return 0;
		memcpy(u32, p, 8);
		snprintf(comm, sizeof(comm), "%.*s", (int)(body - 8), (const char *)p + 8);
		return pt_comm(&rec->pt, (pid_t)u32[0], (pid_t)u32[1], comm,
			       h->misc & PERF_RECORD_MISC_COMM_EXEC, sr->time);
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		/* pid ppid tid ptid time */
		if (body < 16)
			return 0;
		memcpy(u32, p, 16);
		if (h->type == PERF_RECORD_FORK)
			return pt_fork(&rec->pt, (pid_t)u32[0], (pid_t)u32[1], (pid_t)u32[2],
				       sr->time);
		return pt_exit(&rec->pt, (pid_t)u32[0], (pid_t)u32[2], sr->time);
	case PERF_RECORD_LOST:
		if (body < 16)
			return 0;
		memcpy(u64, p, 16);
		return handle_lost(rec, PROF_LOST_RECORDS, u64[1], sr->time);
	case PERF_RECORD_LOST_SAMPLES:
		if (body < 8)
			return 0;
		memcpy(u64, p, 8);
		return handle_lost(rec, PROF_LOST_SAMPLES, u64[0], sr->time);
	default:
		return 0;
	}
}

/* Move every ring's records into the sorter. */
static int drain_rings(struct prof_recorder *rec)
{
	size_t i;
	int r = 0;

	for (i = 0; i < rec->ncpus; i++) {
		struct perf_ring *ring = &rec->rings[i];
		const struct perf_event_header *h;

		if (!ring->base || !perf_ring_begin(ring))
			continue;
		rec->ring_had_data = true;
		while (r >= 0 && (h = perf_ring_next(ring)))
			r = sorter_push(&rec->sorter, record_time(h), ring->cpu, h, h->size);
		perf_ring_end(ring);
		if (r < 0)
			return r;
	}
	return 0;
}

static int process_until(struct prof_recorder *rec, uint64_t watermark)
{
	const struct sorted_rec *sr;
	int r;

	while ((sr = sorter_pop(&rec->sorter, watermark))) {
		r = handle_record(rec, sr);
		if (r < 0) {
			if (!rec->error)
				rec->error = r;
			return r;
		}
	}
	return 0;
}

static bool proc_gone(pid_t pid);

/*
 * After a loss, what the lost side-band records would have said is read
 * from /proc instead: new mappings, exits, threads and their names.  New
 * threads and children need no events: inheritance already samples them.
 */
static int reconcile(struct prof_recorder *rec)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	size_t i;
	int r = 0;

	rec->need_reconcile = false;
	rec->last_reconcile_ns = now;
	rec->sum.reconciliations++;
	for (i = 0; i < rec->pt.nprocs && r >= 0; i++) {
		struct proc *p = rec->pt.procs[i];
		pid_t *tids;
		int n, k;

		if (p->exited)
			continue;
		if (proc_gone(p->pid)) {
			r = pt_process_exit(&rec->pt, p, now);
			continue;
		}
		r = pt_refresh_maps(&rec->pt, p, now);
		n = r < 0 ? 0 : list_tasks(p->pid, &tids);
		for (k = 0; k < n && r >= 0; k++) {
			struct thr *t;

			r = pt_thread(&rec->pt, p->pid, tids[k], now, &t);
		}
		if (n > 0)
			free(tids);
	}
	return r;
}

int prof_recorder_poll(struct prof_recorder *rec, int timeout_ms, struct prof_poll_summary *ret)
{
	struct epoll_event evs[64];
	uint64_t samples = rec->sum.samples, lost = rec->sum.lost_events, drain_start;
	int r;

	if (rec->error)
		return rec->error;
	if (!sorter_len(&rec->sorter) && timeout_ms != 0 &&
	    epoll_wait(rec->epfd, evs, 64, timeout_ms) < 0 && errno != EINTR)
		return error_set(-errno, "cannot wait for perf events");
	drain_start = now_ns(CLOCK_MONOTONIC);
	rec->ring_had_data = false;
	r = drain_rings(rec);
	if (r >= 0)
		r = process_until(rec, rec->prev_drain_ns);
	rec->prev_drain_ns = drain_start;
	if (r >= 0 && rec->need_reconcile && drain_start - rec->last_reconcile_ns >= 250000000u) {
		/* what is queued happened before "now": apply it, then look at /proc */
		r = process_until(rec, UINT64_MAX);
		if (r >= 0)
			r = reconcile(rec);
	}
	if (r >= 0 && drain_start - rec->last_block_ns >= BLOCK_INTERVAL_NS) {
		rec->last_block_ns = drain_start;
		r = prof_spool_writer_flush(rec->w);
	}
	if (ret) {
		ret->samples = rec->sum.samples - samples;
		ret->lost_events = rec->sum.lost_events - lost;
	}
	return r < 0 ? r : 0;
}

bool prof_recorder_has_pending_events(const struct prof_recorder *rec)
{
	return sorter_len(&rec->sorter) > 0 || rec->ring_had_data;
}

int prof_recorder_flush(struct prof_recorder *rec)
{
	int r = rec->error ? rec->error : drain_rings(rec);

	if (r >= 0)
		r = process_until(rec, UINT64_MAX);
	if (r >= 0 && rec->need_reconcile)
		r = reconcile(rec);
	if (r >= 0)
		r = prof_spool_writer_flush(rec->w);
	return r;
}

void prof_recorder_summary(const struct prof_recorder *rec, struct prof_recording_summary *ret)
{
	*ret = rec->sum;
	ret->kernel_enabled = rec->kernel;
	ret->processes = rec->pt.nprocs;
	ret->threads = rec->pt.nthrs;
	ret->spool_bytes = rec->w ? prof_spool_writer_bytes(rec->w) : 0;
	ret->duration_ns = now_ns(CLOCK_MONOTONIC) - rec->start_ns;
}

/* Exited per /proc: gone, a zombie, or dead. */
static bool proc_gone(pid_t pid)
{
	char path[64], buf[512], *paren;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	paren = strrchr(buf, ')');
	return !paren || paren[1] != ' ' || paren[2] == 'Z' || paren[2] == 'X';
}

/* Reconcile: a process whose exit record never came but is gone. */
static int reconcile_liveness(struct prof_recorder *rec)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	size_t i;
	int r;

	for (i = 0; i < rec->pt.nprocs; i++) {
		struct proc *p = rec->pt.procs[i];

		if (p->exited || !proc_gone(p->pid))
			continue;
		/* its exit record may still be queued: take it first */
		r = prof_recorder_flush(rec);
		if (r < 0)
			return r;
		if (!p->exited) {
			r = pt_process_exit(&rec->pt, p, now);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

int prof_recorder_process_is_active(struct prof_recorder *rec, pid_t pid, bool *ret)
{
	struct proc *p = pt_find_process(&rec->pt, pid);

	*ret = p && !p->exited && !proc_gone(pid);
	return 0;
}

int prof_recorder_has_active_processes_except(struct prof_recorder *rec, pid_t pid, bool *ret)
{
	size_t i;
	int r = reconcile_liveness(rec);

	if (r < 0)
		return r;
	*ret = false;
	for (i = 0; i < rec->pt.nprocs; i++)
		if (!rec->pt.procs[i]->exited && rec->pt.procs[i]->pid != pid)
			*ret = true;
	return 0;
}

int prof_recorder_active_process_count(struct prof_recorder *rec, size_t *ret)
{
	int r = reconcile_liveness(rec);

	if (r < 0)
		return r;
	*ret = rec->pt.live_processes;
	return 0;
}

static void close_rings(struct prof_recorder *rec)
{
	size_t i;

	for (i = 0; i < rec->nfds; i++)
		ioctl(rec->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	for (i = 0; rec->rings && i < rec->ncpus; i++)
		perf_ring_unmap(&rec->rings[i]);
	for (i = 0; i < rec->nfds; i++)
		close(rec->fds[i]);
	free(rec->fds);
	free(rec->rings);
	free(rec->cpus);
	rec->fds = NULL;
	rec->rings = NULL;
	rec->cpus = NULL;
	rec->nfds = rec->ncpus = 0;
}

/*
 * Keep the first error as the message; a later one is appended as context
 * ("...; then: ..."), so the user sees what failed first and what followed.
 */
static void keep_error(int *first, char *msg, size_t len, int r)
{
	size_t n;

	if (r >= 0)
		return;
	if (*first == 0) {
		*first = r;
		snprintf(msg, len, "%s", prof_errmsg());
		return;
	}
	n = strlen(msg);
	if (n + 8 < len)
		snprintf(msg + n, len - n, "; then: %s", prof_errmsg());
}

int prof_recorder_finish(struct prof_recorder *rec, struct prof_recording_summary *ret)
{
	struct prof_counters c = { 0 };
	struct prof_recording_summary s;
	char msg[1024] = "";
	size_t i;
	int r = 0;

	for (i = 0; i < rec->nfds; i++)
		if (ioctl(rec->fds[i], PERF_EVENT_IOC_DISABLE, 0) < 0)
			keep_error(&r, msg, sizeof(msg),
				   error_set(-errno, "cannot disable the perf events"));
	keep_error(&r, msg, sizeof(msg), prof_recorder_flush(rec));
	prof_recorder_summary(rec, &s);
	c.samples = s.samples;
	c.sample_events = s.sample_events;
	c.lost[PROF_LOST_RECORDS] = s.lost_events;
	c.truncated_stacks = s.truncated_stacks;
	c.empty_stacks = s.empty_stacks;
	memcpy(c.unwind_errors, s.unwind_errors, sizeof(c.unwind_errors));
	c.processes = s.processes;
	c.threads = s.threads;
	c.lifecycle_gaps = s.lifecycle_gaps;
	c.reconciliations = s.reconciliations;
	c.mono_end_ns = now_ns(CLOCK_MONOTONIC);
	c.wall_end_ns = now_ns(CLOCK_REALTIME);
	/* the names the spool carries, so it reports later and elsewhere */
	keep_error(&r, msg, sizeof(msg), capture_names(&rec->capture, rec->w, &rec->pt));
	/* a trailer is written even after an error: the spool says what it holds */
	keep_error(&r, msg, sizeof(msg), prof_spool_writer_finish(rec->w, &c));
	s.spool_bytes = prof_spool_writer_bytes(rec->w);
	keep_error(&r, msg, sizeof(msg), prof_spool_writer_close(rec->w));
	rec->w = NULL;
	if (rec->tmp_path) {
		/* on failure the recording stays where it is, and the message says where */
		if (rename(rec->tmp_path, rec->path) < 0)
			keep_error(&r, msg, sizeof(msg),
				   error_set(-errno, "cannot rename '%s' to '%s' (the recording is "
					     "kept there)", rec->tmp_path, rec->path));
		free(rec->tmp_path);
		rec->tmp_path = NULL;
	}
	if (ret)
		*ret = s;
	prof_recorder_free(rec);
	if (r < 0)
		error_setx(r, "%s", msg);
	return r;
}

void prof_recorder_free(struct prof_recorder *rec)
{
	size_t i;

	if (!rec)
		return;
	for (i = 0; i < rec->nheld; i++)
		release_process(&rec->held[i]);
	free(rec->held);
	close_rings(rec);
	if (rec->epfd >= 0)
		close(rec->epfd);
	sorter_release(&rec->sorter);
	pt_release(&rec->pt);
	capture_release(&rec->capture);
	prof_spool_writer_close(rec->w);
	if (rec->tmp_path)
		unlink(rec->tmp_path);
	free(rec->tmp_path);
	free(rec->path);
	free(rec);
}
