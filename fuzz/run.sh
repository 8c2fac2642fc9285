#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# fuzz/run.sh - `make fuzz`: builds the libFuzzer harnesses (clang, ASan,
# UBSan, LSan) in build-fuzz/fuzz-clang and runs each for FUZZ_SECONDS
# (default 300), one after the other. New inputs go to the gitignored
# fuzz/corpus-work/<harness>/, never into the committed corpus; findings
# to fuzz/corpus-work/findings/. Exits non-zero on any crash, leak,
# timeout, out-of-memory or broken invariant, and prints for each harness
# the executions and the coverage (cov: edges, ft: features) reached.
#
#   FUZZ_SECONDS=10 ./fuzz/run.sh            every harness, 10 s each
#   FUZZ_SECONDS=60 ./fuzz/run.sh token      only some harnesses
#   FUZZ_JOBS=2 ./fuzz/run.sh                two harnesses at a time
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
seconds=${FUZZ_SECONDS:-300}
jobs=${FUZZ_JOBS:-1}
build=${FUZZ_BUILD_DIR:-$root/build-fuzz/fuzz-clang}
work=$here/corpus-work
all=(cookie form multipart origin token inject inject_policy check html config crypto response)
if [ "$#" -gt 0 ]; then
	harnesses=("$@")
else
	harnesses=("${all[@]}")
fi

clang=$(command -v clang || command -v clang-14 || true)
if [ -z "$clang" ]; then
	echo "run.sh: clang is needed (make deps installs it)" >&2
	exit 2
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
	cmake -S "$here/standalone" -B "$build" -DCMAKE_C_COMPILER="$clang" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCSRF_FUZZ=ON -DCSRF_VALGRIND=ON >/dev/null
fi
targets=()
for h in "${harnesses[@]}"; do targets+=("fuzz_$h"); done
cmake --build "$build" -j2 --target "${targets[@]}"

mkdir -p "$work/findings"

# run_one NAME: fuzzes one harness; its status and final figures go to
# $work/NAME.result ("status execs cov ft").
run_one() {
	local h=$1 bin=$build/fuzz_$h log=$work/$h.log rc=0
	mkdir -p "$work/$h"
	local args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
		-artifact_prefix="$work/findings/$h-")
	[ -f "$here/dict/$h.dict" ] && args+=(-dict="$here/dict/$h.dict")
	# the first directory receives new inputs; the committed corpus and
	# the regressions are read only
	local dirs=("$work/$h" "$here/corpus/$h")
	[ -d "$here/regressions/$h" ] && dirs+=("$here/regressions/$h")
	"$bin" "${args[@]}" "${dirs[@]}" >"$log" 2>&1 || rc=$?
	local execs cov ft
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -n 1 | cut -d' ' -f2)
	ft=$(grep -Eo 'ft: [0-9]+' "$log" | tail -n 1 | cut -d' ' -f2)
	local status=ok
	if [ "$rc" -ne 0 ] || ls "$work/findings/$h-"* >/dev/null 2>&1; then
		status=FAIL
	fi
	echo "$status ${execs:-0} ${cov:-0} ${ft:-0}" >"$work/$h.result"
}

rm -f "$work/findings/"*
active=0
for h in "${harnesses[@]}"; do
	if [ ! -x "$build/fuzz_$h" ]; then
		echo "FAIL 0 0 0" >"$work/$h.result"
		echo "run.sh: fuzz_$h was not built (is the library complete?)" >&2
		continue
	fi
	echo "fuzzing $h for ${seconds}s"
	run_one "$h" &
	active=$((active + 1))
	if [ "$active" -ge "$jobs" ]; then
		wait -n || true
		active=$((active - 1))
	fi
done
wait || true

failed=0
printf '\n%-10s %-6s %12s %8s %8s\n' harness status executions cov ft
for h in "${harnesses[@]}"; do
	read -r status execs cov ft <"$work/$h.result"
	printf '%-10s %-6s %12s %8s %8s\n' "$h" "$status" "$execs" "$cov" "$ft"
	if [ "$status" != ok ]; then
		failed=1
		echo "  log: $work/$h.log" >&2
	fi
done
if ls "$work/findings/"* >/dev/null 2>&1; then
	echo "findings (reproduce with build-fuzz/fuzz-clang/fuzz_NAME FILE):" >&2
	ls -1 "$work/findings/" >&2
fi
exit "$failed"
