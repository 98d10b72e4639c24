"""Decoding hand-built logs, checked against eth-abi's per-row decode (an independent implementation)."""

from __future__ import annotations

import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pytest
from eth_abi import decode as abi_decode
from eth_abi import encode as abi_encode

from chainframe import decode_event, decode_events, erc20_transfers, erc721_transfers
from chainframe.datasets import DecodeError, ValueOutOfRange
from chainframe.decode import ERC1155_BATCH, ERC1155_SINGLE, binary, erc1155_transfers, keccak256, parse_event

TRANSFER = parse_event("Transfer(address indexed from, address indexed to, uint256 value)")
TOKEN = bytes.fromhex("a0b86991c6218b36c1d19d4a2e9eb0ce3606eb48")


def word(value: int, *, signed: bool = False) -> bytes:
    return value.to_bytes(32, "big", signed=signed)


def padded(address: bytes) -> bytes:
    return bytes(12) + address


def logs(rows: list[tuple[list[bytes], bytes]]) -> pl.DataFrame:
    """A logs frame as the logs dataset has it: identity columns, topics, data."""
    return pl.DataFrame(
        {
            "block_number": [10 + i for i in range(len(rows))],
            "transaction_index": [0] * len(rows),
            "transaction_hash": [keccak256(bytes([i])) for i in range(len(rows))],
            "log_index": list(range(len(rows))),
            "address": [TOKEN] * len(rows),
            "topics": [t for t, _ in rows],
            "data": [d for _, d in rows],
        },
        schema_overrides={"block_number": pl.UInt64, "log_index": pl.UInt64, "transaction_index": pl.UInt64},
    )


def test_keccak_is_keccak_not_nist_sha3() -> None:
    assert keccak256(b"").hex() == "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"
    assert TRANSFER.signature == "Transfer(address,address,uint256)"
    assert TRANSFER.topic0.hex() == "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"


def test_erc20_transfers_match_eth_abi_and_other_shapes_are_left_out() -> None:
    rng = random.Random(7)
    rows: list[tuple[list[bytes], bytes]] = []
    expected = []
    for _ in range(200):
        a, b, v = rng.randbytes(20), rng.randbytes(20), rng.randrange(10**30)
        rows.append(([TRANSFER.topic0, padded(a), padded(b)], abi_encode(["uint256"], [v])))
        expected.append((a, b, Decimal(abi_decode(["uint256"], rows[-1][1])[0])))
    # ERC-721: same topic0, a fourth topic, no data. LOG0, another event, a short data field.
    rows.append(([TRANSFER.topic0, padded(TOKEN), padded(TOKEN), word(5)], b""))
    rows.append(([], word(1)))
    rows.append(([keccak256(b"Approval(address,address,uint256)"), padded(TOKEN), padded(TOKEN)], word(1)))
    rows.append(([TRANSFER.topic0, padded(TOKEN), padded(TOKEN)], b"\x01"))
    frame = decode_event(logs(rows), TRANSFER)
    assert isinstance(frame, pl.DataFrame)
    assert frame.columns == [
        "block_number", "transaction_index", "transaction_hash", "log_index", "address", "from", "to", "value",
    ]  # fmt: skip
    assert list(zip(frame["from"], frame["to"], frame["value"], strict=True)) == expected
    assert frame["log_index"].to_list() == list(range(200))

    nft = erc721_transfers(logs(rows))
    assert nft.select("from_address", "to_address", "token_id").rows() == [(TOKEN, TOKEN, Decimal(5))]
    assert erc20_transfers(logs(rows))["value"].to_list() == [v for _, _, v in expected]


def test_arrow_in_arrow_out_with_the_column_table_types() -> None:
    rows = [([TRANSFER.topic0, padded(TOKEN), padded(bytes(20))], word(3))]
    arrow = logs(rows).to_arrow()
    arrow = arrow.cast(arrow.schema.set(arrow.schema.get_field_index("address"), pa.field("address", pa.binary(20))))
    table = decode_event(arrow, TRANSFER)
    assert isinstance(table, pa.Table)
    assert table.schema.field("address").type == pa.binary(20)
    assert table.schema.field("block_number").type == pa.uint64()
    assert table.schema.field("from").type == pa.binary(20)
    assert table.schema.field("value").type == pa.decimal128(38, 0)
    assert table.to_pylist()[0]["to"] == bytes(20)


def test_u256_rule_decimal_bounds_and_binary() -> None:
    values = [0, 10**38 - 1, 2**126, 1]
    rows = [([TRANSFER.topic0, padded(TOKEN), padded(TOKEN)], word(v)) for v in values]
    assert decode_event(logs(rows), TRANSFER)["value"].to_list() == [Decimal(v) for v in values]
    for bad in (10**38, 2**128 + 1, 2**256 - 1):
        frame = logs([*rows, ([TRANSFER.topic0, padded(TOKEN), padded(TOKEN)], word(bad))])
        with pytest.raises(ValueOutOfRange, match=rf"value: {bad} at block_number 14 log_index 4 .*u256='binary'"):
            decode_event(frame, TRANSFER)
        binary_words = decode_event(frame, TRANSFER, u256="binary")["value"].to_list()
        assert [int.from_bytes(w, "big") for w in binary_words] == [*values, bad]


def test_signed_wide_integers() -> None:
    event = parse_event("Delta(int256 amount)")
    values = [-(10**38) + 1, -1, 0, 10**38 - 1, -(2**126)]
    rows = [([event.topic0], word(v, signed=True)) for v in values]
    assert decode_event(logs(rows), event)["amount"].to_list() == [Decimal(v) for v in values]
    for bad in (-(10**38), -(2**200)):
        with pytest.raises(ValueOutOfRange, match="amount"):
            decode_event(logs([([event.topic0], word(bad, signed=True))]), event)


STATIC = ["uint8", "int8", "uint16", "int32", "uint64", "int64", "bool", "address", "bytes4", "bytes32", "uint128"]


def random_value(t: str, rng: random.Random) -> Any:
    if t == "bool":
        return rng.random() < 0.5
    if t == "address":
        return "0x" + rng.randbytes(20).hex()
    if t.startswith("bytes"):
        return rng.randbytes(int(t[5:]))
    bits = int(t.removeprefix("u").removeprefix("int"))
    if t.startswith("u"):
        return rng.randrange(2 ** min(bits, 126))
    return rng.randrange(-(2 ** (min(bits, 126) - 1)), 2 ** (min(bits, 126) - 1))


def as_column(t: str, value: Any) -> Any:
    """eth-abi's answer in our column's Python form."""
    if t == "address":
        return bytes.fromhex(value[2:])
    if t == "uint128":
        return Decimal(value)
    return value


@pytest.mark.parametrize("indexed", [False, True])
def test_static_types_match_eth_abi(indexed: bool) -> None:
    rng = random.Random(11)
    types = STATIC[:3] if indexed else STATIC
    params = ", ".join(f"{t}{' indexed' if indexed else ''} p{i}" for i, t in enumerate(types))
    event = parse_event(f"Many({params})")
    rows, expected = [], []
    for _ in range(100):
        values = [random_value(t, rng) for t in types]
        if indexed:
            topics = [event.topic0] + [abi_encode([t], [v]) for t, v in zip(types, values, strict=True)]
            rows.append((topics, b""))
            reference = [abi_decode([t], w)[0] for t, w in zip(types, topics[1:], strict=True)]
        else:
            rows.append(([event.topic0], abi_encode(types, values)))
            reference = list(abi_decode(types, rows[-1][1]))
        expected.append(tuple(as_column(t, v) for t, v in zip(types, reference, strict=True)))
    frame = decode_event(logs(rows), event)
    assert frame.select(f"p{i}" for i in range(len(types))).rows() == expected
    table = decode_event(logs(rows).to_arrow(), event)
    assert [table.schema.field(f"p{i}").type for i in range(3)] == [pa.uint8(), pa.int8(), pa.uint16()]


def test_dynamic_types_match_eth_abi() -> None:
    rng = random.Random(3)
    types = ["string", "bytes", "uint256[]", "address[]", "bytes32[2]", "string[]", "uint8", "int16[3]"]
    event = parse_event(f"Dyn(bytes indexed tag, {', '.join(f'{t} p{i}' for i, t in enumerate(types))})")
    rows, expected = [], []
    for _ in range(50):
        values = [
            "".join(rng.choice("aé€z ") for _ in range(rng.randrange(40))),
            rng.randbytes(rng.randrange(70)),
            [rng.randrange(10**30) for _ in range(rng.randrange(4))],
            ["0x" + rng.randbytes(20).hex() for _ in range(rng.randrange(3))],
            [rng.randbytes(32), rng.randbytes(32)],
            ["x" * rng.randrange(40) for _ in range(rng.randrange(3))],
            rng.randrange(256),
            [rng.randrange(-(2**15), 2**15) for _ in range(3)],
        ]
        tag = rng.randbytes(32)
        rows.append(([event.topic0, tag], abi_encode(types, values)))
        ref = abi_decode(types, rows[-1][1])
        expected.append(
            (tag, ref[0], ref[1], [Decimal(v) for v in ref[2]], [bytes.fromhex(a[2:]) for a in ref[3]],
             list(ref[4]), list(ref[5]), ref[6], list(ref[7]))
        )  # fmt: skip
    frame = decode_event(logs(rows), event)
    assert frame.select("tag", *(f"p{i}" for i in range(len(types)))).rows() == expected


def test_tuples_match_eth_abi() -> None:
    rng = random.Random(5)
    event = parse_event(
        "Fill((address maker, uint256 amount) indexed order, (address to, uint64 fee) leg, "
        "(string memo, uint256[] ids) note, (bool ok, bytes32 tag)[] flags, uint8 after)"
    )
    types = ["(address,uint64)", "(string,uint256[])", "(bool,bytes32)[]", "uint8"]
    rows, expected = [], []
    for _ in range(40):
        values = [
            ("0x" + rng.randbytes(20).hex(), rng.randrange(2**64)),
            ("memo" * rng.randrange(20), [rng.randrange(10**30) for _ in range(rng.randrange(4))]),
            [(rng.random() < 0.5, rng.randbytes(32)) for _ in range(rng.randrange(3))],
            rng.randrange(256),
        ]
        key = rng.randbytes(32)
        rows.append(([event.topic0, key], abi_encode(types, values)))
        leg, note, flags, after = abi_decode(types, rows[-1][1])
        expected.append(
            (key, {"to": bytes.fromhex(leg[0][2:]), "fee": leg[1]},
             {"memo": note[0], "ids": [Decimal(v) for v in note[1]]},
             [{"ok": ok, "tag": tag} for ok, tag in flags], after)
        )  # fmt: skip
    frame = decode_event(logs(rows).to_arrow(), event)
    assert frame.schema.field("leg").type == pa.struct([("to", pa.binary(20)), ("fee", pa.uint64())])
    assert frame.schema.field("order").type == pa.binary(32)  # an indexed tuple is its hash, as the ABI says
    assert [tuple(r[c] for c in ("order", "leg", "note", "flags", "after")) for r in frame.to_pylist()] == expected


def test_a_bad_encoding_fails_loudly_naming_the_log() -> None:
    rows = [([TRANSFER.topic0, b"\x01" * 32, padded(TOKEN)], word(1))]
    with pytest.raises(DecodeError, match=r"from: .*block_number 10 log_index 0"):
        decode_event(logs(rows), TRANSFER)
    text = parse_event("Note(string text)")
    with pytest.raises(DecodeError, match=r"text: .*block_number 10"):
        decode_event(logs([([text.topic0], word(32) + word(100))]), text)


def test_abi_json_and_several_events(tmp_path: Path) -> None:
    abi = """[
      {"type": "function", "name": "transfer", "inputs": []},
      {"type": "event", "name": "Transfer", "anonymous": false, "inputs": [
        {"name": "from", "type": "address", "indexed": true}, {"name": "to", "type": "address", "indexed": true},
        {"name": "value", "type": "uint256", "indexed": false}]},
      {"type": "event", "name": "Approval", "anonymous": false, "inputs": [
        {"name": "owner", "type": "address", "indexed": true}, {"name": "spender", "type": "address", "indexed": true},
        {"name": "value", "type": "uint256", "indexed": false}]}
    ]"""
    approval = keccak256(b"Approval(address,address,uint256)")
    rows = [
        ([TRANSFER.topic0, padded(TOKEN), padded(bytes(20))], word(1)),
        ([approval, padded(bytes(20)), padded(TOKEN)], word(2)),
        ([approval, padded(TOKEN), padded(TOKEN)], word(3)),
    ]
    (tmp_path / "logs").mkdir()
    logs(rows).write_parquet(tmp_path / "logs" / "logs__1__0_to_9.parquet")
    for source in (logs(rows), tmp_path):
        found = decode_events(source, abi)
        assert list(found) == ["Transfer(address,address,uint256)", "Approval(address,address,uint256)"]
        assert found["Transfer(address,address,uint256)"]["value"].to_list() == [Decimal(1)]
        assert found["Approval(address,address,uint256)"].select("owner", "value").rows() == [
            (bytes(20), Decimal(2)), (TOKEN, Decimal(3)),
        ]  # fmt: skip


def test_parameter_names_that_clash_with_log_columns() -> None:
    event = parse_event("Moved(address indexed address, uint256 data, bool)")
    frame = decode_event(logs([([event.topic0, padded(TOKEN)], word(4) + word(1))]), event)
    assert frame.select("address", "arg_address", "data", "arg2").rows() == [(TOKEN, TOKEN, Decimal(4), True)]


def test_binary_literal_for_comparisons() -> None:
    checksummed = "0xA0b86991c6218b36c1d19d4a2e9eB0cE3606eB48"
    assert binary(checksummed, size=20) == TOKEN
    frame = decode_event(logs([([TRANSFER.topic0, padded(TOKEN), padded(TOKEN)], word(1))]), TRANSFER)
    assert frame.filter(pl.col("from") == binary(checksummed)).height == 1
    with pytest.raises(ValueError, match="expected 20"):
        binary("0xa0b8", size=20)
    with pytest.raises(ValueError, match="not 0x-prefixed hex"):
        binary("0xzz")


def test_unhex0x_turns_a_text_column_into_the_bytes_to_join_on() -> None:
    from chainframe.decode import unhex0x

    frame = decode_event(logs([([TRANSFER.topic0, padded(TOKEN), padded(TOKEN)], word(1))]), TRANSFER)
    wanted = pl.DataFrame({"token": ["0xA0b86991c6218b36c1d19d4a2e9eB0cE3606eB48", " 0x" + "11" * 20]})
    joined = frame.join(wanted.with_columns(unhex0x("token").alias("address")), on="address")
    assert joined["token"].to_list() == ["0xA0b86991c6218b36c1d19d4a2e9eB0cE3606eB48"]
    with pytest.raises(pl.exceptions.ComputeError, match="hex"):
        pl.DataFrame({"t": ["0xzz"]}).select(unhex0x(pl.col("t")))


def test_a_string_that_is_not_utf8_or_a_wide_value_in_an_array_names_the_log() -> None:
    text = parse_event("Note(string text)")
    with pytest.raises(DecodeError, match=r"text: the string at block_number 10 .* is not UTF-8"):
        decode_event(logs([([text.topic0], abi_encode(["bytes"], [b"\xff\xfe"]))]), text)
    amounts = parse_event("Amounts(uint256[] xs)")
    rows = [([amounts.topic0], abi_encode(["uint256[]"], [[1, 10**38]]))]
    with pytest.raises(ValueOutOfRange, match=r"xs: cannot decode the uint256\[\] at block_number 10"):
        decode_event(logs(rows), amounts)
    words = decode_event(logs(rows), amounts, u256="binary")["xs"].to_list()
    assert words == [[word(1), word(10**38)]]


def test_erc1155_single_and_batch_one_row_per_id() -> None:
    single = parse_event(ERC1155_SINGLE)
    batch = parse_event(ERC1155_BATCH)
    operator, alice, bob = (padded(bytes([i]) * 20) for i in (1, 2, 3))
    rows = [
        ([batch.topic0, operator, alice, bob], abi_encode(["uint256[]", "uint256[]"], [[7, 8, 9], [70, 80, 90]])),
        ([single.topic0, operator, bob, alice], abi_encode(["uint256", "uint256"], [5, 50])),
        ([TRANSFER.topic0, alice, bob], word(1)),
    ]
    frame = erc1155_transfers(logs(rows))
    assert frame.select("log_index", "batch_index", "from_address", "token_id", "value").rows() == [
        (0, 0, alice[12:], Decimal(7), Decimal(70)),
        (0, 1, alice[12:], Decimal(8), Decimal(80)),
        (0, 2, alice[12:], Decimal(9), Decimal(90)),
        (1, 0, bob[12:], Decimal(5), Decimal(50)),
    ]
    table = erc1155_transfers(logs(rows).to_arrow(), u256="binary")
    assert isinstance(table, pa.Table)
    assert table.schema.field("token_id").type == pa.binary(32)
    uneven = [([batch.topic0, operator, alice, bob], abi_encode(["uint256[]", "uint256[]"], [[1, 2], [3]]))]
    with pytest.raises(DecodeError, match="block_number 10, log_index 0: ids and values differ"):
        erc1155_transfers(logs(uneven))
