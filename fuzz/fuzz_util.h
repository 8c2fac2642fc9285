/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_util.h - what the harnesses share: cutting a fuzz input into
 * pieces at a separator, each piece copied into its own exactly-sized
 * heap block (so ASan flags a one-byte over-read of any piece), and the
 * invariant check that aborts (a finding) with a message that never
 * contains input bytes.
 */
#ifndef CSRF_FUZZ_UTIL_H
#define CSRF_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csrf.h"

/* Pieces of an input are separated by this; it is in every dictionary. */
#define FZ_SEP "|#|"
#define FZ_SEP_LEN 3
#define FZ_MAX_PIECES 16

/* A broken invariant: report where and abort, which libFuzzer records as
 * a crash with the input that caused it. */
#define FZ_ASSERT(cond)                                                                                                \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			fprintf(stderr, "invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__);                  \
			abort();                                                                                       \
		}                                                                                                      \
	} while (0)

typedef struct {
	char *ptr; /* own heap block of exactly len bytes */
	size_t len;
} fz_piece;

typedef struct {
	fz_piece p[FZ_MAX_PIECES];
	size_t n;
} fz_pieces;

/* A heap copy of exactly n bytes (malloc(0) under ASan is a valid block
 * with no readable byte). */
static inline char *fz_dup(const void *data, size_t n)
{
	char *p = malloc(n);
	if (!p)
		p = malloc(1);
	if (!p)
		abort();
	if (n)
		memcpy(p, data, n);
	return p;
}

static inline const uint8_t *fz_find_sep(const uint8_t *p, const uint8_t *end)
{
	for (; p + FZ_SEP_LEN <= end; p++)
		if (memcmp(p, FZ_SEP, FZ_SEP_LEN) == 0)
			return p;
	return NULL;
}

/* Splits data at FZ_SEP into at most max pieces (the last takes the rest)
 * and copies each. Missing pieces are empty. */
static inline void fz_split(const uint8_t *data, size_t size, size_t max, fz_pieces *out)
{
	const uint8_t *p = data, *end = data + size;
	if (max > FZ_MAX_PIECES)
		max = FZ_MAX_PIECES;
	out->n = max;
	for (size_t i = 0; i < max; i++) {
		const uint8_t *s = (i + 1 < max) ? fz_find_sep(p, end) : NULL;
		const uint8_t *stop = s ? s : end;
		out->p[i].len = (size_t)(stop - p);
		out->p[i].ptr = fz_dup(p, out->p[i].len);
		p = s ? s + FZ_SEP_LEN : end;
	}
}

static inline void fz_free(fz_pieces *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		free(ps->p[i].ptr);
	ps->n = 0;
}

/* 1 when the slice lies inside [base, base + len). An empty slice may sit
 * at base + len. */
static inline int fz_inside(csrf_slice s, const char *base, size_t len)
{
	if (!s.ptr)
		return 0;
	if (s.ptr < base || s.ptr > base + len)
		return 0;
	return s.len <= (size_t)(base + len - s.ptr);
}

/* Takes one byte from the front of an input (0 when empty). */
static inline uint8_t fz_take(const uint8_t **data, size_t *size)
{
	if (*size == 0)
		return 0;
	uint8_t b = **data;
	(*data)++;
	(*size)--;
	return b;
}

#endif
