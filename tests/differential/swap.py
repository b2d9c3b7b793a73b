"""In-tree plugins replaced by their wasm guests for the differential tests: wasmsched's profile runs the
guest under the in-tree plugin's name, at its place and with its weight and args, while kube-oracle keeps
kube's own plugin, so every verdict, reason and score of the guest is compared with kube's.

    python -m tests.differential.fuzz --swap interpodaffinity --seeds 20000
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from wasmsched.config.args import InterPodAffinityArgs, get_args
from wasmsched.framework.interface import Handle, Plugin
from wasmsched.plugins.registry import Registry
from wasmsched.wasm.plugin import new_wasm_plugin

ROOT = Path(__file__).resolve().parents[2]
# Built by `make examples`.
INTERPODAFFINITY_GUEST = ROOT / "examples" / "interpodaffinity" / "interpodaffinity.wasm"


def _interpodaffinity(args: Any, handle: Handle) -> Plugin:
    a = get_args(InterPodAffinityArgs, args)
    config = {"hardPodAffinityWeight": a.hard_pod_affinity_weight,
              "ignorePreferredTermsOfExistingPods": a.ignore_preferred_terms_of_existing_pods}
    return new_wasm_plugin("InterPodAffinity", {
        "guestURL": str(INTERPODAFFINITY_GUEST), "guestConfig": json.dumps(config), "timeout": "30s",
        # Namespace selectors and the namespaces of terms read Namespaces (docs/abi.md §14.2).
        "watch": [{"group": "", "version": "v1", "resource": "namespaces"}],
    }, handle)


SWAPS: dict[str, tuple[str, Callable[[Any, Handle], Plugin]]] = {
    "interpodaffinity": ("InterPodAffinity", _interpodaffinity),
}


def swapped_registry(swap: str) -> Registry:
    """The in-tree registry with the plugin `swap` names served by its guest."""
    name, factory = SWAPS[swap]
    return Registry({name: factory})
