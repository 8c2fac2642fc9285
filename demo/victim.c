/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * victim.c - the victim site of csrf-demo: a story-voting page and a small
 * bank on one origin. Protected (the default), every unsafe request goes
 * through csrf_check with the session's secret, every page carries the
 * token (the site writes none: its answers go through the library's
 * response exchange, demo_respond), GET never changes state, and a
 * transfer needs the password again (csrf_reauth). With --unprotected all of that is off, so the attacker
 * site's pages visibly work. Every page escapes what it prints and sends a
 * Content-Security-Policy; none has inline script. While the session store
 * does not answer, pages are still served (to everybody as signed out) and
 * unsafe requests fail closed with 503 "store unavailable".
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "demo.h"

#define CSP "default-src 'self'"

typedef struct {
	demo_app *app;
	struct MHD_Connection *c;
	const char *url;
	const char *method;
	demo_req *r;
	demo_session sess;
	int have_sess;
	int store_down;                       /* the store failed: pages without a session, unsafe requests refused */
	char set_cookie[512];                 /* "" : none */
	csrf_request req;                     /* the request as libcsrf reads it */
	char retry_token[CSRF_TOKEN_LEN + 1]; /* --retry-token: X-CSRF-Token of a 403, "" none */
} vreq;

/* ---- request helpers ---- */

static csrf_slice header(struct MHD_Connection *c, const char *name)
{
	csrf_slice s = {NULL, 0};
	const char *v = NULL;
	size_t n = 0;
	if (MHD_lookup_connection_value_n(c, MHD_HEADER_KIND, name, strlen(name), &v, &n) == MHD_YES && v != NULL) {
		s.ptr = v;
		s.len = n;
	}
	return s;
}

static enum MHD_Result file_header(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                                   const char *value, size_t value_size)
{
	(void)kind;
	csrf_request_header(cls, key, key_size, value, value_size);
	return MHD_YES;
}

/* The request as libcsrf reads it: method, target, scheme, every header
 * by name, the body; the session's secret when there is a session (an
 * anonymous visitor's secret travels in the library's signed cookie). */
static void build_request(vreq *v)
{
	csrf_request *q = &v->req;
	csrf_request_init(q);
	q->method.ptr = v->method;
	q->method.len = strlen(v->method);
	q->target.ptr = v->url;
	q->target.len = strlen(v->url);
	/* The scheme the browser used: https when TLS ends in front of the
	 * demo (--origin https://...), configured, never guessed. */
	q->scheme.ptr = v->app->https ? "https" : "http";
	q->scheme.len = v->app->https ? 5 : 4;
	MHD_get_connection_values_n(v->c, MHD_HEADER_KIND, file_header, q);
	q->body.ptr = v->r->body.p ? v->r->body.p : "";
	q->body.len = v->r->body.len;
	if (v->have_sess) {
		q->secret = v->sess.secret;
		q->session_id.ptr = v->sess.sid;
		q->session_id.len = strlen(v->sess.sid);
	} else {
		q->secret = NULL;
		q->session_id.ptr = "";
		q->session_id.len = 0;
	}
}

static void client_ip(struct MHD_Connection *c, char *out, size_t cap)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	snprintf(out, cap, "?");
	if (ci == NULL || ci->client_addr == NULL)
		return;
	const struct sockaddr *sa = ci->client_addr;
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, out, (socklen_t)cap);
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, out, (socklen_t)cap);
}

/* The login throttle's key for this client: its address, an IPv6 one
 * reduced to its /64 (demo_client_key). getnameinfo writes a link-local
 * address with its zone. */
static size_t client_key(struct MHD_Connection *c, char *out, size_t cap)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	char host[NI_MAXHOST];
	const struct sockaddr *sa = ci != NULL ? ci->client_addr : NULL;
	socklen_t len = sa == NULL                  ? 0
	                : sa->sa_family == AF_INET  ? (socklen_t)sizeof(struct sockaddr_in)
	                : sa->sa_family == AF_INET6 ? (socklen_t)sizeof(struct sockaddr_in6)
	                                            : 0;
	if (len == 0 || getnameinfo(sa, len, host, sizeof host, NULL, 0, NI_NUMERICHOST) != 0)
		return demo_client_key(NULL, 0, out, cap);
	return demo_client_key(host, strlen(host), out, cap);
}

/* The log line of a rejected request. The path is printed with anything
 * outside printable ASCII replaced; no header, cookie or field value is. */
static void log_reject(vreq *v, const char *reason)
{
	char ip[INET6_ADDRSTRLEN + 1], path[101];
	size_t i = 0;
	client_ip(v->c, ip, sizeof ip);
	for (const char *p = v->url; *p && i < sizeof path - 1; p++)
		path[i++] = (*p > 0x20 && *p < 0x7f) ? *p : '?';
	path[i] = '\0';
	char m[16];
	i = 0;
	for (const char *p = v->method; *p && i < sizeof m - 1; p++)
		m[i++] = (*p >= 'A' && *p <= 'Z') ? *p : '?';
	m[i] = '\0';
	printf("rejected %s %s from %s: %s\n", m, path, ip, reason);
	fflush(stdout);
}

static int is_method(vreq *v, const char *m)
{
	return strcmp(v->method, m) == 0;
}

static int is_get(vreq *v)
{
	return is_method(v, "GET") || is_method(v, "HEAD");
}

static int load_session(vreq *v)
{
	csrf_slice ck = header(v->c, "Cookie");
	int r = session_load(v->app, ck.ptr, ck.len, &v->sess);
	v->have_sess = r == 0;
	v->store_down = r < 0;
	return r;
}

static void set_session_cookie(vreq *v, const demo_session *s)
{
	if (session_cookie(v->app, s, v->set_cookie, sizeof v->set_cookie) != 0)
		v->set_cookie[0] = '\0';
}

static int logged_in(const vreq *v)
{
	return v->have_sess && v->sess.user[0] != '\0';
}

/* ---- responses ---- */

/* Every answer of the site: protected, through the library's response
 * exchange for the request as it stands now (a login's new session),
 * which puts the tokens into the page (the csrf-param and csrf-token
 * meta, a hidden field in each form that posts here) and sets the secret
 * cookie an anonymous visitor's tokens rest on. */
static enum MHD_Result respond(vreq *v, unsigned status, const char *ctype, page *b, const char *const *headers)
{
	if (v->app->unprotected)
		return demo_respond(v->c, NULL, NULL, status, ctype, b, headers);
	build_request(v);
	return demo_respond(v->c, v->app->csrf, &v->req, status, ctype, b, headers);
}

static enum MHD_Result send_page(vreq *v, unsigned status, page *b, const char *location, const char *allow)
{
	const char *h[2 * DEMO_HEADERS_MAX + 1];
	int n = 0;
	h[n++] = "Content-Security-Policy";
	h[n++] = CSP;
	h[n++] = "X-Frame-Options";
	h[n++] = "DENY";
	if (v->set_cookie[0]) {
		h[n++] = "Set-Cookie";
		h[n++] = v->set_cookie;
	}
	if (location) {
		h[n++] = "Location";
		h[n++] = location;
	}
	if (allow) {
		h[n++] = "Allow";
		h[n++] = allow;
	}
	if (status == 503 || status == 429) {
		h[n++] = "Retry-After";
		h[n++] = status == 503 ? "1" : DEMO_STR(DEMO_LOGIN_LOCK_S);
	}
	if (v->retry_token[0]) {
		h[n++] = CSRF_HEADER_NAME;
		h[n++] = v->retry_token;
	}
	h[n] = NULL;
	return respond(v, status, "text/html; charset=utf-8", b, h);
}

static void frame_open(vreq *v, page *b, const char *title)
{
	page_head(b, title, "csrf-demo");
	page_add(b, "<link rel=\"stylesheet\" href=\"/style.css\"></head>\n<body><header><a class=\"brand\" "
	            "href=\"/\">Daily Vote &amp; Bank</a> ");
	if (v->app->unprotected)
		page_add(b, "<span class=\"mode off\" id=\"mode\">UNPROTECTED</span>");
	else
		page_add(b, "<span class=\"mode on\" id=\"mode\">protected by libcsrf</span>");
	page_add(b, "<nav>");
	if (logged_in(v)) {
		page_add(b, "signed in as <b id=\"whoami\">");
		page_text(b, v->sess.user, strlen(v->sess.user));
		page_add(b, "</b> <a href=\"/account\">account</a> ");
		page_add(b, "<form class=\"inline\" method=\"post\" action=\"/logout\">");
		page_add(b, "<button id=\"logout\">log out</button></form>");
	} else {
		page_add(b, "<span id=\"whoami\"></span><a href=\"/login\">log in</a>");
	}
	page_add(b, "</nav></header>\n<main>");
}

static void frame_close(page *b)
{
	page_add(b, "</main></body></html>\n");
}

/* While the store is down pages say why signing in and voting fail. */
static void store_notice(vreq *v, page *b)
{
	if (!v->store_down)
		return;
	page_add(b, "<p class=\"notice\" id=\"store-notice\">The session store is unavailable: you appear signed "
	            "out, and signing in, voting and transfers are refused until it is back.</p>");
}

static int is_post_route(const char *url)
{
	return strcmp(url, "/vote") == 0 || strcmp(url, "/login") == 0 || strcmp(url, "/logout") == 0 ||
	       strcmp(url, "/transfer") == 0;
}

/* A rejection page naming the reason; every 4xx but 404 is logged. */
static enum MHD_Result reject(vreq *v, unsigned status, const char *reason, const char *why)
{
	page b;
	page_init(&b);
	if (status != 404)
		log_reject(v, reason);
	frame_open(v, &b, "Request rejected");
	page_add(&b, "<h1>Request rejected</h1><p class=\"reason\">Reason: <strong id=\"reason\">");
	page_text(&b, reason, strlen(reason));
	page_add(&b, "</strong></p><p>");
	page_text(&b, why, strlen(why));
	page_add(&b, " Nothing was changed.</p><p><a href=\"/\">Back to the stories</a></p>");
	frame_close(&b);
	const char *allow = NULL;
	if (status == 405)
		allow = is_post_route(v->url) ? "POST" : "GET, HEAD";
	return send_page(v, status, &b, NULL, allow);
}

/* 503 when the store failed (down, or full and refusing to evict a
 * security counter): the request may work later; else 403. */
static unsigned store_status(csrf_reason r)
{
	return r == CSRF_STORE_UNAVAILABLE || r == CSRF_STORE_FULL ? 503 : 403;
}

static enum MHD_Result reject_csrf(vreq *v, unsigned status, csrf_reason r)
{
	/* The demo's own policy words for re-authentication; the library's
	 * advice for everything else. */
	const char *why = r == CSRF_REAUTH_REQUIRED ? "Moving money needs your password again."
	                  : r == CSRF_REAUTH_FAILED ? "Wrong password: nothing was transferred."
	                  : r == CSRF_LOCKED_OUT    ? "Too many wrong passwords: the account is locked for 15 minutes, "
	                                              "even for the right password."
	                                            : csrf_reason_advice(r);
	/* --retry-token: the library says when a fresh token may go back */
	csrf_page fresh;
	if (!v->app->unprotected && csrf_retry_prepare(v->app->csrf, &v->req, r, &fresh) == CSRF_OK)
		memcpy(v->retry_token, fresh.token, sizeof v->retry_token);
	csrf_page_wipe(&fresh);
	return reject(v, status, csrf_reason_str(r), why);
}

static enum MHD_Result redirect(vreq *v, const char *to)
{
	page b;
	page_init(&b);
	page_add(&b, "<!doctype html><title>See other</title><a href=\"");
	page_attr(&b, to, strlen(to));
	page_add(&b, "\">continue</a>\n");
	return send_page(v, 303, &b, to, NULL);
}

/* ---- form fields ---- */

/* Reads field name from the body into out. 0 found, 1 absent, -1 malformed
 * (bad encoding, too long, invalid UTF-8). */
static int field(vreq *v, const char *name, char *out, size_t cap, size_t *len)
{
	csrf_slice ct = header(v->c, "Content-Type");
	const char *body = v->r->body.p ? v->r->body.p : "";
	size_t blen = v->r->body.len;
	/* Lax old frameworks read any body as a form; unprotected does too,
	 * which is what makes the text/plain attack work there. */
	static const char urlenc[] = "application/x-www-form-urlencoded";
	if (v->app->unprotected && (ct.ptr == NULL || (ct.len >= 10 && strncasecmp(ct.ptr, "text/plain", 10) == 0))) {
		ct.ptr = urlenc;
		ct.len = sizeof urlenc - 1;
	}
	if (ct.ptr == NULL)
		return 1;
	csrf_reason r = csrf_body_field(ct.ptr, ct.len, body, blen, name, strlen(name), out, cap, len);
	if (r == CSRF_NOT_FOUND)
		return 1;
	if (r != CSRF_OK)
		return -1;
	if (!demo_utf8_ok(out, *len))
		return -1;
	return 0;
}

/* ---- the CSRF decision for unsafe requests ---- */

/* 0 when the request may go on; otherwise the 403 is already queued
 * into *ret. Unprotected: always 0. */
static int guard(vreq *v, enum MHD_Result *ret)
{
	if (v->app->unprotected)
		return 0;
	build_request(v);
	csrf_result res = csrf_check(v->app->csrf, &v->req);
	if (res.allowed)
		return 0;
	*ret = reject_csrf(v, csrf_reason_http_status(res.reason, 403), res.reason);
	return -1;
}

/* ---- pages ---- */

static enum MHD_Result page_home(vreq *v)
{
	db_story st[16];
	page b;
	/* Without the store the page is served to an anonymous visitor with
	 * no token: reading goes on, acting waits for the store. */
	int n = db_stories(v->app, st, 16);
	if (n < 0)
		return reject(v, 500, "database error", "Try again later.");
	page_init(&b);
	frame_open(v, &b, "Stories");
	store_notice(v, &b);
	page_add(&b, "<h1>Today's stories</h1><ol class=\"stories\">");
	for (int i = 0; i < n; i++) {
		page_printf(&b, "<li id=\"story-%lld\"><span class=\"score\" id=\"score-%lld\">+%lld / -%lld</span> ",
		            (long long)st[i].id, (long long)st[i].id, (long long)st[i].up, (long long)st[i].down);
		page_add(&b, "<span class=\"title\">");
		page_text(&b, st[i].title, strlen(st[i].title));
		page_add(&b, "</span>");
		if (logged_in(v)) {
			page_add(&b, "<form class=\"inline\" method=\"post\" action=\"/vote\">");
			page_printf(&b,
			            "<input type=\"hidden\" name=\"story\" value=\"%lld\">"
			            "<button name=\"type\" value=\"y\" id=\"vote-%lld-y\">up</button>"
			            "<button name=\"type\" value=\"n\" id=\"vote-%lld-n\">down</button></form>",
			            (long long)st[i].id, (long long)st[i].id, (long long)st[i].id);
		}
		page_add(&b, "</li>");
	}
	page_add(&b, "</ol>");
	if (!logged_in(v)) {
		page_add(&b, "<h2>Log in to vote</h2><form method=\"post\" action=\"/login\">");
		page_add(
		    &b,
		    "<label>user <input name=\"user\" id=\"login-user\" autocomplete=\"username\"></label> "
		    "<label>password <input name=\"password\" type=\"password\" id=\"login-password\" "
		    "autocomplete=\"current-password\"></label> <button id=\"login-submit\">log in</button></form>");
	}
	page_printf(&b, "<p class=\"hint\">The attacker's site is at <a href=\"%s/\">%s/</a>.</p>",
	            v->app->attacker_origin, v->app->attacker_origin);
	frame_close(&b);
	return send_page(v, 200, &b, NULL, NULL);
}

static enum MHD_Result page_login(vreq *v)
{
	page b;
	page_init(&b);
	frame_open(v, &b, "Log in");
	store_notice(v, &b);
	page_add(&b, "<h1>Log in</h1><form method=\"post\" action=\"/login\">");
	page_add(&b, "<p><label>user <input name=\"user\" id=\"login-user\" autocomplete=\"username\"></label></p>"
	             "<p><label>password <input name=\"password\" type=\"password\" id=\"login-password\" "
	             "autocomplete=\"current-password\"></label></p><p><button id=\"login-submit\">log in</button></p>"
	             "</form>");
	frame_close(&b);
	return send_page(v, 200, &b, NULL, NULL);
}

static enum MHD_Result page_account(vreq *v)
{
	db_user u;
	db_xfer_row xs[10];
	char others[8][DEMO_USER_MAX + 1];
	page b;
	if (!logged_in(v))
		return redirect(v, "/login");
	if (db_user_get(v->app, v->sess.user, strlen(v->sess.user), &u) != 0)
		return reject(v, 500, "database error", "Try again later.");
	int nx = db_transfers_of(v->app, u.id, xs, 10);
	int no = db_other_users(v->app, u.id, others, 8);
	if (nx < 0 || no < 0)
		return reject(v, 500, "database error", "Try again later.");
	page_init(&b);
	frame_open(v, &b, "Account");
	page_add(&b, "<h1>Account of ");
	page_text(&b, u.name, strlen(u.name));
	page_printf(&b, "</h1><p>Balance: <strong id=\"balance\">%lld</strong> coins</p>", (long long)u.balance);
	page_add(&b, "<h2>Transfer</h2><form method=\"post\" action=\"/transfer\">");
	page_add(&b, "<p><label>to <select name=\"to\" id=\"transfer-to\">");
	for (int i = 0; i < no; i++) {
		page_add(&b, "<option value=\"");
		page_attr(&b, others[i], strlen(others[i]));
		page_add(&b, "\">");
		page_text(&b, others[i], strlen(others[i]));
		page_add(&b, "</option>");
	}
	page_add(&b, "</select></label> <label>amount <input name=\"amount\" id=\"transfer-amount\" "
	             "inputmode=\"numeric\"></label></p>");
	if (!v->app->unprotected)
		page_add(&b, "<p><label>your password, again <input name=\"password\" type=\"password\" "
		             "id=\"transfer-password\" autocomplete=\"current-password\"></label></p>");
	page_add(&b, "<p><button id=\"transfer-submit\">transfer</button></p></form><h2>Recent transfers</h2><ul "
	             "id=\"transfers\">");
	for (int i = 0; i < nx; i++) {
		page_add(&b, "<li>");
		page_text(&b, xs[i].from, strlen(xs[i].from));
		page_printf(&b, " &rarr; ");
		page_text(&b, xs[i].to, strlen(xs[i].to));
		page_printf(&b, ": %lld</li>", (long long)xs[i].amount);
	}
	page_add(&b, "</ul>");
	frame_close(&b);
	demo_wipe(u.pwhash, sizeof u.pwhash);
	return send_page(v, 200, &b, NULL, NULL);
}

static enum MHD_Result page_state(vreq *v)
{
	page b;
	page_init(&b);
	if (db_state_json(v->app, &b) != 0) {
		page_free(&b);
		page_add(&b, "{\"error\":\"database\"}");
		const char *h[] = {"Content-Security-Policy", CSP, NULL};
		return respond(v, 500, "application/json", &b, h);
	}
	const char *h[] = {"Content-Security-Policy", CSP, NULL};
	return respond(v, 200, "application/json", &b, h);
}

static const char style_css[] =
    "body{font-family:system-ui,sans-serif;max-width:46rem;margin:1rem auto;padding:0 1rem;color:#222}"
    "header{display:flex;gap:1rem;align-items:center;border-bottom:1px solid #ccc;padding-bottom:.5rem}"
    "header nav{margin-left:auto}.brand{font-weight:bold;text-decoration:none;color:#224}"
    ".mode{padding:.1rem .5rem;border-radius:.3rem;font-size:.85rem}.mode.on{background:#cfc}"
    ".mode.off{background:#fcc}form.inline{display:inline;margin-left:.5rem}"
    ".stories li{margin:.5rem 0}.score{display:inline-block;min-width:5.5rem;font-family:monospace}"
    ".reason strong{color:#a00}.hint{color:#666;font-size:.9rem;margin-top:2rem}"
    ".notice{background:#ffd;border:1px solid #cc9;padding:.5rem}";

static enum MHD_Result page_css(vreq *v)
{
	page b;
	page_init(&b);
	page_add(&b, style_css);
	const char *h[] = {"Content-Security-Policy", CSP, NULL};
	return respond(v, 200, "text/css; charset=utf-8", &b, h);
}

static enum MHD_Result page_empty(vreq *v)
{
	page b;
	page_init(&b);
	const char *h[] = {"Content-Security-Policy", CSP, NULL};
	return respond(v, 204, NULL, &b, h);
}

/* ---- actions ---- */

static enum MHD_Result do_vote(vreq *v, int from_query)
{
	char story[DEMO_FIELD_MAX], type[DEMO_FIELD_MAX];
	size_t ls = 0, lt = 0;
	int64_t id = 0;
	if (!logged_in(v))
		return reject(v, 403, "not logged in", "Log in to vote.");
	if (from_query) {
		const char *qs = MHD_lookup_connection_value(v->c, MHD_GET_ARGUMENT_KIND, "story");
		const char *qt = MHD_lookup_connection_value(v->c, MHD_GET_ARGUMENT_KIND, "type");
		if (qs == NULL || qt == NULL || strlen(qs) >= sizeof story || strlen(qt) >= sizeof type)
			return reject(v, 400, "bad vote", "A vote needs a story and a type y or n.");
		ls = strlen(qs);
		lt = strlen(qt);
		memcpy(story, qs, ls + 1);
		memcpy(type, qt, lt + 1);
	} else {
		int a = field(v, "story", story, sizeof story, &ls);
		int t = field(v, "type", type, sizeof type, &lt);
		if (a < 0 || t < 0)
			return reject(v, 400, "malformed form field", "The form could not be read.");
		if (a || t)
			return reject(v, 400, "bad vote", "A vote needs a story and a type y or n.");
	}
	if (demo_parse_positive(story, ls, 1000000, &id) != 0 || lt != 1 || (type[0] != 'y' && type[0] != 'n'))
		return reject(v, 400, "bad vote", "A vote needs a story and a type y or n.");
	int r = db_vote(v->app, id, v->sess.user_id, type[0]);
	if (r == 1)
		return reject(v, 404, "no such story", "There is no story with that number.");
	if (r != 0)
		return reject(v, 500, "database error", "Try again later.");
	return redirect(v, "/");
}

static enum MHD_Result do_login(vreq *v)
{
	char user[DEMO_FIELD_MAX], pw[DEMO_FIELD_MAX];
	size_t lu = 0, lp = 0;
	db_user u;
	int a = field(v, "user", user, sizeof user, &lu);
	int p = field(v, "password", pw, sizeof pw, &lp);
	if (a < 0 || p < 0) {
		demo_wipe(pw, sizeof pw);
		return reject(v, 400, "malformed form field", "The form could not be read.");
	}
	if (a || p || lu == 0) {
		demo_wipe(pw, sizeof pw);
		return reject(v, 400, "user and password required", "Fill in both fields.");
	}
	int found = db_user_get(v->app, user, lu, &u);
	if (found < 0) {
		demo_wipe(pw, sizeof pw);
		return reject(v, 500, "database error", "Try again later.");
	}
	/* Logins are throttled per account and client (the client's
	 * address), apart from the step-up lockout of /transfer: nobody's
	 * wrong logins lock a signed-in owner out of their own transfers. An
	 * unknown name is checked against a dummy hash and counted alike, so
	 * names cannot be told apart by time or probed without limit. */
	char client[DEMO_CLIENT_KEY_MAX];
	size_t lc = client_key(v->c, client, sizeof client);
	csrf_reason r =
	    csrf_login_attempt(v->app->csrf, v->app->store, user, lu, client, lc, pw, lp, found == 0 ? u.pwhash : NULL);
	demo_wipe(pw, sizeof pw);
	if (found == 0)
		demo_wipe(u.pwhash, sizeof u.pwhash);
	if (r == CSRF_REAUTH_FAILED || (r == CSRF_OK && found != 0))
		return reject(v, 403, "wrong user name or password", "Check both and try again.");
	if (r == CSRF_LOCKED_OUT)
		return reject(v, 429, csrf_reason_str(r),
		              "Too many wrong passwords for this account from here: wait a minute, then try again.");
	if (r != CSRF_OK)
		return reject_csrf(v, store_status(r), r);
	/* A new session id and a new token secret: nothing an attacker
	 * planted or saw before the login stays valid. */
	if (v->have_sess) {
		db_logout_record(v->app, v->sess.row);
		session_delete(v->app, &v->sess);
		session_wipe(&v->sess);
		v->have_sess = 0;
	}
	/* No login without its history row: a database that cannot take the
	 * row (locked past the busy timeout, full) refuses the login. */
	int64_t row = db_login_record(v->app, u.id);
	if (row <= 0)
		return reject(v, 500, "database error", "Try again later.");
	r = session_create(v->app, u.name, u.id, row, &v->sess);
	if (r != CSRF_OK) {
		db_logout_record(v->app, row);
		return reject_csrf(v, store_status(r), r);
	}
	v->have_sess = 1;
	set_session_cookie(v, &v->sess);
	return redirect(v, "/");
}

static enum MHD_Result do_logout(vreq *v)
{
	if (v->have_sess) {
		db_logout_record(v->app, v->sess.row);
		session_delete(v->app, &v->sess);
		session_wipe(&v->sess);
		v->have_sess = 0;
	}
	set_session_cookie(v, NULL);
	return redirect(v, "/");
}

static enum MHD_Result do_transfer(vreq *v)
{
	char to[DEMO_FIELD_MAX], amount[DEMO_FIELD_MAX], pw[DEMO_FIELD_MAX];
	size_t lt = 0, la = 0, lp = 0;
	db_user me, dest;
	int64_t n = 0;
	if (!logged_in(v))
		return reject(v, 403, "not logged in", "Log in first.");
	int a = field(v, "to", to, sizeof to, &lt);
	int b = field(v, "amount", amount, sizeof amount, &la);
	int c = v->app->unprotected ? 1 : field(v, "password", pw, sizeof pw, &lp);
	if (a < 0 || b < 0 || c < 0) {
		demo_wipe(pw, sizeof pw);
		return reject(v, 400, "malformed form field", "The form could not be read.");
	}
	if (a || b) {
		demo_wipe(pw, sizeof pw);
		return reject(v, 400, "recipient and amount required", "Fill in the form.");
	}
	if (db_user_get(v->app, v->sess.user, strlen(v->sess.user), &me) != 0) {
		demo_wipe(pw, sizeof pw);
		return reject(v, 500, "database error", "Try again later.");
	}
	int found = db_user_get(v->app, to, lt, &dest);
	if (found != 0 || dest.id == me.id) {
		demo_wipe(pw, sizeof pw);
		return reject(v, 400, "unknown recipient", "Send money to another existing user.");
	}
	if (demo_parse_positive(amount, la, me.balance, &n) != 0) {
		demo_wipe(pw, sizeof pw);
		return reject(v, 400, "bad amount", "The amount must be a whole number from 1 up to your balance.");
	}
	if (!v->app->unprotected) {
		csrf_reason r = csrf_reauth(v->app->csrf, v->app->store, me.name, strlen(me.name), v->sess.sid,
		                            strlen(v->sess.sid), c == 0 ? pw : NULL, c == 0 ? lp : 0, me.pwhash, 0);
		demo_wipe(pw, sizeof pw);
		demo_wipe(me.pwhash, sizeof me.pwhash);
		if (r != CSRF_OK)
			return reject_csrf(v, store_status(r), r);
	}
	db_xfer x = db_transfer(v->app, me.id, dest.id, n);
	if (x == DB_XFER_NO_FUNDS)
		return reject(v, 400, "bad amount", "The amount must be a whole number from 1 up to your balance.");
	if (x != DB_XFER_OK)
		return reject(v, 500, "database error", "Try again later.");
	return redirect(v, "/account");
}

/* ---- routing ---- */

enum MHD_Result victim_handle(demo_app *app, struct MHD_Connection *c, const char *url, const char *method, demo_req *r)
{
	vreq v;
	enum MHD_Result ret = MHD_NO;
	memset(&v, 0, sizeof v);
	v.app = app;
	v.c = c;
	v.url = url;
	v.method = method;
	v.r = r;
	(void)load_session(&v);
	if (r->too_large) {
		ret = reject_csrf(&v, csrf_reason_http_status(CSRF_BODY_TOO_LARGE, 403), CSRF_BODY_TOO_LARGE);
		goto out;
	}
	int get = is_get(&v), post = is_method(&v, "POST");
	if (strcmp(url, "/") == 0 && get)
		ret = page_home(&v);
	else if (strcmp(url, "/login") == 0 && get)
		ret = page_login(&v);
	else if (strcmp(url, "/account") == 0 && get)
		ret = page_account(&v);
	else if (strcmp(url, "/api/state") == 0 && get)
		ret = page_state(&v);
	else if (strcmp(url, "/style.css") == 0 && get)
		ret = page_css(&v);
	else if (strcmp(url, "/vote") == 0 && get && app->unprotected)
		ret = do_vote(&v, 1);
	else if (strcmp(url, "/vote") == 0 && get)
		ret = reject(&v, 405, "GET never changes state", "Votes are cast with POST.");
	else if (strcmp(url, "/favicon.ico") == 0 && get)
		ret = page_empty(&v);
	else if (!post && is_post_route(url)) {
		/* Unknown and unsafe methods still meet the CSRF check first. */
		if (get || guard(&v, &ret) == 0)
			ret = reject(&v, 405, "method not allowed", "Use POST.");
	} else if (post && is_post_route(url)) {
		/* Fail closed: without the store there is no session secret
		 * to check a token against, no lockout counter to read. */
		if (v.store_down)
			ret = reject_csrf(&v, 503, CSRF_STORE_UNAVAILABLE);
		else if (guard(&v, &ret) == 0) {
			if (strcmp(url, "/vote") == 0)
				ret = do_vote(&v, 0);
			else if (strcmp(url, "/login") == 0)
				ret = do_login(&v);
			else if (strcmp(url, "/logout") == 0)
				ret = do_logout(&v);
			else
				ret = do_transfer(&v);
		}
	} else if (!get) {
		ret = reject(&v, 405, "method not allowed", "This page only answers GET.");
	} else {
		ret = reject(&v, 404, "not found", "There is no such page.");
	}
out:
	session_wipe(&v.sess);
	explicit_bzero(v.retry_token, sizeof v.retry_token);
	return ret;
}
