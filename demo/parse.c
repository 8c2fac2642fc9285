/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * parse.c - what csrf-demo parses itself (the library parses the HTTP
 * pieces): the UTF-8 check applied to form fields, positive amounts and
 * story numbers, --listen addresses, session ids, the session record
 * kept in the store, and header values made safe for a log line. Every function takes (pointer, length), reads only
 * inside it and fails closed.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "csrfx.h"
#include "demo.h"

void demo_hex_encode(const uint8_t *in, size_t n, char *out)
{
	csrfx_hex_encode(in, n, out);
	out[2 * n] = '\0';
}

int demo_hex_decode(const char *in, size_t len, uint8_t *out, size_t n)
{
	if (len != 2 * n || !csrfx_is_hex_lower(in, len) || csrfx_hex_decode(in, n, out) != CSRF_OK)
		return -1;
	return 0;
}

int demo_sid_ok(const char *s, size_t len)
{
	return len == DEMO_SID_LEN && csrfx_is_hex_lower(s, len);
}

int demo_utf8_ok(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		unsigned c = p[i];
		if (c < 0x80) {
			if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f)
				return 0;
			i++;
			continue;
		}
		size_t need;
		uint32_t min, cp;
		if (c >= 0xc2 && c <= 0xdf) {
			need = 1;
			min = 0x80;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			need = 2;
			min = 0x800;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			need = 3;
			min = 0x10000;
			cp = c & 0x07;
		} else {
			return 0;
		}
		if (n - i - 1 < need)
			return 0;
		for (size_t k = 1; k <= need; k++) {
			unsigned cc = p[i + k];
			if ((cc & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (cc & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += need + 1;
	}
	return 1;
}

int demo_parse_positive(const char *s, size_t len, int64_t max, int64_t *out)
{
	uint64_t v;
	if (len > 12 || max < 1 || csrfx_parse_u64(s, len, (uint64_t)max, &v) != CSRF_OK || v == 0)
		return -1;
	*out = (int64_t)v;
	return 0;
}

int demo_parse_listen(const char *arg, size_t len, struct sockaddr_in *sa, char *origin, size_t cap)
{
	char host[INET_ADDRSTRLEN];
	size_t colon = len;
	uint64_t port;
	for (size_t i = len; i > 0; i--) {
		if (arg[i - 1] == ':') {
			colon = i - 1;
			break;
		}
	}
	if (colon == len || colon == 0 || colon >= sizeof host || colon + 1 == len || len - colon - 1 > 5)
		return -1;
	memcpy(host, arg, colon);
	host[colon] = '\0';
	if (csrfx_parse_u64(arg + colon + 1, len - colon - 1, 65535, &port) != CSRF_OK || port == 0)
		return -1;
	memset(sa, 0, sizeof *sa);
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		return -1;
	int n = snprintf(origin, cap, "http://%s:%u", host, (unsigned)port);
	return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* Next space-separated word of the record; NULL at its end. */
static const char *word(const char **p, const char *end, size_t *len)
{
	const char *s = *p;
	while (s < end && *s == ' ')
		s++;
	const char *e = s;
	while (e < end && *e != ' ')
		e++;
	*p = e;
	*len = (size_t)(e - s);
	return *len ? s : NULL;
}

static int parse_count(const char *s, size_t len, int64_t *out)
{
	uint64_t v;
	if (len > 18 || csrfx_parse_u64(s, len, INT64_MAX, &v) != CSRF_OK)
		return -1;
	*out = (int64_t)v;
	return 0;
}

static int user_ok(const char *s, size_t len)
{
	if (len == 0 || len > DEMO_USER_MAX)
		return 0;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return 0;
	}
	return 1;
}

int demo_record_format(const demo_session *s, char *out, size_t cap)
{
	char secret_hex[2 * CSRF_SECRET_LEN + 1];
	if (s->user[0] && !user_ok(s->user, strlen(s->user)))
		return -1;
	demo_hex_encode(s->secret, CSRF_SECRET_LEN, secret_hex);
	int n = snprintf(out, cap, "v1 %lld %lld %s %s", (long long)s->user_id, (long long)s->row,
	                 s->user[0] ? s->user : "-", secret_hex);
	demo_wipe(secret_hex, sizeof secret_hex);
	if (n <= 0 || (size_t)n >= cap) {
		demo_wipe(out, cap);
		return -1;
	}
	return n;
}

int demo_record_parse(const char *rec, size_t len, demo_session *s)
{
	const char *p = rec, *end = rec + len, *w;
	size_t n;
	if ((w = word(&p, end, &n)) == NULL || n != 2 || w[0] != 'v' || w[1] != '1')
		goto bad;
	if ((w = word(&p, end, &n)) == NULL || parse_count(w, n, &s->user_id) != 0)
		goto bad;
	if ((w = word(&p, end, &n)) == NULL || parse_count(w, n, &s->row) != 0)
		goto bad;
	if ((w = word(&p, end, &n)) == NULL)
		goto bad;
	if (n == 1 && w[0] == '-') {
		s->user[0] = '\0';
	} else if (user_ok(w, n)) {
		memcpy(s->user, w, n);
		s->user[n] = '\0';
	} else {
		goto bad;
	}
	if ((w = word(&p, end, &n)) == NULL || demo_hex_decode(w, n, s->secret, CSRF_SECRET_LEN) != 0)
		goto bad;
	if (word(&p, end, &n) != NULL)
		goto bad;
	return 0;
bad:
	demo_wipe(s->secret, sizeof s->secret);
	return -1;
}

size_t demo_log_value(const char *s, size_t n, int url, char *out, size_t cap)
{
	size_t i = 0;
	if (s == NULL) {
		out[0] = '-';
		out[1] = '\0';
		return 1;
	}
	for (; i < n && i + 1 < cap; i++) {
		if (url && (s[i] == '?' || s[i] == '#'))
			break;
		out[i] = (s[i] > 0x20 && s[i] < 0x7f) ? s[i] : '?';
	}
	out[i] = '\0';
	return i;
}

/* out = a b c d, or "" and 0 when it does not fit. */
static size_t client_key_out(char *out, size_t cap, const char *a, const char *b, const char *c, const char *d)
{
	int n = snprintf(out, cap, "%s%s%s%s", a, b, c, d);
	if (n <= 0 || (size_t)n >= cap) {
		out[0] = '\0';
		return 0;
	}
	return (size_t)n;
}

static int zone_ok(const char *z, size_t n)
{
	if (n == 0 || n > 15)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char ch = z[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
		      ch == '_' || ch == '-'))
			return 0;
	}
	return 1;
}

size_t demo_client_key(const char *addr, size_t len, char *out, size_t cap)
{
	char host[INET6_ADDRSTRLEN], zone[16] = "", text[INET6_ADDRSTRLEN];
	struct in6_addr a6;
	struct in_addr a4;
	size_t pct = len;
	if (out == NULL || cap < DEMO_CLIENT_KEY_MAX)
		return 0;
	if (addr == NULL)
		goto unknown;
	for (size_t i = 0; i < len; i++) {
		if (addr[i] == '%') {
			pct = i;
			break;
		}
	}
	if (pct == 0 || pct >= sizeof host)
		goto unknown;
	for (size_t i = 0; i < pct; i++) {
		char ch = addr[i];
		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F') || ch == ':' ||
		      ch == '.'))
			goto unknown; /* a NUL inside would end it early for inet_pton */
	}
	memcpy(host, addr, pct);
	host[pct] = '\0';
	if (pct < len) {
		if (!zone_ok(addr + pct + 1, len - pct - 1))
			goto unknown;
		memcpy(zone, addr + pct + 1, len - pct - 1);
		zone[len - pct - 1] = '\0';
	}
	if (inet_pton(AF_INET, host, &a4) != 1) {
		if (inet_pton(AF_INET6, host, &a6) != 1)
			goto unknown;
		if (!IN6_IS_ADDR_V4MAPPED(&a6)) {
			/* A zone names the link of a link-local address;
			 * anywhere else it adds nothing the /64 does not say. */
			int link = IN6_IS_ADDR_LINKLOCAL(&a6) && zone[0] != '\0';
			memset(&a6.s6_addr[8], 0, 8);
			if (inet_ntop(AF_INET6, &a6, text, sizeof text) == NULL)
				goto unknown;
			return client_key_out(out, cap, "ip6:", text, link ? "/64%" : "/64", link ? zone : "");
		}
		memcpy(&a4, &a6.s6_addr[12], sizeof a4);
	}
	if (zone[0] != '\0' || inet_ntop(AF_INET, &a4, text, sizeof text) == NULL)
		goto unknown;
	return client_key_out(out, cap, "ip4:", text, "", "");
unknown:
	return client_key_out(out, cap, "unknown", "", "", "");
}

void demo_wipe(void *p, size_t n)
{
	if (p != NULL && n > 0)
		explicit_bzero(p, n);
}
