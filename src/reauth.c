/*
 * reauth.c - re-authentication for sensitive operations: Argon2id
 * password hashes (libsodium), failure counting and lockout per account
 * and per session, and the "recently re-authenticated" window, all kept
 * in a csrf_store so a fleet shares them.
 *
 * Store keys: "fail:acct:<account>" and "fail:sess:<sid>" (attempt
 * counters, TTL the lockout time, counted from the first failure and
 * renewed by the failure that reaches the limit, so a lockout lasts the
 * full time), "reauth:<sid>" (unix time of the last success, TTL the
 * window). Both counters lock, each at max_failures (0 counts as 1, as
 * in csrf_ctx_set_reauth_policy). An attempt is counted (one atomic
 * incr per counter) before Argon2 runs: reading the counter, hashing for
 * tens of milliseconds and only then counting let any number of
 * concurrent guesses through a check of the same old value.
 * Any store error fails closed with CSRF_STORE_UNAVAILABLE.
 */
#include "internal.h"

#include <sodium.h>

#define KEY_ACCT "fail:acct:"
#define KEY_SESS "fail:sess:"
#define KEY_RECENT "reauth:"
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
	if (csrf_store_parse_i64(buf, n, v) != CSRF_OK)
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
 * CSRF_LOCKED_OUT when it is not (a counter we cannot read locks too),
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
	return bad || v >= (int64_t)max ? CSRF_LOCKED_OUT : CSRF_OK;
}

/* Counts one attempt on the counter at key (a new counter lives ttl
 * seconds): CSRF_OK and the attempt's number in *n, CSRF_LOCKED_OUT when
 * the counter is not a number, CSRF_STORE_UNAVAILABLE. */
static csrf_reason count_attempt(csrf_store *st, const char *key, size_t key_len, uint32_t ttl, int64_t *n)
{
	csrf_reason r = csrf_store_incr(st, key, key_len, ttl, n);

	if (r == CSRF_MALFORMED)
		return CSRF_LOCKED_OUT;
	return r == CSRF_OK ? CSRF_OK : CSRF_STORE_UNAVAILABLE;
}

/* The failure that reaches the limit starts the lockout's full time:
 * the counter is written again with a fresh TTL. */
static csrf_reason renew_lockout(csrf_store *st, const char *key, size_t key_len, int64_t n, uint32_t ttl)
{
	char num[24];
	int k = snprintf(num, sizeof num, "%lld", (long long)n);

	if (k < 0 || (size_t)k >= sizeof num)
		return CSRF_ERR_INTERNAL;
	return csrf_store_set(st, key, key_len, num, (size_t)k, ttl) == CSRF_OK ? CSRF_OK : CSRF_STORE_UNAVAILABLE;
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
	now = csrf_now(now);

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
	if (csrf_store_set(st, recent_key, recent_len, num, (size_t)n, ctx->reauth_window) != CSRF_OK)
		return CSRF_STORE_UNAVAILABLE;
	return CSRF_OK;
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
	now = csrf_now(now);
	r = get_number(st, key, key_len, &at, &bad);
	if (r == CSRF_NOT_FOUND)
		return CSRF_REAUTH_REQUIRED;
	if (r != CSRF_OK)
		return CSRF_STORE_UNAVAILABLE;
	if (bad || at > now + CLOCK_SKEW_S || now - at >= (int64_t)ctx->reauth_window)
		return CSRF_REAUTH_REQUIRED;
	return CSRF_OK;
}
