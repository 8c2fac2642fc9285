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
		uint32_t a = dec6(p[i]), b = dec6(p[i + 1]), c = dec6(p[i + 2]), d = dec6(p[i + 3]);
		uint32_t w = (a & 63) << 18 | (b & 63) << 12 | (c & 63) << 6 | (d & 63);
		bad |= a | b | c | d;
		out[o++] = (uint8_t)(w >> 16);
		out[o++] = (uint8_t)(w >> 8);
		out[o++] = (uint8_t)w;
	}
	if (rem == 2) {
		uint32_t a = dec6(p[i]), b = dec6(p[i + 1]);
		/* bits after the last byte must be zero: (x + 0xff) & 0x100 is
		 * 0x100 exactly when x != 0, without a branch */
		bad |= a | b | (((b & 15) + 0xff) & 0x100);
		out[o++] = (uint8_t)((a & 63) << 2 | (b & 63) >> 4);
	} else if (rem == 3) {
		uint32_t a = dec6(p[i]), b = dec6(p[i + 1]), c = dec6(p[i + 2]);
		uint32_t w = (a & 63) << 18 | (b & 63) << 12 | (c & 63) << 6;
		bad |= a | b | c | (((c & 3) + 0xff) & 0x100);
		out[o++] = (uint8_t)(w >> 16);
		out[o++] = (uint8_t)(w >> 8);
	}

	if (bad & 0x100) {
		/* Nothing half-decoded is left behind. */
		csrf_wipe(out, need);
		return CSRF_MALFORMED;
	}
	if (out_len)
		*out_len = o;
	return CSRF_OK;
}
