#!/usr/bin/env bash
# make browser: Chromium from Debian's archive, for the report's browser tests (tests/report), which drive it
# with Playwright (a dev dependency; it downloads no browser of its own). Idempotent: nothing is done when
# chromium is on PATH. Needs root and apt-get; otherwise it says what to install and fails, as a test is
# never skipped for a missing tool.
set -euo pipefail
command -v chromium >/dev/null && exit 0
if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
	echo "make browser: chromium not found; as root: apt-get install chromium" >&2
	exit 2
fi
echo "browser: apt-get install chromium" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends chromium >&2
