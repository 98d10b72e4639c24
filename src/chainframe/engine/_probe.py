"""What a node serves, asked once and cheaply, and which datasets will work on it and by which route.

Six requests where the node takes batches: (1) client version, chain id and the ``latest``, ``finalized`` and
``safe`` headers; (2) each of the spec's ten methods, the trace methods, both tracers of ``debug_traceCall`` and old
state, at the latest block (block 0 for whole-block traces, which cost a block's execution elsewhere) or with
arguments that exist nowhere (a zero transaction hash); (3, 4) eth_getLogs' limits: a wide range matching nothing,
then a span sized to hold about 10,001 logs (:func:`_log_limits`); (5, 6) batches of 50 and then 100 ``eth_chainId``
calls, the sizes a run sends (``batch_size``) and that Erigon and Nethermind allow by default. A node without batches
gets each call alone instead, and no size test. Where block 1's state is refused as dropped, the oldest block served
is then bisected, one ``eth_getBalance`` a halving (:mod:`chainframe.engine._state_window`). A method counts as
missing only when the node says so in any real node's words (:class:`~chainframe.rpc.MethodNotFound`); any other
error is shown as answered.

It lives in the engine because the engine uses its checks: a run picks each dataset's route up front from the same
checks and the same choice (:mod:`chainframe.engine._routes`), asking only those its datasets need.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from chainframe._twins import carry_over
from chainframe.engine._client import endpoint_of, make_client
from chainframe.engine._portal import blocking
from chainframe.engine._routes import ZERO_ADDRESS, Call, Check, Route, ask, check_of, checks_at, routes
from chainframe.engine._state_window import oldest_state
from chainframe.families import choose_family, family_named
from chainframe.rpc import (
    AsyncClient,
    Endpoint,
    LimitExceeded,
    MalformedResponse,
    RetryPolicy,
    RPCError,
    StateUnavailable,
    TerminalError,
    TransientError,
)

BATCH_SIZES = (50, 100)
"""Batch sizes tried, in turn, until one is not answered whole."""
SPEC_METHODS = (
    "eth_getBlockByNumber",
    "eth_getTransactionByBlockNumberAndIndex",
    "eth_getTransactionByBlockHashAndIndex",
    "eth_getUncleByBlockNumberAndIndex",
    "eth_getUncleByBlockHashAndIndex",
    "eth_getTransactionReceipt",
    "eth_getBlockReceipts",
    "eth_getLogs",
    "eth_getProof",
)
"""The spec's read methods but debug_traceCall, which is asked once per tracer (``debug_traceCall callTracer``)."""


@dataclass(frozen=True, kw_only=True)
class Family:
    """The chain family the chain id names, and what verification proves and skips on it (at the head's time)."""

    name: str
    network: str | None
    """The chain's name in the family's table; None: a chain id no family knows."""
    assumed: bool
    """No family knows the chain id, and none was named: it is read as Ethereum."""
    proven: tuple[str, ...]
    skipped: Mapping[str, str]
    """What verification skips on this chain, each with why."""
    chosen: bool = False
    """The user named the family (``--chain-family``)."""

    @classmethod
    def of(cls, chain_id: int, timestamp: int, chain_family: str | None = None) -> Family:
        family, assumed = choose_family(chain_id, chain_family)
        proven, skipped = family.proofs(chain_id, timestamp)
        network = family.chain_ids.get(chain_id)
        return cls(name=family.name, network=network, assumed=assumed, proven=proven, skipped=skipped,
                   chosen=chain_family is not None)  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class Capabilities:
    """What :func:`aprobe` found. ``to_json()`` for machines, ``table()`` for people."""

    endpoint: str
    """The URL with its key redacted."""
    client_version: str | None
    """``web3_clientVersion``; None where the node (or its gateway) does not answer it."""
    chain_id: int
    head: int
    batches: bool
    """Whether the node answers JSON-RPC batches."""
    batch_answered: int
    """The largest batch answered whole (1 without batches)."""
    batch_refused: int | None
    """The smallest batch not answered whole, of those tried; None: every size tried was answered."""
    finalized: bool
    safe: bool
    archive: bool | None
    """Whether old state is served (block 1 against the latest); None where no method could tell."""
    archive_by: str
    state_from: int | None = None
    """The oldest block whose state is served: where block 1's is refused in the node's words for dropped state,
    found by bisection of ``eth_getBalance`` (:mod:`chainframe.engine._state_window`); where it is served, 0 or 1 as
    block 0's is; None where no method could tell."""
    state_calls: int = 0
    """The ``eth_getBalance`` calls :attr:`state_from` took beyond the first check."""
    log_results: int | None = None
    """The most eth_getLogs results the node answers in one call, where its refusal said (Infura: 10,000); None: no
    limit met (see ``log_limits``)."""
    log_blocks: int | None = None
    """The widest eth_getLogs range in blocks, where a refusal said; None: no limit met."""
    log_limits: str = ""
    """What was tried and found, in words (two calls: a wide range that matches nothing, a span sized by the head's
    logs to hold about 10,001 of them)."""
    checks: tuple[Check, ...]
    datasets: tuple[Route, ...]
    requests: int
    """HTTP requests (or WebSocket messages) the probe sent; a batch is one."""
    calls: int
    family: Family
    """The chain family of :attr:`chain_id`."""

    def check(self, name: str) -> Check | None:
        return next((c for c in self.checks if c.name == name), None)

    @property
    def missing(self) -> tuple[str, ...]:
        """The methods the node says it lacks."""
        return tuple(dict.fromkeys(c.name.split()[0] for c in self.checks if c.status == "missing"))

    def route(self, dataset: str) -> Route:
        return next(r for r in self.datasets if r.dataset == dataset)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["missing"] = list(self.missing)
        return out

    def table(self) -> str:
        batches = "not answered" if not self.batches else f"yes, {self.batch_answered} calls answered whole"
        if self.batches and self.batch_refused is not None:
            batches += f", {self.batch_refused} not"
        archive = {True: "served", False: "not served", None: "unknown"}[self.archive]
        lines = [
            f"endpoint   {self.endpoint}",
            f"client     {self.client_version or 'not told (web3_clientVersion not answered)'}",
            f"chain id   {self.chain_id}, head {self.head}",
            *self._family(),
            f"batches    {batches}",
            f"tags       finalized {_yes(self.finalized)}, safe {_yes(self.safe)}",
            f"old state  {archive} ({self.archive_by}){self._window()}",
            f"getLogs    {self.log_limits or 'not tried'}",
            "",
        ]
        width = max(len(c.name) for c in self.checks)
        lines.append(f"{'method':<{width}}  answer")
        for c in self.checks:
            shown = {"served": "yes", "missing": "MISSING", "error": "error"}[c.status]
            lines.append(f"{c.name:<{width}}  {shown}" + (f": {c.answer}" if c.answer else ""))
        width = max(len(r.dataset) for r in self.datasets)
        lines += ["", f"{'dataset':<{width}}  works  route"]
        for r in self.datasets:
            note = f" ({r.note})" if r.note else ""
            lines.append(f"{r.dataset:<{width}}  {_yes(r.works):<5}  {r.route}{note}")
        missing = ", ".join(self.missing) or "none"
        lines += ["", f"missing methods: {missing}", f"{self.requests} requests, {self.calls} calls"]
        return "\n".join(lines) + "\n"

    def _window(self) -> str:
        if self.state_from is None:
            return ""
        return f"; state served from block {self.state_from} on ({self.state_calls} more eth_getBalance calls)"

    def _family(self) -> list[str]:
        family = self.family
        named = (
            f"{family.network}, {family.name}" if family.network
            else f"{family.name}, chosen with --chain-family (chain id not known)" if family.chosen
            else f"{family.name}, assumed: chain id not known"
        )  # fmt: skip
        lines = [f"family     {named}"]
        lines += [f"  proven   {p}" for p in family.proven]
        reasons: dict[str, list[str]] = {}
        for what, why in family.skipped.items():
            reasons.setdefault(why, []).append(what)
        lines += [f"  skipped  {', '.join(what)}: {why}" for why, what in reasons.items()]
        return lines


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def _first(results: Sequence[Any]) -> None:
    """Raise what the node could not answer at all: unreachable, or no chain id or head."""
    failed = [r for r in results if isinstance(r, TransientError)]
    if failed and len(failed) == len(results):
        raise failed[0]


async def _batch_size(client: AsyncClient) -> tuple[int, int | None]:
    """The largest batch of those tried that was answered whole, and the first that was not."""
    answered = 2  # the first requests' batches
    for size in (s for s in BATCH_SIZES if s <= client.batch_size):  # each size in one request
        try:
            results = await client.batch([("eth_chainId", [])] * size)
        except RPCError:
            return answered, size
        if any(isinstance(r, RPCError) for r in results):
            return answered, size
        answered = size
    return answered, None


async def aprobe(
    *,
    rpc: str | Endpoint | None = None,
    network: str | None = None,
    key: str | None = None,
    client_options: Mapping[str, Any] | None = None,
    chain_family: str | None = None,
) -> Capabilities:
    """Ask the node behind ``rpc`` (or Infura's ``network``) what it serves: a handful of requests (see the module).
    ``chain_family``: read the chain as this family (``--chain-family``; see :func:`chainframe.engine.aextract`), for
    the proofs that will apply; one the chain id denies is refused after eth_chainId, before any block is asked for.

    ``client_options`` go to the :class:`~chainframe.rpc.AsyncClient` (timeouts, pacing, transport); retries are
    fewer than a run's unless given (a probe should answer quickly, and a missing method is never retried anyway).
    """
    endpoint = endpoint_of(rpc, network, key)
    if chain_family is not None:
        family_named(chain_family)
    options = {"retry": RetryPolicy(attempts=3, total=30.0), "batch_size": max(BATCH_SIZES), **(client_options or {})}
    async with make_client(endpoint, options, rpc) as client:
        if chain_family is not None:  # one more request, so a wrong family is refused before any block is asked for
            choose_family(await client.chain_id(), chain_family)
        first: list[Call] = [
            ("eth_chainId", []),
            *(("eth_getBlockByNumber", [tag, False]) for tag in ("latest", "finalized", "safe")),
            ("web3_clientVersion", []),
        ]
        batches = True
        try:
            answers = await client.batch(first)
        except TerminalError:  # the whole batch refused: a node (or proxy) without batches
            batches = False
            answers = await ask(client, first, batches)
        _first(answers)
        for answer in answers[:2]:  # chain id and head: nothing to go on without them
            if isinstance(answer, RPCError):
                raise answer
        chain_id, block, finalized, safe, version = answers
        if not isinstance(block, dict):
            raise _no_head(endpoint)
        head = int(block["number"], 16)
        old = hex(min(1, head))
        asked = [*checks_at(block), (f"eth_getBalance at {int(old, 16)}", ("eth_getBalance", [ZERO_ADDRESS, old])),
                 (f"eth_getProof at {int(old, 16)}", ("eth_getProof", [ZERO_ADDRESS, [], old]))]  # fmt: skip
        genesis: Call = ("eth_getBalance", [ZERO_ADDRESS, "0x0"])  # the oldest state, where block 1's is served
        *results, at_genesis = await ask(client, [*(c for _, c in asked), genesis], batches)
        _first(results)
        checks = [check_of("eth_getBlockByNumber", block, endpoint)]
        checks += [check_of(name, r, endpoint) for (name, _), r in zip(asked, results, strict=True)]
        found = {c.name: c for c in checks}
        archive, archive_by = _archive(found, old)
        state_from, state_calls = await _state_from(client, results[-2], at_genesis, int(old, 16), head)
        log_results, log_blocks, log_limits = (
            await _log_limits(client, head, batches) if found["eth_getLogs"].ok else (None, None, "")
        )
        answered, refused = await _batch_size(client) if batches else (1, None)
        return Capabilities(
            endpoint=endpoint.display,
            client_version=version if isinstance(version, str) else None,
            chain_id=int(chain_id, 16),
            head=head,
            batches=batches,
            batch_answered=answered,
            batch_refused=refused,
            finalized=isinstance(finalized, dict),
            safe=isinstance(safe, dict),
            archive=archive,
            archive_by=archive_by,
            state_from=state_from,
            state_calls=state_calls,
            log_results=log_results,
            log_blocks=log_blocks,
            log_limits=log_limits,
            checks=tuple(checks),
            datasets=routes(found, archive, state_from),
            requests=client.stats.requests,
            calls=client.stats.calls,
            family=Family.of(int(chain_id, 16), int(block["timestamp"], 16), chain_family),
        )


RANGE_TRIED = 100_000
"""Blocks of the wide eth_getLogs matching nothing (the zero address logs nothing): only a range limit refuses it."""
RESULTS_TRIED, SPAN_MOST = 10_001, 2_000
"""Logs the second eth_getLogs is sized to hold (one over Infura's limit), from the head's last ten blocks' count, in
at most ``SPAN_MOST`` blocks: where no limit refuses it, an answer of a few MB."""


async def _log_limits(client: AsyncClient, head: int, batches: bool) -> tuple[int | None, int | None, str]:
    """eth_getLogs' limits, cheaply: a ``RANGE_TRIED``-block range matching nothing (a range limit refuses it, naming
    its width), then a span sized from the last ten blocks' logs to hold ``RESULTS_TRIED`` (a results limit refuses
    it, naming its count). Limits found, and what was tried, in words."""
    wide = max(0, head - RANGE_TRIED + 1)
    recent = max(0, head - 9)
    (range_answer, sample) = await ask(client, [
        ("eth_getLogs", [{"fromBlock": hex(wide), "toBlock": hex(head), "address": ZERO_ADDRESS}]),
        ("eth_getLogs", [{"fromBlock": hex(recent), "toBlock": hex(head)}]),
    ], batches)  # fmt: skip
    blocks_limit, said = None, []
    if isinstance(range_answer, LimitExceeded):
        blocks_limit = range_answer.max_blocks
        said.append(f"range: {blocks_limit:,} blocks" if blocks_limit else f"range refused ({range_answer.detail})")
    elif isinstance(range_answer, RPCError):
        said.append(f"range: not told ({range_answer.detail[:80]})")
    else:
        said.append(f"range: {head - wide + 1:,} blocks answered")
    if isinstance(sample, LimitExceeded):  # ten blocks over a limit already
        most = _results(sample.detail)
        said.append(f"results: {most:,} (the last 10 blocks hold more)" if most else "results: 10 blocks refused")
        return most, blocks_limit, "; ".join(said)
    per_block = len(sample) / (head - recent + 1) if isinstance(sample, list) else 0.0
    if not per_block:
        return None, blocks_limit, "; ".join([*said, "results: not tried (no logs in the last 10 blocks)"])
    span = min(SPAN_MOST, blocks_limit or SPAN_MOST, head + 1, max(1, math.ceil(RESULTS_TRIED / per_block)))
    (answer,) = await ask(client, [("eth_getLogs", [{"fromBlock": hex(head - span + 1), "toBlock": hex(head)}])],
                           batches)  # fmt: skip
    if isinstance(answer, LimitExceeded) and answer.reason == "results":
        most = _results(answer.detail)
        said.append(f"results: {most:,}" if most else f"results: refused for {span:,} blocks ({answer.detail[:80]})")
        return most, blocks_limit, "; ".join(said)
    if isinstance(answer, RPCError):
        return None, blocks_limit, "; ".join([*said, f"results: not told ({answer.detail[:80]})"])
    return None, blocks_limit, "; ".join([*said, f"results: {len(answer):,} answered in one call ({span:,} blocks)"])


def _results(text: str) -> int | None:
    """The count a results limit's text names ("query returned more than 10000 results", "10,000 logs")."""
    found = re.search(r"(\d[\d,_]*)\s*(?:results|logs)", text)
    return int(re.sub(r"[,_]", "", found.group(1))) if found else None


def _archive(found: Mapping[str, Check], old: str) -> tuple[bool | None, str]:
    at = int(old, 16)
    for method in ("eth_getBalance", "eth_getProof"):
        check = found[f"{method} at {at}"]
        if check.ok:
            return True, f"{method} at block {at} answered"
        if check.status == "error":
            return False, f"{method} at block {at}: {check.answer}"
    return None, "neither eth_getBalance nor eth_getProof is served"


async def _state_from(client: AsyncClient, answer: Any, at_genesis: Any, at: int, head: int) -> tuple[int | None, int]:
    """The oldest block whose state is served, and the ``eth_getBalance`` calls it took beyond the probe's batch:
    where block ``at``'s (``answer``) is served, 0 or ``at`` as block 0's (``at_genesis``) is; where it is refused in
    the node's words for dropped state, bisected (:func:`~chainframe.engine._state_window.oldest_state`); else
    unknown."""
    if not isinstance(answer, RPCError):
        return (0 if not isinstance(at_genesis, RPCError) else at), 0
    if isinstance(answer, StateUnavailable) and head > at:
        window = await oldest_state(client, at, head)
        return window.oldest, window.calls
    return None, 0


def _no_head(endpoint: Endpoint) -> RPCError:
    error = MalformedResponse("eth_getBlockByNumber('latest') answered no block")
    error.attach(method="eth_getBlockByNumber", blocks=None, endpoint=endpoint.display, secret=endpoint.key)
    return error


_REFUSAL = re.compile(r"(the node refuses [^:;]+): [^;]*?(\[-?\d+\])")


def verdict(route: Route) -> str:
    """A dataset's cell in "what works on which node" (docs/nodes.md's table, ``scripts/node_table``): ``yes:`` and
    its route, with any fallback taken; or ``no:`` and what the node lacks or refuses (its code, not its prose)."""
    if route.works:
        text = f"yes: {route.route}" + (f" ({route.note})" if route.note else "")
    else:
        text = "no: " + _REFUSAL.sub(r"\1 \2", route.note or route.route)
    return text.replace("|", "\\|")


def node_table(found: Mapping[str, Capabilities]) -> str:
    """Markdown: each dataset's :func:`verdict` on each probed node (name -> what :func:`aprobe` found), then what
    each node lacks."""
    names = list(found)
    lines = ["| dataset | " + " | ".join(f"{n} ({(found[n].client_version or '?').split('/')[0]})" for n in names)
             + " |", "|---" * (len(names) + 1) + "|"]  # fmt: skip
    routes = {n: {r.dataset: r for r in found[n].datasets} for n in names}
    for dataset in routes[names[0]]:
        lines.append(f"| {dataset} | " + " | ".join(verdict(routes[n][dataset]) for n in names) + " |")
    lines.append("")
    for n in names:
        lines.append(
            f"- {n} ({found[n].client_version or '?'}) lacks: {', '.join(found[n].missing) or 'nothing probed'}"
        )
    return "\n".join(lines) + "\n"


def probe(**options: Any) -> Capabilities:
    """Blocking :func:`aprobe` (works inside Jupyter's running event loop)."""
    result: Capabilities = blocking(aprobe, **options)
    return result


carry_over(probe, aprobe)  # help(probe) shows aprobe's options and docstring
