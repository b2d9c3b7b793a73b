"""The failures of talking to a registry. pull.py and the CLI turn them into one line naming the reference."""

from __future__ import annotations


class RegistryError(Exception):
    """Any failure of a pull or push; the text is the detail after `<reference>: `."""


class NotFound(RegistryError):
    pass


class DigestMismatch(RegistryError):
    pass


class AuthRefused(RegistryError):
    pass


class Unreachable(RegistryError):
    pass


class NoWasmLayer(RegistryError):
    pass


class SignatureError(RegistryError):
    pass
