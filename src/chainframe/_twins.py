"""Blocking twins of async functions, as ``help()``, IPython's ``?`` and editors see them.

A blocking function (``extract``) runs its async twin (``aextract``) on a portal thread; written as
``def extract(datasets, **options)``, it would show one line and ``**options``. :func:`carry_over` gives it the
twin's signature and whole docstring, under its own first line (what makes it blocking), so ``help(extract)`` reads
like ``help(aextract)``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any


def carry_over(blocking: Callable[..., Any], coroutine: Callable[..., Any]) -> None:
    """Give ``blocking`` the signature and docstring of ``coroutine`` (its own first line kept on top)."""
    own = inspect.cleandoc(blocking.__doc__ or f"Blocking :func:`{coroutine.__name__}`.").split("\n\n")[0]
    theirs = inspect.cleandoc(coroutine.__doc__ or "")
    blocking.__doc__ = f"{own}\n\n{theirs}" if theirs else own
    blocking.__signature__ = inspect.signature(coroutine)  # type: ignore[attr-defined]
