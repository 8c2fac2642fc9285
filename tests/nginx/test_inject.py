# SPDX-License-Identifier: BSD-2-Clause
"""Header and body filters through the real nginx: the hidden input after
every same-origin POST <form> start tag, the meta tags after <head>,
nothing inside comments, scripts, styles, textareas, titles; the same
output whatever the buffer boundaries; output minus the injected elements
equals the input byte for byte; headers (Content-Length dropped, Vary,
Cache-Control and the targeted cache fields, Set-Cookie; HEAD responses
untouched); compressed and non-HTML responses untouched;
tokens bound to the application's session cookie."""

import gzip
import os
import re
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ngxtest as T  # noqa: E402

# Each case: (marker, start tag as written, expect injection)
FORMS = [
    ("f-rel", '<form method="post" action="/echo" id="f-rel">', True),
    ("f-noaction", "<form method=post id=f-noaction>", True),
    ("f-upper", "<FORM METHOD=POST ACTION='/echo' ID=f-upper>", True),
    ("f-abs-self", '<form method="POST" action="http://127.0.0.1:{port}/echo" id="f-abs-self">', True),
    ("f-gt-in-value", '<form data-x="a>b" method="post" action="/echo" id="f-gt-in-value">', True),
    ("f-cross", '<form method="post" action="http://evil.example/steal" id="f-cross">', False),
    ("f-cross-port", '<form method="post" action="http://127.0.0.1:1/x" id="f-cross-port">', False),
    ("f-schemeless", '<form method="post" action="//evil.example/x" id="f-schemeless">', False),
    ("f-get", '<form method="get" action="/search" id="f-get">', False),
    ("f-default", '<form action="/search" id="f-default">', False),
]

RAW = [
    "<!-- <form method=post action=/echo id=in-comment> -->",
    "<script>var s = '<form method=post action=/echo id=in-script>'; if (a < b) {{}}</script>",
    "<style>/* <form method=post id=in-style> */ p {{ color: red }}</style>",
    "<textarea name=t><form method=post action=/echo id=in-textarea></textarea>",
]


def page(port):
    parts = ["<!DOCTYPE html>\n<html>\n<HEAD>\n<title>a <form method=post id=in-title></title>\n</HEAD>\n<body>\n"]
    for raw in RAW:
        parts.append(raw.format(port=port) + "\n")
    for marker, tag, _ in FORMS:
        parts.append(tag.format(port=port) + '<input name="amount" value="1"><button>go</button></form>\n')
    parts.append("</body>\n</html>\n")
    return "".join(parts).encode()


NORMALIZE_HIDDEN = re.compile(rb'(<input type="hidden" name=")[A-Za-z0-9_-]+(" value=")[A-Za-z0-9_-]+(">)')
NORMALIZE_META = re.compile(rb'(content=")[A-Za-z0-9_-]+(")')


def normalize(body):
    """Tokens and field names replaced by placeholders (they differ on
    every response)."""
    return NORMALIZE_META.sub(rb"\1X\2", NORMALIZE_HIDDEN.sub(rb"\1F\2T\3", body))


# Set-Cookie headers an upstream sends, and the session the page's tokens
# must then be bound to (the request carries "sid=req").
SET_COOKIES = [
    ([b"sid=new1; Path=/; HttpOnly"], "new1"),
    ([b"  sid=new2"], "new2"),
    ([b"sid=; Max-Age=0; Path=/"], ""),
    ([b"sidx=zzz; Path=/"], "req"),
    ([b"other=1", b"sid=first", b"sid=last"], "last"),
    ([b"sid"], "req"),
    ([b"Sid=cap"], "req"),
    ([b"sid=a=b; Path=/"], "a=b"),
    ([b""], "req"),
]

# Cache headers an upstream sends with a page, the Cache-Control lines the
# client must get, and the Expires it must get (the page carries a token:
# no shared cache may keep it; csrf_response_cache's rule). The targeted
# fields never stay.
TARGETED = [b"CDN-Cache-Control: max-age=600", b"Surrogate-Control: max-age=600",
            b"Cloudflare-CDN-Cache-Control: max-age=600", b"Edge-Control: cache-maxage=600s"]
EXPIRES = b"Expires: Thu, 01 Jan 2099 00:00:00 GMT"
CACHES = [
    ([b'Cache-Control: public, max-age=600, private="Set-Cookie"'], ["private"], []),
    ([b'Cache-Control: private="a, b", s-maxage=600'], ["private"], []),
    ([b"Cache-Control: no-store=1"], ["private"], []),
    ([b'Cache-Control: private, x="open'], ["private"], []),
    ([b"Cache-Control: no-store"], ["no-store"], []),
    # two lines: a cache that reads only the first would see "public"
    ([b"Cache-Control: public", b"Cache-Control: PRIVATE"], ["private"], []),
    ([b"Cache-Control: private", b"Cache-Control: no-cache"], ["private"], []),
    ([b"Cache-Control: private"] + TARGETED, ["private"], []),
    (TARGETED, ["private"], []),
    # Expires goes with a Cache-Control that is replaced, stays beside a
    # private one
    ([b"Cache-Control: public, max-age=600", EXPIRES], ["private"], []),
    ([EXPIRES], ["private"], []),
    ([b"Cache-Control: private, max-age=60", EXPIRES], ["private, max-age=60"], [EXPIRES[9:].decode()]),
]

HTTP = """
    server {{
        listen 127.0.0.1:{port};
        server_name localhost;
        root {prefix}/www;
        csrf on;
        csrf_mode both;
        csrf_session_cookie sid;
        location / {{ }}
        location /small-buffers/ {{ alias {prefix}/www/; sendfile off; output_buffers 1 7; }}
        location /up/ {{ proxy_pass http://127.0.0.1:{upstream}; proxy_buffering off; }}
        location /buf/ {{ proxy_pass http://127.0.0.1:{upstream}/up/; }}
        location /noinject/ {{ csrf_inject off; alias {prefix}/www/; }}
        location /originmode/ {{ csrf_mode origin; alias {prefix}/www/; }}
        location /off/ {{ csrf off; alias {prefix}/www/; }}
        location /echo {{ proxy_pass http://127.0.0.1:{upstream}; }}
        location /expires/ {{
            alias {prefix}/www/;
            expires 1h;
            add_header CDN-Cache-Control "max-age=600";
            add_header Surrogate-Control "max-age=600";
        }}
    }}
    server {{
        listen 127.0.0.1:{port1};
        server_name behind-proxy;
        root {prefix}/www;
        csrf on;
        csrf_mode both;
        csrf_origin https://app.example;
        location / {{ }}
    }}
"""


class InjectTest(T.ProxyCase):
    HTTP = HTTP
    PORTS = 2

    @classmethod
    def prepare(cls, ngx):
        cls.port = ngx.port
        cls.html = page(cls.port)
        ngx.write("www/index.html", cls.html)
        ngx.write("www/plain.txt", cls.html)

    @classmethod
    def upstream(cls, c, head, body):
        path = head.split(b" ", 2)[1].decode()
        if path.startswith("/up/split/"):
            k = int(path.rsplit("/", 1)[1])
            T.send_chunked(c, [cls.html[:k], cls.html[k:]], delay=0.01)
        elif path.startswith("/up/pieces/"):
            n = int(path.rsplit("/", 1)[1])
            T.send_chunked(c, [cls.html[i:i + n] for i in range(0, len(cls.html), n)], delay=0.001)
        elif path == "/up/slow":
            # more than nginx's first proxy buffer holds (a partly filled
            # one waits for more; a full one goes on at once), a pause,
            # the rest
            first = cls.html * 4
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n"
                      b"Connection: close\r\n\r\n" % (len(first) + len(cls.html)) + first)
            time.sleep(1.5)
            c.sendall(cls.html)
        elif path == "/up/gzip":
            T.send_whole(c, gzip.compress(cls.html), "text/html", extra=b"Content-Encoding: gzip\r\n")
        elif path == "/up/cached":
            T.send_whole(c, cls.html, "text/html; charset=utf-8",
                         extra=b"Cache-Control: public, max-age=600\r\nETag: \"abc\"\r\n")
        elif path.startswith("/up/cache/"):
            lines = CACHES[int(path.rsplit("/", 1)[1])][0]
            T.send_whole(c, cls.html, "text/html", extra=b"".join(l + b"\r\n" for l in lines))
        elif path == "/up/tokenless":
            T.send_whole(c, b"<!doctype html><p>no form, no head</p>", "text/html; charset=utf-8",
                         extra=b"Cache-Control: public, max-age=600\r\nETag: \"v1\"\r\n")
        elif path == "/up/cache-plain":
            T.send_whole(c, cls.html, "text/plain", extra=b"".join(l + b"\r\n" for l in CACHES[0][0] + TARGETED))
        elif path == "/up/head":
            # a HEAD answered as HTTP says: the GET's headers, no body
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n"
                      b"Cache-Control: public, max-age=600\r\nConnection: close\r\n\r\n" % len(cls.html)
                      + (b"" if head.startswith(b"HEAD ") else cls.html))
        elif path == "/up/login":
            T.send_whole(c, cls.html, "text/html", extra=b"Set-Cookie: sid=fresh-session; Path=/; HttpOnly\r\n")
        elif path.startswith("/up/setcookie/"):
            extra = SET_COOKIES[int(path.rsplit("/", 1)[1])][0]
            T.send_whole(c, cls.html, "text/html", extra=b"".join(b"Set-Cookie: " + v + b"\r\n" for v in extra))
        elif path == "/up/redirect":
            c.sendall(b"HTTP/1.1 302 Found\r\nLocation: /\r\nContent-Type: text/html\r\nContent-Length: 5\r\n"
                      b"Connection: close\r\n\r\n<a/>\n")
        else:
            T.send_whole(c, b"len=%d" % len(body), "text/plain")

    def get(self, path, headers=None, port=None):
        r = T.request(port or self.port, "GET", path, headers or [])
        self.assertIsNotNone(r)
        self.assertEqual(r.status, 200)
        return r

    def check_page(self, body, port=None):
        """Injection exactly where expected; the rest byte for byte."""
        port = port or self.port
        html = page(port)
        # assertTrue, not assertEqual: a failure must not print the tokens
        self.assertTrue(T.strip_injected(body) == html, "output minus injected elements differs from the input")
        hidden, meta = T.count_injected(body)
        self.assertEqual(meta, 1)
        self.assertTrue(b"<HEAD><meta name=\"csrf-param\"" in body, "meta not right after <head>")
        expected = 0
        for marker, tag, inject in FORMS:
            tag = tag.format(port=port).encode()
            i = body.index(tag) + len(tag)
            got = T.HIDDEN.match(body, i) is not None
            with self.subTest(marker):
                self.assertEqual(got, inject)
            expected += inject
        self.assertEqual(hidden, expected)

    def test_one_buffer(self):
        r = self.get("/")
        self.check_page(r.body)
        self.assertIsNone(r.header("content-length"))
        self.assertIn("Cookie", r.all("vary"))
        self.assertEqual(r.header("cache-control"), "private")
        self.assertIsNone(r.header("last-modified"))
        self.assertIsNone(r.header("etag"))
        self.assertIsNotNone(T.secret_cookie(r))
        set_cookie = [v for v in r.all("set-cookie") if v.startswith("csrf_secret=")][0]
        for attr in ("Path=/", "HttpOnly", "SameSite=Lax"):
            self.assertIn(attr, set_cookie)

    def test_cookie_set_only_when_missing(self):
        r = self.get("/")
        cookie = T.secret_cookie(r)
        r2 = self.get("/", [("Cookie", cookie)])
        self.assertIsNone(T.secret_cookie(r2), "a valid secret cookie was replaced")
        r3 = self.get("/", [("Cookie", "csrf_secret=forged-by-a-sibling")])
        self.assertIsNotNone(T.secret_cookie(r3), "an invalid secret cookie was kept")
        # masked tokens: two renders differ, both verify
        t2 = T.META_TOKEN.search(r2.body).group(1)
        t1 = T.META_TOKEN.search(self.get("/", [("Cookie", cookie)]).body).group(1)
        self.assertNotEqual(t1, t2)

    def test_small_file_buffers(self):
        # output_buffers 1 7: the file reaches the filter 7 bytes at a time
        r = self.get("/small-buffers/index.html")
        self.check_page(r.body)
        self.assertEqual(normalize(r.body), normalize(self.get("/").body))

    def test_upstream_pieces(self):
        whole = normalize(self.get("/").body)
        for n in (1, 2, 3, 5, 8, 64, 4096):
            with self.subTest(piece=n):
                r = self.get("/up/pieces/%d" % n)
                self.check_page(r.body)
                self.assertEqual(normalize(r.body), whole)

    def test_buffered_proxy(self):
        """proxy_buffering on: a response read in full is kept until its
        last buf (one write with the final chunk); the output is the same,
        whether the upstream sent a length or chunks, in one piece or many."""
        whole = normalize(self.get("/").body)
        for path in ["/buf/cached"] + ["/buf/pieces/%d" % n for n in (1, 5, 64, 4096)] + \
                ["/buf/split/%d" % k for k in (1, 200, 1000)]:
            with self.subTest(path):
                r = self.get(path)
                self.check_page(r.body)
                self.assertEqual(normalize(r.body), whole)

    def test_buffered_proxy_streams(self):
        """What a slow upstream has sent goes out (with its tokens) before
        the upstream is done: nothing is kept back while more may follow."""
        s = socket.create_connection(("127.0.0.1", self.port), 10)
        start = time.monotonic()
        s.sendall(b"GET /buf/slow HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n" % self.port)
        got = b""
        first = None
        while True:
            d = s.recv(65536)
            if not d:
                break
            got += d
            if first is None and T.HIDDEN.search(got):
                first = time.monotonic() - start
        s.close()
        total = time.monotonic() - start
        self.assertIsNotNone(first, "no hidden input in the response")
        self.assertGreater(total, 1.4)
        self.assertLess(first, 1.0, "the first part waited for the rest of the response")
        self.assertEqual(T.count_injected(got)[0], 5 * sum(1 for f in FORMS if f[2]))
        self.assertTrue(got.endswith(b"0\r\n\r\n"), "the chunked response did not end")

    def test_split_at_every_byte(self):
        whole = normalize(self.get("/").body)
        for k in range(0, len(self.html) + 1):
            r = self.get("/up/split/%d" % k)
            if normalize(r.body) != whole:
                self.fail("output differs when the response is split at byte %d" % k)

    def test_compressed_untouched(self):
        r = self.get("/up/gzip")
        self.assertTrue(r.body == gzip.compress(self.html), "the compressed response was changed")
        self.assertIsNone(T.secret_cookie(r))
        self.assertNotIn("Cookie", r.all("vary"))

    def test_not_html_untouched(self):
        r = self.get("/plain.txt")
        self.assertTrue(r.body == self.html, "the response was changed")
        self.assertEqual(r.header("content-length"), str(len(self.html)))

    def test_locations_without_injection(self):
        for path in ("/noinject/index.html", "/originmode/index.html", "/off/index.html"):
            with self.subTest(path):
                r = self.get(path)
                self.assertTrue(r.body == self.html, "the response was changed")
                self.assertIsNone(T.secret_cookie(r))

    def test_redirect_untouched(self):
        r = T.request(self.port, "GET", "/up/redirect")
        self.assertEqual(r.status, 302)
        self.assertEqual(r.body, b"<a/>\n")

    def test_cache_control_replaced(self):
        r = self.get("/up/cached")
        self.assertEqual(r.all("cache-control"), ["private"])
        self.assertIsNone(r.header("etag"))

    def test_cache_headers_of_a_page_with_a_token(self):
        for i, (given, want, expires) in enumerate(CACHES):
            with self.subTest(given=given):
                r = self.get("/up/cache/%d" % i)
                self.assertEqual(T.count_injected(r.body), (sum(1 for f in FORMS if f[2]), 1))
                self.assertEqual(r.all("cache-control"), want)
                self.assertEqual(r.all("expires"), expires)
                for line in TARGETED:
                    name = line.split(b":")[0].decode().lower()
                    self.assertEqual(r.all(name), [], "a targeted cache field stayed on a page with a token")
        # nginx's own expires and add_header come before the module: they
        # are judged too
        r = self.get("/expires/index.html")
        self.assertEqual(T.count_injected(r.body), (sum(1 for f in FORMS if f[2]), 1))
        self.assertEqual(r.all("cache-control"), ["private"])
        self.assertEqual(r.all("expires"), [])
        self.assertEqual(r.all("cdn-cache-control"), [])
        self.assertEqual(r.all("surrogate-control"), [])
        r = self.get("/expires/plain.txt")
        self.assertEqual(r.all("cache-control"), ["max-age=3600"])
        self.assertEqual(len(r.all("expires")), 1)
        self.assertEqual(r.all("cdn-cache-control"), ["max-age=600"])
        # a response without a token keeps them all
        r = self.get("/up/cache-plain")
        self.assertEqual(r.all("cache-control"), ['public, max-age=600, private="Set-Cookie"'])
        self.assertEqual(r.all("cdn-cache-control"), ["max-age=600"])
        self.assertEqual(r.all("surrogate-control"), ["max-age=600"])

    def test_page_without_a_token_is_private_too(self):
        """The headers leave before the body is read: an HTML page that
        ends up without a token (no form, no <head>) is made private all
        the same, as the README says."""
        r = self.get("/up/tokenless")
        self.assertEqual(T.count_injected(r.body), (0, 0))
        self.assertEqual(r.body, b"<!doctype html><p>no form, no head</p>")
        self.assertEqual(r.all("cache-control"), ["private"])
        self.assertEqual(r.all("vary"), ["Cookie"])
        self.assertIsNone(r.header("etag"))
        self.assertIsNotNone(T.secret_cookie(r))

    def test_held_form_bytes_come_out(self):
        """The module holds a same-origin POST form's bytes until its end
        tag: a page that ends inside such a form, and a form longer than
        the hold, come out byte for byte without a token there, in one
        buffer and in 7-byte ones, and the reason is logged."""
        pages = [
            ("open.html", b"<p>before</p><form method=post action=/x><input name=a><p>the page ends here",
             "still open when the page ended"),
            ("long.html", b"<form method=post action=/y>" + b"<p>x</p>" * 5000 + b"</form><p>after</p>",
             "longer than the injector holds back"),
        ]
        for name, body, why in pages:
            self.ngx.write("www/" + name, body)
            for path in ("/" + name, "/small-buffers/" + name):
                with self.subTest(path):
                    r = self.get(path)
                    self.assertEqual(T.strip_injected(r.body), body)
                    self.assertEqual(T.count_injected(r.body)[0], 0)
            time.sleep(0.2)
            self.assertIn(why, self.ngx.error_log())

    def test_character_references_in_action(self):
        """The injector reads an action as the browser decodes it (Twig's
        e('html_attr'), phpMyAdmin's Settings forms): a same-origin one
        written with character references gets its token, one that
        decodes to another origin does not."""
        forms = [
            (b'<form method="post" action="index.php&#x3F;route&#x3D;&#x2F;preferences&#x2F;features">', True),
            (b'<form method="p&#111;st" action="&#x2F;echo">', True),
            (b'<form method="post" action="https&#x3A;&#x2F;&#x2F;evil.example&#x2F;x">', False),
            (b'<form method="post" action="&#x2F;&#x2F;evil.example/x">', False),
        ]
        self.ngx.write("www/charref.html", b"".join(f + b"<input name=a></form>\n" for f, _ in forms))
        r = self.get("/charref.html")
        for tag, inject in forms:
            with self.subTest(tag):
                i = r.body.index(tag) + len(tag)
                self.assertEqual(T.HIDDEN.match(r.body, i) is not None, inject)

    def head(self, path, port=None):
        """A HEAD request: the response's head, and what came after it
        (nothing, when nginx sent no body)."""
        s = socket.create_connection(("127.0.0.1", port or self.port), 10)
        try:
            s.sendall(b"HEAD %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n"
                      % (path.encode(), port or self.port))
            r = T.recv_response(s, head_only=True)
            rest = T.recv_all(s)
        finally:
            s.close()
        return r, rest

    def test_head_gets_no_cookie(self):
        """A HEAD response has no body, hence no token: no secret cookie,
        and its headers as a GET without the module would have them."""
        for path, length in (("/", len(self.html)), ("/index.html", len(self.html)), ("/up/head", len(self.html)),
                             ("/buf/head", len(self.html))):
            with self.subTest(path):
                r, rest = self.head(path)
                self.assertEqual(r.status, 200)
                # assertTrue: a failure must not print the cookie's value
                self.assertTrue(T.secret_cookie(r) is None, "a HEAD response set the secret cookie")
                self.assertNotIn("Cookie", r.all("vary"))
                self.assertEqual(r.header("content-length"), str(length))
                self.assertEqual(rest, b"", "a HEAD response had a body")
        r, _ = self.head("/up/head")
        self.assertEqual(r.all("cache-control"), ["public, max-age=600"])
        # the same pages by GET still get their token and cookie
        self.assertIsNotNone(T.secret_cookie(self.get("/up/head")))

    def test_configured_origin(self):
        # behind another proxy: forms posting to https://app.example are ours,
        # the loopback address is not; the secret cookie is a __Host- cookie
        port = self.ngx.ports[1]
        body = page(port).replace(b"http://127.0.0.1:%d/echo" % port, b"https://app.example/echo")
        self.ngx.write("www/proxied.html", body)
        r = self.get("/proxied.html", port=port)
        tag = b'<form method="POST" action="https://app.example/echo" id="f-abs-self">'
        i = r.body.index(tag) + len(tag)
        self.assertIsNotNone(T.HIDDEN.match(r.body, i))
        sc = [v for v in r.all("set-cookie") if "csrf_secret=" in v][0]
        self.assertTrue(sc.startswith("__Host-csrf_secret="))
        self.assertIn("Secure", sc)

    def test_injected_token_works(self):
        r = self.get("/", [("Cookie", "sid=alice")])
        cookie = T.secret_cookie(r) + "; sid=alice"
        m = re.search(rb'<input type="hidden" name="([A-Za-z0-9_-]+)" value="([A-Za-z0-9_-]+)">', r.body)
        form = b"amount=1&" + m.group(1) + b"=" + m.group(2)
        rows = [
            ("same session", cookie, 200),
            ("other session", cookie.replace("sid=alice", "sid=mallory"), 403),
            ("no session", T.secret_cookie(r), 403),
        ]
        for name, ck, status in rows:
            with self.subTest(name):
                p = T.request(self.port, "POST", "/echo", [("Origin", "http://127.0.0.1:%d" % self.port),
                                                          ("Cookie", ck),
                                                          ("Content-Type", "application/x-www-form-urlencoded")], form)
                self.assertEqual(p.status, status)

    def test_login_response_binds_new_session(self):
        # the response sets the session cookie: its tokens are for that session
        r = self.get("/up/login", [("Cookie", "sid=before")])
        m = re.search(rb'<input type="hidden" name="([A-Za-z0-9_-]+)" value="([A-Za-z0-9_-]+)">', r.body)
        form = m.group(1) + b"=" + m.group(2)
        ck = T.secret_cookie(r) + "; sid=fresh-session"
        p = T.request(self.port, "POST", "/echo", [("Origin", "http://127.0.0.1:%d" % self.port), ("Cookie", ck),
                                                   ("Content-Type", "application/x-www-form-urlencoded")], form)
        self.assertEqual(p.status, 200)

    def test_session_from_set_cookie(self):
        for i, (headers, sid) in enumerate(SET_COOKIES):
            with self.subTest(headers=headers):
                r = self.get("/up/setcookie/%d" % i, [("Cookie", "sid=req")])
                m = re.search(rb'<input type="hidden" name="([A-Za-z0-9_-]+)" value="([A-Za-z0-9_-]+)">', r.body)
                form = m.group(1) + b"=" + m.group(2)
                for cookie_sid, status in ((sid, 200), (sid + "-other", 403)):
                    ck = T.secret_cookie(r) + ("; sid=" + cookie_sid if cookie_sid else "")
                    p = T.request(self.port, "POST", "/echo", [("Origin", "http://127.0.0.1:%d" % self.port),
                                                               ("Cookie", ck),
                                                               ("Content-Type", "application/x-www-form-urlencoded")],
                                  form)
                    self.assertEqual(p.status, status, "session %r" % cookie_sid)

    def test_no_crash(self):
        time.sleep(0.2)
        self.assertEqual(self.ngx.crashed(), [])


if __name__ == "__main__":
    unittest.main()
