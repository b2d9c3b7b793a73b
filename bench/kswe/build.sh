#!/usr/bin/env bash
# Builds bench/kswe (KSWE's Go host driven per call, for bench/abi.py) against the KSWE source
# checkout at KSWE_PATH and prints the binary's path. The Go module proxy does not serve KSWE, so
# the module is copied into the cache and its two KSWE modules (scheduler, kubernetes/proto) are
# replaced by the checkout's directories there; the committed go.mod holds a placeholder path.
# Everything else comes from the proxy, checked against the committed go.sum.
#
# The binary lives outside the source tree ($WASMSCHED_KSWE_CACHE, else ~/.cache/wasmsched/bench/kswe),
# keyed by this module's sources, the checkout's scheduler and proto sources (and its commit, when
# it is a git work tree) and the Go toolchain; a second run with the same inputs builds nothing.
# Usage: build.sh KSWE_PATH
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
GO="${GO:-go}"
root="${WASMSCHED_KSWE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wasmsched/bench/kswe}"
scheduler_module=sigs.k8s.io/kube-scheduler-wasm-extension/scheduler
proto_module=sigs.k8s.io/kube-scheduler-wasm-extension/kubernetes/proto

if [[ $# -ne 1 ]]; then
	echo "usage: build.sh KSWE_PATH (a kube-scheduler-wasm-extension source checkout)" >&2
	exit 2
fi
kswe="$(cd "$1" 2>/dev/null && pwd)" || { echo "build.sh: $1: no such directory" >&2; exit 2; }
for mod in scheduler kubernetes/proto; do
	if [[ ! -f "$kswe/$mod/go.mod" ]]; then
		echo "build.sh: $kswe/$mod/go.mod is missing: $1 is not a kube-scheduler-wasm-extension checkout" >&2
		exit 2
	fi
done
if [[ "$(sed -n 's/^module //p' "$kswe/scheduler/go.mod")" != "$scheduler_module" ]]; then
	echo "build.sh: $kswe/scheduler/go.mod is not module $scheduler_module" >&2
	exit 2
fi

# The inputs that decide the binary's bytes, in a fixed order.
inputs() {
	cat "$here/go.mod" "$here/go.sum" "$here/build.sh"
	find "$here" -maxdepth 1 -name '*.go' ! -name '*_test.go' -print0 | LC_ALL=C sort -z | xargs -0 cat
	(cd "$kswe" && find scheduler kubernetes/proto \( -name '*.go' ! -name '*_test.go' -o -name go.mod -o -name go.sum \) \
		-print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
	git -C "$kswe" rev-parse HEAD 2>/dev/null || true
	"$GO" version
}
key="$(inputs | sha256sum | cut -c1-16)"
dir="$root/$key"
if [[ -x "$dir/kswe" ]]; then
	echo "$dir/kswe"
	exit 0
fi

src="$dir/src"
rm -rf "$src"
mkdir -p "$src"
cp "$here/go.mod" "$here/go.sum" "$here"/*.go "$src/"
rm -f "$src"/*_test.go
(cd "$src" && "$GO" mod edit -replace "$scheduler_module=$kswe/scheduler" -replace "$proto_module=$kswe/kubernetes/proto")
echo "kswe: building bench/kswe against $kswe into $dir (a few minutes the first time)" >&2
start=$SECONDS
(cd "$src" && nice -n 19 env CGO_ENABLED=0 "$GO" build -mod=readonly -trimpath -o "$dir/kswe.tmp" .)
mv "$dir/kswe.tmp" "$dir/kswe"
echo "kswe: built in $((SECONDS - start)) s" >&2
echo "$dir/kswe"
