/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cookie.c - reading one cookie out of a Cookie request header
 * (csrf_cookie_get), tolerant the way real servers are: optional spaces,
 * pairs without '=' skipped, quoted values unwrapped.
 */
#include "internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* A Cookie header longer than this is refused outright; browsers send at
 * most a few KiB, and the cap bounds the work an attacker can ask for. */
#define COOKIE_HEADER_MAX (16 * 1024)
/* Requested names longer than this never match anything. */
#define COOKIE_NAME_MAX 256

/* Control characters other than tab, and DEL, have no place in a Cookie
 * header; a header carrying them was not sent by a browser. */
static int is_bad_ctl(unsigned char c)
{
	return (c < 0x20 && c != '\t') || c == 0x7f;
}

/* 1 when (p, n) holds a byte is_bad_ctl refuses: sixteen bytes at a
 * time where SSE2 is there (unsigned: a byte is below 0x20 when it
 * saturates to zero less 0x1f), then eight, the rest one by one (a Cookie
 * header of a real site is a few hundred bytes to a few KiB, read again
 * for every cookie looked up). Eight at a time, per byte, exactly: its
 * low seven bits plus 0x60 stay below 0x80 only under 0x20, and a byte
 * equal to t is zero after ^ t (its low seven bits plus 0x7f, or-ed with
 * itself, stay below 0x80 only then); no sum carries out of its byte. */
static int has_bad_ctl(const char *p, size_t n)
{
	const uint64_t ones = 0x0101010101010101u, low7 = 0x7f * ones, high = 0x80 * ones;
	size_t i = 0;

#if defined(__SSE2__)
	for (; i + 16 <= n; i += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
		__m128i below = _mm_cmpeq_epi8(_mm_subs_epu8(x, _mm_set1_epi8(0x1f)), _mm_setzero_si128());
		__m128i tab = _mm_cmpeq_epi8(x, _mm_set1_epi8(0x09));
		__m128i del = _mm_cmpeq_epi8(x, _mm_set1_epi8(0x7f));
		if (_mm_movemask_epi8(_mm_or_si128(_mm_andnot_si128(tab, below), del)))
			return 1;
	}
#endif
	for (; i + 8 <= n; i += 8) {
		uint64_t x, tab, del;
		memcpy(&x, p + i, 8);
		tab = x ^ (0x09 * ones);
		del = x ^ (0x7f * ones);
		uint64_t below = ~((x & low7) + 0x60 * ones) & ~x & high;
		uint64_t is_tab = ~(((tab & low7) + low7) | tab) & high;
		uint64_t is_del = ~(((del & low7) + low7) | del) & high;
		if ((below & ~is_tab) | is_del)
			return 1;
	}
	for (; i < n; i++)
		if (is_bad_ctl((unsigned char)p[i]))
			return 1;
	return 0;
}

/* The pairs of (p, end) after the header's checks: the first whose name
 * is name in *value (CSRF_OK), or CSRF_NOT_FOUND; with once, a second
 * one after it makes CSRF_COOKIE_AMBIGUOUS (the walk goes on from the
 * pair after the first match, as a second lookup from the end of its
 * value would: what lies between is blanks or a closing quote). */
static csrf_reason find_pairs(const char *p, const char *end, const char *name, size_t name_len, int once,
                              csrf_slice *value)
{
	while (p < end) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		const char *pair_end = semi ? semi : end;
		const char *eq = memchr(p, '=', (size_t)(pair_end - p));
		if (eq) {
			const char *n = p, *n_end = eq;
			csrfi_trim_ptrs(&n, &n_end);
			if ((size_t)(n_end - n) == name_len && memcmp(n, name, name_len) == 0) {
				if (value->ptr)
					return CSRF_COOKIE_AMBIGUOUS;
				const char *v = eq + 1, *v_end = pair_end;
				csrfi_trim_ptrs(&v, &v_end);
				if (v_end - v >= 2 && v[0] == '"' && v_end[-1] == '"') {
					v++;
					v_end--;
				}
				value->ptr = v;
				value->len = (size_t)(v_end - v);
				if (!once)
					return CSRF_OK;
			}
		}
		p = semi ? semi + 1 : end;
	}
	return value->ptr ? CSRF_OK : CSRF_NOT_FOUND;
}

/* csrf_cookie_get's checks of the header, then the walk. */
static csrf_reason cookie_find(const char *header, size_t len, const char *name, size_t name_len, int once,
                               csrf_slice *value)
{
	value->ptr = NULL;
	value->len = 0;
	if ((!header && len) || !name || name_len == 0)
		return CSRF_ERR_ARG;
	if (len > COOKIE_HEADER_MAX)
		return CSRF_TOO_LARGE;
	if (has_bad_ctl(header, len))
		return CSRF_MALFORMED;
	if (name_len > COOKIE_NAME_MAX || len == 0)
		return CSRF_NOT_FOUND;
	csrf_reason r = find_pairs(header, header + len, name, name_len, once, value);
	if (r != CSRF_OK) {
		value->ptr = NULL;
		value->len = 0;
	}
	return r;
}

CSRF_API csrf_reason csrf_cookie_get(const char *header, size_t len, const char *name, size_t name_len,
                                     csrf_slice *value)
{
	if (!value)
		return CSRF_ERR_ARG;
	return cookie_find(header, len, name, name_len, 0, value);
}

csrf_reason csrfi_cookie_get_once(const char *header, size_t len, const char *name, size_t name_len, csrf_slice *value)
{
	return cookie_find(header, len, name, name_len, 1, value);
}
