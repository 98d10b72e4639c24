"""Reading JSON-RPC answers (as received) with a native reader: one row per result object, JSON keys as columns.

Everything is read as text (see :func:`chainframe.datasets._convert.read_dtype`), so nothing is lost before the
columns are converted. Batch answers can come in any order: rows follow the calls' ids.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import TYPE_CHECKING

from chainframe.datasets._convert import DecodeError

if TYPE_CHECKING:
    import polars as pl

    Fields = Mapping[str, pl.DataType]
else:
    from chainframe._lazy import polars as pl


def _result_slice(body: bytes) -> bytes | None:
    """The bytes of a single answer's ``result`` array, or None when the result is null."""
    start = body.find(b'"result"')
    if start < 0:
        raise DecodeError("the answer has no result")
    start = body.find(b":", start) + 1
    if start == 0:
        raise DecodeError("the answer is cut short after its result key")
    while body[start : start + 1] in (b" ", b"\n", b"\r", b"\t"):
        start += 1
    if body.startswith(b"null", start):
        return None
    if body[start : start + 1] != b"[":
        raise DecodeError("expected the answer's result to be a list")
    end = body.rfind(b"]")  # id and jsonrpc never hold a ']'
    if end < start:
        raise DecodeError("the answer's result list is cut short")
    return body[start : end + 1]


def _read(data: bytes, schema: Mapping[str, pl.DataType]) -> pl.DataFrame:
    try:
        return pl.read_json(io.BytesIO(data), schema=dict(schema))
    except pl.exceptions.PolarsError as exc:
        raise DecodeError(f"the answer does not have the expected shape: {str(exc).splitlines()[0]}") from None


def result_rows(body: bytes, fields: Fields) -> pl.DataFrame:
    """A single answer whose result is a list of objects (eth_getLogs, eth_getBlockReceipts): a row per object."""
    items = _result_slice(body)
    if items is None or items.strip() == b"[]":
        return pl.DataFrame(schema=dict(fields))
    return _read(items, fields)


def batch_results(body: bytes, result: pl.DataType) -> pl.Series:
    """A batch answer (an array of envelopes): the results, in the order of the calls' ids.

    An item holding an error raises: an error is not "no rows" (the client normally retries or raises first).
    """
    error = pl.Struct({"code": pl.Int64(), "message": pl.String()})
    frame = _read(body, {"id": pl.Int64(), "result": result, "error": error})
    errors = frame.filter(pl.col("error").is_not_null())
    if errors.height:
        first = errors.row(0, named=True)
        raise DecodeError(f"batch item {first['id']} is an error, not a result: {first['error']}")
    return frame.sort("id")["result"]


def batch_rows(body: bytes, fields: Fields, *, each: str = "object") -> pl.DataFrame:
    """Rows of a batch answer: one per result object (``each="object"``) or per item of each result list."""
    struct = pl.Struct(dict(fields))
    results = batch_results(body, pl.List(struct) if each == "list" else struct)
    frame = results.to_frame("r")
    if each == "list":
        frame = frame.explode("r")
    return frame.filter(pl.col("r").is_not_null()).unnest("r")
