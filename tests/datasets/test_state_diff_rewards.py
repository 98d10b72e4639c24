"""Issue 40: before the merge a block credits its miner (and its uncles' miners) a reward after the last transaction,
which no diff route reports, so the balance diffs' ``last_after`` would fail on a genuine block. The verifier skips
those accounts' ``last_after`` and ``unexplained`` on a block whose header has a difficulty, with the reason the
balance_diffs dataset declares, and proves the rest. The headers here are real (recorded mainnet and test chains),
and each hashes to its block hash first."""

from __future__ import annotations

import json
from typing import Any

from chainframe.datasets import BLOCKS
from chainframe.datasets._state_diffs import BALANCE_DIFFS, CODE_DIFFS, NONCE_DIFFS, STORAGE_DIFFS
from chainframe.verify import Report
from chainframe.verify._headers import check_block_hashes
from chainframe.verify._state_diffs import _rewarded
from tests.fixtures import recorded_responses

_BLOCKS = {
    r.id: r.result
    for r in recorded_responses()
    if r.method in {"eth_getBlockByNumber", "eth_getBlockByHash"} and isinstance(r.result, dict)
}
NO_UNCLES = "ethereum-etl/tests/resources/test_export_blocks_job/block_with_logs/web3_response.eth_getBlockByNumber_0x76250_true.json"  # noqa: E501
WITH_UNCLES = "other/ethereumjs/packages/block/test/testdata/testdata-from-rpc-with-uncles.json"
MERGED = "execution-apis/tests/eth_getBlockByNumber/get-block-merge-fork.io"


def _headers(record: str) -> Any:
    block = dict(_BLOCKS[record])
    block["transactions"] = [t["hash"] if isinstance(t, dict) else t for t in block.get("transactions", [])]
    headers = BLOCKS.from_objects(json.dumps([block]).encode(), chain_id=1, u256="binary")
    report = Report()
    check_block_hashes(headers, report)
    assert report.failures == [], "the recorded header is genuine"
    return headers, block


def test_a_pre_merge_blocks_miner_is_skipped_with_the_declared_reason() -> None:
    headers, block = _headers(NO_UNCLES)
    assert int(block["difficulty"], 16) > 0
    assert block["uncles"] == []
    found = _rewarded(headers, BALANCE_DIFFS.unreported_rewards)
    assert found == {int(block["number"], 16): frozenset({bytes.fromhex(block["miner"][2:])})}


def test_a_pre_merge_block_with_uncles_skips_every_account() -> None:
    headers, block = _headers(WITH_UNCLES)
    assert int(block["difficulty"], 16) > 0
    assert len(block["uncles"]) == 1
    # the uncle's miner is in the uncle's header, which the proof does not read: no account of the block is proven
    assert _rewarded(headers, BALANCE_DIFFS.unreported_rewards) == {int(block["number"], 16): frozenset()}


def test_a_merged_block_and_the_other_diffs_skip_nothing() -> None:
    headers, block = _headers(MERGED)
    assert int(block["difficulty"], 16) == 0
    assert _rewarded(headers, BALANCE_DIFFS.unreported_rewards) == {}
    pre_merge, _ = _headers(NO_UNCLES)
    for dataset in (NONCE_DIFFS, CODE_DIFFS, STORAGE_DIFFS):  # a reward changes balances only
        assert _rewarded(pre_merge, getattr(dataset, "unreported_rewards", "")) == {}


def test_the_reason_names_the_routes() -> None:
    assert "merge" in BALANCE_DIFFS.unreported_rewards
    assert "stateDiff" in BALANCE_DIFFS.unreported_rewards
