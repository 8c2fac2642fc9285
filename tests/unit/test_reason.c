/* SPDX-License-Identifier: BSD-2-Clause */
/* test_reason.c - the stable reason codes: every code has a distinct
 * name and phrase, allows exactly when below 16, and unknown codes are
 * answered, not crashed on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "csrf.h"

typedef struct {
	csrf_reason code;
	int value; /* the number is part of the contract */
	const char *name;
	int allows;
} row;

static const row rows[] = {
    {CSRF_OK, 0, "ok", 1},
    {CSRF_SAFE_METHOD, 1, "safe_method", 1},
    {CSRF_EXEMPT, 2, "exempt", 1},
    {CSRF_ORIGIN_VERIFIED, 3, "origin_verified", 1},
    {CSRF_CROSS_SITE, 16, "cross_site", 0},
    {CSRF_SAME_SITE, 17, "same_site", 0},
    {CSRF_FETCH_SITE_MALFORMED, 18, "fetch_site_malformed", 0},
    {CSRF_ORIGIN_MISMATCH, 19, "origin_mismatch", 0},
    {CSRF_NULL_ORIGIN, 20, "null_origin", 0},
    {CSRF_ORIGIN_MALFORMED, 21, "origin_malformed", 0},
    {CSRF_REFERER_MISSING, 22, "referer_missing", 0},
    {CSRF_REFERER_MALFORMED, 23, "referer_malformed", 0},
    {CSRF_REFERER_INSECURE, 24, "referer_insecure", 0},
    {CSRF_REFERER_MISMATCH, 25, "referer_mismatch", 0},
    {CSRF_NO_EVIDENCE, 26, "no_evidence", 0},
    {CSRF_METHOD_OVERRIDE, 27, "method_override", 0},
    {CSRF_WEBSOCKET_ORIGIN, 28, "websocket_origin", 0},
    {CSRF_TOKEN_MISSING, 32, "token_missing", 0},
    {CSRF_TOKEN_MALFORMED, 33, "token_malformed", 0},
    {CSRF_TOKEN_INVALID, 34, "token_invalid", 0},
    {CSRF_TOKEN_EXPIRED, 35, "token_expired", 0},
    {CSRF_TOKEN_SESSION, 36, "token_session", 0},
    {CSRF_UNKNOWN_KEY, 37, "unknown_key", 0},
    {CSRF_SECRET_MISSING, 38, "secret_missing", 0},
    {CSRF_SECRET_INVALID, 39, "secret_invalid", 0},
    {CSRF_REAUTH_REQUIRED, 40, "reauth_required", 0},
    {CSRF_REAUTH_FAILED, 41, "reauth_failed", 0},
    {CSRF_LOCKED_OUT, 42, "locked_out", 0},
    {CSRF_BODY_TOO_LARGE, 48, "body_too_large", 0},
    {CSRF_BODY_MALFORMED, 49, "body_malformed", 0},
    {CSRF_HEADER_TOO_LARGE, 50, "header_too_large", 0},
    {CSRF_HOST_MISSING, 51, "host_missing", 0},
    {CSRF_STORE_UNAVAILABLE, 52, "store_unavailable", 0},
    {CSRF_COOKIE_AMBIGUOUS, 53, "cookie_ambiguous", 0},
    {CSRF_SECRET_EXPIRED, 54, "secret_expired", 0},
    {CSRF_STORE_FULL, 55, "store_full", 0},
    {CSRF_ERR_ARG, 64, "err_arg", 0},
    {CSRF_ERR_NOMEM, 65, "err_nomem", 0},
    {CSRF_ERR_BUFFER, 66, "err_buffer", 0},
    {CSRF_ERR_CONFIG, 67, "err_config", 0},
    {CSRF_ERR_IO, 68, "err_io", 0},
    {CSRF_ERR_RANDOM, 69, "err_random", 0},
    {CSRF_NOT_FOUND, 70, "not_found", 0},
    {CSRF_MALFORMED, 71, "malformed", 0},
    {CSRF_TOO_LARGE, 72, "too_large", 0},
    {CSRF_ERR_INTERNAL, 73, "err_internal", 0},
    {CSRF_ERR_STOPPED, 74, "err_stopped", 0},
};
#define NROWS (sizeof rows / sizeof rows[0])

static void test_codes_are_stable(void **state)
{
	(void)state;
	for (size_t i = 0; i < NROWS; i++) {
		assert_int_equal((int)rows[i].code, rows[i].value);
		assert_string_equal(csrf_reason_name(rows[i].code), rows[i].name);
		assert_int_equal(csrf_reason_allows(rows[i].code), rows[i].allows);
		const char *phrase = csrf_reason_str(rows[i].code);
		assert_non_null(phrase);
		assert_true(strlen(phrase) > 1);
		assert_string_not_equal(phrase, "unknown reason");
	}
}

static void test_names_and_phrases_distinct(void **state)
{
	(void)state;
	for (size_t i = 0; i < NROWS; i++)
		for (size_t j = i + 1; j < NROWS; j++) {
			assert_string_not_equal(csrf_reason_name(rows[i].code), csrf_reason_name(rows[j].code));
			assert_string_not_equal(csrf_reason_str(rows[i].code), csrf_reason_str(rows[j].code));
		}
}

static void test_unknown_codes(void **state)
{
	(void)state;
	const int unknown[] = {4, 15, 29, 47, 63, 75, 1000, -1};
	for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
		csrf_reason r = (csrf_reason)unknown[i];
		assert_string_equal(csrf_reason_str(r), "unknown reason");
		assert_string_equal(csrf_reason_name(r), "unknown");
		assert_int_equal(csrf_reason_allows(r), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_codes_are_stable),
	    cmocka_unit_test(test_names_and_phrases_distinct),
	    cmocka_unit_test(test_unknown_codes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
