/* SPDX-License-Identifier: MIT */
/*
 * diff.c - two profiles side by side (prof report --diff): per function,
 * its share of the samples in each (self samples, as top counts them) and
 * the change, biggest change first; or the two counts of each folded stack,
 * "stack BASE NEW", as difffolded.pl writes them; or a differential flame
 * graph: the new profile's graph, each frame coloured by how the share of
 * its path changed since the base.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "report.h"

struct diff_row {
	char *key;		/* name '\0' module (functions), or the folded stack */
	size_t key_len;
	uint64_t count[2];	/* base, new */
	double share[2];	/* percent of each side's samples */
};

struct diff {
	struct diff_row *rows;	/* [0] unused */
	size_t nrows, cap;
	struct strmap ids;
};

static int add_row(struct diff *d, const char *key, size_t len, int side, uint64_t count)
{
	uint32_t id = strmap_find(&d->ids, key, len);
	void *v;

	if (!id) {
		size_t next = d->nrows ? d->nrows : 1;

		v = d->rows;
		if (grow_array(&v, &d->cap, next + 1, sizeof(*d->rows)) < 0)
			return error_setx(-ENOMEM, "out of memory");
		d->rows = v;
		d->rows[next] = (struct diff_row){ .key = malloc(len + 1), .key_len = len };
		if (!d->rows[next].key || strmap_insert(&d->ids, key, len, (uint32_t)next) < 0) {
			free(d->rows[next].key);
			return error_setx(-ENOMEM, "out of memory");
		}
		memcpy(d->rows[next].key, key, len);
		d->rows[next].key[len] = '\0';
		d->nrows = next + 1;
		id = (uint32_t)next;
	}
	d->rows[id].count[side] += count;
	return 0;
}

/* The functions of A, by self samples, as rows of side SIDE. */
static int add_funcs(struct diff *d, const struct agg *a, int side)
{
	size_t i, n, m;
	char *key;
	int r = 0;

	for (i = 1; i < a->nfuncs && r == 0; i++) {
		const struct agg_func *f = &a->funcs[i];

		n = strlen(f->name);
		m = strlen(f->module);
		key = malloc(n + m + 2);
		if (!key)
			return error_setx(-ENOMEM, "out of memory");
		memcpy(key, f->name, n + 1);
		memcpy(key + n + 1, f->module, m + 1);
		r = add_row(d, key, n + m + 1, side, f->self);
		free(key);
	}
	return r;
}

struct stack_ctx {
	struct diff *d;
	int side;
};

static int add_stack(struct agg *a, const uint32_t *path, uint32_t depth, uint64_t self,
		     void *ctx)
{
	struct stack_ctx *c = ctx;
	size_t len;
	char *buf = NULL;
	uint32_t k;
	FILE *mem;
	int r;

	mem = open_memstream(&buf, &len);
	if (!mem)
		return error_setx(-ENOMEM, "out of memory");
	for (k = 0; k < depth; k++) {
		if (k)
			fputc(';', mem);
		report_put_name(mem, a->funcs[a->nodes[path[k]].func].name, true);
	}
	if (fclose(mem) == EOF)
		r = error_setx(-ENOMEM, "out of memory");
	else
		r = add_row(c->d, buf, len, c->side, self);
	free(buf);
	return r;
}

/* The folded stacks of A as rows of side SIDE. */
static int add_stacks(struct diff *d, struct agg *a, int side)
{
	struct stack_ctx c = { .d = d, .side = side };

	return agg_each_stack(a, add_stack, &c);
}

/* The key of node N of A in its parent's children: parent's key, name, module, inlined. */
static char *path_key(const struct agg *a, uint32_t parent_key, uint32_t n, size_t *ret_len)
{
	const struct agg_func *f = &a->funcs[a->nodes[n].func];
	char *key;
	int len = asprintf(&key, "%" PRIu32 "%c%s%c%s%c%c", parent_key, 0, f->name, 0, f->module,
			   0, f->inlined ? 'i' : 'f');

	if (len < 0)
		return NULL;
	*ret_len = (size_t)len;
	return key;
}

/*
 * For each node of NEW, the percent of BASE's total on the same path of
 * functions from the root (0 where BASE never went), into *RET (indexed by
 * node; the caller frees it).  Paths are matched by name, module and
 * inlining, so two builds of a program compare.  0 or -ENOMEM.
 */
static int base_shares(const struct agg *base, const struct agg *new, double **ret)
{
	struct strmap ids = { 0 };
	uint32_t *base_of = calloc(new->nnodes ? new->nnodes : 1, sizeof(*base_of));
	double *pct = calloc(new->nnodes ? new->nnodes : 1, sizeof(*pct));
	size_t i, len;
	char *key;
	int r = base_of && pct ? 0 : -ENOMEM;

	/* nodes come after their parents: a parent's key is its own id */
	for (i = 1; i < base->nnodes && r == 0; i++) {
		key = path_key(base, base->nodes[i].parent, (uint32_t)i, &len);
		r = key ? strmap_insert(&ids, key, len, (uint32_t)i) : -ENOMEM;
		free(key);
	}
	for (i = 1; i < new->nnodes && r == 0; i++) {
		uint32_t parent = new->nodes[i].parent;

		if (parent && !base_of[parent])
			continue;	/* a path BASE never took: nor its children */
		key = path_key(new, base_of[parent], (uint32_t)i, &len);
		if (!key) {
			r = -ENOMEM;
			break;
		}
		base_of[i] = strmap_find(&ids, key, len);
		free(key);
		if (base_of[i])
			pct[i] = report_pct(base->nodes[base_of[i]].total, base->total);
	}
	strmap_release(&ids);
	free(base_of);
	if (r < 0) {
		free(pct);
		return error_setx(-ENOMEM, "out of memory");
	}
	*ret = pct;
	return 0;
}

/* The differential flame graph: NEW's frames, coloured by the change since BASE. */
static int write_svg(FILE *out, const struct prof_report_diff_side sides[2], struct agg a[2],
		     const struct prof_report_opts *o)
{
	struct svg_graph *g = NULL;
	double *pct = NULL;
	int r = base_shares(&a[0], &a[1], &pct);

	if (r == 0)
		r = svg_graph_new(&g, o, a[1].weight, a[1].total);
	if (r == 0)
		r = svg_graph_add_diff(g, &a[1], pct, sides[0].name);
	if (r == 0)
		r = svg_graph_write(g, out, sides[1].spool);
	svg_graph_free(g);
	free(pct);
	return r;
}

static double change(const struct diff_row *x)
{
	return x->share[1] - x->share[0];
}

static int by_change(const void *pa, const void *pb)
{
	const struct diff_row *x = pa, *y = pb;
	double cx = fabs(change(x)), cy = fabs(change(y));

	if (cx != cy)
		return cx > cy ? -1 : 1;
	return strcmp(x->key, y->key);
}

static int by_key(const void *pa, const void *pb)
{
	const struct diff_row *x = pa, *y = pb;

	return strcmp(x->key, y->key);
}

static void print_table(FILE *out, const struct diff *d)
{
	size_t i;

	fprintf(out, "  base%%    new%%   change  function  module\n");
	for (i = 1; i < d->nrows; i++) {
		const struct diff_row *x = &d->rows[i];
		const char *module = x->key + strlen(x->key) + 1;

		fprintf(out, "%6.2f%% %6.2f%% %+7.2f%%  ", x->share[0], x->share[1], change(x));
		report_put_name(out, x->key, false);
		if (*module) {
			fputs("  ", out);
			report_put_name(out, module, false);
		}
		fputc('\n', out);
	}
}

static void print_json(FILE *out, const struct diff *d, const char *const names[2],
		       const struct prof_report_diff_side sides[2])
{
	enum prof_weight w = sides[0].profile->weight;
	size_t i;
	int s;

	fputs("{\n  \"schema\": \"prof-report-diff/1\",\n", out);
	fprintf(out, "  \"weight\": \"%s\",\n  \"unit\": \"%s\",\n", prof_weight_name(w),
		w == PROF_WEIGHT_CPU ? "samples" : "ns");
	for (s = 0; s < 2; s++) {
		fprintf(out, "  \"%s\": {\"spool\": ", s ? "new" : "base");
		report_put_json_str(out, names[s]);
		fprintf(out, ", \"samples\": %" PRIu64 ", \"total\": %" PRIu64 "},\n",
			sides[s].profile->samples, sides[s].profile->total);
	}
	fputs("  \"functions\": [", out);
	for (i = 1; i < d->nrows; i++) {
		const struct diff_row *x = &d->rows[i];

		fputs(i > 1 ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
		report_put_json_str(out, x->key);
		fputs(", \"module\": ", out);
		report_put_json_str(out, x->key + strlen(x->key) + 1);
		fprintf(out, ", \"base_self\": %" PRIu64 ", \"new_self\": %" PRIu64
			", \"base_percent\": %.4f, \"new_percent\": %.4f, \"change\": %.4f}",
			x->count[0], x->count[1], x->share[0], x->share[1], change(x));
	}
	fputs(d->nrows > 1 ? "\n  ]\n}\n" : "]\n}\n", out);
}

int prof_report_diff(FILE *out, const struct prof_report_diff_side *base,
		     const struct prof_report_diff_side *new_side, enum prof_report_format format,
		     double *ret_max_growth)
{
	struct prof_report_diff_side sides[2];
	const char *names[2];
	uint64_t totals[2];
	struct diff d = { 0 };
	bool folded = format == PROF_REPORT_FOLDED;
	double max = 0.0;
	struct agg a[2];
	size_t i;
	int r = 0, s;

	r = sized_in(&sides[0], sizeof(sides[0]), base, "diff's base") ?:
	    sized_in(&sides[1], sizeof(sides[1]), new_side, "diff's new side");
	if (r < 0)
		return r;
	if (format != PROF_REPORT_TOP && format != PROF_REPORT_FOLDED &&
	    format != PROF_REPORT_JSON && format != PROF_REPORT_SVG)
		return error_setx(-EINVAL, "a diff is shown as top, folded, json or svg, not %s",
				  name_or_unknown(prof_report_format_name(format)));
	memset(a, 0, sizeof(a));
	for (s = 0; s < 2 && r == 0; s++) {
		if (sides[s].profile->by != PROF_GROUP_NONE) {
			r = error_setx(-EINVAL, "a diff does not split by thread or process");
			break;
		}
		names[s] = sides[s].name ? sides[s].name : "";
		if (sides[s].profile->weight != sides[0].profile->weight) {
			r = error_setx(-EINVAL, "a diff compares profiles weighed alike");
			break;
		}
		totals[s] = sides[s].profile->total;
		r = agg_build(&a[s], sides[s].spool, sides[s].profile, sides[s].sym,
			      folded ? 0 : AGG_INLINED);
		if (r == 0)
			r = folded ? add_stacks(&d, &a[s], s) : add_funcs(&d, &a[s], s);
	}
	for (i = 1; i < d.nrows && r == 0; i++) {
		for (s = 0; s < 2; s++)
			d.rows[i].share[s] = report_pct(d.rows[i].count[s], totals[s]);
		if (change(&d.rows[i]) > max)
			max = change(&d.rows[i]);
	}
	if (r == 0 && d.nrows > 1)
		qsort(d.rows + 1, d.nrows - 1, sizeof(*d.rows), folded ? by_key : by_change);
	if (r == 0 && folded)
		for (i = 1; i < d.nrows; i++)
			fprintf(out, "%s %" PRIu64 " %" PRIu64 "\n", d.rows[i].key,
				report_folded_count(a[0].weight, d.rows[i].count[0]),
				report_folded_count(a[0].weight, d.rows[i].count[1]));
	else if (r == 0 && format == PROF_REPORT_JSON)
		print_json(out, &d, names, sides);
	else if (r == 0 && format == PROF_REPORT_SVG)
		r = write_svg(out, sides, a, &(struct prof_report_opts){
			.sz = sizeof(struct prof_report_opts), .format = PROF_REPORT_SVG,
			.title = sides[1].name });
	else if (r == 0)
		print_table(out, &d);
	if (r == 0 && ret_max_growth)
		*ret_max_growth = max;
	errno = 0;
	if (r == 0 && (fflush(out) == EOF || ferror(out)))
		r = error_set(errno ? -errno : -EIO, "cannot write the report");
	for (s = 0; s < 2; s++)
		agg_release(&a[s]);
	for (i = 1; i < d.nrows; i++)
		free(d.rows[i].key);
	free(d.rows);
	strmap_release(&d.ids);
	return r;
}
