"""Which way each dataset is read on a node: the checks asked of it (each method with arguments that cost little
anywhere), their verdicts, and the route each dataset takes from them.

A run picks its routes here before any work (:func:`preflight`, one batch of just the methods its datasets' routes
need); the probe (:mod:`chainframe.engine._probe`) asks every check and reports the node whole, from the same checks
and the same choice, so ``chainframe probe`` says what a run would do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from chainframe.datasets import DATASETS, Dataset, Fetch
from chainframe.rpc import AsyncClient, Endpoint, MethodNotFound, RPCError, TerminalError, TransientError

Status = Literal["served", "missing", "error"]
"""``served``: a result (null included); ``missing``: the node says it has no such method; ``error``: any other
error (the method is there, but refused these arguments, this tracer or this block)."""
TRACERS = ("callTracer", "prestateTracer")
ZERO_ADDRESS = "0x" + "00" * 20
_ZERO_HASH = "0x" + "00" * 32
_DIFF_MODE = {"tracer": "prestateTracer", "tracerConfig": {"diffMode": True}}


@dataclass(frozen=True, kw_only=True)
class Check:
    """One thing asked of the node."""

    name: str
    """The method, or the method and what was asked of it (``debug_traceCall callTracer``, ``eth_getBalance at 1``)."""
    status: Status
    answer: str = ""
    """The node's error (message and code), or ``null``; empty for a result."""

    @property
    def ok(self) -> bool:
        return self.status == "served"


@dataclass(frozen=True, kw_only=True)
class Route:
    """Whether a dataset will work on the node, and how it would be fetched."""

    dataset: str
    works: bool
    route: str
    """The methods it would be fetched with; where it does not work, what it needs."""
    note: str = ""
    """A fallback taken, a limit, or what the node lacks."""


Call = tuple[str, Sequence[Any]]


async def ask(client: AsyncClient, calls: Sequence[Call], batches: bool) -> list[Any]:
    """Each call's result or its :class:`RPCError`: in one batch, or one by one."""
    if batches:
        return await client.batch(calls)
    results: list[Any] = []
    for method, params in calls:
        try:
            results.append(await client.request(method, params))
        except TerminalError as exc:
            results.append(exc)
    return results


def check_of(name: str, result: Any, endpoint: Endpoint, *, null_is_no: bool = False) -> Check:
    if isinstance(result, MethodNotFound):
        return Check(name=name, status="missing", answer=_said(result, endpoint))
    if isinstance(result, RPCError):
        return Check(name=name, status="error", answer=_said(result, endpoint))
    if result is None and null_is_no:
        return Check(name=name, status="error", answer="null")
    return Check(name=name, status="served")


def _said(error: RPCError, endpoint: Endpoint) -> str:
    code = f" [{error.code}]" if error.code is not None else ""
    return endpoint.redact(" ".join(error.detail.split())[:160]) + code


def routes(found: Mapping[str, Check], archive: bool | None, state_from: int | None = None) -> tuple[Route, ...]:
    """Each dataset's route on a node that answered ``found`` (check name -> check): the first of the ways it
    declares (``Dataset.routes``) whose every method the node serves; a state-reading dataset's note says from which
    block the node serves state (``state_from``), where old state is not served."""

    def ok(name: str) -> bool:
        check = found.get(name)
        return check is not None and check.ok

    def why_not(names: Sequence[str]) -> str:
        """What keeps a way from working: the methods the node lacks, or what it refused."""
        reasons = []
        for name in names:
            check = found.get(name)
            if check is None or check.status == "missing":
                reasons.append(f"the node lacks {name.split()[0]}")
            elif not check.ok:
                reasons.append(f"the node refuses {name}: {check.answer}")
        return "; ".join(dict.fromkeys(reasons))

    old = "" if archive is not False else "old state not served: recent blocks only"
    if archive is False and state_from is not None:
        old = f"old state not served: state from block {state_from} on only"
    if ok("eth_getBlockReceipts"):
        over = "a block over a limit: eth_getBlockReceipts"
    elif ok("eth_getBlockByNumber") and ok("eth_getTransactionReceipt"):
        over = "a block over a limit: eth_getBlockByNumber + eth_getTransactionReceipt"
    else:
        over = "a block over a limit cannot be read"
    out: list[Route] = []
    for dataset in DATASETS.values():
        ways = dataset.all_routes()
        usable = next((way for way in ways if all(map(ok, way))), None)
        if usable is None:
            out.append(Route(dataset=dataset.name, works=False, route=" or ".join(" + ".join(w) for w in ways),
                             note=why_not([m for w in ways for m in w])))  # fmt: skip
            continue
        notes = [why_not(ways[0]) if usable != ways[0] else ""]
        notes += [old if dataset.reads_state else "", over if dataset.fetched is Fetch.LOGS else ""]
        out.append(
            Route(dataset=dataset.name, works=True, route=" + ".join(usable), note="; ".join(filter(None, notes)))
        )
    return tuple(out)


def checks_at(block: Mapping[str, Any]) -> list[tuple[str, Call]]:
    """Each check's name and call, at the head ``block`` (its number, hash and first transaction) or at block 0 for
    whole-block traces (cheap everywhere), with arguments that exist nowhere where none is at hand."""
    n, block_hash = block["number"], block["hash"]
    transaction = next(iter(block.get("transactions") or ()), _ZERO_HASH)
    call = {"to": ZERO_ADDRESS}
    return [
        ("eth_getTransactionByBlockNumberAndIndex", ("eth_getTransactionByBlockNumberAndIndex", [n, "0x0"])),
        ("eth_getTransactionByBlockHashAndIndex", ("eth_getTransactionByBlockHashAndIndex", [block_hash, "0x0"])),
        ("eth_getUncleByBlockNumberAndIndex", ("eth_getUncleByBlockNumberAndIndex", [n, "0x0"])),
        ("eth_getUncleByBlockHashAndIndex", ("eth_getUncleByBlockHashAndIndex", [block_hash, "0x0"])),
        ("eth_getTransactionReceipt", ("eth_getTransactionReceipt", [transaction])),
        ("eth_getBlockReceipts", ("eth_getBlockReceipts", [n])),
        ("eth_getLogs", ("eth_getLogs", [{"fromBlock": n, "toBlock": n}])),
        ("eth_getProof", ("eth_getProof", [ZERO_ADDRESS, [], n])),
        ("eth_getBalance", ("eth_getBalance", [ZERO_ADDRESS, n])),
        ("eth_getTransactionCount", ("eth_getTransactionCount", [ZERO_ADDRESS, n])),
        ("eth_getCode", ("eth_getCode", [ZERO_ADDRESS, n])),
        ("eth_getStorageAt", ("eth_getStorageAt", [ZERO_ADDRESS, "0x0", n])),
        ("eth_call", ("eth_call", [call, n])),
        *((f"debug_traceCall {t}", ("debug_traceCall", [call, n, {"tracer": t}])) for t in TRACERS),
        ("trace_block", ("trace_block", ["0x0"])),
        ("debug_traceBlockByNumber", ("debug_traceBlockByNumber", ["0x0", {"tracer": "callTracer"}])),
        ("debug_traceTransaction", ("debug_traceTransaction", [transaction, {"tracer": "callTracer"}])),
        # The state diffs' two routes, asked as they read (a node may serve a method but not this trace or mode).
        ("trace_replayBlockTransactions stateDiff", ("trace_replayBlockTransactions", ["0x0", ["stateDiff"]])),
        ("debug_traceBlockByNumber prestateTracer diffMode", ("debug_traceBlockByNumber", ["0x0", _DIFF_MODE])),
    ]


_EVERY_NODE = frozenset({"eth_getBlockByNumber", "eth_getLogs"})
"""Methods every node serves: a run does not ask them first (an eth_getLogs asked before the work is one more call
of the most expensive kind, and waits as long as any answer of the node's)."""


def _preflown(datasets: Sequence[Dataset]) -> tuple[list[Dataset], list[str]]:
    """The datasets :func:`preflight` decides (every method of their routes known to the probe), and the checks
    (names) it asks for them."""
    names = {name for name, _ in checks_at({"number": "0x0", "hash": _ZERO_HASH})}
    checked = [d for d in datasets if all(m in names or m in _EVERY_NODE for w in d.all_routes() for m in w)]
    return checked, sorted({m for d in checked for way in d.all_routes() for m in way if m in names} - _EVERY_NODE)


def preflight_methods(datasets: Sequence[Dataset]) -> list[str]:
    """The methods a run's :func:`preflight` asks for ``datasets`` (``--dry`` counts them), beside the head's header."""
    return [name.split()[0] for name in _preflown(datasets)[1]]


async def preflight(client: AsyncClient, datasets: Sequence[Dataset], head: int) -> dict[str, Route]:
    """Each of ``datasets``' routes on the run's node, picked before any work, from one batch asking just the methods
    their routes need, as :func:`aprobe` asks them (a method the node lacks is then known to the client, so no piece
    asks it). A route other than a dataset's first is said in the run's summary (``client.notes``); a dataset the node
    can serve no way is :class:`~chainframe.rpc.MethodNotFound` at once, naming the dataset, the methods, the node's
    answers and what would serve it. Datasets whose routes name a method the probe does not know are left to their
    own fetch."""
    checked, needed = _preflown(datasets)
    if not needed:
        return {}  # blocks and transactions, logs: the methods every node serves
    block = await client.request("eth_getBlockByNumber", [hex(head), False])
    if not isinstance(block, dict):
        return {}
    table = dict(checks_at(block))
    try:
        results = await client.batch([table[m] for m in needed])
    except TerminalError:  # the whole request refused (a gateway routing by method, HTTP 404/405): one by one
        results = await ask(client, [table[m] for m in needed], batches=False)
    for result in results:
        if isinstance(result, TransientError):
            raise result  # what the run's first request would meet: no verdict on a node that did not answer
    found = {m: check_of(m, r, client.endpoint) for m, r in zip(needed, results, strict=True)}
    found |= {m: Check(name=m, status="served") for m in _EVERY_NODE}  # assumed, not asked
    names = {d.name for d in checked}
    picked = {r.dataset: r for r in routes(found, None) if r.dataset in names}
    for dataset in checked:
        route = picked[dataset.name]
        if not route.works:
            first = " + ".join(dataset.all_routes()[0])
            failed = dict.fromkeys(m for w in dataset.all_routes() for m in w if not found[m].ok)
            answers = "; ".join(f"{m}: {found[m].answer}" for m in failed)
            error = MethodNotFound(
                f"{dataset.name}: the node serves no way to read it ({route.route}); it answered {answers}; a node "
                f"that serves {first} would"
            )
            lacking = next((m.split()[0] for m in failed), dataset.method)
            error.attach(method=lacking, blocks=None, endpoint=client.endpoint.display, secret=client.endpoint.key)
            raise error
        if route.route != " + ".join(dataset.all_routes()[0]):
            client.notes[f"route {dataset.name}"] = f"{dataset.name} read by {route.route} ({route.note})"
    return picked
