/* SPDX-License-Identifier: BSD-2-Clause */
/* test_cookie.c - csrf_cookie_get: table of headers, every truncated
 * prefix, input flush against a guard page, control characters, caps. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "csrf.h"
#include "testutil.h"

typedef struct {
	const char *header;
	size_t len; /* 0: strlen(header) */
	const char *name;
	csrf_reason want;
	const char *value; /* expected value when want == CSRF_OK */
} row;

static const row rows[] = {
    {"a=1", 0, "a", CSRF_OK, "1"},
    {"a=1; b=2", 0, "b", CSRF_OK, "2"},
    {"a=1;b=2", 0, "b", CSRF_OK, "2"},
    {"a=1;  b=2  ;c=3", 0, "b", CSRF_OK, "2"},
    {"  a  =  1  ", 0, "a", CSRF_OK, "1"},
    {"\ta\t=\t1\t", 0, "a", CSRF_OK, "1"},
    {"a=1; a=2", 0, "a", CSRF_OK, "1"},
    {"A=1; a=2", 0, "a", CSRF_OK, "2"},
    {"a=1", 0, "A", CSRF_NOT_FOUND, NULL},
    {"a=\"quoted\"", 0, "a", CSRF_OK, "quoted"},
    {"a=\"\"", 0, "a", CSRF_OK, ""},
    {"a=\"", 0, "a", CSRF_OK, "\""},
    {"a=\"x", 0, "a", CSRF_OK, "\"x"},
    {"a=", 0, "a", CSRF_OK, ""},
    {"a=;b=2", 0, "a", CSRF_OK, ""},
    {"a=x=y", 0, "a", CSRF_OK, "x=y"},
    {"noeq; a=1", 0, "a", CSRF_OK, "1"},
    {"a; a=1", 0, "a", CSRF_OK, "1"},
    {"a", 0, "a", CSRF_NOT_FOUND, NULL},
    {";;;", 0, "a", CSRF_NOT_FOUND, NULL},
    {"", 0, "a", CSRF_NOT_FOUND, NULL},
    {"ab=1", 0, "a", CSRF_NOT_FOUND, NULL},
    {"a=1", 0, "ab", CSRF_NOT_FOUND, NULL},
    {"xa=1; a=2", 0, "a", CSRF_OK, "2"},
    {"csrf_secret=abc-DEF_123; sid=s1", 0, "csrf_secret", CSRF_OK, "abc-DEF_123"},
    {"__Host-csrf=v; other=w", 0, "__Host-csrf", CSRF_OK, "v"},
    {"a=caf\xc3\xa9", 0, "a", CSRF_OK, "caf\xc3\xa9"},
    {"a=1\r\n; b=2", 0, "b", CSRF_MALFORMED, NULL},
    {"a=1; b=\n2", 0, "a", CSRF_MALFORMED, NULL},
    {"a=1\x7f", 0, "a", CSRF_MALFORMED, NULL},
    {"a=1\x01", 0, "a", CSRF_MALFORMED, NULL},
    {"a=1\0b", 5, "a", CSRF_MALFORMED, NULL},
    {"b=2; a=1\0", 9, "b", CSRF_MALFORMED, NULL},
};

/* tu_guard_copy of 0 bytes hands back a pointer into the guard page that
 * tu_guard_free then faults on; an empty input is therefore the end of a
 * 1-byte copy, still flush against the guard page. */
static char *guard(const char *data, size_t len, char **base)
{
	if (len == 0) {
		*base = tu_guard_copy("x", 1);
		return *base + 1;
	}
	*base = tu_guard_copy(data, len);
	return *base;
}

static size_t row_len(const row *r)
{
	return r->len ? r->len : strlen(r->header);
}

static void check_row(const row *r, size_t i, const char *buf, size_t len)
{
	csrf_slice v = {(const char *)1, 99};
	csrf_reason rc = csrf_cookie_get(buf, len, r->name, strlen(r->name), &v);
	if (rc != r->want)
		fail_msg("row %zu: got %d want %d", i, rc, r->want);
	if (rc == CSRF_OK) {
		size_t want_len = strlen(r->value);
		if (v.len != want_len || memcmp(v.ptr, r->value, want_len) != 0)
			fail_msg("row %zu: wrong value slice", i);
		if (v.ptr < buf || v.ptr + v.len > buf + len)
			fail_msg("row %zu: slice outside input", i);
	} else {
		assert_null(v.ptr);
		assert_int_equal(v.len, 0);
	}
}

static void test_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		size_t len = row_len(&rows[i]);
		check_row(&rows[i], i, rows[i].header, len);
		char *base;
		char *g = guard(rows[i].header, len, &base);
		check_row(&rows[i], i, g, len);
		tu_guard_free(base);
	}
}

/* Every prefix, flush against a guard page: answers a parser code and any
 * slice lies inside the prefix. */
static void test_prefixes(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		size_t len = row_len(&rows[i]);
		for (size_t k = 0; k <= len; k++) {
			char *base;
			char *g = guard(rows[i].header, k, &base);
			csrf_slice v;
			csrf_reason rc = csrf_cookie_get(g, k, rows[i].name, strlen(rows[i].name), &v);
			if (rc != CSRF_OK && rc != CSRF_NOT_FOUND && rc != CSRF_MALFORMED)
				fail_msg("row %zu prefix %zu: code %d", i, k, rc);
			if (rc == CSRF_OK && (v.ptr < g || v.ptr + v.len > g + k))
				fail_msg("row %zu prefix %zu: slice outside input", i, k);
			tu_guard_free(base);
		}
	}
}

static void test_too_large(void **state)
{
	(void)state;
	size_t big = 1024 * 1024;
	char *h = malloc(big);
	assert_non_null(h);
	memcpy(h, "a=1; ", 5);
	memset(h + 5, 'x', big - 5);
	csrf_slice v;
	assert_int_equal(csrf_cookie_get(h, big, "a", 1, &v), CSRF_TOO_LARGE);
	assert_null(v.ptr);
	/* exactly at the cap still parses; one byte over does not */
	assert_int_equal(csrf_cookie_get(h, 16 * 1024, "a", 1, &v), CSRF_OK);
	assert_int_equal(v.len, 1);
	assert_int_equal(csrf_cookie_get(h, 16 * 1024 + 1, "a", 1, &v), CSRF_TOO_LARGE);
	free(h);
}

static void test_long_name(void **state)
{
	(void)state;
	char h[600];
	memset(h, 'n', 300);
	h[300] = '=';
	h[301] = 'v';
	csrf_slice v;
	/* a 300-byte name is present but over the 256-byte limit: never matched */
	assert_int_equal(csrf_cookie_get(h, 302, h, 300, &v), CSRF_NOT_FOUND);
	assert_int_equal(csrf_cookie_get(h + 44, 258, h + 44, 256, &v), CSRF_OK);
	assert_int_equal(v.len, 1);
}

/* Every byte value at every place of a header longer than a few words
 * (the scan for control characters reads sixteen bytes at a time with
 * SSE2, then eight, then the rest one by one: 29 bytes take each path
 * once, 48 the sixteen three times): a control character other than tab, or DEL,
 * anywhere makes the header malformed; tab, space, printable and
 * non-ASCII bytes do not. */
static void test_every_byte(void **state)
{
	(void)state;
	static const char *const headers[] = {"sid=abcdefgh; csrf_secret=xyz",
	                                      "sid=abcdefgh; csrf_secret=xyz; lang=en-GB; ab=12"};
	for (size_t k = 0; k < 2; k++) {
		char h[64];
		size_t n = strlen(headers[k]);
		for (size_t at = 0; at < n; at++) {
			for (int c = 0; c < 256; c++) {
				memcpy(h, headers[k], n);
				h[at] = (char)c;
				char *base, *g = guard(h, n, &base);
				csrf_slice v;
				csrf_reason rc = csrf_cookie_get(g, n, "nothere", 7, &v);
				int bad = (c < 0x20 && c != '\t') || c == 0x7f;
				if (rc != (bad ? CSRF_MALFORMED : CSRF_NOT_FOUND))
					fail_msg("byte 0x%02x at %zu of %zu: code %d", c, at, n, rc);
				tu_guard_free(base);
			}
		}
	}
}

static void test_args(void **state)
{
	(void)state;
	csrf_slice v;
	assert_int_equal(csrf_cookie_get("a=1", 3, "a", 1, NULL), CSRF_ERR_ARG);
	assert_int_equal(csrf_cookie_get(NULL, 3, "a", 1, &v), CSRF_ERR_ARG);
	assert_int_equal(csrf_cookie_get("a=1", 3, NULL, 1, &v), CSRF_ERR_ARG);
	assert_int_equal(csrf_cookie_get("a=1", 3, "a", 0, &v), CSRF_ERR_ARG);
	assert_int_equal(csrf_cookie_get(NULL, 0, "a", 1, &v), CSRF_NOT_FOUND);
}

/* Random headers from cookie pieces: a found value lies inside, holds no
 * ';', and is followed (after an optional closing quote and spaces) by
 * ';' or the end. */
static uint64_t rng_state = 0x853c49e6748fea9bu;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % n);
}

static void test_random(void **state)
{
	(void)state;
	static const char *const atoms[] = {"a", "=",   ";",  " ",    "\t",       "\"",
	                                    "b", "a=1", "; ", "\x01", "\xc3\xa9", "=\""};
	char h[128];
	int found = 0;
	for (int iter = 0; iter < 50000; iter++) {
		size_t n = 0;
		for (uint32_t k = rnd(16); k > 0; k--) {
			const char *a = atoms[rnd(sizeof atoms / sizeof atoms[0])];
			size_t l = strlen(a);
			if (n + l > sizeof h)
				break;
			memcpy(h + n, a, l);
			n += l;
		}
		char *base, *g = guard(h, n, &base);
		csrf_slice v;
		csrf_reason rc = csrf_cookie_get(g, n, "a", 1, &v);
		if (rc == CSRF_OK) {
			found++;
			if (v.ptr < g || v.ptr + v.len > g + n || memchr(v.ptr, ';', v.len))
				fail_msg("iteration %d: misplaced value", iter);
			const char *after = v.ptr + v.len;
			if (after < g + n && *after == '"')
				after++;
			while (after < g + n && (*after == ' ' || *after == '\t'))
				after++;
			if (after < g + n && *after != ';')
				fail_msg("iteration %d: value cut short", iter);
		} else if (rc != CSRF_NOT_FOUND && rc != CSRF_MALFORMED) {
			fail_msg("iteration %d: code %d", iter, rc);
		}
		tu_guard_free(base);
	}
	assert_true(found > 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rows),       cmocka_unit_test(test_prefixes), cmocka_unit_test(test_too_large),
	    cmocka_unit_test(test_long_name),  cmocka_unit_test(test_args),     cmocka_unit_test(test_random),
	    cmocka_unit_test(test_every_byte),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
