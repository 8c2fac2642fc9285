/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * request.c - the request as the decision reads it: filing headers by
 * name (csrf_request_header), the site's own origin, and the cookies the
 * library owns (the signed secret cookie and the session cookie), read by
 * the same rules for the check (check.c) and for the page (page.c).
 */
#include "internal.h"

/* Everything but cookie_more, which is read only below n_cookie_more:
 * its 63 slices are most of the structure (1 KiB of 1.3), zeroed for
 * nothing on every request. */
CSRF_API void csrf_request_init(csrf_request *req)
{
	if (!req)
		return;
	memset(req, 0, offsetof(csrf_request, cookie_more));
	req->n_cookie_more = 0;
	req->repeated = 0;
}

/* Files value into *dst, or marks the header repeated when it came before. */
static void file_once(csrf_request *req, csrf_slice *dst, unsigned bit, csrf_slice value)
{
	if (dst->ptr)
		req->repeated |= bit;
	else
		*dst = value;
}

static void file_cookie(csrf_request *req, csrf_slice value)
{
	if (!req->cookie.ptr)
		req->cookie = value;
	else if (req->n_cookie_more < CSRF_COOKIE_HEADERS_MAX - 1)
		req->cookie_more[req->n_cookie_more++] = value;
	else
		req->repeated |= CSRF_HDR_COOKIES;
}

/* Eight (or four) bytes of a header name against the same bytes of a
 * literal of [a-z0-9-]: a byte of the literal that is a letter (bit 0x40
 * set, which no digit and no '-' has) is compared with its 0x20 bit
 * forced on in the name, any other byte exactly; so a letter matches
 * itself in either case and nothing else ('\r' never passes for '-',
 * '[' never for '{'). */
static inline int word_ieq64(const char *p, const char *lower)
{
	uint64_t a, b;
	memcpy(&a, p, 8);
	memcpy(&b, lower, 8);
	return (a | ((b & 0x4040404040404040u) >> 1)) == b;
}

static inline int word_ieq32(const char *p, const char *lower)
{
	uint32_t a, b;
	memcpy(&a, p, 4);
	memcpy(&b, lower, 4);
	return (a | ((b & 0x40404040u) >> 1)) == b;
}

/* A header name (of the length of lower, 4 or more, checked by the
 * caller) equal to the lower-case literal lower ([a-z0-9-] only), ASCII
 * case ignored: a word at a time, the last word ending at the name's end
 * (overlapping the one before it), for the dozen names every request
 * header is held against. */
static inline int name_is(csrf_slice n, const char *lower)
{
	if (n.len < 8)
		return word_ieq32(n.ptr, lower) && word_ieq32(n.ptr + n.len - 4, lower + n.len - 4);
	for (size_t i = 0; i + 8 < n.len; i += 8)
		if (!word_ieq64(n.ptr + i, lower + i))
			return 0;
	return word_ieq64(n.ptr + n.len - 8, lower + n.len - 8);
}

CSRF_API csrf_reason csrf_request_header(csrf_request *req, const char *name, size_t name_len, const char *value,
                                         size_t value_len)
{
	if (!req || (!name && name_len) || (!value && value_len))
		return CSRF_ERR_ARG;
	csrf_slice n = {name, name_len};
	csrf_slice v = {value ? value : "", value_len};
	/* CSRF_HEADER_NAME, lower-cased below (test_request files it by the macro) */
	_Static_assert(sizeof CSRF_HEADER_NAME - 1 == 12, "the token header's name is of the case for 12");
	switch (name_len) {
	case 4:
		if (name_is(n, "host"))
			file_once(req, &req->host, CSRF_HDR_HOST, v);
		break;
	case 6:
		if (name_is(n, "origin"))
			file_once(req, &req->origin, CSRF_HDR_ORIGIN, v);
		else if (name_is(n, "cookie"))
			file_cookie(req, v);
		break;
	case 7:
		if (name_is(n, "referer"))
			file_once(req, &req->referer, CSRF_HDR_REFERER, v);
		else if (name_is(n, "upgrade"))
			file_once(req, &req->upgrade, CSRF_HDR_UPGRADE, v);
		break;
	case 12:
		if (name_is(n, "content-type"))
			file_once(req, &req->content_type, CSRF_HDR_CONTENT_TYPE, v);
		else if (name_is(n, "x-csrf-token"))
			file_once(req, &req->token_header, CSRF_HDR_TOKEN, v);
		break;
	case 13:
		if (name_is(n, "x-http-method"))
			file_once(req, &req->method_override, CSRF_HDR_OVERRIDE, v);
		break;
	case 14:
		if (name_is(n, "sec-fetch-site"))
			file_once(req, &req->sec_fetch_site, CSRF_HDR_FETCH_SITE, v);
		else if (name_is(n, "sec-fetch-mode"))
			file_once(req, &req->sec_fetch_mode, CSRF_HDR_UPGRADE, v);
		else if (name_is(n, "content-length"))
			file_once(req, &req->content_length, CSRF_HDR_CONTENT_LENGTH, v);
		break;
	case 17:
		if (name_is(n, "x-method-override"))
			file_once(req, &req->method_override, CSRF_HDR_OVERRIDE, v);
		else if (name_is(n, "transfer-encoding"))
			file_once(req, &req->transfer_encoding, CSRF_HDR_CONTENT_LENGTH, v);
		break;
	case 22:
		if (name_is(n, "x-http-method-override"))
			file_once(req, &req->method_override, CSRF_HDR_OVERRIDE, v);
		break;
	default:
		break;
	}
	return CSRF_OK;
}

CSRF_API int csrf_header_is_method_override(const char *name, size_t len)
{
	csrf_slice n = {name, len};
	return name && (csrfi_slice_ieq(n, "X-HTTP-Method-Override") || csrfi_slice_ieq(n, "X-HTTP-Method") ||
	                csrfi_slice_ieq(n, "X-Method-Override"));
}

/* ---- the site ---- */

int csrfi_site_https(const csrf_ctx *ctx, const csrf_request *req)
{
	if (ctx->has_self)
		return strcmp(ctx->self.scheme, "https") == 0;
	/* The scheme is never guessed from headers; without one the site
	 * counts as HTTPS so that the Referer rule applies (fail closed). */
	return !csrfi_slice_ieq(csrfi_trim(req->scheme), "http");
}

void csrfi_site_of(const csrf_ctx *ctx, const csrf_request *req, csrfi_site *site)
{
	memset(site, 0, sizeof *site);
	site->https = csrfi_site_https(ctx, req);
	if (ctx->has_self) {
		site->known = 1;
		site->self = ctx->self;
		return;
	}
	csrf_slice scheme = csrfi_trim(req->scheme);
	csrf_slice host = csrfi_trim(req->host);
	if (!scheme.ptr || !host.ptr || host.len == 0 || (req->repeated & CSRF_HDR_HOST))
		return;
	char buf[sizeof site->self.scheme + 3 + sizeof site->self.host + 8];
	if (scheme.len + 3 + host.len > sizeof buf)
		return;
	memcpy(buf, scheme.ptr, scheme.len);
	memcpy(buf + scheme.len, "://", 3);
	memcpy(buf + scheme.len + 3, host.ptr, host.len);
	site->known = csrf_origin_parse(buf, scheme.len + 3 + host.len, &site->self) == CSRF_OK;
}

size_t csrfi_origin_format(const csrf_origin *o, char *out, size_t cap)
{
	size_t sl = strnlen(o->scheme, sizeof o->scheme), hl = strnlen(o->host, sizeof o->host);
	int dflt =
	    (o->port == 80 && strcmp(o->scheme, "http") == 0) || (o->port == 443 && strcmp(o->scheme, "https") == 0);
	char port[8];
	size_t pl = 0;
	if (!dflt) {
		unsigned v = o->port;
		char tmp[6];
		size_t k = 0;
		do {
			tmp[k++] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		port[pl++] = ':';
		while (k)
			port[pl++] = tmp[--k];
	}
	if (sl + 3 + hl + pl + 1 > cap) {
		if (cap)
			out[0] = '\0';
		return 0;
	}
	memcpy(out, o->scheme, sl);
	memcpy(out + sl, "://", 3);
	memcpy(out + sl + 3, o->host, hl);
	memcpy(out + sl + 3 + hl, port, pl);
	out[sl + 3 + hl + pl] = '\0';
	return sl + 3 + hl + pl;
}

/* ---- cookies ---- */

/* The __Host- prefix's length in the secret cookie's name: added over
 * HTTPS to the default name only (a name the caller set is kept as set). */
static size_t host_prefix_len(const csrf_ctx *ctx, int https)
{
	return (https && !ctx->secret_cookie_set) ? sizeof CSRF_HOST_PREFIX - 1 : 0;
}

size_t csrfi_secret_cookie_name(const csrf_ctx *ctx, int https, char *out, size_t cap)
{
	size_t n = strnlen(ctx->secret_cookie, sizeof ctx->secret_cookie);
	size_t pre = host_prefix_len(ctx, https);
	if (pre + n + 1 > cap)
		return 0;
	memcpy(out, CSRF_HOST_PREFIX, pre);
	memcpy(out + pre, ctx->secret_cookie, n + 1);
	return pre + n;
}

/* A name sent twice is how a cookie planted from a sibling subdomain or
 * another port shows itself (the browser sends both, in an order the
 * attacker can influence), so that is CSRF_COOKIE_AMBIGUOUS rather than
 * a guess at which one is ours; across Cookie lines too. */
csrf_reason csrfi_request_cookie(const csrf_request *req, const char *name, size_t nlen, csrf_slice *v)
{
	v->ptr = NULL;
	v->len = 0;
	if (req->repeated & CSRF_HDR_COOKIES)
		return CSRF_TOO_LARGE;
	if (!req->cookie.ptr)
		return CSRF_NOT_FOUND;
	int found = 0;
	for (unsigned i = 0; i <= req->n_cookie_more && i < CSRF_COOKIE_HEADERS_MAX; i++) {
		csrf_slice line = i == 0 ? req->cookie : req->cookie_more[i - 1];
		csrf_slice got;
		csrf_reason r = csrfi_cookie_get_once(line.ptr, line.len, name, nlen, &got);
		if (r == CSRF_NOT_FOUND)
			continue;
		if (r != CSRF_OK)
			return r;
		if (found)
			return CSRF_COOKIE_AMBIGUOUS;
		found = 1;
		*v = got;
	}
	return found ? CSRF_OK : CSRF_NOT_FOUND;
}

/* The value of the site's secret cookie in the request, by
 * csrfi_request_cookie's rules. */
static csrf_reason secret_cookie(const csrf_ctx *ctx, const csrf_request *req, int https, csrf_slice *v)
{
	if (host_prefix_len(ctx, https) == 0) /* the name as kept, in place */
		return csrfi_request_cookie(req, ctx->secret_cookie,
		                            strnlen(ctx->secret_cookie, sizeof ctx->secret_cookie), v);
	char name[CSRF_SECRET_COOKIE_NAME_MAX];
	size_t nlen = csrfi_secret_cookie_name(ctx, https, name, sizeof name);
	return csrfi_request_cookie(req, name, nlen, v);
}

csrf_reason csrfi_request_secret(const csrf_ctx *ctx, const csrf_request *req, int https,
                                 uint8_t secret[CSRF_SECRET_LEN])
{
	if (req->secret) {
		memcpy(secret, req->secret, CSRF_SECRET_LEN);
		return CSRF_OK;
	}
	csrf_slice v;
	csrf_reason r = secret_cookie(ctx, req, https, &v);
	if (r == CSRF_NOT_FOUND)
		return CSRF_SECRET_MISSING;
	if (r == CSRF_TOO_LARGE)
		return CSRF_HEADER_TOO_LARGE;
	if (r == CSRF_COOKIE_AMBIGUOUS)
		return r;
	if (r != CSRF_OK)
		return CSRF_SECRET_INVALID;
	r = csrfi_secret_cookie_decode_at(ctx, v.ptr, v.len, req->now, secret);
	if (r == CSRF_OK || r == CSRF_UNKNOWN_KEY || r == CSRF_SECRET_EXPIRED)
		return r;
	return CSRF_SECRET_INVALID;
}

int csrfi_request_secret_plausible(const csrf_ctx *ctx, const csrf_request *req, int https)
{
	if (req->secret)
		return 1;
	csrf_slice v;
	if (secret_cookie(ctx, req, https, &v) != CSRF_OK)
		return 0;
	return csrfi_secret_cookie_plausible(ctx, v.ptr, v.len, req->now);
}

/* With several session cookie names (an application that names its
 * cookie per scheme, like phpMyAdmin's "phpMyAdmin" and
 * "phpMyAdmin_https"), the token is bound to every one of them the
 * browser sends: to its value when it sends one, as with a single name;
 * to a digest of all of them (in the configured order, each with its
 * place and length) when it sends several. So a cookie added under
 * another of the names, by someone who can plant cookies from a sibling
 * subdomain or over plain HTTP, changes the binding: the request fails
 * as a token of another session, and never binds to the planted cookie
 * instead of the one the application reads. A name sent twice is
 * CSRF_COOKIE_AMBIGUOUS, as with one name. */
static void bind_several(const csrf_slice *v, size_t n, char buf[CSRF_SESSION_BIND_LEN + 1])
{
	static const char label[] = "libcsrf sessions v1";
	uint8_t d[CSRF_SHA256_LEN];
	csrfi_sha256_ctx h;
	csrfi_sha256_init(&h);
	csrfi_sha256_update(&h, label, sizeof label);
	for (size_t i = 0; i < n; i++) {
		if (!v[i].ptr)
			continue;
		uint8_t head[9] = {(uint8_t)i};
		for (int k = 0; k < 8; k++)
			head[1 + k] = (uint8_t)((uint64_t)v[i].len >> (56 - 8 * k));
		csrfi_sha256_update(&h, head, sizeof head);
		csrfi_sha256_update(&h, v[i].ptr, v[i].len);
	}
	csrfi_sha256_final(&h, d);
	csrfx_hex_encode(d, sizeof d, buf);
	buf[CSRF_SESSION_BIND_LEN] = '\0';
	csrfi_wipe(&h, sizeof h);
	csrfi_wipe(d, sizeof d);
}

csrf_reason csrfi_request_session(const csrf_ctx *ctx, const csrf_request *req, csrf_slice *sid,
                                  char buf[CSRF_SESSION_BIND_LEN + 1])
{
	static const char empty[1] = "";
	sid->ptr = empty;
	sid->len = 0;
	if (req->session_id.ptr) {
		*sid = req->session_id;
		return CSRF_OK;
	}
	csrf_slice v[CSRF_SESSION_COOKIES_MAX];
	size_t present = 0, last = 0;
	for (size_t i = 0; i < ctx->n_session_cookies; i++) {
		const char *name = ctx->session_cookie[i];
		csrf_reason r = csrfi_request_cookie(req, name, strnlen(name, CSRF_FIELD_NAME_MAX + 1), &v[i]);
		if (r == CSRF_TOO_LARGE || r == CSRF_COOKIE_AMBIGUOUS)
			return r == CSRF_TOO_LARGE ? CSRF_HEADER_TOO_LARGE : r;
		/* Missing or unreadable: not sent, so a token bound to a real
		 * session does not verify for it. */
		if (r != CSRF_OK) {
			v[i].ptr = NULL;
			continue;
		}
		present++;
		last = i;
	}
	if (present == 1)
		*sid = v[last];
	else if (present > 1) {
		bind_several(v, ctx->n_session_cookies, buf);
		sid->ptr = buf;
		sid->len = CSRF_SESSION_BIND_LEN;
	}
	return CSRF_OK;
}

/* The configured session cookie (index into ctx->session_cookie) that a
 * Set-Cookie value s sets, or -1. */
static int session_cookie_set(const csrf_ctx *ctx, csrf_slice s, size_t *nlen)
{
	for (size_t i = 0; i < ctx->n_session_cookies; i++) {
		size_t n = strnlen(ctx->session_cookie[i], CSRF_FIELD_NAME_MAX + 1);
		if (s.len > n && memcmp(s.ptr, ctx->session_cookie[i], n) == 0 && s.ptr[n] == '=') {
			*nlen = n;
			return (int)i;
		}
	}
	return -1;
}

/* The year of an Expires date ("Thu, 01 Jan 1970 00:00:00 GMT", or the
 * older forms with dashes): its one run of four digits; 0 when none. */
static int64_t expires_year(csrf_slice v)
{
	for (size_t i = 0; i + 4 <= v.len; i++) {
		uint64_t y;
		int edge_ok = (i == 0 || !csrfi_is_digit((unsigned char)v.ptr[i - 1])) &&
		              (i + 4 == v.len || !csrfi_is_digit((unsigned char)v.ptr[i + 4]));
		if (edge_ok && csrfx_parse_u64(v.ptr + i, 4, 9999, &y) == CSRF_OK)
			return (int64_t)y;
	}
	return 0;
}

/* 1 when the attributes (p..end, from the first ';') delete the cookie:
 * a Max-Age of zero or less, or an Expires in a year before this one
 * (what "clear the cookie" calls send: 1970). */
static int expires_now(const char *p, const char *end, int64_t now)
{
	while (p < end) {
		const char *semi = memchr(p + 1, ';', (size_t)(end - p - 1));
		csrf_slice attr = csrfi_trim((csrf_slice){p + 1, (size_t)((semi ? semi : end) - p - 1)});
		const char *eq = memchr(attr.ptr, '=', attr.len);
		if (eq) {
			csrf_slice name = csrfi_trim((csrf_slice){attr.ptr, (size_t)(eq - attr.ptr)});
			csrf_slice v = csrfi_trim((csrf_slice){eq + 1, attr.len - (size_t)(eq + 1 - attr.ptr)});
			if (csrfi_slice_ieq(name, "max-age") && v.len) {
				if (v.ptr[0] == '-')
					return 1;
				int zero = 1;
				for (size_t i = 0; i < v.len; i++)
					if (v.ptr[i] != '0')
						zero = 0;
				if (zero)
					return 1;
			}
			if (csrfi_slice_ieq(name, "expires")) {
				int64_t year = expires_year(v);
				/* days since 1970 / 365.2425, as a year */
				int64_t this_year = 1970 + now / 31556952;
				if (year && year < this_year)
					return 1;
			}
		}
		p = semi ? semi : end;
	}
	return 0;
}

CSRF_API void csrf_response_cookie(const csrf_ctx *ctx, csrf_request *req, const char *value, size_t len)
{
	if (!ctx || !req || !value || !ctx->n_session_cookies)
		return;
	size_t nlen = 0;
	csrf_slice s = csrfi_trim((csrf_slice){value, len});
	if (session_cookie_set(ctx, s, &nlen) < 0)
		return;
	const char *v = s.ptr + nlen + 1, *end = s.ptr + s.len;
	const char *semi = memchr(v, ';', (size_t)(end - v));
	csrf_slice val = csrfi_trim((csrf_slice){v, (size_t)((semi ? semi : end) - v)});
	if (val.len >= 2 && val.ptr[0] == '"' && val.ptr[val.len - 1] == '"') {
		val.ptr++;
		val.len -= 2;
	}
	if (expires_now(semi ? semi : end, end, csrfi_now(req->now)))
		val.len = 0; /* a logout: the page belongs to no session */
	req->session_id = val;
}

CSRF_API int csrf_session_cookie_unseen(const csrf_ctx *ctx, const csrf_request *req, const char *set_cookie,
                                        size_t len, csrf_slice *name)
{
	if (name) {
		name->ptr = NULL;
		name->len = 0;
	}
	if (!ctx || !req || !ctx->n_session_cookies)
		return 0;
	if (req->session_id.ptr)
		return -1;
	for (size_t i = 0; i < ctx->n_session_cookies; i++) {
		csrf_slice v;
		const char *n = ctx->session_cookie[i];
		csrf_reason r = csrfi_request_cookie(req, n, strnlen(n, CSRF_FIELD_NAME_MAX + 1), &v);
		if (r == CSRF_OK || r == CSRF_COOKIE_AMBIGUOUS)
			return -1;
	}
	if (!set_cookie)
		return 0;
	csrf_slice s = csrfi_trim((csrf_slice){set_cookie, len});
	const char *eq = memchr(s.ptr, '=', s.len);
	if (!eq || eq == s.ptr)
		return 0;
	csrf_slice n = csrfi_trim((csrf_slice){s.ptr, (size_t)(eq - s.ptr)});
	if (n.len == 0 || n.len > CSRF_FIELD_NAME_MAX + sizeof CSRF_HOST_PREFIX)
		return 0;
	for (size_t i = 0; i < n.len; i++)
		if (!csrfi_is_tchar((unsigned char)n.ptr[i]))
			return 0;
	if (csrfi_slice_eq(n, CSRF_DEFAULT_SECRET_COOKIE) ||
	    csrfi_slice_eq(n, CSRF_HOST_PREFIX CSRF_DEFAULT_SECRET_COOKIE) ||
	    (ctx->secret_cookie_set && csrfi_slice_eq(n, ctx->secret_cookie)))
		return 0;
	if (name)
		*name = n;
	return 1;
}
