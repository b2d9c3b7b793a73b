"""The kube-oracle process (tools/kube-oracle, built by `make kube-oracle`), shared by the module's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.differential.oracle import Oracle


@pytest.fixture(scope="session")
def kube_oracle() -> Iterator[Oracle]:
    with Oracle() as oracle:
        yield oracle
