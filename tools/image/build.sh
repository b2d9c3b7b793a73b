#!/usr/bin/env bash
# make image: deploy/Containerfile built with buildah, no container engine or daemon needed, then run once
# (`wasmsched --version`, and `simulate` with the bundled NodeNumber guest) as the Deployment runs it
# (user 65532). Needs root, buildah and, without BASE, debootstrap (apt-get install buildah debootstrap).
#
#   IMAGE   the tag to build (default localhost/wasmsched:latest)
#   BASE    an image with python3.11 and its venv module to build FROM; default: a Debian bookworm one that
#           debootstrap makes from $DEBIAN_MIRROR (default http://deb.debian.org/debian), kept as
#           localhost/wasmsched-base:bookworm, so a machine that reaches a Debian mirror and PyPI but no
#           container registry can build the image
#   STORAGE_DRIVER    buildah's (default vfs: no overlay mount, works in a container)
#   BUILDAH_ISOLATION how RUN steps run (default chroot: needs no OCI runtime, which cannot create its
#           cgroups on a host with cgroups v1 and v2 mixed; `oci` where crun/runc work)
# The push is yours: `buildah push --storage-driver vfs localhost/wasmsched:latest docker://REGISTRY/...`.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
image=${IMAGE:-localhost/wasmsched:latest}
driver=${STORAGE_DRIVER:-vfs}
isolation=${BUILDAH_ISOLATION:-chroot}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
default_base=localhost/wasmsched-base:bookworm
base=${BASE:-$default_base}

bah() { buildah --storage-driver "$driver" "$@"; }
need() { command -v "$1" >/dev/null || { echo "make image: $1 not found ($2)" >&2; exit 2; }; }
need buildah "apt-get install buildah"

cd "$root"
wheels=(dist/*.whl)
[[ ${#wheels[@]} -eq 1 && -f ${wheels[0]} ]] || { echo "make image: dist/ must hold one wheel (make dist)" >&2; exit 2; }
[[ -f examples/nodenumber/nodenumber.wasm ]] || { echo "make image: examples/nodenumber/nodenumber.wasm missing" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/wasmsched-image.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

start=$SECONDS
if [[ $base == "$default_base" ]] && ! bah inspect --type image "$base" >/dev/null 2>&1; then
	need debootstrap "apt-get install debootstrap"
	echo "image: making $base with debootstrap from $mirror" >&2
	# python3 is 3.11 in bookworm; venv for the Containerfile's virtual environment; the CA bundle for
	# the scheduler's own TLS to the API server is not needed (in-cluster CA), but pip and OCI pulls use it.
	debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$tmp/rootfs" "$mirror" >"$tmp/debootstrap.log" 2>&1 \
		|| { tail -20 "$tmp/debootstrap.log" >&2; exit 1; }
	rm -rf "$tmp"/rootfs/var/cache/apt/archives/*.deb "$tmp"/rootfs/var/lib/apt/lists/*
	tar -C "$tmp/rootfs" -cf "$tmp/base.tar" .
	rm -rf "$tmp/rootfs"
	printf 'FROM scratch\nADD base.tar /\nCMD ["/bin/bash"]\n' >"$tmp/Containerfile"
	bah bud --isolation "$isolation" -f "$tmp/Containerfile" -t "$base" "$tmp" >&2
	rm -f "$tmp/base.tar"
fi

# A CA bundle pip must trust (a TLS-intercepting proxy's), as pip is configured on this host: mounted for
# the RUN step only, not kept in the image.
cert=${PIP_CERT:-$(python3 -m pip config get global.cert 2>/dev/null || true)}
cert_args=()
if [[ -n $cert && -f $cert ]]; then
	cert_args=(--volume "$cert:/run/host-ca.crt:ro" --build-arg PIP_CERT=/run/host-ca.crt)
fi

echo "image: building $image FROM $base" >&2
bah bud --isolation "$isolation" --build-arg BASE="$base" "${cert_args[@]}" -f deploy/Containerfile -t "$image" . >&2

# The smoke run: the Deployment's user, a writable cache as its emptyDir gives, the bundled guest. The
# configuration is mounted from $tmp, which that user must be able to read.
chmod 755 "$tmp"
cat >"$tmp/config.yaml" <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - {name: NodeNumber, weight: 10}
  pluginConfig:
  - name: NodeNumber
    args: {guestURL: /opt/wasmsched/plugins/nodenumber.wasm}
YAML
ctr=$(bah from "$image")
trap 'bah rm "$ctr" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
run() { bah run --isolation "$isolation" --user 65532:65532 --env WASMSCHED_CACHE_DIR=/tmp/cache \
	--volume "$tmp:/work:ro" "$ctr" -- "$@"; }
run wasmsched --version
# The Containerfile preloads jemalloc: the image's Python must be running on it.
allocator=$(run python3 -c 'from wasmsched.util.heap import allocator; print(allocator())')
echo "allocator: $allocator"
[[ $allocator == jemalloc ]] || { echo "make image: the image's allocator is $allocator, not jemalloc" >&2; exit 1; }
out=$(run wasmsched simulate --config /work/config.yaml --generate nodes=5,pods=10)
tail -n 1 <<<"$out"
grep -Eq '^10 scheduled, 0 unschedulable' <<<"$(tail -n 1 <<<"$out")" \
	|| { echo "make image: unexpected simulate output:" >&2; echo "$out" >&2; exit 1; }
echo "image: $image built and checked in $((SECONDS - start)) s" >&2
