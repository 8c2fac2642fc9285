#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Installs the npm packages of the browser tests (tests/e2e: puppeteer-core,
# pinned in the committed package-lock.json; never a browser: the tests use
# Debian's /usr/bin/chromium and /usr/bin/firefox-esr). Idempotent and
# quick: when node_modules was installed from the same lock file it only
# compares a checksum.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
dir="$here/../tests/e2e"
stamp="$dir/node_modules/.lock-sha256"

if ! command -v npm >/dev/null 2>&1; then
  echo "npm-deps.sh: npm not found (scripts/deps.sh installs Debian's npm)" >&2
  exit 1
fi

want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$dir/node_modules/puppeteer-core/package.json" ]; then
  exit 0
fi

echo "npm-deps.sh: installing tests/e2e's npm packages"
(cd "$dir" && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >/dev/null)
echo "$want" > "$stamp"
