# SPDX-License-Identifier: BSD-2-Clause
"""Hostile traffic through the module built with ASan and UBSan in the
stock nginx (nginx.asan; tests/nginx/CMakeLists.txt builds the module,
ngxtest/servertest start nginx with libasan preloaded when
CSRF_ASAN_PRELOAD is set). Pages of the fuzz corpora and of the attack
pages served by the upstream cut into many small bufs (proxy_buffering
off, a 256-byte proxy_buffer_size, chunks of 1 to 64 bytes), gzip'd with
gunzip on, truncated, with odd and repeated response headers; requests
with oversized, repeated and odd headers, truncated and malformed
urlencoded, multipart and chunked bodies, bodies spooled to a file. What
each request gets is checked loosely (an answer, no 5xx where none is
due); the point is the sanitizers: any report in any nginx process, or a
worker that died (killed by a signal, exited non-zero), fails the class
when nginx stops (servertest.Daemon.cleanup). Without
CSRF_ASAN_PRELOAD the same runs against the plain module."""

import gzip
import json
import os
import random
import socket
import subprocess
import sys
import unittest
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ngxtest as T  # noqa: E402

ROOT = os.path.join(HERE, "..", "..")
SEP = b"|#|"

HTTP = """
    client_max_body_size 4m;
    large_client_header_buffers 4 64k;
    server {{
        listen 127.0.0.1:{port};
        server_name localhost;
        csrf on;
        csrf_body_max 16k;
        proxy_http_version 1.1;
        proxy_buffering off;
        proxy_buffer_size 256;
        postpone_output 0;
        location / {{ proxy_pass http://127.0.0.1:{upstream}; }}
        location /gz/ {{ gunzip on; proxy_pass http://127.0.0.1:{upstream}; }}
        location /buffered/ {{
            proxy_buffering on;
            proxy_buffers 4 512;
            proxy_busy_buffers_size 512;
            proxy_max_temp_file_size 1m;
            proxy_temp_file_write_size 512;
            proxy_pass http://127.0.0.1:{upstream};
        }}
        location /hdr/ {{
            proxy_buffer_size 16k;
            proxy_buffers 4 16k;
            proxy_busy_buffers_size 16k;
            proxy_pass http://127.0.0.1:{upstream};
        }}
        location /large/ {{ proxy_buffer_size 8k; proxy_pass http://127.0.0.1:{upstream}; }}
        location /spool/ {{ client_body_buffer_size 1k; proxy_pass http://127.0.0.1:{upstream}; }}
        location /both/ {{ csrf_mode both; proxy_pass http://127.0.0.1:{upstream}; }}
    }}
"""


def corpus_pages():
    """The HTML of the injector's and the HTML escaper's fuzz corpora (the
    longest piece of each input cut at the separator) and the attack
    pages, sorted by name so a run is reproducible."""
    pages = []
    for d in ("inject", "inject_policy", "html"):
        path = os.path.join(ROOT, "fuzz", "corpus", d)
        for name in sorted(os.listdir(path)):
            with open(os.path.join(path, name), "rb") as f:
                data = f.read()
            pages.append(max(data.split(SEP), key=len))
    with open(os.path.join(HERE, "attack_pages.json")) as f:
        pages += [p["body"].encode() for p in json.load(f)["pages"]]
    return pages


def corpus_bodies():
    """The multipart and form fuzz corpora's inputs, as request bodies."""
    bodies = []
    for d in ("multipart", "form"):
        path = os.path.join(ROOT, "fuzz", "corpus", d)
        for name in sorted(os.listdir(path)):
            with open(os.path.join(path, name), "rb") as f:
                bodies.append(f.read())
    return bodies


PAGES = corpus_pages()
# CSRF_ASAN_ROUNDS=N sends every page in N more random cuttings (a longer
# hunt than make check's; each round's cut is seeded by its path)
ROUNDS = int(os.environ.get("CSRF_ASAN_ROUNDS", "0"))
# a page long enough to span many reads, with forms in it
BIG = b"<!doctype html><html><head><title>t</title></head><body>" + b"".join(
    b"<p>%d</p><form method=post action=/f%d><input name=a value='%s'></form>" % (i, i, b"x" * (i % 97))
    for i in range(400)) + b"</body></html>"


def pieces(data, seed, most=64):
    rnd = random.Random(seed)
    out, i = [], 0
    while i < len(data):
        n = rnd.randint(1, most)
        out.append(data[i:i + n])
        i += n
    return out


def page_for(path):
    """The page a path names: /.../N/... is PAGES[N], BIG otherwise."""
    for part in path.split(b"/"):
        if part.isdigit():
            return PAGES[int(part) % len(PAGES)]
    return BIG


def upstream(c, head, body):
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    path = head.split(b" ", 2)[1]
    page = page_for(path)
    if path.startswith(b"/gz/bad"):
        # a gzip stream cut short and one with garbage after a few bytes
        z = gzip.compress(page)
        z = z[:len(z) // 2] if b"cut" in path else z[:12] + b"\xff" * 64
        T.send_chunked(c, pieces(z, 3), extra=b"Content-Encoding: gzip\r\n")
    elif path.startswith(b"/gz/"):
        T.send_chunked(c, pieces(gzip.compress(page), len(page)), extra=b"Content-Encoding: gzip\r\n")
    elif path.startswith(b"/deflate/"):
        T.send_chunked(c, pieces(zlib.compress(page), 5), extra=b"Content-Encoding: deflate\r\n")
    elif path.startswith(b"/trunc/"):
        # a Content-Length the upstream never reaches
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n" % (len(page) * 2))
        for p in pieces(page, 7):
            c.sendall(p)
    elif path.startswith(b"/badchunk/"):
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n")
        for p in pieces(page[:300], 9):
            c.sendall(b"%x\r\n" % len(p) + p + b"\r\n")
        c.sendall(b"zz\r\n<form method=post>\r\n")
    elif path.startswith(b"/hdr/"):
        extra = b"".join(b"Set-Cookie: s%d=v; Path=/\r\n" % i for i in range(60))
        extra += b"Cache-Control: public, max-age=60\r\n" * 40 + b"Expires: Thu, 01 Jan 2099 00:00:00 GMT\r\n"
        extra += b"Surrogate-Control: max-age=9\r\nCDN-Cache-Control: x\r\nX-Odd: \x80\xff\r\n"
        extra += b"Content-Security-Policy: default-src 'self'; " + b"x" * 8000 + b"\r\n"
        extra += b"Content-Type: text/plain\r\n" if b"twotypes" in path else b""
        extra += b"Set-Cookie: csrf_secret=forged; Path=/\r\n"
        # a control byte (Apache answers 500 for it itself)
        extra += b"X-Ctl: a\x01b\r\n" if b"ctl" in path else b""
        T.send_chunked(c, pieces(page, 11), "text/html; charset=" + ("x" * 300 if b"longcs" in path else "utf-8"),
                       extra=extra)
    elif path.startswith(b"/plain/"):
        T.send_chunked(c, pieces(page, 13), "text/plain")
    elif head.startswith(b"GET") or head.startswith(b"HEAD"):
        # /.../mN: chunks of 1 to N bytes (64 by default)
        most = [int(p[1:]) for p in path.split(b"/") if p[:1] == b"m" and p[1:].isdigit()]
        ct = "text/html; charset=iso-8859-1" if b"latin" in path else "text/html; charset=utf-8"
        T.send_chunked(c, pieces(page, path, most[0] if most else 64), ct)
    else:
        T.send_whole(c, b"len=%d" % len(body), "text/plain")


def req(method, path, headers, body=b""):
    head = "%s %s HTTP/1.1\r\n" % (method, path) + "".join("%s: %s\r\n" % h for h in headers) + "\r\n"
    return head.encode("latin-1") + body


def chunked(body, seed):
    return b"".join(b"%x\r\n" % len(p) + p + b"\r\n" for p in pieces(body, seed, 7)) + b"0\r\n\r\n"


class AsanTest(T.SessionCase):
    """The traffic, against nginx; tests/apache/test_asan.py runs the same
    against Apache (GUNZIP: whether /gz/ answers reach the module
    decompressed)."""

    HTTP = HTTP
    GUNZIP = True
    MODULE = T.MODULE
    upstream = staticmethod(upstream)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.host = ("Host", "127.0.0.1:%d" % cls.port)

    def test_instrumented(self):
        """The worker runs with libasan and this module mapped (a run
        that lost the preload or loaded another module would prove
        nothing), and the module issued a session."""
        self.assertIsNotNone(self.token)
        out = subprocess.run(["pgrep", "-P", str(self.server.proc.pid)], capture_output=True, text=True).stdout
        maps = "".join(T.read_text("/proc/%s/maps" % pid) for pid in out.split())
        self.assertIn(os.path.realpath(self.MODULE), maps)
        if T.ASAN_PRELOAD:
            self.assertIn("libasan", maps)

    def test_pool_wrapped(self):
        """The sanitized nginx module takes its pool memory from
        tests/nginx/asan_pool.c (-Wl,--wrap), a malloc block a piece: a
        module linked without it would let reads past its pool pieces go
        unseen (docs/hardening.md)."""
        if not T.ASAN_PRELOAD or not os.path.basename(self.MODULE).startswith("ngx_"):
            self.skipTest("the nginx module under ASan only")
        out = subprocess.run(["nm", "-D", "--defined-only", self.MODULE], capture_output=True, text=True,
                             check=True).stdout
        defined = {line.split()[-1] for line in out.splitlines() if line.strip()}
        for name in ("ngx_palloc", "ngx_pnalloc", "ngx_pcalloc", "ngx_pmemalign", "ngx_pfree", "ngx_create_temp_buf",
                     "ngx_alloc_chain_link", "ngx_array_create", "ngx_array_push", "ngx_pool_cleanup_add"):
            self.assertIn("__wrap_" + name, defined)

    def get(self, path, headers=()):
        return T.request(self.port, "GET", path, list(headers))

    def test_pages_in_small_bufs(self):
        """Every corpus page, cut into chunks of 1 byte, 1..3 and 1..64
        bytes and 256-byte reads, as it is and as Latin-1, and whole
        through 8 KiB reads; the plain text twin passes as is."""
        ck = [("Cookie", self.cookie)]
        injected = 0
        for i, page in enumerate(PAGES):
            for most in (1, 3, 64):
                with self.subTest(page=i, most=most):
                    r = self.get("/p/%d/m%d" % (i, most), ck)
                    self.assertEqual(r.status, 200)
                    self.assertEqual(T.strip_injected(r.body), page)
                    injected += sum(T.count_injected(r.body))
            with self.subTest(page=i):
                self.assertEqual(self.get("/latin/%d" % i).status, 200)
                # an 8 KiB buffer is a malloc block of its own (a 256-byte
                # one is a piece of the request pool's block, where ASan
                # sees no end): a read past it is a report
                r = self.get("/large/%d/m9000" % i, ck)
                self.assertEqual(T.strip_injected(r.body), page)
        self.assertGreater(injected, 3 * len(PAGES), "the pages went through the injector")
        for n in range(ROUNDS):
            for i, page in enumerate(PAGES):
                with self.subTest(page=i, round=n):
                    r = self.get("/p/%d/m%d/r%d" % (i, 1 + n % 97, n), ck)
                    self.assertEqual(T.strip_injected(r.body), page)
        for most in (1, 64, 9000):
            r = self.get(("/large/big/m%d" if most > 64 else "/big/m%d") % most)
            self.assertEqual(T.strip_injected(r.body), BIG)
            self.assertEqual(T.count_injected(r.body), (400, 1))
        self.assertEqual(self.get("/plain/big").body, BIG)
        r = T.request(self.port, "HEAD", "/big", [])
        self.assertEqual(r.status, 200)

    def test_buffered_to_file(self):
        """proxy_buffering on with 512-byte buffers: the page goes through
        the proxy's temporary file, and reaches the filter in bufs of it."""
        for i in (0, 5, len(PAGES) - 1):
            r = self.get("/buffered/%d" % i)
            self.assertEqual(T.strip_injected(r.body), PAGES[i])
        self.assertEqual(T.strip_injected(self.get("/buffered/big").body), BIG)

    def test_gzip(self):
        """gzip'd upstream answers: gunzip on hands the module the page
        (without it, as in Apache, the page passes compressed and
        untouched, as does a deflate'd one);
        a cut or corrupt stream ends the answer, never a crash."""
        for p, page in [("/gz/%d" % i, PAGES[i]) for i in (1, 2, len(PAGES) - 2)] + [("/gz/big", BIG)]:
            r = self.get(p)
            if self.GUNZIP:
                self.assertEqual(T.strip_injected(r.body), page)
            else:
                self.assertEqual(gzip.decompress(r.body), page)
        r = self.get("/deflate/big")
        self.assertEqual(zlib.decompress(r.body), BIG)
        for p in ("/gz/bad/cut/3", "/gz/bad/junk/4"):
            T.exchange(self.port, req("GET", p, [self.host, ("Connection", "close")]))

    def test_broken_upstream(self):
        """An upstream that stops short of its Content-Length, or breaks
        its chunked encoding, mid-form."""
        for p in ("/trunc/big", "/trunc/6", "/badchunk/big", "/badchunk/8"):
            T.exchange(self.port, req("GET", p, [self.host, ("Connection", "close")]))

    def test_odd_response_headers(self):
        for p in ("/hdr/big", "/hdr/twotypes/2", "/hdr/longcs/3"):
            r = self.get(p)
            self.assertEqual(r.status, 200, p)
        T.exchange(self.port, req("GET", "/hdr/ctl/4", [self.host, ("Connection", "close")]))

    def test_odd_request_headers(self):
        so, h, close = self.self_origin, self.host, ("Connection", "close")
        form = ("Content-Type", "application/x-www-form-urlencoded")
        rows = [
            [("Cookie", "csrf_secret=%s" % ("A" * 30000))],
            [("Cookie", "a=b")] * 40 + [("Cookie", self.cookie)] * 3,
            [("Cookie", ";;;=;=%s;" % ("=" * 5000))],
            [("Cookie", self.cookie + "; csrf_secret=; csrf_secret=\"x")],
            [("Cookie", "\x80\xff\x01 csrf_secret=\x7f")],
            [("Origin", so), ("Origin", "http://evil.example")],
            [("Origin", "http://" + "a." * 20000 + "example")],
            [("Origin", "http://[::1]:99999999999999999999")],
            [("Origin", "HTTP://127.0.0.1:%d" % self.port), ("Sec-Fetch-Site", "same-origin")],
            [("Sec-Fetch-Site", "same-origin")] * 20,
            [("Sec-Fetch-Site", "x" * 40000)],
            [("Referer", so + "/" + "r" * 50000)],
            [("X-CSRF-Token", "t" * 60000)],
            [("X-CSRF-Token", self.token[:-1]), ("X-CSRF-Token", self.token + "A")],
            [("Content-Type", "multipart/form-data; boundary=" + "b" * 5000)],
            [("Content-Type", "multipart/form-data; boundary=\"\"")],
            [("Content-Type", "multipart/form-data; boundary")],
            [("Content-Type", "application/x-www-form-urlencoded; charset=" + "c" * 9000)],
            [form, form, ("Content-Type", "text/plain")],
            [("X-HTTP-Method-Override", "GET"), ("X-Method-Override", "PUT" * 3000)],
            [("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Origin", "null")],
            [("Header-" + str(i), "v" * i) for i in range(90)],
        ]
        for i, hs in enumerate(rows):
            for method in ("POST", "GET", "DELETE"):
                with self.subTest(row=i, method=method):
                    if method == "GET" and hs and hs[0][0] == "Upgrade":
                        hs = hs + [("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13")]
                    r = T.raw(self.port, req(method, "/both/%d" % i, [h, close, ("Content-Length", "0")] + hs))
                    self.assertIsNotNone(r)
                    self.assertLess(r.status, 500)

    def test_bodies(self):
        """Urlencoded, multipart and corpus bodies with the session: whole,
        truncated (the client leaves), chunked in 1..7-byte chunks,
        spooled to a file; a valid token at the end of a long body."""
        h, ck, close = self.host, ("Cookie", self.cookie), ("Connection", "close")
        form = ("Content-Type", "application/x-www-form-urlencoded")
        good = ("a=%s&" % ("x" * 3000) + "%s=%s" % (self.field, self.token)).encode()
        bnd = "XyZ"
        mp = ("Content-Type", "multipart/form-data; boundary=" + bnd)
        part = ("--%s\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a\"\r\n\r\n%s\r\n"
                "--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n--%s--\r\n" %
                (bnd, "y" * 2000, bnd, self.field, self.token, bnd)).encode()
        cases = [(form, good), (mp, part), (form, b"%%%=&&=%zz%" * 50), (mp, part.replace(b"\r\n", b"\n"))]
        cases += [(mp, b) for b in corpus_bodies()] + [(form, b) for b in corpus_bodies()]
        for i, (ct, body) in enumerate(cases):
            for loc in ("/both/", "/spool/"):
                with self.subTest(case=i, loc=loc):
                    r = T.raw(self.port, req("POST", loc + "w", [h, ck, ct, close, ("Content-Length", str(len(body)))],
                                             body))
                    self.assertIsNotNone(r)
                    self.assertLess(r.status, 500)
                    r = T.raw(self.port, req("POST", loc + "c", [h, ck, ct, close, ("Transfer-Encoding", "chunked")],
                                             chunked(body, i)))
                    self.assertIsNotNone(r)
                    self.assertLess(r.status, 500)
        for loc in ("/both/", "/spool/"):
            for ct, body in cases[:2]:
                r = T.raw(self.port, req("POST", loc + "ok", [h, ck, ct, close, ("Content-Length", str(len(body)))],
                                         body))
                self.assertEqual(r.status, 200, loc)
                for cut in (1, len(body) // 3, len(body) - 1):
                    # the client goes away mid-body
                    with socket.create_connection(("127.0.0.1", self.port), 5) as s:
                        s.sendall(req("POST", loc + "cut", [h, ck, ct, ("Content-Length", str(len(body)))],
                                      body[:cut]))
                # a body larger than csrf_body_max, and a broken chunked one
                big = body + b"&z=" + b"z" * 20000
                r = T.raw(self.port, req("POST", loc + "big", [h, ck, ct, close, ("Content-Length", str(len(big)))],
                                         big))
                self.assertLess(r.status, 500)
                T.exchange(self.port, req("POST", loc + "bc", [h, ck, ct, close, ("Transfer-Encoding", "chunked")],
                                          b"5\r\nab\r\nzz\r\n"))


    def test_mutated_requests(self):
        """Requests built from the session's own pieces (cookie, field,
        token, origin) and the body corpora, mutated by a seeded random
        walk: bytes flipped, cut, repeated, spliced; 40 in make check,
        40 more for each of CSRF_ASAN_ROUNDS."""
        rnd = random.Random(29)
        bodies = corpus_bodies() + [("%s=%s" % (self.field, self.token)).encode()]
        names = ["Cookie", "Origin", "Referer", "Sec-Fetch-Site", "Content-Type", "X-CSRF-Token", "Upgrade",
                 "Connection", "X-HTTP-Method-Override"]
        values = [self.cookie, self.self_origin, self.self_origin + "/x?y", "same-origin", "cross-site",
                  "multipart/form-data; boundary=XyZ", "application/x-www-form-urlencoded", self.token,
                  "websocket", "Upgrade", "DELETE", "null"]

        def mutate(b):
            b = bytearray(b)
            for _ in range(rnd.randint(0, 4)):
                op = rnd.randrange(4)
                if not b:
                    break
                i = rnd.randrange(len(b))
                if op == 0:
                    b[i] = rnd.randrange(256)
                elif op == 1:
                    del b[i:i + rnd.randint(1, 16)]
                elif op == 2:
                    b[i:i] = b[i:i + rnd.randint(1, 64)] * rnd.randint(1, 8)
                else:
                    b[i:i] = rnd.choice([b"&", b"=", b"%", b"--XyZ", b"\r\n", b";", b"\"", b"\x00", b"\xff"])
            return bytes(b)

        for _ in range(40 * (1 + ROUNDS)):
            # mostly the session's cookie and a body type that fits, so
            # that many requests get as far as the body and the token
            hs = [self.host, ("Connection", "close"), ("Cookie", self.cookie),
                  ("Content-Type", rnd.choice(values[5:7]))]
            for _ in range(rnd.randint(0, 4)):
                hs.append((rnd.choice(names), rnd.choice(values)))
            for i in range(2, len(hs)):
                if rnd.random() < 0.3:
                    v = mutate(hs[i][1].encode()).replace(b"\r", b"").replace(b"\n", b"")
                    hs[i] = (hs[i][0], v.decode("latin-1"))
            body = mutate(rnd.choice(bodies)) if rnd.random() < 0.7 else rnd.choice(bodies)
            method = rnd.choice(["POST", "POST", "PUT", "GET", "DELETE"])
            loc = rnd.choice(["/both/", "/spool/", "/"])
            if rnd.random() < 0.5:
                data = req(method, loc + "m", hs + [("Content-Length", str(len(body)))], body)
            else:
                data = req(method, loc + "m", hs + [("Transfer-Encoding", "chunked")], chunked(body, rnd.random()))
            if rnd.random() < 0.2:
                data = data[:rnd.randrange(len(data))]
            try:
                with socket.create_connection(("127.0.0.1", self.port), 10) as s:
                    s.sendall(data)
                    s.shutdown(socket.SHUT_WR)
                    got = T.recv_all(s)
            except OSError:
                got = b""
            self.assertFalse(got.startswith(b"HTTP/1.1 5"), got[:40])


if __name__ == "__main__":
    unittest.main()
