/* SPDX-License-Identifier: BSD-2-Clause */
/* session_store.c - a program that uses libcsrf's optional session part
 * (csrf_session.h): a memory store keeps a value and counts. The test
 * package.core_link builds it with pkg-config's libcsrf-session and with
 * find_package(libcsrf COMPONENTS session). */
#include <csrf_session.h>
#include <stdio.h>

int main(void)
{
	csrf_store *st;
	if (csrf_store_open(&st, "memory") != CSRF_OK)
		return 1;
	char buf[16];
	size_t len = 0;
	int64_t n = 0;
	csrf_reason set = csrf_store_set(st, "k", 1, "v", 1, 60);
	csrf_reason get = csrf_store_get(st, "k", 1, buf, sizeof buf, &len);
	csrf_reason incr = csrf_store_incr(st, "n", 1, 60, &n);
	csrf_store_close(st);
	printf("set: %s, get: %s (%zu bytes), incr: %s (%lld)\n", csrf_reason_name(set), csrf_reason_name(get), len,
	       csrf_reason_name(incr), (long long)n);
	return set == CSRF_OK && get == CSRF_OK && len == 1 && buf[0] == 'v' && incr == CSRF_OK && n == 1 ? 0 : 1;
}
