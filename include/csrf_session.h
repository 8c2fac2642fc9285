/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * csrf_session.h - libcsrf's optional session part: stores (memory,
 * Redis, Redis Sentinel) and re-authentication with the account password
 * (step-up in a session, throttled logins; Argon2id from libsodium).
 *
 * The core (csrf.h, libcsrf) decides on requests, issues and verifies
 * tokens and injects them into pages; it needs libcrypto only. This part
 * is a library of its own, libcsrf-session, which links the core,
 * libsodium and hiredis: link it only where sessions are kept on the
 * server (pkg-config libcsrf-session; CMake find_package(libcsrf
 * COMPONENTS session), targets libcsrf::csrf_session and
 * libcsrf::csrf_session_static). The nginx module, csrf-cgi and csrf-key
 * never do. The conventions of csrf.h hold here too; the reasons these
 * calls answer (CSRF_STORE_UNAVAILABLE, CSRF_REAUTH_FAILED, ...) are
 * csrf.h's.
 */
#ifndef CSRF_SESSION_H
#define CSRF_SESSION_H

#include "csrf.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(CSRF_BUILDING) && (defined(__GNUC__) || defined(__clang__))
#pragma GCC visibility push(default)
#define CSRF_SESSION_VISIBILITY_PUSHED 1
#endif

#define CSRF_PWHASH_LEN 128 /* Argon2id hash string buffer, with NUL */

/* ------------------------------------------------------------------ */
/* Stores                                                              */
/* ------------------------------------------------------------------ */

typedef struct csrf_store csrf_store;

/* The store contract, the same for every backend.
 *
 * Security counters are the keys written by csrf_store_incr: the
 * re-authentication and login counters of this library are all counters.
 * A counter is never evicted to make room. It lives until its own TTL
 * ends or it is deleted, and stays a counter when csrf_store_set rewrites
 * it (as a lockout renewal does).
 *
 * A full store refuses a write that would need to evict a counter: the
 * call answers CSRF_STORE_FULL and nothing changes, so the new client
 * fails closed and the counters hold.
 *  - memory: full at max entries. A new key then evicts the plain entry
 *    (not a counter) closest to expiry; only when every entry is a
 *    counter is the write refused. Rewriting an existing key never needs
 *    room.
 *  - Redis cannot tell a counter from other keys, so Redis must not evict
 *    at all: with maxmemory set, run it with "maxmemory-policy
 *    noeviction" (Redis's default). A full Redis then refuses writes,
 *    which the store answers as CSRF_STORE_FULL. Every allkeys-* and
 *    volatile-* policy can evict counters, since counters carry a TTL. The
 *    store reads the policy when it first connects and logs a
 *    CSRF_ERR_CONFIG event when it is not noeviction or cannot be read
 *    (CONFIG not allowed for the user).
 *
 * How it is learnt: the refused call answers CSRF_STORE_FULL (and
 * csrf_reauth and csrf_login_attempt pass it on); the operator's log gets
 * it through the hook given to csrf_store_open_log. The library itself
 * never prints.
 */

/* A store's events for the operator's log. event says what happened:
 * CSRF_OK (connected, or reconnected after an outage; a new Sentinel
 * master), CSRF_STORE_UNAVAILABLE (a connection lost or refused),
 * CSRF_STORE_FULL (a write refused; the memory store also reports when it
 * starts evicting plain entries), CSRF_ERR_CONFIG (a refused password, an
 * unknown database or master name, an eviction policy that can evict
 * counters, a build without Redis). message is one line of English,
 * NUL-terminated, valid during the call; it never holds a key, a value or
 * a password (server addresses, yes). A repeated event of one kind is
 * reported at most once every 10 seconds, with the count of those left
 * out. The hook is called from the thread whose call met the event,
 * never with a store lock held; it may log, but must not use the store
 * that calls it. */
typedef void (*csrf_store_log_fn)(void *ud, csrf_reason event, const char *message);

/* Opens a store by URL; *out owns it (csrf_store_close). Thread-safe:
 * every call may come from any thread. URLs:
 *
 *   memory                        embedded, TTL expiry, at most 100000
 *   memory://?max=N               entries (N from 1 to 100000000)
 *   redis://[[USER]:PASSWORD@]HOST[:PORT][/DB][?OPTIONS]
 *   redis-sentinel://[[USER]:PASSWORD@]HOST[:PORT][,HOST[:PORT]...]/MASTER[/DB][?OPTIONS]
 *
 * Redis (hiredis): PORT default 6379, DB 0..15 (default 0). USER and
 * PASSWORD are for Redis's AUTH: "redis://:PASSWORD@..." for
 * requirepass, "redis://USER:PASSWORD@..." for a Redis 6 ACL user; both
 * percent-encoded where they hold other characters than letters, digits
 * and "-._~!$&'()*+,;=" (at most 256 bytes each once decoded). An ACL
 * user needs GET SET DEL EVAL INCR EXISTS PEXPIRE PING SELECT on the
 * prefix's keys, and ROLE with Sentinel; CONFIG GET lets the store check
 * the eviction policy (without it, it logs that it cannot). A HOST is
 * a name, an IPv4 address or an IPv6 address in brackets. OPTIONS:
 * prefix=P (of every key; letters, digits, ":_-", at most 64; default
 * "csrf:"), timeout_ms=T (1..60000, default 1000), pool=N (connections,
 * 1..64, default 8).
 *
 * Sentinel: up to 8 sentinels (PORT default 26379, asked without AUTH;
 * USER and PASSWORD are for the master) watching the master named MASTER
 * ([A-Za-z0-9._-], at most 64). The store asks the sentinels in turn
 * (SENTINEL get-master-addr-by-name), checks that the address given is
 * a master (ROLE), and asks again when the master stops answering or
 * answers READONLY, so it follows a failover by itself. The password
 * is sent to whatever master the sentinels name: use sentinels you
 * trust (a sentinel that names a server of its own gets the password
 * and answers every call).
 *
 * Opening tries to connect once within timeout_ms. A refused password,
 * a database Redis does not have, or sentinels that do not know MASTER
 * are CSRF_ERR_CONFIG, so a misconfigured server does not start. A
 * Redis (or every sentinel) that cannot be reached is not an error:
 * the store opens, its calls answer CSRF_STORE_UNAVAILABLE until Redis
 * answers, then work without reopening. (Version 0.1.0 answered
 * CSRF_STORE_UNAVAILABLE at open instead.)
 *
 * Every call is bounded by timeout_ms, waiting for a free connection of
 * the pool included, and so is every byte of its reply: a server that
 * answers a little at a time cannot hold a call longer. Name resolution
 * is not: resolving a HOST (getaddrinfo, for the URL's Redis and for the
 * address Sentinel announces) takes as long as the system's resolver
 * does. Use numeric addresses, or names resolved locally (/etc/hosts, a
 * local caching resolver), for Redis and for what Sentinel announces. A reply larger
 * than 16 KiB (a value is at most 4 KiB), nested deeper than three
 * arrays, announcing more elements than 16 KiB could hold, or not RESP2
 * is refused as it arrives: the connection is closed, the call answers
 * CSRF_STORE_UNAVAILABLE and the hook is told why (sizes, never bytes of
 * the reply). So is a nil array answering GET (no entry is a nil
 * string in RESP2), never read as CSRF_NOT_FOUND. A pooled connection is checked before each write
 * and replaced at once when Redis closed it; a get that finds its
 * connection closed is sent again on a fresh one, without a log line.
 * So the first call after a Redis restart succeeds. A call that meets a
 * broken connection is retried once on a fresh one when that is safe: a
 * get, or a write none of which was sent (an increment that may have
 * reached Redis is never sent twice); otherwise it answers
 * CSRF_STORE_UNAVAILABLE. After a connection attempt that timed out,
 * calls answer CSRF_STORE_UNAVAILABLE at once for a backoff (50 ms
 * doubling to 1 s); a refused connection is tried again by the next
 * call. A forked child never reuses its parent's connections.
 *
 * Built without Redis (CMake -DCSRF_WITH_REDIS=OFF) every redis URL is
 * CSRF_ERR_CONFIG and the hook is told "built without Redis". A URL that
 * does not parse is CSRF_ERR_CONFIG; no message ever holds the URL (it
 * may hold a password). csrf_store_open is csrf_store_open_log without
 * a hook. */
CSRF_MUST_CHECK csrf_reason csrf_store_open(csrf_store **out, const char *url);
CSRF_MUST_CHECK csrf_reason csrf_store_open_log(csrf_store **out, const char *url, csrf_store_log_fn log, void *ud);
void csrf_store_close(csrf_store *st); /* NULL is a no-op */

/* Keys are 1..256 bytes, values at most 4 KiB (CSRF_TOO_LARGE beyond);
 * both are copied, binary-safe. get: CSRF_OK and the value in buf (*len
 * its length), CSRF_NOT_FOUND, CSRF_ERR_BUFFER (*len the size needed),
 * CSRF_STORE_UNAVAILABLE. set: ttl_s 0 means no expiry. del: CSRF_OK also
 * when the key was absent. incr: adds 1 and returns the new value in
 * *value; a new key gets ttl_s; a value that is not an integer is
 * CSRF_MALFORMED; the key is a counter from then on (the contract above).
 * set and incr answer CSRF_STORE_FULL when the store is full (above). */
CSRF_MUST_CHECK csrf_reason csrf_store_get(csrf_store *st, const char *key, size_t key_len, void *buf, size_t cap,
                                           size_t *len);
CSRF_MUST_CHECK csrf_reason csrf_store_set(csrf_store *st, const char *key, size_t key_len, const void *val,
                                           size_t val_len, uint32_t ttl_s);
CSRF_MUST_CHECK csrf_reason csrf_store_del(csrf_store *st, const char *key, size_t key_len);
CSRF_MUST_CHECK csrf_reason csrf_store_incr(csrf_store *st, const char *key, size_t key_len, uint32_t ttl_s,
                                            int64_t *value);

/* ------------------------------------------------------------------ */
/* Re-authentication                                                   */
/* ------------------------------------------------------------------ */

/* Re-authentication policy of a context: lock an account, and a session,
 * after max_failures wrong passwords (0 counts as 1) for lockout_seconds;
 * a successful re-authentication counts as recent for window_seconds.
 * csrf_ctx_new's defaults: 5 failures, 900 s lockout, 300 s window. */
void csrf_ctx_set_reauth_policy(csrf_ctx *ctx, uint32_t max_failures, uint32_t lockout_seconds,
                                uint32_t window_seconds);

/* An Argon2id hash string (libsodium's crypto_pwhash_str, interactive
 * limits) of the password into out (cap >= CSRF_PWHASH_LEN), NUL-
 * terminated. CSRF_OK, CSRF_ERR_BUFFER, CSRF_ERR_ARG, CSRF_TOO_LARGE (a
 * password over libsodium's limit), CSRF_ERR_NOMEM (Argon2's memory). */
CSRF_MUST_CHECK csrf_reason csrf_password_hash(const char *password, size_t len, char *out, size_t cap);

/* Re-authenticates account (in session sid) with the password against its
 * Argon2id hash. Failures count per account and per session, and either
 * counter at the policy's max_failures locks. The order: an account or
 * session already locked is refused at once (nothing counted, no
 * Argon2); otherwise the attempt is counted for both BEFORE the password
 * is checked, and an attempt counted past the limit is refused without
 * Argon2, so concurrent attempts get at most max_failures checks between
 * them. CSRF_OK (both counters reset, the session marked recent),
 * CSRF_REAUTH_REQUIRED (password absent: NULL; nothing counted),
 * CSRF_REAUTH_FAILED (wrong, both counters still below the limit),
 * CSRF_LOCKED_OUT (the account or the session is locked, or this wrong
 * password reached the limit: refused even with the right password
 * until the lockout ends, lockout_seconds after the failure that reached
 * the limit), CSRF_STORE_UNAVAILABLE or CSRF_STORE_FULL (fails closed).
 * This is step-up in a signed-in session; for logins use
 * csrf_login_attempt. */
CSRF_MUST_CHECK csrf_reason csrf_reauth(const csrf_ctx *ctx, csrf_store *st, const char *account, size_t account_len,
                                        const char *sid, size_t sid_len, const char *password, size_t password_len,
                                        const char *hash, int64_t now);

/* CSRF_OK when the session re-authenticated within the window,
 * CSRF_REAUTH_REQUIRED otherwise, or CSRF_STORE_UNAVAILABLE. */
CSRF_MUST_CHECK csrf_reason csrf_reauth_recent(const csrf_ctx *ctx, csrf_store *st, const char *sid, size_t sid_len,
                                               int64_t now);

/* Login throttling policy: after max_failures wrong passwords (0 counts
 * as 1) from one client for one account, that client is locked out of
 * that account for lock_seconds (0 counts as 1); each further lock of the
 * same pair within 24 hours lasts twice as long as the one before, up to
 * lock_max_seconds (raised to lock_seconds when below). Defaults: 5
 * failures, 60 s, 3600 s. Failures short of the limit are forgotten
 * lock_seconds after the first of them. */
void csrf_ctx_set_login_policy(csrf_ctx *ctx, uint32_t max_failures, uint32_t lock_seconds, uint32_t lock_max_seconds);

/* Checks a login: account's password against its Argon2id hash, throttled
 * per account AND client. Use it for logins, and csrf_reauth for step-up
 * in a signed-in session: the two never share counters, so nobody's wrong
 * logins lock a signed-in owner out of their own step-up.
 *
 * client is the caller's key for where the attempt comes from: the
 * client's IP address (for IPv6 its /64), or a long-lived device cookie
 * the server set, or both joined; 1..4096 bytes, opaque, never stored
 * as such (the store holds SHA-256 of account and client). A client that
 * fails max_failures times is locked out of THAT account only, for a
 * short time that doubles with each lock (csrf_ctx_set_login_policy):
 * the owner logging in from elsewhere is not affected, and a guesser gets
 * a few tries an hour per client. A lock, not a delay: a refused attempt
 * costs the server nothing (no Argon2, no sleeping thread), and the
 * owner's own client is back after a minute. What one client key cannot
 * stop (many addresses at once) is for limits in front of the server,
 * e.g. nginx limit_req per address on the login location.
 *
 * hash NULL means "no such account": the attempt is counted and a dummy
 * hash checked as usual, so unknown accounts are throttled alike and
 * answer like wrong passwords, in about the same time. Attempts are
 * counted BEFORE Argon2 runs (as csrf_reauth does), so a burst gets at
 * most max_failures checks. password is (pointer, length); "" is a
 * wrong password, NULL is CSRF_ERR_ARG.
 *
 * CSRF_OK (the password is right; the pair's counters reset; rotate the
 * session id now), CSRF_REAUTH_FAILED (wrong password or unknown
 * account), CSRF_LOCKED_OUT (this client is locked out of this account,
 * or this failure reached the limit: refused even with the right
 * password until the lock ends), CSRF_STORE_UNAVAILABLE or
 * CSRF_STORE_FULL (fails closed), CSRF_ERR_ARG (NULL or empty account or
 * client, NULL password, a hash that is not Argon2id), CSRF_TOO_LARGE
 * (account or client over 4096 bytes). Built without re-authentication
 * (CMake -DCSRF_WITH_REAUTH=OFF), csrf_password_hash, csrf_reauth,
 * csrf_reauth_recent and csrf_login_attempt all answer CSRF_ERR_CONFIG. */
CSRF_MUST_CHECK csrf_reason csrf_login_attempt(const csrf_ctx *ctx, csrf_store *st, const char *account,
                                               size_t account_len, const char *client, size_t client_len,
                                               const char *password, size_t password_len, const char *hash);

#ifdef CSRF_SESSION_VISIBILITY_PUSHED
#pragma GCC visibility pop
#undef CSRF_SESSION_VISIBILITY_PUSHED
#endif

#ifdef __cplusplus
}
#endif
#endif /* CSRF_SESSION_H */
