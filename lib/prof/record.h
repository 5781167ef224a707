/* SPDX-License-Identifier: MIT */
/*
 * prof/record.h - recording: launching a command, attaching to processes,
 * sampling them with perf events into a spool.  The conventions of the
 * whole API are at the top of <prof/prof.h>.
 *
 * Environment.  The recorder reads these variables when a recording
 * starts (tools for measuring the unwinder, not for everyday use):
 *   PROF_UNWIND=compiled|dwfl|check  which engine unwinds: the compiled CFI
 *       tables (the default), libdwfl alone, or both on every sample, the
 *       summary counting where they differ (unwind_check_* below);
 *   PROF_UNWIND_CHECK_LOG=FILE  with check, each difference written to
 *       FILE, module and offset per frame;
 *   PROF_UNWIND_TABLE_MAX=BYTES  the most the compiled tables may hold
 *       before rows are dropped (and compiled again when needed);
 *   PROF_UNWIND_CAPTURE=FILE  every sample's registers and stack copy
 *       written raw to FILE, for replaying offline (bench/unwind).
 */
#ifndef LIBPROF_RECORD_H
#define LIBPROF_RECORD_H

#include <prof/spool.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Launching a program suspended before exec, so that its events exist
 * before its first instruction (enable_on_exec).
 */
struct prof_launched;

/*
 * Fork a child that waits before execvp(ARGV[0], ARGV).
 * Returns: 0 and *ret; -errno of fork(2) or pipe(2).
 */
int prof_launch_suspended(char *const argv[], struct prof_launched **ret);

pid_t prof_launched_pid(const struct prof_launched *l);

/*
 * Let the child exec.  When the exec fails the child is reaped, with
 * status 127 for -ENOENT and 126 for the others, the message naming the
 * command.
 * Returns: 0 once the exec succeeded; -ENOENT, -EACCES or another -errno
 * of execvp(3).
 */
int prof_launched_release(struct prof_launched *l);

/*
 * Reap the child, waiting for it with BLOCK.
 * Returns: 1 with its wait status in *ret_status when it ended; 0 when it
 * still runs (only without BLOCK); -errno of waitpid(2).
 */
int prof_launched_wait(struct prof_launched *l, bool block, int *ret_status);

/*
 * Send SIG to the child while it has not been reaped.
 * Returns: 0; -ESRCH once it was reaped; -errno of kill(2).
 */
int prof_launched_kill(struct prof_launched *l, int sig);

/* Free L (NULL: nothing); a child never released is told to exit and reaped. */
void prof_launched_free(struct prof_launched *l);

/* The perf event that samples. */
enum prof_event_kind {
	PROF_EVENT_DEFAULT = 0,	/* cycles, else cpu-clock where there is no PMU */
	PROF_EVENT_CPU_CLOCK,
	PROF_EVENT_TASK_CLOCK,
	PROF_EVENT_CYCLES,
};

enum prof_attach_mode {
	PROF_ATTACH_MODE_STOP,		/* a running process: its threads are held
					 * still (ptrace, no signal) until enable() */
	PROF_ATTACH_MODE_ON_EXEC,	/* a launched child, before its exec */
};

enum prof_attach_outcome {
	PROF_ATTACH_OUTCOME_ATTACHED,
	PROF_ATTACH_OUTCOME_ALREADY,	/* it was part of the recording already */
	PROF_ATTACH_OUTCOME_EXITED,	/* it exited meanwhile */
};

enum prof_refresh_outcome {
	PROF_REFRESH_OUTCOME_DONE,
	PROF_REFRESH_OUTCOME_EXITED,	/* it exited meanwhile */
};

#define PROF_DEFAULT_FREQ 999
#define PROF_MAX_STACK 65528u	/* the kernel's limit for a user stack copy */
#define PROF_DEFAULT_STACK PROF_MAX_STACK
/* Above this rate the default copy is PROF_HIGH_FREQ_STACK: a ring holds twice the samples. */
#define PROF_FULL_STACK_MAX_FREQ 4000u
#define PROF_HIGH_FREQ_STACK (32u << 10)

struct prof_recorder_opts {
	size_t sz;			/* sizeof(struct prof_recorder_opts) */
	uint64_t freq_hz;		/* 0: PROF_DEFAULT_FREQ */
	bool freq_max;			/* sample at the kernel's maximum rate */
	enum prof_event_kind event;
	uint32_t stack_bytes;		/* 0: PROF_DEFAULT_STACK (PROF_HIGH_FREQ_STACK above
					 * PROF_FULL_STACK_MAX_FREQ); rounded up to 8 */
	bool no_inherit;		/* follow new threads, not new processes */
	bool children;			/* attaching: also the descendants that exist */
	bool include_kernel;		/* kernel frames too (retried user-only if refused) */
	uint32_t mmap_pages;		/* data pages per ring; 0: sized from stack and rate */
	bool off_cpu;			/* also sample each switch-out: off-CPU intervals
					 * (needs kernel sampling: root or CAP_PERFMON, or
					 * kernel.perf_event_paranoid <= 1); the default
					 * event becomes cpu-clock, so that CPU samples
					 * weigh time too */
	size_t argc;			/* the command line, for the spool's metadata */
	const char *const *argv;
	size_t npids;			/* the pids attached, for the metadata (first 64) */
	const pid_t *pids;
	/*
	 * A recording in several files, as perf's --switch-output: the spool
	 * path names them, PATH.<YYYYmmddHHMMSSmmm> (local time, when each
	 * began), each one readable on its own; the recording goes on in a
	 * new file once the current one holds switch_bytes, or switch_ns
	 * after it began, or when prof_recorder_switch_output() is called
	 * (switch_signal: only then).
	 */
	uint64_t switch_bytes;
	uint64_t switch_ns;
	bool switch_signal;
	uint32_t switch_max_files;	/* keep the newest N files (older ones are removed);
					 * 0: all */
	/*
	 * The whole machine (prof_recorder_open_system()): the CPUs sampled,
	 * "0-3,6" (NULL: every online CPU), and a cgroup whose tasks alone
	 * are sampled (a cgroup v2 directory, absolute or under
	 * /sys/fs/cgroup; NULL: every task).
	 */
	const char *cpus;
	const char *cgroup;
	/*
	 * The spool is a file that never gets a name, in the directory the
	 * spool path names (O_TMPFILE): read only through
	 * prof_recorder_tail(), it leaves nothing behind however the
	 * recorder ends.  With switch_*, each new file is another such file:
	 * the tail moves on to it once it has read the one before, and the
	 * file it leaves is gone.  A recording that only a live view reads
	 * (prof top) switches to keep its memory flat.
	 */
	bool unnamed;
};

/* What one prof_recorder_poll() did. */
struct prof_poll_summary {
	size_t sz;			/* sizeof(struct prof_poll_summary) */
	uint64_t samples;		/* written during this call */
	uint64_t lost_events;
};

/*
 * The counters of a recording and how it ran.  The arrays by kind have
 * PROF_SLOTS entries, [0] unused.
 */
struct prof_recording_summary {
	size_t sz;			/* sizeof(struct prof_recording_summary) */
	uint64_t sample_events;		/* samples the kernel delivered */
	uint64_t samples;		/* samples written */
	uint64_t lost_events;
	uint64_t lifecycle_gaps;
	uint64_t reconciliations;
	uint64_t empty_stacks;
	uint64_t truncated_stacks;
	uint64_t unwind_errors[PROF_SLOTS];	/* by enum prof_unwind_error */
	uint64_t processes;
	uint64_t threads;
	bool kernel_enabled;		/* kernel frames were recorded */
	bool kernel_refused;		/* they were asked for, and the kernel said no */
	const char *event;		/* the event that ran, e.g. "cpu-clock" */
	bool event_fell_back;		/* cycles was asked for (or default) but unsupported */
	uint64_t freq_hz;
	uint32_t stack_bytes;
	uint64_t ring_bytes;		/* data bytes of each ring */
	uint64_t spool_bytes;
	uint64_t duration_ns;
	uint64_t frames;		/* user frames unwound */
	uint64_t fallback_frames[PROF_SLOTS];	/* of those, by enum prof_unwind_fallback */
	/* the compiled unwinder's tables: files, bytes now and at the most, flushes */
	uint64_t unwind_tables, unwind_table_bytes, unwind_table_peak_bytes;
	uint64_t unwind_table_flushes;
	uint64_t unwind_cache_hits, unwind_cache_misses;
	/*
	 * PROF_UNWIND=check: samples unwound by both engines; those with the same
	 * frames and completeness; those with the same frames only
	 */
	uint64_t unwind_check_samples, unwind_check_same, unwind_check_same_frames;
	uint64_t unwind_check_entry;	/* libdwfl lost the caller of a leaf frame */
	uint64_t unwind_check_further;	/* libdwfl stopped, the compiled walk went on to the end */
	/* off-CPU: switch-out samples delivered, the intervals written and their time */
	uint64_t switch_events;
	uint64_t offcpu_intervals;
	uint64_t offcpu_ns[PROF_SLOTS];	/* by enum prof_offcpu_state */
	uint64_t offcpu_unsampled, offcpu_truncated;
	uint64_t lost_switch_samples, lost_switch_records;	/* of lost_events */
	uint64_t offcpu_ring_bytes;	/* data bytes of each switch ring */
	uint32_t files;			/* spool files written (switched output), this one too */
	const char *spool_path;		/* the file being written, lent until the next poll */
	/*
	 * The whole machine: samples of the idle task (counted, not written) and
	 * of the recorder itself (left out, busy all the same), of sample_events;
	 * the CPUs sampled (0: not the whole machine); how long reading the
	 * processes running from /proc took at the start.
	 */
	uint64_t idle_samples;
	uint64_t self_samples;
	uint32_t cpus;
	uint64_t synthesis_ns;
	uint64_t synthesis_cpu_ns;	/* of that, the recorder's CPU time */
	uint64_t synthesis_processes;	/* the processes read */
	uint64_t unwind_memo_frames;	/* user frames taken from the thread's last walk */
	/* CPython 3.11: as struct prof_counters has them */
	uint64_t python_frames, python_stale, python_unread;
	/*
	 * HotSpot JVMs: interpreter frames named by the method they ran;
	 * those whose Method* could not be read (a frame being set up), left
	 * as the interpreter
	 */
	uint64_t java_frames, java_unnamed;
};

struct prof_recorder;

/* Returns: 0 and *ret, the kernel's maximum sample rate (perf_event_max_sample_rate); -errno. */
int prof_max_sample_rate(uint64_t *ret);

/*
 * Start recording PID into a new spool for SPOOL_PATH.  The spool is made
 * beside it, without a name (or under a hidden one), and put at
 * SPOOL_PATH when sampling starts: by prof_recorder_enable(), the first
 * prof_recorder_poll(), or at the latest prof_recorder_close().  What was
 * at SPOOL_PATH is then renamed to SPOOL_PATH.old; a recorder freed before
 * that leaves both as they were.  From then on the file holds every block
 * flushed, so a recorder that is killed leaves a readable spool (without
 * its trailer); while it writes, it holds an exclusive flock(2) on it
 * (PROF_META_LOCKED), so readers can tell when it is gone
 * (prof_spool_has_writer()).  A SPOOL_PATH that is a pipe or a device is
 * written as it is.  With PROF_ATTACH_MODE_STOP the threads of PID stay
 * held still until prof_recorder_enable().
 * Returns: 0 and *ret; -EINVAL (options: a rate above the kernel maximum
 * names the maximum); -EACCES or -EPERM (perf or ptrace denied: the message
 * names the gate); -ESRCH (no such process, or it exited while attaching);
 * file errors.
 */
int prof_recorder_attach(pid_t pid, const char *spool_path, enum prof_attach_mode mode,
			 const struct prof_recorder_opts *opts, struct prof_recorder **ret);

/*
 * The same, writing the spool into the caller-owned SINK.
 * Returns: those of prof_recorder_attach(); -EINVAL for a SINK without sz.
 */
int prof_recorder_attach_sink(pid_t pid, const struct prof_sink *sink, enum prof_attach_mode mode,
			      const struct prof_recorder_opts *opts, struct prof_recorder **ret);

/*
 * Start recording the whole machine into a new spool for SPOOL_PATH, as
 * prof_recorder_attach() does for one process: every task that runs on
 * the CPUs of OPTS' cpus (all online CPUs by default), or only those of
 * OPTS' cgroup, the processes already running read from /proc once and
 * the ones that come later followed from the kernel's records, until
 * prof_recorder_close().  Sampling starts with prof_recorder_enable().
 * CPU-wide events need kernel.perf_event_paranoid <= 0, CAP_PERFMON or
 * root.
 * Returns: 0 and *ret; -EACCES or -EPERM (perf events of every task
 * refused: the message names the setting and the capability); -EINVAL
 * (options: a CPU list or cgroup that does not parse or exist); file
 * errors.
 */
int prof_recorder_open_system(const char *spool_path, const struct prof_recorder_opts *opts,
			      struct prof_recorder **ret);

/*
 * Enable sampling and let held processes run again (ON_EXEC events enable
 * themselves at the exec), and put the spool at its path.  The processes
 * are released in every case.
 * Returns: 0; the first failure, -errno.
 */
int prof_recorder_enable(struct prof_recorder *rec);

/*
 * Add the running process PID to the recording: its threads are held still
 * while its events open and its maps and threads are read, and released at
 * once if the recording is enabled (else by enable()).  *ret says whether
 * it was attached, already part of the recording, or exited meanwhile.
 * Returns: 0; -EPERM (ptrace or perf refused; the message names the gate);
 * -EINVAL (mode); -errno.
 */
int prof_recorder_attach_process(struct prof_recorder *rec, pid_t pid,
				 enum prof_attach_mode mode, enum prof_attach_outcome *ret);

/*
 * Open events for threads of PID that no event covers (inheritance covers
 * threads created after attaching; this is for what it cannot see).
 * Returns: 0 and *ret; -EINVAL when PID is not part of the recording;
 * -errno.
 */
int prof_recorder_refresh_threads(struct prof_recorder *rec, pid_t pid,
				  enum prof_refresh_outcome *ret);

/*
 * Wait at most TIMEOUT_MS for data, then drain every ring and process what
 * is ordered; the spool goes to its path if it was not there yet (the
 * launched command runs).  A signal ends the wait early (not an error).
 * Unwinding never fails a poll; spool write errors do, and keep failing
 * the same way: nothing more is written after one.  *RET (if not NULL,
 * its sz set by the caller): what this call did.
 * Returns: 0; -EINVAL (RET's sz not set); -errno.
 */
int prof_recorder_poll(struct prof_recorder *rec, int timeout_ms, struct prof_poll_summary *ret);

/*
 * Finish the current spool file (names, trailer) and go on in a new one,
 * of a recording made with switch_bytes, switch_ns or switch_signal: what
 * the new file's samples need is written into it again, so that each file
 * reads on its own.
 * Returns: 0; -EINVAL (not such a recording); the errors of writing the
 * files (after which nothing more is written).
 */
int prof_recorder_switch_output(struct prof_recorder *rec);

/* Whether records are queued or a ring had data at the last poll. */
bool prof_recorder_has_pending_events(const struct prof_recorder *rec);

/* Drain everything, process it all, and flush the spool.  Returns: 0; -errno. */
int prof_recorder_flush(struct prof_recorder *rec);

/*
 * The counters so far into *RET (whose sz the caller set).
 * Returns: 0; -EINVAL (RET's sz not set).
 */
int prof_recorder_summary(const struct prof_recorder *rec, struct prof_recording_summary *ret);

/*
 * Liveness of recorded processes (exit records, then /proc).
 * Returns: 0 and *ret; -errno.
 */
int prof_recorder_process_is_active(struct prof_recorder *rec, pid_t pid, bool *ret);
int prof_recorder_has_active_processes_except(struct prof_recorder *rec, pid_t pid, bool *ret);
int prof_recorder_active_process_count(struct prof_recorder *rec, size_t *ret);

/*
 * Disable, drain, write the names of the frames and the trailer, flush and
 * close (putting the spool at its path if it was not yet), then free REC
 * (NULL: nothing).  The counters go to *RET (if not NULL, its sz set by the
 * caller) in every case; its samples and spool_bytes are what the file
 * holds, which after a write error is less than was sampled.
 * Returns: 0; the first error (later, different ones are appended to
 * prof_errmsg() as context); -EINVAL (RET's sz not set; REC is closed all
 * the same).  REC is freed either way.
 */
int prof_recorder_close(struct prof_recorder *rec, struct prof_recording_summary *ret);

/*
 * Best-effort disable and free (NULL: nothing), without a trailer: a
 * spool at its path stays (read as one whose recorder was killed), one
 * not yet there goes.  For a recording abandoned on an error path.
 */
void prof_recorder_free(struct prof_recorder *rec);

#ifdef __cplusplus
}
#endif

#endif /* LIBPROF_RECORD_H */
