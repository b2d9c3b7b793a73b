# Set-up is idempotent: the venv is rebuilt only when pyproject.toml changes, the protobuf modules
# only when the pinned Kubernetes protos or the generator change.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint typecheck clean

setup: $(STAMP) wasmsched/api/gen/.stamp-checked

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

wasmsched/api/gen/.stamp-checked: $(STAMP) tools/gen_protos.py FORCE
	$(PY) tools/gen_protos.py

FORCE:

demo: setup
	$(VENV)/bin/wasmsched simulate examples/clusters/demo

test: setup lint
	$(PY) -m pytest

lint: setup
	$(VENV)/bin/ruff check wasmsched tests tools
	$(VENV)/bin/mypy wasmsched

clean:
	rm -rf $(VENV) wasmsched/api/gen
