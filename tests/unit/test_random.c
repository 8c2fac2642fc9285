/* SPDX-License-Identifier: BSD-2-Clause */
/* test_random.c - src/random.c: csrf_random and csrf_secret_new from the
 * CSPRNG, and the masking pads (each used once, the pool refilled). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"
#include "testutil.h"

static void test_random(void **state)
{
	(void)state;
	uint8_t s[CSRF_SECRET_LEN], s2[CSRF_SECRET_LEN];
	/* n == 0 is fine, NULL with n is not, two draws differ */
	assert_int_equal(csrf_random(NULL, 0), CSRF_OK);
	assert_int_equal(csrf_random(NULL, 1), CSRF_ERR_ARG);
	assert_int_equal(csrf_secret_new(NULL), CSRF_ERR_ARG);
	assert_int_equal(csrf_secret_new(s), CSRF_OK);
	assert_int_equal(csrf_secret_new(s2), CSRF_OK);
	assert_memory_not_equal(s, s2, sizeof s);
}

/* Pads: never the same twice across many draws, over the pool's refills,
 * and a request larger than the pool is served too. */
static void test_pads(void **state)
{
	(void)state;
	enum { N = 400, LEN = 54 };
	static uint8_t pads[N][LEN];
	for (size_t i = 0; i < N; i++)
		assert_int_equal(csrfi_random_pad(pads[i], LEN), CSRF_OK);
	for (size_t i = 0; i < N; i++)
		for (size_t j = 0; j < i; j++)
			assert_memory_not_equal(pads[i], pads[j], LEN);
	static uint8_t big[10000], zero[10000];
	assert_int_equal(csrfi_random_pad(big, sizeof big), CSRF_OK);
	assert_memory_not_equal(big, zero, sizeof big);
}

/* A kernel without getrandom (before Linux 3.17, ENOSYS): a seccomp
 * filter makes the system call answer ENOSYS in a child. csrf_random and
 * csrf_secret_new fail with CSRF_ERR_RANDOM and errno ENOSYS, write
 * nothing, and no other source is tried (the filter would let /dev/urandom
 * be opened: the result says whether a fallback ran). */
/* fork() copies the pad pool: the child must not cut the pads the parent
 * cuts next (the pool is refilled in a child). */
static void test_pads_differ_after_fork(void **state)
{
	(void)state;
	enum { LEN = 54 };
	uint8_t warm[LEN], mine[LEN], theirs[LEN];
	int fds[2];

	assert_int_equal(csrfi_random_pad(warm, LEN), CSRF_OK); /* fills the pool */
	assert_int_equal(pipe(fds), 0);
	pid_t kid = fork();
	assert_true(kid >= 0);
	if (kid == 0) {
		uint8_t pad[LEN];
		int ok = csrfi_random_pad(pad, LEN) == CSRF_OK && write(fds[1], pad, LEN) == LEN;
		_exit(ok ? 0 : 1);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], theirs, LEN), LEN);
	close(fds[0]);
	int status = -1;
	assert_int_equal(waitpid(kid, &status, 0), kid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(csrfi_random_pad(mine, LEN), CSRF_OK);
	if (memcmp(mine, theirs, LEN) == 0)
		fail_msg("parent and child cut the same pad after fork");
}

static void test_no_getrandom_is_an_error(void **state)
{
	(void)state;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (tu_no_getrandom() != 0)
			_exit(10);
		uint8_t buf[CSRF_SECRET_LEN], zero[CSRF_SECRET_LEN] = {0};
		memset(buf, 0, sizeof buf);
		errno = 0;
		if (csrf_random(buf, sizeof buf) != CSRF_ERR_RANDOM || errno != ENOSYS)
			_exit(1);
		if (memcmp(buf, zero, sizeof buf) != 0)
			_exit(2);
		if (csrf_secret_new(buf) != CSRF_ERR_RANDOM || memcmp(buf, zero, sizeof buf) != 0)
			_exit(3);
		if (strstr(csrf_reason_str(CSRF_ERR_RANDOM), "getrandom") == NULL)
			_exit(4);
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_random),
	    cmocka_unit_test(test_pads),
	    cmocka_unit_test(test_pads_differ_after_fork),
	    cmocka_unit_test(test_no_getrandom_is_an_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
