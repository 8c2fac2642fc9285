/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * page.c - csrf-demo's output buffers: a growing byte buffer that remembers
 * an allocation failure instead of crashing, HTML escaping of everything a
 * page prints (through the library's escapers), and the UTF-8 check the
 * demo applies to form fields; and demo_respond, which sends a page.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo.h"

void page_init(page *b)
{
	b->p = NULL;
	b->len = 0;
	b->cap = 0;
	b->failed = 0;
}

void page_wipe(page *b)
{
	if (b->p != NULL)
		demo_wipe(b->p, b->cap);
	page_free(b);
}

void page_free(page *b)
{
	free(b->p);
	page_init(b);
}

static int page_reserve(page *b, size_t more)
{
	if (b->failed)
		return -1;
	if (more > SIZE_MAX / 2 - b->len) {
		b->failed = 1;
		return -1;
	}
	size_t need = b->len + more + 1;
	if (need <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 1024;
	while (cap < need)
		cap *= 2;
	char *np = realloc(b->p, cap);
	if (np == NULL) {
		b->failed = 1;
		return -1;
	}
	b->p = np;
	b->cap = cap;
	return 0;
}

void page_addn(page *b, const char *s, size_t n)
{
	if (page_reserve(b, n) != 0)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void page_add(page *b, const char *s)
{
	page_addn(b, s, strlen(s));
}

void page_printf(page *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || page_reserve(b, (size_t)n) != 0)
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

static void page_escaped(page *b, const char *s, size_t n, int attr)
{
	if (n > DEMO_BODY_MAX) {
		b->failed = 1;
		return;
	}
	size_t cap = 6 * n + 1, out_len = 0;
	if (page_reserve(b, cap) != 0)
		return;
	csrf_reason r = attr ? csrf_html_escape_attr(s, n, b->p + b->len, cap, &out_len)
	                     : csrf_html_escape(s, n, b->p + b->len, cap, &out_len);
	if (r != CSRF_OK) {
		b->failed = 1;
		return;
	}
	b->len += out_len;
	b->p[b->len] = '\0';
}

void page_text(page *b, const char *s, size_t n)
{
	page_escaped(b, s, n, 0);
}

void page_attr(page *b, const char *s, size_t n)
{
	page_escaped(b, s, n, 1);
}

enum MHD_Result demo_respond(struct MHD_Connection *c, unsigned status, const char *ctype, page *body,
                             const char *const *headers)
{
	struct MHD_Response *resp;
	if (body->failed) {
		page_free(body);
		static const char oom[] = "internal error\n";
		resp = MHD_create_response_from_buffer(sizeof oom - 1, (void *)oom, MHD_RESPMEM_PERSISTENT);
		status = 500;
		ctype = "text/plain; charset=utf-8";
		headers = NULL;
	} else {
		resp = MHD_create_response_from_buffer(body->len, body->p, MHD_RESPMEM_MUST_FREE);
		if (resp == NULL)
			page_free(body);
		else
			page_init(body); /* the response owns the bytes now */
	}
	if (resp == NULL)
		return MHD_NO;
	if (ctype)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	for (const char *const *h = headers; h && h[0]; h += 2)
		MHD_add_response_header(resp, h[0], h[1]);
	enum MHD_Result r = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return r;
}
