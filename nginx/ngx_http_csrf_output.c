/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ngx_http_csrf_module: the body filter's output. The injector's long
 * pass-through runs leave as bufs over the input's memory, the rest is
 * copied into bufs of NGX_HTTP_CSRF_BUF_SIZE; ngx_http_csrf_output
 * passes them on and takes back the sent ones (busy to free, and the
 * input bufs they shadow released), as ngx_http_sub_output does.
 */

#include "ngx_http_csrf.h"

/* the next body filter, set by ngx_http_csrf_filter_init */
ngx_http_output_body_filter_pt ngx_http_csrf_next_body_filter;

/* Appends cl to the output chain being built. */
void ngx_http_csrf_out(ngx_http_csrf_ctx_t *ctx, ngx_chain_t *cl)
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

/* A buf of no memory of its own (over the input's, or empty for flags),
 * a sent one when there is one, zeroed; its link is not yet in a chain. */
ngx_chain_t *ngx_http_csrf_get_shell(ngx_http_request_t *r, ngx_http_csrf_ctx_t *ctx)
{
	ngx_buf_t *b;
	ngx_chain_t *cl;

	if (ctx->shells) {
		cl = ctx->shells;
		ctx->shells = cl->next;
		ngx_memzero(cl->buf, sizeof(ngx_buf_t));

	} else {
		cl = ngx_alloc_chain_link(r->pool);
		if (cl == NULL) {
			return NULL;
		}
		cl->buf = ngx_calloc_buf(r->pool);
		if (cl->buf == NULL) {
			return NULL;
		}
	}

	b = cl->buf;
	b->tag = (ngx_buf_tag_t)&ngx_http_csrf_module;

	return cl;
}

/* A link with its buf, as a page's block holds them. */
typedef struct {
	ngx_chain_t cl;
	ngx_buf_t b;
} ngx_http_csrf_spare_t;

/* The library's state, rounded up so that the links after it are aligned
 * (the block is aligned to 16). */
static size_t ngx_http_csrf_state_size(void)
{
	return ngx_align(csrf_response_size(), 16);
}

/* The bytes of a page's block (see NGX_HTTP_CSRF_SPARE). */
size_t ngx_http_csrf_page_block_size(void)
{
	return ngx_http_csrf_state_size() + NGX_HTTP_CSRF_SPARE * sizeof(ngx_http_csrf_spare_t) +
	       NGX_HTTP_CSRF_BUF_SIZE;
}

/* Lays out a page's block of ngx_http_csrf_page_block_size() bytes,
 * aligned to 16: the first link with its buf is the first output buf,
 * over the block's last NGX_HTTP_CSRF_BUF_SIZE bytes, on the free list
 * as a sent one would be; the other links go on the shell list
 * (get_shell zeroes each buf as it hands it out). Returns the memory
 * for the library's state, the block's start. */
void *ngx_http_csrf_page_block(ngx_http_csrf_ctx_t *ctx, u_char *block)
{
	ngx_uint_t i;
	ngx_buf_t *b;
	ngx_chain_t *cl;
	ngx_http_csrf_spare_t *s;

	s = (ngx_http_csrf_spare_t *)(block + ngx_http_csrf_state_size());

	for (i = 1; i < NGX_HTTP_CSRF_SPARE; i++) {
		s[i].cl.buf = &s[i].b;
		s[i].cl.next = ctx->shells;
		ctx->shells = &s[i].cl;
	}

	cl = &s[0].cl;
	b = &s[0].b;
	ngx_memzero(b, sizeof(ngx_buf_t));
	b->start = (u_char *)&s[NGX_HTTP_CSRF_SPARE];
	b->end = b->start + NGX_HTTP_CSRF_BUF_SIZE;
	b->temporary = 1;
	b->tag = (ngx_buf_tag_t)&ngx_http_csrf_module;
	cl->buf = b;
	cl->next = ctx->free;
	ctx->free = cl;

	return block;
}

/* The rest of the output buf old (in this call's chain, with something
 * after it now) as an output buf of its own, which takes over the
 * memory: old goes back as a shell when sent, the new one as an output
 * buf when sent, after old (a chain is sent in order), so the memory is
 * reused only when every byte written into it has gone out. */
static ngx_chain_t *ngx_http_csrf_rest(ngx_http_request_t *r, ngx_http_csrf_ctx_t *ctx, ngx_buf_t *old)
{
	ngx_buf_t *b;
	ngx_chain_t *cl;

	cl = ngx_http_csrf_get_shell(r, ctx);
	if (cl == NULL) {
		return NULL;
	}

	b = cl->buf;
	b->start = old->start;
	b->end = old->end;
	b->pos = old->last;
	b->last = old->last;
	b->temporary = 1;

	old->start = NULL;
	old->end = old->last;

	return cl;
}

/* ngx_http_csrf_emit's way for a piece it does not copy at once; kept
 * out of it, so that its usual call saves no registers. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int
ngx_http_csrf_emit_piece(ngx_http_csrf_ctx_t *ctx, const char *p, size_t n, int inserted)
{
	size_t k;
	ngx_buf_t *b;
	ngx_chain_t *cl;
	ngx_http_request_t *r = ctx->request;

	if (!inserted && n >= NGX_HTTP_CSRF_REF_MIN && ctx->in_start != NULL && (u_char *)p >= ctx->in_start &&
	    (u_char *)p < ctx->in_end && (size_t)(ctx->in_end - (u_char *)p) >= n) {
		cl = ngx_http_csrf_get_shell(r, ctx);
		if (cl == NULL) {
			return 1;
		}
		b = cl->buf;
		b->pos = (u_char *)p;
		b->last = b->pos + n;
		b->memory = 1;
		ngx_http_csrf_out(ctx, cl);
		ctx->cur = b;
		return 0;
	}

	while (n) {
		cl = ctx->fill;

		if (cl == NULL || cl->buf->last == cl->buf->end) {
			cl = ngx_http_csrf_get_buf(r, ctx);
			if (cl == NULL) {
				return 1;
			}
			ngx_http_csrf_out(ctx, cl);
			ctx->fill = cl;

		} else if (ctx->last_out != &cl->next) {
			cl = ngx_http_csrf_rest(r, ctx, cl->buf);
			if (cl == NULL) {
				return 1;
			}
			ngx_http_csrf_out(ctx, cl);
			ctx->fill = cl;
		}

		b = cl->buf;
		k = ngx_min(n, (size_t)(b->end - b->last));
		b->last = ngx_cpymem(b->last, p, k);
		p += k;
		n -= k;
		ctx->cur = b;
	}

	return 0;
}

/* The injector's emit callback (ud: the module's request context). A
 * pass-through run of at least NGX_HTTP_CSRF_REF_MIN bytes of the input
 * buf being fed goes out as a buf over the input's own memory, uncopied;
 * shorter runs, inserted elements and bytes the injector held are copied
 * into ctx->fill, one output buf filled across the input bufs of a call
 * and around the uncopied runs (what is left of it after one goes on as
 * a buf of its own, ngx_http_csrf_rest), so that a page leaves in a few
 * pieces and allocates a new output buf only when one is full. Each
 * input buf stays unsent (its shadow is the last output buf made from
 * it, see the body filter) until everything made from it has gone out,
 * so its memory stays valid for the bufs over it, and memory stays
 * bounded by the upstream's own buffers plus the insertions. The usual
 * call (dozens a page), a short piece that fits the buf being filled
 * while it is the chain's last, is copied here, the rest in
 * ngx_http_csrf_emit_piece. */
int ngx_http_csrf_emit(void *ud, const char *p, size_t n, int inserted)
{
	ngx_buf_t *b;
	ngx_http_csrf_ctx_t *ctx = ud;

	if (n < NGX_HTTP_CSRF_REF_MIN && ctx->fill != NULL && ctx->last_out == &ctx->fill->next) {
		b = ctx->fill->buf;
		if ((size_t)(b->end - b->last) >= n) {
			b->last = ngx_cpymem(b->last, p, n);
			ctx->cur = b;
			return 0;
		}
	}

	return ngx_http_csrf_emit_piece(ctx, p, n, inserted);
}

/* Passes the output chain built for this call on, then reclaims what the
 * next filters have sent: an output buf goes to the free list, and the
 * input buf it shadows is released. */
ngx_int_t ngx_http_csrf_output(ngx_http_request_t *r, ngx_http_csrf_ctx_t *ctx)
{
	ngx_int_t rc;
	ngx_buf_t *b;
	ngx_chain_t *cl, *flags, **last_flags;

	if (ctx->out == NULL && ctx->ended && r->out == NULL) {
		/* the upstream's own end after ours: nothing to pass on (an
		 * empty chain down to the write filter would be an alert) */
		rc = NGX_OK;
	} else {
		rc = ngx_http_csrf_next_body_filter(r, ctx->out);
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

	flags = NULL;
	last_flags = &flags;

	while (ctx->busy) {
		cl = ctx->busy;
		b = cl->buf;

		if (ngx_buf_size(b) != 0) {
			break;
		}

		if (b->shadow) {
			/* a buf in memory that is also in a file (a temp file's
			 * copy): consumed at both ends, or a filter before
			 * that reads the file's end would wait for it for ever */
			b->shadow->pos = b->shadow->last;
			if (b->shadow->in_file) {
				b->shadow->file_pos = b->shadow->file_last;
			}
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

		} else if (b->tag == (ngx_buf_tag_t)&ngx_http_csrf_module) {
			if (!ngx_buf_in_memory(b)) {
				/* a shell for flags is empty from the start, not
				 * sent: the next filters may still hold it (the write
				 * filter while it postpones); kept until a buf with
				 * bytes after it has gone out */
				cl->next = NULL;
				*last_flags = cl;
				last_flags = &cl->next;
				continue;
			}
			/* a shell over the input: reused too, so a long stream
			 * does not grow the pool by one a buf */
			cl->next = ctx->shells;
			ctx->shells = cl;
		}

		/* bytes after the shells for flags have gone out: so have they */
		if (flags) {
			*last_flags = ctx->shells;
			ctx->shells = flags;
			flags = NULL;
			last_flags = &flags;
		}
	}

	if (flags) {
		*last_flags = ctx->busy;
		ctx->busy = flags;
	}

	return rc;
}

/* ------------------------------------------------------------------ */
/* Configuration                                                       */
/* ------------------------------------------------------------------ */
