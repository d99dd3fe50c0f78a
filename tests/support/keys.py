"""Fake API keys for the secret-handling tests, assembled at run time so that no key-shaped
string is ever tracked in the repository."""

from __future__ import annotations


def planted_key(label: str) -> str:
    """A string shaped like a hosted provider's API key (``sk-<label>-<hex>``), never a real one."""
    return "-".join(("sk", label, "3b9f0c7d1e5a4f2b8c6d"))
