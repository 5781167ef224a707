/* SPDX-License-Identifier: MIT */
/*
 * spool_read.c - the spool reader.  The file is untrusted: every length is
 * bounded before anything is allocated, every reference is checked, and a
 * block is validated whole (checksum, then a dry decode of every record)
 * before any of its records is handed out, so a caller sees exactly the
 * complete, valid blocks and learns where and why reading stopped.  It reads
 * block by block and never holds samples: memory grows with definitions
 * (processes, modules, frames, stacks), not with the length of a recording.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "internal.h"
#include "spool_columns.h"
#include "spool_file.h"
#include "spool_format.h"
#include "spool_reader.h"

static void stop(struct prof_spool *sp, enum prof_spool_state state, const char *fmt, ...)
	PROF_PRINTF(3, 4);

static void stop(struct prof_spool *sp, enum prof_spool_state state, const char *fmt, ...)
{
	va_list ap;

	sp->state = state;
	va_start(ap, fmt);
	vsnprintf(sp->reason, sizeof(sp->reason), fmt, ap);
	va_end(ap);
}

static int read_at(struct prof_spool *sp, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(sp->fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return error_set(-errno, "cannot read spool '%s'", sp->name);
		if (n == 0)
			return error_setx(-ENODATA, "spool '%s' shrank while being read",
					  sp->name);
		done += (size_t)n;
	}
	return 0;
}

static int reserve_bytes(uint8_t **p, size_t *cap, size_t need)
{
	void *q = *p;
	int r = grow_array(&q, cap, need ? need : 1, 1);

	*p = q;
	return r;
}

/* Decode and check the stored payload into sp->raw; NULL or the reason. */
static const char *unpack(struct prof_spool *sp, uint8_t enc, uint32_t stored, uint32_t raw)
{
	uLongf out = raw;

	if (enc == SPOOL_ENC_RAW) {
		memcpy(sp->raw, sp->stored, raw);
		return NULL;
	}
	if (enc == SPOOL_ENC_DEFLATE) {
		if (uncompress(sp->raw, &out, sp->stored, stored) != Z_OK || out != raw)
			return "payload does not inflate to its stated size";
		return NULL;
	}
	/* the columns of RAW bytes of records take at most that much more */
	out = (uLongf)raw + SPOOL_COLUMNS_SLACK;
	if (uncompress(sp->image, &out, sp->stored, stored) != Z_OK)
		return "payload does not inflate to a column image of its stated size";
	return spool_columns_join(sp->image, out, sp->raw, raw);
}

/*
 * Read, check and dry-decode the block at sp->offset.  1: it is now the
 * current block; 0: none (state says why); < 0: a real error.
 */
static int load_block(struct prof_spool *sp)
{
	uint8_t h[SPOOL_BLOCK_HEADER_LEN];
	uint64_t off = sp->offset, blk = sp->blocks + 1;
	struct spool_block_header bh;
	uint32_t stored, raw;
	struct spool_counts n = sp->n;
	bool header_crc_ok;
	struct prof_record ev;
	struct cursor c;
	const char *why;
	struct stat st;
	int r;

	if (fstat(sp->fd, &st) < 0)
		return error_set(-errno, "cannot read spool '%s'", sp->name);
	sp->file_size = (uint64_t)st.st_size;
	if (sp->file_size < off) {
		stop(sp, PROF_SPOOL_STATE_CORRUPT, "file shrank to %llu bytes, below offset %llu",
		     (unsigned long long)sp->file_size, (unsigned long long)off);
		return 0;
	}
	if (sp->file_size == off) {
		sp->state = PROF_SPOOL_STATE_READING;
		sp->reason[0] = '\0';
		return 0;
	}
	if (sp->file_size - off < sizeof(h)) {
		stop(sp, PROF_SPOOL_STATE_CUT, "block %llu at offset %llu: incomplete header",
		     (unsigned long long)blk, (unsigned long long)off);
		return 0;
	}
	r = read_at(sp, h, sizeof(h), off);
	if (r < 0)
		return r;
	header_crc_ok = spool_block_header_unpack(h, &bh);
	stored = bh.stored_len;
	raw = bh.raw_len;
	why = bh.magic != SPOOL_BLOCK_MAGIC ? "bad block magic"
	      : !header_crc_ok ? "header checksum mismatch"
	      : bh.encoding > (sp->major >= SPOOL_VERSION_MAJOR_COLUMNS ? SPOOL_ENC_COLUMNS
								       : SPOOL_ENC_DEFLATE)
			? "unknown block encoding"
	      : bh.reserved[0] || bh.reserved[1] || bh.reserved[2]
			? "reserved header bytes are not zero"
	      : stored > SPOOL_BLOCK_MAX || raw > SPOOL_BLOCK_MAX ? "block larger than 16 MiB"
	      : bh.encoding == SPOOL_ENC_RAW && raw != stored ? "raw block with two sizes"
	      : (uint64_t)raw > ((uint64_t)stored * SPOOL_DEFLATE_MAX_RATIO + 64) *
				(bh.encoding == SPOOL_ENC_COLUMNS ? 2 : 1)
			? "stated size beyond what deflate can produce"
			: NULL;
	if (why) {
		stop(sp, PROF_SPOOL_STATE_CORRUPT, "block %llu at offset %llu: %s",
		     (unsigned long long)blk, (unsigned long long)off, why);
		return 0;
	}
	if (sp->file_size - off - sizeof(h) < stored) {
		stop(sp, PROF_SPOOL_STATE_CUT, "block %llu at offset %llu: incomplete (%llu of %u bytes)",
		     (unsigned long long)blk, (unsigned long long)off,
		     (unsigned long long)(sp->file_size - off - sizeof(h)), stored);
		return 0;
	}
	if (reserve_bytes(&sp->stored, &sp->stored_cap, stored) < 0 ||
	    reserve_bytes(&sp->raw, &sp->raw_cap, raw) < 0 ||
	    (bh.encoding == SPOOL_ENC_COLUMNS &&
	     reserve_bytes(&sp->image, &sp->image_cap, (size_t)raw + SPOOL_COLUMNS_SLACK) < 0))
		return -ENOMEM;
	r = read_at(sp, sp->stored, stored, off + sizeof(h));
	if (r < 0)
		return r;
	if (bh.payload_crc != (uint32_t)crc32(0, sp->stored, stored))
		why = "payload checksum mismatch";
	else
		why = unpack(sp, bh.encoding, stored, raw);
	c = (struct cursor){ .p = sp->raw, .end = sp->raw + raw };
	while (!why && c.p < c.end) {
		const uint8_t *at = c.p;

		r = decode_record(sp, &c, &n, false, &ev);
		if (r == -ENOMEM)
			return r;
		if (r < 0) {
			stop(sp, PROF_SPOOL_STATE_CORRUPT, "block %llu at offset %llu: record at byte %zu: %s",
			     (unsigned long long)blk, (unsigned long long)off,
			     (size_t)(at - sp->raw), c.err ? c.err : "invalid");
			return 0;
		}
	}
	if (why) {
		stop(sp, PROF_SPOOL_STATE_CORRUPT, "block %llu at offset %llu: %s",
		     (unsigned long long)blk, (unsigned long long)off, why);
		return 0;
	}
	sp->raw_len = raw;
	sp->pos = 0;
	sp->batch_p = sp->batch_end = NULL;
	sp->offset = off + sizeof(h) + stored;
	sp->blocks = blk;
	return 1;
}

struct prof_spool *spool_reader_alloc(void)
{
	struct prof_spool *sp = calloc(1, sizeof(*sp));

	if (!sp)
		return NULL;
	sp->fd = -1;
	/* what the reader lends carries the library's size */
	sp->meta.sz = sizeof(sp->meta);
	sp->sample.sz = sizeof(sp->sample);
	sp->offcpu.sz = sizeof(sp->offcpu);
	sp->lost.sz = sizeof(sp->lost);
	sp->counters.sz = sizeof(sp->counters);
	return sp;
}

/* prof_spool_next() of one file, into the library's own record */
static int spool_next(struct prof_spool *sp, struct prof_record *ret)
{
	for (;;) {
		if (sp->batch_p < sp->batch_end) {
			const char *err;
			int r = decode_batch_next(sp, ret, &err);

			/* as below: the dry run checked it */
			if (r == -ENOMEM)
				return r;
			if (r < 0) {
				sp->batch_p = sp->batch_end = NULL;
				stop(sp, PROF_SPOOL_STATE_CORRUPT, "block %llu: %s, found only when "
				     "applied", (unsigned long long)sp->blocks, err);
				return error_setx(-EBADMSG, "spool '%s': %s", sp->name, sp->reason);
			}
			return 1;
		}
		while (sp->pos < sp->raw_len) {
			struct cursor c = { .p = sp->raw + sp->pos, .end = sp->raw + sp->raw_len };
			int r = decode_record(sp, &c, &sp->n, true, ret);

			/*
			 * The dry run passed, so only allocation can fail here;
			 * anything else is a bug of this reader, said as such.
			 */
			if (r == -ENOMEM)
				return r;
			if (r < 0) {
				stop(sp, PROF_SPOOL_STATE_CORRUPT, "block %llu: record at byte %zu: "
				     "%s, found only when applied", (unsigned long long)sp->blocks,
				     sp->pos, c.err ? c.err : "invalid");
				return error_setx(-EBADMSG, "spool '%s': %s", sp->name, sp->reason);
			}
			sp->pos = (size_t)(c.p - sp->raw);
			if (ret->type == PROF_RECORD_TRAILER) {
				sp->state = PROF_SPOOL_STATE_FINISHED;
				sp->pos = sp->raw_len;
			}
			if (ret->type)
				return 1;
		}
		if (sp->state == PROF_SPOOL_STATE_FINISHED || sp->state == PROF_SPOOL_STATE_CORRUPT)
			return 0;
		int r = load_block(sp);

		if (r <= 0)
			return r;
	}
}

int prof_spool_next(struct prof_spool *sp, struct prof_record *ret)
{
	SIZED(prof_record, rec);
	int r;

	if (!ret || ret->sz < sizeof(ret->sz))
		return error_setx(-EINVAL, "spool record: sz not set");
	r = sp->merge ? sp->merge_next(sp, &rec) : spool_next(sp, &rec);
	if (r > 0)
		sized_out(ret, &rec, sizeof(rec), "spool record");
	return r;
}

int prof_spool_open_fd(int fd, const char *name, struct prof_spool **ret)
{
	uint8_t h[SPOOL_HEADER_LEN];
	struct spool_file_header fh;
	struct prof_spool *sp;
	struct prof_record ev;
	struct stat st;
	int r;

	sp = spool_reader_alloc();
	if (!sp)
		return error_setx(-ENOMEM, "out of memory");
	sp->name = xstrdup(name);
	sp->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (!sp->name || sp->fd < 0) {
		r = sp->name ? error_set(-errno, "cannot read spool '%s'", name) : -ENOMEM;
		goto out_free;
	}
	if (fstat(sp->fd, &st) < 0) {
		r = error_set(-errno, "cannot read spool '%s'", name);
		goto out_free;
	}
	if (S_ISDIR(st.st_mode)) {
		r = error_setx(-EISDIR, "cannot read spool '%s': is a directory", name);
		goto out_free;
	}
	if ((uint64_t)st.st_size < sizeof(h)) {
		size_t have = (size_t)st.st_size;

		if (have == 0)
			r = error_setx(-ENODATA, "spool '%s' is empty", name);
		else if ((r = read_at(sp, h, have, 0)) < 0)
			;
		else if (memcmp(h, SPOOL_MAGIC, have < SPOOL_MAGIC_LEN ? have : SPOOL_MAGIC_LEN))
			r = error_setx(-EBADMSG, "'%s' is not a prof spool", name);
		else
			r = error_setx(-ENODATA, "spool '%s' is truncated inside its header", name);
		goto out_free;
	}
	r = read_at(sp, h, sizeof(h), 0);
	if (r < 0)
		goto out_free;
	if (!spool_file_header_unpack(h, &fh)) {
		r = error_setx(-EBADMSG, "'%s' is not a prof spool", name);
		goto out_free;
	}
	if (fh.major < SPOOL_VERSION_MAJOR_V1 || fh.major > SPOOL_VERSION_MAJOR || fh.flags) {
		r = error_setx(-ENOTSUP, "spool '%s' has format version %u.%u%s; this prof reads "
			       "1.x to %u.x (a newer prof wrote it)",
			       name, fh.major, fh.minor, fh.flags ? " with unknown flags" : "",
			       SPOOL_VERSION_MAJOR);
		goto out_free;
	}
	sp->major = (uint8_t)fh.major;
	sp->offset = sizeof(h);
	r = load_block(sp);
	if (r == 0) {
		r = sp->state == PROF_SPOOL_STATE_CORRUPT
			    ? error_setx(-EBADMSG, "spool '%s' is corrupt: %s", name, sp->reason)
			    : error_setx(-ENODATA, "spool '%s' ends before its metadata", name);
		goto out_free;
	}
	if (r < 0)
		goto out_free;
	/* the dry run guarantees the first record is META; apply it now */
	struct cursor c = { .p = sp->raw, .end = sp->raw + sp->raw_len };

	r = decode_record(sp, &c, &sp->n, true, &ev);
	if (r < 0)
		goto out_free;
	sp->pos = (size_t)(c.p - sp->raw);
	*ret = sp;
	return 0;
out_free:
	prof_spool_close(sp);
	return r;
}

int prof_spool_open(const char *path, struct prof_spool **ret)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int r;

	if (fd < 0)
		return error_set(-errno, "cannot open spool '%s'", path);
	r = prof_spool_open_fd(fd, path, ret);
	close(fd);
	return r;
}

int prof_spool_status(const struct prof_spool *sp, struct prof_spool_status *ret)
{
	struct prof_spool_status st = {
		.sz = sizeof(st),
		.state = sp->state,
		.blocks = sp->blocks,
		.offset = sp->offset,
		.file_size = sp->file_size,
		.reason = sp->reason,
	};

	return sized_out(ret, &st, sizeof(st), "spool status");
}

int prof_spool_has_writer(const struct prof_spool *sp)
{
	int r;

	if (sp->merge)	/* the last file read, or being read */
		return sp->merge_current(sp) ? prof_spool_has_writer(sp->merge_current(sp)) : 0;
	if (!(sp->meta.flags & PROF_META_LOCKED))
		return -ENOTSUP;
	r = spool_file_has_writer(sp->fd);
	return r < 0 ? -ENOTSUP : r;
}

const struct prof_meta *prof_spool_meta(const struct prof_spool *sp)
{
	return &sp->meta;
}

const struct prof_counters *prof_spool_counters(const struct prof_spool *sp)
{
	return sp->n.trailer && sp->state == PROF_SPOOL_STATE_FINISHED ? &sp->counters : NULL;
}

int prof_spool_counts(const struct prof_spool *sp, struct prof_spool_counts *ret)
{
	struct prof_spool_counts n = {
		.sz = sizeof(n),
		.processes = sp->n.processes,
		.threads = sp->n.threads,
		.modules = sp->n.modules,
		.frames = sp->n.frames,
		.stacks = sp->n.stacks,
		.symbols = sp->n.symbols,
		.samples = sp->nsamples,
		.offcpu = sp->noffcpu,
	};

	return sized_out(ret, &n, sizeof(n), "spool counts");
}

#define LOOKUP(sp, tab, id) ((id) >= 1 && (id) <= (sp)->n.tab ? &(sp)->tab[(id) - 1] : NULL)

const struct prof_process *prof_spool_process(const struct prof_spool *sp, uint32_t id)
{
	return LOOKUP(sp, processes, id);
}

const struct prof_thread *prof_spool_thread(const struct prof_spool *sp, uint32_t id)
{
	return LOOKUP(sp, threads, id);
}

const struct prof_module *prof_spool_module(const struct prof_spool *sp, uint32_t id)
{
	return LOOKUP(sp, modules, id);
}

const struct prof_frame *prof_spool_frame(const struct prof_spool *sp, uint32_t id)
{
	return LOOKUP(sp, frames, id);
}

const struct prof_stack_node *prof_spool_stack(const struct prof_spool *sp, uint32_t id)
{
	return LOOKUP(sp, stacks, id);
}

const struct prof_symbol *prof_spool_symbol(const struct prof_spool *sp, uint32_t id)
{
	return LOOKUP(sp, symbols, id);
}

static void free_str(const char *s)
{
	free((char *)s);
}

void prof_spool_close(struct prof_spool *sp)
{
	size_t i;

	if (!sp)
		return;
	if (sp->merge)
		sp->merge_free(sp->merge);
	if (sp->fd >= 0)
		close(sp->fd);
	/* tables may hold one partly filled entry past n after an ENOMEM: capacity-safe */
	for (i = 0; i < sp->n.processes; i++) {
		free_str(sp->processes[i].comm);
		free_str(sp->processes[i].exe);
	}
	for (i = 0; i < sp->n.threads; i++)
		free_str(sp->threads[i].name);
	for (i = 0; i < sp->n.modules; i++)
		free_str(sp->modules[i].path);
	for (i = 0; i < sp->n.symbols; i++)
		free_str(sp->symbols[i].name);
	for (i = 0; sp->argv && sp->argv[i]; i++)
		free(sp->argv[i]);
	free(sp->argv);
	free(sp->pids);
	free_str(sp->meta.event);
	free_str(sp->meta.hostname);
	free_str(sp->meta.kernel_release);
	free_str(sp->meta.arch);
	free_str(sp->meta.prof_version);
	free(sp->processes);
	free(sp->threads);
	free(sp->modules);
	free(sp->live_last);
	free(sp->live_prev);
	free(sp->frames);
	free(sp->stacks);
	free(sp->symbols);
	free(sp->name_syms);
	free(sp->stored);
	free(sp->image);
	free(sp->raw);
	free(sp->name);
	free(sp);
}
