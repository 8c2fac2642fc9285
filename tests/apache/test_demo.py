# SPDX-License-Identifier: BSD-2-Clause
"""apache.demo: the demo, unprotected (csrf-demo --unprotected), behind
mod_proxy_http with mod_csrf_protect as apache/README.md configures it:
the user's own flows pass with the tokens the module puts into its forms
(log in, transfer), the forged ones are refused before the demo sees them
(the balance stays), over HTTP/1.1 and HTTP/2 (h2c)."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aptest as A  # noqa: E402
import test_body as TB  # noqa: E402

T = A.T
DEMO = os.environ.get("CSRF_DEMO", "")

CONF = """
Protocols h2c http/1.1
CSRF On
CSRFOrigin http://127.0.0.1:{port}
ProxyPass / http://127.0.0.1:{upstream}/
ProxyPassReverse / http://127.0.0.1:{upstream}/
<Location /vote>
    CSRFUnsafeGet On
</Location>
"""
FORM = "application/x-www-form-urlencoded"


def cookies_of(r, jar):
    for v in r.all("set-cookie"):
        name, _, value = v.split(";", 1)[0].partition("=")
        jar[name] = value
    return "; ".join("%s=%s" % kv for kv in jar.items())


class DemoProcess:
    """csrf-demo --unprotected on a free port, as the class's upstream."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="csrf-ap-demo-")
        self.port = T.free_port()
        self.proc = subprocess.Popen([DEMO, "--unprotected", "--listen", "127.0.0.1:%d" % self.port,
                                      "--attacker-listen", "127.0.0.1:%d" % T.free_port(),
                                      "--db", os.path.join(self.dir, "demo.db")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        if not T.wait_port(self.port):
            self.close()
            raise RuntimeError("csrf-demo did not start")

    def close(self):
        self.proc.terminate()
        self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


class Demo(A.ApacheCase):
    CONF = CONF
    MODULES = ("http2", "proxy", "proxy_http")

    @classmethod
    def make_upstream(cls):
        if not DEMO:
            raise unittest.SkipTest("CSRF_DEMO not set")
        return DemoProcess()

    def get(self, path, jar):
        r = T.request(self.ap.port, "GET", path, [("Cookie", cookies_of_jar(jar))] if jar else [])
        cookies_of(r, jar)
        return r

    def post(self, path, jar, fields, extra=()):
        body = "&".join("%s=%s" % kv for kv in fields).encode()
        r = T.request(self.ap.port, "POST", path, [("Cookie", cookies_of_jar(jar)), ("Content-Type", FORM)] + list(extra),
                      body)
        cookies_of(r, jar)
        return r

    def balance(self, jar):
        r = self.get("/account", jar)
        m = re.search(rb'id="balance">(\d+)<', r.body)
        self.assertTrue(m, r.body[:300])
        return int(m.group(1))

    def token(self, body):
        p, t = T.META_PARAM.search(body), T.META_TOKEN.search(body)
        self.assertTrue(p and t, "no token in the page")
        return p.group(1).decode(), t.group(1).decode()

    def test_flows(self):
        jar = {}
        page = self.get("/login", jar)
        self.assertEqual(page.status, 200)
        self.assertEqual(T.count_injected(page.body)[0] >= 1, True)
        field, tok = self.token(page.body)
        # no Origin, no fetch metadata: the token in the body decides
        r = self.post("/login", jar, [("user", "alice"), ("password", "wonderland"), (field, tok)])
        self.assertIn(r.status, (302, 303), r.body[:300])
        start = self.balance(jar)
        field, tok = self.token(self.get("/account", jar).body)
        r = self.post("/transfer", jar, [("to", "bob"), ("amount", "1"), (field, tok)])
        self.assertIn(r.status, (302, 303), r.body[:300])
        self.assertEqual(self.balance(jar), start - 1)
        # a script of the site's own page: same-origin evidence, no token
        r = self.post("/transfer", jar, [("to", "bob"), ("amount", "1")], [("Sec-Fetch-Site", "same-origin")])
        self.assertIn(r.status, (302, 303))
        self.assertEqual(self.balance(jar), start - 2)
        # forged: cross-site, or no evidence and no token
        for extra in ([("Sec-Fetch-Site", "cross-site"), ("Origin", "http://127.0.0.1:1")], []):
            r = self.post("/transfer", jar, [("to", "mallory"), ("amount", "100")], extra)
            self.assertEqual(r.status, 403)
        r = T.request(self.ap.port, "GET", "/vote?story=1&type=y",
                      [("Cookie", cookies_of_jar(jar)), ("Sec-Fetch-Site", "cross-site")])
        self.assertEqual(r.status, 403)
        self.assertEqual(self.balance(jar), start - 2)

    def test_http2(self):
        jar = {}
        page = self.get("/login", jar)
        field, tok = self.token(page.body)
        body = ("user=alice&password=wonderland&%s=%s" % (field, tok)).encode()
        headers = [("Cookie", cookies_of_jar(jar)), ("Content-Type", FORM)]
        for chunked in (False, True):
            code, version, _ = TB.curl(self.ap.port, "/login", body, chunked, True, headers)
            self.assertIn(code, (302, 303))
            self.assertEqual(version, "2")
        code, _, text = TB.curl(self.ap.port, "/login", b"user=mallory&password=mallory-pw", False, True,
                                headers + [("Sec-Fetch-Site", "cross-site")])
        self.assertEqual(code, 403)
        self.assertFalse(self.ap.crashed())


def cookies_of_jar(jar):
    return "; ".join("%s=%s" % kv for kv in jar.items())


if __name__ == "__main__":
    unittest.main()
