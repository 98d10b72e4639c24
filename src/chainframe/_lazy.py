"""Modules and names loaded on first use: ``polars`` is imported when an attribute of it is first read, not when a
module that uses it is imported; a package's public names (:func:`names_from`) when they are first read.

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
import sys
from collections.abc import Callable, Mapping
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
decode = LazyModule("chainframe.decode")
"""The decoders need numpy, and a plain extraction's process runs without it (:mod:`chainframe.cli._process`): the
datasets that decode (logs' events, token transfers, function calls) reach them through this."""


def names_from(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """A package's module ``__getattr__`` (PEP 562) for the names ``where`` maps to the submodule defining each
    (``{"extract": "_api"}``): the submodule is imported at the name's first read, and the name then kept in the
    package like an imported one. The package lists the same names under ``if TYPE_CHECKING:`` for type checkers.

    So importing ``chainframe.engine`` for ``extract`` loads what an extraction runs, not the plan, collect, scan and
    vacuum modules beside it (each module costs its import on every command's start-up)."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    return __getattr__
