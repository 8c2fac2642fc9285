/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ngx_http_csrf_module - libcsrf in front of an unchanged application.
 *
 * This file: the directives and the configuration (see ngx_http_csrf.h
 * for the other files, one per phase).
 *
 * Owns the nginx side only: directives, the access phase (the request
 * handed to the library header by header, the body read when the library
 * asks for it, the verdict kept across internal redirects, the upstream
 * asked for an uncompressed page where tokens go in), and the header and
 * body filters that hold an HTML response's header and first bytes until
 * the library knows its charset, then hand it to the library's page call
 * and streaming injector (or pass it untouched). Every decision (method,
 * fetch metadata, origin, referer, token, cookies, which responses are
 * rewritten and in which charsets, where a token goes in HTML, the CSP)
 * is the library's.
 */

#include "ngx_http_csrf.h"

static char *ngx_http_csrf_set_checked(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static char *ngx_http_csrf_set_session_cookie(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static char *ngx_http_csrf_status(ngx_conf_t *cf, void *post, void *data);

typedef csrf_reason (*ngx_http_csrf_check_pt)(ngx_conf_t *cf, ngx_str_t *value, csrf_error *err);
static csrf_reason ngx_http_csrf_check_origin(ngx_conf_t *cf, ngx_str_t *v, csrf_error *err);
static csrf_reason ngx_http_csrf_check_trusted(ngx_conf_t *cf, ngx_str_t *v, csrf_error *err);
static csrf_reason ngx_http_csrf_check_key_file(ngx_conf_t *cf, ngx_str_t *v, csrf_error *err);

static ngx_int_t ngx_http_csrf_add_variables(ngx_conf_t *cf);
static void *ngx_http_csrf_create_main_conf(ngx_conf_t *cf);
static void *ngx_http_csrf_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_csrf_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child);
static ngx_int_t ngx_http_csrf_init(ngx_conf_t *cf);

static ngx_conf_enum_t ngx_http_csrf_modes[] = {{ngx_string("both"), CSRF_MODE_BOTH},
                                                {ngx_string("token"), CSRF_MODE_TOKEN},
                                                {ngx_string("origin"), CSRF_MODE_ORIGIN},
                                                {ngx_string("origin_or_token"), CSRF_MODE_ORIGIN_OR_TOKEN},
                                                {ngx_null_string, 0}};

static ngx_conf_enum_t ngx_http_csrf_actions[] = {{ngx_string("deny"), NGX_HTTP_CSRF_ACTION_DENY},
                                                  {ngx_string("log"), NGX_HTTP_CSRF_ACTION_LOG},
                                                  {ngx_null_string, 0}};

static ngx_conf_post_handler_pt ngx_http_csrf_status_p = ngx_http_csrf_status;
static ngx_conf_num_bounds_t ngx_http_csrf_issue_version_p = {ngx_conf_check_num_bounds, 2, 4};

#define NGX_HTTP_CSRF_CONF (NGX_HTTP_MAIN_CONF | NGX_HTTP_SRV_CONF | NGX_HTTP_LOC_CONF)

static ngx_command_t ngx_http_csrf_commands[] = {
    {ngx_string("csrf"), NGX_HTTP_CSRF_CONF | NGX_CONF_FLAG, ngx_conf_set_flag_slot, NGX_HTTP_LOC_CONF_OFFSET,
     offsetof(ngx_http_csrf_loc_conf_t, enable), NULL},

    {ngx_string("csrf_mode"), NGX_HTTP_CSRF_CONF | NGX_CONF_TAKE1, ngx_conf_set_enum_slot, NGX_HTTP_LOC_CONF_OFFSET,
     offsetof(ngx_http_csrf_loc_conf_t, mode), &ngx_http_csrf_modes},

    {ngx_string("csrf_origin"), NGX_HTTP_CSRF_CONF | NGX_CONF_TAKE1, ngx_http_csrf_set_checked,
     NGX_HTTP_LOC_CONF_OFFSET, offsetof(ngx_http_csrf_loc_conf_t, origin), (void *)ngx_http_csrf_check_origin},

    {ngx_string("csrf_trusted_origin"), NGX_HTTP_CSRF_CONF | NGX_CONF_TAKE1, ngx_http_csrf_set_checked,
     NGX_HTTP_LOC_CONF_OFFSET, offsetof(ngx_http_csrf_loc_conf_t, trusted), (void *)ngx_http_csrf_check_trusted},

    {ngx_string("csrf_key_file"), NGX_HTTP_CSRF_CONF | NGX_CONF_TAKE1, ngx_http_csrf_set_checked,
     NGX_HTTP_LOC_CONF_OFFSET, offsetof(ngx_http_csrf_loc_conf_t, key_file), (void *)ngx_http_csrf_check_key_file},

    {ngx_string("csrf_session_cookie"), NGX_HTTP_CSRF_CONF | NGX_CONF_1MORE, ngx_http_csrf_set_session_cookie,
     NGX_HTTP_LOC_CONF_OFFSET, 0, NULL},

    {ngx_string("csrf_inject"), NGX_HTTP_CSRF_CONF | NGX_CONF_FLAG, ngx_conf_set_flag_slot, NGX_HTTP_LOC_CONF_OFFSET,
     offsetof(ngx_http_csrf_loc_conf_t, inject), NULL},

    {ngx_string("csrf_action"), NGX_HTTP_CSRF_CONF | NGX_CONF_TAKE1, ngx_conf_set_enum_slot, NGX_HTTP_LOC_CONF_OFFSET,
     offsetof(ngx_http_csrf_loc_conf_t, action), &ngx_http_csrf_actions},

    {ngx_string("csrf_body_max"), NGX_HTTP_CSRF_CONF | NGX_CONF_TAKE1, ngx_conf_set_size_slot, NGX_HTTP_LOC_CONF_OFFSET,
     offsetof(ngx_http_csrf_loc_conf_t, body_max), NULL},

    {ngx_string("csrf_unsafe_get"), NGX_HTTP_CSRF_CONF | NGX_CONF_FLAG, ngx_conf_set_flag_slot,
     NGX_HTTP_LOC_CONF_OFFSET, offsetof(ngx_http_csrf_loc_conf_t, unsafe_get), NULL},

    {ngx_string("csrf_status"), NGX_HTTP_CSRF_CONF | NGX_CONF_TAKE1, ngx_conf_set_num_slot, NGX_HTTP_LOC_CONF_OFFSET,
     offsetof(ngx_http_csrf_loc_conf_t, status), &ngx_http_csrf_status_p},

    {ngx_string("csrf_issue_version"), NGX_HTTP_CSRF_CONF | NGX_CONF_TAKE1, ngx_conf_set_num_slot,
     NGX_HTTP_LOC_CONF_OFFSET, offsetof(ngx_http_csrf_loc_conf_t, issue_version), &ngx_http_csrf_issue_version_p},

    {ngx_string("csrf_max_age"), NGX_HTTP_CSRF_CONF | NGX_CONF_TAKE1, ngx_conf_set_sec_slot, NGX_HTTP_LOC_CONF_OFFSET,
     offsetof(ngx_http_csrf_loc_conf_t, max_age), NULL},

    {ngx_string("csrf_form_action_csp"), NGX_HTTP_CSRF_CONF | NGX_CONF_FLAG, ngx_conf_set_flag_slot,
     NGX_HTTP_LOC_CONF_OFFSET, offsetof(ngx_http_csrf_loc_conf_t, form_action_csp), NULL},

    {ngx_string("csrf_referrer_same_origin"), NGX_HTTP_CSRF_CONF | NGX_CONF_FLAG, ngx_conf_set_flag_slot,
     NGX_HTTP_LOC_CONF_OFFSET, offsetof(ngx_http_csrf_loc_conf_t, referrer_same_origin), NULL},

    {ngx_string("csrf_retry_token"), NGX_HTTP_CSRF_CONF | NGX_CONF_FLAG, ngx_conf_set_flag_slot,
     NGX_HTTP_LOC_CONF_OFFSET, offsetof(ngx_http_csrf_loc_conf_t, retry_token), NULL},

    ngx_null_command};

static ngx_http_module_t ngx_http_csrf_module_ctx = {
    ngx_http_csrf_add_variables,    /* preconfiguration */
    ngx_http_csrf_init,             /* postconfiguration */
    ngx_http_csrf_create_main_conf, /* create main configuration */
    NULL,                           /* init main configuration */
    NULL,                           /* create server configuration */
    NULL,                           /* merge server configuration */
    ngx_http_csrf_create_loc_conf,  /* create location configuration */
    ngx_http_csrf_merge_loc_conf    /* merge location configuration */
};

ngx_module_t ngx_http_csrf_module = {NGX_MODULE_V1,
                                     &ngx_http_csrf_module_ctx, /* module context */
                                     ngx_http_csrf_commands,    /* module directives */
                                     NGX_HTTP_MODULE,           /* module type */
                                     NULL,                      /* init master */
                                     NULL,                      /* init module */
                                     NULL,                      /* init process */
                                     NULL,                      /* init thread */
                                     NULL,                      /* exit thread */
                                     NULL,                      /* exit process */
                                     NULL,                      /* exit master */
                                     NGX_MODULE_V1_PADDING};

static ngx_str_t ngx_http_csrf_result_name = ngx_string("csrf_result");

static void ngx_http_csrf_ctx_cleanup(void *data)
{
	csrf_ctx_free(data);
}

/* A new library context freed with the configuration's pool. */
static csrf_ctx *ngx_http_csrf_ctx_new(ngx_conf_t *cf)
{
	csrf_ctx *ctx;
	ngx_pool_cleanup_t *cln;

	cln = ngx_pool_cleanup_add(cf->pool, 0);
	if (cln == NULL) {
		return NULL;
	}

	if (csrf_ctx_new(&ctx, NULL) != CSRF_OK) {
		return NULL;
	}

	cln->handler = ngx_http_csrf_ctx_cleanup;
	cln->data = ctx;

	return ctx;
}

static void *ngx_http_csrf_create_main_conf(ngx_conf_t *cf)
{
	ngx_http_csrf_main_conf_t *cmcf;

	cmcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_csrf_main_conf_t));
	if (cmcf == NULL) {
		return NULL;
	}

	return cmcf;
}

static void *ngx_http_csrf_create_loc_conf(ngx_conf_t *cf)
{
	ngx_http_csrf_loc_conf_t *conf;

	conf = ngx_pcalloc(cf->pool, sizeof(ngx_http_csrf_loc_conf_t));
	if (conf == NULL) {
		return NULL;
	}

	/*
	 * set by ngx_pcalloc():
	 *
	 *     conf->origin = { 0, NULL };
	 *     conf->key_file = { 0, NULL };
	 *     conf->session_names = { 0, NULL };
	 *     conf->session_seen = 0;
	 *     conf->session_warned = 0;
	 *     conf->ctx = NULL;
	 */

	conf->enable = NGX_CONF_UNSET;
	conf->mode = NGX_CONF_UNSET_UINT;
	conf->trusted = NGX_CONF_UNSET_PTR;
	conf->session_cookie = NGX_CONF_UNSET_PTR;
	conf->inject = NGX_CONF_UNSET;
	conf->action = NGX_CONF_UNSET_UINT;
	conf->body_max = NGX_CONF_UNSET_SIZE;
	conf->unsafe_get = NGX_CONF_UNSET;
	conf->status = NGX_CONF_UNSET;
	conf->max_age = NGX_CONF_UNSET;
	conf->issue_version = NGX_CONF_UNSET;
	conf->form_action_csp = NGX_CONF_UNSET;
	conf->referrer_same_origin = NGX_CONF_UNSET;
	conf->retry_token = NGX_CONF_UNSET;

	return conf;
}

static char *ngx_http_csrf_config_error(ngx_conf_t *cf, csrf_ctx *ctx, const char *what, csrf_reason rc)
{
	const char *msg;

	msg = csrf_ctx_error(ctx);
	if (msg == NULL || msg[0] == '\0') {
		msg = csrf_reason_str(rc);
	}

	ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%s: %s", what, msg);

	return NGX_CONF_ERROR;
}

/* Validators of directive arguments: the library's checks and words. */
static csrf_reason ngx_http_csrf_check_origin(ngx_conf_t *cf, ngx_str_t *v, csrf_error *err)
{
	(void)cf;
	return csrf_origin_validate((const char *)v->data, v->len, "self origin", err);
}

static csrf_reason ngx_http_csrf_check_trusted(ngx_conf_t *cf, ngx_str_t *v, csrf_error *err)
{
	(void)cf;
	return csrf_origin_validate((const char *)v->data, v->len, "trusted origin", err);
}

static csrf_reason ngx_http_csrf_check_key_file(ngx_conf_t *cf, ngx_str_t *v, csrf_error *err)
{
	size_t n;
	csrf_key_info keys[CSRF_KEYS_MAX];

	if (ngx_conf_full_name(cf->cycle, v, 1) != NGX_OK) {
		return CSRF_ERR_NOMEM;
	}

	return csrf_keyfile_list((const char *)v->data, keys, CSRF_KEYS_MAX, &n, err);
}

/* A directive with one checked argument: cmd->post validates it, then it
 * is kept in the ngx_str_t at cmd->offset, or appended to the array
 * there (csrf_trusted_origin). */
static char *ngx_http_csrf_set_checked(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
	ngx_str_t *value, *field;
	ngx_array_t **list;
	csrf_error err;
	csrf_reason rc;
	ngx_http_csrf_check_pt check = (ngx_http_csrf_check_pt)cmd->post;

	value = cf->args->elts;

	rc = check(cf, &value[1], &err);
	if (rc != CSRF_OK) {
		ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%V: %s", &cmd->name,
		                   err.msg[0] ? err.msg : csrf_reason_str(rc));
		return NGX_CONF_ERROR;
	}

	if (check == ngx_http_csrf_check_trusted) {
		list = (ngx_array_t **)((char *)conf + cmd->offset);
		if (*list == NGX_CONF_UNSET_PTR) {
			*list = ngx_array_create(cf->pool, 2, sizeof(ngx_str_t));
			if (*list == NULL) {
				return NGX_CONF_ERROR;
			}
		}
		field = ngx_array_push(*list);
		if (field == NULL) {
			return NGX_CONF_ERROR;
		}
		*field = value[1];
		return NGX_CONF_OK;
	}

	field = (ngx_str_t *)((char *)conf + cmd->offset);
	if (field->data) {
		return "is duplicate";
	}

	*field = value[1];

	return NGX_CONF_OK;
}

/* csrf_session_cookie NAME...: up to CSRF_SESSION_COOKIES_MAX cookie
 * names, each once; the library's binding rule in csrf.h. */
static char *ngx_http_csrf_set_session_cookie(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
	ngx_http_csrf_loc_conf_t *clcf = conf;
	ngx_str_t *value, *name;
	ngx_uint_t i, j;
	size_t len;
	u_char *p;
	csrf_error err;

	if (clcf->session_cookie != NGX_CONF_UNSET_PTR) {
		return "is duplicate";
	}

	value = cf->args->elts;
	if (cf->args->nelts - 1 > CSRF_SESSION_COOKIES_MAX) {
		ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%V: at most %d names", &cmd->name, CSRF_SESSION_COOKIES_MAX);
		return NGX_CONF_ERROR;
	}

	clcf->session_cookie = ngx_array_create(cf->pool, cf->args->nelts - 1, sizeof(ngx_str_t));
	if (clcf->session_cookie == NULL) {
		return NGX_CONF_ERROR;
	}

	len = 0;
	for (i = 1; i < cf->args->nelts; i++) {
		/* configuration arguments are NUL-terminated */
		if (csrf_cookie_name_validate((const char *)value[i].data, "session cookie", &err) != CSRF_OK) {
			ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%V: %s", &cmd->name, err.msg);
			return NGX_CONF_ERROR;
		}
		for (j = 1; j < i; j++) {
			if (value[j].len == value[i].len &&
			    ngx_strncmp(value[j].data, value[i].data, value[i].len) == 0) {
				ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%V: \"%V\" is named twice", &cmd->name,
				                   &value[i]);
				return NGX_CONF_ERROR;
			}
		}
		name = ngx_array_push(clcf->session_cookie);
		if (name == NULL) {
			return NGX_CONF_ERROR;
		}
		*name = value[i];
		len += value[i].len + 1;
	}

	p = ngx_pnalloc(cf->pool, len);
	if (p == NULL) {
		return NGX_CONF_ERROR;
	}
	clcf->session_names.data = p;
	for (i = 1; i < cf->args->nelts; i++) {
		p = ngx_cpymem(p, value[i].data, value[i].len);
		*p++ = ' ';
	}
	clcf->session_names.len = len - 1;

	return NGX_CONF_OK;
}

static char *ngx_http_csrf_status(ngx_conf_t *cf, void *post, void *data)
{
	ngx_int_t *np = data;

	(void)cf;
	(void)post;

	if (*np < 400 || *np > 599) {
		return "must be between 400 and 599";
	}

	return NGX_CONF_OK;
}

static ngx_int_t ngx_http_csrf_same_str(ngx_str_t *a, ngx_str_t *b)
{
	return a->len == b->len && (a->len == 0 || ngx_strncmp(a->data, b->data, a->len) == 0);
}

/* A new library context with a location's settings (all but its keys). */
static csrf_ctx *ngx_http_csrf_configure(ngx_conf_t *cf, ngx_http_csrf_loc_conf_t *conf)
{
	ngx_uint_t i;
	ngx_str_t *s;
	csrf_ctx *ctx;
	csrf_reason rc;

	ctx = ngx_http_csrf_ctx_new(cf);
	if (ctx == NULL) {
		return NULL;
	}

	csrf_ctx_set_mode(ctx, (csrf_mode)conf->mode);
	csrf_ctx_set_report_only(ctx, conf->action == NGX_HTTP_CSRF_ACTION_LOG);
	csrf_ctx_set_unsafe_get(ctx, (int)conf->unsafe_get);
	csrf_ctx_set_body_max(ctx, conf->body_max);
	csrf_ctx_set_max_age(ctx, (uint32_t)conf->max_age);
	rc = csrf_ctx_set_issue_version(ctx, (unsigned)conf->issue_version);
	if (rc != CSRF_OK) {
		ngx_http_csrf_config_error(cf, ctx, "csrf_issue_version", rc);
		return NULL;
	}
	csrf_ctx_set_form_action_csp(ctx, (int)conf->form_action_csp);
	csrf_ctx_set_referrer_same_origin(ctx, (int)conf->referrer_same_origin);
	csrf_ctx_set_retry_token(ctx, (int)conf->retry_token);

	if (conf->origin.len) {
		rc = csrf_ctx_set_self_origin(ctx, (const char *)conf->origin.data, conf->origin.len);
		if (rc != CSRF_OK) {
			ngx_http_csrf_config_error(cf, ctx, "csrf_origin", rc);
			return NULL;
		}
	}

	if (conf->trusted) {
		s = conf->trusted->elts;
		for (i = 0; i < conf->trusted->nelts; i++) {
			rc = csrf_ctx_add_trusted_origin(ctx, (const char *)s[i].data, s[i].len);
			if (rc != CSRF_OK) {
				ngx_http_csrf_config_error(cf, ctx, "csrf_trusted_origin", rc);
				return NULL;
			}
		}
	}

	if (conf->session_cookie) {
		s = conf->session_cookie->elts;
		for (i = 0; i < conf->session_cookie->nelts; i++) {
			rc = i == 0 ? csrf_ctx_set_session_cookie(ctx, (const char *)s[i].data)
			            : csrf_ctx_add_session_cookie(ctx, (const char *)s[i].data);
			if (rc != CSRF_OK) {
				ngx_http_csrf_config_error(cf, ctx, "csrf_session_cookie", rc);
				return NULL;
			}
		}
	}

	return ctx;
}

/* The library context of a location: the parent's when every setting it
 * depends on is inherited unchanged, else a new one. */
static char *ngx_http_csrf_build_ctx(ngx_conf_t *cf, ngx_http_csrf_loc_conf_t *prev, ngx_http_csrf_loc_conf_t *conf)
{
	csrf_ctx *ctx;
	csrf_reason rc;
	ngx_http_csrf_main_conf_t *cmcf;

	if (prev->ctx && prev->mode == conf->mode && prev->action == conf->action &&
	    prev->unsafe_get == conf->unsafe_get && prev->trusted == conf->trusted &&
	    prev->body_max == conf->body_max && prev->max_age == conf->max_age &&
	    prev->issue_version == conf->issue_version && prev->form_action_csp == conf->form_action_csp &&
	    prev->retry_token == conf->retry_token && prev->referrer_same_origin == conf->referrer_same_origin &&
	    ngx_http_csrf_same_str(&prev->origin, &conf->origin) &&
	    ngx_http_csrf_same_str(&prev->key_file, &conf->key_file) && prev->session_cookie == conf->session_cookie) {
		conf->ctx = prev->ctx;
		return NGX_CONF_OK;
	}

	ctx = ngx_http_csrf_configure(cf, conf);
	if (ctx == NULL) {
		return NGX_CONF_ERROR;
	}

	if (conf->key_file.len) {
		rc = csrf_ctx_load_key_file(ctx, (const char *)conf->key_file.data);
		if (rc != CSRF_OK) {
			return ngx_http_csrf_config_error(cf, ctx, "csrf_key_file", rc);
		}

	} else {
		/* one random key for every location of this configuration, so
		 * a cookie set by one location verifies in the others */
		cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_csrf_module);

		if (!cmcf->have_key) {
			if (csrf_random(cmcf->key, CSRF_KEY_LEN) != CSRF_OK) {
				ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "csrf: the random generator failed");
				return NGX_CONF_ERROR;
			}
			cmcf->have_key = 1;
			ngx_conf_log_error(NGX_LOG_WARN, cf, 0,
			                   "csrf: no \"csrf_key_file\", using a random key until nginx restarts or "
			                   "reloads; tokens will not verify on other servers");
		}

		rc = csrf_ctx_add_key(ctx, 1, cmcf->key, 1);
		if (rc != CSRF_OK) {
			return ngx_http_csrf_config_error(cf, ctx, "csrf", rc);
		}
	}

	conf->ctx = ctx;

	return NGX_CONF_OK;
}

static char *ngx_http_csrf_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
	ngx_http_csrf_loc_conf_t *prev = parent;
	ngx_http_csrf_loc_conf_t *conf = child;

	ngx_conf_merge_value(conf->enable, prev->enable, 0);
	ngx_conf_merge_uint_value(conf->mode, prev->mode, CSRF_MODE_ADAPTER_DEFAULT);
	ngx_conf_merge_str_value(conf->origin, prev->origin, "");
	ngx_conf_merge_ptr_value(conf->trusted, prev->trusted, NULL);
	ngx_conf_merge_str_value(conf->key_file, prev->key_file, "");
	ngx_conf_merge_ptr_value(conf->session_cookie, prev->session_cookie, NULL);
	ngx_conf_merge_str_value(conf->session_names, prev->session_names, "");
	ngx_conf_merge_value(conf->inject, prev->inject, 1);
	ngx_conf_merge_uint_value(conf->action, prev->action, NGX_HTTP_CSRF_ACTION_DENY);
	ngx_conf_merge_size_value(conf->body_max, prev->body_max, CSRF_DEFAULT_BODY_MAX);
	ngx_conf_merge_value(conf->unsafe_get, prev->unsafe_get, 0);
	ngx_conf_merge_value(conf->status, prev->status, NGX_HTTP_FORBIDDEN);
	ngx_conf_merge_sec_value(conf->max_age, prev->max_age, 0);
	ngx_conf_merge_value(conf->issue_version, prev->issue_version, 4);
	ngx_conf_merge_value(conf->form_action_csp, prev->form_action_csp, 0);
	ngx_conf_merge_value(conf->referrer_same_origin, prev->referrer_same_origin, 0);
	ngx_conf_merge_value(conf->retry_token, prev->retry_token, 0);

	if (!conf->enable) {
		return NGX_CONF_OK;
	}

	return ngx_http_csrf_build_ctx(cf, prev, conf);
}

static ngx_int_t ngx_http_csrf_add_variables(ngx_conf_t *cf)
{
	ngx_http_variable_t *var;

	var = ngx_http_add_variable(cf, &ngx_http_csrf_result_name, NGX_HTTP_VAR_NOCACHEABLE);
	if (var == NULL) {
		return NGX_ERROR;
	}

	var->get_handler = ngx_http_csrf_result_variable;

	return NGX_OK;
}

static ngx_int_t ngx_http_csrf_init(ngx_conf_t *cf)
{
	ngx_http_handler_pt *h;
	ngx_http_core_main_conf_t *cmcf;

	cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module);

	h = ngx_array_push(&cmcf->phases[NGX_HTTP_ACCESS_PHASE].handlers);
	if (h == NULL) {
		return NGX_ERROR;
	}

	*h = ngx_http_csrf_access_handler;

	ngx_http_csrf_filter_init();
	ngx_http_csrf_request_body_filter_init();

	return NGX_OK;
}
