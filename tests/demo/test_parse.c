/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_parse.c - unit tests of demo/parse.c: table-driven, every input also
 * placed flush against an unreadable page and cut at every length, plus
 * malformed and oversized input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <cmocka.h>

#include "demo.h"
#include "testutil.h"

/* ---- UTF-8 ---- */

static const struct {
	const char *in;
	size_t len;
	int ok;
} utf8_rows[] = {
    {"", 0, 1},
    {"plain ascii", 11, 1},
    {"tab\tcr\rlf\n", 10, 1},
    {"caf\xc3\xa9", 5, 1},
    {"\xe2\x82\xac euro", 8, 1},
    {"\xf0\x9f\x98\x80", 4, 1},
    {"\xf4\x8f\xbf\xbf", 4, 1}, /* U+10FFFF */
    {"\xff", 1, 0},             /* never valid */
    {"\xc3\x28", 2, 0},         /* bad continuation */
    {"\xc0\xaf", 2, 0},         /* overlong '/' */
    {"\xe0\x80\xaf", 3, 0},     /* overlong */
    {"\xf0\x80\x80\xaf", 4, 0}, /* overlong */
    {"\xed\xa0\x80", 3, 0},     /* surrogate */
    {"\xf4\x90\x80\x80", 4, 0}, /* past U+10FFFF */
    {"\xf5\x80\x80\x80", 4, 0},
    {"\x80", 1, 0}, /* lone continuation */
    {"a\0b", 3, 0}, /* NUL */
    {"\x01", 1, 0},
    {"\x7f", 1, 0},
    {"\x1b[31m", 5, 0}, /* terminal escape */
};

static void test_utf8(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof utf8_rows / sizeof utf8_rows[0]; i++) {
		const char *in = utf8_rows[i].in;
		size_t n = utf8_rows[i].len;
		char *g = tu_guard_copy(in, n);
		assert_int_equal(demo_utf8_ok(g, n), utf8_rows[i].ok);
		tu_guard_free(g);
		/* Prefixes of a valid string are valid exactly when the cut falls
		 * on a character boundary. */
		for (size_t k = 0; k < n; k++) {
			g = tu_guard_copy(in, k);
			int r = demo_utf8_ok(g, k);
			if (utf8_rows[i].ok)
				assert_int_equal(r, ((unsigned char)in[k] & 0xc0) != 0x80);
			tu_guard_free(g);
		}
	}
	/* Oversized: 1 MiB of valid text, then one bad byte at its end. */
	size_t big = 1 << 20;
	char *b = malloc(big);
	assert_non_null(b);
	memset(b, 'x', big);
	char *g = tu_guard_copy(b, big);
	assert_int_equal(demo_utf8_ok(g, big), 1);
	tu_guard_free(g);
	b[big - 1] = (char)0xe2;
	g = tu_guard_copy(b, big);
	assert_int_equal(demo_utf8_ok(g, big), 0);
	tu_guard_free(g);
	free(b);
}

/* ---- positive integers ---- */

static const struct {
	const char *in;
	int64_t max;
	int ok;
	int64_t value;
} pos_rows[] = {
    {"1", 10, 1, 1},
    {"10", 10, 1, 10},
    {"11", 10, 0, 0},
    {"999999999999", INT64_MAX, 1, 999999999999LL},
    {"9999999999999", INT64_MAX, 0, 0}, /* 13 digits */
    {"0", 10, 0, 0},
    {"01", 10, 0, 0},
    {"", 10, 0, 0},
    {"-1", 10, 0, 0},
    {"+1", 10, 0, 0},
    {" 1", 10, 0, 0},
    {"1 ", 10, 0, 0},
    {"1e3", 5000, 0, 0},
    {"0x10", 100, 0, 0},
    {"1.5", 10, 0, 0},
    {"\xd9\xa1", 10, 0, 0}, /* an Arabic-Indic digit one */
};

static void test_positive(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof pos_rows / sizeof pos_rows[0]; i++) {
		size_t n = strlen(pos_rows[i].in);
		char *g = tu_guard_copy(pos_rows[i].in, n);
		int64_t v = -7;
		int r = demo_parse_positive(g, n, pos_rows[i].max, &v);
		assert_int_equal(r, pos_rows[i].ok ? 0 : -1);
		assert_true(pos_rows[i].ok ? v == pos_rows[i].value : v == -7);
		tu_guard_free(g);
	}
	/* Every prefix of "123456": each non-empty one is its own number. */
	const char *s = "123456";
	int64_t want = 0;
	for (size_t k = 0; k <= strlen(s); k++) {
		char *g = tu_guard_copy(s, k);
		int64_t v = 0;
		int r = demo_parse_positive(g, k, INT64_MAX, &v);
		if (k == 0) {
			assert_int_equal(r, -1);
		} else {
			want = want * 10 + (s[k - 1] - '0');
			assert_int_equal(r, 0);
			assert_true(v == want);
		}
		tu_guard_free(g);
	}
}

/* ---- --listen ---- */

static const struct {
	const char *in;
	const char *origin; /* NULL: rejected */
	uint16_t port;
} listen_rows[] = {
    {"127.0.0.1:8080", "http://127.0.0.1:8080", 8080},
    {"1.2.3.4:1", "http://1.2.3.4:1", 1},
    {"0.0.0.0:65535", "http://0.0.0.0:65535", 65535},
    {"127.0.0.1:0", NULL, 0},
    {"127.0.0.1:65536", NULL, 0},
    {"127.0.0.1:999999", NULL, 0},
    {"127.0.0.1:", NULL, 0},
    {":8080", NULL, 0},
    {"127.0.0.1", NULL, 0},
    {"localhost:8080", NULL, 0},
    {"127.0.0.1:80x", NULL, 0},
    {"127.0.0.1:-80", NULL, 0},
    {"[::1]:8080", NULL, 0},
    {"127.0.0.1.5:80", NULL, 0},
    {"127.0.0.1:8080:9", NULL, 0},
    {"127.0.0.1:08080", NULL, 0}, /* a leading zero: no strict decimal */
    {"127.0.0.1:+80", NULL, 0},
    {"127.0.0.1: 80", NULL, 0},
    {"", NULL, 0},
};

static void test_listen(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof listen_rows / sizeof listen_rows[0]; i++) {
		size_t n = strlen(listen_rows[i].in);
		char *g = tu_guard_copy(listen_rows[i].in, n);
		struct sockaddr_in sa;
		char origin[80] = "";
		int r = demo_parse_listen(g, n, &sa, origin, sizeof origin);
		if (listen_rows[i].origin) {
			assert_int_equal(r, 0);
			assert_string_equal(origin, listen_rows[i].origin);
			assert_int_equal(ntohs(sa.sin_port), listen_rows[i].port);
		} else {
			assert_int_equal(r, -1);
		}
		tu_guard_free(g);
	}
	/* Prefixes of "127.0.0.1:8080": only those with a port digit parse. */
	const char *s = "127.0.0.1:8080";
	for (size_t k = 0; k <= strlen(s); k++) {
		char *g = tu_guard_copy(s, k);
		struct sockaddr_in sa;
		char origin[80];
		assert_int_equal(demo_parse_listen(g, k, &sa, origin, sizeof origin), k > 10 ? 0 : -1);
		tu_guard_free(g);
	}
	/* An origin buffer too small is an error, not a truncated origin. */
	struct sockaddr_in sa;
	char small[10];
	assert_int_equal(demo_parse_listen(s, strlen(s), &sa, small, sizeof small), -1);
}

/* ---- session ids and records ---- */

static void test_sid(void **state)
{
	(void)state;
	char sid[DEMO_SID_LEN + 2];
	memset(sid, 'a', sizeof sid);
	memcpy(sid, "0123456789abcdef", 16);
	for (size_t k = 0; k <= DEMO_SID_LEN + 1; k++) {
		char *g = tu_guard_copy(sid, k);
		assert_int_equal(demo_sid_ok(g, k), k == DEMO_SID_LEN);
		tu_guard_free(g);
	}
	sid[5] = 'A';
	assert_int_equal(demo_sid_ok(sid, DEMO_SID_LEN), 0);
	sid[5] = 'g';
	assert_int_equal(demo_sid_ok(sid, DEMO_SID_LEN), 0);
	sid[5] = '\0';
	assert_int_equal(demo_sid_ok(sid, DEMO_SID_LEN), 0);
}

static void fill_session(demo_session *s, const char *user, int64_t uid, int64_t row)
{
	memset(s, 0, sizeof *s);
	snprintf(s->user, sizeof s->user, "%s", user);
	s->user_id = uid;
	s->row = row;
	for (size_t i = 0; i < CSRF_SECRET_LEN; i++)
		s->secret[i] = (uint8_t)(i * 37 + 11);
}

static void test_record_roundtrip(void **state)
{
	(void)state;
	static const struct {
		const char *user;
		int64_t uid, row;
	} rows[] = {{"alice", 1, 7}, {"", 0, 0}, {"mallory", 3, 123456789012LL}};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		demo_session s, back;
		char rec[256];
		fill_session(&s, rows[i].user, rows[i].uid, rows[i].row);
		int n = demo_record_format(&s, rec, sizeof rec);
		assert_true(n > 0);
		char *g = tu_guard_copy(rec, (size_t)n);
		memset(&back, 0x55, sizeof back);
		assert_int_equal(demo_record_parse(g, (size_t)n, &back), 0);
		assert_string_equal(back.user, rows[i].user);
		assert_true(back.user_id == rows[i].uid && back.row == rows[i].row);
		assert_memory_equal(back.secret, s.secret, CSRF_SECRET_LEN);
		tu_guard_free(g);
		/* Every proper prefix is incomplete and must fail. */
		for (size_t k = 0; k < (size_t)n; k++) {
			g = tu_guard_copy(rec, k);
			assert_int_equal(demo_record_parse(g, k, &back), -1);
			tu_guard_free(g);
		}
		/* A buffer one short of the record: an error, nothing partial. */
		char small[256];
		assert_int_equal(demo_record_format(&s, small, (size_t)n), -1);
	}
	demo_session bad;
	char rec[256];
	fill_session(&bad, "Alice Smith", 1, 1);
	assert_int_equal(demo_record_format(&bad, rec, sizeof rec), -1);
}

static const char *const bad_records[] = {
    "",
    "v1",
    "v2 1 1 alice 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
    "v1 x 1 alice 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
    "v1 1 -1 alice 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
    "v1 1 1 Alice 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
    "v1 1 1 al\xc3\xa9 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
    "v1 1 1 alice 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1",
    "v1 1 1 alice 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f00",
    "v1 1 1 alice 000102030405060708090A0B0C0D0E0F101112131415161718191a1b1c1d1e1f",
    "v1 1 1 alice 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f extra",
    "v1 1234567890123456789 1 alice 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
    "v1 1 1 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
};

static void test_record_malformed(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof bad_records / sizeof bad_records[0]; i++) {
		size_t n = strlen(bad_records[i]);
		char *g = tu_guard_copy(bad_records[i], n);
		demo_session s;
		memset(&s, 0x55, sizeof s);
		assert_int_equal(demo_record_parse(g, n, &s), -1);
		for (size_t k = 0; k < CSRF_SECRET_LEN; k++)
			assert_int_equal(s.secret[k], 0); /* wiped on failure */
		tu_guard_free(g);
	}
	/* Oversized garbage. */
	size_t big = 100000;
	char *b = malloc(big);
	assert_non_null(b);
	memset(b, '1', big);
	char *g = tu_guard_copy(b, big);
	demo_session s;
	assert_int_equal(demo_record_parse(g, big, &s), -1);
	tu_guard_free(g);
	free(b);
}

/* ---- log values ---- */

static const struct {
	const char *in;
	size_t len;
	int url;
	size_t cap;
	const char *out;
} logv_rows[] = {
    {"http://127.0.0.1:8081", 21, 0, 64, "http://127.0.0.1:8081"},
    {"http://a.example/p?token=secret", 31, 1, 64, "http://a.example/p"},
    {"http://a.example/p#frag?x", 25, 1, 64, "http://a.example/p"},
    {"text/plain?x", 12, 0, 64, "text/plain?x"}, /* not a URL: kept */
    {"a b\tc\x1b[31m\x7f\xc3\xa9", 13, 0, 64, "a?b?c?[31m???"},
    {"a\0b", 3, 0, 64, "a?b"},
    {"abcdef", 6, 0, 4, "abc"}, /* cut to cap - 1 */
    {"", 0, 1, 64, ""},
    {"?query-only", 11, 1, 64, ""},
};

static void test_log_value(void **state)
{
	(void)state;
	char out[64];
	for (size_t i = 0; i < sizeof logv_rows / sizeof logv_rows[0]; i++) {
		size_t n = logv_rows[i].len;
		char *g = tu_guard_copy(logv_rows[i].in, n);
		memset(out, 'X', sizeof out);
		size_t got = demo_log_value(g, n, logv_rows[i].url, out, logv_rows[i].cap);
		assert_string_equal(out, logv_rows[i].out);
		assert_int_equal(got, strlen(logv_rows[i].out));
		/* Every prefix is read inside its bounds and never grows. */
		for (size_t k = 0; k < n; k++) {
			char *h = tu_guard_copy(logv_rows[i].in, k);
			assert_true(demo_log_value(h, k, logv_rows[i].url, out, logv_rows[i].cap) <= got);
			tu_guard_free(h);
		}
		tu_guard_free(g);
	}
	/* Absent: "-". */
	assert_int_equal(demo_log_value(NULL, 0, 0, out, 2), 1);
	assert_string_equal(out, "-");
	/* Oversized: cut, never past the buffer. */
	size_t big = 100000;
	char *b = malloc(big);
	assert_non_null(b);
	memset(b, 'a', big);
	char *g = tu_guard_copy(b, big);
	assert_int_equal(demo_log_value(g, big, 1, out, sizeof out), sizeof out - 1);
	assert_int_equal(strlen(out), sizeof out - 1);
	tu_guard_free(g);
	free(b);
}

/* ---- the login throttle's client key ---- */

static const struct {
	const char *in;
	size_t len; /* 0: strlen */
	const char *key;
} client_rows[] = {
    {"127.0.0.1", 0, "ip4:127.0.0.1"},
    {"203.0.113.7", 0, "ip4:203.0.113.7"},
    /* one /64, one key, whatever the interface id */
    {"2001:db8:1:2:3:4:5:6", 0, "ip6:2001:db8:1:2::/64"},
    {"2001:db8:1:2::ffff", 0, "ip6:2001:db8:1:2::/64"},
    {"2001:DB8:1:2::1", 0, "ip6:2001:db8:1:2::/64"},
    {"2001:db8:1:3::1", 0, "ip6:2001:db8:1:3::/64"},
    {"::1", 0, "ip6:::/64"},
    /* IPv4-mapped: the IPv4 client it is */
    {"::ffff:192.0.2.1", 0, "ip4:192.0.2.1"},
    {"::ffff:c000:201", 0, "ip4:192.0.2.1"},
    /* link-local: the link's /64, per zone */
    {"fe80::1%eth0", 0, "ip6:fe80::/64%eth0"},
    {"fe80::a:b:c:d%eth0", 0, "ip6:fe80::/64%eth0"},
    {"fe80::1%eth1", 0, "ip6:fe80::/64%eth1"},
    {"fe80::1%3", 0, "ip6:fe80::/64%3"},
    {"fe80::1", 0, "ip6:fe80::/64"},
    {"2001:db8::1%eth0", 0, "ip6:2001:db8::/64"}, /* a zone on a global address adds nothing */
    /* garbage: one shared key */
    {"", 0, "unknown"},
    {"garbage", 0, "unknown"},
    {"1.2.3", 0, "unknown"},
    {"1.2.3.256", 0, "unknown"},
    {"1.2.3.4 ", 0, "unknown"},
    {" 1.2.3.4", 0, "unknown"},
    {"1.2.3.4\0"
     "9",
     9, "unknown"}, /* a NUL inside */
    {"2001:db8::1::2", 0, "unknown"},
    {"2001:db8:1:2:3:4:5:6:7", 0, "unknown"},
    {"[2001:db8::1]", 0, "unknown"},
    {"192.0.2.1%eth0", 0, "unknown"},           /* a zone on IPv4 */
    {"::ffff:192.0.2.1%eth0", 0, "unknown"},    /* and on a mapped one */
    {"fe80::1%", 0, "unknown"},                 /* an empty zone */
    {"fe80::1%eth0%eth1", 0, "unknown"},        /* two */
    {"fe80::1%eth/0", 0, "unknown"},            /* not a name */
    {"fe80::1%eth0\n", 0, "unknown"},           /* a line break for the log */
    {"fe80::1%abcdefghijklmnop", 0, "unknown"}, /* longer than an interface name */
    {"%eth0", 0, "unknown"},
    {"1111:2222:3333:4444:5555:6666:7777:8888:9999:aaaa", 0, "unknown"}, /* longer than any address */
};

static void test_client_key(void **state)
{
	char out[DEMO_CLIENT_KEY_MAX];
	(void)state;
	for (size_t i = 0; i < sizeof client_rows / sizeof client_rows[0]; i++) {
		const char *in = client_rows[i].in;
		size_t n = client_rows[i].len ? client_rows[i].len : strlen(in);
		char *g = tu_guard_copy(in, n);
		size_t k = demo_client_key(g, n, out, sizeof out);
		assert_string_equal(out, client_rows[i].key);
		assert_int_equal(k, strlen(client_rows[i].key));
		/* every prefix: a key or "unknown", never past the input */
		for (size_t cut = 0; cut < n; cut++) {
			char *p = tu_guard_copy(in, cut);
			k = demo_client_key(p, cut, out, sizeof out);
			assert_true(k > 0 && k == strlen(out));
			assert_true(strncmp(out, "ip4:", 4) == 0 || strncmp(out, "ip6:", 4) == 0 ||
			            strcmp(out, "unknown") == 0);
			tu_guard_free(p);
		}
		tu_guard_free(g);
	}
	/* the longest key (a link-local /64 with the longest zone) fits */
	const char *longest = "fe80:ffff:ffff:ffff:1:2:3:4%abcdefghijklmno";
	assert_int_equal(demo_client_key(longest, strlen(longest), out, sizeof out),
	                 strlen("ip6:fe80:ffff:ffff:ffff::/64%abcdefghijklmno"));
	/* no address at all, and a buffer below the documented size */
	assert_int_equal(demo_client_key(NULL, 0, out, sizeof out), 7);
	assert_string_equal(out, "unknown");
	assert_int_equal(demo_client_key("127.0.0.1", 9, out, DEMO_CLIENT_KEY_MAX - 1), 0);
	assert_int_equal(demo_client_key("127.0.0.1", 9, NULL, sizeof out), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_utf8),
	    cmocka_unit_test(test_positive),
	    cmocka_unit_test(test_listen),
	    cmocka_unit_test(test_sid),
	    cmocka_unit_test(test_record_roundtrip),
	    cmocka_unit_test(test_record_malformed),
	    cmocka_unit_test(test_log_value),
	    cmocka_unit_test(test_client_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
