/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cache.c - what a response that carries a token does with its cache
 * headers, so that no shared cache stores the page with one user's token
 * and serves it to another: Cache-Control read as RFC 9111 §5.2 writes it
 * (only an unqualified "private" or "no-store" keeps a page out of shared
 * caches), and the targeted fields that CDNs and proxies honour over
 * Cache-Control (RFC 9213 and its forerunners) dropped.
 */
#include "internal.h"

/* What one Cache-Control line says. */
typedef enum {
	CC_MALFORMED = -1, /* not a list of directives, or too long to judge */
	CC_SHARED = 0,     /* a list in which nothing keeps the page private */
	CC_PRIVATE = 1     /* "private" or "no-store" without an argument */
} cc_verdict;

/* quoted-string (RFC 9110 §5.6.4) from v[*i], the opening quote: *i past
 * the closing one. 0, or -1 when the string is bad or unterminated. */
static int quoted_string(const char *v, size_t len, size_t *i)
{
	for (size_t k = *i + 1; k < len; k++) {
		unsigned char c = (unsigned char)v[k];
		if (c == '"') {
			*i = k + 1;
			return 0;
		}
		if (c == '\\') {
			/* quoted-pair: a backslash and HTAB, SP, VCHAR or obs-text */
			if (++k == len)
				return -1;
			c = (unsigned char)v[k];
		}
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return -1;
	}
	return -1;
}

/* Cache-Control = #cache-directive; cache-directive = token [ "=" ( token
 * / quoted-string ) ] (RFC 9111 §5.2), elements separated by OWS "," OWS
 * and possibly empty (RFC 9110 §5.6.1). Names in any case; no whitespace
 * around "=". A quoted comma separates nothing. */
static cc_verdict cache_control_line(const char *v, size_t len)
{
	cc_verdict verdict = CC_SHARED;
	size_t i = 0;

	if (len > CSRF_CACHE_CONTROL_MAX)
		return CC_MALFORMED;
	for (;;) {
		while (i < len && (csrfi_is_ows(v[i]) || v[i] == ','))
			i++;
		if (i == len)
			return verdict;
		size_t start = i;
		while (i < len && csrfi_is_tchar((unsigned char)v[i]))
			i++;
		if (i == start)
			return CC_MALFORMED;
		csrf_slice name = {v + start, i - start};
		int argument = i < len && v[i] == '=';
		if (argument) {
			i++;
			if (i < len && v[i] == '"') {
				if (quoted_string(v, len, &i) != 0)
					return CC_MALFORMED;
			} else {
				size_t arg = i;
				while (i < len && csrfi_is_tchar((unsigned char)v[i]))
					i++;
				if (i == arg)
					return CC_MALFORMED;
			}
		}
		/* private="Set-Cookie" makes only the named fields private
		 * (§5.2.2.7); no-store takes no argument, and one with an
		 * argument is not the directive a cache is sure to honour. */
		if (!argument && (csrfi_slice_ieq(name, "private") || csrfi_slice_ieq(name, "no-store")))
			verdict = CC_PRIVATE;
		while (i < len && csrfi_is_ows(v[i]))
			i++;
		if (i < len && v[i] != ',')
			return CC_MALFORMED;
	}
}

/* 1 when a Cache-Control line says no-store the way browsers find it in
 * their own cache's reading (Firefox looks for the token between spaces,
 * tabs, commas and semicolons, even in a line RFC 9111 would call
 * malformed): a line that is replaced must not take it along. */
static int says_no_store(const char *v, size_t len)
{
	static const char word[] = "no-store", seps[] = " \t,;";
	size_t n = sizeof word - 1;

	for (size_t i = 0; i + n <= len; i++) {
		if (i > 0 && !memchr(seps, v[i - 1], sizeof seps - 1))
			continue;
		if (csrfi_ieq(v + i, n, word) && (i + n == len || memchr(seps, v[i + n], sizeof seps - 1)))
			return 1;
	}
	return 0;
}

CSRF_API int csrf_cache_control_is_private(const char *value, size_t len)
{
	if (!value)
		return 0;
	return cache_control_line(value, len) == CC_PRIVATE;
}

/* A targeted cache field: any name ending in "-Cache-Control" (RFC 9213's
 * CDN-Cache-Control and the fields it lets a CDN define for itself, such
 * as Cloudflare-CDN-Cache-Control), Surrogate-Control (Edge Architecture:
 * Fastly, Varnish, Akamai), Akamai's Edge-Control, and nginx's
 * X-Accel-Expires (its proxy cache prefers it to Cache-Control). */
static int targeted(csrf_slice name)
{
	static const char suffix[] = "-cache-control";
	size_t n = sizeof suffix - 1;

	if (name.len >= n && csrfi_slice_ieq((csrf_slice){name.ptr + name.len - n, n}, suffix))
		return 1;
	return csrfi_slice_ieq(name, "Surrogate-Control") || csrfi_slice_ieq(name, "Edge-Control") ||
	       csrfi_slice_ieq(name, "X-Accel-Expires");
}

/* The arguments of csrf_response_cache and csrf_rejection_cache: CSRF_OK,
 * or CSRF_ERR_ARG with *add absent (drop untouched). */
static csrf_reason cache_args(const csrf_header *headers, size_t n, const unsigned char *drop, csrf_slice *add)
{
	if (add) {
		add->ptr = NULL;
		add->len = 0;
	}
	if (!add || (n > 0 && (!headers || !drop)))
		return CSRF_ERR_ARG;
	for (size_t i = 0; i < n; i++)
		if ((!headers[i].name.ptr && headers[i].name.len > 0) ||
		    (!headers[i].value.ptr && headers[i].value.len > 0))
			return CSRF_ERR_ARG;
	return CSRF_OK;
}

/* drop[i] for each header that goes: every targeted field, and with
 * replace the Cache-Control lines and Expires as well. */
static void mark_drops(const csrf_header *headers, size_t n, unsigned char *drop, int replace)
{
	for (size_t i = 0; i < n; i++) {
		csrf_slice name = headers[i].name;
		drop[i] = (unsigned char)(targeted(name) || (replace && (csrfi_slice_ieq(name, "Cache-Control") ||
		                                                         csrfi_slice_ieq(name, "Expires"))));
	}
}

CSRF_API csrf_reason csrf_response_cache(const csrf_header *headers, size_t n, unsigned char *drop, csrf_slice *add)
{
	size_t lines = 0;
	int kept = 0, no_store = 0;

	if (cache_args(headers, n, drop, add) != CSRF_OK)
		return CSRF_ERR_ARG;

	/* Lines of one field are one list (RFC 9110 §5.3), but a cache may
	 * read only the first ("public, max-age=600" then "private"), and a
	 * quote left open in one would swallow the "private" of the next:
	 * only a single line is trusted, and it must be a clean list. */
	for (size_t i = 0; i < n; i++) {
		if (!csrfi_slice_ieq(headers[i].name, "Cache-Control"))
			continue;
		lines++;
		no_store |= headers[i].value.ptr && says_no_store(headers[i].value.ptr, headers[i].value.len);
		kept = cache_control_line(headers[i].value.ptr ? headers[i].value.ptr : "", headers[i].value.len) ==
		       CC_PRIVATE;
	}
	kept = kept && lines == 1;

	/* Expires goes with a replaced Cache-Control: a cache that reads
	 * Expires and not the new "private" would keep the page. Beside a
	 * kept private line it stays: no shared cache stores a response
	 * that says private or no-store (RFC 9111 §3). */
	mark_drops(headers, n, drop, !kept);
	if (!kept) {
		/* a no-store of a replaced line stays: private alone would let
		 * the browser's cache keep what the application never wanted
		 * stored */
		add->ptr = no_store ? "private, no-store" : "private";
		add->len = strlen(add->ptr);
	}
	return CSRF_OK;
}

CSRF_API csrf_reason csrf_rejection_cache(const csrf_header *headers, size_t n, unsigned char *drop, csrf_slice *add)
{
	if (cache_args(headers, n, drop, add) != CSRF_OK)
		return CSRF_ERR_ARG;
	mark_drops(headers, n, drop, 1);
	add->ptr = CSRF_REJECT_PAGE_CACHE_CONTROL;
	add->len = sizeof CSRF_REJECT_PAGE_CACHE_CONTROL - 1;
	return CSRF_OK;
}
