/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cgi.h - what the files of csrf-cgi share: the configuration file
 * (conf.c), running the protected program and relaying its answer
 * (run.c), the answers csrf-cgi makes itself (csrf-cgi.c), and the
 * optional counters file (metrics.c).
 */
#ifndef CSRF_CGI_H
#define CSRF_CGI_H

#include <stddef.h>
#include <stdint.h>

#include "csrf.h"

#define CGI_NAME "csrf-cgi"
#define CGI_DEFAULT_CONFIG "/etc/csrf-cgi.conf"
#define CGI_CONF_LINE_MAX 1024 /* longest configuration line, bytes */

typedef struct {
	csrf_ctx *ctx;      /* the library's context, as the file configures it */
	int inject;         /* inject on (default) | off */
	int session_cookie; /* session_cookie given: REMOTE_USER is not the session */
	char **unsafe_get;  /* unsafe_get paths (see cgi_conf_unsafe_get) */
	size_t n_unsafe_get;
	/* the mode, the body limit, the trusted origins, form_action_csp
	 * (off by default) and retry_token live in ctx */
	int referrer_same_origin; /* referrer_same_origin on | off (default): raise no-referrer */
	char *metrics_file;       /* metrics_file: the counters file, or NULL (none) */
} cgi_conf;

/* Reads the configuration file at path into conf (zeroed here; conf->ctx
 * a new context). 0, or -1 after one line on stderr that names the file
 * and line and says what is wrong; conf is then freed. */
int cgi_conf_load(cgi_conf *conf, const char *path);

/* Frees what cgi_conf_load made. */
void cgi_conf_free(cgi_conf *conf);

/* 1 when the request runs one of the unsafe_get programs: SCRIPT_NAME is
 * one of the paths, or path[0..len) (SCRIPT_NAME PATH_INFO) is one or lies
 * below one ("/cgi-bin/reset.cgi/x" runs reset.cgi as well). */
int cgi_conf_unsafe_get(const cgi_conf *conf, const char *script_name, const char *path, size_t len);

/* A strict decimal (digits only, no leading zero but "0") of at most max,
 * with an optional one-letter unit from units ("k1024m1048576": letter,
 * multiplier, ...; NULL for none). 0 and *out, or -1. */
int cgi_parse_number(const char *s, size_t len, uint64_t max, const char *units, uint64_t *out);

/* Answers the request with status and a short text (no newline needed)
 * when csrf-cgi itself fails (configuration, a program that cannot run or
 * answers no CGI headers). */
void cgi_fail(unsigned status, const char *text);

/* Writes one line to stderr (the server's error log): "csrf-cgi: " then
 * what, with every byte outside printable ASCII of the request's method
 * and path shown as \xNN, so a request cannot forge log lines. */
void cgi_log(const char *what, const char *method, const char *path, const char *detail);

/* Answers a request the library rejected with its rejection page (and
 * CSP) and logs the reason's name; the program never runs. With conf and
 * req, and retry_token on, a stale token's 403 carries a fresh one (page
 * and X-CSRF-Token) when csrf_retry_prepare allows it; NULL: never. */
void cgi_reject(const cgi_conf *conf, const csrf_request *req, csrf_reason reason, unsigned status, const char *method,
                const char *path);

/* Runs program with this process's environment and, as its standard
 * input, body_fd (or the inherited one when -1); relays its CGI answer to
 * standard output: headers parsed and passed on (Status first), each
 * Set-Cookie shown to the library, and an HTML body streamed through the
 * library's injector when conf asks for tokens. Answers 500 when the
 * program cannot run and 502 when it prints no valid CGI headers. Returns
 * the exit status csrf-cgi should end with: the program's own. */
int cgi_run(const cgi_conf *conf, csrf_request *req, const char *program, int body_fd, const char *method,
            const char *path);

/* This request's counts (metrics.c), kept in memory until
 * cgi_metrics_flush: csrf_check's final answer, a verdict reached without
 * it, the response by the outcome of its exchange
 * (csrf_metrics_count_response). */
void cgi_metrics_check(const csrf_result *res);
void cgi_metrics_verdict(csrf_metrics_verdict verdict, csrf_reason reason);
void cgi_metrics_response(csrf_response_verdict verdict, const csrf_response *resp);

/* Adds this request's counts to the counters file at path (created mode
 * 0640 when missing; restarted when it holds another layout) under an
 * exclusive flock. NULL path or nothing counted: nothing done. 0, or -1
 * after a line on stderr; the request's answer is never affected. */
int cgi_metrics_flush(const char *path);

/* csrf-cgi --metrics FILE: prints the counters file in the Prometheus text
 * format on stdout. The exit status: 0, or 1 after a line on stderr. */
int cgi_metrics_print(const char *path);

#endif /* CSRF_CGI_H */
