"""Recorded real answers (mainnet and test chains, several forks) verify: block hashes, and transaction roots and
recovered senders of blocks recorded with their full transactions."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest

from chainframe.datasets import BLOCKS, TRANSACTIONS
from chainframe.verify import Report
from chainframe.verify._headers import check_block_hashes
from chainframe.verify._transactions import check_transactions_roots
from tests.fixtures import recorded_responses

BLOCK_METHODS = {"eth_getBlockByNumber", "eth_getBlockByHash"}
RECORDS = [
    r for r in recorded_responses() if r.method in BLOCK_METHODS and isinstance(r.result, dict) and r.result.get("hash")
]


def rlp_decode_v(raw: str) -> str:
    """The v of a legacy transaction's raw form: after six fields comes v, then two 32-byte words (r and s)."""
    data = bytes.fromhex(raw[2:])
    tail = data[-(2 * 33) :]  # r and s, each 0xa0 + 32 bytes when they are full length
    assert tail[0] == 0xA0
    assert tail[33] == 0xA0
    before = data[: -(2 * 33)]
    v = before[-1:] if before[-1] < 0x80 else b""
    return v.hex().lstrip("0") or "0"


def _table(dataset: Any, objects: list[dict[str, Any]]) -> Any:
    return dataset.from_objects(json.dumps(objects).encode(), chain_id=1, u256="binary")


@pytest.mark.parametrize("record", RECORDS, ids=[r.id for r in RECORDS])
def test_recorded_block_verifies(record: Any) -> None:
    block = record.result
    full = [t for t in block.get("transactions", []) if isinstance(t, dict)]
    header = {**block, "transactions": [t["hash"] for t in full]} if full else block
    blocks = _table(BLOCKS, [header])
    report = Report()
    check_block_hashes(blocks, report)
    if full:  # blocks recorded with hashes only, or with their list emptied by the recording tool, prove no root
        check_transactions_roots(_table(TRANSACTIONS, [{"blockTimestamp": block["timestamp"], **t} for t in full]),
                                 blocks, report)  # fmt: skip
    if record.path.endswith("testdata-from-rpc-difficulty-as-integer.json"):
        # In this fixture some transactions say v=0x1b while their own `raw` (which hashes to their hash) has
        # v=0x25: the objects were edited, and verification must say so, for exactly those transactions.
        edited = {t["hash"] for t in full if t["v"] != "0x" + rlp_decode_v(t["raw"])}
        assert edited
        assert {f.expected for f in report.failures if f.check == "transaction_hash"} == edited
        # Its edited v also recovers another sender, for exactly those transactions.
        assert {f.check for f in report.failures} == {"transaction_hash", "transactions_root", "sender"}
        assert len([f for f in report.failures if f.check == "sender"]) == len(edited)
        return
    assert report.failures == []
    assert report.skipped == [] or report.blocks_verified == {}


def test_recorded_uncle_proves_its_nephews_sha3_uncles() -> None:
    from chainframe.datasets import UNCLES
    from chainframe.verify._uncles import check_uncles
    from tests.fixtures import fixtures_root

    folder = fixtures_root() / "other/ethereumjs/packages/block/test/testdata"
    nephew = json.loads((folder / "testdata-from-rpc-with-uncles.json").read_text())
    uncle = json.loads((folder / "testdata-from-rpc-with-uncles_uncle-block-data.json").read_text())
    blocks = _table(BLOCKS, [nephew])
    row = {k: v for k, v in uncle.items() if k not in ("transactions", "uncles")}
    uncles = _table(UNCLES, [row])
    uncles = uncles.set_column(uncles.column_names.index("nephew_number"), "nephew_number",
                               pa.array([int(nephew["number"], 16)], pa.uint64()))  # fmt: skip
    report = Report()
    check_uncles(uncles, blocks, report)
    assert report.failures == []
    assert report.blocks_verified == {"uncles": 1}
    tampered = uncles.set_column(uncles.column_names.index("gas_used"), "gas_used", pa.array([1], pa.uint64()))
    report = Report()
    check_uncles(tampered, blocks, report)
    assert {f.check for f in report.failures} == {"uncle_hash", "sha3_uncles"}


FULL = [r for r in RECORDS if any(isinstance(t, dict) for t in r.result.get("transactions", []))]


@pytest.mark.parametrize("threaded", [False, True])
def test_batched_senders_are_the_reference_ones(monkeypatch: pytest.MonkeyPatch, threaded: bool) -> None:
    from chainframe.verify import _senders
    from chainframe.verify._hashing import keccak
    from chainframe.verify._transactions import recovery_input, sender, transaction_bytes

    monkeypatch.setattr(_senders, "_known", type(_senders._known)())  # nothing remembered from other tests
    monkeypatch.setattr(_senders, "THREADED", 2 if threaded else 10**9)
    txs = [
        {"blockTimestamp": r.result["timestamp"], **t}
        for r in FULL for t in r.result["transactions"] if isinstance(t, dict)
    ]  # fmt: skip
    rows = _table(TRANSACTIONS, txs).to_pylist()
    # Signatures that recover no key or another one: s zero, r past the curve's order, a flipped parity.
    rows.append({**rows[0], "s": bytes(32)})
    rows.append({**rows[1], "r": b"\xff" * 32})
    v, parity = rows[2]["v"], rows[2]["y_parity"]
    other = v + 1 if (v - 27 if v < 35 else v - 35) % 2 == 0 else v - 1
    rows.append({**rows[2], "v": other, "y_parity": None if parity is None else parity ^ 1})
    digests = [keccak(transaction_bytes(row)) for row in rows]
    want = [sender(row) for row in rows]
    assert None in want
    assert _senders.senders(rows, digests, recovery_input, sender) == want
    assert _senders.senders(rows, digests, recovery_input, lambda _: pytest.fail("remembered")) == want
