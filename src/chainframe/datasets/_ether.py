"""Wei to ether without rounding: the same integers, read with 18 decimal places.

In Polars, ``decimal(38, 0) / 10**18`` keeps scale 0 and rounds to whole ether (7.91 ether shows as 8). A wei
column's unscaled 128-bit integers read as ``decimal128(38, 18)`` are exactly the amounts in ether; every value the
wei type holds (below 1e38 wei, 1e20 ether) fits, so nothing is rounded or lost. Float64 only when asked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from chainframe import _kernels as pc
from chainframe._errors import InputError

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl

ETHER = pa.decimal128(38, 18)


def _arrow_ether(array: Any) -> Any:
    if isinstance(array, pa.ChunkedArray):
        return pa.chunked_array([_arrow_ether(c) for c in array.chunks], ETHER)
    if array.type != pa.decimal128(38, 0):
        raise InputError(f"wei_to_ether needs a decimal128(38, 0) wei column; got {array.type}")
    return pa.Array.from_buffers(ETHER, len(array), array.buffers(), array.null_count, array.offset)


def wei_to_ether(wei: Any, *, as_float: bool = False) -> Any:
    """Amounts of wei (a Polars Series or expression, or an Arrow array of ``decimal128(38, 0)``) in ether.

    Exact ``decimal(38, 18)`` by default; ``as_float=True`` gives Float64 (rounded to about 16 digits).
    """
    if isinstance(wei, pl.Expr):
        return wei.map_batches(lambda s: wei_to_ether(s, as_float=as_float))
    if isinstance(wei, pl.Series):
        ether = pl.Series(wei.name, _arrow_ether(wei.cast(pl.Decimal(38, 0)).to_arrow()))
        return ether.cast(pl.Float64) if as_float else ether
    ether = _arrow_ether(wei)
    return pc.cast(ether, pa.float64()) if as_float else ether
