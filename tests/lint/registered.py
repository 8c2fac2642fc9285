#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Every test source of the repository is run by some ctest test.

A test file that no CMakeLists registers (a renamed file, a directory read
before enable_testing(), a guard that skips it) passes silently by not
running at all. This check lists the test sources git knows (test_*.c,
test_*.py, *.test.mjs, fuzz/fuzz_*.c) and fails on each one whose name
appears in no registered test's command line.

usage: registered.py SOURCE_DIR BUILD_DIR
"""
import json
import os
import re
import subprocess
import sys

PATTERN = re.compile(r"(^|/)(test_[^/]+\.(c|py)|[^/]+\.test\.mjs|fuzz_[^/]+\.c)$")


def main():
    src, build = sys.argv[1], sys.argv[2]
    files = subprocess.run(["git", "-C", src, "ls-files"], check=True, capture_output=True, text=True).stdout.split()
    sources = [f for f in files if PATTERN.search(f)]
    if not sources:
        print("registered: git lists no test sources (not a checkout?)")
        return 1
    shown = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, check=True, capture_output=True, text=True)
    tests = json.loads(shown.stdout)["tests"]
    words = set()
    for t in tests:
        for arg in t.get("command", []):
            for w in re.split(r"[\s/=;:]+", arg):
                words.add(w)
    missing = []
    for f in sources:
        base = os.path.basename(f)
        stem = base[:-2] if base.endswith(".c") else base
        # C sources: the executable bears the file's stem, maybe prefixed
        # with its directory's name (demo_test_parse).
        if base not in words and not any(w == stem or w.endswith("_" + stem) for w in words):
            missing.append(f)
    for f in missing:
        print(f"registered: {f} is run by no ctest test")
    print(f"registered: {len(sources) - len(missing)} of {len(sources)} test sources run by the {len(tests)} tests")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
