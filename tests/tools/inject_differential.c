/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * inject_differential.c - two builds of the injector in one process,
 * fed the same bytes the same way, their outputs compared byte for byte.
 *
 * Linked by inject-differential.sh: the working tree's library as it is
 * (csrf_*, csrfi_*) and a given revision's with every global symbol
 * renamed old_* (objcopy --redefine-syms). Every scanner path both builds
 * run here is forced in turn (csrfi_inject_scan_force); each input goes in
 * whole, a byte at a time, split in two at every offset (every tenth
 * offset and a sample past 4 KB), in chunks of random sizes, and behind
 * 0-69 bytes of text (its tags at every place of the 64-byte block grid),
 * from buffers at every alignment. Compared: the bytes, which of them are
 * inserted, every call's result, csrf_inject_status and the count of
 * forms injected. The first difference is printed (input, path, the
 * feeding) and the exit status is 1.
 *
 * A form read deep in the tree gets the injector's random id (docs/
 * architecture.md, "The tree depth cap"): id="csrf-" and 16 characters
 * after "<form", form="csrf-..." on its field, an insertion counted more.
 * Both outputs are compared with those taken out (the count too), so a
 * revision without them compares; and the working tree's output, the 16
 * characters masked, must be the same on every path and feeding of an
 * input (its first run's), so that no path counts the tags differently.
 * So must its CSRF_INJECT_DEEP bit, which is not compared with the
 * revision's. A deep form with an id of its own after a ghost has its
 * field name that id (form="" taken out too), or, where that is not
 * safe, no token (CSRF_INJECT_DEEP): such a run is not compared with the
 * revision, which may have given the token.
 *
 * Usage: inject-differential [-s SECONDS] [-r ROUNDS] [-v] FILE...
 * The first round is every file and the generated tag shapes, every
 * feeding above; later rounds, until SECONDS (default 60) or ROUNDS have
 * passed, random chunkings, shifts and mutations of the same inputs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "csrf.h"
#include "inject_shared.h"

/* The other build's calls, renamed. */
size_t old_csrf_inject_size(void);
csrf_reason old_csrf_inject_init(void *mem, size_t mem_len, const char *self_origin, size_t origin_len,
                                 const char *field, size_t field_len, const char *token, size_t token_len,
                                 csrf_inject **out);
csrf_reason old_csrf_inject_options(csrf_inject *inj, unsigned options);
csrf_reason old_csrf_inject_feed(csrf_inject *inj, const char *chunk, size_t len, csrf_emit_fn emit, void *ud);
csrf_reason old_csrf_inject_finish(csrf_inject *inj, csrf_emit_fn emit, void *ud, unsigned *injected);
unsigned old_csrf_inject_status(const csrf_inject *inj);
int old_csrfi_inject_scan_force(int path);

struct side {
	size_t (*size)(void);
	csrf_reason (*init)(void *, size_t, const char *, size_t, const char *, size_t, const char *, size_t,
	                    csrf_inject **);
	csrf_reason (*options)(csrf_inject *, unsigned);
	csrf_reason (*feed)(csrf_inject *, const char *, size_t, csrf_emit_fn, void *);
	csrf_reason (*finish)(csrf_inject *, csrf_emit_fn, void *, unsigned *);
	unsigned (*status)(const csrf_inject *);
	int (*force)(int);
	void *mem;
};

static struct side sides[2] = {
    {old_csrf_inject_size, old_csrf_inject_init, old_csrf_inject_options, old_csrf_inject_feed, old_csrf_inject_finish,
     old_csrf_inject_status, old_csrfi_inject_scan_force, NULL},
    {csrf_inject_size, csrf_inject_init, csrf_inject_options, csrf_inject_feed, csrf_inject_finish, csrf_inject_status,
     csrfi_inject_scan_force, NULL},
};

/* One run's output: the bytes, a parallel byte per byte 'i' (inserted) or
 * 'p' (the page's), and a log of the results. */
struct out {
	char *b, *kind;
	size_t n, cap;
	unsigned log[64];
	size_t log_n;
	unsigned status; /* csrf_inject_status at the end, CSRF_INJECT_DEEP in it */
};

static void out_put(struct out *o, const char *p, size_t n, char kind)
{
	if (o->n + n > o->cap) {
		size_t cap = o->cap ? o->cap : 1 << 16;
		while (cap < o->n + n)
			cap *= 2;
		o->b = realloc(o->b, cap);
		o->kind = realloc(o->kind, cap);
		if (!o->b || !o->kind) {
			perror("realloc");
			exit(2);
		}
		o->cap = cap;
	}
	memcpy(o->b + o->n, p, n);
	memset(o->kind + o->n, kind, n);
	o->n += n;
}

static int emit(void *ud, const char *p, size_t n, int inserted)
{
	out_put(ud, p, n, inserted ? 'i' : 'p');
	return 0;
}

/* The results in order; past 63 (a byte at a time) folded into the last. */
static void out_log(struct out *o, unsigned v)
{
	/* the 64th is written first, then folded into: nothing of a run
	 * before (a run not compared may leave the sides' apart) */
	if (o->log_n < 64)
		o->log[o->log_n++] = v;
	else
		o->log[63] = o->log[63] * 31 + v;
}

/* A feeding: the chunk ends in the input (ascending, the last = len). */
struct feeding {
	const char *name;
	size_t *cuts, ncuts;
	size_t align;
	unsigned options;
};

static char *arena;
static size_t arena_cap;

static void run(struct side *s, const char *in, size_t len, const struct feeding *f, struct out *o)
{
	csrf_inject *inj;
	o->n = 0;
	o->log_n = 0;
	if (s->init(s->mem, s->size(), "https://example.test", 20, "csrf_field", 10, "tok-VALUE_123", 13, &inj) !=
	    CSRF_OK) {
		fprintf(stderr, "init failed\n");
		exit(2);
	}
	if (f->options)
		out_log(o, s->options(inj, f->options));
	size_t at = 0;
	for (size_t k = 0; k < f->ncuts; k++) {
		size_t n = f->cuts[k] - at;
		/* each chunk copied to the alignment asked, and overwritten
		 * after its feed (nothing may be read from it later) */
		char *p = arena + f->align;
		memcpy(p, in + at, n);
		out_log(o, s->feed(inj, p, n, emit, o));
		memset(p, 0xa5, n);
		at = f->cuts[k];
	}
	unsigned injected = 0;
	/* CSRF_INJECT_DEEP: the working tree's report of a form with an id
	 * of its own deep in the tree after a ghost (a revision without it
	 * compares), kept apart */
	o->status = s->status(inj);
	out_log(o, o->status & ~(unsigned)CSRF_INJECT_DEEP);
	out_log(o, s->finish(inj, emit, o, &injected));
	out_log(o, injected);
}

static const char *path_names[] = {"scalar", "portable", "sse2", "avx2", "neon"};
static long compared, differences;
static int verbose;

static void show(const char *what, const char *b, size_t n, size_t at)
{
	size_t from = at > 40 ? at - 40 : 0, to = at + 40 < n ? at + 40 : n;
	fprintf(stderr, "  %s @%zu: \"", what, at);
	for (size_t i = from; i < to; i++)
		fputc(b[i] >= 0x20 && b[i] < 0x7f ? b[i] : '.', stderr);
	fprintf(stderr, "\"\n");
}

/* 16 base64url characters at p (or masked: '#'). */
static int id_chars(const char *p)
{
	for (int k = 0; k < 16; k++) {
		unsigned char c = (unsigned char)p[k];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
		      c == '_' || c == '#'))
			return 0;
	}
	return 1;
}

/* The injector's ids in o's inserted bytes: masked ('#'), or taken out
 * (the id piece, the field's form="", and the count's share); returns
 * how many ids there were. */
/* The length of form="" naming a form's own id (simple: 1 to 64 of
 * [A-Za-z0-9_.:-]) on a field at o->b[r], inserted; 0 when none is
 * there. A revision before it gave such a form's field none. */
static size_t own_form(const struct out *o, size_t r)
{
	static const char pre[] = " form=\"";
	size_t k = r + sizeof pre - 1;
	if (o->n - r < sizeof pre + 1 || memcmp(o->b + r, pre, sizeof pre - 1) != 0)
		return 0;
	for (; k < o->n && k - r < sizeof pre - 1 + 64 && o->kind[k] == 'i'; k++) {
		char c = o->b[k];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '.' || c == ':' || c == '-'))
			break;
	}
	return k > r + sizeof pre - 1 && k < o->n && o->b[k] == '"' && o->kind[k] == 'i' ? k + 1 - r : 0;
}

static size_t ids_out(struct out *o, int remove)
{
	static const char id[] = " id=\"csrf-", form[] = " form=\"csrf-";
	size_t w = 0, ids = 0;
	for (size_t r = 0; r < o->n;) {
		size_t l = 0;
		if (o->kind[r] == 'i') {
			if (o->n - r >= sizeof id + 16 && memcmp(o->b + r, id, sizeof id - 1) == 0 &&
			    id_chars(o->b + r + sizeof id - 1) && o->b[r + sizeof id - 1 + 16] == '"')
				l = sizeof id - 1 + 17, ids++;
			else if (o->n - r >= sizeof form + 16 && memcmp(o->b + r, form, sizeof form - 1) == 0 &&
			         id_chars(o->b + r + sizeof form - 1) && o->b[r + sizeof form - 1 + 16] == '"')
				l = sizeof form - 1 + 17;
			else if (remove)
				l = own_form(o, r);
		}
		if (l && remove) {
			r += l;
			continue;
		}
		if (l)
			memset(o->b + r + l - 17, '#', 16);
		size_t m = l ? l : 1;
		memmove(o->b + w, o->b + r, m);
		memmove(o->kind + w, o->kind + r, m);
		w += m;
		r += m;
	}
	o->n = w;
	if (remove && o->log_n) /* the count is the last result (folded in last past 63) */
		o->log[o->log_n - 1] -= (unsigned)ids;
	return ids;
}

static long pinned_runs, deep_runs, deep_refused;
static char pinned_names[10][96];
static size_t pinned_named;

/* The working tree's masked output of the input being compared, its first
 * run: every later run of the same bytes and options must match it. */
static struct out ref;
static char *ref_in;
static size_t ref_len;
static unsigned ref_options;

static void check_same_masked(const char *name, const char *in, size_t len, const struct feeding *f, int path,
                              const struct out *o)
{
	if (!ref_in || ref_len != len || ref_options != f->options || memcmp(ref_in, in, len) != 0) {
		free(ref_in);
		ref_in = malloc(len + 1);
		memcpy(ref_in, in, len);
		ref_len = len;
		ref_options = f->options;
		ref.n = 0;
		out_put(&ref, o->b, o->n, 'p');
		memcpy(ref.kind, o->kind, o->n);
		ref.status = o->status;
		return;
	}
	/* the bytes and which are inserted: the results differ with the feeding */
	if (ref.n == o->n && memcmp(ref.b, o->b, o->n) == 0 && memcmp(ref.kind, o->kind, o->n) == 0 &&
	    (ref.status & CSRF_INJECT_DEEP) == (o->status & CSRF_INJECT_DEEP))
		return;
	differences++;
	fprintf(stderr,
	        "DIFFERENCE in the working tree: %s, path %s, fed %s: not its first run's output (ids masked)\n", name,
	        path_names[path], f->name);
	if (differences >= 5)
		exit(1);
}

static void compare(const char *name, const char *in, size_t len, const struct feeding *f, int path)
{
	static struct out o[2];
	for (int k = 0; k < 2; k++)
		run(&sides[k], in, len, f, &o[k]);
	compared++;
	/* the working tree's ids: the same masked on every path and feeding,
	 * then taken out of both sides */
	ids_out(&o[1], 0);
	check_same_masked(name, in, len, f, path, &o[1]);
	if (o[1].status & CSRF_INJECT_DEEP)
		deep_runs++;
	if (ids_out(&o[1], 1)) {
		if (pinned_runs++ == 0 || pinned_named < 10) {
			int seen = 0;
			for (size_t k = 0; k < pinned_named; k++)
				seen |= strcmp(pinned_names[k], name) == 0;
			if (!seen && pinned_named < 10)
				snprintf(pinned_names[pinned_named++], sizeof pinned_names[0], "%s", name);
		}
	}
	ids_out(&o[0], 1);
	if (o[0].n == o[1].n && memcmp(o[0].b, o[1].b, o[0].n) == 0 && memcmp(o[0].kind, o[1].kind, o[0].n) == 0 &&
	    o[0].log_n == o[1].log_n && memcmp(o[0].log, o[1].log, o[0].log_n * sizeof o[0].log[0]) == 0)
		return;
	/* a deep form the working tree could not pin gets no token (a
	 * revision before it gave one with an id of its own the token) */
	if (o[1].status & CSRF_INJECT_DEEP) {
		deep_refused++;
		return;
	}
	differences++;
	fprintf(stderr,
	        "DIFFERENCE: %s (%zu bytes), path %s, fed %s (%zu chunks, first cut %zu), align %zu, options %u\n",
	        name, len, path_names[path], f->name, f->ncuts, f->ncuts ? f->cuts[0] : 0, f->align, f->options);
	size_t i = 0;
	while (i < o[0].n && i < o[1].n && o[0].b[i] == o[1].b[i] && o[0].kind[i] == o[1].kind[i])
		i++;
	if (i < o[0].n || i < o[1].n) {
		fprintf(stderr, "  output lengths old %zu new %zu, first difference at %zu\n", o[0].n, o[1].n, i);
		show("old", o[0].b, o[0].n, i);
		show("new", o[1].b, o[1].n, i);
	} else {
		fprintf(stderr, "  same bytes; results/status differ:");
		for (size_t k = 0; k < o[0].log_n || k < o[1].log_n; k++) {
			unsigned a = k < o[0].log_n ? o[0].log[k] : 0, b = k < o[1].log_n ? o[1].log[k] : 0;
			if (a != b)
				fprintf(stderr, " [%zu] old %u new %u", k, a, b);
		}
		fprintf(stderr, "\n");
	}
	if (differences >= 5) {
		fprintf(stderr, "stopping after 5 differences (%ld compared)\n", compared);
		exit(1);
	}
}

/* splitmix64: the same inputs and feedings on every run */
static uint64_t rng;
static uint64_t rnd(void)
{
	uint64_t z = rng += UINT64_C(0x9e3779b97f4a7c15);
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static size_t *cuts;
static size_t cuts_cap;
static void cuts_need(size_t n)
{
	if (n > cuts_cap) {
		cuts_cap = n * 2;
		cuts = realloc(cuts, cuts_cap * sizeof *cuts);
		if (!cuts) {
			perror("realloc");
			exit(2);
		}
	}
}

/* Every path both builds run, this feeding. */
static void all_paths(const char *name, const char *in, size_t len, struct feeding *f)
{
	for (int p = INJ_SCAN_SCALAR; p < INJ_SCAN_PATHS; p++) {
		if (sides[0].force(p) != 0 || sides[1].force(p) != 0)
			continue;
		compare(name, in, len, f, p);
	}
}

static void fed_whole(const char *name, const char *in, size_t len, size_t align, unsigned options)
{
	cuts_need(1);
	cuts[0] = len;
	struct feeding f = {"whole", cuts, 1, align, options};
	all_paths(name, in, len, &f);
}

static void fed_bytes(const char *name, const char *in, size_t len)
{
	cuts_need(len + 1);
	for (size_t i = 0; i < len; i++)
		cuts[i] = i + 1;
	struct feeding f = {"byte by byte", cuts, len, 0, 0};
	all_paths(name, in, len, &f);
}

static void fed_split(const char *name, const char *in, size_t len, size_t at, size_t align)
{
	cuts_need(2);
	cuts[0] = at;
	cuts[1] = len;
	struct feeding f = {"split in two", cuts, at == len ? 1 : 2, align, 0};
	if (at == len)
		cuts[0] = len;
	all_paths(name, in, len, &f);
}

static void fed_random(const char *name, const char *in, size_t len)
{
	size_t n = 0, at = 0, most = 1 + rnd() % (rnd() % 2 ? 97 : 9000);
	cuts_need(len + 1);
	while (at < len) {
		at += 1 + rnd() % most;
		if (at > len)
			at = len;
		cuts[n++] = at;
	}
	if (n == 0)
		cuts[n++] = 0;
	struct feeding f = {"random chunks", cuts, n, rnd() % 64, rnd() % 4 == 0 ? CSRF_INJECT_OPT_RAISE_REFERRER : 0};
	all_paths(name, in, len, &f);
}

/* The input behind `shift` bytes of text. */
static char *shifted(const char *in, size_t len, size_t shift, size_t *n)
{
	char *b = malloc(len + shift + 1);
	if (!b)
		exit(2);
	for (size_t i = 0; i < shift; i++)
		b[i] = "abcdefg "[i % 8];
	memcpy(b + shift, in, len);
	*n = len + shift;
	return b;
}

struct input {
	char *name;
	char *b;
	size_t n;
};
static struct input *inputs;
static size_t ninputs;

static void add_input(const char *name, const char *b, size_t n)
{
	inputs = realloc(inputs, (ninputs + 1) * sizeof *inputs);
	if (!inputs)
		exit(2);
	inputs[ninputs].name = strdup(name);
	inputs[ninputs].b = malloc(n + 1);
	memcpy(inputs[ninputs].b, b, n);
	inputs[ninputs].n = n;
	ninputs++;
}

static int slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	size_t cap = 1 << 16, n = 0, r;
	char *b = malloc(cap);
	while (b && (r = fread(b + n, 1, cap - n, f)) > 0)
		if ((n += r) == cap)
			b = realloc(b, cap *= 2);
	fclose(f);
	if (!b)
		return -1;
	add_input(path, b, n);
	free(b);
	return 0;
}

/* Small tag shapes around a form: each shape in three places (before the
 * form, inside it, between its fields), each page one shape. */
static void gen_shapes(void)
{
	static const char *names[] = {"p", "a", "b", "br", "div", "span", "strong", "code", "em", "html", "body",
	                              "form", "input", "button", "select", "svg", "table", "td", "template", "title",
	                              "script", "style", "noscript", "base", "meta", "plaintext", "textarea", "math",
	                              "frameset", "FoRm", "inPut", "tr", "th", "pre", "li", "x", "formx", "i",
	                              /* 16 bytes or more: the length mod 16 is that of a name that matters */
	                              "foabcdefghijklmnopqr", "inabcdefghijklmnopqrs", "tdabcdefghijklmnop",
	                              "FOabcdefghijklmnopqrstuvwxyzabcdefghij"};
	static const char *attrs[] = {"",
	                              " a",
	                              " a=b",
	                              " a=\"b\"",
	                              " a='b'",
	                              " a=\"b>c\"",
	                              " a='b>c'",
	                              " a=\"b'c\"",
	                              " a = \"b\"",
	                              " a =\"b\"",
	                              " a= 'b'",
	                              "/",
	                              " /",
	                              " a=\"b\" c",
	                              " a=\"b\"c=\"d\"",
	                              "\ta=\"b\"",
	                              "  a=\"b\"",
	                              " a\"=\"b\"",
	                              " \"a\"",
	                              " a=b>c",
	                              " method=post",
	                              " method=\"get\"",
	                              " type=submit formaction=\"//evil.test/\"",
	                              " formmethod=get",
	                              " action=\"https://other.test/\" method=post",
	                              " name=\"referrer\" content=\"no-referrer\"",
	                              " href=\"https://other.test/\"",
	                              " id=f1",
	                              " form=f1 formmethod=get",
	                              " a=\"<form method=post>\"",
	                              " a=\"b\" a=\"c\""};
	static const char *ends[] = {">", "/>", "", " >", "\n>"};
	char page[1024];
	for (size_t a = 0; a < sizeof attrs / sizeof *attrs; a++)
		for (size_t e = 0; e < sizeof ends / sizeof *ends; e++) {
			size_t n = 0;
			/* one page for every name with this attribute shape */
			for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
				n = (size_t)snprintf(page, sizeof page,
				                     "<p>x<%s%s%s y <form method=post action=/s><%s%s%s<input name=q>"
				                     "<%s%s%s</%s><button>go</button></form><b>z</b><%s%s%s",
				                     names[k], attrs[a], ends[e], names[k], attrs[a], ends[e], names[k],
				                     attrs[a], ends[e], names[k], names[k], attrs[a], ends[e]);
				char nm[96];
				snprintf(nm, sizeof nm, "shape <%s|%zu|%zu>", names[k], a, e);
				add_input(nm, page, n < sizeof page ? n : sizeof page - 1);
			}
		}
		/* end tags, markup declarations, NUL and ESC: concatenated by length */
#define ODD(s)                                                                                                         \
	{                                                                                                              \
		s, sizeof s - 1                                                                                        \
	}
	static const struct {
		const char *s;
		size_t n;
	} odd[] = {ODD("</p>"),
	           ODD("</>"),
	           ODD("</ form>"),
	           ODD("</form >"),
	           ODD("</form a=b>"),
	           ODD("<!-- x -->"),
	           ODD("<!x>"),
	           ODD("<?x>"),
	           ODD("<!DOCTYPE html>"),
	           ODD("<![CDATA[x]]>"),
	           ODD("< p>"),
	           ODD("<1>"),
	           ODD("</1>"),
	           ODD("<\x00p>"),
	           ODD("<p\x00>"),
	           ODD("</FORM>"),
	           ODD("</table>"),
	           ODD("</select>"),
	           ODD("</template>"),
	           ODD("\x1b"),
	           ODD("&amp;"),
	           ODD("<p a=\"\x00\">"),
	           ODD("<form\x00 method=post>")};
#undef ODD
	static const char *around[] = {"<div>",   "<form method=post>",    "<input>",
	                               "</form>", "<form method=post><i>", "</i></form>"};
	for (size_t k = 0; k < sizeof odd / sizeof *odd; k++) {
		size_t n = 0;
		for (size_t a = 0; a < sizeof around / sizeof *around; a++) {
			size_t m = strlen(around[a]);
			memcpy(page + n, around[a], m);
			memcpy(page + n + m, odd[k].s, odd[k].n);
			n += m + odd[k].n;
		}
		char nm[64];
		snprintf(nm, sizeof nm, "odd %zu", k);
		add_input(nm, page, n);
	}
}

/* Pages deep in the tree (docs/architecture.md, "The tree depth cap"):
 * tag shapes of every kind the plain paths take or hand back, then the
 * attacker's ghost or none, <i> tags and the site's form, with and
 * without an id of its own, on both sides of the bound's guard. */
static void gen_deep(void)
{
	static const char *soup[] = {"<p>x</p>",
	                             "<a href=\"/p?a=1&amp;b=2\">l</a>",
	                             "<b>",
	                             "</b>",
	                             "<div class='a>b'>",
	                             "<br/>",
	                             "<span\ttitle=x>",
	                             "<!-- <form> -->",
	                             "<button>go</button>",
	                             "<input name=q>",
	                             "<table></table>",
	                             "<td>",
	                             "<i a=\"<b>\">",
	                             "</span >"};
	static const char *pre[] = {"", "<form method=get action=//evil.test/steal><div></form>"};
	static const char *form[] = {"<form method=post action=/send>", "<form id=send method=post action=/send>",
	                             "<form/method=post>", "<form method=post\n>"};
	size_t cap = 1 << 16;
	char *page = malloc(cap);
	for (size_t v = 0; v < 2 * 4 * 4; v++) {
		size_t n = 0, k = 0;
		n += (size_t)snprintf(page + n, cap - n, "%s", pre[v % 2]);
		while (n < 3000)
			n += (size_t)snprintf(page + n, cap - n, "%s", soup[k++ % (sizeof soup / sizeof *soup)]);
		/* the bound at about 230 so far: <i> tags around the guard */
		size_t is = 244 + v / 2;
		for (size_t j = 0; j < is; j++)
			n += (size_t)snprintf(page + n, cap - n, "<i>");
		n += (size_t)snprintf(page + n, cap - n, "%s<input name=msg><button>Send</button></form>",
		                      form[(v / 2) % 4]);
		char nm[64];
		snprintf(nm, sizeof nm, "deep %zu", v);
		add_input(nm, page, n);
	}
	free(page);
}

/* A mutation of an input: bytes changed, a shape spliced in, a run cut. */
static char *mutate(const struct input *in, size_t *n)
{
	size_t len = in->n, cap = len + 256;
	char *b = malloc(cap);
	memcpy(b, in->b, len);
	int edits = 1 + (int)(rnd() % 8);
	static const char pieces[] = "<>\"'=/ \t!-?abpfor";
	for (int k = 0; k < edits && len; k++) {
		size_t at = rnd() % len;
		switch (rnd() % 4) {
		case 0:
			b[at] = pieces[rnd() % (sizeof pieces - 1)];
			break;
		case 1:
			b[at] = (char)rnd();
			break;
		case 2: { /* splice in part of another input */
			const struct input *o = &inputs[rnd() % ninputs];
			size_t from = o->n ? rnd() % o->n : 0, m = o->n - from;
			if (m > 64)
				m = 1 + rnd() % 64;
			if (len + m > cap)
				break;
			memmove(b + at + m, b + at, len - at);
			memcpy(b + at, o->b + from, m);
			len += m;
			break;
		}
		default: { /* cut a run */
			size_t m = rnd() % 32;
			if (at + m > len)
				m = len - at;
			memmove(b + at, b + at + m, len - at - m);
			len -= m;
		}
		}
	}
	*n = len;
	return b;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = 60;
	long rounds = -1;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
			seconds = strtod(argv[++i], NULL);
		else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
			rounds = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "-v") == 0)
			verbose = 1;
		else {
			fprintf(stderr, "usage: %s [-s SECONDS] [-r ROUNDS] [-v] FILE...\n", argv[0]);
			return 2;
		}
	}
	for (; i < argc; i++)
		if (slurp(argv[i]) != 0) {
			perror(argv[i]);
			return 2;
		}
	gen_shapes();
	gen_deep();
	for (int k = 0; k < 2; k++)
		if (!(sides[k].mem = malloc(sides[k].size())))
			return 2;
	size_t most = 0;
	for (size_t k = 0; k < ninputs; k++)
		if (inputs[k].n > most)
			most = inputs[k].n;
	arena_cap = most + 512;
	arena = malloc(arena_cap);
	double start = now();

	/* round 0: every input, every feeding */
	for (size_t k = 0; k < ninputs; k++) {
		const struct input *in = &inputs[k];
		if (verbose)
			fprintf(stderr, "%s (%zu bytes)\n", in->name, in->n);
		for (size_t align = 0; align < 8; align++)
			fed_whole(in->name, in->b, in->n, align, align == 1 ? CSRF_INJECT_OPT_RAISE_REFERRER : 0);
		if (in->n <= 65536)
			fed_bytes(in->name, in->b, in->n);
		size_t step = in->n <= 4096 ? 1 : in->n <= 65536 ? 10 : 0;
		if (step)
			for (size_t at = 1; at < in->n; at += step)
				fed_split(in->name, in->b, in->n, at, at % 64);
		else
			for (int s = 0; s < 200; s++)
				fed_split(in->name, in->b, in->n, 1 + rnd() % in->n, rnd() % 64);
		for (size_t shift = 1; shift < 70; shift++) {
			size_t n;
			char *b = shifted(in->b, in->n, shift, &n);
			fed_whole(in->name, b, n, shift % 64, 0);
			free(b);
		}
	}
	fprintf(stderr, "round 0: %ld runs compared, %ld differences (%.0f s)\n", compared, differences, now() - start);
	fprintf(stderr, "runs with the injector's ids (forms deep in the tree): %ld, in", pinned_runs);
	for (size_t k = 0; k < pinned_named; k++)
		fprintf(stderr, " %s%s", pinned_names[k], k + 1 < pinned_named ? "," : "\n");
	if (!pinned_named)
		fprintf(stderr, " none\n");
	fprintf(stderr, "runs reporting CSRF_INJECT_DEEP: %ld (%ld of them not compared: a token refused)\n", deep_runs,
	        deep_refused);

	/* later rounds: random feedings, shifts and mutations until the time is up */
	long round = 1;
	while ((rounds < 0 || round < rounds) && (rounds >= 0 || now() - start < seconds) && !differences) {
		for (size_t k = 0; k < ninputs && (rounds >= 0 || now() - start < seconds); k++) {
			const struct input *in = &inputs[k];
			size_t n;
			char *m = rnd() % 2 ? mutate(in, &n) : shifted(in->b, in->n, rnd() % 70, &n);
			fed_random(in->name, m, n);
			if (n < 2048 && rnd() % 8 == 0)
				fed_bytes(in->name, m, n);
			free(m);
		}
		round++;
	}
	fprintf(stderr, "%ld rounds, %ld runs compared, %ld differences (%.0f s)\n", round, compared, differences,
	        now() - start);
	return differences ? 1 : 0;
}
