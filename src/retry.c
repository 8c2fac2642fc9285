/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * retry.c - the self-healing retry, off by default: after a rejection for
 * a stale token, a fresh token for the same session, which the adapter
 * puts into its 403 (the page and an X-CSRF-Token header) so a script of
 * the site's own page can retry once.
 *
 * Why it is safe only this narrowly. A token in a response is as good as
 * the reader of that response: the browser lets only the request's own
 * origin read it, so the request must carry the browser's own proof that
 * it came from the site's own page (Sec-Fetch-Site: same-origin, or
 * without fetch metadata an Origin equal to the site's), never a trusted
 * other origin, a Referer or the absence of evidence. The client's secret
 * must already be valid: a new secret (or cookie) is never minted here,
 * so a missing, planted, forged or expired cookie gets no token. And only
 * the token itself may be stale (expired, another session of this
 * secret, an earlier secret, a retired key): a request with no token at
 * all, or a rejection by the origin stage, gets nothing.
 */
#include "internal.h"

CSRF_API void csrf_ctx_set_retry_token(csrf_ctx *ctx, int on)
{
	if (ctx)
		ctx->retry_token = on != 0;
}

static int stale_token(csrf_reason r)
{
	return r == CSRF_TOKEN_EXPIRED || r == CSRF_TOKEN_SESSION || r == CSRF_TOKEN_INVALID || r == CSRF_UNKNOWN_KEY;
}

/* The browser's own proof that req came from a page of the site itself. */
static int same_origin_proof(const csrf_ctx *ctx, const csrf_request *req)
{
	csrf_slice sfs = csrfi_trim(req->sec_fetch_site);
	if (sfs.ptr)
		return !(req->repeated & CSRF_HDR_FETCH_SITE) && csrfi_slice_ieq(sfs, "same-origin");
	csrf_slice origin = csrfi_trim(req->origin);
	if (!origin.ptr || (req->repeated & CSRF_HDR_ORIGIN))
		return 0;
	csrfi_site site;
	csrf_origin o;
	csrfi_site_of(ctx, req, &site);
	return site.known && csrf_origin_parse(origin.ptr, origin.len, &o) == CSRF_OK &&
	       csrf_origin_equal(&o, &site.self);
}

CSRF_API csrf_reason csrf_retry_prepare(const csrf_ctx *ctx, const csrf_request *req, csrf_reason rejected,
                                        csrf_page *out)
{
	if (!out)
		return CSRF_ERR_ARG;
	memset(out, 0, sizeof *out);
	if (!ctx || !req)
		return CSRF_ERR_ARG;
	if (!ctx->retry_token || ctx->mode == CSRF_MODE_ORIGIN || !stale_token(rejected) ||
	    !same_origin_proof(ctx, req))
		return CSRF_NOT_FOUND;
	uint8_t secret[CSRF_SECRET_LEN];
	csrf_reason r = csrfi_request_secret(ctx, req, csrfi_site_https(ctx, req), secret);
	csrfi_wipe(secret, sizeof secret);
	if (r != CSRF_OK) {
		csrfi_wipe_regs();
		return CSRF_NOT_FOUND;
	}
	r = csrf_page_prepare(ctx, req, out);
	if (r == CSRF_OK && out->set_cookie_len != 0)
		r = CSRF_ERR_INTERNAL; /* the secret was valid a moment ago: never hand out a new one */
	if (r != CSRF_OK)
		csrf_page_wipe(out);
	return r;
}
