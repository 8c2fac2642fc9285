# SPDX-License-Identifier: BSD-2-Clause
"""The module's output is the upstream's page, byte for byte, plus the
inserted elements, when the client reads slowly (4 KiB socket buffers at
both ends, pauses): the pass-through runs that leave as bufs over the upstream's own
memory must not be sent after that memory is reused. proxy_buffering off
and on (4 KiB buffers), Content-Length and chunked, gzip after the module
(2 small gzip buffers, so it waits for its output too); upstream writes of
1 byte to 20 KB straddle the 1 KiB threshold of uncopied runs. Then
clients that go away mid-page (the page counted at pool cleanup) must
not crash the worker."""

import os
import random
import socket
import sys
import time
import unittest
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ngxtest as T  # noqa: E402

HTTP = """
    server {{
        listen 127.0.0.1:{port} sndbuf=4k;
        csrf on;
        sendfile off;
        location /nb/ {{ proxy_pass http://127.0.0.1:{upstream}; proxy_buffering off; }}
        location /b/ {{ proxy_pass http://127.0.0.1:{upstream}; proxy_buffering on; proxy_buffers 4 4k;
                        proxy_buffer_size 4k; proxy_max_temp_file_size 0; }}
        location /gz/ {{ proxy_pass http://127.0.0.1:{upstream}; proxy_buffering off; gzip on;
                         gzip_types text/html; gzip_min_length 0; gzip_buffers 2 4k; }}
        location /gzb/ {{ proxy_pass http://127.0.0.1:{upstream}; gzip on; gzip_types text/html;
                          gzip_min_length 0; gzip_buffers 2 4k; proxy_buffers 4 4k; proxy_buffer_size 4k;
                          proxy_max_temp_file_size 0; }}
        location /k1/ {{ proxy_pass http://127.0.0.1:{upstream}; proxy_buffers 64 1k; proxy_buffer_size 1k;
                         proxy_busy_buffers_size 2k; proxy_max_temp_file_size 0; }}
    }}
"""


def page(n):
    """Numbered lines (a misplaced or stale byte shows), a form every 53."""
    out = [b"<!DOCTYPE html><html><head><title>t</title></head><body>\n"]
    for i in range(n):
        out.append(b"line %08d " % i + b"abcdefghijklmnopqrstuvwxyz0123456789" * (1 + i % 37) + b"\n")
        if i % 53 == 0:
            out.append(b"<form method=post action=/x><input name=a value=%d></form>\n" % i)
    out.append(b"</body></html>\n")
    return b"".join(out)


BODY = page(3000)  # about 2 MB
FORMS = (3000 + 52) // 53


def dense_page():
    """Runs of 0 to 9000 bytes (around the 1 KiB of an uncopied run) between
    forms and other tags: many upstream bufs give no output of their own."""
    rnd = random.Random(2)
    out = [b"<!DOCTYPE html><html><head><title>t</title></head><body>\n"]
    i = n = 0
    while n < 400000:
        k = rnd.choice([0, 1, 5, 100, 1000, 1023, 1024, 1025, 1100, 2047, 4000, 8191, 8192, 9000])
        out.append(((b"%08d" % i) * (k // 8 + 1))[:k])
        out.append(rnd.choice([b"<form method=post action=/x><input name=a></form>", b"<form method=POST>", b"</form>",
                               b"<form method=post><p>x</p>", b"<a href=x>y</a>", b"<form method=get></form>"]))
        n += k
        i += 1
    out.append(b"</body></html>\n")
    return b"".join(out)


DENSE = dense_page()


def dribble(c, body, seed, sizes, pause, nap):
    """Sends body in pieces of the sizes, drawn by Random(seed), sleeping
    nap seconds after a piece with probability pause; stops quietly when
    the client has gone."""
    rnd = random.Random(seed)
    i = 0
    while i < len(body):
        n = rnd.choice(sizes)
        try:
            c.sendall(body[i:i + n])
        except OSError:
            return
        i += n
        if rnd.random() < pause:
            time.sleep(nap)


def upstream(c, head, body):
    if b"/k1/" in head.split(b"\r\n", 1)[0]:
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n")
        dribble(c, DENSE, 2, [1, 3, 50, 511, 1023, 1024, 1025, 3000, 8192, 9000], 0.05, 0.001)
        return
    with_length = b"/cl" in head.split(b"\r\n", 1)[0]
    hdr = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
    if with_length:
        hdr += b"Content-Length: %d\r\n" % len(BODY)
    c.sendall(hdr + b"Connection: close\r\n\r\n")
    dribble(c, BODY, 7, [1, 7, 500, 1023, 1024, 1025, 3000, 8192, 20000], 0.01, 0.002)


def unchunk(body):
    out = []
    p = 0
    while True:
        e = body.index(b"\r\n", p)
        n = int(body[p:e].split(b";")[0], 16)
        p = e + 2
        if n == 0:
            return b"".join(out)
        out.append(body[p:p + n])
        p += n + 2


def slow_get(port, path, gz=False, cut=None):
    """GET path reading 2 KiB at a time with pauses; (head, decoded body),
    or None when cut bytes were read and the connection dropped."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(60)
    s.connect(("127.0.0.1", port))
    req = b"GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" % path.encode()
    if gz:
        req += b"Accept-Encoding: gzip\r\n"
    s.sendall(req + b"\r\n")
    data = []
    n = k = 0
    while True:
        d = s.recv(2048)
        if not d:
            break
        data.append(d)
        n += len(d)
        k += 1
        if k % 50 == 0:
            time.sleep(0.01)
        if cut and n > cut:
            s.close()
            return None
    s.close()
    head, _, body = b"".join(data).partition(b"\r\n\r\n")
    lower = head.lower()
    if b"transfer-encoding: chunked" in lower:
        body = unchunk(body)
    if gz:
        assert b"content-encoding: gzip" in lower, "gzip after the module"
        body = zlib.decompress(body, 31)
    return head, body


ROUNDS = [("/nb/cl", 0), ("/nb/x", 0), ("/b/cl", 0), ("/b/x", 0), ("/gz/x", 1), ("/gz/cl", 1), ("/gzb/x", 1)]


class StreamTest(unittest.TestCase):
    def check_page(self, port, path, gz):
        head, body = slow_get(port, path, gz)
        self.assertTrue(head.startswith(b"HTTP/1.1 200"), path)
        stripped = T.strip_injected(body)
        if stripped != BODY:
            short = min(len(stripped), len(BODY))
            at = next((i for i in range(short) if stripped[i] != BODY[i]), short)
            self.fail("%s: the page differs at byte %d (%d bytes, %d sent)" % (path, at, len(stripped), len(BODY)))
        self.assertEqual(T.count_injected(body), (FORMS, 1), path)

    def test_slow_client_gets_the_page(self):
        up = T.Upstream(upstream)
        self.addCleanup(up.close)
        with T.Nginx(HTTP, up.port) as ngx:
            for path, gz in ROUNDS:
                self.check_page(ngx.port, path, gz)
            # clients gone mid-page: the worker lives on
            for cut in (5000, 100000, 1000000):
                for path, gz, at in [("/nb/cl", 0, cut), ("/b/x", 0, cut), ("/gz/x", 1, cut // 100)]:
                    # (no body in the message: it holds a token)
                    self.assertTrue(slow_get(ngx.port, path, gz, cut=at) is None, "%s read whole" % path)
            time.sleep(0.3)
            self.check_page(ngx.port, "/nb/cl", 0)
            self.assertEqual(ngx.crashed(), [])

    def test_small_upstream_buffers(self):
        """1 KiB proxy buffers, read at full speed: the bufs the module
        passes for an input buf's flags alone stay the write filter's while
        it postpones them; reused for a later run before they are sent, they
        sent that run twice, outside its chunk's length (d6a8fcf too)."""
        up = T.Upstream(upstream)
        self.addCleanup(up.close)
        with T.Nginx(HTTP, up.port) as ngx:
            for _ in range(2):
                s = socket.create_connection(("127.0.0.1", ngx.port), timeout=60)
                s.sendall(b"GET /k1/p HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                data = T.recv_all(s)
                s.close()
                head, _, body = data.partition(b"\r\n\r\n")
                self.assertTrue(head.startswith(b"HTTP/1.1 200"))
                try:
                    body = unchunk(body)
                except ValueError:
                    self.fail("the chunked body does not parse (%d bytes)" % len(body))
                stripped = T.strip_injected(body)
                short = min(len(stripped), len(DENSE))
                at = next((i for i in range(short) if stripped[i] != DENSE[i]), short)
                self.assertEqual((len(stripped), at), (len(DENSE), len(DENSE)), "the page differs")
            self.assertEqual(ngx.crashed(), [])

    def test_ssi_include_spooled_to_a_file(self):
        """sendfile on, an SSI page including a proxied page that nginx
        spools to a temp file, read slowly: the include's bufs are in a
        file (a subrequest reads them into memory only for filters that
        set main_filter_need_in_memory); the module must still see its
        bytes, and release them, or the upstream waits for buffers that
        never come back (the page hung)."""
        inc = page(600)

        def up_ssi(c, head, body):
            if b"/inc/" in head.split(b"\r\n", 1)[0]:
                T.send_whole(c, inc)
                return
            T.send_whole(c, b"<html><body><form method=post>a</form>\n<!--# include virtual=\"/inc/x\" -->"
                         b"<form method=post>b</form></body></html>\n")

        up = T.Upstream(up_ssi)
        self.addCleanup(up.close)
        conf = """
            server {{
                listen 127.0.0.1:{port} sndbuf=4k;
                csrf on;
                sendfile on;
                location /ssi/ {{ ssi on; proxy_pass http://127.0.0.1:{upstream}; }}
                location /inc/ {{ proxy_pass http://127.0.0.1:{upstream}; proxy_buffers 4 4k; proxy_buffer_size 4k;
                                  proxy_busy_buffers_size 8k; proxy_temp_file_write_size 8k; }}
            }}
        """
        want = b"<html><body><form method=post>a</form>\n" + inc + b"<form method=post>b</form></body></html>\n"
        with T.Nginx(conf, up.port) as ngx:
            head, body = slow_get(ngx.port, "/ssi/p")
            self.assertTrue(head.startswith(b"HTTP/1.1 200"))
            stripped = T.strip_injected(body)
            short = min(len(stripped), len(want))
            at = next((i for i in range(short) if stripped[i] != want[i]), short)
            self.assertEqual((len(stripped), at), (len(want), len(want)), "the page differs")
            self.assertEqual(T.count_injected(body), ((600 + 52) // 53 + 2, 1))
            self.assertEqual(ngx.crashed(), [])


if __name__ == "__main__":
    unittest.main()
