/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * charset.c - which character encoding a browser will read a response in,
 * from what it looks at (a byte order mark, the Content-Type charset, a
 * <meta> charset in the first 1024 bytes), and whether the injector may
 * read the bytes as ASCII the way the browser reads the characters: every
 * byte below 0x80 one ASCII character, and no such byte part of another.
 */
#include "internal.h"

#if defined(__SSE2__) && defined(__x86_64__)
#include <immintrin.h> /* AVX2, for a function of target("avx2") only */
#endif

/* The WHATWG Encoding Standard's labels, per encoding. */
static const struct {
	const char *name;
	int safe; /* ASCII-compatible in the way the tokenizer needs */
	const char *labels;
} encodings[] = {
    {"UTF-8", 1, " unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8 "},
    {"IBM866", 1, " 866 cp866 csibm866 ibm866 "},
    {"ISO-8859-2", 1, " csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 iso_8859-2:1987 l2 latin2 "},
    {"ISO-8859-3", 1, " csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 iso_8859-3:1988 l3 latin3 "},
    {"ISO-8859-4", 1, " csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 iso_8859-4:1988 l4 latin4 "},
    {"ISO-8859-5", 1,
     " csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 iso_8859-5 iso_8859-5:1988 "},
    {"ISO-8859-6", 1,
     " arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 iso-8859-6 iso-8859-6-e iso-8859-6-i "
     "iso-ir-127 iso8859-6 iso88596 iso_8859-6 iso_8859-6:1987 "},
    {"ISO-8859-7", 1,
     " csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 iso8859-7 iso88597 iso_8859-7 "
     "iso_8859-7:1987 sun_eu_greek "},
    {"ISO-8859-8", 1,
     " csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 iso8859-8 iso88598 iso_8859-8 "
     "iso_8859-8:1988 visual "},
    {"ISO-8859-8-I", 1, " csiso88598i iso-8859-8-i logical "},
    {"ISO-8859-10", 1, " csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6 "},
    {"ISO-8859-13", 1, " iso-8859-13 iso8859-13 iso885913 "},
    {"ISO-8859-14", 1, " iso-8859-14 iso8859-14 iso885914 "},
    {"ISO-8859-15", 1, " csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9 "},
    {"ISO-8859-16", 1, " iso-8859-16 "},
    {"KOI8-R", 1, " cskoi8r koi koi8 koi8-r koi8_r "},
    {"KOI8-U", 1, " koi8-ru koi8-u "},
    {"macintosh", 1, " csmacintosh mac macintosh x-mac-roman "},
    {"windows-874", 1, " dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874 "},
    {"windows-1250", 1, " cp1250 windows-1250 x-cp1250 "},
    {"windows-1251", 1, " cp1251 windows-1251 x-cp1251 "},
    {"windows-1252", 1,
     " ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 iso8859-1 iso88591 iso_8859-1 "
     "iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252 "},
    {"windows-1253", 1, " cp1253 windows-1253 x-cp1253 "},
    {"windows-1254", 1,
     " cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 iso_8859-9:1989 l5 latin5 "
     "windows-1254 x-cp1254 "},
    {"windows-1255", 1, " cp1255 windows-1255 x-cp1255 "},
    {"windows-1256", 1, " cp1256 windows-1256 x-cp1256 "},
    {"windows-1257", 1, " cp1257 windows-1257 x-cp1257 "},
    {"windows-1258", 1, " cp1258 windows-1258 x-cp1258 "},
    {"x-mac-cyrillic", 1, " x-mac-cyrillic x-mac-ukrainian "},
    {"x-user-defined", 1, " x-user-defined "},
    /* Multi-byte encodings whose second bytes include ASCII letters and
     * ']' (a CDATA section's end): the injector would read a character
     * the browser does not see. */
    {"GBK", 0, " chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk "},
    {"gb18030", 0, " gb18030 "},
    {"Big5", 0, " big5 big5-hkscs cn-big5 csbig5 x-x-big5 "},
    {"EUC-JP", 0, " cseucpkdfmtjapanese euc-jp x-euc-jp "},
    {"Shift_JIS", 0, " csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis "},
    {"EUC-KR", 0,
     " cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 ksc5601 ksc_5601 windows-949 "},
    /* Escapes switch what ASCII bytes mean. */
    {"ISO-2022-JP", 0, " csiso2022jp iso-2022-jp "},
    {"replacement", 0, " csiso2022kr hz-gb-2312 iso-2022-cn iso-2022-cn-ext iso-2022-kr replacement "},
    {"UTF-16BE", 0, " unicodefffe utf-16be "},
    {"UTF-16LE", 0, " csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le "},
};
#define N_ENC (sizeof encodings / sizeof encodings[0])
#define ENC_UTF8 0
#define ENC_1252 21

static int is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

static unsigned char lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

/* The encoding of a label (trimmed, any case), or -1. */
static int encoding_of(const char *s, size_t n)
{
	while (n > 0 && is_ws((unsigned char)*s))
		s++, n--;
	while (n > 0 && is_ws((unsigned char)s[n - 1]))
		n--;
	if (n == 0 || n > 32)
		return -1;
	char l[34];
	l[0] = ' ';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = lower((unsigned char)s[i]);
		if (c == ' ' || c == '\0')
			return -1;
		l[i + 1] = (char)c;
	}
	l[n + 1] = ' ';
	for (size_t e = 0; e < N_ENC; e++)
		if (memmem(encodings[e].labels, strlen(encodings[e].labels), l, n + 2))
			return (int)e;
	return -1;
}

static csrf_reason decide(csrf_charset *out, int enc, const char *source)
{
	out->source = source;
	out->encoding = enc >= 0 ? encodings[enc].name : NULL;
	out->verdict = enc >= 0 && encodings[enc].safe ? CSRF_CHARSET_INJECT : CSRF_CHARSET_PASS;
	return CSRF_OK;
}

/* The charset parameter of a Content-Type value: 1 and its value when
 * there is one, 0 when none, -1 when the parameters do not parse or name
 * two different charsets. */
static int ct_charset(const char *ct, size_t n, const char **v, size_t *vl)
{
	size_t i = 0;
	int found = 0;
	while (i < n && ct[i] != ';')
		i++;
	while (i < n) {
		i++; /* the ';' */
		while (i < n && is_ws((unsigned char)ct[i]))
			i++;
		size_t ns = i;
		while (i < n && ct[i] != '=' && ct[i] != ';')
			i++;
		size_t ne = i;
		while (ne > ns && is_ws((unsigned char)ct[ne - 1]))
			ne--;
		if (i == n || ct[i] == ';')
			continue; /* a parameter without a value */
		i++;              /* the '=' */
		const char *val;
		size_t len;
		if (i < n && ct[i] == '"') {
			/* a quoted string; backslash escapes make it unusual enough to refuse */
			size_t q = ++i;
			while (i < n && ct[i] != '"') {
				if (ct[i] == '\\')
					return -1;
				i++;
			}
			if (i == n)
				return -1;
			val = ct + q;
			len = i - q;
			i++;
			while (i < n && ct[i] != ';')
				i++;
		} else {
			size_t q = i;
			while (i < n && ct[i] != ';')
				i++;
			val = ct + q;
			len = i - q;
		}
		csrf_slice name = {ct + ns, ne - ns};
		if (!csrfi_slice_ieq(name, "charset"))
			continue;
		if (found && (len != *vl || (len && memcmp(val, *v, len) != 0)))
			return -1;
		found = 1;
		*v = val;
		*vl = len;
	}
	return found;
}

/* ---- the prescan (HTML, "prescan a byte stream to determine its encoding") ---- */

typedef struct {
	const char *p, *e;
	int cut; /* the window ended inside a construct: more bytes could tell */
} scan;

static int at(const scan *s, size_t off)
{
	return s->p + off < s->e ? (unsigned char)s->p[off] : -1;
}

/* Gets one attribute at s->p; 0 when the tag ended ('>' or the window).
 * name and value are lower-cased copies, truncated to their caps. */
static int get_attr(scan *s, char *name, size_t *nl, size_t ncap, char *value, size_t *vl, size_t vcap)
{
	*nl = *vl = 0;
	while (s->p < s->e && (is_ws((unsigned char)*s->p) || *s->p == '/'))
		s->p++;
	if (s->p >= s->e) {
		s->cut = 1;
		return 0;
	}
	if (*s->p == '>')
		return 0;
	size_t seen = 0; /* the name's length so far, kept or not */
	for (;;) {       /* the name */
		if (s->p >= s->e) {
			s->cut = 1;
			return 0;
		}
		unsigned char c = (unsigned char)*s->p;
		if (c == '=' && seen > 0)
			break;
		if (is_ws(c))
			break;
		if (c == '/' || c == '>')
			return 1;
		if (*nl < ncap)
			name[(*nl)++] = (char)lower(c);
		seen++;
		s->p++;
	}
	while (s->p < s->e && is_ws((unsigned char)*s->p))
		s->p++;
	if (s->p >= s->e) {
		s->cut = 1;
		return 0;
	}
	if (*s->p != '=')
		return 1; /* no value */
	s->p++;
	while (s->p < s->e && is_ws((unsigned char)*s->p))
		s->p++;
	if (s->p >= s->e) {
		s->cut = 1;
		return 0;
	}
	char q = *s->p;
	if (q == '"' || q == '\'') {
		s->p++;
		const char *end = memchr(s->p, q, (size_t)(s->e - s->p));
		const char *stop = end ? end : s->e;
		for (const char *c = s->p; c < stop && *vl < vcap; c++)
			value[(*vl)++] = (char)lower((unsigned char)*c);
		if (!end) {
			s->p = s->e;
			s->cut = 1;
			return 0;
		}
		s->p = end + 1;
		return 1;
	}
	while (s->p < s->e && !is_ws((unsigned char)*s->p) && *s->p != '>') {
		if (*vl < vcap)
			value[(*vl)++] = (char)lower((unsigned char)*s->p);
		s->p++;
	}
	if (s->p >= s->e)
		s->cut = 1;
	return 1;
}

/* What skip_attrs stops at: the prescan's whitespace (is_ws), '/', '>'
 * and '='. */
enum { C_WS = 1, C_SLASH = 2, C_GT = 4, C_EQ = 8 };
static const unsigned char stops[256] = {
    [' '] = C_WS,  ['\t'] = C_WS,   ['\n'] = C_WS, ['\f'] = C_WS,
    ['\r'] = C_WS, ['/'] = C_SLASH, ['>'] = C_GT,  ['='] = C_EQ,
};

/* The attributes of a tag the prescan does not read (any but <meta>),
 * skipped: get_attr without a name or value kept, called until it
 * answers 0, in one loop. The same positions and the same s->cut; s->p
 * ends at the tag's '>' unless cut. */
static void skip_attrs(scan *s)
{
	const unsigned char *p = (const unsigned char *)s->p, *e = (const unsigned char *)s->e;

	for (;;) {
		while (p < e && (stops[*p] & (C_WS | C_SLASH)))
			p++;
		if (p >= e)
			break;
		if (*p == '>') {
			s->p = (const char *)p;
			return;
		}
		/* the name: its first byte whatever it is ('=' too), then up
		 * to '=', whitespace, '/' or '>' (the last two end it without
		 * a value) */
		p++;
		while (p < e && !stops[*p])
			p++;
		if (p >= e)
			break;
		if (stops[*p] & (C_SLASH | C_GT))
			continue;
		while (p < e && (stops[*p] & C_WS))
			p++;
		if (p >= e)
			break;
		if (*p != '=')
			continue;
		p++;
		while (p < e && (stops[*p] & C_WS))
			p++;
		if (p >= e)
			break;
		if (*p == '"' || *p == '\'') {
			const unsigned char *end = memchr(p + 1, *p, (size_t)(e - p - 1));
			if (!end) {
				p = e;
				break;
			}
			p = end + 1;
			continue;
		}
		while (p < e && !(stops[*p] & C_WS) && *p != '>')
			p++;
		if (p >= e)
			break;
	}
	s->p = (const char *)p;
	s->cut = 1;
}

/* "charset" in a content attribute ("text/html; charset=x"): the
 * encoding, -1 for none or an unknown label, -2 for a malformed one. */
static int content_charset(const char *v, size_t n)
{
	size_t i = 0;
	for (;;) {
		const char *c = memmem(v + i, n - i, "charset", 7);
		if (!c)
			return -1;
		i = (size_t)(c - v) + 7;
		while (i < n && is_ws((unsigned char)v[i]))
			i++;
		if (i < n && v[i] == '=')
			break;
	}
	i++;
	while (i < n && is_ws((unsigned char)v[i]))
		i++;
	if (i == n)
		return -1;
	size_t s, e;
	if (v[i] == '"' || v[i] == '\'') {
		char q = v[i];
		s = ++i;
		while (i < n && v[i] != q)
			i++;
		if (i == n)
			return -2;
		e = i;
	} else {
		s = i;
		while (i < n && !is_ws((unsigned char)v[i]) && v[i] != ';')
			i++;
		e = i;
	}
	return encoding_of(v + s, e - s);
}

#define ATTR_NAME_CAP 16
#define ATTR_VALUE_CAP 128

/* A <meta> tag at s->p (after "<meta" and a space or '/'): its encoding
 * when it declares a known one, -1 otherwise. */
static int meta_tag(scan *s)
{
	char name[ATTR_NAME_CAP], value[ATTR_VALUE_CAP];
	size_t nl, vl;
	int got_pragma = 0, need_pragma = -1, charset = -1;
	unsigned seen = 0; /* http-equiv, content, charset */
	while (get_attr(s, name, &nl, sizeof name, value, &vl, sizeof value)) {
		csrf_slice n = {name, nl};
		if (csrfi_slice_eq(n, "http-equiv")) {
			if (seen & 1)
				continue;
			seen |= 1;
			csrf_slice v = {value, vl};
			if (csrfi_slice_eq(v, "content-type"))
				got_pragma = 1;
		} else if (csrfi_slice_eq(n, "content")) {
			if (seen & 2)
				continue;
			seen |= 2;
			if (charset < 0) {
				int e = content_charset(value, vl);
				if (e >= 0) {
					charset = e;
					need_pragma = 1;
				}
			}
		} else if (csrfi_slice_eq(n, "charset")) {
			if (seen & 4)
				continue;
			seen |= 4;
			charset = encoding_of(value, vl);
			need_pragma = 0;
		}
	}
	if (need_pragma < 0 || (need_pragma == 1 && !got_pragma) || charset < 0)
		return -1;
	const char *nm = encodings[charset].name;
	if (strcmp(nm, "UTF-16BE") == 0 || strcmp(nm, "UTF-16LE") == 0)
		return ENC_UTF8;
	if (strcmp(nm, "x-user-defined") == 0)
		return ENC_1252;
	return charset;
}

static int starts_ci(const scan *s, const char *lit)
{
	for (size_t k = 0; lit[k]; k++) {
		int c = at(s, k);
		if (c < 0 || lower((unsigned char)c) != (unsigned char)lit[k])
			return 0;
	}
	return 1;
}

static int is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The encoding the prescan finds, -1 for none; s->cut when the window
 * ended before it could finish. */
static int prescan(scan *s)
{
	while (s->p < s->e) {
		/* text up to the next '<' says nothing */
		const char *lt = memchr(s->p, '<', (size_t)(s->e - s->p));
		if (!lt)
			break;
		s->p = lt;
		/* the byte after '<' tells which of the cases below can apply */
		int c1 = at(s, 1);
		if (c1 == '!' && starts_ci(s, "<!--")) {
			/* to the first "-->", whose dashes may be those of "<!--" */
			const char *q = s->p + 2;
			const char *end = NULL;
			for (; q + 3 <= s->e; q++)
				if (q[0] == '-' && q[1] == '-' && q[2] == '>') {
					end = q + 3;
					break;
				}
			if (!end) {
				s->cut = 1;
				return -1;
			}
			s->p = end;
			continue;
		}
		int c5 = (c1 | 0x20) == 'm' ? at(s, 5) : -1;
		if (c5 >= 0 && (is_ws((unsigned char)c5) || c5 == '/') && starts_ci(s, "<meta")) {
			s->p += 6;
			int e = meta_tag(s);
			if (e >= 0)
				return e;
			if (s->cut)
				return -1;
			continue;
		}
		if (c1 < 0 || ((c1 == '/' && at(s, 2) < 0))) {
			s->cut = 1;
			return -1;
		}
		if (is_alpha(c1) || (c1 == '/' && is_alpha(at(s, 2)))) {
			/* a tag: skip its name, then its attributes */
			s->p += c1 == '/' ? 2 : 1;
			/* to whitespace or '>' (is_ws or '>', by the table) */
			while (s->p < s->e && !(stops[(unsigned char)*s->p] & (C_WS | C_GT)))
				s->p++;
			/* attributes of other tags are skipped, not kept */
			skip_attrs(s);
			if (s->cut)
				return -1;
			s->p++;
			continue;
		}
		if (c1 == '!' || c1 == '/' || c1 == '?') {
			const char *gt = memchr(s->p, '>', (size_t)(s->e - s->p));
			if (!gt) {
				s->cut = 1;
				return -1;
			}
			s->p = gt + 1;
			continue;
		}
		s->p++;
	}
	return -1;
}

#if defined(__SSE2__) && defined(__x86_64__)
/* The pairs of (p, n) from the start, 64 at a time while a '<' and the
 * byte after it are both in the window: 1 at the first '<' before an 'm'
 * or 'M'; else 0 and *done the bytes read (the last one may be a '<'
 * whose pair is the caller's). */
__attribute__((target("avx2"))) static int meta_pairs_avx2(const char *p, size_t n, size_t *done)
{
	const __m256i lt = _mm256_set1_epi8('<'), m = _mm256_set1_epi8('m'), up = _mm256_set1_epi8(0x20);
	size_t i = 0;

	for (; i + 65 <= n; i += 64) {
		const __m256i *q = (const __m256i *)(const void *)(p + i);
		const __m256i *r = (const __m256i *)(const void *)(p + i + 1);
		__m256i a = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_loadu_si256(q), lt),
		                             _mm256_cmpeq_epi8(_mm256_or_si256(_mm256_loadu_si256(r), up), m));
		__m256i b = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_loadu_si256(q + 1), lt),
		                             _mm256_cmpeq_epi8(_mm256_or_si256(_mm256_loadu_si256(r + 1), up), m));
		if (_mm256_movemask_epi8(_mm256_or_si256(a, b)))
			return 1;
	}
	*done = i;
	return 0;
}
#endif

/* 0 when the window (p, n) holds no '<' followed by 'm' or 'M': then it
 * holds no <meta> tag, the one thing the prescan takes an encoding from,
 * and the prescan, which walks every tag and attribute of the window
 * (about 5 K instructions for a kilobyte of links), would find none.
 * Sixty-four pairs at a time where the CPU has AVX2; the rest, and other
 * CPUs, by memchr to each '<'. Pairs only inside the window, as the
 * prescan reads it. */
static int may_hold_meta(const char *p, size_t n)
{
	size_t i = 0;

	if (n < 2)
		return 0;
#if defined(__SSE2__) && defined(__x86_64__)
	if (__builtin_cpu_supports("avx2") && meta_pairs_avx2(p, n, &i))
		return 1;
#endif
	const char *e = p + n;
	for (const char *q = p + i; q + 1 < e; q++) {
		q = memchr(q, '<', (size_t)(e - q - 1));
		if (!q)
			return 0;
		if ((q[1] | 0x20) == 'm')
			return 1;
	}
	return 0;
}

CSRF_API csrf_reason csrf_charset_sniff(const char *content_type, size_t ct_len, const char *body, size_t body_len,
                                        int complete, csrf_charset *out)
{
	if (!out || (!content_type && ct_len > 0) || (!body && body_len > 0))
		return CSRF_ERR_ARG;
	out->verdict = CSRF_CHARSET_PASS;
	out->encoding = NULL;
	out->source = NULL;
	const unsigned char *b = (const unsigned char *)body;

	/* 1. A byte order mark wins over everything. */
	if (body_len >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF)
		return decide(out, ENC_UTF8, "byte order mark");
	if (body_len >= 2 && ((b[0] == 0xFE && b[1] == 0xFF) || (b[0] == 0xFF && b[1] == 0xFE))) {
		out->encoding = b[0] == 0xFE ? "UTF-16BE" : "UTF-16LE";
		out->source = "byte order mark";
		return CSRF_OK;
	}
	if (!complete && ((body_len == 0) || (body_len == 1 && (b[0] == 0xEF || b[0] == 0xFE || b[0] == 0xFF)) ||
	                  (body_len == 2 && b[0] == 0xEF && b[1] == 0xBB))) {
		out->verdict = CSRF_CHARSET_MORE;
		return CSRF_OK;
	}

	/* 2. The transport layer's charset. */
	const char *v = NULL;
	size_t vl = 0;
	int has = content_type ? ct_charset(content_type, ct_len, &v, &vl) : 0;
	if (has < 0) {
		out->source = "Content-Type";
		return CSRF_OK; /* two charsets, or parameters that do not parse */
	}
	if (has > 0)
		return decide(out, encoding_of(v, vl), "Content-Type");

	/* 3. The prescan of the first bytes for <meta charset>. */
	size_t n = body_len < CSRF_CHARSET_PRESCAN_MAX ? body_len : CSRF_CHARSET_PRESCAN_MAX;
	scan s = {body, body + n, 0};
	int e = may_hold_meta(body, n) ? prescan(&s) : -1;
	if (e >= 0)
		return decide(out, e, "meta");
	if (!complete && body_len < CSRF_CHARSET_PRESCAN_MAX) {
		out->verdict = CSRF_CHARSET_MORE;
		return CSRF_OK;
	}
	/* 4. None declared: the browser guesses; its guesses that are not
	 * ASCII-compatible (ISO-2022-JP) need an ESC byte, which stops the
	 * injector (csrf_inject_feed). */
	out->verdict = CSRF_CHARSET_INJECT;
	out->source = "default";
	return CSRF_OK;
}
