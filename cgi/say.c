/*
 * say.c - what csrf-cgi says by itself: the short answer when it fails
 * (configuration, a program that cannot run) and its lines in the
 * server's error log. csrf-cgi.c and run.c both use it; it uses neither.
 */
#include <stdio.h>

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

/* The rejection: the library's page, with its CSP; never the program. The
 * log line comes first, so it is written when the client has the answer. */
void cgi_reject(csrf_reason reason, unsigned status, const char *method, const char *path)
{
	char page[CSRF_REJECT_PAGE_MAX];
	size_t len = 0;
	cgi_log("rejected", method, path, csrf_reason_name(reason));
	if (csrf_reject_page(reason, status, page, sizeof page, &len) != CSRF_OK)
		len = 0;
	printf("Status: %u %s\r\nContent-Type: text/html; charset=utf-8\r\nContent-Security-Policy: %s\r\n"
	       "Cache-Control: no-store\r\nContent-Length: %zu\r\n\r\n",
	       status, reason_phrase(status), CSRF_REJECT_PAGE_CSP, len);
	fwrite(page, 1, len, stdout);
	fflush(stdout);
}
