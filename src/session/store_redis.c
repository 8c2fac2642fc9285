/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * store_redis.c - the Redis store ("redis://...", "redis-sentinel://...";
 * the URL grammar and the contract are in csrf_session.h) over a small
 * pool of hiredis connections.
 *
 * Pool: N connections, each used by one call at a time; a call takes an
 * idle one (waiting within its deadline when all are busy), so N threads
 * talk to Redis at once instead of queueing behind one mutex.
 *
 * Failure model: every call has a deadline of timeout_ms from its start,
 * waiting for a connection included; connecting (AUTH, ROLE, SELECT) and
 * the command share it, and so does every byte of a reply: a server that
 * answers a little at a time cannot stretch a call (sockets are polled
 * against the deadline, never left to a timeout per read). A reply is
 * checked as it arrives, before hiredis parses it (store_resp.c): one
 * larger than CSRF_RESP_REPLY_MAX, nested deeper than any the store
 * reads, or not RESP2 closes the connection and fails the call closed,
 * without a retry, logged with its reason (sizes only, never bytes of
 * the reply). Before a pooled connection carries a write it is
 * polled: one that Redis closed (a restart, an idle timeout) has
 * something to read (its end of stream) and is replaced before anything
 * is sent, so the first call after a restart succeeds. A read skips the
 * poll (a system call a request): a reused connection that turns out
 * closed is replaced, without a word in the log, and the read sent again.
 * Commands are written here, byte count kept, with MSG_NOSIGNAL (a dead
 * peer raises no SIGPIPE): after a broken connection a get is retried
 * once on a fresh one, and so is a write of which no byte left; an
 * increment that may have reached Redis is never sent twice. A READONLY
 * answer (a master turned replica) means the write was refused: the
 * master is looked up again and the command retried once. A connection attempt that timed out (a host that
 * does not answer) starts a backoff, 50 ms doubling to 1 s, during which
 * calls answer CSRF_STORE_UNAVAILABLE at once, and retires every pooled
 * connection; a refused one costs nothing and is tried again by the next
 * call. A forked child never reuses its parent's connections.
 *
 * Sentinel: the master's address comes from the first sentinel that
 * knows it (SENTINEL get-master-addr-by-name; that sentinel is asked
 * first from then on) and is checked with ROLE. It is forgotten when a
 * connection to it fails or answers READONLY, and asked again by the
 * next connection attempt; connections to an old master are retired.
 *
 * Redis cannot protect counters from eviction, so the store reads
 * maxmemory-policy once per server it meets and logs when it is not
 * noeviction; a write refused for memory (OOM) is CSRF_STORE_FULL.
 * Values and passwords are never logged; only addresses are.
 */
#include "session_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include <hiredis/hiredis.h>

#define BACKOFF_MIN_MS 50
#define BACKOFF_MAX_MS 1000
/* The longest command: EVAL, the script, a prefixed key and a value. */
#define CMD_MAX (CSRF_STORE_VAL_MAX + 2048)

/* Sets the TTL on a new key in the same atomic step as the increment. */
static const char INCR_SCRIPT[] = "local new = redis.call('EXISTS', KEYS[1]) == 0\n"
                                  "local v = redis.call('INCR', KEYS[1])\n"
                                  "if new and tonumber(ARGV[1]) > 0 then\n"
                                  "  redis.call('PEXPIRE', KEYS[1], ARGV[1])\n"
                                  "end\n"
                                  "return v\n";

/* A connection, and why its last reply was refused (RS_PROTOCOL). */
typedef struct {
	redisContext *c;
	char why[CSRF_RESP_WHY_MAX];
	char top; /* the type byte of the last reply: + - : $ * */
} rlink;

typedef struct {
	rlink l;
	unsigned forks; /* forks_seen when it was opened */
	uint64_t gen;   /* r->gen when it was opened */
} rconn;

/* Forks of this process so far (a child's handler counts them): a
 * connection opened before a fork belongs to the parent. Compared on
 * every call, so no getpid() there. */
static atomic_uint forks_seen;
static pthread_once_t fork_hook_once = PTHREAD_ONCE_INIT;

static void count_fork(void)
{
	atomic_fetch_add(&forks_seen, 1);
}

static void fork_hook(void)
{
	pthread_atfork(NULL, NULL, count_fork);
}

typedef struct {
	csrf_store base;
	/* fixed at open */
	int sentinel;
	char master[CSRF_STORE_MASTER_NAME_MAX + 1];
	char user[CSRF_STORE_CRED_MAX + 1];
	char password[CSRF_STORE_CRED_MAX + 1];
	int has_password;
	unsigned db;
	char prefix[CSRF_STORE_PREFIX_MAX + 1];
	size_t prefix_len;
	uint32_t timeout_ms;
	rconn *conns;
	size_t n_conns;

	/* under lock */
	pthread_mutex_t lock;
	pthread_cond_t idle_cond;
	size_t *idle; /* a stack of idle slots */
	size_t n_idle;
	csrfi_store_addr sentinels[CSRF_STORE_SENTINELS_MAX];
	size_t n_sentinels;
	csrfi_store_addr target; /* the server; with Sentinel, the master */
	int target_known;
	uint64_t gen;                 /* bumped to retire every pooled connection */
	csrfi_store_addr policy_seen; /* the server whose eviction policy was read last */
	int policy_checked;
	int64_t retry_at; /* monotonic ms; no connection attempt before */
	uint32_t backoff_ms;
	int up; /* for "connected" and "lost" reports */
	csrfi_log_limit down_limit, full_limit, config_limit;
} redis_store;

/* How a connection attempt or a command went. */
typedef enum {
	RS_OK,
	RS_DOWN,       /* refused, reset, closed: fast */
	RS_TIMEOUT,    /* nothing answered within the deadline */
	RS_AUTH,       /* the password was refused */
	RS_DB,         /* SELECT refused */
	RS_UNKNOWN,    /* the sentinels do not know the master */
	RS_NOT_MASTER, /* the address given is not (or no longer) a master */
	RS_PROTOCOL,   /* a reply too large, too deep or not RESP2 (rlink.why) */
} rstatus;

static struct timeval ms_tv(int64_t ms)
{
	struct timeval tv;

	if (ms < 1)
		ms = 1;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)((ms % 1000) * 1000);
	return tv;
}

/* ---- reports ---- */

/* A log message, truncated to CSRF_STORE_LOG_MAX (hosts can be long). */
static void msgf(char *msg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void msgf(char *msg, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, CSRF_STORE_LOG_MAX, fmt, ap);
	va_end(ap);
}

/* Hands msg to the log, at most once per period for a limited kind. */
static void report(redis_store *r, csrfi_log_limit *lim, csrf_reason event, const char *msg)
{
	uint64_t skipped = 0;
	int take = 1;

	if (lim != NULL) {
		pthread_mutex_lock(&r->lock);
		take = csrfi_log_limit_take(lim, csrfi_mono_ms(), &skipped);
		pthread_mutex_unlock(&r->lock);
	}
	if (!take)
		return;
	if (skipped > 0)
		csrfi_store_log(&r->base.log, event, "%s (and %llu more times since the last report)", msg,
		                (unsigned long long)skipped);
	else
		csrfi_store_log(&r->base.log, event, "%s", msg);
}

static const char *kind_name(const redis_store *r)
{
	return r->sentinel ? "redis master" : "redis";
}

/* ---- the wire ---- */

/* Appends "$len\r\nbytes\r\n" (or "*n\r\n" with bytes NULL). */
static size_t resp_put(char *buf, size_t cap, size_t pos, char mark, const char *bytes, size_t len)
{
	int n;

	if (pos >= cap)
		return 0;
	n = snprintf(buf + pos, cap - pos, "%c%zu\r\n", mark, len);
	if (n < 0 || (size_t)n >= cap - pos)
		return 0;
	pos += (size_t)n;
	if (bytes == NULL)
		return pos;
	if (cap - pos < len + 2)
		return 0;
	memcpy(buf + pos, bytes, len);
	memcpy(buf + pos + len, "\r\n", 2);
	return pos + len + 2;
}

/* One command in RESP into buf; 0 when it does not fit. */
static size_t resp_format(char *buf, size_t cap, int argc, const char **argv, const size_t *lens)
{
	size_t pos = resp_put(buf, cap, 0, '*', NULL, (size_t)argc);

	for (int i = 0; i < argc && pos > 0; i++)
		pos = resp_put(buf, cap, pos, '$', argv[i], lens[i]);
	return pos;
}

/* A connection that has anything to read while no reply is due has been
 * closed (or broken) by the other end. */
static int still_open(const redisContext *c)
{
	struct pollfd p = {c->fd, POLLIN, 0};
	int n;

	do
		n = poll(&p, 1, 0);
	while (n < 0 && errno == EINTR);
	return n == 0;
}

/* Waits until fd is ready for events or the deadline passes: 1 ready,
 * 0 out of time, -1 broken. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		int64_t left = deadline - csrfi_mono_ms();
		struct pollfd p = {fd, events, 0};
		int n;

		if (left <= 0)
			return 0;
		n = poll(&p, 1, left > INT32_MAX ? INT32_MAX : (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		return n > 0;
	}
}

/* Sends one command and reads its reply within the deadline (a few
 * milliseconds over at most): each wait for the socket is bounded by
 * what is left of the call, so a reply that trickles in ends at the
 * deadline too. *sent is 1 once any byte of it left. On failure the
 * connection is unusable. */
static rstatus exchange(const redis_store *r, rlink *l, int64_t deadline, int argc, const char **argv,
                        const size_t *lens, int *sent, redisReply **reply)
{
	char buf[CMD_MAX];
	char in[4096];
	size_t len = resp_format(buf, sizeof buf, argc, argv, lens), off = 0;
	int fd = l->c->fd;
	csrfi_resp_scan sc;
	rstatus st = RS_OK;

	(void)r; /* the deadline says all the call needs */
	*sent = 0;
	*reply = NULL;
	if (len == 0)
		return RS_TIMEOUT;
	while (off < len) {
		int w = wait_fd(fd, POLLOUT, deadline);
		ssize_t n;
		if (w <= 0) {
			st = w == 0 ? RS_TIMEOUT : RS_DOWN;
			break;
		}
		n = send(fd, buf + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (n <= 0) {
			st = RS_DOWN;
			break;
		}
		*sent = 1;
		off += (size_t)n;
	}
	csrfi_wipe(buf, len); /* values and passwords */
	if (st != RS_OK)
		return st;
	csrfi_resp_scan_init(&sc);
	for (;;) {
		int w = wait_fd(fd, POLLIN, deadline), done;
		ssize_t n;
		if (w <= 0) {
			st = w == 0 ? RS_TIMEOUT : RS_DOWN;
			break;
		}
		n = recv(fd, in, sizeof in, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (n <= 0) {
			st = RS_DOWN;
			break;
		}
		if (sc.total == 0)
			l->top = in[0];
		done = csrfi_resp_scan_feed(&sc, in, (size_t)n);
		if (done < 0) {
			memcpy(l->why, sc.why, sizeof l->why);
			st = RS_PROTOCOL;
			break;
		}
		if (redisReaderFeed(l->c->reader, in, (size_t)n) != REDIS_OK) {
			st = RS_DOWN;
			break;
		}
		if (done) {
			void *rep = NULL;
			if (redisReaderGetReply(l->c->reader, &rep) != REDIS_OK || rep == NULL) {
				snprintf(l->why, sizeof l->why, "a reply hiredis cannot parse");
				st = RS_PROTOCOL;
			} else {
				*reply = rep;
			}
			break;
		}
	}
	csrfi_wipe(in, sizeof in); /* values */
	return st;
}

static int reply_is_error(const redisReply *rep, const char *prefix)
{
	size_t n = strlen(prefix);

	return rep->type == REDIS_REPLY_ERROR && rep->str != NULL && (size_t)rep->len >= n &&
	       memcmp(rep->str, prefix, n) == 0;
}

/* A command of the handshake: CSRF_OK-like RS_OK and the reply, or the
 * failure. */
static rstatus handshake_cmd(const redis_store *r, rlink *l, int64_t deadline, int argc, const char **argv,
                             const size_t *lens, redisReply **reply)
{
	int sent;

	return exchange(r, l, deadline, argc, argv, lens, &sent, reply);
}

/* ---- connecting ---- */

/* Connects to a within the deadline; the socket's timeouts start at
 * timeout_ms. */
static rstatus dial(const redis_store *r, const csrfi_store_addr *a, int64_t deadline, rlink *l)
{
	int64_t left = deadline - csrfi_mono_ms();
	redisContext *c;

	l->c = NULL;
	if (left <= 0)
		return RS_TIMEOUT;
	c = redisConnectWithTimeout(a->host, a->port, ms_tv(left));
	if (c != NULL && c->err == 0 && redisSetTimeout(c, ms_tv(r->timeout_ms)) != REDIS_OK) {
		redisFree(c);
		c = NULL;
	}
	if (c == NULL || c->err != 0) {
		if (c != NULL)
			redisFree(c);
		return csrfi_mono_ms() >= deadline - 1 ? RS_TIMEOUT : RS_DOWN;
	}
	l->c = c;
	return RS_OK;
}

static void unlink_conn(rlink *l)
{
	if (l->c != NULL) {
		redisFree(l->c);
		l->c = NULL;
	}
}

/* Reads maxmemory-policy and logs when it lets Redis evict counters.
 * Fails only when the connection does. */
static rstatus check_policy(redis_store *r, rlink *l, int64_t deadline, const csrfi_store_addr *a)
{
	static const char *argv[3] = {"CONFIG", "GET", "maxmemory-policy"};
	static const size_t lens[3] = {6, 3, 16};
	redisReply *rep;
	char msg[CSRF_STORE_LOG_MAX];
	rstatus st = handshake_cmd(r, l, deadline, 3, argv, lens, &rep);

	if (st != RS_OK)
		return st;
	if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 && rep->element[1]->type == REDIS_REPLY_STRING) {
		const redisReply *v = rep->element[1];
		if (!(v->len == 10 && memcmp(v->str, "noeviction", 10) == 0)) {
			/* the server's bytes: only what a policy name holds
			 * reaches the log (no CR, LF or escape sequence) */
			char name[33];
			size_t n = v->len > 32 ? 32 : (size_t)v->len;
			for (size_t i = 0; i < n; i++) {
				char c = v->str[i];
				name[i] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ? c : '?';
			}
			name[n] = '\0';
			msgf(msg,
			     "%s %s:%u has maxmemory-policy %s: a full Redis may evict lockout counters; set "
			     "maxmemory-policy noeviction",
			     kind_name(r), a->host, a->port, name);
			report(r, NULL, CSRF_ERR_CONFIG, msg);
		}
	} else {
		msgf(msg,
		     "%s %s:%u: cannot read maxmemory-policy (CONFIG refused); it must be noeviction, or a full "
		     "Redis may evict lockout counters",
		     kind_name(r), a->host, a->port);
		report(r, NULL, CSRF_ERR_CONFIG, msg);
	}
	freeReplyObject(rep);
	return RS_OK;
}

static int same_addr(const csrfi_store_addr *a, const csrfi_store_addr *b)
{
	return a->port == b->port && strcmp(a->host, b->host) == 0;
}

/* Connects to a and prepares the connection: AUTH, ROLE (Sentinel),
 * SELECT, and the policy check once per server. */
static rstatus open_conn(redis_store *r, const csrfi_store_addr *a, int64_t deadline, rlink *l)
{
	redisReply *rep = NULL;
	int check;
	rstatus st = dial(r, a, deadline, l);

	if (st != RS_OK)
		return st;
	if (r->has_password) {
		/* AUTH [user] password */
		const char *argv[3] = {"AUTH", r->user, r->password};
		size_t lens[3] = {4, strlen(r->user), strlen(r->password)};
		int argc = 3;
		if (r->user[0] == '\0') {
			argv[1] = r->password;
			lens[1] = lens[2];
			argc = 2;
		}
		st = handshake_cmd(r, l, deadline, argc, argv, lens, &rep);
		if (st == RS_OK && rep->type != REDIS_REPLY_STATUS)
			st = reply_is_error(rep, "LOADING") ? RS_DOWN : RS_AUTH;
	} else {
		/* a Redis that wants a password says so here, not at the first call */
		const char *argv[1] = {"PING"};
		size_t lens[1] = {4};
		st = handshake_cmd(r, l, deadline, 1, argv, lens, &rep);
		if (st == RS_OK && reply_is_error(rep, "NOAUTH"))
			st = RS_AUTH;
	}
	if (st == RS_OK && r->sentinel) {
		const char *argv[1] = {"ROLE"};
		size_t lens[1] = {4};
		if (rep != NULL)
			freeReplyObject(rep);
		rep = NULL;
		st = handshake_cmd(r, l, deadline, 1, argv, lens, &rep);
		if (st == RS_OK && !(rep->type == REDIS_REPLY_ARRAY && rep->elements > 0 &&
		                     rep->element[0]->type == REDIS_REPLY_STRING && rep->element[0]->len == 6 &&
		                     memcmp(rep->element[0]->str, "master", 6) == 0))
			st = RS_NOT_MASTER;
	}
	if (st == RS_OK && r->db != 0) {
		char db[4];
		int n = snprintf(db, sizeof db, "%u", r->db);
		const char *argv[2] = {"SELECT", db};
		size_t lens[2] = {6, (size_t)n};
		if (rep != NULL)
			freeReplyObject(rep);
		rep = NULL;
		st = handshake_cmd(r, l, deadline, 2, argv, lens, &rep);
		if (st == RS_OK && rep->type != REDIS_REPLY_STATUS)
			st = RS_DB;
	}
	if (rep != NULL)
		freeReplyObject(rep);
	if (st != RS_OK) {
		unlink_conn(l);
		return st;
	}
	pthread_mutex_lock(&r->lock);
	check = !r->policy_checked || !same_addr(&r->policy_seen, a);
	r->policy_checked = 1;
	r->policy_seen = *a;
	pthread_mutex_unlock(&r->lock);
	if (check && (st = check_policy(r, l, deadline, a)) != RS_OK) {
		pthread_mutex_lock(&r->lock);
		r->policy_checked = 0; /* read it next time */
		pthread_mutex_unlock(&r->lock);
		unlink_conn(l);
		return st;
	}
	return RS_OK;
}

/* Parses a sentinel's answer [ip, port] into *a. */
static int master_addr(const redisReply *rep, csrfi_store_addr *a)
{
	const redisReply *ip, *port;
	uint64_t p = 0;

	if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2)
		return 0;
	ip = rep->element[0];
	port = rep->element[1];
	if (ip->type != REDIS_REPLY_STRING || port->type != REDIS_REPLY_STRING || ip->len <= 0 ||
	    (size_t)ip->len >= sizeof a->host || port->len <= 0 || port->len > 5)
		return 0;
	for (size_t i = 0; i < (size_t)port->len; i++) {
		if (port->str[i] < '0' || port->str[i] > '9')
			return 0;
		p = p * 10 + (uint64_t)(port->str[i] - '0');
	}
	if (p == 0 || p > 65535 || memchr(ip->str, '\0', (size_t)ip->len) != NULL)
		return 0;
	memcpy(a->host, ip->str, (size_t)ip->len);
	a->host[ip->len] = '\0';
	a->port = (uint16_t)p;
	return 1;
}

/* Asks one sentinel where the master is: RS_OK and *a, RS_UNKNOWN (it
 * does not know the name), or how reaching it failed. */
static rstatus ask_sentinel(redis_store *r, const csrfi_store_addr *sentinel, int64_t deadline, csrfi_store_addr *a)
{
	const char *argv[3] = {"SENTINEL", "get-master-addr-by-name", r->master};
	size_t lens[3] = {8, 23, strlen(r->master)};
	redisReply *rep = NULL;
	rlink l;
	rstatus st = dial(r, sentinel, deadline, &l);

	if (st != RS_OK)
		return st;
	st = handshake_cmd(r, &l, deadline, 3, argv, lens, &rep);
	unlink_conn(&l);
	if (st != RS_OK)
		return st;
	if (rep->type == REDIS_REPLY_NIL)
		st = RS_UNKNOWN;
	else if (!master_addr(rep, a))
		st = RS_DOWN; /* not a sentinel's answer */
	freeReplyObject(rep);
	return st;
}

/* Finds the master and connects to it: each sentinel in turn is asked,
 * and each address given (once) is tried until one is a master, so a
 * sentinel that still names the old master after a failover costs one
 * refused connection. On success the master is the store's target, *gen
 * the generation its connections belong to, and the sentinel that named
 * it is asked first from then on. */
static rstatus discover(redis_store *r, int64_t deadline, uint64_t *gen, rlink *l)
{
	csrfi_store_addr list[CSRF_STORE_SENTINELS_MAX], tried[CSRF_STORE_SENTINELS_MAX], found;
	size_t n, n_tried = 0;
	int unknown = 0, named = 0;
	rstatus last = RS_DOWN, config = RS_OK;
	char msg[CSRF_STORE_LOG_MAX];

	pthread_mutex_lock(&r->lock);
	n = r->n_sentinels;
	memcpy(list, r->sentinels, n * sizeof list[0]);
	pthread_mutex_unlock(&r->lock);
	for (size_t i = 0; i < n; i++) {
		rstatus st = ask_sentinel(r, &list[i], deadline, &found);
		int seen = 0, moved;

		if (st == RS_UNKNOWN)
			unknown = 1;
		if (st != RS_OK)
			continue;
		named = 1;
		for (size_t j = 0; j < n_tried; j++)
			seen |= same_addr(&tried[j], &found);
		if (seen)
			continue;
		tried[n_tried++] = found;
		st = open_conn(r, &found, deadline, l);
		if (st != RS_OK) {
			last = st;
			if (st == RS_AUTH || st == RS_DB)
				config = st;
			continue;
		}
		pthread_mutex_lock(&r->lock);
		moved = !r->target_known || !same_addr(&r->target, &found);
		/* the sentinel that answered goes first */
		for (size_t j = 0; j < r->n_sentinels; j++) {
			if (same_addr(&r->sentinels[j], &list[i])) {
				csrfi_store_addr keep = r->sentinels[j];
				memmove(&r->sentinels[1], &r->sentinels[0], j * sizeof keep);
				r->sentinels[0] = keep;
				break;
			}
		}
		r->target = found;
		r->target_known = 1;
		if (moved)
			r->gen++;
		*gen = r->gen;
		pthread_mutex_unlock(&r->lock);
		if (moved) {
			msgf(msg, "sentinel %s:%u: master %s is at %s:%u", list[i].host, list[i].port, r->master,
			     found.host, found.port);
			report(r, NULL, CSRF_OK, msg);
		}
		return RS_OK;
	}
	return config != RS_OK ? config : named ? last : unknown ? RS_UNKNOWN : RS_DOWN;
}

static const char *status_text(rstatus st)
{
	switch (st) {
	case RS_DOWN:
		return "cannot be reached or closed the connection";
	case RS_TIMEOUT:
		return "did not answer in time";
	case RS_AUTH:
		return "refused the password, or wants one (check the user and password in the store URL)";
	case RS_DB:
		return "refused to SELECT the database";
	case RS_UNKNOWN:
		return "is not known to any sentinel (check the master name)";
	case RS_NOT_MASTER:
		return "is not a master (a failover under way?)";
	case RS_PROTOCOL:
		return "sent a reply the store does not expect: connection closed";
	default:
		return "failed";
	}
}

/* After a failed connection attempt or command (what: how it failed,
 * NULL for status_text). A timeout starts (or lengthens) the backoff and
 * retires every pooled connection; with Sentinel, a master that failed
 * is asked for again. Reported to the log: at once when the store was
 * up, rate limited while it stays down. */
static void note_failure(redis_store *r, rstatus st, uint64_t gen, const char *what)
{
	char msg[CSRF_STORE_LOG_MAX];
	csrfi_store_addr a;
	int was_up, known;

	pthread_mutex_lock(&r->lock);
	a = r->target;
	known = r->target_known;
	if (st == RS_TIMEOUT) {
		r->backoff_ms = r->backoff_ms == 0 ? BACKOFF_MIN_MS : r->backoff_ms * 2;
		if (r->backoff_ms > BACKOFF_MAX_MS)
			r->backoff_ms = BACKOFF_MAX_MS;
		r->retry_at = csrfi_mono_ms() + r->backoff_ms;
		if (r->gen == gen)
			r->gen++;
	}
	if (r->sentinel && r->gen == gen)
		r->target_known = 0;
	was_up = r->up;
	r->up = 0;
	pthread_mutex_unlock(&r->lock);
	if (what == NULL)
		what = status_text(st);
	if (known)
		msgf(msg, "%s %s:%u %s", kind_name(r), a.host, a.port, what);
	else
		msgf(msg, "redis master %s: %s", r->master, what);
	if (st == RS_AUTH || st == RS_DB || st == RS_UNKNOWN)
		report(r, &r->config_limit, CSRF_ERR_CONFIG, msg);
	else
		report(r, was_up ? NULL : &r->down_limit, CSRF_STORE_UNAVAILABLE, msg);
}

/* A reply refused (RS_PROTOCOL) on l, in the log with its reason. */
static void note_protocol(redis_store *r, uint64_t gen, const rlink *l)
{
	char what[160];

	snprintf(what, sizeof what, "sent a reply the store does not expect (%s): connection closed", l->why);
	note_failure(r, RS_PROTOCOL, gen, what);
}

/* Makes a pooled connection usable: keeps it when it is current (and,
 * with poll set, still open), else connects (asking the sentinels first
 * when needed; *asked says whether they were). *reused: the connection
 * was kept. */
static rstatus ready(redis_store *r, rconn *k, int64_t deadline, int poll_first, int *asked, int *reused)
{
	uint64_t gen;
	int known, was_up;
	csrfi_store_addr a;
	rstatus st;

	if (k->l.c != NULL && k->forks != atomic_load(&forks_seen))
		unlink_conn(&k->l); /* inherited over fork: the parent owns that stream */
	pthread_mutex_lock(&r->lock);
	gen = r->gen;
	known = r->target_known;
	pthread_mutex_unlock(&r->lock);
	*reused = k->l.c != NULL && k->gen == gen && (!poll_first || still_open(k->l.c));
	if (*reused)
		return RS_OK;
	unlink_conn(&k->l);
	pthread_mutex_lock(&r->lock);
	if (csrfi_mono_ms() < r->retry_at) {
		pthread_mutex_unlock(&r->lock);
		return RS_TIMEOUT;
	}
	pthread_mutex_unlock(&r->lock);
	*asked = r->sentinel && !known;
	if (*asked) {
		st = discover(r, deadline, &gen, &k->l);
		if (st != RS_OK) {
			note_failure(r, st, gen,
			             st == RS_DOWN ? "cannot be found: no sentinel answered, or none named a "
			                             "master that answered"
			                           : NULL);
			return st;
		}
		pthread_mutex_lock(&r->lock);
		a = r->target;
		pthread_mutex_unlock(&r->lock);
	} else {
		pthread_mutex_lock(&r->lock);
		gen = r->gen;
		a = r->target;
		pthread_mutex_unlock(&r->lock);
		st = open_conn(r, &a, deadline, &k->l);
		if (st == RS_PROTOCOL) {
			note_protocol(r, gen, &k->l);
			return st;
		}
		if (st != RS_OK) {
			note_failure(r, st, gen, NULL);
			return st;
		}
	}
	k->forks = atomic_load(&forks_seen);
	k->gen = gen;
	pthread_mutex_lock(&r->lock);
	r->backoff_ms = 0;
	r->retry_at = 0;
	was_up = r->up;
	r->up = 1;
	pthread_mutex_unlock(&r->lock);
	if (!was_up) {
		char msg[CSRF_STORE_LOG_MAX];
		msgf(msg, "%s %s:%u connected", kind_name(r), a.host, a.port);
		report(r, NULL, CSRF_OK, msg);
	}
	return RS_OK;
}

/* ---- the pool ---- */

static int take_slot(redis_store *r, int64_t deadline, size_t *slot)
{
	struct timespec ts;
	int ok = 1;

	ts.tv_sec = (time_t)(deadline / 1000);
	ts.tv_nsec = (long)(deadline % 1000) * 1000000L;
	pthread_mutex_lock(&r->lock);
	while (r->n_idle == 0 && ok)
		ok = pthread_cond_timedwait(&r->idle_cond, &r->lock, &ts) != ETIMEDOUT || r->n_idle > 0;
	if (r->n_idle > 0)
		*slot = r->idle[--r->n_idle];
	else
		ok = 0;
	pthread_mutex_unlock(&r->lock);
	return ok;
}

static void give_slot(redis_store *r, size_t slot)
{
	pthread_mutex_lock(&r->lock);
	r->idle[r->n_idle++] = slot;
	pthread_cond_signal(&r->idle_cond);
	pthread_mutex_unlock(&r->lock);
}

static void drop(rconn *k)
{
	unlink_conn(&k->l);
}

/* Says whether a reply (of type byte top) is one an honest Redis sends
 * to the command; 0 and the reason in why (CSRF_RESP_WHY_MAX) when not. */
typedef int (*reply_check)(const redisReply *rep, char top, char *why);

/* Runs one command within the call's deadline. is_read: safe to send
 * twice. check (may be NULL): a reply it refuses is a protocol error,
 * as one the scanner refuses (logged, connection closed, the call fails
 * closed). *reply is NULL unless CSRF_OK; CSRF_STORE_FULL for a write
 * Redis refused for memory. */
static csrf_reason run(redis_store *r, int argc, const char **argv, const size_t *lens, int is_read, reply_check check,
                       redisReply **reply)
{
	int64_t deadline = csrfi_mono_ms() + r->timeout_ms;
	size_t slot;
	rconn *k;
	csrf_reason res = CSRF_STORE_UNAVAILABLE;

	*reply = NULL;
	if (!take_slot(r, deadline, &slot))
		return CSRF_STORE_UNAVAILABLE;
	k = &r->conns[slot];
	/* two attempts, and one more for a read whose kept connection
	 * turned out closed (quiet: nothing was wrong with Redis) */
	for (int attempt = 0, tries = 2, quiet = 0; attempt < tries; attempt++) {
		int sent = 0, asked = 0, reused = 0;
		uint64_t gen;
		rstatus st = ready(r, k, deadline, !is_read, &asked, &reused);

		if (st != RS_OK && r->sentinel && !asked && st != RS_AUTH)
			continue; /* the master we knew is gone: ask the sentinels */
		if (st != RS_OK)
			break;
		gen = k->gen;
		st = exchange(r, &k->l, deadline, argc, argv, lens, &sent, reply);
		if (st == RS_OK && reply_is_error(*reply, "READONLY")) {
			/* refused by a replica: nothing was written */
			freeReplyObject(*reply);
			*reply = NULL;
			drop(k);
			note_failure(r, RS_NOT_MASTER, gen, "answered READONLY: not a master any more");
			continue;
		}
		if (st == RS_OK && reply_is_error(*reply, "OOM")) {
			freeReplyObject(*reply);
			*reply = NULL;
			char msg[CSRF_STORE_LOG_MAX];
			msgf(msg, "%s is full (maxmemory): a write was refused", kind_name(r));
			report(r, &r->full_limit, CSRF_STORE_FULL, msg);
			res = CSRF_STORE_FULL;
			break;
		}
		if (st == RS_OK && check != NULL && !check(*reply, k->l.top, k->l.why)) {
			freeReplyObject(*reply);
			*reply = NULL;
			st = RS_PROTOCOL;
		}
		if (st == RS_OK) {
			res = CSRF_OK;
			break;
		}
		drop(k);
		if (st == RS_PROTOCOL) {
			/* the same question would get the same answer */
			note_protocol(r, gen, &k->l);
			break;
		}
		if (is_read && reused && st == RS_DOWN && !quiet) {
			/* a read is sent without the poll: a connection closed while
			 * idle shows here, and is replaced as the poll would have */
			quiet = 1;
			tries++;
			continue;
		}
		note_failure(r, st, gen, NULL);
		if (!is_read && sent)
			break; /* it may have been applied: never twice */
	}
	give_slot(r, slot);
	return res;
}

/* ---- the operations ---- */

/* prefix + key into buf (CSRF_STORE_PREFIX_MAX + CSRF_STORE_KEY_MAX). */
static size_t full_key(const redis_store *r, const char *key, size_t key_len, char *buf)
{
	memcpy(buf, r->prefix, r->prefix_len);
	memcpy(buf + r->prefix_len, key, key_len);
	return r->prefix_len + key_len;
}

/* GET: no entry is a nil string ($-1). A nil array (*-1) is no answer
 * of GET in RESP2; read as "no entry" it would pass a lockout check. */
static int get_check(const redisReply *rep, char top, char *why)
{
	if (rep->type == REDIS_REPLY_NIL && top != '$') {
		snprintf(why, CSRF_RESP_WHY_MAX, "a nil array to GET");
		return 0;
	}
	return 1;
}

static csrf_reason redis_get(csrf_store *st, const char *key, size_t key_len, void *buf, size_t cap, size_t *len)
{
	redis_store *r = (redis_store *)st;
	char k[CSRF_STORE_PREFIX_MAX + CSRF_STORE_KEY_MAX];
	const char *argv[2] = {"GET", k};
	size_t lens[2] = {3, full_key(r, key, key_len, k)};
	redisReply *rep;
	csrf_reason res = run(r, 2, argv, lens, 1, get_check, &rep);

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
		csrfi_wipe(rep->str, (size_t)rep->len);
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
	csrf_reason res = run(r, ttl_s > 0 ? 5 : 3, argv, lens, 0, NULL, &rep);

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
	csrf_reason res = run(r, 2, argv, lens, 0, NULL, &rep);

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
	csrf_reason res = run(r, 5, argv, lens, 0, NULL, &rep);

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

	for (size_t i = 0; i < r->n_conns; i++)
		drop(&r->conns[i]);
	pthread_cond_destroy(&r->idle_cond);
	pthread_mutex_destroy(&r->lock);
	free(r->conns);
	free(r->idle);
	csrfi_wipe(r, sizeof *r);
	free(r);
}

static const csrfi_store_ops redis_ops = {
    .get = redis_get,
    .set = redis_set,
    .del = redis_del,
    .incr = redis_incr,
    .close = redis_close,
};

static csrf_reason init(redis_store *r, const csrfi_store_config *cfg, const csrfi_store_logger *lg)
{
	pthread_condattr_t ca;

	r->base.ops = &redis_ops;
	r->base.log = *lg;
	r->sentinel = cfg->kind == CSRF_STORE_SENTINEL;
	memcpy(r->master, cfg->master, sizeof r->master);
	memcpy(r->user, cfg->user, sizeof r->user);
	memcpy(r->password, cfg->password, sizeof r->password);
	r->has_password = cfg->has_password;
	r->db = cfg->db;
	r->prefix_len = strnlen(cfg->prefix, CSRF_STORE_PREFIX_MAX);
	memcpy(r->prefix, cfg->prefix, r->prefix_len);
	r->timeout_ms = cfg->timeout_ms;
	if (r->sentinel) {
		r->n_sentinels = cfg->n_addr;
		memcpy(r->sentinels, cfg->addr, cfg->n_addr * sizeof cfg->addr[0]);
	} else {
		r->target = cfg->addr[0];
		r->target_known = 1;
	}
	r->n_conns = cfg->pool > 0 ? cfg->pool : 1;
	r->conns = calloc(r->n_conns, sizeof *r->conns);
	r->idle = calloc(r->n_conns, sizeof *r->idle);
	if (r->conns == NULL || r->idle == NULL)
		return CSRF_ERR_NOMEM;
	for (size_t i = 0; i < r->n_conns; i++)
		r->idle[i] = r->n_conns - 1 - i;
	r->n_idle = r->n_conns;
	if (pthread_condattr_init(&ca) != 0)
		return CSRF_ERR_INTERNAL;
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (pthread_cond_init(&r->idle_cond, &ca) != 0) {
		pthread_condattr_destroy(&ca);
		return CSRF_ERR_INTERNAL;
	}
	pthread_condattr_destroy(&ca);
	if (pthread_mutex_init(&r->lock, NULL) != 0) {
		pthread_cond_destroy(&r->idle_cond);
		return CSRF_ERR_INTERNAL;
	}
	return CSRF_OK;
}

csrf_reason csrfi_store_redis_open(csrf_store **out, const csrfi_store_config *cfg, const csrfi_store_logger *lg)
{
	static const csrfi_store_logger none = {NULL, NULL};
	redis_store *r;
	csrf_reason res;
	rstatus st;
	int asked, reused;

	if (out == NULL || cfg == NULL || (cfg->kind != CSRF_STORE_REDIS && cfg->kind != CSRF_STORE_SENTINEL) ||
	    cfg->n_addr == 0)
		return CSRF_ERR_ARG;
	*out = NULL;
	pthread_once(&fork_hook_once, fork_hook);
	r = calloc(1, sizeof *r);
	if (r == NULL)
		return CSRF_ERR_NOMEM;
	res = init(r, cfg, lg != NULL ? lg : &none);
	if (res != CSRF_OK) {
		free(r->conns);
		free(r->idle);
		csrfi_wipe(r, sizeof *r);
		free(r);
		return res;
	}
	/* One attempt now: a wrong password or database stops the server
	 * from starting; a Redis that is not there yet does not. */
	st = ready(r, &r->conns[0], csrfi_mono_ms() + r->timeout_ms, 1, &asked, &reused);
	if (st == RS_AUTH || st == RS_DB || st == RS_UNKNOWN) {
		redis_close(&r->base);
		return CSRF_ERR_CONFIG;
	}
	*out = &r->base;
	return CSRF_OK;
}
