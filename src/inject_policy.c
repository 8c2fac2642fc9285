/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * inject_policy.c - the injector's form policy: which element a tag name
 * is, which attributes of it are kept, how the browser decodes their
 * values (character references), whether a form posts, and where a form's
 * action, a button's formaction or a base's href leads. Every judgement
 * fails closed: when the bytes kept cannot tell, the answer is "elsewhere".
 */
#include "csrfx.h"
#include "inject_shared.h"

struct name_id {
	const char *name;
	uint8_t id;
};

#define N(s, id)                                                                                                       \
	{                                                                                                              \
		s, id                                                                                                  \
	}
static const struct name_id names1[] = {N("p", T_P), N("b", T_BREAKOUT), N("i", T_BREAKOUT), N("s", T_BREAKOUT),
                                        N("u", T_BREAKOUT)};
static const struct name_id names2[] = {
    N("br", T_BR),       N("hr", T_HR),       N("mi", T_MI),       N("mo", T_MO),       N("mn", T_MN),
    N("ms", T_MS),       N("dd", T_BREAKOUT), N("dl", T_BREAKOUT), N("dt", T_BREAKOUT), N("em", T_BREAKOUT),
    N("h1", T_BREAKOUT), N("h2", T_BREAKOUT), N("h3", T_BREAKOUT), N("h4", T_BREAKOUT), N("h5", T_BREAKOUT),
    N("h6", T_BREAKOUT), N("li", T_BREAKOUT), N("ol", T_BREAKOUT), N("tt", T_BREAKOUT), N("ul", T_BREAKOUT)};
static const struct name_id names3[] = {N("svg", T_SVG),      N("img", T_IMG),      N("xmp", T_XMP),
                                        N("big", T_BREAKOUT), N("div", T_BREAKOUT), N("pre", T_BREAKOUT),
                                        N("sub", T_BREAKOUT), N("sup", T_BREAKOUT), N("var", T_BREAKOUT),
                                        N("wbr", T_VOID),     N("col", T_COL)};
static const struct name_id names4[] = {
    N("form", T_FORM),     N("base", T_BASE),     N("head", T_HEAD),     N("math", T_MATH),     N("font", T_FONT),
    N("desc", T_DESC),     N("meta", T_META),     N("body", T_BREAKOUT), N("code", T_BREAKOUT), N("menu", T_BREAKOUT),
    N("nobr", T_BREAKOUT), N("ruby", T_BREAKOUT), N("span", T_BREAKOUT), N("area", T_VOID),     N("link", T_VOID)};
static const struct name_id names5[] = {
    N("style", T_STYLE), N("title", T_TITLE),    N("input", T_INPUT), N("embed", T_EMBED), N("mtext", T_MTEXT),
    N("table", T_TABLE), N("small", T_BREAKOUT), N("image", T_VOID),  N("track", T_VOID),  N("param", T_VOID)};
static const struct name_id names6[] = {N("script", T_SCRIPT),   N("iframe", T_IFRAME),   N("button", T_BUTTON),
                                        N("select", T_SELECT),   N("keygen", T_KEYGEN),   N("mglyph", T_MGLYPH),
                                        N("strike", T_BREAKOUT), N("strong", T_BREAKOUT), N("center", T_BREAKOUT),
                                        N("source", T_VOID)};
static const struct name_id names7[] = {N("noembed", T_NOEMBED), N("listing", T_BREAKOUT)};
static const struct name_id names8[] = {N("textarea", T_TEXTAREA), N("noframes", T_NOFRAMES), N("noscript", T_NOSCRIPT),
                                        N("frameset", T_FRAMESET), N("template", T_TEMPLATE)};
static const struct name_id names9[] = {N("plaintext", T_PLAINTEXT)};
static const struct name_id names10[] = {N("blockquote", T_BREAKOUT), N("malignmark", T_MALIGNMARK)};
static const struct name_id names13[] = {N("foreignobject", T_FOREIGNOBJECT)};
static const struct name_id names14[] = {N("annotation-xml", T_ANNOTATION_XML)};
#undef N

/* Called for every tag: the first letter rules out most entries before
 * the rest is compared. */
static uint8_t find_name(const char *name, size_t len, const struct name_id *tab, size_t count)
{
	for (size_t k = 0; k < count; k++) {
		const char *n = tab[k].name;
		if (n[0] != name[0])
			continue;
		size_t i = 1;
		while (i < len && n[i] == name[i])
			i++;
		if (i == len)
			return tab[k].id;
	}
	return T_OTHER;
}

#define FIND(tab) find_name(name, len, tab, sizeof tab / sizeof tab[0])
uint8_t inj_tag_id(const char *name, size_t len)
{
	switch (len) {
	case 1:
		return FIND(names1);
	case 2:
		return FIND(names2);
	case 3:
		return FIND(names3);
	case 4:
		return FIND(names4);
	case 5:
		return FIND(names5);
	case 6:
		return FIND(names6);
	case 7:
		return FIND(names7);
	case 8:
		return FIND(names8);
	case 9:
		return FIND(names9);
	case 10:
		return FIND(names10);
	case 13:
		return FIND(names13);
	case 14:
		return FIND(names14);
	default:
		return T_OTHER;
	}
}
#undef FIND

/* The names inj_tag_id_html knows (but plaintext), by a perfect hash of
 * their bytes: one multiply and one compare a name, where a switch on the
 * length and then on the first letter took two indirect jumps, which
 * mispredict as the tags of a page alternate. The key holds every byte of
 * a name of 2 to 8 (the bytes of a 2- or 3-letter one and its last again;
 * the first four and the last four of a longer one, overlapping), read
 * one at a time so that it is the same on every byte order and never
 * reads past the name; with the length, it tells the name. INJ_HTML_HASH_MUL
 * spreads the 33 keys over the 64 slots without a collision (found by
 * trying multipliers; test_inject_policy checks each name's id). */
const struct inj_html_name inj_html_names[64] = {
    [0] = {UINT64_C(0x6174656d6174656d), 4, T_META},      /* meta */
    [1] = {UINT64_C(0x6461656864616568), 4, T_HEAD},      /* head */
    [3] = {UINT64_C(0x0000000000646474), 2, T_TD},        /* td */
    [4] = {UINT64_C(0x6874616d6874616d), 4, T_MATH},      /* math */
    [6] = {UINT64_C(0x6b6e696c6b6e696c), 4, T_LINK},      /* link */
    [7] = {UINT64_C(0x6e6f747474747562), 6, T_BUTTON},    /* button */
    [9] = {UINT64_C(0x0000000000727274), 2, T_TR},        /* tr */
    [13] = {UINT64_C(0x6573616265736162), 4, T_BASE},     /* base */
    [16] = {UINT64_C(0x00000000006c6f63), 3, T_COL},      /* col */
    [19] = {UINT64_C(0x7475706e75706e69), 5, T_INPUT},    /* input */
    [21] = {UINT64_C(0x6e6f697474706163), 7, T_CAPTION},  /* caption */
    [22] = {UINT64_C(0x7463656c656c6573), 6, T_SELECT},   /* select */
    [24] = {UINT64_C(0x746573656d617266), 8, T_FRAMESET}, /* frameset */
    [25] = {UINT64_C(0x0000000000677673), 3, T_SVG},      /* svg */
    [27] = {UINT64_C(0x79646f62646f6274), 5, T_TBODY},    /* tbody */
    [28] = {UINT64_C(0x6d726f666d726f66), 4, T_FORM},     /* form */
    [29] = {UINT64_C(0x656d617261726669), 6, T_IFRAME},   /* iframe */
    [30] = {UINT64_C(0x656c79746c797473), 5, T_STYLE},    /* style */
    [32] = {UINT64_C(0x0000000000706d78), 3, T_XMP},      /* xmp */
    [34] = {UINT64_C(0x656c62616c626174), 5, T_TABLE},    /* table */
    [37] = {UINT64_C(0x70756f72676c6f63), 8, T_COLGROUP}, /* colgroup */
    [38] = {UINT64_C(0x7470697269726373), 6, T_SCRIPT},   /* script */
    [41] = {UINT64_C(0x7470697263736f6e), 8, T_NOSCRIPT}, /* noscript */
    [44] = {UINT64_C(0x656c74696c746974), 5, T_TITLE},    /* title */
    [46] = {UINT64_C(0x6e6567796779656b), 6, T_KEYGEN},   /* keygen */
    [47] = {UINT64_C(0x6461656861656874), 5, T_THEAD},    /* thead */
    [50] = {UINT64_C(0x73656d6172666f6e), 8, T_NOFRAMES}, /* noframes */
    [51] = {UINT64_C(0x6574616c706d6574), 8, T_TEMPLATE}, /* template */
    [52] = {UINT64_C(0x6165726174786574), 8, T_TEXTAREA}, /* textarea */
    [53] = {UINT64_C(0x6465626d6d656f6e), 7, T_NOEMBED},  /* noembed */
    [55] = {UINT64_C(0x746f6f666f6f6674), 5, T_TFOOT},    /* tfoot */
    [56] = {UINT64_C(0x646e756f6f736762), 7, T_BGSOUND},  /* bgsound */
    [58] = {UINT64_C(0x746e6f6665736162), 8, T_BASEFONT}, /* basefont */
    [59] = {UINT64_C(0x0000000000686874), 2, T_TH},       /* th */
};

uint8_t inj_tag_id_html(const char *n, size_t len)
{
	return inj_tag_id_html_in(n, len);
}

uint8_t inj_attr_slot(struct inj_tag *tag)
{
	return inj_attr_slot_of(tag, tag->attr, tag->attr_len);
}

uint8_t inj_attr_slot_rare(struct inj_tag *tag, const char *low, size_t k)
{
	switch (tag->id) {
	case T_BASE:
		return INJ_ATTR_IS(low, k, "href") ? inj_attr_take(tag, A_URL, SLOT_URL) : SLOT_NONE;
	case T_META: /* kept only when the injector raises referrer policies */
		if (INJ_ATTR_IS(low, k, "name"))
			return inj_attr_take(tag, A_SHORT, SLOT_SHORT);
		return INJ_ATTR_IS(low, k, "content") ? inj_attr_take(tag, A_URL, SLOT_URL) : SLOT_NONE;
	case T_ANNOTATION_XML:
		return INJ_ATTR_IS(low, k, "encoding") ? inj_attr_take(tag, A_SHORT, SLOT_SHORT) : SLOT_NONE;
	case T_FONT:
		if (INJ_ATTR_IS(low, k, "color") || INJ_ATTR_IS(low, k, "face") || INJ_ATTR_IS(low, k, "size"))
			tag->font_attr = 1;
		return SLOT_NONE;
	default:
		return SLOT_NONE;
	}
}

static int is_alnum(unsigned char c)
{
	return csrfi_is_alpha(c) || csrfi_is_digit(c);
}

/* The named references whose expansion holds ASCII ("&sol;" is '/').
 * Those that end without ';' are the legacy ones; 0x80 stands for the
 * non-ASCII part of an expansion. */
static const struct {
	const char *name;
	const char *text;
} named[] = {
    {"amp", "&"},
    {"AMP", "&"},
    {"lt", "<"},
    {"LT", "<"},
    {"gt", ">"},
    {"GT", ">"},
    {"quot", "\""},
    {"QUOT", "\""},
    {"Tab;", "\t"},
    {"NewLine;", "\n"},
    {"excl;", "!"},
    {"num;", "#"},
    {"dollar;", "$"},
    {"percnt;", "%"},
    {"apos;", "'"},
    {"lpar;", "("},
    {"rpar;", ")"},
    {"ast;", "*"},
    {"midast;", "*"},
    {"plus;", "+"},
    {"comma;", ","},
    {"period;", "."},
    {"sol;", "/"},
    {"colon;", ":"},
    {"semi;", ";"},
    {"equals;", "="},
    {"quest;", "?"},
    {"commat;", "@"},
    {"lsqb;", "["},
    {"lbrack;", "["},
    {"bsol;", "\\"},
    {"rsqb;", "]"},
    {"rbrack;", "]"},
    {"Hat;", "^"},
    {"lowbar;", "_"},
    {"UnderBar;", "_"},
    {"grave;", "`"},
    {"DiacriticalGrave;", "`"},
    {"lcub;", "{"},
    {"lbrace;", "{"},
    {"verbar;", "|"},
    {"vert;", "|"},
    {"VerticalLine;", "|"},
    {"rcub;", "}"},
    {"rbrace;", "}"},
    {"fjlig;", "fj"},
    {"nvlt;", "<\x80"},
    {"nvgt;", ">\x80"},
    {"bne;", "=\x80"},
};

/* A numeric reference at in[i] ("&#..."): writes its byte to *out and
 * returns the index after it, or 0 when there is none. */
static size_t numeric_ref(const char *in, size_t len, size_t i, char *out)
{
	size_t k = i + 2;
	int hex = k < len && (in[k] == 'x' || in[k] == 'X');
	k += (size_t)hex;
	size_t digits = 0;
	uint32_t v = 0;
	for (; k < len; k++, digits++) {
		int d = csrfx_hexval((unsigned char)in[k]);
		if (d < 0 || (!hex && d > 9))
			break;
		if (v < 0x110000)
			v = v * (hex ? 16 : 10) + (unsigned)d;
	}
	if (digits == 0)
		return 0;
	if (k < len && in[k] == ';')
		k++;
	/* 0, surrogates, out of range, C1 (windows-1252 letters): not ASCII */
	*out = (v >= 1 && v < 0x80) ? (char)v : (char)0x80;
	return k;
}

size_t inj_decode_attr(char *v, size_t n)
{
	/* the bytes before the first '&' or NUL stay as they are (most
	 * values have neither) */
	size_t i = 0;
	while (i < n && v[i] != '&' && v[i] != '\0')
		i++;
	size_t o = i;
	while (i < n) {
		if (v[i] == '\0') {
			v[o++] = (char)0x80;
			i++;
			continue;
		}
		if (v[i] != '&') {
			v[o++] = v[i++];
			continue;
		}
		if (i + 1 < n && v[i + 1] == '#') {
			char c;
			size_t k = numeric_ref(v, n, i, &c);
			if (k) {
				v[o++] = c;
				i = k;
				continue;
			}
		} else {
			size_t m, rest = n - i - 1;
			for (m = 0; m < sizeof named / sizeof named[0]; m++) {
				size_t nl = strlen(named[m].name);
				if (rest < nl || memcmp(v + i + 1, named[m].name, nl) != 0)
					continue;
				size_t end = i + 1 + nl;
				if (named[m].name[nl - 1] != ';') {
					/* legacy: ";" is optional, but in an attribute a
					 * letter, digit or '=' after the name keeps it text */
					if (end < n && v[end] == ';')
						end++;
					else if (end < n && (is_alnum((unsigned char)v[end]) || v[end] == '='))
						continue;
				}
				size_t tl = strlen(named[m].text);
				memcpy(v + o, named[m].text, tl); /* tl <= end - i: never past i */
				o += tl;
				i = end;
				break;
			}
			if (m < sizeof named / sizeof named[0])
				continue;
		}
		v[o++] = v[i++];
	}
	return o;
}

static int is_scheme_char(unsigned char c)
{
	return is_alnum(c) || c == '+' || c == '-' || c == '.';
}

/* Where the authority that starts at a[from] ends (its first '/', '\\',
 * '?' or '#', or n), or SIZE_MAX when it is unsure: a '&' (an unknown
 * reference might be any of those), or the kept bytes cut it short. */
static size_t authority_end(const char *a, size_t from, size_t n, int trunc)
{
	for (size_t k = from; k < n; k++) {
		unsigned char c = (unsigned char)a[k];
		if (c == '/' || c == '\\' || c == '?' || c == '#')
			return k;
		if (c == '&')
			return SIZE_MAX;
	}
	return trunc ? SIZE_MAX : n;
}

/* "//host/x", "\\host\x", "/\host": the base URL's scheme with the
 * authority after the two slashes. Ours when that authority, read under
 * self's scheme, is self's: then it resolves as a relative path does (the
 * document is ours; a <base> elsewhere, whose scheme would apply, is the
 * relative verdict's to judge). A third slash, which browsers skip, and
 * userinfo leave it cross-origin. */
static int scheme_relative(const char *a, size_t n, int trunc, const csrf_origin *self)
{
	size_t k = authority_end(a, 2, n, trunc);
	char u[sizeof self->scheme + 3 + sizeof self->host + 8];
	size_t sl = strnlen(self->scheme, sizeof self->scheme);
	if (k == SIZE_MAX || k == 2 || sl + 3 + (k - 2) > sizeof u)
		return U_CROSS;
	memcpy(u, self->scheme, sl);
	memcpy(u + sl, "://", 3);
	memcpy(u + sl + 3, a + 2, k - 2);
	csrf_origin o;
	if (csrf_url_origin(u, sl + 3 + (k - 2), &o) != CSRF_OK || !csrf_origin_equal(&o, self))
		return U_CROSS;
	return U_RELATIVE;
}

/* Judges a decoded URL the way a URL parser would see it, failing closed
 * (U_CROSS) whenever unsure. present: the attribute was there. trunc: the
 * value went on past the kept bytes. a is rewritten in place. A '&' left
 * (a reference the table does not know, or a literal one) before the path
 * starts makes it cross-origin. */
/* The usual action, a path ("/submit"): its first two bytes are none the
 * parser drops or trims, so they stay its first two, and the second makes
 * it neither scheme-relative nor unsure (judge_url, below). */
static inline int url_is_path(const char *a, size_t len)
{
	return len >= 2 && a[0] == '/' && (unsigned char)a[1] > 0x20 && a[1] != '/' && a[1] != '\\' && a[1] != '&';
}

static int judge_url(char *a, size_t len, int present, int trunc, const csrf_origin *self)
{
	if (!present || (len == 0 && !trunc))
		return U_DOCUMENT;
	if (url_is_path(a, len))
		return U_RELATIVE;
	size_t n = 0;
	/* The URL parser drops every tab and newline ... */
	for (size_t i = 0; i < len; i++)
		if (a[i] != '\t' && a[i] != '\n' && a[i] != '\r')
			a[n++] = a[i];
	/* ... and C0 controls and spaces at both ends. */
	size_t b = 0;
	while (b < n && (unsigned char)a[b] <= 0x20)
		b++;
	while (!trunc && n > b && (unsigned char)a[n - 1] <= 0x20)
		n--;
	a += b;
	n -= b;
	if (n == 0)
		return trunc ? U_CROSS : U_RELATIVE; /* blanks: the base URL itself */

	unsigned char c0 = (unsigned char)a[0];
	if (c0 == '/' || c0 == '\\') {
		if (n == 1)
			return trunc ? U_CROSS : U_RELATIVE;
		unsigned char c1 = (unsigned char)a[1];
		if (c1 == '/' || c1 == '\\')
			return scheme_relative(a, n, trunc, self);
		return c1 == '&' ? U_CROSS : U_RELATIVE;
	}
	if (c0 == '?' || c0 == '#')
		return U_RELATIVE;
	if (!csrfi_is_alpha(c0)) /* no scheme possible: a relative path */
		return c0 == '&' ? U_CROSS : U_RELATIVE;
	size_t i;
	for (i = 1; i < n; i++) {
		unsigned char c = (unsigned char)a[i];
		if (c == ':')
			break;
		if (c == '&')
			return U_CROSS; /* an unknown reference might be a ':' */
		if (!is_scheme_char(c))
			return U_RELATIVE; /* a path that has a ':' later, or none */
	}
	if (i == n)
		return trunc ? U_CROSS : U_RELATIVE;
	csrf_slice scheme = {a, i};
	if (!csrfi_slice_ieq(scheme, "http") && !csrfi_slice_ieq(scheme, "https"))
		return U_CROSS; /* javascript:, data:, mailto:, ... */
	/* Exactly "scheme://"; browsers also read "https:host", "https:\\host"
	 * and "https:///host" as URLs, but never as ours for certain. */
	if (n - i < 3 || a[i + 1] != '/' || a[i + 2] != '/')
		return U_CROSS;
	size_t k = authority_end(a, i + 3, n, trunc);
	csrf_origin o;
	if (k == SIZE_MAX || csrf_url_origin(a, k, &o) != CSRF_OK || !csrf_origin_equal(&o, self))
		return U_CROSS;
	return U_SELF;
}

/* Decodes the tag's kept values, once. */
static inline void decode_values(struct inj_tag *tag)
{
	if (tag->decoded)
		return;
	tag->decoded = 1;
	/* a value the tokenizer found clean (no '&', no NUL) would come out as it is */
	if (tag->url_len && !(tag->clean & A_URL))
		tag->url_len = (uint16_t)inj_decode_attr(tag->url, tag->url_len);
	if (tag->short_len && !(tag->clean & A_SHORT))
		tag->short_len = (uint8_t)inj_decode_attr(tag->short_val, tag->short_len);
	if (tag->type_len && !(tag->clean & A_TYPE))
		tag->type_len = (uint8_t)inj_decode_attr(tag->type_val, tag->type_len);
}

/* The tag's URL attribute judged (judge_url rewrites it: once). */
static int tag_url(struct inj_tag *tag, const csrf_origin *self)
{
	if ((tag->seen & A_URL) && url_is_path(tag->url, tag->url_len)) /* judge_url's first answer, without its call */
		return U_RELATIVE;
	return judge_url(tag->url, tag->url_len, (tag->seen & A_URL) != 0, tag->url_trunc, self);
}

/* 1 when the decoded value is lit, in any letter case. HTML matches
 * enumerated attributes exactly, without trimming: " post " is invalid. */
static inline int short_is(const char *v, uint8_t len, int over, const char *lit)
{
	/* inlined, the literal's length is known: most values are told by
	 * their length alone (csrfi_slice_ieq, out of line, measured its
	 * literal first) */
	size_t n = strlen(lit);
	if (over || len != n)
		return 0;
	if (memcmp(v, lit, n) == 0) /* as written most often: the (lower-case) literal itself, one compare */
		return 1;
	for (size_t i = 0; i < n; i++)
		if (inj_lower((unsigned char)v[i]) != inj_lower((unsigned char)lit[i]))
			return 0;
	return 1;
}

static int url_ok(int u, int base)
{
	return u == U_SELF || u == U_DOCUMENT || (u == U_RELATIVE && base != B_OTHER);
}

int inj_policy_form(struct inj_tag *tag, int base, const csrf_origin *self, int *relative)
{
	enum { M_GET, M_POST, M_DIALOG } m = M_GET; /* missing or invalid: GET */
	decode_values(tag);
	if (tag->seen & A_SHORT) {
		if (short_is(tag->short_val, tag->short_len, tag->short_over, "post"))
			m = M_POST;
		else if (short_is(tag->short_val, tag->short_len, tag->short_over, "dialog"))
			m = M_DIALOG;
	}
	int u = tag_url(tag, self);
	*relative = u == U_RELATIVE;
	if (m == M_DIALOG)
		return FP_OTHER;
	if (url_ok(u, base))
		return m == M_POST ? FP_POST_SELF : FP_GET_SELF;
	return m == M_POST && u == U_RELATIVE ? FP_POST_BASE : FP_OTHER;
}

int inj_policy_base(struct inj_tag *tag, const csrf_origin *self)
{
	if (!(tag->seen & A_URL))
		return B_NONE;
	decode_values(tag);
	/* a relative href resolves against the document's URL: ours */
	return tag_url(tag, self) == U_CROSS ? B_OTHER : B_SAME;
}

int inj_policy_button(struct inj_tag *tag, int base, const csrf_origin *self)
{
	int submit;
	if (inj_policy_button_plain(tag))
		return BTN_PLAIN;
	decode_values(tag);
	if (tag->id == T_INPUT)
		submit = (tag->seen & A_TYPE) && (short_is(tag->type_val, tag->type_len, tag->type_over, "submit") ||
		                                  short_is(tag->type_val, tag->type_len, tag->type_over, "image"));
	else /* a button's missing and invalid type is submit */
		submit = !(tag->seen & A_TYPE) || !(short_is(tag->type_val, tag->type_len, tag->type_over, "button") ||
		                                    short_is(tag->type_val, tag->type_len, tag->type_over, "reset"));
	if (!submit)
		return BTN_PLAIN;
	int r = BTN_PLAIN;
	if (tag->seen & A_URL) {
		int u = tag_url(tag, self);
		r |= url_ok(u, base) ? BTN_ACTION_SELF : BTN_ACTION_OTHER;
		r |= u == U_RELATIVE ? BTN_ACTION_REL : 0;
	}
	/* formmethod has no missing value default (the form's method
	 * applies) and GET as its invalid value default */
	if ((tag->seen & A_SHORT) && short_is(tag->short_val, tag->short_len, tag->short_over, "post"))
		r |= BTN_POST;
	else if ((tag->seen & A_SHORT) && !short_is(tag->short_val, tag->short_len, tag->short_over, "dialog"))
		r |= BTN_GET;
	return r;
}

int inj_policy_html_annotation(struct inj_tag *tag)
{
	if (!(tag->seen & A_SHORT))
		return 0;
	decode_values(tag);
	return short_is(tag->short_val, tag->short_len, tag->short_over, "text/html") ||
	       short_is(tag->short_val, tag->short_len, tag->short_over, "application/xhtml+xml");
}
