#!/usr/bin/env bash
# Builds Jaeger (all-in-one) once and caches the binary outside the repository; prints its path.
# `go install` and `go run` refuse jaeger for its replace directives, so it is a tool of a scratch module.
# Cold: about 7 minutes on 2 cores; afterwards the cached binary answers at once.
#   scripts/jaeger.sh            build if absent, print the path
#   STOREFRONT_JAEGER_BIN=$(scripts/jaeger.sh) go test -run TestTrace ./e2e/
set -euo pipefail
VERSION="${JAEGER_VERSION:-v1.75.0}"
DIR="${STOREFRONT_TOOLS_CACHE:-$HOME/.cache/storefront-tools}/jaeger-$VERSION"
BIN="$DIR/jaeger"
if [ ! -x "$BIN" ]; then
  mkdir -p "$DIR/src"
  cd "$DIR/src"
  [ -f go.mod ] || go mod init jaegerbuild >/dev/null 2>&1
  go get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@$VERSION" >&2
  go build -o "$BIN.tmp" github.com/jaegertracing/jaeger/cmd/jaeger >&2
  mv "$BIN.tmp" "$BIN"
fi
echo "$BIN"
