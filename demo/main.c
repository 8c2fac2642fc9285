/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * main.c - csrf-demo's process: command line, the libcsrf context, the
 * session store and database, one libmicrohttpd daemon per site (victim
 * and attacker), request bodies read up to a cap, with --log-requests a
 * line per victim request naming the headers a CSRF check looks at, and
 * signals (SIGINT and SIGTERM stop cleanly, SIGHUP reloads the key file).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csrfx.h"
#include "demo.h"

typedef struct {
	demo_app *app;
	int victim;       /* 1: the victim site, 0: the attacker site */
	int log_requests; /* --log-requests */
} site;

static const char usage[] =
    "usage: csrf-demo [--listen 127.0.0.1:8080] [--attacker-listen 127.0.0.1:8081] [--db FILE]\n"
    "                 [--unprotected] [--key-file FILE] [--store URL] [--origin URL] [--router ADDR:PORT]\n"
    "                 [--router-origin URL] [--log-requests] [--retry-token]\n"
    "  --listen ADDR:PORT           the victim site (default 127.0.0.1:8080)\n"
    "  --attacker-listen ADDR:PORT  the attacker site (default 127.0.0.1:8081)\n"
    "  --db FILE                    SQLite database, created on first start (default csrf-demo.db)\n"
    "  --unprotected                turn the CSRF defence off, to watch the attacks work\n"
    "  --key-file FILE              libcsrf key file (default: a random key per start); SIGHUP reloads it\n"
    "  --store URL                  session store: memory (default), memory://?max=N, redis://host:port/db\n"
    "                               or redis-sentinel://host:port,host:port/MASTER/db (see docs/fleet.md)\n"
    "  --origin URL                 the victim's public origin, http(s)://HOST[:PORT], when instances run\n"
    "                               behind a load balancer (default: http:// and the --listen address);\n"
    "                               with https:// (TLS ends at the balancer) the session cookie is __Host-\n"
    "  --router ADDR:PORT           also a router: busybox httpd, its CGI admin pages behind csrf-cgi\n"
    "  --router-origin URL          the router's origin, http://HOST[:PORT], when the browser reaches it by\n"
    "                               a name (default: http:// and the --router address)\n"
    "  --log-requests               print a line per victim request with what the browser sent: Origin,\n"
    "                               Referer (no query), Sec-Fetch-Site, Sec-Fetch-Mode, Content-Type and\n"
    "                               whether a Cookie came (never its value)\n"
    "  --retry-token                 a 403 for a stale token from the site's own page carries a fresh\n"
    "                               one in X-CSRF-Token, so a script can retry once (off by default)\n";

static enum MHD_Result too_large(struct MHD_Connection *c)
{
	page b;
	page_init(&b);
	page_add(&b, "request body too large\n");
	return demo_respond(c, NULL, NULL, 413, "text/plain; charset=utf-8", &b, NULL);
}

/* The --log-requests line: "request METHOD PATH origin=... referer=...
 * sec-fetch-site=... sec-fetch-mode=... content-type=... cookie=yes|no",
 * "-" for an absent header. Values are cut to printable ASCII; the
 * Referer and the path lose their query; no cookie value is printed. */
static void log_request(struct MHD_Connection *c, const char *method, const char *url)
{
	static const char *const names[] = {"Origin", "Referer", "Sec-Fetch-Site", "Sec-Fetch-Mode", "Content-Type"};
	static const char *const keys[] = {"origin", "referer", "sec-fetch-site", "sec-fetch-mode", "content-type"};
	char m[16], path[128], v[5][128];
	demo_log_value(method, strlen(method), 0, m, sizeof m);
	demo_log_value(url, strlen(url), 1, path, sizeof path);
	for (size_t i = 0; i < 5; i++) {
		const char *val = NULL;
		size_t n = 0;
		if (MHD_lookup_connection_value_n(c, MHD_HEADER_KIND, names[i], strlen(names[i]), &val, &n) != MHD_YES)
			val = NULL;
		demo_log_value(val, n, i == 1, v[i], sizeof v[i]);
	}
	const char *ck = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_COOKIE);
	printf("request %s %s %s=%s %s=%s %s=%s %s=%s %s=%s cookie=%s\n", m, path, keys[0], v[0], keys[1], v[1],
	       keys[2], v[2], keys[3], v[3], keys[4], v[4], ck != NULL && ck[0] != '\0' ? "yes" : "no");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	site *s = cls;
	demo_req *r = *con_cls;
	(void)version;
	if (r == NULL) {
		r = calloc(1, sizeof *r);
		if (r == NULL)
			return MHD_NO;
		page_init(&r->body);
		*con_cls = r;
		if (s->victim && s->log_requests)
			log_request(c, method, url);
		/* A declared length over the cap (or no decimal) is refused before
		 * reading. */
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		uint64_t n;
		if (cl != NULL && csrfx_parse_u64(cl, strlen(cl), DEMO_BODY_MAX, &n) != CSRF_OK) {
			r->too_large = 1;
			r->started = 1;
			if (s->victim)
				return victim_handle(s->app, c, url, method, r);
			return too_large(c);
		}
		return MHD_YES;
	}
	if (*upload_size != 0) {
		if (!r->too_large) {
			if (*upload_size > DEMO_BODY_MAX - r->body.len) {
				r->too_large = 1;
				page_free(&r->body);
			} else {
				page_addn(&r->body, upload, *upload_size);
				if (r->body.failed)
					return MHD_NO;
			}
		}
		*upload_size = 0;
		return MHD_YES;
	}
	if (r->started)
		return MHD_YES;
	r->started = 1;
	if (!s->victim)
		return attacker_handle(s->app, c, url, method);
	return victim_handle(s->app, c, url, method, r);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)c;
	(void)toe;
	demo_req *r = *con_cls;
	if (r == NULL)
		return;
	if (r->body.p)
		demo_wipe(r->body.p, r->body.len);
	page_free(&r->body);
	free(r);
	*con_cls = NULL;
}

/* The store's events (connected, lost, full, misconfigured) as one line
 * each: "store: REASON: MESSAGE". The library's message never holds a
 * key, a value or a password. */
static void store_log(void *ud, csrf_reason event, const char *message)
{
	(void)ud;
	printf("store: %s: %s\n", event == CSRF_OK ? "ok" : csrf_reason_str(event), message);
}

/* libmicrohttpd's own messages while a daemon starts (why a start failed:
 * errno after MHD_start_daemon may be another call's), none once both
 * run: a client that goes away is no news. */
static volatile sig_atomic_t mhd_starting = 1;
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	if (!mhd_starting)
		return;
	fputs("csrf-demo: libmicrohttpd: ", stderr);
	vfprintf(stderr, fmt, ap);
}

/* libmicrohttpd's default SO_REUSEADDR allows a quick restart; no
 * SO_REUSEPORT, so a second instance given a port already taken fails
 * to start instead of silently sharing the port with the first. A pool
 * of threads serves the connections: with one thread every Redis round
 * trip of a request would stall all the others (the store's own pool of
 * connections, 8 by default, lets them wait on Redis side by side). */
static struct MHD_Daemon *start_site(site *s, struct sockaddr_in *sa)
{
	return MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG, 0, NULL, NULL,
	                        on_request, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_SOCK_ADDR,
	                        (struct sockaddr *)sa, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
	                        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30, MHD_OPTION_CONNECTION_LIMIT,
	                        (unsigned int)256, MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)DEMO_THREADS,
	                        MHD_OPTION_END);
}

int main(int argc, char **argv)
{
	const char *listen = "127.0.0.1:8080", *attacker_listen = "127.0.0.1:8081";
	const char *db_path = "csrf-demo.db", *key_file = NULL, *store_url = "memory", *origin = NULL;
	const char *router = NULL, *router_origin = NULL;
	int log_requests = 0, retry_token = 0;
	demo_app app;
	struct sockaddr_in vsa, asa;
	int status = 1;
	memset(&app, 0, sizeof app);
	setvbuf(stdout, NULL, _IOLBF, 0);

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int more = i + 1 < argc;
		if (strcmp(a, "--listen") == 0 && more)
			listen = argv[++i];
		else if (strcmp(a, "--attacker-listen") == 0 && more)
			attacker_listen = argv[++i];
		else if (strcmp(a, "--db") == 0 && more)
			db_path = argv[++i];
		else if (strcmp(a, "--key-file") == 0 && more)
			key_file = argv[++i];
		else if (strcmp(a, "--store") == 0 && more)
			store_url = argv[++i];
		else if (strcmp(a, "--origin") == 0 && more)
			origin = argv[++i];
		else if (strcmp(a, "--router") == 0 && more)
			router = argv[++i];
		else if (strcmp(a, "--router-origin") == 0 && more)
			router_origin = argv[++i];
		else if (strcmp(a, "--unprotected") == 0)
			app.unprotected = 1;
		else if (strcmp(a, "--log-requests") == 0)
			log_requests = 1;
		else if (strcmp(a, "--retry-token") == 0)
			retry_token = 1;
		else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(usage, stdout);
			return 0;
		} else {
			fprintf(stderr, "csrf-demo: unknown or incomplete option %s\n%s", a, usage);
			return 2;
		}
	}
	if (demo_parse_listen(listen, strlen(listen), &vsa, app.victim_origin, sizeof app.victim_origin) != 0 ||
	    demo_parse_listen(attacker_listen, strlen(attacker_listen), &asa, app.attacker_origin,
	                      sizeof app.attacker_origin) != 0) {
		fprintf(stderr, "csrf-demo: --listen and --attacker-listen take IPV4:PORT\n");
		return 2;
	}
	/* Behind a load balancer the browser's Origin is the balancer's: every
	 * instance is given that one. The demo speaks plain HTTP; with an
	 * https:// origin TLS ends in front of it, and the demo tells the
	 * library the scheme the browser used. */
	if (origin != NULL) {
		size_t n = strlen(origin);
		app.https = strncmp(origin, "https://", 8) == 0;
		if (n >= sizeof app.victim_origin || (!app.https && strncmp(origin, "http://", 7) != 0)) {
			fprintf(stderr, "csrf-demo: --origin takes http://HOST[:PORT] or https://HOST[:PORT]\n");
			return 2;
		}
		memcpy(app.victim_origin, origin, n + 1);
	}
	if (strcmp(app.victim_origin, app.attacker_origin) == 0) {
		fprintf(stderr, "csrf-demo: the victim and the attacker need different ports\n");
		return 2;
	}

	if (csrf_ctx_new(&app.csrf, NULL) != CSRF_OK) {
		fprintf(stderr, "csrf-demo: cannot create the libcsrf context\n");
		return 1;
	}
	if (csrf_ctx_set_self_origin(app.csrf, app.victim_origin, strlen(app.victim_origin)) != CSRF_OK) {
		fprintf(stderr, "csrf-demo: self origin: %s\n", csrf_ctx_error(app.csrf));
		goto out;
	}
	csrf_ctx_set_retry_token(app.csrf, retry_token);
	csrf_reason kr = key_file ? csrf_ctx_load_key_file(app.csrf, key_file) : csrf_ctx_generate_key(app.csrf);
	if (kr != CSRF_OK) {
		fprintf(stderr, "csrf-demo: key: %s (%s)\n", csrf_reason_str(kr), csrf_ctx_error(app.csrf));
		goto out;
	}
	csrf_ctx_set_login_policy(app.csrf, DEMO_LOGIN_FAILURES, DEMO_LOGIN_LOCK_S, DEMO_LOGIN_LOCK_MAX_S);
	/* A Redis that does not answer yet is no error: the library opens
	 * lazily and recovers by itself; meanwhile pages are served and
	 * unsafe requests get 503. A bad URL, a refused password or an
	 * unknown master stops the start. */
	csrf_reason sr = csrf_store_open_log(&app.store, store_url, store_log, NULL);
	if (sr != CSRF_OK) {
		fprintf(stderr, "csrf-demo: cannot open the store: %s\n", csrf_reason_str(sr));
		goto out;
	}
	if (db_open(&app, db_path) != 0 || (router && router_start(&app, router, router_origin) != 0))
		goto out;

	/* Signals are taken by sigwait below; the daemons' threads inherit
	 * the mask and never see them. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	site victim = {&app, 1, log_requests}, attacker = {&app, 0, 0};
	struct MHD_Daemon *vd = start_site(&victim, &vsa);
	if (vd == NULL) {
		fprintf(stderr, "csrf-demo: cannot listen on %s: %s\n", listen, strerror(errno));
		goto out;
	}
	struct MHD_Daemon *ad = start_site(&attacker, &asa);
	if (ad == NULL) {
		fprintf(stderr, "csrf-demo: cannot listen on %s: %s\n", attacker_listen, strerror(errno));
		MHD_stop_daemon(vd);
		goto out;
	}

	mhd_starting = 0;
	printf("csrf-demo %s: %s\n", CSRF_VERSION,
	       app.unprotected ? "UNPROTECTED (--unprotected): no tokens, no origin checks, no password re-check"
	                       : "protected by libcsrf (origin checks, tokens, password for transfers)");
	printf("victim:   %s/\n", app.victim_origin);
	printf("attacker: %s/\n", app.attacker_origin);
	printf("users:    alice, bob, and mallory (the attacker's account); passwords in demo/README.md\n");
	printf("database: %s\n", db_path);
	if (router)
		printf("router:   %s/ (user admin; %s)\n", app.router_origin,
		       app.unprotected ? "UNPROTECTED: no csrf-cgi" : "behind csrf-cgi");

	for (;;) {
		int sig = 0;
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGHUP) {
			if (key_file == NULL)
				continue;
			csrf_reason r = csrf_ctx_load_key_file(app.csrf, key_file);
			if (r == CSRF_OK)
				printf("reloaded key file %s\n", key_file);
			else
				printf("key file reload failed, old keys kept: %s\n", csrf_ctx_error(app.csrf));
			continue;
		}
		break;
	}
	printf("csrf-demo: stopping\n");
	MHD_stop_daemon(ad);
	MHD_stop_daemon(vd);
	status = 0;
out:
	router_stop();
	db_close(&app);
	csrf_store_close(app.store);
	csrf_ctx_free(app.csrf);
	return status;
}
