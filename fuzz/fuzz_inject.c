/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_inject.c - the streaming HTML injector, fed random HTML in random
 * splits. Input: SPLITS |#| HTML (each byte of SPLITS is the length of the
 * next chunk, cycling; 0 means an empty chunk).
 * Invariants: output minus the inserted elements equals the input, byte
 * for byte and in order; every passed-through piece points into the chunk
 * being fed or, for a form's bytes held until its end tag, into the
 * injector; every inserted piece is exactly the hidden input right after
 * a form's start tag (it follows a '>' of the input, with a "<form" before
 * it) or the meta pair (it follows a '>'), or, for a form deep in the
 * tree, the injector's id (it follows "<form": id="csrf-" and 16
 * base64url characters) and then the field with form="" naming that id
 * (compared across splits with the 16 masked: they are random), or, with the referrer raise
 * on (inputs of odd length), the same-origin referrer meta (it follows a
 * '>', with a "<meta" before it); the meta pair comes at most once;
 * finish counts the insertions; the output does not depend on how the
 * input was split (one chunk, random chunks, byte by byte); a
 * cross-origin or GET form written before the input gets no token, a
 * same-origin POST form closed before the input gets one after its start
 * tag whatever follows, one a table holds outside a cell gets none; the
 * status does not depend on the splits either; an emit callback that
 * refuses stops the feed with CSRF_ERR_STOPPED. Every path of the block
 * scanner (inject_scan.c: SIMD and portable, forced in turn) gives the
 * output and status of the byte-at-a-time reference, whole, split and
 * byte by byte.
 * Form ownership, without an HTML oracle: once a cross-origin POST form is
 * open, only a "</form" can clear the browser's form element pointer, so
 * no hidden field goes in before or at the input's first "</form" (in any
 * case); and none goes in after an ESC byte. A stop in the status comes
 * with the reason for it, and finish keeps the status for the caller.
 */
#include "fuzz_util.h"
#include "inject_shared.h"

#include <strings.h>

#define SELF "http://127.0.0.1:8080"
#define FIELD "csrf_0123456789ab"
/* a token of the length issued (CSRF_TOKEN_LEN): the injector takes no longer one */
#define TOKEN "AQAAAAAHZWVyeUfoKoN4nQ-_3a0ZZpDb8Kx4vO6yJgGdWPbq1e9sYcUu2ALm3rT5Xz0wQv7nHiKjM8oPRdSfGhBtCaV4yN6uLsEI9x"
_Static_assert(sizeof TOKEN - 1 == CSRF_TOKEN_LEN, "the token length issued");
#define INPUT_EL "<input type=\"hidden\" name=\"" FIELD "\" value=\"" TOKEN "\">"
#define META_EL "<meta name=\"csrf-param\" content=\"" FIELD "\"><meta name=\"csrf-token\" content=\"" TOKEN "\">"
#define RM_EL "<meta name=\"referrer\" content=\"same-origin\">"
/* a deep form's id, and its field's form="" */
#define PIN_PRE " id=\"csrf-"
#define PIN_LEN (sizeof PIN_PRE - 1 + 16 + 1)
#define PINNED_LEN (sizeof INPUT_EL - 2 + sizeof " form=\"csrf-" - 1 + 16 + 2)

static int id16(const char *p)
{
	for (int k = 0; k < 16; k++)
		if (!((p[k] >= 'A' && p[k] <= 'Z') || (p[k] >= 'a' && p[k] <= 'z') || (p[k] >= '0' && p[k] <= '9') ||
		      p[k] == '-' || p[k] == '_'))
			return 0;
	return 1;
}

/* The injector options of this input's runs (LLVMFuzzerTestOneInput). */
static unsigned options;

typedef struct {
	char *all; /* everything emitted */
	size_t all_n, all_cap;
	char *pass; /* passed-through pieces only */
	size_t pass_n;
	const char *chunk; /* the chunk being fed */
	size_t chunk_n;
	const char *mem; /* the injector */
	unsigned inserted, metas;
	size_t first_input_at, last_input_at; /* input bytes before the first / last hidden field */
	char pin[16];                         /* the last id the injector gave a form */
	int pinned;                           /* an id went in, its field not yet */
	int stop_after;                       /* > 0: refuse the stop_after-th emit */
	int emits;
	unsigned status; /* after finish */
} sink;

static int on_emit(void *ud, const char *p, size_t n, int inserted)
{
	sink *s = ud;
	s->emits++;
	FZ_ASSERT(s->stop_after <= 0 || s->emits <= s->stop_after);
	if (s->stop_after > 0 && s->emits == s->stop_after)
		return 7;
	FZ_ASSERT(s->all_n + n <= s->all_cap);
	size_t mask = 0; /* where the 16 random characters are in p */
	if (inserted && n == PIN_LEN && memcmp(p, PIN_PRE, sizeof PIN_PRE - 1) == 0) {
		/* right after "<form", its field to come */
		FZ_ASSERT(id16(p + sizeof PIN_PRE - 1) && p[PIN_LEN - 1] == '"' && !s->pinned);
		FZ_ASSERT(s->pass_n >= 5 && strncasecmp(s->pass + s->pass_n - 5, "<form", 5) == 0);
		memcpy(s->pin, p + sizeof PIN_PRE - 1, 16);
		s->pinned = 1;
		s->inserted++;
		mask = sizeof PIN_PRE - 1;
		goto out;
	}
	if (inserted) {
		int pinned = n == PINNED_LEN && memcmp(p, INPUT_EL, sizeof INPUT_EL - 2) == 0 &&
		             memcmp(p + sizeof INPUT_EL - 2, " form=\"csrf-", 12) == 0 &&
		             memcmp(p + n - 2, "\">", 2) == 0 && s->pinned;
		FZ_ASSERT(!pinned || memcmp(p + sizeof INPUT_EL - 2 + 12, s->pin, 16) == 0);
		FZ_ASSERT(pinned == s->pinned); /* an id goes with its field */
		s->pinned = 0;
		if (pinned)
			mask = sizeof INPUT_EL - 2 + 12;
		/* or form="" names the form's own id, 1 to 64 of [A-Za-z0-9_.:-] */
		size_t o = sizeof INPUT_EL - 2 + 7;
		int own = !pinned && n > o + 2 && n <= o + 64 + 2 && memcmp(p, INPUT_EL, sizeof INPUT_EL - 2) == 0 &&
		          memcmp(p + sizeof INPUT_EL - 2, " form=\"", 7) == 0 && memcmp(p + n - 2, "\">", 2) == 0;
		for (size_t k = o; own && k < n - 2; k++)
			own = (p[k] >= 'a' && p[k] <= 'z') || (p[k] >= 'A' && p[k] <= 'Z') ||
			      (p[k] >= '0' && p[k] <= '9') || p[k] == '_' || p[k] == '.' || p[k] == ':' || p[k] == '-';
		int is_input = pinned || own || (n == sizeof INPUT_EL - 1 && memcmp(p, INPUT_EL, n) == 0);
		int is_meta = n == sizeof META_EL - 1 && memcmp(p, META_EL, n) == 0;
		int is_rm = n == sizeof RM_EL - 1 && memcmp(p, RM_EL, n) == 0;
		FZ_ASSERT(is_input || is_meta || (is_rm && options));
		if (is_rm) {
			int meta = 0;
			for (size_t i = 0; i + 5 <= s->pass_n && !meta; i++)
				meta = s->pass[i] == '<' && strncasecmp(s->pass + i + 1, "meta", 4) == 0;
			FZ_ASSERT(meta);
		}
		/* the meta pair right after a tag of the input, the field right
		 * after a form's start tag */
		FZ_ASSERT(s->pass_n > 0 && s->pass[s->pass_n - 1] == '>');
		if (is_input) {
			int form = 0;
			for (size_t i = 0; i + 5 <= s->pass_n && !form; i++)
				form = s->pass[i] == '<' && strncasecmp(s->pass + i + 1, "form", 4) == 0;
			FZ_ASSERT(form);
		}
		if (own) { /* the id was passed, after a "<form" (its form's start tag) */
			size_t at = 0, len = n - 2 - o, k = 0;
			while (strncasecmp(s->pass + at, "<form", 5) != 0)
				at++;
			while (at + k + len <= s->pass_n && memcmp(s->pass + at + k, p + o, len) != 0)
				k++;
			FZ_ASSERT(at + k + len <= s->pass_n);
		}
		s->inserted++;
		s->metas += (unsigned)is_meta;
		if (is_input) {
			if (s->first_input_at == SIZE_MAX)
				s->first_input_at = s->pass_n;
			s->last_input_at = s->pass_n;
		}
		FZ_ASSERT(s->metas <= 1);
	} else {
		FZ_ASSERT(n == 0 || (s->chunk && p >= s->chunk && p + n <= s->chunk + s->chunk_n) ||
		          (p >= s->mem && p + n <= s->mem + csrf_inject_size()));
		memcpy(s->pass + s->pass_n, p, n);
		s->pass_n += n;
	}
out:
	memcpy(s->all + s->all_n, p, n);
	if (mask)
		memset(s->all + s->all_n + mask, '#', 16);
	s->all_n += n;
	return 0;
}

static csrf_inject *new_injector(void *mem)
{
	csrf_inject *inj = NULL;
	FZ_ASSERT(csrf_inject_init(mem, csrf_inject_size(), SELF, sizeof SELF - 1, FIELD, sizeof FIELD - 1, TOKEN,
	                           sizeof TOKEN - 1, &inj) == CSRF_OK);
	FZ_ASSERT(inj != NULL);
	FZ_ASSERT(csrf_inject_options(inj, options) == CSRF_OK);
	return inj;
}

/* Runs html through a fresh injector in chunks given by splits (NULL:
 * one chunk; an empty splits: byte by byte). The caller frees s->all and
 * s->pass. */
static void run(const char *html, size_t n, const fz_piece *splits, int one_by_one, sink *s)
{
	memset(s, 0, sizeof *s);
	s->first_input_at = SIZE_MAX;
	/* at most one meta pair, and one field per '<' of the input */
	size_t lt = 0;
	for (size_t i = 0; i < n; i++)
		lt += html[i] == '<';
	s->all_cap = n + sizeof META_EL + lt * (PINNED_LEN + PIN_LEN + sizeof RM_EL) + 1;
	s->all = malloc(s->all_cap);
	s->pass = malloc(n + 1);
	FZ_ASSERT(s->all && s->pass);

	void *mem = malloc(csrf_inject_size());
	FZ_ASSERT(mem != NULL);
	csrf_inject *inj = new_injector(mem);
	s->mem = mem;
	size_t off = 0, k = 0, empties = 0;
	do {
		size_t len = n - off;
		if (one_by_one)
			len = 1;
		else if (splits && splits->len > 0)
			len = (unsigned char)splits->ptr[k % splits->len];
		if (len > n - off)
			len = n - off;
		/* empty chunks are fed too, but never forever */
		empties = len == 0 ? empties + 1 : 0;
		if (splits && empties > splits->len)
			len = n - off;
		k++;
		/* each chunk is its own exactly-sized block */
		char *chunk = fz_dup(html + off, len);
		s->chunk = chunk;
		s->chunk_n = len;
		FZ_ASSERT(csrf_inject_feed(inj, chunk, len, on_emit, s) == CSRF_OK);
		free(chunk);
		s->chunk = NULL;
		s->chunk_n = 0;
		off += len;
	} while (off < n);
	unsigned injected = 0, status = csrf_inject_status(inj);
	s->chunk = NULL;
	s->chunk_n = 0;
	FZ_ASSERT(csrf_inject_finish(inj, on_emit, s, &injected) == CSRF_OK);
	/* finish adds only what the stream's end tells: a form left open (a
	 * <plaintext> inside one says so at once) */
	FZ_ASSERT((csrf_inject_status(inj) & ~CSRF_INJECT_UNCLOSED) == (status & ~CSRF_INJECT_UNCLOSED));
	FZ_ASSERT((csrf_inject_status(inj) & status) == status);
	FZ_ASSERT(!(csrf_inject_status(inj) & CSRF_INJECT_UNCLOSED) || !(status & CSRF_INJECT_STOPPED));
	if (status & CSRF_INJECT_STOPPED)
		FZ_ASSERT(status &
		          (CSRF_INJECT_FOREIGN | CSRF_INJECT_SELECT | CSRF_INJECT_NOSCRIPT | CSRF_INJECT_ESCAPE |
		           CSRF_INJECT_TEMPLATE | CSRF_INJECT_TABLE_FORM | CSRF_INJECT_FRAMESET));
	FZ_ASSERT(injected == s->inserted);
	FZ_ASSERT(s->pass_n == n && memcmp(s->pass, html, n) == 0);
	s->status = csrf_inject_status(inj);
	free(mem);
}

/* The offset of the first "</form" (any case) in p[0..n), or n. */
static size_t end_form_at(const char *p, size_t n)
{
	for (size_t i = 0; i + 6 <= n; i++)
		if (p[i] == '<' && p[i + 1] == '/' && strncasecmp(p + i + 2, "form", 4) == 0)
			return i;
	return n;
}

/* prefix + html in one chunk: the input bytes before the first hidden
 * field (SIZE_MAX: none). */
static size_t token_at(const char *prefix, const char *html, size_t n)
{
	size_t pl = strlen(prefix);
	char *in = malloc(pl + n);
	FZ_ASSERT(in != NULL);
	memcpy(in, prefix, pl);
	memcpy(in + pl, html, n);
	sink s;
	run(in, pl + n, NULL, 0, &s);
	free(s.all);
	free(s.pass);
	free(in);
	return s.first_input_at;
}

/* A form that must get no token written before html: no field at or
 * before html's first "</form", which would close it. */
static int no_token(const char *prefix, const char *html, size_t n)
{
	size_t at = token_at(prefix, html, n);
	return at == SIZE_MAX || at > strlen(prefix) + end_form_at(html, n) + 6;
}

/* A closed form that gets the token, written before html: the field goes
 * in right after its start tag (the prefix's first '>') whatever follows. */
static int token_closed(const char *prefix, const char *html, size_t n)
{
	return token_at(prefix, html, n) == (size_t)(strchr(prefix, '>') - prefix) + 1;
}

/* An attacker's open cross-origin form before the input: no hidden field
 * before the input's first "</form". */
static void check_owner(const char *html, size_t n)
{
	static const char ef[] = "<form action=\"https://evil.example/\" method=post>";
	size_t pl = sizeof ef - 1;
	char *in = malloc(pl + n + 1);
	FZ_ASSERT(in != NULL);
	memcpy(in, ef, pl);
	memcpy(in + pl, html, n);
	sink s;
	run(in, pl + n, NULL, 0, &s);
	size_t end = pl + end_form_at(html, n);
	FZ_ASSERT(s.first_input_at == SIZE_MAX || s.first_input_at > end + 6);
	free(s.all);
	free(s.pass);
	free(in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FZ_ASSERT(csrf_inject_size() <= CSRF_INJECT_STATE_MAX);
	fz_pieces ps;
	fz_split(data, size, 2, &ps);
	const fz_piece *splits = &ps.p[0];
	const char *html = ps.p[1].ptr;
	size_t n = ps.p[1].len;
	options = (n & 1) ? CSRF_INJECT_OPT_RAISE_REFERRER : 0;

	/* every scanner path reads it as the byte-at-a-time reference does */
	FZ_ASSERT(csrfi_inject_scan_force(INJ_SCAN_SCALAR) == 0);
	sink ref;
	run(html, n, NULL, 0, &ref);
	for (int p = INJ_SCAN_SCALAR + 1; p < INJ_SCAN_PATHS; p++) {
		if (csrfi_inject_scan_force(p) != 0)
			continue;
		sink w, sp;
		run(html, n, NULL, 0, &w);
		run(html, n, splits, 0, &sp);
		FZ_ASSERT(w.all_n == ref.all_n && memcmp(w.all, ref.all, ref.all_n) == 0 && w.status == ref.status);
		FZ_ASSERT(sp.all_n == ref.all_n && memcmp(sp.all, ref.all, ref.all_n) == 0 && sp.status == ref.status);
		if (n <= 2048) {
			sink b;
			run(html, n, NULL, 1, &b);
			FZ_ASSERT(b.all_n == ref.all_n && memcmp(b.all, ref.all, ref.all_n) == 0 &&
			          b.status == ref.status);
			free(b.all);
			free(b.pass);
		}
		free(w.all);
		free(w.pass);
		free(sp.all);
		free(sp.pass);
	}
	free(ref.all);
	free(ref.pass);
	FZ_ASSERT(csrfi_inject_scan_force(INJ_SCAN_BEST) == 0);

	sink whole, split;
	run(html, n, NULL, 0, &whole);
	run(html, n, splits, 0, &split);
	FZ_ASSERT(whole.all_n == split.all_n && memcmp(whole.all, split.all, whole.all_n) == 0);
	FZ_ASSERT(whole.status == split.status); /* why, too, whatever the cuts */
	if (n <= 2048) {
		sink bytes;
		run(html, n, NULL, 1, &bytes);
		FZ_ASSERT(whole.all_n == bytes.all_n && memcmp(whole.all, bytes.all, whole.all_n) == 0);
		FZ_ASSERT(whole.status == bytes.status);
		free(bytes.all);
		free(bytes.pass);
	}

	/* The decision for a form is made at its end tag, whatever follows;
	 * the field goes after its start tag. */
	FZ_ASSERT(no_token("<form method=post action=\"http://evil.example/vote\">", html, n));
	FZ_ASSERT(no_token("<form method=\"post\" action=\"//evil.example/\">", html, n));
	FZ_ASSERT(no_token("<FORM METHOD=POST ACTION='http://127.0.0.1:8081/'>", html, n));
	FZ_ASSERT(no_token("<form action=\"/vote\">", html, n));
	FZ_ASSERT(no_token("<form action=\"/vote\"><button formmethod=post>", html, n));
	FZ_ASSERT(no_token("<form method=post action=\"/vote\"><button formmethod=get>", html, n));
	FZ_ASSERT(no_token("<form method=post><input type=image formaction=//evil.example/>", html, n));
	/* a form start tag a table holds outside a cell: popped at once, no child of it */
	FZ_ASSERT(no_token("<table><form method=post action=\"/vote\">", html, n));
	FZ_ASSERT(no_token("<table><tr><td></td><form method=post action=\"/vote\">", html, n));
	FZ_ASSERT(token_closed("<form method=post action=\"/vote\"></form>", html, n));
	FZ_ASSERT(
	    token_closed("<form action='http://127.0.0.1:8080/x' method='POST'><button>go</button></form>", html, n));

	check_owner(html, n);
	const char *esc = memchr(html, 0x1b, n);
	if (esc)
		FZ_ASSERT(whole.first_input_at == SIZE_MAX || whole.last_input_at <= (size_t)(esc - html));

	/* A refusing emit stops the feed. */
	if (whole.inserted + n > 0 && splits->len > 0) {
		sink s;
		memset(&s, 0, sizeof s);
		s.all_cap = whole.all_n + 1;
		s.all = malloc(s.all_cap);
		s.pass = malloc(n + 1);
		FZ_ASSERT(s.all && s.pass);
		s.stop_after = 1 + (int)((unsigned char)splits->ptr[0] % 4);
		void *mem = malloc(csrf_inject_size());
		FZ_ASSERT(mem != NULL);
		csrf_inject *inj = new_injector(mem);
		s.mem = mem;
		s.chunk = html;
		s.chunk_n = n;
		csrf_reason r = csrf_inject_feed(inj, html, n, on_emit, &s);
		FZ_ASSERT(r == CSRF_OK || r == CSRF_ERR_STOPPED);
		if (s.emits == s.stop_after)
			FZ_ASSERT(r == CSRF_ERR_STOPPED);
		else
			FZ_ASSERT(r == CSRF_OK);
		free(mem);
		free(s.all);
		free(s.pass);
	}

	free(whole.all);
	free(whole.pass);
	free(split.all);
	free(split.pass);
	fz_free(&ps);
	return 0;
}
