/* SPDX-License-Identifier: MIT */
/*
 * recorder.h - the recorder's state, shared by its parts: recorder.c (the
 * API and lifecycle), recorder_events.c (perf events and rings),
 * recorder_records.c (each record, in order) and recorder_attach.c
 * (running processes).  Private to lib/.
 */
#ifndef PROF_RECORDER_H
#define PROF_RECORDER_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "attach.h"
#include "capture.h"
#include "jvm.h"
#include "jvm_frames.h"
#include "python.h"
#include "offcpu.h"
#include "path_cache.h"
#include "perf_ring.h"
#include "perf_sample.h"
#include "process.h"
#include "sorter.h"
#include "unwind/unwind.h"
#include "spool/spool_file.h"

#define MAX_CPUS 4096
/*
 * The writer closes a block at least this often: a killed recorder loses at
 * most this much, and a reader following the spool sees samples this late.
 */
#define BLOCK_INTERVAL_NS 1000000000ull
/* Threads and processes gone this long are forgotten (checked as often). */
#define COLLECT_INTERVAL_NS 5000000000ull
/*
 * A process's /proc/PID/maps is read again, when a sample's pc or a return
 * address lies in none of its mappings, at most this often: JIT code made
 * executable by mprotect has no mmap record.
 */
#define MAPS_REFRESH_INTERVAL_NS 50000000ull
/* After a loss of side-band records, /proc is swept at most this often. */
#define RECONCILE_INTERVAL_NS 250000000ull
/* A sample's bytes besides its stack copy, at most (header, ids, registers, sizes) */
#define SAMPLE_HEAD_MAX 512

/* The room a sample with a stack copy of STACK bytes takes in a ring, at most. */
static inline size_t sample_max_bytes(uint32_t stack)
{
	return (size_t)stack + SAMPLE_HEAD_MAX;
}
/*
 * A process whose exit record is late is looked for in /proc (its state:
 * a zombie counts as gone) at most this often; in between, kill(pid, 0)
 * says cheaply whether it is gone for good.  A backstop: the exit record
 * says it first, and a loss has /proc read at once (rec_reconcile()).
 * Each look costs ~15 us a live process (its exe link, cold): every 200
 * ms it was 0.9 ms of a make -j2's recording, 56 looks that found what
 * the rings held already.
 */
#define LIVENESS_INTERVAL_NS 1000000000ull
/*
 * and kill(pid, 0) at most this often: the loop may poll thousands of
 * times a second, and each live process costs a call (~1.7 us here); a
 * reaped process whose exit record never came ends the recording a
 * moment later, not at once.
 */
#define REAPED_INTERVAL_NS 50000000ull

/* A thread's previous user stack, root first, with its spool nodes. */
#define STACK_MEMOS 64
struct stack_memo {
	uint32_t thread;		/* spool id; 0: none */
	uint32_t gen;			/* of its process's address space */
	int cause;			/* of its truncation (0: complete) */
	size_t n;
	uint64_t pc[UNWIND_MAX_FRAMES];
	uint32_t node[UNWIND_MAX_FRAMES];
	struct path_key key[UNWIND_MAX_FRAMES];	/* of the path from the root to each */
};

/*
 * What a recorder tells its tail, which lib/tail/ fills in when it makes
 * one (prof_recorder_tail()) and clears when it is freed: the recorder
 * knows the tail only through it, as the later stage it is.
 */
struct recorder_tail_link {
	struct prof_tail *tail;		/* NULL: no tail */
	/* REC goes on in the file open at FD, whose modules IMAGES holds */
	int (*next_file)(struct prof_tail *t, int fd, struct image_set *images);
	/* the recorder is freed: the tail goes on alone */
	void (*orphan)(struct prof_tail *t);
};

struct prof_recorder {
	struct prof_recorder_opts opts;
	struct prof_spool_writer *w;
	struct spool_file file;		/* the spool, when written to a path (fd >= 0) */
	pid_t target;
	bool on_exec;
	/*
	 * The whole machine (recorder_system.c): events of pid -1 (or of a
	 * cgroup, cgroup_fd >= 0) on the CPUs of cpu_list; the recorder's own
	 * process (self) is left out.
	 */
	bool system;
	int *cpu_list;
	size_t ncpu_list;
	int cgroup_fd;
	pid_t self;
	size_t online_cpus;		/* for the kernel's locked-memory budget */
	uint64_t synthesis_ns;		/* how long reading /proc at the start took */
	uint64_t synthesis_cpu_ns;	/* of which on the CPU */
	uint64_t synthesis_processes;	/* the processes it read */
	/*
	 * One per CPU, mapped by its first event; with --off-cpu, from ncpus
	 * on, a second per CPU for the switch events: a record's ring says
	 * which event it is of.
	 */
	struct perf_ring *rings;
	struct perf_sample_layout layout;	/* of every ring's records: the events' attrs */
	size_t ring_pages;		/* data pages of a new ring; 0 until the first */
	size_t ncpus, nrings;
	int *fds;			/* every event */
	size_t nfds, fds_cap;
	struct held_process *held;	/* attached processes, stopped until enable */
	size_t nheld;
	bool enabled;
	int epfd;
	int *exit_fds;			/* pidfds of the processes attached or launched */
	size_t nexit_fds, exit_fds_cap;
	struct sorter sorter;
	struct proc_table pt;
	struct capture capture;
	struct jvm_set jvms;		/* the JVMs asked for their perf maps */
	struct py_set py;		/* the CPython processes whose frames are read */
	struct jvm_frames jframes;	/* the JVMs whose interpreter frames are named */
	uint64_t last_jvm_ns;
	struct offcpu offcpu;		/* --off-cpu: the intervals open */
	uint64_t prev_drain_ns;
	uint64_t last_block_ns;
	uint64_t last_reconcile_ns;
	uint64_t last_liveness_ns;	/* the last sweep of /proc/PID/stat */
	uint64_t last_reaped_ns;	/* the last look for reaped processes */
	uint64_t last_collect_ns;
	bool need_reconcile;		/* side-band records may have been lost */
	uint64_t start_ns;
	bool ring_had_data;
	struct prof_recording_summary sum;
	struct unwinder uw;		/* the address spaces' shared unwinder */
	struct stack_memo *memo[STACK_MEMOS];	/* by thread spool id, made when needed */
	struct path_cache paths;	/* user stacks' nodes by their paths */
	struct prof_frame path_frames[UNWIND_MAX_FRAMES];	/* of the stack being interned */
	uint32_t path_frame_ids[UNWIND_MAX_FRAMES];	/* their spool ids */
	struct unwind_result unwound;
	uint32_t frames[UNWIND_MAX_FRAMES / 2 + UNWIND_MAX_FRAMES + 1];
	bool kernel;			/* kernel callchains are sampled */
	int error;			/* the first processing error, sticky */
	/*
	 * Records too short or malformed for their fields, skipped: counted,
	 * with the first one's type and size, for the warning at the end.
	 */
	uint64_t malformed_records;
	uint32_t malformed_type, malformed_size;
	/* its live tail (lib/tail/recorder_tail.c), or none */
	struct recorder_tail_link tail;
	/* --switch-output (recorder_switch.c) */
	char *switch_base;		/* the path the files are named after (unnamed: their
					 * directory); NULL: one file */
	uint64_t switch_next_ns;	/* when the current file ends by time; 0: not by time */
	char **switch_files;		/* the files written, oldest first (for --switch-max-files) */
	size_t nswitch_files, switch_files_cap;
	uint64_t file_start_ns;		/* when the current file began */
	struct prof_recording_summary file_base;	/* the counters when it began */
	uint64_t spool_bytes_before;	/* in the files finished */
	uint64_t samples_written_before;
	uint32_t files;			/* finished */
	/* the kernel refused mmap2 records with build-ids (attr.build_id, before 5.12) */
	bool build_id_refused;
};

/*
 * recorder_spool.c: a writer into the current file; the counters of summary
 * S for a trailer; those less what the files before held (--switch-output).
 */
int rec_new_writer(struct prof_recorder *rec, const struct prof_sink *sink);
/* The summary of the recording so far (prof_recorder_summary()). */
void rec_summary(const struct prof_recorder *rec, struct prof_recording_summary *ret);
void rec_counters(const struct prof_recording_summary *s, struct prof_counters *c);
void rec_file_counters(const struct prof_recorder *rec, struct prof_counters *c);
/* The names the frames of W need, captured into it at the end of its file.  0 or -errno. */
int rec_capture_names(struct prof_recorder *rec, struct prof_spool_writer *w);

/*
 * Take every record of the rings and the queue now, and reconcile with
 * /proc if a loss asked to: prof_recorder_flush() without writing the
 * block out.  0 or -errno.
 */
int rec_process_all(struct prof_recorder *rec);

/* recorder_switch.c */
int rec_switch_init(struct prof_recorder *rec, const char *base);
char *rec_switch_first_name(struct prof_recorder *rec);
int rec_switch_published(struct prof_recorder *rec);
bool rec_switch_due(const struct prof_recorder *rec, uint64_t now);
void rec_switch_release(struct prof_recorder *rec);

/* recorder_events.c */
const char *rec_event_name(enum prof_event_kind e);
/*
 * The attributes of the sampling event EV (SWITCH false), or of the
 * context-switch event (SWITCH true), for a recording with those options.
 */
void rec_fill_attr(struct perf_event_attr *a, enum prof_event_kind ev, uint64_t freq,
		   uint32_t stack, bool on_exec, bool no_inherit, bool kernel, size_t ring_bytes,
		   bool sw, bool off_cpu);
int rec_init_rings(struct prof_recorder *rec);
int rec_open_task_events(struct prof_recorder *rec, pid_t tid, bool on_exec, bool enable);
/*
 * Wake the poll when PID exits, which the rings the recorder comes to by
 * itself no longer do.  Best effort: without pidfd_open() (Linux 5.3) the
 * poll's timeout sees it.
 */
int rec_watch_exit(struct prof_recorder *rec, pid_t pid);
/*
 * How long the poll may sleep: TIMEOUT_MS (-1: no limit), or less, until
 * the first ring the recorder comes to by itself may reach its watermark.
 */
int rec_poll_timeout(const struct prof_recorder *rec, int timeout_ms);
void rec_close_rings(struct prof_recorder *rec);

/* recorder_records.c */
int rec_drain_rings(struct prof_recorder *rec);
/* Count record H as malformed (skipped).  0. */
int rec_malformed(struct prof_recorder *rec, const struct perf_event_header *h);
int rec_process_until(struct prof_recorder *rec, uint64_t watermark);
int rec_reconcile(struct prof_recorder *rec);
int rec_end_offcpu_of_process(struct prof_recorder *rec, struct proc *p, uint64_t time);
/*
 * The module the frames in M (of P) name (pt_frame_module_id()); the first
 * of its file is noted for capture.  Its id, or -errno.
 */
int64_t rec_frame_module(struct prof_recorder *rec, struct proc *p, struct as_module *m);


/* recorder_system.c */
/* The CPU list and cgroup of a whole-machine recording, checked.  0 or -EINVAL. */
int rec_system_prepare(struct prof_recorder *rec);
/* The processes running now, read from /proc into the recording.  0 or -errno. */
int rec_system_synthesize(struct prof_recorder *rec);

/* recorder_attach.c */
int rec_keep_held(struct prof_recorder *rec, struct held_process *h);
int rec_open_held_events(struct prof_recorder *rec, const struct held_process *h, bool enable);
int rec_snapshot_held(struct prof_recorder *rec, const struct held_process *h);
int rec_attach_descendants(struct prof_recorder *rec, pid_t pid);

#endif /* PROF_RECORDER_H */
