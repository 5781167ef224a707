/* SPDX-License-Identifier: MIT */
/*
 * image_set.h - the files a recording maps, by spool module id, each held
 * open from when its first module is written: a file deleted or replaced
 * later, or reachable only through its process's root or map_files, stays
 * readable as it was mapped.  The recorder's capture reads names from them
 * at the end; the symbolizer of the recorder's tail reads them while the
 * recording runs.  Counted references, since a tail may outlive its
 * recorder, and a lock, since it may be used from another thread.
 * Private to lib/.
 */
#ifndef PROF_IMAGE_SET_H
#define PROF_IMAGE_SET_H

#include <stdint.h>

struct image_set;

/* A mapped file: where to open it, and what makes it the same file. */
struct image_file {
	const char *path;	/* may be /proc/PID/map_files/... or /proc/PID/root/... */
	uint32_t dev_major, dev_minor;
	uint64_t inode;
};

/* An empty set, one reference.  0 or -ENOMEM. */
int image_set_new(struct image_set **ret);

/* Another reference to S. */
struct image_set *image_set_ref(struct image_set *s);

/* Drop a reference; the last closes the files.  NULL is fine. */
void image_set_unref(struct image_set *s);

/*
 * Module ID (just written) maps the file F: hold it, once however many
 * modules map it, or past a few hundred files remember its path.
 * 0 or -ENOMEM.
 */
int image_set_add(struct image_set *s, uint32_t id, const struct image_file *f);

/*
 * Where to read the file of module ID: "/proc/self/fd/N" of the held
 * descriptor, else the path it was read at; NULL if S does not know ID.
 * The string lives as long as S.
 */
const char *image_set_path(struct image_set *s, uint32_t id);

#endif /* PROF_IMAGE_SET_H */
