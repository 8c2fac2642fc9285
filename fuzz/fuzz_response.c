/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_response.c - the response exchange (src/response.c), as an adapter
 * drives it, with random upstream headers, Content-Type and body in random
 * splits. Input: FLAGS (1 byte: context, method, split sizes) |#| STATUS
 * (3 digits) |#| CONTENT-TYPE |#| HEADERS ("Name: value" lines) |#| BODY.
 * Invariants: begin answers one of its three verdicts, and INJECT only for
 * a context that injects and a method that is not HEAD; the hold never
 * takes more than the prescan's bytes nor more than it is given, says MORE
 * only when it took the whole chunk, and the held bytes are the body's
 * first; csrf_response_headers says for every header keep, drop or
 * replace, replaces only a Content-Security-Policy (and only with the
 * policy on), always drops Content-Length, ETag, Last-Modified and
 * Accept-Ranges, adds at most CSRF_RESPONSE_ADD_MAX of the four headers it
 * may add, with values inside the state; on an error it leaves every
 * header kept and adds nothing; the output minus the inserted elements is
 * the body, byte for byte; the log text is NUL-terminated and bounded.
 */
#include "fuzz_util.h"

#include <stdalign.h>
#include <strings.h>

#define SELF "http://127.0.0.1:8080"
#define HEADERS_MAX 64

static csrf_ctx *ctxs[4];
static alignas(64) unsigned char mem[CSRF_RESPONSE_STATE_MAX];

static csrf_ctx *make_ctx(csrf_mode mode, int csp)
{
	csrf_ctx *ctx;
	uint8_t key[CSRF_KEY_LEN];
	memset(key, 0x42, sizeof key);
	FZ_ASSERT(csrf_ctx_new(&ctx, NULL) == CSRF_OK);
	FZ_ASSERT(csrf_ctx_add_key(ctx, 1, key, 1) == CSRF_OK);
	FZ_ASSERT(csrf_ctx_set_self_origin(ctx, SELF, sizeof SELF - 1) == CSRF_OK);
	FZ_ASSERT(csrf_ctx_add_trusted_origin(ctx, "https://pay.example", 19) == CSRF_OK);
	csrf_ctx_set_mode(ctx, mode);
	csrf_ctx_set_form_action_csp(ctx, csp);
	return ctx;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	ctxs[0] = make_ctx(CSRF_MODE_ORIGIN_OR_TOKEN, 0);
	ctxs[1] = make_ctx(CSRF_MODE_BOTH, 1);
	ctxs[2] = make_ctx(CSRF_MODE_ORIGIN, 0);
	ctxs[3] = make_ctx(CSRF_MODE_TOKEN, 1);
	return 0;
}

typedef struct {
	char out[1 << 17];
	size_t n;
	char pass[1 << 17];
	size_t pass_n;
} sink;

static sink out;

static int on_emit(void *ud, const char *p, size_t n, int inserted)
{
	sink *s = ud;
	FZ_ASSERT(s->n + n <= sizeof s->out);
	memcpy(s->out + s->n, p, n);
	s->n += n;
	if (!inserted) {
		memcpy(s->pass + s->pass_n, p, n);
		s->pass_n += n;
	}
	return 0;
}

static int named(csrf_slice s, const char *name)
{
	return s.len == strlen(name) && strncasecmp(s.ptr, name, s.len) == 0;
}

static int inside_state(csrf_slice s)
{
	return fz_inside(s, (const char *)mem, sizeof mem);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_pieces ps;
	fz_split(data, size, 5, &ps);
	uint8_t flags = ps.p[0].len ? (uint8_t)ps.p[0].ptr[0] : 0;
	const csrf_ctx *ctx = ctxs[flags & 3];
	int head = (flags >> 2) & 1;
	size_t split = 1 + ((flags >> 3) & 31) * 37;
	unsigned status = 200;
	if (ps.p[1].len == 3) {
		status = 0;
		for (size_t i = 0; i < 3; i++)
			status = status * 10 + (unsigned)((unsigned char)ps.p[1].ptr[i] % 10);
	}
	const fz_piece *ct = &ps.p[2], *body = &ps.p[4];
	if (body->len > sizeof out.pass / 2) {
		fz_free(&ps);
		return 0;
	}

	/* the header lines */
	csrf_header hs[HEADERS_MAX];
	size_t n = 0;
	const char *ce = NULL;
	size_t ce_len = 0;
	for (const char *p = ps.p[3].ptr, *end = p + ps.p[3].len; p < end && n < HEADERS_MAX;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *stop = eol ? eol : end;
		const char *colon = memchr(p, ':', (size_t)(stop - p));
		if (colon) {
			hs[n].name = (csrf_slice){p, (size_t)(colon - p)};
			const char *v = colon + 1;
			while (v < stop && *v == ' ')
				v++;
			hs[n].value = (csrf_slice){v, (size_t)(stop - v)};
			if (named(hs[n].name, "Content-Encoding")) {
				ce = hs[n].value.ptr;
				ce_len = hs[n].value.len;
			}
			n++;
		}
		p = eol ? eol + 1 : end;
	}

	const char *method = head ? "HEAD" : "GET";
	csrf_response_verdict v =
	    csrf_response_begin(ctx, method, strlen(method), status, ct->len ? ct->ptr : NULL, ct->len, ce, ce_len);
	FZ_ASSERT(v == CSRF_RESPONSE_PASS || v == CSRF_RESPONSE_INJECT || v == CSRF_RESPONSE_COMPRESSED);
	if (v != CSRF_RESPONSE_INJECT) {
		fz_free(&ps);
		return 0;
	}
	FZ_ASSERT(csrf_ctx_injects(ctx) && !head);

	csrf_response *resp;
	FZ_ASSERT(csrf_response_init(mem, sizeof mem, ctx, ct->len ? ct->ptr : NULL, ct->len, &resp) == CSRF_OK);
	size_t at = 0;
	csrf_charset_verdict cv;
	for (;;) {
		size_t k = body->len - at < split ? body->len - at : split, used = 0;
		int complete = at + k == body->len;
		cv = csrf_response_hold(resp, body->ptr + at, k, complete, &used);
		FZ_ASSERT(used <= k);
		FZ_ASSERT(cv != CSRF_CHARSET_MORE || (used == k && !complete));
		at += used;
		if (cv != CSRF_CHARSET_MORE)
			break;
	}
	csrf_slice held = csrf_response_held(resp);
	FZ_ASSERT(held.len <= CSRF_CHARSET_PRESCAN_MAX && held.len == at);
	FZ_ASSERT(held.len == 0 || memcmp(held.ptr, body->ptr, held.len) == 0);

	char log[CSRF_RESPONSE_LOG_MAX];
	if (cv == CSRF_CHARSET_INJECT) {
		csrf_request req;
		csrf_request_init(&req);
		req.method = (csrf_slice){"GET", 3};
		req.target = (csrf_slice){"/", 1};
		req.scheme = (csrf_slice){"http", 4};
		unsigned char action[HEADERS_MAX];
		csrf_slice value[HEADERS_MAX];
		csrf_header add[CSRF_RESPONSE_ADD_MAX];
		size_t n_add = 99;
		csrf_reason r = csrf_response_headers(resp, &req, hs, n, action, value, add, &n_add);
		for (size_t i = 0; i < n; i++) {
			FZ_ASSERT(action[i] <= CSRF_HEADER_REPLACE);
			if (r != CSRF_OK)
				FZ_ASSERT(action[i] == CSRF_HEADER_KEEP);
			if (action[i] == CSRF_HEADER_REPLACE)
				FZ_ASSERT(named(hs[i].name, "Content-Security-Policy") && inside_state(value[i]));
			if (r == CSRF_OK && (named(hs[i].name, "Content-Length") || named(hs[i].name, "ETag") ||
			                     named(hs[i].name, "Last-Modified") || named(hs[i].name, "Accept-Ranges")))
				FZ_ASSERT(action[i] == CSRF_HEADER_DROP);
		}
		FZ_ASSERT(n_add <= CSRF_RESPONSE_ADD_MAX);
		if (r != CSRF_OK)
			FZ_ASSERT(n_add == 0);
		for (size_t i = 0; i < n_add; i++) {
			FZ_ASSERT(named(add[i].name, "Set-Cookie") || named(add[i].name, "Vary") ||
			          named(add[i].name, "Cache-Control") || named(add[i].name, "Content-Security-Policy"));
			FZ_ASSERT(add[i].value.ptr != NULL);
		}
		if (r == CSRF_OK) {
			out.n = out.pass_n = 0;
			FZ_ASSERT(csrf_response_feed(resp, held.ptr, held.len, on_emit, &out) == CSRF_OK);
			while (at < body->len) {
				size_t k = body->len - at < split ? body->len - at : split;
				FZ_ASSERT(csrf_response_feed(resp, body->ptr + at, k, on_emit, &out) == CSRF_OK);
				at += k;
			}
			unsigned st = 0;
			FZ_ASSERT(csrf_response_end(resp, on_emit, &out, &st) == CSRF_OK);
			FZ_ASSERT(out.pass_n == body->len && memcmp(out.pass, body->ptr, body->len) == 0);
		}
	}
	size_t ll = csrf_response_log(resp, log, sizeof log);
	FZ_ASSERT(ll < sizeof log && ll == strlen(log));
	csrf_response_wipe(resp);
	fz_free(&ps);
	return 0;
}
