/* SPDX-License-Identifier: MIT */
/*
 * error.c - the thread-local error detail behind prof_errmsg(), the log
 * callback, and the few allocation helpers every module uses.  Nothing here
 * writes to a file descriptor: the library never prints.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

#define ERRMSG_MAX 1024

static __thread char errmsg[ERRMSG_MAX];

static prof_log_fn log_fn;
static enum prof_log_level log_max = PROF_LOG_WARN;
static void *log_ctx;

const char *prof_errmsg(void)
{
	return errmsg;
}

void prof_errmsg_clear(void)
{
	errmsg[0] = '\0';
}

static int error_vset(int err, bool with_errno, const char *fmt, va_list ap)
{
	int n = vsnprintf(errmsg, sizeof(errmsg), fmt, ap);

	if (with_errno && n >= 0 && (size_t)n < sizeof(errmsg))
		snprintf(errmsg + n, sizeof(errmsg) - n, ": %s", strerror(err < 0 ? -err : err));
	return err;
}

int error_set(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vset(err, true, fmt, ap);
	va_end(ap);
	return err;
}

int error_setx(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vset(err, false, fmt, ap);
	va_end(ap);
	return err;
}

void prof_set_log_fn(prof_log_fn fn, enum prof_log_level max_level, void *ctx)
{
	log_fn = fn;
	log_max = max_level;
	log_ctx = ctx;
}

void log_msg(enum prof_log_level level, const char *fmt, ...)
{
	char buf[ERRMSG_MAX];
	va_list ap;

	if (!log_fn || level > log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_fn(level, buf, log_ctx);
}

int grow_array(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t ncap = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / size)
			return error_setx(-ENOMEM, "out of memory");
		ncap *= 2;
	}
	p = realloc(*arr, ncap * size);
	if (!p)
		return error_setx(-ENOMEM, "out of memory");
	*arr = p;
	*cap = ncap;
	return 0;
}

int grow_array_zeroed(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t old = *cap;
	int r = grow_array(arr, cap, need, size);

	if (r == 0 && *cap > old)
		memset((char *)*arr + old * size, 0, (*cap - old) * size);
	return r;
}

/* Past this a block's pages are mapped in one call (see calloc_written()). */
#define POPULATE_MIN_BYTES (256u << 10)

/*
 * A big block's pages, mapped by one call before they are zeroed: calloc()
 * zeroes a block carved from memory the heap got earlier and never
 * touched, which faults it a page at a time (1.95 us a page here, where
 * one call maps them at 1.17, and zeroing a mapped page takes 0.1).
 */
void *calloc_written(size_t n, size_t size)
{
	uintptr_t lo, hi, page = 4096;
	void *p;

	if (n && size > SIZE_MAX / n)
		return NULL;
	if (n * size < POPULATE_MIN_BYTES)
		return calloc(n, size);
	p = malloc(n * size);
	if (!p)
		return NULL;
	lo = ((uintptr_t)p + page - 1) & ~(page - 1);
	hi = ((uintptr_t)p + n * size) & ~(page - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);	/* best effort */
	memset(p, 0, n * size);
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s ? s : "");

	if (!p)
		error_setx(-ENOMEM, "out of memory");
	return p;
}
