"""Answers whose rows need facts from the request (which block, which call): the fetch step records those facts next
to each result, so that ``transform`` stays a pure function of the bytes it is given.

Used by the low-volume datasets (uncles, proofs, traces); the high-volume ones read the node's bytes untouched.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from chainframe.rpc import RPCError

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl

Context = Mapping[str, int | str]


async def fetch_with_context(client: Any, calls: Sequence[tuple[str, list[Any]]], contexts: Sequence[Context]) -> bytes:
    """Call everything (batched); a JSON array of ``{**context, "result": result}``, null results dropped."""
    results = await client.batch(calls)
    rows = []
    for context, result in zip(contexts, results, strict=True):
        if isinstance(result, RPCError):
            raise result
        if result is not None:
            rows.append({**context, "result": result})
    return json.dumps(rows).encode()


def read_context(body: bytes, context: Mapping[str, pl.DataType], result: pl.DataType) -> pl.DataFrame:
    if body.strip() == b"[]":
        return pl.DataFrame(schema={**context, "result": result})
    return pl.read_json(io.BytesIO(body), schema={**context, "result": result})
