"""Logs to typed event columns: one column per parameter, plus the log's identity (block, transaction, log index).

A log is decoded as an event only when its topic0 is the event's hash, it has exactly one topic per indexed
parameter, and its data is at least as long as the event's head; every other log is left out, never misread (an
ERC-721 ``Transfer`` has the ERC-20 topic0 but a fourth topic). Static parameters are numpy slices of ``topics`` and
``data`` (no Python per row); dynamic ones (``string``, ``bytes``, arrays) are decoded per row.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from os import PathLike
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
import pyarrow as pa

from chainframe import _kernels as pc
from chainframe._errors import DecodeError, InputError
from chainframe._u256 import U256
from chainframe.decode._abi import Event, as_events
from chainframe.decode._dynamic import decode_value
from chainframe.decode._words import arrow_type, decode_words, take_indices, words_of

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl

IDENTITY = (
    "chain_id", "block_number", "block_hash", "block_time", "transaction_index", "transaction_hash", "log_index",
    "address",
)  # fmt: skip
"""The log columns kept beside the decoded parameters, where the input has them."""

Logs: TypeAlias = "pl.DataFrame | pl.LazyFrame | pa.Table | str | PathLike[str]"
"""A logs frame (Polars, lazy or not, or Arrow), or a dataset folder."""
Events: TypeAlias = str | Event | Sequence[str | Event] | Sequence[dict[str, Any]]


def _lazy(logs: Logs) -> pl.LazyFrame:
    if isinstance(logs, pl.LazyFrame):
        return logs
    if isinstance(logs, pl.DataFrame):
        return logs.lazy()
    if isinstance(logs, pa.Table):
        return pl.DataFrame(pl.from_arrow(logs)).lazy()
    # deferred: the store loads only to read an output folder's logs
    from chainframe.store import location, scan_series, series_path

    return scan_series(series_path(location(logs), "logs"))  # the unfiltered logs series of an output folder


def matching(logs: pl.LazyFrame, event: Event) -> pl.LazyFrame:
    """The logs that are this event: its topic0, one topic per indexed parameter, data no shorter than its head."""
    topics = pl.col("topics")
    head = 32 * sum(p.type.head_words for p in event.data_params)
    return logs.filter(
        (topics.list.len() == 1 + len(event.indexed))
        & (topics.list.first() == pl.lit(event.topic0, pl.Binary))
        & (pl.col("data").bin.size() >= head)
    )


def column_names(event: Event, taken: Sequence[str]) -> list[str]:
    """Parameter names as columns; one that clashes with a log column (``address``, ``data``...) gets ``arg_``."""
    return [f"arg_{p.name}" if p.name in taken else p.name for p in event.params]


def _decode_frame(frame: pl.DataFrame, event: Event, *, u256: U256, taken: Sequence[str] | None = None) -> pa.Table:
    kept = [c for c in IDENTITY if c in frame.columns]
    names = column_names(event, kept if taken is None else taken)
    # The 32-byte words are cut out in Polars, so only narrow binary columns cross to Arrow (converting the whole
    # topics list costs several times more than the decoding).
    words: list[pl.Expr] = []
    topic, slot, per_row = 1, 0, False
    for i, param in enumerate(event.params):
        if param.indexed:
            words.append(pl.col("topics").list.get(topic).alias(f"__word{i}"))
            topic += 1
            continue
        if param.type.is_elementary and not param.type.is_dynamic:
            words.append(pl.col("data").bin.slice(32 * slot, 32).alias(f"__word{i}"))
        else:
            per_row = True
        slot += param.type.head_words
    # One chunk per column: frames from collect or a folder come in thousands of small chunks, and crossing to Arrow
    # chunk by chunk cost five times the decoding.
    narrow = frame.select(*kept, *words, *(["data"] if per_row else [])).rechunk()
    table = narrow.to_arrow(compat_level=pl.CompatLevel.oldest())

    def locate(row: int) -> str:
        where = [f"{c} {table[c][row].as_py()}" for c in ("block_number", "log_index") if c in table.column_names]
        if "transaction_hash" in table.column_names:
            where.append(f"transaction 0x{table['transaction_hash'][row].as_py().hex()}")
        return " ".join(where) or f"row {row}"

    columns: list[pa.Array] = []
    slot = 0
    for i, (param, name) in enumerate(zip(event.params, names, strict=True)):
        if param.indexed and (param.type.is_dynamic or not param.type.is_elementary):
            # Indexed strings, bytes, arrays and tuples are stored as their keccak hash: the topic itself.
            word = words_of(table[f"__word{i}"].combine_chunks())
            columns.append(pa.Array.from_buffers(pa.binary(32), len(word), [None, pa.py_buffer(word.tobytes())]))
        elif param.indexed or (param.type.is_elementary and not param.type.is_dynamic):
            word = words_of(table[f"__word{i}"].combine_chunks())
            columns.append(decode_words(word, param.type, column=name, u256=u256, locate=locate))
        else:
            data = table["data"].combine_chunks()
            columns.append(_per_row(data, param.type, 32 * slot, name=name, u256=u256, locate=locate))
        if not param.indexed:
            slot += param.type.head_words
    return pa.table([table[c] for c in kept] + columns, names=[*kept, *names])


def event_fields(events: Sequence[Event], *, taken: Sequence[str], u256: U256) -> list[pa.Field]:
    """The decoded columns that ``events`` add beside the columns ``taken``: one per parameter name, shared by events
    whose parameter of that name has the same type; a name with two types is refused (decode them separately)."""
    fields: dict[str, pa.Field] = {}
    for event in events:
        for param, name in zip(event.params, column_names(event, taken), strict=True):
            hashed = param.indexed and (param.type.is_dynamic or not param.type.is_elementary)
            field = pa.field(name, pa.binary(32) if hashed else arrow_type(param.type, u256))
            if name in fields and not fields[name].equals(field):
                raise InputError(
                    f"events {', '.join(e.signature for e in events)} have a parameter {name!r} of two types "
                    f"({fields[name].type} and {field.type}); extract them as separate series"
                )
            fields[name] = field
    return list(fields.values())


def with_event_columns(logs: pa.Table, events: Sequence[Event], *, u256: U256) -> pa.Table:
    """``logs`` (a logs dataset table) with the events' parameters appended as typed columns, rows unchanged: a log
    that is none of the events (another shape under the same topic0, such as an ERC-721 ``Transfer`` beside the
    ERC-20 one) keeps null there rather than being misread.

    The logs are matched and their words gathered with numpy from the ``topics`` and ``data`` buffers: a run hands
    over one piece at a time, where Polars queries' fixed cost (a frame, a filter and a select per event and piece)
    was most of the decoding."""
    fields = event_fields(events, taken=logs.column_names, u256=u256)
    n = logs.num_rows
    schema = pa.schema([*logs.schema, *fields])
    if n == 0:
        return pa.Table.from_arrays([*logs.columns, *(pa.nulls(0, f.type) for f in fields)], schema=schema)
    topics = pc.cast(logs["topics"].combine_chunks(), pa.list_(pa.binary(32)))
    offsets = topics.offsets
    starts = np.frombuffer(offsets.buffers()[1], np.int32)[offsets.offset : offsets.offset + n + 1].astype(np.int64)
    counts = np.diff(starts)
    if topics.null_count:
        counts[~pc.valid_rows(topics)] = 0
    child = topics.values
    buffer = child.buffers()[1]
    words = np.frombuffer(buffer, np.uint8) if buffer is not None else np.zeros(0, np.uint8)
    words = words[32 * child.offset :][: 32 * len(child)].reshape(-1, 32)
    data = pc.cast(logs["data"].combine_chunks(), pa.large_binary())
    at = np.frombuffer(data.buffers()[1], np.int64)[data.offset : data.offset + n + 1]
    raw = np.frombuffer(data.buffers()[2], np.uint8) if data.buffers()[2] is not None else np.zeros(0, np.uint8)
    sizes = np.diff(at)
    if data.null_count:
        sizes[~pc.valid_rows(data)] = -1
    first = words[np.minimum(starts[:-1], max(len(words) - 1, 0))] if len(words) else np.zeros((n, 32), np.uint8)
    parts: dict[str, list[tuple[np.ndarray, pa.Array]]] = {f.name: [] for f in fields}
    for event in events:
        topic0, head = _shape(event)
        wanted = (counts == 1 + len(event.indexed)) & (sizes >= head)
        rows = np.flatnonzero(wanted & (first == topic0).all(axis=1))
        if not rows.size:
            continue
        decoded = _decode_rows(logs, rows, event, words, starts, raw, at, u256=u256)
        for name, values in zip(column_names(event, logs.column_names), decoded, strict=True):
            parts[name].append((rows, values))
    columns = []
    for field in fields:
        # One take per column: each row's place in the concatenated decoded values, null where no event matched.
        index = np.full(n, -1, np.int64)
        offset = 0
        for rows, values in parts[field.name]:
            index[rows] = np.arange(offset, offset + len(values))
            offset += len(values)
        values = pa.concat_arrays([v for _, v in parts[field.name]]) if offset else pa.nulls(0, field.type)
        columns.append(pc.take(pc.cast(values, field.type), take_indices(index)))
    return pa.Table.from_arrays([*logs.columns, *columns], schema=schema)


@lru_cache(maxsize=1024)
def _shape(event: Event) -> tuple[np.ndarray, int]:
    """An event's topic 0 as bytes to compare rows of words with, and its data's head in bytes: hashed once per
    process, not once per piece."""
    return np.frombuffer(event.topic0, np.uint8), 32 * sum(p.type.head_words for p in event.data_params)


def _decode_rows(
    logs: pa.Table, rows: np.ndarray, event: Event, words: np.ndarray, starts: np.ndarray, raw: np.ndarray,
    at: np.ndarray, *, u256: U256,
) -> list[pa.Array]:  # fmt: skip
    """The parameter columns of the logs ``rows`` (which are ``event``): indexed ones from their topics (``words``,
    each log's first at ``starts``), static data ones from ``raw`` (each log's data at ``at``), dynamic ones per row."""

    def locate(row: int) -> str:
        r = int(rows[row])
        where = [f"{c} {logs[c][r].as_py()}" for c in ("block_number", "log_index") if c in logs.column_names]
        if "transaction_hash" in logs.column_names:
            where.append(f"transaction 0x{logs['transaction_hash'][r].as_py().hex()}")
        return " ".join(where) or f"row {row}"

    columns: list[pa.Array] = []
    topic, slot = 1, 0
    for param, name in zip(event.params, column_names(event, logs.column_names), strict=True):
        t = param.type
        if param.indexed:
            word = words[starts[rows] + topic]
            topic += 1
            if t.is_dynamic or not t.is_elementary:  # indexed strings, bytes, arrays and tuples: their keccak hash
                columns.append(pa.Array.from_buffers(pa.binary(32), len(word), [None, pa.py_buffer(word.tobytes())]))
            else:
                columns.append(decode_words(word, t, column=name, u256=u256, locate=locate))
            continue
        if t.is_elementary and not t.is_dynamic:
            word = raw[(at[rows] + 32 * slot)[:, None] + np.arange(32)]  # matched logs' data holds the head
            columns.append(decode_words(word, t, column=name, u256=u256, locate=locate))
        else:
            data = pc.take(logs["data"], take_indices(rows.astype(np.int64)))
            columns.append(_per_row(data.combine_chunks(), t, 32 * slot, name=name, u256=u256, locate=locate))
        slot += t.head_words
    return columns


def _per_row(data: pa.Array, t: Any, pos: int, *, name: str, u256: U256, locate: Any) -> pa.Array:
    values = []
    for row, raw in enumerate(data.to_pylist()):
        try:
            values.append(decode_value(t, raw, pos, u256=u256))
        except DecodeError as error:  # ValueOutOfRange stays itself, now naming the column and the log
            raise type(error)(f"{name}: cannot decode the {t.canonical} at {locate(row)}: {error}") from error
        except UnicodeDecodeError as error:
            raise DecodeError(f"{name}: the string at {locate(row)} is not UTF-8: {error}") from error
    return pa.array(values, arrow_type(t, u256))


def _decode(logs: Logs, event: Event, u256: U256) -> pa.Table:
    return _decode_frame(matching(_lazy(logs), event).collect(), event, u256=u256)


def _out(table: pa.Table, logs: Logs) -> Any:
    if not isinstance(logs, pa.Table):
        return pl.from_arrow(table)
    # The identity columns went through Polars (no fixed-size binary): give an Arrow caller its own types back.
    types = {f.name: f.type for f in logs.schema}
    return pc.cast_table(table, pa.schema([pa.field(f.name, types.get(f.name, f.type)) for f in table.schema]))


def decode_event(logs: Logs, event: str | Event, *, u256: U256 = "decimal") -> Any:
    """The logs that are ``event``, one typed column per parameter after the log's identity columns.

    ``logs`` is a logs frame (Polars, lazy or not, or Arrow: the result is of the same family) or a dataset folder
    (read with :func:`chainframe.scan`). ``event`` is a signature, ``"Transfer(address indexed from, address indexed
    to, uint256 value)"``. Integers wider than 64 bits are ``decimal128(38, 0)`` (a value that does not fit raises
    ``ValueOutOfRange`` naming the column and the log), or 32-byte big-endian words with ``u256="binary"``.
    """
    events = as_events(event)
    if len(events) != 1:
        raise InputError(f"decode_event takes one event; got {len(events)} (use decode_events for several)")
    return _out(_decode(logs, events[0], u256), logs)


def decode_events(logs: Logs, events: Events, *, u256: U256 = "decimal") -> dict[str, Any]:
    """Each event's decoded logs (as :func:`decode_event`), keyed by its canonical signature.

    ``events``: a signature, a list of signatures, or an ABI (JSON text or the list of its entries). Logs of events
    not listed are left out.
    """
    found = as_events(events)  # type: ignore[arg-type]
    if not found:
        raise InputError("no events to decode (an ABI without event entries?)")
    lazy = _lazy(logs)
    if not isinstance(logs, pl.LazyFrame | pl.DataFrame | pa.Table):
        # A folder: read the logs of all listed events once, not once per event.
        lazy = lazy.filter(pl.col("topics").list.first().is_in([e.topic0 for e in found])).collect().lazy()
    return {e.signature: _out(_decode_frame(matching(lazy, e).collect(), e, u256=u256), logs) for e in found}
