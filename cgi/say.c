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

/* Appends an injector's output to the sink in ud; non-zero when it is full. */
typedef struct {
	char *out;
	size_t cap, len;
} sink;

static int to_sink(void *ud, const char *p, size_t n, int inserted)
{
	sink *k = ud;
	(void)inserted;
	if (k->len + n > k->cap)
		return 1;
	memcpy(k->out + k->len, p, n);
	k->len += n;
	return 0;
}

/* The self-healing retry (retry_token on): a fresh token for the same
 * session when the library allows one for this rejection, put into the
 * page by the library's injector (its csrf-token meta) and returned for
 * the X-CSRF-Token header. 1 when out holds the page with it. */
static int retry_page(const cgi_conf *conf, const csrf_request *req, csrf_reason reason, const char *page, size_t len,
                      csrf_page *fresh, char *out, size_t cap, size_t *out_len)
{
	if (!conf || !req || csrf_retry_prepare(conf->ctx, req, reason, fresh) != CSRF_OK)
		return 0;
	void *mem = malloc(csrf_inject_size());
	csrf_inject *inj = NULL;
	sink k = {out, cap, 0};
	int ok = mem &&
	         csrf_inject_init(mem, csrf_inject_size(), fresh->origin, fresh->origin_len, fresh->field,
	                          strlen(fresh->field), fresh->token, strlen(fresh->token), &inj) == CSRF_OK &&
	         csrf_inject_feed(inj, page, len, to_sink, &k) == CSRF_OK &&
	         csrf_inject_finish(inj, to_sink, &k, &(unsigned){0}) == CSRF_OK;
	if (mem) {
		explicit_bzero(mem, csrf_inject_size()); /* the injector's copy of the token */
		free(mem);
	}
	if (!ok) {
		csrf_page_wipe(fresh);
		return 0;
	}
	*out_len = k.len;
	return 1;
}

/* The rejection: the library's page, with its CSP; never the program. The
 * log line comes first, so it is written when the client has the answer.
 * With retry_token on and a stale token, the page and an X-CSRF-Token
 * header carry a fresh token (csrf_retry_prepare says when that is safe). */
void cgi_reject(const cgi_conf *conf, const csrf_request *req, csrf_reason reason, unsigned status, const char *method,
                const char *path)
{
	char page[CSRF_REJECT_PAGE_MAX];
	char healed[CSRF_REJECT_PAGE_MAX + 2 * (CSRF_FIELD_NAME_MAX + CSRF_TOKEN_LEN) + 128];
	csrf_page fresh;
	size_t len = 0;
	cgi_log("rejected", method, path, csrf_reason_name(reason));
	if (csrf_reject_page(reason, status, page, sizeof page, &len) != CSRF_OK)
		len = 0;
	const char *body = page;
	int retry = len && retry_page(conf, req, reason, page, len, &fresh, healed, sizeof healed, &len);
	if (retry) {
		body = healed;
		cgi_log("offered a fresh token to", method, path, csrf_reason_name(reason));
	}
	/* The library's cache rule for a rejection (csrf_rejection_cache):
	 * the program never ran, so no header of its can be dropped; the
	 * rule gives the only Cache-Control. */
	csrf_slice cache = {CSRF_REJECT_PAGE_CACHE_CONTROL, sizeof CSRF_REJECT_PAGE_CACHE_CONTROL - 1};
	if (csrf_rejection_cache(NULL, 0, NULL, &cache) != CSRF_OK || cache.ptr == NULL)
		cache = (csrf_slice){CSRF_REJECT_PAGE_CACHE_CONTROL, sizeof CSRF_REJECT_PAGE_CACHE_CONTROL - 1};
	printf("Status: %u %s\r\nContent-Type: text/html; charset=utf-8\r\nContent-Security-Policy: %s\r\n"
	       "Cache-Control: %.*s\r\n",
	       status, reason_phrase(status), CSRF_REJECT_PAGE_CSP, (int)cache.len, cache.ptr);
	if (retry)
		printf("X-CSRF-Token: %s\r\n", fresh.token);
	printf("Content-Length: %zu\r\n\r\n", len);
	fwrite(body, 1, len, stdout);
	fflush(stdout);
	if (retry) {
		csrf_page_wipe(&fresh);
		explicit_bzero(healed, sizeof healed);
	}
}
