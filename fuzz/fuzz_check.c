/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_check.c - csrf_check on a whole random request.
 * Input: CONTROL |#| METHOD |#| TARGET |#| SCHEME |#| HOST |#| ORIGIN |#|
 * REFERER |#| SEC-FETCH-SITE |#| OVERRIDE |#| COOKIE |#| CONTENT-TYPE |#|
 * TOKEN-HEADER |#| BODY |#| SESSION-ID.
 * A piece that is exactly "-" is an absent header. In the pieces,
 * "@TOKEN@" becomes a valid token for this session, "@OTHER@" a valid
 * token of another session, "@FIELD@" the hidden-field name and
 * "@COOKIE@" a valid signed secret cookie, so the fuzzer can build
 * legitimate requests as well as forged ones.
 * Invariants: the reason is a known code and decides allowed; the answer
 * is the same twice and allocates nothing; a safe-method pass really has
 * a safe method and no unsafe override; an exemption pass matches the
 * exemption exactly; an unsafe request that is allowed carried no
 * cross-site evidence (Sec-Fetch-Site cross-site, or same-site where not
 * allowed, or an unknown value; an Origin that is null, malformed or
 * foreign, or null in mode origin or on an evidence-checked GET (null
 * elsewhere is judged as no Origin); over HTTPS without either, a
 * foreign Referer), and, unless
 * the mode is origin-only or the request an evidence-checked GET, a
 * valid token of this session that the harness put there; a legitimate
 * request built from the same pieces is allowed.
 */
#include "fuzz_util.h"

#include <sanitizer/allocator_interface.h>

#define NOW 1700000000
#define SELF "http://127.0.0.1:8080"
#define TRUSTED "https://trusted.example"

enum {
	P_CONTROL,
	P_METHOD,
	P_TARGET,
	P_SCHEME,
	P_HOST,
	P_ORIGIN,
	P_REFERER,
	P_SFS,
	P_OVERRIDE,
	P_COOKIE,
	P_CT,
	P_TOKEN_HDR,
	P_BODY,
	P_SID,
	P_COUNT
};

/* The contexts a run picks from. */
typedef struct {
	csrf_ctx *ctx;
	csrf_mode mode;
	int has_self;      /* else self is scheme + Host */
	int same_site_ok;  /* Sec-Fetch-Site: same-site passes */
	int fetch_none_ok; /* Sec-Fetch-Site: none passes */
	int unsafe_get;
	int stateless; /* secret from the signed cookie */
} ctx_info;

#define N_CTX 7
static ctx_info ctxs[N_CTX];
static csrf_origin trusted_origin, self_origin;
static uint8_t secret[CSRF_SECRET_LEN];

/* Allocation counter for "csrf_check allocates nothing": the calling
 * thread's own allocations only. The hooks see every thread's, and
 * libFuzzer's own thread allocates once at its start (32 bytes), which
 * under load can fall inside a check. */
static _Thread_local size_t n_mallocs;
static void on_malloc(const volatile void *p, size_t n)
{
	(void)p;
	(void)n;
	n_mallocs++;
}
static void on_free(const volatile void *p)
{
	(void)p;
}

static void make_ctx(ctx_info *ci, csrf_mode mode, int has_self, int same_site_ok, int fetch_none_ok, int unsafe_get,
                     int stateless)
{
	uint8_t key[CSRF_KEY_LEN];
	memset(key, 0x42, sizeof key);
	FZ_ASSERT(csrf_ctx_new(&ci->ctx, NULL) == CSRF_OK);
	FZ_ASSERT(csrf_ctx_add_key(ci->ctx, 3, key, 1) == CSRF_OK);
	if (has_self)
		FZ_ASSERT(csrf_ctx_set_self_origin(ci->ctx, SELF, sizeof SELF - 1) == CSRF_OK);
	FZ_ASSERT(csrf_ctx_add_trusted_origin(ci->ctx, TRUSTED, sizeof TRUSTED - 1) == CSRF_OK);
	FZ_ASSERT(csrf_ctx_add_exemption(ci->ctx, "POST", "/hook", 5) == CSRF_OK);
	csrf_ctx_set_mode(ci->ctx, mode);
	csrf_ctx_set_allow_same_site(ci->ctx, same_site_ok);
	csrf_ctx_set_allow_fetch_none(ci->ctx, fetch_none_ok);
	csrf_ctx_set_unsafe_get(ci->ctx, unsafe_get);
	if (stateless)
		FZ_ASSERT(csrf_ctx_set_session_cookie(ci->ctx, "sid") == CSRF_OK);
	*ci = (ctx_info){ci->ctx, mode, has_self, same_site_ok, fetch_none_ok, unsafe_get, stateless};
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	make_ctx(&ctxs[0], CSRF_MODE_BOTH, 1, 0, 1, 0, 0);
	make_ctx(&ctxs[1], CSRF_MODE_TOKEN, 1, 0, 1, 0, 0);
	make_ctx(&ctxs[2], CSRF_MODE_ORIGIN, 1, 0, 1, 0, 0);
	make_ctx(&ctxs[3], CSRF_MODE_BOTH, 0, 1, 0, 0, 0);
	make_ctx(&ctxs[4], CSRF_MODE_BOTH, 1, 0, 1, 1, 1);
	make_ctx(&ctxs[5], CSRF_MODE_ORIGIN, 0, 0, 0, 1, 0);
	make_ctx(&ctxs[6], CSRF_MODE_ORIGIN_OR_TOKEN, 1, 0, 1, 0, 1);
	FZ_ASSERT(csrf_origin_parse(TRUSTED, sizeof TRUSTED - 1, &trusted_origin) == CSRF_OK);
	FZ_ASSERT(csrf_origin_parse(SELF, sizeof SELF - 1, &self_origin) == CSRF_OK);
	memset(secret, 0x5a, sizeof secret);
	__sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
	return 0;
}

/* ---- pieces ---- */

typedef struct {
	char *ptr; /* NULL: absent */
	size_t len;
	int had_token; /* "@TOKEN@" was replaced */
	int had_cookie;
} field;

/* Replaces every occurrence of marker in f by rep (a new exact block). */
static int subst(field *f, const char *marker, const char *rep)
{
	size_t ml = strlen(marker), rl = strlen(rep), count = 0;
	if (!f->ptr || f->len < ml)
		return 0;
	for (size_t i = 0; i + ml <= f->len; i++)
		if (memcmp(f->ptr + i, marker, ml) == 0) {
			count++;
			i += ml - 1;
		}
	if (!count)
		return 0;
	size_t n = f->len - count * ml + count * rl;
	char *out = malloc(n ? n : 1), *w = out;
	FZ_ASSERT(out != NULL);
	for (size_t i = 0; i < f->len;) {
		if (i + ml <= f->len && memcmp(f->ptr + i, marker, ml) == 0) {
			memcpy(w, rep, rl);
			w += rl;
			i += ml;
		} else {
			*w++ = f->ptr[i++];
		}
	}
	free(f->ptr);
	f->ptr = out;
	f->len = n;
	return 1;
}

static csrf_slice sl(const field *f)
{
	return (csrf_slice){f->ptr, f->len};
}

/* Trimmed of spaces and tabs, as a header value would be. */
static csrf_slice trimmed(csrf_slice s)
{
	if (!s.ptr)
		return s;
	while (s.len && (s.ptr[0] == ' ' || s.ptr[0] == '\t')) {
		s.ptr++;
		s.len--;
	}
	while (s.len && (s.ptr[s.len - 1] == ' ' || s.ptr[s.len - 1] == '\t'))
		s.len--;
	return s;
}

static int eq(csrf_slice s, const char *lit)
{
	return s.ptr && s.len == strlen(lit) && memcmp(s.ptr, lit, s.len) == 0;
}

static int ieq(csrf_slice s, const char *lit)
{
	if (!s.ptr || s.len != strlen(lit))
		return 0;
	for (size_t i = 0; i < s.len; i++) {
		char c = s.ptr[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c + 32);
		if (c != lit[i])
			return 0;
	}
	return 1;
}

static int safe_word(csrf_slice s)
{
	return eq(s, "GET") || eq(s, "HEAD") || eq(s, "OPTIONS");
}

/* A "_method=" parameter of the query whose value does not begin with a
 * safe method name: certainly an unsafe override. */
static int query_has_unsafe_override(csrf_slice t)
{
	if (!t.ptr)
		return 0;
	/* the query runs from the first '?' to a '#'; a '?' in the fragment
	 * is not a query */
	const char *end = t.ptr + t.len, *hash = memchr(t.ptr, '#', t.len);
	if (hash)
		end = hash;
	const char *q = memchr(t.ptr, '?', (size_t)(end - t.ptr));
	if (!q)
		return 0;
	for (const char *p = q; p + 8 < end; p++) {
		if ((p == q || *p == '&' || *p == ';') && memcmp(p + 1, "_method=", 8) == 0) {
			const char *v = p + 9;
			size_t vl = 0;
			while (v + vl < end && v[vl] != '&' && v[vl] != ';')
				vl++;
			if (vl == 0)
				continue;
			csrf_slice vs = {v, vl};
			if (!safe_word(vs))
				return 1;
		}
	}
	return 0;
}

/* The origin of this site for the context: configured, or scheme + Host
 * (then *known may be 0). */
static int site_origin(const ctx_info *ci, const csrf_request *req, csrf_origin *o, int *https)
{
	if (ci->has_self) {
		*o = self_origin;
		*https = 0;
		return 1;
	}
	csrf_slice sc = trimmed(req->scheme), h = trimmed(req->host);
	*https = !ieq(sc, "http");
	if (!sc.ptr || !h.ptr || sc.len + 3 + h.len > 300)
		return 0;
	char buf[300];
	memcpy(buf, sc.ptr, sc.len);
	memcpy(buf + sc.len, "://", 3);
	memcpy(buf + sc.len + 3, h.ptr, h.len);
	return csrf_origin_parse(buf, sc.len + 3 + h.len, o) == CSRF_OK;
}

static int origin_ok(csrf_slice origin_hdr, const csrf_origin *site, int site_known)
{
	csrf_slice o = trimmed(origin_hdr);
	csrf_origin po;
	if (csrf_origin_parse(o.ptr, o.len, &po) != CSRF_OK)
		return 0;
	return csrf_origin_equal(&po, &trusted_origin) || (site_known && csrf_origin_equal(&po, site));
}

/* A code the library itself has a name for (codes are only appended, so
 * this follows csrf.h as it grows). */
static int known_reason(csrf_reason r)
{
	return strcmp(csrf_reason_str(r), "unknown reason") != 0 && strcmp(csrf_reason_name(r), "unknown") != 0;
}

/* The harness's own judgement of an allowed request. */
static void judge(const ctx_info *ci, const csrf_request *req, csrf_result res, int valid_token_used,
                  int valid_cookie_used)
{
	FZ_ASSERT(known_reason(res.reason));
	FZ_ASSERT(res.allowed == csrf_reason_allows(res.reason));
	FZ_ASSERT(res.report_only == 0);
	/* asking for the body is never a verdict, and only for a body not given */
	if (res.needs_body)
		FZ_ASSERT(!res.allowed && res.reason == CSRF_TOKEN_MISSING && !req->body.ptr);
	if (!res.allowed)
		return;
	csrf_slice ov = trimmed(req->method_override);
	int method_safe = safe_word(req->method) && (!req->method_override.ptr || safe_word(ov)) &&
	                  !query_has_unsafe_override(req->target);
	if (res.reason == CSRF_SAFE_METHOD) {
		FZ_ASSERT(method_safe);
		FZ_ASSERT(!ci->unsafe_get);
		return;
	}
	if (res.reason == CSRF_EXEMPT) {
		FZ_ASSERT(eq(req->method, "POST") && req->target.ptr);
		size_t pl = 0;
		while (pl < req->target.len && req->target.ptr[pl] != '?' && req->target.ptr[pl] != '#')
			pl++;
		FZ_ASSERT(pl == 5 && memcmp(req->target.ptr, "/hook", 5) == 0);
		return;
	}
	FZ_ASSERT(res.reason == CSRF_OK || res.reason == CSRF_ORIGIN_VERIFIED);

	/* An unsafe request got through: it must show no cross-site evidence.
	 * Outside mode origin, ORIGIN_VERIFIED is only for a GET or HEAD
	 * checked for evidence (unsafe GET option). */
	int evidence_get =
	    ci->mode != CSRF_MODE_ORIGIN && ci->mode != CSRF_MODE_ORIGIN_OR_TOKEN && res.reason == CSRF_ORIGIN_VERIFIED;
	if (evidence_get)
		FZ_ASSERT(ci->unsafe_get && method_safe);
	csrf_origin site;
	int https = 0;
	int site_known = site_origin(ci, req, &site, &https);
	csrf_slice sfs = trimmed(req->sec_fetch_site);
	if (ci->mode != CSRF_MODE_TOKEN || evidence_get) {
		if (sfs.ptr) {
			FZ_ASSERT(ieq(sfs, "same-origin") || ieq(sfs, "same-site") || ieq(sfs, "cross-site") ||
			          ieq(sfs, "none"));
			int trusted = req->origin.ptr && origin_ok(req->origin, NULL, 0);
			if (ieq(sfs, "cross-site"))
				FZ_ASSERT(trusted);
			if (ieq(sfs, "same-site") && !ci->same_site_ok)
				FZ_ASSERT(trusted);
			if (ieq(sfs, "none") && !ci->fetch_none_ok)
				FZ_ASSERT(trusted);
		} else if (req->origin.ptr && !eq(trimmed(req->origin), "null")) {
			FZ_ASSERT(origin_ok(req->origin, &site, site_known));
		} else if (req->origin.ptr && (ci->mode == CSRF_MODE_ORIGIN || evidence_get)) {
			/* Origin: null is never evidence where evidence is required */
			FZ_ASSERT(0);
		} else if ((https && !(ci->mode == CSRF_MODE_ORIGIN_OR_TOKEN && !req->referer.ptr)) || evidence_get) {
			/* (Origin: null elsewhere as without an Origin; origin_or_token
			 * over HTTPS: no Referer at all goes to the token) */
			csrf_slice ref = trimmed(req->referer);
			csrf_origin ro;
			FZ_ASSERT(ref.ptr && csrf_url_origin(ref.ptr, ref.len, &ro) == CSRF_OK);
			FZ_ASSERT(csrf_origin_equal(&ro, &trusted_origin) ||
			          (site_known && csrf_origin_equal(&ro, &site)));
			if (https)
				FZ_ASSERT(strcmp(ro.scheme, "https") == 0);
		}
	}
	if (ci->mode == CSRF_MODE_ORIGIN) {
		FZ_ASSERT(res.reason == CSRF_ORIGIN_VERIFIED);
		return;
	}
	if (ci->mode == CSRF_MODE_ORIGIN_OR_TOKEN && res.reason == CSRF_ORIGIN_VERIFIED) {
		/* without a token only on the browser's own positive evidence */
		int trusted = req->origin.ptr && origin_ok(req->origin, NULL, 0);
		FZ_ASSERT((sfs.ptr && ieq(sfs, "same-origin")) || trusted ||
		          (!sfs.ptr && req->origin.ptr && origin_ok(req->origin, &site, site_known)));
		return;
	}
	if (evidence_get)
		return;
	/* The token stage passed: only with the token the harness issued. */
	FZ_ASSERT(res.reason == CSRF_OK);
	FZ_ASSERT(valid_token_used);
	if (ci->stateless)
		FZ_ASSERT(valid_cookie_used);
}

static csrf_result check_counted(const ctx_info *ci, const csrf_request *req)
{
	size_t before = n_mallocs;
	csrf_result r = csrf_check(ci->ctx, req);
	FZ_ASSERT(n_mallocs == before);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_pieces ps;
	fz_split(data, size, P_COUNT, &ps);
	uint8_t control = ps.p[P_CONTROL].len ? (uint8_t)ps.p[P_CONTROL].ptr[0] : 0;
	const ctx_info *ci = &ctxs[control % N_CTX];

	field f[P_COUNT];
	for (size_t i = 0; i < P_COUNT; i++) {
		f[i] = (field){ps.p[i].ptr, ps.p[i].len, 0, 0};
		ps.p[i].ptr = NULL;
		if (f[i].len == 1 && f[i].ptr[0] == '-') {
			free(f[i].ptr);
			f[i].ptr = NULL;
			f[i].len = 0;
		}
	}
	ps.n = 0;

	/* The session the request claims, and tokens for it and another. */
	const char *sid = f[P_SID].ptr ? f[P_SID].ptr : "";
	size_t sid_len = f[P_SID].len;
	char tok[CSRF_TOKEN_LEN + 1], other[CSRF_TOKEN_LEN + 1], fname[CSRF_FIELD_NAME_MAX + 1],
	    cookie[CSRF_SECRET_COOKIE_LEN + 1];
	FZ_ASSERT(csrf_token_issue(ci->ctx, secret, sid, sid_len, NOW, tok, sizeof tok) == CSRF_OK);
	FZ_ASSERT(csrf_token_issue(ci->ctx, secret, "other-session", 13, NOW, other, sizeof other) == CSRF_OK);
	FZ_ASSERT(csrf_field_name(ci->ctx, secret, fname, sizeof fname) == CSRF_OK);
	FZ_ASSERT(csrf_secret_cookie_encode(ci->ctx, secret, cookie, sizeof cookie) == CSRF_OK);
	int token_used = 0, cookie_used = 0;
	/* (the session id piece is never rewritten: tokens are bound to it) */
	for (size_t i = P_METHOD; i < P_SID; i++) {
		token_used |= subst(&f[i], "@TOKEN@", tok);
		subst(&f[i], "@OTHER@", other);
		subst(&f[i], "@FIELD@", fname);
		cookie_used |= subst(&f[i], "@COOKIE@", cookie);
	}

	csrf_request req = {
	    .method = sl(&f[P_METHOD]),
	    .target = sl(&f[P_TARGET]),
	    .scheme = sl(&f[P_SCHEME]),
	    .host = sl(&f[P_HOST]),
	    .origin = sl(&f[P_ORIGIN]),
	    .referer = sl(&f[P_REFERER]),
	    .sec_fetch_site = sl(&f[P_SFS]),
	    .method_override = sl(&f[P_OVERRIDE]),
	    .cookie = sl(&f[P_COOKIE]),
	    .content_type = sl(&f[P_CT]),
	    .token_header = sl(&f[P_TOKEN_HDR]),
	    .body = sl(&f[P_BODY]),
	    .secret = ci->stateless ? NULL : secret,
	    .session_id = ci->stateless ? (csrf_slice){NULL, 0} : (csrf_slice){sid, sid_len},
	    .now = NOW,
	};
	if (ci->stateless && f[P_SID].ptr)
		req.session_id = (csrf_slice){sid, sid_len};

	csrf_result res = check_counted(ci, &req);
	csrf_result again = check_counted(ci, &req);
	FZ_ASSERT(res.allowed == again.allowed && res.reason == again.reason);
	judge(ci, &req, res, token_used, cookie_used);
	/* csrf_request_is_safe agrees with a safe-method pass */
	if (res.reason == CSRF_SAFE_METHOD)
		FZ_ASSERT(csrf_request_is_safe(&req) == 1);

	/* The legitimate twin: same body and cookie, a same-origin POST with
	 * the valid token in the header. Allowed unless the cookie header
	 * itself is unusable for a stateless context. */
	char cookie_hdr[16 + CSRF_SECRET_COOKIE_LEN];
	int n = snprintf(cookie_hdr, sizeof cookie_hdr, "csrf_secret=%s", cookie);
	FZ_ASSERT(n > 0 && (size_t)n < sizeof cookie_hdr);
	csrf_request legit = {
	    .method = {"POST", 4},
	    .target = {"/vote", 5},
	    .scheme = {"http", 4},
	    .host = {"127.0.0.1:8080", 14},
	    .origin = {SELF, sizeof SELF - 1},
	    .sec_fetch_site = {"same-origin", 11},
	    .cookie = {cookie_hdr, (size_t)n},
	    .content_type = req.content_type,
	    .body = req.body,
	    .token_header = {tok, strlen(tok)},
	    .secret = ci->stateless ? NULL : secret,
	    .session_id = {sid, sid_len},
	    .now = NOW,
	};
	csrf_result lr = check_counted(ci, &legit);
	FZ_ASSERT(lr.allowed && (lr.reason == CSRF_OK || lr.reason == CSRF_ORIGIN_VERIFIED));
	/* ... and its forged twins are not. */
	legit.sec_fetch_site = (csrf_slice){"cross-site", 10};
	legit.origin = (csrf_slice){"http://127.0.0.1:8081", 21};
	if (ci->mode != CSRF_MODE_TOKEN)
		FZ_ASSERT(!check_counted(ci, &legit).allowed);
	legit.sec_fetch_site = (csrf_slice){"same-origin", 11};
	legit.origin = (csrf_slice){SELF, sizeof SELF - 1};
	legit.token_header = (csrf_slice){other, strlen(other)};
	if (ci->mode != CSRF_MODE_ORIGIN && ci->mode != CSRF_MODE_ORIGIN_OR_TOKEN)
		FZ_ASSERT(!check_counted(ci, &legit).allowed);
	/* without any evidence, the wrong token fails in every token mode */
	legit.sec_fetch_site = (csrf_slice){NULL, 0};
	legit.origin = (csrf_slice){NULL, 0};
	if (ci->mode != CSRF_MODE_ORIGIN)
		FZ_ASSERT(!check_counted(ci, &legit).allowed);
	/* Origin: null is no evidence: the token decides where it rests on
	 * more than a cookie another site could plant (the caller's secret,
	 * or a token bound to a session): the wrong one fails, the right one
	 * passes; an unbound token beside a cookie secret, and mode origin,
	 * are refused */
	legit.origin = (csrf_slice){"null", 4};
	FZ_ASSERT(!check_counted(ci, &legit).allowed);
	legit.token_header = (csrf_slice){tok, strlen(tok)};
	csrf_result nr = check_counted(ci, &legit);
	int unplantable = !ci->stateless || sid_len > 0;
	FZ_ASSERT(nr.allowed == (ci->mode != CSRF_MODE_ORIGIN && unplantable));
	FZ_ASSERT(nr.allowed ? nr.reason == CSRF_OK : nr.reason == CSRF_NULL_ORIGIN);

	/* The WebSocket twin: the fuzzed request as a handshake. Never a
	 * token, never the body; cross-site evidence never passes; no Origin
	 * and no fetch metadata (no browser) always does, but under
	 * unsafe_get, where every GET needs evidence. Only a twin the library
	 * reads as a safe method: a query override that the harness's reading
	 * misses (an empty `_method=`, `_method` without a value, `%5Fmethod`,
	 * `_method[]`) makes it unsafe or malformed (method_override), judged
	 * as any request by judge() above. */
	csrf_request ws = req;
	ws.method = (csrf_slice){"GET", 3};
	ws.method_override = (csrf_slice){NULL, 0};
	ws.upgrade = (csrf_slice){"websocket", 9};
	if (!query_has_unsafe_override(req.target) && csrf_request_is_safe(&ws)) {
		csrf_result wr = check_counted(ci, &ws);
		csrf_slice sfs = trimmed(ws.sec_fetch_site);
		FZ_ASSERT(known_reason(wr.reason) && !wr.needs_body);
		FZ_ASSERT(wr.allowed == csrf_reason_allows(wr.reason));
		if (wr.allowed) {
			FZ_ASSERT(wr.reason == CSRF_ORIGIN_VERIFIED);
			int trusted = ws.origin.ptr && origin_ok(ws.origin, NULL, 0);
			csrf_origin site;
			int https = 0;
			int site_known = site_origin(ci, &ws, &site, &https);
			if (sfs.ptr) {
				FZ_ASSERT(!ieq(sfs, "cross-site") || trusted);
				FZ_ASSERT(!ieq(sfs, "same-site") || ci->same_site_ok || trusted);
			} else if (ws.origin.ptr) {
				FZ_ASSERT(origin_ok(ws.origin, &site, site_known));
			}
		} else if (!sfs.ptr && !ws.origin.ptr && !ci->unsafe_get) {
			FZ_ASSERT(0);
		}
		if (wr.reason == CSRF_WEBSOCKET_ORIGIN)
			FZ_ASSERT(sfs.ptr || ws.origin.ptr);
	}

	for (size_t i = 0; i < P_COUNT; i++)
		free(f[i].ptr);
	return 0;
}
