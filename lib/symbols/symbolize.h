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

#endif /* PROF_SYMBOLIZE_H */
