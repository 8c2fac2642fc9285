/* SPDX-License-Identifier: BSD-2-Clause */
/* test_inject_scan.c - the injector's block scanner (src/inject_scan.c):
 * every path this build and CPU have, forced in turn. Their masks equal
 * the definition for every byte value at every place of a block, for
 * random blocks and for every length of a chunk's tail, flush against a
 * guard page; and the injector reads every page the same on each path as
 * a byte at a time does (the scalar reference): at every address
 * alignment (0..63), with the page shifted 0..63 bytes against the block
 * grid, split in two at every point, byte by byte, and in random cuts. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csrf.h"
#include "inject_shared.h"
#include "testutil.h"

/* --quick (the router targets under qemu-user, valgrind): fewer random
 * blocks and pages, every fifth split point, and the benchmark page
 * neither split nor placed at every alignment. */
static int quick;

#define SELF "https://self.example"
#define FIELD "csrf_f1"
#define TOKEN "tok-EN_9"

/* ---- the masks ---- */

/* The definition, spelled out again (inject_shared.h, struct inj_block). */
static void definition(const unsigned char *p, size_t n, struct inj_block *b)
{
	memset(b, 0, sizeof *b);
	for (size_t k = 0; k < n; k++) {
		unsigned char c = p[k];
		if (c == '<')
			b->lt |= (uint64_t)1 << k;
		if (c == '>' || c == '"' || c == '\'')
			b->gq |= (uint64_t)1 << k;
		if (c <= ' ' || c == '/' || c == '=' || c == '>')
			b->end |= (uint64_t)1 << k;
	}
}

/* xorshift64: the same blocks and pages on every run */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* The paths that run here, and how many. */
static int paths_here(int *out)
{
	int n = 0;
	for (int p = 0; p < INJ_SCAN_PATHS; p++)
		if (csrfi_inject_scan_force(p) == 0)
			out[n++] = p;
	assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_BEST), 0);
	return n;
}

static void check_block(const struct inj_scan_path *path, const unsigned char *blk)
{
	struct inj_block want, got[2];
	definition(blk, 64, &want);
	memset(got, 0xa5, sizeof got);
	path->classify((const char *)blk, 1, got);
	/* got[1] as memset left it: nothing written past the block */
	if (got[0].lt != want.lt || got[0].gq != want.gq || got[0].end != want.end || got[1].lt != got[1].gq)
		fail_msg("path %s: lt %016llx/%016llx gq %016llx/%016llx end %016llx/%016llx", path->name,
		         (unsigned long long)got[0].lt, (unsigned long long)want.lt, (unsigned long long)got[0].gq,
		         (unsigned long long)want.gq, (unsigned long long)got[0].end, (unsigned long long)want.end);
}

static void test_paths_present(void **state)
{
	(void)state;
	int p[INJ_SCAN_PATHS], n = paths_here(p);
	/* the reference and the portable path everywhere, and the one an
	 * architecture promises; a CPU with AVX2 gets it by default */
	assert_true(n >= 2);
	assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_SCALAR), 0);
	assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_PORTABLE), 0);
#if defined(__x86_64__)
	assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_SSE2), 0);
#endif
#if defined(__aarch64__)
	assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_NEON), 0);
#endif
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2")) {
		assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_AVX2), 0);
		assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_BEST), 0);
		assert_string_equal(csrfi_inject_scan_name(INJ_SCAN_BEST), "avx2");
	}
#endif
	assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_PATHS), -1);
	assert_int_equal(csrfi_inject_scan_force(-7), -1);
	for (int k = 0; k < n; k++)
		print_message("path %s\n", csrfi_inject_scan_name(p[k]));
	assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_BEST), 0);
}

/* Every byte value at every place of a block (the rest a letter, a
 * space, '<' or '>'), and random blocks of the bytes that matter. */
static void test_masks(void **state)
{
	(void)state;
	int p[INJ_SCAN_PATHS], n = paths_here(p);
	static const unsigned char fill[] = {'a', ' ', '<', '>', 0x80, 0};
	static const unsigned char zero[64];
	unsigned char *blk = (unsigned char *)tu_guard_copy(zero, 64);
	for (int k = 0; k < n; k++) {
		assert_int_equal(csrfi_inject_scan_force(p[k]), 0);
		const struct inj_scan_path *path = inj_scan_path();
		for (size_t f = 0; f < sizeof fill; f++)
			for (unsigned v = 0; v < 256; v++)
				for (unsigned at = 0; at < 64; at++) {
					memset(blk, fill[f], 64);
					blk[at] = (unsigned char)v;
					check_block(path, blk);
				}
		static const char some[] = "<>\"'=/ \t\n\f\r\v\x01\x1f\x20\x21\x7f\x80\xa0\xbc\xbe\xff-]!?&aZ";
		for (int r = 0; r < (quick ? 2000 : 20000); r++) {
			for (unsigned at = 0; at < 64; at++)
				blk[at] =
				    (r & 1) ? (unsigned char)rnd() : (unsigned char)some[rnd() % (sizeof some - 1)];
			check_block(path, blk);
		}
	}
	tu_guard_free((char *)blk);
	/* runs of blocks in one call, the last flush against the guard page */
	for (int k = 0; k < n; k++) {
		assert_int_equal(csrfi_inject_scan_force(p[k]), 0);
		const struct inj_scan_path *path = inj_scan_path();
		unsigned char run[64 * 20];
		for (size_t at = 0; at < sizeof run; at++)
			run[at] = (unsigned char)"<>\"'=/ a\tb\x01\xff"[rnd() % 13];
		char *g = tu_guard_copy(run, sizeof run);
		for (size_t blocks = 0; blocks <= 20; blocks++) {
			struct inj_block got[21], want;
			memset(got, 0xa5, sizeof got);
			path->classify(g + 64 * (20 - blocks), blocks, got);
			for (size_t b = 0; b < blocks; b++) {
				definition(run + 64 * (20 - blocks + b), 64, &want);
				assert_true(got[b].lt == want.lt && got[b].gq == want.gq && got[b].end == want.end);
			}
			assert_true(got[blocks].lt == got[blocks].end); /* nothing written past them */
		}
		tu_guard_free(g);
	}
	/* a chunk's tail: n < 64 bytes flush against the guard page */
	for (size_t len = 0; len < 64; len++) {
		unsigned char src[64];
		for (size_t at = 0; at < len; at++)
			src[at] = (unsigned char)"<>\"'=/ a\tb\x01\xff"[rnd() % 13];
		char *g = tu_guard_copy(src, len);
		struct inj_block want, got;
		definition(src, len, &want);
		memset(&got, 0xa5, sizeof got);
		inj_scan_tail(g, len, &got);
		assert_true(got.lt == want.lt && got.gq == want.gq && got.end == want.end);
		tu_guard_free(g);
	}
	assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_BEST), 0);
}

/* Neighbours: the word-at-a-time paths compute a byte's class with
 * adds and multiplies a wrong carry or product would leak into the next
 * byte or the next byte's bit. Every byte value next to (before and
 * after) each byte that is in a class, one off it, or the same with the
 * high bit set, at every place of a block (so in every lane of every
 * word and across the words' edges); and every byte value filling a
 * whole block, and alternating with each of those bytes. */
static void test_neighbours(void **state)
{
	(void)state;
	int p[INJ_SCAN_PATHS], n = paths_here(p);
	static const unsigned char near[] = {0x00, 0x01, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x26, 0x27, 0x28,
	                                     0x2e, 0x2f, 0x30, 0x3b, 0x3c, 0x3d, 0x3e, 0x3f, 0x40, 0x5f,
	                                     0x7e, 0x7f, 0x80, 0x81, 0x9f, 0xa0, 0xa1, 0xa2, 0xa7, 0xaf,
	                                     0xbb, 0xbc, 0xbd, 0xbe, 0xbf, 0xc0, 0xdf, 0xe0, 0xfe, 0xff};
	static const unsigned char zero[64];
	unsigned char *blk = (unsigned char *)tu_guard_copy(zero, 64);
	for (int k = 0; k < n; k++) {
		assert_int_equal(csrfi_inject_scan_force(p[k]), 0);
		const struct inj_scan_path *path = inj_scan_path();
		if (p[k] == INJ_SCAN_SCALAR)
			continue; /* the reference */
		for (size_t u = 0; u < sizeof near; u += quick ? 2 : 1)
			for (unsigned v = 0; v < 256; v++) {
				/* every lane of the first two words (of 4 and of 8
				 * bytes) and their edges, and the block's last word
				 * (quick: the first word and its edge, the last four) */
				for (unsigned at = 0; at < 64;
				     at = (at == (quick ? 8u : 15u) ? (quick ? 60u : 56u) : at + 1)) {
					memset(blk, near[(u + 7) % sizeof near], 64);
					blk[at] = (unsigned char)v;
					if (at + 1 < 64)
						blk[at + 1] = near[u];
					if (at > 0)
						blk[at - 1] = near[u];
					check_block(path, blk);
					if (at > 0)
						blk[at - 1] = (unsigned char)(v ^ 0x80);
					check_block(path, blk);
				}
				memset(blk, (int)v, 64);
				check_block(path, blk);
				for (unsigned at = 0; at < 64; at++)
					blk[at] = (at & 1) ? near[u] : (unsigned char)v;
				check_block(path, blk);
			}
	}
	tu_guard_free((char *)blk);
	assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_BEST), 0);
}

/* ---- the pages ---- */

typedef struct {
	char *p;
	size_t n, cap;
} buf;

static void put(buf *b, const char *p, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void put_str(buf *b, const char *s)
{
	put(b, s, strlen(s));
}

/* The injector's id of a form read deep in the tree (' id="csrf-' or '
 * form="csrf-' and 16 random characters): masked, so that outputs
 * compare across runs. */
static int on_emit(void *ud, const char *p, size_t n, int inserted)
{
	buf *b = ud;
	size_t at = b->n;
	put(b, p, n);
	static const char *const pre[] = {" id=\"csrf-", " form=\"csrf-"};
	for (size_t i = 0; inserted && i < n; i++)
		for (int k = 0; k < 2; k++) {
			size_t l = strlen(pre[k]);
			if (n - i >= l + 16 && memcmp(p + i, pre[k], l) == 0)
				memset(b->p + at + i + l, '#', 16);
		}
	return 0;
}

static csrf_inject *inj_new(void **mem)
{
	csrf_inject *inj = NULL;
	*mem = malloc(csrf_inject_size());
	assert_non_null(*mem);
	assert_int_equal(csrf_inject_init(*mem, csrf_inject_size(), SELF, strlen(SELF), FIELD, strlen(FIELD), TOKEN,
	                                  strlen(TOKEN), &inj),
	                 CSRF_OK);
	return inj;
}

/* page through a fresh injector in the chunks cuts[0..ncuts) make (each
 * chunk its own guard-page copy, its first byte at address alignment
 * align), options on or off; the output with the count and status after
 * it, so that they are compared too. */
static buf feed(const char *page, size_t n, const size_t *cuts, size_t ncuts, size_t align, unsigned options)
{
	void *mem;
	csrf_inject *inj = inj_new(&mem);
	assert_int_equal(csrf_inject_options(inj, options), CSRF_OK);
	buf out = {NULL, 0, 0};
	size_t from = 0;
	for (size_t k = 0; k <= ncuts; k++) {
		size_t to = k < ncuts ? cuts[k] : n;
		char *tmp = malloc(align + (to - from) + 1);
		assert_non_null(tmp);
		memset(tmp, '<', align);
		memcpy(tmp + align, page + from, to - from);
		char *g = tu_guard_copy(tmp, align + (to - from));
		assert_int_equal(csrf_inject_feed(inj, g + align, to - from, on_emit, &out), CSRF_OK);
		tu_guard_free(g);
		free(tmp);
		from = to;
	}
	unsigned count = 0;
	assert_int_equal(csrf_inject_finish(inj, on_emit, &out, &count), CSRF_OK);
	char tail[64];
	int t = snprintf(tail, sizeof tail, "|%u|%u", count, csrf_inject_status(inj));
	put(&out, tail, (size_t)t);
	free(mem);
	return out;
}

static void same(const buf *a, const buf *b, const char *what, int path, size_t k)
{
	if (a->n != b->n || memcmp(a->p, b->p, a->n) != 0)
		fail_msg("path %s reads differently from the reference: %s %zu", csrfi_inject_scan_name(path), what, k);
}

/* Pieces of markup the random pages are made of: every state of the
 * tokenizer, the bytes its masks hold and those they must not. */
#define P(s)                                                                                                           \
	{                                                                                                              \
		s, sizeof s - 1                                                                                        \
	}
static const struct {
	const char *s;
	size_t n;
} pieces[] = {
    P("<form method=post action=\"/x\">"),
    P("</form>"),
    P("</FORM >"),
    P("<FORM METHOD=POST>"),
    P("<form method='post' action='https://self.example/a'>"),
    P("<form action=//evil.example/ method=post>"),
    P("<input name=a value='x>y'>"),
    P("<input type=submit formmethod=get>"),
    P("<button>go</button>"),
    P("<button formaction=\"https://evil.example/\">"),
    P("<a href=\"/p?a=1&amp;b=2\">"),
    P("</a>"),
    P("<p title='\">'>"),
    P("<br/>"),
    P("<img src=x alt=\"a b\" />"),
    P("<a x==\"y>\">"),
    P("<a x = 'y' >"),
    P("<p =x>"),
    P("<a/b>"),
    P("<s p/=\"><form method=post>"),
    P("<div\tclass=x\n>"),
    P("<div\fid=y\r>"),
    P("<x a=b/c=d>"),
    P("<x a=\"\"b>"),
    P("<x\va=1>"),
    P("<x\x01y=\">\">"),
    P("</a foo=\">\">"),
    P("</ x>"),
    P("<!-- c -->"),
    P("<!-->"),
    P("<!--->"),
    P("<!---->"),
    P("<!-- a -- b --!>"),
    P("<! bogus>"),
    P("<?pi>"),
    P("<!doctype html>"),
    P("<![CDATA[x>]]>"),
    P("<svg><![CDATA[</form>]]></svg>"),
    P("<svg>"),
    P("</svg>"),
    P("<math><mi>"),
    P("</math>"),
    P("<script>a<b</script>"),
    P("<script><!--<script></script>--></script>"),
    P("<script><!-- x --></script>"),
    P("<style>a>b{}</style>"),
    P("<textarea></form></textarea>"),
    P("<title>x<y</title>"),
    P("<xmp><a></xmp>"),
    P("<noscript><form method=post></noscript>"),
    P("<noscript><p>x</p></noscript>"),
    P("<table><tr><td>"),
    P("</td></tr></table>"),
    P("<select><option>"),
    P("</select>"),
    P("<template>"),
    P("</template>"),
    P("<base href=/x/>"),
    P("<head>"),
    P("</head>"),
    P("<meta name=referrer content=no-referrer>"),
    P("<meta name=\"referrer\" content='never'>"),
    P("\t"),
    P("\n"),
    P("\r\n"),
    P("\f"),
    P("\v"),
    P(" "),
    P("\x01"),
    P("\0"),
    P("\x7f"),
    P("\xc3\xa9"),
    P("\xff"),
    P("x"),
    P("A story worth voting for. A story worth voting for. A story worth voting for. "),
    P("<"),
    P(">"),
    P("'"),
    P("\""),
    P("="),
    P("/"),
    P("&amp;"),
    P("-"),
    P("]"),
    P("<b>"),
    P("</b>"),
    P("<p>"),
    P("</p>"),
    P("<a name=\"option_6\"></a>"),
    P("<strong><code>-6</code></strong>"),
    P("<dt><dd>"),
    P("<input type=hidden name=q value=\"a'b\">"),
    /* tags the tokenizer skips whole: quotes that open values and those
     * that do not, '=' before a name, long names, upper case */
    P("<a title='><form method=post>'>"),
    P("<SPAN TITLE=\"></form>\">"),
    P("<a b\"c>"),
    P("<a =\">"),
    P("<a b==\">"),
    P("<a b=c\"d>"),
    P("<a b ='>'>"),
    P("<br/ title='>'>"),
    P("<code=x title='>'>"),
    P("<blockquote cite=\"x>\">"),
    P("<strong\"='>"),
    P("<a x='1'y='>'>"),
    /* the attribute loop of the tags that matter (name="value" in a row,
     * then '/', '>' or another byte), their names found through the masks
     * and lowered (longer than kept, in capitals), and names a known one's
     * first letter and length, not its second letter, let through */
    P("<form method=\"post\" action=\"/x\"/>"),
    P("<input type=\"submit\"formmethod=\"get\"value='a'>"),
    P("<button formaction='/a' formmethod=\"post\" type=\"submit\">"),
    P("<input DATA-A-LONG-ATTRIBUTE-NAME=\"1\" TYPE=\"SUBMIT\" FormAction=\"https://evil.example/\">"),
    P("<button formactionx=\"//evil.example\" formaction=\"/ok\">"),
    P("<form =\"x\" method=\"post\"\taction=\"/y\" >"),
    P("<form method=\"post\" action=\"/z\"=\"q\">"),
    P("<TBODY><Strong><HTML><Body><Small></Strong><TD></tbody>"),
    P("<div data-a='" /* a value across blocks and the scan window */
      "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
      "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
      "<form method=post>'>"),
};
/* rare: the rest of the page is passed as it is */
static const struct {
	const char *s;
	size_t n;
} rare[] = {P("<plaintext>"), P("\x1b$B"), P("<frameset>")};

static buf random_page(void)
{
	buf b = {NULL, 0, 0};
	int n = 5 + (int)(rnd() % 60);
	for (int k = 0; k < n; k++) {
		if (rnd() % 200 == 0) {
			size_t r = rnd() % (sizeof rare / sizeof rare[0]);
			put(&b, rare[r].s, rare[r].n);
		} else {
			size_t r = rnd() % (sizeof pieces / sizeof pieces[0]);
			put(&b, pieces[r].s, pieces[r].n);
		}
	}
	if (rnd() % 2)
		put(&b, "<form method=post action=/send><input name=m><button>Send</button></form>", 73);
	return b;
}

/* The benchmark's page (bench/page.py). */
static buf form_page(void)
{
	buf b = {NULL, 0, 0};
	static const char head[] = "<!doctype html><html><head><title>Stories</title></head><body>\n";
	put(&b, head, sizeof head - 1);
	for (int r = 0; r < 4; r++) {
		put(&b, "<p>", 3);
		for (int k = 0; k < 40; k++)
			put(&b, "A story worth voting for. ", 26);
		put(&b, "</p>\n", 5);
		for (int i = 0; i < 5; i++) {
			char f[160];
			int m = snprintf(f, sizeof f,
			                 "<form method=\"post\" action=\"/submit\"><input name=\"story\" value=\"%d\">"
			                 "<button>vote</button></form>\n",
			                 i);
			put(&b, f, (size_t)m);
		}
	}
	put(&b, "</body></html>\n", 15);
	return b;
}

/* A page of every piece, each once, twice over (about 4 KB): every
 * place of a piece against the block grid comes with the shifts. */
static buf every_piece_page(void)
{
	buf b = {NULL, 0, 0};
	put(&b, "<html><head><title>t</title></head><body>", 41);
	for (int r = 0; r < 2; r++)
		for (size_t k = 0; k < sizeof pieces / sizeof pieces[0]; k++) {
			if (r == 0 || (pieces[k].s[0] != '<' && k % 3 == 0))
				put(&b, pieces[k].s, pieces[k].n);
			else
				put(&b, pieces[k].s, pieces[k].n), put(&b, " ", 1);
		}
	put(&b, "<form method=post action=/send><input name=m><button>Send</button></form>", 73);
	return b;
}

/* The page at every address alignment and shifted against the block grid
 * by every prefix of text, on every path, both options. */
static void check_alignments(const buf *page, const int *p, int n)
{
	for (unsigned opt = 0; opt <= CSRF_INJECT_OPT_RAISE_REFERRER; opt += CSRF_INJECT_OPT_RAISE_REFERRER) {
		assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_SCALAR), 0);
		buf ref = feed(page->p, page->n, NULL, 0, 0, opt);
		for (int k = 0; k < n; k++) {
			assert_int_equal(csrfi_inject_scan_force(p[k]), 0);
			for (size_t a = 0; a < 64; a++) {
				buf got = feed(page->p, page->n, NULL, 0, a, opt);
				same(&ref, &got, "at address alignment", p[k], a);
				free(got.p);
				/* "x" * a before the page: text, passed as it is */
				buf shifted = {NULL, 0, 0}, want = {NULL, 0, 0};
				for (size_t j = 0; j < a; j++)
					put(&shifted, "x", 1), put(&want, "x", 1);
				put(&shifted, page->p, page->n);
				put(&want, ref.p, ref.n);
				got = feed(shifted.p, shifted.n, NULL, 0, 0, opt);
				same(&want, &got, "shifted by", p[k], a);
				free(got.p);
				free(shifted.p);
				free(want.p);
			}
		}
		free(ref.p);
	}
}

/* Split in two at every stride-th point, and byte by byte, on every path. */
static void check_splits(const buf *page, const int *p, int n, size_t stride)
{
	assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_SCALAR), 0);
	buf ref = feed(page->p, page->n, NULL, 0, 0, 0);
	size_t *bytes = malloc((page->n + 1) * sizeof *bytes);
	assert_non_null(bytes);
	for (size_t j = 0; j < page->n; j++)
		bytes[j] = j + 1;
	for (int k = 0; k < n; k++) {
		assert_int_equal(csrfi_inject_scan_force(p[k]), 0);
		for (size_t at = 0; at <= page->n; at += stride) {
			buf got = feed(page->p, page->n, &at, 1, at % 64, 0);
			same(&ref, &got, "split at", p[k], at);
			free(got.p);
		}
		buf got = feed(page->p, page->n, bytes, page->n ? page->n - 1 : 0, 0, 0);
		same(&ref, &got, "byte by byte", p[k], 0);
		free(got.p);
	}
	free(bytes);
	free(ref.p);
}

static void test_every_piece(void **state)
{
	(void)state;
	int p[INJ_SCAN_PATHS], n = paths_here(p);
	buf page = every_piece_page();
	check_alignments(&page, p, n);
	check_splits(&page, p, n, quick ? 5 : 1);
	free(page.p);
	assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_BEST), 0);
}

static void test_form_page(void **state)
{
	(void)state;
	int p[INJ_SCAN_PATHS], n = paths_here(p);
	buf page = form_page();
	if (!quick) {
		check_alignments(&page, p, n);
		check_splits(&page, p, n, 7); /* every place: the page of every piece */
	}
	/* and it gets its twenty tokens and the meta pair */
	assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_BEST), 0);
	buf out = feed(page.p, page.n, NULL, 0, 0, 0);
	assert_non_null(strstr(out.p, "|21|0"));
	free(out.p);
	free(page.p);
}

/* The page on every path against the reference: whole at a random
 * alignment, and in up to six random cuts. */
static void check_page(const buf *page, const int *p, int n, unsigned opt, const char *what, int r)
{
	assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_SCALAR), 0);
	buf ref = feed(page->p, page->n, NULL, 0, 0, opt);
	for (int k = 0; k < n; k++) {
		assert_int_equal(csrfi_inject_scan_force(p[k]), 0);
		size_t cuts[6], m = 0;
		for (size_t j = 0; j < 6 && page->n > 0; j++) {
			size_t c = (size_t)(rnd() % (page->n + 1));
			if (m == 0 || c >= cuts[m - 1])
				cuts[m++] = c;
		}
		buf whole = feed(page->p, page->n, NULL, 0, (size_t)(rnd() % 64), opt);
		buf cut = feed(page->p, page->n, cuts, m, (size_t)(rnd() % 64), opt);
		if (whole.n != ref.n || memcmp(whole.p, ref.p, ref.n) != 0 || cut.n != ref.n ||
		    memcmp(cut.p, ref.p, ref.n) != 0)
			fail_msg("path %s reads differently from the reference: %s %d (%s)",
			         csrfi_inject_scan_name(p[k]), what, r,
			         whole.n != ref.n || memcmp(whole.p, ref.p, ref.n) != 0 ? "whole" : "in cuts");
		free(whole.p);
		free(cut.p);
	}
	free(ref.p);
}

/* The depth bound's count of start tags (S, and T for tables) on every
 * path: a page of random pieces, then <i> tags and a POST form. Where
 * the <i> tags bring the bound to the guard the form gets the injector's
 * id (found on the reference path, which reads every tag through the
 * states); every path, whole and in cuts and at alignments, reads the
 * page with one <i> less and the page at the guard as the reference
 * does: a start tag miscounted by any path moves the edge. */
static buf depth_page(const buf *soup, size_t k)
{
	buf b = {NULL, 0, 0};
	put(&b, soup->p, soup->n);
	put(&b, "</select></svg></math></template></table></noscript>", 52);
	for (size_t j = 0; j < k; j++)
		put(&b, "<i>", 3);
	put(&b, "<form method=post action=/send><input name=m><button>Send</button></form>", 73);
	return b;
}

static int has_pin(const buf *out)
{
	return out->n >= 10 && memmem(out->p, out->n, " id=\"csrf-################\"", 27) != NULL;
}

static void test_depth_count(void **state)
{
	(void)state;
	int p[INJ_SCAN_PATHS], n = paths_here(p);
	int edges = 0;
	for (int r = 0; r < (quick ? 8 : 40); r++) {
		buf soup = random_page();
		/* the soup's start tags: the edge is where one more <i> gives the id */
		size_t lo = 0, hi = 600;
		assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_SCALAR), 0);
		buf top = depth_page(&soup, hi), out = feed(top.p, top.n, NULL, 0, 0, 0);
		int pins = has_pin(&out);
		free(top.p);
		free(out.p);
		if (!pins) { /* the soup stopped the injector, or held the form back */
			free(soup.p);
			continue;
		}
		while (hi - lo > 1) {
			size_t mid = (lo + hi) / 2;
			buf pg = depth_page(&soup, mid);
			buf o = feed(pg.p, pg.n, NULL, 0, 0, 0);
			if (has_pin(&o))
				hi = mid;
			else
				lo = mid;
			free(pg.p);
			free(o.p);
		}
		edges++;
		for (size_t k = hi - 1; k <= hi; k++) {
			buf pg = depth_page(&soup, k);
			check_page(&pg, p, n, (unsigned)(r & 1), "depth edge", r);
			assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_SCALAR), 0);
			buf o = feed(pg.p, pg.n, NULL, 0, 0, 0);
			assert_int_equal(has_pin(&o), k == hi);
			free(o.p);
			free(pg.p);
		}
		free(soup.p);
	}
	assert_true(edges > 0);
	assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_BEST), 0);
}

/* Random pages of the pieces: whole at a random alignment, in random
 * cuts, on every path against the reference. */
static void test_random_pages(void **state)
{
	(void)state;
	int p[INJ_SCAN_PATHS], n = paths_here(p);
	for (int r = 0; r < (quick ? 60 : 400); r++) {
		buf page = random_page();
		unsigned opt = (r & 1) ? CSRF_INJECT_OPT_RAISE_REFERRER : 0;
		check_page(&page, p, n, opt, "random page", r);
		free(page.p);
	}
	assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_BEST), 0);
}

/* Tag soup: short runs of the bytes that move the attribute states (the
 * quotes, '=', '/', '>', '<', spaces, letters of names that do and do not
 * matter) between POST forms, so that the tags the tokenizer skips whole
 * (plain_tag) meet every order of them; on every path against the
 * reference, which reads every tag through the states. */
static void test_tag_soup(void **state)
{
	(void)state;
	/* names that do not matter; and names of the first letters and
	 * lengths of those that do, which plain_tag looks up: in any case,
	 * one byte off (a NUL is part of a name), end tags of the ones that
	 * change nothing there (</input>, </base>; <td> outside tables) */
	static const struct {
		const char *s;
		size_t n;
	} names[] = {P("a"),      P("p"),      P("B"),          P("span"),   P("CODE"),   P("br"),       P("x"),
	             P("/a"),     P("/p"),     P(""),           P("font"),   P("FONT"),   P("fo"),       P("formx"),
	             P("form\0"), P("f\0rm"),  P("/FoRm"),      P("/forms"), P("inputs"), P("/Input"),   P("base2"),
	             P("/BASE"),  P("td"),     P("/tD"),        P("TH"),     P("tables"), P("titles"),   P("/head"),
	             P("heap"),   P("Meta"),   P("metas"),      P("col"),    P("cols"),   P("captions"), P("noscripT"),
	             P("no"),     P("xmpp"),   P("plaintexts"), P("svgs"),   P("math0"),  P("keygen\0"), P("selects"),
	             P("table"),  P("/table"), P("meta")};
	static const char *const bits[] = {" ", "\t", "a", "=", "\"", "'", "/", ">", "<", "=\"", "='", "\"v\"", "'v'"};
	int p[INJ_SCAN_PATHS], n = paths_here(p);
	for (int r = 0; r < (quick ? 300 : 1000); r++) {
		buf page = {NULL, 0, 0};
		for (int k = 0, m = 1 + (int)(rnd() % 6); k < m; k++) {
			size_t w = (size_t)(rnd() % (sizeof names / sizeof names[0]));
			put(&page, "<", 1);
			put(&page, names[w].s, names[w].n);
			for (int j = 0, l = 1 + (int)(rnd() % 12); j < l; j++) {
				const char *b = bits[rnd() % (sizeof bits / sizeof bits[0])];
				put(&page, b, strlen(b));
			}
			if (rnd() % 2)
				put(&page, ">", 1);
			put(&page, "<form method=post><button>x</button></form>", 43);
		}
		/* with the referrer raise, a <meta> matters too */
		check_page(&page, p, n, (r & 1) ? CSRF_INJECT_OPT_RAISE_REFERRER : 0, "tag soup", r);
		free(page.p);
	}
	assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_BEST), 0);
}

/* Every byte value in every place of the names plain_tag and plain_named
 * look up (folded with 0x20, inject.c's fold9), start and end tags, bare
 * and with an attribute, among plain tags (plain_tag takes the first
 * three after a tag that matters, plain_fast those after), before a POST
 * form: on every path against the reference, which lowers each name
 * byte by byte (name_run). */
static void test_name_bytes(void **state)
{
	(void)state;
	static const char *const names[] = {"form",     "/form",  "input",    "button",    "base",    "meta",   "svg",
	                                    "math",     "select", "table",    "/table",    "td",      "script", "title",
	                                    "textarea", "xmp",    "noscript", "plaintext", "frameset"};
	int p[INJ_SCAN_PATHS], n = paths_here(p);
	for (size_t w = 0; w < sizeof names / sizeof names[0]; w++) {
		size_t len = strlen(names[w]);
		for (size_t j = names[w][0] == '/'; j < len; j++) {
			for (int c = 0; c < 256; c += quick ? 7 : 1) {
				char name[16];
				memcpy(name, names[w], len);
				name[j] = (char)c;
				buf page = {NULL, 0, 0};
				for (int f = 0; f < 2; f++) { /* after three plain tags: plain_tag, then plain_fast */
					put_str(&page, f ? "<i><i><i><i><i><i><" : "<p><");
					put(&page, name, len);
					put_str(&page, (c & 1) ? " class=\"c\">" : ">");
					put_str(&page, "<form method=post action=/s><button>go</button></form>\n");
				}
				check_page(&page, p, n, (c & 2) ? CSRF_INJECT_OPT_RAISE_REFERRER : 0, names[w],
				           (int)(j * 256) + c);
				free(page.p);
			}
		}
	}
	assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_BEST), 0);
}

/* Tags at every place against the block grid and the chunk's end, where
 * the reading of the masks changes hands (inject.c, plain_fast): a '<' in
 * a block's last bytes, with its end tag's '/' or its name's end in the
 * next block; a tag whose '>' is 64 bytes after its '<', holding a '<'
 * (no tag there); tags the chunk ends in before their '>', nothing read
 * past the chunk (each chunk flush against a guard page). Each page on
 * every path against the reference, at every address alignment, shifted
 * 0..63 bytes against the block grid, and split. */
static void test_block_edges(void **state)
{
	(void)state;
	int p[INJ_SCAN_PATHS], n = paths_here(p);
	char filler[160];
	memset(filler, 'z', sizeof filler);
	for (int r = 0; r < 6; r++) {
		buf page = {NULL, 0, 0};
		/* three plain tags first: after a tag that matters (and at the
		 * start) plain_tag takes the next three, plain_fast those after */
		put_str(&page, "<p><i><i><i>");
		switch (r) {
		case 0: /* a form's end tag, a '<' in its values, a long name */
			put_str(&page, "<form method=post action=/s><button>go</button><i><i><i></form><p>x</p>");
			put_str(&page, "<form method=post><i><i><i><b title=\"a<b\">y</b></form><strong>z</strong>");
			break;
		case 1: /* 64 bytes from '<' to '>', a "<form" inside */
			put_str(&page, "<a"), put(&page, filler, 45), put_str(&page, "<form method=post>");
			put_str(&page, "<i>x</i><form method=post><button>g</button></form>");
			break;
		case 2: /* the same with a quoted value and a blank */
			put_str(&page, "<a t=\""), put(&page, filler, 38), put_str(&page, "\" <form method=post>");
			put_str(&page, "<form method=post><button>g</button></form>");
			break;
		default: /* the chunk ends in a tag: 60, 72, 100 bytes after its '<' */
			put_str(&page, "<form method=post><button>g</button></form><i><i><i><a");
			put(&page, filler, (size_t)(r == 3 ? 58 : r == 4 ? 70 : 98));
			break;
		}
		check_alignments(&page, p, n);
		check_splits(&page, p, n, quick ? 7 : 1);
		free(page.p);
	}
	assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_BEST), 0);
}

/* A page of shapes[from, to), reps times over: around[0] first, then
 * each shape between around[1] and around[2], then around[3] (a value
 * the chunk ends in). On every path against the reference: split at
 * every stride-th point and byte by byte, and with align at every
 * address alignment and shifted 0..63 bytes against the block grid. */
static void check_shapes(const char *const *shapes, size_t from, size_t to, size_t reps, const char *const *around,
                         int align, size_t stride)
{
	int p[INJ_SCAN_PATHS], n = paths_here(p);
	buf page = {NULL, 0, 0};
	put_str(&page, around[0]);
	for (size_t k = 0; k < reps; k++)
		for (size_t j = from; j < to; j++) {
			put_str(&page, around[1]), put_str(&page, shapes[j]);
			put_str(&page, around[2]);
		}
	put_str(&page, around[3]);
	if (align)
		check_alignments(&page, p, n);
	check_splits(&page, p, n, stride);
	free(page.p);
}

/* The quoted values plain_fast and plain_across read from the masks, and
 * the shapes they hand back to plain_tag (another quote in a value, a
 * '>' in it, blanks around '=', a quote outside a value, markup that is
 * no tag), each after plain tags (plain_fast reads it) and before a form
 * (a misread tag end moves the form's token): at every place against the
 * block grid (check_alignments shifts the page by 0..63 bytes), so a
 * value's quotes and the tag's '>' fall on each side of a block's end,
 * and once more repeated past the scan window's end (32 blocks). */
static void test_quoted_edges(void **state)
{
	(void)state;
	/* F: a form a misread end moves in or out of a value */
#define F "<form method=post>"
	static const char *const shapes[] = {
	    "<a href=\"x>" F "\">",
	    "<a href='x>" F "'>",
	    "<a title=\"it's>" F "\">",
	    "<a title='say \"hi>" F "\"'>",
	    "<a b=\"x\" c='y>" F "'>",
	    "<a b=\"x\"c=\"y>" F "\">",
	    "<a b = \"x>" F "\">",
	    "<a b= 'x>" F "'>",
	    "<a =\"x>" F "\">",
	    "<a b\"c>" F "\">",
	    "<a b \"x>" F "\">",
	    "<a b=x\"y>" F "\">",
	    "<a/ b=\"x>" F "\">",
	    "<a/b=\"x>" F "\">",
	    "</a b=\"x>" F "\">",
	    "<!-- \"x> " F " -->",
	    "<!doctype \"x>" F "\">",
	    "<?x \"a>" F "?>",
	    "</>\"<a b='>" F "'>",
	    "<3 \"x>" F "\">",
	    "< a b=\"x>" F "\">",
	    "<a b=\"" F "\">",
	    "<a b=\"x\" " F,
	    "<a\tb=\"x>" F "\">",
	    "<a\fb=\"x>" F "\">",
	    "<a\x01b=\"x>" F "\">",
	    "<a b=\"\">" F,
	    "<a b=''>" F,
	    "<a b=\"x\"/>" F,
	    "<a b=\"x\" >" F,
	    "<a b=\">\"\">" F,
	    "<FORM method=post>",
	    "<a b=\"x\" c>" F,
	    "<span class=\"x\"><i>" F,
	    "<a b==\"x>" F "\">",
	    "<a b=\"x\"'>" F "'>",
	};
#undef F
	size_t ns = sizeof shapes / sizeof shapes[0], group = 4;
	for (size_t r = 0; r < ns + group; r += group) {
		/* four shapes a page; then every shape, over and over, past the
		 * window's end (2,048 bytes) at places each rep moves */
		int all = r >= ns;
		size_t reps = all ? (quick ? 1 : 4) : 1, from = all ? 0 : r,
		       to = all || r + group > ns ? ns : r + group;
		/* a small page split at every byte (each split moves the block
		 * grid); the long one shifted 0..63 bytes against it */
		size_t stride = all ? 97 : quick ? 7 : 1;
		check_shapes(shapes, from, to, reps,
		             (const char *const[]){"<p><i><i><i><b>t</b><i>", "<i><em>x</em>",
		                                   "<form method=post><button>g</button></form><p>y</p>\">'>",
		                                   "<a b=\"x" /* a value the chunk ends in */},
		             all, stride);
	}
	assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_BEST), 0);
}

/* The usual attributes of the tags whose attributes matter (form, input,
 * button), which the paths that skip plain tags read through the masks
 * (inject.c, before_attr_step: attrs_masked, then the '>' right after
 * the last value's quote), and every way out of that shape into the
 * states: a value the chunk or the 64 bytes end in, '/' or a blank or
 * another byte right after a quote, an unquoted value, a blank around
 * '=', '=' first, a long value, letter case, references, a repeated
 * attribute (the first wins), formaction and formmethod. Each between
 * POST forms, on every path against the reference (which reads every tag
 * through the states): at every address alignment, shifted 0..63 bytes
 * against the block grid, and split at every byte. Taking the byte after
 * a quote as a blank (reading "post"action= as "post" ction=) fails it:
 * the form's action elsewhere unseen, it gets the token. */
static void test_usual_attrs(void **state)
{
	(void)state;
	static const char *const shapes[] = {
	    "<form method=\"post\" action=\"/submit\"><input name=\"story\" value=\"1\"><button>vote</button></form>",
	    "<form method=\"post\"action=\"https://evil.example/\"><input name=\"a\" value=\"b\"></form>",
	    "<form method=\"post\" action=\"/s\"/><input name=\"a\"/></form>",
	    "<form method=\"post\" action = \"//evil.example/\"><input name=\"a\"></form>",
	    "<form method=\"post\" action=//evil.example/ ><input name=\"a\"></form>",
	    "<form method=\"post\"  action=\"//evil.example/\"><input name=\"a\"></form>",
	    "<form =\"x\" method=\"post\" action=\"/ok\"><input name=\"a\"></form>",
	    ("<form method=\"post\" action=\"/a-long-path/that-goes/past-the-sixty-four-bytes/of-the-masks/x\">"
	     "<input name=\"a\" value=\"a long value past the sixty-four bytes of the masks: it ends here\"></form>"),
	    "<FORM METHOD=\"POST\" ACTION=\"HTTPS://EVIL.EXAMPLE/\"><INPUT NAME=\"a\"></FORM>",
	    "<form method=\"p&#111;st\" action=\"&#x2f;/evil.example/\"><input name=\"a\"></form>",
	    "<form method=\"get\" method=\"post\" action=\"/x\"><input name=\"a\"></form>",
	    "<form method=\"post\" action=\"/x\" action=\"//evil.example/\"><input name=\"a\"></form>",
	    "<form method='post' action='/x'><input name='a' value='it\"s'></form>",
	    "<form method=\"post\" action=\"/x\"><button formaction=\"//evil.example/\">g</button></form>",
	    "<form method=\"post\" action=\"/x\"><input type=\"submit\" formmethod=\"get\"></form>",
	    "<form method=\"post\" action=\"/x\"><input form=\"f\" type=\"image\" formaction=\"/y\"></form>",
	    "<form method=\"post\" action=\"/x\"><button type=\"button\" formaction=\"//e.example/\">b</button></form>",
	    "<form method=\"post\" action=\"/x\" id=\"f\"><input name=\"a\" value=\"x>y\"></form>",
	    "<form method=\"post\" action=\"/x\"\t><input\nname=\"a\"\fvalue=\"b\"\r></form>",
	    "<form method=\"post\" action=\"/x\" novalidate><input name=\"a\" required></form>",
	    "<form method=\"\" action=\"\"><input name=\"\" value=\"\"></form>",
	    "<form method=\"post\" action=\"/x\"x=\"y\"/z=\"w\"><input name=\"a\"=\"b\"></form>",
	};
	size_t ns = sizeof shapes / sizeof shapes[0];
	for (size_t r = 0; r <= ns; r++) {
		/* one shape a page, split at every byte; then every shape, twice
		 * over, at every alignment and shift */
		int all = r == ns;
		size_t stride = all ? 13 : quick ? 3 : 1;
		check_shapes(shapes, all ? 0 : r, all ? ns : r + 1, all ? 2 : 1,
		             (const char *const[]){"<p>a <b>story</b></p>\n", "",
		                                   "\n<form method=\"post\" action=\"/v\"><button>v</button></form>\n",
		                                   "<form method=\"post\" action=\"/x" /* a value the chunk ends in */},
		             all, stride);
	}
	assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_BEST), 0);
}

/* Template contents, whose first start tag picks their insertion mode
 * (inject_tree.c, tpl_start): table parts in them are read, not skipped
 * (plain_tag's masks are indexed by tables or templates open), and while
 * no start tag has picked it no tag is plain (tpl_fresh: plain_tag and
 * plain_fast read none), so that a plain tag before a <col> counts; a
 * <col> first puts them "in column group" (a <title>, <script>, <svg>,
 * <select> there ignored), a <col> after a plain tag, a row, a cell, a
 * caption, a colgroup or a table is ignored, one after a <title> stops
 * the model. Each shape among plain tags (plain_tag, then plain_fast
 * read them) between POST forms, a form="" button sending elsewhere
 * after it: on every path against the reference, at every address
 * alignment, shifted 0..63 bytes against the block grid, split at every
 * byte; and the reference's count and status as the model says. */
static void test_template_shapes(void **state)
{
	(void)state;
#define FI "<form id=f method=post action=/f><input name=a><button>go</button></form>"
#define FG "<form method=post action=/g><button>g</button></form>"
#define BE "<button form=f formaction=\"https://evil.example/\">"
#define II "<i><b><i><em>"
	static const struct {
		const char *page;
		/* the reference's "|count|status": 37444 TEMPLATE, LATE_BASE,
		 * STOPPED, LATE_OWNER, LATE_BUTTON; 4096 LATE_OWNER; 299584
		 * FRAMESET and the four */
		const char *tail;
	} shapes[] = {
	    {FI II "<template><col>" II "<title></template>" II BE FG, "|2|4096|"},
	    /* an <i> first: the <col> ignored, the <title> raw text to the end */
	    {FI II "<template>" II "<col>" II "<title></template>" II BE FG, "|1|0|"},
	    {FI II "<template><tr>" II "<td>" II "<col><title>x</title></td></template>" II BE FG, "|2|4096|"},
	    {FI II "<template><caption>" II "<COL/><td></caption></template>" II FG, "|2|0|"},
	    {FI II "<template><script></script><template></template>" II "<col>" II "</template>" II FG, "|2|0|"},
	    {FI II "<template><script></script><template></template><col>" II "<title></template>" II FG, "|2|0|"},
	    {FI II "<template><colgroup><col><col></colgroup></template>" II FG "<template><tbody><tr><th>" II
	           "</th></tr></tbody><col></template>" II FG,
	     "|3|0|"},
	    /* a <col> in "in row" (a <td> first) in a table: Firefox pops the
	     * page's <tr> and the template with it; stopped */
	    {FI "<table><tr><td>" II "<template><td>" II "<col></template></td></tr></table>" II FG, "|1|37444|"},
	    {FI "<table><tr><td>" II "<template>" II "<col></template></td></tr></table>" II FG, "|2|0|"},
	    {FI II "<template><td><template></template>" II "<col>" II "</template>" II FG, "|2|0|"},
	    {FI II "<template><TD><template><tr></template><col>" II "</template>" II FG, "|2|0|"},
	    {FI II "<template><table><colgroup><col></table>" II "</template>" II FG, "|2|0|"},
	    {FI II "<template><link><meta name=referrer content=no-referrer><col><title></template>" II FG, "|2|0|"},
	    {FI II "<template><template><template><td></template></template><col><title></template>" II FG, "|2|0|"},
	    {FI II "<template>" II "<col\t" II ">" II "</template>" II FG, "|2|0|"},
	    {FI II "<template><col\t" II ">" II "<title></template>" II FG, "|2|0|"},
	    /* a plain tag first, with attributes: the <col> ignored */
	    {FI II "<template><span class=\"a\">" II "<col><title>" II "</template></title></template>" II FG, "|2|0|"},
	    {FI II "<template><a href=\"/x\" title='y'><col>" II "<title></title></template>" II FG, "|2|0|"},
	    {FI II "<template><button>" II "<col><title></template></title></template>" II FG, "|2|0|"},
	    {FI II "<template><input name=b><col><title></template></title></template>" II FG, "|2|0|"},
	    /* in column group: no raw text, no svg, no select */
	    {FI II "<template><col><script>" II "<svg><select><textarea><plaintext></template>" II BE FG, "|2|4096|"},
	    {FI II "<template><col>" II "<template><title>x</title>" II "</template><title></template>" II FG, "|2|0|"},
	    /* Alpine.js's columns */
	    {FI "<table><colgroup><template x-for=\"c in cols\"><col :class=\"c\"></template></colgroup><tr><td>" II FG
	        "</td></tr></table>" II FG,
	     "|3|0|"},
	    /* a <col> after a tag browsers read by different rules: stopped */
	    {FI II "<template><title>t</title><col>" II "</template>" II FG, "|1|37444|"},
	    {FI II "<template><basefont>" II "</template>" II FG "<template><BGSOUND><col></template>" II FG,
	     "|2|37444|"},
	    /* a frameset in template contents is dropped (and picks their
	     * mode); one outside them stops the model */
	    {FI II "<template><frameset>" II "<col></template>" II FG, "|2|0|"},
	    {FI II "<FrameSet\trows=\"*\">" II "<title>" II FG, "|1|299584|"},
	};
#undef FI
#undef FG
#undef BE
#undef II
	int p[INJ_SCAN_PATHS], n = paths_here(p);
	for (size_t r = 0; r < sizeof shapes / sizeof shapes[0]; r++) {
		buf page = {NULL, 0, 0};
		put_str(&page, shapes[r].page);
		assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_SCALAR), 0);
		buf ref = feed(page.p, page.n, NULL, 0, 0, 0);
		put(&ref, "|", 1);
		put(&ref, "", 1);
		if (strstr(ref.p, shapes[r].tail) == NULL)
			fail_msg("template shape %zu: %s, want %s", r, strrchr(ref.p, 0x3c), shapes[r].tail);
		free(ref.p);
		check_alignments(&page, p, n);
		check_splits(&page, p, n, quick ? 7 : 1);
		free(page.p);
	}
	assert_int_equal(csrfi_inject_scan_force(INJ_SCAN_BEST), 0);
}

int main(int argc, char **argv)
{
	quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_paths_present), cmocka_unit_test(test_masks),
	    cmocka_unit_test(test_depth_count),   cmocka_unit_test(test_neighbours),
	    cmocka_unit_test(test_every_piece),   cmocka_unit_test(test_form_page),
	    cmocka_unit_test(test_random_pages),  cmocka_unit_test(test_tag_soup),
	    cmocka_unit_test(test_block_edges),   cmocka_unit_test(test_quoted_edges),
	    cmocka_unit_test(test_name_bytes),    cmocka_unit_test(test_template_shapes),
	    cmocka_unit_test(test_usual_attrs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
