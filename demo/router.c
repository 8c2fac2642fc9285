/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * router.c - csrf-demo's third site, a home "router": Debian's busybox
 * httpd serving the legacy CGI admin pages of demo/router/www (written the
 * way 2007 firmware was: no token, a state change on GET) behind csrf-cgi,
 * or straight, without the wrapper, when the demo runs --unprotected. Its
 * key file, configuration files and settings live in a temporary
 * directory that router_stop removes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "demo.h"

extern char **environ;

static pid_t router_pid = -1;
static char router_dir[64];
static const char *const router_files[] = {"csrf.keys", "csrf-cgi.conf", "httpd.conf", "dns1",
                                           "dns2",      "changes",       "dns1.tmp",   "dns2.tmp"};

static int write_file(const char *name, const char *text)
{
	char path[128];
	snprintf(path, sizeof path, "%s/%s", router_dir, name);
	FILE *f = fopen(path, "w");
	if (f == NULL)
		return -1;
	int bad = fputs(text, f) < 0;
	return fclose(f) != 0 || bad ? -1 : 0;
}

/* Waits until the router accepts connections; 0, or -1 when busybox ended. */
static int wait_ready(const struct sockaddr_in *sa)
{
	for (int i = 0; i < 100; i++) {
		int status;
		if (waitpid(router_pid, &status, WNOHANG) == router_pid) {
			router_pid = -1;
			return -1;
		}
		int s = socket(AF_INET, SOCK_STREAM, 0);
		int ok = s >= 0 && connect(s, (const struct sockaddr *)sa, sizeof *sa) == 0;
		if (s >= 0)
			close(s);
		if (ok)
			return 0;
		nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
	}
	return -1;
}

static int spawn_busybox(const char *listen)
{
	char conf[96], state[96], cgi_conf[96];
	snprintf(conf, sizeof conf, "%s/httpd.conf", router_dir);
	snprintf(state, sizeof state, "ROUTER_STATE=%s", router_dir);
	snprintf(cgi_conf, sizeof cgi_conf, "CSRF_CGI_CONFIG=%s/csrf-cgi.conf", router_dir);
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 3, sizeof *env);
	if (env == NULL)
		return -1;
	memcpy(env, environ, n * sizeof *env);
	env[n] = state;
	env[n + 1] = cgi_conf;
	char *argv[] = {"busybox", "httpd",      "-f", "-p", (char *)listen, "-h", CSRF_DEMO_ROUTER_WWW,
	                "-c",      (char *)conf, NULL};
	/* The demo blocks and ignores signals busybox needs. */
	sigset_t none, dfl;
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	posix_spawnattr_t attr;
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &dfl);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	int err = posix_spawnp(&router_pid, "busybox", NULL, &attr, argv, env);
	posix_spawnattr_destroy(&attr);
	free(env);
	if (err != 0) {
		fprintf(stderr, "csrf-demo: cannot run busybox for the router: %s\n", strerror(err));
		router_pid = -1;
		return -1;
	}
	return 0;
}

int router_start(demo_app *app, const char *listen, const char *origin)
{
	struct sockaddr_in sa;
	char text[512], keys[96];
	if (demo_parse_listen(listen, strlen(listen), &sa, app->router_origin, sizeof app->router_origin) != 0) {
		fprintf(stderr, "csrf-demo: --router takes IPV4:PORT\n");
		return -1;
	}
	/* Reached by a name (http://router.test:8082): csrf-cgi is told that
	 * origin, the one the browser sends, as the victim's --origin. */
	if (origin != NULL) {
		size_t n = strlen(origin);
		if (n >= sizeof app->router_origin || strncmp(origin, "http://", 7) != 0) {
			fprintf(stderr, "csrf-demo: --router-origin takes http://HOST[:PORT]\n");
			return -1;
		}
		memcpy(app->router_origin, origin, n + 1);
	}
	snprintf(router_dir, sizeof router_dir, "/tmp/csrf-demo-router-XXXXXX");
	if (mkdtemp(router_dir) == NULL) {
		fprintf(stderr, "csrf-demo: cannot make the router's directory: %s\n", strerror(errno));
		router_dir[0] = '\0';
		return -1;
	}
	snprintf(keys, sizeof keys, "%s/csrf.keys", router_dir);
	csrf_error err;
	if (csrf_keyfile_new(keys, &err) != CSRF_OK) {
		fprintf(stderr, "csrf-demo: cannot make the router's key file: %s\n", err.msg);
		return -1;
	}
	/* The reset link changes state on GET: unsafe_get. Tokens are bound
	 * to the Basic auth user (REMOTE_USER). */
	snprintf(text, sizeof text, "origin %s\nkey_file %s\nunsafe_get /cgi-bin/reset.cgi\n", app->router_origin,
	         keys);
	if (write_file("csrf-cgi.conf", text) != 0)
		return -1;
	snprintf(text, sizeof text, "/cgi-bin:admin:admin\n%s\n", app->unprotected ? "" : "*.cgi:" CSRF_DEMO_CGI);
	if (write_file("httpd.conf", text) != 0 || spawn_busybox(listen) != 0)
		return -1;
	if (wait_ready(&sa) != 0) {
		fprintf(stderr, "csrf-demo: the router (busybox httpd) did not start on %s\n", listen);
		return -1;
	}
	return 0;
}

void router_stop(void)
{
	if (router_pid > 0) {
		kill(router_pid, SIGTERM);
		waitpid(router_pid, NULL, 0);
		router_pid = -1;
	}
	if (router_dir[0] == '\0')
		return;
	for (size_t i = 0; i < sizeof router_files / sizeof router_files[0]; i++) {
		char path[128];
		snprintf(path, sizeof path, "%s/%s", router_dir, router_files[i]);
		unlink(path);
	}
	rmdir(router_dir);
	router_dir[0] = '\0';
}
