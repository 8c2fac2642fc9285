#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The project bans some C library calls outright, and memcmp on secrets.
# This fails on any use of the banned ones in the project's C sources.
set -uo pipefail
cd "$1"
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]')
pattern='\b(strcpy|strcat|sprintf|vsprintf|strtok|atoi|atol|atoll|sscanf|gets)[[:space:]]*\('
# shellcheck disable=SC2086
hits=$(grep -nE "$pattern" $files || true)
if [ -n "$hits" ]; then
  echo "banned functions used:"; echo "$hits"; exit 1
fi
echo "no banned functions in $(echo "$files" | wc -w) files"
