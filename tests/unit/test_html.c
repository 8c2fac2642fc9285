/* SPDX-License-Identifier: BSD-2-Clause */
/* test_html.c - csrf_html_escape and csrf_html_escape_attr: the escape
 * table, invalid UTF-8 (overlongs, surrogates, > U+10FFFF, truncated),
 * NUL, controls, short buffers, every prefix, guard pages. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "csrf.h"
#include "testutil.h"

typedef struct {
	const char *p;
	size_t n;
} lit;
#define S(x)                                                                                                           \
	{                                                                                                              \
		x, sizeof(x) - 1                                                                                       \
	}
#define FFFD "\xef\xbf\xbd"

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
	lit in;
	const char *text; /* csrf_html_escape */
	const char *attr; /* csrf_html_escape_attr */
} row;

static const row rows[] = {
    {S(""), "", ""},
    {S("plain text"), "plain text", "plain text"},
    {S("&<>\"'"), "&amp;&lt;&gt;&quot;&#39;", "&amp;&lt;&gt;&quot;&#39;"},
    {S("<script>alert('x')</script>"), "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;",
     "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"},
    {S("a=`b`"), "a=`b`", "a&#61;&#96;b&#96;"},
    {S("&amp;"), "&amp;amp;", "&amp;amp;"},
    {S("\" onmouseover=\"x"), "&quot; onmouseover=&quot;x", "&quot; onmouseover&#61;&quot;x"},
    {S("t\tl\nc\r"), "t\tl\nc\r", "t\tl\nc\r"},
    {S("\x01\x08\x0b\x0c\x1f\x7f"), "\x01\x08\x0b\x0c\x1f\x7f", "&#1;&#8;&#11;&#12;&#31;&#127;"},
    {S("a\0b"), "a" FFFD "b", "a" FFFD "b"},
    {S("\0"), FFFD, FFFD},
    /* well-formed UTF-8 passes through, C1 controls included */
    {S("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
     "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
    {S("\xc2\x80\xc2\x9f\xc2\xa0"), "\xc2\x80\xc2\x9f\xc2\xa0", "\xc2\x80\xc2\x9f\xc2\xa0"},
    {S("\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf\xf4\x8f\xbf\xbf"), "\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf\xf4\x8f\xbf\xbf",
     "\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf\xf4\x8f\xbf\xbf"},
    /* overlongs: '<' as C0 BC, '/' as E0 80 AF, F0 80 80 AF */
    {S("\xc0\xbc"), FFFD FFFD, FFFD FFFD},
    {S("\xc1\xbf"), FFFD FFFD, FFFD FFFD},
    {S("\xe0\x80\xaf"), FFFD FFFD FFFD, FFFD FFFD FFFD},
    {S("\xf0\x80\x80\xaf"), FFFD FFFD FFFD FFFD, FFFD FFFD FFFD FFFD},
    /* surrogates */
    {S("\xed\xa0\x80"), FFFD FFFD FFFD, FFFD FFFD FFFD},
    {S("\xed\xbf\xbf"), FFFD FFFD FFFD, FFFD FFFD FFFD},
    /* beyond U+10FFFF, and leads that cannot start anything */
    {S("\xf4\x90\x80\x80"), FFFD FFFD FFFD FFFD, FFFD FFFD FFFD FFFD},
    {S("\xf5\x80\x80\x80"), FFFD FFFD FFFD FFFD, FFFD FFFD FFFD FFFD},
    {S("\xf8\x88\x80\x80\x80"), FFFD FFFD FFFD FFFD FFFD, FFFD FFFD FFFD FFFD FFFD},
    {S("\xfe\xff"), FFFD FFFD, FFFD FFFD},
    /* lone continuation bytes */
    {S("\x80"), FFFD, FFFD},
    {S("a\xbf"
       "b"),
     "a" FFFD "b", "a" FFFD "b"},
    /* truncated sequences: one U+FFFD per maximal subpart */
    {S("\xc3"), FFFD, FFFD},
    {S("\xe2\x82"), FFFD, FFFD},
    {S("\xf0\x9f\x98"), FFFD, FFFD},
    {S("\xe2\x82<"), FFFD "&lt;", FFFD "&lt;"},
    {S("\xf0\x9f\x98\xc3\xa9"), FFFD "\xc3\xa9", FFFD "\xc3\xa9"},
    {S("\xe2\x82\xe2\x82\xac"), FFFD "\xe2\x82\xac", FFFD "\xe2\x82\xac"},
    {S("\xc3\x00"), FFFD FFFD, FFFD FFFD},
};

/* An independent check of the output: valid UTF-8, no NUL, and none of the
 * characters the escaping must remove. */
static int output_ok(const char *s, size_t n, int attr)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		if (c == 0 || c == '<' || c == '>' || c == '"' || c == '\'')
			return 0;
		if (attr && (c == '`' || c == '=' || c == 0x7f || (c < 0x20 && c != '\t' && c != '\n' && c != '\r')))
			return 0;
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t k = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
		if (k == 0 || i + k > n)
			return 0;
		uint32_t cp = c & (0x7f >> k);
		for (size_t j = 1; j < k; j++) {
			if ((p[i + j] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (p[i + j] & 0x3f);
		}
		static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
		if (cp < min[k] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += k;
	}
	return 1;
}

typedef csrf_reason (*escape_fn)(const char *, size_t, char *, size_t, size_t *);

static void check(escape_fn fn, const char *what, size_t i, const char *in, size_t len, const char *want, int attr)
{
	char out[256];
	size_t n = 99;
	memset(out, 'Z', sizeof out);
	csrf_reason rc = fn(in, len, out, sizeof out, &n);
	if (rc != CSRF_OK)
		fail_msg("%s row %zu: code %d", what, i, rc);
	if (n != strlen(want) || memcmp(out, want, n) != 0 || out[n] != '\0')
		fail_msg("%s row %zu: wrong output", what, i);
	if (!output_ok(out, n, attr))
		fail_msg("%s row %zu: output not safe", what, i);
	/* exactly enough room, then every shorter capacity is refused whole */
	assert_int_equal(fn(in, len, out, n + 1, &n), CSRF_OK);
	/* the short buffers sit flush against a guard page: a write past
	 * the capacity crashes */
	for (size_t c = 0; c <= n; c++) {
		size_t m = 99;
		char *base, *o = guard(out, c, &base);
		if (fn(in, len, o, c, &m) != CSRF_ERR_BUFFER)
			fail_msg("%s row %zu cap %zu: short buffer accepted", what, i, c);
		if ((c > 0 && o[0] != '\0') || m != 0)
			fail_msg("%s row %zu cap %zu: partial output", what, i, c);
		tu_guard_free(base);
	}
}

static void test_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const row *r = &rows[i];
		char *base, *g = guard(r->in.p, r->in.n, &base);
		check(csrf_html_escape, "text", i, r->in.p, r->in.n, r->text, 0);
		check(csrf_html_escape, "text", i, g, r->in.n, r->text, 0);
		check(csrf_html_escape_attr, "attr", i, r->in.p, r->in.n, r->attr, 1);
		check(csrf_html_escape_attr, "attr", i, g, r->in.n, r->attr, 1);
		tu_guard_free(base);
	}
}

/* Every prefix, flush against a guard page: always OK and safe output. */
static void test_prefixes(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		for (size_t k = 0; k <= rows[i].in.n; k++) {
			char *base, *g = guard(rows[i].in.p, k, &base);
			for (int attr = 0; attr < 2; attr++) {
				char out[256];
				size_t n;
				escape_fn fn = attr ? csrf_html_escape_attr : csrf_html_escape;
				if (fn(g, k, out, sizeof out, &n) != CSRF_OK || !output_ok(out, n, attr))
					fail_msg("row %zu prefix %zu attr %d: bad result", i, k, attr);
			}
			tu_guard_free(base);
		}
	}
}

/* Every byte value alone and in pairs: the output is always safe, and
 * 6 * len + 1 bytes of buffer always suffice. */
static void test_all_bytes(void **state)
{
	(void)state;
	char in[2], out[16];
	size_t n;
	for (unsigned a = 0; a < 256; a++) {
		for (unsigned b = 0; b < 256; b++) {
			in[0] = (char)a;
			in[1] = (char)b;
			for (int attr = 0; attr < 2; attr++) {
				escape_fn fn = attr ? csrf_html_escape_attr : csrf_html_escape;
				if (fn(in, 2, out, 13, &n) != CSRF_OK || !output_ok(out, n, attr))
					fail_msg("bytes %02x %02x attr %d: bad result", a, b, attr);
				if (fn(in, 1, out, 7, &n) != CSRF_OK || !output_ok(out, n, attr))
					fail_msg("byte %02x attr %d: bad result", a, attr);
			}
		}
	}
	/* each byte at each place of a run of plain bytes (runs are read four
	 * bytes at a time): escaped exactly as alone, the run around it kept */
	for (unsigned a = 0; a < 256; a++) {
		for (int attr = 0; attr < 2; attr++) {
			escape_fn fn = attr ? csrf_html_escape_attr : csrf_html_escape;
			char alone[16], run[9], got[64], want[64];
			size_t k;
			in[0] = (char)a;
			assert_int_equal(fn(in, 1, alone, sizeof alone, &k), CSRF_OK);
			for (int at = 0; at < 9; at++) {
				memset(run, 'a', sizeof run);
				run[at] = (char)a;
				snprintf(want, sizeof want, "%.*s%s%.*s", at, "aaaaaaaaa", alone, 8 - at, "aaaaaaaaa");
				if (fn(run, sizeof run, got, sizeof got, &n) != CSRF_OK || n != strlen(want) ||
				    strcmp(got, want) != 0)
					fail_msg("byte %02x at %d of a run, attr %d: not escaped as alone", a, at,
					         attr);
			}
		}
	}
	/* a 1 MiB run of quotes: exactly 6 * len + 1 */
	size_t len = 1 << 20;
	char *big = malloc(len), *o = malloc(6 * len + 1);
	assert_non_null(big);
	assert_non_null(o);
	memset(big, '"', len);
	assert_int_equal(csrf_html_escape(big, len, o, 6 * len + 1, &n), CSRF_OK);
	assert_int_equal(n, 6 * len);
	assert_int_equal(csrf_html_escape(big, len, o, 6 * len, &n), CSRF_ERR_BUFFER);
	assert_int_equal(o[0], '\0');
	memset(big, 0x7f, len);
	assert_int_equal(csrf_html_escape_attr(big, len, o, 6 * len + 1, &n), CSRF_OK);
	assert_int_equal(n, 6 * len);
	free(big);
	free(o);
}

static void test_args(void **state)
{
	(void)state;
	char out[8];
	size_t n;
	assert_int_equal(csrf_html_escape(NULL, 1, out, sizeof out, &n), CSRF_ERR_ARG);
	assert_int_equal(csrf_html_escape("a", 1, NULL, 8, &n), CSRF_ERR_ARG);
	assert_int_equal(csrf_html_escape_attr(NULL, 1, out, sizeof out, &n), CSRF_ERR_ARG);
	assert_int_equal(csrf_html_escape("a", 1, out, 0, &n), CSRF_ERR_BUFFER);
	assert_int_equal(csrf_html_escape(NULL, 0, out, 1, &n), CSRF_OK);
	assert_int_equal(out[0], '\0');
	assert_int_equal(csrf_html_escape_attr("<", 1, out, sizeof out, NULL), CSRF_OK);
	assert_string_equal(out, "&lt;");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rows),
	    cmocka_unit_test(test_prefixes),
	    cmocka_unit_test(test_all_bytes),
	    cmocka_unit_test(test_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
