/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_alloc.c - the hot path allocates nothing: after one warm-up,
 * 1000 rounds of csrf_check on realistic POSTs (token in the header, in
 * an urlencoded field, in a multipart field; stateful and stateless;
 * bound to a session cookie), csrf_token_issue and csrf_token_verify
 * leave both the library's allocator count and libcrypto's unchanged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <openssl/rand.h>

#include "csrf.h"
#include "testutil.h"

#define ROUNDS 1000
#define SID "session-4f2a"

static int counting_ok;

static csrf_slice lit(const char *s)
{
	csrf_slice v = {s, strlen(s)};
	return v;
}

typedef struct {
	tu_alloc_state st;
	csrf_ctx *ctx;
	uint8_t secret[CSRF_SECRET_LEN];
	char token[CSRF_TOKEN_LEN + 1];
	char field[CSRF_FIELD_NAME_MAX + 1];
	char cookie[CSRF_SECRET_COOKIE_LEN + 1];
	char form[1024];
	char multipart[2048];
	char stateless_cookie[512];
	char session_cookie[512];
	csrf_request reqs[5];
	const char *names[5];
	size_t n;
} fixture;

/* A browser's POST from the site's own page. */
static csrf_request base_request(void)
{
	csrf_request r;
	memset(&r, 0, sizeof r);
	r.method = lit("POST");
	r.target = lit("/vote?story=42");
	r.scheme = lit("https");
	r.host = lit("www.example.com");
	r.origin = lit("https://www.example.com");
	r.referer = lit("https://www.example.com/stories");
	r.sec_fetch_site = lit("same-origin");
	return r;
}

static void set_up(fixture *f)
{
	memset(f, 0, sizeof *f);
	csrf_allocator a = tu_allocator(&f->st);
	assert_int_equal(csrf_ctx_new(&f->ctx, &a), CSRF_OK);
	assert_int_equal(csrf_ctx_set_self_origin(f->ctx, "https://www.example.com", 23), CSRF_OK);
	assert_int_equal(csrf_ctx_add_trusted_origin(f->ctx, "https://app.example:8443", 24), CSRF_OK);
	assert_int_equal(csrf_ctx_add_exemption(f->ctx, NULL, "/api/hook", 9), CSRF_OK);
	assert_int_equal(csrf_ctx_generate_key(f->ctx), CSRF_OK);
	assert_int_equal(csrf_ctx_set_session_cookie(f->ctx, "sessionid"), CSRF_OK);
	assert_int_equal(csrf_ctx_set_secret_cookie(f->ctx, CSRF_DEFAULT_SECRET_COOKIE), CSRF_OK);
	assert_int_equal(csrf_secret_new(f->secret), CSRF_OK);
	assert_int_equal(csrf_token_issue(f->ctx, f->secret, SID, strlen(SID), 0, f->token, sizeof f->token), CSRF_OK);
	assert_int_equal(csrf_field_name(f->ctx, f->secret, f->field, sizeof f->field), CSRF_OK);
	assert_int_equal(csrf_secret_cookie_encode(f->ctx, f->secret, f->cookie, sizeof f->cookie), CSRF_OK);
	snprintf(f->form, sizeof f->form, "up=1&story=42&%s=%s&comment=nice+one", f->field, f->token);
	snprintf(f->multipart, sizeof f->multipart,
	         "--b0undary\r\nContent-Disposition: form-data; name=\"story\"\r\n\r\n42\r\n"
	         "--b0undary\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n"
	         "--b0undary\r\nContent-Disposition: form-data; name=\"pic\"; filename=\"a.png\"\r\n"
	         "Content-Type: image/png\r\n\r\n\x89PNG....\r\n--b0undary--\r\n",
	         f->field, f->token);
	snprintf(f->stateless_cookie, sizeof f->stateless_cookie, "theme=dark; %s=%s; sessionid=%s",
	         CSRF_DEFAULT_SECRET_COOKIE, f->cookie, SID);
	snprintf(f->session_cookie, sizeof f->session_cookie, "theme=dark; sessionid=%s", SID);

	csrf_request r = base_request();
	r.token_header = lit(f->token);
	r.secret = f->secret;
	r.session_id = lit(SID);
	f->names[f->n] = "stateful, header";
	f->reqs[f->n++] = r;

	r = base_request();
	r.content_type = lit("application/x-www-form-urlencoded");
	r.body = lit(f->form);
	r.secret = f->secret;
	r.session_id = lit(SID);
	f->names[f->n] = "stateful, urlencoded field";
	f->reqs[f->n++] = r;

	r = base_request();
	r.content_type = lit("multipart/form-data; boundary=b0undary");
	r.body = lit(f->multipart);
	r.cookie = lit(f->session_cookie);
	r.secret = f->secret;
	f->names[f->n] = "stateful, multipart field, session cookie";
	f->reqs[f->n++] = r;

	r = base_request();
	r.token_header = lit(f->token);
	r.cookie = lit(f->stateless_cookie);
	f->names[f->n] = "stateless, header";
	f->reqs[f->n++] = r;

	r = base_request();
	r.sec_fetch_site.ptr = NULL; /* an older browser: Origin only */
	r.content_type = lit("application/x-www-form-urlencoded; charset=UTF-8");
	r.body = lit(f->form);
	r.cookie = lit(f->stateless_cookie);
	f->names[f->n] = "stateless, urlencoded field, no fetch metadata";
	f->reqs[f->n++] = r;
}

static void tear_down(fixture *f)
{
	csrf_ctx_free(f->ctx);
	assert_int_equal(f->st.live, 0);
	memset(f, 0, sizeof *f);
}

/* One round of everything on the hot path; every call must succeed, so
 * that the count is taken over the paths that do the work. */
static void round_trip(fixture *f)
{
	for (size_t i = 0; i < f->n; i++) {
		csrf_result res = csrf_check(f->ctx, &f->reqs[i]);
		if (!res.allowed || res.reason != CSRF_OK)
			print_error("%s: %s\n", f->names[i], csrf_reason_name(res.reason));
		assert_int_equal(res.allowed, 1);
		assert_int_equal(res.reason, CSRF_OK);
	}
	char tok[CSRF_TOKEN_LEN + 1];
	assert_int_equal(csrf_token_issue(f->ctx, f->secret, SID, strlen(SID), 0, tok, sizeof tok), CSRF_OK);
	assert_int_equal(csrf_token_verify(f->ctx, f->secret, SID, strlen(SID), tok, strlen(tok), 0), CSRF_OK);
	/* a rejection takes no allocation either */
	assert_int_equal(csrf_token_verify(f->ctx, f->secret, "other", 5, tok, strlen(tok), 0), CSRF_TOKEN_SESSION);
	csrf_request bad = base_request();
	bad.sec_fetch_site = lit("cross-site");
	assert_int_equal(csrf_check(f->ctx, &bad).reason, CSRF_CROSS_SITE);
}

static void test_hot_path_allocates_nothing(void **state)
{
	(void)state;
	assert_true(counting_ok);
	fixture f;
	set_up(&f);
	round_trip(&f); /* warm-up: libcrypto's lazy initialisation */
	size_t ours = f.st.allocs;
	size_t theirs = tu_openssl_allocs();
	for (int i = 0; i < ROUNDS; i++)
		round_trip(&f);
	assert_int_equal(f.st.allocs, ours);
	assert_int_equal(tu_openssl_allocs(), theirs);
	tear_down(&f);
}

/* The counters themselves count: configuration allocates through the
 * allocator, so a test that saw zero would prove nothing. */
static void test_counters_count(void **state)
{
	(void)state;
	fixture f;
	set_up(&f);
	assert_true(f.st.allocs > 0);
	size_t before = f.st.allocs;
	assert_int_equal(csrf_ctx_add_trusted_origin(f.ctx, "https://b.example", 17), CSRF_OK);
	assert_true(f.st.allocs > before);
	tear_down(&f);
	/* libcrypto's counter too: its DRBG allocates when first used (the
	 * library itself draws from getrandom) */
	unsigned char probe;
	assert_int_equal(RAND_bytes(&probe, 1), 1);
	assert_true(tu_openssl_allocs() > 0);
}

int main(void)
{
	/* before anything else touches OpenSSL */
	counting_ok = tu_count_openssl_allocs();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hot_path_allocates_nothing),
	    cmocka_unit_test(test_counters_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
