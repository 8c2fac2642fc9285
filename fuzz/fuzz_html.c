/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_html.c - HTML escaping of untrusted text: csrf_html_escape and
 * csrf_html_escape_attr. Input: any bytes.
 * Invariants: 6 * len + 1 bytes always suffice and one byte less than the
 * result needs is CSRF_ERR_BUFFER; the output is NUL-terminated valid
 * UTF-8 with no raw & < > " ' (nor, in attributes, ` = or control
 * characters other than tab, LF and CR, which html.c passes through)
 * outside the references it writes; unescaping it gives the
 * input back when the input is valid UTF-8 without NUL, and in every case
 * gives valid UTF-8.
 */
#include "fuzz_util.h"

/* Length of the well-formed UTF-8 sequence at p, 0 when ill-formed. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xbf;
	size_t need;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		need = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		need = 3;
		lo = c == 0xe0 ? 0xa0 : 0x80;
		hi = c == 0xed ? 0x9f : 0xbf;
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 4;
		lo = c == 0xf0 ? 0x90 : 0x80;
		hi = c == 0xf4 ? 0x8f : 0xbf;
	} else
		return 0;
	if (n < need)
		return 0;
	for (size_t i = 1; i < need; i++) {
		unsigned char l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xbf;
		if (p[i] < l || p[i] > h)
			return 0;
	}
	return need;
}

static int valid_utf8(const char *s, size_t n, int allow_nul)
{
	for (size_t i = 0; i < n;) {
		size_t l = utf8_len((const unsigned char *)s + i, n - i);
		if (l == 0 || (!allow_nul && s[i] == '\0'))
			return 0;
		i += l;
	}
	return 1;
}

static size_t put_utf8(uint32_t cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Undoes the references of an escaped string; every '&' must start one
 * of "&amp;", "&lt;", "&gt;", "&quot;" or "&#N;" (decimal, a valid scalar
 * value). Returns the length written to out. */
static size_t unescape(const char *s, size_t n, char *out)
{
	static const struct {
		const char *ref;
		char c;
	} named[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}};
	size_t j = 0;
	for (size_t i = 0; i < n;) {
		if (s[i] != '&') {
			out[j++] = s[i++];
			continue;
		}
		int done = 0;
		for (size_t k = 0; k < sizeof named / sizeof named[0] && !done; k++) {
			size_t l = strlen(named[k].ref);
			if (n - i >= l && memcmp(s + i, named[k].ref, l) == 0) {
				out[j++] = named[k].c;
				i += l;
				done = 1;
			}
		}
		if (done)
			continue;
		FZ_ASSERT(n - i >= 4 && s[i + 1] == '#');
		size_t k = i + 2;
		uint32_t cp = 0;
		while (k < n && s[k] >= '0' && s[k] <= '9' && k - i < 10)
			cp = cp * 10 + (uint32_t)(s[k++] - '0');
		FZ_ASSERT(k > i + 2 && k < n && s[k] == ';');
		FZ_ASSERT(cp > 0 && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff));
		j += put_utf8(cp, out + j);
		i = k + 1;
	}
	return j;
}

static void check(int attr, const char *in, size_t n)
{
	size_t cap = 6 * n + 1, out_len = 0;
	char *out = malloc(cap);
	FZ_ASSERT(out != NULL);
	csrf_reason r =
	    attr ? csrf_html_escape_attr(in, n, out, cap, &out_len) : csrf_html_escape(in, n, out, cap, &out_len);
	FZ_ASSERT(r == CSRF_OK);
	FZ_ASSERT(out_len < cap && out[out_len] == '\0');
	FZ_ASSERT(valid_utf8(out, out_len, 0));
	for (size_t i = 0; i < out_len; i++) {
		unsigned char c = (unsigned char)out[i];
		FZ_ASSERT(c != '<' && c != '>' && c != '"' && c != '\'');
		if (attr)
			FZ_ASSERT(c != '`' && c != '=' && (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') &&
			          c != 0x7f);
	}
	char *back = malloc(out_len + 1);
	FZ_ASSERT(back != NULL);
	size_t bl = unescape(out, out_len, back);
	FZ_ASSERT(valid_utf8(back, bl, 1));
	if (valid_utf8(in, n, 0))
		FZ_ASSERT(bl == n && memcmp(back, in, n) == 0);
	free(back);

	/* exactly enough room works, one byte less is refused */
	char *tight = malloc(out_len + 1);
	FZ_ASSERT(tight != NULL);
	size_t l2 = 0;
	r = attr ? csrf_html_escape_attr(in, n, tight, out_len + 1, &l2)
	         : csrf_html_escape(in, n, tight, out_len + 1, &l2);
	FZ_ASSERT(r == CSRF_OK && l2 == out_len && memcmp(tight, out, out_len) == 0);
	r = attr ? csrf_html_escape_attr(in, n, tight, out_len, &l2) : csrf_html_escape(in, n, tight, out_len, &l2);
	FZ_ASSERT(r == CSRF_ERR_BUFFER);
	free(tight);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = fz_dup(data, size);
	check(0, in, size);
	check(1, in, size);
	free(in);
	return 0;
}
