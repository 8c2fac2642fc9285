/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * store.c - store operations per second from 1 and more threads through
 * one csrf_store: what a server's threads get from Redis (a pool of
 * connections) or from the memory store. Each thread runs the mix of a
 * request of the demo: a get of a session (present), a set of one (TTL
 * one hour) and an increment of a counter (TTL one minute), on keys of its
 * own and some shared, for SECONDS; the figure is the operations all
 * threads completed, per second. A failed operation stops the run.
 * Prints one JSON object per line: {"store":..., "threads":..., "ops":...}.
 * Usage: csrf-bench-store NAME URL SECONDS THREADS...
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "csrf_session.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct {
	csrf_store *st;
	int id;
	atomic_int *go, *stop;
	long ops;
	int failed;
} worker;

static void *run(void *p)
{
	worker *w = p;
	char key[48], val[128], buf[256];
	size_t len;
	int64_t v;

	memset(val, 's', sizeof val);
	while (!atomic_load(w->go))
		;
	for (long i = 0; !atomic_load(w->stop); i++) {
		int n = snprintf(key, sizeof key, "bench:sess:%d:%ld", w->id, i % 64);
		csrf_reason r;

		switch (i % 4) {
		case 0:
		case 2:
			r = csrf_store_get(w->st, key, (size_t)n, buf, sizeof buf, &len);
			if (r == CSRF_NOT_FOUND)
				r = CSRF_OK;
			break;
		case 1:
			r = csrf_store_set(w->st, key, (size_t)n, val, sizeof val, 3600);
			break;
		default:
			n = snprintf(key, sizeof key, "bench:fail:%ld", i % 16);
			r = csrf_store_incr(w->st, key, (size_t)n, 60, &v);
			break;
		}
		if (r != CSRF_OK) {
			fprintf(stderr, "bench-store: %s\n", csrf_reason_str(r));
			w->failed = 1;
			break;
		}
		w->ops++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	csrf_store *st = NULL;
	double seconds;
	csrf_reason r;

	if (argc < 5) {
		fprintf(stderr, "usage: csrf-bench-store NAME URL SECONDS THREADS...\n");
		return 2;
	}
	seconds = strtod(argv[3], NULL);
	r = csrf_store_open(&st, argv[2]);
	if (r != CSRF_OK) {
		fprintf(stderr, "bench-store: cannot open the store: %s\n", csrf_reason_str(r));
		return 1;
	}
	for (int a = 4; a < argc; a++) {
		int threads = (int)strtol(argv[a], NULL, 10);
		pthread_t t[64];
		worker w[64];
		atomic_int go = 0, stop = 0;
		long total = 0;
		double t0, t1;
		int failed = 0;

		if (threads < 1 || threads > 64) {
			fprintf(stderr, "bench-store: 1 to 64 threads\n");
			return 2;
		}
		for (int i = 0; i < threads; i++) {
			w[i] = (worker){st, i, &go, &stop, 0, 0};
			pthread_create(&t[i], NULL, run, &w[i]);
		}
		t0 = now_s();
		atomic_store(&go, 1);
		while ((t1 = now_s()) - t0 < seconds) {
			struct timespec ts = {0, 10000000};
			nanosleep(&ts, NULL);
		}
		atomic_store(&stop, 1);
		for (int i = 0; i < threads; i++) {
			pthread_join(t[i], NULL);
			total += w[i].ops;
			failed |= w[i].failed;
		}
		t1 = now_s();
		if (failed)
			return 1;
		printf("{\"store\":\"%s\",\"threads\":%d,\"ops\":%.0f}\n", argv[1], threads, (double)total / (t1 - t0));
		fflush(stdout);
	}
	csrf_store_close(st);
	return 0;
}
