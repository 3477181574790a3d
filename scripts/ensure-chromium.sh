#!/usr/bin/env bash
# Run before `npm test` (npm's pretest hook): the dashboard test drives Debian's Chromium with
# playwright-core (no browser is downloaded). On a Debian machine where we are root, install it
# when missing; elsewhere say what to do (the dashboard test then fails with the same advice).
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || [ -n "${OUTBOXD_CHROMIUM:-}" ]; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's chromium for the dashboard test (apt-get)…"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium >/dev/null
else
  echo "chromium is not installed: install Debian's chromium (or set OUTBOXD_CHROMIUM to a Chromium binary) for the dashboard test." >&2
fi
