/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * store_log.c - what every store backend shares below the store interface:
 * the monotonic clock, handing a message to the caller's logger, and the
 * rate limit for repeated events. store.c (which picks a backend) and the
 * backends call it; it calls none of them.
 */
#include "session_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

int64_t csrfi_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void csrfi_store_log(const csrfi_store_logger *lg, csrf_reason event, const char *fmt, ...)
{
	char msg[CSRF_STORE_LOG_MAX];
	va_list ap;

	if (lg == NULL || lg->fn == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	lg->fn(lg->ud, event, msg);
}

int csrfi_log_limit_take(csrfi_log_limit *l, int64_t now_ms, uint64_t *skipped)
{
	if (l->used && now_ms - l->last_ms < CSRF_STORE_LOG_EVERY_MS) {
		l->skipped++;
		return 0;
	}
	l->used = 1;
	l->last_ms = now_ms;
	*skipped = l->skipped;
	l->skipped = 0;
	return 1;
}
