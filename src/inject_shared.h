/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * inject_shared.h - what the injector's files share and callers
 * never see: the tag the tokenizer (inject.c) hands over, the model of the
 * HTML tree builder that decides what the browser does with it
 * (inject_tree.c), and the form policy that judges attribute values
 * (inject_policy.c), and the block scanner the tokenizer reads with
 * (inject_scan.c). Calls point one way: inject.c -> inject_tree.c ->
 * inject_policy.c; inject.c -> inject_noscript.c (noscript content read
 * as markup) -> inject_tree.c; inject.c -> inject_scan.c.
 */
#ifndef CSRF_INJECT_SHARED_H
#define CSRF_INJECT_SHARED_H

#include "internal.h"

/* Bytes of a tag name kept: the longest name the model compares is an
 * SVG or MathML element's ("fecomponenttransfer" has 19). A longer name
 * saturates name_len at INJ_NAME_MAX + 1. */
#define INJ_NAME_MAX 24
/* Bytes of an attribute name kept: "formaction" and "formmethod" have 10. */
#define INJ_ATTR_MAX 10
/* Bytes of a URL attribute (action, href, formaction) kept. A longer URL
 * is judged by these bytes only when they hold its whole origin part; an
 * authority cut short could be "https://self.example.evil.example". */
#define INJ_URL_MAX 2048
/* Bytes of a short attribute (method, formmethod, type, encoding). */
#define INJ_SHORT_MAX 32
/* Bytes of a form's id kept: a longer one cannot pin its field (the tree
 * depth cap, docs/architecture.md). */
#define INJ_ID_MAX 64
/* Earlier forms' ids a deep form's own id is compared with; past them
 * none can pin its field. */
#define INJ_FORM_IDS 32
/* Open SVG and MathML elements the model follows; one more and it stops. */
#define INJ_FOREIGN_MAX 32
/* Tables open one inside another (through cells) that the model follows;
 * one more and it stops. */
#define INJ_TABLE_MAX 32
/* The tree depth cap (docs/architecture.md, "The tree depth cap"): a
 * browser puts an element that would sit too deep beside its parent, and
 * a form's field there is owned by its nearest ancestor form, which can
 * be a ghost (a form without the token whose </form> left it an
 * ancestor). Chromium (156) puts the form beside at 513 open elements,
 * Firefox (153) its first child at 512, fragment parsing (innerHTML) one
 * later. The depth before a start tag is at most S + 2T + 3 (S start
 * tags read so far, T <table> start tags: each start tag pushes at most
 * one element, a table at most two implied ones, html, head and body
 * three): a form read where that reaches INJ_DEPTH_GUARD may be beside
 * its parent (32 elements of margin below Firefox's 512). */
#define INJ_DEPTH_GUARD 480

/* The elements the model tells apart, by their lower-case names. */
enum inj_tag_id {
	T_OTHER = 0,
	/* raw text in HTML content: the tokenizer reads no markup inside */
	T_SCRIPT,
	T_STYLE,
	T_TEXTAREA,
	T_TITLE,
	T_XMP,
	T_IFRAME,
	T_NOEMBED,
	T_NOFRAMES,
	T_NOSCRIPT,
	T_PLAINTEXT,
	/* what decides form ownership and URLs */
	T_FORM,
	T_BASE,
	T_HEAD,
	T_BUTTON,
	T_INPUT,
	T_SELECT,
	T_TEMPLATE,
	T_SVG,
	T_MATH,
	T_KEYGEN,
	T_FRAMESET, /* the tree builder may take it: the model stops */
	/* the table modes: where a form start tag is inserted and popped at once */
	T_TABLE,
	T_CAPTION,
	T_COLGROUP,
	T_COL,
	T_TBODY,
	T_THEAD,
	T_TFOOT,
	T_TR,
	T_TD,
	T_TH,
	/* foreign content */
	T_FONT,
	T_ANNOTATION_XML,
	T_FOREIGNOBJECT,
	T_DESC,
	T_MI,
	T_MO,
	T_MN,
	T_MS,
	T_MTEXT,
	T_MGLYPH,
	T_MALIGNMARK,
	/* break out of foreign content; the first five are also void */
	T_BR,
	T_IMG,
	T_HR,
	T_META,
	T_EMBED,
	T_P,
	T_BREAKOUT, /* the other names of the breakout list */
	/* start tags template contents may begin with, their mode not picked
	 * by them in every browser (inject_tree.c, tpl_start); plain elsewhere */
	T_LINK,
	T_BASEFONT,
	T_BGSOUND,
	/* void elements that change nothing we follow */
	T_VOID
};

/* The attribute slots of a tag: one URL, two short values, a form's id. */
enum { SLOT_NONE, SLOT_URL, SLOT_SHORT, SLOT_TYPE, SLOT_ID };

/* A tag as the tokenizer read it. Attribute values are raw (character
 * references undecoded) until the policy decodes them. */
struct inj_tag {
	/* what begin_tag clears in one go, up to name */
	uint8_t is_end;
	uint8_t self_closing; /* ended with "/>" */
	uint8_t id;           /* enum inj_tag_id, set when the name is complete */
	uint8_t name_len;     /* saturates at INJ_NAME_MAX + 1 */
	uint8_t skip_name;    /* in HTML content, a name no element we follow starts with: not kept */
	uint8_t slot;         /* where the current value's bytes go */
	uint8_t seen;         /* attributes already met (first wins): A_* bits */
	uint8_t has_form;     /* a form="" attribute (button, input) */
	uint8_t has_id;       /* an id attribute (form): a form="" elsewhere may name it */
	uint8_t font_attr;    /* color, face or size (font) */
	uint8_t decoded;      /* the values' references are decoded */
	uint8_t clean;        /* A_* bits: that value's kept bytes hold no '&' or NUL, so decoding leaves them */
	uint8_t keep;         /* its attributes matter (set with id) */
	uint8_t url_trunc, short_over, type_over;
	uint8_t short_len, type_len;
	uint8_t id_over, id_len; /* the form's id (id_val) */
	uint16_t url_len;
	char name[INJ_NAME_MAX];
	uint8_t attr_len; /* likewise, at INJ_ATTR_MAX + 1 */
	char attr[INJ_ATTR_MAX];
	char short_val[INJ_SHORT_MAX];
	char type_val[INJ_SHORT_MAX];
	char id_val[INJ_ID_MAX];
	char url[INJ_URL_MAX];
};

/* table, caption, colgroup, col, tbody, thead, tfoot, tr, td, th: the
 * tags of the table modes. */
static inline int inj_is_table_tag(uint8_t id)
{
	return id >= T_TABLE && id <= T_TH;
}

/* Attribute bits of inj_tag.seen. */
enum { A_URL = 1, A_SHORT = 2, A_TYPE = 4, A_ID = 8 };

/* ---- the form policy (inject_policy.c) ---- */

/* The tag id of a complete lower-case name (len may be INJ_NAME_MAX + 1:
 * no name we know). */
uint8_t inj_tag_id(const char *name, size_t len);
/* The same for HTML content, where only the elements up to T_TH
 * matter, meta (T_META: a referrer policy the injector may raise;
 * the model treats it as any void element), and link, basefont and
 * bgsound (T_LINK to T_BGSOUND: template contents that begin with one
 * have not picked their mode in every browser): the others (breakout,
 * integration points, void) are T_OTHER. */
uint8_t inj_tag_id_html(const char *name, size_t len);

/* inj_tag_id_html's perfect hash (its table in inject_policy.c), inline
 * for the tokenizer, which asks it of every tag name that may matter
 * (inj_html_maybe): a call there cost a tenth of a form's tags. */
struct inj_html_name {
	uint64_t key;
	uint8_t len; /* 0: an empty slot */
	uint8_t id;
};
extern const struct inj_html_name inj_html_names[64];
#define INJ_HTML_HASH_MUL UINT64_C(0xe79b1d7833a56441)
static inline uint64_t inj_le32(const char *n)
{
	const unsigned char *u = (const unsigned char *)n;
	return (uint64_t)u[0] | (uint64_t)u[1] << 8 | (uint64_t)u[2] << 16 | (uint64_t)u[3] << 24;
}
/* The id of a name of 2 to 8 bytes by its key: its first two bytes and
 * its last (len < 4), or its first four and its last four, little-endian
 * (inj_tag_id_html_in builds it from the bytes, plain_tag from a word). */
static inline uint8_t inj_tag_id_html_key(uint64_t key, size_t len)
{
	unsigned h = (unsigned)((key * INJ_HTML_HASH_MUL) >> 58);
	return inj_html_names[h].key == key && inj_html_names[h].len == len ? inj_html_names[h].id : T_OTHER;
}
static inline uint8_t inj_tag_id_html_in(const char *n, size_t len)
{
	uint64_t key;
	if (len - 2 > 6) /* not 2 to 8 */
		return len == 9 && memcmp(n, "plaintext", 9) == 0 ? T_PLAINTEXT : T_OTHER;
	if (len < 4)
		key = (uint64_t)(unsigned char)n[0] | (uint64_t)(unsigned char)n[1] << 8 |
		      (uint64_t)(unsigned char)n[len - 1] << 16;
	else
		key = inj_le32(n) | inj_le32(n + len - 4) << 32;
	return inj_tag_id_html_key(key, len);
}

/* The lower-case letters that start a name inj_tag_id_html knows, one bit
 * each ('a' is bit 0): a tag in HTML content whose name starts with any
 * other letter is T_OTHER, whatever follows, so the tokenizer keeps none
 * of its name. */
#define INJ_HTML_FIRST                                                                                                 \
	((1u << ('b' - 'a')) | (1u << ('c' - 'a')) | (1u << ('f' - 'a')) | (1u << ('h' - 'a')) | (1u << ('i' - 'a')) | \
	 (1u << ('k' - 'a')) | (1u << ('l' - 'a')) | (1u << ('m' - 'a')) | (1u << ('n' - 'a')) | (1u << ('p' - 'a')) | \
	 (1u << ('s' - 'a')) | (1u << ('t' - 'a')) | (1u << ('x' - 'a')))

/* The second letters of the names inj_tag_id_html knows, by their first
 * letter ('a' first) and length, one bit a letter ('a' is bit 0): a name
 * of another length (code, br, em, span), or whose second letter no name
 * of its length and first letter has (html, body, strong, small), is
 * T_OTHER without a look. A bit that a byte other than a letter lands on
 * only costs a look. inj_tag_id_html and this table change together
 * (test_inject_policy checks every name). */
#define INJ_2ND(c) (1u << ((c) - 'a'))
static const uint32_t inj_html_second[26][10] = {
    ['b' - 'a'] = {[4] = INJ_2ND('a') /* base */,
                   [6] = INJ_2ND('u') /* button */,
                   [7] = INJ_2ND('g') /* bgsound */,
                   [8] = INJ_2ND('a') /* basefont */},
    ['c' - 'a'] = {[3] = INJ_2ND('o') /* col */, [7] = INJ_2ND('a') /* caption */, [8] = INJ_2ND('o') /* colgroup */},
    ['f' - 'a'] = {[4] = INJ_2ND('o') /* form */, [8] = INJ_2ND('r') /* frameset */},
    ['h' - 'a'] = {[4] = INJ_2ND('e') /* head */},
    ['i' - 'a'] = {[5] = INJ_2ND('n') /* input */, [6] = INJ_2ND('f') /* iframe */},
    ['k' - 'a'] = {[6] = INJ_2ND('e') /* keygen */},
    ['l' - 'a'] = {[4] = INJ_2ND('i') /* link */},
    ['m' - 'a'] = {[4] = INJ_2ND('a') | INJ_2ND('e') /* math,meta */},
    ['n' - 'a'] = {[7] = INJ_2ND('o') /* noembed */, [8] = INJ_2ND('o') /* noframes,noscript */},
    ['p' - 'a'] = {[9] = INJ_2ND('l') /* plaintext */},
    ['s' - 'a'] = {[3] = INJ_2ND('v') /* svg */,
                   [5] = INJ_2ND('t') /* style */,
                   [6] = INJ_2ND('c') | INJ_2ND('e') /* script,select */},
    ['t' - 'a'] = {[2] = INJ_2ND('d') | INJ_2ND('h') | INJ_2ND('r') /* td,th,tr */,
                   [5] = INJ_2ND('a') | INJ_2ND('b') | INJ_2ND('f') | INJ_2ND('h') |
                         INJ_2ND('i') /* table,tbody,tfoot,thead,title */,
                   [8] = INJ_2ND('e') /* template,textarea */},
    ['x' - 'a'] = {[3] = INJ_2ND('m') /* xmp */},
};

/* 1 when tab has the bit of a name of len bytes starting first, second
 * (either case). */
static inline int inj_html_pair(const uint32_t tab[26][10], unsigned char first, unsigned char second, size_t len)
{
	return len <= 9 && ((tab[((first | 0x20) - 'a') & 31][len] >> (((second | 0x20) - 'a') & 31)) & 1);
}

static inline int inj_html_maybe(unsigned char first, unsigned char second, size_t len)
{
	return inj_html_pair(inj_html_second, first, second, len);
}

/* inj_html_second again, for plain_fast's usual tag: without the length's
 * branch and the first letter's subtraction, a row for each letter's low
 * five bits (either case) and a column for each length mod 16, the second
 * letter's bit (c - 1) & 31 (either case). The same answer for a letter
 * and a length up to 15 (test_inject_policy checks it); a name of 16 bytes
 * or more may only get a look more. Measured on Zen 5: plain_fast's name
 * test was a quarter of socat.html's clock (docs/architecture.md). */
static const uint32_t inj_html_second16[32][16] = {
    ['b' & 31] = {[4] = INJ_2ND('a') /* base */,
                  [6] = INJ_2ND('u') /* button */,
                  [7] = INJ_2ND('g') /* bgsound */,
                  [8] = INJ_2ND('a') /* basefont */},
    ['c' & 31] = {[3] = INJ_2ND('o') /* col */, [7] = INJ_2ND('a') /* caption */, [8] = INJ_2ND('o') /* colgroup */},
    ['f' & 31] = {[4] = INJ_2ND('o') /* form */, [8] = INJ_2ND('r') /* frameset */},
    ['h' & 31] = {[4] = INJ_2ND('e') /* head */},
    ['i' & 31] = {[5] = INJ_2ND('n') /* input */, [6] = INJ_2ND('f') /* iframe */},
    ['k' & 31] = {[6] = INJ_2ND('e') /* keygen */},
    ['l' & 31] = {[4] = INJ_2ND('i') /* link */},
    ['m' & 31] = {[4] = INJ_2ND('a') | INJ_2ND('e') /* math,meta */},
    ['n' & 31] = {[7] = INJ_2ND('o') /* noembed */, [8] = INJ_2ND('o') /* noframes,noscript */},
    ['p' & 31] = {[9] = INJ_2ND('l') /* plaintext */},
    ['s' & 31] = {[3] = INJ_2ND('v') /* svg */,
                  [5] = INJ_2ND('t') /* style */,
                  [6] = INJ_2ND('c') | INJ_2ND('e') /* script,select */},
    ['t' & 31] = {[2] = INJ_2ND('d') | INJ_2ND('h') | INJ_2ND('r') /* td,th,tr */,
                  [5] = INJ_2ND('a') | INJ_2ND('b') | INJ_2ND('f') | INJ_2ND('h') |
                        INJ_2ND('i') /* table,tbody,tfoot,thead,title */,
                  [8] = INJ_2ND('e') /* template,textarea */},
    ['x' & 31] = {[3] = INJ_2ND('m') /* xmp */},
};
static inline unsigned inj_html_maybe16(unsigned char first, unsigned char second, size_t len)
{
	return (inj_html_second16[first & 31][len & 15] >> ((second - 1u) & 31)) & 1;
}

/* The same for end tags: only the names whose end tag can matter in HTML
 * content outside select (inj_tree_plain_id: form, template, select, and
 * the table tags while a table is open). Any other end tag (</button>,
 * </script>, </title>) is plain whatever the model holds, so plain_tag
 * looks none of them up (test_inject_policy checks every name). */
static const uint32_t inj_html_second_end[26][10] = {
    ['c' - 'a'] = {[3] = INJ_2ND('o') /* col */, [7] = INJ_2ND('a') /* caption */, [8] = INJ_2ND('o') /* colgroup */},
    ['f' - 'a'] = {[4] = INJ_2ND('o') /* form */},
    ['s' - 'a'] = {[6] = INJ_2ND('e') /* select */},
    ['t' - 'a'] = {[2] = INJ_2ND('d') | INJ_2ND('h') | INJ_2ND('r') /* td,th,tr */,
                   [5] = INJ_2ND('a') | INJ_2ND('b') | INJ_2ND('f') | INJ_2ND('h') /* table,tbody,tfoot,thead */,
                   [8] = INJ_2ND('e') /* template */},
};

static inline int inj_html_maybe_end(unsigned char first, unsigned char second, size_t len)
{
	return inj_html_pair(inj_html_second_end, first, second, len);
}

/* The attribute slot the value of the attribute just named (tag->attr)
 * goes to, for this tag (SLOT_NONE: not kept); marks it seen. First
 * occurrence wins: HTML drops repeated attributes. */
uint8_t inj_attr_slot(struct inj_tag *tag);

/* inj_attr_slot for the rarer tags (base, meta, annotation-xml, font). */
uint8_t inj_attr_slot_rare(struct inj_tag *tag, const char *low, size_t k);

static inline uint8_t inj_attr_take(struct inj_tag *tag, uint8_t bit, uint8_t slot)
{
	if (tag->seen & bit)
		return SLOT_NONE;
	tag->seen |= bit;
	return slot;
}

/* The name low[0..k) is lit: k first, so that low is read only as far as
 * it holds a name of the literal's length. */
#define INJ_ATTR_IS(low, k, lit) ((k) == sizeof(lit) - 1 && memcmp(low, lit, sizeof(lit) - 1) == 0)

/* inj_attr_slot of a name of k bytes whose first bytes, lowered, are in
 * low (at least INJ_ATTR_MAX of them when k <= INJ_ATTR_MAX; a longer
 * name is none the policy reads). The names it knows are letters only
 * (test_inject_policy checks it), so 0x20 set in every byte lowers a
 * name as well: no other byte becomes a lower-case letter. Inline: the tokenizer asks it of every
 * attribute of a tag whose attributes matter, straight from the page's
 * bytes. The form's usual tags by compares: a jump table here
 * mispredicts as the tags alternate. */
/* The lengths of the attribute names inj_attr_slot_of reads, by tag id,
 * one bit a length: a name of another length goes to no slot and sets no
 * flag, unread. */
static const uint16_t inj_attr_lens[T_VOID + 1] = {
    [T_INPUT] = 1u << 4 | 1u << 10,  /* type, form; formaction, formmethod */
    [T_BUTTON] = 1u << 4 | 1u << 10, /* likewise */
    [T_FORM] = 1u << 2 | 1u << 6,    /* id; action, method */
    [T_BASE] = 1u << 4,              /* href */
    [T_META] = 1u << 4 | 1u << 7,    /* name, content */
    [T_ANNOTATION_XML] = 1u << 8,    /* encoding */
    [T_FONT] = 1u << 4 | 1u << 5,    /* face, size; color */
};

#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline uint8_t
inj_attr_slot_of(struct inj_tag *tag, const char *low, size_t k)
{
	if (tag->id == T_INPUT || tag->id == T_BUTTON) {
		if (INJ_ATTR_IS(low, k, "formaction"))
			return inj_attr_take(tag, A_URL, SLOT_URL);
		if (INJ_ATTR_IS(low, k, "formmethod"))
			return inj_attr_take(tag, A_SHORT, SLOT_SHORT);
		if (INJ_ATTR_IS(low, k, "type"))
			return inj_attr_take(tag, A_TYPE, SLOT_TYPE);
		if (INJ_ATTR_IS(low, k, "form"))
			tag->has_form = 1;
		return SLOT_NONE;
	}
	if (tag->id == T_FORM) {
		if (INJ_ATTR_IS(low, k, "action"))
			return inj_attr_take(tag, A_URL, SLOT_URL);
		if (INJ_ATTR_IS(low, k, "method"))
			return inj_attr_take(tag, A_SHORT, SLOT_SHORT);
		if (INJ_ATTR_IS(low, k, "id")) {
			tag->has_id = 1;
			return inj_attr_take(tag, A_ID, SLOT_ID);
		}
		return SLOT_NONE;
	}
	return inj_attr_slot_rare(tag, low, k);
}

/* Decodes the character references of an attribute value in place, as
 * the tokenizer does in an attribute: numeric ones, and the named ones
 * whose expansion holds ASCII. Any other expansion becomes the byte 0x80,
 * which matches nothing; a reference the table does not know is left as
 * it is, so its '&' stays. NUL becomes 0x80 too (the browser reads
 * U+FFFD). Returns the new length (never more). */
size_t inj_decode_attr(char *v, size_t n);

/* Where a URL leads. */
enum {
	U_CROSS,    /* elsewhere, or not known for sure */
	U_SELF,     /* absolute, with the self origin */
	U_RELATIVE, /* resolved against the base URL */
	U_DOCUMENT  /* absent or "": the document's own URL, whatever the base */
};

/* The base URL's state. */
enum { B_NONE, B_SAME, B_OTHER };

/* A form start tag judged: what it would get. */
enum {
	FP_OTHER,     /* no token: another origin, dialog, unsure */
	FP_POST_SELF, /* POST to this origin: the token */
	FP_GET_SELF,  /* GET to this origin: no token (its fields go into the URL) */
	FP_POST_BASE  /* POST with a relative action, but <base> points elsewhere */
};
int inj_policy_form(struct inj_tag *tag, int base, const csrf_origin *self, int *relative);

/* A base start tag with an href: B_SAME or B_OTHER; B_NONE without href. */
int inj_policy_base(struct inj_tag *tag, const csrf_origin *self);

/* A button or input start tag in a form. */
enum {
	BTN_PLAIN = 0,        /* submits where the form does, as it does */
	BTN_POST = 1,         /* a submit button with formmethod=post */
	BTN_ACTION_SELF = 2,  /* a formaction to this origin */
	BTN_ACTION_OTHER = 4, /* a formaction elsewhere (or unsure) */
	BTN_ACTION_REL = 8,   /* a relative formaction: the base URL applies */
	BTN_GET = 16          /* a submit button with a formmethod that sends by GET */
};
int inj_policy_button(struct inj_tag *tag, int base, const csrf_origin *self);
/* 1 when inj_policy_button answers BTN_PLAIN without reading a value: a
 * button or input with neither formaction nor formmethod (it submits
 * where and as its form does), or an input without type (a text field). */
static inline int inj_policy_button_plain(const struct inj_tag *tag)
{
	return !(tag->seen & (A_URL | A_SHORT)) || (tag->id == T_INPUT && !(tag->seen & A_TYPE));
}

/* 1 for a MathML annotation-xml whose encoding makes it an HTML
 * integration point. */
int inj_policy_html_annotation(struct inj_tag *tag);

/* ---- the tree builder model (inject_tree.c) ---- */

struct inj_foreign {
	uint8_t ns;    /* NS_SVG, NS_MATH */
	uint8_t flags; /* F_* */
	uint8_t len;   /* INJ_NAME_MAX + 1: longer */
	char name[INJ_NAME_MAX];
};

/* What the form the pointer points to is. */
enum {
	CF_OTHER,  /* no token: another origin, GET, a button that sends it by GET or elsewhere, unsure */
	CF_PENDING /* a POST form to this origin, held: the token goes in at its </form> unless a button rules it out */
};

/* The state of an open table, one byte: the cell or caption open in it
 * (TC_*, bits 0-1) and its open row group (TS_*, bits 2-3). */
enum { TC_NONE, TC_TD, TC_TH, TC_CAPTION };
enum { TS_NONE, TS_TBODY, TS_THEAD, TS_TFOOT };

struct inj_tree {
	uint8_t ptr;         /* the form element pointer is set */
	uint8_t cur_form;    /* what the pointer's form is: CF_* */
	uint8_t base;        /* B_* */
	uint8_t rel_token;   /* a form with a relative action got the token */
	uint8_t cur_rel;     /* the pointer's form, or one of its buttons, has a relative action */
	uint8_t cur_id;      /* the pointer's form has an id */
	uint8_t id_token;    /* a form with an id got the token */
	uint8_t any_token;   /* a form got the token */
	uint8_t owner_out;   /* a form="" button that sends by GET or elsewhere was seen */
	uint8_t owner_rel;   /* a form="" button with a relative formaction was seen: a base elsewhere moves it */
	uint8_t head_done;   /* the meta tags went in */
	uint8_t stopped;     /* lost track of the page: no more tokens */
	uint8_t select;      /* inside a select element */
	uint8_t templates;   /* open template elements */
	uint8_t tpl_fresh;   /* the innermost one's mode is not picked for sure: every start tag goes to the model */
	uint8_t depth;       /* open foreign elements */
	uint8_t tables;      /* open tables (outside template contents), at most INJ_TABLE_MAX */
	uint8_t base_tables; /* tables open when the first base was read */
	uint8_t ghost;       /* a </form> cleared the pointer of a form without the token (outside template contents) */
	uint8_t cur_pin;     /* the pointer's form, pending, gets the injector's id and form="" on its field */
	uint8_t cur_own;     /* the pointer's form, pending, has its field name its own id (own_id) */
	uint8_t form_ids_n;  /* earlier forms' ids kept in form_ids */
	uint8_t form_ids_bad; /* an earlier form's id was not simple, or form_ids was full */
	uint8_t own_id_len;
	unsigned count; /* insertions */
	/* the depth bound's counts (INJ_DEPTH_GUARD): start tags (S) and
	 * <table> start tags (T) read so far, HTML and foreign content,
	 * noscript content read as markup too; the plain path's fast loop
	 * stops counting once the bound reaches the guard (it only grows).
	 * 64 bits: each is below the stream's length in bytes, so neither
	 * they nor S + 2T wrap (a stream of 2^62 bytes would be needed) */
	uint64_t starts, table_starts;
	unsigned status; /* CSRF_INJECT_* reasons */
	/* bit k, for the contents of the template open at level k + 1
	 * (inject_tree.c, tpl_start; levels past 64 never count as left):
	 * tpl_moved, they have left the "in template" insertion mode in every
	 * browser (a start tag other than the head's picked their mode);
	 * tpl_col, a <col> first put them "in column group"; tpl_maybe, a
	 * start tag one browser reads by the head's rules and another as any
	 * other (title, base, basefont, bgsound, noframes) came first;
	 * tpl_row, a <td> or <th> first ("in row"); tpl_tbl, another table
	 * part first ("in table", "in table body") */
	uint64_t tpl_moved, tpl_col, tpl_maybe, tpl_row, tpl_tbl;
	const csrf_origin *self;
	struct inj_foreign stack[INJ_FOREIGN_MAX];
	uint8_t table[INJ_TABLE_MAX]; /* the open tables' states, innermost last */
	/* read only below their counts (own_id_len, form_ids_n): not cleared */
	char own_id[INJ_ID_MAX];
	uint32_t form_ids[INJ_FORM_IDS]; /* hashes of earlier form start tags' (simple) ids */
};

/* What the tokenizer does after a tag. */
enum { NEXT_DATA, NEXT_RAW, NEXT_SCRIPT, NEXT_NOSCRIPT, NEXT_PLAINTEXT, NEXT_PASS };
/* What goes in right after it. */
enum { INS_NONE, INS_META, INS_HOLD /* a form that may get the token: hold its bytes */ };

/* 1 when a tag in HTML content changes nothing the model follows (most
 * tags): the tokenizer then goes straight on. Bit masks of the ids rather
 * than a switch: this runs for every tag whose name is looked up, and a
 * jump table there is an indirect branch that mispredicts whenever the
 * tags alternate.
 *   - always: T_OTHER and the ids past T_PLAINTEXT not named below
 *     (keygen, font and the foreign ones, the breakout and void ones);
 *   - end tags only: the raw-text ones (their start tag starts raw text),
 *     base, head, button, input, svg, math, frameset;
 *   - outside tables only: the table parts (dropped there), and the end
 *     tag of table;
 *   - never: form, template, select. */
#define INJ_BIT(id) (UINT64_C(1) << (id))
#define INJ_IDS_PARTS                                                                                                  \
	(INJ_BIT(T_CAPTION) | INJ_BIT(T_COLGROUP) | INJ_BIT(T_COL) | INJ_BIT(T_TBODY) | INJ_BIT(T_THEAD) |             \
	 INJ_BIT(T_TFOOT) | INJ_BIT(T_TR) | INJ_BIT(T_TD) | INJ_BIT(T_TH))
#define INJ_IDS_END                                                                                                    \
	(((INJ_BIT(T_PLAINTEXT + 1) - 1) & ~INJ_BIT(T_OTHER)) | INJ_BIT(T_BASE) | INJ_BIT(T_HEAD) |                    \
	 INJ_BIT(T_BUTTON) | INJ_BIT(T_INPUT) | INJ_BIT(T_SVG) | INJ_BIT(T_MATH) | INJ_BIT(T_FRAMESET))
#define INJ_IDS_ALWAYS                                                                                                 \
	(((INJ_BIT(T_VOID + 1) - 1) & ~(INJ_IDS_END | INJ_IDS_PARTS | INJ_BIT(T_TABLE) | INJ_BIT(T_FORM) |             \
	                                INJ_BIT(T_TEMPLATE) | INJ_BIT(T_SELECT))) |                                    \
	 INJ_BIT(T_OTHER))
_Static_assert(T_VOID < 64, "the tag ids fit a 64-bit mask");
/* The ids inj_tree_plain_id answers 1 for in HTML content outside select,
 * the model not stopped, one bit an id (T_OTHER's among them): for an end
 * tag or a start tag, with tables open or none. Four masks a page: the
 * tokenizer keeps them (with meta taken out where it raises referrer
 * policies), so that a name it looks up costs one bit test. Not where
 * template contents wait for the start tag that picks their mode
 * (tpl_fresh): there no start tag is plain, and plain_tag reads none. */
static inline uint64_t inj_tree_plain_ids(int is_end, int tables_open)
{
	uint64_t end = is_end ? INJ_IDS_END | INJ_BIT(T_TABLE) : 0, outside = tables_open ? 0 : ~UINT64_C(0);
	return INJ_IDS_ALWAYS | (end & ~INJ_BIT(T_TABLE)) | (outside & (INJ_IDS_PARTS | (end & INJ_BIT(T_TABLE))));
}
static inline int inj_tree_plain_id(const struct inj_tree *t, uint8_t id, int is_end)
{
	if (t->depth > 0 || t->select || t->stopped)
		return 0;
	if (t->tpl_fresh && !is_end) /* any start tag may pick the template contents' mode */
		return 0;
	if (id == T_OTHER) /* the most common by far */
		return 1;
	return (int)((inj_tree_plain_ids(is_end, (t->tables | t->templates) != 0) >> (id & 63)) & 1);
}

static inline int inj_tree_plain(const struct inj_tree *t, const struct inj_tag *tag)
{
	return inj_tree_plain_id(t, tag->id, tag->is_end);
}

/* A tag in HTML content outside select (the model not stopped) whose
 * move the tokenizer makes itself, without inj_tree_tag (a form page's
 * usual tags): a form end tag, which clears the form element pointer
 * (inj_tree_form_close), and a button or input start tag that
 * inj_policy_button answers BTN_PLAIN without a look (most of them),
 * which moves nothing (inj_tree_tag would make the same move and answer
 * NEXT_DATA and INS_NONE: test_inject_policy checks it). The form end tag
 * there is the tokenizer's alone: every one that reaches its tag_end
 * takes this way, and inj_tree_tag has no move for it (html_end leaves
 * it to inj_tree_form_close, the only place that makes it). */
static inline int inj_tree_quiet(const struct inj_tree *t, const struct inj_tag *tag)
{
	if (t->depth > 0 || t->select || t->stopped)
		return 0;
	if (tag->is_end)
		return tag->id == T_FORM;
	/* in template contents whose mode it may pick (tpl_fresh): to the model */
	return (tag->id == T_BUTTON || tag->id == T_INPUT) && !t->tpl_fresh && inj_policy_button_plain(tag);
}

/* A form end tag in HTML content outside select: the pointer is cleared,
 * but not inside template contents (where it is not set). */
static inline void inj_tree_form_close(struct inj_tree *t)
{
	if (t->templates == 0) {
		/* the pointer's form got no token (one that did is cleared by
		 * inj_tree_form_end): it may stay an ancestor of what follows */
		t->ghost |= t->ptr;
		t->ptr = 0;
		t->cur_form = CF_OTHER;
	}
}

/* A table tag in HTML content outside select (a table page's most
 * common tags: <tr>, <td>, </td>): moves the table modes and returns 1
 * when that is all it does (it inserts nothing, settles no form, stops
 * nothing); 0 for any other tag, which goes to inj_tree_tag. */
int inj_tree_table_tag(struct inj_tree *t, const struct inj_tag *tag);

/* A form start tag in HTML content outside select, the model not
 * stopped (a form page's usual one): inj_tree_form_start makes its move
 * (html_start's, which stops nothing and inserts no meta), answering
 * NEXT_DATA and INS_HOLD or INS_NONE, as inj_tree_tag does with it. */
static inline int inj_tree_form_usual(const struct inj_tree *t, const struct inj_tag *tag)
{
	return tag->id == T_FORM && !tag->is_end && !t->stopped && t->depth == 0 && !t->select;
}
int inj_tree_form_start(struct inj_tree *t, struct inj_tag *tag);

/* 1 when a start tag read now may sit at or past INJ_DEPTH_GUARD open
 * elements (S + 2T + 3, the counts taken as far as the guard needs). */
static inline int inj_tree_deep(const struct inj_tree *t)
{
	/* each count is below the stream's bytes: S + 2T cannot wrap */
	return t->starts + 2 * t->table_starts >= INJ_DEPTH_GUARD - 3;
}

/* 1 when a form start tag whose name has just been read (HTML content
 * outside select and template contents, the model not stopped, no form
 * element pointer) may become a pending form that gets the injector's id
 * (inj_tree_deep): the tokenizer holds its bytes from its name's end on,
 * until its attributes tell whether it has an id of its own. */
static inline int inj_tree_pin_maybe(const struct inj_tree *t)
{
	return inj_tree_deep(t) && !t->stopped && t->depth == 0 && !t->select && t->templates == 0 && !t->ptr;
}

void inj_tree_reset(struct inj_tree *t);
/* A complete tag: the tree builder's move, the tokenizer's next state
 * (*next) and the element to insert after it (returned). */
int inj_tree_tag(struct inj_tree *t, struct inj_tag *tag, uint8_t *next);
/* 1 while a form waits for its end tag to be judged (the tokenizer holds
 * its bytes). */
static inline int inj_tree_pending(const struct inj_tree *t)
{
	return !t->stopped && t->ptr && t->cur_form == CF_PENDING;
}
/* The name of an end tag in HTML content is "form": 1 when the field
 * goes in right there, before the end tag clears the form element
 * pointer (the pointer's form posts to this origin and no button of it
 * sends it by GET or elsewhere). Inline: a form page's every form asks. */
static inline int inj_tree_form_end(struct inj_tree *t)
{
	if (!inj_tree_pending(t) || t->depth > 0 || t->select || t->templates > 0)
		return 0;
	t->cur_form = CF_OTHER; /* the end tag clears the pointer: no ghost (inj_tree_form_close) */
	t->ptr = 0;
	t->rel_token |= t->cur_rel;
	t->id_token |= t->cur_id;
	t->any_token = 1;
	t->count++;
	return 1;
}
/* The held form's bytes overflowed the hold: no token for it. */
void inj_tree_too_long(struct inj_tree *t);
/* The injector's id for the pending form (cur_pin) could not be drawn:
 * no token for it. */
void inj_tree_pin_failed(struct inj_tree *t);
/* A <button> or <input> start tag inside <noscript> (read as markup, as a
 * browser without scripting does) with a formmethod or formaction
 * attribute, and has_form when it has a form="" one too: its values are
 * not read, so it counts as one that sends by GET or elsewhere. */
void inj_tree_noscript_button(struct inj_tree *t, int has_form);
/* The stream ended: the CSRF_INJECT_* bits that only its end can tell. */
unsigned inj_tree_finish(const struct inj_tree *t);
/* 1 when "<![CDATA[" opens a CDATA section: inside foreign content. */
int inj_tree_cdata(const struct inj_tree *t);
/* The model lost track (reason: a CSRF_INJECT_* bit): no more tokens. */
void inj_tree_stop(struct inj_tree *t, unsigned reason);
/* A table tag (T_TABLE to T_TH; is_end for an end tag) read inside
 * <noscript> as a browser without scripting reads it; *open counts the
 * tables opened inside that noscript and still open. 1 when it could
 * change the table modes outside the noscript in a way the model does not
 * follow (a table left open in it, a cell or table outside it closed). */
int inj_tree_noscript_table(const struct inj_tree *t, uint8_t id, int is_end, uint8_t *open);
/* 1 when the name of a start tag read inside <noscript> (which scripting
 * makes raw text) could change what a browser without scripting builds in
 * a way the model cannot follow. */
int inj_tree_noscript_unsafe(uint8_t id);

/* ---- what the tokenizer (inject.c) and the noscript reading
 * (inject_noscript.c) both scan with: inlined in each ---- */

/* Character classes, one table lookup a byte, so the states that read
 * names and values scan a run of bytes in a tight loop. */
enum {
	C_WS = 1,        /* HTML whitespace */
	C_ALPHA = 2,     /* ASCII letter */
	C_SAFE = 4,      /* [A-Za-z0-9_-]: field names and tokens */
	C_NAME_END = 8,  /* ends a tag name: whitespace, '/', '>' */
	C_ATTR_END = 16, /* ends an attribute name: those and '=' */
	C_UQ_END = 32,   /* ends an unquoted value: whitespace, '>' */
	C_FIRST = 64     /* a letter that starts a name inj_tag_id_html knows */
};
#define CLS_WS(c) ((c) == ' ' || (c) == '\t' || (c) == '\n' || (c) == '\f' || (c) == '\r')
#define CLS_ALPHA(c) (((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z'))
#define CLS_FIRST(c) (CLS_ALPHA(c) && ((INJ_HTML_FIRST >> ((((c) | 0x20) - 'a') & 31)) & 1))
#define CLS(c)                                                                                                         \
	((CLS_WS(c) ? C_WS | C_NAME_END | C_ATTR_END | C_UQ_END : 0) | (CLS_ALPHA(c) ? C_ALPHA | C_SAFE : 0) |         \
	 (((c) >= '0' && (c) <= '9') || (c) == '_' || (c) == '-' ? C_SAFE : 0) |                                       \
	 ((c) == '/' ? C_NAME_END | C_ATTR_END : 0) | ((c) == '>' ? C_NAME_END | C_ATTR_END | C_UQ_END : 0) |          \
	 ((c) == '=' ? C_ATTR_END : 0) | (CLS_FIRST(c) ? C_FIRST : 0))
#define CLS4(c) CLS(c), CLS((c) + 1), CLS((c) + 2), CLS((c) + 3)
#define CLS16(c) CLS4(c), CLS4((c) + 4), CLS4((c) + 8), CLS4((c) + 12)
#define CLS64(c) CLS16(c), CLS16((c) + 16), CLS16((c) + 32), CLS16((c) + 48)
static const uint8_t inj_cls[256] = {CLS64(0), CLS64(64), CLS64(128), CLS64(192)};

/* C_NAME_END of a byte of the scanner's end mask (every byte up to ' ',
 * '/', '=', '>': all under 64), one bit a byte: a shift of a constant
 * rather than a load of inj_cls, for plain_fast's usual tag
 * (test_inject_policy checks it against inj_cls). */
#define INJ_NAME_END_BITS                                                                                              \
	((UINT64_C(1) << ' ') | (UINT64_C(1) << '\t') | (UINT64_C(1) << '\n') | (UINT64_C(1) << '\f') |                \
	 (UINT64_C(1) << '\r') | (UINT64_C(1) << '/') | (UINT64_C(1) << '>'))

static inline int inj_is_ws(unsigned char c)
{
	return inj_cls[c] & C_WS;
}

static inline int inj_is_alpha(unsigned char c)
{
	return inj_cls[c] & C_ALPHA;
}

static inline unsigned char inj_lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

/* The raw-text element names, by tag id (T_SCRIPT to T_NOSCRIPT), for
 * matching their end tag. */
static inline const char *inj_raw_name(uint8_t id, uint8_t *len)
{
	static const char *const names[] = {"script", "style",   "textarea", "title",   "xmp",
	                                    "iframe", "noembed", "noframes", "noscript"};
	const char *n = names[id - T_SCRIPT];
	*len = (uint8_t)strlen(n);
	return n;
}

/* ---- the block scanner (inject_scan.c) ---- */

/* The bytes of a 64-byte block the tokenizer's states stop at, bit k for
 * byte k; every path computes exactly these. */
struct inj_block {
	uint64_t lt;  /* '<': where text, raw text and script data may end */
	uint64_t gq;  /* '>', '"', '\'': where a quoted value or a tag may end */
	uint64_t end; /* a byte up to ' ' (whitespace among them), '/', '=', '>': where a name or an unquoted value
	                 may end (inj_cls[] tells which) */
};

/* The classifier of one instruction set: the masks of the blocks * 64
 * bytes at p into out[0..blocks). */
struct inj_scan_path {
	const char *name;
	void (*classify)(const char *p, size_t blocks, struct inj_block *out);
	/* the tokenizer skips the tags that change nothing (most of a page's)
	 * from '<' to '>' without reading their attributes (inject.c,
	 * plain_tag); 0 on the reference path, which reads every tag in full */
	int skip_plain;
};

/* The paths, by the names CSRF_SCAN takes. SCALAR reads a byte at a time
 * and every tag in full: the reference the others are tested against. */
enum {
	INJ_SCAN_BEST = -1,
	INJ_SCAN_SCALAR,
	INJ_SCAN_PORTABLE,
	INJ_SCAN_SSE2,
	INJ_SCAN_AVX2,
	INJ_SCAN_NEON,
	INJ_SCAN_PATHS
};

/* The path in use: chosen at the first call, the best this CPU runs, or
 * the one the environment variable CSRF_SCAN names (when it runs here). */
const struct inj_scan_path *inj_scan_path(void);
/* The masks of the n < 64 bytes at p (the end of a chunk), a byte at a
 * time, the bits from n on clear. */
void inj_scan_tail(const char *p, size_t n, struct inj_block *b);
/* For tests: use this path (INJ_SCAN_BEST: the best) from now on, in
 * every injector of the process. -1 when this build or CPU lacks it. */
int csrfi_inject_scan_force(int path);
/* The path's name (INJ_SCAN_BEST: the one in use), NULL for none. */
const char *csrfi_inject_scan_name(int path);

/* ---- the noscript reading (inject_noscript.c) ---- */

/* The content of a noscript element as a browser without scripting
 * tokenizes it (HTML, 13.2.5 Tokenization), while the tokenizer reads it
 * as raw text, as a browser with scripting does (13.2.5.3 RAWTEXT
 * state): enough to know whether it is back in its data state where the
 * raw text ends. */
enum {
	M_TEXT,         /* 13.2.5.1 Data state */
	M_LT,           /* 13.2.5.6 Tag open state */
	M_END_OPEN,     /* 13.2.5.7 End tag open state */
	M_NAME,         /* 13.2.5.8 Tag name state */
	M_BEFORE_ATTR,  /* 13.2.5.32 Before attribute name state */
	M_ATTR,         /* 13.2.5.33 Attribute name state */
	M_AFTER_ATTR,   /* 13.2.5.34 After attribute name state */
	M_BEFORE_VALUE, /* 13.2.5.35 Before attribute value state */
	M_DQ,           /* 13.2.5.36 Attribute value (double-quoted) state */
	M_SQ,           /* 13.2.5.37 Attribute value (single-quoted) state */
	M_UQ,           /* 13.2.5.38 Attribute value (unquoted) state */
	M_AFTER_VALUE,  /* 13.2.5.39 After attribute value (quoted) state */
	M_SELF_CLOSING, /* 13.2.5.40 Self-closing start tag state */
	M_RAW,          /* 13.2.5.3 RAWTEXT state (iframe, style) */
	M_RAW_LT,       /* 13.2.5.12 RAWTEXT less-than sign state */
	M_RAW_END,      /* 13.2.5.13 RAWTEXT end tag open and 13.2.5.14 RAWTEXT end tag name states */
	M_BAD           /* none: something the injector does not follow: stop at the end */
};

struct inj_noscript {
	uint8_t match;    /* of "</noscript" */
	uint8_t lt_clean; /* the markup reading was in its data state at that '<' */
	uint8_t state;    /* M_* */
	uint8_t is_end;
	uint8_t raw; /* T_IFRAME or T_STYLE: its raw text, read as markup */
	uint8_t rmatch;
	uint8_t name_len;
	char name[INJ_NAME_MAX];
	uint8_t button; /* the tag is a button or input start tag: its attribute names are read */
	uint8_t bits;   /* NSB_* of its attributes */
	uint8_t attr_len;
	char attr[INJ_ATTR_MAX];
	uint8_t tables; /* tables opened in the noscript and still open */
};

/* A noscript start tag ended: its content begins. */
void inj_noscript_begin(struct inj_noscript *ns);
/* Reads noscript content from chunk[i] on (i <= len) through the matcher
 * of its end ("</noscript" and a space, '/' or '>') and the markup
 * reading, whose finds (a submitter, tables) go to the tree model.
 * Returns the index of the byte that completes the end (not read by the
 * markup reading), or where the reading went M_BAD (past that byte), or
 * len. The tokenizer's hold check, byte by byte: a held form whose bytes
 * from start on pass room (SIZE_MAX: no form held) is too long. */
size_t inj_noscript_scan(struct inj_noscript *ns, struct inj_tree *tree, const char *chunk, size_t i, size_t len,
                         size_t start, size_t room);

#endif /* CSRF_INJECT_SHARED_H */
