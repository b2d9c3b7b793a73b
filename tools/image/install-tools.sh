#!/usr/bin/env bash
# make image-tools: buildah and debootstrap from Debian's archive, for `make image` and its test
# (tests/kube/test_image.py). Idempotent: nothing is done when both are on PATH. Needs root and apt-get;
# otherwise it says what to install and fails, as a test is never skipped for a missing tool.
set -euo pipefail
missing=()
command -v buildah >/dev/null || missing+=(buildah)
command -v debootstrap >/dev/null || missing+=(debootstrap)
[[ ${#missing[@]} -eq 0 ]] && exit 0
if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
	echo "make image-tools: ${missing[*]} not found; as root: apt-get install ${missing[*]}" >&2
	exit 2
fi
echo "image-tools: apt-get install ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
