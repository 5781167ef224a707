/* SPDX-License-Identifier: MIT */
/*
 * opts.c - the sized option structs of the API, taken as libbpf takes its
 * own: the caller says in sz how big its struct is, so that a program built
 * against an older prof.h (a smaller struct) gets the defaults of the
 * fields added since, and one built against a newer prof.h (a larger
 * struct) works as long as it leaves what this version does not know
 * unset.  Options are read only from the copy, so no field is read past
 * the caller's struct.
 */
#include <stdint.h>
#include <string.h>

#include "internal.h"

int opts_copy(void *dst, size_t size, const void *opts, const char *what)
{
	const uint8_t *p = opts;
	size_t sz, i;

	memset(dst, 0, size);
	if (opts) {
		memcpy(&sz, opts, sizeof(sz));
		if (sz < sizeof(size_t))
			return error_setx(-EINVAL, "%s: opts.sz not set", what);
		for (i = size; i < sz; i++)
			if (p[i])
				return error_setx(-EINVAL, "%s options of %zu bytes set fields this "
						  "prof does not know (it knows %zu bytes)", what,
						  sz, size);
		memcpy(dst, opts, sz < size ? sz : size);
	}
	memcpy(dst, &size, sizeof(size));
	return 0;
}
