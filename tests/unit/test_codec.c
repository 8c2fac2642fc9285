/* SPDX-License-Identifier: BSD-2-Clause */
/* test_codec.c - src/codec.c: base64url round trips against OpenSSL's base64,
 * rejects (alphabet, lengths, trailing bits), truncated prefixes, input
 * and output flush against a guard page. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "internal.h"
#include "testutil.h"

/* Reference: OpenSSL's standard base64, translated to the URL alphabet and
 * stripped of padding. */
static size_t ref_encode(const uint8_t *in, size_t n, char *out)
{
	unsigned char tmp[512];
	assert_true(n <= 300);
	int len = EVP_EncodeBlock(tmp, in, (int)n);
	size_t o = 0;
	for (int i = 0; i < len; i++) {
		char c = (char)tmp[i];
		if (c == '=')
			break;
		out[o++] = c == '+' ? '-' : c == '/' ? '_' : c;
	}
	return o;
}

/* tu_guard_copy of zero bytes points into the guard page itself and
 * tu_guard_free then faults walking back from it, so an empty input is a
 * one-byte copy and the pointer just past it (still flush against the
 * guard page). */
static char *gcopy(const void *p, size_t n)
{
	return n ? tu_guard_copy(p, n) : tu_guard_copy("", 1) + 1;
}

static void gfree(char *p, size_t n)
{
	tu_guard_free(n ? p : p - 1);
}

static int in_alphabet(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

static void test_round_trip_all_lengths(void **state)
{
	(void)state;
	for (size_t n = 0; n <= 100; n++) {
		uint8_t data[100], back[100];
		char enc[200], ref[200];
		size_t back_len = 999;

		fill(data, n, (unsigned)n);
		size_t elen = CSRF_B64_ENC_LEN(n);
		memset(enc, '#', sizeof enc);
		csrfi_b64url_encode(data, n, enc);
		assert_int_equal(enc[elen], '#'); /* wrote exactly elen characters */
		assert_int_equal(ref_encode(data, n, ref), elen);
		if (memcmp(enc, ref, elen) != 0)
			fail_msg("encoding of length %zu differs from OpenSSL's", n);

		/* Decode from a guard page: the last character is flush against
		 * unreadable memory. */
		char *g = gcopy(enc, elen);
		assert_int_equal(csrfi_b64url_decode(g, elen, back, sizeof back, &back_len), CSRF_OK);
		assert_int_equal(back_len, n);
		assert_memory_equal(back, data, n);

		/* Exactly the needed capacity works, one less is a buffer error. */
		if (n > 0) {
			assert_int_equal(csrfi_b64url_decode(g, elen, back, n, &back_len), CSRF_OK);
			assert_int_equal(csrfi_b64url_decode(g, elen, back, n - 1, &back_len), CSRF_ERR_BUFFER);
		}
		gfree(g, elen);

		/* Output flush against a guard page: encoding writes no more. */
		char *go = gcopy(enc, elen);
		csrfi_b64url_encode(data, n, go);
		assert_memory_equal(go, enc, elen);
		gfree(go, elen);

		uint8_t *gb = (uint8_t *)gcopy(data, n);
		assert_int_equal(csrfi_b64url_decode(enc, elen, gb, n, &back_len), CSRF_OK);
		assert_memory_equal(gb, data, n);
		gfree((char *)gb, n);
	}
}

static const struct {
	const char *in;
	csrf_reason want;
	const char *bytes; /* expected output when CSRF_OK */
	size_t n;
} rows[] = {
    {"", CSRF_OK, "", 0},
    {"AA", CSRF_OK, "\x00", 1},
    {"AQ", CSRF_OK, "\x01", 1},
    {"_w", CSRF_OK, "\xff", 1},
    {"__8", CSRF_OK, "\xff\xff", 2},
    {"____", CSRF_OK, "\xff\xff\xff", 3},
    {"-_-_", CSRF_OK, "\xfb\xff\xbf", 3},
    {"Zm9vYmFy", CSRF_OK, "foobar", 6},
    {"Zm9vYg", CSRF_OK, "foob", 4},
    {"Zm9vYmE", CSRF_OK, "fooba", 5},
    /* impossible lengths */
    {"A", CSRF_MALFORMED, NULL, 0},
    {"AAAAA", CSRF_MALFORMED, NULL, 0},
    {"Zm9vYmFyZ", CSRF_MALFORMED, NULL, 0},
    /* non-zero bits after the last byte */
    {"AB", CSRF_MALFORMED, NULL, 0},
    {"AR", CSRF_MALFORMED, NULL, 0},
    {"__", CSRF_MALFORMED, NULL, 0},
    {"AAB", CSRF_MALFORMED, NULL, 0},
    {"AAD", CSRF_MALFORMED, NULL, 0},
    {"Zm9vYh", CSRF_MALFORMED, NULL, 0},
    {"Zm9vYmF", CSRF_MALFORMED, NULL, 0},
    /* the standard alphabet, padding, whitespace */
    {"Zm9v+mFy", CSRF_MALFORMED, NULL, 0},
    {"Zm9v/mFy", CSRF_MALFORMED, NULL, 0},
    {"Zm9vYg==", CSRF_MALFORMED, NULL, 0},
    {"Zm9vYg=", CSRF_MALFORMED, NULL, 0},
    {"Zm9v YmFy", CSRF_MALFORMED, NULL, 0},
    {"Zm9vYmF\n", CSRF_MALFORMED, NULL, 0},
    {"Zm9v.mFy", CSRF_MALFORMED, NULL, 0},
};

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		uint8_t out[64];
		size_t len = strlen(rows[i].in), out_len = 777;
		char *g = gcopy(rows[i].in, len);
		csrf_reason r = csrfi_b64url_decode(g, len, out, sizeof out, &out_len);
		gfree(g, len);
		if (r != rows[i].want)
			fail_msg("row %zu (\"%s\"): got %d, want %d", i, rows[i].in, r, rows[i].want);
		if (r == CSRF_OK) {
			assert_int_equal(out_len, rows[i].n);
			assert_memory_equal(out, rows[i].bytes, rows[i].n);
		} else {
			assert_int_equal(out_len, 0);
		}
	}
	/* A NUL inside the given length is a character like any other. */
	uint8_t out[8];
	size_t out_len;
	assert_int_equal(csrfi_b64url_decode("AA\0A", 4, out, sizeof out, &out_len), CSRF_MALFORMED);
	/* NULL input with a length is an argument error; NULL with 0 decodes
	 * to nothing. */
	assert_int_equal(csrfi_b64url_decode(NULL, 4, out, sizeof out, &out_len), CSRF_ERR_ARG);
	assert_int_equal(csrfi_b64url_decode(NULL, 0, out, sizeof out, &out_len), CSRF_OK);
	assert_int_equal(out_len, 0);
}

/* Every byte value outside the alphabet, at every position of a valid
 * 8-character string, is rejected, and the output is left wiped. */
static void test_every_bad_character(void **state)
{
	(void)state;
	const char good[] = "Zm9vYmFy";
	for (int c = 0; c < 256; c++) {
		for (size_t pos = 0; pos < 8; pos++) {
			char in[8];
			uint8_t out[6];
			size_t out_len;
			memcpy(in, good, 8);
			in[pos] = (char)c;
			csrf_reason r = csrfi_b64url_decode(in, 8, out, sizeof out, &out_len);
			if (in_alphabet(c)) {
				assert_int_equal(r, CSRF_OK);
			} else {
				if (r != CSRF_MALFORMED)
					fail_msg("byte 0x%02x at %zu accepted", c, pos);
				static const uint8_t zero[6];
				assert_memory_equal(out, zero, sizeof out);
			}
		}
	}
}

/* The same at every position of every well-formed length from 2 to 110
 * characters, so that each block of the vector decoder (whole blocks, the
 * overlapping block over the last groups, the scalar tail) rejects what
 * it alone reads: a few bytes outside the alphabet at each position. */
static void test_bad_character_every_length(void **state)
{
	(void)state;
	static const unsigned char bad[] = {'+', '/', '=', '.', ' ', 0, 0x80, 0xff, '@', '[', '`', '{'};
	char in[110];
	uint8_t out[110];
	size_t out_len;
	for (size_t i = 0; i < sizeof in; i++)
		in[i] = (char)('A' + (i * 7) % 26);
	for (size_t len = 2; len <= sizeof in; len++) {
		if (len % 4 == 1)
			continue;
		if (len % 4 != 0)
			in[len - 1] = 'A'; /* no bits after the last byte */
		char *g = tu_guard_copy(in, len);
		for (size_t pos = 0; pos < len; pos++) {
			for (size_t b = 0; b < sizeof bad; b++) {
				g[pos] = (char)bad[b];
				csrf_reason r = csrfi_b64url_decode(g, len, out, sizeof out, &out_len);
				if (r != CSRF_MALFORMED)
					fail_msg("length %zu: byte 0x%02x at %zu gives %d", len, bad[b], pos, (int)r);
			}
			g[pos] = in[pos];
		}
		tu_guard_free(g);
		assert_int_equal(csrfi_b64url_decode(in, len, out, sizeof out, &out_len), CSRF_OK);
		in[len - 1] = (char)('A' + ((len - 1) * 7) % 26);
	}
}

/* Each decoding path (scalar, SSE2, SSSE3 and AVX2 where the CPU has
 * them) gives the same answer: the same bytes for the encoding of every
 * length up to 120 bytes, and for every byte value at every position of
 * lengths 16 to 44, 64 to 72 and 96 to 104 (the vector paths' whole
 * blocks of 16 and 32 and the last block over the rest, a partial group
 * padded: a signed secret cookie is 103 characters), the same verdict
 * and bytes; and none writes past the bytes it decodes. */
static void test_paths_agree(void **state)
{
	(void)state;
	uint8_t raw[120], a[120], b[120];
	char enc[CSRF_B64_ENC_LEN(120)];
	size_t la, lb;
	for (size_t i = 0; i < sizeof raw; i++)
		raw[i] = (uint8_t)(i * 167 + 13);
	for (size_t n = 0; n <= sizeof raw; n++) {
		size_t len = CSRF_B64_ENC_LEN(n);
		csrfi_b64url_encode(raw, n, enc);
		for (int path = CSRFI_B64_SCALAR; path <= CSRFI_B64_AVX2; path++) {
			memset(a, 0x5a, sizeof a);
			assert_int_equal(csrfi_b64url_decode_path(enc, len, a, sizeof a, &la, path), CSRF_OK);
			assert_int_equal(la, n);
			assert_memory_equal(a, raw, n);
			for (size_t k = n; k < sizeof a; k++) /* nothing written past the bytes decoded */
				if (a[k] != 0x5a)
					fail_msg("%zu bytes, path %d: byte %zu after them written", n, path, k);
		}
	}
	for (size_t len = 16; len <= 104; len++) {
		if (len % 4 == 1 || (len > 44 && len < 64) || (len > 72 && len < 96))
			continue;
		csrfi_b64url_encode(raw, len / 4 * 3 + (len % 4 ? len % 4 - 1 : 0), enc);
		for (size_t pos = 0; pos < len; pos++) {
			char keep = enc[pos];
			for (int c = 0; c < 256; c++) {
				enc[pos] = (char)c;
				csrf_reason ra = csrfi_b64url_decode_path(enc, len, a, sizeof a, &la, CSRFI_B64_SCALAR);
				for (int path = CSRFI_B64_SSE2; path <= CSRFI_B64_AVX2; path++) {
					csrf_reason rb = csrfi_b64url_decode_path(enc, len, b, sizeof b, &lb, path);
					if (ra != rb || (ra == CSRF_OK && (la != lb || memcmp(a, b, la) != 0)))
						fail_msg("length %zu, byte 0x%02x at %zu: path %d gives %d, scalar %d",
						         len, c, pos, path, (int)rb, (int)ra);
				}
			}
			enc[pos] = keep;
		}
	}
}

/* Every prefix of a valid encoding decodes exactly when it is itself the
 * canonical encoding of a byte string, and never reads past its end. */
static void test_truncated_prefixes(void **state)
{
	(void)state;
	for (size_t n = 1; n <= 40; n++) {
		uint8_t data[40], out[40];
		char enc[64], re[64];
		fill(data, n, (unsigned)(n * 31));
		size_t elen = CSRF_B64_ENC_LEN(n);
		csrfi_b64url_encode(data, n, enc);
		for (size_t l = 0; l <= elen; l++) {
			size_t out_len;
			char *g = gcopy(enc, l);
			csrf_reason r = csrfi_b64url_decode(g, l, out, sizeof out, &out_len);
			gfree(g, l);
			csrf_reason want;
			if (l % 4 == 1) {
				want = CSRF_MALFORMED;
			} else {
				size_t bytes = l / 4 * 3 + (l % 4 ? l % 4 - 1 : 0);
				csrfi_b64url_encode(data, bytes, re);
				want = memcmp(re, enc, l) == 0 ? CSRF_OK : CSRF_MALFORMED;
			}
			if (r != want)
				fail_msg("length %zu prefix %zu: got %d want %d", n, l, r, want);
			if (r == CSRF_OK)
				assert_memory_equal(out, data, out_len);
		}
	}
}

/* Oversized input: a long valid string decodes; a short buffer is refused
 * before anything is written. */
static void test_oversized(void **state)
{
	(void)state;
	size_t n = 3000;
	uint8_t *data = malloc(n), *out = malloc(n);
	char *enc = malloc(CSRF_B64_ENC_LEN(n));
	assert_non_null(data);
	assert_non_null(out);
	assert_non_null(enc);
	fill(data, n, 7);
	csrfi_b64url_encode(data, n, enc);
	size_t out_len;
	assert_int_equal(csrfi_b64url_decode(enc, CSRF_B64_ENC_LEN(n), out, n, &out_len), CSRF_OK);
	assert_int_equal(out_len, n);
	assert_memory_equal(out, data, n);
	memset(out, 0x5a, n);
	assert_int_equal(csrfi_b64url_decode(enc, CSRF_B64_ENC_LEN(n), out, 54, &out_len), CSRF_ERR_BUFFER);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(out[i], 0x5a);
	free(data);
	free(out);
	free(enc);
}

/* Hex: the key-file form of keys. Round trip, either case in, lower out,
 * every bad character anywhere fails and leaves nothing behind. */
static void test_hex(void **state)
{
	(void)state;
	uint8_t in[32], out[32];
	char hex[65];
	fill(in, sizeof in, 3);
	csrfx_hex_encode(in, sizeof in, hex);
	hex[64] = '\0';
	for (size_t i = 0; i < 64; i++)
		assert_true((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f'));
	assert_int_equal(csrfx_hex_decode(hex, sizeof out, out), CSRF_OK);
	assert_memory_equal(in, out, sizeof in);
	for (size_t i = 0; i < 64; i++)
		if (hex[i] >= 'a')
			hex[i] = (char)(hex[i] - 32);
	assert_int_equal(csrfx_hex_decode(hex, sizeof out, out), CSRF_OK);
	assert_memory_equal(in, out, sizeof in);
	const char bad[] = {'g', 'G', '/', ':', '@', '`', ' ', '\0', '\xff'};
	for (size_t pos = 0; pos < 64; pos++)
		for (size_t b = 0; b < sizeof bad; b++) {
			char copy[65];
			memcpy(copy, hex, sizeof copy);
			copy[pos] = bad[b];
			memset(out, 0x5a, sizeof out);
			assert_int_equal(csrfx_hex_decode(copy, sizeof out, out), CSRF_MALFORMED);
			for (size_t i = 0; i < sizeof out; i++)
				assert_int_equal(out[i], 0);
		}
}

/* csrfx_is_hex_lower: what the demo's session ids and records accept;
 * every byte value in every position of a run, empty and huge runs, each
 * flush against a guard page. */
static void test_hex_lower(void **state)
{
	(void)state;
	assert_int_equal(csrfx_is_hex_lower("", 0), 0);
	assert_int_equal(csrfx_is_hex_lower("0123456789abcdef", 16), 1);
	for (int c = 0; c < 256; c++) {
		int want = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
		for (size_t pos = 0; pos < 4; pos++) {
			char run[4] = {'a', '0', 'f', '9'};
			run[pos] = (char)c;
			char *g = tu_guard_copy(run, sizeof run);
			assert_int_equal(csrfx_is_hex_lower(g, sizeof run), want);
			tu_guard_free(g);
		}
	}
	size_t big = 1u << 20;
	char *b = malloc(big);
	assert_non_null(b);
	memset(b, 'e', big);
	char *g = tu_guard_copy(b, big);
	assert_int_equal(csrfx_is_hex_lower(g, big), 1);
	tu_guard_free(g);
	b[big - 1] = 'E';
	g = tu_guard_copy(b, big);
	assert_int_equal(csrfx_is_hex_lower(g, big), 0);
	tu_guard_free(g);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip_all_lengths),
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_every_bad_character),
	    cmocka_unit_test(test_bad_character_every_length),
	    cmocka_unit_test(test_paths_agree),
	    cmocka_unit_test(test_truncated_prefixes),
	    cmocka_unit_test(test_oversized),
	    cmocka_unit_test(test_hex),
	    cmocka_unit_test(test_hex_lower),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
