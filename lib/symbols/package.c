/* SPDX-License-Identifier: MIT */
/*
 * package.c - the Debian package that installed a file: dpkg's lists of
 * each package's files, read as dpkg -S reads them.  Only asked for the
 * few modules a report gives a hint for, all at once: a machine's lists
 * are a few megabytes.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "package.h"

/* PATH without the /usr of a merged /usr (/usr/lib/x => /lib/x), or PATH. */
static const char *unmerged(const char *path)
{
	static const char *const dirs[] = { "/usr/lib/", "/usr/bin/", "/usr/sbin/", "/usr/lib64/" };
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (!strncmp(path, dirs[i], strlen(dirs[i])))
			return path + 4;
	return path;
}

/* Whether the list's LINE names PATH, one of them under a merged /usr. */
static bool same_file(const char *line, const char *path)
{
	return !strcmp(line, path) || !strcmp(unmerged(line), unmerged(path));
}

/* The package of list file NAME (PKG.list or PKG:ARCH.list), or NULL. */
static char *package_of_list(const char *name)
{
	size_t len = strlen(name);
	const char *colon;

	if (len <= 5 || strcmp(name + len - 5, ".list"))
		return NULL;
	len -= 5;
	colon = memchr(name, ':', len);
	if (colon)
		len = (size_t)(colon - name);
	return strndup(name, len);
}

int package_owners(const char *dir, const char *const *paths, size_t n, char **ret)
{
	struct dirent *e;
	size_t i, left = n, cap = 0;
	char *line = NULL;
	DIR *d;
	int r = 0;

	for (i = 0; i < n; i++)
		ret[i] = NULL;
	d = opendir(dir ? dir : PACKAGE_INFO_DIR);
	if (!d)
		return 0;
	while (left && r == 0 && (e = readdir(d))) {
		char *file;
		FILE *f;
		ssize_t len;

		size_t nlen = strlen(e->d_name);

		if (nlen <= 5 || strcmp(e->d_name + nlen - 5, ".list"))
			continue;
		if (asprintf(&file, "%s/%s", dir ? dir : PACKAGE_INFO_DIR, e->d_name) < 0) {
			r = error_setx(-ENOMEM, "out of memory");
			break;
		}
		f = fopen(file, "re");
		free(file);
		if (!f)
			continue;
		while (left && (len = getline(&line, &cap, f)) > 0) {
			if (line[len - 1] == '\n')
				line[len - 1] = '\0';
			for (i = 0; i < n; i++) {
				if (ret[i] || !paths[i] || !same_file(line, paths[i]))
					continue;
				ret[i] = package_of_list(e->d_name);
				if (!ret[i]) {
					r = error_setx(-ENOMEM, "out of memory");
					break;
				}
				left--;
			}
		}
		fclose(f);
	}
	free(line);
	closedir(d);
	return r;
}
