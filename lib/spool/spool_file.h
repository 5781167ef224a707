/* SPDX-License-Identifier: MIT */
/*
 * spool_file.h - the file a recording writes, and how a reader tells that
 * its writer is gone.  The spool is made nameless (or under a hidden name)
 * beside its path and put in place when sampling starts, so that a run
 * that fails before then leaves the path as it was, and one killed later
 * leaves every block it flushed at the path.  The writer holds an
 * exclusive flock(2) on it until it closes the file; a reader that can
 * take a shared lock knows no one writes it any more.
 */
#ifndef PROF_SPOOL_FILE_H
#define PROF_SPOOL_FILE_H

#include <stdbool.h>

struct spool_file {
	char *path;		/* where the spool goes */
	char *tmp;		/* its hidden temporary name, or NULL (unnamed, or in place) */
	int fd;			/* written with write(2); -1 when closed */
	bool in_place;		/* PATH is a pipe or a device: written as it is */
	bool published;		/* the file is at PATH */
	bool locked;		/* we hold its flock (readers can tell when we are gone) */
};

/*
 * Make the file for PATH, not yet at PATH: unnamed (O_TMPFILE) where the
 * file system can, else as .NAME.tmp.PID beside it; locked for writing.
 * A PATH that is a pipe or a device is opened as it is (and counts as
 * published).  0, or -errno with the message naming PATH.
 */
int spool_file_create(struct spool_file *f, const char *path);

/*
 * Make a file that never gets a name, in directory DIR: O_TMPFILE where
 * the file system can, else a file made there and removed at once.  It
 * counts as published (there is nothing more to do at the start) and is
 * gone once every descriptor of it is closed: a recording only its tail
 * reads (prof top), which leaves nothing behind however it ends.  0, or
 * -errno with the message naming DIR.
 */
int spool_file_create_unnamed(struct spool_file *f, const char *dir);

/*
 * Put the file at its path: an existing PATH becomes PATH.old first (as
 * perf does with perf.data).  Does nothing the second time.  0 or -errno.
 */
int spool_file_publish(struct spool_file *f);

/*
 * Close F.  One never published is removed; one published stays, and its
 * readers learn from the lock that nothing more will come.
 */
void spool_file_close(struct spool_file *f);

/*
 * Whether a writer holds the spool open at FD (any descriptor of it):
 * 1 yes, 0 no (none could be holding it: it was closed or killed), -errno
 * when the file system cannot tell (no flock there).
 */
int spool_file_has_writer(int fd);

#endif /* PROF_SPOOL_FILE_H */
