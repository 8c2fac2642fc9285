/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mod_csrf_protect: the request half. The verdict in the fixups (first
 * among them), on the request handed to the library header by header;
 * the body read when the library asks for it (up to CSRFBodyMax), judged,
 * and replayed intact to whatever handler comes (mod_php, proxy_fcgi,
 * mod_proxy_http, mod_cgid) by a request-scoped input filter; the
 * rejection answered by the module's own handler, first among the
 * handlers, whatever ErrorDocument, mod_rewrite or an internal redirect
 * does next; the handler asked for an uncompressed page where tokens go
 * in; the csrf_result note.
 */

#include "mod_csrf_protect.h"

APLOG_USE_MODULE(csrf_protect);

csrf_protect_state *csrf_protect_state_of(request_rec *r)
{
	csrf_protect_state *st;

	/* the request itself, the ones an internal redirect came from, and
	 * for a subrequest its main request and theirs */
	for (request_rec *m = r; m; m = m->main) {
		for (request_rec *p = m; p; p = p->prev) {
			st = ap_get_module_config(p->request_config, &csrf_protect_module);
			if (st)
				return st;
		}
	}
	return NULL;
}

static int csrf_protect_file_header(void *data, const char *key, const char *value)
{
	csrf_request_header(data, key, strlen(key), value, strlen(value));
	return 1;
}

void csrf_protect_request(request_rec *r, csrf_request *req)
{
	const char *scheme = ap_http_scheme(r);

	csrf_request_init(req);
	req->method.ptr = r->method;
	req->method.len = strlen(r->method);
	req->target.ptr = r->unparsed_uri;
	req->target.len = strlen(r->unparsed_uri);
	req->scheme.ptr = scheme;
	req->scheme.len = strlen(scheme);
	/* mod_http2 gives a body without Content-Length a
	 * "Transfer-Encoding: chunked", as the library wants it */
	apr_table_do(csrf_protect_file_header, req, r->headers_in, NULL);
}

/* ------------------------------------------------------------------ */
/* The body, read and replayed                                         */
/* ------------------------------------------------------------------ */

typedef struct {
	apr_bucket_brigade *saved; /* what was read, set aside in the request's pool */
} csrf_protect_replay;

/* The request-scoped input filter: the handler reads the saved body
 * first, exactly as it came out of the filters below (the client's bytes,
 * de-chunked by HTTP_IN as for any handler), then, when the body was
 * larger than what was read, the rest from the filters below. */
apr_status_t csrf_protect_body_filter(ap_filter_t *f, apr_bucket_brigade *bb, ap_input_mode_t mode,
                                      apr_read_type_e block, apr_off_t readbytes)
{
	csrf_protect_replay *rp = f->ctx;
	apr_bucket *e, *after;
	apr_status_t rv;

	if (rp == NULL || APR_BRIGADE_EMPTY(rp->saved)) {
		ap_remove_input_filter(f);
		return ap_get_brigade(f->next, bb, mode, block, readbytes);
	}

	if (mode == AP_MODE_SPECULATIVE) {
		apr_off_t got = 0;
		for (e = APR_BRIGADE_FIRST(rp->saved); e != APR_BRIGADE_SENTINEL(rp->saved) && got < readbytes;
		     e = APR_BUCKET_NEXT(e)) {
			apr_bucket *copy;
			if (e->length != (apr_size_t)-1 && got + (apr_off_t)e->length > readbytes)
				apr_bucket_split(e, (apr_size_t)(readbytes - got));
			rv = apr_bucket_copy(e, &copy);
			if (rv != APR_SUCCESS)
				return rv;
			APR_BRIGADE_INSERT_TAIL(bb, copy);
			if (e->length != (apr_size_t)-1)
				got += (apr_off_t)e->length;
		}
		return APR_SUCCESS;
	}

	if (mode != AP_MODE_READBYTES && mode != AP_MODE_EXHAUSTIVE && mode != AP_MODE_GETLINE)
		return ap_get_brigade(f->next, bb, mode, block, readbytes);

	if (mode == AP_MODE_EXHAUSTIVE) {
		APR_BRIGADE_CONCAT(bb, rp->saved);
		return APR_SUCCESS;
	}

	rv = apr_brigade_partition(rp->saved, readbytes, &after);
	if (rv != APR_SUCCESS && rv != APR_INCOMPLETE)
		return rv;
	/* the end of stream goes with the last bytes */
	if (after != APR_BRIGADE_SENTINEL(rp->saved) && APR_BUCKET_IS_EOS(after))
		after = APR_BUCKET_NEXT(after);
	while ((e = APR_BRIGADE_FIRST(rp->saved)) != after) {
		APR_BUCKET_REMOVE(e);
		APR_BRIGADE_INSERT_TAIL(bb, e);
	}
	return APR_SUCCESS;
}

/* Reads the body through the request's input filters until its end or
 * until more than max bytes came; hands it to the library in st->req
 * (or, larger, its size so far, which the library judges by); leaves it
 * to the replay filter. APR_SUCCESS, or what reading failed with. */
static apr_status_t csrf_protect_read_body(request_rec *r, csrf_protect_state *st, apr_off_t max)
{
	apr_bucket_brigade *bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
	csrf_protect_replay *rp = apr_pcalloc(r->pool, sizeof(*rp));
	apr_off_t size = 0;
	int eos = 0;
	apr_status_t rv = APR_SUCCESS;

	rp->saved = apr_brigade_create(r->pool, r->connection->bucket_alloc);
	while (!eos && size <= max) {
		rv = ap_get_brigade(r->input_filters, bb, AP_MODE_READBYTES, APR_BLOCK_READ, HUGE_STRING_LEN);
		if (rv != APR_SUCCESS)
			break;
		for (apr_bucket *e = APR_BRIGADE_FIRST(bb); e != APR_BRIGADE_SENTINEL(bb); e = APR_BUCKET_NEXT(e)) {
			const char *data;
			apr_size_t len;
			if (APR_BUCKET_IS_EOS(e)) {
				eos = 1;
				continue;
			}
			if (APR_BUCKET_IS_METADATA(e))
				continue;
			rv = apr_bucket_read(e, &data, &len, APR_BLOCK_READ);
			if (rv != APR_SUCCESS)
				break;
			size += (apr_off_t)len;
			rv = apr_bucket_setaside(e, r->pool);
			if (rv != APR_SUCCESS)
				break;
		}
		if (rv != APR_SUCCESS)
			break;
		APR_BRIGADE_CONCAT(rp->saved, bb);
	}

	/* what was read goes to the handler, even when reading failed
	 * after it (the handler then meets the same failure) */
	st->replay = rp;
	ap_add_input_filter(CSRF_PROTECT_BODY_FILTER, rp, r, r->connection);
	if (rv != APR_SUCCESS)
		return rv;

	if (size > max) {
		/* larger than the library reads: it judges by the size */
		st->req.body.ptr = NULL;
		st->req.content_length.ptr = st->body_size;
		st->req.content_length.len =
		    (size_t)apr_snprintf(st->body_size, sizeof(st->body_size), "%" APR_OFF_T_FMT, size);
		return APR_SUCCESS;
	}

	{
		char *buf = apr_palloc(r->pool, (apr_size_t)size + 1);
		apr_size_t len = (apr_size_t)size;
		rv = apr_brigade_flatten(rp->saved, buf, &len);
		if (rv != APR_SUCCESS)
			return rv;
		st->req.body.ptr = buf;
		st->req.body.len = len;
	}
	return APR_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* The verdict                                                         */
/* ------------------------------------------------------------------ */

static void csrf_protect_note(request_rec *r, const csrf_protect_state *st)
{
	apr_table_setn(r->notes, CSRF_PROTECT_NOTE, csrf_reason_name(st->reason));
}

/* Records the library's answer, counts it, logs a rejection with its
 * reason (never a token or a cookie). */
static void csrf_protect_judge(request_rec *r, const csrf_protect_conf *c, csrf_protect_state *st, csrf_result res)
{
	st->checked = 1;
	st->reason = res.reason;
	st->report_only = res.report_only;
	csrf_protect_count_check(&res);
	csrf_protect_note(r, st);

	if (res.report_only) {
		csrf_protect_log(APLOG_WARNING, r, "would reject %s \"%s\": %s (CSRFAction log)", r->method,
		                 r->parsed_uri.path, csrf_reason_name(res.reason));
		return;
	}
	if (res.allowed)
		return;
	csrf_protect_log(APLOG_ERR, r, "rejected %s \"%s\": %s", r->method, r->parsed_uri.path,
	                 csrf_reason_name(res.reason));
	st->rejected = 1;
	st->status = csrf_reason_http_status(res.reason, (unsigned)c->status);
}

/* A verdict the module reaches without the library (nothing to judge
 * with, or a body that could not be read): fail closed. */
static void csrf_protect_fail(request_rec *r, csrf_protect_state *st, csrf_reason reason, unsigned status)
{
	st->checked = 1;
	st->rejected = 1;
	st->reason = reason;
	st->status = status;
	csrf_protect_count(CSRF_METRICS_REJECTED, reason);
	csrf_protect_note(r, st);
	csrf_protect_log(APLOG_ERR, r, "rejected %s \"%s\": %s", r->method, r->parsed_uri.path,
	                 csrf_reason_name(reason));
}

/* Keeps the settings settled for r and the context looked up for them,
 * for the output filter (csrf_protect_memo_of). Not for a subrequest: its
 * pool (where c lives) ends before the request that holds st. */
void csrf_protect_memo(request_rec *r, csrf_protect_state *st, const csrf_protect_conf *c, csrf_ctx *ctx)
{
	if (r->main)
		return;
	st->memo_dir = r->per_dir_config;
	st->memo_conf = c;
	st->memo_ctx = ctx;
}

const csrf_protect_conf *csrf_protect_memo_of(request_rec *r, csrf_protect_state *st, csrf_ctx **ctx)
{
	if (st == NULL || r->main || st->memo_dir != r->per_dir_config)
		return NULL;
	*ctx = st->memo_ctx;
	return st->memo_conf;
}

static void csrf_protect_judge_body(request_rec *r, const csrf_protect_conf *c, csrf_protect_state *st,
                                    csrf_result res);
static void csrf_protect_judge_new(request_rec *r, const csrf_protect_conf *c);

/* An allowed request an internal redirect sends where the settings
 * differ (a stricter mode, CSRFUnsafeGet, other trusted origins) is
 * judged again there, as the client sent it: the first verdict does not
 * cover it. */
static int csrf_protect_rejudge(request_rec *r, csrf_protect_state *st)
{
	csrf_protect_conf *c =
	    csrf_protect_settled(r->pool, ap_get_module_config(r->per_dir_config, &csrf_protect_module));
	csrf_ctx *ctx;

	if (!c->enable || st->ctx == NULL)
		return DECLINED;
	ctx = csrf_protect_ctx(r, c);
	csrf_protect_memo(r, st, c, ctx);
	if (ctx == NULL) {
		/* these settings cannot be judged by (a context a child could
		 * not build): the first verdict does not cover them, as the
		 * first judging answers 500 (csrf_protect_judge_new) */
		csrf_protect_fail(r, st, CSRF_ERR_CONFIG, HTTP_INTERNAL_SERVER_ERROR);
		return DECLINED;
	}
	if (ctx == st->ctx)
		return DECLINED;
	st->ctx = ctx;
	csrf_protect_judge_body(r, c, st, csrf_check(ctx, &st->req));
	return DECLINED;
}

int csrf_protect_fixups(request_rec *r)
{
	csrf_protect_conf *c;
	csrf_protect_state *st = csrf_protect_state_of(r);

	if (st) {
		/* an internal redirect or a subrequest of a judged request:
		 * it carries the verdict (and a rejected one only ever gets
		 * the module's answer, csrf_protect_reject_handler) */
		ap_set_module_config(r->request_config, &csrf_protect_module, st);
		csrf_protect_note(r, st);
		if (r->main || st->rejected)
			return DECLINED;
		st->judged_conf = r->per_dir_config;
		/* an internal redirect (mod_rewrite's front controller,
		 * ErrorDocument) starts with the connection's input filters:
		 * the body the module read goes to its handler too */
		if (st->replay && !APR_BRIGADE_EMPTY(((csrf_protect_replay *)st->replay)->saved))
			ap_add_input_filter(CSRF_PROTECT_BODY_FILTER, st->replay, r, r->connection);
		return csrf_protect_rejudge(r, st);
	}
	if (r->main)
		return DECLINED; /* a subrequest of an unjudged request */

	c = csrf_protect_settled(r->pool, ap_get_module_config(r->per_dir_config, &csrf_protect_module));
	if (!c->enable)
		return DECLINED;
	csrf_protect_judge_new(r, c);
	return DECLINED;
}

/* The first verdict on a request, with its settings c (enabled). */
static void csrf_protect_judge_new(request_rec *r, const csrf_protect_conf *c)
{
	csrf_protect_state *st = apr_pcalloc(r->pool, sizeof(*st));

	st->judged_conf = r->per_dir_config;
	ap_set_module_config(r->request_config, &csrf_protect_module, st);

	st->ctx = csrf_protect_ctx(r, c);
	csrf_protect_memo(r, st, c, st->ctx);
	if (st->ctx == NULL) {
		csrf_protect_fail(r, st, CSRF_ERR_CONFIG, HTTP_INTERNAL_SERVER_ERROR);
		return;
	}

	csrf_protect_request(r, &st->req);

	if (c->inject && csrf_ctx_injects(st->ctx)) {
		/* the handler (PHP's zlib.output_compression, an upstream
		 * behind mod_proxy or proxy_fcgi) is asked for an uncompressed
		 * page, which can take tokens; the output filter gives the
		 * client's own value back before mod_deflate reads it */
		st->accept_encoding = apr_table_get(r->headers_in, "Accept-Encoding");
		st->identity = 1;
		apr_table_setn(r->headers_in, "Accept-Encoding", "identity");
	}

	csrf_protect_judge_body(r, c, st, csrf_check(st->ctx, &st->req));
}

/* The library's answer; when it asks for the body, the body read and
 * the library asked again. */
static void csrf_protect_judge_body(request_rec *r, const csrf_protect_conf *c, csrf_protect_state *st, csrf_result res)
{
	apr_status_t rv;

	if (res.needs_body) {
		rv = csrf_protect_read_body(r, st, c->body_max);
		if (rv != APR_SUCCESS) {
			int status = ap_map_http_request_error(rv, HTTP_BAD_REQUEST);
			csrf_protect_fail(
			    r, st, status == HTTP_REQUEST_ENTITY_TOO_LARGE ? CSRF_BODY_TOO_LARGE : CSRF_BODY_MALFORMED,
			    (unsigned)(status >= 400 && status <= 599 ? status : HTTP_BAD_REQUEST));
			return;
		}
		res = csrf_check(st->ctx, &st->req);
		if (res.needs_body) {
			/* cannot happen with a body given: fail closed */
			res.allowed = 0;
			res.report_only = 0;
			res.reason = CSRF_ERR_INTERNAL;
		}
	}
	csrf_protect_judge(r, c, st, res);
}

/* ------------------------------------------------------------------ */
/* The rejection's answer                                              */
/* ------------------------------------------------------------------ */

typedef struct {
	csrf_reject_answer_t answer;
	char *copies[CSRF_REJECT_ANSWER_HEADERS_MAX];
	size_t lens[CSRF_REJECT_ANSWER_HEADERS_MAX];
} csrf_protect_reject;

/* The answer's token and cookie, and their copies in the headers, are
 * wiped with the request. */
static apr_status_t csrf_protect_reject_wipe(void *data)
{
	csrf_protect_reject *rj = data;

	csrf_reject_answer_wipe(&rj->answer);
	for (int i = 0; i < CSRF_REJECT_ANSWER_HEADERS_MAX; i++) {
		if (rj->copies[i])
			memset(rj->copies[i], 0, rj->lens[i]);
	}
	return APR_SUCCESS;
}

/* No cache keeps a rejection (csrf_rejection_cache): the table loses
 * every cache field, whatever the configuration put there. */
static void csrf_protect_rejection_cache(request_rec *r, apr_table_t **t)
{
	const apr_array_header_t *a = apr_table_elts(*t);
	const apr_table_entry_t *e = (const apr_table_entry_t *)a->elts;
	csrf_header *h = apr_palloc(r->pool, sizeof(*h) * (size_t)(a->nelts + 1));
	unsigned char *drop = apr_palloc(r->pool, (size_t)a->nelts + 1);
	apr_table_t *kept;
	csrf_slice add;
	int i;

	for (i = 0; i < a->nelts; i++) {
		h[i].name = (csrf_slice){e[i].key, strlen(e[i].key)};
		h[i].value = (csrf_slice){e[i].val, strlen(e[i].val)};
	}
	if (csrf_rejection_cache(h, (size_t)a->nelts, drop, &add) != CSRF_OK)
		return;
	kept = apr_table_make(r->pool, a->nelts + 1);
	for (i = 0; i < a->nelts; i++) {
		if (!drop[i])
			apr_table_addn(kept, e[i].key, e[i].val);
	}
	*t = kept;
}

/* The rejection's answer on its way out, after mod_headers and the other
 * content-set filters (AP_FTYPE_CONTENT_SET + 5): only no-store. */
apr_status_t csrf_protect_reject_filter(ap_filter_t *f, apr_bucket_brigade *bb)
{
	request_rec *r = f->r;

	csrf_protect_rejection_cache(r, &r->headers_out);
	csrf_protect_rejection_cache(r, &r->err_headers_out);
	apr_table_setn(r->headers_out, "Cache-Control", CSRF_REJECT_PAGE_CACHE_CONTROL);
	ap_remove_output_filter(f);
	return ap_pass_brigade(f->next, bb);
}

/* The rejected request's body is read and dropped, up to
 * CSRF_DEFAULT_BODY_MAX, before the answer: a client that is still
 * sending (an HTTP/2 stream still open) gets the answer after its body,
 * not a reset in the middle of it. A longer body is not read: the
 * connection closes after the answer. */
static void csrf_protect_drain(request_rec *r)
{
	apr_bucket_brigade *bb;
	apr_off_t got = 0;
	int eos = 0;

	if (!ap_request_has_body(r))
		return;
	bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
	while (!eos && got <= CSRF_DEFAULT_BODY_MAX) {
		if (ap_get_brigade(r->input_filters, bb, AP_MODE_READBYTES, APR_BLOCK_READ, HUGE_STRING_LEN) !=
		    APR_SUCCESS)
			break;
		for (apr_bucket *e = APR_BRIGADE_FIRST(bb); e != APR_BRIGADE_SENTINEL(bb); e = APR_BUCKET_NEXT(e)) {
			const char *data;
			apr_size_t len;
			if (APR_BUCKET_IS_EOS(e))
				eos = 1;
			else if (!APR_BUCKET_IS_METADATA(e) &&
			         apr_bucket_read(e, &data, &len, APR_BLOCK_READ) == APR_SUCCESS)
				got += (apr_off_t)len;
		}
		apr_brigade_cleanup(bb);
	}
	if (!eos)
		r->connection->keepalive = AP_CONN_CLOSE;
}

/* The handler's settings, once more: mod_dir's DirectoryIndex and
 * mod_negotiation's MultiViews hand the request the settings of the file
 * they chose (ap_internal_fast_redirect) after the fixups judged it by
 * the directory's or the missing file's, or found nothing to judge (a
 * request to "/app/" under CSRF Off, its "index.php" under CSRF On). A
 * request the handler's settings enable is judged by them when the
 * fixups did not, and again where they differ from the ones that did. */
static void csrf_protect_judge_late(request_rec *r)
{
	csrf_protect_state *st = csrf_protect_state_of(r);
	csrf_protect_conf *c;

	if (st && (st->rejected || st->judged_conf == r->per_dir_config))
		return; /* the fixups judged by these very settings */
	c = csrf_protect_settled(r->pool, ap_get_module_config(r->per_dir_config, &csrf_protect_module));
	if (!c->enable)
		return;
	if (st == NULL) {
		csrf_protect_judge_new(r, c);
		return;
	}
	ap_set_module_config(r->request_config, &csrf_protect_module, st);
	st->judged_conf = r->per_dir_config;
	csrf_protect_rejudge(r, st);
}

int csrf_protect_reject_handler(request_rec *r)
{
	csrf_protect_state *st;
	csrf_protect_reject *rj;
	csrf_reject_answer_t *a;

	if (r->main == NULL)
		csrf_protect_judge_late(r);
	st = csrf_protect_state_of(r);
	if (st == NULL || !st->rejected)
		return DECLINED;
	if (r->main)
		return (int)st->status; /* a subrequest of a rejected request runs nothing */

	rj = apr_pcalloc(r->pool, sizeof(*rj));
	apr_pool_cleanup_register(r->pool, rj, csrf_protect_reject_wipe, apr_pool_cleanup_null);
	a = &rj->answer;
	if (st->ctx == NULL || csrf_reject_answer(st->ctx, &st->req, st->reason, st->status, a) != CSRF_OK) {
		size_t len = 0;
		memset(a, 0, sizeof(*a));
		a->status = st->status >= 400 && st->status <= 599 ? st->status : HTTP_INTERNAL_SERVER_ERROR;
		if (csrf_reject_page(st->reason, a->status, a->body, sizeof(a->body), &len) != CSRF_OK)
			len = 0;
		a->body_len = len;
		a->headers[0] = (csrf_header){{"Content-Type", 12}, {"text/html; charset=utf-8", 24}};
		a->headers[1] = (csrf_header){{"Content-Security-Policy", 23},
		                              {CSRF_REJECT_PAGE_CSP, sizeof(CSRF_REJECT_PAGE_CSP) - 1}};
		a->headers[2] =
		    (csrf_header){{"Cache-Control", 13},
		                  {CSRF_REJECT_PAGE_CACHE_CONTROL, sizeof(CSRF_REJECT_PAGE_CACHE_CONTROL) - 1}};
		a->n_headers = 3;
	}
	if (a->retry)
		csrf_protect_log(APLOG_INFO, r, "offered a fresh token to %s \"%s\": %s", r->method, r->parsed_uri.path,
		                 csrf_reason_name(st->reason));

	r->status = (int)a->status;
	ap_add_output_filter(CSRF_PROTECT_REJECT_FILTER, NULL, r, r->connection);
	for (size_t i = 0; i < a->n_headers; i++) {
		char *name = apr_pstrmemdup(r->pool, a->headers[i].name.ptr, a->headers[i].name.len);
		char *value = apr_pstrmemdup(r->pool, a->headers[i].value.ptr, a->headers[i].value.len);
		rj->copies[i] = value;
		rj->lens[i] = a->headers[i].value.len;
		if (strcasecmp(name, "Content-Type") == 0)
			ap_set_content_type(r, value);
		else if (strcasecmp(name, "Set-Cookie") == 0)
			apr_table_addn(r->headers_out, name, value);
		else
			apr_table_setn(r->headers_out, name, value);
	}
	if (st->reason == CSRF_BODY_TOO_LARGE)
		r->connection->keepalive = AP_CONN_CLOSE; /* the rest of the body is not read */
	else
		csrf_protect_drain(r);
	ap_set_content_length(r, (apr_off_t)a->body_len);
	if (!r->header_only && a->body_len)
		ap_rwrite(a->body, (int)a->body_len, r);
	return OK;
}
