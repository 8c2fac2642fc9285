/*
 * store_redis.c - the Redis store ("redis://host:port/db?prefix=P&
 * timeout_ms=T") over one hiredis connection guarded by a mutex.
 *
 * Failure model: every call has a deadline of timeout_ms from its start
 * (waiting for the mutex included). Connecting, SELECT and the command
 * share it. Any connection or I/O error, or a timeout, answers
 * CSRF_STORE_UNAVAILABLE and drops the connection; the next call after a
 * short backoff (50 ms doubling to 1 s, reset on success) connects again,
 * so a dead Redis costs each call at most one timeout and calls between
 * attempts answer at once. A forked child never reuses its parent's
 * connection. SIGPIPE from a dead peer is absorbed in the calling thread.
 * Values are never logged.
 */
#include "internal.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#define BACKOFF_MIN_MS 50
#define BACKOFF_MAX_MS 1000

/* Sets the TTL on a new key in the same atomic step as the increment. */
static const char INCR_SCRIPT[] = "local new = redis.call('EXISTS', KEYS[1]) == 0\n"
                                  "local v = redis.call('INCR', KEYS[1])\n"
                                  "if new and tonumber(ARGV[1]) > 0 then\n"
                                  "  redis.call('PEXPIRE', KEYS[1], ARGV[1])\n"
                                  "end\n"
                                  "return v\n";

typedef struct {
	csrf_store base;
	pthread_mutex_t lock;
	redisContext *c;
	pid_t pid; /* the process that opened c */
	char host[256];
	int port;
	unsigned db;
	char prefix[CSRF_STORE_PREFIX_MAX + 1];
	size_t prefix_len;
	uint32_t timeout_ms;
	int64_t retry_at; /* monotonic ms; no connection attempt before */
	uint32_t backoff_ms;
} redis_store;

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct timeval ms_tv(int64_t ms)
{
	struct timeval tv;

	if (ms < 1)
		ms = 1;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)((ms % 1000) * 1000);
	return tv;
}

static void drop(redis_store *r)
{
	if (r->c != NULL) {
		redisFree(r->c);
		r->c = NULL;
	}
	r->backoff_ms = r->backoff_ms == 0 ? BACKOFF_MIN_MS : r->backoff_ms * 2;
	if (r->backoff_ms > BACKOFF_MAX_MS)
		r->backoff_ms = BACKOFF_MAX_MS;
	r->retry_at = mono_ms() + r->backoff_ms;
}

/* Sets the socket timeouts to what is left before deadline; 0 when
 * nothing is left or the socket refused. */
static int arm(redis_store *r, int64_t deadline)
{
	int64_t left = deadline - mono_ms();

	if (left <= 0)
		return 0;
	return redisSetTimeout(r->c, ms_tv(left)) == REDIS_OK;
}

static csrf_reason connect_now(redis_store *r, int64_t deadline)
{
	int64_t now = mono_ms();
	redisReply *rep;

	if (r->c != NULL && r->pid != getpid()) {
		/* inherited over fork: the parent owns that stream */
		redisFree(r->c);
		r->c = NULL;
		r->retry_at = 0;
	}
	if (r->c != NULL)
		return CSRF_OK;
	if (now < r->retry_at || now >= deadline)
		return CSRF_STORE_UNAVAILABLE;
	r->c = redisConnectWithTimeout(r->host, r->port, ms_tv(deadline - now));
	if (r->c == NULL || r->c->err != 0 || !arm(r, deadline)) {
		drop(r);
		return CSRF_STORE_UNAVAILABLE;
	}
	r->pid = getpid();
	if (r->db != 0) {
		rep = redisCommand(r->c, "SELECT %u", r->db);
		int ok = rep != NULL && rep->type == REDIS_REPLY_STATUS;
		if (rep != NULL)
			freeReplyObject(rep);
		if (!ok) {
			drop(r);
			return CSRF_STORE_UNAVAILABLE;
		}
	}
	r->backoff_ms = 0;
	r->retry_at = 0;
	return CSRF_OK;
}

/* Locks the store within the call's deadline. */
static int lock_until(redis_store *r, int64_t deadline)
{
	struct timespec ts;
	int64_t left = deadline - mono_ms();

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(left / 1000);
	ts.tv_nsec += (long)((left % 1000) * 1000000);
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return pthread_mutex_timedlock(&r->lock, &ts) == 0;
}

/* Writing to a peer that went away raises SIGPIPE; the library must not
 * die of it nor change the process's handlers, so the calling thread
 * blocks it around I/O and consumes one it raised. */
typedef struct {
	sigset_t pipe_set;
	sigset_t old_set;
	int was_pending;
} pipe_guard;

static void pipe_block(pipe_guard *g)
{
	sigset_t pending;

	sigemptyset(&g->pipe_set);
	sigaddset(&g->pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &g->pipe_set, &g->old_set);
	sigpending(&pending);
	g->was_pending = sigismember(&pending, SIGPIPE);
}

static void pipe_restore(pipe_guard *g)
{
	sigset_t pending;
	struct timespec zero = {0, 0};

	if (!g->was_pending) {
		sigpending(&pending);
		if (sigismember(&pending, SIGPIPE))
			while (sigtimedwait(&g->pipe_set, NULL, &zero) < 0 && errno == EINTR)
				;
	}
	pthread_sigmask(SIG_SETMASK, &g->old_set, NULL);
}

/* Runs one command within the call's deadline. *reply is NULL unless
 * CSRF_OK. */
static csrf_reason run(redis_store *r, int argc, const char **argv, const size_t *lens, redisReply **reply)
{
	int64_t deadline = mono_ms() + r->timeout_ms;
	pipe_guard g;
	csrf_reason res;

	*reply = NULL;
	if (!lock_until(r, deadline))
		return CSRF_STORE_UNAVAILABLE;
	pipe_block(&g);
	res = connect_now(r, deadline);
	if (res == CSRF_OK && !arm(r, deadline))
		res = CSRF_STORE_UNAVAILABLE;
	if (res == CSRF_OK) {
		*reply = redisCommandArgv(r->c, argc, argv, lens);
		if (*reply == NULL) {
			drop(r);
			res = CSRF_STORE_UNAVAILABLE;
		}
	}
	pipe_restore(&g);
	pthread_mutex_unlock(&r->lock);
	return res;
}

/* prefix + key into buf (CSRF_STORE_PREFIX_MAX + CSRF_STORE_KEY_MAX). */
static size_t full_key(const redis_store *r, const char *key, size_t key_len, char *buf)
{
	memcpy(buf, r->prefix, r->prefix_len);
	memcpy(buf + r->prefix_len, key, key_len);
	return r->prefix_len + key_len;
}

static csrf_reason redis_get(csrf_store *st, const char *key, size_t key_len, void *buf, size_t cap, size_t *len)
{
	redis_store *r = (redis_store *)st;
	char k[CSRF_STORE_PREFIX_MAX + CSRF_STORE_KEY_MAX];
	const char *argv[2] = {"GET", k};
	size_t lens[2] = {3, full_key(r, key, key_len, k)};
	redisReply *rep;
	csrf_reason res = run(r, 2, argv, lens, &rep);

	if (res != CSRF_OK)
		return res;
	if (rep->type == REDIS_REPLY_NIL) {
		res = CSRF_NOT_FOUND;
	} else if (rep->type != REDIS_REPLY_STRING) {
		res = CSRF_STORE_UNAVAILABLE;
	} else if ((size_t)rep->len > cap) {
		*len = (size_t)rep->len;
		res = CSRF_ERR_BUFFER;
	} else {
		if (rep->len > 0)
			memcpy(buf, rep->str, (size_t)rep->len);
		*len = (size_t)rep->len;
	}
	if (rep->type == REDIS_REPLY_STRING && rep->str != NULL)
		csrf_wipe(rep->str, (size_t)rep->len);
	freeReplyObject(rep);
	return res;
}

static csrf_reason redis_set(csrf_store *st, const char *key, size_t key_len, const void *val, size_t val_len,
                             uint32_t ttl_s)
{
	redis_store *r = (redis_store *)st;
	char k[CSRF_STORE_PREFIX_MAX + CSRF_STORE_KEY_MAX];
	char ms[24];
	int ms_len = snprintf(ms, sizeof ms, "%llu", (unsigned long long)ttl_s * 1000ULL);
	const char *argv[5] = {"SET", k, val_len > 0 ? (const char *)val : "", "PX", ms};
	size_t lens[5] = {3, full_key(r, key, key_len, k), val_len, 2, (size_t)ms_len};
	redisReply *rep;
	csrf_reason res = run(r, ttl_s > 0 ? 5 : 3, argv, lens, &rep);

	if (res != CSRF_OK)
		return res;
	if (rep->type != REDIS_REPLY_STATUS)
		res = CSRF_STORE_UNAVAILABLE;
	freeReplyObject(rep);
	return res;
}

static csrf_reason redis_del(csrf_store *st, const char *key, size_t key_len)
{
	redis_store *r = (redis_store *)st;
	char k[CSRF_STORE_PREFIX_MAX + CSRF_STORE_KEY_MAX];
	const char *argv[2] = {"DEL", k};
	size_t lens[2] = {3, full_key(r, key, key_len, k)};
	redisReply *rep;
	csrf_reason res = run(r, 2, argv, lens, &rep);

	if (res != CSRF_OK)
		return res;
	if (rep->type != REDIS_REPLY_INTEGER)
		res = CSRF_STORE_UNAVAILABLE;
	freeReplyObject(rep);
	return res;
}

static csrf_reason redis_incr(csrf_store *st, const char *key, size_t key_len, uint32_t ttl_s, int64_t *value)
{
	redis_store *r = (redis_store *)st;
	char k[CSRF_STORE_PREFIX_MAX + CSRF_STORE_KEY_MAX];
	char ms[24];
	int ms_len = snprintf(ms, sizeof ms, "%llu", (unsigned long long)ttl_s * 1000ULL);
	const char *argv[5] = {"EVAL", INCR_SCRIPT, "1", k, ms};
	size_t lens[5] = {4, sizeof INCR_SCRIPT - 1, 1, full_key(r, key, key_len, k), (size_t)ms_len};
	redisReply *rep;
	csrf_reason res = run(r, 5, argv, lens, &rep);

	if (res != CSRF_OK)
		return res;
	if (rep->type == REDIS_REPLY_INTEGER) {
		*value = (int64_t)rep->integer;
	} else if (rep->type == REDIS_REPLY_ERROR && rep->str != NULL &&
	           (strstr(rep->str, "not an integer") != NULL || strstr(rep->str, "overflow") != NULL)) {
		res = CSRF_MALFORMED;
	} else {
		res = CSRF_STORE_UNAVAILABLE;
	}
	freeReplyObject(rep);
	return res;
}

static void redis_close(csrf_store *st)
{
	redis_store *r = (redis_store *)st;

	if (r->c != NULL)
		redisFree(r->c);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

static const csrf_store_ops redis_ops = {
    .get = redis_get,
    .set = redis_set,
    .del = redis_del,
    .incr = redis_incr,
    .close = redis_close,
};

csrf_reason csrf_store_redis_open(csrf_store **out, const csrf_store_config *cfg)
{
	redis_store *r;
	pipe_guard g;
	csrf_reason res;

	if (out == NULL || cfg == NULL || cfg->kind != CSRF_STORE_REDIS)
		return CSRF_ERR_ARG;
	r = calloc(1, sizeof *r);
	if (r == NULL)
		return CSRF_ERR_NOMEM;
	r->base.ops = &redis_ops;
	memcpy(r->host, cfg->host, sizeof r->host);
	r->host[sizeof r->host - 1] = '\0';
	r->port = cfg->port;
	r->db = cfg->db;
	r->prefix_len = strnlen(cfg->prefix, CSRF_STORE_PREFIX_MAX);
	memcpy(r->prefix, cfg->prefix, r->prefix_len);
	r->timeout_ms = cfg->timeout_ms;
	if (pthread_mutex_init(&r->lock, NULL) != 0) {
		free(r);
		return CSRF_ERR_INTERNAL;
	}
	pthread_mutex_lock(&r->lock);
	pipe_block(&g);
	res = connect_now(r, mono_ms() + r->timeout_ms);
	pipe_restore(&g);
	pthread_mutex_unlock(&r->lock);
	if (res != CSRF_OK) {
		redis_close(&r->base);
		return res;
	}
	*out = &r->base;
	return CSRF_OK;
}
