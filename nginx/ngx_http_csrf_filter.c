/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ngx_http_csrf_module: the header and body filters. An HTML response's
 * header and first bytes wait until the library knows its charset; then
 * the library's page call and streaming injector rewrite it (or it passes
 * untouched). The answer to a rejected request gets only no-store.
 */

#include "ngx_http_csrf.h"

static ngx_http_output_header_filter_pt ngx_http_next_header_filter;
ngx_http_output_body_filter_pt ngx_http_csrf_next_body_filter;

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
	ngx_buf_t *b, *ib;
	ngx_chain_t *cl;
	unsigned injected = 0;
	ngx_http_csrf_ctx_t *ctx;

	ctx = ngx_http_get_module_ctx(r, ngx_http_csrf_module);

	if (ctx == NULL) {
		return ngx_http_csrf_next_body_filter(r, in);
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
		return ngx_http_csrf_next_body_filter(r, in);
	}

	if (in == NULL && ctx->busy == NULL) {
		return ngx_http_csrf_next_body_filter(r, in);
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

	return ngx_http_csrf_output(r, ctx);
}

void ngx_http_csrf_filter_init(void)
{
	ngx_http_next_header_filter = ngx_http_top_header_filter;
	ngx_http_top_header_filter = ngx_http_csrf_header_filter;

	ngx_http_csrf_next_body_filter = ngx_http_top_body_filter;
	ngx_http_top_body_filter = ngx_http_csrf_body_filter;
}
