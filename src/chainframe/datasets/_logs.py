"""logs: eth_getLogs over a block range, with address and topic filters; or a block's logs from its receipts."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from chainframe.datasets._columns import U256
from chainframe.datasets._dataset import BlockRange, Dataset, Fetch, Proof, RowChecks
from chainframe.datasets._envelope import batch_rows, result_rows
from chainframe.datasets._inputs import ADDRESS, EVENT, TOPICS, log_filters
from chainframe.datasets._native import RESULT
from chainframe.datasets._objects import ObjectDataset

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl

LOG_SOURCES = {
    "block_number": "blockNumber",
    "block_hash": "blockHash",
    "block_timestamp": "blockTimestamp",
    "transaction_index": "transactionIndex",
    "transaction_hash": "transactionHash",
    "log_index": "logIndex",
    "address": "address",
    "topics": "topics",
    "data": "data",
    "removed": "removed",
}

LOG_ROWS = RowChecks(keys=("block_number", "block_hash", "log_index", "transaction_hash", "transaction_index"),
                     index="log_index")  # fmt: skip
"""How logs are checked as answers: every dataset fetched as logs has its logs checked so, before its rows."""


class FetchedAsLogs(Dataset):
    """A dataset made of logs (the logs themselves, or logs of one event decoded): fetched with eth_getLogs over
    ranges split on providers' limits, checked and proven as logs before :meth:`from_logs` makes its rows."""

    method = "eth_getLogs"
    fetched = Fetch.LOGS
    null_checked = True
    row_checks = LOG_ROWS
    row_hashed = True
    proof = Proof.LOGS

    def check_inputs(self, given: Mapping[str, Any]) -> dict[str, Any]:
        return log_filters(super().check_inputs(given))

    def calls(self, blocks: int, filters: Mapping[str, Any]) -> int | None:
        return None  # pieces follow the answers' sizes


class Logs(FetchedAsLogs, ObjectDataset):
    name = "logs"
    aliases = ("events",)  # cryo's name
    doc = "Event logs (eth_getLogs), one row per log."
    sources = LOG_SOURCES
    columns = (
        "chain_id", "block_number", "block_hash", "block_timestamp", "block_time", "transaction_index",
        "transaction_hash", "log_index", "address", "topics", "data", "removed",
    )  # fmt: skip
    sort = ("block_number", "log_index")
    answers = RESULT
    fetched_with = "eth_getLogs (split on limit errors); eth_getBlockReceipts for a block over a provider's limit"
    inputs = (ADDRESS, TOPICS, EVENT)

    def log_filter(self, filters: Mapping[str, Any]) -> dict[str, Any]:
        return dict(filters)

    def schema_with(self, filters: Mapping[str, Any], u256: U256 = "decimal") -> pa.Schema:
        base = self.schema_for(u256)
        if not filters.get("event"):
            return base
        from chainframe.decode import as_events, event_fields

        fields = event_fields(as_events(list(filters["event"])), taken=base.names, u256=u256)
        return pa.schema([*base, *fields])

    def from_logs(self, logs: pa.Table, filters: Mapping[str, Any], *, u256: U256 = "decimal") -> pa.Table:
        if not filters.get("event"):
            return logs
        from chainframe.decode import as_events, with_event_columns

        return with_event_columns(logs, as_events(list(filters["event"])), u256=u256)

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        from chainframe.rpc import params

        flt = params.log_filter(
            from_block=blocks.start, to_block=blocks.end, address_=filters.get("address"), topics=filters.get("topics")
        )
        return [await client.request_bytes("eth_getLogs", [flt])]

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        table = self.scanned(bodies, chain_id=chain_id, u256=u256)
        if table is not None:
            return table
        return self.rows(self.stack([result_rows(b, self.fields) for b in bodies]), chain_id=chain_id, u256=u256)

    def from_receipts(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        """The logs inside eth_getBlockReceipts batch answers (for blocks whose logs exceed a provider's limit)."""
        receipt = {"logs": pl.List(pl.Struct(self.fields))}
        frames = [batch_rows(b, receipt, each="list").explode("logs").unnest("logs") for b in bodies]
        frames = [f.filter(pl.col("logIndex").is_not_null()) for f in frames]
        return self.rows(self.stack(frames), chain_id=chain_id, u256=u256)


_BLOCK_NUMBER = re.compile(rb'"blockNumber"\s*:\s*"(0x[0-9a-fA-F]{1,16})"')


async def with_block_timestamps(client: Any, bodies: list[bytes]) -> list[bytes]:
    """``bodies`` (eth_getLogs answers, or eth_getBlockReceipts batch answers) with each log's and receipt's
    ``blockTimestamp`` from its block's header, where the node sends none (geth before 1.14, Hardhat, Ganache): the
    headers of the blocks named are read for it, in one batch (the only cost, and only on such nodes). The value is
    the block's own, so the column stays what a node that sends it would give; a header read while the chain
    reorganizes is caught by the engine's checks of ``block_hash``, as for any answer. Answers that carry it, or hold
    nothing, are returned as they are."""
    lacking = [i for i, body in enumerate(bodies) if b'"blockTimestamp"' not in body and _BLOCK_NUMBER.search(body)]
    if not lacking:
        return bodies
    numbers = sorted({int(m, 16) for i in lacking for m in _BLOCK_NUMBER.findall(bodies[i])})
    headers = await client.batch([("eth_getBlockByNumber", [hex(n), False]) for n in numbers])
    stamps: dict[int, bytes] = {}
    for n, header in zip(numbers, headers, strict=True):
        if isinstance(header, Exception):
            raise header
        if isinstance(header, dict) and isinstance(header.get("timestamp"), str):
            stamps[n] = header["timestamp"].encode()

    def stamped(match: re.Match[bytes]) -> bytes:
        stamp = stamps.get(int(match.group(1), 16))
        return match.group(0) if stamp is None else match.group(0) + b',"blockTimestamp":"' + stamp + b'"'

    out = list(bodies)
    for i in lacking:
        out[i] = _BLOCK_NUMBER.sub(stamped, bodies[i])
    return out


LOGS = Logs()


def matches_filter(filters: Mapping[str, Any]) -> pl.Expr:
    """The eth_getLogs filter as a Polars predicate on a logs table (logs read from receipts; proven logs)."""
    from chainframe.rpc import params

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
