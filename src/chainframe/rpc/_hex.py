"""Scalar hex codecs for JSON-RPC values: quantities (``"0x1b4"``) and byte strings (``"0x00ff"``).

Ethereum JSON-RPC writes numbers as *quantities* (``0x`` + hex, no leading zeros, ``"0x0"`` for zero) and byte strings
as *data* (``0x`` + two hex digits per byte). Nodes are not always that tidy, so decoding is lenient where the meaning
stays unambiguous and strict where it does not.
"""

from __future__ import annotations

import re

__all__ = ["data", "quantity", "to_bytes", "to_int"]

# int(..., 16) and bytes.fromhex would also take "_", spaces and signs; JSON-RPC hex has none of those.
_HEX_DIGITS = re.compile(r"[0-9a-fA-F]*")


def to_int(value: str | int) -> int:
    """Decode a quantity.

    Accepts a ``0x`` hex string, with or without leading zeros, and a plain JSON integer, which some nodes use (anvil
    for a receipt's ``blockTimestamp``, geth's prestateTracer for ``nonce``). Text without ``0x`` is refused: ``"10"``
    could be ten or sixteen, and guessing would corrupt data silently.
    """
    if isinstance(value, bool):  # bool is an int subclass; a JSON true is never a quantity
        raise TypeError(f"expected a hex quantity, got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"negative quantity {value}")
        return value
    if not isinstance(value, str):
        raise TypeError(f"expected a hex quantity, got {type(value).__name__}")
    digits = value[2:]
    if not value.startswith("0x") or not digits or not _HEX_DIGITS.fullmatch(digits):
        raise ValueError(f"not a hex quantity: {value[:20]!r}")
    return int(digits, 16)


def to_bytes(value: str) -> bytes:
    """Decode ``0x`` data.

    An odd number of digits gets a leading zero (``"0x0"`` -> ``b"\\x00"``): some nodes write byte values the way they
    write quantities, e.g. geth echoes an ``eth_getProof`` storage key ``"0x00"`` as ``"0x0"``.
    """
    if not isinstance(value, str):
        raise TypeError(f"expected hex data, got {type(value).__name__}")
    digits = value[2:]
    if not value.startswith("0x") or not _HEX_DIGITS.fullmatch(digits):
        raise ValueError(f"not hex data: {value[:20]!r}")
    return bytes.fromhex("0" + digits if len(digits) % 2 else digits)


def quantity(value: int) -> str:
    """Encode a quantity canonically: ``0x`` + lowercase hex without leading zeros, ``"0x0"`` for zero."""
    if value < 0:
        raise ValueError(f"negative quantity {value}")
    return hex(value)


def data(value: bytes) -> str:
    """Encode bytes as ``0x`` + lowercase hex, two digits per byte (``"0x"`` for empty)."""
    return "0x" + value.hex()
