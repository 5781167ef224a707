/* SPDX-License-Identifier: MIT */
/*
 * report_gzip.c - an export written gzip'd, as go tool pprof and the
 * Firefox Profiler read it (zlib's gzip wrapper).
 */
#include <errno.h>
#include <string.h>
#include <zlib.h>

#include "internal.h"
#include "report.h"

int report_write_gzip(FILE *out, const void *data, size_t len)
{
	uint8_t buf[16384];
	z_stream z;
	int zr;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return error_setx(-ENOMEM, "cannot start gzip compression");
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len;
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		zr = deflate(&z, Z_FINISH);
		fwrite(buf, 1, sizeof(buf) - z.avail_out, out);
	} while (zr == Z_OK);
	deflateEnd(&z);
	return zr == Z_STREAM_END ? 0 : error_setx(-EIO, "gzip compression failed");
}
