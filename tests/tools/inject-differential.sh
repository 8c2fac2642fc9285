#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# inject-differential.sh - the working tree's injector against a
# revision's (default main), in one binary, fed the same inputs the same
# ways on every scanner path; any difference in the output bytes, which
# of them are inserted, the results or the status is printed and fails.
# A developer's tool (not in make check; ctest's tools.inject-differential
# runs a short round, label "differential").
#
# Usage: tests/tools/inject-differential.sh [-b REV] [-s SECONDS | -r ROUNDS] [-v] [FILE...]
#   -b REV      the revision compared against (default: main, or HEAD in a
#               clone without main; env BASE too)
#   -s SECONDS  run random rounds until SECONDS have passed (default 60;
#               env SECONDS_DIFF too); round 0, every input fed every
#               way, always runs whole
#   -r ROUNDS   a number of rounds instead of a duration
#   FILE...     inputs (default: fuzz/corpus/inject/*, fuzz/corpus/html/*
#               and bench/pages/socat.html); generated tag shapes always
# Env: CC (default cc), CFLAGS (default -O2 -g), SANITIZE=1 builds both
# with ASan/UBSan, WORK=DIR keeps the build there (default a temp dir).
# The revision's API must be this one's (csrf_inject_*, csrfi_inject_scan_force).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
base=${BASE:-main}
secs=${SECONDS_DIFF:-60}
rounds=
verbose=
while [ $# -gt 0 ]; do
	case $1 in
	-b) base=$2; shift 2 ;;
	-s) secs=$2; shift 2 ;;
	-r) rounds=$2; shift 2 ;;
	-v) verbose=-v; shift ;;
	--) shift; break ;;
	-*) sed -n '2,/^set -eu/p' "$0" | sed 's/^# \{0,1\}//;/^set -eu/d' >&2; exit 2 ;;
	*) break ;;
	esac
done
cc=${CC:-cc}
cflags=${CFLAGS:--O2 -g}
if [ "${SANITIZE:-0}" = 1 ]; then
	cflags="$cflags -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
fi
defs="-D_GNU_SOURCE -DCSRF_BUILDING=1 -DCSRF_CRYPTO_BUILTIN=1 -DCSRF_CRYPTO_MBEDTLS=0 -DCSRF_WITH_REAUTH=0 -DCSRF_WITH_REDIS=0"
if [ -n "${WORK:-}" ]; then
	work=$WORK
	mkdir -p "$work"
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/inject-diff.XXXXXX")
	trap 'rm -rf "$work"' EXIT INT TERM
fi

if ! rev=$(git -C "$top" rev-parse -q --verify "$base^{commit}"); then
	[ -z "${BASE:-}" ] && [ "$base" = main ] || { echo "inject-differential: no revision $base" >&2; exit 2; }
	rev=$(git -C "$top" rev-parse --verify HEAD) # a clone without main: the last commit
fi
rm -rf "$work/old" "$work/new"
mkdir -p "$work/old" "$work/new"
git -C "$top" archive "$rev" src include | tar -x -C "$work/old"
cp -R "$top/src" "$top/include" "$work/new/"

# Each tree's core library (src/*.c) as an archive: the driver's link pulls
# only the members the injector needs.
build_lib() { # dir
	for f in "$1"/src/*.c; do
		$cc -std=gnu11 $cflags $defs -fvisibility=hidden -I"$1/include" -I"$1/src" -c "$f" \
			-o "${f%.c}.o" &
	done
	wait
	ar rcs "$1/lib.a" "$1"/src/*.o
}
build_lib "$work/old"
build_lib "$work/new"
# The revision's global symbols renamed old_*: both sets live in one binary.
nm -g --defined-only "$work/old/lib.a" | awk 'NF == 3 { print $3 " old_" $3 }' | sort -u >"$work/old.syms"
objcopy --redefine-syms="$work/old.syms" "$work/old/lib.a" "$work/old/lib-old.a"

$cc -std=gnu11 $cflags -D_GNU_SOURCE -I"$work/new/include" -I"$work/new/src" \
	"$top/tests/tools/inject_differential.c" "$work/new/lib.a" "$work/old/lib-old.a" -lpthread \
	-o "$work/inject-differential"

if [ $# -eq 0 ]; then
	set -- "$top"/fuzz/corpus/inject/* "$top"/fuzz/corpus/html/* "$top/bench/pages/socat.html"
fi
echo "inject-differential: $(git -C "$top" describe --always "$rev") against the working tree" >&2
if [ -n "$rounds" ]; then
	"$work/inject-differential" -r "$rounds" $verbose "$@"
else
	"$work/inject-differential" -s "$secs" $verbose "$@"
fi
