#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# check-binaries.sh DIST - the router folders of scripts/router.sh hold
# what a firmware needs and nothing more: for each of mips, mipsel, armhf
# and aarch64, csrf-cgi and csrf-key load libc and the loader only (ldd's
# own listing, from the target's loader under qemu-user with
# LD_TRACE_LOADED_OBJECTS), are stripped, and csrf-cgi for mips and
# mipsel is at most 192 KiB; x86_64-musl's are static (ldd: not a
# dynamic executable) and csrf-cgi is at most 256 KiB.
set -euo pipefail
dist=$1
fail=0
bad() { echo "FAIL: $*"; fail=1; }

for arch in mips mipsel armhf aarch64; do
	case $arch in
	mips) qemu=qemu-mips tri=mips-linux-gnu ;;
	mipsel) qemu=qemu-mipsel tri=mipsel-linux-gnu ;;
	armhf) qemu=qemu-arm tri=arm-linux-gnueabihf ;;
	aarch64) qemu=qemu-aarch64 tri=aarch64-linux-gnu ;;
	esac
	for p in csrf-cgi csrf-key; do
		bin=$dist/$arch/$p
		[ -x "$bin" ] || { bad "$bin missing"; continue; }
		libs=$("$qemu" -L "/usr/$tri" -E LD_TRACE_LOADED_OBJECTS=1 "$bin" | awk '{print $1}' | sed 's|.*/||' | sort | tr '\n' ' ')
		echo "$arch/$p loads: $libs"
		for l in $libs; do
			case $l in libc.so.6 | ld.so.1 | ld-linux-armhf.so.3 | ld-linux-aarch64.so.1) ;; *) bad "$arch/$p loads $l" ;; esac
		done
		case " $libs" in *" libc.so.6 "*) ;; *) bad "$arch/$p: no libc in the listing (ldd under qemu failed?)" ;; esac
		if "$tri-readelf" -S "$bin" | grep -q '\.symtab'; then bad "$arch/$p is not stripped"; fi
	done
done
for arch in mips mipsel; do
	size=$(stat -c %s "$dist/$arch/csrf-cgi")
	echo "$arch csrf-cgi: $size bytes (at most $((192 * 1024)))"
	[ "$size" -le $((192 * 1024)) ] || bad "$arch csrf-cgi is $size bytes, over 192 KiB"
done

for p in csrf-cgi csrf-key; do
	bin=$dist/x86_64-musl/$p
	out=$(ldd "$bin" 2>&1 || true)
	echo "x86_64-musl/$p: ldd says: $out"
	case $out in *"not a dynamic executable"*) ;; *) bad "x86_64-musl/$p is not static" ;; esac
	if readelf -l "$bin" | grep -q INTERP; then bad "x86_64-musl/$p asks for a loader"; fi
done
musl=$(stat -c %s "$dist/x86_64-musl/csrf-cgi")
echo "x86_64-musl csrf-cgi: $musl bytes (at most $((256 * 1024)))"
[ "$musl" -le $((256 * 1024)) ] || bad "x86_64-musl csrf-cgi is $musl bytes, over 256 KiB"
exit $fail
