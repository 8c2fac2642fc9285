# SPDX-License-Identifier: BSD-2-Clause
"""servertest - what the python tests of every adapter do with a server
process (tests/nginx/ngxtest.py, tests/apache/aptest.py,
tests/cgi/cgitest.py): pick a free loopback port, wait until a server
listens on it, read its logs, stop it, and run it in a temporary prefix of
its own, and read an answer's headers. Each adapter's module keeps what is its server's own (its
configuration, how its logs are known to be complete)."""

import os
import random
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

# The sanitizer runs (nginx.asan, apache.asan; docs/hardening.md "The
# server modules under ASan"): the path of the compiler's libasan, with
# which a server is started by LD_PRELOAD so the stock binary can load a
# module built with -fsanitize=address,undefined.
ASAN_PRELOAD = os.environ.get("CSRF_ASAN_PRELOAD", "")

# Why each option: log_path, every ASan report into a file per process in
# the prefix's asan/ (world-writable: the workers run as nobody under
# root), which cleanup() reads, instead of a stderr pipe nobody reads
# until the server stops (UBSan's go to the error log, see
# sanitizer_reports); halt_on_error=1, a worker ends at its first report
# (UBSan's checks do so too: the module is built
# -fno-sanitize-recover=undefined); detect_leaks=0, the servers' own memory (nginx's cycle and its pools,
# APR's pools, OpenSSL's tables) is left to the exit, not freed: with
# LeakSanitizer one nginx worker's exit after one request reports 221,184
# bytes from ngx_alloc (the module's memory lives in those pools;
# nginx.memory watches it grow or not);
# detect_stack_use_after_return=1, a pointer to a stack buffer the module
# hands the library and the library keeps past the call is a report too;
# print_stacktrace=1 for UBSan, which prints none by default;
# handle_abort=1 and handle_sigill=1, a worker killed by SIGABRT (glibc's
# fortify and stack-protector checks, assert) or SIGILL (__builtin_trap)
# writes a report with its stack too (ASan handles only SIGSEGV and SIGBUS
# by default); abort_on_error=1, a worker a sanitizer stops dies by
# SIGABRT rather than exit(1), which Apache's parent never logs: both
# servers log a child killed by a signal, which crashed() finds and
# cleanup() fails on even when no report file was written.
# allow_user_segv_handler=0, ASan keeps its SIGSEGV and SIGBUS handlers
# when the server installs its own: Apache's (sig_coredump) took a
# child's SIGSEGV, which then died with no report and no stack.
# verify_asan_link_order is left on: LD_PRELOAD puts libasan first, and a
# server started without it fails at once rather than half-instrumented.
ASAN_OPTIONS = ("halt_on_error=1:abort_on_error=1:handle_abort=1:handle_sigill=1:detect_leaks=0:"
                "detect_stack_use_after_return=1:allow_user_segv_handler=0")
UBSAN_OPTIONS = "halt_on_error=1:abort_on_error=1:print_stacktrace=1"


def sanitizer_env(prefix):
    """None (the caller's environment) unless CSRF_ASAN_PRELOAD is set,
    then the caller's with libasan preloaded and the sanitizers' options,
    their reports going to asan/ in prefix."""
    if not ASAN_PRELOAD:
        return None
    d = os.path.join(prefix, "asan")
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o1777)
    log = "log_path=" + os.path.join(d, "report")
    return dict(os.environ, LD_PRELOAD=ASAN_PRELOAD, ASAN_OPTIONS=ASAN_OPTIONS + ":" + log,
                UBSAN_OPTIONS=UBSAN_OPTIONS + ":" + log)


def sanitizer_reports(prefix, error_log):
    """The text of every sanitizer report a server in prefix wrote, ""
    when none: ASan's, one file per process in asan/, and UBSan's lines in
    error_log (its text). gcc 12's libubsan, loaded with a module by
    dlopen beside a preloaded libasan, ignores log_path (a two-line
    library dlopen'd by a two-line program shows it) and writes to
    stderr, which nginx and Apache point at their error log."""
    d = os.path.join(prefix, "asan")
    if not os.path.isdir(d):
        return ""
    found = "".join(read_text(os.path.join(d, f)) for f in sorted(os.listdir(d)))
    return found + "".join(l + "\n" for l in error_log.splitlines() if re.search(r"runtime error:|Sanitizer", l))


# Ports for the servers the tests start, picked as tests/nginx/net.mjs
# picks them (see there why): below the kernel's ephemeral range, where no
# port-0 bind or outgoing connection on the machine can take one before
# the server binds it (binding port 0 and closing gave it back to them),
# and below the ctest tests' fixed bases (28100 and up) and tests/fleet's
# 21000-27999; reserved among the tests by a listener on 127.0.0.2:PORT
# held until wait_port sees the server on 127.0.0.1:PORT (or the process
# ends).
PORT_RANGE = (10000, 21000)
_RESERVED = {}


def _reserve(port):
    r = socket.socket()
    try:
        r.bind(("127.0.0.2", port))
        r.listen(1)
        probe = socket.socket()
        try:
            probe.bind(("127.0.0.1", port))
        finally:
            probe.close()
    except OSError:
        r.close()
        return False
    _RESERVED[port] = r
    return True


def release_port(port):
    """Ends the reservation free_port made (a server accepts on the port
    now, or it was not used)."""
    r = _RESERVED.pop(port, None)
    if r is not None:
        r.close()


def free_port():
    """A port on 127.0.0.1 no other test picks, free until the server the
    caller starts there takes it (wait_port ends the reservation)."""
    lo, hi = PORT_RANGE
    for _ in range(200):
        port = random.randrange(lo, hi)
        if port not in _RESERVED and _reserve(port):
            return port
    raise OSError("no free loopback port in %d-%d" % (lo, hi - 1))


def wait_port(port, proc=None, timeout=10.0):
    """True once something accepts on 127.0.0.1:port; False after timeout
    seconds, or as soon as proc (when given) has exited."""
    end = time.time() + timeout
    while time.time() < end:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            release_port(port)
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


def stop(proc, sig=signal.SIGTERM, timeout=10, then=()):
    """Sends sig to proc when it still runs and waits for it to exit; past
    timeout seconds sends each (signal, seconds) of then in turn, and
    SIGKILL last; returns what it wrote to its output pipe, if it has one
    ("" when none, or when it had already exited)."""
    if proc is None or proc.poll() is not None:
        return ""
    for s, t in ((sig, timeout),) + tuple(then):
        proc.send_signal(s)
        try:
            return (proc.communicate(timeout=t)[0] or b"").decode(errors="replace")
        except subprocess.TimeoutExpired:
            pass
    proc.kill()
    return (proc.communicate()[0] or b"").decode(errors="replace")


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
    # seconds stop() waits after STOP_SIGNAL, then the (signal, seconds)
    # it sends in turn, SIGKILL after the last (servertest.stop())
    STOP_WAIT = 10
    STOP_THEN = ()
    CRASH = None
    # cleanup() fails on crashed() in every run, not only under ASan
    CHECK_DEAD = False

    def __init__(self, name):
        self.prefix = tempfile.mkdtemp(prefix=name)
        os.chmod(self.prefix, 0o755)
        self.proc = None
        # what the server wrote to its output pipe, kept by stop() for
        # cleanup() (a test may stop the server itself before it)
        self.output = ""

    def path(self, name):
        return os.path.join(self.prefix, name)

    def write(self, name, data, mode=0o644):
        p = self.path(name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        os.chmod(p, mode)
        return p

    def server_env(self):
        """The environment to start the server (or its -t) in:
        sanitizer_env() of the prefix."""
        return sanitizer_env(self.prefix)

    def sanitizer_reports(self):
        """sanitizer_reports() of the prefix and the error log."""
        return sanitizer_reports(self.prefix, self.error_log())

    def log(self, name):
        """A log as it is now (see the subclass for when it is complete)."""
        return read_text(self.path(name))

    def error_log(self):
        return self.log("error.log")

    def crashed(self):
        """Lines of the error log that show a child died (killed by a
        signal, or for nginx exited non-zero); [] without a CRASH."""
        if not self.CRASH:
            return []
        return [l for l in self.error_log().splitlines() if re.search(self.CRASH, l)]

    def stop(self):
        """Stops the server; returns what it wrote to its output pipe, which
        is kept for cleanup() too."""
        out = stop(self.proc, self.STOP_SIGNAL, self.STOP_WAIT, self.STOP_THEN)
        self.proc = None
        self.output += out
        return out

    def cleanup(self):
        """Stops the server and removes its prefix; under ASan (or with
        CHECK_DEAD), raises AssertionError (the prefix kept) when a
        sanitizer reported or a child died (crashed(): a worker killed by
        a signal writes no report unless ASan handles that signal, and one
        that exits non-zero writes none at all)."""
        self.stop()
        reports = self.sanitizer_reports()
        if ASAN_PRELOAD and re.search(r"Sanitizer|runtime error:", self.output):
            # one that missed its log_path (a process that lost the options),
            # also when the test stopped the server before
            reports += self.output
        dead = self.crashed() if ASAN_PRELOAD or self.CHECK_DEAD else []
        if dead:
            reports += "a child died (error log):\n" + "\n".join(dead) + "\n"
        if reports:
            raise AssertionError("sanitizer report or dead child in %s:\n%s" % (self.prefix, reports[:8000]))
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
        try:
            cls.server.cleanup()
        finally:
            cls.up.close()
