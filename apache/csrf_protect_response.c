/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mod_csrf_protect: the response half. An output filter, the last of
 * the content filters (after mod_include, mod_substitute and mod_sed,
 * before mod_deflate however it was added) hands each response to the library's exchange
 * (csrf_response_*): the library says which responses get tokens, holds
 * the first bytes until the charset is known, judges every header and
 * names the ones to add, and injects as the body streams through; the
 * filter only moves buckets and table entries. Memory stays flat: each
 * input bucket is read, fed and deleted, and the output passed on in
 * pieces.
 */

#include "mod_csrf_protect.h"

APLOG_USE_MODULE(csrf_protect);

/* Output gathered before it is passed on. */
#define CSRF_PROTECT_PASS_AT (64 * 1024)
/* An unchanged run this long or longer leaves as a bucket pointing into
 * the input bucket's memory; a shorter one, and every inserted or held
 * piece, is copied into the current copy buffer. */
#define CSRF_PROTECT_REF_MIN 256
/* The size of a copy buffer (apr_brigade_write's). */
#define CSRF_PROTECT_COPY_SIZE APR_BUCKET_BUFF_SIZE

typedef struct {
	csrf_response *resp;
	csrf_ctx *ctx;
	const csrf_protect_conf *conf; /* settled */
	apr_bucket_brigade *out;
	apr_size_t pending; /* bytes in out */
	/* the input bucket being fed, read: emit points into its data */
	apr_bucket *src;
	const char *src_data;
	apr_size_t src_len;
	/* the current copy buffer: a heap bucket in no brigade (this
	 * filter's reference), whose pieces go out as copies of it */
	apr_bucket *copy;
	char *copy_base;
	apr_size_t copy_size; /* n when a piece of n > 8 KB bytes made it */
	apr_size_t copy_used;
	int holding; /* the charset is not known yet: the header waits */
	int inject;  /* the library prepared the page: the body goes through it */
	int ended;
	int failed;
} csrf_protect_out;

static int csrf_protect_is_compressor(const char *name)
{
	static const char *const names[] = {"deflate", "brotli_compress", "bytype:deflate", "bytype:brotli_compress"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (name && strcasecmp(name, names[i]) == 0)
			return 1;
	}
	return 0;
}

/* The filter goes last among the request's content filters (this hook
 * runs after core's and mod_filter's): after mod_include,
 * mod_substitute and mod_sed. A compressor placed among them, as
 * mod_filter places AddOutputFilterByType DEFLATE (Debian's deflate.conf)
 * at AP_FTYPE_RESOURCE, is moved after it, so pages are compressed with
 * their tokens instead of passing without. */
void csrf_protect_insert_filter(request_rec *r)
{
	csrf_protect_conf *c;
	ap_filter_t *f, *moved[8];
	size_t n = 0;

	if (r->main)
		return;
	c = ap_get_module_config(r->per_dir_config, &csrf_protect_module);
	if (c == NULL || c->enable != 1)
		return;
	for (f = r->output_filters; f && f->r == r && f->frec->ftype <= AP_FTYPE_RESOURCE; f = f->next) {
		if (csrf_protect_is_compressor(f->frec->name) && n < sizeof(moved) / sizeof(moved[0]))
			moved[n++] = f;
	}
	ap_add_output_filter(CSRF_PROTECT_FILTER, NULL, r, r->connection);
	for (size_t i = 0; i < n; i++) {
		ap_filter_rec_t *frec = moved[i]->frec;
		void *ctx = moved[i]->ctx;
		ap_remove_output_filter(moved[i]);
		ap_add_output_filter_handle(frec, ctx, r, r->connection);
	}
}

/* The two tables a response's header is made of, as the library reads
 * them, with Content-Type (Apache keeps it apart) last. */
typedef struct {
	csrf_header *h;
	apr_table_entry_t **entry; /* NULL: the Content-Type */
	apr_table_t **table;
	size_t n;
} csrf_protect_headers;

static void csrf_protect_headers_of(request_rec *r, csrf_protect_headers *c, int with_type)
{
	apr_table_t **tables[2] = {&r->headers_out, &r->err_headers_out};
	size_t n = 1;

	for (int t = 0; t < 2; t++)
		n += (size_t)apr_table_elts(*tables[t])->nelts;
	c->h = apr_palloc(r->pool, n * sizeof(*c->h));
	c->entry = apr_palloc(r->pool, n * sizeof(*c->entry));
	c->table = apr_palloc(r->pool, n * sizeof(*c->table));
	c->n = 0;
	for (int t = 0; t < 2; t++) {
		const apr_array_header_t *a = apr_table_elts(*tables[t]);
		apr_table_entry_t *e = (apr_table_entry_t *)a->elts;
		for (int i = 0; i < a->nelts; i++) {
			if (e[i].key == NULL)
				continue;
			c->h[c->n].name = (csrf_slice){e[i].key, strlen(e[i].key)};
			c->h[c->n].value = (csrf_slice){e[i].val, strlen(e[i].val)};
			c->entry[c->n] = &e[i];
			c->table[c->n++] = *tables[t];
		}
	}
	if (with_type && r->content_type) {
		const char *ct = ap_make_content_type(r, r->content_type);
		c->h[c->n].name = (csrf_slice){"Content-Type", 12};
		c->h[c->n].value = (csrf_slice){ct, strlen(ct)};
		c->entry[c->n] = NULL;
		c->table[c->n++] = NULL;
	}
}

/* A table without the entries the library's actions drop. */
static apr_table_t *csrf_protect_without(request_rec *r, apr_table_t *t, const csrf_protect_headers *c,
                                         const unsigned char *drop)
{
	const apr_array_header_t *a = apr_table_elts(t);
	apr_table_entry_t *e = (apr_table_entry_t *)a->elts;
	apr_table_t *kept = apr_table_make(r->pool, a->nelts + CSRF_RESPONSE_ADD_MAX);

	for (int i = 0; i < a->nelts; i++) {
		int gone = 0;
		for (size_t k = 0; k < c->n; k++) {
			if (c->entry[k] == &e[i] && drop[k] == CSRF_HEADER_DROP) {
				gone = 1;
				break;
			}
		}
		if (!gone && e[i].key)
			apr_table_addn(kept, e[i].key, e[i].val);
	}
	return kept;
}

/* CSRFReferrerSameOrigin: the Referrer-Policy lines that together say
 * no-referrer say same-origin, on every response. */
static void csrf_protect_referrer(request_rec *r)
{
	csrf_protect_headers c;
	unsigned char *raise;

	csrf_protect_headers_of(r, &c, 0);
	raise = apr_pcalloc(r->pool, c.n + 1);
	if (csrf_response_referrer(c.h, c.n, raise) != CSRF_OK)
		return;
	for (size_t i = 0; i < c.n; i++) {
		if (raise[i])
			c.entry[i]->val = (char *)CSRF_REFERRER_RAISED;
	}
}

/* Once per child and context: tokens are bound to session cookies that
 * no request or response has carried so far, while the application sets
 * another cookie (phpMyAdmin over HTTPS sets "phpMyAdmin_https", not
 * "phpMyAdmin"). Only cookie names are logged, never values. */
static void csrf_protect_session_unseen(request_rec *r, const csrf_protect_conf *conf, const csrf_ctx *ctx,
                                        csrf_request *req, const csrf_protect_headers *c)
{
	csrf_slice name = {NULL, 0}, one;
	const char *names = "";
	int seen = 0;

	if (conf->session == NULL || csrf_protect_session_state(ctx, 0))
		return;
	seen = csrf_session_cookie_unseen(ctx, req, NULL, 0, NULL) < 0;
	for (size_t i = 0; !seen && i < c->n; i++) {
		int rc;
		if (c->h[i].name.len != 10 || strncasecmp(c->h[i].name.ptr, "Set-Cookie", 10) != 0)
			continue;
		rc = csrf_session_cookie_unseen(ctx, req, c->h[i].value.ptr, c->h[i].value.len, &one);
		if (rc < 0)
			seen = 1;
		else if (rc > 0 && name.ptr == NULL)
			name = one;
	}
	if (seen) {
		csrf_protect_session_state(ctx, CSRF_PROTECT_SESSION_SEEN);
		return;
	}
	if (name.ptr == NULL)
		return;
	csrf_protect_session_state(ctx, CSRF_PROTECT_SESSION_WARNED);
	for (int i = 0; i < conf->session->nelts; i++)
		names = apr_pstrcat(r->pool, names, i ? " " : "", APR_ARRAY_IDX(conf->session, i, const char *), NULL);
	csrf_protect_log(
	    APLOG_WARNING, r,
	    "CSRFSessionCookie \"%s\": no request or response has carried it so far, but the application "
	    "sets the cookie \"%.*s\": tokens are bound to no session; if that is its session cookie, name "
	    "it in CSRFSessionCookie (said once per child)",
	    names, (int)name.len, name.ptr);
}

/* The charset says the page can take tokens: the library judges the
 * header (csrf_response_headers) and this applies what it said; inject
 * stays 0 (the response goes out untouched) when it cannot. */
static void csrf_protect_start(request_rec *r, csrf_protect_out *o, csrf_protect_state *st)
{
	csrf_protect_headers c;
	unsigned char *action;
	csrf_slice *value;
	csrf_header add[CSRF_RESPONSE_ADD_MAX];
	size_t n_add = 0;
	csrf_request own, *req = &own;

	if (st && st->checked && st->req.method.ptr)
		req = &st->req;
	else
		csrf_protect_request(r, req);

	csrf_protect_headers_of(r, &c, 1);
	action = apr_pcalloc(r->pool, c.n + 1);
	value = apr_pcalloc(r->pool, (c.n + 1) * sizeof(*value));
	if (csrf_response_headers(o->resp, req, c.h, c.n, action, value, add, &n_add) != CSRF_OK) {
		csrf_protect_session_unseen(r, o->conf, o->ctx, req, &c);
		return;
	}
	csrf_protect_session_unseen(r, o->conf, o->ctx, req, &c);

	for (size_t i = 0; i < c.n; i++) {
		if (action[i] == CSRF_HEADER_REPLACE) {
			char *v = apr_pstrmemdup(r->pool, value[i].ptr, value[i].len);
			if (c.entry[i])
				c.entry[i]->val = v;
			else
				ap_set_content_type(r, v);
		}
	}
	r->headers_out = csrf_protect_without(r, r->headers_out, &c, action);
	r->err_headers_out = csrf_protect_without(r, r->err_headers_out, &c, action);
	for (size_t i = 0; i < n_add; i++) {
		apr_table_addn(r->headers_out, apr_pstrmemdup(r->pool, add[i].name.ptr, add[i].name.len),
		               apr_pstrmemdup(r->pool, add[i].value.ptr, add[i].value.len));
	}
	/* no range of a page with tokens is served, nor a length or
	 * validators of the page before them */
	apr_table_unset(r->headers_in, "Range");
	apr_table_unset(r->headers_in, "If-Range");
	o->inject = 1;
	/* what mod_headers (Header set) and mod_expires put in after this
	 * filter is judged again on the way out */
	ap_add_output_filter(CSRF_PROTECT_CACHE_FILTER, NULL, r, r->connection);
}

/* A page with tokens on its way out, after mod_expires (content set - 2)
 * and mod_headers' Header set (content set, inserted before this one),
 * which run after the injecting filter and could make it public again
 * ("Header set Cache-Control public" on an .html location), and before
 * mod_cache stores it (CACHE_SAVE, content set + 1): the library's rule
 * for such a page (csrf_response_cache) on the header as it will be
 * sent. */
apr_status_t csrf_protect_cache_filter(ap_filter_t *f, apr_bucket_brigade *bb)
{
	request_rec *r = f->r;
	csrf_protect_headers c;
	unsigned char *drop;
	csrf_slice add = {NULL, 0};

	csrf_protect_headers_of(r, &c, 0);
	drop = apr_pcalloc(r->pool, c.n + 1);
	if (csrf_response_cache(c.h, c.n, drop, &add) == CSRF_OK) {
		r->headers_out = csrf_protect_without(r, r->headers_out, &c, drop);
		r->err_headers_out = csrf_protect_without(r, r->err_headers_out, &c, drop);
		if (add.ptr)
			apr_table_setn(r->headers_out, "Cache-Control", apr_pstrmemdup(r->pool, add.ptr, add.len));
	} else {
		apr_table_unset(r->err_headers_out, "Cache-Control");
		apr_table_setn(r->headers_out, "Cache-Control", "private, no-store");
	}
	ap_remove_output_filter(f);
	return ap_pass_brigade(f->next, bb);
}

/* Appends n bytes at data + off of bucket b (a heap or read bucket) to
 * the output: the last output bucket grows when it ends where they
 * start in the same memory, else a copy of b (one more reference, no
 * bytes copied) covers them. */
static int csrf_protect_ref(csrf_protect_out *o, apr_bucket *b, apr_size_t off, apr_size_t n)
{
	apr_bucket *last = APR_BRIGADE_LAST(o->out), *e;

	if (last != APR_BRIGADE_SENTINEL(o->out) && last->type == b->type && last->data == b->data &&
	    last->start + (apr_off_t)last->length == b->start + (apr_off_t)off) {
		last->length += n;
		return 0;
	}
	if (apr_bucket_copy(b, &e) != APR_SUCCESS)
		return 1;
	e->start = b->start + (apr_off_t)off;
	e->length = n;
	APR_BRIGADE_INSERT_TAIL(o->out, e);
	return 0;
}

static void csrf_protect_copy_drop(csrf_protect_out *o)
{
	if (o->copy)
		apr_bucket_destroy(o->copy);
	o->copy = NULL;
}

static apr_status_t csrf_protect_copy_cleanup(void *data)
{
	csrf_protect_copy_drop(data);
	return APR_SUCCESS;
}

/* The injector's output. Unchanged runs of the input bucket go out as
 * its memory; the rest is gathered into copy buffers of
 * CSRF_PROTECT_COPY_SIZE bytes, shared by the buckets that point into
 * them: a page's pieces take a few buckets, not one per insertion. */
static int csrf_protect_emit(void *ud, const char *p, size_t n, int inserted)
{
	csrf_protect_out *o = ud;

	if (n == 0)
		return 0;
	o->pending += n;
	if (!inserted && n >= CSRF_PROTECT_REF_MIN && o->src && p >= o->src_data &&
	    n <= o->src_len - (apr_size_t)(p - o->src_data))
		return csrf_protect_ref(o, o->src, (apr_size_t)(p - o->src_data), n);
	if (o->copy == NULL || o->copy_size - o->copy_used < n) {
		apr_size_t size = n > CSRF_PROTECT_COPY_SIZE ? n : CSRF_PROTECT_COPY_SIZE;
		apr_bucket_alloc_t *list = o->out->bucket_alloc;
		char *buf = apr_bucket_alloc(size, list);

		if (buf == NULL)
			return 1;
		csrf_protect_copy_drop(o);
		o->copy = apr_bucket_heap_create(buf, size, apr_bucket_free, list);
		o->copy_base = buf;
		o->copy_size = size;
		o->copy_used = 0;
	}
	memcpy(o->copy_base + o->copy_used, p, n);
	o->copy_used += n;
	return csrf_protect_ref(o, o->copy, o->copy_used - n, n);
}

/* Passes the output gathered. */
static apr_status_t csrf_protect_pass(ap_filter_t *f, csrf_protect_out *o)
{
	apr_status_t rv = ap_pass_brigade(f->next, o->out);

	apr_brigade_cleanup(o->out);
	o->pending = 0;
	return rv;
}

/* The end of the exchange for a page: its counts, and the library's
 * warning line when it has one. */
static void csrf_protect_done(request_rec *r, csrf_protect_out *o)
{
	char text[CSRF_RESPONSE_LOG_MAX];

	csrf_protect_count_response(CSRF_RESPONSE_INJECT, o->resp);
	if (csrf_response_log(o->resp, text, sizeof(text)) > 0)
		csrf_protect_log(APLOG_WARNING, r, "\"%s\": %s", r->parsed_uri.path, text);
}

/* The first call: the library's csrf_response_begin on the header. NULL
 * when the response passes untouched. */
static csrf_protect_out *csrf_protect_begin(ap_filter_t *f, csrf_protect_state *st)
{
	request_rec *r = f->r;
	const csrf_protect_conf *c, *memo;
	csrf_protect_out *o;
	csrf_ctx *ctx = NULL;
	const char *ct, *ce;
	csrf_response_verdict v;
	size_t size = csrf_response_size();
	char *mem;

	if (st && st->identity) {
		/* mod_deflate, after this filter, sees the client's own value */
		if (st->accept_encoding)
			apr_table_setn(r->headers_in, "Accept-Encoding", st->accept_encoding);
		else
			apr_table_unset(r->headers_in, "Accept-Encoding");
		st->identity = 0;
	}
	if (st && st->rejected)
		return NULL; /* the module's own answer */

	/* the settings and context the request side found, if they are
	 * this request's; else looked up again */
	memo = csrf_protect_memo_of(r, st, &ctx);
	c = memo ? memo : csrf_protect_settled(r->pool, ap_get_module_config(r->per_dir_config, &csrf_protect_module));
	if (!c->enable)
		return NULL;
	if (c->referrer_same_origin)
		csrf_protect_referrer(r);
	if (!c->inject)
		return NULL;
	if (memo == NULL)
		ctx = csrf_protect_ctx(r, c);
	if (ctx == NULL || !csrf_ctx_injects(ctx))
		return NULL;

	ct = r->content_type ? ap_make_content_type(r, r->content_type) : NULL;
	ce = apr_table_get(r->headers_out, "Content-Encoding");
	if (ce == NULL)
		ce = apr_table_get(r->err_headers_out, "Content-Encoding");
	if (ce == NULL)
		ce = r->content_encoding;
	v = csrf_response_begin(ctx, r->method, strlen(r->method), (unsigned)r->status, ct, ct ? strlen(ct) : 0, ce,
	                        ce ? strlen(ce) : 0);
	if (v == CSRF_RESPONSE_COMPRESSED)
		csrf_protect_log(APLOG_WARNING, r,
		                 "no tokens in \"%s\": it arrived compressed (Content-Encoding: %s), passed through "
		                 "untouched",
		                 r->parsed_uri.path, ce);
	if (v != CSRF_RESPONSE_INJECT) {
		csrf_protect_count_response(v, NULL);
		return NULL;
	}

	o = apr_pcalloc(r->pool, sizeof(*o));
	mem = apr_palloc(r->pool, size + 16);
	mem += (16 - ((apr_uintptr_t)mem & 15)) & 15; /* aligned as malloc's */
	if (ct == NULL || csrf_response_init(mem, size, ctx, ct, strlen(ct), &o->resp) != CSRF_OK)
		return NULL;
	o->ctx = ctx;
	o->conf = c;
	o->holding = 1;
	o->out = apr_brigade_create(r->pool, f->c->bucket_alloc);
	apr_pool_cleanup_register(r->pool, o, csrf_protect_copy_cleanup, apr_pool_cleanup_null);
	return o;
}

static apr_status_t csrf_protect_wipe(void *data)
{
	csrf_response_wipe(data);
	return APR_SUCCESS;
}

/* Holding is over: the held bytes go first, through the injector or not. */
static void csrf_protect_release(request_rec *r, csrf_protect_out *o, csrf_charset_verdict cv)
{
	csrf_slice held;

	o->holding = 0;
	if (cv == CSRF_CHARSET_INJECT)
		csrf_protect_start(r, o, csrf_protect_state_of(r));
	if (!o->inject)
		csrf_protect_done(r, o);
	held = csrf_response_held(o->resp);
	if (held.len == 0)
		return;
	if (o->inject) {
		if (csrf_response_feed(o->resp, held.ptr, held.len, csrf_protect_emit, o) != CSRF_OK)
			o->failed = 1;
	} else if (csrf_protect_emit(o, held.ptr, held.len, 1) != 0) {
		o->failed = 1;
	}
}

apr_status_t csrf_protect_output_filter(ap_filter_t *f, apr_bucket_brigade *bb)
{
	request_rec *r = f->r;
	csrf_protect_out *o = f->ctx;
	apr_bucket *e;
	apr_status_t rv;

	if (o == NULL) {
		o = csrf_protect_begin(f, csrf_protect_state_of(r));
		if (o == NULL) {
			ap_remove_output_filter(f);
			return ap_pass_brigade(f->next, bb);
		}
		f->ctx = o;
		apr_pool_cleanup_register(r->pool, o->resp, csrf_protect_wipe, apr_pool_cleanup_null);
	}

	if (o->ended || o->failed) {
		apr_brigade_cleanup(bb);
		return o->failed ? APR_EGENERAL : APR_SUCCESS;
	}

	while ((e = APR_BRIGADE_FIRST(bb)) != APR_BRIGADE_SENTINEL(bb)) {
		const char *data;
		apr_size_t len;

		if (APR_BUCKET_IS_EOS(e)) {
			if (o->holding)
				csrf_protect_release(r, o, csrf_response_hold(o->resp, NULL, 0, 1, &len));
			if (o->inject) {
				unsigned status;
				if (csrf_response_end(o->resp, csrf_protect_emit, o, &status) != CSRF_OK)
					o->failed = 1;
				csrf_protect_done(r, o);
			}
			o->ended = 1;
			csrf_protect_copy_drop(o);
			APR_BUCKET_REMOVE(e);
			APR_BRIGADE_INSERT_TAIL(o->out, e);
			break;
		}
		if (!o->holding && !o->inject) {
			/* passed untouched: the rest as it is */
			APR_BRIGADE_CONCAT(o->out, bb);
			break;
		}
		if (APR_BUCKET_IS_METADATA(e)) {
			APR_BUCKET_REMOVE(e);
			if (o->holding && APR_BUCKET_IS_FLUSH(e))
				apr_bucket_destroy(e); /* nothing may leave before the header */
			else
				APR_BRIGADE_INSERT_TAIL(o->out, e);
			continue;
		}
		rv = apr_bucket_read(e, &data, &len, APR_BLOCK_READ);
		if (rv != APR_SUCCESS)
			return rv;
		if (o->holding) {
			apr_size_t used;
			csrf_charset_verdict cv = csrf_response_hold(o->resp, data, len, 0, &used);
			if (used < len) {
				apr_bucket_split(e, used);
				apr_bucket_delete(e);
				csrf_protect_release(r, o, cv);
				continue;
			}
			apr_bucket_delete(e);
			if (cv != CSRF_CHARSET_MORE)
				csrf_protect_release(r, o, cv);
			continue;
		}
		if (o->inject) {
			/* a transient bucket's memory is gone once this filter
			 * returns: its pieces are copied */
			o->src = APR_BUCKET_IS_TRANSIENT(e) ? NULL : e;
			o->src_data = data;
			o->src_len = len;
			if (csrf_response_feed(o->resp, data, len, csrf_protect_emit, o) != CSRF_OK)
				o->failed = 1;
			o->src = NULL;
			apr_bucket_delete(e); /* its memory lives on in the output's references */
		} else {
			APR_BUCKET_REMOVE(e);
			APR_BRIGADE_INSERT_TAIL(o->out, e);
			o->pending += len;
		}
		if (o->failed)
			break;
		if (!o->holding && o->pending >= CSRF_PROTECT_PASS_AT) {
			rv = csrf_protect_pass(f, o);
			if (rv != APR_SUCCESS)
				return rv;
		}
	}

	if (o->failed) {
		apr_brigade_cleanup(bb);
		apr_brigade_cleanup(o->out);
		return APR_EGENERAL;
	}
	if (o->holding)
		return APR_SUCCESS;
	if (!o->inject)
		ap_remove_output_filter(f);
	return csrf_protect_pass(f, o);
}
