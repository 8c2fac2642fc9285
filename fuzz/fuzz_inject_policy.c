/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_inject_policy.c - the injector's form policy (src/inject_policy.c)
 * on random attribute values. Input: VALUE |#| METHOD.
 * Invariants: decoding never grows a value, reads only its bytes, and
 * leaves a value without '&' or NUL as it is; an action that starts with
 * another authority is never ours, one that starts with our origin and a
 * '/' always is (the rest is path), whatever follows, and so is one that
 * starts with "//", our host and a '/' unless <base> points elsewhere (the
 * base's scheme would apply); a form judged ours
 * only through its relative action is never ours once <base> points
 * elsewhere; a tag id other than "unknown" comes only from a short
 * lower-case name. The same pieces as a body and a Content-Type for
 * csrf_charset_sniff: a complete body never asks for more, nor do 1024
 * bytes; a UTF-8 byte order mark always injects, a UTF-16 one never.
 */
#include "fuzz_util.h"

#include "inject_shared.h"

#define SELF "https://self.example"

static void make_form(struct inj_tag *t, const char *pre, const char *v, size_t n, const char *method, size_t mlen)
{
	memset(t, 0, sizeof *t);
	t->id = T_FORM;
	size_t pl = strlen(pre);
	memcpy(t->url, pre, pl);
	size_t room = INJ_URL_MAX - pl;
	if (n > room) {
		n = room;
		t->url_trunc = 1;
	}
	memcpy(t->url + pl, v, n);
	t->url_len = (uint16_t)(pl + n);
	t->seen = A_URL;
	if (method) {
		if (mlen > INJ_SHORT_MAX) {
			mlen = INJ_SHORT_MAX;
			t->short_over = 1;
		}
		memcpy(t->short_val, method, mlen);
		t->short_len = (uint8_t)mlen;
		t->seen |= A_SHORT;
	}
}

static int verdict(const char *pre, const char *v, size_t n, const csrf_origin *self, int base, int *rel)
{
	struct inj_tag t;
	make_form(&t, pre, v, n, "post", 4);
	return inj_policy_form(&t, base, self, rel);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_pieces ps;
	fz_split(data, size, 2, &ps);
	const char *v = ps.p[0].ptr;
	size_t n = ps.p[0].len;
	csrf_origin self;
	FZ_ASSERT(csrf_origin_parse(SELF, sizeof SELF - 1, &self) == CSRF_OK);

	/* decoding, in an exactly-sized copy */
	char *d = fz_dup(v, n);
	size_t dn = inj_decode_attr(d, n);
	FZ_ASSERT(dn <= n);
	if (!memchr(v, '&', n) && !memchr(v, '\0', n))
		FZ_ASSERT(dn == n && memcmp(d, v, n) == 0);
	free(d);

	int rel;
	FZ_ASSERT(verdict("//evil.example", v, n, &self, B_NONE, &rel) != FP_POST_SELF);
	FZ_ASSERT(verdict("https://evil.example", v, n, &self, B_NONE, &rel) != FP_POST_SELF);
	FZ_ASSERT(verdict("https://self.example.evil", v, n, &self, B_NONE, &rel) != FP_POST_SELF);
	FZ_ASSERT(verdict("https://self.example/", v, n, &self, B_OTHER, &rel) == FP_POST_SELF);
	FZ_ASSERT(verdict("https://self.example?", v, n, &self, B_OTHER, &rel) == FP_POST_SELF);
	FZ_ASSERT(verdict("//self.example/", v, n, &self, B_NONE, &rel) == FP_POST_SELF && rel);
	FZ_ASSERT(verdict("//self.example/", v, n, &self, B_OTHER, &rel) != FP_POST_SELF);

	int plain = verdict("", v, n, &self, B_NONE, &rel);
	int other = verdict("", v, n, &self, B_OTHER, &rel);
	if (other == FP_POST_SELF)
		FZ_ASSERT(plain == FP_POST_SELF && !rel);
	if (plain == FP_POST_SELF && !rel)
		FZ_ASSERT(other == FP_POST_SELF);

	/* the method: only "post" after decoding, exactly */
	struct inj_tag t;
	make_form(&t, "/", "", 0, ps.p[1].ptr, ps.p[1].len);
	int m = inj_policy_form(&t, B_NONE, &self, &rel);
	if (m == FP_POST_SELF)
		FZ_ASSERT(t.short_len == 4 && !t.short_over);

	uint8_t id = inj_tag_id(v, n <= INJ_NAME_MAX ? n : INJ_NAME_MAX + 1);
	if (id != T_OTHER) {
		FZ_ASSERT(n >= 1 && n <= 14);
		for (size_t i = 0; i < n; i++)
			FZ_ASSERT((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= '0' && v[i] <= '9') || v[i] == '-');
	}
	csrf_charset cs;
	const char *ct = ps.p[1].ptr;
	size_t ctl = ps.p[1].len;
	FZ_ASSERT(csrf_charset_sniff(ct, ctl, v, n, 1, &cs) == CSRF_OK);
	FZ_ASSERT(cs.verdict == CSRF_CHARSET_INJECT || cs.verdict == CSRF_CHARSET_PASS);
	FZ_ASSERT(csrf_charset_sniff(ct, ctl, v, n, 0, &cs) == CSRF_OK);
	FZ_ASSERT(cs.verdict != CSRF_CHARSET_MORE || n < CSRF_CHARSET_PRESCAN_MAX);
	if (n >= 3 && (unsigned char)v[0] == 0xEF && (unsigned char)v[1] == 0xBB && (unsigned char)v[2] == 0xBF)
		FZ_ASSERT(cs.verdict == CSRF_CHARSET_INJECT);
	if (n >= 2 && (((unsigned char)v[0] == 0xFE && (unsigned char)v[1] == 0xFF) ||
	               ((unsigned char)v[0] == 0xFF && (unsigned char)v[1] == 0xFE)))
		FZ_ASSERT(cs.verdict == CSRF_CHARSET_PASS);
	fz_free(&ps);
	return 0;
}
