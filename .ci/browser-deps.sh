#!/usr/bin/env bash
# Installs what the e2e browser test drives: Debian's chromium and its matching
# chromedriver (same package version, so the WebDriver protocol always fits),
# plus a small CJK font so the 颜色/尺码 labels in the screenshot artifact are
# text rather than empty boxes. Does nothing when all of it is present.
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive

if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
	$SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium chromium-driver
fi

# Cosmetic only (the test reads the DOM, not pixels), so a failure here is not fatal.
if command -v fc-list >/dev/null 2>&1 && [ -z "$(fc-list :lang=zh)" ]; then
	$SUDO apt-get install -y -qq fonts-wqy-microhei || echo "browser-deps: no CJK font installed; screenshots show boxes for Chinese text" >&2
fi

chromium --version
chromedriver --version
