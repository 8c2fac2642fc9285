# SPDX-License-Identifier: BSD-2-Clause
"""The page's header filter reads the request as the access phase filed
it, once a request, and never another request's filing: a page whose
upstream answers after another request went through the access phase
(another client, another cookie) is prepared for its own request's
cookie."""

import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ngxtest as T  # noqa: E402

HTTP = """
    server {{
        listen 127.0.0.1:{port};
        root {prefix}/www;
        csrf on;
        location / {{ }}
        location /app {{ proxy_pass http://127.0.0.1:{upstream}; }}
        location /submit {{ csrf_mode token; proxy_pass http://127.0.0.1:{upstream}; }}
    }}
"""

PAGE = b"<!DOCTYPE html><html><head><title>t</title></head><body><form method=post action=/submit></form></body></html>"

HELD = threading.Event()    # the slow request reached the upstream
RELEASE = threading.Event()  # the test lets it answer


def upstream(c, head, body):
    if head.startswith(b"GET /app/slow"):
        HELD.set()
        RELEASE.wait(10)
    T.send_whole(c, PAGE if head.startswith(b"GET ") else b"done", "text/html" if head.startswith(b"GET ") else
                 "text/plain")


class FiledTest(T.SessionCase):
    HTTP = HTTP
    upstream = staticmethod(upstream)
    FILES = {"www/index.html": PAGE}

    def submit(self, cookie, token):
        return T.request(self.port, "POST", "/submit", [("Cookie", cookie), ("X-CSRF-Token", token)], b"a=1").status

    def test_page_answered_after_another_request(self):
        # the slow page's request (with the session's cookie) is filed, then
        # another request without a cookie is filed and answered, then the
        # slow page answers: its token is for its own cookie, and it sets
        # no new one
        HELD.clear()
        RELEASE.clear()
        got = {}

        def slow():
            got["r"] = T.request(self.port, "GET", "/app/slow", [("Cookie", self.cookie)])

        t = threading.Thread(target=slow)
        t.start()
        self.assertTrue(HELD.wait(10), "the slow request reached the upstream")
        other = T.request(self.port, "GET", "/app/other")
        self.assertIsNotNone(T.secret_cookie(other), "the request without a cookie got one")
        RELEASE.set()
        t.join(10)
        r = got["r"]
        self.assertEqual(r.status, 200)
        self.assertTrue(T.secret_cookie(r) is None, "the slow page set another secret")
        token = T.META_TOKEN.search(r.body).group(1).decode()
        self.assertEqual(self.submit(self.cookie, token), 200)
        self.assertEqual(self.ngx.crashed(), [])


if __name__ == "__main__":
    unittest.main()
