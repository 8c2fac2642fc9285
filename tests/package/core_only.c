/* SPDX-License-Identifier: BSD-2-Clause */
/* core_only.c - a program that uses libcsrf's core only (csrf.h): it
 * issues a token, verifies it, and refuses a changed one. The test
 * package.core_link builds it with nothing but libcsrf and libcrypto. */
#include <csrf.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	csrf_ctx *ctx;
	if (csrf_ctx_new(&ctx, NULL) != CSRF_OK)
		return 1;
	uint8_t secret[CSRF_SECRET_LEN];
	char token[CSRF_TOKEN_LEN + 1];
	int rc = 1;
	if (csrf_ctx_generate_key(ctx) != CSRF_OK || csrf_secret_new(secret) != CSRF_OK ||
	    csrf_token_issue(ctx, secret, "sess", 4, 0, token, sizeof token) != CSRF_OK)
		goto out;
	csrf_reason good = csrf_token_verify(ctx, secret, "sess", 4, token, strlen(token), 0);
	token[10] = token[10] == 'A' ? 'B' : 'A';
	csrf_reason bad = csrf_token_verify(ctx, secret, "sess", 4, token, strlen(token), 0);
	printf("token: %s, changed token: %s\n", csrf_reason_name(good), csrf_reason_name(bad));
	rc = good == CSRF_OK && bad != CSRF_OK ? 0 : 1;
out:
	csrf_ctx_free(ctx);
	return rc;
}
