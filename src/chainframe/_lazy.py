"""Modules loaded on first use: ``polars`` is imported when an attribute of it is first read, not when a module
that uses it is imported.

A run that needs no Polars (blocks, logs and receipts decoded by the native scanner, checked with Arrow kernels)
then never pays its import (0.14 s of a CLI run's start-up, by ``python -X importtime``). Modules write::

    if TYPE_CHECKING:
        import polars as pl
    else:
        from chainframe._lazy import polars as pl

so type checkers see the real module.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands for a module; the first attribute read imports it (then every read is the module's own)."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:  # only called for what the proxy itself does not have
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}{' (loaded)' if self._module is not None else ''}>"


polars = LazyModule("polars")
