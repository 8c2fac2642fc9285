# SPDX-License-Identifier: BSD-2-Clause
"""What csrf-cgi tells a person whose page went stale: the page of a login
from before the next login, a page from before the cookies were cleared
(both "from an earlier session"), a page older than max_age ("expired"),
a form sent without the cookie ("cookies cleared or blocked"), a page
signed with a key retired since ("a key the site no longer uses"). Each
time the program does not run, the answer is the library's page with the
reason and the advice, and it never echoes the token or the cookie."""

import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cgitest as T  # noqa: E402
from test_direct import FORM, ORIGIN, Direct  # noqa: E402

EARLIER = ("This page is from an earlier session (you logged out or in since it was loaded): reload it and "
           "try again.")


class StaleBase(Direct):
    def post(self, cookie, field, token, extra=None):
        env = {"CONTENT_TYPE": FORM, "HTTP_COOKIE": cookie}
        env.update(extra or {})
        body = ("a=1&%s=%s" % (field, token)).encode() if field else b"a=1"
        return self.run_cgi("POST", stdin=body, env=env)

    def assertRefused(self, res, reason, advice, secrets=()):
        rc, r, err = res
        self.assertEqual(r.status, 403, err)
        self.assertEqual(self.site.ran(), [], "the program did not run")
        self.assertIn("rejected POST /cgi-bin/echo.cgi: %s" % reason, err)
        page = r.text()
        self.assertIn('<code id="reason">%s</code>' % reason, page)
        self.assertIn(advice.replace("'", "&#39;"), page)
        for s in secrets:
            if s:
                self.assertNotIn(s, page, "the page echoes nothing of the request")
                self.assertNotIn(s, err, "the log holds no token or cookie")



class Stale(StaleBase):
    def test_page_of_the_previous_login(self):
        self.site.lines = ["session_cookie sid"]
        self.site.configure(ORIGIN)
        rc, r, err = self.run_cgi(script="login.cgi", env={"NEW_SID": "first", "HTTP_COOKIE": "sid=old"})
        cookie, field, token = T.page_tokens(r)
        # logged out and in again: the application set a new session id
        self.assertRefused(self.post("%s; sid=second" % cookie, field, token), "token_session", EARLIER,
                           (token, cookie.split("=", 1)[1]))
        # the page of the new login works
        rc, r, err = self.run_cgi(script="page.cgi", env={"HTTP_COOKIE": "%s; sid=second" % cookie})
        _, field2, token2 = T.page_tokens(r)
        rc, r, err = self.post("%s; sid=second" % cookie, field2, token2)
        self.assertEqual(r.status, 200, err)

    def test_page_from_before_the_cookies_were_cleared(self):
        cookie, field, token = self.tokens()
        # cookies cleared; another page gives the browser a new secret
        cookie2, field2, _ = self.tokens()
        self.assertNotEqual(field, field2)
        self.assertRefused(self.post(cookie2, field, token), "token_session", EARLIER, (token,))

    def test_forged_token_gets_the_same_harmless_advice(self):
        cookie, field, token = self.tokens()
        i = len(token) - 10  # a character of the tag
        forged = token[:i] + ("A" if token[i] != "A" else "B") + token[i + 1:]
        self.assertRefused(self.post(cookie, field, forged), "token_invalid",
                           "the page is probably from an earlier session", (forged, token))

    def test_expired_page(self):
        self.site.lines = ["max_age 1"]
        self.site.configure(ORIGIN)
        cookie, field, token = self.tokens()
        time.sleep(2.2)
        self.assertRefused(self.post(cookie, field, token), "secret_expired",
                           "This page has expired: reload it and try again.", (token,))

    def test_cookie_cleared(self):
        cookie, field, token = self.tokens()
        self.assertRefused(self.post("other=1", field, token), "secret_missing",
                           "Your browser did not send this site's security cookie (cookies cleared or blocked?): "
                           "reload the page and try again.", (token,))

    def test_key_retired(self):
        cookie, field, token = self.tokens()
        listed = subprocess.run([T.KEY, "list", self.site.keys], check=True, capture_output=True, text=True).stdout
        old = [line.split()[0] for line in listed.splitlines() if line.rstrip().endswith("signing")][0]
        subprocess.run([T.KEY, "rotate", self.site.keys], check=True, capture_output=True)
        subprocess.run([T.KEY, "retire", self.site.keys, old], check=True, capture_output=True)
        self.assertRefused(self.post(cookie, field, token), "unknown_key",
                           "This page was signed with a key the site no longer uses: reload it and try again.",
                           (token,))
        # the reload the page asks for: a new cookie and a page that works
        cookie2, field2, token2 = self.tokens()
        self.assertIsNotNone(cookie2, "a new secret cookie replaces the retired one")
        rc, r, err = self.post(cookie2, field2, token2)
        self.assertEqual(r.status, 200, err)


class Retry(StaleBase):
    """retry_token on: a 403 for a stale token from the site's own page
    carries a fresh token (X-CSRF-Token and the page's csrf-token meta)
    that a script retries with once; never for a cross-site request, a
    missing token or cookie, and never when the directive is off. In mode
    both: in the default origin_or_token a same-origin request needs no
    token at all."""

    def stale(self, lines, extra):
        self.site.lines = ["session_cookie sid", "mode both"] + lines
        self.site.configure(ORIGIN)
        rc, r, err = self.run_cgi(script="login.cgi", env={"NEW_SID": "first", "HTTP_COOKIE": "sid=old"})
        cookie, field, token = T.page_tokens(r)
        res = self.post("%s; sid=second" % cookie, field, token, extra)
        return cookie, field, token, res

    def test_fresh_token_for_the_same_session(self):
        cookie, field, token, (rc, r, err) = self.stale(["retry_token on"], {"HTTP_SEC_FETCH_SITE": "same-origin"})
        self.assertEqual(r.status, 403)
        fresh = r.header("x-csrf-token")
        self.assertIsNotNone(fresh, "the 403 carries a fresh token")
        self.assertNotEqual(fresh, token)
        self.assertIn('<meta name="csrf-token" content="%s">' % fresh, r.text(), "and its page too")
        self.assertEqual(r.all("set-cookie"), [], "the same secret: no new cookie")
        self.assertIn("offered a fresh token to POST /cgi-bin/echo.cgi: token_session", err)
        self.assertNotIn(fresh, err, "the log holds no token")
        rc, r, err = self.post("%s; sid=second" % cookie, field, fresh, {"HTTP_SEC_FETCH_SITE": "same-origin"})
        self.assertEqual(r.status, 200, err)
        self.assertEqual(len(self.site.ran()), 1, "the retry ran the program once")

    def test_never_cross_site_without_token_or_when_off(self):
        for lines, extra, reason in (
                (["retry_token on"], {"HTTP_SEC_FETCH_SITE": "cross-site"}, "cross_site"),
                (["retry_token on"], {"HTTP_SEC_FETCH_SITE": "same-site"}, "same_site"),
                (["retry_token on"], {"HTTP_ORIGIN": "http://evil.example"}, "origin_mismatch"),
                (["retry_token on"], {}, "token_session"),  # no evidence that the page is the site's
                (["retry_token off"], {"HTTP_SEC_FETCH_SITE": "same-origin"}, "token_session"),
                ([], {"HTTP_SEC_FETCH_SITE": "same-origin"}, "token_session")):
            cookie, field, token, (rc, r, err) = self.stale(lines, extra)
            self.assertEqual(r.status, 403, (lines, extra))
            self.assertIn(": %s" % reason, err)
            self.assertIsNone(r.header("x-csrf-token"), (lines, extra))
            self.assertNotIn('name="csrf-token"', r.text())
        # no token at all, and no cookie: nothing to heal
        self.site.lines = ["mode both", "retry_token on"]
        self.site.configure(ORIGIN)
        cookie, field, token = self.tokens()
        for ck, f, reason in ((cookie, None, "token_missing"), ("other=1", field, "secret_missing")):
            rc, r, err = self.post(ck, f, token, {"HTTP_SEC_FETCH_SITE": "same-origin"})
            self.assertIn(": %s" % reason, err)
            self.assertIsNone(r.header("x-csrf-token"))

    def test_bad_value(self):
        self.site.lines = ["retry_token maybe"]
        self.site.configure(ORIGIN)
        rc, r, err = self.run_cgi(script="page.cgi")
        self.assertIn("retry_token takes one of on off", err)


if __name__ == "__main__":
    unittest.main()
