/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_crypto.c - the built-in SHA-256 and HMAC-SHA256 (src/sha256.c and
 * src/mac.c compiled with CSRF_CRYPTO_BUILTIN, the router build's backend)
 * against OpenSSL's on the same keys and messages. The input's first byte
 * picks the key's length (0 to 255, so keys longer than the 64-byte block
 * are hashed first), the second how the message is fed in pieces; the rest
 * is the key then the message. Any difference aborts.
 */
#include <stdint.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "fuzz_util.h"
#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t key_len = data[0], piece = (size_t)data[1] + 1;
	data += 2;
	size -= 2;
	if (key_len > size)
		key_len = size;
	const uint8_t *key = data, *msg = data + key_len;
	size_t msg_len = size - key_len;

	/* SHA-256 of the whole input, fed in pieces */
	uint8_t want[32], got[32];
	SHA256(data, size, want);
	csrfi_sha256_builtin_ctx c;
	csrfi_sha256_builtin_init(&c);
	for (size_t off = 0; off < size; off += piece)
		csrfi_sha256_builtin_update(&c, data + off, piece < size - off ? piece : size - off);
	csrfi_sha256_builtin_final(&c, got);
	FZ_ASSERT(memcmp(want, got, sizeof want) == 0);

	/* HMAC-SHA256 through mac.c, the message split in up to four parts */
	unsigned int want_len = 0;
	FZ_ASSERT(HMAC(EVP_sha256(), key, (int)key_len, msg, msg_len, want, &want_len) != NULL);
	FZ_ASSERT(want_len == CSRF_MAC_LEN);
	csrfi_mac_key k;
	csrfi_mac_init(&k, key, key_len);
	size_t a = piece < msg_len ? piece : msg_len, b = a + (msg_len - a) / 2;
	csrfi_mac(&k, msg, a, msg + a, b - a, NULL, 0, msg + b, msg_len - b, got);
	FZ_ASSERT(memcmp(want, got, sizeof want) == 0);
	/* again with the same key state: precomputed pads are not consumed */
	csrfi_mac(&k, msg, msg_len, NULL, 0, NULL, 0, NULL, 0, got);
	FZ_ASSERT(memcmp(want, got, sizeof want) == 0);
	csrfi_mac_wipe(&k);

	/* the constant-time comparison says what memcmp says */
	size_t half = size / 2;
	FZ_ASSERT(csrfi_ct_eq(data, data + half, half) == (memcmp(data, data + half, half) == 0));
	return 0;
}
