"""Field-error form of the apimachinery name checks, for the scheduler config validation.

The checks themselves (and kube's messages) live in `wasmsched.api.validation`.
"""

from __future__ import annotations

from wasmsched.api.validation import is_qualified_name
from wasmsched.config.errors import FieldError, invalid


def validate_label_name(name: str, path: str) -> list[FieldError]:
    """metav1validation.ValidateLabelName."""
    return [invalid(path, name, msg) for msg in is_qualified_name(name)]
