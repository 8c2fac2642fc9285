/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_store_sentinel.c - the store through Redis Sentinel
 * ("redis-sentinel://..."), against real servers this test starts on
 * free loopback ports: one master, one replica and three sentinels
 * (quorum 2, down-after-milliseconds 1000). The store finds the master,
 * skips a dead sentinel, refuses a master name no sentinel knows, opens
 * while every sentinel is down; and when the master is killed in the
 * middle of a run of increments, it follows the failover: calls fail
 * closed meanwhile, work again within 10 s of the kill, nothing is
 * counted twice, and lockout counters written before the failover still
 * lock. Last, a manual failover back: the store's connections to the
 * master turned replica answer READONLY (or are cut) and the store moves
 * to the new master by itself.
 *
 * REDIS_SERVER and REDIS_SENTINEL name the binaries (defaults in
 * /usr/bin); without them the test is skipped (exit 77).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "csrf_session.h"
#include "redisproc.h"

#define MASTER "mymaster"
#define SENTINELS 3

static char tmpdir[64];
static int master_port, replica_port, sentinel_port[SENTINELS];
static pid_t master_pid = -1, replica_pid = -1, sentinel_pid[SENTINELS] = {-1, -1, -1};
static char url[256];

/* ---- the servers ---- */

/* The number of elements of an array answer, or -1. */
static long array_len(int port, const char *cmd)
{
	redisReply *r = rp_cmd(port, NULL, NULL, cmd);
	long n = r != NULL && r->type == REDIS_REPLY_ARRAY ? (long)r->elements : -1;

	if (r != NULL)
		freeReplyObject(r);
	return n;
}

static int replica_linked(void)
{
	redisReply *r = rp_cmd(replica_port, NULL, NULL, "INFO replication");
	int up = r != NULL && r->type == REDIS_REPLY_STRING && strstr(r->str, "master_link_status:up") != NULL;

	if (r != NULL)
		freeReplyObject(r);
	return up;
}

/* Every sentinel knows the two others and the replica. */
static int sentinels_settled(void)
{
	for (int i = 0; i < SENTINELS; i++) {
		if (array_len(sentinel_port[i], "SENTINEL sentinels " MASTER) != SENTINELS - 1 ||
		    array_len(sentinel_port[i], "SENTINEL replicas " MASTER) != 1)
			return 0;
	}
	return 1;
}

static int wait_for(int (*cond)(void), int ms)
{
	int64_t end = rp_mono_ms() + ms;

	while (rp_mono_ms() < end) {
		if (cond())
			return 1;
		rp_sleep_ms(50);
	}
	return 0;
}

static int group_setup(void **state)
{
	char port_s[8], conf[512];
	const char *replica_args[] = {"--replicaof", "127.0.0.1", port_s, NULL};

	(void)state;
	if (rp_tmpdir(tmpdir, sizeof tmpdir) != 0)
		return -1;
	master_port = rp_free_port();
	replica_port = rp_free_port();
	master_pid = rp_redis_start(tmpdir, master_port, NULL, NULL, NULL);
	snprintf(port_s, sizeof port_s, "%d", master_port);
	replica_pid = rp_redis_start(tmpdir, replica_port, replica_args, NULL, NULL);
	if (master_pid < 0 || replica_pid < 0 || !wait_for(replica_linked, 10000)) {
		fprintf(stderr, "cannot start a master and its replica\n");
		return -1;
	}
	snprintf(conf, sizeof conf,
	         "sentinel monitor " MASTER " 127.0.0.1 %d 2\n"
	         "sentinel down-after-milliseconds " MASTER " 1000\n"
	         "sentinel failover-timeout " MASTER " 4000\n"
	         "sentinel parallel-syncs " MASTER " 1\n",
	         master_port);
	for (int i = 0; i < SENTINELS; i++) {
		sentinel_port[i] = rp_free_port();
		sentinel_pid[i] = rp_sentinel_start(tmpdir, sentinel_port[i], conf);
		if (sentinel_pid[i] < 0) {
			fprintf(stderr, "cannot start sentinel %d\n", i);
			return -1;
		}
	}
	if (!wait_for(sentinels_settled, 30000)) {
		fprintf(stderr, "the sentinels did not find each other and the replica\n");
		return -1;
	}
	snprintf(url, sizeof url,
	         "redis-sentinel://127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d/" MASTER "/0?timeout_ms=300&prefix=st:",
	         sentinel_port[0], sentinel_port[1], sentinel_port[2]);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	for (int i = 0; i < SENTINELS; i++)
		rp_kill(&sentinel_pid[i]);
	rp_kill(&master_pid);
	rp_kill(&replica_pid);
	rp_rmdir(tmpdir);
	return 0;
}

/* ---- finding the master ---- */

static void test_finds_master(void **state)
{
	csrf_store *st = NULL;
	char u[256], buf[16], expect[64];
	size_t len;
	int dead = rp_free_port();
	rp_log log;

	(void)state;
	rp_log_init(&log);
	/* a dead sentinel first: the next one answers */
	snprintf(u, sizeof u, "redis-sentinel://127.0.0.1:%d,127.0.0.1:%d/" MASTER "/1?prefix=st:", dead,
	         sentinel_port[1]);
	assert_int_equal(csrf_store_open_log(&st, u, rp_log_hook, &log), CSRF_OK);
	assert_int_equal(csrf_store_set(st, "where", 5, "here", 4, 0), CSRF_OK);
	assert_int_equal(csrf_store_get(st, "where", 5, buf, sizeof buf, &len), CSRF_OK);
	csrf_store_close(st);
	snprintf(expect, sizeof expect, "is at 127.0.0.1:%d", master_port);
	assert_true(rp_log_find(&log, CSRF_OK, expect) >= 0);
	rp_log_print(&log);
	/* it was written on the master, in database 1 */
	redisContext *c = redisConnect("127.0.0.1", master_port);
	assert_true(c != NULL && c->err == 0);
	redisReply *r = redisCommand(c, "SELECT 1");
	freeReplyObject(r);
	r = redisCommand(c, "EXISTS st:where");
	assert_int_equal(r->integer, 1);
	freeReplyObject(r);
	redisFree(c);

	/* a master name no sentinel knows: a configuration error at open */
	rp_log_init(&log);
	snprintf(u, sizeof u, "redis-sentinel://127.0.0.1:%d,127.0.0.1:%d/othermaster", sentinel_port[0],
	         sentinel_port[2]);
	st = (csrf_store *)&st;
	assert_int_equal(csrf_store_open_log(&st, u, rp_log_hook, &log), CSRF_ERR_CONFIG);
	assert_null(st);
	assert_true(rp_log_find(&log, CSRF_ERR_CONFIG, "not known to any sentinel") >= 0);

	/* no sentinel answers: opens, fails closed */
	snprintf(u, sizeof u, "redis-sentinel://127.0.0.1:%d/" MASTER "?timeout_ms=100", dead);
	assert_int_equal(csrf_store_open(&st, u), CSRF_OK);
	assert_int_equal(csrf_store_set(st, "k", 1, "v", 1, 0), CSRF_STORE_UNAVAILABLE);
	csrf_store_close(st);
}

/* ---- a failover under load ---- */

#define MAX_CALLS 20000

typedef struct {
	csrf_store *st;
	atomic_int stop;
	int n;
	int64_t t0[MAX_CALLS];
	csrf_reason got[MAX_CALLS];
} voter;

static void *vote_loop(void *p)
{
	voter *v = p;
	int64_t value;

	while (!atomic_load(&v->stop) && v->n < MAX_CALLS) {
		v->t0[v->n] = rp_mono_ms();
		v->got[v->n] = csrf_store_incr(v->st, "votes", 5, 0, &value);
		v->n++;
		rp_sleep_ms(10);
	}
	return NULL;
}

static void test_failover(void **state)
{
	static voter v;
	csrf_store *st = NULL;
	csrf_ctx *ctx = NULL;
	char hash[CSRF_PWHASH_LEN], buf[32];
	size_t len;
	pthread_t t;
	int64_t killed, first_ok = -1, durable;
	long long votes = 0;
	int ok = 0, unsure = 0, after = 0;
	redisReply *r;
	rp_log log;

	(void)state;
	rp_log_init(&log);
	assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
	assert_int_equal(csrf_password_hash("pw", 2, hash, sizeof hash), CSRF_OK);
	csrf_ctx_set_reauth_policy(ctx, 2, 900, 300);
	csrf_ctx_set_login_policy(ctx, 2, 600, 600);
	assert_int_equal(csrf_store_open_log(&st, url, rp_log_hook, &log), CSRF_OK);

	/* lockouts before the failover: a step-up and a login */
	assert_int_equal(csrf_reauth(ctx, st, "carol", 5, "s1", 2, "no", 2, hash, 0), CSRF_REAUTH_FAILED);
	assert_int_equal(csrf_reauth(ctx, st, "carol", 5, "s1", 2, "no", 2, hash, 0), CSRF_LOCKED_OUT);
	assert_int_equal(csrf_login_attempt(ctx, st, "dave", 4, "c", 1, "no", 2, hash), CSRF_REAUTH_FAILED);
	assert_int_equal(csrf_login_attempt(ctx, st, "dave", 4, "c", 1, "no", 2, hash), CSRF_LOCKED_OUT);

	memset(&v, 0, sizeof v);
	v.st = st;
	assert_int_equal(pthread_create(&t, NULL, vote_loop, &v), 0);
	rp_sleep_ms(500);
	/* what the replica surely has (replication is asynchronous: a write
	 * acknowledged in the last instant before a crash can be lost, a
	 * property of Redis, not of the store) */
	r = rp_cmd(master_port, NULL, NULL, "GET st:votes");
	assert_non_null(r);
	durable = r->type == REDIS_REPLY_STRING ? strtoll(r->str, NULL, 10) : 0;
	freeReplyObject(r);
	r = rp_cmd(master_port, NULL, NULL, "WAIT 1 2000");
	assert_non_null(r);
	assert_int_equal(r->integer, 1);
	freeReplyObject(r);
	rp_kill(&master_pid);
	killed = rp_mono_ms();
	for (int64_t end = killed + 15000; rp_mono_ms() < end;) {
		rp_sleep_ms(100);
		if (first_ok < 0) {
			for (int i = 0; i < v.n; i++)
				if (v.t0[i] >= killed && v.got[i] == CSRF_OK) {
					first_ok = v.t0[i];
					break;
				}
		}
		if (first_ok >= 0 && rp_mono_ms() > first_ok + 2000)
			break;
	}
	atomic_store(&v.stop, 1);
	pthread_join(t, NULL);
	rp_log_print(&log);
	if (first_ok < 0)
		fail_msg("no increment succeeded within 15 s of the kill");
	printf("# failover: first success %lld ms after the kill\n", (long long)(first_ok - killed));
	assert_true(first_ok - killed < 10000);
	for (int i = 0; i < v.n; i++) {
		if (v.got[i] == CSRF_OK)
			ok++;
		else if (v.got[i] == CSRF_STORE_UNAVAILABLE && v.t0[i] < killed + 50)
			unsure++; /* in flight at the kill: applied or not */
		else if (v.got[i] != CSRF_STORE_UNAVAILABLE)
			fail_msg("call %d: %s", i, csrf_reason_name(v.got[i]));
		if (v.t0[i] >= first_ok + 1000 && v.got[i] != CSRF_OK)
			fail_msg("call %d, %lld ms after the first success: %s", i, (long long)(v.t0[i] - first_ok),
			         csrf_reason_name(v.got[i]));
		after += v.t0[i] >= first_ok + 1000;
	}
	assert_true(after >= 20);
	/* the new master: the replica, promoted */
	assert_int_equal(csrf_store_get(st, "votes", 5, buf, sizeof buf, &len), CSRF_OK);
	buf[len] = '\0';
	votes = strtoll(buf, NULL, 10);
	printf("# votes: %lld stored, %d acknowledged, %d in flight at the kill, %lld replicated before it\n", votes,
	       ok, unsure, (long long)durable);
	assert_true(votes <= ok + unsure); /* never counted twice */
	assert_true(votes >= durable);
	assert_true(rp_log_find(&log, CSRF_OK, "is at 127.0.0.1") >= 0);
	redisReply *role = rp_cmd(replica_port, NULL, NULL, "ROLE");
	assert_non_null(role);
	assert_string_equal(role->element[0]->str, "master");
	freeReplyObject(role);

	/* the lockouts written before still hold */
	assert_int_equal(csrf_reauth(ctx, st, "carol", 5, "s9", 2, "pw", 2, hash, 0), CSRF_LOCKED_OUT);
	assert_int_equal(csrf_login_attempt(ctx, st, "dave", 4, "c", 1, "pw", 2, hash), CSRF_LOCKED_OUT);
	assert_int_equal(csrf_login_attempt(ctx, st, "dave", 4, "elsewhere", 9, "pw", 2, hash), CSRF_OK);
	csrf_store_close(st);
	csrf_ctx_free(ctx);
}

/* The old master comes back: the sentinels make it a replica of the new
 * one. Then the roles are swapped back by hand (SENTINEL FAILOVER): the
 * store's connections to the demoted master answer READONLY or are cut,
 * and the store goes to the new master within 10 s. */
static int old_master_is_replica(void)
{
	redisReply *r = rp_cmd(master_port, NULL, NULL, "ROLE");
	int ok =
	    r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements > 0 && strcmp(r->element[0]->str, "slave") == 0;

	if (r != NULL)
		freeReplyObject(r);
	return ok && array_len(sentinel_port[0], "SENTINEL replicas " MASTER) >= 1;
}

static int promoted_is_replica_again(void)
{
	redisReply *r = rp_cmd(replica_port, NULL, NULL, "ROLE");
	int ok =
	    r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements > 0 && strcmp(r->element[0]->str, "slave") == 0;

	if (r != NULL)
		freeReplyObject(r);
	return ok;
}

static int master_is_back(void)
{
	redisReply *r = rp_cmd(sentinel_port[0], NULL, NULL, "SENTINEL get-master-addr-by-name " MASTER);
	int ok = r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
	         strtol(r->element[1]->str, NULL, 10) == master_port;

	if (r != NULL)
		freeReplyObject(r);
	return ok;
}

static void test_switch_back(void **state)
{
	csrf_store *st = NULL;
	int64_t t0, v = 0;
	csrf_reason res = CSRF_STORE_UNAVAILABLE;
	rp_log log;
	int failures = 0;

	(void)state;
	rp_log_init(&log);
	master_pid = rp_redis_start(tmpdir, master_port, NULL, NULL, NULL);
	assert_true(master_pid > 0);
	assert_true(wait_for(old_master_is_replica, 20000));
	assert_int_equal(csrf_store_open_log(&st, url, rp_log_hook, &log), CSRF_OK);
	assert_int_equal(csrf_store_incr(st, "switch", 6, 0, &v), CSRF_OK);
	assert_int_equal(v, 1);
	redisReply *w = rp_cmd(replica_port, NULL, NULL, "WAIT 1 10000");
	assert_non_null(w);
	assert_int_equal(w->integer, 1);
	freeReplyObject(w);
	/* a sentinel refuses a failover too soon after the last one
	 * (2 x failover-timeout), or before it saw the replica synced */
	for (int64_t end = rp_mono_ms() + 30000;;) {
		redisReply *r = rp_cmd(sentinel_port[0], NULL, NULL, "SENTINEL FAILOVER " MASTER);
		assert_non_null(r);
		int started = r->type == REDIS_REPLY_STATUS;
		if (!started && rp_mono_ms() > end)
			fail_msg("SENTINEL FAILOVER: %s", r->str);
		freeReplyObject(r);
		if (started)
			break;
		rp_sleep_ms(500);
	}
	assert_true(wait_for(master_is_back, 20000));
	/* until the sentinels demote the other one, both take writes (Redis
	 * Sentinel's window, not the store's) */
	assert_true(wait_for(promoted_is_replica_again, 20000));
	t0 = rp_mono_ms();
	while (rp_mono_ms() - t0 < 10000) {
		res = csrf_store_incr(st, "switch", 6, 0, &v);
		if (res == CSRF_OK)
			break;
		assert_int_equal(res, CSRF_STORE_UNAVAILABLE);
		failures++;
		rp_sleep_ms(50);
	}
	rp_log_print(&log);
	printf("# switched back: %d failed calls, then %s\n", failures, csrf_reason_name(res));
	assert_int_equal(res, CSRF_OK);
	assert_true(v >= 2);
	char expect[64];
	snprintf(expect, sizeof expect, "is at 127.0.0.1:%d", master_port);
	assert_true(rp_log_find(&log, CSRF_OK, expect) >= 0);
	csrf_store_close(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_finds_master),
	    cmocka_unit_test(test_failover),
	    cmocka_unit_test(test_switch_back),
	};

	if (rp_redis_bin() == NULL || rp_sentinel_bin() == NULL) {
		printf("# skipped: no redis-server or redis-sentinel\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
