#!/usr/bin/env bash
# ctest-valgrind.sh BINARY: one plain unit-test binary under memcheck; any
# error or definite/possible leak fails. Exit 77 (skipped) when the binary
# or valgrind is missing.
set -uo pipefail
bin=$1
command -v valgrind >/dev/null 2>&1 || { echo "no valgrind: skipped"; exit 77; }
[ -x "$bin" ] || { echo "$bin not built: skipped"; exit 77; }
exec valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,possible \
	--show-leak-kinds=definite,possible "$bin"
