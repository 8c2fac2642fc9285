/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * micro.c - per-operation cost of libcsrf's token issue, verify and a whole
 * csrf_check, next to the bare MAC it is built on (the floor): the same
 * HMAC-SHA256 over the same bytes, once through the precomputed states the
 * library keeps and once through OpenSSL's one-shot HMAC(). Prints one JSON
 * object per line: {"impl":..., "op":..., "ns":...}, the median of ROUNDS
 * rounds of ITERS operations each, all operations interleaved in batches
 * of BATCH within each round.
 * "verify" binds the token to a session (18 bytes), as an application with
 * a session cookie configured does; "verify_nosession" binds none, the
 * default of the nginx module and csrf-cgi; "cookie_decode" checks the
 * signed secret cookie as a request without a caller's secret does.
 * "count" is what counting adds to a request of an adapter with counters:
 * csrf_metrics_count_check and csrf_metrics_count_page (relaxed atomic
 * adds, one thread: the uncontended cost).
 * Usage: csrf-bench-micro [ROUNDS ITERS]
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#define MAX_ROUNDS 64
#define BATCH 500

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static volatile unsigned sink;

typedef struct {
	csrf_ctx *ctx;
	uint8_t secret[CSRF_SECRET_LEN];
	char token[CSRF_TOKEN_LEN + 1];
	char token_nosession[CSRF_TOKEN_LEN + 1];
	char cookie[CSRF_SECRET_COOKIE_LEN + 1];
	uint8_t key[CSRF_KEY_LEN];
	csrfi_mac_key mac;
	uint8_t msg[64];
	csrf_request req;
	char body[512];
} bench_state;

typedef void (*op_fn)(bench_state *);

static void op_mac_floor(bench_state *s)
{
	uint8_t out[CSRF_MAC_LEN];
	csrfi_mac(&s->mac, s->msg, sizeof s->msg, NULL, 0, NULL, 0, NULL, 0, out);
	sink += out[0];
}

static void op_hmac_oneshot(bench_state *s)
{
	uint8_t out[EVP_MAX_MD_SIZE];
	unsigned len = 0;
	HMAC(EVP_sha256(), s->key, sizeof s->key, s->msg, sizeof s->msg, out, &len);
	sink += out[0];
}

static void op_issue(bench_state *s)
{
	char tok[CSRF_TOKEN_LEN + 1];
	if (csrf_token_issue(s->ctx, s->secret, "session-0123456789", 18, 0, tok, sizeof tok) != CSRF_OK)
		abort();
	sink += (unsigned char)tok[0];
}

static void op_verify(bench_state *s)
{
	if (csrf_token_verify(s->ctx, s->secret, "session-0123456789", 18, s->token, strlen(s->token), 0) != CSRF_OK)
		abort();
	sink++;
}

static void op_verify_nosession(bench_state *s)
{
	if (csrf_token_verify(s->ctx, s->secret, NULL, 0, s->token_nosession, strlen(s->token_nosession), 0) != CSRF_OK)
		abort();
	sink++;
}

static void op_cookie_decode(bench_state *s)
{
	uint8_t secret[CSRF_SECRET_LEN];
	if (csrf_secret_cookie_decode(s->ctx, s->cookie, CSRF_SECRET_COOKIE_LEN, secret) != CSRF_OK)
		abort();
	sink += secret[0];
}

static void op_check(bench_state *s)
{
	csrf_result r = csrf_check(s->ctx, &s->req);
	if (!r.allowed || r.reason != CSRF_OK)
		abort();
	sink++;
}

static csrf_metrics counters;

static void op_count(bench_state *s)
{
	csrf_result r = {1, CSRF_ORIGIN_VERIFIED, 0, 0};
	(void)s;
	csrf_metrics_count_check(&counters, &r);
	csrf_metrics_count_page(&counters, 21, 0);
	sink++;
}

typedef struct {
	const char *impl;
	const char *op;
	op_fn fn;
	double samples[MAX_ROUNDS];
} bench_row;

static csrf_slice sl(const char *p)
{
	csrf_slice v = {p, strlen(p)};
	return v;
}

int main(int argc, char **argv)
{
	int rounds = argc > 2 ? (int)strtol(argv[1], NULL, 10) : 7;
	long iters = argc > 2 ? strtol(argv[2], NULL, 10) : 200000;
	if (rounds < 1 || rounds > MAX_ROUNDS || iters < 1) {
		fprintf(stderr, "usage: %s [ROUNDS(1..%d) ITERS]\n", argv[0], MAX_ROUNDS);
		return 2;
	}
	static bench_state s;
	if (csrf_ctx_new(&s.ctx, NULL) != CSRF_OK || csrf_ctx_set_self_origin(s.ctx, "https://app.example", 19) ||
	    csrf_ctx_generate_key(s.ctx) != CSRF_OK || csrf_secret_new(s.secret) != CSRF_OK ||
	    csrf_random(s.key, sizeof s.key) != CSRF_OK || csrf_random(s.msg, sizeof s.msg) != CSRF_OK)
		return 1;
	csrfi_mac_init(&s.mac, s.key, sizeof s.key);
	if (csrf_token_issue(s.ctx, s.secret, "session-0123456789", 18, 0, s.token, sizeof s.token) != CSRF_OK)
		return 1;
	if (csrf_token_issue(s.ctx, s.secret, NULL, 0, 0, s.token_nosession, sizeof s.token_nosession) != CSRF_OK ||
	    csrf_secret_cookie_encode(s.ctx, s.secret, s.cookie, sizeof s.cookie) != CSRF_OK)
		return 1;
	char field[CSRF_FIELD_NAME_MAX + 1];
	if (csrf_field_name(s.ctx, s.secret, field, sizeof field) != CSRF_OK)
		return 1;
	/* A realistic form post: a few fields, the token last. */
	snprintf(s.body, sizeof s.body, "story=42&type=y&comment=nice+one&%s=%s", field, s.token);
	s.req.method = sl("POST");
	s.req.target = sl("/vote");
	s.req.scheme = sl("https");
	s.req.host = sl("app.example");
	s.req.origin = sl("https://app.example");
	s.req.referer = sl("https://app.example/stories/42");
	s.req.sec_fetch_site = sl("same-origin");
	s.req.cookie = sl("session=session-0123456789; theme=dark; _ga=GA1.2.3");
	s.req.content_type = sl("application/x-www-form-urlencoded");
	s.req.body = sl(s.body);
	s.req.secret = s.secret;
	s.req.session_id = sl("session-0123456789");

	bench_row rows[] = {
	    {"libcsrf", "mac_floor", op_mac_floor, {0}},
	    {"openssl", "hmac_oneshot", op_hmac_oneshot, {0}},
	    {"libcsrf", "issue", op_issue, {0}},
	    {"libcsrf", "verify", op_verify, {0}},
	    {"libcsrf", "check", op_check, {0}},
	    {"libcsrf", "count", op_count, {0}},
	    {"libcsrf", "verify_nosession", op_verify_nosession, {0}},
	    {"libcsrf", "cookie_decode", op_cookie_decode, {0}},
	};
	csrf_metrics_init(&counters, 0);
	size_t n = sizeof rows / sizeof rows[0];
	for (size_t i = 0; i < n; i++) /* warm-up */
		for (long k = 0; k < iters / 10 + 1; k++)
			rows[i].fn(&s);
	/* Each round runs every operation ITERS times in batches of BATCH,
	 * the operations taking turns batch by batch, so that a change in
	 * the machine's load during a round weighs on every row alike and
	 * the ratios between rows (verify to the floor) do not drift with
	 * it; the clock is read once a batch. */
	for (int r = 0; r < rounds; r++) {
		double total[sizeof rows / sizeof rows[0]] = {0};
		for (long done = 0; done < iters; done += BATCH) {
			long b = iters - done < BATCH ? iters - done : BATCH;
			for (size_t i = 0; i < n; i++) {
				double t0 = now_ns();
				for (long k = 0; k < b; k++)
					rows[i].fn(&s);
				total[i] += now_ns() - t0;
			}
		}
		for (size_t i = 0; i < n; i++)
			rows[i].samples[r] = total[i] / (double)iters;
	}
	for (size_t i = 0; i < n; i++) {
		qsort(rows[i].samples, (size_t)rounds, sizeof(double), cmp_double);
		printf("{\"impl\":\"%s\",\"op\":\"%s\",\"ns\":%.1f}\n", rows[i].impl, rows[i].op,
		       rows[i].samples[rounds / 2]);
	}
	csrf_ctx_free(s.ctx);
	return 0;
}
