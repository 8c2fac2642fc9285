/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * redisproc.h - real Redis servers and sentinels for the store tests:
 * started on free loopback ports in a temporary directory, waited for
 * until they answer, killed (never outliving the test), and queried
 * behind the store's back; and a log hook that keeps what a store said.
 */
#ifndef CSRF_REDISPROC_H
#define CSRF_REDISPROC_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include <hiredis/hiredis.h>

#include "csrf_session.h"

int64_t rp_mono_ms(void);
void rp_sleep_ms(int ms);

/* A port nothing listens on now, which no other test picks and the kernel
 * hands to no connection until this process ends (-1: none found). */
int rp_free_port(void);

/* Makes (and later removes, with its files) a temporary directory. */
int rp_tmpdir(char *dir, size_t cap);
void rp_rmdir(const char *dir);

/* The redis-server binary (REDIS_SERVER, default /usr/bin/redis-server)
 * and the sentinel binary (REDIS_SENTINEL, default
 * /usr/bin/redis-sentinel); NULL when not executable. */
const char *rp_redis_bin(void);
const char *rp_sentinel_bin(void);

/* Starts redis-server on port (loopback, no persistence, its files in
 * dir) with extra arguments (NULL-terminated list, may be NULL) and
 * waits up to 5 s until it answers PING (authenticating as user/password
 * when password is not NULL). The process id, or -1. */
pid_t rp_redis_start(const char *dir, int port, const char *const *extra, const char *user, const char *password);

/* Starts a sentinel on port from a config written to dir (the lines
 * given after the port and bind lines) and waits until it answers. */
pid_t rp_sentinel_start(const char *dir, int port, const char *config_lines);

/* SIGCONT then SIGKILL, and reaps; *pid becomes -1. */
void rp_kill(pid_t *pid);

/* One command on a fresh connection (AUTH first when password is not
 * NULL); NULL when the server cannot be reached. Free with
 * freeReplyObject. */
redisReply *rp_cmd(int port, const char *user, const char *password, const char *fmt, ...);

/* rp_cmd's integer answer, or -1000000 when it is not one. */
long long rp_int(int port, const char *fmt, ...);

/* The lines a store logged (csrf_store_open_log with rp_log_hook and an
 * rp_log initialised by rp_log_init); the first RP_LOG_LINES are kept. */
#define RP_LOG_LINES 64
typedef struct {
	pthread_mutex_t lock;
	int n;
	csrf_reason event[RP_LOG_LINES];
	char text[RP_LOG_LINES][256];
} rp_log;

void rp_log_init(rp_log *l);
void rp_log_hook(void *ud, csrf_reason event, const char *message);
/* The index of the first line of this event holding needle, or -1. */
int rp_log_find(rp_log *l, csrf_reason event, const char *needle);
/* The index of the first line holding needle (whatever its event), or -1. */
int rp_log_any(rp_log *l, const char *needle);
/* Prints the lines as "# log EVENT: TEXT". */
void rp_log_print(rp_log *l);

#endif
