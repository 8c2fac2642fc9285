/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ngx_http_csrf_module: the header and body filters. An HTML response's
 * header and first bytes wait until the library knows its charset; then
 * the library's page call and streaming injector rewrite it (or it passes
 * untouched). The answer to a rejected request gets only no-store.
 */

#include "ngx_http_csrf.h"

static ngx_http_output_header_filter_pt ngx_http_next_header_filter;

static void ngx_http_csrf_response_cleanup(void *data);

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

/* The response's headers for the library: those of the list, each with
 * its element, and with fields set those nginx keeps only in fields (a
 * length, a modification time; no element); room for the library's
 * answer about each. Used while one function runs: the arrays are its
 * own (on the stack) for a response of up to NGX_HTTP_CSRF_HEADERS
 * headers, from the request pool for a longer one. */
#define NGX_HTTP_CSRF_HEADERS 32

typedef struct {
	csrf_header *headers;
	ngx_table_elt_t **elts;
	u_char *action;
	csrf_slice *value;
	ngx_uint_t n;
	csrf_header headers_in[NGX_HTTP_CSRF_HEADERS];
	ngx_table_elt_t *elts_in[NGX_HTTP_CSRF_HEADERS];
	u_char action_in[NGX_HTTP_CSRF_HEADERS];
	csrf_slice value_in[NGX_HTTP_CSRF_HEADERS];
} ngx_http_csrf_headers_t;

static ngx_int_t ngx_http_csrf_list_header(ngx_table_elt_t *h, void *data)
{
	ngx_http_csrf_headers_t *c = data;

	if (h->hash != 0) {
		c->headers[c->n].name = ngx_http_csrf_slice(&h->key);
		c->headers[c->n].value = ngx_http_csrf_slice(&h->value);
		c->elts[c->n++] = h;
	}

	return NGX_OK;
}

static ngx_int_t ngx_http_csrf_headers(ngx_http_request_t *r, ngx_http_csrf_headers_t *c, ngx_uint_t fields)
{
	ngx_uint_t n;
	ngx_list_part_t *part;
	ngx_http_headers_out_t *ho = &r->headers_out;

	n = 2;
	for (part = &ho->headers.part; part; part = part->next) {
		n += part->nelts;
	}

	if (n <= NGX_HTTP_CSRF_HEADERS) {
		c->headers = c->headers_in;
		c->elts = c->elts_in;
		c->action = c->action_in;
		c->value = c->value_in;

	} else {
		c->headers = ngx_palloc(r->pool, n * sizeof(csrf_header));
		c->elts = ngx_palloc(r->pool, n * sizeof(ngx_table_elt_t *));
		c->action = ngx_pnalloc(r->pool, n);
		c->value = ngx_palloc(r->pool, n * sizeof(csrf_slice));
		if (c->headers == NULL || c->elts == NULL || c->action == NULL || c->value == NULL) {
			return NGX_ERROR;
		}
	}

	c->n = 0;
	(void)ngx_http_csrf_each_header(&ho->headers, ngx_http_csrf_list_header, c);

	if (fields && ho->content_length == NULL && ho->content_length_n >= 0) {
		c->headers[c->n].name = (csrf_slice){"Content-Length", 14};
		c->headers[c->n].value = (csrf_slice){"", 0};
		c->elts[c->n++] = NULL;
	}
	if (fields && ho->last_modified == NULL && ho->last_modified_time != -1) {
		c->headers[c->n].name = (csrf_slice){"Last-Modified", 13};
		c->headers[c->n].value = (csrf_slice){"", 0};
		c->elts[c->n++] = NULL;
	}

	return NGX_OK;
}

/* The library's cache rule for the answer to a rejected request
 * (csrf_rejection_cache): every cache field goes, then no-store. */
static ngx_int_t ngx_http_csrf_rejection_cache(ngx_http_request_t *r)
{
	ngx_uint_t i;
	csrf_slice add;
	ngx_http_csrf_headers_t c;

	if (ngx_http_csrf_headers(r, &c, 0) != NGX_OK ||
	    csrf_rejection_cache(c.headers, c.n, c.action, &add) != CSRF_OK) {
		return NGX_ERROR;
	}

	for (i = 0; i < c.n; i++) {
		if (c.action[i]) {
			c.elts[i]->hash = 0;
		}
	}

	if (add.ptr == NULL) {
		return NGX_OK;
	}

	return ngx_http_csrf_add_header(r, (csrf_slice){"Cache-Control", 13}, add);
}

/* csrf_referrer_same_origin: the Referrer-Policy lines the library says
 * make the page's own forms send "Origin: null" say same-origin, in the
 * headers c translated (and in c, for what reads them next). */
static ngx_int_t ngx_http_csrf_referrer_in(ngx_http_csrf_headers_t *c)
{
	ngx_uint_t i;

	if (csrf_response_referrer(c->headers, c->n, c->action) != CSRF_OK) {
		return NGX_ERROR;
	}

	for (i = 0; i < c->n; i++) {
		if (c->action[i] && c->elts[i]) {
			ngx_str_set(&c->elts[i]->value, CSRF_REFERRER_RAISED);
			c->headers[i].value = ngx_http_csrf_slice(&c->elts[i]->value);
		}
	}

	return NGX_OK;
}

/* The same for a response the exchange does not judge (its headers are
 * translated for this alone). */
static ngx_int_t ngx_http_csrf_referrer(ngx_http_request_t *r)
{
	ngx_http_csrf_headers_t c;

	if (ngx_http_csrf_headers(r, &c, 0) != NGX_OK) {
		return NGX_ERROR;
	}

	return ngx_http_csrf_referrer_in(&c);
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

/* A header that goes on now, without the exchange: only the referrer
 * raise, when the location asks for it. A page the exchange judges gets
 * the raise in ngx_http_csrf_start's one translation of its headers, or
 * in ngx_http_csrf_hold when it passes. */
static ngx_int_t ngx_http_csrf_pass_header(ngx_http_request_t *r, ngx_http_csrf_loc_conf_t *clcf)
{
	if (clcf->enable && clcf->referrer_same_origin && r == r->main && ngx_http_csrf_referrer(r) != NGX_OK) {
		return NGX_ERROR;
	}

	return ngx_http_next_header_filter(r);
}

/* An HTML response the module may rewrite (the library's answer,
 * csrf_response_begin): its header waits in the body filter, with at most
 * CSRF_CHARSET_PRESCAN_MAX of its first bytes, until the library knows
 * the charset the browser will read it in. */
static ngx_int_t ngx_http_csrf_header_filter(ngx_http_request_t *r)
{
	void *mem;
	ngx_str_t ct;
	ngx_table_elt_t *ce;
	ngx_pool_cleanup_t *cln;
	ngx_http_csrf_ctx_t *ctx;
	ngx_http_csrf_verdict_t *v;
	ngx_http_csrf_loc_conf_t *clcf;
	csrf_response_verdict verdict;

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
		if (ngx_http_csrf_rejection_cache(r) != NGX_OK) {
			return NGX_ERROR;
		}
		return ngx_http_next_header_filter(r);
	}

	clcf = ngx_http_get_module_loc_conf(r, ngx_http_csrf_module);

	/* nginx sets header_only for HEAD only in its last header filter,
	 * after this one: the library reads the method */
	if (!clcf->enable || !clcf->inject || clcf->ctx == NULL || r != r->main || r->header_only) {
		return ngx_http_csrf_pass_header(r, clcf);
	}

	if (ngx_http_csrf_content_type(r, &ct) != NGX_OK) {
		return NGX_ERROR;
	}

	ce = r->headers_out.content_encoding;
	if (ce && ce->hash == 0) {
		ce = NULL;
	}

	verdict = csrf_response_begin(clcf->ctx, (const char *)r->method_name.data, r->method_name.len,
	                              (unsigned)r->headers_out.status, ct.len ? (const char *)ct.data : NULL, ct.len,
	                              ce ? (const char *)ce->value.data : NULL, ce ? ce->value.len : 0);

	if (verdict == CSRF_RESPONSE_COMPRESSED) {
		/* the upstream compressed it after all (an operator's
		 * Accept-Encoding, or an upstream that ignores it) */
		ngx_http_csrf_log(NGX_LOG_WARN, r,
		                  "no tokens in \"%V\": it arrived compressed (Content-Encoding: %V), passed "
		                  "through untouched",
		                  &r->uri, &ce->value);
	}

	if (verdict != CSRF_RESPONSE_INJECT) {
		ngx_http_csrf_metrics_response(r, verdict, NULL);
		return ngx_http_csrf_pass_header(r, clcf);
	}

	/* the library's state with the page's first bufs, one allocation */
	ctx = ngx_http_csrf_get_ctx(r);
	mem = ngx_pmemalign(r->pool, ngx_http_csrf_page_block_size(), 16);
	cln = ngx_pool_cleanup_add(r->pool, 0);
	if (ctx == NULL || mem == NULL || cln == NULL ||
	    csrf_response_init(ngx_http_csrf_page_block(ctx, mem), csrf_response_size(), clcf->ctx,
	                       ct.len ? (const char *)ct.data : NULL, ct.len, &ctx->resp) != CSRF_OK) {
		return NGX_ERROR;
	}

	/* a page that stops before its end is counted when the request goes */
	ctx->request = r;
	cln->handler = ngx_http_csrf_response_cleanup;
	cln->data = ctx;

	ctx->inject = 0;
	ctx->held_cl = NULL;
	ctx->holding = 1;
	ctx->counted = 0;
	ctx->raised = clcf->referrer_same_origin ? 0 : 1;

	/* the body is read in memory, the subrequests' too (an SSI include
	 * spooled to a temp file: each subrequest's copy filter reads by its
	 * own flags, and only main_filter_need_in_memory is inherited); no
	 * range of it is served (the range filter comes after this one and
	 * would see a header too late) */
	r->filter_need_in_memory = 1;
	r->main_filter_need_in_memory = 1;
	r->allow_ranges = 0;

	return NGX_OK;
}

/* A header the library drops that nginx also keeps in a field: the
 * field goes too (elt NULL: a header nginx keeps only in a field). */
static void ngx_http_csrf_drop(ngx_http_request_t *r, ngx_table_elt_t *elt, csrf_slice name)
{
	ngx_http_headers_out_t *ho = &r->headers_out;

	if (elt == NULL ? name.len == 14 : elt == ho->content_length) {
		ngx_http_clear_content_length(r);
	} else if (elt == NULL ? name.len == 13 : elt == ho->last_modified) {
		ngx_http_clear_last_modified(r);
	} else if (elt != NULL && elt == ho->etag) {
		ngx_http_clear_etag(r);
	} else if (elt != NULL && elt == ho->accept_ranges) {
		ngx_http_clear_accept_ranges(r);
	}
}

/* The charset says the page can take tokens: the library judges the
 * response's headers (csrf_response_headers) and this applies what it
 * said. ctx->inject stays 0 (the response then goes out untouched) when
 * the library cannot prepare the page. */
static ngx_int_t ngx_http_csrf_start(ngx_http_request_t *r, ngx_http_csrf_ctx_t *ctx)
{
	size_t n_add;
	ngx_uint_t i;
	csrf_request req;
	csrf_header add[CSRF_RESPONSE_ADD_MAX];
	ngx_http_csrf_headers_t c;
	ngx_http_csrf_loc_conf_t *clcf;

	clcf = ngx_http_get_module_loc_conf(r, ngx_http_csrf_module);

	if (ngx_http_csrf_headers(r, &c, 1) != NGX_OK) {
		return NGX_ERROR;
	}

	/* the referrer raise in the same translation (c.action is reused) */
	if (!ctx->raised) {
		if (ngx_http_csrf_referrer_in(&c) != NGX_OK) {
			return NGX_ERROR;
		}
		ctx->raised = 1;
	}

	/* the request's own headers (after an internal redirect the access
	 * phase's copy is gone with the module context) */
	ngx_http_csrf_request(r, &req);

	/* With its length known, the response ends with its last byte: the
	 * end (the chunked encoding's last chunk) leaves in the same write
	 * as that byte, not in one of its own when the upstream's empty last
	 * buf comes. */
	ctx->left = r->headers_out.content_length_n;

	if (csrf_response_headers(ctx->resp, &req, c.headers, c.n, c.action, c.value, add, &n_add) != CSRF_OK) {
		ngx_http_csrf_session_unseen(r, clcf, &req);
		ctx->left = -1;
		return NGX_OK;
	}

	ngx_http_csrf_session_unseen(r, clcf, &req);

	for (i = 0; i < c.n; i++) {
		if (c.action[i] == CSRF_HEADER_DROP) {
			if (c.elts[i]) {
				c.elts[i]->hash = 0;
			}
			ngx_http_csrf_drop(r, c.elts[i], c.headers[i].name);

		} else if (c.action[i] == CSRF_HEADER_REPLACE && c.elts[i]) {
			c.elts[i]->value.data = (u_char *)c.value[i].ptr;
			c.elts[i]->value.len = c.value[i].len;
		}
	}

	for (i = 0; i < n_add; i++) {
		if (ngx_http_csrf_add_header(r, add[i].name, add[i].value) != NGX_OK) {
			return NGX_ERROR;
		}
	}

	ctx->inject = 1;
	ctx->last_out = &ctx->out;

	return NGX_OK;
}

/* The end of the exchange for an injectable page (passed, or ended): the
 * library's warning line, when it has one, and the page's counts. */
static void ngx_http_csrf_log_response(ngx_http_request_t *r, ngx_http_csrf_ctx_t *ctx)
{
	size_t len;
	u_char text[CSRF_RESPONSE_LOG_MAX];

	ctx->counted = 1;
	ngx_http_csrf_metrics_response(r, CSRF_RESPONSE_INJECT, ctx->resp);

	len = csrf_response_log(ctx->resp, (char *)text, sizeof(text));
	if (len) {
		ngx_http_csrf_log(NGX_LOG_WARN, r, "\"%V\": %*s", &r->uri, len, text);
	}
}

/* A body buf in a file, not in memory, reached the injector. None of
 * nginx's own filters hands one on since the header filter set
 * main_filter_need_in_memory, which the copy filter of the request and of
 * every subrequest reads (see docs/architecture.md); a third-party filter
 * between the copy filter and this one could. The module cannot read it
 * where it stands, and passed on unread its forms would leave without
 * their tokens while the page is served: the response ends instead, and
 * stays ended (ctx->failed). */
static ngx_int_t ngx_http_csrf_file_buf(ngx_http_request_t *r, ngx_http_csrf_ctx_t *ctx)
{
	ctx->failed = 1;
	ngx_http_csrf_log(NGX_LOG_ERR, r,
	                  "\"%V\": a body buf in a file, not in memory, reached the token injector (a filter "
	                  "before it hands on file bufs): the response is ended",
	                  &r->uri);

	return NGX_ERROR;
}

/* Holds the body's first bytes (in the library's state: csrf_response_hold,
 * the input bufs consumed) until the library decides the charset; then
 * sends the header, rewritten or not, and leaves in *in the held bytes
 * followed by the rest of the input. ctx->holding stays set (and *in is
 * NULL) while more bytes are needed. */
static ngx_int_t ngx_http_csrf_hold(ngx_http_request_t *r, ngx_http_csrf_ctx_t *ctx, ngx_chain_t **in)
{
	size_t used;
	ngx_int_t rc;
	ngx_buf_t *b, *hb;
	csrf_slice held;
	ngx_chain_t *cl, *hcl;
	csrf_charset_verdict cv;

	if (ctx->held_cl == NULL) {
		/* a shell of the page's block; never back on the shell list
		 * (an input buf, not in the output chain) */
		ctx->held_cl = ngx_http_csrf_get_shell(r, ctx);
		if (ctx->held_cl == NULL) {
			return NGX_ERROR;
		}
	}

	hcl = ctx->held_cl;
	hb = hcl->buf;
	cv = CSRF_CHARSET_MORE;

	/* the bufs taken whole leave the chain; their flags go with the copy */
	for (cl = *in; cl; cl = cl->next) {
		b = cl->buf;

		if (!ngx_buf_in_memory(b) && ngx_buf_size(b)) {
			return ngx_http_csrf_file_buf(r, ctx);
		}

		cv = csrf_response_hold(ctx->resp, (const char *)b->pos, b->last - b->pos, b->last_buf, &used);
		b->pos += used;

		if (b->pos != b->last) {
			break;
		}

		hb->last_buf |= b->last_buf;
		hb->last_in_chain |= b->last_in_chain;
		hb->flush |= b->flush;

		if (cv != CSRF_CHARSET_MORE) {
			cl = cl->next;
			break;
		}
	}

	if (cv == CSRF_CHARSET_MORE) {
		*in = NULL;
		return NGX_OK;
	}

	ctx->holding = 0;

	if (cv == CSRF_CHARSET_INJECT) {
		if (ngx_http_csrf_start(r, ctx) != NGX_OK) {
			return NGX_ERROR;
		}
	}

	if (!ctx->inject) {
		ngx_http_csrf_log_response(r, ctx);
	}

	if (!ctx->raised) {
		/* a page passed before its headers were judged */
		if (ngx_http_csrf_referrer(r) != NGX_OK) {
			return NGX_ERROR;
		}
		ctx->raised = 1;
	}

	rc = ngx_http_next_header_filter(r);
	if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
		return NGX_ERROR;
	}

	held = csrf_response_held(ctx->resp);
	hb->pos = (u_char *)held.ptr;
	hb->last = hb->pos + held.len;
	hb->start = NULL; /* never reused as an output buf */
	hb->memory = held.len ? 1 : 0;
	hb->sync = held.len ? 0 : 1;
	hb->tag = (ngx_buf_tag_t)&ngx_http_csrf_module;
	hcl->next = cl;
	*in = hcl;

	return NGX_OK;
}

static int ngx_http_csrf_discard(void *ud, const char *p, size_t n, int inserted)
{
	(void)ud;
	(void)p;
	(void)n;
	(void)inserted;
	return 0;
}

/* The request's pool goes while its page was still being rewritten (the
 * client went away, the upstream stopped short): the exchange ends here,
 * into nothing, so the page counts with the insertions it got and the
 * injector's copy of the token is wiped. */
static void ngx_http_csrf_response_cleanup(void *data)
{
	unsigned status;
	ngx_http_csrf_ctx_t *ctx = data;

	if (ctx->counted || !ctx->inject || ctx->resp == NULL) {
		return;
	}

	/* whatever it answers (an injector that failed earlier), it ended */
	ctx->counted = 1;
	if (csrf_response_end(ctx->resp, ngx_http_csrf_discard, NULL, &status) != CSRF_OK) {
		status = 0;
	}
	ngx_http_csrf_metrics_response(ctx->request, CSRF_RESPONSE_INJECT, ctx->resp);
}

static ngx_int_t ngx_http_csrf_body_filter(ngx_http_request_t *r, ngx_chain_t *in)
{
	off_t size;
	csrf_reason rc;
	ngx_buf_t *b, *ib;
	ngx_chain_t *cl;
	unsigned status = 0;
	ngx_http_csrf_ctx_t *ctx;

	ctx = ngx_http_get_module_ctx(r, ngx_http_csrf_module);

	if (ctx == NULL) {
		return ngx_http_csrf_next_body_filter(r, in);
	}

	if (ctx->failed) {
		/* the response was ended: nothing of it goes on unread */
		return NGX_ERROR;
	}

	if (ctx->holding) {
		if (ngx_http_csrf_hold(r, ctx, &in) != NGX_OK) {
			return NGX_ERROR;
		}
		if (ctx->holding) {
			return NGX_OK;
		}
	}

	if (!ctx->inject) {
		return ngx_http_csrf_next_body_filter(r, in);
	}

	if (in == NULL && ctx->busy == NULL) {
		return ngx_http_csrf_next_body_filter(r, in);
	}

	ctx->out = NULL;
	ctx->last_out = &ctx->out;
	ctx->fill = NULL;

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
			ctx->in_start = ib->pos;
			ctx->in_end = ib->last;
			rc = csrf_response_feed(ctx->resp, (const char *)ib->pos, ib->last - ib->pos,
			                        ngx_http_csrf_emit, ctx);
			ctx->in_start = NULL;
			ctx->in_end = NULL;
			if (rc != CSRF_OK) {
				ctx->failed = 1;
				return NGX_ERROR;
			}

		} else if (ngx_buf_size(ib)) {
			return ngx_http_csrf_file_buf(r, ctx);
		}

		if (ib->last_buf || (ctx->left >= 0 && ctx->left <= size)) {
			/* the response's end: the bytes of a form the injector
			 * still holds (its end tag never came) go out too */
			if (csrf_response_end(ctx->resp, ngx_http_csrf_emit, ctx, &status) != CSRF_OK) {
				ctx->failed = 1;
				return NGX_ERROR;
			}
		}

		b = ctx->cur;

		if (b == NULL || b->shadow != NULL) {
			/* no bytes from this buf, or only in an output buf that
			 * shadows an earlier one: an empty one for its flags */
			cl = ngx_http_csrf_get_shell(r, ctx);
			if (cl == NULL) {
				return NGX_ERROR;
			}
			b = cl->buf;
			b->sync = 1;
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
			ngx_http_csrf_log_response(r, ctx);
		}
	}

	/* what went down the chain is not written to again */
	ctx->cur = NULL;
	ctx->fill = NULL;

	return ngx_http_csrf_output(r, ctx);
}

void ngx_http_csrf_filter_init(void)
{
	ngx_http_next_header_filter = ngx_http_top_header_filter;
	ngx_http_top_header_filter = ngx_http_csrf_header_filter;

	ngx_http_csrf_next_body_filter = ngx_http_top_body_filter;
	ngx_http_top_body_filter = ngx_http_csrf_body_filter;
}
