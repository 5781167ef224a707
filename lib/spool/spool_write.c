/* SPDX-License-Identifier: MIT */
/*
 * spool_write.c - the spool writer: records are encoded into a block
 * buffer, and a full (or flushed) block is compressed, checksummed and
 * handed to the sink in one write, so that a reader never has to trust a
 * half-written block.  Frames and stack nodes are interned here; processes,
 * threads and modules get sequential ids and are tracked by the caller.
 * It checks every reference it writes: a spool it produced always reads back.
 */
#include <fcntl.h>
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "intern.h"
#include "internal.h"
#include "spool_columns.h"
#include "spool_format.h"
#include "spool_writer.h"

#define DEFAULT_BLOCK_BYTES (64u << 10)
#define MAX_BLOCK_BYTES (8u << 20)
#define MAX_STRING (64u << 10)

struct buf {
	uint8_t *p;
	size_t len, cap;
};

struct prof_spool_writer {
	struct prof_sink sink;
	int fd;			/* ours to close, or -1 (a caller's sink or descriptor) */
	int *fd_ctx;		/* the sink's ctx when it writes a descriptor */
	char *path;
	size_t block_bytes;
	int level;		/* deflate level, 1 to 9; -1: store raw */
	struct libdeflate_compressor *deflate;	/* of LEVEL, made at the first block */
	struct spool_columns columns;	/* the open block's records by field */
	struct buf block;	/* records of the open block */
	struct buf rec;		/* the record being encoded */
	/*
	 * Version 3: the FRAMEs and the STACK nodes defined since the last
	 * other record, not yet in the block.  They go out as one FRAME and
	 * one STACK record (the frames first: the nodes refer to them) before
	 * any other record, most often the SAMPLE whose walk defined them,
	 * which saves each its own tag and length.
	 */
	struct buf frame_batch;	/* FRAME bodies */
	struct held_node {
		uint32_t parent_d;	/* the parent, counted back from the node's id */
		uint32_t frame;		/* counted back when written: frames come first */
	} *held;
	size_t nheld, held_cap;
	struct buf stack_batch;	/* STACK bodies, encoded when written */
	uint8_t *out;		/* header + compressed block */
	size_t out_cap;
	uint64_t bytes;		/* handed to the sink */
	uint64_t block_samples;	/* samples in the open block */
	uint64_t samples_written;	/* samples in blocks the sink took whole */
	uint64_t time_unit;	/* ns per unit of the stored times */
	uint64_t clock;		/* time of the last timed record, in units */
	uint64_t last_period;
	uint32_t nprocesses, nthreads, nmodules, nframes, nstacks;
	uint32_t frames_at_last_stack;	/* nframes when node nstacks was made: no node
					 * holds a frame made since */
	struct intern_map frame_ids;
	struct intern_map stack_ids;
	/* version 3's distances: what the record of each kind before held */
	uint8_t last_frame_kind;
	uint32_t last_frame_ref;
	uint64_t last_frame_v;	/* its stored address (~addr for the kernel) */
	uint8_t last_sym_scope;
	uint32_t last_sym_id;
	uint64_t last_sym_start;
	/*
	 * Symbol names written, by number from 1: the same function of one
	 * file is named again for each process that maps it, blocks apart,
	 * where deflate's window no longer sees the first one.
	 */
	struct intern_map name_ids;	/* (hash, length) -> name number */
	char **names;
	size_t names_cap;
	uint32_t nnames;
	int error;		/* sticky: after a sink failure nothing is written */
	bool finished;
	bool offcpu;		/* version 2: off-CPU records allowed */
};

static int buf_reserve(struct buf *b, size_t more)
{
	void *p = b->p;
	int r;

	r = grow_array(&p, &b->cap, b->len + more, 1);
	b->p = p;
	return r;
}

static void put_u(struct buf *b, uint64_t v)
{
	/* callers reserve; a record's fixed part never exceeds its reserve */
	b->len += spool_put_uvarint(b->p + b->len, v);
}

static void put_s(struct buf *b, int64_t v)
{
	put_u(b, spool_zigzag(v));
}

static void put_bytes(struct buf *b, const void *p, size_t n)
{
	put_u(b, n);
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static size_t str_len(const char *s)
{
	return s ? strlen(s) : 0;
}

static int check_str(const char *what, const char *s)
{
	if (str_len(s) > MAX_STRING)
		return error_setx(-EINVAL, "%s longer than %u bytes", what, MAX_STRING);
	return 0;
}

static void put_str(struct buf *b, const char *s)
{
	put_bytes(b, s ? s : "", str_len(s));
}

/*
 * The varints of a record's fixed part, at most: a MODULE's eleven take 90
 * bytes at the most.  What a record has beyond them (strings, META's and
 * the TRAILER's lists) its encoder asks for as extra.
 */
#define REC_FIXED_MAX 96

/* Start a record whose body needs at most EXTRA bytes beyond REC_FIXED_MAX of varints. */
static int rec_begin(struct prof_spool_writer *w, size_t extra)
{
	if (w->error)
		return w->error;
	if (w->finished)
		return error_setx(-EINVAL, "spool writer already finished");
	w->rec.len = 0;
	return buf_reserve(&w->rec, REC_FIXED_MAX + extra);
}

/*
 * Times are stored as deltas in units of time_unit: at 1 us a sample at
 * 999 Hz costs a two-byte delta whose low byte barely varies, where
 * nanoseconds would add two bytes of timer jitter to every sample.
 */
static void put_time(struct prof_spool_writer *w, uint64_t time_ns)
{
	uint64_t units = time_ns / w->time_unit;

	put_s(&w->rec, (int64_t)(units - w->clock));
	w->clock = units;
}

static int sink_write(struct prof_spool_writer *w, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = w->sink.write(w->sink.ctx, p, n);

		if (k == -EINTR)
			continue;
		if (k < 0) {
			w->error = (int)k;
			return error_set((int)k, "cannot write spool '%s'", w->path);
		}
		if (k == 0) {
			w->error = -EIO;
			return error_setx(-EIO, "cannot write spool '%s': short write", w->path);
		}
		p += k;
		n -= (size_t)k;
		w->bytes += (uint64_t)k;
	}
	return 0;
}

/*
 * Blocks are compressed whole by libdeflate, into the zlib stream (RFC
 * 1950) that any zlib reads: on a make -j2's spool it took 45% of zlib's
 * time at level 1 for a 2% smaller file, and at level 6 as long as zlib's
 * level 1 for a 6% smaller one (SPOOL_DEFLATE_LEVEL is the level it uses).
 * What it compresses is the block's records split into columns
 * (spool_columns.h), 18% fewer bytes than the records in their order.
 */
static int block_flush(struct prof_spool_writer *w)
{
	size_t stored = 0, need, bound = 0;
	uint8_t enc = SPOOL_ENC_RAW;
	const uint8_t *in = w->block.p;
	size_t in_len = w->block.len;
	uint8_t *h;
	int r;

	if (w->error)
		return w->error;
	if (!w->block.len)
		return 0;
	if (w->level >= 0 && !w->deflate) {
		w->deflate = libdeflate_alloc_compressor(w->level);
		if (!w->deflate)
			return error_setx(-ENOMEM, "out of memory");
	}
	if (w->deflate) {
		r = spool_columns_split(&w->columns, w->block.p, w->block.len);
		if (r < 0)
			return error_setx(r, "out of memory");
		if (r) {
			in = w->columns.image.p;
			in_len = w->columns.image.len;
		}
		bound = libdeflate_zlib_compress_bound(w->deflate, in_len);
	}
	need = SPOOL_BLOCK_HEADER_LEN + (bound > w->block.len ? bound : w->block.len);
	if (need > w->out_cap) {
		void *p = w->out;

		r = grow_array(&p, &w->out_cap, need, 1);
		w->out = p;
		if (r < 0)
			return r;
	}
	h = w->out;
	if (w->deflate) {
		stored = libdeflate_zlib_compress(w->deflate, in, in_len,
						  h + SPOOL_BLOCK_HEADER_LEN, bound);
		if (stored && stored < w->block.len)
			enc = in == w->block.p ? SPOOL_ENC_DEFLATE : SPOOL_ENC_COLUMNS;
	}
	if (enc == SPOOL_ENC_RAW) {
		stored = w->block.len;
		memcpy(h + SPOOL_BLOCK_HEADER_LEN, w->block.p, stored);
	}
	spool_block_header_pack(h, &(struct spool_block_header){
		.stored_len = (uint32_t)stored, .raw_len = (uint32_t)w->block.len, .encoding = enc,
		.payload_crc = (uint32_t)crc32(0, h + SPOOL_BLOCK_HEADER_LEN, (uInt)stored) });
	r = sink_write(w, h, SPOOL_BLOCK_HEADER_LEN + stored);
	if (r == 0)
		w->samples_written += w->block_samples;
	w->block_samples = 0;
	w->block.len = 0;
	return r;
}

/* Append a record of TAG, body B, to the block, closing the block when full. */
static int block_append(struct prof_spool_writer *w, enum spool_tag tag, const struct buf *b)
{
	int r = buf_reserve(&w->block, b->len + 2 * SPOOL_VARINT_MAX);

	/* sticky: the records after a lost one would count their distances wrong */
	if (r < 0)
		return w->error = r;
	put_u(&w->block, tag);
	put_u(&w->block, b->len);
	memcpy(w->block.p + w->block.len, b->p, b->len);
	w->block.len += b->len;
	if (tag == SPOOL_TAG_SAMPLE)
		w->block_samples++;
	if (w->block.len >= w->block_bytes)
		return block_flush(w);
	return 0;
}

/* The FRAMEs held back, into the block as one record. */
static int frames_emit(struct prof_spool_writer *w)
{
	int r;

	if (!w->frame_batch.len)
		return 0;
	r = block_append(w, SPOOL_TAG_FRAME, &w->frame_batch);
	w->frame_batch.len = 0;
	return r;
}

/* The FRAMEs and then the STACK nodes held back, into the block as a record each. */
static int batches_emit(struct prof_spool_writer *w)
{
	size_t i;
	int r = frames_emit(w);

	if (r < 0 || !w->nheld)
		return r;
	r = buf_reserve(&w->stack_batch, w->nheld * 2 * SPOOL_VARINT_MAX);
	if (r < 0)
		return w->error = r;
	w->stack_batch.len = 0;
	for (i = 0; i < w->nheld; i++) {
		/*
		 * Every frame is written by now: the newest is 0.  The frame
		 * first, its low bit set when a parent other than the node
		 * just before follows: a node extending that one is a byte.
		 */
		uint64_t frame_d = w->nframes - w->held[i].frame;
		bool other = w->held[i].parent_d != 1;

		put_u(&w->stack_batch, frame_d << 1 | other);
		if (other)
			put_u(&w->stack_batch, w->held[i].parent_d);
	}
	w->nheld = 0;
	return block_append(w, SPOOL_TAG_STACK, &w->stack_batch);
}

/* At most, held back: records whose length is a two-byte uvarint */
#define BATCH_BYTES 16000
#define BATCH_NODES 1500

/* Append the record in w->rec to the block, closing the block when full. */
static int rec_emit(struct prof_spool_writer *w, enum spool_tag tag)
{
	int r;

	if (tag == SPOOL_TAG_FRAME) {
		if (w->frame_batch.len + w->rec.len > BATCH_BYTES) {
			r = frames_emit(w);
			if (r < 0)
				return r;
		}
		r = buf_reserve(&w->frame_batch, w->rec.len);
		if (r < 0)
			return w->error = r;
		memcpy(w->frame_batch.p + w->frame_batch.len, w->rec.p, w->rec.len);
		w->frame_batch.len += w->rec.len;
		return 0;
	}
	return batches_emit(w) ?: block_append(w, tag, &w->rec);
}

/* Hold back a STACK node: PARENT_D as written, FRAME its id. */
static int stack_hold(struct prof_spool_writer *w, uint32_t parent_d, uint32_t frame)
{
	void *p = w->held;
	int r;

	if (w->nheld == BATCH_NODES) {
		r = batches_emit(w);
		if (r < 0)
			return r;
	}
	r = grow_array(&p, &w->held_cap, w->nheld + 1, sizeof(*w->held));
	w->held = p;
	if (r < 0)
		return w->error = r;
	w->held[w->nheld++] = (struct held_node){ parent_d, frame };
	return 0;
}

static int write_meta(struct prof_spool_writer *w, const struct prof_meta *m)
{
	size_t extra = 0, i;
	int r;

	for (i = 0; i < m->argc; i++) {
		r = check_str("argument", m->argv[i]);
		if (r < 0)
			return r;
		extra += str_len(m->argv[i]) + SPOOL_VARINT_MAX;
	}
	extra += m->npids * SPOOL_VARINT_MAX;
	extra += str_len(m->event) + str_len(m->hostname) + str_len(m->kernel_release) +
		 str_len(m->arch) + str_len(m->prof_version);
	if (m->time_unit_ns > 1000000000u)
		return error_setx(-EINVAL, "time unit above one second");
	w->time_unit = m->time_unit_ns ? m->time_unit_ns : 1000;
	if (extra > SPOOL_BLOCK_MAX / 2)
		return error_setx(-EINVAL, "recording metadata too large");
	r = rec_begin(w, extra + 8 * SPOOL_VARINT_MAX);
	if (r < 0)
		return r;
	put_u(&w->rec, m->flags);
	put_u(&w->rec, m->argc);
	for (i = 0; i < m->argc; i++)
		put_str(&w->rec, m->argv[i]);
	put_u(&w->rec, m->npids);
	for (i = 0; i < m->npids; i++)
		put_s(&w->rec, m->pids[i]);
	put_u(&w->rec, m->wall_start_ns);
	put_u(&w->rec, m->mono_start_ns);
	put_u(&w->rec, w->time_unit);
	put_str(&w->rec, m->event);
	put_u(&w->rec, m->freq_hz);
	put_u(&w->rec, m->period);
	put_u(&w->rec, m->stack_bytes);
	put_str(&w->rec, m->hostname);
	put_str(&w->rec, m->kernel_release);
	put_str(&w->rec, m->arch);
	put_u(&w->rec, m->page_size);
	put_str(&w->rec, m->prof_version);
	w->clock = m->mono_start_ns / w->time_unit;
	return rec_emit(w, SPOOL_TAG_META);
}

static ssize_t fd_write(void *ctx, const void *buf, size_t len)
{
	ssize_t n = write(*(int *)ctx, buf, len);

	return n < 0 ? -errno : n;
}

/* A writer into SINK, its errors naming the spool NAME. */
static int writer_new(const struct prof_sink *sink_arg, const char *name,
		      const struct prof_meta *meta_arg, const struct prof_spool_writer_opts *opts,
		      struct prof_spool_writer **ret)
{
	struct prof_spool_writer_opts o;
	struct prof_spool_writer *w;
	struct prof_sink sink;
	struct prof_meta meta_copy;
	const struct prof_meta *meta = &meta_copy;
	uint8_t header[SPOOL_HEADER_LEN];
	int r;

	if (!ret)
		return error_setx(-EINVAL, "spool writer: nowhere to put it");
	r = sized_in(&sink, sizeof(sink), sink_arg, "spool sink") ?:
	    sized_in(&meta_copy, sizeof(meta_copy), meta_arg, "spool metadata") ?:
	    opts_copy(&o, sizeof(o), opts, "spool writer");
	if (r < 0)
		return r;
	if (!sink.write)
		return error_setx(-EINVAL, "spool writer: a sink without a write function");
	if (o.block_bytes > MAX_BLOCK_BYTES || o.compress_level < 0 || o.compress_level > 9)
		return error_setx(-EINVAL, "spool writer: block size above %u or bad level",
				  MAX_BLOCK_BYTES);
	w = calloc(1, sizeof(*w));
	if (!w)
		return error_setx(-ENOMEM, "out of memory");
	w->sink = sink;
	w->fd = -1;
	w->block_bytes = o.block_bytes ? o.block_bytes : DEFAULT_BLOCK_BYTES;
	w->level = o.no_compress ? -1 : o.compress_level ? o.compress_level : SPOOL_DEFLATE_LEVEL;
	intern_init(&w->frame_ids);
	intern_init(&w->stack_ids);
	intern_init(&w->name_ids);
	w->path = xstrdup(name);
	if (!w->path) {
		r = -ENOMEM;
		goto out_free;
	}
	w->offcpu = meta->flags & PROF_META_OFFCPU;
	spool_file_header_pack(header, &(struct spool_file_header){
		.major = SPOOL_VERSION_MAJOR,
		.minor = meta->flags & PROF_META_SYSTEM ? SPOOL_VERSION_MINOR_SYSTEM
							: SPOOL_VERSION_MINOR });
	r = sink_write(w, header, sizeof(header));
	if (r < 0)
		goto out_free;
	r = write_meta(w, meta);
	if (r < 0)
		goto out_free;
	/* META goes out at once: a reader (tail) can start from it */
	r = prof_spool_writer_flush(w);
	if (r < 0)
		goto out_free;
	*ret = w;
	return 0;
out_free:
	w->sink.write = NULL;	/* nothing more reaches a sink that failed */
	prof_spool_writer_close(w);
	return r;
}

int prof_spool_writer_open_sink(const struct prof_sink *sink, const struct prof_meta *meta,
				const struct prof_spool_writer_opts *opts,
				struct prof_spool_writer **ret)
{
	return writer_new(sink, "<writer>", meta, opts, ret);
}

int spool_writer_open_fd(int fd, const char *name, const struct prof_meta *meta,
			 const struct prof_spool_writer_opts *opts, struct prof_spool_writer **ret)
{
	SIZED(prof_sink, sink);
	int *fdp = malloc(sizeof(*fdp));
	int r;

	if (!fdp)
		return error_setx(-ENOMEM, "out of memory");
	*fdp = fd;
	sink.write = fd_write;
	sink.ctx = fdp;
	r = writer_new(&sink, name, meta, opts, ret);
	if (r < 0) {
		free(fdp);
		return r;
	}
	(*ret)->fd_ctx = fdp;
	return 0;
}

int prof_spool_writer_open(const char *path, const struct prof_meta *meta,
			   const struct prof_spool_writer_opts *opts,
			   struct prof_spool_writer **ret)
{
	int fd, r;

	if (!path)
		return error_setx(-EINVAL, "spool writer: missing path");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return error_set(-errno, "cannot create spool '%s'", path);
	r = spool_writer_open_fd(fd, path, meta, opts, ret);
	if (r < 0) {
		close(fd);
		return r;
	}
	(*ret)->fd = fd;
	return 0;
}

static int64_t new_id(uint32_t *count, const char *what)
{
	if (*count == UINT32_MAX - 1)
		return error_setx(-ENOSPC, "spool writer: %s id space exhausted", what);
	return ++*count;
}

static int check_ref(uint32_t ref, uint32_t count, bool zero_ok, const char *what)
{
	if ((ref == 0 && zero_ok) || (ref >= 1 && ref <= count))
		return 0;
	return error_setx(-EINVAL, "spool writer: undefined %s %u", what, ref);
}

int64_t prof_spool_writer_add_process(struct prof_spool_writer *w, const struct prof_process *arg)
{
	struct prof_process copy;
	const struct prof_process *p = &copy;
	int r = sized_in(&copy, sizeof(copy), arg, "process") ?: check_str("comm", p->comm) ?:
		check_str("exe", p->exe) ?:
		rec_begin(w, str_len(p->comm) + str_len(p->exe));

	if (r < 0)
		return r;
	put_time(w, p->time_ns);
	put_s(&w->rec, p->pid);
	put_s(&w->rec, p->ppid);
	put_u(&w->rec, p->start_time_ns);
	put_str(&w->rec, p->comm);
	put_str(&w->rec, p->exe);
	r = rec_emit(w, SPOOL_TAG_PROCESS);
	return r < 0 ? r : new_id(&w->nprocesses, "process");
}

int64_t prof_spool_writer_add_thread(struct prof_spool_writer *w, const struct prof_thread *arg)
{
	struct prof_thread copy;
	const struct prof_thread *t = &copy;
	int r = sized_in(&copy, sizeof(copy), arg, "thread") ?:
		check_ref(t->process, w->nprocesses, false, "process") ?:
		check_str("thread name", t->name) ?: rec_begin(w, str_len(t->name));

	if (r < 0)
		return r;
	put_time(w, t->time_ns);
	put_u(&w->rec, t->process);
	put_s(&w->rec, t->tid);
	put_str(&w->rec, t->name);
	r = rec_emit(w, SPOOL_TAG_THREAD);
	return r < 0 ? r : new_id(&w->nthreads, "thread");
}

int64_t prof_spool_writer_add_module(struct prof_spool_writer *w, const struct prof_module *arg)
{
	struct prof_module copy;
	const struct prof_module *m = &copy;
	int r = sized_in(&copy, sizeof(copy), arg, "module") ?:
		check_ref(m->process, w->nprocesses, true, "process") ?:
		check_str("module path", m->path);

	if (r < 0)
		return r;
	if (m->end <= m->start || m->build_id_len > PROF_BUILD_ID_MAX)
		return error_setx(-EINVAL, "spool writer: module '%s': empty range or bad build-id",
				  m->path ? m->path : "");
	r = rec_begin(w, str_len(m->path) + m->build_id_len);
	if (r < 0)
		return r;
	put_time(w, m->time_ns);
	put_u(&w->rec, m->process);
	put_u(&w->rec, m->start);
	put_u(&w->rec, m->end - m->start);
	put_u(&w->rec, m->pgoff);
	put_u(&w->rec, m->flags);
	put_u(&w->rec, m->dev_major);
	put_u(&w->rec, m->dev_minor);
	put_u(&w->rec, m->inode);
	put_bytes(&w->rec, m->build_id, m->build_id_len);
	put_str(&w->rec, m->path);
	r = rec_emit(w, SPOOL_TAG_MODULE);
	return r < 0 ? r : new_id(&w->nmodules, "module");
}

/*
 * A frame's stored address: kernel addresses sit at the top of the space,
 * ~addr is a short varint.  Less the one of the frame before when it has
 * the same kind and reference (a walk's frames are mostly in one module);
 * marker and state frames store theirs whole, so that it can be checked.
 */
static uint64_t frame_addr_delta(struct prof_spool_writer *w, const struct prof_frame *f)
{
	uint64_t v = f->kind == PROF_FRAME_KERNEL ? ~f->addr : f->addr;
	uint64_t base = 0;

	if (f->kind <= PROF_FRAME_ANON && f->kind == w->last_frame_kind &&
	    f->ref == w->last_frame_ref)
		base = w->last_frame_v;
	w->last_frame_kind = f->kind;
	w->last_frame_ref = f->ref;
	w->last_frame_v = v;
	return v - base;
}

int64_t prof_spool_writer_intern_frame(struct prof_spool_writer *w, const struct prof_frame *arg)
{
	struct prof_frame copy;
	const struct prof_frame *f = &copy;
	uint64_t key;
	uint32_t id;
	int64_t id64;
	int r = sized_in(&copy, sizeof(copy), arg, "frame");

	if (r < 0)
		return r;
	key = (uint64_t)f->kind << 32 | f->ref;
	id = intern_find(&w->frame_ids, key, f->addr);
	if (id)
		return id;
	switch (f->kind) {
	case PROF_FRAME_USER:
		r = check_ref(f->ref, w->nmodules, false, "module");
		break;
	case PROF_FRAME_ANON:
		r = check_ref(f->ref, w->nprocesses, false, "process");
		break;
	case PROF_FRAME_STATE:
		if (!w->offcpu || !f->addr || f->addr >= OFFCPU_STATE_COUNT) {
			r = error_setx(-EINVAL, "spool writer: a state frame needs an off-CPU "
				       "spool and a state");
			break;
		}
		/* fall through */
	case PROF_FRAME_KERNEL:
	case PROF_FRAME_TRUNCATED:
		r = f->ref ? error_setx(-EINVAL, "spool writer: frame kind %u takes no ref",
					f->kind) : 0;
		break;
	default:
		r = error_setx(-EINVAL, "spool writer: unknown frame kind %u", f->kind);
	}
	if (!r)
		r = rec_begin(w, 0);
	if (r < 0)
		return r;
	put_u(&w->rec, f->kind);
	put_u(&w->rec, f->ref);
	put_s(&w->rec, (int64_t)frame_addr_delta(w, f));
	r = rec_emit(w, SPOOL_TAG_FRAME);
	if (r < 0)
		return r;
	id64 = new_id(&w->nframes, "frame");
	if (id64 < 0)
		return id64;
	r = intern_insert(&w->frame_ids, key, f->addr, w->nframes);
	return r < 0 ? r : id64;
}

int64_t prof_spool_writer_intern_stack(struct prof_spool_writer *w, uint32_t parent, uint32_t frame)
{
	uint32_t id;
	int64_t id64;
	int r;

	/*
	 * The newest node has no children yet, nor has a frame made since it
	 * any node: a new stack's nodes after its first new one are new, and
	 * not looked for (each lookup a miss of the CPU's caches on a big
	 * recording).
	 */
	if (!((parent && parent == w->nstacks) || frame > w->frames_at_last_stack) &&
	    (id = intern_find(&w->stack_ids, parent, frame)))
		return id;
	r = check_ref(parent, w->nstacks, true, "stack") ?:
	    check_ref(frame, w->nframes, false, "frame") ?: rec_begin(w, 0);
	if (r < 0)
		return r;
	/* counted back from the new node's id (mostly 1) and, later, the newest frame */
	r = stack_hold(w, w->nstacks + 1 - parent, frame);
	if (r < 0)
		return r;
	id64 = new_id(&w->nstacks, "stack");
	if (id64 < 0)
		return id64;
	w->frames_at_last_stack = w->nframes;
	r = intern_insert(&w->stack_ids, parent, frame, w->nstacks);
	return r < 0 ? r : id64;
}

void spool_writer_prefetch_frame(const struct prof_spool_writer *w, const struct prof_frame *f)
{
	intern_prefetch(&w->frame_ids, (uint64_t)f->kind << 32 | f->ref, f->addr);
}

void spool_writer_prefetch_stack(const struct prof_spool_writer *w, uint32_t parent,
				 uint32_t frame)
{
	intern_prefetch(&w->stack_ids, parent, frame);
}

uint32_t spool_writer_next_stack(const struct prof_spool_writer *w)
{
	return w->nstacks + 1;
}

int64_t prof_spool_writer_intern_frames(struct prof_spool_writer *w, const uint32_t *frames, size_t n)
{
	int64_t node = 0;

	while (n--) {
		node = prof_spool_writer_intern_stack(w, (uint32_t)node, frames[n]);
		if (node < 0)
			return node;
	}
	return node;
}

int prof_spool_writer_add_sample(struct prof_spool_writer *w, const struct prof_sample *arg)
{
	struct prof_sample copy;
	const struct prof_sample *s = &copy;
	int r = sized_in(&copy, sizeof(copy), arg, "sample") ?:
		check_ref(s->thread, w->nthreads, false, "thread") ?:
		check_ref(s->stack, w->nstacks, true, "stack") ?: rec_begin(w, 0);

	if (r < 0)
		return r;
	put_time(w, s->time_ns);
	put_u(&w->rec, s->thread);
	/*
	 * A new stack is the newest node: 0.  Another is its id + 1, which
	 * stays the same byte string however many nodes come after it, for
	 * deflate to find again.
	 */
	put_u(&w->rec, s->stack && s->stack == w->nstacks ? 0 : (uint64_t)s->stack + 1);
	/* frequency mode settles on a steady period: its delta is one byte */
	put_s(&w->rec, (int64_t)(s->period - w->last_period));
	put_u(&w->rec, s->cpu);
	w->last_period = s->period;
	return rec_emit(w, SPOOL_TAG_SAMPLE);
}

int prof_spool_writer_add_offcpu(struct prof_spool_writer *w, const struct prof_offcpu *arg)
{
	struct prof_offcpu copy;
	const struct prof_offcpu *o = &copy;
	int r = sized_in(&copy, sizeof(copy), arg, "off-CPU interval") ?:
		check_ref(o->thread, w->nthreads, false, "thread") ?:
		check_ref(o->stack, w->nstacks, true, "stack") ?:
		check_ref(o->user_stack, w->nstacks, true, "stack");

	if (!r && !w->offcpu)
		r = error_setx(-EINVAL, "spool writer: an off-CPU interval in a spool whose "
			       "metadata does not say PROF_META_OFFCPU");
	if (!r && (!o->state || o->state >= OFFCPU_STATE_COUNT || !o->end ||
		   o->end >= OFFCPU_END_COUNT))
		r = error_setx(-EINVAL, "spool writer: off-CPU interval with state %u, end %u",
			       o->state, o->end);
	if (!r)
		r = rec_begin(w, 0);
	if (r < 0)
		return r;
	put_time(w, o->time_ns);
	put_u(&w->rec, o->thread);
	put_u(&w->rec, o->stack);
	/* mostly the same: 0 says so in a byte */
	put_u(&w->rec, o->user_stack == o->stack ? 0 : o->user_stack);
	/* in time units, as every time: rounded to the nearest */
	put_u(&w->rec, (o->duration_ns + w->time_unit / 2) / w->time_unit);
	put_u(&w->rec, o->cpu);
	put_u(&w->rec, o->state);
	put_u(&w->rec, o->end);
	return rec_emit(w, SPOOL_TAG_OFFCPU);
}

static int add_named(struct prof_spool_writer *w, enum spool_tag tag, uint32_t ref,
		     uint32_t count, const char *what, uint64_t time_ns, const char *s1,
		     const char *s2, bool two)
{
	int r = check_ref(ref, count, false, what) ?: check_str("name", s1) ?:
		check_str("exe", s2) ?: rec_begin(w, str_len(s1) + str_len(s2));

	if (r < 0)
		return r;
	put_time(w, time_ns);
	put_u(&w->rec, ref);
	put_str(&w->rec, s1);
	if (two)
		put_str(&w->rec, s2);
	return rec_emit(w, tag);
}

int prof_spool_writer_rename_thread(struct prof_spool_writer *w, uint32_t thread, uint64_t time_ns,
				    const char *name)
{
	return add_named(w, SPOOL_TAG_THREAD_NAME, thread, w->nthreads, "thread", time_ns, name,
			 NULL, false);
}

int prof_spool_writer_add_exec(struct prof_spool_writer *w, uint32_t process, uint64_t time_ns,
			       const char *comm, const char *exe)
{
	return add_named(w, SPOOL_TAG_EXEC, process, w->nprocesses, "process", time_ns, comm,
			 exe, true);
}

static int add_ref_event(struct prof_spool_writer *w, enum spool_tag tag, uint32_t ref,
			 uint32_t count, const char *what, uint64_t time_ns)
{
	int r = check_ref(ref, count, false, what) ?: rec_begin(w, 0);

	if (r < 0)
		return r;
	put_time(w, time_ns);
	put_u(&w->rec, ref);
	return rec_emit(w, tag);
}

int prof_spool_writer_add_process_exit(struct prof_spool_writer *w, uint32_t process, uint64_t time_ns)
{
	return add_ref_event(w, SPOOL_TAG_PROCESS_EXIT, process, w->nprocesses, "process",
			     time_ns);
}

int prof_spool_writer_add_thread_exit(struct prof_spool_writer *w, uint32_t thread, uint64_t time_ns)
{
	return add_ref_event(w, SPOOL_TAG_THREAD_EXIT, thread, w->nthreads, "thread", time_ns);
}

int prof_spool_writer_retire_module(struct prof_spool_writer *w, uint32_t module, uint64_t time_ns)
{
	return add_ref_event(w, SPOOL_TAG_MODULE_RETIRE, module, w->nmodules, "module",
			     time_ns);
}

int prof_spool_writer_add_lost(struct prof_spool_writer *w, const struct prof_lost *arg)
{
	struct prof_lost copy;
	const struct prof_lost *l = &copy;
	int r = sized_in(&copy, sizeof(copy), arg, "lost record");

	if (r < 0)
		return r;
	if (l->kind == 0 || l->kind >= LOST_KIND_COUNT)
		return error_setx(-EINVAL, "spool writer: unknown lost kind %u", l->kind);
	r = rec_begin(w, 0);
	if (r < 0)
		return r;
	put_time(w, l->time_ns);
	put_u(&w->rec, l->kind);
	put_u(&w->rec, l->count);
	return rec_emit(w, SPOOL_TAG_LOST);
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325u;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3u;
	return h;
}

/*
 * The number of NAME, written before (*FRESH false) or to be written now,
 * with the next number (*FRESH true); -ENOMEM.  The names are kept to
 * compare: two names of one hash are both written whole.
 */
static int64_t name_number(struct prof_spool_writer *w, const char *name, bool *fresh)
{
	uint64_t h = name_hash(name), len = strlen(name);
	uint32_t id = intern_find(&w->name_ids, h, len);
	void *p = w->names;
	int r;

	if (id && !strcmp(w->names[id - 1], name)) {
		*fresh = false;
		return id;
	}
	if (w->nnames == UINT32_MAX - 1)
		return error_setx(-ENOSPC, "spool writer: symbol name space exhausted");
	r = grow_array(&p, &w->names_cap, w->nnames + 1, sizeof(*w->names));
	w->names = p;
	if (r < 0)
		return r;
	w->names[w->nnames] = xstrdup(name);
	if (!w->names[w->nnames])
		return error_setx(-ENOMEM, "out of memory");
	w->nnames++;
	if (!id) {
		r = intern_insert(&w->name_ids, h, len, w->nnames);
		if (r < 0) {
			free(w->names[--w->nnames]);
			return r;
		}
	}
	*fresh = true;
	return w->nnames;
}

int prof_spool_writer_add_symbol(struct prof_spool_writer *w, const struct prof_symbol *arg)
{
	struct prof_symbol copy;
	const struct prof_symbol *s = &copy;
	int64_t name = 0;
	bool fresh = false;
	int r = sized_in(&copy, sizeof(copy), arg, "symbol");

	if (r < 0)
		return r;
	switch (s->scope) {
	case PROF_SYMBOL_KERNEL:
		r = s->scope_id ? error_setx(-EINVAL, "spool writer: kernel symbol with scope id")
				: 0;
		break;
	case PROF_SYMBOL_PROCESS:
		r = check_ref(s->scope_id, w->nprocesses, false, "process");
		break;
	case PROF_SYMBOL_MODULE:
		r = check_ref(s->scope_id, w->nmodules, false, "module");
		break;
	default:
		r = error_setx(-EINVAL, "spool writer: unknown symbol scope %u", s->scope);
	}
	if (!r)
		r = check_str("symbol name", s->name) ?: rec_begin(w, str_len(s->name));
	if (!r)
		name = name_number(w, s->name ? s->name : "", &fresh);
	if (!r && name < 0)
		r = (int)name;
	if (r < 0)
		return r;
	put_u(&w->rec, s->scope);
	put_u(&w->rec, s->scope_id);
	/* symbols come sorted by address: the difference is short */
	put_s(&w->rec, (int64_t)(s->start - (s->scope == w->last_sym_scope &&
					      s->scope_id == w->last_sym_id ? w->last_sym_start : 0)));
	w->last_sym_scope = s->scope;
	w->last_sym_id = s->scope_id;
	w->last_sym_start = s->start;
	put_u(&w->rec, s->size);
	if (fresh) {
		put_u(&w->rec, 0);
		put_str(&w->rec, s->name);
	} else {
		put_u(&w->rec, (uint64_t)name);
	}
	return rec_emit(w, SPOOL_TAG_SYMBOL);
}

int prof_spool_writer_flush(struct prof_spool_writer *w)
{
	int r = (w->error ? w->error : batches_emit(w)) ?: block_flush(w);

	if (r < 0 || !w->sink.flush)
		return r;
	r = w->sink.flush(w->sink.ctx);
	if (r < 0) {
		w->error = r;
		return error_set(r, "cannot flush spool '%s'", w->path);
	}
	return 0;
}

uint64_t prof_spool_writer_bytes(const struct prof_spool_writer *w)
{
	return w->bytes;
}

uint64_t spool_writer_samples_written(const struct prof_spool_writer *w)
{
	return w->samples_written;
}

int prof_spool_writer_finish(struct prof_spool_writer *w, const struct prof_counters *arg)
{
	struct prof_counters copy;
	const struct prof_counters *c = &copy;
#define COUNTER(key, member) { key, offsetof(struct prof_counters, member), false }
#define COUNTER_V2(key, member) { key, offsetof(struct prof_counters, member), true }
	static const struct {
		uint8_t key;
		size_t off;
		bool v2;	/* written to version 2 (off-CPU) spools only */
	} fields[] = {
		COUNTER(SPOOL_CNT_SAMPLES, samples),
		COUNTER(SPOOL_CNT_SAMPLE_EVENTS, sample_events),
		COUNTER(SPOOL_CNT_EMPTY_STACKS, empty_stacks),
		COUNTER(SPOOL_CNT_TRUNCATED_STACKS, truncated_stacks),
		COUNTER(SPOOL_CNT_PROCESSES, processes),
		COUNTER(SPOOL_CNT_THREADS, threads),
		COUNTER(SPOOL_CNT_LIFECYCLE_GAPS, lifecycle_gaps),
		COUNTER(SPOOL_CNT_RECONCILIATIONS, reconciliations),
		COUNTER(SPOOL_CNT_MONO_END, mono_end_ns),
		COUNTER(SPOOL_CNT_WALL_END, wall_end_ns),
		COUNTER(SPOOL_CNT_FRAMES, frames),
		COUNTER_V2(SPOOL_CNT_OFFCPU_INTERVALS, offcpu_intervals),
		COUNTER_V2(SPOOL_CNT_OFFCPU_NS, offcpu_ns),
		COUNTER_V2(SPOOL_CNT_OFFCPU_UNSAMPLED, offcpu_unsampled),
		COUNTER_V2(SPOOL_CNT_SWITCH_EVENTS, switch_events),
		COUNTER_V2(SPOOL_CNT_OFFCPU_TRUNCATED, offcpu_truncated),
		COUNTER(SPOOL_CNT_IDLE_SAMPLES, idle_samples),
		COUNTER(SPOOL_CNT_CPUS, cpus),
		COUNTER(SPOOL_CNT_PYTHON_FRAMES, python_frames),
		COUNTER(SPOOL_CNT_PYTHON_STALE, python_stale),
		COUNTER(SPOOL_CNT_PYTHON_UNREAD, python_unread),
		COUNTER(SPOOL_CNT_JIT_MAP_NAMES, jit_map_names),
		COUNTER(SPOOL_CNT_JITDUMP_NAMES, jitdump_names),
	};
#undef COUNTER
#undef COUNTER_V2
	/* a version 1 spool stays as it was: no off-CPU counters, no lost kind of theirs */
	size_t nlost = w->offcpu ? LOST_KIND_COUNT : PROF_LOST_SWITCH_SAMPLES;
	size_t i;
	int r = sized_in(&copy, sizeof(copy), arg, "counters");

	if (!r && w->finished)
		r = error_setx(-EINVAL, "spool writer: the trailer was written already");
	if (!r)
		r = rec_begin(w, (ARRAY_SIZE(fields) + LOST_KIND_COUNT + UNWIND_ERROR_COUNT +
				  FALLBACK_COUNT) * (1 + SPOOL_VARINT_MAX));
	if (r < 0)
		return r;
	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		uint64_t v = *(const uint64_t *)((const char *)c + fields[i].off);

		if (fields[i].v2 && !w->offcpu)
			continue;
		/* the keys of minor version 1 only where they say something */
		if (!v && fields[i].key >= SPOOL_CNT_IDLE_SAMPLES)
			continue;
		put_u(&w->rec, fields[i].key);
		put_u(&w->rec, v);
	}
	for (i = 1; i < nlost; i++) {
		put_u(&w->rec, SPOOL_CNT_LOST_BASE + i);
		put_u(&w->rec, c->lost[i]);
	}
	for (i = 1; i < UNWIND_ERROR_COUNT; i++) {
		put_u(&w->rec, SPOOL_CNT_UNWIND_BASE + i);
		put_u(&w->rec, c->unwind_errors[i]);
	}
	for (i = 1; i < FALLBACK_COUNT; i++) {
		put_u(&w->rec, SPOOL_CNT_FALLBACK_BASE + i);
		put_u(&w->rec, c->fallback_frames[i]);
	}
	r = rec_emit(w, SPOOL_TAG_TRAILER);
	if (r < 0)
		return r;
	w->finished = true;
	return prof_spool_writer_flush(w);
}

int prof_spool_writer_close(struct prof_spool_writer *w)
{
	int r = 0;

	if (!w)
		return 0;
	if (w->sink.write)
		r = prof_spool_writer_flush(w);
	if (w->fd >= 0 && close(w->fd) < 0 && r == 0)
		r = error_set(-errno, "cannot close spool '%s'", w->path);
	free(w->fd_ctx);
	intern_release(&w->frame_ids);
	intern_release(&w->stack_ids);
	intern_release(&w->name_ids);
	for (size_t i = 0; i < w->nnames; i++)
		free(w->names[i]);
	free(w->names);
	free(w->block.p);
	free(w->rec.p);
	free(w->frame_batch.p);
	free(w->held);
	free(w->stack_batch.p);
	free(w->out);
	spool_columns_release(&w->columns);
	libdeflate_free_compressor(w->deflate);
	free(w->path);
	free(w);
	return r;
}

int spool_writer_each_frame(const struct prof_spool_writer *w,
			    int (*fn)(const struct prof_frame *f, void *ctx), void *ctx)
{
	const struct intern_map *m = &w->frame_ids;
	size_t i;
	int r;

	for (i = 0; m->slots && i <= m->mask; i++) {
		const struct intern_slot *s = &m->slots[i];
		struct prof_frame f;

		if (!s->id)
			continue;
		f = (struct prof_frame){ .sz = sizeof(f), .id = s->id,
					 .kind = (uint8_t)(s->a >> 32),
					 .ref = (uint32_t)s->a, .addr = s->b };
		r = fn(&f, ctx);
		if (r < 0)
			return r;
	}
	return 0;
}

int spool_writer_each_stack(const struct prof_spool_writer *w,
			    int (*fn)(uint32_t id, const struct prof_stack_node *n, void *ctx),
			    void *ctx)
{
	const struct intern_map *m = &w->stack_ids;
	size_t i;
	int r;

	for (i = 0; m->slots && i <= m->mask; i++) {
		const struct intern_slot *s = &m->slots[i];

		if (!s->id)
			continue;
		r = fn(s->id, &(struct prof_stack_node){ .parent = (uint32_t)s->a,
							 .frame = (uint32_t)s->b }, ctx);
		if (r < 0)
			return r;
	}
	return 0;
}

uint32_t spool_writer_count(const struct prof_spool_writer *w, enum spool_count_kind kind)
{
	switch (kind) {
	case SPOOL_COUNT_PROCESSES:
		return w->nprocesses;
	case SPOOL_COUNT_MODULES:
		return w->nmodules;
	}
	return 0;	/* no kind of definition */
}
