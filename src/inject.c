/*
 * inject.c - the streaming HTML injector: a subset of the HTML5 tokenizer
 * (runs of text, name and value bytes scanned in tight loops, the rest a
 * byte at a time) that passes a response through unchanged and inserts
 * the hidden token field after same-origin POST <form> start tags and the
 * meta tags after the first <head>. It holds no input between chunks: the whole
 * state is struct csrf_inject, bounded by CSRF_INJECT_STATE_MAX (csrf.h).
 */
#include "internal.h"

#include <stdalign.h>

/* Bytes of an action attribute kept to judge its origin. A longer action
 * is judged by these bytes only when they hold its whole origin part
 * (scheme and authority): the rest of a URL cannot change its origin, but
 * an authority cut short could ("https://self.example.evil.example"), so
 * then the form is treated as cross-origin and gets no token. */
#define INJ_ACTION_MAX 2048
/* "post" is four bytes; some room for character references ("&#x70;ost"). */
#define INJ_METHOD_MAX 32
/* The longest tag name that matters is "plaintext" (9). */
#define INJ_NAME_MAX 9
/* The attribute names that matter, "method" and "action", have 6. */
#define INJ_ATTR_MAX 6

#define INPUT_PRE "<input type=\"hidden\" name=\""
#define INPUT_MID "\" value=\""
#define INPUT_END "\">"
#define META_PRE "<meta name=\"csrf-param\" content=\""
#define META_MID "\"><meta name=\"csrf-token\" content=\""
#define META_END "\">"
#define LIT_LEN(s) (sizeof(s) - 1)
#define INPUT_MAX (LIT_LEN(INPUT_PRE) + CSRF_FIELD_NAME_MAX + LIT_LEN(INPUT_MID) + CSRF_TOKEN_LEN + LIT_LEN(INPUT_END))
#define META_MAX (LIT_LEN(META_PRE) + CSRF_FIELD_NAME_MAX + LIT_LEN(META_MID) + CSRF_TOKEN_LEN + LIT_LEN(META_END))

/* Tokenizer states, named after the HTML5 states they follow. */
enum {
	S_DATA,
	S_TAG_OPEN,
	S_END_TAG_OPEN,
	S_TAG_NAME,
	S_BEFORE_ATTR_NAME,
	S_ATTR_NAME,
	S_AFTER_ATTR_NAME,
	S_BEFORE_ATTR_VALUE,
	S_ATTR_VALUE_DQ,
	S_ATTR_VALUE_SQ,
	S_ATTR_VALUE_UQ,
	S_AFTER_ATTR_VALUE_Q,
	S_SELF_CLOSING,
	S_MARKUP_DECL,   /* after "<!" */
	S_MARKUP_DASH,   /* after "<!-" */
	S_BOGUS_COMMENT, /* also DOCTYPE and CDATA: all end at the first '>' */
	S_COMMENT_START,
	S_COMMENT_START_DASH,
	S_COMMENT,
	S_COMMENT_END_DASH,
	S_COMMENT_END,
	S_COMMENT_END_BANG,
	S_RAW, /* RCDATA and RAWTEXT: textarea, title, style, ... */
	S_RAW_LT,
	S_END_MATCH, /* "</" seen in raw text or script: matching the name */
	S_SCRIPT,
	S_SD_LT,
	S_SD_ESC_START,
	S_SD_ESC_START_DASH,
	S_SD_ESC,
	S_SD_ESC_DASH,
	S_SD_ESC_DASH_DASH,
	S_SD_ESC_LT,
	S_SD_DESC_START,
	S_SD_DESC,
	S_SD_DESC_DASH,
	S_SD_DESC_DASH_DASH,
	S_SD_DESC_LT,
	S_SD_DESC_END,
	S_PLAINTEXT
};

enum { A_OTHER, A_METHOD, A_ACTION };

/* Elements whose content the tokenizer does not parse as markup; index 0
 * is script, which has its own escape states. */
static const struct {
	const char *name;
	uint8_t len;
} raw_names[] = {{"script", 6}, {"style", 5},   {"textarea", 8}, {"title", 5},   {"xmp", 3},
                 {"iframe", 6}, {"noembed", 7}, {"noframes", 8}, {"noscript", 8}};
#define RAW_SCRIPT 0

/* What a complete tag name is, worked out once when the name ends: the
 * attribute and end-of-tag states then compare one byte. */
enum { K_OTHER, K_FORM, K_BASE, K_HEAD, K_PLAINTEXT, K_RAW /* + index into raw_names */ };

/* Character classes, one table lookup a byte, so the states that read
 * names and values scan a run of bytes in a tight loop instead of going
 * back through the state switch for each byte. */
enum {
	C_WS = 1,        /* HTML whitespace */
	C_ALPHA = 2,     /* ASCII letter */
	C_SAFE = 4,      /* [A-Za-z0-9_-]: field names and tokens */
	C_NAME_END = 8,  /* ends a tag name: whitespace, '/', '>' */
	C_ATTR_END = 16, /* ends an attribute name: those and '=' */
	C_UQ_END = 32    /* ends an unquoted value: whitespace, '>' */
};
#define CLS_WS(c) ((c) == ' ' || (c) == '\t' || (c) == '\n' || (c) == '\f' || (c) == '\r')
#define CLS_ALPHA(c) (((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z'))
#define CLS(c)                                                                                                         \
	((CLS_WS(c) ? C_WS | C_NAME_END | C_ATTR_END | C_UQ_END : 0) | (CLS_ALPHA(c) ? C_ALPHA | C_SAFE : 0) |         \
	 (((c) >= '0' && (c) <= '9') || (c) == '_' || (c) == '-' ? C_SAFE : 0) |                                       \
	 ((c) == '/' ? C_NAME_END | C_ATTR_END : 0) | ((c) == '>' ? C_NAME_END | C_ATTR_END | C_UQ_END : 0) |          \
	 ((c) == '=' ? C_ATTR_END : 0))
#define CLS4(c) CLS(c), CLS((c) + 1), CLS((c) + 2), CLS((c) + 3)
#define CLS16(c) CLS4(c), CLS4((c) + 4), CLS4((c) + 8), CLS4((c) + 12)
#define CLS64(c) CLS16(c), CLS16((c) + 16), CLS16((c) + 32), CLS16((c) + 48)
static const uint8_t cls[256] = {CLS64(0), CLS64(64), CLS64(128), CLS64(192)};

struct csrf_inject {
	/* tokenizer */
	uint8_t state;
	uint8_t ret;      /* state to go back to when an end tag does not match */
	uint8_t raw;      /* index into raw_names of the open raw-text element */
	uint8_t match;    /* characters of an end tag name / "script" matched */
	uint8_t mismatch; /* the "script" of a double escape failed to match */
	uint8_t failed;   /* emit stopped a feed: the stream is broken */

	/* the tag being read */
	uint8_t is_end;
	uint8_t kind;     /* K_*, set when the name is complete */
	uint8_t name_len; /* saturates at INJ_NAME_MAX + 1: "no name we know" */
	char name[INJ_NAME_MAX];
	uint8_t attr_len; /* saturates likewise */
	char attr[INJ_ATTR_MAX];
	uint8_t attr_kind; /* whose value the value states collect */
	uint8_t seen_method, seen_action;
	uint8_t method_over, action_trunc;
	uint16_t method_len, action_len;
	char method[INJ_METHOD_MAX];
	char action[INJ_ACTION_MAX];

	/* the document */
	uint8_t head_done;    /* the meta tags went in already */
	uint8_t form_open;    /* a <form> start tag without its </form> yet */
	uint8_t base_seen;    /* the first <base href> went by */
	uint8_t base_foreign; /* ... and relative URLs resolve elsewhere */
	unsigned count;

	/* configuration */
	csrf_origin self;
	uint16_t input_len, meta_len;
	char input_el[INPUT_MAX];
	char meta_el[META_MAX];
};

_Static_assert(sizeof(struct csrf_inject) <= CSRF_INJECT_STATE_MAX, "injector state over its bound");
_Static_assert(INJ_ACTION_MAX < UINT16_MAX && INPUT_MAX < UINT16_MAX && META_MAX < UINT16_MAX, "lengths fit");

static int is_ws(unsigned char c)
{
	return cls[c] & C_WS;
}

static int is_alpha(unsigned char c)
{
	return cls[c] & C_ALPHA;
}

static unsigned char lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

static int is_safe_char(unsigned char c)
{
	return cls[c] & C_SAFE;
}

/* The length of the run of bytes from p on (at most n) that are not of
 * the classes in stop. */
static size_t span_until(const char *p, size_t n, uint8_t stop)
{
	size_t k = 0;
	while (k < n && !(cls[(unsigned char)p[k]] & stop))
		k++;
	return k;
}

/* The first ch in p[0..n), NULL when none: a plain loop over the first
 * bytes, as runs between tags and attribute values are mostly short, and
 * memchr for the rest. */
static const char *find_byte(const char *p, size_t n, char ch)
{
	size_t k, m = n < 16 ? n : 16;
	for (k = 0; k < m; k++)
		if (p[k] == ch)
			return p + k;
	return n > m ? memchr(p + m, ch, n - m) : NULL;
}

/* The name (lower case, saturated) is complete. Raw-text elements are
 * K_RAW plus their index in raw_names. */
static uint8_t tag_kind(const struct csrf_inject *inj)
{
	const char *n = inj->name;
	switch (inj->name_len) {
	case 3:
		return memcmp(n, "xmp", 3) == 0 ? K_RAW + 4 : K_OTHER;
	case 4:
		if (memcmp(n, "form", 4) == 0)
			return K_FORM;
		if (memcmp(n, "base", 4) == 0)
			return K_BASE;
		if (memcmp(n, "head", 4) == 0)
			return K_HEAD;
		return K_OTHER;
	case 5:
		if (memcmp(n, "style", 5) == 0)
			return K_RAW + 1;
		if (memcmp(n, "title", 5) == 0)
			return K_RAW + 3;
		return K_OTHER;
	case 6:
		if (memcmp(n, "script", 6) == 0)
			return K_RAW + RAW_SCRIPT;
		if (memcmp(n, "iframe", 6) == 0)
			return K_RAW + 5;
		return K_OTHER;
	case 7:
		return memcmp(n, "noembed", 7) == 0 ? K_RAW + 6 : K_OTHER;
	case 8:
		if (memcmp(n, "textarea", 8) == 0)
			return K_RAW + 2;
		if (memcmp(n, "noframes", 8) == 0)
			return K_RAW + 7;
		if (memcmp(n, "noscript", 8) == 0)
			return K_RAW + 8;
		return K_OTHER;
	case 9:
		return memcmp(n, "plaintext", 9) == 0 ? K_PLAINTEXT : K_OTHER;
	default:
		return K_OTHER;
	}
}

static int attr_is(const struct csrf_inject *inj, const char *lit)
{
	size_t n = strlen(lit);
	return inj->attr_len == n && memcmp(inj->attr, lit, n) == 0;
}

static void begin_tag(struct csrf_inject *inj, int is_end, unsigned char first)
{
	inj->is_end = (uint8_t)is_end;
	inj->kind = K_OTHER;
	inj->name[0] = (char)lower(first);
	inj->name_len = 1;
	inj->attr_kind = A_OTHER;
	inj->seen_method = inj->seen_action = 0;
	inj->method_over = inj->action_trunc = 0;
	inj->method_len = inj->action_len = 0;
}

/* Reads tag-name bytes from p (at most n) up to the first byte that ends
 * a name, keeping the first INJ_NAME_MAX in lower case (a longer name
 * saturates name_len); returns how many it read. */
static size_t name_run(struct csrf_inject *inj, const char *p, size_t n)
{
	size_t k;
	uint8_t nl = inj->name_len;
	for (k = 0; k < n; k++) {
		unsigned char ch = (unsigned char)p[k];
		if (cls[ch] & C_NAME_END)
			break;
		if (nl < INJ_NAME_MAX)
			inj->name[nl++] = (char)lower(ch);
		else
			nl = INJ_NAME_MAX + 1;
	}
	inj->name_len = nl;
	return k;
}

/* The end tag of the open raw-text element, as if read in full. */
static void begin_raw_end_tag(struct csrf_inject *inj)
{
	inj->is_end = 1;
	inj->kind = (uint8_t)(K_RAW + inj->raw);
	inj->name_len = raw_names[inj->raw].len;
	memcpy(inj->name, raw_names[inj->raw].name, inj->name_len);
	inj->attr_kind = A_OTHER;
}

static void begin_attr(struct csrf_inject *inj)
{
	inj->attr_len = 0;
	inj->attr_kind = A_OTHER;
}

static void attr_byte(struct csrf_inject *inj, unsigned char c)
{
	if (inj->attr_len < INJ_ATTR_MAX)
		inj->attr[inj->attr_len++] = (char)lower(c);
	else
		inj->attr_len = INJ_ATTR_MAX + 1;
}

/* Only a form or base start tag has attributes that matter (see
 * attr_name_done): the names of the others are not kept. */
static int attrs_matter(const struct csrf_inject *inj)
{
	return !inj->is_end && (inj->kind == K_FORM || inj->kind == K_BASE);
}

/* As name_run, for an attribute name (ended by '=' too); the name is kept
 * only when it matters. */
static size_t attr_run(struct csrf_inject *inj, const char *p, size_t n)
{
	size_t k;
	if (!attrs_matter(inj))
		return span_until(p, n, C_ATTR_END);
	uint8_t al = inj->attr_len;
	for (k = 0; k < n; k++) {
		unsigned char ch = (unsigned char)p[k];
		if (cls[ch] & C_ATTR_END)
			break;
		if (al < INJ_ATTR_MAX)
			inj->attr[al++] = (char)lower(ch);
		else
			al = INJ_ATTR_MAX + 1;
	}
	inj->attr_len = al;
	return k;
}

/* The name is complete. Only a form start tag's method and action matter
 * (and a base start tag's href, kept where an action would be), and only
 * their first occurrence: HTML drops repeated attributes, so
 * <form action="/" action="https://evil.example/"> submits to "/". */
static void attr_name_done(struct csrf_inject *inj)
{
	inj->attr_kind = A_OTHER;
	if (inj->is_end)
		return;
	if (inj->kind == K_BASE) {
		if (attr_is(inj, "href") && !inj->seen_action) {
			inj->seen_action = 1;
			inj->attr_kind = A_ACTION;
		}
		return;
	}
	if (inj->kind != K_FORM)
		return;
	if (attr_is(inj, "method") && !inj->seen_method) {
		inj->seen_method = 1;
		inj->attr_kind = A_METHOD;
	} else if (attr_is(inj, "action") && !inj->seen_action) {
		inj->seen_action = 1;
		inj->attr_kind = A_ACTION;
	}
}

/* Bytes of an attribute value: kept only for the values that matter, up
 * to their caps (a longer one is flagged). */
static void value_bytes(struct csrf_inject *inj, const char *p, size_t n)
{
	size_t room;
	if (n == 0 || inj->attr_kind == A_OTHER)
		return;
	if (inj->attr_kind == A_METHOD) {
		room = INJ_METHOD_MAX - inj->method_len;
		if (n > room) {
			n = room;
			inj->method_over = 1;
		}
		memcpy(inj->method + inj->method_len, p, n);
		inj->method_len = (uint16_t)(inj->method_len + n);
	} else {
		room = INJ_ACTION_MAX - inj->action_len;
		if (n > room) {
			n = room;
			inj->action_trunc = 1;
		}
		memcpy(inj->action + inj->action_len, p, n);
		inj->action_len = (uint16_t)(inj->action_len + n);
	}
}

/* Decodes the character references a method value may hide "post" behind:
 * numeric ones and &amp; &lt; &gt; &quot; &apos;. A reference to anything
 * outside ASCII becomes a byte that matches no method. Returns the length
 * written to out (never more than len). */
static size_t decode_refs(const char *in, size_t len, char *out)
{
	static const struct {
		const char *name;
		char c;
	} named[] = {{"amp;", '&'}, {"lt;", '<'}, {"gt;", '>'}, {"quot;", '"'}, {"apos;", '\''}};
	size_t o = 0, i = 0;
	while (i < len) {
		if (in[i] != '&') {
			out[o++] = in[i++];
			continue;
		}
		size_t j = i + 1;
		if (j < len && in[j] == '#') {
			int hex = j + 1 < len && (in[j + 1] == 'x' || in[j + 1] == 'X');
			size_t k = j + 1 + (size_t)hex, digits = 0;
			uint32_t v = 0;
			for (; k < len; k++, digits++) {
				unsigned char c = (unsigned char)in[k];
				unsigned d;
				if (c >= '0' && c <= '9')
					d = c - '0';
				else if (hex && lower(c) >= 'a' && lower(c) <= 'f')
					d = lower(c) - 'a' + 10;
				else
					break;
				if (v < 0x110000)
					v = v * (hex ? 16 : 10) + d;
			}
			if (digits > 0) {
				if (k < len && in[k] == ';')
					k++;
				out[o++] = (v >= 1 && v < 0x80) ? (char)v : (char)0x80;
				i = k;
				continue;
			}
		} else {
			size_t m;
			for (m = 0; m < sizeof named / sizeof named[0]; m++) {
				size_t nl = strlen(named[m].name);
				if (len - j >= nl && memcmp(in + j, named[m].name, nl) == 0)
					break;
			}
			if (m < sizeof named / sizeof named[0]) {
				out[o++] = named[m].c;
				i = j + strlen(named[m].name);
				continue;
			}
		}
		out[o++] = in[i++];
	}
	return o;
}

/* HTML matches enumerated attributes exactly, without trimming: a method
 * of " post " is an invalid value and the form submits with GET, so it
 * must not get a token (which would then travel in the URL). */
static int method_is_post(const struct csrf_inject *inj)
{
	char buf[INJ_METHOD_MAX];
	if (!inj->seen_method || inj->method_over)
		return 0;
	const char *m = inj->method;
	size_t n = inj->method_len;
	if (memchr(m, '&', n)) { /* only a '&' starts a character reference */
		n = decode_refs(m, n, buf);
		m = buf;
	}
	return n == 4 && lower((unsigned char)m[0]) == 'p' && lower((unsigned char)m[1]) == 'o' &&
	       lower((unsigned char)m[2]) == 's' && lower((unsigned char)m[3]) == 't';
}

static int is_scheme_char(unsigned char c)
{
	return is_alpha(c) || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
}

/* Where a URL attribute (a form's action, a base's href) leads. */
enum {
	U_CROSS,    /* elsewhere, or not known for sure */
	U_SELF,     /* absolute, with the self origin */
	U_RELATIVE, /* resolved against the base URL */
	U_DOCUMENT  /* absent or "": the document's own URL, whatever the base */
};

/* Judges the kept URL the way a URL parser would see it, failing closed
 * (U_CROSS) whenever unsure. The value is taken raw; a '&' that a
 * character reference could turn into ':', '/' or '\' before the path
 * starts makes it cross-origin. Rewrites the kept value in place (the tag
 * is complete). */
static int judge_url(struct csrf_inject *inj)
{
	if (!inj->seen_action || (inj->action_len == 0 && !inj->action_trunc))
		return U_DOCUMENT;
	int trunc = inj->action_trunc;
	char *a = inj->action;
	size_t n = 0;
	/* The URL parser drops every tab and newline ... */
	for (size_t i = 0; i < inj->action_len; i++)
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
		/* "//host", "\\host", "/\host": another authority. */
		return c1 == '/' || c1 == '\\' || c1 == '&' ? U_CROSS : U_RELATIVE;
	}
	if (c0 == '?' || c0 == '#')
		return U_RELATIVE;
	if (!is_alpha(c0)) /* no scheme possible: a relative path */
		return c0 == '&' ? U_CROSS : U_RELATIVE;
	size_t i;
	for (i = 1; i < n; i++) {
		unsigned char c = (unsigned char)a[i];
		if (c == ':')
			break;
		if (c == '&')
			return U_CROSS; /* "javascript&colon;..." */
		if (!is_scheme_char(c))
			return U_RELATIVE; /* a path that has a ':' later, or none */
	}
	if (i == n)
		return trunc ? U_CROSS : U_RELATIVE;
	csrf_slice scheme = {a, i};
	if (!csrf_slice_ieq(scheme, "http") && !csrf_slice_ieq(scheme, "https"))
		return U_CROSS; /* javascript:, data:, mailto:, ... */
	/* Exactly "scheme://"; browsers also read "https:host", "https:\\host"
	 * and "https:///host" as URLs, but never as ours for certain. */
	if (n - i < 3 || a[i + 1] != '/' || a[i + 2] != '/')
		return U_CROSS;
	size_t k;
	for (k = i + 3; k < n; k++) {
		unsigned char c = (unsigned char)a[k];
		if (c == '/' || c == '\\' || c == '?' || c == '#')
			break;
		if (c == '&')
			return U_CROSS; /* "https://self.example&#46;evil.example" */
	}
	if (k == n && trunc)
		return U_CROSS; /* the authority may go on past the kept bytes */
	csrf_origin o;
	if (csrf_url_origin(a, k, &o) != CSRF_OK || !csrf_origin_equal(&o, &inj->self))
		return U_CROSS;
	return U_SELF;
}

/* A relative action is ours only while no <base href> points elsewhere.
 * (A <base> that comes after the form, which browsers also honour, cannot
 * be undone by a stream that holds nothing back.) */
static int action_ok(struct csrf_inject *inj)
{
	int u = judge_url(inj);
	return u == U_SELF || u == U_DOCUMENT || (u == U_RELATIVE && !inj->base_foreign);
}

/* A tag ended at its '>'. Returns the element to insert after it, if any,
 * and sets the state the tokenizer continues in. */
/* 1 for a tag whose end changes nothing but the state, back to S_DATA:
 * an end tag other than </form>, a start tag of no kind tag_done knows. */
static int tag_is_plain(const struct csrf_inject *inj)
{
	return inj->is_end ? inj->kind != K_FORM : inj->kind == K_OTHER;
}

static const char *tag_done(struct csrf_inject *inj, size_t *n)
{
	*n = 0;
	inj->state = S_DATA;
	if (inj->is_end) {
		if (inj->kind == K_FORM)
			inj->form_open = 0;
		return NULL;
	}
	switch (inj->kind) {
	case K_OTHER:
		return NULL;
	case K_FORM: {
		/* A <form> inside an open form is dropped by the tree builder and
		 * what follows belongs to the outer form, which may well submit
		 * elsewhere (an injected <form action=https://evil.example/>
		 * before the real one): the token goes only into a first form. */
		int ok = !inj->form_open && method_is_post(inj) && action_ok(inj);
		inj->form_open = 1;
		if (ok) {
			inj->count++;
			*n = inj->input_len;
			return inj->input_el;
		}
		return NULL;
	}
	case K_BASE:
		/* Only the first base element with an href sets the base URL; a
		 * relative href resolves against the document's URL. */
		if (inj->seen_action && !inj->base_seen) {
			inj->base_seen = 1;
			inj->base_foreign = judge_url(inj) == U_CROSS;
		}
		return NULL;
	case K_HEAD:
		if (inj->head_done)
			return NULL;
		inj->head_done = 1;
		inj->count++; /* the meta pair is one insertion */
		*n = inj->meta_len;
		return inj->meta_el;
	case K_PLAINTEXT:
		inj->state = S_PLAINTEXT;
		return NULL;
	default:
		inj->raw = (uint8_t)(inj->kind - K_RAW);
		inj->state = inj->raw == RAW_SCRIPT ? S_SCRIPT : S_RAW;
		return NULL;
	}
}

static int emit_input(csrf_emit_fn emit, void *ud, const char *chunk, size_t from, size_t to)
{
	if (to <= from)
		return 0;
	return emit(ud, chunk + from, to - from, 0);
}

/* The tag ends at chunk[i]: passes the input up to and including it, then
 * the inserted element. Non-zero when emit stopped. */
static int end_tag_at(struct csrf_inject *inj, const char *chunk, size_t i, size_t *start, csrf_emit_fn emit, void *ud)
{
	size_t n;
	const char *piece = tag_done(inj, &n);
	if (!piece)
		return 0;
	if (emit_input(emit, ud, chunk, *start, i + 1) != 0)
		return 1;
	*start = i + 1;
	return emit(ud, piece, n, 1) != 0;
}

/* Tracks the "script" of a double escape ("<script" inside "<!--" in a
 * script); a letter beyond or unlike it spoils the match. */
static void script_byte(struct csrf_inject *inj, unsigned char c)
{
	static const char s[] = "script";
	if (!inj->mismatch && inj->match < LIT_LEN(s) && lower(c) == (unsigned char)s[inj->match])
		inj->match++;
	else
		inj->mismatch = 1;
}

static int script_matched(const struct csrf_inject *inj)
{
	return !inj->mismatch && inj->match == LIT_LEN("script");
}

static csrf_reason stop(struct csrf_inject *inj)
{
	inj->failed = 1;
	return CSRF_ERR_INTERNAL;
}

CSRF_API size_t csrf_inject_size(void)
{
	return sizeof(struct csrf_inject);
}

static void reset_stream(struct csrf_inject *inj)
{
	inj->state = S_DATA;
	inj->failed = 0;
	inj->head_done = 0;
	inj->form_open = 0;
	inj->base_seen = 0;
	inj->base_foreign = 0;
	inj->count = 0;
	inj->is_end = 0;
	inj->kind = K_OTHER;
	inj->name_len = 0;
	inj->attr_len = 0;
	inj->attr_kind = A_OTHER;
}

static int valid_safe(const char *s, size_t len, size_t max)
{
	if (!s || len == 0 || len > max)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!is_safe_char((unsigned char)s[i]))
			return 0;
	return 1;
}

static size_t put(char *dst, size_t at, const char *src, size_t n)
{
	memcpy(dst + at, src, n);
	return at + n;
}

CSRF_API csrf_reason csrf_inject_init(void *mem, size_t mem_len, const char *self_origin, size_t origin_len,
                                      const char *field, size_t field_len, const char *token, size_t token_len,
                                      csrf_inject **out)
{
	if (out)
		*out = NULL;
	if (!mem || !out || !self_origin)
		return CSRF_ERR_ARG;
	if (mem_len < sizeof(struct csrf_inject))
		return CSRF_ERR_BUFFER;
	if ((uintptr_t)mem % alignof(struct csrf_inject) != 0)
		return CSRF_ERR_ARG;
	if (!valid_safe(field, field_len, CSRF_FIELD_NAME_MAX) || !valid_safe(token, token_len, CSRF_TOKEN_LEN))
		return CSRF_ERR_ARG;
	csrf_origin self;
	if (csrf_origin_parse(self_origin, origin_len, &self) != CSRF_OK)
		return CSRF_ERR_ARG;

	struct csrf_inject *inj = mem;
	memset(inj, 0, sizeof *inj);
	inj->self = self;
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
	reset_stream(inj);
	*out = inj;
	return CSRF_OK;
}

/* Moves to state st. GO consumes the byte (the next one is read, or the
 * chunk is done), RE reconsumes it; both jump straight to the state's code
 * instead of going back through the switch, so the states a tag goes
 * through cost a direct jump each. */
#define GO(st)                                                                                                         \
	do {                                                                                                           \
		inj->state = (st);                                                                                     \
		if (++i == len)                                                                                        \
			goto out;                                                                                      \
		c = (unsigned char)chunk[i];                                                                           \
		goto L_##st;                                                                                           \
	} while (0)
#define RE(st)                                                                                                         \
	do {                                                                                                           \
		inj->state = (st);                                                                                     \
		goto L_##st;                                                                                           \
	} while (0)
/* The tag ends at chunk[i] ('>'): emits what goes before and after it,
 * and goes on with the text after it. Most tags change nothing (see
 * tag_done) and go straight on. */
#define TAG_END()                                                                                                      \
	do {                                                                                                           \
		if (tag_is_plain(inj))                                                                                 \
			GO(S_DATA);                                                                                    \
		if (end_tag_at(inj, chunk, i, &start, emit, ud))                                                       \
			return stop(inj);                                                                              \
		if (inj->state == S_DATA)                                                                              \
			GO(S_DATA);                                                                                    \
	} while (0)

/* In each case, break consumes the byte and continue reconsumes it in the
 * new state (which then always differs from the old one); GO and RE do
 * the same without the switch. */
CSRF_API csrf_reason csrf_inject_feed(csrf_inject *inj, const char *chunk, size_t len, csrf_emit_fn emit, void *ud)
{
	if (!inj || !emit || (!chunk && len > 0))
		return CSRF_ERR_ARG;
	if (inj->failed)
		return CSRF_ERR_INTERNAL;
	size_t start = 0, i = 0;
	unsigned char c;
	while (i < len) {
		c = (unsigned char)chunk[i];
		switch (inj->state) {
		case S_DATA:
		case S_RAW:
		case S_SCRIPT:
		L_S_DATA : {
			const char *lt = find_byte(chunk + i, len - i, '<');
			if (!lt) {
				i = len;
				continue;
			}
			i = (size_t)(lt - chunk);
			if (inj->state == S_DATA)
				GO(S_TAG_OPEN);
			inj->state = inj->state == S_RAW ? S_RAW_LT : S_SD_LT;
			break;
		}
		case S_PLAINTEXT:
			i = len;
			continue;
		case S_TAG_OPEN:
		L_S_TAG_OPEN:
			if (is_alpha(c)) {
				begin_tag(inj, 0, c);
				GO(S_TAG_NAME);
			} else if (c == '/') {
				GO(S_END_TAG_OPEN);
			} else if (c == '!') {
				inj->state = S_MARKUP_DECL;
			} else if (c == '?') {
				inj->state = S_BOGUS_COMMENT;
			} else {
				RE(S_DATA);
			}
			break;
		case S_END_TAG_OPEN:
		L_S_END_TAG_OPEN:
			if (is_alpha(c)) {
				begin_tag(inj, 1, c);
				GO(S_TAG_NAME);
			} else if (c == '>') {
				GO(S_DATA);
			} else {
				inj->state = S_BOGUS_COMMENT;
			}
			break;
		case S_TAG_NAME:
		L_S_TAG_NAME : {
			i += name_run(inj, chunk + i, len - i);
			if (i == len)
				continue;
			c = (unsigned char)chunk[i];
			inj->kind = tag_kind(inj);
			if (is_ws(c))
				GO(S_BEFORE_ATTR_NAME);
			if (c == '/')
				GO(S_SELF_CLOSING);
			TAG_END(); /* '>' */
			break;
		}
		case S_BEFORE_ATTR_NAME:
		L_S_BEFORE_ATTR_NAME:
			if (is_ws(c))
				GO(S_BEFORE_ATTR_NAME);
			if (c == '/' || c == '>')
				RE(S_AFTER_ATTR_NAME);
			begin_attr(inj);
			if (c == '=') {
				attr_byte(inj, c);
				GO(S_ATTR_NAME);
			}
			RE(S_ATTR_NAME);
		case S_ATTR_NAME:
		L_S_ATTR_NAME : {
			i += attr_run(inj, chunk + i, len - i);
			if (i == len)
				continue;
			c = (unsigned char)chunk[i];
			attr_name_done(inj);
			if (c == '=')
				GO(S_BEFORE_ATTR_VALUE);
			RE(S_AFTER_ATTR_NAME); /* whitespace, '/', '>' */
		}
		case S_AFTER_ATTR_NAME:
		L_S_AFTER_ATTR_NAME:
			if (is_ws(c))
				GO(S_AFTER_ATTR_NAME);
			if (c == '/')
				GO(S_SELF_CLOSING);
			if (c == '=')
				GO(S_BEFORE_ATTR_VALUE);
			if (c == '>') {
				TAG_END();
				break;
			}
			begin_attr(inj);
			RE(S_ATTR_NAME);
		case S_BEFORE_ATTR_VALUE:
		L_S_BEFORE_ATTR_VALUE:
			if (is_ws(c))
				GO(S_BEFORE_ATTR_VALUE);
			if (c == '"')
				GO(S_ATTR_VALUE_DQ);
			if (c == '\'')
				GO(S_ATTR_VALUE_SQ);
			if (c == '>') {
				TAG_END();
				break;
			}
			RE(S_ATTR_VALUE_UQ);
		case S_ATTR_VALUE_DQ:
		case S_ATTR_VALUE_SQ:
		L_S_ATTR_VALUE_DQ:
		L_S_ATTR_VALUE_SQ : {
			char q = inj->state == S_ATTR_VALUE_DQ ? '"' : '\'';
			const char *e = find_byte(chunk + i, len - i, q);
			size_t end = e ? (size_t)(e - chunk) : len;
			value_bytes(inj, chunk + i, end - i);
			i = end;
			if (!e)
				continue;
			GO(S_AFTER_ATTR_VALUE_Q);
		}
		case S_ATTR_VALUE_UQ:
		L_S_ATTR_VALUE_UQ : {
			size_t k = span_until(chunk + i, len - i, C_UQ_END);
			value_bytes(inj, chunk + i, k);
			i += k;
			if (i == len)
				continue;
			c = (unsigned char)chunk[i];
			if (is_ws(c))
				GO(S_BEFORE_ATTR_NAME);
			TAG_END(); /* '>' */
			break;
		}
		case S_AFTER_ATTR_VALUE_Q:
		L_S_AFTER_ATTR_VALUE_Q:
			if (is_ws(c))
				GO(S_BEFORE_ATTR_NAME);
			if (c == '/')
				GO(S_SELF_CLOSING);
			if (c == '>') {
				TAG_END();
				break;
			}
			RE(S_BEFORE_ATTR_NAME);
		case S_SELF_CLOSING:
		L_S_SELF_CLOSING:
			if (c == '>') {
				/* <form/> is still a start tag: HTML ignores the slash. */
				TAG_END();
				break;
			}
			RE(S_BEFORE_ATTR_NAME);
		case S_MARKUP_DECL:
			inj->state = c == '-' ? S_MARKUP_DASH : c == '>' ? S_DATA : S_BOGUS_COMMENT;
			break;
		case S_MARKUP_DASH:
			inj->state = c == '-' ? S_COMMENT_START : c == '>' ? S_DATA : S_BOGUS_COMMENT;
			break;
		case S_BOGUS_COMMENT: {
			const char *gt = memchr(chunk + i, '>', len - i);
			if (!gt) {
				i = len;
				continue;
			}
			i = (size_t)(gt - chunk);
			inj->state = S_DATA;
			break;
		}
		case S_COMMENT_START: /* "<!-->" ends at once */
			if (c == '-')
				inj->state = S_COMMENT_START_DASH;
			else if (c == '>')
				inj->state = S_DATA;
			else {
				inj->state = S_COMMENT;
				continue;
			}
			break;
		case S_COMMENT_START_DASH: /* and so does "<!--->" */
			if (c == '-')
				inj->state = S_COMMENT_END;
			else if (c == '>')
				inj->state = S_DATA;
			else {
				inj->state = S_COMMENT;
				continue;
			}
			break;
		case S_COMMENT: {
			const char *d = memchr(chunk + i, '-', len - i);
			if (!d) {
				i = len;
				continue;
			}
			i = (size_t)(d - chunk);
			inj->state = S_COMMENT_END_DASH;
			break;
		}
		case S_COMMENT_END_DASH:
			if (c == '-')
				inj->state = S_COMMENT_END;
			else {
				inj->state = S_COMMENT;
				continue;
			}
			break;
		case S_COMMENT_END:
			if (c == '>')
				inj->state = S_DATA;
			else if (c == '!')
				inj->state = S_COMMENT_END_BANG;
			else if (c != '-') {
				inj->state = S_COMMENT;
				continue;
			}
			break;
		case S_COMMENT_END_BANG: /* "--!>" closes a comment too */
			if (c == '-')
				inj->state = S_COMMENT_END_DASH;
			else if (c == '>')
				inj->state = S_DATA;
			else {
				inj->state = S_COMMENT;
				continue;
			}
			break;
		case S_RAW_LT:
			if (c == '/') {
				inj->match = 0;
				inj->ret = S_RAW;
				inj->state = S_END_MATCH;
			} else {
				inj->state = S_RAW;
				continue;
			}
			break;
		case S_END_MATCH: {
			/* Only the open element's own end tag, in any case, followed by
			 * a space, '/' or '>' ends raw text ("</scripts" does not). */
			const char *rn = raw_names[inj->raw].name;
			size_t rl = raw_names[inj->raw].len;
			if (inj->match < rl) {
				if (lower(c) == (unsigned char)rn[inj->match]) {
					inj->match++;
					break;
				}
				inj->state = inj->ret;
				continue;
			}
			if (is_ws(c)) {
				begin_raw_end_tag(inj);
				inj->state = S_BEFORE_ATTR_NAME;
			} else if (c == '/') {
				begin_raw_end_tag(inj);
				inj->state = S_SELF_CLOSING;
			} else if (c == '>') {
				begin_raw_end_tag(inj);
				if (end_tag_at(inj, chunk, i, &start, emit, ud))
					return stop(inj);
			} else {
				inj->state = inj->ret;
				continue;
			}
			break;
		}
		/* Script data and its escapes ("<!--" ... "-->" inside a script,
		 * and "<script>" inside that), where "</script>" may not end it. */
		case S_SD_LT:
			if (c == '/') {
				inj->match = 0;
				inj->ret = S_SCRIPT;
				inj->state = S_END_MATCH;
			} else if (c == '!') {
				inj->state = S_SD_ESC_START;
			} else {
				inj->state = S_SCRIPT;
				continue;
			}
			break;
		case S_SD_ESC_START:
			if (c == '-') {
				inj->state = S_SD_ESC_START_DASH;
			} else {
				inj->state = S_SCRIPT;
				continue;
			}
			break;
		case S_SD_ESC_START_DASH:
			if (c == '-') {
				inj->state = S_SD_ESC_DASH_DASH;
			} else {
				inj->state = S_SCRIPT;
				continue;
			}
			break;
		case S_SD_ESC:
			if (c == '-')
				inj->state = S_SD_ESC_DASH;
			else if (c == '<')
				inj->state = S_SD_ESC_LT;
			break;
		case S_SD_ESC_DASH:
			inj->state = c == '-' ? S_SD_ESC_DASH_DASH : c == '<' ? S_SD_ESC_LT : S_SD_ESC;
			break;
		case S_SD_ESC_DASH_DASH:
			if (c == '<')
				inj->state = S_SD_ESC_LT;
			else if (c == '>')
				inj->state = S_SCRIPT;
			else if (c != '-')
				inj->state = S_SD_ESC;
			break;
		case S_SD_ESC_LT:
			if (c == '/') {
				inj->match = 0;
				inj->ret = S_SD_ESC;
				inj->state = S_END_MATCH;
				break;
			}
			if (is_alpha(c)) {
				inj->match = 0;
				inj->mismatch = 0;
				inj->state = S_SD_DESC_START;
			} else {
				inj->state = S_SD_ESC;
			}
			continue;
		case S_SD_DESC_START:
			if (is_ws(c) || c == '/' || c == '>') {
				inj->state = script_matched(inj) ? S_SD_DESC : S_SD_ESC;
			} else if (is_alpha(c)) {
				script_byte(inj, c);
			} else {
				inj->state = S_SD_ESC;
				continue;
			}
			break;
		case S_SD_DESC:
			if (c == '-')
				inj->state = S_SD_DESC_DASH;
			else if (c == '<')
				inj->state = S_SD_DESC_LT;
			break;
		case S_SD_DESC_DASH:
			inj->state = c == '-' ? S_SD_DESC_DASH_DASH : c == '<' ? S_SD_DESC_LT : S_SD_DESC;
			break;
		case S_SD_DESC_DASH_DASH:
			if (c == '<')
				inj->state = S_SD_DESC_LT;
			else if (c == '>')
				inj->state = S_SCRIPT;
			else if (c != '-')
				inj->state = S_SD_DESC;
			break;
		case S_SD_DESC_LT:
			if (c == '/') {
				inj->match = 0;
				inj->mismatch = 0;
				inj->state = S_SD_DESC_END;
			} else {
				inj->state = S_SD_DESC;
				continue;
			}
			break;
		case S_SD_DESC_END:
			if (is_ws(c) || c == '/' || c == '>') {
				inj->state = script_matched(inj) ? S_SD_ESC : S_SD_DESC;
			} else if (is_alpha(c)) {
				script_byte(inj, c);
			} else {
				inj->state = S_SD_DESC;
				continue;
			}
			break;
		default:
			return stop(inj);
		}
		i++;
	}
out:
	if (emit_input(emit, ud, chunk, start, len) != 0)
		return stop(inj);
	return CSRF_OK;
}

/* Reports the count of insertions (each hidden input one, the meta pair
 * one: one per inserted piece emitted) and makes the injector ready for another stream with
 * the same configuration; inserted pieces stay valid. */
CSRF_API csrf_reason csrf_inject_finish(csrf_inject *inj, unsigned *injected)
{
	if (!inj || !injected)
		return CSRF_ERR_ARG;
	*injected = inj->count;
	reset_stream(inj);
	return CSRF_OK;
}
