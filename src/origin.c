/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * origin.c - serialized origins ("https://host:port") and the origin of an
 * absolute URL such as a Referer: parsing into a normalised csrf_origin
 * (lower case, explicit port, canonical IPv6, no final dot) and comparing
 * two of them.
 * Anything a browser would not send as an origin is malformed rather
 * than guessed at.
 */
#include "internal.h"

#include <arpa/inet.h>

/* "[" IPv6 "]" ":" 65535, and a 255-byte host: nothing longer can be an
 * authority worth parsing. */
#define AUTHORITY_MAX (255 + 1 + 5)
#define HOST_MAX 255

/* "http" or "https" followed by "://", in any case: the scheme into o,
 * the default port, and *rest after "://". 0 on success, -1 otherwise. */
static int parse_scheme(const char *s, size_t len, csrf_origin *o, const char **rest)
{
	if (len >= 7 && csrfi_ieq(s, 7, "http://")) {
		memcpy(o->scheme, "http", 5);
		o->port = 80;
		*rest = s + 7;
		return 0;
	}
	if (len >= 8 && csrfi_ieq(s, 8, "https://")) {
		memcpy(o->scheme, "https", 6);
		o->port = 443;
		*rest = s + 8;
		return 0;
	}
	return -1;
}

/* A decimal port 1..65535 without leading zeros. */
static int parse_port(const char *p, const char *e, uint16_t *port)
{
	size_t n = (size_t)(e - p);
	if (n == 0 || n > 5 || p[0] == '0')
		return -1;
	uint32_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (!csrfi_is_digit((unsigned char)p[i]))
			return -1;
		v = v * 10 + (uint32_t)(p[i] - '0');
	}
	if (v > 65535)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

/* A dotted-quad IPv4 literal in its canonical form (4 parts, 0..255, no
 * leading zeros: "010" would be octal to some parsers). */
static int valid_ipv4(const char *p, size_t n)
{
	int parts = 0;
	size_t i = 0;
	while (parts < 4) {
		size_t start = i;
		uint32_t v = 0;
		while (i < n && csrfi_is_digit((unsigned char)p[i]) && i - start < 3)
			v = v * 10 + (uint32_t)(p[i++] - '0');
		size_t d = i - start;
		if (d == 0 || v > 255 || (d > 1 && p[start] == '0'))
			return 0;
		parts++;
		if (parts < 4) {
			if (i >= n || p[i] != '.')
				return 0;
			i++;
		}
	}
	return i == n;
}

/* A reg-name (letters, digits, '-', '.'; no empty labels except a final
 * dot) or an IPv4 literal, lower-cased into host. A name whose last label
 * is numeric must be a valid IPv4 literal: URL parsers read such names
 * as addresses ("1.2.3", "0x7f.1"). A final dot is dropped: "wiki.lan."
 * is the same DNS name as "wiki.lan", which only its holder can serve,
 * and nginx drops it from Host too; browsers keep it in the Origin, so a
 * page reached as http://wiki.lan.:8080 would otherwise fail against a
 * configured http://wiki.lan:8080. */
static int parse_reg_host(const char *p, size_t n, char host[HOST_MAX + 1])
{
	if (n == 0 || n > HOST_MAX)
		return -1;
	size_t label = 0;
	int last_numeric = 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		host[i] = (char)csrfi_lower(c);
		if (c == '.') {
			if (label == 0)
				return -1;
			if (i + 1 < n) { /* a final dot ends the last label */
				label = 0;
				last_numeric = 1;
			}
			continue;
		}
		if (!csrfi_is_alpha(c) && !csrfi_is_digit(c) && c != '-')
			return -1;
		if (!csrfi_is_digit(c))
			last_numeric = 0;
		label++;
	}
	if (last_numeric && !valid_ipv4(p, n))
		return -1;
	if (host[n - 1] == '.')
		n--;
	host[n] = '\0';
	return 0;
}

/* "[" IPv6 "]": validated by inet_pton (no zone identifiers) and written
 * back in canonical form, so "[0:0::1]" and "[::1]" are the same host. */
static int parse_ipv6_host(const char *p, size_t n, char host[HOST_MAX + 1])
{
	char buf[INET6_ADDRSTRLEN];
	if (n < 2 || n - 2 >= sizeof buf)
		return -1;
	for (size_t i = 1; i + 1 < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (!csrfi_is_digit(c) && !((char)csrfi_lower(c) >= 'a' && (char)csrfi_lower(c) <= 'f') && c != ':' &&
		    c != '.')
			return -1;
	}
	memcpy(buf, p + 1, n - 2);
	buf[n - 2] = '\0';
	struct in6_addr a;
	if (inet_pton(AF_INET6, buf, &a) != 1)
		return -1;
	if (!inet_ntop(AF_INET6, &a, buf, sizeof buf))
		return -1;
	size_t l = strlen(buf);
	host[0] = '[';
	memcpy(host + 1, buf, l);
	host[l + 1] = ']';
	host[l + 2] = '\0';
	return 0;
}

/* host[:port], exactly [p, e). */
static int parse_authority(const char *p, const char *e, csrf_origin *o)
{
	size_t n = (size_t)(e - p);
	if (n == 0 || n > AUTHORITY_MAX)
		return -1;
	const char *host_end;
	if (p[0] == '[') {
		const char *rb = memchr(p, ']', n);
		if (!rb)
			return -1;
		host_end = rb + 1;
		if (parse_ipv6_host(p, (size_t)(host_end - p), o->host) < 0)
			return -1;
	} else {
		const char *colon = memchr(p, ':', n);
		host_end = colon ? colon : e;
		if (parse_reg_host(p, (size_t)(host_end - p), o->host) < 0)
			return -1;
	}
	if (host_end == e)
		return 0;
	if (*host_end != ':')
		return -1;
	return parse_port(host_end + 1, e, &o->port);
}

CSRF_API csrf_reason csrf_origin_parse(const char *s, size_t len, csrf_origin *out)
{
	if (!out)
		return CSRF_ERR_ARG;
	memset(out, 0, sizeof *out);
	if (!s && len)
		return CSRF_ERR_ARG;
	/* parsed in place; a failure leaves *out zeroed again */
	const char *rest;
	if (!s || parse_scheme(s, len, out, &rest) < 0 || parse_authority(rest, s + len, out) < 0) {
		memset(out, 0, sizeof *out);
		return CSRF_MALFORMED;
	}
	return CSRF_OK;
}

CSRF_API csrf_reason csrf_url_origin(const char *url, size_t len, csrf_origin *out)
{
	if (!out)
		return CSRF_ERR_ARG;
	memset(out, 0, sizeof *out);
	if (!url && len)
		return CSRF_ERR_ARG;
	csrf_origin o = {0};
	const char *rest;
	if (!url || parse_scheme(url, len, &o, &rest) < 0)
		return CSRF_MALFORMED;
	/* the authority ends at the path, the query or the fragment; only
	 * that much is looked at */
	const char *e = url + len, *a = rest;
	while (a < e && a - rest <= AUTHORITY_MAX && *a != '/' && *a != '?' && *a != '#')
		a++;
	if (parse_authority(rest, a, &o) < 0)
		return CSRF_MALFORMED;
	*out = o;
	return CSRF_OK;
}

CSRF_API int csrf_origin_equal(const csrf_origin *a, const csrf_origin *b)
{
	if (!a || !b)
		return 0;
	return a->port == b->port && strncmp(a->scheme, b->scheme, sizeof a->scheme) == 0 &&
	       strncmp(a->host, b->host, sizeof a->host) == 0;
}
