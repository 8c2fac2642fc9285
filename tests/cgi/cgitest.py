# SPDX-License-Identifier: BSD-2-Clause
"""cgitest - helpers for csrf-cgi's tests.

Starts Debian's busybox httpd, lighttpd and mini_httpd on free loopback ports with
csrf-cgi as the CGI interpreter of the test programs in www/cgi-bin (HTTP
Basic users admin/admin and guest/guest), runs csrf-cgi directly with a
CGI environment, and speaks raw HTTP/1.1 over sockets so tests control
every byte. Never prints a token, a secret or a cookie value.
"""

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../lib"))
import servertest  # noqa: E402
from servertest import free_port, read_text, stop, wait_port  # noqa: E402,F401
WWW = os.path.join(HERE, "www")
CGI = os.environ.get("CSRF_CGI", os.path.join(HERE, "../../build/csrf-cgi"))
KEY = os.environ.get("CSRF_KEY", os.path.join(os.path.dirname(CGI), "csrf-key"))
BUSYBOX = shutil.which("busybox") or "/bin/busybox"
LIGHTTPD = shutil.which("lighttpd") or "/usr/sbin/lighttpd"
MINI_HTTPD = shutil.which("mini_httpd") or "/usr/sbin/mini_httpd"
USERS = {"admin": "admin", "guest": "guest"}


class Site:
    """A temporary directory with a key file, a csrf-cgi configuration
    (lines, {origin} substituted) and the files the test programs write
    (ran, body)."""

    def __init__(self, conf_lines=()):
        self.dir = tempfile.mkdtemp(prefix="csrf-cgi-test-")
        os.chmod(self.dir, 0o755)
        self.keys = os.path.join(self.dir, "csrf.keys")
        subprocess.run([KEY, "new", self.keys], check=True, capture_output=True)
        self.conf = os.path.join(self.dir, "csrf-cgi.conf")
        self.lines = list(conf_lines)

    def configure(self, origin):
        with open(self.conf, "w") as f:
            f.write("# written by cgitest\norigin %s\nkey_file %s\n" % (origin, self.keys))
            for l in self.lines:
                f.write(l.format(origin=origin) + "\n")

    def path(self, name):
        return os.path.join(self.dir, name)

    def clear(self):
        for name in ("ran", "body"):
            try:
                os.unlink(self.path(name))
            except FileNotFoundError:
                pass

    def ran(self):
        try:
            with open(self.path("ran")) as f:
                return f.read().splitlines()
        except FileNotFoundError:
            return []

    def body(self):
        with open(self.path("body"), "rb") as f:
            return f.read()

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


class Server:
    """Base: start() runs self.argv() with the site's environment; log()
    is what csrf-cgi wrote to the server's error log."""

    name = "server"

    def __init__(self, site):
        self.site = site
        self.port = free_port()
        self.origin = "http://127.0.0.1:%d" % self.port
        site.configure(self.origin)
        self.proc = None
        self.logfile = site.path("%s-error.log" % self.name)

    def env(self):
        e = dict(os.environ)
        e["CSRF_CGI_CONFIG"] = self.site.conf
        e["CGI_TEST_DIR"] = self.site.dir
        return e

    def start(self):
        self.write_config()
        with open(self.logfile, "ab") as log:
            self.proc = subprocess.Popen(self.argv(), env=self.env(), stdout=log, stderr=log, cwd=self.site.dir)
        if not wait_port(self.port, self.proc):
            out = self.log()
            self.stop()
            raise RuntimeError("%s did not start:\n%s" % (self.name, out))
        return self

    def log(self):
        return read_text(self.logfile)

    def stop(self):
        stop(self.proc)
        self.proc = None


class Busybox(Server):
    """busybox httpd -f, csrf-cgi as the interpreter of *.cgi."""

    name = "busybox"

    def write_config(self):
        self.conf = self.site.path("httpd.conf")
        with open(self.conf, "w") as f:
            for u, p in USERS.items():
                f.write("/cgi-bin:%s:%s\n" % (u, p))
            f.write("*.cgi:%s\n" % os.path.abspath(CGI))

    def argv(self):
        return [BUSYBOX, "httpd", "-f", "-p", "127.0.0.1:%d" % self.port, "-h", WWW, "-c", self.conf]


class Lighttpd(Server):
    """lighttpd -D with mod_cgi (cgi.assign to csrf-cgi; cgi.upgrade, which a
    CGI WebSocket program needs and which makes lighttpd pass Upgrade) and
    mod_auth."""

    name = "lighttpd"

    def write_config(self):
        users = self.site.path("users")
        with open(users, "w") as f:
            for u, p in USERS.items():
                f.write("%s:%s\n" % (u, p))
        self.conf = self.site.path("lighttpd.conf")
        with open(self.conf, "w") as f:
            f.write(
                """
server.document-root = "{www}"
server.bind = "127.0.0.1"
server.port = {port}
server.errorlog = "{log}"
server.modules = ( "mod_auth", "mod_authn_file", "mod_setenv", "mod_cgi" )
auth.backend = "plain"
auth.backend.plain.userfile = "{users}"
auth.require = ( "/cgi-bin/" => ( "method" => "basic", "realm" => "router", "require" => "valid-user" ) )
cgi.assign = ( ".cgi" => "{cgi}" )
cgi.upgrade = "enable"
setenv.add-environment = ( "CSRF_CGI_CONFIG" => "{conf}", "CGI_TEST_DIR" => "{dir}" )
""".format(www=WWW, port=self.port, log=self.logfile, users=users, cgi=os.path.abspath(CGI),
                conf=self.site.conf, dir=self.site.dir))

    def argv(self):
        return [LIGHTTPD, "-D", "-f", self.conf]


class MiniHttpd(Server):
    """ACME's mini_httpd (Debian's mini-httpd) -D, its CGI pattern
    cgi-bin/*. mini_httpd has no interpreter setting: it runs whatever the
    pattern matches. So each name under its cgi-bin is a two-line shell
    script that runs csrf-cgi with the real program (in tests/cgi/www,
    outside mini_httpd's document root, so no URL reaches it unprotected);
    the script also names the configuration, since mini_httpd gives CGI
    programs a fresh environment, and sends standard error to the error
    log (mini_httpd gives CGI programs the client's connection as standard
    error: a log line would reach the browser before the headers). Basic
    auth: cgi-bin/.htpasswd (crypt).
    mini_httpd passes on only some request headers (Referer, User-Agent,
    Cookie, Host, Content-Type, Content-Length): never Origin,
    Sec-Fetch-Site or X-CSRF-Token."""

    name = "mini_httpd"
    DROPPED = ("origin", "sec-fetch-site", "x-csrf-token")

    def write_config(self):
        import crypt  # deprecated in 3.11, still there; mini_httpd checks with crypt(3)
        self.root = self.site.path("mini-www")
        bindir = os.path.join(self.root, "cgi-bin")
        os.makedirs(bindir, exist_ok=True)
        os.chmod(self.root, 0o755)
        os.chmod(bindir, 0o755)
        for name in sorted(os.listdir(os.path.join(WWW, "cgi-bin"))):
            path = os.path.join(bindir, name)
            with open(path, "w") as f:
                f.write("#!/bin/sh\nCSRF_CGI_CONFIG=%s CGI_TEST_DIR=%s exec %s %s 2>>%s\n" % (
                    self.site.conf, self.site.dir, os.path.abspath(CGI), os.path.join(WWW, "cgi-bin", name),
                    self.logfile))
            os.chmod(path, 0o755)
        with open(os.path.join(bindir, ".htpasswd"), "w") as f:
            for u, p in USERS.items():
                f.write("%s:%s\n" % (u, crypt.crypt(p, crypt.mksalt(crypt.METHOD_SHA512))))
        self.access_log = self.site.path("mini_httpd-access.log")

    def argv(self):
        import pwd
        user = pwd.getpwuid(os.getuid()).pw_name
        return [MINI_HTTPD, "-D", "-h", "127.0.0.1", "-p", str(self.port), "-d", self.root, "-c", "cgi-bin/*",
                "-u", user, "-l", self.access_log]


class Response(servertest.Response):
    """csrf-cgi's or a server's answer, parsed from its raw bytes (raw)."""

    def __init__(self, raw):
        self.raw = raw
        head, sep, body = raw.partition(b"\r\n\r\n")
        if not sep:
            head, _, body = raw.partition(b"\n\n")
        lines = head.decode("latin-1").split("\n")
        m = re.match(r"HTTP/1\.[01] (\d{3})", lines[0]) if lines else None
        headers = []
        for l in lines[1:]:
            k, _, v = l.rstrip("\r").partition(":")
            headers.append((k.strip().lower(), v.strip()))
        super().__init__(int(m.group(1)) if m else 0, headers, body, head)

    def text(self):
        return self.body.decode("utf-8", "replace")


def basic(user):
    import base64
    return "Basic " + base64.b64encode(("%s:%s" % (user, USERS[user])).encode()).decode()


def request(port, method, target, headers=(), body=b"", user="admin", raw_tail=None, timeout=20):
    """One request on a new connection (Connection: close); headers is a
    list of (name, value); Content-Length is added for a body. raw_tail,
    when given, is sent instead of body after the headers, and the write
    side is shut (a client that sends less than it announced)."""
    if isinstance(body, str):
        body = body.encode()
    lines = ["%s %s HTTP/1.1" % (method, target), "Host: 127.0.0.1:%d" % port, "Connection: close"]
    if user:
        lines.append("Authorization: " + basic(user))
    names = [h[0].lower() for h in headers]
    lines += ["%s: %s" % h for h in headers]
    if (body or method == "POST") and "content-length" not in names:
        lines.append("Content-Length: %d" % len(body))
    data = ("\r\n".join(lines) + "\r\n\r\n").encode() + (raw_tail if raw_tail is not None else body)
    s = socket.create_connection(("127.0.0.1", port), timeout)
    try:
        s.sendall(data)
        if raw_tail is not None:
            s.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            try:
                c = s.recv(65536)
            except ConnectionResetError:
                break
            if not c:
                break
            chunks.append(c)
    finally:
        s.close()
    return Response(b"".join(chunks))


def page_tokens(resp):
    """(secret cookie 'name=value' or None, field, token) from an injected page."""
    cookie = None
    for v in resp.all("set-cookie"):
        if v.startswith("csrf_secret=") or v.startswith("__Host-csrf_secret="):
            cookie = v.split(";", 1)[0]
    text = resp.text()
    f = re.search(r'<meta name="csrf-param" content="([^"]+)"', text)
    t = re.search(r'<meta name="csrf-token" content="([^"]+)"', text)
    if not f:  # a page without <head>: the hidden field of its form
        f = re.search(r'<input type="hidden" name="([^"]+)"', text)
        t = re.search(r'<input type="hidden" name="[^"]+" value="([^"]+)">', text)
    return cookie, f.group(1) if f else None, t.group(1) if t else None


def strip_injected(text):
    """The page as the program wrote it: the injected elements removed."""
    text = re.sub(r'<meta name="csrf-param" content="[^"]*"><meta name="csrf-token" content="[^"]*">', "", text)
    return re.sub(r'<input type="hidden" name="csrf_[0-9a-f]+" value="[^"]*">', "", text)


def run_direct(env, program, stdin=b"", config=None, args=None, timeout=20):
    """csrf-cgi run as a server would run it: env is the CGI environment
    (nothing else of this process's is passed but PATH). Returns
    (exit status, Response of its CGI output, stderr)."""
    e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    e.update(env)
    argv = [CGI]
    if config:
        argv += ["--config", config]
    argv += args if args is not None else [program]
    p = subprocess.run(argv, input=stdin, env=e, capture_output=True, timeout=timeout, cwd=os.path.join(WWW, "cgi-bin"))
    out = p.stdout
    # A CGI answer has no status line; give it one from Status.
    m = re.match(rb"Status: (\d{3})", out)
    status = m.group(1) if m else b"200"
    return p.returncode, Response(b"HTTP/1.1 " + status + b" x\r\n" + out), p.stderr.decode("utf-8", "replace")
