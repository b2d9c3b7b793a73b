"""The guest size limit and a gzip decoder that never inflates past a limit, shared by loader.py and oci/.

Here, below both, so that the OCI client (which loader.py calls) does not import loader.py back.
"""

from __future__ import annotations

import zlib

# Large enough for any real guest (a standard-Go guest is a few MiB), small enough to refuse a mistake.
MAX_GUEST_BYTES = 256 << 20


class LimitExceeded(Exception):
    """More bytes than the limit; raised as soon as that is known, before the rest is read or inflated."""


def gunzip(body: bytes, limit: int) -> bytes:
    """Decodes a gzip body (one or more members), never inflating past limit + 1 bytes."""
    out = bytearray()
    data = body
    while data:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        while data and not d.eof:
            # max_length > 0 always (0 would mean unlimited): at most one byte past the limit.
            out += d.decompress(data, limit + 1 - len(out))
            if len(out) > limit:
                raise LimitExceeded
            data = d.unconsumed_tail
        if not d.eof:
            raise EOFError("compressed body ended before the end-of-stream marker was reached")
        data = d.unused_data
    return bytes(out)
