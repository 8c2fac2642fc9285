/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_inject.c - the streaming HTML injector, fed random HTML in random
 * splits. Input: SPLITS |#| HTML (each byte of SPLITS is the length of the
 * next chunk, cycling; 0 means an empty chunk).
 * Invariants: output minus the inserted elements equals the input, byte
 * for byte and in order; every passed-through piece points into the chunk
 * being fed; every inserted piece is exactly the hidden input or the meta
 * pair, and each follows a '>' of the input; the meta pair comes at most
 * once; finish counts the insertions; the output does not depend on how
 * the input was split (one chunk, random chunks, byte by byte); a
 * cross-origin or GET form written before the input gets no token, a
 * same-origin POST form gets one; an emit callback that refuses stops the
 * feed with CSRF_ERR_STOPPED.
 * Form ownership, without an HTML oracle: once a cross-origin POST form is
 * open, only a "</form" can clear the browser's form element pointer, so
 * no hidden field goes in before the input's first "</form" (in any
 * case); and none goes in after an ESC byte. A stop in the status comes
 * with the reason for it, and finish keeps the status for the caller.
 */
#include "fuzz_util.h"

#include <strings.h>

#define SELF "http://127.0.0.1:8080"
#define FIELD "csrf_0123456789ab"
#define TOKEN                                                                                                          \
	"AQAAAAAHZWVyeUfoKoN4nQ-_3a0ZZpDb8Kx4vO6yJgGdWPbq1e9sYcUu2ALm3rT5Xz0wQv7nHiKjM8oPRdSfGhBtCaV4yN6uLsEI"         \
	"9xo1AQAAAAAHZWVyeUfoKoN4nQ-_3a0ZZpDbq7Wm-T_a"
#define INPUT_EL "<input type=\"hidden\" name=\"" FIELD "\" value=\"" TOKEN "\">"
#define META_EL "<meta name=\"csrf-param\" content=\"" FIELD "\"><meta name=\"csrf-token\" content=\"" TOKEN "\">"

typedef struct {
	char *all; /* everything emitted */
	size_t all_n, all_cap;
	char *pass; /* passed-through pieces only */
	size_t pass_n;
	const char *chunk; /* the chunk being fed */
	size_t chunk_n;
	unsigned inserted, metas;
	size_t first_input_at, last_input_at; /* input bytes before the first / last hidden field */
	int stop_after;                       /* > 0: refuse the stop_after-th emit */
	int emits;
} sink;

static int on_emit(void *ud, const char *p, size_t n, int inserted)
{
	sink *s = ud;
	s->emits++;
	FZ_ASSERT(s->stop_after <= 0 || s->emits <= s->stop_after);
	if (s->stop_after > 0 && s->emits == s->stop_after)
		return 7;
	FZ_ASSERT(s->all_n + n <= s->all_cap);
	if (inserted) {
		int is_input = n == sizeof INPUT_EL - 1 && memcmp(p, INPUT_EL, n) == 0;
		int is_meta = n == sizeof META_EL - 1 && memcmp(p, META_EL, n) == 0;
		FZ_ASSERT(is_input || is_meta);
		/* inserted right after a tag of the input */
		FZ_ASSERT(s->pass_n > 0 && s->pass[s->pass_n - 1] == '>');
		s->inserted++;
		s->metas += (unsigned)is_meta;
		if (is_input) {
			if (s->first_input_at == SIZE_MAX)
				s->first_input_at = s->pass_n;
			s->last_input_at = s->pass_n;
		}
		FZ_ASSERT(s->metas <= 1);
	} else {
		FZ_ASSERT(n == 0 || (p >= s->chunk && p + n <= s->chunk + s->chunk_n));
		memcpy(s->pass + s->pass_n, p, n);
		s->pass_n += n;
	}
	memcpy(s->all + s->all_n, p, n);
	s->all_n += n;
	return 0;
}

static csrf_inject *new_injector(void *mem)
{
	csrf_inject *inj = NULL;
	FZ_ASSERT(csrf_inject_init(mem, csrf_inject_size(), SELF, sizeof SELF - 1, FIELD, sizeof FIELD - 1, TOKEN,
	                           sizeof TOKEN - 1, &inj) == CSRF_OK);
	FZ_ASSERT(inj != NULL);
	return inj;
}

/* Runs html through a fresh injector in chunks given by splits (NULL:
 * one chunk; an empty splits: byte by byte). The caller frees s->all and
 * s->pass. */
static void run(const char *html, size_t n, const fz_piece *splits, int one_by_one, sink *s)
{
	memset(s, 0, sizeof *s);
	s->first_input_at = SIZE_MAX;
	/* at most one meta pair, and one input per '>' of the input */
	size_t gt = 0;
	for (size_t i = 0; i < n; i++)
		gt += html[i] == '>';
	s->all_cap = n + sizeof META_EL + gt * sizeof INPUT_EL + 1;
	s->all = malloc(s->all_cap);
	s->pass = malloc(n + 1);
	FZ_ASSERT(s->all && s->pass);

	void *mem = malloc(csrf_inject_size());
	FZ_ASSERT(mem != NULL);
	csrf_inject *inj = new_injector(mem);
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
	FZ_ASSERT(csrf_inject_reset(inj, &injected) == CSRF_OK);
	FZ_ASSERT(csrf_inject_status(inj) == status);
	if (status & CSRF_INJECT_STOPPED)
		FZ_ASSERT(status & (CSRF_INJECT_FOREIGN | CSRF_INJECT_SELECT | CSRF_INJECT_NOSCRIPT |
		                    CSRF_INJECT_ESCAPE | CSRF_INJECT_TEMPLATE));
	FZ_ASSERT(injected == s->inserted);
	FZ_ASSERT(s->pass_n == n && memcmp(s->pass, html, n) == 0);
	free(mem);
}

/* prefix + html in one chunk: is the element right after the prefix? */
static int token_after(const char *prefix, const char *html, size_t n)
{
	size_t pl = strlen(prefix);
	char *in = malloc(pl + n);
	FZ_ASSERT(in != NULL);
	memcpy(in, prefix, pl);
	memcpy(in + pl, html, n);
	sink s;
	run(in, pl + n, NULL, 0, &s);
	int got = s.all_n >= pl + sizeof INPUT_EL - 1 && memcmp(s.all + pl, INPUT_EL, sizeof INPUT_EL - 1) == 0;
	free(s.all);
	free(s.pass);
	free(in);
	return got;
}

/* The offset of the first "</form" (any case) in p[0..n), or n. */
static size_t end_form_at(const char *p, size_t n)
{
	for (size_t i = 0; i + 6 <= n; i++)
		if (p[i] == '<' && p[i + 1] == '/' && strncasecmp(p + i + 2, "form", 4) == 0)
			return i;
	return n;
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
	FZ_ASSERT(s.first_input_at == SIZE_MAX || s.first_input_at > end);
	free(s.all);
	free(s.pass);
	free(in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FZ_ASSERT(csrf_inject_size() <= 4096);
	fz_pieces ps;
	fz_split(data, size, 2, &ps);
	const fz_piece *splits = &ps.p[0];
	const char *html = ps.p[1].ptr;
	size_t n = ps.p[1].len;

	sink whole, split;
	run(html, n, NULL, 0, &whole);
	run(html, n, splits, 0, &split);
	FZ_ASSERT(whole.all_n == split.all_n && memcmp(whole.all, split.all, whole.all_n) == 0);
	if (n <= 2048) {
		sink bytes;
		run(html, n, NULL, 1, &bytes);
		FZ_ASSERT(whole.all_n == bytes.all_n && memcmp(whole.all, bytes.all, whole.all_n) == 0);
		free(bytes.all);
		free(bytes.pass);
	}

	/* The decision for a tag is made at its '>', whatever follows. */
	FZ_ASSERT(!token_after("<form method=post action=\"http://evil.example/vote\">", html, n));
	FZ_ASSERT(!token_after("<form method=\"post\" action=\"//evil.example/\">", html, n));
	FZ_ASSERT(!token_after("<FORM METHOD=POST ACTION='http://127.0.0.1:8081/'>", html, n));
	FZ_ASSERT(!token_after("<form action=\"/vote\">", html, n));
	FZ_ASSERT(token_after("<form method=post action=\"/vote\">", html, n));
	FZ_ASSERT(token_after("<form action='http://127.0.0.1:8080/x' method='POST'>", html, n));

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
