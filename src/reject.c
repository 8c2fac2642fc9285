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
