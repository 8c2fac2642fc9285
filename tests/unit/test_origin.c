/* SPDX-License-Identifier: BSD-2-Clause */
/* test_origin.c - csrf_origin_parse, csrf_url_origin, csrf_origin_equal:
 * the edge cases Django and Go test (default ports, letter case, IPv6,
 * trailing slash, "null", userinfo), every truncated prefix, guard pages. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csrf.h"
#include "testutil.h"

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

typedef struct {
	const char *in;
	csrf_reason want;
	const char *scheme, *host;
	uint16_t port;
} row;

#define BAD(s)                                                                                                         \
	{                                                                                                              \
		s, CSRF_MALFORMED, NULL, NULL, 0                                                                       \
	}

static const row origin_rows[] = {
    {"https://a.example", CSRF_OK, "https", "a.example", 443},
    {"http://a.example", CSRF_OK, "http", "a.example", 80},
    {"https://a.example:443", CSRF_OK, "https", "a.example", 443},
    {"http://a.example:80", CSRF_OK, "http", "a.example", 80},
    {"https://a.example:80", CSRF_OK, "https", "a.example", 80},
    {"http://a.example:443", CSRF_OK, "http", "a.example", 443},
    {"https://a.example:8443", CSRF_OK, "https", "a.example", 8443},
    {"HTTPS://A.EXAMPLE", CSRF_OK, "https", "a.example", 443},
    {"HtTp://Sub-1.A.Example:8080", CSRF_OK, "http", "sub-1.a.example", 8080},
    {"http://127.0.0.1:8080", CSRF_OK, "http", "127.0.0.1", 8080},
    {"http://0.0.0.0", CSRF_OK, "http", "0.0.0.0", 80},
    {"http://255.255.255.255:1", CSRF_OK, "http", "255.255.255.255", 1},
    {"http://localhost:65535", CSRF_OK, "http", "localhost", 65535},
    {"https://[::1]", CSRF_OK, "https", "[::1]", 443},
    {"https://[::1]:8443", CSRF_OK, "https", "[::1]", 8443},
    {"https://[0:0::1]", CSRF_OK, "https", "[::1]", 443},
    {"https://[2001:DB8::A]", CSRF_OK, "https", "[2001:db8::a]", 443},
    {"https://[::ffff:127.0.0.1]", CSRF_OK, "https", "[::ffff:127.0.0.1]", 443},
    /* a final dot names the same DNS host: dropped (docs/architecture.md) */
    {"https://a.example.", CSRF_OK, "https", "a.example", 443},
    {"http://wiki.lan.:8080", CSRF_OK, "http", "wiki.lan", 8080},
    {"http://WIKI.LAN.:80", CSRF_OK, "http", "wiki.lan", 80},
    {"http://localhost.", CSRF_OK, "http", "localhost", 80},
    {"http://[::1]:8080", CSRF_OK, "http", "[::1]", 8080},
    {"http://[0000:0000:0000:0000:0000:0000:0000:0001]:8080", CSRF_OK, "http", "[::1]", 8080},
    {"http://[::2]:8080", CSRF_OK, "http", "[::2]", 8080},
    {"HTTP://XN--NXASMQ6B.EXAMPLE:80", CSRF_OK, "http", "xn--nxasmq6b.example", 80},
    {"https://xn--nxasmq6b.example", CSRF_OK, "https", "xn--nxasmq6b.example", 443},
    BAD("null"),
    BAD("NULL"),
    BAD(""),
    BAD("a.example"),
    BAD("//a.example"),
    BAD("://a.example"),
    BAD("ftp://a.example"),
    BAD("ws://a.example"),
    BAD("httpss://a.example"),
    BAD("file://"),
    BAD("https:a.example"),
    BAD("https:/a.example"),
    BAD("https://"),
    BAD("https://:443"),
    BAD("https://a.example/"),
    BAD("https://a.example/path"),
    BAD("https://a.example?q"),
    BAD("https://a.example#f"),
    BAD("https://a@b.example"),
    BAD("https://user:pass@b.example"),
    BAD("https://@b.example"),
    BAD("https://a.example:"),
    BAD("https://a.example:0"),
    BAD("https://a.example:65536"),
    BAD("https://a.example:99999"),
    BAD("https://a.example:123456"),
    BAD("https://a.example:0443"),
    BAD("https://a.example:-1"),
    BAD("https://a.example:44a"),
    BAD("https://a.example:443:443"),
    BAD("https://a.example: 443"),
    BAD(" https://a.example"),
    BAD("https://a.example "),
    BAD("https://a .example"),
    BAD("https://a\t.example"),
    BAD("https://a.example\r\n"),
    BAD("https://caf\xc3\xa9.example"),
    BAD("https://a_b.example"),
    BAD("https://a\\b.example"),
    BAD("https://.a.example"),
    BAD("https://a..example"),
    BAD("https://a.example.."),
    BAD("https://a.example.:"),
    BAD("https://1.2.3.4."),
    BAD("https://\xd0\xb0pple.example"), /* Cyrillic a, not punycode */
    BAD("https://."),
    BAD("https://1.2.3"),
    BAD("https://1.2.3.4.5"),
    BAD("https://256.1.1.1"),
    BAD("https://01.2.3.4"),
    BAD("https://0x7f.1"),
    BAD("https://a.123"),
    BAD("https://1234"),
    BAD("https://[::1"),
    BAD("https://::1"),
    BAD("https://[::1]x"),
    BAD("https://[::1]:"),
    BAD("https://[]"),
    BAD("https://[1:2:3]"),
    BAD("https://[::1%25eth0]"),
    BAD("https://[fe80::1%eth0]"),
    BAD("https://[::g]"),
    BAD("https://[127.0.0.1]"),
    BAD("https://[::1]@a"),
};

static const row url_rows[] = {
    {"https://a.example/", CSRF_OK, "https", "a.example", 443},
    {"https://a.example", CSRF_OK, "https", "a.example", 443},
    {"https://a.example/path/to?q=1#frag", CSRF_OK, "https", "a.example", 443},
    {"https://a.example?q=1", CSRF_OK, "https", "a.example", 443},
    {"https://a.example#f", CSRF_OK, "https", "a.example", 443},
    {"https://a.example:8443/x", CSRF_OK, "https", "a.example", 8443},
    {"https://a.example:443/x", CSRF_OK, "https", "a.example", 443},
    {"HTTP://A.Example:80/X", CSRF_OK, "http", "a.example", 80},
    {"http://[::1]:8080/", CSRF_OK, "http", "[::1]", 8080},
    {"https://a.example/p@q", CSRF_OK, "https", "a.example", 443},
    {"https://a.example/caf\xc3\xa9 x", CSRF_OK, "https", "a.example", 443},
    {"https://a.example/a:b", CSRF_OK, "https", "a.example", 443},
    {"http://wiki.lan.:8080/page", CSRF_OK, "http", "wiki.lan", 8080},
    {"http://[::1]:8080/form?x=1", CSRF_OK, "http", "[::1]", 8080},
    BAD("https://u@a.example/"),
    BAD("https://u:p@a.example/"),
    BAD("/relative/path"),
    BAD("relative"),
    BAD("//a.example/"),
    BAD("ftp://a.example/"),
    BAD("javascript:alert(1)"),
    BAD("data:text/html,x"),
    BAD("null"),
    BAD(""),
    BAD("https:///path"),
    BAD("https://a.example\\@evil/"),
    BAD("https://a.example:0/"),
    BAD("https://a.example:/"),
    BAD("https:// a.example/"),
    BAD("https://a.example:8443x/"),
};

static void check_row(const row *r, const char *what, size_t i, const char *buf, size_t len,
                      csrf_reason (*fn)(const char *, size_t, csrf_origin *))
{
	csrf_origin o;
	memset(&o, 'Z', sizeof o);
	csrf_reason rc = fn(buf, len, &o);
	if (rc != r->want)
		fail_msg("%s row %zu: got %d want %d", what, i, rc, r->want);
	if (rc == CSRF_OK) {
		if (strcmp(o.scheme, r->scheme) != 0 || strcmp(o.host, r->host) != 0 || o.port != r->port)
			fail_msg("%s row %zu: got %s %s %u", what, i, o.scheme, o.host, o.port);
	} else {
		csrf_origin zero;
		memset(&zero, 0, sizeof zero);
		if (memcmp(&o, &zero, sizeof o) != 0)
			fail_msg("%s row %zu: output not cleared on failure", what, i);
	}
}

static void run_rows(const row *rows, size_t n, const char *what,
                     csrf_reason (*fn)(const char *, size_t, csrf_origin *))
{
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(rows[i].in);
		check_row(&rows[i], what, i, rows[i].in, len, fn);
		char *base, *g = guard(rows[i].in, len, &base);
		check_row(&rows[i], what, i, g, len, fn);
		tu_guard_free(base);
		for (size_t k = 0; k < len; k++) {
			csrf_origin o;
			g = guard(rows[i].in, k, &base);
			csrf_reason rc = fn(g, k, &o);
			if (rc != CSRF_OK && rc != CSRF_MALFORMED)
				fail_msg("%s row %zu prefix %zu: code %d", what, i, k, rc);
			tu_guard_free(base);
		}
	}
}

static void test_origin_parse(void **state)
{
	(void)state;
	run_rows(origin_rows, sizeof origin_rows / sizeof origin_rows[0], "origin", csrf_origin_parse);
}

static void test_url_origin(void **state)
{
	(void)state;
	run_rows(url_rows, sizeof url_rows / sizeof url_rows[0], "url", csrf_url_origin);
	/* every serialized origin is also a URL with the same origin */
	for (size_t i = 0; i < sizeof origin_rows / sizeof origin_rows[0]; i++) {
		if (origin_rows[i].want != CSRF_OK)
			continue;
		csrf_origin a, b;
		size_t len = strlen(origin_rows[i].in);
		assert_int_equal(csrf_origin_parse(origin_rows[i].in, len, &a), CSRF_OK);
		assert_int_equal(csrf_url_origin(origin_rows[i].in, len, &b), CSRF_OK);
		assert_true(csrf_origin_equal(&a, &b));
	}
}

static void test_limits(void **state)
{
	(void)state;
	csrf_origin o;
	/* a 255-byte host parses, 256 does not */
	char buf[600];
	memcpy(buf, "https://", 8);
	for (size_t i = 0; i < 256; i++)
		buf[8 + i] = (i % 10 == 9) ? '.' : 'a';
	assert_int_equal(csrf_origin_parse(buf, 8 + 255, &o), CSRF_OK);
	assert_int_equal(strlen(o.host), 255);
	assert_int_equal(csrf_origin_parse(buf, 8 + 255 + 1, &o), CSRF_MALFORMED);
	memcpy(buf + 8 + 255, ":65535/", 7);
	assert_int_equal(csrf_url_origin(buf, 8 + 255 + 7, &o), CSRF_OK);
	assert_int_equal(o.port, 65535);
	/* a huge Referer: only the authority is looked at */
	size_t big = 1 << 20;
	char *u = malloc(big);
	assert_non_null(u);
	memcpy(u, "https://a.example/", 18);
	memset(u + 18, 'p', big - 18);
	assert_int_equal(csrf_url_origin(u, big, &o), CSRF_OK);
	memset(u + 8, 'a', big - 8);
	assert_int_equal(csrf_url_origin(u, big, &o), CSRF_MALFORMED);
	assert_int_equal(csrf_origin_parse(u, big, &o), CSRF_MALFORMED);
	free(u);

	assert_int_equal(csrf_origin_parse("https://a", 9, NULL), CSRF_ERR_ARG);
	assert_int_equal(csrf_origin_parse(NULL, 9, &o), CSRF_ERR_ARG);
	assert_int_equal(csrf_origin_parse(NULL, 0, &o), CSRF_MALFORMED);
	assert_int_equal(csrf_url_origin("https://a", 9, NULL), CSRF_ERR_ARG);
	assert_int_equal(csrf_url_origin(NULL, 0, &o), CSRF_MALFORMED);
}

typedef struct {
	const char *a, *b;
	int equal;
} eq_row;

static const eq_row eq_rows[] = {
    {"https://a.example", "https://a.example", 1},
    {"https://a.example", "https://a.example:443", 1},
    {"http://a.example:80", "http://a.example", 1},
    {"HTTPS://A.EXAMPLE", "https://a.example", 1},
    {"https://[::1]", "https://[0:0:0:0:0:0:0:1]:443", 1},
    {"https://a.example", "http://a.example", 0},
    {"https://a.example", "https://a.example:8443", 0},
    {"http://a.example:443", "https://a.example", 0},
    {"https://a.example", "https://b.example", 0},
    {"https://a.example", "https://sub.a.example", 0},
    {"https://a.example", "https://a.example.", 1},
    {"http://127.0.0.1:8080", "http://127.0.0.1:8081", 0},
    {"http://127.0.0.1", "http://localhost", 0},
    /* the spellings of issue 23 (a final dot is the same DNS host) */
    {"http://wiki.lan.:8080", "http://WIKI.LAN:8080", 1},
    {"http://wiki.lan.:8080", "http://wiki.lan.:8081", 0},
    {"http://[::1]:8080", "http://[::2]:8080", 0},
    {"http://[::1]:80", "http://[::1]", 1},
    {"http://[::ffff:127.0.0.1]", "http://127.0.0.1", 0},
    /* as browsers serialise IPv6 (the URL standard: hex pieces only, the
     * longest zero run compressed) next to what an operator may write */
    {"http://[::ffff:7f00:1]:8080", "http://[::ffff:127.0.0.1]:8080", 1},
    {"http://[2001:db8::1:0:0:1]", "http://[2001:DB8:0:0:1::1]", 1},
    {"http://[2001:db8:0:1:1:1:1:1]", "http://[2001:db8::1:1:1:1:1]", 1},
    {"http://[::ffff:7f00:1]", "http://[::ffff:7f00:2]", 0},
    {"http://xn--pple-43d.test", "http://apple.test", 0},
    {"http://XN--BCHER-KVA.test", "http://xn--bcher-kva.test", 1},
    {"http://victim.test", "http://victim.test.evil.test", 0},
};

static void test_equal(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof eq_rows / sizeof eq_rows[0]; i++) {
		csrf_origin a, b;
		assert_int_equal(csrf_origin_parse(eq_rows[i].a, strlen(eq_rows[i].a), &a), CSRF_OK);
		assert_int_equal(csrf_origin_parse(eq_rows[i].b, strlen(eq_rows[i].b), &b), CSRF_OK);
		if (csrf_origin_equal(&a, &b) != eq_rows[i].equal || csrf_origin_equal(&b, &a) != eq_rows[i].equal)
			fail_msg("equal row %zu: wrong answer", i);
		assert_true(csrf_origin_equal(&a, &a));
	}
	csrf_origin a;
	assert_int_equal(csrf_origin_parse("https://a", 9, &a), CSRF_OK);
	assert_false(csrf_origin_equal(&a, NULL));
	assert_false(csrf_origin_equal(NULL, &a));
}

/* Random strings from origin pieces: any accepted origin re-serialises
 * to a string that parses to the same origin, and looks like one. */
static uint64_t rng_state = 0x2545f4914f6cdd1du;

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
	static const char *const atoms[] = {"http",    "https", "://", "HTTP", "a", "B",     ".",   "-",
	                                    ":",       "8080",  "0",   "[",    "]", "::1",   "@",   "/",
	                                    "1.2.3.4", "%",     " ",   "?",    "#", "ffff:", "443", "x"};
	char b[128];
	int ok = 0;
	for (int iter = 0; iter < 50000; iter++) {
		size_t n = 0;
		if (rnd(4)) {
			const char *pre = rnd(2) ? "https://" : "http://";
			n = strlen(pre);
			memcpy(b, pre, n);
		}
		for (uint32_t k = rnd(8); k > 0; k--) {
			const char *a = atoms[rnd(sizeof atoms / sizeof atoms[0])];
			size_t l = strlen(a);
			if (n + l > sizeof b)
				break;
			memcpy(b + n, a, l);
			n += l;
		}
		for (int url = 0; url < 2; url++) {
			char *base, *g = guard(b, n, &base);
			csrf_origin o;
			csrf_reason rc = url ? csrf_url_origin(g, n, &o) : csrf_origin_parse(g, n, &o);
			tu_guard_free(base);
			if (rc == CSRF_MALFORMED)
				continue;
			if (rc != CSRF_OK)
				fail_msg("iteration %d: code %d", iter, rc);
			ok++;
			if ((strcmp(o.scheme, "http") != 0 && strcmp(o.scheme, "https") != 0) || o.port == 0 ||
			    !o.host[0])
				fail_msg("iteration %d: odd origin", iter);
			for (const char *h = o.host; *h; h++)
				if (!((*h >= 'a' && *h <= 'z') || (*h >= '0' && *h <= '9') || strchr(".-[]:", *h)))
					fail_msg("iteration %d: odd host", iter);
			char ser[300];
			int k = snprintf(ser, sizeof ser, "%s://%s:%u", o.scheme, o.host, o.port);
			csrf_origin again;
			assert_true(k > 0 && (size_t)k < sizeof ser);
			if (csrf_origin_parse(ser, (size_t)k, &again) != CSRF_OK || !csrf_origin_equal(&o, &again))
				fail_msg("iteration %d: does not round-trip", iter);
		}
	}
	assert_true(ok > 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_origin_parse), cmocka_unit_test(test_url_origin), cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_equal),        cmocka_unit_test(test_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
