/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * token.c - per-session secrets, tokens bound to a session, the derived
 * hidden-field name and the signed secret cookie.
 *
 * Crypto choice. HMAC-SHA256 over the build's SHA-256 backend
 * (internal.h): OpenSSL 3.0's libcrypto by default, which uses the CPU's
 * SHA extensions (faster here than libsodium's HMAC; the figures are in
 * bench/RESULTS.md), or the built-in one (sha256.c) of a router build. It is
 * used through precomputed inner and outer SHA-256 states (mac.c), so a
 * MAC allocates nothing and costs its message's blocks plus one
 * compression. Secrets and masks come from the kernel's getrandom
 * (random.c). libsodium is used only for Argon2id (re-authentication,
 * another file). Comparisons of MACs are constant time (csrfi_ct_eq_words).
 *
 * Subkeys. The first time a key k of the ring is used (csrfi_key_slot_subkeys,
 * after csrf_ctx_add_key, a key file's load or reload), two subkeys are
 * derived from it and kept beside it as precomputed states, wiped with it
 * (a process that uses one key of its ring derives no others: a CGI
 * request verifies with one key):
 *   tk = MAC_k("libcsrf token v3")    ck = MAC_k("libcsrf cookie v3")
 * Each serves one purpose, so its messages need no label: version 3's tag
 * without a session and its cookie fit one SHA-256 block (55 bytes at
 * most), and a verify costs two compressions instead of three. A fleet
 * sharing a key file derives the same subkeys on every server.
 *
 * Raw token, version 4 (issued by default), CSRF_TOKEN_RAW_LEN = 38 bytes:
 *   version(1) = 4 | flags(1) = 0 | key id(4, BE) | issued-at(4, BE,
 *   unix seconds mod 2^32) | bind(4) | nonce(8) | tag(16)
 *   bind  = version 3's bind[0..4)
 *   nonce = fresh random bytes at each issue
 *   tag   = as version 3's, over these 22 header bytes
 * It is sent unmasked, 51 characters: the nonce makes each issue's tag a
 * MAC of a message never MACed before, so two renders share no byte
 * that is secret (BREACH), as the pad did outside the MAC. The tag's
 * message starts with the version byte, so no version 3 message is a
 * version 4 one under the same tag subkey. A version 4 token masked is
 * malformed: no release issues that form. The issue time is read as the
 * instant within 2^31 seconds of now with those low 32 bits (token_time).
 * Raw token, version 3 (issued on request), the same length:
 *   version(1) = 3 | flags(1) = 0 | key id(4, BE) | issued-at(8, BE) |
 *   bind(8) | tag(16)
 *   bind = MAC_k("libcsrf bind v1" || len(sid) || sid)[0..8)
 *   tag  = MAC_tk(bytes 0..21 || secret)[0..16)                  sid empty
 *          MAC_tk(bytes 0..21 || secret || len(sid) || sid)[0..16) otherwise
 * Version 2 (verified, issued before), the same layout and length:
 *   tag  = MAC_k("libcsrf token v2" || secret || bytes 0..21 || len(sid) || sid)[0..16)
 * Version 1 (verified), 54 bytes: the same fields, the whole 32-byte MAC
 * as its tag, under the label "libcsrf token v1".
 * len(sid) is 4 bytes big endian, so part boundaries are unambiguous; a
 * version 3 message is 54 bytes without a session and at least 59 with.
 * The tag covers the bind, so a verified tag vouches for it: verify
 * computes one MAC, and the bind only to explain a failure. The bind to
 * no session (sid empty: no session cookie configured) depends on the key
 * alone, so it is computed once a key and kept (csrfi_mac_key.memo): an
 * issue then costs the tag's MAC only (two compressions).
 * The masked form (versions 1 to 3) is base64url(pad || raw ^ pad), pad
 * as long as raw, fresh random bytes (public by construction, so cut from
 * a per-thread block of CSPRNG output, as version 4's nonce is): 102
 * characters (version 1: 144); the unmasked form is base64url(raw): 51
 * (72). The length says the layout and the form, the version byte which
 * version of that layout (1 at version 1's lengths, 2 or 3 masked, 2 to
 * 4 unmasked); any other byte is malformed. The bind
 * lets verify tell a token of another session from a forged one.
 * Why 128 bits of tag are enough, and why the subkeys separate what the
 * labels did: docs/architecture.md, "Tokens and cookies".
 *
 * Secret cookie, 77 bytes, base64url 103 characters:
 *   version(1) = 3 | key id(4, BE) | issued-at(8, BE) | secret(32) |
 *   MAC_ck(bytes 0..44)
 * Version 2 (verified, issued before): version byte 2 and
 * MAC_k("libcsrf cookie v2" || bytes 0..44).
 * The issue time lets a maximum age retire a leaked cookie as it retires
 * a leaked token.
 */
#include "internal.h"

#define TOKEN_V4 4 /* issued by default: a nonce inside the tag's message, sent unmasked */
#define TOKEN_V3 3 /* issued on request: the tag under the key's tag subkey, sent masked */
#define TOKEN_V2 2 /* issued on request: the tag under the key, labelled */
#define TOKEN_V1 1
#define IAT_OFF 6
#define BIND_OFF 14 /* versions 1 to 3 */
#define BIND_LEN 8
#define V4_BIND_OFF 10
#define V4_BIND_LEN 4
#define V4_NONCE_OFF 14
#define V4_NONCE_LEN 8
#define TAG_OFF 22
#define TAG_LEN 16    /* versions 2 and 3: HMAC-SHA256 truncated to 128 bits */
#define V1_RAW_LEN 54 /* version 1: the whole MAC as tag */
#define MASKED_MAX (2 * V1_RAW_LEN)
#define SKEW_SECONDS 300 /* how far in the future an issue time may be */
#define ISSUE_DEFAULT TOKEN_V4
#define SID_INLINE 64 /* a session id up to this long joins the tag's message buffer */

#define COOKIE_VERSION 3 /* issued: signed with the key's cookie subkey */
#define COOKIE_V2 2      /* verified: signed with the key, labelled */
#define COOKIE_IAT_OFF 5
#define COOKIE_SECRET_OFF 13
#define COOKIE_SIGNED 45 /* version, key id, issued-at, secret */
#define COOKIE_RAW (COOKIE_SIGNED + CSRF_MAC_LEN)

#define FIELD_PREFIX "csrf_"
#define FIELD_HASH_BYTES 6

static const char label_bind[] = "libcsrf bind v1";
static const char label_token_v2[] = "libcsrf token v2";
static const char label_token_v1[] = "libcsrf token v1";
static const char label_cookie_v2[] = "libcsrf cookie v2";
static const char label_field[] = "libcsrf field v1";
/* The subkeys' derivations: MAC_k of exactly these bytes, a message no
 * other MAC under k is (the labelled ones are longer) */
static const char label_tag_key[] = "libcsrf token v3";
static const char label_cookie_key[] = "libcsrf cookie v3";

/* One SHA-256 block holds a message of 55 bytes at most (a 0x80 byte and
 * the 8-byte length follow it): the version 3 tag's message without a
 * session, and the version 3 cookie's. */
#define ONE_BLOCK 55
_Static_assert(TAG_OFF + CSRF_SECRET_LEN <= ONE_BLOCK, "version 3 tag in one block");
_Static_assert(COOKIE_SIGNED <= ONE_BLOCK, "version 3 cookie in one block");
_Static_assert(TAG_OFF + TAG_LEN == CSRF_TOKEN_RAW_LEN, "token layout");
_Static_assert(IAT_OFF + 4 == V4_BIND_OFF && V4_BIND_OFF + V4_BIND_LEN == V4_NONCE_OFF &&
                   V4_NONCE_OFF + V4_NONCE_LEN == TAG_OFF,
               "version 4 token layout: the same header length as version 3's");
_Static_assert(TAG_LEN % 8 == 0 && CSRF_MAC_LEN % 8 == 0 && BIND_LEN % 8 == 0, "compared in words");
_Static_assert(TAG_OFF + CSRF_MAC_LEN == V1_RAW_LEN, "version 1 token layout");
_Static_assert(CSRF_B64_ENC_LEN(2 * CSRF_TOKEN_RAW_LEN) == CSRF_TOKEN_LEN, "masked token length");
_Static_assert(CSRF_B64_ENC_LEN(CSRF_TOKEN_RAW_LEN) == CSRF_TOKEN_UNMASKED_LEN, "unmasked token length");
_Static_assert(CSRF_B64_ENC_LEN(2 * V1_RAW_LEN) == CSRF_TOKEN_MAX_LEN, "version 1 masked token length");
_Static_assert(CSRF_B64_ENC_LEN(V1_RAW_LEN) == 72, "version 1 unmasked token length");
_Static_assert(CSRF_B64_ENC_LEN(COOKIE_RAW) == CSRF_SECRET_COOKIE_LEN, "cookie length");
_Static_assert(COOKIE_SECRET_OFF + CSRF_SECRET_LEN == COOKIE_SIGNED, "cookie layout");
_Static_assert(sizeof FIELD_PREFIX - 1 + 2 * FIELD_HASH_BYTES <= CSRF_FIELD_NAME_MAX, "field name length");

void csrfi_key_slot_init(csrfi_key_slot *slot, uint32_t id, int64_t created, const uint8_t key[CSRF_KEY_LEN])
{
	slot->id = id;
	slot->created = created;
	csrfi_mac_init(&slot->mac, key, CSRF_KEY_LEN);
	/* the subkeys at the key's first use (csrfi_key_slot_subkeys) */
	memset(&slot->tag_mac, 0, sizeof slot->tag_mac);
	memset(&slot->cookie_mac, 0, sizeof slot->cookie_mac);
	slot->subkeys = 0;
}

const csrfi_key_slot *csrfi_key_slot_subkeys(const csrf_ctx *ctx, const csrfi_key_slot *slot)
{
	if (__atomic_load_n(&slot->subkeys, __ATOMIC_ACQUIRE))
		return slot;
	/* Once a key and context: a MAC then starts from the subkey's
	 * states. The ring is const on the hot path; a slot's subkeys are
	 * written once, by one thread (the lock), before the flag. */
	csrfi_key_slot *s = (csrfi_key_slot *)slot;
	pthread_mutex_t *lock = (pthread_mutex_t *)&ctx->derive_lock;
	pthread_mutex_lock(lock);
	if (!__atomic_load_n(&s->subkeys, __ATOMIC_RELAXED)) {
		csrfi_mac_derive(&s->mac, label_tag_key, &s->tag_mac);
		csrfi_mac_derive(&s->mac, label_cookie_key, &s->cookie_mac);
		__atomic_store_n(&s->subkeys, 1u, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(lock);
	return slot;
}

void csrfi_key_slot_wipe(csrfi_key_slot *slot)
{
	csrfi_wipe(slot, sizeof *slot); /* the key's states and its subkeys' */
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, (uint32_t)(v >> 32));
	put_be32(p + 4, (uint32_t)v);
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get_be64(const uint8_t *p)
{
	return (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
}

/* The ring is const on the hot path; its lock is not. 0 on success (the
 * only failure is too many readers at once). */
static int ring_rdlock(const csrf_ctx *ctx)
{
	return pthread_rwlock_rdlock((pthread_rwlock_t *)&ctx->ring_lock);
}

static void ring_unlock(const csrf_ctx *ctx)
{
	pthread_rwlock_unlock((pthread_rwlock_t *)&ctx->ring_lock);
}

static void compute_bind(const csrfi_mac_key *k, const char *sid, size_t sid_len, uint8_t out[BIND_LEN])
{
	uint8_t len4[4];
	uint8_t mac[CSRF_MAC_LEN];

	_Static_assert(BIND_LEN == sizeof k->memo, "a bind is the key's memo");
	/* No session (every token where no session cookie is configured):
	 * the bind depends on the key alone, so it is computed once a key
	 * (two compressions of the three to five an issue costs) */
	if (sid_len == 0 && csrfi_mac_memo_get(k, out))
		return;
	put_be32(len4, (uint32_t)sid_len);
	csrfi_mac(k, label_bind, sizeof label_bind - 1, len4, sizeof len4, sid, sid_len, NULL, 0, mac);
	memcpy(out, mac, BIND_LEN);
	if (sid_len == 0)
		csrfi_mac_memo_set(k, mac);
	csrfi_wipe(mac, sizeof mac);
}

/* MAC_k(msg[0..n) || len(sid) || sid); msg has room for 4 + SID_INLINE
 * bytes more, so that a short session id (as they are) joins it: one
 * hash update. */
static void mac_with_sid(const csrfi_mac_key *k, uint8_t *msg, size_t n, const char *sid, size_t sid_len,
                         uint8_t out[CSRF_MAC_LEN])
{
	put_be32(msg + n, (uint32_t)sid_len);
	n += 4;
	if (sid_len <= SID_INLINE) {
		if (sid_len)
			memcpy(msg + n, sid, sid_len);
		n += sid_len;
		sid_len = 0;
	}
	csrfi_mac(k, msg, n, sid, sid_len, NULL, 0, NULL, 0, out);
}

/* The MAC a tag is cut from; it covers everything before the tag
 * (header and bind), the secret and the session, as the version says.
 * Versions 3 and 4: MAC_tk(header || secret), and || len(sid) || sid
 * only when a session is bound, so that the message without one (54
 * bytes) is one block; the two shapes differ in length (54, at least
 * 59), so neither reads as the other, and the header's first byte is
 * the version, so no version 3 message is a version 4 one. Versions 1
 * and 2: MAC_k(label || secret || header || len(sid) || sid). */
static void compute_tag(const csrf_ctx *ctx, const csrfi_key_slot *slot, int version,
                        const uint8_t secret[CSRF_SECRET_LEN], const uint8_t hdr[TAG_OFF], const char *sid,
                        size_t sid_len, uint8_t out[CSRF_MAC_LEN])
{
	enum { LABEL = sizeof label_token_v2 - 1, FIXED = LABEL + CSRF_SECRET_LEN + TAG_OFF };
	uint8_t msg[FIXED + 4 + SID_INLINE];

	_Static_assert(sizeof label_token_v2 == sizeof label_token_v1, "labels of one length");
	if (version >= TOKEN_V3) {
		slot = csrfi_key_slot_subkeys(ctx, slot);
		memcpy(msg, hdr, TAG_OFF);
		memcpy(msg + TAG_OFF, secret, CSRF_SECRET_LEN);
		if (sid_len == 0)
			csrfi_mac(&slot->tag_mac, msg, TAG_OFF + CSRF_SECRET_LEN, NULL, 0, NULL, 0, NULL, 0, out);
		else
			mac_with_sid(&slot->tag_mac, msg, TAG_OFF + CSRF_SECRET_LEN, sid, sid_len, out);
	} else {
		memcpy(msg, version == TOKEN_V1 ? label_token_v1 : label_token_v2, LABEL);
		memcpy(msg + LABEL, secret, CSRF_SECRET_LEN);
		memcpy(msg + LABEL + CSRF_SECRET_LEN, hdr, TAG_OFF);
		mac_with_sid(&slot->mac, msg, FIXED, sid, sid_len, out);
	}
	csrfi_wipe(msg, sizeof msg); /* whole: a few stores, no memset call */
}

/* The version issued: 2 to 4, as csrf_ctx_set_issue_version set it. */
static int issue_version(const csrf_ctx *ctx)
{
	return ctx->issue_version ? ctx->issue_version : ISSUE_DEFAULT;
}

/* The header's fields after the key id, as the version lays them out:
 * version 4 the issue time's low 32 bits and the bind's first 4 bytes
 * (its nonce is drawn before), versions 2 and 3 the whole time and an
 * 8-byte bind. The tag decides; the bind explains a failure. */
static void put_time_bind(int version, const csrfi_key_slot *slot, const char *sid, size_t sid_len, int64_t now,
                          uint8_t *raw)
{
	uint8_t bind[BIND_LEN];

	compute_bind(&slot->mac, sid, sid_len, bind);
	if (version == TOKEN_V4) {
		put_be32(raw + IAT_OFF, (uint32_t)(uint64_t)now);
		memcpy(raw + V4_BIND_OFF, bind, V4_BIND_LEN);
	} else {
		put_be64(raw + IAT_OFF, (uint64_t)now);
		memcpy(raw + BIND_OFF, bind, BIND_LEN);
	}
	csrfi_wipe(bind, sizeof bind);
}

csrf_reason csrfi_token_issue(const csrf_ctx *ctx, const uint8_t secret[CSRF_SECRET_LEN], const char *sid,
                              size_t sid_len, int64_t now, char *out, size_t cap)
{
	uint8_t buf[2 * CSRF_TOKEN_RAW_LEN]; /* pad, then raw (version 4: raw alone, at the end) */
	uint8_t *raw = buf + CSRF_TOKEN_RAW_LEN;
	uint8_t mac[CSRF_MAC_LEN];
	csrf_reason r;

	if (!ctx || !secret || !out || (!sid && sid_len) || sid_len > UINT32_MAX)
		return CSRF_ERR_ARG;
	const int version = issue_version(ctx);
	const size_t len = version == TOKEN_V4 ? CSRF_TOKEN_UNMASKED_LEN : CSRF_TOKEN_LEN;
	if (cap < len + 1)
		return CSRF_ERR_BUFFER;
	now = csrfi_now(now);

	/* Version 4's nonce, or the pad of a masked version: fresh random
	 * bytes, public once sent, cut from the per-thread block */
	if (version == TOKEN_V4)
		r = csrfi_random_pad(raw + V4_NONCE_OFF, V4_NONCE_LEN);
	else
		r = csrfi_random_pad(buf, CSRF_TOKEN_RAW_LEN);
	if (r != CSRF_OK) {
		csrfi_wipe(buf, sizeof buf);
		return r;
	}

	if (ring_rdlock(ctx) != 0) {
		csrfi_wipe(buf, sizeof buf);
		return CSRF_ERR_INTERNAL;
	}
	if (ctx->ring.n == 0) {
		ring_unlock(ctx);
		csrfi_wipe(buf, sizeof buf);
		return CSRF_ERR_CONFIG;
	}
	const csrfi_key_slot *slot = &ctx->ring.keys[ctx->ring.signing];
	raw[0] = (uint8_t)version;
	raw[1] = 0;
	put_be32(raw + 2, slot->id);
	put_time_bind(version, slot, sid, sid_len, now, raw);
	compute_tag(ctx, slot, version, secret, raw, sid, sid_len, mac);
	ring_unlock(ctx);
	memcpy(raw + TAG_OFF, mac, TAG_LEN);
	csrfi_wipe(mac, sizeof mac);

	if (version == TOKEN_V4) {
		csrfi_b64url_encode(raw, CSRF_TOKEN_RAW_LEN, out);
	} else {
		for (size_t i = 0; i < CSRF_TOKEN_RAW_LEN; i++)
			raw[i] ^= buf[i];
		csrfi_b64url_encode(buf, sizeof buf, out);
	}
	out[len] = '\0';
	csrfi_wipe(buf, sizeof buf);
	return CSRF_OK;
}

CSRF_API csrf_reason csrf_token_issue(const csrf_ctx *ctx, const uint8_t secret[CSRF_SECRET_LEN], const char *sid,
                                      size_t sid_len, int64_t now, char *out, size_t cap)
{
	csrf_reason r = csrfi_token_issue(ctx, secret, sid, sid_len, now, out, cap);
	csrfi_wipe_regs();
	return r;
}

/* raw = pad ^ masked, the two halves of a decoded masked token (n bytes
 * each, n at least 8), eight bytes at a time: the last eight overlap the
 * ones before when n is not a multiple, and write the same bytes again. */
static void unmask(uint8_t *raw, const uint8_t *buf, size_t n)
{
	for (size_t i = 0;; i += 8) {
		if (i + 8 > n)
			i = n - 8;
		uint64_t a, b;
		memcpy(&a, buf + i, 8);
		memcpy(&b, buf + n + i, 8);
		a ^= b;
		memcpy(raw + i, &a, 8);
		if (i + 8 == n)
			break;
	}
}

/* CSRF_OK, or CSRF_TOKEN_EXPIRED for an issue time more than
 * SKEW_SECONDS ahead of now or further back than the maximum age. Version
 * 4 carries its low 32 bits (unix seconds mod 2^32), read as the instant
 * within 2^31 seconds (68 years) of now that has them: serial-number
 * arithmetic (RFC 1982), so the wrap in 2106 passes unnoticed, and a
 * token older than 68 years reads as one from the future (refused).
 * Versions 1 to 3 carry it whole. Only distances are computed, unsigned,
 * never the instant itself, which a now near either end of int64_t would
 * carry past it. */
static csrf_reason token_time(const csrf_ctx *ctx, int version, const uint8_t *raw, int64_t now)
{
	uint64_t ahead = 0, behind = 0; /* of now; one of them 0 */

	if (version == TOKEN_V4) {
		uint32_t d = get_be32(raw + IAT_OFF) - (uint32_t)(uint64_t)now; /* ahead, mod 2^32 */
		if (d <= UINT32_C(0x80000000))
			ahead = d;
		else
			behind = (uint64_t)(uint32_t)-d;
	} else {
		int64_t iat = (int64_t)get_be64(raw + IAT_OFF);
		if (iat > now)
			ahead = (uint64_t)iat - (uint64_t)now;
		else
			behind = (uint64_t)now - (uint64_t)iat;
	}
	if (ahead > SKEW_SECONDS || (ctx->max_age && behind > ctx->max_age))
		return CSRF_TOKEN_EXPIRED;
	return CSRF_OK;
}

/* Which versions a token of this length and form may be: 1 at version
 * 1's lengths, 2 or 3 at the others, and 4 unmasked only (it is issued
 * so, and has no other form). 0 for another. */
static int version_known(int version, size_t token_len)
{
	switch (token_len) {
	case CSRF_TOKEN_UNMASKED_LEN:
		return version == TOKEN_V2 || version == TOKEN_V3 || version == TOKEN_V4;
	case CSRF_TOKEN_LEN:
		return version == TOKEN_V2 || version == TOKEN_V3;
	default:
		return version == TOKEN_V1;
	}
}

csrf_reason csrfi_token_verify(const csrf_ctx *ctx, const uint8_t secret[CSRF_SECRET_LEN], const char *sid,
                               size_t sid_len, const char *token, size_t token_len, int64_t now)
{
	uint8_t buf[MASKED_MAX];
	uint8_t raw[V1_RAW_LEN];
	uint8_t tag[CSRF_MAC_LEN];
	uint8_t bind[BIND_LEN];
	size_t raw_len, tag_len, got;
	int version, tag_ok, bind_ok;

	if (!ctx || !secret || (!sid && sid_len) || sid_len > UINT32_MAX)
		return CSRF_ERR_ARG;
	if (!token)
		return CSRF_TOKEN_MALFORMED;
	/* the length says the layout and the form (masked or not) */
	switch (token_len) {
	case CSRF_TOKEN_LEN:
	case CSRF_TOKEN_UNMASKED_LEN:
		raw_len = CSRF_TOKEN_RAW_LEN;
		tag_len = TAG_LEN;
		break;
	case CSRF_TOKEN_MAX_LEN:
	case CSRF_B64_ENC_LEN(V1_RAW_LEN):
		raw_len = V1_RAW_LEN;
		tag_len = CSRF_MAC_LEN;
		break;
	default:
		return CSRF_TOKEN_MALFORMED;
	}
	/* A masked token (twice the raw bytes) is unmasked into raw; an
	 * unmasked one is decoded there directly, not copied: a copy's wide
	 * loads would wait on the decoder's narrower stores (a
	 * store-forwarding stall, some 3 ns a verify). */
	if (token_len == CSRF_B64_ENC_LEN(2 * raw_len)) {
		if (csrfi_b64url_decode(token, token_len, buf, sizeof buf, &got) != CSRF_OK || got != 2 * raw_len)
			return CSRF_TOKEN_MALFORMED;
		unmask(raw, buf, raw_len);
	} else if (csrfi_b64url_decode(token, token_len, raw, raw_len, &got) != CSRF_OK || got != raw_len) {
		return CSRF_TOKEN_MALFORMED;
	}

	/* and the version byte which of the versions of that length and
	 * form; any other is malformed */
	version = raw[0];
	if (raw[1] != 0 || !version_known(version, token_len))
		return CSRF_TOKEN_MALFORMED;

	if (ring_rdlock(ctx) != 0)
		return CSRF_ERR_INTERNAL;
	const csrfi_key_slot *slot = csrfi_ring_find(&ctx->ring, get_be32(raw + 2));
	if (!slot) {
		ring_unlock(ctx);
		return CSRF_UNKNOWN_KEY;
	}
	compute_tag(ctx, slot, version, secret, raw, sid, sid_len, tag);
	tag_ok = csrfi_ct_eq_words(tag, raw + TAG_OFF, tag_len);
	bind_ok = 1;
	if (!tag_ok) {
		/* Only a failure pays for the second MAC: a bind that is not
		 * this session's marks a token of another session (version
		 * 4's 4 bytes: one forged token in 2^32 reads as another
		 * session's, an explanation only). */
		compute_bind(&slot->mac, sid, sid_len, bind);
		if (version == TOKEN_V4)
			bind_ok = csrfi_ct_eq(bind, raw + V4_BIND_OFF, V4_BIND_LEN);
		else
			bind_ok = csrfi_ct_eq_words(bind, raw + BIND_OFF, BIND_LEN);
		csrfi_wipe(bind, sizeof bind);
	}
	ring_unlock(ctx);
	/* Wiped: the tag this secret and session call for, which nobody
	 * sent. The token's own bytes (buf, raw) are not: they are what
	 * the client sent, held unwiped in the request wherever it came
	 * from, and wiping its copies here cost verify 3 to 4 per cent. */
	csrfi_wipe(tag, sizeof tag);

	if (!tag_ok)
		return bind_ok ? CSRF_TOKEN_INVALID : CSRF_TOKEN_SESSION;

	return token_time(ctx, version, raw, csrfi_now(now));
}

CSRF_API csrf_reason csrf_token_verify(const csrf_ctx *ctx, const uint8_t secret[CSRF_SECRET_LEN], const char *sid,
                                       size_t sid_len, const char *token, size_t token_len, int64_t now)
{
	csrf_reason r = csrfi_token_verify(ctx, secret, sid, sid_len, token, token_len, now);
	csrfi_wipe_regs();
	return r;
}

CSRF_API csrf_reason csrf_ctx_set_issue_version(csrf_ctx *ctx, unsigned version)
{
	/* a cookie's version is the token's up to 3: version 4 changes the
	 * token only, and its pages set version 3 cookies */
	_Static_assert(TOKEN_V2 == COOKIE_V2 && TOKEN_V3 == COOKIE_VERSION, "one version number for both");
	if (!ctx || version < TOKEN_V2 || version > TOKEN_V4)
		return CSRF_ERR_ARG;
	ctx->issue_version = (uint8_t)version;
	return CSRF_OK;
}

int csrfi_field_name_derived(const char *name, size_t len)
{
	const size_t plen = sizeof FIELD_PREFIX - 1;
	if (len != plen + 2 * FIELD_HASH_BYTES || memcmp(name, FIELD_PREFIX, plen) != 0)
		return 0;
	for (size_t i = plen; i < len; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
			return 0;
	return 1;
}

csrf_reason csrfi_field_name(const csrf_ctx *ctx, const uint8_t secret[CSRF_SECRET_LEN], char *out, size_t cap)
{
	if (!ctx || !out)
		return CSRF_ERR_ARG;
	if (ctx->field_name[0]) {
		size_t n = strnlen(ctx->field_name, sizeof ctx->field_name);
		if (cap < n + 1)
			return CSRF_ERR_BUFFER;
		memcpy(out, ctx->field_name, n + 1);
		return CSRF_OK;
	}
	if (!secret)
		return CSRF_ERR_ARG;

	const size_t plen = sizeof FIELD_PREFIX - 1;
	if (cap < plen + 2 * FIELD_HASH_BYTES + 1)
		return CSRF_ERR_BUFFER;
	uint8_t digest[CSRF_SHA256_LEN];
	csrfi_sha256_ctx h;
	csrfi_sha256_init(&h);
#if CSRFI_SHA256_BLOCK
	/* 48 bytes: one block, padded here (a page's one plain hash) */
	enum { FIELD_MSG = sizeof label_field - 1 + CSRF_SECRET_LEN };
	_Static_assert(FIELD_MSG <= CSRFI_SHA256_ONE_BLOCK, "the field name's hash in one block");
	uint8_t block[64];
	memcpy(block, label_field, sizeof label_field - 1);
	memcpy(block + sizeof label_field - 1, secret, CSRF_SECRET_LEN);
	csrfi_sha256_last_block(&h, block, FIELD_MSG, FIELD_MSG, digest);
	csrfi_wipe(block, sizeof block);
#else
	csrfi_sha256_update(&h, label_field, sizeof label_field - 1);
	csrfi_sha256_update(&h, secret, CSRF_SECRET_LEN);
	csrfi_sha256_final(&h, digest);
#endif
	memcpy(out, FIELD_PREFIX, plen);
	csrfx_hex_encode(digest, FIELD_HASH_BYTES, out + plen);
	out[plen + 2 * FIELD_HASH_BYTES] = '\0';
	csrfi_wipe(&h, sizeof h);
	csrfi_wipe(digest, sizeof digest);
	return CSRF_OK;
}

CSRF_API csrf_reason csrf_field_name(const csrf_ctx *ctx, const uint8_t secret[CSRF_SECRET_LEN], char *out, size_t cap)
{
	csrf_reason r = csrfi_field_name(ctx, secret, out, cap);
	csrfi_wipe_regs();
	return r;
}

/* The signature of a cookie's first COOKIE_SIGNED bytes, as its version
 * byte (2 or 3) says: version 3 MAC_ck(bytes 0..44), one block; version
 * 2 MAC_k("libcsrf cookie v2" || bytes 0..44). */
static void cookie_sign(const csrf_ctx *ctx, const csrfi_key_slot *slot, const uint8_t buf[COOKIE_SIGNED],
                        uint8_t out[CSRF_MAC_LEN])
{
	if (buf[0] == COOKIE_VERSION)
		csrfi_mac(&csrfi_key_slot_subkeys(ctx, slot)->cookie_mac, buf, COOKIE_SIGNED, NULL, 0, NULL, 0, NULL, 0,
		          out);
	else
		csrfi_mac(&slot->mac, label_cookie_v2, sizeof label_cookie_v2 - 1, buf, COOKIE_SIGNED, NULL, 0, NULL, 0,
		          out);
}

csrf_reason csrfi_secret_cookie_encode_at(const csrf_ctx *ctx, const uint8_t secret[CSRF_SECRET_LEN], int64_t now,
                                          char *out, size_t cap)
{
	uint8_t buf[COOKIE_RAW];

	if (!ctx || !secret || !out)
		return CSRF_ERR_ARG;
	if (cap < CSRF_SECRET_COOKIE_LEN + 1)
		return CSRF_ERR_BUFFER;
	now = csrfi_now(now);

	if (ring_rdlock(ctx) != 0)
		return CSRF_ERR_INTERNAL;
	if (ctx->ring.n == 0) {
		ring_unlock(ctx);
		return CSRF_ERR_CONFIG;
	}
	const csrfi_key_slot *slot = &ctx->ring.keys[ctx->ring.signing];
	buf[0] = issue_version(ctx) == TOKEN_V2 ? COOKIE_V2 : COOKIE_VERSION;
	put_be32(buf + 1, slot->id);
	put_be64(buf + COOKIE_IAT_OFF, (uint64_t)now);
	memcpy(buf + COOKIE_SECRET_OFF, secret, CSRF_SECRET_LEN);
	cookie_sign(ctx, slot, buf, buf + COOKIE_SIGNED);
	ring_unlock(ctx);

	csrfi_b64url_encode(buf, sizeof buf, out);
	out[CSRF_SECRET_COOKIE_LEN] = '\0';
	csrfi_wipe(buf, sizeof buf);
	return CSRF_OK;
}

CSRF_API csrf_reason csrf_secret_cookie_encode(const csrf_ctx *ctx, const uint8_t secret[CSRF_SECRET_LEN], char *out,
                                               size_t cap)
{
	csrf_reason r = csrfi_secret_cookie_encode_at(ctx, secret, 0, out, cap);
	csrfi_wipe_regs();
	return r;
}

/* A secret cookie's tests before its signature: its length, encoding and
 * version. CSRF_OK with the cookie decoded into buf; else
 * CSRF_SECRET_INVALID with buf wiped (a partial decoding too). */
static csrf_reason cookie_open(const char *value, size_t len, uint8_t buf[COOKIE_RAW])
{
	size_t got;
	if (!value || len != CSRF_SECRET_COOKIE_LEN)
		return CSRF_SECRET_INVALID;
	if (csrfi_b64url_decode(value, len, buf, COOKIE_RAW, &got) != CSRF_OK ||
	    (buf[0] != COOKIE_VERSION && buf[0] != COOKIE_V2)) {
		csrfi_wipe(buf, COOKIE_RAW);
		return CSRF_SECRET_INVALID;
	}
	return CSRF_OK;
}

/* 1 when the issued-at of a decoded cookie lies further back than the
 * maximum age. Only age counts: a cookie is ours by its signature, and a
 * fleet's clocks may disagree about when it was issued. */
static int cookie_too_old(const csrf_ctx *ctx, const uint8_t buf[COOKIE_RAW], int64_t now)
{
	int64_t iat = (int64_t)get_be64(buf + COOKIE_IAT_OFF);
	now = csrfi_now(now);
	return ctx->max_age && now > iat && (uint64_t)now - (uint64_t)iat > ctx->max_age;
}

csrf_reason csrfi_secret_cookie_decode_at(const csrf_ctx *ctx, const char *value, size_t len, int64_t now,
                                          uint8_t secret[CSRF_SECRET_LEN])
{
	uint8_t buf[COOKIE_RAW];
	uint8_t mac[CSRF_MAC_LEN];
	int ok;

	if (!ctx || !secret)
		return CSRF_ERR_ARG;
	csrfi_wipe(secret, CSRF_SECRET_LEN);
	csrf_reason r = cookie_open(value, len, buf);
	if (r != CSRF_OK)
		return r;

	if (ring_rdlock(ctx) != 0) {
		csrfi_wipe(buf, sizeof buf);
		return CSRF_ERR_INTERNAL;
	}
	const csrfi_key_slot *slot = csrfi_ring_find(&ctx->ring, get_be32(buf + 1));
	if (!slot) {
		ring_unlock(ctx);
		csrfi_wipe(buf, sizeof buf);
		return CSRF_UNKNOWN_KEY;
	}
	cookie_sign(ctx, slot, buf, mac);
	ring_unlock(ctx);

	ok = csrfi_ct_eq_words(mac, buf + COOKIE_SIGNED, CSRF_MAC_LEN);
	int too_old = cookie_too_old(ctx, buf, now);
	if (ok)
		memcpy(secret, buf + COOKIE_SECRET_OFF, CSRF_SECRET_LEN);
	csrfi_wipe(buf, sizeof buf);
	csrfi_wipe(mac, sizeof mac);
	if (!ok)
		return CSRF_SECRET_INVALID;
	if (too_old) {
		csrfi_wipe(secret, CSRF_SECRET_LEN);
		return CSRF_SECRET_EXPIRED;
	}
	return CSRF_OK;
}

int csrfi_secret_cookie_plausible(const csrf_ctx *ctx, const char *value, size_t len, int64_t now)
{
	uint8_t buf[COOKIE_RAW];
	int ok = 0;

	if (!ctx || cookie_open(value, len, buf) != CSRF_OK)
		return 0;
	if (ring_rdlock(ctx) == 0) {
		ok = csrfi_ring_find(&ctx->ring, get_be32(buf + 1)) != NULL;
		ring_unlock(ctx);
	}
	/* the issued-at as the cookie claims it (unsigned yet) */
	ok = ok && !cookie_too_old(ctx, buf, now);
	csrfi_wipe(buf, sizeof buf);
	return ok;
}

CSRF_API csrf_reason csrf_secret_cookie_decode(const csrf_ctx *ctx, const char *value, size_t len,
                                               uint8_t secret[CSRF_SECRET_LEN])
{
	csrf_reason r = csrfi_secret_cookie_decode_at(ctx, value, len, 0, secret);
	csrfi_wipe_regs();
	return r;
}
