/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * inject.c - the streaming HTML injector's tokenizer: the states of the
 * HTML5 tokenizer that decide where a tag starts and ends (data, tags and
 * attributes, comments, CDATA, raw text, script data and its escapes),
 * and the output. Runs of text, names and values are skipped whole: the
 * block scanner (inject_scan.c) gives each 64 bytes of a chunk as bitmasks
 * of the bytes the states stop at, and a state goes to the next set bit
 * (the character classes of inject_shared.h then tell which of those
 * bytes ends its run). Every complete
 * tag goes to the tree builder model (inject_tree.c), which says what the
 * browser does with it and what goes in after it; the name of a form's
 * end tag asks it whether the hidden field goes in there. The content of
 * a noscript element is read as markup too (inject_noscript.c). The input
 * passes through unchanged; nothing is held between chunks: the whole
 * state is struct csrf_inject, bounded by CSRF_INJECT_STATE_MAX (csrf.h).
 */
#include "inject_shared.h"

#include <stdalign.h>
#include <stddef.h>
#if defined(__SSE2__)
#include <emmintrin.h> /* value_keep_step's look for '&' and NUL */
#endif

/* The tokenizer's steps: inlined where they are called, so that a tag
 * costs no function calls. */
#if defined(__GNUC__)
#define STEP static inline __attribute__((always_inline))
#else
#define STEP static inline
#endif

#define INPUT_PRE "<input type=\"hidden\" name=\""
#define INPUT_MID "\" value=\""
#define INPUT_END "\">"
#define META_PRE "<meta name=\"csrf-param\" content=\""
#define META_MID "\"><meta name=\"csrf-token\" content=\""
#define META_END "\">"
/* what CSRF_INJECT_OPT_RAISE_REFERRER adds after a no-referrer meta */
#define REFERRER_EL "<meta name=\"referrer\" content=\"" CSRF_REFERRER_RAISED "\">"
#define LIT_LEN(s) (sizeof(s) - 1)
/* A form read deep in the tree (inj_tree_deep) without an id of its own
 * gets the injector's: PIN_ATTR right after "<form", random for each
 * form, and its field names it, PIN_FORM replacing the field's last '>'
 * (docs/architecture.md, "The tree depth cap"). */
#define PIN_RAND 12                          /* random bytes of an id: 96 bits */
#define PIN_CHARS CSRF_B64_ENC_LEN(PIN_RAND) /* their base64url */
#define PIN_ATTR_PRE " id=\"csrf-"
#define PIN_ATTR_LEN (LIT_LEN(PIN_ATTR_PRE) + PIN_CHARS + 1)
#define PIN_FORM_PRE " form=\"csrf-"
#define PIN_FORM_LEN (LIT_LEN(PIN_FORM_PRE) + PIN_CHARS + LIT_LEN(INPUT_END))
/* One with an id of its own, after a ghost: its field names that id
 * (inj_tree.cur_own), OWN_FORM_PRE replacing the field's last '>'. */
#define OWN_FORM_PRE " form=\""
#define OWN_FORM_LEN (LIT_LEN(OWN_FORM_PRE) + INJ_ID_MAX + LIT_LEN(INPUT_END))
#define INPUT_MAX                                                                                                      \
	(LIT_LEN(INPUT_PRE) + CSRF_FIELD_NAME_MAX + LIT_LEN(INPUT_MID) + CSRF_TOKEN_LEN + LIT_LEN(INPUT_END) - 1 +     \
	 OWN_FORM_LEN)
#define META_MAX (LIT_LEN(META_PRE) + CSRF_FIELD_NAME_MAX + LIT_LEN(META_MID) + CSRF_TOKEN_LEN + LIT_LEN(META_END))

/* Tokenizer states, named and numbered after the sections of the HTML
 * standard's tokenizer (WHATWG HTML, 13.2.5 Tokenization) they follow,
 * as lexbor numbers its states. Where one state here stands for several
 * of the standard's, all are named; the states it leaves out (DOCTYPE,
 * character references, the comment's less-than sign states) cannot end
 * a tag, a comment or raw text elsewhere than the state they are folded
 * into does. */
enum {
	S_DATA,               /* 13.2.5.1 Data state */
	S_TAG_OPEN,           /* 13.2.5.6 Tag open state */
	S_END_TAG_OPEN,       /* 13.2.5.7 End tag open state */
	S_TAG_NAME,           /* 13.2.5.8 Tag name state */
	S_BEFORE_ATTR_NAME,   /* 13.2.5.32 Before attribute name state */
	S_ATTR_NAME,          /* 13.2.5.33 Attribute name state */
	S_AFTER_ATTR_NAME,    /* 13.2.5.34 After attribute name state */
	S_BEFORE_ATTR_VALUE,  /* 13.2.5.35 Before attribute value state */
	S_ATTR_VALUE_DQ,      /* 13.2.5.36 Attribute value (double-quoted) state */
	S_ATTR_VALUE_SQ,      /* 13.2.5.37 Attribute value (single-quoted) state */
	S_ATTR_VALUE_UQ,      /* 13.2.5.38 Attribute value (unquoted) state */
	S_AFTER_ATTR_VALUE_Q, /* 13.2.5.39 After attribute value (quoted) state */
	S_SELF_CLOSING,       /* 13.2.5.40 Self-closing start tag state */
	S_MARKUP_DECL,        /* 13.2.5.42 Markup declaration open state: after "<!" */
	S_MARKUP_DASH,        /* 13.2.5.42 Markup declaration open state: after "<!-" */
	S_CDATA_OPEN,         /* 13.2.5.42 Markup declaration open state: matching "[CDATA[" in foreign content */
	S_BOGUS_COMMENT,      /* 13.2.5.41 Bogus comment state; also 13.2.5.53-68 DOCTYPE states, and CDATA in
	                         HTML content: all end at the first '>' */
	S_COMMENT_START,      /* 13.2.5.43 Comment start state */
	S_COMMENT_START_DASH, /* 13.2.5.44 Comment start dash state */
	S_COMMENT,            /* 13.2.5.45 Comment state (13.2.5.46-49, its less-than sign states, folded in) */
	S_COMMENT_END_DASH,   /* 13.2.5.50 Comment end dash state */
	S_COMMENT_END,        /* 13.2.5.51 Comment end state */
	S_COMMENT_END_BANG,   /* 13.2.5.52 Comment end bang state */
	S_CDATA,              /* 13.2.5.69 CDATA section state */
	S_CDATA_BRACKET,      /* 13.2.5.70 CDATA section bracket state */
	S_CDATA_END,          /* 13.2.5.71 CDATA section end state */
	S_RAW,                /* 13.2.5.2 RCDATA state and 13.2.5.3 RAWTEXT state: textarea, title, style, ... */
	S_RAW_LT,             /* 13.2.5.9 RCDATA and 13.2.5.12 RAWTEXT less-than sign states */
	S_END_MATCH,          /* "</" seen in raw text or script: matching the name; 13.2.5.10-11 RCDATA,
	                         13.2.5.13-14 RAWTEXT, 13.2.5.16-17 script data, 13.2.5.24-25 script data escaped
	                         end tag open and end tag name states */
	S_SCRIPT,             /* 13.2.5.4 Script data state */
	S_SD_LT,              /* 13.2.5.15 Script data less-than sign state */
	S_SD_ESC_START,       /* 13.2.5.18 Script data escape start state */
	S_SD_ESC_START_DASH,  /* 13.2.5.19 Script data escape start dash state */
	S_SD_ESC,             /* 13.2.5.20 Script data escaped state */
	S_SD_ESC_DASH,        /* 13.2.5.21 Script data escaped dash state */
	S_SD_ESC_DASH_DASH,   /* 13.2.5.22 Script data escaped dash dash state */
	S_SD_ESC_LT,          /* 13.2.5.23 Script data escaped less-than sign state */
	S_SD_DESC_START,      /* 13.2.5.26 Script data double escape start state */
	S_SD_DESC,            /* 13.2.5.27 Script data double escaped state */
	S_SD_DESC_DASH,       /* 13.2.5.28 Script data double escaped dash state */
	S_SD_DESC_DASH_DASH,  /* 13.2.5.29 Script data double escaped dash dash state */
	S_SD_DESC_LT,         /* 13.2.5.30 Script data double escaped less-than sign state */
	S_SD_DESC_END,        /* 13.2.5.31 Script data double escape end state */
	S_NOSCRIPT,           /* 13.2.5.3 RAWTEXT state of noscript with scripting on; read as markup too
	                         (inject_noscript.c) */
	S_PASS                /* 13.2.5.5 PLAINTEXT state, or the model stopped: the rest passes */
};

struct csrf_inject {
	/* tokenizer */
	uint8_t state;
	uint8_t ret;      /* state to go back to when an end tag does not match */
	uint8_t raw;      /* tag id of the open raw-text element */
	uint8_t match;    /* characters of an end tag name / "script" / "[CDATA[" matched */
	uint8_t mismatch; /* the "script" of a double escape failed to match */
	uint8_t failed;   /* emit stopped a feed: the stream is broken */
	uint8_t fresh;    /* finish ran: the next feed starts a new stream */
	/* inj_tree_plain_ids(is_end, tables open), T_META out of the start
	 * tags' with CSRF_INJECT_OPT_RAISE_REFERRER: what plain_tag lets by
	 * (set with the options) */
	uint64_t plain_ids[2][2];

	struct inj_noscript ns; /* noscript: the raw text's end, and the same bytes read as markup */

	unsigned last_status; /* of the stream finish ended */
	struct inj_tag tag;
	struct inj_tree tree;

	/* configuration */
	csrf_origin self;
	unsigned options; /* CSRF_INJECT_OPT_* */
	uint8_t fed;      /* the stream has been fed: options are fixed */
	uint16_t input_len, meta_len;
	char input_el[INPUT_MAX];
	char meta_el[META_MAX];
	char referrer_el[LIT_LEN(REFERRER_EL)];

	/* the bytes of a POST form to this origin, from the end of its start
	 * tag on (from its name's end on for a form read deep in the tree:
	 * pin_form), held until every submitter of it has been read */
	uint8_t holding;
	uint8_t pin_form;    /* a form start tag read deep (inj_tree_pin_maybe), its '>' not read yet */
	uint8_t pin_hold;    /* the hold began at that form's name's end, and still holds */
	uint8_t pin_id;      /* PIN_*: the held form's field names the injector's id (pin_attr) or the form's own */
	uint32_t hold_field; /* where in the hold the start tag ends: the field goes there */
	char pin_attr[PIN_ATTR_LEN];
	uint32_t hold_len;
	uint32_t hold_meta;     /* where the meta tags are in the hold (HOLD_NONE: not there) */
	uint32_t hold_referrer; /* where the raise goes in the hold, not copied into it (HOLD_NONE: nowhere) */
	char hold[CSRF_INJECT_HOLD_MAX];
};

_Static_assert(sizeof(struct csrf_inject) <= CSRF_INJECT_STATE_MAX, "injector state over its bound");
/* csrf_inject_init clears the bytes before tag: the tokenizer's, the
 * noscript reading's and the last status */
_Static_assert(offsetof(struct csrf_inject, ns) < offsetof(struct csrf_inject, tag) &&
                   offsetof(struct csrf_inject, last_status) < offsetof(struct csrf_inject, tag),
               "what init clears comes first");
_Static_assert(INJ_NAME_MAX >= 9, "plain_tag lowers nine bytes of a name into tag.name");
_Static_assert(INJ_ATTR_MAX <= 16, "attr_run judges a name by its first sixteen bytes");
_Static_assert(INJ_URL_MAX < UINT16_MAX && INPUT_MAX < UINT16_MAX && META_MAX < UINT16_MAX, "lengths fit");

/* The chunk as the states read it: the masks of a window of up to
 * SCAN_WINDOW 64-byte blocks (counted from the chunk's start), classified
 * at once by the path in use, then read by the states; the next window
 * when a state reads past it. */
#define SCAN_WINDOW 32
struct scan {
	const char *p;
	size_t len;
	size_t base, end; /* the window: p[base..end) */
	size_t span;      /* end - base: scan_next's one compare */
	const struct inj_scan_path *path;
	struct inj_block m[SCAN_WINDOW + 1]; /* one more, zero: the fast read below takes two blocks */
	uint64_t plain[2];                   /* plain_id's masks for start and end tags, while plain_fast reads */
};
enum { K_LT, K_GQ, K_END };

#if defined(__GNUC__)
#define CTZ64(m) ((size_t)__builtin_ctzll(m))
#define CTZ32(m) ((unsigned)__builtin_ctzll(m))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define COLD __attribute__((noinline, cold))
#define NOINLINE __attribute__((noinline))
#else
static size_t CTZ64(uint64_t m)
{
	size_t k = 0;
	while (!(m & 1)) {
		m >>= 1;
		k++;
	}
	return k;
}
#define CTZ32(m) ((unsigned)CTZ64(m))
#define LIKELY(x) (x)
#define UNLIKELY(x) (x)
#define COLD
#define NOINLINE
#endif
/* plain_fast's loops each at the start of a 64-byte line (GCC on x86-64):
 * where they fell by the layout of the code before them moved
 * socat.html's clock by up to 13% either way (docs/architecture.md,
 * "plain_fast's block set-up"), which hid what a change of the loop
 * itself was worth. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define HOTLOOPS __attribute__((optimize("align-loops=64")))
#else
#define HOTLOOPS
#endif

/* Mask k of block w of the window. */
static inline uint64_t mask_of(const struct scan *s, size_t w, int k)
{
	return k == K_LT ? s->m[w].lt : k == K_GQ ? s->m[w].gq : s->m[w].end;
}

/* The bits of mask k for the 64 bytes from i on (i in the window), bit 0
 * for i: the rest of its block and the start of the next (scan_far's
 * step). */
static inline uint64_t next64(const struct scan *s, size_t i, int k)
{
	size_t off = i - s->base, w = off >> 6;
	unsigned sh = (unsigned)(off & 63);
	return (mask_of(s, w, k) >> sh) | ((mask_of(s, w + 1, k) << 1) << (63 - sh));
}

/* The masks of the chunk's last t < 64 bytes at q, for a path that skips
 * plain tags (a vector or word one): the path classifies them as a block
 * of their copy, zeros after them, the bits from t on cleared, which are
 * the masks inj_scan_tail computes a byte at a time (a NUL is in the end
 * mask only, and those bits go), at a fraction of its cost on the 20-form
 * page (avx2: 845 instructions a page, now 170). The reference path keeps
 * inj_scan_tail, so that it computes every mask by itself. Out of line:
 * its buffer would cost scan_window's every call. */
static NOINLINE void scan_tail(const struct inj_scan_path *path, const char *q, size_t t, struct inj_block *out)
{
	char pad[64];
	memset(pad, 0, sizeof pad);
	memcpy(pad, q, t);
	path->classify(pad, 1, out);
	uint64_t keep = (UINT64_C(1) << t) - 1; /* t < 64 */
	out->lt &= keep;
	out->gq &= keep;
	out->end &= keep;
}

/* Classifies the window of blocks from the one that holds i on. */
static void scan_window(struct scan *s, size_t i)
{
	size_t b = i & ~(size_t)63, n = s->len - b, full = n / 64;
	if (full > SCAN_WINDOW)
		full = SCAN_WINDOW;
	s->path->classify(s->p + b, full, s->m);
	size_t blocks = full;
	if (full < SCAN_WINDOW && n % 64) { /* the chunk's last bytes: its end, no read past it */
		if (s->path->skip_plain)
			scan_tail(s->path, s->p + b + 64 * full, n % 64, &s->m[blocks++]);
		else
			inj_scan_tail(s->p + b + 64 * full, n % 64, &s->m[blocks++]);
	}
	memset(&s->m[blocks], 0, sizeof s->m[blocks]);
	s->base = b;
	s->end = b + 64 * blocks < s->len ? b + 64 * blocks : s->len;
	s->span = s->end - b;
}

/* scan_next when the rest of i's block and the next hold no byte of the
 * mask (i is then the block after those), or i is outside the window. next64 sees the window only (the block after it
 * reads as zero), so it goes at most to the window's end at a time. */
static COLD size_t scan_far(struct scan *s, size_t i, int k)
{
	if (k == K_LT) {
		/* a long run of text (or raw text): memchr crosses it at memory
		 * speed, and leaves the blocks there unclassified */
		const char *q = i < s->len ? memchr(s->p + i, '<', s->len - i) : NULL;
		return q ? (size_t)(q - s->p) : s->len;
	}
	for (;;) {
		if (i >= s->len)
			return s->len;
		if (i < s->base || i >= s->end)
			scan_window(s, i);
		uint64_t m = next64(s, i, k);
		if (m)
			return i + CTZ64(m);
		i = s->end - i > 64 ? i + 64 : s->end;
	}
}

/* The index of the first byte from i on that is in the mask k (K_LT:
 * '<'; K_GQ: '>' or a quote; K_END: a byte up to ' ', '/', '=' or '>'),
 * or len. */
STEP size_t scan_next(struct scan *s, size_t i, int k)
{
	size_t off = i - s->base;
	if (UNLIKELY(off >= s->span)) /* also i < base */
		return scan_far(s, i, k);
	/* the rest of i's block, then the next block (the one after the
	 * window reads as zero) */
	size_t w = off >> 6;
	uint64_t m = mask_of(s, w, k) >> (off & 63);
	if (m)
		return i + CTZ64(m);
	m = mask_of(s, w + 1, k);
	if (m)
		return s->base + 64 * (w + 1) + CTZ64(m);
	/* on from the block after those two, or from the window's end when
	 * the second was past it (unclassified) */
	size_t next = s->base + 64 * (w + 2);
	return scan_far(s, next < s->end ? next : s->end, k);
}

/* The index of the first byte from i on of the classes in stop
 * (C_NAME_END, C_ATTR_END or C_UQ_END), or len: each is in the mask
 * K_END, which inj_cls[] then sorts. */
STEP size_t scan_until(struct scan *s, size_t i, uint8_t stop)
{
	for (;; i++) {
		i = scan_next(s, i, K_END);
		if (i == s->len || (inj_cls[(unsigned char)s->p[i]] & stop))
			return i;
	}
}

/* The index of the quote q that ends a value from i on, or len. */
STEP size_t scan_quote(struct scan *s, size_t i, char q)
{
	for (;; i++) {
		i = scan_next(s, i, K_GQ);
		if (i == s->len || s->p[i] == q)
			return i;
	}
}

/* The index of the first ch in p[0..n), or n: for the rarer states
 * (comments, CDATA), which stop at one byte the masks do not hold. */
static inline size_t find_byte(const char *p, size_t n, char ch)
{
	const char *q = n ? memchr(p, ch, n) : NULL;
	return q ? (size_t)(q - p) : n;
}

/* ---- tags that change nothing, skipped whole ---- */

/* Where a tag whose attributes are not read ends. Only a quote that
 * opens a value can hide a '>', and a quote opens one only in the before
 * attribute value state (after '=', 13.2.5.35): the states of 13.2.5.8
 * and 13.2.5.32-40 as far as they decide that, one byte a move (a byte
 * the standard reconsumes moves in one step here to where it lands). */
enum { PT_TAG_NAME, PT_BEFORE_NAME, PT_NAME, PT_AFTER_NAME, PT_BEFORE_VALUE, PT_UNQUOTED, PT_AFTER_QUOTED, PT_SLASH };
/* The byte classes of those moves, other than '>' and the quotes: 0 any
 * other byte, 1 whitespace, 2 '/', 3 '='. */
#define PTC(c) (CLS_WS(c) ? 1 : (c) == '/' ? 2 : (c) == '=' ? 3 : 0)
#define PTC4(c) PTC(c), PTC((c) + 1), PTC((c) + 2), PTC((c) + 3)
#define PTC16(c) PTC4(c), PTC4((c) + 4), PTC4((c) + 8), PTC4((c) + 12)
#define PTC64(c) PTC16(c), PTC16((c) + 16), PTC16((c) + 32), PTC16((c) + 48)
static const uint8_t pt_class[256] = {PTC64(0), PTC64(64), PTC64(128), PTC64(192)};
/* The state after a byte of a class (a quote that opens no value moves
 * as any other byte: it is part of a name or an unquoted value). */
static const uint8_t pt_next[8][4] = {
    /* other,          whitespace,       '/',          '=' */
    [PT_TAG_NAME] = {PT_TAG_NAME, PT_BEFORE_NAME, PT_SLASH, PT_TAG_NAME},
    [PT_BEFORE_NAME] = {PT_NAME, PT_BEFORE_NAME, PT_SLASH, PT_NAME}, /* '=' starts a name */
    [PT_NAME] = {PT_NAME, PT_AFTER_NAME, PT_SLASH, PT_BEFORE_VALUE},
    [PT_AFTER_NAME] = {PT_NAME, PT_AFTER_NAME, PT_SLASH, PT_BEFORE_VALUE},
    [PT_BEFORE_VALUE] = {PT_UNQUOTED, PT_BEFORE_VALUE, PT_UNQUOTED, PT_UNQUOTED},
    [PT_UNQUOTED] = {PT_UNQUOTED, PT_BEFORE_NAME, PT_UNQUOTED, PT_UNQUOTED},
    [PT_AFTER_QUOTED] = {PT_NAME, PT_BEFORE_NAME, PT_SLASH, PT_NAME},
    [PT_SLASH] = {PT_NAME, PT_BEFORE_NAME, PT_SLASH, PT_NAME},
};

/* From chunk[i] on in the tag name state, where chunk[g] is the next '>'
 * or quote: the index after the tag's '>', or 0 when the chunk ends
 * first. */
static NOINLINE size_t plain_attrs(struct scan *s, size_t i, size_t g)
{
	const char *p = s->p;
	size_t len = s->len;
	unsigned st = PT_TAG_NAME;
	for (;;) {
		for (; i < g; i++)
			st = pt_next[st][pt_class[(unsigned char)p[i]]];
		if (p[g] == '>')
			return g + 1;
		if (st == PT_BEFORE_VALUE) {
			g = scan_quote(s, g + 1, p[g]);
			if (g == len)
				return 0;
			st = PT_AFTER_QUOTED;
		} else {
			st = pt_next[st][0];
		}
		i = g + 1;
		g = scan_next(s, i, K_GQ);
		if (g == len)
			return 0;
	}
}

/* Eight bytes at p, 'A'..'Z' lowered, into dst. */
static inline void lower8(char *dst, const char *p)
{
	uint64_t x, lo7 = UINT64_C(0x7f7f7f7f7f7f7f7f), hi = ~lo7, ones = UINT64_C(0x0101010101010101);
	memcpy(&x, p, 8);
	uint64_t t7 = x & lo7, upper = (t7 + ones * (0x80 - 'A')) & ~(t7 + ones * (0x80 - 'Z' - 1)) & ~x & hi;
	x |= upper >> 2; /* 0x20 into each byte 'A'..'Z' */
	memcpy(dst, &x, 8);
}

/* Where plain_tag reads (HTML content outside select, the model not
 * stopped): 1 when a tag of this id changes nothing, as inj_tree_plain_id
 * answers there, and is no meta tag whose referrer policy may be raised. */
static inline int plain_id(const struct csrf_inject *inj, uint8_t id, int is_end)
{
	return (int)((inj->plain_ids[is_end][(inj->tree.tables | inj->tree.templates) != 0] >> (id & 63)) & 1);
}

/* Nine bytes at p with 0x20 set in each, into dst: a byte becomes a
 * lower-case letter only if it is a letter, and every name
 * inj_tag_id_html_in knows is letters only (test_inject_policy checks
 * it), so a name looked up this way gets the id it gets lowered, and a
 * name with an id is in tag.name lowered. Cheaper than lower8 and
 * inj_lower, for the names plain_tag and plain_across look up. */
static inline uint64_t fold9(char *dst, const char *p)
{
	uint64_t x;
	memcpy(&x, p, 8);
	x |= UINT64_C(0x2020202020202020);
	memcpy(dst, &x, 8);
	dst[8] = (char)(p[8] | 0x20);
	return x;
}

/* The id of the name of n bytes that fold9 put in name, x the word it
 * returned: a name of 2 to 8 bytes takes its hash key from x (on a
 * little-endian target), not from the bytes just stored (a load that
 * waits for the store), which is the key inj_tag_id_html_in builds. */
static inline uint8_t folded_id(uint64_t x, const char *name, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (n - 2 <= 6) {
		unsigned sh = (unsigned)(8 * (n < 4 ? n - 1 : n - 4));
		uint64_t key =
		    n < 4 ? (x & 0xffff) | ((x >> sh) & 0xff) << 16 : (x & 0xffffffff) | ((x >> sh) & 0xffffffff) << 32;
		return inj_tag_id_html_key(key, n);
	}
#else
	(void)x;
#endif
	return inj_tag_id_html_in(name, n);
}

/* The tag whose '<' is chunk[i], in the data state of HTML content
 * (outside foreign content and select, the model not stopped, and not
 * while template contents wait for the start tag that picks their mode:
 * plain is then what inj_tree_plain_id says): when it changes nothing the
 * model follows and ends in this chunk, the index after its '>', read exactly
 * as the states from S_TAG_OPEN on read it, without keeping its name or
 * attributes; else i, and the states read it. Most tags of a page (a, p,
 * div, span, li, td outside tables, end tags) take this way. */
STEP size_t plain_tag(struct csrf_inject *inj, struct scan *s, size_t i, size_t *name_end, uint8_t *name_id)
{
	const char *p = s->p;
	size_t len = s->len;
	if (len - i < 3) /* also i == len */
		return i;
	/* both bytes that may be the name's first letter loaded at once, and
	 * one chosen: the letter's class does not wait on the '/' test */
	unsigned char c1 = (unsigned char)p[i + 1], c2 = (unsigned char)p[i + 2];
	int is_end = c1 == '/';
	size_t k = i + 1 + (size_t)is_end; /* < len */
	unsigned char c = is_end ? c2 : c1;
	if (!inj_is_alpha(c))
		return i; /* comments, doctype, "</>", text */
	/* e: in the name, or at its end (a name no element we follow starts
	 * with: its end does not matter) */
	size_t e = k + 1;
	if (inj_cls[c] & C_FIRST) {
		/* from i + 2, not k + 1: p[i + 2] is the end tag's first letter
		 * (no K_END bit) or a byte of the start tag's name, so the end
		 * found is the same, and its search does not wait on the '/'
		 * test (the next tag's start waits on it) */
		e = scan_until(s, i + 2, C_NAME_END);
		if (e == len)
			return i;
		size_t n = e - k;
		if (is_end ? inj_html_maybe_end(c, (unsigned char)p[k + 1], n)
		           : inj_html_maybe(c, (unsigned char)p[k + 1], n)) {
			char *name = inj->tag.name; /* INJ_NAME_MAX >= 9 */
			uint8_t id;
			if (len - k >= 9) { /* the name (n <= 9) and what follows, folded */
				id = folded_id(fold9(name, p + k), name, n);
			} else {
				for (size_t j = 0; j < n; j++)
					name[j] = (char)inj_lower((unsigned char)p[k + j]);
				id = inj_tag_id_html_in(name, n);
			}
			if (!plain_id(inj, id, is_end)) {
				*name_end = e; /* its name read, in tag.name: the states go on from there */
				*name_id = id;
				return i;
			}
		}
	}
	if (e < len && p[e] == '>') /* <p>, <a>, </b> */
		return e + 1;
	/* no quote before the next '>': no value can hide it */
	size_t g = scan_next(s, e, K_GQ);
	if (g == len)
		return i;
	if (p[g] == '>')
		return g + 1;
	size_t r = plain_attrs(s, e, g);
	return r ? r : i;
}

/* Where a tag ends that plain_fast takes: its name's first letter c is
 * q[k] (is_end: an end tag), and gq and en hold the '>'-or-quote and the
 * name-end bits of the bytes after it, bit j for q[j]. The usual shapes
 * only: a name no element we follow has (by its first letter, or its
 * first two and its length), then the tag's '>', or attributes written
 * name="value", each name after a blank and holding none (nor '/', '=' or
 * a control byte), then the '>'. Those shapes decide exactly what
 * plain_attrs decides: the blank puts the tokenizer in the before
 * attribute name state (after the tag name, or after a value's closing
 * quote and bytes of a name), the name's bytes in the attribute name
 * state, its '=' in the before attribute value state, where the quote
 * opens the value; a '>' outside a value ends the tag in every state.
 * Returns the index of the '>' in q; PF_NOT for another shape, when the
 * bits end first, or for a name that matters (looked up as plain_tag
 * looks, with the masks plain_fast put in s: plain_tag then reads the
 * tag again, and keeps its name). */
enum { PF_NOT = -1 };
STEP int plain_shape(const struct scan *s, const char *q, unsigned k, unsigned char c, unsigned is_end, uint64_t gq,
                     uint64_t en)
{
	if (!gq || !en)
		return PF_NOT;
	if (inj_cls[c] & C_FIRST) { /* the name's end, its length and second letter */
		unsigned e = (unsigned)CTZ64(en), n = e - k;
		if (!(inj_cls[(unsigned char)q[e]] & C_NAME_END))
			return PF_NOT;
		if (inj_html_maybe(c, (unsigned char)q[k + 1], n)) {
			char name[9]; /* the name (n <= 9) and what follows, folded */
			fold9(name, q + k);
			if (!((s->plain[is_end] >> (inj_tag_id_html_in(name, n) & 63)) & 1))
				return PF_NOT;
		}
	}
	unsigned g = (unsigned)CTZ64(gq);
	uint64_t ea = en; /* its lowest bit: the blank before the next name */
	while (q[g] != '>') {
		unsigned a = (unsigned)CTZ64(ea);
		uint64_t rest = ea & (ea - 1);
		if (a + 3 > g || !rest || CTZ64(rest) != g - 1 || q[g - 1] != '=' || !inj_is_ws((unsigned char)q[a]))
			return PF_NOT;
		char quote = q[g];
		gq &= gq - 1;
		while (gq && q[CTZ64(gq)] != quote)
			gq &= gq - 1;
		if (!gq)
			return PF_NOT;
		unsigned h = (unsigned)CTZ64(gq); /* the closing quote */
		gq &= gq - 1;
		if (!gq)
			return PF_NOT;
		ea = en & (~UINT64_C(0) << (h + 1)); /* h < 63 */
		if (!ea)
			return PF_NOT;
		g = (unsigned)CTZ64(gq);
	}
	return (int)g;
}

/* The tag whose '<' is q[t] (a letter after it, or '/' and a letter),
 * in plain_shape's shapes, from the masks of the 64 bytes from q[t] on:
 * the rest of its block (b[0]) and the start of the next (b[1]), read at
 * once (the bits of its block alone decide the same whenever they
 * suffice: plain_shape reads the bits from the lowest up). Returns the
 * index of its '>' in q (t + 63 at most), or PF_NOT.
 *
 * No call here (the look-up inline, plain_id's masks from s rather than
 * from inj), and so none of plain_fast's pointers to pass and keep: the
 * look-up behind a call (plain_named), and a name that matters passed
 * back through plain_fast (*name_end, *name_id), cost plain_fast the
 * registers of its loop (callgrind, socat.html avx2: 1,248,877 ->
 * 1,212,644 instructions; by the clock 1.03x). */
static NOINLINE int plain_across(const struct scan *s, const struct inj_block *b, const char *q, unsigned t)
{
	unsigned is_end = q[t + 1] == '/';
	unsigned char c = (unsigned char)q[t + 1 + is_end];
	if (!(inj_cls[c] & C_ALPHA))
		return PF_NOT;
	uint64_t clr = (UINT64_C(4) << is_end) - 1; /* the '<', the '/' and the first letter */
	uint64_t gq = (b[0].gq >> t) | ((b[1].gq << 1) << (63 - t));
	uint64_t en = (b[0].end >> t) | ((b[1].end << 1) << (63 - t));
	int r = plain_shape(s, q + t, 1 + is_end, c, is_end, gq & ~clr, en & ~clr);
	return r >= 0 ? r + (int)t : r;
}

/* The tags plain_tag takes, one after another from the '<' at chunk[i]
 * on, in their usual shapes (plain_shape). The '<' bits of a block are
 * taken one after another from a register, so that the next tag's start
 * does not wait for this tag's end (only a tag that holds a '<' clears
 * those bits). The usual tag, no quote before its '>' within its block,
 * is read here from the block's masks as they are; the others in
 * plain_across. Returns the index of the first '<' left to the caller,
 * plain_tag: a tag that matters (plain_tag reads its name again), another
 * shape, or a tag at the chunk's end; or len.
 *
 * Two functions end a plain tag, plain_fast and plain_tag, on purpose:
 * do not fold one into the other. plain_fast is fast only over a run of
 * tags, once its block's '<' register is built; building it (the window,
 * the block, the bits below the '<' cleared) is a set-up that waits on
 * the end of the tag before, which is the dependency from one tag to the
 * next that the register is there to remove. plain_tag has no set-up: it
 * reads one tag from its '<'. So plain_tag takes the first three tags
 * after a tag that matters (a form's fields and its end tag come soon,
 * and each would pay plain_fast's set-up again: the 20-form page 91.6K ->
 * 77.6K instructions when this split came in), every shape plain_fast
 * hands back, and every tag near the window's or the chunk's end, where
 * plain_fast's 72 bytes of masks are not there to read. Making plain_fast
 * the only way cost clock time: each '<' bit then waits on the tag before
 * it. */
STEP size_t plain_fast_step(struct csrf_inject *inj, struct scan *s, size_t i, const int count)
{
	/* count: the start tags taken here, for the depth bound's S, one add
	 * a tag (each tag counted as it is read, taken back when it goes
	 * back to the caller), into the model when this returns. Only until
	 * the bound reaches the guard (inj_tree_deep: it stays there), so
	 * that a long page's tags after that pay nothing (callgrind,
	 * socat.html: 3.4 instructions a tag counted here) */
	size_t starts = 0;
	/* plain_id's masks for the names plain_across looks up (the model
	 * does not move while plain tags are read), in s: inj is not passed
	 * on for those few tags */
	int x = (inj->tree.tables | inj->tree.templates) != 0;
	s->plain[0] = inj->plain_ids[0][x];
	s->plain[1] = inj->plain_ids[1][x];
	for (;;) {
		size_t o = i - s->base;
		if (o >= s->span || s->span - o < 72) {
			/* near or past the window's end: the next window from here,
			 * unless the chunk ends there */
			if (i >= s->len || s->len - i < 72) {
				if (count)
					inj->tree.starts += starts;
				return i;
			}
			scan_window(s, i);
			o = i - s->base;
		}
		const char *p = s->p + s->base;
		const struct inj_block *m = s->m;
		size_t span = s->span, w = o >> 6;
		/* a tag from p[x] on is read when x < lim: 72 bytes from it in
		 * the window (span >= 72 here) */
		size_t lim = span - 71;
		uint64_t lt = m[w].lt & (~UINT64_C(0) << (o & 63));
		for (;;) {
			while (!lt) { /* the next block with a '<' (a tag that
				       * ended in a block left its bits after it) */
				if (++w * 64 >= span)
					break;
				lt = m[w].lt;
			}
			if (!lt) {
				i = scan_next(s, s->base + span, K_LT);
				break;
			}
			/* the tags of block w (its masks b[0], the next's b[1]) */
			const char *q = p + w * 64;
			const struct inj_block *b = m + w;
			size_t wo = w * 64;
			do {
				unsigned t = CTZ32(lt);
				if (wo + t >= lim) {
					i = s->base + wo + t;
					goto window; /* on from t in a new window */
				}
				uint64_t upto = lt ^ (lt - 1); /* bits 0..t */
				lt &= lt - 1;
				unsigned is_end = q[t + 1] == '/', k = t + 1 + is_end;
				if (count)
					starts += 1u - is_end;
				unsigned char c = (unsigned char)q[k];
				uint8_t cls = inj_cls[c];
				/* the first '>' or quote after t: in this block or the
				 * next (where the '<' bits before it are cleared) */
				uint64_t gq = b[0].gq & ~upto, ngq = b[1].gq;
				unsigned g = gq ? CTZ32(gq) : ngq ? 64 + CTZ32(ngq) : k; /* k: no '>' there */
				if (LIKELY((cls & C_ALPHA) && q[g] == '>')) {
					/* the usual: no quote before its '>' */
					/* a name that starts as one we follow: its end (the
					 * '>' at g the latest), its length and second letter,
					 * looked at behind a branch on the first letter. (On
					 * the Intel CPU it mispredicted as a page's names
					 * alternate, p, a, span, div, and every name was looked
					 * at; Zen 5 predicts it: socat.html 1.10x,
					 * docs/architecture.md) */
					if (cls & C_FIRST) {
						uint64_t en =
						    b[0].end & ~((upto << 1) | 1); /* after the '/' of an end tag */
						unsigned e =
						    en ? CTZ32(en)
						       : 64 + CTZ32((b[1].end & ~(upto >> 63)) | (UINT64_C(1) << 63));
						unsigned odd =
						    (unsigned)(~INJ_NAME_END_BITS >> ((unsigned char)q[e] & 63) & 1) |
						    inj_html_maybe16(c, (unsigned char)q[k + 1], e - k);
						if (UNLIKELY(odd))
							goto other;
					}
					if (g >= 64)
						goto next_block;
					goto ends;
				}
			other:;
				/* another shape: a quoted value, a name that may matter
				 * or ends oddly, a tag across blocks with one of those */
				int r = plain_across(s, b, q, t);
				if (r < 0) {
					if (count) /* this one the caller reads */
						inj->tree.starts += starts - (1u - is_end);
					return s->base + wo + t;
				}
				g = (unsigned)r;
				if (g >= 64) { /* g < 128: in the next block */
				next_block:
					/* its '<' bits after the '>' (the zero block
					 * after the window's last: none) */
					lt = m[++w].lt & ((~UINT64_C(0) << (g - 64)) << 1);
					break;
				}
			ends:
				/* the tag ends at q[g]: the '<' bits before it (in its
				 * values) are no tags */
				if (UNLIKELY(lt && CTZ32(lt) < g))
					lt = g >= 63 ? 0 : lt & (~UINT64_C(0) << (g + 1));
			} while (lt);
		}
	window:;
	}
}

/* plain_fast_step counting start tags (until the depth bound reaches the
 * guard), and not (after). */
static NOINLINE HOTLOOPS size_t plain_fast_counting(struct csrf_inject *inj, struct scan *s, size_t i)
{
	return plain_fast_step(inj, s, i, 1);
}
static NOINLINE HOTLOOPS size_t plain_fast(struct csrf_inject *inj, struct scan *s, size_t i)
{
	return plain_fast_step(inj, s, i, 0);
}

/* ---- the tag being read ---- */

/* A tag's first letter: in HTML content, a name no element we follow
 * starts with is not kept (most names of a page: a, div, li, code). */
STEP void begin_tag(struct csrf_inject *inj, int is_end, unsigned char first)
{
	struct inj_tag *t = &inj->tag;
	_Static_assert(T_OTHER == 0 && SLOT_NONE == 0, "begin_tag clears to these");
	memset(t, 0, offsetof(struct inj_tag, name));
	inj->tree.starts += !is_end; /* the depth bound's S */
	t->is_end = (uint8_t)is_end;
	t->name[0] = (char)inj_lower(first);
	t->name_len = 1;
	t->skip_name = inj->tree.depth == 0 && !(inj_cls[first] & C_FIRST);
}

/* A tag whose name plain_tag read (in tag.name) and looked up (id): what
 * begin_tag and the name's end set, the name starting with a letter of
 * INJ_HTML_FIRST in HTML content (not skipped), its attributes not read
 * yet. */
STEP void begin_named(struct csrf_inject *inj, int is_end, uint8_t id, size_t len)
{
	struct inj_tag *t = &inj->tag;
	memset(t, 0, offsetof(struct inj_tag, name));
	inj->tree.starts += !is_end; /* the depth bound's S */
	t->is_end = (uint8_t)is_end;
	t->name_len = (uint8_t)len;
	t->id = id;
}

/* The end tag of the open raw-text element, as if read in full. */
static void begin_raw_end_tag(struct csrf_inject *inj, uint8_t id)
{
	uint8_t n;
	const char *name = inj_raw_name(id, &n);
	begin_tag(inj, 1, (unsigned char)name[0]);
	memcpy(inj->tag.name, name, n);
	inj->tag.name_len = n;
	inj->tag.id = id;
	inj->tag.keep = 0;
	inj->tag.skip_name = 0;
}

/* Reads tag-name bytes from i on up to the first byte that ends a name,
 * keeping the first INJ_NAME_MAX in lower case; returns the index of
 * that byte (or len). */
STEP size_t name_run(struct scan *s, struct inj_tag *t, size_t i, int foreign)
{
	size_t e = scan_until(s, i, C_NAME_END);
	if (t->skip_name)
		return e;
	const char *p = s->p + i;
	size_t k = e - i, n = s->len - i;
	uint8_t nl = t->name_len;
	if (!foreign && k < n && (nl + k < 2 || nl + k > 9)) {
		/* complete, and of no length a name that matters in HTML has */
		t->name_len = INJ_NAME_MAX + 1;
		return e;
	}
	if (k <= 8 && n >= 8 && nl + 8 <= INJ_NAME_MAX) {
		/* the usual short name: eight bytes at once, lowered (the
		 * bytes after it in name[] are past name_len, never read) */
		lower8(t->name + nl, p);
		t->name_len = (uint8_t)(nl + k);
		return e;
	}
	size_t room = INJ_NAME_MAX - (nl < INJ_NAME_MAX ? nl : INJ_NAME_MAX), m = k < room ? k : room;
	for (size_t j = 0; j < m; j++)
		t->name[nl + j] = (char)inj_lower((unsigned char)p[j]);
	t->name_len = k > room ? INJ_NAME_MAX + 1 : (uint8_t)(nl + m);
	return e;
}

/* Only these start tags have attributes the policy reads (a bit mask of
 * their ids, not a switch: its jump table mispredicts as tags alternate). */
static int attrs_matter(const struct inj_tag *t)
{
	const uint64_t read = INJ_BIT(T_FORM) | INJ_BIT(T_BASE) | INJ_BIT(T_BUTTON) | INJ_BIT(T_INPUT) |
	                      INJ_BIT(T_ANNOTATION_XML) | INJ_BIT(T_FONT);
	return !t->is_end && ((read >> (t->id & 63)) & 1);
}

/* The name is complete: which element it is, as far as the model needs
 * to know (outside foreign content, few names matter). */
static void name_done(struct inj_tag *t, int foreign)
{
	if (t->skip_name || t->name_len > INJ_NAME_MAX || (!foreign && (t->name_len < 2 || t->name_len > 9)))
		t->id = T_OTHER; /* "a", "p", "b": no name that matters in HTML content */
	else
		t->id = foreign ? inj_tag_id(t->name, t->name_len) : inj_tag_id_html(t->name, t->name_len);
	t->keep = (uint8_t)attrs_matter(t);
}

static void begin_attr(struct inj_tag *t)
{
	t->attr_len = 0;
	t->slot = SLOT_NONE;
}

/* The slot of the attribute whose name is the k bytes at p (sixteen
 * readable), into t->slot (begin_attr left SLOT_NONE): judged by its
 * length first, then by its first sixteen bytes with 0x20 set in each,
 * which lowers the letters, all inj_attr_slot_of compares with. */
STEP void attr_judge(struct inj_tag *t, const char *p, size_t k)
{
	if (k <= INJ_ATTR_MAX && ((inj_attr_lens[t->id] >> k) & 1)) {
		uint64_t w[2], lo = UINT64_C(0x2020202020202020);
		char low[16];
		memcpy(w, p, 16);
		w[0] |= lo;
		w[1] |= lo;
		memcpy(low, w, 16);
		t->slot = inj_attr_slot_of(t, low, k);
	}
}

/* As name_run, for an attribute name (ended by '=' too), read only when
 * the tag's attributes matter; when it ends in this chunk, the slot its
 * value goes to is set (begin_attr left SLOT_NONE). */
STEP size_t attr_run(struct scan *s, struct inj_tag *t, size_t i)
{
	if (!t->keep)
		return scan_until(s, i, C_ATTR_END);
	const char *p = s->p + i;
	size_t k, n = s->len - i;
	uint8_t al = t->attr_len;
	if (al == 0 && n >= 16) {
		/* the usual: a whole name in this chunk, found through the
		 * masks, judged there (attr_judge), not kept */
		size_t e = scan_until(s, i, C_ATTR_END);
		if (e < s->len) {
			attr_judge(t, p, e - i);
			return e;
		}
	}
	for (k = 0; k < n; k++) {
		unsigned char ch = (unsigned char)p[k];
		if (inj_cls[ch] & C_ATTR_END)
			break;
		if (al < INJ_ATTR_MAX)
			t->attr[al++] = (char)inj_lower(ch);
		else
			al = INJ_ATTR_MAX + 1;
	}
	t->attr_len = al;
	if (k < n)
		t->slot = inj_attr_slot(t);
	return i + k;
}

#if !defined(__SSE2__)
/* The first m bytes (m <= 8) of a word read with memcpy. */
static inline uint64_t first_bytes(size_t m)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return m == 0 ? 0 : ~UINT64_C(0) << (64 - 8 * m);
#else
	return m >= 8 ? ~UINT64_C(0) : (UINT64_C(1) << (8 * m)) - 1;
#endif
}

/* 1 when the first n bytes (n <= 16) of the sixteen in the words a and b
 * (read with memcpy) hold no '&' and no NUL, so that decoding would leave
 * them as they are. A byte flagged past the n does not count; on a
 * big-endian machine a borrow can flag one before it, a '&' or NUL past
 * them: 0 then, which only means the policy decodes the value. */
static inline int words_clean(uint64_t a, uint64_t b, size_t n)
{
	uint64_t ones = UINT64_C(0x0101010101010101), hi = ones * 0x80;
	uint64_t aa = a ^ (ones * '&'), ba = b ^ (ones * '&');
	uint64_t fa = (((a - ones) & ~a) | ((aa - ones) & ~aa)) & hi;
	uint64_t fb = (((b - ones) & ~b) | ((ba - ones) & ~ba)) & hi;
	return ((fa & first_bytes(n < 8 ? n : 8)) | (fb & first_bytes(n > 8 ? n - 8 : 0))) == 0;
}

#endif

/* value_bytes' copy into the slot's buffer, for the slots' few values.
 * The usual short value, whose chunk and buffer both hold sixteen bytes
 * from its start on, is copied as sixteen bytes (those past it are past
 * the slot's length, never read) and looked at for '&' and NUL on the
 * way: clean, the policy does not decode it. */
STEP void value_keep_step(struct inj_tag *t, const char *p, size_t n, const char *end)
{
	char *buf;
	size_t had, cap;
	uint8_t bit;
	if (t->slot == SLOT_URL) {
		buf = t->url, had = t->url_len, cap = INJ_URL_MAX, bit = A_URL;
	} else if (t->slot == SLOT_SHORT) {
		buf = t->short_val, had = t->short_len, cap = INJ_SHORT_MAX, bit = A_SHORT;
	} else if (t->slot == SLOT_ID) {
		buf = t->id_val, had = t->id_len, cap = INJ_ID_MAX, bit = A_ID;
	} else {
		buf = t->type_val, had = t->type_len, cap = INJ_SHORT_MAX, bit = A_TYPE;
	}
	size_t room = cap - had;
	int clean = 0, over = 0;
	if (n <= 16 && end - p >= 16 && room >= 16) {
#if defined(__SSE2__)
		/* the compares of a vector register: '&' or NUL in the first n */
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		_mm_storeu_si128((__m128i *)(void *)(buf + had), v);
		unsigned bad = (unsigned)_mm_movemask_epi8(
		    _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('&')), _mm_cmpeq_epi8(v, _mm_setzero_si128())));
		clean = (bad & ((1u << n) - 1)) == 0; /* n <= 16 */
#else
		uint64_t a, b;
		memcpy(&a, p, 8);
		memcpy(&b, p + 8, 8);
		memcpy(buf + had, &a, 8);
		memcpy(buf + had + 8, &b, 8);
		clean = words_clean(a, b, n);
#endif
	} else {
		if (n > room) {
			n = room;
			over = 1;
		}
		memcpy(buf + had, p, n);
	}
	if (bit == A_URL) {
		t->url_len = (uint16_t)(had + n);
		t->url_trunc |= (uint8_t)over;
	} else if (bit == A_SHORT) {
		t->short_len = (uint8_t)(had + n);
		t->short_over |= (uint8_t)over;
	} else if (bit == A_ID) {
		t->id_len = (uint8_t)(had + n);
		t->id_over |= (uint8_t)over;
	} else {
		t->type_len = (uint8_t)(had + n);
		t->type_over |= (uint8_t)over;
	}
	/* clean while every piece kept is (a value cut by a chunk's end comes in pieces) */
	if (clean && (had == 0 || (t->clean & bit)))
		t->clean |= bit;
	else
		t->clean &= (uint8_t)~bit;
}

static NOINLINE void value_keep(struct inj_tag *t, const char *p, size_t n, const char *end)
{
	value_keep_step(t, p, n, end);
}

/* Bytes of an attribute value, up to the chunk's end: kept only for the
 * slots, up to their caps (a longer value is flagged). */
STEP void value_bytes(struct inj_tag *t, const char *p, size_t n, const char *end)
{
	if (n != 0 && t->slot != SLOT_NONE)
		value_keep(t, p, n, end);
}

/* ---- output ---- */

/* What the field of a held form names (pin_id). */
enum { PIN_NONE, PIN_RANDOM /* the injector's id, pin_attr, which goes in too */, PIN_OWN /* tree.own_id */ };
_Static_assert(OWN_FORM_LEN >= PIN_FORM_LEN, "input_el holds either form=\"\"");

#define HOLD_NONE UINT32_MAX

/* Held bytes [from, to) of the page. Non-zero when emit stopped. */
static int emit_held(struct csrf_inject *inj, csrf_emit_fn emit, void *ud, size_t from, size_t to)
{
	return to > from && emit(ud, inj->hold + from, to - from, 0) != 0;
}

/* The field. pin (PIN_*): with form="" naming the injector's id
 * (pin_attr) or the form's own (tree.own_id, simple: written raw),
 * written over the element's last '>' for this emit and put back. */
static int emit_field(struct csrf_inject *inj, csrf_emit_fn emit, void *ud, int pin)
{
	if (pin == PIN_NONE)
		return emit(ud, inj->input_el, inj->input_len, 1) != 0;
	char *tail = inj->input_el + inj->input_len - 1;
	size_t n;
	if (pin == PIN_RANDOM) {
		memcpy(tail, PIN_FORM_PRE, LIT_LEN(PIN_FORM_PRE));
		memcpy(tail + LIT_LEN(PIN_FORM_PRE), inj->pin_attr + LIT_LEN(PIN_ATTR_PRE), PIN_CHARS);
		n = LIT_LEN(PIN_FORM_PRE) + PIN_CHARS;
	} else {
		memcpy(tail, OWN_FORM_PRE, LIT_LEN(OWN_FORM_PRE));
		memcpy(tail + LIT_LEN(OWN_FORM_PRE), inj->tree.own_id, inj->tree.own_id_len);
		n = LIT_LEN(OWN_FORM_PRE) + inj->tree.own_id_len;
	}
	memcpy(tail + n, INPUT_END, LIT_LEN(INPUT_END));
	int r = emit(ud, inj->input_el, inj->input_len - 1 + n + LIT_LEN(INPUT_END), 1) != 0;
	*tail = '>';
	return r;
}

/* Lets the held bytes go: the field first when the form gets the token
 * (right after its start tag, where the hold began), then the form's
 * bytes as the page had them, with the meta tags where they went in
 * (copied into the hold) and the referrer raise at its place (kept as a
 * position only, so it takes no room of the hold). Non-zero when emit
 * stopped. */
static NOINLINE int release_held(struct csrf_inject *inj, csrf_emit_fn emit, void *ud, int field)
{
	size_t n = inj->hold_len, m = inj->hold_meta, r = inj->hold_referrer, f = inj->hold_field, at = 0;
	int pin = field ? inj->pin_id : PIN_NONE;
	inj->holding = 0;
	inj->pin_hold = 0;
	inj->pin_id = 0;
	inj->hold_field = 0;
	inj->hold_len = 0;
	inj->hold_meta = HOLD_NONE;
	inj->hold_referrer = HOLD_NONE;
	if (pin == PIN_RANDOM) { /* the injector's id right after "<form": an insertion of its own */
		if (emit(ud, inj->pin_attr, PIN_ATTR_LEN, 1) != 0)
			return 1;
		inj->tree.count++;
	}
	if (field) { /* the start tag's held bytes (none unless deep), then the field */
		if (emit_held(inj, emit, ud, 0, f) || emit_field(inj, emit, ud, pin))
			return 1;
		at = f;
	}
	if (r != HOLD_NONE && (m == HOLD_NONE || r <= m)) {
		if (emit_held(inj, emit, ud, at, r) || emit(ud, inj->referrer_el, sizeof inj->referrer_el, 1) != 0)
			return 1;
		at = r;
		r = HOLD_NONE;
	}
	if (m != HOLD_NONE) { /* the meta tags went in inside the form: still an insertion */
		if (emit_held(inj, emit, ud, at, m) || emit(ud, inj->hold + m, inj->meta_len, 1) != 0)
			return 1;
		at = m + inj->meta_len;
	}
	if (r != HOLD_NONE) {
		if (emit_held(inj, emit, ud, at, r) || emit(ud, inj->referrer_el, sizeof inj->referrer_el, 1) != 0)
			return 1;
		at = r;
	}
	return emit_held(inj, emit, ud, at, n);
}

/* release(): inline for its usual case, a form whose bytes all came in
 * the chunk it ends in (nothing held: no meta tags, no raise, no start
 * tag held from its name on), where only the field goes. */
static inline int release(struct csrf_inject *inj, csrf_emit_fn emit, void *ud, int field)
{
	if (inj->hold_len != 0 || inj->hold_meta != HOLD_NONE || inj->hold_referrer != HOLD_NONE || inj->pin_hold)
		return release_held(inj, emit, ud, field);
	inj->holding = 0;
	return field && emit(ud, inj->input_el, inj->input_len, 1) != 0;
}

/* out() while a form is held: the piece goes into the hold. A form
 * whose bytes do not fit the hold goes without a token: its bytes are
 * let go, then the piece. */
static NOINLINE int out_held(struct csrf_inject *inj, csrf_emit_fn emit, void *ud, const char *p, size_t n,
                             int inserted)
{
	if (n <= CSRF_INJECT_HOLD_MAX - inj->hold_len) {
		if (inserted) /* only the meta tags come while a form is held, once */
			inj->hold_meta = inj->hold_len;
		memcpy(inj->hold + inj->hold_len, p, n);
		inj->hold_len += (uint32_t)n;
		return 0;
	}
	inj_tree_too_long(&inj->tree);
	if (release(inj, emit, ud, 0) != 0)
		return 1;
	return emit(ud, p, n, inserted);
}

/* Every piece of output: held while a form is pending (out_held), else
 * passed on. Inline, so that bytes passed on while no form is held (most
 * of them) cost a test and the call of emit. */
static inline int out(struct csrf_inject *inj, csrf_emit_fn emit, void *ud, const char *p, size_t n, int inserted)
{
	if (n == 0)
		return 0;
	if (inj->holding)
		return out_held(inj, emit, ud, p, n, inserted);
	return emit(ud, p, n, inserted);
}

/* The model no longer waits for the held form (a submitter or a stop
 * ruled its token out): its bytes go, without the field. */
static int settle(struct csrf_inject *inj, csrf_emit_fn emit, void *ud)
{
	/* a form start tag held from its name's end (pin_form) waits for its '>' */
	if (inj->holding && !inj_tree_pending(&inj->tree) && !inj->pin_form)
		return release_held(inj, emit, ud, 0); /* out of line: rare */
	return 0;
}

static int emit_input(struct csrf_inject *inj, csrf_emit_fn emit, void *ud, const char *chunk, size_t from, size_t to)
{
	if (to <= from)
		return 0;
	return out(inj, emit, ud, chunk + from, to - from, 0);
}

/* A held form's bytes up to chunk[i] (those held, and those of this
 * chunk from start on, not passed on yet) do not fit the hold: no token
 * for it. Called before whatever else could settle the form (its end
 * tag, a submitter, a stop), so that its status is the same however the
 * stream was cut: fed byte by byte, those bytes are all held by then. */
static void hold_check(struct csrf_inject *inj, size_t i, size_t start)
{
	if (inj->holding && inj_tree_pending(&inj->tree) && i - start > CSRF_INJECT_HOLD_MAX - inj->hold_len)
		inj_tree_too_long(&inj->tree);
}

/* What goes in after the tag that ends at chunk[i] ('>'), the held form
 * settled: the input up to and including the '>' passed on, then the
 * meta tags, or the form's bytes held from there on (release() leaves
 * the hold empty, with no meta tags or raise in it). Non-zero when emit
 * stopped. */
static inline int tag_insert(struct csrf_inject *inj, const char *chunk, size_t i, size_t *start, csrf_emit_fn emit,
                             void *ud, int ins)
{
	if (ins == INS_NONE)
		return 0;
	if (emit_input(inj, emit, ud, chunk, *start, i + 1) != 0)
		return 1;
	*start = i + 1;
	if (ins == INS_HOLD) { /* a POST form to this origin: its bytes wait for its submitters */
		inj->holding = 1;
		return 0;
	}
	return out(inj, emit, ud, inj->meta_el, inj->meta_len, 1) != 0;
}

/* The tag ends at chunk[i] ('>'): the model's move; passes the input up
 * to and including the '>', then what goes in after it. Non-zero when
 * emit stopped. */
static int tag_after(struct csrf_inject *inj, const char *chunk, size_t i, size_t *start, csrf_emit_fn emit, void *ud,
                     int ins, uint8_t next);
static int tag_move(struct csrf_inject *inj, const char *chunk, size_t i, size_t *start, csrf_emit_fn emit, void *ud)
{
	uint8_t next;
	hold_check(inj, i, *start);
	int ins = inj_tree_tag(&inj->tree, &inj->tag, &next);
	return tag_after(inj, chunk, i, start, emit, ud, ins, next);
}

/* tag_move's steps after the model's move: the tokenizer's next state,
 * the held form settled, what goes in after the tag. */
static int tag_after(struct csrf_inject *inj, const char *chunk, size_t i, size_t *start, csrf_emit_fn emit, void *ud,
                     int ins, uint8_t next)
{
	switch (next) {
	case NEXT_RAW:
	case NEXT_SCRIPT:
		inj->raw = inj->tag.id;
		inj->state = next == NEXT_SCRIPT ? S_SCRIPT : S_RAW;
		break;
	case NEXT_NOSCRIPT:
		inj->raw = T_NOSCRIPT;
		inj->state = S_NOSCRIPT;
		inj_noscript_begin(&inj->ns);
		break;
	case NEXT_PLAINTEXT:
	case NEXT_PASS:
		inj->state = S_PASS;
		break;
	default:
		inj->state = S_DATA;
		break;
	}
	if (settle(inj, emit, ud) != 0)
		return 1;
	return tag_insert(inj, chunk, i, start, emit, ud, ins);
}

/* An end tag's name ended at chunk[i] (not passed on yet) and is "form":
 * every submitter inside the held form has been read. The field goes in
 * after its start tag when the model says so, and when the form's bytes
 * so far (held, and those of this chunk not passed on yet) fit the hold:
 * the same answer however the stream was cut. Non-zero when emit
 * stopped. */
STEP int form_end_step(struct csrf_inject *inj, size_t i, size_t start, csrf_emit_fn emit, void *ud)
{
	hold_check(inj, i, start);
	if (inj->holding && inj_tree_pending(&inj->tree) && inj_tree_form_end(&inj->tree))
		return release(inj, emit, ud, 1);
	return settle(inj, emit, ud);
}

static NOINLINE int form_end(struct csrf_inject *inj, size_t i, size_t start, csrf_emit_fn emit, void *ud)
{
	return form_end_step(inj, i, start, emit, ud);
}

/* The name of a form start tag read deep in the tree ended at chunk[i]
 * (inj_tree_pin_maybe; no form held): the input up to there passed on,
 * the rest of the tag held, so that the injector's id can still go in
 * right after "<form" (whatever follows a name there, a blank, '/' or
 * '>', an attribute after it is read as one) once the attributes tell
 * whether the form has an id of its own. Non-zero when emit stopped. */
static NOINLINE int pin_begin(struct csrf_inject *inj, const char *chunk, size_t i, size_t *start, csrf_emit_fn emit,
                              void *ud)
{
	if (emit_input(inj, emit, ud, chunk, *start, i) != 0)
		return 1;
	*start = i;
	inj->holding = 1;
	inj->pin_form = 1;
	inj->pin_hold = 1;
	return 0;
}

/* The injector's id for the held form: PIN_RAND bytes from the CSPRNG
 * (never from the token), base64url, into pin_attr. -1 when the kernel
 * gave none. */
static int pin_draw(struct csrf_inject *inj)
{
	uint8_t r[PIN_RAND];
	if (csrfi_random_pad(r, sizeof r) != CSRF_OK)
		return -1;
	memcpy(inj->pin_attr, PIN_ATTR_PRE, LIT_LEN(PIN_ATTR_PRE));
	csrfi_b64url_encode(r, sizeof r, inj->pin_attr + LIT_LEN(PIN_ATTR_PRE));
	inj->pin_attr[PIN_ATTR_LEN - 1] = '"';
	return 0;
}

/* The start tag of a form whose bytes are held from its name's end on
 * (pin_begin) ended at chunk[i], the model's move made (ins). A pending
 * form keeps them held, with the rest of the tag: the field goes after
 * them (hold_field), and the injector's id before them when the form has
 * none of its own (cur_pin). A form whose tag's bytes overflowed the hold
 * (judged by its bytes from its name's end, however the stream was cut),
 * or whose id could not be drawn, gets no token; a form without the token
 * lets its bytes go as the page has them. Non-zero when emit stopped. */
static NOINLINE int pin_end(struct csrf_inject *inj, const char *chunk, size_t i, size_t *start, csrf_emit_fn emit,
                            void *ud, int ins)
{
	inj->pin_form = 0;
	if (ins == INS_HOLD) {
		if (!inj->pin_hold || i + 1 - *start > CSRF_INJECT_HOLD_MAX - inj->hold_len)
			inj_tree_too_long(&inj->tree);
		else if (inj->tree.cur_pin && pin_draw(inj) != 0)
			inj_tree_pin_failed(&inj->tree);
	}
	if (!inj_tree_pending(&inj->tree))
		return settle(inj, emit, ud);
	if (emit_input(inj, emit, ud, chunk, *start, i + 1) != 0)
		return 1;
	*start = i + 1;
	inj->hold_field = inj->hold_len;
	inj->pin_id = inj->tree.cur_pin ? PIN_RANDOM : inj->tree.cur_own ? PIN_OWN : PIN_NONE;
	return 0;
}

/* A <meta> start tag (kept only with CSRF_INJECT_OPT_RAISE_REFERRER):
 * 1 when browsers read it as a referrer policy of no-referrer. Its name
 * must be "referrer" in any case (no blanks: HTML compares the whole
 * value); its content is read as csrfi_referrer_scan reads it, with the
 * legacy keywords. A content longer than the tag keeps is raised
 * unread: same-origin gives no other origin more than any policy does. */
static int meta_no_referrer(struct inj_tag *t)
{
	if (!(t->seen & A_SHORT) || !(t->seen & A_URL) || t->short_over)
		return 0;
	size_t n = inj_decode_attr(t->short_val, t->short_len);
	if (!csrfi_ieq(t->short_val, n, "referrer"))
		return 0;
	if (t->url_trunc)
		return 1;
	n = inj_decode_attr(t->url, t->url_len);
	return csrfi_referrer_scan(t->url, n, 1, CSRF_REFERRER_UNSET) == CSRF_REFERRER_NO_REFERRER;
}

/* The meta tag that ends at chunk[i] says no-referrer: the raise goes
 * right after it. Inside a held form still pending its place is noted
 * instead (the bytes up to the tag's end held first) and it goes out with
 * the form's bytes, once: a later no-referrer meta of the same form moves
 * it there. A form held no longer pending (a noscript button or bytes
 * read inside noscript ruled its token out, and no tag settled it since)
 * is let out first, as the end of a chunk would have: each raise at its
 * own place, however the stream was cut. Non-zero when emit stopped. */
static int referrer_raise(struct csrf_inject *inj, const char *chunk, size_t i, size_t *start, csrf_emit_fn emit,
                          void *ud)
{
	if (!meta_no_referrer(&inj->tag))
		return 0;
	if (settle(inj, emit, ud) != 0 || emit_input(inj, emit, ud, chunk, *start, i + 1) != 0)
		return 1;
	*start = i + 1;
	if (inj->holding) {
		inj->tree.count += inj->hold_referrer == HOLD_NONE;
		inj->hold_referrer = inj->hold_len;
		return 0;
	}
	inj->tree.count++;
	return emit(ud, inj->referrer_el, sizeof inj->referrer_el, 1) != 0;
}

/* Most tags change nothing the model follows: straight back to data.
 * *st: the tokenizer's next state. A meta kept (keep) may need its
 * referrer policy raised, wherever the model goes. */
static NOINLINE int tag_end_full(struct csrf_inject *inj, const char *chunk, size_t i, size_t *start, csrf_emit_fn emit,
                                 void *ud, uint8_t *st)
{
	if (inj_tree_form_usual(&inj->tree, &inj->tag)) { /* tag_move for it, without inj_tree_tag's other cases */
		hold_check(inj, i, *start);
		int ins = inj_tree_form_start(&inj->tree, &inj->tag);
		*st = S_DATA; /* tag_after with NEXT_DATA */
		inj->state = S_DATA;
		if (UNLIKELY(inj->pin_form))
			return pin_end(inj, chunk, i, start, emit, ud, ins);
		if (UNLIKELY(ins == INS_HOLD &&
		             (inj->tree.cur_pin ||
		              inj->tree.cur_own))) /* deep, its start tag not held: never, fail closed */
			inj_tree_pin_failed(&inj->tree);
		if (settle(inj, emit, ud) != 0)
			return 1;
		return tag_insert(inj, chunk, i, start, emit, ud, ins);
	}
	if (inj_tree_quiet(&inj->tree, &inj->tag)) { /* a held form no longer pending (tag_end): released */
		if (inj->tag.is_end)
			inj_tree_form_close(&inj->tree);
		*st = S_DATA;
		return settle(inj, emit, ud);
	}
	int meta = inj->tag.id == T_META && inj->tag.keep;
	if (inj_tree_plain(&inj->tree, &inj->tag) ||
	    (inj_is_table_tag(inj->tag.id) && inj_tree_table_tag(&inj->tree, &inj->tag))) {
		*st = S_DATA;
		return meta ? referrer_raise(inj, chunk, i, start, emit, ud) : 0;
	}
	int r = tag_move(inj, chunk, i, start, emit, ud);
	*st = inj->state;
	if (r == 0 && meta)
		r = referrer_raise(inj, chunk, i, start, emit, ud);
	return r;
}

/* The tag ends at chunk[i] ('>'): a quiet tag (inj_tree_quiet) here, in a
 * function small enough to need no saved registers, when no form is held
 * or the held one is still pending; the others in tag_end_full. A quiet
 * tag settles nothing (a form end tag that reaches it while the form is
 * held is inside a template, where it clears nothing), so it needs no
 * hold check: the form's bytes only grow, and whether they still fit is
 * judged right before anything can settle the form (hold_check in
 * tag_move, form_end, the noscript reading and an ESC byte; out() when
 * the bytes are passed on), which answers as a check here would. */
STEP int tag_end_step(struct csrf_inject *inj, const char *chunk, size_t i, size_t *start, csrf_emit_fn emit, void *ud,
                      uint8_t *st)
{
	struct inj_tag *tag = &inj->tag;
	if (inj_tree_quiet(&inj->tree, tag) && (!inj->holding || inj_tree_pending(&inj->tree))) {
		if (tag->is_end)
			inj_tree_form_close(&inj->tree);
		*st = S_DATA;
		return 0;
	}
	return tag_end_full(inj, chunk, i, start, emit, ud, st);
}

static NOINLINE int tag_end(struct csrf_inject *inj, const char *chunk, size_t i, size_t *start, csrf_emit_fn emit,
                            void *ud, uint8_t *st)
{
	return tag_end_step(inj, chunk, i, start, emit, ud, st);
}

/* A quoted value from chunk[i] on (after its quote q): kept as far as it
 * goes in this chunk; returns the index after it, or len. */
STEP size_t quoted_value(struct csrf_inject *inj, struct scan *s, size_t i, char q, uint8_t *st)
{
	size_t e = scan_quote(s, i, q), len = s->len;
	value_bytes(&inj->tag, s->p + i, e - i, s->p + len);
	i = e;
	if (i < len) {
		*st = S_AFTER_ATTR_VALUE_Q;
		return i + 1;
	}
	*st = q == '"' ? S_ATTR_VALUE_DQ : S_ATTR_VALUE_SQ;
	return len;
}

/* Skips to the next ch; past it, the tokenizer is in state next. */
static inline size_t skip_to(const char *chunk, size_t i, size_t len, char ch, uint8_t next, uint8_t *st)
{
	i += find_byte(chunk + i, len - i, ch);
	if (i < len) {
		*st = next;
		i++;
	}
	return i;
}

/* ---- script data ---- */

/* Tracks the "script" of a double escape ("<script" inside "<!--" in a
 * script); a letter beyond or unlike it spoils the match. */
static void script_byte(struct csrf_inject *inj, unsigned char c)
{
	static const char s[] = "script";
	if (!inj->mismatch && inj->match < LIT_LEN(s) && inj_lower(c) == (unsigned char)s[inj->match])
		inj->match++;
	else
		inj->mismatch = 1;
}

static int script_matched(const struct csrf_inject *inj)
{
	return !inj->mismatch && inj->match == LIT_LEN("script");
}

/* ---- the tokenizer ---- */

/* An end tag name was matched in raw text; c ends it. */
static int raw_end(struct csrf_inject *inj, unsigned char c, const char *chunk, size_t i, size_t *start,
                   csrf_emit_fn emit, void *ud, uint8_t *st)
{
	begin_raw_end_tag(inj, inj->raw);
	if (inj_is_ws(c)) {
		*st = S_BEFORE_ATTR_NAME;
		return 0;
	}
	if (c == '/') {
		*st = S_SELF_CLOSING;
		return 0;
	}
	return tag_end(inj, chunk, i, start, emit, ud, st);
}

/* The steps of a tag. Each reads from chunk[i] on, sets *st to the state
 * it leaves the tokenizer in, and returns the index of the first byte it
 * did not consume, or SIZE_MAX when emit stopped. A state's case calls
 * its step, and so does the step before it when bytes remain, so that a
 * usual tag takes one pass of the loop for its name and one for each
 * attribute. */

/* S_AFTER_ATTR_VALUE_Q at chunk[i] (i < len). */
STEP size_t after_value_step(struct csrf_inject *inj, const char *chunk, size_t i, size_t *start, csrf_emit_fn emit,
                             void *ud, uint8_t *st)
{
	unsigned char c = (unsigned char)chunk[i];
	if (inj_is_ws(c) || c == '/') {
		*st = c == '/' ? S_SELF_CLOSING : S_BEFORE_ATTR_NAME;
		return i + 1;
	}
	if (c == '>')
		return tag_end(inj, chunk, i, start, emit, ud, st) ? SIZE_MAX : i + 1;
	*st = S_BEFORE_ATTR_NAME;
	return i;
}

/* S_ATTR_NAME: the rest of the name, then what ends it; the usual
 * name="value" and what follows its quote go on here. */
STEP size_t attr_name_step(struct csrf_inject *inj, struct scan *s, size_t i, size_t *start, csrf_emit_fn emit,
                           void *ud, uint8_t *st)
{
	struct inj_tag *tag = &inj->tag;
	const char *chunk = s->p;
	size_t len = s->len;
	*st = S_ATTR_NAME;
	i = attr_run(s, tag, i);
	if (i == len)
		return i;
	if (chunk[i] == '=' && i + 1 < len && (chunk[i + 1] == '"' || chunk[i + 1] == '\'')) {
		i = quoted_value(inj, s, i + 2, chunk[i + 1], st);
		return i < len ? after_value_step(inj, chunk, i, start, emit, ud, st) : i;
	}
	if (chunk[i] == '=') {
		*st = S_BEFORE_ATTR_VALUE;
		return i + 1;
	}
	*st = S_AFTER_ATTR_NAME; /* whitespace, '/', '>' */
	return i;
}

/* The usual attributes of a tag from chunk[i] on (the first byte of a
 * name, not '=', in the window), name="value" or name='value' one after
 * another with one blank between them, read from the masks of the 64
 * bytes from i at once: a name ends at its first K_END byte, which must
 * be its '=' (no blank, '/', '>' or control byte in it: attr_run's
 * scan_until ends it there too), the quote after it opens the value (its
 * K_GQ bit), and the value ends at the next K_GQ byte that is that quote
 * (scan_quote's). Each is read as before_attr_full reads it (begin_attr,
 * attr_judge when its attributes matter, value_keep_step for a slot),
 * in order. The walk stops at any other shape, where a name needs
 * sixteen bytes the chunk does not hold (attr_run's slow path judges
 * it), and where the bits end (the 64 bytes, the window or the chunk):
 * nothing of the attribute it stops at is read. Returns the index after
 * the last value read (the after attribute value (quoted) state there),
 * or i when it read none. */
STEP size_t attrs_masked(struct inj_tag *tag, struct scan *s, size_t i)
{
	const char *p = s->p + i;
	size_t n = s->len - i;
	uint64_t en = next64(s, i, K_END), gq = next64(s, i, K_GQ);
	unsigned x = 0, done = 0; /* the name's first byte; after the last value read */
	for (;;) {
		uint64_t ea = en & (~UINT64_C(0) << x);
		if (!ea || n - x < 16)
			break;
		unsigned a = CTZ32(ea); /* the name's end: its '=' */
		if (a >= 62 || p[a] != '=')
			break;
		uint64_t g = gq >> (a + 1);
		if (!(g & 1)) /* no '>' or quote after it (nor a byte: the chunk's end) */
			break;
		char q = p[a + 1];
		if (q == '>')
			break;
		g &= g - 1;
		while (g && p[a + 1 + CTZ32(g)] != q)
			g &= g - 1;
		if (!g)
			break;
		unsigned h = a + 1 + CTZ32(g); /* its closing quote, < 64 and < n */
		begin_attr(tag);
		if (tag->keep)
			attr_judge(tag, p + x, a - x);
		if (h > a + 2 && tag->slot != SLOT_NONE)
			value_keep_step(tag, p + a + 2, h - (a + 2), s->p + s->len);
		done = h + 1;
		/* one blank, then the next name: a byte with no K_END bit (a
		 * blank, '>', '/', '=' and the control bytes have one: a name
		 * starting with a control byte would end at once, which the
		 * next turn would stop at too) */
		if (h + 2 >= 64 || h + 2 >= n || !inj_is_ws((unsigned char)p[h + 1]) || ((en >> (h + 2)) & 1))
			break;
		x = h + 2;
	}
	return i + done;
}

/* S_BEFORE_ATTR_NAME: whitespace, then an attribute or the tag's end.
 * The usual attributes, name="value" one after another with whitespace
 * between them, and the tag's '>' after them, are read here in one loop,
 * not one pass of run()'s switch (an indirect jump) each: the states
 * 13.2.5.32, 33, 35, 36/37 and 39 in a row. What the loop does not take
 * (an unquoted value, a name followed by a space) it leaves in its state
 * for the switch, as the steps above do. The tags plain_tag named come
 * through before_attr_step, below. */
static NOINLINE size_t before_attr_full(struct csrf_inject *inj, struct scan *s, size_t i, size_t *start,
                                        csrf_emit_fn emit, void *ud, uint8_t *st)
{
	struct inj_tag *tag = &inj->tag;
	const char *chunk = s->p;
	size_t len = s->len;
	for (;;) {
		while (i < len && inj_is_ws((unsigned char)chunk[i]))
			i++;
		if (i == len) {
			*st = S_BEFORE_ATTR_NAME;
			return i;
		}
		unsigned char c = (unsigned char)chunk[i];
		if (c == '>') /* as S_AFTER_ATTR_NAME reads it */
			return tag_end_step(inj, chunk, i, start, emit, ud, st) ? SIZE_MAX : i + 1;
		if (c == '/') {
			*st = S_SELF_CLOSING;
			return i + 1;
		}
		if (c != '=' && i - s->base < s->span) {
			size_t e = attrs_masked(tag, s, i);
			if (e != i) {
				i = e;
				goto after_value;
			}
		}
		begin_attr(tag);
		if (c == '=') { /* part of the name here */
			tag->attr[0] = '=';
			tag->attr_len = 1;
			i++;
		}
		/* S_ATTR_NAME */
		i = attr_run(s, tag, i);
		if (i == len) {
			*st = S_ATTR_NAME;
			return i;
		}
		if (chunk[i] != '=') {
			*st = S_AFTER_ATTR_NAME; /* whitespace, '/', '>' */
			return i;
		}
		if (i + 1 == len || (chunk[i + 1] != '"' && chunk[i + 1] != '\'')) {
			*st = S_BEFORE_ATTR_VALUE;
			return i + 1;
		}
		/* S_ATTR_VALUE_DQ or _SQ, as quoted_value */
		char q = chunk[i + 1];
		size_t e = scan_quote(s, i + 2, q);
		if (e > i + 2 && tag->slot != SLOT_NONE) /* value_bytes, its copy inline here */
			value_keep_step(tag, chunk + i + 2, e - (i + 2), chunk + len);
		if (e == len) {
			*st = q == '"' ? S_ATTR_VALUE_DQ : S_ATTR_VALUE_SQ;
			return len;
		}
		i = e + 1;
	after_value: /* S_AFTER_ATTR_VALUE_Q */
		if (i == len) {
			*st = S_AFTER_ATTR_VALUE_Q;
			return i;
		}
		c = (unsigned char)chunk[i];
		if (inj_is_ws(c)) {
			i++;
			continue;
		}
		if (c == '/') {
			*st = S_SELF_CLOSING;
			return i + 1;
		}
		if (c == '>')
			return tag_end_step(inj, chunk, i, start, emit, ud, st) ? SIZE_MAX : i + 1;
		/* another byte: reconsumed in the before attribute name state */
	}
}

/* S_BEFORE_ATTR_NAME at chunk[i] for a tag plain_tag named (a tag that
 * matters in HTML content, on a path that skips plain tags): the usual
 * shape first, attributes written name="value" from i on (no blank
 * before the first: its byte is no whitespace, '/', '>' or '='), read
 * through the masks (attrs_masked), then the tag's '>' right after the
 * last value's quote; what is left after the values it read goes on as
 * the loop's after_value does, in before_attr_full (which also takes any
 * other shape from i, and every tag of its attributes not read). Out of
 * the loop's function, this one saves few registers: the 20-form page's
 * form and input start tags take it (avx2: 47,051 -> 45,788
 * instructions a page with scan_tail; socat.html a little less too). */
static NOINLINE size_t before_attr_step(struct csrf_inject *inj, struct scan *s, size_t i, size_t *start,
                                        csrf_emit_fn emit, void *ud, uint8_t *st)
{
	if (LIKELY(inj->tag.keep && i - s->base < s->span && /* also i < len: the window ends by then */
	           !(inj_cls[(unsigned char)s->p[i]] & C_ATTR_END))) {
		size_t e = attrs_masked(&inj->tag, s, i);
		if (LIKELY(e != i && e < s->len && s->p[e] == '>'))
			return tag_end_step(inj, s->p, e, start, emit, ud, st) ? SIZE_MAX : e + 1;
		if (e != i) { /* S_AFTER_ATTR_VALUE_Q at e */
			if (e == s->len) {
				*st = S_AFTER_ATTR_VALUE_Q;
				return e;
			}
			if (s->p[e] == '/') {
				*st = S_SELF_CLOSING;
				return e + 1;
			}
			/* whitespace (the loop skips it) or another byte, reconsumed
			 * in the before attribute name state */
			i = e;
		}
		/* else another shape: the loop reads it (and tries the masks
		 * again, in vain: such a tag pays that twice) */
	}
	return before_attr_full(inj, s, i, start, emit, ud, st);
}

STEP size_t name_end_step(struct csrf_inject *inj, struct scan *s, size_t i, size_t *start, csrf_emit_fn emit, void *ud,
                          uint8_t *st, int named);

/* A tag that matters whose name plain_tag read and whose '>' follows its
 * name at chunk[i]: a button or input start tag with no attribute, or a
 * form end tag, in HTML content outside select, the model not stopped
 * (where plain_tag reads). Those are quiet (inj_tree_quiet: a submitter
 * with neither formaction nor formmethod, the form end tag; form_end
 * stops nothing, so the end tag stays quiet after it), and they are
 * moved here as name_end_step and tag_end move them (settle is nothing
 * unless a held form is no longer pending, where tag_end_full calls it),
 * without filling in the tag, which nothing reads after its end: the
 * 20-form page's button and form end tags. The tokenizer stays in the
 * data state. Non-zero when emit stopped. */
static NOINLINE int bare_quiet(struct csrf_inject *inj, size_t i, int end, size_t start, csrf_emit_fn emit, void *ud)
{
	if (end) {
		if (form_end_step(inj, i, start, emit, ud))
			return 1;
		inj_tree_form_close(&inj->tree);
	}
	return settle(inj, emit, ud);
}

/* S_TAG_NAME: the rest of the name, then what ends it. */
STEP size_t tag_name_step(struct csrf_inject *inj, struct scan *s, size_t i, size_t *start, csrf_emit_fn emit, void *ud,
                          uint8_t *st)
{
	*st = S_TAG_NAME;
	i = name_run(s, &inj->tag, i, inj->tree.depth > 0);
	if (i == s->len)
		return i;
	return name_end_step(inj, s, i, start, emit, ud, st, 0);
}

/* The tag's name (in tag) ended at chunk[i] (i < len), in HTML or foreign
 * content; named: its id is set already (plain_tag looked it up). */
STEP size_t name_end_step(struct csrf_inject *inj, struct scan *s, size_t i, size_t *start, csrf_emit_fn emit, void *ud,
                          uint8_t *st, int named)
{
	struct inj_tag *tag = &inj->tag;
	const char *chunk = s->p;
	int foreign = inj->tree.depth > 0;
	unsigned char c = (unsigned char)chunk[i];
	if (!tag->skip_name) { /* else T_OTHER, and no attributes kept, as begin_tag left it */
		if (named)
			tag->keep = (uint8_t)attrs_matter(tag);
		else
			name_done(tag, foreign);
		if (tag->id == T_META && !tag->is_end && (inj->options & CSRF_INJECT_OPT_RAISE_REFERRER))
			tag->keep = 1; /* its name and content: a referrer policy to raise */
	}
	if (tag->id == T_TABLE || tag->id == T_FORM) {
		inj->tree.table_starts += tag->id == T_TABLE && !tag->is_end; /* the depth bound's T */
		if (tag->id == T_FORM && tag->is_end && form_end(inj, i, *start, emit, ud))
			return SIZE_MAX;
		if (tag->id == T_FORM && !tag->is_end && UNLIKELY(inj_tree_pin_maybe(&inj->tree)) && !inj->holding &&
		    pin_begin(inj, chunk, i, start, emit, ud))
			return SIZE_MAX;
	}
	if (c == '>')
		return tag_end(inj, chunk, i, start, emit, ud, st) ? SIZE_MAX : i + 1;
	if (c == '/') {
		*st = S_SELF_CLOSING;
		return i + 1;
	}
	/* a tag plain_tag named (on the paths that skip plain tags) may be a
	 * form's usual one (before_attr_step); the others (every tag on the
	 * scalar path, a tag in foreign content, one plain_tag left) go
	 * straight to the loop. named is a constant where this is inlined. */
	if (named)
		return before_attr_step(inj, s, i + 1, start, emit, ud, st);
	return before_attr_full(inj, s, i + 1, start, emit, ud, st);
}

/* Runs the tokenizer over chunk[0..len), from the state it is in. Each
 * state reads from chunk[i] on and returns the index of the first byte it
 * did not consume (a state that hands a byte over to another returns i
 * itself). Returns SIZE_MAX when emit stopped. */
static size_t run(struct csrf_inject *inj, const char *chunk, size_t len, size_t *start, csrf_emit_fn emit, void *ud)
{
	struct inj_tag *tag = &inj->tag;
	uint8_t st = inj->state; /* kept in a register; inj->state is written back at the end */
	size_t i = 0;
	struct scan sc;
	sc.p = chunk;
	sc.len = len;
	sc.base = sc.end = sc.span = 0;
	sc.path = inj_scan_path();
	while (i < len) {
		if (st == S_DATA) { /* the usual state: a conditional branch, not the switch's indirect jump */
			i = scan_next(&sc, i, K_LT);
			if (sc.path->skip_plain && inj->tree.depth == 0 && !inj->tree.select && !inj->tree.stopped &&
			    !inj->tree.tpl_fresh) {
				/* the tags that change nothing, one after another
				 * (plain_tag reads them in HTML content only; none
				 * while template contents wait for the start tag
				 * that picks their mode, tpl_fresh: the model sees
				 * each) */
				size_t ne = 0;
				uint8_t nid = T_OTHER;
				for (int n = 0;; n++) {
					/* the first three through plain_tag (after a tag
					 * that matters, another often comes soon: a form's
					 * fields and its end tag; plain_fast pays for its
					 * start once), those after them through plain_fast */
					size_t e = plain_tag(inj, &sc, i, &ne, &nid);
					if (e == i)
						break;
					inj->tree.starts += chunk[i + 1] != '/'; /* the depth bound's S */
					/* the next '<' from this one's next byte, which does
					 * not wait for the tag's end e: it is the next tag's
					 * when it is not inside the tag (not below e) */
					size_t nx = scan_next(&sc, i + 1, K_LT);
					i = nx >= e ? nx : scan_next(&sc, e, K_LT);
					if (n < 2)
						continue;
					i = UNLIKELY(!inj_tree_deep(&inj->tree)) ? plain_fast_counting(inj, &sc, i)
					                                         : plain_fast(inj, &sc, i);
				}
				if (ne) { /* a tag that matters, its name read */
					int end = chunk[i + 1] == '/';
					if (chunk[ne] == '>' &&
					    (end ? nid == T_FORM : nid == T_BUTTON || nid == T_INPUT)) {
						/* a bare submitter settles only a held form no
						 * longer pending */
						if ((end || (inj->holding && !inj_tree_pending(&inj->tree))) &&
						    bare_quiet(inj, ne, end, *start, emit, ud))
							return SIZE_MAX;
						inj->tree.starts += !end; /* the depth bound's S */
						i = ne + 1;
						continue;
					}
					begin_named(inj, end, nid, ne - (i + 1 + (size_t)end));
					i = name_end_step(inj, &sc, ne, start, emit, ud, &st, 1);
					continue;
				}
			}
			if (i + 2 < len && (inj_is_alpha((unsigned char)chunk[i + 1]) ||
			                    (chunk[i + 1] == '/' && inj_is_alpha((unsigned char)chunk[i + 2])))) {
				/* the usual: a start or end tag */
				int end = chunk[i + 1] == '/';
				begin_tag(inj, end, (unsigned char)chunk[i + 1 + end]);
				i = tag_name_step(inj, &sc, i + 2 + end, start, emit, ud, &st);
			} else if (i + 1 < len && inj_is_alpha((unsigned char)chunk[i + 1])) {
				begin_tag(inj, 0, (unsigned char)chunk[i + 1]);
				st = S_TAG_NAME;
				i += 2;
			} else if (i < len) {
				st = S_TAG_OPEN;
				i++;
			}
			continue;
		}
		unsigned char c = (unsigned char)chunk[i];
		switch (st) {
		case S_TAG_OPEN:
			if (inj_is_alpha(c)) {
				begin_tag(inj, 0, c);
				st = S_TAG_NAME;
				i++;
			} else if (c == '/' || c == '!' || c == '?') {
				st = c == '/' ? S_END_TAG_OPEN : c == '!' ? S_MARKUP_DECL : S_BOGUS_COMMENT;
				i++;
			} else {
				st = S_DATA;
			}
			break;
		case S_END_TAG_OPEN:
			if (inj_is_alpha(c)) {
				begin_tag(inj, 1, c);
				st = S_TAG_NAME;
			} else {
				st = c == '>' ? S_DATA : S_BOGUS_COMMENT;
			}
			i++;
			break;
		case S_TAG_NAME:
			i = tag_name_step(inj, &sc, i, start, emit, ud, &st);
			break;
		case S_BEFORE_ATTR_NAME:
			i = before_attr_full(inj, &sc, i, start, emit, ud, &st);
			break;
		case S_ATTR_NAME:
			i = attr_name_step(inj, &sc, i, start, emit, ud, &st);
			break;
		case S_AFTER_ATTR_NAME:
			if (inj_is_ws(c)) {
				i++;
			} else if (c == '/' || c == '=') {
				st = c == '/' ? S_SELF_CLOSING : S_BEFORE_ATTR_VALUE;
				i++;
			} else if (c == '>') {
				if (tag_end(inj, chunk, i, start, emit, ud, &st))
					return SIZE_MAX;
				i++;
			} else {
				begin_attr(tag);
				st = S_ATTR_NAME;
			}
			break;
		case S_BEFORE_ATTR_VALUE:
			if (inj_is_ws(c)) {
				i++;
			} else if (c == '"' || c == '\'') {
				i = quoted_value(inj, &sc, i + 1, (char)c, &st);
			} else if (c == '>') {
				if (tag_end(inj, chunk, i, start, emit, ud, &st))
					return SIZE_MAX;
				i++;
			} else {
				st = S_ATTR_VALUE_UQ;
			}
			break;
		case S_ATTR_VALUE_DQ:
		case S_ATTR_VALUE_SQ:
			i = quoted_value(inj, &sc, i, st == S_ATTR_VALUE_DQ ? '"' : '\'', &st);
			break;
		case S_ATTR_VALUE_UQ: {
			size_t e = scan_until(&sc, i, C_UQ_END);
			value_bytes(tag, chunk + i, e - i, chunk + len);
			i = e;
			if (i == len)
				break;
			if (chunk[i] == '>') {
				if (tag_end(inj, chunk, i, start, emit, ud, &st))
					return SIZE_MAX;
			} else {
				st = S_BEFORE_ATTR_NAME;
			}
			i++;
			break;
		}
		case S_AFTER_ATTR_VALUE_Q:
			i = after_value_step(inj, chunk, i, start, emit, ud, &st);
			break;
		case S_SELF_CLOSING:
			if (c == '>') {
				/* <form/> is still a start tag: HTML ignores the slash */
				tag->self_closing = 1;
				if (tag_end(inj, chunk, i, start, emit, ud, &st))
					return SIZE_MAX;
				i++;
			} else {
				st = S_BEFORE_ATTR_NAME;
			}
			break;
		case S_MARKUP_DECL:
			if (c == '[' && inj_tree_cdata(&inj->tree)) {
				inj->match = 1;
				st = S_CDATA_OPEN;
			} else {
				st = c == '-' ? S_MARKUP_DASH : c == '>' ? S_DATA : S_BOGUS_COMMENT;
			}
			i++;
			break;
		case S_MARKUP_DASH:
			st = c == '-' ? S_COMMENT_START : c == '>' ? S_DATA : S_BOGUS_COMMENT;
			i++;
			break;
		case S_CDATA_OPEN: {
			static const char open[] = "[CDATA[";
			if (c != (unsigned char)open[inj->match]) {
				st = S_BOGUS_COMMENT; /* c may be its '>' */
				break;
			}
			if (++inj->match == LIT_LEN(open))
				st = S_CDATA;
			i++;
			break;
		}
		case S_BOGUS_COMMENT:
			i = skip_to(chunk, i, len, '>', S_DATA, &st);
			break;
		case S_COMMENT_START:      /* "<!-->" ends at once */
		case S_COMMENT_START_DASH: /* and so does "<!--->" */
			if (c == '-' || c == '>') {
				st = c == '>' ? S_DATA : st == S_COMMENT_START ? S_COMMENT_START_DASH : S_COMMENT_END;
				i++;
			} else {
				st = S_COMMENT;
			}
			break;
		case S_COMMENT:
			i = skip_to(chunk, i, len, '-', S_COMMENT_END_DASH, &st);
			break;
		case S_COMMENT_END_DASH:
			if (c == '-') {
				st = S_COMMENT_END;
				i++;
			} else {
				st = S_COMMENT;
			}
			break;
		case S_COMMENT_END:
			if (c == '>' || c == '!' || c == '-') {
				st = c == '>' ? S_DATA : c == '!' ? S_COMMENT_END_BANG : S_COMMENT_END;
				i++;
			} else {
				st = S_COMMENT;
			}
			break;
		case S_COMMENT_END_BANG: /* "--!>" closes a comment too */
			if (c == '-' || c == '>') {
				st = c == '>' ? S_DATA : S_COMMENT_END_DASH;
				i++;
			} else {
				st = S_COMMENT;
			}
			break;
		case S_CDATA:
			i = skip_to(chunk, i, len, ']', S_CDATA_BRACKET, &st);
			break;
		case S_CDATA_BRACKET:
			if (c == ']') {
				st = S_CDATA_END;
				i++;
			} else {
				st = S_CDATA;
			}
			break;
		case S_CDATA_END: /* "]]]>" ends too */
			if (c == '>' || c == ']') {
				st = c == '>' ? S_DATA : S_CDATA_END;
				i++;
			} else {
				st = S_CDATA;
			}
			break;
		case S_RAW:
		case S_SCRIPT:
			i = scan_next(&sc, i, K_LT);
			if (i < len) {
				st = st == S_RAW ? S_RAW_LT : S_SD_LT;
				i++;
			}
			break;
		case S_RAW_LT:
			if (c == '/') {
				inj->match = 0;
				inj->ret = S_RAW;
				st = S_END_MATCH;
				i++;
			} else {
				st = S_RAW;
			}
			break;
		case S_END_MATCH: {
			/* Only the open element's own end tag, in any case, followed by
			 * a space, '/' or '>' ends raw text ("</scripts" does not). */
			uint8_t rl;
			const char *rn = inj_raw_name(inj->raw, &rl);
			if (inj->match < rl && inj_lower(c) == (unsigned char)rn[inj->match]) {
				inj->match++;
				i++;
			} else if (inj->match == rl && (inj_is_ws(c) || c == '/' || c == '>')) {
				if (raw_end(inj, c, chunk, i, start, emit, ud, &st))
					return SIZE_MAX;
				i++;
			} else {
				st = inj->ret;
			}
			break;
		}
		/* Script data and its escapes ("<!--" ... "-->" inside a script,
		 * and "<script>" inside that), where "</script>" may not end it. */
		case S_SD_LT:
			if (c == '/') {
				inj->match = 0;
				inj->ret = S_SCRIPT;
				st = S_END_MATCH;
				i++;
			} else if (c == '!') {
				st = S_SD_ESC_START;
				i++;
			} else {
				st = S_SCRIPT;
			}
			break;
		case S_SD_ESC_START:
		case S_SD_ESC_START_DASH:
			if (c == '-') {
				st = st == S_SD_ESC_START ? S_SD_ESC_START_DASH : S_SD_ESC_DASH_DASH;
				i++;
			} else {
				st = S_SCRIPT;
			}
			break;
		case S_SD_ESC:
			if (c == '-')
				st = S_SD_ESC_DASH;
			else if (c == '<')
				st = S_SD_ESC_LT;
			i++;
			break;
		case S_SD_ESC_DASH:
			st = c == '-' ? S_SD_ESC_DASH_DASH : c == '<' ? S_SD_ESC_LT : S_SD_ESC;
			i++;
			break;
		case S_SD_ESC_DASH_DASH:
			if (c == '<')
				st = S_SD_ESC_LT;
			else if (c == '>')
				st = S_SCRIPT;
			else if (c != '-')
				st = S_SD_ESC;
			i++;
			break;
		case S_SD_ESC_LT:
			if (c == '/') {
				inj->match = 0;
				inj->ret = S_SD_ESC;
				st = S_END_MATCH;
				i++;
			} else if (inj_is_alpha(c)) {
				inj->match = 0;
				inj->mismatch = 0;
				st = S_SD_DESC_START;
			} else {
				st = S_SD_ESC;
			}
			break;
		case S_SD_DESC_START:
		case S_SD_DESC_END:
			if (inj_is_ws(c) || c == '/' || c == '>') {
				if (st == S_SD_DESC_START)
					st = script_matched(inj) ? S_SD_DESC : S_SD_ESC;
				else
					st = script_matched(inj) ? S_SD_ESC : S_SD_DESC;
				i++;
			} else if (inj_is_alpha(c)) {
				script_byte(inj, c);
				i++;
			} else {
				st = st == S_SD_DESC_START ? S_SD_ESC : S_SD_DESC;
			}
			break;
		case S_SD_DESC:
			if (c == '-')
				st = S_SD_DESC_DASH;
			else if (c == '<')
				st = S_SD_DESC_LT;
			i++;
			break;
		case S_SD_DESC_DASH:
			st = c == '-' ? S_SD_DESC_DASH_DASH : c == '<' ? S_SD_DESC_LT : S_SD_DESC;
			i++;
			break;
		case S_SD_DESC_DASH_DASH:
			if (c == '<')
				st = S_SD_DESC_LT;
			else if (c == '>')
				st = S_SCRIPT;
			else if (c != '-')
				st = S_SD_DESC;
			i++;
			break;
		case S_SD_DESC_LT:
			if (c == '/') {
				inj->match = 0;
				inj->mismatch = 0;
				st = S_SD_DESC_END;
				i++;
			} else {
				st = S_SD_DESC;
			}
			break;
		case S_NOSCRIPT:
			/* hold_check as the content is read: a button read there may
			 * settle the form */
			i = inj_noscript_scan(&inj->ns, &inj->tree, chunk, i, len, *start,
			                      inj->holding ? CSRF_INJECT_HOLD_MAX - inj->hold_len : SIZE_MAX);
			if (i == len && inj->ns.state != M_BAD)
				break;
			/* a browser without scripting may already have built what the
			 * reading could not follow; or the raw text ends where that
			 * reading is not back in its data state */
			if (inj->ns.state == M_BAD || !inj->ns.lt_clean || inj->ns.tables > 0) {
				hold_check(inj, i, *start);
				inj_tree_stop(&inj->tree, CSRF_INJECT_NOSCRIPT);
				st = S_PASS;
				break;
			}
			if (raw_end(inj, (unsigned char)chunk[i], chunk, i, start, emit, ud, &st))
				return SIZE_MAX;
			i++;
			break;
		default: /* S_PASS */
			i = len;
			break;
		}
	}
	inj->state = st;
	return i;
}

/* ---- the API ---- */

CSRF_API size_t csrf_inject_size(void)
{
	return sizeof(struct csrf_inject);
}

static void reset_stream(struct csrf_inject *inj)
{
	inj->state = S_DATA;
	inj->failed = 0;
	inj->fed = 0;
	memset(&inj->tag, 0, offsetof(struct inj_tag, short_val));
	inj_tree_reset(&inj->tree);
}

static int valid_safe(const char *s, size_t len, size_t max)
{
	if (!s || len == 0 || len > max)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!(inj_cls[(unsigned char)s[i]] & C_SAFE))
			return 0;
	return 1;
}

static size_t put(char *dst, size_t at, const char *src, size_t n)
{
	memcpy(dst + at, src, n);
	return at + n;
}

/* The masks plain_id reads, for these options. */
static void set_plain_ids(struct csrf_inject *inj)
{
	for (int e = 0; e < 2; e++)
		for (int o = 0; o < 2; o++)
			inj->plain_ids[e][o] = inj_tree_plain_ids(e, o);
	if (inj->options & CSRF_INJECT_OPT_RAISE_REFERRER) {
		inj->plain_ids[0][0] &= ~INJ_BIT(T_META);
		inj->plain_ids[0][1] &= ~INJ_BIT(T_META);
	}
}

CSRF_API csrf_reason csrf_inject_init(void *mem, size_t mem_len, const char *self_origin, size_t origin_len,
                                      const char *field, size_t field_len, const char *token, size_t token_len,
                                      csrf_inject **out)
{
	csrf_origin self;
	if (!self_origin) {
		if (out)
			*out = NULL;
		return CSRF_ERR_ARG;
	}
	int parsed = csrf_origin_parse(self_origin, origin_len, &self) == CSRF_OK;
	return csrfi_inject_init_self(mem, mem_len, parsed ? &self : NULL, field, field_len, token, token_len, out);
}

/* The checks in csrf_inject_init's order: the memory first, then the
 * origin (unparsed: NULL), the field and the token. */
csrf_reason csrfi_inject_init_self(void *mem, size_t mem_len, const csrf_origin *self, const char *field,
                                   size_t field_len, const char *token, size_t token_len, csrf_inject **out)
{
	if (out)
		*out = NULL;
	if (!mem || !out)
		return CSRF_ERR_ARG;
	if (mem_len < sizeof(struct csrf_inject))
		return CSRF_ERR_BUFFER;
	if ((uintptr_t)mem % alignof(struct csrf_inject) != 0 || !self)
		return CSRF_ERR_ARG;
	if (!valid_safe(field, field_len, CSRF_FIELD_NAME_MAX) || !valid_safe(token, token_len, CSRF_TOKEN_LEN))
		return CSRF_ERR_ARG;

	struct csrf_inject *inj = mem;
	/* Only what is read before it is written, not the whole state (36 KB
	 * of it, most of a short page's cost): the tokenizer's bytes, the
	 * noscript reading and the last status here; the tag up to its values
	 * and the model up to its stacks in reset_stream. The rest is read
	 * only below a length or depth set when it is written: the hold
	 * (hold_len), the tag's values (short_len, type_len, url_len), the
	 * model's stacks (depth, tables), the tails of the elements (their
	 * lengths). */
	memset(inj, 0, offsetof(struct csrf_inject, tag));
	inj->self = *self;
	inj->tree.self = &inj->self;
	inj->options = 0;
	set_plain_ids(inj);
	size_t n = 0;
	n = put(inj->input_el, n, INPUT_PRE, LIT_LEN(INPUT_PRE));
	n = put(inj->input_el, n, field, field_len);
	n = put(inj->input_el, n, INPUT_MID, LIT_LEN(INPUT_MID));
	n = put(inj->input_el, n, token, token_len);
	n = put(inj->input_el, n, INPUT_END, LIT_LEN(INPUT_END));
	inj->input_len = (uint16_t)n;
	n = 0;
	n = put(inj->meta_el, n, META_PRE, LIT_LEN(META_PRE));
	n = put(inj->meta_el, n, field, field_len);
	n = put(inj->meta_el, n, META_MID, LIT_LEN(META_MID));
	n = put(inj->meta_el, n, token, token_len);
	n = put(inj->meta_el, n, META_END, LIT_LEN(META_END));
	inj->meta_len = (uint16_t)n;
	memcpy(inj->referrer_el, REFERRER_EL, LIT_LEN(REFERRER_EL));
	inj->holding = 0;
	inj->pin_form = inj->pin_hold = inj->pin_id = 0;
	inj->hold_field = 0;
	inj->hold_len = 0;
	inj->hold_meta = HOLD_NONE;
	inj->hold_referrer = HOLD_NONE;
	reset_stream(inj);
	*out = inj;
	return CSRF_OK;
}

CSRF_API csrf_reason csrf_inject_options(csrf_inject *inj, unsigned options)
{
	if (!inj || inj->fed || (options & ~CSRF_INJECT_OPT_RAISE_REFERRER))
		return CSRF_ERR_ARG;
	inj->options = options;
	set_plain_ids(inj);
	return CSRF_OK;
}

void csrfi_inject_wipe(csrf_inject *inj)
{
	/* the token lives only in the two elements the injector inserts */
	csrfi_wipe(inj->input_el, sizeof inj->input_el);
	csrfi_wipe(inj->meta_el, sizeof inj->meta_el);
	inj->input_len = 0;
	inj->meta_len = 0;
}

CSRF_API csrf_reason csrf_inject_feed(csrf_inject *inj, const char *chunk, size_t len, csrf_emit_fn emit, void *ud)
{
	if (!inj || !emit || (!chunk && len > 0))
		return CSRF_ERR_ARG;
	if (inj->failed)
		return CSRF_ERR_STOPPED;
	inj->fresh = 0;
	inj->fed = 1;
	size_t start = 0, lim = len;
	/* An ESC byte: a browser that does not know the charset for sure may
	 * read the page as ISO-2022-JP, where "ESC $ B <!--" is two letters.
	 * The bytes before the first ESC read the same in both. */
	if (inj->state != S_PASS && len > 0) {
		const char *esc = memchr(chunk, 0x1b, len);
		if (esc)
			lim = (size_t)(esc - chunk);
	}
	if (run(inj, chunk, lim, &start, emit, ud) == SIZE_MAX) {
		inj->failed = 1;
		return CSRF_ERR_STOPPED;
	}
	if (lim < len && inj->state != S_PASS) { /* not when plaintext or a stop came first */
		hold_check(inj, lim, start);
		inj_tree_stop(&inj->tree, CSRF_INJECT_ESCAPE);
		inj->state = S_PASS;
		inj->pin_form = 0; /* a form start tag held from its name on goes as it is */
	}
	if (settle(inj, emit, ud) != 0 || emit_input(inj, emit, ud, chunk, start, len) != 0) {
		inj->failed = 1;
		return CSRF_ERR_STOPPED;
	}
	return CSRF_OK;
}

CSRF_API csrf_reason csrf_inject_finish(csrf_inject *inj, csrf_emit_fn emit, void *ud, unsigned *injected)
{
	if (!inj || !emit || !injected)
		return CSRF_ERR_ARG;
	/* a form still held never saw its end tag: its bytes go without the
	 * field (inj_tree_finish says UNCLOSED) */
	int stopped = inj->failed || (inj->holding && release(inj, emit, ud, 0) != 0);
	csrf_reason r = csrf_inject_reset(inj, injected);
	return stopped ? CSRF_ERR_STOPPED : r;
}

CSRF_API csrf_reason csrf_inject_reset(csrf_inject *inj, unsigned *injected)
{
	if (!inj || !injected)
		return CSRF_ERR_ARG;
	if (inj->holding) /* abandoned: the held bytes are dropped */
		csrfi_wipe(inj->hold, inj->hold_len);
	inj->holding = 0;
	inj->hold_len = 0;
	inj->hold_meta = HOLD_NONE;
	inj->hold_referrer = HOLD_NONE;
	inj->pin_form = inj->pin_hold = inj->pin_id = 0;
	inj->hold_field = 0;
	*injected = inj->tree.count;
	inj->last_status = inj->tree.status | inj_tree_finish(&inj->tree);
	reset_stream(inj);
	inj->fresh = 1;
	return CSRF_OK;
}

CSRF_API unsigned csrf_inject_status(const csrf_inject *inj)
{
	if (!inj)
		return 0;
	return inj->fresh ? inj->last_status : inj->tree.status;
}

CSRF_API const char *csrf_inject_status_str(unsigned reason)
{
	switch (reason) {
	case CSRF_INJECT_NESTED_FORM:
		return "a POST form inside an open form got no token (the browser drops it)";
	case CSRF_INJECT_FOREIGN:
		return "svg or math markup the injector cannot follow: no token from there on";
	case CSRF_INJECT_TEMPLATE:
		return "a POST form inside a template got no token";
	case CSRF_INJECT_SELECT:
		return "markup inside a select that browsers parse differently: no token from there on";
	case CSRF_INJECT_NOSCRIPT:
		return "noscript content that parses differently without scripting: no token from there on";
	case CSRF_INJECT_BASE:
		return "a POST form with a relative action got no token: <base> points to another origin";
	case CSRF_INJECT_LATE_BASE:
		return "a <base> to another origin came after a form got the token";
	case CSRF_INJECT_FORMACTION:
		return "a POST form got no token: a button in it sends it to another origin (formaction)";
	case CSRF_INJECT_GET_BUTTON:
		return "a POST form got no token: a button in it sends it by GET (formmethod), the token would go "
		       "into the URL";
	case CSRF_INJECT_FORM_OWNER:
		return "a POST form got no token: a button outside it (form=\"...\") may send it by GET or to another "
		       "origin";
	case CSRF_INJECT_LATE_OWNER:
		return "a form with an id got the token, and a button outside it (form=\"...\") that came after it "
		       "sends "
		       "by GET or to another origin, or may (the injector stopped reading): if it names that form, it "
		       "sends the token there";
	case CSRF_INJECT_LONG_FORM:
		return "a POST form got no token: it is longer than the injector holds back while it reads its "
		       "submitters (CSRF_INJECT_HOLD_MAX bytes)";
	case CSRF_INJECT_LATE_BUTTON:
		return "a button after a form with the token sends by GET or to another origin, or may (the "
		       "injector stopped reading): if the browser gives it to that form (an element left open in "
		       "the form, markup that moves it), it sends the token there";
	case CSRF_INJECT_NOSCRIPT_BUTTON:
		return "a POST form got no token: a button inside <noscript> in it has a formmethod or formaction "
		       "(a browser without scripting builds it)";
	case CSRF_INJECT_TABLE_FORM:
		return "a POST form got no token: its start tag is inside a <table> but outside any <td>, <th> or "
		       "<caption> (the browser pops such a form at once, so markup around it can hand its fields to "
		       "another form); move the form into a cell or around the whole table (or tables were nested "
		       "too deep to follow)";
	case CSRF_INJECT_FRAMESET:
		return "a <frameset> (the browser may drop the markup around it): no token from there on";
	case CSRF_INJECT_DEEP:
		return "a POST form so deep in the page that the browser may put it beside its parent got no token: "
		       "its field could not name it (its own id, after a form without the token was closed, which may "
		       "then own the field, is not 1 to 64 of A-Z a-z 0-9 _ . : -, an earlier form had it, or an id "
		       "not like that, or 32 others, or the form is in a table; or the random id for a form without "
		       "one could not be drawn); give the form no id or a unique simple one, or move it earlier";
	case CSRF_INJECT_UNCLOSED:
		return "a POST form was still open when the page ended (no </form>): it got no token";
	case CSRF_INJECT_ESCAPE:
		return "an ESC byte (ISO-2022-JP escape): no token from there on";
	case CSRF_INJECT_STOPPED:
		return "the injector stopped adding tokens to this page";
	default:
		return "unknown injector status";
	}
}
