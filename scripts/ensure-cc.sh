#!/usr/bin/env bash
# Run before `npm test` (npm's pretest hook): the durability drills build a small LD_PRELOAD library
# with `cc` (test/helpers/slow-disk.c). On a Debian machine where we are root, install a C compiler
# when missing; elsewhere say what to do (the durability drills then fail with the same advice).
set -euo pipefail
if command -v cc >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing a C compiler for the durability drills (apt-get)…"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq gcc libc6-dev >/dev/null
else
  echo "cc is not installed: install a C compiler (gcc) for the durability drills (test/drills/durability.test.ts)." >&2
fi
