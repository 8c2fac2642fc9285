/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * page.c - csrf-demo's output buffers: a growing byte buffer that remembers
 * an allocation failure instead of crashing, HTML escaping of everything a
 * page prints (through the library's escapers), and the UTF-8 check the
 * demo applies to form fields; and demo_respond, which sends a page, a
 * protected one through the library's response exchange.
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

void page_head(page *b, const char *title, const char *site)
{
	page_add(b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>");
	page_text(b, title, strlen(title));
	page_add(b, " - ");
	page_text(b, site, strlen(site));
	page_add(b, "</title>");
}

static csrf_header header_of(const char *name, const char *value)
{
	return (csrf_header){{name, strlen(name)}, {value, strlen(value)}};
}

/* The headers every answer carries, into h; how many. */
static size_t base_headers(csrf_header *h, const char *ctype)
{
	size_t n = 0;
	if (ctype)
		h[n++] = header_of("Content-Type", ctype);
	h[n++] = header_of("X-Content-Type-Options", "nosniff");
	h[n++] = header_of("Cache-Control", "no-store");
	return n;
}

static int emit(void *ud, const char *p, size_t n, int inserted)
{
	page *out = ud;
	(void)inserted;
	page_addn(out, p, n);
	return out->failed ? -1 : 0;
}

/* The exchange's line about the page, when it has one (the charset it
 * could not read, the page it could not prepare, forms left without a
 * token), as csrf-cgi logs it: method and path cut for a log, no query. */
static void log_page(const csrf_response *resp, const csrf_request *req)
{
	char text[CSRF_RESPONSE_LOG_MAX], m[16], path[128];
	if (csrf_response_log(resp, text, sizeof text) == 0)
		return;
	demo_log_value(req->method.ptr, req->method.len, 0, m, sizeof m);
	demo_log_value(req->target.ptr, req->target.len, 1, path, sizeof path);
	printf("page of %s %s: %s\n", m, path, text);
}

/* The headers as they go out, "name\0value\0" each, into out: h as the
 * exchange judged them (action NULL: every one kept), then add. Copied
 * as soon as they are judged: the values the exchange wrote live in its
 * state, which csrf_response_end wipes. */
static void final_headers(page *out, const csrf_header *h, size_t n, const unsigned char *action,
                          const csrf_slice *value, const csrf_header *add, size_t n_add)
{
	for (size_t i = 0; i < n + n_add; i++) {
		const csrf_header *x = i < n ? &h[i] : &add[i - n];
		int act = i < n && action ? action[i] : CSRF_HEADER_KEEP;
		if (act == CSRF_HEADER_DROP)
			continue;
		csrf_slice v = act == CSRF_HEADER_REPLACE ? value[i] : x->value;
		page_addn(out, x->name.ptr, x->name.len);
		page_addn(out, "", 1);
		page_addn(out, v.ptr, v.len);
		page_addn(out, "", 1);
	}
}

/* Puts body, with its headers h, through the exchange resp: 1 when it
 * got tokens (the page in *out, the headers to send in *hb), 0 when both
 * go out as they are, -1 when injecting failed half way (the page must
 * not go out). */
static int exchange(csrf_response *resp, csrf_request *req, const page *body, const csrf_header *h, size_t n, page *out,
                    page *hb)
{
	unsigned char action[DEMO_HEADERS_MAX + 3];
	csrf_slice value[DEMO_HEADERS_MAX + 3];
	csrf_header add[CSRF_RESPONSE_ADD_MAX];
	size_t n_add, used, left = body->len;
	const char *p = body->p ? body->p : "";
	csrf_charset_verdict cv;
	/* the whole body is in hand: the prescan gets all it may read */
	do {
		cv = csrf_response_hold(resp, p, left, 1, &used);
		p += used;
		left -= used;
	} while (cv == CSRF_CHARSET_MORE && used > 0);
	/* a page without tokens is safe to send: its forms will be
	 * rejected, never let through */
	if (cv != CSRF_CHARSET_INJECT || csrf_response_headers(resp, req, h, n, action, value, add, &n_add) != CSRF_OK)
		return 0;
	final_headers(hb, h, n, action, value, add, n_add);
	csrf_slice held = csrf_response_held(resp);
	unsigned status;
	if (csrf_response_feed(resp, held.ptr, held.len, emit, out) != CSRF_OK ||
	    csrf_response_feed(resp, p, left, emit, out) != CSRF_OK ||
	    csrf_response_end(resp, emit, out, &status) != CSRF_OK || hb->failed)
		return -1;
	return 1;
}

enum MHD_Result demo_respond(struct MHD_Connection *c, const csrf_ctx *ctx, csrf_request *req, unsigned status,
                             const char *ctype, page *body, const char *const *headers)
{
	csrf_header h[DEMO_HEADERS_MAX + 3];
	size_t n = base_headers(h, ctype);
	for (const char *const *p = headers; p && p[0]; p += 2) {
		if (n == sizeof h / sizeof h[0]) {
			body->failed = 1;
			break;
		}
		h[n++] = header_of(p[0], p[1]);
	}

	/* The library decides what becomes of a protected page. */
	csrf_response_verdict verdict = ctx && req && !body->failed
	                                    ? csrf_response_begin(ctx, req->method.ptr, req->method.len, status, ctype,
	                                                          ctype ? strlen(ctype) : 0, NULL, 0)
	                                    : CSRF_RESPONSE_PASS;
	void *mem = NULL;
	csrf_response *ex = NULL;
	int injected = 0;
	page out, hb;
	page_init(&out);
	page_init(&hb);
	if (verdict == CSRF_RESPONSE_INJECT) {
		mem = malloc(csrf_response_size());
		if (mem == NULL ||
		    csrf_response_init(mem, csrf_response_size(), ctx, ctype, strlen(ctype), &ex) != CSRF_OK) {
			body->failed = 1;
		} else {
			injected = exchange(ex, req, body, h, n, &out, &hb);
			log_page(ex, req);
			if (injected < 0)
				body->failed = 1;
		}
	}
	if (injected > 0) {
		page_free(body);
		*body = out; /* the page with its tokens */
	} else {
		page_wipe(&out);
		page_wipe(&hb);
		final_headers(&hb, h, n, NULL, NULL, NULL, 0);
	}

	struct MHD_Response *resp;
	if (body->failed || hb.failed) {
		page_wipe(body);
		page_wipe(&hb);
		static const char oom[] = "internal error\n";
		resp = MHD_create_response_from_buffer(sizeof oom - 1, (void *)oom, MHD_RESPMEM_PERSISTENT);
		status = 500;
		final_headers(&hb, h, base_headers(h, "text/plain; charset=utf-8"), NULL, NULL, NULL, 0);
	} else {
		resp = MHD_create_response_from_buffer(body->len, body->p, MHD_RESPMEM_MUST_FREE);
		if (resp == NULL)
			page_wipe(body);
		else
			page_init(body); /* the response owns the bytes now */
	}
	enum MHD_Result r = resp && !hb.failed ? MHD_YES : MHD_NO;
	for (const char *p = hb.p; r == MHD_YES && p < hb.p + hb.len;) {
		const char *name = p, *value = p + strlen(p) + 1;
		r = MHD_add_response_header(resp, name, value);
		p = value + strlen(value) + 1;
	}
	if (r == MHD_YES)
		r = MHD_queue_response(c, status, resp);
	if (resp)
		MHD_destroy_response(resp);
	page_wipe(&hb);
	csrf_response_wipe(ex);
	free(mem);
	return r;
}
