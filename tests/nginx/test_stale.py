# SPDX-License-Identifier: BSD-2-Clause
"""What the module's own rejection page tells a person whose page went
stale: the page of a login from before the next login, a page from before
the cookies were cleared (both "from an earlier session"), a page older
than csrf_max_age ("expired"), a form sent without the cookie ("cookies
cleared or blocked"), a page signed with a key retired since ("a key the
site no longer uses"). The page never echoes the token or the cookie."""

import os
import secrets
import signal
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ngxtest as T  # noqa: E402
from test_config import key_file  # noqa: E402

HTTP = """
    server {{
        listen 127.0.0.1:{port};
        server_name localhost;
        root {prefix}/www;
        csrf on;
        csrf_mode both;
        csrf_key_file {prefix}/csrf.keys;
        csrf_session_cookie sid;
        location / {{ }}
        location /aged/ {{ csrf_max_age 1s; }}
    }}
"""

PAGE = b"<!DOCTYPE html><html><head><title>t</title></head><body><form method=post action=/></form></body></html>"
FORM = ("Content-Type", "application/x-www-form-urlencoded")
EARLIER = ("This page is from an earlier session (you logged out or in since it was loaded): reload it and "
           "try again.")


class StaleTest(unittest.TestCase):
    def setUp(self):
        self.ngx = T.Nginx(HTTP)
        key_file(self.ngx.path("csrf.keys"), [(1, True)])
        for p in ("www/index.html", "www/aged/index.html"):
            self.ngx.write(p, PAGE)
        self.ngx.start()
        self.origin = ("Origin", "http://127.0.0.1:%d" % self.ngx.port)

    def tearDown(self):
        self.assertEqual(self.ngx.crashed(), [])
        self.ngx.cleanup()

    def page(self, cookie=None, path="/"):
        return T.session_tokens(self.ngx.port, path, cookie)

    def post(self, cookie, field, token, path="/"):
        hdrs = [self.origin, FORM] + ([("Cookie", cookie)] if cookie else [])
        return T.request(self.ngx.port, "POST", path, hdrs, ("a=1&%s=%s" % (field, token)).encode())

    def assertRefused(self, r, reason, advice, secrets_=()):
        self.assertEqual(r.status, 403)
        page = r.body.decode()
        self.assertIn('<code id="reason">%s</code>' % reason, page)
        self.assertIn(advice.replace("'", "&#39;"), page)
        self.assertRegex(self.ngx.error_log(), r'rejected POST "/[a-z/]*": %s' % reason)
        for s in secrets_:
            self.assertNotIn(s, page, "the page echoes nothing of the request")
            self.assertNotIn(s, self.ngx.error_log(), "the log holds no token or cookie")

    def test_page_of_the_previous_login(self):
        cookie, field, token = self.page("sid=first")
        secret = cookie.split("; ")[0]
        r = self.post("%s; sid=second" % secret, field, token)
        self.assertRefused(r, "token_session", EARLIER, (token, secret.split("=", 1)[1]))
        _, field2, token2 = self.page("%s; sid=second" % secret)
        self.assertEqual(self.post("%s; sid=second" % secret, field2, token2).status, 405, "the reloaded page works")

    def test_page_from_before_the_cookies_were_cleared(self):
        cookie, field, token = self.page()
        cookie2, field2, _ = self.page()
        self.assertNotEqual(field, field2)
        self.assertRefused(self.post(cookie2, field, token), "token_session", EARLIER, (token,))

    def test_forged_token_gets_the_same_harmless_advice(self):
        cookie, field, token = self.page()
        i = len(token) - 10  # a character of the tag
        forged = token[:i] + ("A" if token[i] != "A" else "B") + token[i + 1:]
        self.assertRefused(self.post(cookie, field, forged), "token_invalid",
                           "the page is probably from an earlier session", (forged, token))

    def test_expired_page(self):
        cookie, field, token = self.page(path="/aged/")
        time.sleep(2.2)
        self.assertRefused(self.post(cookie, field, token, "/aged/"), "secret_expired",
                           "This page has expired: reload it and try again.", (token,))

    def test_cookie_cleared(self):
        cookie, field, token = self.page()
        self.assertRefused(self.post(None, field, token), "secret_missing",
                           "Your browser did not send this site's security cookie (cookies cleared or blocked?): "
                           "reload the page and try again.", (token,))

    def test_key_retired(self):
        cookie, field, token = self.page()
        with open(self.ngx.path("csrf.keys"), "w") as f:
            f.write("key 2 %d %s sign\n" % (int(time.time()), secrets.token_hex(32)))
        self.ngx.proc.send_signal(signal.SIGHUP)
        time.sleep(1.0)
        self.assertRefused(self.post(cookie, field, token), "unknown_key",
                           "This page was signed with a key the site no longer uses: reload it and try again.",
                           (token,))
        cookie2, field2, token2 = self.page()
        self.assertEqual(self.post(cookie2, field2, token2).status, 405, "the reloaded page works")


if __name__ == "__main__":
    unittest.main()
