/* SPDX-License-Identifier: BSD-2-Clause */
/* test_csp.c - csrf_csp_form_action: the CSP backstop value for injected
 * responses, alone and beside the upstream's policy; bad input and small
 * buffers. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "csrf.h"
#include "testutil.h"

#define OURS "form-action 'self'"
#define BASE "; base-uri 'self'"

static void test_values(void **state)
{
	(void)state;
	static const csrf_slice two[] = {{"https://app.example:8443", 24}, {"HTTP://Other.Example:80", 23}};
	static const struct {
		const char *existing;
		size_t n_trusted;
		const char *want;
	} rows[] = {
	    {NULL, 0, OURS BASE},
	    {"", 0, OURS BASE},
	    {"  \t ", 0, OURS BASE},
	    {"default-src 'self'", 0, "default-src 'self', " OURS BASE},
	    {" form-action *; script-src 'none' ", 0, "form-action *; script-src 'none', " OURS BASE},
	    {NULL, 2, OURS " https://app.example:8443 http://other.example" BASE},
	    {"img-src *", 1, "img-src *, " OURS " https://app.example:8443" BASE},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		char out[256];
		size_t n = 99;
		const char *e = rows[i].existing;
		assert_int_equal(
		    csrf_csp_form_action(e, e ? strlen(e) : 0, two, rows[i].n_trusted, out, sizeof out, &n), CSRF_OK);
		if (strcmp(out, rows[i].want) != 0 || n != strlen(rows[i].want))
			fail_msg("row %zu: \"%s\"", i, out);
		/* exactly the room it needs, and one byte less */
		assert_int_equal(csrf_csp_form_action(e, e ? strlen(e) : 0, two, rows[i].n_trusted, out, n + 1, &n),
		                 CSRF_OK);
		size_t need;
		assert_int_equal(csrf_csp_form_action(e, e ? strlen(e) : 0, two, rows[i].n_trusted, out, n, &need),
		                 CSRF_ERR_BUFFER);
		assert_int_equal(need, n + 1);
		assert_int_equal(out[0], '\0');
	}
}

static void test_bad(void **state)
{
	(void)state;
	char out[256];
	size_t n;
	static const csrf_slice bare[] = {{"app.example", 11}};
	static const csrf_slice path[] = {{"https://app.example/", 20}};
	static const csrf_slice null_ptr[] = {{NULL, 0}};
	assert_int_equal(csrf_csp_form_action("a\r\nSet-Cookie: x", 16, NULL, 0, out, sizeof out, &n), CSRF_MALFORMED);
	assert_int_equal(csrf_csp_form_action("a\0b", 3, NULL, 0, out, sizeof out, &n), CSRF_MALFORMED);
	assert_int_equal(csrf_csp_form_action(NULL, 0, bare, 1, out, sizeof out, &n), CSRF_MALFORMED);
	assert_int_equal(csrf_csp_form_action(NULL, 0, path, 1, out, sizeof out, &n), CSRF_MALFORMED);
	assert_int_equal(csrf_csp_form_action(NULL, 0, null_ptr, 1, out, sizeof out, &n), CSRF_MALFORMED);
	assert_int_equal(csrf_csp_form_action(NULL, 1, NULL, 0, out, sizeof out, &n), CSRF_ERR_ARG);
	assert_int_equal(csrf_csp_form_action(NULL, 0, NULL, 1, out, sizeof out, &n), CSRF_ERR_ARG);
	assert_int_equal(csrf_csp_form_action(NULL, 0, NULL, 0, NULL, 0, &n), CSRF_ERR_ARG);
	assert_int_equal(csrf_csp_form_action(NULL, 0, NULL, 0, out, sizeof out, NULL), CSRF_ERR_ARG);
	assert_int_equal(csrf_csp_form_action(NULL, 0, NULL, 0, out, 0, &n), CSRF_ERR_BUFFER);
	/* the existing value is read only within its length */
	char *g = tu_guard_copy("img-src *", 9);
	assert_int_equal(csrf_csp_form_action(g, 9, NULL, 0, out, sizeof out, &n), CSRF_OK);
	assert_string_equal(out, "img-src *, " OURS BASE);
	tu_guard_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_values),
	    cmocka_unit_test(test_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
