/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ngx_http_csrf_module - libcsrf in front of an unchanged application.
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

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "csrf.h"
#include "ngx_http_csrf_metrics.h"

#define NGX_HTTP_CSRF_ACTION_DENY 0
#define NGX_HTTP_CSRF_ACTION_LOG 1

typedef struct {
	ngx_flag_t enable;
	ngx_uint_t mode;
	ngx_str_t origin;
	ngx_array_t *trusted; /* of ngx_str_t */
	ngx_str_t key_file;
	ngx_array_t *session_cookie; /* of ngx_str_t: the names csrf_session_cookie gives */
	ngx_str_t session_names;     /* the same, as written, for the log */
	ngx_flag_t inject;
	ngx_uint_t action;
	size_t body_max;
	ngx_flag_t unsafe_get;
	ngx_int_t status;
	time_t max_age;
	ngx_flag_t form_action_csp;

	csrf_ctx *ctx;       /* built in merge when enable is on */
	csrf_slice *origins; /* the trusted origins as slices, for the CSP */
	size_t csp_len;      /* the length of the CSP value without an upstream one */

	/* this worker's: a session cookie seen at this location, the warning
	 * about one never seen given */
	ngx_uint_t session_seen;
	ngx_uint_t session_warned;
} ngx_http_csrf_loc_conf_t;

typedef struct {
	uint8_t key[CSRF_KEY_LEN];
	ngx_uint_t have_key;
} ngx_http_csrf_main_conf_t;

/* The verdict on a request. It lives in a cleanup of the request's pool,
 * not in the module's request context, because an internal redirect
 * (error_page, named locations) erases every module context: a rejected
 * request must stay rejected wherever it goes next. */
typedef struct {
	csrf_reason reason;
	csrf_ctx *ctx;     /* the location's context that judged */
	ngx_int_t pending; /* the status to answer on the access phase's re-entry after the body was read */
	unsigned checked : 1;
	unsigned rejected : 1;
	unsigned report_only : 1;
} ngx_http_csrf_verdict_t;

typedef struct {
	/* access phase */
	csrf_request req; /* slices into r's headers, reused by the body handler */
	u_char body_size[NGX_OFF_T_LEN];

	/* filters */
	ngx_str_t content_type; /* as the browser receives it, for the charset */
	u_char *held;           /* the body's first bytes while the charset is unknown */
	size_t held_len;
	ngx_chain_t *held_cl; /* their buf, with the flags of the input bufs they came from */
	ngx_uint_t holding;   /* the header waits with the first bytes for the charset */
	csrf_inject *inj;
	ngx_chain_t *out;
	ngx_chain_t **last_out;
	ngx_chain_t *busy;
	ngx_chain_t *free; /* sent output bufs, NGX_HTTP_CSRF_BUF_SIZE each */
	ngx_buf_t *cur;    /* the output buf being filled from the current input */
	off_t left;        /* body bytes still to come, when the response said (else -1) */
	ngx_uint_t ended;  /* the last byte has been read: the response's end went out with it */
	ngx_uint_t failed;
} ngx_http_csrf_ctx_t;

/* The injector's output is copied into buffers of this size: a response
 * leaves in a few large pieces instead of one small buf (and one iovec)
 * per pass-through run and per inserted element. */
#define NGX_HTTP_CSRF_BUF_SIZE 8192

static ngx_int_t ngx_http_csrf_access_handler(ngx_http_request_t *r);
static void ngx_http_csrf_body_handler(ngx_http_request_t *r);
static void ngx_http_csrf_reject_body_handler(ngx_http_request_t *r);
static ngx_int_t ngx_http_csrf_header_filter(ngx_http_request_t *r);
static ngx_int_t ngx_http_csrf_body_filter(ngx_http_request_t *r, ngx_chain_t *in);
static ngx_int_t ngx_http_csrf_add_header(ngx_http_request_t *r, const char *key, const u_char *value, size_t len);
static ngx_int_t ngx_http_csrf_result_variable(ngx_http_request_t *r, ngx_http_variable_value_t *v, uintptr_t data);

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

    {ngx_string("csrf_max_age"), NGX_HTTP_CSRF_CONF | NGX_CONF_TAKE1, ngx_conf_set_sec_slot, NGX_HTTP_LOC_CONF_OFFSET,
     offsetof(ngx_http_csrf_loc_conf_t, max_age), NULL},

    {ngx_string("csrf_form_action_csp"), NGX_HTTP_CSRF_CONF | NGX_CONF_FLAG, ngx_conf_set_flag_slot,
     NGX_HTTP_LOC_CONF_OFFSET, offsetof(ngx_http_csrf_loc_conf_t, form_action_csp), NULL},

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

static ngx_http_output_header_filter_pt ngx_http_next_header_filter;
static ngx_http_output_body_filter_pt ngx_http_next_body_filter;

static ngx_str_t ngx_http_csrf_result_name = ngx_string("csrf_result");

/* ------------------------------------------------------------------ */
/* Request helpers                                                     */
/* ------------------------------------------------------------------ */

static csrf_slice ngx_http_csrf_slice(ngx_str_t *s)
{
	csrf_slice sl;

	sl.ptr = (const char *)s->data;
	sl.len = s->len;
	return sl;
}

/* Calls handler for every header of list; stops at the first that does
 * not answer NGX_OK and returns what it answered. */
typedef ngx_int_t (*ngx_http_csrf_header_pt)(ngx_table_elt_t *h, void *data);

static ngx_int_t ngx_http_csrf_each_header(ngx_list_t *list, ngx_http_csrf_header_pt handler, void *data)
{
	ngx_int_t rc;
	ngx_uint_t i;
	ngx_list_part_t *part;
	ngx_table_elt_t *h;

	part = &list->part;
	h = part->elts;

	for (i = 0; /* void */; i++) {
		if (i >= part->nelts) {
			if (part->next == NULL) {
				break;
			}
			part = part->next;
			h = part->elts;
			i = 0;
		}
		rc = handler(&h[i], data);
		if (rc != NGX_OK) {
			return rc;
		}
	}

	return NGX_OK;
}

static ngx_int_t ngx_http_csrf_file_header(ngx_table_elt_t *h, void *data)
{
	csrf_request_header(data, (const char *)h->key.data, h->key.len, (const char *)h->value.data, h->value.len);
	return NGX_OK;
}

/* The request as the library reads it: method, target, the connection's
 * scheme, and every request header handed over by name. */
static void ngx_http_csrf_request(ngx_http_request_t *r, csrf_request *req)
{
	csrf_request_init(req);

	req->method = ngx_http_csrf_slice(&r->method_name);
	req->target = ngx_http_csrf_slice(&r->unparsed_uri);

#if (NGX_HTTP_SSL)
	if (r->connection->ssl) {
		req->scheme.ptr = "https";
		req->scheme.len = 5;
	} else
#endif
	{
		req->scheme.ptr = "http";
		req->scheme.len = 4;
	}

	(void)ngx_http_csrf_each_header(&r->headers_in.headers, ngx_http_csrf_file_header, req);

	if (r->headers_in.chunked && req->transfer_encoding.ptr == NULL) {
		/* an HTTP/2 body without Content-Length */
		csrf_request_header(req, "Transfer-Encoding", 17, "chunked", 7);
	}
}

static void ngx_http_csrf_verdict_cleanup(void *data)
{
	(void)data;
}

/* The request's verdict, created on demand (NULL when create is 0 and
 * there is none, or when memory runs out). */
static ngx_http_csrf_verdict_t *ngx_http_csrf_verdict(ngx_http_request_t *r, ngx_uint_t create)
{
	ngx_pool_cleanup_t *cln;

	for (cln = r->main->pool->cleanup; cln; cln = cln->next) {
		if (cln->handler == ngx_http_csrf_verdict_cleanup) {
			return cln->data;
		}
	}

	if (!create) {
		return NULL;
	}

	cln = ngx_pool_cleanup_add(r->main->pool, sizeof(ngx_http_csrf_verdict_t));
	if (cln == NULL) {
		return NULL;
	}

	ngx_memzero(cln->data, sizeof(ngx_http_csrf_verdict_t));
	cln->handler = ngx_http_csrf_verdict_cleanup;

	return cln->data;
}

static ngx_http_csrf_ctx_t *ngx_http_csrf_get_ctx(ngx_http_request_t *r)
{
	ngx_http_csrf_ctx_t *ctx;

	ctx = ngx_http_get_module_ctx(r, ngx_http_csrf_module);
	if (ctx) {
		return ctx;
	}

	ctx = ngx_pcalloc(r->pool, sizeof(ngx_http_csrf_ctx_t));
	if (ctx == NULL) {
		return NULL;
	}

	ctx->left = -1;
	ngx_http_set_ctx(r, ctx, ngx_http_csrf_module);

	return ctx;
}

/* ------------------------------------------------------------------ */
/* Access phase                                                        */
/* ------------------------------------------------------------------ */

/* A log line of the module: the client's address, the method and the
 * path without its query, then the message. nginx's own context (which
 * appends the whole request line, query included) is left out: an
 * application that serialises a form into a URL would put the token
 * there. */
#define ngx_http_csrf_log(level, r, fmt, ...)                                                                          \
	do {                                                                                                           \
		ngx_log_t log_ = *(r)->connection->log;                                                                \
		log_.handler = NULL;                                                                                   \
		ngx_log_error(level, &log_, 0, "csrf: " fmt ", client: %V", __VA_ARGS__, &(r)->connection->addr_text); \
	} while (0)

/* A rejected request that an internal redirect (error_page) sends on
 * continues as a GET without its body or a method override (a named
 * location would otherwise keep the method and the body this module
 * read): the upstream never receives the forged request. */
/* The headers a rejected request loses before it goes on: the method
 * overrides, and its credentials (Cookie, Authorization), so that where an
 * error_page sends it the application sees an anonymous visitor. A header
 * is renamed and emptied: upstreams copy the list, so it must not stay. */
static ngx_int_t ngx_http_csrf_drop_for_neutral(ngx_table_elt_t *h, void *data)
{
	(void)data;

	if (csrf_header_is_method_override((const char *)h->key.data, h->key.len) ||
	    (h->key.len == 6 && ngx_strncasecmp(h->key.data, (u_char *)"Cookie", 6) == 0) ||
	    (h->key.len == 13 && ngx_strncasecmp(h->key.data, (u_char *)"Authorization", 13) == 0)) {
		ngx_str_set(&h->key, "X-CSRF-Dropped");
		h->lowcase_key = (u_char *)"x-csrf-dropped";
		h->hash = ngx_hash_key(h->lowcase_key, h->key.len);
		ngx_str_null(&h->value);
	}

	return NGX_OK;
}

/* A rejected request that an internal redirect (error_page, a named
 * location, try_files) sends on goes as what it cannot abuse: a GET of
 * the same path, without its query, body, method override or credentials.
 * The error location can render a page; it cannot act for the user (an
 * unsafe_get path's query, a POST turned into a GET with parameters). */
static void ngx_http_csrf_neutralize(ngx_http_request_t *r)
{
	u_char *q;

	r->method = NGX_HTTP_GET;
	ngx_str_set(&r->method_name, "GET");

	if (r->request_body) {
		/* read by this module: dropped */
		r->request_body->bufs = NULL;
		r->headers_in.content_length_n = 0;
		r->headers_in.content_length = NULL;
		r->headers_in.chunked = 0;
		r->preserve_body = 0;
	}

	ngx_str_null(&r->args);
	q = ngx_strlchr(r->unparsed_uri.data, r->unparsed_uri.data + r->unparsed_uri.len, '?');
	if (q) {
		r->unparsed_uri.len = q - r->unparsed_uri.data;
	}

	(void)ngx_http_csrf_each_header(&r->headers_in.headers, ngx_http_csrf_drop_for_neutral, NULL);
	r->headers_in.authorization = NULL;
	ngx_str_null(&r->headers_in.user);
	ngx_str_null(&r->headers_in.passwd);
#if defined(nginx_version) && nginx_version >= 1023000
	r->headers_in.cookie = NULL;
#else
	r->headers_in.cookies.nelts = 0;
#endif
}

/* 1 when error_page handles status in this location. */
static ngx_uint_t ngx_http_csrf_error_page(ngx_http_request_t *r, ngx_int_t status)
{
	ngx_uint_t i;
	ngx_http_err_page_t *err;
	ngx_http_core_loc_conf_t *clcf;

	clcf = ngx_http_get_module_loc_conf(r, ngx_http_core_module);
	if (clcf->error_pages == NULL || r->uri_changes == 0) {
		return 0;
	}

	err = clcf->error_pages->elts;
	for (i = 0; i < clcf->error_pages->nelts; i++) {
		if (err[i].status == status) {
			return 1;
		}
	}

	return 0;
}

/* The module's own rejection page: the library's words, escaped, with a
 * strict CSP; error_page for the status replaces it. */
static ngx_int_t ngx_http_csrf_send_reject(ngx_http_request_t *r, ngx_http_csrf_verdict_t *v, ngx_int_t status)
{
	size_t len;
	u_char *page;
	ngx_table_elt_t *h;
	ngx_http_complex_value_t cv;
	static ngx_str_t type = ngx_string("text/html; charset=utf-8");

	if (ngx_http_csrf_error_page(r, status)) {
		return status;
	}

	page = ngx_pnalloc(r->pool, CSRF_REJECT_PAGE_MAX);
	if (page == NULL) {
		return NGX_HTTP_INTERNAL_SERVER_ERROR;
	}

	if (csrf_reject_page(v->reason, (unsigned)status, (char *)page, CSRF_REJECT_PAGE_MAX, &len) != CSRF_OK) {
		return status;
	}

	h = ngx_list_push(&r->headers_out.headers);
	if (h == NULL) {
		return NGX_HTTP_INTERNAL_SERVER_ERROR;
	}
	h->hash = 1;
	ngx_str_set(&h->key, "Content-Security-Policy");
	ngx_str_set(&h->value, CSRF_REJECT_PAGE_CSP);
#if (nginx_version >= 1023000)
	h->next = NULL;
#endif

	/* its cache headers: the header filter's, after add_header's */

	ngx_memzero(&cv, sizeof(ngx_http_complex_value_t));
	cv.value.data = page;
	cv.value.len = len;

	return ngx_http_send_response(r, status, &type, &cv);
}

/* Records the library's answer, logs a rejection with its reason (never
 * a token or a cookie), and returns what the access phase answers:
 * NGX_DECLINED to go on, or a status. */
static ngx_int_t ngx_http_csrf_judge(ngx_http_request_t *r, ngx_http_csrf_loc_conf_t *clcf, ngx_http_csrf_verdict_t *v,
                                     csrf_result res)
{
	v->checked = 1;
	v->ctx = clcf->ctx;
	v->reason = res.reason;
	v->report_only = res.report_only;

	ngx_http_csrf_metrics_check(r, &res);

	if (res.report_only) {
		ngx_http_csrf_log(NGX_LOG_WARN, r, "would reject %V \"%V\": %s (csrf_action log)", &r->method_name,
		                  &r->uri, csrf_reason_name(res.reason));
		return NGX_DECLINED;
	}

	if (res.allowed) {
		return NGX_DECLINED;
	}

	ngx_http_csrf_log(NGX_LOG_ERR, r, "rejected %V \"%V\": %s", &r->method_name, &r->uri,
	                  csrf_reason_name(res.reason));

	v->rejected = 1;

	return res.reason == CSRF_BODY_TOO_LARGE ? NGX_HTTP_REQUEST_ENTITY_TOO_LARGE : clcf->status;
}

/* Finalizes with a rejection, or lets the phase go on. A rejection is
 * final even under "satisfy any": it never counts as one failed access
 * method among others. */
static ngx_int_t ngx_http_csrf_answer(ngx_http_request_t *r, ngx_http_csrf_verdict_t *v, ngx_int_t status)
{
	ngx_int_t rc;

	if (status == NGX_DECLINED) {
		return NGX_DECLINED;
	}

	if (ngx_http_csrf_error_page(r, status) && r->request_body == NULL &&
	    (r->headers_in.content_length_n > 0 || r->headers_in.chunked)) {
		/* error_page sends the request on: its body is read (and
		 * dropped) first, so that where it goes no upstream can be
		 * handed the forged body */
		v->pending = status;
		rc = ngx_http_read_client_request_body(r, ngx_http_csrf_reject_body_handler);
		if (rc >= NGX_HTTP_SPECIAL_RESPONSE) {
			return rc;
		}
		ngx_http_finalize_request(r, NGX_DONE);
		return NGX_DONE;
	}

	ngx_http_finalize_request(r, ngx_http_csrf_send_reject(r, v, status));

	return NGX_DONE;
}

static void ngx_http_csrf_reject_body_handler(ngx_http_request_t *r)
{
	ngx_int_t status;
	ngx_http_csrf_verdict_t *v;

	v = ngx_http_csrf_verdict(r, 0);
	status = v && v->pending ? v->pending : NGX_HTTP_FORBIDDEN;
	if (v) {
		v->pending = 0;
	}

	ngx_http_csrf_neutralize(r);
	ngx_http_finalize_request(r, status);
}

/* Where the module may inject, the upstream is asked for an uncompressed
 * response (a compressed one could not get its tokens): every
 * Accept-Encoding request header reads "identity" for proxy_pass,
 * fastcgi_pass and the others, which copy the request's header list,
 * and one is added when the client sent none. nginx's gzip filter still
 * sees the client's own value (r->headers_in.accept_encoding becomes a
 * copy outside the list). proxy_set_header Accept-Encoding and
 * fastcgi_param HTTP_ACCEPT_ENCODING still override it. */
typedef struct {
	ngx_http_request_t *r;
	ngx_uint_t found;
	ngx_uint_t failed;
} ngx_http_csrf_identity_t;

static ngx_int_t ngx_http_csrf_identity_header(ngx_table_elt_t *h, void *data)
{
	ngx_table_elt_t *copy;
	ngx_http_csrf_identity_t *id = data;
	ngx_http_request_t *r = id->r;

	if (h->key.len != sizeof("Accept-Encoding") - 1 ||
	    ngx_strncasecmp(h->key.data, (u_char *)"Accept-Encoding", h->key.len) != 0) {
		return NGX_OK;
	}

	id->found = 1;

	if (r->headers_in.accept_encoding == h) {
		copy = ngx_palloc(r->pool, sizeof(ngx_table_elt_t));
		if (copy == NULL) {
			id->failed = 1;
			return NGX_ERROR;
		}
		*copy = *h;
#if (nginx_version >= 1023000)
		copy->next = NULL;
#endif
		r->headers_in.accept_encoding = copy;
	}

	ngx_str_set(&h->value, "identity");

	return NGX_OK;
}

static ngx_int_t ngx_http_csrf_identity(ngx_http_request_t *r)
{
	ngx_table_elt_t *h;
	ngx_http_csrf_identity_t id = {r, 0, 0};
	static u_char lowcase[] = "accept-encoding";

	(void)ngx_http_csrf_each_header(&r->headers_in.headers, ngx_http_csrf_identity_header, &id);

	if (id.failed) {
		return NGX_ERROR;
	}

	if (id.found) {
		return NGX_OK;
	}

	h = ngx_list_push(&r->headers_in.headers);
	if (h == NULL) {
		return NGX_ERROR;
	}

	ngx_str_set(&h->key, "Accept-Encoding");
	ngx_str_set(&h->value, "identity");
	h->lowcase_key = lowcase;
	h->hash = ngx_hash_key(lowcase, sizeof(lowcase) - 1);
#if (nginx_version >= 1023000)
	h->next = NULL;
#endif

	return NGX_OK;
}

/* 1 where the module injects into HTML responses. */
static ngx_uint_t ngx_http_csrf_injects(ngx_http_csrf_loc_conf_t *clcf)
{
	return clcf->enable && clcf->inject && clcf->ctx != NULL && clcf->mode != CSRF_MODE_ORIGIN;
}

static ngx_int_t ngx_http_csrf_access_handler(ngx_http_request_t *r)
{
	ngx_int_t rc, status;
	csrf_result res;
	ngx_http_csrf_ctx_t *ctx;
	ngx_http_csrf_verdict_t *v;
	ngx_http_csrf_loc_conf_t *clcf;

	if (r != r->main) {
		return NGX_DECLINED;
	}

	clcf = ngx_http_get_module_loc_conf(r, ngx_http_csrf_module);
	if (ngx_http_csrf_injects(clcf) && ngx_http_csrf_identity(r) != NGX_OK) {
		return NGX_HTTP_INTERNAL_SERVER_ERROR;
	}

	v = ngx_http_csrf_verdict(r, 0);

	if (v && v->checked) {
		if (v->pending) {
			/* re-entry after the body was read */
			status = v->pending;
			v->pending = 0;
			return ngx_http_csrf_answer(r, v, status);
		}

		/* an internal redirect after the verdict (error_page, a named
		 * location, try_files): a rejected request goes on only as a
		 * GET without its body */
		if (v->rejected) {
			ngx_http_csrf_neutralize(r);
			return NGX_DECLINED;
		}

		/* an allowed one is judged again where the new location's
		 * settings differ (a stricter mode, csrf_unsafe_get, other
		 * trusted origins): the first location's verdict does not
		 * cover it */
		clcf = ngx_http_get_module_loc_conf(r, ngx_http_csrf_module);
		if (!clcf->enable || clcf->ctx == NULL || clcf->ctx == v->ctx) {
			return NGX_DECLINED;
		}
		v->checked = 0;
	}

	clcf = ngx_http_get_module_loc_conf(r, ngx_http_csrf_module);

	if (!clcf->enable || clcf->ctx == NULL) {
		return NGX_DECLINED;
	}

	ctx = ngx_http_csrf_get_ctx(r);
	v = ngx_http_csrf_verdict(r, 1);
	if (ctx == NULL || v == NULL) {
		return NGX_HTTP_INTERNAL_SERVER_ERROR;
	}

	ngx_http_csrf_request(r, &ctx->req);

	res = csrf_check(clcf->ctx, &ctx->req);

	if (res.needs_body) {
		/* the token is in the body: read it, intact for the upstream */
		v->checked = 1;
		v->ctx = clcf->ctx;
		v->pending = NGX_DECLINED;
		r->request_body_in_single_buf = 1;

		rc = ngx_http_read_client_request_body(r, ngx_http_csrf_body_handler);

		if (rc >= NGX_HTTP_SPECIAL_RESPONSE) {
			return rc;
		}

		ngx_http_finalize_request(r, NGX_DONE);
		return NGX_DONE;
	}

	return ngx_http_csrf_answer(r, v, ngx_http_csrf_judge(r, clcf, v, res));
}

/* The read body as one piece of at most max bytes: its buffer when it is
 * one in memory, else its memory and temporary-file buffers gathered into
 * a pool buffer; NGX_DECLINED when it is larger. */
static ngx_int_t ngx_http_csrf_body(ngx_http_request_t *r, size_t max, ngx_str_t *body)
{
	off_t size;
	ssize_t n;
	u_char *p;
	ngx_buf_t *b;
	ngx_chain_t *cl;

	body->data = (u_char *)"";
	body->len = 0;

	if (r->request_body == NULL || r->request_body->bufs == NULL) {
		return NGX_OK;
	}

	size = 0;
	for (cl = r->request_body->bufs; cl; cl = cl->next) {
		size += ngx_buf_size(cl->buf);
	}

	if (size > (off_t)max) {
		return NGX_DECLINED;
	}

	if (size == 0) {
		return NGX_OK;
	}

	b = r->request_body->bufs->buf;

	if (r->request_body->bufs->next == NULL && ngx_buf_in_memory_only(b)) {
		/* the usual case (request_body_in_single_buf): no copy */
		body->data = b->pos;
		body->len = b->last - b->pos;
		return NGX_OK;
	}

	p = ngx_pnalloc(r->pool, (size_t)size);
	if (p == NULL) {
		return NGX_ERROR;
	}

	body->data = p;

	for (cl = r->request_body->bufs; cl; cl = cl->next) {
		b = cl->buf;

		if (ngx_buf_in_memory(b)) {
			p = ngx_cpymem(p, b->pos, b->last - b->pos);
			continue;
		}

		if (b->in_file && b->file_last > b->file_pos) {
			n = ngx_read_file(b->file, p, (size_t)(b->file_last - b->file_pos), b->file_pos);
			if (n != (ssize_t)(b->file_last - b->file_pos)) {
				return NGX_ERROR;
			}
			p += n;
		}
	}

	body->len = p - body->data;

	return NGX_OK;
}

static void ngx_http_csrf_body_handler(ngx_http_request_t *r)
{
	off_t size;
	ngx_int_t rc;
	ngx_str_t body;
	ngx_chain_t *cl;
	csrf_result res;
	ngx_http_csrf_ctx_t *ctx;
	ngx_http_csrf_verdict_t *v;
	ngx_http_csrf_loc_conf_t *clcf;

	clcf = ngx_http_get_module_loc_conf(r, ngx_http_csrf_module);
	ctx = ngx_http_get_module_ctx(r, ngx_http_csrf_module);
	v = ngx_http_csrf_verdict(r, 0);

	rc = ngx_http_csrf_body(r, clcf->body_max, &body);

	if (rc == NGX_ERROR || ctx == NULL || v == NULL) {
		if (v) {
			v->pending = NGX_HTTP_INTERNAL_SERVER_ERROR;
			v->rejected = 1;
			v->reason = CSRF_ERR_INTERNAL;
			ngx_http_csrf_metrics_verdict(r, CSRF_METRICS_REJECTED, CSRF_ERR_INTERNAL);
		}

	} else {
		if (rc == NGX_DECLINED) {
			/* larger than the library reads: it judges by the size */
			size = 0;
			for (cl = r->request_body->bufs; cl; cl = cl->next) {
				size += ngx_buf_size(cl->buf);
			}
			ctx->req.body.ptr = NULL;
			ctx->req.content_length.ptr = (const char *)ctx->body_size;
			ctx->req.content_length.len = ngx_sprintf(ctx->body_size, "%O", size) - ctx->body_size;

		} else {
			ctx->req.body.ptr = (const char *)body.data;
			ctx->req.body.len = body.len;
		}

		res = csrf_check(clcf->ctx, &ctx->req);
		if (res.needs_body) {
			/* cannot happen with a body given: fail closed */
			res.allowed = 0;
			res.report_only = 0;
			res.reason = CSRF_ERR_INTERNAL;
		}
		v->pending = ngx_http_csrf_judge(r, clcf, v, res);
	}

	r->preserve_body = 1;

	r->write_event_handler = ngx_http_core_run_phases;
	ngx_http_core_run_phases(r);
}

static ngx_int_t ngx_http_csrf_result_variable(ngx_http_request_t *r, ngx_http_variable_value_t *v, uintptr_t data)
{
	const char *name;
	ngx_http_csrf_verdict_t *verdict;

	(void)data;

	verdict = ngx_http_csrf_verdict(r, 0);

	if (verdict == NULL || !verdict->checked || verdict->pending) {
		v->not_found = 1;
		return NGX_OK;
	}

	name = csrf_reason_name(verdict->reason);

	v->len = ngx_strlen(name);
	v->valid = 1;
	v->no_cacheable = 0;
	v->not_found = 0;
	v->data = (u_char *)name;

	return NGX_OK;
}

/* ------------------------------------------------------------------ */
/* Header and body filters: tokens into HTML forms                     */
/* ------------------------------------------------------------------ */

/* Hands the response's Set-Cookie values to the library, so a page
 * that logs a user in gets tokens for the new session. */
typedef struct {
	csrf_ctx *ctx;
	csrf_request *req;
} ngx_http_csrf_cookies_t;

static ngx_int_t ngx_http_csrf_response_cookie(ngx_table_elt_t *h, void *data)
{
	ngx_http_csrf_cookies_t *c = data;

	if (h->hash != 0 && h->key.len == 10 && ngx_strncasecmp(h->key.data, (u_char *)"Set-Cookie", 10) == 0) {
		csrf_response_cookie(c->ctx, c->req, (const char *)h->value.data, h->value.len);
	}

	return NGX_OK;
}

static void ngx_http_csrf_response_cookies(ngx_http_request_t *r, csrf_ctx *cctx, csrf_request *req)
{
	ngx_http_csrf_cookies_t c = {cctx, req};

	(void)ngx_http_csrf_each_header(&r->headers_out.headers, ngx_http_csrf_response_cookie, &c);
}

typedef struct {
	csrf_ctx *ctx;
	csrf_request *req;
	int state; /* -1: a session cookie seen; 1: another cookie set (name) */
	csrf_slice name;
} ngx_http_csrf_unseen_t;

static ngx_int_t ngx_http_csrf_unseen_cookie(ngx_table_elt_t *h, void *data)
{
	ngx_http_csrf_unseen_t *u = data;
	csrf_slice name;
	int rc;

	if (u->state < 0 || h->hash == 0 || h->key.len != 10 ||
	    ngx_strncasecmp(h->key.data, (u_char *)"Set-Cookie", 10) != 0) {
		return NGX_OK;
	}

	rc = csrf_session_cookie_unseen(u->ctx, u->req, (const char *)h->value.data, h->value.len, &name);
	if (rc < 0 || (rc > 0 && u->state == 0)) {
		u->state = rc;
		u->name = name;
	}

	return NGX_OK;
}

/* Once per worker and location: tokens are bound to session cookies that
 * no request or response has carried so far, while the application sets
 * another cookie (phpMyAdmin over HTTPS sets "phpMyAdmin_https", not
 * "phpMyAdmin"). Only cookie names are logged, never values. */
static void ngx_http_csrf_session_unseen(ngx_http_request_t *r, ngx_http_csrf_loc_conf_t *clcf, csrf_request *req)
{
	ngx_http_csrf_unseen_t u = {clcf->ctx, req, 0, {NULL, 0}};

	if (clcf->session_cookie == NULL || clcf->session_seen || clcf->session_warned) {
		return;
	}

	if (csrf_session_cookie_unseen(clcf->ctx, req, NULL, 0, NULL) < 0) {
		clcf->session_seen = 1;
		return;
	}

	(void)ngx_http_csrf_each_header(&r->headers_out.headers, ngx_http_csrf_unseen_cookie, &u);
	if (u.state < 0) {
		clcf->session_seen = 1;
	} else if (u.state > 0) {
		clcf->session_warned = 1;
		ngx_http_csrf_log(NGX_LOG_WARN, r,
		                  "csrf_session_cookie \"%V\": no request or response has carried it so far, but the "
		                  "application sets the cookie \"%*s\": tokens are bound to no session; if that is "
		                  "its session cookie, name it in csrf_session_cookie (said once per worker)",
		                  &clcf->session_names, u.name.len, u.name.ptr);
	}
}

/* 1 for an HTML response this module may rewrite (with any_encoding,
 * whatever its Content-Encoding). */
static ngx_uint_t ngx_http_csrf_html(ngx_http_request_t *r, ngx_uint_t any_encoding)
{
	ngx_str_t *ct;
	ngx_table_elt_t *ce;

	ct = &r->headers_out.content_type;
	ce = any_encoding ? NULL : r->headers_out.content_encoding;

	return csrf_response_injectable((unsigned)r->headers_out.status, (const char *)ct->data, ct->len,
	                                ce ? (const char *)ce->value.data : NULL, ce ? ce->value.len : 0);
}

static ngx_int_t ngx_http_csrf_add_header(ngx_http_request_t *r, const char *key, const u_char *value, size_t len)
{
	ngx_table_elt_t *h;

	h = ngx_list_push(&r->headers_out.headers);
	if (h == NULL) {
		return NGX_ERROR;
	}

	h->hash = 1;
	h->key.data = (u_char *)key;
	h->key.len = ngx_strlen(key);
	h->value.data = (u_char *)value;
	h->value.len = len;
#if (nginx_version >= 1023000)
	h->next = NULL;
#endif

	return NGX_OK;
}

/* The response's headers as the library reads them, with the list
 * elements they came from. */
typedef struct {
	csrf_header *headers;
	ngx_table_elt_t **elts;
	ngx_uint_t n;
} ngx_http_csrf_cache_t;

static ngx_int_t ngx_http_csrf_cache_header(ngx_table_elt_t *h, void *data)
{
	ngx_http_csrf_cache_t *c = data;

	if (h->hash != 0) {
		c->headers[c->n].name.ptr = (const char *)h->key.data;
		c->headers[c->n].name.len = h->key.len;
		c->headers[c->n].value.ptr = (const char *)h->value.data;
		c->headers[c->n].value.len = h->value.len;
		c->elts[c->n++] = h;
	}

	return NGX_OK;
}

typedef csrf_reason (*ngx_http_csrf_cache_rule_pt)(const csrf_header *headers, size_t n, unsigned char *drop,
                                                   csrf_slice *add);

/* The library's cache rule for the response says which headers go and
 * what Cache-Control comes: csrf_response_cache for a page with a token
 * (Cache-Control that does not keep the page private, the targeted cache
 * fields CDNs obey over it), csrf_rejection_cache for the answer to a
 * rejected request (every cache field, then no-store). */
static ngx_int_t ngx_http_csrf_cache(ngx_http_request_t *r, ngx_http_csrf_cache_rule_pt rule)
{
	u_char *drop;
	ngx_uint_t i, n;
	csrf_slice add;
	ngx_list_part_t *part;
	ngx_http_csrf_cache_t c;

	n = 0;
	for (part = &r->headers_out.headers.part; part; part = part->next) {
		n += part->nelts;
	}

	c.headers = ngx_palloc(r->pool, (n ? n : 1) * sizeof(csrf_header));
	c.elts = ngx_palloc(r->pool, (n ? n : 1) * sizeof(ngx_table_elt_t *));
	drop = ngx_pnalloc(r->pool, n ? n : 1);
	if (c.headers == NULL || c.elts == NULL || drop == NULL) {
		return NGX_ERROR;
	}

	c.n = 0;
	(void)ngx_http_csrf_each_header(&r->headers_out.headers, ngx_http_csrf_cache_header, &c);

	if (rule(c.headers, c.n, drop, &add) != CSRF_OK) {
		return NGX_ERROR;
	}

	for (i = 0; i < c.n; i++) {
		if (drop[i]) {
			c.elts[i]->hash = 0;
		}
	}

	if (add.ptr == NULL) {
		return NGX_OK;
	}

	return ngx_http_csrf_add_header(r, "Cache-Control", (const u_char *)add.ptr, add.len);
}

/* The Content-Type value the client will receive: nginx keeps a charset
 * apart when a "charset" directive or the static module set it. */
static ngx_int_t ngx_http_csrf_content_type(ngx_http_request_t *r, ngx_str_t *out)
{
	u_char *p;
	ngx_http_headers_out_t *ho = &r->headers_out;

	*out = ho->content_type;

	if (ho->content_type_len != ho->content_type.len || ho->charset.len == 0) {
		return NGX_OK;
	}

	p = ngx_pnalloc(r->pool, ho->content_type.len + sizeof("; charset=") - 1 + ho->charset.len);
	if (p == NULL) {
		return NGX_ERROR;
	}

	out->data = p;
	p = ngx_cpymem(p, ho->content_type.data, ho->content_type.len);
	p = ngx_cpymem(p, "; charset=", sizeof("; charset=") - 1);
	p = ngx_cpymem(p, ho->charset.data, ho->charset.len);
	out->len = p - out->data;

	return NGX_OK;
}

/* An HTML response the module may rewrite: its header waits in the body
 * filter, with at most CSRF_CHARSET_PRESCAN_MAX of its first bytes,
 * until the library knows the charset the browser will read it in. */
static ngx_int_t ngx_http_csrf_header_filter(ngx_http_request_t *r)
{
	ngx_http_csrf_ctx_t *ctx;
	ngx_http_csrf_verdict_t *v;
	ngx_http_csrf_loc_conf_t *clcf;

	/* the answer to a rejected request, whatever location makes it (the
	 * module's page, or error_page's target after an internal redirect:
	 * the verdict lives in the main request's pool, which the redirect
	 * keeps): only no-store, whatever add_header or an upstream put
	 * beside it, and no token or secret cookie. The error location sees
	 * the request without its Cookie (ngx_http_csrf_neutralize): a page
	 * prepared there would set a new secret over the user's own, and a
	 * cross-site form could so break every page the user has open. */
	v = ngx_http_csrf_verdict(r, 0);
	if (r == r->main && v && v->rejected) {
		if (ngx_http_csrf_cache(r, csrf_rejection_cache) != NGX_OK) {
			return NGX_ERROR;
		}
		return ngx_http_next_header_filter(r);
	}

	clcf = ngx_http_get_module_loc_conf(r, ngx_http_csrf_module);

	/* a HEAD response has no body to put a token in, and so no cookie:
	 * nginx sets header_only for HEAD only in its last header filter,
	 * after this one */
	if (!ngx_http_csrf_injects(clcf) || r != r->main || r->header_only || r->method == NGX_HTTP_HEAD) {
		return ngx_http_next_header_filter(r);
	}

	if (!ngx_http_csrf_html(r, 0)) {
		if (ngx_http_csrf_html(r, 1)) {
			ngx_http_csrf_metrics_passed(r, CSRF_METRICS_PASS_ENCODING);
			/* the upstream compressed it after all (an operator's
			 * Accept-Encoding, or an upstream that ignores it) */
			ngx_http_csrf_log(NGX_LOG_WARN, r,
			                  "no tokens in \"%V\": it arrived compressed (Content-Encoding: %V), passed "
			                  "through untouched",
			                  &r->uri, &r->headers_out.content_encoding->value);
		}
		return ngx_http_next_header_filter(r);
	}

	ctx = ngx_http_csrf_get_ctx(r);
	if (ctx == NULL || ngx_http_csrf_content_type(r, &ctx->content_type) != NGX_OK) {
		return NGX_ERROR;
	}

	ctx->inj = NULL;
	ctx->held_len = 0;
	ctx->held_cl = NULL;
	ctx->holding = 1;

	/* the body is read in memory; no range of it is served (the range
	 * filter comes after this one and would see a header too late) */
	r->filter_need_in_memory = 1;
	r->allow_ranges = 0;

	return NGX_OK;
}

static ngx_int_t ngx_http_csrf_find_csp(ngx_table_elt_t *h, void *data)
{
	ngx_table_elt_t **found = data;

	if (h->hash != 0 && h->key.len == sizeof("Content-Security-Policy") - 1 &&
	    ngx_strncasecmp(h->key.data, (u_char *)"Content-Security-Policy", h->key.len) == 0) {
		*found = h;
		return NGX_DONE;
	}

	return NGX_OK;
}

/* csrf_form_action_csp: the library's form-action and base-uri policy,
 * merged into the upstream's first Content-Security-Policy header as the
 * library writes it, or a header of its own. */
static ngx_int_t ngx_http_csrf_csp(ngx_http_request_t *r, ngx_http_csrf_loc_conf_t *clcf)
{
	u_char *p;
	size_t cap, len;
	csrf_reason rc;
	ngx_table_elt_t *h;

	h = NULL;
	(void)ngx_http_csrf_each_header(&r->headers_out.headers, ngx_http_csrf_find_csp, &h);

	cap = clcf->csp_len + 1 + (h ? h->value.len + 2 : 0);
	p = ngx_pnalloc(r->pool, cap);
	if (p == NULL) {
		return NGX_ERROR;
	}

	rc = csrf_csp_form_action(h ? (const char *)h->value.data : NULL, h ? h->value.len : 0, clcf->origins,
	                          clcf->trusted ? clcf->trusted->nelts : 0, (char *)p, cap, &len);
	if (rc == CSRF_MALFORMED && h) {
		/* an upstream value the library does not merge: ours apart (the
		 * browser enforces both) */
		h = NULL;
		rc = csrf_csp_form_action(NULL, 0, clcf->origins, clcf->trusted ? clcf->trusted->nelts : 0, (char *)p,
		                          cap, &len);
	}
	if (rc != CSRF_OK) {
		ngx_http_csrf_log(NGX_LOG_ERR, r, "no Content-Security-Policy for \"%V\": %s", &r->uri,
		                  csrf_reason_name(rc));
		return NGX_ERROR;
	}

	if (h) {
		h->value.data = p;
		h->value.len = len;
		return NGX_OK;
	}

	return ngx_http_csrf_add_header(r, "Content-Security-Policy", p, len);
}

/* The charset says the page can take tokens: the page's token and cookie,
 * the injector, and the headers of a rewritten response. ctx->inj stays
 * NULL (the response then goes out untouched) when the library cannot
 * prepare the page. */
static ngx_int_t ngx_http_csrf_start(ngx_http_request_t *r, ngx_http_csrf_ctx_t *ctx)
{
	u_char *mem, *p;
	csrf_page page;
	csrf_reason rc;
	csrf_request req;
	ngx_http_csrf_loc_conf_t *clcf;
	static u_char vary[] = "Cookie";

	clcf = ngx_http_get_module_loc_conf(r, ngx_http_csrf_module);

	/* the request's own headers (after an internal redirect the access
	 * phase's copy is gone with the module context) */
	ngx_http_csrf_request(r, &req);
	ngx_http_csrf_response_cookies(r, clcf->ctx, &req);
	ngx_http_csrf_session_unseen(r, clcf, &req);

	rc = csrf_page_prepare(clcf->ctx, &req, &page);
	if (rc != CSRF_OK) {
		ngx_http_csrf_log(NGX_LOG_ERR, r, "cannot prepare the page of \"%V\": %s", &r->uri,
		                  csrf_reason_name(rc));
		return NGX_OK;
	}

	if (page.set_cookie_len) {
		p = ngx_pnalloc(r->pool, page.set_cookie_len);
		if (p == NULL || ngx_http_csrf_add_header(r, "Set-Cookie", p, page.set_cookie_len) != NGX_OK) {
			csrf_page_wipe(&page);
			return NGX_ERROR;
		}
		ngx_memcpy(p, page.set_cookie, page.set_cookie_len);
	}

	mem = ngx_palloc(r->pool, csrf_inject_size());
	if (mem == NULL) {
		csrf_page_wipe(&page);
		return NGX_ERROR;
	}

	rc = csrf_inject_init(mem, csrf_inject_size(), page.origin, page.origin_len, page.field, ngx_strlen(page.field),
	                      page.token, CSRF_TOKEN_LEN, &ctx->inj);
	csrf_page_wipe(&page);

	if (rc != CSRF_OK) {
		ngx_http_csrf_log(NGX_LOG_ERR, r, "cannot start the injector for \"%V\": %s", &r->uri,
		                  csrf_reason_name(rc));
		ctx->inj = NULL;
		return NGX_OK;
	}

	ctx->last_out = &ctx->out;

	/* With its length known, the response ends with its last byte: the
	 * end (the chunked encoding's last chunk) leaves in the same write
	 * as that byte, not in one of its own when the upstream's empty last
	 * buf comes. */
	ctx->left = r == r->main ? r->headers_out.content_length_n : -1;
	ngx_http_clear_content_length(r);
	ngx_http_clear_accept_ranges(r);
	ngx_http_clear_last_modified(r);
	ngx_http_clear_etag(r);

	if (ngx_http_csrf_add_header(r, "Vary", vary, sizeof(vary) - 1) != NGX_OK ||
	    ngx_http_csrf_cache(r, csrf_response_cache) != NGX_OK) {
		return NGX_ERROR;
	}

	if (clcf->form_action_csp) {
		return ngx_http_csrf_csp(r, clcf);
	}

	return NGX_OK;
}

/* Holds the body's first bytes (a copy of at most
 * CSRF_CHARSET_PRESCAN_MAX, the input bufs consumed) until the library
 * decides the charset; then sends the header, rewritten or not, and
 * leaves in *in the held bytes followed by the rest of the input.
 * ctx->holding stays set (and *in is NULL) while more bytes are needed. */
static ngx_int_t ngx_http_csrf_hold(ngx_http_request_t *r, ngx_http_csrf_ctx_t *ctx, ngx_chain_t **in)
{
	size_t n;
	int complete;
	ngx_int_t rc;
	ngx_buf_t *b, *hb;
	ngx_chain_t *cl, *hcl;
	csrf_charset cs;
	csrf_reason crc;

	if (ctx->held_cl == NULL) {
		ctx->held = ngx_pnalloc(r->pool, CSRF_CHARSET_PRESCAN_MAX);
		hb = ngx_calloc_buf(r->pool);
		ctx->held_cl = ngx_alloc_chain_link(r->pool);
		if (ctx->held == NULL || hb == NULL || ctx->held_cl == NULL) {
			return NGX_ERROR;
		}
		ctx->held_cl->buf = hb;
	}

	hcl = ctx->held_cl;
	hb = hcl->buf;
	complete = hb->last_buf;

	/* the bufs copied whole leave the chain; their flags go with the copy */
	for (cl = *in; cl; cl = cl->next) {
		b = cl->buf;

		if (!ngx_buf_in_memory(b) && ngx_buf_size(b)) {
			/* cannot happen (filter_need_in_memory): read as the end */
			complete = 1;
			break;
		}

		n = ngx_min((size_t)(b->last - b->pos), CSRF_CHARSET_PRESCAN_MAX - ctx->held_len);
		if (n) {
			ngx_memcpy(ctx->held + ctx->held_len, b->pos, n);
			ctx->held_len += n;
			b->pos += n;
		}

		if (b->pos != b->last) {
			break;
		}

		hb->last_buf |= b->last_buf;
		hb->last_in_chain |= b->last_in_chain;
		hb->flush |= b->flush;
		complete |= b->last_buf;
	}

	crc = csrf_charset_sniff((const char *)ctx->content_type.data, ctx->content_type.len, (const char *)ctx->held,
	                         ctx->held_len, complete, &cs);
	if (crc != CSRF_OK) {
		cs.verdict = CSRF_CHARSET_PASS;
		cs.encoding = NULL;
		cs.source = csrf_reason_name(crc);
	}

	if (cs.verdict == CSRF_CHARSET_MORE && cl == NULL) {
		*in = NULL;
		return NGX_OK;
	}

	ctx->holding = 0;

	if (cs.verdict == CSRF_CHARSET_INJECT) {
		if (ngx_http_csrf_start(r, ctx) != NGX_OK) {
			return NGX_ERROR;
		}

	} else {
		ngx_http_csrf_metrics_passed(r, CSRF_METRICS_PASS_CHARSET);
		ngx_http_csrf_log(NGX_LOG_WARN, r,
		                  "no tokens in \"%V\": its charset (%s, from the %s) is not one the injector reads, "
		                  "passed through untouched",
		                  &r->uri, cs.encoding ? cs.encoding : "an unknown label",
		                  cs.source ? cs.source : "body");
	}

	rc = ngx_http_next_header_filter(r);
	if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
		return NGX_ERROR;
	}

	hb->pos = ctx->held;
	hb->last = ctx->held + ctx->held_len;
	hb->start = NULL; /* never reused as an output buf */
	hb->memory = ctx->held_len ? 1 : 0;
	hb->sync = ctx->held_len ? 0 : 1;
	hb->tag = (ngx_buf_tag_t)&ngx_http_csrf_module;
	hcl->next = cl;
	*in = hcl;

	return NGX_OK;
}

/* Appends cl to the output chain being built. */
static void ngx_http_csrf_out(ngx_http_csrf_ctx_t *ctx, ngx_chain_t *cl)
{
	cl->next = NULL;
	*ctx->last_out = cl;
	ctx->last_out = &cl->next;
}

/* An output buf of NGX_HTTP_CSRF_BUF_SIZE bytes, a sent one when there is
 * one, else a new one from the request pool. */
static ngx_chain_t *ngx_http_csrf_get_buf(ngx_http_request_t *r, ngx_http_csrf_ctx_t *ctx)
{
	ngx_buf_t *b;
	ngx_chain_t *cl;

	if (ctx->free) {
		cl = ctx->free;
		ctx->free = cl->next;
		b = cl->buf;
		b->pos = b->start;
		b->last = b->start;
		return cl;
	}

	cl = ngx_alloc_chain_link(r->pool);
	if (cl == NULL) {
		return NULL;
	}

	b = ngx_create_temp_buf(r->pool, NGX_HTTP_CSRF_BUF_SIZE);
	if (b == NULL) {
		return NULL;
	}

	b->tag = (ngx_buf_tag_t)&ngx_http_csrf_module;
	cl->buf = b;

	return cl;
}

/* The injector's emit callback: pass-through runs and inserted elements
 * are copied into ctx->cur, a new output buf whenever it is full. The
 * input buf stays unsent (its shadow is the last output buf made from
 * it, see the body filter) until that copy has gone out, so memory stays
 * bounded by the upstream's own buffers plus the insertions. */
static int ngx_http_csrf_emit(void *ud, const char *p, size_t n, int inserted)
{
	size_t k;
	ngx_buf_t *b;
	ngx_chain_t *cl;
	ngx_http_request_t *r = ud;
	ngx_http_csrf_ctx_t *ctx;

	(void)inserted;

	ctx = ngx_http_get_module_ctx(r, ngx_http_csrf_module);

	while (n) {
		b = ctx->cur;

		if (b == NULL || b->last == b->end) {
			cl = ngx_http_csrf_get_buf(r, ctx);
			if (cl == NULL) {
				return 1;
			}
			ngx_http_csrf_out(ctx, cl);
			b = cl->buf;
			ctx->cur = b;
		}

		k = ngx_min(n, (size_t)(b->end - b->last));
		b->last = ngx_cpymem(b->last, p, k);
		p += k;
		n -= k;
	}

	return 0;
}

/* One line per response when the injector left forms without a token
 * (or stopped) because it could not be sure how the browser reads them:
 * the library's phrases, never the page's bytes. */
static void ngx_http_csrf_log_status(ngx_http_request_t *r, unsigned status)
{
	unsigned bit;
	u_char msg[CSRF_INJECT_STATUS_TEXT_MAX], *p; /* every reason's phrase at once fits */

	if (status == 0) {
		return;
	}

	p = msg;
	for (bit = 1; bit; bit <<= 1) {
		if (status & bit) {
			p = ngx_slprintf(p, msg + sizeof(msg), "%s%s", p == msg ? "" : "; ",
			                 csrf_inject_status_str(bit));
		}
	}

	ngx_http_csrf_log(NGX_LOG_WARN, r, "not every form of \"%V\" got a token: %*s", &r->uri, (size_t)(p - msg),
	                  msg);
}

static ngx_int_t ngx_http_csrf_body_filter(ngx_http_request_t *r, ngx_chain_t *in)
{
	off_t size;
	ngx_int_t rc;
	ngx_buf_t *b, *ib;
	ngx_chain_t *cl;
	unsigned injected = 0;
	ngx_http_csrf_ctx_t *ctx;

	ctx = ngx_http_get_module_ctx(r, ngx_http_csrf_module);

	if (ctx == NULL) {
		return ngx_http_next_body_filter(r, in);
	}

	if (ctx->holding) {
		if (ngx_http_csrf_hold(r, ctx, &in) != NGX_OK) {
			return NGX_ERROR;
		}
		if (ctx->holding) {
			return NGX_OK;
		}
	}

	if (ctx->inj == NULL || ctx->failed) {
		return ngx_http_next_body_filter(r, in);
	}

	if (in == NULL && ctx->busy == NULL) {
		return ngx_http_next_body_filter(r, in);
	}

	ctx->out = NULL;
	ctx->last_out = &ctx->out;

	for (/* void */; in; in = in->next) {
		ib = in->buf;
		ctx->cur = NULL;

		if (ctx->ended) {
			/* after the response's last byte: nothing more to say */
			ib->pos = ib->last;
			if (ib->in_file) {
				ib->file_pos = ib->file_last;
			}
			continue;
		}

		size = ngx_buf_size(ib);

		if (ngx_buf_in_memory(ib) && ib->last > ib->pos) {
			if (csrf_inject_feed(ctx->inj, (const char *)ib->pos, ib->last - ib->pos, ngx_http_csrf_emit,
			                     r) != CSRF_OK) {
				ctx->failed = 1;
				return NGX_ERROR;
			}

		} else if (ngx_buf_size(ib)) {
			/* not in memory (should not happen: filter_need_in_memory) */
			cl = ngx_alloc_chain_link(r->pool);
			if (cl == NULL) {
				return NGX_ERROR;
			}
			b = ngx_alloc_buf(r->pool);
			if (b == NULL) {
				return NGX_ERROR;
			}
			ngx_memcpy(b, ib, sizeof(ngx_buf_t));
			cl->buf = b;
			b->tag = (ngx_buf_tag_t)&ngx_http_csrf_module;
			b->shadow = NULL;
			b->start = NULL; /* never reused as an output buf */
			ngx_http_csrf_out(ctx, cl);
			ctx->cur = b;
		}

		if (ib->last_buf || (ctx->left >= 0 && ctx->left <= size)) {
			/* the response's end: the bytes of a form the injector
			 * still holds (its end tag never came) go out too */
			if (ctx->cur != NULL && ctx->cur->start == NULL) {
				ctx->cur = NULL; /* a file buf is never written to */
			}
			if (csrf_inject_finish(ctx->inj, ngx_http_csrf_emit, r, &injected) != CSRF_OK) {
				ctx->failed = 1;
				return NGX_ERROR;
			}
		}

		b = ctx->cur;

		if (b == NULL) {
			/* no bytes from this buf: an empty one for its flags */
			cl = ngx_alloc_chain_link(r->pool);
			if (cl == NULL) {
				return NGX_ERROR;
			}
			b = ngx_calloc_buf(r->pool);
			if (b == NULL) {
				return NGX_ERROR;
			}
			b->tag = (ngx_buf_tag_t)&ngx_http_csrf_module;
			b->sync = 1;
			cl->buf = b;
			ngx_http_csrf_out(ctx, cl);
		}

		/* the input buf is released when its last output piece is sent */
		b->last_buf = ib->last_buf;
		b->last_in_chain = ib->last_in_chain;
		b->flush = ib->flush;
		b->shadow = ib;
		b->recycled = ib->recycled;

		if (ctx->left >= 0) {
			ctx->left -= size;
			if (ctx->left <= 0 && !ib->last_buf) {
				b->last_buf = 1;
				ctx->ended = 1;
			}
		}

		if (b->last_buf) {
			ngx_log_debug1(NGX_LOG_DEBUG_HTTP, r->connection->log, 0, "csrf: %ui elements injected",
			               (ngx_uint_t)injected);
			ngx_http_csrf_log_status(r, csrf_inject_status(ctx->inj));
			ngx_http_csrf_metrics_page(r, injected, csrf_inject_status(ctx->inj));
		}
	}

	ctx->cur = NULL;

	if (ctx->out == NULL && ctx->ended && r->out == NULL) {
		/* the upstream's own end after ours: nothing to pass on (an
		 * empty chain down to the write filter would be an alert) */
		rc = NGX_OK;
	} else {
		rc = ngx_http_next_body_filter(r, ctx->out);
	}

	if (ctx->busy == NULL) {
		ctx->busy = ctx->out;
	} else {
		for (cl = ctx->busy; cl->next; cl = cl->next) {
			/* void */
		}
		cl->next = ctx->out;
	}

	ctx->out = NULL;
	ctx->last_out = &ctx->out;

	while (ctx->busy) {
		cl = ctx->busy;
		b = cl->buf;

		if (ngx_buf_size(b) != 0) {
			break;
		}

		if (b->shadow) {
			b->shadow->pos = b->shadow->last;
			b->shadow = NULL;
		}

		ctx->busy = cl->next;

		if (b->start) {
			/* an output buf: reused for this response's next bytes */
			b->last_buf = 0;
			b->last_in_chain = 0;
			b->flush = 0;
			b->recycled = 0;
			cl->next = ctx->free;
			ctx->free = cl;
		}
	}

	return rc;
}

/* ------------------------------------------------------------------ */
/* Configuration                                                       */
/* ------------------------------------------------------------------ */

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
	conf->form_action_csp = NGX_CONF_UNSET;

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

/* The trusted origins as the library's slices, and the length of the
 * policy csrf_form_action_csp adds (the library checks it once here). */
static char *ngx_http_csrf_csp_conf(ngx_conf_t *cf, ngx_http_csrf_loc_conf_t *conf)
{
	size_t i, n;
	u_char *p;
	ngx_str_t *s;
	csrf_reason rc;
	char probe[1];

	n = conf->trusted ? conf->trusted->nelts : 0;

	conf->origins = ngx_pcalloc(cf->pool, (n ? n : 1) * sizeof(csrf_slice));
	if (conf->origins == NULL) {
		return NGX_CONF_ERROR;
	}

	for (i = 0; i < n; i++) {
		s = conf->trusted->elts;
		conf->origins[i] = ngx_http_csrf_slice(&s[i]);
	}

	rc = csrf_csp_form_action(NULL, 0, conf->origins, n, probe, sizeof(probe), &conf->csp_len);
	if (rc == CSRF_ERR_BUFFER) {
		p = ngx_pnalloc(cf->pool, conf->csp_len);
		if (p == NULL) {
			return NGX_CONF_ERROR;
		}
		rc = csrf_csp_form_action(NULL, 0, conf->origins, n, (char *)p, conf->csp_len, &conf->csp_len);
	}

	if (rc != CSRF_OK) {
		ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "csrf_form_action_csp: %s", csrf_reason_str(rc));
		return NGX_CONF_ERROR;
	}

	return NGX_CONF_OK;
}

static char *ngx_http_csrf_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
	ngx_http_csrf_loc_conf_t *prev = parent;
	ngx_http_csrf_loc_conf_t *conf = child;

	ngx_conf_merge_value(conf->enable, prev->enable, 0);
	ngx_conf_merge_uint_value(conf->mode, prev->mode, CSRF_MODE_ORIGIN_OR_TOKEN);
	ngx_conf_merge_str_value(conf->origin, prev->origin, "");
	ngx_conf_merge_ptr_value(conf->trusted, prev->trusted, NULL);
	ngx_conf_merge_str_value(conf->key_file, prev->key_file, "");
	ngx_conf_merge_ptr_value(conf->session_cookie, prev->session_cookie, NULL);
	ngx_conf_merge_str_value(conf->session_names, prev->session_names, "");
	ngx_conf_merge_value(conf->inject, prev->inject, 1);
	ngx_conf_merge_uint_value(conf->action, prev->action, NGX_HTTP_CSRF_ACTION_DENY);
	ngx_conf_merge_size_value(conf->body_max, prev->body_max, 1024 * 1024);
	ngx_conf_merge_value(conf->unsafe_get, prev->unsafe_get, 0);
	ngx_conf_merge_value(conf->status, prev->status, NGX_HTTP_FORBIDDEN);
	ngx_conf_merge_sec_value(conf->max_age, prev->max_age, 0);
	ngx_conf_merge_value(conf->form_action_csp, prev->form_action_csp, 0);

	if (!conf->enable) {
		return NGX_CONF_OK;
	}

	if (conf->form_action_csp && ngx_http_csrf_csp_conf(cf, conf) != NGX_CONF_OK) {
		return NGX_CONF_ERROR;
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

	ngx_http_next_header_filter = ngx_http_top_header_filter;
	ngx_http_top_header_filter = ngx_http_csrf_header_filter;

	ngx_http_next_body_filter = ngx_http_top_body_filter;
	ngx_http_top_body_filter = ngx_http_csrf_body_filter;

	return NGX_OK;
}
