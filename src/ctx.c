/* SPDX-License-Identifier: BSD-2-Clause */
/* ctx.c - the context: creation, configuration setters, the validation of
 * configured origins (with messages an operator can act on), and the
 * allocator every configuration-time allocation goes through. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void *csrfi_alloc(const csrf_ctx *ctx, size_t n)
{
	return ctx->alloc.alloc(n ? n : 1, ctx->alloc.ud);
}

void csrfi_free(const csrf_ctx *ctx, void *p)
{
	if (p)
		ctx->alloc.free(p, ctx->alloc.ud);
}

csrf_reason csrfi_config_error(csrf_ctx *ctx, csrf_reason code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ctx->err, sizeof ctx->err, fmt, ap);
	va_end(ap);
	return code;
}

CSRF_API csrf_reason csrf_ctx_new(csrf_ctx **out, const csrf_allocator *alloc)
{
	if (!out)
		return CSRF_ERR_ARG;
	*out = NULL;
	csrf_allocator a = csrfi_default_allocator;
	if (alloc) {
		if (!alloc->alloc || !alloc->free)
			return CSRF_ERR_ARG;
		a = *alloc;
	}
	csrf_ctx *ctx = a.alloc(sizeof *ctx, a.ud);
	if (!ctx)
		return CSRF_ERR_NOMEM;
	memset(ctx, 0, sizeof *ctx);
	ctx->alloc = a;
	ctx->mode = CSRF_MODE_BOTH;
	ctx->allow_fetch_none = 1;
	ctx->reauth_max_failures = 5;
	ctx->reauth_lockout = 900;
	ctx->reauth_window = 300;
	memcpy(ctx->secret_cookie, CSRF_DEFAULT_SECRET_COOKIE, sizeof CSRF_DEFAULT_SECRET_COOKIE);
	ctx->body_max = CSRF_DEFAULT_BODY_MAX;
	if (pthread_rwlock_init(&ctx->ring_lock, NULL) != 0) {
		a.free(ctx, a.ud);
		return CSRF_ERR_NOMEM;
	}
	if (pthread_mutex_init(&ctx->derive_lock, NULL) != 0) {
		pthread_rwlock_destroy(&ctx->ring_lock);
		a.free(ctx, a.ud);
		return CSRF_ERR_NOMEM;
	}
	*out = ctx;
	return CSRF_OK;
}

CSRF_API void csrf_ctx_free(csrf_ctx *ctx)
{
	if (!ctx)
		return;
	csrfi_free(ctx, ctx->trusted);
	for (size_t i = 0; i < ctx->n_exempt; i++) {
		csrfi_free(ctx, ctx->exempt[i].method);
		csrfi_free(ctx, ctx->exempt[i].path);
	}
	csrfi_free(ctx, ctx->exempt);
	/* the key ring lives in the context (its slots hold the keys' hash
	 * states, no pointers): the context's wipe below wipes it too */
	pthread_rwlock_destroy(&ctx->ring_lock);
	pthread_mutex_destroy(&ctx->derive_lock);
	csrf_allocator a = ctx->alloc;
	csrfi_wipe(ctx, sizeof *ctx);
	a.free(ctx, a.ud);
}

CSRF_API const char *csrf_ctx_error(const csrf_ctx *ctx)
{
	return ctx ? ctx->err : "";
}

/* Sets err's message (printf-style) and returns CSRF_ERR_CONFIG. */
static csrf_reason bad_setting(csrf_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static csrf_reason bad_setting(csrf_error *err, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
	}
	return CSRF_ERR_CONFIG;
}

/* Checks that s is a full origin, parsed into out, explaining in err what
 * is wrong when it is not. */
static csrf_reason check_origin(const char *s, size_t len, const char *what, csrf_error *err, csrf_origin *out)
{
	int shown = len > 120 ? 120 : (int)len;
	if (!s || len == 0)
		return bad_setting(err, "%s is empty", what);
	if (len == 4 && memcmp(s, "null", 4) == 0)
		return bad_setting(err, "%s \"null\" is not an origin", what);
	const char *sep = NULL;
	for (size_t i = 0; i + 2 < len; i++) {
		if (s[i] == ':' && s[i + 1] == '/' && s[i + 2] == '/') {
			sep = s + i;
			break;
		}
		if (s[i] == '/' || s[i] == '?' || s[i] == '#')
			break;
	}
	if (!sep)
		return bad_setting(err, "%s \"%.*s\" has no scheme: write a full origin such as https://%.*s", what,
		                   shown, s, shown, s);
	csrf_slice scheme = {s, (size_t)(sep - s)};
	if (!csrfi_slice_ieq(scheme, "http") && !csrfi_slice_ieq(scheme, "https"))
		return bad_setting(err, "%s \"%.*s\": the scheme must be http or https", what, shown, s);
	const char *rest = sep + 3;
	size_t rest_len = len - (size_t)(rest - s);
	for (size_t i = 0; i < rest_len; i++) {
		const char *kind = NULL;
		switch (rest[i]) {
		case '/':
			kind = "a path";
			break;
		case '?':
			kind = "a query";
			break;
		case '#':
			kind = "a fragment";
			break;
		case '@':
			kind = "user information";
			break;
		default:
			break;
		}
		if (kind)
			return bad_setting(err, "%s \"%.*s\" has %s: an origin is only scheme://host[:port]", what,
			                   shown, s, kind);
	}
	if (rest_len == 0)
		return bad_setting(err, "%s \"%.*s\" has no host", what, shown, s);
	for (size_t i = 0; i < rest_len; i++)
		if ((unsigned char)rest[i] >= 0x80)
			return bad_setting(err,
			                   "%s \"%.*s\" has a host that is not ASCII: browsers send an international "
			                   "name in punycode, so write it so (xn--..., e.g. from idn2)",
			                   what, shown, s);
	if (csrf_origin_parse(s, len, out) != CSRF_OK)
		return bad_setting(err, "%s \"%.*s\" is not a valid origin (bad host or port)", what, shown, s);
	return CSRF_OK;
}

CSRF_API csrf_reason csrf_origin_validate(const char *origin, size_t len, const char *what, csrf_error *err)
{
	csrf_origin o;
	if (err)
		err->msg[0] = '\0';
	if (!origin && len)
		return CSRF_ERR_ARG;
	return check_origin(origin, len, what ? what : "origin", err, &o);
}

CSRF_API csrf_reason csrf_cookie_name_validate(const char *name, const char *what, csrf_error *err)
{
	if (err)
		err->msg[0] = '\0';
	if (!name)
		return CSRF_ERR_ARG;
	size_t n = strlen(name);
	if (n > CSRF_FIELD_NAME_MAX || !csrfi_is_token(name, n))
		return bad_setting(err, "%s name must be 1 to %d cookie-name characters", what ? what : "cookie",
		                   CSRF_FIELD_NAME_MAX);
	return CSRF_OK;
}

/* A configuration check's verdict, its message kept in ctx->err. */
static csrf_reason config_result(csrf_ctx *ctx, csrf_reason r, const csrf_error *e)
{
	if (r != CSRF_OK)
		memcpy(ctx->err, e->msg, sizeof ctx->err < sizeof e->msg ? sizeof ctx->err : sizeof e->msg);
	return r;
}

static csrf_reason origin_config(csrf_ctx *ctx, const char *what, const char *s, size_t len, csrf_origin *out)
{
	csrf_error e = {{0}};
	return config_result(ctx, check_origin(s, len, what, &e, out), &e);
}

CSRF_API csrf_reason csrf_ctx_set_self_origin(csrf_ctx *ctx, const char *origin, size_t len)
{
	if (!ctx)
		return CSRF_ERR_ARG;
	csrf_origin o;
	csrf_reason r = origin_config(ctx, "self origin", origin, len, &o);
	if (r != CSRF_OK)
		return r;
	ctx->self = o;
	ctx->has_self = 1;
	return CSRF_OK;
}

CSRF_API csrf_reason csrf_ctx_add_trusted_origin(csrf_ctx *ctx, const char *origin, size_t len)
{
	if (!ctx)
		return CSRF_ERR_ARG;
	csrf_origin o;
	csrf_reason r = origin_config(ctx, "trusted origin", origin, len, &o);
	if (r != CSRF_OK)
		return r;
	csrf_origin *grown = csrfi_alloc(ctx, (ctx->n_trusted + 1) * sizeof *grown);
	if (!grown)
		return csrfi_config_error(ctx, CSRF_ERR_NOMEM, "out of memory");
	if (ctx->n_trusted)
		memcpy(grown, ctx->trusted, ctx->n_trusted * sizeof *grown);
	grown[ctx->n_trusted] = o;
	csrfi_free(ctx, ctx->trusted);
	ctx->trusted = grown;
	ctx->n_trusted++;
	return CSRF_OK;
}

static char *copy_bytes(const csrf_ctx *ctx, const char *s, size_t n)
{
	char *p = csrfi_alloc(ctx, n + 1);
	if (p) {
		if (n)
			memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

CSRF_API csrf_reason csrf_ctx_add_exemption(csrf_ctx *ctx, const char *method, const char *path, size_t path_len)
{
	if (!ctx || !path)
		return CSRF_ERR_ARG;
	if (path_len == 0 || path[0] != '/')
		return csrfi_config_error(ctx, CSRF_ERR_CONFIG, "exempt path must start with '/'");
	for (size_t i = 0; i < path_len; i++) {
		unsigned char c = (unsigned char)path[i];
		if (c <= 0x20 || c >= 0x7f || c == '?' || c == '#')
			return csrfi_config_error(ctx, CSRF_ERR_CONFIG,
			                          "exempt path may not contain spaces, controls, '?' or '#'");
	}
	if (method && !csrfi_is_token(method, strlen(method)))
		return csrfi_config_error(ctx, CSRF_ERR_CONFIG, "exempt method is not an HTTP method token");
	csrfi_exemption e = {NULL, NULL, path_len};
	if (method && !(e.method = copy_bytes(ctx, method, strlen(method))))
		return csrfi_config_error(ctx, CSRF_ERR_NOMEM, "out of memory");
	if (!(e.path = copy_bytes(ctx, path, path_len))) {
		csrfi_free(ctx, e.method);
		return csrfi_config_error(ctx, CSRF_ERR_NOMEM, "out of memory");
	}
	csrfi_exemption *grown = csrfi_alloc(ctx, (ctx->n_exempt + 1) * sizeof *grown);
	if (!grown) {
		csrfi_free(ctx, e.method);
		csrfi_free(ctx, e.path);
		return csrfi_config_error(ctx, CSRF_ERR_NOMEM, "out of memory");
	}
	if (ctx->n_exempt)
		memcpy(grown, ctx->exempt, ctx->n_exempt * sizeof *grown);
	grown[ctx->n_exempt] = e;
	csrfi_free(ctx, ctx->exempt);
	ctx->exempt = grown;
	ctx->n_exempt++;
	return CSRF_OK;
}

CSRF_API void csrf_ctx_set_mode(csrf_ctx *ctx, csrf_mode mode)
{
	if (ctx && (mode == CSRF_MODE_BOTH || mode == CSRF_MODE_TOKEN || mode == CSRF_MODE_ORIGIN ||
	            mode == CSRF_MODE_ORIGIN_OR_TOKEN))
		ctx->mode = mode;
}

CSRF_API void csrf_ctx_set_report_only(csrf_ctx *ctx, int on)
{
	if (ctx)
		ctx->report_only = on != 0;
}

CSRF_API void csrf_ctx_set_allow_fetch_none(csrf_ctx *ctx, int on)
{
	if (ctx)
		ctx->allow_fetch_none = on != 0;
}

CSRF_API void csrf_ctx_set_allow_same_site(csrf_ctx *ctx, int on)
{
	if (ctx)
		ctx->allow_same_site = on != 0;
}

CSRF_API void csrf_ctx_set_unsafe_get(csrf_ctx *ctx, int on)
{
	if (ctx)
		ctx->unsafe_get = on != 0;
}

CSRF_API void csrf_ctx_set_max_age(csrf_ctx *ctx, uint32_t seconds)
{
	if (ctx)
		ctx->max_age = seconds;
}

CSRF_API void csrf_ctx_set_body_max(csrf_ctx *ctx, size_t bytes)
{
	if (ctx)
		ctx->body_max = bytes ? bytes : CSRF_DEFAULT_BODY_MAX;
}

CSRF_API csrf_reason csrf_ctx_set_field_name(csrf_ctx *ctx, const char *name)
{
	if (!ctx)
		return CSRF_ERR_ARG;
	if (!name) {
		ctx->field_name[0] = '\0';
		return CSRF_OK;
	}
	size_t n = strlen(name);
	if (n == 0 || n > CSRF_FIELD_NAME_MAX)
		return csrfi_config_error(ctx, CSRF_ERR_CONFIG, "field name must be 1 to %d characters",
		                          CSRF_FIELD_NAME_MAX);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '-'))
			return csrfi_config_error(ctx, CSRF_ERR_CONFIG, "field name may only contain [A-Za-z0-9_-]");
	}
	memcpy(ctx->field_name, name, n + 1);
	return CSRF_OK;
}

static csrf_reason set_cookie_name(csrf_ctx *ctx, char *dst, const char *name, const char *what)
{
	csrf_error e = {{0}};
	csrf_reason r = config_result(ctx, csrf_cookie_name_validate(name, what, &e), &e);
	if (r == CSRF_OK)
		memcpy(dst, name, strlen(name) + 1);
	return r;
}

CSRF_API csrf_reason csrf_ctx_set_secret_cookie(csrf_ctx *ctx, const char *name)
{
	if (!ctx || !name)
		return CSRF_ERR_ARG;
	csrf_reason r = set_cookie_name(ctx, ctx->secret_cookie, name, "secret cookie");
	if (r == CSRF_OK)
		ctx->secret_cookie_set = 1;
	return r;
}

CSRF_API csrf_reason csrf_ctx_set_session_cookie(csrf_ctx *ctx, const char *name)
{
	if (!ctx)
		return CSRF_ERR_ARG;
	if (!name) {
		memset(ctx->session_cookie, 0, sizeof ctx->session_cookie);
		ctx->n_session_cookies = 0;
		return CSRF_OK;
	}
	csrf_reason r = set_cookie_name(ctx, ctx->session_cookie[0], name, "session cookie");
	if (r == CSRF_OK)
		ctx->n_session_cookies = 1;
	return r;
}

CSRF_API csrf_reason csrf_ctx_add_session_cookie(csrf_ctx *ctx, const char *name)
{
	if (!ctx || !name)
		return CSRF_ERR_ARG;
	if (ctx->n_session_cookies == CSRF_SESSION_COOKIES_MAX)
		return csrfi_config_error(ctx, CSRF_ERR_CONFIG, "at most %d session cookies", CSRF_SESSION_COOKIES_MAX);
	for (size_t i = 0; i < ctx->n_session_cookies; i++)
		if (strcmp(ctx->session_cookie[i], name) == 0)
			return csrfi_config_error(ctx, CSRF_ERR_CONFIG, "session cookie \"%.*s\" is named twice",
			                          CSRF_FIELD_NAME_MAX, name);
	csrf_reason r = set_cookie_name(ctx, ctx->session_cookie[ctx->n_session_cookies], name, "session cookie");
	if (r == CSRF_OK)
		ctx->n_session_cookies++;
	return r;
}
