"""``0x`` text to the bytes a binary column holds, so a comparison cannot silently match nothing.

Addresses and hashes are stored as binary; comparing them with ``'0x…'`` text matches no row, with no error, in
DuckDB and in Polars. ``binary`` turns the text into the bytes to compare with, and refuses what is not hex.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chainframe._errors import InputError

if TYPE_CHECKING:
    import polars as pl


def binary(text: str | bytes, *, size: int | None = None) -> bytes:
    """The bytes of ``'0x…'`` text (checksummed or not); ``size=20`` for an address, ``32`` for a hash."""
    if isinstance(text, bytes):
        raw = text
    else:
        digits = text.strip().removeprefix("0x").removeprefix("0X")
        try:
            raw = bytes.fromhex(digits)
        except ValueError:
            raise InputError(f"{text!r} is not 0x-prefixed hex") from None
    if size is not None and len(raw) != size:
        raise InputError(f"{text!r} is {len(raw)} bytes; expected {size}")
    return raw


def unhex0x(column: str | pl.Expr) -> pl.Expr:
    """A Polars expression turning a column of ``'0x…'`` text (checksummed or not) into the binary values our
    columns hold, to join or compare a text column (a CSV of addresses, say) with a dataset; text that is not hex
    raises when the expression runs, rather than matching nothing. The DuckDB macro of the same name does the same."""
    import polars as pl

    expr = pl.col(column) if isinstance(column, str) else column
    return expr.str.strip_chars().str.strip_prefix("0x").str.strip_prefix("0X").str.decode("hex", strict=True)
