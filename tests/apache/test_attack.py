# SPDX-License-Identifier: BSD-2-Clause
"""apache.attack: forged cross-site requests an attacker aims at the
places where Apache hands a request settings other than the ones it was
judged by: mod_dir's DirectoryIndex and mod_negotiation's MultiViews
(ap_internal_fast_redirect) choose a file whose section enables the
module after the fixups ran on the directory's or the missing file's
settings. The application never runs for them; the same requests from
the site itself still reach it."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aptest as A  # noqa: E402
import backends as B  # noqa: E402

T = A.T

CONF = """
CSRF Off
DirectoryIndex index.php
AddHandler application/x-httpd-php .php
<Directory {prefix}/htdocs/mv>
    Options +MultiViews
    MultiviewsMatch Handlers
</Directory>
<Files "*.php">
    CSRF On
</Files>
<Directory {prefix}/htdocs/lenient>
    CSRF On
    CSRFAction log
</Directory>
<Files "index.php">
    CSRFAction deny
</Files>
<Directory {prefix}/htdocs/off>
    CSRF Off
</Directory>
<Directory {prefix}/htdocs/fb>
    FallbackResource /fb/index.php
</Directory>
CSRFExempt POST /fb/hook
<Location /cache>
    CSRF On
</Location>
<Location /cache/set>
    Header set Cache-Control "public, max-age=600"
</Location>
CacheRoot {prefix}/diskcache
CacheEnable disk /cache/set
CacheHeader On
CacheIgnoreNoLastMod On
<Location /cache/always>
    Header always set Cache-Control "public, max-age=600"
    Header set Surrogate-Control "max-age=600"
    Header set CDN-Cache-Control "max-age=600"
    Header set Expires "Thu, 01 Jan 2099 00:00:00 GMT"
</Location>
<Location /cache/expires>
    ExpiresActive On
    ExpiresDefault "access plus 1 day"
</Location>
"""

CROSS = [("Sec-Fetch-Site", "cross-site"), ("Origin", "https://evil.example"),
         ("Content-Type", "application/x-www-form-urlencoded")]
SAME = [("Sec-Fetch-Site", "same-origin")] + CROSS[2:]


class Attack(A.ApacheCase):
    CONF = CONF
    MPM = "prefork"
    MODULES = ("php", "dir", "negotiation", "headers", "expires", "cache", "cache_disk")

    @classmethod
    def prepare(cls, ap):
        B.install(ap)
        app = "<?php file_put_contents('%s/app.hits', $_SERVER['REQUEST_METHOD'] . ' ' . " \
              "$_SERVER['SCRIPT_NAME'] . \"\\n\", FILE_APPEND); echo 'app';" % ap.path("run")
        ap.write("htdocs/app/index.php", app)
        ap.write("htdocs/mv/transfer.php", app)
        ap.write("htdocs/lenient/index.php", app)
        ap.write("htdocs/off/index.php", B.ECHO_PHP)
        ap.write("htdocs/page.php", B.FORM)
        ap.write("htdocs/fb/index.php", app)
        for d in ("set", "always", "expires"):
            ap.write("htdocs/cache/%s/form.html" % d, B.FORM)
        os.makedirs(ap.path("diskcache"))
        os.chmod(ap.path("diskcache"), 0o777)  # the children's user writes it
        ap.write("htdocs/lenient/soft.php", app)

    def hits(self):
        return self.ap.app_hits()

    def test_fast_redirect_is_judged_by_the_handlers_settings(self):
        rows = ["/app/",          # DirectoryIndex index.php, CSRF On only in <Files *.php>
                "/mv/transfer",   # MultiViews picks transfer.php (in the type checker)
                "/fb/transfer"]   # FallbackResource /fb/index.php
        before = len(self.hits())
        for path in rows:
            with self.subTest(path=path):
                r = T.request(self.ap.port, "POST", path, CROSS, b"amount=1000&to=mallory")
                self.assertEqual(r.status, 403, r.body[:80])
                self.assertIn(b"cross_site", r.body)
        self.assertEqual(self.hits()[before:], [])

    def test_report_only_directory_does_not_cover_an_enforcing_file(self):
        """A report-only directory (CSRFAction log) whose DirectoryIndex
        file is enforced: POST /lenient/ is judged (report-only) by the
        directory in the fixups, then runs index.php, enforced: refused;
        the directory's other files stay report-only."""
        before = len(self.hits())
        r = T.request(self.ap.port, "POST", "/lenient/soft.php", CROSS, b"a=1")
        self.assertEqual((r.status, r.body), (200, b"app"))
        r = T.request(self.ap.port, "POST", "/lenient/", CROSS, b"a=1")
        self.assertEqual(r.status, 403)
        self.assertIn(b"cross_site", r.body)
        self.assertEqual(self.hits()[before:], ["POST /lenient/soft.php"])

    def test_exempt_path_through_a_front_controller(self):
        """CSRFExempt names the path the client sent: it holds through
        FallbackResource (a <Location> with CSRF Off would not: the
        front controller's settings judge, as after any redirect)."""
        before = len(self.hits())
        r = T.request(self.ap.port, "POST", "/fb/hook", [("Content-Type", "application/json")], b"{}")
        self.assertEqual((r.status, r.body), (200, b"app"))
        self.assertEqual(self.hits()[before:], ["POST /fb/index.php"])
        self.assertIn("POST /fb/index.php 200 exempt", self.ap.access_log("POST /fb/index.php 200 exempt"))

    def test_same_origin_still_reaches_the_application(self):
        before = len(self.hits())
        for path in ("/app/", "/mv/transfer"):
            r = T.request(self.ap.port, "POST", path, SAME, b"a=1")
            self.assertEqual((r.status, r.body), (200, b"app"), path)
            r = T.request(self.ap.port, "GET", path, [], b"")
            self.assertEqual((r.status, r.body), (200, b"app"), path)
        self.assertEqual(self.hits()[before:], ["POST /app/index.php", "GET /app/index.php",
                                                "POST /mv/transfer.php", "GET /mv/transfer.php"])
        log = self.ap.access_log("POST /app/index.php 200 origin_verified")
        self.assertIn("POST /app/index.php 200 origin_verified", log)

    def test_body_read_for_the_handlers_settings_reaches_it(self):
        """/off/ is CSRF Off, its index.php CSRF On: the body is read for
        the token when the handler's settings judge, and PHP gets it
        whole."""
        cookie, name, token = T.session_tokens(self.ap.port, "/page.php")
        self.assertTrue(cookie and name and token)
        body = ("a=1&%s=%s&pad=%s" % (name, token, "x" * 3000)).encode()
        hdrs = [("Cookie", cookie), ("Content-Type", "application/x-www-form-urlencoded")]
        r = T.request(self.ap.port, "POST", "/off/", hdrs, body)
        self.assertEqual((r.status, r.body), (200, (B.digest(body) + " method=POST").encode()))
        r = T.request(self.ap.port, "POST", "/off/", hdrs, body.replace(token.encode(), b"x" * len(token)))
        self.assertEqual(r.status, 403)

    def test_pages_with_tokens_stay_private_after_mod_headers(self):
        """mod_headers (Header set, Header always set) and mod_expires run
        after the injecting filter: a page with a token still leaves with
        one private Cache-Control and no targeted cache field, so no
        shared cache stores one user's token for others."""
        for d in ("set", "always", "expires"):
            with self.subTest(d=d):
                r = T.request(self.ap.port, "GET", "/cache/%s/form.html" % d)
                self.assertEqual((r.status, T.count_injected(r.body)), (200, (1, 1)))
                cc = r.all("cache-control")
                self.assertEqual(len(cc), 1, cc)
                self.assertIn("private", cc[0])
                self.assertNotIn("public", cc[0])
                self.assertEqual(r.all("surrogate-control") + r.all("cdn-cache-control"), [])
                if d != "expires":
                    self.assertEqual(r.all("expires"), [])

    def test_mod_cache_never_serves_one_users_token_to_another(self):
        """mod_cache (CACHE_SAVE, after mod_headers) stored the page that
        Header set made public and served its token and secret cookie to
        every later client."""
        tokens = []
        for _ in range(3):
            r = T.request(self.ap.port, "GET", "/cache/set/form.html")
            self.assertEqual(r.status, 200)
            self.assertEqual([v for v in r.all("x-cache") if v.startswith("HIT")], [])
            m = T.META_TOKEN.search(r.body)
            self.assertTrue(m)
            tokens.append(m.group(1))
        self.assertEqual(len(set(tokens)), 3)  # compared, never printed

    def test_no_crash(self):
        self.assertFalse(self.ap.crashed())


if __name__ == "__main__":
    unittest.main()
