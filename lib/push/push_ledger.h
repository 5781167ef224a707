/* SPDX-License-Identifier: MIT */
/*
 * push_ledger.h - which files of a recording were sent where
 * (push_ledger.c; prof/push.h says what the ledger is for).
 */
#ifndef PROF_PUSH_LEDGER_H
#define PROF_PUSH_LEDGER_H

#include <stdbool.h>
#include <stdint.h>

/* Whether the file stamp of switched files: "." and 17 digits, all of S. */
bool ledger_is_stamp(const char *s);

/*
 * Whether the ledger beside FILE lists it, of the recording that began at
 * WALL_START_NS, as sent to ENDPOINT.  A ledger that cannot be read lists
 * nothing.
 */
bool ledger_has(const char *file, uint64_t wall_start_ns, const char *endpoint);

/* List FILE as sent.  Returns: 0; -errno (the message names the ledger). */
int ledger_add(const char *file, uint64_t wall_start_ns, const char *endpoint);

/*
 * Drop the lines of the ledger of the recording at SPOOL_PATH whose files
 * are gone (removed once sent), the ledger itself when none is left.
 */
void ledger_prune(const char *spool_path);

#endif /* PROF_PUSH_LEDGER_H */
