/* SPDX-License-Identifier: MIT */
/*
 * output_speedscope.c - the speedscope file format
 * (https://www.speedscope.app/file-format-schema.json): one sampled
 * profile per thread (or process) of a grouped profile, each distinct stack
 * a sample, root first, weighed in nanoseconds (its samples times the
 * recording's period, or the off-CPU or wall time it stands for).  A frame is a function with its file and line, an
 * inline chain giving a frame per function.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "report.h"

struct ss {
	const struct prof_spool *sp;
	struct prof_symbolizer *sym;
	struct strmap frame_ids;	/* name '\0' file '\0' line -> index + 1 */
	uint32_t nframes;
	char *frames_json;		/* the "frames" array's items */
	size_t frames_len;
	FILE *frames;
	uint32_t *path;
	size_t path_cap;
};

static int frame_index(struct ss *x, const struct prof_resolved_frame *f, uint32_t *ret)
{
	char key[4096];
	int n = snprintf(key, sizeof(key), "%s%c%s%c%" PRIu32, f->function, 0,
			 f->file_path ? f->file_path : "", 0, f->line);
	uint32_t id;

	if (n < 0 || (size_t)n >= sizeof(key))
		n = (int)sizeof(key) - 1;
	id = strmap_find(&x->frame_ids, key, (size_t)n);
	if (!id) {
		id = ++x->nframes;
		if (strmap_insert(&x->frame_ids, key, (size_t)n, id) < 0)
			return error_setx(-ENOMEM, "out of memory");
		fputs(id > 1 ? ",\n    {\"name\": " : "\n    {\"name\": ", x->frames);
		report_put_json_str(x->frames, f->function);
		if (f->file_path) {
			fputs(", \"file\": ", x->frames);
			report_put_json_str(x->frames, f->file_path);
		}
		if (f->line)
			fprintf(x->frames, ", \"line\": %" PRIu32, f->line);
		fputc('}', x->frames);
	}
	*ret = id - 1;
	return 0;
}

/* The frame indexes of STACK, root first, into OUT ("[a, b, c]"). */
static int put_stack(FILE *out, struct ss *x, uint32_t stack)
{
	const struct prof_stack_node *node;
	const struct prof_resolved_frame *const *rf;
	size_t n = 0, k, i;
	uint32_t s, idx;
	bool first = true;
	void *v;
	int r;

	for (s = stack; s; s = node->parent) {
		node = prof_spool_stack(x->sp, s);
		if (!node)
			return error_setx(-EINVAL, "stack %" PRIu32 " is not defined", s);
		v = x->path;
		r = grow_array(&v, &x->path_cap, n + 1, sizeof(*x->path));
		x->path = v;
		if (r < 0)
			return r;
		x->path[n++] = node->frame;
	}
	fputc('[', out);
	for (k = n; k-- > 0;) {		/* root first */
		r = prof_symbolizer_frame_inlines(x->sym, x->path[k], &rf, &i);
		if (r < 0)
			return r;
		for (size_t j = 0; j < i; j++) {
			r = frame_index(x, rf[j], &idx);
			if (r < 0)
				return r;
			fprintf(out, "%s%" PRIu32, first ? "" : ", ", idx);
			first = false;
		}
	}
	fputc(']', out);
	return 0;
}

int output_speedscope(FILE *out, const struct prof_spool *sp, const struct prof_profile *p,
		      struct prof_symbolizer *sym, const struct prof_report_opts *o)
{
	const struct prof_meta *m = prof_spool_meta(sp);
	uint64_t period = m->freq_hz ? 1000000000u / m->freq_hz : m->period;
	/* samples weigh the recording's period; time is time already */
	uint64_t mult = p->weight == PROF_WEIGHT_CPU ? period : 1;
	struct ss x = { .sp = sp, .sym = sym };
	char *profiles = NULL;
	size_t plen = 0, g, c;
	FILE *prof;
	int r = 0;

	if (p->by == PROF_GROUP_NONE)
		return error_setx(-EINVAL, "speedscope needs a profile grouped by thread or process");
	x.frames = open_memstream(&x.frames_json, &x.frames_len);
	prof = open_memstream(&profiles, &plen);
	if (!x.frames || !prof) {
		r = error_setx(-ENOMEM, "out of memory");
		goto out;
	}
	for (g = 1; g < p->ngroups && r == 0; g++) {
		const struct profile_group *gr = &p->groups[g];
		uint64_t total = 0;
		bool first = true;

		fprintf(prof, "%s\n    {\"type\": \"sampled\", \"name\": ", g > 1 ? "," : "");
		{
			char *name = NULL;

			if (asprintf(&name, "%s (%s %" PRId32 ")", *gr->name ? gr->name : "[unknown]",
				     p->by == PROF_GROUP_THREAD ? "tid" : "pid", gr->id) < 0) {
				r = error_setx(-ENOMEM, "out of memory");
				break;
			}
			report_put_json_str(prof, name);
			free(name);
		}
		fputs(", \"unit\": \"nanoseconds\", \"startValue\": 0,\n     \"samples\": [", prof);
		for (c = 1; c < p->ncells && r == 0; c++) {
			if (p->cells[c].group != g)
				continue;
			fputs(first ? "" : ", ", prof);
			first = false;
			r = put_stack(prof, &x, p->cells[c].stack);
		}
		fputs("],\n     \"weights\": [", prof);
		first = true;
		for (c = 1; c < p->ncells && r == 0; c++) {
			if (p->cells[c].group != g)
				continue;
			fprintf(prof, "%s%" PRIu64, first ? "" : ", ", p->cells[c].count * mult);
			total += p->cells[c].count * mult;
			first = false;
		}
		fprintf(prof, "],\n     \"endValue\": %" PRIu64 "}", total);
	}
	if (fclose(prof) == EOF || fclose(x.frames) == EOF)
		r = r ? r : error_setx(-ENOMEM, "out of memory");
	prof = x.frames = NULL;
	if (r == 0) {
		fputs("{\n  \"$schema\": \"https://www.speedscope.app/file-format-schema.json\",\n"
		      "  \"name\": ", out);
		report_put_json_str(out, o->title ? o->title : "prof");
		fputs(",\n  \"exporter\": ", out);
		report_put_json_str(out, "prof");
		fputs(",\n  \"activeProfileIndex\": 0,\n  \"shared\": {\"frames\": [", out);
		fwrite(x.frames_json, 1, x.frames_len, out);
		fputs("\n  ]},\n  \"profiles\": [", out);
		fwrite(profiles, 1, plen, out);
		fputs("\n  ]\n}\n", out);
	}
out:
	if (prof)
		fclose(prof);
	if (x.frames)
		fclose(x.frames);
	free(profiles);
	free(x.frames_json);
	free(x.path);
	strmap_release(&x.frame_ids);
	return r;
}
