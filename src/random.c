/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * random.c - randomness: secrets and keys straight from the kernel's
 * CSPRNG with getrandom(2) (csrf_random, csrf_secret_new), and the masking
 * pads of tokens, cut from a per-thread block of the same output (a
 * child of fork() drops the block it inherited).
 * getrandom rather than libcrypto's RAND_bytes: the same source without
 * the DRBG's per-process setup, which a one-request process such as a CGI
 * adapter pays in full (bench/RESULTS.md has the figures).
 */
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <sys/random.h>

CSRF_API csrf_reason csrf_random(uint8_t *buf, size_t n)
{
	if (!buf && n)
		return CSRF_ERR_ARG;
	while (n > 0) {
		/* at most 256 bytes are never cut short by a signal */
		size_t chunk = n > 256 ? 256 : n;
		ssize_t got = getrandom(buf, chunk, 0);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return CSRF_ERR_RANDOM;
		}
		buf += got;
		n -= (size_t)got;
	}
	return CSRF_OK;
}

/* Masking pads travel in the clear inside the token (pad || raw ^ pad):
 * they need to be fresh, not secret. So they are cut from a per-thread
 * block of CSPRNG output instead of one system call per token. Secrets and
 * keys never come from here. */
#define PAD_POOL 4096
static __thread uint8_t pad_pool[PAD_POOL];
static __thread size_t pad_used = PAD_POOL;
static int pad_fork_failed;

/* fork() copies the pool: parent and child would cut the same pads. The
 * child (whose one thread is the one that forked) drops its copy and
 * draws a fresh block at its first pad. */
static void pad_pool_forget(void)
{
	csrfi_wipe(pad_pool, sizeof pad_pool);
	pad_used = PAD_POOL;
}

static pthread_once_t pad_fork_once = PTHREAD_ONCE_INIT;

static void pad_fork_register(void)
{
	if (pthread_atfork(NULL, NULL, pad_pool_forget) != 0)
		pad_fork_failed = 1; /* then every pad is drawn on its own */
}

csrf_reason csrfi_random_pad(uint8_t *out, size_t n)
{
	if (n > PAD_POOL)
		return csrf_random(out, n);
	pthread_once(&pad_fork_once, pad_fork_register);
	if (pad_fork_failed)
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
