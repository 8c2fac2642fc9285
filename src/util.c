/* SPDX-License-Identifier: BSD-2-Clause */
/* util.c - constant-time comparison, wiping, the clock and malloc as an
 * allocator: small helpers every other file of src/ uses. */
#include "internal.h"

#include <stdlib.h>
#include <time.h>

static void *default_alloc(size_t n, void *ud)
{
	(void)ud;
	return malloc(n);
}

static void default_free(void *p, void *ud)
{
	(void)ud;
	free(p);
}

const csrf_allocator csrfi_default_allocator = {default_alloc, default_free, NULL};

#if (defined(CSRF_CRYPTO_BUILTIN) && CSRF_CRYPTO_BUILTIN) || (defined(CSRF_CRYPTO_MBEDTLS) && CSRF_CRYPTO_MBEDTLS)
/* Without libcrypto (builtin and mbedTLS backends). Every byte is read and or-ed in whatever the data; the volatile
 * accumulator keeps the compiler from stopping at the first difference. */
int csrfi_ct_eq(const void *a, const void *b, size_t n)
{
	const uint8_t *x = a, *y = b;
	volatile uint8_t d = 0;

	for (size_t i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}
#else
#include <openssl/crypto.h>

int csrfi_ct_eq(const void *a, const void *b, size_t n)
{
	return CRYPTO_memcmp(a, b, n) == 0;
}
#endif

#if !(defined(__GNUC__) || defined(__clang__))
/* glibc's explicit_bzero is memset that the compiler may not drop (GCC
 * and clang get the inline one of internal.h). */
void csrfi_wipe(void *p, size_t n)
{
	if (p && n)
		explicit_bzero(p, n);
}
#endif

/* The vector registers zeroed. A secret copied or hashed leaves its bytes
 * (or, in SHA-NI's message registers, the last schedule words, from which
 * the block can be computed back) in registers that no call needs to
 * preserve; the first signal, lazily bound call or xsave that follows
 * writes them into the stack below the caller's. csrfi_wipe cannot reach
 * them: the public calls that touched a secret end with this. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx"))) static void wipe_ymm(void)
{
	__asm__ __volatile__("vzeroall" ::
	                         : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
	                           "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "memory");
}

static void wipe_xmm(void)
{
	__asm__ __volatile__("pxor %%xmm0, %%xmm0\n\tpxor %%xmm1, %%xmm1\n\tpxor %%xmm2, %%xmm2\n\t"
	                     "pxor %%xmm3, %%xmm3\n\tpxor %%xmm4, %%xmm4\n\tpxor %%xmm5, %%xmm5\n\t"
	                     "pxor %%xmm6, %%xmm6\n\tpxor %%xmm7, %%xmm7\n\tpxor %%xmm8, %%xmm8\n\t"
	                     "pxor %%xmm9, %%xmm9\n\tpxor %%xmm10, %%xmm10\n\tpxor %%xmm11, %%xmm11\n\t"
	                     "pxor %%xmm12, %%xmm12\n\tpxor %%xmm13, %%xmm13\n\tpxor %%xmm14, %%xmm14\n\t"
	                     "pxor %%xmm15, %%xmm15" ::
	                         : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
	                           "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "memory");
}

/* glibc's EVEX string functions keep their data in ymm16..31, which
 * vzeroall leaves */
__attribute__((target("avx512f"))) static void wipe_zmm_high(void)
{
	__asm__ __volatile__("vpxord %%zmm16, %%zmm16, %%zmm16\n\tvpxord %%zmm17, %%zmm17, %%zmm17\n\t"
	                     "vpxord %%zmm18, %%zmm18, %%zmm18\n\tvpxord %%zmm19, %%zmm19, %%zmm19\n\t"
	                     "vpxord %%zmm20, %%zmm20, %%zmm20\n\tvpxord %%zmm21, %%zmm21, %%zmm21\n\t"
	                     "vpxord %%zmm22, %%zmm22, %%zmm22\n\tvpxord %%zmm23, %%zmm23, %%zmm23\n\t"
	                     "vpxord %%zmm24, %%zmm24, %%zmm24\n\tvpxord %%zmm25, %%zmm25, %%zmm25\n\t"
	                     "vpxord %%zmm26, %%zmm26, %%zmm26\n\tvpxord %%zmm27, %%zmm27, %%zmm27\n\t"
	                     "vpxord %%zmm28, %%zmm28, %%zmm28\n\tvpxord %%zmm29, %%zmm29, %%zmm29\n\t"
	                     "vpxord %%zmm30, %%zmm30, %%zmm30\n\tvpxord %%zmm31, %%zmm31, %%zmm31" ::
	                         : "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24",
	                           "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31", "memory");
}

void csrfi_wipe_regs(void)
{
	if (__builtin_cpu_supports("avx"))
		wipe_ymm();
	else
		wipe_xmm();
	if (__builtin_cpu_supports("avx512f"))
		wipe_zmm_high();
}
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
void csrfi_wipe_regs(void)
{
	__asm__ __volatile__("movi v0.16b, #0\n\tmovi v1.16b, #0\n\tmovi v2.16b, #0\n\tmovi v3.16b, #0\n\t"
	                     "movi v4.16b, #0\n\tmovi v5.16b, #0\n\tmovi v6.16b, #0\n\tmovi v7.16b, #0\n\t"
	                     "movi v16.16b, #0\n\tmovi v17.16b, #0\n\tmovi v18.16b, #0\n\tmovi v19.16b, #0\n\t"
	                     "movi v20.16b, #0\n\tmovi v21.16b, #0\n\tmovi v22.16b, #0\n\tmovi v23.16b, #0\n\t"
	                     "movi v24.16b, #0\n\tmovi v25.16b, #0\n\tmovi v26.16b, #0\n\tmovi v27.16b, #0\n\t"
	                     "movi v28.16b, #0\n\tmovi v29.16b, #0\n\tmovi v30.16b, #0\n\tmovi v31.16b, #0" ::
	                         : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v16", "v17", "v18", "v19", "v20",
	                           "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31",
	                           "memory");
}
#elif defined(__arm__) && defined(__ARM_FP) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#include <sys/auxv.h>
#ifndef HWCAP_VFPD32
#define HWCAP_VFPD32 (1 << 19)
#endif
/* 32-bit ARM (armhf): glibc's memcpy copies through the VFP registers.
 * d0-d7 are the caller's to lose (AAPCS keeps d8-d15), d16-d31 exist
 * only on a CPU with 32 of them (VFP-D32, every NEON one). */
static void wipe_d0_7(void)
{
	__asm__ __volatile__("vmov d0, %0, %0\n\tvmov d1, %0, %0\n\tvmov d2, %0, %0\n\tvmov d3, %0, %0\n\tvmov d4, %0, "
	                     "%0\n\tvmov d5, %0, %0\n\tvmov d6, %0, %0\n\tvmov d7, %0, %0" ::"r"(0u)
	                     : "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "memory");
}

__attribute__((target("fpu=neon"))) static void wipe_d16_31(void)
{
	__asm__ __volatile__("vmov.i64 d16, #0\n\tvmov.i64 d17, #0\n\tvmov.i64 d18, #0\n\tvmov.i64 d19, #0\n\tvmov.i64 "
	                     "d20, #0\n\tvmov.i64 d21, #0\n\tvmov.i64 d22, #0\n\tvmov.i64 d23, #0\n\tvmov.i64 d24, "
	                     "#0\n\tvmov.i64 d25, #0\n\tvmov.i64 d26, #0\n\tvmov.i64 d27, #0\n\tvmov.i64 d28, "
	                     "#0\n\tvmov.i64 d29, #0\n\tvmov.i64 d30, #0\n\tvmov.i64 d31, #0" ::
	                         : "d16", "d17", "d18", "d19", "d20", "d21", "d22", "d23", "d24", "d25", "d26", "d27",
	                           "d28", "d29", "d30", "d31", "memory");
}

void csrfi_wipe_regs(void)
{
	wipe_d0_7();
	if (getauxval(AT_HWCAP) & HWCAP_VFPD32)
		wipe_d16_31();
}
#else
/* other CPUs: nothing done (MIPS routers: no vector unit the library or
 * its libc uses for these copies) */
void csrfi_wipe_regs(void)
{
}
#endif

int64_t csrfi_now(int64_t now)
{
	if (now)
		return now;
	/* Tokens count seconds: the coarse clock (the last tick, no
	 * hardware read) is exact enough and cheaper. */
	struct timespec ts;
	/* A kernel without the coarse clock (old or emulated router
	 * kernels) gets the ordinary one; should that fail too, time()'s -1
	 * makes every token look issued in the future or long expired:
	 * refused, never accepted by accident. */
	if (clock_gettime(CLOCK_REALTIME_COARSE, &ts) != 0)
		return (int64_t)time(NULL);
	return (int64_t)ts.tv_sec;
}
