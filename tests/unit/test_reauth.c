/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_reauth.c - src/session/reauth.c: Argon2id hashes, counting of wrong
 * passwords per account and per session, lockout (refused even with the
 * right password) and its end, reset on success, the recent window,
 * concurrent attempts (counted before Argon2 runs, so a burst gets no
 * more guesses than the limit), and failing closed when the store does
 * not answer or is full. Login throttling: per account and client, locks
 * that double, unknown accounts, and never a lock of the owner's step-up.
 * A flood of anonymous entries into a full store lifts no lockout. Time
 * is controlled twice: the `now` argument and the memory store's clock
 * hook. Built without re-authentication, every call is a config error.
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

#include "session/session_internal.h"
#include "testutil.h"

#if CSRF_WITH_REAUTH
#include <sodium.h>

#define PW "correct horse battery staple"
#define PW_LEN (sizeof PW - 1)
#define T0 1700000000

static char good_hash[CSRF_PWHASH_LEN];
/* The same password at libsodium's lowest cost: Argon2id all the same,
 * for the many checks below (valgrind runs this file too); good_hash, at
 * the cost csrf_password_hash sets, is for the hashing test. */
static char cheap_hash[crypto_pwhash_STRBYTES];
static int64_t fake_ms;

/* ---- counting Argon2 runs ----
 * The library is linked statically, so this definition takes the place
 * of libsodium's for src/session/reauth.c: every password check is counted, and
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
	csrfi_store_memory_set_clock(f.st, fake_clock, NULL);
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
	if (crypto_pwhash_str(cheap_hash, PW, PW_LEN, crypto_pwhash_OPSLIMIT_MIN, crypto_pwhash_MEMLIMIT_MIN) != 0)
		return -1;
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
		                            a->password, a->password ? strlen(a->password) : 0, cheap_hash, *now);
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
	assert_int_equal(csrfx_parse_i64(buf, len, &v), CSRF_OK);
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
	assert_int_equal(csrf_reauth(f->ctx, f->st, "alice", 5, "s1", 2, PW, PW_LEN, cheap_hash, now), CSRF_OK);
	assert_int_equal(csrf_reauth_recent(f->ctx, f->st, "s1", 2, now), CSRF_OK);
	/* another session is not recent */
	assert_int_equal(csrf_reauth_recent(f->ctx, f->st, "s2", 2, now), CSRF_REAUTH_REQUIRED);
	/* no password: required, nothing counted */
	assert_int_equal(csrf_reauth(f->ctx, f->st, "alice", 5, "s1", 2, NULL, 0, cheap_hash, now),
	                 CSRF_REAUTH_REQUIRED);
	assert_int_equal(counter(f, "fail:acct:alice"), 0);
	/* a prefix of the password, or the password with more, is wrong */
	assert_int_equal(csrf_reauth(f->ctx, f->st, "alice", 5, "s1", 2, PW, PW_LEN - 1, cheap_hash, now),
	                 CSRF_REAUTH_FAILED);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "alice", 5, "s1", 2, PW "!", PW_LEN + 1, cheap_hash, now),
	                 CSRF_REAUTH_FAILED);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "alice", 5, "s1", 2, "", 0, cheap_hash, now), CSRF_REAUTH_FAILED);
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

/* A counter below 1 is none that the lockout wrote (INCR starts at 1,
 * a renewed lockout holds the count): a store that answers one, lying or
 * written by someone else, locks rather than letting attempts through
 * uncounted. */
static void test_counter_below_one_locks(void **state)
{
	fixture *f = *state;
	int64_t now = T0;
	static const char *vals[] = {"-5", "0", "-1"};

	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		char acct[32];
		int n = snprintf(acct, sizeof acct, "fail:acct:low%zu", i);
		assert_int_equal(csrf_store_set(f->st, acct, (size_t)n, vals[i], strlen(vals[i]), 0), CSRF_OK);
		csrf_reason r =
		    csrf_reauth(f->ctx, f->st, acct + 10, (size_t)n - 10, "sL", 2, "nope", 4, cheap_hash, now);
		if (r != CSRF_LOCKED_OUT)
			fail_msg("stored counter %s: got %s, want locked_out", vals[i], csrf_reason_name(r));
		r = csrf_reauth(f->ctx, f->st, acct + 10, (size_t)n - 10, "sL", 2, PW, PW_LEN, cheap_hash, now);
		if (r != CSRF_LOCKED_OUT)
			fail_msg("stored counter %s, right password: got %s, want locked_out", vals[i],
			         csrf_reason_name(r));
	}
	assert_int_equal(atomic_load(&verify_calls), 0);
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
	int login; /* csrf_login_attempt: account and sid as account and client */
} racer;

static void *race_one(void *arg)
{
	racer *r = arg;

	hold_in_verify = r->hold;
	if (r->start != NULL)
		pthread_barrier_wait(r->start);
	if (r->login)
		r->got = csrf_login_attempt(r->f->ctx, r->f->st, r->account, strlen(r->account), r->sid, strlen(r->sid),
		                            "wrong", 5, cheap_hash);
	else
		r->got = csrf_reauth(r->f->ctx, r->f->st, r->account, strlen(r->account), r->sid, strlen(r->sid),
		                     "wrong", 5, cheap_hash, T0);
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
			rs[i] = (racer){f, &start, {0}, {0}, 0, CSRF_OK, 0};
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
			assert_int_equal(csrf_reauth(f->ctx, f->st, "race", 4, "late", 4, PW, PW_LEN, cheap_hash, T0),
			                 CSRF_LOCKED_OUT);
		else
			assert_int_equal(csrf_reauth(f->ctx, f->st, "late", 4, "shared", 6, PW, PW_LEN, cheap_hash, T0),
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
		rs[i] = (racer){f, NULL, "victim", {0}, 1, CSRF_OK, 0};
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
	csrf_reason r = csrf_reauth(f->ctx, f->st, "victim", 6, "owner", 5, PW, PW_LEN, cheap_hash, T0);
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
	assert_int_equal(csrf_reauth(f->ctx, f->st, "victim", 6, "owner", 5, PW, PW_LEN, cheap_hash, T0 + 60), CSRF_OK);
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
	assert_int_equal(csrf_reauth(f->ctx, f->st, "judy", 4, "s1", 2, "no", 2, cheap_hash, now), CSRF_LOCKED_OUT);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "judy", 4, "s1", 2, PW, PW_LEN, cheap_hash, now), CSRF_LOCKED_OUT);
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

	assert_int_equal(csrf_reauth(f->ctx, f->st, "kim", 3, "sess", 4, PW, PW_LEN, cheap_hash, T0), CSRF_OK);
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
	assert_int_equal(csrf_reauth(f->ctx, f->st, "kim", 3, "live", 4, PW, PW_LEN, cheap_hash, 0), CSRF_OK);
	assert_int_equal(csrf_reauth_recent(f->ctx, f->st, "live", 4, 0), CSRF_OK);
}

static void test_bad_counter_locks(void **state)
{
	fixture *f = *state;

	/* a counter that does not parse fails closed */
	assert_int_equal(csrf_store_set(f->st, "fail:acct:lee", 13, "garbage", 7, 0), CSRF_OK);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "lee", 3, "s", 1, PW, PW_LEN, cheap_hash, T0), CSRF_LOCKED_OUT);
}

static void test_arguments(void **state)
{
	fixture *f = *state;
	char big[300];

	memset(big, 'a', sizeof big);
	assert_int_equal(csrf_reauth(NULL, f->st, "a", 1, "s", 1, PW, PW_LEN, cheap_hash, T0), CSRF_ERR_ARG);
	assert_int_equal(csrf_reauth(f->ctx, NULL, "a", 1, "s", 1, PW, PW_LEN, cheap_hash, T0), CSRF_ERR_ARG);
	assert_int_equal(csrf_reauth(f->ctx, f->st, NULL, 1, "s", 1, PW, PW_LEN, cheap_hash, T0), CSRF_ERR_ARG);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "a", 0, "s", 1, PW, PW_LEN, cheap_hash, T0), CSRF_ERR_ARG);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "a", 1, NULL, 1, PW, PW_LEN, cheap_hash, T0), CSRF_ERR_ARG);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "a", 1, "s", 1, PW, PW_LEN, NULL, T0), CSRF_ERR_ARG);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "a", 1, "s", 1, NULL, 5, cheap_hash, T0), CSRF_ERR_ARG);
	/* a hash that is not Argon2id is the server's fault, not a failure */
	assert_int_equal(csrf_reauth(f->ctx, f->st, "a", 1, "s", 1, PW, PW_LEN, "$2y$10$abc", T0), CSRF_ERR_ARG);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "a", 1, "s", 1, PW, PW_LEN, "", T0), CSRF_ERR_ARG);
	assert_int_equal(counter(f, "fail:acct:a"), 0);
	/* names too long for a store key */
	assert_int_equal(csrf_reauth(f->ctx, f->st, big, sizeof big, "s", 1, PW, PW_LEN, cheap_hash, T0),
	                 CSRF_TOO_LARGE);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "a", 1, big, sizeof big, PW, PW_LEN, cheap_hash, T0),
	                 CSRF_TOO_LARGE);
	assert_int_equal(csrf_reauth(f->ctx, f->st, big, 246, big, 246, PW, PW_LEN, cheap_hash, T0), CSRF_OK);
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

static const csrfi_store_ops flaky_ops = {flaky_get, flaky_set, flaky_del, flaky_incr, flaky_close};

static void test_store_unavailable(void **state)
{
	fixture *f = *state;
	flaky_store fl = {{&flaky_ops, {NULL, NULL}}, 0, f->st};
	char acct[16], sid[16];

	/* The store fails at the first, second, ... call of each path; a
	 * fresh account and session each time, as a call that failed may
	 * already have counted. A wrong password: two reads, two counts. */
	for (int ok = 0; ok <= 4; ok++) {
		snprintf(acct, sizeof acct, "mia%d", ok);
		snprintf(sid, sizeof sid, "w%d", ok);
		fl.ok_calls = ok;
		csrf_reason r =
		    csrf_reauth(f->ctx, &fl.base, acct, strlen(acct), sid, strlen(sid), "wrong", 5, cheap_hash, T0);
		if (r != (ok < 4 ? CSRF_STORE_UNAVAILABLE : CSRF_REAUTH_FAILED))
			fail_msg("wrong password, store fails after %d calls: %s", ok, csrf_reason_name(r));
	}
	/* the right one: two reads, two counts, two resets, the mark */
	for (int ok = 0; ok <= 7; ok++) {
		snprintf(acct, sizeof acct, "mio%d", ok);
		snprintf(sid, sizeof sid, "r%d", ok);
		fl.ok_calls = ok;
		csrf_reason r =
		    csrf_reauth(f->ctx, &fl.base, acct, strlen(acct), sid, strlen(sid), PW, PW_LEN, cheap_hash, T0);
		if (r != (ok < 7 ? CSRF_STORE_UNAVAILABLE : CSRF_OK))
			fail_msg("right password, store fails after %d calls: %s", ok, csrf_reason_name(r));
		assert_int_equal(csrf_reauth_recent(f->ctx, f->st, sid, strlen(sid), T0),
		                 ok < 7 ? CSRF_REAUTH_REQUIRED : CSRF_OK);
	}
	fl.ok_calls = 0;
	assert_int_equal(csrf_reauth(f->ctx, &fl.base, "mia", 3, "s", 1, NULL, 0, cheap_hash, T0),
	                 CSRF_STORE_UNAVAILABLE);
	fl.ok_calls = 1; /* the session's counter cannot be read */
	assert_int_equal(csrf_reauth(f->ctx, &fl.base, "mia", 3, "s", 1, NULL, 0, cheap_hash, T0),
	                 CSRF_STORE_UNAVAILABLE);
	assert_int_equal(csrf_reauth_recent(f->ctx, &fl.base, "r7", 2, T0), CSRF_STORE_UNAVAILABLE);
	fl.ok_calls = 1;
	assert_int_equal(csrf_reauth_recent(f->ctx, &fl.base, "r7", 2, T0), CSRF_OK);

	/* the locking failure must also renew the lockout of the account and
	 * of the session, or it fails closed */
	csrf_ctx_set_reauth_policy(f->ctx, 1, 60, 10);
	fl.ok_calls = 4;
	assert_int_equal(csrf_reauth(f->ctx, &fl.base, "nia", 3, "s1", 2, "wrong", 5, cheap_hash, T0),
	                 CSRF_STORE_UNAVAILABLE);
	fl.ok_calls = 5;
	assert_int_equal(csrf_reauth(f->ctx, &fl.base, "nil", 3, "s2", 2, "wrong", 5, cheap_hash, T0),
	                 CSRF_STORE_UNAVAILABLE);
	fl.ok_calls = 6;
	assert_int_equal(csrf_reauth(f->ctx, &fl.base, "ola", 3, "s3", 2, "wrong", 5, cheap_hash, T0), CSRF_LOCKED_OUT);
	/* a counter that does not count (not a number) locks, as it does when read */
	assert_int_equal(csrf_store_set(f->st, "fail:sess:s4", 12, "x", 1, 0), CSRF_OK);
	fl.ok_calls = 1; /* the account is read; the session's read fails closed */
	assert_int_equal(csrf_reauth(f->ctx, &fl.base, "pia", 3, "s4", 2, PW, PW_LEN, cheap_hash, T0),
	                 CSRF_STORE_UNAVAILABLE);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "pia", 3, "s4", 2, PW, PW_LEN, cheap_hash, T0), CSRF_LOCKED_OUT);
}

/* ---- login throttling ---- */

/* One login: account, client, password, seconds to move both clocks
 * forward first, and the expected answer. hash NULL: no such account. */
typedef struct {
	const char *account;
	const char *client;
	const char *password;
	int64_t advance_s;
	csrf_reason want;
} login_row;

static void run_logins(fixture *f, const login_row *rows, size_t n, const char *hash)
{
	for (size_t i = 0; i < n; i++) {
		const login_row *a = &rows[i];
		fake_ms += a->advance_s * 1000;
		csrf_reason r = csrf_login_attempt(f->ctx, f->st, a->account, strlen(a->account), a->client,
		                                   strlen(a->client), a->password, strlen(a->password), hash);
		if (r != a->want)
			fail_msg("login %zu: got %s, want %s", i, csrf_reason_name(r), csrf_reason_name(a->want));
	}
}

static void test_login_per_client(void **state)
{
	fixture *f = *state;
	static const login_row rows[] = {
	    {"bob", "198.51.100.7", "x1", 0, CSRF_REAUTH_FAILED},
	    {"bob", "198.51.100.7", "x2", 1, CSRF_REAUTH_FAILED},
	    {"bob", "198.51.100.7", "x3", 1, CSRF_REAUTH_FAILED},
	    {"bob", "198.51.100.7", "x4", 1, CSRF_REAUTH_FAILED},
	    {"bob", "198.51.100.7", "x5", 1, CSRF_LOCKED_OUT},    /* the 5th locks this client */
	    {"bob", "198.51.100.7", PW, 1, CSRF_LOCKED_OUT},      /* even with the right password */
	    {"bob", "198.51.100.7", "x6", 0, CSRF_LOCKED_OUT},    /* refused unchecked */
	    {"bob", "203.0.113.9", PW, 0, CSRF_OK},               /* bob elsewhere: in */
	    {"carl", "198.51.100.7", PW, 0, CSRF_OK},             /* that client, another account: in */
	    {"bob", "198.51.100.7", PW, 58, CSRF_LOCKED_OUT},     /* 59 s after the locking failure */
	    {"bob", "198.51.100.7", PW, 1, CSRF_OK},              /* 60 s: over */
	    {"bob", "198.51.100.7", "x7", 0, CSRF_REAUTH_FAILED}, /* and counted from zero */
	};

	run_logins(f, rows, sizeof rows / sizeof rows[0], cheap_hash);
	/* 5 failures, 3 successes, the last failure: checked; the refusals not */
	assert_int_equal(atomic_load(&verify_calls), 9);
	/* logins never touch the step-up counters */
	assert_int_equal(counter(f, "fail:acct:bob"), 0);
	assert_int_equal(counter(f, "fail:acct:carl"), 0);
}

/* The attack: anyone can make wrong logins for bob. They lock
 * that client out of bob's account, never bob's signed-in step-up; and
 * step-up failures still count per session and per account. */
static void test_login_never_locks_stepup(void **state)
{
	fixture *f = *state;
	char client[32];

	for (int i = 0; i < 12; i++) {
		/* from one address, then from many */
		snprintf(client, sizeof client, "anon-%d", i < 6 ? 0 : i);
		csrf_reason r =
		    csrf_login_attempt(f->ctx, f->st, "bob", 3, client, strlen(client), "guess", 5, cheap_hash);
		assert_true(r == CSRF_REAUTH_FAILED || r == CSRF_LOCKED_OUT);
	}
	assert_int_equal(csrf_reauth(f->ctx, f->st, "bob", 3, "bob-session", 11, PW, PW_LEN, cheap_hash, T0), CSRF_OK);
	assert_int_equal(csrf_reauth_recent(f->ctx, f->st, "bob-session", 11, T0), CSRF_OK);
	/* bob's own login from his own client works too */
	assert_int_equal(csrf_login_attempt(f->ctx, f->st, "bob", 3, "bob-laptop", 10, PW, PW_LEN, cheap_hash),
	                 CSRF_OK);
	/* step-up lockout is unchanged: per session and per account */
	csrf_ctx_set_reauth_policy(f->ctx, 2, 60, 300);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "bob", 3, "stolen", 6, "no", 2, cheap_hash, T0),
	                 CSRF_REAUTH_FAILED);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "bob", 3, "stolen", 6, "no", 2, cheap_hash, T0), CSRF_LOCKED_OUT);
	assert_int_equal(csrf_reauth(f->ctx, f->st, "bob", 3, "bob-session", 11, PW, PW_LEN, cheap_hash, T0),
	                 CSRF_LOCKED_OUT);
	/* and a login is not a step-up: the step-up lockout does not stop it */
	assert_int_equal(csrf_login_attempt(f->ctx, f->st, "bob", 3, "bob-laptop", 10, PW, PW_LEN, cheap_hash),
	                 CSRF_OK);
}

static void test_login_locks_double(void **state)
{
	fixture *f = *state;
	/* 2 failures lock for 10 s, then 20 s, then 35 s (the cap) */
	static const login_row rows[] = {
	    {"dan", "c", "a", 0, CSRF_REAUTH_FAILED},
	    {"dan", "c", "b", 0, CSRF_LOCKED_OUT},
	    {"dan", "c", PW, 9, CSRF_LOCKED_OUT},
	    {"dan", "c", "c", 1, CSRF_REAUTH_FAILED}, /* 10 s: the first lock is over */
	    {"dan", "c", "d", 0, CSRF_LOCKED_OUT},    /* the second lock: 20 s */
	    {"dan", "c", PW, 19, CSRF_LOCKED_OUT},
	    {"dan", "c", "e", 1, CSRF_REAUTH_FAILED},
	    {"dan", "c", "f", 0, CSRF_LOCKED_OUT}, /* the third: 40 s, capped at 35 */
	    {"dan", "c", PW, 34, CSRF_LOCKED_OUT},
	    {"dan", "c", PW, 1, CSRF_OK},             /* a success forgets the locks */
	    {"dan", "c", "g", 0, CSRF_REAUTH_FAILED}, /* so the next lock is 10 s again */
	    {"dan", "c", "h", 0, CSRF_LOCKED_OUT},
	    {"dan", "c", PW, 10, CSRF_OK},
	};

	csrf_ctx_set_login_policy(f->ctx, 2, 10, 35);
	run_logins(f, rows, sizeof rows / sizeof rows[0], cheap_hash);
}

static void test_login_policy_edges(void **state)
{
	fixture *f = *state;
	/* 0 failures counts as 1, a 0 s lock as 1 s, a cap below the lock as the lock */
	static const login_row rows[] = {
	    {"eve", "c", "a", 0, CSRF_LOCKED_OUT},
	    {"eve", "c", PW, 0, CSRF_LOCKED_OUT},
	    {"eve", "c", PW, 1, CSRF_OK},
	};
	static const login_row slow[] = {
	    {"fay", "c", "a", 0, CSRF_REAUTH_FAILED},
	    {"fay", "c", "b", 0, CSRF_REAUTH_FAILED},
	    {"fay", "c", "c", 0, CSRF_LOCKED_OUT},
	    {"fay", "c", "d", 30, CSRF_REAUTH_FAILED}, /* every lock is 30 s */
	    {"fay", "c", "e", 0, CSRF_REAUTH_FAILED},
	    {"fay", "c", "f", 0, CSRF_LOCKED_OUT},
	    {"fay", "c", PW, 29, CSRF_LOCKED_OUT},
	    {"fay", "c", PW, 1, CSRF_OK},
	};

	csrf_ctx_set_login_policy(f->ctx, 0, 0, 0);
	run_logins(f, rows, sizeof rows / sizeof rows[0], cheap_hash);
	csrf_ctx_set_login_policy(f->ctx, 3, 30, 5);
	run_logins(f, slow, sizeof slow / sizeof slow[0], cheap_hash);
	csrf_ctx_set_login_policy(NULL, 1, 1, 1); /* a no-op */
}

static void test_login_unknown_account(void **state)
{
	fixture *f = *state;
	static const login_row rows[] = {
	    {"ghost", "c", "a", 0, CSRF_REAUTH_FAILED},
	    {"ghost", "c", PW, 0, CSRF_REAUTH_FAILED}, /* no password opens a missing account */
	    {"ghost", "c", "", 0, CSRF_REAUTH_FAILED},
	    {"ghost", "c", "b", 0, CSRF_REAUTH_FAILED},
	    {"ghost", "c", "c", 0, CSRF_LOCKED_OUT}, /* throttled like any other */
	    {"ghost", "c", "d", 0, CSRF_LOCKED_OUT},
	    {"ghost", "other", "e", 0, CSRF_REAUTH_FAILED},
	};

	run_logins(f, rows, sizeof rows / sizeof rows[0], NULL);
	/* the dummy hash is checked as a real one would be */
	assert_int_equal(atomic_load(&verify_calls), 6);
}

/* account and client are hashed together without running into each
 * other: ("ab", "c") and ("a", "bc") are different pairs; binary bytes
 * and the length limits are honoured. */
static void test_login_keys(void **state)
{
	fixture *f = *state;
	char big[4097];

	csrf_ctx_set_login_policy(f->ctx, 1, 60, 60);
	assert_int_equal(csrf_login_attempt(f->ctx, f->st, "ab", 2, "c", 1, "x", 1, cheap_hash), CSRF_LOCKED_OUT);
	assert_int_equal(csrf_login_attempt(f->ctx, f->st, "ab", 2, "c", 1, PW, PW_LEN, cheap_hash), CSRF_LOCKED_OUT);
	assert_int_equal(csrf_login_attempt(f->ctx, f->st, "a", 1, "bc", 2, PW, PW_LEN, cheap_hash), CSRF_OK);
	assert_int_equal(csrf_login_attempt(f->ctx, f->st, "abc", 3, "", 0, PW, PW_LEN, cheap_hash), CSRF_ERR_ARG);
	/* a client key with NUL bytes, read as (pointer, length) */
	assert_int_equal(csrf_login_attempt(f->ctx, f->st, "ab", 2, "c\0d", 3, PW, PW_LEN, cheap_hash), CSRF_OK);
	char *g = tu_guard_copy("c\0", 2);
	assert_int_equal(csrf_login_attempt(f->ctx, f->st, "ab", 2, g, 2, PW, PW_LEN, cheap_hash), CSRF_OK);
	tu_guard_free(g);
	memset(big, 'a', sizeof big);
	assert_int_equal(csrf_login_attempt(f->ctx, f->st, big, 4096, big, 4096, PW, PW_LEN, cheap_hash), CSRF_OK);
	assert_int_equal(csrf_login_attempt(f->ctx, f->st, big, 4097, "c", 1, PW, PW_LEN, cheap_hash), CSRF_TOO_LARGE);
	assert_int_equal(csrf_login_attempt(f->ctx, f->st, "a", 1, big, 4097, PW, PW_LEN, cheap_hash), CSRF_TOO_LARGE);
	/* arguments */
	assert_int_equal(csrf_login_attempt(NULL, f->st, "a", 1, "c", 1, PW, PW_LEN, cheap_hash), CSRF_ERR_ARG);
	assert_int_equal(csrf_login_attempt(f->ctx, NULL, "a", 1, "c", 1, PW, PW_LEN, cheap_hash), CSRF_ERR_ARG);
	assert_int_equal(csrf_login_attempt(f->ctx, f->st, NULL, 1, "c", 1, PW, PW_LEN, cheap_hash), CSRF_ERR_ARG);
	assert_int_equal(csrf_login_attempt(f->ctx, f->st, "", 0, "c", 1, PW, PW_LEN, cheap_hash), CSRF_ERR_ARG);
	assert_int_equal(csrf_login_attempt(f->ctx, f->st, "a", 1, NULL, 1, PW, PW_LEN, cheap_hash), CSRF_ERR_ARG);
	assert_int_equal(csrf_login_attempt(f->ctx, f->st, "a", 1, "c", 1, NULL, 0, cheap_hash), CSRF_ERR_ARG);
	assert_int_equal(csrf_login_attempt(f->ctx, f->st, "a", 1, "c", 1, PW, PW_LEN, "$2y$10$abc"), CSRF_ERR_ARG);
	/* none of these counted anything for "a" at "c" */
	assert_int_equal(csrf_login_attempt(f->ctx, f->st, "a", 1, "c", 1, PW, PW_LEN, cheap_hash), CSRF_OK);
}

static void test_login_concurrent(void **state)
{
	fixture *f = *state;
	pthread_barrier_t start;
	pthread_t t[RACERS];
	racer rs[RACERS];
	int failed = 0, locked = 0;

	csrf_ctx_set_login_policy(f->ctx, 3, 60, 60);
	assert_int_equal(pthread_barrier_init(&start, NULL, RACERS), 0);
	for (int i = 0; i < RACERS; i++) {
		rs[i] = (racer){f, &start, "victim", "one-client", 0, CSRF_OK, 1};
		assert_int_equal(pthread_create(&t[i], NULL, race_one, &rs[i]), 0);
	}
	for (int i = 0; i < RACERS; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		failed += rs[i].got == CSRF_REAUTH_FAILED;
		locked += rs[i].got == CSRF_LOCKED_OUT;
	}
	pthread_barrier_destroy(&start);
	if (atomic_load(&verify_calls) != 3 || failed != 2 || locked != RACERS - 2)
		fail_msg("%d password checks, %d failed, %d locked out", atomic_load(&verify_calls), failed, locked);
}

static void test_login_store_unavailable(void **state)
{
	fixture *f = *state;
	flaky_store fl = {{&flaky_ops, {NULL, NULL}}, 0, f->st};
	char acct[16];

	/* a wrong password: a read and a count; the locking one also counts
	 * the strike and renews the lock; the right one resets two keys */
	for (int ok = 0; ok <= 2; ok++) {
		snprintf(acct, sizeof acct, "w%d", ok);
		fl.ok_calls = ok;
		csrf_reason r = csrf_login_attempt(f->ctx, &fl.base, acct, strlen(acct), "c", 1, "x", 1, cheap_hash);
		if (r != (ok < 2 ? CSRF_STORE_UNAVAILABLE : CSRF_REAUTH_FAILED))
			fail_msg("wrong password, store fails after %d calls: %s", ok, csrf_reason_name(r));
	}
	for (int ok = 0; ok <= 4; ok++) {
		snprintf(acct, sizeof acct, "r%d", ok);
		fl.ok_calls = ok;
		csrf_reason r =
		    csrf_login_attempt(f->ctx, &fl.base, acct, strlen(acct), "c", 1, PW, PW_LEN, cheap_hash);
		if (r != (ok < 4 ? CSRF_STORE_UNAVAILABLE : CSRF_OK))
			fail_msg("right password, store fails after %d calls: %s", ok, csrf_reason_name(r));
	}
	csrf_ctx_set_login_policy(f->ctx, 1, 60, 60);
	for (int ok = 2; ok <= 4; ok++) {
		snprintf(acct, sizeof acct, "l%d", ok);
		fl.ok_calls = ok;
		csrf_reason r = csrf_login_attempt(f->ctx, &fl.base, acct, strlen(acct), "c", 1, "x", 1, cheap_hash);
		if (r != (ok < 4 ? CSRF_STORE_UNAVAILABLE : CSRF_LOCKED_OUT))
			fail_msg("locking password, store fails after %d calls: %s", ok, csrf_reason_name(r));
	}
}

/* ---- a full store ---- */

/* The flood: a store at its bound, filled with anonymous 24-hour
 * entries after the lockouts began. Still locked out, the right password
 * still refused, until the locks end by their own time. */
static void test_flood_keeps_lockout(void **state)
{
	fixture *f = *state;
	csrf_store *small = NULL;
	char key[32];
	int64_t now = T0;

	assert_int_equal(csrf_store_open(&small, "memory://?max=1000"), CSRF_OK);
	csrfi_store_memory_set_clock(small, fake_clock, NULL);
	csrf_ctx_set_reauth_policy(f->ctx, 5, 900, 300);
	for (int i = 0; i < 6; i++)
		assert_int_equal(
		    csrf_reauth(f->ctx, small, "alice", 5, "mallory-sess", 12, "guess", 5, cheap_hash, now),
		    i < 4 ? CSRF_REAUTH_FAILED : CSRF_LOCKED_OUT);
	for (int i = 0; i < 5; i++)
		assert_int_equal(csrf_login_attempt(f->ctx, small, "alice", 5, "mallory", 7, "guess", 5, cheap_hash),
		                 i < 4 ? CSRF_REAUTH_FAILED : CSRF_LOCKED_OUT);
	for (int i = 0; i < 1050; i++) {
		int n = snprintf(key, sizeof key, "presession:%d", i);
		assert_int_equal(csrf_store_set(small, key, (size_t)n, "anon", 4, 86400), CSRF_OK);
	}
	assert_int_equal(csrfi_store_memory_count(small), 1000);
	assert_int_equal(csrf_reauth(f->ctx, small, "alice", 5, "alice-sess", 10, PW, PW_LEN, cheap_hash, now),
	                 CSRF_LOCKED_OUT);
	assert_int_equal(csrf_reauth(f->ctx, small, "alice", 5, "mallory-sess", 12, PW, PW_LEN, cheap_hash, now),
	                 CSRF_LOCKED_OUT);
	assert_int_equal(csrf_login_attempt(f->ctx, small, "alice", 5, "mallory", 7, PW, PW_LEN, cheap_hash),
	                 CSRF_LOCKED_OUT);
	/* the login lock ends after its minute, the step-up lock after 900 s */
	fake_ms += 60 * 1000;
	now += 60;
	assert_int_equal(csrf_login_attempt(f->ctx, small, "alice", 5, "mallory", 7, PW, PW_LEN, cheap_hash), CSRF_OK);
	assert_int_equal(csrf_reauth(f->ctx, small, "alice", 5, "alice-sess", 10, PW, PW_LEN, cheap_hash, now),
	                 CSRF_LOCKED_OUT);
	fake_ms += 840 * 1000;
	now += 840;
	assert_int_equal(csrf_reauth(f->ctx, small, "alice", 5, "alice-sess", 10, PW, PW_LEN, cheap_hash, now),
	                 CSRF_OK);
	csrf_store_close(small);
}

/* A store holding only counters refuses the new ones: the attempt is
 * refused (fail closed) and says why. */
static void test_full_store_fails_closed(void **state)
{
	fixture *f = *state;
	csrf_store *tiny = NULL;
	int64_t v;

	assert_int_equal(csrf_store_open(&tiny, "memory://?max=2"), CSRF_OK);
	csrfi_store_memory_set_clock(tiny, fake_clock, NULL);
	assert_int_equal(csrf_store_incr(tiny, "x", 1, 900, &v), CSRF_OK);
	assert_int_equal(csrf_store_incr(tiny, "y", 1, 900, &v), CSRF_OK);
	assert_int_equal(csrf_reauth(f->ctx, tiny, "olga", 4, "s", 1, PW, PW_LEN, cheap_hash, T0), CSRF_STORE_FULL);
	assert_int_equal(csrf_reauth(f->ctx, tiny, "olga", 4, "s", 1, "no", 2, cheap_hash, T0), CSRF_STORE_FULL);
	assert_int_equal(csrf_login_attempt(f->ctx, tiny, "olga", 4, "c", 1, PW, PW_LEN, cheap_hash), CSRF_STORE_FULL);
	assert_int_equal(csrf_reauth_recent(f->ctx, tiny, "s", 1, T0), CSRF_REAUTH_REQUIRED);
	/* nothing was let through, nothing Argon2 checked */
	assert_int_equal(atomic_load(&verify_calls), 0);
	csrf_store_close(tiny);
}

#else /* !CSRF_WITH_REAUTH */

/* Built without libsodium: every password function is a clear config
 * error, whatever the arguments, and the policy setters still work. */
static void test_built_without_reauth(void **state)
{
	csrf_ctx *ctx = NULL;
	csrf_store *st = NULL;
	char hash[CSRF_PWHASH_LEN];

	(void)state;
	assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
	assert_int_equal(csrf_store_open(&st, "memory"), CSRF_OK);
	csrf_ctx_set_reauth_policy(ctx, 3, 60, 60);
	csrf_ctx_set_login_policy(ctx, 3, 60, 60);
	assert_int_equal(csrf_password_hash("pw", 2, hash, sizeof hash), CSRF_ERR_CONFIG);
	assert_int_equal(csrf_reauth(ctx, st, "a", 1, "s", 1, "pw", 2, "$argon2id$x", 0), CSRF_ERR_CONFIG);
	assert_int_equal(csrf_reauth(ctx, st, "a", 1, "s", 1, NULL, 0, "$argon2id$x", 0), CSRF_ERR_CONFIG);
	assert_int_equal(csrf_reauth_recent(ctx, st, "s", 1, 0), CSRF_ERR_CONFIG);
	assert_int_equal(csrf_login_attempt(ctx, st, "a", 1, "c", 1, "pw", 2, NULL), CSRF_ERR_CONFIG);
	assert_int_equal(csrfi_store_memory_count(st), 0);
	csrf_store_close(st);
	csrf_ctx_free(ctx);
}

#endif /* CSRF_WITH_REAUTH */

int main(void)
{
#if CSRF_WITH_REAUTH
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hash),
	    T(test_right_password),
	    T(test_wrong_passwords_count),
	    T(test_lockout),
	    T(test_session_lockout),
	    T(test_counter_below_one_locks),
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
	    T(test_login_per_client),
	    T(test_login_never_locks_stepup),
	    T(test_login_locks_double),
	    T(test_login_policy_edges),
	    T(test_login_unknown_account),
	    T(test_login_keys),
	    T(test_login_concurrent),
	    T(test_login_store_unavailable),
	    T(test_flood_keeps_lockout),
	    T(test_full_store_fails_closed),
	};
	return cmocka_run_group_tests(tests, group_setup, NULL);
#else
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_built_without_reauth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
#endif
}
