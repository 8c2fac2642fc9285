#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# ctest-fuzz.sh run BINARY NAME SECONDS | replay BINARY NAME
#   run:    fuzz for SECONDS on a throwaway copy of fuzz/corpus/NAME with
#           the harness's dictionary; any crash, leak, timeout or OOM fails.
#   replay: execute every committed corpus and regression input once.
# The corpora, dictionaries and regressions are those of fuzz/.
set -euo pipefail
fuzz=$(cd "$(dirname "$0")/../../fuzz" && pwd)
mode=$1 bin=$2 name=$3
if [ ! -x "$bin" ]; then
	echo "fuzz_$name was not built" >&2
	exit 1
fi
corpus=$fuzz/corpus/$name
dict=$fuzz/dict/$name.dict
case $mode in
run)
	secs=$4
	work=$(mktemp -d "${TMPDIR:-/tmp}/csrf-fuzz-$name.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	mkdir -p "$work/corpus" "$work/artifacts"
	cp -r "$corpus/." "$work/corpus/" 2>/dev/null || true
	args=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
		-artifact_prefix="$work/artifacts/")
	[ -f "$dict" ] && args+=(-dict="$dict")
	rc=0
	"$bin" "${args[@]}" "$work/corpus" >"$work/log" 2>&1 || rc=$?
	tail -n 25 "$work/log"
	if [ "$rc" -ne 0 ] || ls "$work/artifacts/"* >/dev/null 2>&1; then
		echo "fuzz_$name: finding (exit $rc); artifacts:"
		ls -l "$work/artifacts/" || true
		# Keep the reproducer in the gitignored work dir.
		mkdir -p "$fuzz/corpus-work/findings" &&
			cp "$work/artifacts/"* "$fuzz/corpus-work/findings/" 2>/dev/null || true
		exit 1
	fi
	;;
replay)
	files=()
	for d in "$corpus" "$fuzz/regressions/$name"; do
		[ -d "$d" ] || continue
		while IFS= read -r -d '' f; do files+=("$f"); done < <(find "$d" -type f -print0 | sort -z)
	done
	if [ "${#files[@]}" -eq 0 ]; then
		echo "no inputs for $name"
		exit 1
	fi
	rc=0
	"$bin" -timeout=10 -rss_limit_mb=2048 "${files[@]}" >"${TMPDIR:-/tmp}/csrf-replay-$name.$$" 2>&1 || rc=$?
	tail -n 30 "${TMPDIR:-/tmp}/csrf-replay-$name.$$"
	rm -f "${TMPDIR:-/tmp}/csrf-replay-$name.$$"
	# libFuzzer's error exit code is 77, which ctest could read as "skipped".
	[ "$rc" -eq 0 ] || exit 1
	;;
*)
	echo "usage: $0 run|replay BINARY NAME [SECONDS]" >&2
	exit 2
	;;
esac
