/* SPDX-License-Identifier: BSD-2-Clause */
/* test_response.c - src/response.c: the response exchange (begin, hold,
 * headers, feed, end, log) and the decisions the adapters share
 * (csrf_ctx_injects, csrf_reason_http_status, csrf_reject_answer in
 * src/reject.c). The adapters' behaviour on the same cases is the shared
 * table tests/cases/response.json. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "csrf.h"

static csrf_ctx *new_ctx(csrf_mode mode, int csp, const char *trusted)
{
	csrf_ctx *ctx;
	assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
	assert_int_equal(csrf_ctx_generate_key(ctx), CSRF_OK);
	assert_int_equal(csrf_ctx_set_self_origin(ctx, "https://app.example", 19), CSRF_OK);
	if (trusted)
		assert_int_equal(csrf_ctx_add_trusted_origin(ctx, trusted, strlen(trusted)), CSRF_OK);
	csrf_ctx_set_mode(ctx, mode);
	csrf_ctx_set_form_action_csp(ctx, csp);
	return ctx;
}

static csrf_request get_req(void)
{
	csrf_request req;
	csrf_request_init(&req);
	req.method = (csrf_slice){"GET", 3};
	req.target = (csrf_slice){"/", 1};
	req.scheme = (csrf_slice){"https", 5};
	assert_int_equal(csrf_request_header(&req, "Host", 4, "app.example", 11), CSRF_OK);
	return req;
}

typedef struct {
	char buf[65536];
	size_t len;
} sink;

static int to_sink(void *ud, const char *p, size_t n, int inserted)
{
	sink *s = ud;
	(void)inserted;
	if (s->len + n > sizeof s->buf)
		return 1;
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	return 0;
}

#define H(n, v)                                                                                                        \
	{                                                                                                              \
		{n, sizeof n - 1},                                                                                     \
		{                                                                                                      \
			v, sizeof v - 1                                                                                \
		}                                                                                                      \
	}

static void test_decisions(void **state)
{
	(void)state;
	csrf_ctx *origin = new_ctx(CSRF_MODE_ORIGIN, 0, NULL), *both = new_ctx(CSRF_MODE_BOTH, 0, NULL);
	assert_false(csrf_ctx_injects(origin));
	assert_true(csrf_ctx_injects(both));
	assert_false(csrf_ctx_injects(NULL));
	assert_int_equal(CSRF_MODE_ADAPTER_DEFAULT, CSRF_MODE_ORIGIN_OR_TOKEN);
	assert_int_equal(csrf_reason_http_status(CSRF_BODY_TOO_LARGE, 403), 413);
	assert_int_equal(csrf_reason_http_status(CSRF_ORIGIN_MISMATCH, 403), 403);
	assert_int_equal(csrf_reason_http_status(CSRF_ORIGIN_MISMATCH, 419), 419);
	assert_int_equal(csrf_reason_http_status(CSRF_ORIGIN_MISMATCH, 0), 403);
	assert_int_equal(csrf_reason_http_status(CSRF_ORIGIN_MISMATCH, 200), 403);
	assert_int_equal(csrf_reason_http_status(CSRF_ERR_INTERNAL, 403), 500);
	assert_int_equal(csrf_reason_http_status(CSRF_OK, 403), 0);
	csrf_ctx_free(origin);
	csrf_ctx_free(both);
}

static void test_begin(void **state)
{
	(void)state;
	csrf_ctx *ctx = new_ctx(CSRF_MODE_ORIGIN_OR_TOKEN, 0, NULL), *origin = new_ctx(CSRF_MODE_ORIGIN, 0, NULL);
	assert_int_equal(csrf_response_begin(ctx, "GET", 3, 200, "text/html", 9, NULL, 0), CSRF_RESPONSE_INJECT);
	assert_int_equal(csrf_response_begin(ctx, "HEAD", 4, 200, "text/html", 9, NULL, 0), CSRF_RESPONSE_PASS);
	assert_int_equal(csrf_response_begin(origin, "GET", 3, 200, "text/html", 9, NULL, 0), CSRF_RESPONSE_PASS);
	assert_int_equal(csrf_response_begin(ctx, "GET", 3, 200, "text/html", 9, "gzip", 4), CSRF_RESPONSE_COMPRESSED);
	assert_int_equal(csrf_response_begin(ctx, "GET", 3, 200, "text/html", 9, "identity", 8), CSRF_RESPONSE_INJECT);
	assert_int_equal(csrf_response_begin(ctx, "GET", 3, 200, "text/plain", 10, "gzip", 4), CSRF_RESPONSE_PASS);
	assert_int_equal(csrf_response_begin(ctx, "GET", 3, 304, "text/html", 9, NULL, 0), CSRF_RESPONSE_PASS);
	assert_int_equal(csrf_response_begin(ctx, "POST", 4, 403, "text/html", 9, NULL, 0), CSRF_RESPONSE_INJECT);
	assert_true(csrf_response_size() <= CSRF_RESPONSE_STATE_MAX);
	csrf_ctx_free(ctx);
	csrf_ctx_free(origin);
}

/* A whole exchange: headers judged and added, the form injected, the
 * held prescan bytes fed first. */
static void run(csrf_ctx *ctx, const csrf_header *hs, size_t n, unsigned char *action, csrf_slice *value,
                csrf_header *add, size_t *n_add, const char *body, sink *out, csrf_reason *hr)
{
	/* the values of the headers stay in the state: kept until the next run */
	static _Alignas(64) unsigned char mem[CSRF_RESPONSE_STATE_MAX];
	csrf_response *resp;
	csrf_request req = get_req();
	assert_int_equal(csrf_response_init(mem, csrf_response_size(), ctx, "text/html", 9, &resp), CSRF_OK);
	size_t used = 0;
	assert_int_equal(csrf_response_hold(resp, body, strlen(body), 1, &used), CSRF_CHARSET_INJECT);
	assert_int_equal(used, strlen(body) < CSRF_CHARSET_PRESCAN_MAX ? strlen(body) : CSRF_CHARSET_PRESCAN_MAX);
	*hr = csrf_response_headers(resp, &req, hs, n, action, value, add, n_add);
	out->len = 0;
	if (*hr == CSRF_OK) {
		csrf_slice held = csrf_response_held(resp);
		assert_int_equal(csrf_response_feed(resp, held.ptr, held.len, to_sink, out), CSRF_OK);
		assert_int_equal(csrf_response_feed(resp, body + used, strlen(body) - used, to_sink, out), CSRF_OK);
		unsigned st = 99;
		assert_int_equal(csrf_response_end(resp, to_sink, out, &st), CSRF_OK);
		char log[CSRF_RESPONSE_LOG_MAX];
		size_t ll = csrf_response_log(resp, log, sizeof log);
		assert_int_equal(ll, strlen(log));
		assert_int_equal(st == 0, ll == 0);
	}
	out->buf[out->len] = '\0';
}

static void test_headers(void **state)
{
	(void)state;
	csrf_ctx *ctx = new_ctx(CSRF_MODE_ORIGIN_OR_TOKEN, 1, "https://pay.example");
	csrf_header hs[] = {H("Content-Length", "57"),
	                    H("ETag", "\"x\""),
	                    H("Cache-Control", "public"),
	                    H("Content-Security-Policy", "default-src 'self'"),
	                    H("Set-Cookie", "sid=1; Path=/"),
	                    H("X-Other", "kept"),
	                    H("Last-Modified", "Mon, 1 Jan 2024 00:00:00 GMT"),
	                    H("Accept-Ranges", "bytes")};
	size_t n = sizeof hs / sizeof hs[0], n_add;
	unsigned char action[8];
	csrf_slice value[8];
	csrf_header add[CSRF_RESPONSE_ADD_MAX];
	static sink out;
	csrf_reason hr;
	run(ctx, hs, n, action, value, add, &n_add, "<form method=post action=/x></form>", &out, &hr);
	assert_int_equal(hr, CSRF_OK);
	assert_int_equal(action[0], CSRF_HEADER_DROP);
	assert_int_equal(action[1], CSRF_HEADER_DROP);
	assert_int_equal(action[2], CSRF_HEADER_DROP);
	assert_int_equal(action[3], CSRF_HEADER_REPLACE);
	assert_string_equal(value[3].ptr,
	                    "default-src 'self', form-action 'self' https://pay.example; base-uri 'self'");
	assert_int_equal(action[4], CSRF_HEADER_KEEP);
	assert_int_equal(action[5], CSRF_HEADER_KEEP);
	assert_int_equal(action[6], CSRF_HEADER_DROP);
	assert_int_equal(action[7], CSRF_HEADER_DROP);
	/* the secret cookie, Vary, the private rule; the policy was merged */
	assert_int_equal(n_add, 3);
	assert_memory_equal(add[0].name.ptr, "Set-Cookie", 10);
	assert_memory_equal(add[1].name.ptr, "Vary", 4);
	assert_memory_equal(add[2].name.ptr, "Cache-Control", 13);
	assert_memory_equal(add[2].value.ptr, "private", 7);
	assert_non_null(strstr(out.buf, "<input type=\"hidden\""));
	csrf_ctx_free(ctx);
}

static void test_headers_csp_off_and_alone(void **state)
{
	(void)state;
	csrf_ctx *off = new_ctx(CSRF_MODE_ORIGIN_OR_TOKEN, 0, NULL), *on = new_ctx(CSRF_MODE_BOTH, 1, NULL);
	csrf_header hs[] = {H("Content-Security-Policy", "default-src 'self'"), H("Cache-Control", "private")};
	unsigned char action[2];
	csrf_slice value[2];
	csrf_header add[CSRF_RESPONSE_ADD_MAX];
	size_t n_add;
	static sink out;
	csrf_reason hr;
	run(off, hs, 2, action, value, add, &n_add, "<p>hi", &out, &hr);
	assert_int_equal(hr, CSRF_OK);
	assert_int_equal(action[0], CSRF_HEADER_KEEP);
	assert_int_equal(action[1], CSRF_HEADER_KEEP);
	assert_int_equal(n_add, 2); /* cookie, Vary; Cache-Control kept */
	assert_string_equal(out.buf, "<p>hi");
	/* no upstream policy: one of its own */
	run(on, hs + 1, 1, action, value, add, &n_add, "<p>hi", &out, &hr);
	assert_int_equal(hr, CSRF_OK);
	assert_int_equal(n_add, 3);
	assert_memory_equal(add[2].name.ptr, "Content-Security-Policy", 23);
	assert_memory_equal(add[2].value.ptr, "form-action 'self'; base-uri 'self'", add[2].value.len);
	/* an upstream value the library does not merge (a control byte):
	 * kept, ours beside it */
	csrf_header bad[] = {H("Content-Security-Policy", "a\001b")};
	run(on, bad, 1, action, value, add, &n_add, "<p>hi", &out, &hr);
	assert_int_equal(hr, CSRF_OK);
	assert_int_equal(action[0], CSRF_HEADER_KEEP);
	assert_memory_equal(add[n_add - 1].name.ptr, "Content-Security-Policy", 23);
	csrf_ctx_free(off);
	csrf_ctx_free(on);
}

static void test_hold_charset(void **state)
{
	(void)state;
	csrf_ctx *ctx = new_ctx(CSRF_MODE_ORIGIN_OR_TOKEN, 0, NULL);
	void *mem = malloc(csrf_response_size());
	csrf_response *resp;
	char log[CSRF_RESPONSE_LOG_MAX];
	size_t used;
	/* no charset in the Content-Type: the prescan waits for more */
	assert_int_equal(csrf_response_init(mem, csrf_response_size(), ctx, "text/html", 9, &resp), CSRF_OK);
	assert_int_equal(csrf_response_hold(resp, "<p>", 3, 0, &used), CSRF_CHARSET_MORE);
	assert_int_equal(used, 3);
	assert_int_equal(csrf_response_log(resp, log, sizeof log), 0);
	assert_int_equal(csrf_response_hold(resp, "<meta charset=shift_jis>", 24, 0, &used), CSRF_CHARSET_PASS);
	assert_int_equal(csrf_response_held(resp).len, 27);
	assert_true(csrf_response_log(resp, log, sizeof log) > 0);
	assert_non_null(strstr(log, "Shift_JIS"));
	/* headers after a pass: refused, nothing changes */
	csrf_request req = get_req();
	csrf_header hs[] = {H("ETag", "\"x\"")};
	unsigned char action[1] = {9};
	csrf_slice value[1];
	csrf_header add[CSRF_RESPONSE_ADD_MAX];
	size_t n_add = 7;
	assert_int_not_equal(csrf_response_headers(resp, &req, hs, 1, action, value, add, &n_add), CSRF_OK);
	assert_int_equal(action[0], CSRF_HEADER_KEEP);
	assert_int_equal(n_add, 0);
	/* a long body: at most the prescan's bytes are held */
	static char big[3000];
	memset(big, 'a', sizeof big);
	assert_int_equal(csrf_response_init(mem, csrf_response_size(), ctx, "text/html", 9, &resp), CSRF_OK);
	assert_int_equal(csrf_response_hold(resp, big, sizeof big, 0, &used), CSRF_CHARSET_INJECT);
	assert_int_equal(used, CSRF_CHARSET_PRESCAN_MAX);
	/* bad arguments */
	assert_int_not_equal(csrf_response_init(mem, 10, ctx, "text/html", 9, &resp), CSRF_OK);
	assert_int_not_equal(csrf_response_init((char *)mem + 1, csrf_response_size(), ctx, NULL, 0, &resp), CSRF_OK);
	assert_int_equal(csrf_response_hold(NULL, "x", 1, 1, &used), CSRF_CHARSET_PASS);
	free(mem);
	csrf_ctx_free(ctx);
}

static void test_log_unclosed(void **state)
{
	(void)state;
	csrf_ctx *ctx = new_ctx(CSRF_MODE_ORIGIN_OR_TOKEN, 0, NULL);
	void *mem = malloc(csrf_response_size());
	csrf_response *resp;
	csrf_request req = get_req();
	csrf_header add[CSRF_RESPONSE_ADD_MAX];
	size_t n_add, used;
	static sink out;
	const char *body = "<form method=post><input name=a>";
	assert_int_equal(csrf_response_init(mem, csrf_response_size(), ctx, "text/html; charset=utf-8", 24, &resp),
	                 CSRF_OK);
	assert_int_equal(csrf_response_hold(resp, body, strlen(body), 1, &used), CSRF_CHARSET_INJECT);
	assert_int_equal(csrf_response_headers(resp, &req, NULL, 0, NULL, NULL, add, &n_add), CSRF_OK);
	csrf_slice held = csrf_response_held(resp);
	assert_int_equal(csrf_response_feed(resp, held.ptr, held.len, to_sink, &out), CSRF_OK);
	unsigned st;
	assert_int_equal(csrf_response_end(resp, to_sink, &out, &st), CSRF_OK);
	assert_int_equal(st, CSRF_INJECT_UNCLOSED);
	/* the held form's bytes came out, without a token */
	assert_int_equal(out.len, strlen(body));
	assert_memory_equal(out.buf, body, out.len);
	char log[CSRF_RESPONSE_LOG_MAX];
	assert_true(csrf_response_log(resp, log, sizeof log) > 0);
	assert_non_null(strstr(log, csrf_inject_status_str(CSRF_INJECT_UNCLOSED)));
	free(mem);
	csrf_ctx_free(ctx);
}

/* The site's origin reaches the injector as csrf_page_prepare read it
 * (response.c hands it over parsed): from the Host with its port, or
 * the configured one with its default port left out; none (no Host, no
 * self origin) and the page cannot be prepared. Each form's action is
 * held against it: the same origin gets the token, another port not. */
static size_t tokens_for(csrf_ctx *ctx, const char *scheme, const char *host, const char *body, csrf_reason *hr)
{
	static _Alignas(64) unsigned char mem[CSRF_RESPONSE_STATE_MAX];
	static sink out;
	csrf_response *resp;
	csrf_request req = get_req();
	csrf_header add[CSRF_RESPONSE_ADD_MAX];
	size_t n_add = 0, used = 0, count = 0;
	req.scheme = (csrf_slice){scheme, strlen(scheme)};
	req.host = (csrf_slice){host, host ? strlen(host) : 0};
	assert_int_equal(csrf_response_init(mem, csrf_response_size(), ctx, "text/html", 9, &resp), CSRF_OK);
	assert_int_equal(csrf_response_hold(resp, body, strlen(body), 1, &used), CSRF_CHARSET_INJECT);
	*hr = csrf_response_headers(resp, &req, NULL, 0, NULL, NULL, add, &n_add);
	if (*hr != CSRF_OK)
		return 0;
	out.len = 0;
	csrf_slice held = csrf_response_held(resp);
	assert_int_equal(csrf_response_feed(resp, held.ptr, held.len, to_sink, &out), CSRF_OK);
	assert_int_equal(csrf_response_feed(resp, body + used, strlen(body) - used, to_sink, &out), CSRF_OK);
	assert_int_equal(csrf_response_end(resp, to_sink, &out, NULL), CSRF_OK);
	out.buf[out.len] = '\0';
	for (const char *p = out.buf; (p = strstr(p, "type=\"hidden\"")) != NULL; p++)
		count++;
	return count;
}

static void test_self_origin_handed(void **state)
{
	(void)state;
	static const struct {
		const char *self, *scheme, *host, *action;
		size_t tokens;
		csrf_reason hr;
	} rows[] = {
	    {NULL, "https", "App.Example:8443", "https://app.example:8443/a", 1, CSRF_OK},
	    {NULL, "https", "App.Example:8443", "https://app.example/a", 0, CSRF_OK},
	    {NULL, "https", "App.Example:8443", "/a", 1, CSRF_OK},
	    {NULL, "http", "app.example:80", "http://app.example/a", 1, CSRF_OK},
	    {NULL, "http", "app.example:080", "http://app.example:80/a", 0, CSRF_ERR_ARG},
	    {NULL, "http", "app.example", "http://app.example:8080/a", 0, CSRF_OK},
	    {NULL, "https", "[::1]:8443", "https://[0:0::1]:8443/a", 1, CSRF_OK},
	    {NULL, "https", "[::1]:8443", "https://[::2]:8443/a", 0, CSRF_OK},
	    {"https://app.example:443", "https", "other.example", "https://app.example/a", 1, CSRF_OK},
	    {"https://app.example:443", "https", "other.example", "https://other.example/a", 0, CSRF_OK},
	    {"http://app.example:8080", "http", NULL, "http://app.example:8080/a", 1, CSRF_OK},
	    {NULL, "https", NULL, "/a", 0, CSRF_ERR_ARG},
	    {NULL, "https", "bad host", "/a", 0, CSRF_ERR_ARG},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		csrf_ctx *ctx;
		char body[256];
		csrf_reason hr;
		assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
		assert_int_equal(csrf_ctx_generate_key(ctx), CSRF_OK);
		if (rows[i].self)
			assert_int_equal(csrf_ctx_set_self_origin(ctx, rows[i].self, strlen(rows[i].self)), CSRF_OK);
		snprintf(body, sizeof body, "<form method=post action=\"%s\"><input name=q></form>", rows[i].action);
		size_t got = tokens_for(ctx, rows[i].scheme, rows[i].host, body, &hr);
		if (hr != rows[i].hr || got != rows[i].tokens)
			fail_msg("row %zu: %s over %s: %zu tokens (reason %d), want %zu (%d)", i, rows[i].action,
			         rows[i].host ? rows[i].host : "-", got, (int)hr, rows[i].tokens, (int)rows[i].hr);
		csrf_ctx_free(ctx);
	}
}

static void test_reject_answer(void **state)
{
	(void)state;
	csrf_ctx *ctx = new_ctx(CSRF_MODE_ORIGIN_OR_TOKEN, 0, NULL);
	static csrf_reject_answer_t a;
	assert_int_equal(csrf_reject_answer(ctx, NULL, CSRF_BODY_TOO_LARGE, 403, &a), CSRF_OK);
	assert_int_equal(a.status, 413);
	assert_int_equal(a.n_headers, 3);
	assert_memory_equal(a.headers[2].name.ptr, "Cache-Control", 13);
	assert_memory_equal(a.headers[2].value.ptr, "no-store", 8);
	assert_int_equal(a.retry, 0);
	assert_int_equal(strlen(a.body), a.body_len);
	assert_int_equal(csrf_reject_answer(ctx, NULL, CSRF_OK, 403, &a), CSRF_ERR_ARG);
	assert_int_equal(csrf_reject_answer(ctx, NULL, CSRF_ORIGIN_MISMATCH, 403, NULL), CSRF_ERR_ARG);
	csrf_reject_answer_wipe(&a);
	csrf_ctx_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_decisions),     cmocka_unit_test(test_begin),
	    cmocka_unit_test(test_headers),       cmocka_unit_test(test_headers_csp_off_and_alone),
	    cmocka_unit_test(test_hold_charset),  cmocka_unit_test(test_log_unclosed),
	    cmocka_unit_test(test_reject_answer), cmocka_unit_test(test_self_origin_handed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
