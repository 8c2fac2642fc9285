# SPDX-License-Identifier: BSD-2-Clause
"""servertest - what the python tests of every adapter do with a server
process (tests/nginx/ngxtest.py, tests/apache/aptest.py,
tests/cgi/cgitest.py): pick a free loopback port, wait until a server
listens on it, read its logs, stop it, and run it in a temporary prefix of
its own, and read an answer's headers. Each adapter's module keeps what is its server's own (its
configuration, how its logs are known to be complete)."""

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port, proc=None, timeout=10.0):
    """True once something accepts on 127.0.0.1:port; False after timeout
    seconds, or as soon as proc (when given) has exited."""
    end = time.time() + timeout
    while time.time() < end:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def read_text(path):
    """The file's text (bad bytes replaced), "" while it does not exist."""
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def stop(proc, sig=signal.SIGTERM, timeout=10):
    """Sends sig to proc when it still runs and waits for it to exit,
    killing it after timeout seconds; returns what it wrote to its output
    pipe, if it has one ("" when none, or when it had already exited)."""
    if proc is None or proc.poll() is not None:
        return ""
    proc.send_signal(sig)
    try:
        out = proc.communicate(timeout=timeout)[0]
    except subprocess.TimeoutExpired:
        proc.kill()
        out = proc.communicate()[0]
    return (out or b"").decode(errors="replace")


class Response:
    """An HTTP answer as the tests read it: status, headers (a list of
    (lower-case name, value)), body, and the head as it came."""

    def __init__(self, status, headers, body, raw_head):
        self.status = status
        self.headers = headers
        self.body = body
        self.raw_head = raw_head

    def header(self, name):
        """The first value of the header name, or None."""
        for k, v in self.headers:
            if k == name.lower():
                return v
        return None

    def all(self, name):
        return [v for k, v in self.headers if k == name.lower()]


class Daemon:
    """A server run in a temporary prefix of its own: path() and write()
    in it, log(name) reads a log there, stop() sends STOP_SIGNAL,
    cleanup() removes the prefix too (kept when CSRF_KEEP_TMP is set); as
    a context manager it is started and cleaned up. A subclass sets proc
    in its start() and CRASH, the error log lines that show a child died."""

    STOP_SIGNAL = signal.SIGTERM
    CRASH = None

    def __init__(self, name):
        self.prefix = tempfile.mkdtemp(prefix=name)
        os.chmod(self.prefix, 0o755)
        self.proc = None

    def path(self, name):
        return os.path.join(self.prefix, name)

    def write(self, name, data, mode=0o644):
        p = self.path(name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        os.chmod(p, mode)
        return p

    def log(self, name):
        """A log as it is now (see the subclass for when it is complete)."""
        return read_text(self.path(name))

    def error_log(self):
        return self.log("error.log")

    def crashed(self):
        """Lines of the error log that show a child died."""
        return [l for l in self.error_log().splitlines() if re.search(self.CRASH, l)]

    def stop(self):
        out = stop(self.proc, self.STOP_SIGNAL)
        self.proc = None
        return out

    def cleanup(self):
        self.stop()
        if not os.environ.get("CSRF_KEEP_TMP"):
            shutil.rmtree(self.prefix, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *a):
        self.cleanup()


class ServerCase(unittest.TestCase):
    """Test classes with one server in front of one upstream, both started
    once for the class and stopped after it: make_upstream() and
    make_server(upstream_port) are the class's (the server is also
    cls.server); prepare(server) writes what the server needs before it
    starts."""

    @classmethod
    def prepare(cls, server):
        pass

    @classmethod
    def setUpClass(cls):
        cls.up = cls.make_upstream()
        cls.server = cls.make_server(cls.up.port)
        try:
            cls.prepare(cls.server)
            cls.server.start()
        except Exception:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()
        cls.up.close()
