/* SPDX-License-Identifier: MIT */
/*
 * replay.c - run the fuzz entry point over files given on the command line
 * (the seed corpus, or crashes found by `make fuzz`), without libFuzzer, so
 * that `make check` exercises the harness with any compiler and sanitizer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		uint8_t *buf = NULL;
		size_t len = 0, cap = 0, n;

		if (!f) {
			perror(argv[i]);
			return 1;
		}
		do {
			if (len == cap) {
				cap = cap ? cap * 2 : 65536;
				buf = realloc(buf, cap);
				if (!buf)
					abort();
			}
			n = fread(buf + len, 1, cap - len, f);
			len += n;
		} while (n);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, len);
		free(buf);
	}
	printf("replayed %d inputs\n", argc - 1);
	return 0;
}
