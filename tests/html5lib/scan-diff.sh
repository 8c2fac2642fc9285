#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/html5lib/scan-diff.sh [PAGES] - `make scan-diff`: the large run of
# the block scanner's "same answers" (make check runs a short one,
# html5lib.scan). Builds the inject driver of this tree and of the
# injector at SCAN_BASE (a commit of this repository's history, exported
# with git archive; default main, or HEAD where there is no main: b8d0744,
# the default until the injector's answers changed on purpose after it,
# e.g. CSRF_INJECT_FRAMESET in 9288006, now fails on the first such page),
# both Release, each base in its own build-scan/old-<commit>, then:
#   1. scan_diff.py: PAGES generated pages (default 100000), every fuzz
#      corpus split at every offset and the benchmark's real page shifted
#      0..63 bytes, and attack_pages.py's targeted ones (every case of the
#      names and attribute names the injector reads, cut at each offset),
#      through a driver per scanner path and the old driver:
#      output, count and status byte for byte the same;
#   2. inject_diff.py, the html5lib oracle, on every path this machine
#      runs, PAGES / 4 pages each (other seeds than make check's).
# SCAN_BUILD (default build-scan) holds the builds. SCAN_LIST=1 lists the
# records where the injector at SCAN_BASE differs and goes on (scan_diff.py
# --list-ref: a base whose answers this tree changes on purpose).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
pages=${1:-100000}
base=${SCAN_BASE:-main}
if [ -z "${SCAN_BASE:-}" ] && ! git -C "$root" rev-parse -q --verify 'main^{commit}' >/dev/null; then
	base=HEAD
fi
rev=$(git -C "$root" rev-parse --verify "$base^{commit}")
build=${SCAN_BUILD:-$root/build-scan}
here=$root/tests/html5lib

mkdir -p "$build"
cmake -S "$root" -B "$build/new" -DCMAKE_BUILD_TYPE=Release -DCSRF_BUILD_TESTS=ON >/dev/null
cmake --build "$build/new" -j 2 --target csrf-inject-driver >/dev/null
# The old build is the base's own (a build of another base must not answer
# for it): keyed by its commit.
oldb=$build/old-$rev
if [ ! -x "$oldb/tests/html5lib/csrf-inject-driver" ]; then
	rm -rf "$build/old-src"
	mkdir -p "$build/old-src"
	git -C "$root" archive "$rev" | tar -x -C "$build/old-src"
	cmake -S "$build/old-src" -B "$oldb" -DCMAKE_BUILD_TYPE=Release -DCSRF_BUILD_TESTS=ON >/dev/null
	cmake --build "$oldb" -j 2 --target csrf-inject-driver >/dev/null
fi
new=$(find "$build/new" -name csrf-inject-driver -type f | head -n 1)
old=$(find "$oldb" -name csrf-inject-driver -type f | head -n 1)

echo "scan-diff: $pages pages through every path and the injector of $base (${rev:0:12})"
status=0
PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 "$here/scan_diff.py" "$new" --ref "$old" --pages "$pages" --seed 11 \
	--corpus "$root/fuzz/corpus" --page "$root/bench/pages/socat.html" --shifts 64 --report 20000 --attack \
	${SCAN_LIST:+--list-ref} || status=$?
if [ "$status" -ne 0 ] && [ -z "${SCAN_LIST:-}" ]; then
	exit "$status"
fi

seed=200
for path in scalar portable sse2 avx2 neon; do
	seed=$((seed + 1))
	if ! CSRF_SCAN=$path "$new" </dev/null 2>/dev/null; then
		echo "scan-diff: no $path path here"
		continue
	fi
	echo "scan-diff: the html5lib oracle on $path, $((pages / 4)) pages"
	CSRF_SCAN=$path PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 "$here/inject_diff.py" "$new" --pages $((pages / 4)) \
		--seed "$seed"
done
exit "$status"
