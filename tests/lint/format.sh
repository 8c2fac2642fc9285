#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A .clang-format is checked in and the C sources follow it. The
# nginx module follows nginx's own style instead and is not checked here.
set -uo pipefail
cd "$1"
bad=0
for f in $(git ls-files 'include/*.h' 'src/*.[ch]' 'tests/*.[ch]' 'tools/*.[ch]' 'demo/*.[ch]' 'fuzz/*.[ch]' 'bench/*.[ch]' 'cgi/*.[ch]' 'apache/*.[ch]'); do
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "not formatted: $f (run: clang-format -i $f)"
    bad=1
  fi
done
[ "$bad" = 0 ] && echo "all C sources follow .clang-format"
exit "$bad"
