"""Recorded blocks of the chain families beyond the L2s of ``test_l2_recorded.py`` (issue 43): BNB Smart Chain and
Avalanche's C-Chain.

The BSC blocks are ten ``eth_getBlockByNumber(N, true)`` answers of BSC testnet (chain 97, blocks 55,474,112 to
55,475,598, 2025-06-20, after Maxwell: 0.75 s blocks, the milliseconds in the mix hash), recorded by union's Parlia
light-client tests as raw JSON strings in their Rust source, vendored whole (``networks/union``; source and license in
``tests/data/NOTICE.md``). No receipt of them was recorded, so blocks and transactions are what is proven here: every
stored column equal to the recorded JSON, each block hash from the header's own field list, each transactions root
rebuilt and each sender's signature checked (the validators' system transactions with gas price 0 among them), with
no check skipped under the BSC family and a changed byte caught.

The Avalanche headers are three mainnet ``eth_getBlockByNumber`` answers, one per era of its header (Apricot 4,
Cancun, Granite: 19, 22 and 24 fields), recorded by Nethermind's Avalanche tests without their transactions
(``networks/nethermind``): each block hash proven from the family's own field list, which Ethereum's does not
reproduce, and the atomic transactions (``blockExtraData``) proven through ``extDataHash``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
import pyarrow as pa
import pytest

from chainframe.datasets import DATASETS, BlockRange
from chainframe.families import AVALANCHE, BSC, ETHEREUM, family_of
from chainframe.rpc import AsyncClient, MemoryTransport, RetryPolicy
from chainframe.verify import Report, verify_tables
from tests.fixtures import RECORDED_DIR
from tests.verify.test_l2_recorded import Recording, _expected, _objects, answering, differences

BSC_TESTNET = 97
PARLIA = RECORDED_DIR / "networks/union/lib/parlia-verifier/src/lib.rs"
FETCHED = ("blocks", "transactions")
VALIDATOR_SET = bytes.fromhex("0000000000000000000000000000000000001000")
EMPTY_ROOT = bytes.fromhex("56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421")


def _bsc_blocks() -> list[dict[str, Any]]:
    """Each whole block the Rust source holds as a raw string literal (``r#"{...}"#``), once, by number; a block
    given with transaction hashes only (51,006,562) is left out: its transactions were not recorded."""
    found: dict[int, dict[str, Any]] = {}
    for text in re.findall(r'r#"(\{.*?\})"#', PARLIA.read_text(encoding="utf-8"), re.S):
        block = json.loads(text)
        if all(isinstance(tx, dict) for tx in block["transactions"]):
            found[int(block["number"], 16)] = block
    return [found[n] for n in sorted(found)]


BLOCKS = _bsc_blocks()


def _node(blocks: list[dict[str, Any]], chain_id: int) -> MemoryTransport:
    """A node that answers what was recorded: the chain id and each block, hydrated or by hashes (a header recorded
    without its transactions, as it was)."""
    by_number = {int(b["number"], 16): b for b in blocks}

    def answer(call: dict[str, Any]) -> dict[str, Any]:
        method, params = call["method"], call.get("params", [])
        if method == "eth_chainId":
            return {"result": hex(chain_id)}
        if method == "eth_getBlockByNumber" and int(params[0], 16) in by_number:
            block = by_number[int(params[0], 16)]
            if params[1] or "transactions" not in block:
                return {"result": block}
            return {"result": {**block, "transactions": [t["hash"] for t in block["transactions"]]}}
        return {"error": {"code": -32000, "message": f"not recorded: {method} {params}"}}

    return answering(answer)


def _fetch(blocks: list[dict[str, Any]], chain_id: int, names: tuple[str, ...]) -> dict[str, list[bytes]]:
    """Each dataset's answers for every recorded block, fetched as a run fetches them."""
    numbers = [int(b["number"], 16) for b in blocks]

    async def fetch() -> dict[str, list[bytes]]:
        client = AsyncClient("http://node.example", transport=_node(blocks, chain_id), retry=RetryPolicy(attempts=1))
        async with client:
            return {
                name: [body for n in numbers for body in await DATASETS[name].fetch(client, BlockRange(n, n))]
                for name in names
            }

    return anyio.run(fetch)


@pytest.fixture(scope="module")
def answers() -> dict[str, list[bytes]]:
    return _fetch(BLOCKS, BSC_TESTNET, FETCHED)


@pytest.fixture(scope="module")
def tables(answers: dict[str, list[bytes]]) -> dict[str, pa.Table]:
    return {name: DATASETS[name].transform(answers[name], chain_id=BSC_TESTNET) for name in FETCHED}


def _verify(tables: dict[str, pa.Table], **changed: pa.Table) -> Report:
    return verify_tables(**{**tables, **changed}, chain_id=BSC_TESTNET)


def _changed(table: pa.Table, where: dict[str, Any], **values: Any) -> pa.Table:
    """``table`` with ``values`` set in the one row matching ``where``."""
    rows = table.to_pylist()
    (row,) = [r for r in rows if all(r[k] == v for k, v in where.items())]
    row.update(values)
    return pa.Table.from_pylist(rows, schema=table.schema)


def _system_transactions() -> list[dict[str, Any]]:
    """The validators' system transactions: gas price 0, from the block's miner to a system contract."""
    return [
        tx for b in BLOCKS for tx in b["transactions"]
        if tx["gasPrice"] == "0x0" and tx["from"] == b["miner"] and tx["to"].startswith("0x" + "00" * 18)
    ]  # fmt: skip


# --- tests -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("chain_id", [56, 97])
def test_bsc_chains_are_read_as_the_bsc_family(chain_id: int) -> None:
    assert family_of(chain_id) is BSC


def test_the_recording_holds_what_the_family_declares() -> None:
    """Ten whole blocks, one empty; Prague's header fields as Parlia fills them; system transactions to the
    ValidatorSet contract; blob transactions (type 3) beside legacy and EIP-1559 ones."""
    assert [int(b["number"], 16) for b in BLOCKS] == [
        55474112, 55474113, 55474114, 55474115, 55475000, 55475001, 55475002, 55475596, 55475597, 55475598,
    ]  # fmt: skip
    assert {b["withdrawalsRoot"] for b in BLOCKS} == {"0x" + EMPTY_ROOT.hex()}
    assert {b["parentBeaconBlockRoot"] for b in BLOCKS} == {"0x" + "00" * 32}
    assert all(b["requestsHash"] and b["withdrawals"] == [] for b in BLOCKS)
    assert all(int(b["milliTimestamp"], 16) == int(b["timestamp"], 16) * 1000 + int(b["mixHash"], 16) for b in BLOCKS)
    system = _system_transactions()
    assert {tx["to"] for tx in system} == {"0x" + VALIDATOR_SET.hex()}
    # Each block's fees deposited (deposit(address)) and, on the epoch's first block, the finality reward paid
    # (distributeFinalityReward(address[],uint256[]))
    assert [(int(tx["blockNumber"], 16), tx["input"][:10]) for tx in system if tx["input"][:10] != "0xf340fa01"] == [
        (55475000, "0x300c3567")
    ]
    assert len(system) == 10
    # Gas price 0 alone does not make one: three ordinary transfers of the testnet paid nothing either
    assert sum(tx["gasPrice"] == "0x0" for b in BLOCKS for tx in b["transactions"]) == 13
    assert {tx["type"] for b in BLOCKS for tx in b["transactions"]} == {"0x0", "0x2", "0x3"}


@pytest.mark.parametrize("reader", ["native", "pure"])
def test_every_stored_column_is_the_recorded_value(
    answers: dict[str, list[bytes]], reader: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if reader == "pure":
        monkeypatch.setenv("CHAINFRAME_NATIVE", "0")
    recordings = [Recording(b["number"], BSC_TESTNET, b, [], block_receipts=False) for b in BLOCKS]
    for name in FETCHED:
        stored = DATASETS[name].transform(answers[name], chain_id=BSC_TESTNET).to_pylist()
        wanted = [
            row
            for recording in recordings
            for row in _expected(
                name, [recording.block] if name == "blocks" else recording.block["transactions"], recording
            )
        ]
        assert len(stored) == len(wanted) == (10 if name == "blocks" else 43), name
        assert differences(name, stored, wanted) == []


def test_what_no_column_stores_is_the_millisecond_time() -> None:
    """The node's ``milliTimestamp`` is the header's time and mix hash summed (asserted above), both stored."""
    for name, objects in (("blocks", BLOCKS), ("transactions", [t for b in BLOCKS for t in b["transactions"]])):
        read = set(_objects(name).sources.values())
        unread = {key for item in objects for key in item} - read
        assert unread == ({"milliTimestamp"} if name == "blocks" else set()), name


def test_every_block_hash_and_transactions_root_is_proven_and_nothing_skipped(tables: dict[str, pa.Table]) -> None:
    report = _verify(tables)
    assert report.failures == []
    assert report.skipped == []
    assert report.blocks_verified == {"blocks": 10, "transactions": 10}


def test_a_changed_byte_of_the_parlia_extra_data_is_caught(tables: dict[str, pa.Table]) -> None:
    """The vote attestation and seal in the extra data are in the header the block hash covers."""
    blocks = tables["blocks"]
    extra = blocks.filter(pa.compute.equal(blocks["block_number"], 55475000))["extra_data"][0].as_py()
    forged = extra[:40] + bytes([extra[40] ^ 1]) + extra[41:]
    report = _verify(tables, blocks=_changed(blocks, {"block_number": 55475000}, extra_data=forged))
    assert [(f.dataset, f.block_number, f.check) for f in report.failures] == [("blocks", 55475000, "block_hash")]


@pytest.mark.parametrize(
    ("column", "value"),
    [("value", 1), ("gas_price", 1), ("from_address", bytes.fromhex("11" * 20))],
)
def test_a_changed_system_transaction_is_caught(tables: dict[str, pa.Table], column: str, value: Any) -> None:
    """A system transaction is signed like any other: its fields are in its hash, its sender in its signature."""
    tx = _system_transactions()[0]
    where = {"transaction_hash": bytes.fromhex(tx["hash"][2:])}
    report = _verify(tables, transactions=_changed(tables["transactions"], where, **{column: value}))
    number = int(tx["blockNumber"], 16)
    assert report.failures
    assert {f.block_number for f in report.failures} == {number}
    assert {f.dataset for f in report.failures} == {"transactions"}


def test_a_changed_blob_versioned_hash_is_caught(tables: dict[str, pa.Table]) -> None:
    transactions = tables["transactions"]
    row = transactions.filter(pa.compute.equal(transactions["transaction_type"], 3)).slice(0, 1).to_pylist()[0]
    hashes = row["blob_versioned_hashes"]
    forged = [hashes[0][:-1] + bytes([hashes[0][-1] ^ 1]), *hashes[1:]]
    where = {"transaction_hash": row["transaction_hash"]}
    report = _verify(tables, transactions=_changed(transactions, where, blob_versioned_hashes=forged))
    assert {(f.dataset, f.block_number) for f in report.failures} == {("transactions", row["block_number"])}


def test_the_family_says_what_it_proves_and_skips_nothing_of_its_own() -> None:
    proven, skipped = BSC.proofs(BSC_TESTNET, int(BLOCKS[-1]["timestamp"], 16))
    assert "withdrawals root" in proven
    assert set(skipped) == {"transactions of any other type"}


# --- Avalanche C-Chain -----------------------------------------------------------------------------------------------

AVALANCHE_MAINNET = 43114
REAL_BLOCKS = RECORDED_DIR / "networks/nethermind/src/Nethermind/Nethermind.Avalanche.Test/Blocks/RealBlocks"
HEADERS = [
    json.loads((REAL_BLOCKS / f"realblock-{era}.json").read_text(encoding="utf-8"))
    for era in ("ap4-5000000", "cancun-70000000", "granite-89117142")
]


@pytest.fixture(scope="module")
def headers() -> pa.Table:
    return DATASETS["blocks"].transform(_fetch(HEADERS, AVALANCHE_MAINNET, ("blocks",))["blocks"], chain_id=43114)


@pytest.mark.parametrize("chain_id", [43114, 43113])
def test_avalanche_chains_are_read_as_the_avalanche_family(chain_id: int) -> None:
    assert family_of(chain_id) is AVALANCHE


def test_the_headers_hold_each_era_of_the_header() -> None:
    """Apricot 4's fee fields, Cancun's blob and beacon fields, Granite's milliseconds; no withdrawals root."""
    assert [(int(h["number"], 16), len(h)) for h in HEADERS] == [(5000000, 21), (70000000, 24), (89117142, 26)]
    assert not any("withdrawalsRoot" in h or "requestsHash" in h or "transactions" in h for h in HEADERS)
    assert ["blobGasUsed" in h for h in HEADERS] == [False, True, True]
    assert ["timestampMilliseconds" in h for h in HEADERS] == [False, False, True]


@pytest.mark.parametrize("reader", ["native", "pure"])
def test_every_avalanche_header_column_is_the_recorded_value(reader: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if reader == "pure":
        monkeypatch.setenv("CHAINFRAME_NATIVE", "0")
    body = _fetch(HEADERS, AVALANCHE_MAINNET, ("blocks",))["blocks"]
    stored = DATASETS["blocks"].transform(body, chain_id=AVALANCHE_MAINNET).to_pylist()
    wanted = []
    for header in HEADERS:
        recording = Recording(header["number"], AVALANCHE_MAINNET, header, [], block_receipts=False)
        (row,) = _expected("blocks", [{**header, "transactions": []}], recording)
        wanted.append({**row, "transaction_count": None, "transaction_hashes": None})  # recorded without them
    differences = [
        (want["block_number"], column, want[column], row[column])
        for row, want in zip(stored, wanted, strict=True)
        for column in row
        if row[column] != want[column]
    ]
    assert differences == []
    unread = {key for header in HEADERS for key in header} - set(_objects("blocks").sources.values())
    assert unread == set()


def test_every_avalanche_block_hash_is_proven_from_the_familys_field_list(headers: pa.Table) -> None:
    report = verify_tables(blocks=headers, chain_id=AVALANCHE_MAINNET)
    assert report.failures == []
    assert report.skipped == []
    assert report.blocks_verified == {"blocks": 3}
    as_ethereum = verify_tables(blocks=headers, chain_id=AVALANCHE_MAINNET, family=ETHEREUM)
    assert [(f.block_number, f.check) for f in as_ethereum.failures if f.check == "block_hash"] == [
        (5000000, "block_hash"), (70000000, "block_hash"), (89117142, "block_hash"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("column", "value"),
    [("ext_data_hash", bytes(32)), ("block_gas_cost", 1), ("ext_data_gas_used", 1), ("timestamp_milliseconds", 1)],
)
def test_a_changed_avalanche_header_field_is_caught(headers: pa.Table, column: str, value: Any) -> None:
    forged = _changed(headers, {"block_number": 89117142}, **{column: value})
    report = verify_tables(blocks=forged, chain_id=AVALANCHE_MAINNET)
    assert ("blocks", 89117142, "block_hash") in {(f.dataset, f.block_number, f.check) for f in report.failures}


def test_a_changed_atomic_transaction_is_caught_by_the_ext_data_hash(headers: pa.Table) -> None:
    """The atomic transactions are in no transactions root: the header's extDataHash is keccak of their RLP."""
    forged = _changed(headers, {"block_number": 70000000}, block_extra_data=b"\x00")
    report = verify_tables(blocks=forged, chain_id=AVALANCHE_MAINNET)
    assert [(f.block_number, f.check) for f in report.failures] == [(70000000, "block_extra_data")]


def test_the_avalanche_family_says_it_proves_the_atomic_transactions_and_no_withdrawals_root() -> None:
    proven, skipped = AVALANCHE.proofs(AVALANCHE_MAINNET, int(HEADERS[-1]["timestamp"], 16))
    assert "withdrawals root" not in proven
    assert any("extDataHash" in p for p in proven)
    assert set(skipped) == {"transactions of any other type"}
