#!/usr/bin/env bash
# Used for issue 39's "fewer production pairs" count: bash scripts/dupcount.sh [repo dir].
# Production pairs: hand-written non-test Go files only (ent's generated code, graph/generated*, tests left out).
src=${1:-.}; out=$(mktemp -d)
(cd "$src" && git ls-files '*.go' | grep -v '_test\.go$' | grep -v '^graph/generated' | grep -vE '^ent/' ; cd "$src" && git ls-files 'ent/schema/*.go') | sort -u | while read f; do mkdir -p "$out/$(dirname "$f")"; cp "$src/$f" "$out/$f"; done
duplicates --repo "$out" --most 200 --seconds 300
rm -rf "$out"
