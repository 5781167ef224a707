/* SPDX-License-Identifier: MIT */
/*
 * pusher.c - prof_pusher: one spool file, one profile, one POST.  The file
 * is read as prof report reads it (its own reader and symbolizer, so that
 * a pusher may run on a thread of a recorder's process), written as a
 * gzip'd pprof into memory, labelled from its metadata and sent by the
 * protocol the URL or the options chose.  The ledger beside the file keeps
 * it from being sent twice to one endpoint.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "push_encode.h"
#include "push_http.h"
#include "push_ledger.h"

struct prof_pusher {
	struct prof_push_opts opts;	/* its strings are these: */
	char *service;			/* NULL: each file's own */
	struct push_labels labels;	/* the options' */
	char *endpoint;
	char *display;			/* the endpoint without a password, for messages */
	enum prof_push_protocol protocol;
	struct http_client *http;
};

/* OPTS checked into P (its fields that hold copies); P is released by the caller. */
static int take_opts(struct prof_pusher *p, const struct prof_push_opts *opts)
{
	size_t i;
	int r;

	r = opts_copy(&p->opts, sizeof(p->opts), opts, "push");
	if (r < 0)
		return r;
	if (!p->opts.url)
		return error_setx(-EINVAL, "no push URL");
	if (p->opts.nlabels && !p->opts.labels)
		return error_setx(-EINVAL, "push options: %zu labels but no array",
				  p->opts.nlabels);
	r = push_resolve(p->opts.url, p->opts.protocol, &p->endpoint, &p->protocol);
	if (r < 0)
		return r;
	if (p->opts.service) {
		r = push_service_check(p->opts.service);
		if (r < 0)
			return r;
		p->service = xstrdup(p->opts.service);
		if (!p->service)
			return -ENOMEM;
	}
	for (i = 0; i < p->opts.nlabels && r >= 0; i++)
		r = push_label_parse(&p->labels, p->opts.labels[i]);
	if (r < 0)
		return r;
	p->display = push_url_display(p->endpoint);
	if (!p->display)
		return error_setx(-ENOMEM, "out of memory");
	/* none of the caller's pointers is kept */
	p->opts.url = p->opts.service = NULL;
	p->opts.labels = NULL;
	if (!p->opts.timeout_ms)
		p->opts.timeout_ms = PROF_PUSH_TIMEOUT_MS;
	return 0;
}

static void release(struct prof_pusher *p)
{
	http_client_free(p->http);
	push_labels_release(&p->labels);
	free(p->service);
	free(p->endpoint);
	free(p->display);
}

int prof_push_check(const struct prof_push_opts *opts, char **ret_endpoint,
		    enum prof_push_protocol *ret_protocol)
{
	struct prof_pusher p = { 0 };
	int r = take_opts(&p, opts);

	if (r == 0 && ret_endpoint) {
		*ret_endpoint = p.display;
		p.display = NULL;
	}
	if (r == 0 && ret_protocol)
		*ret_protocol = p.protocol;
	release(&p);
	return r;
}

int prof_pusher_new(const struct prof_push_opts *opts, struct prof_pusher **ret)
{
	struct prof_pusher *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return error_setx(-ENOMEM, "out of memory");
	r = take_opts(p, opts);
	if (r == 0)
		r = http_client_new(&p->http);
	if (r < 0) {
		release(p);
		free(p);
		return r;
	}
	*ret = p;
	return 0;
}

const char *prof_pusher_endpoint(const struct prof_pusher *p)
{
	return p->display;
}

enum prof_push_protocol prof_pusher_protocol(const struct prof_pusher *p)
{
	return p->protocol;
}

void prof_pusher_free(struct prof_pusher *p)
{
	if (!p)
		return;
	release(p);
	free(p);
}

/*
 * The process a recording of one process is of (a command, or one pid
 * attached): the first one defined, or the one attached; NULL for others.
 */
static const struct prof_process *the_process(const struct prof_spool *sp)
{
	const struct prof_meta *m = prof_spool_meta(sp);
	SIZED(prof_spool_counts, n);
	const struct prof_process *pr;
	uint32_t id;

	if ((m->flags & PROF_META_SYSTEM) || prof_spool_counts(sp, &n) < 0)
		return NULL;
	if (!(m->flags & PROF_META_ATTACHED) && m->argc)
		return prof_spool_process(sp, 1);
	for (id = 1; m->npids == 1 && id <= n.processes; id++) {
		pr = prof_spool_process(sp, id);
		if (pr && pr->pid == m->pids[0])
			return pr;
	}
	return NULL;
}

/* The service a file is of, when the options name none (malloc'd, or NULL). */
static char *service_of(const struct prof_spool *sp, const struct prof_process *pr)
{
	const struct prof_meta *m = prof_spool_meta(sp);
	const char *name = "prof", *slash;

	if ((m->flags & PROF_META_SYSTEM) && m->hostname && *m->hostname)
		name = m->hostname;
	else if (!(m->flags & PROF_META_ATTACHED) && m->argc && *m->argv[0])
		name = (slash = strrchr(m->argv[0], '/')) && slash[1] ? slash + 1 : m->argv[0];
	else if (pr && *pr->comm)
		name = pr->comm;
	return push_clean_value(name, true);
}

/* A value cleaned (see push_clean_value()) as NAME of LS; an empty one is left out. */
static int set_clean(struct push_labels *ls, const char *name, const char *value)
{
	char *v;
	int r;

	if (!value || !*value)
		return 0;
	v = push_clean_value(value, false);
	if (!v)
		return error_setx(-ENOMEM, "out of memory");
	r = push_labels_set(ls, name, v);
	free(v);
	return r;
}

/* The labels of the profile of SP: the file's, then the options'. */
static int file_labels(const struct prof_pusher *p, const struct prof_spool *sp,
		       struct push_labels *ls)
{
	const struct prof_process *pr = the_process(sp);
	char pid[16], *service = p->service ? NULL : service_of(sp, pr);
	size_t i;
	int r;

	if (!p->service && !service)
		return error_setx(-ENOMEM, "out of memory");
	r = push_labels_set(ls, "__name__", "process_cpu");
	if (r == 0)
		r = push_labels_set(ls, "service_name", p->service ? p->service : service);
	if (r == 0)
		r = set_clean(ls, "host", prof_spool_meta(sp)->hostname);
	if (r == 0 && pr) {
		snprintf(pid, sizeof(pid), "%" PRId32, pr->pid);
		r = push_labels_set(ls, "pid", pid);
		if (r == 0)
			r = set_clean(ls, "comm", pr->comm);
	}
	for (i = 0; r == 0 && i < p->labels.n; i++)
		r = push_labels_set(ls, p->labels.v[i].name, p->labels.v[i].value);
	free(service);
	return r;
}

/* The rate of SP's samples in Hz, 0 when its event is not one of time. */
static uint64_t rate_of(const struct prof_meta *m)
{
	if (m->freq_hz)
		return m->freq_hz;
	if (m->period && m->event && strstr(m->event, "clock"))
		return 1000000000u / m->period ? 1000000000u / m->period : 1;
	return 0;
}

/* The gzip'd pprof of SP's samples: *RET and *RET_LEN (malloc'd); *RET_SAMPLES its samples. */
static int profile_of(struct prof_spool *sp, char **ret, size_t *ret_len, uint64_t *ret_samples)
{
	struct prof_symbolizer *sym = NULL;
	FILE *f = open_memstream(ret, ret_len);
	int r;

	if (!f)
		return error_setx(-ENOMEM, "out of memory");
	r = prof_symbolizer_new(sp, NULL, &sym);
	if (r == 0)
		r = prof_report_pprof(f, sp, sym, NULL, ret_samples);
	if (fclose(f) != 0 && r == 0)
		r = error_setx(-ENOMEM, "out of memory");
	prof_symbolizer_free(sym);
	if (r < 0) {
		free(*ret);
		*ret = NULL;
	}
	return r;
}

/* POST the profile PPROF of SP (the file PATH, changed last at MTIME_NS) to P's endpoint. */
static int send_profile(struct prof_pusher *p, const struct prof_spool *sp, const char *pprof,
			size_t len, uint64_t mtime_ns, struct prof_push_result *res)
{
	const struct prof_meta *m = prof_spool_meta(sp);
	const struct prof_counters *c = prof_spool_counters(sp);
	struct push_labels ls = { 0 };
	struct push_request rq = { 0 };
	struct push_profile pp = { .pprof = pprof, .len = len, .labels = &ls,
				   .rate_hz = rate_of(m) };
	uint64_t t0;
	int r;

	/* the file's time: to its trailer's end, or a killed recorder's last write */
	pp.from_ns = m->wall_start_ns;
	pp.until_ns = c && c->wall_end_ns ? c->wall_end_ns : mtime_ns;
	if (pp.until_ns < pp.from_ns)
		pp.until_ns = pp.from_ns;
	res->from_ns = pp.from_ns;
	res->until_ns = pp.until_ns;
	r = file_labels(p, sp, &ls);
	if (r == 0)
		r = push_request_build(p->protocol, p->endpoint, &pp, &rq);
	if (r == 0) {
		struct http_post post = {
			.url = rq.url, .content_type = rq.content_type, .headers = rq.headers,
			.nheaders = rq.nheaders, .body = rq.body, .len = rq.len,
			.timeout_ms = p->opts.timeout_ms,
		};

		res->bytes = rq.len;
		t0 = clock_ns(CLOCK_MONOTONIC);
		r = http_post(p->http, &post, &res->status);
		res->elapsed_ns = clock_ns(CLOCK_MONOTONIC) - t0;
	}
	push_request_release(&rq);
	push_labels_release(&ls);
	return r;
}

/* The message of R, a failure to push PATH, says so first. */
static int push_failed(const struct prof_pusher *p, const char *path, int r)
{
	char why[512];

	snprintf(why, sizeof(why), "%s", prof_errmsg());
	return error_setx(r, "cannot push '%s' to %s: %s", path, p->display, why);
}

int prof_pusher_push_file(struct prof_pusher *p, const char *path, struct prof_push_result *ret)
{
	SIZED(prof_push_result, res);
	struct prof_spool *sp = NULL;
	char *pprof = NULL;
	size_t len = 0;
	struct stat st;
	int r;

	if (!p || !path)
		return error_setx(-EINVAL, "nothing to push");
	if (ret && ret->sz < sizeof(size_t))
		return error_setx(-EINVAL, "push result: sz not set");
	/* its last change first: a killed recorder's file ends there */
	r = stat(path, &st) < 0 ? error_set(-errno, "cannot open spool '%s'", path) : 0;
	if (r == 0)
		r = prof_spool_open(path, &sp);
	if (r == 0 && prof_spool_has_writer(sp) == 1)
		r = error_setx(-EBUSY, "'%s' is still being written by a recorder", path);
	if (r < 0)
		goto out;
	if (ledger_has(path, prof_spool_meta(sp)->wall_start_ns, p->display)) {
		res.skipped = true;
		goto out;
	}
	r = profile_of(sp, &pprof, &len, &res.samples);
	if (r < 0 || !res.samples)
		goto out;
	r = send_profile(p, sp, pprof, len, (uint64_t)stat_mtime_ns(&st), &res);
	if (r < 0) {
		r = push_failed(p, path, r);
		goto out;
	}
	res.sent = true;
	if (ledger_add(path, prof_spool_meta(sp)->wall_start_ns, p->display) < 0)
		pr_warn("%s; '%s' may be sent again", prof_errmsg(), path);
out:
	free(pprof);
	prof_spool_close(sp);
	if (ret && (r == 0 || res.samples))
		sized_out(ret, &res, sizeof(res), "push result");
	return r;
}
