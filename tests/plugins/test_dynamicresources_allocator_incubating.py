"""allocatortesting.TestAllocator (kube 1.37.2) run against the allocator as kube's incubating channel
(structured/internal/incubating/allocator_test.go): the cases of dra_allocatortesting_cases.py.

kube skips the cases that need a feature its incubating allocator lacks (the alpha ones, off in 1.37);
here they are left out of the parameters, and a test pins which features those are."""

from __future__ import annotations

import pytest

from tests.plugins.dra_allocatortesting import INCUBATING_SUPPORTED, Incubating, run_test_allocator
from tests.plugins.dra_allocatortesting_cases import CASES

UNSUPPORTED = {name: tc.features.enabled() - INCUBATING_SUPPORTED for name, tc in CASES.items()}


@pytest.mark.parametrize("name", [name for name in CASES if not UNSUPPORTED[name]])
def test_allocator(name: str) -> None:
    assert run_test_allocator(CASES[name], INCUBATING_SUPPORTED, Incubating) is None


def test_only_cases_of_alpha_features_are_left_out() -> None:
    left_out = {feature for features in UNSUPPORTED.values() for feature in features}
    assert left_out == {"CompatibilityGroups", "DerivedAttributes", "ListTypeAttributes", "OptionalNodeOperations"}
    assert sum(1 for features in UNSUPPORTED.values() if features) == 45
