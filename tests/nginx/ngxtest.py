# SPDX-License-Identifier: BSD-2-Clause
"""ngxtest - helpers for the nginx module's tests.

Starts the stock Debian nginx (/usr/sbin/nginx) with the module loaded on
free loopback ports in a temporary prefix, a python upstream when a test
needs one, and speaks raw HTTP/1.1 over sockets so tests control every
byte. What every adapter's tests do with a server process (ports, logs,
stopping, the prefix) comes from tests/lib/servertest.py. Never prints a
token, a secret or a cookie value.
"""

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../lib"))
from servertest import Daemon, Response, ServerCase, free_port, wait_port  # noqa: E402,F401

NGINX = os.environ.get("CSRF_NGINX", "/usr/sbin/nginx")
MODULE = os.environ.get("CSRF_NGX_MODULE", "")


MAIN_TEMPLATE = """
load_module {module};
worker_processes {workers};
error_log {prefix}/error.log {log_level};
pid {prefix}/nginx.pid;
{user}
events {{ worker_connections 256; }}
http {{
    default_type application/octet-stream;
    types {{ text/html html; text/plain txt; }}
    log_format csrf '$request_method $request_uri $status $csrf_result';
    access_log {prefix}/access.log csrf;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
{http}
    server {{
        listen 127.0.0.1:{settle};
        access_log off;
        csrf off;
        location / {{ return 204; }}
    }}
}}
"""


class Nginx(Daemon):
    """One nginx master with one worker (or workers); http is the body of
    the http block ({port}, {prefix} and {upstream} are substituted)."""

    STOP_SIGNAL = signal.SIGQUIT
    CRASH = r"exited on signal|exited with fatal code|core dumped"

    def __init__(self, http, upstream_port=None, log_level="info", ports=1, workers=1):
        super().__init__("csrf-ngx-")
        self.ports = [free_port() for _ in range(ports)]
        self.port = self.ports[0]
        self.settle = free_port()
        self.workers = workers
        fmt = {"port": self.port, "prefix": self.prefix, "upstream": upstream_port or 0}
        for i, p in enumerate(self.ports):
            fmt["port%d" % i] = p
        user = "user nobody nogroup;" if os.geteuid() == 0 else ""
        self.conf = os.path.join(self.prefix, "nginx.conf")
        with open(self.conf, "w") as f:
            f.write(MAIN_TEMPLATE.format(module=MODULE, prefix=self.prefix, log_level=log_level, user=user,
                                         workers=workers, settle=self.settle, http=http.format(**fmt)))

    def test_config(self):
        """nginx -t: (returncode, output)."""
        r = subprocess.run([NGINX, "-t", "-p", self.prefix, "-c", self.conf], capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr

    def start(self):
        self.proc = subprocess.Popen([NGINX, "-p", self.prefix, "-c", self.conf, "-g", "daemon off; master_process on;"],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for p in self.ports + [self.settle]:
            if not wait_port(p):
                self.stop()
                raise RuntimeError("nginx did not start:\n" + self.error_log())
        return self

    def worker_pids(self):
        out = subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True, text=True).stdout
        return [int(x) for x in out.split()]

    def barrier(self):
        """Returns once every request answered so far is in the logs.

        nginx writes a request's log line after its answer has gone, so a
        client can read the answer first (under load it does). One worker
        ends a request, its log line included, before its event loop takes
        a new connection: once the barrier server (no log, no module) has
        answered, every earlier answer is logged. With more workers no
        such order holds."""
        assert self.workers == 1, "the barrier needs one worker"
        got = exchange(self.settle, b"GET / HTTP/1.1\r\nHost: barrier\r\nConnection: close\r\n\r\n")
        assert got.startswith(b"HTTP/1.1 204"), "the barrier answered 204"

    def access_log(self):
        """The access log once every request answered so far is in it."""
        self.barrier()
        return self.log("access.log")


def recv_response(sock, head_only=False):
    """Reads one HTTP/1.1 response (Content-Length, chunked or close)."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = sock.recv(65536)
        if not d:
            break
        buf += d
    if b"\r\n\r\n" not in buf:
        return None
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = []
    for l in lines[1:]:
        k, _, v = l.partition(":")
        headers.append((k.strip().lower(), v.strip()))
    r = Response(status, headers, b"", head)
    if head_only or status in (204, 304):
        return r
    te = r.header("transfer-encoding")
    cl = r.header("content-length")
    if te and "chunked" in te.lower():
        body = b""
        data = rest
        while True:
            while b"\r\n" not in data:
                d = sock.recv(65536)
                if not d:
                    r.body = body
                    return r
                data += d
            line, data = data.split(b"\r\n", 1)
            n = int(line.split(b";")[0], 16)
            while len(data) < n + 2:
                d = sock.recv(65536)
                if not d:
                    break
                data += d
            if n == 0:
                break
            body += data[:n]
            data = data[n + 2:]
        r.body = body
    elif cl is not None:
        n = int(cl)
        while len(rest) < n:
            d = sock.recv(65536)
            if not d:
                break
            rest += d
        r.body = rest[:n]
    else:
        while True:
            d = sock.recv(65536)
            if not d:
                break
            rest += d
        r.body = rest
    return r


def raw(port, data, timeout=10.0):
    """Sends raw bytes, returns the parsed response or None when the
    connection closed without one."""
    s = socket.create_connection(("127.0.0.1", port), timeout)
    try:
        s.sendall(data)
        try:
            return recv_response(s)
        except (ConnectionResetError, socket.timeout):
            return None
    finally:
        s.close()


def recv_all(sock):
    """Every byte sock receives until the peer closes."""
    got = b""
    while True:
        d = sock.recv(65536)
        if not d:
            return got
        got += d


def exchange(port, data, timeout=10.0):
    """Sends raw bytes, returns every byte of the answer, unparsed, once
    the server has closed the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout) as s:
        s.sendall(data)
        return recv_all(s)


def request(port, method, path, headers=None, body=b"", host=None):
    """One request; headers is a list of (name, value); Host defaults to
    127.0.0.1:port."""
    if isinstance(body, str):
        body = body.encode()
    h = [("Host", host if host is not None else "127.0.0.1:%d" % port)]
    h += list(headers or [])
    if body or method in ("POST", "PUT", "PATCH"):
        if not any(k.lower() in ("content-length", "transfer-encoding") for k, _ in h):
            h.append(("Content-Length", str(len(body))))
    h.append(("Connection", "close"))
    head = "%s %s HTTP/1.1\r\n" % (method, path) + "".join("%s: %s\r\n" % kv for kv in h) + "\r\n"
    return raw(port, head.encode("latin-1") + body)


META_PARAM = re.compile(rb'<meta name="csrf-param" content="([A-Za-z0-9_-]+)">')
META_TOKEN = re.compile(rb'<meta name="csrf-token" content="([A-Za-z0-9_-]+)">')
HIDDEN = re.compile(rb'<input type="hidden" name="[A-Za-z0-9_-]+" value="[A-Za-z0-9_-]+">')
META = re.compile(rb'<meta name="csrf-param" content="[A-Za-z0-9_-]+"><meta name="csrf-token" content="[A-Za-z0-9_-]+">')


def strip_injected(body):
    """The body without the elements the module injects."""
    return META.sub(b"", HIDDEN.sub(b"", body))


def count_injected(body):
    return len(HIDDEN.findall(body)), len(META.findall(body))


def secret_cookie(resp):
    """'name=value' of the secret cookie set by resp (for a Cookie header),
    or None."""
    for v in resp.all("set-cookie"):
        pair = v.split(";", 1)[0]
        if "csrf_secret=" in pair:
            return pair
    return None


def session_tokens(port, path="/", cookie=None, host=None):
    """GETs an HTML page and returns (cookie header, field name, token)."""
    hdrs = [("Cookie", cookie)] if cookie else []
    r = request(port, "GET", path, hdrs, host=host)
    c = secret_cookie(r) or cookie
    p = META_PARAM.search(r.body)
    t = META_TOKEN.search(r.body)
    return c, (p.group(1).decode() if p else None), (t.group(1).decode() if t else None)


class Upstream:
    """A threaded TCP server: handler(conn, head_bytes, body_bytes) writes
    the response itself (so tests control chunking and timing)."""

    def __init__(self, handler):
        self.handler = handler
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.requests = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(c,), daemon=True).start()

    def _one(self, c):
        try:
            buf = b""
            while b"\r\n\r\n" not in buf:
                d = c.recv(65536)
                if not d:
                    return
                buf += d
            head, body = buf.split(b"\r\n\r\n", 1)
            m = re.search(rb"\r\ncontent-length:\s*(\d+)", head, re.I)
            if m:
                n = int(m.group(1))
                while len(body) < n:
                    d = c.recv(65536)
                    if not d:
                        break
                    body += d
            self.requests.append((head, body))
            self.handler(c, head, body)
        except OSError:
            pass
        finally:
            try:
                c.close()
            except OSError:
                pass

    def close(self):
        self.sock.close()


def send_chunked(c, pieces, content_type="text/html; charset=utf-8", extra=b"", delay=0.0):
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: " + content_type.encode() +
              b"\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n" + extra + b"\r\n")
    for p in pieces:
        if not p:
            continue
        c.sendall(b"%x\r\n" % len(p) + p + b"\r\n")
        if delay:
            time.sleep(delay)
    c.sendall(b"0\r\n\r\n")


def send_whole(c, body, content_type="text/html", status=b"200 OK", extra=b""):
    c.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Type: " + content_type.encode() +
              b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n" + extra + b"\r\n" + body)


class ProxyCase(ServerCase):
    """Test classes with one nginx (the class's HTTP, cls.ngx) in front of
    one Upstream (the class's upstream(c, head, body) classmethod), started
    once for the class; prepare(ngx) writes what nginx needs before it
    starts: by default the class's FILES ({name in the prefix: content})."""

    HTTP = ""
    PORTS = 1
    FILES = {}

    @classmethod
    def prepare(cls, ngx):
        for name, data in cls.FILES.items():
            ngx.write(name, data)

    @classmethod
    def make_upstream(cls):
        return Upstream(cls.upstream)

    @classmethod
    def make_server(cls, upstream_port):
        cls.ngx = Nginx(cls.HTTP, upstream_port, ports=cls.PORTS)
        return cls.ngx


class SessionCase(ProxyCase):
    """A ProxyCase that, once nginx runs, has a session of its own: port,
    self_origin, and the cookie, field name and token GET / gave."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.port = cls.ngx.port
        cls.self_origin = "http://127.0.0.1:%d" % cls.port
        cls.cookie, cls.field, cls.token = session_tokens(cls.port)
