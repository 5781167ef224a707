/* SPDX-License-Identifier: MIT */
/*
 * test-push.c - the bytes of a push, without a server: which endpoint and
 * protocol a URL names, the labels the options may give and how values
 * are made to fit, each protocol's request as its server's parser reads
 * it, and the ledger of what was sent.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "prof.h"
#include "push/push_encode.h"
#include "push/push_ledger.h"

/* URL resolved for protocol WANT: "PROTOCOL ENDPOINT", or "error: MESSAGE". */
static char *resolved(const char *url, enum prof_push_protocol want)
{
	enum prof_push_protocol got;
	char *endpoint, *s;

	if (push_resolve(url, want, &endpoint, &got) < 0) {
		if (asprintf(&s, "error: %s", prof_errmsg()) < 0)
			return NULL;
		return s;
	}
	if (asprintf(&s, "%s %s", prof_push_protocol_name(got), endpoint) < 0)
		s = NULL;
	free(endpoint);
	return s;
}

#define CHECK_RESOLVED(url, want, expect)                                                  \
	do {                                                                               \
		char *got_ = resolved(url, want);                                          \
		bool ok_ = got_ && !strcmp(got_, expect);                                  \
		if (!ok_)                                                                  \
			t_fail_str(__FILE__, __LINE__, url, got_, expect);                 \
		free(got_);                                                                \
		if (!ok_)                                                                  \
			return;                                                            \
	} while (0)

TEST(push_url_endpoint_paths_name_their_protocol)
{
	CHECK_RESOLVED("http://h:4040/ingest", PROF_PUSH_PROTOCOL_AUTO,
		       "ingest http://h:4040/ingest");
	CHECK_RESOLVED("https://h/pyro/ingest/", PROF_PUSH_PROTOCOL_AUTO,
		       "ingest https://h/pyro/ingest/");
	CHECK_RESOLVED("http://h:4040/push.v1.PusherService/Push", PROF_PUSH_PROTOCOL_AUTO,
		       "push http://h:4040/push.v1.PusherService/Push");
	CHECK_RESOLVED("http://h:7070/api/profiles/writeraw", PROF_PUSH_PROTOCOL_AUTO,
		       "parca http://h:7070/api/profiles/writeraw");
	CHECK_RESOLVED("http://h/profiles/writeraw?x=1", PROF_PUSH_PROTOCOL_PARCA,
		       "parca http://h/profiles/writeraw?x=1");
}

TEST(push_url_of_a_server_gets_its_protocols_path)
{
	CHECK_RESOLVED("http://h:4040", PROF_PUSH_PROTOCOL_AUTO, "ingest http://h:4040/ingest");
	CHECK_RESOLVED("http://h:4040/", PROF_PUSH_PROTOCOL_AUTO, "ingest http://h:4040/ingest");
	CHECK_RESOLVED("http://h:7070", PROF_PUSH_PROTOCOL_AUTO,
		       "parca http://h:7070/api/profiles/writeraw");
	CHECK_RESOLVED("http://[::1]:7070/", PROF_PUSH_PROTOCOL_AUTO,
		       "parca http://[::1]:7070/api/profiles/writeraw");
	CHECK_RESOLVED("http://u:p@h:4040/pyro/?orgid=7", PROF_PUSH_PROTOCOL_PUSH,
		       "push http://u:p@h:4040/pyro/push.v1.PusherService/Push?orgid=7");
	CHECK_RESOLVED("https://h", PROF_PUSH_PROTOCOL_PARCA,
		       "parca https://h/api/profiles/writeraw");
}

TEST(push_url_errors_say_what_is_wrong)
{
	CHECK_RESOLVED("ftp://h/ingest", PROF_PUSH_PROTOCOL_AUTO,
		       "error: push URL 'ftp://h/ingest' does not begin with http:// or https://");
	CHECK_RESOLVED("http:///ingest", PROF_PUSH_PROTOCOL_AUTO,
		       "error: push URL 'http:///ingest' names no host");
	CHECK_RESOLVED("http://h:99999", PROF_PUSH_PROTOCOL_AUTO,
		       "error: push URL 'http://h:99999' has no valid port");
	CHECK_RESOLVED("http://h/ingest", PROF_PUSH_PROTOCOL_PARCA,
		       "error: push URL 'http://h/ingest' is an endpoint of the ingest protocol, "
		       "not of parca");
}

TEST(push_url_display_hides_the_password)
{
	char *s = push_url_display("https://user:secret@h:4040/ingest");

	CHECK_STR(s, "https://h:4040/ingest");
	free(s);
	s = push_url_display("http://h/ingest");
	CHECK_STR(s, "http://h/ingest");
	free(s);
}

TEST(push_labels_are_checked_sorted_and_replaced)
{
	struct push_labels ls = { 0 };

	CHECK_INT(push_label_parse(&ls, "env=prod"), ==, 0);
	CHECK_INT(push_label_parse(&ls, "az=eu-west-1a"), ==, 0);
	CHECK_INT(push_label_parse(&ls, "env=staging"), ==, 0);
	CHECK_INT(ls.n, ==, 2);
	CHECK_STR(ls.v[0].name, "az");
	CHECK_STR(ls.v[1].value, "staging");
	CHECK_INT(push_label_parse(&ls, "1a=x"), ==, -EINVAL);
	CHECK_INT(push_label_parse(&ls, "__name__=x"), ==, -EINVAL);
	CHECK_INT(push_label_parse(&ls, "service_name=x"), ==, -EINVAL);
	CHECK_INT(push_label_parse(&ls, "noequals"), ==, -EINVAL);
	CHECK_INT(push_label_parse(&ls, "a="), ==, -EINVAL);
	CHECK_INT(push_label_parse(&ls, "a=b,c"), ==, -EINVAL);
	CHECK_STR(prof_errmsg(), "label 'a=b,c': a value is printable ASCII without space , { } "
				 "= \" \\");
	CHECK_INT(ls.n, ==, 2);
	push_labels_release(&ls);
	CHECK_INT(push_service_check("my-app/api.v2_x"), ==, 0);
	CHECK_INT(push_service_check("my app"), ==, -EINVAL);
}

TEST(push_values_are_made_to_fit_every_protocol)
{
	char *v = push_clean_value("Web Content,{x}=\"\\\x01\xc3\xa9", false);

	CHECK_STR(v, "Web_Content__x_______");
	free(v);
	v = push_clean_value("python3.11 (x)", true);
	CHECK_STR(v, "python3.11__x_");
	free(v);
}

static const uint8_t fake_pprof[] = { 0x1f, 0x8b, 0x08, 0x00, 0xff };

static void profile_labels(struct push_labels *ls)
{
	push_labels_set(ls, "__name__", "process_cpu");
	push_labels_set(ls, "service_name", "ladder");
	push_labels_set(ls, "host", "vm");
	push_labels_set(ls, "pid", "42");
}

TEST(push_ingest_request_puts_the_labels_in_the_name)
{
	struct push_labels ls = { 0 };
	struct push_profile p = { .pprof = fake_pprof, .len = sizeof(fake_pprof), .labels = &ls,
				  .from_ns = 1700000000500000000ull,
				  .until_ns = 1700000001200000000ull, .rate_hz = 999 };
	struct push_request rq;

	profile_labels(&ls);
	CHECK_INT(push_request_build(PROF_PUSH_PROTOCOL_INGEST, "http://h/ingest?o=1", &p, &rq),
		  ==, 0);
	/* ladder.cpu{host=vm,pid=42}; the seconds that hold the file */
	CHECK_STR(rq.url, "http://h/ingest?o=1&name=ladder.cpu%7Bhost%3Dvm%2Cpid%3D42%7D"
			  "&from=1700000000&until=1700000002&format=pprof&sampleRate=999"
			  "&spyName=prof");
	CHECK_STR(rq.content_type, "application/octet-stream");
	CHECK(rq.body == (const void *)fake_pprof);
	CHECK_INT(rq.len, ==, sizeof(fake_pprof));
	push_request_release(&rq);
	push_labels_release(&ls);
}

TEST(push_push_and_parca_requests_are_their_json)
{
	struct push_labels ls = { 0 };
	struct push_profile p = { .pprof = fake_pprof, .len = sizeof(fake_pprof), .labels = &ls };
	struct push_request rq;
	const char *labels = "{\"name\":\"__name__\",\"value\":\"process_cpu\"},"
			     "{\"name\":\"host\",\"value\":\"vm\"},"
			     "{\"name\":\"pid\",\"value\":\"42\"},"
			     "{\"name\":\"service_name\",\"value\":\"ladder\"}";
	char want[1024], id[40];
	const char *at;

	profile_labels(&ls);
	CHECK_INT(push_request_build(PROF_PUSH_PROTOCOL_PUSH, "http://h/x", &p, &rq), ==, 0);
	CHECK_STR(rq.url, "http://h/x");
	CHECK_STR(rq.content_type, "application/json");
	CHECK_INT(rq.nheaders, ==, 1);
	CHECK_STR(rq.headers[0], "Connect-Protocol-Version: 1");
	/* the ID: a UUID of version 4's layout, the same for the same profile */
	at = strstr(rq.body, "\"ID\":\"");
	CHECK(at);
	snprintf(id, sizeof(id), "%.36s", at + 6);
	CHECK(id[8] == '-' && id[13] == '-' && id[14] == '4' && id[18] == '-' && id[23] == '-');
	snprintf(want, sizeof(want), "{\"series\":[{\"labels\":[%s],\"samples\":[{\"ID\":\"%s\","
		 "\"rawProfile\":\"H4sIAP8=\"}]}]}", labels, id);
	CHECK_INT(rq.len, ==, strlen(want));
	CHECK(!memcmp(rq.body, want, rq.len));
	push_request_release(&rq);

	CHECK_INT(push_request_build(PROF_PUSH_PROTOCOL_PARCA, "http://h/y", &p, &rq), ==, 0);
	snprintf(want, sizeof(want), "{\"series\":[{\"labels\":{\"labels\":[%s]},\"samples\":"
		 "[{\"rawProfile\":\"H4sIAP8=\"}]}],\"normalized\":false}", labels);
	CHECK_INT(rq.len, ==, strlen(want));
	CHECK(!memcmp(rq.body, want, rq.len));
	CHECK_INT(rq.nheaders, ==, 0);
	push_request_release(&rq);
	push_labels_release(&ls);
}

TEST(push_ledger_lists_a_file_per_endpoint_and_recording)
{
	char dir[] = "/tmp/prof-test-push.XXXXXX", file[128], other[128], ledger[128];
	FILE *f;

	CHECK(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/r.spool.20260101120000123", dir);
	snprintf(other, sizeof(other), "%s/r.spool.20260101120001123", dir);
	snprintf(ledger, sizeof(ledger), "%s/.r.spool.pushed", dir);
	CHECK(ledger_is_stamp(".20260101120000123"));
	CHECK(!ledger_is_stamp(".2026010112000012"));
	CHECK(!ledger_is_stamp(".20260101120000123.old"));
	CHECK(!ledger_has(file, 7, "http://h/ingest"));
	CHECK_INT(ledger_add(file, 7, "http://h/ingest"), ==, 0);
	CHECK(ledger_has(file, 7, "http://h/ingest"));
	CHECK(!ledger_has(file, 8, "http://h/ingest"));	/* a recording made again */
	CHECK(!ledger_has(file, 7, "http://h/push"));	/* another server */
	CHECK(!ledger_has(other, 7, "http://h/ingest"));
	CHECK_INT(ledger_add(other, 9, "http://h/ingest"), ==, 0);
	/* only the line of a file still there stays; none left, no ledger */
	f = fopen(other, "w");
	CHECK(f);
	fclose(f);
	ledger_prune(file);
	CHECK(!ledger_has(file, 7, "http://h/ingest"));
	CHECK(ledger_has(other, 9, "http://h/ingest"));
	unlink(other);
	ledger_prune(file);
	CHECK_INT(access(ledger, F_OK), ==, -1);
	rmdir(dir);
}
