/* SPDX-License-Identifier: BSD-2-Clause */
/* test_page.c - src/page.c: what a page needs in one call
 * (csrf_page_prepare): the field, a token that csrf_check accepts, and
 * the secret cookie exactly when the client has no valid one, by
 * csrf_check's cookie rules; "__Host-" and Secure on HTTPS; the session
 * a response sets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "csrf.h"

#define NOW 1800000000

static csrf_ctx *new_ctx(const char *self, const char *session_cookie, uint32_t max_age)
{
	csrf_ctx *ctx;
	assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
	assert_int_equal(csrf_ctx_generate_key(ctx), CSRF_OK);
	if (self)
		assert_int_equal(csrf_ctx_set_self_origin(ctx, self, strlen(self)), CSRF_OK);
	if (session_cookie)
		assert_int_equal(csrf_ctx_set_session_cookie(ctx, session_cookie), CSRF_OK);
	csrf_ctx_set_max_age(ctx, max_age);
	return ctx;
}

static csrf_request get_req(const char *scheme, const char *host, const char *cookie, int64_t now)
{
	csrf_request req;
	csrf_request_init(&req);
	req.method = (csrf_slice){"GET", 3};
	req.target = (csrf_slice){"/", 1};
	req.scheme = (csrf_slice){scheme, strlen(scheme)};
	if (host)
		assert_int_equal(csrf_request_header(&req, "Host", 4, host, strlen(host)), CSRF_OK);
	if (cookie)
		assert_int_equal(csrf_request_header(&req, "Cookie", 6, cookie, strlen(cookie)), CSRF_OK);
	req.now = now;
	return req;
}

/* The "name=value" of a Set-Cookie value into out. */
static void pair_of(const csrf_page *p, char *out, size_t cap)
{
	const char *semi = strchr(p->set_cookie, ';');
	size_t n = semi ? (size_t)(semi - p->set_cookie) : strlen(p->set_cookie);
	assert_true(n < cap);
	memcpy(out, p->set_cookie, n);
	out[n] = '\0';
}

/* A POST with the page's token in the header, as the browser sends it. */
static csrf_result post_with(const csrf_ctx *ctx, const char *scheme, const char *cookie, const csrf_page *p,
                             int64_t now)
{
	csrf_request req = get_req(scheme, "app.example", cookie, now);
	req.method = (csrf_slice){"POST", 4};
	assert_int_equal(csrf_request_header(&req, "X-CSRF-Token", 12, p->token, strlen(p->token)), CSRF_OK);
	assert_int_equal(csrf_request_header(&req, "Sec-Fetch-Site", 14, "same-origin", 11), CSRF_OK);
	return csrf_check(ctx, &req);
}

static void test_stateless_round_trip(void **state)
{
	(void)state;
	csrf_ctx *ctx = new_ctx(NULL, NULL, 0);
	csrf_page p, p2;
	csrf_request req = get_req("http", "app.example", NULL, NOW);
	assert_int_equal(csrf_page_prepare(ctx, &req, &p), CSRF_OK);
	assert_int_equal(strlen(p.token), CSRF_TOKEN_UNMASKED_LEN); /* version 4, the default */
	assert_true(strncmp(p.field, "csrf_", 5) == 0);
	assert_string_equal(p.origin, "http://app.example");
	assert_true(p.set_cookie_len > 0 && p.set_cookie_len == strlen(p.set_cookie));
	assert_true(strncmp(p.set_cookie, "csrf_secret=", 12) == 0);
	assert_non_null(strstr(p.set_cookie, "HttpOnly"));
	assert_non_null(strstr(p.set_cookie, "SameSite=Lax"));
	assert_null(strstr(p.set_cookie, "Secure"));
	char cookie[256];
	pair_of(&p, cookie, sizeof cookie);
	csrf_result res = post_with(ctx, "http", cookie, &p, NOW);
	assert_int_equal(res.reason, CSRF_OK);

	/* with the valid cookie: no new one, same field, a token that verifies */
	req = get_req("http", "app.example", cookie, NOW);
	assert_int_equal(csrf_page_prepare(ctx, &req, &p2), CSRF_OK);
	assert_int_equal(p2.set_cookie_len, 0);
	assert_string_equal(p2.set_cookie, "");
	assert_string_equal(p2.field, p.field);
	assert_string_not_equal(p2.token, p.token);
	assert_int_equal(post_with(ctx, "http", cookie, &p2, NOW).reason, CSRF_OK);
	csrf_page_wipe(&p);
	csrf_page_wipe(&p2);
	csrf_ctx_free(ctx);
}

static void test_https_host_prefix(void **state)
{
	(void)state;
	/* by the request's scheme (no self origin) and by the self origin */
	csrf_ctx *by_scheme = new_ctx(NULL, NULL, 0);
	csrf_ctx *by_origin = new_ctx("https://app.example", NULL, 0);
	csrf_ctx *ctxs[] = {by_scheme, by_origin};
	for (int i = 0; i < 2; i++) {
		csrf_page p;
		csrf_request req = get_req(i == 0 ? "https" : "http", "app.example", NULL, NOW);
		assert_int_equal(csrf_page_prepare(ctxs[i], &req, &p), CSRF_OK);
		assert_true(strncmp(p.set_cookie, "__Host-csrf_secret=", 19) == 0);
		assert_non_null(strstr(p.set_cookie, "Secure"));
		assert_non_null(strstr(p.set_cookie, "Path=/"));
		assert_null(strstr(p.set_cookie, "Domain"));
		assert_string_equal(p.origin, "https://app.example");
		char cookie[256];
		pair_of(&p, cookie, sizeof cookie);
		assert_int_equal(post_with(ctxs[i], i == 0 ? "https" : "http", cookie, &p, NOW).reason, CSRF_OK);
		/* the same value without the prefix is not ours on HTTPS */
		assert_int_equal(post_with(ctxs[i], i == 0 ? "https" : "http", cookie + 7, &p, NOW).reason,
		                 CSRF_SECRET_MISSING);
		csrf_page_wipe(&p);
	}
	csrf_ctx_free(by_scheme);
	csrf_ctx_free(by_origin);
}

static void test_bad_cookie_gets_new_secret(void **state)
{
	(void)state;
	csrf_ctx *ctx = new_ctx(NULL, NULL, 60);
	csrf_ctx *other = new_ctx(NULL, NULL, 0);
	csrf_page good, foreign, p;
	csrf_request req = get_req("http", "app.example", NULL, NOW);
	assert_int_equal(csrf_page_prepare(ctx, &req, &good), CSRF_OK);
	assert_int_equal(csrf_page_prepare(other, &req, &foreign), CSRF_OK);
	char c1[256], c2[256], both[600];
	pair_of(&good, c1, sizeof c1);
	pair_of(&foreign, c2, sizeof c2);
	snprintf(both, sizeof both, "%s; %s", c1, c2);
	struct {
		const char *cookie;
		int64_t now;
		const char *what;
	} rows[] = {
	    {NULL, NOW, "none"},
	    {"csrf_secret=", NOW, "empty"},
	    {"csrf_secret=forged-by-a-sibling", NOW, "forged"},
	    {c2, NOW, "signed by another server"},
	    {both, NOW, "sent twice"},
	    {c1, NOW + 61, "older than the max age"},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		req = get_req("http", "app.example", rows[i].cookie, rows[i].now);
		assert_int_equal(csrf_page_prepare(ctx, &req, &p), CSRF_OK);
		if (p.set_cookie_len == 0)
			fail_msg("%s: no new secret cookie", rows[i].what);
		assert_non_null(strstr(p.set_cookie, "Max-Age=60"));
		char fresh[256];
		pair_of(&p, fresh, sizeof fresh);
		assert_string_not_equal(fresh, c1);
		assert_int_equal(post_with(ctx, "http", fresh, &p, rows[i].now).reason, CSRF_OK);
		csrf_page_wipe(&p);
	}
	/* the expired cookie is refused by the check with its own reason */
	assert_int_equal(post_with(ctx, "http", c1, &good, NOW + 61).reason, CSRF_SECRET_EXPIRED);
	assert_int_equal(post_with(ctx, "http", c1, &good, NOW + 59).reason, CSRF_OK);
	csrf_page_wipe(&good);
	csrf_page_wipe(&foreign);
	csrf_ctx_free(ctx);
	csrf_ctx_free(other);
}

static void test_stateful_secret_no_cookie(void **state)
{
	(void)state;
	csrf_ctx *ctx = new_ctx("http://app.example", NULL, 0);
	uint8_t secret[CSRF_SECRET_LEN];
	assert_int_equal(csrf_secret_new(secret), CSRF_OK);
	csrf_request req = get_req("http", "app.example", NULL, NOW);
	req.secret = secret;
	req.session_id = (csrf_slice){"s1", 2};
	csrf_page p;
	assert_int_equal(csrf_page_prepare(ctx, &req, &p), CSRF_OK);
	assert_int_equal(p.set_cookie_len, 0);
	assert_int_equal(csrf_token_verify(ctx, secret, "s1", 2, p.token, strlen(p.token), NOW), CSRF_OK);
	assert_int_equal(csrf_token_verify(ctx, secret, "s2", 2, p.token, strlen(p.token), NOW), CSRF_TOKEN_SESSION);
	csrf_page_wipe(&p);
	csrf_ctx_free(ctx);
}

static void test_session_from_response(void **state)
{
	(void)state;
	csrf_ctx *ctx = new_ctx(NULL, "sid", 0);
	csrf_page p;
	csrf_request req = get_req("http", "app.example", "sid=old", NOW);
	/* a login page: the response sets the new session */
	csrf_response_cookie(ctx, &req, "sid=new; Path=/", 15);
	assert_int_equal(csrf_page_prepare(ctx, &req, &p), CSRF_OK);
	char cookie[300], with_new[400], with_old[400];
	pair_of(&p, cookie, sizeof cookie);
	snprintf(with_new, sizeof with_new, "%s; sid=new", cookie);
	snprintf(with_old, sizeof with_old, "%s; sid=old", cookie);
	assert_int_equal(post_with(ctx, "http", with_new, &p, NOW).reason, CSRF_OK);
	assert_int_equal(post_with(ctx, "http", with_old, &p, NOW).reason, CSRF_TOKEN_SESSION);
	csrf_page_wipe(&p);
	csrf_ctx_free(ctx);
}

static void test_errors(void **state)
{
	(void)state;
	csrf_page p;
	csrf_request req = get_req("http", "app.example", NULL, NOW);
	csrf_ctx *nokey;
	assert_int_equal(csrf_ctx_new(&nokey, NULL), CSRF_OK);
	assert_int_equal(csrf_page_prepare(nokey, &req, &p), CSRF_ERR_CONFIG);
	assert_string_equal(p.token, "");
	assert_string_equal(p.set_cookie, "");
	assert_int_equal(csrf_page_prepare(NULL, &req, &p), CSRF_ERR_ARG);
	assert_int_equal(csrf_page_prepare(nokey, NULL, &p), CSRF_ERR_ARG);
	assert_int_equal(csrf_page_prepare(nokey, &req, NULL), CSRF_ERR_ARG);
	/* no Host and no self origin: the page still gets its token; the
	 * injector is told the origin is unknown */
	csrf_ctx *ctx = new_ctx(NULL, NULL, 0);
	req = get_req("http", NULL, NULL, NOW);
	assert_int_equal(csrf_page_prepare(ctx, &req, &p), CSRF_OK);
	assert_int_equal(p.origin_len, 0);
	csrf_page_wipe(&p);
	csrf_page_wipe(NULL);
	csrf_ctx_free(ctx);
	csrf_ctx_free(nokey);
}

static void test_injectable(void **state)
{
	(void)state;
	struct {
		unsigned status;
		const char *ct, *ce;
		int yes;
	} rows[] = {
	    {200, "text/html", NULL, 1},
	    {200, "text/html; charset=utf-8", NULL, 1},
	    {200, "TEXT/HTML;charset=utf-8", "identity", 1},
	    {403, " text/html ", "", 1},
	    {200, "text/htmlx", NULL, 0},
	    {200, "text/plain", NULL, 0},
	    {200, "application/xhtml+xml", NULL, 0},
	    {200, "text/html", "gzip", 0},
	    {200, "text/html", "br", 0},
	    {204, "text/html", NULL, 0},
	    {206, "text/html", NULL, 0},
	    {302, "text/html", NULL, 0},
	    {101, "text/html", NULL, 0},
	    {200, NULL, NULL, 0},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		if (csrf_response_injectable(rows[i].status, rows[i].ct, rows[i].ct ? strlen(rows[i].ct) : 0,
		                             rows[i].ce, rows[i].ce ? strlen(rows[i].ce) : 0) != rows[i].yes)
			fail_msg("row %zu: %u %s %s", i, rows[i].status, rows[i].ct ? rows[i].ct : "-",
			         rows[i].ce ? rows[i].ce : "-");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stateless_round_trip),
	    cmocka_unit_test(test_https_host_prefix),
	    cmocka_unit_test(test_bad_cookie_gets_new_secret),
	    cmocka_unit_test(test_stateful_secret_no_cookie),
	    cmocka_unit_test(test_session_from_response),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_injectable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
