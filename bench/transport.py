"""What one API request costs the scheduler process through kube/transport.py, by how the kubeconfig
authenticates: a bearer token (the official client installs a refresh hook for it, as for exec plugins,
OIDC and an in-cluster service account's token) or a static token (no hook). CPU µs and wall µs per POST
of a Binding-sized body, sequential, against a loopback HTTP/1.1 server in another process (so the
server's CPU is not counted). The baseline is another checkout (`--baseline-repo`, e.g. the previous
commit), measured in the same run, interleaved round by round.

    .venv/bin/python bench/transport.py --baseline-repo ../wasmsched-prev [--requests 3000] [--rounds 3]

The other checkout needs its generated protos and native host (`make setup` there, or copies of
wasmsched/api/gen and wasmsched/wasm/_host*.so from this one when only Python differs).
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SERVER = r"""
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""

# Run with the checkout first on sys.path: argv = repo, kubeconfig, auth, requests.
CLIENT = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from kubernetes import config as kconfig
from kubernetes.client import Configuration
from wasmsched.kube.transport import CurlTransport
cfg = Configuration()
kconfig.load_kube_config(sys.argv[2], client_configuration=cfg)
if sys.argv[3] == "static":
    cfg.refresh_api_key_hook = None
t = CurlTransport(cfg, "bench-transport", http2=False)
body = b'{"kind":"Binding","apiVersion":"v1","metadata":{"name":"p00001","namespace":"bench"},' \
       b'"target":{"kind":"Node","name":"kwok-node-0001"}}'
headers = ["Content-Type: application/json", "Accept: application/json"]
for _ in range(200):
    t.request("POST", "/api/v1/namespaces/bench/pods/p00001/binding", headers, body, (5.0, 5.0))
n = int(sys.argv[4])
r0, w0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
for _ in range(n):
    t.request("POST", "/api/v1/namespaces/bench/pods/p00001/binding", headers, body, (5.0, 5.0))
r1, w1 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
t.close()
cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
print(json.dumps({"cpu_us": cpu / n * 1e6, "wall_us": (w1 - w0) / n * 1e6}))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline-repo", type=Path, help="another checkout, measured in the same run")
    ap.add_argument("--requests", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "transport.json")
    args = ap.parse_args()

    repos = [("this checkout", ROOT)]
    if args.baseline_repo:
        repos.append((f"baseline ({args.baseline_repo.resolve().name})", args.baseline_repo.resolve()))
    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port)])
    rows: list[dict[str, object]] = []
    try:
        time.sleep(0.5)
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as kc:
            kc.write("apiVersion: v1\nkind: Config\n"
                     f"clusters: [{{name: c, cluster: {{server: 'http://127.0.0.1:{port}'}}}}]\n"
                     "users: [{name: u, user: {token: bench-token}}]\n"
                     "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n")
            kc.flush()
            for rnd in range(args.rounds):
                order = repos if rnd % 2 == 0 else repos[::-1]
                for label, repo in order:
                    for auth in ("token", "static"):
                        out = subprocess.run([sys.executable, "-c", CLIENT, str(repo), kc.name, auth,
                                              str(args.requests)], cwd=repo, check=True, capture_output=True,
                                             text=True).stdout
                        m = json.loads(out.strip().splitlines()[-1])
                        rows.append({"checkout": label, "auth": auth, "round": rnd, **m})
    finally:
        server.terminate()
        server.wait()

    print(f"# {args.requests} sequential POSTs per run, loopback HTTP/1.1, {args.rounds} round(s)")
    print(f"{'checkout':<28} {'auth':<7} {'round':>5} {'cpu us/req':>11} {'wall us/req':>12}")
    for r in rows:
        print(f"{r['checkout']!s:<28} {r['auth']!s:<7} {r['round']!s:>5} {r['cpu_us']:>11.0f} {r['wall_us']:>12.0f}")
    print(f"\n{'median over rounds':<28} {'auth':<7} {'cpu us/req':>17} {'vs baseline':>12}")
    medians: dict[tuple[str, str], float] = {}
    for label, _ in repos:
        for auth in ("token", "static"):
            medians[label, auth] = statistics.median(
                float(r["cpu_us"]) for r in rows if r["checkout"] == label and r["auth"] == auth)  # type: ignore[arg-type]
    for (label, auth), cpu in medians.items():
        base = medians.get((repos[-1][0], auth))
        vs = f"{cpu / base:.2f}x" if base else "-"
        print(f"{label:<28} {auth:<7} {cpu:>17.0f} {vs:>12}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"requests": args.requests, "rounds": args.rounds, "runs": rows}, indent=1))
    print(f"\nwrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
