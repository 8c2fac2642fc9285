/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_check.c - csrf_check and csrf_request_is_safe, table-driven: Go's
 * CrossOriginProtection table and Django's CsrfViewMiddleware origin and
 * referer tests re-expressed as rows, then methods, exemptions, modes,
 * fetch metadata, report-only, unsafe GET and the token stage. Every row
 * runs with each input flush against a guard page; the base requests are
 * also run on every truncated prefix of their headers and bodies.
 * No token, secret or cookie value is ever printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"
#include "testutil.h"

#define NOW ((int64_t)1764000000)

/* Marks a request field as absent where NULL selects the default. */
static const char ABSENT[] = "\001absent";

/* ---- fixtures ---- */

enum cfg {
	C_DEFAULT,          /* both; self https://www.example.com; trusted https://app.example:8443; exemptions */
	C_GO,               /* origin mode, like Go: trusted https://trusted.example; Go's bypass paths, exact */
	C_DJANGO,           /* both; self from Host; trusted https://dashboard.example.com, http://no-match.com */
	C_TOKEN,            /* token mode */
	C_ORIGIN,           /* origin mode, self https://www.example.com */
	C_ORIGIN_HTTP,      /* origin mode, self http://www.example.com */
	C_REPORT,           /* both, report-only */
	C_UNSAFE_GET,       /* both, unsafe GET; trusted https://app.example:8443 */
	C_SAME_SITE,        /* both, same-site allowed */
	C_NO_FETCH_NONE,    /* both, Sec-Fetch-Site: none not accepted; trusted https://app.example:8443 */
	C_SESSION_COOKIE,   /* both; secret cookie "__Host-csrf", session cookie "sessionid" */
	C_FIELD,            /* both; fixed field name "authenticity_token" */
	C_MAX_AGE,          /* both; max age 60 s */
	C_OOT,              /* origin_or_token, self https://www.example.com */
	C_OOT_HTTP,         /* origin_or_token, self http://www.example.com */
	C_OOT_HOST,         /* origin_or_token, self from scheme and Host */
	C_OOT_HTTP_SESSION, /* origin_or_token, self http://www.example.com, session cookie "sessionid" */
	C_N
};

enum tok {
	T_VALID,         /* masked, secret A, session "sess-A" */
	T_VALID2,        /* a second masking of the same */
	T_UNMASKED,      /* the unmasked form of the same */
	T_NONE,          /* no token anywhere */
	T_OTHER_SESSION, /* secret A, session "sess-B" */
	T_WRONG_SECRET,  /* secret B, session "sess-A" */
	T_FOREIGN_KEY,   /* issued by a ring with another key under the same id */
	T_TAMPERED,      /* T_VALID with one character changed */
	T_OLD,           /* issued an hour before NOW */
	T_SHORT,         /* 16 * 'a' (Django's "incorrect length") */
	T_STARS,         /* 64 * '*' (Django's "invalid characters") */
	T_ALPHA64,       /* 64 * 'a' (Django's "incorrect") */
	T_LONG,          /* 300 * 'A' */
	T_UNBOUND,       /* masked, secret A, no session (a visitor's before login) */
	T_V4,            /* version 4 as issued by default (unmasked, 51), secret A, session "sess-A" */
	T_V4_MASKED,     /* T_V4 masked with a pad: no release issues it, refused */
	T_N
};

enum where {
	W_HEADER,            /* X-CSRF-Token */
	W_FORM,              /* urlencoded field among others */
	W_MULTIPART,         /* multipart field after a file part */
	W_QUERY,             /* only in the query string of the target */
	W_HEADER_AND_FORM,   /* the header carries the row's token, the field a garbage one */
	W_FORM_AND_HEADER,   /* the field carries the row's token, the header a garbage one */
	W_EMPTY_HEADER_FORM, /* an empty header, the token in the field */
	W_EMPTY_HEADER,      /* an empty header, nothing else */
	W_JSON,              /* a JSON body holding the token */
	W_FORM_WRONG_NAME,   /* urlencoded under the name "csrf_token" */
	W_FORM_BAD_ESCAPE,   /* urlencoded with a bad %-escape in the value */
	W_MULTIPART_NO_BOUNDARY,
	W_MULTIPART_TRUNCATED,
	W_FORM_NO_CONTENT_TYPE, /* urlencoded body, no Content-Type */
	W_FORM_OTHER_SECRET,    /* urlencoded under the derived name of the other secret (a stale page) */
	W_MULTIPART_OTHER_SECRET,
	W_FORM_UPPER_HEX, /* urlencoded under "csrf_" and 12 upper-case hex: no derived name */
	W_FORM_PERCENT,   /* urlencoded, the token's first and last characters percent-encoded */
	W_FORM_ONLY,      /* urlencoded, the token field the whole body */
};

enum secret_src {
	SEC_REQ,          /* req.secret = A */
	SEC_COOKIE,       /* signed cookie of A */
	SEC_COOKIE_B,     /* signed cookie of B (valid signature) */
	SEC_NO_COOKIE,    /* no Cookie header */
	SEC_COOKIE_OTHER, /* a Cookie header without the secret cookie */
	SEC_COOKIE_TAMPERED,
	SEC_COOKIE_FOREIGN,    /* signed by a sibling's ring, same key id */
	SEC_COOKIE_FOREIGN_ID, /* signed by a sibling's ring, key id we do not have */
	SEC_COOKIE_STARS,      /* 64 * '*' */
	SEC_COOKIE_SHORT,      /* 16 * 'a' */
	SEC_COOKIE_EMPTY,      /* "csrf_secret=" */
	SEC_COOKIE_HUGE,       /* a 20 KiB Cookie header */
};

enum session_src {
	SID_A,          /* req.session_id = "sess-A" */
	SID_B,          /* req.session_id = "sess-B" */
	SID_COOKIE_A,   /* no req.session_id; session cookie "sess-A" */
	SID_COOKIE_B,   /* no req.session_id; session cookie "sess-B" */
	SID_NO_COOKIE,  /* no req.session_id; no session cookie */
	SID_A_COOKIE_B, /* req.session_id "sess-A", session cookie "sess-B" */
};

typedef struct {
	const char *name;
	enum cfg cfg;
	const char *method;     /* NULL: "POST" */
	const char *target;     /* NULL: "/" */
	const char *scheme;     /* NULL: "https" */
	const char *host;       /* NULL: "www.example.com" */
	const char *origin;     /* NULL: absent */
	const char *referer;    /* NULL: absent */
	const char *sfs;        /* Sec-Fetch-Site; NULL: absent */
	const char *override;   /* X-HTTP-Method-Override; NULL: absent */
	const char *upgrade;    /* Upgrade, filed by csrf_request_header; NULL: absent */
	const char *connection; /* Connection (never read by the decision); NULL: absent */
	const char *fetch_mode; /* Sec-Fetch-Mode; NULL: absent */
	enum tok tok;
	enum where where;
	enum secret_src secret;
	enum session_src session;
	int allowed;
	csrf_reason reason;
	int report_only;
} row;

static const uint8_t KEY_A[CSRF_KEY_LEN] = {0x4b, 0x65, 0x79, 0x41, 1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,
                                            13,   14,   15,   16,   17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28};
static const uint8_t KEY_B[CSRF_KEY_LEN] = {0x4b, 0x65, 0x79, 0x42, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9,
                                            9,    9,    9,    9,    9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9};
static uint8_t SECRET_A[CSRF_SECRET_LEN];
static uint8_t SECRET_B[CSRF_SECRET_LEN];

static struct {
	csrf_ctx *ctx[C_N];
	const char *secret_cookie[C_N];
	csrf_ctx *foreign;    /* a sibling's ring: KEY_B under id 1 */
	csrf_ctx *foreign_id; /* a sibling's ring: KEY_B under id 9 */
	char tok[T_N][512];
	char cookie[SEC_COOKIE_HUGE + 1][CSRF_SECRET_COOKIE_LEN + 1];
	char *huge_cookie;
} g;

static csrf_ctx *new_ctx(void)
{
	csrf_ctx *ctx = NULL;
	assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
	assert_int_equal(csrf_ctx_add_key(ctx, 1, KEY_A, 1), CSRF_OK);
	/* named explicitly: used as given on HTTP and HTTPS (the rows are
	 * mostly HTTPS; the "__Host-" default has rows of its own) */
	assert_int_equal(csrf_ctx_set_secret_cookie(ctx, CSRF_DEFAULT_SECRET_COOKIE), CSRF_OK);
	return ctx;
}

static void must(csrf_reason r)
{
	assert_int_equal(r, CSRF_OK);
}

#define ADD_ORIGIN(ctx, s) must(csrf_ctx_add_trusted_origin((ctx), (s), strlen(s)))
#define SET_SELF(ctx, s) must(csrf_ctx_set_self_origin((ctx), (s), strlen(s)))
#define EXEMPT(ctx, m, p) must(csrf_ctx_add_exemption((ctx), (m), (p), strlen(p)))

/* The unmasked form of a masked token. The test re-derives the layout of
 * token.c on its own: base64url of a pad followed by raw XOR pad. */
static void unmask(const char *masked, char *out)
{
	uint8_t both[2 * CSRF_TOKEN_RAW_LEN], raw[CSRF_TOKEN_RAW_LEN];
	size_t n = 0;
	assert_int_equal(csrfi_b64url_decode(masked, strlen(masked), both, sizeof both, &n), CSRF_OK);
	assert_int_equal(n, sizeof both);
	for (size_t i = 0; i < CSRF_TOKEN_RAW_LEN; i++)
		raw[i] = both[i] ^ both[CSRF_TOKEN_RAW_LEN + i];
	csrfi_b64url_encode(raw, sizeof raw, out);
	out[CSRF_TOKEN_UNMASKED_LEN] = '\0';
}

/* A masked token (version 3: the table's rows were written for masked
 * and unmasked forms); the contexts issue version 4 again after. */
static void issue(csrf_ctx *ctx, const uint8_t *secret, const char *sid, int64_t now, char *out)
{
	must(csrf_ctx_set_issue_version(ctx, 3));
	must(csrf_token_issue(ctx, secret, sid, strlen(sid), now, out, CSRF_TOKEN_LEN + 1));
	assert_int_equal(strlen(out), CSRF_TOKEN_LEN);
	must(csrf_ctx_set_issue_version(ctx, 4));
}

/* A version 4 token (unmasked), and the same under a fresh pad. */
static void issue_v4(csrf_ctx *ctx, const uint8_t *secret, const char *sid, int64_t now, char *out, char *masked)
{
	uint8_t both[2 * CSRF_TOKEN_RAW_LEN];
	size_t n = 0;
	must(csrf_token_issue(ctx, secret, sid, strlen(sid), now, out, CSRF_TOKEN_UNMASKED_LEN + 1));
	assert_int_equal(strlen(out), CSRF_TOKEN_UNMASKED_LEN);
	assert_int_equal(csrfi_b64url_decode(out, strlen(out), both + CSRF_TOKEN_RAW_LEN, CSRF_TOKEN_RAW_LEN, &n),
	                 CSRF_OK);
	assert_int_equal(both[CSRF_TOKEN_RAW_LEN], 4);
	for (size_t i = 0; i < CSRF_TOKEN_RAW_LEN; i++) {
		both[i] = (uint8_t)(0x5a + 7 * i);
		both[CSRF_TOKEN_RAW_LEN + i] ^= both[i];
	}
	csrfi_b64url_encode(both, sizeof both, masked);
	masked[CSRF_TOKEN_LEN] = '\0';
}

static void fill(char *out, char c, size_t n)
{
	memset(out, c, n);
	out[n] = '\0';
}

/* A different character of the same alphabet at position i. */
static void flip(char *s, size_t i)
{
	s[i] = s[i] == 'A' ? 'B' : 'A';
}

static int setup(void **state)
{
	(void)state;
	memset(&g, 0, sizeof g);
	for (size_t i = 0; i < CSRF_SECRET_LEN; i++) {
		SECRET_A[i] = (uint8_t)(0xa0 + i);
		SECRET_B[i] = (uint8_t)(0x30 + 3 * i);
	}
	for (int c = 0; c < C_N; c++) {
		g.ctx[c] = new_ctx();
		g.secret_cookie[c] = CSRF_DEFAULT_SECRET_COOKIE;
	}
	csrf_ctx *d = g.ctx[C_DEFAULT];
	SET_SELF(d, "https://www.example.com");
	ADD_ORIGIN(d, "https://app.example:8443");
	EXEMPT(d, NULL, "/api/hook");
	EXEMPT(d, "POST", "/webhook");
	EXEMPT(d, "GET", "/ws/public");

	/* Go's tests use a trusted origin and the bypass patterns "/bypass/"
	 * and "/only/{foo}"; here exemptions are exact paths. */
	csrf_ctx_set_mode(g.ctx[C_GO], CSRF_MODE_ORIGIN);
	ADD_ORIGIN(g.ctx[C_GO], "https://trusted.example");
	EXEMPT(g.ctx[C_GO], NULL, "/bypass/");
	EXEMPT(g.ctx[C_GO], NULL, "/only/{foo}");

	ADD_ORIGIN(g.ctx[C_DJANGO], "https://dashboard.example.com");
	ADD_ORIGIN(g.ctx[C_DJANGO], "http://no-match.com");

	csrf_ctx_set_mode(g.ctx[C_TOKEN], CSRF_MODE_TOKEN);
	SET_SELF(g.ctx[C_TOKEN], "https://www.example.com");

	csrf_ctx_set_mode(g.ctx[C_ORIGIN], CSRF_MODE_ORIGIN);
	SET_SELF(g.ctx[C_ORIGIN], "https://www.example.com");
	csrf_ctx_set_mode(g.ctx[C_ORIGIN_HTTP], CSRF_MODE_ORIGIN);
	SET_SELF(g.ctx[C_ORIGIN_HTTP], "http://www.example.com");

	csrf_ctx_set_report_only(g.ctx[C_REPORT], 1);
	SET_SELF(g.ctx[C_REPORT], "https://www.example.com");

	csrf_ctx_set_unsafe_get(g.ctx[C_UNSAFE_GET], 1);
	SET_SELF(g.ctx[C_UNSAFE_GET], "https://www.example.com");
	ADD_ORIGIN(g.ctx[C_UNSAFE_GET], "https://app.example:8443");
	EXEMPT(g.ctx[C_UNSAFE_GET], "GET", "/legacy/ping");

	csrf_ctx_set_allow_same_site(g.ctx[C_SAME_SITE], 1);
	SET_SELF(g.ctx[C_SAME_SITE], "https://www.example.com");

	csrf_ctx_set_allow_fetch_none(g.ctx[C_NO_FETCH_NONE], 0);
	SET_SELF(g.ctx[C_NO_FETCH_NONE], "https://www.example.com");
	ADD_ORIGIN(g.ctx[C_NO_FETCH_NONE], "https://app.example:8443");

	SET_SELF(g.ctx[C_SESSION_COOKIE], "https://www.example.com");
	must(csrf_ctx_set_secret_cookie(g.ctx[C_SESSION_COOKIE], "__Host-csrf"));
	must(csrf_ctx_set_session_cookie(g.ctx[C_SESSION_COOKIE], "sessionid"));
	g.secret_cookie[C_SESSION_COOKIE] = "__Host-csrf";

	SET_SELF(g.ctx[C_FIELD], "https://www.example.com");
	must(csrf_ctx_set_field_name(g.ctx[C_FIELD], "authenticity_token"));

	SET_SELF(g.ctx[C_MAX_AGE], "https://www.example.com");
	csrf_ctx_set_max_age(g.ctx[C_MAX_AGE], 60);

	csrf_ctx_set_mode(g.ctx[C_OOT], CSRF_MODE_ORIGIN_OR_TOKEN);
	SET_SELF(g.ctx[C_OOT], "https://www.example.com");
	csrf_ctx_set_mode(g.ctx[C_OOT_HTTP], CSRF_MODE_ORIGIN_OR_TOKEN);
	SET_SELF(g.ctx[C_OOT_HTTP], "http://www.example.com");
	csrf_ctx_set_mode(g.ctx[C_OOT_HOST], CSRF_MODE_ORIGIN_OR_TOKEN);
	csrf_ctx_set_mode(g.ctx[C_OOT_HTTP_SESSION], CSRF_MODE_ORIGIN_OR_TOKEN);
	SET_SELF(g.ctx[C_OOT_HTTP_SESSION], "http://www.example.com");
	must(csrf_ctx_set_session_cookie(g.ctx[C_OOT_HTTP_SESSION], "sessionid"));

	/* A sibling subdomain's own ring: it can sign cookies and tokens, but
	 * not with our key. */
	assert_int_equal(csrf_ctx_new(&g.foreign, NULL), CSRF_OK);
	must(csrf_ctx_add_key(g.foreign, 1, KEY_B, 1));
	assert_int_equal(csrf_ctx_new(&g.foreign_id, NULL), CSRF_OK);
	must(csrf_ctx_add_key(g.foreign_id, 9, KEY_B, 1));

	issue(d, SECRET_A, "sess-A", NOW, g.tok[T_VALID]);
	issue(d, SECRET_A, "sess-A", NOW, g.tok[T_VALID2]);
	assert_string_not_equal(g.tok[T_VALID], g.tok[T_VALID2]);
	unmask(g.tok[T_VALID], g.tok[T_UNMASKED]);
	issue_v4(d, SECRET_A, "sess-A", NOW, g.tok[T_V4], g.tok[T_V4_MASKED]);
	issue(d, SECRET_A, "sess-B", NOW, g.tok[T_OTHER_SESSION]);
	issue(d, SECRET_A, "", NOW, g.tok[T_UNBOUND]);
	issue(d, SECRET_B, "sess-A", NOW, g.tok[T_WRONG_SECRET]);
	issue(g.foreign, SECRET_A, "sess-A", NOW, g.tok[T_FOREIGN_KEY]);
	memcpy(g.tok[T_TAMPERED], g.tok[T_VALID], sizeof g.tok[T_VALID]);
	flip(g.tok[T_TAMPERED], CSRF_TOKEN_LEN - 10); /* inside the tag */
	issue(d, SECRET_A, "sess-A", NOW - 3600, g.tok[T_OLD]);
	fill(g.tok[T_SHORT], 'a', 16);
	fill(g.tok[T_STARS], '*', 64);
	fill(g.tok[T_ALPHA64], 'a', 64);
	fill(g.tok[T_LONG], 'A', 300);

	must(csrf_secret_cookie_encode(d, SECRET_A, g.cookie[SEC_COOKIE], sizeof g.cookie[SEC_COOKIE]));
	must(csrf_secret_cookie_encode(d, SECRET_B, g.cookie[SEC_COOKIE_B], sizeof g.cookie[SEC_COOKIE_B]));
	memcpy(g.cookie[SEC_COOKIE_TAMPERED], g.cookie[SEC_COOKIE], sizeof g.cookie[SEC_COOKIE]);
	flip(g.cookie[SEC_COOKIE_TAMPERED], 50);
	must(csrf_secret_cookie_encode(g.foreign, SECRET_A, g.cookie[SEC_COOKIE_FOREIGN],
	                               sizeof g.cookie[SEC_COOKIE_FOREIGN]));
	must(csrf_secret_cookie_encode(g.foreign_id, SECRET_A, g.cookie[SEC_COOKIE_FOREIGN_ID],
	                               sizeof g.cookie[SEC_COOKIE_FOREIGN_ID]));
	fill(g.cookie[SEC_COOKIE_STARS], '*', 64);
	fill(g.cookie[SEC_COOKIE_SHORT], 'a', 16);

	size_t huge = 20 * 1024;
	g.huge_cookie = malloc(huge + 1);
	assert_non_null(g.huge_cookie);
	int head = snprintf(g.huge_cookie, huge + 1, "%s=%s; pad=", CSRF_DEFAULT_SECRET_COOKIE, g.cookie[SEC_COOKIE]);
	assert_true(head > 0 && (size_t)head < huge);
	memset(g.huge_cookie + head, 'p', huge - (size_t)head);
	g.huge_cookie[huge] = '\0';
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int c = 0; c < C_N; c++)
		csrf_ctx_free(g.ctx[c]);
	csrf_ctx_free(g.foreign);
	csrf_ctx_free(g.foreign_id);
	free(g.huge_cookie);
	csrfi_wipe(&g, sizeof g);
	return 0;
}

/* ---- building a request from a row, every input on a guard page ---- */

typedef struct {
	char *copy[24];
	int n;
} guards;

static csrf_slice gslice(guards *gd, const char *s, size_t n)
{
	csrf_slice out = {NULL, 0};
	if (!s)
		return out;
	assert_true(gd->n < (int)(sizeof gd->copy / sizeof gd->copy[0]));
	out.ptr = gd->copy[gd->n++] = tu_guard_copy(s, n);
	out.len = n;
	return out;
}

static csrf_slice gstr(guards *gd, const char *s)
{
	return gslice(gd, s, s ? strlen(s) : 0);
}

static void guards_free(guards *gd)
{
	for (int i = 0; i < gd->n; i++)
		tu_guard_free(gd->copy[i]);
	gd->n = 0;
}

static const char *pick(const char *v, const char *dflt)
{
	if (v == ABSENT)
		return NULL;
	return v ? v : dflt;
}

#define BOUNDARY "XyZzy"
#define CT_FORM "application/x-www-form-urlencoded"
#define CT_MULTIPART "multipart/form-data; boundary=" BOUNDARY

/* The request text of a row, before it is copied onto guard pages. */
typedef struct {
	char target[16384];
	char body[4096];
	char cookie[1024];
	const char *content_type;
	const char *token_header;
	const char *session_id;
	const uint8_t *secret;
	const char *cookie_header; /* cookie, huge_cookie or NULL */
	int has_body;
} text;

static void appendf(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void appendf(char *buf, size_t cap, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + used, cap - used, fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < cap - used);
}

static void form_body(text *t, const char *field, const char *tok)
{
	t->content_type = CT_FORM;
	t->has_body = 1;
	appendf(t->body, sizeof t->body, "note=hi+there");
	if (tok)
		appendf(t->body, sizeof t->body, "&%s=%s", field, tok);
	appendf(t->body, sizeof t->body, "&x=1");
}

static void multipart_body(text *t, const char *field, const char *tok)
{
	t->content_type = CT_MULTIPART;
	t->has_body = 1;
	appendf(t->body, sizeof t->body,
	        "--" BOUNDARY "\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"a.txt\"\r\n"
	        "Content-Type: text/plain\r\n\r\nfile body\r\n");
	if (tok)
		appendf(t->body, sizeof t->body,
		        "--" BOUNDARY "\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n", field, tok);
	appendf(t->body, sizeof t->body, "--" BOUNDARY "--\r\n");
}

static void make_text(const row *r, text *t)
{
	memset(t, 0, sizeof *t);
	csrf_ctx *ctx = g.ctx[r->cfg];
	const char *tok = r->tok == T_NONE ? NULL : g.tok[r->tok];
	/* The field name the server derives from the secret it will see. */
	char field[CSRF_FIELD_NAME_MAX + 1];
	must(csrf_field_name(ctx, r->secret == SEC_COOKIE_B ? SECRET_B : SECRET_A, field, sizeof field));

	const char *target = pick(r->target, "/");
	if (target)
		appendf(t->target, sizeof t->target, "%s", target);

	switch (r->where) {
	case W_HEADER:
		t->token_header = tok;
		break;
	case W_FORM:
		form_body(t, field, tok);
		break;
	case W_MULTIPART:
		multipart_body(t, field, tok);
		break;
	case W_QUERY:
		appendf(t->target, sizeof t->target, "%s%s=%s", strchr(t->target, '?') ? "&" : "?", field,
		        tok ? tok : "");
		break;
	case W_HEADER_AND_FORM:
		t->token_header = tok;
		form_body(t, field, "garbage");
		break;
	case W_FORM_AND_HEADER:
		t->token_header = "garbage";
		form_body(t, field, tok);
		break;
	case W_EMPTY_HEADER_FORM:
		t->token_header = "";
		form_body(t, field, tok);
		break;
	case W_EMPTY_HEADER:
		t->token_header = "";
		break;
	case W_JSON:
		t->content_type = "application/json";
		t->has_body = 1;
		appendf(t->body, sizeof t->body, "{\"%s\":\"%s\"}", field, tok ? tok : "");
		break;
	case W_FORM_WRONG_NAME:
		form_body(t, "csrf_token", tok);
		break;
	case W_FORM_BAD_ESCAPE:
		t->content_type = CT_FORM;
		t->has_body = 1;
		appendf(t->body, sizeof t->body, "%s=%%zz%s", field, tok ? tok : "");
		break;
	case W_MULTIPART_NO_BOUNDARY:
		multipart_body(t, field, tok);
		t->content_type = "multipart/form-data";
		break;
	case W_MULTIPART_TRUNCATED:
		t->content_type = CT_MULTIPART;
		t->has_body = 1;
		appendf(t->body, sizeof t->body, "--" BOUNDARY "\r\nContent-Disposition: form-data; name=\"%s\"\r\n",
		        field);
		break;
	case W_FORM_NO_CONTENT_TYPE:
		form_body(t, field, tok);
		t->content_type = NULL;
		break;
	case W_FORM_OTHER_SECRET:
	case W_MULTIPART_OTHER_SECRET:
		/* derived even where the row's context has a fixed name */
		must(csrf_field_name(g.ctx[C_DEFAULT], r->secret == SEC_COOKIE_B ? SECRET_A : SECRET_B, field,
		                     sizeof field));
		if (r->where == W_FORM_OTHER_SECRET)
			form_body(t, field, tok);
		else
			multipart_body(t, field, tok);
		break;
	case W_FORM_UPPER_HEX:
		form_body(t, "csrf_0123456789AB", tok);
		break;
	case W_FORM_PERCENT:
		t->content_type = CT_FORM;
		t->has_body = 1;
		if (tok && strlen(tok) >= 2)
			appendf(t->body, sizeof t->body, "a=1&%s=%%%02X%.*s%%%02x&b=2", field, (unsigned char)tok[0],
			        (int)strlen(tok) - 2, tok + 1, (unsigned char)tok[strlen(tok) - 1]);
		break;
	case W_FORM_ONLY:
		t->content_type = CT_FORM;
		t->has_body = 1;
		appendf(t->body, sizeof t->body, "%s=%s", field, tok ? tok : "");
		break;
	}

	/* Secret and session: arguments or cookies. */
	int cookies = 0;
	switch (r->secret) {
	case SEC_REQ:
		t->secret = SECRET_A;
		break;
	case SEC_NO_COOKIE:
		break;
	case SEC_COOKIE_OTHER:
		cookies = 1;
		break;
	case SEC_COOKIE_HUGE:
		t->cookie_header = g.huge_cookie;
		break;
	default:
		cookies = 1;
		appendf(t->cookie, sizeof t->cookie, "theme=dark; %s=%s", g.secret_cookie[r->cfg], g.cookie[r->secret]);
		break;
	}
	switch (r->session) {
	case SID_A:
		t->session_id = "sess-A";
		break;
	case SID_B:
		t->session_id = "sess-B";
		break;
	case SID_COOKIE_A:
	case SID_COOKIE_B:
	case SID_A_COOKIE_B:
		cookies = 1;
		appendf(t->cookie, sizeof t->cookie, "%ssessionid=%s", t->cookie[0] ? "; " : "",
		        r->session == SID_COOKIE_A ? "sess-A" : "sess-B");
		if (r->session == SID_A_COOKIE_B)
			t->session_id = "sess-A";
		break;
	case SID_NO_COOKIE:
		break;
	}
	if (cookies && !t->cookie_header) {
		if (!t->cookie[0])
			appendf(t->cookie, sizeof t->cookie, "theme=dark");
		t->cookie_header = t->cookie;
	}
}

static void make_request(const row *r, const text *t, csrf_request *req, guards *gd)
{
	memset(req, 0, sizeof *req);
	req->method = gstr(gd, pick(r->method, "POST"));
	req->target = r->target == ABSENT ? (csrf_slice){NULL, 0} : gstr(gd, t->target);
	req->scheme = gstr(gd, pick(r->scheme, "https"));
	req->host = gstr(gd, pick(r->host, "www.example.com"));
	req->origin = gstr(gd, r->origin);
	req->referer = gstr(gd, r->referer);
	req->sec_fetch_site = gstr(gd, r->sfs);
	req->method_override = gstr(gd, r->override);
	req->cookie = gstr(gd, t->cookie_header);
	req->content_type = gstr(gd, t->content_type);
	req->token_header = gstr(gd, t->token_header);
	if (t->has_body)
		req->body = gstr(gd, t->body);
	req->secret = t->secret;
	req->session_id = gstr(gd, t->session_id);
	req->now = NOW;
	/* the handshake's headers go through csrf_request_header, as an
	 * adapter hands them over */
	static const char *const hname[] = {"Upgrade", "Connection", "Sec-Fetch-Mode"};
	const char *hval[] = {r->upgrade, r->connection, r->fetch_mode};
	for (size_t i = 0; i < 3; i++) {
		csrf_slice v = gstr(gd, hval[i]);
		if (v.ptr)
			assert_int_equal(csrf_request_header(req, hname[i], strlen(hname[i]), v.ptr, v.len), CSRF_OK);
	}
}

/* Runs the rows; prints each failing row by name and reason (never a
 * token or cookie), fails when any did. */
static void run_rows(const row *rows, size_t n)
{
	int failed = 0;
	for (size_t i = 0; i < n; i++) {
		const row *r = &rows[i];
		text t;
		csrf_request req;
		guards gd = {{0}, 0};
		make_text(r, &t);
		make_request(r, &t, &req, &gd);
		csrf_result res = csrf_check(g.ctx[r->cfg], &req);
		int safe = csrf_request_is_safe(&req);
		guards_free(&gd);
		if (res.allowed != r->allowed || res.reason != r->reason || res.report_only != r->report_only) {
			print_error("row \"%s\": got allowed=%d %s report_only=%d, want allowed=%d %s report_only=%d\n",
			            r->name, res.allowed, csrf_reason_name(res.reason), res.report_only, r->allowed,
			            csrf_reason_name(r->reason), r->report_only);
			failed++;
		}
		if (r->reason == CSRF_SAFE_METHOD && !safe) {
			print_error("row \"%s\": allowed as safe but csrf_request_is_safe says 0\n", r->name);
			failed++;
		}
	}
	assert_int_equal(failed, 0);
}

#define RUN(rows) run_rows(rows, sizeof rows / sizeof rows[0])

/* ---- Go: net/http CrossOriginProtection (src/net/http/csrf_test.go) ---- */

/* Go's handler is tokenless: C_GO is mode origin. Go's requests go to
 * https://example.com/ with a Host of example.com. */
static const row go_rows[] = {
    /* TestCrossOriginProtectionSecFetchSite */
    {.name = "go: same-origin allowed",
     .cfg = C_GO,
     .host = "example.com",
     .sfs = "same-origin",
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "go: none allowed",
     .cfg = C_GO,
     .host = "example.com",
     .sfs = "none",
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "go: cross-site blocked",
     .cfg = C_GO,
     .host = "example.com",
     .sfs = "cross-site",
     .reason = CSRF_CROSS_SITE},
    {.name = "go: same-site blocked", .cfg = C_GO, .host = "example.com", .sfs = "same-site", .reason = CSRF_SAME_SITE},
    /* Go allows this whatever the scheme. Stricter: over HTTPS a request
     * with neither header must carry a same-origin Referer. */
    {.name = "go: no header with no origin (https: stricter)",
     .cfg = C_GO,
     .host = "example.com",
     .reason = CSRF_REFERER_MISSING},
    {.name = "go: no header with no origin (http: as Go)",
     .cfg = C_GO,
     .scheme = "http",
     .host = "example.com",
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "go: no header with no origin, https, same-origin referer",
     .cfg = C_GO,
     .host = "example.com",
     .referer = "https://example.com/form",
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "go: no header with matching origin",
     .cfg = C_GO,
     .host = "example.com",
     .origin = "https://example.com",
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "go: no header with mismatched origin",
     .cfg = C_GO,
     .host = "example.com",
     .origin = "https://attacker.example",
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "go: no header with null origin",
     .cfg = C_GO,
     .host = "example.com",
     .origin = "null",
     .reason = CSRF_NULL_ORIGIN},
    {.name = "go: GET allowed",
     .cfg = C_GO,
     .method = "GET",
     .host = "example.com",
     .sfs = "cross-site",
     .allowed = 1,
     .reason = CSRF_SAFE_METHOD},
    {.name = "go: HEAD allowed",
     .cfg = C_GO,
     .method = "HEAD",
     .host = "example.com",
     .sfs = "cross-site",
     .allowed = 1,
     .reason = CSRF_SAFE_METHOD},
    {.name = "go: OPTIONS allowed",
     .cfg = C_GO,
     .method = "OPTIONS",
     .host = "example.com",
     .sfs = "cross-site",
     .allowed = 1,
     .reason = CSRF_SAFE_METHOD},
    {.name = "go: PUT blocked",
     .cfg = C_GO,
     .method = "PUT",
     .host = "example.com",
     .sfs = "cross-site",
     .reason = CSRF_CROSS_SITE},

    /* TestCrossOriginProtectionTrustedOriginBypass */
    {.name = "go: trusted origin without sec-fetch-site",
     .cfg = C_GO,
     .host = "example.com",
     .origin = "https://trusted.example",
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "go: trusted origin with cross-site",
     .cfg = C_GO,
     .host = "example.com",
     .origin = "https://trusted.example",
     .sfs = "cross-site",
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "go: untrusted origin without sec-fetch-site",
     .cfg = C_GO,
     .host = "example.com",
     .origin = "https://attacker.example",
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "go: untrusted origin with cross-site",
     .cfg = C_GO,
     .host = "example.com",
     .origin = "https://attacker.example",
     .sfs = "cross-site",
     .reason = CSRF_CROSS_SITE},

    /* TestCrossOriginProtectionPatternBypass: Go's patterns match
     * prefixes ("/bypass/"), redirect cleaned paths and wildcards; ours
     * are exact byte-equal paths, so several rows are stricter. */
    {.name = "go: bypass path without sec-fetch-site",
     .cfg = C_GO,
     .target = "/bypass/",
     .host = "example.com",
     .origin = "https://attacker.example",
     .allowed = 1,
     .reason = CSRF_EXEMPT},
    {.name = "go: bypass path with cross-site",
     .cfg = C_GO,
     .target = "/bypass/",
     .host = "example.com",
     .origin = "https://attacker.example",
     .sfs = "cross-site",
     .allowed = 1,
     .reason = CSRF_EXEMPT},
    {.name = "go: non-bypass path without sec-fetch-site",
     .cfg = C_GO,
     .target = "/api/",
     .host = "example.com",
     .origin = "https://attacker.example",
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "go: non-bypass path with cross-site",
     .cfg = C_GO,
     .target = "/api/",
     .host = "example.com",
     .origin = "https://attacker.example",
     .sfs = "cross-site",
     .reason = CSRF_CROSS_SITE},
    {.name = "go: redirect to bypass path without .. (stricter: no cleaning, no prefix)",
     .cfg = C_GO,
     .target = "/foo/../bypass/bar",
     .host = "example.com",
     .origin = "https://attacker.example",
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "go: redirect to bypass path with trailing slash (stricter: exact)",
     .cfg = C_GO,
     .target = "/bypass",
     .host = "example.com",
     .origin = "https://attacker.example",
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "go: redirect to non-bypass path with ..",
     .cfg = C_GO,
     .target = "/foo/../api/bar",
     .host = "example.com",
     .origin = "https://attacker.example",
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "go: redirect to non-bypass path with trailing slash",
     .cfg = C_GO,
     .target = "/api",
     .host = "example.com",
     .origin = "https://attacker.example",
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "go: wildcard bypass (stricter: no patterns)",
     .cfg = C_GO,
     .target = "/only/123",
     .host = "example.com",
     .origin = "https://attacker.example",
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "go: wildcard bypass, the literal path",
     .cfg = C_GO,
     .target = "/only/{foo}",
     .host = "example.com",
     .origin = "https://attacker.example",
     .allowed = 1,
     .reason = CSRF_EXEMPT},
    {.name = "go: non-wildcard",
     .cfg = C_GO,
     .target = "/only/123/foo",
     .host = "example.com",
     .origin = "https://attacker.example",
     .reason = CSRF_ORIGIN_MISMATCH},

    /* TestCrossOriginProtectionSetDenyHandler: the decision only. */
    {.name = "go: deny handler, cross-site POST",
     .cfg = C_GO,
     .host = "example.com",
     .sfs = "cross-site",
     .reason = CSRF_CROSS_SITE},
    {.name = "go: deny handler, GET",
     .cfg = C_GO,
     .method = "GET",
     .host = "example.com",
     .allowed = 1,
     .reason = CSRF_SAFE_METHOD},

    /* TestCrossOriginProtectionServer: a real server on
     * http://127.0.0.1:PORT; the Host is that address. */
    {.name = "go server: cross-site",
     .cfg = C_GO,
     .scheme = "http",
     .host = "127.0.0.1:8080",
     .origin = "https://attacker.example",
     .sfs = "cross-site",
     .reason = CSRF_CROSS_SITE},
    {.name = "go server: same-origin",
     .cfg = C_GO,
     .scheme = "http",
     .host = "127.0.0.1:8080",
     .sfs = "same-origin",
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "go server: origin matches host",
     .cfg = C_GO,
     .scheme = "http",
     .host = "127.0.0.1:8080",
     .origin = "http://127.0.0.1:8080",
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "go server: trusted origin",
     .cfg = C_GO,
     .scheme = "http",
     .host = "127.0.0.1:8080",
     .origin = "https://trusted.example",
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "go server: untrusted origin",
     .cfg = C_GO,
     .scheme = "http",
     .host = "127.0.0.1:8080",
     .origin = "https://attacker.example",
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "go server: bypass path",
     .cfg = C_GO,
     .target = "/bypass/",
     .scheme = "http",
     .host = "127.0.0.1:8080",
     .origin = "https://attacker.example",
     .allowed = 1,
     .reason = CSRF_EXEMPT},
    /* Go compares the Origin's host with Host and ignores the scheme;
     * ours compares full origins (stricter). */
    {.name = "go server: origin with the other scheme (stricter)",
     .cfg = C_GO,
     .scheme = "http",
     .host = "127.0.0.1:8080",
     .origin = "https://127.0.0.1:8080",
     .reason = CSRF_ORIGIN_MISMATCH},
};

static void test_go(void **state)
{
	(void)state;
	RUN(go_rows);
}

/* TestCrossOriginProtectionAddingBypassesConcurrently, sequentially: our
 * configuration calls are not made while requests are checked, so the
 * row is: rejected, then a trusted origin and an exemption are added,
 * then allowed. */
static void test_go_adding_bypasses(void **state)
{
	(void)state;
	csrf_ctx *ctx = new_ctx();
	csrf_ctx_set_mode(ctx, CSRF_MODE_ORIGIN);
	csrf_request req;
	memset(&req, 0, sizeof req);
	req.method = (csrf_slice){"POST", 4};
	req.target = (csrf_slice){"/", 1};
	req.scheme = (csrf_slice){"https", 5};
	req.host = (csrf_slice){"example.com", 11};
	req.origin = (csrf_slice){"https://concurrent.example", 26};
	req.sec_fetch_site = (csrf_slice){"cross-site", 10};
	csrf_result res = csrf_check(ctx, &req);
	assert_int_equal(res.allowed, 0);
	assert_int_equal(res.reason, CSRF_CROSS_SITE);
	ADD_ORIGIN(ctx, "https://concurrent.example");
	EXEMPT(ctx, NULL, "/foo/");
	res = csrf_check(ctx, &req);
	assert_int_equal(res.allowed, 1);
	assert_int_equal(res.reason, CSRF_ORIGIN_VERIFIED);
	csrf_ctx_free(ctx);
}

/* ---- Django: CsrfViewMiddleware (tests/csrf_tests/tests.py) ---- */

/* C_DJANGO: mode both, the self origin from the configured scheme and
 * Host (Django's request.is_secure() and get_host()), trusted
 * https://dashboard.example.com. Django's requests carry a valid token in
 * the POST body (_get_POST_request_with_token): W_FORM. */
static const row django_rows[] = {
    {.name = "django: test_https_bad_referer",
     .cfg = C_DJANGO,
     .referer = "https://www.evil.org/somepage",
     .where = W_FORM,
     .reason = CSRF_REFERER_MISMATCH},
    {.name = "django: test_https_no_referer", .cfg = C_DJANGO, .where = W_FORM, .reason = CSRF_REFERER_MISSING},
    /* Django reports the referer mismatch; with a Host that does not
     * parse the site has no self origin here, which is its own reason. */
    {.name = "django: test_https_malformed_host",
     .cfg = C_DJANGO,
     .host = "@malformed",
     .referer = "https://www.evil.org/somepage",
     .where = W_FORM,
     .reason = CSRF_HOST_MISSING},
    {.name = "django: test_origin_malformed_host",
     .cfg = C_DJANGO,
     .host = "@malformed",
     .origin = "https://www.evil.org",
     .where = W_FORM,
     .reason = CSRF_HOST_MISSING},
    {.name = "django: test_https_malformed_referer, insecure",
     .cfg = C_DJANGO,
     .referer = "http://http://www.example.com/",
     .where = W_FORM,
     .reason = CSRF_REFERER_INSECURE},
    {.name = "django: test_https_malformed_referer, empty",
     .cfg = C_DJANGO,
     .referer = "",
     .where = W_FORM,
     .reason = CSRF_REFERER_MALFORMED},
    {.name = "django: test_https_malformed_referer, non-ASCII",
     .cfg = C_DJANGO,
     .referer = "\xc3\x98"
                "B\xc3\xb6I\xc3\x9f",
     .where = W_FORM,
     .reason = CSRF_REFERER_MALFORMED},
    {.name = "django: test_https_malformed_referer, missing scheme",
     .cfg = C_DJANGO,
     .referer = "//example.com/",
     .where = W_FORM,
     .reason = CSRF_REFERER_MALFORMED},
    {.name = "django: test_https_malformed_referer, missing netloc",
     .cfg = C_DJANGO,
     .referer = "https://",
     .where = W_FORM,
     .reason = CSRF_REFERER_MALFORMED},
    {.name = "django: test_https_malformed_referer, invalid IPv6",
     .cfg = C_DJANGO,
     .referer = "https://[",
     .where = W_FORM,
     .reason = CSRF_REFERER_MALFORMED},
    {.name = "django: test_https_good_referer",
     .cfg = C_DJANGO,
     .referer = "https://www.example.com/somepage",
     .where = W_FORM,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "django: test_https_good_referer_2 (no trailing slash)",
     .cfg = C_DJANGO,
     .referer = "https://www.example.com",
     .where = W_FORM,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "django: test_https_good_referer_malformed_host",
     .cfg = C_DJANGO,
     .host = "@malformed",
     .referer = "https://dashboard.example.com/somepage",
     .where = W_FORM,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "django: test_https_csrf_trusted_origin_allowed",
     .cfg = C_DJANGO,
     .referer = "https://dashboard.example.com",
     .where = W_FORM,
     .allowed = 1,
     .reason = CSRF_OK},
    /* Django accepts wildcards ("https://" "*.example.com"); trusted origins
     * here are exact (stricter). */
    {.name = "django: test_https_csrf_wildcard_trusted_origin_allowed (stricter: exact)",
     .cfg = C_DJANGO,
     .referer = "https://foo.example.com",
     .where = W_FORM,
     .reason = CSRF_REFERER_MISMATCH},
    {.name = "django: test_bad_origin_bad_domain",
     .cfg = C_DJANGO,
     .scheme = "http",
     .origin = "https://www.evil.org",
     .where = W_FORM,
     .reason = CSRF_ORIGIN_MISMATCH},
    /* Django rejects it; here "null" is no evidence either way (a
     * no-referrer page sends it, and so can an attacker's), so over HTTP
     * the token decides, as without an Origin. */
    {.name = "django: test_bad_origin_null_origin (lenient: the token decides)",
     .cfg = C_DJANGO,
     .scheme = "http",
     .origin = "null",
     .where = W_FORM,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "django: test_bad_origin_null_origin, no token",
     .cfg = C_DJANGO,
     .scheme = "http",
     .origin = "null",
     .tok = T_NONE,
     .where = W_FORM,
     .reason = CSRF_TOKEN_MISSING},
    {.name = "django: test_bad_origin_bad_protocol",
     .cfg = C_DJANGO,
     .origin = "http://example.com",
     .where = W_FORM,
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "django: test_bad_origin_bad_protocol, own host over http",
     .cfg = C_DJANGO,
     .origin = "http://www.example.com",
     .where = W_FORM,
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "django: test_bad_origin_csrf_trusted_origin_bad_protocol",
     .cfg = C_DJANGO,
     .origin = "http://foo.example.com",
     .where = W_FORM,
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "django: trusted http://no-match.com is not https://no-match.com",
     .cfg = C_DJANGO,
     .origin = "https://no-match.com",
     .where = W_FORM,
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "django: test_bad_origin_cannot_be_parsed",
     .cfg = C_DJANGO,
     .origin = "https://[",
     .where = W_FORM,
     .reason = CSRF_ORIGIN_MALFORMED},
    {.name = "django: test_good_origin_insecure",
     .cfg = C_DJANGO,
     .scheme = "http",
     .origin = "http://www.example.com",
     .where = W_FORM,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "django: test_good_origin_secure",
     .cfg = C_DJANGO,
     .origin = "https://www.example.com",
     .where = W_FORM,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "django: test_good_origin_csrf_trusted_origin_allowed",
     .cfg = C_DJANGO,
     .origin = "https://dashboard.example.com",
     .where = W_FORM,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "django: test_good_origin_wildcard_csrf_trusted_origin_allowed (stricter: exact)",
     .cfg = C_DJANGO,
     .origin = "https://foo.example.com",
     .where = W_FORM,
     .reason = CSRF_ORIGIN_MISMATCH},
    /* Insecure requests skip the Referer check: the token decides. */
    {.name = "django: http, no origin, no referer, token",
     .cfg = C_DJANGO,
     .scheme = "http",
     .where = W_FORM,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "django: http, no origin, no referer, no token",
     .cfg = C_DJANGO,
     .scheme = "http",
     .tok = T_NONE,
     .where = W_FORM,
     .reason = CSRF_TOKEN_MISSING},
    {.name = "django: http, cross-origin referer is not checked",
     .cfg = C_DJANGO,
     .scheme = "http",
     .referer = "http://www.evil.org/",
     .where = W_FORM,
     .allowed = 1,
     .reason = CSRF_OK},
    /* test_csrf_cookie_bad_or_missing_token (over HTTP, as Django's
     * default test request is insecure) */
    {.name = "django: bad or missing token, none",
     .cfg = C_DJANGO,
     .scheme = "http",
     .tok = T_NONE,
     .where = W_FORM,
     .reason = CSRF_TOKEN_MISSING},
    {.name = "django: bad token, POST 16*a",
     .cfg = C_DJANGO,
     .scheme = "http",
     .tok = T_SHORT,
     .where = W_FORM,
     .reason = CSRF_TOKEN_MALFORMED},
    {.name = "django: bad token, POST 64*'*'",
     .cfg = C_DJANGO,
     .scheme = "http",
     .tok = T_STARS,
     .where = W_FORM,
     .reason = CSRF_TOKEN_MALFORMED},
    {.name = "django: bad token, POST 64*a",
     .cfg = C_DJANGO,
     .scheme = "http",
     .tok = T_ALPHA64,
     .where = W_FORM,
     .reason = CSRF_TOKEN_MALFORMED},
    {.name = "django: bad token, header 16*a",
     .cfg = C_DJANGO,
     .scheme = "http",
     .tok = T_SHORT,
     .reason = CSRF_TOKEN_MALFORMED},
    {.name = "django: bad token, header 64*'*'",
     .cfg = C_DJANGO,
     .scheme = "http",
     .tok = T_STARS,
     .reason = CSRF_TOKEN_MALFORMED},
    {.name = "django: bad token, header 64*a",
     .cfg = C_DJANGO,
     .scheme = "http",
     .tok = T_ALPHA64,
     .reason = CSRF_TOKEN_MALFORMED},
    {.name = "django: test_csrf_token_in_header", .cfg = C_DJANGO, .scheme = "http", .allowed = 1, .reason = CSRF_OK},
    /* test_put_and_delete_rejected / _allowed, test_no_csrf_cookie, bad
     * cookie characters and length: the stateless (cookie) variant. */
    {.name = "django: test_put_and_delete_rejected, PUT",
     .cfg = C_DJANGO,
     .method = "PUT",
     .scheme = "http",
     .tok = T_NONE,
     .secret = SEC_NO_COOKIE,
     .reason = CSRF_SECRET_MISSING},
    {.name = "django: test_put_and_delete_rejected, DELETE",
     .cfg = C_DJANGO,
     .method = "DELETE",
     .scheme = "http",
     .tok = T_NONE,
     .secret = SEC_NO_COOKIE,
     .reason = CSRF_SECRET_MISSING},
    {.name = "django: test_put_and_delete_allowed, PUT",
     .cfg = C_DJANGO,
     .method = "PUT",
     .scheme = "http",
     .secret = SEC_COOKIE,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "django: test_put_and_delete_allowed, DELETE",
     .cfg = C_DJANGO,
     .method = "DELETE",
     .scheme = "http",
     .secret = SEC_COOKIE,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "django: test_no_csrf_cookie",
     .cfg = C_DJANGO,
     .scheme = "http",
     .where = W_FORM,
     .secret = SEC_NO_COOKIE,
     .reason = CSRF_SECRET_MISSING},
    {.name = "django: test_bad_csrf_cookie_characters",
     .cfg = C_DJANGO,
     .scheme = "http",
     .where = W_FORM,
     .secret = SEC_COOKIE_STARS,
     .reason = CSRF_SECRET_INVALID},
    {.name = "django: test_bad_csrf_cookie_length",
     .cfg = C_DJANGO,
     .scheme = "http",
     .where = W_FORM,
     .secret = SEC_COOKIE_SHORT,
     .reason = CSRF_SECRET_INVALID},
    /* test_masked_unmasked_combinations */
    {.name = "django: masked token in POST",
     .cfg = C_DJANGO,
     .scheme = "http",
     .tok = T_VALID2,
     .where = W_FORM,
     .secret = SEC_COOKIE,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "django: unmasked token in POST",
     .cfg = C_DJANGO,
     .scheme = "http",
     .tok = T_UNMASKED,
     .where = W_FORM,
     .secret = SEC_COOKIE,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "django: masked token in header",
     .cfg = C_DJANGO,
     .scheme = "http",
     .tok = T_VALID2,
     .secret = SEC_COOKIE,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "django: unmasked token in header",
     .cfg = C_DJANGO,
     .scheme = "http",
     .tok = T_UNMASKED,
     .secret = SEC_COOKIE,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "django: version 4 token in POST",
     .cfg = C_DJANGO,
     .scheme = "http",
     .tok = T_V4,
     .where = W_FORM,
     .secret = SEC_COOKIE,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "django: version 4 token in header",
     .cfg = C_DJANGO,
     .scheme = "http",
     .tok = T_V4,
     .secret = SEC_COOKIE,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "django: version 4 token masked (issued by no release)",
     .cfg = C_DJANGO,
     .scheme = "http",
     .tok = T_V4_MASKED,
     .secret = SEC_COOKIE,
     .allowed = 0,
     .reason = CSRF_TOKEN_MALFORMED},
};

static void test_django(void **state)
{
	(void)state;
	RUN(django_rows);
}

/* ---- step 1: the effective method ---- */

static const row method_rows[] = {
    {.name = "GET is safe",
     .method = "GET",
     .sfs = "cross-site",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_SAFE_METHOD},
    {.name = "HEAD is safe",
     .method = "HEAD",
     .sfs = "cross-site",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_SAFE_METHOD},
    {.name = "OPTIONS is safe",
     .method = "OPTIONS",
     .sfs = "cross-site",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_SAFE_METHOD},
    {.name = "TRACE is unsafe", .method = "TRACE", .sfs = "cross-site", .reason = CSRF_CROSS_SITE},
    {.name = "TRACE same-origin needs a token",
     .method = "TRACE",
     .sfs = "same-origin",
     .tok = T_NONE,
     .reason = CSRF_TOKEN_MISSING},
    {.name = "unknown method is unsafe",
     .method = "FROBNICATE",
     .sfs = "same-origin",
     .tok = T_NONE,
     .reason = CSRF_TOKEN_MISSING},
    {.name = "lower-case post is unsafe", .method = "post", .sfs = "cross-site", .reason = CSRF_CROSS_SITE},
    {.name = "lower-case get is unsafe", .method = "get", .sfs = "cross-site", .reason = CSRF_CROSS_SITE},
    {.name = "mixed-case Get is unsafe", .method = "Get", .sfs = "cross-site", .reason = CSRF_CROSS_SITE},
    {.name = "empty method is unsafe", .method = "", .sfs = "cross-site", .reason = CSRF_CROSS_SITE},
    {.name = "absent method is unsafe", .method = ABSENT, .sfs = "cross-site", .reason = CSRF_CROSS_SITE},
    {.name = "GET with trailing space is unsafe", .method = "GET ", .sfs = "cross-site", .reason = CSRF_CROSS_SITE},
    {.name = "PATCH cross-site", .method = "PATCH", .sfs = "cross-site", .reason = CSRF_CROSS_SITE},
    {.name = "DELETE same-origin with token",
     .method = "DELETE",
     .sfs = "same-origin",
     .allowed = 1,
     .reason = CSRF_OK},
    /* overrides */
    {.name = "GET with override header DELETE, cross-site",
     .method = "GET",
     .override = "DELETE",
     .sfs = "cross-site",
     .reason = CSRF_CROSS_SITE},
    {.name = "GET with override header DELETE, same-origin, no token",
     .method = "GET",
     .override = "DELETE",
     .sfs = "same-origin",
     .tok = T_NONE,
     .reason = CSRF_TOKEN_MISSING},
    {.name = "GET with override header DELETE, same-origin, token",
     .method = "GET",
     .override = "DELETE",
     .sfs = "same-origin",
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "GET with override header delete (lower case is not GET)",
     .method = "GET",
     .override = "delete",
     .sfs = "cross-site",
     .reason = CSRF_CROSS_SITE},
    {.name = "GET with override header HEAD stays safe",
     .method = "GET",
     .override = " HEAD ",
     .sfs = "cross-site",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_SAFE_METHOD},
    {.name = "GET with override header GET stays safe",
     .method = "GET",
     .override = "GET",
     .sfs = "cross-site",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_SAFE_METHOD},
    {.name = "GET with override header not letters",
     .method = "GET",
     .override = "DE LETE",
     .sfs = "same-origin",
     .reason = CSRF_METHOD_OVERRIDE},
    {.name = "GET with override header with a semicolon",
     .method = "GET",
     .override = "DELETE;",
     .sfs = "same-origin",
     .reason = CSRF_METHOD_OVERRIDE},
    {.name = "GET with empty override header",
     .method = "GET",
     .override = "",
     .sfs = "same-origin",
     .reason = CSRF_METHOD_OVERRIDE},
    {.name = "GET with overlong override header",
     .method = "GET",
     .override = "DELETEDELETEDELETEDELETEDELETEDELETE",
     .sfs = "same-origin",
     .reason = CSRF_METHOD_OVERRIDE},
    {.name = "POST with override GET stays unsafe", .override = "GET", .sfs = "cross-site", .reason = CSRF_CROSS_SITE},
    {.name = "POST with override GET, same-origin, no token",
     .override = "GET",
     .sfs = "same-origin",
     .tok = T_NONE,
     .reason = CSRF_TOKEN_MISSING},
    {.name = "POST with override GET, same-origin, token",
     .override = "GET",
     .sfs = "same-origin",
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "GET ?_method=DELETE, cross-site",
     .method = "GET",
     .target = "/items/7?_method=DELETE",
     .sfs = "cross-site",
     .reason = CSRF_CROSS_SITE},
    {.name = "GET ?_method=DELETE, same-origin, token",
     .method = "GET",
     .target = "/items/7?_method=DELETE",
     .sfs = "same-origin",
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "GET ?a=1&_method=put (lower case is unsafe)",
     .method = "GET",
     .target = "/x?a=1&_method=put",
     .sfs = "cross-site",
     .reason = CSRF_CROSS_SITE},
    {.name = "GET ?%5Fmethod=PUT (encoded name)",
     .method = "GET",
     .target = "/x?%5Fmethod=PUT",
     .sfs = "cross-site",
     .reason = CSRF_CROSS_SITE},
    {.name = "GET ?a=1;_method=PUT (semicolon separator)",
     .method = "GET",
     .target = "/x?a=1;_method=PUT",
     .sfs = "cross-site",
     .reason = CSRF_CROSS_SITE},
    {.name = "GET ?_method=GET stays safe",
     .method = "GET",
     .target = "/x?_method=GET",
     .sfs = "cross-site",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_SAFE_METHOD},
    {.name = "GET ?_method=GET&_method=DELETE (any wins)",
     .method = "GET",
     .target = "/x?_method=GET&_method=DELETE",
     .sfs = "cross-site",
     .reason = CSRF_CROSS_SITE},
    /* PHP reads ".method", " method" and "_method[]" as _method. */
    {.name = "GET ?.method=DELETE (PHP name folding)",
     .method = "GET",
     .target = "/x?.method=DELETE",
     .sfs = "cross-site",
     .reason = CSRF_CROSS_SITE},
    {.name = "GET ?%20method=DELETE (PHP name folding)",
     .method = "GET",
     .target = "/x?%20method=DELETE",
     .sfs = "cross-site",
     .reason = CSRF_CROSS_SITE},
    {.name = "GET ?_method%5B%5D=DELETE (PHP array)",
     .method = "GET",
     .target = "/x?_method%5B%5D=DELETE",
     .sfs = "cross-site",
     .reason = CSRF_CROSS_SITE},
    {.name = "GET ?_method[]=DELETE (PHP array)",
     .method = "GET",
     .target = "/x?_method[]=DELETE",
     .sfs = "cross-site",
     .reason = CSRF_CROSS_SITE},
    {.name = "GET ?_methodx=DELETE is another parameter",
     .method = "GET",
     .target = "/x?_methodx=DELETE",
     .sfs = "cross-site",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_SAFE_METHOD},
    {.name = "GET ?x_method=DELETE is another parameter",
     .method = "GET",
     .target = "/x?x_method=DELETE",
     .sfs = "cross-site",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_SAFE_METHOD},
    {.name = "GET #?_method=DELETE is a fragment",
     .method = "GET",
     .target = "/x#?_method=DELETE",
     .sfs = "cross-site",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_SAFE_METHOD},
    {.name = "GET ?q#&_method=DELETE is a fragment",
     .method = "GET",
     .target = "/x?q#&_method=DELETE",
     .sfs = "cross-site",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_SAFE_METHOD},
    {.name = "GET ?_method=DEL%zz",
     .method = "GET",
     .target = "/x?_method=DEL%zz",
     .sfs = "same-origin",
     .reason = CSRF_METHOD_OVERRIDE},
    {.name = "GET ?_method=DEL% (truncated escape)",
     .method = "GET",
     .target = "/x?_method=DEL%",
     .sfs = "same-origin",
     .reason = CSRF_METHOD_OVERRIDE},
    {.name = "GET ?_method= (empty)",
     .method = "GET",
     .target = "/x?_method=",
     .sfs = "same-origin",
     .reason = CSRF_METHOD_OVERRIDE},
    {.name = "GET ?_method (no value)",
     .method = "GET",
     .target = "/x?_method",
     .sfs = "same-origin",
     .reason = CSRF_METHOD_OVERRIDE},
    {.name = "GET ?_method=DEL+ETE (a space)",
     .method = "GET",
     .target = "/x?_method=DEL+ETE",
     .sfs = "same-origin",
     .reason = CSRF_METHOD_OVERRIDE},
    {.name = "GET ?_method=%44ELETE (encoded letter)",
     .method = "GET",
     .target = "/x?_method=%44ELETE",
     .sfs = "cross-site",
     .reason = CSRF_CROSS_SITE},
    {.name = "GET ?_method=HEAD stays safe",
     .method = "GET",
     .target = "/x?_method=HEAD&page=2",
     .sfs = "cross-site",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_SAFE_METHOD},
    {.name = "GET with a bad %-escape elsewhere in the query",
     .method = "GET",
     .target = "/x?q=%zz&p=1",
     .sfs = "cross-site",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_SAFE_METHOD},
    {.name = "OPTIONS ?_method=DELETE",
     .method = "OPTIONS",
     .target = "/x?_method=DELETE",
     .sfs = "cross-site",
     .reason = CSRF_CROSS_SITE},
};

static void test_methods(void **state)
{
	(void)state;
	RUN(method_rows);
}

/* ---- step 2: exemptions ---- */

/* C_DEFAULT exempts (any unsafe method, "/api/hook") and (POST,
 * "/webhook"). */
static const row exemption_rows[] = {
    {.name = "exempt: exact path",
     .target = "/api/hook",
     .sfs = "cross-site",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_EXEMPT},
    {.name = "exempt: any unsafe method",
     .method = "DELETE",
     .target = "/api/hook",
     .sfs = "cross-site",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_EXEMPT},
    {.name = "exempt: method-aware, right method",
     .target = "/webhook",
     .sfs = "cross-site",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_EXEMPT},
    {.name = "exempt: method-aware, wrong method",
     .method = "PUT",
     .target = "/webhook",
     .sfs = "cross-site",
     .tok = T_NONE,
     .reason = CSRF_CROSS_SITE},
    {.name = "exempt: method-aware, lower-case method",
     .method = "post",
     .target = "/webhook",
     .sfs = "cross-site",
     .tok = T_NONE,
     .reason = CSRF_CROSS_SITE},
    {.name = "exempt: trailing slash is another path",
     .target = "/api/hook/",
     .sfs = "cross-site",
     .tok = T_NONE,
     .reason = CSRF_CROSS_SITE},
    {.name = "exempt: no prefix match",
     .target = "/api/hook/x",
     .sfs = "cross-site",
     .tok = T_NONE,
     .reason = CSRF_CROSS_SITE},
    {.name = "exempt: no prefix match without slash",
     .target = "/api/hookx",
     .sfs = "cross-site",
     .tok = T_NONE,
     .reason = CSRF_CROSS_SITE},
    {.name = "exempt: a parent is not exempt",
     .target = "/api",
     .sfs = "cross-site",
     .tok = T_NONE,
     .reason = CSRF_CROSS_SITE},
    {.name = "exempt: query ignored",
     .target = "/api/hook?x=1&y=2",
     .sfs = "cross-site",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_EXEMPT},
    {.name = "exempt: fragment ignored",
     .target = "/api/hook#top",
     .sfs = "cross-site",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_EXEMPT},
    {.name = "exempt: byte-equal, case matters",
     .target = "/API/hook",
     .sfs = "cross-site",
     .tok = T_NONE,
     .reason = CSRF_CROSS_SITE},
    {.name = "exempt: no normalisation of //",
     .target = "/api//hook",
     .sfs = "cross-site",
     .tok = T_NONE,
     .reason = CSRF_CROSS_SITE},
    {.name = "exempt: no normalisation of /./",
     .target = "/api/./hook",
     .sfs = "cross-site",
     .tok = T_NONE,
     .reason = CSRF_CROSS_SITE},
    {.name = "exempt: no percent-decoding",
     .target = "/api/%68ook",
     .sfs = "cross-site",
     .tok = T_NONE,
     .reason = CSRF_CROSS_SITE},
    {.name = "exempt: absent target", .target = ABSENT, .sfs = "cross-site", .tok = T_NONE, .reason = CSRF_CROSS_SITE},
    {.name = "exempt: safe method comes first",
     .method = "GET",
     .target = "/api/hook",
     .sfs = "cross-site",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_SAFE_METHOD},
    {.name = "exempt: beats a malformed Sec-Fetch-Site",
     .target = "/api/hook",
     .sfs = "bogus",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_EXEMPT},
    /* A method-aware exemption is for that method's handler: a POST that
     * overrides its method is routed elsewhere by the framework. */
    {.name = "exempt: method-aware, POST with an override header is not exempt",
     .target = "/webhook",
     .override = "DELETE",
     .sfs = "cross-site",
     .tok = T_NONE,
     .reason = CSRF_CROSS_SITE},
    {.name = "exempt: method-aware, POST with ?_method= is not exempt",
     .target = "/webhook?_method=DELETE",
     .sfs = "cross-site",
     .tok = T_NONE,
     .reason = CSRF_CROSS_SITE},
    {.name = "exempt: method-aware, an override to the same method is still an override",
     .target = "/webhook",
     .override = "POST",
     .sfs = "cross-site",
     .tok = T_NONE,
     .reason = CSRF_CROSS_SITE},
    {.name = "exempt: any-method exemption covers an override too",
     .target = "/api/hook",
     .override = "DELETE",
     .sfs = "cross-site",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_EXEMPT},
};

static void test_exemptions(void **state)
{
	(void)state;
	RUN(exemption_rows);
}

/* ---- steps 3 to 5: fetch metadata, Origin, Referer ---- */

static const row origin_rows[] = {
    {.name = "sfs: same-origin with token", .sfs = "same-origin", .allowed = 1, .reason = CSRF_OK},
    {.name = "sfs: compared case-insensitively", .sfs = "Same-Origin", .allowed = 1, .reason = CSRF_OK},
    {.name = "sfs: trimmed", .sfs = " same-origin\t", .allowed = 1, .reason = CSRF_OK},
    {.name = "sfs: none passes by default", .sfs = "none", .allowed = 1, .reason = CSRF_OK},
    {.name = "sfs: same-site rejected", .sfs = "same-site", .reason = CSRF_SAME_SITE},
    {.name = "sfs: same-site with a trusted origin",
     .sfs = "same-site",
     .origin = "https://app.example:8443",
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "sfs: cross-site rejected even with a token", .sfs = "cross-site", .reason = CSRF_CROSS_SITE},
    {.name = "sfs: cross-site with a trusted origin",
     .sfs = "cross-site",
     .origin = "https://app.example:8443",
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "sfs: cross-site with an untrusted origin",
     .sfs = "cross-site",
     .origin = "https://evil.example",
     .reason = CSRF_CROSS_SITE},
    {.name = "sfs: cross-site with the self origin is still cross-site",
     .sfs = "cross-site",
     .origin = "https://www.example.com",
     .reason = CSRF_CROSS_SITE},
    {.name = "sfs: cross-site with a malformed origin",
     .sfs = "cross-site",
     .origin = "https://[",
     .reason = CSRF_CROSS_SITE},
    {.name = "sfs: cross-site with origin null", .sfs = "cross-site", .origin = "null", .reason = CSRF_CROSS_SITE},
    {.name = "sfs: same-origin wins over a bad origin",
     .sfs = "same-origin",
     .origin = "https://evil.example",
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "sfs: unknown value", .sfs = "same_origin", .reason = CSRF_FETCH_SITE_MALFORMED},
    {.name = "sfs: empty", .sfs = "", .reason = CSRF_FETCH_SITE_MALFORMED},
    {.name = "sfs: blank", .sfs = "  ", .reason = CSRF_FETCH_SITE_MALFORMED},
    {.name = "sfs: list of two", .sfs = "same-origin, cross-site", .reason = CSRF_FETCH_SITE_MALFORMED},
    {.name = "sfs: prefix of same-origin", .sfs = "same-origi", .reason = CSRF_FETCH_SITE_MALFORMED},
    {.name = "sfs: same-site allowed by option",
     .cfg = C_SAME_SITE,
     .sfs = "same-site",
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "sfs: cross-site with same-site allowed",
     .cfg = C_SAME_SITE,
     .sfs = "cross-site",
     .reason = CSRF_CROSS_SITE},
    {.name = "sfs: none not accepted", .cfg = C_NO_FETCH_NONE, .sfs = "none", .reason = CSRF_NO_EVIDENCE},
    {.name = "sfs: none not accepted, trusted origin",
     .cfg = C_NO_FETCH_NONE,
     .sfs = "none",
     .origin = "https://app.example:8443",
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "sfs: none not accepted, same-origin still passes",
     .cfg = C_NO_FETCH_NONE,
     .sfs = "same-origin",
     .allowed = 1,
     .reason = CSRF_OK},
    /* Origin, no fetch metadata; C_DEFAULT's self is https://www.example.com */
    {.name = "origin: self", .origin = "https://www.example.com", .allowed = 1, .reason = CSRF_OK},
    {.name = "origin: self with the default port",
     .origin = "https://www.example.com:443",
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "origin: self in upper case", .origin = "https://WWW.EXAMPLE.COM", .allowed = 1, .reason = CSRF_OK},
    {.name = "origin: self, other port", .origin = "https://www.example.com:8443", .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "origin: self, other scheme", .origin = "http://www.example.com", .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "origin: sibling subdomain", .origin = "https://evil.example.com", .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "origin: suffix trick", .origin = "https://www.example.com.evil.example", .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "origin: trusted", .origin = "https://app.example:8443", .allowed = 1, .reason = CSRF_OK},
    {.name = "origin: trusted host, other port", .origin = "https://app.example", .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "origin: trusted host, other scheme", .origin = "http://app.example:8443", .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "origin: null", .origin = "null", .reason = CSRF_NULL_ORIGIN},
    {.name = "origin: null with a token is still null", .origin = "null", .reason = CSRF_NULL_ORIGIN},
    {.name = "origin: empty", .origin = "", .reason = CSRF_ORIGIN_MALFORMED},
    {.name = "origin: trailing slash", .origin = "https://www.example.com/", .reason = CSRF_ORIGIN_MALFORMED},
    {.name = "origin: with a path", .origin = "https://www.example.com/x", .reason = CSRF_ORIGIN_MALFORMED},
    {.name = "origin: bare host", .origin = "www.example.com", .reason = CSRF_ORIGIN_MALFORMED},
    {.name = "origin: ftp scheme", .origin = "ftp://www.example.com", .reason = CSRF_ORIGIN_MALFORMED},
    {.name = "origin: port out of range", .origin = "https://www.example.com:99999", .reason = CSRF_ORIGIN_MALFORMED},
    {.name = "origin: userinfo", .origin = "https://user@www.example.com", .reason = CSRF_ORIGIN_MALFORMED},
    {.name = "origin: beats a good referer",
     .origin = "https://evil.example",
     .referer = "https://www.example.com/form",
     .reason = CSRF_ORIGIN_MISMATCH},
    /* The configured self origin, never the Host header. */
    {.name = "origin: Host cannot redefine the configured self",
     .host = "evil.example",
     .origin = "https://evil.example",
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "origin: configured https whatever req.scheme says",
     .scheme = "http",
     .origin = "http://www.example.com",
     .reason = CSRF_ORIGIN_MISMATCH},
    /* Self origin from scheme + Host (C_DJANGO has none configured). */
    {.name = "self from host: match",
     .cfg = C_DJANGO,
     .host = "www.example.com:8443",
     .origin = "https://www.example.com:8443",
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "self from host: port differs",
     .cfg = C_DJANGO,
     .host = "www.example.com:8443",
     .origin = "https://www.example.com",
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "self from host: http",
     .cfg = C_DJANGO,
     .scheme = "http",
     .host = "127.0.0.1:8080",
     .origin = "http://127.0.0.1:8080",
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "self from host: scheme case-insensitive",
     .cfg = C_DJANGO,
     .scheme = "HTTPS",
     .origin = "https://www.example.com",
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "self from host: no Host",
     .cfg = C_DJANGO,
     .host = ABSENT,
     .origin = "https://www.example.com",
     .reason = CSRF_HOST_MISSING},
    {.name = "self from host: empty Host",
     .cfg = C_DJANGO,
     .host = "",
     .origin = "https://www.example.com",
     .reason = CSRF_HOST_MISSING},
    {.name = "self from host: no Host, trusted origin",
     .cfg = C_DJANGO,
     .host = ABSENT,
     .origin = "https://dashboard.example.com",
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "self from host: no Host, same-origin fetch",
     .cfg = C_DJANGO,
     .host = ABSENT,
     .sfs = "same-origin",
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "self from host: no Host, https, no headers",
     .cfg = C_DJANGO,
     .host = ABSENT,
     .reason = CSRF_REFERER_MISSING},
    {.name = "self from host: no Host, https, a referer",
     .cfg = C_DJANGO,
     .host = ABSENT,
     .referer = "https://www.example.com/",
     .reason = CSRF_HOST_MISSING},
    {.name = "self from host: no scheme counts as https",
     .cfg = C_DJANGO,
     .scheme = ABSENT,
     .reason = CSRF_REFERER_MISSING},
    /* Referer, over HTTPS */
    {.name = "referer: same-origin", .referer = "https://www.example.com/form?x=1#y", .allowed = 1, .reason = CSRF_OK},
    {.name = "referer: missing", .reason = CSRF_REFERER_MISSING},
    {.name = "referer: missing even if req.scheme says http (scheme is configured)",
     .scheme = "http",
     .reason = CSRF_REFERER_MISSING},
    {.name = "referer: insecure", .referer = "http://www.example.com/form", .reason = CSRF_REFERER_INSECURE},
    {.name = "referer: insecure, upper-case scheme",
     .referer = "HTTP://www.example.com/form",
     .reason = CSRF_REFERER_INSECURE},
    {.name = "referer: other site", .referer = "https://evil.example/", .reason = CSRF_REFERER_MISMATCH},
    {.name = "referer: other port", .referer = "https://www.example.com:8443/", .reason = CSRF_REFERER_MISMATCH},
    {.name = "referer: trusted", .referer = "https://app.example:8443/page", .allowed = 1, .reason = CSRF_OK},
    {.name = "referer: userinfo", .referer = "https://www.example.com@evil.example/", .reason = CSRF_REFERER_MALFORMED},
    {.name = "referer: relative", .referer = "/form", .reason = CSRF_REFERER_MALFORMED},
    {.name = "referer: about:blank", .referer = "about:blank", .reason = CSRF_REFERER_MALFORMED},
    {.name = "referer: over http it is not needed", .cfg = C_ORIGIN_HTTP, .allowed = 1, .reason = CSRF_ORIGIN_VERIFIED},
};

static void test_origin_stage(void **state)
{
	(void)state;
	RUN(origin_rows);
}

/* ---- modes and report-only ---- */

static const row mode_rows[] = {
    {.name = "both: same-origin without token", .sfs = "same-origin", .tok = T_NONE, .reason = CSRF_TOKEN_MISSING},
    {.name = "both: cross-site with a valid token", .sfs = "cross-site", .reason = CSRF_CROSS_SITE},
    {.name = "both: all pass", .origin = "https://www.example.com", .allowed = 1, .reason = CSRF_OK},
    {.name = "token: cross-site with a valid token",
     .cfg = C_TOKEN,
     .sfs = "cross-site",
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "token: origin null with a valid token",
     .cfg = C_TOKEN,
     .origin = "null",
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "token: no token", .cfg = C_TOKEN, .sfs = "same-origin", .tok = T_NONE, .reason = CSRF_TOKEN_MISSING},
    {.name = "token: https without referer", .cfg = C_TOKEN, .allowed = 1, .reason = CSRF_OK},
    {.name = "origin: same-origin, no token",
     .cfg = C_ORIGIN,
     .sfs = "same-origin",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "origin: bad token is not looked at",
     .cfg = C_ORIGIN,
     .sfs = "same-origin",
     .tok = T_STARS,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "origin: cross-site", .cfg = C_ORIGIN, .sfs = "cross-site", .tok = T_NONE, .reason = CSRF_CROSS_SITE},
    {.name = "origin: https without headers", .cfg = C_ORIGIN, .tok = T_NONE, .reason = CSRF_REFERER_MISSING},
    {.name = "origin: http without headers (Go allows)",
     .cfg = C_ORIGIN_HTTP,
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "origin: http with a bad origin",
     .cfg = C_ORIGIN_HTTP,
     .origin = "http://evil.example",
     .tok = T_NONE,
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "origin: http with a cross-origin referer is not checked",
     .cfg = C_ORIGIN_HTTP,
     .referer = "http://evil.example/",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "report-only: cross-site",
     .cfg = C_REPORT,
     .sfs = "cross-site",
     .allowed = 1,
     .reason = CSRF_CROSS_SITE,
     .report_only = 1},
    {.name = "report-only: token missing",
     .cfg = C_REPORT,
     .sfs = "same-origin",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_TOKEN_MISSING,
     .report_only = 1},
    {.name = "report-only: bad override",
     .cfg = C_REPORT,
     .method = "GET",
     .override = "1",
     .allowed = 1,
     .reason = CSRF_METHOD_OVERRIDE,
     .report_only = 1},
    {.name = "report-only: passing request is not flagged",
     .cfg = C_REPORT,
     .sfs = "same-origin",
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "report-only: safe method is not flagged",
     .cfg = C_REPORT,
     .method = "GET",
     .sfs = "cross-site",
     .allowed = 1,
     .reason = CSRF_SAFE_METHOD},
};

static void test_modes(void **state)
{
	(void)state;
	RUN(mode_rows);
}

/* ---- unsafe GET: evidence, no token ---- */

static const row unsafe_get_rows[] = {
    {.name = "unsafe GET: same-origin",
     .cfg = C_UNSAFE_GET,
     .method = "GET",
     .sfs = "same-origin",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "unsafe GET: none allowed",
     .cfg = C_UNSAFE_GET,
     .method = "GET",
     .sfs = "none",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "unsafe GET: cross-site",
     .cfg = C_UNSAFE_GET,
     .method = "GET",
     .sfs = "cross-site",
     .tok = T_NONE,
     .reason = CSRF_CROSS_SITE},
    {.name = "unsafe GET: cross-site, trusted origin",
     .cfg = C_UNSAFE_GET,
     .method = "GET",
     .sfs = "cross-site",
     .origin = "https://app.example:8443",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "unsafe GET: same-site",
     .cfg = C_UNSAFE_GET,
     .method = "GET",
     .sfs = "same-site",
     .tok = T_NONE,
     .reason = CSRF_SAME_SITE},
    {.name = "unsafe GET: malformed sfs",
     .cfg = C_UNSAFE_GET,
     .method = "GET",
     .sfs = "nope",
     .tok = T_NONE,
     .reason = CSRF_FETCH_SITE_MALFORMED},
    {.name = "unsafe GET: origin self",
     .cfg = C_UNSAFE_GET,
     .method = "GET",
     .origin = "https://www.example.com",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "unsafe GET: origin trusted",
     .cfg = C_UNSAFE_GET,
     .method = "GET",
     .origin = "https://app.example:8443",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "unsafe GET: origin null",
     .cfg = C_UNSAFE_GET,
     .method = "GET",
     .origin = "null",
     .tok = T_NONE,
     .reason = CSRF_NULL_ORIGIN},
    {.name = "unsafe GET: origin other",
     .cfg = C_UNSAFE_GET,
     .method = "GET",
     .origin = "https://evil.example",
     .tok = T_NONE,
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "unsafe GET: origin malformed",
     .cfg = C_UNSAFE_GET,
     .method = "GET",
     .origin = "https://",
     .tok = T_NONE,
     .reason = CSRF_ORIGIN_MALFORMED},
    {.name = "unsafe GET: referer same-origin",
     .cfg = C_UNSAFE_GET,
     .method = "GET",
     .referer = "https://www.example.com/list",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "unsafe GET: referer other",
     .cfg = C_UNSAFE_GET,
     .method = "GET",
     .referer = "https://evil.example/",
     .tok = T_NONE,
     .reason = CSRF_REFERER_MISMATCH},
    {.name = "unsafe GET: referer malformed",
     .cfg = C_UNSAFE_GET,
     .method = "GET",
     .referer = "::",
     .tok = T_NONE,
     .reason = CSRF_REFERER_MALFORMED},
    {.name = "unsafe GET: no evidence",
     .cfg = C_UNSAFE_GET,
     .method = "GET",
     .tok = T_NONE,
     .reason = CSRF_NO_EVIDENCE},
    {.name = "unsafe GET: a token is no evidence", .cfg = C_UNSAFE_GET, .method = "GET", .reason = CSRF_NO_EVIDENCE},
    {.name = "unsafe HEAD: no evidence",
     .cfg = C_UNSAFE_GET,
     .method = "HEAD",
     .tok = T_NONE,
     .reason = CSRF_NO_EVIDENCE},
    {.name = "unsafe HEAD: same-origin",
     .cfg = C_UNSAFE_GET,
     .method = "HEAD",
     .sfs = "same-origin",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    /* a preflight reaches any URL cross-site: under unsafe_get it needs
     * evidence too (found by the attack review) */
    {.name = "unsafe GET: OPTIONS needs evidence too",
     .cfg = C_UNSAFE_GET,
     .method = "OPTIONS",
     .tok = T_NONE,
     .allowed = 0,
     .reason = CSRF_NO_EVIDENCE},
    {.name = "unsafe GET: a same-origin OPTIONS",
     .cfg = C_UNSAFE_GET,
     .method = "OPTIONS",
     .sfs = "same-origin",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "unsafe GET: exempt GET path",
     .cfg = C_UNSAFE_GET,
     .method = "GET",
     .target = "/legacy/ping",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_EXEMPT},
    {.name = "unsafe GET: exemption is method-aware",
     .cfg = C_UNSAFE_GET,
     .method = "HEAD",
     .target = "/legacy/ping",
     .tok = T_NONE,
     .reason = CSRF_NO_EVIDENCE},
    {.name = "unsafe GET: POST still needs its token",
     .cfg = C_UNSAFE_GET,
     .sfs = "same-origin",
     .tok = T_NONE,
     .reason = CSRF_TOKEN_MISSING},
    {.name = "unsafe GET: GET overridden to DELETE needs a token",
     .cfg = C_UNSAFE_GET,
     .method = "GET",
     .override = "DELETE",
     .sfs = "same-origin",
     .tok = T_NONE,
     .reason = CSRF_TOKEN_MISSING},
};

/* ---- Origin: null ----
 * A page with Referrer-Policy: no-referrer, a sandboxed frame or a
 * redirect across origins sends "null": no evidence either way, since an
 * attacker's page can send it too. Wherever a missing Origin goes on to
 * the Referer and the token, so does "null"; where origin evidence is
 * required (mode origin, unsafe GET) it proves nothing and is rejected,
 * even beside a same-origin Referer (a browser with fetch metadata calls
 * an opaque origin's request cross-site). */
static const row null_origin_rows[] = {
    /* origin_or_token over plain HTTP: the phpMyAdmin login (issue 23) */
    {.name = "null: oot http, form token, cookie secret",
     .cfg = C_OOT_HTTP,
     .scheme = "http",
     .origin = "null",
     .where = W_FORM,
     .secret = SEC_COOKIE,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "null: oot http, multipart token",
     .cfg = C_OOT_HTTP,
     .scheme = "http",
     .origin = "null",
     .where = W_MULTIPART,
     .secret = SEC_COOKIE,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "null: oot http, header token",
     .cfg = C_OOT_HTTP,
     .scheme = "http",
     .origin = "null",
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "null: oot http, blanks around null",
     .cfg = C_OOT_HTTP,
     .scheme = "http",
     .origin = " null ",
     .allowed = 1,
     .reason = CSRF_OK},
    /* A page of a sibling subdomain or of another port can plant its own
     * signed secret cookie and make the browser say null: with neither
     * the caller's secret nor a session the token is bound to, the token
     * proves nothing (outside review of issue 23). */
    {.name = "null: oot http, cookie secret and no session: could be planted",
     .cfg = C_OOT_HTTP,
     .scheme = "http",
     .origin = "null",
     .where = W_FORM,
     .secret = SEC_COOKIE,
     .session = SID_NO_COOKIE,
     .tok = T_UNBOUND,
     .reason = CSRF_NULL_ORIGIN},
    {.name = "null: oot http, cookie secret and no session, header token: could be planted",
     .cfg = C_OOT_HTTP,
     .scheme = "http",
     .origin = "null",
     .secret = SEC_COOKIE,
     .session = SID_NO_COOKIE,
     .tok = T_UNBOUND,
     .reason = CSRF_NULL_ORIGIN},
    {.name = "null: oot http, session cookie configured but not sent: could be planted",
     .cfg = C_OOT_HTTP_SESSION,
     .scheme = "http",
     .origin = "null",
     .where = W_FORM,
     .secret = SEC_COOKIE,
     .session = SID_NO_COOKIE,
     .tok = T_UNBOUND,
     .reason = CSRF_NULL_ORIGIN},
    {.name = "null: oot http, bound to the session cookie, the token decides",
     .cfg = C_OOT_HTTP_SESSION,
     .scheme = "http",
     .origin = "null",
     .where = W_FORM,
     .secret = SEC_COOKIE,
     .session = SID_COOKIE_A,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "null: oot http, the session cookie of another session",
     .cfg = C_OOT_HTTP_SESSION,
     .scheme = "http",
     .origin = "null",
     .where = W_FORM,
     .secret = SEC_COOKIE,
     .session = SID_COOKIE_B,
     .reason = CSRF_TOKEN_SESSION},
    {.name = "null: oot http, the caller's secret and no session: not plantable",
     .cfg = C_OOT_HTTP,
     .scheme = "http",
     .origin = "null",
     .where = W_FORM,
     .secret = SEC_REQ,
     .session = SID_NO_COOKIE,
     .tok = T_NONE,
     .reason = CSRF_TOKEN_MISSING},
    {.name = "null: oot http, no token",
     .cfg = C_OOT_HTTP,
     .scheme = "http",
     .origin = "null",
     .tok = T_NONE,
     .where = W_FORM,
     .secret = SEC_COOKIE,
     .reason = CSRF_TOKEN_MISSING},
    {.name = "null: oot http, no secret cookie",
     .cfg = C_OOT_HTTP,
     .scheme = "http",
     .origin = "null",
     .where = W_FORM,
     .secret = SEC_COOKIE_OTHER,
     .reason = CSRF_SECRET_MISSING},
    {.name = "null: oot http, another session's token",
     .cfg = C_OOT_HTTP,
     .scheme = "http",
     .origin = "null",
     .tok = T_OTHER_SESSION,
     .reason = CSRF_TOKEN_SESSION},
    {.name = "null: oot http, tampered token",
     .cfg = C_OOT_HTTP,
     .scheme = "http",
     .origin = "null",
     .tok = T_TAMPERED,
     .reason = CSRF_TOKEN_INVALID},
    {.name = "null: oot http, a same-origin referer is no evidence",
     .cfg = C_OOT_HTTP,
     .scheme = "http",
     .origin = "null",
     .referer = "http://www.example.com/login",
     .tok = T_NONE,
     .reason = CSRF_TOKEN_MISSING},
    {.name = "null: oot http, a foreign referer is not read over http (as without Origin)",
     .cfg = C_OOT_HTTP,
     .scheme = "http",
     .origin = "null",
     .referer = "http://evil.example/",
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "null: oot http, upper case is not null",
     .cfg = C_OOT_HTTP,
     .scheme = "http",
     .origin = "NULL",
     .reason = CSRF_ORIGIN_MALFORMED},
    {.name = "null: oot http, cross-site beside null",
     .cfg = C_OOT_HTTP,
     .scheme = "http",
     .origin = "null",
     .sfs = "cross-site",
     .reason = CSRF_CROSS_SITE},
    {.name = "null: oot http, same-origin beside null",
     .cfg = C_OOT_HTTP,
     .scheme = "http",
     .origin = "null",
     .sfs = "same-origin",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "null: oot http, none beside null needs the token",
     .cfg = C_OOT_HTTP,
     .scheme = "http",
     .origin = "null",
     .sfs = "none",
     .tok = T_NONE,
     .reason = CSRF_TOKEN_MISSING},
    /* origin_or_token over HTTPS: the Referer rule of a missing Origin */
    {.name = "null: oot https, no referer, the caller's secret",
     .cfg = C_OOT,
     .origin = "null",
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "null: oot https, no referer, no token",
     .cfg = C_OOT,
     .origin = "null",
     .tok = T_NONE,
     .reason = CSRF_TOKEN_MISSING},
    {.name = "null: oot https, no referer, a plantable secret cookie",
     .cfg = C_OOT,
     .origin = "null",
     .secret = SEC_COOKIE,
     .reason = CSRF_NULL_ORIGIN},
    {.name = "null: oot https, same-origin referer, a plantable secret cookie",
     .cfg = C_OOT,
     .origin = "null",
     .referer = "https://www.example.com/form",
     .secret = SEC_COOKIE,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "null: oot https, same-origin referer is no evidence",
     .cfg = C_OOT,
     .origin = "null",
     .referer = "https://www.example.com/form",
     .tok = T_NONE,
     .reason = CSRF_TOKEN_MISSING},
    {.name = "null: oot https, foreign referer",
     .cfg = C_OOT,
     .origin = "null",
     .referer = "https://evil.example/",
     .reason = CSRF_REFERER_MISMATCH},
    {.name = "null: oot https, http referer",
     .cfg = C_OOT,
     .origin = "null",
     .referer = "http://www.example.com/form",
     .reason = CSRF_REFERER_INSECURE},
    /* mode both: the origin stage as without an Origin, then the token */
    {.name = "null: both https, no referer", .origin = "null", .reason = CSRF_NULL_ORIGIN},
    {.name = "null: both https, same-origin referer",
     .origin = "null",
     .referer = "https://www.example.com/form",
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "null: both https, same-origin referer, no token",
     .origin = "null",
     .referer = "https://www.example.com/form",
     .tok = T_NONE,
     .reason = CSRF_TOKEN_MISSING},
    {.name = "null: both https, foreign referer",
     .origin = "null",
     .referer = "https://evil.example/form",
     .reason = CSRF_REFERER_MISMATCH},
    {.name = "null: both https, trusted referer",
     .origin = "null",
     .referer = "https://app.example:8443/x",
     .allowed = 1,
     .reason = CSRF_OK},
    /* mode origin: evidence is required, and null is none */
    {.name = "null: origin http", .cfg = C_ORIGIN_HTTP, .scheme = "http", .origin = "null", .reason = CSRF_NULL_ORIGIN},
    {.name = "null: origin http, same-origin referer",
     .cfg = C_ORIGIN_HTTP,
     .scheme = "http",
     .origin = "null",
     .referer = "http://www.example.com/form",
     .reason = CSRF_NULL_ORIGIN},
    {.name = "null: origin https, same-origin referer",
     .cfg = C_ORIGIN,
     .origin = "null",
     .referer = "https://www.example.com/form",
     .reason = CSRF_NULL_ORIGIN},
    {.name = "null: origin https, same-origin fetch metadata",
     .cfg = C_ORIGIN,
     .origin = "null",
     .sfs = "same-origin",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    /* unsafe GET: evidence is required */
    {.name = "null: unsafe GET, same-origin referer",
     .cfg = C_UNSAFE_GET,
     .method = "GET",
     .origin = "null",
     .referer = "https://www.example.com/list",
     .tok = T_NONE,
     .reason = CSRF_NULL_ORIGIN},
    /* report-only reports it */
    {.name = "null: report-only",
     .cfg = C_REPORT,
     .origin = "null",
     .allowed = 1,
     .reason = CSRF_NULL_ORIGIN,
     .report_only = 1},
};

/* ---- origins in the spellings browsers send (issue 23) ----
 * Scheme and host compare case-insensitively, a default port equals an
 * omitted one, IPv6 literals compare as addresses, a final dot is the
 * same DNS host; every other difference is another origin. */
static const row spelling_rows[] = {
    {.name = "spelling: as sent",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "victim.test:8080",
     .origin = "http://victim.test:8080",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "spelling: Host in upper case",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "VICTIM.Test:8080",
     .origin = "http://victim.test:8080",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "spelling: Origin in upper case",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "victim.test:8080",
     .origin = "HTTP://VICTIM.TEST:8080",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "spelling: explicit :80 in the Origin",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "victim.test",
     .origin = "http://victim.test:80",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "spelling: explicit :80 in the Host",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "victim.test:80",
     .origin = "http://victim.test",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "spelling: explicit :443 in the Origin",
     .cfg = C_OOT_HOST,
     .scheme = "https",
     .host = "victim.test",
     .origin = "https://victim.test:443",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "spelling: explicit :443 in the Host",
     .cfg = C_OOT_HOST,
     .scheme = "https",
     .host = "victim.test:443",
     .origin = "https://victim.test",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "spelling: another port",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "victim.test:80",
     .origin = "http://victim.test:8080",
     .tok = T_NONE,
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "spelling: :443 over http is another port",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "victim.test",
     .origin = "http://victim.test:443",
     .tok = T_NONE,
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "spelling: another scheme",
     .cfg = C_OOT_HOST,
     .scheme = "https",
     .host = "victim.test",
     .origin = "http://victim.test",
     .tok = T_NONE,
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "spelling: IDN in punycode",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "xn--bcher-kva.test:8080",
     .origin = "http://xn--bcher-kva.test:8080",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "spelling: IDN punycode in upper case",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "xn--bcher-kva.test:8080",
     .origin = "http://XN--BCHER-KVA.test:8080",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "spelling: homograph (Cyrillic a) of apple.test",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "apple.test",
     .origin = "http://xn--pple-43d.test",
     .tok = T_NONE,
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "spelling: apple.test on the homograph's site",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "xn--pple-43d.test",
     .origin = "http://apple.test",
     .tok = T_NONE,
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "spelling: a Host in raw UTF-8 is no self origin",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "b\xc3\xbc"
             "cher.test",
     .origin = "http://xn--bcher-kva.test",
     .tok = T_NONE,
     .reason = CSRF_HOST_MISSING},
    {.name = "spelling: an Origin in raw UTF-8 is malformed",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "xn--bcher-kva.test",
     .origin = "http://b\xc3\xbc"
               "cher.test",
     .tok = T_NONE,
     .reason = CSRF_ORIGIN_MALFORMED},
    {.name = "spelling: IPv6 literal",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "[::1]:8080",
     .origin = "http://[::1]:8080",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "spelling: IPv6 literal, long form in the Host",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "[0:0:0:0:0:0:0:1]:8080",
     .origin = "http://[::1]:8080",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "spelling: IPv6 literal, explicit :80",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "[::1]",
     .origin = "http://[::1]:80",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "spelling: IPv6 [::1] vs [::2]",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "[::1]:8080",
     .origin = "http://[::2]:8080",
     .tok = T_NONE,
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "spelling: IPv6 mapped IPv4 is another host",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "127.0.0.1:8080",
     .origin = "http://[::ffff:127.0.0.1]:8080",
     .tok = T_NONE,
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "spelling: IPv6 Host without brackets",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "::1",
     .origin = "http://[::1]:8080",
     .tok = T_NONE,
     .reason = CSRF_HOST_MISSING},
    {.name = "spelling: IPv6 with a zone",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "[fe80::1]:8080",
     .origin = "http://[fe80::1%25eth0]:8080",
     .tok = T_NONE,
     .reason = CSRF_ORIGIN_MALFORMED},
    {.name = "spelling: trailing dot in both",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "wiki.lan.:8080",
     .origin = "http://wiki.lan.:8080",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "spelling: trailing dot in the Origin only",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "wiki.lan:8080",
     .origin = "http://wiki.lan.:8080",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "spelling: trailing dot in the Host only",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "wiki.lan.:8080",
     .origin = "http://wiki.lan:8080",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "spelling: two trailing dots",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "wiki.lan:8080",
     .origin = "http://wiki.lan..:8080",
     .tok = T_NONE,
     .reason = CSRF_ORIGIN_MALFORMED},
    {.name = "spelling: trailing dot, another port",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "wiki.lan:8080",
     .origin = "http://wiki.lan.:8081",
     .tok = T_NONE,
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "spelling: victim as a label of the attacker",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "victim.test",
     .origin = "http://victim.test.evil.test",
     .tok = T_NONE,
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "spelling: victim as a prefix of the attacker",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "victim.test",
     .origin = "http://victim.testevil.test",
     .tok = T_NONE,
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "spelling: victim as a suffix of the attacker",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "victim.test",
     .origin = "http://evilvictim.test",
     .tok = T_NONE,
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "spelling: a sibling of the victim",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "victim.test",
     .origin = "http://evil.victim.test",
     .tok = T_NONE,
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "spelling: the parent of the victim",
     .cfg = C_OOT_HOST,
     .scheme = "http",
     .host = "victim.test",
     .origin = "http://test",
     .tok = T_NONE,
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "spelling: configured, upper case and :80",
     .cfg = C_OOT_HTTP,
     .scheme = "http",
     .origin = "HTTP://WWW.EXAMPLE.COM:80",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "spelling: configured, trailing dot",
     .cfg = C_OOT_HTTP,
     .scheme = "http",
     .origin = "http://www.example.com.",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "spelling: configured, Host cannot matter",
     .cfg = C_OOT_HTTP,
     .scheme = "http",
     .host = "evil.test",
     .origin = "http://evil.test",
     .tok = T_NONE,
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "spelling: configured, look-alike",
     .cfg = C_OOT_HTTP,
     .scheme = "http",
     .origin = "http://www.example.com.evil.test",
     .tok = T_NONE,
     .reason = CSRF_ORIGIN_MISMATCH},
    {.name = "spelling: referer with trailing dot, :443 and upper case",
     .cfg = C_DEFAULT,
     .scheme = "https",
     .referer = "https://WWW.Example.COM.:443/form",
     .tok = T_VALID,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "spelling: referer of a look-alike",
     .cfg = C_DEFAULT,
     .scheme = "https",
     .referer = "https://www.example.com.evil.test/form",
     .tok = T_VALID,
     .reason = CSRF_REFERER_MISMATCH},
};

static void test_spellings(void **state)
{
	(void)state;
	RUN(spelling_rows);
}

static void test_null_origin(void **state)
{
	(void)state;
	RUN(null_origin_rows);
}

static void test_unsafe_get(void **state)
{
	(void)state;
	RUN(unsafe_get_rows);
}

/* ---- WebSocket handshakes: a safe method judged by its origin ---- */

/* A GET that opens a WebSocket is read and written by the page that
 * opened it (Cross-Site WebSocket Hijacking): judged by fetch metadata
 * and Origin as an unsafe request, never by a token; without either
 * there is no browser, and it passes. C_DEFAULT: both, self
 * https://www.example.com, trusted https://app.example:8443, exempt
 * (any, "/api/hook"), (POST, "/webhook"), (GET, "/ws/public"). */
#define WSH .upgrade = "websocket", .connection = "Upgrade"
#define WS .method = "GET", .target = "/ws", WSH
static const row websocket_rows[] = {
    {.name = "ws: cross-site Origin", WS, .origin = "https://evil.example", .reason = CSRF_WEBSOCKET_ORIGIN},
    {.name = "ws: cross-site, fetch metadata",
     WS,
     .origin = "https://evil.example",
     .sfs = "cross-site",
     .fetch_mode = "websocket",
     .reason = CSRF_WEBSOCKET_ORIGIN},
    {.name = "ws: same-site sibling",
     WS,
     .origin = "https://blog.example.com",
     .sfs = "same-site",
     .fetch_mode = "websocket",
     .reason = CSRF_WEBSOCKET_ORIGIN},
    {.name = "ws: same-site sibling, no fetch metadata",
     WS,
     .origin = "https://blog.example.com",
     .reason = CSRF_WEBSOCKET_ORIGIN},
    {.name = "ws: another port of the host",
     WS,
     .origin = "https://www.example.com:8443",
     .reason = CSRF_WEBSOCKET_ORIGIN},
    {.name = "ws: http page of the host", WS, .origin = "http://www.example.com", .reason = CSRF_WEBSOCKET_ORIGIN},
    {.name = "ws: Origin null", WS, .origin = "null", .reason = CSRF_WEBSOCKET_ORIGIN},
    {.name = "ws: Origin null, same-origin Referer",
     WS,
     .origin = "null",
     .referer = "https://www.example.com/chat",
     .reason = CSRF_WEBSOCKET_ORIGIN},
    {.name = "ws: Origin null with a valid token and cookie (no token is read)",
     WS,
     .origin = "null",
     .tok = T_VALID,
     .secret = SEC_COOKIE,
     .reason = CSRF_WEBSOCKET_ORIGIN},
    {.name = "ws: malformed Origin", WS, .origin = "https://", .reason = CSRF_ORIGIN_MALFORMED},
    {.name = "ws: malformed Sec-Fetch-Site", WS, .sfs = "sideways", .reason = CSRF_FETCH_SITE_MALFORMED},
    {.name = "ws: same origin", WS, .origin = "https://www.example.com", .allowed = 1, .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "ws: same origin, default port",
     WS,
     .origin = "https://WWW.example.com:443",
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "ws: fetch metadata same-origin",
     WS,
     .origin = "https://www.example.com",
     .sfs = "same-origin",
     .fetch_mode = "websocket",
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "ws: trusted origin",
     WS,
     .origin = "https://app.example:8443",
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "ws: cross-site from a trusted origin",
     WS,
     .origin = "https://app.example:8443",
     .sfs = "cross-site",
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    /* no browser: curl, a native app, a server-side client */
    {.name = "ws: no Origin, no fetch metadata (https, no Referer)", WS, .allowed = 1, .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "ws: no Origin, no fetch metadata, no token, no cookie",
     WS,
     .tok = T_NONE,
     .secret = SEC_NO_COOKIE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "ws: no Origin, foreign Referer (not a browser's handshake)",
     WS,
     .referer = "https://evil.example/",
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "ws: no Origin, over http",
     WS,
     .cfg = C_ORIGIN_HTTP,
     .scheme = "http",
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    /* what makes a handshake */
    {.name = "ws: plain GET, cross-site Origin: a safe method",
     .method = "GET",
     .target = "/ws",
     .origin = "https://evil.example",
     .sfs = "cross-site",
     .allowed = 1,
     .reason = CSRF_SAFE_METHOD},
    {.name = "ws: Connection: Upgrade alone is no handshake",
     .method = "GET",
     .target = "/ws",
     .connection = "Upgrade",
     .origin = "https://evil.example",
     .allowed = 1,
     .reason = CSRF_SAFE_METHOD},
    {.name = "ws: Upgrade: h2c is no handshake",
     .method = "GET",
     .target = "/ws",
     .upgrade = "h2c",
     .connection = "Upgrade, HTTP2-Settings",
     .origin = "https://evil.example",
     .allowed = 1,
     .reason = CSRF_SAFE_METHOD},
    {.name = "ws: Upgrade: websockets is another protocol",
     .method = "GET",
     .target = "/ws",
     .upgrade = "websockets",
     .origin = "https://evil.example",
     .allowed = 1,
     .reason = CSRF_SAFE_METHOD},
    {.name = "ws: Sec-Fetch-Mode navigate is no handshake",
     .method = "GET",
     .target = "/ws",
     .fetch_mode = "navigate",
     .sfs = "cross-site",
     .allowed = 1,
     .reason = CSRF_SAFE_METHOD},
    {.name = "ws: Upgrade in upper case",
     .method = "GET",
     .target = "/ws",
     .upgrade = "WEBSOCKET",
     .connection = "upgrade",
     .origin = "https://evil.example",
     .reason = CSRF_WEBSOCKET_ORIGIN},
    {.name = "ws: Upgrade in mixed case, blanks",
     .method = "GET",
     .target = "/ws",
     .upgrade = " \tWebSocket ",
     .origin = "https://evil.example",
     .reason = CSRF_WEBSOCKET_ORIGIN},
    {.name = "ws: Upgrade list, Connection list",
     .method = "GET",
     .target = "/ws",
     .upgrade = "h2c, websocket",
     .connection = "keep-alive, Upgrade",
     .origin = "https://evil.example",
     .reason = CSRF_WEBSOCKET_ORIGIN},
    {.name = "ws: Upgrade list with empty items and a version",
     .method = "GET",
     .target = "/ws",
     .upgrade = ",, websocket/13 ,",
     .origin = "https://evil.example",
     .reason = CSRF_WEBSOCKET_ORIGIN},
    {.name = "ws: without Connection (a backend may upgrade on Upgrade alone)",
     .method = "GET",
     .target = "/ws",
     .upgrade = "websocket",
     .origin = "https://evil.example",
     .reason = CSRF_WEBSOCKET_ORIGIN},
    {.name = "ws: Sec-Fetch-Mode websocket without Upgrade",
     .method = "GET",
     .target = "/ws",
     .fetch_mode = "websocket",
     .sfs = "cross-site",
     .origin = "https://evil.example",
     .reason = CSRF_WEBSOCKET_ORIGIN},
    {.name = "ws: HEAD",
     WSH,
     .method = "HEAD",
     .target = "/ws",
     .origin = "https://evil.example",
     .reason = CSRF_WEBSOCKET_ORIGIN},
    {.name = "ws: OPTIONS",
     WSH,
     .method = "OPTIONS",
     .target = "/ws",
     .origin = "https://evil.example",
     .reason = CSRF_WEBSOCKET_ORIGIN},
    /* exemptions and modes */
    {.name = "ws: exempt any method",
     WSH,
     .method = "GET",
     .target = "/api/hook",
     .origin = "https://evil.example",
     .allowed = 1,
     .reason = CSRF_EXEMPT},
    {.name = "ws: exempt GET",
     WSH,
     .method = "GET",
     .target = "/ws/public?room=1",
     .origin = "https://evil.example",
     .allowed = 1,
     .reason = CSRF_EXEMPT},
    {.name = "ws: exemption of POST does not cover the GET",
     WSH,
     .method = "GET",
     .target = "/webhook",
     .origin = "https://evil.example",
     .reason = CSRF_WEBSOCKET_ORIGIN},
    {.name = "ws: mode token, cross-site",
     WS,
     .cfg = C_TOKEN,
     .origin = "https://evil.example",
     .reason = CSRF_WEBSOCKET_ORIGIN},
    {.name = "ws: mode token, same origin (no token asked)",
     WS,
     .cfg = C_TOKEN,
     .origin = "https://www.example.com",
     .tok = T_NONE,
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "ws: mode origin, cross-site",
     WS,
     .cfg = C_ORIGIN,
     .origin = "https://evil.example",
     .reason = CSRF_WEBSOCKET_ORIGIN},
    {.name = "ws: mode origin_or_token, null", WS, .cfg = C_OOT, .origin = "null", .reason = CSRF_WEBSOCKET_ORIGIN},
    {.name = "ws: mode origin_or_token, same origin",
     WS,
     .cfg = C_OOT,
     .origin = "https://www.example.com",
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "ws: self from Host, same origin",
     WS,
     .cfg = C_DJANGO,
     .scheme = "http",
     .origin = "http://www.example.com",
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "ws: self from Host, cross-site",
     WS,
     .cfg = C_DJANGO,
     .scheme = "http",
     .origin = "http://evil.example",
     .reason = CSRF_WEBSOCKET_ORIGIN},
    {.name = "ws: same-site allowed",
     WS,
     .cfg = C_SAME_SITE,
     .origin = "https://blog.example.com",
     .sfs = "same-site",
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "ws: Sec-Fetch-Site none not accepted",
     WS,
     .cfg = C_NO_FETCH_NONE,
     .sfs = "none",
     .reason = CSRF_NO_EVIDENCE},
    {.name = "ws: report-only",
     WS,
     .cfg = C_REPORT,
     .origin = "https://evil.example",
     .allowed = 1,
     .reason = CSRF_WEBSOCKET_ORIGIN,
     .report_only = 1},
    /* unsafe GET asks every GET for evidence, handshakes too */
    {.name = "ws: unsafe GET, cross-site",
     WS,
     .cfg = C_UNSAFE_GET,
     .origin = "https://evil.example",
     .reason = CSRF_WEBSOCKET_ORIGIN},
    {.name = "ws: unsafe GET, same origin",
     WS,
     .cfg = C_UNSAFE_GET,
     .origin = "https://www.example.com",
     .allowed = 1,
     .reason = CSRF_ORIGIN_VERIFIED},
    {.name = "ws: unsafe GET, no Origin", WS, .cfg = C_UNSAFE_GET, .reason = CSRF_NO_EVIDENCE},
    /* an override makes the request unsafe, judged as any: the token */
    {.name = "ws: override to POST",
     WS,
     .origin = "https://www.example.com",
     .override = "POST",
     .tok = T_NONE,
     .reason = CSRF_TOKEN_MISSING},
};
#undef WS
#undef WSH

static void test_websocket(void **state)
{
	(void)state;
	RUN(websocket_rows);
}

/* Upgrade and Sec-Fetch-Mode as csrf_request_header files them: a
 * second line makes a handshake whatever the first said (fail closed: a
 * browser never sends either twice). */
/* Every prefix of an Upgrade list, flush against a guard page: a
 * handshake (and refused from another origin) exactly when the websocket
 * item is whole. */
static void test_websocket_prefixes(void **state)
{
	(void)state;
	static const char list[] = ",, h2c ,\tWebSocket/13 , x";
	size_t whole = (size_t)(strstr(list, "WebSocket") - list) + strlen("WebSocket");
	for (size_t n = 0; n <= sizeof list - 1; n++) {
		char *v = tu_guard_copy(list, n);
		csrf_request req;
		csrf_request_init(&req);
		req.method = (csrf_slice){"GET", 3};
		req.target = (csrf_slice){"/ws", 3};
		req.scheme = (csrf_slice){"https", 5};
		req.now = NOW;
		must(csrf_request_header(&req, "Origin", 6, "https://evil.example", 20));
		must(csrf_request_header(&req, "Upgrade", 7, v, n));
		csrf_result res = csrf_check(g.ctx[C_DEFAULT], &req);
		tu_guard_free(v);
		csrf_reason want = n >= whole ? CSRF_WEBSOCKET_ORIGIN : CSRF_SAFE_METHOD;
		if (res.reason != want)
			fail_msg("prefix %zu: got %s, want %s", n, csrf_reason_name(res.reason),
			         csrf_reason_name(want));
	}
}

static void test_websocket_lines(void **state)
{
	(void)state;
	static const struct {
		const char *name, *value;
	} lines[][2] = {
	    {{"upgrade", "websocket"}, {NULL, NULL}},
	    {{"UPGRADE", "h2c"}, {"Upgrade", "websocket"}},
	    {{"Upgrade", "h2c"}, {"Upgrade", "h2c"}},
	    {{"sec-fetch-mode", "WebSocket"}, {NULL, NULL}},
	    {{"Sec-Fetch-Mode", "cors"}, {"Sec-Fetch-Mode", "cors"}},
	};
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		csrf_request req;
		csrf_request_init(&req);
		req.method = (csrf_slice){"GET", 3};
		req.target = (csrf_slice){"/ws", 3};
		req.scheme = (csrf_slice){"https", 5};
		req.now = NOW;
		must(csrf_request_header(&req, "Origin", 6, "https://evil.example", 20));
		for (size_t k = 0; k < 2 && lines[i][k].name; k++)
			must(csrf_request_header(&req, lines[i][k].name, strlen(lines[i][k].name), lines[i][k].value,
			                         strlen(lines[i][k].value)));
		csrf_result res = csrf_check(g.ctx[C_DEFAULT], &req);
		if (res.allowed || res.reason != CSRF_WEBSOCKET_ORIGIN)
			fail_msg("lines %zu: got allowed=%d %s", i, res.allowed, csrf_reason_name(res.reason));
	}
}

/* ---- step 6: the token stage ---- */

static const row token_rows[] = {
    {.name = "token: header, masked", .sfs = "same-origin", .allowed = 1, .reason = CSRF_OK},
    {.name = "token: header, second masking", .sfs = "same-origin", .tok = T_VALID2, .allowed = 1, .reason = CSRF_OK},
    {.name = "token: header, unmasked", .sfs = "same-origin", .tok = T_UNMASKED, .allowed = 1, .reason = CSRF_OK},
    {.name = "token: urlencoded field, masked", .sfs = "same-origin", .where = W_FORM, .allowed = 1, .reason = CSRF_OK},
    {.name = "token: urlencoded field, unmasked",
     .sfs = "same-origin",
     .tok = T_UNMASKED,
     .where = W_FORM,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "token: multipart field, masked",
     .sfs = "same-origin",
     .where = W_MULTIPART,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "token: multipart field, unmasked",
     .sfs = "same-origin",
     .tok = T_UNMASKED,
     .where = W_MULTIPART,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "token: header wins over a bad field",
     .sfs = "same-origin",
     .where = W_HEADER_AND_FORM,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "token: a bad header wins over a good field",
     .sfs = "same-origin",
     .where = W_FORM_AND_HEADER,
     .reason = CSRF_TOKEN_MALFORMED},
    {.name = "token: empty header counts as absent, field used",
     .sfs = "same-origin",
     .where = W_EMPTY_HEADER_FORM,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "token: empty header only", .sfs = "same-origin", .where = W_EMPTY_HEADER, .reason = CSRF_TOKEN_MISSING},
    {.name = "token: query string only", .sfs = "same-origin", .where = W_QUERY, .reason = CSRF_TOKEN_MISSING},
    {.name = "token: query string only, with other parameters",
     .sfs = "same-origin",
     .target = "/save?a=1",
     .where = W_QUERY,
     .reason = CSRF_TOKEN_MISSING},
    {.name = "token: JSON body is not searched", .sfs = "same-origin", .where = W_JSON, .reason = CSRF_TOKEN_MISSING},
    {.name = "token: body without content type",
     .sfs = "same-origin",
     .where = W_FORM_NO_CONTENT_TYPE,
     .reason = CSRF_TOKEN_MISSING},
    {.name = "token: field under another name",
     .sfs = "same-origin",
     .where = W_FORM_WRONG_NAME,
     .reason = CSRF_TOKEN_MISSING},
    /* A page rendered for another secret (before a login, a logout, the
     * cookies cleared) names its field for that secret: a token of
     * another session, whatever its value. */
    {.name = "token: field named for another secret (a stale page)",
     .sfs = "same-origin",
     .where = W_FORM_OTHER_SECRET,
     .reason = CSRF_TOKEN_SESSION},
    {.name = "token: multipart field named for another secret",
     .sfs = "same-origin",
     .where = W_MULTIPART_OTHER_SECRET,
     .reason = CSRF_TOKEN_SESSION},
    {.name = "token: field named for another secret, secret cookie B",
     .sfs = "same-origin",
     .secret = SEC_COOKIE_B,
     .where = W_FORM_OTHER_SECRET,
     .reason = CSRF_TOKEN_SESSION},
    {.name = "token: field named for another secret, fixed field name configured",
     .cfg = C_FIELD,
     .sfs = "same-origin",
     .where = W_FORM_OTHER_SECRET,
     .reason = CSRF_TOKEN_MISSING},
    /* The value is looked at in the body where it needs no decoding,
     * decoded where it does: a percent-encoded token still verifies. */
    {.name = "token: field percent-encoded",
     .sfs = "same-origin",
     .where = W_FORM_PERCENT,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "token: field percent-encoded, tampered",
     .sfs = "same-origin",
     .tok = T_TAMPERED,
     .where = W_FORM_PERCENT,
     .reason = CSRF_TOKEN_INVALID},
    {.name = "token: field the whole body",
     .sfs = "same-origin",
     .where = W_FORM_ONLY,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "token: field the whole body, overlong",
     .sfs = "same-origin",
     .tok = T_LONG,
     .where = W_FORM_ONLY,
     .reason = CSRF_TOKEN_MALFORMED},
    {.name = "token: field almost a derived name (upper-case hex)",
     .sfs = "same-origin",
     .where = W_FORM_UPPER_HEX,
     .reason = CSRF_TOKEN_MISSING},
    {.name = "token: form without a token",
     .sfs = "same-origin",
     .tok = T_NONE,
     .where = W_FORM,
     .reason = CSRF_TOKEN_MISSING},
    {.name = "token: multipart without a token",
     .sfs = "same-origin",
     .tok = T_NONE,
     .where = W_MULTIPART,
     .reason = CSRF_TOKEN_MISSING},
    {.name = "token: multipart without boundary",
     .sfs = "same-origin",
     .where = W_MULTIPART_NO_BOUNDARY,
     .reason = CSRF_BODY_MALFORMED},
    {.name = "token: truncated multipart",
     .sfs = "same-origin",
     .where = W_MULTIPART_TRUNCATED,
     .reason = CSRF_BODY_MALFORMED},
    {.name = "token: bad escape in the field",
     .sfs = "same-origin",
     .where = W_FORM_BAD_ESCAPE,
     .reason = CSRF_BODY_MALFORMED},
    {.name = "token: another session's token",
     .sfs = "same-origin",
     .tok = T_OTHER_SESSION,
     .reason = CSRF_TOKEN_SESSION},
    {.name = "token: our token, another session", .sfs = "same-origin", .session = SID_B, .reason = CSRF_TOKEN_SESSION},
    {.name = "token: wrong secret", .sfs = "same-origin", .tok = T_WRONG_SECRET, .reason = CSRF_TOKEN_INVALID},
    /* Another ring's key under our key id: its session bind does not
     * verify either, which cannot be told from another session's. */
    {.name = "token: another ring's key", .sfs = "same-origin", .tok = T_FOREIGN_KEY, .reason = CSRF_TOKEN_SESSION},
    {.name = "token: tampered", .sfs = "same-origin", .tok = T_TAMPERED, .reason = CSRF_TOKEN_INVALID},
    {.name = "token: overlong header", .sfs = "same-origin", .tok = T_LONG, .reason = CSRF_TOKEN_MALFORMED},
    {.name = "token: overlong field",
     .sfs = "same-origin",
     .tok = T_LONG,
     .where = W_FORM,
     .reason = CSRF_TOKEN_MALFORMED},
    {.name = "token: overlong multipart field",
     .sfs = "same-origin",
     .tok = T_LONG,
     .where = W_MULTIPART,
     .reason = CSRF_TOKEN_MALFORMED},
    {.name = "token: short", .sfs = "same-origin", .tok = T_SHORT, .reason = CSRF_TOKEN_MALFORMED},
    {.name = "token: max age, fresh", .cfg = C_MAX_AGE, .sfs = "same-origin", .allowed = 1, .reason = CSRF_OK},
    {.name = "token: max age, an hour old",
     .cfg = C_MAX_AGE,
     .sfs = "same-origin",
     .tok = T_OLD,
     .reason = CSRF_TOKEN_EXPIRED},
    {.name = "token: no max age, an hour old", .sfs = "same-origin", .tok = T_OLD, .allowed = 1, .reason = CSRF_OK},
    {.name = "token: fixed field name",
     .cfg = C_FIELD,
     .sfs = "same-origin",
     .where = W_FORM,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "token: fixed field name, other name",
     .cfg = C_FIELD,
     .sfs = "same-origin",
     .where = W_FORM_WRONG_NAME,
     .reason = CSRF_TOKEN_MISSING},
    /* the stateless variant: the secret in a signed cookie */
    {.name = "stateless: valid cookie, header",
     .sfs = "same-origin",
     .secret = SEC_COOKIE,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "stateless: valid cookie, field",
     .sfs = "same-origin",
     .where = W_FORM,
     .secret = SEC_COOKIE,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "stateless: no Cookie header",
     .sfs = "same-origin",
     .secret = SEC_NO_COOKIE,
     .reason = CSRF_SECRET_MISSING},
    {.name = "stateless: no secret cookie",
     .sfs = "same-origin",
     .secret = SEC_COOKIE_OTHER,
     .reason = CSRF_SECRET_MISSING},
    {.name = "stateless: empty secret cookie",
     .sfs = "same-origin",
     .secret = SEC_COOKIE_EMPTY,
     .reason = CSRF_SECRET_INVALID},
    {.name = "stateless: tampered cookie",
     .sfs = "same-origin",
     .secret = SEC_COOKIE_TAMPERED,
     .reason = CSRF_SECRET_INVALID},
    {.name = "stateless: planted by a sibling subdomain (its ring, same key id)",
     .sfs = "same-origin",
     .secret = SEC_COOKIE_FOREIGN,
     .reason = CSRF_SECRET_INVALID},
    {.name = "stateless: planted by a sibling subdomain (its ring, unknown key id)",
     .sfs = "same-origin",
     .secret = SEC_COOKIE_FOREIGN_ID,
     .reason = CSRF_UNKNOWN_KEY},
    {.name = "stateless: another valid secret, our token",
     .sfs = "same-origin",
     .secret = SEC_COOKIE_B,
     .reason = CSRF_TOKEN_INVALID},
    {.name = "stateless: oversized Cookie header",
     .sfs = "same-origin",
     .secret = SEC_COOKIE_HUGE,
     .reason = CSRF_HEADER_TOO_LARGE},
    {.name = "stateless: the cookie is not a token",
     .sfs = "same-origin",
     .tok = T_NONE,
     .secret = SEC_COOKIE,
     .reason = CSRF_TOKEN_MISSING},
    /* bound to the application's session cookie */
    {.name = "session cookie: same session",
     .cfg = C_SESSION_COOKIE,
     .sfs = "same-origin",
     .secret = SEC_COOKIE,
     .session = SID_COOKIE_A,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "session cookie: same session, stateful secret",
     .cfg = C_SESSION_COOKIE,
     .sfs = "same-origin",
     .session = SID_COOKIE_A,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "session cookie: other session",
     .cfg = C_SESSION_COOKIE,
     .sfs = "same-origin",
     .secret = SEC_COOKIE,
     .session = SID_COOKIE_B,
     .reason = CSRF_TOKEN_SESSION},
    {.name = "session cookie: no session cookie",
     .cfg = C_SESSION_COOKIE,
     .sfs = "same-origin",
     .secret = SEC_COOKIE,
     .session = SID_NO_COOKIE,
     .reason = CSRF_TOKEN_SESSION},
    {.name = "session cookie: the caller's session id wins",
     .cfg = C_SESSION_COOKIE,
     .sfs = "same-origin",
     .secret = SEC_COOKIE,
     .session = SID_A_COOKIE_B,
     .allowed = 1,
     .reason = CSRF_OK},
    {.name = "no session cookie configured: a sessionid cookie is not read",
     .cfg = C_DJANGO,
     .scheme = "http",
     .secret = SEC_COOKIE,
     .session = SID_COOKIE_A,
     .reason = CSRF_TOKEN_SESSION},
};

static void test_token_stage(void **state)
{
	(void)state;
	RUN(token_rows);
}

/* ---- oversized input ---- */

static void test_oversized(void **state)
{
	(void)state;
	size_t big = 10 * 1024;
	char *origin = malloc(big + 1), *referer = malloc(big + 1), *sfs = malloc(big + 1);
	char *target = malloc(big + 32), *host = malloc(301);
	assert_true(origin && referer && sfs && target && host);
	int n = snprintf(origin, big + 1, "https://");
	memset(origin + n, 'a', big - (size_t)n);
	origin[big] = '\0';
	n = snprintf(referer, big + 1, "https://www.example.com/");
	memset(referer + n, 'p', big - (size_t)n);
	referer[big] = '\0';
	fill(sfs, 's', big);
	target[0] = '\0';
	appendf(target, big + 32, "/x?");
	for (size_t used = 3; used + 4 < big; used += 4)
		memcpy(target + used, "a=1&", 5);
	appendf(target, big + 32, "_method=DELETE");
	fill(host, 'h', 300);

	row rows[] = {
	    {.name = "oversized origin", .origin = origin, .reason = CSRF_ORIGIN_MALFORMED},
	    {.name = "oversized referer path, same origin", .referer = referer, .allowed = 1, .reason = CSRF_OK},
	    {.name = "oversized Sec-Fetch-Site", .sfs = sfs, .reason = CSRF_FETCH_SITE_MALFORMED},
	    {.name = "oversized token header", .sfs = "same-origin", .tok = T_LONG, .reason = CSRF_TOKEN_MALFORMED},
	    {.name = "oversized query, _method at its end",
	     .method = "GET",
	     .target = target,
	     .sfs = "cross-site",
	     .reason = CSRF_CROSS_SITE},
	    {.name = "oversized Host",
	     .cfg = C_DJANGO,
	     .host = host,
	     .origin = "https://www.example.com",
	     .reason = CSRF_HOST_MISSING},
	    {.name = "oversized override header", .method = "GET", .override = sfs, .reason = CSRF_METHOD_OVERRIDE},
	};
	RUN(rows);
	free(origin);
	free(referer);
	free(sfs);
	free(target);
	free(host);
}

/* ---- every truncated prefix of a field, on a guard page ---- */

typedef enum { F_ORIGIN, F_REFERER, F_SFS, F_TOKEN_HEADER, F_BODY, F_COOKIE, F_TARGET, F_CONTENT_TYPE, F_OVERRIDE } fld;

static csrf_slice *slot_of(csrf_request *req, fld f)
{
	switch (f) {
	case F_ORIGIN:
		return &req->origin;
	case F_REFERER:
		return &req->referer;
	case F_SFS:
		return &req->sec_fetch_site;
	case F_TOKEN_HEADER:
		return &req->token_header;
	case F_BODY:
		return &req->body;
	case F_COOKIE:
		return &req->cookie;
	case F_TARGET:
		return &req->target;
	case F_CONTENT_TYPE:
		return &req->content_type;
	case F_OVERRIDE:
		return &req->method_override;
	}
	return NULL;
}

/* Runs the row with field f cut to every length 0..full. A prefix
 * shorter than lo must give `below`, one of at least hi `above` (1:
 * allowed, 0: rejected); lengths in between may go either way. hi of 0
 * means the full length. The full row itself must be allowed. */
static void prefixes(const row *r, fld f, size_t lo, size_t hi, int below, int above)
{
	text t;
	csrf_request req;
	guards gd = {{0}, 0};
	make_text(r, &t);
	make_request(r, &t, &req, &gd);
	csrf_slice *slot = slot_of(&req, f);
	csrf_slice full = *slot;
	assert_non_null(full.ptr);
	if (!hi)
		hi = full.len;
	if (!lo)
		lo = full.len;
	int failed = 0;
	for (size_t len = 0; len <= full.len; len++) {
		char *p = tu_guard_copy(full.ptr, len);
		slot->ptr = p;
		slot->len = len;
		csrf_result res = csrf_check(g.ctx[r->cfg], &req);
		tu_guard_free(p);
		int want = len < lo ? below : len >= hi ? above : -1;
		if (want >= 0 && res.allowed != want) {
			print_error("%s: prefix of %zu of %zu bytes: allowed=%d (%s), want %d\n", r->name, len,
			            full.len, res.allowed, csrf_reason_name(res.reason), want);
			failed++;
		}
	}
	*slot = full;
	guards_free(&gd);
	assert_int_equal(failed, 0);
}

static void test_prefixes(void **state)
{
	(void)state;
	const row by_origin = {.name = "prefix: origin", .origin = "https://www.example.com"};
	prefixes(&by_origin, F_ORIGIN, 0, 0, 0, 1);
	const row by_sfs = {.name = "prefix: sec-fetch-site", .sfs = "same-origin"};
	prefixes(&by_sfs, F_SFS, 0, 0, 0, 1);
	const row by_referer = {.name = "prefix: referer", .referer = "https://www.example.com/form"};
	prefixes(&by_referer, F_REFERER, strlen("https://www.example.com"), 0, 0, 1);
	const row by_header = {.name = "prefix: token header", .sfs = "same-origin"};
	prefixes(&by_header, F_TOKEN_HEADER, 0, 0, 0, 1);
	const row by_unmasked = {.name = "prefix: unmasked token header", .sfs = "same-origin", .tok = T_UNMASKED};
	prefixes(&by_unmasked, F_TOKEN_HEADER, 0, 0, 0, 1);
	const row by_cookie = {.name = "prefix: secret cookie", .sfs = "same-origin", .secret = SEC_COOKIE};
	prefixes(&by_cookie, F_COOKIE, 0, 0, 0, 1);
	const row by_exempt = {.name = "prefix: exempt target", .target = "/api/hook", .sfs = "cross-site"};
	prefixes(&by_exempt, F_TARGET, 0, 0, 0, 1);
	const row by_form_ct = {.name = "prefix: urlencoded content type", .sfs = "same-origin", .where = W_FORM};
	prefixes(&by_form_ct, F_CONTENT_TYPE, 0, 0, 0, 1);
	const row by_mp_ct = {.name = "prefix: multipart content type", .sfs = "same-origin", .where = W_MULTIPART};
	prefixes(&by_mp_ct, F_CONTENT_TYPE, 0, 0, 0, 1);
	text t;
	/* allowed iff the parameter name is still shorter than "_method" */
	const row by_query = {
	    .name = "prefix: _method query", .method = "GET", .target = "/x?_method=DELETE", .sfs = "cross-site"};
	prefixes(&by_query, F_TARGET, strlen("/x?_method"), strlen("/x?_method"), 1, 0);

	/* Bodies: the token is the last field; a urlencoded prefix verifies
	 * only when whole, a multipart one never before its value ends. */
	char field[CSRF_FIELD_NAME_MAX + 1];
	must(csrf_field_name(g.ctx[C_DEFAULT], SECRET_A, field, sizeof field));
	const row by_form = {.name = "prefix: urlencoded body", .sfs = "same-origin", .where = W_FORM};
	make_text(&by_form, &t);
	assert_non_null(strstr(t.body, "&x=1"));
	prefixes(&by_form, F_BODY, strstr(t.body, "&x=1") - t.body, 0, 0, 1);
	const row by_multipart = {.name = "prefix: multipart body", .sfs = "same-origin", .where = W_MULTIPART};
	make_text(&by_multipart, &t);
	const char *value = strstr(t.body, g.tok[T_VALID]);
	assert_non_null(value);
	prefixes(&by_multipart, F_BODY, (size_t)(value - t.body) + CSRF_TOKEN_LEN + 1, 0, 0, 1);
}

/* The override header cut short never turns a GET safe. */
static void test_override_prefixes(void **state)
{
	(void)state;
	const row r = {.name = "prefix: override header", .method = "GET", .override = "DELETE", .sfs = "cross-site"};
	text t;
	csrf_request req;
	guards gd = {{0}, 0};
	make_text(&r, &t);
	make_request(&r, &t, &req, &gd);
	csrf_slice full = req.method_override;
	for (size_t len = 0; len <= full.len; len++) {
		char *p = tu_guard_copy(full.ptr, len);
		req.method_override = (csrf_slice){p, len};
		csrf_result res = csrf_check(g.ctx[C_DEFAULT], &req);
		int safe = csrf_request_is_safe(&req);
		tu_guard_free(p);
		assert_int_equal(res.allowed, 0);
		assert_int_equal(res.reason, len == 0 ? CSRF_METHOD_OVERRIDE : CSRF_CROSS_SITE);
		assert_int_equal(safe, 0);
	}
	guards_free(&gd);
}

/* ---- csrf_request_is_safe and bad arguments ---- */

typedef struct {
	const char *method;
	const char *override;
	const char *target;
	int safe;
} safe_row;

static const safe_row safe_rows[] = {
    {"GET", NULL, "/", 1},
    {"HEAD", NULL, "/", 1},
    {"OPTIONS", NULL, "/", 1},
    {"POST", NULL, "/", 0},
    {"TRACE", NULL, "/", 0},
    {"get", NULL, "/", 0},
    {"PUT", "GET", "/", 0},
    {"GET", "DELETE", "/", 0},
    {"GET", "GET", "/", 1},
    {"GET", "", "/", 0},
    {"GET", "D3L", "/", 0},
    {"GET", NULL, "/x?_method=PATCH", 0},
    {"GET", NULL, "/x?_method=OPTIONS", 1},
    {"HEAD", NULL, "/x?_method=", 0},
    {"GET", NULL, NULL, 1},
    {NULL, NULL, "/", 0},
};

static void test_is_safe(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof safe_rows / sizeof safe_rows[0]; i++) {
		const safe_row *s = &safe_rows[i];
		guards gd = {{0}, 0};
		csrf_request req;
		memset(&req, 0, sizeof req);
		req.method = gstr(&gd, s->method);
		req.method_override = gstr(&gd, s->override);
		req.target = gstr(&gd, s->target);
		int got = csrf_request_is_safe(&req);
		guards_free(&gd);
		if (got != s->safe)
			print_error("is_safe row %zu (%s): got %d\n", i, s->method ? s->method : "(absent)", got);
		assert_int_equal(got, s->safe);
	}
	assert_int_equal(csrf_request_is_safe(NULL), 0);
}

static void test_args(void **state)
{
	(void)state;
	csrf_request req;
	memset(&req, 0, sizeof req);
	csrf_result res = csrf_check(NULL, &req);
	assert_int_equal(res.allowed, 0);
	assert_int_equal(res.reason, CSRF_ERR_ARG);
	res = csrf_check(g.ctx[C_REPORT], NULL);
	assert_int_equal(res.allowed, 0);
	assert_int_equal(res.reason, CSRF_ERR_ARG);
	/* an all-absent request is unsafe and, over HTTPS, has no referer */
	res = csrf_check(g.ctx[C_DEFAULT], &req);
	assert_int_equal(res.allowed, 0);
	assert_int_equal(res.reason, CSRF_REFERER_MISSING);
	res = csrf_check(g.ctx[C_DJANGO], &req);
	assert_int_equal(res.allowed, 0);
	assert_int_equal(res.reason, CSRF_REFERER_MISSING);
	res = csrf_check(g.ctx[C_TOKEN], &req);
	assert_int_equal(res.allowed, 0);
	assert_int_equal(res.reason, CSRF_SECRET_MISSING);
}

/* A cookie that must come once (csrfi_request_cookie), read in one walk
 * of each line: the same answers as a lookup followed by a second one
 * from the end of the value found (what it was), at every edge of the
 * pair found (a closing quote, blanks, '=' inside the value), across
 * lines, and on a line with a control byte after the cookie. The value
 * is read only when the answer is CSRF_OK. */
static void test_request_cookie_once(void **state)
{
	(void)state;
	static const struct {
		const char *line1, *line2;
		csrf_reason want;
		const char *value;
	} rows[] = {
	    {"a=x", NULL, CSRF_OK, "x"},
	    {"a=\"x\"", NULL, CSRF_OK, "x"},
	    {"a=\"x\"; a=y", NULL, CSRF_COOKIE_AMBIGUOUS, NULL},
	    {"a=\"x\"  ;a=y", NULL, CSRF_COOKIE_AMBIGUOUS, NULL},
	    {"a=x=y; b=1", NULL, CSRF_OK, "x=y"},
	    {"a=x=a=y", NULL, CSRF_OK, "x=a=y"},
	    {"a=x ; b=a; c=\"a=1\"", NULL, CSRF_OK, "x"},
	    {" a = x ;a=", NULL, CSRF_COOKIE_AMBIGUOUS, NULL},
	    {"aa=1; a =2", NULL, CSRF_OK, "2"},
	    {"b=1; c", NULL, CSRF_NOT_FOUND, NULL},
	    {"", NULL, CSRF_NOT_FOUND, NULL},
	    {"a=x", "a=y", CSRF_COOKIE_AMBIGUOUS, NULL},
	    {"b=1", "a=y", CSRF_OK, "y"},
	    {"a=x; b=\x01", NULL, CSRF_SECRET_INVALID, NULL}, /* stands for MALFORMED below */
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		csrf_request req;
		csrf_request_init(&req);
		(void)csrf_request_header(&req, "Cookie", 6, rows[i].line1, strlen(rows[i].line1));
		if (rows[i].line2)
			(void)csrf_request_header(&req, "Cookie", 6, rows[i].line2, strlen(rows[i].line2));
		csrf_slice v;
		csrf_reason want = rows[i].want == CSRF_SECRET_INVALID ? CSRF_MALFORMED : rows[i].want;
		csrf_reason got = csrfi_request_cookie(&req, "a", 1, &v);
		if (got != want)
			fail_msg("row %zu: %s, want %s", i, csrf_reason_name(got), csrf_reason_name(want));
		if (rows[i].value) { /* read only when found */
			assert_int_equal(v.len, strlen(rows[i].value));
			assert_memory_equal(v.ptr, rows[i].value, v.len);
		}
	}
}

/* ---- the dead stack ----
 *
 * What csrf_check (the token in the header, in the body, bound to a
 * session) and csrf_page_prepare (the page's token and field name for the
 * same request) leave on the stack and in the registers once returned: no
 * 8 bytes of the user's secret, the key or its HMAC states (either byte
 * order; tu_dead_stack). The contexts, requests and tokens are made on
 * a thread of their own (tu_in_thread), so the call's thread starts with
 * none of it in its registers. */

enum dead_kind { DEAD_HEADER, DEAD_BODY, DEAD_SESSION, DEAD_PAGE, DEAD_PAGE_NEW };

typedef struct {
	enum dead_kind kind;
	int free;
	int ok;
	uint8_t key[CSRF_KEY_LEN], secret[CSRF_SECRET_LEN];
	uint32_t states[6][8];
	tu_secret s[8]; /* the user's secret, the key, its states */
	size_t n;
	csrf_ctx *ctx;
	csrf_request req;
	char cookie[CSRF_SECRET_COOKIE_LEN + 64];
	char token[CSRF_TOKEN_MAX_LEN + 1];
	char body[CSRF_FIELD_NAME_MAX + CSRF_TOKEN_MAX_LEN + 2];
	csrf_result res;
	csrf_reason page_r;
	csrf_page page;
} dead_check;

static void dead_bytes(uint8_t *b, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed ^= seed << 13, seed ^= seed >> 17, seed ^= seed << 5;
		b[i] = (uint8_t)(seed >> 11);
	}
}

static void dead_check_prepare(void *p)
{
	dead_check *d = p;
	if (d->free) {
		/* a new secret was read back from its cookie */
		d->ok = d->kind != DEAD_PAGE_NEW || !csrfi_key_is_zero(d->secret);
		csrf_page_wipe(&d->page);
		csrf_ctx_free(d->ctx);
		return;
	}
	d->ok = 0;
	dead_bytes(d->key, sizeof d->key, 0x9e3779b9u);
	dead_bytes(d->secret, sizeof d->secret, 0x7f4a7c15u);
	if (csrf_ctx_new(&d->ctx, NULL) != CSRF_OK || csrf_ctx_add_key(d->ctx, 7, d->key, 1) != CSRF_OK ||
	    csrf_ctx_set_self_origin(d->ctx, "https://www.example.com", 23) != CSRF_OK ||
	    csrf_ctx_set_secret_cookie(d->ctx, "csrf") != CSRF_OK ||
	    csrf_ctx_set_session_cookie(d->ctx, "sid") != CSRF_OK)
		return;
	csrf_ctx_set_mode(d->ctx, CSRF_MODE_TOKEN);
	const char *sid = d->kind == DEAD_SESSION ? "session-a" : "";
	char value[CSRF_SECRET_COOKIE_LEN + 1], field[CSRF_FIELD_NAME_MAX + 1];
	if (csrf_secret_cookie_encode(d->ctx, d->secret, value, sizeof value) != CSRF_OK ||
	    csrf_token_issue(d->ctx, d->secret, sid, strlen(sid), NOW, d->token, sizeof d->token) != CSRF_OK ||
	    csrf_field_name(d->ctx, d->secret, field, sizeof field) != CSRF_OK)
		return;
	snprintf(d->cookie, sizeof d->cookie, "csrf=%s%s%s", value, *sid ? "; sid=" : "", sid);
	snprintf(d->body, sizeof d->body, "%s=%s", field, d->token);
	csrf_request *r = &d->req;
	csrf_request_init(r);
	r->method = d->kind >= DEAD_PAGE ? (csrf_slice){"GET", 3} : (csrf_slice){"POST", 4};
	r->target = (csrf_slice){"/x", 2};
	r->scheme = (csrf_slice){"https", 5};
	r->now = NOW;
	if (d->kind != DEAD_PAGE_NEW)
		r->cookie = (csrf_slice){d->cookie, strlen(d->cookie)};
	else
		memset(d->secret, 0, sizeof d->secret); /* the page's own, read back by dead_page_secret */
	if (d->kind == DEAD_BODY) {
		r->content_type = (csrf_slice){"application/x-www-form-urlencoded", 33};
		r->body = (csrf_slice){d->body, strlen(d->body)};
	} else {
		r->token_header = (csrf_slice){d->token, strlen(d->token)};
	}
	d->n = 0;
	d->s[d->n++] = (tu_secret){d->secret, sizeof d->secret};
	d->s[d->n++] = (tu_secret){d->key, sizeof d->key};
#if CSRFI_SHA256_BLOCK
	const csrfi_key_slot *slot = &d->ctx->ring.keys[0];
	const csrfi_mac_key *k[] = {&slot->mac, &slot->tag_mac, &slot->cookie_mac};
	for (size_t i = 0; i < 3; i++) {
		for (unsigned j = 0; j < 8; j++) {
			d->states[2 * i][j] = csrfi_sha256_word(&k[i]->inner, j);
			d->states[2 * i + 1][j] = csrfi_sha256_word(&k[i]->outer, j);
		}
		d->s[d->n++] = (tu_secret){d->states[2 * i], sizeof d->states[0]};
		d->s[d->n++] = (tu_secret){d->states[2 * i + 1], sizeof d->states[0]};
	}
#endif
	d->ok = 1;
}

/* The secret a page made, from its Set-Cookie ("csrf=" and the value):
 * into d->secret, the material looked for. */
static void dead_page_secret(void *p)
{
	dead_check *d = p;
	const char *v = d->page.set_cookie + 5;
	if (strncmp(d->page.set_cookie, "csrf=", 5) != 0 ||
	    csrf_secret_cookie_decode(d->ctx, v, strcspn(v, ";"), d->secret) != CSRF_OK)
		memset(d->secret, 0, sizeof d->secret);
}

static void dead_check_run(void *p)
{
	dead_check *d = p;
	if (d->kind >= DEAD_PAGE)
		d->page_r = csrf_page_prepare(d->ctx, &d->req, &d->page);
	else
		d->res = csrf_check(d->ctx, &d->req);
}

static void test_dead_stack(void **state)
{
	(void)state;
	static const char *const names[] = {"header token", "body token", "header token, session", "page",
	                                    "page, a new secret"};
	static dead_check d;
	size_t failed = 0;
	for (int kind = DEAD_HEADER; kind <= DEAD_PAGE_NEW; kind++) {
		memset(&d, 0, sizeof d);
		d.kind = (enum dead_kind)kind;
		tu_in_thread(dead_check_prepare, &d);
		assert_true(d.ok);
		failed += (size_t)tu_dead_stack_found(names[kind], dead_check_run, &d,
		                                      kind == DEAD_PAGE_NEW ? dead_page_secret : NULL, d.s, d.n);
		if (kind >= DEAD_PAGE) {
			assert_int_equal(d.page_r, CSRF_OK);
			/* the request's secret, or (no cookie) a new one */
			assert_int_equal(d.page.set_cookie_len != 0, kind == DEAD_PAGE_NEW);
		} else {
			assert_int_equal(d.res.reason, CSRF_OK);
			assert_true(d.res.allowed);
		}
		d.free = 1;
		tu_in_thread(dead_check_prepare, &d);
		assert_true(d.ok);
	}
	assert_int_equal(failed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_go),
	    cmocka_unit_test(test_go_adding_bypasses),
	    cmocka_unit_test(test_django),
	    cmocka_unit_test(test_methods),
	    cmocka_unit_test(test_exemptions),
	    cmocka_unit_test(test_origin_stage),
	    cmocka_unit_test(test_modes),
	    cmocka_unit_test(test_unsafe_get),
	    cmocka_unit_test(test_null_origin),
	    cmocka_unit_test(test_spellings),
	    cmocka_unit_test(test_token_stage),
	    cmocka_unit_test(test_oversized),
	    cmocka_unit_test(test_prefixes),
	    cmocka_unit_test(test_override_prefixes),
	    cmocka_unit_test(test_is_safe),
	    cmocka_unit_test(test_args),
	    cmocka_unit_test(test_websocket),
	    cmocka_unit_test(test_websocket_lines),
	    cmocka_unit_test(test_websocket_prefixes),
	    cmocka_unit_test(test_request_cookie_once),
	    cmocka_unit_test(test_dead_stack),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
