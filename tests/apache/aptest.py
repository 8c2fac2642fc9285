# SPDX-License-Identifier: BSD-2-Clause
"""aptest - helpers for mod_csrf_protect's tests.

Starts Debian's apache2 (/usr/sbin/apache2) in the foreground with its own
configuration in a temporary ServerRoot (its own PidFile, runtime
directory, logs and loopback ports; User/Group nobody when run as root),
with the module loaded. Raw HTTP/1.1 and the python upstream come from
tests/nginx/ngxtest.py. Never prints a token, a secret or a cookie value.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../nginx"))
import ngxtest as T  # noqa: E402,F401

APACHE = os.environ.get("CSRF_APACHE", "/usr/sbin/apache2")
MODULE = os.environ.get("CSRF_APACHE_MODULE", "")
MODS = "/usr/lib/apache2/modules"

MAIN = """
ServerRoot {prefix}
ServerName 127.0.0.1
{listen}
PidFile {prefix}/httpd.pid
DefaultRuntimeDir {prefix}/run
Mutex file:{prefix}/run default
ErrorLog {prefix}/error.log
LogLevel {log_level}
{user}
LoadModule mpm_{mpm}_module {mods}/mod_mpm_{mpm}.so
LoadModule authz_core_module {mods}/mod_authz_core.so
LoadModule mime_module {mods}/mod_mime.so
{modules}
LoadModule csrf_protect_module {module}
TypesConfig /etc/mime.types
StartServers 2
{mpm_conf}
Timeout 20
KeepAlive On
DocumentRoot {prefix}/htdocs
<Directory {prefix}/htdocs>
    Require all granted
</Directory>
LogFormat "%m %U %>s %{{csrf_result}}n" csrf
CustomLog {prefix}/access.log csrf
{body}
"""

MPM_CONF = {
    "event": "ServerLimit 2\nThreadsPerChild 8\nMaxRequestWorkers 16",
    "prefork": "ServerLimit 4\nMaxRequestWorkers 4\nMinSpareServers 2",
}


class Apache:
    """One apache2 in the foreground. body is the rest of the
    configuration ({port}, {port1}..., {prefix}, {upstream}, {mods} are
    substituted); modules names the mod_*.so to load besides the base."""

    def __init__(self, body, modules=(), mpm="event", upstream_port=None, ports=1, log_level="info",
                 module=None):
        self.prefix = tempfile.mkdtemp(prefix="csrf-ap-")
        os.chmod(self.prefix, 0o755)
        for d in ("run", "htdocs", "cgi-bin"):
            os.makedirs(os.path.join(self.prefix, d))
            os.chmod(os.path.join(self.prefix, d), 0o755)
        self.ports = [T.free_port() for _ in range(ports)]
        self.port = self.ports[0]
        fmt = {"port": self.port, "prefix": self.prefix, "upstream": upstream_port or 0, "mods": MODS}
        for i, p in enumerate(self.ports):
            fmt["port%d" % i] = p
        user = "User nobody\nGroup nogroup" if os.geteuid() == 0 else ""
        loads = "\n".join("LoadModule %s_module %s/mod_%s.so" % (m, MODS, m) if m != "php" else
                          "LoadModule php_module %s/libphp8.2.so" % MODS for m in modules)
        self.conf = os.path.join(self.prefix, "httpd.conf")
        with open(self.conf, "w") as f:
            f.write(MAIN.format(prefix=self.prefix, listen="\n".join("Listen 127.0.0.1:%d" % p for p in self.ports),
                                log_level=log_level, user=user, mpm=mpm, mods=MODS, modules=loads,
                                module=module or MODULE, mpm_conf=MPM_CONF[mpm], body=body.format(**fmt)))
        if os.geteuid() == 0:
            # the children (nobody) write the run directory's sockets
            shutil.chown(os.path.join(self.prefix, "run"), "nobody", "nogroup")
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

    def config_test(self):
        """apache2 -t: (returncode, output)."""
        r = subprocess.run([APACHE, "-t", "-f", self.conf], capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr

    def start(self):
        # a session of its own: on SIGTERM apache2 signals its whole
        # process group, which would otherwise be the test's
        self.proc = subprocess.Popen([APACHE, "-f", self.conf, "-DFOREGROUND"], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        for p in self.ports:
            if not T.wait_port(p):
                out = self.stop()
                raise RuntimeError("apache2 did not start:\n%s\n%s" % (out, self.error_log()))
        return self

    def error_log(self):
        try:
            with open(self.path("error.log"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def access_log(self, *expect):
        """The access log, once each of the lines expect names is in it.

        apache2 writes a request's line after its answer has gone, on the
        thread that served it, so a client can read the answer first (under
        load it does), and no request on another connection orders it. So
        the test says what it waits for: up to 10 s, then the log as it is
        (the test's assertion says what is missing)."""
        return self.wait_log("access.log", *expect)

    def wait_log(self, name, *expect):
        end = time.time() + 10
        while True:
            try:
                with open(self.path(name), errors="replace") as f:
                    text = f.read()
            except OSError:
                text = ""
            if all(e in text for e in expect) or time.time() > end:
                return text
            time.sleep(0.05)

    def app_hits(self):
        """The lines backends' app.php appended to run/app.hits."""
        try:
            with open(self.path("run/app.hits")) as f:
                return f.read().splitlines()
        except OSError:
            return []

    def crashed(self):
        return [l for l in self.error_log().splitlines() if re.search(r"exit signal|core dumped|Segmentation", l)]

    def stop(self):
        out = ""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                out = self.proc.communicate(timeout=10)[0].decode(errors="replace")
            except subprocess.TimeoutExpired:
                self.proc.kill()
                out = self.proc.communicate()[0].decode(errors="replace")
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


class ApacheCase(unittest.TestCase):
    """Test classes with one apache2 (the class's CONF, MODULES, MPM) in
    front of one upstream (make_upstream(), the class's), both started
    once for the class; prepare(ap) writes what the server needs before it
    starts."""

    CONF = ""
    MODULES = ()
    MPM = "event"

    @classmethod
    def make_upstream(cls):
        return T.Upstream(lambda c, head, body: T.send_whole(c, b""))

    @classmethod
    def prepare(cls, ap):
        pass

    @classmethod
    def setUpClass(cls):
        cls.up = cls.make_upstream()
        cls.ap = Apache(cls.CONF, modules=cls.MODULES, mpm=cls.MPM, upstream_port=cls.up.port)
        try:
            cls.prepare(cls.ap)
            cls.ap.start()
        except Exception:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.ap.cleanup()
        cls.up.close()
