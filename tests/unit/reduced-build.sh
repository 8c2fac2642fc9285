#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# reduced-build.sh SRC DIR - libcsrf's session part without Redis and
# without re-authentication (-DCSRF_WITH_REDIS=OFF -DCSRF_WITH_REAUTH=OFF):
# configures it in the nested build directory DIR, builds only the
# libraries and their unit tests (-j2), checks that libcsrf.so links
# libcrypto, that neither it nor libcsrf-session.so links libsodium or
# hiredis, and that no file of either includes their headers, and runs
# those unit tests there.
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
for lib in libcsrf.so libcsrf-session.so; do
  needed=$(readelf -d "$dir/$lib" | awk '/NEEDED/ {print $NF}' | tr -d '[]' | sort | tr '\n' ' ')
  echo "$lib needs: $needed"
  case "$needed" in *sodium* | *hiredis*) echo "reduced build: $lib still links libsodium or hiredis"; exit 1 ;; esac
done
needed=$(readelf -d "$dir/libcsrf.so" | awk '/NEEDED/ {print $NF}' | tr -d '[]' | sort | tr '\n' ' ')
case " $needed" in *" libcrypto.so"*) ;; *) echo "reduced build: libcrypto missing"; exit 1 ;; esac
for header in sodium.h hiredis.h; do
  for objs in csrf_objects csrf_session_objects csrf_session_shared; do
    if grep -rqs "$header" "$dir/CMakeFiles/$objs.dir" --include='*.d'; then
      echo "reduced build: $objs still includes $header"
      exit 1
    fi
  done
done
cd "$dir"
ctest -L unit -j2 --output-on-failure
