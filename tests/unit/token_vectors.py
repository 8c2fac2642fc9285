#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The known answers of test_token.c's test_known_answers, computed from
the layouts in docs/architecture.md ("Tokens and cookies") with Python's
hmac and hashlib, apart from the library: raw tokens of versions 2, 3 and
4 and secret cookies of versions 2 and 3, for key1 (id 1), secret_a and
the issue time T0 of test_token.c (version 4 also at a time past 2106's
wrap of its 32-bit field), version 4 with the fixed nonce NONCE (an
issue draws it at random: test_token.c compares an issue's other bytes
and verifies these). Run it and paste its output there when a
layout changes (it never should for a version already issued)."""
import hashlib
import hmac
import struct

KEY = bytes([0x11, 0x22, 0x33, 0x44, 1]) + bytes(27)
SECRET = bytes([0xA1, 0xA2, 0xA3, 0xA4]) + bytes(28)
KEY_ID = 1
T0 = 1700000000
SIDS = [b"", b"session-a", b"s" * 100]  # none, short, longer than one block
NONCE = bytes(range(0xF0, 0xF8))
T_WRAP = 2**32 + 5  # 2106-02-07T06:28:21Z: version 4 carries 5


def mac(k, *parts):
    return hmac.new(k, b"".join(parts), hashlib.sha256).digest()


def len4(b):
    return struct.pack(">I", len(b))


def header(version, sid):
    bind = mac(KEY, b"libcsrf bind v1", len4(sid), sid)[:8]
    return struct.pack(">BBIQ", version, 0, KEY_ID, T0) + bind


def token_v3(sid):
    tk = mac(KEY, b"libcsrf token v3")
    hdr = header(3, sid)
    msg = hdr + SECRET + (len4(sid) + sid if sid else b"")
    assert len(msg) == 54 if not sid else len(msg) >= 59
    return hdr + mac(tk, msg)[:16]


def token_v4(sid, t=T0):
    tk = mac(KEY, b"libcsrf token v3")  # the same tag subkey as version 3
    bind = mac(KEY, b"libcsrf bind v1", len4(sid), sid)[:4]
    hdr = struct.pack(">BBII", 4, 0, KEY_ID, t % 2**32) + bind + NONCE
    assert len(hdr) == 22
    msg = hdr + SECRET + (len4(sid) + sid if sid else b"")
    assert len(msg) == 54 if not sid else len(msg) >= 59
    # under the tag subkey, a version 3 message and a version 4 one of
    # any session differ in their first byte, the version
    assert msg[0] == 4 and all(token_v3(s)[0] == 3 for s in SIDS)
    return hdr + mac(tk, msg)[:16]


def token_v2(sid):
    hdr = header(2, sid)
    return hdr + mac(KEY, b"libcsrf token v2", SECRET, hdr, len4(sid), sid)[:16]


def cookie(version):
    signed = struct.pack(">BIQ", version, KEY_ID, T0) + SECRET
    if version == 3:
        return signed + mac(mac(KEY, b"libcsrf cookie v3"), signed)
    return signed + mac(KEY, b"libcsrf cookie v2", signed)


def c_hex(b):
    return '"' + b.hex() + '"'


for name, f in (("v4", token_v4), ("v3", token_v3), ("v2", token_v2)):
    print("static const char *const kat_token_%s[] = {" % name)
    for sid in SIDS:
        print("    %s, /* sid of %d bytes */" % (c_hex(f(sid)), len(sid)))
    print("};")
for v in (3, 2):
    print("static const char kat_cookie_v%d[] = %s;" % (v, c_hex(cookie(v))))
print("static const char kat_token_v4_wrap[] = %s; /* sid of 0 bytes, issued at T_WRAP */" % c_hex(token_v4(b"", T_WRAP)))
