/* SPDX-License-Identifier: BSD-2-Clause */
/* test_token.c - src/token.c: tokens bound to a session (version 4 as
 * issued by default; versions 3 and 2, masked, as issued on request, and
 * every version a page may still carry), their rejects, expiry, key
 * rotation, the signed secret cookie, derived field
 * names, and that the hot path allocates nothing. No test prints a token,
 * a secret or a key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#if !(defined(CSRF_CRYPTO_BUILTIN) && CSRF_CRYPTO_BUILTIN) && !(defined(CSRF_CRYPTO_MBEDTLS) && CSRF_CRYPTO_MBEDTLS)
#define WITH_OPENSSL 1
#include <openssl/rand.h>
#endif

#include "internal.h"
#include "testutil.h"

#define T0 1700000000 /* a fixed "now" for issue times */

static const uint8_t key1[CSRF_KEY_LEN] = {0x11, 0x22, 0x33, 0x44, 1};
static const uint8_t key2[CSRF_KEY_LEN] = {0x55, 0x66, 0x77, 0x88, 2};
static const uint8_t secret_a[CSRF_SECRET_LEN] = {0xa1, 0xa2, 0xa3, 0xa4};
static const uint8_t secret_b[CSRF_SECRET_LEN] = {0xb1, 0xb2, 0xb3, 0xb4};

#define SID_A "session-a"
#define SID_B "session-b"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* A context of the default issue version (4) with key (id), or none. */
static csrf_ctx *ctx_v4(uint32_t id, const uint8_t *key)
{
	csrf_ctx *ctx = NULL;
	assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
	if (key)
		assert_int_equal(csrf_ctx_add_key(ctx, id, key, 1), CSRF_OK);
	return ctx;
}

/* A context issuing version 3, masked: the tests written for it keep
 * testing the tokens a fleet upgrading from a release before version 4
 * issues (the version 4 tests are ctx_v4's). */
static csrf_ctx *ctx_with_key(uint32_t id, const uint8_t *key)
{
	csrf_ctx *ctx = ctx_v4(id, key);
	assert_int_equal(csrf_ctx_set_issue_version(ctx, 3), CSRF_OK);
	return ctx;
}

static void issue(const csrf_ctx *ctx, const uint8_t *secret, const char *sid, int64_t now,
                  char out[CSRF_TOKEN_LEN + 1])
{
	assert_int_equal(csrf_token_issue(ctx, secret, sid, sid ? strlen(sid) : 0, now, out, CSRF_TOKEN_LEN + 1),
	                 CSRF_OK);
	assert_int_equal(strlen(out), CSRF_TOKEN_LEN);
}

static csrf_reason verify(const csrf_ctx *ctx, const uint8_t *secret, const char *sid, const char *tok, size_t len,
                          int64_t now)
{
	return csrf_token_verify(ctx, secret, sid, sid ? strlen(sid) : 0, tok, len, now);
}

/* verify for secret_a and SID_A at T0, the token flush against a guard
 * page so that a read past its end faults. */
static csrf_reason verify_guarded(const csrf_ctx *ctx, const char *tok, size_t len)
{
	char *g = tu_guard_copy(tok, len);
	csrf_reason r = verify(ctx, secret_a, SID_A, g, len, T0);
	tu_guard_free(g);
	return r;
}

/* The raw 38 bytes inside a masked token. */
static void unmask(const char *masked, uint8_t raw[CSRF_TOKEN_RAW_LEN])
{
	uint8_t buf[2 * CSRF_TOKEN_RAW_LEN];
	size_t n;
	assert_int_equal(csrfi_b64url_decode(masked, CSRF_TOKEN_LEN, buf, sizeof buf, &n), CSRF_OK);
	assert_int_equal(n, sizeof buf);
	for (size_t i = 0; i < CSRF_TOKEN_RAW_LEN; i++)
		raw[i] = buf[CSRF_TOKEN_RAW_LEN + i] ^ buf[i];
}

static void encode_raw(const uint8_t raw[CSRF_TOKEN_RAW_LEN], char out[CSRF_TOKEN_UNMASKED_LEN + 1])
{
	csrfi_b64url_encode(raw, CSRF_TOKEN_RAW_LEN, out);
	out[CSRF_TOKEN_UNMASKED_LEN] = '\0';
}

/* Version 1, the previous layout (54 raw bytes, the whole MAC as tag),
 * built here from its description in docs/architecture.md, not by the
 * library: tokens pages carried before the upgrade. */
#define V1_RAW 54
#define V1_UNMASKED 72
#define COOKIE_RAW_LEN 77 /* a secret cookie's bytes, every version */

static void v1_raw(const uint8_t *key, uint32_t id, const uint8_t *secret, const char *sid, int64_t iat,
                   uint8_t raw[V1_RAW])
{
	csrfi_mac_key k;
	uint8_t len4[4], mac[CSRF_MAC_LEN], msg[CSRF_SECRET_LEN + 22 + 4];
	uint32_t n = (uint32_t)strlen(sid);

	csrfi_mac_init(&k, key, CSRF_KEY_LEN);
	memset(raw, 0, V1_RAW);
	raw[0] = 1;
	raw[2] = (uint8_t)(id >> 24), raw[3] = (uint8_t)(id >> 16), raw[4] = (uint8_t)(id >> 8), raw[5] = (uint8_t)id;
	for (int i = 0; i < 8; i++)
		raw[6 + i] = (uint8_t)((uint64_t)iat >> (56 - 8 * i));
	len4[0] = (uint8_t)(n >> 24), len4[1] = (uint8_t)(n >> 16), len4[2] = (uint8_t)(n >> 8), len4[3] = (uint8_t)n;
	csrfi_mac(&k, "libcsrf bind v1", 15, len4, 4, sid, n, NULL, 0, mac);
	memcpy(raw + 14, mac, 8);
	memcpy(msg, secret, CSRF_SECRET_LEN);
	memcpy(msg + CSRF_SECRET_LEN, raw, 22);
	memcpy(msg + CSRF_SECRET_LEN + 22, len4, 4);
	csrfi_mac(&k, "libcsrf token v1", 16, msg, sizeof msg, sid, n, NULL, 0, raw + 22);
	csrfi_mac_wipe(&k);
}

/* raw masked with pad (V1_RAW bytes), CSRF_TOKEN_MAX_LEN characters. */
static void v1_masked(const uint8_t raw[V1_RAW], uint8_t pad_byte, char out[CSRF_TOKEN_MAX_LEN + 1])
{
	uint8_t both[2 * V1_RAW];
	for (size_t i = 0; i < V1_RAW; i++) {
		both[i] = (uint8_t)(pad_byte + 31 * i);
		both[V1_RAW + i] = raw[i] ^ both[i];
	}
	csrfi_b64url_encode(both, sizeof both, out);
	out[CSRF_TOKEN_MAX_LEN] = '\0';
}

static int is_rejection(csrf_reason r)
{
	return r == CSRF_TOKEN_MALFORMED || r == CSRF_TOKEN_INVALID || r == CSRF_TOKEN_SESSION || r == CSRF_UNKNOWN_KEY;
}

static void test_round_trip(void **state)
{
	(void)state;
	csrf_ctx *ctx = ctx_with_key(1, key1);
	char t1[CSRF_TOKEN_LEN + 1], t2[CSRF_TOKEN_LEN + 1];

	issue(ctx, secret_a, SID_A, 0, t1);
	for (size_t i = 0; i < CSRF_TOKEN_LEN; i++)
		assert_non_null(memchr(alphabet, t1[i], sizeof alphabet - 1));
	assert_int_equal(verify(ctx, secret_a, SID_A, t1, CSRF_TOKEN_LEN, 0), CSRF_OK);

	/* Masked: two issues differ and both verify. */
	issue(ctx, secret_a, SID_A, 0, t2);
	assert_memory_not_equal(t1, t2, CSRF_TOKEN_LEN);
	assert_int_equal(verify(ctx, secret_a, SID_A, t2, CSRF_TOKEN_LEN, 0), CSRF_OK);

	/* Same raw token under both masks. */
	uint8_t r1[CSRF_TOKEN_RAW_LEN], r2[CSRF_TOKEN_RAW_LEN];
	issue(ctx, secret_a, SID_A, T0, t1);
	issue(ctx, secret_a, SID_A, T0, t2);
	unmask(t1, r1);
	unmask(t2, r2);
	assert_memory_equal(r1, r2, sizeof r1);
	assert_int_equal(r1[0], 3); /* version 3: the tag under the key's subkey */
	assert_int_equal(r1[1], 0);
	assert_int_equal(r1[5], 1); /* key id 1, big endian */

	/* The unmasked form verifies too, from a guard page. */
	char u[CSRF_TOKEN_UNMASKED_LEN + 1];
	encode_raw(r1, u);
	assert_int_equal(verify_guarded(ctx, u, CSRF_TOKEN_UNMASKED_LEN), CSRF_OK);
	assert_int_equal(verify_guarded(ctx, t1, CSRF_TOKEN_LEN), CSRF_OK);

	/* An empty session id is a session id like any other. */
	issue(ctx, secret_a, NULL, 0, t1);
	assert_int_equal(verify(ctx, secret_a, "", t1, CSRF_TOKEN_LEN, 0), CSRF_OK);
	assert_int_equal(verify(ctx, secret_a, SID_A, t1, CSRF_TOKEN_LEN, 0), CSRF_TOKEN_SESSION);
	csrf_ctx_free(ctx);
}

/* {secret, session} of the verifier against a token of secret_a/SID_A. */
static const struct {
	const uint8_t *secret;
	const char *sid;
	csrf_reason want;
} binding_rows[] = {
    {secret_a, SID_A, CSRF_OK},
    {secret_a, SID_B, CSRF_TOKEN_SESSION},        /* a token of another session */
    {secret_a, "session-a ", CSRF_TOKEN_SESSION}, /* sid extended */
    {secret_a, "session-", CSRF_TOKEN_SESSION},   /* sid truncated */
    {secret_a, "", CSRF_TOKEN_SESSION},
    {secret_b, SID_A, CSRF_TOKEN_INVALID}, /* same session, other secret */
    {secret_b, SID_B, CSRF_TOKEN_SESSION},
};

/* binding_rows against tok, a token of secret_a and SID_A. */
static void check_binding_rows(const csrf_ctx *ctx, const char *tok, size_t len, int64_t now)
{
	for (size_t i = 0; i < sizeof binding_rows / sizeof binding_rows[0]; i++) {
		csrf_reason r = verify(ctx, binding_rows[i].secret, binding_rows[i].sid, tok, len, now);
		if (r != binding_rows[i].want)
			fail_msg("binding row %zu (a token of %zu characters): got %s, want %s", i, len,
			         csrf_reason_name(r), csrf_reason_name(binding_rows[i].want));
	}
}

/* tok, a token of key1 (id 1) for secret_a and SID_A, in rings without
 * it: key1 under another id (an unknown key), another key under id 1
 * (the bind is not of this key: another session). */
static void check_other_rings(const char *tok, size_t len)
{
	csrf_ctx *other = ctx_with_key(9, key1);
	assert_int_equal(verify(other, secret_a, SID_A, tok, len, T0), CSRF_UNKNOWN_KEY);
	csrf_ctx_free(other);
	other = ctx_with_key(1, key2);
	assert_int_equal(verify(other, secret_a, SID_A, tok, len, T0), CSRF_TOKEN_SESSION);
	csrf_ctx_free(other);
}

static void test_binding(void **state)
{
	(void)state;
	csrf_ctx *ctx = ctx_with_key(1, key1);
	char t[CSRF_TOKEN_LEN + 1];

	issue(ctx, secret_a, SID_A, 0, t);
	check_binding_rows(ctx, t, CSRF_TOKEN_LEN, 0);
	csrf_ctx_free(ctx);
}

/* Change every character of a masked and of an unmasked token to every
 * other alphabet character: never accepted. */
static void test_every_position_tampered(void **state)
{
	(void)state;
	csrf_ctx *ctx = ctx_with_key(1, key1);
	char t[CSRF_TOKEN_LEN + 1], u[CSRF_TOKEN_UNMASKED_LEN + 1];
	uint8_t raw[CSRF_TOKEN_RAW_LEN];

	issue(ctx, secret_a, SID_A, T0, t);
	unmask(t, raw);
	encode_raw(raw, u);
	struct {
		char *tok;
		size_t len;
	} forms[] = {{t, CSRF_TOKEN_LEN}, {u, CSRF_TOKEN_UNMASKED_LEN}};
	for (size_t f = 0; f < 2; f++) {
		char *tok = forms[f].tok;
		for (size_t pos = 0; pos < forms[f].len; pos++) {
			char orig = tok[pos];
			for (size_t a = 0; a < sizeof alphabet - 1; a++) {
				if (alphabet[a] == orig)
					continue;
				tok[pos] = alphabet[a];
				csrf_reason r = verify(ctx, secret_a, SID_A, tok, forms[f].len, T0);
				if (!is_rejection(r))
					fail_msg("form %zu: position %zu changed gives %s", f, pos,
					         csrf_reason_name(r));
			}
			tok[pos] = orig;
		}
		assert_int_equal(verify(ctx, secret_a, SID_A, tok, forms[f].len, T0), CSRF_OK);
	}
	csrf_ctx_free(ctx);
}

/* Fields of the raw token changed one at a time: the reason names what. */
static void test_raw_fields(void **state)
{
	(void)state;
	csrf_ctx *ctx = ctx_with_key(1, key1);
	char t[CSRF_TOKEN_LEN + 1], u[CSRF_TOKEN_UNMASKED_LEN + 1];
	uint8_t raw[CSRF_TOKEN_RAW_LEN];
	static const struct {
		size_t off;
		uint8_t xor_;
		csrf_reason want;
	} rows[] = {
	    {0, 0x03, CSRF_TOKEN_MALFORMED}, /* version 0 */
	    {0, 0x02, CSRF_TOKEN_MALFORMED}, /* version 1 at version 3's length */
	    /* version 4: another layout, whose bind bytes (10..13) are
	     * this one's issue time: refused, as a token of another session */
	    {0, 0x07, CSRF_TOKEN_SESSION},
	    {0, 0x06, CSRF_TOKEN_MALFORMED}, /* version 5 */
	    {0, 0x80, CSRF_TOKEN_MALFORMED},
	    /* version 2, a layout of this length: a version 3 tag is not a
	     * version 2 tag (another key, another message) */
	    {0, 0x01, CSRF_TOKEN_INVALID},
	    {1, 0x01, CSRF_TOKEN_MALFORMED}, /* flags */
	    {1, 0x80, CSRF_TOKEN_MALFORMED},
	    {5, 0x03, CSRF_UNKNOWN_KEY}, /* key id 2 */
	    {2, 0x80, CSRF_UNKNOWN_KEY},
	    {13, 0x01, CSRF_TOKEN_INVALID}, /* issue time (tag covers it) */
	    /* bind: the tag covers it, and a bind that is not this session's
	     * reads as a token of another session */
	    {6, 0x40, CSRF_TOKEN_INVALID},
	    {14, 0x01, CSRF_TOKEN_SESSION},
	    {21, 0x80, CSRF_TOKEN_SESSION},
	    {22, 0x01, CSRF_TOKEN_INVALID}, /* tag */
	    {37, 0x80, CSRF_TOKEN_INVALID},
	};

	issue(ctx, secret_a, SID_A, T0, t);
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		unmask(t, raw);
		raw[rows[i].off] ^= rows[i].xor_;
		encode_raw(raw, u);
		csrf_reason r = verify(ctx, secret_a, SID_A, u, CSRF_TOKEN_UNMASKED_LEN, T0);
		if (r != rows[i].want)
			fail_msg("raw row %zu: got %s, want %s", i, csrf_reason_name(r),
			         csrf_reason_name(rows[i].want));
	}
	/* Session A's tag with session B's bind: neither session's token. */
	char other[CSRF_TOKEN_LEN + 1];
	uint8_t raw_b[CSRF_TOKEN_RAW_LEN];
	issue(ctx, secret_a, SID_B, T0, other);
	unmask(t, raw);
	unmask(other, raw_b);
	memcpy(raw + 14, raw_b + 14, 8);
	encode_raw(raw, u);
	/* The tag covers the bind, so the splice verifies for neither: for A
	 * the bind is B's (another session), for B the tag is A's. */
	assert_int_equal(verify(ctx, secret_a, SID_A, u, CSRF_TOKEN_UNMASKED_LEN, T0), CSRF_TOKEN_SESSION);
	assert_int_equal(verify(ctx, secret_a, SID_B, u, CSRF_TOKEN_UNMASKED_LEN, T0), CSRF_TOKEN_INVALID);
	/* Session B's whole token, checked for session A: another session. */
	assert_int_equal(verify(ctx, secret_a, SID_A, other, CSRF_TOKEN_LEN, T0), CSRF_TOKEN_SESSION);
	csrf_ctx_free(ctx);
}

static void test_truncated_and_oversized(void **state)
{
	(void)state;
	csrf_ctx *ctx = ctx_with_key(1, key1);
	char t[CSRF_TOKEN_LEN + 1], u[CSRF_TOKEN_UNMASKED_LEN + 1];
	uint8_t raw[CSRF_TOKEN_RAW_LEN];

	issue(ctx, secret_a, SID_A, T0, t);
	unmask(t, raw);
	encode_raw(raw, u);
	for (size_t l = 1; l < CSRF_TOKEN_LEN; l++) {
		char *g = tu_guard_copy(t, l);
		csrf_reason r = verify(ctx, secret_a, SID_A, g, l, T0);
		tu_guard_free(g);
		/* 51 characters of a masked token are the pad, and 72 are
		 * a version 1 unmasked token's length: well-formed lengths
		 * that must still never verify. */
		if (l == CSRF_TOKEN_UNMASKED_LEN || l == V1_UNMASKED ? !is_rejection(r) : r != CSRF_TOKEN_MALFORMED)
			fail_msg("masked prefix %zu gives %s", l, csrf_reason_name(r));
	}
	for (size_t l = 1; l < CSRF_TOKEN_UNMASKED_LEN; l++) {
		char *g = tu_guard_copy(u, l);
		csrf_reason r = verify(ctx, secret_a, SID_A, g, l, T0);
		tu_guard_free(g);
		if (r != CSRF_TOKEN_MALFORMED)
			fail_msg("unmasked prefix %zu gives %s", l, csrf_reason_name(r));
	}
	assert_int_equal(verify(ctx, secret_a, SID_A, t, 0, T0), CSRF_TOKEN_MALFORMED);
	assert_int_equal(verify(ctx, secret_a, SID_A, NULL, 0, T0), CSRF_TOKEN_MALFORMED);

	/* Overlong: one more character, two tokens, a large blob. */
	char big[4096];
	memset(big, 'A', sizeof big);
	memcpy(big, t, CSRF_TOKEN_LEN);
	memcpy(big + CSRF_TOKEN_LEN, t, CSRF_TOKEN_LEN);
	const size_t over[] = {CSRF_TOKEN_LEN + 1, CSRF_TOKEN_LEN + 4, 2 * CSRF_TOKEN_LEN, sizeof big};
	for (size_t i = 0; i < sizeof over / sizeof over[0]; i++) {
		char *g = tu_guard_copy(big, over[i]);
		assert_int_equal(verify(ctx, secret_a, SID_A, g, over[i], T0), CSRF_TOKEN_MALFORMED);
		tu_guard_free(g);
	}
	/* The exact token followed by bytes outside its length still verifies:
	 * only the given length is read. */
	assert_int_equal(verify(ctx, secret_a, SID_A, big, CSRF_TOKEN_LEN, T0), CSRF_OK);

	/* Characters outside the alphabet at a few positions. */
	static const char bad[] = {'+', '/', '=', ' ', '\0', '.', '%', '\n', (char)0x80, (char)0xff};
	static const size_t positions[] = {0, 1, 71, 72, 100, CSRF_TOKEN_LEN - 1};
	for (size_t b = 0; b < sizeof bad; b++) {
		for (size_t p = 0; p < sizeof positions / sizeof positions[0]; p++) {
			char copy[CSRF_TOKEN_LEN];
			memcpy(copy, t, sizeof copy);
			copy[positions[p]] = bad[b];
			if (verify(ctx, secret_a, SID_A, copy, sizeof copy, T0) != CSRF_TOKEN_MALFORMED)
				fail_msg("byte 0x%02x at %zu not malformed", (unsigned char)bad[b], positions[p]);
		}
	}
	csrf_ctx_free(ctx);
}

/* Known answers, computed apart from the library by token_vectors.py
 * (Python's hmac and hashlib, from the layouts in docs/architecture.md):
 * raw tokens for key1 (id 1), secret_a and T0, bound to no session, to a
 * short one and to one longer than a block; secret cookies. */
static const char *const kat_token_v3[] = {
    "030000000001000000006553f100b7cae6198466eeff2431449d656105d3923e860c054fed41", /* sid of 0 bytes */
    "030000000001000000006553f100ec3c84a619eb29c1efba592bf2ef5978f847415ffe3672a2", /* sid of 9 bytes */
    "030000000001000000006553f100de380092e117265e9921bb91d8ff9b32b873456b1e9a7256", /* sid of 100 bytes */
};
static const char *const kat_token_v2[] = {
    "020000000001000000006553f100b7cae6198466eeff2b3ccca31df31ebce54a0a63704b3cf7", /* sid of 0 bytes */
    "020000000001000000006553f100ec3c84a619eb29c1f0066c51a08a2e3676d06e8bfe362300", /* sid of 9 bytes */
    "020000000001000000006553f100de380092e117265e9bf034f7d7ccd07b5615f88e1c4f345e", /* sid of 100 bytes */
};
static const char kat_cookie_v3[] = "0300000001000000006553f100a1a2a3a4000000000000000000000000000000000000000000000000"
                                    "000000002c76296d5b6517c4d4b2c0f9bf3fe9d9fb10f366fba8e2ca005e78dfe04a0668";
static const char kat_cookie_v2[] = "0200000001000000006553f100a1a2a3a4000000000000000000000000000000000000000000000000"
                                    "000000003fa59eba8c495b2699b780270a37797a27f15c9d98c9a6428a30c0b1e85a6253";
static char sid_long[101]; /* 100 's', filled by the test */
static const char *const kat_sids[] = {"", SID_A, sid_long};

static void from_hex(const char *hex, uint8_t *out, size_t n)
{
	assert_int_equal(strlen(hex), 2 * n);
	assert_int_equal(csrfx_hex_decode(hex, n, out), CSRF_OK);
}

/* raw (n bytes) base64url-encoded, unmasked, into out. */
static void encode_n(const uint8_t *raw, size_t n, char *out)
{
	csrfi_b64url_encode(raw, n, out);
	out[CSRF_B64_ENC_LEN(n)] = '\0';
}

static csrf_reason verify_raw(const csrf_ctx *ctx, const uint8_t raw[CSRF_TOKEN_RAW_LEN], const char *sid)
{
	char u[CSRF_TOKEN_UNMASKED_LEN + 1];
	encode_raw(raw, u);
	return verify(ctx, secret_a, sid, u, CSRF_TOKEN_UNMASKED_LEN, T0);
}

/* Tokens: version 3 issued as computed apart; version 2 (pages served
 * before the upgrade) verifies, masked and unmasked; the version byte of
 * one on the other's tag is invalid (another key, another message), any
 * other version byte malformed. */
static void test_known_answers(void **state)
{
	(void)state;
	csrf_ctx *ctx = ctx_with_key(1, key1);
	char t[CSRF_TOKEN_LEN + 1];
	uint8_t want[CSRF_TOKEN_RAW_LEN], got[CSRF_TOKEN_RAW_LEN];

	memset(sid_long, 's', sizeof sid_long - 1);
	for (size_t i = 0; i < sizeof kat_sids / sizeof kat_sids[0]; i++) {
		const char *sid = kat_sids[i];
		issue(ctx, secret_a, sid, T0, t);
		unmask(t, got);
		from_hex(kat_token_v3[i], want, sizeof want);
		if (memcmp(got, want, sizeof got) != 0)
			fail_msg("version 3 token for a session id of %zu bytes differs from its known answer",
			         strlen(sid));
		assert_int_equal(verify_raw(ctx, want, sid), CSRF_OK);
		want[0] = 2; /* a version 3 tag read as a version 2 one */
		assert_int_equal(verify_raw(ctx, want, sid), CSRF_TOKEN_INVALID);

		from_hex(kat_token_v2[i], want, sizeof want);
		assert_int_equal(verify_raw(ctx, want, sid), CSRF_OK);
		/* masked as a version 2 page carried it */
		uint8_t both[2 * CSRF_TOKEN_RAW_LEN];
		for (size_t j = 0; j < CSRF_TOKEN_RAW_LEN; j++) {
			both[j] = (uint8_t)(0x5a + 31 * j);
			both[CSRF_TOKEN_RAW_LEN + j] = want[j] ^ both[j];
		}
		encode_n(both, sizeof both, t);
		assert_int_equal(verify(ctx, secret_a, sid, t, CSRF_TOKEN_LEN, T0), CSRF_OK);
		assert_int_equal(verify(ctx, secret_a, SID_B, t, CSRF_TOKEN_LEN, T0), CSRF_TOKEN_SESSION);
		assert_int_equal(verify(ctx, secret_b, sid, t, CSRF_TOKEN_LEN, T0), CSRF_TOKEN_INVALID);
		/* every bit of a version 2 token changed: never accepted; a
		 * version byte of neither layout of this length malformed */
		for (size_t off = 0; off < CSRF_TOKEN_RAW_LEN; off++) {
			for (unsigned bit = 0; bit < 8; bit++) {
				uint8_t x[CSRF_TOKEN_RAW_LEN];
				memcpy(x, want, sizeof x);
				x[off] ^= (uint8_t)(1u << bit);
				csrf_reason r = verify_raw(ctx, x, sid);
				int version_3 = off == 0 && x[0] == 3;
				if (!is_rejection(r) || (off < 2 && !version_3 && r != CSRF_TOKEN_MALFORMED) ||
				    (version_3 && r != CSRF_TOKEN_INVALID))
					fail_msg("version 2: byte %zu bit %u changed gives %s", off, bit,
					         csrf_reason_name(r));
			}
		}
	}
	csrf_ctx_free(ctx);
}

/* Secret cookies: version 3 encoded as computed apart; version 2 (set
 * before the upgrade) decodes; either's version byte on the other's
 * signature, or any other, is invalid; every bit changed never decodes. */
static void test_known_answer_cookies(void **state)
{
	(void)state;
	csrf_ctx *ctx = ctx_with_key(1, key1);
	char c[CSRF_SECRET_COOKIE_LEN + 1];
	uint8_t raw[COOKIE_RAW_LEN], want[COOKIE_RAW_LEN], got[CSRF_SECRET_LEN];
	static const uint8_t zero[CSRF_SECRET_LEN];
	size_t n;

	assert_int_equal(csrfi_secret_cookie_encode_at(ctx, secret_a, T0, c, sizeof c), CSRF_OK);
	assert_int_equal(csrfi_b64url_decode(c, CSRF_SECRET_COOKIE_LEN, raw, sizeof raw, &n), CSRF_OK);
	assert_int_equal(n, sizeof raw);
	from_hex(kat_cookie_v3, want, sizeof want);
	if (memcmp(raw, want, sizeof raw) != 0)
		fail_msg("version 3 cookie differs from its known answer");

	for (int v = 3; v >= 2; v--) {
		from_hex(v == 3 ? kat_cookie_v3 : kat_cookie_v2, want, sizeof want);
		encode_n(want, sizeof want, c);
		assert_int_equal(csrfi_secret_cookie_decode_at(ctx, c, CSRF_SECRET_COOKIE_LEN, T0, got), CSRF_OK);
		assert_memory_equal(got, secret_a, sizeof got);
		assert_int_equal(csrfi_secret_cookie_plausible(ctx, c, CSRF_SECRET_COOKIE_LEN, T0), 1);
		for (size_t off = 0; off < sizeof want; off++) {
			for (unsigned bit = 0; bit < 8; bit++) {
				memcpy(raw, want, sizeof raw);
				raw[off] ^= (uint8_t)(1u << bit);
				encode_n(raw, sizeof raw, c);
				memset(got, 0xee, sizeof got);
				csrf_reason r = csrfi_secret_cookie_decode_at(ctx, c, CSRF_SECRET_COOKIE_LEN, T0, got);
				int key_id = off >= 1 && off <= 4;
				if (!(r == CSRF_SECRET_INVALID || (key_id && r == CSRF_UNKNOWN_KEY)))
					fail_msg("version %d cookie: byte %zu bit %u changed gives %s", v, off, bit,
					         csrf_reason_name(r));
				assert_memory_equal(got, zero, sizeof got);
			}
		}
		/* the other version's byte on this signature: invalid */
		memcpy(raw, want, sizeof raw);
		raw[0] = (uint8_t)(5 - v);
		encode_n(raw, sizeof raw, c);
		assert_int_equal(csrfi_secret_cookie_decode_at(ctx, c, CSRF_SECRET_COOKIE_LEN, T0, got),
		                 CSRF_SECRET_INVALID);
		/* a version byte of neither fails before any MAC */
		for (int x = 0; x < 256; x++) {
			raw[0] = (uint8_t)x;
			encode_n(raw, sizeof raw, c);
			if (csrfi_secret_cookie_plausible(ctx, c, CSRF_SECRET_COOKIE_LEN, T0) != (x == 2 || x == 3))
				fail_msg("a cookie of version byte %d judged otherwise", x);
		}
	}
	csrf_ctx_free(ctx);
}

/* The issue version held at 2 (a fleet in the middle of an upgrade):
 * tokens and cookies as version 2 wrote them, byte for byte; back at 3,
 * version 3's; no other version is taken, and the setting stays. */
static void test_issue_version(void **state)
{
	(void)state;
	csrf_ctx *ctx = ctx_with_key(1, key1);
	char t[CSRF_TOKEN_LEN + 1], c[CSRF_SECRET_COOKIE_LEN + 1];
	uint8_t want[COOKIE_RAW_LEN], got[COOKIE_RAW_LEN];
	size_t n;

	memset(sid_long, 's', sizeof sid_long - 1);
	for (unsigned v = 2; v <= 3; v++) {
		assert_int_equal(csrf_ctx_set_issue_version(ctx, v), CSRF_OK);
		static const unsigned bad[] = {0, 1, 5, 255, 0x103, 0x104};
		for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++)
			assert_int_equal(csrf_ctx_set_issue_version(ctx, bad[b]), CSRF_ERR_ARG);
		for (size_t i = 0; i < sizeof kat_sids / sizeof kat_sids[0]; i++) {
			issue(ctx, secret_a, kat_sids[i], T0, t);
			unmask(t, got);
			from_hex(v == 2 ? kat_token_v2[i] : kat_token_v3[i], want, CSRF_TOKEN_RAW_LEN);
			if (memcmp(got, want, CSRF_TOKEN_RAW_LEN) != 0)
				fail_msg("issue version %u: the token for a session id of %zu bytes differs", v,
				         strlen(kat_sids[i]));
			assert_int_equal(verify(ctx, secret_a, kat_sids[i], t, CSRF_TOKEN_LEN, T0), CSRF_OK);
		}
		assert_int_equal(csrfi_secret_cookie_encode_at(ctx, secret_a, T0, c, sizeof c), CSRF_OK);
		assert_int_equal(csrfi_b64url_decode(c, CSRF_SECRET_COOKIE_LEN, got, sizeof got, &n), CSRF_OK);
		from_hex(v == 2 ? kat_cookie_v2 : kat_cookie_v3, want, sizeof want);
		if (memcmp(got, want, sizeof got) != 0)
			fail_msg("issue version %u: the cookie differs", v);
	}
	assert_int_equal(csrf_ctx_set_issue_version(NULL, 3), CSRF_ERR_ARG);
	/* 4: 51 characters, and the cookie stays version 3 */
	assert_int_equal(csrf_ctx_set_issue_version(ctx, 4), CSRF_OK);
	assert_int_equal(csrf_token_issue(ctx, secret_a, SID_A, strlen(SID_A), T0, t, sizeof t), CSRF_OK);
	assert_int_equal(strlen(t), CSRF_TOKEN_UNMASKED_LEN);
	assert_int_equal(verify(ctx, secret_a, SID_A, t, CSRF_TOKEN_UNMASKED_LEN, T0), CSRF_OK);
	assert_int_equal(csrfi_secret_cookie_encode_at(ctx, secret_a, T0, c, sizeof c), CSRF_OK);
	assert_int_equal(csrfi_b64url_decode(c, CSRF_SECRET_COOKIE_LEN, got, sizeof got, &n), CSRF_OK);
	from_hex(kat_cookie_v3, want, sizeof want);
	assert_memory_equal(got, want, sizeof got);
	csrf_ctx_free(ctx);
	/* and 4 is the default */
	ctx = ctx_v4(1, key1);
	assert_int_equal(csrf_token_issue(ctx, secret_a, NULL, 0, T0, t, sizeof t), CSRF_OK);
	assert_int_equal(strlen(t), CSRF_TOKEN_UNMASKED_LEN);
	csrf_ctx_free(ctx);
}

/* Tokens of version 1 (pages served before the upgrade) verify, masked
 * and unmasked, through the same checks as version 2's: binding, key,
 * age; changed, cut or grown they never do; a version byte that does
 * not match the length is malformed. */
static void test_version1(void **state)
{
	(void)state;
	csrf_ctx *ctx = ctx_with_key(1, key1);
	uint8_t raw[V1_RAW];
	char t[CSRF_TOKEN_MAX_LEN + 1], u[V1_UNMASKED + 1];

	v1_raw(key1, 1, secret_a, SID_A, T0, raw);
	v1_masked(raw, 0x5a, t);
	csrfi_b64url_encode(raw, V1_RAW, u);
	u[V1_UNMASKED] = '\0';
	assert_int_equal(strlen(t), 144);

	assert_int_equal(verify_guarded(ctx, t, CSRF_TOKEN_MAX_LEN), CSRF_OK);
	assert_int_equal(verify_guarded(ctx, u, V1_UNMASKED), CSRF_OK);
	/* another pad, the same token */
	v1_masked(raw, 0xc3, t);
	assert_int_equal(verify(ctx, secret_a, SID_A, t, CSRF_TOKEN_MAX_LEN, T0), CSRF_OK);

	/* the checks of every token */
	check_binding_rows(ctx, t, CSRF_TOKEN_MAX_LEN, T0);
	check_other_rings(t, CSRF_TOKEN_MAX_LEN);
	csrf_ctx_set_max_age(ctx, 60);
	assert_int_equal(verify(ctx, secret_a, SID_A, t, CSRF_TOKEN_MAX_LEN, T0 + 60), CSRF_OK);
	assert_int_equal(verify(ctx, secret_a, SID_A, t, CSRF_TOKEN_MAX_LEN, T0 + 61), CSRF_TOKEN_EXPIRED);
	csrf_ctx_set_max_age(ctx, 0);

	/* every bit of the raw token changed: never accepted; a version or
	 * flags byte that is not version 1's (at its length) malformed */
	for (size_t off = 0; off < V1_RAW; off++) {
		for (unsigned bit = 0; bit < 8; bit++) {
			uint8_t x[V1_RAW];
			char xu[V1_UNMASKED + 1];
			memcpy(x, raw, sizeof x);
			x[off] ^= (uint8_t)(1u << bit);
			csrfi_b64url_encode(x, V1_RAW, xu);
			csrf_reason r = verify(ctx, secret_a, SID_A, xu, V1_UNMASKED, T0);
			if (!is_rejection(r) || (off < 2 && r != CSRF_TOKEN_MALFORMED))
				fail_msg("version 1: byte %zu bit %u changed gives %s", off, bit, csrf_reason_name(r));
		}
	}

	uint8_t two[V1_RAW];
	memcpy(two, raw, sizeof two);
	two[0] = 2;
	csrfi_b64url_encode(two, V1_RAW, u);
	assert_int_equal(verify(ctx, secret_a, SID_A, u, V1_UNMASKED, T0), CSRF_TOKEN_MALFORMED);

	/* a version 1 tag cut to 128 bits in a version 2 layout: the labels
	 * differ, so no version 1 MAC is a version 2 tag */
	uint8_t cut[CSRF_TOKEN_RAW_LEN];
	char cu[CSRF_TOKEN_UNMASKED_LEN + 1];
	memcpy(cut, raw, CSRF_TOKEN_RAW_LEN);
	cut[0] = 2;
	csrfi_b64url_encode(cut, CSRF_TOKEN_RAW_LEN, cu);
	assert_int_equal(verify(ctx, secret_a, SID_A, cu, CSRF_TOKEN_UNMASKED_LEN, T0), CSRF_TOKEN_INVALID);

	/* every prefix, and longer: only the four lengths are well-formed */
	for (size_t l = 1; l < CSRF_TOKEN_MAX_LEN; l++) {
		csrf_reason r = verify_guarded(ctx, t, l);
		int formed = l == CSRF_TOKEN_UNMASKED_LEN || l == V1_UNMASKED || l == CSRF_TOKEN_LEN;
		if (formed ? !is_rejection(r) : r != CSRF_TOKEN_MALFORMED)
			fail_msg("version 1 masked prefix %zu gives %s", l, csrf_reason_name(r));
	}
	char big[2 * CSRF_TOKEN_MAX_LEN + 1];
	memcpy(big, t, CSRF_TOKEN_MAX_LEN);
	memcpy(big + CSRF_TOKEN_MAX_LEN, t, CSRF_TOKEN_MAX_LEN + 1);
	const size_t over[] = {CSRF_TOKEN_MAX_LEN + 1, CSRF_TOKEN_MAX_LEN + 3, 2 * CSRF_TOKEN_MAX_LEN};
	for (size_t i = 0; i < sizeof over / sizeof over[0]; i++) {
		assert_int_equal(verify_guarded(ctx, big, over[i]), CSRF_TOKEN_MALFORMED);
	}
	csrf_ctx_free(ctx);
}

static const struct {
	uint32_t max_age;
	int64_t issued;
	int64_t checked;
	csrf_reason want;
} age_rows[] = {
    {0, T0, T0, CSRF_OK},
    {0, T0, T0 + 10LL * 365 * 86400, CSRF_OK}, /* no max age: never expires */
    {3600, T0, T0, CSRF_OK},
    {3600, T0, T0 + 3600, CSRF_OK},
    {3600, T0, T0 + 3601, CSRF_TOKEN_EXPIRED},
    {3600, T0, T0 + 100000, CSRF_TOKEN_EXPIRED},
    {1, T0, T0 + 2, CSRF_TOKEN_EXPIRED},
    /* issued in the future (clock skew): 300 s allowed, not more */
    {0, T0, T0 - 300, CSRF_OK},
    {0, T0, T0 - 301, CSRF_TOKEN_EXPIRED},
    {3600, T0, T0 - 300, CSRF_OK},
    {3600, T0, T0 - 301, CSRF_TOKEN_EXPIRED},
    {0, T0, 1, CSRF_TOKEN_EXPIRED},
};

static void test_expiry(void **state)
{
	(void)state;
	csrf_ctx *ctx = ctx_with_key(1, key1);
	for (size_t i = 0; i < sizeof age_rows / sizeof age_rows[0]; i++) {
		char t[CSRF_TOKEN_LEN + 1];
		csrf_ctx_set_max_age(ctx, age_rows[i].max_age);
		issue(ctx, secret_a, SID_A, age_rows[i].issued, t);
		csrf_reason r = verify(ctx, secret_a, SID_A, t, CSRF_TOKEN_LEN, age_rows[i].checked);
		if (r != age_rows[i].want)
			fail_msg("age row %zu: got %s, want %s", i, csrf_reason_name(r),
			         csrf_reason_name(age_rows[i].want));
	}
	/* A forged token is invalid, not expired: age is judged only after
	 * the tag verified. */
	char t[CSRF_TOKEN_LEN + 1];
	csrf_ctx_set_max_age(ctx, 10);
	issue(ctx, secret_a, SID_A, T0, t);
	assert_int_equal(verify(ctx, secret_b, SID_A, t, CSRF_TOKEN_LEN, T0 + 1000), CSRF_TOKEN_INVALID);
	/* now == 0 is the current time. */
	csrf_ctx_set_max_age(ctx, 60);
	issue(ctx, secret_a, SID_A, 0, t);
	assert_int_equal(verify(ctx, secret_a, SID_A, t, CSRF_TOKEN_LEN, 0), CSRF_OK);
	issue(ctx, secret_a, SID_A, T0, t);
	assert_int_equal(verify(ctx, secret_a, SID_A, t, CSRF_TOKEN_LEN, 0), CSRF_TOKEN_EXPIRED);
	csrf_ctx_free(ctx);
}

/* Version 4: known answers from token_vectors.py, with the nonce fixed
 * there (an issue draws it at random: an issue's other bytes are
 * compared, and these verify). */
static const char *const kat_token_v4[] = {
    "0400000000016553f100b7cae619f0f1f2f3f4f5f6f762b8085fd343a263d00764f7b14949a1", /* sid of 0 bytes */
    "0400000000016553f100ec3c84a6f0f1f2f3f4f5f6f772f556cb9e957b44a199f80059d8f0cd", /* sid of 9 bytes */
    "0400000000016553f100de380092f0f1f2f3f4f5f6f7f1ce644593d90d27b01f0ba652a7dd04", /* sid of 100 bytes */
};
/* sid of 0 bytes, issued at T_WRAP: its 32-bit time field holds 5 */
static const char kat_token_v4_wrap[] = "04000000000100000005b7cae619f0f1f2f3f4f5f6f7991f9429c32010340b3d2a82a83798bc";
#define T_WRAP (4294967296LL + 5) /* 2106-02-07T06:28:21Z */
#define V4_NONCE_AT 14
#define V4_HEAD 14 /* version, flags, key id, time, bind: the bytes before the nonce */

/* A version 4 token issued by ctx (51 characters) and its raw bytes. */
static void issue_v4(const csrf_ctx *ctx, const uint8_t *secret, const char *sid, int64_t now,
                     char out[CSRF_TOKEN_UNMASKED_LEN + 1], uint8_t raw[CSRF_TOKEN_RAW_LEN])
{
	size_t n = 0;
	assert_int_equal(
	    csrf_token_issue(ctx, secret, sid, sid ? strlen(sid) : 0, now, out, CSRF_TOKEN_UNMASKED_LEN + 1), CSRF_OK);
	assert_int_equal(strlen(out), CSRF_TOKEN_UNMASKED_LEN);
	assert_int_equal(csrfi_b64url_decode(out, CSRF_TOKEN_UNMASKED_LEN, raw, CSRF_TOKEN_RAW_LEN, &n), CSRF_OK);
	assert_int_equal(n, CSRF_TOKEN_RAW_LEN);
}

/* What a version 4 token with one bit of byte off changed is: its
 * version or flags malformed (no version of this layout is one bit from
 * 4), its key id another key, its bind another session's, and its time,
 * nonce or tag a forgery. */
static csrf_reason v4_flipped(size_t off)
{
	if (off < 2)
		return CSRF_TOKEN_MALFORMED;
	if (off < 6)
		return CSRF_UNKNOWN_KEY;
	if (off >= 10 && off < 14)
		return CSRF_TOKEN_SESSION;
	return CSRF_TOKEN_INVALID;
}

/* raw masked with a pad: the form versions 2 and 3 are issued in. */
static void mask_raw(const uint8_t raw[CSRF_TOKEN_RAW_LEN], char out[CSRF_TOKEN_LEN + 1])
{
	uint8_t both[2 * CSRF_TOKEN_RAW_LEN];
	for (size_t j = 0; j < CSRF_TOKEN_RAW_LEN; j++) {
		both[j] = (uint8_t)(0x5a + 31 * j);
		both[CSRF_TOKEN_RAW_LEN + j] = raw[j] ^ both[j];
	}
	encode_n(both, sizeof both, out);
}

/* Version 4 as computed apart: an issue's bytes before the nonce, and
 * the tags of the fixed nonce, which verify; every bit of them changed
 * is refused for what it changed; masked, refused as no release issues
 * it; read as version 3 or 2, or a version 3 token read as 4, refused. */
static void test_v4_known_answers(void **state)
{
	(void)state;
	csrf_ctx *ctx = ctx_v4(1, key1);
	char t[CSRF_TOKEN_LEN + 1];
	uint8_t want[CSRF_TOKEN_RAW_LEN], got[CSRF_TOKEN_RAW_LEN], x[CSRF_TOKEN_RAW_LEN];

	memset(sid_long, 's', sizeof sid_long - 1);
	for (size_t i = 0; i < sizeof kat_sids / sizeof kat_sids[0]; i++) {
		const char *sid = kat_sids[i];
		issue_v4(ctx, secret_a, sid, T0, t, got);
		from_hex(kat_token_v4[i], want, sizeof want);
		if (memcmp(got, want, V4_HEAD) != 0)
			fail_msg(
			    "version 4 token for a session id of %zu bytes: its header differs from the known answer",
			    strlen(sid));
		assert_int_equal(verify_raw(ctx, want, sid), CSRF_OK);
		assert_int_equal(verify(ctx, secret_b, sid, t, CSRF_TOKEN_UNMASKED_LEN, T0), CSRF_TOKEN_INVALID);
		for (size_t off = 0; off < CSRF_TOKEN_RAW_LEN; off++) {
			for (unsigned bit = 0; bit < 8; bit++) {
				memcpy(x, want, sizeof x);
				x[off] ^= (uint8_t)(1u << bit);
				csrf_reason r = verify_raw(ctx, x, sid);
				if (r != v4_flipped(off))
					fail_msg("version 4: byte %zu bit %u changed gives %s", off, bit,
					         csrf_reason_name(r));
			}
		}
		/* masked: a form no release issues */
		mask_raw(want, t);
		assert_int_equal(verify(ctx, secret_a, sid, t, CSRF_TOKEN_LEN, T0), CSRF_TOKEN_MALFORMED);
		/* read as another version: the layouts' binds lie apart, so a
		 * refusal names another session */
		for (uint8_t v = 2; v <= 3; v++) {
			memcpy(x, want, sizeof x);
			x[0] = v;
			assert_int_equal(verify_raw(ctx, x, sid), CSRF_TOKEN_SESSION);
			mask_raw(x, t);
			assert_int_equal(verify(ctx, secret_a, sid, t, CSRF_TOKEN_LEN, T0), CSRF_TOKEN_SESSION);
		}
		from_hex(kat_token_v3[i], x, sizeof x);
		assert_int_equal(verify_raw(ctx, x, sid), CSRF_OK);
		x[0] = 4;
		assert_int_equal(verify_raw(ctx, x, sid), CSRF_TOKEN_SESSION);
		/* version 3's tag under version 4's header: the same subkey, a
		 * message that differs in its first byte */
		memcpy(x, want, CSRF_TOKEN_RAW_LEN - 16);
		from_hex(kat_token_v3[i], got, sizeof got);
		memcpy(x + 22, got + 22, 16);
		assert_int_equal(verify_raw(ctx, x, sid), CSRF_TOKEN_INVALID);
	}
	/* past 2106: the time field holds the low 32 bits */
	from_hex(kat_token_v4_wrap, want, sizeof want);
	char u[CSRF_TOKEN_UNMASKED_LEN + 1];
	encode_raw(want, u);
	assert_int_equal(verify(ctx, secret_a, "", u, CSRF_TOKEN_UNMASKED_LEN, T_WRAP), CSRF_OK);
	assert_int_equal(verify(ctx, secret_a, "", u, CSRF_TOKEN_UNMASKED_LEN, T_WRAP - 300), CSRF_OK);
	assert_int_equal(verify(ctx, secret_a, "", u, CSRF_TOKEN_UNMASKED_LEN, T_WRAP - 301), CSRF_TOKEN_EXPIRED);
	issue_v4(ctx, secret_a, NULL, T_WRAP, t, got);
	assert_memory_equal(got, want, V4_HEAD);
	csrf_ctx_free(ctx);
}

/* Version 4 as issued: 51 characters of the alphabet, two issues differ
 * (in their nonces, and so in their tags) and both verify, from a guard
 * page too; the buffer it needs; every character changed, every prefix
 * and a longer one refused; bound to its session, secret and key. */
static void test_v4_issue(void **state)
{
	(void)state;
	csrf_ctx *ctx = ctx_v4(1, key1);
	char t1[CSRF_TOKEN_UNMASKED_LEN + 1], t2[CSRF_TOKEN_UNMASKED_LEN + 1], big[CSRF_TOKEN_LEN + 1];
	uint8_t r1[CSRF_TOKEN_RAW_LEN], r2[CSRF_TOKEN_RAW_LEN];

	issue_v4(ctx, secret_a, SID_A, T0, t1, r1);
	issue_v4(ctx, secret_a, SID_A, T0, t2, r2);
	for (size_t i = 0; i < CSRF_TOKEN_UNMASKED_LEN; i++)
		assert_non_null(memchr(alphabet, t1[i], sizeof alphabet - 1));
	assert_int_equal(r1[0], 4);
	assert_int_equal(r1[1], 0);
	assert_int_equal(r1[5], 1);
	assert_memory_equal(r1, r2, V4_HEAD);
	assert_memory_not_equal(r1 + V4_NONCE_AT, r2 + V4_NONCE_AT, 8);
	assert_memory_not_equal(r1 + 22, r2 + 22, 16);
	assert_string_not_equal(t1, t2);
	assert_int_equal(verify_guarded(ctx, t1, CSRF_TOKEN_UNMASKED_LEN), CSRF_OK);
	assert_int_equal(verify_guarded(ctx, t2, CSRF_TOKEN_UNMASKED_LEN), CSRF_OK);
	check_binding_rows(ctx, t1, CSRF_TOKEN_UNMASKED_LEN, T0);

	/* the buffer: the token and its NUL */
	assert_int_equal(csrf_token_issue(ctx, secret_a, NULL, 0, T0, big, CSRF_TOKEN_UNMASKED_LEN), CSRF_ERR_BUFFER);
	assert_int_equal(csrf_token_issue(ctx, secret_a, NULL, 0, T0, big, CSRF_TOKEN_UNMASKED_LEN + 1), CSRF_OK);
	assert_int_equal(csrf_ctx_set_issue_version(ctx, 3), CSRF_OK);
	assert_int_equal(csrf_token_issue(ctx, secret_a, NULL, 0, T0, big, CSRF_TOKEN_UNMASKED_LEN + 1),
	                 CSRF_ERR_BUFFER);
	assert_int_equal(csrf_ctx_set_issue_version(ctx, 4), CSRF_OK);

	for (size_t pos = 0; pos < CSRF_TOKEN_UNMASKED_LEN; pos++) {
		char orig = t1[pos];
		for (size_t a = 0; a < sizeof alphabet - 1; a++) {
			if (alphabet[a] == orig)
				continue;
			t1[pos] = alphabet[a];
			csrf_reason r = verify(ctx, secret_a, SID_A, t1, CSRF_TOKEN_UNMASKED_LEN, T0);
			if (!is_rejection(r))
				fail_msg("version 4: position %zu changed gives %s", pos, csrf_reason_name(r));
		}
		t1[pos] = orig;
	}
	for (size_t l = 0; l < CSRF_TOKEN_UNMASKED_LEN; l++)
		assert_int_equal(verify_guarded(ctx, t1, l), CSRF_TOKEN_MALFORMED);
	memcpy(big, t1, CSRF_TOKEN_UNMASKED_LEN);
	big[CSRF_TOKEN_UNMASKED_LEN] = 'A';
	assert_int_equal(verify_guarded(ctx, big, CSRF_TOKEN_UNMASKED_LEN + 1), CSRF_TOKEN_MALFORMED);
	assert_int_equal(verify_guarded(ctx, t1, CSRF_TOKEN_UNMASKED_LEN), CSRF_OK);

	check_other_rings(t1, CSRF_TOKEN_UNMASKED_LEN);

	/* no session: bound to none */
	issue_v4(ctx, secret_a, NULL, T0, t1, r1);
	assert_int_equal(verify(ctx, secret_a, "", t1, CSRF_TOKEN_UNMASKED_LEN, T0), CSRF_OK);
	assert_int_equal(verify(ctx, secret_a, SID_A, t1, CSRF_TOKEN_UNMASKED_LEN, T0), CSRF_TOKEN_SESSION);
	csrf_ctx_free(ctx);
}

/* Version 4's 32-bit issue time: the age rows of version 3, and the
 * serial reading around 2106's wrap: within 2^31 seconds of now, the
 * instant that has those low bits; a token older than that reads as one
 * from the future, refused. */
static void test_v4_expiry(void **state)
{
	(void)state;
	csrf_ctx *ctx = ctx_v4(1, key1);
	char t[CSRF_TOKEN_UNMASKED_LEN + 1];
	uint8_t raw[CSRF_TOKEN_RAW_LEN];
	const int64_t wrap = 4294967296LL;
	static const struct {
		uint32_t max_age;
		int64_t issued, checked;
		csrf_reason want;
	} rows[] = {
	    {60, wrap - 10, wrap + 50, CSRF_OK}, /* across the wrap */
	    {60, wrap - 10, wrap + 51, CSRF_TOKEN_EXPIRED},
	    {60, wrap + 10, wrap - 290, CSRF_OK}, /* ahead, across it */
	    {60, wrap + 10, wrap - 291, CSRF_TOKEN_EXPIRED},
	    {0, T0, T0 + 2147483647LL, CSRF_OK},                   /* 68 years old, no max age */
	    {0, T0, T0 + 2147483648LL + 1000, CSRF_TOKEN_EXPIRED}, /* older: read as ahead */
	    {3600, T0, T0 + wrap, CSRF_OK},                        /* 136 years: the key's retirement ends it first */
	    /* a now at int64_t's ends (the caller's): the reading is 100 or
	     * 1000 s from it across the type's end, and computes no instant
	     * past it (signed overflow, which UBSan aborts on) */
	    {0, INT64_MIN + 99, INT64_MAX, CSRF_OK},             /* 100 s ahead */
	    {0, INT64_MIN + 999, INT64_MAX, CSRF_TOKEN_EXPIRED}, /* 1000 s ahead */
	    {0, INT64_MAX - 99, INT64_MIN, CSRF_OK},             /* 100 s behind */
	    {60, INT64_MAX - 99, INT64_MIN, CSRF_TOKEN_EXPIRED},
	};
	const size_t n_age = sizeof age_rows / sizeof age_rows[0];
	for (size_t i = 0; i < n_age + sizeof rows / sizeof rows[0]; i++) {
		/* version 3's age rows, then the wrap's */
		uint32_t max_age = i < n_age ? age_rows[i].max_age : rows[i - n_age].max_age;
		int64_t issued = i < n_age ? age_rows[i].issued : rows[i - n_age].issued;
		int64_t checked = i < n_age ? age_rows[i].checked : rows[i - n_age].checked;
		csrf_reason want = i < n_age ? age_rows[i].want : rows[i - n_age].want;
		csrf_ctx_set_max_age(ctx, max_age);
		issue_v4(ctx, secret_a, SID_A, issued, t, raw);
		csrf_reason r = verify(ctx, secret_a, SID_A, t, CSRF_TOKEN_UNMASKED_LEN, checked);
		if (r != want)
			fail_msg("version 4 age row %zu: got %s, want %s", i, csrf_reason_name(r),
			         csrf_reason_name(want));
	}
	/* a forgery is invalid, not expired */
	csrf_ctx_set_max_age(ctx, 10);
	issue_v4(ctx, secret_a, SID_A, T0, t, raw);
	assert_int_equal(verify(ctx, secret_b, SID_A, t, CSRF_TOKEN_UNMASKED_LEN, T0 + 1000), CSRF_TOKEN_INVALID);
	csrf_ctx_free(ctx);
}

/* No randomness, no token: with getrandom failing (a seccomp filter
 * answers ENOSYS in a child), an issue at every version is
 * CSRF_ERR_RANDOM and writes nothing, never a token with a zero or
 * stale nonce or pad. The parent draws first, so the child also proves
 * that the pad block it inherited is dropped (else it would cut the
 * parent's next nonce). */
/* The forked child's end: the context it inherited freed first, so that a
 * leak checker running the child (valgrind follows the fork) reports no
 * leak and keeps the exit code. */
static _Noreturn void child_exit(csrf_ctx *ctx, int code)
{
	csrf_ctx_free(ctx);
	_exit(code);
}

static void test_issue_without_random(void **state)
{
	(void)state;
	uint8_t warm[8];
	assert_int_equal(csrfi_random_pad(warm, sizeof warm), CSRF_OK); /* the block is filled */
	csrf_ctx *ctx = ctx_v4(1, key1);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* no filter that works here (a musl build without the
		 * kernel's headers; qemu-user, which refuses seccomp): skipped
		 * (test_random fails on a host that refuses it) */
		uint8_t probe[8];
		if (tu_no_getrandom() != 0 || csrf_random(probe, sizeof probe) != CSRF_ERR_RANDOM)
			child_exit(ctx, 9);
		for (unsigned v = 2; v <= 4; v++) {
			char out[CSRF_TOKEN_LEN + 1];
			memset(out, 'Z', sizeof out);
			if (csrf_ctx_set_issue_version(ctx, v) != CSRF_OK)
				child_exit(ctx, 11);
			for (int i = 0; i < 3; i++) /* and again: nothing is left half drawn */
				if (csrf_token_issue(ctx, secret_a, i ? SID_A : NULL, i ? strlen(SID_A) : 0, T0, out,
				                     sizeof out) != CSRF_ERR_RANDOM)
					child_exit(ctx, (int)v);
			for (size_t i = 0; i < sizeof out; i++)
				if (out[i] != 'Z')
					child_exit(ctx, 20 + (int)v);
		}
		child_exit(ctx, 0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	csrf_ctx_free(ctx);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 9)
		skip(); /* no working seccomp filter here */
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0600), 0); /* readers refuse a looser key file */
}

static void key_line(char *out, size_t cap, uint32_t id, const uint8_t *key, int sign)
{
	char hex[2 * CSRF_KEY_LEN + 1];
	csrfx_hex_encode(key, CSRF_KEY_LEN, hex);
	hex[2 * CSRF_KEY_LEN] = '\0';
	int n = snprintf(out, cap, "key %u %d %s%s\n", (unsigned)id, T0, hex, sign ? " sign" : "");
	assert_true(n > 0 && (size_t)n < cap);
}

static void test_unknown_key_and_rotation(void **state)
{
	(void)state;
	char dir[] = "/tmp/csrf-token-XXXXXX";
	char path[64], line1[200], line1n[200], line2[200], text[500];
	char t1[CSRF_TOKEN_LEN + 1], t2[CSRF_TOKEN_LEN + 1], t3[CSRF_TOKEN_LEN + 1];
	uint8_t raw[CSRF_TOKEN_RAW_LEN];

	/* A ring without the token's key id. */
	csrf_ctx *a = ctx_with_key(1, key1);
	csrf_ctx *b = ctx_with_key(9, key1);
	issue(a, secret_a, SID_A, 0, t1);
	assert_int_equal(verify(b, secret_a, SID_A, t1, CSRF_TOKEN_LEN, 0), CSRF_UNKNOWN_KEY);
	csrf_ctx_free(b);
	csrf_ctx_free(a);

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/keys", dir);
	key_line(line1, sizeof line1, 1, key1, 1);
	key_line(line2, sizeof line2, 2, key2, 1);
	write_file(path, line1);

	csrf_ctx *ctx = ctx_with_key(0, NULL);
	assert_int_equal(csrf_ctx_load_key_file(ctx, path), CSRF_OK);
	issue(ctx, secret_a, SID_A, 0, t1);
	assert_int_equal(verify(ctx, secret_a, SID_A, t1, CSRF_TOKEN_LEN, 0), CSRF_OK);

	/* Key 2 signs; key 1's tokens still verify. */
	assert_int_equal(csrf_ctx_add_key(ctx, 2, key2, 1), CSRF_OK);
	issue(ctx, secret_a, SID_A, 0, t2);
	unmask(t2, raw);
	assert_int_equal(raw[5], 2);
	assert_int_equal(verify(ctx, secret_a, SID_A, t1, CSRF_TOKEN_LEN, 0), CSRF_OK);
	assert_int_equal(verify(ctx, secret_a, SID_A, t2, CSRF_TOKEN_LEN, 0), CSRF_OK);

	/* A file with both keys, 2 signing: as before. */
	key_line(line1n, sizeof line1n, 1, key1, 0);
	snprintf(text, sizeof text, "# two keys\n%s\n%s", line1n, line2);
	write_file(path, text);
	assert_int_equal(csrf_ctx_load_key_file(ctx, path), CSRF_OK);
	assert_int_equal(verify(ctx, secret_a, SID_A, t1, CSRF_TOKEN_LEN, 0), CSRF_OK);
	assert_int_equal(verify(ctx, secret_a, SID_A, t2, CSRF_TOKEN_LEN, 0), CSRF_OK);

	/* Key 1 retired: its tokens are of an unknown key, new ones verify. */
	write_file(path, line2);
	assert_int_equal(csrf_ctx_load_key_file(ctx, path), CSRF_OK);
	assert_int_equal(verify(ctx, secret_a, SID_A, t1, CSRF_TOKEN_LEN, 0), CSRF_UNKNOWN_KEY);
	assert_int_equal(verify(ctx, secret_a, SID_A, t2, CSRF_TOKEN_LEN, 0), CSRF_OK);
	issue(ctx, secret_a, SID_A, 0, t3);
	assert_int_equal(verify(ctx, secret_a, SID_A, t3, CSRF_TOKEN_LEN, 0), CSRF_OK);

	/* A bad file changes nothing. */
	write_file(path, "key 3 0 zz sign\n");
	assert_int_equal(csrf_ctx_load_key_file(ctx, path), CSRF_ERR_CONFIG);
	assert_int_equal(verify(ctx, secret_a, SID_A, t3, CSRF_TOKEN_LEN, 0), CSRF_OK);
	csrf_ctx_free(ctx);

	unlink(path);
	rmdir(dir);
}

/* The bind of a token bound to no session, MAC_k("libcsrf bind v1" ||
 * 00000000)[0..8), as docs/architecture.md describes it. */
static void no_session_bind(const uint8_t *key, uint8_t out[8])
{
	csrfi_mac_key k;
	uint8_t mac[CSRF_MAC_LEN];
	static const uint8_t len0[4] = {0};
	csrfi_mac_init(&k, key, CSRF_KEY_LEN);
	csrfi_mac(&k, "libcsrf bind v1", 15, len0, 4, NULL, 0, NULL, 0, mac);
	memcpy(out, mac, 8);
	csrfi_mac_wipe(&k);
}

/* Issues a token bound to no session into t, checks its bind against
 * want and that it verifies. */
static void issue_unbound(const csrf_ctx *ctx, const uint8_t want[8], char t[CSRF_TOKEN_LEN + 1])
{
	uint8_t raw[CSRF_TOKEN_RAW_LEN];
	issue(ctx, secret_a, "", T0, t);
	unmask(t, raw);
	assert_memory_equal(raw + 14, want, 8);
	assert_int_equal(verify(ctx, secret_a, "", t, CSRF_TOKEN_LEN, T0), CSRF_OK);
}

/* Tokens bound to no session (the library keeps their bind once a key):
 * every one carries the bind of the key that signed it, also after the
 * key of an id is replaced by a reload or another key signs; a token of
 * the old key then reads as another session's, as it always did. */
static void test_no_session_bind(void **state)
{
	(void)state;
	char dir[] = "/tmp/csrf-token-XXXXXX";
	char path[64], line[200];
	char t1[CSRF_TOKEN_LEN + 1], t2[CSRF_TOKEN_LEN + 1];
	uint8_t want1[8], want2[8];
	no_session_bind(key1, want1);
	no_session_bind(key2, want2);

	csrf_ctx *ctx = ctx_with_key(1, key1);
	for (int i = 0; i < 3; i++)
		issue_unbound(ctx, want1, t1);
	assert_int_equal(verify(ctx, secret_a, SID_A, t1, CSRF_TOKEN_LEN, T0), CSRF_TOKEN_SESSION);
	issue(ctx, secret_a, SID_A, T0, t2);
	assert_int_equal(verify(ctx, secret_a, "", t2, CSRF_TOKEN_LEN, T0), CSRF_TOKEN_SESSION);

	/* another key signs */
	assert_int_equal(csrf_ctx_add_key(ctx, 2, key2, 1), CSRF_OK);
	issue_unbound(ctx, want2, t2);
	assert_int_equal(verify(ctx, secret_a, "", t1, CSRF_TOKEN_LEN, T0), CSRF_OK);
	csrf_ctx_free(ctx);

	/* id 1's key replaced by a reload */
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/keys", dir);
	ctx = ctx_with_key(1, key1);
	issue_unbound(ctx, want1, t1);
	key_line(line, sizeof line, 1, key2, 1);
	write_file(path, line);
	assert_int_equal(csrf_ctx_load_key_file(ctx, path), CSRF_OK);
	issue_unbound(ctx, want2, t2);
	assert_int_equal(verify(ctx, secret_a, "", t1, CSRF_TOKEN_LEN, T0), CSRF_TOKEN_SESSION);
	csrf_ctx_free(ctx);
	unlink(path);
	rmdir(dir);
}

static void test_secret_cookie(void **state)
{
	(void)state;
	csrf_ctx *ctx = ctx_with_key(1, key1);
	char c[CSRF_SECRET_COOKIE_LEN + 1], c2[CSRF_SECRET_COOKIE_LEN + 1];
	uint8_t got[CSRF_SECRET_LEN];
	static const uint8_t zero[CSRF_SECRET_LEN];

	assert_int_equal(csrf_secret_cookie_encode(ctx, secret_a, c, sizeof c), CSRF_OK);
	assert_int_equal(strlen(c), CSRF_SECRET_COOKIE_LEN);
	char *g = tu_guard_copy(c, CSRF_SECRET_COOKIE_LEN);
	assert_int_equal(csrf_secret_cookie_decode(ctx, g, CSRF_SECRET_COOKIE_LEN, got), CSRF_OK);
	tu_guard_free(g);
	assert_memory_equal(got, secret_a, sizeof got);
	/* the same secret and issue time give the same cookie (two encodes
	 * with the clock may fall on both sides of a second) */
	char c3[CSRF_SECRET_COOKIE_LEN + 1];
	assert_int_equal(csrfi_secret_cookie_encode_at(ctx, secret_a, 1800000000, c2, sizeof c2), CSRF_OK);
	assert_int_equal(csrfi_secret_cookie_encode_at(ctx, secret_a, 1800000000, c3, sizeof c3), CSRF_OK);
	assert_string_equal(c3, c2);
	assert_int_equal(csrf_secret_cookie_encode(ctx, secret_a, c2, CSRF_SECRET_COOKIE_LEN), CSRF_ERR_BUFFER);

	/* Every character changed: invalid, or an unknown key when the key
	 * id changed; the output is wiped. */
	for (size_t pos = 0; pos < CSRF_SECRET_COOKIE_LEN; pos++) {
		char orig = c[pos];
		for (size_t a = 0; a < sizeof alphabet - 1; a += 5) {
			if (alphabet[a] == orig)
				continue;
			c[pos] = alphabet[a];
			memset(got, 0xee, sizeof got);
			csrf_reason r = csrf_secret_cookie_decode(ctx, c, CSRF_SECRET_COOKIE_LEN, got);
			int key_id_chars = pos >= 1 && pos <= 6;
			if (!(r == CSRF_SECRET_INVALID || (key_id_chars && r == CSRF_UNKNOWN_KEY)))
				fail_msg("cookie position %zu changed gives %s", pos, csrf_reason_name(r));
			assert_memory_equal(got, zero, sizeof got);
		}
		c[pos] = orig;
	}

	/* Every truncated prefix, overlong, bad alphabet, absent. */
	for (size_t l = 0; l < CSRF_SECRET_COOKIE_LEN; l++) {
		g = tu_guard_copy(c, l ? l : 1);
		assert_int_equal(csrf_secret_cookie_decode(ctx, g, l, got), CSRF_SECRET_INVALID);
		tu_guard_free(g);
	}
	char longer[CSRF_SECRET_COOKIE_LEN + 4];
	memcpy(longer, c, CSRF_SECRET_COOKIE_LEN);
	memcpy(longer + CSRF_SECRET_COOKIE_LEN, "AAAA", 4);
	assert_int_equal(csrf_secret_cookie_decode(ctx, longer, sizeof longer, got), CSRF_SECRET_INVALID);
	assert_int_equal(csrf_secret_cookie_decode(ctx, longer, CSRF_SECRET_COOKIE_LEN + 1, got), CSRF_SECRET_INVALID);
	memcpy(longer, c, CSRF_SECRET_COOKIE_LEN);
	longer[40] = '=';
	assert_int_equal(csrf_secret_cookie_decode(ctx, longer, CSRF_SECRET_COOKIE_LEN, got), CSRF_SECRET_INVALID);
	assert_int_equal(csrf_secret_cookie_decode(ctx, NULL, 0, got), CSRF_SECRET_INVALID);

	/* A cookie planted from a sibling subdomain, signed by another
	 * server's key: with the same key id it is invalid, with another an
	 * unknown key. */
	static const uint8_t other_key[CSRF_KEY_LEN] = {0xde, 0xad};
	csrf_ctx *sib = ctx_with_key(1, other_key);
	csrf_ctx *sib7 = ctx_with_key(7, other_key);
	assert_int_equal(csrf_secret_cookie_encode(sib, secret_b, c2, sizeof c2), CSRF_OK);
	assert_int_equal(csrf_secret_cookie_decode(ctx, c2, CSRF_SECRET_COOKIE_LEN, got), CSRF_SECRET_INVALID);
	assert_int_equal(csrf_secret_cookie_encode(sib7, secret_b, c2, sizeof c2), CSRF_OK);
	assert_int_equal(csrf_secret_cookie_decode(ctx, c2, CSRF_SECRET_COOKIE_LEN, got), CSRF_UNKNOWN_KEY);
	assert_memory_equal(got, zero, sizeof got);
	csrf_ctx_free(sib);
	csrf_ctx_free(sib7);

	/* A token is not a cookie, nor the other way round. A token's bytes
	 * are random (masked), so its start may read as a cookie of another
	 * version (invalid) or of this one with some key id (unknown key):
	 * never a secret, whatever the pad. */
	char t[CSRF_TOKEN_LEN + 1];
	for (int i = 0; i < 256; i++) {
		issue(ctx, secret_a, SID_A, 0, t);
		memset(got, 0xee, sizeof got);
		csrf_reason r = csrf_secret_cookie_decode(ctx, t, CSRF_SECRET_COOKIE_LEN, got);
		if (r != CSRF_SECRET_INVALID && r != CSRF_UNKNOWN_KEY)
			fail_msg("a token read as a secret cookie gives %s", csrf_reason_name(r));
		assert_memory_equal(got, zero, sizeof got);
	}
	assert_int_equal(verify(ctx, secret_a, SID_A, c, CSRF_SECRET_COOKIE_LEN, 0), CSRF_TOKEN_MALFORMED);
	csrf_ctx_free(ctx);
}

static int field_shape_ok(const char *s)
{
	if (strlen(s) != 17 || memcmp(s, "csrf_", 5) != 0)
		return 0;
	for (size_t i = 5; i < 17; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

static void test_field_names(void **state)
{
	(void)state;
	csrf_ctx *ctx = ctx_with_key(1, key1);
	char a1[CSRF_FIELD_NAME_MAX + 1], a2[CSRF_FIELD_NAME_MAX + 1], b[CSRF_FIELD_NAME_MAX + 1];

	assert_int_equal(csrf_field_name(ctx, secret_a, a1, sizeof a1), CSRF_OK);
	assert_int_equal(csrf_field_name(ctx, secret_a, a2, sizeof a2), CSRF_OK);
	assert_int_equal(csrf_field_name(ctx, secret_b, b, sizeof b), CSRF_OK);
	assert_true(field_shape_ok(a1));
	assert_true(field_shape_ok(b));
	assert_string_equal(a1, a2);
	assert_string_not_equal(a1, b);
	/* Many random secrets: always the shape, no collisions among a few. */
	char seen[64][18];
	for (size_t i = 0; i < 64; i++) {
		uint8_t s[CSRF_SECRET_LEN];
		assert_int_equal(csrf_secret_new(s), CSRF_OK);
		assert_int_equal(csrf_field_name(ctx, s, seen[i], sizeof seen[i]), CSRF_OK);
		assert_true(field_shape_ok(seen[i]));
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(seen[i], seen[j]);
	}
	assert_int_equal(csrf_field_name(ctx, secret_a, a2, 18), CSRF_OK);
	assert_int_equal(csrf_field_name(ctx, secret_a, a2, 17), CSRF_ERR_BUFFER);
	assert_int_equal(csrf_field_name(ctx, NULL, a2, sizeof a2), CSRF_ERR_ARG);

	/* The fixed name wins over the derived one, until reset. */
	assert_int_equal(csrf_ctx_set_field_name(ctx, "authenticity_token"), CSRF_OK);
	assert_int_equal(csrf_field_name(ctx, secret_a, a2, sizeof a2), CSRF_OK);
	assert_string_equal(a2, "authenticity_token");
	assert_int_equal(csrf_field_name(ctx, secret_b, a2, sizeof a2), CSRF_OK);
	assert_string_equal(a2, "authenticity_token");
	assert_int_equal(csrf_field_name(ctx, secret_b, a2, 18), CSRF_ERR_BUFFER);
	assert_int_equal(csrf_ctx_set_field_name(ctx, NULL), CSRF_OK);
	assert_int_equal(csrf_field_name(ctx, secret_a, a2, sizeof a2), CSRF_OK);
	assert_string_equal(a1, a2);
	csrf_ctx_free(ctx);
}

static void test_arguments(void **state)
{
	(void)state;
	csrf_ctx *ctx = ctx_with_key(1, key1);
	csrf_ctx *empty = ctx_with_key(0, NULL);
	char t[CSRF_TOKEN_LEN + 1], c[CSRF_SECRET_COOKIE_LEN + 1];
	uint8_t s[CSRF_SECRET_LEN];

	assert_int_equal(csrf_token_issue(NULL, secret_a, "s", 1, 0, t, sizeof t), CSRF_ERR_ARG);
	assert_int_equal(csrf_token_issue(ctx, NULL, "s", 1, 0, t, sizeof t), CSRF_ERR_ARG);
	assert_int_equal(csrf_token_issue(ctx, secret_a, NULL, 1, 0, t, sizeof t), CSRF_ERR_ARG);
	assert_int_equal(csrf_token_issue(ctx, secret_a, "s", 1, 0, NULL, sizeof t), CSRF_ERR_ARG);
	assert_int_equal(csrf_token_issue(ctx, secret_a, "s", 1, 0, t, CSRF_TOKEN_LEN), CSRF_ERR_BUFFER);
	assert_int_equal(csrf_token_issue(empty, secret_a, "s", 1, 0, t, sizeof t), CSRF_ERR_CONFIG);
	assert_int_equal(csrf_token_issue(ctx, secret_a, "s", 1, 0, t, sizeof t), CSRF_OK);
	assert_int_equal(csrf_token_verify(NULL, secret_a, "s", 1, t, CSRF_TOKEN_LEN, 0), CSRF_ERR_ARG);
	assert_int_equal(csrf_token_verify(ctx, NULL, "s", 1, t, CSRF_TOKEN_LEN, 0), CSRF_ERR_ARG);
	assert_int_equal(csrf_token_verify(ctx, secret_a, NULL, 1, t, CSRF_TOKEN_LEN, 0), CSRF_ERR_ARG);
	assert_int_equal(csrf_token_verify(empty, secret_a, "s", 1, t, CSRF_TOKEN_LEN, 0), CSRF_UNKNOWN_KEY);
	assert_int_equal(csrf_secret_cookie_encode(empty, secret_a, c, sizeof c), CSRF_ERR_CONFIG);
	assert_int_equal(csrf_secret_cookie_encode(ctx, NULL, c, sizeof c), CSRF_ERR_ARG);
	assert_int_equal(csrf_secret_cookie_decode(ctx, c, sizeof c - 1, NULL), CSRF_ERR_ARG);
	assert_int_equal(csrf_field_name(NULL, secret_a, c, sizeof c), CSRF_ERR_ARG);
	(void)s;
	csrf_ctx_free(empty);
	csrf_ctx_free(ctx);
}

/* After one warm-up, issue and verify (and the cookie and field name)
 * allocate nothing, through either allocator. */
static void test_no_allocation(void **state)
{
	(void)state;
	tu_alloc_state st = {0};
	csrf_allocator al = tu_allocator(&st);
	csrf_ctx *ctx = NULL;
	char t[CSRF_TOKEN_LEN + 1], c[CSRF_SECRET_COOKIE_LEN + 1], f[CSRF_FIELD_NAME_MAX + 1];
	uint8_t s[CSRF_SECRET_LEN];

	assert_int_equal(csrf_ctx_new(&ctx, &al), CSRF_OK);
	assert_int_equal(csrf_ctx_generate_key(ctx), CSRF_OK);
	assert_int_equal(csrf_ctx_add_key(ctx, 77, key2, 0), CSRF_OK);
	csrf_ctx_set_max_age(ctx, 3600);

	assert_int_equal(csrf_secret_new(s), CSRF_OK);
	assert_int_equal(csrf_token_issue(ctx, s, SID_A, strlen(SID_A), 0, t, sizeof t), CSRF_OK);
	assert_int_equal(csrf_token_verify(ctx, s, SID_A, strlen(SID_A), t, strlen(t), 0), CSRF_OK);
	assert_int_equal(csrf_secret_cookie_encode(ctx, s, c, sizeof c), CSRF_OK);
	assert_int_equal(csrf_secret_cookie_decode(ctx, c, CSRF_SECRET_COOKIE_LEN, s), CSRF_OK);

	/* the counters do count: the context was allocated, and libcrypto's
	 * DRBG allocates when first used (the library itself uses getrandom) */
	size_t ours = st.allocs, theirs = tu_openssl_allocs();
	assert_true(ours > 0);
#ifdef WITH_OPENSSL
	unsigned char probe;
	assert_int_equal(RAND_bytes(&probe, 1), 1);
	theirs = tu_openssl_allocs();
	assert_true(theirs > 0);
#endif
	for (int i = 0; i < 2000; i++) {
		assert_int_equal(csrf_token_issue(ctx, s, SID_A, strlen(SID_A), 0, t, sizeof t), CSRF_OK);
		assert_int_equal(csrf_token_verify(ctx, s, SID_A, strlen(SID_A), t, strlen(t), 0), CSRF_OK);
		assert_int_equal(csrf_token_verify(ctx, s, SID_B, strlen(SID_B), t, strlen(t), 0), CSRF_TOKEN_SESSION);
		assert_int_equal(csrf_secret_cookie_encode(ctx, s, c, sizeof c), CSRF_OK);
		assert_int_equal(csrf_secret_cookie_decode(ctx, c, CSRF_SECRET_COOKIE_LEN, s), CSRF_OK);
		assert_int_equal(csrf_field_name(ctx, s, f, sizeof f), CSRF_OK);
	}
	assert_int_equal(st.allocs, ours);
	assert_int_equal(tu_openssl_allocs(), theirs);
	csrf_ctx_free(ctx);
	assert_int_equal(st.live, 0);
}

/* ---- the dead stack ----
 *
 * What a call leaves on the stack once it has returned: no 8 bytes of the
 * user's secret, the key or its HMAC states (their words in either byte
 * order). Each call runs on a stack of its own (tu_dead_stack), its
 * secrets and outputs in memory outside it. Tokens and cookies are not
 * looked for: the client holds them. */

typedef enum {
	DEAD_COOKIE_ENCODE,
	DEAD_COOKIE_DECODE,
	DEAD_ISSUE,
	DEAD_VERIFY,
	DEAD_FIELD_NAME,
} dead_what;

typedef struct {
	const csrf_ctx *ctx;
	dead_what what;
	const uint8_t *secret;
	const char *sid;
	const char *in; /* the token to verify, the cookie to decode */
	char out[CSRF_TOKEN_MAX_LEN + CSRF_SECRET_COOKIE_LEN + 1];
	uint8_t secret_out[CSRF_SECRET_LEN];
	csrf_reason r;
} dead_call;

static void dead_run(void *p)
{
	dead_call *c = p;
	size_t sid_len = c->sid ? strlen(c->sid) : 0;
	switch (c->what) {
	case DEAD_COOKIE_ENCODE:
		c->r = csrf_secret_cookie_encode(c->ctx, c->secret, c->out, sizeof c->out);
		break;
	case DEAD_COOKIE_DECODE:
		c->r = csrf_secret_cookie_decode(c->ctx, c->in, strlen(c->in), c->secret_out);
		break;
	case DEAD_ISSUE:
		c->r = csrf_token_issue(c->ctx, c->secret, c->sid, sid_len, T0, c->out, sizeof c->out);
		break;
	case DEAD_VERIFY:
		c->r = csrf_token_verify(c->ctx, c->secret, c->sid, sid_len, c->in, strlen(c->in), T0);
		break;
	case DEAD_FIELD_NAME:
		c->r = csrf_field_name(c->ctx, c->secret, c->out, sizeof c->out);
		break;
	}
}

/* Bytes with no run or pattern a stack holds by chance. */
static void noise(uint8_t *b, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed ^= seed << 13, seed ^= seed >> 17, seed ^= seed << 5;
		b[i] = (uint8_t)(seed >> 11);
	}
}

#define DEAD_SECRETS_MAX 12
#if CSRFI_SHA256_BLOCK
static uint32_t dead_states[DEAD_SECRETS_MAX][8];
#endif

/* The secret material of ctx's key slot 0 (its key given here) and of the
 * user's secret, into s; how many. */
static size_t dead_secrets(const csrf_ctx *ctx, const uint8_t *key, const uint8_t *secret, tu_secret *s)
{
	size_t n = 0;
	s[n++] = (tu_secret){secret, CSRF_SECRET_LEN};
	s[n++] = (tu_secret){key, CSRF_KEY_LEN};
#if CSRFI_SHA256_BLOCK
	const csrfi_key_slot *slot = csrfi_key_slot_subkeys(ctx, &ctx->ring.keys[0]);
	const csrfi_mac_key *k[] = {&slot->mac, &slot->tag_mac, &slot->cookie_mac};
	for (size_t i = 0; i < 3; i++) {
		for (unsigned j = 0; j < 8; j++) {
			dead_states[2 * i][j] = csrfi_sha256_word(&k[i]->inner, j);
			dead_states[2 * i + 1][j] = csrfi_sha256_word(&k[i]->outer, j);
		}
		s[n++] = (tu_secret){dead_states[2 * i], sizeof dead_states[0]};
		s[n++] = (tu_secret){dead_states[2 * i + 1], sizeof dead_states[0]};
	}
#else
	(void)ctx;
#endif
	return n;
}

/* One row's contexts, its input and the material looked for, made on a
 * thread of its own (tu_in_thread): the test's thread never holds the
 * key's states in a register the thread of the call would start with.
 * twin: the same key, its subkeys derived; ctx: the call's, with them
 * (warm) or without (cold: the call derives them). */
typedef struct {
	unsigned version;
	int warm;
	int free;              /* the second visit: the decoded secret compared, both freed */
	uint8_t *key, *secret; /* made at the first row */
	dead_call *c;
	csrf_ctx *ctx, *twin;
	char in[CSRF_TOKEN_MAX_LEN + CSRF_SECRET_COOKIE_LEN + 1];
	tu_secret s[2 + 6];
	size_t n;
	int ok;
} dead_setup;

static void dead_prepare(void *p)
{
	dead_setup *u = p;
	dead_call *c = u->c;
	if (u->free) {
		u->ok = c->what != DEAD_COOKIE_DECODE || csrfi_ct_eq(c->secret_out, u->secret, CSRF_SECRET_LEN);
		csrf_ctx_free(u->ctx);
		csrf_ctx_free(u->twin);
		return;
	}
	if (!u->key[0] && !u->key[1]) {
		noise(u->key, CSRF_KEY_LEN, 0x9e3779b9u);
		noise(u->secret, CSRF_SECRET_LEN, 0x7f4a7c15u);
	}
	u->ok = 0;
	u->ctx = u->twin = NULL;
	if (csrf_ctx_new(&u->ctx, NULL) != CSRF_OK || csrf_ctx_new(&u->twin, NULL) != CSRF_OK ||
	    csrf_ctx_add_key(u->ctx, 7, u->key, 1) != CSRF_OK || csrf_ctx_add_key(u->twin, 7, u->key, 1) != CSRF_OK ||
	    csrf_ctx_set_issue_version(u->ctx, u->version) != CSRF_OK ||
	    csrf_ctx_set_issue_version(u->twin, u->version) != CSRF_OK)
		return;
	size_t sid_len = c->sid ? strlen(c->sid) : 0;
	if (c->what == DEAD_COOKIE_DECODE &&
	    csrf_secret_cookie_encode(u->twin, u->secret, u->in, sizeof u->in) != CSRF_OK)
		return;
	if (c->what == DEAD_VERIFY &&
	    csrf_token_issue(u->twin, u->secret, c->sid, sid_len, T0, u->in, sizeof u->in) != CSRF_OK)
		return;
	if (u->warm)
		(void)csrfi_key_slot_subkeys(u->ctx, &u->ctx->ring.keys[0]);
	c->ctx = u->ctx;
	c->secret = u->secret;
	c->in = u->in;
	u->n = dead_secrets(u->twin, u->key, u->secret, u->s);
	u->ok = 1;
}

static void test_dead_stack(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		dead_what what;
		unsigned version; /* issue version, cookies' too (2: version 2 cookies) */
		const char *sid;
	} rows[] = {
	    {"cookie encode v3", DEAD_COOKIE_ENCODE, 4, NULL},
	    {"cookie encode v2", DEAD_COOKIE_ENCODE, 2, NULL},
	    {"cookie decode v3", DEAD_COOKIE_DECODE, 4, NULL},
	    {"cookie decode v2", DEAD_COOKIE_DECODE, 2, NULL},
	    {"issue v4", DEAD_ISSUE, 4, NULL},
	    {"issue v4 session", DEAD_ISSUE, 4, SID_A},
	    {"issue v3 session", DEAD_ISSUE, 3, SID_A},
	    {"issue v2 session", DEAD_ISSUE, 2, SID_A},
	    {"verify v4", DEAD_VERIFY, 4, NULL},
	    {"verify v4 session", DEAD_VERIFY, 4, SID_A},
	    {"verify v3 session", DEAD_VERIFY, 3, SID_A},
	    {"verify v2 session", DEAD_VERIFY, 2, SID_A},
	    {"field name", DEAD_FIELD_NAME, 4, NULL},
	};
	static uint8_t key[CSRF_KEY_LEN], secret[CSRF_SECRET_LEN];
	static dead_call c;
	static dead_setup u;
	size_t failed = 0;

	for (size_t i = 0; i < 2 * (sizeof rows / sizeof rows[0]); i++) {
		size_t row = i / 2;
		memset(&c, 0, sizeof c);
		memset(&u, 0, sizeof u);
		c.what = rows[row].what;
		c.sid = rows[row].sid;
		u = (dead_setup){.version = rows[row].version, .warm = i % 2, .key = key, .secret = secret, .c = &c};
		tu_in_thread(dead_prepare, &u);
		assert_true(u.ok);
		char name[64];
		snprintf(name, sizeof name, "%s (%s)", rows[row].name, u.warm ? "warm" : "cold");
		failed += (size_t)tu_dead_stack_found(name, dead_run, &c, NULL, u.s, u.n);
		assert_int_equal(c.r, CSRF_OK);
		u.free = 1;
		tu_in_thread(dead_prepare, &u);
		assert_true(u.ok);
	}
	assert_int_equal(failed, 0);
}

int main(void)
{
	/* Before any OpenSSL use, so that every libcrypto allocation counts. */
	int counting = tu_count_openssl_allocs();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_binding),
	    cmocka_unit_test(test_every_position_tampered),
	    cmocka_unit_test(test_raw_fields),
	    cmocka_unit_test(test_truncated_and_oversized),
	    cmocka_unit_test(test_version1),
	    cmocka_unit_test(test_known_answers),
	    cmocka_unit_test(test_known_answer_cookies),
	    cmocka_unit_test(test_issue_version),
	    cmocka_unit_test(test_expiry),
	    cmocka_unit_test(test_v4_known_answers),
	    cmocka_unit_test(test_v4_issue),
	    cmocka_unit_test(test_v4_expiry),
	    cmocka_unit_test(test_issue_without_random),
	    cmocka_unit_test(test_unknown_key_and_rotation),
	    cmocka_unit_test(test_no_session_bind),
	    cmocka_unit_test(test_secret_cookie),
	    cmocka_unit_test(test_field_names),
	    cmocka_unit_test(test_arguments),
	    cmocka_unit_test(test_no_allocation),
	    cmocka_unit_test(test_dead_stack),
	};
	if (!counting) {
		fprintf(stderr, "could not hook libcrypto's allocator\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
