/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * page.c - what a response page needs from the library in one call: the
 * hidden field's name, a fresh masked token, the site's origin for the
 * injector and, in the stateless variant, the Set-Cookie value of a new
 * signed secret when the client has no valid one (read by the rules
 * csrf_check reads it with).
 */
#include "internal.h"

/* The secret of the page: the caller's, the valid cookie's, or a new one
 * (*fresh set, its cookie to be sent). */
static csrf_reason page_secret(const csrf_ctx *ctx, const csrf_request *req, const csrfi_site *site,
                               uint8_t secret[CSRF_SECRET_LEN], int *fresh)
{
	*fresh = 0;
	csrf_reason r = csrfi_request_secret(ctx, req, site->https, secret);
	if (r == CSRF_OK)
		return CSRF_OK;
	/* None, two, forged, expired or of a retired key: a new secret. */
	*fresh = 1;
	return csrf_secret_new(secret);
}

static csrf_reason page_cookie(const csrf_ctx *ctx, const csrf_request *req, const csrfi_site *site,
                               const uint8_t secret[CSRF_SECRET_LEN], csrf_page *out)
{
	char value[CSRF_SECRET_COOKIE_LEN + 1];
	char name[CSRF_SECRET_COOKIE_NAME_MAX];
	csrf_reason r = csrfi_secret_cookie_encode_at(ctx, secret, req->now, value, sizeof value);
	if (r != CSRF_OK)
		return r;
	size_t nlen = csrfi_secret_cookie_name(ctx, site->https, name, sizeof name);
	csrf_cookie_opts opts = {0};
	opts.secure = site->https;
	opts.http_only = 1;
	opts.same_site = CSRF_SAMESITE_LAX;
	opts.max_age = ctx->max_age;
	const char *bare = name;
	if (nlen > sizeof CSRF_HOST_PREFIX - 1 && memcmp(name, CSRF_HOST_PREFIX, sizeof CSRF_HOST_PREFIX - 1) == 0) {
		/* csrf_set_cookie_build writes the prefix itself */
		opts.host_prefix = 1;
		bare = name + sizeof CSRF_HOST_PREFIX - 1;
	}
	r = csrf_set_cookie_build(bare, value, CSRF_SECRET_COOKIE_LEN, &opts, out->set_cookie, sizeof out->set_cookie,
	                          &out->set_cookie_len);
	csrfi_wipe(value, sizeof value);
	return r == CSRF_OK ? CSRF_OK : r == CSRF_ERR_BUFFER ? CSRF_ERR_INTERNAL : CSRF_ERR_CONFIG;
}

csrf_reason csrfi_page_prepare(const csrf_ctx *ctx, const csrf_request *req, csrf_page *out, csrfi_site *site_out)
{
	uint8_t secret[CSRF_SECRET_LEN];
	csrfi_site local;
	csrfi_site *site = site_out ? site_out : &local;
	csrf_slice sid;
	char sid_buf[CSRF_SESSION_BIND_LEN + 1];
	int fresh;

	if (!out)
		return CSRF_ERR_ARG;
	memset(out, 0, sizeof *out);
	if (!ctx || !req)
		return CSRF_ERR_ARG;

	csrfi_site_of(ctx, req, site);
	/* The caller that takes the site (response.c) hands its parsed origin
	 * to the injector: no string formatted here to be parsed there. */
	if (site->known && !site_out)
		out->origin_len = csrfi_origin_format(&site->self, out->origin, sizeof out->origin);

	csrf_reason r = page_secret(ctx, req, site, secret, &fresh);
	if (r != CSRF_OK)
		goto out;
	if (csrfi_request_session(ctx, req, &sid, sid_buf) != CSRF_OK) {
		/* Two session cookies: the token is bound to none; the check
		 * rejects the request as ambiguous anyway. */
		sid.ptr = "";
		sid.len = 0;
	}
	if (fresh) {
		r = page_cookie(ctx, req, site, secret, out);
		if (r != CSRF_OK)
			goto out;
	}
	r = csrfi_field_name(ctx, secret, out->field, sizeof out->field);
	if (r == CSRF_OK)
		r = csrfi_token_issue(ctx, secret, sid.ptr, sid.len, req->now, out->token, sizeof out->token);
out:
	csrfi_wipe(secret, sizeof secret);
	csrfi_wipe(sid_buf, sizeof sid_buf);
	if (r != CSRF_OK)
		csrf_page_wipe(out);
	csrfi_wipe_regs();
	return r;
}

CSRF_API csrf_reason csrf_page_prepare(const csrf_ctx *ctx, const csrf_request *req, csrf_page *out)
{
	return csrfi_page_prepare(ctx, req, out, NULL);
}

CSRF_API int csrf_response_injectable(unsigned status, const char *content_type, size_t ct_len,
                                      const char *content_encoding, size_t ce_len)
{
	if (status < 200 || status == 204 || status == 206 || (status >= 300 && status < 400) || status > 599)
		return 0;
	if (!content_type)
		return 0;
	csrf_slice ct = csrfi_trim((csrf_slice){content_type, ct_len});
	const char *semi = memchr(ct.ptr, ';', ct.len);
	csrf_slice mt = csrfi_trim((csrf_slice){ct.ptr, semi ? (size_t)(semi - ct.ptr) : ct.len});
	if (!csrfi_slice_ieq(mt, "text/html"))
		return 0;
	csrf_slice ce = csrfi_trim((csrf_slice){content_encoding, ce_len});
	return !content_encoding || ce.len == 0 || csrfi_slice_ieq(ce, "identity");
}

CSRF_API void csrf_page_wipe(csrf_page *page)
{
	if (page)
		csrfi_wipe(page, sizeof *page);
}
