/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * metrics.c - csrf-cgi's optional counters file (metrics_file PATH): the
 * library's csrf_metrics, one fixed-size file whatever the traffic. A
 * request's counts are gathered in memory and added to the file once, at
 * its end, under an exclusive flock, so CGI processes running at once
 * lose no count; csrf-cgi --metrics FILE reads it under a shared lock and
 * prints it in the Prometheus text format. Without metrics_file nothing
 * is written anywhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgi.h"

/* The struct is uint64 words: magic, start time, then counters, added
 * word by word. */
_Static_assert(sizeof(csrf_metrics) % sizeof(uint64_t) == 0, "csrf_metrics is made of uint64_t");
#define WORDS (sizeof(csrf_metrics) / sizeof(uint64_t))
#define FIRST_COUNTER 2

static csrf_metrics pending; /* this request's counts */
static int pending_any;

static csrf_metrics *counts(void)
{
	if (!pending_any) {
		csrf_metrics_init(&pending, 0);
		pending_any = 1;
	}
	return &pending;
}

void cgi_metrics_check(const csrf_result *res)
{
	csrf_metrics_count_check(counts(), res);
}

void cgi_metrics_verdict(csrf_metrics_verdict verdict, csrf_reason reason)
{
	csrf_metrics_count(counts(), verdict, reason);
}

void cgi_metrics_response(csrf_response_verdict verdict, const csrf_response *resp)
{
	csrf_metrics_count_response(counts(), verdict, resp);
}

static int read_all(int fd, void *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = pread(fd, (char *)buf + got, len - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = pwrite(fd, (const char *)buf + done, len - done, (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

static int lock(int fd, int how)
{
	while (flock(fd, how) != 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

int cgi_metrics_flush(const char *path)
{
	csrf_metrics file;
	struct stat st;
	int fd, rc = -1;

	if (path == NULL || !pending_any)
		return 0;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
	if (fd < 0) {
		fprintf(stderr, CGI_NAME ": cannot open the counters file %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (lock(fd, LOCK_EX) != 0 || fstat(fd, &st) != 0) {
		fprintf(stderr, CGI_NAME ": cannot lock the counters file %s: %s\n", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, CGI_NAME ": the counters file %s is not a regular file\n", path);
		goto out;
	}
	/* a new file, or one of another layout (an older csrf-cgi): counting
	 * starts again from this request */
	if (st.st_size != (off_t)sizeof file || read_all(fd, &file, sizeof file) != 0 ||
	    !csrf_metrics_valid(&file, sizeof file))
		csrf_metrics_init(&file, 0);
	uint64_t *to = (uint64_t *)&file;
	const uint64_t *from = (const uint64_t *)&pending;
	for (size_t i = FIRST_COUNTER; i < WORDS; i++)
		to[i] += from[i];
	if (write_all(fd, &file, sizeof file) != 0 || (st.st_size > (off_t)sizeof file && ftruncate(fd, sizeof file))) {
		fprintf(stderr, CGI_NAME ": cannot write the counters file %s: %s\n", path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	close(fd); /* lets the lock go */
	return rc;
}

int cgi_metrics_print(const char *path)
{
	static char text[CSRF_METRICS_TEXT_MAX];
	csrf_metrics file;
	struct stat st;
	size_t len;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0) {
		fprintf(stderr, CGI_NAME ": %s: %s (no request counted yet, or metrics_file names another file)\n",
		        path, strerror(errno));
		return 1;
	}
	int ok = lock(fd, LOCK_SH) == 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	         st.st_size == (off_t)sizeof file && read_all(fd, &file, sizeof file) == 0;
	close(fd);
	if (!ok || !csrf_metrics_valid(&file, sizeof file)) {
		fprintf(stderr, CGI_NAME ": %s is not a counters file of this csrf-cgi (%zu bytes)\n", path,
		        sizeof file);
		return 1;
	}
	if (csrf_metrics_render(&file, text, sizeof text, &len) != CSRF_OK || fwrite(text, 1, len, stdout) != len ||
	    fflush(stdout) != 0) {
		fprintf(stderr, CGI_NAME ": cannot print the counters\n");
		return 1;
	}
	return 0;
}
