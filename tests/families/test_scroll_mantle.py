"""Scroll's (and Mantle's) own transaction types, proven on real transactions by their hashes (issue 43).

No whole Scroll block with its receipts was found in public test data (searched: the code index for ``"queueIndex"``
in JSON, ``rpc.scroll.io`` and ``scrollscan.com`` in fixtures, scroll-tech/go-ethereum's, scroll-tech/rollup-node's
and scroll-tech/reth's test data, subsquid/squid-sdk's fixtures, erigontech/rpc-tests' networks). What was found are
three real Scroll mainnet L1 messages in reth's Scroll tests (``tests/data/NOTICE.md``): two as the node answered
them (``eth_getTransactionByHash``, one recorded with ``cast rpc`` from ``rpc.scroll.io``, one from scrollscan), and
one as its raw encoding beside its scrollscan link. Each is hashed here by the family's declared encoding, the one
verify uses for the transactions root, from the row the transactions dataset stores of it.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from chainframe._keccak import keccak256
from chainframe.datasets import TRANSACTIONS
from chainframe.families import OP_STACK, SCROLL, family_of
from chainframe.verify._receipts import receipt_bytes
from tests.fixtures import RECORDED_DIR

RETH = RECORDED_DIR / "networks" / "reth" / "crates" / "scroll" / "alloy"
SCROLL_RETH = RECORDED_DIR / "networks" / "scroll-reth" / "crates" / "primitives" / "src" / "alloy_compat.rs"
SCROLL_MAINNET = 534352


def _rust_json(path: Any) -> list[dict[str, Any]]:
    """The JSON objects a Rust test source holds as raw string literals (``r#"{...}"#``) that are L1 messages."""
    found = [json.loads(text) for text in re.findall(r'r#"(\{.*?\})"#', path.read_text(encoding="utf-8"), re.S)]
    return [tx for tx in found if "queueIndex" in tx and "hash" in tx]


ANSWERED = _rust_json(RETH / "rpc-types" / "src" / "transaction.rs") + _rust_json(SCROLL_RETH)


def _raw_with_link() -> tuple[str, bytes]:
    """The one L1 message reth's consensus tests hold encoded, with the scrollscan link naming its hash."""
    text = (RETH / "consensus" / "src" / "transaction" / "l1_message.rs").read_text(encoding="utf-8")
    link, raw = r"scrollscan\.com/tx/(0x[0-9a-f]{64})>", r"let bytes = Bytes::from_static\(&hex!\(\"([0-9a-f]+)\""
    (found,) = re.findall(link + r"\s*" + raw, text)
    return found[0], bytes.fromhex(found[1])


def _decode(data: bytes) -> tuple[Any, bytes]:
    """One RLP item and what follows it (enough for a transaction's fields)."""
    head = data[0]
    if head < 0x80:
        return data[:1], data[1:]
    if head < 0xB8:
        return data[1 : 1 + head - 0x80], data[1 + head - 0x80 :]
    if head < 0xC0:
        n = head - 0xB7
        size = int.from_bytes(data[1 : 1 + n], "big")
        return data[1 + n : 1 + n + size], data[1 + n + size :]
    n = head - 0xF7 if head >= 0xF8 else 0
    size = int.from_bytes(data[1 : 1 + n], "big") if n else head - 0xC0
    body, items = data[1 + n : 1 + n + size], []
    while body:
        item, body = _decode(body)
        items.append(item)
    return items, data[1 + n + size :]


def _rows(objects: list[dict[str, Any]], chain_id: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = TRANSACTIONS.from_objects(json.dumps(objects).encode(), chain_id=chain_id).to_pylist()
    return rows


def test_scroll_chains_are_read_as_the_scroll_family() -> None:
    assert family_of(534352) is family_of(534351) is SCROLL


def test_the_recordings_are_distinct_real_l1_messages() -> None:
    assert len(ANSWERED) == 2
    hashes = {tx["hash"] for tx in ANSWERED} | {_raw_with_link()[0]}
    assert len(hashes) == 3
    assert all(tx["type"] == "0x7e" and tx["from"] == tx["sender"] for tx in ANSWERED)


@pytest.mark.parametrize("index", [0, 1])
def test_a_stored_l1_message_is_proven_by_its_hash(index: int) -> None:
    tx = ANSWERED[index]
    (row,) = _rows([tx], SCROLL_MAINNET)
    assert row["queue_index"] == int(tx["queueIndex"], 16)
    assert row["from_address"] == bytes.fromhex(tx["sender"][2:])
    kind = SCROLL.transaction_types[0x7E]
    assert all(row[name] is not None for name in kind.needs)
    assert keccak256(kind.encode(row)) == row["transaction_hash"] == bytes.fromhex(tx["hash"][2:])


@pytest.mark.parametrize(("column", "value"), [("queue_index", 1), ("from_address", b"\x01" * 20), ("gas", 21000)])
def test_a_changed_field_of_an_l1_message_is_caught(column: str, value: Any) -> None:
    (row,) = _rows([ANSWERED[0]], SCROLL_MAINNET)
    kind = SCROLL.transaction_types[0x7E]
    assert keccak256(kind.encode({**row, column: value})) != row["transaction_hash"]


def test_the_raw_l1_message_is_the_familys_encoding_of_its_fields() -> None:
    tx_hash, raw = _raw_with_link()
    assert raw[0] == 0x7E
    assert keccak256(raw) == bytes.fromhex(tx_hash[2:])
    fields, rest = _decode(raw[1:])
    assert rest == b""
    queue_index, gas, to, value, data, sender = fields
    row = {
        "queue_index": int.from_bytes(queue_index, "big"), "gas": int.from_bytes(gas, "big"), "to_address": to,
        "value": int.from_bytes(value, "big"), "input": data, "from_address": sender,
    }  # fmt: skip
    assert SCROLL.transaction_types[0x7E].encode(row) == raw


def test_the_type_byte_means_what_the_chains_family_says() -> None:
    """0x7e is OP's deposit and Scroll's L1 message: an L1 message read on an OP chain is no deposit (its source hash
    is null, so verify stores it unproven, naming what is missing), and each family's encoding reads its own fields."""
    (row,) = _rows([ANSWERED[0]], 10)
    deposit = OP_STACK.transaction_types[0x7E]
    assert [name for name in deposit.needs if row[name] is None] == ["source_hash"]
    assert "queue_index" in SCROLL.transaction_types[0x7E].reads
    assert "queue_index" not in deposit.reads
    assert "source_hash" not in SCROLL.transaction_types[0x7E].reads


def test_the_family_declares_its_receipt_and_what_no_root_holds() -> None:
    """Its L1 message receipt is Ethereum's typed receipt (declared so that verify does not set it aside)."""
    receipt = {"status": 1, "root": None, "cumulative_gas_used": 21000, "logs_bloom": b"\x00" * 256}
    log = {"address": b"\x53" * 20, "topics": [b"\x01" * 32], "data": b"\x02"}
    items: list[Any] = [[log["address"], log["topics"], log["data"]]]
    encoded = SCROLL.receipt_types[0x7E].encode(receipt, items, 0, SCROLL_MAINNET)
    assert encoded == receipt_bytes({**receipt, "transaction_type": 0x7E}, [log])
    assert "receipts.l1_fee" in SCROLL.unprovable
    proven, _ = SCROLL.proofs(SCROLL_MAINNET, 0)
    assert any("0x7e L1 message" in line for line in proven)
