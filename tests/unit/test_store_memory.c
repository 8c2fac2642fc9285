/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_store_memory.c - the store interface (src/session/store.c: URL parsing and
 * argument checks) and the embedded memory store (src/session/store_memory.c):
 * the shared semantics table, TTL expiry on a controlled clock, the
 * incremental sweep, the size bound and its eviction order (never a
 * security counter: a full store of counters refuses, and says so in the
 * log), and concurrent use from four threads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include <cmocka.h>

#include "session/session_internal.h"
#include "testutil.h"

#include "../store/store_semantics.h"

/* tu_guard_copy of 0 bytes hands out the guard page itself, which
 * tu_guard_free cannot walk back from: an empty input is a literal. */
static char *guard(const char *s, size_t n)
{
	return n == 0 ? (char *)"" : tu_guard_copy(s, n);
}

static void unguard(char *p, size_t n)
{
	if (n > 0)
		tu_guard_free(p);
}

/* ---- a clock the tests move ---- */

static int64_t fake_ms;

static int64_t fake_clock(void *ud)
{
	(void)ud;
	return fake_ms;
}

static csrf_store *open_fake(const char *url)
{
	csrf_store *st = NULL;

	assert_int_equal(csrf_store_open(&st, url), CSRF_OK);
	assert_non_null(st);
	fake_ms = 1000000;
	csrfi_store_memory_set_clock(st, fake_clock, NULL);
	return st;
}

static int present(csrf_store *st, const char *key)
{
	char buf[64];
	size_t len;
	csrf_reason r = csrf_store_get(st, key, strlen(key), buf, sizeof buf, &len);

	assert_true(r == CSRF_OK || r == CSRF_NOT_FOUND);
	return r == CSRF_OK;
}

static void put(csrf_store *st, const char *key, uint32_t ttl)
{
	assert_int_equal(csrf_store_set(st, key, strlen(key), key, strlen(key), ttl), CSRF_OK);
}

/* ---- semantics ---- */

static void test_semantics(void **state)
{
	csrf_store *st = open_fake("memory");

	(void)state;
	sem_run(st);
	sem_args(st);
	csrf_store_close(st);
	csrf_store_close(NULL);
}

static void test_values_are_copied(void **state)
{
	csrf_store *st = open_fake("memory");
	char key[] = "key", val[] = "value", out[16];
	size_t len;

	(void)state;
	assert_int_equal(csrf_store_set(st, key, 3, val, 5, 0), CSRF_OK);
	memset(key, 'X', 3);
	memset(val, 'Y', 5);
	assert_int_equal(csrf_store_get(st, "key", 3, out, sizeof out, &len), CSRF_OK);
	assert_int_equal(len, 5);
	assert_memory_equal(out, "value", 5);
	/* a key and a value flush against a guard page are read, not over-read */
	char *gk = tu_guard_copy("guarded", 7), *gv = tu_guard_copy("secret!", 7);
	assert_int_equal(csrf_store_set(st, gk, 7, gv, 7, 0), CSRF_OK);
	assert_int_equal(csrf_store_get(st, gk, 7, out, sizeof out, &len), CSRF_OK);
	assert_int_equal(len, 7);
	assert_memory_equal(out, "secret!", 7);
	int64_t v;
	assert_int_equal(csrf_store_incr(st, gk, 7, 0, &v), CSRF_MALFORMED);
	assert_int_equal(csrf_store_del(st, gk, 7), CSRF_OK);
	tu_guard_free(gk);
	tu_guard_free(gv);
	csrf_store_close(st);
}

/* ---- TTL ---- */

static void test_ttl_expiry(void **state)
{
	csrf_store *st = open_fake("memory");
	int64_t v;

	(void)state;
	put(st, "t10", 10);
	put(st, "forever", 0);
	fake_ms += 9999;
	assert_true(present(st, "t10"));
	fake_ms += 1;
	assert_false(present(st, "t10"));
	fake_ms += 10LL * 365 * 86400 * 1000;
	assert_true(present(st, "forever"));

	/* an overwrite sets the new TTL (here: none) */
	put(st, "re", 5);
	put(st, "re", 0);
	fake_ms += 6000;
	assert_true(present(st, "re"));
	put(st, "re", 5);
	fake_ms += 5000;
	assert_false(present(st, "re"));

	/* a new counter gets the TTL; later increments keep it */
	assert_int_equal(csrf_store_incr(st, "c", 1, 10, &v), CSRF_OK);
	assert_int_equal(v, 1);
	fake_ms += 5000;
	assert_int_equal(csrf_store_incr(st, "c", 1, 10, &v), CSRF_OK);
	assert_int_equal(v, 2);
	fake_ms += 4999;
	assert_true(present(st, "c"));
	fake_ms += 1;
	assert_false(present(st, "c"));
	/* an expired counter starts over, with a fresh TTL */
	assert_int_equal(csrf_store_incr(st, "c", 1, 10, &v), CSRF_OK);
	assert_int_equal(v, 1);
	fake_ms += 9999;
	assert_true(present(st, "c"));

	/* an expired entry is not deleted twice nor overwritten oddly */
	put(st, "gone", 1);
	fake_ms += 1000;
	assert_int_equal(csrf_store_del(st, "gone", 4), CSRF_OK);
	put(st, "gone", 0);
	assert_true(present(st, "gone"));
	csrf_store_close(st);
}

static void test_sweep_is_incremental(void **state)
{
	csrf_store *st = open_fake("memory");
	char key[16];
	size_t before, after;

	(void)state;
	for (int i = 0; i < 100; i++) {
		snprintf(key, sizeof key, "k%d", i);
		put(st, key, 1);
	}
	put(st, "keep", 0);
	assert_int_equal(csrfi_store_memory_count(st), 101);
	fake_ms += 2000;
	/* each call removes a bounded number of expired entries */
	before = csrfi_store_memory_count(st);
	assert_false(present(st, "nothing"));
	after = csrfi_store_memory_count(st);
	assert_true(after < before);
	assert_true(after > 1);
	for (int i = 0; i < 20; i++)
		assert_false(present(st, "nothing"));
	assert_int_equal(csrfi_store_memory_count(st), 1);
	assert_true(present(st, "keep"));
	csrf_store_close(st);
}

/* ---- size bound ---- */

static void test_eviction_order(void **state)
{
	csrf_store *st;
	char key[16];

	(void)state;
	/* no TTLs: the oldest write goes */
	st = open_fake("memory://?max=3");
	put(st, "a", 0);
	put(st, "b", 0);
	put(st, "c", 0);
	put(st, "d", 0);
	assert_int_equal(csrfi_store_memory_count(st), 3);
	assert_false(present(st, "a"));
	assert_true(present(st, "b") && present(st, "c") && present(st, "d"));
	/* rewriting b makes c the oldest */
	put(st, "b", 0);
	assert_int_equal(csrfi_store_memory_count(st), 3); /* overwrite: no eviction */
	put(st, "e", 0);
	assert_false(present(st, "c"));
	assert_true(present(st, "b") && present(st, "d") && present(st, "e"));
	csrf_store_close(st);

	/* with TTLs: the entry closest to expiry goes, before any without TTL */
	st = open_fake("memory://?max=3");
	put(st, "long", 100);
	put(st, "short", 10);
	put(st, "none", 0);
	put(st, "new", 50);
	assert_false(present(st, "short"));
	assert_true(present(st, "long") && present(st, "none") && present(st, "new"));
	put(st, "newer", 0);
	assert_false(present(st, "new"));
	assert_true(present(st, "long") && present(st, "none") && present(st, "newer"));
	csrf_store_close(st);

	/* expired entries go first, whatever their age */
	st = open_fake("memory://?max=3");
	put(st, "old", 0);
	put(st, "mid", 1000);
	put(st, "soon", 5);
	fake_ms += 6000;
	put(st, "fresh", 0);
	assert_true(present(st, "old") && present(st, "mid") && present(st, "fresh"));
	assert_false(present(st, "soon"));
	csrf_store_close(st);

	/* a store of one, and a long run that never exceeds the bound */
	st = open_fake("memory://?max=1");
	put(st, "x", 0);
	put(st, "y", 0);
	assert_false(present(st, "x"));
	assert_true(present(st, "y"));
	csrf_store_close(st);
	st = open_fake("memory://?max=100");
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof key, "k%d", i);
		put(st, key, (uint32_t)(i % 7));
		assert_true(csrfi_store_memory_count(st) <= 100);
	}
	assert_int_equal(csrfi_store_memory_count(st), 100);
	assert_true(present(st, "k4999"));
	csrf_store_close(st);
}

static void test_many_entries(void **state)
{
	csrf_store *st = open_fake("memory");
	char key[16], buf[16];
	size_t len;

	(void)state;
	/* enough to make the table grow several times */
	for (int i = 0; i < 20000; i++) {
		snprintf(key, sizeof key, "key%d", i);
		put(st, key, i % 2 ? 0 : 60);
	}
	assert_int_equal(csrfi_store_memory_count(st), 20000);
	for (int i = 0; i < 20000; i += 997) {
		int n = snprintf(key, sizeof key, "key%d", i);
		assert_int_equal(csrf_store_get(st, key, (size_t)n, buf, sizeof buf, &len), CSRF_OK);
		assert_int_equal(len, (size_t)n);
		assert_memory_equal(buf, key, len);
	}
	for (int i = 0; i < 20000; i += 2) {
		int n = snprintf(key, sizeof key, "key%d", i);
		assert_int_equal(csrf_store_del(st, key, (size_t)n), CSRF_OK);
	}
	assert_int_equal(csrfi_store_memory_count(st), 10000);
	csrf_store_close(st);
}

/* ---- URLs ---- */

typedef struct {
	const char *url;
	csrf_reason want;
	csrfi_store_kind kind;
	size_t max;
	const char *host;
	uint16_t port;
	unsigned db;
	const char *prefix;
	uint32_t timeout_ms;
} url_row;

/* Good URLs with credentials, a pool or sentinels: what url_row says, and
 * the rest. */
typedef struct {
	url_row base;
	const char *user, *password; /* NULL: none */
	unsigned pool;
	const char *master; /* "" : none */
	size_t n_addr;
	const char *host2; /* the second address, when n_addr > 1 */
	uint16_t port2;
} url_ext_row;

/* Long hosts: 10, 100 and 600 bytes of one character. */
#define X10(s) s s s s s s s s s s
#define X100(s) X10(X10(s))
#define X600(s) X100(s) X100(s) X100(s) X100(s) X100(s) X100(s)

static const url_row url_rows[] = {
    {"memory", CSRF_OK, CSRF_STORE_MEMORY, 100000, NULL, 0, 0, NULL, 0},
    {"memory://", CSRF_OK, CSRF_STORE_MEMORY, 100000, NULL, 0, 0, NULL, 0},
    {"memory://?max=1", CSRF_OK, CSRF_STORE_MEMORY, 1, NULL, 0, 0, NULL, 0},
    {"memory://?max=500", CSRF_OK, CSRF_STORE_MEMORY, 500, NULL, 0, 0, NULL, 0},
    {"memory://?max=100000000", CSRF_OK, CSRF_STORE_MEMORY, 100000000, NULL, 0, 0, NULL, 0},
    {"redis://127.0.0.1", CSRF_OK, CSRF_STORE_REDIS, 0, "127.0.0.1", 6379, 0, "csrf:", 1000},
    {"redis://localhost:6380", CSRF_OK, CSRF_STORE_REDIS, 0, "localhost", 6380, 0, "csrf:", 1000},
    {"redis://r.example:1/", CSRF_OK, CSRF_STORE_REDIS, 0, "r.example", 1, 0, "csrf:", 1000},
    {"redis://h:65535/15", CSRF_OK, CSRF_STORE_REDIS, 0, "h", 65535, 15, "csrf:", 1000},
    {"redis://h:6379/0?prefix=app:csrf_-X", CSRF_OK, CSRF_STORE_REDIS, 0, "h", 6379, 0, "app:csrf_-X", 1000},
    {"redis://h/3?prefix=", CSRF_OK, CSRF_STORE_REDIS, 0, "h", 6379, 3, "", 1000},
    {"redis://h:7000/2?timeout_ms=1", CSRF_OK, CSRF_STORE_REDIS, 0, "h", 7000, 2, "csrf:", 1},
    {"redis://h?timeout_ms=60000&prefix=p", CSRF_OK, CSRF_STORE_REDIS, 0, "h", 6379, 0, "p", 60000},
    {"redis://[::1]:6379/1", CSRF_OK, CSRF_STORE_REDIS, 0, "::1", 6379, 1, "csrf:", 1000},
    {"redis://[2001:db8::1]:6380", CSRF_OK, CSRF_STORE_REDIS, 0, "2001:db8::1", 6380, 0, "csrf:", 1000},
    {"redis://[FE80::A:b]", CSRF_OK, CSRF_STORE_REDIS, 0, "FE80::A:b", 6379, 0, "csrf:", 1000},
    {"redis://[::ffff:192.0.2.1]/2", CSRF_OK, CSRF_STORE_REDIS, 0, "::ffff:192.0.2.1", 6379, 2, "csrf:", 1000},
    {"redis://[1:2:3:4:5:6:7:8]", CSRF_OK, CSRF_STORE_REDIS, 0, "1:2:3:4:5:6:7:8", 6379, 0, "csrf:", 1000},
    {"redis://h?prefix=0123456789012345678901234567890123456789012345678901234567890123", CSRF_OK, CSRF_STORE_REDIS, 0,
     "h", 6379, 0, "0123456789012345678901234567890123456789012345678901234567890123", 1000},
    /* bad */
    {"", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"memory:", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"Memory", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"memoryx", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"memory://host", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"memory://?", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"memory://?max=", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"memory://?max=0", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"memory://?max=-1", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"memory://?max=010", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"memory://?max=100000001", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"memory://?max=99999999999999999999", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"memory://?max=5&max=6", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"memory://?max=5&", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"memory://?size=5", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"memory://?max=5x", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"memory://?max", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://:6379", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h:", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h:0", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h:65536", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h:123456", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h:-1", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h:80x", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h:6379/16", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h:6379/-1", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h:6379/01", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h:6379/1/2", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h:6379/x", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    /* bad credentials */
    {"redis://user@h:6379", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://user:@h", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://:@h", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://@h", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://:p@ss@h", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://:p ss@h", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://:p\"@h", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://:p%4@h", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://:p%@h", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://:p%zz@h", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://:p%00@h", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://:p#x@h", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://:pw/x@h", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://:pw@", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://:" X100("p") X100("p") X10("p") X10("p") X10("p") X10("p") X10("p") "ppppppp@h", CSRF_ERR_CONFIG, 0, 0,
     NULL, 0, 0, NULL, 0}, /* 257 */
    {"redis://" X100("u") X100("u") X10("u") X10("u") X10("u") X10("u") X10("u") "uuuuuuu:p@h", CSRF_ERR_CONFIG, 0, 0,
     NULL, 0, 0, NULL, 0},
    /* bad pools */
    {"redis://h?pool=0", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h?pool=65", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h?pool=01", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h?pool=", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h?pool=1&pool=2", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    /* bad Sentinel URLs */
    {"redis://h1,h2", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis-sentinel://s1", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis-sentinel://s1/", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis-sentinel://s1?pool=2", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis-sentinel://s1/m/", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis-sentinel://s1/m/16", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis-sentinel://s1/m/1/2", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis-sentinel://s1/m x", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis-sentinel://s1/m:x", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis-sentinel://s1,/m", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis-sentinel://,s1/m", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis-sentinel://s1,,s2/m", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis-sentinel:///m", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis-sentinel://s1:0/m", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis-sentinel://a,b,c,d,e,f,g,h,i/m", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis-sentinel://s/" X10("m") X10("m") X10("m") X10("m") X10("m") X10("m") "mmmmm", CSRF_ERR_CONFIG, 0, 0, NULL,
     0, 0, NULL, 0},
    {"redis-sentinel://user@s1/m", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"Redis-Sentinel://s1/m", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis-sentinels://s1/m", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h_x", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://-h", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h h", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://[::1", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://[]:6379", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://[::1]x", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://[::g]", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    /* hosts longer than the config holds: bracketed (once a stack overflow) and plain */
    {"redis://[" X600(":") "]", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://[" X600(":") "]:6379/1", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://[" X100("::") X10("::") X10("::") X10(":") ":::::]", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL,
     0}, /* 255 */
    {"redis://[" X100("::") X10("::") X10("::") X10(":") "::::::]", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL,
     0}, /* 256 */
    {"redis://[" X100("0") "::1]", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://" X100("a") X100("a") X10("a") X10("a") X10("a") X10("a") X10("a") "aaaa", CSRF_ERR_CONFIG, 0, 0, NULL, 0,
     0, NULL, 0}, /* 254 */
    {"redis://" X600("a"), CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://" X600("a") ":6379", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    /* the right characters, but not an IPv6 address */
    {"redis://[:]", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://[:::]", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://[1::2::3]", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://[1:2:3]:6379", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://[1:2:3:4:5:6:7:8:9]", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://[12345::1]", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://[127.0.0.1]", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://[::1.2.3]", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://[::1.2.3.256]", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://[..]", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://[::1%eth0]", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://[[::1]]", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h?", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h?prefix=a b", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h?prefix=a/b", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h?prefix=a%20", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h?prefix=01234567890123456789012345678901234567890123456789012345678901234", CSRF_ERR_CONFIG, 0, 0, NULL,
     0, 0, NULL, 0},
    {"redis://h?prefix=a&prefix=b", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h?timeout_ms=0", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h?timeout_ms=60001", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h?timeout_ms=", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h?timeout_ms=1e3", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h?timeout_ms=100&timeout_ms=100", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h?db=1", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h?prefix=a&&timeout_ms=5", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"redis://h#frag", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"rediss://h", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"REDIS://h", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"unix:///tmp/redis.sock", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
    {"http://h", CSRF_ERR_CONFIG, 0, 0, NULL, 0, 0, NULL, 0},
};

static const url_ext_row url_ext_rows[] = {
    /* AUTH: requirepass, ACL users, percent-encoding */
    {{"redis://user:pw@h:6379", CSRF_OK, CSRF_STORE_REDIS, 0, "h", 6379, 0, "csrf:", 1000},
     "user",
     "pw",
     8,
     "",
     1,
     NULL,
     0},
    {{"redis://:secret@h:6380/2", CSRF_OK, CSRF_STORE_REDIS, 0, "h", 6380, 2, "csrf:", 1000},
     "",
     "secret",
     8,
     "",
     1,
     NULL,
     0},
    {{"redis://app:s3cr%40t%2F%3f@h", CSRF_OK, CSRF_STORE_REDIS, 0, "h", 6379, 0, "csrf:", 1000},
     "app",
     "s3cr@t/?",
     8,
     "",
     1,
     NULL,
     0},
    {{"redis://a%3Ab:p:w@h", CSRF_OK, CSRF_STORE_REDIS, 0, "h", 6379, 0, "csrf:", 1000},
     "a:b",
     "p:w",
     8,
     "",
     1,
     NULL,
     0},
    {{"redis://-._~:!$&'()*+,;=@h", CSRF_OK, CSRF_STORE_REDIS, 0, "h", 6379, 0, "csrf:", 1000},
     "-._~",
     "!$&'()*+,;=",
     8,
     "",
     1,
     NULL,
     0},
    {{"redis://u:%C3%A9@[::1]:7000/3?pool=1", CSRF_OK, CSRF_STORE_REDIS, 0, "::1", 7000, 3, "csrf:", 1000},
     "u",
     "\xc3\xa9",
     1,
     "",
     1,
     NULL,
     0},
    {{"redis://:" X100("p") X100("p") X10("p") X10("p") X10("p") X10("p") X10("p") "pppppp@h", CSRF_OK,
      CSRF_STORE_REDIS, 0, "h", 6379, 0, "csrf:", 1000},
     "",
     X100("p") X100("p") X10("p") X10("p") X10("p") X10("p") X10("p") "pppppp",
     8,
     "",
     1,
     NULL,
     0}, /* 256 */
    /* the pool */
    {{"redis://h?pool=64", CSRF_OK, CSRF_STORE_REDIS, 0, "h", 6379, 0, "csrf:", 1000}, NULL, NULL, 64, "", 1, NULL, 0},
    {{"redis://h/1?timeout_ms=5&pool=2&prefix=q", CSRF_OK, CSRF_STORE_REDIS, 0, "h", 6379, 1, "q", 5},
     NULL,
     NULL,
     2,
     "",
     1,
     NULL,
     0},
    /* Sentinel */
    {{"redis-sentinel://s1/mymaster", CSRF_OK, CSRF_STORE_SENTINEL, 0, "s1", 26379, 0, "csrf:", 1000},
     NULL,
     NULL,
     8,
     "mymaster",
     1,
     NULL,
     0},
    {{"redis-sentinel://s1:26380,10.0.0.2/m.a_b-C/3?prefix=x:", CSRF_OK, CSRF_STORE_SENTINEL, 0, "s1", 26380, 3,
      "x:", 1000},
     NULL,
     NULL,
     8,
     "m.a_b-C",
     2,
     "10.0.0.2",
     26379},
    {{"redis-sentinel://:pw@[::1]:1,[::2]/m", CSRF_OK, CSRF_STORE_SENTINEL, 0, "::1", 1, 0, "csrf:", 1000},
     "",
     "pw",
     8,
     "m",
     2,
     "::2",
     26379},
    {{"redis-sentinel://u:p@a,b,c,d,e,f,g,h/m?pool=3", CSRF_OK, CSRF_STORE_SENTINEL, 0, "a", 26379, 0, "csrf:", 1000},
     "u",
     "p",
     3,
     "m",
     8,
     "b",
     26379},
    {{"redis-sentinel://s/" X10("m") X10("m") X10("m") X10("m") X10("m") X10("m") "mmmm", CSRF_OK, CSRF_STORE_SENTINEL,
      0, "s", 26379, 0, "csrf:", 1000},
     NULL,
     NULL,
     8,
     X10("m") X10("m") X10("m") X10("m") X10("m") X10("m") "mmmm",
     1,
     NULL,
     0},
};

static void check_url_row(size_t i, const url_row *row, const char *p, size_t len)
{
	csrfi_store_config cfg;
	csrf_reason r = csrfi_store_parse_url(p, len, &cfg);

	if (r != row->want)
		fail_msg("url row %zu (%s): got %s", i, row->url, csrf_reason_name(r));
	if (r != CSRF_OK)
		return;
	assert_int_equal(cfg.kind, row->kind);
	if (row->kind == CSRF_STORE_MEMORY) {
		assert_int_equal(cfg.max_entries, row->max);
		return;
	}
	assert_string_equal(cfg.addr[0].host, row->host);
	assert_int_equal(cfg.addr[0].port, row->port);
	assert_int_equal(cfg.db, row->db);
	assert_string_equal(cfg.prefix, row->prefix);
	assert_int_equal(cfg.timeout_ms, row->timeout_ms);
}

static void check_url_ext_row(size_t i, const url_ext_row *row)
{
	csrfi_store_config cfg;
	size_t len = strlen(row->base.url);
	char *g = guard(row->base.url, len);

	check_url_row(i, &row->base, g, len);
	assert_int_equal(csrfi_store_parse_url(g, len, &cfg), CSRF_OK);
	unguard(g, len);
	assert_int_equal(cfg.n_addr, row->n_addr);
	if (row->n_addr > 1) {
		assert_string_equal(cfg.addr[1].host, row->host2);
		assert_int_equal(cfg.addr[1].port, row->port2);
	}
	assert_int_equal(cfg.has_password, row->password != NULL);
	assert_string_equal(cfg.user, row->user ? row->user : "");
	assert_string_equal(cfg.password, row->password ? row->password : "");
	assert_int_equal(cfg.pool, row->pool);
	assert_string_equal(cfg.master, row->master);
}

static void test_url_rows(void **state)
{
	csrfi_store_config cfg;

	(void)state;
	for (size_t i = 0; i < sizeof url_rows / sizeof url_rows[0]; i++) {
		const url_row *row = &url_rows[i];
		size_t len = strlen(row->url);
		/* flush against a guard page: no read past len */
		char *g = guard(row->url, len);
		check_url_row(i, row, g, len);
		unguard(g, len);
		/* one server, no password, the default pool */
		if (row->want == CSRF_OK && row->kind == CSRF_STORE_REDIS) {
			assert_int_equal(csrfi_store_parse_url(row->url, len, &cfg), CSRF_OK);
			assert_int_equal(cfg.n_addr, 1);
			assert_int_equal(cfg.has_password, 0);
			assert_string_equal(cfg.password, "");
			assert_int_equal(cfg.pool, 8);
			assert_string_equal(cfg.master, "");
		}
	}
	for (size_t i = 0; i < sizeof url_ext_rows / sizeof url_ext_rows[0]; i++)
		check_url_ext_row(i, &url_ext_rows[i]);
}

/* Every prefix of a URL parses or is refused cleanly, reading only
 * inside it. */
static void check_prefixes(const char *url)
{
	size_t len = strlen(url);

	for (size_t n = 0; n <= len; n++) {
		csrfi_store_config cfg;
		char *g = guard(url, n);
		csrf_reason r = csrfi_store_parse_url(g, n, &cfg);
		unguard(g, n);
		assert_true(r == CSRF_OK || r == CSRF_ERR_CONFIG);
		if (r == CSRF_OK && cfg.kind != CSRF_STORE_MEMORY)
			for (size_t k = 0; k < cfg.n_addr; k++)
				assert_true(strlen(cfg.addr[k].host) <= n);
	}
}

/* Every prefix of every URL parses or is refused cleanly, reading only
 * inside it; a prefix is never read as a longer value. */
static void test_url_prefixes(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof url_rows / sizeof url_rows[0]; i++)
		check_prefixes(url_rows[i].url);
	for (size_t i = 0; i < sizeof url_ext_rows / sizeof url_ext_rows[0]; i++)
		check_prefixes(url_ext_rows[i].base.url);
}

static void test_open(void **state)
{
	csrf_store *st = (csrf_store *)&st;
	char big[3000];

	(void)state;
	assert_int_equal(csrf_store_open(NULL, "memory"), CSRF_ERR_ARG);
	assert_int_equal(csrf_store_open(&st, NULL), CSRF_ERR_ARG);
	assert_null(st);
	assert_int_equal(csrfi_store_parse_url(NULL, 0, NULL), CSRF_ERR_ARG);
	for (size_t i = 0; i < sizeof url_rows / sizeof url_rows[0]; i++) {
		if (url_rows[i].want == CSRF_OK)
			continue;
		/* a bad URL never opens anything, not even a connection attempt */
		char *g = tu_guard_copy(url_rows[i].url, strlen(url_rows[i].url) + 1);
		st = (csrf_store *)&st;
		assert_int_equal(csrf_store_open(&st, g), CSRF_ERR_CONFIG);
		assert_null(st);
		tu_guard_free(g);
	}
	/* oversized URLs, NUL-terminated or not */
	memset(big, 'a', sizeof big);
	memcpy(big, "memory://?max=5&", 16);
	big[sizeof big - 1] = '\0';
	assert_int_equal(csrf_store_open(&st, big), CSRF_ERR_CONFIG);
	assert_int_equal(csrfi_store_parse_url(big, sizeof big - 1, &(csrfi_store_config){0}), CSRF_ERR_CONFIG);
	memset(big, 'a', sizeof big);
	memcpy(big, "redis://", 8);
	assert_int_equal(csrfi_store_parse_url(big, 8 + 253, &(csrfi_store_config){0}), CSRF_OK);
	assert_int_equal(csrfi_store_parse_url(big, 1025, &(csrfi_store_config){0}), CSRF_ERR_CONFIG);
	assert_int_equal(csrfi_store_parse_url(big, 300, &(csrfi_store_config){0}), CSRF_ERR_CONFIG); /* host > 253 */
#if CSRF_WITH_REDIS
	/* a redis URL with nothing listening opens (lazily); its calls fail
	 * closed until Redis answers (tests/store has the recovery) */
	assert_int_equal(csrf_store_open(&st, "redis://127.0.0.1:1/0?timeout_ms=100"), CSRF_OK);
	assert_non_null(st);
	assert_int_equal(csrf_store_set(st, "k", 1, "v", 1, 0), CSRF_STORE_UNAVAILABLE);
	csrf_store_close(st);
#else
	/* built without Redis: every redis URL is a configuration error */
	assert_int_equal(csrf_store_open(&st, "redis://127.0.0.1:1/0?timeout_ms=100"), CSRF_ERR_CONFIG);
	assert_null(st);
	assert_int_equal(csrf_store_open(&st, "redis-sentinel://127.0.0.1:1/m"), CSRF_ERR_CONFIG);
	assert_null(st);
#endif
	/* the good memory URLs open */
	assert_int_equal(csrf_store_open(&st, "memory://?max=2"), CSRF_OK);
	put(st, "a", 0);
	put(st, "b", 0);
	put(st, "c", 0);
	assert_int_equal(csrfi_store_memory_count(st), 2);
	csrf_store_close(st);
}

/* ---- against a model ---- */

/* A naive model of the documented behaviour: expired entries are gone at
 * the start of each call; a write of a new key into a full store evicts
 * the live plain entry (never a counter: a key written by incr, which
 * stays a counter when set rewrites it) with the earliest expiry (no
 * TTL: never), the oldest write first among equals; with no plain entry
 * the write is refused with CSRF_STORE_FULL. With at most 8 entries the
 * store's sweep clears every expired entry at each call, so both must
 * agree exactly. */
#define MODEL_KEYS 20
#define MODEL_MAX 8

typedef struct {
	int live;
	int counter;
	int64_t expires; /* INT64_MAX: never */
	uint64_t seq;
	char val[24];
	size_t len;
} model_entry;

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void model_expire(model_entry *m, int64_t now)
{
	for (int i = 0; i < MODEL_KEYS; i++)
		if (m[i].live && m[i].expires <= now)
			m[i].live = 0;
}

/* CSRF_OK or CSRF_STORE_FULL (nothing changed). */
static csrf_reason model_write(model_entry *m, int k, const char *val, size_t len, int64_t expires, int counter,
                               uint64_t *seq)
{
	if (!m[k].live) {
		int n = 0, victim = -1;
		for (int i = 0; i < MODEL_KEYS; i++) {
			if (!m[i].live)
				continue;
			n++;
			if (m[i].counter)
				continue;
			if (victim < 0 || m[i].expires < m[victim].expires ||
			    (m[i].expires == m[victim].expires && m[i].seq < m[victim].seq))
				victim = i;
		}
		if (n >= MODEL_MAX) {
			if (victim < 0)
				return CSRF_STORE_FULL;
			m[victim].live = 0;
		}
		m[k].counter = 0;
	}
	m[k].live = 1;
	m[k].counter |= counter;
	m[k].expires = expires;
	m[k].seq = ++*seq;
	memcpy(m[k].val, val, len);
	m[k].len = len;
	return CSRF_OK;
}

static void test_against_model(void **state)
{
	char url[32];
	model_entry model[MODEL_KEYS];
	uint64_t seq = 0;
	csrf_store *st;
	int refused = 0;

	(void)state;
	memset(model, 0, sizeof model);
	snprintf(url, sizeof url, "memory://?max=%d", MODEL_MAX);
	st = open_fake(url);
	for (int step = 0; step < 30000; step++) {
		static const uint32_t ttls[] = {0, 1, 2, 5};
		int k = (int)(rng() % MODEL_KEYS);
		uint32_t ttl = ttls[rng() % 4];
		char key[8], val[24], buf[32];
		int klen = snprintf(key, sizeof key, "k%d", k);
		size_t len;
		int64_t v;
		csrf_reason r, want;

		fake_ms += (int64_t)(rng() % 700);
		model_expire(model, fake_ms);
		switch (rng() % 4) {
		case 0: {
			int vlen = rng() % 2 ? snprintf(val, sizeof val, "%d", (int)(rng() % 100) - 50)
			                     : snprintf(val, sizeof val, "text%d", step);
			want =
			    model_write(model, k, val, (size_t)vlen, ttl ? fake_ms + ttl * 1000 : INT64_MAX, 0, &seq);
			r = csrf_store_set(st, key, (size_t)klen, val, (size_t)vlen, ttl);
			if (r != want)
				fail_msg("step %d: set %s answered %s", step, key, csrf_reason_name(r));
			refused += r == CSRF_STORE_FULL;
			break;
		}
		case 1:
			r = csrf_store_get(st, key, (size_t)klen, buf, sizeof buf, &len);
			if (model[k].live != (r == CSRF_OK))
				fail_msg("step %d: get %s answered %s", step, key, csrf_reason_name(r));
			if (r == CSRF_OK) {
				assert_int_equal(len, model[k].len);
				assert_memory_equal(buf, model[k].val, len);
			}
			break;
		case 2:
			assert_int_equal(csrf_store_del(st, key, (size_t)klen), CSRF_OK);
			model[k].live = 0;
			break;
		case 3: {
			int64_t mv = 0;
			int is_num = 1;
			if (model[k].live)
				is_num = csrfx_parse_i64(model[k].val, model[k].len, &mv) == CSRF_OK;
			r = csrf_store_incr(st, key, (size_t)klen, ttl, &v);
			if (!is_num) {
				assert_int_equal(r, CSRF_MALFORMED);
				break;
			}
			int n = snprintf(val, sizeof val, "%lld", (long long)(mv + 1));
			want = model_write(model, k, val, (size_t)n,
			                   model[k].live ? model[k].expires : (ttl ? fake_ms + ttl * 1000 : INT64_MAX),
			                   1, &seq);
			if (r != want)
				fail_msg("step %d: incr %s answered %s", step, key, csrf_reason_name(r));
			refused += r == CSRF_STORE_FULL;
			if (r == CSRF_OK)
				assert_true(v == mv + 1);
			break;
		}
		}
		size_t live = 0, counters = 0;
		for (int i = 0; i < MODEL_KEYS; i++) {
			live += (size_t)model[i].live;
			counters += (size_t)(model[i].live && model[i].counter);
		}
		assert_true(csrfi_store_memory_count(st) >= live);
		assert_true(csrfi_store_memory_count(st) <= MODEL_MAX);
		assert_true(csrfi_store_memory_counters(st) >= counters);
	}
	/* the run reached a store full of counters, and came back from it */
	printf("# model: %d writes refused\n", refused);
	assert_true(refused > 0);
	csrf_store_close(st);
}

/* ---- security counters and a full store ---- */

typedef struct {
	int events[128];
	char text[8][CSRF_STORE_LOG_MAX];
	int n;
} log_seen;

static void log_hook(void *ud, csrf_reason event, const char *message)
{
	log_seen *l = ud;

	if (l->n < 128)
		l->events[l->n] = (int)event;
	if (l->n < 8)
		snprintf(l->text[l->n], sizeof l->text[0], "%s", message);
	l->n++;
}

static void test_counters_never_evicted(void **state)
{
	csrf_store *st = open_fake("memory://?max=5");
	char key[32];
	int64_t v;

	(void)state;
	/* two lockout counters, then a flood of anonymous 24-hour entries:
	 * the counters expire first, and yet stay */
	assert_int_equal(csrf_store_incr(st, "fail:acct:alice", 15, 900, &v), CSRF_OK);
	assert_int_equal(csrf_store_incr(st, "fail:acct:alice", 15, 900, &v), CSRF_OK);
	assert_int_equal(csrf_store_incr(st, "fail:sess:s1", 12, 900, &v), CSRF_OK);
	for (int i = 0; i < 10000; i++) {
		int n = snprintf(key, sizeof key, "pre:%d", i);
		assert_int_equal(csrf_store_set(st, key, (size_t)n, "x", 1, 86400), CSRF_OK);
		assert_true(csrfi_store_memory_count(st) <= 5);
	}
	assert_int_equal(csrfi_store_memory_counters(st), 2);
	assert_true(present(st, "pre:9999") && present(st, "pre:9998") && present(st, "pre:9997"));
	assert_false(present(st, "pre:9996"));
	assert_int_equal(csrf_store_incr(st, "fail:acct:alice", 15, 900, &v), CSRF_OK);
	assert_int_equal(v, 3);
	/* a new counter takes a plain entry's place */
	assert_int_equal(csrf_store_incr(st, "fail:acct:bob", 13, 900, &v), CSRF_OK);
	assert_int_equal(csrfi_store_memory_counters(st), 3);
	assert_false(present(st, "pre:9997"));
	/* counters still end with their own TTL */
	fake_ms += 900 * 1000;
	assert_false(present(st, "fail:acct:alice"));
	assert_false(present(st, "fail:acct:bob"));
	assert_int_equal(csrfi_store_memory_counters(st), 0);
	csrf_store_close(st);
}

static void test_full_of_counters(void **state)
{
	csrf_store *st = open_fake("memory://?max=3");
	char buf[16];
	size_t len;
	int64_t v;

	(void)state;
	assert_int_equal(csrf_store_incr(st, "a", 1, 10, &v), CSRF_OK);
	assert_int_equal(csrf_store_incr(st, "b", 1, 0, &v), CSRF_OK);
	assert_int_equal(csrf_store_incr(st, "c", 1, 20, &v), CSRF_OK);
	/* nothing may go: new keys are refused, nothing changes */
	assert_int_equal(csrf_store_set(st, "x", 1, "1", 1, 0), CSRF_STORE_FULL);
	assert_int_equal(csrf_store_incr(st, "d", 1, 10, &v), CSRF_STORE_FULL);
	assert_false(present(st, "x") || present(st, "d"));
	assert_int_equal(csrfi_store_memory_count(st), 3);
	/* existing keys still count, and may be rewritten */
	assert_int_equal(csrf_store_incr(st, "a", 1, 10, &v), CSRF_OK);
	assert_int_equal(v, 2);
	assert_int_equal(csrf_store_set(st, "a", 1, "7", 1, 30), CSRF_OK);
	assert_int_equal(csrf_store_get(st, "a", 1, buf, sizeof buf, &len), CSRF_OK);
	assert_memory_equal(buf, "7", 1);
	assert_int_equal(csrfi_store_memory_counters(st), 3); /* rewritten: still a counter */
	assert_int_equal(csrf_store_set(st, "x", 1, "1", 1, 0), CSRF_STORE_FULL);
	/* a counter that ends frees its place */
	fake_ms += 20 * 1000;
	assert_false(present(st, "c"));
	assert_int_equal(csrf_store_set(st, "x", 1, "1", 1, 0), CSRF_OK);
	/* a deleted one too */
	assert_int_equal(csrf_store_set(st, "y", 1, "1", 1, 0), CSRF_OK); /* evicts plain x */
	assert_false(present(st, "x"));
	assert_int_equal(csrf_store_del(st, "b", 1), CSRF_OK);
	assert_int_equal(csrf_store_incr(st, "d", 1, 10, &v), CSRF_OK);
	/* a plain key that incr writes becomes a counter */
	assert_int_equal(csrf_store_set(st, "y", 1, "41", 2, 0), CSRF_OK);
	assert_int_equal(csrf_store_incr(st, "y", 1, 0, &v), CSRF_OK);
	assert_int_equal(v, 42);
	assert_int_equal(csrfi_store_memory_counters(st), 3);
	assert_int_equal(csrf_store_set(st, "z", 1, "1", 1, 0), CSRF_STORE_FULL);
	csrf_store_close(st);
}

static void test_full_is_logged(void **state)
{
	log_seen seen;
	csrf_store *st = NULL;
	char key[32];
	int64_t v;

	(void)state;
	memset(&seen, 0, sizeof seen);
	assert_int_equal(csrf_store_open_log(&st, "memory://?max=4", log_hook, &seen), CSRF_OK);
	fake_ms = 1000000;
	csrfi_store_memory_set_clock(st, fake_clock, NULL);
	assert_int_equal(csrf_store_incr(st, "fail:acct:SECRETNAME", 20, 900, &v), CSRF_OK);
	for (int i = 0; i < 100; i++) {
		int n = snprintf(key, sizeof key, "SECRETKEY%d", i);
		assert_int_equal(csrf_store_set(st, key, (size_t)n, "SECRETVALUE", 11, 0), CSRF_OK);
	}
	/* 97 evictions, one report (repeats wait 10 s) */
	assert_int_equal(seen.n, 1);
	assert_int_equal(seen.events[0], CSRF_STORE_FULL);
	assert_non_null(strstr(seen.text[0], "evict"));
	fake_ms += 10000;
	assert_int_equal(csrf_store_set(st, "one more", 8, "v", 1, 0), CSRF_OK);
	assert_int_equal(seen.n, 2);
	assert_non_null(strstr(seen.text[1], "96 more"));
	/* now only counters (each new one takes a plain entry's place):
	 * refused, and said so once (its own kind of report) */
	for (int i = 0; i < 3; i++) {
		int n = snprintf(key, sizeof key, "fail:sess:SECRET%d", i);
		assert_int_equal(csrf_store_incr(st, key, (size_t)n, 900, &v), CSRF_OK);
	}
	assert_int_equal(csrfi_store_memory_counters(st), 4);
	assert_int_equal(csrf_store_set(st, "SECRETKEY", 9, "v", 1, 0), CSRF_STORE_FULL);
	assert_int_equal(csrf_store_set(st, "SECRETKEY", 9, "v", 1, 0), CSRF_STORE_FULL);
	assert_int_equal(seen.n, 3);
	assert_int_equal(seen.events[2], CSRF_STORE_FULL);
	assert_non_null(strstr(seen.text[2], "refused"));
	for (int i = 0; i < seen.n && i < 8; i++)
		assert_null(strstr(seen.text[i], "SECRET"));
	csrf_store_close(st);
}

static void test_bad_url_is_logged_without_it(void **state)
{
	log_seen seen;
	csrf_store *st = NULL;

	(void)state;
	memset(&seen, 0, sizeof seen);
	assert_int_equal(csrf_store_open_log(&st, "redis://:hunter2@h?pool=0", log_hook, &seen), CSRF_ERR_CONFIG);
	assert_null(st);
	assert_int_equal(seen.n, 1);
	assert_int_equal(seen.events[0], CSRF_ERR_CONFIG);
	assert_null(strstr(seen.text[0], "hunter2"));
	assert_int_equal(csrf_store_open_log(NULL, "memory", log_hook, &seen), CSRF_ERR_ARG);
	assert_int_equal(csrf_store_open_log(&st, "memory", NULL, NULL), CSRF_OK);
	csrf_store_close(st);
}

/* ---- failing allocations ---- */

/* Fails the Nth allocation for every N: each call answers CSRF_OK or
 * CSRF_ERR_NOMEM, a failed write changes nothing, and closing frees
 * everything. */
static void test_failing_allocator(void **state)
{
	(void)state;
	for (size_t fail_at = 1;; fail_at++) {
		tu_alloc_state as = {0, 0, fail_at, 0};
		csrf_allocator a = tu_allocator(&as);
		csrf_store *st = NULL;
		char key[16], buf[16];
		size_t len;
		int64_t v;
		int stored[300] = {0};
		int failed = 0;

		csrf_reason r = csrfi_store_memory_open_with(&st, 1000, &a);
		if (r != CSRF_OK) {
			assert_int_equal(r, CSRF_ERR_NOMEM);
			assert_null(st);
			assert_int_equal(as.live, 0);
			continue;
		}
		for (int i = 0; i < 300; i++) {
			int n = snprintf(key, sizeof key, "k%d", i);
			r = csrf_store_set(st, key, (size_t)n, key, (size_t)n, (uint32_t)(i % 3));
			assert_true(r == CSRF_OK || r == CSRF_ERR_NOMEM);
			stored[i] = r == CSRF_OK;
			failed |= r != CSRF_OK;
		}
		r = csrf_store_incr(st, "k7", 2, 0, &v);
		assert_true(r == CSRF_MALFORMED || r == CSRF_ERR_NOMEM || (r == CSRF_OK && !stored[7]));
		failed |= r == CSRF_ERR_NOMEM;
		for (int i = 0; i < 300; i++) {
			if (i == 7)
				continue;
			int n = snprintf(key, sizeof key, "k%d", i);
			r = csrf_store_get(st, key, (size_t)n, buf, sizeof buf, &len);
			if (stored[i]) {
				assert_int_equal(r, CSRF_OK);
				assert_int_equal(len, (size_t)n);
				assert_memory_equal(buf, key, len);
			} else {
				assert_int_equal(r, CSRF_NOT_FOUND);
			}
		}
		assert_int_equal(csrf_store_del(st, "k1", 2), CSRF_OK);
		csrf_store_close(st);
		assert_int_equal(as.live, 0);
		assert_int_equal(as.allocs - (fail_at <= as.allocs ? 1 : 0), as.frees);
		if (!failed && fail_at > as.allocs)
			break;
	}
}

/* ---- threads ---- */

#define THREADS 4
#define ROUNDS 5000

typedef struct {
	csrf_store *shared; /* counter */
	csrf_store *small;  /* constant eviction */
	int id;
	int errors;
} worker_arg;

static void *worker(void *p)
{
	worker_arg *a = p;
	char key[32], buf[64];
	size_t len;
	int64_t v;

	for (int i = 0; i < ROUNDS; i++) {
		if (csrf_store_incr(a->shared, "hits", 4, 0, &v) != CSRF_OK || v < 1)
			a->errors++;
		int n = snprintf(key, sizeof key, "t%d-%d", a->id, i % 97);
		if (csrf_store_set(a->small, key, (size_t)n, key, (size_t)n, (uint32_t)(i % 3)) != CSRF_OK)
			a->errors++;
		n = snprintf(key, sizeof key, "t%d-%d", (a->id + 1) % THREADS, i % 89);
		csrf_reason r = csrf_store_get(a->small, key, (size_t)n, buf, sizeof buf, &len);
		/* present or evicted, never someone else's value */
		if (r == CSRF_OK && (len != (size_t)n || memcmp(buf, key, len) != 0))
			a->errors++;
		else if (r != CSRF_OK && r != CSRF_NOT_FOUND)
			a->errors++;
		if (i % 11 == 0 && csrf_store_del(a->small, key, (size_t)n) != CSRF_OK)
			a->errors++;
	}
	return NULL;
}

static void test_threads(void **state)
{
	csrf_store *shared = NULL, *small = NULL;
	pthread_t t[THREADS];
	worker_arg args[THREADS];
	char buf[32];
	size_t len;

	(void)state;
	assert_int_equal(csrf_store_open(&shared, "memory"), CSRF_OK);
	assert_int_equal(csrf_store_open(&small, "memory://?max=50"), CSRF_OK);
	for (int i = 0; i < THREADS; i++) {
		args[i] = (worker_arg){shared, small, i, 0};
		assert_int_equal(pthread_create(&t[i], NULL, worker, &args[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(args[i].errors, 0);
	}
	assert_int_equal(csrf_store_get(shared, "hits", 4, buf, sizeof buf, &len), CSRF_OK);
	assert_int_equal(len, 5);
	assert_memory_equal(buf, "20000", 5);
	assert_true(csrfi_store_memory_count(small) <= 50);
	csrf_store_close(shared);
	csrf_store_close(small);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_semantics),
	    cmocka_unit_test(test_values_are_copied),
	    cmocka_unit_test(test_ttl_expiry),
	    cmocka_unit_test(test_sweep_is_incremental),
	    cmocka_unit_test(test_eviction_order),
	    cmocka_unit_test(test_many_entries),
	    cmocka_unit_test(test_counters_never_evicted),
	    cmocka_unit_test(test_full_of_counters),
	    cmocka_unit_test(test_full_is_logged),
	    cmocka_unit_test(test_bad_url_is_logged_without_it),
	    cmocka_unit_test(test_url_rows),
	    cmocka_unit_test(test_url_prefixes),
	    cmocka_unit_test(test_open),
	    cmocka_unit_test(test_against_model),
	    cmocka_unit_test(test_failing_allocator),
	    cmocka_unit_test(test_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
