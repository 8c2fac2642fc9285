/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_token.c - token decoding and verification, and the signed secret
 * cookie. Input: SECRET |#| SID |#| TOKEN |#| MUTATION.
 * Invariants: a random token or cookie never verifies (under keys the
 * harness never issues with); an issued token
 * (version 3, masked and unmasked; version 4, unmasked as issued, 51
 * characters, two issues different) verifies and fails after any one-byte change,
 * truncation or extension, for another session, another secret or a
 * context with another key under the same id, and once older than the
 * max age; an encoded secret cookie decodes to the same secret and fails
 * after any one-byte change; a token and a cookie issued at version 2
 * (issue held there through an upgrade) verify and fail alike, and the
 * version byte of one on the other's tag is token_invalid (3 and 4: refused);
 * a version 4 token masked is malformed; the derived
 * field name has its documented shape.
 */
#include "fuzz_util.h"

#include <openssl/crypto.h>

#define NOW 1700000000

static csrf_ctx *ctx, *ctx_other, *ctx_age, *ctx_v2, *ctx_v4;

static void make_ctx(csrf_ctx **c, uint8_t fill, uint32_t max_age)
{
	uint8_t key[CSRF_KEY_LEN];
	FZ_ASSERT(csrf_ctx_new(c, NULL) == CSRF_OK);
	memset(key, fill, sizeof key);
	FZ_ASSERT(csrf_ctx_add_key(*c, 1, key, 0) == CSRF_OK);
	memset(key, fill + 1, sizeof key);
	FZ_ASSERT(csrf_ctx_add_key(*c, 7, key, 1) == CSRF_OK);
	if (max_age)
		csrf_ctx_set_max_age(*c, max_age);
	/* version 3, masked: the checks below of the masked and unmasked
	 * forms (version 4, the default, is ctx_v4's) */
	FZ_ASSERT(csrf_ctx_set_issue_version(*c, 3) == CSRF_OK);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	make_ctx(&ctx, 0x11, 0);
	make_ctx(&ctx_other, 0x55, 0);
	make_ctx(&ctx_age, 0x11, 60);
	make_ctx(&ctx_v2, 0x11, 0); /* ctx's keys, issuing version 2 */
	FZ_ASSERT(csrf_ctx_set_issue_version(ctx_v2, 2) == CSRF_OK);
	make_ctx(&ctx_v4, 0x11, 0); /* ctx's keys, issuing version 4 */
	FZ_ASSERT(csrf_ctx_set_issue_version(ctx_v4, 4) == CSRF_OK);
	return 0;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static int b64val(char c)
{
	const char *p = c ? strchr(b64, c) : NULL;
	return p ? (int)(p - b64) : -1;
}

/* Decodes n base64url characters (no padding; n % 4 != 1) into
 * n * 3 / 4 bytes; the bits after the last byte must be zero. */
static void b64_decode(const char *in, size_t n, uint8_t *out)
{
	FZ_ASSERT(n % 4 != 1);
	for (size_t i = 0, j = 0; i < n; i += 4, j += 3) {
		size_t m = n - i < 4 ? n - i : 4; /* characters in this group */
		uint32_t v = 0;
		for (size_t k = 0; k < 4; k++) {
			int d = k < m ? b64val(in[i + k]) : 0;
			FZ_ASSERT(d >= 0);
			v = v << 6 | (uint32_t)d;
		}
		FZ_ASSERT((v & (0xffffffu >> (8 * (m - 1)))) == 0 || m == 4);
		for (size_t k = 0; k + 1 < m; k++)
			out[j + k] = (uint8_t)(v >> (16 - 8 * k));
	}
}

/* Encodes n bytes as base64url without padding: (4n + 2) / 3 characters. */
static void b64_encode(const uint8_t *in, size_t n, char *out)
{
	for (size_t i = 0, j = 0; i < n; i += 3, j += 4) {
		size_t m = n - i < 3 ? n - i : 3; /* bytes in this group */
		uint32_t v = 0;
		for (size_t k = 0; k < 3; k++)
			v = v << 8 | (k < m ? in[i + k] : 0u);
		for (size_t k = 0; k <= m; k++)
			out[j + k] = b64[(v >> (18 - 6 * k)) & 63];
	}
}

/* verify on an exactly-sized heap copy, so an over-read is caught */
static csrf_reason verify(const csrf_ctx *c, const uint8_t *secret, const char *sid, size_t sid_len, const char *tok,
                          size_t n, int64_t now)
{
	char *copy = fz_dup(tok, n);
	csrf_reason r = csrf_token_verify(c, secret, sid, sid_len, copy, n, now);
	free(copy);
	return r;
}

static int verify_result_ok(csrf_reason r)
{
	return r == CSRF_OK || r == CSRF_TOKEN_MALFORMED || r == CSRF_UNKNOWN_KEY || r == CSRF_TOKEN_INVALID ||
	       r == CSRF_TOKEN_SESSION || r == CSRF_TOKEN_EXPIRED;
}

/* One character of tok replaced: pos and the new character from mut. */
static void check_one_byte_changes(const uint8_t *secret, const char *sid, size_t sid_len, const char *tok, size_t n,
                                   const fz_piece *mut)
{
	char *t = fz_dup(tok, n);
	for (size_t i = 0; i + 1 < mut->len || i == 0; i += 2) {
		size_t pos = mut->len > i ? (unsigned char)mut->ptr[i] % n : i % n;
		char c = mut->len > i + 1 ? mut->ptr[i + 1] : (char)(t[pos] ^ 1);
		if (c == t[pos])
			c = (char)(c ^ 0x20);
		char saved = t[pos];
		t[pos] = c;
		FZ_ASSERT(verify(ctx, secret, sid, sid_len, t, n, NOW) != CSRF_OK);
		t[pos] = saved;
		if (i > 32)
			break;
	}
	/* and every position with a fixed change, so no byte is unchecked */
	for (size_t pos = 0; pos < n; pos++) {
		char saved = t[pos];
		t[pos] = saved == 'A' ? 'B' : 'A';
		FZ_ASSERT(verify(ctx, secret, sid, sid_len, t, n, NOW) != CSRF_OK);
		t[pos] = saved;
	}
	free(t);
}

/* What ctx says of tok (n characters: masked, or version 4 unmasked),
 * whose version byte is from, with that byte set to to (the bytes after
 * it the same), unmasked. */
static csrf_reason verify_as(const uint8_t *secret, const char *sid, size_t sid_len, const char *tok, size_t n,
                             uint8_t from, uint8_t to)
{
	uint8_t buf[2 * CSRF_TOKEN_RAW_LEN];
	uint8_t *raw = buf;
	char unm[CSRF_TOKEN_UNMASKED_LEN];
	b64_decode(tok, n, buf);
	if (n == CSRF_TOKEN_LEN) {
		raw = buf + CSRF_TOKEN_RAW_LEN;
		for (size_t i = 0; i < CSRF_TOKEN_RAW_LEN; i++)
			raw[i] ^= buf[i];
	}
	FZ_ASSERT(raw[0] == from);
	raw[0] = to;
	b64_encode(raw, CSRF_TOKEN_RAW_LEN, unm);
	return verify(ctx, secret, sid, sid_len, unm, sizeof unm, NOW);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_pieces ps;
	fz_split(data, size, 4, &ps);
	uint8_t secret[CSRF_SECRET_LEN] = {0};
	memcpy(secret, ps.p[0].ptr, ps.p[0].len < sizeof secret ? ps.p[0].len : sizeof secret);
	const char *sid = ps.p[1].ptr;
	size_t sid_len = ps.p[1].len;
	const fz_piece *rnd = &ps.p[2], *mut = &ps.p[3];

	/* Random input never verifies, whatever its length and alphabet,
	 * under keys nothing here issues with (ctx_other's). Under ctx's it
	 * may: libFuzzer keeps the operands of compared bytes (memcmp's up
	 * to 64) as a dictionary, so a 51-character token issued below for
	 * this secret and session (same NOW, any nonce) comes back as the
	 * random piece of a later input; a genuine token then, only its
	 * answer's range is checked. */
	csrf_reason r = csrf_token_verify(ctx_other, secret, sid, sid_len, rnd->ptr, rnd->len, NOW);
	FZ_ASSERT(verify_result_ok(r) && r != CSRF_OK);
	r = csrf_token_verify(ctx, secret, sid, sid_len, rnd->ptr, rnd->len, NOW);
	FZ_ASSERT(verify_result_ok(r));
	uint8_t got[CSRF_SECRET_LEN];
	r = csrf_secret_cookie_decode(ctx_other, rnd->ptr, rnd->len, got);
	FZ_ASSERT(r == CSRF_SECRET_INVALID || r == CSRF_UNKNOWN_KEY);
	r = csrf_secret_cookie_decode(ctx, rnd->ptr, rnd->len, got);
	FZ_ASSERT(r == CSRF_OK || r == CSRF_SECRET_INVALID || r == CSRF_UNKNOWN_KEY);

	/* Issue, verify, tamper. */
	char tok[CSRF_TOKEN_LEN + 1], tok2[CSRF_TOKEN_LEN + 1];
	FZ_ASSERT(csrf_token_issue(ctx, secret, sid, sid_len, NOW, tok, sizeof tok) == CSRF_OK);
	FZ_ASSERT(strlen(tok) == CSRF_TOKEN_LEN);
	for (size_t i = 0; i < CSRF_TOKEN_LEN; i++)
		FZ_ASSERT(b64val(tok[i]) >= 0);
	FZ_ASSERT(csrf_token_issue(ctx, secret, sid, sid_len, NOW, tok2, CSRF_TOKEN_LEN) == CSRF_ERR_BUFFER);
	FZ_ASSERT(csrf_token_issue(ctx, secret, sid, sid_len, NOW, tok2, sizeof tok2) == CSRF_OK);
	FZ_ASSERT(memcmp(tok, tok2, CSRF_TOKEN_LEN) != 0);
	FZ_ASSERT(verify(ctx, secret, sid, sid_len, tok, CSRF_TOKEN_LEN, NOW) == CSRF_OK);
	FZ_ASSERT(verify(ctx, secret, sid, sid_len, tok2, CSRF_TOKEN_LEN, NOW) == CSRF_OK);
	check_one_byte_changes(secret, sid, sid_len, tok, CSRF_TOKEN_LEN, mut);

	size_t cut = mut->len ? (unsigned char)mut->ptr[0] % CSRF_TOKEN_LEN : CSRF_TOKEN_LEN - 1;
	FZ_ASSERT(verify(ctx, secret, sid, sid_len, tok, cut, NOW) != CSRF_OK);
	char longer[CSRF_TOKEN_LEN + 1];
	memcpy(longer, tok, CSRF_TOKEN_LEN);
	longer[CSRF_TOKEN_LEN] = 'A';
	FZ_ASSERT(verify(ctx, secret, sid, sid_len, longer, sizeof longer, NOW) != CSRF_OK);

	/* Bound to session, secret and key. */
	char *sid2 = malloc(sid_len + 1);
	FZ_ASSERT(sid2 != NULL);
	memcpy(sid2, sid, sid_len);
	sid2[sid_len] = 'x';
	FZ_ASSERT(verify(ctx, secret, sid2, sid_len + 1, tok, CSRF_TOKEN_LEN, NOW) == CSRF_TOKEN_SESSION);
	if (sid_len > 0)
		FZ_ASSERT(verify(ctx, secret, sid2, sid_len - 1, tok, CSRF_TOKEN_LEN, NOW) == CSRF_TOKEN_SESSION);
	free(sid2);
	uint8_t other[CSRF_SECRET_LEN];
	memcpy(other, secret, sizeof other);
	other[mut->len ? (unsigned char)mut->ptr[0] % CSRF_SECRET_LEN : 0] ^= 0x80;
	FZ_ASSERT(verify(ctx, other, sid, sid_len, tok, CSRF_TOKEN_LEN, NOW) != CSRF_OK);
	FZ_ASSERT(verify(ctx_other, secret, sid, sid_len, tok, CSRF_TOKEN_LEN, NOW) != CSRF_OK);

	/* Max age, and an issue time too far in the future. */
	FZ_ASSERT(verify(ctx_age, secret, sid, sid_len, tok, CSRF_TOKEN_LEN, NOW + 59) == CSRF_OK);
	FZ_ASSERT(verify(ctx_age, secret, sid, sid_len, tok, CSRF_TOKEN_LEN, NOW + 61) == CSRF_TOKEN_EXPIRED);
	FZ_ASSERT(verify(ctx, secret, sid, sid_len, tok, CSRF_TOKEN_LEN, NOW - 3600) == CSRF_TOKEN_EXPIRED);

	/* The unmasked form (pad removed) verifies and is as tamper-evident. */
	uint8_t raw[2 * CSRF_TOKEN_RAW_LEN];
	b64_decode(tok, CSRF_TOKEN_LEN, raw);
	for (size_t i = 0; i < CSRF_TOKEN_RAW_LEN; i++)
		raw[CSRF_TOKEN_RAW_LEN + i] ^= raw[i];
	char unm[CSRF_TOKEN_UNMASKED_LEN];
	b64_encode(raw + CSRF_TOKEN_RAW_LEN, CSRF_TOKEN_RAW_LEN, unm);
	FZ_ASSERT(verify(ctx, secret, sid, sid_len, unm, sizeof unm, NOW) == CSRF_OK);
	check_one_byte_changes(secret, sid, sid_len, unm, sizeof unm, mut);

	/* Version 3's byte set to 2 (the bytes after it the same): the tag
	 * is not version 2's. Then a token issued at version 2 (pages of a
	 * fleet held there): it verifies, as tamper-evident, and its byte set
	 * to 3 is not version 3's. */
	FZ_ASSERT(verify_as(secret, sid, sid_len, tok, CSRF_TOKEN_LEN, 3, 2) == CSRF_TOKEN_INVALID);
	FZ_ASSERT(csrf_token_issue(ctx_v2, secret, sid, sid_len, NOW, tok2, sizeof tok2) == CSRF_OK);
	FZ_ASSERT(verify(ctx, secret, sid, sid_len, tok2, CSRF_TOKEN_LEN, NOW) == CSRF_OK);
	check_one_byte_changes(secret, sid, sid_len, tok2, CSRF_TOKEN_LEN, mut);
	FZ_ASSERT(verify_as(secret, sid, sid_len, tok2, CSRF_TOKEN_LEN, 2, 3) == CSRF_TOKEN_INVALID);

	/* Version 4 (ctx_v4, ctx's keys): 51 characters, two issues differ,
	 * both verify (on ctx too, which issues 3), as tamper-evident; cut,
	 * grown, of another session, secret or key, aged or ahead refused;
	 * masked malformed; its version byte set to 3, or a version 3
	 * token's set to 4, refused. */
	char v4[CSRF_TOKEN_UNMASKED_LEN + 1], v4b[CSRF_TOKEN_UNMASKED_LEN + 1];
	FZ_ASSERT(csrf_token_issue(ctx_v4, secret, sid, sid_len, NOW, v4, CSRF_TOKEN_UNMASKED_LEN) == CSRF_ERR_BUFFER);
	FZ_ASSERT(csrf_token_issue(ctx_v4, secret, sid, sid_len, NOW, v4, sizeof v4) == CSRF_OK);
	FZ_ASSERT(csrf_token_issue(ctx_v4, secret, sid, sid_len, NOW, v4b, sizeof v4b) == CSRF_OK);
	FZ_ASSERT(strlen(v4) == CSRF_TOKEN_UNMASKED_LEN && strlen(v4b) == CSRF_TOKEN_UNMASKED_LEN);
	for (size_t i = 0; i < CSRF_TOKEN_UNMASKED_LEN; i++)
		FZ_ASSERT(b64val(v4[i]) >= 0);
	FZ_ASSERT(memcmp(v4, v4b, CSRF_TOKEN_UNMASKED_LEN) != 0);
	FZ_ASSERT(verify(ctx, secret, sid, sid_len, v4, CSRF_TOKEN_UNMASKED_LEN, NOW) == CSRF_OK);
	FZ_ASSERT(verify(ctx_v4, secret, sid, sid_len, v4b, CSRF_TOKEN_UNMASKED_LEN, NOW) == CSRF_OK);
	check_one_byte_changes(secret, sid, sid_len, v4, CSRF_TOKEN_UNMASKED_LEN, mut);
	FZ_ASSERT(verify(ctx, secret, sid, sid_len, v4, cut % CSRF_TOKEN_UNMASKED_LEN, NOW) == CSRF_TOKEN_MALFORMED);
	memcpy(longer, v4, CSRF_TOKEN_UNMASKED_LEN);
	longer[CSRF_TOKEN_UNMASKED_LEN] = 'A';
	FZ_ASSERT(verify(ctx, secret, sid, sid_len, longer, CSRF_TOKEN_UNMASKED_LEN + 1, NOW) == CSRF_TOKEN_MALFORMED);
	FZ_ASSERT(verify(ctx, other, sid, sid_len, v4, CSRF_TOKEN_UNMASKED_LEN, NOW) != CSRF_OK);
	FZ_ASSERT(verify(ctx_other, secret, sid, sid_len, v4, CSRF_TOKEN_UNMASKED_LEN, NOW) != CSRF_OK);
	FZ_ASSERT(verify(ctx_age, secret, sid, sid_len, v4, CSRF_TOKEN_UNMASKED_LEN, NOW + 60) == CSRF_OK);
	FZ_ASSERT(verify(ctx_age, secret, sid, sid_len, v4, CSRF_TOKEN_UNMASKED_LEN, NOW + 61) == CSRF_TOKEN_EXPIRED);
	FZ_ASSERT(verify(ctx, secret, sid, sid_len, v4, CSRF_TOKEN_UNMASKED_LEN, NOW - 301) == CSRF_TOKEN_EXPIRED);
	sid2 = malloc(sid_len + 1);
	FZ_ASSERT(sid2 != NULL);
	memcpy(sid2, sid, sid_len);
	sid2[sid_len] = 'x';
	FZ_ASSERT(verify(ctx, secret, sid2, sid_len + 1, v4, CSRF_TOKEN_UNMASKED_LEN, NOW) == CSRF_TOKEN_SESSION);
	free(sid2);
	b64_decode(v4, CSRF_TOKEN_UNMASKED_LEN, raw + CSRF_TOKEN_RAW_LEN);
	FZ_ASSERT(raw[CSRF_TOKEN_RAW_LEN] == 4);
	for (size_t i = 0; i < CSRF_TOKEN_RAW_LEN; i++) {
		raw[i] = (uint8_t)(mut->len ? mut->ptr[i % mut->len] : (char)i);
		raw[CSRF_TOKEN_RAW_LEN + i] ^= raw[i];
	}
	b64_encode(raw, sizeof raw, tok2);
	FZ_ASSERT(verify(ctx, secret, sid, sid_len, tok2, CSRF_TOKEN_LEN, NOW) == CSRF_TOKEN_MALFORMED);
	r = verify_as(secret, sid, sid_len, v4, CSRF_TOKEN_UNMASKED_LEN, 4, 3);
	FZ_ASSERT(r == CSRF_TOKEN_SESSION || r == CSRF_TOKEN_INVALID);
	r = verify_as(secret, sid, sid_len, tok, CSRF_TOKEN_LEN, 3, 4);
	FZ_ASSERT(r == CSRF_TOKEN_SESSION || r == CSRF_TOKEN_INVALID);

	/* Secret cookie, of version 3 and (issued by ctx_v2) of version 2. */
	char ck[CSRF_SECRET_COOKIE_LEN + 1];
	FZ_ASSERT(csrf_secret_cookie_encode(mut->len % 2 ? ctx_v2 : ctx, secret, ck, sizeof ck) == CSRF_OK);
	FZ_ASSERT(strlen(ck) == CSRF_SECRET_COOKIE_LEN);
	char *ckc = fz_dup(ck, CSRF_SECRET_COOKIE_LEN);
	FZ_ASSERT(csrf_secret_cookie_decode(ctx, ckc, CSRF_SECRET_COOKIE_LEN, got) == CSRF_OK);
	FZ_ASSERT(CRYPTO_memcmp(got, secret, sizeof got) == 0);
	FZ_ASSERT(csrf_secret_cookie_decode(ctx_other, ckc, CSRF_SECRET_COOKIE_LEN, got) != CSRF_OK);
	for (size_t pos = 0; pos < CSRF_SECRET_COOKIE_LEN; pos++) {
		char saved = ckc[pos];
		ckc[pos] = (char)(mut->len ? mut->ptr[pos % mut->len] : 'A');
		if (ckc[pos] == saved)
			ckc[pos] = saved == 'A' ? 'B' : 'A';
		FZ_ASSERT(csrf_secret_cookie_decode(ctx, ckc, CSRF_SECRET_COOKIE_LEN, got) != CSRF_OK);
		ckc[pos] = saved;
	}
	FZ_ASSERT(csrf_secret_cookie_decode(ctx, ckc, CSRF_SECRET_COOKIE_LEN - 1, got) != CSRF_OK);
	free(ckc);

	/* Field name: "csrf_" and 12 lower-case hex, the same every time. */
	char fname[CSRF_FIELD_NAME_MAX + 1], fname2[CSRF_FIELD_NAME_MAX + 1];
	FZ_ASSERT(csrf_field_name(ctx, secret, fname, sizeof fname) == CSRF_OK);
	FZ_ASSERT(strlen(fname) == 17 && memcmp(fname, "csrf_", 5) == 0);
	for (size_t i = 5; i < 17; i++)
		FZ_ASSERT((fname[i] >= '0' && fname[i] <= '9') || (fname[i] >= 'a' && fname[i] <= 'f'));
	FZ_ASSERT(csrf_field_name(ctx, secret, fname2, sizeof fname2) == CSRF_OK);
	FZ_ASSERT(strcmp(fname, fname2) == 0);

	fz_free(&ps);
	return 0;
}
