/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * response.c - the response half of the protocol, one exchange for every
 * adapter (csrf.h, "The response exchange"): which responses get tokens,
 * the charset prescan held in the state, what becomes of each upstream
 * header and which headers come, the injector fed and ended, and the log
 * line. The decisions the adapters share (the mode that injects, the
 * status of a rejection, its answer) are here too.
 */
#include <stdalign.h>

#include "internal.h"

#define CT_MAX 512

typedef enum { ST_HOLD = 0, ST_PASS, ST_INJECT, ST_ENDED } state;

struct csrf_response {
	const csrf_ctx *ctx;
	state st;
	csrf_reason failed; /* why the page could not be prepared (CSRF_OK: it was) */
	unsigned inject_status;
	unsigned injected; /* csrf_inject_finish's count, at the end */
	size_t ct_len;
	int ct_absent;
	int ct_long;
	csrf_charset cs;
	char ct[CT_MAX];
	char held[CSRF_CHARSET_PRESCAN_MAX];
	size_t held_len;
	csrf_page page;
	char csp[CSRF_RESPONSE_CSP_MAX];
	csrf_inject *inj;
	alignas(max_align_t) unsigned char inj_mem[CSRF_INJECT_STATE_MAX];
};

_Static_assert(sizeof(struct csrf_response) <= CSRF_RESPONSE_STATE_MAX, "response state over its bound");

/* ---- decisions ---- */

CSRF_API int csrf_ctx_injects(const csrf_ctx *ctx)
{
	return ctx != NULL && ctx->mode != CSRF_MODE_ORIGIN;
}

CSRF_API unsigned csrf_reason_http_status(csrf_reason reason, unsigned deny_status)
{
	if (csrf_reason_allows(reason))
		return 0;
	if (reason == CSRF_BODY_TOO_LARGE)
		return 413;
	if ((unsigned)reason >= 64)
		return 500;
	return deny_status >= 400 && deny_status <= 599 ? deny_status : 403;
}

CSRF_API void csrf_ctx_set_form_action_csp(csrf_ctx *ctx, int on)
{
	if (ctx)
		ctx->form_action_csp = on != 0;
}

CSRF_API void csrf_ctx_set_referrer_same_origin(csrf_ctx *ctx, int on)
{
	if (ctx)
		ctx->referrer_same_origin = on != 0;
}

/* ---- the exchange ---- */

CSRF_API csrf_response_verdict csrf_response_begin(const csrf_ctx *ctx, const char *method, size_t method_len,
                                                   unsigned status, const char *content_type, size_t ct_len,
                                                   const char *content_encoding, size_t ce_len)
{
	if (!csrf_ctx_injects(ctx) || (method && csrfi_slice_ieq((csrf_slice){method, method_len}, "HEAD")))
		return CSRF_RESPONSE_PASS;
	if (csrf_response_injectable(status, content_type, ct_len, content_encoding, ce_len))
		return CSRF_RESPONSE_INJECT;
	if (content_encoding && csrf_response_injectable(status, content_type, ct_len, NULL, 0))
		return CSRF_RESPONSE_COMPRESSED;
	return CSRF_RESPONSE_PASS;
}

CSRF_API size_t csrf_response_size(void)
{
	return sizeof(struct csrf_response);
}

CSRF_API csrf_reason csrf_response_init(void *mem, size_t mem_len, const csrf_ctx *ctx, const char *content_type,
                                        size_t ct_len, csrf_response **out)
{
	if (out)
		*out = NULL;
	if (!mem || !out || !ctx || mem_len < sizeof(struct csrf_response) || (!content_type && ct_len > 0) ||
	    (uintptr_t)mem % alignof(struct csrf_response) != 0)
		return CSRF_ERR_ARG;
	csrf_response *resp = mem;
	/* the scalars; the buffers are written before they are read */
	memset(resp, 0, offsetof(struct csrf_response, ct));
	resp->held_len = 0;
	resp->inj = NULL;
	resp->page.set_cookie_len = 0;
	resp->page.token[0] = '\0';
	resp->ctx = ctx;
	resp->st = ST_HOLD;
	resp->ct_absent = content_type == NULL;
	if (ct_len > CT_MAX) {
		resp->ct_long = 1;
	} else if (ct_len) {
		memcpy(resp->ct, content_type, ct_len);
		resp->ct_len = ct_len;
	}
	*out = resp;
	return CSRF_OK;
}

CSRF_API csrf_charset_verdict csrf_response_hold(csrf_response *resp, const char *chunk, size_t len, int complete,
                                                 size_t *used)
{
	if (used)
		*used = 0;
	if (!resp || (!chunk && len > 0))
		return CSRF_CHARSET_PASS;
	if (resp->st != ST_HOLD)
		return resp->st == ST_PASS ? CSRF_CHARSET_PASS : CSRF_CHARSET_INJECT;
	size_t n = len < sizeof resp->held - resp->held_len ? len : sizeof resp->held - resp->held_len;
	if (n) {
		memcpy(resp->held + resp->held_len, chunk, n);
		resp->held_len += n;
	}
	if (used)
		*used = n;
	if (n < len)
		complete = 0; /* more follows in this chunk: the held bytes are all the prescan reads */
	if (resp->ct_long) {
		resp->cs.verdict = CSRF_CHARSET_PASS;
		resp->cs.encoding = NULL;
		resp->cs.source = "Content-Type, longer than the library reads";
	} else if (csrf_charset_sniff(resp->ct_absent ? NULL : resp->ct, resp->ct_len, resp->held, resp->held_len,
	                              complete, &resp->cs) != CSRF_OK) {
		resp->cs.verdict = CSRF_CHARSET_PASS;
		resp->cs.encoding = NULL;
		resp->cs.source = "page, which could not be judged";
	}
	if (resp->cs.verdict == CSRF_CHARSET_MORE)
		return CSRF_CHARSET_MORE;
	resp->st = resp->cs.verdict == CSRF_CHARSET_INJECT ? ST_INJECT : ST_PASS;
	return resp->cs.verdict;
}

CSRF_API csrf_slice csrf_response_held(const csrf_response *resp)
{
	if (!resp)
		return (csrf_slice){NULL, 0};
	return (csrf_slice){resp->held, resp->held_len};
}

/* A header's name is lit: lengths first, most names differ there. */
#define named(h, lit) ((h)->name.len == sizeof(lit) - 1 && (h)->name.ptr && csrfi_slice_ieq((h)->name, lit))

/* Headers an injected page loses: its length and validators change, and
 * no range of it is served. */
static int changes_with_body(const csrf_header *h)
{
	return named(h, "Content-Length") || named(h, "ETag") || named(h, "Last-Modified") || named(h, "Accept-Ranges");
}

static void push(csrf_header *add, size_t *n_add, const char *name, const char *value, size_t len)
{
	add[*n_add].name = (csrf_slice){name, strlen(name)};
	add[*n_add].value = (csrf_slice){value, len};
	(*n_add)++;
}

/* The form-action policy into the state: merged into the first upstream
 * Content-Security-Policy (its index in *merged), or alone (*merged = n)
 * when there is none, or the library does not merge its value, or the
 * merge is longer than the state holds (the browser enforces both). */
static csrf_reason policy(csrf_response *resp, const csrf_header *headers, size_t n, size_t *merged, size_t *len)
{
	size_t i;
	for (i = 0; i < n && !named(&headers[i], "Content-Security-Policy"); i++)
		;
	*merged = i;
	if (i < n && csrfi_csp_form_action_ctx(resp->ctx, headers[i].value.ptr, headers[i].value.len, resp->csp,
	                                       sizeof resp->csp, len) == CSRF_OK)
		return CSRF_OK;
	*merged = n;
	return csrfi_csp_form_action_ctx(resp->ctx, NULL, 0, resp->csp, sizeof resp->csp, len);
}

static csrf_reason headers_fail(csrf_response *resp, csrf_reason r)
{
	csrf_page_wipe(&resp->page);
	resp->failed = r == CSRF_OK ? CSRF_ERR_INTERNAL : r;
	resp->st = ST_PASS;
	return resp->failed;
}

CSRF_API csrf_reason csrf_response_headers(csrf_response *resp, csrf_request *req, const csrf_header *headers, size_t n,
                                           unsigned char *action, csrf_slice *value, csrf_header *add, size_t *n_add)
{
	if (n_add)
		*n_add = 0;
	if (!resp || !req || !add || !n_add || (n > 0 && (!headers || !action || !value)))
		return CSRF_ERR_ARG;
	for (size_t i = 0; i < n; i++) {
		action[i] = CSRF_HEADER_KEEP;
		value[i] = (csrf_slice){NULL, 0};
	}
	if (resp->st != ST_INJECT)
		return resp->st == ST_HOLD ? CSRF_ERR_ARG : headers_fail(resp, CSRF_ERR_ARG);

	/* The application's Set-Cookie: a page that logs a user in gets
	 * tokens for the new session. */
	for (size_t i = 0; i < n; i++)
		if (named(&headers[i], "Set-Cookie") && headers[i].value.ptr)
			csrf_response_cookie(resp->ctx, req, headers[i].value.ptr, headers[i].value.len);

	/* The cache rule, written as drops into action. */
	csrf_slice cache = {NULL, 0};
	csrf_reason r = csrf_response_cache(headers, n, action, &cache);
	if (r != CSRF_OK) {
		for (size_t i = 0; i < n; i++)
			action[i] = CSRF_HEADER_KEEP;
		return headers_fail(resp, r);
	}

	size_t merged = n, csp_len = 0;
	if (resp->ctx->form_action_csp) {
		r = policy(resp, headers, n, &merged, &csp_len);
		if (r != CSRF_OK) {
			for (size_t i = 0; i < n; i++)
				action[i] = CSRF_HEADER_KEEP;
			return headers_fail(resp, r);
		}
	}

	/* the site's origin goes to the injector as parsed (csrf_page_prepare
	 * would format it, csrf_inject_init parse it again) */
	csrfi_site site;
	r = csrfi_page_prepare(resp->ctx, req, &resp->page, &site);
	if (r == CSRF_OK)
		r = csrfi_inject_init_self(resp->inj_mem, sizeof resp->inj_mem, site.known ? &site.self : NULL,
		                           resp->page.field, strlen(resp->page.field), resp->page.token,
		                           strlen(resp->page.token), &resp->inj);
	if (r == CSRF_OK && resp->ctx->referrer_same_origin)
		r = csrf_inject_options(resp->inj, CSRF_INJECT_OPT_RAISE_REFERRER);
	if (r != CSRF_OK) {
		for (size_t i = 0; i < n; i++)
			action[i] = CSRF_HEADER_KEEP;
		return headers_fail(resp, r);
	}
	/* the injector keeps its own copy of the token */
	csrfi_wipe(resp->page.token, sizeof resp->page.token);

	for (size_t i = 0; i < n; i++) {
		if (changes_with_body(&headers[i]))
			action[i] = CSRF_HEADER_DROP;
		if (i == merged) {
			action[i] = CSRF_HEADER_REPLACE;
			value[i] = (csrf_slice){resp->csp, csp_len};
		}
	}
	if (resp->page.set_cookie_len)
		push(add, n_add, "Set-Cookie", resp->page.set_cookie, resp->page.set_cookie_len);
	push(add, n_add, "Vary", "Cookie", 6);
	if (cache.ptr)
		push(add, n_add, "Cache-Control", cache.ptr, cache.len);
	if (resp->ctx->form_action_csp && merged == n)
		push(add, n_add, "Content-Security-Policy", resp->csp, csp_len);
	return CSRF_OK;
}

CSRF_API csrf_reason csrf_response_feed(csrf_response *resp, const char *chunk, size_t len, csrf_emit_fn emit, void *ud)
{
	if (!resp || resp->st != ST_INJECT || !resp->inj)
		return CSRF_ERR_ARG;
	return csrf_inject_feed(resp->inj, chunk, len, emit, ud);
}

CSRF_API csrf_reason csrf_response_end(csrf_response *resp, csrf_emit_fn emit, void *ud, unsigned *status)
{
	unsigned injected = 0;
	if (status)
		*status = 0;
	if (!resp || resp->st != ST_INJECT || !resp->inj)
		return CSRF_ERR_ARG;
	csrf_reason r = csrf_inject_finish(resp->inj, emit, ud, &injected);
	resp->injected = injected;
	resp->inject_status = csrf_inject_status(resp->inj);
	if (status)
		*status = resp->inject_status;
	resp->st = ST_ENDED;
	csrf_response_wipe(resp);
	return r;
}

CSRF_API void csrf_metrics_count_response(csrf_metrics *m, csrf_response_verdict verdict, const csrf_response *resp)
{
	if (!m)
		return;
	if (verdict == CSRF_RESPONSE_COMPRESSED) {
		csrf_metrics_count_passed(m, CSRF_METRICS_PASS_ENCODING);
		return;
	}
	if (verdict != CSRF_RESPONSE_INJECT || !resp)
		return;
	if (resp->st == ST_ENDED)
		csrf_metrics_count_page(m, resp->injected, resp->inject_status);
	else if (resp->st == ST_PASS)
		csrf_metrics_count_passed(m, resp->failed == CSRF_OK ? CSRF_METRICS_PASS_CHARSET
		                                                     : CSRF_METRICS_PASS_ERROR);
	/* ST_HOLD, ST_INJECT: the response stopped before its end (a client
	 * gone, an error): nothing to count */
}

typedef struct {
	char *out;
	size_t cap, len;
} text;

static void say(text *t, const char *s)
{
	size_t n = strlen(s);
	if (t->cap == 0)
		return;
	if (n > t->cap - 1 - t->len)
		n = t->cap - 1 - t->len;
	memcpy(t->out + t->len, s, n);
	t->len += n;
	t->out[t->len] = '\0';
}

CSRF_API size_t csrf_response_log(const csrf_response *resp, char *out, size_t cap)
{
	text t = {out, out ? cap : 0, 0};
	if (t.cap)
		out[0] = '\0';
	if (!resp)
		return 0;
	if (resp->st == ST_PASS && resp->failed != CSRF_OK) {
		say(&t, "no tokens: the page could not be prepared (");
		say(&t, csrf_reason_name(resp->failed));
		say(&t, "), passed through untouched");
	} else if (resp->st == ST_PASS) {
		say(&t, "no tokens: its charset (");
		say(&t, resp->cs.encoding ? resp->cs.encoding : "an unknown label");
		say(&t, ", from the ");
		say(&t, resp->cs.source ? resp->cs.source : "body");
		say(&t, ") is not one the injector reads, passed through untouched");
	} else if (resp->st == ST_ENDED && resp->inject_status) {
		say(&t, "not every form got a token: ");
		int first = 1;
		for (unsigned bit = 1; bit; bit <<= 1) {
			if (!(resp->inject_status & bit))
				continue;
			if (!first)
				say(&t, "; ");
			say(&t, csrf_inject_status_str(bit));
			first = 0;
		}
	}
	return t.len;
}

CSRF_API void csrf_response_wipe(csrf_response *resp)
{
	if (!resp)
		return;
	csrf_page_wipe(&resp->page);
	if (resp->inj) {
		/* the injector's copy of the token */
		csrfi_inject_wipe(resp->inj);
		resp->inj = NULL;
	}
}
