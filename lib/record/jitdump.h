/* SPDX-License-Identifier: MIT */
/*
 * jitdump.h - the code a JIT announced in its jitdump file (V8's
 * --perf-prof, CPython 3.13's -X perf_jit, .NET, LuaJIT...): the names of
 * its code ranges, as a perf map would give them.
 */
#ifndef PROF_JITDUMP_H
#define PROF_JITDUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* A named range of JIT code, from a perf map or a jitdump. */
struct jit_sym {
	uint64_t start, size;
	char *name;
};

/* Whether PATH, mapped executable, is a JIT's marker of its jitdump: jit-PID.dump. */
bool jitdump_is_marker(const char *path);

/*
 * Append to *V (*N of them, room for *CAP) the code loads of the jitdump
 * at PATH, in the order written (a later load of a range replaces the
 * earlier one), moves applied.  A file cut short or damaged gives what
 * precedes the damage.  0, or -ENOMEM; a file that is not a jitdump adds
 * nothing.
 */
int jitdump_read(const char *path, struct jit_sym **v, size_t *n, size_t *cap);

struct cfi_row;

/*
 * A jitdump read as it grows, for the CFI of the code it loads: an
 * unwinding record's .eh_frame belongs to the next code load (as perf
 * inject pairs them), placed where the writers put it, just after the
 * code (at code_addr + code_size rounded up to 8: V8, CPython and perf's
 * jvmti agent encode their pointers against that place).
 */
struct jitdump_tail {
	int fd;			/* -1: not open */
	bool dead;		/* not a jitdump, or unreadable: not tried again */
	uint64_t off;		/* where the next record starts */
	uint8_t *eh;		/* the .eh_frame waiting for its code load, or NULL */
	size_t neh;
	bool tsc;		/* its times are the TSC's: not comparable with samples' */
	uint64_t fdes, refused;	/* FDEs compiled; refused (malformed, or CFI not compiled) */
};

/*
 * What a load said: [LO, HI) is new code, with ROWS (N: none, frame
 * pointers walk it).  0 or -ENOMEM.
 */
typedef int jitdump_code_fn(void *arg, uint64_t lo, uint64_t hi, const struct cfi_row *rows,
			    size_t n);

/*
 * Code NAME was loaded at [LO, HI) at TIME_NS (CLOCK_MONOTONIC; 0: the
 * file's clock is another), or (NAME NULL) the code at FROM moved there.
 * 0 or -ENOMEM.
 */
typedef int jitdump_name_fn(void *arg, uint64_t lo, uint64_t hi, uint64_t time_ns,
			    const char *name, uint64_t from);

/* Where a tail's reads go: the code's CFI, then its name, for each load in order. */
struct jitdump_sink {
	jitdump_code_fn *cfi;
	jitdump_name_fn *code;
	void *arg;
};

void jitdump_tail_init(struct jitdump_tail *t);
void jitdump_tail_release(struct jitdump_tail *t);

/*
 * Read what was appended to the jitdump at PATH since the last call (the
 * file is opened on the first), S told of each code load and move in
 * order.  A record cut short is read at the next call, once whole.  0, or
 * -ENOMEM.
 */
int jitdump_tail_read(struct jitdump_tail *t, const char *path, const struct jitdump_sink *s);

#endif /* PROF_JITDUMP_H */
