#!/usr/bin/env bash
# Usage: tools/test_wheel.sh PYTHON WHEEL
# Installs a wasmsched wheel into a fresh venv and runs it outside the source tree: the wheel must hold
# everything wasmsched needs at run time, the generated protobuf modules (wasmsched/api/gen) included.
# Dependencies come from the package index (or pip's cache).
set -euo pipefail
python=${1:?usage: tools/test_wheel.sh PYTHON WHEEL}
wheel=$(realpath "${2:?usage: tools/test_wheel.sh PYTHON WHEEL}")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wasmsched-wheel.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The wheel's contents: the generated modules and their data are in, build leftovers are not.
"$python" - "$wheel" <<'EOF'
import sys
import zipfile

names = set(zipfile.ZipFile(sys.argv[1]).namelist())
need = ["wasmsched/cli/main.py", "wasmsched/api/gen/__init__.py", "wasmsched/api/gen/VERSION",
        "wasmsched/api/gen/k8s_io/api/core/v1/generated_pb2.py",
        "wasmsched/api/gen/k8s_io/apimachinery/pkg/apis/meta/v1/generated_pb2.py"]
missing = [n for n in need if n not in names]
unwanted = sorted(n for n in names if n.endswith((".stamp", ".pyc")) or n.startswith(("tests/", "tools/")))
if missing or unwanted:
    sys.exit(f"{sys.argv[1]}: missing {missing}, unwanted {unwanted}")
EOF

"$python" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q "$wheel"
cd "$tmp"
# Not the source tree's package: the one installed from the wheel.
env -u PYTHONPATH "$tmp/venv/bin/python" -c \
  'import sys, wasmsched; sys.exit(0 if wasmsched.__file__.startswith(sys.prefix) else f"imported {wasmsched.__file__}")'
env -u PYTHONPATH "$tmp/venv/bin/wasmsched" simulate --generate nodes=10,pods=20 >out.txt
last=$(tail -n 1 out.txt)
if ! grep -Eq '^[0-9]+ scheduled, [0-9]+ unschedulable, [0-9]+ preempted in [0-9.]+s$' <<<"$last" \
  || [ "$(grep -c '^default ' out.txt)" != 20 ]; then
  echo "test_wheel: unexpected output of wasmsched simulate --generate nodes=10,pods=20:" >&2
  cat out.txt >&2
  exit 1
fi
echo "test_wheel: $(basename "$wheel") installs into a fresh venv; wasmsched simulate: $last"
