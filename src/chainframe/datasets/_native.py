"""Answers to typed Arrow arrays in one native pass, when the scanner is built (see ``_native_rows.c``).

The scanner decodes hex while it reads the answer's bytes and writes Arrow buffers, which are wrapped here without a
copy. It takes only what the pure path (Polars' JSON reader, then :mod:`chainframe.datasets._convert`) would give
the same typed values for; for anything else (an escape, a value out of range, a malformed answer, an error
envelope, a kind it does not know) it answers None and the caller takes the pure path, which names the bad value.

``CHAINFRAME_NATIVE=0`` in the environment turns it off (the benchmarks and tests compare both paths).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from chainframe import _kernels as pc
from chainframe.datasets._columns import ARROW, COLUMNS, U256, Kind
from chainframe.datasets._convert import STRUCT_FIELDS

try:  # an import statement, not importlib: ``-X importtime`` shows it (tests/engine/test_startup.py reads that)
    from chainframe.datasets import _native_rows as _built
except ImportError:  # not built (no C compiler at install time): the pure path serves
    _built = None
_native_rows: Any = _built  # the C extension has no stubs

RESULT: int = 0
BATCH: int = 1
BATCH_LISTS: int = 2
"""What a body is: one answer whose result is a list of row objects (eth_getLogs); a batch whose results are row
objects, or null (eth_getBlockByNumber); a batch whose results are lists of row objects (eth_getBlockReceipts)."""


@dataclass(frozen=True)
class Count:
    """The number of items of a JSON list (0 for null or absent), as uint64. Its items are null or objects, as the pure
    path reads them (a list of structs); it reads their ``text`` keys as text, which refuses a list or an object there,
    so the scanner declines those too."""

    text: tuple[str, ...] = ()
    """The items' keys the pure path reads (as text)."""


@dataclass(frozen=True)
class Object:
    """One JSON object (or null) holding columns of the row it is in (a trace's ``action``): read as a struct of
    ``fields`` (an absent key: null; a null object: null in every field)."""

    fields: Mapping[str, tuple[str, Any]]


@dataclass(frozen=True)
class Typed:
    """An unsigned integer (uint64) taken only in one JSON form, where the pure path reads its key with a JSON type
    (Polars' schema of a trace_block document): ``"number"`` or ``"text"`` (a hex string)."""

    form: str


Kinds = Mapping[str, tuple[str, Any]]
"""``column -> (JSON key, kind)``: a kind is a column :data:`Kind`, a :class:`Count`, an :class:`Object`, a
:class:`Typed` or, for a list of objects, their own ``Kinds`` (read as a list of structs with those fields)."""

_CODES: dict[Kind, tuple[int, int]] = {
    "u64": (0, 0),
    "u8": (1, 0),
    "bool": (2, 0),
    "wei": (3, 0),
    "word": (4, 0),
    "address": (5, 20),
    "hash": (5, 32),
    "bytes8": (5, 8),
    "bloom": (5, 256),
    "data": (6, 0),
    "hash_list": (7, 0),
    "string": (11, 0),  # the text as sent (an escaped one: the pure path)
    "u64_list": (13, 0),  # a list of JSON numbers
}
_OBJECTS = 8
_COUNT = 9
_TEXT = 10
_OBJECT = 12
_FORMS = {"number": 1, "text": 2}
_NESTED: frozenset[Kind] = frozenset({"withdrawals", "authorizations", "access_list"})  # lists of objects


def available() -> bool:
    return _native_rows is not None and os.environ.get("CHAINFRAME_NATIVE", "1") != "0"


def _fields(kind: Any) -> Kinds | None:
    """The fields of a kind that is a list of objects (a nested column kind, or given as ``Kinds``), else None."""
    if isinstance(kind, Mapping):
        return kind
    if kind in _NESTED:
        return {name: (key, sub) for key, name, sub in STRUCT_FIELDS[kind]}
    return None


def _spec(kinds: Kinds) -> tuple[tuple[str, int, int, Any], ...] | None:
    """The scanner's spec for ``kinds``, or None when a kind is one it does not take."""
    spec: list[tuple[str, int, int, Any]] = []
    for key, kind in kinds.values():
        if isinstance(kind, Count):
            spec.append((key, _COUNT, 0, tuple((text, _TEXT, 0, None) for text in kind.text)))
            continue
        if isinstance(kind, Typed):
            spec.append((key, _CODES["u64"][0], _FORMS[kind.form], None))
            continue
        if isinstance(kind, Object):
            inner = _spec(kind.fields)
            if inner is None:
                return None
            spec.append((key, _OBJECT, 0, inner))
            continue
        fields = _fields(kind)
        children = _spec(fields) if fields is not None else None
        if children is not None:
            spec.append((key, _OBJECTS, 0, children))
        elif fields is None and kind in _CODES:
            spec.append((key, *_CODES[kind], None))
        else:
            return None
    return tuple(spec)


def _array(kind: Any, column: Any) -> pa.Array:
    length, nulls, valid, data, offsets, children = column
    validity = pa.py_buffer(valid) if valid is not None else None
    if isinstance(kind, Object):
        arrays = [_array(sub, child) for (_, sub), child in zip(kind.fields.values(), children, strict=True)]
        dtype = pa.struct([pa.field(name, a.type) for name, a in zip(kind.fields, arrays, strict=True)])
        return pa.StructArray.from_buffers(dtype, length, [validity], nulls, children=arrays)
    if kind == "u64_list":
        items = pa.Array.from_buffers(pa.uint64(), len(data) // 8, [None, pa.py_buffer(data)])
        return pa.Array.from_buffers(ARROW[kind], length, [validity, pa.py_buffer(offsets)], nulls, children=[items])
    fields = _fields(kind)
    if fields is not None:
        arrays = [_array(sub, child) for (_, sub), child in zip(fields.values(), children, strict=True)]
        items = pa.StructArray.from_arrays(arrays, names=list(fields))
        dtype = pa.list_(items.type) if isinstance(kind, Mapping) else ARROW[kind]
        return pa.Array.from_buffers(dtype, length, [validity, pa.py_buffer(offsets)], nulls, children=[items])
    dtype = pa.uint64() if isinstance(kind, Count | Typed) else ARROW[kind]
    if kind == "hash_list":
        items = pa.Array.from_buffers(pa.binary(32), len(data) // 32, [None, pa.py_buffer(data)])
        return pa.Array.from_buffers(dtype, length, [validity, pa.py_buffer(offsets)], nulls, children=[items])
    values = pa.py_buffer(data)
    buffers = [validity, pa.py_buffer(offsets), values] if offsets is not None else [validity, values]
    return pa.Array.from_buffers(dtype, length, buffers, nulls)


def scan(
    bodies: Sequence[bytes | memoryview], kinds: Kinds, mode: int, *, as_received: bool = False
) -> tuple[int, dict[str, pa.Array]] | None:
    """The rows of all ``bodies`` (one piece's answers) as typed arrays of ``kinds``, or None if any is declined:
    take the pure path. Batch rows follow the calls' ids; a null result is no row. ``as_received``: None also where
    a batch's envelopes are not in their ids' order (for a reader that keeps them as they came)."""
    if not available():
        return None
    spec = _spec(kinds)
    if spec is None:
        return None
    scanned = _native_rows.scan(bodies, spec, mode)
    if scanned is None:
        return None
    rows, ids, ids_sorted, columns = scanned
    out = {name: _array(kind, col) for (name, (_, kind)), col in zip(kinds.items(), columns, strict=True)}
    if not ids_sorted and as_received:
        return None
    if not ids_sorted:  # a stable sort: a list's rows keep their order
        order = pc.sort_indices(pa.Array.from_buffers(pa.int64(), rows, [None, pa.py_buffer(ids)]))
        out = {name: pc.take(arr, order) for name, arr in out.items()}
    return rows, out


def members(document: bytes | memoryview, span: tuple[int, int] | None = None) -> list[Any] | None:
    """The members of the JSON object at ``span`` of ``document`` (all of it by default) as ``[(key, start, end)]``
    of each value, or the items of a list as ``[(start, end)]``; None where it is neither (or not JSON), a key holds
    an escape, or the scanner is not built or turned off."""
    if not available():
        return None
    start, end = span if span is not None else (0, len(document))
    found: list[Any] | None = _native_rows.members(document, start, end)
    return found


def null_result(body: bytes) -> bool | None:
    """Whether ``"result"\\s*:\\s*null`` occurs in ``body``, searched without holding the GIL (the event loop runs
    meanwhile); None when the scanner is not built or turned off."""
    if not available():
        return None
    found: bool = _native_rows.null_result(body)
    return found


def block_stamps(body: bytes) -> tuple[int, int] | None:
    """How many block numbers ``body`` names and how many timestamps it holds, as ``_logs._BLOCK_NUMBER`` and
    ``_logs._STAMPED`` count them, searched without holding the GIL; None when the scanner is not built or turned
    off."""
    if not available():
        return None
    named, stamped = _native_rows.block_stamps(body)
    return named, stamped


def kinds_of(sources: Mapping[str, str], u256: U256) -> dict[str, tuple[str, Any]]:
    """``column -> (JSON key, kind)`` for a dataset's sourced columns."""
    return {column: (key, COLUMNS[column].kind_for(u256)) for column, key in sources.items()}
