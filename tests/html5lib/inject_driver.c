/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * inject_driver.c - runs pages through the streaming injector for the
 * html5lib differential test (inject_diff.py). Reads records from stdin:
 * a line "LEN N S1 ... SN" (the page's length and N split offsets,
 * increasing), then LEN bytes of page. Feeds each page whole and split
 * at the offsets, checks that both give the same output and that the
 * output without the insertions is the page, and writes a line
 * "LEN COUNT STATUS" then LEN bytes of output (or "ERR reason"). The
 * field name and token are fixed test values, not secrets. With
 * CSRF_SCAN set, the injector's block scanner must run that path: exit
 * 4 when this build or CPU lacks it (scan_diff.py then leaves it out).
 * CSRF_DIFF_OPTIONS, when set, is the injector's options (a number: the
 * CSRF_INJECT_OPT_* bits). A form read deep in the tree gets a random id
 * of the injector's (id="csrf-" and 16 characters, and form="csrf-..." on
 * its field), different in every run: the whole and split outputs are
 * compared with those 16 characters masked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csrf.h"
#include "inject_shared.h"

#define SELF "https://self.example"
#define FIELD "csrf_diff_field"
#define TOKEN "diffTOKEN0123456789"
#define MAX_SPLITS 64
#define MAX_PAGE (1u << 20)

typedef struct {
	char *out, *plain;
	size_t len, plain_len, cap;
} sink;

static int on_emit(void *ud, const char *p, size_t n, int inserted)
{
	sink *s = ud;
	if (s->len + n > s->cap)
		return 1;
	memcpy(s->out + s->len, p, n);
	s->len += n;
	if (!inserted) {
		memcpy(s->plain + s->plain_len, p, n);
		s->plain_len += n;
	}
	return 0;
}

static int id_char(int c)
{
	return c == '-' || c == '_' || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

/* At p (pre matched): the injector's 16 id characters and the closing
 * quote, as a pinned id or its form= has them (not the csrf-param and
 * csrf-token of the meta tags, whose names also follow ="csrf-). */
static int pinned_id(const char *p)
{
	for (size_t k = 0; k < 16; k++)
		if (!id_char((unsigned char)p[k]))
			return 0;
	return p[16] == '"';
}

/* 1 when the n bytes at a and b are the same but for the 16 characters
 * after each ="csrf- (the injector's random ids): those must be
 * base64url, then a quote, in both. */
static int same_masked(const char *a, const char *b, size_t n)
{
	static const char pre[] = "=\"csrf-";
	const size_t pl = sizeof pre - 1;
	size_t i = 0;
	while (i < n) {
		if (a[i] != b[i])
			return 0;
		if (i + pl + 17 <= n && memcmp(a + i, pre, pl) == 0 && memcmp(b + i, pre, pl) == 0 &&
		    pinned_id(a + i + pl) && pinned_id(b + i + pl)) {
			i += pl + 16;
			continue;
		}
		i++;
	}
	return 1;
}

/* Runs page through inj in the chunks the cuts give; 0 when all went well. */
static int run(csrf_inject *inj, const char *page, size_t len, const size_t *cuts, size_t n, sink *s, unsigned *count,
               unsigned *status)
{
	size_t from = 0;
	s->len = s->plain_len = 0;
	for (size_t k = 0; k <= n; k++) {
		size_t to = k < n ? cuts[k] : len;
		if (csrf_inject_feed(inj, page + from, to - from, on_emit, s) != CSRF_OK)
			return 1;
		from = to;
	}
	if (csrf_inject_finish(inj, on_emit, s, count) != CSRF_OK)
		return 1;
	*status = csrf_inject_status(inj);
	return 0;
}

int main(void)
{
	const char *path = getenv("CSRF_SCAN");
	if (path && *path && strcmp(csrfi_inject_scan_name(INJ_SCAN_BEST), path) != 0) {
		fprintf(stderr, "inject_driver: no scanner path %s here\n", path);
		return 4;
	}
	void *mem = malloc(csrf_inject_size());
	char *page = malloc(MAX_PAGE);
	size_t cap = MAX_PAGE * 4;
	sink whole = {malloc(cap), malloc(MAX_PAGE), 0, 0, cap}, split = {malloc(cap), malloc(MAX_PAGE), 0, 0, cap};
	csrf_inject *inj;
	if (!mem || !page || !whole.out || !whole.plain || !split.out || !split.plain ||
	    csrf_inject_init(mem, csrf_inject_size(), SELF, strlen(SELF), FIELD, strlen(FIELD), TOKEN, strlen(TOKEN),
	                     &inj) != CSRF_OK)
		return 2;
	const char *opts = getenv("CSRF_DIFF_OPTIONS");
	if (opts && *opts && csrf_inject_options(inj, (unsigned)strtoul(opts, NULL, 0)) != CSRF_OK)
		return 2;
	char line[1024];
	while (fgets(line, sizeof line, stdin)) {
		size_t cuts[MAX_SPLITS], n = 0, len;
		char *p = line, *e;
		len = strtoul(p, &e, 10);
		p = e;
		size_t want = strtoul(p, &e, 10);
		p = e;
		if (len > MAX_PAGE || want > MAX_SPLITS)
			return 3;
		for (; n < want; n++) {
			cuts[n] = strtoul(p, &e, 10);
			p = e;
			if (cuts[n] > len || (n > 0 && cuts[n] < cuts[n - 1]))
				return 3;
		}
		if (fread(page, 1, len, stdin) != len)
			return 3;
		unsigned cw, cs, sw, ss;
		const char *err = NULL;
		if (run(inj, page, len, NULL, 0, &whole, &cw, &sw) || run(inj, page, len, cuts, n, &split, &cs, &ss))
			err = "feed failed";
		else if (whole.len != split.len || !same_masked(whole.out, split.out, whole.len) || cw != cs ||
		         sw != ss)
			err = "split output differs from whole";
		else if (whole.plain_len != len || memcmp(whole.plain, page, len) != 0)
			err = "output without insertions is not the input";
		if (err) {
			printf("ERR %s\n", err);
		} else {
			printf("%zu %u %u\n", whole.len, cw, sw);
			fwrite(whole.out, 1, whole.len, stdout);
		}
		fflush(stdout);
	}
	free(mem);
	free(page);
	free(whole.out);
	free(whole.plain);
	free(split.out);
	free(split.plain);
	return 0;
}
