"""Every recorded real response decodes into the typed objects and encodes back to the same JSON.

"The same" means equal JSON text, key order included, once hex strings are lowercased (checksummed addresses are the
only upper case seen): see :func:`tests.fixtures.assert_lossless`. Spot checks then pin that the typing is right, not
just reversible.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from chainframe.rpc._hex import data, quantity, to_bytes, to_int
from chainframe.rpc._types import (
    AccountProof,
    Authorization,
    Block,
    CallFrame,
    CallLog,
    Log,
    Prestate,
    PrestateAccount,
    PrestateDiff,
    Receipt,
    Transaction,
    decode_result,
)
from tests.fixtures import Recorded, assert_lossless, recorded_responses, unaccounted_files

RECORDED = recorded_responses()
RESULTS = [r for r in RECORDED if r.error is None]
BY_ID = {r.id: r for r in RECORDED}

#: Recorded files that are not node output and must be refused, with why.
NOT_NODE_OUTPUT = {
    # ethereumjs edited this copy of testdata-from-rpc.json by hand to test tolerance of a decimal difficulty.
    # "82459156443011" has no 0x: a decoder cannot tell decimal from hex, so it refuses rather than guess.
    "other/ethereumjs/packages/block/test/testdata/testdata-from-rpc-difficulty-as-integer.json": "Block.difficulty",
}


def expected_type(record: Recorded) -> type | tuple[type, ...]:
    method = record.method
    if method.startswith(("eth_getBlockBy", "eth_getUncleBy")):
        return Block
    if method.startswith("eth_getTransactionBy"):
        return Transaction
    if method == "eth_getTransactionReceipt":
        return Receipt
    if method == "eth_getProof":
        return AccountProof
    if method == "debug_traceCall":
        options = record.params[2]
        if options["tracer"] == "callTracer":
            return CallFrame
        return PrestateDiff if options.get("tracerConfig", {}).get("diffMode") else Prestate
    return tuple  # eth_getBlockReceipts, eth_getLogs


def decoded(record_id: str) -> Any:
    record = BY_ID[record_id]
    return decode_result(record.method, record.params, record.result)


# --- the whole collection --------------------------------------------------------------------------------------------


def test_every_fixture_file_is_read_or_deliberately_skipped() -> None:
    assert unaccounted_files() == []


def test_coverage_per_method() -> None:
    """Guards the loaders: a source that silently stops yielding shows up here."""
    assert Counter(r.method for r in RESULTS) == {
        "debug_traceCall": 60,
        "eth_getBlockByNumber": 42,
        "eth_getTransactionReceipt": 23,
        "eth_getBlockReceipts": 21,
        "eth_getProof": 14,
        "eth_getBlockByHash": 11,
        "eth_getTransactionByHash": 11,
        "eth_getLogs": 8,
        "eth_getTransactionByBlockHashAndIndex": 1,
        "eth_getTransactionByBlockNumberAndIndex": 1,
        "eth_getUncleByBlockHashAndIndex": 1,
    }
    assert [(r.method, r.error and r.error["code"]) for r in RECORDED if r.error] == [("eth_getLogs", -32602)] * 3


@pytest.mark.parametrize("record", RESULTS, ids=[r.id for r in RESULTS])
def test_decodes_losslessly(record: Recorded) -> None:
    if record.path in NOT_NODE_OUTPUT:
        with pytest.raises(ValueError, match=NOT_NODE_OUTPUT[record.path]):
            decode_result(record.method, record.params, record.result)
        return
    result = decode_result(record.method, record.params, record.result)
    if record.result is None:
        assert result is None
        return
    assert isinstance(result, expected_type(record))
    if isinstance(result, tuple):
        assert all(isinstance(item, Receipt if record.method == "eth_getBlockReceipts" else Log) for item in result)
    assert_lossless(record.result, result)


# --- spot checks: the types are right, not only reversible ------------------------------------------------------


def test_block_fields_are_typed() -> None:
    block = decoded("execution-apis/tests/eth_getBlockByHash/get-block-by-hash.io")
    assert block.number == 1
    assert len(block.hash) == 32
    assert len(block.miner) == 20
    assert len(block.logs_bloom) == 256
    assert len(block.nonce) == 8
    assert len(block.transactions) == 4
    assert all(isinstance(tx, Transaction) and tx.block_number == 1 for tx in block.transactions)
    assert block.transactions[0].to is None  # a contract creation
    assert repr(block) == "Block(number=1, hash=0x80e911b6.., transactions=4)"


def test_block_with_hashes_withdrawals_and_blob_fields() -> None:
    block = decoded("other/ethereumjs/packages/block/test/testdata/infura-goerli-block-10536893.json")
    assert block.number == 10536893
    assert len(block.withdrawals) == 16
    assert block.withdrawals[0].validator_index == 406815
    assert len(block.withdrawals[0].address) == 20
    assert isinstance(block.blob_gas_used, int)
    assert isinstance(block.excess_blob_gas, int)
    assert len(block.parent_beacon_block_root) == 32
    hashes_only = decoded("execution-apis/tests/eth_getBlockByNumber/get-block-prague-fork.io")
    assert hashes_only.number == 45
    assert len(hashes_only.transactions) == 6
    assert all(isinstance(tx, bytes) and len(tx) == 32 for tx in hashes_only.transactions)
    assert len(hashes_only.requests_hash) == 32


def test_pending_block_keeps_its_nulls() -> None:
    block = decoded("other/go-ethereum/internal/ethapi/testdata/eth_getBlockByNumber-tag-pending.json")
    assert (block.hash, block.miner, block.nonce) == (None, None, None)
    assert block.number == 11
    assert {"hash": None, "miner": None, "nonce": None}.items() <= block.to_json().items()


def test_uncle_has_no_transactions_key() -> None:
    uncle = decoded("other/ethereumjs/packages/block/test/testdata/testdata-from-rpc-with-uncles_uncle-block-data.json")
    assert uncle.number == 9515348
    assert uncle.transactions == ()
    assert "transactions" not in uncle.to_json()
    assert isinstance(uncle.total_difficulty, int)


def test_parity_extras_are_kept() -> None:
    block = decoded(
        "ethereum-etl/tests/resources/test_export_blocks_job/block_with_logs/web3_response.eth_getBlockByNumber_0x76250_true.json"
    )
    assert set(block.extra) == {"author", "sealFields"}
    assert {"creates", "publicKey", "raw", "standardV", "condition"} <= set(block.transactions[0].extra)
    assert block.transactions[0].chain_id is None


def test_blob_transaction() -> None:
    tx = decoded("execution-apis/tests/eth_getTransactionByHash/get-blob-tx.io")
    assert tx.type == 3
    assert tx.blob_versioned_hashes
    assert all(len(h) == 32 for h in tx.blob_versioned_hashes)
    assert isinstance(tx.max_fee_per_blob_gas, int)


def test_setcode_transaction() -> None:
    tx = decoded("execution-apis/tests/eth_getTransactionByHash/get-setcode-tx.io")
    assert tx.type == 4
    (auth,) = tx.authorization_list
    assert isinstance(auth, Authorization)
    assert auth.chain_id == 0xC72DD9D5E883E == tx.chain_id
    assert auth.address == bytes.fromhex("8c2319620d7c348bb4e2b2a0b230c81f310e9561")
    assert (auth.nonce, auth.y_parity) == (0, 0)
    assert auth.r == 0xF17D59102E9EBED035D1BD77BC668B170EB1D38EDEF6E7D971857D85781D68FE


def test_access_list_transaction() -> None:
    tx = decoded("execution-apis/tests/eth_getTransactionByHash/get-access-list.io")
    assert tx.type == 1
    assert tx.access_list
    assert all(len(entry.address) == 20 for entry in tx.access_list)
    assert all(len(key) == 32 for entry in tx.access_list for key in entry.storage_keys)


def test_signature_values_are_quantities() -> None:
    """r and s come with leading zeros dropped (an odd digit count here), so they are ints, not 32-byte strings."""
    block = decoded("other/ethereumjs/packages/block/test/testdata/testdata-from-rpc.json")
    original = BY_ID["other/ethereumjs/packages/block/test/testdata/testdata-from-rpc.json"].result
    assert len(original["transactions"][3]["r"]) == 65
    assert block.transactions[3].r == int(original["transactions"][3]["r"], 16)


def test_failed_receipt() -> None:
    receipt = decoded("other/go-ethereum/internal/ethapi/testdata/eth_getTransactionReceipt-dynamic-tx-with-logs.json")
    assert receipt.status == 0
    assert receipt.type == 2
    assert receipt.root is None
    assert "root" not in receipt.to_json()


def test_pre_byzantium_receipt_has_root_not_status() -> None:
    receipt = decoded("execution-apis/tests/eth_getTransactionReceipt/get-legacy-receipt.io")
    assert len(receipt.root) == 32
    assert receipt.status is None
    assert "status" not in receipt.to_json()


def test_parity_receipt_has_root_and_null_status() -> None:
    record_id = (
        "ethereum-etl/tests/resources/test_export_receipts_job/receipts_with_logs/"
        "web3_response.eth_getTransactionReceipt_0x04cbcb236043d8fb7839e07bbc7f5eed692fb2ca55d897f1101eac3e3ad4fab8.json"
    )
    receipt = decoded(record_id)
    assert len(receipt.root) == 32
    assert receipt.status is None
    assert receipt.to_json()["status"] is None  # present, as null
    assert receipt.from_ is None
    assert "from" not in receipt.to_json()
    (log,) = receipt.logs
    assert log.extra == {"transactionLogIndex": "0x0", "type": "mined"}


def test_block_receipts_and_logs_become_tuples() -> None:
    receipts = decoded("execution-apis/tests/eth_getBlockReceipts/get-block-receipts-latest.io")
    assert isinstance(receipts, tuple)
    assert len(receipts) == 4
    assert sum(len(r.logs) for r in receipts) == 11
    blob = decoded("other/go-ethereum/internal/ethapi/testdata/eth_getBlockReceipts-block-with-blob-tx.json")
    assert (blob[0].type, blob[0].blob_gas_used, blob[0].blob_gas_price) == (3, 0x20000, 1)
    assert decoded("execution-apis/tests/eth_getBlockReceipts/get-block-receipts-0.io") == ()
    assert decoded("execution-apis/tests/eth_getBlockReceipts/get-block-receipts-future.io") is None
    logs = decoded("execution-apis/tests/eth_getLogs/contract-addr.io")
    assert [log.block_number for log in logs] == [2, 4]
    assert all(isinstance(log.block_timestamp, int) and log.removed is False for log in logs)


def test_storage_proof_key_is_padded_and_its_short_text_kept() -> None:
    proof = decoded("execution-apis/tests/eth_getProof/get-account-proof-with-storage.io")
    (slot,) = proof.storage_proof
    assert slot.key == bytes(32)
    assert slot.value == 0x38
    assert proof.to_json()["storageProof"][0]["key"] == "0x0"  # geth's text, though the canonical one is 64 digits
    assert proof.balance == 0x76
    assert len(proof.address) == 20
    assert len(proof.account_proof) == 3


def test_mainnet_proof_with_two_storage_slots() -> None:
    proof = decoded(
        "other/ethereumjs/packages/statemanager/test/testdata/providerData/accounts/"
        "0x1f9840a85d5af5bf1d1762f925bdaddc4201f984.json#0x1"
    )
    assert [slot.key[-1] for slot in proof.storage_proof] == [1, 2]
    assert proof.storage_proof[1].value == 0x65920080


def test_call_frames_nest() -> None:
    deep = decoded("geth-tracers/testdata/call_tracer/deep_calls.json")
    assert deep.depth() == 5
    assert deep.type == "CALL"
    assert isinstance(deep.gas_used, int)
    with_logs = decoded("geth-tracers/testdata/call_tracer_withLog/calldata.json")
    (inner,) = with_logs.calls
    assert inner.type == "CALLCODE"
    assert [type(log) for log in inner.logs] == [CallLog, CallLog]
    assert [(log.position, log.index) for log in inner.logs] == [(0, 0), (0, 1)]
    assert len(inner.logs[0].topics[0]) == 32
    reverted = decoded("geth-tracers/testdata/call_tracer/revert_reason.json")
    assert (reverted.error, reverted.revert_reason) == ("execution reverted", "Self-delegation is disallowed.")


def test_old_geth_frames_keep_their_shape() -> None:
    record_id = (
        "ethereum-etl/tests/resources/test_extract_geth_traces_job/block_with_suicide/"
        "web3_response.debug_traceBlockByNumber_0xf7105_tracer_calltracer.json#tx0"
    )
    frame = decoded(record_id)
    assert frame.extra.keys() == {"time"}
    selfdestruct = frame.calls[-1]
    assert selfdestruct.to_json() == {"type": "SELFDESTRUCT"}


def test_prestate() -> None:
    prestate = decoded("geth-tracers/testdata/prestate_tracer/simple.json")
    assert len(prestate.accounts) == 3
    account = next(a for a in prestate.accounts.values() if a.storage)
    assert isinstance(account, PrestateAccount)
    assert isinstance(account.nonce, int)
    assert all(len(k) == 32 and len(v) == 32 for k, v in account.storage.items())
    legacy = decoded("other/alloy/crates/rpc-types-trace/test_data/pre_state_tracer/legacy.json")
    eoa = legacy[bytes.fromhex("0024f658a46fbb89d8ac105e98d7ac7cbbaf27c5")]  # a Prestate is a mapping
    assert (eoa.code, eoa.storage, eoa.nonce) == (b"", {}, 22)
    assert eoa.to_json()["storage"] == {}  # present though empty, as received


def test_prestate_diff_has_pre_and_post() -> None:
    diff = decoded("geth-tracers/testdata/prestate_tracer_with_diff_mode/create.json")
    assert isinstance(diff, PrestateDiff)
    assert (len(diff.pre), len(diff.post)) == (2, 3)
    created = diff.post[bytes.fromhex("40f2f445da6c9047554683fb382fba6769717116")]
    assert created.balance is None
    assert created.code
    assert len(created.code_hash or b"") == 32
    assert "balance" not in created.to_json()


# --- decode_result and the objects' own rules ------------------------------------------------------------------


def test_decode_result_picks_by_method_and_tracer() -> None:
    assert decode_result("eth_blockNumber", [], "0x2a") == 42
    assert decode_result("eth_chainId", [], "0x7a69") == 31337
    assert decode_result("eth_getLogs", [{}], []) == ()
    assert decode_result("eth_getUncleByBlockNumberAndIndex", ["0x1", "0x0"], None) is None
    frame = {"type": "CALL", "from": "0x" + "11" * 20}
    assert isinstance(decode_result("debug_traceCall", [{}, "latest", {"tracer": "callTracer"}], frame), CallFrame)
    with pytest.raises(ValueError, match="tracer None"):
        decode_result("debug_traceCall", [{}, "latest"], frame)
    with pytest.raises(ValueError, match="eth_sendRawTransaction"):
        decode_result("eth_sendRawTransaction", [], "0x")
    with pytest.raises(ValueError, match="eth_getProof: null"):
        decode_result("eth_getProof", [], None)


def test_malformed_values_name_class_and_key() -> None:
    log = BY_ID["execution-apis/tests/eth_getLogs/contract-addr.io"].result[0]
    with pytest.raises(ValueError, match=r"Log\.address: an address must be 20 bytes"):
        Log.from_json({**log, "address": "0x1234"})
    with pytest.raises(ValueError, match=r"Log: missing 'topics'"):
        Log.from_json({k: v for k, v in log.items() if k != "topics"})
    with pytest.raises(ValueError, match=r"Log\.data: null"):
        Log.from_json({**log, "data": None})
    with pytest.raises(ValueError, match=r"Log\.removed: expected a JSON boolean"):
        Log.from_json({**log, "removed": 0})


def test_non_canonical_quantities_are_written_back_as_received() -> None:
    receipt = BY_ID["execution-apis/tests/eth_getTransactionReceipt/get-dynamic-fee.io"].result
    odd = {**receipt, "blockTimestamp": 1700000012, "gasUsed": "0x0" + receipt["gasUsed"][2:]}  # anvil; padded
    decoded_receipt = Receipt.from_json(odd)
    assert decoded_receipt.block_timestamp == 1700000012
    assert decoded_receipt.gas_used == int(receipt["gasUsed"], 16)
    assert decoded_receipt.to_json() == odd


def test_objects_built_in_python_encode_canonically() -> None:
    log = Log(
        address=bytes(20),
        topics=(bytes(32),),
        data=b"\x01",
        block_number=7,
        transaction_hash=None,
        transaction_index=None,
        block_hash=None,
        log_index=None,
    )
    assert log.to_json() == {
        "address": "0x" + "00" * 20,
        "topics": ["0x" + "00" * 32],
        "data": "0x01",
        "blockNumber": "0x7",
        "transactionHash": None,
        "transactionIndex": None,
        "blockHash": None,
        "logIndex": None,
    }
    assert Log.from_json(log.to_json()) == log


# --- scalar codecs ---------------------------------------------------------------------------------------------------


def test_hex_scalars() -> None:
    assert [to_int("0x0"), to_int("0x01"), to_int("0xFF"), to_int(12)] == [0, 1, 255, 12]
    assert [to_bytes("0x"), to_bytes("0x0"), to_bytes("0xABc")] == [b"", b"\x00", b"\x0a\xbc"]
    assert [quantity(0), quantity(255)] == ["0x0", "0xff"]
    assert [data(b""), data(b"\x00\xab")] == ["0x", "0x00ab"]


@pytest.mark.parametrize("text", ["0x", "12", "0x1_0", " 0x1", "-0x1", "0xg"])
def test_hex_quantity_refuses(text: str) -> None:
    with pytest.raises(ValueError, match="not a hex quantity"):
        to_int(text)


def test_hex_refuses_wrong_kinds() -> None:
    with pytest.raises(TypeError, match="expected a hex quantity"):
        to_int(True)
    with pytest.raises(ValueError, match="not hex data"):
        to_bytes("00ff")
