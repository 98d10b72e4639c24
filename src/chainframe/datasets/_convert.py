"""JSON text to typed Arrow arrays, vectorized: no Python per row.

Responses are read by a native JSON reader into Arrow arrays of strings (nested lists and structs kept); here each
array becomes its column's type with Polars' string kernels (hex parsing and decoding) and Arrow casts. Nested kinds
(lists, structs) are converted by rebuilding them around their converted children, so the whole tree stays columnar.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import pyarrow as pa

from chainframe import _kernels as pc
from chainframe._errors import DecodeError as DecodeError
from chainframe._errors import ValueOutOfRange as ValueOutOfRange
from chainframe.datasets._columns import ARROW, Kind

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl

# How each nested kind reads from JSON (key, our field, kind of the field).
STRUCT_FIELDS: dict[Kind, tuple[tuple[str, str, Kind], ...]] = {
    "access_list": (("address", "address", "address"), ("storageKeys", "storage_keys", "hash_list")),
    "withdrawals": (
        ("index", "index", "u64"),
        ("validatorIndex", "validator_index", "u64"),
        ("address", "address", "address"),
        ("amount", "amount", "u64"),
    ),
    "authorizations": (
        ("chainId", "chain_id", "u64"),
        ("address", "address", "address"),
        ("nonce", "nonce", "u64"),
        ("yParity", "y_parity", "u8"),
        ("r", "r", "word"),
        ("s", "s", "word"),
    ),
}
LIST_ITEMS: dict[Kind, Kind] = {"hash_list": "hash", "bytes_list": "data", "u64_list": "u64"}
_FIXED = {"address": 20, "hash": 32, "bytes8": 8, "bloom": 256}
_FLAGS = {"true": True, "false": False, "0x1": True, "0x0": False}
"""A flag's JSON text: a boolean, or as a quantity (anvil 1.7.1 --network optimism: ``"isSystemTx": "0x1"``)."""


def read_dtype(kind: Kind) -> pl.DataType:
    """The Polars type to read a JSON value of this kind as: strings all the way down, so nothing is lost (a flag
    too: ``true``, or the quantity ``0x1`` anvil's OP mode sends for ``isSystemTx``)."""
    if kind in LIST_ITEMS:
        return pl.List(pl.String())
    if kind in STRUCT_FIELDS:
        return pl.List(pl.Struct({key: read_dtype(sub) for key, _, sub in STRUCT_FIELDS[kind]}))
    return pl.String()


def _parse_int(s: pl.Series, dtype: pl.datatypes.IntegerType, column: str) -> pl.Series:
    is_hex = s.str.starts_with("0x")
    if is_hex.sum() == len(s) - s.null_count():
        try:
            return s.str.slice(2).str.to_integer(base=16, dtype=dtype, strict=True)
        except pl.exceptions.PolarsError:
            pass
    # Rare: a node wrote a JSON number (anvil's receipt blockTimestamp), or a value is malformed or too big.
    parsed = pl.select(
        pl.when(is_hex)
        .then(s.str.slice(2).str.to_integer(base=16, dtype=dtype, strict=False))
        .otherwise(s.str.to_integer(base=10, dtype=dtype, strict=False))
    ).to_series()
    bad = parsed.is_null() & s.is_not_null()
    if bad.any():
        example = s.filter(bad)[0]
        digits = len(example.removeprefix("0x"))
        valid = all(c in "0123456789abcdefABCDEF" for c in example.removeprefix("0x"))
        if valid and digits > 0:
            hint = " (decode with u256='binary' for 32-byte words)" if dtype == pl.UInt128() else ""
            raise ValueOutOfRange(f"{column}: {example} does not fit {dtype}{hint}")
        raise DecodeError(f"{column}: {example!r} is not a hex quantity")
    return parsed


def _hex_bytes(s: pl.Series, column: str) -> pl.Series:
    if not s.str.starts_with("0x").fill_null(True).all():
        raise DecodeError(f"{column}: {s.filter(~s.str.starts_with('0x'))[0]!r} is not 0x-prefixed hex")
    try:
        return s.str.slice(2).str.decode("hex", strict=True)
    except pl.exceptions.PolarsError:
        raise DecodeError(f"{column}: a value is not 0x-prefixed hex with whole bytes") from None


def _leaf(arr: pa.Array, kind: Kind, column: str) -> pa.Array:
    if kind == "string":
        return arr
    if kind == "bool":
        if pa.types.is_boolean(arr.type):
            return arr
        flags = [None if v is None else _FLAGS.get(v) for v in arr.to_pylist()]
        bad = next((v for v, f in zip(arr.to_pylist(), flags, strict=True) if v is not None and f is None), None)
        if bad is not None:
            raise DecodeError(f"{column}: {bad!r} is not a boolean")
        return pa.array(flags, pa.bool_())
    s = pl.Series(column, arr)
    if kind in ("u64", "u8"):
        out = _parse_int(s, pl.UInt64(), column)
        if kind == "u8":
            if (out > 255).any():
                raise ValueOutOfRange(f"{column}: {out.max()!s} does not fit uint8")
            out = out.cast(pl.UInt8())
        return out.to_arrow()
    if kind == "wei":
        wide = _parse_int(s, pl.UInt128(), column)
        try:
            return wide.cast(pl.Decimal(38, 0), strict=True).to_arrow().cast(ARROW["wei"])
        except pl.exceptions.PolarsError:
            raise ValueOutOfRange(
                f"{column}: {wide.max()!s} does not fit decimal128(38, 0) (values are never wrapped or rounded); "
                "this chain holds larger amounts: decode with u256='binary' to store wei columns as 32-byte words"
            ) from None
    if kind == "word":
        if not s.str.starts_with("0x").fill_null(True).all():
            # Decimal text (one recorded node wrote a difficulty so): exact Python conversion, on this rare path only.
            s = pl.Series(column, [v if v is None or v.startswith("0x") or not v.isdigit() else hex(int(v)) for v in s])
        if not s.str.starts_with("0x").fill_null(True).all():
            raise DecodeError(f"{column}: {s.filter(~s.str.starts_with('0x'))[0]!r} is not 0x-prefixed hex")
        if (s.str.len_bytes() > 66).any():
            raise ValueOutOfRange(f"{column}: a value is wider than 256 bits")
        return pc.cast(_hex_bytes("0x" + s.str.slice(2).str.zfill(64), column).to_arrow(), pa.binary(32))
    decoded = _hex_bytes(s, column).to_arrow()
    if kind in _FIXED:
        size = _FIXED[kind]
        try:
            return pc.cast(decoded, pa.binary(size))
        except pa.ArrowInvalid:
            raise DecodeError(f"{column}: expected {size}-byte values") from None
    return pc.cast(decoded, pa.binary())


def leaf_expr(key: str | pl.Expr, kind: Kind) -> pl.Expr | None:
    """One Polars expression converting a JSON-text column of a scalar kind, or None for nested kinds.

    Lenient on purpose (a bad value becomes null): :func:`convert_frame` compares null counts afterwards and sends
    only a column that lost values through the exact path, which names the column and the value.
    """
    col = pl.col(key) if isinstance(key, str) else key
    if kind == "string":
        return col
    if kind == "bool":
        return col.replace_strict(_FLAGS, default=None, return_dtype=pl.Boolean())
    if kind in LIST_ITEMS and LIST_ITEMS[kind] != "u64":
        item = leaf_expr(pl.element(), LIST_ITEMS[kind])
        return col.list.eval(item) if item is not None else None
    # Without its 0x prefix a value becomes null here, and then an error on the exact path.
    digits = pl.when(col.str.starts_with("0x")).then(col.str.slice(2))
    if kind in ("u64", "u8", "wei"):
        dtype = pl.UInt128() if kind == "wei" else pl.UInt64()
        # Hex only: the rare JSON number (anvil writes a receipt's blockTimestamp so) takes the exact path.
        parsed = digits.str.to_integer(base=16, dtype=dtype, strict=False)
        if kind == "u8":
            return parsed.cast(pl.UInt8(), strict=False)
        if kind == "wei":
            return parsed.cast(pl.Decimal(38, 0), strict=False)
        return parsed
    if kind == "word":
        return digits.str.zfill(64).str.decode("hex", strict=False)
    if kind in _FIXED or kind == "data":
        return digits.str.decode("hex", strict=False)
    return None


@functools.cache
def _expr(key: str, kind: Kind) -> pl.Expr | None:
    """:func:`leaf_expr` of a JSON key, made once: building the expressions cost about 6.5 ms a piece (1.35 s of
    tests/datasets/test_native.py's fuzz's 206 pieces on the pure path), more than running them on a few rows."""
    return leaf_expr(key, kind)


@functools.cache
def _named(column: str, key: str, kind: Kind) -> pl.Expr:
    expr = _expr(key, kind)
    assert expr is not None
    return expr.alias(column)


def _where(frame: pl.DataFrame, key: str, expr: pl.Expr, block_key: str | None) -> str:
    """`` at block N`` for the first row whose value did not convert, when the frame has block numbers."""
    if block_key is None or block_key not in frame.columns:
        return ""
    failed = frame.select((expr.is_null() & pl.col(key).is_not_null()).arg_true().first()).item()
    return "" if failed is None else f" at block {frame[block_key][failed]}"


def convert_frame(
    frame: pl.DataFrame, kinds: dict[str, tuple[str, Kind]], *, block_key: str | None = None
) -> dict[str, pa.Array]:
    """Convert the columns of ``frame`` (JSON keys as text): ``kinds`` maps column -> (JSON key, kind).
    ``block_key`` (the JSON key of block numbers) lets an error say which block held the bad value.

    Scalar columns go through one Polars ``select`` (one parallel pass); nested ones through :func:`convert`.
    """
    present = {c: (k, kind) for c, (k, kind) in kinds.items() if k in frame.columns}
    scalar = {c: e for c, (k, kind) in present.items() if (e := _expr(k, kind)) is not None}
    converted = frame.select([_named(c, k, kind) for c, (k, kind) in present.items() if c in scalar]) if (
        scalar) else pl.DataFrame()  # fmt: skip

    def nulls(f: pl.DataFrame, names: list[str]) -> tuple[int, ...]:
        # For list columns, count null items too: a list item that failed to convert became null.
        types = f.schema  # built anew on each access
        exprs = [
            (pl.col(n).list.explode().null_count() if isinstance(types[n], pl.List) else pl.col(n).null_count())
            for n in names
        ]
        return tuple(f.select(exprs).row(0)) if names else ()

    before = nulls(frame, [present[c][0] for c in scalar])
    after = nulls(converted, list(scalar))
    table = converted.to_arrow()
    out: dict[str, pa.Array] = {}
    for (column, lost), had in zip(zip(scalar, after, strict=True), before, strict=True):
        key, kind = present[column]
        if lost != had:  # some value did not convert: the exact path raises with the column and value
            try:
                out[column] = convert(frame[key].to_arrow(), kind, column)
            except DecodeError as exc:
                raise type(exc)(f"{exc}{_where(frame, key, scalar[column], block_key)}") from None
            continue
        arr = table[column].combine_chunks()
        if kind in _FIXED:
            try:
                arr = pc.cast(arr, pa.binary(_FIXED[kind]))
            except pa.ArrowInvalid:
                raise DecodeError(f"{column}: expected {_FIXED[kind]}-byte values") from None
        elif kind == "word":
            try:
                arr = pc.cast(arr, pa.binary(32))
            except pa.ArrowInvalid:
                raise ValueOutOfRange(f"{column}: a value is wider than 256 bits") from None
        try:
            out[column] = pc.cast(arr, ARROW[kind])
        except pa.ArrowInvalid:
            raise DecodeError(f"{column}: an item has the wrong size for {ARROW[kind]}") from None
    for column, (key, kind) in present.items():
        if column not in scalar:
            out[column] = convert(frame[key].to_arrow(), kind, column)
    return out


def convert(arr: pa.Array | pa.ChunkedArray, kind: Kind, column: str) -> pa.Array:
    """An array read as JSON text (see :func:`read_dtype`) as its column's Arrow type."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if kind in LIST_ITEMS or kind in STRUCT_FIELDS:
        assert isinstance(arr, pa.ListArray | pa.LargeListArray)
        if arr.offset:  # a slice: from_arrays takes no null mask with offsets that do not start the values
            arr = pa.concat_arrays([arr])
        values = arr.values
        if kind in LIST_ITEMS:
            items = convert(values, LIST_ITEMS[kind], column)
        else:
            assert isinstance(values, pa.StructArray)
            children = [convert(values.field(key), sub, f"{column}.{name}") for key, name, sub in STRUCT_FIELDS[kind]]
            names = [name for _, name, _ in STRUCT_FIELDS[kind]]
            items = pa.StructArray.from_arrays(children, names=names, mask=values.is_null())
        mask = arr.is_null() if arr.null_count else None
        return pc.cast(type(arr).from_arrays(arr.offsets, items, mask=mask), ARROW[kind])
    return _leaf(arr, kind, column)
