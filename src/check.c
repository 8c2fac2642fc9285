/* SPDX-License-Identifier: BSD-2-Clause */
/* check.c - the decision (docs/architecture.md): the effective method (and method
 * overrides; a WebSocket handshake is judged by its origin), exemptions,
 * fetch metadata, Origin and Referer, then the token stage with the
 * secret from the caller or the signed cookie.
 * Everything lives on the stack; nothing here allocates. */
#include "internal.h"

/* Longest override value looked at: real methods are short words. */
#define METHOD_OVERRIDE_MAX 32
/* Room for the decoded token field: a value longer than a masked token
 * by more than this is not decoded at all and counts as malformed. */
#define TOKEN_FIELD_CAP (CSRF_TOKEN_MAX_LEN + 8)

/* Methods are case-sensitive (RFC 9110 9.1): "get" is not GET. */
static int is_safe_method(const char *p, size_t n)
{
	csrf_slice s = {p, n};
	return csrfi_slice_eq(s, "GET") || csrfi_slice_eq(s, "HEAD") || csrfi_slice_eq(s, "OPTIONS");
}

/* An override value: CSRF_METHOD_OVERRIDE unless it is a word of 1 to
 * METHOD_OVERRIDE_MAX letters; otherwise *unsafe is set when it names a
 * method other than GET, HEAD and OPTIONS. */
static csrf_reason judge_override(const char *p, size_t n, int *unsafe)
{
	if (n == 0 || n > METHOD_OVERRIDE_MAX)
		return CSRF_METHOD_OVERRIDE;
	for (size_t i = 0; i < n; i++)
		if (!csrfi_is_alpha((unsigned char)p[i]))
			return CSRF_METHOD_OVERRIDE;
	if (!is_safe_method(p, n))
		*unsafe = 1;
	return CSRF_OK;
}

/* 1 when a field name, read the way PHP reads it (and after it Laravel
 * and Symfony; Rails and Rack read a subset), is `_method`: leading
 * spaces dropped (leading set), the name ending at a NUL, '.' and ' ' read as '_', a
 * '[' read as '_' unless the name so far is the array `_method[...]`.
 * encoded: percent-encoded with '+' for a space (query strings and
 * urlencoded bodies); a bad escape stays as written, as PHP keeps it. */
static int reads_as_method_once(const char *p, size_t n, int encoded, int leading)
{
	static const char want[] = "_method";
	char base[sizeof want];
	size_t len = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (encoded && c == '+') {
			c = ' ';
		} else if (encoded && c == '%' && n - i >= 3 && csrfx_hexval((unsigned char)p[i + 1]) >= 0 &&
		           csrfx_hexval((unsigned char)p[i + 2]) >= 0) {
			c = (unsigned char)(csrfx_hexval((unsigned char)p[i + 1]) << 4 |
			                    csrfx_hexval((unsigned char)p[i + 2]));
			i += 2;
		}
		if (leading && c == ' ')
			continue;
		leading = 0;
		if (c == '\0')
			break;
		if (c == '[' && len == sizeof want - 1 && memcmp(base, want, len) == 0)
			return 1; /* _method[...] */
		if (c == '.' || c == ' ' || c == '[')
			c = '_';
		if (len == sizeof want - 1)
			return 0; /* longer than _method */
		base[len++] = (char)c;
	}
	return len == sizeof want - 1 && memcmp(base, want, len) == 0;
}

/* PHP drops leading spaces before it folds the rest; a reader that folds
 * them too (" method" as "_method") is covered by reading both ways. */
static int reads_as_method(const char *p, size_t n, int encoded)
{
	return reads_as_method_once(p, n, encoded, 1) || reads_as_method_once(p, n, encoded, 0);
}

/* Every `_method` parameter of the query string of target (frameworks
 * disagree on which of several wins, so all of them are judged); *present
 * is set when there is one. */
static csrf_reason judge_query_overrides(csrf_slice target, int *unsafe, int *present)
{
	if (!target.ptr)
		return CSRF_OK;
	size_t i = 0;
	while (i < target.len && target.ptr[i] != '?' && target.ptr[i] != '#')
		i++;
	if (i == target.len || target.ptr[i] != '?')
		return CSRF_OK;
	size_t end = ++i;
	while (end < target.len && target.ptr[end] != '#')
		end++;
	while (i < end) {
		size_t pair = i;
		while (i < end && target.ptr[i] != '&' && target.ptr[i] != ';')
			i++;
		size_t pair_end = i;
		if (i < end)
			i++;
		size_t eq = pair;
		while (eq < pair_end && target.ptr[eq] != '=')
			eq++;
		if (!reads_as_method(target.ptr + pair, eq - pair, 1))
			continue;
		*present = 1;
		char value[METHOD_OVERRIDE_MAX + 1];
		size_t vstart = eq < pair_end ? eq + 1 : pair_end;
		size_t value_len = 0;
		if (csrf_form_decode(target.ptr + vstart, pair_end - vstart, value, sizeof value, &value_len) !=
		    CSRF_OK)
			return CSRF_METHOD_OVERRIDE;
		csrf_reason r = judge_override(value, value_len, unsafe);
		if (r != CSRF_OK)
			return r;
	}
	return CSRF_OK;
}

/* Step 1: *safe when the method is GET, HEAD or OPTIONS and no override
 * (header or `_method` query parameter) names another method; *overridden
 * when the request carries either kind of override. */
static csrf_reason effective_method(const csrf_request *req, int *safe, int *overridden)
{
	int unsafe_override = 0;
	*safe = 0;
	*overridden = req->method_override.ptr != NULL;
	if (req->repeated & CSRF_HDR_OVERRIDE)
		return CSRF_METHOD_OVERRIDE;
	if (req->method_override.ptr) {
		csrf_slice v = csrfi_trim(req->method_override);
		csrf_reason r = judge_override(v.ptr, v.len, &unsafe_override);
		if (r != CSRF_OK)
			return r;
	}
	csrf_reason r = judge_query_overrides(req->target, &unsafe_override, overridden);
	if (r != CSRF_OK)
		return r;
	*safe = req->method.ptr && is_safe_method(req->method.ptr, req->method.len) && !unsafe_override;
	return CSRF_OK;
}

CSRF_API int csrf_request_is_safe(const csrf_request *req)
{
	int safe, overridden;
	if (!req)
		return 0;
	return effective_method(req, &safe, &overridden) == CSRF_OK && safe;
}

/* The body's length as Content-Length declares it: CSRF_OK with *known
 * set and *declared the value, or *known 0 (and *declared 0) without the
 * header; CSRF_MALFORMED for a value that is not a strict decimal. */
static csrf_reason declared_length(const csrf_request *req, uint64_t *declared, int *known)
{
	csrf_slice cl = csrfi_trim(req->content_length);
	*declared = 0;
	*known = cl.ptr != NULL;
	return cl.ptr ? csrfx_parse_u64(cl.ptr, cl.len, UINT64_MAX, declared) : CSRF_OK;
}

static int method_field(void *ud, const char *name, size_t len, int encoded)
{
	(void)ud;
	return reads_as_method(name, len, encoded);
}

/* A `_method` field (read as reads_as_method reads names) in a form body
 * (Rails, Laravel, Symfony read it; Rack and PHP read a body without a
 * Content-Type as a form too): 1 when there is one, or when the body
 * cannot be read with certainty (malformed, two Content-Type headers, a
 * body over the context's maximum): fail closed; 2 when the body was not
 * given yet. */
static int body_overrides(const csrf_ctx *ctx, const csrf_request *req)
{
	if (req->repeated & (CSRF_HDR_CONTENT_TYPE | CSRF_HDR_CONTENT_LENGTH))
		return 1;
	csrfi_form_kind kind = CSRF_FORM_URLENCODED;
	if (req->content_type.ptr) {
		kind = csrfi_form_kind_of(req->content_type.ptr, req->content_type.len);
		if (kind == CSRF_FORM_NONE)
			return 0;
	}
	if (!req->body.ptr) {
		/* A body too large to be read is never read: fail closed. */
		uint64_t declared;
		int known;
		if (declared_length(req, &declared, &known) != CSRF_OK)
			return 1;
		if (known && declared == 0)
			return 0;
		if (!known && !req->transfer_encoding.ptr && !req->content_type.ptr)
			return 0; /* no body announced at all */
		return declared > ctx->body_max ? 1 : 2;
	}
	if (req->body.len > ctx->body_max)
		return 1;
	return csrfi_form_each_name(kind, req->content_type.ptr, req->content_type.len, req->body.ptr, req->body.len,
	                            method_field, NULL) != CSRF_OK;
}

/* Step 2: exact (method, path); the path is the target up to '?' or '#'.
 * An exemption for one method never covers a request that overrides its
 * method (header, query or body `_method`): the application would route
 * it to another handler than the exempt one. 1 exempt, 0 not, 2 exempt
 * unless the body (not given yet) overrides the method. */
static int is_exempt(const csrf_ctx *ctx, const csrf_request *req, int overridden)
{
	/* without exemptions nothing to look for: the target is not
	 * scanned for its path (judge_query_overrides scans it too) */
	if (!req->target.ptr || ctx->n_exempt == 0)
		return 0;
	size_t path_len = 0;
	while (path_len < req->target.len && req->target.ptr[path_len] != '?' && req->target.ptr[path_len] != '#')
		path_len++;
	for (size_t i = 0; i < ctx->n_exempt; i++) {
		const csrfi_exemption *e = &ctx->exempt[i];
		if (e->path_len != path_len || memcmp(e->path, req->target.ptr, path_len) != 0)
			continue;
		if (!e->method)
			return 1;
		if (csrfi_slice_eq(req->method, e->method) && !overridden) {
			int b = body_overrides(ctx, req);
			if (b != 1)
				return b == 2 ? 2 : 1;
		}
	}
	return 0;
}

/* The site, worked out at most once per decision and only as far as it
 * is read: whether it is HTTPS (the secret cookie's name, the Referer
 * rule) is cheap; its origin (the Host parsed) is needed only to compare
 * an Origin or a Referer with, which most requests carry neither of. */
typedef struct {
	const csrf_ctx *ctx;
	const csrf_request *req;
	csrfi_site site;
	int known; /* site filled */
	int https; /* -1 until read */
} lazy_site;

static const csrfi_site *site_of(lazy_site *ls)
{
	if (!ls->known) {
		csrfi_site_of(ls->ctx, ls->req, &ls->site);
		ls->known = 1;
		ls->https = ls->site.https;
	}
	return &ls->site;
}

static int https_of(lazy_site *ls)
{
	if (ls->https < 0)
		ls->https = csrfi_site_https(ls->ctx, ls->req);
	return ls->https;
}

/* ---- origin stage ---- */

static int is_trusted(const csrf_ctx *ctx, const csrf_origin *o)
{
	for (size_t i = 0; i < ctx->n_trusted; i++)
		if (csrf_origin_equal(&ctx->trusted[i], o))
			return 1;
	return 0;
}

/* Parses the Origin header (present). */
static csrf_reason parse_origin_header(csrf_slice origin, csrf_origin *o)
{
	origin = csrfi_trim(origin);
	if (csrfi_slice_eq(origin, "null"))
		return CSRF_NULL_ORIGIN;
	if (csrf_origin_parse(origin.ptr, origin.len, o) != CSRF_OK)
		return CSRF_ORIGIN_MALFORMED;
	return CSRF_OK;
}

/* CSRF_OK when the Origin header (present) is self or trusted. */
static csrf_reason check_origin_header(const csrf_ctx *ctx, const csrf_request *req, lazy_site *ls)
{
	csrf_origin o;
	if (req->repeated & CSRF_HDR_ORIGIN)
		return CSRF_ORIGIN_MALFORMED;
	csrf_reason r = parse_origin_header(req->origin, &o);
	if (r != CSRF_OK)
		return r;
	if (is_trusted(ctx, &o))
		return CSRF_OK;
	const csrfi_site *site = site_of(ls);
	if (!site->known)
		return CSRF_HOST_MISSING;
	return csrf_origin_equal(&o, &site->self) ? CSRF_OK : CSRF_ORIGIN_MISMATCH;
}

/* CSRF_OK when the Referer is same-origin or trusted. An http:// Referer
 * to an HTTPS site is insecure even when it would otherwise match (as in
 * Django: it may have been rewritten by anyone on the path). */
static csrf_reason check_referer(const csrf_ctx *ctx, const csrf_request *req, lazy_site *ls)
{
	csrf_slice ref = csrfi_trim(req->referer);
	if (!ref.ptr)
		return CSRF_REFERER_MISSING;
	if (req->repeated & CSRF_HDR_REFERER)
		return CSRF_REFERER_MALFORMED;
	csrf_origin o;
	if (csrf_url_origin(ref.ptr, ref.len, &o) != CSRF_OK) {
		csrf_slice head = {ref.ptr, ref.len < 7 ? ref.len : 7};
		if (https_of(ls) && csrfi_slice_ieq(head, "http://"))
			return CSRF_REFERER_INSECURE;
		return CSRF_REFERER_MALFORMED;
	}
	if (https_of(ls) && strcmp(o.scheme, "http") == 0)
		return CSRF_REFERER_INSECURE;
	if (is_trusted(ctx, &o))
		return CSRF_OK;
	const csrfi_site *site = site_of(ls);
	if (!site->known)
		return CSRF_HOST_MISSING;
	return csrf_origin_equal(&o, &site->self) ? CSRF_OK : CSRF_REFERER_MISMATCH;
}

/* A rejection by fetch metadata, lifted when the Origin is trusted (and
 * then the Origin is the evidence). */
static csrf_reason unless_trusted(const csrf_ctx *ctx, const csrf_request *req, csrf_reason reject, int *evidence)
{
	csrf_origin o;
	if (req->origin.ptr && !(req->repeated & CSRF_HDR_ORIGIN) && parse_origin_header(req->origin, &o) == CSRF_OK &&
	    is_trusted(ctx, &o)) {
		*evidence = 1;
		return CSRF_OK;
	}
	return reject;
}

/* Whether the token stage's answer rests on more than a cookie a
 * same-site attacker could have planted. A browser always sends Origin
 * with a form POST, but any page can make it say null (a no-referrer
 * policy, a sandboxed frame), and a page of a sibling subdomain or of
 * another port of the host can plant its own signed secret cookie with
 * the token that goes with it (cookies are not kept apart by port, nor
 * from a parent domain's Domain attribute, and "__Host-" only by
 * scheme). So Origin: null lets the token decide only where the secret
 * is the caller's own (server-side), or where the token is bound to a
 * session the request carries: a planted secret's token is bound to the
 * attacker's session, never to the victim's. A session cookie planted
 * as well puts the request in the attacker's own session. */
static int unplantable(const csrf_ctx *ctx, const csrf_request *req)
{
	if (req->secret)
		return 1;
	csrf_slice sid = {NULL, 0};
	char buf[CSRF_SESSION_BIND_LEN + 1];
	int bound = csrfi_request_session(ctx, req, &sid, buf) == CSRF_OK && sid.ptr && sid.len > 0;
	csrfi_wipe(buf, sizeof buf);
	return bound;
}

/* Steps 3 to 5. CSRF_OK when the stage passes; *evidence is set when the
 * browser itself proved the request same-origin (or from a trusted
 * origin): Sec-Fetch-Site same-origin, or an Origin that is self or
 * trusted. evidence_only (unsafe GET) asks for positive same-origin
 * evidence: then a request with neither fetch metadata nor Origin needs a
 * good Referer whatever the scheme.
 * Origin: null (a page with Referrer-Policy: no-referrer, a sandboxed
 * frame, a redirect across origins) says nothing either way: an
 * attacker's page can send it as well as the site's own. Where a missing
 * Origin goes on to the Referer and the token, so does null; where
 * evidence is required (mode origin, evidence_only) it proves nothing,
 * not even beside a same-origin Referer (a browser that sends fetch
 * metadata calls a request of an opaque origin cross-site), and is
 * rejected as CSRF_NULL_ORIGIN. A rejection for want of a Referer is
 * reported as CSRF_NULL_ORIGIN too: that is what the browser sent. */
static csrf_reason origin_stage(const csrf_ctx *ctx, const csrf_request *req, lazy_site *ls, int evidence_only,
                                int *evidence)
{
	*evidence = 0;
	csrf_slice sfs = csrfi_trim(req->sec_fetch_site);
	if (sfs.ptr) {
		if (req->repeated & CSRF_HDR_FETCH_SITE)
			return CSRF_FETCH_SITE_MALFORMED;
		if (csrfi_slice_ieq(sfs, "same-origin")) {
			*evidence = 1;
			return CSRF_OK;
		}
		/* A user-initiated request (typed URL, bookmark); when the
		 * site does not accept those it proves nothing. */
		if (csrfi_slice_ieq(sfs, "none"))
			return ctx->allow_fetch_none ? CSRF_OK : unless_trusted(ctx, req, CSRF_NO_EVIDENCE, evidence);
		if (csrfi_slice_ieq(sfs, "same-site"))
			return ctx->allow_same_site ? CSRF_OK : unless_trusted(ctx, req, CSRF_SAME_SITE, evidence);
		if (csrfi_slice_ieq(sfs, "cross-site"))
			return unless_trusted(ctx, req, CSRF_CROSS_SITE, evidence);
		return CSRF_FETCH_SITE_MALFORMED;
	}
	int null_origin = 0;
	if (req->origin.ptr) {
		csrf_reason r = check_origin_header(ctx, req, ls);
		if (r != CSRF_NULL_ORIGIN) {
			*evidence = r == CSRF_OK;
			return r;
		}
		if (evidence_only || ctx->mode == CSRF_MODE_ORIGIN)
			return CSRF_NULL_ORIGIN;
		null_origin = 1;
	}
	if (evidence_only)
		return req->referer.ptr ? check_referer(ctx, req, ls) : CSRF_NO_EVIDENCE;
	if (https_of(ls)) {
		csrf_reason r = check_referer(ctx, req, ls);
		/* In origin_or_token a request with no evidence at all goes to
		 * the token, as over HTTP, where the secret cookie cannot have
		 * been planted over plain HTTP: the caller's own secret, or
		 * the "__Host-" cookie (which another HTTPS port of the host
		 * could still set: only a browser without fetch metadata gets
		 * here, and null asks for a bound token too). Evidence against
		 * still rejects. */
		if (r == CSRF_REFERER_MISSING && ctx->mode == CSRF_MODE_ORIGIN_OR_TOKEN &&
		    (req->secret || !ctx->secret_cookie_set || strncmp(ctx->secret_cookie, CSRF_HOST_PREFIX, 7) == 0))
			return null_origin && !unplantable(ctx, req) ? CSRF_NULL_ORIGIN : CSRF_OK;
		return r == CSRF_REFERER_MISSING && null_origin ? CSRF_NULL_ORIGIN : r;
	}
	/* Plain HTTP with neither header (or Origin: null): a non-browser
	 * client, an old browser, a no-referrer page. It goes on to the
	 * token stage; in mode origin (never with null) it is allowed, as
	 * Go's CrossOriginProtection allows it. Null only where the token
	 * rests on more than a cookie another site could have planted. */
	if (null_origin && !unplantable(ctx, req))
		return CSRF_NULL_ORIGIN;
	return CSRF_OK;
}

/* ---- WebSocket handshakes ---- */

/* 1 when an Upgrade value names the websocket protocol: a list of
 * protocol["/" version] (RFC 9110 7.8), names without regard to case,
 * blanks and empty items ignored. */
static int names_websocket(csrf_slice v)
{
	size_t i = 0;
	while (i <= v.len) {
		size_t start = i;
		while (i < v.len && v.ptr[i] != ',')
			i++;
		size_t name = start;
		while (name < i && v.ptr[name] != '/')
			name++;
		if (csrfi_slice_ieq(csrfi_trim((csrf_slice){v.ptr + start, name - start}), "websocket"))
			return 1;
		i++;
	}
	return 0;
}

/* 1 when the request opens a WebSocket (RFC 6455 4.1): Upgrade names
 * websocket, or the browser's Sec-Fetch-Mode says websocket; either sent
 * twice counts too. A page cannot set either header (Fetch's forbidden
 * request headers), so in a browser's request they mean its own
 * handshake. Connection is not read: a backend may upgrade on Upgrade
 * alone, and what a browser sends beside it changes nothing. */
static int is_websocket(const csrf_request *req)
{
	if (req->repeated & CSRF_HDR_UPGRADE)
		return 1;
	if (req->upgrade.ptr && names_websocket(req->upgrade))
		return 1;
	return req->sec_fetch_mode.ptr && csrfi_slice_ieq(csrfi_trim(req->sec_fetch_mode), "websocket");
}

/* A safe method that opens a WebSocket, or any GET under unsafe_get:
 * the origin stage as it asks for evidence, never the token. A page that
 * opens a WebSocket to the site reads and writes it with the user's
 * cookies (Cross-Site WebSocket Hijacking), and a handshake cannot carry
 * a form token (one in the URL would leak). A browser always sends Origin
 * on a handshake (Fetch: mode "websocket"), so one with neither Origin
 * nor Sec-Fetch-Site is no browser's (curl, a native app) and passes, as
 * gorilla/websocket's and Spring's origin checks let it; null and other
 * origins are rejected as websocket_origin, whatever the mode. Under
 * unsafe_get every GET needs evidence, a handshake too. */
static csrf_reason evidence_stage(const csrf_ctx *ctx, const csrf_request *req, lazy_site *ls, int unsafe_get,
                                  int handshake)
{
	int evidence;
	csrf_reason r = CSRF_OK;
	if (unsafe_get || req->sec_fetch_site.ptr || req->origin.ptr)
		r = origin_stage(ctx, req, ls, 1, &evidence);
	if (handshake &&
	    (r == CSRF_CROSS_SITE || r == CSRF_SAME_SITE || r == CSRF_ORIGIN_MISMATCH || r == CSRF_NULL_ORIGIN))
		return CSRF_WEBSOCKET_ORIGIN;
	return r == CSRF_OK ? CSRF_ORIGIN_VERIFIED : r;
}

/* ---- token stage ---- */

static int derived_field(void *ud, const char *name, size_t len, int encoded)
{
	(void)ud;
	(void)encoded;
	return csrfi_field_name_derived(name, len);
}

/* No field of this secret's name. With derived names, a field named for
 * another secret is the form of a page rendered before the secret changed
 * (a login or logout since, the cookies cleared): a token of another
 * session, so the person is told the page is from an earlier session, not
 * that it carried no token. A forger who sends such a field learns
 * nothing: the advice is the same, and nothing was checked against it. */
static csrf_reason missing_field(const csrf_ctx *ctx, const csrf_request *req)
{
	if (ctx->field_name[0])
		return CSRF_TOKEN_MISSING;
	csrfi_form_kind kind = csrfi_form_kind_of(req->content_type.ptr, req->content_type.len);
	return csrfi_form_each_name(kind, req->content_type.ptr, req->content_type.len, req->body.ptr, req->body.len,
	                            derived_field, NULL) == CSRF_NOT_FOUND
	           ? CSRF_TOKEN_SESSION
	           : CSRF_TOKEN_MISSING;
}

/* The body's part of the token stage before its field is looked for:
 * CSRF_OK when the body was given and is to be searched; else the
 * stage's reason, with *needs_body set when it is a form not given yet.
 * The secret is not read here. */
static csrf_reason body_ready(const csrf_ctx *ctx, const csrf_request *req, int *needs_body)
{
	if (!req->content_type.ptr)
		return CSRF_TOKEN_MISSING;
	if (req->repeated & (CSRF_HDR_CONTENT_TYPE | CSRF_HDR_CONTENT_LENGTH))
		return CSRF_BODY_MALFORMED;
	if (csrfi_form_kind_of(req->content_type.ptr, req->content_type.len) == CSRF_FORM_NONE)
		return CSRF_TOKEN_MISSING;
	uint64_t declared;
	int known;
	if (declared_length(req, &declared, &known) != CSRF_OK)
		return CSRF_BODY_MALFORMED;
	if (declared > ctx->body_max || (req->body.ptr && req->body.len > ctx->body_max))
		return CSRF_BODY_TOO_LARGE;
	if (!req->body.ptr) {
		if (known && declared == 0)
			return CSRF_TOKEN_MISSING;
		*needs_body = 1;
		return CSRF_TOKEN_MISSING;
	}
	return CSRF_OK;
}

/* Where the token field must come from when no token header came: the
 * body. CSRF_OK with the value in *token: a slice of the body, or decoded
 * into buf (cap bytes) when it was percent-encoded; or the stage's
 * reason; *needs_body when the body is a form not given yet. */
static csrf_reason body_token(const csrf_ctx *ctx, const csrf_request *req, const uint8_t secret[CSRF_SECRET_LEN],
                              char *buf, size_t cap, csrf_slice *token, int *needs_body)
{
	char field[CSRF_FIELD_NAME_MAX + 1];
	csrf_reason r = body_ready(ctx, req, needs_body);
	if (r != CSRF_OK)
		return r;
	r = csrfi_field_name(ctx, secret, field, sizeof field);
	if (r != CSRF_OK)
		return r;
	r = csrfi_body_field(req->content_type.ptr, req->content_type.len, req->body.ptr, req->body.len, field,
	                     strnlen(field, sizeof field), buf, cap, token);
	csrfi_wipe(field, sizeof field);
	switch (r) {
	case CSRF_OK:
		return CSRF_OK;
	case CSRF_NOT_FOUND:
		return missing_field(ctx, req);
	case CSRF_ERR_BUFFER:
		return CSRF_TOKEN_MALFORMED;
	default:
		return CSRF_BODY_MALFORMED;
	}
}

/* 1 when the token can only come from a body not given yet and the rest
 * of the stage could pass: the secret cookie as far as it can be judged
 * without its signature, and the session binding. The adapter then reads
 * the body and calls again, and the signature is checked once, in that
 * call (it is the stage's one costly step), with the same reason as ever
 * for a forged one. A cookie that fails any other way is answered at
 * once, as before, and no body is read for it. */
static int waits_for_body(const csrf_ctx *ctx, const csrf_request *req, int https)
{
	int needs = 0;
	csrf_slice sid;
	char sid_buf[CSRF_SESSION_BIND_LEN + 1];
	if (req->body.ptr || body_ready(ctx, req, &needs) != CSRF_TOKEN_MISSING || !needs)
		return 0;
	if (!csrfi_request_secret_plausible(ctx, req, https))
		return 0;
	csrf_reason r = csrfi_request_session(ctx, req, &sid, sid_buf);
	csrfi_wipe(sid_buf, sizeof sid_buf);
	return r == CSRF_OK;
}

/* Step 6. The token comes from the header when one is sent with content
 * (an empty X-CSRF-Token counts as absent, as a client that sends the
 * header with nothing in it has no token), else from the body field;
 * never from the query string. */
static csrf_reason token_stage(const csrf_ctx *ctx, const csrf_request *req, lazy_site *ls, int *needs_body)
{
	uint8_t secret[CSRF_SECRET_LEN];
	char value[TOKEN_FIELD_CAP];
	csrf_slice sid;
	char sid_buf[CSRF_SESSION_BIND_LEN + 1];
	csrf_slice token = {NULL, 0};
	int https = https_of(ls);
	int from_body = 0; /* value held the body's token field */

	csrf_slice header = csrfi_trim(req->token_header);
	if (!(header.ptr && header.len) && waits_for_body(ctx, req, https)) {
		*needs_body = 1;
		return CSRF_TOKEN_MISSING;
	}
	csrf_reason r = csrfi_request_secret(ctx, req, https, secret);
	if (r != CSRF_OK)
		goto out;
	r = csrfi_request_session(ctx, req, &sid, sid_buf);
	if (r != CSRF_OK)
		goto out;

	if (header.ptr && header.len) {
		if (req->repeated & CSRF_HDR_TOKEN) {
			r = CSRF_TOKEN_MALFORMED;
			goto out;
		}
		token = header;
	} else {
		from_body = 1;
		r = body_token(ctx, req, secret, value, sizeof value, &token, needs_body);
		if (r != CSRF_OK)
			goto out;
	}
	r = csrfi_token_verify(ctx, secret, sid.ptr, sid.len, token.ptr, token.len, req->now);
out:
	csrfi_wipe(secret, sizeof secret);
	/* a token from the header never touched value: only a body's is
	 * wiped (TOKEN_FIELD_CAP bytes a request saved on the other) */
	if (from_body)
		csrfi_wipe(value, sizeof value);
	csrfi_wipe(sid_buf, sizeof sid_buf);
	return r;
}

/* Steps 3 to 6 for an unsafe request that is not exempt. */
static csrf_reason stages(const csrf_ctx *ctx, const csrf_request *req, int unsafe_get, int handshake, int *needs_body)
{
	int evidence;
	lazy_site ls; /* its site is filled (csrfi_site_of clears it) before it is read */
	csrf_reason r;
	ls.ctx = ctx;
	ls.req = req;
	ls.known = 0;
	ls.https = -1;
	/* Evidence whatever the mode: a legacy application changes state on
	 * GET, and no token is asked of a link or a handshake. */
	if (unsafe_get || handshake)
		return evidence_stage(ctx, req, &ls, unsafe_get, handshake);
	if (ctx->mode != CSRF_MODE_TOKEN) {
		r = origin_stage(ctx, req, &ls, 0, &evidence);
		if (r != CSRF_OK)
			return r;
		if (ctx->mode == CSRF_MODE_ORIGIN || (ctx->mode == CSRF_MODE_ORIGIN_OR_TOKEN && evidence))
			return CSRF_ORIGIN_VERIFIED;
	}
	return token_stage(ctx, req, &ls, needs_body);
}

/* The whole decision, before report-only. */
static csrf_reason decide(const csrf_ctx *ctx, const csrf_request *req, int *needs_body)
{
	int safe, overridden;
	csrf_reason r = effective_method(req, &safe, &overridden);
	if (r != CSRF_OK)
		return r;
	/* every safe method: a preflight OPTIONS reaches any URL cross-site */
	int unsafe_get = safe && ctx->unsafe_get;
	int handshake = safe && is_websocket(req);
	if (safe && !unsafe_get && !handshake)
		return CSRF_SAFE_METHOD;
	int exempt = is_exempt(ctx, req, overridden);
	if (exempt == 1)
		return CSRF_EXEMPT;
	r = stages(ctx, req, unsafe_get, handshake, needs_body);
	if (exempt == 2 && !csrf_reason_allows(r)) {
		/* Exempt unless the body overrides the method: the body
		 * decides, so it must be read first. */
		*needs_body = 1;
		return CSRF_TOKEN_MISSING;
	}
	return r;
}

CSRF_API csrf_result csrf_check(const csrf_ctx *ctx, const csrf_request *req)
{
	csrf_result res = {0, CSRF_ERR_ARG, 0, 0};
	if (!ctx || !req)
		return res;
	res.reason = decide(ctx, req, &res.needs_body);
	csrfi_wipe_regs(); /* the secret, the tag computed */
	if (res.needs_body) {
		/* Not a verdict yet: the adapter reads the body and asks
		 * again. Report-only waits for the verdict too. */
		res.reason = CSRF_TOKEN_MISSING;
		return res;
	}
	res.allowed = csrf_reason_allows(res.reason);
	if (!res.allowed && ctx->report_only) {
		res.allowed = 1;
		res.report_only = 1;
	}
	return res;
}
