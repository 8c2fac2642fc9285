/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * keyring.c - the context's key ring: lookup by id on the hot path, keys
 * added or generated at configuration time, and the atomic reload of a
 * whole ring from a key file. The ring is read under ctx->ring_lock's
 * read lock and replaced under its write lock; keys are held only as
 * precomputed HMAC states, each beside its two subkeys' (token.c,
 * csrfi_key_slot_subkeys: derived at the key's first use), and all
 * three are wiped when the key leaves the
 * ring (csrfi_key_slot_wipe: a retired key at a reload, csrf_ctx_free).
 *
 * Signing rule: a key file must flag exactly one key "sign". With
 * csrf_ctx_add_key the key added with signing != 0 signs; the first key
 * of an empty ring signs until another is added with signing.
 */
#include "internal.h"

#include <stdio.h>

const csrfi_key_slot *csrfi_ring_find(const csrfi_keyring *ring, uint32_t id)
{
	if (!ring || id == 0)
		return NULL;
	for (size_t i = 0; i < ring->n; i++)
		if (ring->keys[i].id == id)
			return &ring->keys[i];
	return NULL;
}

static void ring_wipe(csrfi_keyring *ring)
{
	for (size_t i = 0; i < ring->n; i++)
		csrfi_key_slot_wipe(&ring->keys[i]);
	csrfi_wipe(ring, sizeof *ring);
}

static csrf_reason add_key(csrf_ctx *ctx, uint32_t id, const uint8_t key[CSRF_KEY_LEN], int signing)
{
	csrf_reason r = CSRF_OK;

	if (!ctx || !key)
		return CSRF_ERR_ARG;
	if (id == 0)
		return csrfi_config_error(ctx, CSRF_ERR_CONFIG, "key id 0 is reserved; ids start at 1");
	if (csrfi_key_is_zero(key))
		return csrfi_config_error(ctx, CSRF_ERR_CONFIG,
		                          "key %u is all zero (a placeholder, not a secret): give it random bytes",
		                          (unsigned)id);

	pthread_rwlock_wrlock(&ctx->ring_lock);
	if (csrfi_ring_find(&ctx->ring, id)) {
		r = csrfi_config_error(ctx, CSRF_ERR_CONFIG, "key id %u is already in the ring", (unsigned)id);
	} else if (ctx->ring.n == CSRF_KEYS_MAX) {
		r = csrfi_config_error(ctx, CSRF_ERR_CONFIG, "the key ring is full (%d keys)", CSRF_KEYS_MAX);
	} else {
		csrfi_key_slot_init(&ctx->ring.keys[ctx->ring.n], id, csrfi_now(0), key);
		if (signing || ctx->ring.n == 0)
			ctx->ring.signing = ctx->ring.n;
		ctx->ring.n++;
	}
	pthread_rwlock_unlock(&ctx->ring_lock);
	return r;
}

CSRF_API csrf_reason csrf_ctx_add_key(csrf_ctx *ctx, uint32_t id, const uint8_t key[CSRF_KEY_LEN], int signing)
{
	csrf_reason r = add_key(ctx, id, key, signing);
	csrfi_wipe_regs(); /* the key, its HMAC states (csrfi_mac_init) */
	return r;
}

CSRF_API csrf_reason csrf_ctx_generate_key(csrf_ctx *ctx)
{
	uint8_t key[CSRF_KEY_LEN];
	uint32_t max = 0;
	csrf_reason r;

	if (!ctx)
		return CSRF_ERR_ARG;
	pthread_rwlock_rdlock(&ctx->ring_lock);
	for (size_t i = 0; i < ctx->ring.n; i++)
		if (ctx->ring.keys[i].id > max)
			max = ctx->ring.keys[i].id;
	pthread_rwlock_unlock(&ctx->ring_lock);
	if (max == UINT32_MAX)
		return csrfi_config_error(ctx, CSRF_ERR_CONFIG, "no key id left after %u", (unsigned)max);

	r = csrf_random(key, sizeof key);
	if (r == CSRF_OK)
		r = add_key(ctx, max + 1, key, 1);
	csrfi_wipe(key, sizeof key);
	csrfi_wipe_regs();
	return r;
}

static csrf_reason load_key_file(csrf_ctx *ctx, const char *path)
{
	csrfi_keyfile_data d;
	csrfi_keyring ring;
	char msg[200];
	csrf_reason r;

	if (!ctx || !path)
		return CSRF_ERR_ARG;
	r = csrfi_keyfile_read(path, &d, msg, sizeof msg);
	if (r != CSRF_OK)
		return csrfi_config_error(ctx, r, "key file %s: %s", path, msg);

	/* Build the whole new ring before touching the old one. */
	memset(&ring, 0, sizeof ring);
	for (size_t i = 0; i < d.n; i++)
		csrfi_key_slot_init(&ring.keys[i], d.keys[i].id, d.keys[i].created, d.keys[i].key);
	ring.n = d.n;
	ring.signing = d.signing;
	csrfi_keyfile_data_wipe(&d);

	pthread_rwlock_wrlock(&ctx->ring_lock);
	ring_wipe(&ctx->ring);
	ctx->ring = ring;
	pthread_rwlock_unlock(&ctx->ring_lock);

	ring_wipe(&ring);
	ctx->err[0] = '\0';
	return CSRF_OK;
}

CSRF_API csrf_reason csrf_ctx_load_key_file(csrf_ctx *ctx, const char *path)
{
	csrf_reason r = load_key_file(ctx, path);
	csrfi_wipe_regs(); /* the file's text, the keys, their states */
	return r;
}
