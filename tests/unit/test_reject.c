/* SPDX-License-Identifier: BSD-2-Clause */
/* test_reject.c - src/reject.c: the advice for every reason and the
 * rejection page: escaped, complete or nothing, never from the request. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "csrf.h"

static void test_advice_for_stale_cases(void **state)
{
	(void)state;
	struct {
		csrf_reason r;
		const char *says;
	} rows[] = {
	    {CSRF_TOKEN_SESSION, "earlier session"},
	    {CSRF_TOKEN_EXPIRED, "expired"},
	    {CSRF_SECRET_EXPIRED, "expired"},
	    {CSRF_UNKNOWN_KEY, "no longer uses"},
	    {CSRF_SECRET_MISSING, "cookie"},
	    {CSRF_CROSS_SITE, "another site"},
	    /* the words are true of what the browser sent (issue 23) */
	    {CSRF_SAME_SITE, "another address of this site"},
	    {CSRF_ORIGIN_MISMATCH, "another address"},
	    {CSRF_REFERER_MISMATCH, "another address"},
	    {CSRF_NULL_ORIGIN, "\"null\""},
	    {CSRF_NULL_ORIGIN, "did not say which site"},
	    {CSRF_NO_EVIDENCE, "bookmark"},
	    /* a WebSocket handshake: cross-site, same-site, another origin or
	     * null all end here, so no word names a site */
	    {CSRF_WEBSOCKET_ORIGIN, "WebSocket"},
	    {CSRF_WEBSOCKET_ORIGIN, "another address"},
	    {CSRF_WEBSOCKET_ORIGIN, "hides"},
	    {CSRF_COOKIE_AMBIGUOUS, "twice"},
	    {CSRF_TOKEN_MISSING, "reload"},
	    /* a token of a renewed secret reads as a forged one: the advice
	     * that helps the person who logged in again, harmless to a forger */
	    {CSRF_TOKEN_INVALID, "earlier session"},
	    {CSRF_SECRET_INVALID, "reload"},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		if (!strstr(csrf_reason_advice(rows[i].r), rows[i].says))
			fail_msg("%s: \"%s\" lacks \"%s\"", csrf_reason_name(rows[i].r), csrf_reason_advice(rows[i].r),
			         rows[i].says);
	for (int r = 0; r < 200; r++) {
		const char *a = csrf_reason_advice((csrf_reason)r);
		assert_non_null(a);
		assert_null(strchr(a, '<'));
		/* only a browser that said "cross-site" told where the page was */
		if (r != CSRF_CROSS_SITE && strstr(a, "another site"))
			fail_msg("%s: \"%s\" blames another site", csrf_reason_name((csrf_reason)r), a);
	}
}

static void test_page(void **state)
{
	(void)state;
	char out[CSRF_REJECT_PAGE_MAX];
	size_t len = 0;
	for (int r = 16; r < 64; r++) {
		assert_int_equal(csrf_reject_page((csrf_reason)r, 403, out, sizeof out, &len), CSRF_OK);
		assert_int_equal(len, strlen(out));
		assert_non_null(strstr(out, "<title>403 Request rejected</title>"));
		assert_non_null(strstr(out, csrf_reason_name((csrf_reason)r)));
		assert_null(strstr(out, "<script"));
	}
	assert_int_equal(csrf_reject_page(CSRF_BODY_TOO_LARGE, 413, out, sizeof out, &len), CSRF_OK);
	assert_non_null(strstr(out, "status 413"));
	/* the apostrophe of the advice is escaped */
	assert_int_equal(csrf_reject_page(CSRF_SECRET_MISSING, 403, out, sizeof out, &len), CSRF_OK);
	assert_non_null(strstr(out, "site&#39;s") ? strstr(out, "site&#39;s") : strstr(out, "site&#x27;s"));
}

static void test_short_buffers(void **state)
{
	(void)state;
	char full[CSRF_REJECT_PAGE_MAX], out[CSRF_REJECT_PAGE_MAX];
	size_t len = 0, n = 0;
	assert_int_equal(csrf_reject_page(CSRF_TOKEN_SESSION, 403, full, sizeof full, &len), CSRF_OK);
	for (size_t cap = 1; cap <= len; cap++) {
		assert_int_equal(csrf_reject_page(CSRF_TOKEN_SESSION, 403, out, cap, &n), CSRF_ERR_BUFFER);
		assert_int_equal(n, 0);
		assert_int_equal(out[0], '\0');
	}
	assert_int_equal(csrf_reject_page(CSRF_TOKEN_SESSION, 403, out, len + 1, &n), CSRF_OK);
	assert_string_equal(out, full);
	assert_int_equal(csrf_reject_page(CSRF_TOKEN_SESSION, 200, out, sizeof out, &n), CSRF_ERR_ARG);
	assert_int_equal(csrf_reject_page(CSRF_TOKEN_SESSION, 600, out, sizeof out, &n), CSRF_ERR_ARG);
	assert_int_equal(csrf_reject_page(CSRF_TOKEN_SESSION, 403, NULL, 10, &n), CSRF_ERR_ARG);
	assert_int_equal(csrf_reject_page(CSRF_TOKEN_SESSION, 403, out, 0, NULL), CSRF_ERR_ARG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_advice_for_stale_cases),
	    cmocka_unit_test(test_page),
	    cmocka_unit_test(test_short_buffers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
