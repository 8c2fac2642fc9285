/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * csrf-cgi.c - a CGI interpreter that puts libcsrf in front of an
 * unchanged CGI program (the admin pages of routers behind busybox httpd,
 * lighttpd or uhttpd). The server runs csrf-cgi instead of the program;
 * csrf-cgi hands the request, as the CGI environment describes it, to
 * csrf_check, answers a rejection itself (the program never runs), and
 * otherwise runs the program (run.c). The library decides everything;
 * this file translates the environment and reads the body when asked.
 *
 *   csrf-cgi [--config FILE] [PROGRAM]
 *
 * The configuration is --config FILE, else $CSRF_CGI_CONFIG, else
 * /etc/csrf-cgi.conf; PROGRAM is the argument (what busybox httpd and
 * lighttpd pass an interpreter), else $SCRIPT_FILENAME.
 *
 * unsafe_get is a setting of the whole library context; csrf-cgi answers
 * one request per process, so it turns it on for this request's context
 * when the request runs one of the unsafe_get programs (by SCRIPT_NAME, or
 * by a path at or below an unsafe_get path).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cgi.h"

extern char **environ;

static const char usage[] = "usage: csrf-cgi [--config FILE] [PROGRAM]\n"
                            "       csrf-cgi --metrics FILE\n"
                            "  run by a web server as the CGI interpreter of PROGRAM (default $SCRIPT_FILENAME);\n"
                            "  configuration: --config FILE, else $CSRF_CGI_CONFIG, else " CGI_DEFAULT_CONFIG "\n"
                            "  --metrics FILE prints the counters file (metrics_file) as Prometheus text\n";

static void header(csrf_request *req, const char *name, size_t name_len, const char *value)
{
	if (csrf_request_header(req, name, name_len, value, strlen(value)) != CSRF_OK)
		abort(); /* only for NULL arguments, which cannot happen here */
}

/* Every HTTP_* variable back into the header it came from
 * (HTTP_SEC_FETCH_SITE: Sec-Fetch-Site), and CONTENT_TYPE and
 * CONTENT_LENGTH. HTTP_CONTENT_TYPE and HTTP_CONTENT_LENGTH, which some
 * servers add beside them, are the same headers and are skipped. The
 * names live in one block that outlives req. */
static char *request_headers(csrf_request *req)
{
	size_t total = 1;
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "HTTP_", 5) == 0)
			total += strcspn(*e, "=") + 1;
	char *names = malloc(total), *next = names;
	if (names == NULL)
		return NULL;
	for (char **e = environ; *e; e++) {
		const char *s = *e, *eq = strchr(s, '=');
		if (strncmp(s, "HTTP_", 5) != 0 || eq == NULL)
			continue;
		size_t len = (size_t)(eq - s) - 5;
		if ((len == 12 && memcmp(s + 5, "CONTENT_TYPE", 12) == 0) ||
		    (len == 14 && memcmp(s + 5, "CONTENT_LENGTH", 14) == 0))
			continue;
		for (size_t i = 0; i < len; i++) {
			char c = s[5 + i];
			int first = i == 0 || s[4 + i] == '_';
			if (c == '_')
				c = '-';
			else if (first && c >= 'a' && c <= 'z')
				c = (char)(c - 'a' + 'A');
			else if (!first && c >= 'A' && c <= 'Z')
				c = (char)(c - 'A' + 'a');
			next[i] = c;
		}
		header(req, next, len, eq + 1);
		next += len;
	}
	const char *ct = getenv("CONTENT_TYPE"), *cl = getenv("CONTENT_LENGTH");
	if (ct != NULL)
		header(req, "Content-Type", 12, ct);
	if (cl != NULL)
		header(req, "Content-Length", 14, cl);
	return names;
}

/* SCRIPT_NAME PATH_INFO, with '?' and '#' (which the server decoded)
 * encoded again so they cannot start a query, then ?QUERY_STRING.
 * *path_len is the length of the path part. */
static char *request_target(size_t *path_len)
{
	const char *sn = getenv("SCRIPT_NAME"), *pi = getenv("PATH_INFO"), *qs = getenv("QUERY_STRING");
	const char *part[2] = {sn ? sn : "", pi ? pi : ""};
	size_t cap = 3 * (strlen(part[0]) + strlen(part[1])) + (qs ? strlen(qs) : 0) + 2, len = 0;
	char *t = malloc(cap);
	if (t == NULL)
		return NULL;
	for (int i = 0; i < 2; i++)
		for (const char *p = part[i]; *p; p++) {
			if (*p == '?' || *p == '#') {
				memcpy(t + len, *p == '?' ? "%3F" : "%23", 3);
				len += 3;
			} else {
				t[len++] = *p;
			}
		}
	*path_len = len;
	if (qs && qs[0]) {
		t[len++] = '?';
		memcpy(t + len, qs, strlen(qs));
		len += strlen(qs);
	}
	t[len] = '\0';
	return t;
}

/* Reads the body the library asked for: CONTENT_LENGTH bytes (none when
 * it is absent) into *body, and the same bytes into a memory file for
 * the program (*fd). CSRF_OK, or the reason and status to reject with. */
static csrf_reason read_body(char **body, size_t *len, int *fd, unsigned *status)
{
	const char *cl = getenv("CONTENT_LENGTH");
	uint64_t want = 0;
	*status = 400;
	/* csrf_check asks for the body only when its length is within the
	 * context's body limit; a value that is not a plain decimal is
	 * refused here */
	if (cl != NULL && cgi_parse_number(cl, strlen(cl), SIZE_MAX / 2, NULL, &want) != 0)
		return CSRF_BODY_MALFORMED;
	*body = malloc(want ? (size_t)want : 1);
	if (*body == NULL) {
		*status = 500;
		return CSRF_ERR_NOMEM;
	}
	for (*len = 0; *len < want;) {
		ssize_t n = read(STDIN_FILENO, *body + *len, (size_t)want - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return CSRF_BODY_MALFORMED; /* shorter than CONTENT_LENGTH */
		*len += (size_t)n;
	}
	*fd = memfd_create("csrf-cgi-body", MFD_CLOEXEC);
	*status = 500;
	if (*fd < 0)
		return CSRF_ERR_IO;
	for (size_t done = 0; done < *len;) {
		ssize_t n = write(*fd, *body + done, *len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return CSRF_ERR_IO;
		done += (size_t)n;
	}
	if (lseek(*fd, 0, SEEK_SET) != 0)
		return CSRF_ERR_IO;
	*status = 400;
	return CSRF_OK;
}

/* The request: built from the environment, decided, then rejected or
 * passed to the program. The exit status csrf-cgi ends with. */
static int handle(cgi_conf *conf, const char *program, const char *method)
{
	csrf_request req;
	size_t path_len = 0, body_len = 0;
	char *body = NULL, *path = NULL;
	int body_fd = -1, status = 1;
	csrf_request_init(&req);
	char *target = request_target(&path_len);
	char *names = request_headers(&req);
	if (target != NULL)
		path = strndup(target, path_len); /* as logged: never the query */
	if (target == NULL || names == NULL || path == NULL) {
		cgi_fail(500, "csrf-cgi: out of memory");
		goto out;
	}
	const char *https = getenv("HTTPS"), *user = getenv("REMOTE_USER");
	req.method.ptr = method;
	req.method.len = strlen(method);
	req.target.ptr = target;
	req.target.len = strlen(target);
	req.scheme.ptr = https && strcasecmp(https, "on") == 0 ? "https" : "http";
	req.scheme.len = strlen(req.scheme.ptr);
	if (!conf->session_cookie && user != NULL && user[0] != '\0') {
		/* HTTP Basic or Digest: tokens are bound to the user. */
		req.session_id.ptr = user;
		req.session_id.len = strlen(user);
	}
	csrf_ctx_set_unsafe_get(conf->ctx, cgi_conf_unsafe_get(conf, getenv("SCRIPT_NAME"), target, path_len));

	csrf_result res = csrf_check(conf->ctx, &req);
	if (res.needs_body) {
		unsigned code;
		csrf_reason r = read_body(&body, &body_len, &body_fd, &code);
		if (r != CSRF_OK && code == 500) {
			cgi_log("cannot keep the body of", method, path, strerror(errno));
			cgi_fail(500, "csrf-cgi: cannot keep the request body");
			goto out;
		}
		if (r != CSRF_OK) {
			cgi_metrics_verdict(CSRF_METRICS_REJECTED, r);
			cgi_reject(NULL, NULL, r, code, method, path);
			status = 0;
			goto out;
		}
		req.body.ptr = body;
		req.body.len = body_len;
		res = csrf_check(conf->ctx, &req);
	}
	cgi_metrics_check(&res);
	if (!res.allowed) {
		cgi_reject(conf, &req, res.reason, csrf_reason_http_status(res.reason, 403), method, path);
		status = 0;
		goto out;
	}
	if (res.report_only)
		cgi_log("would reject (action log)", method, path, csrf_reason_name(res.reason));
	status = cgi_run(conf, &req, program, body_fd, method, path);
out:
	cgi_metrics_flush(conf->metrics_file);
	if (body_fd >= 0)
		close(body_fd);
	if (body != NULL)
		explicit_bzero(body, body_len);
	free(body);
	free(path);
	free(names);
	free(target);
	return status;
}

int main(int argc, char **argv)
{
	const char *config = NULL, *program = NULL;
	int i = 1;
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "--metrics") == 0) {
		if (argc != 3) {
			fputs(usage, stderr);
			return 2;
		}
		return cgi_metrics_print(argv[2]);
	}
	if (i + 1 < argc && strcmp(argv[i], "--config") == 0) {
		config = argv[i + 1];
		i += 2;
	}
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (i < argc)
		program = argv[i++];
	if (config == NULL)
		config = getenv("CSRF_CGI_CONFIG");
	if (config == NULL || config[0] == '\0')
		config = CGI_DEFAULT_CONFIG;
	if (program == NULL)
		program = getenv("SCRIPT_FILENAME");
	const char *method = getenv("REQUEST_METHOD");
	if (i < argc || program == NULL || program[0] == '\0' || method == NULL) {
		fprintf(stderr, CGI_NAME ": not run as a CGI interpreter (no REQUEST_METHOD, or no program)\n%s",
		        usage);
		cgi_fail(500, "csrf-cgi: not run as a CGI interpreter");
		return 2;
	}
	cgi_conf conf;
	if (cgi_conf_load(&conf, config) != 0) {
		cgi_fail(500, "csrf-cgi: configuration error (see the server's error log)");
		return 1;
	}
	int status = handle(&conf, program, method);
	cgi_conf_free(&conf);
	return status;
}
