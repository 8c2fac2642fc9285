# SPDX-License-Identifier: BSD-2-Clause
"""csrf-cgi's own tests (tests/cgi) on a router build run under qemu-user:
csrf-cgi and csrf-key of dist/router/<arch> behind wrappers that run them
with qemu-<arch> -L /usr/<triplet> (the target's loader and libc), as
the CGI interpreter of the x86 busybox httpd (test_servers, every attack
row) and run directly (test_direct).

    qemu_cgi.py ARCH DIST      e.g. qemu_cgi.py mipsel build-check/router

Three tests of test_direct are left out here, each for a reason of the
emulator, not of the target:
  - test_program_that_cannot_run: glibc's posix_spawn reports a failed
    exec through memory its vfork child shares with the parent; qemu-user
    emulates vfork as fork, so the parent sees an exit status of 127 (a
    502) instead of the error (a 500). On hardware vfork shares memory.
  - test_every_truncated_configuration, test_every_truncated_answer_of_the_
    program: several hundred runs each (over two minutes under qemu for
    byte-order-free parsing that test_direct checks natively).
"""

import os
import stat
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CGI_TESTS = os.path.join(HERE, "..", "cgi")
TRIPLETS = {"mips": ("qemu-mips", "mips-linux-gnu"), "mipsel": ("qemu-mipsel", "mipsel-linux-gnu"),
            "armhf": ("qemu-arm", "arm-linux-gnueabihf"), "aarch64": ("qemu-aarch64", "aarch64-linux-gnu")}
LEFT_OUT = {
    "test_program_that_cannot_run": "qemu-user's vfork is a fork: posix_spawn cannot report the failed exec",
    "test_every_truncated_configuration": "hundreds of runs, architecture-free parsing; run natively",
    "test_every_truncated_answer_of_the_program": "hundreds of runs, architecture-free parsing; run natively",
}


def wrappers(arch, dist, where):
    """Scripts named csrf-cgi and csrf-key in where that exec the target's
    programs under qemu; returns their paths."""
    qemu, triplet = TRIPLETS[arch]
    out = []
    for prog in ("csrf-cgi", "csrf-key"):
        binary = os.path.abspath(os.path.join(dist, arch, prog))
        if not os.access(binary, os.X_OK):
            raise SystemExit("%s is not built (scripts/router.sh %s)" % (binary, arch))
        path = os.path.join(where, prog)
        with open(path, "w") as f:
            f.write('#!/bin/sh\nexec %s -L /usr/%s %s "$@"\n' % (qemu, triplet, binary))
        os.chmod(path, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
        out.append(path)
    return out


def main():
    arch, dist = sys.argv[1], sys.argv[2]
    where = tempfile.mkdtemp(prefix="csrf-qemu-%s-" % arch)
    os.chmod(where, 0o755)
    cgi, key = wrappers(arch, dist, where)
    os.environ["CSRF_CGI"] = cgi
    os.environ["CSRF_KEY"] = key
    sys.path.insert(0, CGI_TESTS)
    import test_direct  # noqa: E402  (cgitest reads CSRF_CGI when imported)
    import test_servers  # noqa: E402

    loader = unittest.defaultTestLoader
    suite = unittest.TestSuite()
    for t in _flat(loader.loadTestsFromModule(test_direct)):
        if t._testMethodName in LEFT_OUT:
            print("left out under qemu: %s (%s)" % (t.id(), LEFT_OUT[t._testMethodName]))
        else:
            suite.addTest(t)
    suite.addTests(loader.loadTestsFromTestCase(test_servers.BusyboxTest))
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    for p in (cgi, key):
        os.unlink(p)
    os.rmdir(where)
    sys.exit(0 if result.wasSuccessful() and result.testsRun > 0 else 1)


def _flat(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from _flat(t)
        else:
            yield t


if __name__ == "__main__":
    main()
