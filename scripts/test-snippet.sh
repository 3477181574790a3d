#!/usr/bin/env bash
# The receiver snippet on every runtime it promises (`npm run test:snippet`, part of `npm test`):
#  1. verify.js is what scripts/build-snippet.ts makes of verify.ts;
#  2. verify.ts type-checks alone (no Bun or Node types, erasable syntax only, as pasted into a
#     Deno, Workers or Node type-stripping project) and verify.js's JSDoc types check;
#  3. Deno runs the portable checks on verify.ts, offline (no config, npm or remote imports);
#  4. Node.js runs them on verify.js.
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
trap 'rm -rf "$deno_dir"' EXIT
DENO_DIR="$deno_dir" DENO_NO_UPDATE_CHECK=1 \
  deno run --no-config --no-remote --no-npm --no-prompt --check test/receiver/run-deno.mjs

echo "== Node.js $(node --version) on verify.js"
node test/receiver/run-node.mjs
