/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * csrfx.h - the library's internal decimal and hex parsers (text.c,
 * codec.c), shared with the programs built beside it (csrf-cgi,
 * csrf-key, the demo), which link the static library and include this
 * header from src/ instead of parsing numbers their own way (curl's
 * curlx_ model). Not public API: never installed, hidden in libcsrf.so
 * (-fvisibility=hidden, no CSRF_API), and small on purpose: a program
 * that includes it sees nothing of internal.h.
 */
#ifndef CSRF_CSRFX_H
#define CSRF_CSRFX_H

#include <stddef.h>
#include <stdint.h>

#include "csrf.h"

/* (text.c) A strict decimal: 1 to 20 ASCII digits, nothing else (no sign,
 * space or leading zero but in "0" itself), at most max. CSRF_OK and
 * *out, or CSRF_MALFORMED (*out untouched) when empty, malformed, over
 * max or over UINT64_MAX. */
csrf_reason csrfx_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out);
/* (text.c) The same with an optional '-' (not "-0"): a stored counter or
 * time, as Redis writes integers. CSRF_OK and *out, or CSRF_MALFORMED. */
csrf_reason csrfx_parse_i64(const char *s, size_t len, int64_t *out);
/* (text.c) The value of a hex digit (either case), -1 for anything else
 * (not constant time: for percent-escapes and identifiers, never key
 * material). */
int csrfx_hexval(unsigned char c);
/* (codec.c) Lower-case hex of n bytes into out: 2n characters, no NUL;
 * no table lookups on the data. */
void csrfx_hex_encode(const uint8_t *in, size_t n, char *out);
/* (codec.c) Exactly 2n hex digits (either case) into n bytes, constant
 * time in the content; CSRF_MALFORMED (out wiped) on a bad digit. */
csrf_reason csrfx_hex_decode(const char *in, size_t n, uint8_t *out);
/* (codec.c) 1 when (s, n) is a non-empty run of lower-case hex digits
 * (what csrfx_hex_encode writes); constant time in the content. */
int csrfx_is_hex_lower(const char *s, size_t n);

#endif /* CSRF_CSRFX_H */
