/* SPDX-License-Identifier: MIT */
/*
 * recorder_events.c - the perf events of a recording: their attributes,
 * one event per online CPU for each task followed (with inherit), and one
 * ring per CPU that the first event maps and later ones share through
 * PERF_EVENT_IOC_SET_OUTPUT.  A per-task event with inherit cannot be
 * mapped, which is why events are per CPU.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "capture.h"
#include "internal.h"
#include "perf_ring.h"
#include "proc.h"
#include "process.h"
#include "recorder.h"
#include "unwind/regs_x86_64.h"
#include "sorter.h"
#include "unwind/unwind.h"

int prof_max_sample_rate(uint64_t *ret)
{
	return proc_read_u64("/proc/sys/kernel/perf_event_max_sample_rate", ret);
}

const char *rec_event_name(enum prof_event_kind e)
{
	switch (e) {
	case PROF_EVENT_CPU_CLOCK: return "cpu-clock";
	case PROF_EVENT_TASK_CLOCK: return "task-clock";
	default: return "cycles";
	}
}

/*
 * How full a ring of RING bytes is when the kernel wakes the recorder (or
 * when it comes by itself, to a clock's ring: rec_poll_timeout()).
 * Each wakeup costs the recorder ~40-65 us here (its caches, which the
 * target ran over while it slept, and the switch itself: the most of what
 * a light load costs it), so it comes late: with FREQ (a sampling ring
 * of a command's or a process's tasks), when what is left is room for 32
 * ms of samples at that rate, and 32 samples at least, while it gets a
 * CPU; a make -j2 recorded attached woke it 145 times at half a ring, 112
 * so.  Without FREQ (switches, which come in bursts, and the whole
 * machine's rings, all drained by one thread whose held samples keep
 * their room until processed), at half the ring.  A ring too small for
 * either keeps the room for 32 samples, down to a quarter full.
 */
static size_t wakeup_bytes(size_t ring, uint32_t stack, uint64_t freq)
{
	uint64_t n = freq * 32 / 1000 > 32 ? freq * 32 / 1000 : 32;
	size_t room = sample_max_bytes(stack) * 32;

	if (freq && n <= ring / 2 / sample_max_bytes(stack))
		return ring - sample_max_bytes(stack) * (size_t)n;
	if (ring / 2 >= room)
		return ring / 2;
	return ring > room + ring / 4 ? ring - room : ring / 4;
}

/*
 * The context-switch event samples a thread as it leaves its CPU, with
 * the same registers and stack copy as the sampling event, so that both
 * kinds of rings hold records of one layout.  It fires inside the
 * scheduler, so it must not exclude the kernel (the user registers and
 * stack are the thread's all the same); it alone asks for the switch
 * records, and the sampling event alone for the side-band ones.
 */
void rec_fill_attr(struct perf_event_attr *a, enum prof_event_kind ev, uint64_t freq,
		   uint32_t stack, bool on_exec, bool no_inherit, bool kernel, size_t ring_bytes,
		   bool sw, bool off_cpu)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	if (sw) {
		a->type = PERF_TYPE_SOFTWARE;
		a->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
		a->sample_period = 1;
	} else if (ev == PROF_EVENT_CYCLES || ev == PROF_EVENT_DEFAULT) {
		a->type = PERF_TYPE_HARDWARE;
		a->config = PERF_COUNT_HW_CPU_CYCLES;
	} else {
		a->type = PERF_TYPE_SOFTWARE;
		a->config = ev == PROF_EVENT_TASK_CLOCK ? PERF_COUNT_SW_TASK_CLOCK
							: PERF_COUNT_SW_CPU_CLOCK;
	}
	if (!sw) {
		a->freq = 1;
		a->sample_freq = freq;
	}
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			 PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a->sample_regs_user = SAMPLE_REGS_MASK;
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
		/*
		 * With --off-cpu a CPU sample in the kernel (a system call) counts
		 * too, on its user stack: else wall time would miss the time threads
		 * spend on a CPU in the kernel.  It needs the privilege --off-cpu
		 * needs anyway.
		 */
		a->exclude_kernel = !sw && !off_cpu;
		a->exclude_callchain_kernel = 1;
	}
	if (sw) {
		a->context_switch = 1;
	} else {
		a->mmap = 1;
		a->mmap2 = 1;
		a->comm = 1;
		a->comm_exec = 1;
		a->task = 1;
	}
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)wakeup_bytes(ring_bytes, stack, sw ? 0 : freq);
}

/* The smallest ring the default sizing falls back to under a locked-memory limit. */
#define MIN_RING_PAGES 16

/* What the default rings may take in all: a few CPUs get 32 MiB each, many get less. */
#define MAX_RING_BYTES_TOTAL (256u << 20)

static size_t ring_pages(const struct prof_recorder_opts *o, size_t page, size_t ncpus,
			 bool system)
{
	size_t want, pages = 1, most = 8192;

	if (o->mmap_pages)
		return o->mmap_pages;
	/*
	 * Room for ~64 samples at full stack size (100 ms of a busy CPU at 640
	 * Hz), and more as the rate grows: at 20 kHz on busy threads a 32 MiB
	 * ring fills in ~30 ms, as long as the recorder may wait for a CPU.  At
	 * most 32 MiB a CPU, and 256 MiB in all; the recorder drains a ring when
	 * it is half full.
	 */
	want = sample_max_bytes(o->stack_bytes) * 64 / page;
	if (o->freq_hz > 2000)
		want *= o->freq_hz / 1000;
	/*
	 * The whole machine: every CPU busy with someone, each sample a whole
	 * stack copy (64 KiB at 999 Hz fill 64 MiB a second), while the
	 * recorder competes for a CPU with all of them: up to four times the
	 * room, as the rate asks (at 99 Hz 64 samples are 0.6 s of a CPU, and
	 * a ring four times that is 12 MiB a CPU for the kernel to clear at
	 * the start, most of what recording an idle machine costs)
	 */
	if (system)
		want *= !o->freq_hz || o->freq_hz >= 750 ? 4 : o->freq_hz >= 250 ? o->freq_hz / 250 : 1;
	/*
	 * Switches come in bursts: a thread that blocks a thousand times a
	 * second, or threads handing work to each other, fill a switch ring
	 * faster than any sampling rate.  Room for ~256 switch samples.
	 */
	if (o->off_cpu && want < sample_max_bytes(o->stack_bytes) * 256 / page)
		want = sample_max_bytes(o->stack_bytes) * 256 / page;
	while (ncpus && most > MIN_RING_PAGES && most * page * ncpus > MAX_RING_BYTES_TOTAL)
		most /= 2;
	while (pages < want && pages < most)
		pages <<= 1;
	return pages < MIN_RING_PAGES ? MIN_RING_PAGES : pages;
}

/*
 * Unprivileged, the kernel lets a user lock perf_event_mlock_kb per online
 * CPU for perf rings, and RLIMIT_MEMLOCK beyond that: with a ring per CPU,
 * each gets its share (data pages a power of two, plus the metadata page),
 * as perf sizes its own.  Root (CAP_IPC_LOCK) has no such limit; nor has
 * an -m the user chose (the kernel then says no, and the error says why).
 */
static size_t fit_locked_limit(size_t pages, size_t page, size_t ncpus, size_t nrings,
			       bool ours)
{
	uint64_t mlock_kb = 0, budget, share, fit = 1;
	struct rlimit rl;

	if (!ours || geteuid() == 0 || !ncpus ||
	    proc_read_u64("/proc/sys/kernel/perf_event_mlock_kb", &mlock_kb) < 0 ||
	    getrlimit(RLIMIT_MEMLOCK, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return pages;
	budget = mlock_kb * 1024 * ncpus + rl.rlim_cur;
	share = budget / nrings / page;
	if (share < 2)
		return pages;
	while (fit * 2 <= share - 1)
		fit *= 2;
	if (fit < pages)
		pr_debug("perf rings of %llu KiB, not %zu KiB: the locked-memory limit",
			 (unsigned long long)(fit * page / 1024), pages * page / 1024);
	return fit < pages ? (size_t)fit : pages;
}

static int perf_error(int err, const char *ev, bool sw, bool system)
{
	uint64_t paranoid = 0;

	if (err == -EACCES || err == -EPERM) {
		proc_read_u64("/proc/sys/kernel/perf_event_paranoid", &paranoid);
		if (system)
			return error_setx(err, "recording every task needs "
					  "kernel.perf_event_paranoid <= 0 (it is %llu), CAP_PERFMON "
					  "or root: run as root, grant it ('setcap "
					  "cap_perfmon,cap_sys_ptrace+ep prof') or lower the setting "
					  "('sysctl kernel.perf_event_paranoid=0')",
					  (unsigned long long)paranoid);
		if (sw)
			return error_setx(err, "off-CPU intervals sample threads inside the kernel "
					  "(as they switch out, and in system calls), which "
					  "kernel.perf_event_paranoid %llu forbids: run as root, grant "
					  "CAP_PERFMON, or set kernel.perf_event_paranoid to 1",
					  (unsigned long long)paranoid);
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

/* Where a wrapped sample's stack copy lies, for its ring (perf_ring.h). */
static bool ring_stack_of(void *layout, const struct perf_event_header *h, size_t have,
			  size_t *data_off, uint64_t *size)
{
	return perf_sample_stack_span(layout, h, have, data_off, size) == 0;
}

/*
 * Open the event of ring I (its CPU's sampling ring, or with --off-cpu
 * from ncpus on, its switch ring) for TID: 0, 1 to try the same ring again
 * (a fallback changed the attributes), or -errno.
 */
static int open_ring_event(struct prof_recorder *rec, size_t i, pid_t tid, bool on_exec,
			   bool enable, size_t pages, size_t page)
{
	struct prof_recorder_opts *o = &rec->opts;
	struct perf_ring *ring = &rec->rings[i];
	bool sw = i >= rec->ncpus;
	unsigned long flags = PERF_FLAG_FD_CLOEXEC;
	struct perf_event_attr attr;
	pid_t pid = tid;
	int fd, r;

	rec_fill_attr(&attr, o->event, o->freq_hz, o->stack_bytes, on_exec, o->no_inherit,
		      rec->kernel, pages * page, sw, o->off_cpu);
	if (rec->system) {
		/*
		 * Every task of the CPU: nothing to inherit, and the kernel is
		 * sampled too (on the user stack, without -k), so that the idle
		 * task's samples count idle time and a system call counts as busy
		 */
		attr.inherit = 0;
		attr.inherit_thread = 0;
		attr.exclude_kernel = 0;
		attr.wakeup_watermark = (uint32_t)wakeup_bytes(pages * page, o->stack_bytes, 0);
		if (rec->cgroup_fd >= 0) {
			pid = rec->cgroup_fd;
			flags |= PERF_FLAG_PID_CGROUP;
		}
	}
	/*
	 * mmap2 records with the file's build-id where it has one: they name
	 * the file of a process gone before they are read (a short-lived
	 * process, another mount namespace), which device and inode cannot
	 */
	attr.build_id = !sw && !rec->build_id_refused;
	/* every event's records are parsed as these attributes lay them out */
	r = perf_sample_layout_of(&attr, &rec->layout);
	if (r < 0)
		return error_setx(r, "cannot parse the samples of these perf attributes");
	fd = perf_open(&attr, pid, ring->cpu, -1, flags);
	if (fd < 0 && errno == EINVAL && attr.build_id && rec->nfds == 0) {
		rec->build_id_refused = true;	/* a kernel before 5.12: device and inode only */
		return 1;
	}
	if (fd < 0 && rec->kernel && rec->nfds == 0 && !o->off_cpu && !rec->system &&
	    (errno == EACCES || errno == EPERM)) {
		uint64_t paranoid = 0;

		proc_read_u64("/proc/sys/kernel/perf_event_paranoid", &paranoid);
		pr_warn("kernel sampling refused (kernel.perf_event_paranoid is %llu): "
			"recording user space only", (unsigned long long)paranoid);
		rec->kernel = false;
		rec->sum.kernel_refused = true;
		return 1;
	}
	if (fd < 0 && !sw && o->event == PROF_EVENT_DEFAULT &&
	    (errno == ENOENT || errno == ENODEV || errno == EOPNOTSUPP || errno == ENXIO ||
	     errno == EINVAL)) {
		/* no PMU here (VMs, containers): the software clock samples alike */
		rec->sum.event_fell_back = true;
		o->event = PROF_EVENT_CPU_CLOCK;
		return 1;
	}
	if (fd < 0 && !sw && o->event == PROF_EVENT_CYCLES &&
	    (errno == ENOENT || errno == ENODEV || errno == EOPNOTSUPP))
		return error_setx(-ENOTSUP, "the cycles event is not supported here (no "
				  "hardware PMU): use -e cpu-clock");
	if (fd < 0 && errno == ESRCH)
		return error_setx(-ESRCH, "thread %d exited while prof was attaching", (int)tid);
	if (fd < 0)
		return perf_error(-errno, sw ? "context-switch" : rec_event_name(o->event),
				  o->off_cpu, rec->system);
	r = keep_fd(rec, fd);
	if (r < 0) {
		close(fd);
		return r;
	}
	if (ring->base) {
		if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring->fd) < 0)
			return error_set(-errno, "cannot share a perf ring");
	} else {
		r = perf_ring_map(ring, fd, ring->cpu, pages);
		ring->wakeup = attr.wakeup_watermark;
		if (r == -EPERM && !o->mmap_pages && pages > MIN_RING_PAGES) {
			/*
			 * Unprivileged, the kernel locks at most
			 * perf_event_mlock_kb per CPU, plus RLIMIT_MEMLOCK:
			 * smaller rings, as perf takes, and this CPU again
			 */
			rec->ring_pages = pages / 2;
			pr_debug("perf ring refused (locked-memory limit): trying %zu KiB",
				 pages / 2 * page / 1024);
			close(rec->fds[--rec->nfds]);
			return 1;
		}
		if (r == -EPERM || r == -ENOMEM)
			return error_set(r, "cannot map a %zu KiB perf ring (the locked-memory "
					 "limit, kernel.perf_event_mlock_kb, is too low; try "
					 "-m with fewer pages)", pages * page / 1024);
		if (r < 0)
			return error_set(r, "cannot map a perf ring");
		ring->stack_of = ring_stack_of;
		ring->stack_arg = &rec->layout;
		/*
		 * A clock's sampling ring of the tasks followed fills at most at
		 * the sampling rate (the kernel turns the frequency into a fixed
		 * period), so the recorder knows when it may reach the watermark
		 * and comes then by itself.  Polled, it would also wake the
		 * recorder at every inherited task's exit (the kernel's
		 * perf_event_exit_event() wakes the parent event's readers): of
		 * the ~130 wakeups of a make -j2 recorded attached, 75 were for
		 * nothing, each a context switch and caches lost.  Cycles adapt
		 * their period as they go and switches come in bursts: those the
		 * kernel wakes for, as does the whole machine's (its events are
		 * not inherited, it has no exits to wake for).
		 */
		if (!sw && !rec->system && o->freq_hz &&
		    (o->event == PROF_EVENT_CPU_CLOCK || o->event == PROF_EVENT_TASK_CLOCK))
			ring->fill_rate = o->freq_hz * sample_max_bytes(o->stack_bytes);
		else if (epoll_ctl(rec->epfd, EPOLL_CTL_ADD, fd,
				   &(struct epoll_event){ .events = EPOLLIN, .data.u64 = i }) < 0)
			return error_set(-errno, "cannot poll a perf ring");
	}
	if (enable && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
		return error_set(-errno, "cannot enable the perf events");
	return 0;
}

int rec_watch_exit(struct prof_recorder *rec, pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0), r;
	void *p = rec->exit_fds;

	if (fd < 0)
		return 0;	/* before Linux 5.3, or gone: the poll's timeout sees it */
	r = grow_array(&p, &rec->exit_fds_cap, rec->nexit_fds + 1, sizeof(*rec->exit_fds));
	rec->exit_fds = p;
	if (r < 0) {
		close(fd);
		return r;
	}
	rec->exit_fds[rec->nexit_fds++] = fd;
	/* once: a process that exited stays readable */
	if (epoll_ctl(rec->epfd, EPOLL_CTL_ADD, fd,
		      &(struct epoll_event){ .events = EPOLLIN | EPOLLONESHOT }) < 0)
		return error_set(-errno, "cannot poll a process");
	return 0;
}

int rec_poll_timeout(const struct prof_recorder *rec, int timeout_ms)
{
	uint64_t ns = UINT64_MAX, ms;
	size_t i;

	for (i = 0; i < rec->nrings; i++) {
		uint64_t w = perf_ring_wait_ns(&rec->rings[i]);

		if (w < ns)
			ns = w;
	}
	if (ns == UINT64_MAX)
		return timeout_ms;
	/*
	 * Up to the next millisecond: a small ring at a fast rate reaches its
	 * watermark in less than one, and a wait of 0 then spun the recorder
	 * on an idle target (-m 32 -s 65528: a CPU's whole time)
	 */
	ms = ns / 1000000 + (ns % 1000000 != 0);
	return timeout_ms >= 0 && (uint64_t)timeout_ms < ms ? timeout_ms : (int)ms;
}

/*
 * Open TID's events on every online CPU (with inherit, so its new threads
 * and children follow): the sampling event, and with --off-cpu the
 * context-switch event, each into a ring of its own kind, so that a switch
 * record is never lost for a burst of CPU samples, nor the reverse, and a
 * loss says which it was.  The first event on a ring owns it; later ones
 * send their records into it (PERF_EVENT_IOC_SET_OUTPUT).  When ENABLE,
 * the new events start at once (attaching during a recording).
 */
int rec_open_task_events(struct prof_recorder *rec, pid_t tid, bool on_exec, bool enable)
{
	struct prof_recorder_opts *o = &rec->opts;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), i;
	int r;

	if (!rec->ring_pages)
		rec->ring_pages = fit_locked_limit(ring_pages(o, page, rec->nrings, rec->system), page,
						   rec->online_cpus, rec->nrings, !o->mmap_pages);
	for (i = 0; i < rec->nrings; i++) {
		r = open_ring_event(rec, i, tid, on_exec, enable, rec->ring_pages, page);
		if (r < 0)
			return r;
		if (r > 0)
			i--;	/* the same ring again, as the fallback has it */
	}
	rec->sum.event = rec_event_name(o->event);
	rec->sum.ring_bytes = rec->ring_pages * page;
	rec->sum.offcpu_ring_bytes = o->off_cpu ? rec->ring_pages * page : 0;
	return 0;
}

int rec_init_rings(struct prof_recorder *rec)
{
	int online[MAX_CPUS], n = online_cpu_list(online, MAX_CPUS);
	const int *cpus = online;
	size_t k, nrings;

	/* the kernel's locked-memory budget is per online CPU, whichever are sampled */
	rec->online_cpus = (size_t)n;
	if (rec->ncpu_list) {
		cpus = rec->cpu_list;
		n = (int)rec->ncpu_list;
	}
	nrings = (size_t)n * (rec->opts.off_cpu ? 2 : 1);

	rec->rings = calloc(nrings, sizeof(*rec->rings));
	if (!rec->rings)
		return error_setx(-ENOMEM, "out of memory");
	/* a CPU's sampling ring, then (--off-cpu) its switch ring at ncpus + its index */
	for (k = 0; k < nrings; k++) {
		rec->rings[k].fd = -1;
		rec->rings[k].cpu = cpus[k % (size_t)n];
	}
	rec->ncpus = (size_t)n;
	rec->nrings = nrings;
	return 0;
}

void rec_close_rings(struct prof_recorder *rec)
{
	size_t i;

	for (i = 0; i < rec->nfds; i++)
		ioctl(rec->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	for (i = 0; rec->rings && i < rec->nrings; i++)
		perf_ring_unmap(&rec->rings[i]);
	for (i = 0; i < rec->nfds; i++)
		close(rec->fds[i]);
	free(rec->fds);
	free(rec->rings);
	rec->fds = NULL;
	rec->rings = NULL;
	rec->nfds = rec->ncpus = rec->nrings = 0;
}

/*
 * Keep the first error as the message; a later one is appended as context
 * ("...; then: ..."), so the user sees what failed first and what followed.
 */
