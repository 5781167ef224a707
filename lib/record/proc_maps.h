/* SPDX-License-Identifier: MIT */
/*
 * proc_maps.h - reading /proc/PID/maps and a few /proc/PID/stat fields.
 */
#ifndef PROF_PROC_MAPS_H
#define PROF_PROC_MAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct map_entry {
	uint64_t start, end, pgoff;
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	bool exec;
	char *path;		/* "" for anonymous memory */
};

/*
 * Read the mappings of PID.  Returns the number of entries (and *ret, to be
 * freed with maps_free) or -errno (-ESRCH when the process is gone).
 */
int maps_read(pid_t pid, struct map_entry **ret);
void maps_free(struct map_entry *maps, int n);

/* Parse one line of a maps file into E (path borrowed from LINE).  True if valid. */
bool maps_parse_line(char *line, struct map_entry *e);

/* comm and ppid of PID from /proc/PID/stat.  0 or -errno. */
int proc_stat(pid_t pid, char comm[16], pid_t *ppid, uint64_t *starttime_ticks);

#endif /* PROF_PROC_MAPS_H */
