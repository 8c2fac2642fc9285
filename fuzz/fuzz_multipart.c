/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_multipart.c - multipart/form-data: csrf_multipart_get and
 * csrf_body_field. Input: CUT |#| NAME |#| CONTENT-TYPE |#| BODY |#| VALUE.
 * Invariants: on random input a found value lies inside the body, is
 * followed by CRLF "--", and csrf_body_field returns the same bytes; a
 * body built well-formed around VALUE (boundary and name taken from the
 * input, a decoy field and a same-named file part before it) yields
 * exactly VALUE, and every truncation of it yields VALUE or no value,
 * never a partial one.
 */
#include "fuzz_util.h"

static int is_bchar(unsigned char c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return 1;
	return c != '\0' && strchr("'()+_,-./:=?", c) != NULL;
}

static int is_tchar(unsigned char c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return 1;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* Keeps the bytes of (in, n) that pass keep, at most max, into out. */
static size_t filter(const char *in, size_t n, int (*keep)(unsigned char), char *out, size_t max)
{
	size_t k = 0;
	for (size_t i = 0; i < n && k < max; i++)
		if (keep((unsigned char)in[i]))
			out[k++] = in[i];
	return k;
}

typedef struct {
	char *p;
	size_t n, cap;
} buf;

static void put(buf *b, const void *s, size_t n)
{
	FZ_ASSERT(b->n + n <= b->cap);
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

static void puts_(buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void random_input(const fz_pieces *ps)
{
	const char *name = ps->p[1].ptr, *ct = ps->p[2].ptr, *body = ps->p[3].ptr;
	size_t name_len = ps->p[1].len, ct_len = ps->p[2].len, len = ps->p[3].len;
	csrf_slice v;
	csrf_reason r = csrf_multipart_get(ct, ct_len, body, len, name, name_len, &v);
	FZ_ASSERT(r == CSRF_OK || r == CSRF_NOT_FOUND || r == CSRF_MALFORMED || r == CSRF_TOO_LARGE ||
	          r == CSRF_ERR_ARG);
	if (name_len == 0)
		FZ_ASSERT(r == CSRF_ERR_ARG);
	if (r != CSRF_OK) {
		FZ_ASSERT(v.ptr == NULL && v.len == 0);
		return;
	}
	FZ_ASSERT(fz_inside(v, body, len));
	FZ_ASSERT((size_t)(body + len - (v.ptr + v.len)) >= 4 && memcmp(v.ptr + v.len, "\r\n--", 4) == 0);
	char *out = malloc(v.len + 1);
	FZ_ASSERT(out != NULL);
	size_t out_len = 0;
	FZ_ASSERT(csrf_body_field(ct, ct_len, body, len, name, name_len, out, v.len + 1, &out_len) == CSRF_OK);
	FZ_ASSERT(out_len == v.len && memcmp(out, v.ptr, v.len) == 0 && out[out_len] == '\0');
	if (v.len > 0)
		FZ_ASSERT(csrf_body_field(ct, ct_len, body, len, name, name_len, out, v.len, &out_len) ==
		          CSRF_ERR_BUFFER);
	free(out);
}

static void built_input(const fz_pieces *ps)
{
	char boundary[70], name[64];
	size_t bl = filter(ps->p[2].ptr, ps->p[2].len, is_bchar, boundary, sizeof boundary);
	size_t nl = filter(ps->p[1].ptr, ps->p[1].len, is_tchar, name, sizeof name - 1);
	if (bl == 0)
		memcpy(boundary, "b", bl = 1);
	if (nl == 0)
		memcpy(name, "f", nl = 1);
	const char *val = ps->p[4].ptr, *decoy = ps->p[3].ptr;
	size_t val_len = ps->p[4].len, decoy_len = ps->p[3].len;

	char dl[4 + 70];
	memcpy(dl, "\r\n--", 4);
	memcpy(dl + 4, boundary, bl);
	size_t dlen = 4 + bl;
	/* content that contains the delimiter would end its part early */
	if ((val_len >= dlen && memmem(val, val_len, dl, dlen)) ||
	    (decoy_len >= dlen && memmem(decoy, decoy_len, dl, dlen)))
		return;

	char ctb[128];
	int ctn = snprintf(ctb, sizeof ctb, "multipart/form-data; boundary=\"%.*s\"", (int)bl, boundary);
	FZ_ASSERT(ctn > 0 && (size_t)ctn < sizeof ctb);

	buf b = {.cap = 512 + 2 * decoy_len + val_len + 4 * bl + 2 * nl};
	b.p = malloc(b.cap);
	FZ_ASSERT(b.p != NULL);
	/* a decoy field whose name only starts like ours */
	put(&b, dl + 2, dlen - 2);
	puts_(&b, "\r\nContent-Disposition: form-data; name=\"");
	put(&b, name, nl);
	puts_(&b, "x\"\r\n\r\n");
	put(&b, decoy, decoy_len);
	/* a file part with our name: skipped */
	put(&b, dl, dlen);
	puts_(&b, "\r\nContent-Type: text/plain\r\nContent-Disposition: form-data; name=\"");
	put(&b, name, nl);
	puts_(&b, "\"; filename=\"a.txt\"\r\n\r\n");
	put(&b, decoy, decoy_len);
	/* ours */
	put(&b, dl, dlen);
	puts_(&b, "\r\ncontent-disposition: form-data; name=");
	put(&b, name, nl);
	puts_(&b, "\r\n\r\n");
	size_t val_at = b.n;
	put(&b, val, val_len);
	put(&b, dl, dlen);
	size_t complete = b.n + 2;
	puts_(&b, "--\r\n");

	char *body = fz_dup(b.p, b.n);
	csrf_slice v;
	FZ_ASSERT(csrf_multipart_get(ctb, (size_t)ctn, body, b.n, name, nl, &v) == CSRF_OK);
	FZ_ASSERT(v.ptr == body + val_at && v.len == val_len);
	free(body);

	/* A truncation chosen by the input: the whole value, or nothing. */
	size_t cut = ps->p[0].len ? (size_t)(unsigned char)ps->p[0].ptr[0] : 0;
	if (ps->p[0].len > 1)
		cut = cut << 8 | (unsigned char)ps->p[0].ptr[1];
	cut %= b.n + 1;
	body = fz_dup(b.p, cut);
	csrf_reason r = csrf_multipart_get(ctb, (size_t)ctn, body, cut, name, nl, &v);
	if (cut >= complete) {
		FZ_ASSERT(r == CSRF_OK);
	}
	if (r == CSRF_OK)
		FZ_ASSERT(v.ptr == body + val_at && v.len == val_len);
	else
		FZ_ASSERT(cut < complete);
	free(body);
	free(b.p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_pieces ps;
	fz_split(data, size, 5, &ps);
	random_input(&ps);
	built_input(&ps);
	fz_free(&ps);
	return 0;
}
