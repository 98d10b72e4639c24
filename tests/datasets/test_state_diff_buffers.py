"""The state diffs' columns written as Arrow buffers (datasets/_buffers.py) hold what Arrow's own constructors make of
the same values, nulls included, and a value that does not fit its column is refused, named, never wrapped."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa
import pytest

from chainframe.datasets import DecodeError, ValueOutOfRange, _buffers

ADDRESS = "0x" + "ab" * 20


def test_each_kind_equals_arrows_own_array() -> None:
    assert _buffers.u64([0, None, 2**64 - 1], "n").equals(pa.array([0, None, 2**64 - 1], pa.uint64()))
    assert _buffers.strings(["transaction", None, "système"]).equals(pa.array(["transaction", None, "système"]))
    hashes = _buffers.fixed_hex([ADDRESS, None, "0x1"], 20, "address")
    assert hashes.equals(pa.array([bytes.fromhex("ab" * 20), None, bytes(19) + b"\x01"], pa.binary(20)))
    assert _buffers.binary_hex(["0x", "0x6001", None], "code").equals(pa.array([b"", b"\x60\x01", None], pa.binary()))
    words = [0, None, 2**256 - 1]
    expected = [v if v is None else v.to_bytes(32, "big") for v in words]
    assert _buffers.words(words, "w").equals(pa.array(expected, pa.binary(32)))
    wei = [0, None, 10**38 - 1, 12345]
    assert _buffers.wei(wei, "balance_before").equals(
        pa.array([v if v is None else Decimal(v) for v in wei], pa.decimal128(38, 0))
    )
    assert len(_buffers.u64([], "n")) == 0


def test_a_value_that_does_not_fit_is_refused_by_name() -> None:
    with pytest.raises(ValueOutOfRange, match="nonce_after: 18446744073709551616 does not fit uint64"):
        _buffers.u64([1, 2**64], "nonce_after")
    with pytest.raises(ValueOutOfRange, match="balance_after: 100000000000000000000000000000000000000 does not fit"):
        _buffers.wei([10**38], "balance_after")
    with pytest.raises(ValueOutOfRange, match="storage_value_after: a value is wider than 256 bits"):
        _buffers.words([2**256], "storage_value_after")
    with pytest.raises(DecodeError, match="address: '0x" + "ab" * 21 + "' is not 0x-prefixed hex of at most 20"):
        _buffers.fixed_hex(["0x" + "ab" * 21], 20, "address")
    with pytest.raises(DecodeError, match="address: '0xzz' is not hex"):
        _buffers.fixed_hex(["0xzz"], 20, "address")
    with pytest.raises(DecodeError, match="code_after: '6001' is not 0x-prefixed hex"):
        _buffers.binary_hex(["6001"], "code_after")
