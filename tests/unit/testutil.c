/* SPDX-License-Identifier: BSD-2-Clause */
/* testutil.c - guard pages and counting allocators for the unit tests. */
#include "testutil.h"

#include <errno.h>
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

char *tu_guard_copy(const void *data, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t need = len + sizeof(guard_hdr);
	size_t body = (need + page - 1) / page * page;
	size_t total = body + page;
	unsigned char *base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		abort();
	}
	if (mprotect(base + body, page, PROT_NONE) != 0) {
		perror("mprotect");
		abort();
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
