#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# scripts/deb.sh OUT WORK - `make deb`: builds the Debian packages with
# Debian's own tooling (dpkg-buildpackage -b -us -uc on debian/) from a copy
# of the clone's files in WORK/src (the working tree as it is: tracked and
# untracked files git does not ignore), so the clone gets no build
# products. The five binary packages go to OUT (replacing the .deb files
# there); the debug symbol packages, .changes and .buildinfo stay in WORK.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$1 work=$2
mkdir -p "$out" "$work"
out=$(cd "$out" && pwd) work=$(cd "$work" && pwd)

git -C "$root" rev-parse --git-dir >/dev/null 2>&1 || {
	echo "deb.sh: $root is not a git clone: make deb packages a clone's files" >&2
	exit 1
}
rm -rf "$work/src" "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo
mkdir -p "$work/src"
(cd "$root" && git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
	tar --null -T - -cf -) | tar -xf - -C "$work/src"

(cd "$work/src" && DEB_BUILD_OPTIONS="parallel=${JOBS:-2} ${DEB_BUILD_OPTIONS:-}" \
	dpkg-buildpackage -b -us -uc >"$work/build.log" 2>&1) || {
	tail -n 60 "$work/build.log" >&2
	echo "deb.sh: dpkg-buildpackage failed; the whole log is $work/build.log" >&2
	exit 1
}

# New public functions: libcsrf0's symbols file should list them.
if grep -q 'dpkg-gensymbols: warning: some new symbols appeared' "$work/build.log"; then
	echo "deb.sh: libcsrf.so.0 exports functions debian/libcsrf0.symbols does not list; to add them:" >&2
	echo "  (cd $work/src && dpkg-gensymbols -plibcsrf0 -Pdebian/libcsrf0 -v0.1.0 -O$root/debian/libcsrf0.symbols)" >&2
fi

rm -f "$out"/*.deb
debs=()
for f in "$work"/*.deb; do
	case "$f" in *-dbgsym_*) continue ;; esac
	cp "$f" "$out/"
	debs+=("$out/$(basename "$f")")
done
printf '%s\n' "${debs[@]}"
