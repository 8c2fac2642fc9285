# SPDX-License-Identifier: BSD-2-Clause
"""A request judged again after an internal redirect is judged on what it
carried. /api allows a POST on its Origin (csrf_mode origin_or_token) and
streams the body to its upstream (proxy_request_buffering off), which
takes it and fails (502); error_page sends the request to @x, whose
csrf_mode both needs the token as well. The body is gone from nginx by
then: @x is judged on the copy the module kept as the body streamed
(nginx/README.md, Limits). A valid token passes; a forged, missing or
too large one is refused, and a request refused by /api never reaches
either upstream. The same through HTTP/2, and with the body buffered."""

import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ngxtest as T  # noqa: E402

FIRST = """csrf_mode origin_or_token; proxy_http_version 1.1; proxy_set_header X-Up first;
                        error_page 502 = @x%s; proxy_pass http://127.0.0.1:{upstream};"""

HTTP = """
    server {{
        listen 127.0.0.1:{port};
        listen 127.0.0.1:{port1} http2;
        root {prefix}/www;
        csrf on;
        csrf_mode both;
        location / {{ }}
        location /api {{ proxy_request_buffering off; %s }}
        location /buf {{ %s }}
        location /small {{ csrf_body_max 64; proxy_request_buffering off; %s }}
        location /unjudged {{ csrf off; proxy_request_buffering off; %s }}
        location @x {{ proxy_set_header X-Up second; proxy_pass http://127.0.0.1:{upstream}; }}
        location @xs {{ csrf_body_max 64; proxy_set_header X-Up second; proxy_pass http://127.0.0.1:{upstream}; }}
    }}
""" % (FIRST % "", FIRST % "", FIRST % "s", FIRST % "")

PAGE = b"<!DOCTYPE html><html><head><title>t</title></head><body><form method=post action=/api></form></body></html>"


class Upstreams(T.Upstream):
    """One listener for both upstreams, told apart by X-Up (ngxtest's
    Upstream, which reads no chunked body, with a reader of its own). The
    first reads the whole body (Content-Length or chunked) and closes
    without an answer: nginx answers 502. The second (@x) answers at once,
    with the method it got: the body went to the first, @x's proxy has
    none to send. Each keeps (request line, body or credentials) of what
    came."""

    def __init__(self):
        self.first = []
        self.second = []
        super().__init__(None)

    @staticmethod
    def _body(c, head, body):
        m = re.search(rb"\r\ncontent-length:\s*(\d+)", head, re.I)
        while (len(body) < int(m.group(1))) if m else not body.endswith(b"0\r\n\r\n"):
            d = c.recv(65536)
            if not d:
                break
            body += d
        if not m:
            out, rest = b"", body
            while rest:
                size, rest = rest.split(b"\r\n", 1)
                n = int(size, 16)
                out, rest = out + rest[:n], rest[n + 2:]
                if n == 0:
                    break
            body = out
        return body

    def _one(self, c):
        with c:
            got = T.recv_head(c)
            if got is None:
                return
            head, body = got
            line = head.split(b"\r\n", 1)[0]
            if b"\r\nx-up: first" in head.lower():
                self.first.append((line, self._body(c, head, body)))
                return
            self.second.append((line, b"\r\ncookie:" in head.lower()))
            T.send_whole(c, b"second " + line.split(b" ")[0], "text/plain")


def bad(token):
    return token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")


class RedirectTest(T.SessionCase):
    HTTP = HTTP
    PORTS = 2
    FILES = {"www/index.html": PAGE}

    @classmethod
    def make_upstream(cls):
        return Upstreams()

    def post(self, path, headers, body, split):
        """The status of a form POST over HTTP/1.1; split 1: the head asks
        for 100-continue and the body follows, in two pieces, only once
        nginx asks for it (so /api judged without it); 2: the same with the
        body chunked (two chunks); 0: head and body at once."""
        length = "Transfer-Encoding: chunked" if split == 2 else "Content-Length: %d" % len(body)
        head = ("POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % (path, self.port) +
                "".join("%s: %s\r\n" % kv for kv in headers) +
                "Content-Type: application/x-www-form-urlencoded\r\n%s\r\n%s"
                "Connection: close\r\n\r\n" % (length, "Expect: 100-continue\r\n" if split else "")).encode()
        pieces = [body[:5], body[5:]]
        if split == 2:
            pieces = [b"%x\r\n%s\r\n" % (len(p), p) for p in pieces] + [b"0\r\n\r\n"]
        with socket.create_connection(("127.0.0.1", self.port), 10) as s, s.makefile("rb") as f:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            s.sendall(head if split else head + body)
            status = self.status(f)
            if status == 100:
                for p in pieces:
                    s.sendall(p)
                status = self.status(f)
            return status

    @staticmethod
    def status(f):
        """The status of the next answer on f, its head read (None when the
        connection ended first)."""
        line = f.readline()
        while f.readline() not in (b"\r\n", b""):
            pass
        return int(line.split()[1]) if line else None

    def outcome(self, path, headers, body, split):
        """(status, what the first upstream got, what the second got)."""
        n1, n2 = len(self.up.first), len(self.up.second)
        status = self.post(path, headers, body, split)
        self.ngx.barrier()
        return status, self.up.first[n1:], self.up.second[n2:]

    def form(self, token):
        return ("a=1&%s=%s&b=2" % (self.field, token)).encode()

    def test_valid_token_reaches_the_stricter_location(self):
        # the known false 403: /api allowed the POST on its Origin, the
        # body streamed to the upstream that failed, @x needs the token
        hdrs = [("Origin", self.self_origin), ("Cookie", self.cookie)]
        body = self.form(self.token)
        for path in ("/api", "/buf"):
            for split in (1, 0, 2):
                with self.subTest(path=path, split=split):
                    status, first, second = self.outcome("%s/s%d" % (path, split), hdrs, body, split)
                    self.assertEqual([b for _, b in first], [body], "the first upstream got the body")
                    self.assertEqual(status, 200)
                    self.assertEqual([l.split(b" ")[0] for l, _ in second], [b"POST"])
        log = [l for l in self.ngx.access_log().splitlines() if re.match(r"POST /(api|buf)/s[012] ", l)]
        self.assertEqual(sorted(l.split(" ", 2)[2] for l in log), ["200 ok"] * 6)

    def test_no_valid_token_is_refused_by_the_stricter_location(self):
        # the same requests without the token @x needs: refused there, and
        # @x's upstream never sees them
        hdrs = [("Origin", self.self_origin), ("Cookie", self.cookie)]
        rows = [
            ("forged", "/api", self.form(bad(self.token)), "token_invalid"),
            ("missing", "/api", b"a=1&b=2", "token_missing"),
            # over csrf_body_max (of both): the module keeps none of it
            ("too large", "/small", self.form(self.token) + b"&pad=" + b"x" * 64, "body_too_large"),
        ]
        for name, path, body, reason in rows:
            want = 413 if reason == "body_too_large" else 403
            for split in (1, 0, 2):
                with self.subTest(name, split=split):
                    status, first, second = self.outcome(path, hdrs, body, split)
                    self.assertEqual([b for _, b in first], [body], "the first upstream got the body")
                    self.assertEqual(status, want)
                    self.assertEqual(second, [], "@x's upstream got the request")
                    last = self.ngx.access_log().rstrip()
                    self.assertTrue(last.endswith(" %d %s" % (want, reason)), "another reason")

    def test_body_gone_unseen(self):
        # /unjudged has csrf off: no check saw the body or kept it, so @x,
        # the first to judge, has none to read: it fails closed and says why
        hdrs = [("Origin", self.self_origin), ("Cookie", self.cookie)]
        status, first, second = self.outcome("/unjudged", hdrs, self.form(self.token), 1)
        self.assertEqual((status, len(first), second), (403, 1, []))
        self.assertTrue('POST "/unjudged" judged without its body, which went on unread' in self.ngx.error_log(),
                        "no warning")

    def test_refused_first_never_reaches_either_upstream(self):
        # a request /api refuses goes nowhere: error_page answers only 502
        rows = [
            ("cross-site with the token", [("Sec-Fetch-Site", "cross-site"), ("Cookie", self.cookie)],
             self.form(self.token)),
            ("no evidence, forged token", [("Cookie", self.cookie)], self.form(bad(self.token))),
            ("no evidence, no token", [("Cookie", self.cookie)], b"a=1&b=2"),
        ]
        for name, hdrs, body in rows:
            for split in (1, 0):
                with self.subTest(name, split=split):
                    self.assertEqual(self.outcome("/api", hdrs, body, split), (403, [], []))

    def test_body_read_by_the_first_check(self):
        # no Origin: /api reads the body for the token itself (buffered,
        # whatever proxy_request_buffering says), @x judges the same bytes
        for token, want in ((self.token, 200), (bad(self.token), 403)):
            for split in (1, 0):
                with self.subTest(valid=token == self.token, split=split):
                    status, first, second = self.outcome("/api", [("Cookie", self.cookie)], self.form(token), split)
                    self.assertEqual(status, want)
                    self.assertEqual(len(first), 1 if want == 200 else 0)
                    self.assertEqual(len(second), 1 if want == 200 else 0)

    @unittest.skipUnless(shutil.which("curl"), "curl not installed")
    def test_http2(self):
        # h2c: the body comes in DATA frames after the head, streamed to
        # the first upstream (chunked: curl sends no length from a pipe)
        u = "http://127.0.0.1:%d" % self.ngx.ports[1]
        rows = [("valid", self.form(self.token), 200, 1), ("forged", self.form(bad(self.token)), 403, 0),
                ("missing", b"a=1&b=2", 403, 0)]
        for name, body, want, reached in rows:
            for path in ("/api", "/buf"):
                with self.subTest(name, path=path):
                    n1, n2 = len(self.up.first), len(self.up.second)
                    p = subprocess.Popen(["curl", "-s", "--http2-prior-knowledge", "-o", "/dev/null", "-w",
                                          "%{http_code}", "-H", "Origin: " + u, "-H", "Cookie: " + self.cookie,
                                          "-H", "Content-Type: application/x-www-form-urlencoded",
                                          "-X", "POST", "-T", "-", u + path + "/h2"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                    p.stdin.write(body[:5])
                    p.stdin.flush()
                    time.sleep(0.2)
                    p.stdin.write(body[5:])
                    p.stdin.close()
                    code = p.stdout.read()
                    p.wait(10)
                    self.ngx.barrier()
                    self.assertEqual(code, str(want).encode())
                    self.assertEqual([b for _, b in self.up.first[n1:]], [body])
                    self.assertEqual(len(self.up.second[n2:]), reached)
        self.assertEqual(self.ngx.crashed(), [])


COST_HTTP = """
    server {{
        listen 127.0.0.1:{port};
        csrf on;
        csrf_mode origin_or_token;
        location / {{ proxy_request_buffering off; proxy_http_version 1.1; error_page 500 502 503 504 /50x.html;
                     proxy_pass http://127.0.0.1:{upstream}; }}
    }}
"""


class Holding(T.Upstream):
    """An upstream that reads what the client said it sent (X-Sent) and
    then holds the request, unanswered, until released: nginx keeps each
    request, and whatever the module kept of its body, alive meanwhile."""

    def __init__(self):
        self.release = threading.Event()
        self.held = 0
        self.lock = threading.Lock()
        super().__init__(None)

    def _one(self, c):
        head, body = T.recv_head(c) or (b"", b"")
        m = re.search(rb"\r\nx-sent:\s*(\d+)", head, re.I)
        d = b"-"
        while m and d and len(body) < int(m.group(1)):
            d = c.recv(65536)
            body += d
        if m and d:
            with self.lock:
                self.held += 1
            self.release.wait(60)
        c.close()


def vm(pid):
    """(VmSize, VmRSS) of a process, KiB."""
    with open("/proc/%d/status" % pid) as f:
        d = dict(l.split(":", 1) for l in f)
    return int(d["VmSize"].split()[0]), int(d["VmRSS"].split()[0])


class CopyCostTest(unittest.TestCase):
    """What the copy of a streaming body costs, in a location with
    nginx's usual error_page 500 502 503 504 (which enables it): memory
    for the bytes that came, never for what Content-Length announces, and
    none for a body of a type the library never reads a token from."""

    N = 16

    def setUp(self):
        self.up = Holding()
        self.ngx = T.Nginx(COST_HTTP, self.up.port).start()
        (self.pid,) = self.ngx.worker_pids()
        self.origin = "http://127.0.0.1:%d" % self.ngx.port
        T.request(self.ngx.port, "GET", "/warm")

    def tearDown(self):
        self.up.release.set()
        try:
            # stopped first so the error log is whole for crashed() (read
            # before cleanup() removes it); cleanup() still scans what
            # nginx wrote to its output pipe (stop() keeps it) and, under
            # ASan, fails on a report or a dead worker
            self.ngx.stop()
            crashed = self.ngx.crashed()
            self.ngx.cleanup()
        finally:
            self.up.close()
        self.assertEqual(crashed, [])

    def held(self, content_type, length, sent):
        """KiB (VmSize, VmRSS) the worker grew by, a request, while N
        requests (allowed on their Origin) of the type announce length
        bytes, have sent `sent` and are held by the upstream."""
        before = vm(self.pid)
        socks = []
        for _ in range(self.N):
            s = socket.create_connection(("127.0.0.1", self.ngx.port), 10)
            s.sendall(("POST /f HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nOrigin: %s\r\nContent-Type: %s\r\n"
                       "Content-Length: %d\r\nX-Sent: %d\r\n\r\n" % (self.ngx.port, self.origin, content_type,
                                                                     length, sent)).encode() + b"a=" + b"x" * (sent - 2))
            socks.append(s)
        deadline = time.time() + 30
        while self.up.held < self.N and time.time() < deadline:
            time.sleep(0.01)
        self.assertEqual(self.up.held, self.N, "the upstream holds every request")
        after = vm(self.pid)
        for s in socks:
            s.close()
        self.up.held = 0
        return [(a - b) / self.N for a, b in zip(after, before)]

    def test_no_memory_for_bytes_announced_only(self):
        # 1 MB announced, 64 bytes sent: nginx itself holds 16 KiB
        size, _ = self.held("application/x-www-form-urlencoded", 1000000, 64)
        self.assertLess(size, 256, "KiB of address space a request for 64 bytes sent")

    def test_no_copy_of_a_body_without_a_token(self):
        # a form's copy is resident (the control: the measure sees it);
        # a JSON body's is never made
        _, rss = self.held("application/x-www-form-urlencoded", 512 * 1024, 512 * 1024)
        self.assertGreater(rss, 400, "KiB resident a form request")
        self.up.release.set()
        self.ngx.barrier()
        self.up.release.clear()
        _, rss = self.held("application/json", 512 * 1024, 512 * 1024)
        self.assertLess(rss, 128, "KiB resident a JSON request")


if __name__ == "__main__":
    unittest.main()
