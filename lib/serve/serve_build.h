/* SPDX-License-Identifier: MIT */
/*
 * serve_build.h - the profile of a window of the recording, as prof serve
 * sends it: private to lib/serve/.
 */
#ifndef PROF_SERVE_BUILD_H
#define PROF_SERVE_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "prof.h"
#include "serve_files.h"

/* A window of the recording, by the samples' clock (CLOCK_MONOTONIC). */
struct build_window {
	uint64_t from_ns, to_ns;
	enum prof_weight weight;
	bool dwarf;		/* inline frames and lines from debug info */
};

/*
 * Whether the recording of F can be weighed by W, by its newest file.
 * 0; 1 when there is no file to tell yet; -EINVAL with the message saying
 * why not.
 */
int build_check_weight(struct serve_files *f, enum prof_weight w);

/*
 * The gzip'd profile.proto of what the files of F recorded in W (an empty
 * profile when nothing): *RET (malloc'd, the caller frees it) of *RET_LEN
 * bytes, *RET_SAMPLES the samples (or intervals) in it.  0; -ENOENT when
 * the recording has no file yet; -EINVAL when its files cannot be weighed
 * so; -errno of reading the files and writing the profile, with the
 * message.
 */
int build_profile(struct serve_files *f, const struct build_window *w, char **ret,
		  size_t *ret_len, uint64_t *ret_samples);

#endif /* PROF_SERVE_BUILD_H */
