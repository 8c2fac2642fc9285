/* SPDX-License-Identifier: BSD-2-Clause */
/* test_keyfile.c - src/keyfile.c: the key file parser (good files, every
 * kind of malformed line, truncated prefixes, guard pages, oversized
 * lines) and new / rotate / retire / list in a temporary directory; a
 * rewrite keeps the file's owner, group and mode, and follows a symlink.
 * No test prints key material. */
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"
#include "testutil.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1) /* linux/fs.h; some libcs lack it */
#endif

#define HEX_A "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define HEX_B "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"
#define HEX_U "00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF"

/* Monotonic milliseconds (the core has no clock of this kind: the
 * session part's csrfi_mono_ms is not linked into core-only programs). */
static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static char *gcopy(const char *p, size_t n)
{
	/* tu_guard_copy of 0 bytes points into the guard page; keep one. */
	return n ? tu_guard_copy(p, n) : tu_guard_copy("", 1) + 1;
}

static void gfree(char *p, size_t n)
{
	tu_guard_free(n ? p : p - 1);
}

/* Rows carry their length: one has a NUL byte inside. */
#define ROW(text, want, n, sign_id, msg)                                                                               \
	{                                                                                                              \
		text, sizeof(text) - 1, want, n, sign_id, msg                                                          \
	}

static const struct {
	const char *text;
	size_t len;
	csrf_reason want;
	size_t n;         /* keys when CSRF_OK */
	uint32_t sign_id; /* the signing key's id when CSRF_OK */
	const char *msg;  /* a part of the message when rejected */
} rows[] = {
    /* good */
    ROW("key 1 1700000000 " HEX_A " sign\n", CSRF_OK, 1, 1, NULL),
    ROW("# keys\n\nkey 1 0 " HEX_A "\n  \t\nkey 2 5 " HEX_B " sign # current\n", CSRF_OK, 2, 2, NULL),
    ROW("key 7 1 " HEX_A " sign\r\nkey 8 1 " HEX_B "\r\n", CSRF_OK, 2, 7, NULL),
    ROW("\t key\t4294967295\t 1 " HEX_U "  sign  \n", CSRF_OK, 1, 4294967295u, NULL),
    ROW("key 1 9223372036854775807 " HEX_A " sign\n", CSRF_OK, 1, 1, NULL),
    ROW("key 1 1 " HEX_A " sign\n# comment with bytes \x01\xc3\xa9 in it\n", CSRF_OK, 1, 1, NULL),
    /* the word and the field count */
    ROW("kee 1 1 " HEX_A " sign\n", CSRF_ERR_CONFIG, 0, 0, "line 1: expected"),
    ROW("KEY 1 1 " HEX_A " sign\n", CSRF_ERR_CONFIG, 0, 0, "line 1: expected"),
    ROW("\nkey 1 1\n", CSRF_ERR_CONFIG, 0, 0, "line 2: missing fields"),
    ROW("key 1 1 " HEX_A " sign extra\n", CSRF_ERR_CONFIG, 0, 0, "line 1: too many fields"),
    ROW("key 1 1 " HEX_A " signing\n", CSRF_ERR_CONFIG, 0, 0, "line 1: unknown flag"),
    ROW("key 1 1 " HEX_A " SIGN\n", CSRF_ERR_CONFIG, 0, 0, "line 1: unknown flag"),
    /* ids */
    ROW("key 0 1 " HEX_A " sign\n", CSRF_ERR_CONFIG, 0, 0, "line 1: key id"),
    ROW("key 01 1 " HEX_A " sign\n", CSRF_ERR_CONFIG, 0, 0, "line 1: key id"),
    ROW("key +1 1 " HEX_A " sign\n", CSRF_ERR_CONFIG, 0, 0, "line 1: key id"),
    ROW("key -1 1 " HEX_A " sign\n", CSRF_ERR_CONFIG, 0, 0, "line 1: key id"),
    ROW("key 0x1 1 " HEX_A " sign\n", CSRF_ERR_CONFIG, 0, 0, "line 1: key id"),
    ROW("key 1a 1 " HEX_A " sign\n", CSRF_ERR_CONFIG, 0, 0, "line 1: key id"),
    ROW("key 4294967296 1 " HEX_A " sign\n", CSRF_ERR_CONFIG, 0, 0, "line 1: key id"),
    ROW("key 99999999999999999999999 1 " HEX_A " sign\n", CSRF_ERR_CONFIG, 0, 0, "line 1: key id"),
    /* creation times */
    ROW("key 1 -5 " HEX_A " sign\n", CSRF_ERR_CONFIG, 0, 0, "line 1: creation time"),
    ROW("key 1 1.5 " HEX_A " sign\n", CSRF_ERR_CONFIG, 0, 0, "line 1: creation time"),
    ROW("key 1 007 " HEX_A " sign\n", CSRF_ERR_CONFIG, 0, 0, "line 1: creation time"),
    ROW("key 1 9223372036854775808 " HEX_A " sign\n", CSRF_ERR_CONFIG, 0, 0, "line 1: creation time"),
    /* material */
    ROW("key 1 1 00112233 sign\n", CSRF_ERR_CONFIG, 0, 0, "line 1: key must be exactly 64 hex digits"),
    ROW("key 1 1 " HEX_A "0 sign\n", CSRF_ERR_CONFIG, 0, 0, "line 1: key must be"),
    ROW("key 1 1 0" HEX_A " sign\n", CSRF_ERR_CONFIG, 0, 0, "line 1: key must be"),
    ROW("key 1 1 g0112233445566778899aabbccddeeff00112233445566778899aabbccddeeff sign\n", CSRF_ERR_CONFIG, 0, 0,
        "line 1: key must be"),
    ROW("key 1 1 00112233445566778899aabbccddeeff00112233445566778899aabbccddee-f sign\n", CSRF_ERR_CONFIG, 0, 0,
        "line 1: key must be"),
    ROW("key 1 1 0000000000000000000000000000000000000000000000000000000000000000 sign\n", CSRF_ERR_CONFIG, 0, 0,
        "line 1: the key is all zero"),
    /* bytes that have no place in the file */
    ROW("key 1 1 " HEX_A " sign\x01\n", CSRF_ERR_CONFIG, 0, 0, "line 1: control"),
    ROW("key 1 1 " HEX_A "\xc3\xa9 sign\n", CSRF_ERR_CONFIG, 0, 0, "line 1: control or non-ASCII"),
    ROW("key 1 1 " HEX_A " sign\n\x00\n", CSRF_ERR_CONFIG, 0, 0, "line 2: control"),
    ROW("key 1 1 " HEX_A " sign\rkey 2 1 " HEX_B "\n", CSRF_ERR_CONFIG, 0, 0, "line 1: control"),
    /* the ring as a whole */
    ROW("key 1 1 " HEX_A " sign\nkey 1 2 " HEX_B "\n", CSRF_ERR_CONFIG, 0, 0, "line 2: duplicate key id 1"),
    ROW("key 1 1 " HEX_A " sign\nkey 2 2 " HEX_B " sign\n", CSRF_ERR_CONFIG, 0, 0, "line 2: a second key flagged sign"),
    ROW("key 1 1 " HEX_A "\nkey 2 2 " HEX_B "\n", CSRF_ERR_CONFIG, 0, 0, "no key is flagged sign"),
    ROW("", CSRF_ERR_CONFIG, 0, 0, "no keys"),
    ROW("# nothing but comments\n\n   \n", CSRF_ERR_CONFIG, 0, 0, "no keys"),
};

static void test_parse_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		size_t len = rows[i].len;
		csrfi_keyfile_data d;
		char err[256];
		char *g = gcopy(rows[i].text, len);
		memset(&d, 0x5a, sizeof d);
		csrf_reason r = csrfi_keyfile_parse(g, len, &d, err, sizeof err);
		gfree(g, len);
		if (r != rows[i].want)
			fail_msg("row %zu: got %s (%s), want %s", i, csrf_reason_name(r), err,
			         csrf_reason_name(rows[i].want));
		if (r == CSRF_OK) {
			assert_int_equal(d.n, rows[i].n);
			assert_int_equal(d.keys[d.signing].id, rows[i].sign_id);
			for (size_t k = 0; k < d.n; k++)
				assert_int_equal(d.keys[k].signing, k == d.signing);
			assert_string_equal(err, "");
		} else {
			if (!strstr(err, rows[i].msg))
				fail_msg("row %zu: message \"%s\" lacks \"%s\"", i, err, rows[i].msg);
			/* No key material in the message, and none left behind. */
			assert_null(strstr(err, "00112233"));
			assert_null(strstr(err, "ffeeddcc"));
			static const csrfi_keyfile_data zero;
			assert_memory_equal(&d, &zero, sizeof d);
		}
		csrfi_keyfile_data_wipe(&d);
	}
}

static void test_parse_material_and_limits(void **state)
{
	(void)state;
	csrfi_keyfile_data d;
	char err[256];
	char text[8192];
	size_t o = 0;

	/* Material decodes in both cases to the same bytes. */
	const char *lower = "key 1 1 " HEX_A " sign\n";
	const char *upper = "key 1 1 " HEX_U " sign\n";
	csrfi_keyfile_data d2;
	assert_int_equal(csrfi_keyfile_parse(lower, strlen(lower), &d, err, sizeof err), CSRF_OK);
	assert_int_equal(csrfi_keyfile_parse(upper, strlen(upper), &d2, err, sizeof err), CSRF_OK);
	assert_memory_equal(d.keys[0].key, d2.keys[0].key, CSRF_KEY_LEN);
	assert_int_equal(d.keys[0].key[0], 0x00);
	assert_int_equal(d.keys[0].key[1], 0x11);
	assert_int_equal(d.keys[0].key[31], 0xff);
	assert_int_equal(d.keys[0].created, 1);

	/* 16 keys are fine, a 17th is not. */
	for (int i = 1; i <= 17; i++)
		o +=
		    (size_t)snprintf(text + o, sizeof text - o, "key %d %d %s%s\n", i, i, HEX_A, i == 3 ? " sign" : "");
	size_t sixteen = (size_t)(strchr(strstr(text, "key 16 "), '\n') - text) + 1;
	assert_int_equal(csrfi_keyfile_parse(text, sixteen, &d, err, sizeof err), CSRF_OK);
	assert_int_equal(d.n, 16);
	assert_int_equal(d.keys[d.signing].id, 3);
	assert_int_equal(csrfi_keyfile_parse(text, o, &d, err, sizeof err), CSRF_ERR_CONFIG);
	assert_non_null(strstr(err, "line 17: more than 16 keys"));

	/* Lines of 512 bytes are fine, 513 is too long (before any parsing). */
	memset(text, ' ', sizeof text);
	const char *kl = "key 1 1 " HEX_A " sign";
	memcpy(text, kl, strlen(kl));
	text[512] = '\n';
	assert_int_equal(csrfi_keyfile_parse(text, 513, &d, err, sizeof err), CSRF_OK);
	text[512] = ' ';
	text[513] = '\n';
	assert_int_equal(csrfi_keyfile_parse(text, 514, &d, err, sizeof err), CSRF_ERR_CONFIG);
	assert_non_null(strstr(err, "line 1: longer than 512 bytes"));
	/* Even a comment may not be longer; nor an endless line. */
	memset(text, '#', sizeof text);
	assert_int_equal(csrfi_keyfile_parse(text, sizeof text, &d, err, sizeof err), CSRF_ERR_CONFIG);
	assert_non_null(strstr(err, "longer than"));

	/* The whole file is capped too, whatever its lines; whole-file
	 * errors name no line. */
	char *huge = malloc(CSRF_KEYFILE_MAX + 1);
	assert_non_null(huge);
	memset(huge, '\n', CSRF_KEYFILE_MAX + 1);
	assert_int_equal(csrfi_keyfile_parse(huge, CSRF_KEYFILE_MAX, &d, err, sizeof err), CSRF_ERR_CONFIG);
	assert_string_equal(err, "no keys in the file");
	assert_int_equal(csrfi_keyfile_parse(huge, CSRF_KEYFILE_MAX + 1, &d, err, sizeof err), CSRF_ERR_CONFIG);
	assert_string_equal(err, "larger than 65536 bytes");
	free(huge);

	/* A tiny or absent message buffer is fine. */
	assert_int_equal(csrfi_keyfile_parse("x", 1, &d, err, 4), CSRF_ERR_CONFIG);
	assert_int_equal(strlen(err), 3);
	assert_int_equal(csrfi_keyfile_parse("x", 1, &d, NULL, 0), CSRF_ERR_CONFIG);
	assert_int_equal(csrfi_keyfile_parse(NULL, 0, &d, err, sizeof err), CSRF_ERR_CONFIG);
	assert_int_equal(csrfi_keyfile_parse(NULL, 1, &d, err, sizeof err), CSRF_ERR_ARG);
	assert_int_equal(csrfi_keyfile_parse(lower, strlen(lower), NULL, err, sizeof err), CSRF_ERR_ARG);
	csrfi_keyfile_data_wipe(&d);
	csrfi_keyfile_data_wipe(&d2);
}

/* Every prefix of a good file, flush against a guard page: parsed or
 * refused, never more than it holds. A prefix ending in the middle of a
 * key line is refused; one that ends after the signing key's line is
 * accepted with the keys before the cut. */
static void test_parse_prefixes(void **state)
{
	(void)state;
	const char *text = "# ring\nkey 1 10 " HEX_A "\nkey 2 20 " HEX_B " sign\n\nkey 3 30 " HEX_A "\n";
	size_t len = strlen(text);
	const char *sign_end = strstr(text, " sign\n") + 6;
	const char *k3 = strstr(text, "key 3");

	for (size_t l = 0; l <= len; l++) {
		csrfi_keyfile_data d;
		char err[256];
		char *g = gcopy(text, l);
		csrf_reason r = csrfi_keyfile_parse(g, l, &d, err, sizeof err);
		gfree(g, l);
		const char *cut = text + l;
		csrf_reason want;
		size_t want_n = 0;
		if (cut < sign_end - 1) {
			want = CSRF_ERR_CONFIG; /* key 2 unfinished or missing sign */
		} else if (cut <= k3 + 3) {
			/* "sign" complete; then blank lines and a partial "key" word:
			 * "k", "ke" are not "key", "key" alone lacks fields. */
			want = cut <= k3 ? CSRF_OK : CSRF_ERR_CONFIG;
			want_n = 2;
		} else if (cut < text + len - 1) {
			want = CSRF_ERR_CONFIG; /* key 3 unfinished */
		} else {
			want = CSRF_OK;
			want_n = 3;
		}
		if (r != want)
			fail_msg("prefix %zu: got %s (%s), want %s", l, csrf_reason_name(r), err,
			         csrf_reason_name(want));
		if (r == CSRF_OK) {
			assert_int_equal(d.n, want_n);
			assert_int_equal(d.keys[d.signing].id, 2);
			assert_int_equal(d.keys[1].created, 20);
		}
		csrfi_keyfile_data_wipe(&d);
	}
}

static char tmpdir[64];

static int setup_dir(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/csrf-keyfile-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

/* Removes path's entries, and those of its subdirectories (a test that
 * failed half-way leaves them), then path. */
static int remove_tree(const char *path, int depth)
{
	DIR *dir = opendir(path);
	struct dirent *e;
	char p[512];
	while (dir && (e = readdir(dir)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(p, sizeof p, "%s/%s", path, e->d_name) >= (int)sizeof p)
			continue;
		if (unlink(p) != 0 && errno == EISDIR && depth > 0)
			remove_tree(p, depth - 1);
	}
	if (dir)
		closedir(dir);
	return rmdir(path);
}

static int teardown_dir(void **state)
{
	(void)state;
	return remove_tree(tmpdir, 2);
}

static size_t dir_entries(void)
{
	DIR *dir = opendir(tmpdir);
	struct dirent *e;
	size_t n = 0;
	assert_non_null(dir);
	while ((e = readdir(dir)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(dir);
	return n;
}

static void assert_mode_0600(const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
}

static void test_new_rotate_retire_list(void **state)
{
	(void)state;
	char path[128];
	csrf_key_info info[CSRF_KEYS_MAX];
	size_t n = 99;
	uint32_t id = 0;
	csrfi_keyfile_data before, after;
	char err[256];

	memset(info, 0, sizeof info); /* padding too: scanned below */
	snprintf(path, sizeof path, "%s/keys", tmpdir);
	mode_t old_umask = umask(0);
	assert_int_equal(csrf_keyfile_new(path, NULL), CSRF_OK);
	umask(old_umask);
	assert_mode_0600(path);
	assert_int_equal(dir_entries(), 1);

	assert_int_equal(csrf_keyfile_list(path, info, CSRF_KEYS_MAX, &n, NULL), CSRF_OK);
	assert_int_equal(n, 1);
	assert_int_equal(info[0].id, 1);
	assert_int_equal(info[0].signing, 1);
	assert_true(info[0].created > 1700000000);
	assert_true(info[0].created <= csrfi_now(0));

	/* new refuses an existing file and leaves it alone. */
	assert_int_equal(csrfi_keyfile_read(path, &before, err, sizeof err), CSRF_OK);
	assert_int_equal(csrf_keyfile_new(path, NULL), CSRF_ERR_IO);
	assert_int_equal(csrfi_keyfile_read(path, &after, err, sizeof err), CSRF_OK);
	assert_memory_equal(&before, &after, sizeof before);
	assert_int_equal(dir_entries(), 1);

	/* rotate: a new signing key, the old keys stay with their material. */
	assert_int_equal(csrf_keyfile_rotate(path, &id, NULL), CSRF_OK);
	assert_int_equal(id, 2);
	assert_int_equal(csrf_keyfile_rotate(path, &id, NULL), CSRF_OK);
	assert_int_equal(id, 3);
	assert_int_equal(csrf_keyfile_rotate(path, NULL, NULL), CSRF_OK);
	assert_mode_0600(path);
	assert_int_equal(dir_entries(), 1);
	assert_int_equal(csrfi_keyfile_read(path, &after, err, sizeof err), CSRF_OK);
	assert_int_equal(after.n, 4);
	assert_int_equal(after.keys[after.signing].id, 4);
	assert_memory_equal(after.keys[0].key, before.keys[0].key, CSRF_KEY_LEN);
	assert_memory_not_equal(after.keys[1].key, before.keys[0].key, CSRF_KEY_LEN);
	assert_memory_not_equal(after.keys[1].key, after.keys[2].key, CSRF_KEY_LEN);

	assert_int_equal(csrf_keyfile_list(path, info, CSRF_KEYS_MAX, &n, NULL), CSRF_OK);
	assert_int_equal(n, 4);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(info[i].id, i + 1);
		assert_int_equal(info[i].signing, i == 3);
	}
	/* The listing holds no key material. */
	for (size_t k = 0; k < after.n; k++)
		assert_null(memmem(info, sizeof info, after.keys[k].key, 8));
	/* A short array: the count, the first entries, a buffer error. */
	n = 0;
	assert_int_equal(csrf_keyfile_list(path, info, 2, &n, NULL), CSRF_ERR_BUFFER);
	assert_int_equal(n, 4);
	assert_int_equal(csrf_keyfile_list(path, NULL, 0, &n, NULL), CSRF_ERR_BUFFER);
	assert_int_equal(n, 4);

	/* retire: not the signing key, not an unknown id. */
	assert_int_equal(csrf_keyfile_retire(path, 4, NULL), CSRF_ERR_CONFIG);
	assert_int_equal(csrf_keyfile_retire(path, 99, NULL), CSRF_ERR_CONFIG);
	assert_int_equal(csrf_keyfile_retire(path, 0, NULL), CSRF_ERR_CONFIG);
	assert_int_equal(csrf_keyfile_retire(path, 2, NULL), CSRF_OK);
	assert_int_equal(csrf_keyfile_retire(path, 2, NULL), CSRF_ERR_CONFIG);
	assert_int_equal(csrf_keyfile_list(path, info, CSRF_KEYS_MAX, &n, NULL), CSRF_OK);
	assert_int_equal(n, 3);
	assert_int_equal(info[0].id, 1);
	assert_int_equal(info[1].id, 3);
	assert_int_equal(info[2].id, 4);
	assert_int_equal(info[2].signing, 1);
	assert_mode_0600(path);
	assert_int_equal(csrfi_keyfile_read(path, &before, err, sizeof err), CSRF_OK);
	assert_memory_equal(before.keys[1].key, after.keys[2].key, CSRF_KEY_LEN);
	assert_memory_equal(before.keys[2].key, after.keys[3].key, CSRF_KEY_LEN);

	/* Retire down to the signing key alone; rotate until the ring is full. */
	assert_int_equal(csrf_keyfile_retire(path, 1, NULL), CSRF_OK);
	assert_int_equal(csrf_keyfile_retire(path, 3, NULL), CSRF_OK);
	assert_int_equal(csrf_keyfile_list(path, info, CSRF_KEYS_MAX, &n, NULL), CSRF_OK);
	assert_int_equal(n, 1);
	for (int i = 0; i < CSRF_KEYS_MAX - 1; i++)
		assert_int_equal(csrf_keyfile_rotate(path, &id, NULL), CSRF_OK);
	assert_int_equal(id, 19);
	assert_int_equal(csrf_keyfile_rotate(path, &id, NULL), CSRF_ERR_CONFIG);
	assert_int_equal(csrf_keyfile_list(path, info, CSRF_KEYS_MAX, &n, NULL), CSRF_OK);
	assert_int_equal(n, CSRF_KEYS_MAX);
	assert_int_equal(dir_entries(), 1);

	csrfi_keyfile_data_wipe(&before);
	csrfi_keyfile_data_wipe(&after);
	unlink(path);
}

static csrf_ctx *ctx_from(const char *path)
{
	csrf_ctx *ctx;
	assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
	assert_int_equal(csrf_ctx_load_key_file(ctx, path), CSRF_OK);
	return ctx;
}

static uint32_t signing_id(const char *path)
{
	csrf_key_info info[CSRF_KEYS_MAX];
	size_t n = 0;
	assert_int_equal(csrf_keyfile_list(path, info, CSRF_KEYS_MAX, &n, NULL), CSRF_OK);
	for (size_t i = 0; i < n; i++)
		if (info[i].signing)
			return info[i].id;
	fail_msg("no signing key");
	return 0;
}

/* stage, reload everywhere, rotate: a server that has not reloaded since
 * the rotation still verifies the tokens of one that has. With rotate
 * alone it cannot (the window this closes). */
static void test_stage_then_rotate(void **state)
{
	(void)state;
	char path[128];
	uint8_t secret[CSRF_SECRET_LEN] = {7};
	char tok[CSRF_TOKEN_LEN + 1];
	uint32_t id = 0;
	snprintf(path, sizeof path, "%s/keys", tmpdir);
	assert_int_equal(csrf_keyfile_new(path, NULL), CSRF_OK);

	assert_int_equal(csrf_keyfile_stage(path, &id, NULL), CSRF_OK);
	assert_int_equal(id, 2);
	assert_int_equal(signing_id(path), 1); /* staged: verifies, does not sign */
	csrf_ctx *late = ctx_from(path);       /* reloaded after stage only */
	assert_int_equal(csrf_token_issue(late, secret, "s", 1, 0, tok, sizeof tok), CSRF_OK);

	assert_int_equal(csrf_keyfile_rotate(path, &id, NULL), CSRF_OK);
	assert_int_equal(id, 2); /* the staged key signs; nothing new */
	assert_int_equal(signing_id(path), 2);
	csrf_ctx *early = ctx_from(path); /* reloaded after the rotation */
	char tok2[CSRF_TOKEN_LEN + 1];
	assert_int_equal(csrf_token_issue(early, secret, "s", 1, 0, tok2, sizeof tok2), CSRF_OK);
	assert_int_equal(csrf_token_verify(late, secret, "s", 1, tok2, strlen(tok2), 0), CSRF_OK);
	assert_int_equal(csrf_token_verify(early, secret, "s", 1, tok, strlen(tok), 0), CSRF_OK);

	/* Two staged keys: rotations promote them oldest first. */
	assert_int_equal(csrf_keyfile_stage(path, &id, NULL), CSRF_OK);
	assert_int_equal(id, 3);
	assert_int_equal(csrf_keyfile_stage(path, &id, NULL), CSRF_OK);
	assert_int_equal(id, 4);
	assert_int_equal(csrf_keyfile_rotate(path, &id, NULL), CSRF_OK);
	assert_int_equal(id, 3);
	assert_int_equal(csrf_keyfile_rotate(path, &id, NULL), CSRF_OK);
	assert_int_equal(id, 4);
	/* None staged: rotate makes and signs a new key, which a server that
	 * has not reloaded does not know. */
	assert_int_equal(csrf_keyfile_rotate(path, &id, NULL), CSRF_OK);
	assert_int_equal(id, 5);
	csrf_ctx *now = ctx_from(path);
	assert_int_equal(csrf_token_issue(now, secret, "s", 1, 0, tok2, sizeof tok2), CSRF_OK);
	assert_int_equal(csrf_token_verify(late, secret, "s", 1, tok2, strlen(tok2), 0), CSRF_UNKNOWN_KEY);
	/* A staged key may be retired; the signing key may not. */
	assert_int_equal(csrf_keyfile_stage(path, &id, NULL), CSRF_OK);
	assert_int_equal(csrf_keyfile_retire(path, id, NULL), CSRF_OK);
	assert_int_equal(csrf_keyfile_retire(path, 5, NULL), CSRF_ERR_CONFIG);
	assert_int_equal(csrf_keyfile_stage(NULL, &id, NULL), CSRF_ERR_ARG);
	csrf_ctx_free(late);
	csrf_ctx_free(early);
	csrf_ctx_free(now);
	unlink(path);
}

/* Four processes rotate the same file at once: every rotation lands
 * (the directory lock makes read-modify-write take turns). */
static void test_concurrent_rotate(void **state)
{
	(void)state;
	char path[128];
	csrf_key_info info[CSRF_KEYS_MAX];
	size_t n;
	pid_t kids[4];

	snprintf(path, sizeof path, "%s/keys", tmpdir);
	assert_int_equal(csrf_keyfile_new(path, NULL), CSRF_OK);
	for (int k = 0; k < 4; k++) {
		kids[k] = fork();
		assert_true(kids[k] >= 0);
		if (kids[k] == 0) {
			int bad = 0;
			for (int i = 0; i < 3; i++)
				bad |= csrf_keyfile_rotate(path, NULL, NULL) != CSRF_OK;
			_exit(bad);
		}
	}
	for (int k = 0; k < 4; k++) {
		int status = -1;
		assert_int_equal(waitpid(kids[k], &status, 0), kids[k]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	assert_int_equal(csrf_keyfile_list(path, info, CSRF_KEYS_MAX, &n, NULL), CSRF_OK);
	assert_int_equal(n, 13);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(info[i].id, i + 1);
		assert_int_equal(info[i].signing, i == 12);
	}
	assert_int_equal(dir_entries(), 1);
	unlink(path);
}

static void test_io_errors(void **state)
{
	(void)state;
	char path[128], bad[160];
	csrf_key_info info[CSRF_KEYS_MAX];
	size_t n;
	uint32_t id;
	csrfi_keyfile_data d;
	char err[256];

	snprintf(path, sizeof path, "%s/missing", tmpdir);
	assert_int_equal(csrf_keyfile_list(path, info, CSRF_KEYS_MAX, &n, NULL), CSRF_ERR_IO);
	assert_int_equal(csrf_keyfile_rotate(path, &id, NULL), CSRF_ERR_IO);
	assert_int_equal(csrf_keyfile_retire(path, 1, NULL), CSRF_ERR_IO);
	assert_int_equal(csrfi_keyfile_read(path, &d, err, sizeof err), CSRF_ERR_IO);
	assert_non_null(strstr(err, "cannot open"));
	assert_int_equal(csrfi_keyfile_read(tmpdir, &d, err, sizeof err), CSRF_ERR_IO);
	snprintf(bad, sizeof bad, "%s/no/such/dir/keys", tmpdir);
	assert_int_equal(csrf_keyfile_new(bad, NULL), CSRF_ERR_IO);
	assert_int_equal(csrf_keyfile_new(NULL, NULL), CSRF_ERR_ARG);
	assert_int_equal(csrf_keyfile_new("", NULL), CSRF_ERR_ARG);
	assert_int_equal(csrf_keyfile_list(path, info, CSRF_KEYS_MAX, NULL, NULL), CSRF_ERR_ARG);

	/* A malformed file is not rewritten by rotate or retire. */
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("key 1 1 " HEX_A "\n", f); /* no signing key */
	fclose(f);
	assert_int_equal(csrf_keyfile_rotate(path, &id, NULL), CSRF_ERR_CONFIG);
	assert_int_equal(csrf_keyfile_retire(path, 1, NULL), CSRF_ERR_CONFIG);
	assert_int_equal(csrf_keyfile_list(path, info, CSRF_KEYS_MAX, &n, NULL), CSRF_ERR_CONFIG);
	assert_int_equal(dir_entries(), 1);
	unlink(path);
}

/* Each operator call says why it failed, in words csrf-key prints as
 * they are, and never with key material. */
static void test_operator_messages(void **state)
{
	(void)state;
	char path[128], missing[128];
	csrf_error err;
	snprintf(path, sizeof path, "%s/keys", tmpdir);
	snprintf(missing, sizeof missing, "%s/missing", tmpdir);
	assert_int_equal(csrf_keyfile_new(path, &err), CSRF_OK);
	assert_string_equal(err.msg, "");
	assert_int_equal(csrf_keyfile_new(path, &err), CSRF_ERR_IO);
	assert_string_equal(err.msg, "the file already exists (use rotate)");
	assert_int_equal(csrf_keyfile_retire(path, 1, &err), CSRF_ERR_CONFIG);
	assert_string_equal(err.msg, "key 1 is the signing key; rotate first");
	assert_int_equal(csrf_keyfile_retire(path, 9, &err), CSRF_ERR_CONFIG);
	assert_string_equal(err.msg, "no key with id 9");
	for (int i = 1; i < CSRF_KEYS_MAX; i++)
		assert_int_equal(csrf_keyfile_stage(path, NULL, &err), CSRF_OK);
	assert_int_equal(csrf_keyfile_stage(path, NULL, &err), CSRF_ERR_CONFIG);
	assert_non_null(strstr(err.msg, "retire an old one first"));
	assert_int_equal(csrf_keyfile_rotate(missing, NULL, &err), CSRF_ERR_IO);
	assert_non_null(strstr(err.msg, "No such file"));
	size_t n = 0;
	csrf_key_info keys[2];
	assert_int_equal(csrf_keyfile_list(path, keys, 2, &n, &err), CSRF_ERR_BUFFER);
	assert_int_equal(n, CSRF_KEYS_MAX);
	/* a malformed file: the parser's line and reason */
	FILE *f = fopen(missing, "w");
	assert_non_null(f);
	fputs("key 1 0 zz sign\n", f);
	fclose(f);
	assert_int_equal(chmod(missing, 0600), 0);
	assert_int_equal(csrf_keyfile_list(missing, keys, 2, &n, &err), CSRF_ERR_CONFIG);
	assert_non_null(strstr(err.msg, "line 1: key must be exactly 64 hex digits"));
	/* NULL err is allowed */
	assert_int_equal(csrf_keyfile_retire(path, 99, NULL), CSRF_ERR_CONFIG);
}

/* Entries of a directory other than . and .. (rewrites leave no lock
 * file behind) */
static size_t entries_of(const char *path)
{
	DIR *dir = opendir(path);
	struct dirent *e;
	size_t n = 0;
	assert_non_null(dir);
	while ((e = readdir(dir)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(dir);
	return n;
}

/* The file's bytes, for "a refused rewrite changed nothing". */
static size_t slurp(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	size_t n = fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

/* A rewrite keeps the mode the operator gave the file, less what must
 * never be there: world bits, execute bits, setuid and the like. The
 * rows: the old mode, the mode after each rewrite. */
static void test_rewrite_keeps_mode(void **state)
{
	(void)state;
	static const struct {
		mode_t before, after;
	} modes[] = {
	    {0600, 0600}, {0640, 0640}, {0660, 0660}, {0644, 0640},  {0604, 0600},
	    {0400, 0400}, {0440, 0440}, {0755, 0640}, {02640, 0640}, {0666, 0660},
	};
	char path[128];
	uint32_t id = 0;
	struct stat st;

	snprintf(path, sizeof path, "%s/keys", tmpdir);
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		assert_int_equal(csrf_keyfile_new(path, NULL), CSRF_OK);
		assert_int_equal(chmod(path, modes[i].before), 0);
		assert_int_equal(csrf_keyfile_stage(path, &id, NULL), CSRF_OK);
		assert_int_equal(stat(path, &st), 0);
		if ((st.st_mode & 07777) != modes[i].after)
			fail_msg("mode %04o after stage, want %04o (was %04o)", (unsigned)(st.st_mode & 07777),
			         (unsigned)modes[i].after, (unsigned)modes[i].before);
		assert_int_equal(csrf_keyfile_rotate(path, &id, NULL), CSRF_OK);
		assert_int_equal(csrf_keyfile_retire(path, 1, NULL), CSRF_OK);
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_mode & 07777, modes[i].after);
		assert_int_equal(dir_entries(), 1);
		assert_int_equal(unlink(path), 0);
	}
}

/* The uid and gid the rewrite should keep: a user and a group that are
 * not the caller's, when the caller may give them away (root), else a
 * supplementary group of the caller. 0 when there is none to try. */
static int other_owner(uid_t *uid, gid_t *gid)
{
	if (geteuid() == 0) {
		*uid = 65534; /* nobody */
		*gid = 65533;
		return 1;
	}
	gid_t groups[64];
	int n = getgroups(64, groups);
	for (int i = 0; i < n; i++) {
		if (groups[i] != getegid()) {
			*uid = geteuid();
			*gid = groups[i];
			return 1;
		}
	}
	return 0;
}

/* The readers an operator gave the file keep it: the owner and group of
 * the old file go to the new one. */
static void test_rewrite_keeps_owner_and_group(void **state)
{
	(void)state;
	char path[128];
	uid_t uid = 0;
	gid_t gid = 0;
	struct stat st;

	if (!other_owner(&uid, &gid)) {
		print_message("no second group to give the file: owner/group case not run\n");
		skip();
	}
	snprintf(path, sizeof path, "%s/keys", tmpdir);
	assert_int_equal(csrf_keyfile_new(path, NULL), CSRF_OK);
	assert_int_equal(chown(path, uid, gid), 0);
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(csrf_keyfile_rotate(path, NULL, NULL), CSRF_OK);
	assert_int_equal(csrf_keyfile_stage(path, NULL, NULL), CSRF_OK);
	assert_int_equal(csrf_keyfile_retire(path, 1, NULL), CSRF_OK);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_uid, uid);
	assert_int_equal(st.st_gid, gid);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(dir_entries(), 1);
	assert_int_equal(unlink(path), 0);
}

/* A caller that cannot give the new file the old one's group (not root,
 * not a member) is refused when the group could read the file: the
 * readers would lose it. The file is left as it was. A file without
 * group bits has no group readers to lose: that rewrite goes ahead.
 * Needs root to set the scene (a child drops to nobody). */
static void test_rewrite_refuses_to_drop_readers(void **state)
{
	(void)state;
	char sub[128], path[160], made[160], before[4096], after[4096];
	size_t nb, na;
	struct stat st;

	if (geteuid() != 0) {
		print_message("not root: cannot run a rewrite as another user\n");
		skip();
	}
	snprintf(sub, sizeof sub, "%s/d", tmpdir);
	snprintf(path, sizeof path, "%s/keys", sub);
	snprintf(made, sizeof made, "%s/made", tmpdir);
	assert_int_equal(chmod(tmpdir, 0711), 0);
	assert_int_equal(mkdir(sub, 0700), 0);
	assert_int_equal(chown(sub, 65534, 65534), 0);
	for (int grouped = 1; grouped >= 0; grouped--) {
		/* made beside, then moved in: as root, new refuses a directory
		 * of another user's */
		assert_int_equal(csrf_keyfile_new(made, NULL), CSRF_OK);
		assert_int_equal(rename(made, path), 0);
		assert_int_equal(chown(path, 65534, 65533), 0); /* nobody, a group nobody is not in */
		assert_int_equal(chmod(path, grouped ? 0640 : 0600), 0);
		nb = slurp(path, before, sizeof before);
		pid_t kid = fork();
		assert_true(kid >= 0);
		if (kid == 0) {
			csrf_error err;
			if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
				_exit(90);
			csrf_reason r = csrf_keyfile_rotate(path, NULL, &err);
			if (grouped)
				_exit(r == CSRF_ERR_IO && strstr(err.msg, "group 65533") && strstr(err.msg, "root")
				          ? 0
				          : 91);
			_exit(r == CSRF_OK ? 0 : 92);
		}
		int status = -1;
		assert_int_equal(waitpid(kid, &status, 0), kid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
		assert_int_equal(stat(path, &st), 0);
		na = slurp(path, after, sizeof after);
		if (grouped) {
			assert_int_equal(na, nb);
			assert_memory_equal(after, before, nb);
			assert_int_equal(st.st_gid, 65533);
			assert_int_equal(st.st_mode & 07777, 0640);
		} else {
			assert_true(na > nb); /* a second key */
			assert_int_equal(st.st_uid, 65534);
			assert_int_equal(st.st_mode & 07777, 0600);
		}
		assert_int_equal(entries_of(sub), 1);
		assert_int_equal(unlink(path), 0);
	}
	assert_int_equal(rmdir(sub), 0);
	csrfi_wipe(before, sizeof before);
	csrfi_wipe(after, sizeof after);
}

/* A key file reached through a symlink (a configuration-management
 * layout): the rewrite replaces the file the link points to, in that
 * file's directory, and the link stays a link. A dangling link is an
 * error, and new never writes through a link. */
static void test_rewrite_follows_symlink(void **state)
{
	(void)state;
	char sub[128], real[160], link1[160], link2[160], dangling[160], target[160];
	csrf_key_info info[CSRF_KEYS_MAX];
	size_t n = 0;
	uint32_t id = 0;
	struct stat st;
	csrf_error err;

	snprintf(sub, sizeof sub, "%s/real", tmpdir);
	snprintf(real, sizeof real, "%s/keys", sub);
	snprintf(link1, sizeof link1, "%s/link", tmpdir);
	snprintf(link2, sizeof link2, "%s/link2", tmpdir);
	snprintf(dangling, sizeof dangling, "%s/dangling", tmpdir);
	assert_int_equal(mkdir(sub, 0700), 0);
	assert_int_equal(csrf_keyfile_new(real, NULL), CSRF_OK);
	assert_int_equal(chmod(real, 0640), 0);
	assert_int_equal(symlink("real/keys", link1), 0); /* relative to the link's directory */
	assert_int_equal(symlink(link1, link2), 0);       /* a link to a link */

	assert_int_equal(csrf_keyfile_stage(link1, &id, &err), CSRF_OK);
	assert_int_equal(id, 2);
	assert_int_equal(csrf_keyfile_rotate(link2, &id, &err), CSRF_OK);
	assert_int_equal(id, 2);
	assert_int_equal(csrf_keyfile_retire(link1, 1, &err), CSRF_OK);
	assert_int_equal(csrf_keyfile_rotate(link1, &id, &err), CSRF_OK);
	assert_int_equal(id, 3);

	assert_int_equal(lstat(link1, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	ssize_t tl = readlink(link1, target, sizeof target - 1);
	assert_true(tl > 0);
	target[tl] = '\0';
	assert_string_equal(target, "real/keys");
	assert_int_equal(lstat(link2, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(lstat(real, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(csrf_keyfile_list(real, info, CSRF_KEYS_MAX, &n, NULL), CSRF_OK);
	assert_int_equal(n, 2);
	assert_int_equal(info[0].id, 2);
	assert_int_equal(info[1].id, 3);
	assert_int_equal(info[1].signing, 1);
	assert_int_equal(entries_of(sub), 1); /* no temporary file left */
	assert_int_equal(dir_entries(), 3);   /* real/, link, link2 */

	/* new never writes through a link, dangling or not */
	assert_int_equal(csrf_keyfile_new(link1, &err), CSRF_ERR_IO);
	assert_string_equal(err.msg, "the file already exists (use rotate)");
	assert_int_equal(symlink("real/missing", dangling), 0);
	assert_int_equal(csrf_keyfile_new(dangling, &err), CSRF_ERR_IO);
	assert_int_equal(csrf_keyfile_rotate(dangling, &id, &err), CSRF_ERR_IO);
	assert_non_null(strstr(err.msg, "No such file"));
	assert_int_equal(lstat(dangling, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(entries_of(sub), 1);

	unlink(dangling);
	unlink(link2);
	unlink(link1);
	unlink(real);
	assert_int_equal(rmdir(sub), 0);
}

/* Writes text to path (mode 0600). */
static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0600), 0);
}

/* The ids are spent (the signing key has the last one): stage and
 * rotate say so and what to do, not that the ring is full. */
static void test_last_id_message(void **state)
{
	(void)state;
	char path[128];
	csrf_error err;

	snprintf(path, sizeof path, "%s/keys", tmpdir);
	put_file(path, "key 7 1 " HEX_B "\nkey 4294967295 1 " HEX_A " sign\n");
	assert_int_equal(csrf_keyfile_stage(path, NULL, &err), CSRF_ERR_CONFIG);
	if (!strstr(err.msg, "4294967295") || strstr(err.msg, "16 keys"))
		fail_msg("stage at the last id: %s", err.msg);
	assert_non_null(strstr(err.msg, "csrf-key new"));
	assert_int_equal(csrf_keyfile_rotate(path, NULL, &err), CSRF_ERR_CONFIG);
	assert_non_null(strstr(err.msg, "4294967295"));
	unlink(path);
}

/* Readers (csrfi_keyfile_read: csrf_ctx_load_key_file, csrf-key list)
 * refuse a key file the world may read or write, or the group may
 * write: anyone who reads a signing key forges tokens. The message names
 * the file's mode and the fix. */
static void test_readers_refuse_loose_modes(void **state)
{
	(void)state;
	static const struct {
		mode_t mode;
		int ok;
	} modes[] = {{0600, 1}, {0640, 1}, {0400, 1}, {0440, 1}, {0644, 0}, {0604, 0},
	             {0660, 0}, {0620, 0}, {0602, 0}, {0601, 0}, {0666, 0}, {0610, 1}};
	char path[128], msg[CSRF_ERROR_MAX];
	csrfi_keyfile_data d;

	snprintf(path, sizeof path, "%s/keys", tmpdir);
	put_file(path, "key 1 1 " HEX_A " sign\n");
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		assert_int_equal(chmod(path, modes[i].mode), 0);
		csrf_reason r = csrfi_keyfile_read(path, &d, msg, sizeof msg);
		if (modes[i].ok) {
			if (r != CSRF_OK)
				fail_msg("mode %04o refused: %s", (unsigned)modes[i].mode, msg);
			continue;
		}
		if (r != CSRF_ERR_CONFIG)
			fail_msg("mode %04o: reason %d, want a refusal", (unsigned)modes[i].mode, (int)r);
		assert_non_null(strstr(msg, path));
		assert_non_null(strstr(msg, "chmod"));
		assert_int_equal(d.n, 0);
		csrf_ctx *ctx = NULL;
		assert_int_equal(csrf_ctx_new(&ctx, NULL), CSRF_OK);
		assert_int_not_equal(csrf_ctx_load_key_file(ctx, path), CSRF_OK);
		csrf_ctx_free(ctx);
		/* the operator may still list it (and a rewrite narrows it) */
		size_t n = 0;
		csrf_key_info info[2];
		assert_int_equal(csrf_keyfile_list(path, info, 2, &n, NULL), CSRF_OK);
		assert_int_equal(n, 1);
	}
	unlink(path);
}

/* The review's race: a user who owns a directory of the path swaps it
 * for a symlink to a root-only directory while root rotates. A child
 * exchanges att/d (the user's directory with the user's key file) and
 * att/s (a symlink to prot/) as fast as it can while root rotates
 * att/d/keys; prot/keys stands for /etc/shadow (not a key file). Root
 * must never write into prot/ (no file of the user's there, the file
 * there unchanged): each step resolving the path by name again lost
 * this race within a few hundred rotations. */
static void test_rewrite_directory_swap_race(void **state)
{
	(void)state;
	char prot[128], att[128], d[160], s[160], path[192], victim[160], before[256], after[256];
	struct stat st;
	int rotated = 0;

	if (geteuid() != 0) {
		print_message("not root: the race needs a second user\n");
		skip();
	}
	snprintf(prot, sizeof prot, "%s/prot", tmpdir);
	snprintf(att, sizeof att, "%s/att", tmpdir);
	snprintf(d, sizeof d, "%s/d", att);
	snprintf(s, sizeof s, "%s/s", att);
	snprintf(path, sizeof path, "%s/keys", d);
	snprintf(victim, sizeof victim, "%s/keys", prot);
	assert_int_equal(chmod(tmpdir, 0755), 0);
	assert_int_equal(mkdir(prot, 0700), 0);
	put_file(victim, "root:not-a-key-file:0:0\n");
	size_t nb = slurp(victim, before, sizeof before);
	assert_int_equal(mkdir(att, 0755), 0);
	assert_int_equal(mkdir(d, 0755), 0);
	assert_int_equal(csrf_keyfile_new(path, NULL), CSRF_OK);
	assert_int_equal(chown(path, 65534, 65534), 0);
	assert_int_equal(chown(d, 65534, 65534), 0);
	assert_int_equal(chown(att, 65534, 65534), 0);
	assert_int_equal(symlink("../prot", s), 0);

	pid_t kid = fork();
	assert_true(kid >= 0);
	if (kid == 0) {
		if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
			_exit(90);
		for (;;)
			renameat2(AT_FDCWD, d, AT_FDCWD, s, RENAME_EXCHANGE);
	}
	for (int i = 0; i < 400; i++) {
		rotated += csrf_keyfile_rotate(path, NULL, NULL) == CSRF_OK;
		if (csrf_keyfile_retire(path, 1, NULL) != CSRF_OK)
			(void)0; /* the race makes many calls fail; the file count below is what matters */
		if (entries_of(prot) != 1 || lstat(victim, &st) != 0 || st.st_uid != 0)
			break;
	}
	kill(kid, SIGKILL);
	assert_int_equal(waitpid(kid, NULL, 0), kid);
	print_message("rotations that went through during the race: %d of 400\n", rotated);
	assert_int_equal(entries_of(prot), 1);
	assert_int_equal(lstat(victim, &st), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	size_t na = slurp(victim, after, sizeof after);
	assert_int_equal(na, nb);
	assert_memory_equal(after, before, nb);
	/* att/d may be either name now */
	if (lstat(d, &st) == 0 && S_ISLNK(st.st_mode))
		assert_int_equal(renameat2(AT_FDCWD, d, AT_FDCWD, s, RENAME_EXCHANGE), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_int_equal(st.st_uid, 65534);
	assert_int_equal(entries_of(d), 1); /* no temporary file left */
	unlink(path);
	unlink(s);
	rmdir(d);
	rmdir(att);
	unlink(victim);
	rmdir(prot);
}

/* Root rewrites a key file only in a directory that no one but root and
 * the file's owner can write: a world-writable sticky directory (a file
 * another user planted there would come back owned by that user), a
 * group-writable one, one owned by another user. The file is left as it
 * was. A directory of the file's owner is fine. */
static void test_root_refuses_unsafe_directory(void **state)
{
	(void)state;
	static const struct {
		mode_t dir_mode;
		uid_t dir_uid, file_uid;
		const char *says; /* NULL: the rewrite goes ahead */
	} dir_cases[] = {
	    {01777, 0, 65534, "writable by its group or others"},
	    {01777, 0, 0, "writable by its group or others"},
	    {0770, 0, 0, "writable by its group or others"},
	    {0702, 0, 0, "writable by its group or others"},
	    {0700, 65534, 0, "belongs to uid 65534"},
	    {0700, 65533, 65534, "belongs to uid 65533"},
	    {0700, 65534, 65534, NULL},
	    {0755, 0, 65534, NULL},
	};
	char sub[128], path[160], before[4096], after[4096];
	csrf_error err;

	if (geteuid() != 0) {
		print_message("not root: the directory checks are root's\n");
		skip();
	}
	snprintf(sub, sizeof sub, "%s/d", tmpdir);
	snprintf(path, sizeof path, "%s/keys", sub);
	for (size_t i = 0; i < sizeof dir_cases / sizeof dir_cases[0]; i++) {
		assert_int_equal(mkdir(sub, 0700), 0);
		assert_int_equal(csrf_keyfile_new(path, NULL), CSRF_OK);
		assert_int_equal(chown(path, dir_cases[i].file_uid, 0), 0);
		assert_int_equal(chown(sub, dir_cases[i].dir_uid, 0), 0);
		assert_int_equal(chmod(sub, dir_cases[i].dir_mode), 0);
		size_t nb = slurp(path, before, sizeof before);
		csrf_reason r = csrf_keyfile_rotate(path, NULL, &err);
		size_t na = slurp(path, after, sizeof after);
		if (dir_cases[i].says) {
			if (r != CSRF_ERR_IO || !strstr(err.msg, dir_cases[i].says))
				fail_msg("row %zu: %s \"%s\", want a refusal saying \"%s\"", i, csrf_reason_name(r),
				         err.msg, dir_cases[i].says);
			assert_int_equal(na, nb);
			assert_memory_equal(after, before, nb);
		} else {
			if (r != CSRF_OK)
				fail_msg("row %zu: %s \"%s\"", i, csrf_reason_name(r), err.msg);
			assert_true(na > nb);
		}
		assert_int_equal(entries_of(sub), 1);
		assert_int_equal(unlink(path), 0);
		assert_int_equal(rmdir(sub), 0);
	}
	csrfi_wipe(before, sizeof before);
	csrfi_wipe(after, sizeof after);
}

/* A POSIX ACL in the xattr's form: version 2, then (tag, perm, id). */
static size_t acl_bytes(uint8_t *out, const uint16_t (*e)[2], const uint32_t *ids, size_t n)
{
	uint32_t v = 2;
	memcpy(out, &v, 4);
	for (size_t i = 0; i < n; i++) {
		memcpy(out + 4 + 8 * i, &e[i][0], 2);
		memcpy(out + 4 + 8 * i + 2, &e[i][1], 2);
		memcpy(out + 4 + 8 * i + 4, &ids[i], 4);
	}
	return 4 + 8 * n;
}

/* A file readable by one named user through an ACL, not by its owning
 * group (the group bits of its mode are the ACL's mask): a rewrite keeps
 * the ACL, so the group does not gain access and the user keeps it. */
static void test_rewrite_keeps_acl(void **state)
{
	(void)state;
	/* user::rw- user:65534:r-- group::--- mask::r-- other::--- */
	static const uint16_t ent[][2] = {{0x01, 6}, {0x02, 4}, {0x04, 0}, {0x10, 4}, {0x20, 0}};
	static const uint32_t ids[] = {(uint32_t)-1, 65534, (uint32_t)-1, (uint32_t)-1, (uint32_t)-1};
	uint8_t acl[64], got_before[256], got_after[256];
	char path[128];
	struct stat st;
	csrf_error err;

	snprintf(path, sizeof path, "%s/keys", tmpdir);
	assert_int_equal(csrf_keyfile_new(path, NULL), CSRF_OK);
	size_t n = acl_bytes(acl, ent, ids, 5);
	if (setxattr(path, "system.posix_acl_access", acl, n, 0) != 0) {
		print_message("no POSIX ACLs here (%s): ACL case not run\n", strerror(errno));
		unlink(path);
		skip();
	}
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640); /* the group bits are the mask */
	ssize_t nb = getxattr(path, "system.posix_acl_access", got_before, sizeof got_before);
	assert_true(nb > 0);
	if (csrf_keyfile_rotate(path, NULL, &err) != CSRF_OK)
		fail_msg("rotate: %s", err.msg);
	assert_int_equal(csrf_keyfile_retire(path, 1, &err), CSRF_OK);
	ssize_t na = getxattr(path, "system.posix_acl_access", got_after, sizeof got_after);
	if (na < 0)
		fail_msg("the ACL was dropped by the rewrite: %s", strerror(errno));
	assert_int_equal(na, nb);
	assert_memory_equal(got_after, got_before, (size_t)nb);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(dir_entries(), 1);
	unlink(path);
}

/* A directory with a default ACL naming another user: the new file
 * inherits it as an access ACL when created there. A new file and a
 * rewrite of a file without an ACL must not keep it (a rewrite never
 * gives more access than the file had). */
static void test_rewrite_drops_inherited_acl(void **state)
{
	(void)state;
	/* user::rwx user:65534:r-- group::r-x mask::r-x other::r-x */
	static const uint16_t ent[][2] = {{0x01, 7}, {0x02, 4}, {0x04, 5}, {0x10, 5}, {0x20, 5}};
	static const uint32_t ids[] = {(uint32_t)-1, 65534, (uint32_t)-1, (uint32_t)-1, (uint32_t)-1};
	uint8_t acl[64], got[256];
	char path[128];
	struct stat st;
	csrf_error err;

	snprintf(path, sizeof path, "%s/keys", tmpdir);
	size_t n = acl_bytes(acl, ent, ids, 5);
	if (setxattr(tmpdir, "system.posix_acl_default", acl, n, 0) != 0) {
		print_message("no POSIX ACLs here (%s): default ACL case not run\n", strerror(errno));
		skip();
	}
	if (csrf_keyfile_new(path, &err) != CSRF_OK)
		fail_msg("new: %s", err.msg);
	if (getxattr(path, "system.posix_acl_access", got, sizeof got) >= 0)
		fail_msg("a new key file kept the directory's default ACL");
	assert_int_equal(errno, ENODATA);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	/* the operator lets the group read it; a rewrite must not add the
	 * named user */
	assert_int_equal(chmod(path, 0640), 0);
	if (csrf_keyfile_rotate(path, NULL, &err) != CSRF_OK)
		fail_msg("rotate: %s", err.msg);
	if (csrf_keyfile_stage(path, NULL, &err) != CSRF_OK)
		fail_msg("stage: %s", err.msg);
	if (csrf_keyfile_retire(path, 1, &err) != CSRF_OK)
		fail_msg("retire: %s", err.msg);
	if (getxattr(path, "system.posix_acl_access", got, sizeof got) >= 0)
		fail_msg("a rewrite gave the file the directory's default ACL");
	assert_int_equal(errno, ENODATA);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(removexattr(tmpdir, "system.posix_acl_default"), 0);
	unlink(path);
}

/* Starts a rotation of path in a child (a blocking lock would hang: it
 * is killed after 5 s); rotate_wait gives the child's verdict: 0 done,
 * 1 refused as locked after waiting about csrfi_keyfile_lock_wait_ms, 91
 * anything else. */
static pid_t rotate_start(const char *path)
{
	pid_t kid = fork();
	assert_true(kid >= 0);
	if (kid == 0) {
		csrf_error err;
		alarm(5);
		int64_t t0 = mono_ms();
		csrf_reason r = csrf_keyfile_rotate(path, NULL, &err);
		int64_t took = mono_ms() - t0;
		if (r == CSRF_OK)
			_exit(0);
		_exit(r == CSRF_ERR_IO && strstr(err.msg, "locked by another process") && took >= 150 && took < 3000
		          ? 1
		          : 91);
	}
	return kid;
}

static int rotate_wait(pid_t kid)
{
	int status = -1;
	assert_int_equal(waitpid(kid, &status, 0), kid);
	if (!WIFEXITED(status))
		fail_msg("rotate killed by signal %d", WTERMSIG(status));
	return WEXITSTATUS(status);
}

static int rotate_in_child(const char *path)
{
	return rotate_wait(rotate_start(path));
}

/* An exclusive flock on a lock file created at path (mode 0600). */
static int hold_lock(const char *path)
{
	int fd = open(path, O_RDONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX), 0);
	return fd;
}

/* Rewrites take turns through a lock file of their own in the key
 * file's directory (mode 0600): a flock on the directory, which anyone
 * who can open it may hold, no longer stops a rotation. Holding the
 * lock file does: a rewrite waits a bounded time, says so, and changes
 * nothing. A rewrite removes the lock file when it is done, so nothing
 * is left in the directory (a package's purge finds /etc/nginx as it
 * was). As root a lock file that is not a regular file of root's or
 * the directory owner's is refused. */
static void test_locked_directory_times_out(void **state)
{
	(void)state;
	char path[128], lock[128], before[4096], after[4096];
	csrf_error err;
	struct stat st;

	snprintf(path, sizeof path, "%s/keys", tmpdir);
	snprintf(lock, sizeof lock, "%s/.csrf-key.lock", tmpdir);
	assert_int_equal(csrf_keyfile_new(path, NULL), CSRF_OK);
	assert_int_equal(lstat(lock, &st), -1); /* new leaves no lock file */
	unsigned saved = csrfi_keyfile_lock_wait_ms;
	csrfi_keyfile_lock_wait_ms = 200;
	/* someone holds the directory: no matter */
	int holder = open(tmpdir, O_RDONLY | O_DIRECTORY);
	assert_true(holder >= 0);
	assert_int_equal(flock(holder, LOCK_EX), 0);
	assert_int_equal(rotate_in_child(path), 0);
	close(holder);
	assert_int_equal(lstat(lock, &st), -1);
	assert_int_equal(errno, ENOENT);
	/* someone holds the lock file: the rewrite waits, then gives up, and
	 * leaves the holder's lock file alone */
	size_t nb = slurp(path, before, sizeof before);
	holder = hold_lock(lock);
	assert_int_equal(rotate_in_child(path), 1);
	size_t na = slurp(path, after, sizeof after);
	assert_int_equal(na, nb);
	assert_memory_equal(after, before, nb);
	assert_int_equal(lstat(lock, &st), 0);
	close(holder);
	/* a rewrite that got the lock of a file its holder has since
	 * removed, while another process locks the new one, waits for that
	 * one: the lock of an unnamed file excludes no one */
	holder = hold_lock(lock);
	pid_t kid = rotate_start(path);
	struct timespec ts = {0, 60 * 1000 * 1000};
	nanosleep(&ts, NULL); /* the child has opened the old file */
	assert_int_equal(unlink(lock), 0);
	int second = hold_lock(lock);
	close(holder);
	assert_int_equal(rotate_wait(kid), 1);
	na = slurp(path, after, sizeof after);
	assert_int_equal(na, nb);
	assert_memory_equal(after, before, nb);
	close(second);
	assert_int_equal(csrf_keyfile_rotate(path, NULL, &err), CSRF_OK);
	assert_int_equal(lstat(lock, &st), -1);
	csrfi_keyfile_lock_wait_ms = saved;
	if (geteuid() == 0) {
		/* as root: a lock file another user planted, or a link; both
		 * refused and left for the operator to remove */
		close(hold_lock(lock));
		assert_int_equal(chown(lock, 65534, 65534), 0);
		assert_int_equal(csrf_keyfile_rotate(path, NULL, &err), CSRF_ERR_IO);
		assert_non_null(strstr(err.msg, "lock file"));
		assert_int_equal(lstat(lock, &st), 0);
		assert_int_equal(unlink(lock), 0);
		assert_int_equal(symlink("keys", lock), 0);
		assert_int_equal(csrf_keyfile_rotate(path, NULL, &err), CSRF_ERR_IO);
		assert_non_null(strstr(err.msg, "lock file"));
		assert_int_equal(unlink(lock), 0);
		assert_int_equal(csrf_keyfile_rotate(path, NULL, &err), CSRF_OK);
	}
	assert_int_equal(dir_entries(), 1);
	unlink(path);
	csrfi_wipe(before, sizeof before);
	csrfi_wipe(after, sizeof after);
}

/* As root, a lock file in another user's directory that is a hard link
 * (to a file of root's the user could link, where fs.protected_hardlinks
 * is 0) is refused before anything is done to it: it is not given to the
 * directory's owner, whatever file it names. */
static void test_root_refuses_linked_lock_file(void **state)
{
	(void)state;
	char dir[128], path[160], lock[160], victim[160];
	struct stat st;
	csrf_error err;

	if (geteuid() != 0) {
		skip();
		return;
	}
	snprintf(dir, sizeof dir, "%s/user", tmpdir);
	snprintf(path, sizeof path, "%s/keys", dir);
	snprintf(lock, sizeof lock, "%s/.csrf-key.lock", dir);
	snprintf(victim, sizeof victim, "%s/victim", tmpdir);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(chown(dir, 65534, 65534), 0);
	int fd = open(victim, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(link(victim, lock), 0);
	assert_int_equal(csrf_keyfile_new(path, &err), CSRF_ERR_IO);
	assert_non_null(strstr(err.msg, "lock file"));
	assert_int_equal(stat(victim, &st), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_nlink, 2); /* the link is left for the operator */
	assert_int_equal(unlink(lock), 0);
	assert_int_equal(unlink(victim), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* A rewrite killed between writing its temporary file and the rename
 * leaves that file (it holds keys) in the directory; the next rewrite
 * removes it, under the lock, and only names of that exact form. */
static void test_rewrite_removes_leftover_tmp(void **state)
{
	(void)state;
	char path[128], left[160], other[160], dirname_[160];
	struct stat st;

	snprintf(path, sizeof path, "%s/keys", tmpdir);
	snprintf(left, sizeof left, "%s/.csrf-key-0123456789abcdef.tmp", tmpdir);
	snprintf(other, sizeof other, "%s/.csrf-key-notmine.tmp", tmpdir);
	snprintf(dirname_, sizeof dirname_, "%s/.csrf-key-fedcba9876543210.tmp", tmpdir);
	assert_int_equal(csrf_keyfile_new(path, NULL), CSRF_OK);
	int fd = open(left, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "key 1 0 00\n", 11), 11);
	close(fd);
	fd = open(other, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(mkdir(dirname_, 0700), 0);
	assert_int_equal(csrf_keyfile_stage(path, NULL, NULL), CSRF_OK);
	assert_int_equal(lstat(left, &st), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(lstat(other, &st), 0);    /* not a name kf_write makes */
	assert_int_equal(lstat(dirname_, &st), 0); /* not a regular file */
	assert_int_equal(unlink(other), 0);
	assert_int_equal(rmdir(dirname_), 0);
	assert_int_equal(dir_entries(), 1);
	unlink(path);
}

/* A file with a second hard link: a rewrite would replace one name and a
 * server reading the other would keep every key, retired ones too. */
static void test_rewrite_refuses_hard_link(void **state)
{
	(void)state;
	char path[128], other[128], before[4096], after[4096];
	csrf_error err;

	snprintf(path, sizeof path, "%s/keys", tmpdir);
	snprintf(other, sizeof other, "%s/keys.other", tmpdir);
	assert_int_equal(csrf_keyfile_new(path, NULL), CSRF_OK);
	assert_int_equal(csrf_keyfile_stage(path, NULL, NULL), CSRF_OK);
	assert_int_equal(link(path, other), 0);
	size_t nb = slurp(path, before, sizeof before);
	assert_int_equal(csrf_keyfile_rotate(path, NULL, &err), CSRF_ERR_IO);
	assert_non_null(strstr(err.msg, "2 hard links"));
	assert_int_equal(csrf_keyfile_retire(other, 2, &err), CSRF_ERR_IO);
	assert_int_equal(csrf_keyfile_stage(other, NULL, &err), CSRF_ERR_IO);
	size_t na = slurp(path, after, sizeof after);
	assert_int_equal(na, nb);
	assert_memory_equal(after, before, nb);
	assert_int_equal(dir_entries(), 2);
	assert_int_equal(unlink(other), 0);
	assert_int_equal(csrf_keyfile_rotate(path, NULL, &err), CSRF_OK);
	unlink(path);
	csrfi_wipe(before, sizeof before);
	csrfi_wipe(after, sizeof after);
}

static int sync_fails(int fd)
{
	(void)fd;
	errno = EIO;
	return -1;
}

/* The rename went through but the directory could not be synced: the
 * message says the file was replaced (not "cannot write the file"). */
static void test_dir_sync_failure_message(void **state)
{
	(void)state;
	char path[128];
	csrf_error err;
	size_t n = 0;
	csrf_key_info info[CSRF_KEYS_MAX];

	snprintf(path, sizeof path, "%s/keys", tmpdir);
	assert_int_equal(csrf_keyfile_new(path, NULL), CSRF_OK);
	int (*saved)(int) = csrfi_keyfile_sync_dir;
	csrfi_keyfile_sync_dir = sync_fails;
	csrf_reason r = csrf_keyfile_rotate(path, NULL, &err);
	csrfi_keyfile_sync_dir = saved;
	assert_int_equal(r, CSRF_ERR_IO);
	if (!strstr(err.msg, "the file was replaced") || strstr(err.msg, "cannot write"))
		fail_msg("message \"%s\"", err.msg);
	assert_int_equal(csrf_keyfile_list(path, info, CSRF_KEYS_MAX, &n, NULL), CSRF_OK);
	assert_int_equal(n, 2); /* the rotation happened */
	assert_int_equal(dir_entries(), 1);
	unlink(path);
}

/* ---- the dead stack ----
 *
 * What csrf_ctx_add_key and csrf_ctx_load_key_file leave on the stack
 * and in the registers once returned: no 8 bytes of the key, its text in
 * the file or its HMAC states (tu_dead_stack). The key, the file and a
 * twin context for the states are made on a thread of their own. */

typedef struct {
	int load; /* 0: csrf_ctx_add_key, 1: csrf_ctx_load_key_file */
	int free;
	int ok;
	uint8_t key[CSRF_KEY_LEN];
	char hex[2 * CSRF_KEY_LEN + 1];
	char path[128];
	uint32_t states[2][8];
	tu_secret s[4]; /* the key, its text, its states */
	size_t n;
	csrf_ctx *ctx;
	csrf_reason r;
} dead_key;

static void dead_key_prepare(void *p)
{
	dead_key *d = p;
	if (d->free) {
		csrf_ctx_free(d->ctx);
		unlink(d->path);
		return;
	}
	d->ok = 0;
	uint32_t seed = 0x9e3779b9u;
	for (size_t i = 0; i < sizeof d->key; i++) {
		seed ^= seed << 13, seed ^= seed >> 17, seed ^= seed << 5;
		d->key[i] = (uint8_t)(seed >> 11);
	}
	csrfx_hex_encode(d->key, sizeof d->key, d->hex);
	d->hex[2 * CSRF_KEY_LEN] = '\0';
	snprintf(d->path, sizeof d->path, "%s/dead-keys", tmpdir);
	int fd = open(d->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f)
		return;
	fprintf(f, "key 7 1700000000 %s sign\n", d->hex);
	if (fclose(f) != 0)
		return;
	csrf_ctx *twin = NULL;
	if (csrf_ctx_new(&d->ctx, NULL) != CSRF_OK || csrf_ctx_new(&twin, NULL) != CSRF_OK ||
	    csrf_ctx_add_key(twin, 7, d->key, 1) != CSRF_OK) {
		csrf_ctx_free(twin);
		return;
	}
	d->n = 0;
	d->s[d->n++] = (tu_secret){d->key, sizeof d->key};
	d->s[d->n++] = (tu_secret){d->hex, 2 * CSRF_KEY_LEN};
#if CSRFI_SHA256_BLOCK
	for (unsigned j = 0; j < 8; j++) {
		d->states[0][j] = csrfi_sha256_word(&twin->ring.keys[0].mac.inner, j);
		d->states[1][j] = csrfi_sha256_word(&twin->ring.keys[0].mac.outer, j);
	}
	d->s[d->n++] = (tu_secret){d->states[0], sizeof d->states[0]};
	d->s[d->n++] = (tu_secret){d->states[1], sizeof d->states[1]};
#endif
	csrf_ctx_free(twin);
	d->ok = 1;
}

static void dead_key_run(void *p)
{
	dead_key *d = p;
	d->r = d->load ? csrf_ctx_load_key_file(d->ctx, d->path) : csrf_ctx_add_key(d->ctx, 7, d->key, 1);
}

static void test_dead_stack(void **state)
{
	(void)state;
	static dead_key d;
	size_t failed = 0;
	for (int load = 0; load < 2; load++) {
		memset(&d, 0, sizeof d);
		d.load = load;
		tu_in_thread(dead_key_prepare, &d);
		assert_true(d.ok);
		failed +=
		    (size_t)tu_dead_stack_found(load ? "load key file" : "add key", dead_key_run, &d, NULL, d.s, d.n);
		assert_int_equal(d.r, CSRF_OK);
		d.free = 1;
		tu_in_thread(dead_key_prepare, &d);
	}
	assert_int_equal(failed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_table),
	    cmocka_unit_test(test_parse_material_and_limits),
	    cmocka_unit_test(test_parse_prefixes),
	    cmocka_unit_test_setup_teardown(test_new_rotate_retire_list, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_concurrent_rotate, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_stage_then_rotate, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_io_errors, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_operator_messages, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_rewrite_keeps_mode, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_rewrite_keeps_owner_and_group, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_rewrite_refuses_to_drop_readers, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_rewrite_follows_symlink, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_rewrite_directory_swap_race, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_root_refuses_unsafe_directory, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_rewrite_keeps_acl, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_rewrite_drops_inherited_acl, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_locked_directory_times_out, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_root_refuses_linked_lock_file, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_rewrite_removes_leftover_tmp, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_rewrite_refuses_hard_link, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_dir_sync_failure_message, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_last_id_message, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_readers_refuse_loose_modes, setup_dir, teardown_dir),
	    cmocka_unit_test_setup_teardown(test_dead_stack, setup_dir, teardown_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
