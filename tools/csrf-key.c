/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * csrf-key.c - the operator's tool for key files (the ring a fleet of
 * servers shares): create one, rotate in a new signing key, retire an old
 * key, list what is there. All the work is the library's csrf_keyfile_*
 * calls; this file only parses arguments and explains failures. It never
 * prints key material.
 *
 *   csrf-key new FILE        a new file (mode 0600) with one signing key
 *   csrf-key stage FILE      add a key that verifies now and signs at the next rotate
 *   csrf-key rotate FILE     the staged key (else a new one) signs; older keys still verify
 *   csrf-key retire FILE ID  drop a key that no longer signs
 *   csrf-key list FILE       id, age and the signing marker of each key
 *
 * stage, rotate and retire keep the file's owner, group, access ACL and
 * mode (never the world's bits) and follow a symlink to the file it names
 * (resolved once, then everything goes through the directory's
 * descriptor); the library refuses a rewrite that would take the file
 * from its readers, a hard-linked file, and, as root, a file in a
 * directory others can write.
 *
 * Exit status: 0 done, 1 the operation failed, 2 bad arguments.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "csrf.h"
#include "csrfx.h"

static const char *prog = "csrf-key";

static int usage(FILE *out, int status)
{
	fprintf(out,
	        "usage: %s new FILE        create FILE (mode 0600) with one signing key\n"
	        "       %s stage FILE      add a key that verifies now and signs at the next rotate\n"
	        "       %s rotate FILE     the staged key (else a new key) signs; older keys keep verifying\n"
	        "       %s retire FILE ID  remove key ID (not the signing key)\n"
	        "       %s list FILE       show each key's id, age and whether it signs\n",
	        prog, prog, prog, prog, prog);
	return status;
}

/* Strict decimal 1..UINT32_MAX: no sign, no leading zero, nothing else. */
static int parse_id(const char *s, uint32_t *out)
{
	uint64_t v;
	if (csrfx_parse_u64(s, strlen(s), UINT32_MAX, &v) != CSRF_OK || v == 0)
		return 0;
	*out = (uint32_t)v;
	return 1;
}

/* "45s", "12m", "3h 5m", "7d 2h". */
static void format_age(int64_t secs, char *out, size_t cap)
{
	if (secs < 0)
		snprintf(out, cap, "in the future");
	else if (secs < 60)
		snprintf(out, cap, "%llds", (long long)secs);
	else if (secs < 3600)
		snprintf(out, cap, "%lldm", (long long)(secs / 60));
	else if (secs < 86400)
		snprintf(out, cap, "%lldh %lldm", (long long)(secs / 3600), (long long)(secs % 3600 / 60));
	else
		snprintf(out, cap, "%lldd %lldh", (long long)(secs / 86400), (long long)(secs % 86400 / 3600));
}

/* Says why an operation on path failed, in the library's words. */
static int fail(const char *what, const char *path, csrf_reason r, const csrf_error *err)
{
	fprintf(stderr, "%s: %s %s: %s\n", prog, what, path, err->msg[0] ? err->msg : csrf_reason_str(r));
	return 1;
}

static int list_keys(const char *path, csrf_key_info *keys, size_t *n)
{
	csrf_error err;
	csrf_reason r = csrf_keyfile_list(path, keys, CSRF_KEYS_MAX, n, &err);

	if (r != CSRF_OK)
		return fail("list", path, r, &err);
	return 0;
}

static int cmd_new(const char *path)
{
	csrf_error err;
	csrf_reason r = csrf_keyfile_new(path, &err);

	if (r != CSRF_OK)
		return fail("new", path, r, &err);
	printf("created %s with one signing key\n", path);
	return 0;
}

/* The id of the signing key, 0 when none signs. */
static uint32_t signing_id(const csrf_key_info *keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (keys[i].signing)
			return keys[i].id;
	return 0;
}

/* A key newer than the signing key that does not sign: staged. */
static int is_staged(const csrf_key_info *k, uint32_t sign_id)
{
	return !k->signing && k->id > sign_id;
}

static int cmd_add(const char *path, int staging)
{
	const char *what = staging ? "stage" : "rotate";
	uint32_t id = 0;
	csrf_key_info keys[CSRF_KEYS_MAX];
	size_t n = 0, staged = 0;
	csrf_error err;
	csrf_reason r;

	/* (only to say which kind of rotation happened) */
	if (list_keys(path, keys, &n) != 0)
		return 1;
	for (size_t i = 0; i < n; i++)
		staged += is_staged(&keys[i], signing_id(keys, n));
	r = staging ? csrf_keyfile_stage(path, &id, &err) : csrf_keyfile_rotate(path, &id, &err);
	if (r != CSRF_OK)
		return fail(what, path, r, &err);
	if (staging)
		printf("key %u staged: it verifies once servers reload, and signs at the next rotate\n", id);
	else if (staged)
		printf("key %u (staged) now signs; older keys verify until retired\n", id);
	else
		printf("key %u now signs; older keys verify until retired (servers that have not reloaded yet "
		       "reject its tokens: stage, reload, then rotate avoids that)\n",
		       id);
	return 0;
}

static int cmd_retire(const char *path, uint32_t id)
{
	csrf_error err;
	csrf_reason r = csrf_keyfile_retire(path, id, &err);

	if (r != CSRF_OK)
		return fail("retire", path, r, &err);
	printf("retired key %u; tokens signed with it no longer verify\n", id);
	return 0;
}

static int cmd_list(const char *path)
{
	csrf_key_info keys[CSRF_KEYS_MAX];
	size_t n = 0;
	int64_t now = (int64_t)time(NULL);
	char age[32], when[32];

	if (list_keys(path, keys, &n) != 0)
		return 1;
	printf("%-10s  %-20s  %-10s  %s\n", "ID", "CREATED (UTC)", "AGE", "ROLE");
	for (size_t i = 0; i < n; i++) {
		time_t t = (time_t)keys[i].created;
		struct tm tm;
		if (gmtime_r(&t, &tm) == NULL || strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm) == 0)
			snprintf(when, sizeof when, "?");
		format_age(now - keys[i].created, age, sizeof age);
		const char *role = keys[i].signing                            ? "signing"
		                   : is_staged(&keys[i], signing_id(keys, n)) ? "staged"
		                                                              : "verifies";
		printf("%-10u  %-20s  %-10s  %s\n", keys[i].id, when, age, role);
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint32_t id;

	if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0))
		return usage(stdout, 0);
	if (argc < 3 || argv[2][0] == '\0')
		return usage(stderr, 2);
	if (strcmp(argv[1], "new") == 0 && argc == 3)
		return cmd_new(argv[2]);
	if (strcmp(argv[1], "rotate") == 0 && argc == 3)
		return cmd_add(argv[2], 0);
	if (strcmp(argv[1], "stage") == 0 && argc == 3)
		return cmd_add(argv[2], 1);
	if (strcmp(argv[1], "list") == 0 && argc == 3)
		return cmd_list(argv[2]);
	if (strcmp(argv[1], "retire") == 0 && argc == 4) {
		if (!parse_id(argv[3], &id)) {
			fprintf(stderr, "%s: retire: \"%s\" is not a key id (a number from 1 to 4294967295)\n", prog,
			        argv[3]);
			return 2;
		}
		return cmd_retire(argv[2], id);
	}
	return usage(stderr, 2);
}
