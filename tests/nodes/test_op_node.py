"""A real OP-mode node: anvil 1.7.1 with ``--network optimism`` on chain id 10 (so the OP Stack family follows from
the chain id), holding the devnet's usual traffic with OP deposits beside it (with and without mint, calling a
contract, creating one, one system deposit). Every column of blocks, transactions, receipts and logs equals the node's
own JSON; ``extract --verify`` and ``verify --rpc`` prove the transactions and receipts roots of every block (deposits
included); a changed byte of a deposit's source hash or mint is caught.

What this node answers otherwise than op-geth, and what is done about it: ``"isSystemTx": "0x1"`` (read as true); the
receipt's ``"type": "0x7E"`` and its ``blockTimestamp`` as a JSON number (read); a deposit's ``depositNonce`` is the
sender's nonce after it, not before (stored as sent: the receipts root commits to it, and proves it), and its
transaction ``nonce`` 0x0 (so the address a deposit creates is skipped with its reason, never failed)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chainframe.cli import main
from chainframe.devnet import OP_WORKLOAD, Devnet, GroundTruth, WorkloadSpec
from tests.nodes.answers import NodeAnswers, compare
from tests.nodes.test_datasets import _rows, _signed_chain_id
from tests.nodes.test_verify import _tampered

MAIN = ("blocks", "transactions", "receipts", "logs")
DEPOSIT = 0x7E
# What no OP header commits to on this chain (each the family's declared reason), and nothing else.
UNPROVABLE = {"blocks withdrawals_root", "receipts blob_gas_used", "receipts contract_address"}


@pytest.fixture(scope="module")
def op_node() -> Iterator[Devnet]:
    with Devnet(workload=OP_WORKLOAD) as devnet:
        yield devnet


@pytest.fixture(scope="module")
def answers(op_node: Devnet) -> NodeAnswers:
    return NodeAnswers(op_node)


@pytest.fixture(scope="module")
def extracted(op_node: Devnet, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The four main datasets of the whole chain, extracted with --verify (which must pass)."""
    out = tmp_path_factory.mktemp("op")
    argv = ["extract", *MAIN, "--blocks", f"0:{op_node.truth.head}", "--rpc", op_node.http_url, "--out", str(out),
            "--no-progress", "--verify"]  # fmt: skip
    assert main(argv) == 0
    return out


def test_the_chain_holds_deposits_of_every_kind_beside_ordinary_traffic(op_node: Devnet) -> None:
    truth: GroundTruth = op_node.truth
    kinds = truth.txs_by_kind()
    assert {"deposit_mint", "deposit_call", "deposit_create", "deposit_system"} <= set(kinds)
    assert kinds["deposit_system"] == 1
    assert kinds["deposit_create"] == 3
    assert {0, 1, 2, 4, DEPOSIT} <= set(truth.txs_by_type())
    mixed = {t.block for t in truth.txs if t.tx_type == DEPOSIT} & {t.block for t in truth.txs if t.tx_type != DEPOSIT}
    assert len(mixed) == truth.head - 2  # every ordinary block holds both


def test_every_column_is_the_nodes_own_json(extracted: Path, answers: NodeAnswers) -> None:
    assert answers.chain_id == 10
    deposits = [tx for tx in answers.txs if tx["type"] == "0x7e"]
    assert any(int(tx["mint"], 16) for tx in deposits)
    assert any(int(tx["mint"], 16) == 0 for tx in deposits)
    assert any("to" not in tx for tx in deposits)  # a creating deposit has no "to" key at all
    assert any(tx.get("isSystemTx") == "0x1" for tx in deposits)
    common = answers.common()
    keys = ("block_number", "transaction_index")

    blocks = _rows(extracted, "blocks")
    derived = {"chain_id": common["chain_id"], "transaction_count": lambda a: len(a["transactions"])}
    compared = compare("blocks", blocks, answers.by_block(), ("block_number",), derived)
    assert {"transactions_root", "receipts_root", "withdrawals_root", "requests_hash"} <= compared

    txs = _rows(extracted, "transactions")
    chain = {"transaction_chain_id": _deposit_chain_id}
    compared = compare("transactions", txs, answers.by_transaction(answers.txs), keys, common | chain)
    assert {"source_hash", "mint", "is_system_tx", "transaction_type", "input", "value", "gas"} <= compared
    stored = [t for t in txs if t["transaction_type"] == DEPOSIT]
    assert len(stored) == len(deposits)
    assert [t["is_system_tx"] for t in stored].count(True) == 1  # the one "0x1"; the others leave the key off

    receipts = _rows(extracted, "receipts")
    derived = {**common, "log_count": lambda a: len(a["logs"])}
    compared = compare("receipts", receipts, answers.by_transaction(answers.receipts), keys, derived)
    assert {"deposit_nonce", "deposit_receipt_version", "transaction_type", "contract_address", "status"} <= compared
    assert all(isinstance(r["blockTimestamp"], int) for r in answers.receipts)  # a JSON number on this node
    assert {r["type"] for r in answers.receipts if "depositNonce" in r} == {"0x7E"}  # upper case on this node
    assert all(r["deposit_receipt_version"] == 1 for r in receipts if r["transaction_type"] == DEPOSIT)
    assert all(r["l1_fee"] is None for r in receipts)  # this node sends no L1 fee fields

    logs = _rows(extracted, "logs")
    compared = compare("logs", logs, answers.by_log(answers.logs), ("block_number", "log_index"), common)
    assert {"address", "topics", "data", "transaction_hash", "block_timestamp"} <= compared


def _deposit_chain_id(answer: dict[str, Any]) -> int | None:
    """A deposit has no signature and this node sends no chainId for it (v = 0): none is stored."""
    return None if answer["type"] == "0x7e" else _signed_chain_id(answer)


def test_extract_verify_proves_every_block_with_its_deposits(op_node: Devnet, extracted: Path) -> None:
    (report,) = (extracted / ".chainframe" / "runs").glob("*.json")
    run = json.loads(report.read_text())
    assert run["chain_id"] == 10
    assert run["chain_family"] == "op-stack"
    blocks = op_node.truth.block_count
    for name in MAIN:
        assert run["datasets"][name]["verified_blocks"] == blocks, name
        assert run["datasets"][name]["verified_rows"] == run["datasets"][name]["rows"], name
    unverified = {check for d in run["datasets"].values() for check in d["unverified"]}
    assert unverified == UNPROVABLE  # the transactions and receipts roots are not among them


def test_verify_rpc_proves_the_roots_and_skips_only_what_no_header_commits_to(
    op_node: Devnet, extracted: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    code = main(["verify", str(extracted), "--rpc", op_node.http_url, "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 3  # passed, not all checked: the skips below
    assert report["ok"]
    assert report["failures"] == []
    blocks = op_node.truth.block_count
    assert {name: d["blocks_verified"] for name, d in report["datasets"].items()} == {
        "blocks": blocks, "transactions": blocks, "receipts": blocks, "logs": blocks - 1,  # block 0 has no logs
    }  # fmt: skip
    skipped = {f"{s['dataset']} {s['check']}": s for s in report["skipped"]}
    assert set(skipped) == UNPROVABLE
    creations = {t.block for t in op_node.truth.txs if t.kind == "deposit_create"}
    assert skipped["receipts contract_address"]["blocks"] == len(creations)


@pytest.mark.parametrize("column", ["source_hash", "mint"])
def test_a_changed_byte_of_a_deposit_is_caught(
    op_node: Devnet, extracted: Path, column: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    shutil.copytree(extracted, out)
    changed: list[int] = []

    def flip(rows: list[dict[str, Any]]) -> list[Any]:
        at = next(i for i, r in enumerate(rows) if r["transaction_type"] == DEPOSIT and r["mint"])
        changed.append(rows[at]["block_number"])
        value = rows[at][column]
        new = bytes([value[0] ^ 1]) + value[1:] if column == "source_hash" else value + 1
        return [new if i == at else r[column] for i, r in enumerate(rows)]

    _tampered(out, "transactions", column, flip)
    capsys.readouterr()
    assert main(["verify", str(out), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    (block,) = changed
    failed = {(f["dataset"], f["block_number"], f["check"]) for f in report["failures"]}
    assert ("transactions", block, "transactions_root") in failed, failed
    assert {number for _, number, _ in failed} == {block}


def test_an_ordinary_creation_on_the_op_chain_is_still_checked(
    extracted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only a deposit's created address is skipped: a signed creation's follows from its proven sender and nonce."""
    out = tmp_path / "out"
    shutil.copytree(extracted, out)
    changed: list[int] = []

    def move(rows: list[dict[str, Any]]) -> list[Any]:
        at = next(i for i, r in enumerate(rows) if r["transaction_type"] != DEPOSIT and r["contract_address"])
        changed.append(rows[at]["block_number"])
        return [b"\x01" * 20 if i == at else r["contract_address"] for i, r in enumerate(rows)]

    _tampered(out, "receipts", "contract_address", move)
    capsys.readouterr()
    assert main(["verify", str(out), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [(f["dataset"], f["block_number"], f["check"]) for f in report["failures"]] == [
        ("receipts", changed[0], "contract_address")
    ]


SMALL_OP = WorkloadSpec(name="op-any-id", blocks=5, network="optimism", logs_per_emit=4, txs_per_block=2)
"""An OP-mode node on anvil's own chain id (31337): no family follows from it."""


def test_an_op_node_on_an_unknown_chain_id_proves_with_chain_family(tmp_path: Path) -> None:
    with Devnet(workload=SMALL_OP) as devnet:
        argv = ["extract", *MAIN, "--blocks", f"0:{devnet.truth.head}", "--rpc", devnet.http_url, "--out",
                str(tmp_path), "--no-progress", "--verify", "--chain-family", "op-stack"]  # fmt: skip
        assert main(argv) == 0
        (report,) = (tmp_path / ".chainframe" / "runs").glob("*.json")
        run = json.loads(report.read_text())
        assert run["chain_id"] == 31337
        assert run["chain_family"] == "op-stack"
        assert all(run["datasets"][name]["verified_blocks"] == devnet.truth.block_count for name in MAIN)
        assert {"blocks withdrawals_root", "receipts blob_gas_used"} <= {
            check for d in run["datasets"].values() for check in d["unverified"]
        }
        assert sum(t.tx_type == DEPOSIT for t in devnet.truth.txs) >= 6


def test_the_devnet_command_refuses_op_stack_on_a_node_without_an_op_mode(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["devnet", "--op-stack", "--node", "hardhat"]) == 2
    assert capsys.readouterr().out.strip() == "error: --op-stack runs on anvil only (hardhat has no OP mode)"
