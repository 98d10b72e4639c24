"""eth_getLogs over a chunk, split until every request fits the provider's limits.

On a limit error (too many results, too slow, range too wide, in any provider's wording: see
:mod:`chainframe.rpc._errors`), the range is split at the provider's hinted end when it gives a usable one, else
halved. A single block that still exceeds the limit is read from ``eth_getBlockReceipts`` and filtered locally. A
rate limit is not a split: the client waits it out. The span that worked is remembered for the next chunks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import polars as pl
import pyarrow as pa

from chainframe.datasets import LOGS, U256, BlockRange
from chainframe.rpc import LimitExceeded
from chainframe.rpc import _params as params

MAX_PIECES = 100_000  # a provider that refuses even after this many splits is refusing everything


@dataclass
class LogAnswers:
    """What a logs chunk was read from: eth_getLogs answers, and receipts of blocks too big for eth_getLogs."""

    logs: list[bytes] = field(default_factory=list)
    receipts: list[bytes] = field(default_factory=list)


@dataclass
class SplitState:
    """Shared by the chunks of a run: what was split, and the widest span that has been seen to fit."""

    splits: int = 0
    receipt_fallbacks: int = 0
    requests: int = 0
    span: int | None = None

    def learn(self, span: int) -> None:
        self.span = span if self.span is None else min(self.span, span)


def log_filter(blocks: BlockRange, filters: Mapping[str, Any]) -> dict[str, Any]:
    return params.log_filter(
        from_block=blocks.start, to_block=blocks.end, address_=filters.get("address"), topics=filters.get("topics")
    )


async def fetch_logs(client: Any, blocks: BlockRange, filters: Mapping[str, Any], state: SplitState) -> LogAnswers:
    answers = LogAnswers()
    pieces = 0

    async def get(piece: BlockRange) -> None:
        nonlocal pieces
        pieces += 1
        if pieces > MAX_PIECES:
            raise LimitExceeded(f"still over the limit after {MAX_PIECES} splits", reason="results")
        state.requests += 1
        try:
            answers.logs.append(await client.request_bytes("eth_getLogs", [log_filter(piece, filters)]))
            return
        except LimitExceeded as exc:
            state.splits += 1
            if piece.start == piece.end:
                state.receipt_fallbacks += 1
                answers.receipts += await client.batch_bytes([("eth_getBlockReceipts", [hex(piece.start)])])
                return
            hint = exc.hint
            # A hint is used when it starts where we did and ends strictly inside (reth can hint the range it refused).
            if hint is not None and hint[0] == piece.start and piece.start <= hint[1] < piece.end:
                cut = hint[1]
            else:
                cut = (piece.start + piece.end) // 2
        state.learn(cut - piece.start + 1)
        async with anyio.create_task_group() as tg:
            tg.start_soon(get, BlockRange(piece.start, cut))
            tg.start_soon(get, BlockRange(cut + 1, piece.end))

    span = state.span or len(blocks)
    async with anyio.create_task_group() as tg:
        for start in range(blocks.start, blocks.end + 1, span):
            tg.start_soon(get, BlockRange(start, min(start + span - 1, blocks.end)))
    return answers


def _matches(filters: Mapping[str, Any]) -> pl.Expr:
    """The eth_getLogs filter as a Polars predicate on the logs table (for logs read from receipts)."""
    condition = pl.lit(True)
    flt = params.log_filter(address_=filters.get("address"), topics=filters.get("topics"))
    address = flt.get("address")
    if address is not None:
        wanted = [bytes.fromhex(a[2:]) for a in (address if isinstance(address, list) else [address])]
        condition &= pl.col("address").is_in(wanted)
    for i, position in enumerate(flt.get("topics", [])):
        if position is None or position == []:
            continue
        values = [bytes.fromhex(t[2:]) for t in (position if isinstance(position, list) else [position])]
        condition &= pl.col("topics").list.get(i, null_on_oob=True).is_in(values)
    return condition


def logs_table(answers: LogAnswers, filters: Mapping[str, Any], *, chain_id: int, u256: U256) -> pa.Table:
    """The chunk's rows: eth_getLogs answers, plus receipts' logs filtered as eth_getLogs would have."""
    table = LOGS.transform(answers.logs, chain_id=chain_id, u256=u256)
    if not answers.receipts:
        return table
    extra = LOGS.from_receipts(answers.receipts, chain_id=chain_id, u256=u256)
    if filters:
        frame = pl.from_arrow(extra)
        assert isinstance(frame, pl.DataFrame)
        extra = frame.filter(_matches(filters)).to_arrow().cast(extra.schema)
    return pa.concat_tables([table, extra])


def sort_table(table: pa.Table, keys: Sequence[str]) -> pa.Table:
    return table.sort_by([(k, "ascending") for k in keys]) if table.num_rows else table
