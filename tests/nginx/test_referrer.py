# SPDX-License-Identifier: BSD-2-Clause
"""csrf_referrer_same_origin: an application's referrer policy of
no-referrer (phpMyAdmin's) makes browsers send "Origin: null" with its own
form POSTs, and on plain HTTP under a name nothing else then speaks for
forms its scripts build. With the directive on, the module raises it to
same-origin: every Referrer-Policy line of a response that together say
no-referrer, and a <meta name="referrer"> after every meta that says it
(csrf_inject_options). Off (the default), and where csrf is off, every
byte and header passes as the upstream sent it. The library reads the
policies; these are the module's ends of it."""

import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ngxtest as T  # noqa: E402

NRM = b"<meta name=referrer content=no-referrer>"
RM = b'<meta name="referrer" content="same-origin">'


def page(head=b"", body=b""):
    return (b"<!DOCTYPE html>\n<html><head>" + head + b"<title>t</title></head>\n<body>\n" + body +
            b"<form method=post action=/x><input name=a><button>go</button></form>\n</body></html>\n")


# name: (Referrer-Policy lines the upstream sends, the lines wanted with
# the directive on)
HEADERS = {
    "none": ([], []),
    "no-referrer": (["no-referrer"], ["same-origin"]),
    "upper": (["No-Referrer"], ["same-origin"]),
    "list-last": (["origin, no-referrer"], ["same-origin"]),
    "list-other": (["no-referrer, strict-origin-when-cross-origin"], ["no-referrer, strict-origin-when-cross-origin"]),
    "same-origin": (["same-origin"], ["same-origin"]),
    "strict-origin": (["strict-origin"], ["strict-origin"]),
    "downgrade": (["no-referrer-when-downgrade"], ["no-referrer-when-downgrade"]),
    "origin": (["origin"], ["origin"]),
    "unsafe": (["unsafe-url"], ["unsafe-url"]),
    "two-lines": (["origin", "no-referrer"], ["same-origin", "same-origin"]),
    "two-lines-other": (["no-referrer", "origin"], ["no-referrer", "origin"]),
    "junk-after": (["no-referrer", "bogus"], ["same-origin", "same-origin"]),
    "never": (["never"], ["never"]),
    "empty": ([""], [""]),
}

# name: (page, the page wanted with the directive on, minus the module's
# hidden field and csrf meta tags)
BODIES = {
    "meta": (page(NRM), page(NRM + RM)),
    "meta-never": (page(b'<meta name="Referrer" content="never">'),
                   page(b'<meta name="Referrer" content="never">' + RM)),
    "meta-other": (page(b"<meta name=referrer content=origin>"), page(b"<meta name=referrer content=origin>")),
    "meta-body": (page(b"", b"<p>" + NRM), page(b"", b"<p>" + NRM + RM)),
    "meta-two": (page(NRM + NRM), page(NRM + RM + NRM + RM)),
    "meta-comment": (page(b"<!-- " + NRM + b" -->"), page(b"<!-- " + NRM + b" -->")),
    "meta-in-form": (page(b"", b"<form method=post>" + NRM + b"<input name=b></form>"),
                     page(b"", b"<form method=post>" + NRM + RM + b"<input name=b></form>")),
}

HTTP = """
    server {{
        listen 127.0.0.1:{port};
        root {prefix}/www;
        csrf on;
        location /on/ {{ csrf_referrer_same_origin on; proxy_pass http://127.0.0.1:{upstream}; }}
        location /off/ {{ proxy_pass http://127.0.0.1:{upstream}; }}
        location /explicit-off/ {{ csrf_referrer_same_origin off; proxy_pass http://127.0.0.1:{upstream}; }}
        location /csrf-off/ {{ csrf off; csrf_referrer_same_origin on; proxy_pass http://127.0.0.1:{upstream}; }}
        location /origin-mode/ {{ csrf_mode origin; csrf_referrer_same_origin on;
                                  proxy_pass http://127.0.0.1:{upstream}; }}
        location /static/ {{ csrf_referrer_same_origin on; add_header Referrer-Policy no-referrer; }}
    }}
    server {{
        listen 127.0.0.1:{port1};
        csrf on;
        csrf_referrer_same_origin on;
        location / {{ proxy_pass http://127.0.0.1:{upstream}; }}
        location /inherit-off/ {{ csrf_referrer_same_origin off; proxy_pass http://127.0.0.1:{upstream}; }}
    }}
"""


class ReferrerTest(T.ProxyCase):
    HTTP = HTTP
    PORTS = 2

    @classmethod
    def prepare(cls, ngx):
        ngx.write("www/static/p.html", page(NRM))

    @classmethod
    def upstream(cls, c, head, body):
        path = head.split(b" ", 2)[1].decode().split("?")[0]
        parts = path.split("/")
        kind, name = parts[-2], parts[-1]
        if kind == "h":
            extra = b"".join(b"Referrer-Policy: " + v.encode() + b"\r\n" for v in HEADERS[name][0])
            T.send_whole(c, page(), "text/html; charset=utf-8", extra=extra)
        elif kind == "json":
            T.send_whole(c, b'{"a": 1}', "application/json", extra=b"Referrer-Policy: no-referrer\r\n")
        elif kind == "jp":
            T.send_whole(c, page(NRM), "text/html; charset=iso-2022-jp", extra=b"Referrer-Policy: no-referrer\r\n")
        elif kind == "b":
            data = BODIES[name][0]
            k = len(data) // 2
            T.send_chunked(c, [data[:k], data[k:]], "text/html; charset=utf-8", delay=0.02)

    def get(self, path, port=None, method="GET"):
        r = T.request(port or self.ngx.port, method, path)
        self.assertEqual(r.status, 200, path)
        return r

    def test_header_raised_when_on(self):
        for name, (sent, want) in HEADERS.items():
            with self.subTest(name):
                r = self.get("/on/h/" + name)
                self.assertEqual(r.all("referrer-policy"), want)
                self.assertEqual(T.count_injected(r.body), (1, 1))
                self.assertTrue(T.strip_injected(r.body) == page(), "the page changed")

    def test_header_untouched_when_off(self):
        for loc in ("/off/", "/explicit-off/", "/csrf-off/"):
            for name, (sent, _) in HEADERS.items():
                with self.subTest(loc + name):
                    r = self.get(loc + "h/" + name)
                    self.assertEqual(r.all("referrer-policy"), sent)
        # the server-level setting is inherited, and a location turns it off
        self.assertEqual(self.get("/h/no-referrer", self.ngx.ports[1]).all("referrer-policy"), ["same-origin"])
        self.assertEqual(self.get("/inherit-off/h/no-referrer", self.ngx.ports[1]).all("referrer-policy"),
                         ["no-referrer"])

    def test_header_of_any_response(self):
        # a HEAD, a JSON answer, a page the injector cannot read, a page
        # of a mode without tokens: the header is the browser's policy for
        # whatever the response becomes (a document, a worker)
        self.assertEqual(self.get("/on/h/no-referrer", method="HEAD").all("referrer-policy"), ["same-origin"])
        r = self.get("/on/json/x")
        self.assertEqual(r.all("referrer-policy"), ["same-origin"])
        self.assertEqual(r.body, b'{"a": 1}')
        r = self.get("/on/jp/x")
        self.assertEqual(r.all("referrer-policy"), ["same-origin"])
        self.assertTrue(r.body == page(NRM), "a page in ISO-2022-JP passes untouched")
        r = self.get("/origin-mode/b/meta")
        self.assertTrue(r.body == page(NRM), "mode origin injects nothing")
        self.assertEqual(self.get("/origin-mode/h/no-referrer").all("referrer-policy"), ["same-origin"])
        # add_header's line is raised too (nginx's headers filter runs first)
        r = self.get("/static/p.html")
        self.assertEqual(r.all("referrer-policy"), ["same-origin"])
        self.assertTrue(T.strip_injected(r.body) == page(NRM + RM))

    def test_meta_raised_when_on(self):
        for name, (sent, want) in BODIES.items():
            with self.subTest(name):
                r = self.get("/on/b/" + name)
                self.assertTrue(T.strip_injected(r.body) == want, "on: %r" % T.strip_injected(r.body))
                self.assertEqual(T.count_injected(r.body)[1], 1)
                for loc in ("/off/", "/csrf-off/"):
                    r = self.get(loc + "b/" + name)
                    self.assertTrue(T.strip_injected(r.body) == sent, "off: the page changed")
                    self.assertNotIn(RM, r.body)

    def test_rejection_and_log(self):
        # a rejected POST is answered by the module's page; the raise logs
        # nothing and fails nothing
        r = T.request(self.ngx.port, "POST", "/on/h/no-referrer", [("Origin", "http://evil.test")], b"a=1")
        self.assertEqual(r.status, 403)
        log = self.ngx.error_log()
        errors = [l for l in log.splitlines() if re.search(r"\[(error|crit|alert|emerg)\]", l)]
        self.assertEqual([l for l in errors if "csrf: rejected POST" not in l], [])
        self.assertEqual(self.ngx.crashed(), [])
        self.assertEqual([l for l in log.splitlines() if "[alert]" in l], [])


class ReferrerConfigTest(unittest.TestCase):
    def test_bad_values(self):
        for bad in ("csrf_referrer_same_origin yes;", "csrf_referrer_same_origin;",
                    "csrf_referrer_same_origin on off;"):
            with self.subTest(bad):
                ngx = T.Nginx("server {{ listen 127.0.0.1:{port}; csrf on; %s }}" % bad)
                try:
                    rc, out = ngx.test_config()
                    self.assertNotEqual(rc, 0, out)
                    self.assertIn("csrf_referrer_same_origin", out)
                finally:
                    ngx.cleanup()


if __name__ == "__main__":
    unittest.main()
