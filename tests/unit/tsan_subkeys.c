/* SPDX-License-Identifier: BSD-2-Clause */
/* tsan_subkeys.c - a key's subkeys derived at its first use
 * (csrfi_key_slot_subkeys, src/token.c) under ThreadSanitizer: threads
 * verify and issue tokens and cookies of two keys, one of them
 * verify-only, while the main thread reloads the key file between two
 * rings again and again, so every reload is followed by a race to derive
 * both keys' subkeys first. Built with the built-in SHA-256, so that the
 * writes of the derivation are instrumented too (libcrypto's are not).
 * Exit status 0 when no check failed; a data race makes TSan exit 66
 * (tests/unit/CMakeLists.txt sets halt_on_error).
 *
 * Plain C without cmocka: the file is built apart, with -fsanitize=thread
 * in place of the build's sanitizers. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csrf.h"

#define HEX_A "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
#define HEX_B "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
#define THREADS 4
#define RELOADS 400

static csrf_ctx *ctx;
static uint8_t secret[CSRF_SECRET_LEN];
static char tok1[CSRF_TOKEN_LEN + 1], tok2[CSRF_TOKEN_LEN + 1], cookie1[CSRF_SECRET_COOKIE_LEN + 1];
static int stop;
static unsigned long failures, rounds;

static void *worker(void *arg)
{
	long id = (long)arg;
	char t[CSRF_TOKEN_LEN + 1], c[CSRF_SECRET_COOKIE_LEN + 1], f[CSRF_FIELD_NAME_MAX + 1];
	uint8_t got[CSRF_SECRET_LEN];

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		int bad = 0;
		/* key 1 signs in both rings; key 2, verify-only, is in one */
		bad |= csrf_token_verify(ctx, secret, "", 0, tok1, strlen(tok1), 0) != CSRF_OK;
		csrf_reason r = csrf_token_verify(ctx, secret, "sess", 4, tok2, strlen(tok2), 0);
		bad |= r != CSRF_OK && r != CSRF_UNKNOWN_KEY;
		bad |= csrf_secret_cookie_decode(ctx, cookie1, CSRF_SECRET_COOKIE_LEN, got) != CSRF_OK;
		if (id & 1) {
			bad |= csrf_token_issue(ctx, secret, "", 0, 0, t, sizeof t) != CSRF_OK;
			bad |= csrf_token_verify(ctx, secret, "", 0, t, strlen(t), 0) != CSRF_OK;
			bad |= csrf_secret_cookie_encode(ctx, secret, c, sizeof c) != CSRF_OK;
			bad |= csrf_field_name(ctx, secret, f, sizeof f) != CSRF_OK;
		}
		if (bad)
			__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&rounds, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static int put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		return -1;
	return chmod(path, 0600);
}

#define CHECK(x)                                                                                                       \
	do {                                                                                                           \
		if (!(x)) {                                                                                            \
			fprintf(stderr, "tsan_subkeys: %s failed (line %d)\n", #x, __LINE__);                          \
			return 1;                                                                                      \
		}                                                                                                      \
	} while (0)

int main(void)
{
	char dir[] = "/tmp/csrf-tsan-XXXXXX", both[64], one[64], other[64];
	pthread_t th[THREADS];

	CHECK(mkdtemp(dir) != NULL);
	snprintf(both, sizeof both, "%s/both", dir);
	snprintf(one, sizeof one, "%s/one", dir);
	snprintf(other, sizeof other, "%s/other", dir);
	CHECK(put(both, "key 1 1 " HEX_A " sign\nkey 2 2 " HEX_B "\n") == 0);
	CHECK(put(one, "key 1 1 " HEX_A " sign\n") == 0);
	CHECK(put(other, "key 2 2 " HEX_B " sign\n") == 0);
	memset(secret, 7, sizeof secret);

	CHECK(csrf_ctx_new(&ctx, NULL) == CSRF_OK);
	CHECK(csrf_ctx_load_key_file(ctx, other) == CSRF_OK);
	CHECK(csrf_token_issue(ctx, secret, "sess", 4, 0, tok2, sizeof tok2) == CSRF_OK);
	CHECK(csrf_ctx_load_key_file(ctx, both) == CSRF_OK);
	CHECK(csrf_token_issue(ctx, secret, "", 0, 0, tok1, sizeof tok1) == CSRF_OK);
	CHECK(csrf_secret_cookie_encode(ctx, secret, cookie1, sizeof cookie1) == CSRF_OK);
	CHECK(csrf_ctx_load_key_file(ctx, both) == CSRF_OK); /* nothing derived yet */

	for (long i = 0; i < THREADS; i++)
		CHECK(pthread_create(&th[i], NULL, worker, (void *)i) == 0);
	/* every reload, and on until the workers have run among them: on a
	 * loaded machine they may start only after the first reloads */
	for (int i = 0; i < RELOADS || __atomic_load_n(&rounds, __ATOMIC_RELAXED) < 2000; i++)
		CHECK(csrf_ctx_load_key_file(ctx, i % 2 ? both : one) == CSRF_OK);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	csrf_ctx_free(ctx);
	unlink(both);
	unlink(one);
	unlink(other);
	rmdir(dir);
	printf("tsan_subkeys: %d reloads, %lu rounds, %lu failed\n", RELOADS, rounds, failures);
	return failures != 0;
}
