"""The type rules on hand-made objects: what fits, what raises (naming the column), and what stays null or empty."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from chainframe.datasets import LOGS, RECEIPTS, TRANSACTIONS, DecodeError, ValueOutOfRange

HASH = "0x" + "11" * 32
TX_HASH = "0x" + "22" * 32
SENDER = "0x" + "33" * 20
RECIPIENT = "0x" + "44" * 20


def _transaction(**changes: Any) -> dict[str, Any]:
    tx = {
        "blockHash": HASH,
        "blockNumber": "0x7",
        "from": SENDER,
        "gas": "0x5208",
        "gasPrice": "0x1",
        "hash": TX_HASH,
        "input": "0x",
        "nonce": "0x0",
        "to": RECIPIENT,
        "transactionIndex": "0x0",
        "value": "0x0",
        "type": "0x0",
        "v": "0x1b",
        "r": "0x1",
        "s": "0x2",
    }
    return {**tx, **changes}


def _receipt(**changes: Any) -> dict[str, Any]:
    receipt = {
        "blockHash": HASH,
        "blockNumber": "0x7",
        "contractAddress": None,
        "cumulativeGasUsed": "0x5208",
        "effectiveGasPrice": "0x1",
        "from": SENDER,
        "gasUsed": "0x5208",
        "logs": [],
        "logsBloom": "0x" + "00" * 256,
        "status": "0x1",
        "to": RECIPIENT,
        "transactionHash": TX_HASH,
        "transactionIndex": "0x0",
        "type": "0x2",
    }
    return {**receipt, **changes}


def _log(**changes: Any) -> dict[str, Any]:
    log = {
        "address": RECIPIENT,
        "topics": [HASH],
        "data": "0x",
        "blockNumber": "0x7",
        "transactionHash": TX_HASH,
        "transactionIndex": "0x0",
        "blockHash": HASH,
        "logIndex": "0x0",
        "removed": False,
    }
    return {**log, **changes}


def _rows(dataset: Any, *objects: dict[str, Any]) -> pa.Table:
    return dataset.from_objects(json.dumps(list(objects)).encode(), chain_id=1)


def _value(amount: int) -> Any:
    return _rows(TRANSACTIONS, _transaction(value=hex(amount))).column("value")[0].as_py()


# --- wei: decimal128(38, 0), never wrapped or rounded ------------------------------------------------------------


@pytest.mark.parametrize("amount", [0, 1, 2**126, 10**38 - 1])
def test_wei_that_fits_is_exact(amount: int) -> None:
    assert _value(amount) == Decimal(amount)


@pytest.mark.parametrize("amount", [2**127, 10**38, 2**128 - 1, 2**128, 2**256 - 1])
def test_wei_that_does_not_fit_raises_naming_the_column(amount: int) -> None:
    # 2**127 (about 1.7e38, 39 digits) is already above 1e38 - 1, the most decimal128(38, 0) holds.
    with pytest.raises(ValueOutOfRange, match=r"^value: "):
        _value(amount)


def test_wei_overflow_in_a_later_row_still_raises() -> None:
    rows = [_transaction(value=hex(n), transactionIndex=hex(i)) for i, n in enumerate([1, 2, 10**38, 3])]
    with pytest.raises(ValueOutOfRange, match="value"):
        _rows(TRANSACTIONS, *rows)


def test_wei_overflow_names_the_block() -> None:
    with pytest.raises(ValueOutOfRange, match=r"block.*7|0x7"):
        _rows(TRANSACTIONS, _transaction(value=hex(10**38)))


def test_wei_as_words_holds_any_256_bit_amount() -> None:
    table = TRANSACTIONS.from_objects(
        json.dumps([_transaction(value=hex(2**256 - 1))]).encode(), chain_id=1, u256="binary"
    )
    assert table.schema.field("value").type == pa.binary(32)
    assert table.column("value")[0].as_py() == b"\xff" * 32


# --- words: 32 bytes, big-endian, from a quantity ----------------------------------------------------------------


def test_word_is_left_padded_to_32_bytes() -> None:
    row = _rows(TRANSACTIONS, _transaction(r="0x1", s="0x" + "ff" * 32)).to_pylist()[0]
    assert row["r"] == bytes(31) + b"\x01"
    assert row["s"] == b"\xff" * 32


def test_33_byte_word_raises_naming_the_column() -> None:
    with pytest.raises(ValueOutOfRange, match=r"^r: "):
        _rows(TRANSACTIONS, _transaction(r="0x" + "01" * 33))


# --- fixed binary and quantities: malformed input raises, naming the column ----------------------------------------


def test_19_byte_address_raises_naming_the_column() -> None:
    with pytest.raises(DecodeError, match=r"^to_address: ") as caught:
        _rows(TRANSACTIONS, _transaction(to="0x" + "44" * 19))
    assert not isinstance(caught.value, ValueOutOfRange)


def test_31_byte_hash_in_a_list_raises_naming_the_column() -> None:
    with pytest.raises(DecodeError, match=r"^topics: "):
        _rows(LOGS, _log(topics=[HASH, "0x" + "11" * 31]))


@pytest.mark.parametrize("text", ["0xzz", "0x", "0x1g", "-0x1", "", "twelve"])
def test_non_hex_quantity_raises_naming_the_column(text: str) -> None:
    with pytest.raises(DecodeError, match=r"^nonce: ") as caught:
        _rows(TRANSACTIONS, _transaction(nonce=text))
    assert not isinstance(caught.value, ValueOutOfRange)


@pytest.mark.parametrize(
    ("key", "column", "text"), [("nonce", "nonce", hex(2**64)), ("type", "transaction_type", "0x100")]
)
def test_quantity_too_big_for_its_integer_raises(key: str, column: str, text: str) -> None:
    with pytest.raises(ValueOutOfRange, match=rf"^{column}: "):
        _rows(TRANSACTIONS, _transaction(**{key: text}))


def test_largest_u64_fits() -> None:
    assert _rows(TRANSACTIONS, _transaction(nonce=hex(2**64 - 1))).column("nonce")[0].as_py() == 2**64 - 1


def test_odd_length_data_raises() -> None:
    with pytest.raises(DecodeError, match=r"^input: "):
        _rows(TRANSACTIONS, _transaction(input="0xabc"))


@pytest.mark.parametrize(
    ("key", "column", "text"),
    [
        ("input", "input", "abcd"),
        ("to", "to_address", "44" * 20 + "ab"),
        ("blockHash", "block_hash", "xx" + "11" * 32),
        ("r", "r", "12ab"),
    ],
)
def test_hex_without_0x_raises_naming_the_column(key: str, column: str, text: str) -> None:
    # Dropping the first two characters unchecked would misread each of these as valid, shorter hex.
    with pytest.raises(DecodeError, match=rf"^{column}: "):
        _rows(TRANSACTIONS, _transaction(**{key: text}))


# --- JSON numbers, nulls and empty lists ---------------------------------------------------------------------------


def test_json_integer_timestamp_is_read_as_decimal() -> None:
    # anvil writes a receipt's blockTimestamp as a JSON number; other rows of the same answer may hold hex.
    table = _rows(
        RECEIPTS,
        _receipt(blockTimestamp=1_700_000_012),
        _receipt(blockTimestamp="0x6553f10c", transactionIndex="0x1"),
    )
    assert table.column("block_timestamp").to_pylist() == [1_700_000_012, 0x6553F10C]
    assert table.column("block_time")[0].as_py() == datetime.fromtimestamp(1_700_000_012, UTC)


def test_json_integer_timestamp_alone_is_read_as_decimal() -> None:
    table = _rows(RECEIPTS, _receipt(blockTimestamp=10))  # 10, not 0x10
    assert table.column("block_timestamp").to_pylist() == [10]


def test_json_null_stays_null() -> None:
    table = _rows(RECEIPTS, _receipt(to=None, contractAddress=None, status=None, root=HASH))
    row = table.to_pylist()[0]
    assert row["to_address"] is None
    assert row["contract_address"] is None
    assert row["status"] is None
    assert row["root"] == bytes.fromhex(HASH[2:])
    tx = _rows(TRANSACTIONS, _transaction(to=None, chainId=None)).to_pylist()[0]
    assert tx["to_address"] is None
    assert tx["transaction_chain_id"] is None


def test_absent_keys_are_null_not_zero() -> None:
    row = _rows(RECEIPTS, _receipt()).to_pylist()[0]
    assert row["blob_gas_used"] is None
    assert row["blob_gas_price"] is None
    assert row["block_timestamp"] is None
    assert row["block_time"] is None


def test_log_without_topics_has_an_empty_list() -> None:
    table = _rows(LOGS, _log(topics=[]), _log(logIndex="0x1"))
    assert table.column("topics").to_pylist() == [[], [bytes.fromhex(HASH[2:])]]
    assert table.column("topics").null_count == 0


def test_receipt_without_logs_counts_zero() -> None:
    assert _rows(RECEIPTS, _receipt(logs=[])).column("log_count").to_pylist() == [0]


def test_empty_input_is_empty_bytes() -> None:
    assert _rows(TRANSACTIONS, _transaction(input="0x")).column("input").to_pylist() == [b""]


def test_a_sliced_list_column_with_nulls_converts() -> None:
    """Polars may hand a list column over as a slice of a larger array (a fuzzed transactions answer did): pyarrow
    rebuilds no list from offsets that do not start its values when it has a null mask, so the slice is copied."""
    from chainframe.datasets._convert import convert

    whole = pa.array([["0x" + "01" * 32], None, ["0x" + "02" * 32, "0x" + "03" * 32], None], pa.large_list(pa.string()))
    converted = convert(whole.slice(1), "hash_list", "blob_versioned_hashes")
    assert converted.to_pylist() == [None, [b"\x02" * 32, b"\x03" * 32], None]


# --- flags: a JSON boolean, or a quantity 0x0/0x1 -----------------------------------------------------------------


@pytest.mark.parametrize("native", ["1", "0"])
def test_a_flag_sent_as_a_quantity_is_read(native: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """anvil 1.7.1 --network optimism sends a system deposit's ``"isSystemTx": "0x1"`` (op-geth sends ``true``); the
    scanner declines the text and the pure path reads it (it stopped the whole block before)."""
    monkeypatch.setenv("CHAINFRAME_NATIVE", native)
    flags = [True, False, "0x1", "0x0", None]
    rows = [_transaction(type="0x7e", transactionIndex=hex(i), isSystemTx=f) for i, f in enumerate(flags)]
    rows.append(_transaction(type="0x7e", transactionIndex="0x5"))  # absent
    table = _rows(TRANSACTIONS, *rows)
    assert table.column("is_system_tx").to_pylist() == [True, False, True, False, None, None]
    with pytest.raises(DecodeError, match=r"^is_system_tx: 'yes' is not a boolean"):
        _rows(TRANSACTIONS, _transaction(isSystemTx="yes"))
