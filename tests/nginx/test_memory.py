# SPDX-License-Identifier: BSD-2-Clause
"""A 100 MB HTML response, generated on the fly by an upstream with a POST
form every few kilobytes, streams through the module (injecting all the
way) with the nginx worker's resident memory growing by less than 1 MiB."""

import os
import socket
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ngxtest as T  # noqa: E402

TOTAL = 100 * 1024 * 1024
BLOCK = (b"<p>" + b"lorem ipsum dolor sit amet " * 150 + b"</p>\n"
         b"<form method=post action=/echo><input name=a></form>\n"
         b"<!-- <form method=post> --><script>var x = '<form method=post>';</script>\n")

HTTP = """
    server {{
        listen 127.0.0.1:{port};
        csrf on;
        location / {{ proxy_pass http://127.0.0.1:{upstream}; proxy_buffering off; }}
    }}
"""


def big(c, head, body):
    size = TOTAL if b"/big" in head.split(b"\r\n", 1)[0] else 1024 * 1024
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" %
              size)
    c.sendall(b"<!DOCTYPE html><html><head><title>big</title></head><body>\n"[:size])
    sent = min(size, 60)
    while sent < size:
        chunk = BLOCK[:size - sent]
        c.sendall(chunk)
        sent += len(chunk)


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def fetch(port, path):
    """Reads the whole response, counting bytes and injected inputs."""
    s = socket.create_connection(("127.0.0.1", port), 30)
    s.sendall(b"GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n" % (path.encode(), port))
    n = 0
    inputs = 0
    tail = b""
    while True:
        d = s.recv(1 << 20)
        if not d:
            break
        n += len(d)
        buf = tail + d
        inputs += buf.count(b'<input type="hidden"')
        tail = buf[-32:]
        inputs -= tail.count(b'<input type="hidden"')
    inputs += tail.count(b'<input type="hidden"')
    s.close()
    return n, inputs


class MemoryTest(unittest.TestCase):
    def test_100mb_stream_bounded(self):
        up = T.Upstream(big)
        ngx = T.Nginx(HTTP, up.port)
        try:
            ngx.start()
            (pid,) = ngx.worker_pids()
            # warm up: the same kind of response, 1 MB
            for _ in range(3):
                fetch(ngx.port, "/warm")
            base = rss_kib(pid)
            peak = [base]
            done = threading.Event()

            def sample():
                while not done.is_set():
                    peak[0] = max(peak[0], rss_kib(pid))
                    time.sleep(0.05)

            th = threading.Thread(target=sample)
            th.start()
            try:
                n, inputs = fetch(ngx.port, "/big")
            finally:
                done.set()
                th.join()
            peak[0] = max(peak[0], rss_kib(pid))
            forms = (TOTAL - 60) // len(BLOCK)
            self.assertGreater(n, TOTAL, "the whole response (plus injected elements) arrived")
            self.assertGreaterEqual(inputs, forms, "tokens were injected all the way through")
            growth = peak[0] - base
            print("worker RSS: base %d KiB, peak %d KiB, growth %d KiB; %d bytes, %d tokens" %
                  (base, peak[0], growth, n, inputs))
            self.assertLess(growth, 1024, "worker memory grew by %d KiB" % growth)
            self.assertEqual(ngx.crashed(), [])
        finally:
            ngx.cleanup()
            up.close()


if __name__ == "__main__":
    unittest.main()
