"""Series that keep different rows of the same blocks read each piece once (engine._pieces): an ABI folder's series
per function of transactions and traces fetch and transform each piece once for all, above the finalized block too,
and write what each would have written alone. A reorganization between a piece's read and another series' commit:
tests/engine/test_shared_live.py."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import chainframe
from chainframe.datasets import DATASETS, BlockRange
from chainframe.datasets._function_calls import CALL_CHUNKS
from chainframe.devnet import Devnet
from chainframe.devnet._node_rpc import NodeRPC
from chainframe.engine import _engine, _pieces
from chainframe.engine._pieces import PieceTables
from chainframe.engine._plan import ChunkTask

ABIS = Path(__file__).parent.parent / "data" / "abi"
TOKEN = "0x5fbdb2315678afecb367f032d93f642f64180aa3"  # the devnet's Token (tests/data/abi/full_match/31337)


def _transforms(monkeypatch: pytest.MonkeyPatch, dataset: str) -> Counter[tuple[int, int]]:
    """Each transform of ``dataset``'s answers, by the blocks of the rows it made."""
    seen: Counter[tuple[int, int]] = Counter()
    kind = type(DATASETS[dataset])
    transform = kind.transform

    def counted(self: Any, bodies: Any, **options: Any) -> pa.Table:
        table = transform(self, bodies, **options)
        if table.num_rows:
            numbers = table["block_number"].to_pylist()
            seen[(min(numbers), max(numbers))] += 1
        return table

    monkeypatch.setattr(kind, "transform", counted)
    return seen


def _folder(out: Path) -> dict[str, pa.Table]:
    return {p.name: pq.read_table(p).sort_by([("block_number", "ascending"), ("transaction_index", "ascending")])
            for p in sorted(out.glob("*__*")) if p.is_dir()}  # fmt: skip


@pytest.mark.parametrize(("dataset", "verify"), [("transactions", False), ("traces", False), ("transactions", True)])
def test_a_series_per_function_reads_each_piece_once(
    dataset: str, verify: bool, devnet: Devnet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``verify``, each piece is also proven once for all the series (the raw rows their calls are kept from),
    and each series counts it as its own."""
    rpc = NodeRPC(devnet.node.url)
    try:
        finalized = int(rpc.call("eth_getBlockByNumber", "finalized", False)["number"], 16)
    finally:
        rpc.close()
    options = {"blocks": "0:latest", "rpc": devnet.http_url, "progress": False, "abi_dir": ABIS, "address": TOKEN,
               "verify": verify}  # fmt: skip
    seen = _transforms(monkeypatch, dataset)
    proofs: Counter[tuple[int, int]] = Counter()
    prove = _engine.verify_piece

    def counted(dataset: Any, rows: pa.Table, part: BlockRange, *args: Any, **kwargs: Any) -> Any:
        proofs[(part.start, part.end)] += 1
        return prove(dataset, rows, part, *args, **kwargs)

    monkeypatch.setattr(_engine, "verify_piece", counted)
    chains: list[int] = []
    read_chain = _engine.chain_for

    async def counted_chain(client: Any, task: ChunkTask, finalized: int) -> Any:
        chains.append(task.start)
        return await read_chain(client, task, finalized)

    monkeypatch.setattr(_engine, "chain_for", counted_chain)
    report = chainframe.extract(dataset, out=tmp_path / "kin", **options)
    series = _folder(tmp_path / "kin")
    assert len(series) >= 5, f"an ABI folder's Token decodes into a series per function: {sorted(series)}"
    assert sum(t.num_rows for t in series.values()) > 0
    assert {r for r in seen if r[1] <= finalized}, "no piece below the finalized block: the check would mean nothing"
    assert {r for r in seen if r[1] > finalized}, "no piece above the finalized block: the check would mean nothing"
    assert set(seen.values()) == {1}, f"pieces transformed more than once: {seen}"
    assert chains == [0], chains  # one chunk a series: its headers read once for all of them
    if verify:  # proven once a piece, and counted by every series as its own
        assert len(proofs) == len(seen), proofs
        assert set(proofs.values()) == {1}, f"pieces proven more than once: {proofs}"
        raw = chainframe.collect(dataset, blocks=options["blocks"], rpc=devnet.http_url).num_rows
        assert report.datasets[dataset]["verified_rows"] == len(series) * raw
    else:
        assert not proofs
    # A series of one function's calls is in chunks of ten times its dataset's (datasets._function_calls).
    size = DATASETS[dataset].chunk_size * CALL_CHUNKS
    names = {p.name for p in (tmp_path / "kin").glob("*__*/*.parquet")}
    assert names == {f"{dataset}__31337__0000000000_to_{size - 1:010d}.parquet"}
    kin_transforms = sum(seen.values())

    alone = _transforms(monkeypatch, dataset)
    monkeypatch.setattr(_pieces, "kin_of", lambda task: None)  # every series reads its own pieces
    chainframe.extract(dataset, out=tmp_path / "alone", **options)
    assert sum(alone.values()) > kin_transforms  # alone, each series transformed its pieces itself
    assert len(chains) >= 1 + len(series)  # and read its headers itself
    written = _folder(tmp_path / "alone")
    assert written.keys() == series.keys()
    for name, table in written.items():
        assert series[name].equals(table), name


def _task(function: str, start: int = 0, end: int = 99, verify: bool = False) -> ChunkTask:
    return ChunkTask(dataset="transactions", start=start, end=end, filters={"function": [function]}, chunk_size=100,
                     path=f"{function}-{start}.parquet", verify=verify)  # fmt: skip


@pytest.mark.anyio
async def test_a_kin_hands_a_piece_on_once_and_a_failed_first_reader_hands_nothing() -> None:
    tasks = [_task("a()"), _task("b()"), _task("c()"), _task("d()", start=50), _task("e()", verify=True)]
    pieces = PieceTables(tasks, kept_bytes=1_000)
    kin = pieces.kin(tasks[0])
    assert kin is not None
    assert pieces.kin(tasks[1]) == kin
    assert pieces.kin(tasks[3]) is None  # other blocks fetched: alone
    assert pieces.kin(tasks[4]) is None  # verifying: kin only of other verifying tasks, and it has none
    proving = [_task("a()", verify=True), _task("b()", verify=True), _task("c()")]
    both = PieceTables(proving)
    assert both.kin(proving[0]) == both.kin(proving[1]) is not None  # they prove each piece once, for both
    assert both.kin(proving[2]) is None
    assert pieces.span(kin, 0, 60) == 60
    assert pieces.span(kin, 0, 10) == 60  # as the first planned it

    assert pieces.members(kin) == [t.filters for t in tasks[:3]]  # each kin task's filters, once
    assert [pieces.member(t) for t in tasks[:3]] == [0, 1, 2]
    rows = pa.table({"block_number": pa.array([1, 2], pa.uint64())})
    read = (rows, [rows.slice(0, 1), rows.slice(1), rows.slice(0, 0)], [(59, b"h", b"h")], None, 1.0)
    assert await pieces.take(kin, BlockRange(0, 59)) == (None, True)
    pieces.give(kin, BlockRange(0, 59), read)
    pieces.give(kin, BlockRange(0, 59), None)  # a second give changes nothing
    assert await pieces.take(kin, BlockRange(0, 59)) == (read, False)  # with what its reader saw
    assert await pieces.take(kin, BlockRange(0, 59)) == (read, False)
    assert pieces._bytes == 0  # every kin task took it: dropped

    assert await pieces.take(kin, BlockRange(60, 80)) == (None, True)
    pieces.give(kin, BlockRange(60, 80), None)  # the first reader failed
    assert await pieces.take(kin, BlockRange(60, 80)) == (None, False)  # read it alone

    big = pa.table({"block_number": pa.array(range(1_000), pa.uint64())})
    _, first = await pieces.take(kin, BlockRange(81, 90))
    assert first
    pieces.give(kin, BlockRange(81, 90), (big, [], [], None, 1.0))  # over the bytes held at most: not held
    assert await pieces.take(kin, BlockRange(81, 90)) == (None, False)

    # A chunk read again because the chain moved: a table held is dropped, and a piece still being read is handed
    # on to nobody (its waiter reads it alone, not the read of the fork that moved).
    assert await pieces.take(kin, BlockRange(91, 95)) == (None, True)
    pieces.give(kin, BlockRange(91, 95), read)
    assert await pieces.take(kin, BlockRange(96, 99)) == (None, True)
    async with anyio.create_task_group() as tg:
        waited: list[Any] = []

        async def wait() -> None:
            waited.append(await pieces.take(kin, BlockRange(96, 99)))

        tg.start_soon(wait)
        await anyio.sleep(0.01)
        pieces.forget(BlockRange(90, 99))
    assert waited == [(None, False)]
    pieces.give(kin, BlockRange(96, 99), read)  # too late: nobody takes it
    assert pieces._bytes == 0
    assert await pieces.take(kin, BlockRange(91, 95)) == (None, True)  # read again


def test_each_kin_tasks_rows_in_one_pass_equal_its_own(devnet: Devnet, tmp_path: Path) -> None:
    """kept_rows_each (one decoding of every kin task's functions) gives each what kept_rows gives it alone; with a
    parameter name of two types among them, each decodes its own (one pass would refuse the name)."""
    chainframe.extract("transactions", blocks="0:latest", rpc=devnet.http_url, out=tmp_path, progress=False)
    table = pq.read_table(next((tmp_path / "transactions").glob("*.parquet")))
    transactions = DATASETS["transactions"]
    token = ["transfer(address to, uint256 amount)", "approve(address spender, uint256 amount)"]
    for functions in (
        [[token[0]], [token[1]]],  # two series: one take, a slice each
        [[token[0]], [token[1]], token],  # and one of both: a take each
        [[token[0]], ["transfer(address to, uint8 amount)"]],  # amount of two types: one by one
    ):
        filters = [transactions.check_inputs({"function": f}) for f in functions]
        each = transactions.kept_rows_each(table, filters)
        alone = [transactions.kept_rows(table, f) for f in filters]
        assert [t.num_rows for t in each] == [t.num_rows for t in alone]
        assert any(t.num_rows for t in alone), "no calls kept: the check below would mean nothing"
        for got, want in zip(each, alone, strict=True):
            assert got.equals(want)


@pytest.mark.anyio
async def test_a_kin_shares_the_headers_read_after_its_rows() -> None:
    """The headers one kin task's commit read serve another of the same blocks whose answers all came before they
    were asked for; one whose answers came later, or whose kin's read failed, reads its own; forget drops them."""
    tasks = [_task("a()"), _task("b()"), _task("c()")]
    pieces = PieceTables(tasks)
    reads: list[str] = []

    def reader(name: str, fail: bool = False) -> Any:
        async def read() -> dict[int, str]:
            reads.append(name)
            if fail:
                raise RuntimeError("the node went away")
            return {0: name}

        return read

    before = time.monotonic()
    assert await pieces.chain(tasks[0], before, reader("a")) == {0: "a"}
    assert await pieces.chain(tasks[1], before, reader("b")) == {0: "a"}  # its rows came before a's headers
    assert reads == ["a"]
    assert await pieces.chain(tasks[2], time.monotonic(), reader("c")) == {0: "c"}  # rows newer than the headers
    assert reads == ["a", "c"]

    pieces.forget(BlockRange(0, 99))
    assert await pieces.chain(tasks[1], before, reader("b")) == {0: "b"}  # forgotten: read again
    pieces.forget(BlockRange(0, 99))
    with pytest.raises(RuntimeError):
        await pieces.chain(tasks[0], 0.0, reader("a2", fail=True))
    assert await pieces.chain(tasks[2], 0.0, reader("c2")) == {0: "c2"}  # the kin's read failed: its own
    assert await pieces.chain(_task("d()", start=50), 0.0, reader("d")) == {0: "d"}  # no kin: its own
    assert reads == ["a", "c", "b", "a2", "c2", "d"]
