/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reauth.c - password checks for sensitive operations and for logins:
 * Argon2id password hashes (libsodium), step-up re-authentication with
 * failure counting and lockout per account and per session, the
 * "recently re-authenticated" window, and login throttling per account
 * and client, all kept in a csrf_store so a fleet shares them.
 *
 * Step-up keys: "fail:acct:<account>" and "fail:sess:<sid>" (attempt
 * counters, TTL the lockout time, counted from the first failure and
 * renewed by the failure that reaches the limit, so a lockout lasts the
 * full time), "reauth:<sid>" (unix time of the last success, TTL the
 * window). Both counters lock, each at max_failures (0 counts as 1, as
 * in csrf_ctx_set_reauth_policy). An attempt is counted (one atomic
 * incr per counter) before Argon2 runs: reading the counter, hashing for
 * tens of milliseconds and only then counting let any number of
 * concurrent guesses through a check of the same old value.
 *
 * Login keys: "login:n:<h>" (attempts of one client at one account, the
 * same count-first scheme, locking that client out of that account) and
 * "login:s:<h>" (how many times that pair was locked within a day, which
 * doubles the next lock), h being SHA-256 of the account and the client,
 * so neither appears in the store. Logins never touch the step-up
 * counters: a stranger's wrong logins cannot lock a signed-in owner out
 * of their own step-up.
 *
 * Every key is a counter (written by incr) and so is never evicted by a
 * full store (csrf_session.h, the store contract). Any store error fails
 * closed: CSRF_STORE_FULL is passed on, everything else is
 * CSRF_STORE_UNAVAILABLE.
 *
 * Built without libsodium (CMake -DCSRF_WITH_REAUTH=OFF) every function
 * here but the two policy setters answer CSRF_ERR_CONFIG.
 */
#include "session_internal.h"

#if CSRF_WITH_REAUTH

#include <sodium.h>

#define KEY_ACCT "fail:acct:"
#define KEY_SESS "fail:sess:"
#define KEY_RECENT "reauth:"
#define KEY_LOGIN_COUNT "login:n:"
#define KEY_LOGIN_STRIKES "login:s:"
/* Login policy defaults (csrf_ctx_set_login_policy) and the memory of
 * past locks that makes the next one longer. */
#define LOGIN_MAX_DEFAULT 5
#define LOGIN_LOCK_DEFAULT 60
#define LOGIN_LOCK_MAX_DEFAULT 3600
#define LOGIN_STRIKES_TTL 86400
/* Longest account name and client key csrf_login_attempt hashes. */
#define LOGIN_KEY_INPUT_MAX 4096
/* A server clock this far behind the one that wrote "reauth:<sid>" still
 * counts the mark as recent (fleets are never perfectly in sync). */
#define CLOCK_SKEW_S 30

static pthread_once_t sodium_once = PTHREAD_ONCE_INIT;
static int sodium_ok;

static void sodium_setup(void)
{
	sodium_ok = sodium_init() >= 0;
}

static int sodium_ready(void)
{
	pthread_once(&sodium_once, sodium_setup);
	return sodium_ok;
}

CSRF_API csrf_reason csrf_password_hash(const char *password, size_t len, char *out, size_t cap)
{
	char tmp[crypto_pwhash_STRBYTES];

	if (out == NULL || (password == NULL && len > 0))
		return CSRF_ERR_ARG;
	if (cap < crypto_pwhash_STRBYTES || cap < CSRF_PWHASH_LEN)
		return CSRF_ERR_BUFFER;
	if (len > crypto_pwhash_PASSWD_MAX)
		return CSRF_TOO_LARGE;
	if (!sodium_ready())
		return CSRF_ERR_INTERNAL;
	if (crypto_pwhash_str(tmp, password != NULL ? password : "", (unsigned long long)len,
	                      crypto_pwhash_OPSLIMIT_INTERACTIVE, crypto_pwhash_MEMLIMIT_INTERACTIVE) != 0)
		return CSRF_ERR_NOMEM;
	memcpy(out, tmp, sizeof tmp);
	return CSRF_OK;
}

/* prefix + name into buf (CSRF_STORE_KEY_MAX bytes); 0 when too long. */
static size_t make_key(char *buf, const char *prefix, const char *name, size_t name_len)
{
	size_t p = strlen(prefix);

	if (name_len > CSRF_STORE_KEY_MAX - p)
		return 0;
	memcpy(buf, prefix, p);
	memcpy(buf + p, name, name_len);
	return p + name_len;
}

/* A stored decimal (a counter or a time): CSRF_OK, CSRF_NOT_FOUND, or
 * CSRF_STORE_UNAVAILABLE; a value that does not parse is 'bad' (set to
 * 1) with CSRF_OK. */
static csrf_reason get_number(csrf_store *st, const char *key, size_t key_len, int64_t *v, int *bad)
{
	char buf[32];
	size_t n = 0;
	csrf_reason r = csrf_store_get(st, key, key_len, buf, sizeof buf, &n);

	*bad = 0;
	if (r == CSRF_NOT_FOUND)
		return r;
	if (r == CSRF_ERR_BUFFER) {
		*bad = 1;
		return CSRF_OK;
	}
	if (r != CSRF_OK)
		return CSRF_STORE_UNAVAILABLE;
	if (csrfx_parse_i64(buf, n, v) != CSRF_OK)
		*bad = 1;
	return CSRF_OK;
}

/* A well-formed libsodium Argon2id string within CSRF_PWHASH_LEN. */
static int hash_ok(const char *hash)
{
	size_t n = strnlen(hash, CSRF_PWHASH_LEN);

	return n < CSRF_PWHASH_LEN && n > sizeof crypto_pwhash_argon2id_STRPREFIX - 1 &&
	       memcmp(hash, crypto_pwhash_argon2id_STRPREFIX, sizeof crypto_pwhash_argon2id_STRPREFIX - 1) == 0;
}

/* CSRF_OK when the counter at key is below max (or absent),
 * CSRF_LOCKED_OUT when it is not (a counter we cannot read, or below 1,
 * locks too),
 * CSRF_STORE_UNAVAILABLE. */
static csrf_reason check_unlocked(csrf_store *st, const char *key, size_t key_len, uint32_t max)
{
	int64_t v = 0;
	int bad = 0;
	csrf_reason r = get_number(st, key, key_len, &v, &bad);

	if (r == CSRF_NOT_FOUND)
		return CSRF_OK;
	if (r != CSRF_OK)
		return r;
	/* below 1: no counter of ours (INCR starts at 1) */
	return bad || v < 1 || v >= (int64_t)max ? CSRF_LOCKED_OUT : CSRF_OK;
}

/* What a failed store write answers the caller: fail closed, saying
 * why when the store is full. */
static csrf_reason write_failed(csrf_reason r)
{
	return r == CSRF_STORE_FULL ? r : CSRF_STORE_UNAVAILABLE;
}

/* Counts one attempt on the counter at key (a new counter lives ttl
 * seconds): CSRF_OK and the attempt's number in *n, CSRF_LOCKED_OUT when
 * the counter is not a number or is below 1 after the increment, CSRF_STORE_FULL, CSRF_STORE_UNAVAILABLE. */
static csrf_reason count_attempt(csrf_store *st, const char *key, size_t key_len, uint32_t ttl, int64_t *n)
{
	csrf_reason r = csrf_store_incr(st, key, key_len, ttl, n);

	/* A count below 1 after an increment is no counter the lockout
	 * wrote: a store that lies, or a key someone else set. It locks,
	 * or attempts would go uncounted. */
	if (r == CSRF_MALFORMED || (r == CSRF_OK && *n < 1))
		return CSRF_LOCKED_OUT;
	return r == CSRF_OK ? CSRF_OK : write_failed(r);
}

/* The failure that reaches the limit starts the lockout's full time:
 * the counter is written again with a fresh TTL (it stays a counter). */
static csrf_reason renew_lockout(csrf_store *st, const char *key, size_t key_len, int64_t n, uint32_t ttl)
{
	char num[24];
	int k = snprintf(num, sizeof num, "%lld", (long long)n);
	csrf_reason r;

	if (k < 0 || (size_t)k >= sizeof num)
		return CSRF_ERR_INTERNAL;
	r = csrf_store_set(st, key, key_len, num, (size_t)k, ttl);
	return r == CSRF_OK ? CSRF_OK : write_failed(r);
}

CSRF_API csrf_reason csrf_reauth(const csrf_ctx *ctx, csrf_store *st, const char *account, size_t account_len,
                                 const char *sid, size_t sid_len, const char *password, size_t password_len,
                                 const char *hash, int64_t now)
{
	char acct_key[CSRF_STORE_KEY_MAX], sess_key[CSRF_STORE_KEY_MAX], recent_key[CSRF_STORE_KEY_MAX];
	size_t acct_len, sess_len, recent_len;
	uint32_t max, ttl;
	int64_t fails = 0, sess_fails = 0;
	char num[24];
	int n;
	csrf_reason r;

	if (ctx == NULL || st == NULL || account == NULL || account_len == 0 || sid == NULL || sid_len == 0 ||
	    hash == NULL || (password == NULL && password_len > 0))
		return CSRF_ERR_ARG;
	acct_len = make_key(acct_key, KEY_ACCT, account, account_len);
	sess_len = make_key(sess_key, KEY_SESS, sid, sid_len);
	recent_len = make_key(recent_key, KEY_RECENT, sid, sid_len);
	if (acct_len == 0 || sess_len == 0 || recent_len == 0)
		return CSRF_TOO_LARGE;
	if (!hash_ok(hash))
		return CSRF_ERR_ARG;
	if (!sodium_ready())
		return CSRF_ERR_INTERNAL;
	max = ctx->reauth_max_failures ? ctx->reauth_max_failures : 1;
	ttl = ctx->reauth_lockout;
	now = csrfi_now(now);

	/* Already locked: refused before anything is counted, so attempts
	 * during a lockout neither add up nor lengthen it. */
	r = check_unlocked(st, acct_key, acct_len, max);
	if (r == CSRF_OK)
		r = check_unlocked(st, sess_key, sess_len, max);
	if (r != CSRF_OK)
		return r;
	if (password == NULL)
		return CSRF_REAUTH_REQUIRED;

	/* Count first, then verify: of any number of concurrent attempts only
	 * those numbered up to max on both counters reach Argon2. */
	r = count_attempt(st, acct_key, acct_len, ttl, &fails);
	if (r != CSRF_OK)
		return r;
	if (fails > (int64_t)max)
		return CSRF_LOCKED_OUT;
	r = count_attempt(st, sess_key, sess_len, ttl, &sess_fails);
	if (r != CSRF_OK)
		return r;
	if (sess_fails > (int64_t)max)
		return CSRF_LOCKED_OUT;

	if (crypto_pwhash_str_verify(hash, password_len > 0 ? password : "", (unsigned long long)password_len) != 0) {
		if (fails < (int64_t)max && sess_fails < (int64_t)max)
			return CSRF_REAUTH_FAILED;
		if (fails >= (int64_t)max && (r = renew_lockout(st, acct_key, acct_len, fails, ttl)) != CSRF_OK)
			return r;
		if (sess_fails >= (int64_t)max &&
		    (r = renew_lockout(st, sess_key, sess_len, sess_fails, ttl)) != CSRF_OK)
			return r;
		return CSRF_LOCKED_OUT;
	}

	if (csrf_store_del(st, acct_key, acct_len) != CSRF_OK || csrf_store_del(st, sess_key, sess_len) != CSRF_OK)
		return CSRF_STORE_UNAVAILABLE;
	n = snprintf(num, sizeof num, "%lld", (long long)now);
	r = csrf_store_set(st, recent_key, recent_len, num, (size_t)n, ctx->reauth_window);
	return r == CSRF_OK ? CSRF_OK : write_failed(r);
}

CSRF_API csrf_reason csrf_reauth_recent(const csrf_ctx *ctx, csrf_store *st, const char *sid, size_t sid_len,
                                        int64_t now)
{
	char key[CSRF_STORE_KEY_MAX];
	size_t key_len;
	int64_t at = 0;
	int bad = 0;
	csrf_reason r;

	if (ctx == NULL || st == NULL || sid == NULL || sid_len == 0)
		return CSRF_ERR_ARG;
	key_len = make_key(key, KEY_RECENT, sid, sid_len);
	if (key_len == 0)
		return CSRF_TOO_LARGE;
	now = csrfi_now(now);
	r = get_number(st, key, key_len, &at, &bad);
	if (r == CSRF_NOT_FOUND)
		return CSRF_REAUTH_REQUIRED;
	if (r != CSRF_OK)
		return CSRF_STORE_UNAVAILABLE;
	if (bad || at > now + CLOCK_SKEW_S || now - at >= (int64_t)ctx->reauth_window)
		return CSRF_REAUTH_REQUIRED;
	return CSRF_OK;
}

/* ---- login throttling ---- */

static pthread_once_t dummy_once = PTHREAD_ONCE_INIT;
static char dummy_hash[CSRF_PWHASH_LEN];
static int dummy_ok;

/* A hash no password matches, checked for unknown accounts so that they
 * cost what known ones cost. */
static void dummy_setup(void)
{
	unsigned char pw[32];

	randombytes_buf(pw, sizeof pw);
	dummy_ok = csrf_password_hash((const char *)pw, sizeof pw, dummy_hash, sizeof dummy_hash) == CSRF_OK;
	sodium_memzero(pw, sizeof pw);
}

/* "login:n:" or "login:s:" and the base64url SHA-256 of the account
 * (length first, so no two pairs run together) and the client. */
static size_t login_key(char *buf, const char *prefix, const char *account, size_t account_len, const char *client,
                        size_t client_len)
{
	csrfi_sha256_ctx c;
	uint8_t len_be[4] = {(uint8_t)(account_len >> 24), (uint8_t)(account_len >> 16), (uint8_t)(account_len >> 8),
	                     (uint8_t)account_len};
	uint8_t digest[CSRF_SHA256_LEN];
	size_t p = strlen(prefix);

	csrfi_sha256_init(&c);
	csrfi_sha256_update(&c, len_be, sizeof len_be);
	csrfi_sha256_update(&c, account, account_len);
	csrfi_sha256_update(&c, client, client_len);
	csrfi_sha256_final(&c, digest);
	memcpy(buf, prefix, p);
	csrfi_b64url_encode(digest, sizeof digest, buf + p);
	return p + CSRF_B64_ENC_LEN(sizeof digest);
}

/* lock_s doubled for every earlier lock of the day, at most lock_max_s. */
static uint32_t lock_for(uint32_t lock_s, uint32_t lock_max_s, int64_t strikes)
{
	uint64_t t = lock_s;

	for (int64_t i = 1; i < strikes && t < lock_max_s; i++)
		t *= 2;
	return t > lock_max_s ? lock_max_s : (uint32_t)t;
}

CSRF_API csrf_reason csrf_login_attempt(const csrf_ctx *ctx, csrf_store *st, const char *account, size_t account_len,
                                        const char *client, size_t client_len, const char *password,
                                        size_t password_len, const char *hash)
{
	char count_key[CSRF_STORE_KEY_MAX], strikes_key[CSRF_STORE_KEY_MAX];
	size_t count_len, strikes_len;
	uint32_t max, lock, lock_max;
	int64_t fails = 0, strikes = 0;
	int right;
	csrf_reason r;

	if (ctx == NULL || st == NULL || account == NULL || account_len == 0 || client == NULL || client_len == 0 ||
	    password == NULL)
		return CSRF_ERR_ARG;
	if (account_len > LOGIN_KEY_INPUT_MAX || client_len > LOGIN_KEY_INPUT_MAX ||
	    password_len > crypto_pwhash_PASSWD_MAX)
		return CSRF_TOO_LARGE;
	if (hash != NULL && !hash_ok(hash))
		return CSRF_ERR_ARG;
	if (!sodium_ready())
		return CSRF_ERR_INTERNAL;
	pthread_once(&dummy_once, dummy_setup);
	if (hash == NULL && !dummy_ok)
		return CSRF_ERR_INTERNAL;
	max = ctx->login_max_failures ? ctx->login_max_failures : LOGIN_MAX_DEFAULT;
	lock = ctx->login_lock ? ctx->login_lock : LOGIN_LOCK_DEFAULT;
	lock_max = ctx->login_lock_max ? ctx->login_lock_max : LOGIN_LOCK_MAX_DEFAULT;
	count_len = login_key(count_key, KEY_LOGIN_COUNT, account, account_len, client, client_len);
	strikes_len = login_key(strikes_key, KEY_LOGIN_STRIKES, account, account_len, client, client_len);

	/* locked: refused at once, nothing counted, no Argon2 */
	r = check_unlocked(st, count_key, count_len, max);
	if (r != CSRF_OK)
		return r;
	r = count_attempt(st, count_key, count_len, lock, &fails);
	if (r != CSRF_OK)
		return r;
	if (fails > (int64_t)max)
		return CSRF_LOCKED_OUT;

	right = crypto_pwhash_str_verify(hash != NULL ? hash : dummy_hash, password_len > 0 ? password : "",
	                                 (unsigned long long)password_len) == 0 &&
	        hash != NULL;
	if (!right) {
		if (fails < (int64_t)max)
			return CSRF_REAUTH_FAILED;
		r = count_attempt(st, strikes_key, strikes_len, LOGIN_STRIKES_TTL, &strikes);
		if (r == CSRF_OK)
			r = renew_lockout(st, count_key, count_len, fails, lock_for(lock, lock_max, strikes));
		return r == CSRF_OK ? CSRF_LOCKED_OUT : r;
	}
	if (csrf_store_del(st, count_key, count_len) != CSRF_OK ||
	    csrf_store_del(st, strikes_key, strikes_len) != CSRF_OK)
		return CSRF_STORE_UNAVAILABLE;
	return CSRF_OK;
}

#else /* !CSRF_WITH_REAUTH */

CSRF_API csrf_reason csrf_password_hash(const char *password, size_t len, char *out, size_t cap)
{
	(void)password;
	(void)len;
	(void)out;
	(void)cap;
	return CSRF_ERR_CONFIG;
}

CSRF_API csrf_reason csrf_reauth(const csrf_ctx *ctx, csrf_store *st, const char *account, size_t account_len,
                                 const char *sid, size_t sid_len, const char *password, size_t password_len,
                                 const char *hash, int64_t now)
{
	(void)ctx;
	(void)st;
	(void)account;
	(void)account_len;
	(void)sid;
	(void)sid_len;
	(void)password;
	(void)password_len;
	(void)hash;
	(void)now;
	return CSRF_ERR_CONFIG;
}

CSRF_API csrf_reason csrf_reauth_recent(const csrf_ctx *ctx, csrf_store *st, const char *sid, size_t sid_len,
                                        int64_t now)
{
	(void)ctx;
	(void)st;
	(void)sid;
	(void)sid_len;
	(void)now;
	return CSRF_ERR_CONFIG;
}

CSRF_API csrf_reason csrf_login_attempt(const csrf_ctx *ctx, csrf_store *st, const char *account, size_t account_len,
                                        const char *client, size_t client_len, const char *password,
                                        size_t password_len, const char *hash)
{
	(void)ctx;
	(void)st;
	(void)account;
	(void)account_len;
	(void)client;
	(void)client_len;
	(void)password;
	(void)password_len;
	(void)hash;
	return CSRF_ERR_CONFIG;
}

#endif /* CSRF_WITH_REAUTH */

CSRF_API void csrf_ctx_set_reauth_policy(csrf_ctx *ctx, uint32_t max_failures, uint32_t lockout_seconds,
                                         uint32_t window_seconds)
{
	if (!ctx)
		return;
	ctx->reauth_max_failures = max_failures ? max_failures : 1;
	ctx->reauth_lockout = lockout_seconds;
	ctx->reauth_window = window_seconds;
}

CSRF_API void csrf_ctx_set_login_policy(csrf_ctx *ctx, uint32_t max_failures, uint32_t lock_seconds,
                                        uint32_t lock_max_seconds)
{
	if (ctx == NULL)
		return;
	ctx->login_max_failures = max_failures ? max_failures : 1;
	ctx->login_lock = lock_seconds ? lock_seconds : 1;
	ctx->login_lock_max = lock_max_seconds < ctx->login_lock ? ctx->login_lock : lock_max_seconds;
}
