"""State diffs (balance_diffs, nonce_diffs, code_diffs, storage_diffs) on the devnet chain: the two routes give the
same rows; every account's (and slot's) changes in a block start at the node's eth_getBalance / eth_getTransactionCount
/ eth_getCode / eth_getStorageAt at the block before, chain row to row and end at its answer at the block, and every
value the node says changed over a block has rows; per transaction, a sender's nonce and a plain transfer's balances
move as its receipt says; ``verify`` passes, and a changed value, a removed row and a moved row each fail it."""

from __future__ import annotations

import itertools
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from Crypto.Hash import keccak

from chainframe import collect, extract
from chainframe.devnet import DEV_ACCOUNTS, Devnet, GatewaySettings, MissingMethod
from chainframe.engine import verify_stored
from tests.nodes.answers import batch

BLOCKS = (30, 80)
"""A span with a contract creation (block 40), transfers, token transfers and storage writes."""
NAMES = ("balance_diffs", "nonce_diffs", "code_diffs", "storage_diffs")
READ = {"balance_diffs": "eth_getBalance", "nonce_diffs": "eth_getTransactionCount", "code_diffs": "eth_getCode"}
VALUES = {"balance_diffs": "balance", "nonce_diffs": "nonce", "code_diffs": "code", "storage_diffs": "storage_value"}
Key = tuple[Any, ...]


@pytest.fixture(scope="module")
def tables(devnet_session: Devnet) -> dict[str, pa.Table]:
    """Each dataset over BLOCKS through the gateway, which serves no trace_replayBlockTransactions: the
    debug_traceBlockByNumber (prestateTracer, diff mode) route."""
    span = f"{BLOCKS[0]}:{BLOCKS[1]}"
    return {n: collect(n, blocks=span, rpc=devnet_session.http_url, progress=False) for n in NAMES}


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, Decimal)) else int.from_bytes(value, "big")


def _value(name: str, value: Any) -> Any:
    return bytes(value) if name == "code_diffs" else _int(value)


def _node_value(name: str, answer: str) -> Any:
    return bytes.fromhex(answer[2:]) if name == "code_diffs" else int(answer, 16)


def _groups(name: str, table: pa.Table) -> dict[Key, list[dict[str, Any]]]:
    """The rows by (block, address[, slot]), in the block's order: system calls, transactions, withdrawals."""
    found: dict[Key, list[dict[str, Any]]] = {}
    order = {"system_call": 0, "transaction": 1, "withdrawal": 2}
    rows = sorted(
        table.to_pylist(),
        key=lambda r: (r["block_number"], order[r["change_type"]], r["transaction_index"] or 0),
    )
    for row in rows:
        key = (row["block_number"], row["address"]) + ((row["storage_key"],) if name == "storage_diffs" else ())
        found.setdefault(key, []).append(row)
    return found


def test_both_routes_give_the_same_rows(devnet: Devnet, tables: dict[str, pa.Table]) -> None:
    """The node itself serves trace_replayBlockTransactions (parity stateDiff); the gateway only the debug route."""
    node = devnet.node.url
    assert batch(node, [("trace_replayBlockTransactions", [hex(BLOCKS[0]), ["stateDiff"]])])[0]
    for name in NAMES:
        parity = collect(name, blocks=f"{BLOCKS[0]}:{BLOCKS[1]}", rpc=node, progress=False)
        assert parity.num_rows > 0, name
        assert parity.equals(tables[name]), name


@pytest.mark.parametrize("name", NAMES)
def test_changes_start_and_end_at_the_nodes_state(devnet: Devnet, tables: dict[str, pa.Table], name: str) -> None:
    """Every account (and slot) a block changes: the first before is the node's answer at the block before, the
    last after its answer at the block, each before the previous after; and every account of the workload whose
    value differs between two blocks (every slot the diffs name, for storage) has rows."""
    table, node = tables[name], devnet.node.url
    groups = _groups(name, table)
    assert table.num_rows > 0
    before, after = f"{VALUES[name]}_before", f"{VALUES[name]}_after"
    if name == "balance_diffs":
        before, after = "balance_before", "balance_after"
    watched = _watched(devnet, name, table)
    calls = [_read(name, key, n) for key in watched for n in range(BLOCKS[0] - 1, BLOCKS[1] + 1)]
    answers = iter(batch(node, calls))
    state = {
        (n, *key): _node_value(name, next(answers)) for key in watched for n in range(BLOCKS[0] - 1, BLOCKS[1] + 1)
    }
    for (number, *key), rows in groups.items():
        assert _value(name, rows[0][before]) == state[(number - 1, *key)], (number, key)
        for previous, row in itertools.pairwise(rows):
            assert _value(name, row[before]) == _value(name, previous[after]), (number, key)
        assert _value(name, rows[-1][after]) == state[(number, *key)], (number, key)
    changed = {
        (n, *key)
        for key in watched
        for n in range(BLOCKS[0], BLOCKS[1] + 1)
        if state[(n, *key)] != state[(n - 1, *key)]
    }
    assert changed == set(groups)  # no change without rows, no rows without a change
    assert len(changed) > 5


def _watched(devnet: Devnet, name: str, table: pa.Table) -> list[Key]:
    """The accounts (slots) to read: the workload's senders, its contracts and every address the rows name."""
    addresses = {bytes.fromhex(a[2:]) for a in [*DEV_ACCOUNTS, *devnet.truth.contracts.values()]}
    addresses |= set(table["address"].to_pylist())
    if name == "storage_diffs":
        return sorted({(r["address"], r["storage_key"]) for r in table.to_pylist()})
    return sorted((a,) for a in addresses)


def _read(name: str, key: Key, number: int) -> tuple[str, list[Any]]:
    address = "0x" + key[0].hex()
    if name == "storage_diffs":
        return "eth_getStorageAt", [address, "0x" + key[1].hex(), hex(number)]
    return READ[name], [address, hex(number)]


def test_each_transaction_moves_nonce_and_balances_as_its_receipt_says(
    devnet: Devnet, tables: dict[str, pa.Table]
) -> None:
    """Per transaction, from the node's transactions and receipts alone: its sender's nonce goes from the
    transaction's nonce to one more; a plain ether transfer (to an account with no code) takes value plus gas from
    the sender and gives the value to the recipient."""
    node = devnet.node.url
    blocks = batch(node, [("eth_getBlockByNumber", [hex(n), True]) for n in range(BLOCKS[0], BLOCKS[1] + 1)])
    receipts = batch(node, [("eth_getBlockReceipts", [hex(n)]) for n in range(BLOCKS[0], BLOCKS[1] + 1)])
    nonces = {(r["block_number"], r["transaction_index"], r["address"]): r for r in tables["nonce_diffs"].to_pylist()}
    balances = {
        (r["block_number"], r["transaction_index"], r["address"]): r for r in tables["balance_diffs"].to_pylist()
    }
    plain = 0
    for block, listed in zip(blocks, receipts, strict=True):
        number = int(block["number"], 16)
        for tx, receipt in zip(block["transactions"], listed, strict=True):
            index, sender = int(tx["transactionIndex"], 16), bytes.fromhex(tx["from"][2:])
            row = nonces[(number, index, sender)]
            assert (row["nonce_before"], row["nonce_after"]) == (int(tx["nonce"], 16), int(tx["nonce"], 16) + 1)
            to = tx.get("to")
            if to is None or receipt["logs"] or to.lower() == tx["from"].lower() or int(tx["value"], 16) == 0:
                continue
            if batch(node, [("eth_getCode", [to, hex(number)])])[0] != "0x":
                continue
            paid = int(receipt["gasUsed"], 16) * int(receipt["effectiveGasPrice"], 16)
            value = int(tx["value"], 16)
            sent = balances[(number, index, sender)]
            assert _int(sent["balance_before"]) - _int(sent["balance_after"]) == value + paid
            got = balances[(number, index, bytes.fromhex(to[2:]))]
            assert _int(got["balance_after"]) - _int(got["balance_before"]) == value
            plain += 1
    assert plain > 10


def test_a_created_contracts_code_appears_with_its_hash(devnet: Devnet, tables: dict[str, pa.Table]) -> None:
    rows = tables["code_diffs"].to_pylist()
    created = [r for r in rows if r["code_before"] == b"" and r["code_after"]]
    assert created
    for row in created:
        code = batch(devnet.node.url, [("eth_getCode", ["0x" + row["address"].hex(), hex(row["block_number"])])])[0]
        assert row["code_after"] == bytes.fromhex(code[2:])
        assert keccak.new(digest_bits=256, data=row["code_after"]).digest() != keccak.new(digest_bits=256).digest()


@pytest.fixture(scope="module")
def stored(devnet_session: Devnet, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each dataset extracted with verify=True (proven as extracted), in a folder of its own."""
    found = {}
    for name in NAMES:
        out = tmp_path_factory.mktemp(name)
        report = extract(name, blocks=f"{BLOCKS[0]}:{BLOCKS[1]}", rpc=devnet_session.http_url, out=out, verify=True,
                         progress=False)  # fmt: skip
        assert report.datasets[name]["verified_blocks"] == BLOCKS[1] - BLOCKS[0] + 1, report
        found[name] = out
    return found


def _tamper(folder: Path, change: Any) -> pa.Table:
    path = next(folder.glob("*/*.parquet"))
    file = pq.ParquetFile(path)
    table = change(file.read())
    footer = {k: v for k, v in (file.metadata.metadata or {}).items() if k != b"ARROW:schema"}
    pq.write_table(table.replace_schema_metadata(footer), path)
    return table


@pytest.mark.parametrize("name", NAMES)
def test_verify_proves_the_stored_diffs_and_catches_tampering(
    devnet: Devnet, stored: dict[str, Path], name: str, tmp_path: Path
) -> None:
    folder = stored[name]
    assert verify_stored(folder, rpc=devnet.node.url).ok
    original = pq.read_table(next(folder.glob("*/*.parquet")))
    after = next(c for c in original.column_names if c.endswith("_after"))
    groups = _groups(name, original)
    # A row in the middle of a chain: its account changes again later in the block.
    chained = [(k, v) for k, v in groups.items() if len(v) > 1] or list(groups.items())
    (number, address, *_), rows = chained[0]
    target = rows[0]
    position = next(
        i for i, r in enumerate(original.to_pylist())
        if (r["block_number"], r["transaction_index"], r["address"], r.get("storage_key"))
        == (target["block_number"], target["transaction_index"], target["address"], target.get("storage_key"))
    )  # fmt: skip

    def changed(table: pa.Table) -> pa.Table:
        values = table[after].to_pylist()
        value = values[position]
        values[position] = (value + 1 if isinstance(value, (int, Decimal)) else bytes(value[:-1]) + b"\x01"
                            if value else b"\x01")  # fmt: skip
        return table.set_column(table.column_names.index(after), after, pa.array(values, table[after].type))

    def removed(table: pa.Table) -> pa.Table:
        return pa.concat_tables([table.slice(0, position), table.slice(position + 1)])

    def moved(table: pa.Table) -> pa.Table:
        numbers = table["block_number"].to_pylist()
        numbers[position] += 1
        return table.set_column(0 + table.column_names.index("block_number"), "block_number",
                                pa.array(numbers, table["block_number"].type))  # fmt: skip

    for tamper in (changed, removed, moved):
        _tamper(folder, lambda t: original)
        _tamper(folder, tamper)
        found = verify_stored(folder, rpc=devnet.node.url)
        assert not found.ok, tamper.__name__
        said = " ".join(f"{f.expected} {f.actual} {f.row}" for f in found.failures)
        assert "0x" + address.hex() in said, (tamper.__name__, found.failures)
        assert number in {f.block_number for f in found.failures}, (tamper.__name__, found.failures)
    _tamper(folder, lambda t: original)
    assert verify_stored(folder, rpc=devnet.node.url).ok


def test_a_verified_run_from_block_1_skips_only_the_genesis_proof_and_says_why(
    devnet_session: Devnet, tmp_path: Path
) -> None:
    """anvil's block 0 header gives the empty trie's root, yet its eth_getProof at block 0 answers the genesis
    allocation (10,000 ether per dev account, nonce 0, not the latest state) under another root; block 1's root is
    the one its proofs hang from. The run from block 1 is verified with the block 0 boundary's proof skipped, with
    its reason, and the values the rows start from still compared with the node's."""
    node = devnet_session.node.url
    genesis, first = batch(node, [("eth_getBlockByNumber", [hex(n), False]) for n in (0, 1)])
    empty_root = "0x" + keccak.new(digest_bits=256, data=b"\x80").hexdigest()
    assert genesis["stateRoot"] == empty_root
    proofs = batch(node, [("eth_getProof", [DEV_ACCOUNTS[0], [], hex(n)]) for n in (0, 1)])
    assert proofs[0]["balance"] == hex(10_000 * 10**18)
    assert proofs[0]["nonce"] == "0x0"
    roots = [
        "0x" + keccak.new(digest_bits=256, data=bytes.fromhex(p["accountProof"][0][2:])).hexdigest() for p in proofs
    ]
    assert roots[0] != empty_root
    assert roots[1] == first["stateRoot"]
    report = extract("balance_diffs", blocks="1:5", rpc=devnet_session.http_url, out=tmp_path, verify=True,
                     progress=False)  # fmt: skip
    found = report.datasets["balance_diffs"]
    assert found["verified_blocks"] == 5
    assert found["verified_rows"] > 0
    assert "anvil writes the empty root into its genesis header" in found["unverified"]["balance_diffs account_proof"]
    # The state reads share the account proof check: balances at block 0 are skipped the same way, not failed.
    out = tmp_path / "balances"
    report = extract("balances", blocks="0:2", addresses=[DEV_ACCOUNTS[0]], rpc=devnet_session.http_url, out=out,
                     verify=True, progress=False)  # fmt: skip
    assert "anvil writes the empty root" in report.datasets["balances"]["unverified"]["balances account_proof"]


HISTORY = "0x0000F90827F1C53a10cb7A02335B175320002935"  # EIP-2935
BEACON_ROOTS = "0x000F3df6D732807Ef1319fB7B8bB8522d0Beac02"  # EIP-4788


def test_block_level_changes_are_rows_of_their_kind(devnet: Devnet, tables: dict[str, pa.Table]) -> None:
    """anvil runs EIP-2935's system call before each block's transactions (the parent's hash into slot
    (N - 1) % 8191 of the history contract, a write no transaction's diff names) and deploys no EIP-4788 contract
    (no code, no write); its blocks' withdrawals are empty. The storage diffs have one system_call row per block, with
    no transaction, from the node's slot at the block before to the parent's hash; no other block-level row."""
    node = devnet.node.url
    numbers = range(BLOCKS[0], BLOCKS[1] + 1)
    headers = batch(node, [("eth_getBlockByNumber", [hex(n), False]) for n in numbers])
    assert all(h["withdrawals"] == [] for h in headers)
    assert batch(node, [("eth_getCode", [BEACON_ROOTS, hex(BLOCKS[1])])])[0] == "0x"
    slots = ["0x" + format((n - 1) % 8191, "064x") for n in numbers]
    before = batch(node, [("eth_getStorageAt", [HISTORY, s, hex(n - 1)]) for n, s in zip(numbers, slots, strict=True)])
    system = [r for r in tables["storage_diffs"].to_pylist() if r["change_type"] != "transaction"]
    assert len(system) == len(numbers)
    for row, number, slot, header, was in zip(system, numbers, slots, headers, before, strict=True):
        assert row["change_type"] == "system_call"
        assert row["transaction_index"] is None
        assert row["transaction_hash"] is None
        assert (row["block_number"], "0x" + row["address"].hex()) == (number, HISTORY.lower())
        assert "0x" + row["storage_key"].hex() == slot
        assert _int(row["storage_value_before"]) == int(was, 16)
        assert _int(row["storage_value_after"]) == int(header["parentHash"], 16)
    for name in ("balance_diffs", "nonce_diffs", "code_diffs"):
        assert set(tables[name]["change_type"].to_pylist()) == {"transaction"}, name


def test_the_history_slots_are_read_one_by_one_where_eth_getproof_is_refused(
    devnet: Devnet, tables: dict[str, pa.Table]
) -> None:
    """EIP-2935's slots are read for a piece with two eth_getProof (before it and at its end), not two eth_getStorageAt
    a block; where the node refuses eth_getProof (geth's -32601 here) they are read at each block: the same rows."""
    assert devnet.gateway is not None
    span, blocks = f"{BLOCKS[0]}:{BLOCKS[1]}", BLOCKS[1] - BLOCKS[0] + 1
    devnet.gateway.reset_stats()
    assert collect("storage_diffs", blocks=span, rpc=devnet.http_url, progress=False).equals(tables["storage_diffs"])
    calls = devnet.gateway.stats()["calls"]
    assert calls.get("eth_getProof", 0) >= 2, calls
    assert calls.get("eth_getStorageAt", 0) == 0, calls
    devnet.gateway.configure(GatewaySettings(missing=(MissingMethod(method="eth_getProof"),)))
    devnet.gateway.reset_stats()
    assert collect("storage_diffs", blocks=span, rpc=devnet.http_url, progress=False).equals(tables["storage_diffs"])
    assert devnet.gateway.stats()["calls"].get("eth_getStorageAt", 0) == 2 * blocks


def test_a_removed_system_call_row_fails_verify(devnet: Devnet, stored: dict[str, Path]) -> None:
    """The proof asks for the system call's slot from the header's rule, not from the rows: without its row, the
    slot's change over the block is unexplained."""
    folder = stored["storage_diffs"]
    original = pq.read_table(next(folder.glob("*/*.parquet")))
    types = original["change_type"].to_pylist()
    position = types.index("system_call")
    number = original["block_number"][position].as_py()
    _tamper(folder, lambda t: pa.concat_tables([t.slice(0, position), t.slice(position + 1)]))
    try:
        found = verify_stored(folder, rpc=devnet.node.url)
    finally:
        _tamper(folder, lambda t: original)
    assert not found.ok
    unexplained = [f for f in found.failures if f.check == "unexplained"]
    assert [f.block_number for f in unexplained] == [number]
    assert HISTORY.lower() in unexplained[0].expected


def test_a_verifying_run_reads_the_diffs_once(devnet: Devnet, tmp_path: Path) -> None:
    """The proof reads which accounts the diffs touch from the extraction's own answers: one
    debug_traceBlockByNumber per block (the gateway serves no trace_replayBlockTransactions), as without verify,
    beside the run's route check."""
    assert devnet.gateway is not None
    devnet.gateway.reset_stats()
    extract("balance_diffs", blocks="30:40", rpc=devnet.http_url, out=tmp_path, verify=True, progress=False)
    calls: dict[str, int] = devnet.gateway.stats()["calls"]
    assert calls["debug_traceBlockByNumber"] == 11 + 1  # one per block, and the run's route check at block 0
    assert calls["eth_getProof"] > 11


def test_probe_names_the_route_each_node_serves(devnet: Devnet) -> None:
    """The probe asks both routes as they are read: anvil serves trace_replayBlockTransactions with stateDiff; the
    gateway does not pass it on, and serves debug_traceBlockByNumber's prestateTracer in diff mode."""
    from chainframe import probe

    direct, gateway = probe(rpc=devnet.node.url), probe(rpc=devnet.http_url)
    for name in NAMES:
        assert direct.route(name).route == "trace_replayBlockTransactions stateDiff"
        assert gateway.route(name).route == "debug_traceBlockByNumber prestateTracer diffMode"
        assert gateway.route(name).note == "the node lacks trace_replayBlockTransactions"
    assert direct.check("debug_traceBlockByNumber prestateTracer diffMode").ok  # type: ignore[union-attr]


@pytest.mark.parametrize("name", ["balance_diffs", "storage_diffs"])
def test_dry_prices_the_route_the_node_serves_within_10_percent(
    devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """--dry asks the routes as a run does: through the gateway the diffs are debug_traceBlockByNumber's (1,000
    credits a call on Infura's table, not trace_replayBlockTransactions' 80), with the headers and the system calls'
    slots beside them; the run then makes that many calls, within 10%."""
    from chainframe.cli import main

    assert devnet.gateway is not None
    argv = ["extract", name, "--blocks", "30:45", "--rpc", devnet.http_url, "--out", str(tmp_path)]
    assert main([*argv, "--dry"]) == 0
    printed = capsys.readouterr().out
    assert "16 blocks to fetch: 16 debug_traceBlockByNumber + 16 eth_getBlockByNumber" in printed
    found = re.search(r"^  total: ([\d,]+) calls", printed, re.M)
    assert found is not None, printed
    devnet.gateway.reset_stats()
    assert main([*argv, "--no-progress"]) == 0
    calls = devnet.gateway.stats()["calls"]
    assert abs(int(found.group(1).replace(",", "")) - sum(calls.values())) <= 0.1 * sum(calls.values()), calls
    assert calls.get("trace_replayBlockTransactions", 0) <= 1  # the route check's, not one per block
