/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mod_csrf_protect - libcsrf in front of the unchanged applications
 * Apache httpd 2.4 serves (mod_php, proxy_fcgi, mod_proxy_http, CGI).
 *
 * This file: the directives (one for each of the nginx module's, in
 * Apache's style), the per-directory configuration and its merge, the
 * library contexts built from it, the counters in memory every child
 * shares and the csrf-metrics handler. The module owns the Apache side
 * only; every decision is the library's.
 */

#include "mod_csrf_protect.h"

#include "apr_hash.h"
#include "apr_shm.h"
#include "apr_thread_mutex.h"
#include "http_core.h"

#include "csrfx.h"

/* ------------------------------------------------------------------ */
/* Directives                                                          */
/* ------------------------------------------------------------------ */

static void *csrf_protect_create(apr_pool_t *p, char *dir)
{
	csrf_protect_conf *c = apr_pcalloc(p, sizeof(*c));

	(void)dir;
	c->enable = c->mode = c->action = c->inject = c->unsafe_get = CSRF_PROTECT_UNSET;
	c->form_action_csp = c->referrer_same_origin = c->retry_token = c->status = CSRF_PROTECT_UNSET;
	c->issue_version = CSRF_PROTECT_UNSET;
	c->body_max = CSRF_PROTECT_UNSET;
	c->max_age = CSRF_PROTECT_UNSET;
	return c;
}

#define CSRF_PROTECT_MERGE(field) c->field = add->field != CSRF_PROTECT_UNSET ? add->field : base->field
#define CSRF_PROTECT_MERGE_PTR(field) c->field = add->field != NULL ? add->field : base->field

/* Apache's per-directory merge: what a section sets wins, the rest is
 * its parent's (a list, trusted origins or session cookies, replaces the
 * parent's whole). */
static void *csrf_protect_merge(apr_pool_t *p, void *basev, void *addv)
{
	csrf_protect_conf *base = basev, *add = addv, *c = apr_palloc(p, sizeof(*c));

	CSRF_PROTECT_MERGE(enable);
	CSRF_PROTECT_MERGE(mode);
	CSRF_PROTECT_MERGE(action);
	CSRF_PROTECT_MERGE(inject);
	CSRF_PROTECT_MERGE(unsafe_get);
	CSRF_PROTECT_MERGE(form_action_csp);
	CSRF_PROTECT_MERGE(referrer_same_origin);
	CSRF_PROTECT_MERGE(retry_token);
	CSRF_PROTECT_MERGE(status);
	CSRF_PROTECT_MERGE(issue_version);
	CSRF_PROTECT_MERGE(body_max);
	CSRF_PROTECT_MERGE(max_age);
	CSRF_PROTECT_MERGE_PTR(origin);
	CSRF_PROTECT_MERGE_PTR(key_file);
	CSRF_PROTECT_MERGE_PTR(trusted);
	CSRF_PROTECT_MERGE_PTR(session);
	CSRF_PROTECT_MERGE_PTR(exempt);
	return c;
}

#define CSRF_PROTECT_DEFAULT(field, value)                                                                             \
	if (c->field == CSRF_PROTECT_UNSET)                                                                            \
	c->field = (value)

csrf_protect_conf *csrf_protect_settled(apr_pool_t *p, const csrf_protect_conf *conf)
{
	csrf_protect_conf *c = apr_pmemdup(p, conf, sizeof(*c));

	CSRF_PROTECT_DEFAULT(enable, 0);
	CSRF_PROTECT_DEFAULT(mode, CSRF_MODE_ADAPTER_DEFAULT);
	CSRF_PROTECT_DEFAULT(action, CSRF_PROTECT_DENY);
	CSRF_PROTECT_DEFAULT(inject, 1);
	CSRF_PROTECT_DEFAULT(unsafe_get, 0);
	CSRF_PROTECT_DEFAULT(form_action_csp, 0);
	CSRF_PROTECT_DEFAULT(referrer_same_origin, 0);
	CSRF_PROTECT_DEFAULT(retry_token, 0);
	CSRF_PROTECT_DEFAULT(status, HTTP_FORBIDDEN);
	CSRF_PROTECT_DEFAULT(issue_version, 4);
	CSRF_PROTECT_DEFAULT(body_max, CSRF_DEFAULT_BODY_MAX);
	CSRF_PROTECT_DEFAULT(max_age, 0);
	return c;
}

static const char *csrf_protect_set_mode(cmd_parms *cmd, void *dconf, const char *arg)
{
	static const char *const modes[] = {"both", "token", "origin", "origin_or_token"};
	csrf_protect_conf *c = dconf;

	(void)cmd;
	for (int i = 0; i < 4; i++) {
		if (strcasecmp(arg, modes[i]) == 0) {
			c->mode = i; /* the csrf_mode values, in order */
			return NULL;
		}
	}
	return "CSRFMode must be both, token, origin or origin_or_token";
}

static const char *csrf_protect_set_action(cmd_parms *cmd, void *dconf, const char *arg)
{
	csrf_protect_conf *c = dconf;

	(void)cmd;
	if (strcasecmp(arg, "deny") == 0)
		c->action = CSRF_PROTECT_DENY;
	else if (strcasecmp(arg, "log") == 0)
		c->action = CSRF_PROTECT_LOG;
	else
		return "CSRFAction must be deny or log";
	return NULL;
}

static const char *csrf_protect_error(cmd_parms *cmd, const char *msg)
{
	return apr_psprintf(cmd->pool, "%s: %s", cmd->cmd->name, msg);
}

static const char *csrf_protect_set_origin(cmd_parms *cmd, void *dconf, const char *arg)
{
	csrf_protect_conf *c = dconf;
	csrf_error err;

	if (csrf_origin_validate(arg, strlen(arg), "self origin", &err) != CSRF_OK)
		return csrf_protect_error(cmd, err.msg);
	c->origin = arg;
	return NULL;
}

static const char *csrf_protect_add_trusted(cmd_parms *cmd, void *dconf, const char *arg)
{
	csrf_protect_conf *c = dconf;
	csrf_error err;

	if (csrf_origin_validate(arg, strlen(arg), "trusted origin", &err) != CSRF_OK)
		return csrf_protect_error(cmd, err.msg);
	if (c->trusted == NULL)
		c->trusted = apr_array_make(cmd->pool, 2, sizeof(const char *));
	*(const char **)apr_array_push(c->trusted) = arg;
	return NULL;
}

static const char *csrf_protect_add_session(cmd_parms *cmd, void *dconf, const char *arg)
{
	csrf_protect_conf *c = dconf;
	csrf_error err;

	if (csrf_cookie_name_validate(arg, "session cookie", &err) != CSRF_OK)
		return csrf_protect_error(cmd, err.msg);
	if (c->session == NULL)
		c->session = apr_array_make(cmd->pool, CSRF_SESSION_COOKIES_MAX, sizeof(const char *));
	for (int i = 0; i < c->session->nelts; i++) {
		if (strcmp(APR_ARRAY_IDX(c->session, i, const char *), arg) == 0)
			return apr_psprintf(cmd->pool, "%s: \"%s\" is named twice", cmd->cmd->name, arg);
	}
	if (c->session->nelts == CSRF_SESSION_COOKIES_MAX)
		return apr_psprintf(cmd->pool, "%s: at most %d names", cmd->cmd->name, CSRF_SESSION_COOKIES_MAX);
	*(const char **)apr_array_push(c->session) = arg;
	return NULL;
}

static const char *csrf_protect_set_key_file(cmd_parms *cmd, void *dconf, const char *arg)
{
	csrf_protect_conf *c = dconf;
	csrf_key_info keys[CSRF_KEYS_MAX];
	csrf_error err;
	size_t n;
	const char *path = ap_server_root_relative(cmd->pool, arg);

	if (path == NULL)
		return csrf_protect_error(cmd, "not a valid path");
	if (csrf_keyfile_list(path, keys, CSRF_KEYS_MAX, &n, &err) != CSRF_OK)
		return csrf_protect_error(cmd, err.msg[0] ? err.msg : "cannot read the key file");
	c->key_file = path;
	return NULL;
}

/* CSRFExempt [METHOD] PATH: the library's exemption rule, checked on a
 * scratch context so a wrong one stops the configuration. */
static const char *csrf_protect_add_exempt(cmd_parms *cmd, void *dconf, const char *a1, const char *a2)
{
	csrf_protect_conf *c = dconf;
	csrf_protect_exempt *e;
	csrf_ctx *ctx;
	csrf_reason rc;
	const char *msg = NULL;

	if (csrf_ctx_new(&ctx, NULL) != CSRF_OK)
		return csrf_protect_error(cmd, "out of memory");
	rc = csrf_ctx_add_exemption(ctx, a2 ? a1 : NULL, a2 ? a2 : a1, strlen(a2 ? a2 : a1));
	if (rc != CSRF_OK)
		msg = csrf_protect_error(cmd, csrf_ctx_error(ctx)[0] ? csrf_ctx_error(ctx) : csrf_reason_str(rc));
	csrf_ctx_free(ctx);
	if (msg)
		return msg;
	if (c->exempt == NULL)
		c->exempt = apr_array_make(cmd->pool, 2, sizeof(csrf_protect_exempt));
	e = apr_array_push(c->exempt);
	e->method = a2 ? a1 : NULL;
	e->path = a2 ? a2 : a1;
	return NULL;
}

typedef struct {
	char suffix;
	uint64_t factor;
} csrf_protect_unit;

static const csrf_protect_unit csrf_protect_sizes[] = {{'k', 1024},
                                                       {'K', 1024},
                                                       {'m', 1024 * 1024},
                                                       {'M', 1024 * 1024},
                                                       {'g', 1024 * 1024 * 1024},
                                                       {'G', 1024 * 1024 * 1024},
                                                       {0, 0}};
static const csrf_protect_unit csrf_protect_times[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}, {0, 0}};

/* A decimal with at most one unit suffix of units, at most max in all:
 * 0 and *out, or -1. */
static int csrf_protect_number(const char *arg, const csrf_protect_unit *units, uint64_t max, uint64_t *out)
{
	size_t len = strlen(arg);
	uint64_t factor = 1, n;

	for (const csrf_protect_unit *u = units; u && u->suffix && len > 1; u++) {
		if (arg[len - 1] == u->suffix) {
			factor = u->factor;
			len--;
			break;
		}
	}
	if (csrfx_parse_u64(arg, len, max, &n) != CSRF_OK || n > max / factor)
		return -1;
	*out = n * factor;
	return 0;
}

static const char *csrf_protect_set_body_max(cmd_parms *cmd, void *dconf, const char *arg)
{
	csrf_protect_conf *c = dconf;
	uint64_t n;

	if (csrf_protect_number(arg, csrf_protect_sizes, (uint64_t)1 << 40, &n) != 0 || n == 0)
		return csrf_protect_error(cmd, "not a size (bytes, or a number with k, m or g)");
	c->body_max = (apr_off_t)n;
	return NULL;
}

/* 0 is never. */
static const char *csrf_protect_set_max_age(cmd_parms *cmd, void *dconf, const char *arg)
{
	csrf_protect_conf *c = dconf;
	uint64_t n;

	if (csrf_protect_number(arg, csrf_protect_times, UINT32_MAX, &n) != 0)
		return csrf_protect_error(cmd, "not a time (seconds, or a number with s, m, h or d)");
	c->max_age = (apr_int64_t)n;
	return NULL;
}

/* A whole number from min to max into *out; else the error why. */
static const char *csrf_protect_int_in(cmd_parms *cmd, const char *arg, int min, int max, const char *why, int *out)
{
	uint64_t n;

	if (csrf_protect_number(arg, NULL, (uint64_t)max, &n) != 0 || n < (uint64_t)min)
		return csrf_protect_error(cmd, why);
	*out = (int)n;
	return NULL;
}

static const char *csrf_protect_set_status(cmd_parms *cmd, void *dconf, const char *arg)
{
	return csrf_protect_int_in(cmd, arg, 400, 599, "must be between 400 and 599",
	                           &((csrf_protect_conf *)dconf)->status);
}

/* 3 (or 2) only while a fleet upgrades from a release that reads up to
 * 3 (or 2) only. */
static const char *csrf_protect_set_issue_version(cmd_parms *cmd, void *dconf, const char *arg)
{
	return csrf_protect_int_in(cmd, arg, 2, 4, "must be 2, 3 or 4", &((csrf_protect_conf *)dconf)->issue_version);
}

#define CSRF_PROTECT_CONTEXT (RSRC_CONF | ACCESS_CONF)

static const command_rec csrf_protect_cmds[] = {
    AP_INIT_FLAG("CSRF", ap_set_flag_slot, (void *)APR_OFFSETOF(csrf_protect_conf, enable), CSRF_PROTECT_CONTEXT,
                 "On to judge requests and put tokens into pages here"),
    AP_INIT_TAKE1("CSRFMode", csrf_protect_set_mode, NULL, CSRF_PROTECT_CONTEXT,
                  "both, token, origin or origin_or_token (the default)"),
    AP_INIT_TAKE1("CSRFOrigin", csrf_protect_set_origin, NULL, CSRF_PROTECT_CONTEXT,
                  "the site's own origin, scheme://host[:port]"),
    AP_INIT_ITERATE("CSRFTrustedOrigin", csrf_protect_add_trusted, NULL, CSRF_PROTECT_CONTEXT,
                    "origins whose cross-origin requests are trusted"),
    AP_INIT_TAKE1("CSRFKeyFile", csrf_protect_set_key_file, NULL, CSRF_PROTECT_CONTEXT, "the key file (csrf-key new)"),
    AP_INIT_ITERATE("CSRFSessionCookie", csrf_protect_add_session, NULL, CSRF_PROTECT_CONTEXT,
                    "the application's session cookie names tokens are bound to"),
    AP_INIT_FLAG("CSRFInject", ap_set_flag_slot, (void *)APR_OFFSETOF(csrf_protect_conf, inject), CSRF_PROTECT_CONTEXT,
                 "Off: no tokens put into pages"),
    AP_INIT_TAKE1("CSRFAction", csrf_protect_set_action, NULL, CSRF_PROTECT_CONTEXT,
                  "deny (the default) or log: report-only"),
    AP_INIT_TAKE1("CSRFBodyMax", csrf_protect_set_body_max, NULL, CSRF_PROTECT_CONTEXT,
                  "the largest body searched for the token"),
    AP_INIT_FLAG("CSRFUnsafeGet", ap_set_flag_slot, (void *)APR_OFFSETOF(csrf_protect_conf, unsafe_get),
                 CSRF_PROTECT_CONTEXT, "On: GET here changes state and needs same-origin evidence"),
    AP_INIT_TAKE1("CSRFStatus", csrf_protect_set_status, NULL, CSRF_PROTECT_CONTEXT, "the status of a rejection (403)"),
    AP_INIT_TAKE1("CSRFMaxAge", csrf_protect_set_max_age, NULL, CSRF_PROTECT_CONTEXT,
                  "the age after which tokens and secret cookies expire (0: never)"),
    AP_INIT_TAKE1("CSRFIssueVersion", csrf_protect_set_issue_version, NULL, CSRF_PROTECT_CONTEXT,
                  "the version of the tokens and cookies issued: 3, or 2 through a fleet's upgrade"),
    AP_INIT_FLAG("CSRFFormActionCSP", ap_set_flag_slot, (void *)APR_OFFSETOF(csrf_protect_conf, form_action_csp),
                 CSRF_PROTECT_CONTEXT, "On: a form-action policy on pages with tokens"),
    AP_INIT_FLAG("CSRFReferrerSameOrigin", ap_set_flag_slot,
                 (void *)APR_OFFSETOF(csrf_protect_conf, referrer_same_origin), CSRF_PROTECT_CONTEXT,
                 "On: a no-referrer policy is raised to same-origin"),
    AP_INIT_FLAG("CSRFRetryToken", ap_set_flag_slot, (void *)APR_OFFSETOF(csrf_protect_conf, retry_token),
                 CSRF_PROTECT_CONTEXT, "On: a rejection for a stale token offers a fresh one"),
    AP_INIT_TAKE12("CSRFExempt", csrf_protect_add_exempt, NULL, CSRF_PROTECT_CONTEXT,
                   "[METHOD] PATH exempted from the check, exactly"),
    {NULL}};

/* ------------------------------------------------------------------ */
/* Library contexts                                                    */
/* ------------------------------------------------------------------ */

/* A context per distinct set of settings, made in the parent from every
 * server and section post_config can see (the children inherit them),
 * else on first use in a child, under the lock. Apache merges sections
 * per request, so the merged settings are the key. */
static apr_hash_t *csrf_protect_ctxs;
static apr_hash_t *csrf_protect_sessions; /* of int, by context */
static apr_pool_t *csrf_protect_ctx_pool;
#if APR_HAS_THREADS
static apr_thread_mutex_t *csrf_protect_ctx_lock;
static int csrf_protect_no_lock; /* its creation failed in this child */
#endif
static uint8_t csrf_protect_random_key[CSRF_KEY_LEN];

/* The settings a context is made from (csrf_protect_build reads these and
 * nothing else): their origin picks a chain in csrf_protect_ctxs (APR
 * hashes it; a NULL origin goes with ""), and csrf_protect_same then
 * compares them field by field, so two settings share a context only when
 * they are equal (a string and one left out, NULL, are not equal, as
 * csrf_protect_build does not read them alike; a list left out is an
 * empty one). A string made of them all for a key, as before, cost a
 * request of the 20-form page some 6 K instructions (apr_psprintf,
 * apr_pstrcat, hashing the string). */
typedef struct csrf_protect_built {
	csrf_protect_conf conf; /* a deep copy in the contexts' pool (csrf_protect_keep) */
	csrf_ctx *ctx;
	struct csrf_protect_built *next;
} csrf_protect_built;

static int csrf_protect_str_eq(const char *a, const char *b)
{
	return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

static int csrf_protect_nelts(const apr_array_header_t *a)
{
	return a ? a->nelts : 0;
}

static int csrf_protect_same_list(const apr_array_header_t *a, const apr_array_header_t *b)
{
	int n = csrf_protect_nelts(a);

	if (n != csrf_protect_nelts(b))
		return 0;
	for (int i = 0; i < n; i++)
		if (!csrf_protect_str_eq(APR_ARRAY_IDX(a, i, const char *), APR_ARRAY_IDX(b, i, const char *)))
			return 0;
	return 1;
}

static int csrf_protect_same(const csrf_protect_conf *a, const csrf_protect_conf *b)
{
	int n = csrf_protect_nelts(a->exempt);

	if (a->mode != b->mode || a->action != b->action || a->unsafe_get != b->unsafe_get ||
	    a->form_action_csp != b->form_action_csp || a->referrer_same_origin != b->referrer_same_origin ||
	    a->retry_token != b->retry_token || a->issue_version != b->issue_version || a->body_max != b->body_max ||
	    a->max_age != b->max_age || !csrf_protect_str_eq(a->origin, b->origin) ||
	    !csrf_protect_str_eq(a->key_file, b->key_file) || !csrf_protect_same_list(a->trusted, b->trusted) ||
	    !csrf_protect_same_list(a->session, b->session) || n != csrf_protect_nelts(b->exempt))
		return 0;
	for (int i = 0; i < n; i++) {
		const csrf_protect_exempt *x = &APR_ARRAY_IDX(a->exempt, i, csrf_protect_exempt);
		const csrf_protect_exempt *y = &APR_ARRAY_IDX(b->exempt, i, csrf_protect_exempt);
		if (!csrf_protect_str_eq(x->method, y->method) || !csrf_protect_str_eq(x->path, y->path))
			return 0;
	}
	return 1;
}

static apr_status_t csrf_protect_ctx_free(void *data)
{
	csrf_ctx_free(data);
	return APR_SUCCESS;
}

/* A new context with settled settings; NULL and *why on failure. */
static csrf_ctx *csrf_protect_build(apr_pool_t *p, const csrf_protect_conf *c, const char **why)
{
	csrf_ctx *ctx;
	csrf_reason rc = CSRF_OK;
	int i;

	if (csrf_ctx_new(&ctx, NULL) != CSRF_OK) {
		*why = "out of memory";
		return NULL;
	}
	csrf_ctx_set_mode(ctx, (csrf_mode)c->mode);
	csrf_ctx_set_report_only(ctx, c->action == CSRF_PROTECT_LOG);
	csrf_ctx_set_unsafe_get(ctx, c->unsafe_get);
	csrf_ctx_set_body_max(ctx, (size_t)c->body_max);
	csrf_ctx_set_max_age(ctx, (uint32_t)c->max_age);
	csrf_ctx_set_form_action_csp(ctx, c->form_action_csp);
	csrf_ctx_set_referrer_same_origin(ctx, c->referrer_same_origin);
	csrf_ctx_set_retry_token(ctx, c->retry_token);
	rc = csrf_ctx_set_issue_version(ctx, (unsigned)c->issue_version);
	if (rc == CSRF_OK && c->origin)
		rc = csrf_ctx_set_self_origin(ctx, c->origin, strlen(c->origin));
	for (i = 0; rc == CSRF_OK && c->trusted && i < c->trusted->nelts; i++) {
		const char *o = APR_ARRAY_IDX(c->trusted, i, const char *);
		rc = csrf_ctx_add_trusted_origin(ctx, o, strlen(o));
	}
	for (i = 0; rc == CSRF_OK && c->session && i < c->session->nelts; i++) {
		const char *s = APR_ARRAY_IDX(c->session, i, const char *);
		rc = i == 0 ? csrf_ctx_set_session_cookie(ctx, s) : csrf_ctx_add_session_cookie(ctx, s);
	}
	for (i = 0; rc == CSRF_OK && c->exempt && i < c->exempt->nelts; i++) {
		csrf_protect_exempt *e = &APR_ARRAY_IDX(c->exempt, i, csrf_protect_exempt);
		rc = csrf_ctx_add_exemption(ctx, e->method, e->path, strlen(e->path));
	}
	if (rc == CSRF_OK)
		rc = c->key_file ? csrf_ctx_load_key_file(ctx, c->key_file)
		                 : csrf_ctx_add_key(ctx, 1, csrf_protect_random_key, 1);
	if (rc != CSRF_OK) {
		*why = apr_pstrdup(p, csrf_ctx_error(ctx)[0] ? csrf_ctx_error(ctx) : csrf_reason_str(rc));
		csrf_ctx_free(ctx);
		return NULL;
	}
	apr_pool_cleanup_register(csrf_protect_ctx_pool, ctx, csrf_protect_ctx_free, apr_pool_cleanup_null);
	return ctx;
}

/* A copy of the strings of list a in p. */
static apr_array_header_t *csrf_protect_keep_list(apr_pool_t *p, const apr_array_header_t *a)
{
	apr_array_header_t *k = a ? apr_array_copy(p, a) : NULL;

	for (int i = 0; k && i < k->nelts; i++)
		APR_ARRAY_IDX(k, i, const char *) = apr_pstrdup(p, APR_ARRAY_IDX(k, i, const char *));
	return k;
}

/* Settings c as a context keeps them, strings and lists copied into p:
 * nothing of them then depends on the pool they were settled in. */
static void csrf_protect_keep(apr_pool_t *p, csrf_protect_conf *k, const csrf_protect_conf *c)
{
	*k = *c;
	k->origin = c->origin ? apr_pstrdup(p, c->origin) : NULL;
	k->key_file = c->key_file ? apr_pstrdup(p, c->key_file) : NULL;
	k->trusted = csrf_protect_keep_list(p, c->trusted);
	k->session = csrf_protect_keep_list(p, c->session);
	k->exempt = c->exempt ? apr_array_copy(p, c->exempt) : NULL;
	for (int i = 0; k->exempt && i < k->exempt->nelts; i++) {
		csrf_protect_exempt *e = &APR_ARRAY_IDX(k->exempt, i, csrf_protect_exempt);
		e->method = e->method ? apr_pstrdup(p, e->method) : NULL;
		e->path = apr_pstrdup(p, e->path);
	}
}

/* The context for settled settings, from the table or made and added. */
static csrf_ctx *csrf_protect_lookup(apr_pool_t *p, const csrf_protect_conf *c, const char **why)
{
	csrf_protect_built *first = apr_hash_get(csrf_protect_ctxs, c->origin ? c->origin : "", APR_HASH_KEY_STRING),
	                   *b;
	csrf_ctx *ctx;

	for (b = first; b; b = b->next)
		if (csrf_protect_same(&b->conf, c))
			return b->ctx;
	if ((ctx = csrf_protect_build(p, c, why)) == NULL)
		return NULL;
	b = apr_palloc(csrf_protect_ctx_pool, sizeof(*b));
	csrf_protect_keep(csrf_protect_ctx_pool, &b->conf, c);
	b->ctx = ctx;
	b->next = first;
	apr_hash_set(csrf_protect_ctxs, b->conf.origin ? b->conf.origin : "", APR_HASH_KEY_STRING, b);
	return ctx;
}

csrf_ctx *csrf_protect_ctx(request_rec *r, const csrf_protect_conf *settled)
{
	csrf_ctx *ctx;
	const char *why = "";

	if (csrf_protect_ctxs == NULL)
		return NULL;
#if APR_HAS_THREADS
	if (csrf_protect_no_lock) {
		csrf_protect_log(APLOG_ERR, r, "cannot configure for %s \"%s\": no contexts' lock", r->method,
		                 r->parsed_uri.path);
		return NULL;
	}
	if (csrf_protect_ctx_lock)
		apr_thread_mutex_lock(csrf_protect_ctx_lock);
#endif
	ctx = csrf_protect_lookup(r->pool, settled, &why);
#if APR_HAS_THREADS
	if (csrf_protect_ctx_lock)
		apr_thread_mutex_unlock(csrf_protect_ctx_lock);
#endif
	if (ctx == NULL)
		csrf_protect_log(APLOG_ERR, r, "cannot configure for %s \"%s\": %s", r->method, r->parsed_uri.path,
		                 why);
	return ctx;
}

/* What this process knows of a context's session cookies, for the
 * warning csrf_protect_response.c gives once per child (the nginx
 * module's, once per worker): set it with set != 0. */
int csrf_protect_session_state(const csrf_ctx *ctx, int set)
{
	int *state, v;

	if (csrf_protect_ctxs == NULL)
		return 0;
#if APR_HAS_THREADS
	if (csrf_protect_ctx_lock)
		apr_thread_mutex_lock(csrf_protect_ctx_lock);
#endif
	if (csrf_protect_sessions == NULL)
		csrf_protect_sessions = apr_hash_make(csrf_protect_ctx_pool);
	state = apr_hash_get(csrf_protect_sessions, &ctx, sizeof(ctx));
	if (state == NULL && set) {
		state = apr_pcalloc(csrf_protect_ctx_pool, sizeof(*state));
		apr_hash_set(csrf_protect_sessions, apr_pmemdup(csrf_protect_ctx_pool, &ctx, sizeof(ctx)), sizeof(ctx),
		             state);
	}
	if (state && set)
		*state = set;
	v = state ? *state : 0;
#if APR_HAS_THREADS
	if (csrf_protect_ctx_lock)
		apr_thread_mutex_unlock(csrf_protect_ctx_lock);
#endif
	return v;
}

/* ------------------------------------------------------------------ */
/* Counters                                                            */
/* ------------------------------------------------------------------ */

/* One csrf_metrics for the whole server, in anonymous shared memory made
 * once in the parent (kept in the process pool across restarts, so
 * a graceful restart keeps counting) and inherited by every child of
 * the prefork, worker and event MPMs. The library's adds are atomic. */
static csrf_metrics *csrf_protect_metrics;

void csrf_protect_count_check(const csrf_result *res)
{
	csrf_metrics_count_check(csrf_protect_metrics, res);
}

void csrf_protect_count(csrf_metrics_verdict verdict, csrf_reason reason)
{
	csrf_metrics_count(csrf_protect_metrics, verdict, reason);
}

void csrf_protect_count_response(csrf_response_verdict verdict, const csrf_response *resp)
{
	csrf_metrics_count_response(csrf_protect_metrics, verdict, resp);
}

static int csrf_protect_metrics_shm(server_rec *s)
{
	apr_shm_t *shm = NULL;
	apr_pool_t *pp = s->process->pool;
	void *mem;

	apr_pool_userdata_get((void **)&shm, "csrf_protect_metrics", pp);
	if (shm == NULL) {
		apr_status_t rv = apr_shm_create(&shm, sizeof(csrf_metrics), NULL, pp);
		if (rv != APR_SUCCESS) {
			ap_log_error(APLOG_MARK, APLOG_EMERG, rv, s, "csrf: cannot make the counters' shared memory");
			return HTTP_INTERNAL_SERVER_ERROR;
		}
		apr_pool_userdata_set(shm, "csrf_protect_metrics", apr_pool_cleanup_null, pp);
	}
	mem = apr_shm_baseaddr_get(shm);
	if (!csrf_metrics_valid(mem, apr_shm_size_get(shm)))
		csrf_metrics_init(mem, 0);
	csrf_protect_metrics = mem;
	return OK;
}

/* SetHandler csrf-metrics: the counters in the Prometheus text format. */
static int csrf_protect_metrics_handler(request_rec *r)
{
	char *text;
	size_t len;

	if (r->handler == NULL || strcmp(r->handler, "csrf-metrics") != 0)
		return DECLINED;
	if (r->method_number != M_GET)
		return HTTP_METHOD_NOT_ALLOWED;
	text = apr_palloc(r->pool, CSRF_METRICS_TEXT_MAX);
	if (csrf_protect_metrics == NULL ||
	    csrf_metrics_render(csrf_protect_metrics, text, CSRF_METRICS_TEXT_MAX, &len) != CSRF_OK)
		return HTTP_INTERNAL_SERVER_ERROR;
	ap_set_content_type(r, CSRF_METRICS_CONTENT_TYPE);
	apr_table_setn(r->headers_out, "Cache-Control", "no-store");
	ap_set_content_length(r, (apr_off_t)len);
	if (!r->header_only)
		ap_rwrite(text, (int)len, r);
	return OK;
}

/* ------------------------------------------------------------------ */
/* Startup                                                             */
/* ------------------------------------------------------------------ */

/* Makes the context of settled settings c when it is on: 1 when it uses
 * the random key, 0, or -1 (and *why) when it cannot be made. */
static int csrf_protect_prebuild(apr_pool_t *ptemp, csrf_protect_conf *c, const char **why)
{
	if (c == NULL)
		return 0;
	c = csrf_protect_settled(ptemp, c);
	if (!c->enable)
		return 0;
	return csrf_protect_lookup(ptemp, c, why) == NULL ? -1 : c->key_file == NULL;
}

static int csrf_protect_post_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp, server_rec *s)
{
	server_rec *v;
	int random_used = 0, rc;
	const char *why = "";

	(void)plog;
	if (apr_pool_create(&csrf_protect_ctx_pool, pconf) != APR_SUCCESS)
		return HTTP_INTERNAL_SERVER_ERROR;
	csrf_protect_ctxs = apr_hash_make(csrf_protect_ctx_pool);
	csrf_protect_sessions = NULL;
	/* one random key for the whole configuration, so a cookie one
	 * section sets verifies in the others and in every child */
	if (csrf_random(csrf_protect_random_key, CSRF_KEY_LEN) != CSRF_OK) {
		ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, "csrf: the random generator failed");
		return HTTP_INTERNAL_SERVER_ERROR;
	}
	if (csrf_protect_metrics_shm(s) != OK)
		return HTTP_INTERNAL_SERVER_ERROR;

	/* The server's own settings, then each <Directory> and <Location>
	 * that sets any of the module's directives on top of them, alone and
	 * in pairs (a directory and a location, two nested ones), in the
	 * order Apache merges them: their contexts are made here, once, as
	 * root, who can read the key file; a child makes the context of a
	 * rarer combination itself. */
	for (v = s; v; v = v->next) {
		core_server_config *core = ap_get_core_module_config(v->module_config);
		apr_array_header_t *secs[2] = {core->sec_dir, core->sec_url};
		csrf_protect_conf *base = ap_get_module_config(v->lookup_defaults, &csrf_protect_module);
		apr_array_header_t *own = apr_array_make(ptemp, 8, sizeof(csrf_protect_conf *));

		if (base == NULL)
			continue;
		for (int k = 0; k < 2; k++) {
			for (int i = 0; secs[k] && i < secs[k]->nelts; i++) {
				ap_conf_vector_t *sec = APR_ARRAY_IDX(secs[k], i, ap_conf_vector_t *);
				csrf_protect_conf *c = ap_get_module_config(sec, &csrf_protect_module);
				if (c)
					*(csrf_protect_conf **)apr_array_push(own) = c;
			}
		}
		rc = csrf_protect_prebuild(ptemp, base, &why);
		for (int i = 0; rc >= 0 && i < own->nelts; i++) {
			csrf_protect_conf *one =
			    csrf_protect_merge(ptemp, base, APR_ARRAY_IDX(own, i, csrf_protect_conf *));
			for (int j = i; rc >= 0 && j < own->nelts; j++) {
				csrf_protect_conf *m =
				    j == i ? one
				           : csrf_protect_merge(ptemp, one, APR_ARRAY_IDX(own, j, csrf_protect_conf *));
				int got = csrf_protect_prebuild(ptemp, m, &why);
				rc = got < 0 ? got : rc | got;
			}
		}
		if (rc < 0) {
			ap_log_error(APLOG_MARK, APLOG_EMERG, 0, v, "csrf: %s", why);
			return HTTP_INTERNAL_SERVER_ERROR;
		}
		random_used |= rc;
	}
	if (random_used)
		ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s,
		             "csrf: no CSRFKeyFile, using a random key until Apache restarts; tokens will not verify "
		             "on other servers");
	return OK;
}

static void csrf_protect_child_init(apr_pool_t *p, server_rec *s)
{
#if APR_HAS_THREADS
	if (apr_thread_mutex_create(&csrf_protect_ctx_lock, APR_THREAD_MUTEX_DEFAULT, p) != APR_SUCCESS) {
		/* no lock: threads would change the contexts' table and pool
		 * at once; this child judges no request (500), it fails closed */
		csrf_protect_ctx_lock = NULL;
		csrf_protect_no_lock = 1;
		ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s,
		             "csrf: cannot create the contexts' lock: this child answers protected requests with 500");
	}
#else
	(void)p;
	(void)s;
#endif
}

static void csrf_protect_register_hooks(apr_pool_t *p)
{
	(void)p;
	ap_hook_post_config(csrf_protect_post_config, NULL, NULL, APR_HOOK_MIDDLE);
	ap_hook_child_init(csrf_protect_child_init, NULL, NULL, APR_HOOK_MIDDLE);
	/* first among the fixups: before mod_rewrite's per-directory rules
	 * hand the request to another handler */
	ap_hook_fixups(csrf_protect_fixups, NULL, NULL, APR_HOOK_REALLY_FIRST);
	/* a rejected request gets the module's answer before any handler */
	ap_hook_handler(csrf_protect_reject_handler, NULL, NULL, APR_HOOK_REALLY_FIRST);
	ap_hook_handler(csrf_protect_metrics_handler, NULL, NULL, APR_HOOK_MIDDLE);
	ap_hook_insert_filter(csrf_protect_insert_filter, NULL, NULL, APR_HOOK_REALLY_LAST);
	ap_register_input_filter(CSRF_PROTECT_BODY_FILTER, csrf_protect_body_filter, NULL, AP_FTYPE_CONTENT_SET);
	/* the last resource filter (csrf_protect_insert_filter): after
	 * mod_include, mod_substitute and mod_sed, before mod_deflate */
	ap_register_output_filter(CSRF_PROTECT_FILTER, csrf_protect_output_filter, NULL, AP_FTYPE_RESOURCE);
	ap_register_output_filter(CSRF_PROTECT_REJECT_FILTER, csrf_protect_reject_filter, NULL,
	                          (ap_filter_type)(AP_FTYPE_CONTENT_SET + 5));
	/* a page with tokens stays private whatever mod_headers and
	 * mod_expires add after the injecting filter: added while the page
	 * streams, it comes after their filters (inserted before the
	 * handler) and before mod_cache's CACHE_SAVE (content set + 1),
	 * which would store it */
	ap_register_output_filter(CSRF_PROTECT_CACHE_FILTER, csrf_protect_cache_filter, NULL, AP_FTYPE_CONTENT_SET);
}

AP_DECLARE_MODULE(csrf_protect) = {
    STANDARD20_MODULE_STUFF,
    csrf_protect_create, /* per-directory configuration */
    csrf_protect_merge,  /* its merge */
    NULL,                /* per-server configuration */
    NULL,                /* its merge */
    csrf_protect_cmds,
    csrf_protect_register_hooks,
    0, /* flags */
};
