/*
 * page.c - csrf-demo's output buffers: a growing byte buffer that remembers
 * an allocation failure instead of crashing, HTML escaping of everything a
 * page prints (through the library's escapers), and the UTF-8 check the
 * demo applies to form fields.
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

int demo_utf8_ok(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		unsigned c = p[i];
		if (c < 0x80) {
			if (c < 0x20 && c != '\t' && c != '\r' && c != '\n')
				return 0;
			if (c == 0x7f)
				return 0;
			i++;
			continue;
		}
		size_t need;
		unsigned min;
		uint32_t cp;
		if (c >= 0xc2 && c <= 0xdf) {
			need = 1;
			min = 0x80;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			need = 2;
			min = 0x800;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			need = 3;
			min = 0x10000;
			cp = c & 0x07;
		} else {
			return 0;
		}
		if (n - i - 1 < need)
			return 0;
		for (size_t k = 1; k <= need; k++) {
			unsigned cc = p[i + k];
			if ((cc & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (cc & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += need + 1;
	}
	return 1;
}
