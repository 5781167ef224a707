/* SPDX-License-Identifier: MIT */
/*
 * symbolize.h - what lib/ adds to a symbolizer besides its options.
 * Private to lib/.
 */
#ifndef PROF_SYMBOLIZE_H
#define PROF_SYMBOLIZE_H

#include "image_set.h"
#include "prof.h"

/*
 * Read each module's ELF file where SET holds it (taking a reference),
 * before its path: the file the recording mapped, even if the path now
 * names another or nothing.
 */
void symbolizer_read_images(struct prof_symbolizer *s, struct image_set *set);

/*
 * S names the frames of SP from now on, the next file of the recording it
 * named (a recorder's tail that moved on), whose modules SET holds (NULL:
 * none): every frame, module and symbol id of the old spool is forgotten,
 * the files its modules needed stay open with their DWARF, the rest are
 * closed.  0, or -ENOMEM (S is still usable, it may open a file again).
 */
int symbolizer_follow(struct prof_symbolizer *s, const struct prof_spool *sp,
		      struct image_set *set);

#endif /* PROF_SYMBOLIZE_H */
