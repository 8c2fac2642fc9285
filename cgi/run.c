/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * run.c - the protected program: started with the request's environment
 * and body, its CGI headers read and passed on (Status first, which
 * busybox httpd needs), each Set-Cookie shown to the library, and an HTML
 * body streamed through the library's injector as it is read (bounded
 * memory: only the first bytes, at most CSRF_CHARSET_PRESCAN_MAX, wait
 * until the page's charset is known), with the form-action policy.
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
 * what is wrong. Set-Cookie values go to the library as they are met. */
static const char *parse(const cgi_conf *conf, csrf_request *req, char *buf, size_t len, headers *hs)
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
		if (is_named(l, "Set-Cookie"))
			csrf_response_cookie(conf->ctx, req, l->value, l->value_len);
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

/* 1 when the answer is an HTML page the injector should see (the
 * library's rule). */
static int is_html(const headers *hs)
{
	const line *ct = hs->content_type, *ce = hs->content_encoding;
	return ct != NULL && csrf_response_injectable(status_of(hs), ct->value, ct->value_len, ce ? ce->value : NULL,
	                                              ce ? ce->value_len : 0);
}

/* Headers an injected page must not keep: its length and validators
 * change. */
static int dropped_when_injecting(const line *l)
{
	return is_named(l, "Content-Length") || is_named(l, "ETag") || is_named(l, "Last-Modified") ||
	       is_named(l, "Accept-Ranges");
}

/* The library's cache rule for a page with a token
 * (csrf_response_cache): which of the program's headers go (drop, one a
 * header) and the Cache-Control that comes (*add, absent for none).
 * -1 when the library refuses them (not expected: parse made them). */
static int cache_rule(const headers *hs, unsigned char *drop, csrf_slice *add)
{
	csrf_header h[HEADERS_MAX];
	for (size_t i = 0; i < hs->n; i++) {
		h[i].name = (csrf_slice){hs->h[i].name, hs->h[i].name_len};
		h[i].value = (csrf_slice){hs->h[i].value, hs->h[i].value_len};
	}
	return csrf_response_cache(h, hs->n, drop, add) == CSRF_OK ? 0 : -1;
}

static void put_line(const char *name, size_t name_len, const char *value, size_t value_len)
{
	fwrite(name, 1, name_len, stdout);
	fwrite(": ", 1, 2, stdout);
	fwrite(value, 1, value_len, stdout);
	fwrite("\r\n", 1, 2, stdout);
}

/* With a page, drop and add are the cache rule's. */
static void put_headers(const cgi_conf *conf, const headers *hs, const csrf_page *page, const unsigned char *drop,
                        csrf_slice add)
{
	if (hs->status != NULL)
		put_line("Status", 6, hs->status->value, hs->status->value_len);
	for (size_t i = 0; i < hs->n; i++) {
		const line *l = &hs->h[i];
		if (l != hs->status && !(page != NULL && (drop[i] || dropped_when_injecting(l))))
			put_line(l->name, l->name_len, l->value, l->value_len);
	}
	if (page != NULL) {
		if (page->set_cookie_len > 0)
			put_line("Set-Cookie", 10, page->set_cookie, page->set_cookie_len);
		put_line("Vary", 4, "Cookie", 6);
		/* Beside any policy of the program's: the browser enforces both. */
		if (conf->csp != NULL)
			put_line("Content-Security-Policy", 23, conf->csp, strlen(conf->csp));
		if (add.ptr != NULL)
			put_line("Cache-Control", 13, add.ptr, add.len);
	}
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

/* One line when the injector held a token back from a form, or stopped,
 * with its reasons (the library's words). */
static void log_held_back(unsigned status, const char *method, const char *path)
{
	char why[CSRF_INJECT_STATUS_TEXT_MAX]; /* every reason's phrase at once fits */
	size_t len = 0;
	why[0] = '\0';
	for (unsigned bit = 1; bit != 0 && status != 0; bit <<= 1) {
		if ((status & bit) == 0)
			continue;
		int n = snprintf(why + len, sizeof why - len, "%s%s", len ? "; " : "", csrf_inject_status_str(bit));
		if (n < 0 || (size_t)n >= sizeof why - len)
			break;
		len += (size_t)n;
		status &= ~bit;
	}
	if (len > 0)
		cgi_log("not every form got a token in", method, path, why);
}

/* Reads on until the library can tell the page's charset, as a browser
 * would (at most CSRF_CHARSET_PRESCAN_MAX bytes of the body, or its end),
 * into buf after *got: 1 when the injector can read the page; 0 after a
 * log line when it cannot, and the page then goes out untouched. */
static int readable(int fd, const headers *hs, char *buf, size_t head, size_t *got, const char *method,
                    const char *path)
{
	const line *ct = hs->content_type;
	int complete = 0;
	for (;;) {
		csrf_charset cs;
		if (csrf_charset_sniff(ct->value, ct->value_len, buf + head, *got - head, complete, &cs) != CSRF_OK) {
			cgi_log("page passed without tokens for", method, path, "its charset could not be judged");
			return 0;
		}
		if (cs.verdict == CSRF_CHARSET_INJECT)
			return 1;
		if (cs.verdict == CSRF_CHARSET_PASS) {
			char why[128];
			snprintf(why, sizeof why, "the injector cannot read its charset, %s (from the %s)",
			         cs.encoding ? cs.encoding : "an unknown label", cs.source ? cs.source : "page");
			cgi_log("page passed without tokens for", method, path, why);
			cgi_metrics_passed(CSRF_METRICS_PASS_CHARSET);
			return 0;
		}
		ssize_t n = read_some(fd, buf + *got, head + CSRF_CHARSET_PRESCAN_MAX - *got);
		if (n <= 0)
			complete = 1;
		else
			*got += (size_t)n;
	}
}

/* The body: first the bytes read with the headers, then the rest of the
 * program's output, each piece written (through inj when set) and flushed
 * as it comes. 0, or -1 when the client went away. */
static int relay_body(int fd, const char *first, size_t first_len, csrf_inject *inj, const char *method,
                      const char *path)
{
	static char chunk[CHUNK];
	const char *p = first;
	ssize_t n = (ssize_t)first_len;
	for (;;) {
		if (n > 0) {
			int bad = inj ? csrf_inject_feed(inj, p, (size_t)n, emit, NULL) != CSRF_OK
			              : fwrite(p, 1, (size_t)n, stdout) != (size_t)n;
			if (bad || fflush(stdout) != 0)
				return -1;
		}
		n = read_some(fd, chunk, sizeof chunk);
		p = chunk;
		if (n <= 0)
			break;
	}
	unsigned injected;
	if (inj && (csrf_inject_finish(inj, emit, NULL, &injected) != CSRF_OK || fflush(stdout) != 0))
		return -1;
	if (inj) {
		log_held_back(csrf_inject_status(inj), method, path);
		cgi_metrics_page(injected, csrf_inject_status(inj));
	}
	return 0;
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

/* Answers and relays the program's output; 0 or -1 when csrf-cgi
 * answered an error instead. */
static int relay(const cgi_conf *conf, csrf_request *req, int fd, const char *method, const char *path)
{
	/* Room after the headers for the body bytes the charset needs. */
	static char buf[HEADERS_BYTES + CSRF_CHARSET_PRESCAN_MAX];
	headers hs;
	size_t got, head = read_headers(fd, buf, HEADERS_BYTES, &got);
	const char *bad = head == 0 ? (got == HEADERS_BYTES ? "headers longer than 16384 bytes"
	                                                    : "the output ended before a blank line after the headers")
	                            : parse(conf, req, buf, head, &hs);
	if (bad != NULL) {
		cgi_log("bad answer of the program to", method, path, bad);
		cgi_fail(502, "csrf-cgi: the program did not answer with CGI headers");
		return -1;
	}
	csrf_page page;
	csrf_inject *inj = NULL;
	void *mem = NULL;
	unsigned char drop[HEADERS_MAX] = {0};
	csrf_slice add = {NULL, 0};
	/* HEAD: the server sends no body, so no token, and no cookie */
	int html = conf->inject && conf->tokens && strcmp(method, "HEAD") != 0 && is_html(&hs) &&
	           readable(fd, &hs, buf, head, &got, method, path);
	if (html && cache_rule(&hs, drop, &add) != 0) {
		cgi_log("page without tokens for", method, path, "its cache headers could not be judged");
		html = 0;
	}
	if (html) {
		csrf_reason r = csrf_page_prepare(conf->ctx, req, &page);
		if (r == CSRF_OK) {
			mem = malloc(csrf_inject_size());
			r = mem ? csrf_inject_init(mem, csrf_inject_size(), page.origin, page.origin_len, page.field,
			                           strlen(page.field), page.token, CSRF_TOKEN_LEN, &inj)
			        : CSRF_ERR_NOMEM;
		}
		if (r != CSRF_OK) {
			/* A page without tokens is safe to send: its forms
			 * will be rejected, never let through. */
			cgi_log("page without tokens for", method, path, csrf_reason_name(r));
			html = 0;
		}
	}
	put_headers(conf, &hs, html ? &page : NULL, drop, add);
	int rc = relay_body(fd, buf + head, got - head, html ? inj : NULL, method, path);
	if (html)
		csrf_page_wipe(&page);
	if (mem != NULL) {
		explicit_bzero(mem, csrf_inject_size());
		free(mem);
	}
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
