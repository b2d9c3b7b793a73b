#!/usr/bin/env bash
# Usage: tools/apt-tools.sh TARGET COMMAND=PACKAGE...
# The tools a make TARGET needs, from Debian's archive: each COMMAND not on PATH is installed with its PACKAGE
# (`make image-tools`: buildah and debootstrap for the image; `make browser`: chromium for the report's tests).
# A COMMAND written lib:SONAME is a shared library the dynamic linker must find instead (`make allocator`:
# jemalloc, which the image preloads, for tests/util/test_heap.py).
# Idempotent: nothing is done when every command is there. Needs root and apt-get; otherwise it says what to
# install and fails, as a test is never skipped for a missing tool.
set -euo pipefail
target=${1:?usage: tools/apt-tools.sh TARGET COMMAND=PACKAGE...}
shift
missing=()
have() {
	if [[ $1 == lib:* ]]; then
		{ ldconfig -p 2>/dev/null || /sbin/ldconfig -p; } | awk -v so="${1#lib:}" '$1 == so { found = 1 } END { exit !found }'
	else
		command -v "$1" >/dev/null
	fi
}
for pair in "$@"; do
	have "${pair%%=*}" || missing+=("${pair#*=}")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0
if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
	echo "make $target: ${missing[*]} not found; as root: apt-get install ${missing[*]}" >&2
	exit 2
fi
echo "$target: apt-get install ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
