/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ngx_http_csrf.h - what the files of ngx_http_csrf_module share: the
 * configuration, the verdict and the request context, the log line, and
 * the functions one phase's file calls in another's.
 *
 *   ngx_http_csrf_module.c  directives and configuration
 *   ngx_http_csrf_access.c  the access phase: verdict, body, redirects
 *   ngx_http_csrf_filter.c  the header and body filters
 *   ngx_http_csrf_output.c  the filters' output bufs (busy/free reclaim)
 *   ngx_http_csrf_metrics.c the counters' shared zone and their endpoint
 *                           (a module of its own in the same object)
 */

#ifndef NGX_HTTP_CSRF_H_INCLUDED_
#define NGX_HTTP_CSRF_H_INCLUDED_

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "csrf.h"

#define NGX_HTTP_CSRF_ACTION_DENY 0
#define NGX_HTTP_CSRF_ACTION_LOG 1

typedef struct {
	ngx_flag_t enable;
	ngx_uint_t mode;
	ngx_str_t origin;
	ngx_array_t *trusted; /* of ngx_str_t */
	ngx_str_t key_file;
	ngx_array_t *session_cookie; /* of ngx_str_t: the names csrf_session_cookie gives */
	ngx_str_t session_names;     /* the same, as written, for the log */
	ngx_flag_t inject;
	ngx_uint_t action;
	size_t body_max;
	ngx_flag_t unsafe_get;
	ngx_int_t status;
	time_t max_age;
	ngx_int_t issue_version; /* csrf_issue_version: 4, or 3 or 2 through a fleet's upgrade */
	ngx_flag_t form_action_csp;
	ngx_flag_t referrer_same_origin;
	ngx_flag_t retry_token;

	csrf_ctx *ctx; /* built in merge when enable is on */

	/* this worker's: a session cookie seen at this location, the warning
	 * about one never seen given */
	ngx_uint_t session_seen;
	ngx_uint_t session_warned;
} ngx_http_csrf_loc_conf_t;

typedef struct {
	uint8_t key[CSRF_KEY_LEN];
	ngx_uint_t have_key;
} ngx_http_csrf_main_conf_t;

/* The verdict on a request. It lives in a cleanup of the request's pool,
 * not in the module's request context, because an internal redirect
 * (error_page, named locations) erases every module context: a rejected
 * request must stay rejected wherever it goes next. */
typedef struct {
	csrf_reason reason;
	csrf_ctx *ctx;     /* the location's context that judged */
	ngx_int_t pending; /* the status to answer on the access phase's re-entry after the body was read */
	/* What the request's body was, for a check after an internal
	 * redirect (nginx may have streamed it to an upstream by then): the
	 * bytes a check judged whole, or the copy kept as they streamed;
	 * ptr NULL when size is over the csrf_body_max of the location that
	 * saw it. */
	csrf_slice body;
	off_t body_size;
	unsigned body_known : 1;
	unsigned checked : 1;
	unsigned rejected : 1;
	unsigned report_only : 1;
} ngx_http_csrf_verdict_t;

typedef struct {
	/* access phase: the request kept for the body handler (slices into
	 * r's headers), only when the body is read; a request judged by its
	 * headers alone keeps its 1.3 KiB csrf_request on the stack, out of
	 * the request pool */
	csrf_request *req;
	u_char body_size[NGX_OFF_T_LEN];
	ngx_buf_t *kept;    /* the copy of a body that streams unread (ngx_http_csrf_keep) */
	off_t kept_size;    /* its bytes so far, kept or not */
	ngx_uint_t keeping; /* the body is copied as it streams */

	/* filters */
	csrf_response *resp;  /* the library's state of the response exchange */
	ngx_chain_t *held_cl; /* the held bytes' buf, with the flags of the input bufs they came from */
	ngx_uint_t holding;   /* the header waits with the first bytes for the charset */
	ngx_uint_t inject;    /* the library prepared the page: the body goes through it */
	ngx_chain_t *out;
	ngx_chain_t **last_out;
	ngx_chain_t *busy;
	ngx_chain_t *free;   /* sent output bufs, NGX_HTTP_CSRF_BUF_SIZE each */
	ngx_chain_t *shells; /* sent bufs of no memory of their own */
	ngx_buf_t *cur;      /* the last output buf made from the current input */
	ngx_chain_t *fill;   /* the output buf being filled in this call (see ngx_http_csrf_emit) */
	u_char *in_start;    /* the input being fed, which outlives its output bufs */
	u_char *in_end;
	off_t left;       /* body bytes still to come, when the response said (else -1) */
	ngx_uint_t ended; /* the last byte has been read: the response's end went out with it */
	ngx_uint_t failed;
	ngx_uint_t raised;           /* the referrer raise is done, or not asked for */
	ngx_uint_t counted;          /* the page is in the counters (at its end, or passed) */
	ngx_http_request_t *request; /* for the pool cleanup that counts a page cut short */
} ngx_http_csrf_ctx_t;

/* The injector's output is copied into buffers of this size: a response
 * leaves in a few large pieces instead of one small buf (and one iovec)
 * per pass-through run and per inserted element. */
#define NGX_HTTP_CSRF_BUF_SIZE 8192

/* A pass-through run at least this long leaves as a buf over the input's
 * memory instead of a copy: a page of few forms (most pages) goes out
 * nearly uncopied, and one of many small runs still in a few pieces. */
#define NGX_HTTP_CSRF_REF_MIN 1024

/* A page's block (ngx_http_csrf_page_block): the library's state, then
 * this many links with their bufs (the first output buf's, then
 * shells), then the first output buf's memory, one allocation at the
 * header filter. The held bytes' buf, the first output buf and the
 * shells of a usual page come from it, not each from the request pool;
 * a page that needs more takes them from the pool. */
#define NGX_HTTP_CSRF_SPARE 8

/* A log line of the module: the client's address, the method and the
 * path without its query, then the message. nginx's own context (which
 * appends the whole request line, query included) is left out: an
 * application that serialises a form into a URL would put the token
 * there. */
#define ngx_http_csrf_log(level, r, fmt, ...)                                                                          \
	do {                                                                                                           \
		ngx_log_t log_ = *(r)->connection->log;                                                                \
		log_.handler = NULL;                                                                                   \
		ngx_log_error(level, &log_, 0, "csrf: " fmt ", client: %V", __VA_ARGS__, &(r)->connection->addr_text); \
	} while (0)

extern ngx_module_t ngx_http_csrf_module;

static ngx_inline csrf_slice ngx_http_csrf_slice(ngx_str_t *s)
{
	csrf_slice sl;

	sl.ptr = (const char *)s->data;
	sl.len = s->len;
	return sl;
}

/* ngx_http_csrf_access.c */
typedef ngx_int_t (*ngx_http_csrf_header_pt)(ngx_table_elt_t *h, void *data);
ngx_int_t ngx_http_csrf_each_header(ngx_list_t *list, ngx_http_csrf_header_pt handler, void *data);
void ngx_http_csrf_request(ngx_http_request_t *r, csrf_request *req);
ngx_http_csrf_verdict_t *ngx_http_csrf_verdict(ngx_http_request_t *r, ngx_uint_t create);
ngx_http_csrf_ctx_t *ngx_http_csrf_get_ctx(ngx_http_request_t *r);
ngx_uint_t ngx_http_csrf_injects(ngx_http_csrf_loc_conf_t *clcf);
ngx_int_t ngx_http_csrf_access_handler(ngx_http_request_t *r);
void ngx_http_csrf_request_body_filter_init(void);
ngx_int_t ngx_http_csrf_add_header(ngx_http_request_t *r, csrf_slice key, csrf_slice value);
ngx_int_t ngx_http_csrf_result_variable(ngx_http_request_t *r, ngx_http_variable_value_t *v, uintptr_t data);

/* ngx_http_csrf_filter.c */
void ngx_http_csrf_filter_init(void);

/* ngx_http_csrf_output.c */
extern ngx_http_output_body_filter_pt ngx_http_csrf_next_body_filter;
void ngx_http_csrf_out(ngx_http_csrf_ctx_t *ctx, ngx_chain_t *cl);
ngx_chain_t *ngx_http_csrf_get_shell(ngx_http_request_t *r, ngx_http_csrf_ctx_t *ctx);
size_t ngx_http_csrf_page_block_size(void);
void *ngx_http_csrf_page_block(ngx_http_csrf_ctx_t *ctx, u_char *block);
int ngx_http_csrf_emit(void *ud, const char *p, size_t n, int inserted);
ngx_int_t ngx_http_csrf_output(ngx_http_request_t *r, ngx_http_csrf_ctx_t *ctx);

/* ngx_http_csrf_metrics.c: counting into the csrf_metrics_zone; each is
 * a no-op without one, and a relaxed atomic add with one. */
/* csrf_check's final answer for r (never one that asks for the body). */
void ngx_http_csrf_metrics_check(ngx_http_request_t *r, const csrf_result *res);
/* A verdict the module reached without csrf_check (an internal error). */
void ngx_http_csrf_metrics_verdict(ngx_http_request_t *r, csrf_metrics_verdict verdict, csrf_reason reason);
/* One response by the outcome of its exchange (csrf_metrics_count_response). */
void ngx_http_csrf_metrics_response(ngx_http_request_t *r, csrf_response_verdict verdict, const csrf_response *resp);

#endif /* NGX_HTTP_CSRF_H_INCLUDED_ */
