"""Decoded events against references computed independently (int.from_bytes on the raw JSON logs), on the devnet's
real logs and on hand-built ones for every type rule; shapes that do not match an event are left out, never misread."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet
import pytest

from chainframe import InputError, collect, extract
from chainframe.datasets import ValueOutOfRange
from chainframe.devnet import Devnet
from chainframe.devnet._node_rpc import NodeRPC
from chainframe.events import decode_events, erc20_transfers, erc721_transfers, keccak, parse_signature, topic0

TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"


def test_topic0_is_keccak_of_the_canonical_signature() -> None:
    assert topic0("Transfer(address,address,uint256)") == TRANSFER
    assert topic0("event Transfer(address indexed from, address indexed to, uint value)") == TRANSFER
    assert keccak(b"").hex() == "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"
    assert parse_signature("Approval(address indexed owner, address indexed spender, uint256)").params[2].name == "arg2"
    with pytest.raises(InputError, match="not an ABI type"):
        parse_signature("Bad(uint7 x)")


def test_erc20_transfers_of_the_devnet_equal_a_reference_decode(devnet: Devnet) -> None:
    token = devnet.truth.contracts["Token"]
    logs = collect("logs", blocks="0:latest", rpc=devnet.node.url)
    got = erc20_transfers(logs)
    node = NodeRPC(devnet.node.url)
    raw = node.call("eth_getLogs", {"fromBlock": "0x0", "toBlock": "latest", "topics": [TRANSFER]})
    node.close()
    want = [
        (int(r["blockNumber"], 16), int(r["logIndex"], 16), r["address"], r["topics"][1][-40:], r["topics"][2][-40:],
         int(r["data"], 16))
        for r in raw if len(r["topics"]) == 3
    ]  # fmt: skip
    assert len(want) > 100
    assert token in {w[2] for w in want}
    rows = zip(*(got[c].to_pylist() for c in ("block_number", "log_index", "token", "from_address", "to_address",
                                              "value")), strict=True)  # fmt: skip
    assert [(b, i, "0x" + t.hex(), f.hex(), to.hex(), int(v)) for b, i, t, f, to, v in rows] == want
    assert got.schema.field("value").type == pa.decimal128(38, 0)
    assert got.schema.field("from_address").type == pa.binary(20)
    assert got.schema.field("block_hash").type == pa.binary(32)
    assert erc721_transfers(logs).num_rows == 0  # the same topic0 with three topics is never read as ERC-721


def _word(value: int, signed: bool = False) -> bytes:
    return value.to_bytes(32, "big", signed=signed)


def _logs(*rows: tuple[list[bytes], bytes]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "block_number": list(range(len(rows))),
            "log_index": [0] * len(rows),
            "address": [b"\x11" * 20] * len(rows),
            "topics": [topics for topics, _ in rows],
            "data": [data for _, data in rows],
        },
        schema={"block_number": pl.UInt64, "log_index": pl.UInt64, "address": pl.Binary,
                "topics": pl.List(pl.Binary), "data": pl.Binary},
    )  # fmt: skip


def test_shapes_that_do_not_match_are_left_out_never_misread() -> None:
    t0 = bytes.fromhex(TRANSFER[2:])
    a, b = b"\x00" * 12 + b"\xaa" * 20, b"\x00" * 12 + b"\xbb" * 20
    logs = _logs(
        ([t0, a, b], _word(7)),  # ERC-20
        ([t0, a, b, _word(9)], b""),  # ERC-721: a fourth topic
        ([], b"\x01"),  # LOG0
        ([t0, a, b], _word(7) + b"\x00"),  # data longer than the event's
        ([b"\x99" * 32, a, b], _word(7)),  # another topic0
    )
    erc20, erc721 = erc20_transfers(logs), erc721_transfers(logs)
    assert erc20["block_number"].to_list() == [0]
    assert erc20["value"].to_list()[0] == 7
    assert erc721["block_number"].to_list() == [1]
    assert erc721["token_id"].to_list()[0] == _word(9)  # ids are often hashes: kept as their 32-byte word


def test_every_static_type_follows_the_column_rules() -> None:
    event = ("Kinds(uint8 indexed small, int64 indexed negative, bool flag, bytes32 tag, bytes4 selector, "
             "int256 delta, uint256 big, address who, string note, bytes blob)")  # fmt: skip
    spec = parse_signature(event)
    # the last two head words are the offsets of note and blob, counted from the start of data
    head = [_word(1), b"\x42" * 32, b"\xde\xad\xbe\xef" + bytes(28), _word(-5, signed=True), _word(10**30),
            bytes(12) + b"\xcc" * 20, _word(32 * 8), _word(32 * 10)]  # fmt: skip
    tail = _word(2) + b"hi".ljust(32, b"\x00") + _word(3) + b"\x01\x02\x03".ljust(32, b"\x00")
    logs = _logs(([spec.topic0, _word(200), _word(-2, signed=True)], b"".join(head) + tail))
    out = decode_events(logs, event)
    row = out.row(0, named=True)
    assert (row["small"], row["negative"], row["flag"]) == (200, -2, True)
    assert row["tag"] == b"\x42" * 32
    assert row["selector"] == b"\xde\xad\xbe\xef"
    assert (row["delta"], row["big"]) == (-5, 10**30)
    assert row["who"] == b"\xcc" * 20
    assert (row["note"], row["blob"]) == ("hi", b"\x01\x02\x03")
    assert out.schema["small"] == pl.UInt8
    assert out.schema["negative"] == pl.Int64
    arrow = decode_events(logs.to_arrow(), event)
    types = {f.name: f.type for f in arrow.schema}
    assert (types["who"], types["selector"], types["delta"], types["note"]) == (
        pa.binary(20),
        pa.binary(4),
        pa.decimal128(38, 0),
        pa.string(),
    )


def test_a_value_too_wide_is_an_error_naming_the_column_and_the_log_or_a_word_on_request() -> None:
    event = "Big(uint256 value)"
    logs = _logs(([parse_signature(event).topic0], _word(2**200)))
    with pytest.raises(ValueOutOfRange, match=r"value \(uint256\) at block 0, log 0"):
        decode_events(logs, event)
    assert decode_events(logs, event, u256="binary")["value"].to_list() == [_word(2**200)]


def test_several_events_and_a_whole_abi() -> None:
    abi: list[dict[str, Any]] = [
        {"type": "function", "name": "transfer", "inputs": []},
        {"type": "event", "name": "Set", "inputs": [{"name": "key", "type": "uint256", "indexed": True},
                                                     {"name": "value", "type": "uint256", "indexed": False}]},
    ]  # fmt: skip
    spec = parse_signature("Set(uint256 indexed key, uint256 value)")
    logs = _logs(([spec.topic0, _word(3)], _word(4)))
    assert decode_events(logs, abi)["value"].to_list() == [4]
    both = decode_events(logs, ["Set(uint256 indexed key, uint256 value)", "Transfer(address,address,uint256)"])
    assert sorted(both) == ["Set", "Transfer"]
    assert both["Transfer"].height == 0


def test_a_folder_is_decoded_like_the_rows_read_in_memory(devnet: Devnet, tmp_path: Path) -> None:
    extract("logs", blocks="0:latest", out=tmp_path, rpc=devnet.node.url, progress=False)
    from_folder = erc20_transfers(tmp_path)
    in_memory = erc20_transfers(collect("logs", blocks="0:latest", rpc=devnet.node.url))
    assert from_folder.sort_by([("block_number", "ascending"), ("log_index", "ascending")]).equals(
        in_memory.sort_by([("block_number", "ascending"), ("log_index", "ascending")])
    )


def test_transfer_datasets_extract_into_series_folders_like_any_other(devnet: Devnet, tmp_path: Path) -> None:
    token = devnet.truth.contracts["Token"]
    report = extract(["erc20_transfers", "erc721_transfers"], blocks="0:latest", out=tmp_path, rpc=devnet.http_url,
                     chunk_size=50, progress=False)  # fmt: skip
    stored = pa.concat_tables(
        [pa.parquet.read_table(p) for p in sorted((tmp_path / "erc20_transfers").glob("*.parquet"))]
    )
    reference = erc20_transfers(collect("logs", blocks="0:latest", rpc=devnet.node.url))
    assert report.datasets["erc20_transfers"]["rows"] == reference.num_rows > 100
    assert stored.select(["block_number", "log_index", "token", "value"]).equals(
        reference.select(["block_number", "log_index", "token", "value"])
    )
    assert report.datasets["erc721_transfers"]["rows"] == 0
    one = extract("erc20_transfers", blocks="0:latest", out=tmp_path / "one", rpc=devnet.http_url, address=token,
                  progress=False)  # fmt: skip
    assert 0 < one.datasets["erc20_transfers"]["rows"] <= reference.num_rows
