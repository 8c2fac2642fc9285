/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * inject_scan.c - the block classifier under the injector's tokenizer
 * (inject.c): 64 bytes of a chunk at a time become bitmasks of the bytes
 * its states stop at (struct inj_block), so that a state skips a run of
 * text, a name or a value by finding the next set bit instead of reading
 * byte by byte (simdjson's structural index, Lemire's HTML scanning).
 * One classifier per instruction set: SSE2 (every x86-64), AVX2 (chosen at
 * run time), NEON (ARM), a portable one in words of 64 or 32 bits
 * (SWAR), and one a byte at a time, the reference the others are tested
 * against (it also has the tokenizer read every tag in full, where the
 * others let it skip the tags that change nothing: inject.c, plain_tag).
 * Every one computes the same masks by the same definition, so the tokenizer's
 * reading never depends on the path; the choice is made once per process
 * (CSRF_SCAN names a path, for tests and measurements). The page's bytes
 * are only read, never copied, and never read outside [p, p + n).
 */
#include "inject_shared.h"

#include <stdlib.h>

#if defined(__x86_64__) || defined(__i386__)
#if defined(__SSE2__)
#include <emmintrin.h>
#define HAVE_SSE2 1
#endif
#if defined(__GNUC__) && (defined(__clang__) || __GNUC__ >= 5)
#include <immintrin.h>
#define HAVE_AVX2 1
#define TARGET_AVX2 __attribute__((target("avx2")))
#endif
#endif
#if defined(__ARM_NEON) || defined(__ARM_NEON__)
#include <arm_neon.h>
#define HAVE_NEON 1
#endif

/* The classes, one bit each, of a byte a time (the reference and the
 * tail of a chunk): bit 0 '<', bit 1 '>' or a quote, bit 2 a byte up to
 * ' ' or '/', '=', '>'. */
#define SC(c)                                                                                                          \
	(((c) == '<' ? 1 : 0) | ((c) == '>' || (c) == '"' || (c) == '\'' ? 2 : 0) |                                    \
	 ((c) <= ' ' || (c) == '/' || (c) == '=' || (c) == '>' ? 4 : 0))
#define SC4(c) SC(c), SC((c) + 1), SC((c) + 2), SC((c) + 3)
#define SC16(c) SC4(c), SC4((c) + 4), SC4((c) + 8), SC4((c) + 12)
#define SC64(c) SC16(c), SC16((c) + 16), SC16((c) + 32), SC16((c) + 48)
static const uint8_t scan_cls[256] = {SC64(0), SC64(64), SC64(128), SC64(192)};

/* ---- a byte at a time: the reference, and every path's tail ---- */

static void bytes_block(const char *p, size_t n, struct inj_block *b)
{
	uint64_t lt = 0, gq = 0, end = 0;
	for (size_t k = 0; k < n; k++) {
		unsigned c = scan_cls[(unsigned char)p[k]];
		lt |= (uint64_t)(c & 1) << k;
		gq |= (uint64_t)((c >> 1) & 1) << k;
		end |= (uint64_t)((c >> 2) & 1) << k;
	}
	b->lt = lt;
	b->gq = gq;
	b->end = end;
}

static void scalar_classify(const char *p, size_t blocks, struct inj_block *out)
{
	for (size_t b = 0; b < blocks; b++)
		bytes_block(p + 64 * b, 64, out + b);
}

/* ---- portable: a word of bytes at a time (SWAR) ----
 *
 * Each byte's class from its low seven bits y (no carry crosses a byte:
 * y plus at most 0x7f stays under 0x100): (y ^ c) + 0x7f has the byte's
 * high bit set unless y == c, y + 0x5f unless y < 0x21. A mask's "not"
 * word ANDs those of its bytes and ORs the byte itself (0x80 and up is in
 * no class), so its high bits are the bytes outside the mask; they are
 * gathered by a multiply and the block's word complemented once. 64-bit
 * words where pointers are (x86-64, aarch64), else 32-bit ones (the
 * MIPS and ARM routers: a uint64_t there is two registers, its multiply
 * three), which gather two words' high bits with one multiply. */

#if UINTPTR_MAX > 0xffffffffu
typedef uint64_t sword;
#define SW_BYTES 8
#else
typedef uint32_t sword;
#define SW_BYTES 4
#endif
#define SW_ONES ((sword)-1 / 0xff)
#define SW_LOW7 (SW_ONES * 0x7f)
#define SW_HIGH (SW_ONES * 0x80)

static inline sword swar_load(const char *p)
{
#if defined(__GNUC__)
	/* memcpy's load without its call (-Os on MIPS calls it) */
	struct sw_unaligned {
		sword v;
	} __attribute__((packed, may_alias));
	sword x = ((const struct sw_unaligned *)p)->v;
#else
	sword x;
	memcpy(&x, p, sizeof x);
#endif
#if SW_BYTES == 8 && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	x = __builtin_bswap64(x); /* byte k of the page in bits 8k..8k+7 */
#endif
	return x;
}

/* High bit of each byte set unless the byte is c (c < 0x80), from y = x & LOW7. */
#define SW_NE(y, c) (((y) ^ (SW_ONES * (c))) + SW_LOW7)

/* The "not" words of the three masks of a word x: lt, gq, end. */
#define SW_CLASSES(x, nlt, ngq, nend)                                                                                  \
	do {                                                                                                           \
		sword y_ = (x)&SW_LOW7, ngt_ = SW_NE(y_, '>');                                                         \
		nlt = (SW_NE(y_, '<') | (x)) & SW_HIGH;                                                                \
		ngq = ((ngt_ & SW_NE(y_, '"') & SW_NE(y_, '\'')) | (x)) & SW_HIGH;                                     \
		nend = ((ngt_ & (y_ + SW_ONES * (0x80 - 0x21)) & SW_NE(y_, '/') & SW_NE(y_, '=')) | (x)) & SW_HIGH;    \
	} while (0)

#if SW_BYTES == 8
/* The high bits of a word (only high bits set), byte k's as bit k:
 * ((h >> 7) * 0x0102040810204080) >> 56, the shift folded into the
 * multiplier (no two of its products' bits meet, so none carries). */
static inline uint64_t swar_bits(uint64_t h)
{
	return (h * UINT64_C(0x0002040810204081)) >> 56;
}

static void swar_classify(const char *p, size_t blocks, struct inj_block *out)
{
	for (size_t b = 0; b < blocks; b++, p += 64) {
		uint64_t lt = 0, gq = 0, end = 0;
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
#pragma GCC unroll 8
#elif defined(__clang__)
#pragma unroll
#endif
		for (unsigned w = 0; w < 8; w++) {
			uint64_t x = swar_load(p + 8 * w), nlt, ngq, nend;
			SW_CLASSES(x, nlt, ngq, nend);
			lt |= swar_bits(nlt) << (8 * w);
			gq |= swar_bits(ngq) << (8 * w);
			end |= swar_bits(nend) << (8 * w);
		}
		out[b].lt = ~lt;
		out[b].gq = ~gq;
		out[b].end = ~end;
	}
}
#else
/* The high bits of two words a, b (only high bits set), byte k of a as
 * bit k, of b as bit 4 + k: a's at bits 8k, b's at 8k + 4 of one word,
 * a multiply by 0x01020408 moves byte k's to bits 24 + k and 28 + k
 * (none of its products' bits meet, so none carries); little-endian the
 * shifts are folded into it (a's at 8k + 3, b's where they are, times
 * 0x01020408 >> 3). Big-endian, byte k's bits are at 8(3 - k), and
 * 0x08040201 moves them the same. */
static inline uint32_t swar_bits2(uint32_t a, uint32_t b)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return (((a >> 7) | (b >> 3)) * UINT32_C(0x08040201)) >> 24;
#else
	return ((a >> 4 | b) * UINT32_C(0x00204081)) >> 24;
#endif
}

/* The three masks of 32 bytes, each a 32-bit word. */
static inline void swar_half(const char *p, uint32_t *lt, uint32_t *gq, uint32_t *end)
{
	uint32_t l = 0, g = 0, e = 0;
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
#pragma GCC unroll 4
#elif defined(__clang__)
#pragma unroll
#endif
	for (unsigned w = 0; w < 8; w += 2) {
		uint32_t x0 = swar_load(p + 4 * w), x1 = swar_load(p + 4 * w + 4);
		uint32_t l0, g0, e0, l1, g1, e1;
		SW_CLASSES(x0, l0, g0, e0);
		SW_CLASSES(x1, l1, g1, e1);
		l |= swar_bits2(l0, l1) << (4 * w);
		g |= swar_bits2(g0, g1) << (4 * w);
		e |= swar_bits2(e0, e1) << (4 * w);
	}
	*lt = ~l;
	*gq = ~g;
	*end = ~e;
}

static void swar_classify(const char *p, size_t blocks, struct inj_block *out)
{
	for (size_t b = 0; b < blocks; b++, p += 64) {
		uint32_t l0, g0, e0, l1, g1, e1;
		swar_half(p, &l0, &g0, &e0);
		swar_half(p + 32, &l1, &g1, &e1);
		out[b].lt = (uint64_t)l1 << 32 | l0;
		out[b].gq = (uint64_t)g1 << 32 | g0;
		out[b].end = (uint64_t)e1 << 32 | e0;
	}
}
#endif

/* ---- SSE2: sixteen bytes a register ---- */

#if defined(HAVE_SSE2)
static inline uint64_t sse2_bits(__m128i a, __m128i b, __m128i c, __m128i d)
{
	return (uint64_t)(unsigned)_mm_movemask_epi8(a) | (uint64_t)(unsigned)_mm_movemask_epi8(b) << 16 |
	       (uint64_t)(unsigned)_mm_movemask_epi8(c) << 32 | (uint64_t)(unsigned)_mm_movemask_epi8(d) << 48;
}

/* '<' (*lt); '>' or a quote (*gq); a byte up to ' ', '/', '=' or '>' (*end). */
static inline void sse2_16(__m128i x, __m128i *lt, __m128i *gq, __m128i *end)
{
	__m128i gt = _mm_cmpeq_epi8(x, _mm_set1_epi8('>'));
	*lt = _mm_cmpeq_epi8(x, _mm_set1_epi8('<'));
	*gq = _mm_or_si128(gt,
	                   _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\''))));
	__m128i ctl = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(' ')), x);
	*end = _mm_or_si128(_mm_or_si128(gt, ctl),
	                    _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('/')), _mm_cmpeq_epi8(x, _mm_set1_epi8('='))));
}

static void sse2_classify(const char *p, size_t blocks, struct inj_block *out)
{
	for (size_t b = 0; b < blocks; b++, p += 64) {
		const __m128i *q = (const __m128i *)(const void *)p;
		__m128i l0, l1, l2, l3, g0, g1, g2, g3, e0, e1, e2, e3;
		sse2_16(_mm_loadu_si128(q), &l0, &g0, &e0);
		sse2_16(_mm_loadu_si128(q + 1), &l1, &g1, &e1);
		sse2_16(_mm_loadu_si128(q + 2), &l2, &g2, &e2);
		sse2_16(_mm_loadu_si128(q + 3), &l3, &g3, &e3);
		out[b].lt = sse2_bits(l0, l1, l2, l3);
		out[b].gq = sse2_bits(g0, g1, g2, g3);
		out[b].end = sse2_bits(e0, e1, e2, e3);
	}
}
#endif

/* ---- AVX2: thirty-two bytes a register, where the CPU has it ---- */

#if defined(HAVE_AVX2)
TARGET_AVX2 static inline uint64_t avx2_bits(__m256i a, __m256i b)
{
	return (uint64_t)(uint32_t)_mm256_movemask_epi8(a) | (uint64_t)(uint32_t)_mm256_movemask_epi8(b) << 32;
}

/* A byte's classes from its two nibbles (simdjson's classification): a
 * lookup of each, ANDed, leaves one bit for each (high nibble, low
 * nibble) pair of a class: '<' 3C (the sign bit, so that it is the lt
 * mask as it is), '>' 3E (0x02), the quotes 22 and 27 (0x01), the control bytes
 * 0x-1x (0x04), ' ' and '/' 20 and 2F (0x08), '=' 3D (0x10). A byte from
 * 0x80 on looks its low nibble up as zero (pshufb), and no high nibble
 * from 4 on has a bit. So end is a value over 0x01 (signed: '<' is
 * negative), gq a value with 0x03. */
enum { AV_LT = -0x80, AV_GT = 0x02, AV_Q = 0x01, AV_CTL = 0x04, AV_SP = 0x08, AV_EQ = 0x10 };
#define AV_LO                                                                                                          \
	AV_CTL | AV_SP, AV_CTL, AV_CTL | AV_Q, AV_CTL, AV_CTL, AV_CTL, AV_CTL, AV_CTL | AV_Q, AV_CTL, AV_CTL, AV_CTL,  \
	    AV_CTL, AV_CTL | AV_LT, AV_CTL | AV_EQ, AV_CTL | AV_GT, AV_CTL | AV_SP
#define AV_HI AV_CTL, AV_CTL, AV_Q | AV_SP, AV_LT | AV_GT | AV_EQ, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0

TARGET_AVX2 static inline void avx2_32(__m256i x, __m256i *lt, __m256i *gq, __m256i *end)
{
	const __m256i lo = _mm256_setr_epi8(AV_LO, AV_LO), hi = _mm256_setr_epi8(AV_HI, AV_HI);
	__m256i h = _mm256_and_si256(_mm256_srli_epi16(x, 4), _mm256_set1_epi8(0x0f));
	__m256i r = _mm256_and_si256(_mm256_shuffle_epi8(lo, x), _mm256_shuffle_epi8(hi, h));
	*lt = r;
	*gq = _mm256_cmpgt_epi8(_mm256_and_si256(r, _mm256_set1_epi8(AV_GT | AV_Q)), _mm256_setzero_si256());
	*end = _mm256_cmpgt_epi8(r, _mm256_set1_epi8(AV_Q));
}

TARGET_AVX2 static void avx2_classify(const char *p, size_t blocks, struct inj_block *out)
{
	for (size_t b = 0; b < blocks; b++, p += 64) {
		const __m256i *q = (const __m256i *)(const void *)p;
		__m256i l0, l1, g0, g1, e0, e1;
		avx2_32(_mm256_loadu_si256(q), &l0, &g0, &e0);
		avx2_32(_mm256_loadu_si256(q + 1), &l1, &g1, &e1);
		out[b].lt = avx2_bits(l0, l1);
		out[b].gq = avx2_bits(g0, g1);
		out[b].end = avx2_bits(e0, e1);
	}
}
#endif

/* ---- NEON: sixteen bytes a register ---- */

#if defined(HAVE_NEON)
/* The lanes (all ones or zero) of four registers as 64 bits, lane k of
 * register r as bit 16r + k: each lane keeps its bit of its byte, and
 * pairwise adds (ARMv7 and AArch64 alike) fold eight lanes into one. */
static inline uint64_t neon_bits(uint8x16_t a, uint8x16_t b, uint8x16_t c, uint8x16_t d)
{
	static const uint8_t bit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
	const uint8x16_t m = vld1q_u8(bit);
	a = vandq_u8(a, m);
	b = vandq_u8(b, m);
	c = vandq_u8(c, m);
	d = vandq_u8(d, m);
	uint8x8_t ab = vpadd_u8(vpadd_u8(vget_low_u8(a), vget_high_u8(a)), vpadd_u8(vget_low_u8(b), vget_high_u8(b)));
	uint8x8_t cd = vpadd_u8(vpadd_u8(vget_low_u8(c), vget_high_u8(c)), vpadd_u8(vget_low_u8(d), vget_high_u8(d)));
	return vget_lane_u64(vreinterpret_u64_u8(vpadd_u8(ab, cd)), 0);
}

static inline void neon_16(uint8x16_t x, uint8x16_t *lt, uint8x16_t *gq, uint8x16_t *end)
{
	uint8x16_t gt = vceqq_u8(x, vdupq_n_u8('>'));
	*lt = vceqq_u8(x, vdupq_n_u8('<'));
	*gq = vorrq_u8(gt, vorrq_u8(vceqq_u8(x, vdupq_n_u8('"')), vceqq_u8(x, vdupq_n_u8('\''))));
	*end = vorrq_u8(vorrq_u8(gt, vcleq_u8(x, vdupq_n_u8(' '))),
	                vorrq_u8(vceqq_u8(x, vdupq_n_u8('/')), vceqq_u8(x, vdupq_n_u8('='))));
}

static void neon_classify(const char *p, size_t blocks, struct inj_block *out)
{
	for (size_t b = 0; b < blocks; b++, p += 64) {
		const uint8_t *u = (const uint8_t *)p;
		uint8x16_t l0, l1, l2, l3, g0, g1, g2, g3, e0, e1, e2, e3;
		neon_16(vld1q_u8(u), &l0, &g0, &e0);
		neon_16(vld1q_u8(u + 16), &l1, &g1, &e1);
		neon_16(vld1q_u8(u + 32), &l2, &g2, &e2);
		neon_16(vld1q_u8(u + 48), &l3, &g3, &e3);
		out[b].lt = neon_bits(l0, l1, l2, l3);
		out[b].gq = neon_bits(g0, g1, g2, g3);
		out[b].end = neon_bits(e0, e1, e2, e3);
	}
}
#endif

/* ---- the choice ---- */

static const struct inj_scan_path paths[] = {
    [INJ_SCAN_SCALAR] = {"scalar", scalar_classify, 0}, [INJ_SCAN_PORTABLE] = {"portable", swar_classify, 1},
#if defined(HAVE_SSE2)
    [INJ_SCAN_SSE2] = {"sse2", sse2_classify, 1},
#endif
#if defined(HAVE_AVX2)
    [INJ_SCAN_AVX2] = {"avx2", avx2_classify, 1},
#endif
#if defined(HAVE_NEON)
    [INJ_SCAN_NEON] = {"neon", neon_classify, 1},
#endif
};

static int path_runs(int path)
{
	if (path < 0 || path >= (int)(sizeof paths / sizeof paths[0]) || !paths[path].classify)
		return 0;
#if defined(HAVE_AVX2)
	if (path == INJ_SCAN_AVX2) {
		__builtin_cpu_init();
		return __builtin_cpu_supports("avx2");
	}
#endif
	return 1;
}

/* The best path this CPU runs. */
static int best_path(void)
{
	if (path_runs(INJ_SCAN_AVX2))
		return INJ_SCAN_AVX2;
	if (path_runs(INJ_SCAN_SSE2))
		return INJ_SCAN_SSE2;
	if (path_runs(INJ_SCAN_NEON))
		return INJ_SCAN_NEON;
	return INJ_SCAN_PORTABLE;
}

/* The path in use, -1 before the first feed. Every thread that races to
 * choose it chooses the same. */
static int chosen = -1;

const struct inj_scan_path *inj_scan_path(void)
{
	int p = __atomic_load_n(&chosen, __ATOMIC_RELAXED);
	if (p < 0) {
		/* CSRF_SCAN names a path to use (tests, measurements); a path
		 * this CPU or build lacks, or any other word, is the best one */
		const char *want = getenv("CSRF_SCAN");
		p = best_path();
		for (int k = 0; want && k < (int)(sizeof paths / sizeof paths[0]); k++)
			if (paths[k].name && strcmp(want, paths[k].name) == 0 && path_runs(k))
				p = k;
		__atomic_store_n(&chosen, p, __ATOMIC_RELAXED);
	}
	return &paths[p];
}

int csrfi_inject_scan_force(int path)
{
	if (path == INJ_SCAN_BEST)
		path = best_path();
	if (!path_runs(path))
		return -1;
	__atomic_store_n(&chosen, path, __ATOMIC_RELAXED);
	return 0;
}

const char *csrfi_inject_scan_name(int path)
{
	if (path == INJ_SCAN_BEST)
		return inj_scan_path()->name;
	return path >= 0 && path < (int)(sizeof paths / sizeof paths[0]) ? paths[path].name : NULL;
}

void inj_scan_tail(const char *p, size_t n, struct inj_block *b)
{
	bytes_block(p, n, b);
}
