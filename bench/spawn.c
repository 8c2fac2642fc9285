/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * spawn.c - a CGI wrapper that does nothing: starts the program it is
 * given (posix_spawn, as csrf-cgi does, standard input and output
 * inherited) and returns its exit status. bench/router.sh runs it beside
 * csrf-cgi: what it adds over the bare program is what any second process
 * in front of a CGI program costs on the machine (starting and loading
 * it), the floor under csrf-cgi's own figure.
 *   spawn PROGRAM [ARG]...
 */
#include <errno.h>
#include <stddef.h>
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

int main(int argc, char **argv)
{
	pid_t pid;
	int status;

	if (argc < 2 || posix_spawn(&pid, argv[1], NULL, NULL, argv + 1, environ) != 0)
		return 127;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 127;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}
