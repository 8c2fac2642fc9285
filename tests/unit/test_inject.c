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
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "csrf.h"
#include "testutil.h"

/* Under valgrind (valgrind.test_inject) the dirty memory is marked
 * undefined: memcheck then reports any byte of the state the injector
 * reads before it writes it. */
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#endif
#endif
#ifndef VALGRIND_MAKE_MEM_UNDEFINED
#define VALGRIND_MAKE_MEM_UNDEFINED(p, n) ((void)(p), (void)(n))
#endif

/* A dummy field and token; the injector only copies them. */
#define F "csrf_f1"
#define T "tok-EN_9"
#define SELF "https://self.example"
#define IN "<input type=\"hidden\" name=\"" F "\" value=\"" T "\">"
#define MT "<meta name=\"csrf-param\" content=\"" F "\"><meta name=\"csrf-token\" content=\"" T "\">"
#define PF "<form method=post>"
/* what CSRF_INJECT_OPT_RAISE_REFERRER adds */
#define RM "<meta name=\"referrer\" content=\"same-origin\">"
#define NRM "<meta name=referrer content=no-referrer>"
#define CL "</form>"

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
    {"post form", "<form method=\"post\">x</form>", "<form method=\"post\">" IN "x" CL, 1},
    {"upper case", "<FORM METHOD=POST>" CL, "<FORM METHOD=POST>" IN CL, 1},
    {"mixed case", "<FoRm MeThOd='PoSt'>" CL, "<FoRm MeThOd='PoSt'>" IN CL, 1},
    {"unquoted", PF CL, PF IN CL, 1},
    {"spaces around =", "<form method = \"post\" >" CL, "<form method = \"post\" >" IN CL, 1},
    {"newlines", "<form\nmethod\n=\npost\n>" CL, "<form\nmethod\n=\npost\n>" IN CL, 1},
    {"slash separator", "<form/method=post>" CL, "<form/method=post>" IN CL, 1},
    {"self-closing", "<form method=\"post\"/>" CL, "<form method=\"post\"/>" IN CL, 1},
    {"unquoted slash is value", "<form method=post/>" CL, "<form method=post/>" CL, 0},
    {"get", "<form method=get>" CL, "<form method=get>" CL, 0},
    {"no method", "<form action=\"/x\">" CL, "<form action=\"/x\">" CL, 0},
    {"empty method", "<form method>" CL, "<form method>" CL, 0},
    {"method not trimmed", "<form method=\" post \">" CL, "<form method=\" post \">" CL, 0},
    {"method dialog", "<form method=dialog>" CL, "<form method=dialog>" CL, 0},
    {"method postx", "<form method=postx>" CL, "<form method=postx>" CL, 0},
    {"method decimal ref", "<form method=\"p&#111;st\">" CL, "<form method=\"p&#111;st\">" IN CL, 1},
    {"method hex ref", "<form method=\"&#x50;OST\">" CL, "<form method=\"&#x50;OST\">" IN CL, 1},
    {"method ref no semicolon", "<form method=\"&#112ost\">" CL, "<form method=\"&#112ost\">" IN CL, 1},
    {"method amp", "<form method=\"post&amp;\">" CL, "<form method=\"post&amp;\">" CL, 0},
    {"method non-ascii ref", "<form method=\"&#x170;ost\">" CL, "<form method=\"&#x170;ost\">" CL, 0},
    {"first method wins", "<form method=get method=post>" CL, "<form method=get method=post>" CL, 0},
    {"first method wins 2", "<form method=post method=get>" CL, "<form method=post method=get>" IN CL, 1},
    {"formmethod is not method", "<form formmethod=post>" CL, "<form formmethod=post>" CL, 0},
    /* quoted values one after another (the tokenizer's attribute loop) */
    {"quoted in a row", "<form method=\"post\"action=\"/x\">" CL, "<form method=\"post\"action=\"/x\">" IN CL, 1},
    {"quoted, slash, action", "<form method=\"post\"/action=\"//evil.example\">" CL,
     "<form method=\"post\"/action=\"//evil.example\">" CL, 0},
    {"quoted, byte, action", "<form method='post'x='1'action=\"https://evil.example/\">" CL,
     "<form method='post'x='1'action=\"https://evil.example/\">" CL, 0},
    {"long name first", "<form DATA-A-RATHER-LONG-NAME=\"1\" METHOD=\"POST\">" CL,
     "<form DATA-A-RATHER-LONG-NAME=\"1\" METHOD=\"POST\">" IN CL, 1},
    {"formactionx is not formaction", PF "<button formactionx=\"//evil.example\">" CL,
     PF IN "<button formactionx=\"//evil.example\">" CL, 1},
    /* a name's bytes past the eighth lowered too (attr_run, eight at a
     * time): upper-case formaction and formmethod still count */
    {"upper-case formaction", PF "<button FORMACTION=\"https://evil.example/\" type=submit>" CL,
     PF "<button FORMACTION=\"https://evil.example/\" type=submit>" CL, 0},
    {"upper-case formmethod", PF "<input TYPE=SUBMIT FormMethoD=\"GET\">" CL,
     PF "<input TYPE=SUBMIT FormMethoD=\"GET\">" CL, 0},
    {"text field is no submitter", PF "<input name=\"a\" formmethod=\"get\">" CL,
     PF IN "<input name=\"a\" formmethod=\"get\">" CL, 1},
    {"submit input by get", PF "<input type=\"submit\" formmethod=\"get\">" CL,
     PF "<input type=\"submit\" formmethod=\"get\">" CL, 0},
    {"data-method", "<form data-method=post>" CL, "<form data-method=post>" CL, 0},
    {"long method", "<form method=\"post                                  \">" CL,
     "<form method=\"post                                  \">" CL, 0},

    /* actions */
    {"relative", "<form method=post action=\"/submit\">" CL, "<form method=post action=\"/submit\">" IN CL, 1},
    {"relative unquoted", "<form method=post action=/x>" CL, "<form method=post action=/x>" IN CL, 1},
    {"relative page", "<form method=post action=\"vote.php?a=1&amp;b=2\">" CL,
     "<form method=post action=\"vote.php?a=1&amp;b=2\">" IN CL, 1},
    {"relative with colon later", "<form method=post action=\"a_b:c\">" CL, "<form method=post action=\"a_b:c\">" IN CL,
     1},
    {"relative amp after non-scheme", "<form method=post action=\"a_b&amp;c\">" CL,
     "<form method=post action=\"a_b&amp;c\">" IN CL, 1},
    {"relative dot", "<form method=post action=\"./x\">" CL, "<form method=post action=\"./x\">" IN CL, 1},
    {"query only", "<form method=post action=\"?q=1\">" CL, "<form method=post action=\"?q=1\">" IN CL, 1},
    {"fragment only", "<form method=post action=\"#x\">" CL, "<form method=post action=\"#x\">" IN CL, 1},
    {"empty action", "<form method=post action=\"\">" CL, "<form method=post action=\"\">" IN CL, 1},
    {"bare action", "<form method=post action>" CL, "<form method=post action>" IN CL, 1},
    {"blank action", "<form method=post action=\"  \">" CL, "<form method=post action=\"  \">" IN CL, 1},
    {"slash", "<form method=post action=\"/\">" CL, "<form method=post action=\"/\">" IN CL, 1},
    {"self absolute", "<form method=post action=\"https://self.example/x\">" CL,
     "<form method=post action=\"https://self.example/x\">" IN CL, 1},
    {"self absolute upper", "<form method=post action=\"HTTPS://SELF.EXAMPLE/x\">" CL,
     "<form method=post action=\"HTTPS://SELF.EXAMPLE/x\">" IN CL, 1},
    {"self default port", "<form method=post action=\"https://self.example:443/\">" CL,
     "<form method=post action=\"https://self.example:443/\">" IN CL, 1},
    {"self no path", "<form method=post action=\"https://self.example\">" CL,
     "<form method=post action=\"https://self.example\">" IN CL, 1},
    {"self query", "<form method=post action=\"https://self.example?x=1\">" CL,
     "<form method=post action=\"https://self.example?x=1\">" IN CL, 1},
    {"self padded", "<form method=post action=\" https://self.example/ \">" CL,
     "<form method=post action=\" https://self.example/ \">" IN CL, 1},
    {"self amp in path", "<form method=post action=\"https://self.example/a?b&amp;c\">" CL,
     "<form method=post action=\"https://self.example/a?b&amp;c\">" IN CL, 1},
    {"self scheme-relative, backslashes", "<form method=post action=\"\\\\SELF.example\\x\">" CL,
     "<form method=post action=\"\\\\SELF.example\\x\">" IN CL, 1},
    {"other scheme-relative", "<form method=post action=\"//self.example.evil.example/x\">" CL,
     "<form method=post action=\"//self.example.evil.example/x\">" CL, 0},
    {"scheme-relative, third slash", "<form method=post action=\"///self.example/x\">" CL,
     "<form method=post action=\"///self.example/x\">" CL, 0},
    {"other port", "<form method=post action=\"https://self.example:8443/\">" CL,
     "<form method=post action=\"https://self.example:8443/\">" CL, 0},
    {"other scheme", "<form method=post action=\"http://self.example/\">" CL,
     "<form method=post action=\"http://self.example/\">" CL, 0},
    {"evil", "<form method=post action=\"https://evil.example/\">" CL,
     "<form method=post action=\"https://evil.example/\">" CL, 0},
    {"self as subdomain", "<form method=post action=\"https://self.example.evil.example/\">" CL,
     "<form method=post action=\"https://self.example.evil.example/\">" CL, 0},
    {"userinfo", "<form method=post action=\"https://self.example@evil.example/\">" CL,
     "<form method=post action=\"https://self.example@evil.example/\">" CL, 0},
    {"ref in host", "<form method=post action=\"https://self.example&#46;evil.example/\">" CL,
     "<form method=post action=\"https://self.example&#46;evil.example/\">" CL, 0},
    {"protocol relative", "<form method=post action=\"//evil.example/\">" CL,
     "<form method=post action=\"//evil.example/\">" CL, 0},
    {"protocol relative self", "<form method=post action=\"//self.example/\">" CL,
     "<form method=post action=\"//self.example/\">" IN CL, 1},
    {"protocol relative self, base elsewhere",
     "<base href=\"https://evil.example/\"><form method=post action=\"//self.example/\">" CL,
     "<base href=\"https://evil.example/\"><form method=post action=\"//self.example/\">" CL, 0},
    {"backslashes", "<form method=post action=\"\\\\evil.example\">" CL,
     "<form method=post action=\"\\\\evil.example\">" CL, 0},
    {"slash backslash", "<form method=post action=\"/\\evil.example\">" CL,
     "<form method=post action=\"/\\evil.example\">" CL, 0},
    {"leading space //", "<form method=post action=\" //evil.example\">" CL,
     "<form method=post action=\" //evil.example\">" CL, 0},
    {"tab inside //", "<form method=post action=\"/\t/evil.example\">" CL,
     "<form method=post action=\"/\t/evil.example\">" CL, 0},
    {"newline in scheme", "<form method=post action=\"ht\ntps://evil.example/\">" CL,
     "<form method=post action=\"ht\ntps://evil.example/\">" CL, 0},
    {"ref slash", "<form method=post action=\"/&#x2f;evil.example\">" CL,
     "<form method=post action=\"/&#x2f;evil.example\">" CL, 0},
    {"ref first", "<form method=post action=\"&#x2f;&#x2f;evil.example\">" CL,
     "<form method=post action=\"&#x2f;&#x2f;evil.example\">" CL, 0},
    {"javascript", "<form method=post action=\"javascript:alert(1)\">" CL,
     "<form method=post action=\"javascript:alert(1)\">" CL, 0},
    {"javascript upper", "<form method=post action=\"JavaScript:alert(1)\">" CL,
     "<form method=post action=\"JavaScript:alert(1)\">" CL, 0},
    {"javascript ref", "<form method=post action=\"java&#115;cript:alert(1)\">" CL,
     "<form method=post action=\"java&#115;cript:alert(1)\">" CL, 0},
    {"colon ref", "<form method=post action=\"javascript&colon;alert(1)\">" CL,
     "<form method=post action=\"javascript&colon;alert(1)\">" CL, 0},
    {"scheme then amp", "<form method=post action=\"edit&amp;x\">" CL, "<form method=post action=\"edit&amp;x\">" CL,
     0},
    {"data", "<form method=post action=\"data:text/html,x\">" CL, "<form method=post action=\"data:text/html,x\">" CL,
     0},
    {"ftp self", "<form method=post action=\"ftp://self.example/\">" CL,
     "<form method=post action=\"ftp://self.example/\">" CL, 0},
    {"https no slashes", "<form method=post action=\"https:self.example\">" CL,
     "<form method=post action=\"https:self.example\">" CL, 0},
    {"https backslashes", "<form method=post action=\"https:\\\\self.example\">" CL,
     "<form method=post action=\"https:\\\\self.example\">" CL, 0},
    {"https three slashes", "<form method=post action=\"https:///self.example\">" CL,
     "<form method=post action=\"https:///self.example\">" CL, 0},
    {"first action wins", "<form method=post action=\"/\" action=\"https://evil.example/\">" CL,
     "<form method=post action=\"/\" action=\"https://evil.example/\">" IN CL, 1},
    {"first action wins 2", "<form method=post action=\"https://evil.example/\" action=\"/\">" CL,
     "<form method=post action=\"https://evil.example/\" action=\"/\">" CL, 0},

/* <base href> moves relative actions */
#define EB "<base href=\"https://evil.example/\">"
    {"foreign base", EB "<form method=post action=\"/x\">" CL, EB "<form method=post action=\"/x\">" CL, 0},
    {"foreign base no action", EB PF CL, EB PF IN CL, 1},
    {"foreign base empty action", EB "<form method=post action=\"\">" CL, EB "<form method=post action=\"\">" IN CL, 1},
    {"foreign base blank action", EB "<form method=post action=\" \">" CL, EB "<form method=post action=\" \">" CL, 0},
    {"foreign base query action", EB "<form method=post action=\"?a\">" CL, EB "<form method=post action=\"?a\">" CL,
     0},
    {"foreign base self absolute", EB "<form method=post action=\"https://self.example/x\">" CL,
     EB "<form method=post action=\"https://self.example/x\">" IN CL, 1},
    {"self base", "<base href=\"https://self.example/app/\"><form method=post action=x>" CL,
     "<base href=\"https://self.example/app/\"><form method=post action=x>" IN CL, 1},
    {"relative base", "<base href=\"/app/\"><form method=post action=x>" CL,
     "<base href=\"/app/\"><form method=post action=x>" IN CL, 1},
    {"empty base", "<base href=\"\"><form method=post action=x>" CL,
     "<base href=\"\"><form method=post action=x>" IN CL, 1},
    {"protocol-relative base", "<base href=\"//evil.example/\"><form method=post action=x>" CL,
     "<base href=\"//evil.example/\"><form method=post action=x>" CL, 0},
    {"javascript base", "<BASE HREF=\"javascript:x\"><form method=post action=x>" CL,
     "<BASE HREF=\"javascript:x\"><form method=post action=x>" CL, 0},
    {"first base wins", "<base href=\"/\">" EB "<form method=post action=x>" CL,
     "<base href=\"/\">" EB "<form method=post action=x>" IN CL, 1},
    {"base without href skipped", "<base target=_top>" EB "<form method=post action=x>" CL,
     "<base target=_top>" EB "<form method=post action=x>" CL, 0},
    {"first href of base", "<base href=\"/\" href=\"https://evil.example/\"><form method=post action=x>" CL,
     "<base href=\"/\" href=\"https://evil.example/\"><form method=post action=x>" IN CL, 1},
    {"base in comment", "<!--" EB "--><form method=post action=x>" CL, "<!--" EB "--><form method=post action=x>" IN CL,
     1},
    {"base end tag", "</base href=\"https://evil.example/\"><form method=post action=x>" CL,
     "</base href=\"https://evil.example/\"><form method=post action=x>" IN CL, 1},
    {"bases is not base", "<bases href=\"https://evil.example/\"><form method=post action=x>" CL,
     "<bases href=\"https://evil.example/\"><form method=post action=x>" IN CL, 1},

    /* head */
    {"head", "<html><head><title>t</title></head>", "<html><head>" MT "<title>t</title></head>", 1},
    {"head once", "<head></head><head>", "<head>" MT "</head><head>", 1},
    {"head upper attrs", "<HEAD lang=en>", "<HEAD lang=en>" MT, 1},
    {"header is not head", "<header><heads>", "<header><heads>", 0},
    {"end head", "</head><head>", "</head><head>" MT, 1},
    {"head and form", "<head></head><body>" PF CL, "<head>" MT "</head><body>" PF IN CL, 2},

    /* comments and bogus comments */
    {"comment", "<!-- " PF " -->" CL, "<!-- " PF " -->" CL, 0},
    {"comment then form", "<!-- x -->" PF CL, "<!-- x -->" PF IN CL, 1},
    {"empty comment", "<!---->" PF CL, "<!---->" PF IN CL, 1},
    {"abrupt comment", "<!-->" PF CL, "<!-->" PF IN CL, 1},
    {"abrupt comment dash", "<!--->" PF CL, "<!--->" PF IN CL, 1},
    {"comment bang end", "<!-- x --!>" PF CL, "<!-- x --!>" PF IN CL, 1},
    {"comment spaced end", "<!-- -- >" PF " -->" CL, "<!-- -- >" PF " -->" CL, 0},
    {"comment dashes", "<!-- a---" PF "--->" PF CL, "<!-- a---" PF "--->" PF IN CL, 1},
    {"comment nested open", "<!-- <!-- " PF " -->" PF CL, "<!-- <!-- " PF " -->" PF IN CL, 1},
    {"unterminated comment", "<!-- " PF CL, "<!-- " PF CL, 0},
    {"unterminated comment dash", "<!-- " PF "--" CL, "<!-- " PF "--" CL, 0},
    {"doctype", "<!DOCTYPE html>" PF CL, "<!DOCTYPE html>" PF IN CL, 1},
    {"bogus bang", "<!x " PF ">" CL, "<!x " PF ">" CL, 0},
    {"bogus dash", "<!-x" PF CL, "<!-x" PF CL, 0},
    {"bogus question", "<? " PF " ?>" CL, "<? " PF " ?>" CL, 0},
    {"cdata is bogus in html", "<![CDATA[" PF "]]>" CL, "<![CDATA[" PF "]]>" CL, 0},
    {"bogus end tag", "</ " PF CL, "</ " PF CL, 0},
    {"empty end tag", "</>" PF CL, "</>" PF IN CL, 1},

    /* raw text */
    {"script string", "<script>var s=\"" PF "\";</script>" PF CL, "<script>var s=\"" PF "\";</script>" PF IN CL, 1},
    {"script split end", "<script>w('</scr'+'ipt>" PF "')</script>" CL, "<script>w('</scr'+'ipt>" PF "')</script>" CL,
     0},
    {"script end upper", "<SCRIPT>x</SCRIPT >" PF CL, "<SCRIPT>x</SCRIPT >" PF IN CL, 1},
    {"script end slash", "<script>x</script/>" PF CL, "<script>x</script/>" PF IN CL, 1},
    {"script end attrs", "<script>x</script a='>'>" PF CL, "<script>x</script a='>'>" PF IN CL, 1},
    {"scripts is not script", "<script></scripts>" PF "</script>" CL, "<script></scripts>" PF "</script>" CL, 0},
    {"script type attr", "<script type=\"text/html\">" PF "</script>" CL,
     "<script type=\"text/html\">" PF "</script>" CL, 0},
    {"script escaped", "<script><!--</script>" PF CL, "<script><!--</script>" PF IN CL, 1},
    {"script escaped closed", "<script>a<!--b-->c</script>" PF CL, "<script>a<!--b-->c</script>" PF IN CL, 1},
    {"script double escaped", "<script><!--<script></script>" PF "--></script>" PF CL,
     "<script><!--<script></script>" PF "--></script>" PF IN CL, 1},
    {"script double escape holds", "<script><!--<script></script>" PF CL, "<script><!--<script></script>" PF CL, 0},
    {"script double escape ends", "<script><!--<script></script></script>" PF CL,
     "<script><!--<script></script></script>" PF IN CL, 1},
    {"script double escape other", "<script><!--<scripts></script>" PF CL, "<script><!--<scripts></script>" PF IN CL,
     1},
    {"unterminated script", "<script>" PF CL, "<script>" PF CL, 0},
    {"style", "<style>a{content:\"" PF "\"}</style>" PF CL, "<style>a{content:\"" PF "\"}</style>" PF IN CL, 1},
    {"style comment no escape", "<style><!--</style>" PF CL, "<style><!--</style>" PF IN CL, 1},
    {"textarea", "<textarea>" PF "</textarea>" CL, "<textarea>" PF "</textarea>" CL, 0},
    {"textarea near end", "<textarea></textareax>" PF "</TEXTAREA>" PF CL,
     "<textarea></textareax>" PF "</TEXTAREA>" PF IN CL, 1},
    {"title", "<title>" PF "</title>" PF CL, "<title>" PF "</title>" PF IN CL, 1},
    {"title head", "<title><head></title><head>", "<title><head></title><head>" MT, 1},
    {"xmp", "<xmp>" PF "</xmp>" CL, "<xmp>" PF "</xmp>" CL, 0},
    {"noscript", "<noscript>" PF "</noscript>" CL, "<noscript>" PF "</noscript>" CL, 0},
    {"iframe", "<iframe>" PF "</iframe>" CL, "<iframe>" PF "</iframe>" CL, 0},
    {"noembed noframes", "<noembed>" PF "</noembed><noframes>" PF "</noframes>" CL,
     "<noembed>" PF "</noembed><noframes>" PF "</noframes>" CL, 0},
    {"plaintext", "<plaintext>" PF "</plaintext>" PF CL, "<plaintext>" PF "</plaintext>" PF CL, 0},
    {"end tag raw name is not raw", "</script>" PF CL, "</script>" PF IN CL, 1},

    /* attribute values and malformed tags */
    {"in dq attribute", "<div title=\"" PF "\">" CL, "<div title=\"" PF "\">" CL, 0},
    {"in sq attribute", "<div title='" PF "'>" CL, "<div title='" PF "'>" CL, 0},
    {"in unquoted attribute", "<a href=<form method=post>" CL, "<a href=<form method=post>" CL, 0},
    {"as attribute name", "<div <form method=post>" CL, "<div <form method=post>" CL, 0},
    {"form in form value", "<form method=post action=\"/x?<form>\">" CL,
     "<form method=post action=\"/x?<form>\">" IN CL, 1},
    {"double lt", "<" PF CL, "<" PF IN CL, 1},
    {"space after lt", "< form method=post>" CL, "< form method=post>" CL, 0},
    {"digit after lt", "<1form method=post>" PF CL, "<1form method=post>" PF IN CL, 1},
    {"formx", "<formx method=post>" CL, "<formx method=post>" CL, 0},
    {"long tag name", "<formformformform method=post>" CL, "<formformformform method=post>" CL, 0},
    {"long attr name", "<form methodmethod=post>" CL, "<form methodmethod=post>" CL, 0},
    /* '/' ends an attribute name ("p", then "=\"" a name of its own), also
     * where 16 bytes are read at once; found by fuzz.inject (whole and
     * split fed differently) */
    {"slash ends attr name", "<s p/=\">" PF CL, "<s p/=\">" PF IN CL, 1},
    {"slash ends a long attr name", "<s abcdefghijklmnopqrst/=\">" PF CL, "<s abcdefghijklmnopqrst/=\">" PF IN CL, 1},
    {"slash in attr name, then a foreign form", "<s p/=\"><form method=post action=\"//evil.example/\">" PF "</form>",
     "<s p/=\"><form method=post action=\"//evil.example/\">" PF "</form>", 0},
    {"unterminated tag", "<form method=post" CL, "<form method=post" CL, 0},
    {"unterminated value", "<form method=\"post>" CL, "<form method=\"post>" CL, 0},
    {"quote in name", "<form x\"=y method=post>" CL, "<form x\"=y method=post>" IN CL, 1},
    {"eq first", "<form =x method=post>" CL, "<form =x method=post>" IN CL, 1},
    {"no space after value", "<form a=\"b\"method=\"post\">" CL, "<form a=\"b\"method=\"post\">" IN CL, 1},
    {"end tag with attrs", "</form method=post>" PF CL, "</form method=post>" PF IN CL, 1},
    {"end tag of the form with attrs", PF "</form method=get>", PF IN "</form method=get>", 1},
    {"end tag upper", PF "</FORM>", PF IN "</FORM>", 1},
    {"end tag slash", PF "</form/>", PF IN "</form/>", 1},
    {"end tag space", PF "</form\n>", PF IN "</form\n>", 1},
    {"end tag formx", PF "</formx>", PF "</formx>", 0},

    /* nesting */
    {"nested form", PF PF "</form>", PF IN PF CL, 1},
    {"nested after evil", "<form method=post action=\"https://evil.example/\">" PF CL,
     "<form method=post action=\"https://evil.example/\">" PF CL, 0},
    {"nested after get", "<form>" PF "</form>" PF CL, "<form>" PF "</form>" PF IN CL, 1},
    {"sequential", PF "</form>" PF "</form>", PF IN CL PF IN CL, 2},
    {"stray end form", "</form>" PF CL, "</form>" PF IN CL, 1},
    {"self-closed form stays open", "<form/>" PF CL, "<form/>" PF CL, 0},
    {"end form in comment", PF "<!-- </form> -->" PF CL, PF IN "<!-- </form> -->" PF CL, 1},
    {"end form in script", PF "<script></form></script>" PF CL, PF IN "<script></form></script>" PF CL, 1},
    {"page",
     "<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>Vote</title></head>\n<body>"
     "<form method=\"POST\" action=\"/vote\"><input name=story value=42><button>y</button></form>"
     "<form action=\"/search\"><input name=q></form>"
     "<form method=post action=\"https://evil.example/\"></form></body></html>",
     "<!DOCTYPE html>\n<html><head>" MT "<meta charset=utf-8><title>Vote</title></head>\n<body>"
     "<form method=\"POST\" action=\"/vote\">" IN "<input name=story value=42><button>y</button>" CL
     "<form action=\"/search\"><input name=q></form>"
     "<form method=post action=\"https://evil.example/\"></form></body></html>",
     2},

/* Markup before the real form that makes the browser give the real form's
 * fields to another form, or move its URL: no token in the real form. */
#define EF "<form action=\"https://evil.example/\" method=post>"
#define RF "<form method=post action=\"/real\">"
    {"attack svg style breakout", "<svg><style><p>" EF "</style></svg>" RF CL,
     "<svg><style><p>" EF "</style></svg>" RF CL, 0},
    {"attack math style breakout", "<math><style><p>" EF "</style></math>" RF CL,
     "<math><style><p>" EF "</style></math>" RF CL, 0},
    {"attack svg script breakout", "<svg><script><p>" EF "</script></svg>" RF CL,
     "<svg><script><p>" EF "</script></svg>" RF CL, 0},
    {"attack svg form end", EF "<svg><form></form></svg>" RF, EF "<svg><form></form></svg>" RF, 0},
    {"attack template form end", EF "<template></form></template>" RF, EF "<template></form></template>" RF, 0},
    {"attack cdata form end", EF "<svg><![CDATA[x></form>]]></svg>" RF, EF "<svg><![CDATA[x></form>]]></svg>" RF, 0},
    /* template contents whose first start tag is <col>: "in column group"
     * with the template current, where every start tag but col and
     * template is ignored (a <title>, <script>, <plaintext> starts no raw
     * text, an <svg> no foreign content, a <select> or <form> nothing)
     * and every end tag but </template>; a <col> after the contents' mode
     * was picked by another tag (a <span>, a <button>, a row) is ignored
     * (the "in body" or table rules). Each row that gets a token after a
     * <col> went without one before the model followed the mode (it
     * stopped at the <col>) */
    {"template col first", "<template><col><title></template>" RF CL, "<template><col><title></template>" RF IN CL, 1},
    {"template col after head tags", "<template><script></script><template></template><col></template>" RF CL,
     "<template><script></script><template></template><col></template>" RF IN CL, 1},
    {"template link meta col", "<template><link rel=x><meta charset=utf-8><col><title></template>" RF CL,
     "<template><link rel=x><meta charset=utf-8><col><title></template>" RF IN CL, 1},
    {"template nested col", "<template><td><template><col></template></template>" RF CL,
     "<template><td><template><col></template></template>" RF IN CL, 1},
    {"template table col", "<template><table><colgroup><col></table></template>" RF CL,
     "<template><table><colgroup><col></table></template>" RF IN CL, 1},
    {"template row col", "<template><tr><col><title></title></template>" RF CL,
     "<template><tr><col><title></title></template>" RF IN CL, 1},
    {"template cell then nested", "<template><td><template></template><col></template>" RF CL,
     "<template><td><template></template><col></template>" RF IN CL, 1},
    /* Alpine.js: a column per item of a list */
    {"template alpine colgroup",
     "<table><colgroup><template x-for=\"c in cols\"><col :class=\"c\"></template></colgroup>"
     "<tr><td>" RF CL "</td></tr></table>" RF CL,
     "<table><colgroup><template x-for=\"c in cols\"><col :class=\"c\"></template></colgroup>"
     "<tr><td>" RF IN CL "</td></tr></table>" RF IN CL,
     2},
    /* the column group's tags read as a browser does: a reader that took
     * the <title> for raw text would miss the button sending f elsewhere
     * (and close the template at the second </template>), and give f the
     * token */
    {"template col title button",
     "<template><col><title></template><button form=f formaction=//evil.example/></title></template>"
     "<form id=f method=post action=/f>" CL RF CL,
     "<template><col><title></template><button form=f formaction=//evil.example/></title></template>"
     "<form id=f method=post action=/f>" CL RF IN CL,
     1},
    {"template col ignores raw text",
     "<template><col><script><style><textarea><xmp><iframe><noembed><noframes><noscript></template>" RF CL,
     "<template><col><script><style><textarea><xmp><iframe><noembed><noframes><noscript></template>" RF IN CL, 1},
    {"template col ignores plaintext", "<template><col><plaintext></template>" RF CL,
     "<template><col><plaintext></template>" RF IN CL, 1},
    {"template col ignores select", "<template><col><select></template>" RF CL,
     "<template><col><select></template>" RF IN CL, 1},
    /* no svg there: "<![CDATA[" starts a bogus comment, </template> in it */
    {"template col ignores svg", "<template><col><svg><![CDATA[</template>]]></template>" RF CL,
     "<template><col><svg><![CDATA[</template>]]></template>" RF IN CL, 1},
    {"template col form ignored", "<template><col>" RF "<input name=a></template>" RF CL,
     "<template><col>" RF "<input name=a></template>" RF IN CL, 1},
    {"template col nested", "<template><col><template><tr><title>x</title></template><col><title></template>" RF CL,
     "<template><col><template><tr><title>x</title></template><col><title></template>" RF IN CL, 1},
    {"template col in nested", "<template><td><template><col><title></template><title>t</title></template>" RF CL,
     "<template><td><template><col><title></template><title>t</title></template>" RF IN CL, 1},
    {"template col after col", "<template><col><col/><COL span=2></template>" RF CL,
     "<template><col><col/><COL span=2></template>" RF IN CL, 1},
    /* a first start tag that is no head tag: the mode is picked, the
     * <col> ignored, the <title> raw text */
    {"template span col", "<template><span><col><title></template></title></template>" RF CL,
     "<template><span><col><title></template></title></template>" RF IN CL, 1},
    {"template div col", "<template><div class=x><col><title></template></title></template>" RF CL,
     "<template><div class=x><col><title></template></title></template>" RF IN CL, 1},
    {"template button col", "<template><button><col><title></template></title></template>" RF CL,
     "<template><button><col><title></template></title></template>" RF IN CL, 1},
    {"template input col", "<template><input name=a><col><title></template></title></template>" RF CL,
     "<template><input name=a><col><title></template></title></template>" RF IN CL, 1},
    {"template form col", "<template><form><col><title></template></title></template>" RF CL,
     "<template><form><col><title></template></title></template>" RF IN CL, 1},
    {"template long name col", "<template><linkx><col><title></template></title></template>" RF CL,
     "<template><linkx><col><title></template></title></template>" RF IN CL, 1},
    /* template contents whose first start tag is a table part, in a
     * table: a <caption>, <col>, <colgroup>, <tbody>, <tfoot>, <thead> or
     * <tr> in "in row" (a <td> or <th> first), or a </table>, </tbody>,
     * </tfoot>, </thead> (or </tr> in "in row") that Firefox (153 ESR)
     * looks for past the template: it finds the page's row, section or
     * table, pops the template with it, and what the injector reads as
     * inert template contents is live (Chromium 156 keeps the template,
     * as the spec does). The button sends f elsewhere in Firefox; the
     * model stops */
    {"template cell caption firefox",
     "<table><tr><td><template><td><caption><button form=f formaction=//evil.example/>x</button></template>"
     "</td></tr></table><form id=f method=post action=/f>" CL,
     "<table><tr><td><template><td><caption><button form=f formaction=//evil.example/>x</button></template>"
     "</td></tr></table><form id=f method=post action=/f>" CL,
     0},
    {"template cell tr firefox",
     "<table><tr><td><template><th></th><tr><button form=f formaction=//evil.example/>x</button></template>"
     "</td></tr></table><form id=f method=post action=/f>" CL,
     "<table><tr><td><template><th></th><tr><button form=f formaction=//evil.example/>x</button></template>"
     "</td></tr></table><form id=f method=post action=/f>" CL,
     0},
    {"template cell end tr firefox",
     "<table><tr><template><td></td></tr><button form=f formaction=//evil.example/>x</button></template></tr></table>"
     "<form id=f method=post action=/f>" CL,
     "<table><tr><template><td></td></tr><button form=f formaction=//evil.example/>x</button></template></tr></table>"
     "<form id=f method=post action=/f>" CL,
     0},
    {"template tbody end table firefox",
     "<table><tr><td><template><tbody></table>" RF "<button formaction=//evil.example/>x</button></template>" RF CL,
     "<table><tr><td><template><tbody></table>" RF "<button formaction=//evil.example/>x</button></template>" RF CL, 0},
    {"template row end tbody firefox",
     "<table><tbody><tr><td><template><tr></tr></tbody>" RF
     "<button formaction=//evil.example/>x</button></template>" RF CL,
     "<table><tbody><tr><td><template><tr></tr></tbody>" RF
     "<button formaction=//evil.example/>x</button></template>" RF CL,
     0},
    /* a </tbody> in a table of the contents' own with no <tbody> open
     * there: Firefox pops the page's <tbody>, whatever the first tag */
    {"template inner table end tbody firefox",
     "<table><tbody><tr><td><template><div><table><tfoot></tbody><button form=f formaction=//evil.example/>x</button>"
     "</template></td></tr></tbody></table><form id=f method=post action=/f>" CL,
     "<table><tbody><tr><td><template><div><table><tfoot></tbody><button form=f formaction=//evil.example/>x</button>"
     "</template></td></tr></tbody></table><form id=f method=post action=/f>" CL,
     0},
    /* a </table> in a select there closes the select, then the page's
     * table in Firefox */
    {"template select end table firefox",
     "<table><tbody><tr><td><template><caption><select></table><button form=f formaction=//evil.example/>x</button>"
     "</select></template></td></tr></tbody></table><form id=f method=post action=/f>" CL,
     "<table><tbody><tr><td><template><caption><select></table><button form=f formaction=//evil.example/>x</button>"
     "</select></template></td></tr></tbody></table><form id=f method=post action=/f>" CL,
     0},
    {"template nested cell caption firefox",
     "<template><table><tr><td><template><td><caption></template></template>" RF CL,
     "<template><table><tr><td><template><td><caption></template></template>" RF CL, 0},
    /* what Firefox reads as Chromium does: rows in a template in a table
     * (each closes its own), a cell template's tags with no table around
     * it (no row to find: ignored), a table part after a <div> first */
    {"template rows in table", "<table><template><tr><td>a</td></tr><tr><td>b</td></tr></template></table>" RF CL,
     "<table><template><tr><td>a</td></tr><tr><td>b</td></tr></template></table>" RF IN CL, 1},
    {"template cell caption no table", "<template><td><caption><tr></tr></template>" RF CL,
     "<template><td><caption><tr></tr></template>" RF IN CL, 1},
    {"template div caption in table", "<table><tr><td><template><div><caption><tr></table></template></table>" RF CL,
     "<table><tr><td><template><div><caption><tr></table></template></table>" RF IN CL, 1},
    /* a tag Chromium reads as any other, Firefox by the head's rules: a
     * <col> after it is "in body" in one, "in column group" in the
     * other; the model stops */
    {"template title col", "<template><title></title><col></template>" RF CL,
     "<template><title></title><col></template>" RF CL, 0},
    {"template basefont col", "<template><basefont><col></template>" RF CL,
     "<template><basefont><col></template>" RF CL, 0},
    {"template bgsound col", "<template><BGSOUND><col></template>" RF CL, "<template><BGSOUND><col></template>" RF CL,
     0},
    {"template base col", "<template><base href=/x><col></template>" RF CL,
     "<template><base href=/x><col></template>" RF CL, 0},
    {"template noframes col", "<template><noframes></noframes><col></template>" RF CL,
     "<template><noframes></noframes><col></template>" RF CL, 0},
    {"template title span col", "<template><title></title><span><col><title></title></template>" RF CL,
     "<template><title></title><span><col><title></title></template>" RF IN CL, 1},
    /* a <frameset> the browser takes ("in frameset" ignores every start
     * tag but frameset, frame and noframes): a <title> there starts no
     * raw text, and a form the injector reads after it is text inside a
     * <frame src> that sends it elsewhere; the model stops there */
    {"attack frameset title frame", "<frameset><title><frame src='//evil.example/?</title>" RF CL "'>",
     "<frameset><title><frame src='//evil.example/?</title>" RF CL "'>", 0},
    /* a <div> and whitespace leave the frameset-ok flag set: the body goes */
    {"attack div frameset textarea",
     "<div class=a>\n<frameset><textarea><frame src='//evil.example/?</textarea>" RF CL "'>",
     "<div class=a>\n<frameset><textarea><frame src='//evil.example/?</textarea>" RF CL "'>", 0},
    {"template frameset", "<template><frameset></template>" RF CL, "<template><frameset></template>" RF IN CL, 1},
    {"attack noscript form", "<noscript>" EF "</noscript>" RF CL, "<noscript>" EF "</noscript>" RF CL, 0},
    {"attack iso-2022-jp escape", "\x1b$B<!--\x1b(B" RF "-->" CL, "\x1b$B<!--\x1b(B" RF "-->" CL, 0},
    {"attack base in svg breakout", "<svg><style><p><base href=\"https://evil.example/\"></style></svg>" RF CL,
     "<svg><style><p><base href=\"https://evil.example/\"></style></svg>" RF CL, 0},
    {"base in svg breakout, no action", "<svg><style><p><base href=\"https://evil.example/\"></style></svg>" PF CL,
     "<svg><style><p><base href=\"https://evil.example/\"></style></svg>" PF IN CL, 1},
    {"svg base is not base", "<svg><base href=\"https://evil.example/\"/></svg>" RF CL,
     "<svg><base href=\"https://evil.example/\"/></svg>" RF IN CL, 1},
    {"attack select form end", EF "<select></form></select>" RF, EF "<select></form></select>" RF, 0},
    {"attack select title", "<select><title></select>" EF "</title>" RF CL,
     "<select><title></select>" EF "</title>" RF CL, 0},
    {"attack noscript quote", "<noscript><p title=\"</noscript>" EF "\">" RF CL,
     "<noscript><p title=\"</noscript>" EF "\">" RF CL, 0},
    {"attack noscript comment", EF "<noscript><!--</noscript></form>-->" RF,
     EF "<noscript><!--</noscript></form>-->" RF, 0},
    /* without scripting, </form> in noscript clears the pointer: a form
     * after it is a form of its own, and the page's </form> ends that one */
    {"attack noscript form end", RF "<noscript></form></noscript>" EF "x</form>",
     RF "<noscript></form></noscript>" EF "x</form>", 0},
    /* without scripting, </template> in noscript closes the template: the
     * </form> after it clears the pointer, and the next form is one of its own */
    {"attack noscript template end", RF "<template><noscript></template></noscript></form>" EF "</template></form>",
     RF "<template><noscript></template></noscript></form>" EF "</template></form>", 0},
    {"attack noscript select end", RF "<select><noscript></select></noscript></form>" EF "</select></form>",
     RF "<select><noscript></select></noscript></form>" EF "</select></form>", 0},
    {"attack noscript iframe", EF "<noscript><iframe></noscript></form></iframe>" RF,
     EF "<noscript><iframe></noscript></form></iframe>" RF, 0},
    {"attack annotation-xml html", "<math><annotation-xml encoding=\"TEXT/HTML\"><style><p>" EF "</style></math>" RF CL,
     "<math><annotation-xml encoding=\"TEXT/HTML\"><style><p>" EF "</style></math>" RF CL, 0},
    {"attack annotation-xml plain", "<math><annotation-xml><style><p>" EF "</style></math>" RF CL,
     "<math><annotation-xml><style><p>" EF "</style></math>" RF CL, 0},
    {"attack foreignobject form", "<svg><foreignObject>" EF "</foreignObject></svg>" RF CL,
     "<svg><foreignObject>" EF "</foreignObject></svg>" RF CL, 0},
    {"attack mi style", "<math><mi><style></math>" EF "</style>" RF CL, "<math><mi><style></math>" EF "</style>" RF CL,
     0},
    {"attack svg unmatched end", EF "<svg></form>" RF, EF "<svg></form>" RF, 0},
    {"attack svg p end", "<svg></p><style><p>" EF "</style>" RF CL, "<svg></p><style><p>" EF "</style>" RF CL, 0},
    {"attack base ref", "<base href=\"&#x2F;&#x2F;evil.example/\"><form method=post action=x>" CL,
     "<base href=\"&#x2F;&#x2F;evil.example/\"><form method=post action=x>" CL, 0},

    /* Pages as real applications write them: the token still goes in. */
    {"plain attacker form closed", EF "</form>" RF CL, EF "</form>" RF IN CL, 1},
    {"svg icon", "<svg viewBox=\"0 0 1 1\"><path d=\"M0 0\"/></svg>" RF CL,
     "<svg viewBox=\"0 0 1 1\"><path d=\"M0 0\"/></svg>" RF IN CL, 1},
    {"svg icon title", "<svg><title>Close</title><use href=\"#x\"/></svg>" RF CL,
     "<svg><title>Close</title><use href=\"#x\"/></svg>" RF IN CL, 1},
    {"svg self-closed", "<svg/>" RF CL, "<svg/>" RF IN CL, 1},
    {"svg nested", "<svg><g><g><linearGradient></linearGradient></g></G></svg>" RF CL,
     "<svg><g><g><linearGradient></linearGradient></g></G></svg>" RF IN CL, 1},
    {"svg style", "<svg><style>a{fill:red}</style></svg>" RF CL, "<svg><style>a{fill:red}</style></svg>" RF IN CL, 1},
    {"svg cdata hides", "<svg><![CDATA[" EF "]]></svg>" RF CL, "<svg><![CDATA[" EF "]]></svg>" RF IN CL, 1},
    {"svg cdata hides breakout", "<svg><![CDATA[x><p>" EF "]]></svg>" RF CL,
     "<svg><![CDATA[x><p>" EF "]]></svg>" RF IN CL, 1},
    {"html cdata ends at >", "<![CDATA[>" EF "]]>" RF CL, "<![CDATA[>" EF "]]>" RF CL, 0},
    {"svg cdata brackets", "<svg><![CDATA[a]]]></svg>" RF CL, "<svg><![CDATA[a]]]></svg>" RF IN CL, 1},
    {"svg cdata lookalike", "<svg><![CDATa[x>" RF "</svg>" RF CL, "<svg><![CDATa[x>" RF "</svg>" RF IN CL, 1},
    {"svg breakout div", "<svg><g><div>" RF CL, "<svg><g><div>" RF IN CL, 1},
    {"svg form is svg", "<svg><form method=post></form></svg>" RF CL, "<svg><form method=post></form></svg>" RF IN CL,
     1},
    {"svg img at ip", "<svg><foreignObject><img src=x></foreignObject></svg>" RF CL,
     "<svg><foreignObject><img src=x></foreignObject></svg>" RF IN CL, 1},
    {"math", "<math><mi>x</mi><mo>=</mo><mn>1</mn></math>" RF CL,
     "<math><mi>x</mi><mo>=</mo><mn>1</mn></math>" RF IN CL, 1},
    {"math svg in annotation", "<math><annotation-xml><svg><g/></svg></annotation-xml></math>" RF CL,
     "<math><annotation-xml><svg><g/></svg></annotation-xml></math>" RF IN CL, 1},
    {"template", "<template>" RF "</form></template>" RF CL, "<template>" RF "</form></template>" RF IN CL, 1},
    {"end form in template", RF "<template></form></template>x</form>", RF IN "<template></form></template>x" CL, 1},
    {"template nested", "<template><template></template>" RF "</template>" RF CL,
     "<template><template></template>" RF "</template>" RF IN CL, 1},
    {"select", "<select name=a><option>1<option>2</select>" RF CL,
     "<select name=a><option>1<option>2</select>" RF IN CL, 1},
    {"select script", "<select><script>x='</select>" EF "'</script></select>" RF CL,
     "<select><script>x='</select>" EF "'</script></select>" RF IN CL, 1},
    {"form holding select", RF "<select><option>1</select></form>" RF CL,
     RF IN "<select><option>1</select>" CL RF IN CL, 2},
    {"end form in select", RF "<select></form></select></form>", RF "<select></form></select></form>", 0},
    /* a form start tag in select is no usual one (tag_end_full's
     * inj_tree_form_usual): older parsers drop it, newer may build it */
    {"form in select", "<select><form method=post></select>x" CL RF CL,
     "<select><form method=post></select>x" CL RF IN CL, 1},
    {"noscript pixel", "<noscript><img height=1 src=\"https://t.example/p?a=1&b=2\"/></noscript>" RF CL,
     "<noscript><img height=1 src=\"https://t.example/p?a=1&b=2\"/></noscript>" RF IN CL, 1},
    {"noscript iframe",
     "<noscript><iframe src=\"https://t.example/ns\" style=\"display:none\"></iframe></noscript>" RF CL,
     "<noscript><iframe src=\"https://t.example/ns\" style=\"display:none\"></iframe></noscript>" RF IN CL, 1},
    {"noscript style", "<noscript><style>.js{display:none}</style></noscript>" RF CL,
     "<noscript><style>.js{display:none}</style></noscript>" RF IN CL, 1},
    {"noscript end tag attrs", "<noscript>x</noscript a=b>" RF CL, "<noscript>x</noscript a=b>" RF IN CL, 1},

/* The table modes. A form start tag in a table outside a cell or caption
 * is inserted and popped at once ("in table", HTML 13.2.6.4.9): nothing
 * becomes its child, its fields belong to it through the form element
 * pointer only, and when the adoption agency or foster parenting moves
 * them browsers give them to the nearest form among their ancestors. The
 * outside review's page: an attacker's GET form left open around the
 * table, and the site's own <a> after the real form moves the field, q
 * and the button into it. No token there; a form in a cell, a caption or
 * around the table keeps its own. */
#define EG "<p>comment: <form method=get action=https://evil.example/steal><div></form><table>"
#define SITE "<form method=post action=/a><input name=q><button id=go>go</button></form><p><a href=/help>help</a>"
#define SF "<form method=post action=/a>"
#define SITE_IN SF IN "<input name=q><button id=go>go</button></form><p><a href=/help>help</a>"
    {"table form", "<table><form method=post><tr><td><input name=a></td></tr></form></table>",
     "<table><form method=post><tr><td><input name=a></td></tr></form></table>", 0},
    {"review table a", EG "<a><div></p>" SITE, EG "<a><div></p>" SITE, 0},
    {"review table b", EG "<b><div></p>" SITE "</b>", EG "<b><div></p>" SITE "</b>", 0},
    {"review table nobr", EG "<tr><nobr><div>" SITE "<nobr>", EG "<tr><nobr><div>" SITE "<nobr>", 0},
    {"review table after cell", EG "<td></td><a><div>" SITE, EG "<td></td><a><div>" SITE, 0},
    {"table row form", "<table><tr>" SITE, "<table><tr>" SITE, 0},
    {"table body form", "<TABLE><TBODY>" SITE, "<TABLE><TBODY>" SITE, 0},
    {"form in td", "<table><tr><td>" SITE "</td></tr></table>", "<table><tr><td>" SITE_IN "</td></tr></table>", 1},
    {"form in th", "<table><thead><tr><th>" SITE "</th></tr></thead></table>",
     "<table><thead><tr><th>" SITE_IN "</th></tr></thead></table>", 1},
    {"form in bare td", "<table><td>" SITE, "<table><td>" SITE_IN, 1},
    {"form in caption", "<table><caption>" SITE "</caption></table>", "<table><caption>" SITE_IN "</caption></table>",
     1},
    {"form around table", SF "<table><tr><td><input name=q></td></tr></table>" CL,
     SF IN "<table><tr><td><input name=q></td></tr></table>" CL, 1},
    {"form after table", "<table><tr><td>x</td></tr></table>" SITE, "<table><tr><td>x</td></tr></table>" SITE_IN, 1},
    {"form after cell end", "<table><tr><td>x</td>" SITE, "<table><tr><td>x</td>" SITE, 0},
    {"form after row end", "<table><tr><td>x</tr>" SITE, "<table><tr><td>x</tr>" SITE, 0},
    {"form after caption end", "<table><caption>x</caption>" SITE, "<table><caption>x</caption>" SITE, 0},
    {"form in second cell", "<table><tr><td>x<td>" SITE, "<table><tr><td>x<td>" SITE_IN, 1},
    {"th end in td dropped", "<table><tr><td></th>" SITE, "<table><tr><td></th>" SITE_IN, 1},
    {"td end in caption dropped", "<table><caption></td></tr>" SITE, "<table><caption></td></tr>" SITE_IN, 1},
    {"thead end in tbody cell dropped", "<table><tr><td></thead>" SITE, "<table><tr><td></thead>" SITE_IN, 1},
    {"tbody end closes the cell", "<table><tr><td></tbody>" SITE, "<table><tr><td></tbody>" SITE, 0},
    /* the section and cell end tags plain_tag looks up (inj_html_maybe_end):
     * each closes the cell, so the form after it is in the row or table */
    {"th end closes the cell", "<table><tr><th>x</th>" SITE, "<table><tr><th>x</th>" SITE, 0},
    {"th end upper case", "<TABLE><TR><TH>x</TH>" SITE, "<TABLE><TR><TH>x</TH>" SITE, 0},
    {"thead end closes the cell", "<table><thead><tr><td>x</thead>" SITE, "<table><thead><tr><td>x</thead>" SITE, 0},
    {"tfoot end closes the cell", "<table><TFoot><tr><td>x</TFOOT>" SITE, "<table><TFoot><tr><td>x</TFOOT>" SITE, 0},
    {"col closes the cell", "<table><tr><td><col>" SITE, "<table><tr><td><col>" SITE, 0},
    {"colgroup closes the caption", "<table><caption><colgroup>" SITE, "<table><caption><colgroup>" SITE, 0},
    {"tr closes the cell", "<table><tr><td><tr>" SITE, "<table><tr><td><tr>" SITE, 0},
    {"table in table", "<table><table>" SITE, "<table><table>" SITE, 0},
    {"table in a cell", "<table><tr><td><table></table>" SITE, "<table><tr><td><table></table>" SITE_IN, 1},
    {"nested cells", "<table><tr><td><table><tr><td>" SITE "</table>" SITE,
     "<table><tr><td><table><tr><td>" SITE_IN "</table>" SITE_IN, 2},
    {"nested table row", "<table><tr><td><table></table></td>" SITE, "<table><tr><td><table></table></td>" SITE, 0},
    {"table end outside tables", "</table><td>" SITE, "</table><td>" SITE_IN, 1},
    {"table in template", "<template><table></template>" SITE, "<template><table></template>" SITE_IN, 1},
    {"table breaks out of svg", "<svg><table>" SITE, "<svg><table>" SITE, 0},
    {"td in svg is svg", "<table><tr><td><svg><td></td></svg>" SITE, "<table><tr><td><svg><td></td></svg>" SITE_IN, 1},
    {"form pointer from a table form", "<table><form method=post></form><tr><td>" SITE,
     "<table><form method=post></form><tr><td>" SITE_IN, 1},
    {"get form in table", "<table><form method=get></form></table>" SITE,
     "<table><form method=get></form></table>" SITE_IN, 1},
    {"select closed by a cell", "<table><tr><td><select><option>a<td>" SITE,
     "<table><tr><td><select><option>a<td>" SITE_IN, 1},
    {"select closed by a cell end", "<table><tr><td><select><option>a</td>" SITE,
     "<table><tr><td><select><option>a</td>" SITE, 0},
    {"table in select", "<table><tr><td><select><table>" SITE, "<table><tr><td><select><table>" SITE, 0},
    {"row end in select", "<table><select></tr>" SITE, "<table><select></tr>" SITE, 0},
    {"noscript table", "<noscript><table><tr><td>x</td></tr></table></noscript>" SITE,
     "<noscript><table><tr><td>x</td></tr></table></noscript>" SITE_IN, 1},
    {"noscript table left open", "<noscript><table></noscript>" SITE, "<noscript><table></noscript>" SITE, 0},
    {"noscript cell end", "<table><tr><td><noscript></td></noscript>" SITE,
     "<table><tr><td><noscript></td></noscript>" SITE, 0},
    /* a base in a table outside a cell goes before the table: ahead of one read in a cell */
    {"foster-parented base", "<table><tr><td>" EB "</td><base href=\"/app/\"></table>" SITE,
     "<table><tr><td>" EB "</td><base href=\"/app/\"></table>" SITE, 0},
    {"foster-parented base first", "<table><tr><td><base href=\"/app/\"></td>" EB "</table>" SITE,
     "<table><tr><td><base href=\"/app/\"></td>" EB "</table>" SITE, 0},
    {"base in a later cell", "<table><tr><td><base href=\"/app/\"><td>" EB "</table>" SITE,
     "<table><tr><td><base href=\"/app/\"><td>" EB "</table>" SITE_IN, 1},
#undef EG
#undef SITE
#undef SF
#undef SITE_IN
    {"phpmyadmin action",
     "<form method=\"post\" action=\"index.php&#x3F;route&#x3D;&#x2F;preferences&#x2F;features\">" CL,
     "<form method=\"post\" action=\"index.php&#x3F;route&#x3D;&#x2F;preferences&#x2F;features\">" IN CL, 1},
    {"named ref sol", "<form method=post action=\"&sol;&sol;evil.example\">" CL,
     "<form method=post action=\"&sol;&sol;evil.example\">" CL, 0},
    {"named ref newline", "<form method=post action=\"/&NewLine;/evil.example\">" CL,
     "<form method=post action=\"/&NewLine;/evil.example\">" CL, 0},
    {"named ref colon self", "<form method=post action=\"https&colon;//self.example/\">" CL,
     "<form method=post action=\"https&colon;//self.example/\">" IN CL, 1},
    {"unknown ref in path", "<form method=post action=\"/a&copy;b\">" CL,
     "<form method=post action=\"/a&copy;b\">" IN CL, 1},
    {"legacy ref kept", "<form method=post action=\"x?a=1&amp=2\">" CL,
     "<form method=post action=\"x?a=1&amp=2\">" IN CL, 1},
    {"method named ref", "<form method=\"&#x70;o&#115;t\">" CL, "<form method=\"&#x70;o&#115;t\">" IN CL, 1},
    {"method dialog ref", "<form method=\"dialo&#x67;\">" CL, "<form method=\"dialo&#x67;\">" CL, 0},

/* Submitters. A form whose fields can leave by GET or to another origin
 * gets no token: a GET form, even with a formmethod=post button (its own
 * submission, Enter in a field, goes by GET with every field in the URL),
 * a POST form with a formmethod=get button, or one with a formaction
 * elsewhere. The field goes in at </form>, when all of them are known. */
#define GF "<form action=\"/s\">"
    {"get form with post button", GF "<button formmethod=post>" CL, GF "<button formmethod=post>" CL, 0},
    {"get form with post input", GF "<input type=submit formmethod=POST>" CL,
     GF "<input type=submit formmethod=POST>" CL, 0},
    {"get form with post image", GF "<input type=IMAGE formmethod=post src=x>" CL,
     GF "<input type=IMAGE formmethod=post src=x>" CL, 0},
    {"get form with self post action", GF "<button formmethod=post formaction=\"/t\">" CL,
     GF "<button formmethod=post formaction=\"/t\">" CL, 0},
    {"issue 24 get form",
     "<form action=/items><input name=q><button>Search</button>"
     "<button formmethod=post formaction=/items/delete>Delete</button></form>",
     "<form action=/items><input name=q><button>Search</button>"
     "<button formmethod=post formaction=/items/delete>Delete</button></form>",
     0},
    {"post form with get button", PF "<button>Save</button><button formmethod=get>Preview</button>" CL,
     PF "<button>Save</button><button formmethod=get>Preview</button>" CL, 0},
    {"post form with GET input", PF "<input type=submit formmethod=GET>" CL, PF "<input type=submit formmethod=GET>" CL,
     0},
    {"post form with get image", PF "<input type=image formmethod=get src=x>" CL,
     PF "<input type=image formmethod=get src=x>" CL, 0},
    {"get button ref", PF "<button formmethod=\"&#x67;et\">" CL, PF "<button formmethod=\"&#x67;et\">" CL, 0},
    {"invalid formmethod is get", PF "<button formmethod=pst>" CL, PF "<button formmethod=pst>" CL, 0},
    {"empty formmethod is get", PF "<button formmethod>" CL, PF "<button formmethod>" CL, 0},
    {"formmethod post button", PF "<button formmethod=post>" CL, PF IN "<button formmethod=post>" CL, 1},
    {"formmethod dialog button", PF "<button formmethod=dialog>" CL, PF IN "<button formmethod=dialog>" CL, 1},
    {"get button after the end", PF CL "<button formmethod=get>", PF IN CL "<button formmethod=get>", 1},
    {"get button of type button", PF "<button type=button formmethod=get>" CL,
     PF IN "<button type=button formmethod=get>" CL, 1},
    {"get button of type reset", PF "<button type=reset formmethod=get>" CL,
     PF IN "<button type=reset formmethod=get>" CL, 1},
    {"get text input", PF "<input formmethod=get>" CL, PF IN "<input formmethod=get>" CL, 1},
    {"get hidden input", PF "<input type=hidden formmethod=get>" CL, PF IN "<input type=hidden formmethod=get>" CL, 1},
    {"invalid button type submits", PF "<button type=x formmethod=get>" CL, PF "<button type=x formmethod=get>" CL, 0},
    {"get button in comment", PF "<!--<button formmethod=get>-->" CL, PF IN "<!--<button formmethod=get>-->" CL, 1},
    {"get button in script", PF "<script>'<button formmethod=get>'</script>" CL,
     PF IN "<script>'<button formmethod=get>'</script>" CL, 1},
    {"get button in template", PF "<template><button formmethod=get></template>" CL,
     PF IN "<template><button formmethod=get></template>" CL, 1},
    {"get button in svg", PF "<svg><button formmethod=get/></svg>" CL, PF IN "<svg><button formmethod=get/></svg>" CL,
     1},
    {"get button in table", PF "<table><tr><td><button formmethod=get></td></tr></table>" CL,
     PF "<table><tr><td><button formmethod=get></td></tr></table>" CL, 0},
    {"get button in select", PF "<select><button formmethod=get></select>" CL,
     PF "<select><button formmethod=get></select>" CL, 0},
    {"get button in nested form", PF "<form><button formmethod=get></form>", PF "<form><button formmethod=get></form>",
     0},
    {"get button then second form", PF "<button formmethod=get>" CL PF CL, PF "<button formmethod=get>" CL PF IN CL, 1},
    {"formaction in posted form", PF "<button formaction=\"https://evil.example/\">" CL,
     PF "<button formaction=\"https://evil.example/\">" CL, 0},
    {"formaction self", PF "<button formaction=\"https://self.example/x\">" CL,
     PF IN "<button formaction=\"https://self.example/x\">" CL, 1},
    {"formaction relative", PF "<button formaction=/x>" CL, PF IN "<button formaction=/x>" CL, 1},
    {"formaction relative after base", PF "<base href=\"https://evil.example/\"><button formaction=x>" CL,
     PF "<base href=\"https://evil.example/\"><button formaction=x>" CL, 0},
    {"formaction relative before base", PF "<button formaction=x><base href=\"https://evil.example/\">" CL,
     PF "<button formaction=x><base href=\"https://evil.example/\">" CL, 0},
    {"formaction self after base",
     PF "<base href=\"https://evil.example/\"><button formaction=\"https://self.example/t\">" CL,
     PF IN "<base href=\"https://evil.example/\"><button formaction=\"https://self.example/t\">" CL, 1},
    {"relative action then base", RF "<base href=\"https://evil.example/\">" CL,
     RF "<base href=\"https://evil.example/\">" CL, 0},
    {"formaction javascript", PF "<button formaction=\"javascript:x\">" CL,
     PF "<button formaction=\"javascript:x\">" CL, 0},
    {"get form other origin", "<form action=\"https://evil.example/\"><button formmethod=post>" CL,
     "<form action=\"https://evil.example/\"><button formmethod=post>" CL, 0},

    /* form="" submitters: they send the form whose id they name, wherever
     * they stand. No ids are kept: one that sends by GET or elsewhere takes
     * the token from an open form with an id, and from every later form with
     * an id; after a form with an id got its token it is reported only. */
    {"form attr post", PF "<button form=f formmethod=post>" CL, PF IN "<button form=f formmethod=post>" CL, 1},
    {"form attr plain", "<form id=f method=post>" CL "<button form=f>",
     "<form id=f method=post>" IN CL "<button form=f>", 1},
    {"form attr get inside form with id", "<form id=f method=post><button form=f formmethod=get>" CL,
     "<form id=f method=post><button form=f formmethod=get>" CL, 0},
    {"form attr get inside form without id", PF "<button form=f formmethod=get>" CL,
     PF IN "<button form=f formmethod=get>" CL, 1},
    {"form attr get before form with id", "<button form=f formmethod=get><form id=f method=post>" CL,
     "<button form=f formmethod=get><form id=f method=post>" CL, 0},
    {"form attr elsewhere before form with id",
     "<input type=submit form=f formaction=\"//evil.example/\"><form id=f method=post>" CL,
     "<input type=submit form=f formaction=\"//evil.example/\"><form id=f method=post>" CL, 0},
    {"form attr get before form without id", "<button form=f formmethod=get>" PF CL,
     "<button form=f formmethod=get>" PF IN CL, 1},
    {"form attr get after form with id", "<form id=f method=post>" CL "<button form=f formmethod=get>",
     "<form id=f method=post>" IN CL "<button form=f formmethod=get>", 1},
    {"form attr type button", "<button type=button form=f formmethod=get><form id=f method=post>" CL,
     "<button type=button form=f formmethod=get><form id=f method=post>" IN CL, 1},
    {"form attr in template", "<template><button form=f formmethod=get></template><form id=f method=post>" CL,
     "<template><button form=f formmethod=get></template><form id=f method=post>" IN CL, 1},

/* The outside review's pages: markup before the real form (user content)
 * closes a form of its own early with elements left open; the tree
 * builder then moves what follows. The field stays a child of the real
 * form: right after its start tag, never at its end tag. */
#define EVIL "<form action=\"https://evil.example/steal\" method=\"post\" id=\"evil\">"
#define SEND "<form method=post action=/send>"
#define SENT "<input name=msg><button>Send</button></form>"
    {"review: evil form closed early, button left open",
     "<div class=\"comment\">Nice post! " EVIL "<div></form><a><section><button><div></div>" SEND SENT,
     "<div class=\"comment\">Nice post! " EVIL "<div></form><a><section><button><div></div>" SEND IN SENT, 1},
    {"review: evil form around a div", "<div>" EVIL "</div></form>" SEND SENT,
     "<div>" EVIL "</div></form>" SEND IN SENT, 1},
    {"review: a form inside the evil one", EVIL "<div></form>" SEND SENT "</div>",
     EVIL "<div></form>" SEND IN SENT "</div>", 1},

    /* noscript: a browser without scripting builds its buttons */
    {"noscript submit", PF "<noscript><input type=submit value=Go></noscript>" CL,
     PF IN "<noscript><input type=submit value=Go></noscript>" CL, 1},
    {"noscript submit formmethod", PF "<noscript><input type=submit formmethod=get></noscript>" CL,
     PF "<noscript><input type=submit formmethod=get></noscript>" CL, 0},
    {"noscript button formaction", PF "<noscript><BUTTON FORMACTION='//evil.example/'>x</button></noscript>" CL,
     PF "<noscript><BUTTON FORMACTION='//evil.example/'>x</button></noscript>" CL, 0},
    {"noscript button formmethod after value", PF "<noscript><button name=a value=\"b\"formmethod=get></noscript>" CL,
     PF "<noscript><button name=a value=\"b\"formmethod=get></noscript>" CL, 0},
    {"noscript formaction text", PF "<noscript>formaction <b title=formaction>x</b></noscript>" CL,
     PF IN "<noscript>formaction <b title=formaction>x</b></noscript>" CL, 1},
    {"noscript form attr before form with id",
     "<noscript><button form=f formmethod=post></noscript><form id=f method=post>" CL,
     "<noscript><button form=f formmethod=post></noscript><form id=f method=post>" CL, 0},
    {"noscript in raw text", PF "<textarea><noscript><button formmethod=get></noscript></textarea>" CL,
     PF IN "<textarea><noscript><button formmethod=get></noscript></textarea>" CL, 1},

    /* held bytes */
    {"plaintext in a form", PF "<plaintext></form>", PF "<plaintext></form>", 0},
    {"button after the end tag", PF "<div></form><button formmethod=get>", PF IN "<div></form><button formmethod=get>",
     1},
    {"two forms", PF "a" CL "b" PF "c" CL, PF IN "a" CL "b" PF IN "c" CL, 2},
    {"get button in the second form", PF "a" CL PF "<button formmethod=get>" CL,
     PF IN "a" CL PF "<button formmethod=get>" CL, 1},

    /* a button or input start tag with no attribute and a form end tag,
     * their '>' right after the name: moved without their tag's state
     * (bare_quiet); the end tag clears the form element pointer, so that
     * a form after it is one */
    {"bare: button and input", PF "<input><button>x</button>" CL, PF IN "<input><button>x</button>" CL, 1},
    {"bare: upper case", PF "<INPUT><BUTTON>x</BUTTON></FORM>" PF CL, PF IN "<INPUT><BUTTON>x</BUTTON></FORM>" PF IN CL,
     2},
    {"bare: end tag of a get form", "<form>a</form>" PF "b" CL, "<form>a</form>" PF IN "b" CL, 1},
    {"bare: end tags with a space and a slash", PF "a</form >" PF "b</form/>" PF "c" CL,
     PF IN "a</form >" PF IN "b</form/>" PF IN "c" CL, 3},
    {"bare: a get button after the end tag", PF "a" CL "<button formmethod=get>",
     PF IN "a" CL "<button formmethod=get>", 1},
    {"bare: button after a noscript button ruled the form out",
     PF "<noscript><input type=submit formmethod=get></noscript><button>x</button>" CL,
     PF "<noscript><input type=submit formmethod=get></noscript><button>x</button>" CL, 0},
    {"bare: a form start tag is no quiet tag", "<form>a" PF "b" CL, "<form>a" PF "b" CL, 0},
    {"bare: a button with an attribute", PF "<button formmethod=get>x</button>" CL,
     PF "<button formmethod=get>x</button>" CL, 0},
    {"bare: an input with an attribute", PF "<input\ttype=submit formaction=//evil.example/>" CL,
     PF "<input\ttype=submit formaction=//evil.example/>" CL, 0},

    /* tags that change nothing, which the tokenizer skips from '<' to '>'
     * without reading their attributes: only a quote that opens a value
     * hides a '>' (and a form inside a value is no form) */
    {"skipped: form in a quoted value", "<a title='" PF "'>x" CL, "<a title='" PF "'>x" CL, 0},
    {"skipped: form after a '>' in a value", "<a title='>" PF "'>x" CL, "<a title='>" PF "'>x" CL, 0},
    {"skipped: form after a '>' in a value, upper case", "<SPAN TITLE=\">" PF "\">x" CL, "<SPAN TITLE=\">" PF "\">x" CL,
     0},
    {"skipped: space before a quoted value", "<a b= '>" PF "'>x" CL, "<a b= '>" PF "'>x" CL, 0},
    {"skipped: form in a double-quoted value", "<span data-x=\"<form method='post'>\">x" CL,
     "<span data-x=\"<form method='post'>\">x" CL, 0},
    {"skipped: '>' in a value", "<div class=\"a>b\" id=x>" PF CL, "<div class=\"a>b\" id=x>" PF IN CL, 1},
    /* the next tag found from a tag's own '<' (run: a plain tag's, a form's
     * own tags'): a '<' inside the tag is not the next tag's */
    {"next '<': in a plain tag's value", "<a title='<b>'>" PF "<a title=\"<button formaction=//evil.example/>\">x" CL,
     "<a title='<b>'>" PF IN "<a title=\"<button formaction=//evil.example/>\">x" CL, 1},
    {"next '<': in an input's value", PF "<input value=\"<button formaction=//evil.example/>\">" CL,
     PF IN "<input value=\"<button formaction=//evil.example/>\">" CL, 1},
    {"next '<': in a form start tag's value",
     "<form method=\"post\" title=\"<button formaction=//evil.example/>\"><button>x</button>" CL,
     "<form method=\"post\" title=\"<button formaction=//evil.example/>\">" IN "<button>x</button>" CL, 1},
    {"next '<': in a button's value", PF "<button value='<button formmethod=get>'>x</button>" CL,
     PF IN "<button value='<button formmethod=get>'>x</button>" CL, 1},
    {"skipped: upper case", "<DIV CLASS='" PF "'>" CL, "<DIV CLASS='" PF "'>" CL, 0},
    {"skipped: spaces around =", "<a b\n=\n'" PF "'>" CL, "<a b\n=\n'" PF "'>" CL, 0},
    {"skipped: end tag attributes", "</a title='" PF "'>" CL, "</a title='" PF "'>" CL, 0},
    {"skipped: value after value", "<a x='1'y='" PF "'>" CL, "<a x='1'y='" PF "'>" CL, 0},
    {"skipped: value after slash", "<br/ title='>'>" PF CL, "<br/ title='>'>" PF IN CL, 1},
    {"skipped: slash then quote", "<a/\"=\"" PF "\">" CL, "<a/\"=\"" PF "\">" CL, 0},
    {"skipped: quote in a tag name", "<a\" title=x>" PF CL, "<a\" title=x>" PF IN CL, 1},
    {"skipped: quote in a long name", "<strong\"='>" PF "'" CL, "<strong\"='>" PF IN "'" CL, 1},
    {"skipped: quote in an attribute name", "<a b\"c>" PF "\"" CL, "<a b\"c>" PF IN "\"" CL, 1},
    {"skipped: quote in a name, then a value", "<a b\"='>" PF "'" CL, "<a b\"='>" PF "'" CL, 0},
    {"skipped: quote in an unquoted value", "<a b=c\"d>" PF "\"" CL, "<a b=c\"d>" PF IN "\"" CL, 1},
    {"skipped: '=' starts a name", "<a =\">" PF "\">" CL, "<a =\">" PF IN "\">" CL, 1},
    {"skipped: '==' is a value", "<a b==\">" PF "\">" CL, "<a b==\">" PF IN "\">" CL, 1},
    {"skipped: '=' then a quote after a value", "<a b=1 =\">" PF "\">" CL, "<a b=1 =\">" PF IN "\">" CL, 1},
    {"skipped: name then '=' after a space", "<a b ='>" PF "'>" CL, "<a b ='>" PF "'>" CL, 0},
    {"skipped: tag name with '='", "<code=x title='>" PF "'>" CL, "<code=x title='>" PF "'>" CL, 0},
    {"skipped: name ending in '/'", "<span/title='>" PF "'>" CL, "<span/title='>" PF "'>" CL, 0},
    {"skipped: unclosed quote", "<p title='>" PF CL, "<p title='>" PF CL, 0},
    {"skipped: cell outside tables", "<td title='>'>" PF CL, "<td title='>'>" PF IN CL, 1},
    {"skipped: long names", "<blockquote title='" PF "'><section>" PF CL,
     "<blockquote title='" PF "'><section>" PF IN CL, 1},
    {"skipped: names that matter are read", "<p><b><FORM method=post><i>x</i>" CL "<br>",
     "<p><b><FORM method=post>" IN "<i>x</i>" CL "<br>", 1},
    {"skipped: raw text is read", "<b><title>" PF "</title><i title='" PF "'>" CL,
     "<b><title>" PF "</title><i title='" PF "'>" CL, 0},
    {"skipped: not in svg", "<svg><a title='x>'></a></svg>" PF CL, "<svg><a title='x>'></a></svg>" PF IN CL, 1},
    /* the outside review of plain_tag (names near those that matter,
     * markup that looks like a tag inside a tag or a comment) */
    {"skipped: '<' in a tag name", "<a<form method=post>x" CL, "<a<form method=post>x" CL, 0},
    {"skipped: a tag as an attribute name", "<a title=\"x\" <form method=post>>" CL,
     "<a title=\"x\" <form method=post>>" CL, 0},
    {"skipped: inputs is no submitter", PF "<inputs type=submit formaction=//evil.example/>" CL,
     PF IN "<inputs type=submit formaction=//evil.example/>" CL, 1},
    {"skipped: base2 is no base", "<base2 href=//evil.example/><form method=post action=x>" CL,
     "<base2 href=//evil.example/><form method=post action=x>" IN CL, 1},
    {"skipped: end tag of a base and an input", "</base href=//evil.example/>" PF "</input formaction=//e/>" CL,
     "</base href=//evil.example/>" PF IN "</input formaction=//e/>" CL, 1},
    {"skipped: a quote does not hide '>' in a bogus comment", "</ x='>" PF "'>" CL, "</ x='>" PF IN "'>" CL, 1},
    {"skipped: a processing instruction ends at its '>'", "<?x " PF ">" CL, "<?x " PF ">" CL, 0},
    {"skipped: FORM in a long name's value", "<blockquote cite='<FORM method=post>'>" CL,
     "<blockquote cite='<FORM method=post>'>" CL, 0},
};

/* ---- the injector's id of a form read deep in the tree ---- */

/* What it adds: PIN_PRE, 16 base64url characters (96 random bits), '"';
 * and the field PINNED_PRE, the same 16, PINNED_END. */
#define PIN_PRE " id=\"csrf-"
#define PIN_LEN (sizeof PIN_PRE - 1 + 16 + 1)
#define PINNED_PRE "<input type=\"hidden\" name=\"" F "\" value=\"" T "\" form=\"csrf-"
#define PINNED_END "\">"
#define PINNED_LEN (sizeof PINNED_PRE - 1 + 16 + sizeof PINNED_END - 1)
/* The 16 characters of an id as the tests write them: the bytes drawn
 * differ for every form and every run. */
#define PIN_MASK "################"
#define PIN_ID " id=\"csrf-" PIN_MASK "\""
#define PIN_IN "<input type=\"hidden\" name=\"" F "\" value=\"" T "\" form=\"csrf-" PIN_MASK "\">"

static int b64url_16(const char *p)
{
	for (int k = 0; k < 16; k++) {
		char c = p[k];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
		      c == '_'))
			return 0;
	}
	return 1;
}

/* 1 for an injector's id, 2 for a field naming one (its 16 characters
 * at *at), 0 for another piece. */
static int pin_piece(const char *p, size_t n, size_t *at)
{
	size_t a = sizeof PIN_PRE - 1, b = sizeof PINNED_PRE - 1;
	if (n == PIN_LEN && memcmp(p, PIN_PRE, a) == 0 && b64url_16(p + a) && p[a + 16] == '"') {
		*at = a;
		return 1;
	}
	if (n == PINNED_LEN && memcmp(p, PINNED_PRE, b) == 0 && b64url_16(p + b) &&
	    memcmp(p + b + 16, PINNED_END, sizeof PINNED_END - 1) == 0) {
		*at = b;
		return 2;
	}
	return 0;
}

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
	size_t stop_at;  /* return 1 from this call (1-based); 0 never */
	unsigned status; /* csrf_inject_status after run's finish */
	/* the injector's ids, as drawn (in out they read PIN_MASK), and the
	 * ids the fields named */
	char ids[8][16], named[8][16];
	size_t n_ids, n_named;
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
		/* the chunk's bytes, or a form's bytes the injector held */
		if ((p < s->chunk || p + n > s->chunk + s->chunk_len) && (p < s->mem || p + n > s->mem + s->mem_len))
			s->bad = 1;
		append(&s->plain, &s->plain_len, &s->plain_cap, p, n);
	}
	append(&s->out, &s->len, &s->cap, p, n);
	size_t at;
	int pin = inserted ? pin_piece(p, n, &at) : 0;
	if (pin) {
		char(*keep)[16] = pin == 1 ? s->ids : s->named;
		size_t *kn = pin == 1 ? &s->n_ids : &s->n_named;
		if (*kn < 8)
			memcpy(keep[(*kn)++], p + at, 16);
		memcpy(s->out + s->len - n + at, PIN_MASK, 16);
	}
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

/* The options every injector of the test is given (the referrer table sets
 * CSRF_INJECT_OPT_RAISE_REFERRER). */
static unsigned options;

/* What the memory of the next new_injector holds before its init: 0x00,
 * 0xff, or (DIRTY) bytes that are neither, as a server's pool hands out.
 * Init sets only what is read before it is written: every test runs on
 * dirty memory. */
#define DIRTY (-1)
static int init_fill = DIRTY;

/* An injector in exactly csrf_inject_size() bytes flush against a guard
 * page: a write past its state crashes. */
static csrf_inject *new_injector(char **mem)
{
	static unsigned char dirt[CSRF_INJECT_STATE_MAX];
	static int dirt_fill = 0x100; /* what dirt holds: none yet */
	size_t sz = csrf_inject_size();
	assert_true(sz <= sizeof dirt);
	if (dirt_fill != init_fill) {
		for (size_t k = 0; k < sz; k++)
			dirt[k] = (unsigned char)(init_fill == DIRTY ? k * 167 + 0x5b : (size_t)init_fill);
		dirt_fill = init_fill;
	}
	*mem = tu_guard_copy(dirt, sz);
	if (init_fill == DIRTY)
		(void)VALGRIND_MAKE_MEM_UNDEFINED(*mem, sz);
	csrf_inject *inj = NULL;
	assert_int_equal(csrf_inject_init(*mem, sz, SELF, strlen(SELF), F, strlen(F), T, strlen(T), &inj), CSRF_OK);
	assert_non_null(inj);
	if (options) /* none: as init leaves them */
		assert_int_equal(csrf_inject_options(inj, options), CSRF_OK);
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
	s->chunk = NULL;
	s->chunk_len = 0;
	assert_int_equal(csrf_inject_finish(inj, sink_emit, s, count), CSRF_OK);
	s->status = csrf_inject_status(inj);
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

/* Insertion k of s, at byte at of its output, is the element lit. */
static int is_piece(const sink *s, size_t k, size_t at, const char *lit)
{
	return s->ins_n[k] == strlen(lit) && memcmp(s->out + at, lit, s->ins_n[k]) == 0;
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

	/* every truncated prefix: the input so far, with insertions each at
	 * its place in the full output; the meta tags as soon as their <head>
	 * tag ends, a form's field once its end tag's name has been read (its
	 * bytes are held until then; the stream's end lets them go without
	 * the field) */
	size_t prev_n = 0, prev_in = 0, prev_other = 0;
	for (size_t m = 0; m <= len; m++) {
		if (m == 0) {
			/* nothing to feed: the injector emits nothing */
			char *mem;
			csrf_inject *inj = new_injector(&mem);
			memset(&s, 0, sizeof s);
			assert_int_equal(csrf_inject_feed(inj, NULL, 0, sink_emit, &s), CSRF_OK);
			assert_int_equal(csrf_inject_finish(inj, sink_emit, &s, &count), CSRF_OK);
			assert_int_equal(s.calls, 0);
			assert_int_equal(count, 0);
			tu_guard_free(mem);
			continue;
		}
		run(in, m, NULL, 0, &s, &count);
		expect_output(name, "prefix", m, &s, s.out, s.len, in, m);
		if (count != s.n_ins)
			fail_msg("%s (prefix %zu): %u elements counted, %zu inserted", name, m, count, s.n_ins);
		/* the insertions are the first ones of the full output, where it
		 * has them. With the referrer raise on, a form held at the
		 * prefix's end gets no field, so a meta inserted inside it comes
		 * without the field the full output has before it; and the raise
		 * of a held form goes after its last no-referrer meta, which a
		 * longer prefix may move on: raises are checked by the whole
		 * outputs above only. */
		size_t sp[64], fp[64], off = 0;
		for (size_t k = 0; k < s.n_ins; k++)
			sp[k] = s.ins_at[k] + off, off += s.ins_n[k];
		off = 0;
		for (size_t k = 0; k < full.n_ins; k++)
			fp[k] = full.ins_at[k] + off, off += full.ins_n[k];
		for (size_t k = 0, j = 0; k < s.n_ins; k++, j++) {
			if (options && is_piece(&s, k, sp[k], RM)) {
				j--;
				continue;
			}
			while (options && j < full.n_ins && !is_piece(&s, k, sp[k], IN) &&
			       (is_piece(&full, j, fp[j], IN) || is_piece(&full, j, fp[j], RM)))
				j++;
			while (options && j < full.n_ins && is_piece(&full, j, fp[j], RM))
				j++;
			if (j >= full.n_ins || s.ins_at[k] != full.ins_at[j] || s.ins_n[k] != full.ins_n[j] ||
			    memcmp(s.out + sp[k], full.out + fp[j], s.ins_n[k]) != 0)
				fail_msg("%s (prefix %zu): insertion %zu is not the full output's", name, m, k);
		}
		if (s.n_ins < prev_n)
			fail_msg("%s (prefix %zu): an insertion went away", name, m);
		/* the new ones: fields and metas counted apart (a field goes in
		 * before a meta inside its form that came out at a shorter
		 * prefix) */
		size_t n_in = 0, n_other = 0;
		for (size_t k = 0; k < s.n_ins; k++) {
			const char *piece = s.out + s.ins_at[k];
			size_t before = 0;
			for (size_t j = 0; j < k; j++)
				before += s.ins_n[j];
			piece += before;
			int is_in = (s.ins_n[k] == strlen(IN) && memcmp(piece, IN, strlen(IN)) == 0) ||
			            (s.ins_n[k] == strlen(PIN_ID) && memcmp(piece, PIN_ID, strlen(PIN_ID)) == 0) ||
			            (s.ins_n[k] == strlen(PIN_IN) && memcmp(piece, PIN_IN, strlen(PIN_IN)) == 0);
			if (is_in ? n_in++ < prev_in : n_other++ < prev_other)
				continue;
			int meta = (s.ins_n[k] == strlen(MT) && memcmp(piece, MT, strlen(MT)) == 0) ||
			           (s.ins_n[k] == strlen(RM) && memcmp(piece, RM, strlen(RM)) == 0);
			unsigned char last = (unsigned char)in[m - 1];
			int form_end = m >= 7 && strncasecmp(in + m - 7, "</form", 6) == 0 &&
			               (last == '>' || last == '/' || last == ' ' || last == '\t' || last == '\n' ||
			                last == '\f' || last == '\r');
			if (meta ? s.ins_at[k] != m : !form_end)
				fail_msg("%s (prefix %zu): insertion %zu came before what decides it", name, m, k);
		}
		prev_n = s.n_ins;
		prev_in = n_in;
		prev_other = n_other;
		if (m == len && s.n_ins != full.n_ins)
			fail_msg("%s: the whole input fed at once differs", name);
		sink_free(&s);
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

/* CSRF_INJECT_OPT_RAISE_REFERRER: a same-origin meta right after every
 * meta a browser reads as no-referrer, wherever it stands, and nothing
 * after any other. */
static const row referrer_rows[] = {
    {"referrer head", "<head>" NRM "</head>", "<head>" MT NRM RM "</head>", 2},
    {"referrer quoted", "<meta name=\"referrer\" content=\"no-referrer\">",
     "<meta name=\"referrer\" content=\"no-referrer\">" RM, 1},
    {"referrer self-closing", "<meta name='referrer' content='no-referrer'/>",
     "<meta name='referrer' content='no-referrer'/>" RM, 1},
    {"referrer content first", "<meta content=no-referrer name=referrer>",
     "<meta content=no-referrer name=referrer>" RM, 1},
    {"referrer case", "<META NAME=Referrer CONTENT=\"No-Referrer\">", "<META NAME=Referrer CONTENT=\"No-Referrer\">" RM,
     1},
    {"referrer blanks", "<meta name=referrer content=\" no-referrer\t\">",
     "<meta name=referrer content=\" no-referrer\t\">" RM, 1},
    {"referrer never", "<meta name=referrer content=\"never\">", "<meta name=referrer content=\"never\">" RM, 1},
    {"referrer list last", "<meta name=referrer content=\"origin, no-referrer\">",
     "<meta name=referrer content=\"origin, no-referrer\">" RM, 1},
    {"referrer list other", "<meta name=referrer content=\"no-referrer, origin\">",
     "<meta name=referrer content=\"no-referrer, origin\">", 0},
    {"referrer refs", "<meta name=\"&#114;eferrer\" content=\"no&#x2d;referrer\">",
     "<meta name=\"&#114;eferrer\" content=\"no&#x2d;referrer\">" RM, 1},
    {"referrer same-origin", "<meta name=referrer content=same-origin>", "<meta name=referrer content=same-origin>", 0},
    {"referrer strict-origin", "<meta name=referrer content=strict-origin>",
     "<meta name=referrer content=strict-origin>", 0},
    {"referrer default", "<meta name=referrer content=default>", "<meta name=referrer content=default>", 0},
    {"referrer empty", "<meta name=referrer content>", "<meta name=referrer content>", 0},
    {"referrer no content", "<meta name=referrer>", "<meta name=referrer>", 0},
    {"referrer other name", "<meta name=referer content=no-referrer>", "<meta name=referer content=no-referrer>", 0},
    {"referrer name blanks", "<meta name=\" referrer\" content=no-referrer>",
     "<meta name=\" referrer\" content=no-referrer>", 0},
    {"referrer http-equiv", "<meta http-equiv=Referrer-Policy content=no-referrer>",
     "<meta http-equiv=Referrer-Policy content=no-referrer>", 0},
    {"referrer first name wins", "<meta name=description name=referrer content=no-referrer>",
     "<meta name=description name=referrer content=no-referrer>", 0},
    {"referrer first content wins", "<meta name=referrer content=origin content=no-referrer>",
     "<meta name=referrer content=origin content=no-referrer>", 0},
    {"referrer end tag", "</meta name=referrer content=no-referrer>", "</meta name=referrer content=no-referrer>", 0},
    {"referrer metadata", "<metadata name=referrer content=no-referrer>",
     "<metadata name=referrer content=no-referrer>", 0},
    {"referrer after head", "<head></head><body><p>" NRM, "<head>" MT "</head><body><p>" NRM RM, 2},
    {"referrer two", "<head>" NRM "<meta name=referrer content=origin>" NRM,
     "<head>" MT NRM RM "<meta name=referrer content=origin>" NRM RM, 3},
    {"referrer in comment", "<!--" NRM "-->", "<!--" NRM "-->", 0},
    {"referrer in script", "<script>'" NRM "'</script>", "<script>'" NRM "'</script>", 0},
    {"referrer in title", "<title>" NRM "</title>" NRM, "<title>" NRM "</title>" NRM RM, 1},
    {"referrer in svg", "<svg>" NRM "</svg>", "<svg>" NRM RM "</svg>", 1},
    {"referrer in template", "<template>" NRM "</template>", "<template>" NRM RM "</template>", 1},
    /* inside a form whose bytes are held: at its place, once it is let out */
    {"referrer held form", PF "<input name=a>" NRM "<input name=b>" CL,
     PF IN "<input name=a>" NRM RM "<input name=b>" CL, 2},
    {"referrer held form twice", PF NRM "<i>" NRM "<b>" CL, PF IN NRM "<i>" NRM RM "<b>" CL, 2},
    {"referrer held form no token", PF NRM "<button formmethod=get>" CL, PF NRM RM "<button formmethod=get>" CL, 1},
    {"referrer held form unclosed", PF NRM "<input>", PF NRM RM "<input>", 1},
    {"referrer held form with head", PF NRM "<head>" NRM CL, PF IN NRM "<head>" MT NRM RM CL, 3},
    {"referrer held form head first", PF "<head>" NRM CL, PF IN "<head>" MT NRM RM CL, 3},
    {"referrer get form", "<form>" NRM CL, "<form>" NRM RM CL, 1},
    {"referrer after form", PF CL NRM, PF IN CL NRM RM, 2},
    /* a form held no longer (a noscript button ruled its token out) whose
     * bytes wait for the next tag that settles it: every meta after the
     * rule raised at its own place, however the stream was cut (the end
     * of a chunk lets such a form go) */
    {"referrer after a noscript button", PF "<noscript><button formaction=//e/>x</button></noscript>" NRM "<i>" NRM CL,
     PF "<noscript><button formaction=//e/>x</button></noscript>" NRM RM "<i>" NRM RM CL, 2},
};

static void test_referrer(void **state)
{
	(void)state;
	options = CSRF_INJECT_OPT_RAISE_REFERRER;
	for (size_t i = 0; i < sizeof referrer_rows / sizeof referrer_rows[0]; i++) {
		const row *r = &referrer_rows[i];
		check_doc(r->name, r->in, strlen(r->in), r->want, strlen(r->want), r->count);
	}
	/* off (the default): every meta passes alone */
	options = 0;
	check_doc("referrer off", "<head>" NRM, strlen("<head>" NRM), "<head>" MT NRM, strlen("<head>" MT NRM), 1);
}

/* csrf_inject_options: known bits only, before the stream is fed; they
 * last through finish and reset. */
static void test_options(void **state)
{
	(void)state;
	char *mem;
	sink s;
	unsigned count;
	csrf_inject *inj = new_injector(&mem);
	assert_int_equal(csrf_inject_options(NULL, 0), CSRF_ERR_ARG);
	assert_int_equal(csrf_inject_options(inj, 0x2), CSRF_ERR_ARG);
	assert_int_equal(csrf_inject_options(inj, ~0u), CSRF_ERR_ARG);
	assert_int_equal(csrf_inject_options(inj, CSRF_INJECT_OPT_RAISE_REFERRER), CSRF_OK);
	for (int round = 0; round < 2; round++) {
		sink_init(&s, mem);
		assert_int_equal(csrf_inject_feed(inj, NRM, strlen(NRM), sink_emit, &s), CSRF_OK);
		assert_int_equal(csrf_inject_options(inj, 0), CSRF_ERR_ARG); /* fed */
		assert_int_equal(csrf_inject_finish(inj, sink_emit, &s, &count), CSRF_OK);
		assert_int_equal(count, 1);
		assert_int_equal(s.len, strlen(NRM RM));
		assert_memory_equal(s.out, NRM RM, s.len);
		sink_free(&s);
	}
	/* between streams they may change */
	assert_int_equal(csrf_inject_options(inj, 0), CSRF_OK);
	sink_init(&s, mem);
	assert_int_equal(csrf_inject_feed(inj, NRM, strlen(NRM), sink_emit, &s), CSRF_OK);
	assert_int_equal(csrf_inject_reset(inj, &count), CSRF_OK);
	assert_int_equal(count, 0);
	assert_int_equal(s.len, strlen(NRM));
	sink_free(&s);
	tu_guard_free(mem);
}

/* Builds "<form method=post action=\"" pre + fill x n + post "\">". */
static char *long_action(const char *pre, size_t n, const char *post, size_t *len)
{
	const char *a = "<form method=post action=\"", *z = "\">";
	size_t l = strlen(a) + strlen(pre) + n + strlen(post) + strlen(z);
	char *s = malloc(l + strlen(CL) + 1);
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
		char *want = malloc(len + strlen(IN CL) + 1);
		assert_non_null(want);
		memcpy(want, in, len);
		const char *close = cases[i].inject ? IN CL : CL;
		memcpy(want + len, close, strlen(close));
		size_t wl = len + strlen(close);
		memcpy(in + len, CL, strlen(CL)); /* long_action left room */
		len += strlen(CL);
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
	/* the longest field name and token the injector takes, and one more */
	char f64[65], f65[66], t144[CSRF_TOKEN_LEN + 1], t145[CSRF_TOKEN_LEN + 2];
	memset(f64, 'f', 64), f64[64] = 0;
	memset(f65, 'f', 65), f65[65] = 0;
	memset(t144, 'T', CSRF_TOKEN_LEN), t144[CSRF_TOKEN_LEN] = 0;
	memset(t145, 'T', CSRF_TOKEN_LEN + 1), t145[CSRF_TOKEN_LEN + 1] = 0;
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
	assert_int_equal(csrf_inject_finish(NULL, sink_emit, &s, &n), CSRF_ERR_ARG);
	assert_int_equal(csrf_inject_finish(inj, NULL, &s, &n), CSRF_ERR_ARG);
	assert_int_equal(csrf_inject_finish(inj, sink_emit, &s, NULL), CSRF_ERR_ARG);
	assert_int_equal(csrf_inject_finish(inj, sink_emit, &s, &n), CSRF_OK);
	assert_int_equal(n, 0);
	assert_int_equal(s.calls, 0);
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
	/* the form's bytes are held until its end tag: "<!-- " not yet out */
	expect_output("held", "whole", 0, &s, "<head>" MT EB PF, strlen("<head>" MT EB PF), "<head>" EB PF,
	              strlen("<head>" EB PF));
	unsigned n;
	assert_int_equal(csrf_inject_finish(inj, sink_emit, &s, &n), CSRF_OK);
	assert_int_equal(n, 1); /* the meta tags; the form never ended */
	assert_int_equal(csrf_inject_status(inj), CSRF_INJECT_UNCLOSED);
	/* finish let them go, without the field */
	expect_output("finish", "whole", 0, &s, "<head>" MT EB PF "<!-- ", strlen("<head>" MT EB PF "<!-- "), a,
	              strlen(a));
	sink_free(&s);
	s.mem = mem;
	s.mem_len = csrf_inject_size();
	const char *b = "<head><form method=post action=x></form>";
	s.chunk = b;
	s.chunk_len = strlen(b);
	assert_int_equal(csrf_inject_feed(inj, b, strlen(b), sink_emit, &s), CSRF_OK);
	assert_int_equal(csrf_inject_finish(inj, sink_emit, &s, &n), CSRF_OK);
	assert_int_equal(n, 2);
	const char *want = "<head>" MT "<form method=post action=x>" IN CL;
	expect_output("after finish", "whole", 0, &s, want, strlen(want), b, strlen(b));
	sink_free(&s);
	/* reset abandons a stream: what it holds is dropped, nothing emitted */
	sink_init(&s, mem);
	const char *c = PF "abc";
	s.chunk = c;
	s.chunk_len = strlen(c);
	assert_int_equal(csrf_inject_feed(inj, c, strlen(c), sink_emit, &s), CSRF_OK);
	assert_int_equal(csrf_inject_reset(inj, &n), CSRF_OK);
	assert_int_equal(n, 0);
	assert_int_equal(s.len, strlen(PF));
	assert_memory_equal(s.out, PF, strlen(PF));
	s.chunk = b;
	s.chunk_len = strlen(b);
	assert_int_equal(csrf_inject_feed(inj, b, strlen(b), sink_emit, &s), CSRF_OK);
	assert_int_equal(csrf_inject_finish(inj, sink_emit, &s, &n), CSRF_OK);
	assert_int_equal(n, 2);
	sink_free(&s);
	tu_guard_free(mem);
}

/* A non-zero emit stops the feed at once, and the broken stream stays
 * stopped: no later piece is emitted. */
static void test_emit_stops(void **state)
{
	(void)state;
	const char *doc = "<head>a" PF "b" PF "</form>c";
	/* five pieces: "<head>", MT, "a<form ...>", the field (once the end
	 * tag's name is read), "b<form ...></form>c" (the second form is
	 * nested and gets nothing) */
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
		assert_int_equal(csrf_inject_finish(inj, sink_emit, &s, &n), CSRF_ERR_STOPPED);
		assert_int_equal(s.calls, stop_at);
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
		int dl = snprintf(doc, sizeof doc, "<form method=post action=\"%s\"></form>", cases[i].action);
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
		assert_int_equal(csrf_inject_finish(inj, sink_emit, &s, &n), CSRF_OK);
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
	    {"<head>" PF "</form>" RF CL, 0},
	    {EF RF RF, CSRF_INJECT_NESTED_FORM},
	    {RF, CSRF_INJECT_UNCLOSED},
	    {RF "</form", CSRF_INJECT_UNCLOSED},                        /* the end tag's name may go on */
	    {RF "<svg>" CL, CSRF_INJECT_FOREIGN | CSRF_INJECT_STOPPED}, /* no "unclosed" after a stop */
	    {"<svg><foreignObject><div>" RF, CSRF_INJECT_FOREIGN | CSRF_INJECT_STOPPED},
	    {"<svg></p>", CSRF_INJECT_FOREIGN | CSRF_INJECT_STOPPED},
	    {"<template>" RF "</template>", CSRF_INJECT_TEMPLATE},
	    {"<select><style>", CSRF_INJECT_SELECT | CSRF_INJECT_STOPPED},
	    {"<noscript><form></noscript>", CSRF_INJECT_NOSCRIPT | CSRF_INJECT_STOPPED},
	    {"<base href=\"https://evil.example/\">" RF, CSRF_INJECT_BASE},
	    {RF CL "<base href=\"https://evil.example/\">", CSRF_INJECT_LATE_BASE},
	    {RF "<base href=\"https://evil.example/\">" CL, CSRF_INJECT_BASE}, /* before the form's end */
	    {PF "<base href=\"https://evil.example/\">" CL, 0},                /* no action: the document's URL */
	    {RF "<button formaction=\"//evil.example/\">" CL, CSRF_INJECT_FORMACTION},
	    {RF "<button formmethod=get>" CL, CSRF_INJECT_GET_BUTTON},
	    {RF "<input type=image formmethod=x>" CL, CSRF_INJECT_GET_BUTTON},
	    {"<form id=f method=post></form><button form=f formmethod=get>", CSRF_INJECT_LATE_OWNER},
	    /* a stop after it: such a button may follow unread */
	    {"<form id=f method=post></form><svg></p>",
	     CSRF_INJECT_LATE_OWNER | CSRF_INJECT_LATE_BUTTON | CSRF_INJECT_FOREIGN | CSRF_INJECT_STOPPED},
	    {RF CL "<svg></p>",
	     CSRF_INJECT_LATE_BASE | CSRF_INJECT_LATE_BUTTON | CSRF_INJECT_FOREIGN | CSRF_INJECT_STOPPED},
	    {PF CL "<svg></p>", CSRF_INJECT_LATE_BUTTON | CSRF_INJECT_FOREIGN | CSRF_INJECT_STOPPED},
	    {"<form id=f method=post></form><button form=f formaction=//evil.example/>", CSRF_INJECT_LATE_OWNER},
	    {RF CL "<button form=f formmethod=get>", 0}, /* the form has no id: nothing can name it */
	    {"<button form=f formmethod=get><form id=f method=post></form>", CSRF_INJECT_FORM_OWNER},
	    {"<form id=f method=post><button form=f formmethod=get></form>", CSRF_INJECT_FORM_OWNER},
	    {"a\x1b" RF, CSRF_INJECT_ESCAPE | CSRF_INJECT_STOPPED},
	    {EF RF "</form><template>" RF, CSRF_INJECT_NESTED_FORM | CSRF_INJECT_TEMPLATE},
	    {RF CL "<FRAMESET rows=*>",
	     CSRF_INJECT_FRAMESET | CSRF_INJECT_STOPPED | CSRF_INJECT_LATE_BASE | CSRF_INJECT_LATE_BUTTON},
	    /* without scripting the noscript's frameset is taken */
	    {"<noscript><frameset></noscript>" RF CL, CSRF_INJECT_NOSCRIPT | CSRF_INJECT_STOPPED},
	    /* the <title> is ignored there ("in column group"): the button is read */
	    {"<form id=f method=post action=/f></form><template><col><title></template>"
	     "<button form=f formaction=\"https://evil.example/\">",
	     CSRF_INJECT_LATE_OWNER},
	    {"<template><col><title></template><button form=f formaction=//evil.example/><form id=f method=post>" CL,
	     CSRF_INJECT_FORM_OWNER},
	    {"<template><col>" RF CL "</template>", 0}, /* no form there: ignored */
	    {"<template><tr>" RF CL "</template>", CSRF_INJECT_TEMPLATE},
	    {"<table><colgroup><template x-for=\"c in cols\"><col :class=\"c\"></template></colgroup></table>" RF CL,
	     0},
	    /* "in body" in Chromium, "in column group" in Firefox: stopped */
	    {"<template><title></title><col>" RF CL, CSRF_INJECT_TEMPLATE | CSRF_INJECT_STOPPED},
	    {RF CL "<template><bgsound><col>",
	     CSRF_INJECT_TEMPLATE | CSRF_INJECT_STOPPED | CSRF_INJECT_LATE_BASE | CSRF_INJECT_LATE_BUTTON},
	    /* a button outside any form, after a form got the token: an
	     * element left open in that form would make it the form's */
	    {RF "<div></form><button formmethod=get>", CSRF_INJECT_LATE_BUTTON},
	    {RF "<div></form><input type=submit formaction=//evil.example/>", CSRF_INJECT_LATE_BUTTON},
	    {RF "</form><button formmethod=post>", 0},
	    /* inside a later form: the adoption agency may move it out of it */
	    {RF CL PF "<button formmethod=get>" CL, CSRF_INJECT_GET_BUTTON | CSRF_INJECT_LATE_BUTTON},
	    {"<form method=get></form>" RF "<button formmethod=get>" CL, CSRF_INJECT_GET_BUTTON},
	    {"<button formmethod=get>" RF CL, 0},                   /* before it: not its */
	    {"<form method=get></form><button formmethod=get>", 0}, /* no token anywhere */
	    {RF "<noscript><input type=submit formmethod=get></noscript>" CL, CSRF_INJECT_NOSCRIPT_BUTTON},
	    {RF CL "<noscript><input type=submit formmethod=get></noscript>", CSRF_INJECT_LATE_BUTTON},
	    {RF CL PF "<noscript><input type=submit formmethod=get></noscript>" CL,
	     CSRF_INJECT_NOSCRIPT_BUTTON | CSRF_INJECT_LATE_BUTTON},
	    {"<form id=f method=post></form><noscript><button form=f formaction=x></noscript>", CSRF_INJECT_LATE_OWNER},
	    /* a form start tag a table holds outside a cell is popped at once */
	    {"<table>" RF CL, CSRF_INJECT_TABLE_FORM},
	    {"<table><tr>" RF CL "</table>", CSRF_INJECT_TABLE_FORM},
	    {"<table><tr><td>" RF CL, 0},
	    {"<table><caption>" RF CL, 0},
	    {RF "<table><tr><td>" CL, 0},
	    {"<table><form method=get>" CL, 0},
	    {"<table>" EF CL, 0},
	    {"<table><tr><td><select><table>", CSRF_INJECT_SELECT | CSRF_INJECT_STOPPED},
	    {"<noscript><table></noscript>", CSRF_INJECT_NOSCRIPT | CSRF_INJECT_STOPPED},
	    {"<table><tr><td><base href=/app/></td>" EB "</table>" RF CL, CSRF_INJECT_BASE},
	    /* a relative formaction after a form got the token, then a base
	     * elsewhere (html5lib oracle, seed 101, page 20985, reduced): the
	     * form without an action ends with a <div> open in it, the button
	     * after it goes into that div and is the form's, and the base
	     * sends it to the other origin */
	    {PF "<div></form><button formaction=\"/t\">x</button>" EB, CSRF_INJECT_LATE_BASE},
	    {PF "<div></form><input type=image formaction=t>" EB, CSRF_INJECT_LATE_BASE},
	    {PF "<table><tr><td></form><button formaction=/t>" EB, CSRF_INJECT_LATE_BASE},
	    {PF "<div></form><button formaction=/t><base href=/app/>", 0}, /* a base of this origin */
	    {PF "<div></form><button type=button formaction=/t>" EB, 0},   /* not a submitter */
	    {"<button formaction=/t>" PF CL EB, 0},                        /* before the token: not its */
	    /* one with form="" may name a form with an id, before or after it */
	    {"<form id=f method=post></form><button form=f formaction=/t>" EB, CSRF_INJECT_LATE_BASE},
	    {"<button form=f formaction=/t><form id=f method=post></form>" EB, CSRF_INJECT_LATE_BASE},
	    {"<button form=f formaction=/t>" EB "<form id=f method=post></form>", CSRF_INJECT_FORM_OWNER},
	    {"<form id=f method=post><button form=f formaction=/t>" EB CL, CSRF_INJECT_BASE},
	    {"<button form=f formaction=/t>" PF CL EB, 0}, /* the form has no id */
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
			/* an unclosed form is known at the end only */
			unsigned so_far = cases[i].want & ~CSRF_INJECT_UNCLOSED;
			if (csrf_inject_status(inj) != so_far)
				fail_msg("status of case %zu split at %zu: %#x, want %#x", i, at,
				         csrf_inject_status(inj), so_far);
			unsigned n;
			assert_int_equal(csrf_inject_finish(inj, sink_emit, &s, &n), CSRF_OK);
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
	size_t all = 0; /* an adapter's line with every phrase */
	for (unsigned bit = 1; bit <= CSRF_INJECT_DEEP; bit <<= 1) {
		assert_string_not_equal(csrf_inject_status_str(bit), "unknown injector status");
		all += strlen(csrf_inject_status_str(bit)) + 2;
	}
	assert_true(all < CSRF_INJECT_STATUS_TEXT_MAX);
	assert_string_equal(csrf_inject_status_str(0), "unknown injector status");
	assert_string_equal(csrf_inject_status_str(CSRF_INJECT_DEEP << 1), "unknown injector status");
}

/* A form longer than the hold gets no token, whatever the cuts; one that
 * fits just does. The bytes pass unchanged either way. */
static void test_long_form(void **state)
{
	(void)state;
	/* the form's bytes from the end of its start tag through "</form" */
	const size_t sizes[] = {CSRF_INJECT_HOLD_MAX, CSRF_INJECT_HOLD_MAX + 1, 3 * CSRF_INJECT_HOLD_MAX};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		size_t body = sizes[i] - strlen("</form"), len = strlen(PF) + body + strlen(CL);
		char *in = malloc(len + 1), *want = malloc(len + strlen(IN) + 1);
		assert_non_null(in);
		assert_non_null(want);
		memcpy(in, PF, strlen(PF));
		for (size_t k = 0; k < body; k++)
			in[strlen(PF) + k] = k < body - body % 8 ? "<p>x</p>"[k % 8] : 'x';
		memcpy(in + strlen(PF) + body, CL, strlen(CL));
		int fits = sizes[i] <= CSRF_INJECT_HOLD_MAX;
		memcpy(want, PF, strlen(PF));
		size_t wl = strlen(PF);
		if (fits) {
			memcpy(want + wl, IN, strlen(IN));
			wl += strlen(IN);
		}
		memcpy(want + wl, in + strlen(PF), len - strlen(PF));
		wl += len - strlen(PF);
		const size_t cuts_a[] = {1000, 20000, 40000, 70000}, cuts_b[] = {len - 3};
		for (int mode = 0; mode < 4; mode++) {
			sink s;
			unsigned count;
			size_t at[4], n = 0;
			if (mode == 1)
				for (size_t k = 0; k < 4; k++)
					if (cuts_a[k] < len)
						at[n++] = cuts_a[k];
			if (mode == 2)
				at[n++] = cuts_b[0];
			if (mode == 3)
				for (size_t k = 4096; k < len && n < 4; k += 8192)
					at[n++] = k;
			run(in, len, at, n, &s, &count);
			expect_output("long form", "cuts", (size_t)mode, &s, want, wl, in, len);
			assert_int_equal(count, (unsigned)fits);
			sink_free(&s);
			char *mem;
			csrf_inject *inj = new_injector(&mem);
			sink_init(&s, mem);
			size_t from = 0;
			for (size_t k = 0; k <= n; k++) {
				size_t to = k < n ? at[k] : len;
				s.chunk = in + from;
				s.chunk_len = to - from;
				assert_int_equal(csrf_inject_feed(inj, in + from, to - from, sink_emit, &s), CSRF_OK);
				from = to;
			}
			assert_int_equal(csrf_inject_finish(inj, sink_emit, &s, &count), CSRF_OK);
			assert_int_equal(csrf_inject_status(inj), fits ? 0 : CSRF_INJECT_LONG_FORM);
			sink_free(&s);
			tu_guard_free(mem);
		}
		free(in);
		free(want);
	}
	/* plaintext: the rest is text, the form's end tag cannot come */
	char *mem;
	csrf_inject *inj = new_injector(&mem);
	sink s;
	sink_init(&s, mem);
	const char *pt = PF "<plaintext></form>";
	s.chunk = pt;
	s.chunk_len = strlen(pt);
	assert_int_equal(csrf_inject_feed(inj, pt, strlen(pt), sink_emit, &s), CSRF_OK);
	assert_int_equal(csrf_inject_status(inj), CSRF_INJECT_UNCLOSED);
	expect_output("plaintext", "whole", 0, &s, pt, strlen(pt), pt, strlen(pt)); /* nothing held */
	sink_free(&s);
	tu_guard_free(mem);
}

/* The status of in[0..len) fed in the chunks the cuts at[0..n) make. */
static unsigned status_of(const char *in, size_t len, const size_t *at, size_t n)
{
	char *mem;
	csrf_inject *inj = new_injector(&mem);
	sink s;
	sink_init(&s, mem);
	size_t from = 0;
	for (size_t k = 0; k <= n; k++) {
		size_t to = k < n ? at[k] : len;
		s.chunk = in + from;
		s.chunk_len = to - from;
		assert_int_equal(csrf_inject_feed(inj, in + from, to - from, sink_emit, &s), CSRF_OK);
		from = to;
	}
	unsigned count;
	s.chunk = NULL;
	s.chunk_len = 0;
	assert_int_equal(csrf_inject_finish(inj, sink_emit, &s, &count), CSRF_OK);
	unsigned status = csrf_inject_status(inj);
	sink_free(&s);
	tu_guard_free(mem);
	return status;
}

/* The status of in cut once at each byte from `from` on (up to 96 of
 * them), and at all those bytes at once, is whole's. */
static void expect_status_cuts(const char *in, size_t len, size_t from, unsigned whole, const char *what)
{
	size_t at[96], n = 0;
	for (size_t k = from; k < len && n < 96; k++)
		at[n++] = k;
	for (size_t k = 0; k < n; k++) {
		unsigned st = status_of(in, len, &at[k], 1);
		if (st != whole)
			fail_msg("%s, cut at %zu: %#x, whole %#x", what, at[k], st, whole);
	}
	unsigned bytes = status_of(in, len, at, n);
	if (bytes != whole)
		fail_msg("%s, in pieces: %#x, whole %#x", what, bytes, whole);
}

/* A held form that something other than its end tag settles (a submitter
 * that sends it by GET, <plaintext>, a stop) near the hold's limit: too
 * long or not is judged by its bytes up to there, so the status is the
 * same however the stream is cut (before, fed whole it said GET_BUTTON or
 * UNCLOSED, fed in pieces LONG_FORM). */
static void test_long_form_stops(void **state)
{
	(void)state;
	static const char *const tails[] = {"<button formmethod=get>",
	                                    "<plaintext>",
	                                    "<svg></p>",
	                                    "<noscript><button formmethod=get></noscript>",
	                                    "\x1b",
	                                    "<select><table>"};
	for (size_t t = 0; t < sizeof tails / sizeof tails[0]; t++) {
		size_t tl = strlen(tails[t]);
		const size_t fills[] = {CSRF_INJECT_HOLD_MAX - 64,     CSRF_INJECT_HOLD_MAX - tl,
		                        CSRF_INJECT_HOLD_MAX - tl + 1, CSRF_INJECT_HOLD_MAX - tl + 2,
		                        CSRF_INJECT_HOLD_MAX - 1,      CSRF_INJECT_HOLD_MAX,
		                        CSRF_INJECT_HOLD_MAX + 1,      CSRF_INJECT_HOLD_MAX + 64};
		for (size_t f = 0; f < sizeof fills / sizeof fills[0]; f++) {
			size_t fill = fills[f], pl = strlen(PF), len = pl + fill + tl + strlen(CL);
			char *in = malloc(len);
			assert_non_null(in);
			memcpy(in, PF, pl);
			memset(in + pl, 'x', fill);
			memcpy(in + pl + fill, tails[t], tl);
			memcpy(in + pl + fill + tl, CL, strlen(CL));
			unsigned whole = status_of(in, len, NULL, 0);
			if (fill < CSRF_INJECT_HOLD_MAX - tl && (whole & CSRF_INJECT_LONG_FORM))
				fail_msg("tail %zu, fill %zu: too long already", t, fill);
			if (fill > CSRF_INJECT_HOLD_MAX && !(whole & CSRF_INJECT_LONG_FORM))
				fail_msg("tail %zu, fill %zu: not too long (%#x)", t, fill, whole);
			/* every cut around the limit and inside the tail, one at a time and all at once */
			char what[48];
			snprintf(what, sizeof what, "tail %zu, fill %zu", t, fill);
			expect_status_cuts(in, len, pl + fill - 8, whole, what);
			size_t pages[8], np = 0;
			for (size_t k = 4096; k < len && np < 8; k += 4096)
				pages[np++] = k;
			unsigned paged = status_of(in, len, pages, np);
			if (paged != whole)
				fail_msg("tail %zu, fill %zu, in pages: %#x, whole %#x", t, fill, paged, whole);
			free(in);
		}
	}
}

/* The attributes before_attr_step reads from the masks of 64 bytes at
 * once (attrs_masked: name="value" one after another): the form policy's
 * answer is the same wherever the tag lies against the blocks, the
 * window and the chunk's ends, for repeated attributes (the first wins),
 * character references and NUL in names and values, a '>' or the other
 * quote in a value, names longer than any the policy reads, values
 * longer than the 64 bytes, formaction, formmethod and form="" owners. */
static void test_attr_masks(void **state)
{
	(void)state;
	static const struct {
		const char *form, *rest;
		size_t form_len; /* 0: strlen */
		unsigned count;
	} cases[] = {
	    {"<form method=\"post\" action=\"/p\">",
	     "<input name=\"a\" value=\"b\"><button formaction=\"https://evil.example/x\">go</button></form>", 0, 0},
	    {"<form method=\"post\" action=\"/p\">", "<button formmethod=\"get\">go</button></form>", 0, 0},
	    {"<form method=\"post\" action=\"/p\">",
	     "<input name=\"a\" value=\"b\"><button formmethod=\"post\" formaction=\"/q\">go</button></form>", 0, 1},
	    {"<form method=\"get\" method=\"post\" action=\"/p\">", "</form>", 0, 0},
	    {"<form method=\"post\" method=\"get\" action=\"/p\">", "</form>", 0, 1},
	    {"<form method=\"p&#111;st\" action='/p'>", "</form>", 0, 1},
	    {"<form method=\"p&#111;st\" action='/p'>", "<button formmethod='g&#101;t'>go</button></form>", 0, 0},
	    {"<form method=\"po\0st\" action=\"/p\">", "</form>", 33, 0},
	    {"<form me\0thod=\"get\" method=\"post\">", "</form>", 34, 1},
	    /* the NUL is U+FFFD to a browser: a relative URL, not one whose
	     * leading control byte a URL parser strips (16 bytes or less: the
	     * value's clean test of one vector register) */
	    {"<form method=\"post\" action=\"\0https://e.x/\">", "</form>", 43, 1},
	    {"<form id=\"f\" method=\"post\">",
	     "<button form=\"f\" formaction=\"https://evil.example/\">x</button></form>", 0, 0},
	    {"<FORM METHOD=\"POST\" ACTION=\"/p\">", "<BUTTON FORMMETHOD=\"GET\">go</BUTTON></FORM>", 0, 0},
	    {"<form action=\"/p>\" method='post\"' method=\"post\">", "</form>", 0, 0},
	    {"<form method=\"post>\" method=\"post\">", "</form>", 0, 0},
	    {"<form action=\"/p>\" method='post'>", "<button type=\"submit\" formaction='/q\">'>go</button></form>", 0,
	     1},
	    {"<form action=\"/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\" "
	     "method=\"post\">",
	     "</form>", 0, 1},
	    {"<form title=\"tttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttt\" method=\"get\" "
	     "method=\"post\">",
	     "</form>", 0, 0},
	    {"<form data-method=\"get\" method=\"post\">", "<button data-formmethod=\"get\">go</button></form>", 0, 1},
	    {"<form method=\"post\">", "<input type=\"submit\" formmethod=\"get\"></form>", 0, 0},
	    {"<form method=\"post\">", "<input formmethod=\"get\" x=\"y\"></form>", 0, 1},
	};
	char filler[2100];
	for (size_t f = 0; f < sizeof filler; f++) /* short tags, so that no run of text moves the window on */
		filler[f] = "<i>xy</i>"[f % 9];
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		size_t fl = cases[c].form_len ? cases[c].form_len : strlen(cases[c].form), rl = strlen(cases[c].rest);
		/* prefixes: "<p>" and 0..66 bytes of text (the tag at every place
		 * of a block), and filler tags of 1,980 to 2,070 bytes (the
		 * window's end) */
		for (size_t v = 0; v < 67 + 31; v++) {
			char pre[2200];
			size_t pl;
			if (v < 67) {
				memcpy(pre, "<p>", 3);
				memset(pre + 3, 'x', v);
				pl = 3 + v;
			} else {
				pl = 1980 + 3 * (v - 67);
				pl -= pl % 9; /* whole filler tags */
				memcpy(pre, filler, pl);
				memset(pre + pl, 'x', v % 9);
				pl += v % 9;
			}
			size_t len = pl + fl + rl, wl = len + (cases[c].count ? strlen(IN) : 0);
			char *in = malloc(len), *want = malloc(wl);
			assert_non_null(in);
			assert_non_null(want);
			memcpy(in, pre, pl);
			memcpy(in + pl, cases[c].form, fl);
			memcpy(in + pl + fl, cases[c].rest, rl);
			memcpy(want, in, pl + fl);
			size_t w = pl + fl;
			if (cases[c].count) {
				memcpy(want + w, IN, strlen(IN));
				w += strlen(IN);
			}
			memcpy(want + w, cases[c].rest, rl);
			/* whole; at a few places (both quotes of a value, or none,
			 * in a block; the window's end) cut once at every byte of
			 * the form start tag and at the eight around it */
			int cuts = v == 0 || v == 1 || v == 13 || v == 50 || v == 62 || v == 66 || v == 70 || v == 83 ||
			           v == 97;
			for (size_t at = pl - 4; at <= (cuts ? pl + fl + 4 : pl - 4); at++) {
				sink s;
				unsigned count;
				int whole = at == pl - 4;
				run(in, len, whole ? NULL : &at, whole ? 0 : 1, &s, &count);
				char name[64];
				snprintf(name, sizeof name, "case %zu, prefix %zu", c, pl);
				expect_output(name, whole ? "whole" : "cut", at, &s, want, wl, in, len);
				if (count != cases[c].count)
					fail_msg("%s (cut %zu): %u inserted, want %u", name, at, count, cases[c].count);
				sink_free(&s);
			}
			free(in);
			free(want);
		}
	}
}

/* Quiet tags (a plain submitter, a form end tag inside a template) near
 * the hold's limit take no hold check of their own (tag_end): the form
 * is judged too long or not by its bytes up to what settles it next (a
 * button that sends by GET; after the template's end tag, its own end
 * tag), so the status is the same however the stream is cut, and the
 * form gets no token once its bytes pass the hold. */
static void test_long_form_quiet(void **state)
{
	(void)state;
	static const char *const heads[] = {PF, PF "<template>"};
	static const char *const quiet[] = {"<button>", "</form>"};
	/* what judges the form next, at its last '>' (after the template's
	 * end tag, which settles nothing, the form's own end tag) */
	static const char *const settle[] = {"<button formmethod=get>", "</template></form>"};
	for (size_t t = 0; t < 2; t++) {
		size_t pl = strlen(heads[t]), hl = pl - strlen(PF), ql = strlen(quiet[t]), sl = strlen(settle[t]);
		size_t cl = t == 0 ? strlen(CL) : 0;
		/* the form's bytes before the settling tag's '>': the hold + d */
		for (int d = -2; d <= 2; d++) {
			size_t fill = (size_t)((long)CSRF_INJECT_HOLD_MAX - (long)(hl + ql + sl - 1) + d);
			size_t len = pl + fill + ql + sl + cl;
			char *in = malloc(len);
			assert_non_null(in);
			memcpy(in, heads[t], pl);
			memset(in + pl, 'x', fill);
			memcpy(in + pl + fill, quiet[t], ql);
			memcpy(in + pl + fill + ql, settle[t], sl);
			memcpy(in + pl + fill + ql + sl, CL, cl); /* cl: 0 or the length of CL */
			unsigned whole = status_of(in, len, NULL, 0);
			if ((d > 0) != ((whole & CSRF_INJECT_LONG_FORM) != 0))
				fail_msg("head %zu, d %d: %#x", t, d, whole);
			char what[48];
			snprintf(what, sizeof what, "head %zu, d %d", t, d);
			expect_status_cuts(in, len, pl + fill - 4, whole, what);
			free(in);
		}
	}
}

/* times copies of piece at in + *n. */
static void put_times(char *in, size_t *n, const char *piece, size_t times)
{
	for (size_t k = 0; k < times; k++, *n += strlen(piece))
		memcpy(in + *n, piece, strlen(piece));
}

/* A page of nested elements: whole and cut at at0 and near its end, the
 * same status; one token and no status when ok, else none and stop. */
static void expect_deep(const char *in, size_t n, size_t at0, int ok, unsigned stop)
{
	unsigned count;
	sink s;
	run(in, n, NULL, 0, &s, &count);
	sink_free(&s);
	unsigned status = status_of(in, n, NULL, 0);
	size_t at[] = {at0, n - 4};
	assert_int_equal(status_of(in, n, at, 2), status);
	assert_int_equal(count, ok ? 1 : 0);
	assert_int_equal(status, ok ? 0 : stop);
}

/* Tables nested through cells: 32 are followed, and a form in the
 * innermost cell keeps its token; one more stops the injector (fail
 * closed: no token from there on, and the status says why). */
static void test_deep_tables(void **state)
{
	(void)state;
	static const char open[] = "<table><tr><td>";
	for (size_t depth = 31; depth <= 33; depth++) {
		char in[33 * sizeof open + 64];
		size_t n = 0;
		put_times(in, &n, open, depth);
		put_times(in, &n, PF CL, 1);
		expect_deep(in, n, n / 2, depth <= 32, CSRF_INJECT_TABLE_FORM | CSRF_INJECT_STOPPED);
	}
}

/* Template contents 64 levels deep have their mode followed: a <col>
 * first at the 64th is "in column group" (the <title> after it ignored,
 * the form after the templates gets its token), and after a 65th level
 * closes the 64th's mode is back; the model does not follow a 65th
 * level's: a <col> there stops it. */
static void test_deep_templates(void **state)
{
	(void)state;
	static const char open[] = "<template>", close[] = "</template>", inner[] = "<col><template></template><title>";
	for (size_t depth = 63; depth <= 65; depth++) {
		char in[65 * (sizeof open + sizeof close) + sizeof inner + 64];
		size_t n = 0;
		put_times(in, &n, open, depth);
		put_times(in, &n, inner, 1);
		put_times(in, &n, close, depth);
		put_times(in, &n, RF CL, 1);
		expect_deep(in, n, depth * strlen(open) + 3, depth <= 64, CSRF_INJECT_TEMPLATE | CSRF_INJECT_STOPPED);
	}
}

/* ---- the tree depth cap (docs/architecture.md) ---- */

/* A form read where S + 2T + 3 (S start tags so far, its own too; T
 * <table> start tags) reaches 480 may be put beside its parent by the
 * browser, its field then owned by its nearest ancestor form. The
 * attacker's ghost: a GET form to another origin whose </form> leaves it
 * an ancestor. */
#define GHOST "<form method=get action=//evil.example/steal><div></form>"
#define SEND_ATTRS " method=post action=/send>"
#define SEND_BODY "<input name=msg><button>Send</button></form>"
/* the field of a form that names its own id */
#define OWN_IN(id) "<input type=\"hidden\" name=\"" F "\" value=\"" T "\" form=\"" id "\">"

/* pre, then piece k times, then post, into a malloc'd string. */
static char *deep_doc(const char *pre, const char *piece, size_t k, const char *post)
{
	size_t n = strlen(pre) + k * strlen(piece) + strlen(post), at = 0;
	char *d = malloc(n + 1);
	assert_non_null(d);
	put_times(d, &at, pre, 1);
	put_times(d, &at, piece, k);
	put_times(d, &at, post, 1);
	d[at] = '\0';
	return d;
}

/* in and want built alike, checked whole, byte by byte, at every split
 * and prefix (check_doc), and its status whole and cut. */
static void check_deep(const char *name, const char *pre, const char *piece, size_t k, const char *post,
                       const char *want_pre, const char *want_post, unsigned count, unsigned status)
{
	char *in = deep_doc(pre, piece, k, post), *want = deep_doc(want_pre, piece, k, want_post);
	check_doc(name, in, strlen(in), want, strlen(want), count);
	size_t n = strlen(in), at[] = {strlen(pre) + 2, n - strlen(post) + 3, n - 5};
	if (status_of(in, n, NULL, 0) != status || status_of(in, n, at, 3) != status)
		fail_msg("%s: status %#x, want %#x", name, status_of(in, n, NULL, 0), status);
	free(in);
	free(want);
}

static void test_depth_guard(void **state)
{
	(void)state;
	/* 475 <i> and the form: S + 3 = 479, today's output; 476: 480, the
	 * injector's id after "<form" and form="" on the field */
	check_deep("bound 479", "", "<i>", 475, PF "x" CL, "", PF IN "x" CL, 1, 0);
	check_deep("bound 480", "", "<i>", 476, PF "x" CL, "", "<form" PIN_ID " method=post>" PIN_IN "x" CL, 2, 0);
	/* the attack page: the token no longer goes to evil.example */
	check_deep("ghost and 510 <i>", GHOST, "<i>", 510, "<form" SEND_ATTRS SEND_BODY, GHOST,
	           "<form" PIN_ID SEND_ATTRS PIN_IN SEND_BODY, 2, 0);
	/* an id of its own: after a ghost, the field names it
	 * (test_depth_own_id) */
	check_deep("own id, ghost, deep", GHOST, "<i>", 510, "<form id=send" SEND_ATTRS SEND_BODY, GHOST,
	           "<form id=send" SEND_ATTRS OWN_IN("send") SEND_BODY, 1, 0);
	check_deep("own id, deep, no ghost", "", "<i>", 510, "<form id=send" SEND_ATTRS SEND_BODY, "",
	           "<form id=send" SEND_ATTRS IN SEND_BODY, 1, 0);
	check_deep("own id, ghost, not deep", GHOST, "<i>", 100, "<form id=send" SEND_ATTRS SEND_BODY, GHOST,
	           "<form id=send" SEND_ATTRS IN SEND_BODY, 1, 0);
	check_deep("empty id, ghost, deep", GHOST, "<i>", 510, "<form id" SEND_ATTRS SEND_BODY, GHOST,
	           "<form id" SEND_ATTRS SEND_BODY, 0, CSRF_INJECT_DEEP);
	/* a token form's </form> leaves no ghost */
	check_deep("own id after a token form", PF CL, "<i>", 510, "<form id=send" SEND_ATTRS SEND_BODY, PF IN CL,
	           "<form id=send" SEND_ATTRS IN SEND_BODY, 2, 0);
	/* T: a table adds up to two implied elements; 159 tables (start
	 * tags) and the form reach 3 * 159 + 4 = 481, 158 only 478 */
	check_deep("158 tables", "", "<table></table>", 158, PF CL, "", PF IN CL, 1, 0);
	check_deep("159 tables", "", "<table></table>", 159, PF CL, "", "<form" PIN_ID " method=post>" PIN_IN CL, 2, 0);
	check_deep("159 <i>", "", "<i>", 159, PF CL, "", PF IN CL, 1, 0);
	/* what follows the name: the id goes in well-formed */
	check_deep("slash after the name", "", "<i>", 476, "<form/method=post>" CL, "",
	           "<form" PIN_ID "/method=post>" PIN_IN CL, 2, 0);
	check_deep("self-closing", "", "<i>", 476, "<FORM\nMETHOD=\"POST\"/>" CL, "",
	           "<FORM" PIN_ID "\nMETHOD=\"POST\"/>" PIN_IN CL, 2, 0);
	check_deep("no attributes: GET", "", "<i>", 476, "<form>" CL, "", "<form>" CL, 0, 0);
	check_deep("GET after the name", "", "<i>", 476, "<form method=get>" CL, "", "<form method=get>" CL, 0, 0);
	check_deep("GET button", "", "<i>", 476, PF "<button formmethod=get>" CL, "", PF "<button formmethod=get>" CL,
	           0, CSRF_INJECT_GET_BUTTON);
	/* start tags in noscript count: a browser without scripting (DOMParser) builds them */
	check_deep("noscript content", "<noscript>", "<i>", 475, "</noscript>" PF CL, "<noscript>",
	           "</noscript><form" PIN_ID " method=post>" PIN_IN CL, 2, 0);
	/* a nested form is dropped (the pointer is set): nothing held, no id */
	check_deep("nested", PF, "<i>", 476, PF CL, PF IN, PF CL, 1, CSRF_INJECT_NESTED_FORM);

	/* the ids: random for every form and every run, the field names its own */
	char *in = deep_doc("", "<i>", 476, PF CL "<form action=/b method=post>" CL);
	sink a, b;
	unsigned count;
	run(in, strlen(in), NULL, 0, &a, &count);
	assert_int_equal(count, 4);
	run(in, strlen(in), NULL, 0, &b, &count);
	assert_int_equal(a.n_ids, 2);
	assert_int_equal(a.n_named, 2);
	assert_memory_equal(a.ids[0], a.named[0], 16);
	assert_memory_equal(a.ids[1], a.named[1], 16);
	assert_memory_not_equal(a.ids[0], a.ids[1], 16);
	assert_memory_not_equal(a.ids[0], b.ids[0], 16);
	assert_memory_not_equal(a.ids[1], b.ids[1], 16);
	sink_free(&a);
	sink_free(&b);
	free(in);

	/* a deep form whose start tag overflows the hold (its bytes from the
	 * name on): no token, however the stream is cut */
	size_t big = CSRF_INJECT_HOLD_MAX + 10;
	char *attr = malloc(big + 1);
	assert_non_null(attr);
	memset(attr, 'a', big);
	attr[big] = '\0';
	char *pre = deep_doc("", "<i>", 476, "<form method=post data-x=\"");
	char *doc = deep_doc(pre, attr, 1, "\">x" CL);
	size_t n = strlen(doc), at1 = strlen(pre) - 10, at2 = n - 10;
	assert_int_equal(status_of(doc, n, NULL, 0), CSRF_INJECT_LONG_FORM);
	assert_int_equal(status_of(doc, n, &at1, 1), CSRF_INJECT_LONG_FORM);
	size_t cuts[] = {at1, at1 + 4096, at1 + 8192, at2};
	assert_int_equal(status_of(doc, n, cuts, 4), CSRF_INJECT_LONG_FORM);
	sink o;
	run(doc, n, cuts, 4, &o, &count);
	assert_int_equal(count, 0);
	expect_output("deep long start tag", "cuts", 0, &o, doc, n, doc, n);
	sink_free(&o);
	free(doc);
	/* one that fits gets its id */
	attr[CSRF_INJECT_HOLD_MAX - 40] = '\0';
	doc = deep_doc(pre, attr, 1, "\">x" CL);
	n = strlen(doc);
	run(doc, n, cuts, 2, &o, &count);
	assert_int_equal(count, 2);
	assert_int_equal(o.status, 0);
	sink_free(&o);
	free(doc);
	/* an ESC byte inside a deep form's start tag: the rest as it is */
	doc = deep_doc("", "<i>", 476, "<form method=post \x1b>x" CL);
	n = strlen(doc);
	run(doc, n, NULL, 0, &o, &count);
	assert_int_equal(count, 0);
	expect_output("deep ESC", "whole", 0, &o, doc, n, doc, n);
	sink_free(&o);
	free(doc);
	free(pre);
	free(attr);
}

/* A deep form with an id of its own after a ghost: its field names that
 * id (form="" follows the first element in tree order with it), when it
 * is simple (1 to 64 bytes of [A-Za-z0-9_.:-]), no earlier form start
 * tag had it (nor an id that is not simple, nor were there 32 before),
 * and no table is open (foster parenting could put an element after it
 * before it); else no token and CSRF_INJECT_DEEP. The page of the
 * review: a GET search form left open by <div></form>, a WordPress-like
 * comment form 520 elements deep. */
#define SEARCH_GHOST "<form method=get action=/search><div></form>"
#define COMMENT_ATTRS " method=post action=/wp-comments-post.php>"
#define COMMENT_BODY "<textarea name=comment></textarea><button>Post</button></form>"

static void test_depth_own_id(void **state)
{
	(void)state;
	const char *form = "<form id=commentform" COMMENT_ATTRS COMMENT_BODY;
	check_deep("review page", SEARCH_GHOST, "<i>", 520, form, SEARCH_GHOST,
	           "<form id=commentform" COMMENT_ATTRS OWN_IN("commentform") COMMENT_BODY, 1, 0);
	check_deep("ID= upper case", SEARCH_GHOST, "<i>", 520, "<form ID='commentform'" COMMENT_ATTRS COMMENT_BODY,
	           SEARCH_GHOST, "<form ID='commentform'" COMMENT_ATTRS OWN_IN("commentform") COMMENT_BODY, 1, 0);
	check_deep("first id wins", SEARCH_GHOST, "<i>", 520, "<form id=a.b:c-d_9 id=x" COMMENT_ATTRS COMMENT_BODY,
	           SEARCH_GHOST, "<form id=a.b:c-d_9 id=x" COMMENT_ATTRS OWN_IN("a.b:c-d_9") COMMENT_BODY, 1, 0);
	/* an earlier form with that id: form="" would name it */
	check_deep("earlier form, same id", "<form id=commentform method=get action=/search><div></form>", "<i>", 520,
	           form, "<form id=commentform method=get action=/search><div></form>", form, 0, CSRF_INJECT_DEEP);
	check_deep("earlier dropped form, same id", "<form method=get action=/search><div><form id=commentform></form>",
	           "<i>", 520, form, "<form method=get action=/search><div><form id=commentform></form>", form, 0,
	           CSRF_INJECT_DEEP);
	check_deep("earlier template form, same id", SEARCH_GHOST "<template><form id=commentform></template>", "<i>",
	           520, form, SEARCH_GHOST "<template><form id=commentform></template>", form, 0, CSRF_INJECT_DEEP);
	check_deep("earlier form, other case", "<form id=CommentForm method=get action=/search><div></form>", "<i>",
	           520, form, "<form id=CommentForm method=get action=/search><div></form>",
	           "<form id=commentform" COMMENT_ATTRS OWN_IN("commentform") COMMENT_BODY, 1, 0);
	/* an earlier form whose id is not simple: every later one fails */
	check_deep("earlier id not simple", "<form id=\"a&amp;b\" method=get action=/search><div></form>", "<i>", 520,
	           form, "<form id=\"a&amp;b\" method=get action=/search><div></form>", form, 0, CSRF_INJECT_DEEP);
	/* the site's id not simple, or too long */
	const char *amp = "<form id=\"comment&amp;form\"" COMMENT_ATTRS COMMENT_BODY;
	check_deep("own id not simple", SEARCH_GHOST, "<i>", 520, amp, SEARCH_GHOST, amp, 0, CSRF_INJECT_DEEP);
	const char *sp = "<form id=\"comment form\"" COMMENT_ATTRS COMMENT_BODY;
	check_deep("own id with a blank", SEARCH_GHOST, "<i>", 520, sp, SEARCH_GHOST, sp, 0, CSRF_INJECT_DEEP);
	const char *hi = "<form id=\"comment\xc3\xa9\"" COMMENT_ATTRS COMMENT_BODY;
	check_deep("own id not ASCII", SEARCH_GHOST, "<i>", 520, hi, SEARCH_GHOST, hi, 0, CSRF_INJECT_DEEP);
#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	check_deep("64-byte id", SEARCH_GHOST, "<i>", 520, "<form id=" ID64 COMMENT_ATTRS COMMENT_BODY, SEARCH_GHOST,
	           "<form id=" ID64 COMMENT_ATTRS OWN_IN(ID64) COMMENT_BODY, 1, 0);
	const char *long_id = "<form id=\"" ID64 "x\"" COMMENT_ATTRS COMMENT_BODY;
	check_deep("65-byte id", SEARCH_GHOST, "<i>", 520, long_id, SEARCH_GHOST, long_id, 0, CSRF_INJECT_DEEP);
#undef ID64
	/* in a table cell: content after it could be foster-parented before it */
	const char *cell = "<table><tr><td><form id=commentform" COMMENT_ATTRS COMMENT_BODY "</td></tr></table>";
	check_deep("in a table cell", SEARCH_GHOST, "<i>", 520, cell, SEARCH_GHOST, cell, 0, CSRF_INJECT_DEEP);
	/* no ghost: as before, no form="" */
	check_deep("no ghost", "", "<i>", 520, form, "", "<form id=commentform" COMMENT_ATTRS IN COMMENT_BODY, 1, 0);

	/* 31 earlier forms with ids: the 32nd is kept, and pinned; after
	 * 32, the 33rd is not (fail closed) */
	for (size_t before = 31; before <= 32; before++) {
		char pre[32 * 40 + sizeof SEARCH_GHOST], *p = pre;
		for (size_t k = 0; k < before; k++)
			p += snprintf(p, 40, "<form id=f%zu></form>", k);
		memcpy(p, SEARCH_GHOST, sizeof SEARCH_GHOST);
		int ok = before == 31;
		check_deep(ok ? "31 ids before" : "32 ids before", pre, "<i>", 520, form, pre,
		           ok ? "<form id=commentform" COMMENT_ATTRS OWN_IN("commentform") COMMENT_BODY : form,
		           (unsigned)ok, ok ? 0 : CSRF_INJECT_DEEP);
	}
}

/* No randomness, no pinned token: with getrandom failing (a seccomp
 * filter in a child, which drops the pad block it inherited), a deep
 * form without an id goes without the token, its bytes as they are, and
 * CSRF_INJECT_DEEP says so; a form below the guard needs no id and gets
 * its token. */
static int plain_run(const char *in, char *out, size_t cap, size_t *n, unsigned *count, unsigned *status)
{
	static char mem[CSRF_INJECT_STATE_MAX];
	csrf_inject *inj;
	sink s;
	if (csrf_inject_init(mem, sizeof mem, SELF, strlen(SELF), F, strlen(F), T, strlen(T), &inj) != CSRF_OK)
		return 1;
	sink_init(&s, mem);
	s.chunk = in;
	s.chunk_len = strlen(in);
	if (csrf_inject_feed(inj, in, strlen(in), sink_emit, &s) != CSRF_OK ||
	    csrf_inject_finish(inj, sink_emit, &s, count) != CSRF_OK || s.len > cap)
		return 1;
	*status = csrf_inject_status(inj);
	memcpy(out, s.out, s.len);
	*n = s.len;
	sink_free(&s);
	return 0;
}

/* The forked child's end: what it inherited freed first, so that
 * valgrind (which follows the fork) reports no leak and keeps the code. */
static _Noreturn void child_end(char *doc, int code)
{
	free(doc);
	_exit(code);
}

static void test_deep_without_random(void **state)
{
	(void)state;
	char *deep = deep_doc("", "<i>", 476, PF "x" CL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		static char out[4096];
		size_t n;
		unsigned count, status;
		uint8_t probe[8];
		if (tu_no_getrandom() != 0 || csrf_random(probe, sizeof probe) != CSRF_ERR_RANDOM)
			child_end(deep, 9);
		if (plain_run(deep, out, sizeof out, &n, &count, &status) != 0)
			child_end(deep, 2);
		if (count != 0 || status != CSRF_INJECT_DEEP || n != strlen(deep) || memcmp(out, deep, n) != 0)
			child_end(deep, 3);
		if (plain_run(PF "x" CL, out, sizeof out, &n, &count, &status) != 0 || count != 1 || status != 0)
			child_end(deep, 4);
		child_end(deep, 0);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	free(deep);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 9)
		skip(); /* no working seccomp filter here */
	assert_int_equal(WEXITSTATUS(st), 0);
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

/* run() with one cut, in the memory of an injector abandoned in the
 * middle of a held form inside noscript in a table in svg. */
static void run_reused(const char *in, size_t len, size_t cut, sink *s, unsigned *count)
{
	static const char *const leftover = "<svg><foreignObject><table><tr><td><noscript>" RF "<input name=x value=";
	char *mem;
	csrf_inject *inj = new_injector(&mem);
	sink_init(s, mem);
	s->chunk = leftover;
	s->chunk_len = strlen(leftover);
	assert_int_equal(csrf_inject_feed(inj, leftover, strlen(leftover), sink_emit, s), CSRF_OK);
	sink_free(s);
	assert_int_equal(
	    csrf_inject_init(mem, csrf_inject_size(), SELF, strlen(SELF), F, strlen(F), T, strlen(T), &inj), CSRF_OK);
	assert_int_equal(csrf_inject_status(inj), 0);
	if (options)
		assert_int_equal(csrf_inject_options(inj, options), CSRF_OK);
	sink_init(s, mem);
	s->chunk = in;
	s->chunk_len = cut;
	assert_int_equal(csrf_inject_feed(inj, in, cut, sink_emit, s), CSRF_OK);
	s->chunk = in + cut;
	s->chunk_len = len - cut;
	assert_int_equal(csrf_inject_feed(inj, in + cut, len - cut, sink_emit, s), CSRF_OK);
	s->chunk = NULL;
	s->chunk_len = 0;
	assert_int_equal(csrf_inject_finish(inj, sink_emit, s, count), CSRF_OK);
	s->status = csrf_inject_status(inj);
	tu_guard_free(mem);
}

/* The memory an injector is given is not cleared by init beyond what is
 * read before it is written: pages that go through every part of the
 * state (a held form, the meta tags in the hold, the referrer raise,
 * noscript, tables, svg, template, raw text, a stop) give the same
 * output, count and status in zeroed memory, in 0xff, in dirty bytes,
 * and in the memory of an injector abandoned in the middle of a held
 * form inside noscript in a table in svg, re-initialised. */
static void test_init_memory(void **state)
{
	(void)state;
	static const char *const pages[] = {
	    "<!doctype html><html><head><meta name=referrer content=no-referrer><title>" PF "</title></head><body>" RF
	    "<input name=a><button>Go</button></form>",
	    RF "<head><meta name=referrer content=no-referrer>" CL "<p>after",
	    "<table><tr><td>" RF "<noscript><b></noscript><svg><desc><form></form></desc></svg>" CL "</table>",
	    "<template>" RF CL "</template><select><option>" PF "</select>" RF "<textarea>" CL "</textarea>" CL,
	    RF "<div></form><button formaction=/t>" EB RF CL "<script>" PF "</script>",
	    "<form id=f method=post><button form=f formmethod=get></form><base href=/app/>" RF CL "\x1b" PF CL,
	    RF "<button formmethod=get>" CL PF "<input type=image formaction=\"//evil.example/\">" CL RF,
	};
	const int fills[] = {0x00, 0xff, DIRTY};
	unsigned saved = options;
	for (unsigned o = 0; o < 2; o++) {
		options = o ? CSRF_INJECT_OPT_RAISE_REFERRER : 0;
		for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) {
			size_t len = strlen(pages[i]), cut = len / 2;
			sink want, got;
			unsigned cw, c;
			init_fill = 0;
			run(pages[i], len, &cut, 1, &want, &cw);
			unsigned sw = want.status;
			for (size_t f = 0; f < sizeof fills / sizeof fills[0] + 1; f++) {
				if (f < sizeof fills / sizeof fills[0]) {
					init_fill = fills[f];
					run(pages[i], len, &cut, 1, &got, &c);
				} else { /* an abandoned stream's memory */
					run_reused(pages[i], len, cut, &got, &c);
				}
				if (c != cw || got.status != sw)
					fail_msg("page %zu, memory %zu, options %u: count %u status %#x, want %u %#x",
					         i, f, o, c, got.status, cw, sw);
				expect_output("init memory", "split", i, &got, want.out, want.len, pages[i], len);
				sink_free(&got);
			}
			sink_free(&want);
		}
	}
	init_fill = DIRTY;
	options = saved;
}

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
			int is_in = (whole.ins_n[k] == strlen(IN) && memcmp(p, IN, strlen(IN)) == 0) ||
			            (whole.ins_n[k] == strlen(PIN_ID) && memcmp(p, PIN_ID, strlen(PIN_ID)) == 0) ||
			            (whole.ins_n[k] == strlen(PIN_IN) && memcmp(p, PIN_IN, strlen(PIN_IN)) == 0);
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
	const char *mem;
	int bad;
	size_t ids; /* the injector's ids: every POST form deep in the page */
} big_sink;

static int big_emit(void *ud, const char *p, size_t n, int inserted)
{
	big_sink *b = ud;
	b->out_len += n;
	if (inserted) {
		size_t at;
		int pin = pin_piece(p, n, &at);
		if ((n != strlen(IN) || memcmp(p, IN, n) != 0) && pin != 2) {
			if (pin != 1)
				b->bad = 1;
			b->ids++;
			return 0;
		}
		b->inserted++;
		return 0;
	}
	/* the chunk's bytes, or a form's the injector held */
	if (((p < b->chunk || p + n > b->chunk + b->chunk_len) &&
	     (p < b->mem || p + n > b->mem + CSRF_INJECT_STATE_MAX)) ||
	    b->pos + n > b->in_len || memcmp(p, b->in + b->pos, n) != 0)
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
	big_sink b = {doc, len, 0, 0, 0, NULL, 0, mem, 0, 0};
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
	b.chunk = NULL;
	b.chunk_len = 0;
	assert_int_equal(csrf_inject_finish(inj, big_emit, &b, &count), CSRF_OK);
	assert_int_equal(b.pos, len);
	/* past the depth bound's guard (the first blocks: 9 start tags each)
	 * the form gets the injector's id and its field names it */
	assert_true(b.ids > nblocks - 60 && b.ids < nblocks);
	assert_int_equal(count, nblocks + b.ids);
	assert_int_equal(b.inserted, nblocks);
	assert_int_equal(b.out_len, len + nblocks * strlen(IN) + b.ids * (PIN_LEN + PINNED_LEN - strlen(IN)));
	tu_guard_free(mem);
	free(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_referrer),
	    cmocka_unit_test(test_options),
	    cmocka_unit_test(test_long_actions),
	    cmocka_unit_test(test_long_blank_action),
	    cmocka_unit_test(test_init_args),
	    cmocka_unit_test(test_feed_args),
	    cmocka_unit_test(test_finish_resets),
	    cmocka_unit_test(test_emit_stops),
	    cmocka_unit_test(test_port_origin),
	    cmocka_unit_test(test_status),
	    cmocka_unit_test(test_long_form_stops),
	    cmocka_unit_test(test_long_form_quiet),
	    cmocka_unit_test(test_deep_tables),
	    cmocka_unit_test(test_deep_templates),
	    cmocka_unit_test(test_depth_guard),
	    cmocka_unit_test(test_depth_own_id),
	    cmocka_unit_test(test_deep_without_random),
	    cmocka_unit_test(test_attr_masks),
	    cmocka_unit_test(test_long_form),
	    cmocka_unit_test(test_stopped_passes),
	    cmocka_unit_test(test_init_memory),
	    cmocka_unit_test(test_random_docs),
	    cmocka_unit_test(test_ten_megabytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
