/* SPDX-License-Identifier: BSD-2-Clause */
/* test_request.c - src/request.c: filing headers by name
 * (csrf_request_header), repeated headers and Cookie lines, the session
 * cookie a response sets (csrf_response_cookie), the binding to several
 * session cookie names and the warning about a session cookie never
 * seen (csrf_session_cookie_unseen). */
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

/* Every name the decision reads, with each of its bytes in turn set to
 * every other value: filed only where that byte is the same letter in
 * the other case. Names differ from a filed one in the 0x20 bit of a '-'
 * ("x\rcsrf-token") or of a non-letter are other headers. */
static void test_filed_names_exactly(void **state)
{
	(void)state;
	static const char *const names[] = {
	    "host",
	    "origin",
	    "cookie",
	    "referer",
	    "upgrade",
	    "content-type",
	    "x-csrf-token",
	    "x-http-method",
	    "sec-fetch-site",
	    "sec-fetch-mode",
	    "content-length",
	    "x-method-override",
	    "transfer-encoding",
	    "x-http-method-override",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		size_t n = strlen(names[i]);
		char name[32];
		for (size_t at = 0; at < n; at++) {
			for (unsigned c = 0; c < 256; c++) {
				memcpy(name, names[i], n);
				name[at] = (char)c;
				unsigned char want = (unsigned char)names[i][at];
				int same = c == want || (want >= 'a' && want <= 'z' && c == want - 32u);
				csrf_request req;
				csrf_request_init(&req);
				assert_int_equal(csrf_request_header(&req, name, n, "v", 1), CSRF_OK);
				csrf_request blank;
				csrf_request_init(&blank);
				/* cookie_more is read only below n_cookie_more
				 * (csrf_request_init leaves it as it was) */
				int filed = memcmp(&req, &blank, offsetof(csrf_request, cookie_more)) != 0 ||
				            req.n_cookie_more != blank.n_cookie_more || req.repeated != blank.repeated;
				if (filed != same)
					fail_msg("%s with byte %zu as 0x%02x: filed %d", names[i], at, c, filed);
			}
		}
	}
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
	    {CSRF_HEADER_NAME, CSRF_HDR_TOKEN}, /* request.c spells it in lower case */
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

/* ---- several session cookie names (phpMyAdmin: "phpMyAdmin" over HTTP,
 * "phpMyAdmin_https" over HTTPS; issue 23) ---- */

static const uint8_t SECRET[CSRF_SECRET_LEN] = {7, 7, 7, 7, 1, 2, 3, 4};
#define PMA "phpMyAdmin"
#define PMA_S "phpMyAdmin_https"

static csrf_ctx *ctx_two_names(void)
{
	csrf_ctx *ctx = NULL;
	assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
	assert_int_equal(csrf_ctx_generate_key(ctx), CSRF_OK);
	csrf_ctx_set_mode(ctx, CSRF_MODE_TOKEN);
	assert_int_equal(csrf_ctx_set_session_cookie(ctx, PMA), CSRF_OK);
	assert_int_equal(csrf_ctx_add_session_cookie(ctx, PMA_S), CSRF_OK);
	return ctx;
}

/* A request with the caller's secret and the given Cookie header lines
 * (NULL-terminated; NULL: none). */
static void session_req(csrf_request *req, const char *const *cookies)
{
	csrf_request_init(req);
	req->method = (csrf_slice){"POST", 4};
	req->target = (csrf_slice){"/", 1};
	req->scheme = (csrf_slice){"https", 5};
	req->secret = SECRET;
	for (size_t i = 0; cookies && cookies[i]; i++)
		hdr(req, "Cookie", cookies[i]);
}

/* The token of a page rendered for a request with these cookies (and,
 * when set_cookie is not NULL, a response setting it). */
static void page_token(const csrf_ctx *ctx, const char *const *cookies, const char *set_cookie,
                       char token[CSRF_TOKEN_LEN + 1])
{
	csrf_request req;
	csrf_page page;
	session_req(&req, cookies);
	if (set_cookie)
		csrf_response_cookie(ctx, &req, set_cookie, strlen(set_cookie));
	assert_int_equal(csrf_page_prepare(ctx, &req, &page), CSRF_OK);
	memcpy(token, page.token, CSRF_TOKEN_LEN + 1);
	csrf_page_wipe(&page);
}

static csrf_reason check_with(const csrf_ctx *ctx, const char *const *cookies, const char *token)
{
	csrf_request req;
	session_req(&req, cookies);
	hdr(&req, "X-CSRF-Token", token);
	return csrf_check(ctx, &req).reason;
}

#define C(...) ((const char *const[]){__VA_ARGS__, NULL})

static void test_several_session_cookies(void **state)
{
	(void)state;
	csrf_ctx *ctx = ctx_two_names();
	char t[CSRF_TOKEN_LEN + 1];

	/* HTTPS: the second name binds */
	page_token(ctx, C(PMA_S "=victim"), NULL, t);
	assert_int_equal(check_with(ctx, C(PMA_S "=victim"), t), CSRF_OK);
	assert_int_equal(check_with(ctx, C(PMA_S "=other"), t), CSRF_TOKEN_SESSION);
	assert_int_equal(check_with(ctx, C("x=1"), t), CSRF_TOKEN_SESSION);
	assert_int_equal(check_with(ctx, C(PMA "=victim"), t), CSRF_OK); /* the value binds, as with one name */
	/* HTTP: the first name binds */
	page_token(ctx, C("lang=en; " PMA "=victim"), NULL, t);
	assert_int_equal(check_with(ctx, C(PMA "=victim; lang=en"), t), CSRF_OK);
	assert_int_equal(check_with(ctx, C(PMA "=other"), t), CSRF_TOKEN_SESSION);

	/* An attacker who plants the other name cannot downgrade the
	 * binding to it: their own token, bound to their session value,
	 * fails beside the victim's real cookie, whichever name they add. */
	page_token(ctx, C(PMA "=attacker"), NULL, t);
	assert_int_equal(check_with(ctx, C(PMA "=attacker; " PMA_S "=victim"), t), CSRF_TOKEN_SESSION);
	assert_int_equal(check_with(ctx, C(PMA_S "=victim", PMA "=attacker"), t), CSRF_TOKEN_SESSION);
	page_token(ctx, C(PMA_S "=attacker"), NULL, t);
	assert_int_equal(check_with(ctx, C(PMA "=victim; " PMA_S "=attacker"), t), CSRF_TOKEN_SESSION);
	/* ... and the victim's own page then fails too: fail closed */
	page_token(ctx, C(PMA_S "=victim"), NULL, t);
	assert_int_equal(check_with(ctx, C(PMA "=attacker; " PMA_S "=victim"), t), CSRF_TOKEN_SESSION);

	/* A browser that holds both (HTTP, then HTTPS): bound to both, in
	 * the configured order whatever their order in the header. */
	page_token(ctx, C(PMA "=a; " PMA_S "=b"), NULL, t);
	assert_int_equal(check_with(ctx, C(PMA "=a; " PMA_S "=b"), t), CSRF_OK);
	assert_int_equal(check_with(ctx, C(PMA_S "=b", PMA "=a"), t), CSRF_OK);
	assert_int_equal(check_with(ctx, C(PMA_S "=b"), t), CSRF_TOKEN_SESSION);
	assert_int_equal(check_with(ctx, C(PMA "=a"), t), CSRF_TOKEN_SESSION);
	assert_int_equal(check_with(ctx, C(PMA "=b; " PMA_S "=a"), t), CSRF_TOKEN_SESSION);
	assert_int_equal(check_with(ctx, C(PMA "=ab; " PMA_S "="), t), CSRF_TOKEN_SESSION);
	/* the digest of both is not the value of either */
	page_token(ctx, C(PMA "=a"), NULL, t);
	assert_int_equal(check_with(ctx, C(PMA "=a; " PMA_S "=a"), t), CSRF_TOKEN_SESSION);

	/* one name sent twice: ambiguous, as with one name */
	page_token(ctx, C(PMA_S "=victim"), NULL, t);
	assert_int_equal(check_with(ctx, C(PMA_S "=victim; " PMA_S "=evil"), t), CSRF_COOKIE_AMBIGUOUS);
	assert_int_equal(check_with(ctx, C(PMA_S "=victim", PMA_S "=victim"), t), CSRF_COOKIE_AMBIGUOUS);

	/* no session at all, then one */
	page_token(ctx, NULL, NULL, t);
	assert_int_equal(check_with(ctx, NULL, t), CSRF_OK);
	assert_int_equal(check_with(ctx, C(PMA_S "=victim"), t), CSRF_TOKEN_SESSION);

	/* the login page: the response sets the HTTPS name */
	page_token(ctx, NULL, PMA_S "=fresh; path=/; secure; HttpOnly", t);
	assert_int_equal(check_with(ctx, C(PMA_S "=fresh"), t), CSRF_OK);
	assert_int_equal(check_with(ctx, C(PMA_S "=stale"), t), CSRF_TOKEN_SESSION);
	page_token(ctx, C(PMA_S "=old"), PMA "=fresh; path=/", t);
	assert_int_equal(check_with(ctx, C(PMA "=fresh"), t), CSRF_OK);

	/* set replaces the list; NULL clears it */
	assert_int_equal(csrf_ctx_set_session_cookie(ctx, PMA_S), CSRF_OK);
	page_token(ctx, C(PMA "=a; " PMA_S "=b"), NULL, t);
	assert_int_equal(check_with(ctx, C(PMA "=zzz; " PMA_S "=b"), t), CSRF_OK);
	assert_int_equal(csrf_ctx_set_session_cookie(ctx, NULL), CSRF_OK);
	assert_int_equal(check_with(ctx, C(PMA_S "=anything"), t), CSRF_TOKEN_SESSION); /* bound to "b", now to "" */
	page_token(ctx, C(PMA_S "=b"), NULL, t);
	assert_int_equal(check_with(ctx, C(PMA_S "=other"), t), CSRF_OK);
	csrf_ctx_free(ctx);
}

static void test_session_cookie_config(void **state)
{
	(void)state;
	csrf_ctx *ctx = NULL;
	assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
	assert_int_equal(csrf_ctx_add_session_cookie(ctx, "a"), CSRF_OK);
	assert_int_equal(csrf_ctx_add_session_cookie(ctx, "a"), CSRF_ERR_CONFIG);
	assert_non_null(strstr(csrf_ctx_error(ctx), "named twice"));
	assert_int_equal(csrf_ctx_add_session_cookie(ctx, "b c"), CSRF_ERR_CONFIG);
	assert_non_null(strstr(csrf_ctx_error(ctx), "session cookie"));
	assert_int_equal(csrf_ctx_add_session_cookie(ctx, ""), CSRF_ERR_CONFIG);
	char longname[CSRF_FIELD_NAME_MAX + 2];
	memset(longname, 'n', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	assert_int_equal(csrf_ctx_add_session_cookie(ctx, longname), CSRF_ERR_CONFIG);
	longname[CSRF_FIELD_NAME_MAX] = '\0';
	assert_int_equal(csrf_ctx_add_session_cookie(ctx, longname), CSRF_OK);
	assert_int_equal(csrf_ctx_add_session_cookie(ctx, "c"), CSRF_OK);
	assert_int_equal(csrf_ctx_add_session_cookie(ctx, "d"), CSRF_OK);
	/* CSRF_SESSION_COOKIES_MAX (4) held: one more is refused */
	assert_int_equal(csrf_ctx_add_session_cookie(ctx, "e"), CSRF_ERR_CONFIG);
	assert_non_null(strstr(csrf_ctx_error(ctx), "at most 4"));
	assert_int_equal(csrf_ctx_add_session_cookie(ctx, NULL), CSRF_ERR_ARG);
	assert_int_equal(csrf_ctx_add_session_cookie(NULL, "a"), CSRF_ERR_ARG);
	/* the refused ones left nothing behind: "e" is not bound */
	csrf_request req;
	csrf_request_init(&req);
	csrf_response_cookie(ctx, &req, "e=1", 3);
	assert_null(req.session_id.ptr);
	csrf_response_cookie(ctx, &req, "d=1", 3);
	assert_true(SLICE_IS(req.session_id, "1"));
	csrf_ctx_free(ctx);
}

static void test_session_cookie_unseen(void **state)
{
	(void)state;
	csrf_ctx *ctx = ctx_two_names();
	csrf_slice name;
	csrf_request req;
	/* bound to cookies the request lacks while the application sets another */
	session_req(&req, C("lang=en"));
	assert_int_equal(csrf_session_cookie_unseen(ctx, &req, "other_https=v; Secure", 21, &name), 1);
	assert_true(SLICE_IS(name, "other_https"));
	assert_int_equal(csrf_session_cookie_unseen(ctx, &req, " pma_lang =en", 13, &name), 1);
	assert_true(SLICE_IS(name, "pma_lang"));
	/* nothing to say: the secret cookie, a malformed value, none */
	assert_int_equal(csrf_session_cookie_unseen(ctx, &req, "csrf_secret=x", 13, &name), 0);
	assert_int_equal(csrf_session_cookie_unseen(ctx, &req, "__Host-csrf_secret=x", 20, &name), 0);
	assert_int_equal(csrf_session_cookie_unseen(ctx, &req, "=x", 2, &name), 0);
	assert_int_equal(csrf_session_cookie_unseen(ctx, &req, "novalue", 7, &name), 0);
	assert_int_equal(csrf_session_cookie_unseen(ctx, &req, "a b=1", 5, &name), 0);
	assert_int_equal(csrf_session_cookie_unseen(ctx, &req, NULL, 0, &name), 0);
	assert_null(name.ptr);
	/* seen: in the request (either name, even twice) or set by the response */
	session_req(&req, C(PMA_S "=v"));
	assert_int_equal(csrf_session_cookie_unseen(ctx, &req, "other=1", 7, &name), -1);
	session_req(&req, C(PMA "=v; " PMA "=w"));
	assert_int_equal(csrf_session_cookie_unseen(ctx, &req, "other=1", 7, &name), -1);
	session_req(&req, NULL);
	csrf_response_cookie(ctx, &req, PMA "=new", 14);
	assert_int_equal(csrf_session_cookie_unseen(ctx, &req, "other=1", 7, NULL), -1);
	/* no binding configured: never */
	assert_int_equal(csrf_ctx_set_session_cookie(ctx, NULL), CSRF_OK);
	session_req(&req, NULL);
	assert_int_equal(csrf_session_cookie_unseen(ctx, &req, "other=1", 7, &name), 0);
	assert_int_equal(csrf_session_cookie_unseen(NULL, &req, "other=1", 7, &name), 0);
	csrf_ctx_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_filed_by_name_any_case),
	    cmocka_unit_test(test_filed_names_exactly),
	    cmocka_unit_test(test_every_override_sibling),
	    cmocka_unit_test(test_repeated_headers_marked),
	    cmocka_unit_test(test_cookie_lines),
	    cmocka_unit_test(test_bad_arguments),
	    cmocka_unit_test(test_guarded_prefixes),
	    cmocka_unit_test(test_response_cookie),
	    cmocka_unit_test(test_several_session_cookies),
	    cmocka_unit_test(test_session_cookie_config),
	    cmocka_unit_test(test_session_cookie_unseen),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
