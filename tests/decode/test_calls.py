"""Decoding the devnet's real transactions into function calls, checked against the workload's planned calldata
decoded independently (eth-abi), and malformed calls sent to a devnet of its own kept with their decode_error."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from eth_abi import decode as abi_decode  # type: ignore[attr-defined]
from eth_abi import encode as abi_encode  # type: ignore[attr-defined]

import chainframe
from chainframe.decode import decode_calls, parse_function
from chainframe.devnet import DEV_ACCOUNTS, Devnet
from chainframe.devnet._node_rpc import NodeRPC
from chainframe.devnet._workload import plan_workload

# The workload's calls: (signature with names, eth-abi types) - static, dynamic (bytes) and u256 arguments.
FUNCTIONS = {
    "transfer(address to, uint256 amount)": ["address", "uint256"],
    "ping(uint256 nonce, bytes payload)": ["uint256", "bytes"],
    "set(uint256 slot, uint256 value)": ["uint256", "uint256"],
    "dive(uint256 depth)": ["uint256"],
}


def as_stored(value: Any) -> Any:
    """eth-abi's value as the decoded column holds it: addresses as 20 bytes, wide integers as Decimal."""
    if isinstance(value, str) and value.startswith("0x"):
        return bytes.fromhex(value[2:])
    if isinstance(value, int) and not isinstance(value, bool):
        return Decimal(value)
    return value


def planned_calls(devnet: Devnet) -> Counter[tuple[str, str, tuple[Any, ...]]]:
    """(transaction hash, signature, arguments) of every planned call of FUNCTIONS, eth-abi decoding its calldata."""
    truth = devnet.truth
    intents = [i for block in plan_workload(chainframe.devnet.WorkloadSpec(**truth.spec)) for i in block]
    assert [i.kind for i in intents] == [t.kind for t in truth.txs]
    by_selector = {parse_function(s).selector: (parse_function(s).signature, t) for s, t in FUNCTIONS.items()}
    expected: Counter[tuple[str, str, tuple[Any, ...]]] = Counter()
    for intent, tx in zip(intents, truth.txs, strict=True):
        data = bytes.fromhex(intent.data.removeprefix("0x"))
        if intent.to is None or data[:4] not in by_selector:
            continue
        signature, types = by_selector[data[:4]]
        args = tuple(as_stored(v) for v in abi_decode(types, data[4:]))
        expected[(tx.hash, signature, args)] += 1
    return expected


def test_calls_equal_the_planned_calldata(devnet: Devnet) -> None:
    transactions = chainframe.collect("transactions", blocks="0:latest", rpc=devnet.http_url)
    calls = decode_calls(transactions, list(FUNCTIONS))
    names = {s: [p.name for p in parse_function(s).params] for s in FUNCTIONS}
    got: Counter[tuple[str, str, tuple[Any, ...]]] = Counter()
    for row in calls.to_pylist():
        assert row["decode_error"] is None
        params = names[next(s for s in FUNCTIONS if parse_function(s).signature == row["function"])]
        got[("0x" + row["transaction_hash"].hex(), row["function"], tuple(row[p] for p in params))] += 1
    expected = planned_calls(devnet)
    assert {s for _, s, _ in expected} == {parse_function(s).signature for s in FUNCTIONS}  # every kind is there
    assert sum(expected.values()) > 100
    assert got == expected
    # A decoded call joins its raw row on the transaction's keys, and carries its input and selector unchanged.
    raw = {(r["block_number"], r["transaction_index"]): r for r in transactions.to_pylist()}
    for row in calls.to_pylist()[:50]:
        tx = raw[(row["block_number"], row["transaction_index"])]
        assert (tx["transaction_hash"], tx["input"]) == (row["transaction_hash"], row["input"])
        assert row["selector"] == tx["input"][:4]


def test_binary_u256_is_lossless(devnet: Devnet) -> None:
    transactions = chainframe.collect("transactions", blocks="0:latest", rpc=devnet.http_url)
    calls = decode_calls(transactions, "set(uint256 slot, uint256 value)", u256="binary")
    assert calls.schema.field("value").type == pa.binary(32)
    for row in calls.to_pylist():
        slot, value = abi_decode(["uint256", "uint256"], row["input"][4:])
        assert (row["slot"], row["value"]) == (slot.to_bytes(32, "big"), value.to_bytes(32, "big"))


@pytest.fixture(scope="module")
def chain() -> Iterator[Devnet]:
    """A devnet of its own: these tests send transactions to it."""
    with Devnet() as devnet:
        yield devnet


def test_malformed_calls_are_kept_with_their_error(chain: Devnet) -> None:
    token = chain.truth.contracts["Token"]
    emitter = chain.truth.contracts["Emitter"]
    transfer = parse_function("transfer(address to, uint256 amount)")
    ping = parse_function("ping(uint256 nonce, bytes payload)")
    sent = {
        "short": (token, transfer.selector + bytes(10)),
        "bad offset": (emitter, ping.selector + abi_encode(["uint256", "uint256"], [7, 10**6])),
        "bad padding": (token, transfer.selector + b"\xff" * 12 + bytes(20) + abi_encode(["uint256"], [5])),
        "good": (token, transfer.selector + abi_encode(["address", "uint256"], [DEV_ACCOUNTS[1], 3])),
    }
    hashes, first, last = send_calls(chain.node.url, sent)
    transactions = chainframe.collect("transactions", blocks=f"{first}:{last}", rpc=chain.node.url)
    calls = decode_calls(transactions, [transfer.text, ping.text])
    rows = {r["transaction_hash"]: r for r in calls.to_pylist()}
    assert set(rows) == set(hashes.values())  # no call dropped
    for name, (_, data) in sent.items():
        row = rows[hashes[name]]
        assert row["input"] == data
        if name == "good":
            assert row["decode_error"] is None
            assert (row["to"], row["amount"]) == (bytes.fromhex(DEV_ACCOUNTS[1][2:]), Decimal(3))
            continue
        assert row["decode_error"], name
        assert all(row[c] is None for c in ("to", "amount", "nonce", "payload")), name
    assert "too short" in rows[hashes["short"]]["decode_error"]
    assert "offset" in rows[hashes["bad offset"]]["decode_error"]
    assert "padding" in rows[hashes["bad padding"]]["decode_error"]


def test_guide_example_runs(tmp_path: Path) -> None:
    """The guide's "Decoding function calls" example (docs/datasets-and-decoding.md) runs as written."""
    guide = (Path(__file__).resolve().parents[2] / "docs" / "datasets-and-decoding.md").read_text()
    section = guide.split("## Decoding function calls", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "transfer(address,uint256)" in done.stdout
    assert "ping(uint256,bytes)" in done.stdout
    assert "undecoded" in done.stdout


def test_internal_calls_from_traces_equal_the_frames(devnet: Devnet) -> None:
    """Nest's dive(depth) calls itself: its internal calls are trace frames, decoded as the frames' input says."""
    traces = chainframe.collect("traces", blocks="0:latest", rpc=devnet.http_url)
    calls = decode_calls(traces, "dive(uint256 depth)")
    frames = [
        r
        for r in traces.to_pylist()
        if r["input"][:4] == parse_function("dive(uint256)").selector
        and not r["call_type"].lower().startswith("create")
    ]
    assert sum(1 for r in frames if r["trace_address"]) > 10  # internal calls are there, not only top-level ones
    expected = Counter(
        (r["transaction_hash"], tuple(r["trace_address"]), Decimal(abi_decode(["uint256"], r["input"][4:])[0]))
        for r in frames
    )
    # The frame's own depth column keeps its name: the argument of the same name is arg_depth.
    got = Counter((r["transaction_hash"], tuple(r["trace_address"]), r["arg_depth"]) for r in calls.to_pylist())
    assert calls["decode_error"].null_count == calls.num_rows
    assert got == expected


def test_tuples_arrays_and_an_abi_against_eth_abi() -> None:
    """Nested tuples, arrays of them and fixed arrays, from an ABI's JSON, against eth-abi's encoding of the same."""
    abi: list[dict[str, Any]] = [
        {
            "type": "function",
            "name": "swap",
            "inputs": [
                {
                    "name": "route",
                    "type": "tuple[]",
                    "components": [
                        {"name": "pool", "type": "address"},
                        {"name": "fees", "type": "uint24[2]"},
                        {"name": "data", "type": "bytes"},
                    ],
                },
                {"name": "limits", "type": "int128[3]"},
                {"name": "memo", "type": "string"},
            ],
        },
        {"type": "event", "name": "Swapped", "inputs": []},
    ]
    pool = "0x" + "ab" * 20
    args = ([(pool, (3000, 500), b"\x01\x02"), (pool, (1, 2**24 - 1), b"")], (-(2**127), 0, 2**127 - 1), "ünï")
    types = ["(address,uint24[2],bytes)[]", "int128[3]", "string"]
    function = chainframe.decode.functions_from_abi(abi)[0]
    data = function.selector + abi_encode(types, list(args))
    table = pa.table({"block_number": pa.array([7, 8], pa.uint64()), "input": pa.array([data, data[:-40]])})
    rows = decode_calls(table, abi, u256="binary").to_pylist()
    assert rows[0]["decode_error"] is None
    assert rows[0]["route"] == [
        {"pool": bytes.fromhex("ab" * 20), "fees": [3000, 500], "data": b"\x01\x02"},
        {"pool": bytes.fromhex("ab" * 20), "fees": [1, 2**24 - 1], "data": b""},
    ]
    assert rows[0]["limits"] == [v.to_bytes(32, "big", signed=True) for v in args[1]]
    assert rows[0]["memo"] == "ünï"
    assert rows[1]["decode_error"]  # cut short inside its tail: kept, not dropped
    assert rows[1]["route"] is None


def send_calls(url: str, calls: dict[str, tuple[str, bytes]]) -> tuple[dict[str, bytes], int, int]:
    """Each call ``(to, input)`` sent from the first dev account and waited for until mined (the node may mine on a
    timer): the transactions' hashes by name, and the first and last block that can hold them."""
    rpc = NodeRPC(url)
    hashes: dict[str, bytes] = {}
    try:
        first = int(rpc.call("eth_blockNumber"), 16) + 1
        last = first
        for name, (to, data) in calls.items():
            tx = {"from": DEV_ACCOUNTS[0], "to": to, "data": "0x" + data.hex(), "gas": hex(200_000)}
            hashes[name] = bytes.fromhex(rpc.call("eth_sendTransaction", tx)[2:])
        for tx_hash in hashes.values():
            receipt = None
            for _ in range(100):
                receipt = rpc.call("eth_getTransactionReceipt", "0x" + tx_hash.hex())
                if receipt is not None:
                    break
                time.sleep(0.1)
            assert receipt is not None
            last = max(last, int(receipt["blockNumber"], 16))
    finally:
        rpc.close()
    return hashes, first, last
