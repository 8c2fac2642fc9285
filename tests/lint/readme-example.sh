#!/usr/bin/env bash
# Installs the library into a temporary prefix (as `make install
# DESTDIR=...` does), extracts the C example from README.md, compiles it
# with pkg-config exactly as the README says, and runs it.
set -euo pipefail
src=$1 build=$2 extra=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

DESTDIR="$tmp/dest" cmake --install "$build" >/dev/null
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
root="$tmp/dest$prefix"
pc=$(find "$root" -name libcsrf.pc | head -n 1)
[ -n "$pc" ] || { echo "libcsrf.pc was not installed"; exit 1; }
test -f "$root/include/csrf.h" || { echo "csrf.h was not installed"; exit 1; }
ls "$(dirname "$(dirname "$pc")")"/libcsrf.a "$(dirname "$(dirname "$pc")")"/libcsrf.so >/dev/null

# The first ```c block of the README is the example.
awk '/^```c$/ {on=1; next} /^```$/ && on {exit} on {print}' "$src/README.md" >"$tmp/handler.c"
[ -s "$tmp/handler.c" ] || { echo "no C example in README.md"; exit 1; }

export PKG_CONFIG_PATH="$(dirname "$pc")"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror $extra -o "$tmp/handler" "$tmp/handler.c" $(pkg-config --cflags --libs libcsrf)
LD_LIBRARY_PATH="$(dirname "$(dirname "$pc")")" "$tmp/handler"

# The static library links too, with the private dependencies.
# shellcheck disable=SC2046
cc -std=c11 $extra -o "$tmp/handler-static" "$tmp/handler.c" -I"$root/include" \
  "$(dirname "$(dirname "$pc")")/libcsrf.a" $(pkg-config --libs --static libcsrf | sed 's/-lcsrf//')
"$tmp/handler-static"
echo "README example: built with pkg-config (shared and static) and ran"
