"""Where a run's chunk tasks run: in this process, or on the Dask cluster ``executor=`` names
(:mod:`chainframe.engine._dask`, loaded only when one is asked: it needs the optional ``dask.distributed``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from chainframe._errors import InputError
from chainframe.engine._client import client_options, own_pacings
from chainframe.engine._engine import TaskRunner, run_tasks
from chainframe.rpc import Endpoint


@asynccontextmanager
async def runner_for(
    executor: Any, endpoints: Sequence[Endpoint], options: Mapping[str, Any] | None, rpc: Any, concurrency: int
) -> AsyncIterator[TaskRunner]:
    """Where the chunk tasks run: here, or on the Dask cluster ``executor`` names (see :mod:`._dask`)."""
    if executor is None:
        yield run_tasks
        return
    from chainframe.engine._dask import dask_runner  # start-up time: dask loads only when a cluster is asked

    async with dask_runner(
        executor, endpoints=endpoints, client_options=client_options(options, rpc), concurrency=concurrency,
        pacings=own_pacings(endpoints, rpc),
    ) as runner:  # fmt: skip
        yield runner


def checked_executor(executor: Any) -> Any:
    if executor is None:
        return None
    try:
        from chainframe.engine._dask import check_executor  # start-up time, and dask.distributed is optional
    except ImportError:
        raise InputError("executor= (Dask) needs dask.distributed: pip install 'chainframe[dask]'") from None
    return check_executor(executor)
