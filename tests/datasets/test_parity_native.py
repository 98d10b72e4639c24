"""The native reader of trace_block documents (:mod:`chainframe.datasets._parity_native`) against the two readers
before it: Polars' (:mod:`chainframe.datasets._parity_frames`) and the per-frame path, on the devnet workload's real
documents (reverted frames, creations, self-destructs, errors and revert reasons), on documents it must leave to
Polars, and on those documents damaged byte by byte: it may decline, never give another table, never take what the
per-frame path refuses."""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pyarrow as pa
import pytest

from chainframe.datasets import BlockRange
from chainframe.datasets._block_traces import (
    _PARITY_ERRORS,
    CONTRACTS,
    NATIVE_TRANSFERS,
    PARITY,
    TRACES,
    vectorized,
)
from chainframe.datasets._columns import U256
from chainframe.datasets._dataset import build_arrow
from chainframe.datasets._traces import _FRAME, _frame_table
from chainframe.devnet import Devnet
from chainframe.rpc import AsyncClient
from tests.datasets import fuzz
from tests.fixtures import RECORDED_DIR

HEAD = 60  # blocks 0..60: every case of the workload
PIECE = 20


@pytest.fixture(scope="module")
def documents(devnet_session: Devnet) -> list[bytes]:
    """The workload's blocks fetched as a traces run fetches them: one document a piece of :data:`PIECE` blocks."""

    async def fetch() -> list[bytes]:
        async with AsyncClient(devnet_session.node.url) as client:
            pieces = [BlockRange(s, min(s + PIECE - 1, HEAD)) for s in range(0, HEAD + 1, PIECE)]
            return [doc for piece in pieces for doc in await TRACES.fetch(client, piece)]

    return anyio.run(fetch)


@pytest.fixture(scope="module")
def with_headers(devnet_session: Devnet) -> list[bytes]:
    """The same blocks as native_transfers fetches them: with their headers (withdrawals), without gas figures."""

    async def fetch() -> list[bytes]:
        async with AsyncClient(devnet_session.node.url) as client:
            return await NATIVE_TRANSFERS.fetch(client, BlockRange(0, HEAD))

    return anyio.run(fetch)


def _native_table(documents: list[bytes], u256: U256) -> pa.Table | None:
    from chainframe.datasets import _parity_native

    read = _parity_native.read(documents, parity=PARITY, errors=_PARITY_ERRORS, u256=u256)
    if read is None:
        return None
    frames = read.frames
    arrays = {c: frames[_FRAME.get(c, c)] for c in TRACES.columns if _FRAME.get(c, c) in frames}
    return build_arrow(arrays, TRACES.columns, len(frames["top"]), chain_id=1, u256=u256)


def _per_frame(documents: list[bytes], u256: U256) -> pa.Table:
    with fuzz.pure_path():  # the scanner, and Polars' reader with it, off: the per-frame path
        return TRACES.transform(documents, chain_id=1, u256=u256)


@pytest.mark.parametrize("u256", ["decimal", "binary"])
def test_the_native_reader_gives_polars_and_the_per_frame_paths_table(documents: list[bytes], u256: U256) -> None:
    assert len(documents) == 4
    for piece in [documents[:1], documents[1:2], documents]:  # a piece's documents, and several read as one
        native = _native_table(piece, u256)
        assert native is not None, "the native reader declined a real document"
        polars = vectorized(piece)
        assert polars is not None
        assert native.equals(_frame_table(polars.frames, _FRAME, TRACES.columns, 1, u256))
        assert native.equals(_per_frame(piece, u256))
        assert TRACES.transform(piece, chain_id=1, u256=u256).equals(native)
    rows = _native_table(documents, u256)
    assert rows is not None
    # The premise: the workload holds every kind of frame the reader picks values for.
    kinds = Counter(rows["call_type"].to_pylist())
    assert {"CALL", "CREATE", "SELFDESTRUCT"} <= set(kinds), kinds  # static and delegate calls: the test below
    assert any(rows["revert_reason"].to_pylist())
    assert any(rows["error"].to_pylist())
    assert max(rows["depth"].to_pylist()) > 1


@pytest.mark.parametrize("u256", ["decimal", "binary"])
def test_contracts_from_the_native_frames_are_the_other_paths(documents: list[bytes], u256: U256) -> None:
    """contracts' transform takes the native reader's frames: its creations, senders and code hashes are the
    per-frame path's and Polars' (which it takes where the reader declines)."""
    from chainframe.datasets import _parity_native

    assert _parity_native.read(documents, parity=PARITY, errors=_PARITY_ERRORS, u256=u256) is not None
    native = CONTRACTS.transform(documents, chain_id=1, u256=u256)
    with fuzz.pure_path():
        assert native.equals(CONTRACTS.transform(documents, chain_id=1, u256=u256))
    assert native.num_rows > 5  # the workload's creations, by transactions and by contracts
    assert len(set(native["factory"].to_pylist())) > 1


@pytest.mark.parametrize("u256", ["decimal", "binary"])
def test_native_transfers_with_rewards_and_withdrawals_are_the_per_frame_paths(
    with_headers: list[bytes], u256: U256
) -> None:
    """native_transfers' transform takes the native reader's frames, reward traces and headers' withdrawals: the
    same rows as the per-frame path, on the workload's blocks and with a block reward, an uncle reward and
    withdrawals put in (the devnet's blocks have none)."""
    from chainframe.datasets import _parity_native

    (document,) = with_headers
    whole = json.loads(document)
    batch = [dict(e) for e in whole["answers"][0]]
    full = next(e for e in batch if e["result"])
    number = full["result"][0]["blockNumber"]
    reward = {"action": {"author": "0x" + "ab" * 20, "rewardType": "block", "value": "0x1bc16d674ec80000"},
              "blockNumber": number, "result": None, "subtraces": 0, "traceAddress": [], "type": "reward"}  # fmt: skip
    uncle = {**reward, "action": {**reward["action"], "rewardType": "uncle", "value": "0x1"}}
    full["result"] = [*full["result"], reward, uncle]
    headers = [[dict(e) for e in b] for b in whole["header_answers"]]
    given = [{"index": hex(i), "validatorIndex": "0x9", "address": "0x" + f"{i:02x}" * 20, "amount": hex(10**9 + i)}
             for i in range(3)]  # fmt: skip
    for envelope in headers[0][:2]:
        envelope["result"] = {**envelope["result"], "withdrawals": given}
    rich = json.dumps({**whole, "answers": [batch, *whole["answers"][1:]], "header_answers": headers}).encode()
    for doc in (document, rich):
        assert _parity_native.read([doc], parity=PARITY, errors=_PARITY_ERRORS, u256=u256) is not None
        native = NATIVE_TRANSFERS.transform([doc], chain_id=1, u256=u256)
        with fuzz.pure_path():
            assert native.equals(NATIVE_TRANSFERS.transform([doc], chain_id=1, u256=u256))
    kinds = Counter(native["transfer_type"].to_pylist())
    assert kinds["withdrawal"] == 6
    assert kinds["block_reward"] == kinds["uncle_reward"] == 1
    assert {"transaction", "call", "create"} <= set(kinds), kinds


ERIGON_MAINNET = RECORDED_DIR / "networks/rpc-tests/integration/mainnet/trace_block"


def _recorded(path: Path) -> bytes:
    """An Erigon test's trace_block answer (a request and its response) as a traces run's document."""
    ((case),) = json.loads(path.read_bytes())
    number = int(case["request"]["params"][0], 0)  # "0x4366ac"
    answer = json.dumps(case["response"], separators=(",", ":")).encode()
    return b'{"route": "trace_block", "numbers": [%d], "answers": [[%s]]}' % (number, answer)


@pytest.mark.parametrize("path", sorted(ERIGON_MAINNET.glob("*.json")), ids=lambda p: p.stem)
def test_recorded_mainnet_blocks_read_as_the_per_frame_path_reads_them(path: Path) -> None:
    """Real mainnet trace_block answers as Erigon gives them (blocks from 1,000,004 to the first proof-of-stake one;
    tests/data/NOTICE.md): the native reader takes every one, and traces, native_transfers and contracts give the per-
    frame path's rows from it."""
    from chainframe.datasets import _parity_native

    document = _recorded(path)
    for u256 in ("decimal", "binary"):
        assert _parity_native.read([document], parity=PARITY, errors=_PARITY_ERRORS, u256=u256) is not None
        for dataset in (TRACES, NATIVE_TRANSFERS, CONTRACTS):
            native = dataset.transform([document], chain_id=1, u256=u256)
            with fuzz.pure_path():
                assert native.equals(dataset.transform([document], chain_id=1, u256=u256)), (dataset.name, u256)


def test_the_recorded_mainnet_blocks_hold_what_the_reader_picks_values_for() -> None:
    """The premise of the test above: rewards, a creation, failed frames with children, delegate calls."""
    documents = [_recorded(p) for p in sorted(ERIGON_MAINNET.glob("*.json"))]
    assert len(documents) == 6
    traces = pa.concat_tables(TRACES.transform([d], chain_id=1) for d in documents)
    moved = pa.concat_tables(NATIVE_TRANSFERS.transform([d], chain_id=1) for d in documents)
    kinds = Counter(traces["call_type"].to_pylist())
    assert {"CALL", "DELEGATECALL", "CREATE"} <= set(kinds), kinds
    assert "block_reward" in moved["transfer_type"].to_pylist()
    failed = [r for r in traces.to_pylist() if r["error"] and r["subcalls"]]
    assert failed, "no failed frame with children"


def _with(document: bytes, old: bytes, new: bytes) -> bytes:
    assert old in document, old
    return document.replace(old, new, 1)


def _answers_of(document: bytes) -> list[Any]:
    return json.loads(document)["answers"]  # type: ignore[no-any-return]


def _declined(document: bytes) -> None:
    """The native reader leaves ``document`` to Polars' path, whose table (or error) the transform gives."""
    assert _native_table([document], "decimal") is None
    try:
        expected: pa.Table | Exception = _per_frame([document], "decimal")
    except Exception as exc:  # the same refusal is expected of the transform
        expected = exc
    if isinstance(expected, Exception):
        with pytest.raises(type(expected)):
            TRACES.transform([document], chain_id=1)
    else:
        assert TRACES.transform([document], chain_id=1).equals(expected)


def test_documents_read_with_other_json_types_than_polars_schema_are_left_to_polars(documents: list[bytes]) -> None:
    """Polars reads each key with one JSON type: a block number or position as a hex string, a gas figure as a
    number, is not what the scanner may take in its place."""
    document = documents[0]
    _declined(_with(document, b'"blockNumber":1,', b'"blockNumber":"0x1",'))
    _declined(_with(document, b'"transactionPosition":0,', b'"transactionPosition":"0x0",'))
    gas = json.loads(document)["answers"][0][1]["result"][0]["action"]["gas"]
    _declined(_with(document, f'"gas":"{gas}"'.encode(), f'"gas":{int(gas, 16)}'.encode()))
    _declined(_with(document, b'"traceAddress":[]', b'"traceAddress":[-1]'))


def test_documents_with_members_or_texts_it_does_not_read_are_left_to_polars(documents: list[bytes]) -> None:
    document = documents[0]
    _declined(document[:-1] + b', "other": []}')
    header = {"jsonrpc": "2.0", "id": 0, "result": {"number": "0x7d0", "withdrawals": []}}
    _declined(document[:-1] + b', "header_answers": [[' + json.dumps(header).encode() + b"]]}")  # not asked
    _declined(_with(document, b'"callType":"call"', b'"callType":"c\xc3\xa0ll"'))  # upper-cased by Unicode's rules
    answers = _answers_of(document)
    batch = answers[0]
    i, j = [k for k, envelope in enumerate(batch) if envelope["result"]][:2]
    shuffled = list(batch)
    shuffled[i], shuffled[j] = batch[j], batch[i]  # envelopes out of their ids' order: kept as received by Polars
    meta = {k: v for k, v in json.loads(document).items() if k != "answers"}
    _declined(json.dumps({**meta, "answers": [shuffled, *answers[1:]]}).encode())


def test_other_kinds_and_absent_values_read_as_the_per_frame_path_reads_them(documents: list[bytes]) -> None:
    """A static call (callTracer gives no value for it) and a delegate call, a trace without a trace address (the
    top frame's), without a call type, without an output: read alike by every path."""
    document = documents[0]
    for old, new in [
        (b'"callType":"call"', b'"callType":"staticcall"'),
        (b'"callType":"call"', b'"callType":"delegatecall"'),
        (b'"traceAddress":[],', b""),
        (b'"callType":"call",', b""),
        (b',"output":"0x"}', b"}"),
        (b'"result":{', b'"result":null,"x":{'),
    ]:
        changed = _with(document, old, new)
        table = _native_table([changed], "decimal")
        assert table is not None
        assert table.equals(_per_frame([changed], "decimal"))


def test_reward_traces_are_left_out_and_blocks_keep_the_asked_order(documents: list[bytes]) -> None:
    """A block's reward trace (Erigon and OpenEthereum list the miner's reward last) is no frame; blocks asked in
    another order than their numbers' keep it, as the per-frame path keeps it."""
    whole = json.loads(documents[0])
    numbers, answers = whole["numbers"], whole["answers"]
    batch = [dict(e) for e in answers[0]]
    full = next(e for e in batch if e["result"])
    number = full["result"][0]["blockNumber"]
    reward = {"action": {"author": "0x" + "ab" * 20, "rewardType": "block", "value": "0x1bc16d674ec80000"},
              "blockNumber": number, "result": None, "subtraces": 0, "traceAddress": [], "type": "reward"}  # fmt: skip
    full["result"] = [*full["result"], reward]
    rewarded = json.dumps({**whole, "answers": [batch, *answers[1:]]}).encode()
    reversed_order = json.dumps(
        {
            **whole,
            "numbers": numbers[::-1],
            "gas_used": whole["gas_used"][::-1],
            "answers": [[{**e, "id": k} for k, e in enumerate(batch[::-1])]],
        }
    ).encode()
    for document in (rewarded, reversed_order):
        table = _native_table([document], "decimal")
        assert table is not None
        assert table.equals(_per_frame([document], "decimal"))
        assert table.num_rows == _native_table(documents[:1], "decimal").num_rows  # type: ignore[union-attr]
    assert _native_table([reversed_order], "decimal")["block_number"].to_pylist()[0] > number  # type: ignore[index]


def test_random_damage_never_reads_to_another_table(documents: list[bytes]) -> None:
    """A differential fuzz of the documents (tests/datasets/fuzz.py's damage): the native reader may decline, but it
    never takes a document the per-frame path refuses, nor gives another table."""
    rng = random.Random(20261129)
    small = [d for d in documents if len(d) < 60_000] or documents[:1]
    counts: Counter[str] = Counter()
    wrong: list[bytes] = []
    for _ in range(int(os.environ.get("DAMAGE_ROUNDS", "400"))):
        damaged = fuzz.mutate(rng, rng.choice(small))
        try:
            native = _native_table([damaged], "decimal")
        except Exception:  # a crash of the reader is a wrong outcome
            counts["native raises"] += 1
            wrong.append(damaged)
            continue
        try:
            expected: pa.Table | None = _per_frame([damaged], "decimal")
        except Exception:  # any refusal of the per-frame path
            expected = None
        if native is None:
            counts["native declines"] += 1
        elif expected is None:
            counts["native accepts, per-frame refuses"] += 1
            wrong.append(damaged)
        elif native.equals(expected):
            counts["both accept, equal"] += 1
        else:
            counts["both accept, differ"] += 1
            wrong.append(damaged)
    assert not wrong, (counts, wrong[:1])
    assert counts["both accept, equal"] > 20, counts
    assert counts["native declines"] > 100, counts
