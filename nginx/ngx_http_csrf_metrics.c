/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ngx_http_csrf_metrics_module - the counters of ngx_http_csrf_module in
 * shared memory zones, and the location handler that serves them in the
 * Prometheus text format.
 *
 *     http {
 *         csrf_metrics_zone csrf;          # every worker counts into one set
 *         server {
 *             location /admin/ {
 *                 csrf_metrics_zone admin; # this location's own counters
 *             }
 *             location = /csrf-metrics {
 *                 csrf_metrics;            # as stub_status is configured
 *                 allow 127.0.0.1;
 *                 deny all;
 *             }
 *         }
 *     }
 *
 * A location counts into the zone its own level or the nearest enclosing
 * one names. Each zone holds one csrf_metrics (the library's fixed,
 * pointer-free struct); the counting calls are the library's relaxed
 * atomic adds, so no lock is taken on a request's path. A reload keeps a
 * zone (same name, same size) and so its counts; a restart starts them
 * again (csrf_metrics_start_time_seconds says when). The endpoint serves
 * every zone, each sample labelled zone="NAME". What is counted and what
 * the names mean is the library's (csrf.h, csrf_metrics_render_zones).
 */

#include "ngx_http_csrf.h"

typedef struct {
	ngx_array_t zones; /* of ngx_shm_zone_t *: every zone, once, in the order first named */
	ngx_uint_t served; /* a csrf_metrics location exists */
} ngx_http_csrf_metrics_main_conf_t;

typedef struct {
	ngx_shm_zone_t *zone; /* where this location counts; NULL: nowhere */
} ngx_http_csrf_metrics_loc_conf_t;

static char *ngx_http_csrf_metrics_zone(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static char *ngx_http_csrf_metrics(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static void *ngx_http_csrf_metrics_create_main_conf(ngx_conf_t *cf);
static char *ngx_http_csrf_metrics_init_main_conf(ngx_conf_t *cf, void *conf);
static void *ngx_http_csrf_metrics_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_csrf_metrics_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child);

static ngx_command_t ngx_http_csrf_metrics_commands[] = {
    {ngx_string("csrf_metrics_zone"), NGX_HTTP_MAIN_CONF | NGX_HTTP_SRV_CONF | NGX_HTTP_LOC_CONF | NGX_CONF_TAKE1,
     ngx_http_csrf_metrics_zone, NGX_HTTP_LOC_CONF_OFFSET, 0, NULL},

    {ngx_string("csrf_metrics"), NGX_HTTP_LOC_CONF | NGX_CONF_NOARGS, ngx_http_csrf_metrics, 0, 0, NULL},

    ngx_null_command};

static ngx_http_module_t ngx_http_csrf_metrics_module_ctx = {
    NULL,                                   /* preconfiguration */
    NULL,                                   /* postconfiguration */
    ngx_http_csrf_metrics_create_main_conf, /* create main configuration */
    ngx_http_csrf_metrics_init_main_conf,   /* init main configuration */
    NULL,                                   /* create server configuration */
    NULL,                                   /* merge server configuration */
    ngx_http_csrf_metrics_create_loc_conf,  /* create location configuration */
    ngx_http_csrf_metrics_merge_loc_conf    /* merge location configuration */
};

ngx_module_t ngx_http_csrf_metrics_module = {NGX_MODULE_V1,
                                             &ngx_http_csrf_metrics_module_ctx, /* module context */
                                             ngx_http_csrf_metrics_commands,    /* module directives */
                                             NGX_HTTP_MODULE,                   /* module type */
                                             NULL,                              /* init master */
                                             NULL,                              /* init module */
                                             NULL,                              /* init process */
                                             NULL,                              /* init thread */
                                             NULL,                              /* exit thread */
                                             NULL,                              /* exit process */
                                             NULL,                              /* exit master */
                                             NGX_MODULE_V1_PADDING};

/* ------------------------------------------------------------------ */
/* Counting                                                            */
/* ------------------------------------------------------------------ */

static csrf_metrics *ngx_http_csrf_metrics_of(ngx_http_request_t *r)
{
	ngx_http_csrf_metrics_loc_conf_t *lcf;

	lcf = ngx_http_get_module_loc_conf(r, ngx_http_csrf_metrics_module);

	return lcf->zone ? lcf->zone->data : NULL;
}

void ngx_http_csrf_metrics_check(ngx_http_request_t *r, const csrf_result *res)
{
	csrf_metrics_count_check(ngx_http_csrf_metrics_of(r), res);
}

void ngx_http_csrf_metrics_verdict(ngx_http_request_t *r, csrf_metrics_verdict verdict, csrf_reason reason)
{
	csrf_metrics_count(ngx_http_csrf_metrics_of(r), verdict, reason);
}

void ngx_http_csrf_metrics_response(ngx_http_request_t *r, csrf_response_verdict verdict, const csrf_response *resp)
{
	csrf_metrics_count_response(ngx_http_csrf_metrics_of(r), verdict, resp);
}

/* ------------------------------------------------------------------ */
/* The endpoint                                                        */
/* ------------------------------------------------------------------ */

static ngx_int_t ngx_http_csrf_metrics_handler(ngx_http_request_t *r)
{
	size_t len, cap;
	ngx_int_t rc;
	ngx_buf_t *b;
	ngx_uint_t i;
	ngx_chain_t out;
	ngx_table_elt_t *h;
	ngx_shm_zone_t **zone;
	const char **names;
	const csrf_metrics **sets;
	ngx_http_csrf_metrics_main_conf_t *mcf;
	static ngx_str_t type = ngx_string(CSRF_METRICS_CONTENT_TYPE);

	if (!(r->method & (NGX_HTTP_GET | NGX_HTTP_HEAD))) {
		return NGX_HTTP_NOT_ALLOWED;
	}

	rc = ngx_http_discard_request_body(r);
	if (rc != NGX_OK) {
		return rc;
	}

	mcf = ngx_http_get_module_main_conf(r, ngx_http_csrf_metrics_module);
	zone = mcf->zones.elts;

	sets = ngx_palloc(r->pool, mcf->zones.nelts * sizeof(csrf_metrics *));
	names = ngx_palloc(r->pool, mcf->zones.nelts * sizeof(char *));
	cap = mcf->zones.nelts * CSRF_METRICS_ZONE_TEXT_MAX;
	b = ngx_create_temp_buf(r->pool, cap);
	if (sets == NULL || names == NULL || b == NULL) {
		return NGX_HTTP_INTERNAL_SERVER_ERROR;
	}

	for (i = 0; i < mcf->zones.nelts; i++) {
		sets[i] = zone[i]->data;
		/* the zone's name, NUL-terminated by the directive's handler */
		names[i] = (const char *)zone[i]->shm.name.data;
	}

	if (csrf_metrics_render_zones(sets, names, mcf->zones.nelts, (char *)b->pos, cap, &len) != CSRF_OK) {
		ngx_log_error(NGX_LOG_ERR, r->connection->log, 0, "csrf: cannot render the counters");
		return NGX_HTTP_INTERNAL_SERVER_ERROR;
	}

	b->last = b->pos + len;
	b->last_buf = (r == r->main) ? 1 : 0;
	b->last_in_chain = 1;

	/* counters of a moment: no cache keeps them */
	h = ngx_list_push(&r->headers_out.headers);
	if (h == NULL) {
		return NGX_HTTP_INTERNAL_SERVER_ERROR;
	}
	h->hash = 1;
	ngx_str_set(&h->key, "Cache-Control");
	ngx_str_set(&h->value, "no-store");
#if (nginx_version >= 1023000)
	h->next = NULL;
#endif

	r->headers_out.status = NGX_HTTP_OK;
	r->headers_out.content_length_n = len;
	r->headers_out.content_type = type;
	r->headers_out.content_type_len = type.len;
	r->headers_out.content_type_lowcase = NULL;

	rc = ngx_http_send_header(r);
	if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
		return rc;
	}

	out.buf = b;
	out.next = NULL;

	return ngx_http_output_filter(r, &out);
}

/* ------------------------------------------------------------------ */
/* Configuration                                                       */
/* ------------------------------------------------------------------ */

/* The zone's counters: those of the zone of the same name before a
 * reload (data), kept when their layout is this library's; else new ones
 * from the zone's slab pool. */
static ngx_int_t ngx_http_csrf_metrics_init_zone(ngx_shm_zone_t *shm_zone, void *data)
{
	csrf_metrics *m;
	ngx_slab_pool_t *shpool;

	shpool = (ngx_slab_pool_t *)shm_zone->shm.addr;

	if (data && csrf_metrics_valid(data, sizeof(csrf_metrics))) {
		shm_zone->data = data;
		return NGX_OK;
	}

	if (data == NULL && shm_zone->shm.exists) {
		shm_zone->data = shpool->data;
		return NGX_OK;
	}

	/* a new zone, or one whose counters a module of another layout left */
	m = ngx_slab_alloc(shpool, sizeof(csrf_metrics));
	if (m == NULL) {
		return NGX_ERROR;
	}

	csrf_metrics_init(m, (int64_t)ngx_time());
	shpool->data = m;
	shm_zone->data = m;

	return NGX_OK;
}

/* csrf_metrics_zone NAME: the zone this level counts into. The same name
 * at several levels is one zone (their counts add up in it). */
static char *ngx_http_csrf_metrics_zone(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
	ngx_str_t *value, name;
	ngx_shm_zone_t **slot;
	ngx_http_csrf_metrics_loc_conf_t *lcf = conf;
	ngx_http_csrf_metrics_main_conf_t *mcf;

	(void)cmd;

	if (lcf->zone != NGX_CONF_UNSET_PTR) {
		return "is duplicate";
	}

	value = cf->args->elts;

	if (value[1].len == 0 || value[1].len > CSRF_METRICS_ZONE_NAME_MAX) {
		ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "csrf_metrics_zone takes a name of 1 to %d bytes",
		                   CSRF_METRICS_ZONE_NAME_MAX);
		return NGX_CONF_ERROR;
	}

	/* a copy with a NUL after it: the zone's name is also its label */
	name.len = value[1].len;
	name.data = ngx_pnalloc(cf->pool, name.len + 1);
	if (name.data == NULL) {
		return NGX_CONF_ERROR;
	}
	ngx_memcpy(name.data, value[1].data, name.len);
	name.data[name.len] = '\0';

	/* a fixed size, so that a reload finds the zone again and keeps its
	 * counts: one csrf_metrics in a slab pool */
	lcf->zone = ngx_shared_memory_add(cf, &name, 8 * ngx_pagesize, &ngx_http_csrf_metrics_module);
	if (lcf->zone == NULL) {
		return NGX_CONF_ERROR;
	}

	if (lcf->zone->init == ngx_http_csrf_metrics_init_zone) {
		/* named before: the same zone */
		return NGX_CONF_OK;
	}

	if (lcf->zone->init) {
		ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the shared memory zone \"%V\" is already in use", &value[1]);
		return NGX_CONF_ERROR;
	}

	mcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_csrf_metrics_module);
	if (mcf->zones.nelts == CSRF_METRICS_ZONES_MAX) {
		ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "more than %d csrf_metrics_zone names",
		                   CSRF_METRICS_ZONES_MAX);
		return NGX_CONF_ERROR;
	}

	slot = ngx_array_push(&mcf->zones);
	if (slot == NULL) {
		return NGX_CONF_ERROR;
	}
	*slot = lcf->zone;

	lcf->zone->init = ngx_http_csrf_metrics_init_zone;
	lcf->zone->data = NULL;

	return NGX_CONF_OK;
}

static char *ngx_http_csrf_metrics(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
	ngx_http_core_loc_conf_t *clcf;
	ngx_http_csrf_metrics_main_conf_t *mcf;

	(void)cmd;
	(void)conf;

	clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
	clcf->handler = ngx_http_csrf_metrics_handler;

	mcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_csrf_metrics_module);
	mcf->served = 1;

	return NGX_CONF_OK;
}

static void *ngx_http_csrf_metrics_create_main_conf(ngx_conf_t *cf)
{
	ngx_http_csrf_metrics_main_conf_t *mcf;

	mcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_csrf_metrics_main_conf_t));
	if (mcf == NULL || ngx_array_init(&mcf->zones, cf->pool, 4, sizeof(ngx_shm_zone_t *)) != NGX_OK) {
		return NULL;
	}

	return mcf;
}

static void *ngx_http_csrf_metrics_create_loc_conf(ngx_conf_t *cf)
{
	ngx_http_csrf_metrics_loc_conf_t *lcf;

	lcf = ngx_palloc(cf->pool, sizeof(ngx_http_csrf_metrics_loc_conf_t));
	if (lcf == NULL) {
		return NULL;
	}

	lcf->zone = NGX_CONF_UNSET_PTR;

	return lcf;
}

static char *ngx_http_csrf_metrics_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
	ngx_http_csrf_metrics_loc_conf_t *prev = parent;
	ngx_http_csrf_metrics_loc_conf_t *conf = child;

	(void)cf;

	ngx_conf_merge_ptr_value(conf->zone, prev->zone, NULL);

	return NGX_CONF_OK;
}

static char *ngx_http_csrf_metrics_init_main_conf(ngx_conf_t *cf, void *conf)
{
	ngx_http_csrf_metrics_main_conf_t *mcf = conf;

	if (mcf->served && mcf->zones.nelts == 0) {
		ngx_conf_log_error(
		    NGX_LOG_EMERG, cf, 0,
		    "\"csrf_metrics\" serves the counters of the \"csrf_metrics_zone\" zones, and there is "
		    "none: add \"csrf_metrics_zone NAME;\" to the http block");
		return NGX_CONF_ERROR;
	}

	return NGX_CONF_OK;
}
