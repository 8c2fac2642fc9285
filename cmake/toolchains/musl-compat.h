/* SPDX-License-Identifier: BSD-2-Clause */
/* musl-compat.h - what glibc has and musl 1.2.3 (Debian's musl-tools)
 * lacks, for the static musl build only (x86_64-linux-musl.cmake includes
 * it in every file with -include): renameat2(2), through its system call.
 * musl-gcc sees no kernel headers, so RENAME_NOREPLACE is defined here with
 * the kernel's value. */
#ifndef CSRF_MUSL_COMPAT_H
#define CSRF_MUSL_COMPAT_H
#include <sys/syscall.h>
#include <unistd.h>
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
static inline int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags)
{
	return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
}
#endif
