/* util.c - constant-time comparison, wiping, slice comparisons and the
 * clock: small helpers every other file of src/ uses. */
#include "internal.h"

#include <time.h>

#include <openssl/crypto.h>

int csrf_ct_eq(const void *a, const void *b, size_t n)
{
	return CRYPTO_memcmp(a, b, n) == 0;
}

/* glibc's explicit_bzero is memset that the compiler may not drop: as
 * sure as OPENSSL_cleanse and several times faster on the small buffers
 * of the hot path. */
void csrf_wipe(void *p, size_t n)
{
	if (p && n)
		explicit_bzero(p, n);
}

static unsigned char lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + ('a' - 'A')) : c;
}

int csrf_slice_ieq(csrf_slice s, const char *lit)
{
	size_t n = strlen(lit);
	if (!s.ptr || s.len != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (lower((unsigned char)s.ptr[i]) != lower((unsigned char)lit[i]))
			return 0;
	return 1;
}

int csrf_slice_eq(csrf_slice s, const char *lit)
{
	size_t n = strlen(lit);
	return s.ptr && s.len == n && memcmp(s.ptr, lit, n) == 0;
}

csrf_reason csrf_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	if (!s || len == 0 || len > 20 || (len > 1 && s[0] == '0'))
		return CSRF_MALFORMED;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned)(unsigned char)s[i] - '0';
		if (d > 9 || d > max || v > (max - d) / 10)
			return CSRF_MALFORMED;
		v = v * 10 + d;
	}
	*out = v;
	return CSRF_OK;
}

csrf_slice csrf_trim(csrf_slice s)
{
	if (!s.ptr)
		return s;
	while (s.len && (s.ptr[0] == ' ' || s.ptr[0] == '\t')) {
		s.ptr++;
		s.len--;
	}
	while (s.len && (s.ptr[s.len - 1] == ' ' || s.ptr[s.len - 1] == '\t'))
		s.len--;
	return s;
}

int64_t csrf_now(int64_t now)
{
	if (now)
		return now;
	/* Tokens count seconds: the coarse clock (the last tick, no
	 * hardware read) is exact enough and four times cheaper. */
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	return (int64_t)ts.tv_sec;
}
