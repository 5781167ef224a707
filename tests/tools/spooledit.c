/* SPDX-License-Identifier: MIT */
/*
 * spooledit - change a field of one record inside a spool's blocks and
 * redo the lengths, compression and checksums around it, so that the
 * reader gets past the checksums to the change: how the CLI tests and the
 * fuzz seeds make a spool that only a record's decoder can find wrong.
 *
 *   spooledit --record TAG[:N] --set FIELD=VALUE [--set ...] IN OUT
 *
 * TAG is a record kind as prof-spool(5) names it (OFFCPU) and N which of
 * them, from 1 (the default) in file order; FIELD is a field name of that
 * page (duration).  VALUE is a number (decimal, 0x hex, or 2^K), stored in
 * the shortest form; a signed field (a time, a pid, a period delta) takes
 * a signed value.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/spool_image.h"

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "spooledit: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL;
	size_t cap = 0, n;

	if (!f)
		die("cannot open '%s'", path);
	*len = 0;
	do {
		if (*len == cap) {
			cap = cap ? cap * 2 : 65536;
			p = realloc(p, cap);
			if (!p)
				die("out of memory reading '%s'", path);
		}
		n = fread(p + *len, 1, cap - *len, f);
		*len += n;
	} while (n);
	if (ferror(f))
		die("cannot read '%s'", path);
	fclose(f);
	return p;
}

/* VALUE as stored in a field of type TYPE: 2^K, or a number, zigzagged if signed. */
static uint64_t parse_value(const char *s, enum field_type type)
{
	char *end;
	uint64_t v;

	errno = 0;
	if (!strncmp(s, "2^", 2)) {
		v = strtoull(s + 2, &end, 10);
		if (v > 63)
			die("'%s' does not fit in 64 bits", s);
		v = 1ull << v;
	} else if (type == FIELD_SV) {
		v = spool_zigzag(strtoll(s, &end, 0));
	} else {
		v = strtoull(s, &end, 0);
	}
	if (errno || end == s || *end)
		die("bad value '%s'", s);
	return v;
}

/* The record TAG[:N] of IMG, or die. */
static struct image_record *find(struct spool_image *img, const char *spec)
{
	char name[32];
	unsigned long nth = 1;
	const char *colon = strchr(spec, ':');
	size_t len = colon ? (size_t)(colon - spec) : strlen(spec), b, i;
	uint64_t tag;

	if (len >= sizeof(name))
		die("unknown record kind '%s'", spec);
	memcpy(name, spec, len);
	name[len] = '\0';
	tag = record_tag_of(name);
	if (!tag)
		die("unknown record kind '%s'", name);
	if (colon && (nth = strtoul(colon + 1, NULL, 10)) == 0)
		die("bad record number in '%s'", spec);
	for (b = 0; b < img->nblocks; b++)
		for (i = 0; i < img->blocks[b].nrecs; i++)
			if (img->blocks[b].recs[i].tag == tag && !--nth)
				return &img->blocks[b].recs[i];
	die("the spool has no record '%s'", spec);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "record", required_argument, NULL, 'r' },
		{ "set", required_argument, NULL, 's' },
		{ 0 }
	};
	const char *record = NULL, *sets[16];
	struct spool_image img;
	struct image_record *r;
	size_t nsets = 0, len, i;
	uint8_t *in, *out;
	FILE *f;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'r')
			record = optarg;
		else if (c == 's' && nsets < sizeof(sets) / sizeof(sets[0]))
			sets[nsets++] = optarg;
		else
			die("%s", "usage: spooledit --record TAG[:N] --set FIELD=VALUE... IN OUT");
	}
	if (!record || !nsets || argc - optind != 2)
		die("%s", "usage: spooledit --record TAG[:N] --set FIELD=VALUE... IN OUT");
	in = read_file(argv[optind], &len);
	if (spool_image_parse(&img, in, len, 0) < 0)
		die("'%s' is not a spool", argv[optind]);
	r = find(&img, record);
	for (i = 0; i < nsets; i++) {
		char field[64];
		const char *eq = strchr(sets[i], '=');
		struct record_field fl;

		if (!eq || (size_t)(eq - sets[i]) >= sizeof(field))
			die("bad --set '%s': FIELD=VALUE", sets[i]);
		memcpy(field, sets[i], (size_t)(eq - sets[i]));
		field[eq - sets[i]] = '\0';
		if (!image_record_field(r, field, &fl))
			die("the record has no field '%s'", field);
		if (image_record_set(r, &fl, parse_value(eq + 1, fl.type)) < 0)
			die("%s", "out of memory");
	}
	if (spool_image_build(&img, &out, &len) < 0)
		die("%s", "out of memory");
	f = fopen(argv[optind + 1], "wb");
	if (!f || fwrite(out, 1, len, f) != len || fclose(f))
		die("cannot write '%s'", argv[optind + 1]);
	spool_image_release(&img);
	free(out);
	free(in);
	return 0;
}
