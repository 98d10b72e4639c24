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
  and commit the slot's one file (a temporary renamed over the slot's name). Each task owns exactly one output file,
  so concurrent workers never write the same file, and a task run twice writes the same file twice: a worker lost
  mid-chunk (Dask runs its task again elsewhere) leaves a temporary at most, never a second copy of a row.
- Each worker builds its own client from the endpoint configuration, which reaches it once, inside a worker plugin
  (:class:`_Plugin`), never inside a task: task keys are ``chainframe-<series>-<start>-<end>-<run>-<n>`` and task
  arguments hold no URL, so the key is in no task key, repr, log line or dashboard page.

The provider's budget is shared by equal shares (:meth:`chainframe.rpc.Pacing.share`): with E endpoints and N
workers, worker i uses endpoint ``i mod E`` first (the others as its fallbacks, as without Dask) and paces itself to
``1 / ceil(N / E)`` of that endpoint's requests and credits per second, so the workers on one endpoint never exceed
its budget together, with no message per request. A rate-limit answer's pause is announced as a Dask event
(``Worker.log_event``) to the run's topic; every worker on the same endpoint pauses too.
"""

from __future__ import annotations

import math
import secrets
import zlib
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
from chainframe.engine._engine import DatasetReport, RunCounters, run_chunk
from chainframe.engine._logs import SplitState
from chainframe.engine._plan import ChunkTask
from chainframe.rpc import AsyncClient, Endpoint, Pacing
from chainframe.rpc._client import ClientStats

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
_SCHEMES = ("tcp://", "tls://", "ws://", "wss://", "inproc://", "ucx://")


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
    workers: int
    """Workers the run started with: each endpoint's budget is split between ``ceil(workers / endpoints)``."""
    client_options: Mapping[str, Any] = field(default_factory=dict, repr=False)
    index: Mapping[str, int] = field(default_factory=dict)
    """Worker name -> its place, which picks its primary endpoint (a worker that joins later: by its name's hash)."""

    @property
    def topic(self) -> str:
        return f"chainframe-{self.run}-pause"

    def endpoint_of(self, worker_name: str) -> int:
        place = self.index.get(worker_name, zlib.crc32(worker_name.encode()))
        return place % len(self.endpoints)

    def pacing(self) -> Pacing:
        pacing: Pacing = self.client_options.get("pacing", Pacing())
        return pacing.share(math.ceil(self.workers / len(self.endpoints)))

    def client(self, worker_name: str) -> AsyncClient:
        first = self.endpoint_of(worker_name)
        order = [*self.endpoints[first:], *self.endpoints[:first]]
        options = {**self.client_options, "pacing": self.pacing()}
        options["fallbacks"] = [*order[1:], *options.get("fallbacks", ())]
        return AsyncClient(order[0], **options)


class _Runtime:
    """One worker's side of a run: an event loop of its own on a thread (the worker's loop is left to Dask), one
    client and one split state shared by the chunks the worker runs at once."""

    def __init__(self, plan: WorkerPlan, worker_name: str, publish: Callable[[float], None]) -> None:
        self.id = secrets.token_hex(4)
        self.endpoint_index = plan.endpoint_of(worker_name)
        self._stack = AsyncExitStack()
        self._portal_cm = start_blocking_portal()
        self.portal: BlockingPortal = self._portal_cm.__enter__()
        try:
            client = plan.client(worker_name)
            self._client_cm = self.portal.wrap_async_context_manager(client)
            self.client: AsyncClient = self._client_cm.__enter__()
            self.client.pacer.announce = publish
            self.state, self.decode = self.portal.call(_loop_objects)
        except BaseException:
            self._portal_cm.__exit__(None, None, None)
            raise
        self._running: dict[anyio.CancelScope, anyio.Event] = {}

    def run(self, task: ChunkTask, chain_id: int, finalized: int) -> dict[str, Any]:
        result: dict[str, Any] = self.portal.call(self._run, task, chain_id, finalized)
        return result

    async def _run(self, task: ChunkTask, chain_id: int, finalized: int) -> dict[str, Any]:
        report = DatasetReport()
        outcome: dict[str, Any] = {"runtime": self.id}
        stopped = anyio.Event()
        with anyio.CancelScope() as scope:
            self._running[scope] = stopped
            try:
                outcome["rows"] = await run_chunk(
                    task, self.client, chain_id=chain_id, endpoint=self.client.endpoint.display, finalized=finalized,
                    state=self.state, decode=self.decode, report=report,
                )  # fmt: skip
            except Exception as exc:  # an ExceptionGroup from a task group too
                error = first_error(exc)
                if not isinstance(error, ChainframeError):
                    raise
                outcome["error"] = error  # a result, not a failure: Dask does not retry it, nor log its arguments
            finally:
                del self._running[scope]
                stopped.set()
        if scope.cancel_called:
            outcome["error"] = ChainframeError(f"chunk {task.start}..{task.end} was stopped: the run ended")
        outcome.update(
            refetched=report.refetched, verified_blocks=report.verified_blocks, verified_rows=report.verified_rows,
            unverified=report.unverified, stats=asdict(self.client.stats), splits=self.state.splits,
        )  # fmt: skip
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


def run_on_worker(run: str, task: Mapping[str, Any], chain_id: int, finalized: int) -> dict[str, Any]:
    """The Dask task: one chunk on this worker, with the run's runtime. Arguments hold no secret."""
    runtime = _RUNTIMES.get(run)
    if runtime is None:
        raise RuntimeError(f"this worker has no chainframe run {run} (its plugin did not start here)")
    return runtime.run(ChunkTask(**task), chain_id, finalized)


# --- the coordinator's side ------------------------------------------------------------------------------------


class DaskRunner:
    """Runs a round's chunk tasks on the cluster (a :class:`TaskRunner`); made by :func:`dask_runner`."""

    def __init__(self, dask: distributed.Client, plan: WorkerPlan, threads: int) -> None:
        self.dask, self.plan, self.threads = dask, plan, threads
        self._submitted = 0
        self._seen: dict[str, dict[str, Any]] = {}  # each runtime's last stats, to add only what is new

    async def __call__(
        self,
        tasks: Iterator[ChunkTask],
        client: Any,
        *,
        chain_id: int,
        endpoint: str,
        finalized: int,
        concurrency: int,
        counters: RunCounters,
        on_chunk: Callable[[ChunkTask, int, bool], None] | None = None,
    ) -> None:
        window = self.threads + self.plan.workers
        pending: dict[distributed.Future[Any], ChunkTask] = {}
        try:
            while True:
                for task in tasks:
                    pending[self._submit(task, chain_id, finalized, counters)] = task
                    if len(pending) >= window:
                        break
                if not pending:
                    return
                done = (await distributed.wait(list(pending), return_when="FIRST_COMPLETED")).done
                for future in done:
                    task = pending.pop(future)
                    try:
                        outcome = await future.result()
                    except distributed.KilledWorker as exc:  # the task's workers died allowed-failures times
                        raise ChainframeError(
                            f"{task.dataset} blocks {task.start}..{task.end}: every worker that ran it died ({exc}); "
                            "its slot is as it was: re-run to try again"
                        ) from None
                    self._count(outcome, client, counters)
                    if "error" in outcome:
                        raise outcome["error"]
                    report = counters.dataset(task.dataset)
                    report.refetched += outcome["refetched"]
                    report.verified_blocks += outcome["verified_blocks"]
                    report.verified_rows += outcome["verified_rows"]
                    report.unverified.update(outcome["unverified"])
                    report.written += 1
                    report.rows += outcome["rows"]
                    if on_chunk:
                        on_chunk(task, outcome["rows"], True)
        finally:
            if pending:
                with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_TIMEOUT):
                    await self.dask.cancel(list(pending), force=True)

    def _submit(self, task: ChunkTask, chain_id: int, finalized: int, counters: RunCounters) -> distributed.Future[Any]:
        report = counters.dataset(task.dataset)
        report.chunks += 1
        report.blocks += task.end - task.fetch_start + 1
        self._submitted += 1
        local = "://" not in str(task.path)
        path = str(Path(task.path).absolute()) if local else str(task.path)  # workers' working folders are their own
        series = path.rstrip("/").rsplit("/", 2)[-2]
        key = f"chainframe-{series}-{task.start}-{task.end}-{self.plan.run}-{self._submitted}"
        shipped = {**task.to_json(), "path": path}
        future: distributed.Future[Any] = self.dask.submit(
            run_on_worker, self.plan.run, shipped, chain_id, finalized, key=key, retries=SUBMIT_RETRIES, pure=False
        )
        return future

    def _count(self, outcome: Mapping[str, Any], client: Any, counters: RunCounters) -> None:
        """Add what the worker's client did since its last result to this run's counters (progress and report)."""
        before = self._seen.get(outcome["runtime"], {"splits": 0, **asdict(ClientStats())})
        now = {"splits": outcome["splits"], **outcome["stats"]}
        self._seen[outcome["runtime"]] = now
        counters.split.splits += now["splits"] - before["splits"]
        stats: ClientStats = client.stats
        for item in fields(ClientStats):
            if item.name == "errors":
                for name, count in now["errors"].items():
                    stats.errors[name] = stats.errors.get(name, 0) + count - before["errors"].get(name, 0)
            else:
                setattr(stats, item.name, getattr(stats, item.name) + now[item.name] - before[item.name])


@asynccontextmanager
async def dask_runner(
    executor: Executor, *, endpoints: Sequence[Endpoint], client_options: Mapping[str, Any], concurrency: int
) -> AsyncIterator[DaskRunner]:
    """Connect to (or start) the cluster, give its workers the run's plan, and stop the run's work there at the end
    (on success, error or cancellation alike)."""
    stack = AsyncExitStack()
    try:
        yield await _start(stack, executor, endpoints=endpoints, client_options=client_options, concurrency=concurrency)
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
) -> DaskRunner:
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
        run=secrets.token_hex(4), endpoints=tuple(endpoints), workers=len(names),
        client_options=dict(client_options), index={name: i for i, name in enumerate(names)},
    )  # fmt: skip
    await dask.register_plugin(_Plugin(plan), name=plan.run)
    stack.push_async_callback(dask.unregister_worker_plugin, plan.run)
    return DaskRunner(dask, plan, sum(int(w["nthreads"]) for w in info.values()))


def _shown(executor: Executor) -> str:
    return executor if isinstance(executor, str) else repr(executor)
