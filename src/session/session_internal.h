/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * session_internal.h - what the files of src/session/ (the optional
 * session part, libcsrf-session: stores and re-authentication) share and
 * callers never see. The core (the files of src/) never includes it.
 * The session part also uses the core's internal helpers (internal.h):
 * the shared libcsrf-session.so carries its own hidden copy of the few
 * it calls (CMake CSRF_SESSION_HELPERS), the static library takes them
 * from libcsrf.a.
 */
#ifndef CSRF_SESSION_INTERNAL_H
#define CSRF_SESSION_INTERNAL_H

#include "csrf_session.h"
#include "internal.h"

/* ---- build options (CMake CSRF_WITH_REDIS, CSRF_WITH_REAUTH) ----
 * A file compiled without the definitions (the fuzzers' own copies of the
 * library) gets everything. */
#ifndef CSRF_WITH_REDIS
#define CSRF_WITH_REDIS 1
#endif
#ifndef CSRF_WITH_REAUTH
#define CSRF_WITH_REAUTH 1
#endif

/* ---- stores (store.c, store_log.c, store_memory.c, store_redis.c; reauth.c) ---- */

#define CSRF_STORE_KEY_MAX 256   /* bytes of a key, before any prefix */
#define CSRF_STORE_VAL_MAX 4096  /* bytes of a value */
#define CSRF_STORE_PREFIX_MAX 64 /* bytes of a Redis key prefix */
#define CSRF_STORE_MEMORY_DEFAULT_MAX 100000
#define CSRF_STORE_MEMORY_MAX_MAX 100000000
#define CSRF_STORE_CRED_MAX 256       /* bytes of a Redis user name or password, decoded */
#define CSRF_STORE_SENTINELS_MAX 8    /* sentinel addresses in one URL */
#define CSRF_STORE_MASTER_NAME_MAX 64 /* bytes of a Sentinel master name */
#define CSRF_STORE_POOL_DEFAULT 8
/* A store call's deadline when the URL gives none. It is there for a
 * Redis that is down or hung, not for a slow scheduler: a live Redis on
 * the LAN answers in a millisecond, but a loaded server can leave a
 * process unscheduled for a few hundred (200 ms, the first default,
 * failed a healthy store's calls with 503 on a busy 2-core machine). */
#define CSRF_STORE_TIMEOUT_DEFAULT_MS 1000
#define CSRF_STORE_POOL_MAX 64
#define CSRF_STORE_LOG_MAX 256        /* bytes of a log message, with its NUL */
#define CSRF_STORE_LOG_EVERY_MS 10000 /* one message per kind of repeated event */

/* A backend. Arguments are already checked by store.c (non-NULL, key of
 * 1..CSRF_STORE_KEY_MAX bytes, value of at most CSRF_STORE_VAL_MAX). */
typedef struct {
	csrf_reason (*get)(csrf_store *st, const char *key, size_t key_len, void *buf, size_t cap, size_t *len);
	csrf_reason (*set)(csrf_store *st, const char *key, size_t key_len, const void *val, size_t val_len,
	                   uint32_t ttl_s);
	csrf_reason (*del)(csrf_store *st, const char *key, size_t key_len);
	csrf_reason (*incr)(csrf_store *st, const char *key, size_t key_len, uint32_t ttl_s, int64_t *value);
	void (*close)(csrf_store *st);
} csrfi_store_ops;

/* Where a store's events go (csrf_store_open_log); fn NULL: nowhere. */
typedef struct {
	csrf_store_log_fn fn;
	void *ud;
} csrfi_store_logger;

/* Every backend's state starts with this header. */
struct csrf_store {
	const csrfi_store_ops *ops;
	csrfi_store_logger log;
};

/* Formats one message (never a key, a value or a credential) and hands
 * it to the logger, if any. Call it with no store lock held. */
void csrfi_store_log(const csrfi_store_logger *lg, csrf_reason event, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Rate limit for one kind of repeated event: csrfi_log_limit_take answers
 * 1 when the event is to be reported now (and *skipped how many of its
 * kind were left out since the last report), 0 when it is left out. Not
 * locked: the caller holds its store's lock. */
typedef struct {
	int64_t last_ms;
	uint64_t skipped;
	int used;
} csrfi_log_limit;
int csrfi_log_limit_take(csrfi_log_limit *l, int64_t now_ms, uint64_t *skipped);

/* Monotonic milliseconds. */
int64_t csrfi_mono_ms(void);

typedef enum { CSRF_STORE_MEMORY = 1, CSRF_STORE_REDIS = 2, CSRF_STORE_SENTINEL = 3 } csrfi_store_kind;

typedef struct {
	char host[256]; /* name or address, IPv6 without brackets */
	uint16_t port;
} csrfi_store_addr;

/* A parsed store URL (store.c). Holds a password: wipe after use. */
typedef struct {
	csrfi_store_kind kind;
	size_t max_entries; /* memory */
	/* redis: the server; sentinel: the sentinels */
	csrfi_store_addr addr[CSRF_STORE_SENTINELS_MAX];
	size_t n_addr;
	char master[CSRF_STORE_MASTER_NAME_MAX + 1]; /* sentinel */
	char user[CSRF_STORE_CRED_MAX + 1];          /* "" : none (the default user) */
	char password[CSRF_STORE_CRED_MAX + 1];
	int has_password;
	unsigned db;
	char prefix[CSRF_STORE_PREFIX_MAX + 1];
	uint32_t timeout_ms;
	unsigned pool;
} csrfi_store_config;

/* Parses and validates a store URL of at most 1024 bytes; CSRF_OK or
 * CSRF_ERR_CONFIG (CSRF_ERR_ARG for NULL). */
csrf_reason csrfi_store_parse_url(const char *url, size_t len, csrfi_store_config *cfg);

csrf_reason csrfi_store_memory_open(csrf_store **out, size_t max_entries);
/* The same with an allocator for the store's memory (NULL: malloc/free);
 * copied. Used by the failing-allocator tests. */
csrf_reason csrfi_store_memory_open_with(csrf_store **out, size_t max_entries, const csrf_allocator *alloc);
/* A Redis or Sentinel store; tries to connect once (see csrf_store_open). */
csrf_reason csrfi_store_redis_open(csrf_store **out, const csrfi_store_config *cfg, const csrfi_store_logger *lg);

/* ---- the Redis store's check of a reply as it arrives (store_resp.c) ---- */

/* The largest reply accepted: a value (GET) is at most CSRF_STORE_VAL_MAX
 * bytes; ROLE, CONFIG GET, a sentinel's answer and error lines are far
 * shorter. 16 KiB. */
#define CSRF_RESP_REPLY_MAX (4 * CSRF_STORE_VAL_MAX)
/* The deepest reply the store reads: ROLE on a master,
 * [role, offset, [[ip, port, offset], ...]]. */
#define CSRF_RESP_DEPTH_MAX 3
#define CSRF_RESP_WHY_MAX 96

typedef struct {
	int state;
	char type;                             /* of the item being read: + - : $ * */
	int neg, digits;                       /* of its number */
	int64_t num;                           /* its length or element count */
	size_t total;                          /* bytes of the reply so far */
	size_t bulk_left;                      /* bytes of a string still to come */
	size_t promised;                       /* elements announced, not arrived yet */
	int depth;                             /* arrays open */
	int64_t left[CSRF_RESP_DEPTH_MAX + 1]; /* elements still due, per array */
	char why[CSRF_RESP_WHY_MAX];           /* why a reply was refused */
} csrfi_resp_scan;

/* Starts the check of one reply. */
void csrfi_resp_scan_init(csrfi_resp_scan *s);
/* Checks the next n bytes of the reply (RESP2): 0 when more are due, 1
 * when they end the reply exactly, -1 when it is refused, the reason in
 * s->why (sizes and kinds, never bytes of the reply): larger than
 * CSRF_RESP_REPLY_MAX, an array announcing more elements than the rest
 * of that could hold, arrays nested deeper than CSRF_RESP_DEPTH_MAX, a
 * malformed length, a line without CRLF, bytes after the reply, or a
 * type RESP2 does not have. Once refused or complete, every further
 * byte is refused. */
int csrfi_resp_scan_feed(csrfi_resp_scan *s, const char *p, size_t n);

/* Tests only: the memory store's clock in milliseconds (NULL: the
 * monotonic clock). st must be a memory store. */
typedef int64_t (*csrfi_store_clock_fn)(void *ud);
void csrfi_store_memory_set_clock(csrf_store *st, csrfi_store_clock_fn clock_ms, void *ud);
/* Tests only: live entries of a memory store, and how many are counters. */
size_t csrfi_store_memory_count(csrf_store *st);
size_t csrfi_store_memory_counters(csrf_store *st);

#endif /* CSRF_SESSION_INTERNAL_H */
