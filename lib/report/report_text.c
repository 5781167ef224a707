/* SPDX-License-Identifier: MIT */
/*
 * report_text.c - how every report format writes text: percents, names
 * made safe for a terminal or a folded line, UTF-8 checked byte by byte,
 * JSON strings, and a function as top and tree show it.  It calls nothing
 * else of the report, so the aggregate and every writer can use it without
 * a circle back to report.c.
 */
#include <inttypes.h>
#include <string.h>

#include "internal.h"
#include "report.h"

double report_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

void report_put_name(FILE *out, const char *name, bool folded)
{
	const unsigned char *p;

	for (p = (const unsigned char *)name; *p; p++)
		fputc(*p < 0x20 || *p == 0x7f || (folded && *p == ';') ? '?' : *p, out);
}

size_t report_utf8_len(const unsigned char *p)
{
	size_t n, i;

	if (*p < 0x80)
		return 1;
	if (*p >= 0xc2 && *p <= 0xdf)
		n = 2;
	else if (*p >= 0xe0 && *p <= 0xef)
		n = 3;
	else if (*p >= 0xf0 && *p <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((n == 3 && *p == 0xe0 && p[1] < 0xa0) || (n == 3 && *p == 0xed && p[1] >= 0xa0) ||
	    (n == 4 && *p == 0xf0 && p[1] < 0x90) || (n == 4 && *p == 0xf4 && p[1] >= 0x90))
		return 0;
	return n;
}

void report_put_count(FILE *out, enum prof_weight w, uint64_t count, int width)
{
	if (w == PROF_WEIGHT_CPU)
		fprintf(out, "%*" PRIu64, width, count);
	else
		fprintf(out, "%*.2f", width, (double)count / 1e6);
}

const char *report_count_unit(enum prof_weight w)
{
	return w == PROF_WEIGHT_CPU ? "samples" : "ms";
}

uint64_t report_folded_count(enum prof_weight w, uint64_t count)
{
	return w == PROF_WEIGHT_CPU ? count : (count + 500) / 1000;
}

#define INLINED_MARK " [inlined]"

size_t report_func_width(const struct agg_func *f)
{
	size_t w = strlen(f->name) + (f->inlined ? strlen(INLINED_MARK) : 0);
	char buf[32];

	if (f->file && f->line)
		w += strlen(f->file) + (size_t)snprintf(buf, sizeof(buf), " (:%" PRIu32 ")", f->line);
	return w;
}

size_t report_put_func(FILE *out, const struct agg_func *f)
{
	report_put_name(out, f->name, false);
	if (f->inlined)
		fputs(INLINED_MARK, out);
	if (f->file && f->line) {
		fputs(" (", out);
		report_put_name(out, f->file, false);
		fprintf(out, ":%" PRIu32 ")", f->line);
	}
	return report_func_width(f);
}

void report_put_json_str(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n;

	fputc('"', out);
	while (*p) {
		n = report_utf8_len(p);
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\u%04x", *p);
		else if (n)
			fwrite(p, 1, n, out);
		else
			fputs("\\ufffd", out);	/* not UTF-8: the replacement character */
		p += n ? n : 1;
	}
	fputc('"', out);
}
