"""`run`'s garbage collection: what survives a full collection is frozen, so the next full collection scans
only what was allocated since (each full collection's pause no longer grows with the caches)."""

from __future__ import annotations

import gc

from wasmsched.kube.app import freeze_full_collection_survivors


def test_full_collection_survivors_are_frozen_until_stopped() -> None:
    # Only the collections below: an automatic full one while `kept` is built would freeze it before `before`.
    was_enabled = gc.isenabled()
    gc.disable()
    stop = freeze_full_collection_survivors()
    try:
        kept = [[i] for i in range(2000)]
        gc.collect(1)
        before = gc.get_freeze_count()
        gc.collect(1)
        assert gc.get_freeze_count() == before, "a young collection freezes nothing"
        gc.collect(2)
        frozen = gc.get_freeze_count()
        assert frozen >= before + len(kept), "the full collection's survivors are frozen"
    finally:
        stop()
        gc.unfreeze()
        if was_enabled:
            gc.enable()
    kept.append([0])
    gc.collect(2)
    assert gc.get_freeze_count() == 0, "stopped: a full collection freezes nothing"
