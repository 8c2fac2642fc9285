/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_store_redis.c - src/session/store_redis.c against real redis-servers that
 * this test starts on free loopback ports (no persistence, a temporary
 * directory) and stops at the end: the shared semantics table, prefixes
 * and databases, TTLs set atomically, threads over the pool,
 * re-authentication and login throttling over Redis, and outages: a
 * killed server and a frozen one answer CSRF_STORE_UNAVAILABLE within
 * timeout_ms (+100 ms) on every call; after a restart, under load from
 * four threads, every call that starts once Redis answers again
 * succeeds; a store opened while Redis is down opens and recovers; a
 * broken connection is retried for reads and never for a write that was
 * sent (a cutting proxy in the test); AUTH with requirepass and an ACL
 * user, and wrong passwords refused at open without showing them; and
 * what Redis's eviction policy does to lockout counters when it is full;
 * and a lying server (written here) whose replies trickle, are too large
 * or nest too deep: every call ends within timeout_ms, fails closed with
 * a log line, and the connection is replaced; the same liar as a
 * sentinel holds neither the open nor a call longer.
 *
 * REDIS_SERVER names the binary (default /usr/bin/redis-server); without
 * it the test is skipped (exit 77).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>
#include <poll.h>
#include <stdatomic.h>

#include "session/session_internal.h"
#include "redisproc.h"

#include "store_semantics.h"

#define TIMEOUT_MS 200
#define SLACK_MS 100

static char tmpdir[64];
static int port;
static pid_t redis_pid = -1;
static char prefix[32];

static int64_t mono_ms(void)
{
	return rp_mono_ms();
}

static void sleep_ms(int ms)
{
	rp_sleep_ms(ms);
}

static int free_port(void)
{
	return rp_free_port();
}

/* (Re)starts the main redis-server on `port`. */
static int redis_start(void)
{
	redis_pid = rp_redis_start(tmpdir, port, NULL, NULL, NULL);
	return redis_pid > 0 ? 0 : -1;
}

static void redis_kill(void)
{
	rp_kill(&redis_pid);
}

static int group_setup(void **state)
{
	(void)state;
	if (rp_tmpdir(tmpdir, sizeof tmpdir) != 0)
		return -1;
	port = free_port();
	snprintf(prefix, sizeof prefix, "t%d:", (int)getpid());
	if (port <= 0 || redis_start() != 0) {
		fprintf(stderr, "cannot start redis-server on port %d\n", port);
		redis_kill();
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	redis_kill();
	rp_rmdir(tmpdir);
	return 0;
}

/* ---- what the store logs (redisproc.h) ---- */

/* No line holds needle (a password). */
static void log_never_shows(rp_log *l, const char *needle)
{
	if (rp_log_any(l, needle) >= 0)
		fail_msg("the log shows a secret");
}

static csrf_store *open_url(const char *url, rp_log *log)
{
	csrf_store *st = NULL;

	assert_int_equal(csrf_store_open_log(&st, url, log ? rp_log_hook : NULL, log), CSRF_OK);
	assert_non_null(st);
	return st;
}

static csrf_store *open_store(unsigned db, const char *pfx)
{
	char url[160];

	snprintf(url, sizeof url, "redis://127.0.0.1:%d/%u?prefix=%s&timeout_ms=%d", port, db, pfx, TIMEOUT_MS);
	return open_url(url, NULL);
}

/* A direct connection for looking behind the store. */
static redisReply *raw(unsigned db, const char *fmt, const char *key)
{
	redisContext *c = redisConnect("127.0.0.1", port);
	redisReply *r;

	assert_non_null(c);
	assert_int_equal(c->err, 0);
	r = redisCommand(c, "SELECT %u", db);
	assert_non_null(r);
	freeReplyObject(r);
	r = redisCommand(c, fmt, key, strlen(key));
	assert_non_null(r);
	redisFree(c);
	return r;
}

static long long raw_int(unsigned db, const char *fmt, const char *key)
{
	redisReply *r = raw(db, fmt, key);
	long long v;

	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	v = r->integer;
	freeReplyObject(r);
	return v;
}

/* ---- semantics ---- */

static void test_semantics(void **state)
{
	csrf_store *st = open_store(0, prefix);

	(void)state;
	sem_run(st);
	sem_args(st);
	csrf_store_close(st);
}

static void test_prefix_db_ttl(void **state)
{
	char key[64], buf[16];
	size_t len;
	int64_t v;
	csrf_store *a, *b, *c;

	(void)state;
	a = open_store(0, "pa:");
	b = open_store(0, "pb:");
	c = open_store(7, "pa:");
	assert_int_equal(csrf_store_set(a, "k", 1, "A", 1, 0), CSRF_OK);
	assert_int_equal(csrf_store_get(b, "k", 1, buf, sizeof buf, &len), CSRF_NOT_FOUND);
	assert_int_equal(csrf_store_get(c, "k", 1, buf, sizeof buf, &len), CSRF_NOT_FOUND);
	assert_int_equal(raw_int(0, "EXISTS %b", "pa:k"), 1);
	assert_int_equal(raw_int(7, "EXISTS %b", "pa:k"), 0);
	assert_int_equal(csrf_store_set(c, "k", 1, "C", 1, 0), CSRF_OK);
	assert_int_equal(raw_int(7, "EXISTS %b", "pa:k"), 1);
	assert_int_equal(csrf_store_get(a, "k", 1, buf, sizeof buf, &len), CSRF_OK);
	assert_memory_equal(buf, "A", 1);

	/* TTLs: set with one, without one, and counters */
	assert_int_equal(raw_int(0, "PTTL %b", "pa:k"), -1);
	assert_int_equal(csrf_store_set(a, "t", 1, "x", 1, 60), CSRF_OK);
	long long pttl = raw_int(0, "PTTL %b", "pa:t");
	assert_true(pttl > 55000 && pttl <= 60000);
	assert_int_equal(csrf_store_incr(a, "n", 1, 30, &v), CSRF_OK);
	assert_int_equal(v, 1);
	pttl = raw_int(0, "PTTL %b", "pa:n");
	assert_true(pttl > 25000 && pttl <= 30000);
	assert_int_equal(csrf_store_incr(a, "n", 1, 600, &v), CSRF_OK); /* keeps its TTL */
	assert_int_equal(v, 2);
	pttl = raw_int(0, "PTTL %b", "pa:n");
	assert_true(pttl > 25000 && pttl <= 30000);
	assert_int_equal(csrf_store_incr(a, "m", 1, 0, &v), CSRF_OK);
	assert_int_equal(raw_int(0, "PTTL %b", "pa:m"), -1);

	/* an empty prefix is the bare key */
	csrf_store *e = open_store(0, "");
	snprintf(key, sizeof key, "%sbare", prefix);
	assert_int_equal(csrf_store_set(e, key, strlen(key), "1", 1, 0), CSRF_OK);
	assert_int_equal(raw_int(0, "EXISTS %b", key), 1);
	csrf_store_close(e);
	csrf_store_close(a);
	csrf_store_close(b);
	csrf_store_close(c);
}

static void test_real_expiry(void **state)
{
	csrf_store *st = open_store(0, prefix);
	char buf[8];
	size_t len;
	int64_t v;

	(void)state;
	assert_int_equal(csrf_store_set(st, "short", 5, "v", 1, 1), CSRF_OK);
	assert_int_equal(csrf_store_incr(st, "cnt", 3, 1, &v), CSRF_OK);
	assert_int_equal(csrf_store_incr(st, "cnt", 3, 1, &v), CSRF_OK);
	assert_int_equal(v, 2);
	assert_int_equal(csrf_store_get(st, "short", 5, buf, sizeof buf, &len), CSRF_OK);
	sleep_ms(1150);
	assert_int_equal(csrf_store_get(st, "short", 5, buf, sizeof buf, &len), CSRF_NOT_FOUND);
	assert_int_equal(csrf_store_incr(st, "cnt", 3, 1, &v), CSRF_OK);
	assert_int_equal(v, 1);
	csrf_store_close(st);
}

/* ---- threads ---- */

static void *incr_worker(void *p)
{
	csrf_store *st = p;
	int64_t v;
	intptr_t errors = 0;

	for (int i = 0; i < 500; i++)
		if (csrf_store_incr(st, "threads", 7, 0, &v) != CSRF_OK)
			errors++;
	return (void *)errors;
}

static void test_threads(void **state)
{
	csrf_store *st = open_store(0, prefix);
	pthread_t t[4];
	char buf[16];
	size_t len;

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, incr_worker, st), 0);
	for (int i = 0; i < 4; i++) {
		void *errors;
		assert_int_equal(pthread_join(t[i], &errors), 0);
		assert_null(errors);
	}
	assert_int_equal(csrf_store_get(st, "threads", 7, buf, sizeof buf, &len), CSRF_OK);
	assert_int_equal(len, 4);
	assert_memory_equal(buf, "2000", 4);
	csrf_store_close(st);
}

/* ---- re-authentication over Redis ---- */

static void test_reauth(void **state)
{
	csrf_store *st = open_store(0, prefix);
	csrf_ctx *ctx = NULL;
	char hash[CSRF_PWHASH_LEN];
	int64_t now = 1700000000;

	(void)state;
	assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
	csrf_ctx_set_reauth_policy(ctx, 2, 60, 30);
	assert_int_equal(csrf_password_hash("pw", 2, hash, sizeof hash), CSRF_OK);
	assert_int_equal(csrf_reauth(ctx, st, "u", 1, "s", 1, "no", 2, hash, now), CSRF_REAUTH_FAILED);
	assert_int_equal(raw_int(0, "EXISTS %b", "fail:acct:u"), 0); /* only under the prefix */
	char key[64];
	snprintf(key, sizeof key, "%sfail:acct:u", prefix);
	assert_int_equal(raw_int(0, "EXISTS %b", key), 1);
	assert_int_equal(csrf_reauth(ctx, st, "u", 1, "s", 1, "no", 2, hash, now), CSRF_LOCKED_OUT);
	assert_int_equal(csrf_reauth(ctx, st, "u", 1, "s", 1, "pw", 2, hash, now), CSRF_LOCKED_OUT);
	long long pttl = raw_int(0, "PTTL %b", key);
	assert_true(pttl > 55000 && pttl <= 60000);
	assert_int_equal(csrf_reauth(ctx, st, "v", 1, "s2", 2, "pw", 2, hash, now), CSRF_OK);
	assert_int_equal(csrf_reauth_recent(ctx, st, "s2", 2, now + 29), CSRF_OK);
	assert_int_equal(csrf_reauth_recent(ctx, st, "s2", 2, now + 30), CSRF_REAUTH_REQUIRED);
	assert_int_equal(csrf_reauth_recent(ctx, st, "s", 1, now), CSRF_REAUTH_REQUIRED);
	csrf_ctx_free(ctx);
	csrf_store_close(st);
}

/* ---- outages ---- */

/* One call of each kind in turn; *ms is how long it took. */
static csrf_reason call(csrf_store *st, int i, int64_t *ms)
{
	char buf[16];
	size_t len;
	int64_t v;
	int64_t t0 = mono_ms();
	csrf_reason r = CSRF_ERR_INTERNAL;

	switch (i % 4) {
	case 0:
		r = csrf_store_get(st, "o", 1, buf, sizeof buf, &len);
		break;
	case 1:
		r = csrf_store_set(st, "o", 1, "v", 1, 60);
		break;
	case 2:
		r = csrf_store_incr(st, "oc", 2, 60, &v);
		break;
	case 3:
		r = csrf_store_del(st, "od", 2);
		break;
	}
	*ms = mono_ms() - t0;
	return r;
}

/* Calls for span_ms: every one answers CSRF_STORE_UNAVAILABLE in time. */
static void expect_down(csrf_store *st, int span_ms, const char *what)
{
	int64_t end = mono_ms() + span_ms, ms, worst = 0;
	int n = 0;

	while (mono_ms() < end) {
		csrf_reason r = call(st, n, &ms);
		if (r != CSRF_STORE_UNAVAILABLE)
			fail_msg("%s: call %d answered %s", what, n, csrf_reason_name(r));
		if (ms > TIMEOUT_MS + SLACK_MS)
			fail_msg("%s: call %d took %lld ms", what, n, (long long)ms);
		if (ms > worst)
			worst = ms;
		n++;
		sleep_ms(20);
	}
	printf("# %s: %d calls, slowest %lld ms\n", what, n, (long long)worst);
	assert_true(n >= 5);
}

/* The same store recovers by itself within a few seconds. */
static void expect_back(csrf_store *st, const char *what)
{
	int64_t ms, t0 = mono_ms();
	csrf_reason r = CSRF_STORE_UNAVAILABLE;

	while (mono_ms() - t0 < 5000) {
		r = call(st, 1, &ms);
		if (r == CSRF_OK)
			break;
		assert_int_equal(r, CSRF_STORE_UNAVAILABLE);
		assert_true(ms <= TIMEOUT_MS + SLACK_MS);
		sleep_ms(50);
	}
	if (r != CSRF_OK)
		fail_msg("%s: the store did not come back", what);
	for (int i = 0; i < 8; i++) {
		r = call(st, i, &ms);
		assert_int_equal(r, CSRF_OK);
	}
}

static void test_killed_server(void **state)
{
	csrf_store *st = open_store(3, prefix), *st0 = open_store(0, prefix);
	char buf[16];
	size_t len;

	(void)state;
	assert_int_equal(csrf_store_set(st, "before", 6, "1", 1, 0), CSRF_OK);
	assert_int_equal(csrf_store_set(st0, "before", 6, "1", 1, 0), CSRF_OK);
	redis_kill();
	expect_down(st, 1500, "killed, db 3");
	expect_down(st0, 600, "killed, db 0");
	assert_int_equal(redis_start(), 0);
	expect_back(st, "restarted, db 3");
	expect_back(st0, "restarted, db 0");
	/* a fresh server without persistence: the old data is gone */
	assert_int_equal(csrf_store_get(st, "before", 6, buf, sizeof buf, &len), CSRF_NOT_FOUND);
	/* and SELECT was sent again on the new connection */
	assert_int_equal(csrf_store_set(st, "after", 5, "1", 1, 0), CSRF_OK);
	char key[64];
	snprintf(key, sizeof key, "%safter", prefix);
	assert_int_equal(raw_int(3, "EXISTS %b", key), 1);
	assert_int_equal(raw_int(0, "EXISTS %b", key), 0);
	csrf_store_close(st);
	csrf_store_close(st0);
}

typedef struct {
	csrf_store *st;
	int id;
	int64_t worst_ms;
	int wrong; /* calls that answered something else */
	int calls;
} outage_arg;

static void *outage_worker(void *p)
{
	outage_arg *a = p;
	int64_t end = mono_ms() + 1500, ms;

	while (mono_ms() < end) {
		if (call(a->st, a->id + a->calls, &ms) != CSRF_STORE_UNAVAILABLE)
			a->wrong++;
		if (ms > a->worst_ms)
			a->worst_ms = ms;
		a->calls++;
		sleep_ms(5);
	}
	return NULL;
}

static void test_frozen_server(void **state)
{
	csrf_store *st = open_store(5, prefix);
	pthread_t t[4];
	outage_arg args[4];
	int64_t ms;

	(void)state;
	assert_int_equal(call(st, 1, &ms), CSRF_OK);
	/* stopped, not dead: the kernel still accepts connections, nothing
	 * answers, so only the timeouts end the calls */
	assert_int_equal(kill(redis_pid, SIGSTOP), 0);
	expect_down(st, 2000, "frozen");
	/* four threads at once: waiting for the connection's lock counts
	 * against each call's own deadline */
	for (int i = 0; i < 4; i++) {
		args[i] = (outage_arg){st, i, 0, 0, 0};
		assert_int_equal(pthread_create(&t[i], NULL, outage_worker, &args[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		printf("# frozen, thread %d: %d calls, slowest %lld ms\n", i, args[i].calls,
		       (long long)args[i].worst_ms);
		assert_int_equal(args[i].wrong, 0);
		assert_true(args[i].worst_ms <= TIMEOUT_MS + SLACK_MS);
		assert_true(args[i].calls > 0);
	}
	assert_int_equal(kill(redis_pid, SIGCONT), 0);
	expect_back(st, "thawed");
	csrf_store_close(st);
}

/* Redis down when the store opens: the open succeeds at once, calls fail
 * closed, and the first call once Redis answers succeeds. A database
 * Redis does not have is a configuration error at open. */
static void test_open_lazily(void **state)
{
	csrf_store *st = (csrf_store *)&st;
	char url[160];
	int64_t t0, ms;
	int late = free_port();
	pid_t pid;
	rp_log log;

	(void)state;
	rp_log_init(&log);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d/2?timeout_ms=%d&prefix=%s", late, TIMEOUT_MS, prefix);
	t0 = mono_ms();
	st = open_url(url, &log);
	assert_true(mono_ms() - t0 <= TIMEOUT_MS + SLACK_MS);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(call(st, i, &ms), CSRF_STORE_UNAVAILABLE);
		assert_true(ms <= TIMEOUT_MS + SLACK_MS);
	}
	pid = rp_redis_start(tmpdir, late, NULL, NULL, NULL);
	assert_true(pid > 0);
	/* Redis answers PING: the very next calls all succeed */
	for (int i = 0; i < 8; i++)
		assert_int_equal(call(st, i % 4 == 0 ? 1 : i, &ms), CSRF_OK);
	assert_true(rp_log_find(&log, CSRF_STORE_UNAVAILABLE, "cannot be reached") >= 0);
	assert_true(rp_log_find(&log, CSRF_OK, "connected") >= 0);
	rp_log_print(&log);
	csrf_store_close(st);

	/* a database this Redis does not have */
	const char *four[] = {"--databases", "4", NULL};
	int p4 = free_port();
	pid_t pid4 = rp_redis_start(tmpdir, p4, four, NULL, NULL);
	assert_true(pid4 > 0);
	rp_log_init(&log);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d/7", p4);
	st = (csrf_store *)&st;
	assert_int_equal(csrf_store_open_log(&st, url, rp_log_hook, &log), CSRF_ERR_CONFIG);
	assert_null(st);
	assert_true(rp_log_find(&log, CSRF_ERR_CONFIG, "SELECT") >= 0);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d/3", p4);
	st = open_url(url, NULL);
	assert_int_equal(csrf_store_set(st, "k", 1, "v", 1, 0), CSRF_OK);
	csrf_store_close(st);
	rp_kill(&pid4);
	rp_kill(&pid);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d/16", port);
	assert_int_equal(csrf_store_open(&st, url), CSRF_ERR_CONFIG);
	assert_null(st);
}

/* ---- restart under load ---- */

#define LOAD_THREADS 4
#define LOAD_MAX 40000

typedef struct {
	csrf_store *st;
	int id;
	atomic_int *stop;
	int n;
	int64_t *t0, *t1;
	csrf_reason *got;
} load_arg;

static void *load_worker(void *p)
{
	load_arg *a = p;
	int64_t ms;

	while (!atomic_load(a->stop) && a->n < LOAD_MAX) {
		a->t0[a->n] = mono_ms();
		a->got[a->n] = call(a->st, a->id + a->n, &ms);
		a->t1[a->n] = mono_ms();
		a->n++;
		sleep_ms(2);
	}
	return NULL;
}

static void test_restart_under_load(void **state)
{
	char url[160];
	csrf_store *st;
	pthread_t t[LOAD_THREADS];
	load_arg args[LOAD_THREADS];
	atomic_int stop = 0;
	int64_t killed, restarting, up;
	int after = 0, down = 0;

	(void)state;
	/* a generous timeout: on a loaded machine a slow call is not the
	 * point here, a failed one is */
	snprintf(url, sizeof url, "redis://127.0.0.1:%d/4?timeout_ms=1000&pool=4&prefix=%s", port, prefix);
	st = open_url(url, NULL);
	for (int i = 0; i < LOAD_THREADS; i++) {
		args[i] = (load_arg){st,
		                     i,
		                     &stop,
		                     0,
		                     calloc(LOAD_MAX, sizeof(int64_t)),
		                     calloc(LOAD_MAX, sizeof(int64_t)),
		                     calloc(LOAD_MAX, sizeof(csrf_reason))};
		assert_non_null(args[i].got);
		assert_int_equal(pthread_create(&t[i], NULL, load_worker, &args[i]), 0);
	}
	sleep_ms(400);
	redis_kill();
	killed = mono_ms();
	sleep_ms(600);
	restarting = mono_ms();
	assert_int_equal(redis_start(), 0);
	up = mono_ms();
	sleep_ms(800);
	atomic_store(&stop, 1);
	for (int i = 0; i < LOAD_THREADS; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		for (int k = 0; k < args[i].n; k++) {
			csrf_reason r = args[i].got[k];
			int ok = r == CSRF_OK || r == CSRF_NOT_FOUND;
			if (args[i].t0[k] >= up) {
				/* every call that starts once Redis answers again */
				if (!ok)
					fail_msg("thread %d call %d, %lld ms after Redis was back: %s", i, k,
					         (long long)(args[i].t0[k] - up), csrf_reason_name(r));
				after++;
			} else if (args[i].t0[k] >= killed && args[i].t1[k] < restarting) {
				/* while it is down: fail closed */
				if (r != CSRF_STORE_UNAVAILABLE)
					fail_msg("thread %d call %d with Redis dead: %s", i, k, csrf_reason_name(r));
				down++;
			}
		}
		free(args[i].t0);
		free(args[i].t1);
		free(args[i].got);
	}
	printf("# restart under load: %d calls while down, %d after, all as they should be\n", down, after);
	assert_true(down >= 20 && after >= 20);
	csrf_store_close(st);
}

/* ---- which broken connections are retried: a proxy that cuts ---- */

/* Relays between the store and Redis. With cut set, the next request is
 * passed to Redis and its reply awaited, then both connections are
 * closed instead of passing the reply on: the command was applied, the
 * store never hears back. drop_all closes every connection (a restart,
 * as the store sees it); with refuse set, new connections are closed at
 * once (a Redis that is down, as the store sees it). */
typedef struct {
	int listen_fd, port, upstream;
	pthread_t thread;
	atomic_int cut, drop_all, refuse, stop, cuts;
} proxy;

#define PROXY_PAIRS 16

static int dial_local(int p)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)p);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static void *proxy_run(void *p)
{
	proxy *px = p;
	int cl[PROXY_PAIRS], up[PROXY_PAIRS];
	char buf[16384];

	for (int i = 0; i < PROXY_PAIRS; i++)
		cl[i] = up[i] = -1;
	while (!atomic_load(&px->stop)) {
		struct pollfd fds[1 + 2 * PROXY_PAIRS];
		int n = 0;

		if (atomic_exchange(&px->drop_all, 0)) {
			for (int i = 0; i < PROXY_PAIRS; i++) {
				if (cl[i] >= 0) {
					close(cl[i]);
					close(up[i]);
					cl[i] = up[i] = -1;
				}
			}
		}
		fds[n++] = (struct pollfd){px->listen_fd, POLLIN, 0};
		for (int i = 0; i < PROXY_PAIRS; i++) {
			fds[n++] = (struct pollfd){cl[i], POLLIN, 0};
			fds[n++] = (struct pollfd){up[i], POLLIN, 0};
		}
		if (poll(fds, (nfds_t)n, 20) <= 0)
			continue;
		if (fds[0].revents & POLLIN) {
			int c = accept(px->listen_fd, NULL, NULL);
			int u = c >= 0 && !atomic_load(&px->refuse) ? dial_local(px->upstream) : -1;
			int slot = -1;
			for (int i = 0; i < PROXY_PAIRS && slot < 0; i++)
				if (cl[i] < 0)
					slot = i;
			if (c >= 0 && u >= 0 && slot >= 0) {
				cl[slot] = c;
				up[slot] = u;
			} else {
				if (c >= 0)
					close(c);
				if (u >= 0)
					close(u);
			}
		}
		for (int i = 0; i < PROXY_PAIRS; i++) {
			short rc = fds[1 + 2 * i].revents, ru = fds[2 + 2 * i].revents;
			ssize_t k;
			if (cl[i] < 0)
				continue;
			if (rc & (POLLIN | POLLHUP | POLLERR)) {
				k = read(cl[i], buf, sizeof buf);
				if (k <= 0 || write(up[i], buf, (size_t)k) != k)
					goto close_pair;
				if (atomic_exchange(&px->cut, 0)) {
					/* let Redis apply it, then lose the answer */
					(void)read(up[i], buf, sizeof buf);
					atomic_fetch_add(&px->cuts, 1);
					goto close_pair;
				}
			}
			if (ru & (POLLIN | POLLHUP | POLLERR)) {
				k = read(up[i], buf, sizeof buf);
				if (k <= 0 || write(cl[i], buf, (size_t)k) != k)
					goto close_pair;
			}
			continue;
		close_pair:
			close(cl[i]);
			close(up[i]);
			cl[i] = up[i] = -1;
		}
	}
	for (int i = 0; i < PROXY_PAIRS; i++) {
		if (cl[i] >= 0) {
			close(cl[i]);
			close(up[i]);
		}
	}
	return NULL;
}

static void proxy_start(proxy *px, int upstream)
{
	struct sockaddr_in a;
	socklen_t len = sizeof a;

	memset(px, 0, sizeof *px);
	px->upstream = upstream;
	px->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(px->listen_fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(getsockname(px->listen_fd, (struct sockaddr *)&a, &len), 0);
	assert_int_equal(listen(px->listen_fd, 16), 0);
	px->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&px->thread, NULL, proxy_run, px), 0);
}

static void proxy_stop(proxy *px)
{
	atomic_store(&px->stop, 1);
	pthread_join(px->thread, NULL);
	close(px->listen_fd);
}

static void test_retry_rules(void **state)
{
	proxy px;
	char url[160], buf[16];
	size_t len;
	int64_t v;
	csrf_store *st;
	rp_log log;
	int logged;

	(void)state;
	proxy_start(&px, port);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d/6?timeout_ms=1000&pool=1&prefix=%s", px.port, prefix);
	rp_log_init(&log);
	st = open_url(url, &log);
	assert_int_equal(csrf_store_set(st, "r", 1, "read-me", 7, 0), CSRF_OK);
	assert_int_equal(csrf_store_incr(st, "n", 1, 0, &v), CSRF_OK);

	/* a read whose answer is lost: asked again on a fresh connection */
	atomic_store(&px.cut, 1);
	assert_int_equal(csrf_store_get(st, "r", 1, buf, sizeof buf, &len), CSRF_OK);
	assert_int_equal(atomic_load(&px.cuts), 1);
	assert_int_equal(len, 7);
	assert_memory_equal(buf, "read-me", 7);

	/* an increment whose answer is lost: applied once, never sent again */
	atomic_store(&px.cut, 1);
	assert_int_equal(csrf_store_incr(st, "n", 1, 0, &v), CSRF_STORE_UNAVAILABLE);
	assert_int_equal(atomic_load(&px.cuts), 2);
	assert_int_equal(csrf_store_get(st, "n", 1, buf, sizeof buf, &len), CSRF_OK);
	assert_int_equal(len, 1);
	assert_memory_equal(buf, "2", 1);
	/* the same for set and del: sent, so not repeated */
	atomic_store(&px.cut, 1);
	assert_int_equal(csrf_store_set(st, "w", 1, "x", 1, 0), CSRF_STORE_UNAVAILABLE);
	assert_int_equal(csrf_store_get(st, "w", 1, buf, sizeof buf, &len), CSRF_OK); /* it did arrive */
	atomic_store(&px.cut, 1);
	assert_int_equal(csrf_store_del(st, "w", 1), CSRF_STORE_UNAVAILABLE);
	assert_int_equal(csrf_store_get(st, "w", 1, buf, sizeof buf, &len), CSRF_NOT_FOUND);
	assert_int_equal(atomic_load(&px.cuts), 4);

	/* connections closed while idle (a restart, a server timeout): found
	 * before anything is sent, so even an increment goes through once */
	atomic_store(&px.drop_all, 1);
	sleep_ms(100);
	assert_int_equal(csrf_store_incr(st, "n", 1, 0, &v), CSRF_OK);
	assert_int_equal(v, 3);
	/* a read goes out without that check: its closed connection shows
	 * in the answer, and the read is asked again on a fresh one, with
	 * nothing in the log (Redis never was down) */
	pthread_mutex_lock(&log.lock);
	logged = log.n;
	pthread_mutex_unlock(&log.lock);
	atomic_store(&px.drop_all, 1);
	sleep_ms(100);
	assert_int_equal(csrf_store_get(st, "r", 1, buf, sizeof buf, &len), CSRF_OK);
	assert_int_equal(len, 7);
	assert_memory_equal(buf, "read-me", 7);
	/* twice in a row: the second read may not count on the first's retry */
	atomic_store(&px.drop_all, 1);
	sleep_ms(100);
	assert_int_equal(csrf_store_get(st, "r", 1, buf, sizeof buf, &len), CSRF_OK);
	pthread_mutex_lock(&log.lock);
	assert_int_equal(log.n, logged);
	pthread_mutex_unlock(&log.lock);
	/* and Redis really gone: a read on a closed connection fails closed */
	atomic_store(&px.drop_all, 1);
	atomic_store(&px.refuse, 1);
	sleep_ms(100);
	assert_int_equal(csrf_store_get(st, "r", 1, buf, sizeof buf, &len), CSRF_STORE_UNAVAILABLE);
	pthread_mutex_lock(&log.lock);
	int said = 0;
	for (int i = logged; i < log.n; i++)
		said += log.event[i] == CSRF_STORE_UNAVAILABLE;
	pthread_mutex_unlock(&log.lock);
	assert_true(said > 0);
	csrf_store_close(st);
	proxy_stop(&px);
}

/* A server turned replica under the store (without Sentinel): writes
 * answer READONLY, were not applied, and fail closed (said in the log);
 * reads go on; once it is a master again, so do writes. */
static void test_readonly(void **state)
{
	int other = free_port();
	pid_t pid = rp_redis_start(tmpdir, other, NULL, NULL, NULL);
	char url[160], buf[16];
	size_t len;
	int64_t v;
	csrf_store *st;
	redisReply *r;
	rp_log log;

	(void)state;
	assert_true(pid > 0);
	rp_log_init(&log);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d/0?prefix=%s", port, prefix);
	st = open_url(url, &log);
	assert_int_equal(csrf_store_set(st, "ro", 2, "before", 6, 0), CSRF_OK);
	r = rp_cmd(other, NULL, NULL, "SET %sro before", prefix);
	freeReplyObject(r);
	r = rp_cmd(port, NULL, NULL, "REPLICAOF 127.0.0.1 %d", other);
	assert_non_null(r);
	freeReplyObject(r);
	assert_int_equal(csrf_store_incr(st, "ro-n", 4, 0, &v), CSRF_STORE_UNAVAILABLE);
	assert_int_equal(csrf_store_set(st, "ro", 2, "after", 5, 0), CSRF_STORE_UNAVAILABLE);
	assert_true(rp_log_find(&log, CSRF_STORE_UNAVAILABLE, "READONLY") >= 0);
	r = rp_cmd(port, NULL, NULL, "REPLICAOF NO ONE");
	freeReplyObject(r);
	assert_int_equal(csrf_store_incr(st, "ro-n", 4, 0, &v), CSRF_OK);
	assert_int_equal(v, 1);
	assert_int_equal(csrf_store_get(st, "ro", 2, buf, sizeof buf, &len), CSRF_OK);
	csrf_store_close(st);
	rp_kill(&pid);
}

/* A forked child uses connections of its own: parent and child read
 * keys of their own at the same time, each through its copy of one store
 * with one pooled connection. Over a shared connection some answers would
 * go to the other process (which reads the other value). */
static void test_fork(void **state)
{
	char url[160], buf[16];
	size_t len;
	int status = -1;
	csrf_store *st;
	pid_t child;

	(void)state;
	snprintf(url, sizeof url, "redis://127.0.0.1:%d/8?pool=1&timeout_ms=2000&prefix=%s", port, prefix);
	st = open_url(url, NULL);
	assert_int_equal(csrf_store_set(st, "parent", 6, "P", 1, 0), CSRF_OK); /* the connection exists */
	assert_int_equal(csrf_store_set(st, "child", 5, "C", 1, 0), CSRF_OK);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		int bad = 0;
		for (int i = 0; i < 1000 && !bad; i++)
			bad = csrf_store_get(st, "child", 5, buf, sizeof buf, &len) != CSRF_OK || len != 1 ||
			      buf[0] != 'C';
		_exit(bad);
	}
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(csrf_store_get(st, "parent", 6, buf, sizeof buf, &len), CSRF_OK);
		assert_int_equal(len, 1);
		assert_int_equal(buf[0], 'P');
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	csrf_store_close(st);
}

/* ---- AUTH ---- */

static void test_auth(void **state)
{
	/* alice may do what csrf_session.h says the store needs, and no more (no CONFIG) */
	const char *cfg[] = {"--requirepass", "Req-Pass-77", "--user", "alice", "on",    ">Alice-Pw-55", "~*",
	                     "+get",          "+set",        "+del",   "+eval", "+incr", "+exists",      "+pexpire",
	                     "+ping",         "+select",     NULL};
	int ap = free_port();
	pid_t pid = rp_redis_start(tmpdir, ap, cfg, NULL, "Req-Pass-77");
	char url[256];
	csrf_store *st;
	rp_log log;

	(void)state;
	assert_true(pid > 0);
	/* requirepass: the default user */
	rp_log_init(&log);
	snprintf(url, sizeof url, "redis://:Req-Pass-77@127.0.0.1:%d/1?prefix=%s", ap, prefix);
	st = open_url(url, &log);
	sem_run(st);
	csrf_store_close(st);
	log_never_shows(&log, "Req-Pass-77");
	/* an ACL user (without CONFIG: the policy cannot be read, and the
	 * log says so) */
	rp_log_init(&log);
	snprintf(url, sizeof url, "redis://alice:Alice-Pw-55@127.0.0.1:%d/2?prefix=%s", ap, prefix);
	st = open_url(url, &log);
	sem_run(st);
	assert_true(rp_log_find(&log, CSRF_ERR_CONFIG, "cannot read maxmemory-policy") >= 0);
	log_never_shows(&log, "Alice-Pw-55");
	rp_log_print(&log);
	csrf_store_close(st);

	/* wrong passwords, and none where one is needed: refused at open */
	static const char *bad[] = {":Wrong-Pass-31@", "alice:Wrong-Pass-31@", "nobody:Req-Pass-77@", ""};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		rp_log_init(&log);
		snprintf(url, sizeof url, "redis://%s127.0.0.1:%d/0", bad[i], ap);
		st = (csrf_store *)&st;
		if (csrf_store_open_log(&st, url, rp_log_hook, &log) != CSRF_ERR_CONFIG)
			fail_msg("bad URL %zu opened", i);
		assert_null(st);
		assert_true(rp_log_find(&log, CSRF_ERR_CONFIG, "password") >= 0);
		log_never_shows(&log, "Wrong-Pass-31");
		log_never_shows(&log, "Req-Pass-77");
	}
	/* a password for a Redis that has none */
	rp_log_init(&log);
	snprintf(url, sizeof url, "redis://:Wrong-Pass-31@127.0.0.1:%d/0", port);
	st = (csrf_store *)&st;
	assert_int_equal(csrf_store_open_log(&st, url, rp_log_hook, &log), CSRF_ERR_CONFIG);
	log_never_shows(&log, "Wrong-Pass-31");

	/* a wrong password met later (Redis down at open): calls fail closed
	 * and the log says why */
	rp_kill(&pid);
	rp_log_init(&log);
	snprintf(url, sizeof url, "redis://:Wrong-Pass-31@127.0.0.1:%d/0?timeout_ms=%d", ap, TIMEOUT_MS);
	st = open_url(url, &log);
	pid = rp_redis_start(tmpdir, ap, cfg, NULL, "Req-Pass-77");
	assert_true(pid > 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(csrf_store_set(st, "k", 1, "v", 1, 0), CSRF_STORE_UNAVAILABLE);
	assert_true(rp_log_find(&log, CSRF_ERR_CONFIG, "refused the password") >= 0);
	log_never_shows(&log, "Wrong-Pass-31");
	csrf_store_close(st);
	rp_kill(&pid);
}

/* ---- a full Redis and its eviction policy ---- */

/* Writes 4 KiB plain entries (24-hour TTL, like anonymous sessions)
 * until Redis refuses one or n were written; the count written. */
static int flood(csrf_store *st, int n, csrf_reason *last)
{
	static char val[4096];
	char key[32];
	int i;

	memset(val, 'f', sizeof val);
	*last = CSRF_OK;
	for (i = 0; i < n; i++) {
		int k = snprintf(key, sizeof key, "presession:%d", i);
		*last = csrf_store_set(st, key, (size_t)k, val, sizeof val, 86400);
		if (*last != CSRF_OK)
			break;
	}
	return i;
}

static void test_full_redis(void **state)
{
	/* about 2 MB above what an empty Redis uses */
	const char *ttl_cfg[] = {"--maxmemory", "3mb", "--maxmemory-policy", "volatile-ttl", NULL};
	const char *noev_cfg[] = {"--maxmemory", "3mb", "--maxmemory-policy", "noeviction", NULL};
	int p1 = free_port(), p2 = free_port();
	pid_t evicting = rp_redis_start(tmpdir, p1, ttl_cfg, NULL, NULL);
	pid_t refusing = rp_redis_start(tmpdir, p2, noev_cfg, NULL, NULL);
	char url[160], buf[16];
	size_t len;
	int64_t v;
	int n;
	csrf_reason last;
	csrf_store *st;
	csrf_ctx *ctx = NULL;
	char hash[CSRF_PWHASH_LEN];
	rp_log log;

	(void)state;
	assert_true(evicting > 0 && refusing > 0);
	assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
	assert_int_equal(csrf_password_hash("pw", 2, hash, sizeof hash), CSRF_OK);
	csrf_ctx_set_reauth_policy(ctx, 2, 900, 300);

	/* What Redis itself does with volatile-*: counters carry a TTL, so a
	 * flood evicts them and the lockout is gone. The store warns. */
	rp_log_init(&log);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d/0", p1);
	st = open_url(url, &log);
	assert_true(rp_log_find(&log, CSRF_ERR_CONFIG, "maxmemory-policy volatile-ttl") >= 0);
	rp_log_print(&log);
	assert_int_equal(csrf_reauth(ctx, st, "alice", 5, "s", 1, "no", 2, hash, 0), CSRF_REAUTH_FAILED);
	assert_int_equal(csrf_reauth(ctx, st, "alice", 5, "s", 1, "no", 2, hash, 0), CSRF_LOCKED_OUT);
	n = flood(st, 3000, &last);
	printf("# volatile-ttl: %d entries written (%s), lockout counter %s\n", n, csrf_reason_name(last),
	       csrf_store_get(st, "fail:acct:alice", 15, buf, sizeof buf, &len) == CSRF_OK ? "kept" : "evicted");
	assert_int_equal(n, 3000);
	assert_int_equal(csrf_store_get(st, "fail:acct:alice", 15, buf, sizeof buf, &len), CSRF_NOT_FOUND);
	assert_int_equal(csrf_reauth(ctx, st, "alice", 5, "s2", 2, "pw", 2, hash, 0), CSRF_OK); /* lifted */
	csrf_store_close(st);

	/* noeviction, as csrf_session.h asks: the flood is refused, the counters hold */
	rp_log_init(&log);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d/0", p2);
	st = open_url(url, &log);
	assert_int_equal(rp_log_find(&log, CSRF_ERR_CONFIG, "maxmemory-policy"), -1);
	assert_int_equal(csrf_reauth(ctx, st, "alice", 5, "s", 1, "no", 2, hash, 0), CSRF_REAUTH_FAILED);
	assert_int_equal(csrf_reauth(ctx, st, "alice", 5, "s", 1, "no", 2, hash, 0), CSRF_LOCKED_OUT);
	n = flood(st, 3000, &last);
	printf("# noeviction: %d entries written, then %s\n", n, csrf_reason_name(last));
	assert_true(n > 100 && n < 3000);
	assert_int_equal(last, CSRF_STORE_FULL);
	/* near the limit a small write may still fit; well over it (maxmemory
	 * lowered under what is used) every write is refused */
	redisReply *rr = rp_cmd(p2, NULL, NULL, "CONFIG SET maxmemory 1mb");
	assert_non_null(rr);
	freeReplyObject(rr);
	assert_int_equal(csrf_store_set(st, "more", 4, "x", 1, 60), CSRF_STORE_FULL);
	assert_int_equal(csrf_store_incr(st, "newcounter", 10, 60, &v), CSRF_STORE_FULL);
	assert_int_equal(csrf_store_incr(st, "fail:acct:alice", 15, 60, &v), CSRF_STORE_FULL);
	assert_int_equal(csrf_store_get(st, "fail:acct:alice", 15, buf, sizeof buf, &len), CSRF_OK);
	assert_memory_equal(buf, "2", 1);
	/* the lockout holds; new attempts fail closed */
	assert_int_equal(csrf_reauth(ctx, st, "alice", 5, "s3", 2, "pw", 2, hash, 0), CSRF_LOCKED_OUT);
	assert_int_equal(csrf_reauth(ctx, st, "bob", 3, "s4", 2, "pw", 2, hash, 0), CSRF_STORE_FULL);
	assert_int_equal(csrf_login_attempt(ctx, st, "bob", 3, "c", 1, "pw", 2, hash), CSRF_STORE_FULL);
	assert_true(rp_log_find(&log, CSRF_STORE_FULL, "full") >= 0);
	/* reads and deletes still work, and free room */
	assert_int_equal(csrf_store_del(st, "presession:0", 12), CSRF_OK);
	csrf_store_close(st);
	csrf_ctx_free(ctx);
	rp_kill(&evicting);
	rp_kill(&refusing);
}

static void test_open_failures(void **state)
{
	csrf_store *st = (csrf_store *)&st;
	char url[128];
	int64_t t0;
	int dead = free_port();

	(void)state;
	/* nothing listening, and a name that does not resolve: the store
	 * opens (within the timeout) and its calls fail closed */
	snprintf(url, sizeof url, "redis://127.0.0.1:%d/0?timeout_ms=%d", dead, TIMEOUT_MS);
	t0 = mono_ms();
	assert_int_equal(csrf_store_open(&st, url), CSRF_OK);
	assert_true(mono_ms() - t0 <= TIMEOUT_MS + SLACK_MS);
	assert_int_equal(csrf_store_del(st, "k", 1), CSRF_STORE_UNAVAILABLE);
	csrf_store_close(st);
	t0 = mono_ms();
	assert_int_equal(csrf_store_open(&st, "redis://no-such-host.invalid/0?timeout_ms=200"), CSRF_OK);
	assert_int_equal(csrf_store_del(st, "k", 1), CSRF_STORE_UNAVAILABLE);
	csrf_store_close(st);
}

/* ---- a lying server: every call bounded by timeout_ms ---- */

/* A fake Redis written here: it answers the handshake (PING, AUTH,
 * SELECT, CONFIG GET) as Redis would, and the store's commands as its
 * mode says: honestly, or with a reply that trickles in (a few bytes at
 * a time, each well within timeout_ms of the last), announces a string
 * of 500 MB and sends 64 KiB of it every 100 ms, announces a million
 * elements, nests arrays deeper than any reply the store reads, or
 * sends a status line longer than any reply. A liar gives up after
 * LIAR_SPAN_MS and closes, so a store without a bound on the whole call
 * is seen taking that long, not hanging the test. */
enum {
	LIAR_HONEST,
	LIAR_TRICKLE,
	LIAR_HUGE,
	LIAR_WIDE,
	LIAR_DEEP,
	LIAR_LONG_LINE,
	LIAR_NIL_ARRAY, /* GET: *-1 (RESP2's GET says $-1 for no entry) */
	LIAR_POLICY,    /* CONFIG GET: a policy with CR, LF, ESC and BEL */
};

#define LIAR_CLIENTS 8
#define LIAR_SPAN_MS 12000
#define LIAR_VALUE "lie-value-9f3a"

typedef struct {
	int listen_fd, port;
	pthread_t thread;
	atomic_int mode, stop, accepted;
} liar;

typedef struct {
	int fd;
	char in[8192];
	size_t in_len;
	int mode;        /* of the reply being sent, LIAR_HONEST when none */
	int64_t next_at; /* the next piece of a trickle */
	int64_t until;   /* the liar gives up */
} liar_client;

/* One command of the store (a RESP array of bulk strings) at the start
 * of b: its length, and its first word in name; 0 while incomplete. */
static size_t liar_command(const char *b, size_t n, char *name, size_t name_cap)
{
	size_t pos = 0;
	long argc = 0;

	name[0] = '\0';
	if (n < 4 || b[0] != '*')
		return 0;
	argc = strtol(b + 1, NULL, 10);
	const char *eol = memchr(b, '\n', n);
	if (eol == NULL)
		return 0;
	pos = (size_t)(eol - b) + 1;
	for (long i = 0; i < argc; i++) {
		if (pos >= n || b[pos] != '$')
			return 0;
		long len = strtol(b + pos + 1, NULL, 10);
		eol = memchr(b + pos, '\n', n - pos);
		if (eol == NULL)
			return 0;
		pos = (size_t)(eol - b) + 1;
		if (len < 0 || n - pos < (size_t)len + 2)
			return 0;
		if (i == 0) {
			size_t k = (size_t)len < name_cap - 1 ? (size_t)len : name_cap - 1;
			memcpy(name, b + pos, k);
			name[k] = '\0';
		}
		pos += (size_t)len + 2;
	}
	return pos;
}

/* Sends all of p on a non-blocking socket; 0 when the client is gone or
 * has not read for a second. */
static int liar_send(int fd, const char *p, size_t n)
{
	int64_t give_up = mono_ms() + 1000;

	while (n > 0 && mono_ms() < give_up) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pf = {fd, POLLOUT, 0};
			if (poll(&pf, 1, 50) < 0)
				return 0;
			continue;
		}
		if (k <= 0)
			return 0;
		p += k;
		n -= (size_t)k;
	}
	return n == 0;
}

/* Answers one command; 0 when the client is gone. */
static int liar_answer(liar *lr, liar_client *c, const char *name)
{
	static const char policy[] = "*2\r\n$16\r\nmaxmemory-policy\r\n$10\r\nnoeviction\r\n";
	static const char deep[] = "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n$14\r\n" LIAR_VALUE "\r\n";
	int mode = atomic_load(&lr->mode);
	char big[20002];

	if (!strcasecmp(name, "PING"))
		return liar_send(c->fd, "+PONG\r\n", 7);
	if (!strcasecmp(name, "AUTH") || !strcasecmp(name, "SELECT"))
		return liar_send(c->fd, "+OK\r\n", 5);
	static const char bad_policy[] = "*2\r\n$16\r\nmaxmemory-policy\r\n$23\r\nx\r\n[csrf] FAKE: ok\x1b[2J\x07\r\n";
	if (!strcasecmp(name, "CONFIG") && mode == LIAR_POLICY)
		return liar_send(c->fd, bad_policy, sizeof bad_policy - 1);
	if (!strcasecmp(name, "CONFIG"))
		return liar_send(c->fd, policy, sizeof policy - 1);
	c->next_at = mono_ms() + 50;
	c->until = mono_ms() + LIAR_SPAN_MS;
	c->mode = mode;
	switch (mode) {
	case LIAR_TRICKLE:
		return liar_send(c->fd, "$4000\r\n", 7);
	case LIAR_HUGE:
		return liar_send(c->fd, "$500000000\r\n", 12);
	case LIAR_WIDE:
		return liar_send(c->fd, "*1000000\r\n", 10);
	case LIAR_DEEP:
		c->mode = LIAR_HONEST;
		return liar_send(c->fd, deep, sizeof deep - 1);
	case LIAR_LONG_LINE:
		c->mode = LIAR_HONEST;
		big[0] = '+';
		memset(big + 1, 'a', sizeof big - 1);
		return liar_send(c->fd, big, sizeof big);
	case LIAR_NIL_ARRAY:
		c->mode = LIAR_HONEST;
		if (!strcasecmp(name, "GET"))
			return liar_send(c->fd, "*-1\r\n", 5);
		return liar_send(c->fd, ":1\r\n", 4);
	default:
		c->mode = LIAR_HONEST;
		if (!strcasecmp(name, "GET"))
			return liar_send(c->fd, "$14\r\n" LIAR_VALUE "\r\n", 21);
		if (!strcasecmp(name, "SET"))
			return liar_send(c->fd, "+OK\r\n", 5);
		return liar_send(c->fd, ":1\r\n", 4);
	}
}

/* The next piece of a reply that trickles; 0 when the client is gone or
 * the liar gives up. */
static int liar_trickle(liar_client *c)
{
	static char chunk[65536];

	if (mono_ms() >= c->until)
		return 0;
	if (mono_ms() < c->next_at)
		return 1;
	switch (c->mode) {
	case LIAR_TRICKLE:
		c->next_at = mono_ms() + 50;
		return liar_send(c->fd, "x", 1);
	case LIAR_HUGE:
		c->next_at = mono_ms() + 100;
		memset(chunk, 'y', sizeof chunk);
		return liar_send(c->fd, chunk, sizeof chunk);
	case LIAR_WIDE:
		c->next_at = mono_ms() + 50;
		return liar_send(c->fd, ":1\r\n", 4);
	}
	return 1;
}

static void *liar_run(void *p)
{
	liar *lr = p;
	liar_client cl[LIAR_CLIENTS];

	for (int i = 0; i < LIAR_CLIENTS; i++)
		cl[i].fd = -1;
	while (!atomic_load(&lr->stop)) {
		struct pollfd fds[1 + LIAR_CLIENTS];
		fds[0] = (struct pollfd){lr->listen_fd, POLLIN, 0};
		for (int i = 0; i < LIAR_CLIENTS; i++)
			fds[1 + i] = (struct pollfd){cl[i].fd, POLLIN, 0};
		if (poll(fds, 1 + LIAR_CLIENTS, 10) < 0)
			continue;
		if (fds[0].revents & POLLIN) {
			int fd = accept4(lr->listen_fd, NULL, NULL, SOCK_NONBLOCK);
			int slot = -1;
			for (int i = 0; i < LIAR_CLIENTS && slot < 0; i++)
				if (cl[i].fd < 0)
					slot = i;
			if (fd >= 0 && slot >= 0) {
				memset(&cl[slot], 0, sizeof cl[slot]);
				cl[slot].fd = fd;
				atomic_fetch_add(&lr->accepted, 1);
			} else if (fd >= 0) {
				close(fd);
			}
		}
		for (int i = 0; i < LIAR_CLIENTS; i++) {
			liar_client *c = &cl[i];
			int ok = 1;
			if (c->fd < 0)
				continue;
			if (fds[1 + i].revents & (POLLIN | POLLHUP | POLLERR)) {
				ssize_t k = read(c->fd, c->in + c->in_len, sizeof c->in - c->in_len);
				ok = k > 0 || (k < 0 && (errno == EAGAIN || errno == EINTR));
				if (k > 0)
					c->in_len += (size_t)k;
				char name[16];
				size_t used;
				while (ok && (used = liar_command(c->in, c->in_len, name, sizeof name)) > 0) {
					memmove(c->in, c->in + used, c->in_len - used);
					c->in_len -= used;
					ok = liar_answer(lr, c, name);
				}
				if (c->in_len == sizeof c->in)
					ok = 0;
			}
			if (ok && c->mode != LIAR_HONEST)
				ok = liar_trickle(c);
			if (!ok) {
				close(c->fd);
				c->fd = -1;
			}
		}
	}
	for (int i = 0; i < LIAR_CLIENTS; i++)
		if (cl[i].fd >= 0)
			close(cl[i].fd);
	return NULL;
}

static void liar_start(liar *lr)
{
	struct sockaddr_in a;
	socklen_t len = sizeof a;

	memset(lr, 0, sizeof *lr);
	lr->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(lr->listen_fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(getsockname(lr->listen_fd, (struct sockaddr *)&a, &len), 0);
	assert_int_equal(listen(lr->listen_fd, 16), 0);
	lr->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&lr->thread, NULL, liar_run, lr), 0);
}

static void liar_stop(liar *lr)
{
	atomic_store(&lr->stop, 1);
	pthread_join(lr->thread, NULL);
	close(lr->listen_fd);
}

/* How long a call to a liar may take: timeout_ms and room for a loaded
 * machine (two busy cores, sanitizers). A store that bounds each read
 * rather than the call takes LIAR_SPAN_MS. */
#define LIAR_BOUND_MS (TIMEOUT_MS + 800)

static void test_lying_server(void **state)
{
	static const struct {
		int mode;
		const char *said; /* in the log line */
	} cases[] = {
	    {LIAR_TRICKLE, "did not answer in time"},  {LIAR_HUGE, "500000000 bytes"},
	    {LIAR_WIDE, "1000000 elements"},           {LIAR_DEEP, "nested deeper than 3"},
	    {LIAR_LONG_LINE, "more than 16384 bytes"},
	};
	liar lr;
	char url[160], buf[64];
	size_t len;
	int64_t v, t0, ms;

	(void)state;
	liar_start(&lr);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d/0?timeout_ms=%d&pool=1", lr.port, TIMEOUT_MS);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		rp_log log;
		rp_log_init(&log);
		atomic_store(&lr.mode, LIAR_HONEST);
		csrf_store *st = open_url(url, &log);
		assert_int_equal(csrf_store_get(st, "k", 1, buf, sizeof buf, &len), CSRF_OK);
		int conns = atomic_load(&lr.accepted);

		/* a read and a write, each bounded by timeout_ms and failing
		 * closed */
		atomic_store(&lr.mode, cases[i].mode);
		for (int w = 0; w < 2; w++) {
			t0 = mono_ms();
			csrf_reason r =
			    w ? csrf_store_incr(st, "n", 1, 60, &v) : csrf_store_get(st, "k", 1, buf, sizeof buf, &len);
			ms = mono_ms() - t0;
			printf("# liar %d, %s: %s in %lld ms\n", cases[i].mode, w ? "incr" : "get", csrf_reason_name(r),
			       (long long)ms);
			if (ms > LIAR_BOUND_MS)
				fail_msg("liar %d: a call took %lld ms (timeout_ms %d)", cases[i].mode, (long long)ms,
				         TIMEOUT_MS);
			assert_int_equal(r, CSRF_STORE_UNAVAILABLE);
			if (w == 0 && rp_log_find(&log, CSRF_STORE_UNAVAILABLE, cases[i].said) < 0) {
				rp_log_print(&log);
				fail_msg("liar %d: no log line saying \"%s\"", cases[i].mode, cases[i].said);
			}
			sleep_ms(60); /* past the first backoff of a timeout */
		}
		rp_log_print(&log);
		log_never_shows(&log, LIAR_VALUE);
		log_never_shows(&log, "yyyy");

		/* honest again: a fresh connection, and the calls work */
		atomic_store(&lr.mode, LIAR_HONEST);
		int64_t until = mono_ms() + 3000;
		csrf_reason r = CSRF_STORE_UNAVAILABLE;
		while (r != CSRF_OK && mono_ms() < until) {
			r = csrf_store_get(st, "k", 1, buf, sizeof buf, &len);
			if (r != CSRF_OK)
				sleep_ms(50);
		}
		assert_int_equal(r, CSRF_OK);
		assert_int_equal(len, sizeof LIAR_VALUE - 1);
		assert_int_equal(csrf_store_incr(st, "n", 1, 60, &v), CSRF_OK);
		assert_true(atomic_load(&lr.accepted) > conns);
		csrf_store_close(st);
	}

	/* a sentinel whose answer trickles in: opening the store and each
	 * call end within the timeout too, and fail closed */
	atomic_store(&lr.mode, LIAR_TRICKLE);
	snprintf(url, sizeof url, "redis-sentinel://127.0.0.1:%d/mymaster/0?timeout_ms=%d&pool=1", lr.port, TIMEOUT_MS);
	csrf_store *st = NULL;
	t0 = mono_ms();
	assert_int_equal(csrf_store_open(&st, url), CSRF_OK);
	ms = mono_ms() - t0;
	printf("# liar as a sentinel: open in %lld ms\n", (long long)ms);
	assert_true(ms <= LIAR_BOUND_MS);
	for (int i = 0; i < 2; i++) {
		t0 = mono_ms();
		assert_int_equal(csrf_store_get(st, "k", 1, buf, sizeof buf, &len), CSRF_STORE_UNAVAILABLE);
		ms = mono_ms() - t0;
		printf("# liar as a sentinel: get in %lld ms\n", (long long)ms);
		assert_true(ms <= LIAR_BOUND_MS);
	}
	csrf_store_close(st);
	liar_stop(&lr);
}

/* Replies of the right size that no honest Redis sends to these
 * commands: a nil array to GET (read as "no entry", it would let a
 * lockout check pass: the store fails closed instead, logs it and
 * closes the connection), and a policy name holding CR, LF and escape
 * sequences, which reaches the log only as [a-z0-9-] (anything else
 * shown as '?'). (A counter below 1 after INCR is the lockout's to
 * refuse, test_reauth: the store's contract lets a counter set to -5
 * count to -4.) */
static void test_lying_values(void **state)
{
	liar lr;
	char url[160], buf[64];
	size_t len;
	csrf_store *st;
	(void)state;

	liar_start(&lr);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d/0?timeout_ms=%d&pool=1", lr.port, TIMEOUT_MS);

	rp_log log;
	rp_log_init(&log);
	atomic_store(&lr.mode, LIAR_NIL_ARRAY);
	st = open_url(url, &log);
	assert_int_equal(csrf_store_get(st, "k", 1, buf, sizeof buf, &len), CSRF_STORE_UNAVAILABLE);
	rp_log_print(&log);
	assert_true(rp_log_find(&log, CSRF_STORE_UNAVAILABLE, "nil array") >= 0);
	csrf_store_close(st);

	rp_log_init(&log);
	atomic_store(&lr.mode, LIAR_POLICY);
	st = open_url(url, &log);
	rp_log_print(&log);
	int at = rp_log_find(&log, CSRF_ERR_CONFIG, "maxmemory-policy");
	assert_true(at >= 0);
	for (const char *p = log.text[at]; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p == 0x7f)
			fail_msg("a control byte 0x%02x reached the log", (unsigned)(unsigned char)*p);
	assert_non_null(strstr(log.text[at], "policy x??"));
	assert_null(strstr(log.text[at], "[csrf]"));
	csrf_store_close(st);
	liar_stop(&lr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_semantics),     cmocka_unit_test(test_prefix_db_ttl),
	    cmocka_unit_test(test_real_expiry),   cmocka_unit_test(test_threads),
	    cmocka_unit_test(test_reauth),        cmocka_unit_test(test_open_failures),
	    cmocka_unit_test(test_open_lazily),   cmocka_unit_test(test_killed_server),
	    cmocka_unit_test(test_frozen_server), cmocka_unit_test(test_restart_under_load),
	    cmocka_unit_test(test_retry_rules),   cmocka_unit_test(test_readonly),
	    cmocka_unit_test(test_fork),          cmocka_unit_test(test_auth),
	    cmocka_unit_test(test_full_redis),    cmocka_unit_test(test_lying_server),
	    cmocka_unit_test(test_lying_values),
	};

	if (rp_redis_bin() == NULL) {
		printf("# skipped: no redis-server\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
