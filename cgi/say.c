/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * say.c - what csrf-cgi says by itself: the short answer when it fails
 * (configuration, a program that cannot run) and its lines in the
 * server's error log. csrf-cgi.c and run.c both use it; it uses neither.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgi.h"

static const char *reason_phrase(unsigned status)
{
	switch (status) {
	case 400:
		return "Bad Request";
	case 403:
		return "Forbidden";
	case 413:
		return "Content Too Large";
	case 502:
		return "Bad Gateway";
	default:
		return "Internal Server Error";
	}
}

void cgi_fail(unsigned status, const char *text)
{
	printf("Status: %u %s\r\nContent-Type: text/plain; charset=utf-8\r\nCache-Control: no-store\r\n\r\n%s\n",
	       status, reason_phrase(status), text);
	fflush(stdout);
}

static void log_escaped(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x21 || *p > 0x7e || *p == '\\')
			fprintf(stderr, "\\x%02x", *p);
		else
			fputc(*p, stderr);
	}
}

void cgi_log(const char *what, const char *method, const char *path, const char *detail)
{
	fputs(CGI_NAME ": ", stderr);
	fputs(what, stderr);
	fputc(' ', stderr);
	log_escaped(method);
	fputc(' ', stderr);
	log_escaped(path);
	fprintf(stderr, ": %s\n", detail);
}

/* The rejection: the library's answer (csrf_reject_answer: status,
 * headers, page, and the retry token when the context offers one); never
 * the program. The log line comes first, so it is written when the client
 * has the answer. */
void cgi_reject(const cgi_conf *conf, const csrf_request *req, csrf_reason reason, unsigned status, const char *method,
                const char *path)
{
	static csrf_reject_answer_t a;
	cgi_log("rejected", method, path, csrf_reason_name(reason));
	if (csrf_reject_answer(conf ? conf->ctx : NULL, req, reason, status, &a) != CSRF_OK) {
		cgi_fail(status, "csrf-cgi: request rejected");
		return;
	}
	if (a.retry)
		cgi_log("offered a fresh token to", method, path, csrf_reason_name(reason));
	printf("Status: %u %s\r\n", a.status, reason_phrase(a.status));
	for (size_t i = 0; i < a.n_headers; i++)
		printf("%.*s: %.*s\r\n", (int)a.headers[i].name.len, a.headers[i].name.ptr, (int)a.headers[i].value.len,
		       a.headers[i].value.ptr);
	printf("Content-Length: %zu\r\n\r\n", a.body_len);
	fwrite(a.body, 1, a.body_len, stdout);
	fflush(stdout);
	csrf_reject_answer_wipe(&a);
}
