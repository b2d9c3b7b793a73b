"""args.watch (docs/abi.md §9, §14.2): decoded into GroupVersionResources, every bad entry one line naming
the field."""

from __future__ import annotations

from typing import Any

import pytest

from wasmsched.api.gvr import GroupVersionResource
from wasmsched.wasm.args import decode_args
from wasmsched.wasm.errors import WasmLoadError

NRT = {"group": "topology.node.k8s.io", "version": "v1alpha2", "resource": "noderesourcetopologies"}
NS = {"group": "", "version": "v1", "resource": "namespaces"}


def test_watch_decodes_in_order_with_the_core_group_empty() -> None:
    args = decode_args("P", {"guestURL": "x.wasm", "watch": [NRT, NS]})
    assert args.watch == (GroupVersionResource("topology.node.k8s.io", "v1alpha2", "noderesourcetopologies"),
                          GroupVersionResource("", "v1", "namespaces"))
    assert not args.warnings
    assert decode_args("P", {"guestURL": "x.wasm"}).watch == ()
    assert decode_args("P", {"guestURL": "x.wasm", "watch": []}).watch == ()


@pytest.mark.parametrize(("watch", "detail"), [
    ("namespaces", "watch: expected a list of {group, version, resource}, got string"),
    ({"group": ""}, "watch: expected a list of {group, version, resource}, got object"),
    ([NS, "namespaces"], "watch[1]: expected an object with group, version and resource, got string"),
    ([NS, {"group": "", "version": "v1"}], "watch[1].resource: required field is missing"),
    ([{"version": "v1", "resource": "namespaces"}], "watch[0].group: required field is missing"),
    ([{**NS, "version": 1}], "watch[0].version: expected a string, got number"),
    ([{**NS, "resource": None}], "watch[0].resource: expected a string, got null"),
    ([{**NS, "kind": "Namespace"}], 'watch[0]: unknown field "kind" (expected group, version and resource)'),
    ([{**NS, "resource": "Namespaces"}], "watch[0].resource: 'Namespaces' is not a resource name"),
    ([{**NS, "resource": ""}], "watch[0].resource: '' is not a resource name"),
    ([{**NS, "version": "v 1"}], "watch[0].version: 'v 1' is not an API version"),
    ([{**NRT, "group": "Topology.node"}], "watch[0].group: 'Topology.node' is not an API group"),
    ([NRT, NS, NRT], "watch[2]: duplicate of watch[0] (noderesourcetopologies.v1alpha2.topology.node.k8s.io)"),
])
def test_bad_entries_fail_decoding_naming_the_field(watch: Any, detail: str) -> None:
    with pytest.raises(WasmLoadError) as e:
        decode_args("NodeResourceTopologyMatch", {"guestURL": "x.wasm", "watch": watch})
    text = str(e.value)
    assert text.startswith(f"failed to decode into NodeResourceTopologyMatch PluginConfig: {detail}"), text
    assert "\n" not in text
