/* SPDX-License-Identifier: MIT */
/*
 * model.c - names and small helpers for the data model of prof.h, shared by
 * the spool reader, the reports and the recorder so that every place prints
 * the same words for the same cause; and which weights a recording allows.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static const char *const unwind_error_names[UNWIND_ERROR_COUNT] = {
	[PROF_UNWIND_STACK_COPY] = "stack-copy",
	[PROF_UNWIND_NO_CFI] = "no-cfi",
	[PROF_UNWIND_UNMAPPED] = "unmapped-pc",
	[PROF_UNWIND_NO_REGS] = "no-registers",
	[PROF_UNWIND_NO_STACK] = "no-stack",
	[PROF_UNWIND_DEPTH] = "depth-limit",
	[PROF_UNWIND_OTHER] = "other",
};

static const char *const fallback_names[FALLBACK_COUNT] = {
	[PROF_FALLBACK_FP_ANON] = "fp-anon",
	[PROF_FALLBACK_FP_NO_CFI] = "fp-no-cfi",
	[PROF_FALLBACK_DWFL] = "full-regs",
};

static const char *const lost_kind_names[LOST_KIND_COUNT] = {
	[PROF_LOST_SAMPLES] = "samples",
	[PROF_LOST_RECORDS] = "records",
	[PROF_LOST_MMAP] = "mmap",
	[PROF_LOST_COMM] = "comm",
	[PROF_LOST_FORK] = "fork",
	[PROF_LOST_EXIT] = "exit",
	[PROF_LOST_SWITCH_SAMPLES] = "switch-samples",
	[PROF_LOST_SWITCH_RECORDS] = "switch-records",
};

static const char *const offcpu_state_names[OFFCPU_STATE_COUNT] = {
	[PROF_OFFCPU_STATE_BLOCKED] = "blocked",
	[PROF_OFFCPU_STATE_RUNNABLE] = "runnable",
};

const char *prof_unwind_error_name(unsigned cause)
{
	return cause < UNWIND_ERROR_COUNT ? unwind_error_names[cause] : NULL;
}

const char *prof_unwind_fallback_name(unsigned fallback)
{
	return fallback < FALLBACK_COUNT ? fallback_names[fallback] : NULL;
}

const char *prof_lost_kind_name(unsigned kind)
{
	return kind < LOST_KIND_COUNT ? lost_kind_names[kind] : NULL;
}

static const char *const weight_names[WEIGHT_COUNT] = {
	[PROF_WEIGHT_CPU] = "cpu",
	[PROF_WEIGHT_OFFCPU] = "off-cpu",
	[PROF_WEIGHT_WALL] = "wall",
};

const char *prof_weight_name(unsigned weight)
{
	return weight < WEIGHT_COUNT ? weight_names[weight] : NULL;
}

int name_parse(const char *const *names, size_t n, const char *name, const char *what,
	       const char *plural)
{
	char list[256] = "";
	size_t i, len = 0;

	for (i = 0; i < n; i++)
		if (name && names[i] && !strcmp(name, names[i]))
			return (int)i;
	for (i = 0; i < n; i++)
		if (names[i] && len < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
						len ? ", " : "", names[i]);
	return error_setx(-EINVAL, "'%s' is not a %s; the %s are: %s", name ? name : "", what,
			  plural, list);
}

int prof_weight_parse(const char *name)
{
	return name_parse(weight_names, WEIGHT_COUNT, name, "weight", "weights");
}

int meta_check_weight(const struct prof_meta *m, enum prof_weight w)
{
	if ((unsigned)w >= WEIGHT_COUNT)
		return error_setx(-EINVAL, "unknown weight %u", (unsigned)w);
	if (w != PROF_WEIGHT_CPU && !(m->flags & PROF_META_OFFCPU))
		return error_setx(-EINVAL, "a report by %s time needs off-CPU intervals, and this "
				  "spool has none", w == PROF_WEIGHT_WALL ? "wall" : "off-CPU");
	/* a clock's period is ns; a cycle count is not time */
	if (w == PROF_WEIGHT_WALL && strcmp(m->event, "cpu-clock") && strcmp(m->event, "task-clock"))
		return error_setx(-EINVAL, "a report by wall time adds up the periods of CPU samples "
				  "as time, and this spool's event, %s, does not count time",
				  m->event);
	return 0;
}

const char *prof_offcpu_state_name(unsigned state)
{
	return state < OFFCPU_STATE_COUNT ? offcpu_state_names[state] : NULL;
}

void counters_add(struct prof_counters *sum, const struct prof_counters *c, int sign)
{
	uint64_t k = sign < 0 ? UINT64_MAX : 1;	/* times -1, modulo 2^64 */
	size_t i;

	sum->samples += k * c->samples;
	sum->sample_events += k * c->sample_events;
	for (i = 0; i < PROF_SLOTS; i++)
		sum->lost[i] += k * c->lost[i];
	sum->empty_stacks += k * c->empty_stacks;
	sum->truncated_stacks += k * c->truncated_stacks;
	for (i = 0; i < PROF_SLOTS; i++)
		sum->unwind_errors[i] += k * c->unwind_errors[i];
	sum->lifecycle_gaps += k * c->lifecycle_gaps;
	sum->reconciliations += k * c->reconciliations;
	sum->frames += k * c->frames;
	for (i = 0; i < PROF_SLOTS; i++)
		sum->fallback_frames[i] += k * c->fallback_frames[i];
	sum->offcpu_intervals += k * c->offcpu_intervals;
	sum->offcpu_ns += k * c->offcpu_ns;
	sum->offcpu_unsampled += k * c->offcpu_unsampled;
	sum->offcpu_truncated += k * c->offcpu_truncated;
	sum->switch_events += k * c->switch_events;
	sum->idle_samples += k * c->idle_samples;
	sum->python_frames += k * c->python_frames;
	sum->python_stale += k * c->python_stale;
	sum->python_unread += k * c->python_unread;
	sum->jit_map_names += k * c->jit_map_names;
	sum->jitdump_names += k * c->jitdump_names;
	/* files of one recording sample the same CPUs: a sum counts them once */
	if (sign > 0 && c->cpus > sum->cpus)
		sum->cpus = c->cpus;
}

uint64_t prof_counters_lost_total(const struct prof_counters *c)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 1; i < PROF_SLOTS; i++)
		sum += c->lost[i];
	return sum;
}
