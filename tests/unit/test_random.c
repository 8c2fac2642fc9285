/* test_random.c - src/random.c: csrf_random and csrf_secret_new from the
 * CSPRNG, and the masking pads (each used once, the pool refilled). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"

static void test_random(void **state)
{
	(void)state;
	uint8_t s[CSRF_SECRET_LEN], s2[CSRF_SECRET_LEN];
	/* n == 0 is fine, NULL with n is not, two draws differ */
	assert_int_equal(csrf_random(NULL, 0), CSRF_OK);
	assert_int_equal(csrf_random(NULL, 1), CSRF_ERR_ARG);
	assert_int_equal(csrf_secret_new(NULL), CSRF_ERR_ARG);
	assert_int_equal(csrf_secret_new(s), CSRF_OK);
	assert_int_equal(csrf_secret_new(s2), CSRF_OK);
	assert_memory_not_equal(s, s2, sizeof s);
}

/* Pads: never the same twice across many draws, over the pool's refills,
 * and a request larger than the pool is served too. */
static void test_pads(void **state)
{
	(void)state;
	enum { N = 400, LEN = 54 };
	static uint8_t pads[N][LEN];
	for (size_t i = 0; i < N; i++)
		assert_int_equal(csrf_random_pad(pads[i], LEN), CSRF_OK);
	for (size_t i = 0; i < N; i++)
		for (size_t j = 0; j < i; j++)
			assert_memory_not_equal(pads[i], pads[j], LEN);
	static uint8_t big[10000], zero[10000];
	assert_int_equal(csrf_random_pad(big, sizeof big), CSRF_OK);
	assert_memory_not_equal(big, zero, sizeof big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_random),
	    cmocka_unit_test(test_pads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
