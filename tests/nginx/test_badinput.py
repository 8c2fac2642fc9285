# SPDX-License-Identifier: BSD-2-Clause
"""Bad input through the real nginx with raw sockets: no Host, a huge
Origin, malformed Cookie headers, truncated multipart bodies, bodies over
the cap, clients that vanish mid-body. Each gets a clear 4xx (or nginx's
own 400), the worker never crashes, and nginx keeps serving."""

import os
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ngxtest as T  # noqa: E402

HTTP = """
    client_max_body_size 4m;
    server {{
        listen 127.0.0.1:{port};
        server_name localhost;
        root {prefix}/www;
        csrf on;
        csrf_mode both;
        csrf_body_max 4k;
        location / {{ }}
        location /echo {{ proxy_pass http://127.0.0.1:{upstream}; }}
        location /vote {{ csrf_unsafe_get on; proxy_pass http://127.0.0.1:{upstream}; }}
    }}
"""

PAGE = b"<html><head></head><body><form method=post action=/echo></form></body></html>"


def echo(c, head, body):
    T.send_whole(c, b"len=%d" % len(body), "text/plain")


def req(method, path, headers, body=b"", version="HTTP/1.1"):
    head = "%s %s %s\r\n" % (method, path, version) + "".join("%s: %s\r\n" % h for h in headers) + "\r\n"
    return head.encode("latin-1") + body


class BadInputTest(T.SessionCase):
    HTTP = HTTP
    upstream = staticmethod(echo)
    FILES = {"www/index.html": PAGE}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.host = ("Host", "127.0.0.1:%d" % cls.port)
        cls.so = cls.self_origin

    def assert_4xx(self, r, name):
        self.assertIsNotNone(r, name + ": no response")
        self.assertTrue(400 <= r.status < 500, "%s: status %d" % (name, r.status))

    def test_requests(self):
        h, so, close = self.host, self.so, ("Connection", "close")
        form = ("Content-Type", "application/x-www-form-urlencoded")
        ck = ("Cookie", self.cookie)
        bnd = "b0undary"
        mp = ("Content-Type", "multipart/form-data; boundary=" + bnd)
        part = ("--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n--%s--\r\n" %
                (bnd, self.field, self.token, bnd)).encode()
        rows = [
            # (name, raw request, expected status or None for any 4xx)
            ("no host, http/1.0", req("POST", "/echo", [("Origin", so), ("Content-Length", "0")], b"", "HTTP/1.0"),
             403),
            ("no host, http/1.1", req("POST", "/echo", [("Origin", so), ("Content-Length", "0"), close]), 400),
            ("empty host", req("POST", "/echo", [("Host", ""), ("Origin", so), ("Content-Length", "0"), close]), None),
            ("huge origin", req("POST", "/echo", [h, ("Origin", "http://" + "a" * 6000 + ".example"),
                                                  ("Content-Length", "0"), close]), 403),
            ("origin over nginx's header limit", req("POST", "/echo", [h, ("Origin", "http://" + "a" * 20000),
                                                                         ("Content-Length", "0"), close]), None),
            ("origin with a path", req("POST", "/echo", [h, ("Origin", so + "/x"), ("Content-Length", "0"), close]),
             403),
            ("origin with userinfo", req("POST", "/echo", [h, ("Origin", "http://u@127.0.0.1:%d" % self.port),
                                                           ("Content-Length", "0"), close]), 403),
            ("bad fetch site", req("POST", "/echo", [h, ("Sec-Fetch-Site", "same-origin, cross-site"),
                                                     ("Content-Length", "0"), close]), 403),
            ("referer garbage", req("GET", "/vote?x=1", [h, ("Referer", "::::"), close]), 403),
            ("cookie: only separators", req("POST", "/echo", [h, ("Origin", so), ("Cookie", ";;;; ;;="),
                                                              ("X-CSRF-Token", self.token), ("Content-Length", "0"),
                                                              close]), 403),
            ("cookie: control bytes", req("POST", "/echo", [h, ("Origin", so), ("Cookie", "csrf_secret=\x01\x02\x7f"),
                                                            ("X-CSRF-Token", self.token), ("Content-Length", "0"),
                                                            close]), 403),
            ("cookie: unbalanced quote", req("POST", "/echo", [h, ("Origin", so), ("Cookie", 'csrf_secret="abc'),
                                                               ("X-CSRF-Token", self.token), ("Content-Length", "0"),
                                                               close]), 403),
            ("cookie: huge", req("POST", "/echo", [h, ("Origin", so), ("Cookie", "a=" + "x" * 7000),
                                                   ("X-CSRF-Token", self.token), ("Content-Length", "0"), close]),
             403),
            ("cookie: secret twice, first forged", req("POST", "/echo", [
                h, ("Origin", so), ("Cookie", "csrf_secret=AAAA; " + self.cookie), ("X-CSRF-Token", self.token),
                ("Content-Length", "0"), close]), 403),
            ("token: huge header", req("POST", "/echo", [h, ("Origin", so), ck, ("X-CSRF-Token", "A" * 6000),
                                                         ("Content-Length", "0"), close]), 403),
            ("token: bad alphabet", req("POST", "/echo", [h, ("Origin", so), ck,
                                                          ("X-CSRF-Token", "*" * len(self.token)),
                                                          ("Content-Length", "0"), close]), 403),
            ("multipart truncated", req("POST", "/echo", [h, ("Origin", so), ck, mp, ("Content-Length", "40"), close],
                                        part[:40]), 403),
            ("multipart no closing boundary", req("POST", "/echo", [h, ("Origin", so), ck, mp,
                                                                    ("Content-Length", str(len(part) - 8)), close],
                                                  part[:-8]), None),
            ("multipart garbage", req("POST", "/echo", [h, ("Origin", so), ck, mp, ("Content-Length", "9"), close],
                                      b"\x00\xff--\r\n\r\n-"), 403),
            ("urlencoded bad escapes", req("POST", "/echo", [h, ("Origin", so), ck, form, ("Content-Length", "11"),
                                                             close], b"%zz=%&%=%4x"), 403),
            ("body over the cap", req("POST", "/echo", [h, ("Origin", so), ck, form, ("Content-Length", "5000"), close],
                                      b"a" * 5000), 413),
            ("chunked body over the cap", req("POST", "/echo", [h, ("Origin", so), ck, form,
                                                                ("Transfer-Encoding", "chunked"), close],
                                              b"1388\r\n" + b"a" * 5000 + b"\r\n0\r\n\r\n"), 413),
            ("body over client_max_body_size", req("POST", "/echo", [h, ("Origin", so), ck, form,
                                                                     ("Content-Length", str(8 << 20)), close]), 413),
            ("bad chunked encoding", req("POST", "/echo", [h, ("Origin", so), ck, form,
                                                           ("Transfer-Encoding", "chunked"), close], b"zz\r\nx\r\n"),
             400),
            ("garbage request line", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 400),
            ("unknown method", req("BREW", "/echo", [h, ("Origin", so), ("Content-Length", "0"), close]), None),
        ]
        for name, data, status in rows:
            with self.subTest(name):
                r = T.raw(self.port, data)
                if status is None:
                    self.assert_4xx(r, name)
                else:
                    self.assertIsNotNone(r, name + ": no response")
                    self.assertEqual(r.status, status)

    def test_client_vanishes_mid_body(self):
        for sent in (0, 1, 100, 3000):
            s = socket.create_connection(("127.0.0.1", self.port), 5)
            s.sendall(req("POST", "/echo", [self.host, ("Origin", self.so), ("Cookie", self.cookie),
                                            ("Content-Type", "application/x-www-form-urlencoded"),
                                            ("Content-Length", "4000")], b"a" * sent))
            time.sleep(0.05)
            s.close()
        # a client that stops sending: nginx's client_body_timeout applies
        r = T.request(self.port, "GET", "/")
        self.assertEqual(r.status, 200)

    def test_still_serving_and_no_crash(self):
        for _ in range(3):
            self.test_requests()
        r = T.request(self.port, "GET", "/")
        self.assertEqual(r.status, 200)
        r = T.request(self.port, "POST", "/echo", [("Origin", self.so), ("Cookie", self.cookie),
                                                   ("X-CSRF-Token", self.token)], b"ok")
        self.assertEqual(r.status, 200)
        time.sleep(0.3)
        self.assertEqual(self.ngx.crashed(), [])
        self.assertEqual(len(self.ngx.worker_pids()), 1)


if __name__ == "__main__":
    unittest.main()
