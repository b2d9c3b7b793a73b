"""`wasmsched simulate`: schedule manifests on the embedded cluster and report the placements."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import yaml

from wasmsched.api.decoding import brief_quoted_values
from wasmsched.api.kinds import RESOURCES
from wasmsched.api.manifest import ManifestError, UnstructuredObject, load_paths, write_manifests
from wasmsched.api.types import object_key
from wasmsched.cli import color
from wasmsched.cli.progress import show_progress, wanted
from wasmsched.cli.table import format_table, one_line
from wasmsched.config import ConfigError, load_config
from wasmsched.embedded.memory import AdmissionError, ConflictError
from wasmsched.framework.runtime import FrameworkError
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.scheduler.explain import explain_document
from wasmsched.simulator.simulation import Simulation, SimulationResult
from wasmsched.wasm.args import is_wasm_args, misspelled_guest_url

log = logging.getLogger("wasmsched.simulate")

if TYPE_CHECKING:
    from wasmsched.config.types import KubeSchedulerConfiguration
    from wasmsched.metrics.metrics import SchedulerMetrics
    from wasmsched.plugins.registry import Registry

# Every pod of the input ends in one of these; the summary counts each.
PHASES = ("Scheduled", "Unschedulable", "Preempted", "Error", "Ignored", "Running")


# The table lists every pod up to this many (--limit); json and yaml always have every pod.
TABLE_LIMIT = 50


def _count(text: str) -> int:
    n = int(text)
    if n < 0:
        raise argparse.ArgumentTypeError(f"{text}: must be 0 or more")
    return n


class BadInput(Exception):
    """Exit code 2: the user's files or flags are wrong; the text says which and where."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) file")
    p.add_argument("--output", "-o", choices=("table", "json", "yaml"), default="table")
    p.add_argument("--explain", action="store_true", help="per pod: filter result and scores of every node")
    p.add_argument("--out", metavar="DIR", help="write the final cluster state as manifests into DIR")
    p.add_argument("--metrics", metavar="FILE",
                   help="write the scheduler's Prometheus metrics (text exposition) into FILE at the end")
    p.add_argument("--report", metavar="FILE.html",
                   help="write a self-contained HTML report of the run (cluster, pods and why, plugins) into FILE")
    listing = p.add_mutually_exclusive_group()
    listing.add_argument("--limit", type=_count, default=TABLE_LIMIT, metavar="N",
                         help=f"the table lists every pod up to N pods (default {TABLE_LIMIT}); with more, only "
                              "those not Scheduled or Running, at most N, and counts the rest")
    listing.add_argument("--all", action="store_const", const=None, dest="limit",
                         help="the table lists every pod, however many")
    add_input_arguments(p)
    p.set_defaults(func=run)


def add_input_arguments(p: argparse.ArgumentParser) -> None:
    """What a run schedules and how it shows progress: simulate's and compare's (which runs it twice)."""
    p.add_argument("--generate", metavar="nodes=N,pods=M", help="add a synthetic cluster")
    p.add_argument("--seed", type=int, default=0, help="seed for random tie-breaks (default 0)")
    p.add_argument("--provision-volumes", action="store_true",
                   help="emulate an external provisioner: claims of WaitForFirstConsumer classes get a PV on "
                        "the node chosen for their pod")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="no progress line on stderr (it shows on a terminal during runs longer than a second)")
    p.add_argument("paths", nargs="*", metavar="PATH", help="YAML/JSON files or directories")
    # Also after the subcommand, as users type it; SUPPRESS keeps a -v given before it.
    p.add_argument("-v", "--v", type=int, dest="verbosity", default=argparse.SUPPRESS,
                   help="log verbosity on stderr (0: warnings, 2: info, 5: debug)")


def run(args: argparse.Namespace) -> int:
    try:
        if args.out:
            check_out_dir(Path(args.out))
        if args.metrics:
            check_metrics_file(Path(args.metrics))
        if args.report:
            check_metrics_file(Path(args.report), "--report")
        sim, warnings = _build(args)
    except BadInput as e:
        color.error(_error_text(str(e)))
        return 2
    for w in warnings:
        color.warning(w)
    exposition = b""
    page: dict[str, Any] | None = None
    try:
        # Progress is for a person watching a table come; json and yaml are for programs.
        with show_progress(sim, "simulate", sys.stderr,
                           enabled=args.output == "table" and wanted(sys.stderr, quiet=args.quiet)):
            result = sim.run_until_quiet(interruptible=True)
        # Before close, which empties the wasm instance pools the gauges read.
        if sim.scheduler.metrics is not None:
            exposition = sim.scheduler.metrics.render()
        if args.report:
            page = report_document(sim, result, title=f"wasmsched simulate {' '.join(_inputs(args))}",
                                   config=args.config, metrics=sim.scheduler.metrics)
    finally:
        sim.scheduler.close()
    _report(result, args.output, args.explain, sys.stdout, limit=args.limit)
    if result.interrupted:
        # The pods so far are printed; files are left unwritten, so none is taken for a complete run's.
        return 130
    try:
        if args.out:
            write_cluster_state(result, Path(args.out))
        if args.metrics:
            Path(args.metrics).write_bytes(exposition)
        if page is not None:
            from wasmsched.report import html

            size = html.write(Path(args.report), page)
            log.info('"Wrote the report" file="%s" bytes=%d', args.report, size)
    except OSError as e:  # the checks before the run passed, so the disk or the directory changed since
        color.error(f"{e.filename or args.out or args.metrics or args.report}: {e.strerror or e}")
        return 1
    return 0


def _inputs(args: argparse.Namespace) -> list[str]:
    return [*args.paths, *([f"--generate {args.generate}"] if args.generate else [])]


def report_document(sim: Simulation, result: SimulationResult, *, title: str, config: str | None,
                    metrics: SchedulerMetrics | None) -> dict[str, Any]:
    """report/data.py's document, imported only when a report is asked for."""
    from wasmsched.report.data import report_document as build

    return build(sim, result, title=title, config=config, metrics=metrics)


def _build(args: argparse.Namespace) -> tuple[Simulation, list[str]]:
    if not args.paths and not args.generate:
        raise BadInput("simulate needs at least one PATH or --generate")
    try:
        cfg = load_config(args.config)
    except ConfigError as e:
        raise BadInput(str(e)) from e
    except OSError as e:
        raise BadInput(f"{args.config}: {e.strerror}") from e
    objects: dict[str, list[Any]] = {}
    sources: dict[int, str] = {}  # id(message) -> where it was read; generated objects have none
    warnings: list[str] = []
    unstructured: list[UnstructuredObject] = []
    if args.paths:
        for p in args.paths:
            if not Path(p).exists():
                raise BadInput(f"{p}: no such file or directory")
        try:
            loaded = load_paths(args.paths)
        except ManifestError as e:
            raise BadInput(str(e)) from e
        unstructured = _without_scheduler_configuration(loaded.unstructured, args.config)
        dropped = {u.warning for u in loaded.unstructured} - {u.warning for u in unstructured}
        warnings.extend(w for w in loaded.warnings if w not in dropped)
        if not loaded.objects:
            warnings.append(f"{', '.join(args.paths)}: no Kubernetes objects found")
        sources = {id(o.message): f"{o.source}: document {o.document}" for o in loaded.objects}
        for kind, msgs in loaded.by_kind.items():
            objects.setdefault(kind, []).extend(msgs)
    if args.generate:
        from wasmsched.embedded.generate import GenerateSpecError, generate, parse_spec

        try:
            spec = parse_spec(args.generate)
        except GenerateSpecError as e:
            raise BadInput(str(e)) from e
        for kind, msgs in generate(spec.nodes, spec.pods, spec.seed).items():
            objects.setdefault(kind, []).extend(msgs)
    registry = in_tree_registry()
    try:
        # Relative guestURLs are relative to the configuration file, as kubeconfig paths are.
        register_wasm_plugins(registry, cfg, Path(args.config).absolute().parent if args.config else None)
    except ValueError as e:
        raise BadInput(f"{args.config}: {e}") from e
    metrics = None
    if args.metrics or args.report:  # a report shows the plugins' times
        from wasmsched.metrics.metrics import SchedulerMetrics  # prometheus_client only when asked for

        # A report times every cycle's plugins, not kube's 10 % sample: a simulation is short, and the times
        # of one run are what its reader compares.
        metrics = SchedulerMetrics(plugin_metrics_sample_percent=100) if args.report else SchedulerMetrics()
    try:
        sim = Simulation(cfg, registry, seed=args.seed, explain=args.explain, explain_summary=bool(args.report),
                         metrics=metrics, provision_volumes=args.provision_volumes)
    except FrameworkError as e:
        where = f"{args.config}: " if args.config else ""
        raise BadInput(f"{where}{e}") from e
    try:
        # Objects of kinds plugins declared they watch (args.watch), CRDs' among them: no longer skipped.
        taken = {id(u) for u in sim.load_watched(unstructured)}
    except ManifestError as e:
        raise BadInput(str(e)) from e
    skipped = {u.warning for u in unstructured if id(u) in taken}
    warnings = [w for w in warnings if w not in skipped]
    try:
        orphans = sim.apply(objects)
    except AdmissionError as e:
        source = sources.get(id(e.obj))
        field = f"{e.field}: " if e.field else ""
        raise BadInput(f"{source}: {field}{e}" if source else str(e)) from e
    except ConflictError as e:
        raise BadInput(_conflict_message(e, sim, sources)) from e
    for pod in orphans:
        where = sources.get(id(pod), "--generate")
        warnings.append(f'{where}: spec.nodeName: node "{pod.spec.nodeName}" does not exist: pod '
                        f'{object_key(pod)} is reported Running and holds no node\'s resources')
    return sim, warnings


def _without_scheduler_configuration(objs: list[UnstructuredObject], config: str | None) -> list[UnstructuredObject]:
    """A KubeSchedulerConfiguration among the PATHs was meant as --config: running on the defaults instead
    would give other results without saying so. The --config file itself, in a directory given as PATH, is
    left out quietly."""
    configured = Path(config).resolve() if config else None
    kept = []
    for u in objs:
        if u.kind != "KubeSchedulerConfiguration":
            kept.append(u)
        elif configured is None or Path(u.source).resolve() != configured:
            raise BadInput(f"{u.where}: a KubeSchedulerConfiguration is not a manifest to schedule; "
                           f"to use it, pass it as --config {u.source}")
    return kept


def register_wasm_plugins(registry: Registry, cfg: KubeSchedulerConfiguration, base_dir: Path | None) -> None:
    """wasm/plugin.py's register_wasm_plugins, imported only when a profile configures a wasm plugin:
    the wasm host (wasmtime, ctypes bindings) is the largest part of start-up, and most runs have none."""
    for pc in (pc for profile in cfg.profiles for pc in profile.plugin_config if pc.name not in registry):
        typo = misspelled_guest_url(pc.args)
        if typo is not None:
            raise ValueError(f'pluginConfig "{pc.name}": {typo}')
    if any(is_wasm_args(pc.args) for profile in cfg.profiles for pc in profile.plugin_config):
        from wasmsched.wasm import plugin

        plugin.register_wasm_plugins(registry, cfg, base_dir)


def _error_text(message: str) -> str:
    """One line, long quoted values cut (the file, field path and reason stay whole); a guest's captured
    output and stack trace (an instantiate error) and whole values only with -v 2+."""
    if logging.getLogger("wasmsched").isEnabledFor(logging.INFO):
        return message
    return one_line(brief_quoted_values(message), "with -v 2")


def _conflict_message(e: ConflictError, sim: Simulation, sources: dict[int, str]) -> str:
    """A duplicate object names both places it came from (a file's document, or --generate)."""
    first = sim.cluster.get(type(e.obj).DESCRIPTOR.name, object_key(e.obj)) if e.obj is not None else None
    if first is None:
        return str(e)
    return (f"{sources.get(id(e.obj), '--generate')}: {e} "
            f"(first defined in {sources.get(id(first), '--generate')})")


def check_out_dir(out_dir: Path, flag: str = "--out") -> None:
    """--out must be a directory that can be written or created: found out before the run, not after
    the results are printed. It is created and a file is written in it here, as mkdir fails in more ways
    than can be foreseen (/proc, a read-only file system, a name too long); then what this made is
    removed, so bad input leaves no trace."""
    try:
        existing = out_dir
        while not existing.exists():
            if existing.is_symlink():
                raise BadInput(f"{flag} {out_dir}: {existing} is a dangling symbolic link")
            existing = existing.parent
        if not existing.is_dir():
            what = "not a directory" if existing == out_dir else f"{existing} is not a directory"
            raise BadInput(f"{flag} {out_dir}: {what}")
        if not os.access(existing, os.W_OK | os.X_OK):
            raise BadInput(f"{flag} {out_dir}: permission denied: cannot write in {existing}")
        _try_writing_in(out_dir, existing, flag)
    except OSError as e:  # stat of an unreadable or impossible path: ENAMETOOLONG, ELOOP, EACCES
        raise BadInput(f"{flag} {out_dir}: {e.strerror or e}") from e


def _try_writing_in(out_dir: Path, existing: Path, flag: str) -> None:
    """Creates out_dir and a file in it, then removes what it created (the directories below `existing`)."""
    made = [d for d in (out_dir, *out_dir.parents) if d != existing and existing in d.parents]
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        what = "" if e.filename is None or str(e.filename) == str(out_dir) else f" {e.filename}"
        raise BadInput(f"{flag} {out_dir}: cannot create directory{what}: {e.strerror or e}") from e
    try:
        fd, probe = tempfile.mkstemp(dir=out_dir, prefix=".wasmsched-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise BadInput(f"{flag} {out_dir}: cannot write in it: {e.strerror or e}") from e
    finally:
        for d in made:  # innermost first
            with contextlib.suppress(OSError):
                d.rmdir()


def check_metrics_file(path: Path, flag: str = "--metrics") -> None:
    """--metrics FILE (and --report FILE) is written after the run: a file that cannot be written is found out
    before. It is opened for appending here (so an existing file keeps its bytes until the run ends), as
    opening fails in more ways than can be foreseen (/proc, a read-only file system); a file this made is
    removed again."""
    parent = path.absolute().parent
    try:
        if path.is_dir():
            raise BadInput(f"{flag} {path}: is a directory")
        if not parent.is_dir():
            raise BadInput(f"{flag} {path}: {parent} is not a directory")
        existed = path.exists()
        with path.open("ab"):
            pass
        if not existed:
            path.unlink()
    except OSError as e:
        raise BadInput(f"{flag} {path}: {e.strerror or e}") from e


def result_document(result: SimulationResult, explain: bool) -> dict[str, Any]:
    pods = []
    for p in result.pods:
        d: dict[str, Any] = {
            "namespace": p.namespace, "name": p.name, "node": p.node, "phase": p.phase,
            "message": p.message, "nominatedNode": p.nominated_node, "attempts": p.attempts,
        }
        if explain:
            d.update(explain_document(p.explain))
        pods.append(d)
    # Binding cycles record their events from other threads, so the global order varies from run to
    # run. Grouping by pod (in report order) keeps each pod's events in the order they happened and
    # makes the output reproducible.
    rank = {f"{p.namespace}/{p.name}": i for i, p in enumerate(result.pods)}
    ordered = sorted(result.events, key=lambda e: rank.get(e.regarding, len(rank)))
    events = [{"type": e.type, "reason": e.reason, "regarding": e.regarding, "message": e.message}
              for e in ordered]
    summary: dict[str, Any] = {phase.lower(): result.count(phase) for phase in PHASES}
    summary["seconds"] = round(result.seconds, 3)
    if result.interrupted:
        summary["pending"] = result.count("Pending")
        summary["interrupted"] = True
    summary.update(result.extra_summary)
    return {"pods": pods, "events": events, "summary": summary}


def _report(result: SimulationResult, output: str, explain: bool, out: TextIO, limit: int | None = None) -> None:
    doc = result_document(result, explain)
    if output == "json":
        json.dump(doc, out, indent=None, separators=(",", ":"))
        out.write("\n")
    elif output == "yaml":
        yaml.safe_dump(doc, out, sort_keys=False)
    else:
        out.write(format_table(doc, limit=limit, color=color.enabled(out)))


def write_cluster_state(result: SimulationResult, out_dir: Path) -> None:
    """The final objects as manifests, byte for byte the same for the same input: objects sorted by
    namespace/name, keys sorted as kubectl prints them."""
    out_dir.mkdir(parents=True, exist_ok=True)
    # One file per kind, named as `snapshot` names them, so that the output is a cluster `simulate` reads.
    for kind, resource in RESOURCES.items():
        fname = f"{resource.plural}.yaml"
        objs = result.cluster.list(kind)
        if objs:
            write_manifests(out_dir / fname, objs)
