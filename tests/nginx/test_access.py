# SPDX-License-Identifier: BSD-2-Clause
"""Access phase through the real nginx: the library's decision on unsafe
methods, the token from a header or from an urlencoded or multipart body
(left intact for the upstream), csrf_unsafe_get, csrf_action log,
csrf_mode, csrf_status, csrf_trusted_origin, csrf off, $csrf_result; origins
in the spellings browsers send, with raw Host and Origin headers."""

import hashlib
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ngxtest as T  # noqa: E402

HTTP = """
    server {{
        listen 127.0.0.1:{port};
        listen 127.0.0.1:{port1} http2;
        server_name localhost;
        root {prefix}/www;
        csrf on;
        csrf_mode both;
        location / {{ }}
        location /auto {{ csrf_mode origin_or_token; proxy_pass http://127.0.0.1:{upstream}; }}
        location /echo {{ proxy_pass http://127.0.0.1:{upstream}; }}
        location /vote {{ csrf_unsafe_get on; proxy_pass http://127.0.0.1:{upstream}; }}
        location /off {{ csrf off; proxy_pass http://127.0.0.1:{upstream}; }}
        location /log {{ csrf_action log; proxy_pass http://127.0.0.1:{upstream}; }}
        location /origin-only {{ csrf_mode origin; proxy_pass http://127.0.0.1:{upstream}; }}
        location /token-only {{ csrf_mode token; proxy_pass http://127.0.0.1:{upstream}; }}
        location /small {{ csrf_body_max 64; proxy_pass http://127.0.0.1:{upstream}; }}
        location /status {{ csrf_status 451; proxy_pass http://127.0.0.1:{upstream}; }}
        location /satisfy-any {{
            satisfy any;
            allow 127.0.0.1;
            deny all;
            proxy_pass http://127.0.0.1:{upstream};
        }}
        location /errpage {{ error_page 403 /denied.html; proxy_pass http://127.0.0.1:{upstream}; }}
        location = /denied.html {{ }}
        location /trusted {{
            csrf_trusted_origin http://partner.example:8443;
            proxy_pass http://127.0.0.1:{upstream};
        }}
    }}
"""

PAGE = b"<!DOCTYPE html><html><head><title>t</title></head><body><form method=post action=/echo></form></body></html>"


def echo(c, head, body):
    T.send_whole(c, b"len=%d sha=%s" % (len(body), hashlib.sha256(body).hexdigest().encode()), "text/plain")


class AccessTest(T.SessionCase):
    HTTP = HTTP
    PORTS = 2
    upstream = staticmethod(echo)
    FILES = {"www/index.html": PAGE, "www/denied.html": b"<html><body>denied by policy</body></html>"}

    def test_tokens_were_issued(self):
        self.assertIsNotNone(self.cookie, "no secret cookie set")
        self.assertIsNotNone(self.field, "no csrf-param meta")
        self.assertIsNotNone(self.token, "no csrf-token meta")

    def test_decisions(self):
        so = self.self_origin
        ck = ("Cookie", self.cookie)
        th = ("X-CSRF-Token", self.token)
        bad = ("X-CSRF-Token", self.token[:-4] + ("AAAA" if not self.token.endswith("AAAA") else "BBBB"))
        form = ("Content-Type", "application/x-www-form-urlencoded")
        fb = ("%s=%s" % (self.field, self.token)).encode()
        rows = [
            # (name, method, path, headers, body, status, $csrf_result)
            ("safe get", "GET", "/", [], b"", 200, "safe_method"),
            ("post, nothing", "POST", "/echo", [], b"a=1", 403, "secret_missing"),
            ("post, cross-site", "POST", "/echo", [("Sec-Fetch-Site", "cross-site"), ck, th], b"", 403, "cross_site"),
            ("post, same-site", "POST", "/echo", [("Sec-Fetch-Site", "same-site"), ck, th], b"", 403, "same_site"),
            ("post, foreign origin", "POST", "/echo", [("Origin", "http://evil.example"), ck, th], b"", 403,
             "origin_mismatch"),
            # Origin: null (a no-referrer page) is no evidence, and without a session cookie to bind
            # the token to, the secret cookie and its token could have been planted by a sibling
            # subdomain or another port: refused as null_origin (csrf_session_cookie lets the token
            # decide: nginx.config, nginx.phpmyadmin.named)
            ("post, null origin, token", "POST", "/echo", [("Origin", "null"), ck, th], b"", 403, "null_origin"),
            ("post, null origin, no token", "POST", "/echo", [("Origin", "null"), ck, form], b"a=1", 403,
             "null_origin"),
            ("auto, null origin, body token", "POST", "/auto", [("Origin", "null"), ck, form], fb, 403, "null_origin"),
            ("auto, null origin, no token", "POST", "/auto", [("Origin", "null"), ck, form], b"a=1", 403,
             "null_origin"),
            ("auto, null origin, no cookie", "POST", "/auto", [("Origin", "null"), form], fb, 403, "null_origin"),
            ("auto, null origin, cross-site", "POST", "/auto", [("Origin", "null"), ("Sec-Fetch-Site", "cross-site"),
                                                                ck, form], fb, 403, "cross_site"),
            ("origin mode, null origin", "POST", "/origin-only", [("Origin", "null")], b"", 403, "null_origin"),
            ("unsafe get, null origin", "GET", "/vote?id=3", [("Origin", "null"), ("Referer", so + "/")], b"", 403,
             "null_origin"),
            ("post, header token", "POST", "/echo", [("Origin", so), ck, th], b"x", 200, "ok"),
            ("post, fetch same-origin + token", "POST", "/echo", [("Sec-Fetch-Site", "same-origin"), ck, th], b"", 200,
             "ok"),
            ("post, token without cookie", "POST", "/echo", [("Origin", so), th], b"", 403, "secret_missing"),
            ("post, bad token", "POST", "/echo", [("Origin", so), ck, bad], b"", 403, None),
            ("post, cookie no token", "POST", "/echo", [("Origin", so), ck, form], b"a=1", 403, "token_missing"),
            # token in the body: read only once the stages before the token one have passed
            ("post, body token", "POST", "/echo", [("Origin", so), ck, form], fb, 200, "ok"),
            ("post, body token, cross-site", "POST", "/echo", [("Sec-Fetch-Site", "cross-site"), ck, form], fb, 403,
             "cross_site"),
            ("post, body token, foreign origin", "POST", "/echo", [("Origin", "http://evil.example"), ck, form], fb,
             403, "origin_mismatch"),
            ("post, body token, no cookie", "POST", "/echo", [("Origin", so), form], fb, 403, "secret_missing"),
            ("post, body token of another field", "POST", "/echo", [("Origin", so), ck, form],
             b"x" + fb, 403, "token_missing"),
            ("log only, body token, cross-site", "POST", "/log", [("Sec-Fetch-Site", "cross-site"), ck, form], fb, 200,
             "cross_site"),
            ("log only, body without token", "POST", "/log", [("Origin", so), ck, form], b"a=1", 200, "token_missing"),
            ("token mode, body token, cross origin", "POST", "/token-only", [("Origin", "http://evil.example"), ck,
                                                                             form], fb, 200, "ok"),
            ("origin mode, form body", "POST", "/origin-only", [("Sec-Fetch-Site", "same-origin"), form], b"a=1", 200,
             "origin_verified"),
            ("unsafe get, same-origin, form body", "GET", "/vote?id=2", [("Sec-Fetch-Site", "same-origin"), form],
             b"a=1", 200, "origin_verified"),
            ("get with override", "GET", "/echo", [("X-HTTP-Method-Override", "DELETE")], b"", 403, None),
            ("delete, no token", "DELETE", "/echo", [("Origin", so), ck], b"", 403, "token_missing"),
            ("csrf off", "POST", "/off", [("Sec-Fetch-Site", "cross-site")], b"", 200, None),
            ("log only", "POST", "/log", [("Sec-Fetch-Site", "cross-site")], b"", 200, "cross_site"),
            ("origin mode, same-origin", "POST", "/origin-only", [("Sec-Fetch-Site", "same-origin")], b"", 200,
             "origin_verified"),
            ("origin mode, cross-site", "POST", "/origin-only", [("Sec-Fetch-Site", "cross-site")], b"", 403,
             "cross_site"),
            ("token mode, cross origin with token", "POST", "/token-only", [("Origin", "http://evil.example"), ck, th],
             b"", 200, "ok"),
            ("token mode, no token", "POST", "/token-only", [("Sec-Fetch-Site", "same-origin"), ck], b"", 403,
             "token_missing"),
            ("status", "POST", "/status", [("Sec-Fetch-Site", "cross-site")], b"", 451, "cross_site"),
            ("trusted origin", "POST", "/trusted", [("Origin", "http://partner.example:8443"), ck, th], b"", 200, "ok"),
            ("untrusted origin", "POST", "/trusted", [("Origin", "http://partner.example"), ck, th], b"", 403,
             "origin_mismatch"),
            # an allow rule that passes does not override a CSRF rejection
            ("satisfy any, cross-site", "POST", "/satisfy-any", [("Sec-Fetch-Site", "cross-site")], b"", 403,
             "cross_site"),
            ("satisfy any, good token", "POST", "/satisfy-any", [("Origin", so), ck, th], b"", 200, "ok"),
            ("error_page renders the rejection", "POST", "/errpage", [("Sec-Fetch-Site", "cross-site")], b"", 403,
             None),
            ("cookie split over two headers", "POST", "/echo", [("Origin", so), ("Cookie", "a=1"), ck, th], b"", 200,
             "ok"),
            ("body over cap", "POST", "/small", [("Origin", so), ck, form], b"a=" + b"x" * 100, 413,
             "body_too_large"),
            # csrf_unsafe_get: positive same-origin evidence or nothing
            ("unsafe get, no evidence", "GET", "/vote?id=1", [], b"", 403, "no_evidence"),
            ("unsafe head, no evidence", "HEAD", "/vote?id=1", [], b"", 403, "no_evidence"),
            ("unsafe get, cross-site", "GET", "/vote?id=1", [("Sec-Fetch-Site", "cross-site")], b"", 403, None),
            ("unsafe get, same-site", "GET", "/vote?id=1", [("Sec-Fetch-Site", "same-site")], b"", 403, None),
            ("unsafe get, same-origin", "GET", "/vote?id=1", [("Sec-Fetch-Site", "same-origin")], b"", 200, None),
            ("unsafe get, typed url", "GET", "/vote?id=1", [("Sec-Fetch-Site", "none")], b"", 200, None),
            ("unsafe get, same-origin referer", "GET", "/vote?id=1", [("Referer", so + "/")], b"", 200, None),
            ("unsafe get, foreign referer", "GET", "/vote?id=1", [("Referer", "http://evil.example/")], b"", 403,
             None),
        ]
        for i, (name, method, path, headers, body, status, result) in enumerate(rows):
            path += ("&" if "?" in path else "?") + "row=%d" % i
            with self.subTest(name):
                if method == "HEAD":
                    r = T.raw(self.port, ("HEAD %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n%s\r\n" % (
                        path, self.port, "".join("%s: %s\r\n" % h for h in headers))).encode())
                else:
                    r = T.request(self.port, method, path, headers, body)
                self.assertIsNotNone(r)
                self.assertEqual(r.status, status)
                if status == 200 and path.startswith("/echo") and method == "POST":
                    self.assertTrue(b"len=%d " % len(body) in r.body, "upstream got another body")
                if path.startswith("/errpage"):
                    self.assertTrue(b"denied by policy" in r.body, "not the error_page")
        log = self.ngx.access_log().splitlines()
        for i, (name, method, path, headers, body, status, result) in enumerate(rows):
            path += ("&" if "?" in path else "?") + "row=%d" % i
            if result:
                with self.subTest("log " + name):
                    self.assertIn("%s %s %d %s" % (method, path, status, result), log)
        self.assertIn("would reject", self.ngx.error_log())
        self.assertEqual(self.ngx.crashed(), [])

    def test_body_token_left_intact(self):
        so = self.self_origin
        ck = ("Cookie", self.cookie)
        bnd = "----csrfboundary7"
        multipart = ("--%s\r\nContent-Disposition: form-data; name=\"amount\"\r\n\r\n10\r\n"
                     "--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n"
                     "--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n"
                     "Content-Type: text/plain\r\n\r\n%s\r\n--%s--\r\n") % (bnd, bnd, self.field, self.token, bnd,
                                                                           "z" * 3000, bnd)
        big = "amount=10&" + "pad=" + "p" * 20000 + "&" + self.field + "=" + self.token + "&to=bob"
        rows = [
            ("urlencoded", "application/x-www-form-urlencoded",
             "amount=10&%s=%s&to=bob" % (self.field, self.token), 200),
            ("urlencoded with charset", "application/x-www-form-urlencoded; charset=UTF-8",
             "%s=%s" % (self.field, self.token), 200),
            # over client_body_buffer_size: nginx keeps it in a temporary file
            ("urlencoded in a file", "application/x-www-form-urlencoded", big, 200),
            ("multipart", "multipart/form-data; boundary=" + bnd, multipart, 200),
            ("urlencoded, wrong field", "application/x-www-form-urlencoded", "other=%s" % self.token, 403),
            ("multipart, truncated", "multipart/form-data; boundary=" + bnd, multipart[:200], 403),
            ("multipart, no boundary", "multipart/form-data", multipart, 403),
            ("text/plain body", "text/plain", "%s=%s" % (self.field, self.token), 403),
        ]
        for name, ctype, body, status in rows:
            with self.subTest(name):
                body = body.encode()
                r = T.request(self.port, "POST", "/echo", [("Origin", so), ck, ("Content-Type", ctype)], body)
                self.assertEqual(r.status, status)
                if status == 200:
                    want = b"len=%d sha=%s" % (len(body), hashlib.sha256(body).hexdigest().encode())
                    self.assertEqual(r.body, want, "upstream did not get the body intact")

    def post_in_two(self, body, k, extra_head=b"", tail=b""):
        """A body-token POST sent as the head and the body's first k bytes,
        then (after nginx's "100 Continue": it has read the head and what
        came with it, and asks for the rest) the other bytes and tail, all
        on one connection; (status, body) of the response to it and of the
        one to what tail asks."""
        head = ("POST /echo HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nOrigin: %s\r\nCookie: %s\r\n"
                "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n" % (
                    self.port, self.self_origin, self.cookie, len(body))).encode() + extra_head + b"\r\n"
        with socket.create_connection(("127.0.0.1", self.port), 10) as s, s.makefile("rb") as f:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            s.sendall(head + body[:k] + (tail if k == len(body) else b""))
            if k < len(body):
                self.assertEqual(self.read_response(f, interim=True)[0], 100, "no 100 Continue at %d" % k)
                s.sendall(body[k:] + tail)
            got = [self.read_response(f)]
            if tail:
                got.append(self.read_response(f))
            return got

    @staticmethod
    def read_response(f, interim=False):
        """(status, body) of the next response read from f; past any "100
        Continue" (nginx sends one whenever it reads or discards the body
        of a request that asked) unless interim."""
        while True:
            status = int(f.readline().split()[1])
            headers = {}
            for line in iter(f.readline, b"\r\n"):
                k, _, v = line.decode("latin-1").partition(":")
                headers[k.strip().lower()] = v.strip()
            if status != 100 or interim:
                break
        if status == 100 or status == 304:
            return status, b""
        if "chunked" in headers.get("transfer-encoding", ""):
            body = b""
            while True:
                n = int(f.readline().split(b";")[0], 16)
                body += f.read(n + 2)[:n]
                if n == 0:
                    return status, body
        return status, f.read(int(headers.get("content-length", "0")))

    def test_body_with_the_head_or_after_it(self):
        # A body sent whole with the head is judged where nginx holds it;
        # one that is not all there yet is read first. Either way the
        # token verifies, and the upstream gets the body intact. The
        # token last: a body judged short of its end, or past it (into
        # the request pipelined after it), would not verify.
        fb = ("%s=%s" % (self.field, self.token)).encode()
        expect = b"Expect: 100-continue\r\n"
        nxt = b"GET /echo?next HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        for body in (b"amount=10&to=bob&" + fb, fb, fb + b"&amount=10"):
            want = b"len=%d sha=%s" % (len(body), hashlib.sha256(body).hexdigest().encode())
            for k in range(len(body) + 1):
                with self.subTest(body=body[:6], k=k):
                    self.assertEqual(self.post_in_two(body, k, expect)[0], (200, want))
            with self.subTest("pipelined", body=body[:6]):
                got = self.post_in_two(body, len(body), tail=nxt)
                self.assertEqual(got, [(200, want), (200, b"len=0 sha=" + hashlib.sha256(b"").hexdigest().encode())])
        # the same with a forged token, and with none: refused either way
        bad = ("%s=%s" % (self.field, self.token[:-4] + ("AAAA" if not self.token.endswith("AAAA") else "BBBB")))
        for body in (b"a=1&" + bad.encode(), b"a=1"):
            for k in (0, len(body) // 2, len(body)):
                with self.subTest("refused", body=body[:6], k=k):
                    self.assertEqual(self.post_in_two(body, k, expect)[0][0], 403)
        self.assertEqual(self.ngx.crashed(), [])

    def test_pipelined_verdicts(self):
        # Body-token POSTs pipelined on one connection, each body whole
        # with its head: a refused one is answered without its body being
        # read here (nginx drops it), so the next request's head and body
        # must still be found where they are, and each judged on its own
        # body: sent at once, and in three pieces cut inside heads and
        # bodies. The upstream gets the accepted bodies intact and never a
        # refused one.
        good = ("a=1&%s=%s" % (self.field, self.token)).encode()
        first = ("%s=%s&a=1" % (self.field, self.token)).encode()
        bad = ("a=1&%s=%s" % (self.field, self.token[:-4] + ("AAAA" if not self.token.endswith("AAAA") else "BBBB")))
        chain = [(bad.encode(), 403), (good, 200), (b"a=1&b=2", 403), (first, 200)]
        for cuts in ((), (1, 2)):
            data = b""
            for i, (body, _) in enumerate(chain):
                data += ("POST /echo?chain=%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nOrigin: %s\r\nCookie: %s\r\n"
                         "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n%s\r\n" % (
                             i, self.port, self.self_origin, self.cookie, len(body),
                             "Connection: close\r\n" if i == len(chain) - 1 else "")).encode() + body
            n0 = len(self.up.requests)
            with self.subTest(cuts=cuts), socket.create_connection(("127.0.0.1", self.port), 10) as s, \
                    s.makefile("rb") as f:
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                at = [0] + [len(data) * k // 3 for k in cuts] + [len(data)]
                for a, b in zip(at, at[1:]):
                    s.sendall(data[a:b])
                    time.sleep(0.02)
                got = [self.read_response(f) for _ in chain]
                want = [(st, b"len=%d sha=%s" % (len(body), hashlib.sha256(body).hexdigest().encode()) if st == 200
                         else None) for body, st in chain]
                self.assertEqual([(st, b if st == 200 else None) for st, b in got], want)
                self.ngx.barrier()
                self.assertEqual(sorted(b for _, b in self.up.requests[n0:]), sorted([good, first]),
                                 "the upstream got another set of bodies")
        self.assertEqual(self.ngx.crashed(), [])

    def test_chunked_body(self):
        body = ("%s=%s" % (self.field, self.token)).encode()
        chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
        r = T.request(self.port, "POST", "/echo",
                      [("Origin", self.self_origin), ("Cookie", self.cookie),
                       ("Content-Type", "application/x-www-form-urlencoded"), ("Transfer-Encoding", "chunked")],
                      chunked)
        self.assertEqual(r.status, 200)
        self.assertTrue(b"len=%d " % len(body) in r.body, "upstream got another body")

    @unittest.skipUnless(shutil.which("curl"), "curl not installed")
    def test_http2(self):
        # HTTP/2 (h2c): cookies arrive as several headers, the body in frames
        u = "http://127.0.0.1:%d" % self.ngx.ports[1]
        form = ("%s=%s" % (self.field, self.token)).encode()
        rows = [
            ("token in body, cookie split", ["-H", "Cookie: a=1", "-H", "Cookie: " + self.cookie, "-H", "Origin: " + u,
                                             "-H", "Content-Type: application/x-www-form-urlencoded"], form, "ok"),
            ("no token", ["-H", "Cookie: " + self.cookie, "-H", "Origin: " + u, "-H",
                          "Content-Type: application/x-www-form-urlencoded"], b"x=1", "token_missing"),
            ("cross-site", ["-H", "Cookie: " + self.cookie, "-H", "Sec-Fetch-Site: cross-site"], b"x=1", "cross_site"),
        ]
        for i, (name, args, body, result) in enumerate(rows):
            with self.subTest(name):
                subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-o", "/dev/null"] + args +
                               ["--data-binary", "@-", u + "/echo?h2=%d" % i], input=body, capture_output=True,
                               timeout=10)
        log = self.ngx.access_log().splitlines()
        for i, (name, args, body, result) in enumerate(rows):
            with self.subTest("log " + name):
                self.assertTrue(any(l.startswith("POST /echo?h2=%d " % i) and l.endswith(" " + result) for l in log))
        self.assertEqual(self.ngx.crashed(), [])


class SpellingTest(T.ProxyCase):
    """Origins as browsers spell them (issue 23), Host and Origin sent raw:
    case, default ports, punycode, IPv6 literals and a final dot pass as
    the same origin; look-alikes are refused. /auto derives the site from
    Host, /conf has csrf_origin http://wiki.lan:8080. No token is sent, so
    only the Origin can pass a request (origin_or_token)."""

    HTTP = """
    server {{
        listen 127.0.0.1:{port};
        server_name localhost;
        csrf on;
        location /auto {{ proxy_pass http://127.0.0.1:{upstream}; }}
        location /conf {{ csrf_origin http://wiki.lan:8080; proxy_pass http://127.0.0.1:{upstream}; }}
    }}
"""

    @classmethod
    def upstream(cls, c, head, body):
        T.send_whole(c, b"ok", "text/plain")

    def post(self, path, host, origin):
        r = T.request(self.port, "POST", path, [("Origin", origin)], b"", host=host)
        m = re.search(rb'<code id="reason">([a-z_]+)</code>', r.body)
        return r.status, (m.group(1).decode() if m else None)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.port = cls.ngx.port

    def test_spellings(self):
        p = 8080
        ok, mismatch = (200, None), (403, "origin_mismatch")
        rows = [
            # (name, path, Host, Origin, (status, reason))
            ("as sent", "/auto", "victim.test:%d" % p, "http://victim.test:%d" % p, ok),
            ("Host in capitals", "/auto", "VICTIM.Test:%d" % p, "http://victim.test:%d" % p, ok),
            ("Origin in capitals", "/auto", "victim.test:%d" % p, "HTTP://VICTIM.TEST:%d" % p, ok),
            ("explicit :80 in the Origin", "/auto", "victim.test", "http://victim.test:80", ok),
            ("explicit :80 in the Host", "/auto", "victim.test:80", "http://victim.test", ok),
            ("another port", "/auto", "victim.test:%d" % p, "http://victim.test:%d" % (p + 1), mismatch),
            ("punycode", "/auto", "xn--bcher-kva.test:%d" % p, "http://xn--bcher-kva.test:%d" % p, ok),
            ("homograph", "/auto", "apple.test", "http://xn--pple-43d.test", mismatch),
            ("IPv6 literal", "/auto", "[::1]:%d" % p, "http://[::1]:%d" % p, ok),
            ("IPv6 long form", "/auto", "[0:0:0:0:0:0:0:1]:%d" % p, "http://[::1]:%d" % p, ok),
            ("IPv6 [::1] vs [::2]", "/auto", "[::1]:%d" % p, "http://[::2]:%d" % p, mismatch),
            ("final dot in both", "/auto", "wiki.lan.:%d" % p, "http://wiki.lan.:%d" % p, ok),
            ("final dot in the Origin", "/auto", "wiki.lan:%d" % p, "http://wiki.lan.:%d" % p, ok),
            ("victim as a label", "/auto", "victim.test", "http://victim.test.evil.test", mismatch),
            ("sibling", "/auto", "victim.test", "http://evil.victim.test", mismatch),
            ("configured, as browsers send it", "/conf", "wiki.lan:8080", "http://wiki.lan:8080", ok),
            ("configured, capitals and a final dot", "/conf", "x", "http://WIKI.LAN.:8080", ok),
            ("configured, another port", "/conf", "wiki.lan:8080", "http://wiki.lan:8081", mismatch),
            ("configured, look-alike", "/conf", "wiki.lan:8080", "http://wiki.lan.evil.test:8080", mismatch),
        ]
        for name, path, host, origin, want in rows:
            with self.subTest(name):
                self.assertEqual(self.post(path, host, origin), want)
        self.assertEqual(self.ngx.crashed(), [])


if __name__ == "__main__":
    unittest.main()
