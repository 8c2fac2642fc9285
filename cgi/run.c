/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * run.c - the protected program: started with the request's environment
 * and body, its CGI headers read and passed on (Status first, which
 * busybox httpd needs), and its answer put through the library's response
 * exchange (csrf.h): the library says which answers get tokens, holds the
 * first bytes until the charset is known, judges every header and names
 * the ones to add, and injects as the body is read (bounded memory).
 * Anything else passes untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgi.h"

extern char **environ;

#define HEADERS_MAX 100           /* header lines a program may print */
#define HEADERS_BYTES (16 * 1024) /* and their bytes */
#define CHUNK (16 * 1024)

typedef struct {
	const char *name, *value;
	size_t name_len, value_len;
} line;

typedef struct {
	line h[HEADERS_MAX];
	size_t n;
	const line *status, *content_type, *content_encoding, *location;
} headers;

static int is_named(const line *l, const char *name)
{
	return l->name_len == strlen(name) && strncasecmp(l->name, name, l->name_len) == 0;
}

/* Parses buf[0..len), the header block up to its blank line. NULL, or
 * what is wrong. */
static const char *parse(char *buf, size_t len, headers *hs)
{
	memset(hs, 0, sizeof *hs);
	for (size_t i = 0; i < len;) {
		char *eol = memchr(buf + i, '\n', len - i);
		if (eol == NULL)
			break; /* not reached: the block ends with its blank line */
		size_t end = (size_t)(eol - buf), stop = end;
		if (stop > i && buf[stop - 1] == '\r')
			stop--;
		if (stop == i)
			break; /* the blank line */
		if (hs->n == HEADERS_MAX)
			return "more than 100 header lines";
		line *l = &hs->h[hs->n++];
		char *colon = memchr(buf + i, ':', stop - i);
		if (colon == NULL || colon == buf + i)
			return "a header line without a name";
		l->name = buf + i;
		l->name_len = (size_t)(colon - l->name);
		for (size_t k = 0; k < l->name_len; k++)
			if ((unsigned char)l->name[k] <= 0x20 || l->name[k] == 0x7f)
				return "a header name with a space or a control character";
		size_t v = (size_t)(colon - buf) + 1;
		while (v < stop && (buf[v] == ' ' || buf[v] == '\t'))
			v++;
		while (stop > v && (buf[stop - 1] == ' ' || buf[stop - 1] == '\t'))
			stop--;
		for (size_t k = v; k < stop; k++)
			if (((unsigned char)buf[k] < 0x20 && buf[k] != '\t') || buf[k] == 0x7f)
				return "a header value with a control character";
		l->value = buf + v;
		l->value_len = stop - v;
		const line **slot = is_named(l, "Status")             ? &hs->status
		                    : is_named(l, "Content-Type")     ? &hs->content_type
		                    : is_named(l, "Content-Encoding") ? &hs->content_encoding
		                    : is_named(l, "Location")         ? &hs->location
		                                                      : NULL;
		if (slot != NULL && *slot != NULL)
			return "a Status, Content-Type, Content-Encoding or Location header twice";
		if (slot != NULL)
			*slot = l;
		i = end + 1;
	}
	if (hs->status != NULL) {
		uint64_t code;
		const line *s = hs->status;
		if (s->value_len < 3 || (s->value_len > 3 && s->value[3] != ' ') ||
		    cgi_parse_number(s->value, 3, 599, NULL, &code) != 0 || code < 100)
			return "a Status that is not a three-digit code";
	}
	if (hs->status == NULL && hs->content_type == NULL && hs->location == NULL)
		return "no Status, Content-Type or Location header";
	return NULL;
}

/* The status the server will answer with: Status, else 302 for a
 * Location (the server redirects), else 200. */
static unsigned status_of(const headers *hs)
{
	uint64_t code = 200;
	if (hs->status != NULL)
		(void)cgi_parse_number(hs->status->value, 3, 599, NULL, &code); /* checked by parse */
	else if (hs->location != NULL)
		code = 302;
	return (unsigned)code;
}

/* The program's headers as the library reads them (h: hs->n slots). */
static void as_library(const headers *hs, csrf_header *h)
{
	for (size_t i = 0; i < hs->n; i++) {
		h[i].name = (csrf_slice){hs->h[i].name, hs->h[i].name_len};
		h[i].value = (csrf_slice){hs->h[i].value, hs->h[i].value_len};
	}
}

static void put_line(const char *name, size_t name_len, const char *value, size_t value_len)
{
	fwrite(name, 1, name_len, stdout);
	fwrite(": ", 1, 2, stdout);
	fwrite(value, 1, value_len, stdout);
	fwrite("\r\n", 1, 2, stdout);
}

/* The program's headers (Status first), as the library judged them when
 * action is set, then the ones it adds; the lines raise marks
 * (csrf_response_referrer) say same-origin. */
static void put_headers(const headers *hs, const unsigned char *action, const csrf_slice *value, const csrf_header *add,
                        size_t n_add, const unsigned char *raise)
{
	if (hs->status != NULL)
		put_line("Status", 6, hs->status->value, hs->status->value_len);
	for (size_t i = 0; i < hs->n; i++) {
		const line *l = &hs->h[i];
		if (l == hs->status || (action && action[i] == CSRF_HEADER_DROP))
			continue;
		if (action && action[i] == CSRF_HEADER_REPLACE)
			put_line(l->name, l->name_len, value[i].ptr, value[i].len);
		else if (raise[i])
			put_line(l->name, l->name_len, CSRF_REFERRER_RAISED, strlen(CSRF_REFERRER_RAISED));
		else
			put_line(l->name, l->name_len, l->value, l->value_len);
	}
	for (size_t i = 0; i < n_add; i++)
		put_line(add[i].name.ptr, add[i].name.len, add[i].value.ptr, add[i].value.len);
	fwrite("\r\n", 1, 2, stdout);
}

static int emit(void *ud, const char *p, size_t n, int inserted)
{
	(void)ud;
	(void)inserted;
	return fwrite(p, 1, n, stdout) == n ? 0 : -1;
}

static ssize_t read_some(int fd, char *buf, size_t cap)
{
	ssize_t n;
	do
		n = read(fd, buf, cap);
	while (n < 0 && errno == EINTR);
	return n;
}

/* Writes p[0..n) through the exchange when resp is set, else as it is;
 * -1 when the client went away. */
static int put_body(csrf_response *resp, const char *p, size_t n)
{
	if (n == 0)
		return 0;
	int bad = resp ? csrf_response_feed(resp, p, n, emit, NULL) != CSRF_OK : fwrite(p, 1, n, stdout) != n;
	return bad || fflush(stdout) != 0 ? -1 : 0;
}

/* Reads the program's headers into buf: the length of the header block
 * (through its blank line) and *got, the bytes read; 0 when the output
 * ended (or grew past cap) before a blank line. */
static size_t read_headers(int fd, char *buf, size_t cap, size_t *got)
{
	*got = 0;
	for (;;) {
		ssize_t n = read_some(fd, buf + *got, cap - *got);
		if (n <= 0)
			return 0;
		size_t from = *got > 2 ? *got - 2 : 0;
		*got += (size_t)n;
		for (size_t i = from; i < *got; i++) {
			if (buf[i] != '\n')
				continue;
			if (i == 0 || buf[i - 1] == '\n')
				return i + 1;
			if (buf[i - 1] == '\r' && (i == 1 || buf[i - 2] == '\n'))
				return i + 1;
		}
		if (*got == cap)
			return 0;
	}
}

/* The library's log line for the page, when it has one. */
static void log_response(const csrf_response *resp, const char *method, const char *path)
{
	char text[CSRF_RESPONSE_LOG_MAX];
	if (csrf_response_log(resp, text, sizeof text) > 0)
		cgi_log("page of", method, path, text);
}

/* Answers and relays the program's output through the library's
 * response exchange; 0 or -1 when csrf-cgi answered an error instead or
 * the client went away. */
static int relay(const cgi_conf *conf, csrf_request *req, int fd, const char *method, const char *path)
{
	static char buf[HEADERS_BYTES];
	static char chunk[CHUNK];
	static _Alignas(64) unsigned char mem[CSRF_RESPONSE_STATE_MAX];
	static headers hs;
	size_t got, head = read_headers(fd, buf, sizeof buf, &got);
	const char *bad = head == 0 ? (got == HEADERS_BYTES ? "headers longer than 16384 bytes"
	                                                    : "the output ended before a blank line after the headers")
	                            : parse(buf, head, &hs);
	if (bad != NULL) {
		cgi_log("bad answer of the program to", method, path, bad);
		cgi_fail(502, "csrf-cgi: the program did not answer with CGI headers");
		return -1;
	}
	const line *ct = hs.content_type, *ce = hs.content_encoding;
	csrf_response_verdict v =
	    conf->inject ? csrf_response_begin(conf->ctx, method, strlen(method), status_of(&hs), ct ? ct->value : NULL,
	                                       ct ? ct->value_len : 0, ce ? ce->value : NULL, ce ? ce->value_len : 0)
	                 : CSRF_RESPONSE_PASS;
	csrf_response *resp = NULL;
	csrf_header h[HEADERS_MAX];
	as_library(&hs, h);
	const char *p = buf + head; /* the body bytes in hand */
	size_t n = got - head;
	unsigned char action[HEADERS_MAX];
	csrf_slice value[HEADERS_MAX];
	csrf_header add[CSRF_RESPONSE_ADD_MAX];
	size_t n_add = 0;
	int inject = 0;
	if (v == CSRF_RESPONSE_COMPRESSED)
		cgi_log("page passed without tokens for", method, path, "it came compressed");
	if (v == CSRF_RESPONSE_INJECT &&
	    csrf_response_init(mem, sizeof mem, conf->ctx, ct->value, ct->value_len, &resp) == CSRF_OK) {
		/* the body's first bytes wait until the charset is known */
		for (int end = 0;;) {
			size_t used;
			csrf_charset_verdict cv = csrf_response_hold(resp, p, n, end, &used);
			p += used;
			n -= used;
			if (cv != CSRF_CHARSET_MORE) {
				inject = cv == CSRF_CHARSET_INJECT;
				break;
			}
			ssize_t k = read_some(fd, chunk, sizeof chunk);
			p = chunk;
			n = k > 0 ? (size_t)k : 0;
			end = k <= 0;
		}
		/* a page without tokens is safe to send: its forms will be
		 * rejected, never let through */
		if (inject && csrf_response_headers(resp, req, h, hs.n, action, value, add, &n_add) != CSRF_OK)
			inject = 0;
		if (!inject)
			log_response(resp, method, path);
	}
	unsigned char raise[HEADERS_MAX] = {0};
	/* referrer_same_origin: the Referrer-Policy lines that together say
	 * no-referrer say same-origin instead */
	if (conf->referrer_same_origin && csrf_response_referrer(h, hs.n, raise) != CSRF_OK)
		memset(raise, 0, sizeof raise); /* not expected: parse made the lines */
	put_headers(&hs, inject ? action : NULL, value, add, inject ? n_add : 0, raise);
	csrf_slice held = resp ? csrf_response_held(resp) : (csrf_slice){NULL, 0};
	csrf_response *through = inject ? resp : NULL;
	int rc = put_body(through, held.ptr, held.len);
	while (rc == 0) {
		rc = put_body(through, p, n);
		ssize_t k = read_some(fd, chunk, sizeof chunk);
		if (k <= 0)
			break;
		p = chunk;
		n = (size_t)k;
	}
	if (inject) {
		unsigned status;
		if (csrf_response_end(resp, emit, NULL, &status) != CSRF_OK || fflush(stdout) != 0)
			rc = -1;
		log_response(resp, method, path);
	}
	cgi_metrics_response(v, resp);
	if (resp)
		csrf_response_wipe(resp);
	return rc;
}

int cgi_run(const cgi_conf *conf, csrf_request *req, const char *program, int body_fd, const char *method,
            const char *path)
{
	int out[2];
	pid_t pid;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t dfl;
	char *args[] = {(char *)program, NULL};

	if (pipe2(out, O_CLOEXEC) != 0) {
		cgi_log("cannot run the program for", method, path, strerror(errno));
		cgi_fail(500, "csrf-cgi: cannot run the program");
		return 1;
	}
	/* csrf-cgi ignores SIGPIPE (a client that goes away is an error
	 * return); the program gets the default back. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigdefault(&attr, &dfl);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
	if (body_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, body_fd, STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
	int err = posix_spawn(&pid, program, &fa, &attr, args, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(out[1]);
	if (err != 0) {
		close(out[0]);
		char what[512];
		snprintf(what, sizeof what, "%s: %s", program, strerror(err));
		cgi_log("cannot run the program for", method, path, what);
		cgi_fail(500, "csrf-cgi: cannot run the program");
		return 1;
	}
	/* When relaying stops early (a bad answer, a client gone) the
	 * program's next write fails and it ends; its status is kept. */
	relay(conf, req, out[0], method, path);
	close(out[0]);
	int ws;
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR)
			return 1;
	if (WIFSIGNALED(ws)) {
		char what[64];
		snprintf(what, sizeof what, "the program was killed by signal %d", WTERMSIG(ws));
		cgi_log("after", method, path, what);
		return 128 + WTERMSIG(ws);
	}
	return WEXITSTATUS(ws);
}
