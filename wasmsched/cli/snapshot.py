"""`wasmsched snapshot`: a running cluster's objects as manifests `simulate` reads, so a plugin can be
tried on a copy of the cluster before it is deployed."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from wasmsched.api.kinds import RESOURCES
from wasmsched.api.manifest import write_manifests
from wasmsched.cli import color
from wasmsched.cli.simulate import BadInput, check_out_dir
from wasmsched.kube.api import (
    ApiError,
    ClientConfigError,
    ClientConnection,
    KubeApi,
    TransportError,
    load_kubectl_configuration,
)
from wasmsched.kube.informer import POD_FIELD_SELECTOR

# What a scheduler's decisions depend on, in the order simulate applies them (one file per kind).
SNAPSHOT_KINDS = tuple(RESOURCES)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kubeconfig", default="", help="kubeconfig file (default, as kubectl: the files $KUBECONFIG "
                   "lists, else ~/.kube/config, else in-cluster configuration)")
    p.add_argument("--master", default="", help="the API server's address (overrides the kubeconfig's)")
    p.add_argument("dir", metavar="DIR", help="where to write the manifests (one file per kind)")
    p.add_argument("-v", "--v", type=int, dest="verbosity", default=argparse.SUPPRESS,
                   help="log verbosity on stderr (0: warnings, 2: info, 5: debug)")
    p.set_defaults(func=run)


def snapshot(api: KubeApi, out_dir: Path) -> dict[str, int]:
    """Writes DIR/<kind plural>.yaml for each kind with objects; returns the count per kind."""
    counts: dict[str, int] = {}
    lists: dict[str, list[Any]] = {}
    for kind in SNAPSHOT_KINDS:
        res = RESOURCES[kind]
        if not res.available():
            continue
        # Finished pods hold no resources and the scheduler's informer leaves them out too.
        items, _ = api.list(res, field_selector=POD_FIELD_SELECTOR if kind == "Pod" else "")
        lists[kind] = items
    out_dir.mkdir(parents=True, exist_ok=True)
    for kind, items in lists.items():
        path = out_dir / f"{RESOURCES[kind].plural}.yaml"
        if not items:
            path.unlink(missing_ok=True)
            continue
        counts[kind] = write_manifests(path, items)
    return counts


def run(args: argparse.Namespace) -> int:
    try:
        check_out_dir(Path(args.dir), "snapshot DIR")
        api = KubeApi(load_kubectl_configuration(args.kubeconfig, args.master), ClientConnection())
    except (ClientConfigError, BadInput) as e:
        color.error(f"{e}")
        return 2
    try:
        counts = snapshot(api, Path(args.dir))
    except (ApiError, TransportError) as e:
        color.error(f"{api.host}: {e}")
        return 1
    finally:
        api.close()
    total = sum(counts.values())
    summary = ", ".join(f"{n} {RESOURCES[k].plural}" for k, n in counts.items())
    print(f"wrote {total} objects to {args.dir}: {summary or 'none'}")
    return 0
