/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * store.c - the csrf_store interface: parsing and validating store URLs,
 * choosing the backend, and the argument checks every backend relies on
 * (key and value sizes), so that memory and Redis answer alike.
 */
#include "session_internal.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>

#define STORE_URL_MAX 1024

/* Strict unsigned decimal (csrfx_parse_u64) of at most digits_max digits,
 * within [lo, hi]. */
static int parse_uint(const char *s, size_t len, size_t digits_max, uint64_t lo, uint64_t hi, uint64_t *out)
{
	uint64_t v;

	if (len > digits_max || csrfx_parse_u64(s, len, hi, &v) != CSRF_OK || v < lo)
		return 0;
	*out = v;
	return 1;
}

static int has_prefix(const char *s, size_t len, const char *lit)
{
	size_t n = strlen(lit);
	return len >= n && memcmp(s, lit, n) == 0;
}

/* Calls fn for each "name=value" of a query (without its '?'). An empty
 * query ("x?"), an empty pair ("a=1&&b=2") or a pair without '=' is
 * malformed. */
typedef int (*query_fn)(csrfi_store_config *cfg, const char *name, size_t name_len, const char *val, size_t val_len,
                        unsigned *seen);

static int parse_query(const char *q, size_t len, csrfi_store_config *cfg, query_fn fn)
{
	unsigned seen = 0;
	size_t pos = 0;

	if (len == 0)
		return 0;
	while (pos <= len) {
		const char *amp = memchr(q + pos, '&', len - pos);
		size_t end = amp ? (size_t)(amp - q) : len;
		const char *pair = q + pos;
		size_t pair_len = end - pos;
		const char *eq = memchr(pair, '=', pair_len);

		if (pair_len == 0 || eq == NULL)
			return 0;
		if (!fn(cfg, pair, (size_t)(eq - pair), eq + 1, pair_len - (size_t)(eq - pair) - 1, &seen))
			return 0;
		if (amp == NULL)
			break;
		pos = end + 1;
		if (pos == len) /* trailing '&' */
			return 0;
	}
	return 1;
}

static int name_is(const char *name, size_t name_len, const char *lit)
{
	return name_len == strlen(lit) && memcmp(name, lit, name_len) == 0;
}

static int memory_param(csrfi_store_config *cfg, const char *name, size_t name_len, const char *val, size_t val_len,
                        unsigned *seen)
{
	uint64_t v;

	if (!name_is(name, name_len, "max") || (*seen & 1))
		return 0;
	*seen |= 1;
	if (!parse_uint(val, val_len, 9, 1, CSRF_STORE_MEMORY_MAX_MAX, &v))
		return 0;
	cfg->max_entries = (size_t)v;
	return 1;
}

static int prefix_char_ok(char c)
{
	return csrfi_is_alpha((unsigned char)c) || csrfi_is_digit((unsigned char)c) || c == ':' || c == '_' || c == '-';
}

static int redis_param(csrfi_store_config *cfg, const char *name, size_t name_len, const char *val, size_t val_len,
                       unsigned *seen)
{
	uint64_t v;

	if (name_is(name, name_len, "pool")) {
		if (*seen & 4)
			return 0;
		*seen |= 4;
		if (!parse_uint(val, val_len, 2, 1, CSRF_STORE_POOL_MAX, &v))
			return 0;
		cfg->pool = (unsigned)v;
		return 1;
	}
	if (name_is(name, name_len, "prefix")) {
		if (*seen & 1)
			return 0;
		*seen |= 1;
		if (val_len > CSRF_STORE_PREFIX_MAX)
			return 0;
		for (size_t i = 0; i < val_len; i++)
			if (!prefix_char_ok(val[i]))
				return 0;
		memcpy(cfg->prefix, val, val_len);
		cfg->prefix[val_len] = '\0';
		return 1;
	}
	if (name_is(name, name_len, "timeout_ms")) {
		if (*seen & 2)
			return 0;
		*seen |= 2;
		if (!parse_uint(val, val_len, 5, 1, 60000, &v))
			return 0;
		cfg->timeout_ms = (uint32_t)v;
		return 1;
	}
	return 0;
}

static int host_char_ok(char c)
{
	return csrfi_is_alpha((unsigned char)c) || csrfi_is_digit((unsigned char)c) || c == '.' || c == '-';
}

/* host[:port] of a redis URL; an IPv6 literal comes in brackets. Either
 * kind of host must fit out->host with its NUL (a name is at most 253
 * bytes anyway), and a bracketed one must be an IPv6 address. */
static int parse_hostport(const char *a, size_t len, uint16_t default_port, csrfi_store_addr *out)
{
	const char *host;
	size_t host_len;
	size_t rest;
	uint64_t port = default_port;
	char literal[sizeof out->host];
	struct in6_addr addr;

	if (len > 0 && a[0] == '[') {
		const char *close = memchr(a, ']', len);
		if (close == NULL)
			return 0;
		host = a + 1;
		host_len = (size_t)(close - host);
		if (host_len == 0 || host_len >= sizeof out->host)
			return 0;
		for (size_t i = 0; i < host_len; i++) {
			char c = host[i];
			if (csrfx_hexval((unsigned char)c) < 0 && c != ':' && c != '.')
				return 0;
		}
		/* the right characters are not yet an address ("1::2::3") */
		memcpy(literal, host, host_len);
		literal[host_len] = '\0';
		if (inet_pton(AF_INET6, literal, &addr) != 1)
			return 0;
		rest = (size_t)(close + 1 - a);
	} else {
		host = a;
		host_len = 0;
		while (host_len < len && a[host_len] != ':') {
			if (!host_char_ok(a[host_len]))
				return 0;
			host_len++;
		}
		if (host_len == 0 || host_len > 253 || host_len >= sizeof out->host || host[0] == '-' || host[0] == '.')
			return 0;
		rest = host_len;
	}
	if (rest < len) {
		if (a[rest] != ':')
			return 0;
		if (!parse_uint(a + rest + 1, len - rest - 1, 5, 1, 65535, &port))
			return 0;
	}
	memcpy(out->host, host, host_len);
	out->host[host_len] = '\0';
	out->port = (uint16_t)port;
	return 1;
}

/* RFC 3986 userinfo characters besides pct-encoded ones. */
static int userinfo_char_ok(char c)
{
	return csrfi_is_alpha((unsigned char)c) || csrfi_is_digit((unsigned char)c) ||
	       (c != '\0' && strchr("-._~!$&'()*+,;=:", c) != NULL);
}

/* Percent-decodes s into out (CSRF_STORE_CRED_MAX bytes and a NUL). A
 * NUL byte, a bad escape or a result that does not fit is malformed. */
static int decode_cred(const char *s, size_t len, char *out)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		int c = (unsigned char)s[i];
		if (c == '%') {
			int hi, lo;
			if (len - i < 3)
				return 0;
			hi = csrfx_hexval((unsigned char)s[i + 1]);
			lo = csrfx_hexval((unsigned char)s[i + 2]);
			if (hi < 0 || lo < 0)
				return 0;
			c = hi * 16 + lo;
			i += 2;
			if (c == 0)
				return 0;
		} else if (!userinfo_char_ok((char)c)) {
			return 0;
		}
		if (n == CSRF_STORE_CRED_MAX)
			return 0;
		out[n++] = (char)c;
	}
	out[n] = '\0';
	return 1;
}

/* "USER:PASSWORD" or ":PASSWORD": a password is required, a user is
 * optional (the default user). */
static int parse_userinfo(const char *s, size_t len, csrfi_store_config *cfg)
{
	const char *colon = memchr(s, ':', len);
	size_t ulen;

	if (colon == NULL)
		return 0;
	ulen = (size_t)(colon - s);
	if (ulen == len - 1) /* no password */
		return 0;
	if (!decode_cred(s, ulen, cfg->user) || !decode_cred(colon + 1, len - ulen - 1, cfg->password))
		return 0;
	cfg->has_password = 1;
	return 1;
}

static int master_char_ok(char c)
{
	return host_char_ok(c) || c == '_';
}

/* "/N" (or "/" alone: 0) into cfg->db. */
static int parse_db(const char *s, size_t len, csrfi_store_config *cfg)
{
	uint64_t db;

	if (len == 0)
		return 1;
	if (s[0] != '/')
		return 0;
	if (len == 1)
		return 1;
	if (!parse_uint(s + 1, len - 1, 2, 0, 15, &db))
		return 0;
	cfg->db = (unsigned)db;
	return 1;
}

/* The rest of a redis:// or redis-sentinel:// URL. */
static int parse_redis(const char *s, size_t len, csrfi_store_config *cfg)
{
	size_t auth_end = 0, hosts_start = 0;
	const char *q;
	size_t path_start, path_end;
	int sentinel = cfg->kind == CSRF_STORE_SENTINEL;

	while (auth_end < len && s[auth_end] != '/' && s[auth_end] != '?')
		auth_end++;
	for (size_t i = auth_end; i > 0; i--) {
		if (s[i - 1] == '@') {
			if (!parse_userinfo(s, i - 1, cfg))
				return 0;
			hosts_start = i;
			break;
		}
	}
	/* one host, or a comma-separated list of sentinels */
	cfg->n_addr = 0;
	for (size_t pos = hosts_start;;) {
		const char *comma = sentinel ? memchr(s + pos, ',', auth_end - pos) : NULL;
		size_t end = comma ? (size_t)(comma - s) : auth_end;
		if (cfg->n_addr == CSRF_STORE_SENTINELS_MAX ||
		    !parse_hostport(s + pos, end - pos, sentinel ? 26379 : 6379, &cfg->addr[cfg->n_addr]))
			return 0;
		cfg->n_addr++;
		if (comma == NULL)
			break;
		pos = end + 1;
	}
	path_start = auth_end;
	q = memchr(s + path_start, '?', len - path_start);
	path_end = q ? (size_t)(q - s) : len;
	if (sentinel) {
		/* "/MASTER" or "/MASTER/DB" */
		size_t name_start = path_start + 1, name_end;
		if (path_end <= path_start || s[path_start] != '/')
			return 0;
		name_end = name_start;
		while (name_end < path_end && s[name_end] != '/') {
			if (!master_char_ok(s[name_end]))
				return 0;
			name_end++;
		}
		if (name_end == name_start || name_end - name_start > CSRF_STORE_MASTER_NAME_MAX)
			return 0;
		memcpy(cfg->master, s + name_start, name_end - name_start);
		cfg->master[name_end - name_start] = '\0';
		if (name_end < path_end && name_end + 1 == path_end) /* "/MASTER/" */
			return 0;
		path_start = name_end;
	}
	if (!parse_db(s + path_start, path_end - path_start, cfg))
		return 0;
	if (q == NULL)
		return 1;
	return parse_query(q + 1, len - path_end - 1, cfg, redis_param);
}

csrf_reason csrfi_store_parse_url(const char *url, size_t len, csrfi_store_config *cfg)
{
	csrfi_store_config c;
	size_t skip = 0;

	if (url == NULL || cfg == NULL)
		return CSRF_ERR_ARG;
	if (len > STORE_URL_MAX)
		return CSRF_ERR_CONFIG;
	memset(&c, 0, sizeof c);
	if (len == 6 && memcmp(url, "memory", 6) == 0) {
		c.kind = CSRF_STORE_MEMORY;
		c.max_entries = CSRF_STORE_MEMORY_DEFAULT_MAX;
	} else if (has_prefix(url, len, "memory://")) {
		const char *rest = url + 9;
		size_t rest_len = len - 9;
		c.kind = CSRF_STORE_MEMORY;
		c.max_entries = CSRF_STORE_MEMORY_DEFAULT_MAX;
		if (rest_len > 0) {
			if (rest[0] != '?' || !parse_query(rest + 1, rest_len - 1, &c, memory_param))
				return CSRF_ERR_CONFIG;
		}
	} else if (has_prefix(url, len, "redis://")) {
		c.kind = CSRF_STORE_REDIS;
		skip = 8;
	} else if (has_prefix(url, len, "redis-sentinel://")) {
		c.kind = CSRF_STORE_SENTINEL;
		skip = 17;
	} else {
		return CSRF_ERR_CONFIG;
	}
	if (skip > 0) {
		c.timeout_ms = CSRF_STORE_TIMEOUT_DEFAULT_MS;
		c.pool = CSRF_STORE_POOL_DEFAULT;
		memcpy(c.prefix, "csrf:", 6);
		if (!parse_redis(url + skip, len - skip, &c)) {
			csrfi_wipe(&c, sizeof c);
			return CSRF_ERR_CONFIG;
		}
	}
	*cfg = c;
	csrfi_wipe(&c, sizeof c);
	return CSRF_OK;
}

CSRF_API csrf_reason csrf_store_open_log(csrf_store **out, const char *url, csrf_store_log_fn log, void *ud)
{
	csrfi_store_config cfg;
	csrfi_store_logger lg = {log, ud};
	csrf_reason r;

	if (out == NULL)
		return CSRF_ERR_ARG;
	*out = NULL;
	if (url == NULL)
		return CSRF_ERR_ARG;
	r = csrfi_store_parse_url(url, strnlen(url, STORE_URL_MAX + 1), &cfg);
	if (r != CSRF_OK) {
		csrfi_store_log(&lg, r, "store URL does not parse (the URL is not shown: it may hold a password)");
		return r;
	}
	if (cfg.kind == CSRF_STORE_MEMORY) {
		r = csrfi_store_memory_open(out, cfg.max_entries);
		if (r == CSRF_OK)
			(*out)->log = lg;
	} else {
#if CSRF_WITH_REDIS
		r = csrfi_store_redis_open(out, &cfg, &lg);
#else
		csrfi_store_log(&lg, CSRF_ERR_CONFIG, "built without Redis (CSRF_WITH_REDIS=OFF): no redis store");
		r = CSRF_ERR_CONFIG;
#endif
	}
	csrfi_wipe(&cfg, sizeof cfg);
	return r;
}

CSRF_API csrf_reason csrf_store_open(csrf_store **out, const char *url)
{
	return csrf_store_open_log(out, url, NULL, NULL);
}

CSRF_API void csrf_store_close(csrf_store *st)
{
	if (st != NULL)
		st->ops->close(st);
}

static csrf_reason check_key(const csrf_store *st, const char *key, size_t key_len)
{
	if (st == NULL || key == NULL || key_len == 0)
		return CSRF_ERR_ARG;
	if (key_len > CSRF_STORE_KEY_MAX)
		return CSRF_TOO_LARGE;
	return CSRF_OK;
}

CSRF_API csrf_reason csrf_store_get(csrf_store *st, const char *key, size_t key_len, void *buf, size_t cap, size_t *len)
{
	csrf_reason r = check_key(st, key, key_len);

	if (r != CSRF_OK)
		return r;
	if (len == NULL || (buf == NULL && cap > 0))
		return CSRF_ERR_ARG;
	return st->ops->get(st, key, key_len, buf, cap, len);
}

CSRF_API csrf_reason csrf_store_set(csrf_store *st, const char *key, size_t key_len, const void *val, size_t val_len,
                                    uint32_t ttl_s)
{
	csrf_reason r = check_key(st, key, key_len);

	if (r != CSRF_OK)
		return r;
	if (val == NULL && val_len > 0)
		return CSRF_ERR_ARG;
	if (val_len > CSRF_STORE_VAL_MAX)
		return CSRF_TOO_LARGE;
	return st->ops->set(st, key, key_len, val, val_len, ttl_s);
}

CSRF_API csrf_reason csrf_store_del(csrf_store *st, const char *key, size_t key_len)
{
	csrf_reason r = check_key(st, key, key_len);

	if (r != CSRF_OK)
		return r;
	return st->ops->del(st, key, key_len);
}

CSRF_API csrf_reason csrf_store_incr(csrf_store *st, const char *key, size_t key_len, uint32_t ttl_s, int64_t *value)
{
	csrf_reason r = check_key(st, key, key_len);

	if (r != CSRF_OK)
		return r;
	if (value == NULL)
		return CSRF_ERR_ARG;
	return st->ops->incr(st, key, key_len, ttl_s, value);
}
