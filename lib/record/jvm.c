/* SPDX-License-Identifier: MIT */
/*
 * jvm.c - names for a JVM's compiled methods with no JVM flag.  HotSpot
 * (JDK 16+) writes /tmp/perf-PID.map when asked over its attach protocol,
 * which is what `jcmd PID Compiler.perfmap` does; jcmd ships only with the
 * JDK, so prof speaks the protocol itself (OpenJDK's
 * attachListener_linux.cpp): a file .attach_pidN in the JVM's working
 * directory or /tmp, then SIGQUIT, makes the JVM listen on the UNIX socket
 * /tmp/.java_pidN (N its pid in its own namespace, /tmp its own); a
 * request is "1\0jcmd\0COMMAND\0\0\0", the answer a status line, the
 * command's output, then EOF.
 *
 * The map is a snapshot: a JVM is asked again, less often as it ages, and
 * once more before a file's names are captured.  A launched JVM exits
 * before the recording ends, so the snapshots are what names it, and code
 * compiled after the last one would stay unnamed (C2 takes a method over
 * a second or more into a run): so prof reads the ranges each map covers,
 * and a sample with a frame in none of them (code newer than the map) asks
 * again, STALE_GAP_NS after the last answer at the soonest, and less often
 * each time a new map does not cover the frame that asked (a stray
 * caller, or code already freed).  Nothing here waits but
 * jvm_set_refresh(): the recorder's loop must not stall on a JVM, whatever
 * it does.
 *
 * SIGQUIT makes a JVM without an attach trigger print a thread dump, and
 * kills a process that does not handle it: it is sent only to a process
 * that maps libjvm.so, catches SIGQUIT (its SigCgt), and did not say
 * -XX:+DisableAttachMechanism, and only once the trigger file exists.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "jvm.h"
#include "perf_map.h"
#include "proc.h"
#include "process.h"
#include "prof.h"
#include "unwind/unwind.h"

#define TRIGGER_WAIT_NS (5 * 1000000000ull)	/* jattach waits as long */
#define ANSWER_WAIT_NS (10 * 1000000000ull)
#define FIRST_INTERVAL_NS 1000000000ull
#define MAX_INTERVAL_NS (10 * 1000000000ull)
#define STALE_GAP_NS 250000000ull
#define CHECKED_SLOTS 256	/* a power of two */
#define ANSWER_MAX 65536

enum jvm_step {
	JVM_NEW,	/* not asked yet */
	JVM_TRIGGERED,	/* SIGQUIT sent: waiting for its socket */
	JVM_ASKING,	/* request sent: reading the answer */
	JVM_IDLE,	/* answered: asked again at next_ns */
	JVM_FAILED,	/* will not answer: said once, not asked again */
	JVM_GONE,	/* exited: kept for the map it may have left */
};

struct jvm {
	pid_t pid, nspid;
	uint64_t start_time_ns;
	enum jvm_step step;
	int fd;
	bool asking_flags;	/* the request in flight is VM.flags */
	bool flags_known;	/* VM.flags answered */
	bool map_made;		/* its perf map exists only because prof asked */
	bool seen;		/* jvm_set_poll()'s scratch */
	uint64_t deadline_ns, next_ns, interval_ns;
	char trigger[96];	/* the trigger file prof made, "" none */
	char *out;		/* the answer so far, at most ANSWER_MAX bytes */
	size_t nout;
	struct jit_sym *code;	/* what its last map covered, sorted (no names) */
	size_t ncode;
	uint64_t map_ns;	/* when that map was answered, 0 none yet */
	uint64_t stale_gap_ns;	/* how soon after it a frame it does not cover asks again */
	uint64_t stale_pc;	/* the frame that asked for the map in flight, 0 none */
	/*
	 * Frames found in the last map or in a file, by pc: a JVM's stacks
	 * repeat their return addresses, and every sample is checked.
	 */
	uint64_t checked[CHECKED_SLOTS];
};

void jvm_set_init(struct jvm_set *s)
{
	memset(s, 0, sizeof(*s));
}

static void map_path(const struct jvm *j, bool alive, char *buf, size_t len)
{
	if (alive)
		snprintf(buf, len, "/proc/%d/root/tmp/perf-%d.map", (int)j->pid, (int)j->nspid);
	else
		snprintf(buf, len, "/tmp/perf-%d.map", (int)j->pid);
}

static void hang_up(struct jvm *j)
{
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
	free(j->out);
	j->out = NULL;
	j->nout = 0;
	if (j->trigger[0])
		unlink(j->trigger);
	j->trigger[0] = '\0';
}

void jvm_set_release(struct jvm_set *s)
{
	char path[96];
	size_t i;

	for (i = 0; i < s->n; i++) {
		struct jvm *j = &s->v[i];

		hang_up(j);
		free(j->code);
		/*
		 * Through its root while it runs; a dead JVM's map is found by
		 * its host pid only outside a pid namespace.  One that was
		 * exiting when last asked (JVM_FAILED) may be gone by now, its
		 * root with it.
		 */
		if (!j->map_made)
			continue;
		if (j->step != JVM_GONE) {
			map_path(j, true, path, sizeof(path));
			if (unlink(path) == 0)
				continue;
		}
		if (j->nspid == j->pid) {
			map_path(j, false, path, sizeof(path));
			unlink(path);
		}
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* Once per JVM: why its compiled methods will have no names. */
static void fail(struct jvm *j, const char *fmt, ...) PROF_PRINTF(2, 3);

static void fail(struct jvm *j, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	hang_up(j);
	j->step = JVM_FAILED;
	pr_warn("java %d: cannot ask it for its perf map (%s): its compiled methods stay "
		"unnamed; -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit writes one at "
		"its exit", (int)j->pid, why);
}

/* Bounded read of a small /proc file into BUF; its length, or -1. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, got = 0;

	if (fd < 0)
		return -1;
	while ((size_t)got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	return got;
}

/*
 * From /proc/PID/status: whether it catches SIGQUIT, and its pid in its
 * own namespace (NSpid's last field).  false if it cannot be read.
 */
static bool read_status(pid_t pid, bool *quit_caught, pid_t *nspid)
{
	char path[64], buf[4096], *p;
	unsigned long long cgt;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_small(path, buf, sizeof(buf)) < 0)
		return false;
	p = strstr(buf, "\nSigCgt:");
	if (!p || sscanf(p + 8, "%llx", &cgt) != 1)
		return false;
	*quit_caught = cgt & (1ull << (SIGQUIT - 1));
	*nspid = proc_nspid(pid);
	return true;
}

/* Whether a NUL-separated /proc file of PID holds WHAT (its command line, its environment). */
static bool proc_says(pid_t pid, const char *file, const char *what)
{
	char path[64];
	char *buf = malloc(ANSWER_MAX);
	ssize_t n, i;
	bool found = false;

	if (!buf)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	n = read_small(path, buf, ANSWER_MAX);
	for (i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	found = n > 0 && strstr(buf, what);
	free(buf);
	return found;
}

static void socket_path(const struct jvm *j, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path, sizeof(sa->sun_path), "/proc/%d/root/tmp/.java_pid%d",
		 (int)j->pid, (int)j->nspid);
}

static bool has_socket(const struct jvm *j)
{
	struct sockaddr_un sa;
	struct stat st;

	socket_path(j, &sa);
	return stat(sa.sun_path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* Send the next request: the JVM's flags once, then its perf map. */
static void ask(struct jvm *j, uint64_t now)
{
	static const char flags[] = "1\0jcmd\0VM.flags\0\0";
	static const char perfmap[] = "1\0jcmd\0Compiler.perfmap\0\0";
	const char *req = j->flags_known ? perfmap : flags;
	size_t len = j->flags_known ? sizeof(perfmap) : sizeof(flags);
	struct sockaddr_un sa;
	char path[96];
	struct stat st;
	ssize_t n;

	socket_path(j, &sa);
	j->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (j->fd < 0) {
		j->step = JVM_IDLE;	/* out of descriptors: later */
		j->next_ns = now + FIRST_INTERVAL_NS;
		return;
	}
	if (connect(j->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		if (e == EAGAIN) {	/* its backlog is full: a moment later */
			hang_up(j);
			j->step = JVM_IDLE;
			j->next_ns = now + JVM_POLL_NS;
			return;
		}
		/*
		 * A JVM that has answered takes its socket away as it exits: a
		 * launched one ends before the recording does, and the last ask
		 * (before the capture) can come as it goes.  What it answered
		 * already names its methods; nothing to warn of.
		 */
		if (j->flags_known && (e == ENOENT || e == ECONNREFUSED)) {
			hang_up(j);
			j->step = JVM_FAILED;
			pr_debug("java %d: its attach socket is gone (%s): it is exiting",
				 (int)j->pid, strerror(e));
			return;
		}
		fail(j, "cannot connect to %s: %s", sa.sun_path, strerror(e));
		return;
	}
	if (j->flags_known) {
		/* whether the map prof is about to ask for was there before it asked */
		map_path(j, true, path, sizeof(path));
		if (!j->map_made && lstat(path, &st) < 0 && errno == ENOENT)
			j->map_made = true;
	}
	/* sizeof() counted the literal's own NUL: the last of the three empty arguments */
	n = send(j->fd, req, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n != (ssize_t)len) {
		fail(j, "cannot send it a request: %s", n < 0 ? strerror(errno) : "short write");
		return;
	}
	j->asking_flags = !j->flags_known;
	j->step = JVM_ASKING;
	j->deadline_ns = now + ANSWER_WAIT_NS;
}

/* Whether J's last map covers PC. */
static bool covers(const struct jvm *j, uint64_t pc)
{
	return jit_sym_find(j->code, j->ncode, pc) != NULL;
}

/*
 * The map J has just written: the code it covers, for jvm_set_sampled();
 * and whether it covers the frame that asked for it.
 */
static void read_code(struct jvm *j, uint64_t now)
{
	struct jit_sym *v;
	size_t n;

	if (perf_map_read(j->pid, false, &v, &n) < 0) {
		prof_errmsg_clear();	/* out of memory: the last one stays */
	} else {
		free(j->code);
		j->code = v;
		j->ncode = n;
		memset(j->checked, 0, sizeof(j->checked));
	}
	j->map_ns = now;
	/* the frame that asked: a new map that does not cover it waits longer for the next */
	if (j->stale_pc) {
		j->stale_gap_ns = covers(j, j->stale_pc) ? STALE_GAP_NS : j->stale_gap_ns * 2;
		if (j->stale_gap_ns > MAX_INTERVAL_NS)
			j->stale_gap_ns = MAX_INTERVAL_NS;
		j->stale_pc = 0;
	}
}

/* The answer is whole: "0\n" and the output when the command ran. */
static void answered(struct jvm_set *s, struct jvm *j, uint64_t now)
{
	const char *out = j->out ? j->out : "";
	size_t line = strcspn(out, "\n");
	char status[80];

	snprintf(status, sizeof(status), "%.*s", (int)(line < 79 ? line : 79), out);
	if (strcmp(status, "0")) {
		fail(j, "it answered '%s'", status);
		return;
	}
	if (j->asking_flags) {
		j->flags_known = true;
		/* the flag decides whether JIT frames have callers at all */
		if (!strstr(out, "-XX:+PreserveFramePointer"))
			pr_warn("java %d runs without -XX:+PreserveFramePointer: its stacks stop "
				"in the first JIT-compiled method, callers lost (the flag costs "
				"the JVM about 0-3%%)", (int)j->pid);
		j->next_ns = now;
	} else {
		s->maps++;
		read_code(j, now);
		j->interval_ns = j->interval_ns ? j->interval_ns * 2 : FIRST_INTERVAL_NS;
		if (j->interval_ns > MAX_INTERVAL_NS)
			j->interval_ns = MAX_INTERVAL_NS;
		j->next_ns = now + j->interval_ns;
		/* (a JVM of JDK 15 or older answers "Unknown diagnostic command": fail() said so) */
	}
	hang_up(j);
	j->step = JVM_IDLE;
}

static void read_answer(struct jvm_set *s, struct jvm *j, uint64_t now)
{
	char buf[4096];
	ssize_t n;

	for (;;) {
		n = recv(j->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0) {
			size_t keep = (size_t)n;

			if (!j->out) {
				j->out = malloc(ANSWER_MAX + 1);
				if (!j->out) {
					fail(j, "out of memory");
					return;
				}
			}
			if (keep > ANSWER_MAX - j->nout)
				keep = ANSWER_MAX - j->nout;
			memcpy(j->out + j->nout, buf, keep);
			j->nout += keep;
			j->out[j->nout] = '\0';
			continue;
		}
		if (n == 0) {
			answered(s, j, now);
			return;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN) {
			fail(j, "cannot read its answer: %s", strerror(errno));
			return;
		}
		if (now >= j->deadline_ns)
			fail(j, "no answer in %llu s", ANSWER_WAIT_NS / 1000000000ull);
		return;
	}
}

/* First contact: its socket if it listens already, else the trigger and SIGQUIT. */
static void start(struct jvm *j, uint64_t now)
{
	bool quit_caught;
	int fd;

	if (!read_status(j->pid, &quit_caught, &j->nspid))
		return;		/* gone, or not ours: the next poll sees which */
	if (has_socket(j)) {
		ask(j, now);
		return;
	}
	if (!quit_caught) {
		/* -Xrs, or a JVM still starting: SIGQUIT would kill it */
		j->next_ns = now + FIRST_INTERVAL_NS;
		return;
	}
	if (proc_says(j->pid, "cmdline", "-XX:+DisableAttachMechanism") ||
	    proc_says(j->pid, "environ", "-XX:+DisableAttachMechanism")) {
		fail(j, "it runs with -XX:+DisableAttachMechanism");
		return;
	}
	snprintf(j->trigger, sizeof(j->trigger), "/proc/%d/cwd/.attach_pid%d", (int)j->pid,
		 (int)j->nspid);
	fd = open(j->trigger, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		/* its working directory is not writable: HotSpot looks in its /tmp next */
		snprintf(j->trigger, sizeof(j->trigger), "/proc/%d/root/tmp/.attach_pid%d",
			 (int)j->pid, (int)j->nspid);
		fd = open(j->trigger, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	}
	if (fd < 0) {
		int e = errno;

		j->trigger[0] = '\0';
		fail(j, "cannot create its attach trigger file: %s", strerror(e));
		return;
	}
	close(fd);
	if (kill(j->pid, SIGQUIT) < 0) {
		fail(j, "cannot signal it: %s", strerror(errno));
		return;
	}
	j->step = JVM_TRIGGERED;
	j->deadline_ns = now + TRIGGER_WAIT_NS;
}

/* Move J's request on as far as it goes without waiting. */
static void advance(struct jvm_set *s, struct jvm *j, uint64_t now)
{
	switch (j->step) {
	case JVM_NEW:
		if (now >= j->next_ns)
			start(j, now);
		break;
	case JVM_TRIGGERED:
		if (has_socket(j)) {
			unlink(j->trigger);
			j->trigger[0] = '\0';
			ask(j, now);
		} else if (now >= j->deadline_ns) {
			fail(j, "it did not open its attach socket in %llu s",
			     TRIGGER_WAIT_NS / 1000000000ull);
		}
		break;
	case JVM_ASKING:
		read_answer(s, j, now);
		break;
	case JVM_IDLE:
		if (now >= j->next_ns)
			ask(j, now);
		break;
	case JVM_FAILED:
	case JVM_GONE:
		break;
	}
}

static bool is_jvm(const struct proc *p)
{
	return p->jvm && !p->exited;
}

/* P's entry, or NULL: by pid and start time, as a reused pid is another process. */
static struct jvm *find(struct jvm_set *s, const struct proc *p)
{
	size_t i;

	for (i = s->n; i-- > 0;)
		if (s->v[i].pid == p->pid && s->v[i].start_time_ns == p->start_time_ns)
			return &s->v[i];
	return NULL;
}

static struct jvm *find_or_add(struct jvm_set *s, const struct proc *p)
{
	struct jvm *j = find(s, p);
	void *v = s->v;

	if (j)
		return j;
	if (grow_array(&v, &s->cap, s->n + 1, sizeof(*s->v)) < 0) {
		prof_errmsg_clear();
		return NULL;
	}
	s->v = v;
	s->v[s->n] = (struct jvm){ .pid = p->pid, .nspid = p->pid,
				   .start_time_ns = p->start_time_ns, .fd = -1,
				   .stale_gap_ns = STALE_GAP_NS };
	return &s->v[s->n++];
}

/* Which entries still have a live JVM: the others are gone for good. */
static void mark(struct jvm_set *s, const struct proc_table *pt)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		s->v[i].seen = false;
	for (i = 0; i < pt->nprocs; i++) {
		struct jvm *j;

		if (!is_jvm(pt->procs[i]))
			continue;
		j = find_or_add(s, pt->procs[i]);
		if (j)
			j->seen = true;
	}
	for (i = 0; i < s->n; i++)
		if (!s->v[i].seen && s->v[i].step != JVM_GONE) {
			hang_up(&s->v[i]);
			s->v[i].step = JVM_GONE;
			free(s->v[i].code);
			s->v[i].code = NULL;
			s->v[i].ncode = 0;
		}
}

void jvm_set_poll(struct jvm_set *s, const struct proc_table *pt, uint64_t now)
{
	size_t i;

	mark(s, pt);
	for (i = 0; i < s->n; i++)
		advance(s, &s->v[i], now);
}

void jvm_set_sampled(struct jvm_set *s, struct proc *p, const struct unwind_result *u,
		     uint64_t time_ns)
{
	struct jvm *j = p->jvm ? find(s, p) : NULL;
	size_t i;

	/*
	 * Only between requests, and only once the last map has had its
	 * time: a sample taken before it was written ran code it covers.
	 */
	if (!j || j->step != JVM_IDLE || !j->map_ns || j->stale_pc ||
	    time_ns < j->map_ns + j->stale_gap_ns)
		return;
	for (i = 0; i < u->n; i++) {
		uint64_t pc = u->pc[i], *slot;

		/* named already (interpreter, jitdump) */
		if (pc >= PROF_JIT_FRAME_BASE)
			continue;
		slot = &j->checked[(pc ^ pc >> 8) & (CHECKED_SLOTS - 1)];
		if (*slot == pc)
			continue;
		if (covers(j, pc) || as_find(&p->as, pc)) {
			*slot = pc;
			continue;
		}
		pr_debug("java %d: a frame at %#" PRIx64 " is in no code its last perf map "
			 "covered: asking for another", (int)j->pid, pc);
		j->stale_pc = pc;
		j->next_ns = 0;	/* asked at the next poll */
		return;
	}
}

void jvm_set_refresh(struct jvm_set *s, const struct proc_table *pt, int timeout_ms)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC), end = now + (uint64_t)timeout_ms * 1000000;
	struct timespec tick = { 0, 10000000 };
	bool busy;
	size_t i;

	mark(s, pt);
	/* a request in flight answers the question: the others ask now */
	for (i = 0; i < s->n; i++)
		if (s->v[i].step == JVM_NEW || s->v[i].step == JVM_IDLE)
			s->v[i].next_ns = 0;
	for (;;) {
		busy = false;
		for (i = 0; i < s->n; i++) {
			struct jvm *j = &s->v[i];
			bool was_flags = j->step == JVM_ASKING && j->asking_flags;

			advance(s, j, now);
			/* the flags answered: the map is the request that matters */
			if (was_flags && j->step == JVM_IDLE)
				advance(s, j, now);
			busy |= j->step == JVM_TRIGGERED || j->step == JVM_ASKING;
		}
		if (!busy || now >= end)
			break;
		nanosleep(&tick, NULL);
		now = clock_ns(CLOCK_MONOTONIC);
	}
	/* what did not answer in time answers later, or with the next file */
}
