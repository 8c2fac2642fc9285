/*
 * random.c - randomness: secrets and keys from the OS CSPRNG through
 * libcrypto's RAND_bytes (csrf_random, csrf_secret_new), and the masking
 * pads of tokens, cut from a per-thread block of the same output.
 */
#include "internal.h"

#include <limits.h>

#include <openssl/rand.h>

CSRF_API csrf_reason csrf_random(uint8_t *buf, size_t n)
{
	if (!buf && n)
		return CSRF_ERR_ARG;
	while (n > 0) {
		int chunk = n > INT_MAX ? INT_MAX : (int)n;
		if (RAND_bytes(buf, chunk) != 1)
			return CSRF_ERR_RANDOM;
		buf += chunk;
		n -= (size_t)chunk;
	}
	return CSRF_OK;
}

/* Masking pads travel in the clear inside the token (pad || raw ^ pad):
 * they need to be fresh, not secret. So they are cut from a per-thread
 * block of CSPRNG output instead of one RAND_bytes call per token, which
 * costs a lock, parameter lookups and a getpid() each time. Secrets and
 * keys never come from here. */
#define PAD_POOL 4096
static __thread uint8_t pad_pool[PAD_POOL];
static __thread size_t pad_used = PAD_POOL;

csrf_reason csrf_random_pad(uint8_t *out, size_t n)
{
	if (n > PAD_POOL)
		return csrf_random(out, n);
	if (PAD_POOL - pad_used < n) {
		csrf_reason r = csrf_random(pad_pool, PAD_POOL);
		if (r != CSRF_OK)
			return r;
		pad_used = 0;
	}
	memcpy(out, pad_pool + pad_used, n);
	/* Each pad is used once. */
	memset(pad_pool + pad_used, 0, n);
	pad_used += n;
	return CSRF_OK;
}

CSRF_API csrf_reason csrf_secret_new(uint8_t secret[CSRF_SECRET_LEN])
{
	if (!secret)
		return CSRF_ERR_ARG;
	return csrf_random(secret, CSRF_SECRET_LEN);
}
