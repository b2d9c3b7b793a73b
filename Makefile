# Set-up is idempotent: the venv is rebuilt only when pyproject.toml or setup.py changes, the protobuf
# modules only when the pinned Kubernetes protos or the generator change, an example's .wasm only when
# its Go sources, the SDK's or the go.mod files change.
PYTHON ?= python3
GO ?= go
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The native wasm host (wasmsched/wasm/_host.c), compiled against the pinned wasmtime's C API headers,
# which tools/wasmtime_capi.py fetches with cargo from the crate registry into ~/.cache/wasmsched.
NATIVE_HOST := wasmsched/wasm/_host$(shell $(PYTHON) -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")

# The Go guest examples (examples/<name>/<name>.wasm), built with the standard Go toolchain.
EXAMPLES := nodenumber imagelocality advanced interpodaffinity noderesourcetopology coscheduling
EXAMPLE_WASM := $(foreach e,$(EXAMPLES),examples/$(e)/$(e).wasm)
SDK_SRC := $(shell find sdk/go -name '*.go' -not -name '*_test.go') sdk/go/go.mod sdk/go/go.sum
# Reproducible builds: the same sources give the same bytes, so the compiled-module cache keeps hitting.
GO_WASM_BUILD := GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -buildvcs=false

.PHONY: all setup examples gotest demo test test-fast pytest lint dist test-wheel clean kube kube-scheduler kube-oracle oci-tools helm image image-tools browser allocator fuzz-kube fuzz-host bench bench-abi

all: setup examples

setup: $(STAMP) wasmsched/api/gen/.stamp-checked $(NATIVE_HOST) wasmsched/report/vendor/.stamp

# ECharts and Tabulator, inlined into the HTML report: npm ci of tools/report/package-lock.json into
# ~/.cache/wasmsched/report-npm, the files the page needs copied into the package (not committed).
wasmsched/report/vendor/.stamp: tools/report/package-lock.json tools/report/package.json tools/report/vendor.py
	$(PY) tools/report/vendor.py

# uv installs (pip stays in the venv for `make dist` and the wheel check): a clean clone's set-up installs
# and byte-compiles the dependencies in ~25 s where pip took ~55 s, from uv's cache (~/.cache/uv).
# wasmsched itself is always rebuilt there, so the native host it builds in place is current.
UV_VERSION := 0.13.9
UV := $(VENV)/bin/uv
UV_STAMP := $(VENV)/.uv-$(UV_VERSION)
$(UV_STAMP):
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip uv==$(UV_VERSION)
	touch $@

$(STAMP): pyproject.toml setup.py $(UV_STAMP)
	$(UV) pip install -q --python $(PY) --compile-bytecode --reinstall-package wasmsched -e '.[dev]'
	touch $(STAMP)
	if [ -f $(NATIVE_HOST) ]; then touch $(NATIVE_HOST); fi

# The editable install above builds it; again when its source changes.
$(NATIVE_HOST): $(STAMP) wasmsched/wasm/_host.c tools/wasmtime_capi.py
	$(UV) pip install -q --python $(PY) --no-deps --no-build-isolation --reinstall-package wasmsched -e .
	touch $@

wasmsched/api/gen/.stamp-checked: $(STAMP) tools/gen_protos.py FORCE
	$(PY) tools/gen_protos.py

FORCE:

# kube-apiserver, kube-controller-manager, kubectl, etcd and KWOK of the pinned releases, built from the Go module
# proxy into a cache outside the tree (~/.cache/wasmsched/kube, or $WASMSCHED_KUBE_CACHE), shared by clones;
# 10-20 min on 2 cores the first time (mostly kube-apiserver; kube-controller-manager shares most of its packages).
kube:
	GO=$(GO) tools/kube/build.sh kube-apiserver kube-controller-manager etcd kwok kubectl

# The stock kube-scheduler, for bench/real_cluster.py only.
kube-scheduler:
	GO=$(GO) tools/kube/build.sh kube-scheduler

# The CNCF distribution registry and the oras CLI, for the tests of guests pulled from OCI registries (tests/oci);
# built like the kube binaries into the same cache: cold (empty Go caches) about 8 and 2 min on 2 busy cores.
oci-tools:
	GO=$(GO) tools/kube/build.sh registry oras

# Helm, for the chart's tests (deploy/helm/wasmsched, tests/kube/test_helm_chart.py): built the same way, into the
# same cache; 2.5 min on 2 cores the first time (module downloads included).
helm:
	GO=$(GO) tools/kube/build.sh helm

# The differential-testing oracle (tools/kube-oracle): kube-scheduler's framework in-process on a fake cluster.
kube-oracle:
	GO=$(GO) tools/kube/build.sh kube-oracle

# wasmsched against kube-scheduler 1.37.2 (kube-oracle) on SEEDS random clusters, both modes, on JOBS
# processes; differences are printed shrunk and written to .cache/fuzz-kube (docs/compatibility.md).
# SWAP=interpodaffinity runs wasmsched with that in-tree plugin replaced by its wasm guest (examples/).
SEEDS ?= 20000
JOBS ?= 2
SWAP ?=
fuzz-kube: setup kube-oracle $(if $(SWAP),examples)
	$(PY) -m tests.differential.fuzz --seeds $(SEEDS) --jobs $(JOBS) --out .cache/fuzz-kube $(if $(SWAP),--swap $(SWAP))

# The native wasm host against hostile guests (tests/wasm/fuzz_host.py): FUZZ_CALLS import calls with
# adversarial arguments on _host.c built with AddressSanitizer and UndefinedBehaviorSanitizer
# (tools/host_sanitized.py, into ~/.cache/wasmsched/host-sanitized), FUZZ_CHUNK calls per process; FUZZ_SEED repeats a
# run. Fails on any sanitizer report, dead process or undocumented outcome. About 1.5-2 min per million calls on
# 2 cores; `make test` runs a 5,000-call slice (tests/wasm/test_fuzz_host.py).
FUZZ_CALLS ?= 1000000
FUZZ_CHUNK ?= 100000
FUZZ_SEED ?=
fuzz-host: setup
	$(PY) -m tests.wasm.fuzz_host --calls $(FUZZ_CALLS) --chunk $(FUZZ_CHUNK) $(if $(FUZZ_SEED),--seed $(FUZZ_SEED))

# Issue 13's benchmarks (never part of `make test`): tables on stdout, JSON in bench/results/; under 20 minutes
# on 2 cores once the Go programs are cached. KSWE=PATH, a kube-scheduler-wasm-extension checkout at 9b2791f1bbea,
# adds the runs on KSWE's own Go host (its programs are built against the checkout) and its prebuilt guests;
# without it only wasmsched and kube-scheduler run.
KSWE ?=
bench: setup examples
	@[ -n "$(KSWE)" ] || echo "make bench: KSWE=PATH not given: KSWE's host and the NodeNumber runs are skipped"
	GO=$(GO) tools/kube/build.sh bench-kube
	$(PY) bench/abi.py $(if $(KSWE),--kswe $(KSWE))
	$(PY) bench/scheduler_perf.py $(if $(KSWE),--kswe $(KSWE))
	$(PY) bench/startup.py
	$(PY) bench/soak.py

# Only the per-call costs against KSWE's Go host (bench/abi.py).
bench-abi: setup
	$(PY) bench/abi.py $(if $(KSWE),--kswe $(KSWE))

examples: $(EXAMPLE_WASM)

define example_rule
examples/$(1)/$(1).wasm: $$(shell find examples/$(1) -name '*.go' -not -name '*_test.go' 2>/dev/null) examples/go.mod examples/go.sum $$(SDK_SRC)
	cd examples/$(1) && $$(GO_WASM_BUILD) -o $(1).wasm.tmp . && mv $(1).wasm.tmp $(1).wasm
endef
$(foreach e,$(EXAMPLES),$(eval $(call example_rule,$(e))))

# The SDK's and the examples' unit tests run natively, with the host imports stubbed (build tag !wasip1);
# tests/go holds guests that pytest builds and drives through the host. -trimpath keeps the checkout's path
# out of Go's cache keys, so a fresh clone reuses the compiled packages and the cached vet and test results.
gotest: export GOFLAGS += -trimpath
gotest:
	cd sdk/go && $(GO) vet ./... && GOOS=wasip1 GOARCH=wasm $(GO) vet ./... && $(GO) test ./...
	cd examples && $(GO) vet ./... && GOOS=wasip1 GOARCH=wasm $(GO) vet ./... && $(GO) test ./...
	cd tests/go && $(GO) vet ./... && GOOS=wasip1 GOARCH=wasm $(GO) vet ./...

# The bundled cluster, scheduled by the default plugins plus the NodeNumber wasm plugin.
demo: setup examples/nodenumber/nodenumber.wasm
	$(VENV)/bin/wasmsched simulate --config examples/nodenumber/scheduler.yaml examples/clusters/demo

# Every check runs even when an earlier one failed (a lint finding does not hide test results); the
# target fails at the end, naming what failed. pytest runs last, so its summary closes the output.
test: setup
	@failed=; \
	$(MAKE) --no-print-directory lint || failed="$$failed lint"; \
	$(MAKE) --no-print-directory -k examples gotest || failed="$$failed go"; \
	$(MAKE) --no-print-directory test-wheel || failed="$$failed test-wheel"; \
	$(MAKE) --no-print-directory pytest || failed="$$failed pytest"; \
	if [ -n "$$failed" ]; then echo "make test: FAILED:$$failed" >&2; exit 1; fi

# The tests marked `kube` run against a real control plane (tests/kube/conftest.py), kube-oracle
# (tests/differential) or the OCI registry and oras (tests/oci), so the binaries come first. PYTEST_WORKERS processes (pytest-xdist), a test file
# per worker at a time (module fixtures such as a built guest are made once; each worker has its own dev
# cluster); Go builds inside tests take turns (tests/go_guests.py). Files go longest first, by what they took in
# earlier runs (tests/durations.py), not xdist's default of the files with the most tests first.
# Three on two cores: the suite keeps both cores busy only two thirds of the time on two workers (tests wait on
# API servers, etcd stalls, leases, buildah), and a third worker fills that (a warm run: 580 s of pytest -> 453 s).
PYTEST_WORKERS ?= 3
pytest: setup kube kube-oracle oci-tools helm image-tools browser allocator
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder

# No Go builds, no control plane and no lint: the tests marked `go` (they build Go guests or load the
# examples' .wasm) and `kube` (they start kube-apiserver) are deselected; the rest runs on FAST_WORKERS
# processes (pytest-xdist), in about 20 s on 2 cores.
FAST_WORKERS ?= 2
test-fast: setup
	$(PY) -m pytest -m 'not go and not kube' -n $(FAST_WORKERS)

# mypy's cache lives outside the checkout: it checks each file's hash, so a fresh clone reuses it (a cold run
# takes 35 CPU seconds, a warm one 1).
MYPY_CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/wasmsched/mypy
lint: setup
	$(VENV)/bin/ruff check wasmsched tests tools setup.py bench
	MYPY_CACHE_DIR=$(MYPY_CACHE_DIR) $(VENV)/bin/mypy wasmsched tests tools setup.py bench

# A wheel with the generated protobuf modules in it (setup.py's build hook runs tools/gen_protos.py);
# build/ is removed first, as setuptools would package files left there by an earlier build.
dist: setup
	rm -rf build dist
	$(PY) -m pip wheel -q --no-deps --no-build-isolation -w dist .
	rm -rf build

# deploy/Containerfile built with buildah (no container engine), FROM a Debian base debootstrap makes, and run once:
# tools/image/build.sh (root). tests/kube/test_image.py runs it in `make test` (docs/deploy.md).
image: dist examples/nodenumber/nodenumber.wasm image-tools
	tools/image/build.sh

# Chromium, from Debian's archive when missing (root), for the report's browser tests (tests/report).
browser:
	tools/apt-tools.sh $@ chromium=chromium

# jemalloc, from Debian's archive when missing (root): the image preloads it, and tests/util/test_heap.py
# checks that `run` names and measures it.
allocator:
	tools/apt-tools.sh $@ lib:libjemalloc.so.2=libjemalloc2

# buildah and debootstrap, from Debian's archive when missing (root), for the image and its test.
image-tools:
	tools/apt-tools.sh $@ buildah=buildah debootstrap=debootstrap

# The wheel installed into a fresh venv, run from outside the source tree: `wasmsched simulate` works.
test-wheel: dist
	tools/test_wheel.sh $(PYTHON) dist/wasmsched-*.whl

clean:
	rm -rf $(VENV) wasmsched/api/gen $(EXAMPLE_WASM) tests/go/*/*.wasm .cache build dist $(NATIVE_HOST)
