"""address_appearances and four_byte_counts on the devnet chain: equal to the same rows computed here, in plain Python,
from the node's own JSON (blocks with their transactions, and receipts); fetched through the receipts fallback alike;
extended runs identical to one run; proven under --verify and by verify --rpc, every changed column failing."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from chainframe.cli import main
from chainframe.datasets import DATASETS
from chainframe.devnet import Devnet, GatewaySettings, MissingMethod
from chainframe.engine import collect, extract, verify_stored
from tests.nodes.answers import batch
from tests.verify.test_every_column import _assert_named, _edit

DERIVED = ("address_appearances", "four_byte_counts")


def _bytes(text: str) -> bytes:
    return bytes.fromhex(text[2:])


def appearances(blocks: list[dict[str, Any]], receipts: list[list[dict[str, Any]]]) -> set[tuple[Any, ...]]:
    """(block, block hash, index, tx hash, address, relationship) as the dataset's doc says, a transaction at a time."""
    rows = set()
    for block, block_receipts in zip(blocks, receipts, strict=True):
        number, block_hash = int(block["number"], 16), _bytes(block["hash"])
        for tx, receipt in zip(block["transactions"], block_receipts, strict=True):
            at = (number, block_hash, int(tx["transactionIndex"], 16), _bytes(tx["hash"]))
            seen = [(tx["from"], "sender"), (tx["to"], "recipient"), (receipt["contractAddress"], "created_contract")]
            for log in receipt["logs"]:
                seen.append((log["address"], "log_emitter"))
                seen += [("0x" + t[26:], "log_topic") for t in log["topics"] if t[2:26] == "0" * 24]
            rows |= {(*at, _bytes(address), how) for address, how in seen if address is not None}
    return rows


def four_bytes(blocks: list[dict[str, Any]]) -> set[tuple[Any, ...]]:
    counts: Counter[tuple[Any, ...]] = Counter()
    for block in blocks:
        for tx in block["transactions"]:
            data = _bytes(tx["input"])
            if tx["to"] is not None and len(data) >= 4:
                counts[int(block["number"], 16), _bytes(block["hash"]), data[:4], len(data) - 4] += 1
    return {(*key, n) for key, n in counts.items()}


@pytest.fixture(scope="module")
def node_rows(devnet_session: Devnet) -> dict[str, set[tuple[Any, ...]]]:
    url, head = devnet_session.node.url, devnet_session.truth.head
    blocks = batch(url, [("eth_getBlockByNumber", [hex(n), True]) for n in range(head + 1)])
    receipts = batch(url, [("eth_getBlockReceipts", [hex(n)]) for n in range(head + 1)])
    return {"address_appearances": appearances(blocks, receipts), "four_byte_counts": four_bytes(blocks)}


def rows_of(name: str, rows: list[dict[str, Any]]) -> set[tuple[Any, ...]]:
    columns = [c for c in DATASETS[name].columns if c != "chain_id"]
    return {tuple(row[c] for c in columns) for row in rows}


@pytest.fixture(scope="module")
def stored(devnet_session: Devnet, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("derived")
    # Straight to the node, as the runs below that do not play a node other than anvil: the gateway (a process of
    # its own) would relay every answer for nothing these tests look at.
    report = extract(list(DERIVED), blocks=f"0:{devnet_session.truth.head}", rpc=devnet_session.node.url, out=out,
                     chunk_size=20, progress=False, verify=True)  # fmt: skip
    for name in DERIVED:
        assert report.datasets[name]["verified_rows"] == report.datasets[name]["rows"] > 0, name
    return out


@pytest.mark.parametrize("name", DERIVED)
def test_rows_are_the_nodes_json_computed_independently(
    devnet_session: Devnet, stored: Path, node_rows: dict[str, set[tuple[Any, ...]]], name: str
) -> None:
    table = pq.read_table(stored / name)
    rows = table.to_pylist()
    assert {r["chain_id"] for r in rows} == {devnet_session.truth.chain_id}
    assert len(rows) == len(node_rows[name]), "a repeated row"
    assert rows_of(name, rows) == node_rows[name]
    assert table.schema.equals(DATASETS[name].schema, check_metadata=False)


def test_every_kind_of_appearance_and_call_is_on_the_chain(node_rows: dict[str, set[tuple[Any, ...]]]) -> None:
    """The devnet's workload produces every case the doc names (or the comparison above proves little)."""
    kinds = Counter(row[5] for row in node_rows["address_appearances"])
    assert set(kinds) == {"sender", "recipient", "created_contract", "log_emitter", "log_topic"}, kinds
    counts = node_rows["four_byte_counts"]
    assert any(row[4] > 1 for row in counts), "no selector called twice in a block"
    assert len({row[2] for row in counts}) > 1


def test_the_receipts_fallback_gives_the_same_rows(devnet: Devnet, node_rows: dict[str, set[tuple[Any, ...]]]) -> None:
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(missing=(MissingMethod(method="eth_getBlockReceipts", like="ganache"),)))
    table = collect("address_appearances", blocks=f"0:{devnet.truth.head}", rpc=devnet.http_url, progress=False)
    assert rows_of("address_appearances", table.to_pylist()) == node_rows["address_appearances"]
    assert devnet.gateway.stats()["calls"].get("eth_getTransactionReceipt", 0) > 0


def test_appearances_alone_are_read_from_receipts_and_proven_with_the_transactions(
    devnet: Devnet, node_rows: dict[str, set[tuple[Any, ...]]], tmp_path: Path
) -> None:
    """Its fetch reads the receipts alone (derived_fetched); under --verify its proof reads the transactions itself,
    with no other dataset of the run fetching them, and proves every row."""
    assert DATASETS["address_appearances"].derived_fetched == (DATASETS["receipts"],)
    head = 40
    report = extract("address_appearances", blocks=f"0:{head}", rpc=devnet.node.url, out=tmp_path, chunk_size=20,
                     progress=False, verify=True)  # fmt: skip
    assert report.datasets["address_appearances"]["verified_rows"] == report.datasets["address_appearances"]["rows"]
    rows = rows_of("address_appearances", pq.read_table(tmp_path / "address_appearances").to_pylist())
    assert rows == {r for r in node_rows["address_appearances"] if r[0] <= head}


def test_appearances_without_the_native_scanner_are_the_same(
    devnet_session: Devnet, node_rows: dict[str, set[tuple[Any, ...]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The receipts' logs read by the scanner in one pass, or (scanner off) by the datasets' pure transforms."""
    monkeypatch.setenv("CHAINFRAME_NATIVE", "0")
    url, head = devnet_session.node.url, devnet_session.truth.head
    table = collect("address_appearances", blocks=f"0:{head}", rpc=url, progress=False)
    assert rows_of("address_appearances", table.to_pylist()) == node_rows["address_appearances"]


def test_an_extended_run_is_one_run(devnet: Devnet, stored: Path, tmp_path: Path) -> None:
    head = devnet.truth.head
    for end in (head // 3, head // 3 + 1, head):
        extract(list(DERIVED), blocks=f"0:{end}", rpc=devnet.node.url, out=tmp_path, chunk_size=20, progress=False)
    for name in DERIVED:
        assert pq.read_table(tmp_path / name).equals(pq.read_table(stored / name)), name


def test_verify_against_the_node_proves_the_stored_rows(devnet: Devnet, stored: Path) -> None:
    report = verify_stored(stored, rpc=devnet.node.url)
    assert report.ok, report.failures
    for name in DERIVED:
        assert sum(n for series, n in report.rows_verified.items() if series.startswith(name)) > 0, name
        assert not [s for s in report.skipped if s.dataset.startswith(name)], report.skipped


@pytest.mark.parametrize(("dataset", "column"), [(n, c) for n in DERIVED for c in DATASETS[n].columns])
def test_a_changed_column_fails_against_the_node(
    devnet: Devnet, stored: Path, tmp_path: Path, dataset: str, column: str
) -> None:
    assert column not in DATASETS[dataset].unprovable
    # The changed dataset's series only, and of it the chunks holding the changed row: each chunk is proven on its
    # own, so proving the rest would only repeat test_verify_against_the_node_proves_the_stored_rows.
    copy = tmp_path / "copy"
    others = [name for name in DERIVED if name != dataset]
    shutil.copytree(stored, copy, ignore=lambda folder, names: others if Path(folder) == stored else [])
    assert sorted(p.name for p in copy.iterdir() if not p.name.startswith(".")) == [dataset]
    blocks = _edit(copy, dataset, column)
    for chunk in (copy / dataset).glob("*.parquet"):
        if not set(blocks) & set(pq.read_table(chunk, columns=["block_number"])["block_number"].to_pylist()):
            chunk.unlink()
    assert list((copy / dataset).glob("*.parquet"))
    _assert_named(verify_stored(copy, rpc=devnet.node.url), dataset, column, blocks)


@pytest.mark.parametrize("name", DERIVED)
def test_schema_says_what_is_counted(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", name]) == 0
    out = capsys.readouterr().out
    assert "not read yet" in out or "not counted yet" in out  # traces: what is left out is said
    assert "every column is proven" in out
    if name == "address_appearances":
        assert "first 12 bytes are zero" in out


def test_appearances_are_each_seen_row_once_on_random_tables() -> None:
    """derive (numpy: sorted, repeats dropped) against a Python set, on random transactions, receipts and logs with
    repeated addresses, null recipients, null contract addresses, null topic lists, topics that hold addresses, and
    two transactions under one (block, index) with other hashes (a node contradicting itself: both kept, apart)."""
    import random

    import pyarrow as pa

    rng = random.Random(5)
    dataset = DATASETS["address_appearances"]
    pool = [bytes([i]) * 20 for i in range(6)]
    b32, b20, u64 = pa.binary(32), pa.binary(20), pa.uint64()
    keys = {"block_number": u64, "block_hash": b32, "transaction_index": u64, "transaction_hash": b32}

    def table(items: list[tuple[Any, ...]], more: dict[str, pa.DataType]) -> pa.Table:
        types = {**keys, **more}
        return pa.table({name: pa.array([r[i] for r in items], t) for i, (name, t) in enumerate(types.items())})

    for _ in range(150):
        txs = []
        for number in range(rng.randint(0, 3)):
            for index in range(rng.randint(0, 3)):
                twins = 2 if rng.random() < 0.3 else 1
                txs += [(number, bytes([number, twin]) * 16, index, bytes([number, index, twin]) + bytes(29))
                        for twin in range(twins)]  # fmt: skip
        rows = [(*key, rng.choice(pool), rng.choice([None, *pool]), rng.choice([None, None, *pool])) for key in txs]
        logs = []
        for key in txs:
            for _ in range(rng.randint(0, 3)):
                topics = None if rng.random() < 0.1 else [
                    bytes(12) + rng.choice(pool) if rng.random() < 0.6 else bytes([1]) * 32
                    for _ in range(rng.randint(0, 4))
                ]  # fmt: skip
                logs.append((*key, rng.choice(pool[:2]), topics))
        rng.shuffle(logs)  # a twin's logs among the other's: a repeat is then not next to its first
        transactions = table(rows, {"from_address": b20, "to_address": b20, "contract_address": b20})
        emitted = table(logs, {"address": b20, "topics": pa.list_(b32)})
        expected = set()
        for number, block_hash, index, tx_hash, sender, recipient, made in rows:
            seen = [(sender, "sender"), (recipient, "recipient"), (made, "created_contract")]
            expected |= {(number, block_hash, index, tx_hash, a, how) for a, how in seen if a is not None}
        for number, block_hash, index, tx_hash, address, topics in logs:
            expected.add((number, block_hash, index, tx_hash, address, "log_emitter"))
            expected |= {(number, block_hash, index, tx_hash, t[12:], "log_topic")
                         for t in topics or () if t[:12] == bytes(12)}  # fmt: skip
        got = dataset.derive(transactions, transactions, emitted, chain_id=1).to_pylist()
        names = ("block_number", "block_hash", "transaction_index", "transaction_hash", "address", "relationship")
        found = [tuple(r[c] for c in names) for r in got]
        assert len(found) == len(set(found))
        assert set(found) == expected
        assert [(r[0], r[2], r[4], r[5]) for r in found] == sorted((r[0], r[2], r[4], r[5]) for r in found)
