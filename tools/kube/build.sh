#!/usr/bin/env bash
# Builds the pinned Kubernetes control plane from the Go module proxy into a cache outside the source
# tree, shared by every clone: kube-apiserver, kube-controller-manager, kubectl and kube-scheduler of k8s.io/kubernetes v1.37.2, etcd
# v3.7.3 and KWOK v0.8.0; also the CNCF distribution registry v3.1.2 and the oras CLI v1.3.6, for the tests of
# guests pulled from OCI registries (tests/oci), and Helm v4.3.2, for the chart's tests (deploy/helm). A binary is rebuilt only when its pins (go.mod/go.sum here), this script or
# the Go toolchain change: the cache key is a hash of those and the link flags. Usage: build.sh [--print-dir] [--no-build] [COMPONENT...]
# (--no-build: only print where each binary belongs, built or not; the tests use it to fail at once, not build).
# (components: kube-apiserver kube-controller-manager etcd kwok kubectl kube-scheduler kube-oracle bench-kube registry oras
# helm; default: all but kube-scheduler, kube-oracle, bench-kube, registry, oras and helm). kube-oracle is the differential-testing oracle of ../kube-oracle, bench-kube the
# in-process kube-scheduler of bench/kube (bench/scheduler_perf.py); their keys also cover their Go sources.
# The binaries are linked from $root/v1.37.2/bin, where `wasmsched dev-cluster` looks for them.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
GO="${GO:-go}"
KUBE_VERSION=v1.37.2
root="${WASMSCHED_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wasmsched/kube}"

key() {  # the inputs that decide a component's bytes: key MODULE_DIR LDFLAGS
	{ cat "$here/$1/go.mod" "$here/$1/go.sum"; sources "$1"; "$GO" version; echo "$2"; } | sha256sum | cut -c1-16
}

# A module's own Go sources, tests excluded (none for the pin-only modules, whose keys stay as they were).
sources() {
	find "$here/$1" -maxdepth 1 -name '*.go' ! -name '*_test.go' -print0 | LC_ALL=C sort -z | xargs -0 -r cat
}

bin_dir() { echo "$root/$1-$(key "$2" "${3:-}")"; }

build() {  # build NAME MODULE_DIR PACKAGE [LDFLAGS]
	local name="$1" mod="$2" pkg="$3" ldflags="${4:-}"
	local dir; dir="$(bin_dir "$name" "$mod" "$ldflags")"
	if $no_build; then
		return
	fi
	if [[ -x "$dir/$name" ]]; then
		echo "kube: $name up to date ($dir/$name)" >&2
		link "$name" "$dir"
		return
	fi
	mkdir -p "$dir"
	echo "kube: building $name from $pkg into $dir (this takes minutes the first time)" >&2
	local start=$SECONDS
	(cd "$here/$mod" && nice -n 19 env CGO_ENABLED=0 "$GO" build -mod=readonly -trimpath \
		-ldflags "$ldflags" -o "$dir/$name.tmp" "$pkg")
	mv "$dir/$name.tmp" "$dir/$name"
	echo "kube: built $name in $((SECONDS - start)) s" >&2
	link "$name" "$dir"
}

# wasmsched dev-cluster finds the binaries in $root/$KUBE_VERSION/bin (or $WASMSCHED_KUBE_BIN).
link() {
	mkdir -p "$root/$KUBE_VERSION/bin"
	ln -sfn "$2/$1" "$root/$KUBE_VERSION/bin/$1"
}

kube_ldflags() {
	local v=k8s.io/component-base/version c=k8s.io/client-go/pkg/version out="-s -w" p
	for p in $v $c; do
		out+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=37"
		out+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
	done
	echo "$out"
}

# Helm's release Makefile sets the version the same way (`helm version` prints it; charts see it as .Capabilities.HelmVersion).
# Its Kubernetes version (.Capabilities.KubeVersion of `helm template`) comes from the client-go module in the build info.
helm_ldflags() {
	local p=helm.sh/helm/v4/internal/version
	echo "-s -w -X $p.version=v4.3.2 -X $p.metadata= -X $p.gitTreeState=clean"
}

print_dir=false
no_build=false
components=()
for arg in "$@"; do
	case "$arg" in
		--print-dir) print_dir=true ;;
		--no-build) no_build=true ;;
		kube-apiserver|kube-controller-manager|etcd|kwok|kubectl|kube-scheduler|kube-oracle|bench-kube|registry|oras|helm) components+=("$arg") ;;
		*) echo "build.sh: unknown component '$arg' (kube-apiserver, kube-controller-manager, etcd, kwok, kubectl, kube-scheduler, kube-oracle, bench-kube, registry, oras, helm)" >&2; exit 2 ;;
	esac
done
[[ ${#components[@]} -gt 0 ]] || components=(kube-apiserver kube-controller-manager etcd kwok kubectl)

for c in "${components[@]}"; do
	case "$c" in
		kube-apiserver) build kube-apiserver kubernetes k8s.io/kubernetes/cmd/kube-apiserver "$(kube_ldflags)" ;;
		kube-controller-manager) build kube-controller-manager kubernetes k8s.io/kubernetes/cmd/kube-controller-manager "$(kube_ldflags)" ;;
		kube-scheduler) build kube-scheduler kubernetes k8s.io/kubernetes/cmd/kube-scheduler "$(kube_ldflags)" ;;
		kubectl) build kubectl kubernetes k8s.io/kubernetes/cmd/kubectl "$(kube_ldflags)" ;;
		etcd) build etcd etcd go.etcd.io/etcd/server/v3 "-s -w" ;;
		kwok) build kwok kwok sigs.k8s.io/kwok/cmd/kwok "-s -w" ;;
		registry) build registry registry github.com/distribution/distribution/v3/cmd/registry "-s -w" ;;
		oras) build oras oras oras.land/oras/cmd/oras "-s -w" ;;
		helm) build helm helm helm.sh/helm/v4/cmd/helm "$(helm_ldflags)" ;;
		kube-oracle) build kube-oracle ../kube-oracle . "-s -w" ;;
		bench-kube) build bench-kube ../../bench/kube . "-s -w" ;;
	esac
	if $print_dir; then
		case "$c" in
			kube-apiserver|kube-controller-manager|kube-scheduler|kubectl) echo "$c=$(bin_dir "$c" kubernetes "$(kube_ldflags)")/$c" ;;
			kube-oracle) echo "$c=$(bin_dir "$c" ../kube-oracle "-s -w")/$c" ;;
			bench-kube) echo "$c=$(bin_dir "$c" ../../bench/kube "-s -w")/$c" ;;
			helm) echo "$c=$(bin_dir "$c" helm "$(helm_ldflags)")/$c" ;;
			*) echo "$c=$(bin_dir "$c" "$c" "-s -w")/$c" ;;
		esac
	fi
done
