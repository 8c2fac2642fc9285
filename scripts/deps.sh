#!/usr/bin/env bash
# Installs every Debian package libcsrf's build, demo, tests, benchmarks and
# fuzzing need. Idempotent: when everything is present it only runs dpkg-query.
set -euo pipefail

PKGS=(
  build-essential cmake pkg-config clang llvm libclang-rt-14-dev valgrind
  libssl-dev libsodium-dev libcmocka-dev
  libmicrohttpd-dev libsqlite3-dev sqlite3
  libhiredis-dev redis-server redis-sentinel
  nginx nginx-dev libpcre2-dev zlib1g-dev
  chromium firefox-esr nodejs npm curl procps python3-html5lib
  wrk hyperfine gnuplot-nox python3 python3-django
  # nginx.phpmyadmin: a real PHP application behind the module; the test
  # starts its own php-fpm and MariaDB (dbconfig-no-thanks: no database is
  # configured at install time).
  phpmyadmin dbconfig-no-thanks php-fpm mariadb-server
  # csrf-cgi: the small servers of routers
  busybox lighttpd
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

# node and npm may come from outside Debian on some machines; accept them.
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  keep=()
  for p in "${missing[@]}"; do
    case "$p" in nodejs|npm) ;; *) keep+=("$p") ;; esac
  done
  missing=("${keep[@]+"${keep[@]}"}")
fi

if [ "${#missing[@]}" -gt 0 ]; then
  echo "deps.sh: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # The packaged services must not hold the ports tests use.
  for svc in nginx redis-server redis-sentinel php8.2-fpm mariadb lighttpd; do
    if command -v systemctl >/dev/null 2>&1; then
      $SUDO systemctl stop "$svc" >/dev/null 2>&1 || true
      $SUDO systemctl disable "$svc" >/dev/null 2>&1 || true
    fi
    $SUDO service "$svc" stop >/dev/null 2>&1 || true
  done
fi

# npm packages of the browser tests (puppeteer-core; never a browser).
here=$(cd "$(dirname "$0")" && pwd)
if [ -x "$here/npm-deps.sh" ]; then
  "$here/npm-deps.sh"
fi
