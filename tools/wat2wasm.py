"""Compile a WebAssembly text file (.wat) to a validated binary module (.wasm) with wasmtime.

    .venv/bin/python tools/wat2wasm.py IN.wat [OUT.wasm]   (default OUT: IN with .wasm)
"""

from __future__ import annotations

import sys
from pathlib import Path

import wasmtime


def main(argv: list[str]) -> int:
    if not 1 <= len(argv) <= 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    src = Path(argv[0])
    dst = Path(argv[1]) if len(argv) == 2 else src.with_suffix(".wasm")
    try:
        wasm = wasmtime.wat2wasm(src.read_text())
        wasmtime.Module.validate(wasmtime.Engine(), wasm)
    except (OSError, wasmtime.WasmtimeError) as e:
        print(f"error: {src}: {e}", file=sys.stderr)
        return 2
    dst.write_bytes(wasm)
    print(f"{dst} ({len(wasm)} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
