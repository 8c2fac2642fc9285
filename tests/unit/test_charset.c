/* SPDX-License-Identifier: BSD-2-Clause */
/* test_charset.c - csrf_charset_sniff: which responses the injector may
 * read, from a byte order mark, the Content-Type charset and the <meta>
 * prescan of the first 1024 bytes; when it needs more bytes; every body
 * also judged from a guard-page copy and at every prefix. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "csrf.h"
#include "testutil.h"

enum { I = CSRF_CHARSET_INJECT, P = CSRF_CHARSET_PASS, M = CSRF_CHARSET_MORE };

typedef struct {
	const char *name;
	const char *ct; /* NULL: no Content-Type */
	const char *body;
	int complete;
	int want;
	const char *encoding; /* NULL: none expected */
} row;

#define HTML "<!doctype html><html><head>"
static const row rows[] = {
    /* byte order marks win */
    {"utf-8 bom", "text/html; charset=iso-2022-jp", "\xEF\xBB\xBF<p>", 1, I, "UTF-8"},
    {"utf-16le bom", "text/html; charset=utf-8", "\xFF\xFE<\0p\0", 1, P, "UTF-16LE"},
    {"utf-16be bom", NULL, "\xFE\xFF\0<", 1, P, "UTF-16BE"},
    {"bom cut", "text/html; charset=utf-8", "\xEF\xBB", 0, M, NULL},
    {"bom cut complete", "text/html; charset=utf-8", "\xEF\xBB", 1, I, "UTF-8"},
    {"empty not complete", "text/html; charset=utf-8", "", 0, M, NULL},
    {"empty complete", "text/html; charset=utf-8", "", 1, I, "UTF-8"},
    /* the Content-Type charset */
    {"header utf-8", "text/html; charset=utf-8", "<p>", 0, I, "UTF-8"},
    {"header UTF8 quoted", "text/html;charset=\"UTF8\"", "<p>", 0, I, "UTF-8"},
    {"header latin1", "text/html; charset=ISO-8859-1", "<p>", 0, I, "windows-1252"},
    {"header us-ascii", "text/html; charset=us-ascii", "<p>", 0, I, "windows-1252"},
    {"header koi8-r", "text/html; charset=koi8-r", "<p>", 0, I, "KOI8-R"},
    {"header windows-1251", "text/html; Charset = windows-1251 ", "<p>", 0, I, "windows-1251"},
    {"header iso-8859-15", "text/html; charset=latin9", "<p>", 0, P, NULL}, /* not a WHATWG label */
    {"header l9", "text/html; charset=l9", "<p>", 0, I, "ISO-8859-15"},
    {"header iso-2022-jp", "text/html; charset=iso-2022-jp", "<p>", 0, P, "ISO-2022-JP"},
    {"header iso-2022-kr", "text/html; charset=ISO-2022-KR", "<p>", 0, P, "replacement"},
    {"header utf-16", "text/html; charset=utf-16", "<p>", 0, P, "UTF-16LE"},
    {"header utf-7", "text/html; charset=utf-7", "<p>", 0, P, NULL},
    {"header utf-32", "text/html; charset=utf-32", "<p>", 0, P, NULL},
    {"header shift_jis", "text/html; charset=Shift_JIS", "<p>", 0, P, "Shift_JIS"},
    {"header gbk", "text/html; charset=gb2312", "<p>", 0, P, "GBK"},
    {"header unknown", "text/html; charset=bogus", "<p>", 0, P, NULL},
    {"header empty", "text/html; charset=", "<p>", 0, P, NULL},
    {"header two same", "text/html; charset=utf-8; charset=utf-8", "<p>", 0, I, "UTF-8"},
    {"header two different", "text/html; charset=utf-8; charset=iso-2022-jp", "<p>", 0, P, NULL},
    {"header unterminated quote", "text/html; charset=\"utf-8", "<p>", 0, P, NULL},
    {"header escaped quote", "text/html; charset=\"utf\\-8\"", "<p>", 0, P, NULL},
    {"header other params", "text/html; q=\"a;charset=iso-2022-jp\"; charset=utf-8", "<p>", 0, I, "UTF-8"},
    {"header overrides meta", "text/html; charset=utf-8", "<meta charset=iso-2022-jp>", 0, I, "UTF-8"},
    /* the meta prescan */
    {"meta utf-8", "text/html", HTML "<meta charset=\"utf-8\">", 0, I, "UTF-8"},
    {"meta iso-2022-jp", "text/html", HTML "<meta charset=iso-2022-jp>", 0, P, "ISO-2022-JP"},
    {"meta http-equiv", NULL, HTML "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=ISO-2022-JP\">", 0,
     P, "ISO-2022-JP"},
    {"meta content without pragma", NULL, HTML "<meta content=\"text/html; charset=iso-2022-jp\"><p>", 1, I, NULL},
    {"meta utf-16 is utf-8", NULL, "<meta charset=utf-16>", 0, I, "UTF-8"},
    {"meta x-user-defined", NULL, "<meta charset=x-user-defined>", 0, I, "windows-1252"},
    {"meta unknown then known", NULL, "<meta charset=bogus><meta charset=iso-2022-jp>", 0, P, "ISO-2022-JP"},
    {"meta in comment", NULL, "<!-- <meta charset=iso-2022-jp> --><meta charset=utf-8>", 0, I, "UTF-8"},
    {"meta after short comment", NULL, "<!--><meta charset=iso-2022-jp>", 0, P, "ISO-2022-JP"},
    {"meta in attribute", NULL, "<div title=\"<meta charset=iso-2022-jp>\"><meta charset=utf-8>", 0, I, "UTF-8"},
    {"meta upper case", NULL, "<META CHARSET=ISO-2022-JP>", 0, P, "ISO-2022-JP"},
    {"meta slash", NULL, "<meta/charset=iso-2022-jp>", 0, P, "ISO-2022-JP"},
    {"metas is not meta", NULL, "<metas charset=iso-2022-jp><p>", 1, I, NULL},
    {"meta first charset attr", NULL, "<meta charset=utf-8 charset=iso-2022-jp>", 0, I, "UTF-8"},
    {"meta cut", NULL, "<meta charset=iso-20", 0, M, NULL},
    {"meta cut complete", NULL, "<meta charset=\"iso-20", 1, I, NULL},
    {"no meta, more may come", NULL, HTML "<title>x</title>", 0, M, NULL},
    {"no meta, complete", NULL, HTML "<title>x</title>", 1, I, NULL},
    {"no charset param", "text/html", "<p>", 1, I, NULL},
};

static void check(const row *r, size_t body_len, int complete, int want, const char *encoding)
{
	char *ct = r->ct ? tu_guard_copy(r->ct, strlen(r->ct)) : NULL;
	char *body = tu_guard_copy(r->body, body_len);
	csrf_charset cs;
	assert_int_equal(csrf_charset_sniff(ct, r->ct ? strlen(r->ct) : 0, body, body_len, complete, &cs), CSRF_OK);
	if ((int)cs.verdict != want)
		fail_msg("%s (%zu bytes): verdict %d, want %d", r->name, body_len, cs.verdict, want);
	if (want != M && (encoding == NULL) != (cs.encoding == NULL))
		fail_msg("%s: encoding %s, want %s", r->name, cs.encoding ? cs.encoding : "none",
		         encoding ? encoding : "none");
	if (want != M && encoding && strcmp(encoding, cs.encoding) != 0)
		fail_msg("%s: encoding %s, want %s", r->name, cs.encoding, encoding);
	if (want != M)
		assert_non_null(cs.source);
	if (ct)
		tu_guard_free(ct);
	tu_guard_free(body);
}

static size_t body_len(const row *r)
{
	/* the UTF-16 bodies hold NULs: their length is written out */
	if (strcmp(r->name, "utf-16le bom") == 0)
		return 6;
	if (strcmp(r->name, "utf-16be bom") == 0)
		return 4;
	return strlen(r->body);
}

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		check(&rows[i], body_len(&rows[i]), rows[i].complete, rows[i].want, rows[i].encoding);
}

/* Every prefix of a body is judged without reading past it; complete, a
 * prefix never asks for more. */
static void test_prefixes(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		size_t n = body_len(&rows[i]);
		for (size_t m = 0; m <= n; m++) {
			char *ct = rows[i].ct ? tu_guard_copy(rows[i].ct, strlen(rows[i].ct)) : NULL;
			char *body = tu_guard_copy(rows[i].body, m);
			csrf_charset cs;
			assert_int_equal(csrf_charset_sniff(ct, ct ? strlen(rows[i].ct) : 0, body, m, 1, &cs), CSRF_OK);
			assert_int_not_equal(cs.verdict, CSRF_CHARSET_MORE);
			assert_int_equal(csrf_charset_sniff(ct, ct ? strlen(rows[i].ct) : 0, body, m, 0, &cs), CSRF_OK);
			if (ct)
				tu_guard_free(ct);
			tu_guard_free(body);
		}
	}
}

/* The window is 1024 bytes: a meta past it is not looked for, and 1024
 * bytes are always enough to decide. */
static void test_window(void **state)
{
	(void)state;
	const char *meta = "<meta charset=iso-2022-jp>";
	size_t ml = strlen(meta);
	for (size_t pad = 1000; pad <= 1030; pad++) {
		char *b = malloc(pad + ml);
		assert_non_null(b);
		memset(b, ' ', pad);
		memcpy(b + pad, meta, ml);
		csrf_charset cs;
		assert_int_equal(csrf_charset_sniff(NULL, 0, b, pad + ml, 0, &cs), CSRF_OK);
		if (pad + ml <= CSRF_CHARSET_PRESCAN_MAX)
			assert_int_equal(cs.verdict, CSRF_CHARSET_PASS);
		else /* cut by the window: not seen, nothing more needed */
			assert_int_equal(cs.verdict, CSRF_CHARSET_INJECT);
		free(b);
	}
	char big[CSRF_CHARSET_PRESCAN_MAX];
	memset(big, 'a', sizeof big);
	csrf_charset cs;
	assert_int_equal(csrf_charset_sniff(NULL, 0, big, sizeof big, 0, &cs), CSRF_OK);
	assert_int_equal(cs.verdict, CSRF_CHARSET_INJECT);
	assert_int_equal(csrf_charset_sniff(NULL, 0, big, sizeof big - 1, 0, &cs), CSRF_OK);
	assert_int_equal(cs.verdict, CSRF_CHARSET_MORE);
}

/* A <meta> is found at every offset of the window, in any case and after
 * tags and "<m" that are not one (the window is read 64 bytes at a time
 * for a '<' before an 'm' first, with AVX2); one that starts at the
 * window's last byte or after it is not (one cut by the window's end is
 * test_window's); the window is read flush against an unreadable page. */
static void test_meta_every_offset(void **state)
{
	(void)state;
	static const char *const metas[] = {"<meta charset=iso-2022-jp>", "<META charset=iso-2022-jp>",
	                                    "<mEtA/charset=iso-2022-jp>"};
	static const char *const fills[] = {"<a href=#>x</a>", "<mark>mm</mark>", "text <b>M</b> "};
	enum { LEN = CSRF_CHARSET_PRESCAN_MAX + 64 };
	for (size_t f = 0; f < sizeof fills / sizeof fills[0]; f++)
		for (size_t v = 0; v < sizeof metas / sizeof metas[0]; v++)
			for (size_t k = 0; k + strlen(metas[v]) <= LEN; k++) {
				char b[LEN];
				size_t fl = strlen(fills[f]), ml = strlen(metas[v]), at = 0;
				if (k + ml > CSRF_CHARSET_PRESCAN_MAX && k + 1 < CSRF_CHARSET_PRESCAN_MAX)
					continue; /* cut by the window: test_window */
				/* whole fills, then spaces up to k, the meta, spaces */
				while (at + fl <= k) {
					memcpy(b + at, fills[f], fl);
					at += fl;
				}
				memset(b + at, ' ', LEN - at);
				memcpy(b + k, metas[v], ml);
				row r = {"meta at an offset", NULL, b, 1, 0, NULL};
				int seen = k + ml <= CSRF_CHARSET_PRESCAN_MAX;
				check(&r, LEN, 1, seen ? P : I, seen ? "ISO-2022-JP" : NULL);
				check(&r, k + ml, 1, seen ? P : I, seen ? "ISO-2022-JP" : NULL);
			}
}

static void test_args(void **state)
{
	(void)state;
	csrf_charset cs;
	assert_int_equal(csrf_charset_sniff(NULL, 0, "x", 1, 1, NULL), CSRF_ERR_ARG);
	assert_int_equal(csrf_charset_sniff(NULL, 3, "x", 1, 1, &cs), CSRF_ERR_ARG);
	assert_int_equal(csrf_charset_sniff(NULL, 0, NULL, 1, 1, &cs), CSRF_ERR_ARG);
	assert_int_equal(csrf_charset_sniff(NULL, 0, NULL, 0, 1, &cs), CSRF_OK);
	assert_int_equal(cs.verdict, CSRF_CHARSET_INJECT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),  cmocka_unit_test(test_prefixes),
	    cmocka_unit_test(test_window), cmocka_unit_test(test_meta_every_offset),
	    cmocka_unit_test(test_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
