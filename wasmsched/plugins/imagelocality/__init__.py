"""ImageLocality: favours nodes that already have the pod's images."""

from __future__ import annotations

from typing import Any

from wasmsched.framework.interface import Handle, Plugin
from wasmsched.plugins.imagelocality.image_locality import NAME, ImageLocality

__all__ = ["NAME", "ImageLocality", "new"]


def new(args: Any, handle: Handle) -> Plugin:
    return ImageLocality(handle)
