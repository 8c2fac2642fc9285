# SPDX-License-Identifier: BSD-2-Clause
"""A body buf in a file reaching the module ends the response. nginx's own
filters hand the module bufs in memory (it sets main_filter_need_in_memory,
which every subrequest inherits); a buf in a file can come only from a
third-party filter between nginx's copy filter and the module, here the
test fixture ngx_http_test_filebuf_module (tests/nginx/filebuf), which
moves the page's bufs from a given body byte on into a temp file. The
module cannot read such a buf where it stands: passed on unread, its forms
would leave without their tokens while the page is served. So the response
ends (the connection closes, nothing is sent after the buf) and one error
line says why. Never prints a token or a cookie."""

import os
import re
import socket
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ngxtest as T  # noqa: E402
from test_stream import page  # noqa: E402

FIXTURE = os.environ.get("CSRF_NGX_FILEBUF_MODULE", "")

HTTP = """
    server {{
        listen 127.0.0.1:{port};
        root {prefix}/www;
        csrf on;
        sendfile on;
        location /first/ {{ test_filebuf 0; }}
        location /later/ {{ test_filebuf 40000; output_buffers 2 8k; }}
        location /plain/ {{ }}
        location /ssi/ {{ ssi on; ssi_min_file_chunk 100; }}
        location /ssiaio/ {{ ssi on; aio threads; directio 4k; output_buffers 2 8k; }}
    }}
"""

PAGE = page(400)  # about 260 KB, a form every 53 lines
# an SSI page of the same server including a page that includes PAGE
NESTED = b"<html><body>%s<!--# include virtual=\"/%%s/inner.html\" -->%s</body></html>\n" % (PAGE[:30000], PAGE[30000:60000])
INNER = b"<form method=post action=/i><input name=i></form>\n<!--# include virtual=\"/plain/p.html\" wait=\"yes\" -->"
POST_FORM = re.compile(rb"<form method=post[^>]*>")


def get(port, path):
    """(head, body as far as it came, whether the chunked body ended)."""
    with socket.create_connection(("127.0.0.1", port), 10) as s:
        s.sendall(b"GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" % path.encode())
        data = T.recv_all(s)
    head, _, rest = data.partition(b"\r\n\r\n")
    body, p = [], 0
    while True:
        e = rest.find(b"\r\n", p)
        if e < 0:
            return head, b"".join(body), False
        n = int(rest[p:e].split(b";")[0], 16)
        if n == 0:
            return head, b"".join(body), True
        if len(rest) < e + 2 + n:
            body.append(rest[e + 2:])
            return head, b"".join(body), False
        body.append(rest[e + 2:e + 2 + n])
        p = e + 4 + n


@unittest.skipUnless(FIXTURE, "CSRF_NGX_FILEBUF_MODULE: the fixture module is not built")
class FileBufTest(T.ProxyCase):
    FILES = {"www/%s/p.html" % d: PAGE for d in ("first", "later", "plain")}
    FILES.update({"www/%s/%s" % (d, name): text for d in ("ssi", "ssiaio")
                  for name, text in (("outer.html", NESTED % d.encode()), ("inner.html", INNER))})

    @classmethod
    def upstream(cls, c, head, body):
        T.send_whole(c, b"unused", "text/plain")

    @classmethod
    def make_server(cls, upstream_port):
        cls.ngx = T.Nginx(HTTP, upstream_port, more_modules=[FIXTURE])
        return cls.ngx

    def errors(self):
        return [line for line in self.ngx.error_log().splitlines() if "csrf:" in line and "in a file" in line]

    def test_the_fixture_leaves_other_pages_alone(self):
        head, body, ended = get(self.ngx.port, "/plain/p.html")
        self.assertTrue(head.startswith(b"HTTP/1.1 200"))
        self.assertTrue(ended)
        self.assertEqual(T.strip_injected(body), PAGE)
        self.assertEqual(T.count_injected(body), (len(POST_FORM.findall(PAGE)), 1))

    def test_nginx_own_filters_hand_on_no_file_buf(self):
        """sendfile on, an SSI page (its pieces over the file) including
        a page that includes a static page, plainly and with aio threads
        and directio: every part reaches the module in memory, so the
        page is whole, with every token, and no response is ended."""
        before = len(self.errors())
        for d in ("ssi", "ssiaio"):
            head, body, ended = get(self.ngx.port, "/%s/outer.html" % d)
            self.assertTrue(head.startswith(b"HTTP/1.1 200"), d)
            self.assertTrue(ended, d)
            want = (NESTED % d.encode()).replace(b"<!--# include virtual=\"/%s/inner.html\" -->" % d.encode(), INNER)
            want = want.replace(b"<!--# include virtual=\"/plain/p.html\" wait=\"yes\" -->", PAGE)
            self.assertTrue(T.strip_injected(body) == want, "%s: the page differs" % d)
            self.assertEqual(T.count_injected(body), (len(POST_FORM.findall(want)), 1), d)
        self.assertEqual(len(self.errors()), before)
        self.assertEqual(self.ngx.crashed(), [])

    def test_a_file_buf_before_the_header_ends_the_response(self):
        """The first bytes already in a file: nothing is sent at all."""
        before = len(self.errors())
        head, body, ended = get(self.ngx.port, "/first/p.html")
        # (lengths only in the messages: the head sets a secret cookie)
        self.assertEqual((len(head), len(body)), (0, 0), "the page was served")
        self.assertEqual(len(self.errors()), before + 1)
        self.assertEqual(self.ngx.crashed(), [])

    def test_a_file_buf_after_the_first_forms_ends_the_response(self):
        """From body byte 40,000 on in a file: the bytes before went out
        with their tokens, then the response stops, unfinished."""
        before = len(self.errors())
        head, body, ended = get(self.ngx.port, "/later/p.html")
        self.assertTrue(head.startswith(b"HTTP/1.1 200"))
        self.assertFalse(ended, "the chunked body was ended as if whole")
        got = T.strip_injected(body)
        self.assertLess(len(got), 48 * 1024, "bytes after the file buf went out")
        self.assertTrue(got == PAGE[:len(got)], "the bytes that went out differ from the page's")
        self.assertEqual(T.count_injected(body)[0], len(POST_FORM.findall(got)), "a form without its token")
        self.assertEqual(len(self.errors()), before + 1)
        self.assertEqual(self.ngx.crashed(), [])


if __name__ == "__main__":
    unittest.main()
