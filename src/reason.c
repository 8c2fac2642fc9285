/* SPDX-License-Identifier: BSD-2-Clause */
/* reason.c - the names and phrases of the stable csrf_reason codes. */
#include "internal.h"

typedef struct {
	csrf_reason code;
	const char *name;
	const char *phrase;
} reason_row;

static const reason_row rows[] = {
    {CSRF_OK, "ok", "ok"},
    {CSRF_SAFE_METHOD, "safe_method", "safe method"},
    {CSRF_EXEMPT, "exempt", "exempt path"},
    {CSRF_ORIGIN_VERIFIED, "origin_verified", "origin verified"},
    {CSRF_CROSS_SITE, "cross_site", "cross-site request"},
    {CSRF_SAME_SITE, "same_site", "same-site request from another origin"},
    {CSRF_FETCH_SITE_MALFORMED, "fetch_site_malformed", "malformed Sec-Fetch-Site"},
    {CSRF_ORIGIN_MISMATCH, "origin_mismatch", "origin mismatch"},
    {CSRF_NULL_ORIGIN, "null_origin", "null origin"},
    {CSRF_ORIGIN_MALFORMED, "origin_malformed", "malformed origin"},
    {CSRF_REFERER_MISSING, "referer_missing", "referer missing"},
    {CSRF_REFERER_MALFORMED, "referer_malformed", "malformed referer"},
    {CSRF_REFERER_INSECURE, "referer_insecure", "insecure referer"},
    {CSRF_REFERER_MISMATCH, "referer_mismatch", "referer mismatch"},
    {CSRF_NO_EVIDENCE, "no_evidence", "no same-origin evidence"},
    {CSRF_METHOD_OVERRIDE, "method_override", "invalid method override"},
    {CSRF_WEBSOCKET_ORIGIN, "websocket_origin", "WebSocket from another origin"},
    {CSRF_TOKEN_MISSING, "token_missing", "token missing"},
    {CSRF_TOKEN_MALFORMED, "token_malformed", "malformed token"},
    {CSRF_TOKEN_INVALID, "token_invalid", "invalid token"},
    {CSRF_TOKEN_EXPIRED, "token_expired", "token expired"},
    {CSRF_TOKEN_SESSION, "token_session", "token from another session"},
    {CSRF_UNKNOWN_KEY, "unknown_key", "unknown key"},
    {CSRF_SECRET_MISSING, "secret_missing", "secret cookie missing"},
    {CSRF_SECRET_INVALID, "secret_invalid", "invalid secret cookie"},
    {CSRF_REAUTH_REQUIRED, "reauth_required", "re-authentication required"},
    {CSRF_REAUTH_FAILED, "reauth_failed", "re-authentication failed"},
    {CSRF_LOCKED_OUT, "locked_out", "locked out"},
    {CSRF_BODY_TOO_LARGE, "body_too_large", "body too large"},
    {CSRF_BODY_MALFORMED, "body_malformed", "malformed body"},
    {CSRF_HEADER_TOO_LARGE, "header_too_large", "header too large"},
    {CSRF_HOST_MISSING, "host_missing", "host missing"},
    {CSRF_STORE_UNAVAILABLE, "store_unavailable", "store unavailable"},
    {CSRF_COOKIE_AMBIGUOUS, "cookie_ambiguous", "cookie sent twice"},
    {CSRF_SECRET_EXPIRED, "secret_expired", "secret cookie expired"},
    {CSRF_STORE_FULL, "store_full", "store full"},
    {CSRF_ERR_ARG, "err_arg", "invalid argument"},
    {CSRF_ERR_NOMEM, "err_nomem", "out of memory"},
    {CSRF_ERR_BUFFER, "err_buffer", "buffer too small"},
    {CSRF_ERR_CONFIG, "err_config", "configuration error"},
    {CSRF_ERR_IO, "err_io", "input/output error"},
    {CSRF_ERR_RANDOM, "err_random", "the kernel's random generator (getrandom) failed"},
    {CSRF_NOT_FOUND, "not_found", "not found"},
    {CSRF_MALFORMED, "malformed", "malformed input"},
    {CSRF_TOO_LARGE, "too_large", "input too large"},
    {CSRF_ERR_INTERNAL, "err_internal", "internal error"},
    {CSRF_ERR_STOPPED, "err_stopped", "stopped by the caller"},
};

static const reason_row *find(csrf_reason r)
{
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		if (rows[i].code == r)
			return &rows[i];
	return NULL;
}

CSRF_API const char *csrf_reason_str(csrf_reason r)
{
	const reason_row *row = find(r);
	return row ? row->phrase : "unknown reason";
}

CSRF_API const char *csrf_reason_name(csrf_reason r)
{
	const reason_row *row = find(r);
	return row ? row->name : "unknown";
}

CSRF_API int csrf_reason_allows(csrf_reason r)
{
	return (int)r >= 0 && (int)r < 16 && find(r) != NULL;
}
