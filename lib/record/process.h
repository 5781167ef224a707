/* SPDX-License-Identifier: MIT */
/*
 * process.h - the processes and threads a recording follows: their spool
 * ids, names, address spaces, and lifecycle (fork, exec, exit, rename,
 * mmap), each change written to the spool as it is applied.
 */
#ifndef PROF_PROCESS_H
#define PROF_PROCESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "unwind/addr_space.h"
#include "intern.h"

struct jitdump_tail;
struct jit_names;
struct unwind_result;

struct proc {
	pid_t pid;
	pid_t ppid;
	uint32_t spool_id;		/* in the current spool file; 0: gone from it */
	uint64_t start_time_ns;		/* as /proc/PID/stat has it: with pid, its identity */
	uint64_t time_ns;		/* when the recording first saw it */
	char *exe;			/* its executable's path, owned; "" unknown */
	bool exe_pending;		/* exec'd at exec_ns: exe and the exec record wait */
	uint64_t exec_ns;		/* for the first file the new image maps (pt_settle_exec) */
	bool exited;
	uint64_t exit_ns;		/* when it exited (record time, or when found gone) */
	size_t first_thread;		/* its threads sit at or after this index of thrs */
	char comm[16];
	uint64_t maps_refreshed_ns;	/* last /proc/PID/maps re-read (throttle) */
	bool ran_anon;			/* it had anonymous code: JIT names to capture */
	bool jvm;			/* it maps libjvm.so: a JVM to ask for names (jvm.c) */
	bool py_checked, py_said;	/* python.c looked at its modules; said it cannot */
	bool py;			/* a CPython 3.11 whose Python frames are read */
	uint32_t py_gen;		/* as.gen when it looked */
	struct jit_names *jit_names;	/* its jitdump's names (pt_jitdump's), or NULL */
	bool has_threads;		/* pt_collect()'s scratch */
	struct addr_space as;
};

struct thr {
	pid_t tid;
	uint32_t spool_id;
	struct proc *proc;
	bool exited;
	uint64_t exit_ns;		/* when it exited */
	char name[16];
};

struct proc_table {
	struct proc **procs;		/* every process ever seen (pointers stay put) */
	size_t nprocs, procs_cap;
	struct thr *thrs;
	size_t nthrs, thrs_cap;
	struct intern_map pid_index;	/* pid -> 1 + index of its latest process */
	struct intern_map tid_index;	/* tid -> 1 + index of its latest thread */
	struct intern_map frame_modules;	/* a file's key -> the module its frames name */
	struct prof_spool_writer *w;
	uint64_t live_processes;
	uint64_t processes_seen, threads_seen;	/* since the start, collected ones too */
	bool no_children;		/* a fork into a new process is not followed */
	/*
	 * The processes dropped by pt_collect() that ran anonymous code: their
	 * JIT names are read at the end of the file, by pid.
	 */
	struct pt_gone { pid_t pid; uint32_t spool_id; } *gone;
	size_t ngone, gone_cap;
	struct as_shared *spaces;	/* what the address spaces share, if set */
	/*
	 * The jitdumps processes announced (jitdump.c), as they named them,
	 * each read as it grows while its process lives (tail, or NULL).
	 */
	struct pt_jitdump {
		pid_t pid;
		uint64_t start_time_ns;	/* its process's, told from a later one of its pid */
		char *path;
		struct jitdump_tail *tail;
		struct jit_names *names;	/* its code's names as it loaded it */
		struct proc *tail_proc;		/* its process, while tail reads */
	} *jitdumps;
	size_t njitdumps, jitdumps_cap;
};

void pt_init(struct proc_table *pt, struct prof_spool_writer *w);
void pt_release(struct proc_table *pt);

/*
 * Write P (thread T) into the spool under a new id, as a new process does
 * or, after the recording went on in a new file, one still alive.  The id,
 * or -errno.
 */
int64_t pt_write_process(struct proc_table *pt, struct proc *p, uint64_t time);
int64_t pt_write_thread(struct proc_table *pt, struct thr *t, uint64_t time);

/* Write to W from now on (the recording went on in a new file). */
void pt_set_writer(struct proc_table *pt, struct prof_spool_writer *w);

/* The live process PID, created (with a /proc snapshot if SNAPSHOT) if needed. */
int pt_process(struct proc_table *pt, pid_t pid, uint64_t time, bool snapshot, struct proc **ret);
/*
 * A new process PID that the caller read from /proc (its parent, comm and
 * start in ns since boot), with its mappings if SNAPSHOT.  0 or -errno.
 */
int pt_process_read(struct proc_table *pt, pid_t pid, pid_t ppid, const char *comm,
		    uint64_t start_ns, uint64_t time, bool snapshot, struct proc **ret);
/* A new thread TID of P, named NAME by the caller.  0 or -errno. */
int pt_thread_named(struct proc_table *pt, struct proc *p, pid_t tid, const char *name,
		    uint64_t time, struct thr **ret);
/* The live thread TID of PID, created if needed. */
int pt_thread(struct proc_table *pt, pid_t pid, pid_t tid, uint64_t time, struct thr **ret);

/* The live thread TID, or NULL. */
struct thr *pt_find_thread(struct proc_table *pt, pid_t tid);

/* The latest process of PID, alive or not, or NULL. */
struct proc *pt_find_process(struct proc_table *pt, pid_t pid);

int pt_fork(struct proc_table *pt, pid_t pid, pid_t ppid, pid_t tid, uint64_t time);
int pt_comm(struct proc_table *pt, pid_t pid, pid_t tid, const char *comm, bool exec,
	    uint64_t time);
int pt_exit(struct proc_table *pt, pid_t pid, pid_t tid, uint64_t time);
/*
 * P's exec, pending since its comm record, is written: its executable is
 * PATH, or with PATH NULL, what /proc says now.  0 or -errno.
 */
int pt_settle_exec(struct proc_table *pt, struct proc *p, const char *path);
/* BUILD_ID_LEN > 0: the mapping is known by BUILD_ID, not by MAJ:MIN and INODE. */
int pt_mmap(struct proc_table *pt, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
	    uint32_t maj, uint32_t min, uint64_t inode, const uint8_t *build_id,
	    uint8_t build_id_len, const char *path, uint64_t time);

/* Add the executable mappings of /proc/PID/maps that P does not have yet. */
int pt_refresh_maps(struct proc_table *pt, struct proc *p, uint64_t time);

/* The spool id of M (of P), writing its module record the first time. */
int64_t pt_module_id(struct proc_table *pt, struct proc *p, struct as_module *m);

/*
 * The module the frames in M name: the first module written of the same
 * file mapped from the same offset, whatever the process (M's own record
 * is written too), so that a file's code is the same frames and stacks in
 * every process that runs it: the spool's interning then grows with the
 * distinct code, not with the processes (seventy cc1s, a service's
 * children).  A frame's address is file-relative, so any mapping of the
 * file names it.  The id, *RET_FIRST true when M is that first module (its
 * file's names are then the spool's to capture), or -errno.
 */
int64_t pt_frame_module_id(struct proc_table *pt, struct proc *p, struct as_module *m,
			   bool *ret_first);

/*
 * Forget the threads and processes that exited more than GRACE_NS before
 * NOW: a late record cannot name them any more, and the table does not grow
 * with a service's churn of threads and children over hours.  0 or -ENOMEM.
 */
int pt_collect(struct proc_table *pt, uint64_t now, uint64_t grace_ns);

/* The jitdump process PID announced last, or NULL. */
const char *pt_jitdump(const struct proc_table *pt, pid_t pid);

/*
 * Read what the live processes' jitdumps gained since the last call: the
 * CFI their JITs wrote for the code they loaded, into their address
 * spaces.  0 or -ENOMEM.
 */
int pt_read_jitdumps(struct proc_table *pt);

/*
 * Give the frames of U (a sample of P at TIME) in JIT code its jitdump
 * named the addresses of their loads (jit_names.h).  0 or -ENOMEM.
 */
int pt_jit_frames(struct proc *p, struct unwind_result *u, uint64_t time);

/* The names of the JIT loads frames of PID were given, sorted; NULL if none. */
const struct jit_sym *pt_jit_names(struct proc_table *pt, pid_t pid, size_t *n);

/* Mark P exited (also when found dead without an exit record). */
int pt_process_exit(struct proc_table *pt, struct proc *p, uint64_t time);

#endif /* PROF_PROCESS_H */
