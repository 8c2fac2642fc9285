/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * form.c - finding one field in a request body: urlencoded
 * (csrf_form_get, csrf_form_decode), multipart/form-data
 * (csrf_multipart_get) and the dispatch on Content-Type (csrf_body_field).
 * Only the body is ever looked at, never a query string; nothing is
 * allocated and nothing outside (pointer, length) is read.
 */
#include "internal.h"

/* Requested names longer than this never match anything. */
#define FIELD_NAME_MAX 256
/* RFC 2046: a boundary is 1..70 characters. */
#define BOUNDARY_MAX 70
/* A multipart header line longer than this is malformed. */
#define PART_HEADER_LINE_MAX 1024
/* Parts looked at before a body is declared malformed. */
#define PARTS_MAX 1000

static void clear_out(char *out, size_t cap, size_t *out_len)
{
	if (out && cap)
		out[0] = '\0';
	if (out_len)
		*out_len = 0;
}

/* ---- urlencoded ---- */

/* Compares the percent-decoded form of (p, n) with name. 1: equal, 0: not
 * equal, -1: a bad %-escape. */
static int urlenc_name_eq(const char *p, size_t n, const char *name, size_t name_len)
{
	size_t j = 0;
	int eq = 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c == '%') {
			if (n - i < 3)
				return -1;
			int h = csrfx_hexval((unsigned char)p[i + 1]), l = csrfx_hexval((unsigned char)p[i + 2]);
			if (h < 0 || l < 0)
				return -1;
			c = (unsigned char)(h << 4 | l);
			i += 2;
		} else if (c == '+') {
			c = ' ';
		}
		if (eq && (j >= name_len || (unsigned char)name[j] != c))
			eq = 0;
		j++;
	}
	return eq && j == name_len;
}

/* One pair of an urlencoded body starting at p (< end): its name ends at
 * name_end (the '=' or the pair's end), its value runs from value (after
 * the '=', or the pair's end when there is none) to pair_end (the '&' or
 * end), and the next pair starts at next. */
typedef struct {
	const char *name_end, *value, *pair_end, *next;
} url_pair;

static url_pair url_pair_at(const char *p, const char *end)
{
	url_pair u;
	const char *amp = memchr(p, '&', (size_t)(end - p));
	u.pair_end = amp ? amp : end;
	const char *eq = memchr(p, '=', (size_t)(u.pair_end - p));
	u.name_end = eq ? eq : u.pair_end;
	u.value = eq ? eq + 1 : u.pair_end;
	u.next = amp ? amp + 1 : end;
	return u;
}

CSRF_API csrf_reason csrf_form_get(const char *body, size_t len, const char *name, size_t name_len, csrf_slice *value)
{
	if (!value)
		return CSRF_ERR_ARG;
	value->ptr = NULL;
	value->len = 0;
	if ((!body && len) || !name || name_len == 0)
		return CSRF_ERR_ARG;
	if (name_len > FIELD_NAME_MAX)
		return CSRF_NOT_FOUND;

	/* A name with a bad escape is skipped so that a later, well-formed
	 * field is still found; when nothing matches, the bad escape is what
	 * is reported. */
	int bad = 0;
	const char *p = body, *end = body + len;
	while (p < end) {
		url_pair u = url_pair_at(p, end);
		/* an encoded name can be at most 3 bytes per decoded byte */
		if (u.pair_end > p && (size_t)(u.name_end - p) <= 3 * name_len) {
			int m = urlenc_name_eq(p, (size_t)(u.name_end - p), name, name_len);
			if (m < 0) {
				bad = 1;
			} else if (m) {
				value->ptr = u.value;
				value->len = (size_t)(u.pair_end - u.value);
				return CSRF_OK;
			}
		}
		p = u.next;
	}
	return bad ? CSRF_MALFORMED : CSRF_NOT_FOUND;
}

CSRF_API csrf_reason csrf_form_decode(const char *in, size_t len, char *out, size_t cap, size_t *out_len)
{
	if ((!in && len) || (!out && cap)) {
		clear_out(out, cap, out_len);
		return CSRF_ERR_ARG;
	}
	size_t need = 0;
	for (size_t i = 0; i < len; i++, need++) {
		if (in[i] != '%')
			continue;
		if (len - i < 3 || csrfx_hexval((unsigned char)in[i + 1]) < 0 ||
		    csrfx_hexval((unsigned char)in[i + 2]) < 0) {
			clear_out(out, cap, out_len);
			return CSRF_MALFORMED;
		}
		i += 2;
	}
	if (need >= cap) {
		clear_out(out, cap, out_len);
		return CSRF_ERR_BUFFER;
	}
	size_t j = 0;
	for (size_t i = 0; i < len; i++) {
		char c = in[i];
		if (c == '%') {
			c = (char)(csrfx_hexval((unsigned char)in[i + 1]) << 4 |
			           csrfx_hexval((unsigned char)in[i + 2]));
			i += 2;
		} else if (c == '+') {
			c = ' ';
		}
		out[j++] = c;
	}
	out[j] = '\0';
	if (out_len)
		*out_len = j;
	return CSRF_OK;
}

/* ---- multipart/form-data ---- */

static int is_bchar(unsigned char c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return 1;
	return c != '\0' && strchr("'()+_,-./:=? ", c) != NULL;
}

/* Reads a parameter value at *pp (a token, or a quoted-string with
 * backslash escapes) and advances past it. When copy is non-NULL the
 * unquoted value goes there (at most copy_cap bytes; longer is an error);
 * when cmp is non-NULL *eq tells whether the unquoted value equals it.
 * Returns the unquoted length, or -1 when the value does not parse. */
static long read_param_value(const char **pp, const char *e, char *copy, size_t copy_cap, const char *cmp,
                             size_t cmp_len, int *eq)
{
	const char *p = *pp;
	size_t n = 0;
	int same = 1;
	int quoted = p < e && *p == '"';
	if (quoted)
		p++;
	for (;;) {
		if (p >= e) {
			if (quoted)
				return -1; /* unterminated quoted-string */
			break;
		}
		unsigned char c = (unsigned char)*p;
		if (quoted) {
			if (c == '"') {
				p++;
				break;
			}
			if (c == '\\') {
				if (e - p < 2)
					return -1;
				c = (unsigned char)p[1];
				p++;
			}
		} else if (c == ';' || csrfi_is_ows((char)c)) {
			break;
		} else if (c == '"') {
			return -1;
		}
		if (copy) {
			if (n >= copy_cap)
				return -1;
			copy[n] = (char)c;
		}
		if (cmp && (n >= cmp_len || (unsigned char)cmp[n] != c))
			same = 0;
		n++;
		p++;
	}
	if (!quoted && n == 0)
		return -1;
	if (eq)
		*eq = cmp && same && n == cmp_len;
	*pp = p;
	return (long)n;
}

/* Walks "; name=value" parameters from p to e, keeping what the two
 * users need: the boundary of a Content-Type, the name of a
 * Content-Disposition. A parameter that could be read as the one wanted
 * in another way (a second "boundary", another parameter whose name holds
 * "boundary" as PHP finds it by substring, a second "name") makes the
 * header malformed: a reader that takes the other one would see another
 * body than the library. */
typedef struct {
	/* Content-Type: the boundary */
	char *boundary;
	size_t boundary_len;
	int has_boundary;
	/* Content-Disposition: the field name */
	char *name;
	size_t name_cap, name_len;
	int has_name;
	int has_filename;
} params;

static int parse_params(const char *p, const char *e, params *ps)
{
	for (;;) {
		while (p < e && csrfi_is_ows(*p))
			p++;
		if (p >= e)
			return 0;
		if (*p != ';')
			return -1;
		p++;
		while (p < e && csrfi_is_ows(*p))
			p++;
		if (p >= e)
			return 0; /* a trailing ';' is tolerated */
		const char *pn = p;
		while (p < e && csrfi_is_tchar((unsigned char)*p))
			p++;
		const char *pn_end = p;
		if (pn_end == pn)
			return -1;
		while (p < e && csrfi_is_ows(*p))
			p++;
		if (p >= e || *p != '=')
			return -1;
		p++;
		while (p < e && csrfi_is_ows(*p))
			p++;
		size_t pnl = (size_t)(pn_end - pn);
		long n;
		if (ps->boundary && csrfi_contains_ci(pn, pnl, "boundary")) {
			if (ps->has_boundary || !csrfi_ieq(pn, pnl, "boundary"))
				return -1;
			n = read_param_value(&p, e, ps->boundary, BOUNDARY_MAX, NULL, 0, NULL);
			if (n < 0)
				return -1;
			ps->boundary_len = (size_t)n;
			ps->has_boundary = 1;
		} else if (ps->name && csrfi_ieq(pn, pnl, "name")) {
			if (ps->has_name)
				return -1;
			n = read_param_value(&p, e, ps->name, ps->name_cap, NULL, 0, NULL);
			if (n < 0)
				return -1;
			ps->has_name = 1;
			ps->name_len = (size_t)n;
		} else {
			if (read_param_value(&p, e, NULL, 0, NULL, 0, NULL) < 0)
				return -1;
			if (ps->name && (csrfi_ieq(pn, pnl, "filename") || csrfi_ieq(pn, pnl, "filename*")))
				ps->has_filename = 1;
		}
	}
}

/* The media type of a Content-Type value: up to ';', without spaces. */
static void media_type(const char *ct, size_t ct_len, const char **mt, size_t *mt_len)
{
	const char *e = ct + ct_len;
	const char *semi = memchr(ct, ';', ct_len);
	const char *p = ct, *me = semi ? semi : e;
	csrfi_trim_ptrs(&p, &me);
	*mt = p;
	*mt_len = (size_t)(me - p);
}

/* The boundary of a multipart/form-data Content-Type into buf; its length,
 * or 0 when there is none or it is not a valid RFC 2046 boundary. */
static size_t parse_boundary(const char *ct, size_t ct_len, char buf[BOUNDARY_MAX])
{
	const char *mt;
	size_t mt_len;
	media_type(ct, ct_len, &mt, &mt_len);
	if (!csrfi_ieq(mt, mt_len, "multipart/form-data"))
		return 0;
	params ps = {.boundary = buf};
	if (parse_params(mt + mt_len, ct + ct_len, &ps) < 0 || !ps.has_boundary)
		return 0;
	if (ps.boundary_len == 0 || buf[ps.boundary_len - 1] == ' ')
		return 0;
	for (size_t i = 0; i < ps.boundary_len; i++)
		if (!is_bchar((unsigned char)buf[i]))
			return 0;
	return ps.boundary_len;
}

/* After "--boundary": "--" (the close delimiter: 2), or optional
 * whitespace and CRLF (another part follows: 1, *next after the CRLF), or
 * anything else (-1). */
static int delimiter_tail(const char *p, const char *e, const char **next)
{
	if (e - p >= 2 && p[0] == '-' && p[1] == '-')
		return 2;
	while (p < e && csrfi_is_ows(*p))
		p++;
	if (e - p < 2 || p[0] != '\r' || p[1] != '\n')
		return -1;
	*next = p + 2;
	return 1;
}

/* What a part's headers say about it. A name can be no longer than its
 * header line, so the buffer always holds it whole. */
typedef struct {
	char name[PART_HEADER_LINE_MAX];
	size_t name_len;
	int field; /* a Content-Disposition of form-data with a name */
	int file;  /* ... and a filename */
	int seen;  /* a Content-Disposition was seen */
} part_info;

/* One part header line [p, e) into pi; -1 when it is malformed (also a
 * second Content-Disposition: readers disagree on which one counts). */
static int part_header(const char *p, const char *e, part_info *pi)
{
	for (const char *q = p; q < e; q++) {
		unsigned char c = (unsigned char)*q;
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return -1;
	}
	if (csrfi_is_ows(*p))
		return -1; /* obsolete line folding */
	const char *colon = memchr(p, ':', (size_t)(e - p));
	if (!colon || colon == p)
		return -1;
	const char *hn = p, *hn_end = colon;
	csrfi_trim_ptrs(&hn, &hn_end);
	if (!csrfi_ieq(hn, (size_t)(hn_end - hn), "content-disposition"))
		return 0;
	if (pi->seen)
		return -1;
	pi->seen = 1;
	const char *v = colon + 1;
	while (v < e && csrfi_is_ows(*v))
		v++;
	const char *t = v;
	while (t < e && csrfi_is_tchar((unsigned char)*t))
		t++;
	if (t == v)
		return -1;
	params ps = {.name = pi->name, .name_cap = sizeof pi->name};
	if (parse_params(t, e, &ps) < 0)
		return -1;
	pi->field = csrfi_ieq(v, (size_t)(t - v), "form-data") && ps.has_name;
	pi->file = ps.has_filename;
	pi->name_len = ps.name_len;
	return 0;
}

/* Called for each part with its headers and content; non-zero stops the
 * walk. */
typedef int (*part_fn)(void *ud, const part_info *pi, const char *v, size_t n);

/* Walks the parts of a multipart/form-data body: CSRF_OK when fn stopped
 * it, CSRF_NOT_FOUND at the close delimiter, CSRF_MALFORMED (no
 * boundary, a truncated part, bad headers). */
static csrf_reason multipart_walk(const char *content_type, size_t ct_len, const char *body, size_t len, part_fn fn,
                                  void *ud)
{
	/* dl = CRLF "--" boundary: the delimiter as it appears between parts */
	char dl[4 + BOUNDARY_MAX];
	size_t blen = content_type ? parse_boundary(content_type, ct_len, dl + 4) : 0;
	if (blen == 0)
		return CSRF_MALFORMED;
	memcpy(dl, "\r\n--", 4);
	size_t dlen = 4 + blen;

	const char *p = body, *e = body + len;
	if (!(len >= dlen - 2 && memcmp(p, dl + 2, dlen - 2) == 0)) {
		const char *first = len ? memmem(p, len, dl, dlen) : NULL;
		if (!first)
			return CSRF_MALFORMED;
		p = first + 2;
	}
	/* p is at "--boundary" */
	for (size_t parts = 0;; parts++) {
		const char *next = NULL;
		int t = delimiter_tail(p + dlen - 2, e, &next);
		if (t == 2)
			return CSRF_NOT_FOUND;
		if (t < 0 || parts >= PARTS_MAX)
			return CSRF_MALFORMED;
		p = next;

		part_info pi;
		pi.name_len = 0;
		pi.field = pi.file = pi.seen = 0;
		for (;;) {
			size_t window = (size_t)(e - p);
			if (window > PART_HEADER_LINE_MAX + 2)
				window = PART_HEADER_LINE_MAX + 2;
			const char *crlf = window ? memmem(p, window, "\r\n", 2) : NULL;
			if (!crlf)
				return CSRF_MALFORMED; /* truncated, or a line over the cap */
			if (crlf == p) {
				p += 2;
				break;
			}
			if (part_header(p, crlf, &pi) < 0)
				return CSRF_MALFORMED;
			p = crlf + 2;
		}

		const char *q = (size_t)(e - p) >= dlen ? memmem(p, (size_t)(e - p), dl, dlen) : NULL;
		if (!q || delimiter_tail(q + dlen, e, &next) < 0)
			return CSRF_MALFORMED; /* the part never ends */
		if (fn(ud, &pi, p, (size_t)(q - p)))
			return CSRF_OK;
		p = q + 2;
	}
}

typedef struct {
	const char *want;
	size_t want_len;
	csrf_slice *value;
} find_part;

static int match_part(void *ud, const part_info *pi, const char *v, size_t n)
{
	find_part *f = ud;
	if (!pi->field || pi->file || pi->name_len != f->want_len || memcmp(pi->name, f->want, f->want_len) != 0)
		return 0;
	f->value->ptr = v;
	f->value->len = n;
	return 1;
}

CSRF_API csrf_reason csrf_multipart_get(const char *content_type, size_t ct_len, const char *body, size_t len,
                                        const char *name, size_t name_len, csrf_slice *value)
{
	if (!value)
		return CSRF_ERR_ARG;
	value->ptr = NULL;
	value->len = 0;
	if ((!content_type && ct_len) || (!body && len) || !name || name_len == 0)
		return CSRF_ERR_ARG;
	/* an over-long name is never matched, but the body is still checked */
	find_part f = {name, name_len > FIELD_NAME_MAX ? (size_t)-1 : name_len, value};
	return multipart_walk(content_type, ct_len, body, len, match_part, &f);
}

typedef struct {
	csrfi_name_fn fn;
	void *ud;
} each_part;

static int visit_part(void *ud, const part_info *pi, const char *v, size_t n)
{
	each_part *ep = ud;
	(void)v;
	(void)n;
	return pi->field ? ep->fn(ep->ud, pi->name, pi->name_len, 0) : 0;
}

csrf_reason csrfi_form_each_name(csrfi_form_kind kind, const char *content_type, size_t ct_len, const char *body,
                                 size_t len, csrfi_name_fn fn, void *ud)
{
	if (kind == CSRF_FORM_MULTIPART) {
		each_part ep = {fn, ud};
		csrf_reason r = multipart_walk(content_type, ct_len, body, len, visit_part, &ep);
		return r == CSRF_NOT_FOUND ? CSRF_OK : r == CSRF_OK ? CSRF_NOT_FOUND : r;
	}
	const char *p = body, *end = body + len;
	while (p < end) {
		url_pair u = url_pair_at(p, end);
		if (fn(ud, p, (size_t)(u.name_end - p), 1))
			return CSRF_NOT_FOUND;
		p = u.next;
	}
	return CSRF_OK;
}

/* ---- dispatch ---- */

csrfi_form_kind csrfi_form_kind_of(const char *content_type, size_t ct_len)
{
	if (!content_type)
		return CSRF_FORM_NONE;
	const char *mt;
	size_t mt_len;
	media_type(content_type, ct_len, &mt, &mt_len);
	if (csrfi_ieq(mt, mt_len, "application/x-www-form-urlencoded"))
		return CSRF_FORM_URLENCODED;
	if (csrfi_ieq(mt, mt_len, "multipart/form-data"))
		return CSRF_FORM_MULTIPART;
	return CSRF_FORM_NONE;
}

csrf_reason csrfi_body_field(const char *content_type, size_t ct_len, const char *body, size_t len, const char *name,
                             size_t name_len, char *buf, size_t cap, csrf_slice *value)
{
	csrfi_form_kind kind = csrfi_form_kind_of(content_type, ct_len);
	csrf_slice v;
	csrf_reason rc;
	value->ptr = NULL;
	value->len = 0;
	if (kind == CSRF_FORM_URLENCODED) {
		rc = csrf_form_get(body, len, name, name_len, &v);
		if (rc != CSRF_OK)
			return rc;
		/* Without '%' or '+' the decoding is the value itself (a
		 * token's alphabet has neither): no copy, only the bound a
		 * decoding into cap bytes would set. */
		if (!memchr(v.ptr, '%', v.len) && !memchr(v.ptr, '+', v.len)) {
			if (v.len >= cap)
				return CSRF_ERR_BUFFER;
			*value = v;
			return CSRF_OK;
		}
		size_t got = 0;
		rc = csrf_form_decode(v.ptr, v.len, buf, cap, &got);
		if (rc == CSRF_OK)
			*value = (csrf_slice){buf, got};
		return rc;
	}
	if (kind == CSRF_FORM_MULTIPART) {
		rc = csrf_multipart_get(content_type, ct_len, body, len, name, name_len, &v);
		if (rc != CSRF_OK)
			return rc;
		if (v.len >= cap)
			return CSRF_ERR_BUFFER;
		*value = v;
		return CSRF_OK;
	}
	return CSRF_NOT_FOUND;
}

CSRF_API csrf_reason csrf_body_field(const char *content_type, size_t ct_len, const char *body, size_t len,
                                     const char *name, size_t name_len, char *out, size_t cap, size_t *out_len)
{
	clear_out(out, cap, out_len);
	if ((!content_type && ct_len) || (!body && len) || !name || name_len == 0 || (!out && cap))
		return CSRF_ERR_ARG;
	csrf_slice v;
	csrf_reason rc = csrfi_body_field(content_type, ct_len, body, len, name, name_len, out, cap, &v);
	if (rc != CSRF_OK) {
		clear_out(out, cap, out_len);
		return rc;
	}
	if (v.ptr != out)
		memcpy(out, v.ptr, v.len);
	out[v.len] = '\0';
	if (out_len)
		*out_len = v.len;
	return CSRF_OK;
}
