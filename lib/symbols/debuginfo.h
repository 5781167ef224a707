/* SPDX-License-Identifier: MIT */
/*
 * debuginfo.h - finding the file that holds an ELF file's debug info, the
 * way gdb finds it: the file itself, then by build-id, then by
 * .gnu_debuglink, then (only when asked) from debuginfod.  Private to lib/.
 */
#ifndef PROF_DEBUGINFO_H
#define PROF_DEBUGINFO_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where the system keeps debug files; searched after the caller's directories. */
#define DEBUGINFO_SYSTEM_DIR "/usr/lib/debug"

/* Where the debug info of a file was found. */
enum debuginfo_source {
	DEBUGINFO_NONE = 0,
	DEBUGINFO_SELF,		/* the file carries its own */
	DEBUGINFO_BUILD_ID,	/* DIR/.build-id/xx/yyyy.debug */
	DEBUGINFO_DEBUGLINK,	/* .gnu_debuglink, its CRC checked */
	DEBUGINFO_DEBUGINFOD,	/* downloaded, by build-id */
};

struct debuginfo {
	char **dirs;		/* the caller's directories, then DEBUGINFO_SYSTEM_DIR */
	size_t ndirs;
	bool debuginfod;	/* ask debuginfod for what is not found here */
	bool debuginfod_off;	/* a lookup failed: ask no more */
	unsigned timeout_s;	/* a debuginfod lookup may take this long in all */
	void *client;		/* debuginfod_client, when built with libdebuginfod */
};

/* The name of SOURCE for messages ("build-id", "debuglink", ...). */
const char *debuginfo_source_name(enum debuginfo_source source);

/*
 * Prepare to search DIRS (a colon-separated list of directories laid out as
 * /usr/lib/debug, searched before it; NULL or "" for none), and, if
 * DEBUGINFOD, the servers of DEBUGINFOD_URLS, each lookup given at most
 * TIMEOUT_S seconds (0: DEBUGINFOD_TIMEOUT, else 30).  0, or -ENOTSUP
 * (built without libdebuginfod), -EINVAL (DEBUGINFOD_URLS is not set),
 * -ENOMEM, with the message set; release D either way.
 */
int debuginfo_init(struct debuginfo *d, const char *dirs, bool debuginfod, unsigned timeout_s);

/*
 * Find the debug info of ELF, the file at PATH whose build-id is BUILD_ID
 * (LEN 0: none known).  Returns 1 with *RET_PATH (malloc'd; a copy of PATH
 * when the file carries its own) and *RET_SOURCE; 0 when there is none;
 * -ENOMEM.  Candidates are checked: a build-id must match, a debuglink
 * target must have the CRC the link gives, and a file without DWARF nor
 * symbols is passed over.  A failing debuginfod lookup is logged once at
 * WARN and turns debuginfod off for D.
 */
int debuginfo_find(struct debuginfo *d, const char *path, Elf *elf, const uint8_t *build_id,
		   size_t len, char **ret_path, enum debuginfo_source *ret_source);

/* The name of the debug file ELF's .gnu_debuglink gives, or NULL: it has none. */
const char *debuginfo_link_name(Elf *elf);

/* Whether ELF has DWARF of its own (a .debug_info with contents). */
bool debuginfo_has_dwarf(Elf *elf);

void debuginfo_release(struct debuginfo *d);

#endif /* PROF_DEBUGINFO_H */
