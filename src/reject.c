/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reject.c - what a person is told when a request is rejected: one
 * sentence of advice per reason (csrf_reason_advice) and the small page
 * the adapters answer with (csrf_reject_page). Everything on the page is
 * the library's own text, escaped; nothing of the request is echoed.
 */
#include "internal.h"

CSRF_API const char *csrf_reason_advice(csrf_reason r)
{
	/* Each sentence says only what the browser told: a cross-site
	 * request came from another site; a same-site one from another
	 * address of this site; a null origin and no evidence say nothing of
	 * where the request came from. */
	switch (r) {
	case CSRF_CROSS_SITE:
		return "The request was sent by a page of another site, which may not act for you here. If you meant "
		       "to do this, open this site yourself and do it from its own pages.";
	case CSRF_SAME_SITE:
		return "The request was sent by a page at another address of this site (another subdomain, port or "
		       "scheme), which may not act for you here. If you meant to do this, open this page's address "
		       "yourself and do it from its own pages.";
	case CSRF_ORIGIN_MISMATCH:
	case CSRF_REFERER_MISMATCH:
		return "Your browser said the request came from a page at another address, which may not act for you "
		       "here. If you meant to do this, open this site yourself and do it from its own pages.";
	case CSRF_NULL_ORIGIN:
		return "Your browser did not say which site sent this request (it sent the origin as \"null\", as it "
		       "does for a page that hides where its requests come from, or under a privacy setting), and "
		       "here that must be known. Open this site yourself and do it from its own pages; if it happens "
		       "again, tell the site's operator.";
	case CSRF_WEBSOCKET_ORIGIN:
		return "Your browser said a page at another address, or one that hides where it comes from, opened "
		       "this live connection (a WebSocket) to this site, which may not act for you here. Open this "
		       "site yourself and use it from its own pages.";
	case CSRF_NO_EVIDENCE:
		return "Nothing showed that this request came from one of this site's own pages (it may have come "
		       "from a bookmark, a typed address or a link outside the browser, or the browser did not say), "
		       "and this action must start there. Open this site yourself and do it from its own pages.";
	case CSRF_REFERER_MISSING:
	case CSRF_REFERER_INSECURE:
		return "Your browser did not say which page sent this request. Go back, reload the page and try again; "
		       "a privacy extension that removes the Referer header can cause this.";
	case CSRF_TOKEN_SESSION:
		return "This page is from an earlier session (you logged out or in since it was loaded): reload it and "
		       "try again.";
	case CSRF_TOKEN_INVALID:
		/* A token of another secret under the same session binding
		 * (a secret renewed behind a fixed field name) reads the same
		 * as a forged one: both get the advice that helps the first. */
		return "This page's security token does not match your session: the page is probably from an earlier "
		       "session (you logged out or in since it was loaded). Reload it and try again.";
	case CSRF_SECRET_INVALID:
		return "Your browser sent a security cookie this site cannot verify (one from before the site changed "
		       "its keys, or an altered one): reload the page and try again.";
	case CSRF_TOKEN_EXPIRED:
	case CSRF_SECRET_EXPIRED:
		return "This page has expired: reload it and try again.";
	case CSRF_UNKNOWN_KEY:
		return "This page was signed with a key the site no longer uses: reload it and try again.";
	case CSRF_SECRET_MISSING:
		return "Your browser did not send this site's security cookie (cookies cleared or blocked?): reload "
		       "the page and try again.";
	case CSRF_COOKIE_AMBIGUOUS:
		return "Your browser sent this site's security cookie twice, one of them not set by this page's "
		       "address (perhaps by another subdomain or port of it): clear this site's cookies, then reload "
		       "the page and try again.";
	case CSRF_TOKEN_MISSING:
	case CSRF_TOKEN_MALFORMED:
		return "The request did not carry this page's security token. Go back, reload the page and try again.";
	case CSRF_REAUTH_REQUIRED:
	case CSRF_REAUTH_FAILED:
		return "This action needs your password again.";
	case CSRF_LOCKED_OUT:
		return "Too many wrong passwords: wait a while, then try again.";
	case CSRF_BODY_TOO_LARGE:
	case CSRF_HEADER_TOO_LARGE:
		return "The request is larger than this site accepts.";
	case CSRF_STORE_UNAVAILABLE:
		return "The site cannot check requests right now: try again in a moment.";
	default:
		return "The request could not be verified. Go back, reload the page and try again.";
	}
}

typedef struct {
	char *out;
	size_t cap, len;
	int short_;
} sink;

static void put(sink *s, const char *p, size_t n)
{
	if (s->short_ || s->len + n >= s->cap) {
		s->short_ = 1;
		return;
	}
	memcpy(s->out + s->len, p, n);
	s->len += n;
}

static void puts_(sink *s, const char *p)
{
	put(s, p, strlen(p));
}

static void put_text(sink *s, const char *p)
{
	if (s->short_)
		return;
	size_t got = 0;
	if (csrf_html_escape(p, strlen(p), s->out + s->len, s->cap - s->len, &got) != CSRF_OK)
		s->short_ = 1;
	else
		s->len += got;
}

CSRF_API csrf_reason csrf_reject_page(csrf_reason reason, unsigned status, char *out, size_t cap, size_t *out_len)
{
	if (out_len)
		*out_len = 0;
	if (!out || cap == 0 || status < 400 || status > 599)
		return CSRF_ERR_ARG;
	char code[4] = {(char)('0' + status / 100), (char)('0' + status / 10 % 10), (char)('0' + status % 10), 0};
	sink s = {out, cap, 0, 0};
	puts_(&s, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	          "<meta name=\"viewport\" content=\"width=device-width\"><title>");
	puts_(&s, code);
	puts_(&s, " Request rejected</title><style>body{font-family:sans-serif;max-width:40rem;margin:2rem auto;"
	          "padding:0 1rem;color:#222}code{background:#eee;padding:0 .2rem}</style></head>\n<body><h1>Request "
	          "rejected</h1><p id=\"advice\">");
	put_text(&s, csrf_reason_advice(reason));
	puts_(&s, "</p><p>Nothing was changed. Reason: <code id=\"reason\">");
	put_text(&s, csrf_reason_name(reason));
	puts_(&s, "</code> (");
	put_text(&s, csrf_reason_str(reason));
	puts_(&s, "), status ");
	puts_(&s, code);
	puts_(&s, ".</p></body></html>\n");
	if (s.short_) {
		out[0] = '\0';
		return CSRF_ERR_BUFFER;
	}
	out[s.len] = '\0';
	if (out_len)
		*out_len = s.len;
	return CSRF_OK;
}

static void answer_header(csrf_reject_answer_t *a, const char *name, const char *value, size_t len)
{
	a->headers[a->n_headers].name = (csrf_slice){name, strlen(name)};
	a->headers[a->n_headers].value = (csrf_slice){value, len};
	a->n_headers++;
}

/* The retry token into the library's own page, as the injector puts it
 * into any page: the csrf-param and csrf-token meta after <head>. */
static int put_retry(csrf_reject_answer_t *a)
{
	static const char head[] = "<head>";
	char *at = strstr(a->body, head);
	size_t field = strlen(a->page.field), token = strlen(a->page.token);
	static const char pre[] = "<meta name=\"csrf-param\" content=\"",
	                  mid[] = "\"><meta name=\"csrf-token\" content=\"", end[] = "\">";
	size_t add = sizeof pre - 1 + field + sizeof mid - 1 + token + sizeof end - 1;
	if (at == NULL || a->body_len + add + 1 > sizeof a->body)
		return 0;
	at += sizeof head - 1;
	size_t off = (size_t)(at - a->body);
	memmove(at + add, at, a->body_len - off + 1);
	char *p = at;
	memcpy(p, pre, sizeof pre - 1), p += sizeof pre - 1;
	memcpy(p, a->page.field, field), p += field;
	memcpy(p, mid, sizeof mid - 1), p += sizeof mid - 1;
	memcpy(p, a->page.token, token), p += token;
	memcpy(p, end, sizeof end - 1);
	a->body_len += add;
	return 1;
}

CSRF_API csrf_reason csrf_reject_answer(const csrf_ctx *ctx, const csrf_request *req, csrf_reason reason,
                                        unsigned deny_status, csrf_reject_answer_t *out)
{
	if (!out)
		return CSRF_ERR_ARG;
	memset(out, 0, offsetof(csrf_reject_answer_t, body));
	memset(&out->page, 0, sizeof out->page);
	out->body[0] = '\0';
	out->body_len = 0;
	if (csrf_reason_allows(reason))
		return CSRF_ERR_ARG;
	out->status = csrf_reason_http_status(reason, deny_status);
	csrf_reason r = csrf_reject_page(reason, out->status, out->body, sizeof out->body, &out->body_len);
	if (r != CSRF_OK)
		return r;
	answer_header(out, "Content-Type", "text/html; charset=utf-8", 24);
	answer_header(out, "Content-Security-Policy", CSRF_REJECT_PAGE_CSP, sizeof CSRF_REJECT_PAGE_CSP - 1);
	answer_header(out, "Cache-Control", CSRF_REJECT_PAGE_CACHE_CONTROL, sizeof CSRF_REJECT_PAGE_CACHE_CONTROL - 1);
	if (ctx && req && csrf_retry_prepare(ctx, req, reason, &out->page) == CSRF_OK) {
		if (!put_retry(out)) {
			csrf_page_wipe(&out->page);
			return CSRF_OK;
		}
		out->retry = 1;
		answer_header(out, CSRF_HEADER_NAME, out->page.token, strlen(out->page.token));
		if (out->page.set_cookie_len)
			answer_header(out, "Set-Cookie", out->page.set_cookie, out->page.set_cookie_len);
	}
	return CSRF_OK;
}

CSRF_API void csrf_reject_answer_wipe(csrf_reject_answer_t *answer)
{
	if (!answer)
		return;
	csrf_page_wipe(&answer->page);
	if (answer->retry)
		csrfi_wipe(answer->body, sizeof answer->body);
	answer->retry = 0;
}
