#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Every source file the project wrote names its licence in an SPDX line
# within its first three lines (after a shebang, or a comment that must
# stay first). The benchmark page nobody here wrote, data files and the
# packaging are covered by LICENSE and debian/copyright instead.
set -uo pipefail
cd "$1"
files=$(git ls-files '*.c' '*.h' '*.mjs' '*.js' '*.py' '*.sh' '*.cmake' '*.in' 'CMakeLists.txt' '*/CMakeLists.txt' \
  'Makefile' '.ci/run' '*.cgi' 'debian/rules' 2>/dev/null | grep -v '^bench/pages/' || true)
missing=()
for f in $files; do
  head -n 3 "$f" | grep -q 'SPDX-License-Identifier: BSD-2-Clause' || missing+=("$f")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "no SPDX-License-Identifier: BSD-2-Clause line in the first three lines of:"
  printf '  %s\n' "${missing[@]}"
  exit 1
fi
echo "SPDX line in all $(echo "$files" | wc -w) source files"
