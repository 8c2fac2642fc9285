/* SPDX-License-Identifier: BSD-2-Clause */
/* test_inject.c - the streaming HTML injector: a table of documents and
 * their expected output, each fed whole, byte by byte, split in two at
 * every position and at random positions, and cut at every prefix; every
 * chunk and the injector itself flush against a guard page; argument
 * checks, emit stopping the feed, and a 10 MB stream in bounded memory. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csrf.h"
#include "testutil.h"

/* A dummy field and token; the injector only copies them. */
#define F "csrf_f1"
#define T "tok-EN_9"
#define SELF "https://self.example"
#define IN "<input type=\"hidden\" name=\"" F "\" value=\"" T "\">"
#define MT "<meta name=\"csrf-param\" content=\"" F "\"><meta name=\"csrf-token\" content=\"" T "\">"
#define PF "<form method=post>"

/* The bound csrf.h documents. */
#define STATE_BOUND CSRF_INJECT_STATE_MAX

typedef struct {
	const char *name;
	const char *in;
	const char *want;
	unsigned count;
} row;

static const row rows[] = {
    {"empty", "", "", 0},
    {"text", "hello > world & co", "hello > world & co", 0},
    {"post form", "<form method=\"post\">x</form>", "<form method=\"post\">" IN "x</form>", 1},
    {"upper case", "<FORM METHOD=POST>", "<FORM METHOD=POST>" IN, 1},
    {"mixed case", "<FoRm MeThOd='PoSt'>", "<FoRm MeThOd='PoSt'>" IN, 1},
    {"unquoted", PF, PF IN, 1},
    {"spaces around =", "<form method = \"post\" >", "<form method = \"post\" >" IN, 1},
    {"newlines", "<form\nmethod\n=\npost\n>", "<form\nmethod\n=\npost\n>" IN, 1},
    {"slash separator", "<form/method=post>", "<form/method=post>" IN, 1},
    {"self-closing", "<form method=\"post\"/>", "<form method=\"post\"/>" IN, 1},
    {"unquoted slash is value", "<form method=post/>", "<form method=post/>", 0},
    {"get", "<form method=get>", "<form method=get>", 0},
    {"no method", "<form action=\"/x\">", "<form action=\"/x\">", 0},
    {"empty method", "<form method>", "<form method>", 0},
    {"method not trimmed", "<form method=\" post \">", "<form method=\" post \">", 0},
    {"method dialog", "<form method=dialog>", "<form method=dialog>", 0},
    {"method postx", "<form method=postx>", "<form method=postx>", 0},
    {"method decimal ref", "<form method=\"p&#111;st\">", "<form method=\"p&#111;st\">" IN, 1},
    {"method hex ref", "<form method=\"&#x50;OST\">", "<form method=\"&#x50;OST\">" IN, 1},
    {"method ref no semicolon", "<form method=\"&#112ost\">", "<form method=\"&#112ost\">" IN, 1},
    {"method amp", "<form method=\"post&amp;\">", "<form method=\"post&amp;\">", 0},
    {"method non-ascii ref", "<form method=\"&#x170;ost\">", "<form method=\"&#x170;ost\">", 0},
    {"first method wins", "<form method=get method=post>", "<form method=get method=post>", 0},
    {"first method wins 2", "<form method=post method=get>", "<form method=post method=get>" IN, 1},
    {"formmethod is not method", "<form formmethod=post>", "<form formmethod=post>", 0},
    {"data-method", "<form data-method=post>", "<form data-method=post>", 0},
    {"long method", "<form method=\"post                                  \">",
     "<form method=\"post                                  \">", 0},

    /* actions */
    {"relative", "<form method=post action=\"/submit\">", "<form method=post action=\"/submit\">" IN, 1},
    {"relative unquoted", "<form method=post action=/x>", "<form method=post action=/x>" IN, 1},
    {"relative page", "<form method=post action=\"vote.php?a=1&amp;b=2\">",
     "<form method=post action=\"vote.php?a=1&amp;b=2\">" IN, 1},
    {"relative with colon later", "<form method=post action=\"a_b:c\">", "<form method=post action=\"a_b:c\">" IN, 1},
    {"relative amp after non-scheme", "<form method=post action=\"a_b&amp;c\">",
     "<form method=post action=\"a_b&amp;c\">" IN, 1},
    {"relative dot", "<form method=post action=\"./x\">", "<form method=post action=\"./x\">" IN, 1},
    {"query only", "<form method=post action=\"?q=1\">", "<form method=post action=\"?q=1\">" IN, 1},
    {"fragment only", "<form method=post action=\"#x\">", "<form method=post action=\"#x\">" IN, 1},
    {"empty action", "<form method=post action=\"\">", "<form method=post action=\"\">" IN, 1},
    {"bare action", "<form method=post action>", "<form method=post action>" IN, 1},
    {"blank action", "<form method=post action=\"  \">", "<form method=post action=\"  \">" IN, 1},
    {"slash", "<form method=post action=\"/\">", "<form method=post action=\"/\">" IN, 1},
    {"self absolute", "<form method=post action=\"https://self.example/x\">",
     "<form method=post action=\"https://self.example/x\">" IN, 1},
    {"self absolute upper", "<form method=post action=\"HTTPS://SELF.EXAMPLE/x\">",
     "<form method=post action=\"HTTPS://SELF.EXAMPLE/x\">" IN, 1},
    {"self default port", "<form method=post action=\"https://self.example:443/\">",
     "<form method=post action=\"https://self.example:443/\">" IN, 1},
    {"self no path", "<form method=post action=\"https://self.example\">",
     "<form method=post action=\"https://self.example\">" IN, 1},
    {"self query", "<form method=post action=\"https://self.example?x=1\">",
     "<form method=post action=\"https://self.example?x=1\">" IN, 1},
    {"self padded", "<form method=post action=\" https://self.example/ \">",
     "<form method=post action=\" https://self.example/ \">" IN, 1},
    {"self amp in path", "<form method=post action=\"https://self.example/a?b&amp;c\">",
     "<form method=post action=\"https://self.example/a?b&amp;c\">" IN, 1},
    {"other port", "<form method=post action=\"https://self.example:8443/\">",
     "<form method=post action=\"https://self.example:8443/\">", 0},
    {"other scheme", "<form method=post action=\"http://self.example/\">",
     "<form method=post action=\"http://self.example/\">", 0},
    {"evil", "<form method=post action=\"https://evil.example/\">",
     "<form method=post action=\"https://evil.example/\">", 0},
    {"self as subdomain", "<form method=post action=\"https://self.example.evil.example/\">",
     "<form method=post action=\"https://self.example.evil.example/\">", 0},
    {"userinfo", "<form method=post action=\"https://self.example@evil.example/\">",
     "<form method=post action=\"https://self.example@evil.example/\">", 0},
    {"ref in host", "<form method=post action=\"https://self.example&#46;evil.example/\">",
     "<form method=post action=\"https://self.example&#46;evil.example/\">", 0},
    {"protocol relative", "<form method=post action=\"//evil.example/\">",
     "<form method=post action=\"//evil.example/\">", 0},
    {"protocol relative self", "<form method=post action=\"//self.example/\">",
     "<form method=post action=\"//self.example/\">", 0},
    {"backslashes", "<form method=post action=\"\\\\evil.example\">", "<form method=post action=\"\\\\evil.example\">",
     0},
    {"slash backslash", "<form method=post action=\"/\\evil.example\">",
     "<form method=post action=\"/\\evil.example\">", 0},
    {"leading space //", "<form method=post action=\" //evil.example\">",
     "<form method=post action=\" //evil.example\">", 0},
    {"tab inside //", "<form method=post action=\"/\t/evil.example\">",
     "<form method=post action=\"/\t/evil.example\">", 0},
    {"newline in scheme", "<form method=post action=\"ht\ntps://evil.example/\">",
     "<form method=post action=\"ht\ntps://evil.example/\">", 0},
    {"ref slash", "<form method=post action=\"/&#x2f;evil.example\">",
     "<form method=post action=\"/&#x2f;evil.example\">", 0},
    {"ref first", "<form method=post action=\"&#x2f;&#x2f;evil.example\">",
     "<form method=post action=\"&#x2f;&#x2f;evil.example\">", 0},
    {"javascript", "<form method=post action=\"javascript:alert(1)\">",
     "<form method=post action=\"javascript:alert(1)\">", 0},
    {"javascript upper", "<form method=post action=\"JavaScript:alert(1)\">",
     "<form method=post action=\"JavaScript:alert(1)\">", 0},
    {"javascript ref", "<form method=post action=\"java&#115;cript:alert(1)\">",
     "<form method=post action=\"java&#115;cript:alert(1)\">", 0},
    {"colon ref", "<form method=post action=\"javascript&colon;alert(1)\">",
     "<form method=post action=\"javascript&colon;alert(1)\">", 0},
    {"scheme then amp", "<form method=post action=\"edit&amp;x\">", "<form method=post action=\"edit&amp;x\">", 0},
    {"data", "<form method=post action=\"data:text/html,x\">", "<form method=post action=\"data:text/html,x\">", 0},
    {"ftp self", "<form method=post action=\"ftp://self.example/\">",
     "<form method=post action=\"ftp://self.example/\">", 0},
    {"https no slashes", "<form method=post action=\"https:self.example\">",
     "<form method=post action=\"https:self.example\">", 0},
    {"https backslashes", "<form method=post action=\"https:\\\\self.example\">",
     "<form method=post action=\"https:\\\\self.example\">", 0},
    {"https three slashes", "<form method=post action=\"https:///self.example\">",
     "<form method=post action=\"https:///self.example\">", 0},
    {"first action wins", "<form method=post action=\"/\" action=\"https://evil.example/\">",
     "<form method=post action=\"/\" action=\"https://evil.example/\">" IN, 1},
    {"first action wins 2", "<form method=post action=\"https://evil.example/\" action=\"/\">",
     "<form method=post action=\"https://evil.example/\" action=\"/\">", 0},

/* <base href> moves relative actions */
#define EB "<base href=\"https://evil.example/\">"
    {"foreign base", EB "<form method=post action=\"/x\">", EB "<form method=post action=\"/x\">", 0},
    {"foreign base no action", EB PF, EB PF IN, 1},
    {"foreign base empty action", EB "<form method=post action=\"\">", EB "<form method=post action=\"\">" IN, 1},
    {"foreign base blank action", EB "<form method=post action=\" \">", EB "<form method=post action=\" \">", 0},
    {"foreign base query action", EB "<form method=post action=\"?a\">", EB "<form method=post action=\"?a\">", 0},
    {"foreign base self absolute", EB "<form method=post action=\"https://self.example/x\">",
     EB "<form method=post action=\"https://self.example/x\">" IN, 1},
    {"self base", "<base href=\"https://self.example/app/\"><form method=post action=x>",
     "<base href=\"https://self.example/app/\"><form method=post action=x>" IN, 1},
    {"relative base", "<base href=\"/app/\"><form method=post action=x>",
     "<base href=\"/app/\"><form method=post action=x>" IN, 1},
    {"empty base", "<base href=\"\"><form method=post action=x>", "<base href=\"\"><form method=post action=x>" IN, 1},
    {"protocol-relative base", "<base href=\"//evil.example/\"><form method=post action=x>",
     "<base href=\"//evil.example/\"><form method=post action=x>", 0},
    {"javascript base", "<BASE HREF=\"javascript:x\"><form method=post action=x>",
     "<BASE HREF=\"javascript:x\"><form method=post action=x>", 0},
    {"first base wins", "<base href=\"/\">" EB "<form method=post action=x>",
     "<base href=\"/\">" EB "<form method=post action=x>" IN, 1},
    {"base without href skipped", "<base target=_top>" EB "<form method=post action=x>",
     "<base target=_top>" EB "<form method=post action=x>", 0},
    {"first href of base", "<base href=\"/\" href=\"https://evil.example/\"><form method=post action=x>",
     "<base href=\"/\" href=\"https://evil.example/\"><form method=post action=x>" IN, 1},
    {"base in comment", "<!--" EB "--><form method=post action=x>", "<!--" EB "--><form method=post action=x>" IN, 1},
    {"base end tag", "</base href=\"https://evil.example/\"><form method=post action=x>",
     "</base href=\"https://evil.example/\"><form method=post action=x>" IN, 1},
    {"bases is not base", "<bases href=\"https://evil.example/\"><form method=post action=x>",
     "<bases href=\"https://evil.example/\"><form method=post action=x>" IN, 1},

    /* head */
    {"head", "<html><head><title>t</title></head>", "<html><head>" MT "<title>t</title></head>", 1},
    {"head once", "<head></head><head>", "<head>" MT "</head><head>", 1},
    {"head upper attrs", "<HEAD lang=en>", "<HEAD lang=en>" MT, 1},
    {"header is not head", "<header><heads>", "<header><heads>", 0},
    {"end head", "</head><head>", "</head><head>" MT, 1},
    {"head and form", "<head></head><body>" PF, "<head>" MT "</head><body>" PF IN, 2},

    /* comments and bogus comments */
    {"comment", "<!-- " PF " -->", "<!-- " PF " -->", 0},
    {"comment then form", "<!-- x -->" PF, "<!-- x -->" PF IN, 1},
    {"empty comment", "<!---->" PF, "<!---->" PF IN, 1},
    {"abrupt comment", "<!-->" PF, "<!-->" PF IN, 1},
    {"abrupt comment dash", "<!--->" PF, "<!--->" PF IN, 1},
    {"comment bang end", "<!-- x --!>" PF, "<!-- x --!>" PF IN, 1},
    {"comment spaced end", "<!-- -- >" PF " -->", "<!-- -- >" PF " -->", 0},
    {"comment dashes", "<!-- a---" PF "--->" PF, "<!-- a---" PF "--->" PF IN, 1},
    {"comment nested open", "<!-- <!-- " PF " -->" PF, "<!-- <!-- " PF " -->" PF IN, 1},
    {"unterminated comment", "<!-- " PF, "<!-- " PF, 0},
    {"unterminated comment dash", "<!-- " PF "--", "<!-- " PF "--", 0},
    {"doctype", "<!DOCTYPE html>" PF, "<!DOCTYPE html>" PF IN, 1},
    {"bogus bang", "<!x " PF ">", "<!x " PF ">", 0},
    {"bogus dash", "<!-x" PF, "<!-x" PF, 0},
    {"bogus question", "<? " PF " ?>", "<? " PF " ?>", 0},
    {"cdata is bogus in html", "<![CDATA[" PF "]]>", "<![CDATA[" PF "]]>", 0},
    {"bogus end tag", "</ " PF, "</ " PF, 0},
    {"empty end tag", "</>" PF, "</>" PF IN, 1},

    /* raw text */
    {"script string", "<script>var s=\"" PF "\";</script>" PF, "<script>var s=\"" PF "\";</script>" PF IN, 1},
    {"script split end", "<script>w('</scr'+'ipt>" PF "')</script>", "<script>w('</scr'+'ipt>" PF "')</script>", 0},
    {"script end upper", "<SCRIPT>x</SCRIPT >" PF, "<SCRIPT>x</SCRIPT >" PF IN, 1},
    {"script end slash", "<script>x</script/>" PF, "<script>x</script/>" PF IN, 1},
    {"script end attrs", "<script>x</script a='>'>" PF, "<script>x</script a='>'>" PF IN, 1},
    {"scripts is not script", "<script></scripts>" PF "</script>", "<script></scripts>" PF "</script>", 0},
    {"script type attr", "<script type=\"text/html\">" PF "</script>", "<script type=\"text/html\">" PF "</script>", 0},
    {"script escaped", "<script><!--</script>" PF, "<script><!--</script>" PF IN, 1},
    {"script escaped closed", "<script>a<!--b-->c</script>" PF, "<script>a<!--b-->c</script>" PF IN, 1},
    {"script double escaped", "<script><!--<script></script>" PF "--></script>" PF,
     "<script><!--<script></script>" PF "--></script>" PF IN, 1},
    {"script double escape holds", "<script><!--<script></script>" PF, "<script><!--<script></script>" PF, 0},
    {"script double escape ends", "<script><!--<script></script></script>" PF,
     "<script><!--<script></script></script>" PF IN, 1},
    {"script double escape other", "<script><!--<scripts></script>" PF, "<script><!--<scripts></script>" PF IN, 1},
    {"unterminated script", "<script>" PF, "<script>" PF, 0},
    {"style", "<style>a{content:\"" PF "\"}</style>" PF, "<style>a{content:\"" PF "\"}</style>" PF IN, 1},
    {"style comment no escape", "<style><!--</style>" PF, "<style><!--</style>" PF IN, 1},
    {"textarea", "<textarea>" PF "</textarea>", "<textarea>" PF "</textarea>", 0},
    {"textarea near end", "<textarea></textareax>" PF "</TEXTAREA>" PF, "<textarea></textareax>" PF "</TEXTAREA>" PF IN,
     1},
    {"title", "<title>" PF "</title>" PF, "<title>" PF "</title>" PF IN, 1},
    {"title head", "<title><head></title><head>", "<title><head></title><head>" MT, 1},
    {"xmp", "<xmp>" PF "</xmp>", "<xmp>" PF "</xmp>", 0},
    {"noscript", "<noscript>" PF "</noscript>", "<noscript>" PF "</noscript>", 0},
    {"iframe", "<iframe>" PF "</iframe>", "<iframe>" PF "</iframe>", 0},
    {"noembed noframes", "<noembed>" PF "</noembed><noframes>" PF "</noframes>",
     "<noembed>" PF "</noembed><noframes>" PF "</noframes>", 0},
    {"plaintext", "<plaintext>" PF "</plaintext>" PF, "<plaintext>" PF "</plaintext>" PF, 0},
    {"end tag raw name is not raw", "</script>" PF, "</script>" PF IN, 1},

    /* attribute values and malformed tags */
    {"in dq attribute", "<div title=\"" PF "\">", "<div title=\"" PF "\">", 0},
    {"in sq attribute", "<div title='" PF "'>", "<div title='" PF "'>", 0},
    {"in unquoted attribute", "<a href=<form method=post>", "<a href=<form method=post>", 0},
    {"as attribute name", "<div <form method=post>", "<div <form method=post>", 0},
    {"form in form value", "<form method=post action=\"/x?<form>\">", "<form method=post action=\"/x?<form>\">" IN, 1},
    {"double lt", "<" PF, "<" PF IN, 1},
    {"space after lt", "< form method=post>", "< form method=post>", 0},
    {"digit after lt", "<1form method=post>" PF, "<1form method=post>" PF IN, 1},
    {"formx", "<formx method=post>", "<formx method=post>", 0},
    {"long tag name", "<formformformform method=post>", "<formformformform method=post>", 0},
    {"long attr name", "<form methodmethod=post>", "<form methodmethod=post>", 0},
    /* '/' ends an attribute name ("p", then "=\"" a name of its own), also
     * where 16 bytes are read at once; found by fuzz.inject (whole and
     * split fed differently) */
    {"slash ends attr name", "<s p/=\">" PF, "<s p/=\">" PF IN, 1},
    {"slash ends a long attr name", "<s abcdefghijklmnopqrst/=\">" PF, "<s abcdefghijklmnopqrst/=\">" PF IN, 1},
    {"slash in attr name, then a foreign form", "<s p/=\"><form method=post action=\"//evil.example/\">" PF "</form>",
     "<s p/=\"><form method=post action=\"//evil.example/\">" PF "</form>", 0},
    {"unterminated tag", "<form method=post", "<form method=post", 0},
    {"unterminated value", "<form method=\"post>", "<form method=\"post>", 0},
    {"quote in name", "<form x\"=y method=post>", "<form x\"=y method=post>" IN, 1},
    {"eq first", "<form =x method=post>", "<form =x method=post>" IN, 1},
    {"no space after value", "<form a=\"b\"method=\"post\">", "<form a=\"b\"method=\"post\">" IN, 1},
    {"end tag with attrs", "</form method=post>" PF, "</form method=post>" PF IN, 1},

    /* nesting */
    {"nested form", PF PF "</form>", PF IN PF "</form>", 1},
    {"nested after evil", "<form method=post action=\"https://evil.example/\">" PF,
     "<form method=post action=\"https://evil.example/\">" PF, 0},
    {"nested after get", "<form>" PF "</form>" PF, "<form>" PF "</form>" PF IN, 1},
    {"sequential", PF "</form>" PF "</form>", PF IN "</form>" PF IN "</form>", 2},
    {"stray end form", "</form>" PF, "</form>" PF IN, 1},
    {"self-closed form stays open", "<form/>" PF, "<form/>" PF, 0},
    {"end form in comment", PF "<!-- </form> -->" PF, PF IN "<!-- </form> -->" PF, 1},
    {"end form in script", PF "<script></form></script>" PF, PF IN "<script></form></script>" PF, 1},
    {"page",
     "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>Vote</title></head>\n<body>"
     "<form method=\"POST\" action=\"/vote\"><input name=story value=42><button>y</button></form>"
     "<form action=\"/search\"><input name=q></form>"
     "<form method=post action=\"https://evil.example/\"></form></body></html>",
     "<!DOCTYPE html>\n<html><head>" MT "<meta charset=utf-8><title>Vote</title></head>\n<body>"
     "<form method=\"POST\" action=\"/vote\">" IN "<input name=story value=42><button>y</button></form>"
     "<form action=\"/search\"><input name=q></form>"
     "<form method=post action=\"https://evil.example/\"></form></body></html>",
     2},

/* Markup before the real form that makes the browser give the real form's
 * fields to another form, or move its URL: no token in the real form. */
#define EF "<form action=\"https://evil.example/\" method=post>"
#define RF "<form method=post action=\"/real\">"
    {"attack svg style breakout", "<svg><style><p>" EF "</style></svg>" RF, "<svg><style><p>" EF "</style></svg>" RF,
     0},
    {"attack math style breakout", "<math><style><p>" EF "</style></math>" RF,
     "<math><style><p>" EF "</style></math>" RF, 0},
    {"attack svg script breakout", "<svg><script><p>" EF "</script></svg>" RF,
     "<svg><script><p>" EF "</script></svg>" RF, 0},
    {"attack svg form end", EF "<svg><form></form></svg>" RF, EF "<svg><form></form></svg>" RF, 0},
    {"attack template form end", EF "<template></form></template>" RF, EF "<template></form></template>" RF, 0},
    {"attack cdata form end", EF "<svg><![CDATA[x></form>]]></svg>" RF, EF "<svg><![CDATA[x></form>]]></svg>" RF, 0},
    {"attack noscript form", "<noscript>" EF "</noscript>" RF, "<noscript>" EF "</noscript>" RF, 0},
    {"attack iso-2022-jp escape", "\x1b$B<!--\x1b(B" RF "-->", "\x1b$B<!--\x1b(B" RF "-->", 0},
    {"attack base in svg breakout", "<svg><style><p><base href=\"https://evil.example/\"></style></svg>" RF,
     "<svg><style><p><base href=\"https://evil.example/\"></style></svg>" RF, 0},
    {"base in svg breakout, no action", "<svg><style><p><base href=\"https://evil.example/\"></style></svg>" PF,
     "<svg><style><p><base href=\"https://evil.example/\"></style></svg>" PF IN, 1},
    {"svg base is not base", "<svg><base href=\"https://evil.example/\"/></svg>" RF,
     "<svg><base href=\"https://evil.example/\"/></svg>" RF IN, 1},
    {"attack select form end", EF "<select></form></select>" RF, EF "<select></form></select>" RF, 0},
    {"attack select title", "<select><title></select>" EF "</title>" RF, "<select><title></select>" EF "</title>" RF,
     0},
    {"attack noscript quote", "<noscript><p title=\"</noscript>" EF "\">" RF,
     "<noscript><p title=\"</noscript>" EF "\">" RF, 0},
    {"attack noscript comment", EF "<noscript><!--</noscript></form>-->" RF,
     EF "<noscript><!--</noscript></form>-->" RF, 0},
    {"attack noscript iframe", EF "<noscript><iframe></noscript></form></iframe>" RF,
     EF "<noscript><iframe></noscript></form></iframe>" RF, 0},
    {"attack annotation-xml html", "<math><annotation-xml encoding=\"TEXT/HTML\"><style><p>" EF "</style></math>" RF,
     "<math><annotation-xml encoding=\"TEXT/HTML\"><style><p>" EF "</style></math>" RF, 0},
    {"attack annotation-xml plain", "<math><annotation-xml><style><p>" EF "</style></math>" RF,
     "<math><annotation-xml><style><p>" EF "</style></math>" RF, 0},
    {"attack foreignobject form", "<svg><foreignObject>" EF "</foreignObject></svg>" RF,
     "<svg><foreignObject>" EF "</foreignObject></svg>" RF, 0},
    {"attack mi style", "<math><mi><style></math>" EF "</style>" RF, "<math><mi><style></math>" EF "</style>" RF, 0},
    {"attack svg unmatched end", EF "<svg></form>" RF, EF "<svg></form>" RF, 0},
    {"attack svg p end", "<svg></p><style><p>" EF "</style>" RF, "<svg></p><style><p>" EF "</style>" RF, 0},
    {"attack base ref", "<base href=\"&#x2F;&#x2F;evil.example/\"><form method=post action=x>",
     "<base href=\"&#x2F;&#x2F;evil.example/\"><form method=post action=x>", 0},

    /* Pages as real applications write them: the token still goes in. */
    {"plain attacker form closed", EF "</form>" RF, EF "</form>" RF IN, 1},
    {"svg icon", "<svg viewBox=\"0 0 1 1\"><path d=\"M0 0\"/></svg>" RF,
     "<svg viewBox=\"0 0 1 1\"><path d=\"M0 0\"/></svg>" RF IN, 1},
    {"svg icon title", "<svg><title>Close</title><use href=\"#x\"/></svg>" RF,
     "<svg><title>Close</title><use href=\"#x\"/></svg>" RF IN, 1},
    {"svg self-closed", "<svg/>" RF, "<svg/>" RF IN, 1},
    {"svg nested", "<svg><g><g><linearGradient></linearGradient></g></G></svg>" RF,
     "<svg><g><g><linearGradient></linearGradient></g></G></svg>" RF IN, 1},
    {"svg style", "<svg><style>a{fill:red}</style></svg>" RF, "<svg><style>a{fill:red}</style></svg>" RF IN, 1},
    {"svg cdata hides", "<svg><![CDATA[" EF "]]></svg>" RF, "<svg><![CDATA[" EF "]]></svg>" RF IN, 1},
    {"svg cdata hides breakout", "<svg><![CDATA[x><p>" EF "]]></svg>" RF, "<svg><![CDATA[x><p>" EF "]]></svg>" RF IN,
     1},
    {"html cdata ends at >", "<![CDATA[>" EF "]]>" RF, "<![CDATA[>" EF "]]>" RF, 0},
    {"svg cdata brackets", "<svg><![CDATA[a]]]></svg>" RF, "<svg><![CDATA[a]]]></svg>" RF IN, 1},
    {"svg cdata lookalike", "<svg><![CDATa[x>" RF "</svg>" RF, "<svg><![CDATa[x>" RF "</svg>" RF IN, 1},
    {"svg breakout div", "<svg><g><div>" RF, "<svg><g><div>" RF IN, 1},
    {"svg form is svg", "<svg><form method=post></form></svg>" RF, "<svg><form method=post></form></svg>" RF IN, 1},
    {"svg img at ip", "<svg><foreignObject><img src=x></foreignObject></svg>" RF,
     "<svg><foreignObject><img src=x></foreignObject></svg>" RF IN, 1},
    {"math", "<math><mi>x</mi><mo>=</mo><mn>1</mn></math>" RF, "<math><mi>x</mi><mo>=</mo><mn>1</mn></math>" RF IN, 1},
    {"math svg in annotation", "<math><annotation-xml><svg><g/></svg></annotation-xml></math>" RF,
     "<math><annotation-xml><svg><g/></svg></annotation-xml></math>" RF IN, 1},
    {"template", "<template>" RF "</form></template>" RF, "<template>" RF "</form></template>" RF IN, 1},
    {"template nested", "<template><template></template>" RF "</template>" RF,
     "<template><template></template>" RF "</template>" RF IN, 1},
    {"select", "<select name=a><option>1<option>2</select>" RF, "<select name=a><option>1<option>2</select>" RF IN, 1},
    {"select script", "<select><script>x='</select>" EF "'</script></select>" RF,
     "<select><script>x='</select>" EF "'</script></select>" RF IN, 1},
    {"form holding select", RF "<select><option>1</select></form>" RF, RF IN "<select><option>1</select></form>" RF IN,
     2},
    {"noscript pixel", "<noscript><img height=1 src=\"https://t.example/p?a=1&b=2\"/></noscript>" RF,
     "<noscript><img height=1 src=\"https://t.example/p?a=1&b=2\"/></noscript>" RF IN, 1},
    {"noscript iframe", "<noscript><iframe src=\"https://t.example/ns\" style=\"display:none\"></iframe></noscript>" RF,
     "<noscript><iframe src=\"https://t.example/ns\" style=\"display:none\"></iframe></noscript>" RF IN, 1},
    {"noscript style", "<noscript><style>.js{display:none}</style></noscript>" RF,
     "<noscript><style>.js{display:none}</style></noscript>" RF IN, 1},
    {"noscript end tag attrs", "<noscript>x</noscript a=b>" RF, "<noscript>x</noscript a=b>" RF IN, 1},
    {"table form", "<table><form method=post><tr><td><input name=a></td></tr></form></table>",
     "<table><form method=post>" IN "<tr><td><input name=a></td></tr></form></table>", 1},
    {"phpmyadmin action", "<form method=\"post\" action=\"index.php&#x3F;route&#x3D;&#x2F;preferences&#x2F;features\">",
     "<form method=\"post\" action=\"index.php&#x3F;route&#x3D;&#x2F;preferences&#x2F;features\">" IN, 1},
    {"named ref sol", "<form method=post action=\"&sol;&sol;evil.example\">",
     "<form method=post action=\"&sol;&sol;evil.example\">", 0},
    {"named ref newline", "<form method=post action=\"/&NewLine;/evil.example\">",
     "<form method=post action=\"/&NewLine;/evil.example\">", 0},
    {"named ref colon self", "<form method=post action=\"https&colon;//self.example/\">",
     "<form method=post action=\"https&colon;//self.example/\">" IN, 1},
    {"unknown ref in path", "<form method=post action=\"/a&copy;b\">", "<form method=post action=\"/a&copy;b\">" IN, 1},
    {"legacy ref kept", "<form method=post action=\"x?a=1&amp=2\">", "<form method=post action=\"x?a=1&amp=2\">" IN, 1},
    {"method named ref", "<form method=\"&#x70;o&#115;t\">", "<form method=\"&#x70;o&#115;t\">" IN, 1},
    {"method dialog ref", "<form method=\"dialo&#x67;\">", "<form method=\"dialo&#x67;\">", 0},

/* Buttons */
#define GF "<form action=\"/s\">"
    {"formmethod post button", GF "<button formmethod=post>", GF "<button formmethod=post>" IN, 1},
    {"formmethod post input", GF "<input type=submit formmethod=POST>", GF "<input type=submit formmethod=POST>" IN, 1},
    {"formmethod post image", GF "<input type=IMAGE formmethod=post src=x>",
     GF "<input type=IMAGE formmethod=post src=x>" IN, 1},
    {"formmethod once", GF "<button formmethod=post><button formmethod=post>",
     GF "<button formmethod=post>" IN "<button formmethod=post>", 1},
    {"formmethod text input", GF "<input formmethod=post>", GF "<input formmethod=post>", 0},
    {"formmethod type button", GF "<button type=button formmethod=post>", GF "<button type=button formmethod=post>", 0},
    {"formmethod elsewhere", GF "<button formmethod=post formaction=\"https://evil.example/\">",
     GF "<button formmethod=post formaction=\"https://evil.example/\">", 0},
    {"formmethod self action", GF "<button formmethod=post formaction=\"/t\">",
     GF "<button formmethod=post formaction=\"/t\">" IN, 1},
    {"formmethod other form", "<form action=\"https://evil.example/\"><button formmethod=post>",
     "<form action=\"https://evil.example/\"><button formmethod=post>", 0},
    {"formmethod form attr", GF "<button form=f formmethod=post>", GF "<button form=f formmethod=post>", 0},
    {"formmethod after close", GF "</form><button formmethod=post>", GF "</form><button formmethod=post>", 0},
    {"formmethod after base", GF "<base href=\"https://evil.example/\"><button formmethod=post>",
     GF "<base href=\"https://evil.example/\"><button formmethod=post>", 0},
    {"formmethod self action after base",
     GF "<base href=\"https://evil.example/\"><button formmethod=post formaction=\"https://self.example/t\">",
     GF "<base href=\"https://evil.example/\"><button formmethod=post formaction=\"https://self.example/t\">" IN, 1},
    {"formaction in posted form", PF "<button formaction=\"https://evil.example/\">",
     PF IN "<button formaction=\"https://evil.example/\">", 1},
};

/* ---- running a document through an injector ---- */

typedef struct {
	char *out; /* everything emitted */
	size_t len, cap;
	char *plain; /* the pieces of the input only */
	size_t plain_len, plain_cap;
	size_t ins_at[64]; /* input bytes before each insertion */
	size_t ins_n[64];
	size_t n_ins;
	const char *chunk; /* the chunk being fed, for the zero-copy check */
	size_t chunk_len;
	const char *mem;
	size_t mem_len;
	int bad; /* a piece pointed outside its chunk / the injector */
	size_t calls;
	size_t stop_at; /* return 1 from this call (1-based); 0 never */
} sink;

static void append(char **buf, size_t *len, size_t *cap, const char *p, size_t n)
{
	if (n == 0)
		return;
	if (*len + n > *cap) {
		size_t c = *cap ? *cap : 256;
		while (c < *len + n)
			c *= 2;
		*buf = realloc(*buf, c);
		assert_non_null(*buf);
		*cap = c;
	}
	memcpy(*buf + *len, p, n);
	*len += n;
}

static int sink_emit(void *ud, const char *p, size_t n, int inserted)
{
	sink *s = ud;
	s->calls++;
	if (n == 0)
		s->bad = 1; /* empty pieces are noise for the caller */
	if (inserted) {
		if (p < s->mem || p + n > s->mem + s->mem_len)
			s->bad = 1;
		if (s->n_ins < 64) {
			s->ins_at[s->n_ins] = s->plain_len;
			s->ins_n[s->n_ins] = n;
			s->n_ins++;
		}
	} else {
		if (p < s->chunk || p + n > s->chunk + s->chunk_len)
			s->bad = 1;
		append(&s->plain, &s->plain_len, &s->plain_cap, p, n);
	}
	append(&s->out, &s->len, &s->cap, p, n);
	if (s->stop_at && s->calls == s->stop_at)
		return 1;
	return 0;
}

static void sink_free(sink *s)
{
	free(s->out);
	free(s->plain);
	memset(s, 0, sizeof *s);
}

/* An empty sink for an injector at mem. */
static void sink_init(sink *s, const char *mem)
{
	memset(s, 0, sizeof *s);
	s->mem = mem;
	s->mem_len = csrf_inject_size();
}

/* An injector in exactly csrf_inject_size() bytes flush against a guard
 * page: a write past its state crashes. */
static csrf_inject *new_injector(char **mem)
{
	size_t sz = csrf_inject_size();
	char *zero = calloc(1, sz);
	assert_non_null(zero);
	*mem = tu_guard_copy(zero, sz);
	free(zero);
	csrf_inject *inj = NULL;
	assert_int_equal(csrf_inject_init(*mem, sz, SELF, strlen(SELF), F, strlen(F), T, strlen(T), &inj), CSRF_OK);
	assert_non_null(inj);
	return inj;
}

/* Feeds in[0..len) cut at cuts[0..ncuts) (increasing, inside (0, len)),
 * each chunk in its own guard-page copy. */
static void run(const char *in, size_t len, const size_t *cuts, size_t ncuts, sink *s, unsigned *count)
{
	char *mem;
	csrf_inject *inj = new_injector(&mem);
	memset(s, 0, sizeof *s);
	s->mem = mem;
	s->mem_len = csrf_inject_size();
	size_t from = 0;
	for (size_t k = 0; k <= ncuts; k++) {
		size_t to = k < ncuts ? cuts[k] : len;
		if (to == from)
			continue;
		char *c = tu_guard_copy(in + from, to - from);
		s->chunk = c;
		s->chunk_len = to - from;
		assert_int_equal(csrf_inject_feed(inj, c, to - from, sink_emit, s), CSRF_OK);
		tu_guard_free(c);
		from = to;
	}
	assert_int_equal(csrf_inject_reset(inj, count), CSRF_OK);
	tu_guard_free(mem);
}

/* Reports where the output differs without printing it (it holds a token). */
static void expect_output(const char *name, const char *mode, size_t at, const sink *s, const char *want,
                          size_t want_len, const char *in, size_t in_len)
{
	if (s->bad)
		fail_msg("%s (%s %zu): a piece pointed outside its chunk or the injector, or was empty", name, mode,
		         at);
	if (s->len != want_len || (want_len && memcmp(s->out, want, want_len) != 0)) {
		size_t d = 0;
		while (d < s->len && d < want_len && s->out[d] == want[d])
			d++;
		fail_msg("%s (%s %zu): output differs from expected at byte %zu (lengths %zu, %zu)", name, mode, at, d,
		         s->len, want_len);
	}
	if (s->plain_len != in_len || (in_len && memcmp(s->plain, in, in_len) != 0))
		fail_msg("%s (%s %zu): output without the insertions is not the input", name, mode, at);
}

static uint32_t xorshift(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static void check_doc(const char *name, const char *in, size_t len, const char *want, size_t want_len,
                      unsigned want_count)
{
	sink s;
	unsigned count;

	/* one chunk */
	run(in, len, NULL, 0, &s, &count);
	expect_output(name, "whole", 0, &s, want, want_len, in, len);
	if (count != want_count)
		fail_msg("%s: %u elements inserted, want %u", name, count, want_count);
	sink full = s;

	/* byte by byte */
	if (len > 1) {
		size_t *cuts = malloc(len * sizeof *cuts);
		assert_non_null(cuts);
		for (size_t i = 1; i < len; i++)
			cuts[i - 1] = i;
		run(in, len, cuts, len - 1, &s, &count);
		expect_output(name, "bytes", 0, &s, want, want_len, in, len);
		assert_int_equal(count, want_count);
		sink_free(&s);
		free(cuts);
	}

	/* two chunks, split at every position */
	for (size_t i = 1; i < len; i++) {
		run(in, len, &i, 1, &s, &count);
		expect_output(name, "split", i, &s, want, want_len, in, len);
		assert_int_equal(count, want_count);
		sink_free(&s);
	}

	/* random splits, fixed seeds */
	for (uint32_t seed = 1; seed <= 16 && len > 1; seed++) {
		uint32_t x = seed * 2654435761u;
		size_t cuts[32], n = 0, at = 0;
		while (n < 32) {
			at += 1 + xorshift(&x) % 7;
			if (at >= len)
				break;
			cuts[n++] = at;
		}
		run(in, len, cuts, n, &s, &count);
		expect_output(name, "seed", seed, &s, want, want_len, in, len);
		assert_int_equal(count, want_count);
		sink_free(&s);
	}

	/* every truncated prefix: the input so far with the insertions that
	 * follow bytes inside it, emitted at once (nothing is held back) */
	for (size_t m = 0; m < len; m++) {
		char *exp = NULL;
		size_t el = 0, ec = 0, k = 0, from = 0;
		unsigned ecount = 0;
		for (k = 0; k < full.n_ins && full.ins_at[k] <= m; k++) {
			append(&exp, &el, &ec, in + from, full.ins_at[k] - from);
			from = full.ins_at[k];
			/* the inserted bytes, taken from the full output */
			size_t off = 0;
			for (size_t j = 0; j < k; j++)
				off += full.ins_n[j];
			append(&exp, &el, &ec, full.out + full.ins_at[k] + off, full.ins_n[k]);
			ecount++;
		}
		append(&exp, &el, &ec, in + from, m - from);
		if (m == 0) {
			/* nothing to feed: the injector emits nothing */
			char *mem;
			csrf_inject *inj = new_injector(&mem);
			memset(&s, 0, sizeof s);
			assert_int_equal(csrf_inject_feed(inj, NULL, 0, sink_emit, &s), CSRF_OK);
			assert_int_equal(s.calls, 0);
			assert_int_equal(csrf_inject_reset(inj, &count), CSRF_OK);
			assert_int_equal(count, 0);
			tu_guard_free(mem);
		} else {
			run(in, m, NULL, 0, &s, &count);
			expect_output(name, "prefix", m, &s, exp ? exp : "", el, in, m);
			if (count != ecount)
				fail_msg("%s (prefix %zu): %u elements inserted, want %u", name, m, count, ecount);
			sink_free(&s);
		}
		free(exp);
	}
	sink_free(&full);
}

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const row *r = &rows[i];
		check_doc(r->name, r->in, strlen(r->in), r->want, strlen(r->want), r->count);
	}
}

/* Builds "<form method=post action=\"" pre + fill x n + post "\">". */
static char *long_action(const char *pre, size_t n, const char *post, size_t *len)
{
	const char *a = "<form method=post action=\"", *z = "\">";
	size_t l = strlen(a) + strlen(pre) + n + strlen(post) + strlen(z);
	char *s = malloc(l + 1);
	assert_non_null(s);
	size_t o = 0;
	memcpy(s + o, a, strlen(a)), o += strlen(a);
	memcpy(s + o, pre, strlen(pre)), o += strlen(pre);
	memset(s + o, 'a', n), o += n;
	memcpy(s + o, post, strlen(post)), o += strlen(post);
	memcpy(s + o, z, strlen(z)), o += strlen(z);
	s[o] = 0;
	*len = l;
	return s;
}

static void test_long_actions(void **state)
{
	(void)state;
	static const struct {
		const char *pre;
		size_t n;
		const char *post;
		int inject;
	} cases[] = {
	    {"/", 3000, "", 1},                     /* relative, long path */
	    {"https://self.example/", 3000, "", 1}, /* origin inside the kept bytes */
	    {"https://self.example/", 2028, "", 1}, /* just over the cap */
	    {"https://self.example/", 2027, "", 1}, /* exactly the cap */
	    {"https://", 3000, ".example/", 0},     /* authority longer than kept */
	    {"https://self.example", 3000, "", 0},  /* authority runs into the cut: maybe "self.exampleaaa" */
	    {"//", 3000, "", 0},
	    {"javascript:", 3000, "", 0},
	    {"", 3000, "", 0},   /* "aaa...": a scheme or a path? the ':' may come later */
	    {"", 3000, ":x", 0}, /* a scheme longer than the kept bytes */
	    {"a_", 3000, "", 1}, /* '_' rules out a scheme: a relative path */
	    {"?", 3000, "", 1},  /* a long query */
	    {" /", 3000, "", 1}, /* a leading blank is stripped */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t len;
		char *in = long_action(cases[i].pre, cases[i].n, cases[i].post, &len);
		char *want = malloc(len + strlen(IN) + 1);
		assert_non_null(want);
		memcpy(want, in, len);
		size_t wl = len;
		if (cases[i].inject) {
			memcpy(want + len, IN, strlen(IN));
			wl += strlen(IN);
		}
		char name[64];
		snprintf(name, sizeof name, "long action %zu", i);
		/* the full split battery is quadratic; whole, bytes and seeds suffice */
		sink s;
		unsigned count;
		run(in, len, NULL, 0, &s, &count);
		expect_output(name, "whole", 0, &s, want, wl, in, len);
		assert_int_equal(count, (unsigned)cases[i].inject);
		sink_free(&s);
		for (size_t at = 1; at < len; at += 97) {
			run(in, len, &at, 1, &s, &count);
			expect_output(name, "split", at, &s, want, wl, in, len);
			assert_int_equal(count, (unsigned)cases[i].inject);
			sink_free(&s);
		}
		free(want);
		free(in);
	}
}

/* Blanks beyond the kept bytes: 3000 spaces then "//evil.example". */
static void test_long_blank_action(void **state)
{
	(void)state;
	const char *a = "<form method=post action=\"", *z = "//evil.example\">";
	size_t n = strlen(a) + 3000 + strlen(z);
	char *in = malloc(n);
	assert_non_null(in);
	memcpy(in, a, strlen(a));
	memset(in + strlen(a), ' ', 3000);
	memcpy(in + strlen(a) + 3000, z, strlen(z));
	sink s;
	unsigned count;
	run(in, n, NULL, 0, &s, &count);
	expect_output("long blank action", "whole", 0, &s, in, n, in, n);
	assert_int_equal(count, 0);
	sink_free(&s);
	free(in);
}

static void test_init_args(void **state)
{
	(void)state;
	size_t sz = csrf_inject_size();
	assert_true(sz > 0);
	assert_true(sz <= STATE_BOUND);
	char *mem = malloc(sz + 16);
	assert_non_null(mem);
	char f64[65], f65[66], t144[145], t145[146];
	memset(f64, 'f', 64), f64[64] = 0;
	memset(f65, 'f', 65), f65[65] = 0;
	memset(t144, 'T', 144), t144[144] = 0;
	memset(t145, 'T', 145), t145[145] = 0;
	const struct {
		const char *name;
		void *mem;
		size_t mem_len;
		const char *origin;
		const char *field;
		const char *token;
		int null_out;
		csrf_reason want;
	} cases[] = {
	    {"ok", mem, sz, SELF, F, T, 0, CSRF_OK},
	    {"ok http port", mem, sz, "http://127.0.0.1:8080", F, T, 0, CSRF_OK},
	    {"ok longest", mem, sz, SELF, f64, t144, 0, CSRF_OK},
	    {"null mem", NULL, sz, SELF, F, T, 0, CSRF_ERR_ARG},
	    {"null out", mem, sz, SELF, F, T, 1, CSRF_ERR_ARG},
	    {"short mem", mem, sz - 1, SELF, F, T, 0, CSRF_ERR_BUFFER},
	    {"no mem", mem, 0, SELF, F, T, 0, CSRF_ERR_BUFFER},
	    {"misaligned", mem + 1, sz, SELF, F, T, 0, CSRF_ERR_ARG},
	    {"null origin", mem, sz, NULL, F, T, 0, CSRF_ERR_ARG},
	    {"bare host", mem, sz, "self.example", F, T, 0, CSRF_ERR_ARG},
	    {"origin path", mem, sz, "https://self.example/", F, T, 0, CSRF_ERR_ARG},
	    {"origin null", mem, sz, "null", F, T, 0, CSRF_ERR_ARG},
	    {"empty origin", mem, sz, "", F, T, 0, CSRF_ERR_ARG},
	    {"null field", mem, sz, SELF, NULL, T, 0, CSRF_ERR_ARG},
	    {"empty field", mem, sz, SELF, "", T, 0, CSRF_ERR_ARG},
	    {"long field", mem, sz, SELF, f65, T, 0, CSRF_ERR_ARG},
	    {"quote field", mem, sz, SELF, "a\"b", T, 0, CSRF_ERR_ARG},
	    {"space field", mem, sz, SELF, "a b", T, 0, CSRF_ERR_ARG},
	    {"gt field", mem, sz, SELF, "a>", T, 0, CSRF_ERR_ARG},
	    {"null token", mem, sz, SELF, F, NULL, 0, CSRF_ERR_ARG},
	    {"empty token", mem, sz, SELF, F, "", 0, CSRF_ERR_ARG},
	    {"long token", mem, sz, SELF, F, t145, 0, CSRF_ERR_ARG},
	    {"quote token", mem, sz, SELF, F, "x\"onmouseover=y", 0, CSRF_ERR_ARG},
	    {"amp token", mem, sz, SELF, F, "a&b", 0, CSRF_ERR_ARG},
	    {"base64 std token", mem, sz, SELF, F, "ab+/=", 0, CSRF_ERR_ARG},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		csrf_inject *inj = (csrf_inject *)1;
		size_t ol = cases[i].origin ? strlen(cases[i].origin) : 0;
		size_t fl = cases[i].field ? strlen(cases[i].field) : 0;
		size_t tl = cases[i].token ? strlen(cases[i].token) : 0;
		csrf_reason rc = csrf_inject_init(cases[i].mem, cases[i].mem_len, cases[i].origin, ol, cases[i].field,
		                                  fl, cases[i].token, tl, cases[i].null_out ? NULL : &inj);
		if (rc != cases[i].want)
			fail_msg("init %s: %d, want %d", cases[i].name, rc, cases[i].want);
		if (!cases[i].null_out) {
			if (rc == CSRF_OK)
				assert_ptr_equal(inj, mem);
			else
				assert_null(inj);
		}
	}
	/* a field given with a length is not read past it */
	csrf_inject *inj = NULL;
	assert_int_equal(csrf_inject_init(mem, sz, SELF, strlen(SELF), "ab\"", 2, T, strlen(T), &inj), CSRF_OK);
	free(mem);
}

static void test_feed_args(void **state)
{
	(void)state;
	char *mem;
	csrf_inject *inj = new_injector(&mem);
	sink s;
	memset(&s, 0, sizeof s);
	unsigned n = 99;
	assert_int_equal(csrf_inject_feed(NULL, "x", 1, sink_emit, &s), CSRF_ERR_ARG);
	assert_int_equal(csrf_inject_feed(inj, NULL, 1, sink_emit, &s), CSRF_ERR_ARG);
	assert_int_equal(csrf_inject_feed(inj, "x", 1, NULL, &s), CSRF_ERR_ARG);
	assert_int_equal(csrf_inject_feed(inj, "x", 0, sink_emit, &s), CSRF_OK);
	assert_int_equal(s.calls, 0);
	assert_int_equal(csrf_inject_reset(NULL, &n), CSRF_ERR_ARG);
	assert_int_equal(csrf_inject_reset(inj, NULL), CSRF_ERR_ARG);
	assert_int_equal(csrf_inject_reset(inj, &n), CSRF_OK);
	assert_int_equal(n, 0);
	sink_free(&s);
	tu_guard_free(mem);
}

/* finish ends one stream; the next starts fresh (a <head> again, no form
 * left open, no foreign base, no state from a comment cut short). */
static void test_finish_resets(void **state)
{
	(void)state;
	char *mem;
	csrf_inject *inj = new_injector(&mem);
	sink s;
	sink_init(&s, mem);
	const char *a = "<head>" EB PF "<!-- ";
	s.chunk = a;
	s.chunk_len = strlen(a);
	assert_int_equal(csrf_inject_feed(inj, a, strlen(a), sink_emit, &s), CSRF_OK);
	unsigned n;
	assert_int_equal(csrf_inject_reset(inj, &n), CSRF_OK);
	assert_int_equal(n, 2);
	sink_free(&s);
	s.mem = mem;
	s.mem_len = csrf_inject_size();
	const char *b = "<head><form method=post action=x>";
	s.chunk = b;
	s.chunk_len = strlen(b);
	assert_int_equal(csrf_inject_feed(inj, b, strlen(b), sink_emit, &s), CSRF_OK);
	assert_int_equal(csrf_inject_reset(inj, &n), CSRF_OK);
	assert_int_equal(n, 2);
	const char *want = "<head>" MT "<form method=post action=x>" IN;
	expect_output("after finish", "whole", 0, &s, want, strlen(want), b, strlen(b));
	sink_free(&s);
	tu_guard_free(mem);
}

/* A non-zero emit stops the feed at once, and the broken stream stays
 * stopped: no later piece is emitted. */
static void test_emit_stops(void **state)
{
	(void)state;
	const char *doc = "<head>a" PF "b" PF "</form>c";
	/* five pieces: "<head>", MT, "a<form ...>", IN, "b<form ...></form>c"
	 * (the second form is nested and gets nothing) */
	for (size_t stop_at = 1; stop_at <= 4; stop_at++) {
		char *mem;
		csrf_inject *inj = new_injector(&mem);
		sink s;
		sink_init(&s, mem);
		s.stop_at = stop_at;
		char *c = tu_guard_copy(doc, strlen(doc));
		s.chunk = c;
		s.chunk_len = strlen(doc);
		assert_int_equal(csrf_inject_feed(inj, c, strlen(doc), sink_emit, &s), CSRF_ERR_STOPPED);
		assert_int_equal(s.calls, stop_at);
		assert_int_equal(csrf_inject_feed(inj, c, strlen(doc), sink_emit, &s), CSRF_ERR_STOPPED);
		assert_int_equal(s.calls, stop_at);
		unsigned n;
		assert_int_equal(csrf_inject_reset(inj, &n), CSRF_OK);
		tu_guard_free(c);
		sink_free(&s);
		tu_guard_free(mem);
	}
	/* stopping on the last piece of a chunk */
	char *mem;
	csrf_inject *inj = new_injector(&mem);
	sink s;
	sink_init(&s, mem);
	s.stop_at = 5;
	s.chunk = doc;
	s.chunk_len = strlen(doc);
	assert_int_equal(csrf_inject_feed(inj, doc, strlen(doc), sink_emit, &s), CSRF_ERR_STOPPED);
	assert_int_equal(s.calls, 5);
	sink_free(&s);
	tu_guard_free(mem);
}

/* The demo's origins: victim on 8080, attacker on 8081 of the same host. */
static void test_port_origin(void **state)
{
	(void)state;
	static const char self[] = "http://127.0.0.1:8080";
	static const struct {
		const char *action;
		int inject;
	} cases[] = {
	    {"http://127.0.0.1:8080/vote", 1}, {"HTTP://127.0.0.1:8080", 1}, {"/vote", 1},
	    {"http://127.0.0.1:8081/vote", 0}, {"http://127.0.0.1/vote", 0}, {"https://127.0.0.1:8080/", 0},
	    {"http://localhost:8080/", 0},     {"//127.0.0.1:8081/vote", 0}, {"http://127.0.0.1:08080/", 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char doc[128];
		int dl = snprintf(doc, sizeof doc, "<form method=post action=\"%s\">", cases[i].action);
		assert_true(dl > 0 && (size_t)dl < sizeof doc);
		size_t sz = csrf_inject_size();
		char *zero = calloc(1, sz);
		assert_non_null(zero);
		char *mem = tu_guard_copy(zero, sz);
		free(zero);
		csrf_inject *inj;
		assert_int_equal(csrf_inject_init(mem, sz, self, strlen(self), F, strlen(F), T, strlen(T), &inj),
		                 CSRF_OK);
		sink s;
		memset(&s, 0, sizeof s);
		s.mem = mem;
		s.mem_len = sz;
		char *c = tu_guard_copy(doc, (size_t)dl);
		s.chunk = c;
		s.chunk_len = (size_t)dl;
		assert_int_equal(csrf_inject_feed(inj, c, (size_t)dl, sink_emit, &s), CSRF_OK);
		unsigned n;
		assert_int_equal(csrf_inject_reset(inj, &n), CSRF_OK);
		if (n != (unsigned)cases[i].inject || s.n_ins != (size_t)cases[i].inject)
			fail_msg("self %s, action %s: %u insertions, want %d", self, cases[i].action, n,
			         cases[i].inject);
		tu_guard_free(c);
		sink_free(&s);
		tu_guard_free(mem);
	}
}

/* Why forms went without a token: each reason once per stream, kept
 * after finish until the next feed, whatever the splits. */
static void test_status(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		unsigned want;
	} cases[] = {
	    {"<head>" PF "</form>" RF, 0},
	    {EF RF RF, CSRF_INJECT_NESTED_FORM},
	    {"<svg><foreignObject><div>" RF, CSRF_INJECT_FOREIGN | CSRF_INJECT_STOPPED},
	    {"<svg></p>", CSRF_INJECT_FOREIGN | CSRF_INJECT_STOPPED},
	    {"<template>" RF "</template>", CSRF_INJECT_TEMPLATE},
	    {"<select><style>", CSRF_INJECT_SELECT | CSRF_INJECT_STOPPED},
	    {"<noscript><form></noscript>", CSRF_INJECT_NOSCRIPT | CSRF_INJECT_STOPPED},
	    {"<base href=\"https://evil.example/\">" RF, CSRF_INJECT_BASE},
	    {RF "<base href=\"https://evil.example/\">", CSRF_INJECT_LATE_BASE},
	    {PF "<base href=\"https://evil.example/\">", 0}, /* no action: the document's URL */
	    {RF "<button formaction=\"//evil.example/\">", CSRF_INJECT_FORMACTION},
	    {"a\x1b" RF, CSRF_INJECT_ESCAPE | CSRF_INJECT_STOPPED},
	    {EF RF "</form><template>" RF, CSRF_INJECT_NESTED_FORM | CSRF_INJECT_TEMPLATE},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *in = cases[i].in;
		size_t len = strlen(in);
		for (size_t at = 0; at <= len; at++) {
			char *mem;
			csrf_inject *inj = new_injector(&mem);
			sink s;
			sink_init(&s, mem);
			assert_int_equal(csrf_inject_status(inj), 0);
			char *a = tu_guard_copy(in, at), *b = tu_guard_copy(in + at, len - at);
			s.chunk = a;
			s.chunk_len = at;
			assert_int_equal(csrf_inject_feed(inj, a, at, sink_emit, &s), CSRF_OK);
			s.chunk = b;
			s.chunk_len = len - at;
			assert_int_equal(csrf_inject_feed(inj, b, len - at, sink_emit, &s), CSRF_OK);
			if (csrf_inject_status(inj) != cases[i].want)
				fail_msg("status of case %zu split at %zu: %#x, want %#x", i, at,
				         csrf_inject_status(inj), cases[i].want);
			unsigned n;
			assert_int_equal(csrf_inject_reset(inj, &n), CSRF_OK);
			assert_int_equal(csrf_inject_status(inj), cases[i].want); /* kept after finish */
			assert_int_equal(csrf_inject_feed(inj, "x", 1, sink_emit, &s), CSRF_OK);
			assert_int_equal(csrf_inject_status(inj), 0); /* a new stream */
			tu_guard_free(a);
			tu_guard_free(b);
			sink_free(&s);
			tu_guard_free(mem);
		}
	}
	assert_int_equal(csrf_inject_status(NULL), 0);
	/* every bit has its own phrase */
	for (unsigned bit = 1; bit <= CSRF_INJECT_STOPPED; bit <<= 1)
		assert_string_not_equal(csrf_inject_status_str(bit), "unknown injector status");
	assert_string_equal(csrf_inject_status_str(0), "unknown injector status");
	assert_string_equal(csrf_inject_status_str(CSRF_INJECT_STOPPED << 1), "unknown injector status");
}

/* A stopped stream passes the rest through untouched: no meta, no field. */
static void test_stopped_passes(void **state)
{
	(void)state;
	const char *in = "<svg><foreignObject><div></svg><head>" PF "</form>" PF;
	sink s;
	unsigned count;
	run(in, strlen(in), NULL, 0, &s, &count);
	expect_output("stopped", "whole", 0, &s, in, strlen(in), in, strlen(in));
	assert_int_equal(count, 0);
	sink_free(&s);
}

/* ---- random markup: the same output however it is cut ---- */

static const char *const atoms[] = {
    "<",
    ">",
    "/",
    "!",
    "-",
    "--",
    "\"",
    "'",
    "=",
    " ",
    "\n",
    "\t",
    "a",
    "&",
    "&#",
    "x",
    ";",
    ":",
    "?",
    "form",
    "FORM",
    "method",
    "post",
    "POST",
    "get",
    "action",
    "script",
    "style",
    "textarea",
    "title",
    "plaintext",
    "head",
    "<!--",
    "-->",
    "--!>",
    "<!",
    "<?",
    "</",
    "https://self.example",
    "//evil.example",
    "base",
    "href",
    "javascript:",
    "\\",
    "\0",
    "\xff",
    "<form method=post>",
    "</form>",
    "<script>",
    "</script>",
    "<head>",
    "<svg>",
    "</svg>",
    "<math>",
    "<mi>",
    "<foreignObject>",
    "<![CDATA[",
    "]]>",
    "<template>",
    "</template>",
    "<select>",
    "</select>",
    "<noscript>",
    "</noscript>",
    "<p>",
    "<style>",
    "<button formmethod=post>",
    "<base href=//evil.example>",
    "&#x2F;",
    "\x1b",
};

/* Invariants on any input: the input comes out unchanged around the
 * insertions, every insertion is one of the two elements, the meta tags
 * at most once, and whole, byte by byte and random cuts agree. */
static void test_random_docs(void **state)
{
	(void)state;
	uint32_t x = 0x9e3779b9u;
	char doc[600];
	for (int iter = 0; iter < 400; iter++) {
		size_t len = 0, natoms = 1 + xorshift(&x) % 80;
		for (size_t k = 0; k < natoms; k++) {
			const char *a = atoms[xorshift(&x) % (sizeof atoms / sizeof atoms[0])];
			size_t al = a[0] ? strlen(a) : 1; /* "\0" is one NUL byte */
			if (len + al > sizeof doc)
				break;
			memcpy(doc + len, a, al);
			len += al;
		}
		sink whole, s;
		unsigned cw, c;
		run(doc, len, NULL, 0, &whole, &cw);
		expect_output("random", "whole", (size_t)iter, &whole, whole.out, whole.len, doc, len);
		size_t metas = 0, off = 0;
		for (size_t k = 0; k < whole.n_ins; k++) {
			/* the injector is gone: look at the inserted bytes in the output */
			const char *p = whole.out + whole.ins_at[k] + off;
			int is_in = whole.ins_n[k] == strlen(IN) && memcmp(p, IN, strlen(IN)) == 0;
			int is_mt = whole.ins_n[k] == strlen(MT) && memcmp(p, MT, strlen(MT)) == 0;
			if (!is_in && !is_mt)
				fail_msg("random %d: inserted piece %zu is neither element", iter, k);
			metas += (size_t)is_mt;
			off += whole.ins_n[k];
		}
		assert_true(metas <= 1);
		assert_int_equal(cw, whole.n_ins);
		size_t cuts[600], n = 0;
		for (size_t i = 1; i < len; i++)
			cuts[n++] = i;
		run(doc, len, cuts, n, &s, &c);
		expect_output("random", "bytes", (size_t)iter, &s, whole.out, whole.len, doc, len);
		assert_int_equal(c, cw);
		sink_free(&s);
		for (int r = 0; r < 4 && len > 1; r++) {
			size_t at = 1 + xorshift(&x) % (len - 1);
			run(doc, len, &at, 1, &s, &c);
			expect_output("random", "split", at, &s, whole.out, whole.len, doc, len);
			assert_int_equal(c, cw);
			sink_free(&s);
		}
		sink_free(&whole);
	}
}

/* ---- 10 MB in 4 KiB chunks ---- */

typedef struct {
	const char *in; /* the whole document, to compare against */
	size_t in_len, pos;
	size_t inserted, out_len;
	const char *chunk;
	size_t chunk_len;
	int bad;
} big_sink;

static int big_emit(void *ud, const char *p, size_t n, int inserted)
{
	big_sink *b = ud;
	b->out_len += n;
	if (inserted) {
		if (n != strlen(IN) || memcmp(p, IN, n) != 0)
			b->bad = 1;
		b->inserted++;
		return 0;
	}
	if (p < b->chunk || p + n > b->chunk + b->chunk_len || b->pos + n > b->in_len ||
	    memcmp(p, b->in + b->pos, n) != 0)
		b->bad = 1;
	b->pos += n;
	return 0;
}

static void test_ten_megabytes(void **state)
{
	(void)state;
	static const char *block = "<p>Story &amp; text <b>bold</b></p>\n"
	                           "<form method=post action=\"/vote\"><input name=story value=1></form>\n"
	                           "<!-- " PF " -->\n"
	                           "<script>var f = '" PF "'; if (a < b) {}</script>\n"
	                           "<form action=\"/search\"><input name=q></form>\n"
	                           "<textarea>" PF "</textarea>\n"
	                           "<form method=post action=\"https://evil.example/\"></form>\n";
	size_t bl = strlen(block), total = 10u << 20, nblocks = total / bl + 1;
	size_t len = nblocks * bl;
	char *doc = malloc(len);
	assert_non_null(doc);
	for (size_t i = 0; i < nblocks; i++)
		memcpy(doc + i * bl, block, bl);

	assert_true(csrf_inject_size() <= STATE_BOUND);
	char *mem;
	csrf_inject *inj = new_injector(&mem);
	big_sink b = {doc, len, 0, 0, 0, NULL, 0, 0};
	char *chunk;
	for (size_t off = 0; off < len; off += 4096) {
		size_t n = len - off < 4096 ? len - off : 4096;
		chunk = tu_guard_copy(doc + off, n);
		b.chunk = chunk;
		b.chunk_len = n;
		assert_int_equal(csrf_inject_feed(inj, chunk, n, big_emit, &b), CSRF_OK);
		tu_guard_free(chunk);
		if (b.bad)
			fail_msg("10 MB: wrong piece near input offset %zu", off);
	}
	unsigned count;
	assert_int_equal(csrf_inject_reset(inj, &count), CSRF_OK);
	assert_int_equal(b.pos, len);
	assert_int_equal(count, nblocks);
	assert_int_equal(b.inserted, nblocks);
	assert_int_equal(b.out_len, len + nblocks * strlen(IN));
	tu_guard_free(mem);
	free(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_long_actions),
	    cmocka_unit_test(test_long_blank_action),
	    cmocka_unit_test(test_init_args),
	    cmocka_unit_test(test_feed_args),
	    cmocka_unit_test(test_finish_resets),
	    cmocka_unit_test(test_emit_stops),
	    cmocka_unit_test(test_port_origin),
	    cmocka_unit_test(test_status),
	    cmocka_unit_test(test_stopped_passes),
	    cmocka_unit_test(test_random_docs),
	    cmocka_unit_test(test_ten_megabytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
