/* SPDX-License-Identifier: BSD-2-Clause */
/* cavp.c - the built-in SHA-256 (src/sha256.c) against NIST's CAVP
 * vectors as published (SHAVS, byte-oriented), read from the files of
 * Debian's python3-cryptography-vectors:
 *   hashes/SHA2/SHA256ShortMsg.rsp  65 messages of 0 to 64 bytes
 *   hashes/SHA2/SHA256LongMsg.rsp   64 messages of 163 to 6400 bytes
 *   hashes/SHA2/SHA256Monte.rsp     the Monte Carlo test: 100 checkpoints
 * and HMAC-SHA256 through mac.c (the build's backend) against the same
 * package's HMAC/rfc-4231-sha256.txt (RFC 4231's cases with a full-length
 * MAC; the package has no CAVP HMAC file), and against HMAC computed here
 * from the checked SHA-256 for every message length of 0 to 130 bytes
 * (lengths: mac.c's one-block path and its edge at 55 and 56 bytes).
 *
 *   cavp VECTORS_DIR [short|long|monte|hmac|lengths]...
 * VECTORS_DIR is the package's cryptography_vectors folder; with no set
 * named, all five. Every message is hashed in one call and again fed in
 * pieces of changing size (1 to 131 bytes), so the buffering of update is
 * checked as well as the compression and the padding. Each file must hold
 * the number of vectors SHAVS gives it: a missing, truncated or malformed
 * file fails, it is never skipped.
 *
 * Plain C without cmocka, so the router builds run it under qemu-user
 * (tests/router). Exit status 0 only when every vector passed. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int failures;

#define FAIL(...)                                                                                                      \
	do {                                                                                                           \
		failures++;                                                                                            \
		fprintf(stderr, "cavp: ");                                                                             \
		fprintf(stderr, __VA_ARGS__);                                                                          \
		fputc('\n', stderr);                                                                                   \
	} while (0)

/* One "Name = value" line of a .rsp file; value points into line. */
struct field {
	char name[16];
	char *value;
};

/* Reads the next line of f into *line (grown as needed), strips the CR
 * and LF; returns 0 at the end of the file. */
static int read_line(FILE *f, char **line, size_t *cap)
{
	size_t n = 0;
	int ch;

	while ((ch = getc(f)) != EOF && ch != '\n') {
		if (n + 1 >= *cap) {
			size_t ncap = *cap ? *cap * 2 : 256;
			char *p = realloc(*line, ncap);
			if (!p) {
				fprintf(stderr, "cavp: out of memory\n");
				exit(2);
			}
			*line = p;
			*cap = ncap;
		}
		(*line)[n++] = (char)ch;
	}
	if (n == 0 && ch == EOF)
		return 0;
	if (*cap == 0) {
		*line = malloc(1);
		if (!*line)
			exit(2);
		*cap = 1;
	}
	while (n > 0 && ((*line)[n - 1] == '\r' || (*line)[n - 1] == ' '))
		n--;
	(*line)[n] = '\0';
	return 1;
}

/* "Name = value" into *fl; 0 for a blank line, a comment or a [header]. */
static int parse_field(char *line, struct field *fl)
{
	char *eq = strstr(line, " = ");
	if (line[0] == '#' || line[0] == '[' || line[0] == '\0' || !eq)
		return 0;
	size_t n = (size_t)(eq - line);
	if (n == 0 || n >= sizeof fl->name)
		return 0;
	memcpy(fl->name, line, n);
	fl->name[n] = '\0';
	fl->value = eq + 3;
	return 1;
}

static int nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decodes the hex of s into a new buffer; -1 on an odd length or a
 * character that is not hex. */
static long unhex(const char *s, uint8_t **out)
{
	size_t len = strlen(s);
	if (len % 2)
		return -1;
	uint8_t *p = malloc(len / 2 + 1);
	if (!p)
		exit(2);
	for (size_t i = 0; i < len / 2; i++) {
		int hi = nibble(s[2 * i]), lo = nibble(s[2 * i + 1]);
		if (hi < 0 || lo < 0) {
			free(p);
			return -1;
		}
		p[i] = (uint8_t)(hi << 4 | lo);
	}
	*out = p;
	return (long)(len / 2);
}

static FILE *open_vectors(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	if (!f)
		FAIL("%s: %s (the vectors come from Debian's python3-cryptography-vectors, scripts/deps.sh)", path,
		     strerror(errno));
	return f;
}

static void sha256_once(const uint8_t *msg, size_t n, uint8_t out[32])
{
	csrfi_sha256_builtin_ctx c;
	csrfi_sha256_builtin_init(&c);
	csrfi_sha256_builtin_update(&c, msg, n);
	csrfi_sha256_builtin_final(&c, out);
}

/* The same message in pieces of 1 to 131 bytes, the size changing from
 * one piece to the next (every offset in the 64-byte buffer is met). */
static void sha256_pieces(const uint8_t *msg, size_t n, unsigned seed, uint8_t out[32])
{
	csrfi_sha256_builtin_ctx c;
	size_t off = 0, piece = seed % 131 + 1;
	csrfi_sha256_builtin_init(&c);
	while (off < n) {
		size_t take = piece < n - off ? piece : n - off;
		csrfi_sha256_builtin_update(&c, msg + off, take);
		off += take;
		piece = (piece * 37 + 11) % 131 + 1;
	}
	csrfi_sha256_builtin_final(&c, out);
}

/* ShortMsg and LongMsg: records of Len (bits), Msg, MD. */
static void check_msg_file(const char *dir, const char *name, int want_count)
{
	FILE *f = open_vectors(dir, name);
	if (!f)
		return;
	char *line = NULL, *msg_hex = NULL;
	size_t cap = 0;
	long len_bits = -1;
	int count = 0, lineno = 0, before = failures;
	struct field fl;

	while (read_line(f, &line, &cap)) {
		lineno++;
		if (line[0] == '[' && strcmp(line, "[L = 32]") != 0)
			FAIL("%s:%d: a section other than [L = 32]: %s", name, lineno, line);
		if (!parse_field(line, &fl))
			continue;
		if (strcmp(fl.name, "Len") == 0) {
			char *end;
			len_bits = strtol(fl.value, &end, 10);
			if (*end || len_bits < 0 || len_bits % 8) {
				FAIL("%s:%d: Len %s is not a whole number of bytes", name, lineno, fl.value);
				len_bits = -1;
			}
		} else if (strcmp(fl.name, "Msg") == 0) {
			free(msg_hex);
			msg_hex = strdup(fl.value);
			if (!msg_hex)
				exit(2);
		} else if (strcmp(fl.name, "MD") == 0) {
			uint8_t *msg = NULL, *md = NULL, got[32];
			long n = msg_hex ? unhex(msg_hex, &msg) : -1;
			long mdn = unhex(fl.value, &md);
			/* Len = 0 is written with Msg = 00 */
			if (len_bits < 0 || n < 0 || mdn != 32 || (len_bits > 0 && n != len_bits / 8) ||
			    (len_bits == 0 && n != 1)) {
				FAIL("%s:%d: a malformed record (Len, Msg, MD)", name, lineno);
			} else {
				size_t bytes = (size_t)len_bits / 8;
				sha256_once(msg, bytes, got);
				if (memcmp(got, md, 32) != 0)
					FAIL("%s:%d: Len = %ld: the digest differs", name, lineno, len_bits);
				sha256_pieces(msg, bytes, (unsigned)count, got);
				if (memcmp(got, md, 32) != 0)
					FAIL("%s:%d: Len = %ld fed in pieces: the digest differs", name, lineno,
					     len_bits);
				count++;
			}
			free(msg);
			free(md);
			free(msg_hex);
			msg_hex = NULL;
			len_bits = -1;
		}
	}
	fclose(f);
	free(line);
	free(msg_hex);
	if (count != want_count)
		FAIL("%s: %d vectors read, SHAVS gives %d", name, count, want_count);
	printf("%s: %d vectors, %d failed checks\n", name, count, failures - before);
}

/* SHAVS 6.4, the Monte Carlo test: from the seed, 100 times:
 *   MD0 = MD1 = MD2 = Seed;
 *   for i = 3 .. 1002: MDi = SHA256(MDi-3 || MDi-2 || MDi-1);
 *   Seed = MD1002, which is checkpoint COUNT = j. */
static void check_monte(const char *dir)
{
	const char *name = "hashes/SHA2/SHA256Monte.rsp";
	FILE *f = open_vectors(dir, name);
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0;
	uint8_t seed[32], md[3][32], msg[96];
	int have_seed = 0, count = 0, next = 0, lineno = 0, before = failures;
	struct field fl;

	while (read_line(f, &line, &cap)) {
		lineno++;
		if (line[0] == '[' && strcmp(line, "[L = 32]") != 0)
			FAIL("%s:%d: a section other than [L = 32]: %s", name, lineno, line);
		if (!parse_field(line, &fl))
			continue;
		uint8_t *v = NULL;
		if (strcmp(fl.name, "Seed") == 0) {
			if (unhex(fl.value, &v) != 32) {
				FAIL("%s:%d: a malformed Seed", name, lineno);
			} else {
				memcpy(seed, v, 32);
				have_seed = 1;
			}
		} else if (strcmp(fl.name, "COUNT") == 0) {
			char *end;
			long c = strtol(fl.value, &end, 10);
			if (*end || end == fl.value || c != next)
				FAIL("%s:%d: COUNT = %s, expected %d", name, lineno, fl.value, next);
		} else if (strcmp(fl.name, "MD") == 0) {
			if (!have_seed || unhex(fl.value, &v) != 32) {
				FAIL("%s:%d: an MD without a Seed before it, or malformed", name, lineno);
			} else {
				memcpy(md[0], seed, 32);
				memcpy(md[1], seed, 32);
				memcpy(md[2], seed, 32);
				for (int i = 3; i <= 1002; i++) {
					memcpy(msg, md[0], 32);
					memcpy(msg + 32, md[1], 32);
					memcpy(msg + 64, md[2], 32);
					memcpy(md[0], md[1], 32);
					memcpy(md[1], md[2], 32);
					sha256_once(msg, sizeof msg, md[2]);
				}
				memcpy(seed, md[2], 32);
				if (memcmp(seed, v, 32) != 0)
					FAIL("%s:%d: Monte Carlo checkpoint COUNT = %d differs", name, lineno, next);
				count++;
			}
			next++;
		}
		free(v);
	}
	fclose(f);
	free(line);
	if (count != 100)
		FAIL("%s: %d checkpoints read, SHAVS gives 100", name, count);
	printf("%s: %d checkpoints (100,000 hashes), %d failed checks\n", name, count, failures - before);
}

/* HMAC-SHA256 through mac.c: records of Len (message bits), Key, Msg, MD;
 * also with the message split over mac.c's four parts, and the key state
 * used twice. */
static void check_hmac(const char *dir)
{
	const char *name = "HMAC/rfc-4231-sha256.txt";
	FILE *f = open_vectors(dir, name);
	if (!f)
		return;
	char *line = NULL, *key_hex = NULL, *msg_hex = NULL;
	size_t cap = 0;
	int count = 0, lineno = 0, before = failures;
	long len_bits = -1;
	struct field fl;

	while (read_line(f, &line, &cap)) {
		lineno++;
		if (!parse_field(line, &fl))
			continue;
		if (strcmp(fl.name, "Len") == 0) {
			len_bits = strtol(fl.value, NULL, 10);
		} else if (strcmp(fl.name, "Key") == 0) {
			free(key_hex);
			if (!(key_hex = strdup(fl.value)))
				exit(2);
		} else if (strcmp(fl.name, "Msg") == 0) {
			free(msg_hex);
			if (!(msg_hex = strdup(fl.value)))
				exit(2);
		} else if (strcmp(fl.name, "MD") == 0) {
			uint8_t *key = NULL, *msg = NULL, *md = NULL, got[CSRF_MAC_LEN];
			long kn = key_hex ? unhex(key_hex, &key) : -1;
			long mn = msg_hex ? unhex(msg_hex, &msg) : -1;
			long dn = unhex(fl.value, &md);
			if (kn < 0 || mn < 0 || dn != CSRF_MAC_LEN || len_bits != mn * 8) {
				FAIL("%s:%d: a malformed record (Len, Key, Msg, MD)", name, lineno);
			} else {
				csrfi_mac_key k;
				size_t n = (size_t)mn, a = n / 3, b = n / 2 + 1 < n ? n / 2 + 1 : n;
				csrfi_mac_init(&k, key, (size_t)kn);
				csrfi_mac(&k, msg, n, NULL, 0, NULL, 0, NULL, 0, got);
				if (memcmp(got, md, sizeof got) != 0)
					FAIL("%s:%d: key of %ld bytes: the MAC differs", name, lineno, kn);
				csrfi_mac(&k, msg, a, NULL, 0, msg + a, b - a, msg + b, n - b, got);
				if (memcmp(got, md, sizeof got) != 0)
					FAIL("%s:%d: key of %ld bytes, message in parts: the MAC differs", name, lineno,
					     kn);
				csrfi_mac_wipe(&k);
				count++;
			}
			free(key);
			free(msg);
			free(md);
			free(key_hex);
			free(msg_hex);
			key_hex = msg_hex = NULL;
			len_bits = -1;
		}
	}
	fclose(f);
	free(line);
	free(key_hex);
	free(msg_hex);
	/* RFC 4231's cases 1, 2, 3, 4, 6 and 7 (the truncated case 5 is not in the file) */
	if (count != 6)
		FAIL("%s: %d vectors read, the file has 6", name, count);
	printf("%s: %d vectors, %d failed checks\n", name, count, failures - before);
}

/* HMAC-SHA256 (RFC 2104) from the built-in update and final, which the
 * SHAVS files check: the reference for check_lengths. */
static void hmac_ref(const uint8_t *key, size_t kn, const uint8_t *msg, size_t n, uint8_t out[32])
{
	uint8_t k0[64] = {0}, pad[64], inner[32];
	csrfi_sha256_builtin_ctx c;
	if (kn > sizeof k0)
		sha256_once(key, kn, k0);
	else
		memcpy(k0, key, kn);
	for (size_t i = 0; i < sizeof pad; i++)
		pad[i] = k0[i] ^ 0x36;
	csrfi_sha256_builtin_init(&c);
	csrfi_sha256_builtin_update(&c, pad, sizeof pad);
	csrfi_sha256_builtin_update(&c, msg, n);
	csrfi_sha256_builtin_final(&c, inner);
	for (size_t i = 0; i < sizeof pad; i++)
		pad[i] = k0[i] ^ 0x5c;
	csrfi_sha256_builtin_init(&c);
	csrfi_sha256_builtin_update(&c, pad, sizeof pad);
	csrfi_sha256_builtin_update(&c, inner, sizeof inner);
	csrfi_sha256_builtin_final(&c, out);
}

/* mac.c's one-block path: a message of up to 55 bytes (every version 3
 * tag and cookie, the subkeys, short binds) is hashed by one compression
 * from the key's states with the block padded by the library, a longer one
 * by update and final. Every length from 0 to 130 bytes, whole, cut in two
 * at every place and in three at a few, with a key of 32 bytes (a ring's)
 * and one longer than a block; and the padded last block alone
 * (csrfi_sha256_last_block), as the field name's hash uses it, from the
 * initial state and after one block. */
static void check_lengths(void)
{
	enum { MAX = 130 };
	uint8_t key[70], msg[MAX], want[32], got[CSRF_MAC_LEN];
	static const size_t key_lens[] = {CSRF_KEY_LEN, sizeof key};
	int count = 0, before = failures;

	for (size_t i = 0; i < sizeof msg; i++) {
		msg[i] = (uint8_t)(i * 13 + 5);
		if (i < sizeof key)
			key[i] = (uint8_t)(i * 7 + 1);
	}
	for (size_t ki = 0; ki < sizeof key_lens / sizeof key_lens[0]; ki++) {
		csrfi_mac_key k;
		csrfi_mac_init(&k, key, key_lens[ki]);
		for (size_t n = 0; n <= MAX; n++) {
			hmac_ref(key, key_lens[ki], msg, n, want);
			csrfi_mac(&k, msg, n, NULL, 0, NULL, 0, NULL, 0, got);
			if (memcmp(got, want, sizeof got) != 0)
				FAIL("lengths: a message of %zu bytes, key of %zu: the MAC differs", n, key_lens[ki]);
			for (size_t a = 0; a <= n; a++) {
				size_t b = a + (n - a) / 2;
				csrfi_mac(&k, msg, a, msg + a, n - a, NULL, 0, NULL, 0, got);
				if (memcmp(got, want, sizeof got) != 0)
					FAIL("lengths: %zu bytes cut at %zu, key of %zu: the MAC differs", n, a,
					     key_lens[ki]);
				csrfi_mac(&k, NULL, 0, msg, a, msg + a, b - a, msg + b, n - b, got);
				if (memcmp(got, want, sizeof got) != 0)
					FAIL("lengths: %zu bytes cut at %zu and %zu, key of %zu: the MAC differs", n, a,
					     b, key_lens[ki]);
			}
			count++;
		}
		csrfi_mac_wipe(&k);
	}
#if CSRFI_SHA256_BLOCK
	for (size_t n = 0; n <= CSRFI_SHA256_ONE_BLOCK; n++) {
		uint8_t block[64], two[64 + CSRFI_SHA256_ONE_BLOCK];
		csrfi_sha256_ctx h;
		csrfi_sha256_init(&h);
		memcpy(block, msg, n);
		csrfi_sha256_last_block(&h, block, n, n, got);
		sha256_once(msg, n, want);
		if (memcmp(got, want, sizeof got) != 0)
			FAIL("lengths: the last block alone, %zu bytes: the digest differs", n);
		csrfi_sha256_init(&h);
		csrfi_sha256_update(&h, key, 64);
		memcpy(block, msg, n);
		csrfi_sha256_last_block(&h, block, n, 64 + n, block);
		memcpy(two, key, 64);
		memcpy(two + 64, msg, n);
		sha256_once(two, 64 + n, want);
		if (memcmp(block, want, sizeof want) != 0)
			FAIL("lengths: the last block after one, %zu bytes: the digest differs", n);
		count++;
	}
#endif
	printf("lengths: %d messages, %d failed checks\n", count, failures - before);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: cavp VECTORS_DIR [short|long|monte|hmac|lengths]...\n");
		return 2;
	}
	const char *dir = argv[1];
	static const char *const all[] = {"short", "long", "monte", "hmac", "lengths"};
	const char *const *sets = argc > 2 ? (const char *const *)argv + 2 : all;
	int nsets = argc > 2 ? argc - 2 : (int)(sizeof all / sizeof all[0]);
	for (int i = 0; i < nsets; i++) {
		if (strcmp(sets[i], "short") == 0) {
			check_msg_file(dir, "hashes/SHA2/SHA256ShortMsg.rsp", 65);
		} else if (strcmp(sets[i], "long") == 0) {
			check_msg_file(dir, "hashes/SHA2/SHA256LongMsg.rsp", 64);
		} else if (strcmp(sets[i], "monte") == 0) {
			check_monte(dir);
		} else if (strcmp(sets[i], "hmac") == 0) {
			check_hmac(dir);
		} else if (strcmp(sets[i], "lengths") == 0) {
			check_lengths();
		} else {
			fprintf(stderr, "cavp: unknown vector set %s (short, long, monte, hmac, lengths)\n", sets[i]);
			return 2;
		}
	}
#if defined(CSRF_CRYPTO_BUILTIN) && CSRF_CRYPTO_BUILTIN
	const char *backend = "builtin";
#elif defined(CSRF_CRYPTO_MBEDTLS) && CSRF_CRYPTO_MBEDTLS
	const char *backend = "mbedtls";
#else
	const char *backend = "openssl";
#endif
	printf("cavp: SHA-256 is the built-in one; HMAC over the %s backend\n", backend);
	if (failures) {
		printf("cavp: %d failures\n", failures);
		return 1;
	}
	printf("cavp: every vector passes\n");
	return 0;
}
