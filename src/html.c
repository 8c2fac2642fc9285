/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * html.c - escaping text for HTML text nodes (csrf_html_escape) and
 * double-quoted attribute values (csrf_html_escape_attr). Both validate
 * UTF-8 as they go: whatever is not well-formed (overlongs, surrogates,
 * code points over U+10FFFF, truncated sequences) and NUL become U+FFFD,
 * so the output is always valid UTF-8 and never half an escape.
 */
#include "internal.h"

#include <stdio.h>

static const char REPLACEMENT[] = "\xef\xbf\xbd"; /* U+FFFD */

/* Length (1..4) of the well-formed UTF-8 sequence at p, or 0 when there is
 * none; then *bad is the length of the maximal ill-formed subpart (Unicode
 * 3.9, "U+FFFD substitution of maximal subparts"), which one U+FFFD
 * replaces. */
static size_t utf8_seq(const unsigned char *p, size_t n, size_t *bad)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xbf;
	size_t need;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		need = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* over U+10FFFF */
	} else {
		*bad = 1; /* continuation byte, C0, C1 or F5..FF lead */
		return 0;
	}
	for (size_t i = 1; i < need; i++) {
		unsigned char d = i < n ? p[i] : 0;
		unsigned char l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xbf;
		if (i >= n || d < l || d > h) {
			*bad = i;
			return 0;
		}
	}
	return need;
}

/* Output with its capacity: counts everything, writes what fits, so the
 * caller can refuse an overflowing result whole. */
typedef struct {
	char *p;
	size_t cap; /* usable bytes, without the NUL */
	size_t n;
} writer;

/* The ASCII bytes that stand for themselves: not markup, a quote or NUL;
 * in attributes also not a backtick, an equals sign or a control
 * character other than tab, LF and CR. A table of 256 flags (bit 0: in
 * text, bit 1: in an attribute), written out by the macros below so the
 * rule stays in one place; bytes from 0x80 go to the UTF-8 check. The
 * switch in escape() handles every byte that is not plain; the table
 * only lets runs of plain bytes be copied whole. */
#define PLAIN_TEXT 1u
#define PLAIN_ATTR 2u
#define MARKUP(c) ((c) == 0 || (c) == '"' || (c) == '&' || (c) == '\'' || (c) == '<' || (c) == '>')
#define ATTR_ONLY(c)                                                                                                   \
	((c) == '`' || (c) == '=' || (c) == 0x7f || ((c) < 0x20 && (c) != '\t' && (c) != '\n' && (c) != '\r'))
#define P(c) ((c) >= 0x80 || MARKUP(c) ? 0u : PLAIN_TEXT | (ATTR_ONLY(c) ? 0u : PLAIN_ATTR))
#define P4(c) P(c), P((c) + 1), P((c) + 2), P((c) + 3)
#define P16(c) P4(c), P4((c) + 4), P4((c) + 8), P4((c) + 12)
#define P64(c) P16(c), P16((c) + 16), P16((c) + 32), P16((c) + 48)
static const unsigned char plain[256] = {P64(0), P64(64), P64(128), P64(192)};
#undef P64
#undef P16
#undef P4
#undef P
#undef ATTR_ONLY
#undef MARKUP

static size_t plain_run(const unsigned char *p, size_t len, unsigned flag)
{
	size_t i = 0;
	while (i + 4 <= len && (plain[p[i]] & plain[p[i + 1]] & plain[p[i + 2]] & plain[p[i + 3]] & flag))
		i += 4;
	while (i < len && (plain[p[i]] & flag))
		i++;
	return i;
}

static void put(writer *w, const char *s, size_t n)
{
	if (n <= w->cap && w->n <= w->cap - n)
		memcpy(w->p + w->n, s, n);
	w->n += n;
}

static csrf_reason escape(const char *in, size_t len, char *out, size_t cap, size_t *out_len, int attr)
{
	if (out_len)
		*out_len = 0;
	if (out && cap)
		out[0] = '\0';
	if ((!in && len) || (!out && cap))
		return CSRF_ERR_ARG;
	if (cap == 0)
		return CSRF_ERR_BUFFER;
	writer w = {out, cap - 1, 0};
	const unsigned char *p = (const unsigned char *)in;
	size_t i = 0;
	while (i < len) {
		/* A run of bytes that stand for themselves is copied whole. */
		size_t run = plain_run(p + i, len - i, attr ? PLAIN_ATTR : PLAIN_TEXT);
		if (run > 0) {
			put(&w, in + i, run);
			i += run;
			continue;
		}
		unsigned char c = p[i];
		const char *rep = NULL;
		char num[8];
		switch (c) {
		case '&':
			rep = "&amp;";
			break;
		case '<':
			rep = "&lt;";
			break;
		case '>':
			rep = "&gt;";
			break;
		case '"':
			rep = "&quot;";
			break;
		case '\'':
			rep = "&#39;";
			break;
		case '\0':
			rep = REPLACEMENT;
			break;
		case '`':
			rep = attr ? "&#96;" : NULL;
			break;
		case '=':
			rep = attr ? "&#61;" : NULL;
			break;
		default:
			/* An ASCII byte the table keeps out of attributes that no case
			 * above names: a control character or DEL. */
			if (attr && c < 0x80) {
				snprintf(num, sizeof num, "&#%u;", (unsigned)c);
				rep = num;
			}
			break;
		}
		if (rep) {
			put(&w, rep, strlen(rep));
			i++;
			continue;
		}
		size_t bad = 0, n = utf8_seq(p + i, len - i, &bad);
		if (n == 0) {
			put(&w, REPLACEMENT, 3);
			i += bad;
		} else {
			put(&w, in + i, n);
			i += n;
		}
	}
	if (w.n > w.cap) {
		out[0] = '\0';
		return CSRF_ERR_BUFFER;
	}
	out[w.n] = '\0';
	if (out_len)
		*out_len = w.n;
	return CSRF_OK;
}

CSRF_API csrf_reason csrf_html_escape(const char *in, size_t len, char *out, size_t cap, size_t *out_len)
{
	return escape(in, len, out, cap, out_len, 0);
}

CSRF_API csrf_reason csrf_html_escape_attr(const char *in, size_t len, char *out, size_t cap, size_t *out_len)
{
	return escape(in, len, out, cap, out_len, 1);
}
