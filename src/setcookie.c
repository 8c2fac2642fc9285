/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * setcookie.c - building Set-Cookie header values (csrf_set_cookie_build):
 * name and value validated against RFC 6265, attributes in one fixed
 * order, and the rules browsers enforce for the __Host- and __Secure-
 * prefixes and SameSite=None applied before anything is written.
 */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>

#define COOKIE_NAME_MAX 256
#define COOKIE_PATH_MAX 1024

/* RFC 6265 cookie-octet: printable US-ASCII except DQUOTE, comma,
 * semicolon and backslash. */
static int is_cookie_octet(unsigned char c)
{
	return c >= 0x21 && c <= 0x7e && c != '"' && c != ',' && c != ';' && c != '\\';
}

static int has_prefix_ci(const char *s, size_t n, const char *prefix)
{
	size_t l = strlen(prefix);
	return n >= l && csrfi_ieq(s, l, prefix);
}

/* Output with its capacity; an overflow is remembered, never written. */
typedef struct {
	char *p;
	size_t cap; /* usable bytes, without the NUL */
	size_t n;
	int over;
} writer;

static void put(writer *w, const char *s, size_t n)
{
	if (n == 0)
		return;
	if (w->over || n > w->cap - w->n) {
		w->over = 1;
		return;
	}
	memcpy(w->p + w->n, s, n);
	w->n += n;
}

static void puts_(writer *w, const char *s)
{
	put(w, s, strlen(s));
}

CSRF_API csrf_reason csrf_set_cookie_build(const char *name, const char *value, size_t value_len,
                                           const csrf_cookie_opts *opts, char *out, size_t cap, size_t *out_len)
{
	if (out_len)
		*out_len = 0;
	if (out && cap)
		out[0] = '\0';
	if (!name || (!value && value_len) || (!out && cap))
		return CSRF_ERR_ARG;
	csrf_cookie_opts o = {0};
	if (opts)
		o = *opts;
	if (o.same_site != CSRF_SAMESITE_LAX && o.same_site != CSRF_SAMESITE_STRICT &&
	    o.same_site != CSRF_SAMESITE_NONE)
		return CSRF_ERR_ARG;

	size_t name_len = strnlen(name, COOKIE_NAME_MAX + 1);
	if (name_len == 0 || name_len > COOKIE_NAME_MAX)
		return CSRF_MALFORMED;
	for (size_t i = 0; i < name_len; i++)
		if (!csrfi_is_tchar((unsigned char)name[i]))
			return CSRF_MALFORMED;
	for (size_t i = 0; i < value_len; i++)
		if (!is_cookie_octet((unsigned char)value[i]))
			return CSRF_MALFORMED;

	const char *path = o.path ? o.path : "/";
	size_t path_len = strnlen(path, COOKIE_PATH_MAX + 1);
	if (path_len == 0 || path_len > COOKIE_PATH_MAX || path[0] != '/')
		return CSRF_ERR_ARG;
	for (size_t i = 0; i < path_len; i++) {
		unsigned char c = (unsigned char)path[i];
		if (c < 0x20 || c >= 0x7f || c == ';')
			return CSRF_ERR_ARG;
	}

	/* Browsers drop a __Host- cookie without Secure or with another path,
	 * a __Secure- one without Secure, and SameSite=None without Secure:
	 * refuse to build what would silently not be stored. User agents
	 * recognise both prefixes case-insensitively (draft-ietf-httpbis-
	 * rfc6265bis, "Storage Model", since draft 11: httpwg/http-extensions
	 * PR 2236), so "__host-x" is a __Host- cookie: held to its rules here
	 * and never prefixed a second time below. */
	int host_cookie = o.host_prefix || has_prefix_ci(name, name_len, "__Host-");
	if (host_cookie && (!o.secure || path_len != 1))
		return CSRF_ERR_ARG;
	if (has_prefix_ci(name, name_len, "__Secure-") && !o.secure)
		return CSRF_ERR_ARG;
	if (o.same_site == CSRF_SAMESITE_NONE && !o.secure)
		return CSRF_ERR_ARG;

	if (cap == 0)
		return CSRF_ERR_BUFFER;
	writer w = {out, cap - 1, 0, 0};
	if (o.host_prefix && !has_prefix_ci(name, name_len, "__Host-"))
		puts_(&w, "__Host-");
	put(&w, name, name_len);
	puts_(&w, "=");
	put(&w, value, value_len);
	puts_(&w, "; Path=");
	put(&w, path, path_len);
	if (o.max_age != 0) {
		char num[32];
		int k = snprintf(num, sizeof num, "; Max-Age=%" PRId64, o.max_age < 0 ? (int64_t)0 : o.max_age);
		if (k < 0 || (size_t)k >= sizeof num)
			return CSRF_ERR_INTERNAL;
		put(&w, num, (size_t)k);
	}
	if (o.secure)
		puts_(&w, "; Secure");
	if (o.http_only)
		puts_(&w, "; HttpOnly");
	puts_(&w, o.same_site == CSRF_SAMESITE_STRICT ? "; SameSite=Strict"
	          : o.same_site == CSRF_SAMESITE_NONE ? "; SameSite=None"
	                                              : "; SameSite=Lax");
	if (w.over) {
		out[0] = '\0';
		return CSRF_ERR_BUFFER;
	}
	out[w.n] = '\0';
	if (out_len)
		*out_len = w.n;
	return CSRF_OK;
}
