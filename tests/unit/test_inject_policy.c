/* SPDX-License-Identifier: BSD-2-Clause */
/* test_inject_policy.c - the injector's form policy (src/inject_policy.c):
 * tag names, attribute slots, character references decoded as a browser
 * decodes them in an attribute, and the verdicts on forms, bases and
 * buttons; every value also judged from a buffer flush against a guard
 * page, and cut at every length. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject_shared.h"
#include "testutil.h"

#define SELF "https://self.example"

static csrf_origin self_origin(void)
{
	csrf_origin o;
	assert_int_equal(csrf_origin_parse(SELF, strlen(SELF), &o), CSRF_OK);
	return o;
}

static void test_tag_ids(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		uint8_t id;
	} rows[] = {
	    {"form", T_FORM},
	    {"base", T_BASE},
	    {"svg", T_SVG},
	    {"math", T_MATH},
	    {"template", T_TEMPLATE},
	    {"noscript", T_NOSCRIPT},
	    {"plaintext", T_PLAINTEXT},
	    {"foreignobject", T_FOREIGNOBJECT},
	    {"annotation-xml", T_ANNOTATION_XML},
	    {"malignmark", T_MALIGNMARK},
	    {"p", T_P},
	    {"br", T_BR},
	    {"table", T_TABLE}, /* a breakout tag too */
	    {"col", T_COL},     /* not void at an integration point: it closes a cell */
	    {"blockquote", T_BREAKOUT},
	    {"h6", T_BREAKOUT},
	    {"h7", T_OTHER},
	    {"a", T_OTHER},
	    {"forms", T_OTHER},
	    {"for", T_OTHER},
	    {"", T_OTHER},
	    {"foreignobjects", T_OTHER},
	    {"annotation-xm", T_OTHER},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		char *g = tu_guard_copy(rows[i].name, strlen(rows[i].name));
		if (inj_tag_id(g, strlen(rows[i].name)) != rows[i].id)
			fail_msg("tag id of \"%s\"", rows[i].name);
		tu_guard_free(g);
	}
}

/* The tokenizer keeps no name of a tag in HTML content whose first letter
 * is not in INJ_HTML_FIRST: every name inj_tag_id_html knows must start
 * with one, and no 2-, 3- or 4-letter name that starts with another
 * letter may be known (all of them tried). */
static void test_html_first(void **state)
{
	(void)state;
	static const char *const known[] = {
	    "script",    "style",  "textarea", "title",   "xmp",      "iframe", "noembed",  "noframes", "noscript",
	    "plaintext", "form",   "base",     "head",    "button",   "input",  "select",   "template", "svg",
	    "math",      "keygen", "table",    "caption", "colgroup", "col",    "tbody",    "thead",    "tfoot",
	    "tr",        "td",     "th",       "meta",    "frameset", "link",   "basefont", "bgsound"};
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
		size_t len = strlen(known[i]);
		if (inj_tag_id_html(known[i], len) == T_OTHER)
			fail_msg("\"%s\" is not known", known[i]);
		if (!((INJ_HTML_FIRST >> (known[i][0] - 'a')) & 1))
			fail_msg("\"%s\" starts with a letter not in INJ_HTML_FIRST", known[i]);
		/* the tokenizer skips a tag whose length and second letter are
		 * not in the table */
		if (!inj_html_maybe((unsigned char)known[i][0], (unsigned char)known[i][1], len))
			fail_msg("\"%s\": its second letter is not in inj_html_second", known[i]);
	}
	/* and no name of 2 to 4 letters outside the table is known */
	char m[4];
	for (long b = 0; b < 26L * 26 * 26 * 26; b++) {
		for (int j = 0, v = (int)b; j < 4; j++, v /= 26)
			m[j] = (char)('a' + v % 26);
		for (size_t len = 2; len <= 4; len++)
			if (!inj_html_maybe((unsigned char)m[0], (unsigned char)m[1], len) &&
			    inj_tag_id_html(m, len) != T_OTHER)
				fail_msg("\"%.*s\" is known, its second letter not in inj_html_second", (int)len, m);
	}
	char n[4];
	for (int a = 0; a < 26; a++) {
		if ((INJ_HTML_FIRST >> a) & 1)
			continue;
		n[0] = (char)('a' + a);
		for (int b = 0; b < 26 * 26 * 27; b++) {
			n[1] = (char)('a' + b % 26);
			n[2] = (char)('a' + b / 26 % 26);
			n[3] = (char)('a' + b / 676 % 27);
			size_t len = b / 676 == 26 ? 3 : 4;
			if (inj_tag_id_html(n, len) != T_OTHER || inj_tag_id_html(n, 2) != T_OTHER)
				fail_msg("\"%.*s\" is known but starts with a letter not in INJ_HTML_FIRST", (int)len,
				         n);
		}
	}
}

/* plain_fast's forms of two tests: inj_html_maybe16 answers as
 * inj_html_maybe for every letter, every second byte and every length up
 * to 15 (upper case too), and answers 1 wherever inj_html_maybe does at
 * any length (a longer name may only get a look more); INJ_NAME_END_BITS
 * holds C_NAME_END for every byte of the scanner's end mask (every byte up
 * to ' ', '/', '=', '>'), all of which are under 64. */
static void test_plain_fast_tests(void **state)
{
	(void)state;
	for (int f = 0; f < 52; f++) {
		unsigned char c = (unsigned char)(f < 26 ? 'a' + f : 'A' + f - 26);
		for (int s = 0; s < 256; s++)
			for (size_t len = 0; len < 300; len++) {
				int want = inj_html_maybe(c, (unsigned char)s, len);
				unsigned got = inj_html_maybe16(c, (unsigned char)s, len);
				if (len < 16 ? got != (unsigned)want : want && !got)
					fail_msg("inj_html_maybe16 '%c' 0x%02x %zu: %u, inj_html_maybe %d", c, s, len,
					         got, want);
			}
	}
	for (int x = 0; x < 256; x++) {
		if (!(x <= ' ' || x == '/' || x == '=' || x == '>'))
			continue;
		if (x >= 64)
			fail_msg("0x%02x of the end mask over 63", x);
		if ((int)((INJ_NAME_END_BITS >> x) & 1) != !!(inj_cls[x] & C_NAME_END))
			fail_msg("INJ_NAME_END_BITS 0x%02x", x);
	}
}

/* The HTML names inj_tag_id_html knows, with their ids: each is found
 * (read from a buffer flush against a guard page: its key reads no byte
 * past the name), and every other name near them is T_OTHER: each byte of
 * a known name changed to any other, each known name cut by one byte or
 * grown by one, and every name of two bytes. */
static const struct {
	const char *name;
	uint8_t id;
} html_known[] = {
    {"td", T_TD},
    {"th", T_TH},
    {"tr", T_TR},
    {"svg", T_SVG},
    {"xmp", T_XMP},
    {"col", T_COL},
    {"form", T_FORM},
    {"base", T_BASE},
    {"head", T_HEAD},
    {"math", T_MATH},
    {"meta", T_META},
    {"style", T_STYLE},
    {"title", T_TITLE},
    {"table", T_TABLE},
    {"tbody", T_TBODY},
    {"thead", T_THEAD},
    {"tfoot", T_TFOOT},
    {"input", T_INPUT},
    {"script", T_SCRIPT},
    {"select", T_SELECT},
    {"iframe", T_IFRAME},
    {"button", T_BUTTON},
    {"keygen", T_KEYGEN},
    {"noembed", T_NOEMBED},
    {"caption", T_CAPTION},
    {"colgroup", T_COLGROUP},
    {"textarea", T_TEXTAREA},
    {"template", T_TEMPLATE},
    {"noframes", T_NOFRAMES},
    {"frameset", T_FRAMESET},
    {"noscript", T_NOSCRIPT},
    {"plaintext", T_PLAINTEXT},
    {"link", T_LINK},
    {"basefont", T_BASEFONT},
    {"bgsound", T_BGSOUND},
};

static uint8_t html_ref(const char *n, size_t len)
{
	for (size_t k = 0; k < sizeof html_known / sizeof html_known[0]; k++)
		if (strlen(html_known[k].name) == len && memcmp(html_known[k].name, n, len) == 0)
			return html_known[k].id;
	return T_OTHER;
}

/* plain_tag looks an end tag's name up only when inj_html_maybe_end lets
 * it through: every name whose end tag is not plain in some state of the
 * model where plain_tag reads (HTML content outside select, not stopped,
 * any number of open tables) must be let through, in either case. */
static void test_html_end(void **state)
{
	(void)state;
	struct inj_tree t;
	for (size_t k = 0; k < sizeof html_known / sizeof html_known[0]; k++) {
		const char *name = html_known[k].name;
		size_t len = strlen(name);
		int matters = 0;
		for (unsigned tables = 0; tables < 4; tables++) {
			inj_tree_reset(&t);
			t.tables = (uint8_t)tables;
			matters |= !inj_tree_plain_id(&t, html_known[k].id, 1);
		}
		for (int upper = 0; upper < 4; upper++) {
			unsigned char a = (unsigned char)(name[0] & ~((upper & 1) ? 0x20 : 0));
			unsigned char b = (unsigned char)(name[1] & ~((upper & 2) ? 0x20 : 0));
			if (matters && !inj_html_maybe_end(a, b, len))
				fail_msg("</%s> may matter: not let through", name);
		}
	}
}

/* plain_tag and plain_named fold the name they look up with 0x20 set in
 * each byte (inject.c, fold9), which lowers the letters and makes no
 * other byte a lower-case letter: every name inj_tag_id_html_in knows
 * must be letters only, in its table's keys too. */
static void check_html_letters(void)
{
	for (size_t k = 0; k < sizeof html_known / sizeof html_known[0]; k++)
		for (const char *c = html_known[k].name; *c; c++)
			if (*c < 'a' || *c > 'z')
				fail_msg("\"%s\": not letters only", html_known[k].name);
	for (int h = 0; h < 64; h++) {
		const struct inj_html_name *e = &inj_html_names[h];
		for (int b = 0; e->len && b < (e->len < 4 ? 3 : 8); b++) {
			unsigned c = (unsigned)(e->key >> (8 * b)) & 0xff;
			if (c < 'a' || c > 'z')
				fail_msg("slot %d: byte %d of its key is %u", h, b, c);
		}
	}
	for (int c = 0; c < 256; c++) /* what fold9 relies on */
		if (((c | 0x20) >= 'a' && (c | 0x20) <= 'z') != ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
			fail_msg("byte %d", c);
}

static void test_html_ids(void **state)
{
	(void)state;
	char b[16];
	for (size_t k = 0; k < sizeof html_known / sizeof html_known[0]; k++) {
		const char *name = html_known[k].name;
		size_t len = strlen(name);
		char *g = tu_guard_copy(name, len);
		if (inj_tag_id_html(g, len) != html_known[k].id)
			fail_msg("\"%s\": not its id", name);
		tu_guard_free(g);
		for (size_t j = 0; j < len; j++) {
			for (int c = 0; c < 256; c++) {
				memcpy(b, name, len);
				b[j] = (char)c;
				if (inj_tag_id_html(b, len) != html_ref(b, len))
					fail_msg("\"%s\" with byte %zu as %d", name, j, c);
				if (html_ref(b, len) != T_OTHER &&
				    !inj_html_maybe((unsigned char)b[0], (unsigned char)b[1], len))
					fail_msg("\"%s\" with byte %zu as %d: not let through", name, j, c);
			}
		}
		for (int c = 0; c < 256; c++) {
			memcpy(b, name, len);
			b[len] = (char)c;
			if (inj_tag_id_html(b, len + 1) != html_ref(b, len + 1))
				fail_msg("\"%s\" and byte %d", name, c);
		}
		if (inj_tag_id_html(name, len - 1) != html_ref(name, len - 1))
			fail_msg("\"%s\" cut by one", name);
	}
	for (int c = 0; c < 256 * 256; c++) {
		b[0] = (char)(c & 255);
		b[1] = (char)(c >> 8);
		if (inj_tag_id_html(b, 2) != html_ref(b, 2))
			fail_msg("two bytes %d", c);
	}
	assert_int_equal(inj_tag_id_html("", 0), T_OTHER);
	assert_int_equal(inj_tag_id_html("t", 1), T_OTHER);
	check_html_letters();
}

/* What inj_tree_plain_id answered as a switch, before its bit masks: the
 * two must agree on every id in every state of the model it reads. */
static int plain_ref(const struct inj_tree *t, uint8_t id, int is_end)
{
	if (t->depth > 0 || t->select || t->stopped)
		return 0;
	if (t->tpl_fresh && !is_end) /* template contents whose first start tag picks their mode */
		return 0;
	if (id == T_OTHER)
		return 1;
	switch (id) {
	case T_FORM:
	case T_TEMPLATE:
	case T_SELECT:
		return 0;
	case T_TABLE:
		return is_end && t->tables == 0 && t->templates == 0;
	case T_CAPTION:
	case T_COLGROUP:
	case T_COL:
	case T_TBODY:
	case T_THEAD:
	case T_TFOOT:
	case T_TR:
	case T_TD:
	case T_TH: /* template contents: read (their first start tag picks their mode) */
		return t->tables == 0 && t->templates == 0;
	case T_BASE:
	case T_HEAD:
	case T_BUTTON:
	case T_INPUT:
	case T_SVG:
	case T_MATH:
	case T_FRAMESET:
		return is_end;
	default:
		return id > T_PLAINTEXT || is_end;
	}
}

static void test_plain_ids(void **state)
{
	(void)state;
	struct inj_tree t;
	for (unsigned bits = 0; bits < 256; bits++) {
		inj_tree_reset(&t);
		t.depth = bits & 1;
		t.select = (bits >> 1) & 1;
		t.stopped = (bits >> 2) & 1;
		t.tables = (uint8_t)((bits >> 3) & 3);
		t.templates = (uint8_t)((bits >> 5) & 3);
		t.tpl_fresh = (uint8_t)(t.templates && (bits >> 7));
		for (unsigned id = T_OTHER; id <= T_VOID; id++)
			for (int end = 0; end < 2; end++)
				if (inj_tree_plain_id(&t, (uint8_t)id, end) != plain_ref(&t, (uint8_t)id, end))
					fail_msg("id %u, end %d, state %u", id, end, bits);
	}
	/* the masks the tokenizer keeps a stream (plain_tag's reading: HTML
	 * content outside select, not stopped), against the switch */
	for (unsigned tables = 0; tables < 3; tables++) {
		inj_tree_reset(&t);
		t.tables = (uint8_t)tables;
		for (unsigned id = T_OTHER; id <= T_VOID; id++)
			for (int end = 0; end < 2; end++)
				if ((int)((inj_tree_plain_ids(end, tables != 0) >> id) & 1) !=
				    plain_ref(&t, (uint8_t)id, end))
					fail_msg("mask: id %u, end %d, %u tables", id, end, tables);
	}
}

static void test_decode(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		const char *want;
	} rows[] = {
	    {"", ""},
	    {"plain", "plain"},
	    {"index.php&#x3F;route&#x3D;&#x2F;preferences&#x2F;features", "index.php?route=/preferences/features"},
	    {"&#47;&#x2f;&#X2F;", "///"},
	    {"&#x2F", "/"}, /* no semicolon: still a reference */
	    {"&#x", "&#x"}, /* no digits: text */
	    {"&#;", "&#;"},
	    {"&#xZZ", "&#xZZ"},
	    {"&#0;", "\x80"},       /* U+FFFD */
	    {"&#x110000;", "\x80"}, /* out of range */
	    {"&#xD800;", "\x80"},   /* a surrogate */
	    {"&#x80;", "\x80"},     /* windows-1252's euro sign */
	    {"&#9;&#10;&#13;", "\t\n\r"},
	    {"&#00000000000000000000047;", "/"},
	    {"&amp;", "&"},
	    {"&amp", "&"},
	    {"&ampx", "&ampx"},   /* legacy reference followed by a letter: text */
	    {"&amp=1", "&amp=1"}, /* ... or by '=' */
	    {"&amp!", "&!"},
	    {"&AMP;&LT;&GT;&QUOT;", "&<>\""},
	    {"&lt;&gt;&quot;&apos;", "<>\"'"},
	    {"&sol;&bsol;&colon;&period;&commat;", "/\\:.@"},
	    {"&sol", "&sol"},     /* not legacy: needs its ';' */
	    {"&Sol;", "&Sol;"},   /* names are case-sensitive */
	    {"&solb;", "&solb;"}, /* another entity, not ASCII: left */
	    {"&Tab;&NewLine;", "\t\n"},
	    {"&fjlig;", "fj"},
	    {"&nvlt;", "<\x80"},
	    {"&copy;", "&copy;"}, /* not in the table: left, '&' and all */
	    {"&", "&"},
	    {"&&#x3F;", "&?"},
	    {"/submit?a=1&amp;b=2", "/submit?a=1&b=2"}, /* plain bytes, then a reference: moved back */
	    {"post&#x20;", "post "},
	    {"a\0b", "a\x80"
	             "b"},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		size_t n = strlen(rows[i].in);
		if (i == sizeof rows / sizeof rows[0] - 1)
			n = 3; /* the NUL row */
		char *g = tu_guard_copy(rows[i].in, n);
		size_t got = inj_decode_attr(g, n);
		if (got != strlen(rows[i].want) || memcmp(g, rows[i].want, got) != 0)
			fail_msg("decode row %zu", i);
		tu_guard_free(g);
		/* every prefix decodes without reading past it, never growing */
		for (size_t m = 0; m < n; m++) {
			char *p = tu_guard_copy(rows[i].in, m);
			assert_true(inj_decode_attr(p, m) <= m);
			tu_guard_free(p);
		}
	}
}

/* A tag with the given attribute values, as the tokenizer keeps them. */
static void make_tag(struct inj_tag *t, uint8_t id, const char *url, const char *shortv, const char *type)
{
	memset(t, 0, sizeof *t);
	t->id = id;
	if (url) {
		size_t n = strlen(url);
		if (n > INJ_URL_MAX) {
			n = INJ_URL_MAX;
			t->url_trunc = 1;
		}
		memcpy(t->url, url, n);
		t->url_len = (uint16_t)n;
		t->seen |= A_URL;
	}
	if (shortv) {
		size_t n = strlen(shortv);
		if (n > INJ_SHORT_MAX) {
			n = INJ_SHORT_MAX;
			t->short_over = 1;
		}
		memcpy(t->short_val, shortv, n);
		t->short_len = (uint8_t)n;
		t->seen |= A_SHORT;
	}
	if (type) {
		size_t n = strlen(type);
		memcpy(t->type_val, type, n);
		t->type_len = (uint8_t)n;
		t->seen |= A_TYPE;
	}
}

static void test_form(void **state)
{
	(void)state;
	csrf_origin self = self_origin();
	static const struct {
		const char *method, *action;
		int base;
		int want, relative;
	} rows[] = {
	    {"post", NULL, B_NONE, FP_POST_SELF, 0},
	    {"POST", "", B_OTHER, FP_POST_SELF, 0}, /* the document's URL */
	    {"post", "/x", B_NONE, FP_POST_SELF, 1},
	    {"post", "/x", B_SAME, FP_POST_SELF, 1},
	    {"post", "/x", B_OTHER, FP_POST_BASE, 1},
	    {"post", "https://self.example/x", B_OTHER, FP_POST_SELF, 0},
	    {"post", "https://evil.example/x", B_NONE, FP_OTHER, 0},
	    {"post", "index.php&#x3F;route&#x3D;&#x2F;x", B_NONE, FP_POST_SELF, 1},
	    {"post", "&#x2F;&#x2F;evil.example", B_NONE, FP_OTHER, 0},
	    /* scheme-relative: the document's scheme, then the authority */
	    {"post", "//self.example/x", B_NONE, FP_POST_SELF, 1},
	    {"post", "//SELF.example:443/x?y#z", B_SAME, FP_POST_SELF, 1},
	    {"post", "\\\\self.example\\x", B_NONE, FP_POST_SELF, 1},
	    {"post", "/\\self.example", B_NONE, FP_POST_SELF, 1},
	    {"post", " \t//self.exa\nmple/ ", B_NONE, FP_POST_SELF, 1},
	    {"post", "//self.example/x", B_OTHER, FP_POST_BASE, 1}, /* the base's scheme */
	    {"post", "//self.example:8443/x", B_NONE, FP_OTHER, 0},
	    {"post", "//self.example.evil.example/", B_NONE, FP_OTHER, 0},
	    {"post", "//user@self.example/", B_NONE, FP_OTHER, 0},
	    {"post", "//self.example&#x2e;evil.example/", B_NONE, FP_OTHER, 0},
	    {"post", "//self.example&copy;/", B_NONE, FP_OTHER, 0},
	    {"post", "//self.example&/", B_NONE, FP_OTHER, 0},
	    {"post", "//", B_NONE, FP_OTHER, 0},
	    {"post", "///self.example/", B_NONE, FP_OTHER, 0},
	    {"post", "//evil.example/", B_NONE, FP_OTHER, 0},
	    {"post", "https&#x3A;&#x2F;&#x2F;evil.example", B_NONE, FP_OTHER, 0},
	    {"post", "https://self.example&period;evil.example/", B_NONE, FP_OTHER, 0},
	    {"post", "https://self.example&copy;/", B_NONE, FP_OTHER, 0}, /* unknown reference in the host */
	    {"p&#111;st", "/", B_NONE, FP_POST_SELF, 1},
	    {"&#x70;&#x6f;&#x73;&#x74;", "/", B_NONE, FP_POST_SELF, 1},
	    {" post", "/", B_NONE, FP_GET_SELF, 1}, /* invalid: GET */
	    {"get", "/", B_NONE, FP_GET_SELF, 1},
	    {NULL, "/", B_NONE, FP_GET_SELF, 1},
	    {"get", "https://evil.example/", B_NONE, FP_OTHER, 0},
	    {"dialog", "/", B_NONE, FP_OTHER, 1},
	    {"DIALOG", NULL, B_NONE, FP_OTHER, 0},
	    {"post                                                 ", "/", B_NONE, FP_GET_SELF, 1}, /* over */
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct inj_tag t;
		make_tag(&t, T_FORM, rows[i].action, rows[i].method, NULL);
		int rel = -1;
		int v = inj_policy_form(&t, rows[i].base, &self, &rel);
		if (v != rows[i].want || rel != rows[i].relative)
			fail_msg("form row %zu: verdict %d relative %d, want %d %d", i, v, rel, rows[i].want,
			         rows[i].relative);
	}
}

static void test_base(void **state)
{
	(void)state;
	csrf_origin self = self_origin();
	static const struct {
		const char *href;
		int want;
	} rows[] = {
	    {NULL, B_NONE},
	    {"", B_SAME},
	    {"/app/", B_SAME},
	    {"&#x2F;app/", B_SAME},
	    {"https://self.example/app/", B_SAME},
	    {"https://evil.example/", B_OTHER},
	    {"//evil.example/", B_OTHER},
	    {"//self.example/app/", B_SAME},
	    {"//self.example:8443/", B_OTHER},
	    {"&#x2F;&#x2F;evil.example/", B_OTHER},
	    {"javascript:x", B_OTHER},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct inj_tag t;
		make_tag(&t, T_BASE, rows[i].href, NULL, NULL);
		if (inj_policy_base(&t, &self) != rows[i].want)
			fail_msg("base row %zu", i);
	}
}

static void test_button(void **state)
{
	(void)state;
	csrf_origin self = self_origin();
	static const struct {
		uint8_t id;
		const char *type, *formmethod, *formaction;
		int base, want;
	} rows[] = {
	    {T_BUTTON, NULL, NULL, NULL, B_NONE, BTN_PLAIN},
	    {T_BUTTON, NULL, "post", NULL, B_NONE, BTN_POST},
	    {T_BUTTON, "submit", "POST", NULL, B_NONE, BTN_POST},
	    {T_BUTTON, "bogus", "post", NULL, B_NONE, BTN_POST}, /* invalid type: submit */
	    {T_BUTTON, "button", "post", NULL, B_NONE, BTN_PLAIN},
	    {T_BUTTON, "RESET", "post", NULL, B_NONE, BTN_PLAIN},
	    {T_BUTTON, NULL, "post", "/x", B_NONE, BTN_POST | BTN_ACTION_SELF | BTN_ACTION_REL},
	    {T_BUTTON, NULL, "post", "/x", B_OTHER, BTN_POST | BTN_ACTION_OTHER | BTN_ACTION_REL},
	    {T_BUTTON, NULL, NULL, "https://evil.example/", B_NONE, BTN_ACTION_OTHER},
	    {T_BUTTON, NULL, NULL, "", B_OTHER, BTN_ACTION_SELF},
	    {T_INPUT, NULL, "post", NULL, B_NONE, BTN_PLAIN}, /* a text input */
	    {T_INPUT, "submit", "post", NULL, B_NONE, BTN_POST},
	    {T_INPUT, "image", "p&#x6f;st", NULL, B_NONE, BTN_POST},
	    {T_INPUT, "&#x73;ubmit", NULL, "//evil.example", B_NONE, BTN_ACTION_OTHER},
	    {T_INPUT, "hidden", NULL, "//evil.example", B_NONE, BTN_PLAIN},
	    /* formmethod: GET, and GET as the invalid value default; dialog sends nothing */
	    {T_BUTTON, NULL, "get", NULL, B_NONE, BTN_GET},
	    {T_BUTTON, NULL, "GeT", "/x", B_NONE, BTN_GET | BTN_ACTION_SELF | BTN_ACTION_REL},
	    {T_BUTTON, NULL, "", NULL, B_NONE, BTN_GET},
	    {T_BUTTON, NULL, " post", NULL, B_NONE, BTN_GET},
	    {T_BUTTON, NULL, "&#x67;et", NULL, B_NONE, BTN_GET},
	    {T_BUTTON, NULL, "dialog", NULL, B_NONE, BTN_PLAIN},
	    {T_BUTTON, "button", "get", NULL, B_NONE, BTN_PLAIN},
	    {T_INPUT, "submit", "get", NULL, B_NONE, BTN_GET},
	    {T_INPUT, "image", "x", NULL, B_NONE, BTN_GET},
	    {T_INPUT, "text", "get", NULL, B_NONE, BTN_PLAIN},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct inj_tag t;
		make_tag(&t, rows[i].id, rows[i].formaction, rows[i].formmethod, rows[i].type);
		int b = inj_policy_button(&t, rows[i].base, &self);
		if (b != rows[i].want)
			fail_msg("button row %zu: %d, want %d", i, b, rows[i].want);
	}
}

static void test_annotation(void **state)
{
	(void)state;
	static const struct {
		const char *encoding;
		int want;
	} rows[] = {
	    {NULL, 0},         {"text/html", 1},  {"TEXT/HTML", 1},      {"application/xhtml+xml", 1},
	    {"text/html ", 0}, {"text/plain", 0}, {"text&#x2F;html", 1}, {"", 0},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct inj_tag t;
		make_tag(&t, T_ANNOTATION_XML, NULL, rows[i].encoding, NULL);
		if (inj_policy_html_annotation(&t) != rows[i].want)
			fail_msg("annotation row %zu", i);
	}
}

/* Attributes: the slot of the first occurrence, nothing for a repeat. */
static void test_attr_slots(void **state)
{
	(void)state;
	static const struct {
		uint8_t id;
		const char *names; /* space-separated, in order */
		const char *want;  /* one digit per name: SLOT_* */
	} rows[] = {
	    {T_FORM, "method action action method formaction", "21000"},
	    {T_BASE, "href href target", "100"},
	    {T_BUTTON, "type formmethod formaction form formaction", "32100"},
	    {T_INPUT, "formaction type name", "130"},
	    {T_ANNOTATION_XML, "encoding encoding", "20"},
	    {T_OTHER, "href action method", "000"},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct inj_tag t;
		memset(&t, 0, sizeof t);
		t.id = rows[i].id;
		const char *p = rows[i].names;
		for (size_t k = 0; rows[i].want[k]; k++) {
			const char *e = strchr(p, ' ');
			size_t n = e ? (size_t)(e - p) : strlen(p);
			memcpy(t.attr, p, n);
			t.attr_len = (uint8_t)n;
			if (inj_attr_slot(&t) != (uint8_t)(rows[i].want[k] - '0'))
				fail_msg("slot row %zu, attribute %zu", i, k);
			p = e ? e + 1 : p + n;
		}
	}
	struct inj_tag t;
	memset(&t, 0, sizeof t);
	t.id = T_BUTTON;
	memcpy(t.attr, "form", 4);
	t.attr_len = 4;
	assert_int_equal(inj_attr_slot(&t), SLOT_NONE);
	assert_int_equal(t.has_form, 1);
	t.id = T_FONT;
	memcpy(t.attr, "size", 4);
	assert_int_equal(inj_attr_slot(&t), SLOT_NONE);
	assert_int_equal(t.font_attr, 1);
}

/* A long action: only an origin wholly inside the kept bytes counts. */
static void test_long_url(void **state)
{
	(void)state;
	csrf_origin self = self_origin();
	char *url = malloc(INJ_URL_MAX + 100);
	assert_non_null(url);
	memset(url, 'a', INJ_URL_MAX + 99);
	url[INJ_URL_MAX + 99] = 0;
	memcpy(url, "https://self.example/", 21);
	struct inj_tag t;
	int rel;
	make_tag(&t, T_FORM, url, "post", NULL);
	assert_int_equal(inj_policy_form(&t, B_NONE, &self, &rel), FP_POST_SELF);
	memcpy(url, "https://self.exampleX", 21); /* the host runs past the cut */
	make_tag(&t, T_FORM, url, "post", NULL);
	assert_int_equal(inj_policy_form(&t, B_NONE, &self, &rel), FP_OTHER);
	memcpy(url, "//self.example/aaaaaa", 21); /* scheme-relative, cut in its path */
	make_tag(&t, T_FORM, url, "post", NULL);
	assert_int_equal(inj_policy_form(&t, B_NONE, &self, &rel), FP_POST_SELF);
	memcpy(url, "//self.exampleaaaaaaa", 21); /* and in its host */
	make_tag(&t, T_FORM, url, "post", NULL);
	assert_int_equal(inj_policy_form(&t, B_NONE, &self, &rel), FP_OTHER);
	free(url);
}

/* The lengths the tokenizer reads an attribute name at (inj_attr_lens)
 * hold every name inj_attr_slot_of gives a slot or a flag, for every tag:
 * a name of another length is not looked at. */
static void test_attr_lens(void **state)
{
	(void)state;
	static const char *const names[] = {
	    "formaction", "formmethod", "type", "form", "action", "method", "id",    "href",    "name",   "content",
	    "encoding",   "color",      "face", "size", "value",  "x",      "class", "enctype", "target", "formtarget"};
	for (unsigned id = T_OTHER; id <= T_VOID; id++) {
		for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
			char low[16] = {0};
			size_t n = strlen(names[k]);
			memcpy(low, names[k], n);
			struct inj_tag t;
			memset(&t, 0, sizeof t);
			t.id = (uint8_t)id;
			uint8_t slot = inj_attr_slot_of(&t, low, n);
			int read = slot != SLOT_NONE || t.has_form || t.has_id || t.font_attr;
			if (read && !((inj_attr_lens[id] >> n) & 1))
				fail_msg("tag id %u reads \"%s\", not at its length", id, names[k]);
		}
	}
}

/* inj_attr_slot_of reads a name lowered by 0x20 set in each byte (the
 * tokenizer's way): a name it knows, any byte of it changed to any of the
 * 256, still matches exactly when that byte is the letter in either case;
 * it fails when a name with a byte other than a letter is added. */
static void test_attr_or_lowered(void **state)
{
	(void)state;
	static const uint8_t ids[] = {T_INPUT, T_BUTTON, T_FORM, T_BASE, T_META, T_ANNOTATION_XML, T_FONT};
	static const char *const names[] = {"formaction", "formmethod", "type", "form", "action",
	                                    "method",     "id",         "href", "name", "content",
	                                    "encoding",   "color",      "face", "size"};
	for (size_t d = 0; d < sizeof ids; d++) {
		for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
			size_t n = strlen(names[k]);
			struct inj_tag t;
			memset(&t, 0, sizeof t);
			t.id = ids[d];
			char low[16] = {0};
			memcpy(low, names[k], n);
			uint8_t want = inj_attr_slot_of(&t, low, n);
			uint8_t want_flags = (uint8_t)(t.has_form | t.has_id << 1 | t.font_attr << 2);
			for (size_t at = 0; at < n; at++) {
				for (int c = 0; c < 256; c++) {
					memset(&t, 0, sizeof t);
					t.id = ids[d];
					memcpy(low, names[k], n);
					low[at] = (char)(c | 0x20);
					uint8_t got = inj_attr_slot_of(&t, low, n);
					uint8_t flags = (uint8_t)(t.has_form | t.has_id << 1 | t.font_attr << 2);
					int same = c == names[k][at] || c == names[k][at] - 32;
					if (same ? got != want || flags != want_flags
					         : (got != SLOT_NONE && got != want) ||
					               (got == want && flags == want_flags &&
					                (want != SLOT_NONE || want_flags)))
						fail_msg("tag %u, \"%s\" with byte %zu = %d", ids[d], names[k], at, c);
				}
			}
		}
	}
}

/* inj_tree_quiet: where it takes a start tag (a button or input),
 * inj_tree_tag makes the same move (none) and answers NEXT_DATA and
 * INS_NONE, whatever the tag's submitter attributes and the model's
 * state. A form end tag it takes never reaches inj_tree_tag: the
 * tokenizer's inj_tree_form_close is its only move (html_end has none),
 * so inj_tree_tag must leave the model as it is there. */
static void test_quiet(void **state)
{
	(void)state;
	csrf_origin self = self_origin();
	static const uint8_t ids[] = {T_FORM, T_BUTTON, T_INPUT, T_OTHER, T_SELECT, T_BASE};
	static const char *const urls[] = {NULL, "https://evil.example/", "/x", SELF "/", "x"};
	static const char *const shorts[] = {NULL, "get", "post", "dialog", "put"};
	static const char *const types[] = {NULL, "submit", "image", "button", "text"};
	unsigned quiet = 0;
	struct inj_tag *tag = malloc(sizeof *tag), *copy = malloc(sizeof *copy);
	assert_non_null(tag);
	assert_non_null(copy);
	for (size_t a = 0; a < sizeof ids * 2 * 5 * 5 * 5 * 2; a++) {
		size_t r = a;
		uint8_t id = ids[r % sizeof ids];
		r /= sizeof ids;
		int end = (int)(r % 2);
		r /= 2;
		make_tag(tag, id, urls[r % 5], shorts[r / 5 % 5], types[r / 25 % 5]);
		tag->is_end = (uint8_t)end;
		tag->has_form = (uint8_t)(r / 125 % 2);
		for (unsigned bits = 0; bits < 1u << 13; bits++) {
			if (!(bits & 4) && bits >> 11) /* no template: no mode of its contents */
				continue;
			struct inj_tree base;
			memset(&base, 0, sizeof base);
			base.self = &self;
			inj_tree_reset(&base);
			base.ptr = bits & 1;
			base.cur_form = (bits >> 1) & 1 ? CF_PENDING : CF_OTHER;
			base.templates = (bits >> 2) & 1;
			base.any_token = (bits >> 3) & 1;
			base.id_token = (bits >> 3) & 1;
			base.cur_id = (bits >> 4) & 1;
			base.base = (uint8_t)((bits >> 5) % 3);
			base.owner_rel = (bits >> 6) & 1;
			base.tables = (bits >> 7) & 1;
			base.depth = (bits >> 8) & 1;
			base.select = (bits >> 9) & 1;
			base.stopped = (bits >> 10) & 1;
			/* the template contents' mode: picked (in body, in table...),
			 * "in column group", not picked yet (every tag to the model),
			 * or a head tag only one browser takes as any other came */
			switch (bits >> 11) {
			case 0:
				base.tpl_moved = base.templates;
				break;
			case 1:
				base.tpl_moved = base.tpl_col = base.templates;
				break;
			case 2:
				base.tpl_fresh = base.templates;
				break;
			default:
				base.tpl_fresh = base.tpl_maybe = base.templates;
				break;
			}
			if (base.depth) {
				base.stack[0].ns = 1;
				base.stack[0].len = 3;
				memcpy(base.stack[0].name, "svg", 3);
			}
			if (!inj_tree_quiet(&base, tag))
				continue;
			quiet++;
			if (tag->is_end) {
				assert_int_equal(tag->id, T_FORM);
				continue;
			}
			struct inj_tree moved = base;
			memcpy(copy, tag, sizeof *copy);
			uint8_t next = 0xff;
			int ins = inj_tree_tag(&moved, copy, &next);
			if (ins != INS_NONE || next != NEXT_DATA || memcmp(&moved, &base, sizeof moved) != 0)
				fail_msg("state %u, tag %zu: inj_tree_tag moves otherwise", bits, a);
		}
	}
	free(tag);
	free(copy);
	assert_true(quiet > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tag_ids),
	    cmocka_unit_test(test_html_first),
	    cmocka_unit_test(test_plain_fast_tests),
	    cmocka_unit_test(test_html_ids),
	    cmocka_unit_test(test_html_end),
	    cmocka_unit_test(test_plain_ids),
	    cmocka_unit_test(test_decode),
	    cmocka_unit_test(test_form),
	    cmocka_unit_test(test_base),
	    cmocka_unit_test(test_button),
	    cmocka_unit_test(test_annotation),
	    cmocka_unit_test(test_attr_slots),
	    cmocka_unit_test(test_long_url),
	    cmocka_unit_test(test_attr_lens),
	    cmocka_unit_test(test_quiet),
	    cmocka_unit_test(test_attr_or_lowered),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
