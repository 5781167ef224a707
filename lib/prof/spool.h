/* SPDX-License-Identifier: MIT */
/*
 * prof/spool.h - spools: the data model of a recording, the writer that
 * encodes it and the reader that decodes it (man/prof-spool.5 is the file
 * format).  A tool that only reads spools needs this header alone; the
 * conventions of the whole API are at the top of <prof/prof.h>.
 */
#ifndef LIBPROF_SPOOL_H
#define LIBPROF_SPOOL_H

#include <prof/base.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the data model shared by spool writer and reader ------------------ */

/*
 * Ids are assigned by the writer in order of definition, from 1; 0 means
 * "none".  A record may only refer to ids defined before it.
 *
 * The writer reads these structs from the caller, who sets sz
 * (PROF_INIT() or PROF_OPTS()); the reader lends them with sz set to the
 * library's own size.
 */

/* A process, identified by its spool id: pids are reused, spool ids not. */
struct prof_process {
	size_t sz;		/* sizeof(struct prof_process) */
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
	size_t sz;		/* sizeof(struct prof_thread) */
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
	size_t sz;		/* sizeof(struct prof_module) */
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

/*
 * An ANON frame at or above this address is a Python function the
 * recorder read from the interpreter (no mapping is there): named by the
 * process's symbols like JIT code, shown as module [python].
 */
#define PROF_PYTHON_FRAME_BASE 0x8000000000000000ull

/*
 * Anonymous frames from here up to PROF_JAVA_FRAME_BASE are of JIT code
 * the recorder named as it was when the sample was taken (a jitdump's
 * loads, read as it grew): each load a range of its own, so that code
 * loaded where other code was before is not named by it; named by the
 * process's symbols like other JIT code, shown as module [anon].
 */
#define PROF_JIT_FRAME_BASE 0x4000000000000000ull

/*
 * Anonymous frames from here up to PROF_PYTHON_FRAME_BASE are Java
 * methods a HotSpot JVM's interpreter ran, one address a method: named by
 * the process's symbols as its compiled code is, module [anon].
 */
#define PROF_JAVA_FRAME_BASE 0x6000000000000000ull

/* Why an unwind stopped early; also the addr of a PROF_FRAME_TRUNCATED frame. */
enum prof_unwind_error {
	PROF_UNWIND_STACK_COPY = 1,	/* ran past the copied user stack */
	PROF_UNWIND_NO_CFI = 2,		/* no unwind info for a pc */
	PROF_UNWIND_UNMAPPED = 3,	/* a pc outside every known module */
	PROF_UNWIND_NO_REGS = 4,	/* sample without user registers */
	PROF_UNWIND_NO_STACK = 5,	/* sample without a stack copy */
	PROF_UNWIND_DEPTH = 6,		/* hit the frame limit */
	PROF_UNWIND_OTHER = 7,		/* any other unwinder failure */
};

/* The name of an unwind error cause ("stack-copy", ...), or NULL. */
const char *prof_unwind_error_name(unsigned cause);

/*
 * How a user frame was unwound when not by the compiled CFI tables: frame
 * pointers where no CFI covers the pc (in anonymous code, a JIT's; in a
 * file without CFI for it), or with every register for a CFI row the
 * tables do not encode (a CFA in another register or an expression, a
 * signal frame): by libdw's reading of the file's CFI, or by libdwfl
 * where that cannot.
 */
enum prof_unwind_fallback {
	PROF_FALLBACK_FP_ANON = 1,	/* frame pointers through anonymous code */
	PROF_FALLBACK_FP_NO_CFI = 2,	/* frame pointers where a file has no CFI */
	PROF_FALLBACK_DWFL = 3,		/* every register, for a row the tables do not encode */
};

/* The name of a fallback ("fp-anon", "fp-no-cfi", "full-regs"), or NULL. */
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
	size_t sz;		/* sizeof(struct prof_frame) */
	uint32_t id;
	uint8_t kind;		/* enum prof_frame_kind */
	uint32_t ref;		/* USER: a module of the file (the first process that
				 * mapped it defined it: frames are shared by every
				 * process that maps the same file, so the module may
				 * be another process's); ANON: process id; else 0 */
	uint64_t addr;
};

/*
 * A node of the stack prefix tree: FRAME called from the stack PARENT.
 * Only lent by the reader (the writer takes the two ids), so it has no sz.
 */
struct prof_stack_node {
	uint32_t parent;	/* 0: FRAME is the outermost frame */
	uint32_t frame;
};

struct prof_sample {
	size_t sz;		/* sizeof(struct prof_sample) */
	uint64_t time_ns;	/* CLOCK_MONOTONIC */
	uint32_t thread;	/* thread id */
	uint32_t stack;		/* leaf stack node id; 0: empty stack */
	uint64_t period;	/* weight: the event's period (ns for clocks) */
	uint32_t cpu;
};

/* Why a thread was off its CPU: the state its switch-out left it in. */
enum prof_offcpu_state {
	PROF_OFFCPU_STATE_BLOCKED = 1,	/* it waited for something: I/O, a lock, a
					 * sleep, a child, a page fault */
	PROF_OFFCPU_STATE_RUNNABLE = 2,	/* it was ready to run and waited for a CPU
					 * (preempted, or it yielded) */
};

/* The name of a state ("blocked", "runnable"), or NULL. */
const char *prof_offcpu_state_name(unsigned state);

/* What ended an off-CPU interval. */
enum prof_offcpu_end {
	PROF_OFFCPU_END_SWITCH_IN = 1,	/* the thread ran again */
	PROF_OFFCPU_END_RAN = 2,	/* it was seen running, its switch-in lost: a
					 * sample, or its next switch-out */
	PROF_OFFCPU_END_EXIT = 3,	/* it exited */
	PROF_OFFCPU_END_RECORDING = 4,	/* the recording ended while it was still off */
};

/*
 * A time a thread spent off its CPU: from its switch-out to what ended it.
 * Its stack is the one of the switch-out (the kernel's frames too when
 * they were recorded), and ends with a PROF_FRAME_STATE frame that says
 * STATE: a stack id 0 would mean even that is unknown.  A stack that is
 * just that frame was not sampled (the switch-out sample was lost).
 */
struct prof_offcpu {
	size_t sz;		/* sizeof(struct prof_offcpu) */
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
	PROF_LOST_SWITCH_SAMPLES = 7,	/* switch-out samples (off-CPU): stacks lost */
	PROF_LOST_SWITCH_RECORDS = 8,	/* switch records or switch-out samples, which
					 * of the two unknown: intervals lost */
};

/* The name of a lost kind ("samples", ...), or NULL. */
const char *prof_lost_kind_name(unsigned kind);

struct prof_lost {
	size_t sz;		/* sizeof(struct prof_lost) */
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
	size_t sz;		/* sizeof(struct prof_symbol) */
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
	PROF_META_SYSTEM = 1u << 5,	/* the whole machine (record -a): every task of
					 * its CPUs, the idle task counted in the trailer */
};

/* What a recording was: the first record of every spool. */
struct prof_meta {
	size_t sz;			/* sizeof(struct prof_meta) */
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
 * spool with a trailer finished; one without was cut short.  The arrays
 * by kind have PROF_SLOTS entries, [0] unused.
 */
struct prof_counters {
	size_t sz;			/* sizeof(struct prof_counters) */
	uint64_t samples;		/* samples written */
	uint64_t sample_events;		/* samples the kernel delivered */
	uint64_t lost[PROF_SLOTS];	/* by enum prof_lost_kind */
	uint64_t empty_stacks;		/* samples with no frame at all */
	uint64_t truncated_stacks;	/* samples whose unwind stopped early */
	uint64_t unwind_errors[PROF_SLOTS]; /* by enum prof_unwind_error */
	uint64_t processes;
	uint64_t threads;
	uint64_t lifecycle_gaps;	/* losses that made process state uncertain */
	uint64_t reconciliations;	/* /proc sweeps after such losses */
	uint64_t mono_end_ns;		/* CLOCK_MONOTONIC at the end */
	uint64_t wall_end_ns;		/* CLOCK_REALTIME at the end */
	uint64_t frames;		/* user frames unwound (0: not counted, older spools) */
	uint64_t fallback_frames[PROF_SLOTS]; /* of those, by enum prof_unwind_fallback */
	uint64_t offcpu_intervals;	/* off-CPU intervals written */
	uint64_t offcpu_ns;		/* their time in all */
	uint64_t offcpu_unsampled;	/* of those, without a stack (switch-out sample lost) */
	uint64_t offcpu_truncated;	/* of those, with a stack whose unwind stopped early */
	uint64_t switch_events;		/* switch-out samples the kernel delivered */
	/* the whole machine: of sample_events, the idle task's; the CPUs sampled (0: not it) */
	uint64_t idle_samples;
	uint64_t cpus;
	/*
	 * CPython 3.11: Python frames read into stacks; frames that failed
	 * validation (stale: the process had moved on), not shown; eval-loop
	 * frames whose Python frames were not found, shown as the interpreter
	 */
	uint64_t python_frames, python_stale, python_unread;
	/* names of JIT code the spool carries: from perf maps; from jitdumps */
	uint64_t jit_map_names, jitdump_names;
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
	size_t sz;			/* sizeof(struct prof_sink) */
	ssize_t (*write)(void *ctx, const void *buf, size_t len);
	int (*flush)(void *ctx);
	void *ctx;
};

struct prof_spool_writer_opts {
	size_t sz;			/* sizeof(struct prof_spool_writer_opts) */
	size_t block_bytes;		/* 0: 64 KiB of records per block */
	bool no_compress;		/* store blocks without deflate */
	int compress_level;		/* 1 to 9; 0: deflate level 4 */
};

struct prof_spool_writer;

/*
 * Create a spool at PATH (truncating what was there) and write its header
 * and META.  OPTS NULL means defaults.
 * Returns: 0 and *ret; -EINVAL (opts or META invalid); open(2) and write(2)
 * errors.
 */
int prof_spool_writer_open(const char *path, const struct prof_meta *meta,
			   const struct prof_spool_writer_opts *opts,
			   struct prof_spool_writer **ret);

/*
 * Write a spool into the caller-owned SINK (copied; its ctx must outlive the
 * writer), beginning with its header and META.
 * Returns: 0 and *ret; -EINVAL (SINK, opts or META invalid); the sink's errors.
 */
int prof_spool_writer_open_sink(const struct prof_sink *sink, const struct prof_meta *meta,
				const struct prof_spool_writer_opts *opts,
				struct prof_spool_writer **ret);

/*
 * Definitions.  The id, exited and retired fields of the argument are
 * ignored.
 * Returns: the new id (>= 1); -EINVAL when sz is not set, a reference is not
 * a defined id or a field is out of range; -ENOSPC when an id space is
 * exhausted; the errors of the sink.
 */
int64_t prof_spool_writer_add_process(struct prof_spool_writer *w, const struct prof_process *p);
int64_t prof_spool_writer_add_thread(struct prof_spool_writer *w, const struct prof_thread *t);
int64_t prof_spool_writer_add_module(struct prof_spool_writer *w, const struct prof_module *m);

/*
 * Interned: the same frame, or the same (parent, frame) node, keeps its id.
 * Returns: the id (>= 1); the errors of the definitions above.
 */
int64_t prof_spool_writer_intern_frame(struct prof_spool_writer *w, const struct prof_frame *f);
int64_t prof_spool_writer_intern_stack(struct prof_spool_writer *w, uint32_t parent,
				       uint32_t frame);

/*
 * Intern a whole stack given leaf first (frames[0] is the leaf).
 * Returns: the leaf node id, 0 for an empty stack; the errors of
 * prof_spool_writer_intern_stack().
 */
int64_t prof_spool_writer_intern_frames(struct prof_spool_writer *w, const uint32_t *frames,
					size_t n);

/*
 * Timed records.  An off-CPU interval only in a spool whose metadata says
 * PROF_META_OFFCPU.
 * Returns: 0; -EINVAL for sz not set, an undefined id or a field out of
 * range; the errors of the sink.
 */
int prof_spool_writer_add_sample(struct prof_spool_writer *w, const struct prof_sample *s);
int prof_spool_writer_add_offcpu(struct prof_spool_writer *w, const struct prof_offcpu *o);
int prof_spool_writer_rename_thread(struct prof_spool_writer *w, uint32_t thread, uint64_t time_ns,
				    const char *name);
int prof_spool_writer_add_exec(struct prof_spool_writer *w, uint32_t process, uint64_t time_ns,
			       const char *comm, const char *exe);
int prof_spool_writer_add_process_exit(struct prof_spool_writer *w, uint32_t process,
				       uint64_t time_ns);
int prof_spool_writer_add_thread_exit(struct prof_spool_writer *w, uint32_t thread,
				      uint64_t time_ns);
int prof_spool_writer_retire_module(struct prof_spool_writer *w, uint32_t module, uint64_t time_ns);
int prof_spool_writer_add_lost(struct prof_spool_writer *w, const struct prof_lost *l);
int prof_spool_writer_add_symbol(struct prof_spool_writer *w, const struct prof_symbol *s);

/*
 * Close the current block and hand it to the sink (and its flush(), no
 * fsync).
 * Returns: 0; the errors of the sink (after which every call fails so).
 */
int prof_spool_writer_flush(struct prof_spool_writer *w);

/* Bytes handed to the sink so far. */
uint64_t prof_spool_writer_bytes(const struct prof_spool_writer *w);

/*
 * Write the trailer with COUNTERS and flush: the spool is then finished,
 * and W still open (to be closed).
 * Returns: 0; -EINVAL (COUNTERS' sz not set, or a trailer was written
 * already); the errors of the sink.
 */
int prof_spool_writer_finish(struct prof_spool_writer *w, const struct prof_counters *counters);

/*
 * Flush what is buffered (without a trailer unless finish was called), close
 * the file if the writer opened it, and free W (NULL: nothing).
 * Returns: 0; the first error of the flush or the close.  W is freed either
 * way.
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

/*
 * One decoded record, filled by prof_spool_next() into the caller's struct
 * (sz set by the caller).  The pointers are valid until the next
 * prof_spool_next() on the same reader.
 */
struct prof_record {
	size_t sz;		/* sizeof(struct prof_record) */
	enum prof_record_type type;
	uint64_t time_ns;	/* for timed records; 0 otherwise */
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
 * Open the spool at PATH and read its header and META.
 * Returns: 0 and *ret; open(2) errors; -EBADMSG when it is not a spool or
 * META is corrupt; -ENOTSUP for a version this library does not read.
 */
int prof_spool_open(const char *path, struct prof_spool **ret);

/*
 * The same over a file descriptor the reader dups (the caller keeps FD),
 * NAME naming it in messages.
 * Returns: those of prof_spool_open(), and dup(2)'s.
 */
int prof_spool_open_fd(int fd, const char *name, struct prof_spool **ret);

/*
 * The N spools at PATHS read as one recording (the files of a recording
 * that switched output, say), in the order their recordings started: a
 * process of one file is the same as one of a file before when its pid
 * and start time match, its threads when their tids do, and so on for
 * modules, frames and stack nodes, so that ids (and the stacks they count)
 * are the same across files, and a definition is handed out once.  Times
 * run on across the files; the metadata is the first file's, the counters
 * the sum of the trailers (once the last file's was read); a file before
 * the last that stops short of its trailer is read as far as it goes, and
 * the status says so.  N == 1 is prof_spool_open().
 * Returns: 0 and *ret; those of prof_spool_open() for any file; -EINVAL for
 * a file given twice or N == 0.
 */
int prof_spool_open_many(const char *const *paths, size_t n, struct prof_spool **ret);

/*
 * Decode the next record into *RET (whose sz the caller set).  A corrupt
 * block is never an error here: the reader stops before it and says why
 * in the status.  Calling again after 0 picks up blocks appended since
 * (what a tail needs).
 * Returns: 1 with *ret filled; 0 when no complete block is left to read
 * now (the end, a cut, or a stop: see prof_spool_status()); -EINVAL
 * (RET's sz not set); -ENOMEM; -ENODATA when the file shrank under the
 * reader; the errors of read(2) (-EIO...).  None of these is the file's
 * content: a spool cannot make this fail.
 */
int prof_spool_next(struct prof_spool *sp, struct prof_record *ret);

enum prof_spool_state {
	PROF_SPOOL_STATE_READING,	/* more may come: the last call hit the end of the file */
	PROF_SPOOL_STATE_FINISHED,	/* the trailer was read */
	PROF_SPOOL_STATE_CUT,		/* an incomplete block at the end (no trailer yet) */
	PROF_SPOOL_STATE_CORRUPT,	/* stopped at an invalid block; see reason */
};

struct prof_spool_status {
	size_t sz;		/* sizeof(struct prof_spool_status) */
	enum prof_spool_state state;
	uint64_t blocks;	/* complete, valid blocks consumed */
	uint64_t offset;	/* file offset after the last consumed block */
	uint64_t file_size;	/* size seen at the last read */
	const char *reason;	/* CUT/CORRUPT: "block 3 at offset 4096: crc mismatch";
				 * else "".  Lent until the next call on SP */
};

/*
 * Where reading stands, into *RET (whose sz the caller set).
 * Returns: 0; -EINVAL (RET's sz not set).
 */
int prof_spool_status(const struct prof_spool *sp, struct prof_spool_status *ret);

/*
 * Whether a recorder still writes the spool, by the lock its writer holds
 * (PROF_META_LOCKED).
 * Returns: 1 yes; 0 no (it finished, or was killed); -ENOTSUP when the
 * spool cannot tell (its writer did not lock it).
 */
int prof_spool_has_writer(const struct prof_spool *sp);

/* The recording's metadata (lent for the reader's lifetime). */
const struct prof_meta *prof_spool_meta(const struct prof_spool *sp);

/* The trailer's counters, or NULL before the trailer was read (lent). */
const struct prof_counters *prof_spool_counters(const struct prof_spool *sp);

/* How many of each definition were read so far (valid ids are 1..count). */
struct prof_spool_counts {
	size_t sz;			/* sizeof(struct prof_spool_counts) */
	uint32_t processes, threads, modules, frames, stacks, symbols;
	uint64_t samples;
	uint64_t offcpu;		/* off-CPU intervals */
};

/* Returns: 0 with *ret filled (its sz set by the caller); -EINVAL (sz not set). */
int prof_spool_counts(const struct prof_spool *sp, struct prof_spool_counts *ret);

/*
 * Look up a definition by id (symbols too: the Nth symbol record has id N).
 * Returns: the definition, lent for the reader's lifetime; NULL for an id
 * not (yet) defined.
 */
const struct prof_process *prof_spool_process(const struct prof_spool *sp, uint32_t id);
const struct prof_thread *prof_spool_thread(const struct prof_spool *sp, uint32_t id);
const struct prof_module *prof_spool_module(const struct prof_spool *sp, uint32_t id);
const struct prof_frame *prof_spool_frame(const struct prof_spool *sp, uint32_t id);
const struct prof_stack_node *prof_spool_stack(const struct prof_spool *sp, uint32_t id);
const struct prof_symbol *prof_spool_symbol(const struct prof_spool *sp, uint32_t id);

/* Free the reader (NULL: nothing) and close its file. */
void prof_spool_close(struct prof_spool *sp);

#ifdef __cplusplus
}
#endif

#endif /* LIBPROF_SPOOL_H */
