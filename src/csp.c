/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * csp.c - the Content-Security-Policy value an adapter adds to injected
 * HTML responses: form-action and base-uri, the browser-side backstop of
 * what the injector cannot see in a stream (a formaction or a <base>
 * after the token went in), as a policy of its own beside the upstream's.
 */
#include "internal.h"

#include <stdio.h>

typedef struct {
	char *out;
	size_t cap, len;
} buf;

static void add(buf *b, const char *s, size_t n)
{
	if (b->len + n < b->cap)
		memcpy(b->out + b->len, s, n);
	b->len += n;
}

static void add_str(buf *b, const char *s)
{
	add(b, s, strlen(s));
}

static int is_ws(unsigned char c)
{
	return c == ' ' || c == '\t';
}

/* The policy with the trusted origins given as text (trusted) or parsed
 * (origins, a context's own): exactly one of them is used. */
static csrf_reason build(const char *existing, size_t existing_len, const csrf_slice *trusted,
                         const csrf_origin *origins, size_t n_trusted, char *out, size_t cap, size_t *out_len)
{
	*out_len = 0;
	if (cap > 0)
		out[0] = '\0';
	/* the upstream's value, trimmed; a header value has no controls */
	while (existing_len > 0 && is_ws((unsigned char)existing[0]))
		existing++, existing_len--;
	while (existing_len > 0 && is_ws((unsigned char)existing[existing_len - 1]))
		existing_len--;
	for (size_t i = 0; i < existing_len; i++) {
		unsigned char c = (unsigned char)existing[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return CSRF_MALFORMED;
	}
	buf b = {out, cap, 0};
	if (existing_len > 0) {
		add(&b, existing, existing_len);
		add_str(&b, ", ");
	}
	add_str(&b, "form-action 'self'");
	for (size_t k = 0; k < n_trusted; k++) {
		csrf_origin o;
		if (origins)
			o = origins[k];
		else if (!trusted[k].ptr || csrf_origin_parse(trusted[k].ptr, trusted[k].len, &o) != CSRF_OK)
			return CSRF_MALFORMED;
		char port[8] = "";
		int dflt = (strcmp(o.scheme, "https") == 0 && o.port == 443) ||
		           (strcmp(o.scheme, "http") == 0 && o.port == 80);
		if (!dflt)
			snprintf(port, sizeof port, ":%u", (unsigned)o.port);
		add_str(&b, " ");
		add_str(&b, o.scheme);
		add_str(&b, "://");
		add_str(&b, o.host);
		add_str(&b, port);
	}
	add_str(&b, "; base-uri 'self'");
	if (b.len + 1 > cap) {
		*out_len = b.len + 1;
		if (cap > 0)
			out[0] = '\0';
		return CSRF_ERR_BUFFER;
	}
	out[b.len] = '\0';
	*out_len = b.len;
	return CSRF_OK;
}

CSRF_API csrf_reason csrf_csp_form_action(const char *existing, size_t existing_len, const csrf_slice *trusted,
                                          size_t n_trusted, char *out, size_t cap, size_t *out_len)
{
	if (!out || !out_len || (!existing && existing_len > 0) || (!trusted && n_trusted > 0))
		return CSRF_ERR_ARG;
	return build(existing, existing_len, trusted, NULL, n_trusted, out, cap, out_len);
}

csrf_reason csrfi_csp_form_action_ctx(const csrf_ctx *ctx, const char *existing, size_t existing_len, char *out,
                                      size_t cap, size_t *out_len)
{
	static const csrf_slice none[1];
	if (!ctx || !out || !out_len || (!existing && existing_len > 0))
		return CSRF_ERR_ARG;
	if (ctx->n_trusted == 0)
		return build(existing, existing_len, none, NULL, 0, out, cap, out_len);
	return build(existing, existing_len, NULL, ctx->trusted, ctx->n_trusted, out, cap, out_len);
}
