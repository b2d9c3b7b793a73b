#!/usr/bin/env bash
# Usage: tools/test_wheel.sh PYTHON WHEEL
# Installs a wasmsched wheel into a fresh venv and runs it outside the source tree: the wheel must hold
# everything wasmsched needs at run time, the generated protobuf modules (wasmsched/api/gen) included.
# Dependencies come from the package index (or pip's cache), installed by the project venv's pip (make setup).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python=${1:?usage: tools/test_wheel.sh PYTHON WHEEL}
wheel=$(realpath "${2:?usage: tools/test_wheel.sh PYTHON WHEEL}")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wasmsched-wheel.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The wheel's contents: the generated modules and their data are in; build leftovers and test drivers
# (the differential harness is tests/differential/) are not.
"$python" - "$wheel" <<'EOF'
import sys
import zipfile

names = set(zipfile.ZipFile(sys.argv[1]).namelist())
need = ["wasmsched/cli/main.py", "wasmsched/api/gen/__init__.py", "wasmsched/api/gen/VERSION",
        "wasmsched/report/templates/report.html.j2", "wasmsched/report/static/report.js",
        "wasmsched/report/vendor/echarts.min.js", "wasmsched/report/vendor/tabulator.min.js",
        "wasmsched/api/gen/k8s_io/api/core/v1/generated_pb2.py",
        "wasmsched/api/gen/k8s_io/apimachinery/pkg/apis/meta/v1/generated_pb2.py"]
missing = [n for n in need if n not in names]
unwanted = sorted(n for n in names if n.endswith((".stamp", ".pyc"))
                  or n.startswith(("tests/", "tools/", "wasmsched/testing/differential/")))
if missing or unwanted:
    sys.exit(f"{sys.argv[1]}: missing {missing}, unwanted {unwanted}")
EOF

# The project venv's pip installs into the fresh one (a venv without pip is made in a tenth of the time), and
# does not byte-compile: compiling the dependencies (the kubernetes client's thousands of modules) is most of
# an install's time and not what this checks; the runs below compile what they import.
"$python" -m venv --without-pip "$tmp/venv"
"$root/.venv/bin/python" -m pip --python "$tmp/venv/bin/python" install -q --no-compile "$wheel"
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
# The native wasm host is in the wheel: a wasm plugin (the WAT example, assembled with wasmtime's wat2wasm)
# scores the same nodes; its filter rejects names ending in 0.
env -u PYTHONPATH "$tmp/venv/bin/python" -c 'import sys, wasmtime; open("guest.wasm", "wb").write(wasmtime.wat2wasm(open(sys.argv[1]).read()))' \
  "$root/examples/wasm/last-digit/last_digit.wat"
cat >sched.yaml <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins: {multiPoint: {enabled: [{name: LastDigit}]}}
  pluginConfig: [{name: LastDigit, args: {guestURL: guest.wasm}}]
YAML
env -u PYTHONPATH "$tmp/venv/bin/wasmsched" simulate --config sched.yaml --generate nodes=10,pods=20 >wasm.txt
wlast=$(tail -n 1 wasm.txt)
if ! grep -Eq '^20 scheduled, 0 unschedulable' <<<"$wlast" \
  || [ "$(awk '$1 == "default" && $4 ~ /0$/' wasm.txt)" != "" ] || [ "$(grep -c '^default ' wasm.txt)" != 20 ]; then
  echo "test_wheel: unexpected output of wasmsched simulate with the LastDigit wasm plugin:" >&2
  cat wasm.txt >&2
  exit 1
fi
# The report's page and its inlined libraries are in the wheel too.
env -u PYTHONPATH "$tmp/venv/bin/wasmsched" simulate --generate nodes=10,pods=20 --report report.html >/dev/null
if ! grep -q 'id="report-data"' report.html || [ "$(stat -c %s report.html)" -lt 1000000 ]; then
  echo "test_wheel: simulate --report did not write the page with its libraries" >&2
  exit 1
fi
echo "test_wheel: $(basename "$wheel") installs into a fresh venv; wasmsched simulate: $last; with a wasm plugin: $wlast; --report: $(stat -c %s report.html) bytes"
