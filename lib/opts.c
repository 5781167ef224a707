/* SPDX-License-Identifier: MIT */
/*
 * opts.c - the sized option structs of the API, taken as libbpf takes its
 * own: the caller says in sz how big its struct is, so that a program built
 * against an older prof.h (a smaller struct) gets the defaults of the
 * fields added since, and one built against a newer prof.h (a larger
 * struct) works as long as it leaves what this version does not know
 * unset.  Options are read only from the copy, so no field is read past
 * the caller's struct.  The other sized structs of the API cross it the
 * same way: those the library reads (sized_in()) and those it fills
 * (sized_out()).
 */
#include <stdint.h>
#include <string.h>

#include "internal.h"

/* Larger than any struct of the API will be; what passes it is no size. */
#define SIZED_MAX (64u << 10)

/* opts_copy() and sized_in(): KIND " options" for options, "" for the others */
static int copy_sized(void *dst, size_t size, const void *src, const char *what,
		      const char *kind)
{
	const uint8_t *p = src;
	size_t sz, i;

	memset(dst, 0, size);
	if (src) {
		memcpy(&sz, src, sizeof(sz));
		if (sz < sizeof(size_t))
			return error_setx(-EINVAL, "%s: sz not set", what);
		if (sz > SIZED_MAX)
			return error_setx(-EINVAL, "%s: sz %zu is not the size of a struct", what,
					  sz);
		for (i = size; i < sz; i++)
			if (p[i])
				return error_setx(-EINVAL, "%s%s of %zu bytes set%s fields this "
						  "prof does not know (it knows %zu bytes)", what,
						  kind, sz, *kind ? "" : "s", size);
		memcpy(dst, src, sz < size ? sz : size);
	}
	memcpy(dst, &size, sizeof(size));
	return 0;
}

int opts_copy(void *dst, size_t size, const void *opts, const char *what)
{
	return copy_sized(dst, size, opts, what, " options");
}

int sized_in(void *dst, size_t size, const void *src, const char *what)
{
	if (!src)
		return error_setx(-EINVAL, "no %s", what);
	return copy_sized(dst, size, src, what, "");
}

int sized_out(void *dst, const void *src, size_t size, const char *what)
{
	size_t sz;

	if (!dst)
		return error_setx(-EINVAL, "no %s to fill", what);
	memcpy(&sz, dst, sizeof(sz));
	if (sz < sizeof(size_t))
		return error_setx(-EINVAL, "%s: sz not set", what);
	/* no struct of the API comes near: an sz never set, not a size */
	if (sz > SIZED_MAX)
		return error_setx(-EINVAL, "%s: sz %zu is not the size of a struct", what, sz);
	/* the caller's sz stays: it says how big the caller's struct is */
	memcpy((uint8_t *)dst + sizeof(sz), (const uint8_t *)src + sizeof(sz),
	       (sz < size ? sz : size) - sizeof(sz));
	if (sz > size)
		memset((uint8_t *)dst + size, 0, sz - size);
	return 0;
}
