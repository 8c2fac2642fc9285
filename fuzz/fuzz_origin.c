/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_origin.c - csrf_origin_parse and csrf_url_origin on random strings.
 * Input: any bytes.
 * Invariants: a parsed origin has scheme http or https, a non-empty
 * lower-case NUL-terminated host without a final dot, a non-zero port; it
 * equals itself and, when its host is a name, the same name with a final
 * dot; its
 * serialisation parses back to an equal origin, also as a URL and with a
 * path, query or fragment added; a string that parses as an origin gives
 * the same origin as a URL.
 */
#include "fuzz_util.h"

static void check_fields(const csrf_origin *o)
{
	FZ_ASSERT(strcmp(o->scheme, "http") == 0 || strcmp(o->scheme, "https") == 0);
	size_t hl = strnlen(o->host, sizeof o->host);
	FZ_ASSERT(hl > 0 && hl < sizeof o->host);
	for (size_t i = 0; i < hl; i++)
		FZ_ASSERT(!(o->host[i] >= 'A' && o->host[i] <= 'Z'));
	FZ_ASSERT(o->port != 0);
	FZ_ASSERT(o->host[hl - 1] != '.');
	FZ_ASSERT(csrf_origin_equal(o, o) == 1);
}

/* A name (not an IPv4 or IPv6 literal) with a final dot is the same host. */
static void check_final_dot(const csrf_origin *o)
{
	size_t hl = strnlen(o->host, sizeof o->host);
	int name = 0;
	for (size_t i = 0; i < hl; i++)
		if (o->host[i] >= 'a' && o->host[i] <= 'z')
			name = 1;
	if (o->host[0] == '[' || !name || hl >= 255)
		return;
	char buf[400];
	int n = snprintf(buf, sizeof buf, "%s://%s.:%u", o->scheme, o->host, (unsigned)o->port);
	FZ_ASSERT(n > 0 && (size_t)n < sizeof buf);
	char *copy = fz_dup(buf, (size_t)n);
	csrf_origin back;
	FZ_ASSERT(csrf_origin_parse(copy, (size_t)n, &back) == CSRF_OK);
	FZ_ASSERT(csrf_origin_equal(o, &back) == 1);
	free(copy);
}

/* "scheme://host:port" + tail, parsed back both ways. */
static void check_round_trip(const csrf_origin *o)
{
	static const char *tails[] = {"", "/", "/a/b?c=d#e", "?q", "#f"};
	char buf[400];
	for (size_t t = 0; t < sizeof tails / sizeof tails[0]; t++) {
		int n = snprintf(buf, sizeof buf, "%s://%s:%u%s", o->scheme, o->host, (unsigned)o->port, tails[t]);
		FZ_ASSERT(n > 0 && (size_t)n < sizeof buf);
		char *copy = fz_dup(buf, (size_t)n);
		csrf_origin back;
		if (t == 0) {
			FZ_ASSERT(csrf_origin_parse(copy, (size_t)n, &back) == CSRF_OK);
			FZ_ASSERT(csrf_origin_equal(o, &back) == 1);
		}
		FZ_ASSERT(csrf_url_origin(copy, (size_t)n, &back) == CSRF_OK);
		FZ_ASSERT(csrf_origin_equal(o, &back) == 1);
		free(copy);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fz_dup(data, size);
	csrf_origin o, u;
	csrf_reason r = csrf_origin_parse(s, size, &o);
	FZ_ASSERT(r == CSRF_OK || r == CSRF_MALFORMED || r == CSRF_TOO_LARGE);
	csrf_reason ru = csrf_url_origin(s, size, &u);
	FZ_ASSERT(ru == CSRF_OK || ru == CSRF_MALFORMED || ru == CSRF_TOO_LARGE);
	if (size == 4 && memcmp(s, "null", 4) == 0)
		FZ_ASSERT(r == CSRF_MALFORMED);
	if (r == CSRF_OK) {
		check_fields(&o);
		check_round_trip(&o);
		check_final_dot(&o);
		FZ_ASSERT(ru == CSRF_OK);
		FZ_ASSERT(csrf_origin_equal(&o, &u) == 1);
		/* an origin never has a path, so never ends with '/' */
		FZ_ASSERT(s[size - 1] != '/');
	}
	if (ru == CSRF_OK) {
		check_fields(&u);
		check_round_trip(&u);
	}
	free(s);
	return 0;
}
