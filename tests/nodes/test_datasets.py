"""Every dataset on real Hardhat and Ganache nodes, through the gateway: equal, row by row and column by column, to
what that node answers in JSON (read raw here), or one line naming the method the node lacks or refuses."""

from __future__ import annotations

import glob
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from chainframe._keccak import keccak256
from chainframe.cli import main
from chainframe.datasets import DATASETS
from chainframe.devnet import DEV_ACCOUNTS, Devnet
from tests.nodes.answers import NodeAnswers, batch, compare, one_line_naming

SLOT = "0x" + "00" * 31 + "01"  # Store's counter
# Where a dataset cannot work on a node, the method its one-line error must name (and nothing else may fail).
FAILS: dict[tuple[str, str], str] = {
    **{
        (node, name): "debug_traceCall"
        for node in ("hardhat", "ganache")
        for name in ("call_traces", "prestate_accounts", "prestate_storage")
    },  # Hardhat refuses tracers (-32602); Ganache has no debug_traceCall (-32700 with geth's text)
    **{
        (node, name): "debug_traceBlockByNumber"
        for node in ("hardhat", "ganache")
        for name in ("traces", "native_transfers", "contracts")
    },  # neither has trace_block or debug_traceBlockByNumber; Hardhat refuses callTracer, Ganache has no tracer
    **{
        (node, name): "debug_traceBlockByNumber"
        for node in ("hardhat", "ganache")
        for name in ("balance_diffs", "nonce_diffs", "code_diffs", "storage_diffs")
    },  # neither has trace_replayBlockTransactions; debug_traceBlockByNumber: Hardhat -32004, Ganache -32700
}
TOTAL_SUPPLY, DECIMALS, NAME, SYMBOL, BALANCE_OF = "0x18160ddd", "0x313ce567", "0x06fdde03", "0x95d89b41", "0x70a08231"
STATE = {"balances": "eth_getBalance", "nonces": "eth_getTransactionCount", "codes": "eth_getCode",
         "slots": "eth_getStorageAt"}  # fmt: skip


@pytest.fixture(scope="session")
def answers(node_devnet: Devnet) -> NodeAnswers:
    return NodeAnswers(node_devnet)


def _argv(devnet: Devnet, name: str, out: Path) -> list[str]:
    store = devnet.truth.contracts["Store"]
    extra = {
        "account_proofs": ["--addresses", store],
        "storage_proofs": ["--addresses", store, "--storage-key", SLOT],
        **{n: ["--call", json.dumps({"to": store, "data": "0x"})] for n in ("call_traces", "prestate_accounts",
                                                                          "prestate_storage")},
        **{n: ["--addresses", store, _holder(devnet)] for n in ("balances", "nonces", "codes")},
        "slots": ["--addresses", store, "--storage-key", SLOT],
        "eth_calls": ["--call", json.dumps({"to": _token(devnet), "data": TOTAL_SUPPLY})],
        "erc20_balances": ["--tokens", _token(devnet), "--addresses", _holder(devnet)],
        **{n: ["--tokens", _token(devnet)] for n in ("erc20_supplies", "erc20_metadata")},
    }.get(name, [])  # fmt: skip
    return ["extract", name, "--blocks", f"0:{devnet.truth.head}", "--rpc", devnet.http_url, "--out", str(out),
            "--no-progress", *extra]  # fmt: skip


def _token(devnet: Devnet) -> str:
    return devnet.truth.contracts["Token"]


def _holder(devnet: Devnet) -> str:
    return DEV_ACCOUNTS[0]  # deployed everything, sent transfers: its balance, nonce and token balance all move


def _word(hex_text: str) -> int:
    return int(hex_text, 16) if hex_text not in ("0x", "") else 0


def _text(answer: str) -> str:
    """An ABI-encoded string (offset, length, bytes)."""
    raw = bytes.fromhex(answer[2:])
    length = int.from_bytes(raw[32:64], "big")
    return raw[64 : 64 + length].decode()


def _state_rows(devnet: Devnet, answers: NodeAnswers, name: str, rows: list[dict[str, Any]]) -> None:
    """State reads equal the node's own eth_getBalance, eth_getTransactionCount, eth_getCode, eth_getStorageAt at
    each (block, account)."""
    method = STATE[name]
    extra = [SLOT] if name == "slots" else []
    asked = [(method, ["0x" + bytes(r["address"]).hex(), *extra, hex(r["block_number"])]) for r in rows]
    for row, answer in zip(rows, batch(devnet.node.url, asked), strict=True):
        if name == "balances":
            assert int(row["balance"]) == int(answer, 16), row
        elif name == "nonces":
            assert row["nonce"] == int(answer, 16), row
        elif name == "codes":
            assert row["code"] == bytes.fromhex(answer[2:]), row
            assert row["code_hash"] == keccak256(row["code"]), row
        else:
            assert row["storage_value"] == bytes.fromhex(answer[2:].rjust(64, "0")), row
    blocks = {r["block_number"] for r in rows}
    assert blocks == set(range(answers.head + 1))


def _calls(devnet: Devnet, answers: NodeAnswers, name: str, rows: list[dict[str, Any]]) -> set[str]:
    """eth_call datasets equal the node's own eth_call answers at each block (the token exists from block 1)."""
    token, holder = _token(devnet), _holder(devnet)
    data = {"eth_calls": [TOTAL_SUPPLY], "erc20_supplies": [TOTAL_SUPPLY], "erc20_metadata": [NAME, SYMBOL, DECIMALS],
            "erc20_balances": [BALANCE_OF + holder[2:].lower().rjust(64, "0")]}[name]  # fmt: skip
    asked = [("eth_call", [{"to": token, "data": d}, hex(r["block_number"])]) for r in rows for d in data]
    said = iter(batch(devnet.node.url, asked))
    checked = set()
    for row in rows:
        got = [next(said) for _ in data]
        if row["block_number"] == 0:  # no code yet: the call returns nothing, the views are null
            assert got == ["0x"] * len(data), got
            continue
        if name == "eth_calls":
            assert row["output"] == bytes.fromhex(got[0][2:]), row
            assert row["error"] is None, row
        elif name == "erc20_supplies":
            assert int(row["total_supply"]) == _word(got[0]), row
        elif name == "erc20_balances":
            assert int(row["balance"]) == _word(got[0]), row
        else:
            assert (row["name"], row["symbol"], row["decimals"]) == (_text(got[0]), _text(got[1]), _word(got[2])), row
        checked.add(name)
    assert {r["block_number"] for r in rows} == set(range(answers.head + 1))
    return checked


def _signed_chain_id(answer: dict[str, Any]) -> int | None:
    if "chainId" in answer:
        return int(answer["chainId"], 16)
    v = int(answer["v"], 16)
    return (v - 35) // 2 if v >= 35 else None


def _rows(out: Path, name: str) -> list[dict[str, Any]]:
    files = glob.glob(str(out / f"{name}*" / "*.parquet"))
    assert files, f"{name}: no file written"
    return [row for f in sorted(files) for row in pq.read_table(f).to_pylist()]


def _proofs(devnet: Devnet, answers: NodeAnswers, keys: list[str]) -> dict[tuple[int, ...], dict[str, Any]]:
    store = devnet.truth.contracts["Store"]
    found = batch(devnet.node.url, [("eth_getProof", [store, keys, hex(n)]) for n in range(answers.head + 1)])
    return {(n,): p for n, p in enumerate(found)}


@pytest.mark.parametrize("name", list(DATASETS))
def test_each_dataset_is_the_nodes_own_answers_or_names_the_method(
    real_node: Devnet, answers: NodeAnswers, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    devnet, node = real_node, real_node.node_name
    code = main(_argv(devnet, name, tmp_path))
    printed = capsys.readouterr()
    if (node, name) in FAILS:
        assert code != 0
        error = next(line for line in (printed.out + printed.err).splitlines() if line.startswith("error:"))
        assert one_line_naming(error, FAILS[node, name]), error
        assert devnet.http_url.rsplit("/", 1)[1] not in printed.out + printed.err  # the key stays out
        return
    assert code == 0, printed.out + printed.err
    rows = _rows(tmp_path, name)
    common = answers.common()
    if name == "blocks":
        derived = {"chain_id": common["chain_id"], "transaction_count": lambda a: len(a["transactions"])}
        compared = compare(name, rows, answers.by_block(), ("block_number",), derived)
        assert {"block_hash", "parent_hash", "transactions_root", "state_root", "receipts_root"} <= compared
    elif name == "transactions":
        # Neither node sends chainId for a legacy transaction: it is the one its EIP-155 v signs, (v - 35) // 2.
        chain = {"transaction_chain_id": _signed_chain_id}
        compared = compare(name, rows, answers.by_transaction(answers.txs), ("block_number", "transaction_index"),
                           common | chain)  # fmt: skip
        legacy = [r for r in rows if r["transaction_type"] == 0 and r["v"] >= 35]
        assert legacy
        assert all(r["transaction_chain_id"] == answers.chain_id for r in legacy)
        assert {"transaction_hash", "from_address", "value", "input", "r", "s", "block_timestamp"} <= compared
    elif name == "receipts":
        derived = {**common, "log_count": lambda a: len(a["logs"])}
        keys = ("block_number", "transaction_index")
        compared = compare(name, rows, answers.by_transaction(answers.receipts), keys, derived)
        assert {"status", "gas_used", "cumulative_gas_used", "logs_bloom", "log_count"} <= compared
        assert sum(r["status"] == 0 for r in rows) == sum(int(r["status"], 16) == 0 for r in answers.receipts)
    elif name == "logs":
        # Neither node puts blockTimestamp in a log: logs take their block's, from its header (common's).
        assert not any("blockTimestamp" in log for log in answers.logs)
        compared = compare(name, rows, answers.by_log(answers.logs), ("block_number", "log_index"), common)
        assert "block_timestamp" in compared
        assert all(r["block_time"] is not None for r in rows)
        assert {"address", "topics", "data", "transaction_hash"} <= compared
    elif name == "erc20_transfers":
        compared = compare(name, rows, answers.erc20(), ("block_number", "log_index"), common)
        assert {"address", "from_address", "to_address", "value"} <= compared
    elif name == "uncles":  # none on these chains: every header's own list is empty too
        assert rows == []
        assert all(b["uncles"] == [] for b in answers.blocks)
        return
    elif name in ("erc721_transfers", "erc1155_transfers"):  # the workload has none: no such log in the node's
        assert rows == []
        assert len(answers.erc20()) == sum(
            1 for log in answers.logs if log["topics"] and log["topics"][0] == answers.TRANSFER_TOPIC
        )
        return
    elif name == "account_proofs":
        compared = compare(name, rows, _proofs(devnet, answers, []), ("block_number",), common)
        assert {"balance", "nonce", "code_hash", "storage_hash", "account_proof"} <= compared
    elif name == "storage_proofs":
        derived = {
            **common,
            "storage_key": lambda a: bytes.fromhex(a["storageProof"][0]["key"][2:].rjust(64, "0")),
            "storage_value": lambda a: int(a["storageProof"][0]["value"], 16).to_bytes(32, "big"),
            "storage_proof": lambda a: [bytes.fromhex(p[2:]) for p in a["storageProof"][0]["proof"]],
        }
        compared = compare(name, rows, _proofs(devnet, answers, [SLOT]), ("block_number",), derived)
        assert {"storage_key", "storage_value", "storage_proof", "address"} <= compared
    elif name in ("address_appearances", "four_byte_counts"):  # the same rows computed from the node's JSON
        from tests.datasets.test_derived import appearances, four_bytes, rows_of

        by_block = [[r for r in answers.receipts if r["blockNumber"] == b["number"]] for b in answers.blocks]
        blocks = answers.blocks
        computed = appearances(blocks, by_block) if name == "address_appearances" else four_bytes(blocks)
        assert rows_of(name, rows) == computed
        assert len(rows) == len(computed)
    elif name in STATE:
        _state_rows(devnet, answers, name, rows)
    elif name in ("eth_calls", "erc20_balances", "erc20_supplies", "erc20_metadata"):
        assert _calls(devnet, answers, name, rows) == {name}
    else:
        pytest.fail(f"{name}: a dataset this test does not know; say how to read it from the node's JSON")
    assert rows, name
