/* SPDX-License-Identifier: MIT */
/*
 * jvm.h - the JVMs a recording follows, asked over HotSpot's attach
 * protocol for the perf map that names their compiled methods.
 */
#ifndef PROF_JVM_H
#define PROF_JVM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct jvm;
struct proc;
struct proc_table;
struct unwind_result;

struct jvm_set {
	struct jvm *v;
	size_t n, cap;
	uint64_t maps;		/* perf maps the JVMs wrote when asked */
};

void jvm_set_init(struct jvm_set *s);

/* Close what is open, and remove the perf maps that exist only because prof asked. */
void jvm_set_release(struct jvm_set *s);

/*
 * Find the JVMs among PT's live processes and move each one's request on
 * without waiting: the recorder's loop calls it every JVM_POLL_NS.
 */
#define JVM_POLL_NS 100000000ull
void jvm_set_poll(struct jvm_set *s, const struct proc_table *pt, uint64_t now);

/*
 * A sample taken at TIME_NS in P, unwound to U: a frame of a JVM in code
 * its last perf map does not cover (compiled since) has it asked again.
 */
void jvm_set_sampled(struct jvm_set *s, struct proc *p, const struct unwind_result *u,
		     uint64_t time_ns);

/*
 * Ask every live JVM once more and wait (at most TIMEOUT_MS in all) for
 * the maps: before the names of a file are captured.
 */
#define JVM_REFRESH_MS 2000
void jvm_set_refresh(struct jvm_set *s, const struct proc_table *pt, int timeout_ms);

#endif /* PROF_JVM_H */
