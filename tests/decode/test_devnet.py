"""Decoding the devnet's real logs (extracted through the gateway) against the workload plan's ground truth."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from pathlib import Path

import polars as pl
from eth_abi import decode as abi_decode

import chainframe
from chainframe.devnet import DEV_ACCOUNTS, Devnet
from chainframe.devnet._workload import plan_workload


def planned_transfers(devnet: Devnet) -> Counter[tuple[str, bytes, bytes, Decimal]]:
    """(transaction hash, from, to, value) of every Transfer the plan makes, from its calldata (eth-abi decodes it)."""
    truth = devnet.truth
    intents = [i for block in plan_workload(chainframe.devnet.WorkloadSpec(**truth.spec)) for i in block]
    assert [i.kind for i in intents] == [t.kind for t in truth.txs]
    expected: Counter[tuple[str, bytes, bytes, Decimal]] = Counter()
    for intent, tx in zip(intents, truth.txs, strict=True):
        sender = bytes.fromhex(DEV_ACCOUNTS[intent.sender][2:])
        if tx.status == 0:
            continue
        if intent.kind == "erc20_transfer":
            to, value = abi_decode(["address", "uint256"], bytes.fromhex(intent.data[10:]))
            expected[(tx.hash, sender, bytes.fromhex(to[2:]), Decimal(value))] += 1
        elif intent.kind == "create_token" or (intent.kind == "deploy" and tx.logs == 1):
            (supply,) = abi_decode(["uint256"], bytes.fromhex(intent.data[-64:]))
            expected[(tx.hash, bytes(20), sender, Decimal(supply))] += 1
    return expected


def test_erc20_transfers_equal_the_plan(devnet: Devnet, tmp_path: Path) -> None:
    logs = chainframe.collect("logs", blocks="0:latest", rpc=devnet.http_url, output="polars")
    transfers = chainframe.erc20_transfers(logs)
    got = Counter(
        ("0x" + h.hex(), f, t, v)
        for h, f, t, v in transfers.select("transaction_hash", "from_address", "to_address", "value").rows()
    )
    expected = planned_transfers(devnet)
    assert sum(expected.values()) > 100
    assert got == expected
    token = bytes.fromhex(devnet.truth.contracts["Token"][2:])
    minted_elsewhere = transfers.filter(pl.col("address") != token)
    assert minted_elsewhere["from_address"].to_list() == [bytes(20)] * minted_elsewhere.height

    # Sums per account (what a researcher asks first) agree with the plan's, as exact decimals.
    received = transfers.group_by("to_address").agg(pl.col("value").sum())
    plan_sums: Counter[bytes] = Counter()
    for (_, _, to, value), n in expected.items():
        plan_sums[to] += int(value) * n
    assert {a: int(v) for a, v in received.rows()} == dict(plan_sums)

    # The same from a dataset folder, read through chainframe.scan.
    chainframe.extract(["logs"], blocks="0:latest", rpc=devnet.http_url, out=tmp_path, progress=False)
    assert (
        chainframe.erc20_transfers(tmp_path)
        .sort("block_number", "log_index")
        .equals(transfers.sort("block_number", "log_index"))
    )
    # No ERC-721 on this chain: the 3-topic Transfers are never read as NFTs.
    assert chainframe.erc721_transfers(logs).height == 0


def test_ping_with_dynamic_bytes_equals_the_plan(devnet: Devnet) -> None:
    logs = chainframe.collect("logs", blocks="0:latest", rpc=devnet.http_url, output="polars")
    pings = chainframe.decode_event(logs, "Ping(address indexed sender, uint256 indexed seq, bytes payload)")
    intents = [i for block in plan_workload(chainframe.devnet.WorkloadSpec(**devnet.truth.spec)) for i in block]
    by_hash = {t.hash: i for i, t in zip(intents, devnet.truth.txs, strict=True)}
    expected = Counter()
    for tx in devnet.truth.txs:
        if tx.kind == "ping" and tx.status == 1:
            seq, payload = abi_decode(["uint256", "bytes"], bytes.fromhex(by_hash[tx.hash].data[10:]))
            expected[(tx.hash, bytes.fromhex(tx.sender[2:].lower()), Decimal(seq), payload)] += 1
    got = Counter(
        ("0x" + h.hex(), s, q, p) for h, s, q, p in pings.select("transaction_hash", "sender", "seq", "payload").rows()
    )
    assert sum(expected.values()) > 10
    assert got == expected
