/* SPDX-License-Identifier: BSD-2-Clause */
/* test_retry.c - src/retry.c: the self-healing retry offers a fresh token
 * only when enabled, only for a stale token (expired, another session, an
 * earlier secret, a retired key), only with the browser's own proof of a
 * same-origin request, and only to a client whose secret cookie is valid;
 * the token it offers passes csrf_check on the retry. Table-driven. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "csrf.h"

#define NOW 1800000000
#define SELF "https://app.example"

enum tok { T_STALE_SESSION, T_EXPIRED, T_NONE, T_FORGED, T_OTHER_KEY };
enum ck { C_VALID, C_NONE, C_EXPIRED };

typedef struct {
	const char *name;
	int enabled;
	csrf_mode mode;
	const char *sfs;    /* Sec-Fetch-Site, NULL absent */
	const char *origin; /* NULL absent */
	const char *trusted;
	enum tok tok;
	enum ck cookie;
	csrf_reason rejected; /* what csrf_check says */
	csrf_reason want;     /* what csrf_retry_prepare says */
} row;

static const row rows[] = {
    {"another session, same-origin", 1, CSRF_MODE_BOTH, "same-origin", NULL, NULL, T_STALE_SESSION, C_VALID,
     CSRF_TOKEN_SESSION, CSRF_OK},
    {"expired, Origin self", 1, CSRF_MODE_BOTH, NULL, SELF, NULL, T_EXPIRED, C_VALID, CSRF_TOKEN_EXPIRED, CSRF_OK},
    {"forged token, same-origin", 1, CSRF_MODE_BOTH, "same-origin", NULL, NULL, T_FORGED, C_VALID, CSRF_TOKEN_INVALID,
     CSRF_OK},
    {"retired key, same-origin", 1, CSRF_MODE_BOTH, "same-origin", NULL, NULL, T_OTHER_KEY, C_VALID, CSRF_UNKNOWN_KEY,
     CSRF_OK},
    {"token mode, same-origin", 1, CSRF_MODE_TOKEN, "SAME-ORIGIN", NULL, NULL, T_EXPIRED, C_VALID, CSRF_TOKEN_EXPIRED,
     CSRF_OK},
    /* never */
    {"off by default", 0, CSRF_MODE_BOTH, "same-origin", NULL, NULL, T_STALE_SESSION, C_VALID, CSRF_TOKEN_SESSION,
     CSRF_NOT_FOUND},
    {"no token at all", 1, CSRF_MODE_BOTH, "same-origin", NULL, NULL, T_NONE, C_VALID, CSRF_TOKEN_MISSING,
     CSRF_NOT_FOUND},
    {"cross-site", 1, CSRF_MODE_BOTH, "cross-site", NULL, NULL, T_EXPIRED, C_VALID, CSRF_CROSS_SITE, CSRF_NOT_FOUND},
    {"same-site", 1, CSRF_MODE_BOTH, "same-site", NULL, NULL, T_EXPIRED, C_VALID, CSRF_SAME_SITE, CSRF_NOT_FOUND},
    {"token mode, cross-site with a stale token", 1, CSRF_MODE_TOKEN, "cross-site", NULL, NULL, T_EXPIRED, C_VALID,
     CSRF_TOKEN_EXPIRED, CSRF_NOT_FOUND},
    {"token mode, no evidence", 1, CSRF_MODE_TOKEN, NULL, NULL, NULL, T_EXPIRED, C_VALID, CSRF_TOKEN_EXPIRED,
     CSRF_NOT_FOUND},
    {"token mode, Origin of another site", 1, CSRF_MODE_TOKEN, NULL, "https://evil.example", NULL, T_EXPIRED, C_VALID,
     CSRF_TOKEN_EXPIRED, CSRF_NOT_FOUND},
    {"trusted origin is not the site itself", 1, CSRF_MODE_BOTH, NULL, "https://partner.example",
     "https://partner.example", T_EXPIRED, C_VALID, CSRF_TOKEN_EXPIRED, CSRF_NOT_FOUND},
    {"Origin null", 1, CSRF_MODE_TOKEN, NULL, "null", NULL, T_EXPIRED, C_VALID, CSRF_TOKEN_EXPIRED, CSRF_NOT_FOUND},
    {"no cookie", 1, CSRF_MODE_BOTH, "same-origin", NULL, NULL, T_EXPIRED, C_NONE, CSRF_SECRET_MISSING, CSRF_NOT_FOUND},
    {"expired cookie", 1, CSRF_MODE_BOTH, "same-origin", NULL, NULL, T_EXPIRED, C_EXPIRED, CSRF_SECRET_EXPIRED,
     CSRF_NOT_FOUND},
};

static csrf_ctx *new_ctx(const row *r, uint32_t key_id)
{
	csrf_ctx *ctx;
	uint8_t key[CSRF_KEY_LEN];
	memset(key, (int)key_id, sizeof key);
	assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
	assert_int_equal(csrf_ctx_add_key(ctx, key_id, key, 1), CSRF_OK);
	assert_int_equal(csrf_ctx_set_self_origin(ctx, SELF, strlen(SELF)), CSRF_OK);
	assert_int_equal(csrf_ctx_set_session_cookie(ctx, "sid"), CSRF_OK);
	if (r->trusted)
		assert_int_equal(csrf_ctx_add_trusted_origin(ctx, r->trusted, strlen(r->trusted)), CSRF_OK);
	csrf_ctx_set_mode(ctx, r->mode);
	csrf_ctx_set_max_age(ctx, 3600);
	csrf_ctx_set_retry_token(ctx, r->enabled);
	return ctx;
}

static csrf_request request(const char *method, const char *cookie, int64_t now)
{
	csrf_request req;
	csrf_request_init(&req);
	req.method = (csrf_slice){method, strlen(method)};
	req.target = (csrf_slice){"/", 1};
	req.scheme = (csrf_slice){"https", 5};
	assert_int_equal(csrf_request_header(&req, "Host", 4, "app.example", 11), CSRF_OK);
	if (cookie)
		assert_int_equal(csrf_request_header(&req, "Cookie", 6, cookie, strlen(cookie)), CSRF_OK);
	req.now = now;
	return req;
}

static void header(csrf_request *req, const char *name, const char *value)
{
	if (value)
		assert_int_equal(csrf_request_header(req, name, strlen(name), value, strlen(value)), CSRF_OK);
}

static void test_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const row *r = &rows[i];
		csrf_ctx *ctx = new_ctx(r, 1);
		/* The page the person loaded: its cookie and token. */
		int64_t loaded = r->tok == T_EXPIRED || r->cookie == C_EXPIRED ? NOW - 7200 : NOW - 60;
		char cookie[512], sent[512];
		csrf_page page;
		csrf_request get = request("GET", "sid=s1", r->cookie == C_EXPIRED ? loaded : NOW - 60);
		assert_int_equal(csrf_page_prepare(ctx, &get, &page), CSRF_OK);
		const char *semi = strchr(page.set_cookie, ';');
		snprintf(cookie, sizeof cookie, "%.*s; sid=%s", (int)(semi - page.set_cookie), page.set_cookie,
		         r->tok == T_STALE_SESSION ? "s2" : "s1");
		char token[CSRF_TOKEN_LEN + 1];
		if (r->tok == T_OTHER_KEY) {
			csrf_ctx *old = new_ctx(r, 9);
			csrf_page p9;
			assert_int_equal(csrf_page_prepare(old, &get, &p9), CSRF_OK);
			memcpy(token, p9.token, sizeof token);
			csrf_page_wipe(&p9);
			csrf_ctx_free(old);
		} else if (r->tok == T_EXPIRED && r->cookie != C_EXPIRED) {
			csrf_request aged = request("GET", cookie, loaded);
			csrf_page p0;
			/* bound to s1 whatever the cookie line says: the session id passed */
			aged.session_id = (csrf_slice){"s1", 2};
			assert_int_equal(csrf_page_prepare(ctx, &aged, &p0), CSRF_OK);
			memcpy(token, p0.token, sizeof token);
			csrf_page_wipe(&p0);
		} else {
			memcpy(token, page.token, sizeof token);
		}
		if (r->tok == T_FORGED)
			token[strlen(token) - 10] = token[strlen(token) - 10] == 'A' ? 'B' : 'A'; /* the tag */
		snprintf(sent, sizeof sent, "%s", r->cookie == C_NONE ? "other=1" : cookie);

		csrf_request post = request("POST", sent, NOW);
		header(&post, "Sec-Fetch-Site", r->sfs);
		header(&post, "Origin", r->origin);
		if (r->tok != T_NONE)
			header(&post, "X-CSRF-Token", token);
		csrf_result res = csrf_check(ctx, &post);
		if (res.allowed || res.reason != r->rejected)
			fail_msg("%s: csrf_check says %s, want %s", r->name, csrf_reason_name(res.reason),
			         csrf_reason_name(r->rejected));

		csrf_page fresh;
		csrf_reason got = csrf_retry_prepare(ctx, &post, res.reason, &fresh);
		if (got != r->want)
			fail_msg("%s: retry says %s, want %s", r->name, csrf_reason_name(got),
			         csrf_reason_name(r->want));
		if (got == CSRF_OK) {
			assert_int_equal(strlen(fresh.token), CSRF_TOKEN_UNMASKED_LEN);
			assert_int_equal(fresh.set_cookie_len, 0); /* the same secret: no new cookie */
			assert_string_equal(fresh.field, page.field);
			/* the retry, once, with the fresh token */
			csrf_request again = request("POST", sent, NOW);
			header(&again, "Sec-Fetch-Site", r->sfs);
			header(&again, "Origin", r->origin);
			header(&again, "X-CSRF-Token", fresh.token);
			res = csrf_check(ctx, &again);
			if (!res.allowed)
				fail_msg("%s: the retry is rejected: %s", r->name, csrf_reason_name(res.reason));
		} else {
			assert_int_equal(fresh.token[0], '\0');
			assert_int_equal(fresh.set_cookie_len, 0);
		}
		csrf_page_wipe(&fresh);
		csrf_page_wipe(&page);
		csrf_ctx_free(ctx);
	}
}

static void test_only_stale_reasons(void **state)
{
	(void)state;
	row r = rows[0];
	csrf_ctx *ctx = new_ctx(&r, 1);
	csrf_page page;
	csrf_request get = request("GET", NULL, NOW);
	assert_int_equal(csrf_page_prepare(ctx, &get, &page), CSRF_OK);
	char cookie[512];
	snprintf(cookie, sizeof cookie, "%.*s", (int)(strchr(page.set_cookie, ';') - page.set_cookie), page.set_cookie);
	csrf_request post = request("POST", cookie, NOW);
	header(&post, "Sec-Fetch-Site", "same-origin");
	for (int reason = 0; reason < 80; reason++) {
		csrf_page out;
		csrf_reason got = csrf_retry_prepare(ctx, &post, (csrf_reason)reason, &out);
		int stale = reason == CSRF_TOKEN_EXPIRED || reason == CSRF_TOKEN_SESSION ||
		            reason == CSRF_TOKEN_INVALID || reason == CSRF_UNKNOWN_KEY;
		if (got != (stale ? CSRF_OK : CSRF_NOT_FOUND))
			fail_msg("%s: %s", csrf_reason_name((csrf_reason)reason), csrf_reason_name(got));
		csrf_page_wipe(&out);
	}
	/* origin mode has no token to offer */
	csrf_ctx_set_mode(ctx, CSRF_MODE_ORIGIN);
	csrf_page out;
	assert_int_equal(csrf_retry_prepare(ctx, &post, CSRF_TOKEN_EXPIRED, &out), CSRF_NOT_FOUND);
	/* a repeated Sec-Fetch-Site proves nothing */
	csrf_ctx_set_mode(ctx, CSRF_MODE_BOTH);
	header(&post, "Sec-Fetch-Site", "same-origin");
	assert_int_equal(csrf_retry_prepare(ctx, &post, CSRF_TOKEN_EXPIRED, &out), CSRF_NOT_FOUND);
	assert_int_equal(csrf_retry_prepare(NULL, &post, CSRF_TOKEN_EXPIRED, &out), CSRF_ERR_ARG);
	assert_int_equal(csrf_retry_prepare(ctx, NULL, CSRF_TOKEN_EXPIRED, &out), CSRF_ERR_ARG);
	assert_int_equal(csrf_retry_prepare(ctx, &post, CSRF_TOKEN_EXPIRED, NULL), CSRF_ERR_ARG);
	csrf_ctx_set_retry_token(NULL, 1);
	csrf_page_wipe(&page);
	csrf_ctx_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rows),
	    cmocka_unit_test(test_only_stale_reasons),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
