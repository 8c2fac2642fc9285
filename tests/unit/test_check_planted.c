/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_check_planted.c - csrf_check against cookie tossing and method
 * overrides in bodies: an attacker who holds a genuine (cookie, token) pair
 * of the site and plants the cookie in the victim's browser (from a
 * sibling subdomain, or any port of the same host over HTTP, where cookies
 * ignore ports), and a POST whose body overrides its method past an
 * exemption. No token, secret or cookie value is ever printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "csrf.h"
#include "testutil.h"

#define NOW ((int64_t)1764000000)
#define CT_FORM "application/x-www-form-urlencoded"

static csrf_slice sl(const char *s)
{
	csrf_slice v = {s, s ? strlen(s) : 0};
	return v;
}

static csrf_ctx *ctx_new(csrf_mode mode, const char *session_cookie)
{
	csrf_ctx *ctx;
	assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
	assert_int_equal(csrf_ctx_set_self_origin(ctx, "http://shop.example", 19), CSRF_OK);
	assert_int_equal(csrf_ctx_generate_key(ctx), CSRF_OK);
	if (session_cookie)
		assert_int_equal(csrf_ctx_set_session_cookie(ctx, session_cookie), CSRF_OK);
	assert_int_equal(csrf_ctx_add_exemption(ctx, "POST", "/webhook", 8), CSRF_OK);
	csrf_ctx_set_mode(ctx, mode);
	return ctx;
}

/* What the attacker got from the site for their own session: a signed
 * secret cookie and a token for it. */
typedef struct {
	char cookie[CSRF_SECRET_COOKIE_LEN + 1];
	char token[CSRF_TOKEN_LEN + 1];
} pair;

static void genuine_pair(const csrf_ctx *ctx, const char *sid, pair *p)
{
	uint8_t secret[CSRF_SECRET_LEN];
	assert_int_equal(csrf_secret_new(secret), CSRF_OK);
	assert_int_equal(csrf_secret_cookie_encode(ctx, secret, p->cookie, sizeof p->cookie), CSRF_OK);
	assert_int_equal(csrf_token_issue(ctx, secret, sid, strlen(sid), NOW, p->token, sizeof p->token), CSRF_OK);
}

static csrf_result post(const csrf_ctx *ctx, const char *cookie_header, const char *token, const char *sfs)
{
	csrf_request req = {0};
	char *cookie = tu_guard_copy(cookie_header, strlen(cookie_header));
	req.method = sl("POST");
	req.target = sl("/vote");
	req.scheme = sl("http");
	req.host = sl("shop.example");
	req.sec_fetch_site = sl(sfs);
	req.cookie.ptr = cookie;
	req.cookie.len = strlen(cookie_header);
	req.token_header = sl(token);
	req.now = NOW;
	csrf_result r = csrf_check(ctx, &req);
	tu_guard_free(cookie);
	return r;
}

/* Bound to the application's session cookie, a planted pair is the
 * attacker's session's: it does not verify for the victim's session. */
static void test_planted_pair_bound_to_session(void **state)
{
	(void)state;
	csrf_ctx *ctx = ctx_new(CSRF_MODE_TOKEN, "sid");
	pair mallory;
	genuine_pair(ctx, "mallory-session", &mallory);
	char hdr[512];

	snprintf(hdr, sizeof hdr, "csrf_secret=%s; sid=alice-session", mallory.cookie);
	csrf_result r = post(ctx, hdr, mallory.token, "same-origin");
	assert_false(r.allowed);
	assert_int_equal(r.reason, CSRF_TOKEN_SESSION);

	/* With the attacker's own session cookie the pair is fine: it is
	 * theirs. */
	snprintf(hdr, sizeof hdr, "csrf_secret=%s; sid=mallory-session", mallory.cookie);
	r = post(ctx, hdr, mallory.token, "same-origin");
	assert_true(r.allowed);
	assert_int_equal(r.reason, CSRF_OK);
	csrf_ctx_free(ctx);
}

/* A name sent twice: the planted cookie beside the victim's own. Whatever
 * the order, the request is refused, for the secret and for the session
 * cookie (a Django-style parser keeps the last of two, ours the first). */
static void test_cookie_sent_twice(void **state)
{
	(void)state;
	csrf_ctx *ctx = ctx_new(CSRF_MODE_BOTH, "sid");
	pair alice, mallory;
	genuine_pair(ctx, "alice-session", &alice);
	genuine_pair(ctx, "mallory-session", &mallory);
	char hdr[512];
	/* The planted cookie first or second, quoted or not, among others. */
	for (int order = 0; order < 2; order++) {
		const char *one = order ? alice.cookie : mallory.cookie;
		const char *two = order ? mallory.cookie : alice.cookie;
		for (int shape = 0; shape < 3; shape++) {
			if (shape == 0)
				snprintf(hdr, sizeof hdr, "csrf_secret=%s; csrf_secret=%s; sid=alice-session", one,
				         two);
			else if (shape == 1)
				snprintf(hdr, sizeof hdr, "csrf_secret=%s;csrf_secret=\"%s\"; sid=alice-session", one,
				         two);
			else
				snprintf(hdr, sizeof hdr, "a=1; csrf_secret=%s; b=2; csrf_secret=%s; sid=alice-session",
				         one, two);
			csrf_result r = post(ctx, hdr, alice.token, "same-origin");
			if (r.allowed || r.reason != CSRF_COOKIE_AMBIGUOUS)
				fail_msg("order %d shape %d: got %s", order, shape, csrf_reason_name(r.reason));
		}
	}
	snprintf(hdr, sizeof hdr, "csrf_secret=%s; sid=mallory-session; sid=alice-session", mallory.cookie);
	csrf_result r = post(ctx, hdr, mallory.token, "same-origin");
	assert_false(r.allowed);
	assert_int_equal(r.reason, CSRF_COOKIE_AMBIGUOUS);

	/* Other cookies may repeat; ours once is fine. */
	snprintf(hdr, sizeof hdr, "x=1; csrf_secret=%s; x=2; sid=alice-session", alice.cookie);
	r = post(ctx, hdr, alice.token, "same-origin");
	assert_true(r.allowed);
	assert_int_equal(r.reason, CSRF_OK);
	/* A longer name that merely starts with ours is another cookie. */
	snprintf(hdr, sizeof hdr, "csrf_secret=%s; csrf_secret2=%s; sid=alice-session", alice.cookie, mallory.cookie);
	r = post(ctx, hdr, alice.token, "same-origin");
	assert_true(r.allowed);
	csrf_ctx_free(ctx);
}

/* Without any session binding a genuine pair is transferable; what stops
 * a planted one then is the origin stage (mode both): a page of another
 * origin of the same site is same-site, rejected by default. */
static void test_unbound_pair_needs_the_origin_stage(void **state)
{
	(void)state;
	csrf_ctx *ctx = ctx_new(CSRF_MODE_BOTH, NULL);
	pair mallory;
	genuine_pair(ctx, "", &mallory);
	char hdr[512];
	snprintf(hdr, sizeof hdr, "csrf_secret=%s", mallory.cookie);
	csrf_result r = post(ctx, hdr, mallory.token, "same-site");
	assert_false(r.allowed);
	assert_int_equal(r.reason, CSRF_SAME_SITE);
	r = post(ctx, hdr, mallory.token, "cross-site");
	assert_false(r.allowed);
	assert_int_equal(r.reason, CSRF_CROSS_SITE);
	csrf_ctx_free(ctx);
}

/* An exemption for POST /webhook does not cover a POST whose form body
 * overrides the method (Rails, Laravel, Symfony route it to DELETE). */
static void test_exemption_and_body_override(void **state)
{
	(void)state;
	csrf_ctx *ctx = ctx_new(CSRF_MODE_BOTH, NULL);
	static const struct {
		const char *ct;
		const char *body;
		int exempt;
	} rows[] = {
	    {CT_FORM, "event=paid", 1},
	    {CT_FORM, "event=paid&_method=DELETE", 0},
	    {CT_FORM, "_method=POST", 0},
	    {CT_FORM, "_method=%ZZ", 0}, /* unreadable: fail closed */
	    {"multipart/form-data; boundary=b",
	     "--b\r\nContent-Disposition: form-data; name=\"_method\"\r\n\r\nPUT\r\n--b--\r\n", 0},
	    {"multipart/form-data; boundary=b",
	     "--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n1\r\n--b--\r\n", 1},
	    {"multipart/form-data; boundary=b", "--b\r\nContent-Disposition: form-data; name=\"_method\"\r\n\r\nPU", 0},
	    {"application/json", "{\"_method\":\"DELETE\"}", 1},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		char *body = tu_guard_copy(rows[i].body, strlen(rows[i].body));
		csrf_request req = {0};
		req.method = sl("POST");
		req.target = sl("/webhook");
		req.scheme = sl("http");
		req.host = sl("shop.example");
		req.sec_fetch_site = sl("cross-site");
		req.content_type = sl(rows[i].ct);
		req.body.ptr = body;
		req.body.len = strlen(rows[i].body);
		req.now = NOW;
		csrf_result r = csrf_check(ctx, &req);
		tu_guard_free(body);
		if (rows[i].exempt && (!r.allowed || r.reason != CSRF_EXEMPT))
			fail_msg("row %zu: got %s, want exempt", i, csrf_reason_name(r.reason));
		if (!rows[i].exempt && (r.allowed || r.reason != CSRF_CROSS_SITE))
			fail_msg("row %zu: got %s, want cross_site", i, csrf_reason_name(r.reason));
	}
	csrf_ctx_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_planted_pair_bound_to_session),
	    cmocka_unit_test(test_cookie_sent_twice),
	    cmocka_unit_test(test_unbound_pair_needs_the_origin_stage),
	    cmocka_unit_test(test_exemption_and_body_override),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
