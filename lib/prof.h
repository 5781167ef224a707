/* SPDX-License-Identifier: MIT */
/*
 * prof.h - the public API of libprof, the library behind the prof profiler.
 *
 * This is the only header of lib/ that programs may include.  Conventions:
 *   - fallible functions return >= 0 on success and a negative errno on
 *     failure; prof_errmsg() then describes the innermost failure;
 *   - out-parameters (ret, ret_*) come last and are written only on success;
 *   - every destructor accepts NULL;
 *   - the library never prints: it logs through prof_set_log_fn();
 *   - option structs begin with sz, set to their sizeof as the caller's
 *     prof.h declares it (NULL options: the defaults): fields a caller's
 *     older, smaller struct lacks take their defaults, and a newer, larger
 *     one is accepted when the fields this library does not know are zero
 *     (else -EINVAL).
 *
 * Threads.  Each handle (recorder, launched command, spool writer, spool
 * reader, profile, filter, symbolizer, tail, tail view) is used by one
 * thread at a time: calls on the same handle must not overlap, and what a
 * handle lends (events, strings, batches) is read on the thread that uses
 * it, until the call named next to it.  Different handles may be used on
 * different threads at once, with no lock of the caller's, also when they
 * read the same spool file.  prof_errmsg() and prof_errmsg_clear() are per
 * thread.  prof_set_log_fn() is called before any thread uses the library;
 * the log function may then be called on every thread that calls it.  A
 * recorder and its own tail (prof_recorder_tail()) are two handles: the
 * tail, and a symbolizer of it, may be polled on one thread while the
 * recorder polls on another, but prof_recorder_tail(), prof_tail_free() of
 * that tail and prof_recorder_close() or prof_recorder_free() must not
 * run at the same time.  The pure helpers (names of kinds, states and
 * formats, prof_max_sample_rate(), prof_counters_lost_total()) are safe
 * anywhere.
 */
#ifndef PROF_H
#define PROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PROF_VERSION "0.1.0"

/* ---- errors and logging ------------------------------------------------ */

/*
 * The message left by the last failing call on this thread, e.g.
 * "cannot open spool 'x': No such file or directory".  Never NULL; empty
 * when nothing failed.  Valid until the next libprof call on this thread.
 */
const char *prof_errmsg(void);

/* Forget the last error message (after recovering from an error). */
void prof_errmsg_clear(void);

enum prof_log_level {
	PROF_LOG_WARN,		/* a recovered problem, worded "..., skipping" */
	PROF_LOG_INFO,
	PROF_LOG_DEBUG,
};

typedef void (*prof_log_fn)(enum prof_log_level level, const char *msg, void *ctx);

/*
 * Route the library's log lines (no trailing newline) to FN, or drop them
 * when FN is NULL (the default).  Messages above MAX_LEVEL are not even
 * formatted.  Not thread-safe: call it before using the library.
 */
void prof_set_log_fn(prof_log_fn fn, enum prof_log_level max_level, void *ctx);

/* ---- the data model shared by spool writer and reader ------------------ */

/*
 * Ids are assigned by the writer in order of definition, from 1; 0 means
 * "none".  A record may only refer to ids defined before it.
 */

/* A process, identified by its spool id: pids are reused, spool ids not. */
struct prof_process {
	uint32_t id;
	int32_t pid;
	int32_t ppid;
	uint64_t start_time_ns;	/* when it started, ns since boot (/proc/PID/stat), 0 unknown;
				 * with pid, it names the process across pid reuse */
	uint64_t time_ns;	/* when the recording first saw it */
	const char *comm;	/* "" when unknown; NUL-terminated, no NUL inside */
	const char *exe;	/* "" when unknown */
	bool exited;		/* reader: an exit record was seen */
};

struct prof_thread {
	uint32_t id;
	uint32_t process;	/* spool id of its process */
	int32_t tid;
	uint64_t time_ns;
	const char *name;	/* current name (renames replace it) */
	bool exited;
};

enum prof_module_flags {
	PROF_MODULE_DELETED = 1u << 0,	/* the mapped file was deleted or replaced */
	PROF_MODULE_ANON = 1u << 1,	/* no backing file (JIT, heap) */
	PROF_MODULE_VDSO = 1u << 2,	/* [vdso] */
	PROF_MODULE_KERNEL = 1u << 3,	/* the kernel or a kernel module */
	PROF_MODULE_EXEC = 1u << 4,	/* the main executable of its process */
};

#define PROF_BUILD_ID_MAX 64

/* One mapping of a file (or anonymous memory) into a process. */
struct prof_module {
	uint32_t id;
	uint32_t process;	/* 0: global (kernel) */
	uint64_t time_ns;
	uint64_t start;		/* mapped address range [start, end) */
	uint64_t end;
	uint64_t pgoff;		/* file offset of start */
	uint32_t flags;		/* enum prof_module_flags */
	uint32_t dev_major;
	uint32_t dev_minor;
	uint64_t inode;
	uint8_t build_id_len;	/* 0: unknown */
	uint8_t build_id[PROF_BUILD_ID_MAX];
	const char *path;
	bool retired;		/* reader: unmapped, or its process exec'd or exited */
};

enum prof_frame_kind {
	PROF_FRAME_USER = 1,	/* module + file-relative pc */
	PROF_FRAME_KERNEL = 2,	/* absolute kernel address */
	PROF_FRAME_ANON = 3,	/* process + absolute address (JIT, perf map) */
	PROF_FRAME_TRUNCATED = 4, /* the unwind stopped here; addr is the cause */
	PROF_FRAME_STATE = 5,	/* the leaf of an off-CPU stack: addr is the
				 * enum prof_offcpu_state the thread was in */
};

/* Why an unwind stopped early; also the addr of a PROF_FRAME_TRUNCATED frame. */
enum prof_unwind_error {
	PROF_UNWIND_STACK_COPY = 1,	/* ran past the copied user stack */
	PROF_UNWIND_NO_CFI = 2,		/* no unwind info for a pc */
	PROF_UNWIND_UNMAPPED = 3,	/* a pc outside every known module */
	PROF_UNWIND_NO_REGS = 4,	/* sample without user registers */
	PROF_UNWIND_NO_STACK = 5,	/* sample without a stack copy */
	PROF_UNWIND_DEPTH = 6,		/* hit the frame limit */
	PROF_UNWIND_OTHER = 7,		/* any other unwinder failure */
	PROF_UNWIND__COUNT
};

/* The name of an unwind error cause ("stack-copy", ...), or "unknown". */
const char *prof_unwind_error_name(unsigned cause);

/*
 * How a user frame was unwound when not by the compiled CFI tables: frame
 * pointers where no CFI covers the pc (in anonymous code, a JIT's; in a
 * file without CFI for it), or libdwfl for a CFI row the tables do not
 * encode (a CFA expression, a signal frame).
 */
enum prof_unwind_fallback {
	PROF_FALLBACK_FP_ANON = 1,	/* frame pointers through anonymous code */
	PROF_FALLBACK_FP_NO_CFI = 2,	/* frame pointers where a file has no CFI */
	PROF_FALLBACK_DWFL = 3,		/* libdwfl, for a row the tables do not encode */
	PROF_FALLBACK__COUNT
};

/* The name of a fallback ("fp-anon", "fp-no-cfi", "libdwfl"), or "unknown". */
const char *prof_unwind_fallback_name(unsigned fallback);

/*
 * A frame.  For PROF_FRAME_USER, addr is the file-relative pc: the file
 * offset the pc maps to (pc - module start + module pgoff), already rewound
 * to the call site for return addresses, so a symbolizer looks it up as is
 * (through the ELF program headers: vaddr = addr - p_offset + p_vaddr of the
 * PT_LOAD segment holding it).  For KERNEL and ANON frames addr is the
 * absolute address.
 */
struct prof_frame {
	uint32_t id;
	uint8_t kind;		/* enum prof_frame_kind */
	uint32_t ref;		/* USER: module id; ANON: process id; else 0 */
	uint64_t addr;
};

/* A node of the stack prefix tree: FRAME called from the stack PARENT. */
struct prof_stack_node {
	uint32_t parent;	/* 0: FRAME is the outermost frame */
	uint32_t frame;
};

struct prof_sample {
	uint64_t time_ns;	/* CLOCK_MONOTONIC */
	uint32_t thread;	/* thread id */
	uint32_t stack;		/* leaf stack node id; 0: empty stack */
	uint64_t period;	/* weight: the event's period (ns for clocks) */
	uint32_t cpu;
};

/* Why a thread was off its CPU: the state its switch-out left it in. */
enum prof_offcpu_state {
	PROF_OFFCPU_STATE_BLOCKED = 1,	/* it waited for something: I/O, a lock, a sleep,
					 * a child, a page fault */
	PROF_OFFCPU_STATE_RUNNABLE = 2,	/* it was ready to run and waited for a CPU
					 * (preempted, or it yielded) */
	PROF_OFFCPU_STATE__COUNT
};

/* The name of a state ("blocked", "runnable"), or "unknown". */
const char *prof_offcpu_state_name(unsigned state);

/* What ended an off-CPU interval. */
enum prof_offcpu_end {
	PROF_OFFCPU_END_SWITCH_IN = 1,	/* the thread ran again */
	PROF_OFFCPU_END_RAN = 2,	/* it was seen running, its switch-in lost: a
					 * sample, or its next switch-out */
	PROF_OFFCPU_END_EXIT = 3,	/* it exited */
	PROF_OFFCPU_END_RECORDING = 4,	/* the recording ended while it was still off */
	PROF_OFFCPU_END__COUNT
};

/*
 * A time a thread spent off its CPU: from its switch-out to what ended it.
 * Its stack is the one of the switch-out (the kernel's frames too when
 * they were recorded), and ends with a PROF_FRAME_STATE frame that says
 * STATE: a stack id 0 would mean even that is unknown.  A stack that is
 * just that frame was not sampled (the switch-out sample was lost).
 */
struct prof_offcpu {
	uint64_t time_ns;	/* the switch-out, CLOCK_MONOTONIC */
	uint64_t duration_ns;
	uint32_t thread;
	uint32_t stack;		/* leaf stack node id: the state frame */
	uint32_t user_stack;	/* the same without the kernel's frames (the state
				 * frame called from the user leaf), for reports
				 * that leave them out; = stack when it has none */
	uint32_t cpu;		/* the CPU it left */
	uint8_t state;		/* enum prof_offcpu_state */
	uint8_t end;		/* enum prof_offcpu_end */
};

enum prof_lost_kind {
	PROF_LOST_SAMPLES = 1,	/* PERF_RECORD_LOST_SAMPLES / ring overflow */
	PROF_LOST_RECORDS = 2,	/* any record, kind unknown (PERF_RECORD_LOST) */
	PROF_LOST_MMAP = 3,
	PROF_LOST_COMM = 4,
	PROF_LOST_FORK = 5,
	PROF_LOST_EXIT = 6,
	PROF_LOST_SWITCH_SAMPLES = 7,	/* switch-out samples (--off-cpu): stacks lost */
	PROF_LOST_SWITCH_RECORDS = 8,	/* switch records or switch-out samples, which
					 * of the two unknown: intervals lost */
	PROF_LOST__COUNT
};

/* The name of a lost kind ("samples", ...), or "unknown". */
const char *prof_lost_kind_name(unsigned kind);

struct prof_lost {
	uint64_t time_ns;
	uint8_t kind;		/* enum prof_lost_kind */
	uint64_t count;
};

enum prof_symbol_scope {
	PROF_SYMBOL_KERNEL = 1,	/* scope_id 0; absolute kernel addresses */
	PROF_SYMBOL_PROCESS = 2,	/* scope_id: process id; absolute addresses */
	PROF_SYMBOL_MODULE = 3,	/* scope_id: module id; file-relative addresses */
};

/* A name captured at record time because its source is ephemeral. */
struct prof_symbol {
	uint8_t scope;		/* enum prof_symbol_scope */
	uint32_t scope_id;
	uint64_t start;
	uint64_t size;
	const char *name;
};

enum prof_meta_flags {
	PROF_META_KERNEL = 1u << 0,	/* kernel frames were recorded */
	PROF_META_INHERIT = 1u << 1,	/* children were followed */
	PROF_META_ATTACHED = 1u << 2,	/* attached to running pids (else launched) */
	PROF_META_LOCKED = 1u << 3,	/* the writer holds an exclusive flock(2) on the file
					 * until it closes it: a reader that can take a
					 * shared lock knows the writing has ended */
	PROF_META_OFFCPU = 1u << 4,	/* off-CPU intervals were recorded (then the
					 * spool is format version 2.0) */
};

/* What a recording was: the first record of every spool. */
struct prof_meta {
	size_t argc;			/* command line of a launched target */
	const char *const *argv;
	size_t npids;			/* pids of an attach */
	const int32_t *pids;
	uint64_t wall_start_ns;		/* CLOCK_REALTIME at start */
	uint64_t mono_start_ns;		/* CLOCK_MONOTONIC at start (sample clock) */
	uint64_t time_unit_ns;		/* resolution of event times; 0: 1000 (1 us) */
	const char *event;		/* "cpu-clock", ... */
	uint64_t freq_hz;		/* 0: fixed period */
	uint64_t period;		/* sample period when freq_hz is 0 */
	uint64_t stack_bytes;		/* user stack copied per sample */
	const char *hostname;
	const char *kernel_release;
	const char *arch;
	uint64_t page_size;
	const char *prof_version;
	uint32_t flags;			/* enum prof_meta_flags */
};

/*
 * The final counters of a recording, written as the spool trailer.  A
 * spool with a trailer finished; one without was cut short.
 */
struct prof_counters {
	uint64_t samples;		/* samples written */
	uint64_t sample_events;		/* samples the kernel delivered */
	uint64_t lost[PROF_LOST__COUNT];/* by enum prof_lost_kind; [0] unused */
	uint64_t empty_stacks;		/* samples with no frame at all */
	uint64_t truncated_stacks;	/* samples whose unwind stopped early */
	uint64_t unwind_errors[PROF_UNWIND__COUNT]; /* by cause; [0] unused */
	uint64_t processes;
	uint64_t threads;
	uint64_t lifecycle_gaps;	/* losses that made process state uncertain */
	uint64_t reconciliations;	/* /proc sweeps after such losses */
	uint64_t mono_end_ns;		/* CLOCK_MONOTONIC at the end */
	uint64_t wall_end_ns;		/* CLOCK_REALTIME at the end */
	uint64_t frames;		/* user frames unwound (0: not counted, older spools) */
	uint64_t fallback_frames[PROF_FALLBACK__COUNT]; /* of those, by fallback; [0] unused */
	uint64_t offcpu_intervals;	/* off-CPU intervals written */
	uint64_t offcpu_ns;		/* their time in all */
	uint64_t offcpu_unsampled;	/* of those, without a stack (switch-out sample lost) */
	uint64_t offcpu_truncated;	/* of those, with a stack whose unwind stopped early */
	uint64_t switch_events;		/* switch-out samples the kernel delivered */
};

/* Sum of lost[] over every kind. */
uint64_t prof_counters_lost_total(const struct prof_counters *c);

/* ---- spool writer ------------------------------------------------------- */

/*
 * A caller-owned sink for spool bytes.  write() returns the bytes written
 * (short writes are retried) or a negative errno; flush() may be NULL.  The
 * writer never closes it.
 */
struct prof_sink {
	ssize_t (*write)(void *ctx, const void *buf, size_t len);
	int (*flush)(void *ctx);
	void *ctx;
};

struct prof_spool_writer_opts {
	size_t sz;			/* sizeof(struct prof_spool_writer_opts) */
	size_t block_bytes;		/* 0: 64 KiB of records per block */
	bool no_compress;		/* store blocks without deflate */
	int compress_level;		/* 0: zlib level 1 (fast) */
};

struct prof_spool_writer;

/*
 * Create a spool at PATH (truncating what was there) and write its header
 * and META.  Returns 0 and *ret, or -errno (opts invalid: -EINVAL; file:
 * open(2)/write(2) errors).
 */
int prof_spool_writer_open(const char *path, const struct prof_meta *meta,
			   const struct prof_spool_writer_opts *opts,
			   struct prof_spool_writer **ret);

/* The same over a caller-owned sink (copied; ctx must outlive the writer). */
int prof_spool_writer_open_sink(const struct prof_sink *sink, const struct prof_meta *meta,
				const struct prof_spool_writer_opts *opts,
				struct prof_spool_writer **ret);

/*
 * Definitions.  Each returns the new id (>= 1) or -errno: -EINVAL when a
 * reference is not a defined id or a field is out of range, -ENOSPC when an
 * id space is exhausted, or an error of the sink.  id/exited/retired fields
 * of the argument are ignored.
 */
int64_t prof_spool_writer_add_process(struct prof_spool_writer *w, const struct prof_process *p);
int64_t prof_spool_writer_add_thread(struct prof_spool_writer *w, const struct prof_thread *t);
int64_t prof_spool_writer_add_module(struct prof_spool_writer *w, const struct prof_module *m);

/* Interned: the same frame, or the same (parent, frame) node, keeps its id. */
int64_t prof_spool_writer_intern_frame(struct prof_spool_writer *w, const struct prof_frame *f);
int64_t prof_spool_writer_intern_stack(struct prof_spool_writer *w, uint32_t parent, uint32_t frame);

/*
 * Intern a whole stack given leaf first (frames[0] is the leaf); returns the
 * leaf node id, 0 for an empty stack, or -errno.
 */
int64_t prof_spool_writer_intern_frames(struct prof_spool_writer *w, const uint32_t *frames, size_t n);

/* Events.  0 or -errno (-EINVAL for an undefined id). */
int prof_spool_writer_add_sample(struct prof_spool_writer *w, const struct prof_sample *s);
/* An off-CPU interval: only in a spool whose metadata says PROF_META_OFFCPU. */
int prof_spool_writer_add_offcpu(struct prof_spool_writer *w, const struct prof_offcpu *o);
int prof_spool_writer_rename_thread(struct prof_spool_writer *w, uint32_t thread, uint64_t time_ns,
				    const char *name);
int prof_spool_writer_add_exec(struct prof_spool_writer *w, uint32_t process, uint64_t time_ns,
			       const char *comm, const char *exe);
int prof_spool_writer_add_process_exit(struct prof_spool_writer *w, uint32_t process,
				       uint64_t time_ns);
int prof_spool_writer_add_thread_exit(struct prof_spool_writer *w, uint32_t thread, uint64_t time_ns);
int prof_spool_writer_retire_module(struct prof_spool_writer *w, uint32_t module, uint64_t time_ns);
int prof_spool_writer_add_lost(struct prof_spool_writer *w, const struct prof_lost *l);
int prof_spool_writer_add_symbol(struct prof_spool_writer *w, const struct prof_symbol *s);

/* Close the current block and hand it to the sink (and fsync-free flush). */
int prof_spool_writer_flush(struct prof_spool_writer *w);

/* Bytes handed to the sink so far, and records still buffered. */
uint64_t prof_spool_writer_bytes(const struct prof_spool_writer *w);

/* Write the trailer with COUNTERS and flush: the spool is then finished. */
int prof_spool_writer_finish(struct prof_spool_writer *w, const struct prof_counters *counters);

/*
 * Flush what is buffered (without a trailer unless finish was called), close
 * the file if the writer opened it, and free W.  Returns the first error of
 * the flush or close; W is freed either way.
 */
int prof_spool_writer_close(struct prof_spool_writer *w);

/* ---- spool reader ------------------------------------------------------- */

enum prof_record_type {
	PROF_RECORD_PROCESS = 1,
	PROF_RECORD_THREAD,
	PROF_RECORD_THREAD_NAME,	/* thread: the renamed thread (name is the new one) */
	PROF_RECORD_EXEC,		/* process: after exec (comm, exe updated) */
	PROF_RECORD_PROCESS_EXIT,
	PROF_RECORD_THREAD_EXIT,
	PROF_RECORD_MODULE,
	PROF_RECORD_MODULE_RETIRE,
	PROF_RECORD_FRAME,
	PROF_RECORD_STACK,
	PROF_RECORD_SAMPLE,
	PROF_RECORD_LOST,
	PROF_RECORD_SYMBOL,
	PROF_RECORD_TRAILER,
	PROF_RECORD_OFFCPU,
};

/* One decoded record.  Pointers are valid until the next prof_spool_next(). */
struct prof_record {
	enum prof_record_type type;
	uint64_t time_ns;	/* for timed events; 0 otherwise */
	uint32_t id;		/* the defined or affected id */
	union {
		const struct prof_process *process;	/* PROCESS, EXEC, PROCESS_EXIT */
		const struct prof_thread *thread;	/* THREAD, THREAD_NAME, THREAD_EXIT */
		const struct prof_module *module;	/* MODULE, MODULE_RETIRE */
		const struct prof_frame *frame;
		const struct prof_stack_node *stack;
		const struct prof_sample *sample;
		const struct prof_offcpu *offcpu;
		const struct prof_lost *lost;
		const struct prof_symbol *symbol;
		const struct prof_counters *counters;	/* TRAILER */
	};
};

struct prof_spool;

/*
 * Open the spool at PATH and read its header and META.  Errors: open(2)
 * errors; -EBADMSG when it is not a spool or META is corrupt; -ENOTSUP for
 * a version this library does not read.
 */
int prof_spool_open(const char *path, struct prof_spool **ret);

/* The same over a file descriptor the reader dups (the caller keeps FD). */
int prof_spool_open_fd(int fd, const char *name, struct prof_spool **ret);

/*
 * The N spools at PATHS read as one recording (the files of prof record
 * --switch-output, say), in the order their recordings started: a process
 * of one file is the same as one of a file before when its pid and start
 * time match, its threads when their tids do, and so on for modules,
 * frames and stack nodes, so that ids (and the stacks they count) are the
 * same across files, and a definition is handed out once.  Times run on
 * across the files; the metadata is the first file's, the counters the sum
 * of the trailers (once the last file's was read); a file before the last
 * that stops short of its trailer is read as far as it goes, and the
 * status says so.  N == 1 is prof_spool_open().  Errors: those of
 * prof_spool_open() for any file, -EINVAL for a file given twice.
 */
int prof_spool_open_many(const char *const *paths, size_t n, struct prof_spool **ret);

/*
 * Decode the next record.  Returns 1 with *ret filled, 0 when no complete
 * block is left to read now (the end, a cut, or a stop: see
 * prof_spool_status()), or -ENOMEM.  A corrupt block is never an error
 * here: the reader stops before it and says why in the status.  Calling
 * again after 0 picks up blocks appended since (what tail needs).
 */
int prof_spool_next(struct prof_spool *sp, struct prof_record *ret);

enum prof_spool_state {
	PROF_SPOOL_STATE_READING,	/* more may come: the last call hit the end of the file */
	PROF_SPOOL_STATE_FINISHED,	/* the trailer was read */
	PROF_SPOOL_STATE_CUT,		/* an incomplete block at the end (no trailer yet) */
	PROF_SPOOL_STATE_CORRUPT,	/* stopped at an invalid block; see reason */
};

struct prof_spool_status {
	enum prof_spool_state state;
	uint64_t blocks;	/* complete, valid blocks consumed */
	uint64_t offset;	/* file offset after the last consumed block */
	uint64_t file_size;	/* size seen at the last read */
	const char *reason;	/* CUT/CORRUPT: "block 3 at offset 4096: crc mismatch" */
};

void prof_spool_status(const struct prof_spool *sp, struct prof_spool_status *ret);

/*
 * Whether a recorder still writes the spool: 1 yes, 0 no (it finished,
 * or was killed), -ENOTSUP when the spool cannot tell (its writer did not
 * lock it: no PROF_META_LOCKED).
 */
int prof_spool_has_writer(const struct prof_spool *sp);

/* The recording's metadata (lent for the reader's lifetime). */
const struct prof_meta *prof_spool_meta(const struct prof_spool *sp);

/* The trailer's counters, or NULL before the trailer was read. */
const struct prof_counters *prof_spool_counters(const struct prof_spool *sp);

/* Number of each definition read so far (valid ids are 1..count). */
struct prof_spool_counts {
	uint32_t processes, threads, modules, frames, stacks, symbols;
	uint64_t samples;
	uint64_t offcpu;		/* off-CPU intervals */
};
void prof_spool_counts(const struct prof_spool *sp, struct prof_spool_counts *ret);

/* Look up a definition by id; NULL for an id not (yet) defined. Lent. */
const struct prof_process *prof_spool_process(const struct prof_spool *sp, uint32_t id);
const struct prof_thread *prof_spool_thread(const struct prof_spool *sp, uint32_t id);
const struct prof_module *prof_spool_module(const struct prof_spool *sp, uint32_t id);
const struct prof_frame *prof_spool_frame(const struct prof_spool *sp, uint32_t id);
const struct prof_stack_node *prof_spool_stack(const struct prof_spool *sp, uint32_t id);
const struct prof_symbol *prof_spool_symbol(const struct prof_spool *sp, uint32_t index);

/* Free the reader and close its file. */
void prof_spool_close(struct prof_spool *sp);

/* ---- symbolization and reports ----------------------------------------- */

#include <stdio.h>	/* FILE, for prof_report_write() */

/*
 * A frame as people read it.  FUNCTION is a symbol name when FOUND, else a
 * stand-in that still tells frames apart: "ladder+0x1234" (module basename
 * and file offset) for a user frame without a symbol, "0xffffffff81000010"
 * for a kernel or anonymous frame, "[truncated: stack-copy]" for where an
 * unwind stopped (prof_unwind_error_name() of its cause).  C++ and Rust
 * names are demangled unless the symbolizer was told not to.  MODULE is
 * the basename of the module's path, "[kernel]", "[anon]", or "" for a
 * truncation marker.  Where the module's debug info was found, one spool
 * frame may stand for several of these: see
 * prof_symbolizer_frame_inlines().  Strings are lent by the symbolizer.
 */
struct prof_resolved_frame {
	const char *function;
	const char *module;
	uint64_t offset;	/* how far into the symbol the address lies; 0 without
				 * one, and for inlined frames */
	bool found;		/* FUNCTION is a symbol name (or a DWARF one) */
	bool inlined;		/* a function inlined into the frame before it */
	uint32_t line;		/* source line, 0 unknown: of the address in the innermost
				 * frame of a chain, of the call to the next frame in the
				 * others */
	const char *file;	/* the source file as shown: its path under the compilation
				 * directory when short, else its basename; NULL unknown */
	const char *file_path;	/* the source file's path as the debug info gives it (a
				 * relative one is relative to the compilation
				 * directory); NULL unknown */
};

struct prof_symbolizer;

struct prof_symbolizer_opts {
	size_t sz;			/* sizeof(struct prof_symbolizer_opts) */
	bool no_demangle;		/* names as the symbol tables spell them */
	const char *debug_dirs;		/* colon-separated directories laid out as
					 * /usr/lib/debug, searched before it; NULL none */
	bool debuginfod;		/* ask the servers of DEBUGINFOD_URLS, by build-id,
					 * for debug info not found on this machine */
	unsigned debuginfod_timeout_s;	/* the most one such lookup may take; 0: the
					 * DEBUGINFOD_TIMEOUT variable, else 30 */
};

/*
 * A symbolizer over the definitions of SP (which must outlive it).  It
 * reads SP's tables at each call, so it also sees modules, frames and
 * symbol records read after its creation.  Names come, in this order, from
 * the spool's symbol records of the frame's scope (kernel, process or
 * module: they win, being what the recording saw), then for user frames
 * from the ELF file at the module's path (.symtab, else .dynsym; only
 * absolute paths: not [vdso] nor anonymous modules).  ELF files are opened
 * on first need, once per (path, build-id).  A file that cannot
 * be read, or whose build-id differs from the module record's, is reported
 * once through the log callback at PROF_LOG_WARN (its names are still
 * used on a mismatch).
 *
 * Debug info is looked for as gdb does, once per file: in the file itself;
 * as DIR/.build-id/xx/yyyy.debug (the file's build-id, else the recorded
 * one) for each of OPTS' debug_dirs, then /usr/lib/debug; through the
 * file's .gnu_debuglink (its CRC checked) beside the file, in a .debug/
 * directory beside it, then as DIR/<the file's directory>/NAME for the
 * same directories; and last, if OPTS asks, from debuginfod.  Where found,
 * the DWARF adds the functions inlined at each address and source lines,
 * and a debug file's .symtab stands in for a stripped file's.  Where each
 * file's debug info came from is logged at PROF_LOG_DEBUG; a debuginfod
 * lookup that fails or runs out of time is logged at PROF_LOG_WARN, and
 * debuginfod is not asked again.
 *
 * OPTS NULL means defaults (demangle, no extra directories, no debuginfod).
 * Returns 0 and *ret, or -EINVAL (SP NULL; debuginfod asked for without
 * DEBUGINFOD_URLS), -ENOTSUP (debuginfod asked for, but prof was built
 * without libdebuginfod), -ENOMEM.
 */
int prof_symbolizer_new_opts(const struct prof_spool *sp, const struct prof_symbolizer_opts *opts,
			     struct prof_symbolizer **ret);

/* prof_symbolizer_new_opts() with the default options. */
int prof_symbolizer_new(const struct prof_spool *sp, struct prof_symbolizer **ret);

/*
 * Resolve the frame with spool id FRAME into the frames it stands for,
 * outermost first: *RET_N (at least 1) frames at *RET, the function that
 * holds the address, then each function inlined there into the one before
 * it (inlined set), the innermost last, as a root-to-leaf stack reads.
 * Each frame is resolved once and then served from a cache (reset when new
 * symbol records were read).  The array and its strings stay valid until
 * prof_symbolizer_free() or prof_spool_close(), whichever comes first.
 * Returns 0, or -EINVAL for an id that is not a defined frame, -ENOMEM.  A
 * missing or damaged file is not an error: the frame gets a stand-in name
 * (and a warning is logged).
 */
int prof_symbolizer_frame_inlines(struct prof_symbolizer *s, uint32_t frame,
				  const struct prof_resolved_frame **ret, size_t *ret_n);

/*
 * The outermost frame of prof_symbolizer_frame_inlines(): the function
 * holding the address, copied to *RET.  Returns as it does.
 */
int prof_symbolizer_frame(struct prof_symbolizer *s, uint32_t frame,
			  struct prof_resolved_frame *ret);

/* Close the ELF files and free S. */
void prof_symbolizer_free(struct prof_symbolizer *s);

/*
 * What a report weighs.  CPU samples say where threads ran, off-CPU
 * intervals (prof record --off-cpu) where they waited; wall time is both,
 * so that each thread weighs its lifetime in the recording.
 */
enum prof_weight {
	PROF_WEIGHT_CPU = 0,	/* CPU samples, one each */
	PROF_WEIGHT_OFFCPU,	/* off-CPU intervals, each its duration in ns */
	PROF_WEIGHT_WALL,	/* both: a CPU sample its period (a clock event's,
				 * in ns), an interval its duration */
	PROF_WEIGHT__COUNT
};

/* The name of a weight ("cpu", "off-cpu", "wall"), or NULL. */
const char *prof_weight_name(unsigned weight);

/* The weight named NAME, or -EINVAL (with the message set). */
int prof_weight_parse(const char *name);

/*
 * Whether SP can be weighed by W: 0, or -EINVAL with the message saying
 * why not (off-CPU or wall time of a spool recorded without --off-cpu;
 * wall time of one whose event is not a clock, whose periods are not ns).
 */
int prof_spool_check_weight(const struct prof_spool *sp, enum prof_weight w);

/*
 * A profile: samples (or time, when weighed so) counted per leaf stack
 * node, the input of every report.  It holds counts only (no names), so
 * it is cheap to fill while reading a spool.
 */
struct prof_profile;

/* An empty profile.  0 and *ret, or -ENOMEM. */
int prof_profile_new(struct prof_profile **ret);

/* What a profile counts samples by, besides their stack. */
enum prof_group_by {
	PROF_GROUP_NONE = 0,	/* one profile of every sample */
	PROF_GROUP_THREAD,	/* per thread: its name at the sample and its tid */
	PROF_GROUP_PROCESS,	/* per process: its comm at the sample and its pid */
	PROF_GROUP__COUNT
};

/*
 * Count samples per group BY as well: per (thread name, tid) or (process
 * comm, pid), the name being the one current at each sample, so that a
 * thread renamed (or a process that exec'd) while recorded counts under
 * each of its names.  Threads or processes with the same name and id make
 * one group.  Memory grows with groups times the distinct stacks of each,
 * not with samples.  Call it before counting any sample: 0, or -EBUSY
 * after, -EINVAL for an unknown BY.
 */
int prof_profile_group_by(struct prof_profile *p, enum prof_group_by by);

/*
 * Weigh what P counts by W (a new profile weighs PROF_WEIGHT_CPU): CPU
 * samples count with weight cpu (one each) and wall (their period), off-CPU
 * intervals with off-cpu and wall (their duration); what the weight leaves
 * out is not counted.  Call it before counting anything: 0, or -EBUSY
 * after, -EINVAL for an unknown W.
 */
int prof_profile_weigh(struct prof_profile *p, enum prof_weight w);

/* What P weighs by. */
enum prof_weight prof_profile_weight(const struct prof_profile *p);

/*
 * Count the sample S: one more for its stack, a stack id of the spool the
 * report will read (0: the empty stack).  0 or -ENOMEM; -EINVAL for a
 * grouped profile, which needs the names of prof_profile_add_spool_sample().
 */
int prof_profile_add_sample(struct prof_profile *p, const struct prof_sample *s);

/*
 * Count the sample S just read from SP, in its group if P is grouped: the
 * name of its thread (or process) is the one SP holds now, so call it as
 * SP reads S.  0, or -EINVAL (a thread or process SP does not define),
 * -ENOMEM.
 */
int prof_profile_add_spool_sample(struct prof_profile *p, const struct prof_spool *sp,
				  const struct prof_sample *s);

/*
 * The same for the off-CPU interval O just read from SP, on its stack
 * STACK (O's own, or as a filter cut it).  0, or the same errors.
 */
int prof_profile_add_spool_offcpu(struct prof_profile *p, const struct prof_spool *sp,
				  const struct prof_offcpu *o, uint32_t stack);

/*
 * Read every record of SP that is left (prof_spool_next() until it returns
 * 0) and count its samples and intervals, with
 * prof_profile_add_spool_sample() and prof_profile_add_spool_offcpu().  0 when
 * the spool has nothing more to give now (see prof_spool_status() for
 * why), or -ENOMEM, -EINVAL.
 */
int prof_profile_read(struct prof_profile *p, struct prof_spool *sp);

/*
 * The samples and intervals counted so far, their weight in all (samples
 * for PROF_WEIGHT_CPU, else ns), and the times of the first and last (0 if
 * none).
 */
uint64_t prof_profile_samples(const struct prof_profile *p);
uint64_t prof_profile_total(const struct prof_profile *p);
uint64_t prof_profile_first_ns(const struct prof_profile *p);
uint64_t prof_profile_last_ns(const struct prof_profile *p);

void prof_profile_free(struct prof_profile *p);

/*
 * A filter: which samples a report keeps, decided as the spool is read, so
 * that memory grows with the distinct stacks kept, not with the samples.
 */
struct prof_filter;

struct prof_filter_opts {
	size_t sz;			/* sizeof(struct prof_filter_opts) */
	const char *pids;		/* "PID,PID...": only these processes; NULL any */
	const char *tids;		/* "TID,TID...": only these threads; NULL any */
	const char *comms;		/* "NAME,NAME...": only threads so named, or of a
					 * process whose comm is so named (at the sample) */
	const char *time;		/* "START,END": seconds from the recording's start
					 * (its metadata's mono_start_ns, else the first
					 * sample), both included; either may be empty */
	bool no_kernel;			/* cut the kernel frames off each stack (a stack of
					 * kernel frames only becomes the empty stack) */
	const char *focus;		/* POSIX extended regex: keep only the stacks with a
					 * function (inlined ones included) it matches */
	const char *exclude;		/* the same: drop the stacks with such a function */
	enum prof_weight weight;	/* what is read: CPU samples (cpu), off-CPU
					 * intervals (off-cpu) or both (wall); the
					 * reports of a filter weigh so */
};

/*
 * A filter of OPTS (NULL: keeps everything).  0 and *ret, or -EINVAL (a
 * list, range or regex that does not parse; the message says which),
 * -ENOMEM.
 */
int prof_filter_new(const struct prof_filter_opts *opts, struct prof_filter **ret);

/* Whether F (NULL: none) leaves out anything at all. */
bool prof_filter_active(const struct prof_filter *f);

/*
 * Whether sample S, just read from SP, is kept: 1 and *RET_STACK (its
 * stack, less the kernel frames with no_kernel), 0 if not, or -errno (a
 * symbolizer error, -EINVAL for a stack SP does not define, -ENOMEM).
 * SYM names the frames for focus and exclude.
 */
int prof_filter_sample(struct prof_filter *f, const struct prof_spool *sp,
		       struct prof_symbolizer *sym, const struct prof_sample *s,
		       uint32_t *ret_stack);

/* The same for the off-CPU interval O: 1 and *RET_STACK, 0, or -errno. */
int prof_filter_offcpu(struct prof_filter *f, const struct prof_spool *sp,
		       struct prof_symbolizer *sym, const struct prof_offcpu *o,
		       uint32_t *ret_stack);

/* What F (NULL: none, which reads CPU samples) weighs. */
enum prof_weight prof_filter_weight(const struct prof_filter *f);

void prof_filter_free(struct prof_filter *f);

/*
 * prof_profile_read() keeping only the samples (and intervals) F keeps (F
 * NULL: all), with their stacks as F gives them, weighed as F weighs: a
 * profile that weighs otherwise, and has counted nothing yet, is made to
 * (-EBUSY if it has).  Returns as prof_profile_read() does.
 */
int prof_profile_read_filtered(struct prof_profile *p, struct prof_spool *sp,
			       struct prof_filter *f, struct prof_symbolizer *sym);

enum prof_report_format {
	PROF_REPORT_TOP = 0,	/* header, then functions by self samples */
	PROF_REPORT_TREE,	/* header, then the call tree from the roots */
	PROF_REPORT_FOLDED,	/* "root;...;leaf COUNT" lines, no header */
	PROF_REPORT_JSON,	/* one JSON object, the schema of prof-report(1) */
	PROF_REPORT_PERF_SCRIPT,/* each sample as `perf script` prints it: see
				 * prof_report_perf_script(), not prof_report_write() */
	PROF_REPORT_PPROF,	/* gzip'd profile.proto: prof_report_pprof() */
	PROF_REPORT_SPEEDSCOPE,	/* speedscope's JSON, a profile per group: needs a
				 * profile grouped by thread or process */
	PROF_REPORT_SVG,	/* a flame graph: one interactive SVG file */
	PROF_REPORT__COUNT
};

/* The name of a format ("top", "tree", "folded", "json", "perf-script", "pprof",
 * "speedscope", "svg"), or NULL. */
const char *prof_report_format_name(unsigned format);

/* The format named NAME, or -EINVAL (with the message set). */
int prof_report_format_parse(const char *name);

struct prof_report_opts {
	size_t sz;			/* sizeof(struct prof_report_opts) */
	enum prof_report_format format;
	const char *title;		/* header line "# prof report of TITLE"; NULL: none */
	long limit;			/* top: rows shown, 0: 30; json: functions
					 * listed, 0: all; < 0: all */
	double min_percent;		/* top and json: hide functions, tree and svg:
					 * nodes (and what is under them), whose
					 * total is below this percent of the
					 * samples; 0 hides nothing (prof report's
					 * default is 0.5 for top and tree); folded
					 * ignores both this and limit */
	bool lines;			/* top and tree: a function at each source line
					 * it was seen at is an entry of its own,
					 * shown "NAME (FILE:LINE)"; folded ignores it */
	bool inverted;			/* tree, folded and svg: each stack from its
					 * leaf out, so that the roots are the
					 * functions that ran and their children
					 * their callers (svg draws it as an
					 * icicle, roots at the top) */
};

/*
 * Write the report of profile P, recorded in SP, to OUT in the format of
 * OPTS (NULL: top, 30 rows, nothing hidden).  Top and tree begin with a
 * header of SP's metadata and counters; the function and module names
 * come from SYM.  Sample counts are exact: folded counts sum to the
 * profile's samples, and so do the top view's self counts, samples
 * without a stack being named "[empty stack]".
 *
 * A spool frame that SYM resolves into an inline chain is that many frames
 * (prof_symbolizer_frame_inlines()): top counts an inlined function as a
 * function of its own, its self samples going to the innermost, and top
 * and tree show it as "NAME [inlined]"; folded shows bare names, as
 * stackcollapse-perf.pl does.  With OPTS' lines, top and tree add
 * " (FILE:LINE)" to each function whose line is known.
 *
 * A grouped profile (prof_profile_group_by()) is reported group by group.
 * Top and tree print one section per group, most samples first, each
 * beginning "thread NAME (tid N): S samples (P%)" or "process COMM (pid
 * N): ...", then that group's view alone; every percent, and so
 * min_percent, is of all the profile's samples, and limit applies to each
 * section.  Folded prefixes each line with a root frame "NAME-TID" or
 * "COMM-PID" (spaces in the name become '_', as stackcollapse-perf.pl
 * --tid/--pid does; an empty name is "[unknown]"), lines sorted by it.
 *
 * Json (ungrouped P only) is one object of the schema of prof-report(1):
 * metadata, counters, warnings, functions and stacks.  Speedscope needs a
 * grouped P: a sampled profile per group.  Perf-script and pprof are not
 * written from a profile: see prof_report_perf_script() and
 * prof_report_pprof().
 *
 * Returns 0, or -EINVAL (bad opts, or a stack of P that SP does not
 * define), -ENOMEM, or the error of writing to OUT (-ENOSPC, -EPIPE, ...;
 * -EIO when unknown).
 */
int prof_report_write(FILE *out, const struct prof_spool *sp, const struct prof_profile *p,
		      struct prof_symbolizer *sym, const struct prof_report_opts *opts);

/*
 * Read every record of SP that is left and print each sample that F (NULL:
 * none) keeps as `perf script` does: "COMM PID/TID SEC.USEC: PERIOD
 * EVENT: ", then its frames leaf first, "\tADDR FUNCTION+0xOFF (MODULE)"
 * (the module's path, [kernel.kallsyms], or "inlined" for each function
 * of an inline chain but the outermost), then an empty line.  COMM is the
 * thread's name at the sample, spaces made '_'; SEC.USEC its
 * CLOCK_MONOTONIC time.  *RET_SAMPLES (if not NULL): the samples printed.
 * 0, or -errno as prof_filter_sample(), or the error of writing to OUT.
 */
int prof_report_perf_script(FILE *out, struct prof_spool *sp, struct prof_symbolizer *sym,
			    struct prof_filter *f, uint64_t *ret_samples);

/*
 * Read every record of SP that is left and write the samples F (NULL:
 * none) keeps as `go tool pprof` reads them: a gzip'd profile.proto with
 * sample types samples/count and cpu/nanoseconds (the sum of the samples'
 * periods), a sample per (thread, stack) labelled thread (its name at the
 * end), tid and pid, a location per spool frame (its inline chain as
 * lines, callee first), a function per name and source file, a mapping
 * per module (with its build-id).  Nothing is written when no sample is
 * kept.  *RET_SAMPLES (if not NULL): the samples kept.  0, or -errno as
 * prof_filter_sample(), -ENOMEM, or the error of writing to OUT.
 */
int prof_report_pprof(FILE *out, struct prof_spool *sp, struct prof_symbolizer *sym,
		      struct prof_filter *f, uint64_t *ret_samples);

/* One side of a diff: an ungrouped profile, read from SPOOL, named with SYM. */
struct prof_report_diff_side {
	const char *name;		/* the spool's file name, for json */
	const struct prof_spool *spool;
	const struct prof_profile *profile;
	struct prof_symbolizer *sym;
};

/*
 * Compare the profiles SIDES[0] (the base) and SIDES[1] (the new one).
 * Top: a table of every function (by name and module; an inlined one
 * apart), its self samples as a percent of each side's samples and the
 * change in points, biggest change (either way) first.  Json: the same as
 * an object (schema prof-report-diff/1, see prof-report(1)).  Folded: each
 * stack of either side, "STACK BASE NEW", by stack, as difffolded.pl
 * writes.  *RET_MAX_GROWTH (if not NULL): the largest change of a
 * function's (top, json) or stack's (folded) share, in points (0 if none
 * grew).  0, or -EINVAL (another format, a grouped profile), -ENOMEM, the
 * symbolizer's errors, or the error of writing to OUT.
 */
int prof_report_diff(FILE *out, const struct prof_report_diff_side sides[2],
		     enum prof_report_format format, double *ret_max_growth);

typedef void (*prof_report_warn_fn)(const char *msg, void *ctx);

/*
 * Call FN once for each reason the report of SP (read as far as it goes,
 * named PATH in the messages) may not be trustworthy: a spool without a
 * trailer, cut short or damaged; events lost; over 5% of stacks
 * incomplete.  MSG is one line without a newline, lent for the call.
 */
void prof_report_warnings(const struct prof_spool *sp, const char *path, prof_report_warn_fn fn,
			  void *ctx);

/* ---- recorder ----------------------------------------------------------- */

/*
 * Launching a program suspended before exec, so that its events exist
 * before its first instruction (enable_on_exec).
 */
struct prof_launched;

/*
 * Fork a child that waits before execvp(ARGV[0], ARGV).  Returns 0 and
 * *ret, or -errno (fork or pipe failure).
 */
int prof_launch_suspended(char *const argv[], struct prof_launched **ret);

pid_t prof_launched_pid(const struct prof_launched *l);

/*
 * Let the child exec.  0 once the exec succeeded; -ENOENT (status 127) or
 * another -errno such as -EACCES (status 126) when it failed, with the
 * message naming the command; the child is then reaped.
 */
int prof_launched_release(struct prof_launched *l);

/*
 * Reap the child: 1 with its wait status in *ret_status when it ended, 0
 * when it still runs (only without BLOCK), or -errno.
 */
int prof_launched_wait(struct prof_launched *l, bool block, int *ret_status);

/* Send SIG to the child while it has not been reaped.  0 or -errno. */
int prof_launched_kill(struct prof_launched *l, int sig);

/* Free L; a child never released is told to exit and reaped. */
void prof_launched_free(struct prof_launched *l);

enum prof_event_kind {
	PROF_EVENT_DEFAULT = 0,	/* cycles, else cpu-clock where there is no PMU */
	PROF_EVENT_CPU_CLOCK,
	PROF_EVENT_TASK_CLOCK,
	PROF_EVENT_CYCLES,
};

enum prof_attach_mode {
	PROF_ATTACH_MODE_STOP,	/* a running process: its threads are held
						 * still (ptrace, no signal) until enable() */
	PROF_ATTACH_MODE_ON_EXEC,		/* a launched child, before its exec */
};

enum prof_attach_outcome {
	PROF_ATTACH_OUTCOME_ATTACHED,
	PROF_ATTACH_OUTCOME_ALREADY,
	PROF_ATTACH_OUTCOME_EXITED,
};

enum prof_refresh_outcome {
	PROF_REFRESH_OUTCOME_DONE,
	PROF_REFRESH_OUTCOME_EXITED,
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
};

struct prof_poll_summary {
	uint64_t samples;		/* written during this call */
	uint64_t lost_events;
};

struct prof_recording_summary {
	uint64_t sample_events;		/* samples the kernel delivered */
	uint64_t samples;		/* samples written */
	uint64_t lost_events;
	uint64_t lifecycle_gaps;
	uint64_t reconciliations;
	uint64_t empty_stacks;
	uint64_t truncated_stacks;
	uint64_t unwind_errors[PROF_UNWIND__COUNT];
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
	uint64_t fallback_frames[PROF_FALLBACK__COUNT];	/* of those, by fallback */
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
	/* --off-cpu: switch-out samples delivered, the intervals written and their time */
	uint64_t switch_events;
	uint64_t offcpu_intervals;
	uint64_t offcpu_ns[PROF_OFFCPU_STATE__COUNT];	/* by state; [0] unused */
	uint64_t offcpu_unsampled, offcpu_truncated;
	uint64_t lost_switch_samples, lost_switch_records;	/* of lost_events */
	uint64_t offcpu_ring_bytes;	/* data bytes of each switch ring */
	uint32_t files;			/* spool files written (--switch-output), this one too */
	const char *spool_path;		/* the file being written, lent until the next poll */
};

struct prof_recorder;

/* The kernel's current maximum sample rate (perf_event_max_sample_rate). */
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
 * written as it is.  With PROF_ATTACH_MODE_STOP the threads of PID
 * stay held still until prof_recorder_enable().  Errors: -EINVAL (options:
 * a rate above the kernel maximum names the maximum), -EACCES/-EPERM (perf
 * or ptrace denied: the message names the gate), -ESRCH (no such process,
 * or it exited while attaching), file errors.
 */
int prof_recorder_attach(pid_t pid, const char *spool_path, enum prof_attach_mode mode,
			 const struct prof_recorder_opts *opts, struct prof_recorder **ret);

/* The same, writing the spool into a caller-owned sink. */
int prof_recorder_attach_sink(pid_t pid, const struct prof_sink *sink,
			      enum prof_attach_mode mode, const struct prof_recorder_opts *opts,
			      struct prof_recorder **ret);

/*
 * Enable sampling and let held processes run again (ON_EXEC events enable
 * themselves at the exec), and put the spool at its path.  The first
 * failure is returned; the processes are released in every case.
 * 0 or -errno.
 */
int prof_recorder_enable(struct prof_recorder *rec);

/*
 * Add the running process PID to the recording: its threads are held still
 * while its events open and its maps and threads are read, and released at
 * once if the recording is enabled (else by enable()).  *ret says whether
 * it was attached, already part of the recording, or exited meanwhile.
 * Errors: -EPERM (ptrace or perf refused; the message names the gate),
 * -EINVAL (mode), -errno.
 */
int prof_recorder_attach_process(struct prof_recorder *rec, pid_t pid,
				 enum prof_attach_mode mode, enum prof_attach_outcome *ret);

/*
 * Open events for threads of PID that no event covers (inheritance covers
 * threads created after attaching; this is for what it cannot see).
 * -EINVAL when PID is not part of the recording.
 */
int prof_recorder_refresh_threads(struct prof_recorder *rec, pid_t pid,
				  enum prof_refresh_outcome *ret);

/*
 * Wait at most TIMEOUT_MS for data, then drain every ring and process what
 * is ordered; the spool goes to its path if it was not there yet (the
 * launched command runs).  A signal ends the wait early (not an error).
 * 0 or -errno (unwinding never fails a poll; spool write errors do, and
 * keep failing the same way: nothing more is written after one).
 */
int prof_recorder_poll(struct prof_recorder *rec, int timeout_ms, struct prof_poll_summary *ret);

/*
 * Finish the current spool file (names, trailer) and go on in a new one,
 * of a recording made with switch_bytes, switch_ns or switch_signal: what
 * the new file's samples need is written into it again, so that each file
 * reads on its own.  0, or -EINVAL (not such a recording), or the errors
 * of writing the files (after which nothing more is written).
 */
int prof_recorder_switch_output(struct prof_recorder *rec);

/* Whether records are queued or a ring had data at the last poll. */
bool prof_recorder_has_pending_events(const struct prof_recorder *rec);

/* Drain everything, process it all, and flush the spool.  0 or -errno. */
int prof_recorder_flush(struct prof_recorder *rec);

void prof_recorder_summary(const struct prof_recorder *rec, struct prof_recording_summary *ret);

/* Liveness of recorded processes (exit records, then /proc).  0 or -errno. */
int prof_recorder_process_is_active(struct prof_recorder *rec, pid_t pid, bool *ret);
int prof_recorder_has_active_processes_except(struct prof_recorder *rec, pid_t pid, bool *ret);
int prof_recorder_active_process_count(struct prof_recorder *rec, size_t *ret);

/*
 * Disable, drain, write the names of the frames and the trailer, flush and
 * close (putting the spool at its path if it was not yet), then free REC.
 * Returns the first error; later, different ones are appended to
 * prof_errmsg() as context.  The counters go to *ret (may be NULL) in
 * every case; its samples and spool_bytes are what the file holds, which
 * after a write error is less than was sampled.
 */
int prof_recorder_close(struct prof_recorder *rec, struct prof_recording_summary *ret);

/*
 * Best-effort disable and free, without a trailer: a spool at its path
 * stays (read as one whose recorder was killed), one not yet there goes.
 */
void prof_recorder_free(struct prof_recorder *rec);

/* ---- following a spool while it is written ------------------------------ */

/*
 * A tail reads a spool while a writer still appends to it, block by block:
 * it hands out only complete, valid blocks (prof_spool_next()), in batches
 * of samples, and says at each poll whether the recording runs on, finished
 * or went wrong.  Memory stays bounded on an endless recording: the reader
 * keeps definitions (processes, threads, modules, frames, stacks), the tail
 * one batch and the distinct thread names, so both grow with what the
 * recording defines, not with its samples.  prof record closes a block at
 * least once a second, so a sample reaches a tail about a second after it
 * was taken at most.
 */
struct prof_tail;

enum prof_tail_state {
	PROF_TAIL_STATE_WAITING = 0,	/* no spool yet: the file does not exist, or has no
				 * complete header and metadata block yet */
	PROF_TAIL_STATE_RUNNING,	/* the last poll read up to the end of the file: more may come */
	PROF_TAIL_STATE_CUT,		/* the file ends inside a block: being written, or its
				 * writer died; more may come */
	PROF_TAIL_STATE_FINISHED,	/* the trailer was read: nothing more will come */
	PROF_TAIL_STATE_CORRUPT,	/* a block failed its checksums or decoding: stopped before it */
	PROF_TAIL_STATE_SHRUNK,	/* the file became shorter than what was read: stopped */
	PROF_TAIL_STATE_ABANDONED,	/* read to its end, without a trailer, and its writer is
				 * gone (killed): nothing more will come */
	PROF_TAIL__COUNT
};

/* The name of a state ("waiting", "running", "cut", ...), or "unknown". */
const char *prof_tail_state_name(unsigned state);

/* Whether a tail in STATE will never hand out anything more. */
bool prof_tail_state_is_final(enum prof_tail_state state);

struct prof_tail_opts {
	size_t sz;			/* sizeof(struct prof_tail_opts) */
	bool from_end;			/* skip the samples of the blocks complete when the
					 * tail opens (definitions are still read); a spool
					 * that appears later is followed from its start */
	size_t max_batch;		/* samples per batch; 0: 4096 */
};

/*
 * One sample, with what the reader knew of its thread when it was read, or
 * an off-CPU interval (a spool of prof record --off-cpu) as a sample: its
 * start, thread, stack (ending in its state frame), the CPU it left, and
 * its duration in ns as the period.
 */
struct prof_tail_sample {
	struct prof_sample s;
	int32_t pid;			/* 0 when the thread is unknown */
	int32_t tid;
	const char *comm;		/* the thread's name at the sample, else its process's
					 * comm, else ""; lent until prof_tail_free() */
	uint8_t offcpu;			/* 0: a CPU sample; else an off-CPU interval in
					 * this enum prof_offcpu_state */
};

/* What one prof_tail_poll() read. */
struct prof_tail_batch {
	enum prof_tail_state state;	/* after this batch */
	const char *reason;		/* CUT, CORRUPT, SHRUNK: where and why ("block 3 at
					 * offset 4096: payload checksum mismatch"); else "".
					 * Lent until the next poll */
	const struct prof_tail_sample *samples;	/* in spool order (off-CPU intervals
						 * where they end); lent until the
						 * next poll */
	size_t nsamples;		/* samples and off-CPU intervals */
	uint64_t lost;			/* events the lost records of this batch count */
	uint32_t modules_retired;	/* modules retired in this batch: their ids stay valid
					 * (ids are never reused), but addresses in the same
					 * range now belong to new modules */
	bool symbols_added;		/* new symbol records: a symbolizer may now name frames
					 * it named before differently */
	bool more;			/* the batch is full: more may be ready, poll again now */
	bool activity;			/* records were read, or the file changed size, since
					 * the previous poll: the writer is alive */
};

/* What a tail has read so far. */
struct prof_tail_stats {
	enum prof_tail_state state;	/* as of the last poll */
	uint64_t samples;		/* samples handed out */
	uint64_t skipped;		/* samples and intervals skipped for from_end */
	uint64_t lost;			/* events lost, summed over the lost records */
	uint32_t processes_alive;	/* defined and without an exit record */
	uint32_t threads_alive;
	uint64_t first_ns, last_ns;	/* times of the first and last sample handed out
					 * (CLOCK_MONOTONIC; 0 before any) */
	uint64_t blocks;		/* complete, valid blocks read */
	uint64_t offset;		/* file offset after the last block read */
	const char *path;		/* the file followed, or NULL while waiting */
	uint64_t offcpu_intervals;	/* off-CPU intervals handed out */
	uint64_t offcpu_ns;		/* and their time */
};

/*
 * Follow the spool at PATH, which may not exist yet: a recording puts its
 * spool at its path when sampling starts.  Until a spool is open, each
 * poll looks for it; then it follows that file to its end: its trailer,
 * or, for a spool whose writer locks it (PROF_META_LOCKED), the moment
 * the writer is gone without one (PROF_TAIL_STATE_ABANDONED).  The first look
 * happens here, so that a file that is there but is no spool fails at
 * once.  OPTS NULL means defaults.
 *
 * Returns 0 and *ret, or -EINVAL (opts), -ENOMEM, and for a file that is
 * there: -EBADMSG (not a spool, or its metadata is corrupt), -ENOTSUP (a
 * spool version this library does not read), -EISDIR, open(2) errors.
 */
int prof_tail_open(const char *path, const struct prof_tail_opts *opts, struct prof_tail **ret);

/*
 * Follow the N files of one recording (prof record --switch-output) as one
 * spool, read as prof_spool_open_many() reads them: each file to its end,
 * then the next; the last one (by when its recording began) may still be
 * written, and is followed as prof_tail_open() follows a file.  They must
 * exist.  N == 1 is prof_tail_open().  Errors as prof_spool_open_many().
 */
int prof_tail_open_many(const char *const *paths, size_t n, const struct prof_tail_opts *opts,
			struct prof_tail **ret);

/*
 * Read what was appended since the last poll, without waiting: at most
 * max_batch samples, with the definitions before them, into *RET (which
 * lends the samples until the next poll).  Returns the number of samples
 * (>= 0), or, while no spool is open yet, the errors of prof_tail_open();
 * -ENOMEM.  Damage is no error: the state says CORRUPT or SHRUNK, the reason
 * says where, and every later poll returns 0 with that state.
 */
int prof_tail_poll(struct prof_tail *t, struct prof_tail_batch *ret);

/*
 * Wait until the file may have changed (inotify, else a short sleep), or
 * TIMEOUT_MS passed (at most a second is waited at a time).  A signal ends
 * the wait early.  0, or -EINVAL for a negative TIMEOUT_MS.
 */
int prof_tail_wait(struct prof_tail *t, int timeout_ms);

/*
 * The reader of the followed spool, with every definition read so far (for
 * prof_spool_stack(), prof_spool_thread(), prof_spool_meta(), and a
 * symbolizer: prof_symbolizer_new()); NULL while WAITING.  Lent until
 * prof_tail_free(); do not read from it (prof_spool_next()) directly.
 */
const struct prof_spool *prof_tail_spool(const struct prof_tail *t);

void prof_tail_stats(const struct prof_tail *t, struct prof_tail_stats *ret);

/*
 * Give the disk space of the blocks read and handed out back to the file
 * system (fallocate(2) FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, in whole
 * file system blocks; the header and the metadata block stay), for a
 * recording watched live whose spool is not kept: the spool's size stays,
 * but those blocks read as zeros, so prof report and other readers can no
 * longer read past its metadata.  Only for the tail of a recorder
 * (prof_recorder_tail()); on a standalone tail it does nothing and returns
 * 0.  Returns 0, or -EOPNOTSUPP (the file system cannot punch holes),
 * another fallocate(2) error.
 */
int prof_tail_discard_consumed(struct prof_tail *t);

/* Close the file and free T (a recorder may then get a new tail). */
void prof_tail_free(struct prof_tail *t);

/*
 * The tail of REC's own spool: a tail over the file REC writes (through
 * REC's descriptor, so also before the file is at its path), opened now
 * with default options.  It follows the file to its trailer, and may
 * outlive REC.  One at a time per recorder; it may be polled on another
 * thread than REC's (see Threads at the top).  Returns 0 and *ret, or
 * -EBUSY (REC has a tail that was not freed), -ENOTSUP (REC writes to a
 * caller-owned sink, prof_recorder_attach_sink(), or to a pipe or a
 * device), -ENOMEM, open(2) errors.
 */
int prof_recorder_tail(struct prof_recorder *rec, struct prof_tail **ret);

/*
 * A symbolizer over the spool T follows (prof_symbolizer_new_opts() with
 * OPTS), to name the frames of T's batches.  For the tail of a recorder it
 * reads each module's ELF file through the descriptor the recorder opened
 * when it wrote the module, the file the process mapped, so that names are
 * right while the recording runs even when that file has since been
 * deleted or replaced, or exists only in the target's mount namespace (a
 * module whose file the recorder could not hold is read at its path).
 * Those files stay open while the symbolizer lives, recorder freed or
 * not.  Modules retired need nothing of it (ids are never reused); after a
 * batch with symbols_added, it may name frames differently.  Use it from
 * the thread that polls T.  0 and *RET, or -EAGAIN while T has read no
 * metadata yet (prof_tail_spool() NULL), -EINVAL, or the errors of
 * prof_symbolizer_new_opts().
 */
int prof_tail_symbolizer(struct prof_tail *t, const struct prof_symbolizer_opts *opts,
			 struct prof_symbolizer **ret);

/*
 * A live view of a tail: what prof tail and prof record --live print.  It
 * names frames with a symbolizer of its own, prof_tail_symbolizer() (created
 * at the first sample), and keeps per function its self samples of the
 * current interval and overall: memory grows with distinct frames and
 * functions, and an interval's counts are dropped when printed.
 */
struct prof_tail_view;

enum prof_tail_format {
	PROF_TAIL_FORMAT_TOP = 0,	/* at each print, the hottest functions of the interval
				 * and overall, under a header of rates and counts */
	PROF_TAIL_FORMAT_SAMPLES,	/* as they come: "TIME PID TID COMM STACK", a line a sample */
	PROF_TAIL_FORMAT_JSON,		/* at each print, one JSON object on a line (its keys:
				 * prof-tail(1)) */
	PROF_TAIL_FORMAT__COUNT
};

/* The name of a format ("top", "samples", "json"), or NULL. */
const char *prof_tail_format_name(unsigned format);

/* The format named NAME, or -EINVAL (with the message set). */
int prof_tail_format_parse(const char *name);

struct prof_tail_view_opts {
	size_t sz;			/* sizeof(struct prof_tail_view_opts) */
	enum prof_tail_format format;
	bool refresh;			/* top: redraw in place (clear the screen first: for a
					 * terminal); else a block per print, then a blank line */
	long limit;			/* top and json: functions listed; 0: 20 */
	const char *title;		/* top: the name in the first line; NULL: the file's */
	enum prof_weight weight;	/* what functions are ranked by: CPU samples
					 * (cpu), off-CPU time (off-cpu) or both (wall);
					 * an off-CPU interval counts for the function
					 * that waited, under its state frame */
};

/* A view.  0 and *ret, or -EINVAL (opts), -ENOMEM. */
int prof_tail_view_new(const struct prof_tail_view_opts *opts, struct prof_tail_view **ret);

/*
 * Count batch B of tail T (T must stay the same for a view); in the samples
 * format, write its lines to OUT now and flush it.  TIME is seconds since
 * the recording started (metadata mono_start_ns), with microseconds; PID
 * and TID are the kernel's; COMM is the thread's name at the sample,
 * spaces and control characters as '_', "[unknown]" when empty; STACK is
 * the sample's functions from the root to the leaf joined by ';', as prof
 * report --format=folded names them (inline frames included; a ';' in a
 * name is '?'), "[empty stack]" for a sample without a frame.  STACK may
 * hold spaces (C++ names): it is the rest of the line.
 * Returns 0, or -ENOMEM, -EINVAL (a stack the spool does not define), or
 * the error of writing to OUT (-EPIPE, -ENOSPC...; -EIO when unknown).
 */
int prof_tail_view_add(struct prof_tail_view *v, struct prof_tail *t,
		       const struct prof_tail_batch *b, FILE *out);

/*
 * Print the interval that ends now to OUT (top: a view; json: an object and
 * a newline; samples: nothing) and start the next one.  The interval
 * covers the samples counted since the previous print, its length is the
 * recording time between their last samples.  0, or -ENOMEM, or the error
 * of writing to OUT.
 */
int prof_tail_view_print(struct prof_tail_view *v, struct prof_tail *t, FILE *out);

void prof_tail_view_free(struct prof_tail_view *v);

#ifdef __cplusplus
}
#endif

#endif /* PROF_H */
