/* SPDX-License-Identifier: MIT */
/*
 * package.h - which Debian package installed a file, as dpkg -S says it,
 * for the hint that names the package of a missing debug file.  Private
 * to lib/.
 */
#ifndef PROF_PACKAGE_H
#define PROF_PACKAGE_H

#include <stddef.h>

/* Where dpkg keeps each package's file list (PKG.list, PKG:ARCH.list). */
#define PACKAGE_INFO_DIR "/var/lib/dpkg/info"

/*
 * The packages that installed PATHS[0..N) (a path and its /usr-merged
 * twin count alike), into RET[0..N) (malloc'd names, NULL where none),
 * from the lists in DIR (NULL: PACKAGE_INFO_DIR), read once for all.
 * 0, or -ENOMEM; a machine without dpkg gives NULLs.
 */
int package_owners(const char *dir, const char *const *paths, size_t n, char **ret);

#endif /* PROF_PACKAGE_H */
