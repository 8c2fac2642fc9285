/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * store_resp.c - the Redis store's check of a reply as its bytes arrive,
 * before hiredis parses them (store_redis.c feeds it). Replies the store
 * reads are small and shallow (a value of at most CSRF_STORE_VAL_MAX
 * bytes, ROLE's three levels), so anything larger, deeper or not RESP2
 * comes from a server that is broken or lying, and is refused as soon
 * as it shows: a length announced beyond the limit is refused at its
 * header, not after the bytes came, and an array's element count is
 * bounded by what the rest of the limit could hold, so hiredis never
 * allocates for more. Once a reply is refused the connection is closed.
 */
#include "session_internal.h"

#include <stdarg.h>
#include <stdio.h>

/* What the next byte is: a type byte, the rest of a line, the LF of a
 * line, the bytes of a string, its CR, its LF; or nothing more. */
enum { SC_TYPE, SC_LINE, SC_LINE_LF, SC_BULK, SC_BULK_CR, SC_BULK_LF, SC_DONE };

static int scan_refuse(csrfi_resp_scan *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int scan_refuse(csrfi_resp_scan *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->why, sizeof s->why, fmt, ap);
	va_end(ap);
	s->state = SC_DONE; /* nothing more is read */
	return -1;
}

/* An item is complete: it fills a place in the array around it, and
 * completes every array it was the last element of. 1 when that
 * completes the reply. */
static int scan_item_done(csrfi_resp_scan *s)
{
	while (s->depth > 0) {
		s->promised--;
		if (--s->left[s->depth] > 0) {
			s->state = SC_TYPE;
			return 0;
		}
		s->depth--;
	}
	s->state = SC_DONE;
	return 1;
}

/* The header line of a string or an array has ended. */
static int scan_header(csrfi_resp_scan *s)
{
	if (s->digits == 0 || (s->neg && s->num != 1))
		return scan_refuse(s, "a malformed length");
	if (s->neg || (s->type == '*' && s->num == 0))
		return scan_item_done(s); /* nil, or an empty array */
	if (s->type == '$') {
		if ((uint64_t)s->num + 2 > CSRF_RESP_REPLY_MAX - s->total)
			return scan_refuse(s, "a string of %lld bytes, more than %d bytes", (long long)s->num,
			                   CSRF_RESP_REPLY_MAX);
		s->bulk_left = (size_t)s->num;
		s->state = s->num > 0 ? SC_BULK : SC_BULK_CR;
		return 0;
	}
	if (s->depth == CSRF_RESP_DEPTH_MAX)
		return scan_refuse(s, "arrays nested deeper than %d", CSRF_RESP_DEPTH_MAX);
	/* each element takes 3 bytes at least ("+\r\n"); what is left of
	 * CSRF_RESP_REPLY_MAX holds so many, less those announced already */
	size_t room = (CSRF_RESP_REPLY_MAX - s->total) / 3;
	if (s->promised >= room || (uint64_t)s->num > room - s->promised)
		return scan_refuse(s, "an array of %lld elements, more than %d bytes could hold", (long long)s->num,
		                   CSRF_RESP_REPLY_MAX);
	s->depth++;
	s->left[s->depth] = s->num;
	s->promised += (size_t)s->num;
	s->state = SC_TYPE;
	return 0;
}

void csrfi_resp_scan_init(csrfi_resp_scan *s)
{
	memset(s, 0, sizeof *s);
	s->state = SC_TYPE;
}

int csrfi_resp_scan_feed(csrfi_resp_scan *s, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		int done = 0;

		if (s->state == SC_DONE)
			return scan_refuse(s, "bytes after the reply");
		if (s->total >= CSRF_RESP_REPLY_MAX)
			return scan_refuse(s, "more than %d bytes", CSRF_RESP_REPLY_MAX);
		s->total++;
		switch (s->state) {
		case SC_TYPE:
			if (c != '+' && c != '-' && c != ':' && c != '$' && c != '*')
				return scan_refuse(s, "not a RESP2 reply");
			s->type = c;
			s->neg = s->digits = 0;
			s->num = 0;
			s->state = SC_LINE;
			break;
		case SC_LINE:
			if (c == '\r') {
				s->state = SC_LINE_LF;
			} else if (c == '\n') {
				return scan_refuse(s, "a line not ended by CRLF");
			} else if (s->type != '+' && s->type != '-') {
				if (c == '-' && !s->neg && s->digits == 0) {
					s->neg = 1;
				} else if (c < '0' || c > '9' || s->digits == 18) {
					return scan_refuse(s, "a malformed number");
				} else {
					s->num = s->num * 10 + (c - '0');
					s->digits++;
				}
			}
			break;
		case SC_LINE_LF:
			if (c != '\n')
				return scan_refuse(s, "a line not ended by CRLF");
			if (s->type == '$' || s->type == '*')
				done = scan_header(s);
			else if (s->type == ':' && s->digits == 0)
				return scan_refuse(s, "a malformed number");
			else
				done = scan_item_done(s);
			break;
		case SC_BULK: {
			size_t take = n - i < s->bulk_left ? n - i : s->bulk_left;
			s->total += take - 1;
			s->bulk_left -= take;
			i += take - 1;
			if (s->bulk_left == 0)
				s->state = SC_BULK_CR;
			break;
		}
		case SC_BULK_CR:
			if (c != '\r')
				return scan_refuse(s, "a string longer than its length");
			s->state = SC_BULK_LF;
			break;
		case SC_BULK_LF:
			if (c != '\n')
				return scan_refuse(s, "a string longer than its length");
			done = scan_item_done(s);
			break;
		}
		if (done < 0)
			return -1;
		if (done && i + 1 < n)
			return scan_refuse(s, "bytes after the reply");
		if (done)
			return 1;
	}
	return 0;
}
