#!/usr/bin/env bash
# GraphQL over HTTP: graphql-http@1.23.1's auditServer against the real
# binary (serve --demo on a fresh SQLite file, introspection on as --demo
# sets it). Fails on any warning or error. graphql-http goes into
# .ci/node_modules (git-ignored); a second run reuses it.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

if [ ! -f .ci/node_modules/graphql-http/package.json ] ||
   ! grep -q '"version": "1.23.1"' .ci/node_modules/graphql-http/package.json; then
  npm install --prefix .ci --no-save --no-package-lock --no-audit --no-fund --loglevel=error graphql-http@1.23.1
fi

go build -o "$tmp/storefront" ./cmd/storefront
"$tmp/storefront" serve --demo --addr 127.0.0.1:0 --db "sqlite:$tmp/audit.db" >"$tmp/out" 2>"$tmp/err" &
pid=$!
url=
for _ in $(seq 1 300); do
  url=$(sed -n 's|^storefront listening on \(http://[^ ]*\) .*|\1/graphql|p' "$tmp/out")
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$tmp/err"; echo "storefront exited before listening"; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { cat "$tmp/err"; echo "storefront did not start listening"; exit 1; }
node .ci/graphql-audit.mjs "$url"
