/* SPDX-License-Identifier: MIT */
/*
 * replay.c - libFuzzer's part, played without it, so that make check runs
 * the fuzz harness with any compiler and sanitizer:
 *
 *   fuzz-replay [--mutate N] [--seed S] [--save FILE] INPUT...
 *
 * runs the entry point over each INPUT (the seed corpus, or crashes found
 * by `make fuzz`), and with --mutate over N mutants of each as well, made
 * by the structure-aware mutator (mutate.c) from seed S (default 1): each
 * from the one before, back to the input every fourth, with a crossover
 * with the next input every eighth.  The mutants are the same for the
 * same inputs and seed.  --save writes each mutant to FILE before it is
 * tried, so that the one that failed is left there.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1, const uint8_t *data2,
				 size_t size2, uint8_t *out, size_t max_out_size, unsigned int seed);

/* libFuzzer's -max_len for this corpus: inputs no larger than the largest seed's 4 KiB floor. */
#define MAX_LEN 4096

struct input {
	uint8_t *p;
	size_t len;
};

static uint64_t state = 1;

static uint64_t rnd(void)
{
	state = state * 6364136223846793005ull + 1442695040888963407ull;
	return state >> 17;
}

/* A byte-level mutation, as libFuzzer's would be: a bit, a byte, one more or one less. */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size)
{
	size_t at = size ? rnd() % size : 0;

	switch (rnd() % 4) {
	case 0:
		if (size)
			data[at] ^= (uint8_t)(1u << rnd() % 8);
		return size;
	case 1:
		if (size)
			data[at] = (uint8_t)rnd();
		return size;
	case 2:
		if (size >= max_size)
			return size;
		memmove(data + at + 1, data + at, size - at);
		data[at] = (uint8_t)rnd();
		return size + 1;
	default:
		if (size)
			memmove(data + at, data + at + 1, size - at - 1);
		return size ? size - 1 : 0;
	}
}

static int read_input(const char *path, struct input *in)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 0, n;

	if (!f) {
		perror(path);
		return -1;
	}
	in->p = NULL;
	in->len = 0;
	do {
		if (in->len == cap) {
			cap = cap ? cap * 2 : 65536;
			in->p = realloc(in->p, cap);
			if (!in->p)
				abort();
		}
		n = fread(in->p + in->len, 1, cap - in->len, f);
		in->len += n;
	} while (n);
	fclose(f);
	return 0;
}

static void save(const char *path, const uint8_t *p, size_t len)
{
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* N mutants of IN (OTHER for crossovers) through the entry point. */
static void mutants(const struct input *in, const struct input *other, unsigned long n,
		    const char *save_path)
{
	size_t max = in->len > MAX_LEN ? in->len : MAX_LEN, len = 0;
	uint8_t *buf = malloc(max), *out = malloc(max);
	unsigned long k;

	if (!buf || !out)
		abort();
	for (k = 0; k < n; k++) {
		if (k % 4 == 0) {
			memcpy(buf, in->p, in->len);
			len = in->len;
		}
		if (k % 8 == 7 && other) {
			size_t m = LLVMFuzzerCustomCrossOver(buf, len, other->p, other->len, out, max,
							     (unsigned int)rnd());

			if (m) {
				memcpy(buf, out, m);
				len = m;
			}
		} else {
			len = LLVMFuzzerCustomMutator(buf, len, max, (unsigned int)rnd());
		}
		save(save_path, buf, len);
		LLVMFuzzerTestOneInput(buf, len);
	}
	free(out);
	free(buf);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "mutate", required_argument, NULL, 'm' },
		{ "seed", required_argument, NULL, 's' },
		{ "save", required_argument, NULL, 'o' },
		{ 0 }
	};
	const char *save_path = NULL;
	unsigned long nmutants = 0;
	struct input *in;
	int i, n, c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'm')
			nmutants = strtoul(optarg, NULL, 10);
		else if (c == 's')
			state = strtoull(optarg, NULL, 10);
		else if (c == 'o')
			save_path = optarg;
		else
			return 64;
	}
	n = argc - optind;
	in = calloc(n ? (size_t)n : 1, sizeof(*in));
	if (!in)
		abort();
	for (i = 0; i < n; i++) {
		if (read_input(argv[optind + i], &in[i]) < 0)
			return 1;
		LLVMFuzzerTestOneInput(in[i].p, in[i].len);
	}
	for (i = 0; i < n && nmutants; i++)
		mutants(&in[i], n > 1 ? &in[(i + 1) % n] : NULL, nmutants, save_path);
	if (nmutants)
		printf("replayed %d inputs and %lu mutants of each\n", n, nmutants);
	else
		printf("replayed %d inputs\n", n);
	for (i = 0; i < n; i++)
		free(in[i].p);
	free(in);
	return 0;
}
