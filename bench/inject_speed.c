/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * inject_speed.c - the injector's own throughput over pages, next to
 * memchr over the same bytes (the physical limit of a scan) and next to
 * the least any reader that goes from tag to tag must do: find each '<'
 * and the '>' after it, with memchr. For each page file given: one JSON
 * line {"page", "bytes", "chunk", "tags", "scan", "inject_bpc", "memchr_bpc",
 * "tags_bpc"} in bytes per cycle (the time stamp counter), the best of
 * ITERS runs (default 200), fed in chunks of CHUNK bytes (default 8192,
 * an nginx buffer). "scan" names the path of the injector's block scanner
 * (src/inject_scan.c) the run used: CSRF_SCAN=scalar|portable|sse2|avx2|neon
 * measures one.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "csrf.h"
#include "inject_shared.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static uint64_t ticks(void)
{
	return __rdtsc();
}
#define UNIT "cycle"
#else
static uint64_t ticks(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#define UNIT "ns"
#endif

static int sink(void *ud, const char *p, size_t n, int inserted)
{
	(void)p;
	(void)inserted;
	*(size_t *)ud += n;
	return 0;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *b = malloc(cap);
	size_t r;
	while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			char *nb = realloc(b, cap *= 2);
			if (!nb) {
				free(b);
				b = NULL;
			}
			b = nb;
		}
	}
	fclose(f);
	*len = n;
	return b;
}

int main(int argc, char **argv)
{
	const char *it = getenv("ITERS"), *ch = getenv("CHUNK");
	long iters = it ? strtol(it, NULL, 10) : 200, chunk = ch ? strtol(ch, NULL, 10) : 8192;
	if (iters < 1 || chunk < 1)
		return 2;
	void *mem = malloc(csrf_inject_size());
	csrf_inject *inj;
	if (!mem || csrf_inject_init(mem, csrf_inject_size(), "http://127.0.0.1:8080", 21, "csrf_bench", 10,
	                             "bench-token-0123456789", 22, &inj) != CSRF_OK)
		return 2;
	for (int a = 1; a < argc; a++) {
		size_t len;
		char *page = slurp(argv[a], &len);
		if (!page || len == 0) {
			fprintf(stderr, "inject_speed: cannot read %s\n", argv[a]);
			return 1;
		}
		uint64_t best_inj = UINT64_MAX, best_mem = UINT64_MAX, best_tags = UINT64_MAX;
		size_t out = 0, found = 0, tags = 0;
		for (long k = 0; k < iters; k++) {
			uint64_t t0 = ticks();
			for (size_t off = 0; off < len; off += (size_t)chunk) {
				size_t n = len - off < (size_t)chunk ? len - off : (size_t)chunk;
				if (csrf_inject_feed(inj, page + off, n, sink, &out) != CSRF_OK)
					return 1;
			}
			unsigned count;
			if (csrf_inject_finish(inj, sink, &out, &count) != CSRF_OK)
				return 1;
			uint64_t t1 = ticks();
			for (size_t off = 0; off < len; off += (size_t)chunk) {
				size_t n = len - off < (size_t)chunk ? len - off : (size_t)chunk;
				found += memchr(page + off, 0x01, n) != NULL;
			}
			uint64_t t2 = ticks();
			tags = 0;
			for (const char *q = page, *e = page + len; (q = memchr(q, '<', (size_t)(e - q))) != NULL;) {
				if ((q = memchr(q + 1, '>', (size_t)(e - q - 1))) == NULL)
					break;
				q++;
				tags++;
			}
			uint64_t t3 = ticks();
			if (t1 - t0 < best_inj)
				best_inj = t1 - t0;
			if (t2 - t1 < best_mem)
				best_mem = t2 - t1;
			if (t3 - t2 < best_tags)
				best_tags = t3 - t2;
		}
		const char *name = strrchr(argv[a], '/');
		name = name ? name + 1 : argv[a];
		printf("{\"page\":\"%s\",\"bytes\":%zu,\"chunk\":%ld,\"tags\":%zu,\"scan\":\"%s\",\"unit\":\"%s\","
		       "\"inject_bpc\":%.3f,"
		       "\"memchr_bpc\":%.3f,\"tags_bpc\":%.3f,\"check\":%zu}\n",
		       name, len, chunk, tags, csrfi_inject_scan_name(INJ_SCAN_BEST), UNIT,
		       (double)len / (double)(best_inj ? best_inj : 1), (double)len / (double)(best_mem ? best_mem : 1),
		       (double)len / (double)(best_tags ? best_tags : 1), (out + found) % 2);
		free(page);
	}
	free(mem);
	return 0;
}
