"""Running a round's chunk tasks on a Dask cluster (``dask.distributed``): the same tasks, on worker processes.

``executor=`` (CLI ``--workers N`` / ``--scheduler ADDR``) says where: ``"local:N"`` starts a ``LocalCluster`` of N
worker processes for the run; a scheduler address (``"tcp://host:8786"``) or a ``distributed.Client`` uses a running
cluster, whose workers have chainframe installed and see the output folder at the same path (a shared filesystem).

The split of work:

- The coordinator (the process that called ``extract``) keeps everything that looks at the folder as a whole: the
  folder lock, the reorg check of every series, planning, the re-check at the end of the round, the report. It
  submits :class:`~chainframe.engine._plan.ChunkTask` s (plain data) and never more than the workers' threads plus
  one per worker at a time, so memory stays bounded however long the range.
- A worker runs :func:`~chainframe.engine._engine.run_chunk` for one task: fetch, check the answers and the chain,
  and write the slot's file whole, but not visibly (a staged temporary, or a Delta data file under a unique name),
  and hands it back. The chunks of a slot that a verifying run proves together (:mod:`chainframe.engine._joint`) are
  one Dask task, run on one worker by :func:`~chainframe.engine._engine.run_tasks`, each chunk's file handed back.
  Only the coordinator publishes it (:class:`chainframe.store.Publisher`), while it holds the output's lock or lease,
  each Delta commit fenced by the run's epoch: a task of a dead, paused or superseded run can write files but never
  make them visible, and a worker lost mid-chunk (Dask runs its task again elsewhere) leaves an unpublished file at
  most, never a second copy of a row.
- Each worker builds its own client from the endpoint configuration, which reaches it once, inside a worker plugin
  (:class:`_Plugin`), never inside a task: task keys are ``chainframe-<series>-<start>-<end>-<run>-<n>`` (a slot's
  series joined by ``+``) and task arguments hold no URL, so the key is in no task key, repr, log line or dashboard
  page.

The provider's budget is shared by equal shares (:meth:`chainframe.rpc.Pacing.share`): with E endpoints and N
workers, worker i uses endpoint ``i mod E`` first (the others as its fallbacks, as without Dask) and paces itself to
``1 / ceil(N / E)`` of that endpoint's requests and credits per second (its own budget and prices where an endpoints
file gave them, else the run's pacing), so the workers on one endpoint never exceed
its budget together, with no message per request. A rate-limit answer's pause is announced as a Dask event
(``Worker.log_event``) to the run's topic; every worker on the same endpoint pauses too.

Every wait is bounded, the coordinator's too. A chunk can legitimately take hours (a paced key: 1,000 blocks of
receipts at 250 credits per second are 4,000 s), so what is bounded is the time without progress: while no chunk
finishes, the coordinator looks at its workers every minute (:func:`look_at_worker`, through ``Client.run``); a look
that finds a worker's client has sent or received something since the last one is progress. With none for
:func:`no_progress_timeout` seconds (the longest one request can take with the run's client options, at least five
minutes; the Dask config key ``chainframe.no-progress-timeout``, or ``DASK_CHAINFRAME__NO_PROGRESS_TIMEOUT``, sets
it), the run fails with :class:`WorkersStalled`, naming the chunks in flight and the workers holding them, and logs
the workers' thread and coroutine stacks (logger ``chainframe.dask``, keys redacted).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import math
import os
import secrets
import sys
import threading
import time
import traceback
import zlib
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import anyio
import dask
import dask.utils
import distributed
from anyio.from_thread import BlockingPortal, start_blocking_portal

from chainframe._errors import ChainframeError, InputError, first_error
from chainframe._redact import redact_text
from chainframe.engine._context import ChunkContext
from chainframe.engine._engine import RunCounters, run_chunk, run_tasks
from chainframe.engine._joint import Joint, needs
from chainframe.engine._logs import SplitState
from chainframe.engine._plan import ChunkTask
from chainframe.rpc import AsyncClient, ClientStats, Endpoint, EndpointCounts, Pacing, RetryPolicy, Timeout
from chainframe.store import Written

Executor = Any
"""``None`` (in this process), ``"local:N"``, a scheduler address, or a ``distributed.Client``."""

SUBMIT_RETRIES = 2
"""Times Dask runs a task again after an unexpected error on a worker (a lost worker's tasks are run again anyway,
up to the scheduler's ``allowed-failures``). Chainframe's own errors come back as results, not retried."""


def _connect_timeout() -> float:
    """Seconds to reach a scheduler, and for a cluster to have a worker: Dask's own setting
    (``distributed.comm.timeouts.connect``, 30 s unless configured)."""
    seconds = dask.utils.parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), "s")
    return float(seconds)


WORKER_DECODE_THREADS = 1
"""Decoding threads per worker process: one. Two Polars calls at once in a Dask worker deadlocked (a Polars call
parked holding the GIL, pola-rs/polars#24448; seen as a worker that missed heartbeats for 558 s, stacks taken with
faulthandler: two decode threads inside Polars, the worker's loop waiting for the GIL); with workers, decoding runs
in parallel across processes instead."""
CLOSE_TIMEOUT = 10.0
"""Seconds the workers get to stop the run's chunks in flight when it ends or is cancelled."""
NO_PROGRESS_KEY = "chainframe.no-progress-timeout"
"""Dask config key of a run's no-progress bound (seconds, or a duration such as ``"30 minutes"``); Dask reads it
from ``DASK_CHAINFRAME__NO_PROGRESS_TIMEOUT`` too. Unset: :func:`no_progress_timeout` derives it."""
NO_PROGRESS_FLOOR = 300.0
"""The derived bound is at least this: a worker's client may be quiet for a while (a long decode, a slow write)."""
LOOK_EVERY = 60.0
"""Seconds without a finished chunk between two looks at the workers (half the bound when that is shorter)."""
LOOK_TIMEOUT = 10.0
"""Seconds a look at the workers may take: a worker that has not answered by then is reported as blocked."""
STACK_DEPTH = 8
"""Innermost frames kept per thread or coroutine in a stalled run's log."""
STACKS_LIMIT = 30_000
"""Characters of stacks logged per worker."""
_SCHEMES = ("tcp://", "tls://", "ws://", "wss://", "inproc://", "ucx://")
_log = logging.getLogger("chainframe.dask")


class WorkersStalled(ChainframeError):
    """No chunk of a run on a Dask cluster finished, and no worker's client sent or received anything, for the
    run's no-progress bound (:func:`no_progress_timeout`). The run was stopped; the chunks' slots are as they were.

    ``chunks`` maps each chunk that was in flight (``"logs blocks 0..999"``) to the address of the worker that held
    it, or None for one the scheduler had not given to a worker yet."""

    def __init__(self, message: str, *, chunks: Mapping[str, str | None]) -> None:
        super().__init__(message)
        self.chunks = dict(chunks)


def check_executor(executor: Executor) -> Executor:
    """``executor`` checked (before any request): ``"local:N"``, a scheduler address or a ``distributed.Client``."""
    if executor is None:
        return None
    if isinstance(executor, str):
        if executor.startswith("local:"):
            count = executor.removeprefix("local:")
            if not count.isdigit() or int(count) < 1:
                raise InputError(f"executor {executor!r}: say how many worker processes, e.g. 'local:2'")
        elif not executor.startswith(_SCHEMES) and ":" not in executor:
            raise InputError(
                f"executor {executor!r} is not a Dask scheduler address (tcp://host:8786) nor 'local:N' (N worker "
                "processes on this machine)"
            )
        return executor
    if isinstance(executor, distributed.Client):
        return executor
    raise InputError(
        f"executor must be 'local:N', a scheduler address such as 'tcp://host:8786', or a distributed.Client; "
        f"got {type(executor).__name__}"
    )


# --- what every worker gets once: the endpoints, its share of the budget, its client's options ------------------


@dataclass(frozen=True, kw_only=True)
class WorkerPlan:
    """The run's configuration for its workers. Holds the keys: its repr shows none."""

    run: str
    """The run's id: names its plugin, its event topic and its task keys."""
    endpoints: tuple[Endpoint, ...] = field(repr=False)
    pacings: tuple[Pacing | None, ...] = field(default=(), repr=False)
    """Each endpoint's own budget and prices (an endpoints file's), in ``endpoints``' order; None, or none given: the
    client options' pacing."""
    workers: int
    """Workers the run started with: each endpoint's budget is split between ``ceil(workers / endpoints)``."""
    client_options: Mapping[str, Any] = field(default_factory=dict, repr=False)
    index: Mapping[str, int] = field(default_factory=dict)
    """Worker name -> its place, which picks its primary endpoint (a worker that joins later: by its name's hash)."""

    @property
    def topic(self) -> str:
        return f"chainframe-{self.run}-pause"

    @property
    def starts(self) -> str:
        """The topic of chunk starts (task key, chunk, worker): which tasks Dask ran twice, and on whom."""
        return f"chainframe-{self.run}-starts"

    def endpoint_of(self, worker_name: str) -> int:
        place = self.index.get(worker_name, zlib.crc32(worker_name.encode()))
        return place % len(self.endpoints)

    def pacing(self, endpoint: int) -> Pacing:
        """A worker's share of the budget of the endpoint it starts on (the ``endpoint``-th)."""
        own = self.pacings[endpoint] if endpoint < len(self.pacings) else None
        pacing: Pacing = own or self.client_options.get("pacing", Pacing())
        return pacing.share(math.ceil(self.workers / len(self.endpoints)))

    def client(self, worker_name: str) -> AsyncClient:
        first = self.endpoint_of(worker_name)
        order = [*self.endpoints[first:], *self.endpoints[:first]]
        options = {**self.client_options, "pacing": self.pacing(first)}
        options["fallbacks"] = [*order[1:], *options.get("fallbacks", ())]
        return AsyncClient(order[0], **options)

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(s for endpoint in self.endpoints for s in endpoint.secrets)


_CLIENT_DEFAULTS = {
    name: option.default
    for name, option in inspect.signature(AsyncClient.__init__).parameters.items()
    if option.default is not option.empty
}


def configured_no_progress_timeout() -> float | None:
    """The bound the Dask config sets (:data:`NO_PROGRESS_KEY`), checked; None when it sets none."""
    value = dask.config.get(NO_PROGRESS_KEY, None)
    if value is None:
        return None
    try:
        seconds = float(dask.utils.parse_timedelta(value, "s"))
    except (KeyError, TypeError, ValueError):
        seconds = -1.0
    if not seconds > 0:
        raise InputError(
            f"Dask config {NO_PROGRESS_KEY} (or DASK_CHAINFRAME__NO_PROGRESS_TIMEOUT) must be a duration above 0, "
            f"such as 1800 or '30 minutes'; got {value!r}"
        )
    return seconds


def no_progress_timeout(plan: WorkerPlan) -> float:
    """Seconds a run on a Dask cluster goes on with no chunk finished and no request sent or answered by any of its
    workers' clients, before it fails with :class:`WorkersStalled`.

    The Dask config key :data:`NO_PROGRESS_KEY` when set; else the longest one request can take with the run's client
    options, at least :data:`NO_PROGRESS_FLOOR`: its wait in a worker's pacer (the dearest batch, at the worker's
    share of the budget), then its attempts until the retry policy's time budget runs out (the rate-limit budget,
    when that is longer), the last one cut off at the timeout's ``total``. With the defaults: 120 + 900 = 1,020 s.
    A client that is busy sends or receives something well within that; one that does neither is stuck."""
    configured = configured_no_progress_timeout()
    if configured is not None:
        return configured
    options = {**_CLIENT_DEFAULTS, **plan.client_options}
    timeout: Timeout = options["timeout"]
    retry: RetryPolicy = options["retry"]
    paced = 0.0
    for pacing in (plan.pacing(i) for i in range(len(plan.endpoints))):  # the slowest endpoint's share
        batch = [_dearest(pacing)] * int(options["batch_size"])
        if pacing.credits_per_second:
            paced = max(paced, pacing.cost(batch) / pacing.credits_per_second)
        if pacing.requests_per_second:
            paced = max(paced, Pacing.calls(batch) / pacing.requests_per_second)
    return max(NO_PROGRESS_FLOOR, paced + max(retry.total, retry.rate_limit_total) + timeout.total)


def _dearest(pacing: Pacing) -> str:
    """The method with the highest credit cost ("" stands for any method the table does not list)."""
    costs = {**pacing.credit_costs, "": pacing.default_cost}
    return max(costs, key=costs.__getitem__)


class _Runtime:
    """One worker's side of a run: an event loop of its own on a thread (the worker's loop is left to Dask), one
    client and one split state shared by the chunks the worker runs at once."""

    def __init__(self, plan: WorkerPlan, worker_name: str, publish: Callable[[float], None]) -> None:
        self.id = secrets.token_hex(4)
        self.endpoint_index = plan.endpoint_of(worker_name)
        self.secrets = plan.secrets
        self._stack = AsyncExitStack()
        self._portal_cm = start_blocking_portal()
        self.portal: BlockingPortal = self._portal_cm.__enter__()
        try:
            client = plan.client(worker_name)
            self._client_cm = self.portal.wrap_async_context_manager(client)
            self.client: AsyncClient = self._client_cm.__enter__()
            self.client.pacer.announce = publish
            self.state, self.decode = self.portal.call(_loop_objects)
            self.loop, self.loop_thread = self.portal.call(_loop_and_thread)  # to see where a stuck chunk waits
        except BaseException:
            self._portal_cm.__exit__(None, None, None)
            raise
        self._running: dict[anyio.CancelScope, anyio.Event] = {}

    def run(self, tasks: Sequence[ChunkTask], chain_id: int, finalized: int, together: int) -> dict[str, Any]:
        result: dict[str, Any] = self.portal.call(self._run, tasks, chain_id, finalized, together)
        return result

    async def _run(self, tasks: Sequence[ChunkTask], chain_id: int, finalized: int, together: int) -> dict[str, Any]:
        """Run one chunk, or a slot's chunks proven together (``together``: the tasks its group fetches, lent ones
        too: so many fetch at once); each chunk's outcome in ``chunks``, in the tasks' order."""
        counters = RunCounters(split=self.state)
        chunks: dict[str, dict[str, Any]] = {task.dataset: {} for task in tasks}  # one task per dataset in a unit
        outcome: dict[str, Any] = {"runtime": self.id}
        endpoint = self.client.endpoint.display
        stopped = anyio.Event()

        def publish(written: Written) -> None:  # the coordinator publishes: only collected here
            chunks[written.meta.dataset]["written"] = written

        def on_chunk(task: ChunkTask, rows: int, _: bool) -> None:
            chunks[task.dataset]["rows"] = rows

        with anyio.CancelScope() as scope:
            self._running[scope] = stopped
            try:
                run = ChunkContext(self.client, chain_id, endpoint, finalized, self.state, self.decode)
                if together:
                    await run_tasks(iter(tasks), run, concurrency=together, counters=counters, publish=publish,
                                    on_chunk=on_chunk)  # fmt: skip
                else:
                    (task,) = tasks
                    chunks[task.dataset]["rows"], chunks[task.dataset]["written"] = await run_chunk(
                        task, run, report=counters.dataset(task.dataset)
                    )
            except Exception as exc:  # an ExceptionGroup from a task group too
                error = first_error(exc)
                if not isinstance(error, ChainframeError):
                    raise
                outcome["error"] = error  # a result, not a failure: Dask does not retry it, nor log its arguments
            finally:
                del self._running[scope]
                stopped.set()
        if scope.cancel_called:
            outcome["error"] = ChainframeError(f"{_unit_name(tasks)} was stopped: the run ended")
        for task in tasks:
            report = counters.dataset(task.dataset)
            chunks[task.dataset].update(
                refetched=report.refetched, verified_blocks=report.verified_blocks,
                verified_rows=report.verified_rows, unverified=report.unverified, decode_errors=report.decode_errors,
            )  # fmt: skip
        outcome.update(chunks=[chunks[task.dataset] for task in tasks], stats=asdict(self.client.stats),
                       splits=self.state.splits)  # fmt: skip
        return outcome

    def pause(self, seconds: float) -> None:
        self.client.pacer.pause(seconds, announce=False)

    def close(self) -> None:
        """Stop this run's chunks in flight (each leaves its file as it was), then the client and the loop."""
        try:
            self.portal.call(self._cancel_running)
            self._client_cm.__exit__(None, None, None)
        finally:
            self._portal_cm.__exit__(None, None, None)

    async def _cancel_running(self) -> None:
        running = list(self._running.items())
        for scope, _ in running:
            scope.cancel()
        with anyio.move_on_after(CLOSE_TIMEOUT):
            for _, stopped in running:
                await stopped.wait()


async def _loop_objects() -> tuple[SplitState, anyio.CapacityLimiter]:
    return SplitState(), anyio.CapacityLimiter(WORKER_DECODE_THREADS)


def _loop_and_thread() -> tuple[asyncio.AbstractEventLoop, int]:
    return asyncio.get_running_loop(), threading.get_ident()


class _Plugin(distributed.WorkerPlugin):
    """Builds a worker's :class:`_Runtime` when it joins the run, and stops it when the run ends."""

    def __init__(self, plan: WorkerPlan) -> None:
        self.plan = plan
        self.name = plan.run

    def __repr__(self) -> str:
        return f"chainframe run {self.plan.run}"

    def setup(self, worker: distributed.Worker) -> None:
        plan = self.plan

        def publish(seconds: float) -> None:  # on the runtime's thread: hand it to the worker's loop
            message = {"from": runtime.id, "endpoint": runtime.endpoint_index, "seconds": seconds}
            worker.loop.add_callback(worker.log_event, plan.topic, message)

        runtime = _Runtime(plan, str(worker.name), publish)

        def on_event(event: tuple[float, Mapping[str, Any]]) -> None:
            message = event[1]
            if message["from"] != runtime.id and message["endpoint"] == runtime.endpoint_index:
                runtime.pause(float(message["seconds"]))

        _RUNTIMES[plan.run] = runtime
        worker._get_client().subscribe_topic(plan.topic, on_event)

    def teardown(self, worker: distributed.Worker) -> None:
        runtime = _RUNTIMES.pop(self.plan.run, None)
        client = worker._client
        if client is not None and self.plan.topic in client._event_handlers:
            client.unsubscribe_topic(self.plan.topic)
        if runtime is not None:
            runtime.close()


_RUNTIMES: dict[str, _Runtime] = {}
"""This worker process's runtime per run (a worker may serve several runs' clients at once)."""


def run_on_worker(
    run: str, tasks: Sequence[Mapping[str, Any]], chain_id: int, finalized: int, together: int
) -> dict[str, Any]:
    """The Dask task: one chunk, or a slot's chunks proven together (``together`` > 0, see
    :func:`_units`), on this worker, with the run's runtime. Arguments hold no secret."""
    runtime = _RUNTIMES.get(run)
    if runtime is None:
        raise RuntimeError(f"this worker has no chainframe run {run} (its plugin did not start here)")
    chunks = [ChunkTask(**task) for task in tasks]
    worker = distributed.get_worker()
    started = {"key": str(worker.get_current_task()), "chunk": _unit_name(chunks), "worker": worker.address}
    worker.log_event(f"chainframe-{run}-starts", started)
    return runtime.run(chunks, chain_id, finalized, together)


def look_at_worker(run: str) -> dict[str, Any]:
    """Run on a worker (``Client.run``, on its event loop) while no chunk of ``run`` finishes: how much the run's
    client has sent and received (to tell a slow worker from a stuck one), where the run's coroutines wait, and
    every thread's innermost frames. Frames and source lines only, never local values; URL keys redacted."""
    runtime = _RUNTIMES.get(run)
    look: dict[str, Any] = {"runtime": None, "activity": None, "waits": []}
    parts = [f"worker process {os.getpid()}"]
    if runtime is None:
        parts.append(f"no chainframe runtime for run {run} on this worker (its plugin did not start here)")
    else:
        stats = runtime.client.stats
        look.update(runtime=runtime.id, activity=[stats.requests, stats.calls, stats.bytes_received])
        try:  # read from this thread, not on the run's loop: a loop that is stuck would not answer
            tasks = asyncio.all_tasks(runtime.loop)
        except RuntimeError:  # the loop's set of tasks kept changing while read
            tasks = set()
            parts.append("(the run's coroutines could not be listed)")
        chains = Counter(tuple(_await_chain(task.get_coro())) for task in tasks)
        innermost = Counter[str]()
        parts.append("coroutines of the run's chunk loop, innermost frame last:")
        for chain, count in chains.most_common():
            ours = [where for where in chain if where.startswith("chainframe/")]
            if ours:
                innermost[ours[-1]] += count
            parts += [f"  {count} task{'s' if count > 1 else ''}:", *(f"    {where}" for where in chain[-STACK_DEPTH:])]
        look["waits"] = [f"{n} in {where}" for where, n in innermost.most_common(2)]
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    for ident, frame in sys._current_frames().items():
        if ident == threading.get_ident():
            continue  # this look's own
        mark = " (the run's chunk loop)" if runtime is not None and ident == runtime.loop_thread else ""
        parts.append(f"thread {names.get(ident, ident)}{mark}:")
        for summary in traceback.extract_stack(frame)[-STACK_DEPTH:]:
            code = f": {summary.line}" if summary.line else ""
            parts.append(f"    {_where(summary.filename, summary.lineno, summary.name)}{code}")
    look["stacks"] = redact_text("\n".join(parts), *(runtime.secrets if runtime else ()))[:STACKS_LIMIT]
    return look


def _await_chain(coroutine: Any) -> list[str]:
    """Where a suspended coroutine waits, outermost first: its frame, then what it awaits, and so on down."""
    chain: list[str] = []
    while coroutine is not None and len(chain) < 100:
        kind = next((k for k in _SUSPENDED if hasattr(coroutine, k[0])), None)
        if kind is None:  # a future or another awaitable object: where the chain ends
            chain.append(f"awaiting {type(coroutine).__name__}")
            break
        frame = getattr(coroutine, kind[0])
        if frame is None:  # finished
            break
        chain.append(_where(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name))
        coroutine = getattr(coroutine, kind[1])
    return chain


_SUSPENDED = (("cr_frame", "cr_await"), ("gi_frame", "gi_yieldfrom"), ("ag_frame", "ag_await"))
"""A coroutine's, generator's and async generator's frame, and what each is waiting on."""


def _where(filename: str, line: int | None, function: str) -> str:
    """``package/module.py:line in function``: the path from the package on (no home folder, shorter lines)."""
    parts = Path(filename).parts
    if "chainframe" in parts:
        start = len(parts) - 1 - parts[::-1].index("chainframe")
    elif "site-packages" in parts:
        start = parts.index("site-packages") + 1
    else:
        start = max(len(parts) - 2, 0)
    return f"{'/'.join(parts[start:])}:{line} in {function}"


# --- the coordinator's side ------------------------------------------------------------------------------------


class DaskRunner:
    """Runs a round's chunk tasks on the cluster (a :class:`TaskRunner`); made by :func:`dask_runner`."""

    def __init__(self, dask: distributed.Client, plan: WorkerPlan, threads: int) -> None:
        self.dask, self.plan, self.threads = dask, plan, threads
        self.bound = no_progress_timeout(plan)
        """Seconds with no progress on the workers before the run fails (:func:`no_progress_timeout`)."""
        self._bound_set = configured_no_progress_timeout() is not None
        self._submitted = 0
        self._seen: dict[str, dict[str, Any]] = {}  # each runtime's last stats, to add only what is new
        self._starts: dict[str, list[Mapping[str, str]]] = {}  # each task key's starts, from the workers' events
        self._activity: dict[str, tuple[int, ...]] = {}  # each runtime's requests, calls, bytes when last seen

    async def __call__(
        self,
        tasks: Iterator[ChunkTask],
        context: ChunkContext,
        *,
        concurrency: int,
        counters: RunCounters,
        publish: Callable[[Written], None],
        on_chunk: Callable[[ChunkTask, int, bool], None] | None = None,
    ) -> None:
        client, chain_id, finalized = context.client, context.chain_id, context.finalized
        window = self.threads + self.plan.workers
        pending: dict[distributed.Future[Any], list[ChunkTask]] = {}
        units = _units(tasks, chain_id)
        progress = time.monotonic()  # when a chunk last finished, or a look found a worker's client busy
        self.dask.subscribe_topic(self.plan.starts, self._started)
        try:
            while True:
                while len(pending) < window and (submitted := next(units, None)) is not None:
                    pending[self._submit(*submitted, chain_id, finalized, counters)] = submitted[0]
                if not pending:
                    return
                try:
                    done = (
                        await distributed.wait(
                            list(pending), timeout=min(LOOK_EVERY, self.bound / 2), return_when="FIRST_COMPLETED"
                        )
                    ).done
                except TimeoutError:
                    progress = await self._look_for_progress(pending, since=progress)
                    continue
                progress = time.monotonic()
                for future in done:
                    unit = pending.pop(future)
                    try:
                        outcome = await future.result()
                    except distributed.KilledWorker as exc:  # the task's workers died allowed-failures times
                        raise ChainframeError(
                            f"{_unit_name(unit)}: every worker that ran it died ({exc}); its slot is as it was: "
                            "re-run to try again"
                        ) from None
                    self._count(outcome, client, counters)
                    if "error" in outcome:
                        raise outcome["error"]
                    for task, chunk in zip(unit, outcome["chunks"], strict=True):
                        # Workers only write; the coordinator publishes (fenced by its lock, lease or table epoch).
                        await anyio.to_thread.run_sync(publish, chunk["written"])
                        report = counters.dataset(task.dataset)
                        report.refetched += chunk["refetched"]
                        report.verified_blocks += chunk["verified_blocks"]
                        report.verified_rows += chunk["verified_rows"]
                        report.decode_errors += chunk["decode_errors"]
                        report.unverified.update(chunk["unverified"])
                        report.written += 1
                        report.rows += chunk["rows"]
                        if on_chunk:
                            on_chunk(task, chunk["rows"], True)
        finally:
            if pending:
                with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_TIMEOUT):
                    await self.dask.cancel(list(pending), force=True)
            self.dask.unsubscribe_topic(self.plan.starts)
            self._reassigned(counters)

    def _started(self, event: tuple[float, Mapping[str, str]]) -> None:
        self._starts.setdefault(event[1]["key"], []).append(event[1])

    def _reassigned(self, counters: RunCounters) -> None:
        """Count the chunks Dask started more than once (a worker lost while it held them), and those workers."""
        present = set(self.dask.scheduler_info().get("workers", {}))
        for starts in self._starts.values():
            if len(starts) > 1:
                counters.reassigned.append(starts[0]["chunk"])
                counters.lost_workers.update(s["worker"] for s in starts[:-1] if s["worker"] not in present)
        self._starts.clear()

    async def _look_for_progress(
        self, pending: Mapping[distributed.Future[Any], list[ChunkTask]], *, since: float
    ) -> float:
        """When progress was last seen, given a look at the workers now; :class:`WorkersStalled` if that was
        :attr:`bound` seconds ago or more."""
        looks, holders = await self._look()
        now = time.monotonic()
        moved = False
        for look in looks.values():
            if isinstance(look, Mapping) and look.get("runtime") is not None:
                activity = tuple(look["activity"])
                moved |= self._activity.get(look["runtime"], (0, 0, 0)) != activity
                self._activity[look["runtime"]] = activity
        if moved:
            return now
        if now - since < self.bound:
            return since
        raise self._stalled(pending, now - since, looks, holders)

    async def _look(self) -> tuple[dict[str, Mapping[str, Any] | str], dict[str, str] | None]:
        """Each worker's :func:`look_at_worker` by address (or why there is none), and the worker that holds each
        task key the scheduler has given out (None if the scheduler did not say); within :data:`LOOK_TIMEOUT`."""
        looks: dict[str, Mapping[str, Any] | str] = {}
        holders: dict[str, str] | None = None
        blocked = (
            f"it did not answer within {LOOK_TIMEOUT:.0f} s: its event loop is blocked (py-spy dump --pid on its "
            "machine shows its threads)"
        )

        async def look(address: str) -> None:
            try:
                answer = await self.dask.run(look_at_worker, self.plan.run, workers=[address], on_error="return")
            except Exception as exc:  # gone since, or the scheduler could not reach it
                looks[address] = f"it could not be asked ({type(exc).__name__})"
                return
            found = answer.get(address)
            looks[address] = found if isinstance(found, Mapping) else f"its look failed ({type(found).__name__})"

        with anyio.move_on_after(LOOK_TIMEOUT):
            processing: dict[str, list[Any]] = await self.dask.processing()  # every worker: the tasks it holds
            holders = {str(key): address for address, keys in processing.items() for key in keys}
            looks.update(dict.fromkeys(processing, blocked))
            async with anyio.create_task_group() as group:
                for address in processing:
                    group.start_soon(look, address)
        return looks, holders

    def _stalled(
        self,
        pending: Mapping[distributed.Future[Any], list[ChunkTask]],
        quiet: float,
        looks: Mapping[str, Mapping[str, Any] | str],
        holders: Mapping[str, str] | None,
    ) -> WorkersStalled:
        """The error for a run with no progress: which chunks were in flight, on which workers, where those wait;
        the workers' stacks go to the log."""
        chunks = {_unit_name(unit): (holders or {}).get(str(f.key)) for f, unit in pending.items()}
        held: dict[str | None, list[str]] = {}
        for chunk, address in chunks.items():
            held.setdefault(address, []).append(chunk)
        parts = []
        for address, names in held.items():
            listed = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
            if holders is None:
                parts.append(
                    f"{listed} (the scheduler did not say where: it did not answer within {LOOK_TIMEOUT:.0f} s)"
                )
                continue
            if address is None:
                parts.append(f"{listed} not given to a worker yet")
                continue
            look = looks[address]
            if isinstance(look, str):
                state = look
            elif look["runtime"] is None:
                state = "this run's plugin is not running there"
            elif look["waits"]:
                state = f"coroutines waiting: {', '.join(look['waits'])}"
            else:
                state = "none of the run's coroutines waits in chainframe's code"
            parts.append(f"{listed} on {address} ({state})")
        for address, look in looks.items():
            stacks = redact_text(look["stacks"] if isinstance(look, Mapping) else look, *self.plan.secrets)
            _log.warning("run %s: no progress for %.0f s; Dask worker %s:\n%s", self.plan.run, quiet, address, stacks)
        bound = f"{NO_PROGRESS_KEY} = {self.bound:g} s" if self._bound_set else (
            f"{self.bound:.0f} s, the longest one request can take with this run's client options"
        )  # fmt: skip
        message = (
            f"no chunk finished on the Dask workers, and no worker's client sent or received anything, for "
            f"{quiet:.0f} s ({bound}): {'; '.join(parts)}. The run was stopped; those chunks' slots are as they "
            f"were. The workers' thread and coroutine stacks are in the log (logger {_log.name}). Check those "
            f"workers, then re-run; if chunks can legitimately go quiet for longer, raise the bound: "
            f"dask.config.set({{'{NO_PROGRESS_KEY}': '1 hour'}}) or DASK_CHAINFRAME__NO_PROGRESS_TIMEOUT=3600"
        )
        return WorkersStalled(redact_text(message, *self.plan.secrets), chunks=chunks)

    def _submit(
        self, unit: list[ChunkTask], together: int, chain_id: int, finalized: int, counters: RunCounters
    ) -> distributed.Future[Any]:
        for task in unit:
            report = counters.dataset(task.dataset)
            report.chunks += 1
            report.blocks += task.end - task.fetch_start + 1
        self._submitted += 1
        first = unit[0]
        series = "+".join(_series(task) for task in unit)
        key = f"chainframe-{series}-{first.start}-{first.end}-{self.plan.run}-{self._submitted}"
        shipped = [{**task.to_json(), "path": _shipped_path(task)} for task in unit]
        future: distributed.Future[Any] = self.dask.submit(
            run_on_worker, self.plan.run, shipped, chain_id, finalized, together, key=key, retries=SUBMIT_RETRIES,
            pure=False,
        )  # fmt: skip
        return future

    def _count(self, outcome: Mapping[str, Any], client: Any, counters: RunCounters) -> None:
        """Add what the worker's client did since its last result to this run's counters (progress and report)."""
        before = self._seen.get(outcome["runtime"], {"splits": 0, **asdict(ClientStats())})
        now = {"splits": outcome["splits"], **outcome["stats"]}
        self._seen[outcome["runtime"]] = now
        self._activity[outcome["runtime"]] = (now["requests"], now["calls"], now["bytes_received"])
        counters.split.splits += now["splits"] - before["splits"]
        stats: ClientStats = client.stats
        for item in fields(ClientStats):
            if item.name == "errors":
                for name, count in now["errors"].items():
                    stats.errors[name] = stats.errors.get(name, 0) + count - before["errors"].get(name, 0)
            elif item.name == "set_aside":  # endpoints a worker set aside, and why: not counts
                stats.set_aside.update(now["set_aside"])
            elif item.name == "endpoints":  # what each endpoint was sent, added up over the workers
                for url, sent in now["endpoints"].items():
                    was, total = before["endpoints"].get(url, {}), stats.endpoints.setdefault(url, EndpointCounts())
                    for key, value in sent.items():
                        setattr(total, key, getattr(total, key) + value - was.get(key, 0))
            else:
                setattr(stats, item.name, getattr(stats, item.name) + now[item.name] - before[item.name])


def _units(tasks: Iterator[ChunkTask], chain_id: int) -> Iterator[tuple[list[ChunkTask], int]]:
    """What is submitted as one Dask task: a chunk, or the chunks of a slot that a verifying run proves together
    (:mod:`chainframe.engine._joint`: they are each other's proof), with how many tasks their group fetches, lent
    ones included (0 for a chunk alone). A group's members run on one worker, where its lent chunks are fetched: one
    proof of the slot, nothing fetched for it beyond a plain run's calls, as in one process."""
    first = next(tasks, None)
    if first is None:
        return
    if not first.verify:  # a run verifies all its tasks or none: then nothing is proven together
        yield [first], 0
        yield from (([task], 0) for task in tasks)  # submitted as the plan makes them
        return
    planned = [first, *tasks]  # a round's tasks, as one process lists them (small records)
    joint = Joint(planned, begun=len(needs()), chain_id=chain_id)
    units: dict[int, list[ChunkTask]] = {}
    for task in planned:
        group = joint.group(task)
        units.setdefault(id(task) if group is None else id(group), []).append(task)
    for unit in units.values():
        group = joint.group(unit[0])
        yield sorted(unit, key=joint.rank), 0 if group is None else len(group.names)  # members in proof order


def _shipped_path(task: ChunkTask) -> str:
    local = "://" not in str(task.path)
    return str(Path(task.path).absolute()) if local else str(task.path)  # workers' working folders are their own


def _unit_name(tasks: Sequence[ChunkTask]) -> str:
    """``logs blocks 0..999``, or ``blocks, transactions, logs blocks 0..999`` for a slot's chunks run together."""
    return f"{', '.join(_series(task) for task in tasks)} blocks {tasks[0].start}..{tasks[0].end}"


def _series(task: ChunkTask) -> str:
    """The series folder the task's file is in (``logs``, ``logs__f1a2b3c4d``; a Delta table's files are in its
    ``data/``)."""
    parts = _shipped_path(task).rstrip("/").rsplit("/", 3)
    return parts[-3] if task.layout == "delta" else parts[-2]


@asynccontextmanager
async def dask_runner(
    executor: Executor,
    *,
    endpoints: Sequence[Endpoint],
    client_options: Mapping[str, Any],
    concurrency: int,
    pacings: Sequence[Pacing | None] = (),
) -> AsyncIterator[DaskRunner]:
    """Connect to (or start) the cluster, give its workers the run's plan, and stop the run's work there at the end
    (on success, error or cancellation alike)."""
    stack = AsyncExitStack()
    try:
        yield await _start(stack, executor, endpoints=endpoints, client_options=client_options, concurrency=concurrency,
                           pacings=pacings)  # fmt: skip
    finally:
        # Also when cancelled (Ctrl-C): the workers stop the run's chunks, then the client and a local cluster close.
        with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_TIMEOUT):
            await stack.aclose()


async def _start(
    stack: AsyncExitStack,
    executor: Executor,
    *,
    endpoints: Sequence[Endpoint],
    client_options: Mapping[str, Any],
    concurrency: int,
    pacings: Sequence[Pacing | None] = (),
) -> DaskRunner:
    configured_no_progress_timeout()  # a wrong value fails before a cluster starts
    try:
        if isinstance(executor, str) and executor.startswith("local:"):
            cluster = await stack.enter_async_context(
                distributed.LocalCluster(
                    n_workers=int(executor.removeprefix("local:")), threads_per_worker=concurrency,
                    processes=True, asynchronous=True, dashboard_address=":0",  # any free port: 8787 may be taken
                )
            )  # fmt: skip
            dask = await stack.enter_async_context(distributed.Client(cluster, asynchronous=True))
        else:
            address = executor if isinstance(executor, str) else executor.scheduler.address
            dask = await stack.enter_async_context(
                distributed.Client(address, asynchronous=True, timeout=_connect_timeout())
            )
        await dask.wait_for_workers(1, timeout=_connect_timeout())
    except (OSError, TimeoutError) as exc:
        raise InputError(f"could not reach the Dask cluster {_shown(executor)}: {exc}") from None
    info = (await dask.scheduler.identity(n_workers=-1))["workers"]
    names = sorted(str(w["name"]) for w in info.values())
    plan = WorkerPlan(
        run=secrets.token_hex(4), endpoints=tuple(endpoints), pacings=tuple(pacings), workers=len(names),
        client_options=dict(client_options), index={name: i for i, name in enumerate(names)},
    )  # fmt: skip
    await dask.register_plugin(_Plugin(plan), name=plan.run)
    stack.push_async_callback(dask.unregister_worker_plugin, plan.run)
    return DaskRunner(dask, plan, sum(int(w["nthreads"]) for w in info.values()))


def _shown(executor: Executor) -> str:
    return executor if isinstance(executor, str) else repr(executor)
