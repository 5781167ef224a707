/* SPDX-License-Identifier: MIT */
/*
 * proc.h - everything the recorder reads from /proc: a process's
 * mappings, its stat fields, executable, threads and their names, its
 * descendants, and the kernel's settings under /proc/sys.
 */
#ifndef PROF_PROC_H
#define PROF_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct map_entry {
	uint64_t start, end, pgoff;
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	bool exec;
	char *path;		/* "" for anonymous memory */
	/* known by its file's build-id (an mmap2 record's) instead of the device and inode */
	const uint8_t *build_id;
	uint8_t build_id_len;
};

/*
 * Read the mappings of PID.  Returns the number of entries (and *ret, to be
 * freed with maps_free) or -errno (-ESRCH when the process is gone).
 */
int maps_read(pid_t pid, struct map_entry **ret);
void maps_free(struct map_entry *maps, int n);

/* Parse one line of a maps file into E (path borrowed from LINE).  True if valid. */
bool maps_parse_line(char *line, struct map_entry *e);

/* comm, ppid and start time (in clock ticks) of PID from /proc/PID/stat.  0 or -errno. */
int proc_stat(pid_t pid, char comm[16], pid_t *ppid, uint64_t *starttime_ticks);

/* The same, and its number of threads. */
int proc_stat_threads(pid_t pid, char comm[16], pid_t *ppid, uint64_t *starttime,
		      uint64_t *threads);

/* Whether PID has exited as /proc sees it: gone, a zombie, or dead. */
bool proc_gone(pid_t pid);
/* Whether PID is gone and reaped: one cheap syscall, where proc_gone() reads /proc. */
bool proc_reaped(pid_t pid);

/* The path of PID's executable into BUF (LEN bytes), "" when unknown. */
void proc_exe(pid_t pid, char *buf, size_t len);

/*
 * PID as its own pid namespace numbers it (the last field of NSpid in
 * /proc/PID/status): the name it gives its files (/tmp/perf-PID.map).
 * PID itself where there is no other, or it cannot be read.
 */
pid_t proc_nspid(pid_t pid);

/* The name of thread TID of PID into NAME, FALLBACK when it cannot be read. */
void proc_thread_name(pid_t pid, pid_t tid, char name[16], const char *fallback);

/* The thread ids of PID from /proc/PID/task.  Count (and *RET to free), or -errno. */
int proc_tasks(pid_t pid, pid_t **ret);

/* PID's descendants (children, their children...) living now.  Count, or -errno. */
int proc_descendants(pid_t pid, pid_t **ret);

/* Every pid in /proc.  Count (and *RET to free), or -errno. */
int proc_pids(pid_t **ret);

/*
 * A CPU list as the kernel writes one ("0-3,6"), into CPUS (at most MAX,
 * each once).  Count; -EINVAL when it does not parse or is empty; -E2BIG.
 */
int cpu_list_parse(const char *s, int *cpus, int max);

/* The online CPUs (/sys/devices/system/cpu/online), at least CPU 0.  Count. */
int online_cpu_list(int *cpus, int max);

/* The number a file such as /proc/sys/kernel/... holds.  0, or -errno with a message. */
int proc_read_u64(const char *path, uint64_t *ret);

#endif /* PROF_PROC_H */
