/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ngx_http_csrf_module: the access phase. The request handed to the
 * library header by header, the body read when the library asks for it,
 * the verdict kept across internal redirects (a rejected request goes on
 * neutralized), the upstream asked for an uncompressed page where tokens
 * go in, and the $csrf_result variable.
 */

#include "ngx_http_csrf.h"

static void ngx_http_csrf_body_handler(ngx_http_request_t *r);
static void ngx_http_csrf_reject_body_handler(ngx_http_request_t *r);

/* Calls handler for every header of list; stops at the first that does
 * not answer NGX_OK and returns what it answered. */
ngx_int_t ngx_http_csrf_each_header(ngx_list_t *list, ngx_http_csrf_header_pt handler, void *data)
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

/* Adds a header to the response (the rejection's, the page's). */
ngx_int_t ngx_http_csrf_add_header(ngx_http_request_t *r, csrf_slice key, csrf_slice value)
{
	ngx_table_elt_t *h;

	h = ngx_list_push(&r->headers_out.headers);
	if (h == NULL) {
		return NGX_ERROR;
	}

	h->hash = 1;
	h->key.data = (u_char *)key.ptr;
	h->key.len = key.len;
	h->value.data = (u_char *)value.ptr;
	h->value.len = value.len;
#if (nginx_version >= 1023000)
	h->next = NULL;
#endif

	return NGX_OK;
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

/* After the walk: NGX_ERROR when a copy failed, else the header added
 * when the client sent none. */
static ngx_int_t ngx_http_csrf_identity_end(ngx_http_request_t *r, ngx_http_csrf_identity_t *id)
{
	ngx_table_elt_t *h;
	static u_char lowcase[] = "accept-encoding";
	static ngx_uint_t hash; /* of lowcase, once per process */

	if (id->failed) {
		return NGX_ERROR;
	}

	if (id->found) {
		return NGX_OK;
	}

	h = ngx_list_push(&r->headers_in.headers);
	if (h == NULL) {
		return NGX_ERROR;
	}

	ngx_str_set(&h->key, "Accept-Encoding");
	ngx_str_set(&h->value, "identity");
	h->lowcase_key = lowcase;
	if (hash == 0) {
		hash = ngx_hash_key(lowcase, sizeof(lowcase) - 1);
	}
	h->hash = hash;
#if (nginx_version >= 1023000)
	h->next = NULL;
#endif

	return NGX_OK;
}

static ngx_int_t ngx_http_csrf_identity(ngx_http_request_t *r)
{
	ngx_http_csrf_identity_t id = {r, 0, 0};

	(void)ngx_http_csrf_each_header(&r->headers_in.headers, ngx_http_csrf_identity_header, &id);

	return ngx_http_csrf_identity_end(r, &id);
}

/* The request as the library reads it: method, target, the connection's
 * scheme, and every request header handed over by name; with id, the
 * same walk asks the upstream for identity (ngx_http_csrf_identity_end
 * finishes it). The walk is written out here rather than through
 * ngx_http_csrf_each_header: a request's every header, twice for a page,
 * saves an indirect call each. */
static void ngx_http_csrf_request_in(ngx_http_request_t *r, csrf_request *req, ngx_http_csrf_identity_t *id)
{
	ngx_uint_t i;
	ngx_list_part_t *part;
	ngx_table_elt_t *h;

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

	for (part = &r->headers_in.headers.part; part; part = part->next) {
		h = part->elts;
		for (i = 0; i < part->nelts; i++) {
			csrf_request_header(req, (const char *)h[i].key.data, h[i].key.len,
			                    (const char *)h[i].value.data, h[i].value.len);
			if (id && ngx_http_csrf_identity_header(&h[i], id) != NGX_OK) {
				/* a copy failed (id->failed): ngx_http_csrf_identity_end
				 * says so; the request is still filed whole */
				id = NULL;
			}
		}
	}

	if (r->headers_in.chunked && req->transfer_encoding.ptr == NULL) {
		/* an HTTP/2 body without Content-Length */
		csrf_request_header(req, "Transfer-Encoding", 17, "chunked", 7);
	}
}

void ngx_http_csrf_request(ngx_http_request_t *r, csrf_request *req)
{
	ngx_http_csrf_request_in(r, req, NULL);
}

static void ngx_http_csrf_verdict_cleanup(void *data)
{
	(void)data;
}

/* The request's verdict, created on demand (NULL when create is 0 and
 * there is none, or when memory runs out). */
ngx_http_csrf_verdict_t *ngx_http_csrf_verdict(ngx_http_request_t *r, ngx_uint_t create)
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

ngx_http_csrf_ctx_t *ngx_http_csrf_get_ctx(ngx_http_request_t *r)
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

/* A rejected request that an internal redirect (error_page) sends on
 * continues as a GET without its body or a method override (a named
 * location would otherwise keep the method and the body this module
 * read): the upstream never receives the forged request. */
/* The headers a rejected request loses before it goes on: the method
 * overrides, its credentials (Cookie, Authorization), so that where an
 * error_page sends it the application sees an anonymous visitor, and
 * Upgrade, so that a refused WebSocket handshake cannot open a socket
 * there ("proxy_set_header Upgrade $http_upgrade" reads it from this
 * list) that the other site's page would read and write. A header is
 * renamed and emptied: upstreams copy the list, so it must not stay. */
static ngx_int_t ngx_http_csrf_drop_for_neutral(ngx_table_elt_t *h, void *data)
{
	(void)data;

	if (csrf_header_is_method_override((const char *)h->key.data, h->key.len) ||
	    (h->key.len == 6 && ngx_strncasecmp(h->key.data, (u_char *)"Cookie", 6) == 0) ||
	    (h->key.len == 7 && ngx_strncasecmp(h->key.data, (u_char *)"Upgrade", 7) == 0) ||
	    (h->key.len == 13 && ngx_strncasecmp(h->key.data, (u_char *)"Authorization", 13) == 0)) {
		ngx_str_set(&h->key, "X-CSRF-Dropped");
		h->lowcase_key = (u_char *)"x-csrf-dropped";
		h->hash = ngx_hash_key(h->lowcase_key, h->key.len);
		ngx_str_null(&h->value);
	}

	return NGX_OK;
}

/* The values nginx keeps for the request's life (internal redirects
 * included) of the variables that read what neutralizing takes away:
 * $http_..., $cookie_..., $arg_..., $args, $query_string, $is_args,
 * $request_uri, $request_method, $remote_user, forgotten, so that one
 * read before the verdict (an "if ($http_upgrade ...)", a "set" in the
 * location) is read again after it: where error_page sends the request,
 * "proxy_set_header Upgrade $http_upgrade" or "X-Sid $cookie_sid" finds
 * no Upgrade and no cookie. A value the configuration copied into a
 * variable of its own stays. */
static void ngx_http_csrf_forget_variables(ngx_http_request_t *r)
{
	ngx_uint_t i, k;
	ngx_str_t *n;
	ngx_http_variable_t *v;
	ngx_http_core_main_conf_t *cmcf;
	static ngx_str_t prefixes[] = {ngx_string("http_"), ngx_string("cookie_"), ngx_string("arg_")};
	static ngx_str_t names[] = {ngx_string("args"),        ngx_string("query_string"),   ngx_string("is_args"),
	                            ngx_string("request_uri"), ngx_string("request_method"), ngx_string("remote_user")};

	cmcf = ngx_http_get_module_main_conf(r, ngx_http_core_module);
	if (r->variables == NULL || cmcf == NULL) {
		return;
	}

	v = cmcf->variables.elts;
	for (i = 0; i < cmcf->variables.nelts; i++) {
		n = &v[i].name;
		for (k = 0; k < sizeof(prefixes) / sizeof(prefixes[0]); k++) {
			if (n->len > prefixes[k].len && ngx_strncmp(n->data, prefixes[k].data, prefixes[k].len) == 0) {
				break;
			}
		}
		if (k == sizeof(prefixes) / sizeof(prefixes[0])) {
			for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
				if (n->len == names[k].len && ngx_strncmp(n->data, names[k].data, n->len) == 0) {
					break;
				}
			}
			if (k == sizeof(names) / sizeof(names[0])) {
				continue;
			}
		}
		r->variables[i].valid = 0;
		r->variables[i].not_found = 0;
	}
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
	r->headers_in.upgrade = NULL;
	ngx_str_null(&r->headers_in.user);
	ngx_str_null(&r->headers_in.passwd);
#if defined(nginx_version) && nginx_version >= 1023000
	r->headers_in.cookie = NULL;
#else
	r->headers_in.cookies.nelts = 0;
#endif
	ngx_http_csrf_forget_variables(r);
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

static void ngx_http_csrf_answer_cleanup(void *data)
{
	csrf_reject_answer_wipe(data);
}

/* The module's own rejection page: the library's answer
 * (csrf_reject_answer: the page, its CSP and no-store, and with
 * csrf_retry_token on a fresh token for a stale one); error_page for the
 * status replaces it. */
static ngx_int_t ngx_http_csrf_send_reject(ngx_http_request_t *r, ngx_http_csrf_verdict_t *v, ngx_int_t status,
                                           const csrf_request *req)
{
	ngx_uint_t i;
	ngx_str_t type;
	ngx_pool_cleanup_t *cln;
	csrf_reject_answer_t *a;
	ngx_http_complex_value_t cv;

	if (ngx_http_csrf_error_page(r, status)) {
		/* neutralized before error_page sends it on: the new
		 * location's rewrite phase (a "set $sid $cookie_sid" in an
		 * @app) runs before its access phase does it again */
		ngx_http_csrf_neutralize(r);
		return status;
	}

	cln = ngx_pool_cleanup_add(r->pool, sizeof(csrf_reject_answer_t));
	if (cln == NULL) {
		return NGX_HTTP_INTERNAL_SERVER_ERROR;
	}
	a = cln->data;
	ngx_memzero(&a->page, sizeof(a->page));
	a->retry = 0;
	cln->handler = ngx_http_csrf_answer_cleanup;

	/* req: the request as the access phase read it, for the retry token */
	if (csrf_reject_answer(v->ctx, req, v->reason, (unsigned)status, a) != CSRF_OK) {
		return status;
	}

	if (a->retry) {
		ngx_http_csrf_log(NGX_LOG_INFO, r, "offered a fresh token to %V \"%V\": %s", &r->method_name, &r->uri,
		                  csrf_reason_name(v->reason));
	}

	ngx_str_set(&type, "text/html");
	for (i = 0; i < a->n_headers; i++) {
		if (a->headers[i].name.len == 12 &&
		    ngx_strncasecmp((u_char *)a->headers[i].name.ptr, (u_char *)"Content-Type", 12) == 0) {
			type.data = (u_char *)a->headers[i].value.ptr;
			type.len = a->headers[i].value.len;
			continue;
		}

		/* Cache-Control comes again from the header filter's rule for
		 * a rejection, after add_header's */
		if (ngx_http_csrf_add_header(r, a->headers[i].name, a->headers[i].value) != NGX_OK) {
			return NGX_HTTP_INTERNAL_SERVER_ERROR;
		}
	}

	ngx_memzero(&cv, sizeof(ngx_http_complex_value_t));
	cv.value.data = (u_char *)a->body;
	cv.value.len = a->body_len;

	return ngx_http_send_response(r, (ngx_uint_t)a->status, &type, &cv);
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

	return csrf_reason_http_status(res.reason, (unsigned)clcf->status);
}

/* Finalizes with a rejection, or lets the phase go on. A rejection is
 * final even under "satisfy any": it never counts as one failed access
 * method among others. req: the request judged (NULL when gone). */
static ngx_int_t ngx_http_csrf_answer(ngx_http_request_t *r, ngx_http_csrf_verdict_t *v, ngx_int_t status,
                                      const csrf_request *req)
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

	ngx_http_finalize_request(r, ngx_http_csrf_send_reject(r, v, status, req));

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

/* 1 where the module injects into HTML responses. */
ngx_uint_t ngx_http_csrf_injects(ngx_http_csrf_loc_conf_t *clcf)
{
	return clcf->enable && clcf->inject && csrf_ctx_injects(clcf->ctx);
}

/* The body as the library reads it when the client sent it whole with
 * the request head (a form of an HTTP/1 browser, a Content-Length within
 * csrf_body_max): the bytes nginx already holds after the head, in
 * r->header_in, are exactly the ones it hands the upstream first, so the
 * library judges them at once and nothing reads the body here. Left
 * unset (the body read by ngx_http_read_client_request_body when the
 * library asks for it): a body not yet all there (Expect: 100-continue, a
 * slow client, several packets), chunked, HTTP/2 and HTTP/3 (frames), or
 * one another module has begun to read. */
static void ngx_http_csrf_preread_body(ngx_http_request_t *r, ngx_http_csrf_loc_conf_t *clcf, csrf_request *req)
{
	off_t len;
	ngx_buf_t *b;

	len = r->headers_in.content_length_n;
	b = r->header_in;

	if (len <= 0 || (size_t)len > clcf->body_max || r->headers_in.chunked || r->request_body != NULL ||
	    r->http_version > NGX_HTTP_VERSION_11 || b == NULL || b->last - b->pos < len) {
		return;
	}

	req->body.ptr = (const char *)b->pos;
	req->body.len = (size_t)len;
}

/* ------------------------------------------------------------------ */
/* The body after an internal redirect                                 */
/* ------------------------------------------------------------------ */

/* An allowed request that an internal redirect (error_page after the
 * upstream failed) sends to a location with other settings is judged
 * again there, and that location may need the token its body carries.
 * By then nginx may have streamed the body to the first upstream
 * (proxy_request_buffering off, HTTP/2): its buffers are empty. So the
 * verdict keeps what the body was: the bytes a check judged whole
 * (ngx_http_csrf_saw_body), or, for a request allowed on its headers
 * alone in a location that has error_page, a copy made as the body
 * passes nginx's request body filters (ngx_http_csrf_keep). Where
 * neither is there and the body is gone, the check goes on without it
 * and fails closed (docs/architecture.md). */

static ngx_http_request_body_filter_pt ngx_http_csrf_next_request_body_filter;

/* Records the body a check saw whole: p (NULL when it was over
 * csrf_body_max: size alone) stays valid for the request's life. */
static void ngx_http_csrf_saw_body(ngx_http_csrf_verdict_t *v, const char *p, size_t len, off_t size)
{
	v->body.ptr = p;
	v->body.len = p ? len : 0;
	v->body_size = size;
	v->body_known = 1;
}

/* A body larger than the library reads: it judges by the size, written
 * into the context for the request's life. */
static void ngx_http_csrf_body_by_size(ngx_http_csrf_ctx_t *ctx, csrf_request *req, off_t size)
{
	req->body.ptr = NULL;
	req->content_length.ptr = (const char *)ctx->body_size;
	req->content_length.len = ngx_sprintf(ctx->body_size, "%O", size) - ctx->body_size;
}

/* The body the verdict knows, for this location's check: the bytes when
 * its csrf_body_max takes them, else their number (a body judged by its
 * size, or one the library would have to ask for: see the caller). */
static void ngx_http_csrf_known_body(ngx_http_csrf_verdict_t *v, ngx_http_csrf_loc_conf_t *clcf,
                                     ngx_http_csrf_ctx_t *ctx, csrf_request *req)
{
	if (v->body.ptr != NULL && v->body_size <= (off_t)clcf->body_max) {
		req->body = v->body;
		return;
	}

	ngx_http_csrf_body_by_size(ctx, req, v->body_size);
}

/* 1 when the body went on unread and unkept: read without buffering
 * (streamed, or still streaming, to an upstream) and not known. */
static ngx_uint_t ngx_http_csrf_body_gone(ngx_http_request_t *r, ngx_http_csrf_verdict_t *v)
{
	return !v->body_known && r->request_body != NULL && r->request_body_no_buffering;
}

/* 1 when a check could read the body: the library reads a token (or a
 * _method) only from an urlencoded or multipart body, or, for _method,
 * one without a Content-Type. Any Content-Type that does not say "form"
 * (JSON, text/plain, a file) is none of them, and a check judges it the
 * same whole or without it; the test is wider than the library's, so
 * that a body it would read is never left uncopied. */
static ngx_uint_t ngx_http_csrf_body_readable(const csrf_request *req)
{
	u_char *ct;

	if (req->content_type.ptr == NULL || (req->repeated & CSRF_HDR_CONTENT_TYPE)) {
		return 1;
	}
	ct = (u_char *)req->content_type.ptr;

	return ngx_strlcasestrn(ct, ct + req->content_type.len, (u_char *)"form", 4 - 1) != NULL;
}

/* 1 when the body of a request allowed without it is to be kept as it
 * streams: its location has error_page (the usual way nginx sends a
 * request on with its method after the upstream took the body;
 * X-Accel-Redirect to a URI makes it a GET, but one to a named location
 * keeps the POST, and without error_page that one is judged without its
 * body: it fails closed), nothing has read it yet, and a check could
 * read it. */
static ngx_uint_t ngx_http_csrf_may_stream(ngx_http_request_t *r, const csrf_request *req)
{
	ngx_http_core_loc_conf_t *core;

	core = ngx_http_get_module_loc_conf(r, ngx_http_core_module);

	return core->error_pages != NULL && req->body.ptr == NULL && r->request_body == NULL &&
	       (r->headers_in.content_length_n > 0 || r->headers_in.chunked) && ngx_http_csrf_body_readable(req);
}

/* Room for n more bytes in the kept copy, which grows with the bytes
 * that came (doubling from 4 KiB), never past max nor the
 * Content-Length: memory for what a client announced and never sent
 * would let a few bytes a connection hold csrf_body_max each. */
static ngx_int_t ngx_http_csrf_keep_room(ngx_http_request_t *r, ngx_http_csrf_ctx_t *ctx, size_t n, size_t max)
{
	size_t size, used;
	ngx_buf_t *b;

	used = ctx->kept ? (size_t)(ctx->kept->last - ctx->kept->pos) : 0;
	if (ctx->kept && (size_t)(ctx->kept->end - ctx->kept->last) >= n) {
		return NGX_OK;
	}

	size = ctx->kept ? 2 * (size_t)(ctx->kept->end - ctx->kept->start) : 4096;
	if (r->headers_in.content_length_n > 0 && (off_t)size > r->headers_in.content_length_n) {
		size = (size_t)r->headers_in.content_length_n;
	}
	size = ngx_min(ngx_max(size, used + n), max);

	b = ngx_create_temp_buf(r->pool, size);
	if (b == NULL) {
		return NGX_ERROR;
	}

	if (ctx->kept) {
		b->last = ngx_cpymem(b->pos, ctx->kept->pos, used);
		(void)ngx_pfree(r->pool, ctx->kept->start);
	}
	ctx->kept = b;

	return NGX_OK;
}

/* Copies the bufs of a streaming body (up to csrf_body_max, then only
 * counts them); at its last buf the verdict learns the body. A buf in a
 * file (nginx streams from memory) or no memory: the copy stops, nothing
 * is known, and a later check fails closed. */
static void ngx_http_csrf_keep(ngx_http_request_t *r, ngx_http_csrf_ctx_t *ctx, ngx_chain_t *in)
{
	size_t n, max;
	ngx_buf_t *b;
	ngx_chain_t *cl;
	ngx_http_csrf_verdict_t *v;
	ngx_http_csrf_loc_conf_t *clcf;

	clcf = ngx_http_get_module_loc_conf(r, ngx_http_csrf_module);
	max = clcf->body_max;

	for (cl = in; cl; cl = cl->next) {
		b = cl->buf;

		if (!ngx_buf_in_memory(b) && ngx_buf_size(b)) {
			ctx->keeping = 0;
			return;
		}

		n = ngx_buf_in_memory(b) ? (size_t)(b->last - b->pos) : 0;
		ctx->kept_size += n;

		if (ctx->kept_size > (off_t)max) {
			if (ctx->kept) {
				(void)ngx_pfree(r->pool, ctx->kept->start);
				ctx->kept = NULL;
			}

		} else if (n) {
			if (ngx_http_csrf_keep_room(r, ctx, n, max) != NGX_OK) {
				ctx->keeping = 0;
				return;
			}
			ctx->kept->last = ngx_cpymem(ctx->kept->last, b->pos, n);
		}

		if (b->last_buf) {
			ctx->keeping = 0;
			v = ngx_http_csrf_verdict(r, 0);
			if (v == NULL) {
				return;
			}
			if (ctx->kept_size > (off_t)max) {
				ngx_http_csrf_saw_body(v, NULL, 0, ctx->kept_size);
			} else {
				ngx_http_csrf_saw_body(v, ctx->kept ? (const char *)ctx->kept->pos : "",
				                       (size_t)ctx->kept_size, ctx->kept_size);
			}
			return;
		}
	}
}

static ngx_int_t ngx_http_csrf_request_body_filter(ngx_http_request_t *r, ngx_chain_t *in)
{
	ngx_http_csrf_ctx_t *ctx;

	ctx = ngx_http_get_module_ctx(r, ngx_http_csrf_module);
	if (ctx != NULL && ctx->keeping) {
		if (r->request_body_no_buffering) {
			ngx_http_csrf_keep(r, ctx, in);
		} else {
			/* read whole into nginx's buffers, which keep it */
			ctx->keeping = 0;
		}
	}

	return ngx_http_csrf_next_request_body_filter(r, in);
}

void ngx_http_csrf_request_body_filter_init(void)
{
	ngx_http_csrf_next_request_body_filter = ngx_http_top_request_body_filter;
	ngx_http_top_request_body_filter = ngx_http_csrf_request_body_filter;
}

ngx_int_t ngx_http_csrf_access_handler(ngx_http_request_t *r)
{
	ngx_int_t rc, status;
	ngx_uint_t injects;
	csrf_result res;
	csrf_request req;
	ngx_http_csrf_ctx_t *ctx;
	ngx_http_csrf_verdict_t *v;
	ngx_http_csrf_loc_conf_t *clcf;
	ngx_http_csrf_identity_t id = {r, 0, 0};

	if (r != r->main) {
		return NGX_DECLINED;
	}

	/* where the module injects, the upstream is asked for identity: in
	 * the walk that files the headers when the request is judged here,
	 * else in a walk of its own */
	clcf = ngx_http_get_module_loc_conf(r, ngx_http_csrf_module);
	injects = ngx_http_csrf_injects(clcf);

	v = ngx_http_csrf_verdict(r, 0);

	if (v && v->checked) {
		if (injects && ngx_http_csrf_identity(r) != NGX_OK) {
			return NGX_HTTP_INTERNAL_SERVER_ERROR;
		}
		injects = 0;

		if (v->pending) {
			/* re-entry after the body was read */
			status = v->pending;
			v->pending = 0;
			ctx = ngx_http_get_module_ctx(r, ngx_http_csrf_module);
			return ngx_http_csrf_answer(r, v, status, ctx ? ctx->req : NULL);
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

	/* the module context only where the access phase keeps something
	 * in it (the body's size or bytes, the request for the body
	 * handler): a request judged on its headers alone allocates none
	 * here (the header filter makes one for a page) */
	ctx = NULL;
	v = ngx_http_csrf_verdict(r, 1);
	if (v == NULL) {
		return NGX_HTTP_INTERNAL_SERVER_ERROR;
	}

	ngx_http_csrf_request_in(r, &req, injects ? &id : NULL);
	if (injects && ngx_http_csrf_identity_end(r, &id) != NGX_OK) {
		return NGX_HTTP_INTERNAL_SERVER_ERROR;
	}
	if (v->body_known) {
		ctx = ngx_http_csrf_get_ctx(r);
		if (ctx == NULL) {
			return NGX_HTTP_INTERNAL_SERVER_ERROR;
		}
		ngx_http_csrf_known_body(v, clcf, ctx, &req);
	} else {
		ngx_http_csrf_preread_body(r, clcf, &req);
	}

	res = csrf_check(clcf->ctx, &req);

	if (res.needs_body && (v->body_known || ngx_http_csrf_body_gone(r, v))) {
		/* judged again after an internal redirect, and the body is
		 * not there to read: the library's answer without it stands
		 * (a rejection, token_missing) */
		ngx_http_csrf_log(NGX_LOG_WARN, r, "%V \"%V\" judged without its body, which went on unread",
		                  &r->method_name, &r->uri);
		res.needs_body = 0;
	}

	if (res.needs_body) {
		/* the token is in the body: read it, intact for the upstream */
		ctx = ngx_http_csrf_get_ctx(r);
		if (ctx == NULL) {
			return NGX_HTTP_INTERNAL_SERVER_ERROR;
		}
		ctx->req = ngx_palloc(r->pool, sizeof(csrf_request));
		if (ctx->req == NULL) {
			return NGX_HTTP_INTERNAL_SERVER_ERROR;
		}
		*ctx->req = req;

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

	if (!v->body_known && req.body.ptr != NULL) {
		/* judged whole where nginx holds it (r->header_in) */
		ngx_http_csrf_saw_body(v, req.body.ptr, req.body.len, (off_t)req.body.len);
	} else if (!v->body_known && (res.allowed || res.report_only) && ngx_http_csrf_may_stream(r, &req)) {
		ctx = ngx_http_csrf_get_ctx(r);
		if (ctx == NULL) {
			return NGX_HTTP_INTERNAL_SERVER_ERROR;
		}
		ctx->keeping = 1;
	}

	return ngx_http_csrf_answer(r, v, ngx_http_csrf_judge(r, clcf, v, res), &req);
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

	if (rc == NGX_ERROR || ctx == NULL || ctx->req == NULL || v == NULL) {
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
			ngx_http_csrf_body_by_size(ctx, ctx->req, size);
			ngx_http_csrf_saw_body(v, NULL, 0, size);

		} else {
			ctx->req->body.ptr = (const char *)body.data;
			ctx->req->body.len = body.len;
			ngx_http_csrf_saw_body(v, ctx->req->body.ptr, body.len, (off_t)body.len);
		}

		res = csrf_check(clcf->ctx, ctx->req);
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

ngx_int_t ngx_http_csrf_result_variable(ngx_http_request_t *r, ngx_http_variable_value_t *v, uintptr_t data)
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
