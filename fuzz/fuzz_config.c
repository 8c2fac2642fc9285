/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_config.c - configuration under fault injection: csrf_ctx_new,
 * csrf_ctx_set_self_origin, csrf_ctx_add_trusted_origin,
 * csrf_ctx_add_exemption and csrf_ctx_set_field_name with an allocator
 * that fails the Nth allocation. Input: N |#| SELF |#| TRUSTED |#| PATH
 * |#| FIELD (N: first byte, 0 never fails).
 * Invariants: the results are the documented ones, CSRF_ERR_NOMEM only
 * once an allocation failed; an origin is accepted exactly when it parses
 * as one, and then trusts that origin in csrf_check, while a refused one
 * adds nothing; an exemption is accepted exactly for a valid path and then
 * matches that path (with or without a query) for its method only; a field
 * name is accepted exactly when it is 1..64 of [A-Za-z0-9_-] and is then
 * the one csrf_field_name gives; every configuration error has a message;
 * after csrf_ctx_free nothing allocated is still live, whatever failed.
 */
#include "fuzz_util.h"

typedef struct {
	size_t calls, fail_at, live;
	int failed;
} fault;

static void *f_alloc(size_t n, void *ud)
{
	fault *f = ud;
	f->calls++;
	if (f->fail_at && f->calls == f->fail_at) {
		f->failed = 1;
		return NULL;
	}
	void *p = malloc(n ? n : 1);
	if (p)
		f->live++;
	return p;
}

static void f_free(void *p, void *ud)
{
	fault *f = ud;
	if (p) {
		FZ_ASSERT(f->live > 0);
		f->live--;
	}
	free(p);
}

static int nomem_ok(const fault *f, csrf_reason r)
{
	return r != CSRF_ERR_NOMEM || f->failed;
}

static int valid_path(const char *p, size_t n)
{
	if (n == 0 || p[0] != '/')
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c <= 0x20 || c >= 0x7f || c == '?' || c == '#')
			return 0;
	}
	return 1;
}

static int valid_field(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > CSRF_FIELD_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '-'))
			return 0;
	}
	return 1;
}

/* A cross-site POST from origin (NULL: none) to target. */
static csrf_result post(const csrf_ctx *ctx, const char *method, const char *origin, size_t origin_len,
                        const char *target, size_t target_len)
{
	csrf_request req = {
	    .method = {method, strlen(method)},
	    .target = {target, target_len},
	    .scheme = {"https", 5},
	    .host = {"site.example", 12},
	    .origin = {origin, origin_len},
	    .sec_fetch_site = {"cross-site", 10},
	    .now = 1700000000,
	};
	return csrf_check(ctx, &req);
}

static void config_error_has_message(const csrf_ctx *ctx, csrf_reason r)
{
	if (r == CSRF_ERR_CONFIG)
		FZ_ASSERT(csrf_ctx_error(ctx)[0] != '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_pieces ps;
	fz_split(data, size, 5, &ps);
	fault f = {.fail_at = ps.p[0].len ? (unsigned char)ps.p[0].ptr[0] : 0};
	csrf_allocator a = {f_alloc, f_free, &f};
	const fz_piece *self = &ps.p[1], *trusted = &ps.p[2], *path = &ps.p[3], *field = &ps.p[4];

	csrf_ctx *ctx = NULL;
	csrf_reason r = csrf_ctx_new(&ctx, &a);
	FZ_ASSERT(r == CSRF_OK || (r == CSRF_ERR_NOMEM && f.failed));
	if (r != CSRF_OK) {
		FZ_ASSERT(f.live == 0);
		fz_free(&ps);
		return 0;
	}
	csrf_ctx_set_mode(ctx, CSRF_MODE_ORIGIN);
	csrf_origin o;

	r = csrf_ctx_set_self_origin(ctx, self->ptr, self->len);
	FZ_ASSERT((r == CSRF_OK || r == CSRF_ERR_CONFIG || r == CSRF_ERR_NOMEM) && nomem_ok(&f, r));
	config_error_has_message(ctx, r);
	int parses = csrf_origin_parse(self->ptr, self->len, &o) == CSRF_OK;
	if (r != CSRF_ERR_NOMEM)
		FZ_ASSERT((r == CSRF_OK) == parses);

	/* trusted: before adding, a cross-site request from it is refused */
	int t_parses = csrf_origin_parse(trusted->ptr, trusted->len, &o) == CSRF_OK;
	int self_same = 0;
	if (t_parses && r == CSRF_OK) {
		csrf_origin s;
		FZ_ASSERT(csrf_origin_parse(self->ptr, self->len, &s) == CSRF_OK);
		self_same = csrf_origin_equal(&s, &o);
	}
	if (!self_same)
		FZ_ASSERT(!post(ctx, "POST", trusted->ptr, trusted->len, "/x", 2).allowed);
	r = csrf_ctx_add_trusted_origin(ctx, trusted->ptr, trusted->len);
	FZ_ASSERT((r == CSRF_OK || r == CSRF_ERR_CONFIG || r == CSRF_ERR_NOMEM) && nomem_ok(&f, r));
	config_error_has_message(ctx, r);
	if (r != CSRF_ERR_NOMEM)
		FZ_ASSERT((r == CSRF_OK) == t_parses);
	if (r == CSRF_OK)
		FZ_ASSERT(post(ctx, "POST", trusted->ptr, trusted->len, "/x", 2).allowed);
	else if (!self_same)
		FZ_ASSERT(!post(ctx, "POST", trusted->ptr, trusted->len, "/x", 2).allowed);

	/* exemption for POST only */
	r = csrf_ctx_add_exemption(ctx, "POST", path->ptr, path->len);
	FZ_ASSERT((r == CSRF_OK || r == CSRF_ERR_CONFIG || r == CSRF_ERR_NOMEM) && nomem_ok(&f, r));
	config_error_has_message(ctx, r);
	if (r != CSRF_ERR_NOMEM)
		FZ_ASSERT((r == CSRF_OK) == valid_path(path->ptr, path->len));
	static const char evil[] = "https://evil.example";
	char *t = malloc(path->len + 3);
	FZ_ASSERT(t != NULL);
	memcpy(t, path->ptr, path->len);
	if (r == CSRF_OK) {
		FZ_ASSERT(post(ctx, "POST", evil, sizeof evil - 1, t, path->len).reason == CSRF_EXEMPT);
		memcpy(t + path->len, "?q", 2);
		FZ_ASSERT(post(ctx, "POST", evil, sizeof evil - 1, t, path->len + 2).reason == CSRF_EXEMPT);
		FZ_ASSERT(post(ctx, "PUT", evil, sizeof evil - 1, t, path->len).reason != CSRF_EXEMPT);
		memcpy(t + path->len, "x", 1);
		FZ_ASSERT(post(ctx, "POST", evil, sizeof evil - 1, t, path->len + 1).reason != CSRF_EXEMPT);
		if (path->len > 1)
			FZ_ASSERT(post(ctx, "POST", evil, sizeof evil - 1, t, path->len - 1).reason != CSRF_EXEMPT);
	}
	free(t);

	/* field name (a C string: up to the first NUL) */
	char *name = malloc(field->len + 1);
	FZ_ASSERT(name != NULL);
	memcpy(name, field->ptr, field->len);
	name[field->len] = '\0';
	r = csrf_ctx_set_field_name(ctx, name);
	FZ_ASSERT((r == CSRF_OK || r == CSRF_ERR_CONFIG) && nomem_ok(&f, r));
	config_error_has_message(ctx, r);
	FZ_ASSERT((r == CSRF_OK) == valid_field(name));
	if (r == CSRF_OK) {
		uint8_t secret[CSRF_SECRET_LEN] = {1};
		char got[CSRF_FIELD_NAME_MAX + 1];
		FZ_ASSERT(csrf_field_name(ctx, secret, got, sizeof got) == CSRF_OK);
		FZ_ASSERT(strcmp(got, name) == 0);
	}
	free(name);

	csrf_ctx_free(ctx);
	FZ_ASSERT(f.live == 0);
	fz_free(&ps);
	return 0;
}
