"""Logs to typed event columns, vectorized: every static ABI type is a binary slice of ``topics`` or ``data`` turned
into its column by Polars kernels (no Python per row); dynamic ``bytes``/``string`` in data are read per row (events
rarely carry much of them).

A log is decoded only if it is exactly what the event says: topic0 the event's (unless anonymous), as many topics as
the event has indexed parameters plus one, and data of the length its non-indexed parameters take (at least, with
dynamic ones). Anything else is left out, never misread: an ERC-721 ``Transfer`` (three indexed) has the ERC-20 one's
topic0 (two indexed) but a fourth topic.

Types follow the one column table: ``address`` is ``fixed_size_binary(20)``, ``bytesN`` ``fixed_size_binary(N)``,
``bool`` bool, ``uint8..uint64``/``int8..int64`` Arrow integers (the next Arrow width up for the odd sizes), wider
integers ``decimal128(38, 0)`` (a value that does not fit raises :class:`ValueOutOfRange` naming the column and the
log; nothing is wrapped or rounded) or, with ``u256="binary"``, the 32-byte word as stored. An indexed dynamic value
(string, bytes, an array) is its 32-byte keccak, as the ABI stores it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

from chainframe._errors import InputError
from chainframe.datasets import U256, ValueOutOfRange
from chainframe.events._abi import Event, Param, events_of

IDENTITY = ("chain_id", "block_number", "block_hash", "block_time", "transaction_hash", "transaction_index",
            "log_index", "address")  # fmt: skip
"""The log's own columns kept beside the decoded parameters (those the input has)."""
_ZERO16 = bytes(16)
_ONES16 = b"\xff" * 16


def decode_events(
    logs: pa.Table | pl.DataFrame | pl.LazyFrame | str | Path,
    events: str | Mapping[str, Any] | Sequence[Any],
    *,
    u256: U256 = "decimal",
) -> Any:
    """Decode logs into one typed column per event parameter, plus the log's identifying columns.

    ``logs``: a logs table (Arrow or Polars, as ``collect("logs", ...)`` or ``scan`` give), or an output folder (its
    unfiltered ``logs`` series is scanned, keeping only the logs whose topic0 is asked for). ``events``: a signature
    (``"Transfer(address indexed from, address indexed to, uint256 value)"``), a list of them, or an ABI (JSON text
    or parsed; its non-event items are skipped). One event gives a table of the input's kind (Arrow for a folder);
    several give a dict of them by event name (by full signature where names repeat)."""
    wanted = events_of(events)
    if u256 not in ("decimal", "binary"):
        raise InputError(f"u256 must be 'decimal' or 'binary'; got {u256!r}")
    as_arrow = not isinstance(logs, pl.DataFrame | pl.LazyFrame)
    frame = logs_frame(logs, wanted)
    names = [e.name for e in wanted]
    out = {}
    for event in wanted:
        key = event.name if names.count(event.name) == 1 else event.signature
        table = _decode(frame, event, u256)
        out[key] = table.to_arrow().cast(arrow_schema(event, table.columns, u256)) if as_arrow else table
    return out[next(iter(out))] if len(wanted) == 1 else out


def logs_frame(logs: Any, events: list[Event]) -> pl.DataFrame:
    """The logs as a Polars frame: from Arrow, Polars (lazy) or an output folder (only the events' topic0s read)."""
    if isinstance(logs, str | Path):
        from chainframe.engine import scan

        topic0s = [e.topic0 for e in events if not e.anonymous]
        lazy = scan(logs, "logs")
        if len(topic0s) == len(events):  # only logs of these events are read from the files
            lazy = lazy.filter(pl.col("topics").list.get(0, null_on_oob=True).is_in(topic0s))
        return lazy.collect()
    if isinstance(logs, pl.LazyFrame):
        return logs.collect()
    if isinstance(logs, pl.DataFrame):
        return logs
    frame = pl.from_arrow(logs)
    if not isinstance(frame, pl.DataFrame):
        raise InputError("logs must be a table of logs (Arrow or Polars), or an output folder")
    return frame


def _decode(frame: pl.DataFrame, event: Event, u256: U256) -> pl.DataFrame:
    missing = {"topics", "data"} - set(frame.columns)
    if missing:
        raise InputError(f"the logs table has no {', '.join(sorted(missing))} column: give the logs dataset")
    head = 32 * len(event.data)
    size = pl.col("data").bin.size()
    cond = pl.col("topics").list.len() == event.topic_count
    cond &= (size >= head) if any(p.dynamic for p in event.data) else (size == head)
    if not event.anonymous:
        cond &= pl.col("topics").list.get(0, null_on_oob=True) == event.topic0
    logs = frame.filter(cond)
    identity = [c for c in IDENTITY if c in logs.columns]
    columns: dict[str, pl.Series] = {}
    first_topic = 0 if event.anonymous else 1
    for i, param in enumerate(event.indexed):
        word = logs.select(pl.col("topics").list.get(first_topic + i))["topics"]
        columns[param.name] = word if param.dynamic else _word(word, param, u256, logs)
    for j, param in enumerate(event.data):
        if param.dynamic:
            columns[param.name] = _dynamic(logs["data"], 32 * j, param)
        else:
            columns[param.name] = _word(logs.select(pl.col("data").bin.slice(32 * j, 32))["data"], param, u256, logs)
    clash = set(columns) & set(identity)
    if clash:  # a parameter named like a log column (e.g. "address") keeps its name; the log's gets a prefix
        logs = logs.rename({c: f"log_{c}" for c in clash})
        identity = [f"log_{c}" if c in clash else c for c in identity]
    return logs.select(identity).with_columns(pl.Series(name, values).alias(name) for name, values in columns.items())


def arrow_type(param: Param, u256: U256) -> pa.DataType:
    """The Arrow type of a decoded parameter (see the module's type rules)."""
    kind = param.type
    if param.indexed and param.dynamic:
        return pa.binary(32)
    if kind in ("bytes", "string"):
        return pa.binary() if kind == "bytes" else pa.string()
    if kind == "address":
        return pa.binary(20)
    if kind == "bool":
        return pa.bool_()
    if kind.startswith("bytes"):
        return pa.binary(int(kind[5:]))
    bits = int(re.sub(r"^u?int", "", kind) or 256)
    if bits > 64:
        return pa.binary(32) if u256 == "binary" else pa.decimal128(38, 0)
    width = next(w for w in (8, 16, 32, 64) if w >= bits)
    return getattr(pa, f"{'int' if kind.startswith('int') else 'uint'}{width}")()


def arrow_schema(event: Event, columns: Sequence[str], u256: U256) -> pa.Schema:
    """The decoded table's schema: the log's columns with their types from the one column table, then the params."""
    from chainframe.datasets import COLUMNS

    params = {p.name: arrow_type(p, u256) for p in event.params}
    fields = []
    for name in columns:
        if name in params:
            fields.append(pa.field(name, params[name]))
        else:
            column = COLUMNS[name] if name in COLUMNS else COLUMNS[name.removeprefix("log_")]
            fields.append(pa.field(name, column.arrow_type))
    return pa.schema(fields)


def _word(word: pl.Series, param: Param, u256: U256, logs: pl.DataFrame) -> pl.Series:
    """A 32-byte ABI word as its column."""
    kind = param.type
    if "[" in kind:
        raise InputError(f"{param.name}: fixed-size array types ({kind}) are not decoded yet; decode its words by hand")
    if kind == "address":
        return word.bin.slice(12, 20).cast(pl.Binary)
    if kind == "bool":
        return ~_equals(word.bin.slice(31, 1), b"\x00")
    if kind.startswith("bytes"):
        return word.bin.slice(0, int(kind[5:]))
    signed = kind.startswith("int")
    bits = int(re.sub(r"^u?int", "", kind) or 256)
    if bits <= 64:
        value = word.bin.slice(24, 8).bin.reinterpret(dtype=pl.Int64 if signed else pl.UInt64, endianness="big")
        width = next(w for w in (8, 16, 32, 64) if w >= bits)
        return value.cast(getattr(pl, f"{'Int' if signed else 'UInt'}{width}"))
    if u256 == "binary":
        return word
    high, low = word.bin.slice(0, 16), word.bin.slice(16, 16)
    value = low.bin.reinterpret(dtype=pl.Int128 if signed else pl.UInt128, endianness="big")
    fits = _equals(high, _ZERO16) & (value >= 0)
    if signed:
        fits |= _equals(high, _ONES16) & (value < 0)
    fits &= value.abs() < 10**38 if signed else value < 10**38
    if not fits.fill_null(True).all():
        bad = logs.filter(~fits.fill_null(True)).row(0, named=True)
        where = f"block {bad.get('block_number')}, log {bad.get('log_index')}"
        raise ValueOutOfRange(
            f"{param.name} ({kind}) at {where}: 0x{word.filter(~fits.fill_null(True))[0].hex()} does not fit "
            "decimal128(38, 0) (values are never wrapped or rounded); decode with u256='binary' for 32-byte words"
        )
    return value.cast(pl.Decimal(38, 0))


def _equals(values: pl.Series, constant: bytes) -> pl.Series:
    return values.to_frame("v").select(pl.col("v") == pl.lit(constant, dtype=pl.Binary)).to_series()


def _dynamic(data: pl.Series, offset_at: int, param: Param) -> pl.Series:
    """A non-indexed ``bytes``/``string``: its offset in the head, then length and bytes (read per row)."""
    if param.type not in ("bytes", "string"):
        raise InputError(f"{param.name}: dynamic arrays ({param.type}) are not decoded yet")
    out: list[Any] = []
    for blob in data.to_list():
        offset = int.from_bytes(blob[offset_at : offset_at + 32], "big")
        length = int.from_bytes(blob[offset : offset + 32], "big") if offset + 32 <= len(blob) else -1
        value = blob[offset + 32 : offset + 32 + length] if length >= 0 and offset + 32 + length <= len(blob) else None
        out.append(value.decode("utf-8", errors="replace") if param.type == "string" and value is not None else value)
    return pl.Series(param.name, out, dtype=pl.String if param.type == "string" else pl.Binary)
