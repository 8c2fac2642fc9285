/* SPDX-License-Identifier: BSD-2-Clause */
/* test_sha256.c - src/sha256.c (the built-in SHA-256) and src/mac.c
 * (HMAC-SHA256 over the build's backend) against published vectors:
 *  - NIST CAVP SHA256ShortMsg.rsp, the byte-oriented messages of 0 to 9
 *    bytes (Len = 0..72 bits), and the FIPS 180-2 examples ("abc", the
 *    448-bit and 896-bit messages, a million 'a') for the long messages;
 *  - the CAVP Monte Carlo procedure (SHA256Monte.rsp) from its published
 *    seed, with the file's first and last checkpoints (COUNT = 0 and 99);
 *  - RFC 4231 test cases 1 to 7 for HMAC-SHA256 (case 5 truncated to 128
 *    bits, as the RFC gives it), and keys of 63, 64 and 65 bytes.
 * Every CAVP vector (ShortMsg, LongMsg, all 100 Monte Carlo checkpoints)
 * is checked from NIST's files by cavp.c (unit.cavp, router.cavp.*);
 * where OpenSSL is linked (the default build) the built-in hash is also
 * compared with libcrypto's at run time, on every length up to 1100 bytes
 * fed in pieces, long messages, and all 100 Monte Carlo checkpoints.
 *
 * Plain C without cmocka, so the cross builds run it under qemu-user
 * (tests/router), where no cmocka or libcrypto for the target exists. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#if !(defined(CSRF_CRYPTO_BUILTIN) && CSRF_CRYPTO_BUILTIN) && !(defined(CSRF_CRYPTO_MBEDTLS) && CSRF_CRYPTO_MBEDTLS)
#define WITH_OPENSSL 1
#include <openssl/sha.h>
#endif

static int failures;

#define CHECK(cond, ...)                                                                                               \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			failures++;                                                                                    \
			fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                                \
			fprintf(stderr, __VA_ARGS__);                                                                  \
			fputc('\n', stderr);                                                                           \
		}                                                                                                      \
	} while (0)

static int nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	abort();
}

static size_t unhex(const char *hex, uint8_t *out)
{
	size_t n = strlen(hex) / 2;
	for (size_t i = 0; i < n; i++)
		out[i] = (uint8_t)(nibble(hex[2 * i]) << 4 | nibble(hex[2 * i + 1]));
	return n;
}

static void tohex(const uint8_t *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

static void builtin(const void *msg, size_t n, uint8_t out[32])
{
	csrfi_sha256_builtin_ctx c;
	csrfi_sha256_builtin_init(&c);
	csrfi_sha256_builtin_update(&c, msg, n);
	csrfi_sha256_builtin_final(&c, out);
}

static void expect_digest(const char *what, const uint8_t got[32], const char *want)
{
	char hex[65];
	tohex(got, 32, hex);
	CHECK(strcmp(hex, want) == 0, "%s: got %s, want %s", what, hex, want);
}

/* SHA256ShortMsg.rsp, Len = 0 to 72 bits. */
static const struct {
	const char *msg, *md;
} short_msgs[] = {
    {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    {"d3", "28969cdfa74a12c82f3bad960b0b000aca2ac329deea5c2328ebc6f2ba9802c1"},
    {"11af", "5ca7133fa735326081558ac312c620eeca9970d1e70a4b95533d956f072d1f98"},
    {"b4190e", "dff2e73091f6c05e528896c4c831b9448653dc2ff043528f6769437bc7b975c2"},
    {"74ba2521", "b16aa56be3880d18cd41e68384cf1ec8c17680c45a02b1575dc1518923ae8b0e"},
    {"c299209682", "f0887fe961c9cd3beab957e8222494abb969b1ce4c6557976df8b0f6d20e9166"},
    {"e1dc724d5621", "eca0a060b489636225b4fa64d267dabbe44273067ac679f20820bddc6b6a90ac"},
    {"06e076f5a442d5", "3fd877e27450e6bbd5d74bb82f9870c64c66e109418baa8e6bbcff355e287926"},
    {"5738c929c4f4ccb6", "963bb88f27f512777aab6c8b1a02c70ec0ad651d428f870036e1917120fb48bf"},
    {"3334c58075d3f4139e", "078da3d77ed43bd3037a433fd0341855023793f9afd08b4b08ea1e5597ceef20"},
};

static void test_short_msgs(void)
{
	for (size_t i = 0; i < sizeof short_msgs / sizeof short_msgs[0]; i++) {
		uint8_t msg[16], md[32];
		size_t n = unhex(short_msgs[i].msg, msg);
		builtin(msg, n, md);
		char what[64];
		snprintf(what, sizeof what, "ShortMsg Len=%zu", n * 8);
		expect_digest(what, md, short_msgs[i].md);
	}
}

/* FIPS 180-2's examples: one block, two blocks (448 bits leave no room
 * for the length), 896 bits, and a million 'a' fed in uneven pieces. */
static void test_long_msgs(void)
{
	uint8_t md[32];
	builtin("abc", 3, md);
	expect_digest("abc", md, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	builtin(m448, strlen(m448), md);
	expect_digest("448 bits", md, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	const char *m896 =
	    "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsm"
	    "nopqrstnopqrstu";
	builtin(m896, strlen(m896), md);
	expect_digest("896 bits", md, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");

	static uint8_t a[1000000];
	memset(a, 'a', sizeof a);
	csrfi_sha256_builtin_ctx c;
	csrfi_sha256_builtin_init(&c);
	size_t off = 0, step = 1;
	while (off < sizeof a) {
		size_t n = step < sizeof a - off ? step : sizeof a - off;
		csrfi_sha256_builtin_update(&c, a + off, n);
		off += n;
		step = step * 7 % 997 + 1;
	}
	csrfi_sha256_builtin_final(&c, md);
	expect_digest("a million 'a'", md, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	builtin(a, sizeof a, md);
	expect_digest("a million 'a' at once", md, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* SHA256Monte.rsp: MD0 = MD1 = MD2 = Seed; MDi = SHA(MDi-3 || MDi-2 ||
 * MDi-1) for i = 3..1002; the checkpoint is MD1002, the next Seed. */
static void test_monte_carlo(void)
{
	uint8_t seed[32], md[3][32], msg[96], out[100][32];
	unhex("6d1e72ad03ddeb5de891e572e2396f8da015d899ef0e79503152d6010a3fe691", seed);
	for (int j = 0; j < 100; j++) {
		memcpy(md[0], seed, 32);
		memcpy(md[1], seed, 32);
		memcpy(md[2], seed, 32);
		for (int i = 3; i < 1003; i++) {
			memcpy(msg, md[0], 32);
			memcpy(msg + 32, md[1], 32);
			memcpy(msg + 64, md[2], 32);
			memmove(md[0], md[1], 64);
			builtin(msg, sizeof msg, md[2]);
		}
		memcpy(seed, md[2], 32);
		memcpy(out[j], seed, 32);
	}
	expect_digest("Monte Carlo COUNT = 0", out[0],
	              "e93c330ae5447738c8aa85d71a6c80f2a58381d05872d26bdd39f1fcd4f2b788");
	expect_digest("Monte Carlo COUNT = 99", out[99],
	              "6a912ba4188391a78e6f13d88ed2d14e13afce9db6f7dcbf4a48c24f3db02778");
#ifdef WITH_OPENSSL
	/* Every checkpoint, from libcrypto's SHA-256 at run time. */
	unhex("6d1e72ad03ddeb5de891e572e2396f8da015d899ef0e79503152d6010a3fe691", seed);
	for (int j = 0; j < 100; j++) {
		memcpy(md[0], seed, 32);
		memcpy(md[1], seed, 32);
		memcpy(md[2], seed, 32);
		for (int i = 3; i < 1003; i++) {
			memcpy(msg, md, 96);
			memmove(md[0], md[1], 64);
			SHA256(msg, sizeof msg, md[2]);
		}
		memcpy(seed, md[2], 32);
		CHECK(memcmp(out[j], seed, 32) == 0, "Monte Carlo COUNT = %d differs from OpenSSL", j);
	}
#endif
}

#ifdef WITH_OPENSSL
/* Every length up to 1100 bytes (all the padding cases, several blocks),
 * in one piece and in pieces of every size up to 70, against libcrypto. */
static void test_against_openssl(void)
{
	static uint8_t buf[1100];
	uint32_t x = 0x12345678;
	for (size_t i = 0; i < sizeof buf; i++) {
		x = x * 1103515245 + 12345;
		buf[i] = (uint8_t)(x >> 16);
	}
	for (size_t n = 0; n <= sizeof buf; n++) {
		uint8_t want[32], got[32];
		SHA256(buf, n, want);
		builtin(buf, n, got);
		CHECK(memcmp(want, got, 32) == 0, "length %zu differs from OpenSSL", n);
		for (size_t piece = 1; piece <= 70 && n <= 300; piece++) {
			csrfi_sha256_builtin_ctx c;
			csrfi_sha256_builtin_init(&c);
			for (size_t off = 0; off < n; off += piece)
				csrfi_sha256_builtin_update(&c, buf + off, piece < n - off ? piece : n - off);
			csrfi_sha256_builtin_final(&c, got);
			CHECK(memcmp(want, got, 32) == 0, "length %zu in pieces of %zu differs from OpenSSL", n, piece);
		}
	}
}
#endif

/* The state is wiped by final: nothing of the message stays behind. */
static void test_final_wipes(void)
{
	csrfi_sha256_builtin_ctx c, zero;
	uint8_t md[32];
	memset(&zero, 0, sizeof zero);
	csrfi_sha256_builtin_init(&c);
	csrfi_sha256_builtin_update(&c, "secret key material", 19);
	csrfi_sha256_builtin_final(&c, md);
	CHECK(memcmp(&c, &zero, sizeof c) == 0, "the hash state was not wiped");
}

/* RFC 4231 section 4, test cases 1 to 7, through mac.c (the build's
 * backend: libcrypto's SHA-256 by default, sha256.c with builtin,
 * libmbedcrypto with mbedtls). */
static void test_rfc4231(void)
{
	static uint8_t k_aa131[131], d_dd50[50], d_cd50[50];
	memset(k_aa131, 0xaa, sizeof k_aa131);
	memset(d_dd50, 0xdd, sizeof d_dd50);
	memset(d_cd50, 0xcd, sizeof d_cd50);
	uint8_t k4[25];
	for (int i = 0; i < 25; i++)
		k4[i] = (uint8_t)(i + 1);
	const uint8_t k0b[20] = {0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b,
	                         0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b};
	uint8_t kaa20[20], k0c[20];
	memset(kaa20, 0xaa, sizeof kaa20);
	memset(k0c, 0x0c, sizeof k0c);
	const char *d7 =
	    "This is a test using a larger than block-size key and a larger than block-size data. The key needs "
	    "to be hashed before being used by the HMAC algorithm.";
	const struct {
		const uint8_t *key;
		size_t key_len;
		const void *data;
		size_t data_len;
		const char *mac;
	} cases[] = {
	    {k0b, 20, "Hi There", 8, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
	    {(const uint8_t *)"Jefe", 4, "what do ya want for nothing?", 28,
	     "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
	    {kaa20, 20, d_dd50, 50, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
	    {k4, 25, d_cd50, 50, "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
	    {k0c, 20, "Test With Truncation", 20, "a3b6167473100ee06e0c796c2955552b"},
	    {k_aa131, 131, "Test Using Larger Than Block-Size Key - Hash Key First", 54,
	     "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
	    {k_aa131, 131, d7, strlen(d7), "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		csrfi_mac_key k;
		uint8_t mac[CSRF_MAC_LEN];
		char hex[65];
		csrfi_mac_init(&k, cases[i].key, cases[i].key_len);
		csrfi_mac(&k, cases[i].data, cases[i].data_len, NULL, 0, NULL, 0, NULL, 0, mac);
		tohex(mac, sizeof mac, hex);
		/* case 5 gives the first 128 bits only */
		size_t want_len = strlen(cases[i].mac);
		CHECK(strncmp(hex, cases[i].mac, want_len) == 0, "RFC 4231 test case %zu: got %.*s, want %s", i + 1,
		      (int)want_len, hex, cases[i].mac);
		/* the same message split over the four parts */
		size_t n = cases[i].data_len, a = n / 3, b = n / 2;
		const uint8_t *d = cases[i].data;
		uint8_t mac2[CSRF_MAC_LEN];
		csrfi_mac(&k, d, a, d + a, b - a, NULL, 0, d + b, n - b, mac2);
		CHECK(memcmp(mac, mac2, sizeof mac) == 0, "RFC 4231 test case %zu in parts differs", i + 1);
		csrfi_mac_wipe(&k);
	}
}

/* Keys of 63, 64 and 65 bytes (0x00, 0x01, ...): up to the block size a
 * key is padded with zeros, beyond it hashed first (RFC 2104); the
 * boundary itself is in neither RFC 4231 nor the fuzzer's fixed cases.
 * The MACs, of an empty message and of "boundary", from Python's hmac and
 * the openssl command, which agree. */
static void test_key_at_block_size(void)
{
	static const struct {
		size_t key_len;
		const char *msg, *mac;
	} cases[] = {
	    {63, "", "91a6da6e552749b42d019214821d37ec711ae369b9e717aa8b5e48ec2e9ca359"},
	    {63, "boundary", "5b3b28939f062233edd3b78c7984acc50bdb173013a53a3175a1b667dd4cdae0"},
	    {64, "", "3499f163f48604c0b15ac89e4e7c66f314fb3b203b8ac2f564828e62f6be9d9d"},
	    {64, "boundary", "04660fc313657aa3500078e1f2788cc4e328654092b137f946516e4d7a17adae"},
	    {65, "", "93ff3114f20ef700222fc1c0334737a51a88740dc0dd2ce0ab3151f0a4a0e85a"},
	    {65, "boundary", "ea8a9678017bce7c50df43ced20cc4b112ed884969720bb2ec14e24ce582f037"},
	};
	uint8_t key[65];
	for (size_t i = 0; i < sizeof key; i++)
		key[i] = (uint8_t)i;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		csrfi_mac_key k;
		uint8_t mac[CSRF_MAC_LEN];
		char what[64];
		csrfi_mac_init(&k, key, cases[i].key_len);
		csrfi_mac(&k, cases[i].msg, strlen(cases[i].msg), NULL, 0, NULL, 0, NULL, 0, mac);
		snprintf(what, sizeof what, "HMAC, key of %zu bytes, message \"%s\"", cases[i].key_len, cases[i].msg);
		expect_digest(what, mac, cases[i].mac);
		csrfi_mac_wipe(&k);
	}
}

int main(void)
{
	test_short_msgs();
	test_long_msgs();
	test_monte_carlo();
	test_final_wipes();
	test_rfc4231();
	test_key_at_block_size();
#ifdef WITH_OPENSSL
	test_against_openssl();
	printf("backend openssl; built-in SHA-256 also compared with libcrypto\n");
#elif defined(CSRF_CRYPTO_MBEDTLS) && CSRF_CRYPTO_MBEDTLS
	printf("backend mbedtls\n");
#else
	printf("backend builtin\n");
#endif
	if (failures) {
		printf("test_sha256: %d failures\n", failures);
		return 1;
	}
	printf("test_sha256: all vectors pass\n");
	return 0;
}
