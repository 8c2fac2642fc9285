/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ngx_http_bench_copy_module - the floor beside the module's figures in
 * `make bench`: the least any body filter that rewrites a page must cost.
 * With "bench_copy on;" a response loses its length and validators, as a
 * rewritten one does, and every byte of its body is copied into new
 * buffers of 8 KiB (NGX_HTTP_CSRF_BUF_SIZE's size), which are passed on
 * and reused once sent. Nothing is inserted and nothing is parsed. Built
 * for the benchmark only (bench/CMakeLists.txt), never installed.
 */

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#define NGX_HTTP_BENCH_COPY_BUF_SIZE 8192

typedef struct {
	ngx_flag_t enable;
} ngx_http_bench_copy_loc_conf_t;

typedef struct {
	ngx_chain_t *free;
	ngx_chain_t *busy;
	off_t left;       /* body bytes still to come, when the response said (else -1) */
	ngx_uint_t ended; /* the last byte went out, with the response's end */
} ngx_http_bench_copy_ctx_t;

static void *ngx_http_bench_copy_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_bench_copy_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child);
static ngx_int_t ngx_http_bench_copy_init(ngx_conf_t *cf);

static ngx_command_t ngx_http_bench_copy_commands[] = {
    {ngx_string("bench_copy"), NGX_HTTP_MAIN_CONF | NGX_HTTP_SRV_CONF | NGX_HTTP_LOC_CONF | NGX_CONF_FLAG,
     ngx_conf_set_flag_slot, NGX_HTTP_LOC_CONF_OFFSET, offsetof(ngx_http_bench_copy_loc_conf_t, enable), NULL},
    ngx_null_command};

static ngx_http_module_t ngx_http_bench_copy_module_ctx = {
    NULL,                                /* preconfiguration */
    ngx_http_bench_copy_init,            /* postconfiguration */
    NULL,                                /* create main configuration */
    NULL,                                /* init main configuration */
    NULL,                                /* create server configuration */
    NULL,                                /* merge server configuration */
    ngx_http_bench_copy_create_loc_conf, /* create location configuration */
    ngx_http_bench_copy_merge_loc_conf   /* merge location configuration */
};

ngx_module_t ngx_http_bench_copy_module = {NGX_MODULE_V1,
                                           &ngx_http_bench_copy_module_ctx, /* module context */
                                           ngx_http_bench_copy_commands,    /* module directives */
                                           NGX_HTTP_MODULE,                 /* module type */
                                           NULL,                            /* init master */
                                           NULL,                            /* init module */
                                           NULL,                            /* init process */
                                           NULL,                            /* init thread */
                                           NULL,                            /* exit thread */
                                           NULL,                            /* exit process */
                                           NULL,                            /* exit master */
                                           NGX_MODULE_V1_PADDING};

static ngx_http_output_header_filter_pt ngx_http_next_header_filter;
static ngx_http_output_body_filter_pt ngx_http_next_body_filter;

/* A response with a body loses what a rewritten one loses: its length,
 * its ranges, its validators; its body must arrive in memory. */
static ngx_int_t ngx_http_bench_copy_header_filter(ngx_http_request_t *r)
{
	ngx_http_bench_copy_ctx_t *ctx;
	ngx_http_bench_copy_loc_conf_t *lcf;

	lcf = ngx_http_get_module_loc_conf(r, ngx_http_bench_copy_module);

	if (!lcf->enable || r != r->main || r->header_only || r->headers_out.content_length_n == 0) {
		return ngx_http_next_header_filter(r);
	}

	ctx = ngx_pcalloc(r->pool, sizeof(ngx_http_bench_copy_ctx_t));
	if (ctx == NULL) {
		return NGX_ERROR;
	}

	ngx_http_set_ctx(r, ctx, ngx_http_bench_copy_module);

	/* as ngx_http_csrf_module does: with its length known, the response
	 * ends with its last byte, not with the upstream's empty last buf */
	ctx->left = r->headers_out.content_length_n;

	ngx_http_clear_content_length(r);
	ngx_http_clear_accept_ranges(r);
	ngx_http_clear_last_modified(r);
	ngx_http_clear_etag(r);

	r->filter_need_in_memory = 1;
	r->allow_ranges = 0;

	return ngx_http_next_header_filter(r);
}

/* An output buf of NGX_HTTP_BENCH_COPY_BUF_SIZE bytes, a sent one when
 * there is one; appended to *ll. */
static ngx_buf_t *ngx_http_bench_copy_buf(ngx_http_request_t *r, ngx_http_bench_copy_ctx_t *ctx, ngx_chain_t ***ll)
{
	ngx_buf_t *b;
	ngx_chain_t *cl;

	cl = ngx_chain_get_free_buf(r->pool, &ctx->free);
	if (cl == NULL) {
		return NULL;
	}

	b = cl->buf;

	if (b->start == NULL) {
		b->start = ngx_palloc(r->pool, NGX_HTTP_BENCH_COPY_BUF_SIZE);
		if (b->start == NULL) {
			return NULL;
		}
		b->end = b->start + NGX_HTTP_BENCH_COPY_BUF_SIZE;
		b->temporary = 1;
		b->tag = (ngx_buf_tag_t)&ngx_http_bench_copy_module;
	}

	b->pos = b->start;
	b->last = b->start;
	b->last_buf = 0;
	b->last_in_chain = 0;
	b->flush = 0;
	b->sync = 0;

	**ll = cl;
	*ll = &cl->next;

	return b;
}

/* Every input buf is copied whole and released at once; its flags go
 * with the last piece of its copy (an empty buf when it had no bytes).
 * What comes after the response's last byte is dropped. */
static ngx_int_t ngx_http_bench_copy_body_filter(ngx_http_request_t *r, ngx_chain_t *in)
{
	size_t n;
	off_t size;
	ngx_int_t rc;
	ngx_buf_t *b, *ib;
	ngx_chain_t *out, **ll, *cl;
	ngx_http_bench_copy_ctx_t *ctx;

	ctx = ngx_http_get_module_ctx(r, ngx_http_bench_copy_module);

	if (ctx == NULL || (in == NULL && ctx->busy == NULL)) {
		return ngx_http_next_body_filter(r, in);
	}

	out = NULL;
	ll = &out;

	for (/* void */; in; in = in->next) {
		ib = in->buf;
		b = NULL;

		if (ctx->ended) {
			ib->pos = ib->last;
			continue;
		}

		size = ngx_buf_size(ib);

		if (!ngx_buf_in_memory(ib) && size) {
			/* not in memory (filter_need_in_memory): passed as it is */
			cl = ngx_alloc_chain_link(r->pool);
			if (cl == NULL) {
				return NGX_ERROR;
			}
			cl->buf = ib;
			*ll = cl;
			ll = &cl->next;
			continue;
		}

		while (ib->pos < ib->last) {
			if (b == NULL || b->last == b->end) {
				b = ngx_http_bench_copy_buf(r, ctx, &ll);
				if (b == NULL) {
					return NGX_ERROR;
				}
			}
			n = ngx_min((size_t)(ib->last - ib->pos), (size_t)(b->end - b->last));
			b->last = ngx_cpymem(b->last, ib->pos, n);
			ib->pos += n;
		}

		if (ctx->left >= 0) {
			ctx->left -= size;
		}

		if (b == NULL && (ib->last_buf || ib->last_in_chain || ib->flush || ctx->left == 0)) {
			b = ngx_http_bench_copy_buf(r, ctx, &ll);
			if (b == NULL) {
				return NGX_ERROR;
			}
			b->sync = 1;
		}

		if (b) {
			b->last_buf = ib->last_buf;
			b->last_in_chain = ib->last_in_chain;
			b->flush = ib->flush;
			if (ctx->left == 0) {
				b->last_buf = 1;
				ctx->ended = 1;
			}
		}
	}

	*ll = NULL;

	if (out == NULL && ctx->busy == NULL) {
		return NGX_OK;
	}

	rc = ngx_http_next_body_filter(r, out);

	ngx_chain_update_chains(r->pool, &ctx->free, &ctx->busy, &out, (ngx_buf_tag_t)&ngx_http_bench_copy_module);

	return rc;
}

static void *ngx_http_bench_copy_create_loc_conf(ngx_conf_t *cf)
{
	ngx_http_bench_copy_loc_conf_t *conf;

	conf = ngx_palloc(cf->pool, sizeof(ngx_http_bench_copy_loc_conf_t));
	if (conf == NULL) {
		return NULL;
	}

	conf->enable = NGX_CONF_UNSET;

	return conf;
}

static char *ngx_http_bench_copy_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
	ngx_http_bench_copy_loc_conf_t *prev = parent;
	ngx_http_bench_copy_loc_conf_t *conf = child;

	(void)cf;
	ngx_conf_merge_value(conf->enable, prev->enable, 0);

	return NGX_CONF_OK;
}

static ngx_int_t ngx_http_bench_copy_init(ngx_conf_t *cf)
{
	(void)cf;

	ngx_http_next_header_filter = ngx_http_top_header_filter;
	ngx_http_top_header_filter = ngx_http_bench_copy_header_filter;

	ngx_http_next_body_filter = ngx_http_top_body_filter;
	ngx_http_top_body_filter = ngx_http_bench_copy_body_filter;

	return NGX_OK;
}
