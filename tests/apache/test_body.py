# SPDX-License-Identifier: BSD-2-Clause
"""apache.body: a body the module read to find the token reaches every
handler exactly as the client sent it: mod_php (prefork), php-fpm
(proxy_fcgi), a CGI program (mod_cgid) and an upstream behind
mod_proxy_http, with Content-Length and chunked over HTTP/1.1, and with
and without Content-Length over HTTP/2 (mod_http2, h2c; event MPM). A body
over CSRFBodyMax in report-only goes on whole: the part the module read,
then the rest."""

import base64
import os
import random
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aptest as A  # noqa: E402
import backends as B  # noqa: E402

T = A.T

COMMON = """
ScriptSock {prefix}/run/cgid.sock
Alias /big {prefix}/htdocs
ProxyPass /proxy/ http://127.0.0.1:{upstream}/
ProxyPass /big/proxy/ http://127.0.0.1:{upstream}/
CSRF On
<Directory {prefix}/htdocs/fpm>
    <FilesMatch "\\.php$">
        SetHandler "proxy:unix:{prefix}/run/fpm.sock|fcgi://localhost"
    </FilesMatch>
</Directory>
<Directory {prefix}/htdocs/cgi>
    Options +ExecCGI
    AddHandler cgi-script .cgi
</Directory>
<Location /big>
    CSRFBodyMax 64k
    CSRFAction log
</Location>
"""
PHP = """
<Directory {prefix}/htdocs/fc>
    RewriteEngine On
    RewriteRule ^ /php/echo.php [L]
</Directory>
<Directory {prefix}/htdocs/php>
    <FilesMatch "\\.php$">
        SetHandler application/x-httpd-php
    </FilesMatch>
</Directory>
"""
H2 = "Protocols h2c http/1.1\n"
# php-fpm behind proxy_fcgi gets no body without Content-Length (no
# CONTENT_LENGTH reaches PHP), with or without the module: Apache's
# limitation, so those rows send Content-Length only.
CHUNKED = {"php": (False, True), "some": (False, True), "fpm": (False,), "cgi": (False, True), "proxy": (False, True)}


def payload(n, seed):
    rnd = random.Random(seed)
    return base64.urlsafe_b64encode(rnd.randbytes(n * 3 // 4)).decode() + "%00%FF%2B+"


def curl(port, path, body, chunked=False, h2=False, headers=()):
    args = ["curl", "-sS", "--max-time", "20", "-o", "-", "-w", "\n%{http_code} %{http_version}",
            "--http2-prior-knowledge" if h2 else "--http1.1", "-H", "Expect:"]
    args += ["-X", "POST", "-T", "-"] if chunked else ["--data-binary", "@-"]
    for k, v in headers:
        args += ["-H", "%s: %s" % (k, v)]
    args.append("http://127.0.0.1:%d%s" % (port, path))
    out = subprocess.run(args, input=body, capture_output=True, timeout=30).stdout
    text, _, status = out.rpartition(b"\n")
    code, version = status.decode().split()
    return int(code), version, text


class Body(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.up = B.EchoUpstream()
        cls.pre = A.Apache(COMMON + PHP, mpm="prefork", upstream_port=cls.up.port,
                           modules=("php", "alias", "rewrite", "proxy", "proxy_http", "proxy_fcgi", "cgid"))
        cls.ev = A.Apache(COMMON + H2, mpm="event", upstream_port=cls.up.port,
                          modules=("http2", "alias", "proxy", "proxy_http", "proxy_fcgi", "cgid"))
        cls.fpms = []
        try:
            for ap, php in ((cls.pre, True), (cls.ev, False)):
                B.install(ap, php)
                cls.fpms.append(B.PhpFpm(ap.prefix).start())
                ap.start()
        except Exception:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        for ap in (cls.pre, cls.ev):
            ap.cleanup()
        for f in cls.fpms:
            f.stop()
        cls.up.close()

    def post(self, ap, path, n, chunked, h2, token=True):
        cookie, field, tok = T.session_tokens(ap.port, "/form.html")
        self.assertTrue(cookie and field and tok, "the form page has no token")
        data = payload(n, path + str(chunked) + str(h2)).encode()
        body = ("%s=%s&data=" % (field, tok)).encode() + data if token else b"data=" + data
        headers = [("Cookie", cookie), ("Content-Type", "application/x-www-form-urlencoded")]
        code, version, text = curl(ap.port, path, body, chunked, h2, headers)
        return body, code, version, text

    def check_rows(self, ap, paths, h2):
        for path in paths:
            for chunked in CHUNKED[path.rsplit("/", 2)[-2]]:
                with self.subTest(path=path, chunked=chunked, h2=h2):
                    body, code, version, text = self.post(ap, path, 300000, chunked, h2)
                    self.assertEqual(code, 200, text[:300])
                    self.assertEqual(version, "2" if h2 else "1.1")
                    self.assertEqual(text.decode(), B.digest(body) + " method=POST")

    def test_http1(self):
        self.check_rows(self.pre, ["/php/echo.php", "/fpm/echo.php", "/cgi/echo.cgi", "/proxy/echo"], False)

    def test_front_controller(self):
        """A per-directory rewrite to the application (the front controller
        of most PHP applications) is an internal redirect after the module
        read the body: the application still gets all of it."""
        self.pre.write("htdocs/fc/index.html", "x")
        self.check_rows(self.pre, ["/fc/some/route"], False)

    def test_http2(self):
        self.check_rows(self.ev, ["/fpm/echo.php", "/cgi/echo.cgi", "/proxy/echo"], True)

    def test_over_the_limit_report_only(self):
        """1 MB without a token over CSRFBodyMax 64k, report-only: the
        module read 64k and a little, the handler gets all of it."""
        rows = [(self.pre, p, False) for p in ("/big/php/echo.php", "/big/fpm/echo.php", "/big/cgi/echo.cgi",
                                                "/big/proxy/echo")]
        rows += [(self.ev, p, True) for p in ("/big/fpm/echo.php", "/big/proxy/echo")]
        for ap, path, h2 in rows:
            for chunked in CHUNKED[path.rsplit("/", 2)[-2]]:
                with self.subTest(path=path, chunked=chunked, h2=h2):
                    body, code, _, text = self.post(ap, path, 1 << 20, chunked, h2, token=False)
                    self.assertEqual(code, 200, text[:300])
                    self.assertEqual(text.decode(), B.digest(body) + " method=POST")
        self.assertIn('would reject POST "/big/php/echo.php": body_too_large (CSRFAction log)', self.pre.error_log())

    def test_rejected_body_never_reaches_handler(self):
        for path in ("/php/echo.php", "/fpm/echo.php", "/cgi/echo.cgi", "/proxy/echo"):
            with self.subTest(path=path):
                before = len(self.up.requests)
                body, code, _, text = self.post(self.pre, path, 1000, False, False, token=False)
                self.assertEqual(code, 403)
                self.assertIn(b"token_missing", text)
                self.assertEqual(len(self.up.requests), before)

    def test_no_crash(self):
        for ap in (self.pre, self.ev):
            self.assertFalse(ap.crashed())


if __name__ == "__main__":
    unittest.main()
