"""The `wasmsched` command."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import select
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType
from typing import Any, NoReturn

from wasmsched.cli import color
from wasmsched.cli.logs import setup_logging

# name -> (module, help). A subcommand's module adds its arguments (`add_arguments(parser)`) and is
# imported only when the subcommand is given: `run` and `snapshot` load the kubernetes client, `cache`
# the wasm module cache, none of which `simulate` needs (tests/cli/test_startup_imports.py).
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "simulate": ("wasmsched.cli.simulate", "schedule manifests on an embedded in-memory cluster"),
    "compare": ("wasmsched.cli.compare",
                "schedule the same manifests with two configurations and report what changed"),
    "cache": ("wasmsched.cli.cache", "the cache of compiled wasm modules"),
    "guest": ("wasmsched.cli.guest", "push wasm guests to, and pull them from, OCI registries"),
    "run": ("wasmsched.cli.run",
            "schedule the pods of a real cluster (a Kubernetes API server), as kube-scheduler does"),
    "snapshot": ("wasmsched.cli.snapshot",
                 "write a cluster's nodes, pods and what scheduling depends on as manifests for simulate"),
    "dev-cluster": ("wasmsched.cli.devcluster",
                    "start or stop a local Kubernetes control plane with KWOK fake nodes"),
    "completion": ("wasmsched.cli.completion", "print a bash or zsh completion script for wasmsched"),
}


def version_text() -> str:
    """`wasmsched <version> (wasmtime <version>, kubernetes <version>)`, from the installed packages'
    metadata; kubernetes is the version whose API protos are built in (tools/gen_protos.py writes its
    k8s.io/api module version, v0.X.Y for Kubernetes v1.X.Y, next to them), left out if unknown."""
    import importlib.resources

    from wasmsched.util.version import dist_version

    extra = [f"wasmtime {dist_version('wasmtime')}"]
    try:
        api = (importlib.resources.files("wasmsched.api.gen") / "VERSION").read_text().strip()
    except (OSError, ModuleNotFoundError):
        api = ""
    if api.startswith("v0."):
        extra.append(f"kubernetes v1.{api.removeprefix('v0.')}")
    return f"wasmsched {dist_version('wasmsched')} ({', '.join(extra)})"


class _LazySubcommands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """Subparsers whose arguments are added when their subcommand is chosen, from its module."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        sub = self.choices.get(values[0])
        if isinstance(sub, argparse.ArgumentParser):  # else argparse reports the invalid choice
            add_subcommand_arguments(values[0], sub)
        super().__call__(parser, namespace, values, option_string)


def add_subcommand_arguments(name: str, sub: argparse.ArgumentParser) -> None:
    """The subcommand's own arguments, and the global ones that may also follow it."""
    importlib.import_module(SUBCOMMANDS[name][0]).add_arguments(sub)
    # SUPPRESS keeps a --color given before the subcommand.
    sub.add_argument("--color", choices=color.MODES, default=argparse.SUPPRESS, help=COLOR_HELP)


COLOR_HELP = "colour in tables and error lines: auto (on a terminal, unless NO_COLOR is set), always or never"


class _VersionAction(argparse.Action):
    """argparse's "version" action with the text found when --version is given: reading the packages'
    metadata (importlib.metadata) costs more start-up time than the rest of the parser."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> NoReturn:
        print(version_text())
        parser.exit()


# What a shell reports for a program killed by SIGPIPE (128 + 13), as `yes | head` is.
EXIT_SIGPIPE = 141


def _stdout_closed() -> bool:
    """Whether stdout's reader went away (`wasmsched ... | head`): a pipe without readers polls POLLERR.
    If so, stdout now writes to /dev/null, so that the interpreter's own flush at exit has nothing to
    complain about. A BrokenPipeError of another pipe or socket is not this."""
    try:
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        events = poller.poll(0)
    except (OSError, ValueError, AttributeError):
        return False
    if not any(ev & select.POLLERR for _, ev in events):
        return False
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
    return True


def build_parser() -> argparse.ArgumentParser:
    """The command's parser; each subcommand's arguments are added when it is given (_LazySubcommands)."""
    parser = argparse.ArgumentParser(prog="wasmsched", description="A Kubernetes scheduler in Python "
                                     "that runs WebAssembly scheduler plugins.")
    parser.add_argument("-v", "--v", type=int, default=0, dest="verbosity",
                        help="log verbosity on stderr (0: warnings, 2: info, 5: debug)")
    parser.add_argument("--version", action=_VersionAction,
                        help="print the versions of wasmsched, wasmtime and the Kubernetes API, then exit")
    parser.add_argument("--color", choices=color.MODES, default="auto", help=COLOR_HELP)
    sub = parser.add_subparsers(dest="command", required=True, action=_LazySubcommands)
    for name, (_, text) in SUBCOMMANDS.items():
        sub.add_parser(name, help=text)
    return parser


# A SIGTERM that comes while the subcommand is imported (about a second for `run`, which a supervisor may
# stop as soon as it started it) is held, not fatal: a subcommand that stops cleanly on SIGTERM
# (`stops_on_sigterm`, set by `run`) takes it over; any other is then ended by it, as it would have been.
_held_signals: list[int] = []


def _hold_signal(signum: int, _frame: FrameType | None) -> None:
    _held_signals.append(signum)


def held_signals() -> list[int]:
    """The SIGTERMs that came before the subcommand ran (see _held_signals)."""
    return list(_held_signals)


def _parse_holding_sigterm(argv: list[str] | None) -> argparse.Namespace:
    if threading.current_thread() is not threading.main_thread():
        return build_parser().parse_args(argv)  # only the main thread has signal handlers (tests call main)
    _held_signals.clear()  # main may run more than once in a process (tests)
    previous = signal.signal(signal.SIGTERM, _hold_signal)
    try:
        args = build_parser().parse_args(argv)
    except BaseException:
        signal.signal(signal.SIGTERM, previous)
        raise
    if not getattr(args, "stops_on_sigterm", False):
        signal.signal(signal.SIGTERM, previous)
        if _held_signals:
            signal.raise_signal(signal.SIGTERM)
    return args


def main(argv: list[str] | None = None) -> int:
    args = _parse_holding_sigterm(argv)
    setup_logging(args.verbosity)
    color.set_mode(args.color)
    try:
        rc = int(args.func(args))
        sys.stdout.flush()  # a reader that went away shows here, not in the interpreter's exit
        return rc
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        if not _stdout_closed():
            logging.getLogger("wasmsched").exception("internal error")
            return 1
        return EXIT_SIGPIPE
    except MemoryError:
        # Tracebacks need memory too; one line is what can still be said.
        color.error("out of memory")
        return 1
    except Exception:
        logging.getLogger("wasmsched").exception("internal error")
        return 1


if __name__ == "__main__":
    sys.exit(main())
