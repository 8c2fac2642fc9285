/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mac.c - the keyed MAC every token, binding and cookie signature uses:
 * HMAC-SHA256 (RFC 2104) with the inner and outer hash states computed
 * once per key, so a MAC costs the message's blocks plus one compression
 * and allocates nothing.
 */
#include "internal.h"

#define HMAC_BLOCK 64

/* The hot path's fixed-count loops over the message parts and the
 * digest's words, unrolled (gcc keeps them as loops at -O2): a MAC of
 * the token or cookie saves about 75 instructions of loop control. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8 /* the pragma's first release */
#define UNROLL_4 _Pragma("GCC unroll 4")
#define UNROLL_8 _Pragma("GCC unroll 8")
#else
#define UNROLL_4
#define UNROLL_8
#endif

void csrfi_mac_init(csrfi_mac_key *k, const uint8_t *key, size_t key_len)
{
	uint8_t block[HMAC_BLOCK];
	uint8_t pad[HMAC_BLOCK];

	memset(block, 0, sizeof block);
	if (key_len > HMAC_BLOCK) {
		/* RFC 2104: a key longer than the block is replaced by its hash. */
		csrfi_sha256_ctx h;
		csrfi_sha256_init(&h);
		csrfi_sha256_update(&h, key, key_len);
		csrfi_sha256_final(&h, block);
		csrfi_wipe(&h, sizeof h);
	} else if (key_len > 0) {
		memcpy(block, key, key_len);
	}

	for (size_t i = 0; i < HMAC_BLOCK; i++)
		pad[i] = block[i] ^ 0x36;
	csrfi_sha256_init(&k->inner);
	csrfi_sha256_update(&k->inner, pad, sizeof pad);

	for (size_t i = 0; i < HMAC_BLOCK; i++)
		pad[i] = block[i] ^ 0x5c;
	csrfi_sha256_init(&k->outer);
	csrfi_sha256_update(&k->outer, pad, sizeof pad);

	k->memo[0] = k->memo[1] = 0;
	k->memo_set = 0;
	csrfi_wipe(block, sizeof block);
	csrfi_wipe(pad, sizeof pad);
}

#if CSRFI_SHA256_BLOCK
static inline void store_be32(uint8_t *p, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap32(v);
#elif !(defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
	uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
	memcpy(&v, b, 4);
#endif
	memcpy(p, &v, 4);
}

void csrfi_sha256_last_block(csrfi_sha256_ctx *h, uint8_t block[HMAC_BLOCK], size_t n, uint64_t total,
                             uint8_t out[CSRF_SHA256_LEN])
{
	uint64_t bits = total * 8;

	block[n] = 0x80;
	memset(block + n + 1, 0, HMAC_BLOCK - 8 - (n + 1));
	store_be32(block + HMAC_BLOCK - 8, (uint32_t)(bits >> 32));
	store_be32(block + HMAC_BLOCK - 4, (uint32_t)bits);
	csrfi_sha256_block(h, block);
	UNROLL_8
	for (unsigned i = 0; i < 8; i++)
		store_be32(out + 4 * i, csrfi_sha256_word(h, i));
}

/* csrfi_mac of a message of n bytes, n at most CSRFI_SHA256_ONE_BLOCK, that parts
 * hold: each hash is one compression from the key's state, its block
 * padded here. Every tag, bind without a session and version 3 cookie
 * of the hot path is such a message. */
static void mac_one_block(const csrfi_mac_key *k, const void *const parts[4], const size_t lens[4], size_t n,
                          uint8_t out[CSRF_MAC_LEN])
{
	uint8_t block[HMAC_BLOCK];
	csrfi_sha256_ctx h;
	size_t at = 0;

	UNROLL_4
	for (size_t i = 0; i < 4; i++) {
		if (parts[i] && lens[i]) {
			memcpy(block + at, parts[i], lens[i]);
			at += lens[i];
		}
	}
	h = k->inner;
	csrfi_sha256_last_block(&h, block, n, HMAC_BLOCK + n, block);
	h = k->outer;
	csrfi_sha256_last_block(&h, block, CSRF_MAC_LEN, HMAC_BLOCK + CSRF_MAC_LEN, out);

	csrfi_wipe(&h, sizeof h);
	csrfi_wipe(block, sizeof block);
}
#endif

void csrfi_mac(const csrfi_mac_key *k, const void *p1, size_t n1, const void *p2, size_t n2, const void *p3, size_t n3,
               const void *p4, size_t n4, uint8_t out[CSRF_MAC_LEN])
{
	const void *parts[4] = {p1, p2, p3, p4};
	const size_t lens[4] = {n1, n2, n3, n4};
	uint8_t inner_hash[CSRF_MAC_LEN];
	csrfi_sha256_ctx h;

#if CSRFI_SHA256_BLOCK
	size_t total = 0;
	UNROLL_4
	for (size_t i = 0; i < 4; i++)
		if (parts[i] && lens[i])
			total += lens[i] <= CSRFI_SHA256_ONE_BLOCK ? lens[i] : CSRFI_SHA256_ONE_BLOCK + 1;
	if (total <= CSRFI_SHA256_ONE_BLOCK) {
		mac_one_block(k, parts, lens, total, out);
		return;
	}
#endif
	h = k->inner;
	for (size_t i = 0; i < 4; i++)
		if (parts[i] && lens[i])
			csrfi_sha256_update(&h, parts[i], lens[i]);
	csrfi_sha256_final(&h, inner_hash);

	h = k->outer;
	csrfi_sha256_update(&h, inner_hash, sizeof inner_hash);
	csrfi_sha256_final(&h, out);

	csrfi_wipe(&h, sizeof h);
	csrfi_wipe(inner_hash, sizeof inner_hash);
}

void csrfi_mac_derive(const csrfi_mac_key *parent, const char *label, csrfi_mac_key *out)
{
	uint8_t sub[CSRF_MAC_LEN];

	csrfi_mac(parent, label, strlen(label), NULL, 0, NULL, 0, NULL, 0, sub);
	csrfi_mac_init(out, sub, sizeof sub);
	csrfi_wipe(sub, sizeof sub);
}

void csrfi_mac_wipe(csrfi_mac_key *k)
{
	if (k)
		csrfi_wipe(k, sizeof *k);
}
