# Set-up is idempotent: the venv is rebuilt only when pyproject.toml changes, the protobuf modules
# only when the pinned Kubernetes protos or the generator change, an example's .wasm only when its Go
# sources, the SDK's or the go.mod files change.
PYTHON ?= python3
GO ?= go
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# The Go guest examples (examples/<name>/<name>.wasm), built with the standard Go toolchain.
EXAMPLES := nodenumber imagelocality advanced
EXAMPLE_WASM := $(foreach e,$(EXAMPLES),examples/$(e)/$(e).wasm)
SDK_SRC := $(shell find sdk/go -name '*.go' -not -name '*_test.go') sdk/go/go.mod sdk/go/go.sum
# Reproducible builds: the same sources give the same bytes, so the compiled-module cache keeps hitting.
GO_WASM_BUILD := GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -buildvcs=false

.PHONY: all setup examples gotest demo test lint typecheck clean

all: setup examples

setup: $(STAMP) wasmsched/api/gen/.stamp-checked

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

wasmsched/api/gen/.stamp-checked: $(STAMP) tools/gen_protos.py FORCE
	$(PY) tools/gen_protos.py

FORCE:

examples: $(EXAMPLE_WASM)

define example_rule
examples/$(1)/$(1).wasm: $$(shell find examples/$(1) -name '*.go' -not -name '*_test.go' 2>/dev/null) examples/go.mod examples/go.sum $$(SDK_SRC)
	cd examples/$(1) && $$(GO_WASM_BUILD) -o $(1).wasm.tmp . && mv $(1).wasm.tmp $(1).wasm
endef
$(foreach e,$(EXAMPLES),$(eval $(call example_rule,$(e))))

# The SDK's and the examples' unit tests run natively, with the host imports stubbed (build tag !wasip1);
# tests/go holds guests that pytest builds and drives through the host.
gotest:
	cd sdk/go && $(GO) vet ./... && GOOS=wasip1 GOARCH=wasm $(GO) vet ./... && $(GO) test ./...
	cd examples && $(GO) vet ./... && GOOS=wasip1 GOARCH=wasm $(GO) vet ./... && $(GO) test ./...
	cd tests/go && $(GO) vet ./... && GOOS=wasip1 GOARCH=wasm $(GO) vet ./...

# The bundled cluster, scheduled by the default plugins plus the NodeNumber wasm plugin.
demo: setup examples/nodenumber/nodenumber.wasm
	$(VENV)/bin/wasmsched simulate --config examples/nodenumber/scheduler.yaml examples/clusters/demo

test: setup lint examples gotest
	$(PY) -m pytest

lint: setup
	$(VENV)/bin/ruff check wasmsched tests tools
	$(VENV)/bin/mypy wasmsched

clean:
	rm -rf $(VENV) wasmsched/api/gen $(EXAMPLE_WASM) tests/go/*/*.wasm .cache
