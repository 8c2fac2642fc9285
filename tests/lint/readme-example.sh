#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Installs the library into a temporary prefix (as `make install
# DESTDIR=...` does), extracts the C example from README.md, compiles it
# with pkg-config exactly as the README says, and with a CMake project
# using find_package(libcsrf) from the DESTDIR tree (which is not where the
# build's prefix says: the package must be relocatable), and runs each.
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

mkdir -p "$tmp/app"
cp "$tmp/handler.c" "$tmp/app/"
cp "$src/tests/lint/handler-project.cmake" "$tmp/app/CMakeLists.txt"
cmake -S "$tmp/app" -B "$tmp/app/build" -DCMAKE_PREFIX_PATH="$root" -DCMAKE_C_FLAGS="$extra" \
  -DCMAKE_EXE_LINKER_FLAGS="$extra" >"$tmp/cmake.log" 2>&1 &&
  cmake --build "$tmp/app/build" >>"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; exit 1; }
grep -q "libcsrf_DIR:PATH=$root/" "$tmp/app/build/CMakeCache.txt" || { echo "find_package did not use $root"; exit 1; }
want='legitimate request: 303, forged request: 403'
for h in handler handler-static; do
  out=$("$tmp/app/build/$h" 2>/dev/null) || { echo "$h (CMake) failed"; exit 1; }
  [ "$out" = "$want" ] || { echo "$h (CMake) printed: $out"; exit 1; }
done
echo "README example: built with pkg-config (shared and static) and with find_package(libcsrf) (shared and static), and ran"
