/*
 * test_store_redis.c - src/store_redis.c against a real redis-server that
 * this test starts on a free loopback port (no persistence, a temporary
 * directory) and stops at the end: the shared semantics table, prefixes
 * and databases, TTLs set atomically, threads, re-authentication over
 * Redis, and outages: a killed server and a frozen one answer
 * CSRF_STORE_UNAVAILABLE within timeout_ms (+100 ms) on every call, and
 * the same store works again once the server is back, without reopening.
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

#include "internal.h"

#include "store_semantics.h"

#define TIMEOUT_MS 200
#define SLACK_MS 100

static const char *redis_bin;
static char tmpdir[64];
static int port;
static pid_t redis_pid = -1;
static char prefix[32];

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int free_port(void)
{
	struct sockaddr_in a;
	socklen_t len = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int p;

	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) != 0)
		return -1;
	p = ntohs(a.sin_port);
	close(fd);
	return p;
}

static int accepting(void)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int ok;

	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)port);
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* Starts redis-server on `port` and waits (5 s at most) until it answers
 * PING. */
static int redis_start(void)
{
	char port_s[8], log[128];

	snprintf(port_s, sizeof port_s, "%d", port);
	snprintf(log, sizeof log, "%s/redis.log", tmpdir);
	redis_pid = fork();
	if (redis_pid < 0)
		return -1;
	if (redis_pid == 0) {
		/* the server never outlives a test that crashed */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl(redis_bin, redis_bin, "--port", port_s, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		      "--dir", tmpdir, "--logfile", log, "--daemonize", "no", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500; i++) {
		if (accepting()) {
			redisContext *c = redisConnect("127.0.0.1", port);
			redisReply *r = c && !c->err ? redisCommand(c, "PING") : NULL;
			int ok = r != NULL && r->type == REDIS_REPLY_STATUS;
			if (r)
				freeReplyObject(r);
			if (c)
				redisFree(c);
			if (ok)
				return 0;
		}
		sleep_ms(10);
	}
	return -1;
}

static void redis_kill(void)
{
	if (redis_pid > 0) {
		kill(redis_pid, SIGCONT);
		kill(redis_pid, SIGKILL);
		waitpid(redis_pid, NULL, 0);
		redis_pid = -1;
	}
}

static void rm_tmpdir(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	char path[512];

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", tmpdir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(tmpdir);
}

static int group_setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/csrf-redis-XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		return -1;
	port = free_port();
	snprintf(prefix, sizeof prefix, "t%d:", (int)getpid());
	if (port <= 0 || redis_start() != 0) {
		fprintf(stderr, "cannot start %s on port %d\n", redis_bin, port);
		redis_kill();
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	redis_kill();
	rm_tmpdir();
	return 0;
}

static csrf_store *open_store(unsigned db, const char *pfx)
{
	char url[160];
	csrf_store *st = NULL;

	snprintf(url, sizeof url, "redis://127.0.0.1:%d/%u?prefix=%s&timeout_ms=%d", port, db, pfx, TIMEOUT_MS);
	assert_int_equal(csrf_store_open(&st, url), CSRF_OK);
	assert_non_null(st);
	return st;
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

static void test_open_failures(void **state)
{
	csrf_store *st = (csrf_store *)&st;
	char url[128];
	int64_t t0;
	int dead = free_port();

	(void)state;
	snprintf(url, sizeof url, "redis://127.0.0.1:%d/0?timeout_ms=%d", dead, TIMEOUT_MS);
	t0 = mono_ms();
	assert_int_equal(csrf_store_open(&st, url), CSRF_STORE_UNAVAILABLE);
	assert_true(mono_ms() - t0 <= TIMEOUT_MS + SLACK_MS);
	assert_null(st);
	snprintf(url, sizeof url, "redis://127.0.0.1:%d/16", port);
	assert_int_equal(csrf_store_open(&st, url), CSRF_ERR_CONFIG);
	assert_null(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_semantics),     cmocka_unit_test(test_prefix_db_ttl),
	    cmocka_unit_test(test_real_expiry),   cmocka_unit_test(test_threads),
	    cmocka_unit_test(test_reauth),        cmocka_unit_test(test_open_failures),
	    cmocka_unit_test(test_killed_server), cmocka_unit_test(test_frozen_server),
	};

	redis_bin = getenv("REDIS_SERVER");
	if (redis_bin == NULL || redis_bin[0] == '\0')
		redis_bin = "/usr/bin/redis-server";
	if (access(redis_bin, X_OK) != 0) {
		printf("# skipped: no %s\n", redis_bin);
		return 77;
	}
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
