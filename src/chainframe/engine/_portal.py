"""The boundary between the async API and its callers: blocking twins that run a coroutine function on a portal
thread (so they work inside Jupyter's running event loop), and errors unwrapped from the task groups' exception
groups, so a caller catches the chainframe error itself.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar

from anyio.from_thread import start_blocking_portal

from chainframe._errors import first_error

P = ParamSpec("P")
R = TypeVar("R")


def typed_errors(function: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Callers get the chainframe error itself, not the exception group a task group wraps it in."""

    @functools.wraps(function)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await function(*args, **kwargs)
        except BaseExceptionGroup as group:
            raise first_error(group) from None

    return wrapper


def blocking(function: Any, /, *args: Any, **kwargs: Any) -> Any:
    """Run ``function`` on a portal thread's event loop and wait for it. The wait is in short steps: a Ctrl-C may be
    delivered to another thread (Polars', DuckDB's), and Python runs its handler only when the main thread runs
    bytecode. On Ctrl-C the run is cancelled (each chunk file is whole or absent) before the interrupt goes on."""
    with start_blocking_portal() as portal:
        future = portal.start_task_soon(lambda: function(*args, **kwargs))
        while True:
            try:
                return future.result(timeout=0.1)
            except TimeoutError:
                continue
            except KeyboardInterrupt:
                future.cancel()
                raise
