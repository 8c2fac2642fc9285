/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_cookie.c - csrf_cookie_get on a random Cookie header and name.
 * Input: NAME |#| HEADER.
 * Invariants: the result is one of the documented codes; a found value
 * lies inside the header, contains no ';', and is preceded by '=' (or
 * '="' when unquoted); a header over the cap is refused; a simple header
 * where the name is absent finds the name once it is appended.
 */
#include "fuzz_util.h"

#define HEADER_CAP (16 * 1024)
/* Longer names never match (cookie.c's own cap); real names are short. */
#define NAME_CAP 256

/* Printable ASCII without '"': appending "; name=v" to such a header
 * must make the name findable. */
static int simple_header(const char *h, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (h[i] < 0x20 || h[i] > 0x7e || h[i] == '"')
			return 0;
	return 1;
}

static int token_name(const char *s, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '-'))
			return 0;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_pieces ps;
	fz_split(data, size, 2, &ps);
	const char *name = ps.p[0].ptr, *hdr = ps.p[1].ptr;
	size_t name_len = ps.p[0].len, len = ps.p[1].len;

	csrf_slice v;
	csrf_reason r = csrf_cookie_get(hdr, len, name, name_len, &v);
	FZ_ASSERT(r == CSRF_OK || r == CSRF_NOT_FOUND || r == CSRF_MALFORMED || r == CSRF_TOO_LARGE ||
	          r == CSRF_ERR_ARG);
	if (name_len == 0)
		FZ_ASSERT(r == CSRF_ERR_ARG);
	if (len > HEADER_CAP)
		FZ_ASSERT(r == CSRF_TOO_LARGE);
	if (r == CSRF_OK) {
		FZ_ASSERT(fz_inside(v, hdr, len));
		FZ_ASSERT(memchr(v.ptr, ';', v.len) == NULL);
		FZ_ASSERT(v.ptr > hdr);
		const char *q = v.ptr - 1;
		if (*q == '"' && q > hdr)
			q--;
		while (q > hdr && (*q == ' ' || *q == '\t'))
			q--;
		FZ_ASSERT(*q == '=');
		/* The same call again gives the same answer (no hidden state). */
		csrf_slice v2;
		FZ_ASSERT(csrf_cookie_get(hdr, len, name, name_len, &v2) == CSRF_OK);
		FZ_ASSERT(v2.ptr == v.ptr && v2.len == v.len);
	} else {
		FZ_ASSERT(v.ptr == NULL && v.len == 0);
	}

	if (r == CSRF_NOT_FOUND && token_name(name, name_len) && name_len <= NAME_CAP && simple_header(hdr, len) &&
	    len + name_len + 8 <= HEADER_CAP) {
		size_t n2 = len + 2 + name_len + 2;
		char *h2 = malloc(n2);
		FZ_ASSERT(h2 != NULL);
		memcpy(h2, hdr, len);
		memcpy(h2 + len, "; ", 2);
		memcpy(h2 + len + 2, name, name_len);
		memcpy(h2 + len + 2 + name_len, "=v", 2);
		csrf_slice v3;
		FZ_ASSERT(csrf_cookie_get(h2, n2, name, name_len, &v3) == CSRF_OK);
		FZ_ASSERT(v3.len == 1 && v3.ptr == h2 + n2 - 1);
		free(h2);
	}
	fz_free(&ps);
	return 0;
}
