/* SPDX-License-Identifier: BSD-2-Clause */
/* testutil.c - guard pages and counting allocators for the unit tests. */
#include "testutil.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if !(defined(CSRF_CRYPTO_BUILTIN) && CSRF_CRYPTO_BUILTIN) && !(defined(CSRF_CRYPTO_MBEDTLS) && CSRF_CRYPTO_MBEDTLS)
#include <openssl/crypto.h>
#endif

typedef struct {
	void *base;
	size_t total;
} guard_hdr;

/* Mappings given back by tu_guard_free, kept for the next copy of the
 * same size: a test that places thousands of inputs flush against a guard
 * page (every shift, every cut) would otherwise spend its time in mmap,
 * mprotect and munmap (about 40 us a munmap on a virtual machine: 87 of
 * unit.test_inject's 117 s were the kernel's). A kept mapping keeps its
 * PROT_NONE page; its body is zeroed again before reuse, as a new
 * mapping's is. */
#define TU_GUARD_KEPT 64
static struct {
	void *base;
	size_t total;
} guard_kept[TU_GUARD_KEPT];
static size_t guard_nkept;
static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;

char *tu_guard_copy(const void *data, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t need = len + sizeof(guard_hdr);
	size_t body = (need + page - 1) / page * page;
	size_t total = body + page;
	unsigned char *base = NULL;
	pthread_mutex_lock(&guard_lock);
	for (size_t i = guard_nkept; i-- > 0;)
		if (guard_kept[i].total == total) {
			base = guard_kept[i].base;
			guard_kept[i] = guard_kept[--guard_nkept];
			break;
		}
	pthread_mutex_unlock(&guard_lock);
	if (base) {
		memset(base, 0, body);
	} else {
		base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (base == MAP_FAILED) {
			perror("mmap");
			abort();
		}
		if (mprotect(base + body, page, PROT_NONE) != 0) {
			perror("mprotect");
			abort();
		}
	}
	unsigned char *p = base + body - len;
	guard_hdr h = {base, total};
	memcpy(base, &h, sizeof h);
	if (len)
		memcpy(p, data, len);
	return (char *)p;
}

void tu_guard_free(char *p)
{
	if (!p)
		return;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	/* The header sits at the start of the mapping, a page boundary below
	 * the data; p - 1 is inside the mapping even for an empty copy, whose
	 * p is the guard page itself. Walk back page by page. */
	unsigned char *q = (unsigned char *)((uintptr_t)(p - 1) & ~(uintptr_t)(page - 1));
	for (;;) {
		guard_hdr h;
		memcpy(&h, q, sizeof h);
		if (h.base == q) {
			pthread_mutex_lock(&guard_lock);
			int kept = guard_nkept < TU_GUARD_KEPT;
			if (kept) {
				guard_kept[guard_nkept].base = h.base;
				guard_kept[guard_nkept++].total = h.total;
			}
			pthread_mutex_unlock(&guard_lock);
			if (!kept)
				munmap(h.base, h.total);
			return;
		}
		q -= page;
	}
}

static void *tu_alloc(size_t n, void *ud)
{
	tu_alloc_state *st = ud;
	st->allocs++;
	if (st->fail_at && st->allocs == st->fail_at)
		return NULL;
	void *p = malloc(n);
	if (p)
		st->live++;
	return p;
}

static void tu_free(void *p, void *ud)
{
	tu_alloc_state *st = ud;
	if (!p)
		return;
	st->frees++;
	st->live--;
	free(p);
}

csrf_allocator tu_allocator(tu_alloc_state *st)
{
	csrf_allocator a = {tu_alloc, tu_free, st};
	return a;
}

#if (defined(CSRF_CRYPTO_BUILTIN) && CSRF_CRYPTO_BUILTIN) || (defined(CSRF_CRYPTO_MBEDTLS) && CSRF_CRYPTO_MBEDTLS)
/* The builtin and mbedTLS crypto backends: no libcrypto, nothing
 * of it to count. */
int tu_count_openssl_allocs(void)
{
	return 1;
}

size_t tu_openssl_allocs(void)
{
	return 0;
}
#else
static size_t ossl_allocs;

static void *ossl_malloc(size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	__atomic_add_fetch(&ossl_allocs, 1, __ATOMIC_RELAXED);
	return malloc(n);
}

static void *ossl_realloc(void *p, size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	__atomic_add_fetch(&ossl_allocs, 1, __ATOMIC_RELAXED);
	return realloc(p, n);
}

static void ossl_free(void *p, const char *file, int line)
{
	(void)file;
	(void)line;
	free(p);
}

int tu_count_openssl_allocs(void)
{
	return CRYPTO_set_mem_functions(ossl_malloc, ossl_realloc, ossl_free);
}

size_t tu_openssl_allocs(void)
{
	return __atomic_load_n(&ossl_allocs, __ATOMIC_RELAXED);
}
#endif

/* The kernel's headers: a musl toolchain (the router build's x86 one)
 * has none. */
#if defined(__has_include) && __has_include(<linux/filter.h>) && __has_include(<linux/seccomp.h>)
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

int tu_no_getrandom(void)
{
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getrandom, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof f / sizeof f[0], f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
		return -1;
	return 0;
}
#else
int tu_no_getrandom(void)
{
	return -1;
}
#endif

/* ---- the dead stack ---- */

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define TU_MEMCHECK 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define TU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#define TU_ASAN 1
#endif
#endif
#if defined(__GNUC__) || defined(__clang__)
#define TU_NO_ASAN __attribute__((no_sanitize_address))
#else
#define TU_NO_ASAN
#endif

#include <pthread.h>
#include <signal.h>

/* room for the sanitized build's frames and glibc's thread block, which
 * it puts at the top of a stack it is given; below it the thread's
 * signal stack */
#define TU_DEAD_STACK (256 * 1024)
#define TU_ALT_STACK (64 * 1024)
#define TU_WINDOWS_MAX 4096

typedef struct {
	void (*fn)(void *);
	void *arg;
} dead_run;

static void *dead_thread(void *p)
{
	dead_run *r = p;
	r->fn(r->arg);
	return NULL;
}

void tu_in_thread(void (*fn)(void *), void *arg)
{
	pthread_t t;
	dead_run r = {fn, arg};
	if (pthread_create(&t, NULL, dead_thread, &r) != 0 || pthread_join(t, NULL) != 0) {
		fprintf(stderr, "tu_in_thread: no thread\n");
		abort();
	}
}

typedef struct {
	dead_run run;
	uint8_t *alt;
} dead_spill_run;

static void spill_handler(int sig)
{
	(void)sig;
}

/* fn, then every register spilled where the scan reads: a signal's frame,
 * on a signal stack of the mapping's own (below the thread's stack, so
 * that it covers none of fn's frames). A register that still holds a
 * secret once fn returned is what the next signal, lazy binding or
 * context switch to user code writes to some stack. */
static void *dead_spill_thread(void *p)
{
	dead_spill_run *r = p;
	stack_t ss = {.ss_sp = r->alt, .ss_size = TU_ALT_STACK, .ss_flags = 0}, old;
	if (sigaltstack(&ss, &old) != 0)
		abort();
	r->run.fn(r->run.arg);
	pthread_kill(pthread_self(), SIGUSR2);
	if (sigaltstack(&old, NULL) != 0)
		abort();
	return NULL;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The windows of TU_DEAD_RUN bytes of s, in order (swap 0) or with each
 * word's bytes reversed (swap 1), as the 8 bytes read from memory;
 * windows of one byte value repeated are left out (a zero run is
 * everywhere). */
static size_t windows_of(const uint8_t *s, size_t len, int swap, uint64_t *w, size_t at, size_t *owner, size_t id)
{
	uint8_t b[TU_WINDOWS_MAX];
	if (swap)
		len &= ~(size_t)3;
	if (len < TU_DEAD_RUN || len > sizeof b)
		return at;
	for (size_t i = 0; i < len; i++)
		b[i] = swap ? s[(i & ~(size_t)3) + 3 - (i & 3)] : s[i];
	for (size_t i = 0; i + TU_DEAD_RUN <= len && at < TU_WINDOWS_MAX; i++) {
		int same = 1;
		for (size_t k = 1; k < TU_DEAD_RUN; k++)
			same &= b[i + k] == b[i];
		if (same)
			continue;
		memcpy(&w[at], b + i, TU_DEAD_RUN);
		owner[at++] = id;
	}
	return at;
}

/* Read past the sanitizer: what is left of the frames is not the
 * program's memory any more as ASan tracks it. */
TU_NO_ASAN static size_t dead_scan(const volatile uint8_t *stack, size_t size, const uint64_t *w, size_t nw,
                                   size_t *first_at, size_t *first_w)
{
	size_t hits = 0;
	for (size_t i = 0; i + TU_DEAD_RUN <= size; i++) {
		uint8_t b[TU_DEAD_RUN];
		uint64_t v;
		for (size_t k = 0; k < TU_DEAD_RUN; k++)
			b[k] = stack[i + k];
		memcpy(&v, b, sizeof v);
		if (!v)
			continue;
		size_t lo = 0, hi = nw;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (w[mid] < v)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < nw && w[lo] == v) {
			if (!hits) {
				*first_at = i;
				*first_w = lo;
			}
			hits++;
		}
	}
	return hits;
}

typedef struct {
	void (*after)(void *);
	void *arg;
	const tu_secret *secrets;
	size_t n;
	const uint8_t *map;
	size_t size;
	size_t hits, at, which;
} dead_look;

/* The windows of the secrets, and the scan: on a thread of their own, as
 * the preparation of the secrets is (tu_in_thread), so that the thread
 * that makes the next call's thread never loads a byte of them. */
static void dead_look_run(void *p)
{
	static uint64_t w[TU_WINDOWS_MAX], sorted[TU_WINDOWS_MAX];
	static size_t owner[TU_WINDOWS_MAX];
	dead_look *l = p;
	size_t nw = 0, wi = 0;
	if (l->after)
		l->after(l->arg);
	for (size_t i = 0; i < l->n; i++)
		for (int swap = 0; swap < 2; swap++)
			nw = windows_of(l->secrets[i].p, l->secrets[i].len, swap, w, nw, owner, i);
	memcpy(sorted, w, nw * sizeof w[0]);
	qsort(sorted, nw, sizeof sorted[0], u64_cmp);
	l->hits = dead_scan(l->map, l->size, sorted, nw, &l->at, &wi);
	for (size_t i = 0; l->hits && i < nw; i++)
		if (w[i] == sorted[wi]) {
			l->which = owner[i];
			break;
		}
	memset(w, 0, sizeof w);
	memset(sorted, 0, sizeof sorted);
}

size_t tu_dead_stack(void (*fn)(void *), void *arg, void (*after)(void *), const tu_secret *secrets, size_t n,
                     size_t *first, size_t *which)
{
	const size_t size = TU_ALT_STACK + TU_DEAD_STACK;
	uint8_t *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		abort();
	}
	struct sigaction sa, old_sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = spill_handler;
	sa.sa_flags = SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	pthread_attr_t attr;
	pthread_t t;
	dead_spill_run r = {{fn, arg}, map};
	if (sigaction(SIGUSR2, &sa, &old_sa) != 0 || pthread_attr_init(&attr) != 0 ||
	    pthread_attr_setstack(&attr, map + TU_ALT_STACK, TU_DEAD_STACK) != 0 ||
	    pthread_create(&t, &attr, dead_spill_thread, &r) != 0 || pthread_join(t, NULL) != 0 ||
	    sigaction(SIGUSR2, &old_sa, NULL) != 0) {
		fprintf(stderr, "tu_dead_stack: no thread\n");
		abort();
	}
	pthread_attr_destroy(&attr);
#ifdef TU_MEMCHECK
	/* memcheck holds what lies below a stack pointer as unaddressable */
	VALGRIND_MAKE_MEM_DEFINED(map, size);
#endif
	dead_look l = {after, arg, secrets, n, map, size, 0, 0, 0};
	tu_in_thread(dead_look_run, &l);
	if (first)
		*first = size - l.at;
	if (which)
		*which = l.which;
#ifdef TU_ASAN
	/* the frames' red zones may still be marked in the shadow: a later
	 * mapping at this address must not inherit them */
	ASAN_UNPOISON_MEMORY_REGION(map, size);
#endif
	munmap(map, size);
	return l.hits;
}

int tu_dead_stack_found(const char *name, void (*fn)(void *), void *arg, void (*after)(void *),
                        const tu_secret *secrets, size_t n)
{
	size_t at = 0, which = 0;
	size_t hits = tu_dead_stack(fn, arg, after, secrets, n, &at, &which);
	if (hits)
		printf("%s: %zu places on the dead stack hold secret %zu, the first %zu bytes below the top\n", name,
		       hits, which, at);
	return hits != 0;
}
