/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tests/apache: preloaded into apache2 by aptest.py (LD_PRELOAD, after
 * libasan under ASan), it writes a line to the master's stderr, which is
 * its error log once the server runs, for each child the master reaps that
 * exited with a status other than 0 or was killed by a signal Apache does
 * not send at a stop or a restart: "csrf-test: apache2 child pid N exited
 * with code S" or "... exited on signal S", which aptest.py's CRASH finds.
 *
 * Apache logs a dead child only when a signal killed it, and not for
 * SIGKILL ("AH00052: child pid N exit signal Segmentation fault (11)",
 * AH00051 with a core dump: server/mpm_unix.c ap_process_child_status);
 * a child that exits with 1 (a sanitizer without abort_on_error, a
 * module's exit()) or is killed by SIGKILL leaves no line at all. The
 * master reaps its children through APR (apr_proc_wait_all_procs,
 * apr_proc_wait), which calls waitpid: this one, the first in the lookup
 * scope. Only in the process that loaded it as apache2 (the master: its
 * children fork from it, CGI programs exec and load it under their own
 * name).
 *
 * The master's other children, which a module registers with APR
 * (apr_proc_other_child_register: mod_cgid's daemon, a piped logger), are
 * not the MPM's: mod_cgid's daemon exits with -1 (255) at every stop and
 * restart. For them only a signal counts.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t master;

/* The pids of the master's other children (APR's), the last 64 registered. */
static pid_t others[64];
static unsigned nothers;

/* apr_proc_t begins with the pid; the other arguments are passed on. */
void apr_proc_other_child_register(void *proc, void *maintenance, void *data, void *write_fd, void *pool)
{
	static void (*real)(void *, void *, void *, void *, void *);

	if (real == NULL) {
		real =
		    (void (*)(void *, void *, void *, void *, void *))dlsym(RTLD_NEXT, "apr_proc_other_child_register");
	}
	if (proc && getpid() == master) {
		others[nothers++ % (sizeof(others) / sizeof(others[0]))] = *(pid_t *)proc;
	}
	if (real) {
		real(proc, maintenance, data, write_fd, pool);
	}
}

static int child_watch_other(pid_t pid)
{
	unsigned i;

	for (i = 0; i < nothers && i < sizeof(others) / sizeof(others[0]); i++) {
		if (others[i] == pid) {
			return 1;
		}
	}

	return 0;
}

__attribute__((constructor)) static void child_watch_init(void)
{
	if (strcmp(program_invocation_short_name, "apache2") == 0 ||
	    strcmp(program_invocation_short_name, "httpd") == 0) {
		master = getpid();
	}
}

/* Writes the line for a child that died abnormally; nothing for the rest:
 * exit 0 (any status of an other child), and the signals Apache sends its children at a stop (SIGTERM),
 * a restart (SIGHUP) or a graceful restart (SIGUSR1). SIGKILL is not one:
 * Apache sends it only to a child that has not stopped 9 s after SIGTERM. */
static void child_watch_note(pid_t pid, int status)
{
	char line[128];
	int n, saved = errno;

	if (WIFEXITED(status) && WEXITSTATUS(status) != 0 && !child_watch_other(pid)) {
		n = snprintf(line, sizeof(line), "csrf-test: apache2 child pid %ld exited with code %d\n", (long)pid,
		             WEXITSTATUS(status));
	} else if (WIFSIGNALED(status) && WTERMSIG(status) != SIGTERM && WTERMSIG(status) != SIGHUP &&
	           WTERMSIG(status) != SIGUSR1) {
		n = snprintf(line, sizeof(line), "csrf-test: apache2 child pid %ld exited on signal %d%s\n", (long)pid,
		             WTERMSIG(status), WCOREDUMP(status) ? " (core dumped)" : "");
	} else {
		n = 0;
	}
	if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0) {
		/* nowhere else to say it */
	}
	errno = saved;
}

pid_t waitpid(pid_t pid, int *status, int options)
{
	static pid_t (*real)(pid_t, int *, int);
	pid_t got;
	int st = 0;

	if (real == NULL) {
		real = (pid_t(*)(pid_t, int *, int))dlsym(RTLD_NEXT, "waitpid");
		if (real == NULL) {
			errno = ENOSYS;
			return -1;
		}
	}
	got = real(pid, &st, options);
	if (got > 0 && master != 0 && getpid() == master) {
		child_watch_note(got, st);
	}
	if (status) {
		*status = st;
	}

	return got;
}
