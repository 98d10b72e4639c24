"""The blocking client: the async client run on its own event loop in a background thread.

That thread is what makes it work inside Jupyter, where the notebook's thread already runs an event loop. Each method
is the async client's coroutine, called through an anyio blocking portal: written once, no sync copy of any logic.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar

import anyio
from anyio.abc import TaskStatus
from anyio.from_thread import BlockingPortal, start_blocking_portal

from chainframe.rpc._client import AsyncClient, ClientStats
from chainframe.rpc._endpoint import Endpoint

P = ParamSpec("P")
R = TypeVar("R")


def _blocking(method: Callable[Concatenate[AsyncClient, P], Awaitable[R]]) -> Callable[Concatenate[Client, P], R]:
    """The blocking twin of one async method. Type checkers read its parameters through ``P`` and its result
    through ``R``; ``help()``, IPython and editors that inspect live objects read ``__signature__``: the async
    method's own (its return annotation is already the awaited type)."""

    def call(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return self._portal.call(functools.partial(method, self._client, *args, **kwargs))

    call.__name__, call.__qualname__, call.__doc__ = method.__name__, f"Client.{method.__name__}", method.__doc__
    call.__signature__ = inspect.signature(method)  # type: ignore[attr-defined]
    call.__annotations__ = dict(method.__annotations__)
    call.__wrapped__ = method  # type: ignore[attr-defined]  # typing.get_type_hints resolves names in its module
    return call


def _options_of(
    init: Callable[Concatenate[AsyncClient, P], None],
) -> Callable[[Callable[..., None]], Callable[Concatenate[Client, P], None]]:
    """``Client.__init__`` takes what ``AsyncClient.__init__`` takes, for type checkers and for ``help()``."""

    def same(function: Callable[..., None]) -> Callable[Concatenate[Client, P], None]:
        function.__signature__ = inspect.signature(init)  # type: ignore[attr-defined]
        return function

    return same


class Client:
    """Same options and methods as :class:`AsyncClient`, blocking. Use as a context manager or call :meth:`close`."""

    @_options_of(AsyncClient.__init__)
    def __init__(self, *args: Any, **options: Any) -> None:
        self._client = AsyncClient(*args, **options)  # checks the options before any thread starts
        self._portal_cm: AbstractContextManager[BlockingPortal] = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        self._stop: anyio.Event | None = None
        try:
            self._serving: Future[None] = self._portal.start_task(self._serve)[0]
        except BaseException:
            self._portal_cm.__exit__(None, None, None)
            raise

    async def _serve(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        # The client is entered and left in this one task, as anyio's task groups require.
        async with self._client:
            self._stop = anyio.Event()
            task_status.started()
            await self._stop.wait()

    def close(self) -> None:
        if self._stop is not None:
            self._portal.call(self._stop.set)
            self._serving.result()
            self._stop = None
            self._portal_cm.__exit__(None, None, None)

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return repr(self._client).replace("AsyncClient", "Client", 1)

    @property
    def endpoint(self) -> Endpoint:
        return self._client.endpoint

    @property
    def via(self) -> str:
        return self._client.via

    @property
    def stats(self) -> ClientStats:
        return self._client.stats

    @property
    def missing_methods(self) -> dict[str, str]:
        return self._client.missing_methods

    @property
    def notes(self) -> dict[str, str]:
        return self._client.notes

    # One line per method of the async client (a test checks that none is missing and that the signatures match).
    request = _blocking(AsyncClient.request)
    request_bytes = _blocking(AsyncClient.request_bytes)
    batch = _blocking(AsyncClient.batch)
    batch_bytes = _blocking(AsyncClient.batch_bytes)
    block_number = _blocking(AsyncClient.block_number)
    chain_id = _blocking(AsyncClient.chain_id)
    get_block = _blocking(AsyncClient.get_block)
    get_block_receipts = _blocking(AsyncClient.get_block_receipts)
    get_transaction_receipt = _blocking(AsyncClient.get_transaction_receipt)
    get_transaction_by_block_number_and_index = _blocking(AsyncClient.get_transaction_by_block_number_and_index)
    get_transaction_by_block_hash_and_index = _blocking(AsyncClient.get_transaction_by_block_hash_and_index)
    get_uncle_by_block_number_and_index = _blocking(AsyncClient.get_uncle_by_block_number_and_index)
    get_uncle_by_block_hash_and_index = _blocking(AsyncClient.get_uncle_by_block_hash_and_index)
    get_logs = _blocking(AsyncClient.get_logs)
    get_proof = _blocking(AsyncClient.get_proof)
    trace_call = _blocking(AsyncClient.trace_call)
    trace_prestate = _blocking(AsyncClient.trace_prestate)
