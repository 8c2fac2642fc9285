/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ngx_http_test_filebuf_module - a test fixture for ngx_http_csrf_module
 * (tests/nginx/test_filebuf.py): what a third-party filter standing
 * between nginx's copy filter and the csrf module could do, which none of
 * nginx's own does since the csrf module sets main_filter_need_in_memory.
 * With "test_filebuf N;" every body buf of the main response that starts
 * at or after body byte N is written to a temp file and passed on as a
 * buf in that file (in_file, no memory), its memory buf consumed. Built
 * for the tests only, never installed.
 */

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

typedef struct {
	off_t from; /* -1: off */
} ngx_http_test_filebuf_loc_conf_t;

typedef struct {
	off_t seen;
	ngx_temp_file_t *tf;
} ngx_http_test_filebuf_ctx_t;

static void *ngx_http_test_filebuf_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_test_filebuf_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child);
static ngx_int_t ngx_http_test_filebuf_init(ngx_conf_t *cf);

static ngx_command_t ngx_http_test_filebuf_commands[] = {
    {ngx_string("test_filebuf"), NGX_HTTP_LOC_CONF | NGX_CONF_TAKE1, ngx_conf_set_off_slot, NGX_HTTP_LOC_CONF_OFFSET,
     offsetof(ngx_http_test_filebuf_loc_conf_t, from), NULL},
    ngx_null_command};

static ngx_http_module_t ngx_http_test_filebuf_module_ctx = {
    NULL,                                  /* preconfiguration */
    ngx_http_test_filebuf_init,            /* postconfiguration */
    NULL,                                  /* create main configuration */
    NULL,                                  /* init main configuration */
    NULL,                                  /* create server configuration */
    NULL,                                  /* merge server configuration */
    ngx_http_test_filebuf_create_loc_conf, /* create location configuration */
    ngx_http_test_filebuf_merge_loc_conf   /* merge location configuration */
};

ngx_module_t ngx_http_test_filebuf_module = {NGX_MODULE_V1,
                                             &ngx_http_test_filebuf_module_ctx, /* module context */
                                             ngx_http_test_filebuf_commands,    /* module directives */
                                             NGX_HTTP_MODULE,                   /* module type */
                                             NULL,                              /* init master */
                                             NULL,                              /* init module */
                                             NULL,                              /* init process */
                                             NULL,                              /* init thread */
                                             NULL,                              /* exit thread */
                                             NULL,                              /* exit process */
                                             NULL,                              /* exit master */
                                             NGX_MODULE_V1_PADDING};

static ngx_http_output_body_filter_pt ngx_http_next_body_filter;

static ngx_int_t ngx_http_test_filebuf_body_filter(ngx_http_request_t *r, ngx_chain_t *in)
{
	off_t size;
	ssize_t n;
	ngx_buf_t *b, *fb;
	ngx_chain_t *cl, *out, **ll, one;
	ngx_http_test_filebuf_ctx_t *ctx;
	ngx_http_core_loc_conf_t *clcf;
	ngx_http_test_filebuf_loc_conf_t *lcf;

	lcf = ngx_http_get_module_loc_conf(r, ngx_http_test_filebuf_module);
	if (lcf->from < 0 || r != r->main || in == NULL) {
		return ngx_http_next_body_filter(r, in);
	}

	ctx = ngx_http_get_module_ctx(r, ngx_http_test_filebuf_module);
	if (ctx == NULL) {
		ctx = ngx_pcalloc(r->pool, sizeof(ngx_http_test_filebuf_ctx_t));
		if (ctx == NULL) {
			return NGX_ERROR;
		}
		ctx->tf = ngx_pcalloc(r->pool, sizeof(ngx_temp_file_t));
		if (ctx->tf == NULL) {
			return NGX_ERROR;
		}
		clcf = ngx_http_get_module_loc_conf(r, ngx_http_core_module);
		ctx->tf->file.fd = NGX_INVALID_FILE;
		ctx->tf->file.log = r->connection->log;
		ctx->tf->path = clcf->client_body_temp_path;
		ctx->tf->pool = r->pool;
		ctx->tf->clean = 1;
		ngx_http_set_ctx(r, ctx, ngx_http_test_filebuf_module);
	}

	out = NULL;
	ll = &out;

	for (/* void */; in; in = in->next) {
		b = in->buf;
		size = ngx_buf_in_memory(b) ? b->last - b->pos : 0;

		cl = ngx_alloc_chain_link(r->pool);
		if (cl == NULL) {
			return NGX_ERROR;
		}
		cl->buf = b;

		if (size > 0 && ctx->seen >= lcf->from) {
			one.buf = b;
			one.next = NULL;
			n = ngx_write_chain_to_temp_file(ctx->tf, &one);
			if (n == NGX_ERROR) {
				return NGX_ERROR;
			}
			fb = ngx_calloc_buf(r->pool);
			if (fb == NULL) {
				return NGX_ERROR;
			}
			fb->in_file = 1;
			fb->file = &ctx->tf->file;
			fb->file_pos = ctx->tf->offset;
			ctx->tf->offset += n;
			fb->file_last = ctx->tf->offset;
			fb->last_buf = b->last_buf;
			fb->last_in_chain = b->last_in_chain;
			fb->flush = b->flush;
			b->pos = b->last;
			cl->buf = fb;
		}

		ctx->seen += size;
		*ll = cl;
		ll = &cl->next;
	}

	*ll = NULL;

	return ngx_http_next_body_filter(r, out);
}

static void *ngx_http_test_filebuf_create_loc_conf(ngx_conf_t *cf)
{
	ngx_http_test_filebuf_loc_conf_t *conf;

	conf = ngx_pcalloc(cf->pool, sizeof(ngx_http_test_filebuf_loc_conf_t));
	if (conf == NULL) {
		return NULL;
	}

	conf->from = NGX_CONF_UNSET;

	return conf;
}

static char *ngx_http_test_filebuf_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
	ngx_http_test_filebuf_loc_conf_t *prev = parent;
	ngx_http_test_filebuf_loc_conf_t *conf = child;

	(void)cf;
	ngx_conf_merge_off_value(conf->from, prev->from, -1);

	return NGX_CONF_OK;
}

static ngx_int_t ngx_http_test_filebuf_init(ngx_conf_t *cf)
{
	(void)cf;
	ngx_http_next_body_filter = ngx_http_top_body_filter;
	ngx_http_top_body_filter = ngx_http_test_filebuf_body_filter;

	return NGX_OK;
}
