# SPDX-License-Identifier: BSD-2-Clause
"""backends - the applications tests/apache puts behind Apache: an echo
of the request body as each handler receives it (its length and SHA-256)
through mod_php, php-fpm (proxy_fcgi), a CGI program (mod_cgid) and a
python upstream (mod_proxy_http), and the php-fpm master that serves it."""

import hashlib
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../nginx"))
import ngxtest as T  # noqa: E402

PHP_FPM = os.environ.get("CSRF_PHP_FPM", "/usr/sbin/php-fpm8.2")

ECHO_PHP = """<?php
$b = file_get_contents('php://input');
header('Content-Type: text/plain');
echo 'len=' . strlen($b) . ' sha=' . hash('sha256', $b) . ' method=' . $_SERVER['REQUEST_METHOD'];
"""

ECHO_CGI = """#!/usr/bin/python3
import hashlib, os, sys
b = sys.stdin.buffer.read()
sys.stdout.write("Content-Type: text/plain\\r\\n\\r\\n")
sys.stdout.write("len=%d sha=%s method=%s" % (len(b), hashlib.sha256(b).hexdigest(), os.environ.get("REQUEST_METHOD")))
"""

FORM = "<!doctype html><html><head><title>f</title></head><body><form method=post action=/x><input name=a></form></body></html>"


def digest(body):
    return "len=%d sha=%s" % (len(body), hashlib.sha256(body).hexdigest())


def install(ap, php=True):
    """Writes the applications into the server's htdocs."""
    ap.write("htdocs/form.html", FORM)
    if php:
        ap.write("htdocs/php/echo.php", ECHO_PHP)
        ap.write("htdocs/php/app.php", "<?php file_put_contents('%s/app.hits', $_SERVER['REQUEST_METHOD'] . ' ' . "
                 "$_SERVER['REQUEST_URI'] . \"\\n\", FILE_APPEND); echo 'app';" % ap.path("run"))
    ap.write("htdocs/fpm/echo.php", ECHO_PHP)
    ap.write("htdocs/cgi/echo.cgi", ECHO_CGI, mode=0o755)


def read_chunked(f):
    body = b""
    while True:
        line = f.readline()
        n = int(line.split(b";")[0], 16)
        if n == 0:
            while f.readline() not in (b"\r\n", b"\n", b""):
                pass
            return body
        body += f.read(n)
        f.readline()


class EchoUpstream(T.Upstream):
    """An HTTP/1.1 upstream that answers every request on a connection with
    the digest of the body it received (Content-Length or chunked) and
    records (method, target) of each."""

    def __init__(self):
        super().__init__(None)

    def _one(self, c):
        f = c.makefile("rb")
        try:
            while True:
                line = f.readline()
                if not line:
                    return
                head = [line]
                while True:
                    h = f.readline()
                    if h in (b"\r\n", b"\n", b""):
                        break
                    head.append(h)
                text = b"".join(head)
                m = re.search(rb"\ncontent-length:\s*(\d+)", text, re.I)
                if re.search(rb"\ntransfer-encoding:\s*chunked", text, re.I):
                    body = read_chunked(f)
                else:
                    body = f.read(int(m.group(1))) if m else b""
                self.requests.append(line.decode("latin-1").split(" ")[:2])
                out = ("%s method=%s" % (digest(body), line.split(b" ")[0].decode())).encode()
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n" % len(out) + out)
        except (OSError, ValueError):
            pass
        finally:
            c.close()


class PhpFpm:
    """A php-fpm master with one static pool on a unix socket."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.sock = os.path.join(prefix, "run", "fpm.sock")
        user = "user = nobody\ngroup = nogroup\n" if os.geteuid() == 0 else ""
        self.conf = os.path.join(prefix, "fpm.conf")
        with open(self.conf, "w") as f:
            f.write("[global]\npid = %s/fpm.pid\nerror_log = %s/fpm.log\ndaemonize = no\n"
                    "[www]\n%slisten = %s\nlisten.mode = 0666\npm = static\npm.max_children = 2\n"
                    "php_admin_value[post_max_size] = 64M\n"
                    % (prefix, prefix, user, self.sock))
        self.proc = None

    def start(self):
        args = [PHP_FPM, "-n", "-y", self.conf, "-F"] + (["-R"] if os.geteuid() == 0 else [])
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        end = time.time() + 10
        while not os.path.exists(self.sock) and time.time() < end:
            time.sleep(0.02)
        if not os.path.exists(self.sock):
            raise RuntimeError("php-fpm did not start")
        return self

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def have(path):
    return os.path.exists(path) or shutil.which(path) is not None
