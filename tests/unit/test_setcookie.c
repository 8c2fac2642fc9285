/* SPDX-License-Identifier: BSD-2-Clause */
/* test_setcookie.c - csrf_set_cookie_build: attribute order, prefixes,
 * SameSite, Max-Age, name and value validation, short buffers. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "csrf.h"
#include "testutil.h"

typedef struct {
	const char *name;
	const char *value;
	size_t value_len; /* 0: strlen(value) */
	csrf_cookie_opts opts;
	csrf_reason want;
	const char *out;
} row;

#define LAX CSRF_SAMESITE_LAX
#define STRICT CSRF_SAMESITE_STRICT
#define NONE_ CSRF_SAMESITE_NONE

static const row rows[] = {
    {"a", "1", 0, {0, 0, 0, LAX, 0, NULL}, CSRF_OK, "a=1; Path=/; SameSite=Lax"},
    {"csrf_secret",
     "v",
     0,
     {1, 1, 1, LAX, 0, NULL},
     CSRF_OK,
     "__Host-csrf_secret=v; Path=/; Secure; HttpOnly; SameSite=Lax"},
    {"csrf",
     "v",
     0,
     {1, 1, 1, LAX, 3600, "/"},
     CSRF_OK,
     "__Host-csrf=v; Path=/; Max-Age=3600; Secure; HttpOnly; SameSite=Lax"},
    {"csrf", "v", 0, {1, 0, 0, STRICT, 0, NULL}, CSRF_OK, "csrf=v; Path=/; Secure; SameSite=Strict"},
    {"csrf", "v", 0, {1, 0, 1, NONE_, 0, NULL}, CSRF_OK, "csrf=v; Path=/; Secure; HttpOnly; SameSite=None"},
    {"csrf", "v", 0, {0, 0, 1, LAX, -1, NULL}, CSRF_OK, "csrf=v; Path=/; Max-Age=0; HttpOnly; SameSite=Lax"},
    {"csrf",
     "",
     0,
     {1, 1, 1, LAX, -100, NULL},
     CSRF_OK,
     "__Host-csrf=; Path=/; Max-Age=0; Secure; HttpOnly; SameSite=Lax"},
    {"csrf",
     "v",
     0,
     {0, 0, 0, LAX, INT64_MAX, "/app"},
     CSRF_OK,
     "csrf=v; Path=/app; Max-Age=9223372036854775807; SameSite=Lax"},
    {"__Host-x", "v", 0, {1, 1, 0, LAX, 0, NULL}, CSRF_OK, "__Host-x=v; Path=/; Secure; SameSite=Lax"},
    {"__Host-x", "v", 0, {1, 0, 0, LAX, 0, NULL}, CSRF_OK, "__Host-x=v; Path=/; Secure; SameSite=Lax"},
    {"__Secure-x", "v", 0, {1, 0, 0, LAX, 0, "/a"}, CSRF_OK, "__Secure-x=v; Path=/a; Secure; SameSite=Lax"},
    /* prefixes in any case are prefixes (browsers match them case-insensitively):
     * the name is kept as given, never prefixed twice */
    {"__host-x", "v", 0, {1, 1, 0, LAX, 0, NULL}, CSRF_OK, "__host-x=v; Path=/; Secure; SameSite=Lax"},
    {"__HOST-x", "v", 0, {1, 1, 1, LAX, 0, "/"}, CSRF_OK, "__HOST-x=v; Path=/; Secure; HttpOnly; SameSite=Lax"},
    {"__hOsT-x", "v", 0, {1, 0, 0, LAX, 0, NULL}, CSRF_OK, "__hOsT-x=v; Path=/; Secure; SameSite=Lax"},
    {"__SECURE-x", "v", 0, {1, 0, 0, LAX, 0, "/a"}, CSRF_OK, "__SECURE-x=v; Path=/a; Secure; SameSite=Lax"},
    /* ... and only the whole prefix: these get "__Host-" in front */
    {"__Host", "v", 0, {1, 1, 0, LAX, 0, NULL}, CSRF_OK, "__Host-__Host=v; Path=/; Secure; SameSite=Lax"},
    {"__host_x", "v", 0, {1, 1, 0, LAX, 0, NULL}, CSRF_OK, "__Host-__host_x=v; Path=/; Secure; SameSite=Lax"},
    {"_Host-x", "v", 0, {1, 1, 0, LAX, 0, NULL}, CSRF_OK, "__Host-_Host-x=v; Path=/; Secure; SameSite=Lax"},
    {"!#$%&'*+-.^_`|~09AZaz",
     "!#$%&'()*+-./:<=>?@[]^_`{|}~",
     0,
     {0, 0, 0, LAX, 0, NULL},
     CSRF_OK,
     "!#$%&'*+-.^_`|~09AZaz=!#$%&'()*+-./:<=>?@[]^_`{|}~; Path=/; SameSite=Lax"},
    /* prefix and SameSite rules */
    {"csrf", "v", 0, {0, 1, 1, LAX, 0, NULL}, CSRF_ERR_ARG, NULL},
    {"csrf", "v", 0, {1, 1, 1, LAX, 0, "/app"}, CSRF_ERR_ARG, NULL},
    {"__Host-x", "v", 0, {0, 0, 0, LAX, 0, NULL}, CSRF_ERR_ARG, NULL},
    {"__host-x", "v", 0, {1, 0, 0, LAX, 0, "/a"}, CSRF_ERR_ARG, NULL},
    {"__host-x", "v", 0, {1, 1, 0, LAX, 0, "/a"}, CSRF_ERR_ARG, NULL},
    {"__HOST-x", "v", 0, {0, 0, 0, LAX, 0, NULL}, CSRF_ERR_ARG, NULL},
    {"__hOST-x", "v", 0, {0, 1, 0, LAX, 0, NULL}, CSRF_ERR_ARG, NULL},
    {"__secure-x", "v", 0, {0, 0, 0, LAX, 0, NULL}, CSRF_ERR_ARG, NULL},
    {"__SeCuRe-x", "v", 0, {0, 0, 0, LAX, 0, "/a"}, CSRF_ERR_ARG, NULL},
    {"__Secure-x", "v", 0, {0, 0, 0, LAX, 0, NULL}, CSRF_ERR_ARG, NULL},
    {"csrf", "v", 0, {0, 0, 0, NONE_, 0, NULL}, CSRF_ERR_ARG, NULL},
    {"csrf", "v", 0, {1, 0, 0, (csrf_samesite)7, 0, NULL}, CSRF_ERR_ARG, NULL},
    {"csrf", "v", 0, {0, 0, 0, LAX, 0, ""}, CSRF_ERR_ARG, NULL},
    {"csrf", "v", 0, {0, 0, 0, LAX, 0, "app"}, CSRF_ERR_ARG, NULL},
    {"csrf", "v", 0, {0, 0, 0, LAX, 0, "/a;b"}, CSRF_ERR_ARG, NULL},
    {"csrf", "v", 0, {0, 0, 0, LAX, 0, "/a\nb"}, CSRF_ERR_ARG, NULL},
    /* names: RFC 6265 tokens only */
    {"", "v", 0, {0}, CSRF_MALFORMED, NULL},
    {"a b", "v", 0, {0}, CSRF_MALFORMED, NULL},
    {"a=b", "v", 0, {0}, CSRF_MALFORMED, NULL},
    {"a;b", "v", 0, {0}, CSRF_MALFORMED, NULL},
    {"a,b", "v", 0, {0}, CSRF_MALFORMED, NULL},
    {"a\"b", "v", 0, {0}, CSRF_MALFORMED, NULL},
    {"a(b)", "v", 0, {0}, CSRF_MALFORMED, NULL},
    {"a\tb", "v", 0, {0}, CSRF_MALFORMED, NULL},
    {"a\x7f", "v", 0, {0}, CSRF_MALFORMED, NULL},
    {"caf\xc3\xa9", "v", 0, {0}, CSRF_MALFORMED, NULL},
    /* values: cookie-octets only */
    {"a", "v w", 0, {0}, CSRF_MALFORMED, NULL},
    {"a", "v;w", 0, {0}, CSRF_MALFORMED, NULL},
    {"a", "v,w", 0, {0}, CSRF_MALFORMED, NULL},
    {"a", "\"v\"", 0, {0}, CSRF_MALFORMED, NULL},
    {"a", "v\\w", 0, {0}, CSRF_MALFORMED, NULL},
    {"a", "v\r\nSet-Cookie: x=y", 0, {0}, CSRF_MALFORMED, NULL},
    {"a", "v\tw", 0, {0}, CSRF_MALFORMED, NULL},
    {"a", "v\x7f", 0, {0}, CSRF_MALFORMED, NULL},
    {"a", "caf\xc3\xa9", 0, {0}, CSRF_MALFORMED, NULL},
    {"a", "v\0w", 3, {0}, CSRF_MALFORMED, NULL},
};

static void test_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const row *r = &rows[i];
		size_t vlen = r->value_len ? r->value_len : strlen(r->value);
		char out[512];
		size_t n = 99;
		memset(out, 'Z', sizeof out);
		/* the value flush against a guard page */
		char *g = tu_guard_copy(r->value, vlen ? vlen : 1);
		const char *v = vlen ? g : g + 1;
		csrf_reason rc = csrf_set_cookie_build(r->name, v, vlen, &r->opts, out, sizeof out, &n);
		if (rc != r->want)
			fail_msg("row %zu: got %d want %d", i, rc, r->want);
		if (rc == CSRF_OK) {
			if (strcmp(out, r->out) != 0 || n != strlen(r->out))
				fail_msg("row %zu: wrong header", i);
			/* exactly enough room works; one byte less is refused whole */
			memset(out, 'Z', sizeof out);
			assert_int_equal(csrf_set_cookie_build(r->name, v, vlen, &r->opts, out, n + 1, &n), CSRF_OK);
			assert_int_equal(strcmp(out, r->out), 0);
			/* short buffers flush against a guard page: no write past cap */
			for (size_t c = 0; c <= n; c++) {
				size_t m = 99;
				char *ob = tu_guard_copy(out, c + 1), *o = ob + 1;
				if (csrf_set_cookie_build(r->name, v, vlen, &r->opts, o, c, &m) != CSRF_ERR_BUFFER)
					fail_msg("row %zu cap %zu: short buffer accepted", i, c);
				if ((c > 0 && o[0] != '\0') || m != 0)
					fail_msg("row %zu cap %zu: partial output", i, c);
				tu_guard_free(ob);
			}
		} else if (out[0] != '\0' || n != 0) {
			fail_msg("row %zu: output not empty on failure", i);
		}
		tu_guard_free(g);
	}
}

static void test_args(void **state)
{
	(void)state;
	char out[128];
	size_t n;
	assert_int_equal(csrf_set_cookie_build(NULL, "v", 1, NULL, out, sizeof out, &n), CSRF_ERR_ARG);
	assert_int_equal(csrf_set_cookie_build("a", NULL, 1, NULL, out, sizeof out, &n), CSRF_ERR_ARG);
	assert_int_equal(csrf_set_cookie_build("a", "v", 1, NULL, NULL, 10, &n), CSRF_ERR_ARG);
	/* NULL options are the defaults: session cookie, Path=/, SameSite=Lax */
	assert_int_equal(csrf_set_cookie_build("a", NULL, 0, NULL, out, sizeof out, NULL), CSRF_OK);
	assert_string_equal(out, "a=; Path=/; SameSite=Lax");
	/* a name over 256 bytes */
	char name[300];
	memset(name, 'n', sizeof name - 1);
	name[sizeof name - 1] = '\0';
	assert_int_equal(csrf_set_cookie_build(name, "v", 1, NULL, out, sizeof out, &n), CSRF_MALFORMED);
	name[256] = '\0';
	char big[600];
	assert_int_equal(csrf_set_cookie_build(name, "v", 1, NULL, big, sizeof big, &n), CSRF_OK);
	assert_int_equal(n, 256 + strlen("=v; Path=/; SameSite=Lax"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rows),
	    cmocka_unit_test(test_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
