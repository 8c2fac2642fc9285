/* SPDX-License-Identifier: BSD-2-Clause */
/* test_metrics.c - the counters of src/metrics.c: they add up exactly
 * under threads, a copy at another address means the same, the Prometheus
 * text is exactly the documented one, and a short buffer fails cleanly at
 * every size. With --render it prints a rendering with every kind of
 * counter set, for the strict parser (unit.metrics.promtext). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "csrf.h"
#include "testutil.h"

#define T0 1700000000

/* The rendering of test_render_exact's counters. */
static const char golden[] =
    "# HELP csrf_requests_total Requests libcsrf judged, by verdict (allowed, report_only: rejected by the checks "
    "but let through by report-only, rejected) and reason.\n"
    "# TYPE csrf_requests_total counter\n"
    "csrf_requests_total{verdict=\"allowed\",reason=\"ok\"} 7\n"
    "csrf_requests_total{verdict=\"allowed\",reason=\"safe_method\"} 1000\n"
    "csrf_requests_total{verdict=\"allowed\",reason=\"exempt\"} 0\n"
    "csrf_requests_total{verdict=\"allowed\",reason=\"origin_verified\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"cross_site\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"same_site\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"fetch_site_malformed\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"origin_mismatch\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"null_origin\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"origin_malformed\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"referer_missing\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"referer_malformed\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"referer_insecure\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"referer_mismatch\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"no_evidence\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"method_override\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"websocket_origin\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"token_missing\"} 3\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"token_malformed\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"token_invalid\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"token_expired\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"token_session\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"unknown_key\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"secret_missing\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"secret_invalid\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"reauth_required\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"reauth_failed\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"locked_out\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"body_too_large\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"body_malformed\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"header_too_large\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"host_missing\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"store_unavailable\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"cookie_ambiguous\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"secret_expired\"} 0\n"
    "csrf_requests_total{verdict=\"report_only\",reason=\"store_full\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"cross_site\"} 18446744073709551615\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"same_site\"} 2\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"fetch_site_malformed\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"origin_mismatch\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"null_origin\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"origin_malformed\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"referer_missing\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"referer_malformed\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"referer_insecure\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"referer_mismatch\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"no_evidence\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"method_override\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"websocket_origin\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"token_missing\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"token_malformed\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"token_invalid\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"token_expired\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"token_session\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"unknown_key\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"secret_missing\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"secret_invalid\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"reauth_required\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"reauth_failed\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"locked_out\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"body_too_large\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"body_malformed\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"header_too_large\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"host_missing\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"store_unavailable\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"cookie_ambiguous\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"secret_expired\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"store_full\"} 0\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"err_internal\"} 1\n"
    "csrf_requests_total{verdict=\"rejected\",reason=\"unknown\"} 2\n"
    "# HELP csrf_inject_pages_total HTML pages streamed through the token injector.\n"
    "# TYPE csrf_inject_pages_total counter\n"
    "csrf_inject_pages_total 3\n"
    "# HELP csrf_inject_insertions_total Elements the injector inserted: one per hidden token field, one per "
    "pair of meta tags.\n"
    "# TYPE csrf_inject_insertions_total counter\n"
    "csrf_inject_insertions_total 5\n"
    "# HELP csrf_inject_withheld_total HTML pages where the injector left a form without a token, or stopped, "
    "by its status (once per page and status).\n"
    "# TYPE csrf_inject_withheld_total counter\n"
    "csrf_inject_withheld_total{status=\"nested_form\"} 0\n"
    "csrf_inject_withheld_total{status=\"foreign\"} 0\n"
    "csrf_inject_withheld_total{status=\"template\"} 0\n"
    "csrf_inject_withheld_total{status=\"select\"} 0\n"
    "csrf_inject_withheld_total{status=\"noscript\"} 0\n"
    "csrf_inject_withheld_total{status=\"base\"} 0\n"
    "csrf_inject_withheld_total{status=\"late_base\"} 0\n"
    "csrf_inject_withheld_total{status=\"formaction\"} 0\n"
    "csrf_inject_withheld_total{status=\"escape\"} 0\n"
    "csrf_inject_withheld_total{status=\"stopped\"} 1\n"
    "csrf_inject_withheld_total{status=\"get_button\"} 2\n"
    "csrf_inject_withheld_total{status=\"form_owner\"} 0\n"
    "csrf_inject_withheld_total{status=\"late_owner\"} 0\n"
    "csrf_inject_withheld_total{status=\"unclosed\"} 0\n"
    "csrf_inject_withheld_total{status=\"long_form\"} 1\n"
    "csrf_inject_withheld_total{status=\"late_button\"} 0\n"
    "csrf_inject_withheld_total{status=\"noscript_button\"} 0\n"
    "csrf_inject_withheld_total{status=\"table_form\"} 0\n"
    "csrf_inject_withheld_total{status=\"frameset\"} 0\n"
    "csrf_inject_withheld_total{status=\"deep\"} 0\n"
    "# HELP csrf_inject_passed_total HTML pages passed through without tokens, by cause (a charset the "
    "injector does not read, a compressed body, a page that could not be prepared).\n"
    "# TYPE csrf_inject_passed_total counter\n"
    "csrf_inject_passed_total{cause=\"charset\"} 1\n"
    "csrf_inject_passed_total{cause=\"encoding\"} 2\n"
    "csrf_inject_passed_total{cause=\"error\"} 1\n"
    "# HELP csrf_metrics_start_time_seconds Unix time at which these counters started.\n"
    "# TYPE csrf_metrics_start_time_seconds gauge\n"
    "csrf_metrics_start_time_seconds 1700000000\n";

static csrf_result result(int allowed, csrf_reason reason, int report_only, int needs_body)
{
	csrf_result r = {allowed, reason, report_only, needs_body};
	return r;
}

/* The counters of the golden text. */
static void fill(csrf_metrics *m)
{
	csrf_metrics_init(m, T0);
	for (int i = 0; i < 1000; i++) {
		csrf_result r = result(1, CSRF_SAFE_METHOD, 0, 0);
		csrf_metrics_count_check(m, &r);
	}
	for (int i = 0; i < 7; i++)
		csrf_metrics_count(m, CSRF_METRICS_ALLOWED, CSRF_OK);
	for (int i = 0; i < 3; i++) {
		csrf_result r = result(1, CSRF_TOKEN_MISSING, 1, 0);
		csrf_metrics_count_check(m, &r);
	}
	csrf_result nb = result(0, CSRF_TOKEN_MISSING, 0, 1); /* needs_body: not counted */
	csrf_metrics_count_check(m, &nb);
	csrf_result same = result(0, CSRF_SAME_SITE, 0, 0);
	csrf_metrics_count_check(m, &same);
	csrf_metrics_count_check(m, &same);
	m->requests[CSRF_METRICS_REJECTED][CSRF_CROSS_SITE] = UINT64_MAX;
	csrf_metrics_count(m, CSRF_METRICS_REJECTED, CSRF_ERR_INTERNAL);
	csrf_metrics_count(m, CSRF_METRICS_REJECTED, (csrf_reason)5);   /* a code without a name */
	csrf_metrics_count(m, CSRF_METRICS_REJECTED, (csrf_reason)500); /* beyond the table */
	csrf_metrics_count(m, (csrf_metrics_verdict)3, CSRF_OK);        /* no such verdict: nothing */
	csrf_metrics_count(m, (csrf_metrics_verdict)-1, CSRF_OK);
	csrf_metrics_count_page(m, 2, CSRF_INJECT_GET_BUTTON);
	csrf_metrics_count_page(m, 3, CSRF_INJECT_GET_BUTTON | CSRF_INJECT_LONG_FORM | CSRF_INJECT_STOPPED);
	csrf_metrics_count_page(m, 0, 0);
	csrf_metrics_count_passed(m, CSRF_METRICS_PASS_CHARSET);
	csrf_metrics_count_passed(m, CSRF_METRICS_PASS_ENCODING);
	csrf_metrics_count_passed(m, CSRF_METRICS_PASS_ENCODING);
	csrf_metrics_count_passed(m, CSRF_METRICS_PASS_ERROR);
	csrf_metrics_count_passed(m, (csrf_metrics_pass)CSRF_METRICS_PASS_CAUSES); /* nothing */
}

static void test_render_exact(void **state)
{
	(void)state;
	static char out[CSRF_METRICS_TEXT_MAX];
	csrf_metrics m;
	size_t len = 1;

	fill(&m);
	assert_int_equal(csrf_metrics_render(&m, out, sizeof out, &len), CSRF_OK);
	assert_string_equal(out, golden);
	assert_int_equal(len, strlen(golden));
}

/* A copy at another address (another process's mapping, a file read
 * back) renders the same: the struct holds no pointer. */
static void test_position_independent(void **state)
{
	(void)state;
	static char a[CSRF_METRICS_TEXT_MAX], b[CSRF_METRICS_TEXT_MAX];
	csrf_metrics m;
	unsigned char *raw = malloc(sizeof m + 8);
	size_t la, lb;

	assert_non_null(raw);
	fill(&m);
	memcpy(raw + 8, &m, sizeof m);
	memset(&m, 0xa5, sizeof m);
	assert_true(csrf_metrics_valid(raw + 8, sizeof m));
	assert_int_equal(csrf_metrics_render((const csrf_metrics *)(raw + 8), a, sizeof a, &la), CSRF_OK);
	memcpy(&m, raw + 8, sizeof m);
	assert_int_equal(csrf_metrics_render(&m, b, sizeof b, &lb), CSRF_OK);
	assert_int_equal(la, lb);
	assert_string_equal(a, b);
	assert_string_equal(a, golden);
	free(raw);
}

static void test_valid(void **state)
{
	(void)state;
	csrf_metrics m;
	char out[64];
	size_t len = 7;

	assert_false(csrf_metrics_valid(NULL, sizeof m));
	memset(&m, 0, sizeof m);
	assert_false(csrf_metrics_valid(&m, sizeof m)); /* never initialised */
	assert_int_equal(csrf_metrics_render(&m, out, sizeof out, &len), CSRF_ERR_ARG);
	assert_int_equal(len, 0);
	csrf_metrics_init(&m, T0);
	assert_true(csrf_metrics_valid(&m, sizeof m));
	assert_false(csrf_metrics_valid(&m, sizeof m - 8)); /* another layout's size */
	assert_false(csrf_metrics_valid(&m, sizeof m + 8));
	m.magic ^= 1; /* another version */
	assert_false(csrf_metrics_valid(&m, sizeof m));
	assert_int_equal(csrf_metrics_render(NULL, out, sizeof out, NULL), CSRF_ERR_ARG);
	csrf_metrics_init(&m, T0);
	assert_int_equal(csrf_metrics_render(&m, NULL, 0, NULL), CSRF_ERR_ARG);
	/* NULL counters count nothing and do not crash */
	csrf_metrics_count(NULL, CSRF_METRICS_ALLOWED, CSRF_OK);
	csrf_metrics_count_check(NULL, NULL);
	csrf_metrics_count_check(&m, NULL);
	csrf_metrics_count_page(NULL, 1, 1);
	csrf_metrics_count_passed(NULL, CSRF_METRICS_PASS_CHARSET);
	csrf_metrics_init(NULL, 0);
	/* init with 0: the current time */
	csrf_metrics_init(&m, 0);
	assert_true(m.start_time > T0);
}

/* Every size short of the text fails with CSRF_ERR_BUFFER, says the size
 * it needs, leaves "" and writes nothing past cap (the buffer ends flush
 * against an unreadable page); the size it names succeeds. */
static void test_buffer_too_small(void **state)
{
	(void)state;
	static char full[CSRF_METRICS_TEXT_MAX];
	csrf_metrics m;
	size_t need, len;

	fill(&m);
	assert_int_equal(csrf_metrics_render(&m, full, sizeof full, &need), CSRF_OK);
	need += 1; /* with the NUL */

	for (size_t cap = 0; cap < need; cap++) {
		char *buf = tu_guard_copy(full, cap);
		if (cap)
			memset(buf, 'x', cap);
		len = 0;
		assert_int_equal(csrf_metrics_render(&m, buf, cap, &len), CSRF_ERR_BUFFER);
		assert_int_equal(len, need);
		if (cap)
			assert_int_equal(buf[0], '\0');
		tu_guard_free(buf);
	}
	char *buf = tu_guard_copy(full, need);
	assert_int_equal(csrf_metrics_render(&m, buf, need, &len), CSRF_OK);
	assert_int_equal(len, need - 1);
	assert_string_equal(buf, golden);
	tu_guard_free(buf);
	/* out_len may be NULL */
	char small[16];
	assert_int_equal(csrf_metrics_render(&m, small, sizeof small, NULL), CSRF_ERR_BUFFER);
	assert_string_equal(small, "");
}

/* The largest text (every counter at its maximum, every pair listed)
 * fits in CSRF_METRICS_TEXT_MAX. */
static void test_text_max(void **state)
{
	(void)state;
	static char out[CSRF_METRICS_TEXT_MAX];
	csrf_metrics m;
	size_t len;

	memset(&m, 0xff, sizeof m);
	m.magic = CSRF_METRICS_MAGIC;
	assert_int_equal(csrf_metrics_render(&m, out, sizeof out, &len), CSRF_OK);
	assert_true(len < CSRF_METRICS_TEXT_MAX);
	/* every verdict with every named reason, and the unknown ones */
	size_t lines = 0;
	for (const char *p = out; (p = strstr(p, "csrf_requests_total{")) != NULL; p++)
		lines++;
	size_t named = 0;
	for (int c = 0; c < CSRF_METRICS_REASONS; c++)
		if (strcmp(csrf_reason_name((csrf_reason)c), "unknown") != 0)
			named++;
	assert_int_equal(lines, CSRF_METRICS_VERDICTS * (named + 1));
}

/* Every CSRF_INJECT_* bit the library defines has its series: a bit
 * added to the injector without a name here fails this. */
static void test_every_status_bit_named(void **state)
{
	(void)state;
	static char out[CSRF_METRICS_TEXT_MAX];
	csrf_metrics m;
	size_t len, defined = 0, listed = 0;

	for (unsigned i = 0; i < 32; i++)
		if (strcmp(csrf_inject_status_str(1u << i), "unknown injector status") != 0)
			defined++;
	csrf_metrics_init(&m, T0);
	assert_int_equal(csrf_metrics_render(&m, out, sizeof out, &len), CSRF_OK);
	for (const char *p = out; (p = strstr(p, "csrf_inject_withheld_total{")) != NULL; p++)
		listed++;
	assert_int_equal(listed, defined);
	/* each bit counts into the series of its own name */
	const struct {
		unsigned bit;
		const char *line;
	} rows[] = {
	    {CSRF_INJECT_NESTED_FORM, "{status=\"nested_form\"} 1\n"},
	    {CSRF_INJECT_LATE_OWNER, "{status=\"late_owner\"} 1\n"},
	    {CSRF_INJECT_NOSCRIPT_BUTTON, "{status=\"noscript_button\"} 1\n"},
	    {CSRF_INJECT_UNCLOSED, "{status=\"unclosed\"} 1\n"},
	    {CSRF_INJECT_ESCAPE, "{status=\"escape\"} 1\n"},
	    {CSRF_INJECT_TABLE_FORM, "{status=\"table_form\"} 1\n"},
	    {CSRF_INJECT_FRAMESET, "{status=\"frameset\"} 1\n"},
	    {CSRF_INJECT_DEEP, "{status=\"deep\"} 1\n"},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		csrf_metrics_init(&m, T0);
		csrf_metrics_count_page(&m, 0, rows[i].bit);
		assert_int_equal(csrf_metrics_render(&m, out, sizeof out, &len), CSRF_OK);
		assert_non_null(strstr(out, rows[i].line));
	}
}

static csrf_ctx *exchange_ctx(int keyed)
{
	csrf_ctx *ctx;
	assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
	if (keyed)
		assert_int_equal(csrf_ctx_generate_key(ctx), CSRF_OK);
	assert_int_equal(csrf_ctx_set_self_origin(ctx, "https://app.example", 19), CSRF_OK);
	csrf_ctx_set_mode(ctx, CSRF_MODE_ORIGIN_OR_TOKEN);
	return ctx;
}

static int discard(void *ud, const char *p, size_t n, int inserted)
{
	(void)ud, (void)p, (void)n, (void)inserted;
	return 0;
}

/* How far exchange() takes a response. */
enum { TO_HOLD, TO_HEADERS, TO_FEED, TO_END };

/* One response through the exchange up to step, then counted into m as
 * an adapter counts it: by csrf_response_begin's verdict and the state. */
static void exchange(csrf_metrics *m, csrf_ctx *ctx, const char *ce, const char *body, int step)
{
	static _Alignas(64) unsigned char mem[CSRF_RESPONSE_STATE_MAX];
	csrf_response *resp = NULL;
	csrf_response_verdict v = csrf_response_begin(ctx, "GET", 3, 200, "text/html", 9, ce, ce ? strlen(ce) : 0);
	if (v == CSRF_RESPONSE_INJECT) {
		csrf_request req;
		csrf_request_init(&req);
		req.method = (csrf_slice){"GET", 3};
		req.target = (csrf_slice){"/", 1};
		req.scheme = (csrf_slice){"https", 5};
		assert_int_equal(csrf_request_header(&req, "Host", 4, "app.example", 11), CSRF_OK);
		assert_int_equal(csrf_response_init(mem, csrf_response_size(), ctx, "text/html", 9, &resp), CSRF_OK);
		size_t used;
		csrf_charset_verdict cv = csrf_response_hold(resp, body, strlen(body), 1, &used);
		unsigned char action[1];
		csrf_slice value[1];
		csrf_header add[CSRF_RESPONSE_ADD_MAX];
		size_t n_add;
		if (cv == CSRF_CHARSET_INJECT && step >= TO_HEADERS &&
		    csrf_response_headers(resp, &req, NULL, 0, action, value, add, &n_add) == CSRF_OK &&
		    step >= TO_FEED) {
			csrf_slice held = csrf_response_held(resp);
			assert_int_equal(csrf_response_feed(resp, held.ptr, held.len, discard, NULL), CSRF_OK);
			if (step >= TO_END)
				assert_int_equal(csrf_response_end(resp, discard, NULL, NULL), CSRF_OK);
		}
	}
	csrf_metrics_count_response(m, v, resp);
	if (resp)
		csrf_response_wipe(resp);
}

/* csrf_metrics_count_response counts each outcome of the exchange the
 * way csrf_metrics_count_page and _passed would, and nothing else. */
static void test_count_response(void **state)
{
	(void)state;
	csrf_ctx *ctx = exchange_ctx(1), *keyless = exchange_ctx(0);
	csrf_metrics m;
	const char *forms = "<html><head></head><body><form method=post></form><form method=post action=/x "
	                    "></form><table><form method=post></form></table></body></html>";
	csrf_metrics_init(&m, T0);

	exchange(&m, ctx, NULL, forms, TO_END); /* a page: its insertions, its status */
	assert_int_equal(m.inject_pages, 1);
	assert_true(m.inject_insertions >= 3); /* two fields and the meta pair */
	assert_int_equal(m.inject_withheld[17], 1);
	assert_int_equal(1u << 17, CSRF_INJECT_TABLE_FORM);
	uint64_t insertions = m.inject_insertions;

	exchange(&m, ctx, NULL, "<p>no form</p>", TO_END); /* a page without a form: counted, no status */
	assert_int_equal(m.inject_pages, 2);
	assert_int_equal(m.inject_withheld[17], 1);

	exchange(&m, ctx, "gzip", forms, TO_END); /* compressed */
	assert_int_equal(m.inject_passed[CSRF_METRICS_PASS_ENCODING], 1);

	exchange(&m, ctx, NULL, "<meta charset=shift_jis><form method=post></form>", TO_END); /* charset */
	assert_int_equal(m.inject_passed[CSRF_METRICS_PASS_CHARSET], 1);

	exchange(&m, keyless, NULL, forms, TO_END); /* the page could not be prepared */
	assert_int_equal(m.inject_passed[CSRF_METRICS_PASS_ERROR], 1);

	/* stopped before its end (a client gone): nothing */
	exchange(&m, ctx, NULL, forms, TO_HOLD);
	exchange(&m, ctx, NULL, forms, TO_HEADERS);
	exchange(&m, ctx, NULL, forms, TO_FEED);
	/* a response the exchange passes at once (HEAD, not HTML) */
	csrf_metrics_count_response(&m, CSRF_RESPONSE_PASS, NULL);
	csrf_metrics_count_response(&m, CSRF_RESPONSE_INJECT, NULL);
	csrf_metrics_count_response(NULL, CSRF_RESPONSE_COMPRESSED, NULL);
	csrf_metrics_count_response(&m, (csrf_response_verdict)7, NULL);
	assert_int_equal(m.inject_pages, 2);
	assert_int_equal(m.inject_insertions, insertions);
	assert_int_equal(m.inject_passed[CSRF_METRICS_PASS_ENCODING], 1);
	assert_int_equal(m.inject_passed[CSRF_METRICS_PASS_CHARSET], 1);
	assert_int_equal(m.inject_passed[CSRF_METRICS_PASS_ERROR], 1);
	uint64_t withheld = 0;
	for (unsigned i = 0; i < CSRF_METRICS_STATUS_BITS; i++)
		withheld += m.inject_withheld[i];
	assert_int_equal(withheld, 1);
	csrf_ctx_free(ctx);
	csrf_ctx_free(keyless);
}

/* golden with every sample labelled zone="a" first. */
static char *zoned_golden(void)
{
	static char out[2 * sizeof golden];
	size_t n = 0;
	for (const char *line = golden; *line;) {
		const char *eol = strchr(line, '\n');
		size_t len = (size_t)(eol - line) + 1;
		if (line[0] == '#') {
			memcpy(out + n, line, len);
			n += len;
		} else {
			size_t name = strcspn(line, "{ ");
			memcpy(out + n, line, name);
			n += name;
			if (line[name] == '{') {
				memcpy(out + n, "{zone=\"a\",", 10);
				n += 10;
				memcpy(out + n, line + name + 1, len - name - 1);
				n += len - name - 1;
			} else {
				memcpy(out + n, "{zone=\"a\"}", 10);
				n += 10;
				memcpy(out + n, line + name, len - name);
				n += len - name;
			}
		}
		line = eol + 1;
	}
	out[n] = '\0';
	return out;
}

static void test_render_zones(void **state)
{
	(void)state;
	static char out[4 * CSRF_METRICS_ZONE_TEXT_MAX];
	csrf_metrics a, b;
	size_t len;

	fill(&a);
	csrf_metrics_init(&b, T0 + 1);
	csrf_metrics_count(&b, CSRF_METRICS_REJECTED, CSRF_CROSS_SITE);

	/* one zone: the golden text with the label in front */
	const csrf_metrics *one[] = {&a};
	const char *za[] = {"a"};
	assert_int_equal(csrf_metrics_render_zones(one, za, 1, out, sizeof out, &len), CSRF_OK);
	assert_string_equal(out, zoned_golden());
	assert_int_equal(len, strlen(out));

	/* two zones: six families, each once, zone a's samples then b's */
	const csrf_metrics *two[] = {&a, &b};
	const char *zab[] = {"a", "b\"\\\n"};
	assert_int_equal(csrf_metrics_render_zones(two, zab, 2, out, sizeof out, &len), CSRF_OK);
	size_t types = 0;
	for (const char *p = out; (p = strstr(p, "# TYPE ")) != NULL; p++)
		types++;
	assert_int_equal(types, 6);
	const char *ra = strstr(
	    out, "csrf_requests_total{zone=\"a\",verdict=\"rejected\",reason=\"cross_site\"} 18446744073709551615\n");
	const char *rb =
	    strstr(out, "csrf_requests_total{zone=\"b\\\"\\\\\\n\",verdict=\"rejected\",reason=\"cross_site\"} 1\n");
	const char *pages = strstr(out, "# HELP csrf_inject_pages_total");
	assert_non_null(ra);
	assert_non_null(rb);
	assert_true(ra < rb && rb < pages);
	assert_non_null(strstr(out, "csrf_metrics_start_time_seconds{zone=\"a\"} 1700000000\n"
	                            "csrf_metrics_start_time_seconds{zone=\"b\\\"\\\\\\n\"} 1700000001\n"));

	/* a short buffer: the size needed, "" left */
	char small[100];
	assert_int_equal(csrf_metrics_render_zones(two, zab, 2, small, sizeof small, &len), CSRF_ERR_BUFFER);
	assert_int_equal(len, strlen(out) + 1);
	assert_string_equal(small, "");

	/* bad arguments */
	const csrf_metrics *with_null[] = {&a, NULL};
	const char *dup[] = {"a", "a"};
	const char *null_name[] = {"a", NULL};
	char long_name[CSRF_METRICS_ZONE_NAME_MAX + 2];
	memset(long_name, 'z', sizeof long_name - 1);
	long_name[sizeof long_name - 1] = '\0';
	const char *too_long[] = {long_name};
	csrf_metrics bad;
	memset(&bad, 0, sizeof bad);
	const csrf_metrics *invalid[] = {&bad};
	assert_int_equal(csrf_metrics_render_zones(two, zab, 0, out, sizeof out, &len), CSRF_ERR_ARG);
	assert_int_equal(csrf_metrics_render_zones(two, zab, CSRF_METRICS_ZONES_MAX + 1, out, sizeof out, &len),
	                 CSRF_ERR_ARG);
	assert_int_equal(csrf_metrics_render_zones(NULL, zab, 1, out, sizeof out, &len), CSRF_ERR_ARG);
	assert_int_equal(csrf_metrics_render_zones(two, NULL, 1, out, sizeof out, &len), CSRF_ERR_ARG);
	assert_int_equal(csrf_metrics_render_zones(two, zab, 2, NULL, 0, &len), CSRF_ERR_ARG);
	assert_int_equal(csrf_metrics_render_zones(with_null, zab, 2, out, sizeof out, &len), CSRF_ERR_ARG);
	assert_int_equal(csrf_metrics_render_zones(two, dup, 2, out, sizeof out, &len), CSRF_ERR_ARG);
	assert_int_equal(csrf_metrics_render_zones(two, null_name, 2, out, sizeof out, &len), CSRF_ERR_ARG);
	assert_int_equal(csrf_metrics_render_zones(one, too_long, 1, out, sizeof out, &len), CSRF_ERR_ARG);
	assert_int_equal(csrf_metrics_render_zones(invalid, za, 1, out, sizeof out, &len), CSRF_ERR_ARG);
	assert_int_equal(len, 0);
}

/* The largest zoned text: every zone at CSRF_METRICS_ZONES_MAX, every
 * counter at its maximum, every name the longest and all escapes. */
static void test_zones_text_max(void **state)
{
	(void)state;
	static csrf_metrics sets[CSRF_METRICS_ZONES_MAX];
	static char names[CSRF_METRICS_ZONES_MAX][CSRF_METRICS_ZONE_NAME_MAX + 1];
	const csrf_metrics *ptrs[CSRF_METRICS_ZONES_MAX];
	const char *zones[CSRF_METRICS_ZONES_MAX];
	size_t cap = (size_t)CSRF_METRICS_ZONES_MAX * CSRF_METRICS_ZONE_TEXT_MAX, len;
	char *out = malloc(cap);

	assert_non_null(out);
	for (int i = 0; i < CSRF_METRICS_ZONES_MAX; i++) {
		memset(&sets[i], 0xff, sizeof sets[i]);
		sets[i].magic = CSRF_METRICS_MAGIC;
		memset(names[i], '"', CSRF_METRICS_ZONE_NAME_MAX);
		names[i][0] = (char)('0' + i % 10); /* all different */
		names[i][1] = (char)('0' + i / 10);
		ptrs[i] = &sets[i];
		zones[i] = names[i];
	}
	assert_int_equal(csrf_metrics_render_zones(ptrs, zones, CSRF_METRICS_ZONES_MAX, out, cap, &len), CSRF_OK);
	assert_true(len < cap);
	/* and one zone alone within one zone's share */
	assert_int_equal(csrf_metrics_render_zones(ptrs, zones, 1, out, CSRF_METRICS_ZONE_TEXT_MAX, &len), CSRF_OK);
	free(out);
}

#define THREADS 4
#define PER_THREAD 100000

static csrf_metrics shared;

static void *counter_thread(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	for (unsigned i = 0; i < PER_THREAD; i++) {
		csrf_result r;
		switch ((i + id) % 4) {
		case 0:
			r = result(1, CSRF_SAFE_METHOD, 0, 0);
			break;
		case 1:
			r = result(0, CSRF_CROSS_SITE, 0, 0);
			break;
		case 2:
			r = result(1, CSRF_ORIGIN_MISMATCH, 1, 0);
			break;
		default:
			r = result(0, CSRF_TOKEN_MISSING, 0, 1); /* not counted */
			break;
		}
		csrf_metrics_count_check(&shared, &r);
		csrf_metrics_count_page(&shared, 2, CSRF_INJECT_GET_BUTTON);
	}
	return NULL;
}

/* Threads counting at once lose no increment. */
static void test_counts_add_up(void **state)
{
	(void)state;
	pthread_t t[THREADS];

	csrf_metrics_init(&shared, T0);
	for (unsigned i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, counter_thread, (void *)(uintptr_t)i), 0);
	for (unsigned i = 0; i < THREADS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);

	const uint64_t quarter = (uint64_t)THREADS * PER_THREAD / 4;
	assert_int_equal(shared.requests[CSRF_METRICS_ALLOWED][CSRF_SAFE_METHOD], quarter);
	assert_int_equal(shared.requests[CSRF_METRICS_REJECTED][CSRF_CROSS_SITE], quarter);
	assert_int_equal(shared.requests[CSRF_METRICS_REPORT_ONLY][CSRF_ORIGIN_MISMATCH], quarter);
	uint64_t total = 0;
	for (int v = 0; v < CSRF_METRICS_VERDICTS; v++)
		for (int c = 0; c <= CSRF_METRICS_REASONS; c++)
			total += shared.requests[v][c];
	assert_int_equal(total, 3 * quarter);
	assert_int_equal(shared.inject_pages, (uint64_t)THREADS * PER_THREAD);
	assert_int_equal(shared.inject_insertions, 2 * (uint64_t)THREADS * PER_THREAD);
	assert_int_equal(shared.inject_withheld[10], (uint64_t)THREADS * PER_THREAD); /* get_button: bit 10 */
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--render") == 0) {
		static char out[CSRF_METRICS_TEXT_MAX];
		csrf_metrics m;
		size_t len;
		fill(&m);
		if (csrf_metrics_render(&m, out, sizeof out, &len) != CSRF_OK)
			return 1;
		return fwrite(out, 1, len, stdout) == len ? 0 : 1;
	}
	if (argc == 2 && strcmp(argv[1], "--render-zones") == 0) {
		static char out[3 * CSRF_METRICS_ZONE_TEXT_MAX];
		csrf_metrics m[3];
		const csrf_metrics *sets[] = {&m[0], &m[1], &m[2]};
		const char *zones[] = {"app", "admin \"x\"", "line\\\nbreak"};
		size_t len;
		fill(&m[0]);
		csrf_metrics_init(&m[1], T0);
		csrf_metrics_count(&m[1], CSRF_METRICS_REPORT_ONLY, CSRF_SAME_SITE);
		memset(&m[2], 0xff, sizeof m[2]);
		m[2].magic = CSRF_METRICS_MAGIC;
		if (csrf_metrics_render_zones(sets, zones, 3, out, sizeof out, &len) != CSRF_OK)
			return 1;
		return fwrite(out, 1, len, stdout) == len ? 0 : 1;
	}
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_render_exact),   cmocka_unit_test(test_position_independent),
	    cmocka_unit_test(test_valid),          cmocka_unit_test(test_buffer_too_small),
	    cmocka_unit_test(test_text_max),       cmocka_unit_test(test_every_status_bit_named),
	    cmocka_unit_test(test_count_response), cmocka_unit_test(test_counts_add_up),
	    cmocka_unit_test(test_render_zones),   cmocka_unit_test(test_zones_text_max),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
