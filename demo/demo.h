/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * demo.h - what the files of csrf-demo share: the configuration, the
 * SQLite data layer, login sessions kept in a csrf_store, an HTML page
 * builder that escapes what it prints, and the two sites' handlers.
 */
#ifndef CSRF_DEMO_H
#define CSRF_DEMO_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>
#include <sqlite3.h>

#include "csrf_session.h"

#define DEMO_BODY_MAX (64 * 1024) /* POST bodies larger than this: 413 */
#define DEMO_SID_LEN 64           /* hex of 32 random bytes */
#define DEMO_USER_MAX 32          /* longest user name */
#define DEMO_FIELD_MAX 256        /* longest form field value we accept */
#define DEMO_SESSION_TTL (24 * 3600)
#define DEMO_THREADS 8 /* per site: libmicrohttpd's thread pool */
#define DEMO_SESSION_COOKIE "demo_sid"
/* Login throttling (csrf_ctx_set_login_policy): after 5 wrong passwords
 * from one client for one account that client waits a minute, doubling
 * up to an hour. A refused login answers 429 with Retry-After: the
 * shortest lock; a retry inside a longer one gets another 429. */
#define DEMO_LOGIN_FAILURES 5
#define DEMO_LOGIN_LOCK_S 60
#define DEMO_LOGIN_LOCK_MAX_S 3600
#define DEMO_STR_(x) #x
#define DEMO_STR(x) DEMO_STR_(x) /* a number macro as a string literal */
#define DEMO_CLIENT_KEY_MAX 64   /* "ip6:" and the longest /64 with a zone */
#define DEMO_DB_CONNS 64         /* SQLite connections: one a thread that queries */

typedef struct {
	int unprotected;
	char victim_origin[80];   /* "http://127.0.0.1:8080" */
	char attacker_origin[80]; /* "http://127.0.0.1:8081" */
	char router_origin[80];   /* "http://127.0.0.1:8082" with --router, else "" */
	int https;                /* the victim's public origin (--origin) is https:// */
	csrf_ctx *csrf;
	csrf_store *store; /* opened at start; a Redis that does not answer yet is opened by the library on use */
	/* db.c: a connection per server thread, opened by its first query */
	char *db_path;
	pthread_mutex_t db_lock;
	sqlite3 *db_conns[DEMO_DB_CONNS];
	int db_n;
	uint64_t db_gen; /* which db_open, from 1; 0 when closed */
} demo_app;

/* ---- db.c: SQLite (WAL), every state change one transaction ---- */

/* Opens (and on first start creates and fills) the database at path.
 * Returns 0 or -1 with a message on stderr. Each thread then queries
 * through a connection of its own (WAL: readers never wait for each
 * other, and a writer waits only for another writer); db_close closes
 * them all, once no server thread runs. */
int db_open(demo_app *app, const char *path);
void db_close(demo_app *app);

typedef struct {
	int64_t id;
	char name[DEMO_USER_MAX + 1];
	char pwhash[CSRF_PWHASH_LEN];
	int64_t balance;
} db_user;

/* 0 and *out filled, 1 when no such user, -1 on a database error. */
int db_user_get(demo_app *app, const char *name, size_t len, db_user *out);

typedef struct {
	int64_t id;
	char title[200];
	int64_t up, down;
} db_story;

/* Up to cap stories in id order; returns how many, -1 on error. */
int db_stories(demo_app *app, db_story *out, int cap);
/* 0 recorded, 1 no such story, -1 on error. */
int db_vote(demo_app *app, int64_t story, int64_t user_id, char type);

typedef enum { DB_XFER_OK = 0, DB_XFER_NO_FUNDS = 1, DB_XFER_ERROR = -1 } db_xfer;
db_xfer db_transfer(demo_app *app, int64_t from_id, int64_t to_id, int64_t amount);
/* Records a login (its row id, 0 when the database refused it: the
 * login must then fail) / a logout in the sessions table (no session id
 * kept). */
int64_t db_login_record(demo_app *app, int64_t user_id);
void db_logout_record(demo_app *app, int64_t row);

typedef struct {
	char from[DEMO_USER_MAX + 1];
	char to[DEMO_USER_MAX + 1];
	int64_t amount;
} db_xfer_row;
/* The newest transfers that involve user_id; count, -1 on error. */
int db_transfers_of(demo_app *app, int64_t user_id, db_xfer_row *out, int cap);
/* Names of all users but user_id; count, -1 on error. */
int db_other_users(demo_app *app, int64_t user_id, char (*out)[DEMO_USER_MAX + 1], int cap);

/* The /api/state JSON into b. 0 or -1. */
struct page;
int db_state_json(demo_app *app, struct page *b);

/* ---- session.c: login sessions in the store under "sess:<id>" ---- */

typedef struct {
	char sid[DEMO_SID_LEN + 1];
	char user[DEMO_USER_MAX + 1]; /* "" : anonymous pre-session */
	int64_t user_id;
	int64_t row; /* sessions table row, 0 when anonymous */
	uint8_t secret[CSRF_SECRET_LEN];
} demo_session;

/* Loads the session named by the request's cookie. 0 found, 1 none (or
 * expired or garbled), -1 the store failed. */
int session_load(demo_app *app, const char *cookie, size_t cookie_len, demo_session *s);
/* A new session (fresh id and secret) for user ("" anonymous), stored.
 * CSRF_OK, or why not: the store's answer (CSRF_STORE_UNAVAILABLE,
 * CSRF_STORE_FULL, ...) or CSRF_ERR_* of the session's own making. */
csrf_reason session_create(demo_app *app, const char *user, int64_t user_id, int64_t row, demo_session *s);
void session_delete(demo_app *app, const demo_session *s);
/* The session cookie's name: "__Host-demo_sid" when the victim's origin
 * is HTTPS (Secure, Path=/, no Domain: a cookie another port or a sibling
 * host sets cannot take its place), "demo_sid" over plain HTTP. */
const char *session_cookie_name(const demo_app *app);
/* The Set-Cookie value for the session's cookie (or an expiring one when
 * s is NULL) into out. 0 or -1. */
int session_cookie(const demo_app *app, const demo_session *s, char *out, size_t cap);
void session_wipe(demo_session *s);

/* ---- page.c: growing output buffers, escaping, sending a page ---- */

struct page {
	char *p;
	size_t len, cap;
	int failed;
};
typedef struct page page;

void page_init(page *b);
void page_free(page *b);
/* page_free after zeroing the bytes (a page that held a token). */
void page_wipe(page *b);
void page_add(page *b, const char *s);
void page_addn(page *b, const char *s, size_t n);
void page_printf(page *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Text-node and attribute escaping through csrf_html_escape(_attr). */
void page_text(page *b, const char *s, size_t n);
void page_attr(page *b, const char *s, size_t n);
/* A page's start, through its <title> ("TITLE - SITE", escaped): the
 * rest of <head> is the caller's. */
void page_head(page *b, const char *title, const char *site);
/* Queues body (owned: freed here) with status, Content-Type ctype (NULL:
 * none) and the given headers (a NULL-terminated list of at most
 * DEMO_HEADERS_MAX name, value pairs), beside X-Content-Type-Options:
 * nosniff and Cache-Control: no-store. With ctx and req (the request
 * answered) set, through the library's response exchange (csrf.h), as
 * csrf-cgi and the nginx module answer: the library says which pages get
 * tokens, judges every header and names those it adds (the secret
 * cookie, Vary, the cache rule, the form-action policy), injects the
 * tokens, and its log line is printed. ctx NULL: the body goes out as it
 * is (the attacker site, --unprotected). */
#define DEMO_HEADERS_MAX 16
enum MHD_Result demo_respond(struct MHD_Connection *c, const csrf_ctx *ctx, csrf_request *req, unsigned status,
                             const char *ctype, page *body, const char *const *headers);

/* ---- parse.c: what the demo parses itself ---- */

/* 1 when s[0..n) is valid UTF-8 (no overlong forms, surrogates or code
 * points past U+10FFFF) without C0 controls other than tab, CR and LF and
 * without DEL. */
int demo_utf8_ok(const char *s, size_t n);
/* A decimal integer 1..max without sign, leading zero or other
 * characters, at most 12 digits. 0 and *out, or -1. */
int demo_parse_positive(const char *s, size_t len, int64_t max, int64_t *out);
/* "IPV4:PORT" into an address and its origin "http://IPV4:PORT". 0 or -1. */
struct sockaddr_in;
int demo_parse_listen(const char *arg, size_t len, struct sockaddr_in *sa, char *origin, size_t cap);
/* 1 when s is a session id: DEMO_SID_LEN lower-case hex characters. */
int demo_sid_ok(const char *s, size_t len);
/* Lower-case hex of n bytes and a NUL into out (2n + 1 bytes). */
void demo_hex_encode(const uint8_t *in, size_t n, char *out);
/* Exactly 2n lower-case hex characters into n bytes. 0 or -1. */
int demo_hex_decode(const char *in, size_t len, uint8_t *out, size_t n);
/* The store record of a session, "v1 USER_ID ROW USER SECRET_HEX" (USER
 * "-" for a pre-session), into out; its length, or -1 when it does not
 * fit or the user name is not [a-z0-9_-]. parse reads one back into s
 * (user, ids, secret; not sid): 0, or -1 with the secret wiped. */
int demo_record_format(const demo_session *s, char *out, size_t cap);
int demo_record_parse(const char *rec, size_t len, demo_session *s);
/* A header value made fit for a log line, into out (cap >= 2 bytes):
 * "-" when absent (s NULL), else at most cap - 1 bytes of it with every
 * byte outside printable ASCII (space included) replaced by '?'; with
 * url set it stops at the first '?' or '#', so no query or fragment (which
 * may carry a secret) reaches the log. Returns the length written. */
size_t demo_log_value(const char *s, size_t n, int url, char *out, size_t cap);
/* The login throttle's client key for a client address in text (as
 * inet_ntop writes it; IPv6 may carry a "%ZONE" of [A-Za-z0-9._-], at
 * most 15 bytes) into out (cap >= DEMO_CLIENT_KEY_MAX): "ip4:A.B.C.D";
 * "ip6:PREFIX::/64" for IPv6, since one host holds a whole /64 and could
 * otherwise take a new key per guess; an IPv4-mapped IPv6 address is its
 * IPv4 key; a link-local address keeps its zone ("ip6:fe80::/64%eth0":
 * every client of that link shares one key, as they share the /64). An
 * address that does not parse (garbage, a zone on IPv4 or a zone that is
 * not a name) gets "unknown": all such clients share one throttle, strict
 * rather than unlimited. Returns the key's length; 0 when cap is too
 * small. */
size_t demo_client_key(const char *addr, size_t len, char *out, size_t cap);

/* Zeroes memory in a way the compiler keeps. */
void demo_wipe(void *p, size_t n);

/* ---- victim.c / attacker.c: the two sites ---- */

typedef struct {
	page body;
	size_t body_len;
	int too_large;
	int started;
} demo_req;

enum MHD_Result victim_handle(demo_app *app, struct MHD_Connection *c, const char *url, const char *method,
                              demo_req *r);
enum MHD_Result attacker_handle(demo_app *app, struct MHD_Connection *c, const char *url, const char *method);

/* ---- router.c: the router (busybox httpd, CGI behind csrf-cgi) ---- */

/* Starts it on listen ("IPV4:PORT") and sets app->router_origin (origin,
 * the --router-origin, when not NULL; else http:// and listen); 0, or
 * -1 with a message. router_stop ends it and removes its files (safe to
 * call when it never started). */
int router_start(demo_app *app, const char *listen, const char *origin);
void router_stop(void);

#endif /* CSRF_DEMO_H */
