# SPDX-License-Identifier: BSD-2-Clause
"""aptest - helpers for mod_csrf_protect's tests.

Starts Debian's apache2 (/usr/sbin/apache2) in the foreground with its own
configuration in a temporary ServerRoot (its own PidFile, runtime
directory, logs and loopback ports; User/Group nobody when run as root),
with the module loaded. Raw HTTP/1.1 and the python upstream come from
tests/nginx/ngxtest.py, the process helpers from tests/lib/servertest.py.
Never prints a token, a secret or a cookie value.
"""

import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../nginx"))
sys.path.insert(0, os.path.join(HERE, "../lib"))
import ngxtest as T  # noqa: E402,F401
from servertest import Daemon, ServerCase, free_port, wait_port  # noqa: E402

APACHE = os.environ.get("CSRF_APACHE", "/usr/sbin/apache2")
MODULE = os.environ.get("CSRF_APACHE_MODULE", "")
# child_watch.so (tests/apache/CMakeLists.txt), preloaded: the master
# writes "csrf-test: apache2 child pid N exited with code S" or "...
# exited on signal S" to its error log for each child it reaps that died
# abnormally (Apache itself logs a child killed by a signal, AH00051 and
# AH00052, but neither SIGKILL nor an exit status). Unset (a test run by
# hand without it), only Apache's own lines are seen.
CHILD_WATCH = os.environ.get("CSRF_APACHE_CHILD_WATCH", "")
MODS = "/usr/lib/apache2/modules"
# GracefulShutdownTimeout: how long a graceful stop waits for a child
# still serving a connection before the master stops it with SIGTERM.
# The master looks at its children once a second, the first time 1 s
# after SIGWINCH, and gives up at its first look past GRACE: with 1, a
# child still exiting at 1 s (ASan, a loaded machine) would get SIGTERM; with
# 2 it has one more second, at no cost to a stop whose children are gone
# at the first look (all of them in the tests, 1.0 s).
GRACE = 2

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
GracefulShutdownTimeout {grace}
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


class Apache(Daemon):
    """One apache2 in the foreground. body is the rest of the
    configuration ({port}, {port1}..., {prefix}, {upstream}, {mods} are
    substituted); modules names the mod_*.so to load besides the base."""

    # Apache's "AH00052: child pid N exit signal Segmentation fault (11)"
    # (AH00051 "..., possible coredump in DIR"), child_watch.so's lines,
    # which cover SIGKILL and exit statuses too; a stop, a restart or a
    # graceful restart (SIGTERM, SIGHUP, SIGUSR1 to the children) writes
    # none of them. Checked by cleanup() in every run, not only under ASan.
    CRASH = r"exit signal|core dumped|Segmentation|exited on signal|exited with code [1-9]"
    CHECK_DEAD = True
    # a graceful stop (apache2 -k graceful-stop), see stop(); past GRACE
    # the master itself sends its children SIGTERM and SIGKILL (at 9 s)
    STOP_SIGNAL = signal.SIGWINCH
    STOP_WAIT = GRACE + 12
    STOP_THEN = ((signal.SIGTERM, 10),)

    def __init__(self, body, modules=(), mpm="event", upstream_port=None, ports=1, log_level="info",
                 module=None):
        super().__init__("csrf-ap-")
        for d in ("run", "htdocs", "cgi-bin"):
            os.makedirs(os.path.join(self.prefix, d))
            os.chmod(os.path.join(self.prefix, d), 0o755)
        self.ports = [free_port() for _ in range(ports)]
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
                                module=module or MODULE, mpm_conf=MPM_CONF[mpm], grace=GRACE, body=body.format(**fmt)))
        if os.geteuid() == 0:
            # the children (nobody) write the run directory's sockets
            shutil.chown(os.path.join(self.prefix, "run"), "nobody", "nogroup")

    def server_env(self):
        """servertest's with CHILD_WATCH preloaded (after libasan), and
        under ASan an empty directory for PHP's extension .ini files:
        mod_php dlopens the extensions they name (opcache, ...) with
        RTLD_DEEPBIND, which ASan refuses at start (google/sanitizers#611);
        the tests' scripts need none of them."""
        env = super().server_env()
        if env is not None:
            os.makedirs(self.path("php.d"), exist_ok=True)
            env["PHP_INI_SCAN_DIR"] = self.path("php.d")
        if CHILD_WATCH:
            env = env if env is not None else dict(os.environ)
            env["LD_PRELOAD"] = ":".join(p for p in (env.get("LD_PRELOAD", ""), CHILD_WATCH) if p)
        return env

    def config_test(self):
        """apache2 -t: (returncode, output)."""
        r = subprocess.run([APACHE, "-t", "-f", self.conf], capture_output=True, text=True, env=self.server_env())
        return r.returncode, r.stdout + r.stderr

    def start(self):
        # a session of its own: on SIGTERM apache2 signals its whole
        # process group, which would otherwise be the test's
        self.proc = subprocess.Popen([APACHE, "-f", self.conf, "-DFOREGROUND"], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True, env=self.server_env())
        for p in self.ports:
            if not wait_port(p):
                out = self.stop()
                raise RuntimeError("apache2 did not start:\n%s\n%s" % (out, self.error_log()))
        return self

    def stop(self):
        """A graceful stop: SIGWINCH, then SIGTERM (and SIGKILL) only past
        GRACE and a few seconds; returns the output pipe's text.

        A stop by SIGTERM raced in event's children: the main thread's
        close_worker_sockets() called apr_os_sock_get() on each socket
        of worker_sockets[], which a worker thread might just have closed,
        its connection's pool freed, and the child died by SIGSEGV (2 of
        300 runs of apache.asan.cases' test_cases.py, docs/hardening.md);
        a graceful stop never calls it. The master looks at its children once a second,
        so a stop takes 1 s when the clients have closed their
        connections. One left open holds it up to GRACE (prefork keeps
        serving an idle keep-alive connection; event closes it at once but
        lingers until the client closes too), and past GRACE the master
        sends SIGTERM to the children (the racy path again): stop() says
        so on stderr when a stop took more than the first second."""
        start = time.monotonic()
        out = super().stop()
        if time.monotonic() - start > 1.5:
            sys.stderr.write("aptest: the graceful stop of %s took %.1f s (GracefulShutdownTimeout %d): a "
                             "connection left open?\n" % (self.prefix, time.monotonic() - start, GRACE))
        return out

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
            text = self.log(name)
            if all(e in text for e in expect) or time.time() > end:
                return text
            time.sleep(0.05)

    def app_hits(self):
        """The lines backends' app.php appended to run/app.hits."""
        return self.log("run/app.hits").splitlines()


class ApacheCase(ServerCase):
    """Test classes with one apache2 (the class's CONF, MODULES, MPM; cls.ap)
    in front of one upstream (make_upstream(), the class's), both started
    once for the class; prepare(ap) writes what the server needs before it
    starts."""

    CONF = ""
    MODULES = ()
    MPM = "event"

    @classmethod
    def make_upstream(cls):
        return T.Upstream(lambda c, head, body: T.send_whole(c, b""))

    @classmethod
    def make_server(cls, upstream_port):
        cls.ap = Apache(cls.CONF, modules=cls.MODULES, mpm=cls.MPM, upstream_port=upstream_port)
        return cls.ap
