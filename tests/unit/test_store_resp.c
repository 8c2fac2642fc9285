/* SPDX-License-Identifier: BSD-2-Clause */
/* test_store_resp.c - src/session/store_resp.c: the Redis store's check of a
 * reply as it arrives. Each row is fed whole, in every split into two
 * pieces and a byte at a time, flush against an unreadable page: a good
 * reply completes at its last byte and not before, a refused one is
 * refused with its reason however it is cut. Then the limits at their
 * edges: the largest string, the deepest array, the widest array. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "session/session_internal.h"
#include "testutil.h"

#define ROW(text, want, why)                                                                                           \
	{                                                                                                              \
		text, sizeof(text) - 1, want, why                                                                      \
	}

static const struct {
	const char *text;
	size_t len;
	int want;        /* 1 complete, -1 refused */
	const char *why; /* a part of the reason when refused */
} rows[] = {
    /* what the store reads */
    ROW("+OK\r\n", 1, NULL), ROW("+PONG\r\n", 1, NULL), ROW("+\r\n", 1, NULL),
    ROW("-ERR wrong number of arguments\r\n", 1, NULL),
    ROW("-READONLY You can't write against a read only replica.\r\n", 1, NULL), ROW(":0\r\n", 1, NULL),
    ROW(":-42\r\n", 1, NULL), ROW(":9223372036854775\r\n", 1, NULL), ROW("$-1\r\n", 1, NULL),
    ROW("$0\r\n\r\n", 1, NULL), ROW("$5\r\nhello\r\n", 1, NULL),
    ROW("$4\r\n\r\n\r\n\r\n", 1, NULL), /* CRLF inside a string is data */
    ROW("$3\r\n\0\1\2\r\n", 1, NULL), ROW("*-1\r\n", 1, NULL), ROW("*0\r\n", 1, NULL),
    ROW("*2\r\n$16\r\nmaxmemory-policy\r\n$10\r\nnoeviction\r\n", 1, NULL),
    ROW("*2\r\n$9\r\n127.0.0.1\r\n$4\r\n6379\r\n", 1, NULL),
    ROW("*3\r\n$6\r\nmaster\r\n:3129659\r\n*2\r\n*3\r\n$9\r\n127.0.0.1\r\n$4\r\n9001\r\n$7\r\n3129242\r\n*3\r\n$"
        "9\r\n127.0.0.1\r\n$4\r\n9002\r\n$7\r\n3129242\r\n",
        1, NULL),
    ROW("*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n", 1, NULL),
    ROW("*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:6380\r\n$9\r\nconnected\r\n:3167038\r\n", 1, NULL),
    ROW("*2\r\n$-1\r\n*-1\r\n", 1, NULL),
    /* refused */
    ROW("_\r\n", -1, "not a RESP2 reply"), ROW("%1\r\n", -1, "not a RESP2 reply"),
    ROW("OK\r\n", -1, "not a RESP2 reply"), ROW("\r\n", -1, "not a RESP2 reply"), ROW("+OK\n", -1, "CRLF"),
    ROW("+OK\rX", -1, "CRLF"), ROW(":\r\n", -1, "malformed number"), ROW(":-\r\n", -1, "malformed number"),
    ROW(":1x\r\n", -1, "malformed number"), ROW(":--1\r\n", -1, "malformed number"),
    ROW(":1234567890123456789\r\n", -1, "malformed number"), ROW("$\r\n", -1, "malformed length"),
    ROW("$-2\r\n", -1, "malformed length"), ROW("$-0\r\n", -1, "malformed length"),
    ROW("$ 5\r\nhello\r\n", -1, "malformed number"), ROW("$5\r\nhelloX\r\n", -1, "longer than its length"),
    ROW("$5\r\nhello\rX", -1, "longer than its length"), ROW("*-2\r\n", -1, "malformed length"),
    ROW("*1\r\n:1\r\n:2\r\n", -1, "bytes after the reply"), ROW("+OK\r\n+OK\r\n", -1, "bytes after the reply"),
    ROW("$500000000\r\n", -1, "a string of 500000000 bytes"), ROW("$16383\r\n", -1, "a string of 16383 bytes"),
    ROW("*1000000\r\n", -1, "an array of 1000000 elements"),
    ROW("*2147483647\r\n", -1, "an array of 2147483647 elements"),
    ROW("*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", -1, "nested deeper than 3"),
    ROW("*2\r\n*5456\r\n", -1, "an array of 5456 elements"), /* alone it would pass */
};

/* Feeds text cut at the given offsets (ascending, in (0, len)), every
 * piece, as a connection would: -1 when a piece was refused, else 1 when
 * one completed the reply, else 0; *at the bytes fed when it completed
 * or was refused. A piece after the reply's end is refused. */
static int feed_cut(const char *text, size_t len, const size_t *cuts, size_t n_cuts, csrfi_resp_scan *s, size_t *at)
{
	size_t from = 0;
	int r = 0;

	csrfi_resp_scan_init(s);
	*at = 0;
	for (size_t k = 0; k <= n_cuts && r >= 0; k++) {
		size_t to = k < n_cuts ? cuts[k] : len;
		char *piece = tu_guard_copy(text + from, to - from);
		int got = csrfi_resp_scan_feed(s, piece, to - from);
		tu_guard_free(piece);
		if (got != 0 && r == 0)
			*at = to;
		if (got != 0)
			r = got;
		from = to;
	}
	return r;
}

static void check_row(size_t i, int r, const csrfi_resp_scan *s, const char *how)
{
	if (r != rows[i].want)
		fail_msg("row %zu (%s): answered %d, want %d (%s)", i, how, r, rows[i].want, s->why);
	if (rows[i].why && !strstr(s->why, rows[i].why))
		fail_msg("row %zu (%s): reason \"%s\", want \"%s\"", i, how, s->why, rows[i].why);
}

static void test_rows(void **state)
{
	(void)state;
	csrfi_resp_scan s;
	size_t at;

	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const char *t = rows[i].text;
		size_t len = rows[i].len;

		check_row(i, feed_cut(t, len, NULL, 0, &s, &at), &s, "whole");
		/* every proper prefix of a good reply wants more */
		for (size_t p = 0; p < len && rows[i].want == 1; p++) {
			size_t at2;
			if (feed_cut(t, p, NULL, 0, &s, &at2) != 0)
				fail_msg("row %zu: a prefix of %zu bytes was not incomplete (%s)", i, p, s.why);
		}
		/* two pieces, cut anywhere */
		for (size_t c = 1; c < len; c++)
			check_row(i, feed_cut(t, len, &c, 1, &s, &at), &s, "two pieces");
		/* a byte at a time: a good reply completes at its last byte */
		size_t cuts[256];
		assert_true(len <= 256);
		for (size_t c = 1; c < len; c++)
			cuts[c - 1] = c;
		check_row(i, feed_cut(t, len, cuts, len - 1, &s, &at), &s, "bytes");
		if (rows[i].want == 1)
			assert_int_equal(at, len);
		/* nothing is taken after the end or a refusal */
		assert_int_equal(csrfi_resp_scan_feed(&s, "+", 1), -1);
		assert_int_equal(csrfi_resp_scan_feed(&s, "", 0), 0);
	}
}

/* One reply built in buf: "$n\r\n" and n bytes of x, "\r\n". */
static size_t bulk(char *buf, size_t n)
{
	int h = snprintf(buf, 32, "$%zu\r\n", n);
	memset(buf + h, 'x', n);
	memcpy(buf + h + n, "\r\n", 2);
	return (size_t)h + n + 2;
}

static void test_limits(void **state)
{
	(void)state;
	static char buf[CSRF_RESP_REPLY_MAX + 64];
	csrfi_resp_scan s;
	size_t len;

	/* the largest value the store writes, and the largest string at all */
	len = bulk(buf, CSRF_STORE_VAL_MAX);
	csrfi_resp_scan_init(&s);
	assert_int_equal(csrfi_resp_scan_feed(&s, buf, len), 1);
	len = bulk(buf, CSRF_RESP_REPLY_MAX - 8); /* "$16376\r\n" is 8 bytes, +2 for CRLF: 16386 */
	csrfi_resp_scan_init(&s);
	assert_int_equal(csrfi_resp_scan_feed(&s, buf, len), -1);
	assert_non_null(strstr(s.why, "a string of 16376 bytes, more than 16384 bytes"));
	len = bulk(buf, CSRF_RESP_REPLY_MAX - 10); /* 8 + 16374 + 2 = 16384 exactly */
	assert_int_equal(len, CSRF_RESP_REPLY_MAX);
	csrfi_resp_scan_init(&s);
	assert_int_equal(csrfi_resp_scan_feed(&s, buf, len), 1);

	/* a status line without end: refused at the limit, not later */
	buf[0] = '+';
	memset(buf + 1, 'a', sizeof buf - 1);
	csrfi_resp_scan_init(&s);
	assert_int_equal(csrfi_resp_scan_feed(&s, buf, CSRF_RESP_REPLY_MAX), 0);
	assert_int_equal(csrfi_resp_scan_feed(&s, buf, 1), -1);
	assert_non_null(strstr(s.why, "more than 16384 bytes"));

	/* three levels (ROLE) pass, a fourth does not */
	csrfi_resp_scan_init(&s);
	assert_int_equal(csrfi_resp_scan_feed(&s, "*1\r\n*1\r\n*1\r\n:1\r\n", 16), 1);

	/* the widest array: as many elements as the rest can hold */
	size_t room = (CSRF_RESP_REPLY_MAX - 8) / 3; /* after "*NNNN\r\n" ... */
	int h = snprintf(buf, 32, "*%zu\r\n", room);
	room = (CSRF_RESP_REPLY_MAX - (size_t)h) / 3;
	h = snprintf(buf, 32, "*%zu\r\n", room);
	len = (size_t)h;
	for (size_t k = 0; k < room; k++) {
		memcpy(buf + len, "+\r\n", 3);
		len += 3;
	}
	assert_true(len <= CSRF_RESP_REPLY_MAX);
	csrfi_resp_scan_init(&s);
	assert_int_equal(csrfi_resp_scan_feed(&s, buf, len), 1);
	h = snprintf(buf, 32, "*%zu\r\n", room + 1);
	csrfi_resp_scan_init(&s);
	assert_int_equal(csrfi_resp_scan_feed(&s, buf, (size_t)h), -1);
	assert_non_null(strstr(s.why, "elements"));
	/* elements already announced count against nested arrays */
	csrfi_resp_scan_init(&s);
	h = snprintf(buf, 64, "*%zu\r\n*%zu\r\n", room / 2, room / 2 + 10);
	assert_int_equal(csrfi_resp_scan_feed(&s, buf, (size_t)h), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rows),
	    cmocka_unit_test(test_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
