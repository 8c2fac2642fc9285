/* SPDX-License-Identifier: BSD-2-Clause */
/* util.c - constant-time comparison, wiping, the clock and malloc as an
 * allocator: small helpers every other file of src/ uses. */
#include "internal.h"

#include <stdlib.h>
#include <time.h>

static void *default_alloc(size_t n, void *ud)
{
	(void)ud;
	return malloc(n);
}

static void default_free(void *p, void *ud)
{
	(void)ud;
	free(p);
}

const csrf_allocator csrfi_default_allocator = {default_alloc, default_free, NULL};

#if (defined(CSRF_CRYPTO_BUILTIN) && CSRF_CRYPTO_BUILTIN) || (defined(CSRF_CRYPTO_MBEDTLS) && CSRF_CRYPTO_MBEDTLS)
/* Without libcrypto (builtin and mbedTLS backends). Every byte is read and or-ed in whatever the data; the volatile
 * accumulator keeps the compiler from stopping at the first difference. */
int csrfi_ct_eq(const void *a, const void *b, size_t n)
{
	const uint8_t *x = a, *y = b;
	volatile uint8_t d = 0;

	for (size_t i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}
#else
#include <openssl/crypto.h>

int csrfi_ct_eq(const void *a, const void *b, size_t n)
{
	return CRYPTO_memcmp(a, b, n) == 0;
}
#endif

#if !(defined(__GNUC__) || defined(__clang__))
/* glibc's explicit_bzero is memset that the compiler may not drop (GCC
 * and clang get the inline one of internal.h). */
void csrfi_wipe(void *p, size_t n)
{
	if (p && n)
		explicit_bzero(p, n);
}
#endif

int64_t csrfi_now(int64_t now)
{
	if (now)
		return now;
	/* Tokens count seconds: the coarse clock (the last tick, no
	 * hardware read) is exact enough and cheaper. */
	struct timespec ts;
	/* A kernel without the coarse clock (old or emulated router
	 * kernels) gets the ordinary one; should that fail too, time()'s -1
	 * makes every token look issued in the future or long expired:
	 * refused, never accepted by accident. */
	if (clock_gettime(CLOCK_REALTIME_COARSE, &ts) != 0)
		return (int64_t)time(NULL);
	return (int64_t)ts.tv_sec;
}
