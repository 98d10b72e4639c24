"""Block traces: every transaction's call frames (``traces``), the ether they move (``native_transfers``) and the
contracts they create (``contracts``).

Three routes, best first, taken in turn where the node says it lacks a method (:class:`~chainframe.rpc.MethodNotFound`,
remembered by the client for the rest of the run):

1. ``trace_block`` (parity style): one call per block, normalized to callTracer's frames: ``Reverted`` is written
   ``execution reverted`` and an ``Error(string)`` revert reason is decoded from the output, as callTracer does.
   Where a dataset's columns hold the top frame's gas used (``traces``: :attr:`_BlockTraced.top_gas_used`), that
   figure is the receipt's, as geth's callTracer gives it (parity leaves the intrinsic gas out and counts before
   refunds): it is read the cheapest way the run can pay for (:func:`gas_route`), each checked against the
   blocks' headers (:func:`_top_gas_used`): the default tracer asked for no steps, or under a provider's credits
   the full blocks (each transaction's gas limit, less what parity's top frame was given, plus what it used); and
   from the blocks' receipts only where that is not served or not borne out (then only each receipt's ``gasUsed``
   is taken, found in the answer's bytes: a log-heavy block's receipts are 20 times the traces' bytes). The
   top frame's gas is the node's figure on every route (geth's callTracer: the transaction's gas; anvil's and
   parity's: what is left after the intrinsic gas). First because the nodes that serve it (Erigon, Reth,
   Nethermind, anvil) answer it from their own tracer: on anvil it took 0.04 server CPU-s for 300 blocks where
   ``debug_traceBlockByNumber`` took 3.0 (Infura prices the two 300 + 1000 for the receipts, against 1000);
2. ``debug_traceBlockByNumber`` with callTracer: one call per block (geth has no ``trace_block``);
3. ``debug_traceTransaction`` with callTracer per transaction, the hashes from ``eth_getBlockByNumber``: all Hardhat
   has, but Hardhat refuses every tracer but its struct logger, so there the route is refused in the node's words.

A node serving none gets one error naming the dataset, each method tried and the node's answer. The fetched answers
say which route gave them; ``transform`` reads each into the same frames, so rows do not depend on the route.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import pyarrow as pa

from chainframe.datasets._columns import U256
from chainframe.datasets._dataset import BlockRange, Dataset, build_arrow, spread_blocks
from chainframe.datasets._function_calls import FUNCTION, DecodesCalls
from chainframe.datasets._proof import Proof
from chainframe.datasets._traces import _FRAME, _frame_table, _table
from chainframe.rpc import InvalidParams, MethodNotFound, RPCError, split_answers

if TYPE_CHECKING:
    import polars as pl

    from chainframe.datasets._parity_frames import Read
    from chainframe.rpc import Pacing
else:
    from chainframe._lazy import polars as pl

BLOCK_TRACER = "debug_traceBlockByNumber"
PARITY = "trace_block"
TX_TRACER = "debug_traceTransaction"
_CALL_TRACER = {"tracer": "callTracer"}
_ERROR_SELECTOR = "0x08c379a0"  # Error(string)
_PARITY_ERRORS = {"Reverted": "execution reverted", "Out of gas": "out of gas"}
_NO_VALUE = frozenset({"DELEGATECALL", "STATICCALL", "CALLCODE"})
"""Frames that move no ether: a delegate call reports its caller's value, a static call none, a CALLCODE sends the
value to the caller itself."""

TRACED = (
    "a frame of execution, asked of the node: no header field commits to execution traces (only a transaction's "
    "own value is proven, against the transactions root and its receipt's status)"
)


async def fetch_traces(
    client: Any, blocks: BlockRange, *, dataset: str, headers: bool = False, top_gas_used: bool = True
) -> list[bytes]:
    """The blocks' traces by the first route the node serves, as one JSON document (``{"route", ...}``, read by
    :func:`decoded`); ``headers``: each
    block's header too (miner and withdrawals, for ``native_transfers``); ``top_gas_used``: the top frames' gas used
    as callTracer gives it (trace_block's route then reads the receipts for it; without, its top frames keep
    parity's own figure)."""
    tried: dict[str, str] = {}
    known = getattr(client, "missing_methods", {})
    for method, way in ((PARITY, _by_parity), (BLOCK_TRACER, _by_block_tracer), (TX_TRACER, _by_transaction)):
        if method in known:
            tried[method] = known[method]
            continue
        try:
            found = await (_by_parity(client, blocks, top_gas_used) if way is _by_parity else way(client, blocks))
        except MethodNotFound as exc:
            tried[method] = f"{exc.detail} [{exc.code}]" if exc.code is not None else exc.detail
            continue
        except InvalidParams as exc:  # Hardhat: "currently only supports the default tracer"
            if method != TX_TRACER:
                raise
            tried[f"{method} with callTracer"] = f"{exc.detail} [{exc.code}]"
            continue
        if headers:
            calls = [("eth_getBlockByNumber", [hex(n), False]) for n in blocks]
            found["header_answers"] = list(await client.batch_bytes(calls))  # as received, as the traces
        return [_document(found)]
    said = "; ".join(f"{m}: {answer}" for m, answer in tried.items())
    raise MethodNotFound(
        f"{dataset} needs block traces and the node serves none of trace_block, debug_traceBlockByNumber (callTracer) "
        f"or debug_traceTransaction (callTracer) ({said}); a node with the debug or trace API (geth, Erigon, Reth, "
        "Nethermind, anvil) serves them"
    )


async def batch_or_raise(client: Any, calls: Sequence[tuple[str, list[Any]]]) -> list[Any]:
    """The calls' results in order, through the client's batches; the first call that failed raises its error."""
    results = await client.batch(calls)
    for result in results:
        if isinstance(result, Exception):
            raise result
    return list(results)


async def _by_block_tracer(client: Any, blocks: BlockRange) -> dict[str, Any]:
    answers = await batch_or_raise(client, [(BLOCK_TRACER, [hex(n), _CALL_TRACER]) for n in blocks])
    traces = [{"block": n, "traces": a or []} for n, a in zip(blocks, answers, strict=True)]
    return {"route": BLOCK_TRACER, "blocks": traces}


async def _by_parity(client: Any, blocks: BlockRange, top_gas_used: bool = True) -> dict[str, Any]:
    # The batch answers as received (``answers``: their bytes go into the document unparsed, read once by the
    # transform): parsing them here and writing them out again took two of the three passes over the JSON, about
    # 0.6 of a native_transfers run's 2.6 CPU-s on the benchmark chain. A frame's "error" inside a result does not
    # send a batch back item by item (rpc's results_only). Each trace names its block; an empty block has none.
    answers = list(await client.batch_bytes([(PARITY, [hex(n)]) for n in blocks]))
    found: dict[str, Any] = {"route": PARITY, "numbers": list(blocks), "answers": answers}
    if top_gas_used:
        used = await _top_gas_used(client, blocks, answers)
        found["gas_used"] = [used.get(n, []) for n in blocks]  # in the numbers' order (a list: read by Polars)
    return found


_NO_STEPS = {"disableStack": True, "disableMemory": True, "disableStorage": True, "disableReturnData": True, "limit": 1}
"""The default (struct) tracer asked for no steps: its answer is each transaction's ``gas``, ``failed`` and hash."""

GasRoute = Literal["tracer", "blocks", "receipts"]
_GAS_CALLS: Mapping[GasRoute, tuple[str, ...]] = {
    "tracer": (BLOCK_TRACER, "eth_getBlockByNumber"),  # the figures, and the headers they are checked by
    "blocks": ("eth_getBlockByNumber",),  # the full blocks: gas limits, and the header in the same answer
    "receipts": ("eth_getBlockReceipts",),
}
"""What each way of reading the top frames' gas asks per block (beside trace_block, which every way reads)."""


def gas_route(pacing: Pacing | None) -> GasRoute:
    """How a run reads the top frames' gas used. Unpaced, or paced by requests: the no-step tracer and the headers,
    what costs a node least (the benchmark chain on anvil, server CPU: the tracer and the headers 0.17 + 0.11 s for
    its 2,000 blocks; per 200 blocks the receipts 0.27-0.32 s, the full blocks 0.70). Paced by a provider's credits:
    the route its price table makes cheapest per block, a call apart each (Infura: the tracer and headers 1,000 + 80,
    full blocks 80, receipts 1,000; Alchemy: 1,000 + 20, 20, 500; QuickNode: 40 + 20, 20, 20, the full blocks first
    where two tie: their proof needs no other method)."""
    if pacing is None or pacing.credits_per_second is None:
        return "tracer"
    order: tuple[GasRoute, ...] = ("blocks", "receipts", "tracer")
    return min(order, key=lambda route: sum(pacing.cost([m]) for m in _GAS_CALLS[route]))


async def _top_gas_used(client: Any, blocks: BlockRange, answers: Sequence[bytes]) -> dict[int, list[str]]:
    """Each block's transactions' gas used as their receipts give it, in transaction order (``answers``: the blocks'
    trace_block batch answers, as received).

    By the run's :func:`gas_route`, each block's figures checked against its header, which every route reads:

    - the tracer: the default tracer asked for no steps (``debug_traceBlockByNumber``: one small answer per block,
      no logs); its transactions' hashes, in order, must be the header's, and its figures must add up to the
      header's ``gasUsed`` (each transaction's gas used, as geth gives it) or run up to it (each the block's gas
      used so far, as anvil gives it: the differences are then each transaction's);
    - the full blocks: each transaction's gas limit, less the gas parity's top frame was given (what the node took
      before the frame ran: the intrinsic gas), plus what the frame used (all it was given where it failed with no
      result), or the calldata floor where higher (EIP-7623, in blocks with a ``requestsHash``); these must add up
      to the header's ``gasUsed`` (:func:`_bounded_gas`).

    Every other reading of a figure (before refunds, without the intrinsic gas) differs from the receipt's in the
    same direction for every transaction (a refund only lowers the receipt's), so a total that matches the
    header's leaves no room for any to differ. A block that fails its check, or a node without the method, has its
    receipts read instead (eth_getBlockReceipts, else by transaction). On the benchmark chain's 2,000 blocks
    (anvil, log-heavy): 0.17 + 0.11 anvil CPU-s and 8.5 MB for the tracer and the headers, against 2.96 CPU-s and
    194 MB for the receipts."""
    out: dict[int, list[str]] = {}
    pacing = getattr(getattr(client, "pacer", None), "pacing", None)
    route = gas_route(pacing)
    if route == "tracer" and BLOCK_TRACER not in getattr(client, "missing_methods", {}):
        out.update(await _tracer_gas(client, blocks))
    elif route == "blocks":
        # A sample of the piece first: on a chain where most blocks hold a refund (mainnet: a DEX's re-entrancy lock
        # is refunded in nearly every swap) the full blocks would be read beside every block's receipts. Where
        # another series of the run reads the full blocks (transactions), they cost no call of ours: all are read.
        tops, numbers = _top_frames(answers), list(blocks)
        shared = getattr(client, "read_by_others", None)
        free = shared is not None and shared("eth_getBlockByNumber", [True])
        sample = numbers if free else numbers[: min(FULL_BLOCKS_SAMPLE, max(1, len(numbers) // 10))]
        proven, failed, tried = await _full_blocks_gas(client, sample, tops)
        out.update(proven)
        if not free and full_blocks_pay(failed, tried, pacing):
            out.update((await _full_blocks_gas(client, numbers[len(sample) :], tops))[0])
    left = [n for n in blocks if n not in out]  # ascending, as blocks
    if left:
        out.update(await _receipts_gas_used(client, left))
    return out


FULL_BLOCKS_SAMPLE = 8
"""Blocks of a piece (a tenth of it, at least one) whose full bodies are read first, to learn whether reading the
rest's pays (:func:`full_blocks_pay`)."""


DRY_SAMPLE = 20
"""Blocks spread over a range whose full bodies ``--dry`` reads to predict how many blocks take their receipts."""


def full_blocks_pay(failed: int, tried: int, pacing: Pacing | None) -> bool:
    """Whether reading full blocks for the top frames' gas costs less than reading the receipts, where ``failed`` of
    ``tried`` blocks with transactions were not borne out by their headers (and took their receipts as well): while
    that share stays under the receipts' saving (Infura: 1 - 80 / 1,000)."""
    if pacing is None or tried == 0:
        return True
    full, receipts = pacing.cost(["eth_getBlockByNumber"]), pacing.cost(["eth_getBlockReceipts"])
    return failed / tried < 1 - full / receipts


async def _full_blocks_gas(
    client: Any, numbers: Sequence[int], tops: Mapping[int, Mapping[int, Top]]
) -> tuple[dict[int, list[str]], int, int]:
    """The gas used of ``numbers``' transactions from their full blocks, where proven (:func:`_bounded_gas`); and of
    the blocks with transactions, how many were not proven and how many were tried."""
    if not numbers:
        return {}, 0, 0
    proven: dict[int, list[str]] = {}
    failed = tried = 0
    calls = [("eth_getBlockByNumber", [hex(n), True]) for n in numbers]
    try:  # as bytes: the answers another series of the run reads are shared that way (engine._shared)
        blocks = batch_results(json.loads(body) for body in await client.batch_bytes(calls))
    except RPCError:  # a block that failed: read one by one, it takes its receipts
        blocks = []
    if len(blocks) != len(numbers):
        blocks = await client.batch(calls)
    for n, block in zip(numbers, blocks, strict=True):
        used = _bounded_gas(tops.get(n, {}), block)
        if used is not None:
            proven[n] = used
        busy = not isinstance(block, dict) or bool(block.get("transactions"))
        tried, failed = tried + busy, failed + (busy and used is None)
    return proven, failed, tried


def batch_results(batches: Iterable[Sequence[Mapping[str, Any]]]) -> list[Any]:
    """The results of batch answers, in the calls' order: each answer's envelopes by their ids, the answers in the
    calls' order (as the client's batches give them)."""
    out: list[Any] = []
    for envelopes in batches:
        out += [e.get("result") for e in sorted(envelopes, key=lambda e: e["id"])]
    return out


async def _tracer_gas(client: Any, blocks: BlockRange) -> dict[int, list[str]]:
    """Each block's transactions' gas used from the no-step tracer, where its header bears it out (see
    :func:`_top_gas_used`). The answers are read by the native scanner where it takes them (parsing them to Python
    objects was 0.18 CPU-s per 1,000 blocks of the benchmark chain, against 0.05 for their bytes); a call that
    failed, or answers it declines, are read as before, one Python object each."""
    from chainframe.datasets import _native  # deferred: its module loads pyarrow

    calls = [(BLOCK_TRACER, [hex(n), _NO_STEPS]) for n in blocks]
    header_calls = [("eth_getBlockByNumber", [hex(n), False]) for n in blocks]
    if _native.available():
        try:
            traced_bytes = await client.batch_bytes(calls)
        except MethodNotFound:
            return {}
        except RPCError:  # an item failed: read one by one below, its block takes the receipts
            traced_bytes = None
        if traced_bytes is not None:
            try:
                header_bytes = await client.batch_bytes(header_calls)
            except RPCError:  # as the tracer's: read below, where a header that failed sends its block to receipts
                header_bytes = None
            found = _native_tracer_gas(traced_bytes, header_bytes, list(blocks)) if header_bytes is not None else None
            if found is not None:
                return found
    try:
        traced = await client.batch(calls)
    except MethodNotFound:
        return {}
    out: dict[int, list[str]] = {}
    if traced:
        headers = await client.batch(header_calls)
        for n, answer, header in zip(blocks, traced, headers, strict=True):
            used = _checked_gas(answer, header)
            if used is not None:
                out[n] = used
    return out


def _native_tracer_gas(
    traced: Sequence[bytes], headers: Sequence[bytes], blocks: list[int]
) -> dict[int, list[str]] | None:
    """:func:`_checked_gas` of every block, from the answers' bytes; None where the scanner declines them, or the
    tracer's transactions are not the headers' in order (then each block is judged alone, by the Python path)."""
    import numpy as np  # deferred, as numpy is in the module: loaded only by trace_block routes

    from chainframe.datasets import _native  # deferred: its module loads pyarrow's buffers and the scanner

    header_kinds = {"number": ("number", _native.Typed("text")), "gasUsed": ("gasUsed", _native.Typed("text")),
                    "transactions": ("transactions", "hash_list")}  # fmt: skip
    scanned = _native.scan(headers, header_kinds, _native.BATCH)
    tracer_kinds = {
        "hash": ("txHash", "hash"),
        "result": ("result", _native.Object({"gas": ("gas", _native.Typed("number"))})),
    }
    items = _native.scan(traced, tracer_kinds, _native.BATCH_LISTS)
    if scanned is None or items is None or scanned[0] != len(blocks):
        return None
    (_, head), (count, item) = scanned, items
    if any(head[k].null_count for k in head) or item["hash"].null_count or item["result"].field("gas").null_count:
        return None
    numbers = np.frombuffer(head["number"].buffers()[1], dtype=np.uint64)[: len(blocks)]
    if numbers.tolist() != blocks:
        return None
    hashes = head["transactions"]
    offsets = np.frombuffer(hashes.buffers()[1], dtype=np.int32)[: len(blocks) + 1]
    listed = hashes.values
    if (
        len(listed) != count
        or listed.buffers()[1].to_pybytes()[: 32 * count] != item["hash"].buffers()[1].to_pybytes()[: 32 * count]
    ):
        return None
    gas = item["result"].field("gas")
    figures = np.frombuffer(gas.buffers()[1], dtype=np.uint64)[gas.offset : gas.offset + count].tolist()
    totals = np.frombuffer(head["gasUsed"].buffers()[1], dtype=np.uint64)[: len(blocks)].tolist()
    out: dict[int, list[str]] = {}
    for i, n in enumerate(blocks):
        used = _bearing(figures[offsets[i] : offsets[i + 1]], totals[i])
        if used is not None:
            out[n] = used
    return out


def _checked_gas(answer: Any, header: Any) -> list[str] | None:
    """A block's transactions' gas used from the no-step tracer's answer, or None where the header does not bear it
    out (see :func:`_top_gas_used`)."""
    if not isinstance(answer, list) or not isinstance(header, dict):
        return None
    try:
        hashes = [item["txHash"] for item in answer]
        figures = [item["result"]["gas"] for item in answer]
        total = int(header["gasUsed"], 16)
    except (KeyError, TypeError, ValueError):
        return None
    if hashes != header.get("transactions") or not all(type(f) is int and f >= 0 for f in figures):
        return None
    return _bearing(figures, total)


def _bearing(figures: list[int], total: int) -> list[str] | None:
    """The tracer's figures of a block's transactions as each one's gas used, where they add up to the header's
    ``total`` (each transaction's, as geth gives them) or run up to it (the block's so far, as anvil gives them)."""
    if sum(figures) == total:
        return [hex(f) for f in figures]
    steps = [b - a for a, b in zip([0, *figures], figures, strict=False)]
    if figures and figures[-1] == total and all(step > 0 for step in steps):
        return [hex(step) for step in steps]
    return None


Top = tuple[str | None, str | None, str | None]
"""A transaction's top frame in trace_block's answer: its transaction's hash, the gas the frame was given and the gas
it used (None where it has no result: it failed)."""


def _top_frames(answers: Sequence[bytes]) -> dict[int, dict[int, Top]]:
    """Each block's top frames (:data:`Top`) in trace_block batch answers, by transaction position."""
    out: dict[int, dict[int, Top]] = {}
    for body in answers:
        for envelope in json.loads(body):
            for trace in envelope.get("result") or []:
                if trace.get("traceAddress") or trace.get("type") == "reward":
                    continue
                number = trace["blockNumber"]
                block = out.setdefault(number if isinstance(number, int) else int(number, 16), {})
                given, used = (trace.get("action") or {}).get("gas"), (trace.get("result") or {}).get("gasUsed")
                block[trace.get("transactionPosition")] = (trace.get("transactionHash"), given, used)
    return out


def _bounded_gas(tops: Mapping[int, Top], block: Any) -> list[str] | None:
    """A block's transactions' gas used from its full body and its top frames (see :func:`_top_gas_used`), or None
    where they are not each transaction's, in order, or the header's ``gasUsed`` does not bear them out."""
    if not isinstance(block, dict):
        return None
    try:
        txs = block["transactions"]
        total = int(block["gasUsed"], 16)
        figures = []
        for position, tx in enumerate(txs):
            tx_hash, given, used = tops[position]
            if given is None or tx_hash != tx["hash"]:
                return None
            spent = int(given, 16) if used is None else int(used, 16)
            bound = int(tx["gas"], 16) - int(given, 16) + spent
            if "requestsHash" in block:  # Prague's calldata floor: 21,000 + 10 a token, a non-zero byte 4 tokens
                data = bytes.fromhex(tx["input"][2:])
                bound = max(bound, 21_000 + 10 * (4 * len(data) - 3 * data.count(0)))
            figures.append(bound)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    if len(tops) != len(txs) or sum(figures) != total:
        return None
    return [hex(f) for f in figures]


_RAW = ("answers", "header_answers")
"""The document's members that are lists of batch answers as received."""


def _document(found: Mapping[str, Any]) -> bytes:
    """The fetched document's bytes, with the batch answers (:data:`_RAW`) spliced in as received."""
    document = json.dumps({k: v for k, v in found.items() if k not in _RAW}).encode()
    for key in _RAW:
        if key in found:
            document = document[:-1] + b', "%s": [' % key.encode() + b",".join(found[key]) + b"]}"
    return document


def _headers(answer: Mapping[str, Any], numbers: Sequence[int]) -> list[Any]:
    """The blocks' headers in ``numbers``' order (None where there is none), from the header batch answers."""
    if "header_answers" not in answer:
        return list(answer.get("headers") or [None] * len(numbers))
    by_number = {}
    for batch in answer["header_answers"]:
        for envelope in batch:
            header = envelope.get("result")
            if header:
                by_number[int(header["number"], 16)] = header
    return [by_number.get(n) for n in numbers]


def _parity_blocks(answer: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A trace_block document's blocks (``{"block", "traces", "gas_used"}``) from its batch answers, by number."""
    if "answers" not in answer:
        return list(answer["blocks"])
    by_block: dict[int, list[Any]] = {}
    for batch in answer["answers"]:
        for envelope in batch:
            traces = envelope.get("result") or []
            if traces:
                number = traces[0]["blockNumber"]
                by_block[number if isinstance(number, int) else int(number, 16)] = traces
    used = answer.get("gas_used") or [[]] * len(answer["numbers"])
    return [
        {"block": n, "traces": by_block.get(n, []), "gas_used": u} for n, u in zip(answer["numbers"], used, strict=True)
    ]


_GAS_USED_KEY = b'"gasUsed"'
_HEX_VALUE = re.compile(rb'\s*:\s*"(0x[0-9a-fA-F]+)"')
_BLOCK_NUMBER = re.compile(rb'"blockNumber"\s*:\s*"(0x[0-9a-fA-F]+)"')


async def _receipts_gas_used(client: Any, blocks: Sequence[int]) -> dict[int, list[str]]:
    """Each block's receipts' ``gasUsed``, in transaction order, from eth_getBlockReceipts (else the receipts
    dataset's route by transaction)."""
    from chainframe.datasets._receipts import RECEIPTS  # deferred: receipts' modules only where gas comes from them

    method = "eth_getBlockReceipts"
    bodies: list[bytes] | None = None
    if method not in getattr(client, "missing_methods", {}):
        with contextlib.suppress(MethodNotFound):  # remembered by the client: RECEIPTS then goes by transaction
            bodies = list(await client.batch_bytes([(method, [hex(n)]) for n in blocks]))
    if bodies is None:  # by transaction, over each run of consecutive blocks
        bodies = []
        for run in _runs(blocks):
            bodies += await RECEIPTS.fetch(client, run)
    out: dict[int, list[str]] = {}
    for body in bodies:
        out.update(gas_used_of(body))
    return out


def _runs(blocks: Sequence[int]) -> Iterator[BlockRange]:
    """The runs of consecutive numbers in ``blocks`` (ascending), as block ranges."""
    start = None
    for i, n in enumerate(blocks):
        if start is None:
            start = n
        if i + 1 == len(blocks) or blocks[i + 1] != n + 1:
            yield BlockRange(start, n)
            start = None


def gas_used_of(body: bytes) -> dict[int, list[str]]:
    """The receipts' ``gasUsed`` by block number in an eth_getBlockReceipts batch answer (``[{"id", "result":
    [receipts]}]``), read from its bytes: every envelope's span is found by the JSON splitter, then each receipt's
    ``"gasUsed"`` member (no log member has that name; ``cumulativeGasUsed``, ``blobGasUsed`` and ``gasUsedForL1``
    are other names). An envelope whose count of ``"gasUsed"`` is not its count of ``"cumulativeGasUsed"`` (one per
    receipt), or whose value is not a hex string, is parsed whole instead."""
    spans = split_answers(body)
    if spans is None:
        return _receipt_gas(json.loads(body))
    out: dict[int, list[str]] = {}
    for _, start, end in spans:
        figures = _scanned_gas(body, start, end)
        if figures is None:
            out.update(_receipt_gas([json.loads(body[start:end])]))
        elif figures:
            number = _BLOCK_NUMBER.search(body, start, end)
            if number is None:
                out.update(_receipt_gas([json.loads(body[start:end])]))
            else:
                out[int(number.group(1), 16)] = figures
    return out


def _scanned_gas(body: bytes, start: int, end: int) -> list[str] | None:
    figures: list[str] = []
    at = body.find(_GAS_USED_KEY, start, end)
    while at != -1:
        value = _HEX_VALUE.match(body, at + len(_GAS_USED_KEY), end)
        if value is None:
            return None
        figures.append(value.group(1).decode())
        at = body.find(_GAS_USED_KEY, value.end(), end)
    return figures if len(figures) == body.count(b'"cumulativeGasUsed"', start, end) else None


def _receipt_gas(answers: list[Any]) -> dict[int, list[str]]:
    """eth_getBlockReceipts answers (``{"id", "result": [receipts]}``), parsed: each block's receipts' gasUsed."""
    out: dict[int, list[str]] = {}
    for answer in answers:
        listed = answer.get("result") if isinstance(answer, dict) else None
        for receipt in listed or []:
            out.setdefault(int(receipt["blockNumber"], 16), []).append(receipt["gasUsed"])
    return out


async def _by_transaction(client: Any, blocks: BlockRange) -> dict[str, Any]:
    headers = await batch_or_raise(client, [("eth_getBlockByNumber", [hex(n), False]) for n in blocks])
    hashes = [(n, h) for n, block in zip(blocks, headers, strict=True) for h in (block or {}).get("transactions", [])]
    traced = await batch_or_raise(client, [(TX_TRACER, [h, _CALL_TRACER]) for _, h in hashes]) if hashes else []
    by_block: dict[int, list[dict[str, Any]]] = {n: [] for n in blocks}
    for (n, h), frame in zip(hashes, traced, strict=True):
        by_block[n].append({"txHash": h, "result": frame})
    return {"route": TX_TRACER, "blocks": [{"block": n, "traces": t} for n, t in by_block.items()]}


# --- answers to frames (pure) ---


def _revert_reason(output: str | None) -> str | None:
    """An ``Error(string)`` revert's text, as callTracer decodes it."""
    if not output or not output.startswith(_ERROR_SELECTOR) or len(output) < 10 + 128:
        return None
    try:
        data = bytes.fromhex(output[10:])
        length = int.from_bytes(data[32:64], "big")
        return data[64 : 64 + length].decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None


def _parity_frame(trace: Mapping[str, Any]) -> dict[str, Any]:
    """A parity trace as a callTracer frame (without children)."""
    action, result = trace.get("action") or {}, trace.get("result") or {}
    kind = trace.get("type")
    frame: dict[str, Any]
    if kind == "create":
        create2 = action.get("creationMethod") == "create2"
        frame = {"type": "CREATE2" if create2 else "CREATE", "from": action.get("from"), "to": result.get("address"),
                 "value": action.get("value"), "gas": action.get("gas"), "gasUsed": result.get("gasUsed"),
                 "input": action.get("init"), "output": result.get("code")}  # fmt: skip
    elif kind in ("suicide", "selfdestruct"):
        frame = {"type": "SELFDESTRUCT", "from": action.get("address"), "to": action.get("refundAddress"),
                 "value": action.get("balance"), "gas": "0x0", "gasUsed": "0x0", "input": "0x"}  # fmt: skip
    else:
        frame = {"type": str(action.get("callType", "call")).upper(), "from": action.get("from"),
                 "to": action.get("to"), "value": action.get("value"), "gas": action.get("gas"),
                 "gasUsed": result.get("gasUsed"), "input": action.get("input"),
                 "output": result.get("output")}  # fmt: skip
    if frame.get("output") == "0x":
        frame.pop("output")  # callTracer leaves empty output out
    if frame["type"] == "STATICCALL":
        frame.pop("value")  # callTracer sends none: nothing can move
    error = trace.get("error")
    if error:
        frame["error"] = _PARITY_ERRORS.get(error, error)
        frame["revertReason"] = _revert_reason(frame.get("output"))
    return frame


def _parity_trees(
    traces: Sequence[Mapping[str, Any]], used: Sequence[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A block's parity traces as callTracer's ``[{"txHash", "result": tree}]``, and its reward traces; ``used``: its
    receipts' gasUsed, the top frames' (empty where the dataset's columns hold no gas used)."""
    trees: dict[int, dict[str, Any]] = {}
    rewards = []
    for trace in traces:
        if trace.get("type") == "reward":
            rewards.append(trace["action"])
            continue
        position = trace["transactionPosition"]
        frame = _parity_frame(trace)
        path = trace.get("traceAddress") or []
        if not path:
            if position < len(used):
                frame["gasUsed"] = used[position]
            trees[position] = {"txHash": trace.get("transactionHash"), "result": frame}
            continue
        parent = trees[position]["result"]
        for i in path[:-1]:
            parent = parent["calls"][i]
        parent.setdefault("calls", []).append(frame)
    return [trees[p] for p in sorted(trees)], rewards


def vectorized(bodies: Sequence[bytes]) -> Read | None:
    """trace_block documents' frames as columns, with their revert reasons (:mod:`._parity_frames`); None: the
    per-frame path reads them (another route, another shape, or ``CHAINFRAME_NATIVE=0``, which compares the two)."""
    import os

    import numpy as np

    from chainframe.datasets import _parity_frames  # deferred: Polars loads only for trace_block frames

    if os.environ.get("CHAINFRAME_NATIVE", "1") == "0":
        return None
    got = _parity_frames.read(bodies, parity=PARITY, errors=_PARITY_ERRORS)
    if got is None:
        return None
    frames = got.frames
    failed = np.flatnonzero(frames["error"].is_not_null().to_numpy())
    reasons = [_revert_reason(o) for o in frames["output"].gather(failed).to_list()]  # the failed frames only
    column = pl.Series("revertReason", [], dtype=pl.String()).extend_constant(None, frames.height)
    if failed.size:
        column = column.scatter(failed, pl.Series(reasons, dtype=pl.String()))
    got.frames = frames.with_columns(column)
    return got


def decoded(bodies: Sequence[bytes]) -> list[dict[str, Any]]:
    """The fetched documents, parsed (once per transform)."""
    return [json.loads(body) for body in bodies]


def block_extras(answers: Sequence[Mapping[str, Any]]) -> Iterator[tuple[int, list[dict[str, Any]], Any]]:
    """Each block's number, its parity reward traces' actions (trace_block's route only) and its header (or None)."""
    for answer in answers:
        blocks = _parity_blocks(answer) if answer["route"] == PARITY else answer["blocks"]
        headers = _headers(answer, [b["block"] for b in blocks])
        for block, header in zip(blocks, headers, strict=True):
            rewards = (
                [t["action"] for t in block["traces"] if t.get("type") == "reward"] if answer["route"] == PARITY else []
            )
            yield block["block"], rewards, header


def frames(answers: Sequence[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    """Every frame of every transaction, in block, transaction and call order, with its place: ``block_number``,
    ``transaction_index``, ``transaction_hash``, ``trace_address``, ``depth``, ``subcalls`` and ``reverted`` (it or a
    frame above it failed, so nothing it did stands)."""

    def walk(frame: Mapping[str, Any], path: list[int], undone: bool) -> Iterator[dict[str, Any]]:
        children = frame.get("calls") or []
        undone = undone or bool(frame.get("error"))
        yield {**frame, "trace_address": path, "depth": len(path), "subcalls": len(children), "reverted": undone}
        for i, child in enumerate(children):
            yield from walk(child, [*path, i], undone)

    for answer in answers:
        for block in _parity_blocks(answer) if answer["route"] == PARITY else answer["blocks"]:
            number = block["block"]
            if answer["route"] == PARITY:
                flat = _parity_flat(number, block["traces"], block.get("gas_used", ()))
                if flat is not None:
                    yield from flat
                    continue
                trees, _ = _parity_trees(block["traces"], block.get("gas_used", ()))
            else:
                trees = block["traces"]
            for index, item in enumerate(trees):
                where = {"block_number": number, "transaction_index": index, "transaction_hash": item.get("txHash")}
                for frame in walk(item.get("result") or {}, [], False):
                    yield {**frame, **where}


def _parity_flat(number: int, traces: Sequence[Mapping[str, Any]], used: Sequence[str]) -> list[dict[str, Any]] | None:
    """A block's frames straight from trace_block's list, which nodes send in transaction order and each
    transaction's calls in preorder (a frame, then its calls in order), as callTracer's tree walked gives them: no
    tree is built. None where the list is not in that order (then the tree is built from the addresses)."""
    out: list[dict[str, Any]] = []
    above: list[dict[str, Any]] = []  # the frames open at each depth: the current one's ancestors, then itself
    index = -1
    for trace in traces:
        if trace.get("type") == "reward":
            continue
        path = trace.get("traceAddress") or []
        depth = len(path)
        frame = _parity_frame(trace)
        if not depth:
            index += 1
            if trace.get("transactionPosition") != index:
                return None
            if index < len(used):
                frame["gasUsed"] = used[index]
            failed = bool(frame.get("error"))
        else:
            parent = above[depth - 1] if depth <= len(above) else None
            if (
                parent is None
                or trace.get("transactionPosition") != index
                or path[:-1] != parent["trace_address"]
                or path[-1] != parent["subcalls"]
            ):
                return None
            parent["subcalls"] += 1
            failed = bool(frame.get("error")) or parent["reverted"]
        frame.update(trace_address=path, depth=depth, subcalls=0, reverted=failed, block_number=number,
                     transaction_index=index, transaction_hash=trace.get("transactionHash"))  # fmt: skip
        del above[depth:]
        above.append(frame)
        out.append(frame)
    return out


class _BlockTraced(Dataset):
    method = PARITY
    block_params = ()  # trace_block(N): a block's traces, one call, which traces, native_transfers and contracts share
    routes: ClassVar[tuple[tuple[str, ...], ...]] = ((PARITY,), (BLOCK_TRACER,), ("eth_getBlockByNumber", TX_TRACER))
    fetched_with = (
        "trace_block per block (parity frames normalized to callTracer's); where the node lacks it, "
        "debug_traceBlockByNumber with callTracer; else debug_traceTransaction with callTracer per transaction"
    )
    chunk_size = 100
    sort: tuple[str, ...] = ("block_number", "transaction_index", "trace_address")
    top_gas_used: ClassVar[bool] = False
    """Its columns hold the top frame's gas used, which trace_block does not give as callTracer does (the receipt's
    figure): its first route then reads the blocks' receipts too. A dataset must not read what its columns do not
    need: on a log-heavy chain the receipts cost the node and us many times what the traces do."""

    def paced_reads(self, pacing: Pacing | None) -> frozenset[tuple[str, tuple[Any, ...]]]:
        # By full blocks, traces reads what transactions read: one run with both shares them (engine._shared).
        if self.top_gas_used and gas_route(pacing) == "blocks":
            return frozenset({("eth_getBlockByNumber", (True,))})
        return frozenset()

    def other_calls(self, blocks: int, filters: Mapping[str, Any], pacing: Pacing | None = None) -> dict[str, int]:
        # What _top_gas_used reads for the top frames' gas by the run's pacing (gas_route); the receipts of blocks
        # whose figures the header does not bear out, or of a node without the tracer, are not known to --dry.
        if not self.top_gas_used:
            return {}
        return dict.fromkeys(_GAS_CALLS[gas_route(pacing)], blocks)

    async def sampled_calls(
        self, client: Any, chunks: Sequence[BlockRange], pacing: Pacing | None = None
    ) -> dict[str, int] | None:
        # By full blocks, how many take their receipts too is the chain's (a block with a refund does): a few blocks
        # spread over the range are read as a run reads them, and the run's choice per piece is followed.
        if not self.top_gas_used or gas_route(pacing) != "blocks":
            return None
        blocks = sum(map(len, chunks))
        numbers = spread_blocks(chunks, DRY_SAMPLE)
        answers = list(await client.batch_bytes([(PARITY, [hex(n)]) for n in numbers]))
        _, failed, tried = await _full_blocks_gas(client, numbers, _top_frames(answers))
        if full_blocks_pay(failed, tried, pacing):
            return {"eth_getBlockByNumber": blocks, "eth_getBlockReceipts": round(blocks * failed / max(tried, 1))}
        sampled = sum(min(FULL_BLOCKS_SAMPLE, max(1, len(c) // 10)) for c in chunks)
        return {"eth_getBlockByNumber": sampled, "eth_getBlockReceipts": blocks}

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        return await fetch_traces(client, blocks, dataset=self.name, top_gas_used=self.top_gas_used)


class Traces(DecodesCalls, _BlockTraced):
    name = "traces"
    doc = "Every call frame of every transaction of each block (callTracer's frames), with its trace_address."
    columns = (
        "chain_id", "block_number", "transaction_index", "transaction_hash", "trace_address", "depth", "call_type",
        "from_address", "to_address", "value", "gas", "gas_used", "input", "output", "error", "revert_reason",
        "subcalls",
    )  # fmt: skip
    unprovable = dict.fromkeys(columns, TRACED)
    routes = ((PARITY, "eth_getBlockReceipts"), *_BlockTraced.routes[1:])
    fetched_with = (
        "trace_block per block (parity frames normalized to callTracer's; the top frames' gas used from "
        "debug_traceBlockByNumber's default tracer with no steps, or where a provider's credits price them lower "
        "from the full blocks' gas limits, either checked against the headers' gasUsed, else from the blocks' "
        "receipts); where the node lacks it, debug_traceBlockByNumber with callTracer; else debug_traceTransaction "
        "with callTracer per transaction"
    )
    top_gas_used = True
    inputs = (FUNCTION,)
    decodes_outputs = "one function"  # a frame's output is what the call returned

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        from chainframe.datasets import _parity_native  # deferred: numpy loads only for trace_block frames

        native = _parity_native.read(bodies, parity=PARITY, errors=_PARITY_ERRORS, u256=u256)
        if native is not None:
            every = native.frames
            arrays = {c: every[_FRAME.get(c, c)] for c in self.columns if _FRAME.get(c, c) in every}
            return build_arrow(arrays, self.columns, len(every["top"]), chain_id=chain_id, u256=u256)
        fast = vectorized(bodies)
        if fast is not None:
            return _frame_table(fast.frames, _FRAME, self.columns, chain_id, u256)
        return _table(list(frames(decoded(bodies))), _FRAME, self.columns, chain_id, u256)


class NativeTransfers(_BlockTraced):
    name = "native_transfers"
    doc = (
        "Every movement of ether: a transaction's own value ('transaction'), internal calls ('call') and creations "
        "('create') with value that did not revert, self-destructs' balances ('selfdestruct'), miner rewards where "
        "the trace route reports them ('block_reward', 'uncle_reward': trace_block, before the merge) and validator "
        "withdrawals ('withdrawal', in wei)."
    )
    columns = (
        "chain_id", "block_number", "transaction_index", "transaction_hash", "trace_address", "transfer_type",
        "withdrawal_index", "from_address", "to_address", "value",
    )  # fmt: skip
    sort = ("block_number", "transaction_index", "trace_address", "withdrawal_index")
    fetched_with = _BlockTraced.fetched_with + "; the blocks' headers for their withdrawals (eth_getBlockByNumber)"
    proof = Proof.NATIVE_TRANSFERS
    unprovable = {
        **dict.fromkeys(
            ("transaction_index", "transaction_hash", "trace_address", "from_address", "to_address", "value"),
            "internal movements ('call', 'create', 'selfdestruct') come from execution traces, which no header field "
            "commits to; 'transaction' rows are proven against the transactions root, the senders' signatures and "
            "the receipts' status, 'withdrawal' rows against the withdrawals root",
        ),
        "transfer_type": "whether a movement is internal is read from execution traces: only the 'transaction' and "
        "'withdrawal' rows are proven (each against its root)",
        "chain_id": "the chain the node says it serves (eth_chainId); no header field holds it",
    }

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        return await fetch_traces(client, blocks, dataset=self.name, headers=True, top_gas_used=self.top_gas_used)

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        from chainframe.datasets import _parity_native  # deferred: numpy loads only for trace_block frames

        native = _parity_native.read(bodies, parity=PARITY, errors=_PARITY_ERRORS, u256=u256)
        if native is not None:
            moved = _parity_native.transfers(native, u256)
            return build_arrow(moved, self.columns, len(moved["value"]), chain_id=chain_id, u256=u256)
        sources = {k: v for k, v in _FRAME.items() if k in ("from_address", "to_address", "value")}
        fast = vectorized(bodies)
        if fast is not None:
            return self._vectorized(fast, sources, chain_id, u256)
        answers = decoded(bodies)
        rows = [_movement(f) for f in frames(answers) if _moves(f)]
        for number, rewards, header in block_extras(answers):
            for reward in rewards:
                kind = "uncle_reward" if reward.get("rewardType") == "uncle" else "block_reward"
                rows.append({"block_number": number, "transfer_type": kind, "to": reward.get("author"),
                             "value": reward.get("value")})  # fmt: skip
            for w in (header or {}).get("withdrawals") or []:
                rows.append({"block_number": number, "transfer_type": "withdrawal",
                             "withdrawal_index": int(w["index"], 16), "to": w["address"],
                             "value": str(int(w["amount"], 16) * 10**9)})  # fmt: skip
        return _table(rows, sources, self.columns, chain_id, u256)

    def _vectorized(self, fast: Read, sources: Mapping[str, str], chain_id: int, u256: U256) -> pa.Table:
        """As the per-frame path: the movements in frame order, then each block's rewards and withdrawals."""
        moved = pl.col("value").str.strip_prefix("0x").str.strip_chars_start("0").str.len_bytes() > 0
        moves = fast.frames.filter(
            ~pl.col("reverted") & ~pl.col("type").is_in(list(_NO_VALUE)) & moved.fill_null(False)
        )
        internal = pl.col("type").replace_strict(_INTERNAL, default="call", return_dtype=pl.String())
        moves = moves.with_columns(
            pl.when(pl.col("top")).then(pl.lit("transaction")).otherwise(internal).alias("transfer_type")
        )
        table = _frame_table(moves, sources, self.columns, chain_id, u256)
        extras = pl.concat(
            [
                fast.rewards.select("block_number", pl.lit(0).alias("k"), pl.struct(pl.all()).alias("x")),
                fast.withdrawals.select("block_number", pl.lit(1).alias("k"), pl.struct(pl.all()).alias("x")),
            ],
            how="diagonal_relaxed",
        )
        if not extras.height:
            return table
        rows = []
        ordered = extras.sort("block_number", "k", maintain_order=True)
        for kind, x in zip(ordered["k"], ordered["x"], strict=True):
            if kind == 0:
                reward = "uncle_reward" if x["rewardType"] == "uncle" else "block_reward"
                rows.append({"block_number": x["block_number"], "transfer_type": reward, "to": x["author"],
                             "value": x["value"]})  # fmt: skip
            else:
                rows.append({"block_number": x["block_number"], "transfer_type": "withdrawal",
                             "withdrawal_index": int(x["index"], 16), "to": x["address"],
                             "value": str(int(x["amount"], 16) * 10**9)})  # fmt: skip
        return pa.concat_tables([table, _table(rows, sources, self.columns, chain_id, u256)])


def _moves(frame: Mapping[str, Any]) -> bool:
    return not frame["reverted"] and frame.get("type") not in _NO_VALUE and int(frame.get("value") or "0x0", 16) > 0


_INTERNAL = {"SELFDESTRUCT": "selfdestruct", "CREATE": "create", "CREATE2": "create"}


def _movement(frame: dict[str, Any]) -> dict[str, Any]:
    internal = _INTERNAL.get(str(frame.get("type")), "call")
    return {**frame, "transfer_type": internal if frame["trace_address"] else "transaction"}


class Contracts(_BlockTraced):
    name = "contracts"
    doc = (
        "Every contract created, by a transaction or by a contract, that was not undone by a revert: its address, "
        "the transaction's sender (deployer), the creating account (factory: a contract, or the sender for a "
        "transaction's own creation), the init code's hash and the deployed code's hash."
    )
    columns = (
        "chain_id", "block_number", "transaction_index", "transaction_hash", "trace_address", "call_type",
        "contract_address", "deployer", "factory", "value", "init_code_hash", "code_hash",
    )  # fmt: skip
    unprovable = dict.fromkeys(
        columns, "a creation seen in execution traces, asked of the node: no header field commits to it"
    )

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        import numpy as np

        from chainframe._keccak import keccak256  # deferred: the keccak extension loads when contracts are hashed
        from chainframe.datasets import _parity_native  # deferred: numpy loads only for trace_block frames

        def digest(hex_data: str | None) -> str:
            return "0x" + keccak256(bytes.fromhex((hex_data or "0x")[2:])).hex()

        native = _parity_native.read(bodies, parity=PARITY, errors=_PARITY_ERRORS, u256=u256)
        if native is not None:
            created = _parity_native.creations(native.frames)
            return build_arrow(created, self.columns, len(created["factory"]), chain_id=chain_id, u256=u256)
        fast = vectorized(bodies)
        if fast is not None:
            every = fast.frames
            tops = np.maximum.accumulate(np.where(every["top"].to_numpy(), np.arange(every.height), 0))
            made = every.with_columns(every["from"].gather(tops).alias("deployer")).filter(
                pl.col("type").is_in(["CREATE", "CREATE2"]) & ~pl.col("reverted")
            )
            made = made.with_columns(
                pl.col("from").alias("factory"),
                pl.col("to").alias("contract_address"),
                pl.Series("init_code_hash", [digest(x) for x in made["input"]], dtype=pl.String()),  # per creation
                pl.Series("code_hash", [digest(x) for x in made["output"]], dtype=pl.String()),
            )
            return _frame_table(made, {"call_type": "type", "value": "value"}, self.columns, chain_id, u256)
        rows = []
        deployer = None
        for frame in frames(decoded(bodies)):
            if not frame["trace_address"]:
                deployer = frame.get("from")
            if frame.get("type") in ("CREATE", "CREATE2") and not frame["reverted"]:
                rows.append({**frame, "deployer": deployer, "factory": frame.get("from"),
                             "contract_address": frame.get("to"), "init_code_hash": digest(frame.get("input")),
                             "code_hash": digest(frame.get("output"))})  # fmt: skip
        sources = {"call_type": "type", "value": "value"}
        return _table(rows, sources, self.columns, chain_id, u256)


TRACES = Traces()
NATIVE_TRANSFERS = NativeTransfers()
CONTRACTS = Contracts()
