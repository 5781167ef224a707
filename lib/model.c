/* SPDX-License-Identifier: MIT */
/*
 * model.c - names and small helpers for the data model of prof.h, shared by
 * the spool reader, the reports and the recorder so that every place prints
 * the same words for the same cause.
 */
#include "internal.h"

static const char *const unwind_error_names[PROF_UNWIND__COUNT] = {
	[PROF_UNWIND_STACK_COPY] = "stack-copy",
	[PROF_UNWIND_NO_CFI] = "no-cfi",
	[PROF_UNWIND_UNMAPPED] = "unmapped-pc",
	[PROF_UNWIND_NO_REGS] = "no-registers",
	[PROF_UNWIND_NO_STACK] = "no-stack",
	[PROF_UNWIND_DEPTH] = "depth-limit",
	[PROF_UNWIND_OTHER] = "other",
};

static const char *const fallback_names[PROF_FALLBACK__COUNT] = {
	[PROF_FALLBACK_FP_ANON] = "fp-anon",
	[PROF_FALLBACK_FP_NO_CFI] = "fp-no-cfi",
	[PROF_FALLBACK_DWFL] = "libdwfl",
};

static const char *const lost_kind_names[PROF_LOST__COUNT] = {
	[PROF_LOST_SAMPLES] = "samples",
	[PROF_LOST_RECORDS] = "records",
	[PROF_LOST_MMAP] = "mmap",
	[PROF_LOST_COMM] = "comm",
	[PROF_LOST_FORK] = "fork",
	[PROF_LOST_EXIT] = "exit",
};

const char *prof_unwind_error_name(unsigned cause)
{
	return cause < PROF_UNWIND__COUNT && unwind_error_names[cause]
		       ? unwind_error_names[cause] : "unknown";
}

const char *prof_unwind_fallback_name(unsigned fallback)
{
	return fallback < PROF_FALLBACK__COUNT && fallback_names[fallback]
		       ? fallback_names[fallback] : "unknown";
}

const char *prof_lost_kind_name(unsigned kind)
{
	return kind < PROF_LOST__COUNT && lost_kind_names[kind] ? lost_kind_names[kind]
								: "unknown";
}

uint64_t prof_counters_lost_total(const struct prof_counters *c)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 1; i < PROF_LOST__COUNT; i++)
		sum += c->lost[i];
	return sum;
}
