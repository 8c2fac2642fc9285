/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * referrer.c - reading a referrer policy the way browsers read it (the
 * Referrer-Policy header and <meta name="referrer">), to tell whether a
 * page's own forms will say "Origin: null" on plain HTTP: only
 * no-referrer does that to a same-origin POST (Fetch, "append a request
 * Origin header"). The raise to same-origin itself is the adapter's (the
 * header) and the injector's (the meta).
 */
#include "internal.h"

static const struct {
	const char *name;
	csrf_referrer_policy policy;
	int legacy; /* a <meta> keyword only (HTML's legacy table) */
} policies[] = {
    {"no-referrer", CSRF_REFERRER_NO_REFERRER, 0},
    {"no-referrer-when-downgrade", CSRF_REFERRER_NO_REFERRER_WHEN_DOWNGRADE, 0},
    {"same-origin", CSRF_REFERRER_SAME_ORIGIN, 0},
    {"origin", CSRF_REFERRER_ORIGIN, 0},
    {"strict-origin", CSRF_REFERRER_STRICT_ORIGIN, 0},
    {"origin-when-cross-origin", CSRF_REFERRER_ORIGIN_WHEN_CROSS_ORIGIN, 0},
    {"strict-origin-when-cross-origin", CSRF_REFERRER_STRICT_ORIGIN_WHEN_CROSS_ORIGIN, 0},
    {"unsafe-url", CSRF_REFERRER_UNSAFE_URL, 0},
    {"never", CSRF_REFERRER_NO_REFERRER, 1},
    {"default", CSRF_REFERRER_STRICT_ORIGIN_WHEN_CROSS_ORIGIN, 1},
    {"always", CSRF_REFERRER_UNSAFE_URL, 1},
    {"origin-when-crossorigin", CSRF_REFERRER_ORIGIN_WHEN_CROSS_ORIGIN, 1},
};

/* Whitespace around a token: Chromium strips all of it (also in a
 * <meta> content, where LF and FF can be). */
static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static csrf_referrer_policy token_policy(const char *p, size_t n, int legacy)
{
	while (n > 0 && is_space(*p)) {
		p++;
		n--;
	}
	while (n > 0 && is_space(p[n - 1]))
		n--;
	for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++)
		if ((legacy || !policies[i].legacy) && csrfi_ieq(p, n, policies[i].name))
			return policies[i].policy;
	return CSRF_REFERRER_UNSET;
}

csrf_referrer_policy csrfi_referrer_scan(const char *value, size_t len, int legacy, csrf_referrer_policy prev)
{
	if (!value)
		return prev;
	size_t from = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && value[i] != ',')
			continue;
		csrf_referrer_policy p = token_policy(value + from, i - from, legacy);
		if (p != CSRF_REFERRER_UNSET)
			prev = p;
		from = i + 1;
	}
	return prev;
}

CSRF_API csrf_referrer_policy csrf_referrer_policy_parse(const char *value, size_t len, csrf_referrer_policy prev)
{
	return csrfi_referrer_scan(value, len, 0, prev);
}

CSRF_API int csrf_referrer_raises(const char *value, size_t len)
{
	return csrfi_referrer_scan(value, len, 0, CSRF_REFERRER_UNSET) == CSRF_REFERRER_NO_REFERRER;
}

CSRF_API csrf_reason csrf_response_referrer(const csrf_header *headers, size_t n, unsigned char *raise)
{
	if (n > 0 && (!headers || !raise))
		return CSRF_ERR_ARG;
	csrf_referrer_policy p = CSRF_REFERRER_UNSET;
	for (size_t i = 0; i < n; i++) {
		if (!headers[i].name.ptr && headers[i].name.len)
			return CSRF_ERR_ARG;
		if (!headers[i].value.ptr && headers[i].value.len)
			return CSRF_ERR_ARG;
	}
	for (size_t i = 0; i < n; i++)
		if (csrfi_slice_ieq(headers[i].name, "Referrer-Policy"))
			p = csrfi_referrer_scan(headers[i].value.ptr, headers[i].value.len, 0, p);
	for (size_t i = 0; i < n; i++)
		raise[i] = p == CSRF_REFERRER_NO_REFERRER && csrfi_slice_ieq(headers[i].name, "Referrer-Policy");
	return CSRF_OK;
}
