/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_cache.c - src/cache.c: Cache-Control read as RFC 9111 §5.2 writes
 * it (only an unqualified private or no-store keeps a page private), and
 * which headers a response with a token drops or gains.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "csrf.h"
#include "testutil.h"

/* One Cache-Control line and whether it keeps a page out of shared caches. */
static const struct {
	const char *v;
	int private_;
} lines[] = {
    {"private", 1},
    {"no-cache, PRIVATE", 1},
    {"no-store", 1},
    {"max-age=0, No-Store", 1},
    {"s-maxage=0, private", 1},
    {"  private  ", 1},
    {"\tprivate\t,", 1},
    {",,private,,", 1},
    {"private , max-age=5", 1},
    {"public, private", 1}, /* conflicting: the most restrictive wins (§4.2.1) */
    {"public, max-age=60", 0},
    {"", 0},
    {" , ,", 0},
    {"privat", 0},
    {"no-cache", 0},
    {"no-storex", 0},
    {"xprivate", 0},
    {"my-private", 0},
    {"must-revalidate, proxy-revalidate", 0},
    /* the qualified form names fields; the page itself stays shareable */
    {"public, max-age=600, private=\"Set-Cookie\"", 0},
    {"private=\"Set-Cookie\"", 0},
    {"private=Set-Cookie", 0},
    {"private=\"a,b\", max-age=5", 0},
    {"PRIVATE=\"a, b\"", 0},
    {"private=\"\"", 0},
    /* no-store has no argument form */
    {"no-store=1", 0},
    {"no-store=\"\"", 0},
    /* quoted commas separate nothing; a quoted private is no directive */
    {"x=\"a, private\"", 0},
    {"x=\"a, private, b\", no-store", 1},
    {"x=\"\\\"private\\\"\", max-age=1", 0},
    {"x=\"a\\\\\", private", 1},
    {"x=\"caf\xc3\xa9\", private", 1},
    {"x=\"\", private", 1},
    /* malformed: nothing in it is trusted */
    {"no-store=", 0},
    {"private=", 0},
    {"private;", 0},
    {"private x", 0},
    {"private =x", 0},
    {"private= x", 0},
    {"max-age = 5, private", 0},
    {"public, \"private\"", 0},
    {"x=\"unterminated, private", 0},
    {"private, x=\"unterminated", 0},
    {"private, x=\"ok\\", 0},
    {"x=\"a\"b, private", 0},
    {"private, =5", 0},
    {"private\x01", 0},
    {"x=\"a\x01\", private", 0},
    {"x=\"a\x7f\", private", 0},
    {"private, max-age=5\r\n", 0},
    {"private\xc3\xa9", 0},
};

static void test_cache_control_lines(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		size_t n = strlen(lines[i].v);
		char *g = tu_guard_copy(lines[i].v, n);
		if (csrf_cache_control_is_private(g, n) != lines[i].private_)
			fail_msg("row %zu: \"%s\" should be %s", i, lines[i].v,
			         lines[i].private_ ? "private" : "shared");
		/* every prefix against an unreadable page: read inside it only */
		for (size_t k = 0; k < n; k++) {
			char *p = tu_guard_copy(lines[i].v, k);
			int got = csrf_cache_control_is_private(p, k);
			assert_true(got == 0 || got == 1);
			tu_guard_free(p);
		}
		tu_guard_free(g);
	}
	assert_int_equal(csrf_cache_control_is_private(NULL, 0), 0);
	assert_int_equal(csrf_cache_control_is_private(NULL, 7), 0);
	/* a NUL inside the slice is a control character, not an end */
	assert_int_equal(csrf_cache_control_is_private("private\0x", 9), 0);
	assert_int_equal(csrf_cache_control_is_private("private\0x", 7), 1);
}

static void test_cache_control_size(void **state)
{
	(void)state;
	char *v = malloc(CSRF_CACHE_CONTROL_MAX + 2);
	assert_non_null(v);
	/* "private, " then padding to exactly the limit: read */
	memset(v, 'a', CSRF_CACHE_CONTROL_MAX + 1);
	memcpy(v, "private, ", 9);
	assert_int_equal(csrf_cache_control_is_private(v, CSRF_CACHE_CONTROL_MAX), 1);
	/* one byte more: not trusted, whatever it says */
	assert_int_equal(csrf_cache_control_is_private(v, CSRF_CACHE_CONTROL_MAX + 1), 0);
	free(v);
}

#define H(n, v)                                                                                                        \
	{                                                                                                              \
		{n, sizeof n - 1},                                                                                     \
		{                                                                                                      \
			v, sizeof v - 1                                                                                \
		}                                                                                                      \
	}
#define MAXH 8

/* A response's headers, which of them go, and whether "private" comes. */
static const struct {
	const char *what;
	csrf_header h[MAXH];
	size_t n;
	unsigned char drop[MAXH];
	int add; /* 1: "private" comes, 2: "private, no-store" */
} responses[] = {
    {"no headers", {{{NULL, 0}, {NULL, 0}}}, 0, {0}, 1},
    {"no Cache-Control", {H("Content-Type", "text/html"), H("Set-Cookie", "private=1")}, 2, {0, 0}, 1},
    {"the issue's case",
     {H("Content-Type", "text/html"), H("Cache-Control", "public, max-age=600, private=\"Set-Cookie\"")},
     2,
     {0, 1},
     1},
    {"public", {H("Cache-Control", "public, max-age=600")}, 1, {1}, 1},
    {"empty", {H("Cache-Control", "")}, 1, {1}, 1},
    {"no-store kept", {H("Cache-Control", "no-store")}, 1, {0}, 0},
    {"Private kept as written", {H("cache-control", "Private, max-age=60")}, 1, {0}, 0},
    /* a cache that reads only the first line would see "public" */
    {"two lines, the second private", {H("Cache-Control", "public"), H("Cache-Control", "private")}, 2, {1, 1}, 1},
    {"two lines, the first private", {H("Cache-Control", "private"), H("Cache-Control", "no-cache")}, 2, {1, 1}, 1},
    /* a replaced line's no-store stays: the browser's own cache must not
     * keep what the application said never to store */
    {"two private lines", {H("Cache-Control", "no-store"), H("Cache-Control", "private")}, 2, {1, 1}, 2},
    {"no-store on the second of two lines",
     {H("Cache-Control", "no-cache"), H("Cache-Control", "No-Store")},
     2,
     {1, 1},
     2},
    {"no-store in a line left malformed", {H("Cache-Control", "no-store, no-cache, private=\"Set-Cookie")}, 1, {1}, 2},
    {"no-store; as browsers split it", {H("Cache-Control", "no-store; max-age=0")}, 1, {1}, 2},
    {"no-store with an argument, or in a longer name, is not it",
     {H("Cache-Control", "no-store=1, x-no-store, no-stored"), H("Cache-Control", "y")},
     2,
     {1, 1},
     1},
    {"Expires goes with a replaced Cache-Control",
     {H("Expires", "Thu, 01 Jan 2099 00:00:00 GMT"), H("Cache-Control", "public, max-age=600"), H("Pragma", "x")},
     3,
     {1, 1, 0},
     1},
    {"Expires without Cache-Control", {H("EXPIRES", "0")}, 1, {1}, 1},
    {"Expires stays beside a private line",
     {H("Cache-Control", "private, max-age=60"), H("Expires", "Thu, 01 Jan 2099 00:00:00 GMT")},
     2,
     {0, 0},
     0},
    {"two lines, none private", {H("Cache-Control", "public"), H("CACHE-CONTROL", "max-age=5")}, 2, {1, 1}, 1},
    {"an open quote swallows the next line's private",
     {H("Cache-Control", "x=\"a"), H("Cache-Control", "private\"")},
     2,
     {1, 1},
     1},
    {"a malformed line beside a private one",
     {H("Cache-Control", "private"), H("Cache-Control", "max-age = 5")},
     2,
     {1, 1},
     1},
    {"targeted fields go even when Cache-Control stays",
     {H("CDN-Cache-Control", "max-age=600"), H("Cache-Control", "private"), H("Surrogate-Control", "max-age=600"),
      H("Cloudflare-CDN-Cache-Control", "max-age=600"), H("edge-control", "cache-maxage=600s"),
      H("X-Accel-Expires", "600"), H("akamai-cache-control", "no-store"), H("X-Cache", "HIT")},
     8,
     {1, 0, 1, 1, 1, 1, 1, 0},
     0},
    {"targeted fields and a shared page",
     {H("cdn-cache-control", "private"), H("Cache-Control", "s-maxage=600"), H("ETag", "\"v1\""), H("Vary", "Cookie")},
     4,
     {1, 1, 0, 0},
     1},
    {"names that are not cache fields",
     {H("Cache-Controls", "max-age=5"), H("Cache-Control-X", "max-age=5"), H("Surrogate-Key", "a b"),
      H("Cache-Status", "hit"), H("Expiress", "0"), H("Pragma", "no-cache"), H("-Cache-Control", "x"),
      H("XCache-Control", "x")},
     8,
     {0, 0, 0, 0, 0, 0, 1, 0},
     1},
};

/* The same kind of rows for a response to a rejected request: every
 * Cache-Control line, targeted field and Expires goes, whatever it says;
 * "no-store" always comes. */
static const struct {
	const char *what;
	csrf_header h[MAXH];
	size_t n;
	unsigned char drop[MAXH];
} rejections[] = {
    {"no headers", {{{NULL, 0}, {NULL, 0}}}, 0, {0}},
    {"the module's own page",
     {H("Content-Type", "text/html"), H("Content-Security-Policy", "default-src 'none'")},
     2,
     {0, 0}},
    {"no-store goes too: one line only", {H("Cache-Control", "no-store")}, 1, {1}},
    {"an operator's add_header always",
     {H("Cache-Control", "no-store"), H("CDN-Cache-Control", "max-age=600"), H("Surrogate-Control", "max-age=600"),
      H("cache-control", "public, max-age=600"), H("X-Accel-Expires", "600"), H("Expires", "Thu, 01 Jan 2099"),
      H("Pragma", "no-cache"), H("Vary", "Cookie")},
     8,
     {1, 1, 1, 1, 1, 1, 0, 0}},
    {"private kept on a page is not kept on a rejection",
     {H("Cache-Control", "private"), H("Edge-Control", "cache-maxage=600s"), H("Cloudflare-CDN-Cache-Control", "x"),
      H("Set-Cookie", "a=1"), H("Expiress", "0"), H("Cache-Controls", "x")},
     6,
     {1, 1, 1, 0, 0, 0}},
    {"names in any case, the first letter's too; same lengths, other first bytes",
     {H("eXPIRES", "0"), H("x-ACCEL-EXPIRES", "1"), H("sURROGATE-CONTROL", "x"), H("eDGE-cONTROL", "x"),
      H("cACHE-cONTROL", "x"), H("Gxpires", "0"), H("Content-Type", "text/html"), H("Eache-Control", "x")},
     8,
     {1, 1, 1, 1, 1, 0, 0, 0}},
};

static void test_rejection_cache(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof rejections / sizeof rejections[0]; r++) {
		unsigned char drop[MAXH];
		csrf_slice add = {"x", 1};
		memset(drop, 0xee, sizeof drop);
		assert_int_equal(csrf_rejection_cache(rejections[r].h, rejections[r].n, drop, &add), CSRF_OK);
		for (size_t i = 0; i < rejections[r].n; i++)
			if (drop[i] != rejections[r].drop[i])
				fail_msg("%s: header %zu (%.*s) %s", rejections[r].what, i,
				         (int)rejections[r].h[i].name.len, rejections[r].h[i].name.ptr,
				         drop[i] ? "dropped" : "kept");
		if (rejections[r].n < MAXH)
			assert_int_equal(drop[rejections[r].n], 0xee);
		assert_non_null(add.ptr);
		assert_int_equal(add.len, strlen(CSRF_REJECT_PAGE_CACHE_CONTROL));
		assert_memory_equal(add.ptr, CSRF_REJECT_PAGE_CACHE_CONTROL, add.len);
	}
	assert_string_equal(CSRF_REJECT_PAGE_CACHE_CONTROL, "no-store");
}

static void test_rejection_cache_args(void **state)
{
	(void)state;
	csrf_header h[2] = {H("Cache-Control", "public"), H("Vary", "Cookie")};
	unsigned char drop[2] = {7, 7};
	csrf_slice add = {"x", 1};

	assert_int_equal(csrf_rejection_cache(h, 2, drop, NULL), CSRF_ERR_ARG);
	assert_int_equal(csrf_rejection_cache(NULL, 2, drop, &add), CSRF_ERR_ARG);
	assert_null(add.ptr);
	add.ptr = "x";
	assert_int_equal(csrf_rejection_cache(h, 2, NULL, &add), CSRF_ERR_ARG);
	assert_null(add.ptr);
	h[1].name.ptr = NULL;
	add.ptr = "x";
	assert_int_equal(csrf_rejection_cache(h, 2, drop, &add), CSRF_ERR_ARG);
	assert_null(add.ptr);
	assert_int_equal(drop[0], 7);
	assert_int_equal(drop[1], 7);
	/* nothing to judge: no-store all the same */
	assert_int_equal(csrf_rejection_cache(NULL, 0, NULL, &add), CSRF_OK);
	assert_non_null(add.ptr);
}

static void test_response_cache(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof responses / sizeof responses[0]; r++) {
		unsigned char drop[MAXH];
		csrf_slice add = {"x", 1};
		memset(drop, 0xee, sizeof drop);
		assert_int_equal(csrf_response_cache(responses[r].h, responses[r].n, drop, &add), CSRF_OK);
		for (size_t i = 0; i < responses[r].n; i++)
			if (drop[i] != responses[r].drop[i])
				fail_msg("%s: header %zu (%.*s) %s", responses[r].what, i,
				         (int)responses[r].h[i].name.len, responses[r].h[i].name.ptr,
				         drop[i] ? "dropped" : "kept");
		if (responses[r].n < MAXH)
			assert_int_equal(drop[responses[r].n], 0xee); /* nothing past n written */
		if (responses[r].add) {
			const char *want = responses[r].add == 2 ? "private, no-store" : "private";
			if (add.ptr == NULL || add.len != strlen(want) || memcmp(add.ptr, want, add.len) != 0)
				fail_msg("%s: not \"%s\" added", responses[r].what, want);
		} else if (add.ptr != NULL) {
			fail_msg("%s: \"private\" added to a private page", responses[r].what);
		}
	}
}

static void test_response_cache_args(void **state)
{
	(void)state;
	csrf_header h[2] = {H("Cache-Control", "public"), H("Vary", "Cookie")};
	unsigned char drop[2] = {7, 7};
	csrf_slice add = {"x", 1};

	assert_int_equal(csrf_response_cache(h, 2, drop, NULL), CSRF_ERR_ARG);
	assert_int_equal(drop[0], 7);
	assert_int_equal(csrf_response_cache(NULL, 2, drop, &add), CSRF_ERR_ARG);
	assert_null(add.ptr);
	assert_int_equal(csrf_response_cache(h, 2, NULL, &add), CSRF_ERR_ARG);
	h[1].value.ptr = NULL;
	assert_int_equal(csrf_response_cache(h, 2, drop, &add), CSRF_ERR_ARG);
	assert_null(add.ptr);
	assert_int_equal(drop[0], 7);
	/* absent but empty is no error */
	h[1].value.len = 0;
	assert_int_equal(csrf_response_cache(h, 2, drop, &add), CSRF_OK);
	assert_int_equal(drop[0], 1);
	assert_int_equal(drop[1], 0);
	assert_non_null(add.ptr);
	/* nothing to judge */
	assert_int_equal(csrf_response_cache(NULL, 0, NULL, &add), CSRF_OK);
	assert_non_null(add.ptr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cache_control_lines), cmocka_unit_test(test_cache_control_size),
	    cmocka_unit_test(test_response_cache),      cmocka_unit_test(test_response_cache_args),
	    cmocka_unit_test(test_rejection_cache),     cmocka_unit_test(test_rejection_cache_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
