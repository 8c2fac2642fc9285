# SPDX-License-Identifier: BSD-2-Clause
"""apache.filters: the module among Apache's own filters: after
mod_include, mod_substitute and mod_sed (their output gets its tokens),
before mod_deflate (the client still gets its page compressed, with
tokens); a proxied upstream is asked for an uncompressed page while the
client's Accept-Encoding still reaches mod_deflate; a 100 MB page streams
through at flat memory; a proxied page in small chunks (transient
buckets) with a form over 8 KB comes out byte for byte; a page an
internal redirect serves gets tokens by its own section's settings."""

import gzip
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import aptest as A  # noqa: E402

T = A.T

FORM = b"<form method=post action=/save><input name=a></form>"
CONF = """
CSRF On
ProxyPass /up/ http://127.0.0.1:{upstream}/
ProxyPass /sess/ http://127.0.0.1:{upstream}/sess/
<Directory {prefix}/htdocs/ssi>
    Options +Includes
    AddOutputFilter INCLUDES .shtml
    AddType text/html .shtml
</Directory>
<Directory {prefix}/htdocs/sub>
    AddOutputFilterByType SUBSTITUTE text/html
    Substitute "s|MARK|<form method=post action=/s><input name=b></form>|"
</Directory>
<Directory {prefix}/htdocs/sed>
    AddOutputFilter Sed html
    OutputSed "s|MARK|<form method=post action=/t><input name=c></form>|"
</Directory>
<Directory {prefix}/htdocs/gz>
    AddOutputFilterByType DEFLATE text/html
</Directory>
<Location /up/>
    AddOutputFilterByType DEFLATE text/html
</Location>
<Location /sess/>
    CSRFSessionCookie PHPSESSID
</Location>
<Location /plain/>
    CSRF Off
</Location>
<Location /noinject/>
    CSRFInject Off
</Location>
<Location /errs/>
    ErrorDocument 404 /plain/page.html
</Location>
<Location /errs-noinject/>
    ErrorDocument 404 /noinject/page.html
</Location>
<Location /errs-on/>
    CSRF Off
    ErrorDocument 404 /part.html
</Location>
"""


# A form longer than the 8 KB copy buffer (held whole, then released as one
# piece), then short runs and more forms: the pieces after the big one are
# copied too.
PIECES = b"<html><head></head><body>" + b"".join(
    b"<p>%d %s</p><form method=post action=/f%d><input name=a%d><textarea>%s</textarea></form>\n" %
    (i, b"w" * (i * 37 % 300), i, i, b"z" * (12000 if i % 4 == 1 else i * 53)) for i in range(12)) + b"</body></html>"


def upstream(c, head, body):
    if head.startswith(b"GET /pieces"):
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nTransfer-Encoding: chunked\r\n"
                  b"Connection: close\r\n\r\n")
        for at in range(0, len(PIECES), 997):
            piece = PIECES[at:at + 997]
            c.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
        c.sendall(b"0\r\n\r\n")
        return
    extra = b"Set-Cookie: sid=s3cr3tvalue; Path=/\r\n" if head.startswith(b"GET /sess/") else b""
    T.send_whole(c, b"<html><head></head><body>" + FORM + b"</body></html>", "text/html; charset=utf-8", extra=extra)


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Filters(A.ApacheCase):
    CONF = CONF
    MODULES = ("filter", "include", "substitute", "sed", "deflate", "proxy", "proxy_http")

    @classmethod
    def make_upstream(cls):
        return T.Upstream(upstream)

    @classmethod
    def prepare(cls, ap):
        ap.write("htdocs/part.html", FORM)
        ap.write("htdocs/plain/page.html", b"<html><head></head><body>" + FORM + b"</body></html>")
        ap.write("htdocs/noinject/page.html", b"<html><head></head><body>" + FORM + b"</body></html>")
        ap.write("htdocs/ssi/page.shtml", '<html><head></head><body><!--#include virtual="/part.html" --></body></html>')
        ap.write("htdocs/sub/page.html", "<html><head></head><body>MARK</body></html>")
        ap.write("htdocs/sed/page.html", "<html><head></head><body>MARK</body></html>")
        ap.write("htdocs/gz/page.html", b"<html><head></head><body>" + FORM + b"x" * 4000 + b"</body></html>")
        with open(ap.path("htdocs/big.html"), "wb") as f:
            chunk = (b"<p>" + b"y" * 1000 + b"</p>\n") * 1024
            for _ in range(100):
                f.write(chunk)
            f.write(FORM)
        os.chmod(ap.path("htdocs/big.html"), 0o644)

    def test_after_content_filters(self):
        for path, field in (("/ssi/page.shtml", b"name=a"), ("/sub/page.html", b"name=b"), ("/sed/page.html", b"name=c")):
            with self.subTest(path=path):
                r = T.request(self.ap.port, "GET", path)
                self.assertEqual(r.status, 200)
                self.assertIn(field, r.body)
                self.assertEqual(T.count_injected(r.body), (1, 1), r.body[:300])

    def test_settings_of_the_page_sent(self):
        """A page an internal redirect (ErrorDocument) serves gets tokens by
        the settings of the section it comes from, not the ones the first
        request was judged by."""
        rows = (("/errs/missing", (0, 0)),           # judged under CSRF On, the page's section is Off
                ("/errs-noinject/missing", (0, 0)),  # ... CSRFInject Off
                ("/errs-on/missing", (1, 0)),        # judged under Off, the page's section is On
                ("/plain/page.html", (0, 0)),
                ("/noinject/page.html", (0, 0)),
                ("/part.html", (1, 0)))              # no <head>: no meta tag
        for path, want in rows:
            with self.subTest(path=path):
                r = T.request(self.ap.port, "GET", path)
                self.assertIn(r.status, (200, 404))
                self.assertIn(b"<form method=post", r.body)
                self.assertEqual(T.count_injected(r.body), want, r.body[:300])

    def test_before_deflate(self):
        r = T.request(self.ap.port, "GET", "/gz/page.html", [("Accept-Encoding", "gzip")])
        self.assertEqual(r.status, 200)
        self.assertEqual(r.header("content-encoding"), "gzip")
        self.assertEqual(T.count_injected(gzip.decompress(r.body)), (1, 1))

    def test_upstream_asked_for_identity(self):
        before = len(self.up.requests)
        r = T.request(self.ap.port, "GET", "/up/page", [("Accept-Encoding", "gzip, br")])
        self.assertEqual(r.status, 200)
        head = self.up.requests[before][0].decode("latin-1").lower()
        self.assertIn("\r\naccept-encoding: identity", head)
        self.assertNotIn("gzip", head)
        # the client's own value still reached mod_deflate
        self.assertEqual(r.header("content-encoding"), "gzip")
        self.assertEqual(T.count_injected(gzip.decompress(r.body)), (1, 1))

    def test_flat_memory(self):
        """100 MB through the injector adds no resident memory to the
        children (a few MB of slack for the allocator)."""
        out = subprocess.run(["pgrep", "-P", str(self.ap.proc.pid)], capture_output=True, text=True).stdout
        pids = [int(p) for p in out.split()]
        T.request(self.ap.port, "GET", "/gz/page.html")  # warm every child up
        before = {p: rss_kb(p) for p in pids}
        r = subprocess.run(["curl", "-sS", "--max-time", "60", "-o", "-", "http://127.0.0.1:%d/big.html" % self.ap.port],
                           capture_output=True, timeout=90)
        # the form comes after 102,400 start tags: past the depth guard, so
        # it carries the injector's id and its field names it
        pinned = T.PINNED.findall(r.stdout[-400:])
        self.assertEqual(len(pinned), 1)
        self.assertIn(b' form="%s"' % pinned[0][5:-1], T.HIDDEN.search(r.stdout).group(0))
        self.assertEqual(len(r.stdout), os.path.getsize(self.ap.path("htdocs/big.html")) + len(T.HIDDEN.search(r.stdout).group(0)) + len(pinned[0]))
        self.assertEqual(T.count_injected(r.stdout[-400:])[0], 1)
        grown = max(rss_kb(p) - before[p] for p in pids)
        self.assertLess(grown, 16 * 1024, "a child grew by %d kB" % grown)

    def test_small_chunks_big_form(self):
        r = T.request(self.ap.port, "GET", "/up/pieces")
        self.assertEqual(r.status, 200)
        self.assertEqual(T.count_injected(r.body), (12, 1))
        self.assertEqual(T.META.sub(b"", T.HIDDEN.sub(b"", r.body)), PIECES)

    def test_session_cookie_never_seen(self):
        """CSRFSessionCookie names a cookie nobody sends while the
        application sets another: one warning a child, the names only."""
        for _ in range(4):
            self.assertEqual(T.request(self.ap.port, "GET", "/sess/page").status, 200)
        log = self.ap.wait_log("error.log", "CSRFSessionCookie")
        lines = [l for l in log.splitlines() if "CSRFSessionCookie" in l]
        self.assertTrue(1 <= len(lines) <= 2, lines)
        self.assertIn('CSRFSessionCookie "PHPSESSID": no request or response has carried it so far, but the '
                      'application sets the cookie "sid"', lines[0])
        self.assertNotIn("s3cr3tvalue", log)

    def test_no_crash(self):
        self.assertFalse(self.ap.crashed())


if __name__ == "__main__":
    unittest.main()
