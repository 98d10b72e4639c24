"""A verifying run's blocks, transactions, receipts and logs of one slot are proven together (engine._joint): nothing
is fetched for their proofs beyond the rows themselves, the rows are a plain run's, and a group that does not prove
(a changed answer, a lost member) publishes nothing of its own: each member is fetched again and proven alone, with
the retries and the one typed error of that path. Real devnet runs, and groups fed real rows directly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from chainframe import extract
from chainframe.datasets import BlockRange
from chainframe.devnet import Devnet
from chainframe.engine import _engine
from chainframe.engine._answers import WrongAnswer
from chainframe.engine._joint import Group, Joint, Unproven
from chainframe.engine._plan import ChunkTask
from chainframe.verify import read_folder
from tests.devnets import node_rpc
from tests.engine.hostile import Hostile
from tests.engine.test_answers import _found

MAIN = ["blocks", "transactions", "receipts", "logs"]


@pytest.fixture
def alone(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The datasets of the pieces proven alone (against fetched material), one entry per piece."""
    seen: list[str] = []
    prove = _engine.verify_piece

    def spy(dataset: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(dataset.name)
        return prove(dataset, *args, **kwargs)

    monkeypatch.setattr(_engine, "verify_piece", spy)
    return seen


def _tables(out: Path, names: list[str]) -> dict[str, pl.DataFrame]:
    tables = {}
    for name in names:
        frame = pl.read_parquet(out / name / "*.parquet")
        keys = [c for c in ("block_number", "transaction_index", "log_index") if c in frame.columns]
        tables[name] = frame.sort(keys)
    return tables


def test_four_datasets_are_proven_together_asking_only_what_a_plain_run_asks(
    devnet: Devnet, tmp_path: Path, alone: list[str]
) -> None:
    assert devnet.gateway is not None
    options: dict[str, Any] = {"blocks": "0:latest", "rpc": devnet.http_url, "progress": False}
    extract(MAIN, out=tmp_path / "plain", **options)
    plain_calls = devnet.gateway.stats()["calls"]
    devnet.gateway.reset_stats()
    report = extract(MAIN, out=tmp_path / "verified", verify=True, **options)
    calls = devnet.gateway.stats()["calls"]
    # Nothing fetched to prove the rows by (material would be another call per block and method); pieces, sized as
    # answers arrive, and the witnesses of those above the finalized block may differ by a few.
    assert calls.keys() == plain_calls.keys()
    assert calls["eth_getBlockReceipts"] == plain_calls["eth_getBlockReceipts"] == devnet.truth.head + 2  # preflight
    assert abs(calls["eth_getBlockByNumber"] - plain_calls["eth_getBlockByNumber"]) <= 10, (calls, plain_calls)
    # 6 apart seen on a loaded machine; material fetched to prove the logs by would be one more call a block (241).
    assert abs(calls["eth_getLogs"] - plain_calls["eth_getLogs"]) <= 10, (calls, plain_calls)
    assert alone == []
    for name in MAIN:
        counts = report.datasets[name]
        assert counts["verified_blocks"] == counts["blocks"] == devnet.truth.head + 1, name
        assert counts["verified_rows"] == counts["rows"], name
        assert counts["unverified"] == {}, name
    verified, plain = _tables(tmp_path / "verified", MAIN), _tables(tmp_path / "plain", MAIN)
    for name in MAIN:
        assert verified[name].equals(plain[name]), name


def test_receipts_without_logs_are_proven_with_their_own_logs(devnet: Devnet, tmp_path: Path, alone: list[str]) -> None:
    names = ["blocks", "transactions", "receipts"]
    report = extract(names, blocks="0:80", rpc=devnet.node.url, out=tmp_path, progress=False, verify=True)
    assert alone == []
    for name in names:
        assert report.datasets[name]["verified_blocks"] == 81, name
        assert report.datasets[name]["unverified"] == {}, name


def test_filtered_and_decoded_series_beside_a_group_are_proven_alone(
    devnet: Devnet, tmp_path: Path, alone: list[str]
) -> None:
    """Logs of one token are not all of a block's logs (no root is rebuilt from them): with the blocks, transactions
    and receipts proven together (the receipts with their own logs), the filtered logs and the token's transfers are
    proven piece by piece against the run's shared answers."""
    token = devnet.truth.contracts["Token"]
    names = [*MAIN, "erc20_transfers"]
    report = extract(names, blocks="0:80", rpc=devnet.node.url, out=tmp_path, progress=False, verify=True,
                     address=token)  # fmt: skip
    assert set(alone) == {"logs", "erc20_transfers"}
    for name in names:
        assert report.datasets[name]["verified_blocks"] == 81, name
        assert report.datasets[name]["unverified"] == {}, name


@pytest.mark.timeout(120)
@pytest.mark.parametrize("concurrency", [1, 2, 4, 8])
def test_every_concurrency_finishes_and_groups_only_what_it_can_hold(
    devnet: Devnet, tmp_path: Path, alone: list[str], concurrency: int
) -> None:
    """Members wait for each other, having given back their places among the fetching tasks: a group larger than the
    tasks a round may have begun (twice its concurrency) would never finish, so there is none; from two places on,
    many small slots are proven together whatever order their pieces come in."""
    report = extract(MAIN, blocks="0:150", rpc=devnet.node.url, out=tmp_path, progress=False, verify=True,
                     chunk_size=20, concurrency=concurrency)  # fmt: skip
    for name in MAIN:
        assert report.datasets[name]["verified_blocks"] == 151, name
    assert set(alone) == (set(MAIN) if 2 * concurrency < len(MAIN) else set())


TAMPERED = {
    "a log's data changed": "logs",
    "a log dropped": "logs",
    "a receipt's gas used changed": "receipts",
    "a transaction's value changed": "transactions",
}


CHANGED = [
    *[(MAIN, case, TAMPERED[case], {TAMPERED[case]}) for case in sorted(TAMPERED)],
    # A run of receipts and logs is lent the transactions its proofs read: a changed one fails the group too.
    (["receipts", "logs"], "a transaction's value changed", "receipts", {"receipts", "logs"}),
]


@pytest.fixture(scope="module")
def clean_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[Any, ...], dict[str, pl.DataFrame]]:
    """Clean verifying runs' tables by datasets and the chain's hash at their last block: the cases of one set of
    datasets compare with one clean run of the chain (four of the five cases extract the same)."""
    return {}


def _clean(devnet: Devnet, names: list[str], options: dict[str, Any],
           runs: dict[tuple[Any, ...], dict[str, pl.DataFrame]], out: Path) -> dict[str, pl.DataFrame]:  # fmt: skip
    last = int(options["blocks"].split(":")[1])
    with node_rpc(devnet) as node:
        key = (tuple(names), node.call("eth_getBlockByNumber", hex(last), False)["hash"])
    if key not in runs:
        extract(names, rpc=devnet.node.url, out=out, **options)
        runs[key] = _tables(out, names)
    return runs[key]


@pytest.mark.parametrize(("names", "case", "failed", "proven_alone"), CHANGED)
def test_a_changed_answer_fails_the_group_and_each_member_is_proven_alone(
    devnet: Devnet, tmp_path: Path, alone: list[str], names: list[str], case: str, failed: str,
    proven_alone: set[str], clean_runs: dict[tuple[Any, ...], dict[str, pl.DataFrame]],
) -> None:  # fmt: skip
    # Chunks 0..19, 20..39 and 40, as 0..29, 30..59 and 60 were: the first 40 blocks hold every kind changed.
    options: dict[str, Any] = {"blocks": "0:40", "progress": False, "verify": True, "chunk_size": 20}
    # Once: the group proves nothing, its members are fetched again and proven piece by piece; the run ends equal to
    # a clean one.
    with Hostile(devnet.node.url, case, times=1, blocks=(0, 40)) as proxy:
        report = extract(names, rpc=proxy.url, out=tmp_path / "again", **options)
        assert proxy.rewritten == 1
    assert proven_alone <= set(alone)
    for name in names:
        assert report.datasets[name]["verified_blocks"] == 41, name
    again, clean = _tables(tmp_path / "again", names), _clean(devnet, names, options, clean_runs, tmp_path / "clean")
    for name in names:
        assert again[name].equals(clean[name]), name
    # Always: the path that proves alone names the check, and the dataset whose proof reads the change keeps nothing.
    with Hostile(devnet.node.url, case, times=None) as proxy, pytest.raises(WrongAnswer) as caught:
        extract(names, rpc=proxy.url, out=tmp_path / "bad", **options)
    wrong = _found(caught.value, WrongAnswer)
    assert isinstance(wrong, WrongAnswer), caught.value
    assert wrong.check.startswith("verify ")
    assert "127.0.0.1" in str(wrong)
    assert not list((tmp_path / "bad" / failed).rglob("*.parquet"))


def test_what_a_run_does_not_extract_is_lent_to_its_proofs_and_never_written(
    devnet: Devnet, tmp_path: Path, alone: list[str]
) -> None:
    """Receipts and logs alone: their proofs read the blocks' headers and transactions, fetched once for the group
    (as chunks lent to it), not once per piece and dataset; the folder holds only what was asked, as a plain run's."""
    names = ["receipts", "logs"]
    options: dict[str, Any] = {"blocks": "0:80", "rpc": devnet.node.url, "progress": False, "chunk_size": 40}
    report = extract(names, out=tmp_path / "verified", verify=True, **options)
    extract(names, out=tmp_path / "plain", **options)
    assert alone == []
    assert set(report.datasets) == set(names)
    for name in names:
        counts = report.datasets[name]
        assert counts["verified_blocks"] == counts["blocks"] == 81, name
        assert counts["verified_rows"] == counts["rows"] > 0, name
        assert counts["unverified"] == {}, name
    folders = {p.name for p in (tmp_path / "verified").iterdir() if p.is_dir() and not p.name.startswith(".")}
    assert folders == set(names)
    verified, plain = _tables(tmp_path / "verified", names), _tables(tmp_path / "plain", names)
    for name in names:
        assert verified[name].equals(plain[name]), name


# Groups fed rows directly: a folder of the devnet's rows, extracted once.


@pytest.fixture(scope="module")
def rows(devnet_session: Devnet, tmp_path_factory: pytest.TempPathFactory) -> dict[str, pa.Table]:
    out = tmp_path_factory.mktemp("rows")
    extract(MAIN, blocks="0:99", rpc=devnet_session.node.url, out=out, progress=False)
    tables = {name: read_folder(out, name) for name in MAIN}
    assert all(t is not None for t in tables.values())
    return {name: t for name, t in tables.items() if t is not None}


def _within(table: pa.Table, part: BlockRange) -> pa.Table:
    numbers = table["block_number"]
    return table.filter(pc.and_(pc.greater_equal(numbers, part.start), pc.less_equal(numbers, part.end)))


def _parts(blocks: BlockRange, sizes: list[int]) -> list[BlockRange]:
    out, start = [], blocks.start
    for size in sizes:
        out.append(BlockRange(start, min(start + size - 1, blocks.end)))
        start += size
    return out


def _group(names: list[str] = MAIN) -> Group:
    return Group(names, BlockRange(0, 99), chain_id=31337, own_logs="logs" not in names)


@pytest.mark.anyio
async def test_a_group_proves_pieces_given_in_any_order_and_counts_each_members_rows(rows: dict[str, pa.Table]) -> None:
    group = _group()
    pieces = {  # each member in pieces of its own sizes, as a run's datasets are
        "blocks": _parts(group.blocks, [100]),
        "transactions": _parts(group.blocks, [7, 30, 13, 50]),
        "receipts": _parts(group.blocks, [40, 60]),
        "logs": _parts(group.blocks, [3] * 34),
    }
    counted: dict[str, Any] = {}
    async with anyio.create_task_group() as tg:
        tg.start_soon(group.prove, anyio.CapacityLimiter(2))

        async def member(name: str) -> None:
            for part in reversed(pieces[name]):  # the last first: the group waits for the gap before it
                group.give(name, part, {name: _within(rows[name], part)})
                await anyio.lowlevel.checkpoint()
            counted[name] = await group.proven(name)

        for name in MAIN:
            tg.start_soon(member, name)
    for name in MAIN:
        assert counted[name].blocks == 100
        assert counted[name].rows == rows[name].num_rows > 0
        assert counted[name].skipped == {}


@pytest.mark.anyio
async def test_a_changed_row_or_a_lost_member_proves_nothing(rows: dict[str, pa.Table]) -> None:
    logs = rows["logs"]
    data = logs["data"].to_pylist()
    changed = next(i for i, d in enumerate(data) if d)
    data[changed] = bytes([data[changed][0] ^ 1]) + data[changed][1:]
    column = pa.array(data, logs.schema.field("data").type)
    whole = {**rows, "logs": logs.set_column(logs.schema.get_field_index("data"), "data", column)}
    group = _group()
    async with anyio.create_task_group() as tg:
        tg.start_soon(group.prove, anyio.CapacityLimiter(2))
        # Every member but the transactions, whose proof waits for them: the receipts' root is rebuilt meanwhile.
        for name in MAIN:
            part = BlockRange(0, 49) if name == "transactions" else group.blocks
            group.give(name, part, {name: _within(whole[name], part)})
        with pytest.raises(Unproven, match="receipts receipts_root"):
            await group.proven("blocks")
        with pytest.raises(Unproven):  # a member still fetching stops at its next piece
            group.give("transactions", BlockRange(50, 99), {"transactions": _within(rows["transactions"],
                                                                                  BlockRange(50, 99))})  # fmt: skip

    group = _group()
    async with anyio.create_task_group() as tg:
        tg.start_soon(group.prove, anyio.CapacityLimiter(2))
        group.give("blocks", group.blocks, {"blocks": rows["blocks"]})
        group.abandon("transactions 0..99: StaleChunk")  # a member's attempt ended (the chain moved)
        with pytest.raises(Unproven, match="StaleChunk"):
            await group.proven("blocks")


def _task(dataset: str, start: int = 0, *, keep_through: int | None = None, **options: Any) -> ChunkTask:
    return ChunkTask(dataset=dataset, start=start, end=start + 999, chunk_size=1000, path=f"{dataset}_{start}.parquet",
                     verify=True, keep_through=keep_through, **options)  # fmt: skip


def _members(joint: Joint, tasks: list[ChunkTask]) -> list[list[str]]:
    groups = {id(g): sorted(g.names) for t in tasks if (g := joint.group(t)) is not None}
    return sorted(groups.values())


def test_who_is_proven_together() -> None:
    tasks = [_task(name, start) for start in (0, 1000) for name in MAIN]
    assert _members(Joint(tasks, begun=4, chain_id=1), tasks) == [sorted(MAIN), sorted(MAIN)]
    assert _members(Joint(tasks, begun=3, chain_id=1), tasks) == []  # a group waits for a member never begun
    # What a member's proof reads and the run does not extract is lent: fetched for the group, never written.
    some = [_task(name) for name in ("blocks", "receipts", "logs")]
    joint = Joint(some, begun=4, chain_id=1)
    assert _members(joint, some) == [sorted(MAIN)]
    assert [(t.dataset, t.start, t.end, t.filters) for t in joint.lent] == [("transactions", 0, 999, {})]
    assert all(joint.is_lent(t) and joint.group(t) is joint.group(some[0]) for t in joint.lent)
    assert not any(joint.is_lent(t) for t in some)
    assert [joint.rank(t) for t in [*some, *joint.lent]] == [0, 2, 3, 1]  # handed out in proof order, lent ones too
    two = [_task(name) for name in ("receipts", "logs")]
    assert sorted(t.dataset for t in Joint(two, begun=4, chain_id=1).lent) == ["blocks", "transactions"]
    assert Joint(two, begun=3, chain_id=1).lent == []  # four tasks to hold with the lent ones: none
    assert Joint([_task("blocks")], begun=4, chain_id=1).lent == []  # the rows are the headers: nothing to lend
    filtered = [*[_task(name) for name in MAIN[:3]], _task("logs", filters={"address": ["0x" + "11" * 20]})]
    assert _members(Joint(filtered, begun=4, chain_id=1), filtered) == [sorted(MAIN[:3])]
    # A filtered series beside the plain one (its own folder, so its own file): only the plain one is a member.
    both = [*tasks[:4], ChunkTask(**{**_task("logs", filters={"topics": [["0x" + "22" * 32]]}).to_json(),
                                     "path": "logs__filtered/logs_0.parquet"})]  # fmt: skip
    joint = Joint(both, begun=4, chain_id=1)
    assert joint.group(both[-1]) is None
    assert joint.group(both[3]) is not None
    # Only rows fetched over the same blocks, in the same form: an extended file, another u256, a task not verified.
    # (The logs then have a group of their own, with blocks and receipts lent over their blocks.)
    extended = [*[_task(name) for name in MAIN[:3]], _task("logs", keep_through=499)]
    joint = Joint(extended, begun=4, chain_id=1)
    assert _members(joint, extended) == [["blocks", "logs", "receipts"], sorted(MAIN[:3])]
    assert {(t.dataset, t.fetch_start) for t in joint.lent} == {("blocks", 500), ("receipts", 500)}
    binary = [*[_task(name) for name in MAIN[:3]], _task("logs", u256="binary")]
    assert _members(Joint(binary, begun=4, chain_id=1), binary) == [["blocks", "logs", "receipts"], sorted(MAIN[:3])]
    plain = [ChunkTask(**{**t.to_json(), "verify": False}) for t in tasks]
    assert _members(Joint(plain, begun=4, chain_id=1), plain) == []
