/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * store_semantics.h - the behaviour every csrf_store backend must show,
 * as one table of operations run in order against a fresh store. Used by
 * tests/unit/test_store_memory.c and tests/store/test_store_redis.c, so
 * memory and Redis are held to the same rows. Include after cmocka.h.
 */
#ifndef CSRF_STORE_SEMANTICS_H
#define CSRF_STORE_SEMANTICS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "csrf_session.h"

typedef enum { SEM_SET, SEM_GET, SEM_DEL, SEM_INCR } sem_op;

typedef struct {
	sem_op op;
	const char *key;
	size_t key_len;
	const char *val; /* SET: the value; GET: the expected value */
	size_t val_len;
	uint32_t ttl;
	size_t cap; /* GET: buffer capacity (0: the default 8192) */
	csrf_reason want;
	int64_t want_int; /* INCR: the new value */
} sem_row;

#define SEM_BIG 5000
static char sem_big_key[SEM_BIG];
static char sem_big_val[SEM_BIG];

#define S(lit) lit, sizeof(lit) - 1

static const sem_row sem_rows[] = {
    /* get / set / overwrite / delete */
    {SEM_GET, S("a"), NULL, 0, 0, 0, CSRF_NOT_FOUND, 0},
    {SEM_SET, S("a"), S("1"), 0, 0, CSRF_OK, 0},
    {SEM_GET, S("a"), S("1"), 0, 0, CSRF_OK, 0},
    {SEM_SET, S("a"), S("two"), 0, 0, CSRF_OK, 0},
    {SEM_GET, S("a"), S("two"), 0, 0, CSRF_OK, 0},
    {SEM_GET, S("a"), S("two"), 0, 3, CSRF_OK, 0},
    {SEM_GET, S("a"), S("two"), 0, 2, CSRF_ERR_BUFFER, 0},
    {SEM_DEL, S("a"), NULL, 0, 0, 0, CSRF_OK, 0},
    {SEM_GET, S("a"), NULL, 0, 0, 0, CSRF_NOT_FOUND, 0},
    {SEM_DEL, S("a"), NULL, 0, 0, 0, CSRF_OK, 0}, /* idempotent */
    {SEM_SET, S("ttl"), S("x"), 3600, 0, CSRF_OK, 0},
    {SEM_GET, S("ttl"), S("x"), 0, 0, CSRF_OK, 0},
    /* counters */
    {SEM_INCR, S("n"), NULL, 0, 0, 0, CSRF_OK, 1},
    {SEM_INCR, S("n"), NULL, 0, 0, 0, CSRF_OK, 2},
    {SEM_GET, S("n"), S("2"), 0, 0, CSRF_OK, 0},
    {SEM_INCR, S("nt"), NULL, 0, 60, 0, CSRF_OK, 1},
    {SEM_INCR, S("nt"), NULL, 0, 60, 0, CSRF_OK, 2},
    {SEM_SET, S("n"), S("41"), 0, 0, CSRF_OK, 0},
    {SEM_INCR, S("n"), NULL, 0, 0, 0, CSRF_OK, 42},
    {SEM_SET, S("neg"), S("-5"), 0, 0, CSRF_OK, 0},
    {SEM_INCR, S("neg"), NULL, 0, 0, 0, CSRF_OK, -4},
    {SEM_SET, S("s"), S("abc"), 0, 0, CSRF_OK, 0},
    {SEM_INCR, S("s"), NULL, 0, 0, 0, CSRF_MALFORMED, 0},
    {SEM_GET, S("s"), S("abc"), 0, 0, CSRF_OK, 0}, /* untouched */
    {SEM_SET, S("max"), S("9223372036854775807"), 0, 0, CSRF_OK, 0},
    {SEM_INCR, S("max"), NULL, 0, 0, 0, CSRF_MALFORMED, 0},
    {SEM_GET, S("max"), S("9223372036854775807"), 0, 0, CSRF_OK, 0},
    {SEM_DEL, S("n"), NULL, 0, 0, 0, CSRF_OK, 0},
    {SEM_INCR, S("n"), NULL, 0, 0, 0, CSRF_OK, 1}, /* starts over */
    /* binary keys and values */
    {SEM_SET, S("b\0k"), S("v\0\xff\0"), 0, 0, CSRF_OK, 0},
    {SEM_GET, S("b\0k"), S("v\0\xff\0"), 0, 0, CSRF_OK, 0},
    {SEM_GET, S("b"), NULL, 0, 0, 0, CSRF_NOT_FOUND, 0},
    {SEM_GET, S("b\0"), NULL, 0, 0, 0, CSRF_NOT_FOUND, 0},
    {SEM_SET, S("\xff\xfe key with spaces\r\n"), S("\r\n$3\r\nx"), 0, 0, CSRF_OK, 0},
    {SEM_GET, S("\xff\xfe key with spaces\r\n"), S("\r\n$3\r\nx"), 0, 0, CSRF_OK, 0},
    {SEM_SET, S("empty"), "", 0, 0, 0, CSRF_OK, 0},
    {SEM_GET, S("empty"), "", 0, 0, 0, CSRF_OK, 0},
    /* sizes: keys up to 256 bytes, values up to 4 KiB */
    {SEM_SET, sem_big_key, 256, sem_big_val, 4096, 0, 0, CSRF_OK, 0},
    {SEM_GET, sem_big_key, 256, sem_big_val, 4096, 0, 0, CSRF_OK, 0},
    {SEM_GET, sem_big_key, 256, sem_big_val, 4096, 0, 4095, CSRF_ERR_BUFFER, 0},
    {SEM_SET, sem_big_key, 257, S("v"), 0, 0, CSRF_TOO_LARGE, 0},
    {SEM_GET, sem_big_key, 257, NULL, 0, 0, 0, CSRF_TOO_LARGE, 0},
    {SEM_DEL, sem_big_key, 257, NULL, 0, 0, 0, CSRF_TOO_LARGE, 0},
    {SEM_INCR, sem_big_key, 257, NULL, 0, 0, 0, CSRF_TOO_LARGE, 0},
    {SEM_SET, S("v"), sem_big_val, 4097, 0, 0, CSRF_TOO_LARGE, 0},
    {SEM_SET, S("v"), sem_big_val, SEM_BIG, 0, 0, CSRF_TOO_LARGE, 0},
    {SEM_GET, S("v"), NULL, 0, 0, 0, CSRF_NOT_FOUND, 0}, /* nothing half-applied */
    {SEM_SET, "", 0, S("v"), 0, 0, CSRF_ERR_ARG, 0},
    {SEM_GET, "", 0, NULL, 0, 0, 0, CSRF_ERR_ARG, 0},
    {SEM_DEL, NULL, 0, NULL, 0, 0, 0, CSRF_ERR_ARG, 0},
    {SEM_INCR, NULL, 1, NULL, 0, 0, 0, CSRF_ERR_ARG, 0},
};

static void sem_init(void)
{
	for (size_t i = 0; i < SEM_BIG; i++) {
		sem_big_key[i] = (char)('a' + i % 26);
		sem_big_val[i] = (char)(i * 7 + 3);
	}
}

/* Runs the table against st; a failure names the row, never a value. */
static void sem_run(csrf_store *st)
{
	static char buf[8192];

	sem_init();
	for (size_t i = 0; i < sizeof sem_rows / sizeof sem_rows[0]; i++) {
		const sem_row *row = &sem_rows[i];
		csrf_reason r = CSRF_ERR_INTERNAL;
		size_t len = 0;
		int64_t v = 0;

		switch (row->op) {
		case SEM_SET:
			r = csrf_store_set(st, row->key, row->key_len, row->val, row->val_len, row->ttl);
			break;
		case SEM_GET:
			r = csrf_store_get(st, row->key, row->key_len, buf, row->cap ? row->cap : sizeof buf, &len);
			break;
		case SEM_DEL:
			r = csrf_store_del(st, row->key, row->key_len);
			break;
		case SEM_INCR:
			r = csrf_store_incr(st, row->key, row->key_len, row->ttl, &v);
			break;
		}
		if (r != row->want)
			fail_msg("row %zu: got %s, want %s", i, csrf_reason_name(r), csrf_reason_name(row->want));
		if (r == CSRF_OK && row->op == SEM_GET) {
			if (len != row->val_len || memcmp(buf, row->val, len) != 0)
				fail_msg("row %zu: wrong value (length %zu, want %zu)", i, len, row->val_len);
		}
		if (r == CSRF_ERR_BUFFER && len != row->val_len)
			fail_msg("row %zu: buffer too small should report %zu, got %zu", i, row->val_len, len);
		if (r == CSRF_OK && row->op == SEM_INCR && v != row->want_int)
			fail_msg("row %zu: counter %lld, want %lld", i, (long long)v, (long long)row->want_int);
	}
}

/* NULL arguments are CSRF_ERR_ARG, never a crash. */
static void sem_args(csrf_store *st)
{
	char buf[4];
	size_t len;
	int64_t v;

	assert_int_equal(csrf_store_get(NULL, "k", 1, buf, sizeof buf, &len), CSRF_ERR_ARG);
	assert_int_equal(csrf_store_get(st, "k", 1, buf, sizeof buf, NULL), CSRF_ERR_ARG);
	assert_int_equal(csrf_store_get(st, "k", 1, NULL, 4, &len), CSRF_ERR_ARG);
	assert_int_equal(csrf_store_set(NULL, "k", 1, "v", 1, 0), CSRF_ERR_ARG);
	assert_int_equal(csrf_store_set(st, "k", 1, NULL, 1, 0), CSRF_ERR_ARG);
	assert_int_equal(csrf_store_del(NULL, "k", 1), CSRF_ERR_ARG);
	assert_int_equal(csrf_store_incr(NULL, "k", 1, 0, &v), CSRF_ERR_ARG);
	assert_int_equal(csrf_store_incr(st, "k", 1, 0, NULL), CSRF_ERR_ARG);
	/* a zero-capacity probe of a missing key */
	assert_int_equal(csrf_store_get(st, "missing", 7, NULL, 0, &len), CSRF_NOT_FOUND);
}

#endif
