"""Bor's state-sync transaction (issue 43): marked ``is_state_sync`` where it is stored, and kept out of the roots
by verify only where its hash is the block's, on the one recorded in public test data (Erigon's RPC tests, Polygon
block 67,836,608: its transaction and receipt; sources in ``tests/data/NOTICE.md``).

The whole block was not recorded, so the roots without it are shown on the recorded Polygon blocks that hold none
(tests/verify/test_l2_recorded.py: no false alarm, nothing skipped); here, that the row is chosen by the hash rule and
not by the stored mark: a forged mark fails, a changed hash is not set aside.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest

from chainframe.datasets import LOGS, RECEIPTS, TRANSACTIONS
from chainframe.families import POLYGON_POS
from chainframe.verify import Report, verify_tables
from chainframe.verify._outside_roots import set_aside_outside_roots
from tests.fixtures import RECORDED_DIR
from tests.verify.test_l2_recorded import BY_ID, _tables

ERIGON = RECORDED_DIR / "networks" / "rpc-tests" / "integration" / "polygon-pos"


def _result(method: str) -> dict[str, Any]:
    (pair,) = json.loads((ERIGON / method / "test_01.json").read_text(encoding="utf-8"))
    result: dict[str, Any] = pair["response"]["result"]
    return result


TX = _result("eth_getTransactionByHash")
RECEIPT = _result("eth_getTransactionReceipt")


def _receipts(chain_id: int) -> list[bytes]:
    """The receipt as a node's eth_getBlockReceipts answer holding it (the recorded object, unchanged)."""
    return [json.dumps({"jsonrpc": "2.0", "id": 1, "result": [RECEIPT]}).encode()]


def test_the_recorded_state_sync_transaction_has_the_blocks_hash() -> None:
    number, block = int(TX["blockNumber"], 16), bytes.fromhex(TX["blockHash"][2:])
    assert POLYGON_POS.outside_roots_hash(number, block) == bytes.fromhex(TX["hash"][2:])
    assert RECEIPT["transactionHash"] == TX["hash"]
    assert TX["from"] == TX["to"] == "0x" + "00" * 20
    assert number % 16 == 0


@pytest.mark.parametrize(("chain_id", "mark"), [(137, True), (1, None), (10, None)])
def test_it_is_marked_on_polygon_only(chain_id: int, mark: bool | None) -> None:
    transactions = TRANSACTIONS.from_objects(json.dumps([TX]).encode(), chain_id=chain_id)
    receipts = RECEIPTS.transform(_receipts(chain_id), chain_id=chain_id)
    assert transactions["is_state_sync"].to_pylist() == [mark]
    assert receipts["is_state_sync"].to_pylist() == [mark]
    assert receipts["log_count"].to_pylist() == [len(RECEIPT["logs"])]


def _aside(receipts: pa.Table) -> tuple[dict[str, pa.Table | None], Report]:
    blocks = pa.table({"block_number": pa.array([int(TX["blockNumber"], 16)], pa.uint64()),
                       "block_hash": pa.array([bytes.fromhex(TX["blockHash"][2:])], pa.binary(32))})  # fmt: skip
    logs = LOGS.from_receipts(_receipts(137), chain_id=137)
    report = Report()
    kept = set_aside_outside_roots({"transactions": None, "receipts": receipts, "logs": logs}, blocks, POLYGON_POS,
                                   report)  # fmt: skip
    return kept, report


def test_it_and_its_logs_are_set_aside_with_the_reason() -> None:
    kept, report = _aside(RECEIPTS.transform(_receipts(137), chain_id=137))
    assert kept["receipts"] is not None
    assert kept["receipts"].num_rows == 0
    assert kept["logs"] is not None
    assert kept["logs"].num_rows == 0
    assert report.failures == []
    assert [(s.dataset, s.check, s.blocks) for s in report.skipped] == [("receipts", "outside the roots", 1)]
    assert "matic-bor-receipt-" in report.skipped[0].reason


def test_a_changed_hash_is_not_set_aside_though_marked() -> None:
    receipts = RECEIPTS.transform(_receipts(137), chain_id=137)
    rows = receipts.to_pylist()
    rows[0]["transaction_hash"] = rows[0]["transaction_hash"][:-1] + b"\x00"
    kept, report = _aside(pa.Table.from_pylist(rows, schema=receipts.schema))
    assert kept["receipts"] is not None
    assert kept["receipts"].num_rows == 1
    assert [(f.dataset, f.check, f.expected) for f in report.failures] == [("receipts", "is_state_sync", "True")]
    assert report.skipped == []


@pytest.mark.parametrize("name", ["transactions", "receipts"])
def test_a_forged_mark_on_an_ordinary_row_is_caught_and_the_roots_still_checked(name: str) -> None:
    recording = BY_ID["polygon-23887160"]
    tables = _tables(recording)
    rows = tables[name].to_pylist()
    rows[0]["is_state_sync"] = True
    forged = pa.Table.from_pylist(rows, schema=tables[name].schema)
    report = verify_tables(**{**tables, name: forged}, chain_id=recording.chain_id)
    assert [(f.dataset, f.check) for f in report.failures] == [(name, "is_state_sync")]
    assert report.skipped == []  # nothing set aside: both roots were rebuilt from every row
