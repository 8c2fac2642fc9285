# SPDX-License-Identifier: BSD-2-Clause
"""csrf_form_action_csp: the browser-side backstop of the injector. Off
(the default): no header added. On: injected HTML responses carry
"form-action 'self' <trusted origins>; base-uri 'self'", merged into the
upstream's own Content-Security-Policy as the library writes it (two
policies in one value, both enforced); never on responses the module
does not rewrite (not HTML, a charset it does not read, compressed,
another status, csrf_inject off)."""

import gzip
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ngxtest as T  # noqa: E402

# A form with the token, then a button outside it that names it and sends
# it elsewhere: the one case the injector can only report, the CSP's to
# stop (a formaction inside the form costs the form its token).
PAGE = (b"<!DOCTYPE html><html><head><title>t</title></head><body>"
        b"<form id=f method=post action=/echo><input name=a></form>"
        b"<button form=f formaction=http://evil.example/>x</button></body></html>")
OURS = "form-action 'self' https://trusted.example:8443 http://other.example; base-uri 'self'"
OURS_PLAIN = "form-action 'self'; base-uri 'self'"

# upstream answers: path -> (Content-Type, extra header lines, body)
ANSWERS = {
    "page": ("text/html", b"", PAGE),
    "upcsp": ("text/html", b"Content-Security-Policy: default-src 'self'; form-action *\r\n", PAGE),
    "upcsp2": ("text/html", b"Content-Security-Policy: img-src 'none'\r\n"
               b"Content-Security-Policy-Report-Only: script-src 'none'\r\n", PAGE),
    "upcsp-blank": ("text/html", b"Content-Security-Policy:  \r\n", PAGE),
    "text": ("text/plain", b"", PAGE),
    "jis": ("text/html; charset=iso-2022-jp", b"", PAGE),
    "gzip": ("text/html", b"Content-Encoding: gzip\r\n", gzip.compress(PAGE)),
}

HTTP = """
    server {{
        listen 127.0.0.1:{port};
        csrf on;
        location /off/ {{ proxy_pass http://127.0.0.1:{upstream}/; }}
        location /on/ {{
            csrf_form_action_csp on;
            csrf_trusted_origin https://trusted.example:8443;
            csrf_trusted_origin http://other.example:80;
            proxy_pass http://127.0.0.1:{upstream}/;
            location /on/noinject/ {{ csrf_inject off; proxy_pass http://127.0.0.1:{upstream}/; }}
        }}
        location /plain/ {{ csrf_form_action_csp on; proxy_pass http://127.0.0.1:{upstream}/; }}
    }}
"""


class CspTest(T.ProxyCase):
    HTTP = HTTP

    @classmethod
    def upstream(cls, c, head, body):
        name = head.split(b" ", 2)[1].decode().rstrip("/").rsplit("/", 1)[1]
        ct, extra, data = ANSWERS[name]
        T.send_whole(c, data, ct, extra=extra)

    def get(self, path):
        r = T.request(self.ngx.port, "GET", path)
        self.assertEqual(r.status, 200)
        return r

    def test_off_by_default(self):
        r = self.get("/off/page")
        self.assertEqual(T.count_injected(r.body), (1, 1))
        self.assertEqual(r.all("content-security-policy"), [])
        self.assertEqual(self.get("/off/upcsp").all("content-security-policy"), ["default-src 'self'; form-action *"])

    def test_on(self):
        r = self.get("/on/page")
        self.assertEqual(T.count_injected(r.body), (1, 1))
        self.assertEqual(r.all("content-security-policy"), [OURS])
        self.assertEqual(self.get("/plain/page").all("content-security-policy"), [OURS_PLAIN])

    def test_merged_with_upstream(self):
        rows = [
            ("upcsp", ["default-src 'self'; form-action *, " + OURS], None),
            ("upcsp2", ["img-src 'none', " + OURS], "script-src 'none'"),
            ("upcsp-blank", [OURS], None),
        ]
        for name, csp, report_only in rows:
            with self.subTest(name):
                r = self.get("/on/" + name)
                self.assertEqual(T.count_injected(r.body), (1, 1))
                self.assertEqual(r.all("content-security-policy"), csp)
                self.assertEqual(r.header("content-security-policy-report-only"), report_only)

    def test_not_on_untouched_responses(self):
        for path in ("/on/text", "/on/jis", "/on/gzip", "/on/noinject/page"):
            with self.subTest(path):
                r = self.get(path)
                self.assertEqual(r.all("content-security-policy"), [])
                self.assertEqual(T.count_injected(r.body if path != "/on/gzip" else gzip.decompress(r.body)),
                                 (0, 0))

    def test_bad_values(self):
        for conf, word in (("csrf_form_action_csp maybe;", "invalid value"),
                           ("csrf_form_action_csp on; csrf_form_action_csp off;", "duplicate")):
            with self.subTest(conf):
                n = T.Nginx("server {{ listen 127.0.0.1:{port}; csrf on; %s }}" % conf)
                try:
                    rc, out = n.test_config()
                    self.assertNotEqual(rc, 0)
                    self.assertIn(word, out)
                finally:
                    n.cleanup()

    def test_no_crash(self):
        self.assertEqual(self.ngx.crashed(), [])


if __name__ == "__main__":
    unittest.main()
