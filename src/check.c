/* check.c - the decision of DESIGN.md: the effective method (and method
 * overrides), exemptions, fetch metadata, Origin and Referer, then the
 * token stage with the secret from the caller or the signed cookie.
 * Everything lives on the stack; nothing here allocates. */
#include "internal.h"

/* Longest override value looked at: real methods are short words. */
#define METHOD_OVERRIDE_MAX 32
/* Room for the decoded token field: a value longer than a masked token
 * by more than this is not decoded at all and counts as malformed. */
#define TOKEN_FIELD_CAP (CSRF_TOKEN_LEN + 8)

static int is_ows(char c)
{
	return c == ' ' || c == '\t';
}

/* The slice without leading and trailing spaces and tabs; absent stays
 * absent. */
static csrf_slice trim(csrf_slice s)
{
	if (!s.ptr)
		return s;
	while (s.len && is_ows(s.ptr[0])) {
		s.ptr++;
		s.len--;
	}
	while (s.len && is_ows(s.ptr[s.len - 1]))
		s.len--;
	return s;
}

static int is_alpha(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Methods are case-sensitive (RFC 9110 9.1): "get" is not GET. */
static int is_safe_method(const char *p, size_t n)
{
	csrf_slice s = {p, n};
	return csrf_slice_eq(s, "GET") || csrf_slice_eq(s, "HEAD") || csrf_slice_eq(s, "OPTIONS");
}

static int is_get_or_head(csrf_slice m)
{
	return csrf_slice_eq(m, "GET") || csrf_slice_eq(m, "HEAD");
}

/* An override value: CSRF_METHOD_OVERRIDE unless it is a word of 1 to
 * METHOD_OVERRIDE_MAX letters; otherwise *unsafe is set when it names a
 * method other than GET, HEAD and OPTIONS. */
static csrf_reason judge_override(const char *p, size_t n, int *unsafe)
{
	if (n == 0 || n > METHOD_OVERRIDE_MAX)
		return CSRF_METHOD_OVERRIDE;
	for (size_t i = 0; i < n; i++)
		if (!is_alpha((unsigned char)p[i]))
			return CSRF_METHOD_OVERRIDE;
	if (!is_safe_method(p, n))
		*unsafe = 1;
	return CSRF_OK;
}

/* A decoded query parameter name that a framework would read as
 * `_method`: PHP turns '.', ' ' and '[' of names into '_' and "x[]" into
 * an array x, so ".method", " method" and "_method[]" count too. */
static int is_override_name(const char *name, size_t len)
{
	if (len == 9 && name[7] == '[' && name[8] == ']')
		len = 7;
	if (len != 7)
		return 0;
	return (name[0] == '_' || name[0] == '.' || name[0] == ' ' || name[0] == '[') &&
	       memcmp(name + 1, "method", 6) == 0;
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
		/* Query parameters decode as form fields do; a name that does
		 * not decode, or is too long to be _method[], is another one. */
		char name[16];
		size_t name_len = 0;
		if (csrf_form_decode(target.ptr + pair, eq - pair, name, sizeof name, &name_len) != CSRF_OK ||
		    !is_override_name(name, name_len))
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
	if (req->method_override.ptr) {
		csrf_slice v = trim(req->method_override);
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

/* A `_method` field in a form body (Rails, Laravel, Symfony read it):
 * anything but "not there" counts, so a malformed body fails closed. */
static int body_overrides(const csrf_request *req)
{
	char v[METHOD_OVERRIDE_MAX + 1];
	size_t n = 0;
	if (!req->body.ptr || !req->content_type.ptr)
		return 0;
	csrf_reason r = csrf_body_field(req->content_type.ptr, req->content_type.len, req->body.ptr, req->body.len,
	                                "_method", 7, v, sizeof v, &n);
	return r != CSRF_NOT_FOUND;
}

/* Step 2: exact (method, path); the path is the target up to '?' or '#'.
 * An exemption for one method never covers a request that overrides its
 * method (header, query or body `_method`): the application would route
 * it to another handler than the exempt one. */
static int is_exempt(const csrf_ctx *ctx, const csrf_request *req, int overridden)
{
	if (!req->target.ptr)
		return 0;
	size_t path_len = 0;
	while (path_len < req->target.len && req->target.ptr[path_len] != '?' && req->target.ptr[path_len] != '#')
		path_len++;
	for (size_t i = 0; i < ctx->n_exempt; i++) {
		const csrf_exemption *e = &ctx->exempt[i];
		if (e->path_len != path_len || memcmp(e->path, req->target.ptr, path_len) != 0)
			continue;
		if (!e->method)
			return 1;
		if (csrf_slice_eq(req->method, e->method) && !overridden && !body_overrides(req))
			return 1;
	}
	return 0;
}

/* ---- origin stage ---- */

/* What the origin stage knows about the site itself. */
typedef struct {
	int known; /* self holds the site's origin */
	int https; /* the site is served over HTTPS */
	csrf_origin self;
} site_info;

/* The configured self origin, else the configured scheme plus Host. The
 * scheme is never guessed from headers; without one the site counts as
 * HTTPS so that the Referer rule applies (fail closed). */
static void site_of(const csrf_ctx *ctx, const csrf_request *req, site_info *site)
{
	memset(site, 0, sizeof *site);
	if (ctx->has_self) {
		site->known = 1;
		site->self = ctx->self;
		site->https = strcmp(ctx->self.scheme, "https") == 0;
		return;
	}
	csrf_slice scheme = trim(req->scheme);
	csrf_slice host = trim(req->host);
	site->https = !csrf_slice_ieq(scheme, "http");
	if (!scheme.ptr || !host.ptr || host.len == 0)
		return;
	char buf[sizeof site->self.scheme + 3 + sizeof site->self.host + 8];
	if (scheme.len + 3 + host.len > sizeof buf)
		return;
	memcpy(buf, scheme.ptr, scheme.len);
	memcpy(buf + scheme.len, "://", 3);
	memcpy(buf + scheme.len + 3, host.ptr, host.len);
	site->known = csrf_origin_parse(buf, scheme.len + 3 + host.len, &site->self) == CSRF_OK;
}

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
	origin = trim(origin);
	if (csrf_slice_eq(origin, "null"))
		return CSRF_NULL_ORIGIN;
	if (csrf_origin_parse(origin.ptr, origin.len, o) != CSRF_OK)
		return CSRF_ORIGIN_MALFORMED;
	return CSRF_OK;
}

/* CSRF_OK when the Origin header (present) is self or trusted. */
static csrf_reason check_origin_header(const csrf_ctx *ctx, const csrf_request *req, const site_info *site)
{
	csrf_origin o;
	csrf_reason r = parse_origin_header(req->origin, &o);
	if (r != CSRF_OK)
		return r;
	if (is_trusted(ctx, &o))
		return CSRF_OK;
	if (!site->known)
		return CSRF_HOST_MISSING;
	return csrf_origin_equal(&o, &site->self) ? CSRF_OK : CSRF_ORIGIN_MISMATCH;
}

/* CSRF_OK when the Referer is same-origin or trusted. An http:// Referer
 * to an HTTPS site is insecure even when it would otherwise match (as in
 * Django: it may have been rewritten by anyone on the path). */
static csrf_reason check_referer(const csrf_ctx *ctx, const csrf_request *req, const site_info *site)
{
	csrf_slice ref = trim(req->referer);
	if (!ref.ptr)
		return CSRF_REFERER_MISSING;
	csrf_origin o;
	if (csrf_url_origin(ref.ptr, ref.len, &o) != CSRF_OK) {
		csrf_slice head = {ref.ptr, ref.len < 7 ? ref.len : 7};
		if (site->https && csrf_slice_ieq(head, "http://"))
			return CSRF_REFERER_INSECURE;
		return CSRF_REFERER_MALFORMED;
	}
	if (site->https && strcmp(o.scheme, "http") == 0)
		return CSRF_REFERER_INSECURE;
	if (is_trusted(ctx, &o))
		return CSRF_OK;
	if (!site->known)
		return CSRF_HOST_MISSING;
	return csrf_origin_equal(&o, &site->self) ? CSRF_OK : CSRF_REFERER_MISMATCH;
}

/* A rejection by fetch metadata, lifted when the Origin is trusted. */
static csrf_reason unless_trusted(const csrf_ctx *ctx, const csrf_request *req, csrf_reason reject)
{
	csrf_origin o;
	if (req->origin.ptr && parse_origin_header(req->origin, &o) == CSRF_OK && is_trusted(ctx, &o))
		return CSRF_OK;
	return reject;
}

/* Steps 3 to 5. CSRF_OK when the stage passes. evidence_only (unsafe GET)
 * asks for positive same-origin evidence: then a request with neither
 * fetch metadata nor Origin needs a good Referer whatever the scheme. */
static csrf_reason origin_stage(const csrf_ctx *ctx, const csrf_request *req, int evidence_only)
{
	csrf_slice sfs = trim(req->sec_fetch_site);
	if (sfs.ptr) {
		if (csrf_slice_ieq(sfs, "same-origin"))
			return CSRF_OK;
		/* A user-initiated request (typed URL, bookmark); when the
		 * site does not accept those it proves nothing. */
		if (csrf_slice_ieq(sfs, "none"))
			return ctx->allow_fetch_none ? CSRF_OK : unless_trusted(ctx, req, CSRF_NO_EVIDENCE);
		if (csrf_slice_ieq(sfs, "same-site"))
			return ctx->allow_same_site ? CSRF_OK : unless_trusted(ctx, req, CSRF_SAME_SITE);
		if (csrf_slice_ieq(sfs, "cross-site"))
			return unless_trusted(ctx, req, CSRF_CROSS_SITE);
		return CSRF_FETCH_SITE_MALFORMED;
	}
	site_info site;
	site_of(ctx, req, &site);
	if (req->origin.ptr)
		return check_origin_header(ctx, req, &site);
	if (evidence_only)
		return req->referer.ptr ? check_referer(ctx, req, &site) : CSRF_NO_EVIDENCE;
	if (site.https)
		return check_referer(ctx, req, &site);
	/* Plain HTTP with neither header: a non-browser client or an old
	 * browser. It goes on to the token stage; in mode origin it is
	 * allowed, as Go's CrossOriginProtection allows it. */
	return CSRF_OK;
}

/* ---- token stage ---- */

static size_t name_len(const char *s, size_t cap)
{
	size_t n = 0;
	while (n < cap && s[n])
		n++;
	return n;
}

/* Looks up a cookie that must appear once. A name sent twice is how a
 * cookie planted from a sibling subdomain or another port shows itself
 * (the browser sends both, in an order the attacker can influence), so
 * that is CSRF_COOKIE_AMBIGUOUS rather than a guess at which one is ours. */
static csrf_reason cookie_once(csrf_slice header, const char *name, size_t nlen, csrf_slice *v)
{
	csrf_reason r = csrf_cookie_get(header.ptr, header.len, name, nlen, v);
	if (r != CSRF_OK)
		return r;
	const char *rest = v->ptr + v->len;
	size_t left = header.len - (size_t)(rest - header.ptr);
	csrf_slice again;
	r = csrf_cookie_get(rest, left, name, nlen, &again);
	return r == CSRF_NOT_FOUND ? CSRF_OK : r == CSRF_OK ? CSRF_COOKIE_AMBIGUOUS : r;
}

/* The session secret: the caller's, or decoded from the signed cookie. */
static csrf_reason load_secret(const csrf_ctx *ctx, const csrf_request *req, uint8_t secret[CSRF_SECRET_LEN])
{
	if (req->secret) {
		memcpy(secret, req->secret, CSRF_SECRET_LEN);
		return CSRF_OK;
	}
	if (!req->cookie.ptr)
		return CSRF_SECRET_MISSING;
	csrf_slice v;
	csrf_reason r =
	    cookie_once(req->cookie, ctx->secret_cookie, name_len(ctx->secret_cookie, sizeof ctx->secret_cookie), &v);
	if (r == CSRF_NOT_FOUND)
		return CSRF_SECRET_MISSING;
	if (r == CSRF_TOO_LARGE)
		return CSRF_HEADER_TOO_LARGE;
	if (r == CSRF_COOKIE_AMBIGUOUS)
		return r;
	if (r != CSRF_OK)
		return CSRF_SECRET_INVALID;
	r = csrf_secret_cookie_decode(ctx, v.ptr, v.len, secret);
	if (r == CSRF_OK || r == CSRF_UNKNOWN_KEY)
		return r;
	return CSRF_SECRET_INVALID;
}

/* The session id tokens are bound to: the caller's, else the configured
 * session cookie's value, else empty. */
static csrf_reason load_session(const csrf_ctx *ctx, const csrf_request *req, csrf_slice *sid)
{
	static const char empty[1] = "";
	sid->ptr = empty;
	sid->len = 0;
	if (req->session_id.ptr) {
		*sid = req->session_id;
		return CSRF_OK;
	}
	if (!ctx->session_cookie[0] || !req->cookie.ptr)
		return CSRF_OK;
	csrf_slice v;
	csrf_reason r = cookie_once(req->cookie, ctx->session_cookie,
	                            name_len(ctx->session_cookie, sizeof ctx->session_cookie), &v);
	if (r == CSRF_TOO_LARGE || r == CSRF_COOKIE_AMBIGUOUS)
		return r == CSRF_TOO_LARGE ? CSRF_HEADER_TOO_LARGE : r;
	/* Missing or unreadable: an empty session, which a token bound to a
	 * real session does not verify for. */
	if (r == CSRF_OK)
		*sid = v;
	return CSRF_OK;
}

/* Step 6. The token comes from the header when one is sent with content
 * (an empty X-CSRF-Token counts as absent, as a client that sends the
 * header with nothing in it has no token), else from the body field;
 * never from the query string. */
static csrf_reason token_stage(const csrf_ctx *ctx, const csrf_request *req)
{
	uint8_t secret[CSRF_SECRET_LEN];
	char field[CSRF_FIELD_NAME_MAX + 1];
	char value[TOKEN_FIELD_CAP];
	csrf_slice sid;
	csrf_slice token = {NULL, 0};

	csrf_reason r = load_secret(ctx, req, secret);
	if (r != CSRF_OK)
		goto out;
	r = load_session(ctx, req, &sid);
	if (r != CSRF_OK)
		goto out;

	csrf_slice header = trim(req->token_header);
	if (header.ptr && header.len) {
		token = header;
	} else if (req->body.ptr && req->content_type.ptr) {
		r = csrf_field_name(ctx, secret, field, sizeof field);
		if (r != CSRF_OK)
			goto out;
		size_t got = 0;
		r = csrf_body_field(req->content_type.ptr, req->content_type.len, req->body.ptr, req->body.len, field,
		                    name_len(field, sizeof field), value, sizeof value, &got);
		switch (r) {
		case CSRF_OK:
			token.ptr = value;
			token.len = got;
			break;
		case CSRF_NOT_FOUND:
			r = CSRF_TOKEN_MISSING;
			goto out;
		case CSRF_ERR_BUFFER:
			r = CSRF_TOKEN_MALFORMED;
			goto out;
		case CSRF_TOO_LARGE:
			r = CSRF_BODY_TOO_LARGE;
			goto out;
		default:
			r = CSRF_BODY_MALFORMED;
			goto out;
		}
	}
	if (!token.ptr) {
		r = CSRF_TOKEN_MISSING;
		goto out;
	}
	r = csrf_token_verify(ctx, secret, sid.ptr, sid.len, token.ptr, token.len, req->now);
out:
	csrf_wipe(secret, sizeof secret);
	csrf_wipe(value, sizeof value);
	csrf_wipe(field, sizeof field);
	return r;
}

/* The whole decision, before report-only. */
static csrf_reason decide(const csrf_ctx *ctx, const csrf_request *req)
{
	int safe, overridden;
	csrf_reason r = effective_method(req, &safe, &overridden);
	if (r != CSRF_OK)
		return r;
	int unsafe_get = safe && ctx->unsafe_get && is_get_or_head(req->method);
	if (safe && !unsafe_get)
		return CSRF_SAFE_METHOD;
	if (is_exempt(ctx, req, overridden))
		return CSRF_EXEMPT;
	if (unsafe_get) {
		/* Evidence whatever the mode: the legacy application changes
		 * state on GET, and no token is asked of a link. */
		r = origin_stage(ctx, req, 1);
		return r == CSRF_OK ? CSRF_ORIGIN_VERIFIED : r;
	}
	if (ctx->mode != CSRF_MODE_TOKEN) {
		r = origin_stage(ctx, req, 0);
		if (r != CSRF_OK)
			return r;
		if (ctx->mode == CSRF_MODE_ORIGIN)
			return CSRF_ORIGIN_VERIFIED;
	}
	return token_stage(ctx, req);
}

CSRF_API csrf_result csrf_check(const csrf_ctx *ctx, const csrf_request *req)
{
	csrf_result res = {0, CSRF_ERR_ARG, 0};
	if (!ctx || !req)
		return res;
	res.reason = decide(ctx, req);
	res.allowed = csrf_reason_allows(res.reason);
	if (!res.allowed && ctx->report_only) {
		res.allowed = 1;
		res.report_only = 1;
	}
	return res;
}
