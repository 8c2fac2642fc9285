/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ngx_http_csrf_metrics.h - what ngx_http_csrf_module calls to count its
 * verdicts and its pages into the shared counters of
 * ngx_http_csrf_metrics.c. Each call is a no-op without a
 * csrf_metrics_zone, and a relaxed atomic add with one.
 */

#ifndef NGX_HTTP_CSRF_METRICS_H
#define NGX_HTTP_CSRF_METRICS_H

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "csrf.h"

/* csrf_check's final answer for r (never one that asks for the body). */
void ngx_http_csrf_metrics_check(ngx_http_request_t *r, const csrf_result *res);
/* A verdict the module reached without csrf_check (an internal error). */
void ngx_http_csrf_metrics_verdict(ngx_http_request_t *r, csrf_metrics_verdict verdict, csrf_reason reason);
/* One HTML page streamed through the injector, at its end. */
void ngx_http_csrf_metrics_page(ngx_http_request_t *r, unsigned injected, unsigned status);
/* One HTML page passed through without tokens, for cause. */
void ngx_http_csrf_metrics_passed(ngx_http_request_t *r, csrf_metrics_pass cause);

#endif /* NGX_HTTP_CSRF_METRICS_H */
