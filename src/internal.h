/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * internal.h - what the files of src/ share and callers never see: the
 * context's layout, the keyed MAC, base64url, constant-time helpers and
 * the allocator wrappers. Nothing here is part of the public API.
 */
#ifndef CSRF_INTERNAL_H
#define CSRF_INTERNAL_H

#include "csrf.h"
#include "csrfx.h"

/* Exported definitions; csrf.h's declarations already carry default
 * visibility when CSRF_BUILDING, so this is documentation at the
 * definition. */
#define CSRF_API __attribute__((visibility("default")))

#include <pthread.h>
#include <stdint.h>
#include <string.h>

/* ---- SHA-256: the one primitive, from the backend chosen at build time ----
 *
 * CSRF_CRYPTO_BUILTIN=1 (CMake CSRF_CRYPTO=builtin): sha256.c, no library
 * but libc (a router's csrf-cgi). CSRF_CRYPTO_MBEDTLS=1 (CSRF_CRYPTO=mbedtls):
 * mbedTLS's libmbedcrypto, for firmware that ships it anyway. Otherwise (CSRF_CRYPTO=openssl, the
 * default and the Debian packages'): libcrypto's SHA-256, which uses the
 * CPU's SHA extensions. Every file of src/ hashes through csrfi_sha256_*,
 * and only this header and util.c know which backend it is. */

#define CSRF_SHA256_LEN 32

/* The built-in SHA-256 (sha256.c), in every build under these names. */
typedef struct {
	uint32_t h[8];
	uint64_t len; /* bytes absorbed */
	uint8_t buf[64];
} csrfi_sha256_builtin_ctx;
void csrfi_sha256_builtin_init(csrfi_sha256_builtin_ctx *c);
void csrfi_sha256_builtin_update(csrfi_sha256_builtin_ctx *c, const void *data, size_t n);
/* Writes the digest and wipes c. */
void csrfi_sha256_builtin_final(csrfi_sha256_builtin_ctx *c, uint8_t out[CSRF_SHA256_LEN]);
/* One compression of a 64-byte block into c's chaining value; c's
 * length and buffer are not read or changed. */
void csrfi_sha256_builtin_block(csrfi_sha256_builtin_ctx *c, const uint8_t block[64]);

/* Where the backend has it (CSRFI_SHA256_BLOCK 1), a compression of one
 * block into a state's chaining value (csrfi_sha256_block) and that
 * value's words (csrfi_sha256_word): a message that fits one block with
 * its padding is then hashed without the update and final calls' copies,
 * wipes and bookkeeping (mac.c, token.c). */

#if defined(CSRF_CRYPTO_BUILTIN) && CSRF_CRYPTO_BUILTIN
typedef csrfi_sha256_builtin_ctx csrfi_sha256_ctx;
static inline void csrfi_sha256_init(csrfi_sha256_ctx *c)
{
	csrfi_sha256_builtin_init(c);
}
static inline void csrfi_sha256_update(csrfi_sha256_ctx *c, const void *data, size_t n)
{
	csrfi_sha256_builtin_update(c, data, n);
}
static inline void csrfi_sha256_final(csrfi_sha256_ctx *c, uint8_t out[CSRF_SHA256_LEN])
{
	csrfi_sha256_builtin_final(c, out);
}
#define CSRFI_SHA256_BLOCK 1
static inline void csrfi_sha256_block(csrfi_sha256_ctx *c, const uint8_t block[64])
{
	csrfi_sha256_builtin_block(c, block);
}
static inline uint32_t csrfi_sha256_word(const csrfi_sha256_ctx *c, unsigned i)
{
	return c->h[i];
}
#elif defined(CSRF_CRYPTO_MBEDTLS) && CSRF_CRYPTO_MBEDTLS
/* mbedTLS (OpenWrt's own crypto library): its SHA-256 context is a plain
 * struct, copied as the precomputed HMAC states are. 2.x names the calls
 * *_ret, 3.x without. */
#include <mbedtls/sha256.h>
#include <mbedtls/version.h>
#if MBEDTLS_VERSION_NUMBER < 0x03000000
#define mbedtls_sha256_starts mbedtls_sha256_starts_ret
#define mbedtls_sha256_update mbedtls_sha256_update_ret
#define mbedtls_sha256_finish mbedtls_sha256_finish_ret
#endif
typedef mbedtls_sha256_context csrfi_sha256_ctx;
static inline void csrfi_sha256_init(csrfi_sha256_ctx *c)
{
	mbedtls_sha256_init(c);
	(void)mbedtls_sha256_starts(c, 0);
}
static inline void csrfi_sha256_update(csrfi_sha256_ctx *c, const void *data, size_t n)
{
	(void)mbedtls_sha256_update(c, data, n);
}
static inline void csrfi_sha256_final(csrfi_sha256_ctx *c, uint8_t out[CSRF_SHA256_LEN])
{
	(void)mbedtls_sha256_finish(c, out);
	mbedtls_sha256_free(c);
}
#define CSRFI_SHA256_BLOCK 0 /* its state's words are private in 3.x */
#else
/* The one-block SHA-256 interface is deprecated in OpenSSL 3 but is the
 * only allocation-free way to keep precomputed HMAC states. */
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/sha.h>
/* also where a file included libcrypto's headers before this one */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
typedef SHA256_CTX csrfi_sha256_ctx;
static inline void csrfi_sha256_init(csrfi_sha256_ctx *c)
{
	SHA256_Init(c);
}
static inline void csrfi_sha256_update(csrfi_sha256_ctx *c, const void *data, size_t n)
{
	SHA256_Update(c, data, n);
}
static inline void csrfi_sha256_final(csrfi_sha256_ctx *c, uint8_t out[CSRF_SHA256_LEN])
{
	SHA256_Final(out, c);
}
/* SHA256_Transform: the same block function (and CPU dispatch) as
 * SHA256_Update's */
#define CSRFI_SHA256_BLOCK 1
static inline void csrfi_sha256_block(csrfi_sha256_ctx *c, const uint8_t block[64])
{
	SHA256_Transform(c, block);
}
static inline uint32_t csrfi_sha256_word(const csrfi_sha256_ctx *c, unsigned i)
{
	return c->h[i];
}
#pragma GCC diagnostic pop
#endif

#if CSRFI_SHA256_BLOCK
/* A message's last n bytes (n at most CSRFI_SHA256_ONE_BLOCK) in block,
 * total its whole length in bytes (what h absorbed before, a multiple of
 * 64, plus n): padded in block, compressed into h, the digest into out
 * (which may be block). The caller wipes h and block (mac.c). */
#define CSRFI_SHA256_ONE_BLOCK 55
void csrfi_sha256_last_block(csrfi_sha256_ctx *h, uint8_t block[64], size_t n, uint64_t total,
                             uint8_t out[CSRF_SHA256_LEN]);
#endif

/* ---- keyed MAC (mac.c): HMAC-SHA256 with precomputed pads ---- */

/* The inner and outer hash states after absorbing key^ipad and key^opad:
 * each MAC then costs only the message's blocks plus one. */
typedef struct {
	csrfi_sha256_ctx inner;
	csrfi_sha256_ctx outer;
	/* The first 8 bytes of the MAC of the one message this key MACs most
	 * (token.c: the binding to no session), kept once computed. Readers
	 * under the ring's read lock may compute it at once, and they write
	 * the same value; so words and flag are 32-bit relaxed atomics (a
	 * 32-bit router has no 64-bit ones without libatomic), the flag set
	 * after the words with release and read with acquire
	 * (csrfi_mac_memo_*). csrfi_mac_init clears them. */
	uint32_t memo[2];
	uint32_t memo_set;
} csrfi_mac_key;

#define CSRF_MAC_LEN 32

void csrfi_mac_init(csrfi_mac_key *k, const uint8_t *key, size_t key_len);
/* MAC over the concatenation of up to 4 parts (NULL/0 parts skipped). */
void csrfi_mac(const csrfi_mac_key *k, const void *p1, size_t n1, const void *p2, size_t n2, const void *p3, size_t n3,
               const void *p4, size_t n4, uint8_t out[CSRF_MAC_LEN]);
/* out = the states of the subkey MAC(parent, label) (a NUL-terminated
 * label that no other message parent MACs equals): a key of its own for
 * one purpose, derived once when the parent key is loaded (token.c's
 * version 3 tags and cookies). The subkey itself is wiped; only its
 * states remain. */
void csrfi_mac_derive(const csrfi_mac_key *parent, const char *label, csrfi_mac_key *out);
void csrfi_mac_wipe(csrfi_mac_key *k);
/* The key's memo into out[8]: 1, or 0 when it was not computed yet. */
static inline int csrfi_mac_memo_get(const csrfi_mac_key *k, uint8_t out[8])
{
	if (!__atomic_load_n(&k->memo_set, __ATOMIC_ACQUIRE))
		return 0;
	uint32_t w[2] = {__atomic_load_n(&k->memo[0], __ATOMIC_RELAXED),
	                 __atomic_load_n(&k->memo[1], __ATOMIC_RELAXED)};
	memcpy(out, w, 8);
	return 1;
}
static inline void csrfi_mac_memo_set(const csrfi_mac_key *k, const uint8_t v[8])
{
	/* the ring is const on the hot path; its memos are not */
	csrfi_mac_key *m = (csrfi_mac_key *)k;
	uint32_t w[2];
	memcpy(w, v, 8);
	__atomic_store_n(&m->memo[0], w[0], __ATOMIC_RELAXED);
	__atomic_store_n(&m->memo[1], w[1], __ATOMIC_RELAXED);
	__atomic_store_n(&m->memo_set, 1u, __ATOMIC_RELEASE);
}

/* ---- codecs (codec.c): base64url without padding, hex ---- */

#define CSRF_B64_ENC_LEN(n) (((n) / 3) * 4 + (((n) % 3) ? ((n) % 3) + 1 : 0))
/* Writes CSRF_B64_ENC_LEN(n) characters, no NUL. */
void csrfi_b64url_encode(const uint8_t *in, size_t n, char *out);
/* Decodes exactly len characters into out (cap bytes); CSRF_MALFORMED on a
 * character outside the alphabet or an impossible length; constant time
 * in the content (no table lookups indexed by secret data). */
csrf_reason csrfi_b64url_decode(const char *in, size_t len, uint8_t *out, size_t cap, size_t *out_len);
/* The same through a given path at most (the tests run each): scalar,
 * SSE2, SSSE3 or AVX2 (inputs of 32 characters or more) where the CPU
 * has it; csrfi_b64url_decode takes the best the CPU has. The paths give
 * the same answers. */
enum { CSRFI_B64_SCALAR = 0, CSRFI_B64_SSE2 = 1, CSRFI_B64_SSSE3 = 2, CSRFI_B64_AVX2 = 3 };
csrf_reason csrfi_b64url_decode_path(const char *in, size_t len, uint8_t *out, size_t cap, size_t *out_len, int path);

/* ---- randomness (random.c) ---- */

/* n fresh random bytes for a masking pad: public by construction (pads
 * travel in the clear), never for secrets or keys. */
csrf_reason csrfi_random_pad(uint8_t *out, size_t n);

/* ---- text (text.c): the one home of the small text helpers ---- */

static inline int csrfi_is_ows(char c)
{
	return c == ' ' || c == '\t';
}
static inline unsigned char csrfi_lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + ('a' - 'A')) : c;
}
static inline int csrfi_is_alpha(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static inline int csrfi_is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}
/* RFC 9110 tchar: what methods, header names and cookie names are made of. */
int csrfi_is_tchar(unsigned char c);
/* 1 when (s, n) is a non-empty run of tchar. */
int csrfi_is_token(const char *s, size_t n);
/* 1 when the NUL-terminated word occurs in (p, n), ASCII case ignored. */
int csrfi_contains_ci(const char *p, size_t n, const char *word);
/* Moves *p forward and *end back over spaces and tabs. */
void csrfi_trim_ptrs(const char **p, const char **end);

/* ---- constant time and wiping (util.c) ---- */

/* 1 when equal; time depends only on n. */
int csrfi_ct_eq(const void *a, const void *b, size_t n);
/* The same inlined, for MACs, tags and binds (multiples of 8): eight
 * bytes at a time, every word read and or-ed whatever the data (the
 * empty asm keeps the compiler from stopping at the first difference),
 * then any bytes after the last whole word one by one, so that no length
 * leaves bytes uncompared (a constant n of whole words has no tail). */
static inline int csrfi_ct_eq_words(const void *a, const void *b, size_t n)
{
	const uint8_t *x = a, *y = b;
	uint64_t d = 0;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t u, v;
		memcpy(&u, x + i, 8);
		memcpy(&v, y + i, 8);
		d |= u ^ v;
		__asm__("" : "+r"(d));
	}
	for (; i < n; i++) {
		d |= (uint64_t)(x[i] ^ y[i]);
		__asm__("" : "+r"(d));
	}
	return d == 0;
}
#if defined(__GNUC__) || defined(__clang__)
/* memset that the compiler may not drop: the empty asm takes the
 * buffer's address and clobbers memory, so the zeros must be written
 * (explicit_bzero's own technique). Inline, a wipe of the hot path's
 * small fixed-size buffers is a few stores instead of two calls. */
static inline void csrfi_wipe(void *p, size_t n)
{
	if (p && n) {
		memset(p, 0, n);
		__asm__ __volatile__("" : : "r"(p) : "memory");
	}
}
#else
void csrfi_wipe(void *p, size_t n);
#endif
/* (util.c) The CPU's vector registers zeroed: what a secret's copy or
 * hash left in them, which csrfi_wipe cannot reach. */
void csrfi_wipe_regs(void);
/* (text.c) ASCII case-insensitive equality of n bytes of a and b, eight
 * at a time: the one case-insensitive compare. Not for secrets (it stops
 * at the first difference). */
int csrfi_mem_ieq(const char *a, const char *b, size_t n);
/* ASCII case-insensitive equality of a slice with a NUL-terminated
 * literal; csrfi_slice_eq exact. Absent is never equal. Inline, so that a
 * literal's length is a constant and a slice of another length costs one
 * compare (header names are held against a dozen of them); then the first
 * byte, folded (bytes equal in any case are equal with 0x20 set, so no
 * slice the compare would match is turned away: names of one length,
 * Content-Type and Edge-Control, mostly part here); then a slice in the
 * literal's own case (most header names) a few word compares. */
static inline int csrfi_slice_ieq(csrf_slice s, const char *lit)
{
	size_t n = strlen(lit);
	if (!s.ptr || s.len != n)
		return 0;
	if (n && ((unsigned char)s.ptr[0] | 0x20) != ((unsigned char)lit[0] | 0x20))
		return 0;
	return memcmp(s.ptr, lit, n) == 0 || csrfi_mem_ieq(s.ptr, lit, n);
}
static inline int csrfi_slice_eq(csrf_slice s, const char *lit)
{
	size_t n = strlen(lit);
	return s.ptr && s.len == n && memcmp(s.ptr, lit, n) == 0;
}
/* ASCII case-insensitive equality of (p, n) with a NUL-terminated literal
 * (p NULL reads as empty). */
static inline int csrfi_ieq(const char *p, size_t n, const char *lit)
{
	return csrfi_slice_ieq((csrf_slice){p ? p : "", n}, lit);
}
/* (text.c) The slice without leading and trailing spaces and tabs;
 * absent stays absent. */
csrf_slice csrfi_trim(csrf_slice s);

/* ---- the context (ctx.c) ---- */

typedef struct {
	uint32_t id;
	int64_t created;
	csrfi_mac_key mac; /* the key: binds, version 1 and 2 tags, version 2 cookies */
	/* its subkeys (token.c, csrfi_key_slot_subkeys): version 3 tags and
	 * cookies, whose messages then fit one SHA-256 block; derived the
	 * first time the key is used, so that a process that uses one key of
	 * its ring (a CGI request) derives no others. subkeys: 0 until they
	 * are there, set with release order after they are written, read
	 * with acquire order; written only under the context's derive_lock,
	 * never again until the slot is wiped or replaced under the ring's
	 * write lock. */
	csrfi_mac_key tag_mac;
	csrfi_mac_key cookie_mac;
	uint32_t subkeys;
} csrfi_key_slot;

typedef struct {
	csrfi_key_slot keys[CSRF_KEYS_MAX];
	size_t n;
	size_t signing; /* index into keys; valid when n > 0 */
} csrfi_keyring;

typedef struct {
	char *method; /* NULL: any unsafe method */
	char *path;
	size_t path_len;
} csrfi_exemption;

struct csrf_ctx {
	csrf_allocator alloc;
	csrf_mode mode;
	int report_only;
	int allow_fetch_none;
	int allow_same_site;
	int unsafe_get;
	int retry_token;          /* retry.c */
	int form_action_csp;      /* response.c */
	int referrer_same_origin; /* response.c: the injector raises no-referrer metas */
	uint32_t max_age;
	uint8_t issue_version; /* token.c: the tokens' version issued, 2 to 4; 0 the default (4) */
	size_t body_max;

	int has_self;
	csrf_origin self;

	csrf_origin *trusted;
	size_t n_trusted;

	csrfi_exemption *exempt;
	size_t n_exempt;

	char field_name[CSRF_FIELD_NAME_MAX + 1]; /* "" : derived */
	char secret_cookie[CSRF_FIELD_NAME_MAX + 1];
	int secret_cookie_set; /* named by the caller: used as given, no "__Host-" */
	char session_cookie[CSRF_SESSION_COOKIES_MAX][CSRF_FIELD_NAME_MAX + 1];
	size_t n_session_cookies; /* 0: no session binding */

	uint32_t reauth_max_failures;
	uint32_t reauth_lockout;
	uint32_t reauth_window;
	/* login throttling (reauth.c); 0: the defaults there */
	uint32_t login_max_failures;
	uint32_t login_lock;
	uint32_t login_lock_max;

	pthread_rwlock_t ring_lock;
	csrfi_keyring ring;
	pthread_mutex_t derive_lock; /* a slot's subkeys being derived (token.c) */

	char err[256];
};

/* malloc and free, as a csrf_allocator: what a NULL allocator means. */
extern const csrf_allocator csrfi_default_allocator;

void *csrfi_alloc(const csrf_ctx *ctx, size_t n);
void csrfi_free(const csrf_ctx *ctx, void *p);
/* Sets ctx->err (printf-style, truncated) and returns code. */
csrf_reason csrfi_config_error(csrf_ctx *ctx, csrf_reason code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Key ring access under the read lock (keyring.c). */
const csrfi_key_slot *csrfi_ring_find(const csrfi_keyring *ring, uint32_t id);
/* A slot for a key: its states and its subkeys' (token.c knows their
 * labels); and the wipe of all of them, wherever a key leaves. */
void csrfi_key_slot_init(csrfi_key_slot *slot, uint32_t id, int64_t created, const uint8_t key[CSRF_KEY_LEN]);
void csrfi_key_slot_wipe(csrfi_key_slot *slot);
/* slot, with its subkeys derived (at the key's first use; any thread,
 * under the ring's read lock). */
const csrfi_key_slot *csrfi_key_slot_subkeys(const csrf_ctx *ctx, const csrfi_key_slot *slot);

/* Current unix time when now == 0. */
int64_t csrfi_now(int64_t now);

/* ---- forms (form.c) ---- */

typedef enum { CSRF_FORM_NONE = 0, CSRF_FORM_URLENCODED = 1, CSRF_FORM_MULTIPART = 2 } csrfi_form_kind;
/* The kind of form body a Content-Type value announces (NULL: none). */
csrfi_form_kind csrfi_form_kind_of(const char *content_type, size_t ct_len);
/* 1 when name has the shape of a derived hidden-field name ("csrf_" and
 * 12 lower-case hex characters; token.c): the field of a page rendered for
 * some secret, perhaps not this request's. */
int csrfi_field_name_derived(const char *name, size_t len);

/* csrf_body_field, the value as a slice: into
 * the body where it needs no decoding (multipart, or urlencoded without
 * '%' or '+'), else decoded into buf (cap bytes, NUL-terminated). The
 * same answers as csrf_body_field: CSRF_OK, CSRF_NOT_FOUND,
 * CSRF_MALFORMED, CSRF_ERR_BUFFER (a value that would not fit cap with
 * its NUL, decoded or not). */
csrf_reason csrfi_body_field(const char *content_type, size_t ct_len, const char *body, size_t len, const char *name,
                             size_t name_len, char *buf, size_t cap, csrf_slice *value);

/* Called with each field name of a form body: urlencoded names raw
 * (encoded = 1, still percent-encoded), multipart names as written in the
 * part (encoded = 0). Non-zero stops. */
typedef int (*csrfi_name_fn)(void *ud, const char *name, size_t len, int encoded);
/* Every field name of a body of that kind (urlencoded also for NONE):
 * CSRF_OK when all were seen, CSRF_NOT_FOUND when fn stopped the walk,
 * CSRF_MALFORMED when the body (multipart) does not parse. */
csrf_reason csrfi_form_each_name(csrfi_form_kind kind, const char *content_type, size_t ct_len, const char *body,
                                 size_t len, csrfi_name_fn fn, void *ud);

/* ---- the request as the decision reads it (request.c) ---- */

#define CSRF_HOST_PREFIX "__Host-"
/* A secret cookie's name with a prefix, with NUL. */
#define CSRF_SECRET_COOKIE_NAME_MAX (sizeof CSRF_HOST_PREFIX + CSRF_FIELD_NAME_MAX)

/* What the decision knows about the site itself. */
typedef struct {
	int known; /* self holds the site's origin */
	int https; /* the site is served over HTTPS */
	csrf_origin self;
} csrfi_site;

/* csrfi_site_of's https alone, without parsing the Host. */
int csrfi_site_https(const csrf_ctx *ctx, const csrf_request *req);
/* The configured self origin, else the request's scheme plus Host. */
void csrfi_site_of(const csrf_ctx *ctx, const csrf_request *req, csrfi_site *site);
/* csrf_page_prepare, with the site it read into *site when site is not
 * NULL (then out->origin stays "": the caller has the origin parsed). */
csrf_reason csrfi_page_prepare(const csrf_ctx *ctx, const csrf_request *req, csrf_page *out, csrfi_site *site);
/* csrf_inject_init with the site's origin parsed (NULL: unknown,
 * CSRF_ERR_ARG, as csrf_inject_init's for an origin it cannot parse). */
csrf_reason csrfi_inject_init_self(void *mem, size_t mem_len, const csrf_origin *self, const char *field,
                                   size_t field_len, const char *token, size_t token_len, csrf_inject **out);
/* "scheme://host[:port]" (no default port) and a NUL into out; its length,
 * 0 when cap is short. */
size_t csrfi_origin_format(const csrf_origin *o, char *out, size_t cap);
/* Wipes the token an injector holds (inject.c); it inserts nothing after. */
void csrfi_inject_wipe(csrf_inject *inj);
/* csrf_csp_form_action with the context's trusted origins (csp.c). */
csrf_reason csrfi_csp_form_action_ctx(const csrf_ctx *ctx, const char *existing, size_t existing_len, char *out,
                                      size_t cap, size_t *out_len);
/* The secret cookie's name for an HTTP or HTTPS site, NUL-terminated;
 * its length (0 when cap is short). */
size_t csrfi_secret_cookie_name(const csrf_ctx *ctx, int https, char *out, size_t cap);
/* csrf_cookie_get in one walk of the line, CSRF_COOKIE_AMBIGUOUS when
 * the name is there twice (cookie.c; value not NULL). */
csrf_reason csrfi_cookie_get_once(const char *header, size_t len, const char *name, size_t name_len, csrf_slice *value);
/* A cookie that must appear once over all Cookie lines: CSRF_OK,
 * CSRF_NOT_FOUND, CSRF_COOKIE_AMBIGUOUS, CSRF_TOO_LARGE, CSRF_MALFORMED. */
csrf_reason csrfi_request_cookie(const csrf_request *req, const char *name, size_t nlen, csrf_slice *v);
/* The session secret: the caller's, or decoded from the signed cookie
 * (named for an HTTPS site or not: csrfi_site_https). CSRF_OK, or the
 * token stage's reason. */
csrf_reason csrfi_request_secret(const csrf_ctx *ctx, const csrf_request *req, int https,
                                 uint8_t secret[CSRF_SECRET_LEN]);
/* 1 when csrfi_request_secret could only fail by the cookie's signature
 * (csrfi_secret_cookie_plausible): the caller's secret, or one secret
 * cookie that passes every other test. */
int csrfi_request_secret_plausible(const csrf_ctx *ctx, const csrf_request *req, int https);
/* The session id tokens are bound to: the caller's, else the value of
 * the one configured session cookie the request carries, else (several
 * of them) a digest of all they carry, written into buf; else empty.
 * CSRF_OK, CSRF_HEADER_TOO_LARGE, CSRF_COOKIE_AMBIGUOUS. */
#define CSRF_SESSION_BIND_LEN 64
csrf_reason csrfi_request_session(const csrf_ctx *ctx, const csrf_request *req, csrf_slice *sid,
                                  char buf[CSRF_SESSION_BIND_LEN + 1]);

/* The secret cookie at a given time (now 0: the clock), token.c. */
csrf_reason csrfi_secret_cookie_encode_at(const csrf_ctx *ctx, const uint8_t secret[CSRF_SECRET_LEN], int64_t now,
                                          char *out, size_t cap);
csrf_reason csrfi_secret_cookie_decode_at(const csrf_ctx *ctx, const char *value, size_t len, int64_t now,
                                          uint8_t secret[CSRF_SECRET_LEN]);
/* csrf_token_issue, csrf_token_verify and csrf_field_name without the
 * registers' wipe, for the public calls that make several of them and
 * wipe once at their end (csrfi_wipe_regs). */
csrf_reason csrfi_token_issue(const csrf_ctx *ctx, const uint8_t secret[CSRF_SECRET_LEN], const char *sid,
                              size_t sid_len, int64_t now, char *out, size_t cap);
csrf_reason csrfi_token_verify(const csrf_ctx *ctx, const uint8_t secret[CSRF_SECRET_LEN], const char *sid,
                               size_t sid_len, const char *token, size_t token_len, int64_t now);
csrf_reason csrfi_field_name(const csrf_ctx *ctx, const uint8_t secret[CSRF_SECRET_LEN], char *out, size_t cap);
/* 1 when csrfi_secret_cookie_decode_at would pass value on every test
 * but its signature (length, encoding, version, a key of the ring, and
 * the issued-at it claims within the maximum age); no MAC is computed. */
int csrfi_secret_cookie_plausible(const csrf_ctx *ctx, const char *value, size_t len, int64_t now);

/* ---- SipHash-2-4 (siphash.c) ---- */

#define CSRF_SIPHASH_KEY_LEN 16
uint64_t csrfi_siphash24(const uint8_t key[CSRF_SIPHASH_KEY_LEN], const void *in, size_t len);

/* ---- tokens: key files (keyfile.c; shared with keyring.c, token.c) ---- */

#define CSRF_KEYFILE_LINE_MAX 512 /* bytes of a line, without its newline */
#define CSRF_KEYFILE_MAX 65536    /* bytes of a whole key file */

/* One key of a key file. Holds key material: wipe after use. */
typedef struct {
	uint32_t id;
	int64_t created;
	int signing;
	uint8_t key[CSRF_KEY_LEN];
} csrfi_keyfile_entry;

typedef struct {
	csrfi_keyfile_entry keys[CSRF_KEYS_MAX];
	size_t n;
	size_t signing; /* index of the one key flagged sign; valid when n > 0 */
} csrfi_keyfile_data;

/* Parses a whole key file held in memory (pointer, length). Lines are
 * "key ID CREATED HEX64 [sign]" (fields separated by spaces or tabs, a
 * trailing CR ignored), '#' starts a comment, blank lines are skipped;
 * ids are decimal 1..2^32-1 without sign or leading zeros, unique; at most
 * CSRF_KEYS_MAX keys and exactly one flagged sign; lines of at most
 * CSRF_KEYFILE_LINE_MAX bytes, files of at most CSRF_KEYFILE_MAX. CSRF_OK
 * and *out, or CSRF_ERR_CONFIG with "line N: ..." (or a message about the
 * whole file) in err (NUL-terminated, never key material) and *out wiped. */
CSRF_MUST_CHECK csrf_reason csrfi_keyfile_parse(const char *buf, size_t len, csrfi_keyfile_data *out, char *err,
                                                size_t err_cap);

/* Reads and parses the key file at path, as csrfi_keyfile_parse; a file
 * that cannot be opened or read is CSRF_ERR_IO with the system's reason
 * in err, a file the world may read or write or the group may write
 * CSRF_ERR_CONFIG (the message names it and the chmod that fixes it).
 * Allocates nothing. */
CSRF_MUST_CHECK csrf_reason csrfi_keyfile_read(const char *path, csrfi_keyfile_data *out, char *err, size_t err_cap);

void csrfi_keyfile_data_wipe(csrfi_keyfile_data *d);

/* Whether key is all zero bytes (keyring.c): refused by the key file
 * parser and csrf_ctx_add_key. */
int csrfi_key_is_zero(const uint8_t key[CSRF_KEY_LEN]);

/* For the unit tests (keyfile.c): how long a rewrite waits for a locked
 * directory (ms, 10000) and the call that syncs the directory after the
 * rename (fsync). */
extern unsigned csrfi_keyfile_lock_wait_ms;
extern int (*csrfi_keyfile_sync_dir)(int fd);

/* A referrer policy value, read as browsers read it (referrer.c):
 * comma-separated tokens, whitespace around each ignored, ASCII case
 * ignored, the last one recognized wins; prev when none is. legacy: also
 * the <meta> keywords of HTML's legacy table (never, default, always,
 * origin-when-crossorigin). */
csrf_referrer_policy csrfi_referrer_scan(const char *value, size_t len, int legacy, csrf_referrer_policy prev);

#endif /* CSRF_INTERNAL_H */
