/* test_request.c - src/request.c: filing headers by name
 * (csrf_request_header), repeated headers and Cookie lines, and the
 * session cookie a response sets (csrf_response_cookie). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "csrf.h"
#include "testutil.h"

#define SLICE_IS(s, lit) ((s).ptr && (s).len == strlen(lit) && memcmp((s).ptr, lit, (s).len) == 0)

static void hdr(csrf_request *req, const char *name, const char *value)
{
	assert_int_equal(csrf_request_header(req, name, strlen(name), value, strlen(value)), CSRF_OK);
}

static void test_filed_by_name_any_case(void **state)
{
	(void)state;
	csrf_request req;
	csrf_request_init(&req);
	hdr(&req, "origin", "https://a.example");
	hdr(&req, "REFERER", "https://a.example/x");
	hdr(&req, "Sec-Fetch-Site", "same-origin");
	hdr(&req, "cookie", "a=1");
	hdr(&req, "Content-Type", "application/x-www-form-urlencoded");
	hdr(&req, "content-length", "12");
	hdr(&req, "x-csrf-token", "tok");
	hdr(&req, "X-Http-Method-Override", "PUT");
	hdr(&req, "host", "a.example");
	hdr(&req, "Accept", "text/html");   /* not read by the decision */
	hdr(&req, "Origin-X", "https://b"); /* a longer name is another header */
	hdr(&req, "Orig", "https://b");
	assert_true(SLICE_IS(req.origin, "https://a.example"));
	assert_true(SLICE_IS(req.referer, "https://a.example/x"));
	assert_true(SLICE_IS(req.sec_fetch_site, "same-origin"));
	assert_true(SLICE_IS(req.cookie, "a=1"));
	assert_true(SLICE_IS(req.content_type, "application/x-www-form-urlencoded"));
	assert_true(SLICE_IS(req.content_length, "12"));
	assert_true(SLICE_IS(req.token_header, "tok"));
	assert_true(SLICE_IS(req.method_override, "PUT"));
	assert_true(SLICE_IS(req.host, "a.example"));
	assert_int_equal(req.repeated, 0);
	assert_int_equal(req.n_cookie_more, 0);
}

static void test_every_override_sibling(void **state)
{
	(void)state;
	const char *names[] = {"X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override"};
	for (size_t i = 0; i < 3; i++) {
		csrf_request req;
		csrf_request_init(&req);
		hdr(&req, names[i], "DELETE");
		assert_true(SLICE_IS(req.method_override, "DELETE"));
		req.method = (csrf_slice){"GET", 3};
		assert_int_equal(csrf_request_is_safe(&req), 0);
		assert_int_equal(csrf_header_is_method_override(names[i], strlen(names[i])), 1);
		assert_int_equal(csrf_header_is_method_override(names[i], strlen(names[i]) - 1), 0);
	}
}

static void test_repeated_headers_marked(void **state)
{
	(void)state;
	struct {
		const char *name;
		unsigned bit;
	} rows[] = {
	    {"Origin", CSRF_HDR_ORIGIN},
	    {"Referer", CSRF_HDR_REFERER},
	    {"Sec-Fetch-Site", CSRF_HDR_FETCH_SITE},
	    {"X-CSRF-Token", CSRF_HDR_TOKEN},
	    {"Content-Type", CSRF_HDR_CONTENT_TYPE},
	    {"Content-Length", CSRF_HDR_CONTENT_LENGTH},
	    {"Host", CSRF_HDR_HOST},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		csrf_request req;
		csrf_request_init(&req);
		hdr(&req, rows[i].name, "first");
		hdr(&req, rows[i].name, "second");
		assert_int_equal(req.repeated, rows[i].bit);
	}
	/* two different override headers are two overrides */
	csrf_request req;
	csrf_request_init(&req);
	hdr(&req, "X-HTTP-Method", "PUT");
	hdr(&req, "X-HTTP-Method-Override", "PUT");
	assert_int_equal(req.repeated, CSRF_HDR_OVERRIDE);
	assert_int_equal(csrf_header_is_method_override("x-method-override", 17), 1);
	assert_int_equal(csrf_header_is_method_override("Origin", 6), 0);
	assert_int_equal(csrf_header_is_method_override(NULL, 0), 0);
}

static void test_cookie_lines(void **state)
{
	(void)state;
	csrf_request req;
	char vals[CSRF_COOKIE_HEADERS_MAX + 1][16];
	csrf_request_init(&req);
	for (int i = 0; i < CSRF_COOKIE_HEADERS_MAX; i++) {
		snprintf(vals[i], sizeof vals[i], "c%d=%d", i, i);
		hdr(&req, "Cookie", vals[i]);
	}
	assert_int_equal(req.n_cookie_more, CSRF_COOKIE_HEADERS_MAX - 1);
	assert_int_equal(req.repeated, 0);
	snprintf(vals[CSRF_COOKIE_HEADERS_MAX], sizeof vals[0], "x=1");
	hdr(&req, "Cookie", vals[CSRF_COOKIE_HEADERS_MAX]);
	assert_int_equal(req.repeated, CSRF_HDR_COOKIES);
}

static void test_bad_arguments(void **state)
{
	(void)state;
	csrf_request req;
	csrf_request_init(&req);
	assert_int_equal(csrf_request_header(NULL, "Origin", 6, "x", 1), CSRF_ERR_ARG);
	assert_int_equal(csrf_request_header(&req, NULL, 6, "x", 1), CSRF_ERR_ARG);
	assert_int_equal(csrf_request_header(&req, "Origin", 6, NULL, 1), CSRF_ERR_ARG);
	/* an empty value is present and empty */
	assert_int_equal(csrf_request_header(&req, "Origin", 6, NULL, 0), CSRF_OK);
	assert_non_null(req.origin.ptr);
	assert_int_equal(req.origin.len, 0);
	csrf_request_init(NULL);
}

/* Names and values read exactly within their slices: each flush against
 * an unreadable page, every prefix. */
static void test_guarded_prefixes(void **state)
{
	(void)state;
	/* (no name here has a prefix that is another filed name) */
	const char *names[] = {"Origin", "Sec-Fetch-Site", "X-Method-Override", "Content-Length", "Cookie"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		size_t n = strlen(names[i]);
		for (size_t len = 0; len <= n; len++) {
			char *p = tu_guard_copy(names[i], len);
			csrf_request req;
			csrf_request_init(&req);
			assert_int_equal(csrf_request_header(&req, p, len, "v", 1), CSRF_OK);
			int filed = req.origin.ptr || req.sec_fetch_site.ptr || req.method_override.ptr ||
			            req.content_length.ptr || req.cookie.ptr;
			assert_int_equal(filed, len == n);
			tu_guard_free(p);
		}
	}
}

static csrf_ctx *ctx_with_session(void)
{
	csrf_ctx *ctx;
	assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
	assert_int_equal(csrf_ctx_set_session_cookie(ctx, "sid"), CSRF_OK);
	return ctx;
}

static void test_response_cookie(void **state)
{
	(void)state;
	csrf_ctx *ctx = ctx_with_session();
	struct {
		const char *set_cookie;
		const char *want; /* NULL: session_id left absent */
	} rows[] = {
	    {"sid=new1; Path=/; HttpOnly", "new1"},
	    {"  sid=new2", "new2"},
	    {"sid=\"quoted\"; Path=/", "quoted"},
	    {"sid=; Max-Age=0; Path=/", ""},
	    {"sid=deleted; expires=Thu, 01 Jan 1970 00:00:01 GMT; Max-Age=0", ""},
	    {"sid=gone; max-age=-1", ""},
	    {"sid=kept; Max-Age=3600", "kept"},
	    {"sid=gone; Max-Age=00", ""},
	    {"SID=x", NULL},
	    {"sid=old; Expires=Thu, 01 Jan 1970 00:00:00 GMT", ""},
	    {"sid=old; expires=Thu, 01-Jan-1970 00:00:01 GMT; Path=/", ""},
	    {"sid=live; Expires=Fri, 31 Dec 9999 23:59:59 GMT", "live"},
	    {"sid=live; Expires=garbage", "live"},
	    {"sidx=zzz; Path=/", NULL},
	    {"Sid=cap", NULL},
	    {"sid", NULL},
	    {"", NULL},
	    {"other=1", NULL},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		csrf_request req;
		csrf_request_init(&req);
		csrf_response_cookie(ctx, &req, rows[i].set_cookie, strlen(rows[i].set_cookie));
		if (!rows[i].want) {
			assert_null(req.session_id.ptr);
			continue;
		}
		if (!SLICE_IS(req.session_id, rows[i].want) &&
		    !(rows[i].want[0] == 0 && req.session_id.ptr && req.session_id.len == 0))
			fail_msg("row %zu \"%s\": got \"%.*s\"", i, rows[i].set_cookie, (int)req.session_id.len,
			         req.session_id.ptr ? req.session_id.ptr : "(absent)");
	}
	/* the last one wins, as in a browser */
	csrf_request req;
	csrf_request_init(&req);
	csrf_response_cookie(ctx, &req, "sid=first", 9);
	csrf_response_cookie(ctx, &req, "sid=last", 8);
	assert_true(SLICE_IS(req.session_id, "last"));
	/* without a configured session cookie nothing is taken */
	csrf_ctx *plain;
	assert_int_equal(csrf_ctx_new(&plain, NULL), CSRF_OK);
	csrf_request_init(&req);
	csrf_response_cookie(plain, &req, "sid=x", 5);
	assert_null(req.session_id.ptr);
	csrf_ctx_free(plain);
	csrf_ctx_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_filed_by_name_any_case),  cmocka_unit_test(test_every_override_sibling),
	    cmocka_unit_test(test_repeated_headers_marked), cmocka_unit_test(test_cookie_lines),
	    cmocka_unit_test(test_bad_arguments),           cmocka_unit_test(test_guarded_prefixes),
	    cmocka_unit_test(test_response_cookie),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
