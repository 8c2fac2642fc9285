/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * testutil.h - helpers shared by the unit tests: input placed flush
 * against an unreadable page (an over-read crashes the test),
 * allocators that count or fail on demand, a process without
 * getrandom, and the secrets a call leaves on its dead stack.
 */
#ifndef CSRF_TESTUTIL_H
#define CSRF_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "csrf.h"

/* A copy of data[0..len) whose last byte is followed by a PROT_NONE page.
 * Free with tu_guard_free. Never NULL (aborts on mmap failure). */
char *tu_guard_copy(const void *data, size_t len);
void tu_guard_free(char *p);

/* A csrf_allocator that counts calls and fails the fail_at-th allocation
 * (1-based; 0 never fails). */
typedef struct {
	size_t allocs;
	size_t frees;
	size_t fail_at;
	size_t live;
} tu_alloc_state;
csrf_allocator tu_allocator(tu_alloc_state *st);

/* Counts libcrypto's allocations from now on (call before any other
 * OpenSSL use in the process; returns 0 when OpenSSL refused). With the
 * builtin crypto backend there is no libcrypto: 1, and always 0 counted. */
int tu_count_openssl_allocs(void);
size_t tu_openssl_allocs(void);

/* From now on getrandom(2) answers ENOSYS in this process, as on a
 * kernel before Linux 3.17 (a seccomp filter; meant for a forked child).
 * 0 on success; -1 when the filter was refused, or in a build without
 * the kernel's headers (a musl toolchain). */
int tu_no_getrandom(void);

/* Secret material to look for on a dead stack: len bytes at p. */
typedef struct {
	const void *p;
	size_t len;
} tu_secret;

/* Runs fn(arg) on a thread of its own whose stack (mapped here, zeroed)
 * is read once the thread has ended: how many places in that stack hold
 * TU_DEAD_RUN consecutive bytes of one of the n secrets, in order or with
 * each 4-byte word's bytes reversed (a SHA-256 message or state word in
 * the CPU's order). fn must take its secrets from arg, never copy them
 * to its own stack, and the caller must not have held them (the thread
 * starts with the caller's registers: see tu_in_thread); after (may be
 * NULL) runs once fn returned, on the thread that then reads secrets and
 * the stack, to fill secrets that only fn's outputs tell (a secret the
 * call made); *first (may be NULL) is the first place's offset from
 * the stack's top and *which its secret, for a message that names no
 * byte. Aborts when the thread cannot be made. */
#define TU_DEAD_RUN 8
/* tu_dead_stack, with a line naming the case (name, and which of the
 * secrets: its index) when something is found: 1 then, else 0. */
int tu_dead_stack_found(const char *name, void (*fn)(void *), void *arg, void (*after)(void *),
                        const tu_secret *secrets, size_t n);
/* fn(arg) on a thread of its own, joined: work whose secrets must not
 * stay in the calling thread's registers, which a thread it creates
 * next starts with (and may spill onto its stack). */
void tu_in_thread(void (*fn)(void *), void *arg);
size_t tu_dead_stack(void (*fn)(void *), void *arg, void (*after)(void *), const tu_secret *secrets, size_t n,
                     size_t *first, size_t *which);

#endif
