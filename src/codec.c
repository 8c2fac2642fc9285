/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * codec.c - the encodings of secret material: base64url without padding
 * (RFC 4648 section 5), the alphabet of tokens and signed cookies, and
 * hex, the form of keys in key files. Both directions map characters with
 * arithmetic on masks instead of tables, so neither timing nor the cache
 * depends on the (secret) bytes; decoding rejects any character outside
 * [A-Za-z0-9_-], a length that no input encodes to, and non-zero bits
 * after the last full byte, so every byte string has exactly one
 * encoding.
 */
#include "internal.h"

/* All-ones when a < b, else zero; a and b below 2^31. */
static uint32_t mask_lt(uint32_t a, uint32_t b)
{
	return 0u - ((a - b) >> 31);
}

/* All-ones when lo <= c <= hi. */
static uint32_t mask_in(uint32_t c, uint32_t lo, uint32_t hi)
{
	return ~mask_lt(c, lo) & ~mask_lt(hi, c);
}

static uint32_t mask_eq(uint32_t a, uint32_t b)
{
	return mask_in(a, b, b);
}

static char enc6(uint32_t v)
{
	uint32_t c = 0;

	c |= mask_in(v, 0, 25) & (v + 'A');
	c |= mask_in(v, 26, 51) & (v - 26 + 'a');
	c |= mask_in(v, 52, 61) & (v - 52 + '0');
	c |= mask_eq(v, 62) & '-';
	c |= mask_eq(v, 63) & '_';
	return (char)c;
}

/* The 6-bit value of c, with bit 8 set when c is not in the alphabet.
 * Returned rather than accumulated through a pointer, so the decoder's
 * error flag stays in a register. */
static uint32_t dec6(uint8_t ch)
{
	uint32_t c = ch;
	uint32_t m_upper = mask_in(c, 'A', 'Z');
	uint32_t m_lower = mask_in(c, 'a', 'z');
	uint32_t m_digit = mask_in(c, '0', '9');
	uint32_t m_dash = mask_eq(c, '-');
	uint32_t m_under = mask_eq(c, '_');
	uint32_t v = 0;

	v |= m_upper & (c - 'A');
	v |= m_lower & (c - 'a' + 26);
	v |= m_digit & (c - '0' + 52);
	v |= m_dash & 62;
	v |= m_under & 63;
	return v | (~(m_upper | m_lower | m_digit | m_dash | m_under) & 0x100);
}

#if defined(__SSE2__)
#include <emmintrin.h>
#if defined(__x86_64__)
#include <immintrin.h> /* AVX2, for functions of target("avx2") only */
#include <tmmintrin.h> /* SSSE3, for functions of target("ssse3") only */
#endif

/* Sixteen 6-bit values to their characters at once: each value gets the
 * offset of its range, chosen with compare masks (constant time). */
static __m128i enc16(__m128i v)
{
	__m128i off = _mm_set1_epi8('A');
	off = _mm_add_epi8(off, _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(25)), _mm_set1_epi8('a' - 26 - 'A')));
	off = _mm_add_epi8(
	    off, _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(51)), _mm_set1_epi8((char)('0' - 52 - ('a' - 26)))));
	off = _mm_add_epi8(
	    off, _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(61)), _mm_set1_epi8((char)('-' - 62 - ('0' - 52)))));
	off = _mm_add_epi8(off,
	                   _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(62)), _mm_set1_epi8('_' - 63 - ('-' - 62))));
	return _mm_add_epi8(v, off);
}

/* Three bytes to four 6-bit values, one per byte, first in the low byte. */
static inline uint32_t split24(const uint8_t *p)
{
	uint32_t w = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
	return (w >> 18) | ((w >> 12) & 63) << 8 | ((w >> 6) & 63) << 16 | (w & 63) << 24;
}
#endif

void csrfi_b64url_encode(const uint8_t *in, size_t n, char *out)
{
	size_t i = 0;

#if defined(__SSE2__)
	for (; i + 12 <= n; i += 12, out += 16) {
		__m128i v = _mm_set_epi32((int)split24(in + i + 9), (int)split24(in + i + 6), (int)split24(in + i + 3),
		                          (int)split24(in + i));
		_mm_storeu_si128((__m128i *)(void *)out, enc16(v));
	}
#endif
	for (; i + 3 <= n; i += 3) {
		uint32_t w = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		*out++ = enc6(w >> 18);
		*out++ = enc6((w >> 12) & 63);
		*out++ = enc6((w >> 6) & 63);
		*out++ = enc6(w & 63);
	}
	if (n - i == 1) {
		uint32_t w = (uint32_t)in[i] << 16;
		*out++ = enc6(w >> 18);
		*out++ = enc6((w >> 12) & 63);
	} else if (n - i == 2) {
		uint32_t w = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
		*out++ = enc6(w >> 18);
		*out++ = enc6((w >> 12) & 63);
		*out++ = enc6((w >> 6) & 63);
	}
}

#if defined(__SSE2__) && defined(__x86_64__) /* 64-bit lane moves */
/* Sixteen characters to their 6-bit values at once; *valid collects, per
 * lane, whether every character so far was in the alphabet. The same
 * mask arithmetic as dec6, lane-wise: constant time. */
static __m128i dec16(__m128i c, __m128i *valid)
{
	const __m128i upper =
	    _mm_and_si128(_mm_cmpgt_epi8(c, _mm_set1_epi8('A' - 1)), _mm_cmplt_epi8(c, _mm_set1_epi8('Z' + 1)));
	const __m128i lower =
	    _mm_and_si128(_mm_cmpgt_epi8(c, _mm_set1_epi8('a' - 1)), _mm_cmplt_epi8(c, _mm_set1_epi8('z' + 1)));
	const __m128i digit =
	    _mm_and_si128(_mm_cmpgt_epi8(c, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(c, _mm_set1_epi8('9' + 1)));
	const __m128i dash = _mm_cmpeq_epi8(c, _mm_set1_epi8('-'));
	const __m128i under = _mm_cmpeq_epi8(c, _mm_set1_epi8('_'));
	__m128i v = _mm_and_si128(upper, _mm_sub_epi8(c, _mm_set1_epi8('A')));
	v = _mm_or_si128(v, _mm_and_si128(lower, _mm_sub_epi8(c, _mm_set1_epi8('a' - 26))));
	v = _mm_or_si128(v, _mm_and_si128(digit, _mm_add_epi8(c, _mm_set1_epi8(52 - '0'))));
	v = _mm_or_si128(v, _mm_and_si128(dash, _mm_set1_epi8(62)));
	v = _mm_or_si128(v, _mm_and_si128(under, _mm_set1_epi8(63)));
	__m128i ok = _mm_or_si128(_mm_or_si128(upper, lower), _mm_or_si128(digit, _mm_or_si128(dash, under)));
	*valid = _mm_and_si128(*valid, ok);
	return v;
}
/* Two lanes' 24 bits each (lane 0 in the low half of q) as six bytes
 * in memory order, in the low six bytes of the result as stored. */
static inline uint64_t be48(uint64_t q)
{
	return __builtin_bswap64((q & 0xffffff) << 40 | (q >> 32 & 0xffffff) << 16);
}

/* Sixteen characters (four groups) to their twelve bytes at out: decode
 * lane-wise, join pairs of 6-bit values into 12 bits per 16-bit lane,
 * pairs of those into 24 bits per 32-bit lane, then write the lanes'
 * bytes big-endian, two lanes at a time: the first six bytes as one
 * 8-byte store (its last two are overwritten next), the other six as
 * 4 + 2, so nothing is written past the twelve. */
static inline void dec_block(const uint8_t *p, uint8_t *out, __m128i *valid)
{
	__m128i v = dec16(_mm_loadu_si128((const __m128i *)(const void *)p), valid);
	__m128i t = _mm_or_si128(_mm_slli_epi16(_mm_and_si128(v, _mm_set1_epi16(0x00ff)), 6), _mm_srli_epi16(v, 8));
	__m128i u =
	    _mm_or_si128(_mm_slli_epi32(_mm_and_si128(t, _mm_set1_epi32(0x0000ffff)), 12), _mm_srli_epi32(t, 16));
	uint64_t lo = be48((uint64_t)_mm_cvtsi128_si64(u));
	uint64_t hi = be48((uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(u, u)));
	uint32_t hi4 = (uint32_t)hi;
	uint16_t hi2 = (uint16_t)(hi >> 32);
	memcpy(out, &lo, 8);
	memcpy(out + 6, &hi4, 4);
	memcpy(out + 10, &hi2, 2);
}

/* The characters of len (at least 16) that whole blocks decode: every
 * block of 16, then the groups left over (a token's last 1 to 3 groups)
 * as one more block ending at the last whole group, overlapping the one
 * before (the bytes it writes again are the same, and it validates its
 * characters as any block does). *bad gets 0x100 when any character
 * read was outside the alphabet. */
static size_t blocks_sse2(const uint8_t *p, size_t len, uint8_t *out, uint32_t *bad)
{
	__m128i valid = _mm_set1_epi8(-1);
	size_t i = 0;
	for (; i + 16 <= len; i += 16)
		dec_block(p + i, out + i / 4 * 3, &valid);
	if (i + 4 <= len) {
		dec_block(p + len / 4 * 4 - 16, out + (len / 4 * 4 - 16) / 4 * 3, &valid);
		i = len / 4 * 4;
	}
	/* m + 0xffff carries into bit 16 exactly when m != 0 */
	uint32_t m = (uint32_t)_mm_movemask_epi8(valid) ^ 0xffffu;
	*bad |= ((m + 0xffffu) >> 16) << 8;
	return i;
}

/* SSSE3: a block classified and translated with table lookups (pshufb,
 * constant time) by the characters' nibbles, after Mula and Lemire's
 * base64 decoding. A character is outside the alphabet when the bits of
 * its low nibble's entry and its high nibble's class meet:
 *   class 0x01: 0x2_, only '-' (0x2D); 0x02: 0x3_, '0'-'9';
 *   0x04: 0x4_ and 0x6_, all but 0x40 and 0x60; 0x08: 0x5_, 'P'-'Z' and
 *   '_' (0x5F); 0x10: 0x7_, 'p'-'z'; 0x20: every other high nibble.
 * Its value is the character plus its high nibble's shift ('_' apart). */
__attribute__((target("ssse3"), always_inline)) static inline __m128i dec_vec_ssse3(__m128i c, __m128i *err)
{
	const __m128i lut_lo = _mm_setr_epi8(0x25, 0x21, 0x21, 0x21, 0x21, 0x21, 0x21, 0x21, 0x21, 0x21, 0x23, 0x3B,
	                                     0x3B, 0x3A, 0x3B, 0x33);
	const __m128i lut_hi = _mm_setr_epi8(0x20, 0x20, 0x01, 0x02, 0x04, 0x08, 0x04, 0x10, 0x20, 0x20, 0x20, 0x20,
	                                     0x20, 0x20, 0x20, 0x20);
	const __m128i lut_shift =
	    _mm_setr_epi8(0, 0, 62 - '-', 52 - '0', -'A', -'A', 26 - 'a', 26 - 'a', 0, 0, 0, 0, 0, 0, 0, 0);
	const __m128i nib = _mm_set1_epi8(0x0f);
	__m128i hi = _mm_and_si128(_mm_srli_epi32(c, 4), nib);
	__m128i lo = _mm_and_si128(c, nib);
	*err = _mm_or_si128(*err, _mm_and_si128(_mm_shuffle_epi8(lut_lo, lo), _mm_shuffle_epi8(lut_hi, hi)));
	/* '_' is in the 'P'-'Z' class: 63 - '_' instead of -'A' */
	__m128i under = _mm_and_si128(_mm_cmpeq_epi8(c, _mm_set1_epi8('_')), _mm_set1_epi8(63 - '_' + 'A'));
	__m128i v = _mm_add_epi8(c, _mm_add_epi8(_mm_shuffle_epi8(lut_shift, hi), under));
	/* 6-bit values to 12 bits per 16-bit lane, 24 per 32-bit lane, then
	 * each lane's three bytes big-endian, twelve in a row */
	__m128i t = _mm_maddubs_epi16(v, _mm_set1_epi32(0x01400140));
	__m128i u = _mm_madd_epi16(t, _mm_set1_epi32(0x00011000));
	return _mm_shuffle_epi8(u, _mm_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1));
}

/* Sixteen characters at p to their twelve bytes at out. */
__attribute__((target("ssse3"), always_inline)) static inline void dec_block_ssse3(const uint8_t *p, uint8_t *out,
                                                                                   __m128i *err)
{
	__m128i o = dec_vec_ssse3(_mm_loadu_si128((const __m128i *)(const void *)p), err);
	uint32_t w = (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(o, 8));
	_mm_storel_epi64((__m128i *)(void *)out, o);
	memcpy(out + 8, &w, 4);
}

/* The characters after the last whole block, up to the end (the groups
 * left over and a last partial group), as one more block of 16 that ends
 * where the partial group would: built in a register from the input's
 * last 16 characters, moved down by the d characters the partial group
 * lacks, 'A's (zero bits) after them; it overlaps the block before
 * (whose bytes it writes again, the same). Built in memory instead, the
 * block's load would wait on the copy's stores (a store-to-load
 * forwarding stall, most of the tail's time). Only the bytes the input
 * encodes are stored; the ones the padding made must be zero, which is
 * the rule that no bits follow the last byte (*bad gets 0x100 when one
 * is not, with no branch on it). len is at least 16; need, the bytes
 * the whole input decodes to. */
__attribute__((target("ssse3"), always_inline)) static inline void tail_ssse3(const uint8_t *p, size_t len, size_t need,
                                                                              uint8_t *out, __m128i *err, uint32_t *bad)
{
	static const uint8_t shift[32] = {0,    1,    2,    3,    4,    5,    6,    7,    8,    9,    10,
	                                  11,   12,   13,   14,   15,   0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	                                  0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};
	static const uint8_t fill[32] = {0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
	                                 0,   0,   0,   0,   0,   'A', 'A', 'A', 'A', 'A', 'A',
	                                 'A', 'A', 'A', 'A', 'A', 'A', 'A', 'A', 'A', 'A'};
	size_t end = (len + 3) / 4 * 4, d = end - len, at = (end - 16) / 4 * 3;
	size_t keep = need - at; /* 10 to 12 */
	__m128i c = _mm_loadu_si128((const __m128i *)(const void *)(p + len - 16));
	c = _mm_shuffle_epi8(c, _mm_loadu_si128((const __m128i *)(const void *)(shift + d)));
	c = _mm_or_si128(c, _mm_loadu_si128((const __m128i *)(const void *)(fill + d)));
	__m128i o = dec_vec_ssse3(c, err);
	/* bytes 4 to 11: the last 4 of the kept ones stored from here, the
	 * rest (12 - keep) must be zero; the shift in two steps, as keep - 4
	 * bytes may be all 64 bits */
	uint64_t hi = (uint64_t)_mm_cvtsi128_si64(_mm_srli_si128(o, 4));
	uint64_t extra = hi & (UINT64_MAX << (8 * (keep - 4) - 1) << 1);
	uint32_t last = (uint32_t)(hi >> (8 * (keep - 8)));
	_mm_storel_epi64((__m128i *)(void *)(out + at), o);
	memcpy(out + at + keep - 4, &last, 4);
	*bad |= (uint32_t)((extra | (0 - extra)) >> 63) << 8;
}

/* Every character of len (at least 16, decoding to need bytes): the
 * whole blocks, then the rest (tail_ssse3). */
__attribute__((target("ssse3"))) static size_t blocks_ssse3(const uint8_t *p, size_t len, size_t need, uint8_t *out,
                                                            uint32_t *bad)
{
	__m128i err = _mm_setzero_si128();
	size_t i = 0;
	for (; i + 16 <= len; i += 16)
		dec_block_ssse3(p + i, out + i / 4 * 3, &err);
	if (i < len)
		tail_ssse3(p, len, need, out, &err, bad);
	uint32_t m = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(err, _mm_setzero_si128())) ^ 0xffffu;
	*bad |= ((m + 0xffffu) >> 16) << 8;
	return len;
}

/* AVX2: the SSSE3 block twice over, 32 characters to 24 bytes (vpshufb
 * looks up within each 128-bit half, so the tables are the same,
 * repeated). */
__attribute__((target("avx2"))) static void dec_block_avx2(const uint8_t *p, uint8_t *out, __m256i *err)
{
	const __m256i lut_lo = _mm256_setr_epi8(0x25, 0x21, 0x21, 0x21, 0x21, 0x21, 0x21, 0x21, 0x21, 0x21, 0x23, 0x3B,
	                                        0x3B, 0x3A, 0x3B, 0x33, 0x25, 0x21, 0x21, 0x21, 0x21, 0x21, 0x21, 0x21,
	                                        0x21, 0x21, 0x23, 0x3B, 0x3B, 0x3A, 0x3B, 0x33);
	const __m256i lut_hi = _mm256_setr_epi8(0x20, 0x20, 0x01, 0x02, 0x04, 0x08, 0x04, 0x10, 0x20, 0x20, 0x20, 0x20,
	                                        0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x01, 0x02, 0x04, 0x08, 0x04, 0x10,
	                                        0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20);
	const __m256i lut_shift =
	    _mm256_setr_epi8(0, 0, 62 - '-', 52 - '0', -'A', -'A', 26 - 'a', 26 - 'a', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	                     62 - '-', 52 - '0', -'A', -'A', 26 - 'a', 26 - 'a', 0, 0, 0, 0, 0, 0, 0, 0);
	const __m256i nib = _mm256_set1_epi8(0x0f);
	__m256i c = _mm256_loadu_si256((const __m256i *)(const void *)p);
	__m256i hi = _mm256_and_si256(_mm256_srli_epi32(c, 4), nib);
	__m256i lo = _mm256_and_si256(c, nib);
	*err =
	    _mm256_or_si256(*err, _mm256_and_si256(_mm256_shuffle_epi8(lut_lo, lo), _mm256_shuffle_epi8(lut_hi, hi)));
	__m256i under = _mm256_and_si256(_mm256_cmpeq_epi8(c, _mm256_set1_epi8('_')), _mm256_set1_epi8(63 - '_' + 'A'));
	__m256i v = _mm256_add_epi8(c, _mm256_add_epi8(_mm256_shuffle_epi8(lut_shift, hi), under));
	__m256i t = _mm256_maddubs_epi16(v, _mm256_set1_epi32(0x01400140));
	__m256i u = _mm256_madd_epi16(t, _mm256_set1_epi32(0x00011000));
	__m256i o = _mm256_shuffle_epi8(u, _mm256_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1, 2,
	                                                    1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1));
	__m128i o0 = _mm256_castsi256_si128(o), o1 = _mm256_extracti128_si256(o, 1);
	uint32_t w0 = (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(o0, 8));
	uint32_t w1 = (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(o1, 8));
	_mm_storel_epi64((__m128i *)(void *)out, o0);
	memcpy(out + 8, &w0, 4);
	_mm_storel_epi64((__m128i *)(void *)(out + 12), o1);
	memcpy(out + 20, &w1, 4);
}

/* As blocks_ssse3, 32 characters a block, then one of 16 if as many are
 * left, then the rest (tail_ssse3); len at least 32. */
__attribute__((target("avx2"))) static size_t blocks_avx2(const uint8_t *p, size_t len, size_t need, uint8_t *out,
                                                          uint32_t *bad)
{
	__m256i err = _mm256_setzero_si256();
	__m128i err16 = _mm_setzero_si128();
	size_t i = 0;
	for (; i + 32 <= len; i += 32)
		dec_block_avx2(p + i, out + i / 4 * 3, &err);
	if (i + 16 <= len) {
		dec_block_ssse3(p + i, out + i / 4 * 3, &err16);
		i += 16;
	}
	if (i < len)
		tail_ssse3(p, len, need, out, &err16, bad);
	err = _mm256_or_si256(err, _mm256_zextsi128_si256(err16));
	uint32_t m = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(err, _mm256_setzero_si256()));
	/* m is all ones exactly when no character was outside the alphabet */
	*bad |= (uint32_t)(m != 0xffffffffu) << 8;
	return len;
}

static int have_ssse3(void)
{
	return __builtin_cpu_supports("ssse3");
}

static int have_avx2(void)
{
	return __builtin_cpu_supports("avx2");
}
#endif

csrf_reason csrfi_b64url_decode_path(const char *in, size_t len, uint8_t *out, size_t cap, size_t *out_len, int path)
{
	const uint8_t *p = (const uint8_t *)in;
	size_t rem = len % 4;
	size_t need = len / 4 * 3 + (rem ? rem - 1 : 0);
	uint32_t bad = 0;
	size_t i = 0;
	size_t o = 0;

	if (out_len)
		*out_len = 0;
	if ((!in && len) || (!out && need))
		return CSRF_ERR_ARG;
	if (rem == 1)
		return CSRF_MALFORMED;
	if (need > cap)
		return CSRF_ERR_BUFFER;

#if defined(__SSE2__) && defined(__x86_64__)
	/* Whole blocks of 16 characters (four groups) through SIMD; with
	 * SSSE3 or AVX2 the rest too (tail_ssse3), else the scalar code
	 * does it. */
	if (path > CSRFI_B64_SCALAR && len >= 16) {
		if (path >= CSRFI_B64_AVX2 && len >= 32 && have_avx2())
			i = blocks_avx2(p, len, need, out, &bad);
		else if (path >= CSRFI_B64_SSSE3 && have_ssse3())
			i = blocks_ssse3(p, len, need, out, &bad);
		else
			i = blocks_sse2(p, len, out, &bad);
		o = i == len ? need : i / 4 * 3;
	}
#else
	(void)path;
#endif
	for (; i + 4 <= len; i += 4) {
		uint32_t a = dec6(p[i]), b = dec6(p[i + 1]), c = dec6(p[i + 2]), d = dec6(p[i + 3]);
		uint32_t w = (a & 63) << 18 | (b & 63) << 12 | (c & 63) << 6 | (d & 63);
		bad |= a | b | c | d;
		out[o++] = (uint8_t)(w >> 16);
		out[o++] = (uint8_t)(w >> 8);
		out[o++] = (uint8_t)w;
	}
	if (i < len && rem == 2) {
		uint32_t a = dec6(p[i]), b = dec6(p[i + 1]);
		/* bits after the last byte must be zero: (x + 0xff) & 0x100 is
		 * 0x100 exactly when x != 0, without a branch */
		bad |= a | b | (((b & 15) + 0xff) & 0x100);
		out[o++] = (uint8_t)((a & 63) << 2 | (b & 63) >> 4);
	} else if (i < len && rem == 3) {
		uint32_t a = dec6(p[i]), b = dec6(p[i + 1]), c = dec6(p[i + 2]);
		uint32_t w = (a & 63) << 18 | (b & 63) << 12 | (c & 63) << 6;
		bad |= a | b | c | (((c & 3) + 0xff) & 0x100);
		out[o++] = (uint8_t)(w >> 16);
		out[o++] = (uint8_t)(w >> 8);
	}

	if (bad & 0x100) {
		/* Nothing half-decoded is left behind. */
		csrfi_wipe(out, need);
		return CSRF_MALFORMED;
	}
	if (out_len)
		*out_len = o;
	return CSRF_OK;
}

/* ---- hex ---- */

static char hex_digit(uint32_t v)
{
	/* '0'..'9', then 'a'..'f' (39 = 'a' - '0' - 10) */
	return (char)(v + '0' + (mask_lt(9, v) & 39));
}

void csrfx_hex_encode(const uint8_t *in, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex_digit(in[i] >> 4);
		out[2 * i + 1] = hex_digit(in[i] & 15);
	}
}

static uint32_t hex_value(uint8_t ch, uint32_t *bad)
{
	uint32_t c = ch;
	uint32_t m_digit = mask_in(c, '0', '9');
	uint32_t m_lower = mask_in(c, 'a', 'f');
	uint32_t m_upper = mask_in(c, 'A', 'F');

	*bad |= ~(m_digit | m_lower | m_upper);
	return (m_digit & (c - '0')) | (m_lower & (c - 'a' + 10)) | (m_upper & (c - 'A' + 10));
}

csrf_reason csrfx_hex_decode(const char *s, size_t n, uint8_t *out)
{
	uint32_t bad = 0;

	for (size_t i = 0; i < n; i++) {
		uint32_t hi = hex_value((uint8_t)s[2 * i], &bad);
		uint32_t lo = hex_value((uint8_t)s[2 * i + 1], &bad);
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	if (bad) {
		csrfi_wipe(out, n);
		return CSRF_MALFORMED;
	}
	return CSRF_OK;
}

int csrfx_is_hex_lower(const char *s, size_t n)
{
	uint32_t bad = 0;

	for (size_t i = 0; i < n; i++) {
		uint32_t c = (uint8_t)s[i];
		bad |= ~(mask_in(c, '0', '9') | mask_in(c, 'a', 'f'));
	}
	return n > 0 && bad == 0;
}

csrf_reason csrfi_b64url_decode(const char *in, size_t len, uint8_t *out, size_t cap, size_t *out_len)
{
	return csrfi_b64url_decode_path(in, len, out, cap, out_len, CSRFI_B64_AVX2);
}
