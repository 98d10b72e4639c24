"""The typed objects against a real node: what anvil (through the gateway) answers decodes losslessly, too.

Requests go through plain httpx (:mod:`tests.devnet.rpc`), below any chainframe client, so these tests pin the
decoders alone.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from chainframe.devnet import DEV_ACCOUNTS, Devnet
from chainframe.rpc._types import AccountProof, Block, CallFrame, Log, Prestate, PrestateDiff, Receipt, Transaction
from tests.devnet.rpc import result
from tests.fixtures import assert_lossless

DIVE = "0xa8d85c2e"  # Nest.dive(uint256)
DEPTH = 3


def fetch(devnet: Devnet, method: str, *params: Any) -> Any:
    return result(devnet.http_url, method, *params)


def busiest_mixed_block(devnet: Devnet) -> int:
    """The block with the most logs among those holding transactions of types 0, 1 and 2."""
    types: dict[int, set[int]] = {}
    logs: Counter[int] = Counter()
    for tx in devnet.truth.txs:
        types.setdefault(tx.block, set()).add(tx.tx_type)
        logs[tx.block] += tx.logs
    mixed = [block for block, seen in types.items() if {0, 1, 2} <= seen]
    assert mixed, "the workload has no block with transaction types 0, 1 and 2"
    return max(mixed, key=lambda block: (logs[block], -block))


def dive_call(devnet: Devnet) -> dict[str, str]:
    return {
        "from": DEV_ACCOUNTS[0],
        "to": devnet.truth.contracts["Nest"],
        "data": DIVE + DEPTH.to_bytes(32, "big").hex(),
    }


def test_block_receipts_and_logs(devnet: Devnet) -> None:
    number = busiest_mixed_block(devnet)
    raw_block = fetch(devnet, "eth_getBlockByNumber", hex(number), True)
    block = Block.from_json(raw_block)
    assert_lossless(raw_block, block)
    assert block.number == number
    assert all(isinstance(tx, Transaction) for tx in block.transactions)
    assert {tx.type for tx in block.transactions if isinstance(tx, Transaction)} >= {0, 1, 2}
    expected = [tx.hash for tx in devnet.truth.txs if tx.block == number]
    assert ["0x" + tx.hash.hex() for tx in block.transactions if isinstance(tx, Transaction)] == expected

    raw_receipts = fetch(devnet, "eth_getBlockReceipts", hex(number))
    receipts = tuple(Receipt.from_json(item) for item in raw_receipts)
    assert_lossless(raw_receipts, receipts)
    assert [r.status for r in receipts] == [tx.status for tx in devnet.truth.txs if tx.block == number]
    # anvil writes a receipt's blockTimestamp as a JSON integer (its logs' as hex); either way it is the block's
    assert {r.block_timestamp for r in receipts} == {block.timestamp}

    raw_logs = fetch(devnet, "eth_getLogs", {"fromBlock": hex(number), "toBlock": hex(number)})
    logs = tuple(Log.from_json(item) for item in raw_logs)
    assert_lossless(raw_logs, logs)
    assert logs == tuple(log for receipt in receipts for log in receipt.logs)
    assert len(logs) == sum(tx.logs for tx in devnet.truth.txs if tx.block == number) > 0


def test_proof_of_store_counter(devnet: Devnet) -> None:
    store = devnet.truth.contracts["Store"]
    key = "0x" + "00" * 31 + "01"  # Store.counter
    raw = fetch(devnet, "eth_getProof", store, [key], "latest")
    proof = AccountProof.from_json(raw)
    assert_lossless(raw, proof)
    assert proof.address == bytes.fromhex(store[2:])
    (slot,) = proof.storage_proof
    assert slot.key == bytes.fromhex(key[2:])
    assert isinstance(slot.value, int)
    assert proof.account_proof


def test_call_trace_of_a_dive(devnet: Devnet) -> None:
    options = {"tracer": "callTracer", "tracerConfig": {"withLog": True}}
    raw = fetch(devnet, "debug_traceCall", dive_call(devnet), "latest", options)
    frame = CallFrame.from_json(raw)
    assert_lossless(raw, frame)
    assert frame.depth() == DEPTH + 1  # dive(3) calls dive(2) ... dive(0), each through an external call
    level = frame
    for depth in range(DEPTH, -1, -1):
        (log,) = level.logs  # Dived(depth)
        assert int.from_bytes(log.topics[1], "big") == depth
        level = level.calls[0] if level.calls else level


@pytest.mark.parametrize("diff_mode", [False, True], ids=["prestate", "diff"])
def test_prestate_of_a_dive(devnet: Devnet, diff_mode: bool) -> None:
    options = {"tracer": "prestateTracer", "tracerConfig": {"diffMode": diff_mode}}
    raw = fetch(devnet, "debug_traceCall", dive_call(devnet), "latest", options)
    decoded = PrestateDiff.from_json(raw) if diff_mode else Prestate.from_json(raw)
    assert_lossless(raw, decoded)
    sender = bytes.fromhex(DEV_ACCOUNTS[0][2:])
    before = decoded.pre if isinstance(decoded, PrestateDiff) else decoded.accounts
    nonce = before[sender].nonce
    assert isinstance(nonce, int)
    if isinstance(decoded, PrestateDiff):
        assert decoded.post[sender].nonce == nonce + 1  # the call's own nonce bump
    else:
        assert bytes.fromhex(devnet.truth.contracts["Nest"][2:]) in decoded.accounts
