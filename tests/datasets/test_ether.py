"""Wei to ether is exact (Polars' own division rounds to whole ether), and Float64 only when asked."""

from __future__ import annotations

from decimal import Decimal

import polars as pl
import pyarrow as pa
import pytest

from chainframe import InputError
from chainframe.datasets import wei_to_ether

WEI = [Decimal(7_910_000_000_000_000_000), Decimal(10**38 - 1), None, Decimal(1)]
ETHER = [Decimal("7.91"), Decimal("99999999999999999999.999999999999999999"), None, Decimal("1e-18")]


def test_series_expression_and_arrow_are_exact() -> None:
    series = pl.Series("value", WEI, dtype=pl.Decimal(38, 0))
    assert pl.DataFrame({"value": series}).select(pl.col("value") / 10**18)["value"][0] == Decimal(8)  # the trap
    assert wei_to_ether(series).to_list() == ETHER
    assert pl.DataFrame({"value": series}).select(wei_to_ether(pl.col("value")))["value"].to_list() == ETHER
    arrow = wei_to_ether(pa.array(WEI, pa.decimal128(38, 0)).slice(1))
    assert arrow.type == pa.decimal128(38, 18)
    assert arrow.to_pylist() == ETHER[1:]
    assert wei_to_ether(series, as_float=True).to_list()[:1] == [7.91]


def test_refuses_other_types() -> None:
    with pytest.raises(InputError, match="decimal128"):
        wei_to_ether(pa.array([1, 2]))
