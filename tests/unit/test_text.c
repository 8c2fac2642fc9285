/* SPDX-License-Identifier: BSD-2-Clause */
/* test_text.c - src/text.c: the strict decimal parsers (signed and
 * unsigned, at and past their limits, every malformed shape), trimming,
 * case-insensitive comparison and search, token characters; every input
 * flush against a guard page, so an over-read crashes the test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"
#include "testutil.h"

static void test_parse_u64(void **state)
{
	static const struct {
		const char *s;
		uint64_t max;
		csrf_reason want;
		uint64_t v;
	} rows[] = {
	    {"0", 10, CSRF_OK, 0},
	    {"10", 10, CSRF_OK, 10},
	    {"11", 10, CSRF_MALFORMED, 0},
	    {"18446744073709551615", UINT64_MAX, CSRF_OK, UINT64_MAX},
	    {"18446744073709551616", UINT64_MAX, CSRF_MALFORMED, 0},
	    {"184467440737095516150", UINT64_MAX, CSRF_MALFORMED, 0},
	    {"01", 10, CSRF_MALFORMED, 0},
	    {"00", 10, CSRF_MALFORMED, 0},
	    {"", 10, CSRF_MALFORMED, 0},
	    {"-1", 10, CSRF_MALFORMED, 0},
	    {"+1", 10, CSRF_MALFORMED, 0},
	    {" 1", 10, CSRF_MALFORMED, 0},
	    {"1 ", 10, CSRF_MALFORMED, 0},
	    {"1a", 10, CSRF_MALFORMED, 0},
	    {"\xd9\xa1", 10, CSRF_MALFORMED, 0}, /* ARABIC-INDIC DIGIT ONE */
	    {"\t1", 10, CSRF_MALFORMED, 0},
	    {"1\n", 10, CSRF_MALFORMED, 0},
	    {"0x1", 100, CSRF_MALFORMED, 0},
	    {"1e3", 5000, CSRF_MALFORMED, 0},
	    {"1.5", 10, CSRF_MALFORMED, 0},
	    {"--1", 10, CSRF_MALFORMED, 0},
	    {"4294967295", UINT32_MAX, CSRF_OK, UINT32_MAX},
	    {"4294967296", UINT32_MAX, CSRF_MALFORMED, 0},
	    {"65536", 65535, CSRF_MALFORMED, 0},
	    {"99999999999999999999", UINT64_MAX, CSRF_MALFORMED, 0}, /* 20 digits, over UINT64_MAX */
	    {"00000000000000000001", UINT64_MAX, CSRF_MALFORMED, 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		uint64_t v = 12345;
		size_t len = strlen(rows[i].s);
		char *g = tu_guard_copy(rows[i].s, len);
		csrf_reason r = csrfx_parse_u64(g, len, rows[i].max, &v);
		tu_guard_free(g);
		if (r != rows[i].want)
			fail_msg("row %zu (%s): got %s", i, rows[i].s, csrf_reason_name(r));
		assert_true(r == CSRF_OK ? v == rows[i].v : v == 12345); /* no partial write */
	}
	uint64_t v = 7;
	assert_int_equal(csrfx_parse_u64(NULL, 0, 10, &v), CSRF_MALFORMED);
	assert_true(v == 7);
	/* Huge: a megabyte of digits, and one of them with a NUL inside. */
	size_t big = 1u << 20;
	char *b = malloc(big);
	assert_non_null(b);
	memset(b, '9', big);
	char *g = tu_guard_copy(b, big);
	assert_int_equal(csrfx_parse_u64(g, big, UINT64_MAX, &v), CSRF_MALFORMED);
	tu_guard_free(g);
	b[1] = '\0';
	g = tu_guard_copy(b, 3);
	assert_int_equal(csrfx_parse_u64(g, 3, UINT64_MAX, &v), CSRF_MALFORMED);
	tu_guard_free(g);
	free(b);
	assert_true(v == 7);
}

static void test_parse_i64(void **state)
{
	static const struct {
		const char *s;
		csrf_reason want;
		int64_t v;
	} rows[] = {
	    {"0", CSRF_OK, 0},
	    {"7", CSRF_OK, 7},
	    {"-7", CSRF_OK, -7},
	    {"9223372036854775807", CSRF_OK, INT64_MAX},
	    {"-9223372036854775808", CSRF_OK, INT64_MIN},
	    {"9223372036854775808", CSRF_MALFORMED, 0},
	    {"-9223372036854775809", CSRF_MALFORMED, 0},
	    {"99999999999999999999", CSRF_MALFORMED, 0},
	    {"", CSRF_MALFORMED, 0},
	    {"-", CSRF_MALFORMED, 0},
	    {"-0", CSRF_MALFORMED, 0},
	    {"--1", CSRF_MALFORMED, 0},
	    {"01", CSRF_MALFORMED, 0},
	    {"-01", CSRF_MALFORMED, 0},
	    {"+1", CSRF_MALFORMED, 0},
	    {" 1", CSRF_MALFORMED, 0},
	    {"1 ", CSRF_MALFORMED, 0},
	    {"1a", CSRF_MALFORMED, 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		int64_t v = 12345;
		size_t len = strlen(rows[i].s);
		char *g = tu_guard_copy(rows[i].s, len);
		csrf_reason r = csrfx_parse_i64(g, len, &v);
		tu_guard_free(g);
		if (r != rows[i].want)
			fail_msg("row %zu (%s): got %s", i, rows[i].s, csrf_reason_name(r));
		assert_true(r == CSRF_OK ? v == rows[i].v : v == 12345);
	}
	/* Every value round-trips through its own decimal form. */
	const int64_t samples[] = {INT64_MIN, INT64_MIN + 1, -1000000007,   -1,       1,
	                           42,        1000000007,    INT64_MAX - 1, INT64_MAX};
	for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
		char buf[32];
		int n = snprintf(buf, sizeof buf, "%lld", (long long)samples[i]);
		int64_t v = 0;
		char *g = tu_guard_copy(buf, (size_t)n);
		assert_int_equal(csrfx_parse_i64(g, (size_t)n, &v), CSRF_OK);
		tu_guard_free(g);
		assert_true(v == samples[i]);
	}
}

static void test_trim(void **state)
{
	(void)state;
	csrf_slice t = csrfi_trim((csrf_slice){" \t a b\t ", 8});
	assert_int_equal(t.len, 3);
	assert_memory_equal(t.ptr, "a b", 3);
	t = csrfi_trim((csrf_slice){" \t ", 3});
	assert_int_equal(t.len, 0);
	assert_non_null(t.ptr); /* empty, not absent */
	t = csrfi_trim((csrf_slice){NULL, 0});
	assert_null(t.ptr);
	t = csrfi_trim((csrf_slice){"\r\nx\n", 4}); /* only spaces and tabs */
	assert_int_equal(t.len, 4);

	const char *s = "  xy ", *p = s, *end = s + 5;
	csrfi_trim_ptrs(&p, &end);
	assert_int_equal(end - p, 2);
	assert_memory_equal(p, "xy", 2);
}

static void test_compare(void **state)
{
	(void)state;
	assert_true(csrfi_slice_ieq((csrf_slice){"Content-TYPE", 12}, "content-type"));
	assert_false(csrfi_slice_ieq((csrf_slice){"Content-Typ", 11}, "content-type"));
	assert_false(csrfi_slice_ieq((csrf_slice){NULL, 0}, ""));
	assert_true(csrfi_slice_ieq((csrf_slice){"", 0}, ""));
	assert_true(csrfi_slice_eq((csrf_slice){"abc", 3}, "abc"));
	assert_false(csrfi_slice_eq((csrf_slice){"ABC", 3}, "abc"));
	assert_true(csrfi_ieq(NULL, 0, ""));
	/* Non-ASCII bytes are never folded: the Kelvin sign is no 'k'. */
	assert_false(csrfi_slice_ieq((csrf_slice){"\xe2\x84\xaa", 3}, "k"));
	assert_true(csrfi_slice_ieq((csrf_slice){"APPLICATION/X-WWW-FORM-URLENCODED", 33},
	                            "application/x-www-form-urlencoded"));
	assert_false(csrfi_slice_ieq((csrf_slice){"application/x-www-form-urlencodex", 33},
	                             "application/x-www-form-urlencoded"));

	/* Every pair of bytes at every place of the eight-byte words and of
	 * the short tail: equal exactly when csrfi_lower makes them so (no
	 * '@' for '`', '[' for '{', 0xc1 for 0xe1, or 'A' + 0x80 for 'a'). */
	static const size_t lens[] = {1, 7, 8, 13, 16};
	for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
		size_t len = lens[li];
		for (size_t at = 0; at < len; at++) {
			for (int c1 = 0; c1 < 256; c1++) {
				for (int c2 = 0; c2 < 256; c2++) {
					char a[16], b[16];
					memset(a, 'x', sizeof a);
					memset(b, 'X', sizeof b);
					a[at] = (char)c1;
					b[at] = (char)c2;
					int want = csrfi_lower((unsigned char)c1) == csrfi_lower((unsigned char)c2);
					if (csrfi_mem_ieq(a, b, len) != want)
						fail_msg("len %zu at %zu: 0x%02x 0x%02x", len, at, c1, c2);
				}
			}
		}
	}

	assert_true(csrfi_contains_ci("multipart/form-data; BOUNDARY=x", 31, "boundary="));
	assert_true(csrfi_contains_ci("no-store", 8, "NO-STORE"));
	assert_false(csrfi_contains_ci("no-stor", 7, "no-store"));
	assert_false(csrfi_contains_ci("", 0, "x"));
	char *g = tu_guard_copy("private", 7);
	assert_true(csrfi_contains_ci(g, 7, "vate"));
	assert_false(csrfi_contains_ci(g, 7, "vatex"));
	tu_guard_free(g);
}

static void test_tokens(void **state)
{
	(void)state;
	assert_true(csrfi_is_token("X-CSRF-Token", 12));
	assert_true(csrfi_is_token("!#$%&'*+-.^_`|~", 15));
	assert_false(csrfi_is_token("", 0));
	assert_false(csrfi_is_token("a b", 3));
	assert_false(csrfi_is_token("a:b", 3));
	assert_false(csrfi_is_token("a\0b", 3));
	assert_false(csrfi_is_token("\xc3\xa9", 2));
	for (int c = 0; c < 256; c++) {
		int v = csrfx_hexval((unsigned char)c);
		int want = c >= '0' && c <= '9'   ? c - '0'
		           : c >= 'a' && c <= 'f' ? c - 'a' + 10
		           : c >= 'A' && c <= 'F' ? c - 'A' + 10
		                                  : -1;
		assert_int_equal(v, want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_u64), cmocka_unit_test(test_parse_i64), cmocka_unit_test(test_trim),
	    cmocka_unit_test(test_compare),   cmocka_unit_test(test_tokens),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
