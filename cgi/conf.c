/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * conf.c - csrf-cgi's configuration file: one directive a line, words
 * separated by spaces or tabs, '#' starting a comment; the nginx module's
 * directives without their csrf_ prefix. Values the library takes are
 * judged by the library (its message comes from csrf_ctx_error); this
 * file splits lines, counts arguments and reads keywords and numbers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgi.h"
#include "csrfx.h"

#define ARGS_MAX CSRF_SESSION_COOKIES_MAX /* session_cookie takes the most */
#define MSG_MAX 384

/* One word of a keyword directive and the value it stands for. */
typedef struct {
	const char *word;
	int value;
} keyword;

static const keyword modes[] = {{"both", CSRF_MODE_BOTH},
                                {"token", CSRF_MODE_TOKEN},
                                {"origin", CSRF_MODE_ORIGIN},
                                {"origin_or_token", CSRF_MODE_ORIGIN_OR_TOKEN},
                                {NULL, 0}};
static const keyword actions[] = {{"deny", 0}, {"log", 1}, {NULL, 0}};
static const keyword flags[] = {{"on", 1}, {"off", 0}, {NULL, 0}};

/* The value of word in table, or -1 after a message listing the words. */
static int pick(const char *directive, const char *word, const keyword *table, char *msg)
{
	for (const keyword *k = table; k->word; k++)
		if (strcmp(word, k->word) == 0)
			return k->value;
	size_t len = (size_t)snprintf(msg, MSG_MAX, "%s takes one of", directive);
	for (const keyword *k = table; k->word && len < MSG_MAX; k++)
		len += (size_t)snprintf(msg + len, MSG_MAX - len, " %s", k->word);
	return -1;
}

int cgi_parse_number(const char *s, size_t len, uint64_t max, const char *units, uint64_t *out)
{
	uint64_t v, unit = 1;
	if (len > 1 && units && (s[len - 1] < '0' || s[len - 1] > '9')) {
		const char *u = strchr(units, s[len - 1]);
		if (u == NULL)
			return -1;
		unit = 0;
		for (u++; *u >= '0' && *u <= '9'; u++)
			unit = unit * 10 + (uint64_t)(*u - '0'); /* of the literal units table */
		len--;
	}
	if (unit == 0 || csrfx_parse_u64(s, len, max / unit, &v) != CSRF_OK)
		return -1;
	*out = v * unit;
	return 0;
}

/* What a handler is given: the directive's arguments and room for a
 * message. */
typedef struct {
	char **a;
	size_t n;
	char *msg;
} args;

/* NULL for CSRF_OK, else the library's message for the configuration
 * call that failed. */
static const char *library(cgi_conf *c, csrf_reason r)
{
	const char *m = csrf_ctx_error(c->ctx);
	return r == CSRF_OK ? NULL : m[0] ? m : csrf_reason_str(r);
}

static const char *d_origin(cgi_conf *c, args *x)
{
	return library(c, csrf_ctx_set_self_origin(c->ctx, x->a[0], strlen(x->a[0])));
}

static const char *d_key_file(cgi_conf *c, args *x)
{
	return library(c, csrf_ctx_load_key_file(c->ctx, x->a[0]));
}

/* Appends a copy of s to the list *v of *n strings; NULL or "out of memory". */
static const char *keep(char ***v, size_t *n, const char *s)
{
	char **more = realloc(*v, (*n + 1) * sizeof *more);
	if (more == NULL)
		return "out of memory";
	*v = more;
	more[*n] = strdup(s);
	if (more[*n] == NULL)
		return "out of memory";
	(*n)++;
	return NULL;
}

static const char *d_trusted_origin(cgi_conf *c, args *x)
{
	/* the context keeps them, for the check and for the policy */
	return library(c, csrf_ctx_add_trusted_origin(c->ctx, x->a[0], strlen(x->a[0])));
}

static const char *d_exempt(cgi_conf *c, args *x)
{
	const char *path = x->a[x->n - 1];
	return library(c, csrf_ctx_add_exemption(c->ctx, x->n == 2 ? x->a[0] : NULL, path, strlen(path)));
}

/* One name, or several for a program that names its cookie per scheme:
 * the token is bound to every one of them the browser sends (csrf.h). */
static const char *d_session_cookie(cgi_conf *c, args *x)
{
	c->session_cookie = 1;
	const char *err = library(c, csrf_ctx_set_session_cookie(c->ctx, x->a[0]));
	for (size_t i = 1; err == NULL && i < x->n; i++)
		err = library(c, csrf_ctx_add_session_cookie(c->ctx, x->a[i]));
	return err;
}

static const char *d_mode(cgi_conf *c, args *x)
{
	int m = pick("mode", x->a[0], modes, x->msg);
	if (m < 0)
		return x->msg;
	csrf_ctx_set_mode(c->ctx, (csrf_mode)m);
	return NULL;
}

static const char *d_action(cgi_conf *c, args *x)
{
	int v = pick("action", x->a[0], actions, x->msg);
	if (v < 0)
		return x->msg;
	csrf_ctx_set_report_only(c->ctx, v);
	return NULL;
}

static const char *d_inject(cgi_conf *c, args *x)
{
	int v = pick("inject", x->a[0], flags, x->msg);
	if (v < 0)
		return x->msg;
	c->inject = v;
	return NULL;
}

static const char *d_form_action_csp(cgi_conf *c, args *x)
{
	int v = pick("form_action_csp", x->a[0], flags, x->msg);
	if (v < 0)
		return x->msg;
	csrf_ctx_set_form_action_csp(c->ctx, v);
	return NULL;
}

/* A program's no-referrer policy raised to same-origin (off by default):
 * its own forms then send their Origin instead of null. */
static const char *d_referrer_same_origin(cgi_conf *c, args *x)
{
	int v = pick("referrer_same_origin", x->a[0], flags, x->msg);
	if (v < 0)
		return x->msg;
	c->referrer_same_origin = v;
	csrf_ctx_set_referrer_same_origin(c->ctx, v);
	return NULL;
}

/* The self-healing retry: a 403 for a stale token carries a fresh one
 * (csrf_retry_prepare). Off by default. */
static const char *d_retry_token(cgi_conf *c, args *x)
{
	int v = pick("retry_token", x->a[0], flags, x->msg);
	if (v < 0)
		return x->msg;
	csrf_ctx_set_retry_token(c->ctx, v);
	return NULL;
}

/* A path as the request's path is compared with it: from '/', no query,
 * fragment, space or control. */
static const char *d_unsafe_get(cgi_conf *c, args *x)
{
	const char *path = x->a[0];
	if (path[0] != '/' || strpbrk(path, "?#") != NULL)
		return "unsafe_get takes a path that starts with '/' and has no '?' or '#'";
	for (const char *p = path; *p; p++)
		if ((unsigned char)*p < 0x21 || *p == 0x7f)
			return "unsafe_get takes a path without control characters";
	return keep(&c->unsafe_get, &c->n_unsafe_get, path);
}

static const char *d_max_age(cgi_conf *c, args *x)
{
	uint64_t v;
	if (cgi_parse_number(x->a[0], strlen(x->a[0]), UINT32_MAX, "s1m60h3600d86400", &v) != 0)
		return "max_age takes seconds (or a number with s, m, h or d), at most 4294967295 s";
	csrf_ctx_set_max_age(c->ctx, (uint32_t)v);
	return NULL;
}

/* The version of the tokens issued: 4, or 3 (or 2) while a fleet
 * upgrades from a release that reads up to 3 (or 2) only
 * (docs/architecture.md). */
static const char *d_issue_version(cgi_conf *c, args *x)
{
	/* one character; the library alone knows which versions it issues */
	const char *v = x->a[0];
	if (v[0] == '\0' || v[1] != '\0' || csrf_ctx_set_issue_version(c->ctx, (unsigned)(v[0] - '0')) != CSRF_OK)
		return "issue_version takes 2, 3 or 4";
	return NULL;
}

static const char *d_body_max(cgi_conf *c, args *x)
{
	uint64_t v;
	if (cgi_parse_number(x->a[0], strlen(x->a[0]), SIZE_MAX, "k1024K1024m1048576M1048576", &v) != 0 || v == 0)
		return "body_max takes a size in bytes (or with k or m), at least 1";
	csrf_ctx_set_body_max(c->ctx, (size_t)v);
	return NULL;
}

/* The optional counters file: an absolute path. */
static const char *d_metrics_file(cgi_conf *c, args *x)
{
	if (x->a[0][0] != '/')
		return "metrics_file takes an absolute path";
	free(c->metrics_file);
	c->metrics_file = strdup(x->a[0]);
	return c->metrics_file ? NULL : "out of memory";
}

static const struct {
	const char *name;
	size_t min, max;
	int repeatable;
	const char *(*fn)(cgi_conf *c, args *x);
} directives[] = {
    {"origin", 1, 1, 0, d_origin},
    {"key_file", 1, 1, 0, d_key_file}, /* D_KEY_FILE */
    {"trusted_origin", 1, 1, 1, d_trusted_origin},
    {"mode", 1, 1, 0, d_mode},
    {"unsafe_get", 1, 1, 1, d_unsafe_get},
    {"exempt", 1, 2, 1, d_exempt},
    {"session_cookie", 1, CSRF_SESSION_COOKIES_MAX, 0, d_session_cookie},
    {"max_age", 1, 1, 0, d_max_age},
    {"issue_version", 1, 1, 0, d_issue_version},
    {"body_max", 1, 1, 0, d_body_max},
    {"action", 1, 1, 0, d_action},
    {"inject", 1, 1, 0, d_inject},
    {"form_action_csp", 1, 1, 0, d_form_action_csp},
    {"retry_token", 1, 1, 0, d_retry_token},
    {"metrics_file", 1, 1, 0, d_metrics_file},
    {"referrer_same_origin", 1, 1, 0, d_referrer_same_origin},
};
#define N_DIRECTIVES (sizeof directives / sizeof directives[0])
#define D_KEY_FILE 1

/* One line: NULL when it is good (or empty), else what is wrong. seen
 * counts the directives met so far. */
static const char *line(cgi_conf *c, char *s, unsigned *seen, char *msg)
{
	char *word[1 + ARGS_MAX + 1];
	size_t n = 0;
	for (char *p = s;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			*p++ = '\0';
		if (*p == '\0' || *p == '#')
			break;
		if (n == sizeof word / sizeof word[0])
			return "too many arguments";
		word[n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
			p++;
	}
	if (n == 0)
		return NULL;
	for (size_t i = 0; i < N_DIRECTIVES; i++) {
		if (strcmp(word[0], directives[i].name) != 0)
			continue;
		if (n - 1 < directives[i].min || n - 1 > directives[i].max) {
			char more[32] = "";
			if (directives[i].max == directives[i].min + 1)
				snprintf(more, sizeof more, " or %zu", directives[i].max);
			else if (directives[i].max > directives[i].min)
				snprintf(more, sizeof more, " to %zu", directives[i].max);
			snprintf(msg, MSG_MAX, "%s takes %zu%s argument%s", word[0], directives[i].min, more,
			         directives[i].max > 1 ? "s" : "");
			return msg;
		}
		if (!directives[i].repeatable && (seen[i]++ > 0)) {
			snprintf(msg, MSG_MAX, "%s is duplicate", word[0]);
			return msg;
		}
		args x = {word + 1, n - 1, msg};
		return directives[i].fn(c, &x);
	}
	snprintf(msg, MSG_MAX, "unknown directive \"%.64s\"", word[0]);
	return msg;
}

int cgi_conf_load(cgi_conf *c, const char *path)
{
	char buf[CGI_CONF_LINE_MAX + 2], msg[MSG_MAX];
	unsigned seen[N_DIRECTIVES] = {0};
	const char *err = NULL;
	unsigned lineno = 0;

	memset(c, 0, sizeof *c);
	c->inject = 1;
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		fprintf(stderr, CGI_NAME ": %s: cannot read the configuration: %s\n", path, strerror(errno));
		return -1;
	}
	if (csrf_ctx_new(&c->ctx, NULL) != CSRF_OK) {
		fclose(f);
		fprintf(stderr, CGI_NAME ": cannot create the libcsrf context\n");
		return -1;
	}
	csrf_ctx_set_mode(c->ctx, CSRF_MODE_ADAPTER_DEFAULT);
	while (err == NULL && fgets(buf, sizeof buf, f) != NULL) {
		lineno++;
		size_t len = strlen(buf);
		if (len == sizeof buf - 1 && buf[len - 1] != '\n')
			err = "line longer than 1024 bytes";
		else
			err = line(c, buf, seen, msg);
	}
	if (err == NULL && ferror(f))
		err = "read error";
	fclose(f);
	if (err == NULL && seen[D_KEY_FILE] == 0) {
		/* Each request is a new process: a key made at start would
		 * change with every request and no token would verify. */
		fprintf(stderr,
		        CGI_NAME ": %s: no key_file (csrf-cgi runs once per request and needs the key every request "
		                 "shares; make one with: csrf-key new FILE)\n",
		        path);
		cgi_conf_free(c);
		return -1;
	}
	if (err != NULL) {
		fprintf(stderr, CGI_NAME ": %s:%u: %s\n", path, lineno, err);
		cgi_conf_free(c);
		return -1;
	}
	return 0;
}

void cgi_conf_free(cgi_conf *c)
{
	for (size_t i = 0; i < c->n_unsafe_get; i++)
		free(c->unsafe_get[i]);
	free(c->unsafe_get);
	free(c->metrics_file);
	csrf_ctx_free(c->ctx);
	memset(c, 0, sizeof *c);
}

int cgi_conf_unsafe_get(const cgi_conf *c, const char *script_name, const char *path, size_t len)
{
	for (size_t i = 0; i < c->n_unsafe_get; i++) {
		const char *e = c->unsafe_get[i];
		size_t n = strlen(e);
		if (script_name != NULL && strcmp(script_name, e) == 0)
			return 1;
		if (len >= n && memcmp(path, e, n) == 0 && (len == n || path[n] == '/' || e[n - 1] == '/'))
			return 1;
	}
	return 0;
}
