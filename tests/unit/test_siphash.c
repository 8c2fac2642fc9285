/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_siphash.c - src/siphash.c: SipHash-2-4 against the reference
 * vectors (key 00..0f, messages 00, 00 01, ... of 0 to 63 bytes; the
 * 64-bit outputs of the reference implementation, read little-endian),
 * inputs flush against a guard page, and the key mattering.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"
#include "testutil.h"

static const uint64_t vectors[64] = {
    0x726fdb47dd0e0e31ULL, 0x74f839c593dc67fdULL, 0x0d6c8009d9a94f5aULL, 0x85676696d7fb7e2dULL, 0xcf2794e0277187b7ULL,
    0x18765564cd99a68dULL, 0xcbc9466e58fee3ceULL, 0xab0200f58b01d137ULL, 0x93f5f5799a932462ULL, 0x9e0082df0ba9e4b0ULL,
    0x7a5dbbc594ddb9f3ULL, 0xf4b32f46226bada7ULL, 0x751e8fbc860ee5fbULL, 0x14ea5627c0843d90ULL, 0xf723ca908e7af2eeULL,
    0xa129ca6149be45e5ULL, 0x3f2acc7f57c29bdbULL, 0x699ae9f52cbe4794ULL, 0x4bc1b3f0968dd39cULL, 0xbb6dc91da77961bdULL,
    0xbed65cf21aa2ee98ULL, 0xd0f2cbb02e3b67c7ULL, 0x93536795e3a33e88ULL, 0xa80c038ccd5ccec8ULL, 0xb8ad50c6f649af94ULL,
    0xbce192de8a85b8eaULL, 0x17d835b85bbb15f3ULL, 0x2f2e6163076bcfadULL, 0xde4daaaca71dc9a5ULL, 0xa6a2506687956571ULL,
    0xad87a3535c49ef28ULL, 0x32d892fad841c342ULL, 0x7127512f72f27cceULL, 0xa7f32346f95978e3ULL, 0x12e0b01abb051238ULL,
    0x15e034d40fa197aeULL, 0x314dffbe0815a3b4ULL, 0x027990f029623981ULL, 0xcadcd4e59ef40c4dULL, 0x9abfd8766a33735cULL,
    0x0e3ea96b5304a7d0ULL, 0xad0c42d6fc585992ULL, 0x187306c89bc215a9ULL, 0xd4a60abcf3792b95ULL, 0xf935451de4f21df2ULL,
    0xa9538f0419755787ULL, 0xdb9acddff56ca510ULL, 0xd06c98cd5c0975ebULL, 0xe612a3cb9ecba951ULL, 0xc766e62cfcadaf96ULL,
    0xee64435a9752fe72ULL, 0xa192d576b245165aULL, 0x0a8787bf8ecb74b2ULL, 0x81b3e73d20b49b6fULL, 0x7fa8220ba3b2eceaULL,
    0x245731c13ca42499ULL, 0xb78dbfaf3a8d83bdULL, 0xea1ad565322a1a0bULL, 0x60e61c23a3795013ULL, 0x6606d7e446282b93ULL,
    0x6ca4ecb15c5f91e1ULL, 0x9f626da15c9625f3ULL, 0xe51b38608ef25f57ULL, 0x958a324ceb064572ULL,
};

static void test_reference_vectors(void **state)
{
	uint8_t key[CSRF_SIPHASH_KEY_LEN], msg[64];

	(void)state;
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 64; i++)
		msg[i] = (uint8_t)i;
	for (size_t n = 0; n < 64; n++) {
		/* the message ends where the readable memory ends */
		char *g = n > 0 ? tu_guard_copy(msg, n) : NULL;
		uint64_t h = csrfi_siphash24(key, n > 0 ? g : (const void *)msg, n);
		if (n > 0)
			tu_guard_free(g);
		if (h != vectors[n])
			fail_msg("length %zu: %016llx", n, (unsigned long long)h);
	}
}

static void test_key_matters(void **state)
{
	uint8_t k1[CSRF_SIPHASH_KEY_LEN] = {0}, k2[CSRF_SIPHASH_KEY_LEN] = {0};

	(void)state;
	k2[15] = 1;
	assert_true(csrfi_siphash24(k1, "session", 7) != csrfi_siphash24(k2, "session", 7));
	assert_true(csrfi_siphash24(k1, "session", 7) == csrfi_siphash24(k1, "session", 7));
	assert_true(csrfi_siphash24(k1, "a\0", 2) != csrfi_siphash24(k1, "a", 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reference_vectors),
	    cmocka_unit_test(test_key_matters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
