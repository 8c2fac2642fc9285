/* SPDX-License-Identifier: BSD-2-Clause */
/* test_mac.c - src/mac.c: RFC 4231 known answers, message split across
 * parts, keys around the block size, against OpenSSL's one-shot HMAC. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "internal.h"
#include "testutil.h"

static size_t unhex(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = strlen(hex) / 2;
	assert_true(n <= cap);
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		char two[3] = {hex[2 * i], hex[2 * i + 1], 0};
		v = (unsigned)strtoul(two, NULL, 16);
		out[i] = (uint8_t)v;
	}
	return n;
}

/* RFC 4231 section 4: key, data and HMAC-SHA-256 as hex; cmp_len is the
 * number of output bytes the RFC gives (16 for the truncation case). */
static const struct {
	const char *name;
	const char *key;
	const char *data;
	const char *mac;
	size_t cmp_len;
} rfc4231[] = {
    {"case 1", "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265",
     "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7", 32},
    {"case 2", "4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
     "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", 32},
    {"case 3", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
     "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
     "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe", 32},
    {"case 4", "0102030405060708090a0b0c0d0e0f10111213141516171819",
     "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd",
     "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b", 32},
    {"case 5", "0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c", "546573742057697468205472756e636174696f6e",
     "a3b6167473100ee06e0c796c2955552b", 16},
    {"case 6",
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
     "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048617368204b6579204669727374",
     "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54", 32},
    {"case 7",
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
     "5468697320697320612074657374207573696e672061206c6172676572207468616e20626c6f636b2d73697a65206b657920616e642061"
     "206c6172676572207468616e20626c6f636b2d73697a6520646174612e20546865206b6579206e6565647320746f20626520686173686564"
     "206265666f7265206265696e6720757365642062792074686520484d414320616c676f726974686d2e",
     "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2", 32},
};

static void test_rfc4231(void **state)
{
	(void)state;
	for (size_t t = 0; t < sizeof rfc4231 / sizeof rfc4231[0]; t++) {
		uint8_t key[256], data[256], want[32], got[CSRF_MAC_LEN];
		size_t klen = unhex(rfc4231[t].key, key, sizeof key);
		size_t dlen = unhex(rfc4231[t].data, data, sizeof data);
		size_t wlen = unhex(rfc4231[t].mac, want, sizeof want);
		csrfi_mac_key k;

		assert_int_equal(wlen, rfc4231[t].cmp_len);
		csrfi_mac_init(&k, key, klen);
		csrfi_mac(&k, data, dlen, NULL, 0, NULL, 0, NULL, 0, got);
		if (memcmp(got, want, wlen) != 0)
			fail_msg("RFC 4231 %s", rfc4231[t].name);

		/* The same message split over four parts at every pair of cuts. */
		for (size_t a = 0; a <= dlen; a++) {
			for (size_t b = a; b <= dlen; b += 7) {
				uint8_t split[CSRF_MAC_LEN];
				size_t c = b + (dlen - b) / 2;
				csrfi_mac(&k, data, a, data + a, b - a, data + b, c - b, data + c, dlen - c, split);
				if (memcmp(split, got, sizeof got) != 0)
					fail_msg("%s split at %zu/%zu/%zu", rfc4231[t].name, a, b, c);
			}
		}
		/* One bit of key or data changes the MAC. */
		key[0] ^= 1;
		csrfi_mac_key k2;
		csrfi_mac_init(&k2, key, klen);
		csrfi_mac(&k2, data, dlen, NULL, 0, NULL, 0, NULL, 0, got);
		assert_true(memcmp(got, want, wlen) != 0);
		data[dlen - 1] ^= 0x80;
		csrfi_mac(&k, data, dlen, NULL, 0, NULL, 0, NULL, 0, got);
		assert_true(memcmp(got, want, wlen) != 0);
		csrfi_mac_wipe(&k);
		csrfi_mac_wipe(&k2);
	}
}

/* Key lengths on both sides of the 64-byte block and message lengths over
 * several blocks, against OpenSSL's own HMAC. */
static void test_against_openssl(void **state)
{
	(void)state;
	static const size_t key_lens[] = {0, 1, 31, 32, 63, 64, 65, 100, 128, 200};
	uint8_t key[200], msg[300];

	for (size_t i = 0; i < sizeof key; i++)
		key[i] = (uint8_t)(i * 7 + 3);
	for (size_t i = 0; i < sizeof msg; i++)
		msg[i] = (uint8_t)(i * 13 + 5);
	for (size_t ki = 0; ki < sizeof key_lens / sizeof key_lens[0]; ki++) {
		csrfi_mac_key k;
		csrfi_mac_init(&k, key, key_lens[ki]);
		for (size_t m = 0; m <= sizeof msg; m += 17) {
			uint8_t got[CSRF_MAC_LEN], want[EVP_MAX_MD_SIZE];
			unsigned wlen = 0;
			csrfi_mac(&k, msg, m, NULL, 0, NULL, 0, NULL, 0, got);
			assert_non_null(HMAC(EVP_sha256(), key, (int)key_lens[ki], msg, m, want, &wlen));
			assert_int_equal(wlen, CSRF_MAC_LEN);
			if (memcmp(got, want, CSRF_MAC_LEN) != 0)
				fail_msg("key length %zu, message length %zu", key_lens[ki], m);
		}
		csrfi_mac_wipe(&k);
	}
}

/* The precomputed state is not consumed: the same key gives the same MAC
 * twice, and wiping clears the state. */
static void test_reuse_and_wipe(void **state)
{
	(void)state;
	static const uint8_t key[32] = {1, 2, 3};
	static const uint8_t zero[sizeof(csrfi_mac_key)];
	uint8_t a[CSRF_MAC_LEN], b[CSRF_MAC_LEN];
	csrfi_mac_key k;

	csrfi_mac_init(&k, key, sizeof key);
	csrfi_mac(&k, "abc", 3, NULL, 0, NULL, 0, NULL, 0, a);
	csrfi_mac(&k, "abc", 3, NULL, 0, NULL, 0, NULL, 0, b);
	assert_memory_equal(a, b, sizeof a);
	csrfi_mac(&k, "abd", 3, NULL, 0, NULL, 0, NULL, 0, b);
	assert_memory_not_equal(a, b, sizeof a);
	csrfi_mac_wipe(&k);
	assert_memory_equal(&k, zero, sizeof k);
	csrfi_mac_wipe(NULL);
}

/* The compare MACs, tags and binds go through (csrfi_ct_eq_words)
 * answers as memcmp for every length up to 40 bytes, whole words or not:
 * equal buffers compare equal, and one bit flipped anywhere, the last
 * bytes after the whole words included, makes them differ. */
static void test_ct_eq_words(void **state)
{
	(void)state;
	uint8_t a[40], b[40];
	for (size_t i = 0; i < sizeof a; i++)
		a[i] = (uint8_t)(i * 29 + 7);
	for (size_t n = 0; n <= sizeof a; n++) {
		memcpy(b, a, sizeof b);
		assert_int_equal(csrfi_ct_eq_words(a, b, n), 1);
		for (size_t pos = 0; pos < n; pos++)
			for (int bit = 0; bit < 8; bit++) {
				b[pos] ^= (uint8_t)(1u << bit);
				if (csrfi_ct_eq_words(a, b, n) != 0)
					fail_msg("length %zu: a flipped bit %d of byte %zu compares equal", n, bit,
					         pos);
				b[pos] ^= (uint8_t)(1u << bit);
			}
		if (n < sizeof b) { /* a byte past n is not compared */
			b[n] ^= 1;
			assert_int_equal(csrfi_ct_eq_words(a, b, n), 1);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rfc4231),
	    cmocka_unit_test(test_against_openssl),
	    cmocka_unit_test(test_reuse_and_wipe),
	    cmocka_unit_test(test_ct_eq_words),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
