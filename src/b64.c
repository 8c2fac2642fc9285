/*
 * b64.c - base64url without padding (RFC 4648 section 5), the alphabet of
 * tokens and signed cookies. Both directions map characters with
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

/* The 6-bit value of c; *bad gets all-ones when c is not in the alphabet. */
static uint32_t dec6(uint8_t ch, uint32_t *bad)
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
	*bad |= ~(m_upper | m_lower | m_digit | m_dash | m_under);
	return v;
}

void csrf_b64url_encode(const uint8_t *in, size_t n, char *out)
{
	size_t i = 0;

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

csrf_reason csrf_b64url_decode(const char *in, size_t len, uint8_t *out, size_t cap, size_t *out_len)
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

	for (; i + 4 <= len; i += 4) {
		uint32_t w = dec6(p[i], &bad) << 18 | dec6(p[i + 1], &bad) << 12 | dec6(p[i + 2], &bad) << 6 |
		             dec6(p[i + 3], &bad);
		out[o++] = (uint8_t)(w >> 16);
		out[o++] = (uint8_t)(w >> 8);
		out[o++] = (uint8_t)w;
	}
	if (rem == 2) {
		uint32_t w = dec6(p[i], &bad) << 18 | dec6(p[i + 1], &bad) << 12;
		bad |= 0u - ((w & 0xffff) != 0);
		out[o++] = (uint8_t)(w >> 16);
	} else if (rem == 3) {
		uint32_t w = dec6(p[i], &bad) << 18 | dec6(p[i + 1], &bad) << 12 | dec6(p[i + 2], &bad) << 6;
		bad |= 0u - ((w & 0xff) != 0);
		out[o++] = (uint8_t)(w >> 16);
		out[o++] = (uint8_t)(w >> 8);
	}

	if (bad) {
		/* Nothing half-decoded is left behind. */
		csrf_wipe(out, need);
		return CSRF_MALFORMED;
	}
	if (out_len)
		*out_len = o;
	return CSRF_OK;
}
