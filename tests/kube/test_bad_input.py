"""Bad input on the real-cluster side (issue 29 §4): objects the watch brings that cannot be decoded, a node
reporting absurd quantities, a huge object, and a kubeconfig whose server is not what it should be.

The API server validates what it stores, so it never sends an undecodable object: those tests take the real
server's watch stream and spoil one frame of it on the way into the decoder (the informer lists and watches
the real server otherwise). A server answering HTML is a local http.server; a wrong CA and a rejected token
are the dev cluster's server reached with them."""

from __future__ import annotations

import base64
import http.server
import io
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from wasmsched.api.gen.k8s_io.apimachinery.pkg.apis.meta.v1 import generated_pb2 as meta_pb
from wasmsched.api.kinds import RESOURCES
from wasmsched.api.types import Pod
from wasmsched.devcluster import DevCluster
from wasmsched.kube import codec
from wasmsched.kube.api import KubeApi, load_configuration
from wasmsched.kube.informer import Informer
from wasmsched.kube.servingcert import generate_self_signed_cert_key

from .helpers import wait_for
from .run_helpers import (
    SchedulerProcess,
    create_node,
    create_pod,
    get_pod,
    kube_api,
    node_json,
    pod_json,
    scheduler_config,
    unique,
)


def _records(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if text in r.getMessage()]


class _Running:
    """An informer's run() on its own thread, stopped at the end."""

    def __init__(self, inf: Informer) -> None:
        self.inf = inf
        self.stop = threading.Event()
        self.thread = threading.Thread(target=inf.run, args=(self.stop,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.stop.set()
        self.inf.stop_watch()
        self.thread.join(10)


def _spoil(name: str, how: str) -> Any:
    """A codec._frames that spoils the first watch event of the pod `name` (once), as `how` says."""
    real_frames = codec._frames
    done: list[bool] = []

    def frames(stream: Any) -> Iterator[bytes]:
        for frame in real_frames(stream):
            ev = meta_pb.WatchEvent()
            ev.ParseFromString(frame)
            unknown = codec._unwrap(ev.object.raw)
            pod = Pod()
            if not done and unknown.typeMeta.kind == "Pod":
                pod.ParseFromString(unknown.raw)
            if done or pod.metadata.name != name:
                yield frame
                continue
            done.append(True)
            if how == "spec":
                # The metadata intact, the spec (field 2) bytes that are no message: a tag cut short.
                meta = pod.metadata.SerializeToString()
                unknown.raw = b"\x0a" + _varint(len(meta)) + meta + b"\x12\x02\xff\xff"
            else:
                unknown.typeMeta.apiVersion, unknown.typeMeta.kind = "example.com/v1", "Frobnicator"
            ev.object.raw = codec.MAGIC + unknown.SerializeToString()
            yield ev.SerializeToString()

    return frames


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


@pytest.mark.parametrize(("how", "says"), [
    ("spec", "cannot decode Pod: Error parsing message"),
    # A kind the decoder has no type for (client-go: not registered in its scheme).
    ("kind", 'an object of kind "Frobnicator" (apiVersion "example.com/v1") in a watch of Pod'),
], ids=["spec", "kind"])
def test_an_undecodable_watch_event_is_one_line_and_a_relist_that_loses_nothing(
        dev_cluster: DevCluster, namespace: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
        how: str, says: str) -> None:
    monkeypatch.setattr(codec, "_frames", _spoil("bad", how))
    with kube_api(dev_cluster.kubeconfig) as api, caplog.at_level(logging.INFO, logger="wasmsched"):
        inf = Informer(api, RESOURCES["Pod"])
        running = _Running(inf)
        try:
            assert inf.wait_for_sync(30)
            for name in ("bad", "good"):
                create_pod(api, namespace, pod_json(name, "nobody"))
            # The relist brings the pod whose event was spoilt, and the one after it.
            wait_for("both pods in the store", lambda: inf.get(f"{namespace}/bad") and inf.get(f"{namespace}/good"))
        finally:
            running.close()
    assert inf.decode_failures == 1 and inf.lists == 2
    lines = _records(caplog, "Watch ended with error; relisting")
    assert len(lines) == 1, lines
    escaped = says.replace('"', '\\"')
    assert f'kind="Pod" object="{namespace}/bad" err="unable to decode an event from the watch stream: {escaped}' \
        in lines[0]
    assert not _records(caplog, "Failed to watch")


def test_a_10_mb_annotation_is_just_a_big_object() -> None:
    """The API server keeps annotations under 256 KiB; a watch stream (a proxy, an aggregated server) may still
    carry bigger objects, and they are decoded whole."""
    pod = Pod()
    pod.metadata.namespace, pod.metadata.name, pod.metadata.resourceVersion = "ns", "big", "7"
    pod.metadata.annotations["example.com/blob"] = "x" * (10 << 20)
    ev = meta_pb.WatchEvent(type="ADDED")
    ev.object.raw = codec.encode_protobuf(pod, "v1", "Pod")
    frame = ev.SerializeToString()
    stream = io.BufferedReader(io.BytesIO(len(frame).to_bytes(4, "big") + frame))  # type: ignore[arg-type]
    events = list(codec.protobuf_watch_events(stream, Pod))
    assert [(e.type, e.resource_version) for e in events] == [("ADDED", "7")]
    assert events[0].object == pod


def test_absurd_node_quantities_are_what_kube_scheduler_makes_of_them(
        dev_cluster: DevCluster, namespace: str, tmp_path: Path) -> None:
    """kube-scheduler takes a node's allocatable through Quantity.MilliValue()/Value(), int64 arithmetic
    that gives 0 for "1e30" and wraps "9223372036854775807" cpu to -1000 milli: neither node takes a
    pod, and the scheduler goes on with the others."""
    sched = unique("absurd")
    nodes = [node_json(unique("absurd-cpu"), cpu="1e30", labels={"absurd": sched}),
             node_json(unique("wrapped-cpu"), cpu="9223372036854775807", labels={"absurd": sched}),
             node_json(unique("huge-memory"), memory="1e5000", labels={"absurd": sched}),
             node_json(unique("plain"), cpu="2", labels={"absurd": sched})]
    selector = {"nodeSelector": {"absurd": sched}}
    with kube_api(dev_cluster.kubeconfig) as api:
        for n in nodes:
            create_node(api, n)
        proc = SchedulerProcess(tmp_path, dev_cluster.kubeconfig, scheduler_config(tmp_path / "c.yaml", sched))
        try:
            create_pod(api, namespace, pod_json("too-big", sched, cpu="3", extra_spec=selector))
            create_pod(api, namespace, pod_json("fits", sched, cpu="1", extra_spec=selector))
            bound = wait_for("the pod that fits bound", lambda: (get_pod(api, namespace, "fits") or {}).get(
                "spec", {}).get("nodeName"))
            assert bound == nodes[3]["metadata"]["name"]
            wait_for("the pod too big for every node reported", lambda: "too-big" in proc.log() and
                     "Insufficient cpu" in proc.log())
            assert not (get_pod(api, namespace, "too-big") or {}).get("spec", {}).get("nodeName")
        finally:
            proc.stop()
            for n in nodes:
                api.request("DELETE", f"/api/v1/nodes/{n['metadata']['name']}")
    log = proc.log()
    assert "Traceback" not in log and "Event handler failed" not in log, log
    warned = [line for line in log.splitlines() if "Node allocatable quantity is past int64" in line]
    assert sorted(line.split('field="')[1].split('"')[0] + " " + line.rsplit(" ", 1)[1] for line in warned) == [
        "status.allocatable.cpu milliValue=-1000", "status.allocatable.cpu milliValue=0",
        "status.allocatable.memory value=0"], warned


# ----- the kubeconfig's server ----------------------------------------------------------------------------------


class _Html(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<html><body>Please sign in</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def _first_failure(api: KubeApi, caplog: pytest.LogCaptureFixture) -> str:
    """The informer's first "Failed to watch" line (it retries with backoff, never synced)."""
    with caplog.at_level(logging.INFO, logger="wasmsched"):
        inf = Informer(api, RESOURCES["Node"])
        running = _Running(inf)
        try:
            line = wait_for("a Failed to watch line", lambda: next(iter(_records(caplog, "Failed to watch")), None))
        finally:
            running.close()
    assert not inf.has_synced()
    return line


def test_a_server_that_answers_html_is_named_in_a_retried_line(caplog: pytest.LogCaptureFixture) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Html)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        cfg = load_configuration(master=f"http://127.0.0.1:{server.server_address[1]}")
        with KubeApi(cfg) as api:
            line = _first_failure(api, caplog)
    finally:
        server.shutdown()
        server.server_close()
    assert 'err="failed to list Node: GET http://127.0.0.1:' in line, line
    assert ("/api/v1/nodes: the server answered text/html; charset=utf-8, not a Kubernetes API object (is the "
            "kubeconfig's server an API server?): '<html><body>Please sign in</body></html>'\"") in line
    assert line.endswith('retryIn="0.8s"'), line


@pytest.mark.parametrize(("spoil", "cause"), [
    ("ca", "SSL certificate OpenSSL verify result: unable to get local issuer certificate (20)"),
    ("token", "failed to list Node: Unauthorized"),
], ids=["ca", "token"])
def test_a_wrong_ca_or_a_rejected_token_is_a_retried_line_naming_the_cause(
        dev_cluster: DevCluster, tmp_path: Path, caplog: pytest.LogCaptureFixture, spoil: str, cause: str) -> None:
    """As kube-scheduler: its informers log "Failed to watch" and retry with backoff; it does not exit."""
    kubeconfig = yaml.safe_load(Path(dev_cluster.kubeconfig).read_text())
    if spoil == "ca":
        other_ca = generate_self_signed_cert_key("other", [], [])[0]
        kubeconfig["clusters"][0]["cluster"]["certificate-authority-data"] = base64.b64encode(other_ca).decode()
    else:
        kubeconfig["users"][0]["user"]["token"] = "expired-or-revoked"
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(kubeconfig))
    with KubeApi(load_configuration(str(path))) as api:
        line = _first_failure(api, caplog)
    assert cause in line and line.endswith('retryIn="0.8s"'), line
