/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * text.c - the small text helpers every parser of src/ uses, in one
 * place: token characters, hex digits, case-insensitive comparison,
 * trimming, and the one strict decimal parser.
 */
#include "internal.h"

int csrfi_is_tchar(unsigned char c)
{
	if (csrfi_is_alpha(c) || csrfi_is_digit(c))
		return 1;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

int csrfi_is_token(const char *s, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!csrfi_is_tchar((unsigned char)s[i]))
			return 0;
	return 1;
}

int csrfx_hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int csrfi_contains_ci(const char *p, size_t n, const char *word)
{
	size_t l = strlen(word);
	for (size_t i = 0; i + l <= n; i++)
		if (csrfi_ieq(p + i, l, word))
			return 1;
	return 0;
}

void csrfi_trim_ptrs(const char **p, const char **end)
{
	while (*p < *end && csrfi_is_ows(**p))
		(*p)++;
	while (*end > *p && csrfi_is_ows((*end)[-1]))
		(*end)--;
}

/* Eight bytes with A-Z lower-cased and every other byte kept: per byte,
 * its low seven bits plus 0x3f reach 0x80 from 'A' on, plus 0x25 from
 * one past 'Z' on (no carry leaves a byte), and a byte of its own with
 * the high bit set is no letter; 0x20 goes onto the letters. */
static inline uint64_t lower8(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101u;
	uint64_t low = x & (0x7f * ones);
	uint64_t upper = (low + 0x3f * ones) & ~(low + 0x25 * ones) & ~x & (0x80 * ones);
	return x | (upper >> 2);
}

int csrfi_mem_ieq(const char *a, const char *b, size_t n)
{
	uint64_t x, y;
	size_t i = 0;

	if (n >= 8) {
		for (; i + 8 <= n; i += 8) {
			memcpy(&x, a + i, 8);
			memcpy(&y, b + i, 8);
			if (lower8(x) != lower8(y))
				return 0;
		}
		if (i == n)
			return 1;
		/* the last eight bytes, overlapping the compared ones */
		memcpy(&x, a + n - 8, 8);
		memcpy(&y, b + n - 8, 8);
		return lower8(x) == lower8(y);
	}
	for (; i < n; i++)
		if (csrfi_lower((unsigned char)a[i]) != csrfi_lower((unsigned char)b[i]))
			return 0;
	return 1;
}

csrf_reason csrfx_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	if (!s || len == 0 || len > 20 || (len > 1 && s[0] == '0'))
		return CSRF_MALFORMED;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned)(unsigned char)s[i] - '0';
		if (d > 9 || d > max || v > (max - d) / 10)
			return CSRF_MALFORMED;
		v = v * 10 + d;
	}
	*out = v;
	return CSRF_OK;
}

csrf_reason csrfx_parse_i64(const char *s, size_t len, int64_t *out)
{
	uint64_t v;
	if (s && len > 0 && s[0] == '-') {
		/* "-0" is no number Redis writes either. */
		if (csrfx_parse_u64(s + 1, len - 1, (uint64_t)INT64_MAX + 1, &v) != CSRF_OK || v == 0)
			return CSRF_MALFORMED;
		*out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
		return CSRF_OK;
	}
	if (csrfx_parse_u64(s, len, INT64_MAX, &v) != CSRF_OK)
		return CSRF_MALFORMED;
	*out = (int64_t)v;
	return CSRF_OK;
}

csrf_slice csrfi_trim(csrf_slice s)
{
	if (!s.ptr)
		return s;
	while (s.len && csrfi_is_ows(s.ptr[0])) {
		s.ptr++;
		s.len--;
	}
	while (s.len && csrfi_is_ows(s.ptr[s.len - 1]))
		s.len--;
	return s;
}
