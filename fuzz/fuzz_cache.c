/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_cache.c - csrf_response_cache and csrf_cache_control_is_private on
 * a random response's headers.
 * Input: NAME |#| VALUE |#| NAME |#| VALUE ... (up to 7 headers).
 * Invariants: the call succeeds; a header that is neither Cache-Control,
 * Expires nor a targeted cache field is never dropped, a targeted one
 * always is; either every Cache-Control line and Expires goes and
 * "private" comes, or none goes (Expires stays), nothing comes, and there
 * is exactly one line, which says private; a
 * line that says private holds the word private or no-store, stays
 * private with a directive appended, and a line over
 * CSRF_CACHE_CONTROL_MAX never says it; the line's bytes as a quoted
 * string are never private, and private once an unqualified private
 * follows. csrf_rejection_cache on the same headers: every
 * Cache-Control line, Expires and targeted field goes, nothing else, and
 * "no-store" comes.
 */
#include "fuzz_util.h"

#define HEADERS 7

static int ieq(const char *p, size_t n, const char *lit)
{
	size_t l = strlen(lit);
	if (n != l)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char a = p[i], b = lit[i];
		if (a >= 'A' && a <= 'Z')
			a = (char)(a - 'A' + 'a');
		if (a != b)
			return 0;
	}
	return 1;
}

static int contains(const char *p, size_t n, const char *lit)
{
	size_t l = strlen(lit);
	for (size_t i = 0; i + l <= n; i++)
		if (ieq(p + i, l, lit))
			return 1;
	return 0;
}

/* The documented names of targeted cache fields (lower case). */
static int targeted(const char *p, size_t n)
{
	static const char suffix[] = "-cache-control";
	size_t s = sizeof suffix - 1;
	return (n >= s && ieq(p + n - s, s, suffix)) || ieq(p, n, "surrogate-control") || ieq(p, n, "edge-control") ||
	       ieq(p, n, "x-accel-expires");
}

static int is_private(const char *p, size_t n)
{
	char *copy = fz_dup(p, n); /* exactly n readable bytes */
	int r = csrf_cache_control_is_private(copy, n);
	free(copy);
	FZ_ASSERT(r == 0 || r == 1);
	return r;
}

static void line_invariants(const char *v, size_t n)
{
	int priv = is_private(v, n);
	if (priv) {
		FZ_ASSERT(n <= CSRF_CACHE_CONTROL_MAX);
		FZ_ASSERT(contains(v, n, "private") || contains(v, n, "no-store"));
		char *more = malloc(n + 14);
		FZ_ASSERT(more != NULL);
		memcpy(more, v, n);
		memcpy(more + n, ", max-age=5 ,,", 14);
		if (n + 14 <= CSRF_CACHE_CONTROL_MAX)
			FZ_ASSERT(is_private(more, n + 14));
		free(more);
	}
	if (n > CSRF_CACHE_CONTROL_MAX)
		FZ_ASSERT(!priv);

	/* x="<v escaped>": a quoted string, whatever it holds, is no
	 * directive; with ", private" after it the line is private. Bytes a
	 * quoted string cannot hold (controls but tab, DEL) are left out. */
	char *q = malloc(2 * n + 16);
	FZ_ASSERT(q != NULL);
	size_t k = 0;
	memcpy(q, "x=\"", 3);
	k = 3;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			continue;
		if (c == '"' || c == '\\')
			q[k++] = '\\';
		q[k++] = (char)c;
	}
	q[k++] = '"';
	if (k <= CSRF_CACHE_CONTROL_MAX)
		FZ_ASSERT(!is_private(q, k));
	memcpy(q + k, ", private", 9);
	if (k + 9 <= CSRF_CACHE_CONTROL_MAX)
		FZ_ASSERT(is_private(q, k + 9));
	free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_pieces ps;
	fz_split(data, size, 2 * HEADERS, &ps);
	csrf_header h[HEADERS];
	size_t n = 0;
	for (size_t i = 0; i + 1 < ps.n && n < HEADERS; i += 2, n++) {
		h[n].name = (csrf_slice){ps.p[i].ptr, ps.p[i].len};
		h[n].value = (csrf_slice){ps.p[i + 1].ptr, ps.p[i + 1].len};
	}
	/* the pieces left empty by a short input are no headers */
	while (n > 0 && h[n - 1].name.len == 0 && h[n - 1].value.len == 0)
		n--;

	unsigned char drop[HEADERS];
	csrf_slice add;
	memset(drop, 0xee, sizeof drop);
	FZ_ASSERT(csrf_response_cache(h, n, drop, &add) == CSRF_OK);
	/* private, and no-store when a replaced line said it */
	FZ_ASSERT(add.ptr == NULL || (add.len == 7 && memcmp(add.ptr, "private", 7) == 0) ||
	          (add.len == 17 && memcmp(add.ptr, "private, no-store", 17) == 0));

	int lines = 0, dropped_lines = 0, private_lines = 0, no_store_lines = 0;
	for (size_t i = 0; i < n; i++) {
		FZ_ASSERT(drop[i] == 0 || drop[i] == 1);
		int cc = ieq(h[i].name.ptr, h[i].name.len, "cache-control");
		int expires = ieq(h[i].name.ptr, h[i].name.len, "expires");
		if (targeted(h[i].name.ptr, h[i].name.len))
			FZ_ASSERT(drop[i] == 1);
		else if (expires)
			FZ_ASSERT(drop[i] == (add.ptr != NULL));
		else if (!cc)
			FZ_ASSERT(drop[i] == 0);
		if (cc) {
			lines++;
			dropped_lines += drop[i];
			private_lines += is_private(h[i].value.ptr, h[i].value.len);
			no_store_lines += contains(h[i].value.ptr, h[i].value.len, "no-store");
			line_invariants(h[i].value.ptr, h[i].value.len);
		}
	}
	for (size_t i = n; i < HEADERS; i++)
		FZ_ASSERT(drop[i] == 0xee);
	if (add.ptr != NULL) {
		FZ_ASSERT(dropped_lines == lines);
		/* no-store is added only when some line had those letters */
		if (add.len == 17)
			FZ_ASSERT(no_store_lines > 0);
	} else {
		/* kept: one line, and it says private */
		FZ_ASSERT(dropped_lines == 0 && lines == 1 && private_lines == 1);
	}
	if (private_lines == 0 || lines != 1)
		FZ_ASSERT(add.ptr != NULL);

	memset(drop, 0xee, sizeof drop);
	FZ_ASSERT(csrf_rejection_cache(h, n, drop, &add) == CSRF_OK);
	FZ_ASSERT(add.ptr != NULL && add.len == 8 && memcmp(add.ptr, "no-store", 8) == 0);
	for (size_t i = 0; i < n; i++) {
		const char *nm = h[i].name.ptr;
		size_t nl = h[i].name.len;
		int cache_field = ieq(nm, nl, "cache-control") || ieq(nm, nl, "expires") || targeted(nm, nl);
		FZ_ASSERT(drop[i] == cache_field);
	}
	for (size_t i = n; i < HEADERS; i++)
		FZ_ASSERT(drop[i] == 0xee);

	fz_free(&ps);
	return 0;
}
