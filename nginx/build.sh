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
# CSRF_NGX_EXTRA_SRC names C files linked into that module only.
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
if [ -n "${CSRF_NGX_CFLAGS:-}${CSRF_NGX_LDFLAGS:-}${CSRF_NGX_EXTRA_SRC:-}" ]; then
	flags=("CFLAGS=$(sed -n 's/^CFLAGS = //p' objs/Makefile) ${CSRF_NGX_CFLAGS:-}")
fi
# CSRF_NGX_EXTRA_SRC: C files compiled as the module's and linked into it
# only (tests/nginx's asan_pool.c), their objects given to the link.
extra=()
for src in ${CSRF_NGX_EXTRA_SRC:-}; do
	obj=objs/extra/$(basename "${src%.c}").o
	mkdir -p objs/extra
	# shellcheck disable=SC2016 # make expands these, not the shell
	if ! printf '%s: %s $(CORE_DEPS)\n\t$(CC) -c $(CFLAGS) $(ALL_INCS) -o $@ $<\n' "$obj" "$src" |
		make -f objs/Makefile -f - "${flags[@]}" "$obj" >make.log 2>&1; then
		cat make.log
		exit 1
	fi
	extra+=("$obj")
done
if [ ${#flags[@]} -gt 0 ]; then
	flags+=("LINK=\$(CC) ${CSRF_NGX_LDFLAGS:-} ${extra[*]}")
fi
if ! make -f objs/Makefile modules "${flags[@]}" >make.log 2>&1; then
	cat make.log
	exit 1
fi
cp "objs/$so" "$out"
