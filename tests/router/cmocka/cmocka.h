/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmocka.h - the part of cmocka's API the unit tests of tokens, key files,
 * the key ring and cookies use, for the router builds only (tests/router):
 * Debian's libcmocka exists for this machine's architecture, not for the
 * cross targets. A failed assertion prints where and why and leaves the
 * test (longjmp); cmocka_run_group_tests runs every test and returns the
 * number that failed, as cmocka does. The main build uses the real cmocka.
 */
#ifndef CSRF_CMOCKA_SUBSET_H
#define CSRF_CMOCKA_SUBSET_H

#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef void (*CMUnitTestFunction)(void **state);
typedef int (*CMFixtureFunction)(void **state);

struct CMUnitTest {
	const char *name;
	CMUnitTestFunction test_func;
	CMFixtureFunction setup_func;
	CMFixtureFunction teardown_func;
};

#define cmocka_unit_test(f)                                                                                            \
	{                                                                                                              \
#f, f, NULL, NULL                                                                                      \
	}
#define cmocka_unit_test_setup_teardown(f, setup, teardown)                                                            \
	{                                                                                                              \
#f, f, setup, teardown                                                                                 \
	}

extern jmp_buf cm_jmp;

#define cm_fail(...)                                                                                                   \
	do {                                                                                                           \
		fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                                        \
		fprintf(stderr, __VA_ARGS__);                                                                          \
		fputc('\n', stderr);                                                                                   \
		longjmp(cm_jmp, 1);                                                                                    \
	} while (0)

#define fail_msg(...) cm_fail(__VA_ARGS__)
/* A test that cannot run here says why and is counted as skipped, as in
 * cmocka. */
#define print_message(...) printf(__VA_ARGS__)
#define skip() longjmp(cm_jmp, 2)
#define assert_true(c)                                                                                                 \
	do {                                                                                                           \
		if (!(c))                                                                                              \
			cm_fail("%s is false", #c);                                                                    \
	} while (0)
#define assert_false(c) assert_true(!(c))
#define assert_int_equal(a, b)                                                                                         \
	do {                                                                                                           \
		uintmax_t cm_a = (uintmax_t)(a), cm_b = (uintmax_t)(b);                                                \
		if (cm_a != cm_b)                                                                                      \
			cm_fail("%#jx != %#jx (%s, %s)", cm_a, cm_b, #a, #b);                                          \
	} while (0)
#define assert_int_not_equal(a, b)                                                                                     \
	do {                                                                                                           \
		uintmax_t cm_a = (uintmax_t)(a), cm_b = (uintmax_t)(b);                                                \
		if (cm_a == cm_b)                                                                                      \
			cm_fail("%#jx == %#jx (%s, %s)", cm_a, cm_b, #a, #b);                                          \
	} while (0)
#define assert_non_null(p) assert_true((p) != NULL)
#define assert_null(p) assert_true((p) == NULL)
#define assert_memory_equal(a, b, n) assert_true(memcmp((a), (b), (n)) == 0)
#define assert_memory_not_equal(a, b, n) assert_true(memcmp((a), (b), (n)) != 0)
#define assert_string_equal(a, b)                                                                                      \
	do {                                                                                                           \
		const char *cm_x = (a), *cm_y = (b);                                                                   \
		if (strcmp(cm_x, cm_y) != 0)                                                                           \
			cm_fail("\"%s\" != \"%s\"", cm_x, cm_y);                                                       \
	} while (0)
#define assert_string_not_equal(a, b) assert_true(strcmp((a), (b)) != 0)

int cm_run(const struct CMUnitTest *tests, size_t n, CMFixtureFunction setup, CMFixtureFunction teardown);
#define cmocka_run_group_tests(tests, setup, teardown)                                                                 \
	cm_run((tests), sizeof(tests) / sizeof((tests)[0]), (setup), (teardown))

#endif
