"""The `wasmsched` command."""

from __future__ import annotations

import argparse
import logging
import sys

from wasmsched.cli import simulate
from wasmsched.cli.logs import setup_logging


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="wasmsched", description="A Kubernetes scheduler in Python "
                                     "that runs WebAssembly scheduler plugins.")
    parser.add_argument("-v", "--v", type=int, default=0, dest="verbosity",
                        help="log verbosity on stderr (0: warnings, 2: info, 5: debug)")
    sub = parser.add_subparsers(dest="command", required=True)
    simulate.add_parser(sub)
    args = parser.parse_args(argv)
    setup_logging(args.verbosity)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130
    except MemoryError:
        # Tracebacks need memory too; one line is what can still be said.
        print("error: out of memory", file=sys.stderr)
        return 1
    except Exception:
        logging.getLogger("wasmsched").exception("internal error")
        return 1


if __name__ == "__main__":
    sys.exit(main())
