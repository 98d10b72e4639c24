"""Call traces (debug_traceCall): callTracer frames flattened with their place in the tree, and prestateTracer
accounts and storage (pre, and post in diff mode).

Traces are few and deeply nested, so frames are flattened in Python before the columns are converted; the
high-volume datasets never take this path.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from chainframe import _kernels as pc
from chainframe.datasets._columns import COLUMNS, U256
from chainframe.datasets._context import fetch_with_context
from chainframe.datasets._convert import convert_frame
from chainframe.datasets._dataset import BlockRange, Dataset, build_arrow
from chainframe.datasets._inputs import CALLS, DIFF_MODE, ONLY_TOP_CALL
from chainframe.rpc import params

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl

_FRAME = {
    "call_type": "type",
    "from_address": "from",
    "to_address": "to",
    "value": "value",
    "gas": "gas",
    "gas_used": "gasUsed",
    "input": "input",
    "output": "output",
    "error": "error",
    "revert_reason": "revertReason",
}


async def _fetch_traces(client: Any, blocks: BlockRange, options: dict[str, Any], filters: Mapping[str, Any]) -> bytes:
    calls = params.call_list(filters.get("calls"))
    requests = [("debug_traceCall", [c, hex(n), options]) for n in blocks for c in calls]
    contexts = [{"block": n, "call": i} for n in blocks for i in range(len(calls))]
    return await fetch_with_context(client, requests, contexts)


def _dtype(kind: str, values: list[Any]) -> Any:
    """Polars' dtype for values that are already the column's (ints, texts, lists of ints, booleans); None: they
    are JSON text to convert."""
    if kind in ("u64", "u8") and all(isinstance(v, int) or v is None for v in values):
        return pl.UInt64 if kind == "u64" else pl.UInt8
    return {"string": pl.String, "u64_list": pl.List(pl.UInt64), "bool": pl.Boolean}.get(kind)


def _table(
    rows: list[dict[str, Any]], sources: Mapping[str, str], columns: tuple[str, ...], chain_id: int, u256: U256
) -> pa.Table:
    """Rows of JSON text values -> typed table, through the same converters as every dataset: the columns already
    typed (ints, texts, lists of ints, booleans) as they are, the JSON text ones in one frame converted by one
    Polars select (:func:`convert_frame`), not a query per column (0.7-1.0 of 1.2 CPU-s for the benchmark chain's
    25,030 frames)."""
    arrays: dict[str, pa.Array] = {}
    texts: dict[str, list[str | None]] = {}
    kinds: dict[str, tuple[str, Any]] = {}
    for column in columns:
        key = sources.get(column, column)
        values = [r.get(key) for r in rows]
        kind = COLUMNS[column].kind_for(u256)
        # Through Polars, not pa.array: pyarrow imports pandas (0.24 s) to make an array of a Python list.
        dtype = _dtype(kind, values)
        if dtype is not None:
            arrays[column] = pc.cast(
                pl.Series(column, values, dtype=dtype).to_arrow(), COLUMNS[column].arrow_type_for(u256)
            )
        elif any(v is not None for v in values):
            texts[column] = [v if v is None else str(v) for v in values]
            kinds[column] = (column, kind)
    if texts:
        frame = pl.DataFrame(texts, schema=dict.fromkeys(texts, pl.String))
        arrays.update(convert_frame(frame, kinds))
    return build_arrow(arrays, columns, len(rows), chain_id=chain_id, u256=u256)


def _frame_table(
    frame: pl.DataFrame, sources: Mapping[str, str], columns: tuple[str, ...], chain_id: int, u256: U256
) -> pa.Table:
    """A frame of JSON text values (and columns already typed: ints, lists of ints, booleans) -> typed table, the
    text ones through one Polars select (:func:`convert_frame`)."""
    arrays: dict[str, pa.Array] = {}
    kinds: dict[str, tuple[str, Any]] = {}
    for column in columns:
        key = sources.get(column, column)
        if key not in frame.columns:
            continue
        kind = COLUMNS[column].kind_for(u256)
        if (frame.schema[key] == pl.String() and kind != "string") or kind == "string":
            kinds[column] = (key, kind)
        else:
            arrays[column] = pc.cast(frame[key].to_arrow(), COLUMNS[column].arrow_type_for(u256))
    if kinds:
        arrays.update(convert_frame(frame, kinds))
    return build_arrow(arrays, columns, frame.height, chain_id=chain_id, u256=u256)


TRACES = "a replayed call's trace, asked of the node: no header field commits to execution traces"


class _Traced(Dataset):
    """A call replayed with debug_traceCall at each block, for each call asked."""

    method = "debug_traceCall"
    reads_state = True
    chunk_size = 100
    needs = frozenset({"calls"})
    per_block = "calls"


class CallTraces(_Traced):
    name = "call_traces"
    doc = "debug_traceCall with callTracer: one row per call frame, with its trace_address in the call tree."
    columns = (
        "chain_id", "block_number", "call_index", "trace_address", "depth", "call_type", "from_address", "to_address",
        "value", "gas", "gas_used", "input", "output", "error", "revert_reason", "subcalls",
    )  # fmt: skip
    unprovable = dict.fromkeys(columns, TRACES)
    sort = ("block_number", "call_index", "trace_address")
    fetched_with = "debug_traceCall with callTracer, per block and call"
    routes = (("debug_traceCall callTracer",),)
    inputs = (CALLS, ONLY_TOP_CALL)

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        config = {"onlyTopCall": bool(filters.get("only_top_call", False))}
        return [await _fetch_traces(client, blocks, {"tracer": "callTracer", "tracerConfig": config}, filters)]

    @staticmethod
    def _frames(frame: Mapping[str, Any], path: list[int]) -> Iterator[dict[str, Any]]:
        children = frame.get("calls") or []
        yield {**frame, "trace_address": path, "depth": len(path), "subcalls": len(children)}
        for i, child in enumerate(children):
            yield from CallTraces._frames(child, [*path, i])

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        rows = [
            {**frame, "block_number": item["block"], "call_index": item["call"]}
            for body in bodies
            for item in json.loads(body)
            for frame in self._frames(item["result"], [])
        ]
        return _table(rows, _FRAME, self.columns, chain_id, u256)


class _Prestate(_Traced):
    sort = ("block_number", "call_index", "state", "address")
    fetched_with = "debug_traceCall with prestateTracer, per block and call"
    routes = (("debug_traceCall prestateTracer",),)
    inputs = (CALLS, DIFF_MODE)

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        config = {"diffMode": bool(filters.get("diff_mode", False))}
        return [await _fetch_traces(client, blocks, {"tracer": "prestateTracer", "tracerConfig": config}, filters)]

    @staticmethod
    def _states(result: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
        if set(result) == {"pre", "post"} and all(isinstance(v, dict) for v in result.values()):
            yield "pre", result["pre"]
            yield "post", result["post"]
        else:
            yield "pre", result

    def _rows(self, bodies: Sequence[bytes]) -> Iterator[tuple[dict[str, Any], str, str, Mapping[str, Any]]]:
        for body in bodies:
            for item in json.loads(body):
                for state, accounts in self._states(item["result"]):
                    for address, account in accounts.items():
                        yield {"block_number": item["block"], "call_index": item["call"]}, state, address, account


class PrestateAccounts(_Prestate):
    name = "prestate_accounts"
    doc = "debug_traceCall with prestateTracer: the accounts a call touches, before it (and after, in diff mode)."
    columns = ("chain_id", "block_number", "call_index", "state", "address", "balance", "nonce", "code", "code_hash")
    unprovable = dict.fromkeys(columns, TRACES)

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        rows = [
            {**where, "state": state, "address": address, **account}
            for where, state, address, account in self._rows(bodies)
        ]
        sources = {"code_hash": "codeHash"}
        return _table(rows, sources, self.columns, chain_id, u256)


class PrestateStorage(_Prestate):
    name = "prestate_storage"
    doc = "debug_traceCall with prestateTracer: the storage slots a call touches, with their values."
    columns = ("chain_id", "block_number", "call_index", "state", "address", "storage_slot", "storage_value")
    unprovable = dict.fromkeys(columns, TRACES)

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        rows = [
            {**where, "state": state, "address": address, "storage_slot": slot, "storage_value": value}
            for where, state, address, account in self._rows(bodies)
            for slot, value in (account.get("storage") or {}).items()
        ]
        return _table(rows, {}, self.columns, chain_id, u256)


CALL_TRACES = CallTraces()
PRESTATE_ACCOUNTS = PrestateAccounts()
PRESTATE_STORAGE = PrestateStorage()
