/*
 * test_reauth.c - src/reauth.c: Argon2id hashes, counting of wrong
 * passwords per account and per session, lockout (refused even with the
 * right password) and its end, reset on success, the recent window,
 * concurrent attempts (counted before Argon2 runs, so a burst gets no
 * more guesses than the limit), and failing closed when the store does
 * not answer. Time is controlled twice: the `now` argument and the
 * memory store's clock hook.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <sodium.h>

#include "internal.h"
#include "testutil.h"

#define PW "correct horse battery staple"
#define PW_LEN (sizeof PW - 1)
#define T0 1700000000

static char good_hash[CSRF_PWHASH_LEN];
static int64_t fake_ms;

/* ---- counting Argon2 runs ----
 * The library is linked statically, so this definition takes the place
 * of libsodium's for src/reauth.c: every password check is counted, and
 * a thread that sets hold_in_verify waits inside the check until
 * release_verify is set (an attempt caught in the middle of Argon2). */
static atomic_int verify_calls;
static atomic_int verify_holding;
static atomic_int release_verify;
static _Thread_local int hold_in_verify;

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

int crypto_pwhash_str_verify(const char str[crypto_pwhash_STRBYTES], const char *const passwd,
                             unsigned long long passwdlen)
{
	atomic_fetch_add(&verify_calls, 1);
	if (hold_in_verify) {
		atomic_fetch_add(&verify_holding, 1);
		while (!atomic_load(&release_verify))
			sleep_ms(1);
	}
	return crypto_pwhash_argon2id_str_verify(str, passwd, passwdlen);
}

static int64_t fake_clock(void *ud)
{
	(void)ud;
	return fake_ms;
}

typedef struct {
	csrf_ctx *ctx;
	csrf_store *st;
} fixture;

static int setup(void **state)
{
	static fixture f;

	if (csrf_ctx_new(&f.ctx, NULL) != CSRF_OK)
		return -1;
	if (csrf_store_open(&f.st, "memory") != CSRF_OK)
		return -1;
	fake_ms = 5000000;
	csrf_store_memory_set_clock(f.st, fake_clock, NULL);
	atomic_store(&verify_calls, 0);
	atomic_store(&verify_holding, 0);
	atomic_store(&release_verify, 0);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	csrf_store_close(f->st);
	csrf_ctx_free(f->ctx);
	return 0;
}

static int group_setup(void **state)
{
	(void)state;
	return csrf_password_hash(PW, PW_LEN, good_hash, sizeof good_hash) == CSRF_OK ? 0 : -1;
}

/* One attempt: sid, password (NULL: none), seconds to move both clocks
 * forward first, and the expected answer. */
typedef struct {
	const char *account;
	const char *sid;
	const char *password;
	int64_t advance_s;
	csrf_reason want;
} attempt;

static void run_attempts(fixture *f, const attempt *rows, size_t n, int64_t *now)
{
	for (size_t i = 0; i < n; i++) {
		const attempt *a = &rows[i];
		*now += a->advance_s;
		fake_ms += a->advance_s * 1000;
		csrf_reason r = csrf_reauth(f->ctx, f->st, a->account, strlen(a->account), a->sid, strlen(a->sid),
		                            a->password, a->password ? strlen(a->password) : 0, good_hash, *now);
		if (r != a->want)
			fail_msg("attempt %zu: got %s, want %s", i, csrf_reason_name(r), csrf_reason_name(a->want));
	}
}

static int64_t counter(fixture *f, const char *key)
{
	char buf[32];
	size_t len;
	int64_t v = 0;
	csrf_reason r = csrf_store_get(f->st, key, strlen(key), buf, sizeof buf, &len);

	if (r == CSRF_NOT_FOUND)
		return 0;
	assert_int_equal(r, CSRF_OK);
	assert_int_equal(csrf_store_parse_i64(buf, len, &v), CSRF_OK);
	return v;
}

/* ---- hashing ---- */

static void test_hash(void **state)
{
	char h2[CSRF_PWHASH_LEN], small[CSRF_PWHASH_LEN - 1];

	(void)state;
	assert_int_equal(strncmp(good_hash, "$argon2id$", 10), 0);
	assert_true(strlen(good_hash) < CSRF_PWHASH_LEN);
	assert_int_equal(crypto_pwhash_str_verify(good_hash, PW, PW_LEN), 0);
	assert_int_not_equal(crypto_pwhash_str_verify(good_hash, "wrong", 5), 0);
	/* interactive limits */
	assert_int_equal(crypto_pwhash_str_needs_rehash(good_hash, crypto_pwhash_OPSLIMIT_INTERACTIVE,
	                                                crypto_pwhash_MEMLIMIT_INTERACTIVE),
	                 0);
	/* a fresh salt each time */
	assert_int_equal(csrf_password_hash(PW, PW_LEN, h2, sizeof h2), CSRF_OK);
	assert_string_not_equal(h2, good_hash);
	/* the password is (pointer, length): bytes past len are not part of it */
	char *g = tu_guard_copy("secret-and-more", 6);
	assert_int_equal(csrf_password_hash(g, 6, h2, sizeof h2), CSRF_OK);
	tu_guard_free(g);
	assert_int_equal(crypto_pwhash_str_verify(h2, "secret", 6), 0);
	/* binary passwords with NUL bytes */
	assert_int_equal(csrf_password_hash("a\0b", 3, h2, sizeof h2), CSRF_OK);
	assert_int_equal(crypto_pwhash_str_verify(h2, "a\0b", 3), 0);
	assert_int_not_equal(crypto_pwhash_str_verify(h2, "a", 1), 0);
	/* bad arguments */
	assert_int_equal(csrf_password_hash(PW, PW_LEN, small, sizeof small), CSRF_ERR_BUFFER);
	assert_int_equal(csrf_password_hash(PW, PW_LEN, NULL, 128), CSRF_ERR_ARG);
	assert_int_equal(csrf_password_hash(NULL, 3, h2, sizeof h2), CSRF_ERR_ARG);
}

/* ---- re-authentication ---- */

static void test_right_password(void **state)
{
	fixture *f = *state;
	int64_t now = T0;

	assert_int_equal(csrf_reauth_recent(f->ctx, f->st, "s1", 2, now), CSRF_REAUTH_REQUIRED);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "alice", 5, "s1", 2, PW, PW_LEN, good_hash, now), CSRF_OK);
	assert_int_equal(csrf_reauth_recent(f->ctx, f->st, "s1", 2, now), CSRF_OK);
	/* another session is not recent */
	assert_int_equal(csrf_reauth_recent(f->ctx, f->st, "s2", 2, now), CSRF_REAUTH_REQUIRED);
	/* no password: required, nothing counted */
	assert_int_equal(csrf_reauth(f->ctx, f->st, "alice", 5, "s1", 2, NULL, 0, good_hash, now),
	                 CSRF_REAUTH_REQUIRED);
	assert_int_equal(counter(f, "fail:acct:alice"), 0);
	/* a prefix of the password, or the password with more, is wrong */
	assert_int_equal(csrf_reauth(f->ctx, f->st, "alice", 5, "s1", 2, PW, PW_LEN - 1, good_hash, now),
	                 CSRF_REAUTH_FAILED);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "alice", 5, "s1", 2, PW "!", PW_LEN + 1, good_hash, now),
	                 CSRF_REAUTH_FAILED);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "alice", 5, "s1", 2, "", 0, good_hash, now), CSRF_REAUTH_FAILED);
	assert_int_equal(counter(f, "fail:acct:alice"), 3);
}

static void test_wrong_passwords_count(void **state)
{
	fixture *f = *state;
	int64_t now = T0;
	static const attempt rows[] = {
	    {"bob", "sA", "nope", 0, CSRF_REAUTH_FAILED},
	    {"bob", "sA", "nope", 1, CSRF_REAUTH_FAILED},
	    {"bob", "sB", "nope", 1, CSRF_REAUTH_FAILED},
	};

	run_attempts(f, rows, 3, &now);
	assert_int_equal(counter(f, "fail:acct:bob"), 3);
	assert_int_equal(counter(f, "fail:sess:sA"), 2);
	assert_int_equal(counter(f, "fail:sess:sB"), 1);
	assert_int_equal(counter(f, "fail:acct:carol"), 0);
	assert_int_equal(csrf_reauth_recent(f->ctx, f->st, "sA", 2, now), CSRF_REAUTH_REQUIRED);
}

static void test_lockout(void **state)
{
	fixture *f = *state;
	int64_t now = T0;
	static const attempt rows[] = {
	    {"dave", "s1", "x1", 0, CSRF_REAUTH_FAILED},
	    {"dave", "s1", "x2", 1, CSRF_REAUTH_FAILED},
	    {"dave", "s2", "x3", 1, CSRF_REAUTH_FAILED},
	    {"dave", "s2", "x4", 1, CSRF_REAUTH_FAILED},
	    {"dave", "s3", "x5", 1, CSRF_LOCKED_OUT}, /* the 5th failure locks */
	    {"dave", "s3", PW, 1, CSRF_LOCKED_OUT},   /* even the right password */
	    {"dave", "s9", PW, 1, CSRF_LOCKED_OUT},   /* from any session */
	    {"dave", "s9", NULL, 0, CSRF_LOCKED_OUT}, /* lockout comes first */
	    {"dave", "s9", "x6", 0, CSRF_LOCKED_OUT}, /* nothing more counted */
	    {"erin", "s9", PW, 0, CSRF_OK},           /* other accounts are not */
	};

	run_attempts(f, rows, sizeof rows / sizeof rows[0], &now);
	assert_int_equal(counter(f, "fail:acct:dave"), 5);
	assert_int_equal(csrf_reauth_recent(f->ctx, f->st, "s3", 2, now), CSRF_REAUTH_REQUIRED);
	/* the five failures and erin's success ran Argon2, the refusals did not */
	assert_int_equal(atomic_load(&verify_calls), 6);
}

static void test_session_lockout(void **state)
{
	fixture *f = *state;
	int64_t now = T0;
	/* one session trying one account after another locks as well */
	static const attempt rows[] = {
	    {"pat", "sx", "a", 0, CSRF_REAUTH_FAILED},
	    {"quin", "sx", "b", 1, CSRF_REAUTH_FAILED},
	    {"ruth", "sx", "c", 1, CSRF_LOCKED_OUT}, /* the session's 3rd failure */
	    {"sam", "sx", PW, 1, CSRF_LOCKED_OUT},   /* any account, even the right password */
	    {"sam", "sx", NULL, 0, CSRF_LOCKED_OUT},
	    {"sam", "sx", "d", 0, CSRF_LOCKED_OUT},
	    {"sam", "sy", PW, 0, CSRF_OK},          /* the account is fine in another session */
	    {"pat", "sx", PW, 58, CSRF_LOCKED_OUT}, /* 59 s after the locking failure */
	    {"pat", "sx", PW, 1, CSRF_OK},          /* 60 s: over, and pat's failure forgotten */
	};

	csrf_ctx_set_reauth_policy(f->ctx, 3, 60, 10);
	run_attempts(f, rows, 7, &now);
	assert_int_equal(counter(f, "fail:sess:sx"), 3); /* refusals are not counted */
	assert_int_equal(counter(f, "fail:acct:pat"), 1);
	assert_int_equal(counter(f, "fail:acct:ruth"), 1);
	assert_int_equal(counter(f, "fail:acct:sam"), 0);
	assert_int_equal(atomic_load(&verify_calls), 4);
	assert_int_equal(csrf_reauth_recent(f->ctx, f->st, "sx", 2, now), CSRF_REAUTH_REQUIRED);
	run_attempts(f, rows + 7, 2, &now);
	assert_int_equal(counter(f, "fail:sess:sx"), 0);
	assert_int_equal(counter(f, "fail:acct:pat"), 0);
	assert_int_equal(csrf_reauth_recent(f->ctx, f->st, "sx", 2, now), CSRF_OK);
}

/* ---- concurrent attempts ---- */

#define RACERS 8

typedef struct {
	fixture *f;
	pthread_barrier_t *start;
	char account[16], sid[16];
	int hold; /* wait inside Argon2 until released */
	csrf_reason got;
} racer;

static void *race_one(void *arg)
{
	racer *r = arg;

	hold_in_verify = r->hold;
	if (r->start != NULL)
		pthread_barrier_wait(r->start);
	r->got = csrf_reauth(r->f->ctx, r->f->st, r->account, strlen(r->account), r->sid, strlen(r->sid), "wrong", 5,
	                     good_hash, T0);
	return NULL;
}

/* RACERS wrong passwords at once, one account in many sessions or many
 * accounts in one session: with max_failures 2 only two are checked,
 * the first fails, the second reaches the limit, the rest are locked
 * out unchecked. Counting after Argon2 checked all of them. */
static void test_concurrent_wrong(void **state)
{
	fixture *f = *state;
	static const struct {
		int same_account;
		const char *counter;
	} modes[] = {{1, "fail:acct:race"}, {0, "fail:sess:shared"}};

	csrf_ctx_set_reauth_policy(f->ctx, 2, 900, 300);
	for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
		pthread_barrier_t start;
		pthread_t t[RACERS];
		racer rs[RACERS];
		int failed = 0, locked = 0;

		atomic_store(&verify_calls, 0);
		assert_int_equal(pthread_barrier_init(&start, NULL, RACERS), 0);
		for (int i = 0; i < RACERS; i++) {
			rs[i] = (racer){f, &start, {0}, {0}, 0, CSRF_OK};
			if (modes[m].same_account) {
				snprintf(rs[i].account, sizeof rs[i].account, "race");
				snprintf(rs[i].sid, sizeof rs[i].sid, "sess%d", i);
			} else {
				snprintf(rs[i].account, sizeof rs[i].account, "acct%d", i);
				snprintf(rs[i].sid, sizeof rs[i].sid, "shared");
			}
			assert_int_equal(pthread_create(&t[i], NULL, race_one, &rs[i]), 0);
		}
		for (int i = 0; i < RACERS; i++)
			assert_int_equal(pthread_join(t[i], NULL), 0);
		pthread_barrier_destroy(&start);
		for (int i = 0; i < RACERS; i++) {
			if (rs[i].got == CSRF_REAUTH_FAILED)
				failed++;
			else if (rs[i].got == CSRF_LOCKED_OUT)
				locked++;
			else
				fail_msg("mode %zu racer %d: %s", m, i, csrf_reason_name(rs[i].got));
		}
		if (atomic_load(&verify_calls) != 2 || failed != 1 || locked != RACERS - 1)
			fail_msg("mode %zu: %d password checks, %d failed, %d locked out", m,
			         atomic_load(&verify_calls), failed, locked);
		assert_true(counter(f, modes[m].counter) >= 2);
		/* and the right password afterwards is refused */
		if (modes[m].same_account)
			assert_int_equal(csrf_reauth(f->ctx, f->st, "race", 4, "late", 4, PW, PW_LEN, good_hash, T0),
			                 CSRF_LOCKED_OUT);
		else
			assert_int_equal(csrf_reauth(f->ctx, f->st, "late", 4, "shared", 6, PW, PW_LEN, good_hash, T0),
			                 CSRF_LOCKED_OUT);
	}
	assert_int_equal(atomic_load(&verify_calls), 2);
}

/* The right password arriving while wrong ones are still inside Argon2,
 * after they have used up the limit, is refused: the wrong ones were
 * counted when they started, not when they finished. */
static void test_concurrent_right_after_limit(void **state)
{
	fixture *f = *state;
	pthread_t t[RACERS - 1];
	racer rs[RACERS - 1];
	int failed = 0, locked = 0, waited_ms = 0;

	csrf_ctx_set_reauth_policy(f->ctx, 2, 60, 300);
	for (int i = 0; i < RACERS - 1; i++) {
		rs[i] = (racer){f, NULL, "victim", {0}, 1, CSRF_OK};
		snprintf(rs[i].sid, sizeof rs[i].sid, "guess%d", i);
		assert_int_equal(pthread_create(&t[i], NULL, race_one, &rs[i]), 0);
	}
	/* until the limit is used up: counted, or (counting late) two wrong
	 * passwords inside Argon2 */
	while (counter(f, "fail:acct:victim") < 2 && atomic_load(&verify_holding) < 2) {
		if (waited_ms++ > 60000) {
			atomic_store(&release_verify, 1);
			fail_msg("the wrong passwords never got going");
		}
		sleep_ms(1);
	}
	csrf_reason r = csrf_reauth(f->ctx, f->st, "victim", 6, "owner", 5, PW, PW_LEN, good_hash, T0);
	atomic_store(&release_verify, 1);
	for (int i = 0; i < RACERS - 1; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		failed += rs[i].got == CSRF_REAUTH_FAILED;
		locked += rs[i].got == CSRF_LOCKED_OUT;
	}
	if (r != CSRF_LOCKED_OUT)
		fail_msg("the right password during the burst: %s", csrf_reason_name(r));
	assert_int_equal(csrf_reauth_recent(f->ctx, f->st, "owner", 5, T0), CSRF_REAUTH_REQUIRED);
	if (atomic_load(&verify_calls) != 2 || failed != 1 || locked != RACERS - 2)
		fail_msg("%d password checks, %d failed, %d locked out", atomic_load(&verify_calls), failed, locked);
	/* the lockout ends as usual, lockout_seconds after it began */
	fake_ms += 60 * 1000;
	assert_int_equal(csrf_reauth(f->ctx, f->st, "victim", 6, "owner", 5, PW, PW_LEN, good_hash, T0 + 60), CSRF_OK);
}

static void test_lockout_expires(void **state)
{
	fixture *f = *state;
	int64_t now = T0;
	/* default policy: 5 failures, 900 s, counted from the locking failure */
	static const attempt rows[] = {
	    {"frank", "s1", "a", 0, CSRF_REAUTH_FAILED},
	    {"frank", "s1", "b", 10, CSRF_REAUTH_FAILED},
	    {"frank", "s1", "c", 10, CSRF_REAUTH_FAILED},
	    {"frank", "s1", "d", 10, CSRF_REAUTH_FAILED},
	    {"frank", "s1", "e", 800, CSRF_LOCKED_OUT},  /* at 830 s */
	    {"frank", "s1", PW, 100, CSRF_LOCKED_OUT},   /* 930 s: past the first failure's 900 */
	    {"frank", "s1", PW, 799, CSRF_LOCKED_OUT},   /* 1729 s: 899 s after the lock */
	    {"frank", "s1", PW, 1, CSRF_OK},             /* 1730 s: over */
	    {"frank", "s1", "f", 0, CSRF_REAUTH_FAILED}, /* and counting starts again */
	};

	run_attempts(f, rows, sizeof rows / sizeof rows[0], &now);
	assert_int_equal(counter(f, "fail:acct:frank"), 1);
}

static void test_failures_expire_unlocked(void **state)
{
	fixture *f = *state;
	int64_t now = T0;
	/* (3 failures lock, fewer Argon2 runs for valgrind) failures short of
	 * the limit age out after the lockout time; they never add up */
	static const attempt rows[] = {
	    {"gina", "s1", "a", 0, CSRF_REAUTH_FAILED},
	    {"gina", "s1", "b", 899, CSRF_REAUTH_FAILED},
	    {"gina", "s1", "c", 1, CSRF_REAUTH_FAILED}, /* 900 s after the first */
	    {"gina", "s1", "d", 0, CSRF_REAUTH_FAILED},
	};

	csrf_ctx_set_reauth_policy(f->ctx, 3, 900, 300);
	run_attempts(f, rows, sizeof rows / sizeof rows[0], &now);
	assert_int_equal(counter(f, "fail:acct:gina"), 2);
}

static void test_success_resets(void **state)
{
	fixture *f = *state;
	int64_t now = T0;
	/* 3 failures lock: without the reset the first failure after the
	 * success would be the third */
	static const attempt rows[] = {
	    {"hank", "s1", "a", 0, CSRF_REAUTH_FAILED},
	    {"hank", "s1", "b", 0, CSRF_REAUTH_FAILED},
	    {"hank", "s1", PW, 0, CSRF_OK},
	    {"hank", "s1", "c", 0, CSRF_REAUTH_FAILED},
	    {"hank", "s1", "d", 0, CSRF_REAUTH_FAILED},
	    {"hank", "s1", "e", 0, CSRF_LOCKED_OUT},
	};

	csrf_ctx_set_reauth_policy(f->ctx, 3, 900, 300);
	run_attempts(f, rows, 3, &now);
	assert_int_equal(counter(f, "fail:acct:hank"), 0);
	assert_int_equal(counter(f, "fail:sess:s1"), 0);
	run_attempts(f, rows + 3, 3, &now);
}

static void test_policy(void **state)
{
	fixture *f = *state;
	int64_t now = T0;
	static const attempt rows[] = {
	    {"ivan", "s1", "a", 0, CSRF_REAUTH_FAILED},
	    {"ivan", "s1", "b", 0, CSRF_REAUTH_FAILED},
	    {"ivan", "s1", "c", 0, CSRF_LOCKED_OUT},
	    {"ivan", "s1", PW, 59, CSRF_LOCKED_OUT},
	    {"ivan", "s1", PW, 1, CSRF_OK},
	};

	csrf_ctx_set_reauth_policy(f->ctx, 3, 60, 10);
	run_attempts(f, rows, sizeof rows / sizeof rows[0], &now);
	assert_int_equal(csrf_reauth_recent(f->ctx, f->st, "s1", 2, now + 9), CSRF_OK);
	assert_int_equal(csrf_reauth_recent(f->ctx, f->st, "s1", 2, now + 10), CSRF_REAUTH_REQUIRED);

	/* max_failures 0 means 1: the first failure locks */
	csrf_ctx_set_reauth_policy(f->ctx, 0, 60, 10);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "judy", 4, "s1", 2, "no", 2, good_hash, now), CSRF_LOCKED_OUT);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "judy", 4, "s1", 2, PW, PW_LEN, good_hash, now), CSRF_LOCKED_OUT);
}

static void test_recent_window(void **state)
{
	fixture *f = *state;
	static const struct {
		int64_t at; /* seconds after the success, both clocks */
		csrf_reason want;
	} rows[] = {
	    {0, CSRF_OK},
	    {1, CSRF_OK},
	    {299, CSRF_OK},
	    {300, CSRF_REAUTH_REQUIRED},
	    {301, CSRF_REAUTH_REQUIRED},
	    {-5, CSRF_OK},               /* a server a little behind the one that wrote the mark */
	    {-31, CSRF_REAUTH_REQUIRED}, /* ... but not a mark from the future */
	};

	assert_int_equal(csrf_reauth(f->ctx, f->st, "kim", 3, "sess", 4, PW, PW_LEN, good_hash, T0), CSRF_OK);
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		csrf_reason r = csrf_reauth_recent(f->ctx, f->st, "sess", 4, T0 + rows[i].at);
		if (r != rows[i].want)
			fail_msg("row %zu: got %s", i, csrf_reason_name(r));
	}
	/* the store's TTL ends the mark as well, whatever `now` says */
	fake_ms += 300 * 1000;
	assert_int_equal(csrf_reauth_recent(f->ctx, f->st, "sess", 4, T0 + 1), CSRF_REAUTH_REQUIRED);
	/* a mark that is not a number does not count */
	assert_int_equal(csrf_store_set(f->st, "reauth:bad", 10, "yesterday", 9, 0), CSRF_OK);
	assert_int_equal(csrf_reauth_recent(f->ctx, f->st, "bad", 3, T0), CSRF_REAUTH_REQUIRED);
	/* now == 0: the current time */
	assert_int_equal(csrf_reauth(f->ctx, f->st, "kim", 3, "live", 4, PW, PW_LEN, good_hash, 0), CSRF_OK);
	assert_int_equal(csrf_reauth_recent(f->ctx, f->st, "live", 4, 0), CSRF_OK);
}

static void test_bad_counter_locks(void **state)
{
	fixture *f = *state;

	/* a counter that does not parse fails closed */
	assert_int_equal(csrf_store_set(f->st, "fail:acct:lee", 13, "garbage", 7, 0), CSRF_OK);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "lee", 3, "s", 1, PW, PW_LEN, good_hash, T0), CSRF_LOCKED_OUT);
}

static void test_arguments(void **state)
{
	fixture *f = *state;
	char big[300];

	memset(big, 'a', sizeof big);
	assert_int_equal(csrf_reauth(NULL, f->st, "a", 1, "s", 1, PW, PW_LEN, good_hash, T0), CSRF_ERR_ARG);
	assert_int_equal(csrf_reauth(f->ctx, NULL, "a", 1, "s", 1, PW, PW_LEN, good_hash, T0), CSRF_ERR_ARG);
	assert_int_equal(csrf_reauth(f->ctx, f->st, NULL, 1, "s", 1, PW, PW_LEN, good_hash, T0), CSRF_ERR_ARG);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "a", 0, "s", 1, PW, PW_LEN, good_hash, T0), CSRF_ERR_ARG);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "a", 1, NULL, 1, PW, PW_LEN, good_hash, T0), CSRF_ERR_ARG);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "a", 1, "s", 1, PW, PW_LEN, NULL, T0), CSRF_ERR_ARG);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "a", 1, "s", 1, NULL, 5, good_hash, T0), CSRF_ERR_ARG);
	/* a hash that is not Argon2id is the server's fault, not a failure */
	assert_int_equal(csrf_reauth(f->ctx, f->st, "a", 1, "s", 1, PW, PW_LEN, "$2y$10$abc", T0), CSRF_ERR_ARG);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "a", 1, "s", 1, PW, PW_LEN, "", T0), CSRF_ERR_ARG);
	assert_int_equal(counter(f, "fail:acct:a"), 0);
	/* names too long for a store key */
	assert_int_equal(csrf_reauth(f->ctx, f->st, big, sizeof big, "s", 1, PW, PW_LEN, good_hash, T0),
	                 CSRF_TOO_LARGE);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "a", 1, big, sizeof big, PW, PW_LEN, good_hash, T0),
	                 CSRF_TOO_LARGE);
	assert_int_equal(csrf_reauth(f->ctx, f->st, big, 246, big, 246, PW, PW_LEN, good_hash, T0), CSRF_OK);
	assert_int_equal(csrf_reauth_recent(f->ctx, f->st, big, sizeof big, T0), CSRF_TOO_LARGE);
	assert_int_equal(csrf_reauth_recent(NULL, f->st, "s", 1, T0), CSRF_ERR_ARG);
	assert_int_equal(csrf_reauth_recent(f->ctx, NULL, "s", 1, T0), CSRF_ERR_ARG);
	assert_int_equal(csrf_reauth_recent(f->ctx, f->st, NULL, 1, T0), CSRF_ERR_ARG);
	assert_int_equal(csrf_reauth_recent(f->ctx, f->st, "s", 0, T0), CSRF_ERR_ARG);
}

/* ---- a store that fails: everything fails closed ---- */

typedef struct {
	csrf_store base;
	int ok_calls; /* calls that still work before the store goes away */
	csrf_store *inner;
} flaky_store;

static int flaky_ok(csrf_store *st)
{
	flaky_store *s = (flaky_store *)st;
	return s->ok_calls-- > 0;
}

static csrf_reason flaky_get(csrf_store *st, const char *k, size_t kl, void *b, size_t c, size_t *l)
{
	return flaky_ok(st) ? csrf_store_get(((flaky_store *)st)->inner, k, kl, b, c, l) : CSRF_STORE_UNAVAILABLE;
}

static csrf_reason flaky_set(csrf_store *st, const char *k, size_t kl, const void *v, size_t vl, uint32_t t)
{
	return flaky_ok(st) ? csrf_store_set(((flaky_store *)st)->inner, k, kl, v, vl, t) : CSRF_STORE_UNAVAILABLE;
}

static csrf_reason flaky_del(csrf_store *st, const char *k, size_t kl)
{
	return flaky_ok(st) ? csrf_store_del(((flaky_store *)st)->inner, k, kl) : CSRF_STORE_UNAVAILABLE;
}

static csrf_reason flaky_incr(csrf_store *st, const char *k, size_t kl, uint32_t t, int64_t *v)
{
	return flaky_ok(st) ? csrf_store_incr(((flaky_store *)st)->inner, k, kl, t, v) : CSRF_STORE_UNAVAILABLE;
}

static void flaky_close(csrf_store *st)
{
	(void)st;
}

static const csrf_store_ops flaky_ops = {flaky_get, flaky_set, flaky_del, flaky_incr, flaky_close};

static void test_store_unavailable(void **state)
{
	fixture *f = *state;
	flaky_store fl = {{&flaky_ops}, 0, f->st};
	char acct[16], sid[16];

	/* The store fails at the first, second, ... call of each path; a
	 * fresh account and session each time, as a call that failed may
	 * already have counted. A wrong password: two reads, two counts. */
	for (int ok = 0; ok <= 4; ok++) {
		snprintf(acct, sizeof acct, "mia%d", ok);
		snprintf(sid, sizeof sid, "w%d", ok);
		fl.ok_calls = ok;
		csrf_reason r =
		    csrf_reauth(f->ctx, &fl.base, acct, strlen(acct), sid, strlen(sid), "wrong", 5, good_hash, T0);
		if (r != (ok < 4 ? CSRF_STORE_UNAVAILABLE : CSRF_REAUTH_FAILED))
			fail_msg("wrong password, store fails after %d calls: %s", ok, csrf_reason_name(r));
	}
	/* the right one: two reads, two counts, two resets, the mark */
	for (int ok = 0; ok <= 7; ok++) {
		snprintf(acct, sizeof acct, "mio%d", ok);
		snprintf(sid, sizeof sid, "r%d", ok);
		fl.ok_calls = ok;
		csrf_reason r =
		    csrf_reauth(f->ctx, &fl.base, acct, strlen(acct), sid, strlen(sid), PW, PW_LEN, good_hash, T0);
		if (r != (ok < 7 ? CSRF_STORE_UNAVAILABLE : CSRF_OK))
			fail_msg("right password, store fails after %d calls: %s", ok, csrf_reason_name(r));
		assert_int_equal(csrf_reauth_recent(f->ctx, f->st, sid, strlen(sid), T0),
		                 ok < 7 ? CSRF_REAUTH_REQUIRED : CSRF_OK);
	}
	fl.ok_calls = 0;
	assert_int_equal(csrf_reauth(f->ctx, &fl.base, "mia", 3, "s", 1, NULL, 0, good_hash, T0),
	                 CSRF_STORE_UNAVAILABLE);
	fl.ok_calls = 1; /* the session's counter cannot be read */
	assert_int_equal(csrf_reauth(f->ctx, &fl.base, "mia", 3, "s", 1, NULL, 0, good_hash, T0),
	                 CSRF_STORE_UNAVAILABLE);
	assert_int_equal(csrf_reauth_recent(f->ctx, &fl.base, "r7", 2, T0), CSRF_STORE_UNAVAILABLE);
	fl.ok_calls = 1;
	assert_int_equal(csrf_reauth_recent(f->ctx, &fl.base, "r7", 2, T0), CSRF_OK);

	/* the locking failure must also renew the lockout of the account and
	 * of the session, or it fails closed */
	csrf_ctx_set_reauth_policy(f->ctx, 1, 60, 10);
	fl.ok_calls = 4;
	assert_int_equal(csrf_reauth(f->ctx, &fl.base, "nia", 3, "s1", 2, "wrong", 5, good_hash, T0),
	                 CSRF_STORE_UNAVAILABLE);
	fl.ok_calls = 5;
	assert_int_equal(csrf_reauth(f->ctx, &fl.base, "nil", 3, "s2", 2, "wrong", 5, good_hash, T0),
	                 CSRF_STORE_UNAVAILABLE);
	fl.ok_calls = 6;
	assert_int_equal(csrf_reauth(f->ctx, &fl.base, "ola", 3, "s3", 2, "wrong", 5, good_hash, T0), CSRF_LOCKED_OUT);
	/* a counter that does not count (not a number) locks, as it does when read */
	assert_int_equal(csrf_store_set(f->st, "fail:sess:s4", 12, "x", 1, 0), CSRF_OK);
	fl.ok_calls = 1; /* the account is read; the session's read fails closed */
	assert_int_equal(csrf_reauth(f->ctx, &fl.base, "pia", 3, "s4", 2, PW, PW_LEN, good_hash, T0),
	                 CSRF_STORE_UNAVAILABLE);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "pia", 3, "s4", 2, PW, PW_LEN, good_hash, T0), CSRF_LOCKED_OUT);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hash),
	    T(test_right_password),
	    T(test_wrong_passwords_count),
	    T(test_lockout),
	    T(test_session_lockout),
	    T(test_concurrent_wrong),
	    T(test_concurrent_right_after_limit),
	    T(test_lockout_expires),
	    T(test_failures_expire_unlocked),
	    T(test_success_resets),
	    T(test_policy),
	    T(test_recent_window),
	    T(test_bad_counter_locks),
	    T(test_arguments),
	    T(test_store_unavailable),
	};
	return cmocka_run_group_tests(tests, group_setup, NULL);
}
