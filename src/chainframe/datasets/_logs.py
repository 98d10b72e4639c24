"""logs: eth_getLogs over a block range, with address and topic filters; or a block's logs from its receipts."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from chainframe._errors import InputError
from chainframe.datasets._columns import U256
from chainframe.datasets._dataset import BlockRange, Dataset, Fetch, RowChecks
from chainframe.datasets._envelope import batch_rows, result_rows
from chainframe.datasets._inputs import ADDRESS, EVENT, TOPICS
from chainframe.datasets._native import RESULT, block_stamps
from chainframe.datasets._objects import ObjectDataset
from chainframe.datasets._proof import Proof
from chainframe.rpc import params

if TYPE_CHECKING:
    import polars as pl

    from chainframe import decode
else:
    from chainframe._lazy import decode
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


def log_filters(given: Mapping[str, Any]) -> dict[str, Any]:
    """Log filters (``address``, ``topics``, ``event``) in their checked form: topic-0 signatures hashed, ``event``
    as its events' full text with topic 0 set to their hashes."""
    topics = _signature_topics(given.get("topics"))
    out: dict[str, Any] = {}
    if given.get("event"):
        events, topics = _event_topics(given["event"], topics)
        out["event"] = events
    flt = params.log_filter(address_=given.get("address"), topics=topics)
    out |= {k: v for k, v in (("address", flt.get("address")), ("topics", flt.get("topics"))) if v is not None}
    return out


def _signature_topics(topics: Any) -> Any:
    """Topic 0 may be given as event signatures (``"Transfer(address,address,uint256)"``): they stand for their
    hashes, as on the CLI's ``--topic0``."""
    if not isinstance(topics, list | tuple) or not topics or topics[0] is None:
        return topics

    def hashed(value: Any) -> Any:
        return "0x" + decode.parse_event(value).topic0.hex() if isinstance(value, str) and "(" in value else value

    first = topics[0]
    first = [hashed(v) for v in first] if isinstance(first, list | tuple) else hashed(first)
    return [first, *topics[1:]]


def _event_topics(event: Any, topics: Any) -> tuple[list[str], list[Any]]:
    """``event=`` (a signature, a list of them, or an ABI): the events in their full text form (the series' filter)
    and the topics with topic 0 set to their hashes."""
    try:
        events = decode.as_events(event)
    except (TypeError, AttributeError, KeyError):
        raise InputError(f"event must be a signature, a list of signatures, or an ABI; got {event!r}") from None
    if not events:
        raise InputError("event= names no event (an ABI without event entries?)")
    decode.event_fields(events, taken=LOGS.columns, u256="decimal")  # two types under one column name are refused here
    hashes = ["0x" + e.topic0.hex() for e in events]
    given = list(topics or [])
    if given and given[0] is not None:
        first = given[0] if isinstance(given[0], list | tuple) else [given[0]]
        if {str(t).lower() for t in first} != set(hashes):
            raise InputError("event= sets topic 0 to its events' hashes; leave topic 0 out (or give the same hashes)")
    return [e.text for e in events], [hashes[0] if len(hashes) == 1 else hashes, *given[1:]]


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
    proof = Proof.RAW_LOGS  # a folder proves the logs themselves with their receipts

    def log_filter(self, filters: Mapping[str, Any]) -> dict[str, Any]:
        return dict(filters)

    def schema_with(self, filters: Mapping[str, Any], u256: U256 = "decimal") -> pa.Schema:
        base = self.schema_for(u256)
        if not filters.get("event"):
            return base

        fields = decode.event_fields(decode.as_events(list(filters["event"])), taken=base.names, u256=u256)
        return pa.schema([*base, *fields])

    def from_logs(self, logs: pa.Table, filters: Mapping[str, Any], *, u256: U256 = "decimal") -> pa.Table:
        if not filters.get("event"):
            return logs

        return decode.with_event_columns(logs, decode.as_events(list(filters["event"])), u256=u256)

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
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
_STAMPED = re.compile(rb'"blockTimestamp"\s*:\s*[^\sn]')
"""A ``blockTimestamp`` key with a value (not ``null``): a hex string, or anvil's JSON number. Both patterns' matches
are counted in C, in one pass (``_native.block_stamps``); the patterns count only where the scanner is off, and
``_BLOCK_NUMBER`` reads the block numbers of an answer with no stamp at all. Over the benchmark chain's answers
(``scripts/bench stamps``), the patterns took 0.48 CPU-s for the logs' 175 MB and 0.61 for the receipts' 194 MB, on
the event loop; the count 0.04 and 0.08."""


async def with_block_timestamps(client: Any, bodies: list[bytes]) -> list[bytes]:
    """``bodies`` (eth_getLogs answers, or eth_getBlockReceipts batch answers) with each log's and receipt's
    ``blockTimestamp`` from its block's header, wherever the node sends none, judged object by object: geth before
    1.14, Hardhat and Ganache send it nowhere; Erigon, and the recorded Polygon and Arbitrum answers, on the logs but
    not on the receipts. The headers of the blocks named are read for it, in one batch (the only cost, and only on
    such nodes). The value is the block's own, so the column stays what a node that sends it would give; a header read
    while the chain reorganizes is caught by the engine's checks of ``block_hash``, as for any answer. Answers in
    which every object with a block number has its timestamp are returned as they are (one count of each key, in C).

    An answer with the key nowhere has it added after each ``blockNumber`` in its text; one with it on some objects
    only is parsed, and the objects that lack it (or hold ``null``) get it: the only case that costs a parse."""
    nowhere: list[int] = []
    partly: dict[int, Any] = {}
    numbers: set[int] = set()
    for i, body in enumerate(bodies):
        matches: list[bytes] | None = None
        counted = block_stamps(body)  # in C: both patterns' matches at memory speed, the event loop running
        if counted is None:  # the scanner is off: the patterns count
            matches = _BLOCK_NUMBER.findall(body)
            counted = (len(matches), len(_STAMPED.findall(body)) if matches else 0)
        named, have = counted
        if not named or have >= named:
            continue  # no block named, or a stamp for each
        if b'"blockTimestamp"' not in body:
            nowhere.append(i)
            numbers.update(int(m, 16) for m in (_BLOCK_NUMBER.findall(body) if matches is None else matches))
        else:
            partly[i] = parsed = json.loads(body)
            numbers.update(int(item["blockNumber"], 16) for item in _unstamped(parsed))
    if not numbers:
        return bodies
    ordered = sorted(numbers)
    headers = await client.batch([("eth_getBlockByNumber", [hex(n), False]) for n in ordered])
    stamps: dict[int, str] = {}
    for n, header in zip(ordered, headers, strict=True):
        if isinstance(header, Exception):
            raise header
        if isinstance(header, dict) and isinstance(header.get("timestamp"), str):
            stamps[n] = header["timestamp"]

    def stamped(match: re.Match[bytes]) -> bytes:
        stamp = stamps.get(int(match.group(1), 16))
        return match.group(0) if stamp is None else match.group(0) + b',"blockTimestamp":"' + stamp.encode() + b'"'

    out = list(bodies)
    for i in nowhere:
        out[i] = _BLOCK_NUMBER.sub(stamped, bodies[i])
    for i, parsed in partly.items():
        for item in _unstamped(parsed):
            stamp = stamps.get(int(item["blockNumber"], 16))
            if stamp is not None:
                item["blockTimestamp"] = stamp
        out[i] = json.dumps(parsed, separators=(",", ":")).encode()
    return out


def _unstamped(value: Any) -> Iterator[dict[str, Any]]:
    """The objects inside a parsed answer that name their block (a hex ``blockNumber``) but not its timestamp."""
    if isinstance(value, dict):
        number = value.get("blockNumber")
        if isinstance(number, str) and number.startswith("0x") and value.get("blockTimestamp") is None:
            yield value
        for inner in value.values():
            if isinstance(inner, dict | list):
                yield from _unstamped(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _unstamped(inner)


LOGS = Logs()


def matches_filter(filters: Mapping[str, Any]) -> pl.Expr:
    """The eth_getLogs filter as a Polars predicate on a logs table (logs read from receipts; proven logs)."""
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
