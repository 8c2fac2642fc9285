/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * session.c - csrf-demo's login sessions. A session is a random id in the
 * demo_sid cookie and a small record in the csrf_store under "sess:<id>":
 * the user (empty for an anonymous pre-session), the user's row ids and the
 * session's CSRF secret. Keeping it in the store, not in this process, is
 * what lets several demo instances share sessions through Redis.
 */
#include <stdio.h>
#include <string.h>

#include "demo.h"

#define RECORD_MAX 256
#define HOST_COOKIE "__Host-" DEMO_SESSION_COOKIE

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
	const char *name = session_cookie_name(app);
	if (csrf_cookie_get(cookie, cookie_len, name, strlen(name), &v) != CSRF_OK)
		return 1;
	if (!demo_sid_ok(v.ptr, v.len))
		return 1;
	memcpy(s->sid, v.ptr, v.len);
	s->sid[v.len] = '\0';
	size_t klen = sess_key(s->sid, key, sizeof key);
	csrf_reason r = csrf_store_get(app->store, key, klen, rec, sizeof rec, &rec_len);
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

csrf_reason session_create(demo_app *app, const char *user, int64_t user_id, int64_t row, demo_session *s)
{
	uint8_t id[DEMO_SID_LEN / 2];
	char key[16 + DEMO_SID_LEN], rec[RECORD_MAX];
	memset(s, 0, sizeof *s);
	if (strlen(user) > DEMO_USER_MAX)
		return CSRF_ERR_ARG;
	if (csrf_random(id, sizeof id) != CSRF_OK || csrf_secret_new(s->secret) != CSRF_OK)
		return CSRF_ERR_RANDOM;
	demo_hex_encode(id, sizeof id, s->sid);
	snprintf(s->user, sizeof s->user, "%s", user);
	s->user_id = user_id;
	s->row = row;
	int n = demo_record_format(s, rec, sizeof rec);
	size_t klen = sess_key(s->sid, key, sizeof key);
	csrf_reason r = CSRF_ERR_BUFFER;
	if (n > 0 && klen)
		r = csrf_store_set(app->store, key, klen, rec, (size_t)n, DEMO_SESSION_TTL);
	demo_wipe(rec, sizeof rec);
	if (r != CSRF_OK)
		session_wipe(s);
	return r;
}

void session_delete(demo_app *app, const demo_session *s)
{
	char key[16 + DEMO_SID_LEN];
	size_t klen = sess_key(s->sid, key, sizeof key);
	/* A store that fails here lets the record expire by its TTL. */
	if (klen && csrf_store_del(app->store, key, klen) != CSRF_OK)
		return;
}

const char *session_cookie_name(const demo_app *app)
{
	return app->https ? HOST_COOKIE : DEMO_SESSION_COOKIE;
}

int session_cookie(const demo_app *app, const demo_session *s, char *out, size_t cap)
{
	csrf_cookie_opts o = {0};
	size_t len = 0;
	/* The library adds the prefix ("__Host-" needs Secure and Path=/,
	 * and it never writes a Domain). */
	o.secure = app->https;
	o.host_prefix = app->https;
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
