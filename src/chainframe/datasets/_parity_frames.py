"""trace_block documents to callTracer's frames as columns, with no Python per frame.

The trace family's transforms read their documents (:mod:`chainframe.datasets._block_traces`) frame by frame: parsed
with ``json``, each parity trace made a callTracer dict, then a list per column. On the benchmark chain's 25,030
frames that is 0.5 of the transform's 1.0 CPU-s before any column is typed. Here Polars reads each document whole
against one schema, the frames' values are picked with expressions, and their places in the call tree (depth,
subcalls, reverted) come from the trace addresses' Arrow buffers (:mod:`chainframe.datasets._trace_tree`). Where the
native scanner is built, :mod:`chainframe.datasets._parity_native` reads the same documents without Polars first.

It takes only what the per-frame path gives the same frames for: a document of trace_block's route whose every
block lists its transactions' frames in preorder (:func:`chainframe.datasets._block_traces._parity_flat`'s check,
made on whole arrays); for anything else (another route, a value of another JSON type than the schema's, a block
out of that order) it answers None and the caller takes the per-frame path.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from chainframe.datasets._trace_tree import places

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl

_S = pl.String()
_ACTION = pl.Struct(
    {key: _S for key in ("from", "to", "callType", "gas", "input", "value", "init", "address", "refundAddress",
                          "balance", "creationMethod", "author", "rewardType")}
)  # fmt: skip
_RESULT = pl.Struct({key: _S for key in ("gasUsed", "output", "address", "code")})
_TRACE = pl.Struct(
    {"action": _ACTION, "blockNumber": pl.Int64(), "result": _RESULT, "error": _S, "traceAddress": pl.List(pl.Int64()),
     "transactionHash": _S, "transactionPosition": pl.Int64(), "type": _S}
)  # fmt: skip
_WITHDRAWAL = pl.Struct({"index": _S, "address": _S, "amount": _S})
_DOCUMENT = {
    "route": _S,
    "numbers": pl.List(pl.Int64()),
    "gas_used": pl.List(pl.List(_S)),
    "answers": pl.List(pl.List(pl.Struct({"result": pl.List(_TRACE)}))),
    "header_answers": pl.List(pl.List(pl.Struct({"result": pl.Struct({"number": _S, "withdrawals":
                                                                        pl.List(_WITHDRAWAL)})}))),
}  # fmt: skip


class Read:
    """A piece's documents read by Polars: its frames (callTracer's keys, with their places), its parity reward
    traces and its headers' withdrawals."""

    def __init__(self, frames: pl.DataFrame, rewards: pl.DataFrame, withdrawals: pl.DataFrame) -> None:
        self.frames = frames
        self.rewards = rewards
        """``block_number``, ``author``, ``value``, ``rewardType``: in block order."""
        self.withdrawals = withdrawals
        """``block_number`` (of the header), ``index``, ``address``, ``amount``: in block order."""


def read(bodies: Sequence[bytes], *, parity: str, errors: Mapping[str, str]) -> Read | None:
    """The documents' frames, or None where the per-frame path must read them (see the module's docstring).
    ``parity``: the route's name in a document; ``errors``: parity's error texts as callTracer writes them."""
    traces, numbers, used, withdrawals = [], [], [], []
    for body in bodies:
        try:
            doc = pl.read_json(io.BytesIO(body), schema=_DOCUMENT)
        except pl.exceptions.PolarsError:
            return None
        if doc.height != 1 or doc["route"][0] != parity or doc["answers"][0] is None or doc["numbers"][0] is None:
            return None
        asked = doc["numbers"][0]
        gas = doc["gas_used"][0]
        if gas is not None and len(gas) != len(asked):
            return None
        numbers.append(asked)
        used.append(gas if gas is not None else pl.Series([[]] * len(asked), dtype=pl.List(_S)))
        traces.append(
            doc.select(pl.col("answers").explode().explode().struct.field("result").explode().alias("t"))
            .drop_nulls("t")
            .unnest("t")
        )
        if doc["header_answers"][0] is not None:
            withdrawals.append(
                doc.select(pl.col("header_answers").explode().explode().struct.field("result").alias("h"))
                .drop_nulls("h")
                .unnest("h")
            )
    asked = pl.concat(numbers)
    if asked.n_unique() != len(asked):
        return None
    all_traces = pl.concat(traces).with_row_index("seq")
    # Blocks in the asked order (ascending, as fetched), each block's traces in the node's order. A trace of a block
    # not asked, or of none, is the per-frame path's to judge (the join would drop it).
    order = pl.DataFrame({"blockNumber": asked}).with_row_index("block_seq")
    every = all_traces.height
    all_traces = all_traces.join(order, on="blockNumber", how="inner").sort(["block_seq", "seq"])
    if all_traces.height != every:
        return None
    is_reward = pl.col("type").eq_missing("reward")
    rewards = all_traces.filter(is_reward).select(
        pl.col("blockNumber").alias("block_number"),
        *(pl.col("action").struct.field(k) for k in ("author", "value", "rewardType")),
    )
    frames = _frames(all_traces.filter(~is_reward), pl.DataFrame({"blockNumber": asked, "g": pl.concat(used)}),
                     errors)  # fmt: skip
    if frames is None:
        return None
    taken = pl.DataFrame(schema={"block_number": pl.Int64(), "index": _S, "address": _S, "amount": _S})
    if withdrawals:
        headers = pl.concat(withdrawals)
        block = pl.col("number").str.strip_prefix("0x").str.to_integer(base=16, strict=False)
        headers = headers.with_columns(block.alias("block_number")).join(
            order.rename({"blockNumber": "block_number"}), on="block_number", how="inner"
        )
        if headers["block_number"].n_unique() != headers.height:
            return None
        taken = (
            headers.sort("block_seq")
            .select("block_number", pl.col("withdrawals").alias("w"))
            .explode("w")
            .drop_nulls("w")
            .unnest("w")
        )
    return Read(frames, rewards, taken)


def _frames(traces: pl.DataFrame, gas: pl.DataFrame, errors: Mapping[str, str]) -> pl.DataFrame | None:
    n = traces.height
    if traces["transactionPosition"].null_count() or traces["blockNumber"].null_count():
        return None
    paths = traces["traceAddress"].fill_null(pl.lit([], dtype=pl.List(pl.Int64())))
    arrow = paths.to_arrow()
    if isinstance(arrow, pa.ChunkedArray):
        arrow = arrow.combine_chunks()
    arrow = pa.concat_arrays([arrow]) if arrow.offset else arrow  # offsets from 0
    items = arrow.values
    if items.null_count:
        return None
    # From the buffers: pyarrow's to_numpy imports pandas (0.2 s). Polars' lists are large lists: int64 offsets.
    wide = pa.types.is_large_list(arrow.type)
    offsets = np.frombuffer(arrow.buffers()[1], dtype=np.int64 if wide else np.int32)[: n + 1].astype(np.int64)
    values = np.frombuffer(items.buffers()[1], dtype=np.int64)[items.offset : items.offset + len(items)]
    error_text = traces["error"]
    failed = (error_text.is_not_null() & (error_text != "")).to_numpy()
    found = places(offsets, values, traces["blockNumber"].to_numpy(), traces["transactionPosition"].to_numpy(), failed)
    if found is None:
        return None
    index, depth, subcalls, reverted, top = found.index, found.depth, found.subcalls, found.reverted, found.top

    tx_gas = (
        gas.with_columns(pl.int_ranges(pl.col("g").list.len()).alias("transaction_index"))
        .explode("g", "transaction_index")
        .drop_nulls("g")
        .select(pl.col("blockNumber"), pl.col("transaction_index").cast(pl.Int64()), pl.col("g"))
    )
    action, result = pl.col("action").struct, pl.col("result").struct
    kind = pl.col("type")
    create = kind.eq_missing("create")
    gone = kind.is_in(["suicide", "selfdestruct"]).fill_null(False)

    def by_kind(on_create: pl.Expr, on_gone: pl.Expr, on_call: pl.Expr) -> pl.Expr:
        return pl.when(create).then(on_create).when(gone).then(on_gone).otherwise(on_call)

    call_type = by_kind(
        pl.when(action.field("creationMethod").eq_missing("create2"))
        .then(pl.lit("CREATE2"))
        .otherwise(pl.lit("CREATE")),
        pl.lit("SELFDESTRUCT"),
        action.field("callType").fill_null("call").str.to_uppercase(),
    )
    output = by_kind(result.field("code"), pl.lit(None, dtype=_S), result.field("output"))
    frame = traces.select(
        pl.col("blockNumber").alias("block_number"),
        pl.Series("transaction_index", index, dtype=pl.Int64()),
        pl.col("transactionHash").alias("transaction_hash"),
        call_type.alias("type"),
        by_kind(action.field("from"), action.field("address"), action.field("from")).alias("from"),
        by_kind(result.field("address"), action.field("refundAddress"), action.field("to")).alias("to"),
        by_kind(action.field("value"), action.field("balance"), action.field("value")).alias("value"),
        by_kind(action.field("gas"), pl.lit("0x0"), action.field("gas")).alias("gas"),
        by_kind(result.field("gasUsed"), pl.lit("0x0"), result.field("gasUsed")).alias("gasUsed"),
        by_kind(action.field("init"), pl.lit("0x"), action.field("input")).alias("input"),
        pl.when(output != "0x").then(output).alias("output"),
        pl.when(pl.Series(failed)).then(pl.col("error").replace(dict(errors))).alias("error"),
    )
    frame = frame.with_columns(
        pl.when(pl.col("type") != "STATICCALL").then(pl.col("value")).alias("value"),  # callTracer sends none
        pl.Series("trace_address", paths, dtype=pl.List(pl.UInt64())),
        pl.Series("depth", depth, dtype=pl.UInt64()),
        pl.Series("subcalls", subcalls, dtype=pl.UInt64()),
        pl.Series("reverted", reverted, dtype=pl.Boolean()),
        pl.Series("top", top, dtype=pl.Boolean()),
    )
    # The top frames' gas used from the document's figures (the receipts'), where it has them.
    frame = frame.join(
        tx_gas.rename({"blockNumber": "block_number"}), on=["block_number", "transaction_index"], how="left",
        maintain_order="left",
    )  # fmt: skip
    return frame.with_columns(
        pl.when(pl.col("top") & pl.col("g").is_not_null())
        .then(pl.col("g"))
        .otherwise(pl.col("gasUsed"))
        .alias("gasUsed")
    ).drop("g")
