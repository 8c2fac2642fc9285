/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_ctx.c - src/ctx.c: the validation of trusted and self origins (each
 * rejection a CSRF_ERR_CONFIG with a message naming the problem, nothing
 * half-applied), exemptions, field and cookie names, bad arguments, and
 * a failing-allocator run over a whole setup: every allocation fails in
 * turn, and each run ends in a clean CSRF_ERR_NOMEM without a leak.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "csrf_session.h"
#include "internal.h"
#include "testutil.h"

/* ---- origins ---- */

typedef struct {
	const char *origin;
	csrf_reason want;
	const char *problem; /* a phrase the message must contain; NULL when accepted */
	const char *scheme;  /* when accepted: the parsed origin */
	const char *host;
	uint16_t port;
} origin_row;

static const origin_row origin_rows[] = {
    /* accepted */
    {"https://example.com", CSRF_OK, NULL, "https", "example.com", 443},
    {"https://example.com:8080", CSRF_OK, NULL, "https", "example.com", 8080},
    {"http://example.com", CSRF_OK, NULL, "http", "example.com", 80},
    {"http://127.0.0.1:8080", CSRF_OK, NULL, "http", "127.0.0.1", 8080},
    {"HTTPS://App.Example:8443", CSRF_OK, NULL, "https", "app.example", 8443},
    {"https://example.com:65535", CSRF_OK, NULL, "https", "example.com", 65535},
    {"https://example.com:443", CSRF_OK, NULL, "https", "example.com", 443},
    {"https://[::1]:8443", CSRF_OK, NULL, "https", "[::1]", 8443},
    {"http://wiki.lan.:8080", CSRF_OK, NULL, "http", "wiki.lan", 8080},
    {"https://XN--BCHER-KVA.example", CSRF_OK, NULL, "https", "xn--bcher-kva.example", 443},
    /* an international name in Unicode: browsers send punycode, so the
     * operator must write it (issue 23) */
    {"https://b\xc3\xbc"
     "cher.example",
     CSRF_ERR_CONFIG, "punycode", NULL, NULL, 0},
    {"http://\xe6\x97\xa5\xe6\x9c\xac.example:8080", CSRF_ERR_CONFIG, "xn--", NULL, NULL, 0},
    /* rejected (Go's TestCrossOriginProtectionAddTrustedOriginErrors and
     * more) */
    {"example.com", CSRF_ERR_CONFIG, "no scheme", NULL, NULL, 0},
    {"example.com:443", CSRF_ERR_CONFIG, "", NULL, NULL, 0},
    {"https://", CSRF_ERR_CONFIG, "no host", NULL, NULL, 0},
    {"https://example.com/", CSRF_ERR_CONFIG, "path", NULL, NULL, 0},
    {"https://example.com/path", CSRF_ERR_CONFIG, "path", NULL, NULL, 0},
    {"https://example.com?query=value", CSRF_ERR_CONFIG, "query", NULL, NULL, 0},
    {"https://example.com?q", CSRF_ERR_CONFIG, "query", NULL, NULL, 0},
    {"https://example.com#fragment", CSRF_ERR_CONFIG, "fragment", NULL, NULL, 0},
    {"https://example.com#f", CSRF_ERR_CONFIG, "fragment", NULL, NULL, 0},
    {"?q", CSRF_ERR_CONFIG, "no scheme", NULL, NULL, 0},
    {"#f", CSRF_ERR_CONFIG, "no scheme", NULL, NULL, 0},
    {"https://ex ample.com", CSRF_ERR_CONFIG, "not a valid origin", NULL, NULL, 0},
    {"", CSRF_ERR_CONFIG, "empty", NULL, NULL, 0},
    {"null", CSRF_ERR_CONFIG, "null", NULL, NULL, 0},
    {"https://user@example.com", CSRF_ERR_CONFIG, "user information", NULL, NULL, 0},
    {"https://user:pw@example.com", CSRF_ERR_CONFIG, "user information", NULL, NULL, 0},
    {"ftp://x", CSRF_ERR_CONFIG, "scheme must be http or https", NULL, NULL, 0},
    {"ws://example.com", CSRF_ERR_CONFIG, "scheme must be http or https", NULL, NULL, 0},
    {"//example.com", CSRF_ERR_CONFIG, "", NULL, NULL, 0},
    {"https://example.com:0", CSRF_ERR_CONFIG, "port", NULL, NULL, 0},
    {"https://example.com:65536", CSRF_ERR_CONFIG, "port", NULL, NULL, 0},
    {"https://example.com:99999", CSRF_ERR_CONFIG, "port", NULL, NULL, 0},
    {"https://example.com:-1", CSRF_ERR_CONFIG, "port", NULL, NULL, 0},
    {"https://example.com:", CSRF_ERR_CONFIG, "port", NULL, NULL, 0},
    {"https://example.com:8o", CSRF_ERR_CONFIG, "port", NULL, NULL, 0},
    {"https://*.example.com", CSRF_ERR_CONFIG, "not a valid origin", NULL, NULL, 0},
    {"https://example.com ", CSRF_ERR_CONFIG, "not a valid origin", NULL, NULL, 0},
};

typedef csrf_reason (*origin_setter)(csrf_ctx *, const char *, size_t);

/* Checks one row against a setter; count() is how many origins the
 * context holds for that setter (trusted count, or has_self). */
static int check_origin_row(const origin_row *r, origin_setter set, const char *what, size_t (*count)(const csrf_ctx *),
                            const csrf_origin *(*last)(const csrf_ctx *))
{
	csrf_ctx *ctx = NULL;
	assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
	size_t len = strlen(r->origin);
	/* flush against a guard page: the setter reads only len bytes */
	char *copy = tu_guard_copy(r->origin, len);
	csrf_reason got = set(ctx, copy, len);
	tu_guard_free(copy);
	int bad = 0;
	const char *err = csrf_ctx_error(ctx);
	if (got != r->want) {
		print_error("%s \"%s\": got %s, want %s (%s)\n", what, r->origin, csrf_reason_name(got),
		            csrf_reason_name(r->want), err);
		bad = 1;
	} else if (got == CSRF_OK) {
		const csrf_origin *o = last(ctx);
		if (count(ctx) != 1 || strcmp(o->scheme, r->scheme) != 0 || strcmp(o->host, r->host) != 0 ||
		    o->port != r->port) {
			print_error("%s \"%s\": parsed as %s %s %u\n", what, r->origin, o->scheme, o->host,
			            (unsigned)o->port);
			bad = 1;
		}
	} else {
		/* a message naming the problem and the value; nothing added */
		if (!err[0] || !strstr(err, r->problem) || (len && !strstr(err, r->origin)) || !strstr(err, what)) {
			print_error("%s \"%s\": message \"%s\" should name \"%s\"\n", what, r->origin, err, r->problem);
			bad = 1;
		}
		if (count(ctx) != 0) {
			print_error("%s \"%s\": rejected but added\n", what, r->origin);
			bad = 1;
		}
	}
	csrf_ctx_free(ctx);
	return bad;
}

static size_t trusted_count(const csrf_ctx *ctx)
{
	return ctx->n_trusted;
}

static const csrf_origin *trusted_last(const csrf_ctx *ctx)
{
	return &ctx->trusted[ctx->n_trusted - 1];
}

static size_t self_count(const csrf_ctx *ctx)
{
	return (size_t)ctx->has_self;
}

static const csrf_origin *self_last(const csrf_ctx *ctx)
{
	return &ctx->self;
}

static void test_trusted_origins(void **state)
{
	(void)state;
	int bad = 0;
	for (size_t i = 0; i < sizeof origin_rows / sizeof origin_rows[0]; i++)
		bad += check_origin_row(&origin_rows[i], csrf_ctx_add_trusted_origin, "trusted origin", trusted_count,
		                        trusted_last);
	assert_int_equal(bad, 0);
}

static void test_self_origin(void **state)
{
	(void)state;
	int bad = 0;
	for (size_t i = 0; i < sizeof origin_rows / sizeof origin_rows[0]; i++)
		bad +=
		    check_origin_row(&origin_rows[i], csrf_ctx_set_self_origin, "self origin", self_count, self_last);
	assert_int_equal(bad, 0);
}

/* Only len bytes are read: the origin need not be NUL-terminated, and
 * a bad one leaves the trusted list as it was. */
static void test_origin_lengths(void **state)
{
	(void)state;
	csrf_ctx *ctx = NULL;
	assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
	const char *s = "https://a.example/trailing";
	assert_int_equal(csrf_ctx_add_trusted_origin(ctx, s, strlen("https://a.example")), CSRF_OK);
	assert_int_equal(ctx->n_trusted, 1);
	assert_string_equal(ctx->trusted[0].host, "a.example");
	assert_int_equal(csrf_ctx_add_trusted_origin(ctx, s, strlen(s)), CSRF_ERR_CONFIG);
	assert_int_equal(ctx->n_trusted, 1);
	assert_int_equal(csrf_ctx_add_trusted_origin(ctx, "https://b.example", 17), CSRF_OK);
	assert_int_equal(ctx->n_trusted, 2);
	assert_string_equal(ctx->trusted[0].host, "a.example");
	assert_string_equal(ctx->trusted[1].host, "b.example");
	/* a bad self origin keeps the good one */
	assert_int_equal(csrf_ctx_set_self_origin(ctx, "https://self.example", 20), CSRF_OK);
	assert_int_equal(csrf_ctx_set_self_origin(ctx, "self.example", 12), CSRF_ERR_CONFIG);
	assert_int_equal(ctx->has_self, 1);
	assert_string_equal(ctx->self.host, "self.example");
	/* every prefix of a valid origin, flush against a guard page */
	const char *full = "https://app.example:8443";
	size_t n = strlen(full);
	for (size_t len = 0; len <= n; len++) {
		char *p = tu_guard_copy(full, len);
		size_t before = ctx->n_trusted;
		csrf_reason r = csrf_ctx_add_trusted_origin(ctx, p, len);
		tu_guard_free(p);
		/* "https://a" .. "https://app.example" and
		 * "https://app.example:8" .. are origins themselves; what has
		 * no host or an empty port is not */
		int must_fail = len < strlen("https://a") || len == strlen("https://app.example:");
		int must_pass = len == n || len == strlen("https://app.example");
		if (must_fail)
			assert_int_equal(r, CSRF_ERR_CONFIG);
		if (must_pass)
			assert_int_equal(r, CSRF_OK);
		assert_true(r == CSRF_OK || r == CSRF_ERR_CONFIG);
		assert_int_equal(ctx->n_trusted, before + (r == CSRF_OK ? 1 : 0));
		if (r != CSRF_OK)
			assert_true(csrf_ctx_error(ctx)[0] != '\0');
	}
	csrf_ctx_free(ctx);
}

/* ---- exemptions ---- */

typedef struct {
	const char *method;
	const char *path;
	csrf_reason want;
} exempt_row;

static const exempt_row exempt_rows[] = {
    {NULL, "/api/hook", CSRF_OK},       {"POST", "/webhook", CSRF_OK},
    {"DELETE", "/items/{id}", CSRF_OK}, {NULL, "/", CSRF_OK},
    {NULL, "", CSRF_ERR_CONFIG},        {NULL, "api/hook", CSRF_ERR_CONFIG},
    {NULL, "/a b", CSRF_ERR_CONFIG},    {NULL, "/a?b", CSRF_ERR_CONFIG},
    {NULL, "/a#b", CSRF_ERR_CONFIG},    {NULL, "/a\tb", CSRF_ERR_CONFIG},
    {NULL, "/a\x7f", CSRF_ERR_CONFIG},  {NULL, "/caf\xc3\xa9", CSRF_ERR_CONFIG},
    {"PO ST", "/x", CSRF_ERR_CONFIG},   {"", "/x", CSRF_ERR_CONFIG},
    {"POST\n", "/x", CSRF_ERR_CONFIG},
};

static void test_exemptions(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof exempt_rows / sizeof exempt_rows[0]; i++) {
		const exempt_row *r = &exempt_rows[i];
		csrf_ctx *ctx = NULL;
		assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
		size_t len = strlen(r->path);
		char *copy = tu_guard_copy(r->path, len);
		csrf_reason got = csrf_ctx_add_exemption(ctx, r->method, copy, len);
		tu_guard_free(copy);
		if (got != r->want)
			print_error("exemption row %zu: got %s\n", i, csrf_reason_name(got));
		assert_int_equal(got, r->want);
		if (got == CSRF_OK) {
			assert_int_equal(ctx->n_exempt, 1);
			assert_int_equal(ctx->exempt[0].path_len, len);
			assert_memory_equal(ctx->exempt[0].path, r->path, len);
			if (r->method)
				assert_string_equal(ctx->exempt[0].method, r->method);
			else
				assert_null(ctx->exempt[0].method);
		} else {
			assert_int_equal(ctx->n_exempt, 0);
			assert_true(csrf_ctx_error(ctx)[0] != '\0');
		}
		csrf_ctx_free(ctx);
	}
	/* the path is (pointer, length) */
	csrf_ctx *ctx = NULL;
	assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
	assert_int_equal(csrf_ctx_add_exemption(ctx, NULL, "/api/hookXYZ", 9), CSRF_OK);
	assert_int_equal(ctx->exempt[0].path_len, 9);
	assert_memory_equal(ctx->exempt[0].path, "/api/hook", 9);
	assert_int_equal(csrf_ctx_add_exemption(ctx, NULL, NULL, 0), CSRF_ERR_ARG);
	assert_int_equal(ctx->n_exempt, 1);
	csrf_ctx_free(ctx);
}

/* ---- names ---- */

typedef struct {
	const char *name;
	csrf_reason want;
} name_row;

static const name_row field_rows[] = {
    {"authenticity_token", CSRF_OK},
    {"csrf-token_1", CSRF_OK},
    {"x", CSRF_OK},
    {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", CSRF_OK},          /* 64 */
    {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", CSRF_ERR_CONFIG}, /* 65 */
    {"", CSRF_ERR_CONFIG},
    {"a b", CSRF_ERR_CONFIG},
    {"a.b", CSRF_ERR_CONFIG},
    {"a=b", CSRF_ERR_CONFIG},
    {"a\"b", CSRF_ERR_CONFIG},
    {"<x>", CSRF_ERR_CONFIG},
    {"caf\xc3\xa9", CSRF_ERR_CONFIG},
};

static void test_field_name(void **state)
{
	(void)state;
	uint8_t secret[CSRF_SECRET_LEN];
	memset(secret, 7, sizeof secret);
	for (size_t i = 0; i < sizeof field_rows / sizeof field_rows[0]; i++) {
		const name_row *r = &field_rows[i];
		csrf_ctx *ctx = NULL;
		assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
		char derived[CSRF_FIELD_NAME_MAX + 1], out[CSRF_FIELD_NAME_MAX + 1];
		assert_int_equal(csrf_field_name(ctx, secret, derived, sizeof derived), CSRF_OK);
		csrf_reason got = csrf_ctx_set_field_name(ctx, r->name);
		if (got != r->want)
			print_error("field name row %zu: got %s\n", i, csrf_reason_name(got));
		assert_int_equal(got, r->want);
		assert_int_equal(csrf_field_name(ctx, secret, out, sizeof out), CSRF_OK);
		if (got == CSRF_OK) {
			assert_string_equal(out, r->name);
			/* NULL goes back to derived names */
			assert_int_equal(csrf_ctx_set_field_name(ctx, NULL), CSRF_OK);
			assert_int_equal(csrf_field_name(ctx, secret, out, sizeof out), CSRF_OK);
		} else {
			assert_true(csrf_ctx_error(ctx)[0] != '\0');
		}
		assert_string_equal(out, derived);
		csrf_ctx_free(ctx);
	}
}

static const name_row cookie_rows[] = {
    {"__Host-csrf", CSRF_OK},
    {"csrf_secret", CSRF_OK},
    {"sessionid", CSRF_OK},
    {"a!#$%&'*+-.^_`|~z", CSRF_OK},
    {"", CSRF_ERR_CONFIG},
    {"a=b", CSRF_ERR_CONFIG},
    {"a;b", CSRF_ERR_CONFIG},
    {"a b", CSRF_ERR_CONFIG},
    {"a,b", CSRF_ERR_CONFIG},
    {"a\"b", CSRF_ERR_CONFIG},
    {"a\x01", CSRF_ERR_CONFIG},
    {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", CSRF_ERR_CONFIG}, /* 65 */
};

static void test_cookie_names(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof cookie_rows / sizeof cookie_rows[0]; i++) {
		const name_row *r = &cookie_rows[i];
		csrf_ctx *ctx = NULL;
		assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
		csrf_reason got = csrf_ctx_set_secret_cookie(ctx, r->name);
		if (got != r->want)
			print_error("secret cookie row %zu: got %s\n", i, csrf_reason_name(got));
		assert_int_equal(got, r->want);
		assert_string_equal(ctx->secret_cookie, got == CSRF_OK ? r->name : CSRF_DEFAULT_SECRET_COOKIE);
		got = csrf_ctx_set_session_cookie(ctx, r->name);
		assert_int_equal(got, r->want);
		assert_string_equal(ctx->session_cookie, got == CSRF_OK ? r->name : "");
		if (got != CSRF_OK)
			assert_true(csrf_ctx_error(ctx)[0] != '\0');
		assert_int_equal(csrf_ctx_set_session_cookie(ctx, NULL), CSRF_OK);
		assert_string_equal(ctx->session_cookie, "");
		csrf_ctx_free(ctx);
	}
}

/* ---- defaults and bad arguments ---- */

static void test_defaults_and_args(void **state)
{
	(void)state;
	csrf_ctx_free(NULL);
	assert_string_equal(csrf_ctx_error(NULL), "");
	assert_int_equal(csrf_ctx_new(NULL, NULL), CSRF_ERR_ARG);
	csrf_ctx *ctx = (csrf_ctx *)&ctx;
	csrf_allocator half = {NULL, NULL, NULL};
	assert_int_equal(csrf_ctx_new(&ctx, &half), CSRF_ERR_ARG);
	assert_null(ctx);

	assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
	assert_non_null(ctx);
	assert_string_equal(csrf_ctx_error(ctx), "");
	assert_int_equal(ctx->mode, CSRF_MODE_BOTH);
	assert_int_equal(ctx->allow_fetch_none, 1);
	assert_int_equal(ctx->allow_same_site, 0);
	assert_int_equal(ctx->unsafe_get, 0);
	assert_int_equal(ctx->report_only, 0);
	assert_int_equal(ctx->has_self, 0);
	assert_int_equal(ctx->n_trusted, 0);
	assert_int_equal(ctx->max_age, 0);
	assert_string_equal(ctx->secret_cookie, CSRF_DEFAULT_SECRET_COOKIE);
	assert_string_equal(ctx->session_cookie, "");
	assert_string_equal(ctx->field_name, "");

	/* setters: an unknown mode is ignored */
	csrf_ctx_set_mode(ctx, CSRF_MODE_ORIGIN);
	assert_int_equal(ctx->mode, CSRF_MODE_ORIGIN);
	csrf_ctx_set_mode(ctx, (csrf_mode)42);
	assert_int_equal(ctx->mode, CSRF_MODE_ORIGIN);
	csrf_ctx_set_report_only(ctx, 5);
	assert_int_equal(ctx->report_only, 1);
	csrf_ctx_set_allow_fetch_none(ctx, 0);
	assert_int_equal(ctx->allow_fetch_none, 0);
	csrf_ctx_set_allow_same_site(ctx, 1);
	assert_int_equal(ctx->allow_same_site, 1);
	csrf_ctx_set_unsafe_get(ctx, 1);
	assert_int_equal(ctx->unsafe_get, 1);
	csrf_ctx_set_max_age(ctx, 60);
	assert_int_equal(ctx->max_age, 60);

	/* NULL contexts */
	assert_int_equal(csrf_ctx_set_self_origin(NULL, "https://a.example", 17), CSRF_ERR_ARG);
	assert_int_equal(csrf_ctx_add_trusted_origin(NULL, "https://a.example", 17), CSRF_ERR_ARG);
	assert_int_equal(csrf_ctx_add_exemption(NULL, NULL, "/x", 2), CSRF_ERR_ARG);
	assert_int_equal(csrf_ctx_set_field_name(NULL, "x"), CSRF_ERR_ARG);
	assert_int_equal(csrf_ctx_set_secret_cookie(NULL, "x"), CSRF_ERR_ARG);
	assert_int_equal(csrf_ctx_set_secret_cookie(ctx, NULL), CSRF_ERR_ARG);
	assert_int_equal(csrf_ctx_set_session_cookie(NULL, "x"), CSRF_ERR_ARG);
	csrf_ctx_set_mode(NULL, CSRF_MODE_TOKEN);
	csrf_ctx_set_report_only(NULL, 1);
	csrf_ctx_set_allow_fetch_none(NULL, 1);
	csrf_ctx_set_allow_same_site(NULL, 1);
	csrf_ctx_set_unsafe_get(NULL, 1);
	csrf_ctx_set_max_age(NULL, 1);
	csrf_ctx_set_reauth_policy(NULL, 1, 2, 3);
	/* NULL origin with a length is not read */
	assert_int_equal(csrf_ctx_add_trusted_origin(ctx, NULL, 0), CSRF_ERR_CONFIG);
	assert_int_equal(ctx->n_trusted, 0);
	csrf_ctx_free(ctx);
}

/* ---- the failing allocator ---- */

/* A whole configuration: every call that may allocate, and the ones that
 * may not, in the order a server makes them. The first failure is
 * returned; *step says which call it was. */
static csrf_reason full_setup(const csrf_allocator *a, csrf_ctx **out, int *step)
{
	static const uint8_t key[CSRF_KEY_LEN] = {1, 2, 3};
	csrf_reason r;
	*out = NULL;
	*step = 0;
#define STEP(call)                                                                                                     \
	do {                                                                                                           \
		(*step)++;                                                                                             \
		if ((r = (call)) != CSRF_OK)                                                                           \
			return r;                                                                                      \
	} while (0)
	STEP(csrf_ctx_new(out, a));
	csrf_ctx *ctx = *out;
	STEP(csrf_ctx_set_self_origin(ctx, "https://www.example.com", 23));
	STEP(csrf_ctx_add_trusted_origin(ctx, "https://app.example:8443", 24));
	STEP(csrf_ctx_add_trusted_origin(ctx, "https://admin.example.com", 25));
	STEP(csrf_ctx_add_trusted_origin(ctx, "http://127.0.0.1:8080", 21));
	STEP(csrf_ctx_add_exemption(ctx, NULL, "/api/hook", 9));
	STEP(csrf_ctx_add_exemption(ctx, "POST", "/webhook", 8));
	STEP(csrf_ctx_add_key(ctx, 1, key, 0));
	STEP(csrf_ctx_generate_key(ctx));
	STEP(csrf_ctx_set_field_name(ctx, "authenticity_token"));
	STEP(csrf_ctx_set_secret_cookie(ctx, "__Host-csrf"));
	STEP(csrf_ctx_set_session_cookie(ctx, "sessionid"));
	csrf_ctx_set_max_age(ctx, 3600);
	csrf_ctx_set_reauth_policy(ctx, 3, 600, 120);
#undef STEP
	return CSRF_OK;
}

static void test_failing_allocator(void **state)
{
	(void)state;
	size_t n;
	size_t needed = 0;
	for (n = 1; n < 1000; n++) {
		tu_alloc_state st = {0, 0, n, 0};
		csrf_allocator a = tu_allocator(&st);
		csrf_ctx *ctx = NULL;
		int step = 0;
		csrf_reason r = full_setup(&a, &ctx, &step);
		if (r == CSRF_OK) {
			/* no allocation failed: the whole setup fits in n - 1 */
			assert_true(st.allocs < n);
			needed = st.allocs;
			/* the context works */
			uint8_t secret[CSRF_SECRET_LEN] = {9};
			char tok[CSRF_TOKEN_LEN + 1];
			assert_int_equal(csrf_token_issue(ctx, secret, "s", 1, 0, tok, sizeof tok), CSRF_OK);
			assert_int_equal(csrf_token_verify(ctx, secret, "s", 1, tok, strlen(tok), 0), CSRF_OK);
			assert_int_equal(ctx->n_trusted, 3);
			assert_int_equal(ctx->n_exempt, 2);
			csrf_ctx_free(ctx);
			assert_int_equal(st.live, 0);
			break;
		}
		/* the n-th allocation failed, and it was reported as such */
		assert_int_equal(st.allocs, n);
		if (r != CSRF_ERR_NOMEM)
			print_error("allocation %zu failed in step %d: %s\n", n, step, csrf_reason_name(r));
		assert_int_equal(r, CSRF_ERR_NOMEM);
		if (step == 1) {
			assert_null(ctx);
		} else {
			/* nothing half-applied: the lists hold only whole
			 * entries */
			assert_non_null(ctx);
			assert_true(ctx->n_trusted <= 3);
			assert_true(ctx->n_exempt <= 2);
			for (size_t i = 0; i < ctx->n_exempt; i++)
				assert_non_null(ctx->exempt[i].path);
			csrf_ctx_free(ctx);
		}
		assert_int_equal(st.live, 0);
		assert_int_equal(st.frees + 1, st.allocs);
	}
	assert_true(n < 1000);
	/* a context and at least one allocation per list entry */
	assert_true(needed >= 1 + 3 + 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_trusted_origins),   cmocka_unit_test(test_self_origin),
	    cmocka_unit_test(test_origin_lengths),    cmocka_unit_test(test_exemptions),
	    cmocka_unit_test(test_field_name),        cmocka_unit_test(test_cookie_names),
	    cmocka_unit_test(test_defaults_and_args), cmocka_unit_test(test_failing_allocator),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
