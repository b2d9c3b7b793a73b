"""allocatortesting.TestAllocator (kube 1.37.2) run against the allocator as kube's incubating channel
(structured/internal/incubating/allocator_test.go): the cases of dra_allocatortesting_cases.py."""

from __future__ import annotations

import pytest

from tests.plugins.dra_allocatortesting import INCUBATING_SUPPORTED, Incubating, run_test_allocator
from tests.plugins.dra_allocatortesting_cases import CASES


@pytest.mark.parametrize("name", list(CASES))
def test_allocator(name: str) -> None:
    skip = run_test_allocator(CASES[name], INCUBATING_SUPPORTED, Incubating)
    if skip is not None:
        pytest.skip(f"SKIP: {skip}")
