/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_form.c - urlencoded bodies: csrf_form_get, csrf_form_decode and
 * csrf_body_field. Input: NAME |#| BODY.
 * Invariants: a found value lies inside the body, holds no '&' and follows
 * '=' (or is the empty rest of a bare name); decoding never needs more
 * than len + 1 bytes and reports a short buffer as CSRF_ERR_BUFFER;
 * decoding matches a reference decoder ('+' is a space), and
 * percent-encoding any bytes and decoding gives them back; a field
 * appended to a body where the name was not found is found, with its
 * value, also through csrf_body_field.
 */
#include "fuzz_util.h"

#define NAME_CAP 256

static const char hex[] = "0123456789ABCDEF";

/* Every byte as %XX: 3 * n bytes into out. */
static void pct_encode(const char *in, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)in[i];
		out[3 * i] = '%';
		out[3 * i + 1] = hex[c >> 4];
		out[3 * i + 2] = hex[c & 15];
	}
}

static int hexdig(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The reference: "%XX" is one byte, '+' a space, anything else itself.
 * Only called on input the library accepted. */
static size_t ref_decode(const char *in, size_t n, char *out)
{
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		if (in[i] == '%') {
			FZ_ASSERT(n - i >= 3 && hexdig(in[i + 1]) >= 0 && hexdig(in[i + 2]) >= 0);
			out[j++] = (char)(hexdig(in[i + 1]) << 4 | hexdig(in[i + 2]));
			i += 2;
		} else {
			out[j++] = in[i] == '+' ? ' ' : in[i];
		}
	}
	return j;
}

/* Decodes (in, n) with exactly enough room, then checks the boundary
 * capacities; returns the result of the roomy call. */
static csrf_reason check_decode(const char *in, size_t n)
{
	char *out = malloc(n + 1);
	FZ_ASSERT(out != NULL);
	size_t out_len = 12345;
	csrf_reason r = csrf_form_decode(in, n, out, n + 1, &out_len);
	FZ_ASSERT(r == CSRF_OK || r == CSRF_MALFORMED);
	if (r == CSRF_MALFORMED) {
		/* only for a '%' without two hex digits after it */
		int bad = 0;
		for (size_t i = 0; i < n && !bad; i++)
			if (in[i] == '%') {
				bad = n - i < 3 || hexdig(in[i + 1]) < 0 || hexdig(in[i + 2]) < 0;
				if (!bad)
					i += 2;
			}
		FZ_ASSERT(bad);
	}
	if (r == CSRF_OK) {
		FZ_ASSERT(out_len <= n);
		FZ_ASSERT(out[out_len] == '\0');
		/* one byte short of the decoded length plus NUL */
		char *tight = malloc(out_len + 1);
		FZ_ASSERT(tight != NULL);
		size_t l2 = 0;
		FZ_ASSERT(csrf_form_decode(in, n, tight, out_len + 1, &l2) == CSRF_OK);
		FZ_ASSERT(l2 == out_len && memcmp(tight, out, out_len) == 0);
		FZ_ASSERT(csrf_form_decode(in, n, tight, out_len, &l2) == CSRF_ERR_BUFFER);
		free(tight);
		/* the same bytes as a plain reference decoder */
		char *ref = malloc(n + 1);
		FZ_ASSERT(ref != NULL);
		size_t rl = ref_decode(in, n, ref);
		FZ_ASSERT(rl == out_len && memcmp(ref, out, rl) == 0);
		free(ref);
	}
	free(out);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_pieces ps;
	fz_split(data, size, 2, &ps);
	const char *name = ps.p[0].ptr, *body = ps.p[1].ptr;
	size_t name_len = ps.p[0].len, len = ps.p[1].len;

	csrf_slice v;
	csrf_reason r = csrf_form_get(body, len, name, name_len, &v);
	FZ_ASSERT(r == CSRF_OK || r == CSRF_NOT_FOUND || r == CSRF_MALFORMED || r == CSRF_ERR_ARG);
	if (name_len == 0)
		FZ_ASSERT(r == CSRF_ERR_ARG);
	if (r == CSRF_OK) {
		FZ_ASSERT(fz_inside(v, body, len));
		FZ_ASSERT(memchr(v.ptr, '&', v.len) == NULL);
		FZ_ASSERT(v.ptr > body || v.len == 0);
		if (v.len > 0)
			FZ_ASSERT(v.ptr[-1] == '=');
		check_decode(v.ptr, v.len);
	} else {
		FZ_ASSERT(v.ptr == NULL && v.len == 0);
	}
	check_decode(body, len);
	check_decode(name, name_len);

	/* Round trip: any bytes, fully percent-encoded, decode to themselves. */
	char *enc = malloc(3 * name_len + 1);
	FZ_ASSERT(enc != NULL);
	pct_encode(name, name_len, enc);
	char *dec = malloc(name_len + 1);
	FZ_ASSERT(dec != NULL);
	size_t dec_len = 0;
	FZ_ASSERT(csrf_form_decode(enc, 3 * name_len, dec, name_len + 1, &dec_len) == CSRF_OK);
	FZ_ASSERT(dec_len == name_len && memcmp(dec, name, name_len) == 0);
	free(dec);

	/* Appending "&<encoded name>=<encoded value>" makes the field found,
	 * unless an earlier field already carried the name. The value is the
	 * first bytes of the body, encoded. */
	if (r != CSRF_OK && name_len > 0 && name_len <= NAME_CAP) {
		size_t val_len = len < 40 ? len : 40;
		size_t n2 = len + 1 + 3 * name_len + 1 + 3 * val_len;
		char *b2 = malloc(n2);
		FZ_ASSERT(b2 != NULL);
		char *w = b2;
		memcpy(w, body, len);
		w += len;
		*w++ = '&';
		memcpy(w, enc, 3 * name_len);
		w += 3 * name_len;
		*w++ = '=';
		pct_encode(body, val_len, w);
		csrf_slice v2;
		FZ_ASSERT(csrf_form_get(b2, n2, name, name_len, &v2) == CSRF_OK);
		FZ_ASSERT(v2.ptr == w && v2.len == 3 * val_len);

		static const char ct[] = "application/x-www-form-urlencoded; charset=UTF-8";
		char out[64];
		size_t out_len = 0;
		FZ_ASSERT(csrf_body_field(ct, sizeof ct - 1, b2, n2, name, name_len, out, sizeof out, &out_len) ==
		          CSRF_OK);
		FZ_ASSERT(out_len == val_len && memcmp(out, body, val_len) == 0 && out[out_len] == '\0');
		free(b2);
	}
	free(enc);
	fz_free(&ps);
	return 0;
}
