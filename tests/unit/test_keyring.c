/* SPDX-License-Identifier: BSD-2-Clause */
/* test_keyring.c - src/keyring.c: adding and generating keys, which key
 * signs, loading key files (good ones replace the ring, bad ones leave it
 * intact with a message naming the line), and reloads while other
 * threads verify. No test prints key material. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"
#include "testutil.h"

#define HEX_A "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define HEX_B "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"

static const uint8_t key_a[CSRF_KEY_LEN] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa,
                                            0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55,
                                            0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
static const uint8_t secret[CSRF_SECRET_LEN] = {9, 8, 7};
#define SID "sid-1"

static char tmpdir[64];
static char path[128];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/csrf-keyring-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(path, sizeof path, "%s/keys", tmpdir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return rmdir(tmpdir);
}

static void write_file(const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0600), 0); /* readers refuse a looser key file */
}

static csrf_ctx *new_ctx(void)
{
	csrf_ctx *ctx = NULL;
	assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
	return ctx;
}

/* The key id a fresh token of ctx carries. */
static uint32_t signing_id(const csrf_ctx *ctx)
{
	char t[CSRF_TOKEN_LEN + 1];
	uint8_t buf[2 * CSRF_TOKEN_RAW_LEN];
	size_t n;
	assert_int_equal(csrf_token_issue(ctx, secret, SID, strlen(SID), 0, t, sizeof t), CSRF_OK);
	assert_int_equal(csrfi_b64url_decode(t, strlen(t), buf, sizeof buf, &n), CSRF_OK);
	uint8_t *raw = buf;    /* version 4, unmasked */
	if (n == sizeof buf) { /* masked */
		raw = buf + CSRF_TOKEN_RAW_LEN;
		for (size_t i = 0; i < CSRF_TOKEN_RAW_LEN; i++)
			raw[i] ^= buf[i];
	}
	return (uint32_t)raw[2] << 24 | (uint32_t)raw[3] << 16 | (uint32_t)raw[4] << 8 | raw[5];
}

static void test_add_key(void **state)
{
	(void)state;
	csrf_ctx *ctx = new_ctx();
	uint8_t k[CSRF_KEY_LEN] = {1};

	assert_int_equal(csrf_ctx_add_key(NULL, 1, k, 1), CSRF_ERR_ARG);
	assert_int_equal(csrf_ctx_add_key(ctx, 1, NULL, 1), CSRF_ERR_ARG);
	assert_int_equal(csrf_ctx_add_key(ctx, 0, k, 1), CSRF_ERR_CONFIG);
	assert_non_null(strstr(csrf_ctx_error(ctx), "key id 0"));
	uint8_t zero[CSRF_KEY_LEN] = {0};
	assert_int_equal(csrf_ctx_add_key(ctx, 1, zero, 1), CSRF_ERR_CONFIG);
	assert_non_null(strstr(csrf_ctx_error(ctx), "all zero"));

	/* The first key signs even without the flag; later ones only with it. */
	assert_int_equal(csrf_ctx_add_key(ctx, 5, k, 0), CSRF_OK);
	assert_int_equal(signing_id(ctx), 5);
	k[0] = 2;
	assert_int_equal(csrf_ctx_add_key(ctx, 3, k, 0), CSRF_OK);
	assert_int_equal(signing_id(ctx), 5);
	k[0] = 3;
	assert_int_equal(csrf_ctx_add_key(ctx, 9, k, 1), CSRF_OK);
	assert_int_equal(signing_id(ctx), 9);
	assert_int_equal(csrf_ctx_add_key(ctx, 3, k, 1), CSRF_ERR_CONFIG);
	assert_non_null(strstr(csrf_ctx_error(ctx), "key id 3 is already"));
	assert_int_equal(signing_id(ctx), 9);

	/* csrfi_ring_find */
	pthread_rwlock_rdlock(&ctx->ring_lock);
	assert_non_null(csrfi_ring_find(&ctx->ring, 3));
	assert_int_equal(csrfi_ring_find(&ctx->ring, 3)->id, 3);
	assert_null(csrfi_ring_find(&ctx->ring, 4));
	assert_null(csrfi_ring_find(&ctx->ring, 0));
	assert_null(csrfi_ring_find(NULL, 3));
	pthread_rwlock_unlock(&ctx->ring_lock);

	/* Full at CSRF_KEYS_MAX. */
	for (uint32_t id = 100; ctx->ring.n < CSRF_KEYS_MAX; id++)
		assert_int_equal(csrf_ctx_add_key(ctx, id, k, 0), CSRF_OK);
	assert_int_equal(csrf_ctx_add_key(ctx, 1000, k, 1), CSRF_ERR_CONFIG);
	assert_non_null(strstr(csrf_ctx_error(ctx), "full"));
	assert_int_equal(csrf_ctx_generate_key(ctx), CSRF_ERR_CONFIG);
	assert_int_equal(signing_id(ctx), 9);
	csrf_ctx_free(ctx);
}

static void test_generate_key(void **state)
{
	(void)state;
	csrf_ctx *ctx = new_ctx();
	char t[CSRF_TOKEN_LEN + 1];

	assert_int_equal(csrf_ctx_generate_key(NULL), CSRF_ERR_ARG);
	assert_int_equal(csrf_ctx_generate_key(ctx), CSRF_OK);
	assert_int_equal(signing_id(ctx), 1);
	assert_int_equal(csrf_token_issue(ctx, secret, SID, strlen(SID), 0, t, sizeof t), CSRF_OK);
	assert_int_equal(csrf_ctx_add_key(ctx, 41, key_a, 0), CSRF_OK);
	assert_int_equal(csrf_ctx_generate_key(ctx), CSRF_OK);
	assert_int_equal(signing_id(ctx), 42);
	/* Key 1's token still verifies. */
	assert_int_equal(csrf_token_verify(ctx, secret, SID, strlen(SID), t, strlen(t), 0), CSRF_OK);
	/* Two generated keys differ: a token of one does not verify under
	 * the other placed at the same id (its bind differs too, so it reads
	 * as another session's token). */
	csrf_ctx *other = new_ctx();
	assert_int_equal(csrf_ctx_generate_key(other), CSRF_OK);
	assert_int_equal(csrf_token_verify(other, secret, SID, strlen(SID), t, strlen(t), 0), CSRF_TOKEN_SESSION);
	csrf_ctx_free(other);

	csrf_ctx *top = new_ctx();
	assert_int_equal(csrf_ctx_add_key(top, UINT32_MAX, key_a, 1), CSRF_OK);
	assert_int_equal(csrf_ctx_generate_key(top), CSRF_ERR_CONFIG);
	csrf_ctx_free(top);
	csrf_ctx_free(ctx);
}

static void test_load_good(void **state)
{
	(void)state;
	csrf_ctx *ctx = new_ctx();
	char t[CSRF_TOKEN_LEN + 1];

	write_file("# fleet keys\nkey 1 1700000000 " HEX_A "\nkey 2 1700000001 " HEX_B " sign\n");
	assert_int_equal(csrf_ctx_load_key_file(ctx, path), CSRF_OK);
	assert_string_equal(csrf_ctx_error(ctx), "");
	assert_int_equal(ctx->ring.n, 2);
	assert_int_equal(signing_id(ctx), 2);
	assert_int_equal(ctx->ring.keys[0].created, 1700000000);

	/* The key of the file is the key used: same as adding it directly. */
	csrf_ctx *direct = new_ctx();
	assert_int_equal(csrf_ctx_add_key(direct, 1, key_a, 1), CSRF_OK);
	assert_int_equal(csrf_token_issue(direct, secret, SID, strlen(SID), 0, t, sizeof t), CSRF_OK);
	assert_int_equal(csrf_token_verify(ctx, secret, SID, strlen(SID), t, strlen(t), 0), CSRF_OK);
	csrf_ctx_free(direct);

	/* A reload replaces the whole ring (keys added by hand are gone). */
	assert_int_equal(csrf_ctx_add_key(ctx, 50, key_a, 1), CSRF_OK);
	write_file("key 3 0 " HEX_B " sign\n");
	assert_int_equal(csrf_ctx_load_key_file(ctx, path), CSRF_OK);
	assert_int_equal(ctx->ring.n, 1);
	assert_int_equal(signing_id(ctx), 3);
	assert_int_equal(csrf_token_verify(ctx, secret, SID, strlen(SID), t, strlen(t), 0), CSRF_UNKNOWN_KEY);

	/* A file made by csrf_keyfile_new and rotated loads. */
	unlink(path);
	uint32_t id;
	assert_int_equal(csrf_keyfile_new(path, NULL), CSRF_OK);
	assert_int_equal(csrf_keyfile_rotate(path, &id, NULL), CSRF_OK);
	assert_int_equal(csrf_ctx_load_key_file(ctx, path), CSRF_OK);
	assert_int_equal(ctx->ring.n, 2);
	assert_int_equal(signing_id(ctx), id);
	csrf_ctx_free(ctx);
}

/* Each bad file: the error, a message naming what (and the line), the
 * old ring untouched. */
static const struct {
	const char *text; /* NULL: no file at all */
	csrf_reason want;
	const char *msg;
} bad_files[] = {
    {NULL, CSRF_ERR_IO, "cannot open"},
    {"", CSRF_ERR_CONFIG, "no keys"},
    {"key 1 1 " HEX_A "\n", CSRF_ERR_CONFIG, "no key is flagged sign"},
    {"key 1 1 " HEX_A " sign\nkey 1 1 " HEX_B "\n", CSRF_ERR_CONFIG, "line 2: duplicate key id 1"},
    {"key 1 1 " HEX_A " sign\nkey 2 1 " HEX_B " sign\n", CSRF_ERR_CONFIG, "line 2: a second key"},
    {"# c\nkey 0 1 " HEX_A " sign\n", CSRF_ERR_CONFIG, "line 2: key id"},
    {"key 1 x " HEX_A " sign\n", CSRF_ERR_CONFIG, "line 1: creation time"},
    {"key 1 1 " HEX_A "0 sign\n", CSRF_ERR_CONFIG, "line 1: key must be exactly 64 hex digits"},
    {"key 1 1 " HEX_A " sign\nkey 2 1\n", CSRF_ERR_CONFIG, "line 2: missing fields"},
    {"key 1 1 " HEX_A " sign\nkey 2 1 " HEX_B " sign now\n", CSRF_ERR_CONFIG, "line 2: too many fields"},
    {"key 1 1 " HEX_A " signed\n", CSRF_ERR_CONFIG, "line 1: unknown flag"},
    {"kex 1 1 " HEX_A " sign\n", CSRF_ERR_CONFIG, "line 1: expected"},
    {"key 1 1 " HEX_A " sign\n\x7f\n", CSRF_ERR_CONFIG, "line 2: control"},
};

static void test_load_bad_keeps_ring(void **state)
{
	(void)state;
	csrf_ctx *ctx = new_ctx();
	char t[CSRF_TOKEN_LEN + 1];
	char text[8192];

	assert_int_equal(csrf_ctx_add_key(ctx, 7, key_a, 1), CSRF_OK);
	assert_int_equal(csrf_token_issue(ctx, secret, SID, strlen(SID), 0, t, sizeof t), CSRF_OK);
	for (size_t i = 0; i < sizeof bad_files / sizeof bad_files[0]; i++) {
		unlink(path);
		if (bad_files[i].text)
			write_file(bad_files[i].text);
		csrf_reason r = csrf_ctx_load_key_file(ctx, path);
		if (r != bad_files[i].want)
			fail_msg("bad file %zu: got %s, want %s", i, csrf_reason_name(r),
			         csrf_reason_name(bad_files[i].want));
		const char *msg = csrf_ctx_error(ctx);
		if (!strstr(msg, bad_files[i].msg))
			fail_msg("bad file %zu: message \"%s\" lacks \"%s\"", i, msg, bad_files[i].msg);
		assert_non_null(strstr(msg, path));
		assert_null(strstr(msg, "00112233"));
		assert_null(strstr(msg, "ffeeddcc"));
		assert_int_equal(ctx->ring.n, 1);
		assert_int_equal(signing_id(ctx), 7);
		assert_int_equal(csrf_token_verify(ctx, secret, SID, strlen(SID), t, strlen(t), 0), CSRF_OK);
	}

	/* More than 16 keys. */
	size_t o = 0;
	for (int i = 1; i <= 17; i++)
		o += (size_t)snprintf(text + o, sizeof text - o, "key %d 1 %s%s\n", i, HEX_A, i == 1 ? " sign" : "");
	write_file(text);
	assert_int_equal(csrf_ctx_load_key_file(ctx, path), CSRF_ERR_CONFIG);
	assert_non_null(strstr(csrf_ctx_error(ctx), "line 17: more than 16 keys"));
	assert_int_equal(signing_id(ctx), 7);

	/* A line over 512 bytes. */
	memset(text, ' ', 600);
	memcpy(text, "key 1 1 " HEX_A " sign", 77);
	text[600] = '\n';
	text[601] = '\0';
	write_file(text);
	assert_int_equal(csrf_ctx_load_key_file(ctx, path), CSRF_ERR_CONFIG);
	assert_non_null(strstr(csrf_ctx_error(ctx), "line 1: longer than 512 bytes"));

	/* A file over the size cap, read in chunks. */
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("key 1 1 " HEX_A " sign\n", f);
	for (int i = 0; i < 2000; i++)
		fputs("# padding padding padding padding\n", f);
	fclose(f);
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(csrf_ctx_load_key_file(ctx, path), CSRF_ERR_CONFIG);
	assert_non_null(strstr(csrf_ctx_error(ctx), "larger than 65536 bytes"));

	/* A directory, and arguments. */
	assert_int_equal(csrf_ctx_load_key_file(ctx, tmpdir), CSRF_ERR_IO);
	assert_int_equal(csrf_ctx_load_key_file(ctx, NULL), CSRF_ERR_ARG);
	assert_int_equal(csrf_ctx_load_key_file(NULL, path), CSRF_ERR_ARG);
	assert_int_equal(signing_id(ctx), 7);
	assert_int_equal(csrf_token_verify(ctx, secret, SID, strlen(SID), t, strlen(t), 0), CSRF_OK);
	csrf_ctx_free(ctx);
}

/* Threads verify and issue while the ring is reloaded again and again
 * between two files that both hold key 1 as the signing key: no verify
 * ever fails. */
typedef struct {
	csrf_ctx *ctx;
	const char *token;
	int stop;
	size_t failures;
	size_t rounds;
} race_state;

static void *verifier(void *arg)
{
	race_state *rs = arg;
	char t[CSRF_TOKEN_LEN + 1];
	while (!__atomic_load_n(&rs->stop, __ATOMIC_ACQUIRE)) {
		if (csrf_token_verify(rs->ctx, secret, SID, strlen(SID), rs->token, strlen(rs->token), 0) != CSRF_OK)
			__atomic_add_fetch(&rs->failures, 1, __ATOMIC_RELAXED);
		if (csrf_token_issue(rs->ctx, secret, SID, strlen(SID), 0, t, sizeof t) != CSRF_OK ||
		    csrf_token_verify(rs->ctx, secret, SID, strlen(SID), t, strlen(t), 0) != CSRF_OK)
			__atomic_add_fetch(&rs->failures, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&rs->rounds, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_reload_while_verifying(void **state)
{
	(void)state;
	char path2[160];
	char t[CSRF_TOKEN_LEN + 1];
	csrf_ctx *ctx = new_ctx();
	pthread_t th[2];

	snprintf(path2, sizeof path2, "%s/keys2", tmpdir);
	write_file("key 1 1 " HEX_A " sign\n");
	FILE *f = fopen(path2, "w");
	assert_non_null(f);
	fputs("key 1 1 " HEX_A " sign\nkey 2 2 " HEX_B "\n", f);
	fclose(f);
	assert_int_equal(chmod(path2, 0600), 0);
	assert_int_equal(csrf_ctx_load_key_file(ctx, path), CSRF_OK);
	assert_int_equal(csrf_token_issue(ctx, secret, SID, strlen(SID), 0, t, sizeof t), CSRF_OK);

	race_state rs = {ctx, t, 0, 0, 0};
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, verifier, &rs), 0);
	/* At least 300 reloads, and on until the verifiers have run 200
	 * rounds among them: on a loaded machine the threads may start only
	 * after the first reloads are done, and a race needs both sides. */
	for (int i = 0; i < 300 || __atomic_load_n(&rs.rounds, __ATOMIC_RELAXED) < 200; i++)
		assert_int_equal(csrf_ctx_load_key_file(ctx, i % 2 ? path : path2), CSRF_OK);
	__atomic_store_n(&rs.stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(rs.failures, 0);
	assert_true(rs.rounds >= 200);
	unlink(path2);
	csrf_ctx_free(ctx);
}

/* 1 when n bytes at p are all zero. */
static int all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

/* Two keys' states are the same key when they MAC alike, messages of
 * one block and of two (the states' raw bytes are no test: the
 * builtin SHA-256 leaves its buffer unwritten after a whole block, so
 * they differ where nothing reads them). */
static void assert_same_key(const csrfi_mac_key *got, const csrfi_mac_key *want)
{
	static const char msg[] = "a message of more than one SHA-256 block, so that the inner state, the outer "
	                          "one and the lengths they absorbed all count";
	static const size_t lens[] = {1, 55, 56, sizeof msg - 1}; /* one block, the padding's, two */
	uint8_t a[CSRF_MAC_LEN], b[CSRF_MAC_LEN];
	_Static_assert(sizeof msg - 1 > 64, "two blocks");
	for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
		csrfi_mac(got, msg, lens[i], NULL, 0, NULL, 0, NULL, 0, a);
		csrfi_mac(want, msg, lens[i], NULL, 0, NULL, 0, NULL, 0, b);
		assert_memory_equal(a, b, sizeof a);
	}
}

/* The states of MAC(key, label) as a key: what a subkey must be. */
static void derived(const uint8_t key[CSRF_KEY_LEN], const char *label, csrfi_mac_key *out)
{
	csrfi_mac_key k;
	uint8_t sub[CSRF_MAC_LEN];
	csrfi_mac_init(&k, key, CSRF_KEY_LEN);
	csrfi_mac(&k, label, strlen(label), NULL, 0, NULL, 0, NULL, 0, sub);
	csrfi_mac_init(out, sub, sizeof sub);
	csrfi_mac_wipe(&k);
}

/* A free that looks whether the context was wiped before: every key and
 * subkey state. */
typedef struct {
	const void *ctx;
	int unwiped;
} free_watch;

static void free_checking_wiped(void *p, void *ud)
{
	free_watch *w = ud;
	if (p == w->ctx && !all_zero(p, sizeof(csrf_ctx)))
		w->unwiped++;
	free(p);
}

static void *plain_alloc(size_t n, void *ud)
{
	(void)ud;
	return malloc(n);
}

/* A key's subkeys (token and cookie version 3) are derived the first time
 * the key is used after it joins the ring, by hand or from a file, again
 * after each reload (the same id with other bytes signs with the new
 * bytes' subkeys), and wiped with the key: a retired key's slot, the
 * whole context when freed. A key the process never uses (the other keys
 * of a CGI request's ring) is never derived. */
static void test_subkeys(void **state)
{
	(void)state;
	csrf_ctx *ctx = new_ctx();
	csrfi_mac_key want;
	char t[CSRF_TOKEN_LEN + 1], c[CSRF_SECRET_COOKIE_LEN + 1];
	uint8_t got[CSRF_SECRET_LEN];

	assert_int_equal(csrf_ctx_add_key(ctx, 1, key_a, 1), CSRF_OK);
	const csrfi_key_slot *s = &ctx->ring.keys[0];
	assert_int_equal(s->subkeys, 0);
	assert_true(all_zero(&s->tag_mac, sizeof s->tag_mac));
	assert_true(all_zero(&s->cookie_mac, sizeof s->cookie_mac));
	assert_int_equal(csrf_token_issue(ctx, secret, SID, strlen(SID), 0, t, sizeof t), CSRF_OK);
	assert_int_equal(s->subkeys, 1);
	derived(key_a, "libcsrf token v3", &want);
	assert_same_key(&s->tag_mac, &want);
	derived(key_a, "libcsrf cookie v3", &want);
	assert_same_key(&s->cookie_mac, &want);

	/* from a file: the same key, the same subkeys */
	write_file("key 1 1 " HEX_A " sign\nkey 2 2 " HEX_B "\n");
	assert_int_equal(csrf_ctx_load_key_file(ctx, path), CSRF_OK);
	assert_int_equal(s->subkeys, 0);
	assert_int_equal(csrf_secret_cookie_encode(ctx, secret, c, sizeof c), CSRF_OK);
	assert_same_key(&s->cookie_mac, &want);
	assert_int_equal(csrf_token_issue(ctx, secret, SID, strlen(SID), 0, t, sizeof t), CSRF_OK);
	/* key 2 verifies and never signed: never derived */
	assert_int_equal(ctx->ring.keys[1].subkeys, 0);
	assert_true(all_zero(&ctx->ring.keys[1].tag_mac, sizeof ctx->ring.keys[1].tag_mac));

	/* id 1 reloaded with other bytes, id 2 retired: what key 1's old
	 * bytes signed no longer verifies, and key 2's slot is zero */
	write_file("key 1 1 " HEX_B " sign\n");
	assert_int_equal(csrf_ctx_load_key_file(ctx, path), CSRF_OK);
	assert_int_equal(ctx->ring.n, 1);
	assert_true(all_zero(&ctx->ring.keys[1], sizeof ctx->ring.keys[1]));
	assert_int_not_equal(csrf_token_verify(ctx, secret, SID, strlen(SID), t, strlen(t), 0), CSRF_OK);
	assert_int_equal(csrf_secret_cookie_decode(ctx, c, CSRF_SECRET_COOKIE_LEN, got), CSRF_SECRET_INVALID);
	assert_int_equal(csrf_token_issue(ctx, secret, SID, strlen(SID), 0, t, sizeof t), CSRF_OK);
	assert_int_equal(csrf_token_verify(ctx, secret, SID, strlen(SID), t, strlen(t), 0), CSRF_OK);

	csrfi_key_slot slot;
	csrfi_key_slot_init(&slot, 1, 0, key_a);
	assert_false(all_zero(&csrfi_key_slot_subkeys(ctx, &slot)->tag_mac, sizeof slot.tag_mac));
	csrfi_key_slot_wipe(&slot);
	assert_true(all_zero(&slot, sizeof slot));
	csrf_ctx_free(ctx);

	free_watch w = {NULL, 0};
	csrf_allocator a = {plain_alloc, free_checking_wiped, &w};
	assert_int_equal(csrf_ctx_new(&ctx, &a), CSRF_OK);
	w.ctx = ctx;
	assert_int_equal(csrf_ctx_load_key_file(ctx, path), CSRF_OK);
	assert_int_equal(csrf_ctx_add_key(ctx, 2, key_a, 1), CSRF_OK);
	csrf_ctx_free(ctx);
	assert_int_equal(w.unwiped, 0);
	csrfi_mac_wipe(&want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_add_key),
	    cmocka_unit_test(test_generate_key),
	    cmocka_unit_test_setup_teardown(test_load_good, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_load_bad_keeps_ring, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_reload_while_verifying, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_subkeys, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
