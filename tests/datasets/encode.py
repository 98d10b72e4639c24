"""Test helper: a typed Arrow value of a column back to the node's JSON text, one value at a time.

Written independently of :mod:`chainframe.datasets._convert` (its own table of struct keys and field kinds), so a
round trip through both checks the converter rather than restating it.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from chainframe.datasets import COLUMNS
from chainframe.datasets._columns import U256

# Our struct field -> (JSON key, kind), per nested kind, in the node's key order.
STRUCTS: dict[str, dict[str, tuple[str, str]]] = {
    "access_list": {"address": ("address", "address"), "storage_keys": ("storageKeys", "hash_list")},
    "withdrawals": {
        "index": ("index", "u64"),
        "validator_index": ("validatorIndex", "u64"),
        "address": ("address", "address"),
        "amount": ("amount", "u64"),
    },
    "authorizations": {
        "chain_id": ("chainId", "u64"),
        "address": ("address", "address"),
        "nonce": ("nonce", "u64"),
        "y_parity": ("yParity", "u8"),
        "r": ("r", "word"),
        "s": ("s", "word"),
    },
}
LISTS = {"hash_list": "hash", "bytes_list": "data", "u64_list": "u64"}
BYTES_KINDS = {"address": 20, "hash": 32, "bytes8": 8, "bloom": 256, "data": None}


def encode(value: Any, kind: str) -> Any:
    """``value`` (as ``pyarrow`` gives it to Python) of this kind, as the node writes it; None for null."""
    if value is None:
        return None
    if kind in ("u64", "u8"):
        assert type(value) is int, value
        return hex(value)
    if kind == "wei":
        assert isinstance(value, Decimal), value
        assert value == value.to_integral_value(), value
        return hex(int(value))
    if kind == "word":
        assert isinstance(value, bytes), value
        assert len(value) == 32, value
        return hex(int.from_bytes(value, "big"))  # a quantity: leading zeros dropped
    if kind in BYTES_KINDS:
        size = BYTES_KINDS[kind]
        assert isinstance(value, bytes), value
        assert size is None or len(value) == size, value
        return "0x" + value.hex()
    if kind in ("bool", "string"):
        return value
    if kind in LISTS:
        return [encode(item, LISTS[kind]) for item in value]
    if kind in STRUCTS:
        fields = STRUCTS[kind]
        return [
            None if item is None else {key: encode(item[name], sub) for name, (key, sub) in fields.items()}
            for item in value
        ]
    raise ValueError(f"no JSON encoding for kind {kind!r}")


def encode_column(column: str, value: Any, u256: U256 = "decimal") -> Any:
    """A value of a column of the one table (wei columns stored as ``u256`` says), as JSON text."""
    return encode(value, COLUMNS[column].kind_for(u256))
