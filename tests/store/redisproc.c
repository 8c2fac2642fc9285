/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * redisproc.c - real Redis servers and sentinels for the store tests, and
 * a log hook that keeps what a store said (redisproc.h).
 */
#include "redisproc.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int64_t rp_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void rp_sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Ports for the servers of these tests, picked as tests/nginx/net.mjs
 * picks them (see there why): below the kernel's ephemeral range, so no
 * port-0 bind or outgoing connection on the machine takes one before its
 * server binds it (a port-0 bind closed again handed the port back to
 * them), and reserved among the tests by a listener on 127.0.0.2:PORT
 * that this process keeps open to its end (close-on-exec: the servers
 * started do not inherit it). */
#define RP_PORT_LO 10000
#define RP_PORT_HI 21000

static int rp_listen(const char *ip, int port)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	if (fd >= 0 && (inet_pton(AF_INET, ip, &a.sin_addr) != 1 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
	                listen(fd, 1) != 0)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

int rp_free_port(void)
{
	static unsigned seed;

	if (seed == 0)
		seed = (unsigned)getpid() ^ (unsigned)rp_mono_ms();
	for (int i = 0; i < 200; i++) {
		int port = RP_PORT_LO + (int)((unsigned)rand_r(&seed) % (RP_PORT_HI - RP_PORT_LO));
		int held = rp_listen("127.0.0.2", port);
		int probe = held >= 0 ? rp_listen("127.0.0.1", port) : -1;

		if (probe >= 0) {
			close(probe);
			return port;
		}
		if (held >= 0)
			close(held);
	}
	return -1;
}

int rp_tmpdir(char *dir, size_t cap)
{
	if (snprintf(dir, cap, "/tmp/csrf-redis-XXXXXX") >= (int)cap)
		return -1;
	return mkdtemp(dir) != NULL ? 0 : -1;
}

void rp_rmdir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[512];

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

static const char *bin_from(const char *env, const char *fallback)
{
	const char *b = getenv(env);

	if (b == NULL || b[0] == '\0')
		b = fallback;
	return access(b, X_OK) == 0 ? b : NULL;
}

const char *rp_redis_bin(void)
{
	return bin_from("REDIS_SERVER", "/usr/bin/redis-server");
}

const char *rp_sentinel_bin(void)
{
	return bin_from("REDIS_SENTINEL", "/usr/bin/redis-sentinel");
}

static redisContext *connect_auth(int port, const char *user, const char *password)
{
	redisContext *c = redisConnect("127.0.0.1", port);
	redisReply *r;

	if (c == NULL || c->err) {
		if (c != NULL)
			redisFree(c);
		return NULL;
	}
	if (password != NULL) {
		r = user != NULL ? redisCommand(c, "AUTH %s %s", user, password) : redisCommand(c, "AUTH %s", password);
		int ok = r != NULL && r->type == REDIS_REPLY_STATUS;
		if (r != NULL)
			freeReplyObject(r);
		if (!ok) {
			redisFree(c);
			return NULL;
		}
	}
	return c;
}

static int wait_ping(int port, const char *user, const char *password, pid_t pid)
{
	for (int i = 0; i < 500; i++) {
		redisContext *c = connect_auth(port, user, password);
		redisReply *r = c != NULL ? redisCommand(c, "PING") : NULL;
		int ok = r != NULL && r->type == REDIS_REPLY_STATUS;
		if (r != NULL)
			freeReplyObject(r);
		if (c != NULL)
			redisFree(c);
		if (ok)
			return 0;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return -1; /* it died */
		rp_sleep_ms(10);
	}
	return -1;
}

static pid_t spawn(const char *bin, char *const *argv)
{
	pid_t pid = fork();

	if (pid == 0) {
		/* the server never outlives a test that crashed */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execv(bin, argv);
		_exit(127);
	}
	return pid;
}

pid_t rp_redis_start(const char *dir, int port, const char *const *extra, const char *user, const char *password)
{
	const char *bin = rp_redis_bin();
	char port_s[8], log[256];
	char *argv[64];
	int n = 0;
	pid_t pid;

	if (bin == NULL)
		return -1;
	snprintf(port_s, sizeof port_s, "%d", port);
	snprintf(log, sizeof log, "%s/redis-%d.log", dir, port);
	argv[n++] = (char *)bin;
	const char *base[] = {
	    "--port", port_s, "--bind",    "127.0.0.1", "--save",      "",   "--appendonly",     "no",
	    "--dir",  dir,    "--logfile", log,         "--daemonize", "no", "--protected-mode", "no"};
	for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
		argv[n++] = (char *)base[i];
	for (size_t i = 0; extra != NULL && extra[i] != NULL && n < 63; i++)
		argv[n++] = (char *)extra[i];
	argv[n] = NULL;
	pid = spawn(bin, argv);
	if (pid < 0)
		return -1;
	if (wait_ping(port, user, password, pid) != 0) {
		rp_kill(&pid);
		return -1;
	}
	return pid;
}

pid_t rp_sentinel_start(const char *dir, int port, const char *config_lines)
{
	const char *bin = rp_sentinel_bin();
	char conf[256];
	char *argv[3];
	FILE *f;
	pid_t pid;

	if (bin == NULL)
		return -1;
	snprintf(conf, sizeof conf, "%s/sentinel-%d.conf", dir, port);
	f = fopen(conf, "w");
	if (f == NULL)
		return -1;
	fprintf(f, "port %d\nbind 127.0.0.1\ndaemonize no\nprotected-mode no\ndir %s\nlogfile %s/sentinel-%d.log\n%s",
	        port, dir, dir, port, config_lines);
	fclose(f);
	argv[0] = (char *)bin;
	argv[1] = conf;
	argv[2] = NULL;
	pid = spawn(bin, argv);
	if (pid < 0)
		return -1;
	if (wait_ping(port, NULL, NULL, pid) != 0) {
		rp_kill(&pid);
		return -1;
	}
	return pid;
}

void rp_kill(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGCONT);
		kill(*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
		*pid = -1;
	}
}

static redisReply *vcmd(int port, const char *user, const char *password, const char *fmt, va_list ap)
{
	redisContext *c = connect_auth(port, user, password);
	redisReply *r;

	if (c == NULL)
		return NULL;
	r = redisvCommand(c, fmt, ap);
	redisFree(c);
	return r;
}

redisReply *rp_cmd(int port, const char *user, const char *password, const char *fmt, ...)
{
	va_list ap;
	redisReply *r;

	va_start(ap, fmt);
	r = vcmd(port, user, password, fmt, ap);
	va_end(ap);
	return r;
}

long long rp_int(int port, const char *fmt, ...)
{
	va_list ap;
	redisReply *r;
	long long v = -1000000;

	va_start(ap, fmt);
	r = vcmd(port, NULL, NULL, fmt, ap);
	va_end(ap);
	if (r != NULL && r->type == REDIS_REPLY_INTEGER)
		v = r->integer;
	if (r != NULL)
		freeReplyObject(r);
	return v;
}

void rp_log_init(rp_log *l)
{
	memset(l, 0, sizeof *l);
	pthread_mutex_init(&l->lock, NULL);
}

void rp_log_hook(void *ud, csrf_reason event, const char *message)
{
	rp_log *l = ud;

	pthread_mutex_lock(&l->lock);
	if (l->n < RP_LOG_LINES) {
		l->event[l->n] = event;
		snprintf(l->text[l->n], sizeof l->text[0], "%s", message);
	}
	l->n++;
	pthread_mutex_unlock(&l->lock);
}

static int find(rp_log *l, int any, csrf_reason event, const char *needle)
{
	int found = -1;

	pthread_mutex_lock(&l->lock);
	for (int i = 0; i < l->n && i < RP_LOG_LINES && found < 0; i++)
		if ((any || l->event[i] == event) && strstr(l->text[i], needle) != NULL)
			found = i;
	pthread_mutex_unlock(&l->lock);
	return found;
}

int rp_log_find(rp_log *l, csrf_reason event, const char *needle)
{
	return find(l, 0, event, needle);
}

int rp_log_any(rp_log *l, const char *needle)
{
	return find(l, 1, CSRF_OK, needle);
}

void rp_log_print(rp_log *l)
{
	pthread_mutex_lock(&l->lock);
	for (int i = 0; i < l->n && i < RP_LOG_LINES; i++)
		printf("# log %s: %s\n", csrf_reason_name(l->event[i]), l->text[i]);
	pthread_mutex_unlock(&l->lock);
}
