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

int csrfi_ieq(const char *p, size_t n, const char *lit)
{
	return csrfi_slice_ieq((csrf_slice){p ? p : "", n}, lit);
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

int csrfi_slice_ieq(csrf_slice s, const char *lit)
{
	size_t n = strlen(lit);
	if (!s.ptr || s.len != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (csrfi_lower((unsigned char)s.ptr[i]) != csrfi_lower((unsigned char)lit[i]))
			return 0;
	return 1;
}

int csrfi_slice_eq(csrf_slice s, const char *lit)
{
	size_t n = strlen(lit);
	return s.ptr && s.len == n && memcmp(s.ptr, lit, n) == 0;
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
