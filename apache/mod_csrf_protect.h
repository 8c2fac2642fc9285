/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mod_csrf_protect.h - what the files of mod_csrf_protect (Apache httpd
 * 2.4, module csrf_protect_module) share. The name keeps clear of the
 * older, unrelated mod_csrf.
 *
 *   mod_csrf_protect.c      directives, configuration, the library
 *                           contexts, the counters and their handler
 *   csrf_protect_request.c  the verdict (fixups), the body read and
 *                           replayed, the rejection's own answer
 *   csrf_protect_response.c the output filter: the response exchange
 */

#ifndef MOD_CSRF_PROTECT_H
#define MOD_CSRF_PROTECT_H

#include "apr_strings.h"
#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "util_filter.h"

#include "csrf.h"

#define CSRF_PROTECT_UNSET (-1)
#define CSRF_PROTECT_DENY 0
#define CSRF_PROTECT_LOG 1

/* The body replay filter and the injecting output filter, by name. */
#define CSRF_PROTECT_BODY_FILTER "CSRF_PROTECT_BODY"
#define CSRF_PROTECT_FILTER "CSRF_PROTECT"
#define CSRF_PROTECT_REJECT_FILTER "CSRF_PROTECT_REJECT"
#define CSRF_PROTECT_CACHE_FILTER "CSRF_PROTECT_CACHE"
/* The request note LogFormat reads as %{csrf_result}n. */
#define CSRF_PROTECT_NOTE "csrf_result"

typedef struct {
	const char *method; /* NULL: every unsafe method */
	const char *path;
} csrf_protect_exempt;

/* Per-directory configuration: CSRF_PROTECT_UNSET (NULL for the strings
 * and lists) where a section says nothing; csrf_protect_merge fills in
 * the parent's, csrf_protect_settled the defaults. */
typedef struct {
	int enable;
	int mode;
	int action;
	int inject;
	int unsafe_get;
	int form_action_csp;
	int referrer_same_origin;
	int retry_token;
	int status;
	int issue_version; /* CSRFIssueVersion: 4, or 3 or 2 through a fleet's upgrade */
	apr_off_t body_max;
	apr_int64_t max_age;
	const char *origin;
	const char *key_file;
	apr_array_header_t *trusted; /* of const char *; a section's list replaces its parent's */
	apr_array_header_t *session; /* of const char * */
	apr_array_header_t *exempt;  /* of csrf_protect_exempt */
} csrf_protect_conf;

/* What one request's verdict keeps. It lives in the request that was
 * judged; an internal redirect (ErrorDocument, mod_rewrite's handler,
 * a module's ap_internal_redirect) or a subrequest finds it through
 * r->prev and r->main: a rejected request stays rejected wherever it goes
 * next, and only the module's answer is ever sent for it. */
typedef struct {
	csrf_request req; /* slices into the request's headers and the read body */
	char body_size[24];
	csrf_ctx *ctx; /* the context that judged (NULL: none could be built) */
	csrf_reason reason;
	unsigned status; /* the rejection's */
	/* the settings the last fixups judged by (r->per_dir_config): the
	 * handler judges again only when they changed since */
	const void *judged_conf;
	/* the last settings settled and context looked up for a request of
	 * this one (memo_dir: its r->per_dir_config), which the output
	 * filter reuses for the same settings instead of a second lookup */
	const void *memo_dir;
	const csrf_protect_conf *memo_conf;
	csrf_ctx *memo_ctx;
	int checked;
	int rejected;
	int report_only;
	/* the body read for the library, replayed to the handler; an internal
	 * redirect drops request filters, so the next request gets it again */
	void *replay;
	/* the client's Accept-Encoding while the handler sees "identity" */
	const char *accept_encoding;
	int identity;
} csrf_protect_state;

/* The one symbol the module exports (it builds with hidden visibility). */
extern module AP_MODULE_DECLARE_DATA csrf_protect_module __attribute__((visibility("default")));

/* mod_csrf_protect.c */
/* The directory's settings with the defaults filled in (a copy in p). */
csrf_protect_conf *csrf_protect_settled(apr_pool_t *p, const csrf_protect_conf *conf);
/* The library context for settled settings, built once per process and
 * set of settings (NULL when it cannot be built: fail closed). */
csrf_ctx *csrf_protect_ctx(request_rec *r, const csrf_protect_conf *settled);
/* This process's word on a context's session cookies (0 nothing yet,
 * CSRF_PROTECT_SESSION_SEEN, CSRF_PROTECT_SESSION_WARNED); set != 0
 * records one. */
#define CSRF_PROTECT_SESSION_SEEN 1
#define CSRF_PROTECT_SESSION_WARNED 2
int csrf_protect_session_state(const csrf_ctx *ctx, int set);
/* Counting into the counters shared by every child (no-ops before
 * post_config made them). */
void csrf_protect_count_check(const csrf_result *res);
void csrf_protect_count(csrf_metrics_verdict verdict, csrf_reason reason);
void csrf_protect_count_response(csrf_response_verdict verdict, const csrf_response *resp);

/* csrf_protect_request.c */
int csrf_protect_fixups(request_rec *r);
int csrf_protect_reject_handler(request_rec *r);
apr_status_t csrf_protect_reject_filter(ap_filter_t *f, apr_bucket_brigade *bb);
apr_status_t csrf_protect_body_filter(ap_filter_t *f, apr_bucket_brigade *bb, ap_input_mode_t mode,
                                      apr_read_type_e block, apr_off_t readbytes);
/* The verdict r (or the request it came from) carries; NULL: none. */
csrf_protect_state *csrf_protect_state_of(request_rec *r);
/* The settings settled for r's per-directory configuration by the
 * request side and the context looked up for them (NULL: none kept for
 * these settings; a subrequest keeps none); csrf_protect_memo keeps them. */
void csrf_protect_memo(request_rec *r, csrf_protect_state *st, const csrf_protect_conf *c, csrf_ctx *ctx);
const csrf_protect_conf *csrf_protect_memo_of(request_rec *r, csrf_protect_state *st, csrf_ctx **ctx);
/* The request as the library reads it. */
void csrf_protect_request(request_rec *r, csrf_request *req);

/* csrf_protect_response.c */
void csrf_protect_insert_filter(request_rec *r);
apr_status_t csrf_protect_output_filter(ap_filter_t *f, apr_bucket_brigade *bb);
apr_status_t csrf_protect_cache_filter(ap_filter_t *f, apr_bucket_brigade *bb);

/* A log line of the module: the message, then the client. No request is
 * handed to the error log, so that the Referer it would append (a form an
 * application serialises into a URL puts the token there) never is. */
#define csrf_protect_log(level, r, fmt, ...)                                                                           \
	ap_log_error(APLOG_MARK, level, 0, (r)->server, "csrf: " fmt ", client: %s", __VA_ARGS__, (r)->useragent_ip)

#endif /* MOD_CSRF_PROTECT_H */
