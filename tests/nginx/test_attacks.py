# SPDX-License-Identifier: BSD-2-Clause
"""The attack pages of issue 13 (attack_pages.json) served by an upstream
through the stock nginx and the module, whole and in small pieces: no
token goes into a form the browser owns differently (the tree built by
html5lib with scripting on and off, as tests/html5lib's oracle builds it),
the page's own form keeps its token where the browser gives it to that
form, the rest of the page is byte for byte the upstream's, and a page
where the injector held a token back says so in one error-log line (the
library's words, never the request's query)."""

import json
import os
import re
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "html5lib"))
import ngxtest as T  # noqa: E402
import inject_diff as oracle  # noqa: E402

EVIL = "http://evil.example/steal"
EVIL_BASE = "http://evil.example/"

with open(os.path.join(HERE, "attack_pages.json")) as f:
    PAGES = {p["name"]: p for p in json.load(f)["pages"]}


def body_of(p):
    return p["body"].replace("{EVIL}", EVIL).replace("{EVIL_BASE}", EVIL_BASE).encode("latin-1")


HTTP = """
    server {{
        listen 127.0.0.1:{port};
        csrf on;
        location /attack/ {{ proxy_pass http://127.0.0.1:{upstream}; proxy_buffering off; }}
        location /pieces/ {{ proxy_pass http://127.0.0.1:{upstream}; proxy_buffering off; }}
        location /echo {{ proxy_pass http://127.0.0.1:{upstream}; }}
    }}
"""

STATUS_LINE = '"%s": not every form got a token: '


def owners(port, uri, out, status=0):
    """(forms posting elsewhere, forms of this origin) owning an injected
    field of the page nginx on port served at uri, for scripting on and
    off, by the html5lib oracle (status: the CSRF_INJECT_* bits it may
    take as reported)."""
    field = T.META_PARAM.search(out)
    token = T.META_TOKEN.search(out)
    if field is None:
        return [], 0
    oracle.FIELD = field.group(1).decode()
    oracle.TOKEN = token.group(1).decode()
    oracle.SELF = "http://127.0.0.1:%d" % port
    oracle.DOC_URL = oracle.SELF + uri
    bad, good = [], 0
    for scripting in (True, False):
        b, g = oracle.leaks(out.decode("latin-1"), scripting, status)
        bad += b
        good += g
    return bad, good


class AttackTest(T.ProxyCase):
    HTTP = HTTP

    @classmethod
    def upstream(cls, c, head, body):
        path = head.split(b" ", 2)[1].decode().split("?")[0]
        kind, name = path.split("/")[1:3]
        if kind == "echo":
            T.send_whole(c, b"len=%d" % len(body), "text/plain")
            return
        p = PAGES[name]
        data = body_of(p)
        ct = p.get("content_type", "text/html")
        if kind == "pieces":
            T.send_chunked(c, [data[i:i + 5] for i in range(0, len(data), 5)], ct, delay=0.002)
        else:
            T.send_whole(c, data, ct)

    def status_lines(self, uri):
        time.sleep(0.2)
        return [l for l in self.ngx.error_log().splitlines() if STATUS_LINE % uri.split("?")[0] in l]

    def owners(self, uri, out, status=0):
        return owners(self.ngx.port, uri, out, status)

    def check(self, kind, name):
        p = PAGES[name]
        data = body_of(p)
        uri = "/%s/%s" % (kind, name)
        r = T.request(self.ngx.port, "GET", uri)
        self.assertEqual(r.status, 200)
        self.assertTrue(T.strip_injected(r.body) == data, "output minus insertions differs from the page")
        hidden, meta = T.count_injected(r.body)
        if "untouched" in p:
            self.assertTrue(r.body == data and meta == 0, "a page the injector cannot read was changed")
            self.assertIsNone(T.secret_cookie(r))
            return
        self.assertEqual(meta, 1)
        # a form="" button after the form got its token: reported, and
        # logged (below), the only case the oracle accepts
        bad, good = self.owners(uri, r.body, oracle.LATE_OWNER if p.get("late_owner") else 0)
        self.assertEqual(bad, [], "a token in a form that posts to another origin")
        if p["real"]:
            self.assertEqual(hidden, 1)
            self.assertEqual(good, 2, "the page's own form lost its token (scripting on and off)")
        else:
            self.assertEqual(hidden, 0, "a token where the browser gives the form another owner")
        lines = self.status_lines(uri)
        self.assertEqual(len(lines), 1 if p["status"] else 0, "status log lines: %r" % lines)

    def test_pages_whole(self):
        for name in PAGES:
            with self.subTest(name):
                self.check("attack", name)

    def test_pages_in_pieces(self):
        for name in PAGES:
            with self.subTest(name):
                self.check("pieces", name)

    def test_status_words(self):
        """The log line carries the library's phrase for each reason, and
        nothing of the request's query (where a form may have put a token)."""
        rows = [
            ("formaction-button", "formaction"),
            ("formmethod-get-button", "sends it by GET"),
            ("noscript-get-button", "a button inside <noscript> in it has a formmethod or formaction"),
            ("outside-get-button-before", "a button outside it (form="),
            ("outside-get-button-after", "if it names that form, it sends the token there"),
            ("outside-formaction-button-after", "if it names that form, it sends the token there"),
            ("base-elsewhere", "<base>"),
            ("svg-form-nesting", "inside an open form"),
            ("noscript", "noscript"),
            ("esc-undeclared", "ESC byte"),
            ("review-table-a", "outside any <td>, <th> or <caption>"),
            ("table-row-form", "move the form into a cell"),
        ]
        for name, word in rows:
            with self.subTest(name):
                uri = "/attack/%s?q=SeCrEtQuErY" % name
                T.request(self.ngx.port, "GET", uri)
                lines = self.status_lines(uri)
                self.assertTrue(len(lines) >= 1)
                message = lines[-1].split("got a token: ", 1)[1].rsplit(", client: ", 1)[0]
                self.assertIn(word, message)
        log = self.ngx.error_log()
        self.assertNotIn("SeCrEtQuErY", log)
        self.assertIsNone(re.search(r'request: "GET /attack/', log), "nginx's request line in a module line")

    def test_no_crash(self):
        self.assertEqual(self.ngx.crashed(), [])
        self.assertEqual([l for l in self.ngx.error_log().splitlines() if "[alert]" in l], [])


if __name__ == "__main__":
    unittest.main()
