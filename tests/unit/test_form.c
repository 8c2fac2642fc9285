/* SPDX-License-Identifier: BSD-2-Clause */
/* test_form.c - urlencoded and multipart field lookup, decoding and the
 * Content-Type dispatch: tables of valid and malformed bodies, every
 * truncated prefix, guard pages, oversized bodies. */
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

/* A literal with its length, so rows may hold NUL bytes. */
typedef struct {
	const char *p;
	size_t n;
} lit;
#define S(x)                                                                                                           \
	{                                                                                                              \
		x, sizeof(x) - 1                                                                                       \
	}
#define NONE                                                                                                           \
	{                                                                                                              \
		NULL, 0                                                                                                \
	}

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

static int slice_is(csrf_slice v, lit want)
{
	return v.len == want.n && (want.n == 0 || memcmp(v.ptr, want.p, want.n) == 0);
}

static int inside(csrf_slice v, const char *buf, size_t len)
{
	return v.ptr >= buf && v.ptr + v.len <= buf + len;
}

/* ---- csrf_form_get ---- */

typedef struct {
	lit body;
	lit name;
	csrf_reason want;
	lit value;
} form_row;

static const form_row form_rows[] = {
    {S("a=1"), S("a"), CSRF_OK, S("1")},
    {S("a=1&b=2"), S("b"), CSRF_OK, S("2")},
    {S("a=1&a=2"), S("a"), CSRF_OK, S("1")},
    {S("a%62=1"), S("ab"), CSRF_OK, S("1")},
    {S("%61%62=1"), S("ab"), CSRF_OK, S("1")},
    {S("a+b=1"), S("a b"), CSRF_OK, S("1")},
    {S("a%20b=1"), S("a b"), CSRF_OK, S("1")},
    {S("a%2Bb=1"), S("a+b"), CSRF_OK, S("1")},
    {S("a%00b=1"), S("a\0b"), CSRF_OK, S("1")},
    {S("%zz=1&a=2"), S("a"), CSRF_OK, S("2")},
    {S("%zz=1"), S("a"), CSRF_MALFORMED, NONE},
    {S("a%2=1"), S("a"), CSRF_MALFORMED, NONE},
    {S("a%=1"), S("a"), CSRF_MALFORMED, NONE},
    {S("a"), S("a"), CSRF_OK, S("")},
    {S("a&b=2"), S("b"), CSRF_OK, S("2")},
    {S("a=&b=2"), S("a"), CSRF_OK, S("")},
    {S("&&a=1&&"), S("a"), CSRF_OK, S("1")},
    {S("a=1;b=2"), S("b"), CSRF_NOT_FOUND, NONE},
    {S("a=1;b=2"), S("a"), CSRF_OK, S("1;b=2")},
    {S(""), S("a"), CSRF_NOT_FOUND, NONE},
    {S("A=1"), S("a"), CSRF_NOT_FOUND, NONE},
    {S("ab=1"), S("a"), CSRF_NOT_FOUND, NONE},
    {S("a=1"), S("ab"), CSRF_NOT_FOUND, NONE},
    {S("?tok=1"), S("tok"), CSRF_NOT_FOUND, NONE},
    {S("=1&a=2"), S("a"), CSRF_OK, S("2")},
    {S("x=%zz&a=2"), S("a"), CSRF_OK, S("2")},
    {S("a=1=2"), S("a"), CSRF_OK, S("1=2")},
    {S("csrf_0123456789ab=tok%2Bx"), S("csrf_0123456789ab"), CSRF_OK, S("tok%2Bx")},
    {S("%61=2&a=1"), S("a"), CSRF_OK, S("2")},
};

static void check_form_row(const form_row *r, size_t i, const char *buf, size_t len)
{
	csrf_slice v = {(const char *)1, 99};
	csrf_reason rc = csrf_form_get(buf, len, r->name.p, r->name.n, &v);
	if (rc != r->want)
		fail_msg("form row %zu: got %d want %d", i, rc, r->want);
	if (rc == CSRF_OK && (!slice_is(v, r->value) || !inside(v, buf, len)))
		fail_msg("form row %zu: wrong value slice", i);
	if (rc != CSRF_OK && (v.ptr != NULL || v.len != 0))
		fail_msg("form row %zu: slice set on failure", i);
}

static void test_form_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof form_rows / sizeof form_rows[0]; i++) {
		const form_row *r = &form_rows[i];
		check_form_row(r, i, r->body.p, r->body.n);
		char *base, *g = guard(r->body.p, r->body.n, &base);
		check_form_row(r, i, g, r->body.n);
		tu_guard_free(base);
	}
}

static void test_form_prefixes(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof form_rows / sizeof form_rows[0]; i++) {
		const form_row *r = &form_rows[i];
		for (size_t k = 0; k <= r->body.n; k++) {
			char *base, *g = guard(r->body.p, k, &base);
			csrf_slice v;
			csrf_reason rc = csrf_form_get(g, k, r->name.p, r->name.n, &v);
			if (rc != CSRF_OK && rc != CSRF_NOT_FOUND && rc != CSRF_MALFORMED)
				fail_msg("form row %zu prefix %zu: code %d", i, k, rc);
			if (rc == CSRF_OK && !inside(v, g, k))
				fail_msg("form row %zu prefix %zu: slice outside input", i, k);
			tu_guard_free(base);
		}
	}
}

/* 10 MB of fields, the wanted one last. */
static void test_form_huge(void **state)
{
	(void)state;
	size_t cap = 10 * 1000 * 1000 + 64, n = 0;
	char *b = malloc(cap);
	assert_non_null(b);
	while (n < 10 * 1000 * 1000) {
		int w = snprintf(b + n, cap - n, "f%zu=%s&", n, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
		assert_true(w > 0);
		n += (size_t)w;
	}
	memcpy(b + n, "tok=last", 8);
	n += 8;
	csrf_slice v;
	assert_int_equal(csrf_form_get(b, n, "tok", 3, &v), CSRF_OK);
	assert_true(v.len == 4 && memcmp(v.ptr, "last", 4) == 0);
	assert_int_equal(csrf_form_get(b, n, "nope", 4, &v), CSRF_NOT_FOUND);
	/* one field whose value is the whole 10 MB */
	memcpy(b, "tok=", 4);
	memset(b + 4, 'v', n - 4);
	assert_int_equal(csrf_form_get(b, n, "tok", 3, &v), CSRF_OK);
	assert_int_equal(v.len, n - 4);
	free(b);
}

static void test_form_long_name(void **state)
{
	(void)state;
	char b[700], name[300];
	memset(name, 'n', sizeof name);
	memcpy(b, name, 300);
	memcpy(b + 300, "=v", 2);
	csrf_slice v;
	assert_int_equal(csrf_form_get(b, 302, name, 300, &v), CSRF_NOT_FOUND);
	assert_int_equal(csrf_form_get(b + 44, 258, name, 256, &v), CSRF_OK);
	assert_int_equal(v.len, 1);
	assert_int_equal(csrf_form_get("a=1", 3, "a", 1, NULL), CSRF_ERR_ARG);
	assert_int_equal(csrf_form_get(NULL, 3, "a", 1, &v), CSRF_ERR_ARG);
	assert_int_equal(csrf_form_get("a=1", 3, "a", 0, &v), CSRF_ERR_ARG);
	assert_int_equal(csrf_form_get(NULL, 0, "a", 1, &v), CSRF_NOT_FOUND);
}

/* ---- csrf_form_decode ---- */

typedef struct {
	lit in;
	csrf_reason want;
	lit out;
} decode_row;

static const decode_row decode_rows[] = {
    {S("abc"), CSRF_OK, S("abc")},    {S(""), CSRF_OK, S("")},
    {S("a+b"), CSRF_OK, S("a b")},    {S("%41%42"), CSRF_OK, S("AB")},
    {S("%2b%2B"), CSRF_OK, S("++")},  {S("100%25"), CSRF_OK, S("100%")},
    {S("%00"), CSRF_OK, S("\0")},     {S("%e2%82%ac"), CSRF_OK, S("\xe2\x82\xac")},
    {S("%"), CSRF_MALFORMED, NONE},   {S("%4"), CSRF_MALFORMED, NONE},
    {S("%4g"), CSRF_MALFORMED, NONE}, {S("%g4"), CSRF_MALFORMED, NONE},
    {S("ok%"), CSRF_MALFORMED, NONE}, {S("a%%41"), CSRF_MALFORMED, NONE},
};

static void check_decode(const decode_row *r, size_t i, const char *in, size_t len)
{
	char out[64];
	size_t n = 99;
	memset(out, 'Z', sizeof out);
	csrf_reason rc = csrf_form_decode(in, len, out, sizeof out, &n);
	if (rc != r->want)
		fail_msg("decode row %zu: got %d want %d", i, rc, r->want);
	if (rc == CSRF_OK) {
		if (n != r->out.n || memcmp(out, r->out.p, n) != 0 || out[n] != '\0')
			fail_msg("decode row %zu: wrong output", i);
	} else if (out[0] != '\0' || n != 0) {
		fail_msg("decode row %zu: output not empty on failure", i);
	}
}

static void test_decode_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof decode_rows / sizeof decode_rows[0]; i++) {
		const decode_row *r = &decode_rows[i];
		check_decode(r, i, r->in.p, r->in.n);
		char *base, *g = guard(r->in.p, r->in.n, &base);
		check_decode(r, i, g, r->in.n);
		/* every prefix answers a code and never overruns */
		for (size_t k = 0; k <= r->in.n; k++) {
			char out[64];
			size_t n;
			char *b2, *g2 = guard(r->in.p, k, &b2);
			csrf_reason rc = csrf_form_decode(g2, k, out, sizeof out, &n);
			if (rc != CSRF_OK && rc != CSRF_MALFORMED)
				fail_msg("decode row %zu prefix %zu: code %d", i, k, rc);
			tu_guard_free(b2);
		}
		tu_guard_free(base);
	}
}

static void test_decode_buffer(void **state)
{
	(void)state;
	char out[8];
	size_t n = 5;
	/* "a%41b" decodes to 3 bytes: 4 bytes of buffer suffice, 3 do not */
	assert_int_equal(csrf_form_decode("a%41b", 5, out, 4, &n), CSRF_OK);
	assert_int_equal(n, 3);
	assert_string_equal(out, "aAb");
	memset(out, 'Z', sizeof out);
	assert_int_equal(csrf_form_decode("a%41b", 5, out, 3, &n), CSRF_ERR_BUFFER);
	assert_int_equal(out[0], '\0');
	assert_int_equal(n, 0);
	assert_int_equal(csrf_form_decode("a", 1, out, 0, &n), CSRF_ERR_BUFFER);
	assert_int_equal(csrf_form_decode("", 0, out, 1, &n), CSRF_OK);
	assert_int_equal(csrf_form_decode("a", 1, NULL, 4, &n), CSRF_ERR_ARG);
	assert_int_equal(csrf_form_decode(NULL, 1, out, 4, &n), CSRF_ERR_ARG);
	/* the bad escape wins over the short buffer */
	assert_int_equal(csrf_form_decode("abcdef%", 7, out, 2, &n), CSRF_MALFORMED);
	assert_int_equal(csrf_form_decode("ab", 2, out, 3, NULL), CSRF_OK);
}

/* ---- csrf_multipart_get ---- */

#define CT "multipart/form-data; boundary=XyZ"
#define CD(n) "Content-Disposition: form-data; name=\"" n "\"\r\n"
#define PART(n, v) "--XyZ\r\n" CD(n) "\r\n" v "\r\n"
#define END "--XyZ--\r\n"

typedef struct {
	lit ct;
	lit body;
	lit name;
	csrf_reason want;
	lit value;
} mp_row;

static const mp_row mp_rows[] = {
    {S(CT), S(PART("a", "val-a") PART("tok", "T0K") END), S("a"), CSRF_OK, S("val-a")},
    {S(CT), S(PART("a", "val-a") PART("tok", "T0K") END), S("tok"), CSRF_OK, S("T0K")},
    {S(CT), S(PART("a", "val-a") PART("tok", "T0K") END), S("none"), CSRF_NOT_FOUND, NONE},
    {S(CT), S(PART("tok", "1") PART("tok", "2") END), S("tok"), CSRF_OK, S("1")},
    {S(CT), S("preamble\r\nmore preamble\r\n" PART("tok", "T") END), S("tok"), CSRF_OK, S("T")},
    {S(CT), S(PART("tok", "") END), S("tok"), CSRF_OK, S("")},
    {S(CT), S(PART("tok", "l1\r\nl2\r\n--XyQ\r\n-") END), S("tok"), CSRF_OK, S("l1\r\nl2\r\n--XyQ\r\n-")},
    {S(CT), S(PART("tok", "a\0b") END), S("tok"), CSRF_OK, S("a\0b")},
    {S(CT), S(PART("tok", "T") END "epilogue --XyZ garbage"), S("tok"), CSRF_OK, S("T")},
    {S(CT), S(PART("tok", "T") "--XyZ"), S("tok"), CSRF_MALFORMED, NONE},
    {S(CT), S(PART("tok", "T") "--XyZ \t\r\n"), S("tok"), CSRF_OK, S("T")},
    {S(CT), S("--XyZ \t\r\n" CD("tok") "\r\nT\r\n" END), S("tok"), CSRF_OK, S("T")},
    {S(CT),
     S("--XyZ\r\nContent-Disposition: form-data; name=\"tok\"; filename=\"f.txt\"\r\nContent-Type: text/plain\r\n\r\n"
       "FILE\r\n" PART("tok", "REAL") END),
     S("tok"), CSRF_OK, S("REAL")},
    {S(CT), S("--XyZ\r\nContent-Disposition: form-data; name=\"tok\"; filename*=UTF-8''f.txt\r\n\r\nFILE\r\n" END),
     S("tok"), CSRF_NOT_FOUND, NONE},
    {S(CT), S("--XyZ\r\nContent-Disposition: form-data; name=tok\r\n\r\nT\r\n" END), S("tok"), CSRF_OK, S("T")},
    {S(CT), S("--XyZ\r\nContent-Disposition: form-data;name=tok;\r\n\r\nT\r\n" END), S("tok"), CSRF_OK, S("T")},
    {S(CT), S("--XyZ\r\nContent-Disposition: form-data; name=\"t\\\"k\"\r\n\r\nT\r\n" END), S("t\"k"), CSRF_OK, S("T")},
    {S(CT), S("--XyZ\r\nContent-Disposition: form-data; name=\"t\\\\k\"\r\n\r\nT\r\n" END), S("t\\k"), CSRF_OK, S("T")},
    {S(CT), S("--XyZ\r\nCONTENT-DISPOSITION: Form-Data; NAME=\"tok\"\r\n\r\nT\r\n" END), S("tok"), CSRF_OK, S("T")},
    {S(CT), S("--XyZ\r\nContent-Type: text/plain\r\n" CD("tok") "X-Other: 1\r\n\r\nT\r\n" END), S("tok"), CSRF_OK,
     S("T")},
    {S(CT), S("--XyZ\r\nContent-Disposition: attachment; name=\"tok\"\r\n\r\nT\r\n" END), S("tok"), CSRF_NOT_FOUND,
     NONE},
    {S(CT), S("--XyZ\r\nContent-Type: text/plain\r\n\r\nT\r\n" END), S("tok"), CSRF_NOT_FOUND, NONE},
    {S(CT), S(PART("TOK", "T") END), S("tok"), CSRF_NOT_FOUND, NONE},
    {S(CT), S(END), S("tok"), CSRF_NOT_FOUND, NONE},
    {S("Multipart/Form-Data; charset=utf-8; BOUNDARY=XyZ"), S(PART("tok", "T") END), S("tok"), CSRF_OK, S("T")},
    {S("multipart/form-data ; boundary = XyZ ; x=y"), S(PART("tok", "T") END), S("tok"), CSRF_OK, S("T")},
    {S("multipart/form-data; boundary=\"XyZ\""), S(PART("tok", "T") END), S("tok"), CSRF_OK, S("T")},
    {S("multipart/form-data; boundary=\"a b'()+_,-./:=?\""),
     S("--a b'()+_,-./:=?\r\n" CD("tok") "\r\nT\r\n--a b'()+_,-./:=?--"), S("tok"), CSRF_OK, S("T")},
    {S("multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW"),
     S("------WebKitFormBoundary7MA4YWxkTrZu0gW\r\n" CD(
         "tok") "\r\nT\r\n------WebKitFormBoundary7MA4YWxkTrZu0gW--\r\n"),
     S("tok"), CSRF_OK, S("T")},
    /* 70 characters is the longest boundary */
    {S("multipart/form-data; boundary=0123456789012345678901234567890123456789012345678901234567890123456789"),
     S("--0123456789012345678901234567890123456789012345678901234567890123456789\r\n" CD(
         "tok") "\r\nT\r\n--0123456789012345678901234567890123456789012345678901234567890123456789--"),
     S("tok"), CSRF_OK, S("T")},

    /* no usable boundary */
    {S("multipart/form-data"), S(PART("tok", "T") END), S("tok"), CSRF_MALFORMED, NONE},
    {S("multipart/form-data; boundary="), S(PART("tok", "T") END), S("tok"), CSRF_MALFORMED, NONE},
    {S("multipart/form-data; boundary=\"\""), S(PART("tok", "T") END), S("tok"), CSRF_MALFORMED, NONE},
    {S("multipart/form-data; boundary=\"XyZ"), S(PART("tok", "T") END), S("tok"), CSRF_MALFORMED, NONE},
    {S("multipart/form-data; boundary=\"XyZ \""), S(PART("tok", "T") END), S("tok"), CSRF_MALFORMED, NONE},
    {S("multipart/form-data; boundary=\"XyZ \""), S("--XyZ \r\n" CD("tok") "\r\nT\r\n--XyZ --"), S("tok"),
     CSRF_MALFORMED, NONE},
    {S("multipart/form-data; boundary=X@Z"), S(PART("tok", "T") END), S("tok"), CSRF_MALFORMED, NONE},
    {S("multipart/form-data; boundary=01234567890123456789012345678901234567890123456789012345678901234567890"),
     S("--01234567890123456789012345678901234567890123456789012345678901234567890\r\n" CD(
         "tok") "\r\nT\r\n--01234567890123456789012345678901234567890123456789012345678901234567890--"),
     S("tok"), CSRF_MALFORMED, NONE},
    {S("multipart/mixed; boundary=XyZ"), S(PART("tok", "T") END), S("tok"), CSRF_MALFORMED, NONE},
    {S("text/plain; boundary=XyZ"), S(PART("tok", "T") END), S("tok"), CSRF_MALFORMED, NONE},
    {S(""), S(PART("tok", "T") END), S("tok"), CSRF_MALFORMED, NONE},
    {S("multipart/form-data; boundary"), S(PART("tok", "T") END), S("tok"), CSRF_MALFORMED, NONE},
    /* bodies that do not parse */
    {S(CT), S(""), S("tok"), CSRF_MALFORMED, NONE},
    {S(CT), S("tok=T"), S("tok"), CSRF_MALFORMED, NONE},
    /* "--XyZ" not at a line start is preamble; the close delimiter ends it all */
    {S(CT), S("junk--XyZ\r\n" CD("tok") "\r\nT\r\n" END), S("tok"), CSRF_NOT_FOUND, NONE},
    {S(CT), S("junk--XyZ\r\n" CD("tok") "\r\nT\r\n"), S("tok"), CSRF_MALFORMED, NONE},
    {S(CT), S("--XyZ\r\n" CD("tok") "\r\nT0K"), S("tok"), CSRF_MALFORMED, NONE},
    {S(CT), S(PART("a", "v") "--XyZ\r\n"), S("tok"), CSRF_MALFORMED, NONE},
    {S(CT), S(PART("a", "v") PART("b", "w")), S("tok"), CSRF_MALFORMED, NONE},
    {S(CT), S("--XyZ\r\n" CD("tok") "T0K\r\n" END), S("tok"), CSRF_MALFORMED, NONE},
    {S(CT), S("--XyZ\r\nContent-Disposition: form-data; name=\"tok\""), S("tok"), CSRF_MALFORMED, NONE},
    {S(CT), S("--XyZ\r\n" CD("tok")), S("tok"), CSRF_MALFORMED, NONE},
    {S(CT), S("--XyZjunk\r\n" CD("tok") "\r\nT\r\n" END), S("tok"), CSRF_MALFORMED, NONE},
    {S(CT), S("--XyZ\n" CD("tok") "\r\nT\r\n" END), S("tok"), CSRF_MALFORMED, NONE},
    {S(CT), S("--XyZ\r\nNoColonHere\r\n\r\nT\r\n" END), S("tok"), CSRF_MALFORMED, NONE},
    {S(CT), S("--XyZ\r\n: empty name\r\n\r\nT\r\n" END), S("tok"), CSRF_MALFORMED, NONE},
    {S(CT), S("--XyZ\r\n" CD("tok") " folded: line\r\n\r\nT\r\n" END), S("tok"), CSRF_MALFORMED, NONE},
    {S(CT), S("--XyZ\r\nContent-Disposition: form-data; name=\"tok\r\n\r\nT\r\n" END), S("tok"), CSRF_MALFORMED, NONE},
    {S(CT), S("--XyZ\r\nContent-Disposition: form-data; name\r\n\r\nT\r\n" END), S("tok"), CSRF_MALFORMED, NONE},
    {S(CT), S("--XyZ\r\nContent-Disposition: form-data; name=\r\n\r\nT\r\n" END), S("tok"), CSRF_MALFORMED, NONE},
    {S(CT), S("--XyZ\r\nContent-Disposition: form-data; name=; x=1\r\n\r\nT\r\n" END), S("tok"), CSRF_MALFORMED, NONE},
    {S(CT), S("--XyZ\r\nContent-Disposition: form-data; name=\"tok\" junk\r\n\r\nT\r\n" END), S("tok"), CSRF_MALFORMED,
     NONE},
    {S(CT), S("--XyZ\r\nContent-Disposition: ; name=\"tok\"\r\n\r\nT\r\n" END), S("tok"), CSRF_MALFORMED, NONE},
    {S(CT),
     S("--XyZ\r\nX-A: a\x01"
       "b\r\n" CD("tok") "\r\nT\r\n" END),
     S("tok"), CSRF_MALFORMED, NONE},
    {S(CT), S(PART("tok", "T") "--XyZ!"), S("tok"), CSRF_MALFORMED, NONE},
};

static void check_mp_row(const mp_row *r, size_t i, const char *ct, const char *body)
{
	csrf_slice v = {(const char *)1, 99};
	csrf_reason rc = csrf_multipart_get(ct, r->ct.n, body, r->body.n, r->name.p, r->name.n, &v);
	if (rc != r->want)
		fail_msg("multipart row %zu: got %d want %d", i, rc, r->want);
	if (rc == CSRF_OK && (!slice_is(v, r->value) || !inside(v, body, r->body.n)))
		fail_msg("multipart row %zu: wrong value slice", i);
	if (rc != CSRF_OK && (v.ptr != NULL || v.len != 0))
		fail_msg("multipart row %zu: slice set on failure", i);
}

static void test_multipart_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof mp_rows / sizeof mp_rows[0]; i++) {
		const mp_row *r = &mp_rows[i];
		check_mp_row(r, i, r->ct.p, r->body.p);
		char *cb, *cg = guard(r->ct.p, r->ct.n, &cb);
		char *bb, *bg = guard(r->body.p, r->body.n, &bb);
		check_mp_row(r, i, cg, bg);
		tu_guard_free(cb);
		tu_guard_free(bb);
	}
}

/* Every prefix of body and of Content-Type, flush against a guard page. */
static void test_multipart_prefixes(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof mp_rows / sizeof mp_rows[0]; i++) {
		const mp_row *r = &mp_rows[i];
		csrf_slice full;
		size_t off = 0;
		if (csrf_multipart_get(r->ct.p, r->ct.n, r->body.p, r->body.n, r->name.p, r->name.n, &full) == CSRF_OK)
			off = (size_t)(full.ptr - r->body.p);
		for (size_t k = 0; k <= r->body.n; k++) {
			char *base, *g = guard(r->body.p, k, &base);
			csrf_slice v;
			csrf_reason rc = csrf_multipart_get(r->ct.p, r->ct.n, g, k, r->name.p, r->name.n, &v);
			if (rc != CSRF_OK && rc != CSRF_NOT_FOUND && rc != CSRF_MALFORMED)
				fail_msg("multipart row %zu prefix %zu: code %d", i, k, rc);
			if (rc == CSRF_OK && !inside(v, g, k))
				fail_msg("multipart row %zu prefix %zu: slice outside input", i, k);
			/* a prefix finds the same part or nothing, and never one
			 * that lost its delimiter ("\r\n--", a boundary, a tail) */
			if (rc == CSRF_OK && (r->want != CSRF_OK || (size_t)(v.ptr - g) != off || v.len != full.len ||
			                      k < off + full.len + 7))
				fail_msg("multipart row %zu prefix %zu: found a truncated part", i, k);
			tu_guard_free(base);
		}
		for (size_t k = 0; k <= r->ct.n; k++) {
			char *base, *g = guard(r->ct.p, k, &base);
			csrf_slice v;
			csrf_reason rc = csrf_multipart_get(g, k, r->body.p, r->body.n, r->name.p, r->name.n, &v);
			if (rc != CSRF_OK && rc != CSRF_NOT_FOUND && rc != CSRF_MALFORMED)
				fail_msg("multipart row %zu ct prefix %zu: code %d", i, k, rc);
			tu_guard_free(base);
		}
	}
}

static size_t put(char *b, size_t n, size_t cap, const char *s)
{
	size_t l = strlen(s);
	assert_true(n + l <= cap);
	memcpy(b + n, s, l);
	return n + l;
}

static void test_multipart_limits(void **state)
{
	(void)state;
	size_t cap = 256 * 1024, n = 0;
	char *b = malloc(cap);
	assert_non_null(b);
	csrf_slice v;

	/* 1000 parts, the wanted one last: found; one more part before it: too many */
	for (int i = 0; i < 999; i++)
		n = put(b, n, cap, PART("f", "x"));
	size_t mark = n;
	n = put(b, n, cap, PART("tok", "T") END);
	assert_int_equal(csrf_multipart_get(CT, strlen(CT), b, n, "tok", 3, &v), CSRF_OK);
	assert_true(v.len == 1 && v.ptr[0] == 'T');
	n = put(b, mark, cap, PART("f", "x") PART("tok", "T") END);
	assert_int_equal(csrf_multipart_get(CT, strlen(CT), b, n, "tok", 3, &v), CSRF_MALFORMED);
	assert_null(v.ptr);

	/* a header line of exactly 1024 bytes is fine, 1025 is not */
	for (size_t line = 1024; line <= 1025; line++) {
		n = put(b, 0, cap, "--XyZ\r\nX-Long: ");
		memset(b + n, 'a', line - 8);
		n += line - 8;
		n = put(b, n, cap, "\r\n" CD("tok") "\r\nT\r\n" END);
		csrf_reason want = line == 1024 ? CSRF_OK : CSRF_MALFORMED;
		assert_int_equal(csrf_multipart_get(CT, strlen(CT), b, n, "tok", 3, &v), want);
	}

	/* a name over 256 bytes is never matched */
	char name[300];
	memset(name, 'n', sizeof name);
	n = put(b, 0, cap, "--XyZ\r\nContent-Disposition: form-data; name=\"");
	memcpy(b + n, name, 300);
	n += 300;
	n = put(b, n, cap, "\"\r\n\r\nT\r\n" END);
	assert_int_equal(csrf_multipart_get(CT, strlen(CT), b, n, name, 300, &v), CSRF_NOT_FOUND);

	/* a 10 MB file part before the field: skipped, the field found */
	size_t file = 10 * 1000 * 1000;
	char *big = malloc(file + 512);
	assert_non_null(big);
	n = put(big, 0, file + 512,
	        "--XyZ\r\nContent-Disposition: form-data; name=\"tok\"; filename=\"a.bin\"\r\n\r\n");
	memset(big + n, '-', file);
	n += file;
	n = put(big, n, file + 512, "\r\n" PART("tok", "T") END);
	assert_int_equal(csrf_multipart_get(CT, strlen(CT), big, n, "tok", 3, &v), CSRF_OK);
	assert_true(v.len == 1 && v.ptr[0] == 'T');
	/* the same body cut before the field's part ends */
	assert_int_equal(csrf_multipart_get(CT, strlen(CT), big, n - strlen(END) - 3, "tok", 3, &v), CSRF_MALFORMED);
	free(big);

	assert_int_equal(csrf_multipart_get(CT, strlen(CT), "", 0, "tok", 3, NULL), CSRF_ERR_ARG);
	assert_int_equal(csrf_multipart_get(CT, strlen(CT), NULL, 5, "tok", 3, &v), CSRF_ERR_ARG);
	assert_int_equal(csrf_multipart_get(NULL, 0, "x", 1, "tok", 3, &v), CSRF_MALFORMED);
	free(b);
}

/* ---- csrf_body_field ---- */

typedef struct {
	lit ct; /* NONE: absent */
	lit body;
	lit name;
	csrf_reason want;
	lit out;
} body_row;

#define URLENC "application/x-www-form-urlencoded"

static const body_row body_rows[] = {
    {S(URLENC), S("a=1&tok=x%2By+z"), S("tok"), CSRF_OK, S("x+y z")},
    /* a '+' alone is decoded too; a value with neither is the body's */
    {S(URLENC), S("tok=a+b&c=d"), S("tok"), CSRF_OK, S("a b")},
    {S(URLENC), S("tok=a%2db"), S("tok"), CSRF_OK, S("a-b")},
    {S(URLENC), S("tok=ABCdef012-_"), S("tok"), CSRF_OK, S("ABCdef012-_")},
    {S(URLENC), S("tok="), S("tok"), CSRF_OK, S("")},
    {S(URLENC), S("tok=first&tok=second"), S("tok"), CSRF_OK, S("first")},
    {S("Application/X-WWW-Form-Urlencoded; charset=UTF-8"), S("tok=v"), S("tok"), CSRF_OK, S("v")},
    {S(" application/x-www-form-urlencoded ;"), S("tok=v"), S("tok"), CSRF_OK, S("v")},
    {S(URLENC), S("tok=bad%zz"), S("tok"), CSRF_MALFORMED, NONE},
    {S(URLENC), S("a=1"), S("tok"), CSRF_NOT_FOUND, NONE},
    {S(URLENC), S(""), S("tok"), CSRF_NOT_FOUND, NONE},
    {S(CT), S(PART("tok", "a+b%20") END), S("tok"), CSRF_OK, S("a+b%20")},
    {S("MULTIPART/FORM-DATA; boundary=XyZ"), S(PART("tok", "v") END), S("tok"), CSRF_OK, S("v")},
    {S(CT), S(PART("a", "v") END), S("tok"), CSRF_NOT_FOUND, NONE},
    {S(CT), S("--XyZ\r\n" CD("tok") "\r\nT0K"), S("tok"), CSRF_MALFORMED, NONE},
    {S("multipart/form-data"), S(PART("tok", "v") END), S("tok"), CSRF_MALFORMED, NONE},
    {S("text/plain"), S("tok=v"), S("tok"), CSRF_NOT_FOUND, NONE},
    {S("application/json"), S("{\"tok\":\"v\"}"), S("tok"), CSRF_NOT_FOUND, NONE},
    {S("application/x-www-form-urlencodedX"), S("tok=v"), S("tok"), CSRF_NOT_FOUND, NONE},
    {S(""), S("tok=v"), S("tok"), CSRF_NOT_FOUND, NONE},
    {NONE, S("tok=v"), S("tok"), CSRF_NOT_FOUND, NONE},
};

static void test_body_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof body_rows / sizeof body_rows[0]; i++) {
		const body_row *r = &body_rows[i];
		for (int g = 0; g < 2; g++) {
			char *bb = NULL, *body = g ? guard(r->body.p, r->body.n, &bb) : (char *)r->body.p;
			char out[64];
			size_t n = 99;
			memset(out, 'Z', sizeof out);
			csrf_reason rc = csrf_body_field(r->ct.p, r->ct.n, body, r->body.n, r->name.p, r->name.n, out,
			                                 sizeof out, &n);
			if (rc != r->want)
				fail_msg("body row %zu: got %d want %d", i, rc, r->want);
			if (rc == CSRF_OK && (n != r->out.n || memcmp(out, r->out.p, n) != 0 || out[n] != '\0'))
				fail_msg("body row %zu: wrong output", i);
			if (rc != CSRF_OK && (out[0] != '\0' || n != 0))
				fail_msg("body row %zu: output not empty on failure", i);
			/* a buffer one byte short is refused whole */
			if (rc == CSRF_OK) {
				memset(out, 'Z', sizeof out);
				rc = csrf_body_field(r->ct.p, r->ct.n, body, r->body.n, r->name.p, r->name.n, out,
				                     r->out.n, &n);
				if (rc != CSRF_ERR_BUFFER || (r->out.n && out[0] != '\0'))
					fail_msg("body row %zu: short buffer not refused", i);
			}
			if (bb)
				tu_guard_free(bb);
		}
	}
	char out[4];
	assert_int_equal(csrf_body_field(URLENC, strlen(URLENC), "a=1", 3, "a", 1, NULL, 4, NULL), CSRF_ERR_ARG);
	assert_int_equal(csrf_body_field(URLENC, strlen(URLENC), "a=1", 3, NULL, 1, out, 4, NULL), CSRF_ERR_ARG);
	assert_int_equal(csrf_body_field(URLENC, strlen(URLENC), "a=1", 3, "a", 1, out, 4, NULL), CSRF_OK);
}

/* ---- random bodies built from meaningful pieces ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % n);
}

static size_t build(char *b, size_t cap, const char *const *atoms, size_t n_atoms, size_t pieces)
{
	size_t n = 0;
	for (size_t i = 0; i < pieces; i++) {
		const char *a = atoms[rnd((uint32_t)n_atoms)];
		size_t l = strlen(a);
		if (n + l > cap)
			break;
		memcpy(b + n, a, l);
		n += l;
	}
	return n;
}

/* Whatever the body, a parser code comes back, and a found value sits
 * where the format says: after "=" up to "&" (urlencoded), after the
 * header block's CRLFCRLF up to CRLF "--" boundary (multipart). */
static void test_random(void **state)
{
	(void)state;
	static const char *const url_atoms[] = {"tok", "=", "&", "%", "%6", "%6f", "%zz", "+",
	                                        "t",   "o", "k", "v", ";",  "\0",  "?",   "tok="};
	static const char *const mp_atoms[] = {"--XyZ\r\n",
	                                       "Content-Disposition: form-data; name=\"tok\"\r\n",
	                                       "Content-Disposition: form-data; name=\"tok\"; filename=\"f\"\r\n",
	                                       "Content-Disposition: form-data; name=\"a\"\r\n",
	                                       "Content-Disposition: form-data; name=tok\r\n",
	                                       "X-A: b\r\n",
	                                       "\r\n",
	                                       "T",
	                                       "\r\n--XyZ\r\n",
	                                       "\r\n--XyZ--",
	                                       "--",
	                                       " ",
	                                       "\"",
	                                       "\\",
	                                       "\n",
	                                       "--XyZ"};
	char b[512];
	for (int iter = 0; iter < 20000; iter++) {
		size_t n = build(b, sizeof b, url_atoms, sizeof url_atoms / sizeof url_atoms[0], rnd(24));
		char *base, *g = guard(b, n, &base);
		csrf_slice v;
		csrf_reason rc = csrf_form_get(g, n, "tok", 3, &v);
		if (rc == CSRF_OK) {
			if (!inside(v, g, n) || memchr(v.ptr, '&', v.len) ||
			    (v.ptr + v.len < g + n && v.ptr[v.len] != '&'))
				fail_msg("urlencoded iteration %d: misplaced value", iter);
		} else if (rc != CSRF_NOT_FOUND && rc != CSRF_MALFORMED) {
			fail_msg("urlencoded iteration %d: code %d", iter, rc);
		}
		tu_guard_free(base);

		/* a first delimiter and a field header most of the time, so that
		 * a good share of the bodies parse */
		n = 0;
		if (rnd(4)) {
			memcpy(b, "--XyZ\r\n", 7);
			n = 7;
			if (rnd(2)) {
				memcpy(b + n, mp_atoms[1], strlen(mp_atoms[1]));
				n += strlen(mp_atoms[1]);
			}
		}
		n += build(b + n, sizeof b - n, mp_atoms, sizeof mp_atoms / sizeof mp_atoms[0], rnd(12));
		if (n && rnd(4) == 0)
			b[rnd((uint32_t)n)] = (char)rnd(256);
		g = guard(b, n, &base);
		rc = csrf_multipart_get(CT, strlen(CT), g, n, "tok", 3, &v);
		if (rc == CSRF_OK) {
			if (!inside(v, g, n) || v.ptr - g < 4 || memcmp(v.ptr - 4, "\r\n\r\n", 4) != 0 ||
			    (size_t)(g + n - (v.ptr + v.len)) < 7 || memcmp(v.ptr + v.len, "\r\n--XyZ", 7) != 0 ||
			    memmem(v.ptr, v.len, "\r\n--XyZ", 7))
				fail_msg("multipart iteration %d: misplaced value", iter);
		} else if (rc != CSRF_NOT_FOUND && rc != CSRF_MALFORMED) {
			fail_msg("multipart iteration %d: code %d", iter, rc);
		}
		tu_guard_free(base);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_form_rows),        cmocka_unit_test(test_form_prefixes),
	    cmocka_unit_test(test_form_huge),        cmocka_unit_test(test_form_long_name),
	    cmocka_unit_test(test_decode_rows),      cmocka_unit_test(test_decode_buffer),
	    cmocka_unit_test(test_multipart_rows),   cmocka_unit_test(test_multipart_prefixes),
	    cmocka_unit_test(test_multipart_limits), cmocka_unit_test(test_body_rows),
	    cmocka_unit_test(test_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
