/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sha256.c - the built-in SHA-256 (FIPS 180-4), the hash of the "builtin"
 * crypto backend (CSRF_CRYPTO=builtin: a router's csrf-cgi with nothing but
 * libc). Compiled in every build under its own names, so the OpenSSL build
 * can compare the two (fuzz/fuzz_crypto.c, tests/unit/test_sha256.c); the
 * library's csrfi_sha256_* reach it only in the builtin backend.
 *
 * Portable C, no table indexed by data and no branch on data: the same
 * time for every message of a length. Byte order is explicit (big-endian
 * words read and written byte by byte), so a MIPS or ARM build computes
 * the same digests as x86-64.
 */
#include "internal.h"

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t ror(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static inline uint32_t load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline void store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

#if defined(__GNUC__) || defined(__clang__)
#define SHA_NOINLINE __attribute__((noinline))
#else
#define SHA_NOINLINE
#endif

/* One compression per 64-byte block (FIPS 180-4 6.2.2), the message
 * schedule kept as a 16-word ring. Never inlined: its frame is the one
 * burn_frame covers. */
static SHA_NOINLINE void compress_run(uint32_t h[8], const uint8_t *block, size_t nblocks)
{
	uint32_t w[16];

	while (nblocks--) {
		uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
		for (unsigned t = 0; t < 64; t++) {
			uint32_t wt;
			if (t < 16) {
				wt = load_be32(block + 4 * t);
			} else {
				uint32_t w15 = w[(t - 15) & 15], w2 = w[(t - 2) & 15];
				uint32_t s0 = ror(w15, 7) ^ ror(w15, 18) ^ (w15 >> 3);
				uint32_t s1 = ror(w2, 17) ^ ror(w2, 19) ^ (w2 >> 10);
				wt = w[t & 15] + s0 + w[(t - 7) & 15] + s1;
			}
			w[t & 15] = wt;
			uint32_t t1 = hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + wt;
			uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
			hh = g;
			g = f;
			f = e;
			e = d + t1;
			d = c;
			c = b;
			b = a;
			a = t1 + t2;
		}
		h[0] += a;
		h[1] += b;
		h[2] += c;
		h[3] += d;
		h[4] += e;
		h[5] += f;
		h[6] += g;
		h[7] += hh;
		block += 64;
	}
	csrfi_wipe(w, sizeof w);
}

/* Where compress_run's frame was, zeroed. With few registers (32-bit ARM:
 * thirteen) the compiler spills the working variables a..h, the chaining
 * value of a keyed state when an HMAC key's subkeys are hashed or used,
 * to slots of that frame that csrfi_wipe cannot name; called from the same
 * frame right after it, this function's array lies over them. 512 bytes:
 * compress_run's frame is about 200 on every target built here. */
static SHA_NOINLINE void burn_frame(void)
{
	uint8_t pad[512];
	csrfi_wipe(pad, sizeof pad);
}

static void compress(uint32_t h[8], const uint8_t *block, size_t nblocks)
{
	compress_run(h, block, nblocks);
	burn_frame();
}

void csrfi_sha256_builtin_init(csrfi_sha256_builtin_ctx *c)
{
	static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	                               0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	memcpy(c->h, iv, sizeof iv);
	c->len = 0;
}

void csrfi_sha256_builtin_update(csrfi_sha256_builtin_ctx *c, const void *data, size_t n)
{
	const uint8_t *p = data;
	size_t used = (size_t)(c->len & 63);

	if (n == 0)
		return;
	c->len += n;
	if (used) {
		size_t take = 64 - used < n ? 64 - used : n;
		memcpy(c->buf + used, p, take);
		p += take;
		n -= take;
		if (used + take < 64)
			return;
		compress(c->h, c->buf, 1);
	}
	if (n >= 64) {
		compress(c->h, p, n / 64);
		p += n & ~(size_t)63;
		n &= 63;
	}
	if (n)
		memcpy(c->buf, p, n);
}

/* Pads with 0x80, zeros and the length in bits (64-bit big-endian),
 * writes the digest and wipes the state. */
void csrfi_sha256_builtin_final(csrfi_sha256_builtin_ctx *c, uint8_t out[CSRF_SHA256_LEN])
{
	uint64_t bits = c->len << 3;
	size_t used = (size_t)(c->len & 63);

	c->buf[used++] = 0x80;
	if (used > 56) {
		memset(c->buf + used, 0, 64 - used);
		compress(c->h, c->buf, 1);
		used = 0;
	}
	memset(c->buf + used, 0, 56 - used);
	for (unsigned i = 0; i < 8; i++)
		c->buf[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
	compress(c->h, c->buf, 1);
	for (unsigned i = 0; i < 8; i++)
		store_be32(out + 4 * i, c->h[i]);
	csrfi_wipe(c, sizeof *c);
}

void csrfi_sha256_builtin_block(csrfi_sha256_builtin_ctx *c, const uint8_t block[64])
{
	compress(c->h, block, 1);
}
