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

static const char hexdig[] = "0123456789abcdef";

static void hex_encode(const uint8_t *in, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hexdig[in[i] >> 4];
		out[2 * i + 1] = hexdig[in[i] & 15];
	}
	out[2 * n] = '\0';
}

static int hex_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static int hex_decode(const char *in, size_t len, uint8_t *out, size_t n)
{
	if (len != 2 * n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int hi = hex_val(in[2 * i]), lo = hex_val(in[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

static size_t sess_key(const char *sid, char *key, size_t cap)
{
	int n = snprintf(key, cap, "sess:%s", sid);
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* Next space-separated word of the record; NULL at its end. */
static const char *word(const char **p, const char *end, size_t *len)
{
	const char *s = *p;
	while (s < end && *s == ' ')
		s++;
	const char *e = s;
	while (e < end && *e != ' ')
		e++;
	*p = e;
	*len = (size_t)(e - s);
	return *len ? s : NULL;
}

static int parse_int(const char *s, size_t len, int64_t *out)
{
	int64_t v = 0;
	if (len == 0 || len > 18)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

/* Record: "v1 USER_ID ROW USER SECRET_HEX", USER "-" when anonymous. */
static int parse_record(const char *rec, size_t len, demo_session *s)
{
	const char *p = rec, *end = rec + len, *w;
	size_t n;
	if ((w = word(&p, end, &n)) == NULL || n != 2 || memcmp(w, "v1", 2) != 0)
		return -1;
	if ((w = word(&p, end, &n)) == NULL || parse_int(w, n, &s->user_id) != 0)
		return -1;
	if ((w = word(&p, end, &n)) == NULL || parse_int(w, n, &s->row) != 0)
		return -1;
	if ((w = word(&p, end, &n)) == NULL || n > DEMO_USER_MAX)
		return -1;
	if (n == 1 && w[0] == '-') {
		s->user[0] = '\0';
	} else {
		memcpy(s->user, w, n);
		s->user[n] = '\0';
	}
	if ((w = word(&p, end, &n)) == NULL || hex_decode(w, n, s->secret, CSRF_SECRET_LEN) != 0)
		return -1;
	if (word(&p, end, &n) != NULL)
		return -1;
	return 0;
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
	if (v.len != DEMO_SID_LEN)
		return 1;
	for (size_t i = 0; i < v.len; i++)
		if (hex_val(v.ptr[i]) < 0)
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
	int bad = parse_record(rec, rec_len, s);
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
	char key[16 + DEMO_SID_LEN], rec[RECORD_MAX], secret_hex[2 * CSRF_SECRET_LEN + 1];
	memset(s, 0, sizeof *s);
	if (strlen(user) > DEMO_USER_MAX)
		return -1;
	if (csrf_random(id, sizeof id) != CSRF_OK || csrf_secret_new(s->secret) != CSRF_OK)
		return -1;
	hex_encode(id, sizeof id, s->sid);
	snprintf(s->user, sizeof s->user, "%s", user);
	s->user_id = user_id;
	s->row = row;
	hex_encode(s->secret, CSRF_SECRET_LEN, secret_hex);
	int n = snprintf(rec, sizeof rec, "v1 %lld %lld %s %s", (long long)user_id, (long long)row,
	                 user[0] ? user : "-", secret_hex);
	demo_wipe(secret_hex, sizeof secret_hex);
	size_t klen = sess_key(s->sid, key, sizeof key);
	csrf_reason r = CSRF_ERR_BUFFER;
	if (n > 0 && (size_t)n < sizeof rec)
		r = csrf_store_set(app->store, key, klen, rec, (size_t)n, DEMO_SESSION_TTL);
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
	/* A store that fails here lets the record expire by its TTL. */
	if (klen && csrf_store_del(app->store, key, klen) != CSRF_OK)
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

void demo_wipe(void *p, size_t n)
{
	volatile unsigned char *v = p;
	while (n--)
		*v++ = 0;
}
