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
from servertest import (ASAN_PRELOAD, Daemon, Response, ServerCase, free_port, read_text,  # noqa: E402,F401
                        sanitizer_env, sanitizer_reports, wait_port)

NGINX = os.environ.get("CSRF_NGINX", "/usr/sbin/nginx")
MODULE = os.environ.get("CSRF_NGX_MODULE", "")


MAIN_TEMPLATE = """
load_module {module};
{more_modules}{sanitizer_env}
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
    the http block ({port}, {prefix} and {upstream} are substituted);
    more_modules, paths of modules loaded after the csrf module."""

    STOP_SIGNAL = signal.SIGQUIT
    # a worker killed by a signal, or exited non-zero (nginx logs every
    # worker's exit: "exited with code 0" at a stop or a reload is normal)
    CRASH = r"exited on signal|exited with (fatal )?code [1-9]|core dumped"

    def __init__(self, http, upstream_port=None, log_level="info", ports=1, workers=1, more_modules=()):
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
            more = "".join("load_module %s;\n" % m for m in more_modules)
            # nginx empties its workers' environment: UBSan, which starts
            # at its first report in a worker, would find no options there
            senv = "env ASAN_OPTIONS;\nenv UBSAN_OPTIONS;\n" if ASAN_PRELOAD else ""
            f.write(MAIN_TEMPLATE.format(module=MODULE, more_modules=more, sanitizer_env=senv, prefix=self.prefix,
                                         log_level=log_level, user=user, workers=workers, settle=self.settle,
                                         http=http.format(**fmt)))

    def test_config(self):
        """nginx -t: (returncode, output)."""
        r = subprocess.run([NGINX, "-t", "-p", self.prefix, "-c", self.conf], capture_output=True, text=True,
                           env=self.server_env())
        return r.returncode, r.stdout + r.stderr

    def start(self):
        self.proc = subprocess.Popen([NGINX, "-p", self.prefix, "-c", self.conf, "-g", "daemon off; master_process on;"],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=self.server_env())
        for p in self.ports + [self.settle]:
            if not wait_port(p):
                self.stop()
                raise RuntimeError("nginx did not start:\n" + self.error_log())
        # the master listens before it forks its workers: a test that
        # reads the workers' pids at once could find none
        deadline = time.time() + 10
        while len(self.worker_pids()) < self.workers:
            if time.time() > deadline:
                self.stop()
                raise RuntimeError("nginx started no worker:\n" + self.error_log())
            time.sleep(0.01)
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
# the injected field; past the depth guard (a form read after about 480
# start tags, docs/architecture.md "The tree depth cap") it names its
# form by the injector's id (PINNED) or, after a ghost form, by its own
HIDDEN = re.compile(rb'<input type="hidden" name="[A-Za-z0-9_-]+" value="[A-Za-z0-9_-]+"(?: form="[A-Za-z0-9_.:-]{1,64}")?>')
PINNED = re.compile(rb' id="csrf-[A-Za-z0-9_-]{16}"')
META = re.compile(rb'<meta name="csrf-param" content="[A-Za-z0-9_-]+"><meta name="csrf-token" content="[A-Za-z0-9_-]+">')


def strip_injected(body):
    """The body without the elements the module injects."""
    return META.sub(b"", HIDDEN.sub(b"", PINNED.sub(b"", body)))


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


def recv_head(c):
    """(head, the bytes after it) of a request read from c, or None when
    the connection ends first."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = c.recv(65536)
        if not d:
            return None
        buf += d
    return tuple(buf.split(b"\r\n\r\n", 1))


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
            got = recv_head(c)
            if got is None:
                return
            head, body = got
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
        try:
            cls.cookie, cls.field, cls.token = session_tokens(cls.port)
        except Exception:
            # unittest skips tearDownClass after a failed setUpClass: stop
            # nginx here (and read its sanitizer reports, if any)
            cls.tearDownClass()
            raise


# ---- WebSocket (RFC 6455): an echo upstream and a handshake client ----

WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455 1.3


def ws_accept(key):
    import base64
    import hashlib
    return base64.b64encode(hashlib.sha1(key + WS_GUID).digest())


def ws_frame(payload, mask=None):
    """One final text frame (payload under 126 bytes), masked when mask
    (4 bytes) is given, as a client must."""
    assert len(payload) < 126
    if mask is None:
        return bytes([0x81, len(payload)]) + payload
    return bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def ws_read_frame(sock):
    """The payload of one frame under 126 bytes (unmasked when masked), or
    None when the connection ended first."""
    buf = b""
    while len(buf) < 2:
        d = sock.recv(2 - len(buf))
        if not d:
            return None
        buf += d
    n = buf[1] & 0x7F
    masked = buf[1] & 0x80
    want = n + (4 if masked else 0)
    rest = b""
    while len(rest) < want:
        d = sock.recv(want - len(rest))
        if not d:
            return None
        rest += d
    if not masked:
        return rest
    mask, data = rest[:4], rest[4:]
    return bytes(b ^ mask[i % 4] for i, b in enumerate(data))


def ws_echo(c, head, body):
    """An Upstream handler: a WebSocket handshake is answered 101 and its
    text frames are echoed until the client closes; anything else gets a
    plain 200 that says it was no handshake."""
    m = re.search(rb"\r\nsec-websocket-key:\s*([A-Za-z0-9+/=]+)", head, re.I)
    if not m or not re.search(rb"\r\nupgrade:[^\r]*websocket", head, re.I):
        send_whole(c, b"no handshake", "text/plain")
        return
    c.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              b"Sec-WebSocket-Accept: " + ws_accept(m.group(1)) + b"\r\n\r\n")
    c.settimeout(10)
    while True:
        p = ws_read_frame(c)
        if p is None:
            return
        c.sendall(ws_frame(p))


def ws_handshake(port, path, headers, host=None, upgrade="websocket", connection="Upgrade", echo=b"ping"):
    """Opens a WebSocket to 127.0.0.1:port as a browser's handshake would
    (Upgrade, Connection, Sec-WebSocket-Key and -Version 13, and headers,
    a list of (name, value)). Returns (status, echoed): the answer's
    status, and when it was 101 the payload that came back for a text
    frame of echo (None otherwise); a refusal's body is read and
    dropped."""
    import base64
    key = base64.b64encode(os.urandom(16))
    h = [("Host", host or "127.0.0.1:%d" % port)]
    if upgrade is not None:
        h.append(("Upgrade", upgrade))
    if connection is not None:
        h.append(("Connection", connection))
    h += [("Sec-WebSocket-Key", key.decode()), ("Sec-WebSocket-Version", "13")] + list(headers)
    head = "GET %s HTTP/1.1\r\n" % path + "".join("%s: %s\r\n" % kv for kv in h) + "\r\n"
    s = socket.create_connection(("127.0.0.1", port), 10)
    try:
        s.sendall(head.encode("latin-1"))
        buf = b""
        while b"\r\n\r\n" not in buf:
            d = s.recv(4096)
            if not d:
                return None, None
            buf += d
        status = int(buf.split(b" ", 2)[1])
        if status != 101:
            return status, None
        if not re.search(rb"\r\nsec-websocket-accept:\s*" + re.escape(ws_accept(key)), buf, re.I):
            return status, None
        s.sendall(ws_frame(echo, os.urandom(4)))
        return status, ws_read_frame(s)
    finally:
        s.close()


def ws_rows(self_origin):
    """The handshake rows the nginx and Apache tests share; their servers
    proxy to ws_echo /ws/ (the default mode), /both/ (mode both), /public/
    (off), /log/ (report-only), /vote/ (unsafe GET) and /partner/ (which
    trusts http://partner.example:8443). Each row: (name, path, headers,
    Upgrade, Connection, status, the verdict's name in the access log)."""
    evil, so = ("Origin", "http://evil.example"), ("Origin", self_origin)
    ws, up = "websocket", "Upgrade"
    return [
        ("cross-site", "/ws/1", [evil], ws, up, 403, "websocket_origin"),
        ("cross-site, fetch metadata", "/ws/2",
         [evil, ("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Mode", ws)], ws, up, 403, "websocket_origin"),
        ("another port of the host", "/ws/3", [("Origin", "http://127.0.0.1:1")], ws, up, 403, "websocket_origin"),
        ("origin null", "/ws/4", [("Origin", "null")], ws, up, 403, "websocket_origin"),
        ("odd case, Connection list", "/ws/5", [evil], "WebSocket", "keep-alive, Upgrade", 403, "websocket_origin"),
        ("Upgrade list", "/ws/6", [evil], "h2c, websocket", up, 403, "websocket_origin"),
        ("mode both", "/both/1", [evil], ws, up, 403, "websocket_origin"),
        ("unsafe get, cross-site", "/vote/1", [evil], ws, up, 403, "websocket_origin"),
        ("unsafe get, no origin", "/vote/2", [], ws, up, 403, "no_evidence"),
        ("same origin", "/ws/10", [so], ws, up, 101, "origin_verified"),
        ("same origin, fetch metadata", "/ws/11", [so, ("Sec-Fetch-Site", "same-origin"), ("Sec-Fetch-Mode", ws)],
         ws, up, 101, "origin_verified"),
        ("same origin, odd case", "/ws/12", [so], "WEBSOCKET", "keep-alive, Upgrade", 101, "origin_verified"),
        ("no origin (not a browser)", "/ws/13", [], ws, up, 101, "origin_verified"),
        ("trusted origin", "/partner/1", [("Origin", "http://partner.example:8443")], ws, up, 101, "origin_verified"),
        ("mode both, same origin, no token", "/both/2", [so], ws, up, 101, "origin_verified"),
        ("unsafe get, same origin", "/vote/3", [so], ws, up, 101, "origin_verified"),
        ("protection off", "/public/1", [evil], ws, up, 101, "-"),
        ("report-only", "/log/1", [evil], ws, up, 101, "websocket_origin"),
    ]


def ws_run_rows(tc, port, rows, upstream):
    """Sends each row's handshake: a 101 must echo the frame, a refusal
    must not have reached upstream."""
    for name, path, headers, upgrade, connection, status, _ in rows:
        with tc.subTest(name):
            got, echoed = ws_handshake(port, path, headers, upgrade=upgrade, connection=connection)
            tc.assertEqual(got, status)
            if status == 101:
                tc.assertEqual(echoed, b"ping", "the echo upstream's frame came back")
            else:
                seen = [h for h, _ in upstream.requests if h.split(b" ", 2)[1] == path.encode()]
                tc.assertEqual(seen, [], "a refused handshake reached the upstream")


def ws_check_log(tc, read_log, rows):
    """Each row once in an access log of "METHOD PATH STATUS RESULT" lines.
    read_log() reads it; an upgraded connection's line is written when the
    socket closes, so it is read again until every line is there (10 s)."""
    want = {name: "GET %s %d %s" % (path, status, result) for name, path, _, _, _, status, result in rows}
    end = time.time() + 10
    lines = read_log().splitlines()
    while not all(w in lines for w in want.values()) and time.time() < end:
        time.sleep(0.05)
        lines = read_log().splitlines()
    for name, path, _, _, _, _, _ in rows:
        with tc.subTest(name):
            tc.assertEqual([l for l in lines if l.split(" ")[1:2] == [path]], [want[name]])
