#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# reduced-build.sh SRC DIR - libcsrf without Redis and without
# re-authentication (-DCSRF_WITH_REDIS=OFF -DCSRF_WITH_REAUTH=OFF): configures
# it in the nested build directory DIR, builds only the library and its unit
# tests (-j2), checks that libcsrf.so then links libcrypto and neither
# libsodium nor hiredis, and runs those unit tests there.
set -euo pipefail
src=$1
dir=$2
log="$dir.log"
mkdir -p "$dir"
if ! { cmake -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DCSRF_WITH_REDIS=OFF -DCSRF_WITH_REAUTH=OFF \
  -DCSRF_UNIT_ONLY=ON && cmake --build "$dir" -j2; } >"$log" 2>&1; then
  tail -n 40 "$log"
  echo "reduced build: configure or build failed (log: $log)"
  exit 1
fi
needed=$(readelf -d "$dir/libcsrf.so" | awk '/NEEDED/ {print $NF}' | tr -d '[]' | sort | tr '\n' ' ')
echo "libcsrf.so needs: $needed"
case " $needed" in *" libcrypto.so"*) ;; *) echo "reduced build: libcrypto missing"; exit 1 ;; esac
case "$needed" in *sodium* | *hiredis*) echo "reduced build: still links libsodium or hiredis"; exit 1 ;; esac
for header in sodium.h hiredis.h; do
  if grep -rqs "$header" "$dir/CMakeFiles/csrf_objects.dir" --include='*.d'; then
    echo "reduced build: the library still includes $header"
    exit 1
  fi
done
cd "$dir"
ctest -L unit -j2 --output-on-failure
