/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * csrf.h - libcsrf, a cross-site request forgery defence for C servers.
 *
 * The core: one header, one prefix, libcrypto (or nothing but libc with
 * the builtin SHA-256). The library decides, for each request described
 * as plain slices, whether it may change state: safe methods, exemptions,
 * fetch metadata, Origin and Referer, a per-session masked token. It
 * issues the tokens, signs session-less secret cookies, and injects
 * hidden token fields into HTML forms as a page streams out. Stores and
 * re-authentication with the account password are the optional session
 * part, csrf_session.h (library libcsrf-session, with libsodium and
 * hiredis). It contains no HTTP server; it never logs or prints a token,
 * a secret, a password or a cookie value.
 *
 * Conventions
 *  - Input is (pointer, length); no NUL terminator is required or read.
 *  - Results that point into the caller's input are csrf_slice values.
 *  - Output goes into caller buffers with their capacity; a buffer that is
 *    too small is CSRF_ERR_BUFFER and nothing useful is left in it.
 *  - Every function that can fail returns a csrf_reason; CSRF_OK is 0.
 *  - A csrf_ctx is immutable on the hot path: csrf_check, csrf_token_issue
 *    and csrf_token_verify may be called from many threads at once and
 *    allocate nothing. Configuration calls are not thread-safe, except
 *    csrf_ctx_load_key_file, which swaps the key ring under a lock.
 */
#ifndef CSRF_H
#define CSRF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define CSRF_MUST_CHECK __attribute__((warn_unused_result))
#else
#define CSRF_MUST_CHECK
#endif

/* The library builds with hidden visibility; what this header declares is
 * its exported interface. */
#if defined(CSRF_BUILDING) && (defined(__GNUC__) || defined(__clang__))
#pragma GCC visibility push(default)
#define CSRF_VISIBILITY_PUSHED 1
#endif

#define CSRF_VERSION "0.1.0"

/* Sizes callers can use for arrays. Token lengths exclude the NUL that the
 * writing functions append; buffers need CSRF_*_LEN + 1 bytes. */
#define CSRF_SECRET_LEN 32    /* per-session random secret, bytes */
#define CSRF_KEY_LEN 32       /* server key, bytes */
#define CSRF_TOKEN_RAW_LEN 38 /* unmasked token, bytes */
/* The longest token csrf_token_issue writes (version 2 or 3, masked),
 * base64url characters: a buffer of CSRF_TOKEN_LEN + 1 holds any token
 * issued. A token is up to this long: version 4, the default, is
 * CSRF_TOKEN_UNMASKED_LEN. */
#define CSRF_TOKEN_LEN 102
#define CSRF_TOKEN_UNMASKED_LEN 51 /* unmasked token (version 4 as issued), base64url characters */
#define CSRF_TOKEN_MAX_LEN 144     /* the longest token csrf_token_verify reads (an older version's, masked) */
#define CSRF_SECRET_COOKIE_LEN 103 /* signed secret cookie value, characters */
#define CSRF_FIELD_NAME_MAX 64     /* longest hidden-field name, characters */
#define CSRF_KEYS_MAX 16           /* keys a ring holds at once */
#define CSRF_HEADER_NAME "X-CSRF-Token"
#define CSRF_DEFAULT_SECRET_COOKIE "csrf_secret"
#define CSRF_DEFAULT_BODY_MAX (1024 * 1024) /* bytes of a body searched for the token */
#define CSRF_COOKIE_HEADERS_MAX 64          /* Cookie header lines one request may carry */
#define CSRF_SET_COOKIE_MAX 320             /* a Set-Cookie value csrf_page_prepare writes, with NUL */
#define CSRF_ORIGIN_MAX 280                 /* a serialized origin, with NUL */
#define CSRF_SESSION_COOKIES_MAX 4          /* session cookie names a context binds to */

/* A view into someone else's bytes. ptr == NULL means "absent" (a header
 * that was not sent); ptr != NULL with len == 0 means "present but empty". */
typedef struct {
	const char *ptr;
	size_t len;
} csrf_slice;

/* Result and reason codes. Values are stable: never renumbered, only
 * appended. Codes below 16 allow; 16..63 are rejections of a request;
 * 64 and up are errors of the API or of the environment. */
typedef enum {
	/* allowed */
	CSRF_OK = 0,              /* success; for csrf_check: all stages passed */
	CSRF_SAFE_METHOD = 1,     /* GET, HEAD or OPTIONS */
	CSRF_EXEMPT = 2,          /* an exemption matched method and path */
	CSRF_ORIGIN_VERIFIED = 3, /* mode origin: the origin stage passed */

	/* rejected: origin stage */
	CSRF_CROSS_SITE = 16,           /* Sec-Fetch-Site: cross-site */
	CSRF_SAME_SITE = 17,            /* Sec-Fetch-Site: same-site, not allowed */
	CSRF_FETCH_SITE_MALFORMED = 18, /* Sec-Fetch-Site with an unknown value */
	CSRF_ORIGIN_MISMATCH = 19,      /* Origin is neither self nor trusted */
	CSRF_NULL_ORIGIN = 20,          /* Origin: null */
	CSRF_ORIGIN_MALFORMED = 21,     /* Origin that does not parse */
	CSRF_REFERER_MISSING = 22,      /* HTTPS, no Origin, no Referer */
	CSRF_REFERER_MALFORMED = 23,
	CSRF_REFERER_INSECURE = 24, /* http:// Referer to an https site */
	CSRF_REFERER_MISMATCH = 25,
	CSRF_NO_EVIDENCE = 26,      /* unsafe GET: no same-origin evidence */
	CSRF_METHOD_OVERRIDE = 27,  /* override to a method that is not known */
	CSRF_WEBSOCKET_ORIGIN = 28, /* a WebSocket handshake from another origin (fetch metadata or Origin) */

	/* rejected: token stage */
	CSRF_TOKEN_MISSING = 32,
	CSRF_TOKEN_MALFORMED = 33, /* wrong length, alphabet or version */
	CSRF_TOKEN_INVALID = 34,   /* MAC does not verify */
	CSRF_TOKEN_EXPIRED = 35,   /* older than the configured max age */
	CSRF_TOKEN_SESSION = 36,   /* bound to another session (or its binding forged) */
	CSRF_UNKNOWN_KEY = 37,     /* key id not (or no longer) in the ring */
	CSRF_SECRET_MISSING = 38,  /* no session secret / no secret cookie */
	CSRF_SECRET_INVALID = 39,  /* secret cookie not signed by our keys */

	/* rejected: re-authentication */
	CSRF_REAUTH_REQUIRED = 40, /* no password given, none recent */
	CSRF_REAUTH_FAILED = 41,   /* wrong password */
	CSRF_LOCKED_OUT = 42,      /* too many failures; wait */

	/* rejected: request shape */
	CSRF_BODY_TOO_LARGE = 48,
	CSRF_BODY_MALFORMED = 49,
	CSRF_HEADER_TOO_LARGE = 50,
	CSRF_HOST_MISSING = 51,      /* no self origin configured and no Host */
	CSRF_STORE_UNAVAILABLE = 52, /* the store did not answer: fail closed */
	CSRF_COOKIE_AMBIGUOUS = 53,  /* the secret or session cookie sent twice: a planted cookie beside ours */
	CSRF_SECRET_EXPIRED = 54,    /* secret cookie older than the configured max age */
	CSRF_STORE_FULL = 55,        /* the store is full and would have to evict a security counter: fail closed */

	/* errors of the API and the environment */
	CSRF_ERR_ARG = 64, /* a NULL or out-of-range argument */
	CSRF_ERR_NOMEM = 65,
	CSRF_ERR_BUFFER = 66, /* output buffer too small */
	CSRF_ERR_CONFIG = 67, /* see csrf_ctx_error() */
	CSRF_ERR_IO = 68,     /* file could not be read or written */
	CSRF_ERR_RANDOM = 69, /* the CSPRNG failed */
	CSRF_NOT_FOUND = 70,  /* parser: the name is not present */
	CSRF_MALFORMED = 71,  /* parser: input does not parse */
	CSRF_TOO_LARGE = 72,  /* parser: input over its cap */
	CSRF_ERR_INTERNAL = 73,
	CSRF_ERR_STOPPED = 74 /* the caller's callback stopped the work (csrf_inject_feed) */
} csrf_reason;

/* A short English phrase for a code ("origin mismatch"); never NULL, a
 * static string. Unknown values give "unknown reason". */
const char *csrf_reason_str(csrf_reason r);

/* The code's enum name without prefix, lower case ("origin_mismatch"), for
 * logs and $csrf_result; never NULL, static. */
const char *csrf_reason_name(csrf_reason r);

/* One or two sentences for the person whose request was rejected: what
 * happened and what they can do ("This page is from an earlier session:
 * reload it and try again."); never NULL, static, plain text. */
const char *csrf_reason_advice(csrf_reason r);

/* The page an adapter answers a rejection with: a small HTML document
 * (UTF-8) with the advice, the reason's name and phrase, and the status,
 * all escaped, nothing taken from the request; no script, inline style
 * only. Send it with Content-Type "text/html; charset=utf-8",
 * Content-Security-Policy CSRF_REJECT_PAGE_CSP and Cache-Control
 * CSRF_REJECT_PAGE_CACHE_CONTROL (no cache keeps a rejection, nor serves
 * it for the page the user reloads). NUL-terminated into out;
 * CSRF_REJECT_PAGE_MAX bytes always suffice. CSRF_OK, CSRF_ERR_BUFFER,
 * CSRF_ERR_ARG (status outside 400..599). */
#define CSRF_REJECT_PAGE_MAX 2048
#define CSRF_REJECT_PAGE_CSP                                                                                           \
	"default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
#define CSRF_REJECT_PAGE_CACHE_CONTROL "no-store"
CSRF_MUST_CHECK csrf_reason csrf_reject_page(csrf_reason reason, unsigned status, char *out, size_t cap,
                                             size_t *out_len);

/* 1 when the code means the request may proceed (codes below 16). */
int csrf_reason_allows(csrf_reason r);

/* ------------------------------------------------------------------ */
/* Context: configuration and keys                                     */
/* ------------------------------------------------------------------ */

typedef struct csrf_ctx csrf_ctx;

/* Optional allocator for everything the library allocates (only at
 * configuration time; the hot path allocates nothing). ud is passed back. */
typedef struct {
	void *(*alloc)(size_t size, void *ud);
	void (*free)(void *ptr, void *ud);
	void *ud;
} csrf_allocator;

typedef enum {
	CSRF_MODE_BOTH = 0,   /* origin stage and token stage (default) */
	CSRF_MODE_TOKEN = 1,  /* token stage only */
	CSRF_MODE_ORIGIN = 2, /* origin stage only, tokenless */
	/* Origin evidence, else token: a request the browser itself proves
	 * same-origin (Sec-Fetch-Site: same-origin; or, without fetch
	 * metadata, an Origin equal to the site's own or a trusted origin;
	 * or Sec-Fetch-Site cross-site/same-site with a trusted Origin) is
	 * allowed without a token (CSRF_ORIGIN_VERIFIED). A request with no
	 * such evidence (no Sec-Fetch-Site and no Origin: old browsers,
	 * privacy proxies, non-browser clients; or Origin: null, which a
	 * no-referrer page sends; or Sec-Fetch-Site: none, or
	 * same-site when allowed) must carry a valid token; over HTTPS a
	 * Referer, when sent, must be same-origin, and none is needed when
	 * the secret is the caller's or in the "__Host-" cookie. Cross-site, same-site (unless allowed) and
	 * foreign-Origin requests are rejected as in mode both. Sound because
	 * a browser that sends Sec-Fetch-Site or Origin cannot be made to lie
	 * about them by another page, so a token adds nothing to that proof;
	 * it is what the script-driven requests of unchanged applications
	 * need (their scripts cannot know the token), and forms the adapters
	 * inject into still carry one. */
	CSRF_MODE_ORIGIN_OR_TOKEN = 3
} csrf_mode;

/* Creates a context with defaults: mode both, no self origin (derived per
 * request from scheme and Host), no trusted origins, Sec-Fetch-Site: none
 * allowed, same-site rejected, no max age, derived field names, secret
 * cookie CSRF_DEFAULT_SECRET_COOKIE, no keys (add or load one before
 * issuing), re-authentication (csrf_session.h) 5 failures / 900 s
 * lockout / 300 s window.
 * alloc may be NULL (malloc/free); it is copied. On success *out owns the
 * context; free it with csrf_ctx_free. */
CSRF_MUST_CHECK csrf_reason csrf_ctx_new(csrf_ctx **out, const csrf_allocator *alloc);

/* Frees the context and wipes its keys. NULL is a no-op. */
void csrf_ctx_free(csrf_ctx *ctx);

/* The message of the last CSRF_ERR_CONFIG (or CSRF_ERR_IO) a configuration
 * call returned, e.g. "trusted origin \"example.com\" has no scheme";
 * "" when none. Owned by ctx, valid until the next configuration call. */
const char *csrf_ctx_error(const csrf_ctx *ctx);

/* The site's own origin, "https://app.example" or "http://127.0.0.1:8080"
 * (scheme, host, optional port; no path). Without it the self origin of a
 * request is its configured scheme plus its Host header.
 * CSRF_ERR_CONFIG with a message when it is not a full origin. */
CSRF_MUST_CHECK csrf_reason csrf_ctx_set_self_origin(csrf_ctx *ctx, const char *origin, size_t len);

/* Adds an origin whose cross-origin requests are trusted. It must be a
 * full origin (scheme://host[:port]); a bare host, a path, a query, a
 * fragment, userinfo, "" or "null" is CSRF_ERR_CONFIG with a message and
 * nothing is added. The string is copied. */
CSRF_MUST_CHECK csrf_reason csrf_ctx_add_trusted_origin(csrf_ctx *ctx, const char *origin, size_t len);

/* Exempts exactly (method, path) from the check. method NULL means every
 * unsafe method; path (starting with '/', no spaces, controls, '?' or
 * '#') is compared byte for byte with the request path without its
 * query; no prefixes, no patterns. A method-specific exemption never
 * covers a request that overrides its method (X-HTTP-Method-Override, a
 * `_method` query parameter or form field): the application would route
 * it elsewhere. Both are copied. CSRF_OK, CSRF_ERR_CONFIG (message in
 * csrf_ctx_error), CSRF_ERR_NOMEM, CSRF_ERR_ARG. */
CSRF_MUST_CHECK csrf_reason csrf_ctx_add_exemption(csrf_ctx *ctx, const char *method, const char *path,
                                                   size_t path_len);

/* Which stages csrf_check runs (CSRF_MODE_BOTH by default). A value that
 * is not a csrf_mode leaves the mode as it was. */
void csrf_ctx_set_mode(csrf_ctx *ctx, csrf_mode mode);
/* Report-only: csrf_check still decides, but allows what it would reject;
 * the result then has report_only set and the would-be reason. */
void csrf_ctx_set_report_only(csrf_ctx *ctx, int on);
/* Sec-Fetch-Site: none (typed URL, bookmark) passes the origin stage.
 * Default on. */
void csrf_ctx_set_allow_fetch_none(csrf_ctx *ctx, int on);
/* Sec-Fetch-Site: same-site passes the origin stage. Default off. */
void csrf_ctx_set_allow_same_site(csrf_ctx *ctx, int on);
/* For legacy applications that change state on GET: GET, HEAD and
 * OPTIONS (a preflight reaches any URL cross-site) must then show
 * positive same-origin evidence (Sec-Fetch-Site same-origin or
 * none, or without fetch metadata a same-origin Origin or Referer); no
 * evidence is CSRF_NO_EVIDENCE. No token is asked for. Default off. */
void csrf_ctx_set_unsafe_get(csrf_ctx *ctx, int on);
/* Tokens older than seconds are CSRF_TOKEN_EXPIRED, and signed secret
 * cookies older than seconds are CSRF_SECRET_EXPIRED (csrf_page_prepare
 * then issues a new one, with Max-Age seconds); 0 (default) never. */
void csrf_ctx_set_max_age(csrf_ctx *ctx, uint32_t seconds);
/* The version of the tokens issued: 4 (the default: 51 characters, a
 * nonce inside the tag instead of a mask), 3 (masked, 102 characters) or
 * 2, for a fleet upgraded server by server from a release that reads up
 * to 3 (or 2 only): every server holds the issue at the newest version
 * the oldest release left reads until none runs it, then drops the
 * setting (docs/architecture.md, "Tokens and cookies"). Signed secret
 * cookies are version 2 at 2 and 3 otherwise. Verification takes
 * versions 1 to 4 whatever is set. CSRF_ERR_ARG for another version. */
CSRF_MUST_CHECK csrf_reason csrf_ctx_set_issue_version(csrf_ctx *ctx, unsigned version);
/* The largest body csrf_check searches for the token field, in bytes
 * (default CSRF_DEFAULT_BODY_MAX; 0 is taken as the default). A body, or
 * a Content-Length, over it is CSRF_BODY_TOO_LARGE when the token has to
 * come from the body. */
void csrf_ctx_set_body_max(csrf_ctx *ctx, size_t bytes);

/* A fixed hidden-field name instead of the per-session derived one. The
 * name must be 1..CSRF_FIELD_NAME_MAX characters of [A-Za-z0-9_-]. NULL
 * returns to derived names. */
CSRF_MUST_CHECK csrf_reason csrf_ctx_set_field_name(csrf_ctx *ctx, const char *name);

/* The cookie that carries the signed secret in the stateless variant,
 * and the application's own session cookie that tokens are bound to when
 * the caller passes no session id (NULL: none). Names are RFC 6265 tokens
 * of at most CSRF_FIELD_NAME_MAX characters, looked up exactly as sent by
 * the browser. Without a call to csrf_ctx_set_secret_cookie the secret
 * cookie is "csrf_secret" on an HTTP site and "__Host-csrf_secret" on an
 * HTTPS one (the self origin's scheme, else the request's), so no sibling
 * subdomain can set it; a name set here is used exactly as given, on
 * both. csrf_page_prepare writes the cookie by the same rule. Either
 * cookie sent twice is CSRF_COOKIE_AMBIGUOUS.
 * Without a session binding a genuine (cookie, token) pair is not tied to
 * a user: an attacker who plants their own pair (from a sibling subdomain,
 * or from any port of the same host over HTTP) passes the token stage,
 * and only the origin stage (mode both) stops the request; bind to the
 * session cookie to close that. Names are copied. CSRF_OK,
 * CSRF_ERR_CONFIG, CSRF_ERR_ARG.
 * csrf_ctx_set_session_cookie replaces the session cookie names with one
 * (NULL: none); csrf_ctx_add_session_cookie adds another, up to
 * CSRF_SESSION_COOKIES_MAX (a name given twice is CSRF_ERR_CONFIG), for
 * an application that names its cookie per scheme (phpMyAdmin:
 * "phpMyAdmin" over HTTP, "phpMyAdmin_https" over HTTPS). The token is
 * then bound to every one of them the browser sends: to the value of the
 * one it sends, or to a digest of all it sends when several. A cookie
 * planted under another of the names therefore changes the binding and
 * the request fails (CSRF_TOKEN_SESSION); it never replaces the cookie
 * the application reads. A page issued while the browser sent one of the
 * names, submitted after it gained another, fails the same way once
 * (reload it). */
CSRF_MUST_CHECK csrf_reason csrf_ctx_set_secret_cookie(csrf_ctx *ctx, const char *name);
CSRF_MUST_CHECK csrf_reason csrf_ctx_set_session_cookie(csrf_ctx *ctx, const char *name);
CSRF_MUST_CHECK csrf_reason csrf_ctx_add_session_cookie(csrf_ctx *ctx, const char *name);

/* ------------------------------------------------------------------ */
/* Key ring                                                            */
/* ------------------------------------------------------------------ */

/* Adds a key. id must be non-zero and not already present, and the key
 * not all zero bytes; signing != 0 makes it the key new tokens are
 * issued with (the previous signing key keeps verifying). CSRF_ERR_CONFIG
 * when the ring is full or a rule is broken. */
CSRF_MUST_CHECK csrf_reason csrf_ctx_add_key(csrf_ctx *ctx, uint32_t id, const uint8_t key[CSRF_KEY_LEN], int signing);

/* Adds a fresh random signing key with the next free id. */
CSRF_MUST_CHECK csrf_reason csrf_ctx_generate_key(csrf_ctx *ctx);

/* Replaces the whole ring with the keys of a key file (format in
 * csrf_keyfile_*). Atomic: on any error the old ring stays and
 * CSRF_ERR_IO or CSRF_ERR_CONFIG is returned with a message. Safe to call
 * while other threads check. */
CSRF_MUST_CHECK csrf_reason csrf_ctx_load_key_file(csrf_ctx *ctx, const char *path);

/* The message of a failed operator call, for a person: "key 3 is the
 * signing key; rotate first". "" when there is none. Never key material. */
#define CSRF_ERROR_MAX 256
typedef struct {
	char msg[CSRF_ERROR_MAX];
} csrf_error;

/* Key files, for operators (build/csrf-key uses these). A key file is text,
 * one key a line: "key ID CREATED HEX64 [sign]"; '#' starts a comment.
 * Writes are atomic (temporary file, fsync, rename). new creates the file
 * mode 0600; stage, rotate and retire give the new file the old one's
 * owner, group, access ACL and mode masked by 0660, and follow a path
 * that is a symlink to the file it resolves to (replaced in its own
 * directory). The path is resolved once; every later step goes through
 * the directory's descriptor. */
/* Each answers CSRF_OK, CSRF_ERR_IO (cannot read or write the file, or
 * new: it exists, or a rewrite that cannot keep the file's owner, or its
 * group while the group may read it, or its ACL; a file with a second
 * hard link; as root, a file whose directory a group, others or a user
 * other than root and the file's owner can write; the directory locked
 * by another process for 10 s; or the directory not synced after the
 * file was replaced, which the message says), CSRF_ERR_CONFIG (a malformed file, a full ring, an
 * unknown id, or retire of the signing key) or CSRF_ERR_RANDOM, and on
 * failure says why in *err (may be NULL).
 * new: a file with one signing key, id 1.
 * stage: adds a key with the next id that verifies but does not sign yet.
 * rotate: the oldest staged key starts signing; with none staged, a new
 * key with the next id signs at once. *new_id (may be NULL) gets the id
 * that now signs. Older keys keep verifying either way.
 * A fleet that reloads between stage and rotate has no moment in which a
 * server meets a token of a key it does not know; rotate alone leaves one
 * between the first and the last reload.
 * retire: removes key id (never the signing key). Concurrent calls take
 * turns under a lock on the directory. */
CSRF_MUST_CHECK csrf_reason csrf_keyfile_new(const char *path, csrf_error *err);
CSRF_MUST_CHECK csrf_reason csrf_keyfile_stage(const char *path, uint32_t *new_id, csrf_error *err);
CSRF_MUST_CHECK csrf_reason csrf_keyfile_rotate(const char *path, uint32_t *new_id, csrf_error *err);
CSRF_MUST_CHECK csrf_reason csrf_keyfile_retire(const char *path, uint32_t id, csrf_error *err);
typedef struct {
	uint32_t id;
	int64_t created; /* unix seconds */
	int signing;
} csrf_key_info;
/* Lists up to cap keys (never their material); *n is the count found.
 * CSRF_ERR_BUFFER when the file holds more than cap keys (*n still the
 * count), else as above. */
CSRF_MUST_CHECK csrf_reason csrf_keyfile_list(const char *path, csrf_key_info *out, size_t cap, size_t *n,
                                              csrf_error *err);

/* Configuration checks without a context, for adapters that validate a
 * setting when they read it: CSRF_OK, or CSRF_ERR_CONFIG (CSRF_ERR_ARG for
 * NULL) with a message in *err (may be NULL) that names the setting with
 * what ("trusted origin"). An origin must be scheme://host[:port] with
 * scheme http or https; a cookie name 1 to CSRF_FIELD_NAME_MAX token
 * characters. The csrf_ctx setters apply the same checks. */
CSRF_MUST_CHECK csrf_reason csrf_origin_validate(const char *origin, size_t len, const char *what, csrf_error *err);
CSRF_MUST_CHECK csrf_reason csrf_cookie_name_validate(const char *name, const char *what, csrf_error *err);

/* ------------------------------------------------------------------ */
/* Secrets, tokens, field names                                        */
/* ------------------------------------------------------------------ */

/* Fills buf with n bytes from the kernel's CSPRNG (getrandom(2), blocking
 * until it is seeded; never a weaker source). CSRF_OK, CSRF_ERR_ARG (buf
 * NULL), CSRF_ERR_RANDOM when the kernel refuses (a kernel without
 * getrandom, before Linux 3.17, fails here: ENOSYS, errno kept). */
CSRF_MUST_CHECK csrf_reason csrf_random(uint8_t *buf, size_t n);

/* A new per-session secret, to be kept with the session (or sent in the
 * signed secret cookie). As csrf_random. */
CSRF_MUST_CHECK csrf_reason csrf_secret_new(uint8_t secret[CSRF_SECRET_LEN]);

/* Issues a token for (secret, session id) with the signing key, of the
 * context's issue version: URL-safe characters and a NUL into out,
 * CSRF_TOKEN_UNMASKED_LEN of them at version 4 (the default: a fresh
 * nonce inside the MACed bytes), CSRF_TOKEN_LEN at 2 or 3 (masked with a
 * fresh pad); cap at least that length + 1 (CSRF_TOKEN_LEN + 1 holds
 * either). Two calls give different strings; both verify.
 * now is unix seconds (0: the current time). Allocates nothing.
 * CSRF_OK, CSRF_ERR_BUFFER, CSRF_ERR_ARG, CSRF_ERR_CONFIG (the ring has
 * no key), CSRF_ERR_RANDOM, CSRF_ERR_INTERNAL (the ring lock failed). */
CSRF_MUST_CHECK csrf_reason csrf_token_issue(const csrf_ctx *ctx, const uint8_t secret[CSRF_SECRET_LEN],
                                             const char *sid, size_t sid_len, int64_t now, char *out, size_t cap);

/* Verifies a token for (secret, session id): version 4 unmasked
 * (CSRF_TOKEN_UNMASKED_LEN; a masked one is CSRF_TOKEN_MALFORMED, no
 * release issues it), or of a previous version, which pages served
 * before an upgrade still carry: 3 or 2, masked (CSRF_TOKEN_LEN) or
 * unmasked, or 1 (a 256-bit tag: CSRF_TOKEN_MAX_LEN masked, 72 unmasked
 * characters). CSRF_OK, or CSRF_TOKEN_MALFORMED,
 * CSRF_UNKNOWN_KEY, CSRF_TOKEN_INVALID, CSRF_TOKEN_SESSION,
 * CSRF_TOKEN_EXPIRED. Constant time in the token's content; allocates
 * nothing. now: unix seconds, 0 for the current time. */
CSRF_MUST_CHECK csrf_reason csrf_token_verify(const csrf_ctx *ctx, const uint8_t secret[CSRF_SECRET_LEN],
                                              const char *sid, size_t sid_len, const char *token, size_t token_len,
                                              int64_t now);

/* The hidden-field name for this secret: the fixed name when one is set,
 * else "csrf_" followed by 12 lower-case hex characters derived from the
 * secret (the secret cannot be recovered from it). NUL-terminated into
 * out; cap >= CSRF_FIELD_NAME_MAX + 1 always suffices. CSRF_OK,
 * CSRF_ERR_BUFFER, CSRF_ERR_ARG. */
CSRF_MUST_CHECK csrf_reason csrf_field_name(const csrf_ctx *ctx, const uint8_t secret[CSRF_SECRET_LEN], char *out,
                                            size_t cap);

/* Stateless variant: the secret travels in a cookie signed with the
 * signing key. encode writes CSRF_SECRET_COOKIE_LEN characters and a NUL
 * (cap >= CSRF_SECRET_COOKIE_LEN + 1; CSRF_ERR_BUFFER, CSRF_ERR_CONFIG
 * with no key). The cookie carries its issue time. decode answers CSRF_OK
 * and the secret, or CSRF_SECRET_INVALID (bad length, alphabet or
 * signature: a cookie forged or signed by another server's keys),
 * CSRF_UNKNOWN_KEY, or CSRF_SECRET_EXPIRED (older than the context's max
 * age). A genuine
 * cookie of ours planted by an attacker does decode: see
 * csrf_ctx_set_session_cookie for what stops it. */
CSRF_MUST_CHECK csrf_reason csrf_secret_cookie_encode(const csrf_ctx *ctx, const uint8_t secret[CSRF_SECRET_LEN],
                                                      char *out, size_t cap);
CSRF_MUST_CHECK csrf_reason csrf_secret_cookie_decode(const csrf_ctx *ctx, const char *value, size_t len,
                                                      uint8_t secret[CSRF_SECRET_LEN]);

/* ------------------------------------------------------------------ */
/* The decision                                                        */
/* ------------------------------------------------------------------ */

/* A request, as slices into the server's own buffers. Absent headers have
 * ptr == NULL. Zero it (csrf_request_init), set method, target and
 * scheme, then hand every request header to csrf_request_header, which
 * files the ones the decision reads; an adapter needs to know no header
 * name. Filling the header fields by hand still works; csrf_request_header
 * additionally records headers sent more than once (see repeated). */
typedef struct {
	csrf_slice method;            /* "POST" */
	csrf_slice target;            /* request target: path and optional ?query */
	csrf_slice scheme;            /* "http" or "https", as the server knows it */
	csrf_slice host;              /* Host header (used without a self origin) */
	csrf_slice origin;            /* Origin header */
	csrf_slice referer;           /* Referer header */
	csrf_slice sec_fetch_site;    /* Sec-Fetch-Site header */
	csrf_slice method_override;   /* X-HTTP-Method-Override, X-HTTP-Method or X-Method-Override */
	csrf_slice cookie;            /* Cookie header (stateless secret, session) */
	csrf_slice content_type;      /* Content-Type header */
	csrf_slice content_length;    /* Content-Length header; an adapter that read a
	                                 chunked body may put its decimal size here */
	csrf_slice transfer_encoding; /* Transfer-Encoding header: a body of unknown
	                                 length (an HTTP/2 body without
	                                 Content-Length: "chunked") */
	csrf_slice token_header;      /* X-CSRF-Token header */
	csrf_slice upgrade;           /* Upgrade header: "websocket" makes a safe
	                                 method a WebSocket handshake */
	csrf_slice sec_fetch_mode;    /* Sec-Fetch-Mode header: "websocket" too */
	csrf_slice body;              /* the whole body when it was read (ptr NULL:
	                                 not read); the token field is looked up in
	                                 it only when the content type is
	                                 urlencoded or multipart */
	/* Session binding. secret NULL: stateless, the secret comes from the
	 * signed secret cookie. session_id absent: the value of the configured
	 * session cookie, or empty. */
	const uint8_t *secret;
	csrf_slice session_id;
	int64_t now; /* unix seconds; 0: the current time */

	/* Filled by csrf_request_header; zero when filling by hand. */
	csrf_slice
	    cookie_more[CSRF_COOKIE_HEADERS_MAX - 1]; /* Cookie lines after the first (HTTP/2 sends one a cookie) */
	unsigned n_cookie_more;
	unsigned repeated; /* CSRF_HDR_* bits: headers that came more than once */
} csrf_request;

/* Bits of csrf_request.repeated. A decision header sent twice is judged
 * by the stage that reads it: Origin CSRF_ORIGIN_MALFORMED, Referer
 * CSRF_REFERER_MALFORMED, Sec-Fetch-Site CSRF_FETCH_SITE_MALFORMED, the
 * token header CSRF_TOKEN_MALFORMED, method overrides CSRF_METHOD_OVERRIDE,
 * Content-Type or Content-Length CSRF_BODY_MALFORMED (when the body is
 * read), Host: no self origin from it, Upgrade or Sec-Fetch-Mode: a
 * WebSocket handshake whatever the lines say (a browser never sends
 * either twice). More Cookie lines than CSRF_COOKIE_HEADERS_MAX:
 * CSRF_HEADER_TOO_LARGE when a cookie is read. */
#define CSRF_HDR_ORIGIN 0x01u
#define CSRF_HDR_REFERER 0x02u
#define CSRF_HDR_FETCH_SITE 0x04u
#define CSRF_HDR_TOKEN 0x08u
#define CSRF_HDR_OVERRIDE 0x10u
#define CSRF_HDR_CONTENT_TYPE 0x20u
#define CSRF_HDR_CONTENT_LENGTH 0x40u
#define CSRF_HDR_HOST 0x80u
#define CSRF_HDR_COOKIES 0x100u
#define CSRF_HDR_UPGRADE 0x200u

/* Zeroes req: every header absent, no body, no session binding. The
 * Cookie lines after the first (cookie_more, read only below
 * n_cookie_more, set to 0) are left as they were. */
void csrf_request_init(csrf_request *req);

/* Files one request header as it arrived (name compared without regard
 * to case; value without its line ending). Headers the decision does not
 * read are ignored. Nothing is copied: both must outlive req. CSRF_OK or
 * CSRF_ERR_ARG (req NULL, or a NULL pointer with a length). */
csrf_reason csrf_request_header(csrf_request *req, const char *name, size_t name_len, const char *value,
                                size_t value_len);

/* 1 when a request header of this name overrides the method
 * (X-HTTP-Method-Override, X-HTTP-Method, X-Method-Override; any case):
 * what an adapter strips from a request it has rejected but still passes
 * on (an error page), so no application honours it. */
int csrf_header_is_method_override(const char *name, size_t len);

typedef struct {
	int allowed;        /* 1: let the request through */
	csrf_reason reason; /* why; with report_only the would-be rejection */
	int report_only;    /* 1: rejected by the checks, allowed by report-only */
	int needs_body;     /* 1: read the body and call csrf_check again (the
	                       token must come from an urlencoded or multipart
	                       body not given yet); allowed is then 0 and
	                       reason CSRF_TOKEN_MISSING, so an adapter that
	                       ignores it fails closed */
} csrf_result;

/* The whole decision, in order: effective method, exemptions,
 * Sec-Fetch-Site, Origin, Referer, token. A safe method that opens a
 * WebSocket (Upgrade naming websocket, or Sec-Fetch-Mode: websocket) is
 * judged by exemptions, Sec-Fetch-Site and Origin, never by a token, in
 * every mode: CSRF_ORIGIN_VERIFIED for the site's own or a trusted
 * origin and for a request with neither header (no browser sent it),
 * CSRF_WEBSOCKET_ORIGIN for another or a null origin
 * (docs/architecture.md, "WebSocket handshakes"). Never allocates; reads only
 * inside the given slices. When the token can only come from a body that
 * was not given (req->body.ptr NULL) the result asks for it (needs_body),
 * unless its Content-Length already exceeds the context's body maximum
 * (CSRF_BODY_TOO_LARGE). Report-only is applied here, to every
 * rejection. */
CSRF_MUST_CHECK csrf_result csrf_check(const csrf_ctx *ctx, const csrf_request *req);

/* 1 when the method (after any override in req) is safe: GET, HEAD or
 * OPTIONS with no override to an unsafe method. A safe WebSocket
 * handshake is still judged by csrf_check: never skip it on this. */
CSRF_MUST_CHECK int csrf_request_is_safe(const csrf_request *req);

/* What a response page needs, from csrf_page_prepare. Holds a token:
 * wipe it with csrf_page_wipe when done. */
typedef struct {
	char field[CSRF_FIELD_NAME_MAX + 1];  /* the hidden field's name */
	char token[CSRF_TOKEN_LEN + 1];       /* a fresh token (NUL-terminated, up to CSRF_TOKEN_LEN) */
	char set_cookie[CSRF_SET_COOKIE_MAX]; /* a Set-Cookie value, "" when none is needed */
	size_t set_cookie_len;
	char origin[CSRF_ORIGIN_MAX]; /* the site's origin ("" unknown), for csrf_inject_init */
	size_t origin_len;
} csrf_page;

/* The field name, a fresh masked token and, in the stateless variant
 * when the client has no valid secret cookie, the Set-Cookie value of a
 * new one, for the response to req. The secret is req->secret when set;
 * else the signed secret cookie read by csrf_check's rules: exactly one,
 * signed by a key of the ring, within the max age; anything else (none,
 * two, forged, expired, unknown key) gets a new secret and its cookie
 * (HttpOnly, SameSite=Lax, Path=/; Secure and the "__Host-" name on an
 * HTTPS site; Max-Age the context's max age). The token is bound to
 * req->session_id, else the session cookie the response sets (see
 * csrf_response_cookie), else the one the request carries. CSRF_OK,
 * CSRF_ERR_ARG, CSRF_ERR_CONFIG (no key), CSRF_ERR_RANDOM,
 * CSRF_ERR_INTERNAL. */
CSRF_MUST_CHECK csrf_reason csrf_page_prepare(const csrf_ctx *ctx, const csrf_request *req, csrf_page *out);

/* 1 when a response is an HTML page the injector may rewrite: status
 * 200-299 (but 204 and 206) or 400-599, Content-Type text/html (any
 * parameters), no Content-Encoding or "identity" (a compressed body is
 * passed through untouched). content_encoding NULL: none. */
int csrf_response_injectable(unsigned status, const char *content_type, size_t ct_len, const char *content_encoding,
                             size_t ce_len);

/* One header line of a response, as slices into the server's buffers
 * (picohttpparser's phr_header): for calls that judge a response's
 * headers together. */
typedef struct {
	csrf_slice name;
	csrf_slice value; /* without its line ending */
} csrf_header;

/* The longest Cache-Control line csrf_response_cache reads; a longer one
 * is not trusted to keep a page private. */
#define CSRF_CACHE_CONTROL_MAX 4096

/* What a response that carries a token (csrf_page_prepare's page) does
 * with its cache headers, so that no shared cache stores one user's
 * token and serves it to another. Given the response's n headers, sets
 * drop[i] to 1 for each one the response must lose (0 for the others),
 * and *add to the Cache-Control value it must gain ("private", or
 * "private, no-store" when a line it replaces says no-store; static),
 * or absent (ptr NULL) when it keeps its own. The rule:
 * - Cache-Control stays only when it already keeps the page out of shared
 *   caches, in a form every cache reads alike: exactly one Cache-Control
 *   line (a cache that reads only the first of several would miss a
 *   "private" in the second), a list of directives as RFC 9111 §5.2
 *   writes them (token [ "=" ( token / quoted-string ) ], separated by
 *   commas and optional spaces, empty elements allowed, names in any
 *   case, at most CSRF_CACHE_CONTROL_MAX bytes), one of which is
 *   "private" or "no-store" without an argument. private="Set-Cookie"
 *   (private="a, b") makes only the fields it names private, and
 *   "no-store" with an argument is not the standard's directive: neither
 *   counts. Otherwise every Cache-Control line goes, and so does Expires
 *   (a cache that reads it and not the new line would keep the page), and
 *   "private" comes, with "no-store" when a replaced line has that token
 *   between spaces, tabs, commas or semicolons (as Firefox finds it, even
 *   in a malformed line); beside a kept line Expires stays (private wins).
 * - Targeted cache fields always go, whatever they say: CDNs and proxies
 *   obey them over Cache-Control. They are any field whose name ends in
 *   "-Cache-Control" (RFC 9213's CDN-Cache-Control, and the fields a CDN
 *   names after itself, such as Cloudflare-CDN-Cache-Control),
 *   Surrogate-Control, Edge-Control and X-Accel-Expires (nginx's proxy
 *   cache); names in any case.
 * Nothing else is looked at. CSRF_OK, or CSRF_ERR_ARG (add NULL, headers
 * or drop NULL with n > 0, a NULL pointer with a length); on an error
 * *add is absent and drop untouched. */
CSRF_MUST_CHECK csrf_reason csrf_response_cache(const csrf_header *headers, size_t n, unsigned char *drop,
                                                csrf_slice *add);

/* What any response to a rejected request does with its cache headers,
 * whatever made it (the adapter's csrf_reject_page, or an error page the
 * server answers with instead): no cache may keep a rejection and serve
 * it to others for the same URL (a CDN does not key on the method
 * override or the Origin that made it one). Given the response's n
 * headers, sets drop[i] to 1 for every Cache-Control line (even a
 * private one), every targeted cache field (as csrf_response_cache names
 * them) and Expires, 0 for the others (Pragma stays), and *add to
 * CSRF_REJECT_PAGE_CACHE_CONTROL ("no-store", static), the only
 * Cache-Control the response may carry. Not for a request that
 * report-only let through. CSRF_OK, or CSRF_ERR_ARG as
 * csrf_response_cache. */
CSRF_MUST_CHECK csrf_reason csrf_rejection_cache(const csrf_header *headers, size_t n, unsigned char *drop,
                                                 csrf_slice *add);

/* 1 when one Cache-Control line keeps a page out of shared caches by
 * csrf_response_cache's rule: a well-formed list of directives with an
 * unqualified "private" or "no-store". NULL: 0. */
int csrf_cache_control_is_private(const char *value, size_t len);

/* Wipes the token and cookie a csrf_page holds. */
void csrf_page_wipe(csrf_page *page);

/* Self-healing retry, off by default (csrf_ctx_set_retry_token). After
 * csrf_check rejected req for a stale token (CSRF_TOKEN_EXPIRED,
 * CSRF_TOKEN_SESSION, CSRF_TOKEN_INVALID, CSRF_UNKNOWN_KEY), fills out as
 * csrf_page_prepare does, with a fresh token for the same secret and
 * session, for the adapter's 403: in its page and in an X-CSRF-Token
 * response header, so a script of the site's own page can retry once
 * (never more: a second rejection is final). Offered only when the
 * request proves it came from the site's own page (Sec-Fetch-Site:
 * same-origin, or without fetch metadata an Origin equal to the site's
 * own; a trusted origin, a Referer or no evidence is not enough) and the
 * client's secret is valid: never for a cross-site or origin failure, a
 * missing or malformed token, a missing, planted or expired cookie.
 * Safe because only the page's own origin can read a response to its own
 * request. CSRF_OK (out holds a token: csrf_page_wipe it), CSRF_NOT_FOUND
 * (no token may be offered: send the 403 without one), CSRF_ERR_ARG, or
 * csrf_page_prepare's errors. */
void csrf_ctx_set_retry_token(csrf_ctx *ctx, int on);
CSRF_MUST_CHECK csrf_reason csrf_retry_prepare(const csrf_ctx *ctx, const csrf_request *req, csrf_reason rejected,
                                               csrf_page *out);

/* Hands one Set-Cookie value of the response (as the application sent it)
 * to the library: when it sets a configured session cookie, req's
 * session_id becomes its value (pointing into value; the last one wins,
 * as in a browser), so the page of a login is bound to the new session.
 * Other cookies are ignored. */
void csrf_response_cookie(const csrf_ctx *ctx, csrf_request *req, const char *value, size_t len);

/* For an adapter's configuration warning, after every Set-Cookie of the
 * response went to csrf_response_cookie: -1 when ctx binds to session
 * cookies and req has a session (its session_id, or one of the cookies
 * in its Cookie header); 1 when it has none while set_cookie (one
 * Set-Cookie value of the response) sets another cookie, neither a
 * session nor the secret cookie: *name (may be NULL) is then that
 * cookie's name, pointing into set_cookie, never its value; 0 otherwise
 * (no session cookie configured, or nothing to say about set_cookie).
 * An adapter that sees 1 and never -1 binds tokens to a cookie the
 * application does not use, and may say so once. */
int csrf_session_cookie_unseen(const csrf_ctx *ctx, const csrf_request *req, const char *set_cookie, size_t len,
                               csrf_slice *name);

/* ------------------------------------------------------------------ */
/* Parsers                                                             */
/* ------------------------------------------------------------------ */

/* Finds cookie name in a Cookie header value ("a=1; b=2"). The value slice
 * points into header, without surrounding double quotes. The first match
 * wins. CSRF_OK, CSRF_NOT_FOUND (also for a name over 256 bytes, which no
 * cookie can match), CSRF_MALFORMED, CSRF_TOO_LARGE (header over 16 KiB),
 * CSRF_ERR_ARG (an empty name). */
CSRF_MUST_CHECK csrf_reason csrf_cookie_get(const char *header, size_t len, const char *name, size_t name_len,
                                            csrf_slice *value);

/* Finds a field in an application/x-www-form-urlencoded body. The value
 * slice is raw (still percent-encoded) and points into body; a name is
 * compared after percent-decoding. CSRF_OK, CSRF_NOT_FOUND, CSRF_MALFORMED
 * (bad %-escape in a name). */
CSRF_MUST_CHECK csrf_reason csrf_form_get(const char *body, size_t len, const char *name, size_t name_len,
                                          csrf_slice *value);

/* Percent-decodes (and '+' to space) a urlencoded value into out.
 * CSRF_MALFORMED on a bad escape, CSRF_ERR_BUFFER when cap is short
 * (cap >= len + 1 always suffices). NUL-terminates; *out_len excludes it. */
CSRF_MUST_CHECK csrf_reason csrf_form_decode(const char *in, size_t len, char *out, size_t cap, size_t *out_len);

/* Finds a field in a multipart/form-data body; content_type is the whole
 * header value with its boundary parameter. The value slice points into
 * body. Parts with a filename are skipped. CSRF_OK, CSRF_NOT_FOUND,
 * CSRF_MALFORMED (no boundary, truncated part, bad headers). */
CSRF_MUST_CHECK csrf_reason csrf_multipart_get(const char *content_type, size_t ct_len, const char *body, size_t len,
                                               const char *name, size_t name_len, csrf_slice *value);

/* Looks a field up in a body by its Content-Type (urlencoded or
 * multipart; anything else is CSRF_NOT_FOUND). The value is decoded into
 * out (NUL-terminated). */
CSRF_MUST_CHECK csrf_reason csrf_body_field(const char *content_type, size_t ct_len, const char *body, size_t len,
                                            const char *name, size_t name_len, char *out, size_t cap, size_t *out_len);

/* An origin: scheme and host lower-cased into the struct, port explicit
 * (the scheme's default when absent). */
typedef struct {
	char scheme[8]; /* "http" or "https" */
	char host[256]; /* lower case; IPv6 literals keep their brackets */
	uint16_t port;
} csrf_origin;

/* Parses a serialized origin ("https://a.example:8443"): a scheme of http
 * or https, a host, an optional port, nothing else (a trailing "/" is
 * malformed too). "null" is CSRF_MALFORMED. */
CSRF_MUST_CHECK csrf_reason csrf_origin_parse(const char *s, size_t len, csrf_origin *out);

/* The origin of an absolute http(s) URL such as a Referer: userinfo is
 * malformed, path, query and fragment are ignored. */
CSRF_MUST_CHECK csrf_reason csrf_url_origin(const char *url, size_t len, csrf_origin *out);

/* 1 when scheme, host and port are equal. */
int csrf_origin_equal(const csrf_origin *a, const csrf_origin *b);

/* Set-Cookie building. */
typedef enum { CSRF_SAMESITE_LAX = 0, CSRF_SAMESITE_STRICT = 1, CSRF_SAMESITE_NONE = 2 } csrf_samesite;
typedef struct {
	int secure;      /* HTTPS: adds Secure and, with host_prefix, "__Host-" */
	int host_prefix; /* prefix the name with "__Host-" (needs secure) */
	int http_only;
	csrf_samesite same_site;
	int64_t max_age;  /* seconds; 0: a session cookie; < 0: expire now */
	const char *path; /* NULL: "/" (required "/" with __Host-) */
} csrf_cookie_opts;

/* Writes a Set-Cookie header value ("name=value; Path=/; ...") into out,
 * NUL-terminated. Name and value are validated (RFC 6265 token and
 * cookie-octets): CSRF_MALFORMED otherwise. */
CSRF_MUST_CHECK csrf_reason csrf_set_cookie_build(const char *name, const char *value, size_t value_len,
                                                  const csrf_cookie_opts *opts, char *out, size_t cap, size_t *out_len);

/* ------------------------------------------------------------------ */
/* HTML escaping                                                       */
/* ------------------------------------------------------------------ */

/* Escapes text for an HTML text node (& < > " ') into out, NUL-terminated.
 * Invalid UTF-8 is replaced by U+FFFD. cap >= 6 * len + 1 always
 * suffices. */
CSRF_MUST_CHECK csrf_reason csrf_html_escape(const char *in, size_t len, char *out, size_t cap, size_t *out_len);
/* The same for a double-quoted attribute value; also escapes `, =, DEL and
 * the C0 controls other than tab, LF and CR as numeric references. cap >=
 * 6 * len + 1. */
CSRF_MUST_CHECK csrf_reason csrf_html_escape_attr(const char *in, size_t len, char *out, size_t cap, size_t *out_len);

/* ------------------------------------------------------------------ */
/* Streaming HTML injection                                            */
/* ------------------------------------------------------------------ */

/* Adds <input type="hidden" name=FIELD value=TOKEN> right after the start
 * tag of every form whose method is POST, whose action is same-origin
 * (relative, or absolute with the self origin) and whose fields no submit
 * button sends by GET or to another origin, and
 * <meta name="csrf-param" content=FIELD><meta name="csrf-token"
 * content=TOKEN> right after the first <head> start tag, as a response
 * streams through in chunks of any size. Input is passed through
 * unchanged and in order; the state is bounded (csrf_inject_size() <=
 * CSRF_INJECT_STATE_MAX bytes, no allocation) whatever the response size.
 * The bytes of such a form, from the end of its start tag to its end
 * tag, are held back (at most CSRF_INJECT_HOLD_MAX of them, inside that
 * state) until every submitter inside it has been read; the rest of the
 * page streams.
 *
 * The page is read the way a browser builds it, so that the token never
 * goes into a form the browser gives another owner:
 * - the HTML5 tokenizer's states (comments, quoted and unquoted
 *   attributes, raw text of script, style, textarea, title, xmp, iframe,
 *   noembed, noframes, noscript, plaintext; CDATA in foreign content);
 * - the form element pointer: a <form> while another is open is dropped
 *   by the browser (its fields go to the open form), so it gets no token;
 *   </form> closes the pointer even out of scope;
 * - svg and math: <form>, <style>, <script> inside them are not HTML
 *   until a breakout tag (<p>, <div>, ...) ends foreign content;
 *   integration points (foreignObject, desc, title, mi, annotation-xml)
 *   are followed as far as void elements and nested svg/math;
 * - template contents (no pointer: forms there get no token), select
 *   (whose content older and newer browsers parse differently), noscript
 *   (raw text with scripting on; its content is also read as markup, as
 *   a browser with scripting off reads it, where a form, template or
 *   select end tag would move the form element pointer, or a table tag
 *   the table modes around it, or a table left open in it: a stop);
 * - attribute values are decoded as the browser decodes them (numeric
 *   character references, and every named one that expands to ASCII:
 *   action="index.php&#x3F;route&#x3D;&#x2F;x" is a relative URL);
 * - the first <base href> the browser honours: a relative action gets the
 *   token only while no base points to another origin;
 * - the table modes: a <form> start tag inside a table but outside a
 *   cell or caption (<table><form>, <tr><form>) is inserted and popped at
 *   once by the browser, so nothing becomes its child; such a form gets no
 *   token (CSRF_INJECT_TABLE_FORM; see Submitters). A form inside a
 *   <td>, <th> or <caption>, or one around a whole table, keeps its own.
 * Where the injector cannot be sure what the browser builds, it adds no
 * token to that form, or to any later one, and says why in
 * csrf_inject_status (adapters log it once per response).
 *
 * Submitters: a form is judged by every submit button (<button>, <input
 * type=submit|image>) that can send it. The decision is made at the
 * form's end tag, with every button inside it read, but the field goes
 * right after the start tag, where the browser makes it a child of the
 * form: wherever the tree builder later moves the form the field moves
 * with it, and its nearest ancestor form stays that form (a field written
 * where the form ends can be handed to another form that markup before
 * it left open). The field is owned by its form only because it is a
 * descendant of it: where the browser would not make it one (a form
 * start tag a table holds outside a cell, which the browser pops at once
 * and whose fields then belong to it only through the form element
 * pointer, until the adoption agency or foster parenting moves them to a
 * form left open earlier: CSRF_INJECT_TABLE_FORM), and where the injector
 * cannot tell, the form gets no token. Tables nested more than 32 deep
 * stop the injector (CSRF_INJECT_TABLE_FORM and CSRF_INJECT_STOPPED).
 * Browsers put an element that would sit more than about 510 deep
 * beside its parent, where a field is owned by its nearest ancestor
 * form. So a form read where the depth may come near that (start tags
 * so far + 2 x tables + 3 >= 480) gets, when it gets the token and has
 * no id, an id of the injector's right after "<form" (id="csrf-" and
 * 16 random characters, for each form) and its field form="" naming it.
 * One with an id of its own gets the token as usual, unless a form
 * without the token was closed before it (which may stay an ancestor and
 * own the field): then its field gets form="" naming the form's own id,
 * which must be 1 to 64 bytes of [A-Za-z0-9_.:-] and no earlier form's
 * (every earlier form's id must be such, and at most 32 of them), the
 * form outside tables; where it cannot, the form gets no token
 * (CSRF_INJECT_DEEP).
 * No token goes into a form whose fields could leave by GET or to
 * another origin: a GET form (also one with a formmethod=post button: its
 * own submission is a GET), a POST form with a button whose formmethod
 * is not post or dialog (CSRF_INJECT_GET_BUTTON) or whose formaction
 * leads elsewhere (CSRF_INJECT_FORMACTION), one with a button inside
 * <noscript> that has a formmethod or formaction
 * (CSRF_INJECT_NOSCRIPT_BUTTON: a browser without scripting builds it),
 * a form never closed (CSRF_INJECT_UNCLOSED), a form longer than the
 * hold (CSRF_INJECT_LONG_FORM: judged by its bytes up to whatever settles
 * it, its end tag, a button or a stop, so the status is the same however
 * the stream is cut). Their POST buttons then pass on origin
 * evidence or fail with CSRF_TOKEN_MISSING. A button with a form=""
 * attribute sends the form with that id wherever it stands; no ids are
 * kept: one that sends by GET or elsewhere takes the token from an open
 * form with an id and from every later form with an id
 * (CSRF_INJECT_FORM_OWNER); after a form with an id got the token it
 * cannot be undone by a stream and is reported (CSRF_INJECT_LATE_OWNER;
 * the browser-side backstop for another origin is the form-action
 * directive, csrf_csp_form_action). So is any button after a form got the
 * token that sends by GET or elsewhere (CSRF_INJECT_LATE_BUTTON): an
 * element left open inside that form, or the tree builder moving the
 * button (the adoption agency), can make it the form's. A <base> to another origin after a form with a
 * relative action got the token (CSRF_INJECT_LATE_BASE) likewise, with
 * base-uri; and so is one after a submit button with a relative
 * formaction that may be such a form's: any after a form got the token
 * (as above), a form="" one that may name a form with an id (before the
 * form's end tag it takes the token from it: CSRF_INJECT_BASE, or
 * CSRF_INJECT_FORM_OWNER when the base came before the form).
 *
 * Charset: call csrf_charset_sniff first and inject only when it says so.
 * An ESC byte anywhere stops injection from that byte on (a browser that
 * guesses the charset may read ISO-2022-JP). A compressed stream must be
 * decompressed first. */
#define CSRF_INJECT_HOLD_MAX 32768
#define CSRF_INJECT_STATE_MAX (4608 + CSRF_INJECT_HOLD_MAX)
typedef struct csrf_inject csrf_inject;

/* Called for every piece of output, in order: pieces of the input
 * (pointing into the chunk given to csrf_inject_feed, or, for a form's
 * held bytes, into the injector) and inserted elements (inserted = 1,
 * pointing into the injector). A piece is valid until emit returns: copy
 * what is kept. A non-zero return stops the feed with that value. */
typedef int (*csrf_emit_fn)(void *ud, const char *p, size_t n, int inserted);

/* Bytes of caller memory an injector needs (suitably aligned memory, e.g.
 * from malloc or an nginx pool). */
size_t csrf_inject_size(void);

/* Initialises an injector in mem (csrf_inject_size() bytes). self_origin
 * is the site's origin for judging absolute actions; field and token are
 * copied and must be attribute-safe ([A-Za-z0-9_-]). */
CSRF_MUST_CHECK csrf_reason csrf_inject_init(void *mem, size_t mem_len, const char *self_origin, size_t origin_len,
                                             const char *field, size_t field_len, const char *token, size_t token_len,
                                             csrf_inject **out);

/* Options of an injector, an OR of CSRF_INJECT_OPT_* bits; none by
 * default. Set after csrf_inject_init, before the first feed; they last
 * through csrf_inject_reset and csrf_inject_finish. CSRF_OK, or
 * CSRF_ERR_ARG (NULL, an unknown bit, or a stream already fed). */
/* After every <meta name="referrer"> whose content browsers read as
 * no-referrer (csrf_referrer_policy_parse's rules plus HTML's legacy
 * keywords: "never" is no-referrer), add <meta name="referrer"
 * content="same-origin">: a later meta overrides an earlier one, so the
 * page's forms send its Origin (see csrf_referrer_policy). The raise
 * goes right after the meta's start tag, in the same parent (a meta in a
 * template, or one a browser drops, has the same fate as the page's),
 * except inside a form whose bytes are held: there it goes after the
 * held bytes, still inside that form, when they leave. Counts as an
 * insertion. A meta an application's script adds is not seen. */
#define CSRF_INJECT_OPT_RAISE_REFERRER 0x1u
CSRF_MUST_CHECK csrf_reason csrf_inject_options(csrf_inject *inj, unsigned options);

/* Feeds the next chunk. Returns CSRF_OK, or CSRF_ERR_STOPPED when emit
 * returned non-zero (the caller stopped the stream: every later feed
 * answers the same until csrf_inject_reset). */
CSRF_MUST_CHECK csrf_reason csrf_inject_feed(csrf_inject *inj, const char *chunk, size_t len, csrf_emit_fn emit,
                                             void *ud);

/* Why forms went without a token, or the injector stopped, in this
 * stream: an OR of CSRF_INJECT_* bits, each once, whatever the count.
 * After csrf_inject_reset, those of the stream it ended (until the next
 * feed). NULL gives 0. */
#define CSRF_INJECT_NESTED_FORM 0x0001u /* a POST form inside an open form: no token */
#define CSRF_INJECT_FOREIGN 0x0002u     /* svg/math markup not followed: stopped */
#define CSRF_INJECT_TEMPLATE 0x0004u    /* a POST form inside <template>: no token */
#define CSRF_INJECT_SELECT 0x0008u      /* markup inside <select> parsed differently: stopped */
#define CSRF_INJECT_NOSCRIPT 0x0010u    /* <noscript> content parsed differently without scripting: stopped */
#define CSRF_INJECT_BASE 0x0020u        /* a relative POST form with a <base> to another origin: no token */
#define CSRF_INJECT_LATE_BASE 0x0040u   /* a relative form got the token, then a <base> elsewhere (or a stop) */
#define CSRF_INJECT_FORMACTION 0x0080u  /* a POST form with a button whose formaction leads elsewhere: no token */
#define CSRF_INJECT_ESCAPE 0x0100u      /* an ESC byte: stopped */
#define CSRF_INJECT_STOPPED 0x0200u     /* no token in any later form of this stream */
#define CSRF_INJECT_GET_BUTTON 0x0400u  /* a POST form with a button that sends it by GET: no token */
#define CSRF_INJECT_FORM_OWNER 0x0800u  /* a form with an id a form="" button may send by GET/elsewhere: no token */
#define CSRF_INJECT_LATE_OWNER 0x1000u  /* such a form="" button after a form with an id got the token (or a stop) */
#define CSRF_INJECT_UNCLOSED 0x2000u    /* a POST form still open at the end of the stream: no token */
#define CSRF_INJECT_LONG_FORM 0x4000u   /* a POST form longer than CSRF_INJECT_HOLD_MAX bytes: no token */
#define CSRF_INJECT_LATE_BUTTON 0x8000u /* a GET/elsewhere button after a form got the token (or a stop) */
#define CSRF_INJECT_NOSCRIPT_BUTTON 0x10000u /* a button with formmethod/formaction in <noscript>: no token */
#define CSRF_INJECT_TABLE_FORM 0x20000u      /* a POST form started in a table outside a cell: no token */
#define CSRF_INJECT_FRAMESET 0x40000u        /* a <frameset> the browser may take: stopped */
#define CSRF_INJECT_DEEP 0x80000u            /* a form deep in the tree whose field could not be pinned: no token */
unsigned csrf_inject_status(const csrf_inject *inj);

/* A short English phrase for one CSRF_INJECT_* bit; never NULL, static.
 * Every bit's phrase, each followed by "; ", fits in
 * CSRF_INJECT_STATUS_TEXT_MAX bytes (for an adapter's log line). */
#define CSRF_INJECT_STATUS_TEXT_MAX 3072
const char *csrf_inject_status_str(unsigned reason);

/* Ends a stream: emits what the injector still holds (a form whose end
 * tag never came, without the field: CSRF_INJECT_UNCLOSED), then resets
 * as csrf_inject_reset does. Every stream ends here; *injected is the
 * number of insertions it got: one per hidden input, one for the pair
 * of meta tags, one per referrer meta raised, and one per id the
 * injector gave a form (see the tree depth above). CSRF_OK, CSRF_ERR_STOPPED (emit returned non-zero, now or
 * in an earlier feed: the output is incomplete), CSRF_ERR_ARG. */
CSRF_MUST_CHECK csrf_reason csrf_inject_finish(csrf_inject *inj, csrf_emit_fn emit, void *ud, unsigned *injected);

/* Resets the injector without ending its stream's output: bytes it holds
 * are dropped (for a stream abandoned; to end one, csrf_inject_finish).
 * *injected as csrf_inject_finish says. The injector is then ready for a
 * new stream with the same field, token and origin. */
CSRF_MUST_CHECK csrf_reason csrf_inject_reset(csrf_inject *inj, unsigned *injected);

/* ------------------------------------------------------------------ */
/* Referrer policy: keeping the Origin of a page's own forms           */
/* ------------------------------------------------------------------ */

/* A page whose referrer policy is no-referrer (phpMyAdmin's, in its
 * Referrer-Policy header and in a <meta name="referrer">) makes the
 * browser send "Origin: null" with its form POSTs, also to itself
 * (Fetch, "append a request Origin header"); the other policies keep a
 * same-origin POST's Origin (strict-origin, no-referrer-when-downgrade
 * and strict-origin-when-cross-origin drop it only from HTTPS to HTTP,
 * same-origin only across origins, XHR and fetch() in cors mode never).
 * Where no Sec-Fetch-Site comes (plain HTTP under a name), nothing then
 * speaks for the page's forms but a token, which forms an application's
 * scripts build or fetch as JSON do not carry. An adapter may raise such
 * a policy to same-origin (opt-in): the browser then sends the site's
 * own Origin with them, and still nothing of the page's URL to any other
 * origin, so the application's privacy toward other sites is kept; only
 * its own origin gets the Referer. */
typedef enum {
	CSRF_REFERRER_UNSET = 0, /* no policy recognized: the one before it, or the browser's default */
	CSRF_REFERRER_NO_REFERRER = 1,
	CSRF_REFERRER_NO_REFERRER_WHEN_DOWNGRADE = 2,
	CSRF_REFERRER_SAME_ORIGIN = 3,
	CSRF_REFERRER_ORIGIN = 4,
	CSRF_REFERRER_STRICT_ORIGIN = 5,
	CSRF_REFERRER_ORIGIN_WHEN_CROSS_ORIGIN = 6,
	CSRF_REFERRER_STRICT_ORIGIN_WHEN_CROSS_ORIGIN = 7,
	CSRF_REFERRER_UNSAFE_URL = 8
} csrf_referrer_policy;

/* The policy the raise writes: the header value, and the content of the
 * <meta name="referrer"> the injector adds. */
#define CSRF_REFERRER_RAISED "same-origin"

/* The policy of one Referrer-Policy header line (value, len; no NUL
 * needed), as browsers read it: tokens separated by commas, whitespace
 * around each ignored, ASCII case ignored (Chromium and Firefox; the
 * spec's list is lower case), tokens that name no policy (misspelt,
 * quoted, empty, a <meta>-only legacy keyword such as "never") skipped,
 * and the last policy named wins. Returns prev when the line names none,
 * so that several lines fold: start with CSRF_REFERRER_UNSET and pass
 * each line's answer to the next (the browser reads them as one list).
 * NULL reads as empty. Allocates nothing; any length. */
csrf_referrer_policy csrf_referrer_policy_parse(const char *value, size_t len, csrf_referrer_policy prev);

/* 1 when one Referrer-Policy value makes the page's own form POSTs say
 * "Origin: null" (its policy is no-referrer), 0 otherwise: the value an
 * adapter would replace by CSRF_REFERRER_RAISED. For several header
 * lines, fold them with csrf_referrer_policy_parse and compare with
 * CSRF_REFERRER_NO_REFERRER. */
int csrf_referrer_raises(const char *value, size_t len);

/* Which Referrer-Policy lines of a response an adapter raises (its
 * opt-in; the nginx module's csrf_referrer_same_origin): given the
 * response's n headers, sets raise[i] to 1 for every Referrer-Policy
 * line (name in any case) when the lines together, read as one list as
 * csrf_referrer_policy_parse folds them, make no-referrer, and to 0 for
 * every other header and in every other case. The adapter gives each
 * line marked the value CSRF_REFERRER_RAISED, so the policy is
 * same-origin whichever line a browser reads last. CSRF_OK, or
 * CSRF_ERR_ARG (headers or raise NULL with n > 0, a NULL pointer with a
 * length; raise untouched). */
CSRF_MUST_CHECK csrf_reason csrf_response_referrer(const csrf_header *headers, size_t n, unsigned char *raise);

/* ------------------------------------------------------------------ */
/* Charset and Content-Security-Policy for injected responses          */
/* ------------------------------------------------------------------ */

/* The bytes a browser looks at for <meta charset> before it decides. */
#define CSRF_CHARSET_PRESCAN_MAX 1024

typedef enum {
	CSRF_CHARSET_INJECT = 0, /* ASCII-compatible: feed the injector */
	CSRF_CHARSET_PASS = 1,   /* pass the response through untouched */
	CSRF_CHARSET_MORE = 2    /* call again with more of the body */
} csrf_charset_verdict;

typedef struct {
	csrf_charset_verdict verdict;
	const char *encoding; /* "UTF-8", "windows-1252", "ISO-2022-JP", ...; NULL: unknown label or none */
	const char *source;   /* "byte order mark", "Content-Type", "meta" or "default"; NULL with MORE */
} csrf_charset;

/* Says whether the injector may read a response, from its Content-Type
 * value (NULL: none) and the first bytes of its body, as the browser
 * decides the encoding: a byte order mark first (UTF-8: inject; UTF-16:
 * pass), then the Content-Type charset parameter, then a <meta charset>
 * or <meta http-equiv=Content-Type content="...; charset=..."> found by
 * the HTML prescan of the first CSRF_CHARSET_PRESCAN_MAX bytes, else the
 * browser's guess (inject: the ASCII-incompatible guess, ISO-2022-JP,
 * needs ESC bytes, and csrf_inject_feed stops at the first ESC).
 * Inject: UTF-8, the ISO-8859 family, windows-125x, KOI8, IBM866,
 * macintosh, US-ASCII and their WHATWG labels. Pass: ISO-2022-*, UTF-16,
 * the CJK multi-byte encodings (their second bytes include ASCII), the
 * replacement encodings, any label the Encoding Standard does not know
 * (UTF-7, UTF-32, typos), and two different charset parameters.
 * A streaming adapter holds the body back (at most
 * CSRF_CHARSET_PRESCAN_MAX bytes, copied in one bounded buffer) while the
 * verdict is MORE, calling again as bytes arrive, and with complete = 1
 * at the end of the body; MORE never comes once body_len reaches
 * CSRF_CHARSET_PRESCAN_MAX or complete is set. With a Content-Type
 * charset the first 3 bytes (a BOM or not) decide; without, the prescan
 * may need all 1024. */
CSRF_MUST_CHECK csrf_reason csrf_charset_sniff(const char *content_type, size_t ct_len, const char *body,
                                               size_t body_len, int complete, csrf_charset *out);

/* The Content-Security-Policy header value an adapter sends with an
 * injected HTML response, as the browser-side backstop of the injector:
 * "form-action 'self' ORIGIN...; base-uri 'self'" (forms post only to
 * this origin and the trusted ones, whatever markup an attacker placed;
 * no <base> moves relative URLs). existing is the upstream's CSP value
 * (NULL or blank: none): the result is "EXISTING, OURS", two policies in
 * one value, which the browser enforces both of, so an upstream
 * form-action cannot loosen ours and ours does not loosen the upstream's.
 * trusted are full origins ("https://app.example:8443"), serialized
 * canonically. Writes NUL-terminated into out; *out_len is the length
 * (on CSRF_ERR_BUFFER: the cap needed, NUL included). CSRF_MALFORMED: an
 * existing value with a control character, or a trusted origin that does
 * not parse. */
CSRF_MUST_CHECK csrf_reason csrf_csp_form_action(const char *existing, size_t existing_len, const csrf_slice *trusted,
                                                 size_t n_trusted, char *out, size_t cap, size_t *out_len);

/* ------------------------------------------------------------------ */
/* Decisions every adapter shares                                      */
/* ------------------------------------------------------------------ */

/* The mode the adapters (the nginx module, csrf-cgi, the demo) start in
 * when the configuration names none: origin evidence, else a token. The
 * library's own default stays CSRF_MODE_BOTH (csrf_ctx_new): a program
 * that calls csrf_check itself can put the token into every request it
 * makes, while an adapter in front of an unchanged application cannot
 * put one into its scripts' requests (docs/architecture.md). */
#define CSRF_MODE_ADAPTER_DEFAULT CSRF_MODE_ORIGIN_OR_TOKEN

/* 1 when pages answered under ctx need tokens: every mode but
 * CSRF_MODE_ORIGIN. An adapter injects only then. */
int csrf_ctx_injects(const csrf_ctx *ctx);

/* The HTTP status a rejection for reason is answered with: 413 for
 * CSRF_BODY_TOO_LARGE, 500 for an error of the API or the environment
 * (codes 64 and up), else deny_status (the adapter's configured status,
 * 400..599; anything else gives 403). 0 for a code that allows. */
unsigned csrf_reason_http_status(csrf_reason reason, unsigned deny_status);

/* The form-action policy (csrf_csp_form_action) on injected pages, with
 * the context's own trusted origins: merged by csrf_response_headers into
 * the upstream's first Content-Security-Policy header, or a header of its
 * own. Off by default in the library and in every adapter: an upstream
 * that posts to a third origin on purpose (a payment provider) would
 * break. */
void csrf_ctx_set_form_action_csp(csrf_ctx *ctx, int on);

/* Pages csrf_response_headers injects also get a same-origin referrer
 * meta after every meta that says no-referrer
 * (CSRF_INJECT_OPT_RAISE_REFERRER). Off by default. The adapter raises
 * the Referrer-Policy header lines itself, on every response
 * (csrf_response_referrer), not only on injected pages. */
void csrf_ctx_set_referrer_same_origin(csrf_ctx *ctx, int on);

/* A rejection's answer, complete: status, the headers, the page. With
 * the context's retry token on (csrf_ctx_set_retry_token) and a stale
 * token, the page carries a fresh token (its csrf-token meta) and
 * headers list X-CSRF-Token (CSRF_HEADER_NAME) with it, and its secret
 * cookie when a new one is needed (csrf_retry_prepare decides when that
 * is safe). Holds a token: csrf_reject_answer_wipe it. Headers:
 * Content-Type, Content-Security-Policy CSRF_REJECT_PAGE_CSP,
 * Cache-Control CSRF_REJECT_PAGE_CACHE_CONTROL, then the retry ones; the
 * adapter adds Content-Length. */
#define CSRF_REJECT_ANSWER_HEADERS_MAX 5
typedef struct {
	unsigned status;
	csrf_header headers[CSRF_REJECT_ANSWER_HEADERS_MAX];
	size_t n_headers;
	int retry; /* 1 when a fresh token is offered */
	char body[CSRF_REJECT_PAGE_MAX + 2 * (CSRF_FIELD_NAME_MAX + CSRF_TOKEN_LEN) + 128];
	size_t body_len;
	csrf_page page; /* the retry token and cookie the headers point into */
} csrf_reject_answer_t;

/* Fills out for a rejection of req (NULL: no retry) with reason;
 * deny_status as csrf_reason_http_status. CSRF_OK, CSRF_ERR_ARG. */
CSRF_MUST_CHECK csrf_reason csrf_reject_answer(const csrf_ctx *ctx, const csrf_request *req, csrf_reason reason,
                                               unsigned deny_status, csrf_reject_answer_t *out);
void csrf_reject_answer_wipe(csrf_reject_answer_t *answer);

/* ------------------------------------------------------------------ */
/* The response exchange                                               */
/* ------------------------------------------------------------------ */

/* The response half of the protocol, as csrf_request_header and
 * csrf_check are the request half: the adapter hands over slices, the
 * library decides. One response:
 *
 *   1. csrf_response_begin(ctx, method, status, Content-Type,
 *      Content-Encoding): PASS (send the response untouched; nothing to
 *      allocate), COMPRESSED (the same, but worth a log line: an HTML page
 *      that came compressed gets no tokens), or INJECT.
 *   2. INJECT: csrf_response_size() bytes of memory (aligned as malloc's),
 *      csrf_response_init. Hold the response's header.
 *   3. csrf_response_hold with the body's first chunks until it says
 *      INJECT or PASS (never more than CSRF_CHARSET_PRESCAN_MAX bytes are
 *      held, in the state; *used tells how much of each chunk it took).
 *   4. INJECT: csrf_response_headers judges every upstream header (keep,
 *      drop, replace), hands the Set-Cookie values to req, prepares the
 *      page and lists the headers to add. When it fails (or on PASS) the
 *      response goes out untouched: the held bytes, csrf_response_held,
 *      then the rest.
 *   5. csrf_response_feed the held bytes, then every chunk; emit gets the
 *      output. csrf_response_end at the end of the body (it ends every
 *      stream: a held form goes out).
 *   6. csrf_response_log: one line of text when something is worth a
 *      warning (the charset, a page that could not be prepared, forms
 *      without a token), "" otherwise; never a token or a cookie.
 *
 * The state is bounded (csrf_response_size() <= CSRF_RESPONSE_STATE_MAX,
 * the injector inside), nothing is allocated. */
#define CSRF_RESPONSE_STATE_MAX (CSRF_INJECT_STATE_MAX + 12288)
#define CSRF_RESPONSE_ADD_MAX 4    /* headers csrf_response_headers adds */
#define CSRF_RESPONSE_CSP_MAX 4096 /* a merged policy longer goes apart */
#define CSRF_RESPONSE_LOG_MAX (CSRF_INJECT_STATUS_TEXT_MAX + 256)
typedef struct csrf_response csrf_response;

typedef enum { CSRF_RESPONSE_PASS = 0, CSRF_RESPONSE_INJECT = 1, CSRF_RESPONSE_COMPRESSED = 2 } csrf_response_verdict;

/* What one upstream header becomes (csrf_response_headers). */
#define CSRF_HEADER_KEEP 0
#define CSRF_HEADER_DROP 1
#define CSRF_HEADER_REPLACE 2

/* Step 1. method as the request sent it (a HEAD answer has no body, and
 * so no token and no cookie); NULL pointers are absent values. */
csrf_response_verdict csrf_response_begin(const csrf_ctx *ctx, const char *method, size_t method_len, unsigned status,
                                          const char *content_type, size_t ct_len, const char *content_encoding,
                                          size_t ce_len);

size_t csrf_response_size(void);

/* Step 2. The Content-Type value is copied (one longer than 512 bytes
 * makes the response pass). CSRF_OK, CSRF_ERR_ARG. */
CSRF_MUST_CHECK csrf_reason csrf_response_init(void *mem, size_t mem_len, const csrf_ctx *ctx, const char *content_type,
                                               size_t ct_len, csrf_response **out);

/* Step 3. complete: the body ends with this chunk. CSRF_CHARSET_MORE (all
 * of it taken), CSRF_CHARSET_INJECT or CSRF_CHARSET_PASS (*used bytes
 * taken, the rest still the adapter's). */
csrf_charset_verdict csrf_response_hold(csrf_response *resp, const char *chunk, size_t len, int complete, size_t *used);

/* The bytes hold took, in the state. */
csrf_slice csrf_response_held(const csrf_response *resp);

/* Step 4. headers: the upstream's n response headers; action[i] gets
 * CSRF_HEADER_KEEP, _DROP or _REPLACE (then value[i] is the new value,
 * in the state); add (CSRF_RESPONSE_ADD_MAX entries) the *n_add headers
 * to add, their values in the state. req is the request the response
 * answers; the response's Set-Cookie values go into it
 * (csrf_response_cookie). CSRF_OK: inject. Anything else: the page could
 * not be prepared, the response passes (every action KEEP, nothing to
 * add) and csrf_response_log says why. */
CSRF_MUST_CHECK csrf_reason csrf_response_headers(csrf_response *resp, csrf_request *req, const csrf_header *headers,
                                                  size_t n, unsigned char *action, csrf_slice *value, csrf_header *add,
                                                  size_t *n_add);

/* Step 5, as csrf_inject_feed and csrf_inject_finish; end wipes the
 * token. *status: the CSRF_INJECT_* bits (NULL: not wanted). */
CSRF_MUST_CHECK csrf_reason csrf_response_feed(csrf_response *resp, const char *chunk, size_t len, csrf_emit_fn emit,
                                               void *ud);
CSRF_MUST_CHECK csrf_reason csrf_response_end(csrf_response *resp, csrf_emit_fn emit, void *ud, unsigned *status);

/* Step 6. Writes the log text NUL-terminated into out (at most cap
 * bytes; CSRF_RESPONSE_LOG_MAX always suffices); its length, 0 when
 * there is nothing to say. */
size_t csrf_response_log(const csrf_response *resp, char *out, size_t cap);

/* Wipes the token a response holds (csrf_response_end does). */
void csrf_response_wipe(csrf_response *resp);

/* ------------------------------------------------------------------ */
/* Counters and their Prometheus text                                  */
/* ------------------------------------------------------------------ */

/* Counters an adapter keeps of what the library decided, for an
 * operator who rolls the defence out in report-only mode and watches
 * what it would reject: requests by verdict and reason, and what the
 * injector did with HTML pages. A csrf_metrics is plain data of a fixed
 * size: only uint64_t fields, no pointers, so it may live in memory that
 * several processes map at different addresses (an nginx shared memory
 * zone) or in a file (csrf-cgi's counters file), and a copy means the
 * same everywhere on one machine. Its size is bounded whatever the
 * traffic. Start one with csrf_metrics_init; keep one found in a zone or
 * a file only when csrf_metrics_valid says it has this layout.
 *
 * The counting calls are lock-free: a relaxed atomic add of 1 (or n) per
 * counter, where the target has 64-bit atomics (every 64-bit target,
 * ARMv7, i686). On a target without them (32-bit MIPS) they are plain
 * adds, and the caller serialises them (csrf-cgi counts under a file
 * lock). Rendering reads every counter atomically where it can, while
 * others count. */
#define CSRF_METRICS_MAGIC UINT64_C(0x637372666d657401) /* "csrfmet", layout 1 */
#define CSRF_METRICS_REASONS 96                         /* reason codes counted by value */
#define CSRF_METRICS_STATUS_BITS 32                     /* CSRF_INJECT_* bits counted one by one */
#define CSRF_METRICS_PASS_CAUSES 4

/* How a request was judged: allowed; allowed by report-only although the
 * checks rejected it (csrf_result.report_only); rejected. */
typedef enum { CSRF_METRICS_ALLOWED = 0, CSRF_METRICS_REPORT_ONLY = 1, CSRF_METRICS_REJECTED = 2 } csrf_metrics_verdict;
#define CSRF_METRICS_VERDICTS 3

/* Why an HTML page went out without tokens, untouched: its charset is not
 * one the injector reads (csrf_charset_sniff said PASS), it arrived
 * compressed, or the page could not be prepared (csrf_response_headers
 * failed: its forms will be rejected). */
typedef enum {
	CSRF_METRICS_PASS_CHARSET = 0,
	CSRF_METRICS_PASS_ENCODING = 1,
	CSRF_METRICS_PASS_ERROR = 2
} csrf_metrics_pass;

typedef struct {
	uint64_t magic;      /* CSRF_METRICS_MAGIC */
	uint64_t start_time; /* unix seconds of csrf_metrics_init */
	/* [verdict][reason code]; the last column: codes >= CSRF_METRICS_REASONS */
	uint64_t requests[CSRF_METRICS_VERDICTS][CSRF_METRICS_REASONS + 1];
	uint64_t inject_pages;                              /* pages streamed through the injector */
	uint64_t inject_insertions;                         /* hidden fields and meta pairs inserted */
	uint64_t inject_withheld[CSRF_METRICS_STATUS_BITS]; /* pages per CSRF_INJECT_* bit (bit i: 1u << i) */
	uint64_t inject_passed[CSRF_METRICS_PASS_CAUSES];   /* pages passed untouched, per csrf_metrics_pass */
} csrf_metrics;

/* Zeroes m and stamps it with CSRF_METRICS_MAGIC and now (unix seconds;
 * 0: the current time). Not atomic: before anyone else counts into m. */
void csrf_metrics_init(csrf_metrics *m, int64_t now);

/* 1 when the len bytes at mem are a csrf_metrics of this layout (the size
 * and CSRF_METRICS_MAGIC), to keep counting into a zone or a file that
 * outlived the process; 0 otherwise (NULL, another size, another
 * version, never initialised): csrf_metrics_init it. */
int csrf_metrics_valid(const void *mem, size_t len);

/* Counts one request by its verdict and reason. A reason code at or over
 * CSRF_METRICS_REASONS counts as reason "unknown"; a verdict that is not
 * a csrf_metrics_verdict counts nothing. m NULL: nothing. */
void csrf_metrics_count(csrf_metrics *m, csrf_metrics_verdict verdict, csrf_reason reason);

/* Counts csrf_check's final answer: report_only set is
 * CSRF_METRICS_REPORT_ONLY, else allowed or rejected, with its reason.
 * An answer that asks for the body (needs_body) counts nothing: count the
 * answer of the call that follows. m or res NULL: nothing. */
void csrf_metrics_count_check(csrf_metrics *m, const csrf_result *res);

/* Counts one HTML page streamed through the injector, at its end:
 * injected is csrf_inject_finish's count, status csrf_inject_status's
 * bits (each bit counts the page once). */
void csrf_metrics_count_page(csrf_metrics *m, unsigned injected, unsigned status);

/* Counts one HTML page passed through untouched, for cause. */
void csrf_metrics_count_passed(csrf_metrics *m, csrf_metrics_pass cause);

/* Counts one response by the outcome of its exchange, the call every
 * adapter makes once the exchange is over for the response: verdict is
 * csrf_response_begin's; resp (NULL unless verdict is
 * CSRF_RESPONSE_INJECT) the state after csrf_response_end, or after
 * csrf_response_hold said PASS or csrf_response_headers failed.
 *   CSRF_RESPONSE_COMPRESSED            a page passed for its encoding
 *   INJECT, ended (csrf_response_end)   a page: its insertions and each
 *                                       CSRF_INJECT_* bit of its status
 *   INJECT, passed for its charset      a page passed for its charset
 *   INJECT, headers failed              a page passed for an error
 *   anything else (PASS, a response that stopped before its end, resp
 *   NULL with INJECT): nothing. m NULL: nothing. */
void csrf_metrics_count_response(csrf_metrics *m, csrf_response_verdict verdict, const csrf_response *resp);

/* Renders m in the Prometheus text exposition format (version 0.0.4;
 * serve it with Content-Type CSRF_METRICS_CONTENT_TYPE): every family
 * with its # HELP and # TYPE lines, then its samples.
 *   csrf_requests_total{verdict="...",reason="..."}   counter
 *     verdict "allowed", "report_only" or "rejected"; reason the stable
 *     name of csrf_reason_name ("cross_site"), "unknown" beyond the table.
 *     Always present, 0 until counted: allowed with each allowing reason,
 *     report_only and rejected with each rejection of a request (codes
 *     16..63). Other pairs (an error code) appear once counted.
 *   csrf_inject_pages_total                           counter
 *   csrf_inject_insertions_total                      counter
 *   csrf_inject_withheld_total{status="..."}          counter
 *     pages with that CSRF_INJECT_* bit, by its lower-case name without
 *     the prefix ("get_button", "long_form"); every defined bit, always.
 *   csrf_inject_passed_total{cause="charset"|"encoding"|"error"}   counter
 *   csrf_metrics_start_time_seconds                   gauge
 * Written into out NUL-terminated; *out_len (may be NULL) is its length,
 * or on CSRF_ERR_BUFFER the cap needed (NUL included) and out holds "".
 * CSRF_METRICS_TEXT_MAX always suffices. CSRF_OK, CSRF_ERR_BUFFER,
 * CSRF_ERR_ARG (m or out NULL, or m not valid). */
#define CSRF_METRICS_TEXT_MAX 32768
#define CSRF_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
CSRF_MUST_CHECK csrf_reason csrf_metrics_render(const csrf_metrics *m, char *out, size_t cap, size_t *out_len);

/* The same for n sets of counters (an adapter's zones: per location, per
 * site), each sample labelled zone="NAME" first, NAME escaped as the
 * format asks (a backslash, a double quote and a line feed): every family
 * once, its samples zone by zone. At most CSRF_METRICS_ZONES_MAX sets,
 * names of at most CSRF_METRICS_ZONE_NAME_MAX bytes, no name twice;
 * n * CSRF_METRICS_ZONE_TEXT_MAX bytes always suffice. CSRF_OK,
 * CSRF_ERR_BUFFER as above, CSRF_ERR_ARG (a NULL, n 0 or over the
 * maximum, a set not valid, a name too long or given twice). */
#define CSRF_METRICS_ZONE_TEXT_MAX 49152
#define CSRF_METRICS_ZONES_MAX 64
#define CSRF_METRICS_ZONE_NAME_MAX 64
CSRF_MUST_CHECK csrf_reason csrf_metrics_render_zones(const csrf_metrics *const *sets, const char *const *zones,
                                                      size_t n, char *out, size_t cap, size_t *out_len);

#ifdef CSRF_VISIBILITY_PUSHED
#pragma GCC visibility pop
#undef CSRF_VISIBILITY_PUSHED
#endif

#ifdef __cplusplus
}
#endif
#endif /* CSRF_H */
