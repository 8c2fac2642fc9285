#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# build.sh ADDON_DIR WORK_DIR LIBCSRF OUT_SO
# Builds ngx_http_csrf_module.so against Debian's nginx-dev: a copy of
# /usr/share/nginx/src in WORK_DIR is configured with Debian's own flags
# (conf_flags, which include --with-compat, so the stock nginx accepts the
# module's signature) once, or again when nginx/config or LIBCSRF changed;
# then only `make -f objs/Makefile modules` runs. OUT_SO's name is the
# module's (csrf_ngx_addon in nginx/CMakeLists.txt builds the benchmark's
# floor and the tests' fixture modules with LIBCSRF "none").
# CSRF_NGX_CFLAGS and CSRF_NGX_LDFLAGS, when set, are added to the
# module's compile and link commands only, never to configure: its feature
# tests, and so the structures the module shares with the stock nginx,
# stay Debian's (tests/nginx builds the sanitized module this way).
set -euo pipefail
addon=$1 work=$2 lib=$3 out=$4
so=$(basename "$out")
ngx=${NGX_SRC:-/usr/share/nginx/src}

if [ ! -f "$work/objs/Makefile" ] || [ ! -f "$work/.configured" ] || [ "$addon/config" -nt "$work/.configured" ] ||
	[ "$(cat "$work/.configured")" != "$lib" ]; then
	rm -rf "$work"
	cp -r "$ngx" "$work"
	cd "$work"
	# shellcheck disable=SC1091
	. ./conf_flags
	if ! CSRF_LIBCSRF="$lib" ./configure "${NGX_CONF_FLAGS[@]}" \
		--with-cc-opt='-g -O2 -fstack-protector-strong -Wformat -Werror=format-security -fPIC -D_FORTIFY_SOURCE=2' \
		--with-ld-opt='-Wl,-z,relro -Wl,-z,now -fPIC' \
		--add-dynamic-module="$addon" >configure.log 2>&1; then
		cat configure.log
		exit 1
	fi
	echo "$lib" >.configured
fi

cd "$work"
rm -f "objs/$so"
flags=()
if [ -n "${CSRF_NGX_CFLAGS:-}${CSRF_NGX_LDFLAGS:-}" ]; then
	flags=("CFLAGS=$(sed -n 's/^CFLAGS = //p' objs/Makefile) ${CSRF_NGX_CFLAGS:-}" "LINK=\$(CC) ${CSRF_NGX_LDFLAGS:-}")
fi
if ! make -f objs/Makefile modules "${flags[@]}" >make.log 2>&1; then
	cat make.log
	exit 1
fi
cp "objs/$so" "$out"
