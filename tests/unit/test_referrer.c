/* SPDX-License-Identifier: BSD-2-Clause */
/* test_referrer.c - csrf_referrer_policy_parse and csrf_referrer_raises:
 * Referrer-Policy values as browsers read them (comma lists, the last
 * policy named wins, unknown tokens skipped, case and whitespace),
 * several lines folded (csrf_response_referrer), every prefix of each value flush against an
 * unreadable page, malformed and oversized values. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "csrf.h"
#include "testutil.h"

#define U CSRF_REFERRER_UNSET
#define NR CSRF_REFERRER_NO_REFERRER
#define SO CSRF_REFERRER_SAME_ORIGIN

static const struct {
	const char *value;
	csrf_referrer_policy want;
} rows[] = {
    /* each policy of the spec; only no-referrer takes the Origin of a
     * same-origin form POST */
    {"no-referrer", NR},
    {"no-referrer-when-downgrade", CSRF_REFERRER_NO_REFERRER_WHEN_DOWNGRADE},
    {"same-origin", SO},
    {"origin", CSRF_REFERRER_ORIGIN},
    {"strict-origin", CSRF_REFERRER_STRICT_ORIGIN},
    {"origin-when-cross-origin", CSRF_REFERRER_ORIGIN_WHEN_CROSS_ORIGIN},
    {"strict-origin-when-cross-origin", CSRF_REFERRER_STRICT_ORIGIN_WHEN_CROSS_ORIGIN},
    {"unsafe-url", CSRF_REFERRER_UNSAFE_URL},
    /* nothing named */
    {"", U},
    {" \t ", U},
    {",", U},
    {",,,", U},
    {"no-referer", U},   /* the header's misspelling is not a policy */
    {"no-referrerx", U}, /* no prefix match */
    {"xno-referrer", U},
    {"no referrer", U},
    {"\"no-referrer\"", U}, /* quoted: not a policy token */
    {"no-referrer;", U},
    {"never", U}, /* a <meta> legacy keyword only */
    {"default", U},
    {"always", U},
    {"origin-when-crossorigin", U},
    /* case and whitespace */
    {"NO-REFERRER", NR},
    {"No-Referrer", NR},
    {"  no-referrer\t", NR},
    {"\tsame-origin ", SO},
    /* lists: the last policy named wins, unknown ones skipped */
    {"no-referrer, same-origin", SO},
    {"same-origin, no-referrer", NR},
    {"same-origin,no-referrer", NR},
    {"no-referrer, bogus", NR},
    {"no-referrer, never", NR},
    {"bogus, no-referrer", NR},
    {"no-referrer,", NR},
    {",no-referrer", NR},
    {"no-referrer, ,", NR},
    {"unsafe-url, strict-origin-when-cross-origin", CSRF_REFERRER_STRICT_ORIGIN_WHEN_CROSS_ORIGIN},
    {"origin, no-referrer-when-downgrade, same-origin", SO},
    {"no-referrer same-origin", U}, /* no comma: one token, no policy */
};

static void test_values(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		size_t n = strlen(rows[i].value);
		char *v = tu_guard_copy(rows[i].value, n);
		csrf_referrer_policy got = csrf_referrer_policy_parse(v, n, U);
		if (got != rows[i].want)
			fail_msg("row %zu \"%s\": %d, want %d", i, rows[i].value, (int)got, (int)rows[i].want);
		assert_int_equal(csrf_referrer_raises(v, n), rows[i].want == NR);
		/* none named: the line before it stands */
		assert_int_equal(csrf_referrer_policy_parse(v, n, SO), rows[i].want == U ? SO : rows[i].want);
		/* every prefix, read flush against the guard page: no over-read,
		 * and a policy only where a whole token was cut */
		for (size_t k = 0; k < n; k++) {
			char *p = tu_guard_copy(rows[i].value, k);
			(void)csrf_referrer_policy_parse(p, k, U);
			tu_guard_free(p);
		}
		tu_guard_free(v);
	}
}

/* The value is (pointer, length): bytes after len are not read, a NUL
 * inside is a byte of a token (which then names no policy). */
static void test_slices(void **state)
{
	(void)state;
	assert_int_equal(csrf_referrer_policy_parse("no-referrer, same-origin", 11, U), NR);
	assert_int_equal(csrf_referrer_policy_parse("same-origin", 4, U), U);
	assert_int_equal(csrf_referrer_policy_parse("no-referrer\0x", 13, U), U);
	assert_int_equal(csrf_referrer_policy_parse("origin, no-referrer\0", 20, U), CSRF_REFERRER_ORIGIN);
	assert_int_equal(csrf_referrer_policy_parse(NULL, 0, U), U);
	assert_int_equal(csrf_referrer_policy_parse(NULL, 5, NR), NR);
	assert_int_equal(csrf_referrer_raises(NULL, 0), 0);
	assert_int_equal(csrf_referrer_raises("", 0), 0);
	/* control bytes and 8-bit bytes are no whitespace of a header */
	assert_int_equal(csrf_referrer_policy_parse("\x01no-referrer", 12, U), U);
	assert_int_equal(csrf_referrer_policy_parse("no-referrer\xc2\xa0", 13, U), U);
}

/* Several Referrer-Policy lines read as one list (Fetch: get, decode and
 * split): a line naming nothing leaves the one before it. */
static void test_fold(void **state)
{
	(void)state;
	static const struct {
		const char *lines[3];
		csrf_referrer_policy want;
	} folds[] = {
	    {{"no-referrer", "same-origin", NULL}, SO},
	    {{"same-origin", "no-referrer", NULL}, NR},
	    {{"no-referrer", "bogus", NULL}, NR},
	    {{"no-referrer", "", NULL}, NR},
	    {{"origin", "no-referrer, strict-origin", NULL}, CSRF_REFERRER_STRICT_ORIGIN},
	    {{"bogus", "", "never"}, U},
	};
	for (size_t i = 0; i < sizeof folds / sizeof folds[0]; i++) {
		csrf_referrer_policy p = U;
		for (size_t j = 0; j < 3 && folds[i].lines[j]; j++)
			p = csrf_referrer_policy_parse(folds[i].lines[j], strlen(folds[i].lines[j]), p);
		assert_int_equal(p, folds[i].want);
	}
}

/* An oversized value is read whole, in one pass, without a limit that
 * would cut its last token off: 1 MiB of junk tokens before the policy,
 * and a 64 KiB token that only starts like one. */
static void test_oversized(void **state)
{
	(void)state;
	size_t n = 1u << 20;
	char *v = malloc(n + 32);
	assert_non_null(v);
	for (size_t i = 0; i < n; i++)
		v[i] = (i % 8 == 7) ? ',' : 'x';
	memcpy(v + n, ", no-referrer", 13);
	char *g = tu_guard_copy(v, n + 13);
	assert_int_equal(csrf_referrer_policy_parse(g, n + 13, U), NR);
	assert_int_equal(csrf_referrer_raises(g, n + 13), 1);
	tu_guard_free(g);
	memcpy(v, "same-origin,", 12);
	memset(v + 12, 'n', 65536);
	g = tu_guard_copy(v, 12 + 65536);
	assert_int_equal(csrf_referrer_policy_parse(g, 12 + 65536, U), SO);
	tu_guard_free(g);
	free(v);
}

#define H(n, v)                                                                                                        \
	{                                                                                                              \
		{n, sizeof n - 1},                                                                                     \
		{                                                                                                      \
			v, sizeof v - 1                                                                                \
		}                                                                                                      \
	}

/* csrf_response_referrer: the lines of a response together; every
 * Referrer-Policy line marked when they make no-referrer, none else. */
static void test_response(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		csrf_header h[4];
		size_t n;
		unsigned char want[4];
	} cases[] = {
	    {"none", {H("Content-Type", "text/html")}, 1, {0}},
	    {"one", {H("Content-Type", "text/html"), H("Referrer-Policy", "no-referrer")}, 2, {0, 1}},
	    {"name case", {H("referrer-policy", "no-referrer"), H("X-Other", "no-referrer")}, 2, {1, 0}},
	    {"other policy", {H("Referrer-Policy", "same-origin")}, 1, {0}},
	    {"strict-origin", {H("Referrer-Policy", "strict-origin")}, 1, {0}},
	    {"list ends other", {H("Referrer-Policy", "no-referrer, strict-origin-when-cross-origin")}, 1, {0}},
	    {"two lines, last no-referrer",
	     {H("Referrer-Policy", "origin"), H("Vary", "Cookie"), H("Referrer-Policy", "no-referrer")},
	     3,
	     {1, 0, 1}},
	    {"two lines, last other", {H("Referrer-Policy", "no-referrer"), H("Referrer-Policy", "origin")}, 2, {0, 0}},
	    {"junk line after", {H("Referrer-Policy", "no-referrer"), H("Referrer-Policy", "bogus")}, 2, {1, 1}},
	    {"empty line after", {H("Referrer-Policy", "no-referrer"), H("Referrer-Policy", "")}, 2, {1, 1}},
	    {"legacy never", {H("Referrer-Policy", "never")}, 1, {0}},
	    {"misspelt name", {H("Referer-Policy", "no-referrer")}, 1, {0}},
	    {"name with blank", {H("Referrer-Policy ", "no-referrer")}, 1, {0}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		unsigned char raise[4];
		memset(raise, 7, sizeof raise);
		assert_int_equal(csrf_response_referrer(cases[i].h, cases[i].n, raise), CSRF_OK);
		for (size_t k = 0; k < cases[i].n; k++)
			if (raise[k] != cases[i].want[k])
				fail_msg("%s: line %zu: %u, want %u", cases[i].name, k, raise[k], cases[i].want[k]);
		assert_int_equal(raise[cases[i].n], 7); /* nothing past n */
	}
	unsigned char raise[2] = {7, 7};
	csrf_header bad[2] = {H("Referrer-Policy", "no-referrer"), {{NULL, 3}, {"x", 1}}};
	assert_int_equal(csrf_response_referrer(NULL, 0, NULL), CSRF_OK);
	assert_int_equal(csrf_response_referrer(NULL, 1, raise), CSRF_ERR_ARG);
	assert_int_equal(csrf_response_referrer(bad, 1, NULL), CSRF_ERR_ARG);
	assert_int_equal(csrf_response_referrer(bad, 2, raise), CSRF_ERR_ARG);
	bad[1] = (csrf_header){{"Referrer-Policy", 15}, {NULL, 2}};
	assert_int_equal(csrf_response_referrer(bad, 2, raise), CSRF_ERR_ARG);
	assert_int_equal(raise[0], 7);
	bad[1] = (csrf_header){{"Referrer-Policy", 15}, {NULL, 0}};
	assert_int_equal(csrf_response_referrer(bad, 2, raise), CSRF_OK);
	assert_int_equal(raise[0], 1);
	assert_int_equal(raise[1], 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_values),    cmocka_unit_test(test_slices),   cmocka_unit_test(test_fold),
	    cmocka_unit_test(test_oversized), cmocka_unit_test(test_response),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
