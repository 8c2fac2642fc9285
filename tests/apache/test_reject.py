# SPDX-License-Identifier: BSD-2-Clause
"""apache.reject: a rejected request never reaches the application,
whatever sends it on: ErrorDocument pointing at the application (mod_php
and a proxied upstream), mod_rewrite per-directory (internal redirect)
and server-wide ([PT]), a server-side include's subrequest. Each answer is
the module's own page with the library's headers; no cache may keep it,
whatever mod_headers adds."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aptest as A  # noqa: E402
import backends as B  # noqa: E402

T = A.T

CONF = """
ProxyPass /proxy/ http://127.0.0.1:{upstream}/
CSRF On
ErrorDocument 403 /php/app.php
ErrorDocument 413 /proxy/error
RewriteEngine On
RewriteRule ^/pt/(.*)$ /php/app.php [PT]
<Directory {prefix}/htdocs/php>
    <FilesMatch "\\.php$">
        SetHandler application/x-httpd-php
    </FilesMatch>
</Directory>
<Directory {prefix}/htdocs/rw>
    RewriteEngine On
    RewriteRule ^ /php/app.php [L]
</Directory>
<Directory {prefix}/htdocs/lenient>
    CSRFAction log
    RewriteEngine On
    RewriteRule ^ /php/app.php [L]
</Directory>
<Directory {prefix}/htdocs/ssi>
    Options +Includes
    AddOutputFilter INCLUDES .shtml
</Directory>
<Location /proxied>
    ErrorDocument 403 /proxy/error
    ProxyPass http://127.0.0.1:{upstream}/app
</Location>
<Location /small>
    CSRFBodyMax 1k
</Location>
<Location /cached>
    Header always set Cache-Control "public, max-age=600"
    Header always set Expires "Thu, 01 Jan 2099 00:00:00 GMT"
</Location>
"""

CROSS = [("Sec-Fetch-Site", "cross-site"), ("Origin", "https://evil.example"),
         ("Content-Type", "application/x-www-form-urlencoded")]


class Reject(A.ApacheCase):
    CONF = CONF
    MPM = "prefork"
    MODULES = ("php", "alias", "rewrite", "include", "headers", "proxy", "proxy_http")
    make_upstream = B.EchoUpstream

    @classmethod
    def prepare(cls, ap):
        B.install(ap)
        ap.write("htdocs/rw/index.html", "x")
        ap.write("htdocs/lenient/x", "x")
        ap.write("htdocs/ssi/page.shtml", '<p><!--#include virtual="/php/app.php" --></p>')
        ap.write("htdocs/cached/index.html", "x")
        ap.write("htdocs/small/index.html", "x")

    def hits(self):
        return self.ap.app_hits()

    def assert_module_page(self, r, reason, status=403):
        self.assertEqual(r.status, status)
        self.assertIn(reason.encode(), r.body)
        self.assertEqual(r.all("content-security-policy"), ["default-src 'none'; style-src 'unsafe-inline'; "
                                                             "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"])
        self.assertEqual(r.all("cache-control"), ["no-store"])
        self.assertEqual(r.all("expires"), [])
        self.assertNotIn(b"app", r.body.replace(b"application", b""))

    def test_app_works_when_allowed(self):
        r = T.request(self.ap.port, "POST", "/php/app.php", [("Sec-Fetch-Site", "same-origin")] + CROSS[2:], b"a=1")
        self.assertEqual((r.status, r.body), (200, b"app"))
        self.assertEqual(self.hits()[-1:], ["POST /php/app.php"])

    def test_never_reaches_the_application(self):
        rows = [("/php/app.php?x=1", "cross_site"),        # ErrorDocument 403 is the application itself
                ("/rw/index.html", "cross_site"),          # per-directory rewrite to the application
                ("/pt/anything", "cross_site"),            # server-wide rewrite [PT] to it
                ("/ssi/page.shtml", "cross_site"),         # an include's subrequest of it
                ("/proxied", "cross_site"),                # ErrorDocument to a proxied path
                ("/lenient/x", "cross_site")]              # report-only here, redirected where it is enforced
        before_up = len(self.up.requests)
        before = len(self.hits())
        for path, reason in rows:
            with self.subTest(path=path):
                r = T.request(self.ap.port, "POST", path, CROSS, b"a=1&b=2")
                self.assert_module_page(r, reason)
        self.assertEqual(self.hits()[before:], [])
        self.assertEqual(self.up.requests[before_up:], [])
        log = self.ap.access_log("POST /rw/index.html 403 cross_site")
        self.assertIn("POST /rw/index.html 403 cross_site", log)

    def test_too_large_body(self):
        """413 for a body over CSRFBodyMax whose token has to come from it;
        ErrorDocument 413 to a proxied path is not followed."""
        before_up = len(self.up.requests)
        cookie, _, _ = T.session_tokens(self.ap.port, "/small/index.html")
        r = T.request(self.ap.port, "POST", "/small/index.html", [("Cookie", cookie)] + CROSS[2:], b"a=" + b"x" * 5000)
        self.assert_module_page(r, "body_too_large", 413)
        self.assertEqual(self.up.requests[before_up:], [])

    def test_no_cache_keeps_a_rejection(self):
        r = T.request(self.ap.port, "POST", "/cached/index.html", CROSS, b"a=1")
        self.assert_module_page(r, "cross_site")

    def test_no_crash(self):
        self.assertFalse(self.ap.crashed())


if __name__ == "__main__":
    unittest.main()
