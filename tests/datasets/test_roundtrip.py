"""Every recorded answer of a method a dataset reads, through ``from_objects`` and back to JSON text: each sourced
column encodes to exactly what the node sent, absent keys come out null, derived columns agree with the object, and
no key of the object is left uncovered without a reason written here."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pytest

from chainframe.datasets import BLOCKS, LOGS, RECEIPTS, TRANSACTIONS, DecodeError
from chainframe.datasets._columns import U256
from chainframe.datasets._objects import ObjectDataset
from tests.datasets.encode import encode_column
from tests.fixtures import Recorded, lowercased, recorded_responses

CHAIN_ID = 1
BLOCK_METHODS = (
    "eth_getBlockByNumber",
    "eth_getBlockByHash",
    "eth_getUncleByBlockHashAndIndex",
    "eth_getUncleByBlockNumberAndIndex",
)
TRANSACTION_METHODS = (
    "eth_getTransactionByHash",
    "eth_getTransactionByBlockHashAndIndex",
    "eth_getTransactionByBlockNumberAndIndex",
)
RECEIPT_METHODS = ("eth_getTransactionReceipt", "eth_getBlockReceipts")

# Keys of recorded objects that no column of the dataset reads, and why that is right.
UNCOVERED: dict[str, dict[str, str]] = {
    "blocks": {
        "author": "Parity's copy of `miner` (same address)",
        "sealFields": "Parity's RLP seal fields: the mix hash and nonce, already the mix_hash and block_nonce columns",
    },
    "transactions": {
        "condition": "Parity-only: the local scheduling condition of a pending transaction",
        "creates": "Parity-only: the created address; the receipts dataset has it as contract_address",
        "publicKey": "Parity-only: the sender's public key; from_address is the sender",
        "raw": "Parity and old Infura: the signed RLP, re-derivable from the other columns",
        "standardV": "Parity-only: v normalized to 0/1; y_parity (or v) carries it",
    },
    "receipts": {"logs": "the logs dataset (LOGS.from_receipts); the receipt keeps their number as log_count"},
    "logs": {
        "transactionLogIndex": "Parity-only: position of the log in its transaction",
        "type": "Parity-only: 'mined' or 'pending'; removed carries what we need",
    },
}
# Values a node wrote as non-canonical text (the column holds the value; written back, its text differs), by file:
# compared by value. Anything else must come back as the very text the node sent.
NON_CANONICAL: dict[str, dict[str, str]] = {
    "other/ethereumjs/packages/block/test/testdata/testdata-from-rpc-difficulty-as-integer.json": {
        "difficulty": "a decimal string ('82459156443011'), as the file's name says",
        "r": "one transaction's r with a leading zero digit ('0x0599..'); a word is written back as a quantity",
    },
}
# Columns not read from a key; each is checked against the object below.
DERIVED = {
    "blocks": {"chain_id", "block_time", "transaction_count", "arbos_version"},  # Arbitrum's, from its mix hash
    "transactions": {"chain_id", "block_time", "is_state_sync"},  # Polygon's, by Bor's hash rule
    "receipts": {"chain_id", "block_time", "log_count", "is_state_sync"},
    "logs": {"chain_id", "block_time"},
}
DATASETS: dict[str, ObjectDataset] = {d.name: d for d in (BLOCKS, TRANSACTIONS, RECEIPTS, LOGS)}


@dataclass(frozen=True)
class Feed:
    """The objects of one recorded answer that one dataset reads."""

    record: Recorded
    dataset: str
    objects: list[dict[str, Any]]

    @property
    def id(self) -> str:
        return f"{self.record.id}->{self.dataset}"


def _as_list(result: Any) -> list[dict[str, Any]]:
    if result is None:
        return []
    return list(result) if isinstance(result, list) else [result]


def feeds_of(record: Recorded) -> list[Feed]:
    """What each dataset reads of a recorded answer (nothing for a null result or an error)."""
    method, objects = record.method, _as_list(record.result)
    if method in BLOCK_METHODS:
        blocks: list[dict[str, Any]] = []
        txs: list[dict[str, Any]] = []
        for block in objects:
            full = [t for t in block.get("transactions", []) if isinstance(t, dict)]
            if full:
                block = {**block, "transactions": [t["hash"] for t in full]}
            blocks.append(block)
            txs += full
        out = [Feed(record, "blocks", blocks)]
        if txs or (len(record.params) > 1 and record.params[1] is True):
            out.append(Feed(record, "transactions", txs))
        return out
    if method in TRANSACTION_METHODS:
        return [Feed(record, "transactions", objects)]
    if method in RECEIPT_METHODS:
        logs = [log for receipt in objects for log in receipt["logs"]]
        return [Feed(record, "receipts", objects), Feed(record, "logs", logs)]
    if method == "eth_getLogs":
        return [Feed(record, "logs", objects)]
    return []


RECORDS = recorded_responses()
FEEDS = [feed for record in RECORDS for feed in feeds_of(record)]


def _table(feed: Feed, u256: U256 = "decimal") -> pa.Table:
    return DATASETS[feed.dataset].from_objects(json.dumps(feed.objects).encode(), chain_id=CHAIN_ID, u256=u256)


def _utc(seconds: int | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, UTC)


def _number(text: str) -> int:
    return int(text, 16) if text.startswith("0x") else int(text)


def _signed_chain_id(original: Mapping[str, Any]) -> int | None:
    v, kind = original.get("v"), int(original.get("type", "0x0"), 16)
    return (int(v, 16) - 35) // 2 if kind == 0 and v is not None and int(v, 16) >= 35 else None


def _check_derived(dataset: str, row: Mapping[str, Any], original: Mapping[str, Any]) -> None:
    assert row["chain_id"] == CHAIN_ID
    seconds = row["timestamp"] if dataset == "blocks" else row["block_timestamp"]
    assert row["block_time"] == _utc(seconds)
    if dataset == "blocks":
        assert row["block_time"] == _utc(int(original["timestamp"], 16))
        # An uncle has no transactions key: its count is unknown, not zero.
        expected = len(original["transactions"]) if "transactions" in original else None
        assert row["transaction_count"] == expected
        assert row["arbos_version"] is None  # read from the mix hash on Arbitrum chains only
    if dataset == "receipts":
        assert row["log_count"] == len(original["logs"])
    if dataset in ("transactions", "receipts"):
        assert row["is_state_sync"] is None  # marked on Polygon PoS chains only


def test_every_dataset_method_is_fed() -> None:
    methods = {r.method for r in RECORDS}
    fed = {f.record.method for f in FEEDS}
    assert fed == methods & {*BLOCK_METHODS, *TRANSACTION_METHODS, *RECEIPT_METHODS, "eth_getLogs"}
    assert {f.dataset for f in FEEDS if f.objects} == set(DATASETS)


def test_every_column_is_sourced_or_derived() -> None:
    for name, dataset in DATASETS.items():
        assert set(dataset.columns) == set(dataset.sources) | DERIVED[name], name
        assert len(set(dataset.sources.values())) == len(dataset.sources), f"{name}: a key read twice"


def test_every_allowlisted_key_occurs() -> None:
    """The allowlist does not outlive the keys it excuses."""
    seen: dict[str, set[str]] = {name: set() for name in DATASETS}
    for feed in FEEDS:
        for obj in feed.objects:
            seen[feed.dataset] |= obj.keys()
    for name, reasons in UNCOVERED.items():
        assert set(reasons) <= seen[name], f"{name}: allowlisted keys never seen: {set(reasons) - seen[name]}"


def _round_trip_params() -> list[Any]:
    params = []
    for feed in FEEDS:
        for u256 in ("decimal", "binary"):
            params.append(pytest.param(feed, u256, id=f"{feed.id}-{u256}"))
    return params


@pytest.mark.parametrize(("feed", "u256"), _round_trip_params())
def test_recorded_objects_round_trip(feed: Feed, u256: U256) -> None:
    dataset = DATASETS[feed.dataset]
    table = _table(feed, u256)
    assert table.schema == dataset.schema_for(u256)
    assert table.num_rows == len(feed.objects)
    if feed.record.result is None:  # not found, or an error answer: nothing to read, nothing made up
        assert table.num_rows == 0
    rows = table.to_pylist()
    for n, (row, original) in enumerate(zip(rows, feed.objects, strict=True)):
        original = lowercased(original)
        uncovered = set(original) - set(dataset.sources.values())
        assert uncovered <= set(UNCOVERED[feed.dataset]), f"row {n}: keys no column reads: {uncovered}"
        for column, key in dataset.sources.items():
            if key not in original:
                # An EIP-155 legacy transaction's chain id is what its v signs (Hardhat and Ganache send no chainId).
                signed = _signed_chain_id(original) if column == "transaction_chain_id" else None
                assert row[column] == signed, f"row {n}: {column} is not {signed}, but {key!r} was absent"
                continue
            encoded, sent = encode_column(column, row[column], u256), original[key]
            if key in NON_CANONICAL.get(feed.record.path, {}) and encoded != sent:
                encoded, sent = _number(encoded), _number(sent)
            assert encoded == sent, f"row {n}: {column} (from {key!r})"
        _check_derived(feed.dataset, row, original)


# --- the answers as received, through transform ----------------------------------------------------------------


def _envelope(result: Any, id_: int = 0) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def _batch(*results: Any) -> bytes:
    """A batch answer, deliberately out of id order (nodes may answer in any order)."""
    return json.dumps([_envelope(r, i) for i, r in reversed(list(enumerate(results)))]).encode()


def _objects(dataset: ObjectDataset, objects: Sequence[Mapping[str, Any]]) -> pa.Table:
    return dataset.from_objects(json.dumps(list(objects)).encode(), chain_id=CHAIN_ID)


BLOCK_RECORDS = [r for r in RECORDS if r.method in BLOCK_METHODS and r.result is not None]
RECEIPT_LISTS = [r for r in RECORDS if r.method == "eth_getBlockReceipts" and r.result is not None]
LOG_RECORDS = [r for r in RECORDS if r.method == "eth_getLogs"]
NULL_RECORDS = [r for r in RECORDS if r.result is None and (feeds_of(r) or r.error)]


@pytest.mark.parametrize("record", BLOCK_RECORDS, ids=[r.id for r in BLOCK_RECORDS])
def test_block_answer_transform_matches_from_objects(record: Recorded) -> None:
    """BLOCKS and TRANSACTIONS read a block answer (transactions as hashes or objects) as from_objects reads its
    parts; a transaction without blockTimestamp takes its block's timestamp."""
    block = record.result
    full = [t for t in block.get("transactions", []) if isinstance(t, dict)]
    hashes_only = {**block, "transactions": [t["hash"] for t in full]} if full else block
    # Each reads the form its fetch asks for: BLOCKS hashes, TRANSACTIONS full objects.
    assert BLOCKS.transform([_batch(hashes_only)], chain_id=CHAIN_ID) == _objects(BLOCKS, [hashes_only])
    if full or not block.get("transactions"):
        timed = [{"blockTimestamp": block["timestamp"], **t} for t in full]
        assert TRANSACTIONS.transform([_batch(block)], chain_id=CHAIN_ID) == _objects(TRANSACTIONS, timed)


def test_batch_answers_are_read_in_id_order() -> None:
    blocks = [r.result for r in BLOCK_RECORDS if all(isinstance(t, str) for t in r.result.get("transactions", [0]))]
    blocks = blocks[:5]
    assert len(blocks) == 5
    table = BLOCKS.transform([_batch(*blocks)], chain_id=CHAIN_ID)
    assert table.column("block_hash").to_pylist() == [bytes.fromhex(b["hash"][2:]) for b in blocks]


@pytest.mark.parametrize("record", RECEIPT_LISTS, ids=[r.id for r in RECEIPT_LISTS])
def test_block_receipts_answer_transform_matches_from_objects(record: Recorded) -> None:
    body = _batch(record.result)
    assert RECEIPTS.transform([body], chain_id=CHAIN_ID) == _objects(RECEIPTS, record.result)
    logs = [log for receipt in record.result for log in receipt["logs"]]
    assert LOGS.from_receipts([body], chain_id=CHAIN_ID) == _objects(LOGS, logs)


@pytest.mark.parametrize("record", [r for r in LOG_RECORDS if r.error is None], ids=lambda r: r.id)
def test_logs_answer_transform_matches_from_objects(record: Recorded) -> None:
    body = json.dumps(_envelope(record.result)).encode()
    assert LOGS.transform([body], chain_id=CHAIN_ID) == _objects(LOGS, record.result)


@pytest.mark.parametrize("record", NULL_RECORDS, ids=[r.id for r in NULL_RECORDS])
def test_null_or_error_answer_yields_no_rows(record: Recorded) -> None:
    """A null result is no rows; an error answer is never read as no rows: it raises (rows are not dropped silently;
    the client raises on it first)."""
    for feed in feeds_of(record):
        assert feed.objects == []
        assert _table(feed).num_rows == 0
    if record.error is not None:
        assert record.method == "eth_getLogs"  # the only errors recorded; batch errors: see the test below
        body = json.dumps({"jsonrpc": "2.0", "id": 0, "error": record.error}).encode()
        with pytest.raises(DecodeError):
            LOGS.transform([body], chain_id=CHAIN_ID)
        return
    if record.method in BLOCK_METHODS:
        assert BLOCKS.transform([_batch(None)], chain_id=CHAIN_ID).num_rows == 0
        assert TRANSACTIONS.transform([_batch(None)], chain_id=CHAIN_ID).num_rows == 0
    elif record.method == "eth_getBlockReceipts":
        assert RECEIPTS.transform([_batch(None)], chain_id=CHAIN_ID).num_rows == 0
        assert LOGS.from_receipts([_batch(None)], chain_id=CHAIN_ID).num_rows == 0


ERRORS = [r.error for r in RECORDS if r.error is not None]


@pytest.mark.parametrize("dataset", [BLOCKS, TRANSACTIONS, RECEIPTS], ids=lambda d: d.name)
def test_batch_item_error_is_not_read_as_no_rows(dataset: ObjectDataset) -> None:
    assert ERRORS
    body = json.dumps([_envelope(None, 1), {"jsonrpc": "2.0", "id": 0, "error": ERRORS[0]}]).encode()
    with pytest.raises(DecodeError):
        dataset.transform([body], chain_id=CHAIN_ID)


def test_answer_of_the_wrong_shape_raises_decode_error() -> None:
    full = next(r.result for r in BLOCK_RECORDS if any(isinstance(t, dict) for t in r.result["transactions"]))
    with pytest.raises(DecodeError):
        BLOCKS.transform([_batch(full)], chain_id=CHAIN_ID)
