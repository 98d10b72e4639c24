"""Recorded blocks of other networks than Ethereum (OP Mainnet, Arbitrum One and Sepolia, Polygon PoS; issue 43) go
through chainframe's own fetch and transform, and every stored column equals the recorded JSON, field by field.

The recordings (``tests/data/recorded/networks``; sources, blocks and eras in ``tests/data/NOTICE.md``) are served by
an in-memory node that answers only what was recorded: ``eth_getBlockReceipts`` where it was, else
``eth_getTransactionReceipt`` per transaction (chainframe's route on a node without the former). So each dataset is
fetched as a run fetches it, receipts stamped with their block's timestamp included. The logs are read from the
receipts, chainframe's path for a block over a provider's log limit: no ``eth_getLogs`` answer was recorded.

What the recordings hold that no column stores is pinned per block in :data:`UNSTORED`: the keys the chain-family
declarations have to place somewhere, or say why not. Each block is then verified under its chain's family
(:mod:`chainframe.families`): no failure on any of them, what a family's headers commit to nothing of skipped with
its reason, and a changed row of an L2 block caught though the block holds a type Ethereum does not have.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import anyio
import pyarrow as pa
import pytest

from chainframe.datasets import COLUMNS, DATASETS, LOGS, BlockRange
from chainframe.datasets._objects import ObjectDataset
from chainframe.families import ARBITRUM_NITRO as ARBITRUM
from chainframe.families import POLYGON_POS as POLYGON
from chainframe.families import family_of
from chainframe.rpc import AsyncClient, MemoryTransport, Reply, RetryPolicy
from chainframe.verify import Report, verify_tables
from tests.fixtures import RECORDED_DIR

ROOT = RECORDED_DIR / "networks"
FETCHED = ("blocks", "transactions", "receipts")


@dataclass(frozen=True)
class Recording:
    """One block as a node answered it, with the receipt of each of its transactions, in order."""

    id: str
    chain_id: int
    block: dict[str, Any]
    """``eth_getBlockByNumber(N, true)``'s result."""
    receipts: list[dict[str, Any]]
    block_receipts: bool
    """Recorded as one ``eth_getBlockReceipts`` answer (else one ``eth_getTransactionReceipt`` per transaction)."""


def _json(rel: str) -> Any:
    return json.loads((ROOT / rel).read_text(encoding="utf-8"))


def _squid(chain: str, number: int, chain_id: int) -> Recording:
    """squid-sdk's fixtures: the bare results, ``block.json`` and ``receipts.json``."""
    folder = f"squid-sdk/evm/evm-rpc/test/fixtures/{chain}/{number}"
    return Recording(
        f"{chain}-{number}",
        chain_id,
        _json(f"{folder}/block.json"),
        _json(f"{folder}/receipts.json"),
        block_receipts=True,
    )


def _erigon(network: str, number: int, chain_id: int, block: str, receipts: str) -> Recording:
    """Erigon's RPC tests: each file a list of request/response pairs, here one each."""
    folder = f"rpc-tests/integration/{network}"
    (block_pair,) = _json(f"{folder}/eth_getBlockByNumber/{block}")
    (receipts_pair,) = _json(f"{folder}/eth_getBlockReceipts/{receipts}")
    return Recording(
        f"{network}-{number}",
        chain_id,
        block_pair["response"]["result"],
        receipts_pair["response"]["result"],
        block_receipts=True,
    )


def _polygon_etl(folder: str, number: str, receipts_folder: str | None = None) -> Recording:
    """polygon-etl's mock-provider envelopes, the request in the file name: a block, and per transaction its receipt."""
    base = "polygon-etl/cli/tests/resources"
    block = _json(f"{base}/{folder}/web3_response.eth_getBlockByNumber_{number}_true.json")["result"]
    receipts = [
        _json(f"{base}/{receipts_folder or folder}/web3_response.eth_getTransactionReceipt_{tx['hash']}.json")["result"]
        for tx in block["transactions"]
    ]
    return Recording(f"polygon-{int(number, 16)}", 137, block, receipts, block_receipts=False)


RECORDINGS = [
    _squid("optimism", 154497277, 10),
    _squid("arbitrum", 150000000, 42161),
    _erigon("arb-sepolia", 185232421, 421614, "test_03.json", "test_01.json"),
    _polygon_etl(
        "test_export_blocks_job/blocks_with_transactions", "0x898a00", "test_export_receipts_job/receipts_with_logs"
    ),
    _polygon_etl("test_stream/block_with_contracts", "0x221552"),
    _polygon_etl("test_stream/block_eip_1559", "0x16c7d38"),
]
BY_ID = {r.id: r for r in RECORDINGS}
OP = BY_ID["optimism-154497277"]
IDS = [r.id for r in RECORDINGS]

UNSTORED: dict[str, dict[str, set[str]]] = {
    # Keys of the recorded objects that no column of the dataset reads: the chain-specific fields (issue 43) no family
    # stores. A deposit transaction's depositReceiptVersion is its receipt's, stored there.
    "optimism-154497277": {"transactions": {"depositReceiptVersion"}},
    "arb-sepolia-185232421": {"receipts": {"timeboosted"}},
}


# --- the node that answers what was recorded --------------------------------------------------------------------


def _node(recording: Recording) -> MemoryTransport:
    number = int(recording.block["number"], 16)
    by_hash = {r["transactionHash"]: r for r in recording.receipts}

    def answer(call: dict[str, Any]) -> dict[str, Any]:
        method, params = call["method"], call.get("params", [])
        if method == "eth_chainId":
            return {"result": hex(recording.chain_id)}
        if method == "eth_getBlockByNumber" and int(params[0], 16) == number:
            block = recording.block
            hashes = [tx["hash"] for tx in block["transactions"]]
            return {"result": block if params[1] else {**block, "transactions": hashes}}
        if method == "eth_getBlockReceipts" and not recording.block_receipts:
            return {"error": {"code": -32601, "message": f"the method {method} does not exist/is not available"}}
        if method == "eth_getBlockReceipts" and int(params[0], 16) == number:
            return {"result": recording.receipts}
        if method == "eth_getTransactionReceipt" and params[0] in by_hash:
            return {"result": by_hash[params[0]]}
        return {"error": {"code": -32000, "message": f"not recorded: {method} {params}"}}

    return answering(answer)


def differences(name: str, stored: list[dict[str, Any]], wanted: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Every stored value that is not the recorded one: (dataset, row, column, recorded, stored)."""
    return [
        (name, i, column, want[column], row[column])
        for i, (row, want) in enumerate(zip(stored, wanted, strict=True))
        for column in row
        if row[column] != want[column]
    ]


def answering(answer: Callable[[dict[str, Any]], dict[str, Any]]) -> MemoryTransport:
    """A node whose every call (alone or in a batch) is answered by ``answer``: its result or error member."""

    def handler(body: bytes) -> Reply:
        request = json.loads(body)
        if isinstance(request, list):
            out: Any = [{"jsonrpc": "2.0", "id": call["id"], **answer(call)} for call in request]
        else:
            out = {"jsonrpc": "2.0", "id": request["id"], **answer(request)}
        return Reply(200, json.dumps(out).encode(), {})

    return MemoryTransport(handler)


@functools.cache
def _answers(recording_id: str) -> dict[str, list[bytes]]:
    """Each fetched dataset's answers for the block, as its own ``fetch`` returns them (fetched once per block)."""
    recording = BY_ID[recording_id]
    number = int(recording.block["number"], 16)

    async def fetch() -> dict[str, list[bytes]]:
        transport = _node(recording)
        async with AsyncClient("http://node.example", transport=transport, retry=RetryPolicy(attempts=1)) as client:
            return {name: await DATASETS[name].fetch(client, BlockRange(number, number)) for name in FETCHED}

    return anyio.run(fetch)


def _tables(recording: Recording) -> dict[str, pa.Table]:
    answers = _answers(recording.id)
    tables = {name: DATASETS[name].transform(answers[name], chain_id=recording.chain_id) for name in FETCHED}
    tables["logs"] = LOGS.from_receipts(answers["receipts"], chain_id=recording.chain_id)
    return tables


# --- the recorded values, as the columns' types hold them ---------------------------------------------------------


def _recorded(recording: Recording) -> dict[str, list[dict[str, Any]]]:
    """The recorded objects each dataset makes its rows of."""
    logs = [log for receipt in recording.receipts for log in receipt.get("logs") or []]
    return {
        "blocks": [recording.block],
        "transactions": recording.block["transactions"],
        "receipts": recording.receipts,
        "logs": logs,
    }


def _quantity(value: Any) -> int:
    return value if isinstance(value, int) else int(value, 16)


def _data(value: str) -> bytes:
    return bytes.fromhex(value[2:])


def _word(value: Any) -> bytes:
    return _quantity(value).to_bytes(32, "big")


def _value(kind: str, value: Any) -> Any:
    """A recorded JSON value as the Arrow column of ``kind`` holds it (u256 as decimal, the default)."""
    if value is None:
        return None
    scalars: dict[str, Callable[[Any], Any]] = {
        "u64": _quantity,
        "u8": _quantity,
        "i64": _quantity,
        "bool": bool,
        "string": str,
        "word": _word,
        "wei": lambda v: Decimal(_quantity(v)),
    }
    if kind in scalars:
        return scalars[kind](value)
    if kind in ("address", "hash", "bloom", "bytes4", "bytes8", "data"):
        return _data(value)
    if kind == "hash_list":
        return [_data(item if isinstance(item, str) else item["hash"]) for item in value]
    if kind == "access_list":
        return [{"address": _data(e["address"]), "storage_keys": [_data(k) for k in e["storageKeys"]]} for e in value]
    if kind == "withdrawals":
        return [
            {
                "index": _quantity(w["index"]),
                "validator_index": _quantity(w["validatorIndex"]),
                "address": _data(w["address"]),
                "amount": _quantity(w["amount"]),
            }
            for w in value
        ]
    raise AssertionError(f"no recorded form for column kind {kind}")


def _objects(name: str) -> ObjectDataset:
    dataset = DATASETS[name]
    assert isinstance(dataset, ObjectDataset)  # rows of JSON objects, column -> key in ``sources``
    return dataset


def _expected(name: str, objects: list[dict[str, Any]], recording: Recording) -> list[dict[str, Any]]:
    """The rows the recorded objects say, column by column; the derived columns as chainframe defines them."""
    dataset = _objects(name)
    rows = []
    for item in objects:
        row: dict[str, Any] = {
            c: _value(COLUMNS[c].kind, item.get(k)) if (k := dataset.sources.get(c)) else None for c in dataset.columns
        }
        row["chain_id"] = recording.chain_id
        if "block_timestamp" in row and row["block_timestamp"] is None:
            row["block_timestamp"] = _quantity(recording.block["timestamp"])  # the node's own, where it left it off
        if "block_time" in row:
            row["block_time"] = dt.datetime.fromtimestamp(row.get("block_timestamp") or row["timestamp"], dt.UTC)
        if name == "blocks":
            row["transaction_count"] = len(item["transactions"])
            if recording.chain_id in ARBITRUM.chain_ids:  # no key of its own: the mix hash's third 8 bytes
                row["arbos_version"] = int.from_bytes(_data(item["mixHash"])[16:24], "big")
        if name == "receipts":
            row["log_count"] = len(item.get("logs") or [])
        if name in ("transactions", "receipts") and recording.chain_id in POLYGON.chain_ids:  # no key: the hash rule
            number, block = _quantity(recording.block["number"]), _data(recording.block["hash"])
            row["is_state_sync"] = row["transaction_hash"] == POLYGON.outside_roots_hash(number, block)
        if name == "transactions" and row["transaction_chain_id"] is None and not row["transaction_type"]:
            v = row["v"]
            row["transaction_chain_id"] = (v - 35) // 2 if v is not None and v >= 35 else None  # EIP-155 signs it
        rows.append(row)
    return rows


def _unstored(recording: Recording) -> dict[str, set[str]]:
    out = {}
    for name, objects in _recorded(recording).items():
        read = set(_objects(name).sources.values()) | ({"logs"} if name == "receipts" else set())  # logs: a count
        extra = {key for item in objects for key in item} - read
        if extra:
            out[name] = extra
    return out


def _verify(recording: Recording) -> Report:
    tables = _tables(recording)
    return verify_tables(**tables, chain_id=recording.chain_id)


# --- tests ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reader", ["native", "pure"])
@pytest.mark.parametrize("recording", RECORDINGS, ids=IDS)
def test_every_stored_column_is_the_recorded_value(
    recording: Recording, reader: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if reader == "pure":
        monkeypatch.setenv("CHAINFRAME_NATIVE", "0")
    tables = _tables(recording)
    for name, objects in _recorded(recording).items():
        stored = tables[name].to_pylist()
        wanted = _expected(name, objects, recording)
        assert len(stored) == len(wanted), name
        assert differences(name, stored, wanted) == []


@pytest.mark.parametrize("recording", RECORDINGS, ids=IDS)
def test_the_native_scanner_takes_every_family_column(recording: Recording) -> None:
    """The families' own columns are typed kinds the scanner reads: no dataset of these blocks falls back to the pure
    path (which the test above would not notice, both giving the same table)."""
    answers = _answers(recording.id)
    for name in FETCHED:
        dataset = _objects(name)
        assert dataset.scanned(answers[name], chain_id=recording.chain_id) is not None, name


@pytest.mark.parametrize("scalar", ["0.684", "1", "1e+06", "1.000000001e-05", None])
def test_a_pre_ecotone_l1_fee_scalar_is_kept_as_the_nodes_text(scalar: str | None) -> None:
    """Before Ecotone an OP receipt's ``l1FeeScalar`` is a decimal text (op-geth writes its big.Float shortest, as
    "0.684" or "1e+06"; op-reth an f64): stored as that text, through the native scanner as through the pure path."""
    answers = _answers(OP.id)
    (body,) = answers["receipts"]
    envelope = json.loads(body)
    for receipt in envelope[0]["result"] if isinstance(envelope, list) else envelope["result"]:
        receipt["l1FeeScalar"] = scalar
    changed = [json.dumps(envelope).encode()]
    receipts = _objects("receipts")
    native = receipts.scanned(changed, chain_id=OP.chain_id)
    assert native is not None
    assert set(native["l1_fee_scalar"].to_pylist()) == {scalar}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CHAINFRAME_NATIVE", "0")
        assert receipts.transform(changed, chain_id=OP.chain_id).equals(native)


@pytest.mark.parametrize("recording", RECORDINGS, ids=IDS)
def test_what_no_column_stores_is_the_known_list(recording: Recording) -> None:
    """A key listed here that a column starts to read, or a recorded key no column reads, shows up here."""
    assert _unstored(recording) == UNSTORED.get(recording.id, {})


@pytest.mark.parametrize("recording", [r for r in RECORDINGS if r.chain_id == 137], ids=lambda r: r.id)
def test_polygon_blocks_prove_as_ethereum_blocks_do(recording: Recording) -> None:
    report = _verify(recording)
    assert report.failures == []
    assert report.skipped == []
    assert report.blocks_verified == {"blocks": 1, "transactions": 1, "receipts": 1, "logs": 1}


@pytest.mark.parametrize("recording", RECORDINGS, ids=IDS)
def test_every_header_proves_its_hash(recording: Recording) -> None:
    """The L2s' own header fields (Arbitrum's send root and count, OP's Jovian extra data) hash as Ethereum's do."""
    report = verify_tables(blocks=_tables(recording)["blocks"], chain_id=recording.chain_id)
    assert [f for f in report.failures if f.check == "block_hash"] == []
    assert report.blocks_verified["blocks"] == 1


# --- the chain families' proofs (issue 43) ---------------------------------------------------------------------------

L2 = [r for r in RECORDINGS if r.chain_id != 137]


def _changed(table: pa.Table, index: int, **values: Any) -> pa.Table:
    """``table`` with the row of ``transaction_index`` ``index`` given ``values``."""
    rows = table.to_pylist()
    for row in rows:
        if row["transaction_index"] == index:
            row.update(values)
    return pa.Table.from_pylist(rows, schema=table.schema)


def _checks(report: Report) -> set[tuple[str, str]]:
    return {(f.dataset, f.check) for f in report.failures}


@pytest.mark.parametrize("recording", RECORDINGS, ids=IDS)
def test_no_false_alarm_on_a_recorded_block(recording: Recording) -> None:
    """What a family's headers commit to nothing of is skipped with its reason, never failed."""
    report = _verify(recording)
    assert report.failures == []
    assert report.blocks_verified == {"blocks": 1, "transactions": 1, "receipts": 1, "logs": 1}


def test_what_op_headers_commit_to_nothing_of_is_skipped_with_its_reason() -> None:
    skipped = {(s.dataset, s.check): s.reason for s in _verify(BY_ID["optimism-154497277"]).skipped}
    assert "Isthmus" in skipped["blocks", "withdrawals_root"]
    assert "data-availability footprint" in skipped["receipts", "blob_gas_used"]


@pytest.mark.parametrize("recording", [BY_ID["arbitrum-150000000"], BY_ID["arb-sepolia-185232421"]], ids=lambda r: r.id)
def test_arbitrum_blocks_prove_both_roots(recording: Recording) -> None:
    """The ArbOS internal transaction (0x6a) is hashed with its own encoding, so the transactions root is rebuilt; the
    price paid, which Arbitrum does not derive the Ethereum way, is the one check skipped."""
    report = _verify(recording)
    assert [(s.dataset, s.check) for s in report.skipped] == [("receipts", "effective_gas_price")]
    assert "base fee" in report.skipped[0].reason


@pytest.mark.parametrize("recording", L2, ids=lambda r: r.id)
def test_a_forged_sender_of_an_ordinary_transaction_beside_a_foreign_type_is_caught(recording: Recording) -> None:
    tables = _tables(recording)
    forged = _changed(tables["transactions"], 1, from_address=bytes.fromhex("11" * 20))
    report = verify_tables(**{**tables, "transactions": forged}, chain_id=recording.chain_id)
    assert ("transactions", "sender") in _checks(report)


@pytest.mark.parametrize("recording", L2, ids=lambda r: r.id)
def test_an_altered_input_of_an_ordinary_transaction_beside_a_foreign_type_is_caught(recording: Recording) -> None:
    tables = _tables(recording)
    input_ = tables["transactions"]["input"][1].as_py()
    altered = _changed(tables["transactions"], 1, input=input_ + b"\x00")
    report = verify_tables(**{**tables, "transactions": altered}, chain_id=recording.chain_id)
    assert {("transactions", "transaction_hash"), ("transactions", "sender")} <= _checks(report)


@pytest.mark.parametrize("recording", [BY_ID["arbitrum-150000000"], BY_ID["arb-sepolia-185232421"]], ids=lambda r: r.id)
def test_an_altered_arbitrum_internal_transaction_is_caught(recording: Recording) -> None:
    tables = _tables(recording)
    input_ = tables["transactions"]["input"][0].as_py()
    altered = _changed(tables["transactions"], 0, input=input_[:-1] + b"\x02")
    report = verify_tables(**{**tables, "transactions": altered}, chain_id=recording.chain_id)
    assert {("transactions", "transaction_hash"), ("transactions", "transactions_root")} <= _checks(report)
    forged = _changed(tables["transactions"], 0, from_address=bytes.fromhex("11" * 20))
    report = verify_tables(**{**tables, "transactions": forged}, chain_id=recording.chain_id)
    assert ("transactions", "sender") in _checks(report)


def test_op_roots_are_proven_with_deposits_encoded_as_op_encodes_them() -> None:
    """The deposit transaction and its receipt (Regolith's nonce, Canyon's version) are encoded for the roots, so
    neither root is skipped: only what no OP header commits to is."""
    skipped = [(s.dataset, s.check) for s in _verify(OP).skipped]
    assert sorted(skipped) == [("blocks", "withdrawals_root"), ("receipts", "blob_gas_used")]


@pytest.mark.parametrize(
    "change", [{"source_hash": bytes.fromhex("22" * 32)}, {"mint": Decimal(1)}, {"is_system_tx": True}], ids=str
)
def test_a_changed_deposit_is_caught(change: dict[str, Any]) -> None:
    tables = _tables(OP)
    changed = _changed(tables["transactions"], 0, **change)
    report = verify_tables(**{**tables, "transactions": changed}, chain_id=OP.chain_id)
    assert {("transactions", "transaction_hash"), ("transactions", "transactions_root")} <= _checks(report)


@pytest.mark.parametrize("change", [{"deposit_nonce": 1}, {"deposit_receipt_version": 2}, {"status": 0}], ids=str)
def test_a_changed_deposit_receipt_is_caught(change: dict[str, Any]) -> None:
    tables = _tables(OP)
    changed = _changed(tables["receipts"], 0, **change)
    report = verify_tables(**{**tables, "receipts": changed}, chain_id=OP.chain_id)
    assert ("receipts", "receipts_root") in _checks(report)


def test_an_altered_log_of_an_op_block_is_caught() -> None:
    tables = _tables(OP)
    rows = tables["logs"].to_pylist()
    rows[0]["data"] += b"\x01"
    report = verify_tables(**{**tables, "logs": pa.Table.from_pylist(rows, schema=tables["logs"].schema)},
                           chain_id=OP.chain_id)  # fmt: skip
    assert ("receipts", "receipts_root") in _checks(report)


def test_an_op_deposit_receipt_without_its_nonce_cannot_be_the_chains() -> None:
    tables = _tables(OP)
    changed = _changed(tables["receipts"], 0, deposit_nonce=None)
    report = verify_tables(**{**tables, "receipts": changed}, chain_id=OP.chain_id)
    assert [f.actual for f in report.failures if f.check == "receipts_root"] == [
        "transaction_index 0 missing deposit_nonce"
    ]


def test_the_arbos_version_is_read_from_the_mix_hash() -> None:
    """Nitro sends no key for it: the mix hash's third 8 bytes (ArbOS 10 in November 2023, 40 on Sepolia in 2025)."""
    versions = {r.id: _tables(r)["blocks"]["arbos_version"].to_pylist() for r in RECORDINGS}
    assert versions == {r.id: [None] for r in RECORDINGS} | {"arbitrum-150000000": [10], "arb-sepolia-185232421": [40]}


@pytest.mark.parametrize("column", ["send_root", "send_count", "l1_block_number", "arbos_version"])
def test_an_arbitrum_header_column_is_what_the_hashed_header_holds(column: str) -> None:
    tables = _tables(BY_ID["arbitrum-150000000"])
    row = tables["blocks"].to_pylist()[0]
    row[column] = bytes.fromhex("33" * 32) if column == "send_root" else row[column] + 1
    blocks = pa.Table.from_pylist([row], schema=tables["blocks"].schema)
    report = verify_tables(**{**tables, "blocks": blocks}, chain_id=42161)
    assert _checks(report) == {("blocks", column)}


def test_a_family_column_on_a_row_or_chain_without_it_is_caught() -> None:
    tables = _tables(OP)
    changed = _changed(tables["transactions"], 1, source_hash=bytes.fromhex("22" * 32))
    report = verify_tables(**{**tables, "transactions": changed}, chain_id=OP.chain_id)
    assert [(f.check, f.row) for f in report.failures] == [("source_hash", "transaction_index 1")]
    polygon = BY_ID["polygon-23887160"]
    tables = _tables(polygon)
    index = tables["receipts"]["transaction_index"][0].as_py()
    changed = _changed(tables["receipts"], index, l1_fee=Decimal(5))
    report = verify_tables(**{**tables, "receipts": changed}, chain_id=polygon.chain_id)
    assert [f.check for f in report.failures] == ["l1_fee"]


@pytest.mark.parametrize("recording", L2, ids=lambda r: r.id)
def test_chainframe_verify_dir_reads_the_family(recording: Recording, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """``chainframe verify DIR`` on a folder of the recorded block: the receipts checked against their transactions
    (the folder's route, not verify_tables') under the chain's family, so Arbitrum's price paid is skipped with its
    reason, not a false alarm; a changed source hash or mint of an OP deposit fails it."""
    from chainframe.cli import main
    from chainframe.store import ChunkMeta, chunk_path, write_chunk

    number = int(recording.block["number"], 16)
    tables = _tables(recording)

    def write(folder: Path, changed: dict[str, pa.Table]) -> None:
        for name, table in {**tables, **changed}.items():
            meta = ChunkMeta(dataset=name, chain_id=recording.chain_id, start=number, end=number, chunk_size=1000,
                             rows=table.num_rows, finalized=number)  # fmt: skip
            slot = (number - number % 1000, number - number % 1000 + 999)
            target = chunk_path(folder / name, dataset=name, chain_id=recording.chain_id, slot=slot)
            Path(str(target)).parent.mkdir(parents=True, exist_ok=True)
            write_chunk(table, target, meta)

    write(tmp_path / "as-recorded", {})
    code = main(["verify", str(tmp_path / "as-recorded")])
    out = capsys.readouterr().out
    assert code == 3, out  # passed, what the family's headers do not commit to skipped (0: nothing skipped)
    assert "passed, but not all checked" in out
    if "receipts.effective_gas_price" in family_of(recording.chain_id).unprovable:  # Arbitrum
        assert "skipped  receipts effective_gas_price for 1 blocks: Arbitrum charges" in out
    if recording is not OP:
        return
    for change in ({"source_hash": bytes.fromhex("22" * 32)}, {"mint": Decimal(7)}):
        folder = tmp_path / next(iter(change))
        write(folder, {"transactions": _changed(tables["transactions"], 0, **change)})
        assert main(["verify", str(folder)]) == 1
        assert "transactions_root" in capsys.readouterr().out


@pytest.mark.parametrize("recording", L2, ids=lambda r: r.id)
def test_extract_verify_proves_receipts_with_transactions_under_the_family(recording: Recording) -> None:
    """``extract --verify``'s part that checks receipts against their transactions (the joint proof of a slot) reads
    the chain's family as verify does: no false alarm on the recorded block, Arbitrum's price paid skipped."""
    from chainframe.engine._joint import _prove

    tables = _tables(recording)
    report = _prove({name: tables[name] for name in ("blocks", "receipts", "transactions")}, recording.chain_id)
    assert report.failures == []
    skipped = {(s.dataset, s.check) for s in report.skipped}
    assert (("receipts", "effective_gas_price") in skipped) == (recording is not OP)
