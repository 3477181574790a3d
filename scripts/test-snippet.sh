#!/usr/bin/env bash
# The receiver snippet on every runtime it promises (`npm run test:snippet`, part of `npm test`):
#  1. verify.js is what scripts/build-snippet.ts makes of verify.ts;
#  2. verify.ts type-checks alone (no Bun or Node types, erasable syntax only, as pasted into a
#     Deno, Workers or Node type-stripping project) and verify.js's JSDoc types check;
#  3. Deno runs the portable checks on verify.ts, offline (no config, npm or remote imports);
#  4. Node.js runs them on verify.js;
#  5. consume() under Deno (verify.ts) and Node.js (verify.js) against a real outboxd started here
#     (on 127.0.0.1, a temporary database, stopped by its PID at the end).
# Deno and Bun come from node_modules (npm ci); nothing is downloaded.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
for tool in bun deno tsc node; do
  command -v "$tool" >/dev/null || { echo "$tool not found: run npm ci" >&2; exit 1; }
done

echo "== verify.js is current"
bun scripts/build-snippet.ts --check

echo "== types of verify.ts (standalone) and verify.js (JSDoc)"
tsc --noEmit --ignoreConfig --strict --erasableSyntaxOnly --allowJs --checkJs --skipLibCheck \
  --target es2022 --module preserve --lib es2023,dom --types "" \
  src/receiver/verify.ts src/receiver/verify.js

echo "== Deno $(deno --version | head -n 1 | cut -d ' ' -f 2) on verify.ts"
deno_dir="$(mktemp -d)"
server_dir="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
  rm -rf "$deno_dir" "$server_dir"
}
trap cleanup EXIT
DENO_DIR="$deno_dir" DENO_NO_UPDATE_CHECK=1 \
  deno run --no-config --no-remote --no-npm --no-prompt --check test/receiver/run-deno.mjs

echo "== Node.js $(node --version) on verify.js"
node test/receiver/run-node.mjs

echo "== consume() under Deno and Node.js against a real outboxd"
admin_token="snippet-check-$RANDOM$RANDOM$RANDOM"
OUTBOXD_DATABASE_URL="file:$server_dir/outboxd.db" OUTBOXD_ADMIN_TOKEN="$admin_token" PORT=0 \
  OUTBOXD_RETRY_BASE=20ms OUTBOXD_RETRY_CAP=100ms OUTBOXD_LOG_LEVEL=info \
  bun src/main.ts serve 2>"$server_dir/log" &
server_pid=$!
url=""
for _ in $(seq 1 200); do
  url="$(grep -o '"msg":"listening","url":"[^"]*"' "$server_dir/log" | head -n 1 | sed 's/.*"url":"//; s/"$//' || true)"
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$server_dir/log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "outboxd did not start" >&2; cat "$server_dir/log" >&2; exit 1; }
DENO_DIR="$deno_dir" DENO_NO_UPDATE_CHECK=1 \
  deno run --no-config --no-remote --no-npm --no-prompt --allow-net=127.0.0.1 --check \
  test/receiver/consume-deno.mjs "$url" "$admin_token"
node test/receiver/consume-node.mjs "$url" "$admin_token"
