"""Transactions' calldata to typed function-call columns: one row per call of a listed function, never one dropped.

A call is a row whose recipient is set and whose input starts with a function's selector (its 4 bytes). Its
arguments follow the selector, ABI-encoded as an event's data is, so the event decoder's pieces decode them:
static elementary arguments are words gathered with numpy from the input column's buffer (``_words``), dynamic
ones and static tuples and arrays are decoded per row (``_dynamic``). Unlike a log, whose bytes a contract wrote,
calldata is whatever the sender sent: a call too short for its function's head, with an offset past its end or with
bad padding is a row all the same, its raw ``input`` kept, its arguments null and ``decode_error`` saying why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from chainframe import _kernels as pc
from chainframe._errors import DecodeError, InputError
from chainframe._u256 import U256
from chainframe.decode._abi import Function, as_functions
from chainframe.decode._dynamic import decode_value
from chainframe.decode._words import arrow_type, decode_words, take_indices, text_array

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl

KEYS = (
    "chain_id", "block_number", "block_hash", "block_timestamp", "block_time", "transaction_index",
    "transaction_hash", "trace_address", "depth", "call_type", "from_address", "to_address",
)  # fmt: skip
"""The transaction (or trace frame) columns kept beside the decoded arguments, where the input has them: a call joins
its raw row (a frame by its ``trace_address`` too)."""
CALL = (
    pa.field("selector", pa.binary(4)),
    pa.field("function", pa.string()),
    pa.field("input", pa.binary()),
    pa.field("decode_error", pa.string()),
)
"""What every decoded call carries: the selector matched, the function's signature, the raw input, and why the
arguments are null where they do not decode (null where they do)."""
Functions = str | Function | Sequence[str | Function] | Sequence[dict[str, Any]]


def argument_names(function: Function, taken: Sequence[str]) -> list[str]:
    """Parameter names as columns; one that clashes with a call column (``input``, ``to_address``...) gets ``arg_``."""
    return [f"arg_{p.name}" if p.name in taken else p.name for p in function.params]


def call_fields(functions: Sequence[Function], *, taken: Sequence[str], u256: U256) -> list[pa.Field]:
    """The argument columns of ``functions`` beside the columns ``taken``: one per parameter name, shared by functions
    whose parameter of that name has the same type; a name with two types is refused (decode them separately)."""
    taken = [*taken, *(f.name for f in CALL)]
    named = [(f.params, argument_names(f, taken)) for f in functions]
    return _shared_fields(functions, named, "have a parameter", u256)


def output_names(function: Function) -> list[str]:
    """An ``eth_call``'s output columns: ``output_`` and each output's name (its place, unnamed)."""
    return [f"output_{p.name}" for p in function.outputs]


def output_fields(functions: Sequence[Function], *, u256: U256) -> list[pa.Field]:
    """The output columns of ``functions``: one per output name, shared by functions whose output of that name has
    the same type; a name with two types is refused (decode them separately)."""
    return _shared_fields(functions, [(f.outputs, output_names(f)) for f in functions], "return", u256)


def _shared_fields(
    functions: Sequence[Function], named: Sequence[tuple[Sequence[Any], list[str]]], verb: str, u256: U256
) -> list[pa.Field]:
    """One column per name over every function's ``(parameters, their column names)``; a name given two
    types is refused, saying which functions ``verb`` it."""
    fields: dict[str, pa.Field] = {}
    for params, names in named:
        for param, name in zip(params, names, strict=True):
            field = pa.field(name, arrow_type(param.type, u256))
            if name in fields and not fields[name].equals(field):
                raise InputError(
                    f"functions {', '.join(f.signature for f in functions)} {verb} {name!r} of two types "
                    f"({fields[name].type} and {field.type}); extract them as separate series"
                )
            fields[name] = field
    return list(fields.values())


class _Reasons:
    """Why each row of one function's calls does not decode: the first reason found is kept."""

    def __init__(self, n: int) -> None:
        self.text = np.full(n, None, dtype=object)

    def __call__(self, rows: np.ndarray, why: str) -> None:
        self.text[np.asarray(rows, dtype=bool) & (self.text == None)] = why  # noqa: E711 (elementwise)

    @property
    def bad(self) -> np.ndarray:
        bad: np.ndarray = self.text != None  # noqa: E711 (elementwise)
        return bad


def _words_at(raw: np.ndarray, starts: np.ndarray, sizes: np.ndarray, at: int) -> np.ndarray:
    """The (n, 32) matrix of each row's word at byte ``at`` of its arguments (``starts``/``sizes``: where each row's
    arguments lie in ``raw``); a zero word where a row is too short (its reason is already recorded)."""
    has = sizes >= at + 32
    if not raw.size or not has.any():
        return np.zeros((len(starts), 32), np.uint8)
    index = np.where(has, starts + at, 0)[:, None] + np.arange(32)
    matrix: np.ndarray = raw[np.minimum(index, raw.size - 1)]
    matrix[~has] = 0
    return matrix


def _arguments(
    raw: np.ndarray, starts: np.ndarray, sizes: np.ndarray, function: Function, names: list[str], *, u256: U256
) -> tuple[list[pa.Array], Any]:
    """The argument columns of calls of ``function`` (their arguments, after the selector, at ``starts`` in ``raw``,
    ``sizes`` bytes long), and the reasons. Static words are gathered from the input's buffer with numpy: no Polars
    query per piece (its fixed cost was most of a run's decoding)."""
    n = len(starts)
    reasons = _Reasons(n)
    head = 32 * function.head_words
    reasons(sizes < head, f"input too short for {function.signature}: its arguments' head is {head} bytes")
    columns: list[pa.Array] = []
    slot = 0
    args: list[bytes] | None = None
    for param, name in zip(function.params, names, strict=True):
        t = param.type
        if t.is_elementary and not t.is_dynamic:
            matrix = _words_at(raw, starts, sizes, 32 * slot)
            columns.append(decode_words(matrix, t, column=name, u256=u256, locate=str, faults=reasons))
        else:
            if args is None:
                args = [raw[start : start + size].tobytes() for start, size in zip(starts, sizes, strict=True)]
            values: list[Any] = []
            for row, data in enumerate(args):
                if reasons.text[row] is not None:
                    values.append(None)
                    continue
                try:
                    values.append(decode_value(t, data, 32 * slot, u256=u256))
                except (DecodeError, UnicodeDecodeError) as error:  # ValueOutOfRange is a DecodeError
                    reasons(np.arange(n) == row, f"{name}: {error}")
                    values.append(None)
            columns.append(pa.array(values, arrow_type(t, u256)))
        slot += t.head_words
    return columns, reasons


def decode_calls(transactions: Any, functions: Functions, *, u256: U256 = "decimal") -> pa.Table:
    """The calls of ``functions`` among ``transactions`` (a transactions or traces table: Arrow or Polars; a trace's
    frames are internal calls too), in their order: the
    transaction's keys, ``selector``, ``function`` (its signature), ``input``, ``decode_error`` and one typed column
    per argument (the same types as events' parameters; null where the call does not decode, ``decode_error`` saying
    why). Contract creations (no recipient, or a ``create`` frame) are not calls."""
    table = transactions.to_arrow() if isinstance(transactions, pl.DataFrame) else transactions
    listed = as_functions(functions)  # type: ignore[arg-type]
    if not listed:
        raise InputError("no functions to decode (an ABI without function entries?)")
    kept = [c for c in KEYS if c in table.column_names]
    rows, calls = call_columns(table, listed, taken=kept, u256=u256)
    taken = pc.take(table.select([*kept, "input"]), rows)
    columns = {name: taken[name] for name in taken.column_names} | {name: calls[name] for name in calls.column_names}
    arguments = [f for f in calls.schema if f.name not in {c.name for c in CALL}]
    schema = pa.schema([*(table.schema.field(c) for c in kept), *CALL, *arguments])
    return pa.Table.from_arrays([columns[f.name] for f in schema], schema=schema)


def _outputs(table: pa.Table, rows: np.ndarray, function: Function, reasons: _Reasons, *, u256: U256) -> dict[str, Any]:
    """The output columns of ``function``'s calls at ``rows``: its outputs decoded as a call's arguments are (they
    are ABI-encoded alike, without a selector); null where the call failed (``error`` set) or its output is
    missing, and, with the reason added to ``reasons``, where it does not decode."""
    names = output_names(function)
    taken = take_indices(rows)
    returned = pc.take(table["output"].combine_chunks(), taken)
    ran = pc.valid_rows(returned)
    if "error" in table.column_names:
        ran &= ~pc.valid_rows(pc.take(table["error"].combine_chunks(), taken))
    _, _, offsets, raw = _selectors(returned)
    starts = offsets[:-1]
    values = Function(function.name, function.outputs)  # the outputs as a function's parameters: same encoding
    columns, why = _arguments(raw, starts, offsets[1:] - starts, values, names, u256=u256)
    failed = why.bad & ran
    for text in set(why.text[failed]):
        reasons(failed & (why.text == text), f"output: {text}".replace(f"for {values.signature}", "for its outputs"))
    nulled = take_indices(np.where(why.bad | ~ran, -1, np.arange(len(rows))))
    return dict(zip(names, (pc.take(c, nulled) for c in columns), strict=True))


def with_outputs(calls: Mapping[str, Any], function: Function, *, u256: U256) -> dict[str, Any]:
    """``calls`` (one function's, by column: their ``output``, ``error`` and ``decode_error`` among them) with the
    function's output columns (:func:`output_names`), decoded as :func:`call_columns` does with ``outputs``: null
    where the call failed or its output does not decode, ``decode_error`` then saying why unless it says already."""
    if not function.outputs:
        return dict(calls)
    n = len(calls["output"])
    if n == 0:  # a piece without calls of it (most pieces, for most of a contract's functions): nothing to decode
        return dict(calls) | {f.name: pa.nulls(0, f.type) for f in output_fields([function], u256=u256)}
    table = pa.table({"output": calls["output"], "error": calls["error"]})
    reasons = _Reasons(n)
    decoded = _outputs(table, np.arange(n, dtype=np.int64), function, reasons, u256=u256)
    fields = {f.name: f.type for f in output_fields([function], u256=u256)}
    out = dict(calls)
    out["decode_error"] = pc.coalesce(calls["decode_error"], text_array(reasons.text, n))
    return out | {name: pc.cast(column, fields[name]) for name, column in decoded.items()}


def _selectors(inputs: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each input's first 4 bytes as a big-endian uint32 and whether it has 4 bytes (null inputs have not), with the
    column's offsets (n + 1, into the bytes) and bytes, for the arguments to be cut from."""
    if not (pa.types.is_binary(inputs.type) or pa.types.is_large_binary(inputs.type)):
        inputs = pc.cast(inputs, pa.large_binary())  # a fixed-size or view column
    n = len(inputs)
    if n == 0:
        return np.zeros(0, np.uint32), np.zeros(0, bool), np.zeros(1, np.int64), np.zeros(0, np.uint8)
    wide = pa.types.is_large_binary(inputs.type)
    buffer = inputs.buffers()[1]
    offsets: np.ndarray = np.frombuffer(buffer, np.int64 if wide else np.int32).astype(np.int64)
    offsets = offsets[inputs.offset : inputs.offset + n + 1]
    data = inputs.buffers()[2]
    raw = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
    starts = offsets[:-1]
    long_enough = (offsets[1:] - offsets[:-1]) >= 4
    if inputs.null_count:
        long_enough &= pc.valid_rows(inputs)
    at = np.where(long_enough, starts, 0)
    heads = np.zeros(n, np.uint32)
    if raw.size >= 4:
        for k in range(4):
            heads = (heads << np.uint32(8)) | raw[np.minimum(at + k, raw.size - 1)].astype(np.uint32)
    return heads, long_enough, offsets, raw


def selector_rows(calls: pa.Table, functions: Sequence[Function]) -> pa.Array:
    """The take indices of the rows of ``calls`` (:func:`call_columns`' table) that are calls of ``functions``."""
    return take_indices(np.flatnonzero(np.isin(_numbers(calls), [_selector(f)[1] for f in functions])))


def selector_groups(calls: pa.Table, groups: Sequence[Sequence[Function]]) -> tuple[pa.Array, list[int]] | None:
    """The rows of ``calls`` (:func:`call_columns`' table) put group by group, by which of ``groups`` their
    function is in, in order within each: the take indices that put them so, and where each group starts (and the
    last ends); None where two groups share a selector."""
    group_of: dict[int, int] = {}
    for group, functions in enumerate(groups):
        for selector in {_selector(f)[1] for f in functions}:
            if group_of.setdefault(selector, group) != group:
                return None
    keys = np.array(sorted(group_of), np.uint32)
    numbers = _numbers(calls)
    at = np.minimum(np.searchsorted(keys, numbers), len(keys) - 1)  # each row's group in one pass, not a pass a group
    found = keys[at] == numbers
    owner = np.where(found, np.array([group_of[int(k)] for k in keys], np.int64)[at], len(groups))  # none: last
    starts = np.zeros(len(groups) + 1, np.int64)
    np.cumsum(np.bincount(owner, minlength=len(groups) + 1)[: len(groups)], out=starts[1:])
    return take_indices(np.argsort(owner, kind="stable")), [int(s) for s in starts]


def _numbers(calls: pa.Table) -> np.ndarray:
    """The ``selector`` column as big-endian uint32s."""
    selectors = calls["selector"].combine_chunks()
    return np.frombuffer(selectors.buffers()[1], ">u4", count=len(selectors), offset=4 * selectors.offset)


@lru_cache(maxsize=1024)
def _selector(function: Function) -> tuple[bytes, int]:
    """A function's selector, and as the uint32 :func:`_selectors` gives: hashed once, not once per piece."""
    selector = function.selector
    return selector, int.from_bytes(selector, "big")


def call_columns(
    table: pa.Table, functions: Sequence[Function], *, taken: Sequence[str], u256: U256, outputs: bool = False
) -> tuple[pa.Array, pa.Table]:
    """Which rows of ``table`` (a transactions or traces table) are calls of ``functions`` (their indices, in the
    table's order) and those calls' ``selector``, ``function``, ``decode_error`` and argument columns (named beside
    the columns ``taken``, see :func:`call_fields`): what :func:`decode_calls` gives and what a dataset extracted with
    ``function=`` adds to its rows. ``outputs``: the ``output`` column decoded with the functions' outputs too
    (:func:`output_fields`; an ``eth_call``'s), where the call did not fail (a null ``error``): an output that does
    not decode nulls them, ``decode_error`` saying why."""
    fields = call_fields(functions, taken=taken, u256=u256)
    if outputs:
        fields += output_fields(functions, u256=u256)
    made = [f for f in CALL if f.name != "input"]
    schema = pa.schema([*made, *fields])
    # Numpy over the input's buffers, no Polars query per function: a run decodes piece by piece, where a query's
    # fixed cost (about 0.5 ms each) was most of the time.
    heads, called, offsets, raw = _selectors(table["input"].combine_chunks())
    if "to_address" in table.column_names:
        called &= pc.valid_rows(table["to_address"].combine_chunks())
    if "call_type" in table.column_names:  # a creation frame's input is init code, its to_address the new contract
        kind = pl.Series("kind", table["call_type"].combine_chunks()).cast(pl.String).str.to_lowercase()
        called &= ~kind.str.starts_with("create").fill_null(False).to_numpy()
    parts: list[pa.Table] = []
    order: list[np.ndarray] = []
    for function in functions:
        selector, number = _selector(function)
        rows = np.flatnonzero(called & (heads == number)).astype(np.int64)
        if not rows.size:
            continue
        names = argument_names(function, [*taken, *(f.name for f in CALL)])
        starts = offsets[rows] + 4
        columns, reasons = _arguments(raw, starts, offsets[rows + 1] - starts, function, names, u256=u256)
        nulled = take_indices(np.where(reasons.bad, -1, np.arange(len(rows))))  # a call that does not decode: none
        decoded = dict(zip(names, (pc.take(c, nulled) for c in columns), strict=True))
        if outputs and function.outputs:
            decoded |= _outputs(table, rows, function, reasons, u256=u256)
        n = len(rows)
        arrays = [
            pc.constant(selector, n, pa.binary(4)),
            text_array(function.signature, n),
            text_array(reasons.text, n),
            *(decoded.get(f.name, pa.nulls(n, f.type)) for f in fields),
        ]
        parts.append(
            pa.Table.from_arrays([pc.cast(a, f.type) for a, f in zip(arrays, schema, strict=True)], schema=schema)
        )
        order.append(rows)
    if not parts:
        return take_indices(np.zeros(0, np.int64)), pc.empty_table(schema)
    rows_all = np.concatenate(order)
    by_row = np.argsort(rows_all, kind="stable")
    return take_indices(rows_all[by_row]), pa.concat_tables(parts).take(take_indices(by_row))
