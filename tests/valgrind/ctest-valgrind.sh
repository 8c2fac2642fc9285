#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# ctest-valgrind.sh VALGRIND BINARY [ARG...]: one plain unit-test binary
# (with its arguments) under memcheck; any error or definite/possible leak
# fails, and so does a binary that was not built.
set -uo pipefail
valgrind=$1 bin=$2
shift 2
[ -x "$bin" ] || { echo "$bin was not built" >&2; exit 1; }
exec "$valgrind" -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,possible \
	--show-leak-kinds=definite,possible "$bin" "$@"
