/*
 * session.c - csrf-demo's login sessions. A session is a random id in the
 * demo_sid cookie and a small record in the csrf_store under "sess:<id>":
 * the user (empty for an anonymous pre-session), the user's row ids and the
 * session's CSRF secret. Keeping it in the store, not in this process, is
 * what lets several demo instances share sessions through Redis.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "demo.h"

#define RECORD_MAX 256
#define STORE_RETRY_MS 1000

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

csrf_store *demo_store(demo_app *app)
{
	pthread_mutex_lock(&app->store_lock);
	if (app->store == NULL && app->store_url != NULL && mono_ms() >= app->store_retry_ms) {
		csrf_store *st = NULL;
		if (csrf_store_open(&st, app->store_url) == CSRF_OK) {
			app->store = st;
			printf("store opened: sessions and unsafe requests are served again\n");
		} else {
			app->store_retry_ms = mono_ms() + STORE_RETRY_MS;
		}
	}
	csrf_store *st = app->store;
	pthread_mutex_unlock(&app->store_lock);
	return st;
}

static size_t sess_key(const char *sid, char *key, size_t cap)
{
	int n = snprintf(key, cap, "sess:%s", sid);
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

int session_load(demo_app *app, const char *cookie, size_t cookie_len, demo_session *s)
{
	csrf_slice v;
	char key[16 + DEMO_SID_LEN], rec[RECORD_MAX];
	size_t rec_len = 0;
	memset(s, 0, sizeof *s);
	if (cookie == NULL)
		return 1;
	if (csrf_cookie_get(cookie, cookie_len, DEMO_SESSION_COOKIE, strlen(DEMO_SESSION_COOKIE), &v) != CSRF_OK)
		return 1;
	if (!demo_sid_ok(v.ptr, v.len))
		return 1;
	memcpy(s->sid, v.ptr, v.len);
	s->sid[v.len] = '\0';
	size_t klen = sess_key(s->sid, key, sizeof key);
	csrf_store *st = demo_store(app);
	csrf_reason r = st ? csrf_store_get(st, key, klen, rec, sizeof rec, &rec_len) : CSRF_STORE_UNAVAILABLE;
	if (r == CSRF_NOT_FOUND || r == CSRF_ERR_BUFFER) {
		session_wipe(s);
		return 1;
	}
	if (r != CSRF_OK) {
		session_wipe(s);
		return -1;
	}
	int bad = demo_record_parse(rec, rec_len, s);
	demo_wipe(rec, sizeof rec);
	if (bad) {
		session_wipe(s);
		return 1;
	}
	return 0;
}

int session_create(demo_app *app, const char *user, int64_t user_id, int64_t row, demo_session *s)
{
	uint8_t id[DEMO_SID_LEN / 2];
	char key[16 + DEMO_SID_LEN], rec[RECORD_MAX];
	memset(s, 0, sizeof *s);
	if (strlen(user) > DEMO_USER_MAX)
		return -1;
	if (csrf_random(id, sizeof id) != CSRF_OK || csrf_secret_new(s->secret) != CSRF_OK)
		return -1;
	demo_hex_encode(id, sizeof id, s->sid);
	snprintf(s->user, sizeof s->user, "%s", user);
	s->user_id = user_id;
	s->row = row;
	int n = demo_record_format(s, rec, sizeof rec);
	size_t klen = sess_key(s->sid, key, sizeof key);
	csrf_reason r = CSRF_ERR_BUFFER;
	csrf_store *st = demo_store(app);
	if (st == NULL)
		r = CSRF_STORE_UNAVAILABLE;
	else if (n > 0 && klen)
		r = csrf_store_set(st, key, klen, rec, (size_t)n, DEMO_SESSION_TTL);
	demo_wipe(rec, sizeof rec);
	if (r != CSRF_OK) {
		session_wipe(s);
		return -1;
	}
	return 0;
}

void session_delete(demo_app *app, const demo_session *s)
{
	char key[16 + DEMO_SID_LEN];
	size_t klen = sess_key(s->sid, key, sizeof key);
	csrf_store *st = demo_store(app);
	/* A store that fails here lets the record expire by its TTL. */
	if (st && klen && csrf_store_del(st, key, klen) != CSRF_OK)
		return;
}

int session_cookie(const demo_session *s, char *out, size_t cap)
{
	csrf_cookie_opts o = {0};
	size_t len = 0;
	o.http_only = 1;
	o.same_site = CSRF_SAMESITE_LAX;
	o.path = "/";
	o.max_age = s ? 0 : -1;
	const char *v = s ? s->sid : "x";
	return csrf_set_cookie_build(DEMO_SESSION_COOKIE, v, strlen(v), &o, out, cap, &len) == CSRF_OK ? 0 : -1;
}

void session_wipe(demo_session *s)
{
	demo_wipe(s, sizeof *s);
}
