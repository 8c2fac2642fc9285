/* SPDX-License-Identifier: BSD-2-Clause */
/* test_check_exchange.c - src/check.c as adapters use it since the
 * library owns the exchange: mode origin_or_token, needs_body and the
 * body limit, headers sent twice, Cookie lines, override names in a
 * body, and exemptions that depend on a body not read yet. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "csrf.h"

#define NOW 1800000000
#define SELF "http://app.example"

static csrf_ctx *g_ctx;
static char g_cookie[256]; /* "csrf_secret=..." */
static char g_field[CSRF_FIELD_NAME_MAX + 1];
static char g_token[CSRF_TOKEN_LEN + 1];

static int setup(void **state)
{
	(void)state;
	assert_int_equal(csrf_ctx_new(&g_ctx, NULL), CSRF_OK);
	assert_int_equal(csrf_ctx_generate_key(g_ctx), CSRF_OK);
	assert_int_equal(csrf_ctx_set_self_origin(g_ctx, SELF, strlen(SELF)), CSRF_OK);
	assert_int_equal(csrf_ctx_add_trusted_origin(g_ctx, "https://sso.example", 19), CSRF_OK);
	assert_int_equal(csrf_ctx_add_exemption(g_ctx, "POST", "/hook", 5), CSRF_OK);
	csrf_ctx_set_body_max(g_ctx, 4096);
	csrf_request req;
	csrf_request_init(&req);
	req.now = NOW;
	csrf_page p;
	assert_int_equal(csrf_page_prepare(g_ctx, &req, &p), CSRF_OK);
	const char *semi = strchr(p.set_cookie, ';');
	memcpy(g_cookie, p.set_cookie, (size_t)(semi - p.set_cookie));
	memcpy(g_field, p.field, sizeof g_field);
	memcpy(g_token, p.token, sizeof g_token);
	csrf_page_wipe(&p);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	csrf_ctx_free(g_ctx);
	return 0;
}

/* A request from header lines "Name: value" (NULL-terminated list). */
static csrf_request make(const char *method, const char *target, const char *const *lines)
{
	csrf_request req;
	csrf_request_init(&req);
	req.method = (csrf_slice){method, strlen(method)};
	req.target = (csrf_slice){target, strlen(target)};
	req.scheme = (csrf_slice){"http", 4};
	req.now = NOW;
	for (size_t i = 0; lines && lines[i]; i++) {
		const char *colon = strchr(lines[i], ':');
		assert_non_null(colon);
		const char *v = colon + 1;
		while (*v == ' ')
			v++;
		assert_int_equal(csrf_request_header(&req, lines[i], (size_t)(colon - lines[i]), v, strlen(v)),
		                 CSRF_OK);
	}
	return req;
}

static char hdr_cookie[300], hdr_token[200], body_tok[300];

static void fill_globals(void)
{
	snprintf(hdr_cookie, sizeof hdr_cookie, "Cookie: %s", g_cookie);
	snprintf(hdr_token, sizeof hdr_token, "X-CSRF-Token: %s", g_token);
	snprintf(body_tok, sizeof body_tok, "%s=%s", g_field, g_token);
}

static void test_origin_or_token(void **state)
{
	(void)state;
	fill_globals();
	csrf_ctx_set_mode(g_ctx, CSRF_MODE_ORIGIN_OR_TOKEN);
	struct {
		const char *name;
		const char *lines[5];
		csrf_reason want;
	} rows[] = {
	    /* the browser proves it: no token needed */
	    {"fetch same-origin", {"Sec-Fetch-Site: same-origin"}, CSRF_ORIGIN_VERIFIED},
	    {"origin self", {"Origin: " SELF}, CSRF_ORIGIN_VERIFIED},
	    {"origin trusted", {"Origin: https://sso.example"}, CSRF_ORIGIN_VERIFIED},
	    {"cross-site from a trusted origin",
	     {"Sec-Fetch-Site: cross-site", "Origin: https://sso.example"},
	     CSRF_ORIGIN_VERIFIED},
	    /* no evidence: the token carries it */
	    {"nothing", {NULL}, CSRF_SECRET_MISSING},
	    {"cookie, no token", {hdr_cookie}, CSRF_TOKEN_MISSING},
	    {"cookie and token", {hdr_cookie, hdr_token}, CSRF_OK},
	    {"typed url: proves nothing", {"Sec-Fetch-Site: none", hdr_cookie}, CSRF_TOKEN_MISSING},
	    {"typed url with token", {"Sec-Fetch-Site: none", hdr_cookie, hdr_token}, CSRF_OK},
	    {"same referer only", {"Referer: " SELF "/form", hdr_cookie}, CSRF_TOKEN_MISSING},
	    /* Origin: null (a no-referrer page, a sandboxed frame): no
	     * evidence either way, and with neither the caller's secret nor a
	     * session to bind the token to, the cookie and its token could
	     * have been planted by a sibling subdomain or another port */
	    {"null origin with token", {"Origin: null", hdr_cookie, hdr_token}, CSRF_NULL_ORIGIN},
	    {"null origin, no token", {"Origin: null", hdr_cookie}, CSRF_NULL_ORIGIN},
	    {"null origin, no cookie", {"Origin: null", hdr_token}, CSRF_NULL_ORIGIN},
	    {"null origin, same referer", {"Origin: null", "Referer: " SELF "/form", hdr_cookie}, CSRF_NULL_ORIGIN},
	    {"null origin twice", {"Origin: null", "Origin: null", hdr_cookie, hdr_token}, CSRF_ORIGIN_MALFORMED},
	    {"null origin, cross-site",
	     {"Origin: null", "Sec-Fetch-Site: cross-site", hdr_cookie, hdr_token},
	     CSRF_CROSS_SITE},
	    /* evidence against: rejected whatever the token */
	    {"cross-site", {"Sec-Fetch-Site: cross-site", hdr_cookie, hdr_token}, CSRF_CROSS_SITE},
	    {"same-site", {"Sec-Fetch-Site: same-site", hdr_cookie, hdr_token}, CSRF_SAME_SITE},
	    {"foreign origin", {"Origin: http://evil.example", hdr_cookie, hdr_token}, CSRF_ORIGIN_MISMATCH},
	    {"malformed fetch site", {"Sec-Fetch-Site: maybe", hdr_cookie, hdr_token}, CSRF_FETCH_SITE_MALFORMED},
	    /* headers sent twice are judged by their stage */
	    {"origin twice", {"Origin: " SELF, "Origin: " SELF}, CSRF_ORIGIN_MALFORMED},
	    {"fetch site twice",
	     {"Sec-Fetch-Site: same-origin", "Sec-Fetch-Site: same-origin"},
	     CSRF_FETCH_SITE_MALFORMED},
	    {"token twice", {hdr_cookie, hdr_token, hdr_token}, CSRF_TOKEN_MALFORMED},
	    {"override twice",
	     {"Origin: " SELF, "X-HTTP-Method: PUT", "X-HTTP-Method-Override: PUT"},
	     CSRF_METHOD_OVERRIDE},
	};
	int failed = 0;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		csrf_request req = make("POST", "/vote", rows[i].lines);
		csrf_result res = csrf_check(g_ctx, &req);
		if (res.reason != rows[i].want || res.allowed != csrf_reason_allows(rows[i].want) || res.needs_body) {
			print_error("%s: got %s, want %s\n", rows[i].name, csrf_reason_name(res.reason),
			            csrf_reason_name(rows[i].want));
			failed++;
		}
	}
	csrf_ctx_set_mode(g_ctx, CSRF_MODE_BOTH);
	assert_int_equal(failed, 0);
}

/* A POST /vote with header lines, and the body (NULL: not read yet). */
typedef struct {
	const char *name;
	const char *lines[5];
	const char *body;
	int needs_body;
	csrf_reason want;
} body_row;

/* How many rows csrf_check answers otherwise than they want; each said. */
static int body_rows_failed(const body_row *rows, size_t n)
{
	int failed = 0;
	for (size_t i = 0; i < n; i++) {
		csrf_request req = make("POST", "/vote", rows[i].lines);
		if (rows[i].body)
			req.body = (csrf_slice){rows[i].body, strlen(rows[i].body)};
		csrf_result res = csrf_check(g_ctx, &req);
		if (res.reason != rows[i].want || res.needs_body != rows[i].needs_body ||
		    res.allowed != csrf_reason_allows(rows[i].want)) {
			print_error("%s: got %s needs_body=%d, want %s needs_body=%d\n", rows[i].name,
			            csrf_reason_name(res.reason), res.needs_body, csrf_reason_name(rows[i].want),
			            rows[i].needs_body);
			failed++;
		}
	}
	return failed;
}

static void test_needs_body(void **state)
{
	(void)state;
	fill_globals();
	const char *form = "Content-Type: application/x-www-form-urlencoded";
	const char *multi = "Content-Type: multipart/form-data; boundary=b";
	body_row rows[] = {
	    {"form, body not read",
	     {"Origin: " SELF, hdr_cookie, form, "Content-Length: 200"},
	     NULL,
	     1,
	     CSRF_TOKEN_MISSING},
	    {"chunked form, body not read", {"Origin: " SELF, hdr_cookie, form}, NULL, 1, CSRF_TOKEN_MISSING},
	    {"multipart, body not read", {"Origin: " SELF, hdr_cookie, multi}, NULL, 1, CSRF_TOKEN_MISSING},
	    {"form, body read", {"Origin: " SELF, hdr_cookie, form}, body_tok, 0, CSRF_OK},
	    {"empty form body", {"Origin: " SELF, hdr_cookie, form, "Content-Length: 0"}, NULL, 0, CSRF_TOKEN_MISSING},
	    {"token header: no body needed", {"Origin: " SELF, hdr_cookie, hdr_token, form}, NULL, 0, CSRF_OK},
	    {"not a form", {"Origin: " SELF, hdr_cookie, "Content-Type: text/plain"}, NULL, 0, CSRF_TOKEN_MISSING},
	    {"origin stage first", {"Origin: http://evil.example", hdr_cookie, form}, NULL, 0, CSRF_ORIGIN_MISMATCH},
	    {"no secret: no body read", {"Origin: " SELF, form}, NULL, 0, CSRF_SECRET_MISSING},
	    {"declared over the limit",
	     {"Origin: " SELF, hdr_cookie, form, "Content-Length: 4097"},
	     NULL,
	     0,
	     CSRF_BODY_TOO_LARGE},
	    {"at the limit", {"Origin: " SELF, hdr_cookie, form, "Content-Length: 4096"}, NULL, 1, CSRF_TOKEN_MISSING},
	    {"length not a number",
	     {"Origin: " SELF, hdr_cookie, form, "Content-Length: 12x"},
	     NULL,
	     0,
	     CSRF_BODY_MALFORMED},
	    {"length with a sign",
	     {"Origin: " SELF, hdr_cookie, form, "Content-Length: +12"},
	     NULL,
	     0,
	     CSRF_BODY_MALFORMED},
	    {"length huge",
	     {"Origin: " SELF, hdr_cookie, form, "Content-Length: 99999999999999999999999"},
	     NULL,
	     0,
	     CSRF_BODY_MALFORMED},
	    {"length twice",
	     {"Origin: " SELF, hdr_cookie, form, "Content-Length: 5", "Content-Length: 5"},
	     NULL,
	     0,
	     CSRF_BODY_MALFORMED},
	    {"type twice", {"Origin: " SELF, hdr_cookie, form, form}, NULL, 0, CSRF_BODY_MALFORMED},
	};
	assert_int_equal(body_rows_failed(rows, sizeof rows / sizeof rows[0]), 0);

	/* a read body over the limit, and report-only: it waits for the body,
	 * then allows what it would reject */
	char big[5000];
	memset(big, 'a', sizeof big);
	csrf_request req = make("POST", "/vote", (const char *const[]){"Origin: " SELF, hdr_cookie, form, NULL});
	req.body = (csrf_slice){big, sizeof big};
	assert_int_equal(csrf_check(g_ctx, &req).reason, CSRF_BODY_TOO_LARGE);
	csrf_ctx_set_report_only(g_ctx, 1);
	req.body = (csrf_slice){NULL, 0};
	csrf_result res = csrf_check(g_ctx, &req);
	assert_true(res.needs_body && !res.allowed && !res.report_only);
	req.body = (csrf_slice){"a=1", 3};
	res = csrf_check(g_ctx, &req);
	assert_true(res.allowed && res.report_only && res.reason == CSRF_TOKEN_MISSING && !res.needs_body);
	csrf_ctx_set_report_only(g_ctx, 0);
}

/* A token that can only come from a body not read yet: the secret cookie
 * is judged before the body is asked for, except its signature, which is
 * checked once, with the body (the first call costs no MAC). Every other
 * fault of the cookie is still answered at once, so no body is read for
 * it; a cookie that fails only by its signature is read with its body
 * and then rejected with the reason it always got. */
static void test_body_token_secret_once(void **state)
{
	(void)state;
	fill_globals();
	const char *form = "Content-Type: application/x-www-form-urlencoded";
	char forged[300], unknown[300], expired[300], bad_b64[300], short_c[300];
	/* a character of the signature changed: the MAC no longer matches */
	snprintf(forged, sizeof forged, "Cookie: %s", g_cookie);
	char *sig = forged + strlen(forged) - 10;
	*sig = *sig == 'A' ? 'B' : 'A';
	/* a cookie of a key id this ring does not hold */
	csrf_ctx *other;
	static const uint8_t key[CSRF_KEY_LEN] = {7};
	assert_int_equal(csrf_ctx_new(&other, NULL), CSRF_OK);
	assert_int_equal(csrf_ctx_add_key(other, 0x7fff0001u, key, 1), CSRF_OK);
	assert_int_equal(csrf_ctx_set_self_origin(other, SELF, strlen(SELF)), CSRF_OK);
	csrf_request r0;
	csrf_request_init(&r0);
	r0.now = NOW;
	csrf_page p;
	assert_int_equal(csrf_page_prepare(other, &r0, &p), CSRF_OK);
	snprintf(unknown, sizeof unknown, "Cookie: %.*s", (int)(strchr(p.set_cookie, ';') - p.set_cookie),
	         p.set_cookie);
	csrf_page_wipe(&p);
	csrf_ctx_free(other);
	/* ours, issued two days before NOW, with a one-day maximum age */
	csrf_request_init(&r0);
	r0.now = NOW - 2 * 86400;
	assert_int_equal(csrf_page_prepare(g_ctx, &r0, &p), CSRF_OK);
	snprintf(expired, sizeof expired, "Cookie: %.*s", (int)(strchr(p.set_cookie, ';') - p.set_cookie),
	         p.set_cookie);
	csrf_page_wipe(&p);
	snprintf(bad_b64, sizeof bad_b64, "Cookie: %s", g_cookie);
	bad_b64[strlen("Cookie: ") + (strchr(g_cookie, '=') - g_cookie) + 5] = '*';
	snprintf(short_c, sizeof short_c, "Cookie: %.*s", (int)strlen(g_cookie) - 1, g_cookie);
	csrf_ctx_set_max_age(g_ctx, 86400);
#define ROW(name, cookie, body, nb, want) {name, {"Origin: " SELF, form, cookie}, body, nb, want}
	body_row rows[] = {
	    ROW("good cookie, body not read", hdr_cookie, NULL, 1, CSRF_TOKEN_MISSING),
	    ROW("good cookie, body read", hdr_cookie, body_tok, 0, CSRF_OK),
	    ROW("forged signature, body not read", forged, NULL, 1, CSRF_TOKEN_MISSING),
	    ROW("forged signature, body read", forged, body_tok, 0, CSRF_SECRET_INVALID),
	    ROW("no cookie", NULL, NULL, 0, CSRF_SECRET_MISSING),
	    ROW("unknown key", unknown, NULL, 0, CSRF_UNKNOWN_KEY),
	    ROW("expired", expired, NULL, 0, CSRF_SECRET_EXPIRED),
	    ROW("not base64url", bad_b64, NULL, 0, CSRF_SECRET_INVALID),
	    ROW("short", short_c, NULL, 0, CSRF_SECRET_INVALID),
	};
#undef ROW
	int failed = body_rows_failed(rows, sizeof rows / sizeof rows[0]);
	csrf_ctx_set_max_age(g_ctx, 0);
	assert_int_equal(failed, 0);
}

static void test_override_names_in_body(void **state)
{
	(void)state;
	fill_globals();
	const char *form = "Content-Type: application/x-www-form-urlencoded";
	const char *names[] = {"_method",       ".method",   "+method",   "%20method", "%5Bmethod",
	                       "_method%5B%5D", ".method[]", "_method[]", "%2Emethod"};
	char body[64];
	/* a cross-site POST to the exempt path: exempt only without an override */
	csrf_request req = make("POST", "/hook", (const char *const[]){"Sec-Fetch-Site: cross-site", form, NULL});
	req.body = (csrf_slice){"a=1", 3};
	assert_int_equal(csrf_check(g_ctx, &req).reason, CSRF_EXEMPT);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		snprintf(body, sizeof body, "a=1&%s=DELETE", names[i]);
		req.body = (csrf_slice){body, strlen(body)};
		csrf_result res = csrf_check(g_ctx, &req);
		if (res.allowed)
			fail_msg("body field %s overrode the method past the exemption", names[i]);
		assert_int_equal(res.reason, CSRF_CROSS_SITE);
	}
	/* names that are not overrides keep the exemption */
	const char *others[] = {"method", "_methods", "x_method", "x[_method]", "_metho", "%5Fmethodx"};
	for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
		snprintf(body, sizeof body, "%s=DELETE", others[i]);
		req.body = (csrf_slice){body, strlen(body)};
		assert_int_equal(csrf_check(g_ctx, &req).reason, CSRF_EXEMPT);
	}
	/* multipart parts named like the override */
	const char *mp = "--b\r\nContent-Disposition: form-data; name=\".method\"\r\n\r\nDELETE\r\n--b--\r\n";
	req = make(
	    "POST", "/hook",
	    (const char *const[]){"Sec-Fetch-Site: cross-site", "Content-Type: multipart/form-data; boundary=b", NULL});
	req.body = (csrf_slice){mp, strlen(mp)};
	assert_int_equal(csrf_check(g_ctx, &req).reason, CSRF_CROSS_SITE);
	/* multipart that readers could parse another way: fail closed */
	struct {
		const char *ct, *body;
	} tricks[] = {
	    /* PHP finds the boundary by substring, Rack takes the last */
	    {"multipart/form-data; xboundary=EVIL; boundary=REAL",
	     "--REAL\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n--EVIL\r\nContent-Disposition: form-data; "
	     "name=\"_method\"\r\n\r\nDELETE\r\n--EVIL--\r\n\r\n--REAL--\r\n"},
	    {"multipart/form-data; boundary=REAL; boundary=EVIL",
	     "--REAL\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n--REAL--\r\n"},
	    /* two names in one part: readers take the last */
	    {"multipart/form-data; boundary=b",
	     "--b\r\nContent-Disposition: form-data; name=\"x\"; name=\"_method\"\r\n\r\nDELETE\r\n--b--\r\n"},
	    /* PHP drops the leading spaces */
	    {"multipart/form-data; boundary=b",
	     "--b\r\nContent-Disposition: form-data; name=\" _method\"\r\n\r\nDELETE\r\n--b--\r\n"},
	    /* two Content-Disposition lines */
	    {"multipart/form-data; boundary=b",
	     "--b\r\nContent-Disposition: form-data; name=\"x\"\r\nContent-Disposition: "
	     "form-data; name=\"_method\"\r\n\r\nDELETE\r\n--b--\r\n"},
	};
	for (size_t i = 0; i < sizeof tricks / sizeof tricks[0]; i++) {
		char ct[128];
		snprintf(ct, sizeof ct, "Content-Type: %s", tricks[i].ct);
		req = make("POST", "/hook", (const char *const[]){"Sec-Fetch-Site: cross-site", ct, NULL});
		req.body = (csrf_slice){tricks[i].body, strlen(tricks[i].body)};
		csrf_result tr = csrf_check(g_ctx, &req);
		if (tr.allowed)
			fail_msg("multipart trick %zu kept the exemption", i);
	}
	/* a body without a Content-Type is read as a form (Rack, PHP) */
	req = make("POST", "/hook", (const char *const[]){"Sec-Fetch-Site: cross-site", "Content-Length: 14", NULL});
	req.body = (csrf_slice){"_method=DELETE", 14};
	assert_false(csrf_check(g_ctx, &req).allowed);
	req.body = (csrf_slice){"payload=1xxxxx", 14};
	assert_int_equal(csrf_check(g_ctx, &req).reason, CSRF_EXEMPT);
	req.body = (csrf_slice){NULL, 0};
	csrf_result nb = csrf_check(g_ctx, &req);
	assert_true(nb.needs_body && !nb.allowed);
	req = make("POST", "/hook",
	           (const char *const[]){"Sec-Fetch-Site: cross-site", "Transfer-Encoding: chunked", NULL});
	nb = csrf_check(g_ctx, &req);
	assert_true(nb.needs_body && !nb.allowed);
	/* the same names in the query string */
	const char *queries[] = {"/hook?+_method=DELETE", "/hook?%20%20_method=DELETE", "/hook?_method%00x=DELETE",
	                         "/hook?_method[x]=DELETE"};
	for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++) {
		req = make("POST", queries[i], (const char *const[]){"Sec-Fetch-Site: cross-site", NULL});
		if (csrf_check(g_ctx, &req).allowed)
			fail_msg("query %s kept the exemption", queries[i]);
	}
	/* the body not read yet: the exemption waits for it */
	req = make("POST", "/hook", (const char *const[]){"Sec-Fetch-Site: cross-site", form, NULL});
	csrf_result res = csrf_check(g_ctx, &req);
	assert_true(res.needs_body && !res.allowed);
	/* a form body too large to read: not exempt (fail closed) */
	req = make("POST", "/hook",
	           (const char *const[]){"Sec-Fetch-Site: cross-site", form, "Content-Length: 100000", NULL});
	res = csrf_check(g_ctx, &req);
	assert_true(!res.allowed && !res.needs_body);
	/* no body at all: exempt */
	req = make("POST", "/hook", (const char *const[]){"Sec-Fetch-Site: cross-site", NULL});
	assert_int_equal(csrf_check(g_ctx, &req).reason, CSRF_EXEMPT);
}

static void test_cookie_lines(void **state)
{
	(void)state;
	fill_globals();
	/* HTTP/2: one cookie a line; ours found in any of them */
	csrf_request req =
	    make("POST", "/vote", (const char *const[]){"Origin: " SELF, "Cookie: a=1", hdr_cookie, hdr_token, NULL});
	assert_int_equal(csrf_check(g_ctx, &req).reason, CSRF_OK);
	/* twice over two lines: a planted one beside ours */
	req = make("POST", "/vote", (const char *const[]){"Origin: " SELF, hdr_cookie, hdr_cookie, hdr_token, NULL});
	assert_int_equal(csrf_check(g_ctx, &req).reason, CSRF_COOKIE_AMBIGUOUS);
	/* more lines than the library keeps: fail closed */
	req = make("POST", "/vote", (const char *const[]){"Origin: " SELF, hdr_token, NULL});
	for (int i = 0; i < CSRF_COOKIE_HEADERS_MAX; i++)
		assert_int_equal(csrf_request_header(&req, "Cookie", 6, "x=1", 3), CSRF_OK);
	assert_int_equal(csrf_request_header(&req, "Cookie", 6, g_cookie, strlen(g_cookie)), CSRF_OK);
	assert_int_equal(csrf_check(g_ctx, &req).reason, CSRF_HEADER_TOO_LARGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_origin_or_token),        cmocka_unit_test(test_needs_body),
	    cmocka_unit_test(test_body_token_secret_once), cmocka_unit_test(test_override_names_in_body),
	    cmocka_unit_test(test_cookie_lines),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
