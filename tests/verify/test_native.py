"""The compiled hashing and encoding (``_native.c``) against the pure-Python reference: random and recorded inputs."""

from __future__ import annotations

import json
import random
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from Crypto.Hash import keccak as pycryptodome_keccak

from chainframe.datasets import LOGS, RECEIPTS
from chainframe.verify import _hashing, _logs, _receipts, _trie
from tests.fixtures import recorded_responses

native: Any = _hashing.NATIVE
pytestmark = pytest.mark.skipif(native is None, reason="chainframe.verify._native is not built, or CHAINFRAME_NATIVE=0")


def _reference_keccak(data: bytes) -> bytes:
    return pycryptodome_keccak.new(digest_bits=256, data=data).digest()


def _item(rng: random.Random, depth: int = 0) -> Any:
    if depth > 3 or rng.random() < 0.6:
        size = rng.choice([0, 1, 1, 2, 20, 32, 55, 56, 57, 200, 1100])
        if size == 1:
            return bytes([rng.choice([0, 0x7F, 0x80, 0xFF])])
        return rng.randbytes(size)
    return [_item(rng, depth + 1) for _ in range(rng.choice([0, 1, 3, 17, 70]))]


def test_keccak_matches_pycryptodome_at_every_length_around_the_rate() -> None:
    rng = random.Random(1)
    for size in [*range(0, 300), 1000, 4096, 100_000]:
        data = rng.randbytes(size)
        assert native.keccak256(data) == _reference_keccak(data), size
    assert native.keccak256(memoryview(b"abc")) == _reference_keccak(b"abc")


@pytest.mark.parametrize("wide", [True, False])
def test_many_keccaks_at_once_match_pycryptodome(wide: bool) -> None:
    """Eight at a time where the CPU has AVX-512F (``SIMD``), lanes of unequal lengths finishing at other blocks; a
    count that is not a multiple of eight leaves some one at a time."""
    rng = random.Random(2)
    sizes = [*range(0, 300), *[rng.choice([135, 136, 137, 271, 272, 273, 3500, 9000]) for _ in range(101)]]
    rng.shuffle(sizes)
    items = [rng.randbytes(size) for size in sizes]
    assert native.keccak256_many(items, wide) == [_reference_keccak(item) for item in items]
    assert native.keccak256_many([], wide) == []


def test_rlp_matches_the_reference_on_random_nested_items() -> None:
    """Random items up to four lists deep. The count is arbitrary: 500 of this seed hold every leaf size and list
    length at every depth at least 37 times, and outer lists whose length takes 0 to 3 bytes; 2,000 held no other case
    and took four times as long (30 s, most of it building the items and the pure-Python reference)."""
    rng = random.Random(2)
    for _ in range(500):
        item = _item(rng)
        assert native.rlp(item) == _hashing.python_rlp(item)
    assert native.rlp((b"a", (b"bc",))) == _hashing.python_rlp([b"a", [b"bc"]])
    with pytest.raises(TypeError):
        native.rlp([b"a", 1])


@pytest.mark.parametrize("count", [0, 1, 2, 3, 15, 16, 17, 127, 128, 129, 255, 256, 257, 1000])
def test_ordered_root_matches_the_reference(count: int) -> None:
    rng = random.Random(count)
    values = [rng.randbytes(rng.choice([1, 5, 20, 31, 32, 33, 120, 600])) for _ in range(count)]
    assert native.ordered_root(values) == _trie.python_ordered_root(values)


def _random_tables(rng: random.Random, blocks: int) -> tuple[pa.Table, pa.Table]:
    receipts: dict[str, list[Any]] = {n: [] for n in _receipts.NAMES}
    logs: dict[str, list[Any]] = {n: [] for n in ("block_number", "transaction_index", "log_index", "address",
                                                  "topics", "data")}  # fmt: skip
    addresses = [rng.randbytes(20) for _ in range(5)]
    topics = [rng.randbytes(32) for _ in range(8)]
    for block in range(blocks):
        cumulative = 0
        log_index = 0
        for tx in range(rng.choice([0, 1, 2, 5, 40, 130])):
            cumulative += rng.choice([0, 21000, 10**6, 2**40])
            status = rng.choice([None, 0, 1])
            receipts["block_number"].append(block)
            receipts["transaction_index"].append(tx)
            receipts["transaction_type"].append(rng.choice([None, 0, 1, 2, 3, 4]))
            receipts["status"].append(status)
            receipts["root"].append(rng.randbytes(32) if status is None else None)
            receipts["cumulative_gas_used"].append(cumulative)
            receipts["logs_bloom"].append(rng.randbytes(256))
            for _ in range(rng.choice([0, 0, 1, 3, 60])):
                logs["block_number"].append(block)
                logs["transaction_index"].append(tx)
                logs["log_index"].append(log_index)
                log_index += 1
                logs["address"].append(rng.choice(addresses) if rng.random() < 0.9 else rng.randbytes(20))
                logs["topics"].append(rng.sample(topics, rng.choice([0, 1, 4])))
                logs["data"].append(rng.randbytes(rng.choice([0, 1, 32, 60, 64, 300])))
    receipt_types = {"block_number": pa.uint64(), "transaction_index": pa.uint64(), "transaction_type": pa.uint8(),
                     "status": pa.uint8(), "root": pa.binary(32), "cumulative_gas_used": pa.uint64(),
                     "logs_bloom": pa.binary(256)}  # fmt: skip
    log_types = {"block_number": pa.uint64(), "transaction_index": pa.uint64(), "log_index": pa.uint64(),
                 "address": pa.binary(20), "topics": pa.list_(pa.binary(32)), "data": pa.binary()}  # fmt: skip
    receipts_table = pa.table({n: pa.array(v, receipt_types[n]) for n, v in receipts.items()})
    logs_table = pa.table({n: pa.array(v, log_types[n]) for n, v in logs.items()})
    # Shuffled and in several chunks, sliced: the native path sorts, and reads chunked and offset columns.
    order = list(range(logs_table.num_rows))
    rng.shuffle(order)
    logs_table = logs_table.take(pa.array(order, pa.int64()))
    half = logs_table.num_rows // 2
    logs_table = pa.concat_tables([logs_table.slice(0, half), logs_table.slice(half)])
    return receipts_table, logs_table


@pytest.mark.parametrize("seed", range(6))
def test_receipts_roots_and_blooms_match_the_reference_on_random_tables(seed: int) -> None:
    rng = random.Random(seed)
    receipts, logs = _random_tables(rng, 12)
    numbers = sorted(set(receipts["block_number"].to_pylist()) | {999})
    assert _receipts._native_roots(receipts, logs) == _receipts._python_roots(receipts, logs)
    assert _logs._native_blooms(logs, numbers) == _logs._python_blooms(logs, numbers)
    sliced = receipts.slice(3)  # columns with an array offset
    assert _receipts._native_roots(sliced, logs) == _receipts._python_roots(sliced, logs)


def test_receipts_roots_in_batches_are_each_blocks_own() -> None:
    """Over 8 MB of receipts: their tries are built in batches (the leaves of a batch hashed together), each root the
    one its block gives alone."""
    rng = random.Random(7)
    receipts, logs = _random_tables(rng, 260)
    assert receipts.num_rows * 256 + sum(len(d) for d in logs["data"].to_pylist()) > 8 << 20
    together = _receipts._native_roots(receipts, logs)
    for number in rng.sample(sorted(together), 10):
        alone = _receipts._native_roots(_block(receipts, number), _block(logs, number))
        assert alone == {number: together[number]}


def _block(table: pa.Table, number: int) -> pa.Table:
    return table.filter(pa.compute.equal(table["block_number"], number))


RECEIPT_RECORDS = [r for r in recorded_responses() if r.method == "eth_getBlockReceipts" and r.result]


@pytest.mark.parametrize("record", RECEIPT_RECORDS, ids=[r.id for r in RECEIPT_RECORDS])
def test_receipts_roots_and_blooms_match_the_reference_on_recorded_receipts(record: Any) -> None:
    receipts = RECEIPTS.from_objects(json.dumps(record.result).encode(), chain_id=1, u256="binary")
    logs = LOGS.from_objects(json.dumps([log for r in record.result for log in r["logs"]]).encode(), chain_id=1,
                             u256="binary")  # fmt: skip
    roots = _receipts._native_roots(receipts, logs)
    assert roots == _receipts._python_roots(receipts, logs)
    numbers = list(roots)
    assert _logs._native_blooms(logs, numbers) == _logs._python_blooms(logs, numbers)
    # The receipts' own blooms are what the logs give, and each receipt's bloom recomputed from its logs.
    for row in receipts.to_pylist():
        mine = logs.filter(pa.compute.equal(logs["transaction_index"], row["transaction_index"]))
        assert _logs._native_blooms(mine, [row["block_number"]])[row["block_number"]] == row["logs_bloom"]


@pytest.mark.parametrize("record", RECEIPT_RECORDS, ids=[r.id for r in RECEIPT_RECORDS])
def test_receipts_and_logs_in_one_scan_are_the_datasets_tables(record: Any) -> None:
    from chainframe.verify import receipts_and_logs

    # A batch answer as eth_getBlockReceipts gives it, with a null result (a block the node lacks) beside it.
    body = json.dumps([{"jsonrpc": "2.0", "id": 0, "result": record.result},
                       {"jsonrpc": "2.0", "id": 1, "result": None}]).encode()  # fmt: skip
    receipts, logs = receipts_and_logs([body], chain_id=1)
    assert logs.num_rows == sum(len(r["logs"]) for r in record.result)
    assert receipts.equals(RECEIPTS.transform([body], chain_id=1, u256="binary"))
    assert logs.equals(LOGS.from_receipts([body], chain_id=1, u256="binary"))


def _random_transaction(rng: random.Random, block: int, index: int, u256: str) -> dict[str, Any]:
    kind = rng.choice([0, 0, 1, 2, 3, 4])

    def wei() -> Any:
        value = rng.choice([0, 1, 127, 128, 255, 10**9, 10**18 + 7, 2**100 + 3, 10**37])
        return value.to_bytes(32, "big") if u256 == "binary" else Decimal(value)

    word = lambda: rng.choice([bytes(32), b"\x00" * 5 + rng.randbytes(27), rng.randbytes(32)])  # noqa: E731
    tx: dict[str, Any] = {
        "block_number": block, "transaction_index": index, "transaction_type": kind, "nonce": rng.choice([0, 1, 2**40]),
        "gas": rng.choice([0, 21000, 2**31]), "to_address": rng.choice([None, rng.randbytes(20)]), "value": wei(),
        "input": rng.choice([b"", b"\x01", b"\x80", rng.randbytes(60), rng.randbytes(2000)]), "r": word(), "s": word(),
        "gas_price": wei(), "transaction_chain_id": None, "y_parity": None, "max_fee_per_gas": None,
        "max_priority_fee_per_gas": None, "max_fee_per_blob_gas": None, "access_list": None,
        "blob_versioned_hashes": None, "authorization_list": None,
    }  # fmt: skip
    if kind == 0:
        tx["v"] = rng.choice([27, 28, 37, 38, 2 * 11155111 + 35])
        return tx
    tx["y_parity"] = rng.choice([0, 1])
    tx["v"] = tx["y_parity"]
    tx["transaction_chain_id"] = rng.choice([1, 31337, 11155111])
    tx["access_list"] = [
        {"address": rng.randbytes(20), "storage_keys": [rng.randbytes(32) for _ in range(rng.choice([0, 1, 3]))]}
        for _ in range(rng.choice([0, 0, 1, 4]))
    ]
    if kind >= 2:
        tx["max_fee_per_gas"], tx["max_priority_fee_per_gas"] = wei(), wei()
    if kind == 3:
        tx["max_fee_per_blob_gas"] = wei()
        tx["blob_versioned_hashes"] = [rng.randbytes(32) for _ in range(rng.choice([1, 2, 6]))]
    if kind == 4:
        tx["authorization_list"] = [
            {"chain_id": rng.choice([0, 1]), "address": rng.randbytes(20), "nonce": rng.choice([0, 5]),
             "y_parity": rng.choice([0, 1]), "r": word(), "s": word()}
            for _ in range(rng.choice([1, 2]))
        ]  # fmt: skip
    return tx


@pytest.mark.parametrize("u256", ["decimal", "binary"])
@pytest.mark.parametrize("seed", range(3))
def test_transactions_encoded_in_c_match_the_reference(seed: int, u256: Any) -> None:
    from chainframe.datasets import TRANSACTIONS
    from chainframe.verify import _transactions

    rng = random.Random(seed)
    rows = [_random_transaction(rng, block, i, u256) for block in range(1, 9) for i in range(rng.choice([0, 1, 3, 40]))]
    schema = TRANSACTIONS.schema_for(u256)
    table = pa.Table.from_pylist([{**row, "chain_id": 1} for row in rows], schema=schema).select(_transactions.NAMES)
    for sliced in (table, table.slice(7)):
        hashes, payloads, flags, roots = _transactions._native_encoded(sliced)
        listed = sliced.to_pylist()
        for i, tx in enumerate(listed):
            assert flags[i] == 3
            assert hashes[32 * i : 32 * i + 32] == _hashing.keccak(_transactions.transaction_bytes(tx))
            assert payloads[32 * i : 32 * i + 32] == _hashing.keccak(_transactions.transaction_bytes(tx, signed=False))
        for block in {tx["block_number"] for tx in listed}:
            mine = [tx for tx in listed if tx["block_number"] == block]
            assert roots[block] == _trie.python_ordered_root([_transactions.transaction_bytes(tx) for tx in mine])
