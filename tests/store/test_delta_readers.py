"""Readers of a Delta prefix in a bucket while runs write it: a moto S3 server process and a real devnet.

A reader thread reads in a loop (``open_duckdb`` and ``scan``, alternating) while the main thread extends the chain
and repairs reorganizations 12 times: no read fails, and every read is one whole snapshot (no row twice, no block
missing). Old versions stay readable (``version=``, ``as_of=``) until ``vacuum``; other Delta readers agree."""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import deltalake
import duckdb
import polars as pl
import pytest

from chainframe import InputError, extract, open_duckdb, scan, vacuum
from chainframe.devnet import DEV_ACCOUNTS, Devnet
from chainframe.devnet._contracts import calldata
from chainframe.devnet._node_rpc import NodeRPC
from chainframe.store import location, s3_filesystem
from chainframe.store._delta import storage_options
from tests.store.test_s3 import bucket, chain, module_devnet, node, s3_endpoint

# the fixtures this module uses, from the store's S3 tests
__all__ = ["bucket", "chain", "module_devnet", "node", "s3_endpoint"]

CHUNK = 50  # the tip crosses block 250 during the loop: a round there commits two slots of a series
FIRST = 200
"""The runs' first block: the chain's last slots (200..249, the tip's 250.. once the loop crosses block 250) are all
a round writes or repairs; the slots before them, unchanged, made every run and read 2-3 times as costly (the test
took 47 CPU-s with ``0:latest``, 36 with this) without a case of their own."""
OPS = 12  # every extension of 1..4 blocks twice and every reorg depth 2..5 once (20 rounds held no other case)
PAUSE = 0.3  # between reads: the runs get most of the 2 cores and the S3 server (a test, not a load test)
LOGS = ("block_number", "block_hash", "log_index", "transaction_hash")
BLOCKS = ("block_number", "block_hash", "parent_hash")
AMOUNTS = itertools.count(2)


def _transfer(devnet: Devnet, amount: int = 1) -> dict[str, str]:
    """A token transfer: one log. Every block this module makes holds one, so a block missing from a read of
    ``logs`` shows (blocks mined empty would have no rows there)."""
    data = calldata("Token", "transfer(address,uint256)", DEV_ACCOUNTS[1], amount)
    return {"from": DEV_ACCOUNTS[0], "to": devnet.truth.contracts["Token"], "gas": hex(100_000), "data": data}


def _mine(devnet: Devnet, node: NodeRPC, blocks: int) -> None:
    for _ in range(blocks):  # the devnet mines each transaction sent in a block of its own
        node.call("eth_sendTransaction", _transfer(devnet))


def _reorg(devnet: Devnet, node: NodeRPC, depth: int) -> None:
    """Replace the last ``depth`` blocks by as many new ones, each with a transfer (so each with a log) of an amount
    never sent before: the same transactions at the same times would make the same blocks, and no fork."""
    node.call("anvil_reorg", depth, [[_transfer(devnet, next(AMOUNTS)), i] for i in range(depth)])


def _extract(devnet: Devnet, out: str, **kw: Any) -> Any:
    return extract(["blocks", "logs"], blocks=f"{FIRST}:latest", out=out, rpc=devnet.http_url, chunk_size=CHUNK,
                   progress=False, **kw)  # fmt: skip


def blocks_problems(frame: pl.DataFrame, *, chunk: int, linked: bool, first: int = 0) -> list[str]:
    """What makes a read of ``blocks`` not a whole run ``first``..N of one chain: a block twice or missing, a block
    not the child of the one before (within a slot; across slots too when ``linked``)."""
    frame = frame.sort("block_number")
    numbers = frame["block_number"].to_list()
    if numbers != list(range(first, first + len(numbers))):
        last = first + len(numbers) - 1
        return [f"blocks {numbers[:3]}..{numbers[-3:]}: {len(numbers)} rows, not {first}..{last} once each"]
    problems = []
    parents, hashes = frame["parent_hash"].to_list()[1:], frame["block_hash"].to_list()[:-1]
    for number, (parent, before) in enumerate(zip(parents, hashes, strict=True), start=first + 1):
        if parent != before and (linked or number % chunk):
            problems.append(f"block {number} is not a child of block {number - 1}")
    return problems


def logs_problems(frame: pl.DataFrame, *, expected: list[int], first: int = 0) -> list[str]:
    """What makes a read of ``logs`` not the whole logs of blocks ``first``..N: blocks up to the devnet's built head
    must hold exactly their logs (``expected``, by block number from 0), every later block one log for each of its
    transfers (see ``_transfer``) up to N with none missing, and every block its logs once each (indexes 0..n-1), all
    of one block hash. Not one log a block: under load anvil can mine two of the module's transfers in one block (seen
    in CI: the blocks table then listed two transactions for it, under the hash of its two logs)."""
    if frame.select("block_number", "log_index").is_duplicated().any():
        return ["a (block_number, log_index) twice"]
    per_block = frame.group_by("block_number").agg(
        n=pl.len(), first=pl.col("log_index").min(), last=pl.col("log_index").max(),
        forks=pl.col("block_hash").n_unique(), transactions=pl.col("transaction_hash").n_unique(),
    ).sort("block_number")  # fmt: skip
    problems = [
        f"block {r['block_number']}: log_index {r['first']}..{r['last']} for {r['n']} logs of {r['forks']} hashes"
        for r in per_block.iter_rows(named=True)
        if (r["first"], r["last"], r["forks"]) != (0, r["n"] - 1, 1)
    ]
    counts = dict(zip(per_block["block_number"].to_list(), per_block["n"].to_list(), strict=True))
    built = len(expected) - 1
    want = {n: c for n, c in enumerate(expected) if c and n >= first}
    got_built = {n: c for n, c in counts.items() if n <= built}
    if got_built != want:
        problems.append(f"blocks {first}..{built}: {sum(got_built.values())} logs, not {sum(want.values())}")
    later = sorted(n for n in counts if n > built)
    transfers = dict(zip(per_block["block_number"].to_list(), per_block["transactions"].to_list(), strict=True))
    if later != list(range(built + 1, built + 1 + len(later))) or any(counts[n] != transfers[n] for n in later):
        problems.append(f"blocks past {built}: {later[:3]}..{later[-3:]} not one log a transfer from {built + 1}")
    return problems


@dataclass
class Reader:
    """Reads ``out``'s ``blocks`` and ``logs`` in a loop, by DuckDB (``open_duckdb``) and Polars (``scan``) in turn,
    until stopped; keeps every failed read and every read that is not a whole prefix."""

    out: str
    expected: list[int]
    linked: bool = True
    reads: dict[str, int] = field(default_factory=lambda: {"duckdb": 0, "polars": 0})
    failures: list[str] = field(default_factory=list)
    twice: list[str] = field(default_factory=list)
    torn: list[str] = field(default_factory=list)
    mixed: list[str] = field(default_factory=list)
    heads: set[int] = field(default_factory=set)
    stop: threading.Event = field(default_factory=threading.Event)
    spans: list[tuple[float, float]] = field(default_factory=list)  # each whole read's start and end (time.time())
    runs: list[tuple[float, float]] = field(default_factory=list)  # each run's, by the thread that runs them

    def run(self) -> None:
        turn = 0
        while not self.stop.wait(PAUSE):
            how = ("duckdb", "polars")[turn % 2]
            turn += 1
            began = time.time()
            try:
                if how == "duckdb":
                    con = open_duckdb(self.out)
                    blocks = con.sql(f"SELECT {', '.join(BLOCKS)} FROM blocks").pl()  # noqa: S608
                    logs = con.sql(f"SELECT {', '.join(LOGS)} FROM logs").pl()  # noqa: S608
                    con.close()
                else:
                    blocks = scan(self.out, "blocks").select(BLOCKS).collect()
                    logs = scan(self.out, "logs").select(LOGS).collect()
            except Exception as exc:
                self.failures.append(f"{how}: {type(exc).__name__}: {str(exc)[:300]}")
                continue
            self.reads[how] += 1
            self.spans.append((began, time.time()))
            self.heads.add(FIRST + blocks.height - 1)
            if blocks["block_number"].is_duplicated().any() or logs.select(LOGS[::2]).is_duplicated().any():
                self.twice.append(f"{how} read {turn}")
            torn = blocks_problems(blocks, chunk=CHUNK, linked=False, first=FIRST)
            torn += logs_problems(logs, expected=self.expected, first=FIRST)
            self.torn += [f"{how} read {turn}: {p}" for p in torn]
            if not torn and self.linked:  # whole slots, but of two forks: see the test
                mixed = blocks_problems(blocks, chunk=CHUNK, linked=True, first=FIRST)
                self.mixed += [f"{how} read {turn}: {p}" for p in mixed]

    def racing(self) -> tuple[int, int]:
        """How many whole reads overlapped a run, and how many a commit to ``out``'s tables (a Delta commit's own
        timestamp, in milliseconds): the reads that raced the writer."""
        runs = sum(any(a < end and start < b for start, end in self.runs) for a, b in self.spans)
        options = storage_options(location(self.out))
        commits = [
            entry["timestamp"] / 1000
            for name in ("blocks", "logs")
            for entry in deltalake.DeltaTable(f"{self.out}/{name}", storage_options=options).history()
        ]
        return runs, sum(any(a < c < b for c in commits) for a, b in self.spans)


def _reads_during_runs(devnet: Devnet, node: NodeRPC, out: str) -> Reader:
    """The reader thread running while the main thread extends and repairs ``out`` OPS times."""
    _mine(devnet, node, 3)  # blocks past the built head before the loop: the first reorg keeps the built chain
    _extract(devnet, out)
    reader = Reader(out, devnet.truth.logs_per_block())
    thread = threading.Thread(target=reader.run, daemon=True)
    thread.start()
    try:
        for op in range(OPS):
            before, failed = dict(reader.reads), len(reader.failures)
            if op % 3 == 2:
                _reorg(devnet, node, 2 + op % 4)  # 2..5 blocks: all past the built head, some across a slot
            else:
                _mine(devnet, node, 1 + op % 4)
            began = time.time()
            _extract(devnet, out)
            reader.runs.append((began, time.time()))
            time.sleep(0.05)  # some reads start between runs, too
            # Each reader reads at least once a round, however loaded the machine: the counts asserted below then
            # depend on the rounds, not on how fast a read is next to a run (about as slow, with 2 cores to share).
            deadline = time.monotonic() + 15
            while (
                thread.is_alive()
                and time.monotonic() < deadline
                and len(reader.failures) == failed  # a failed read is asserted below: no waiting for another
                and any(reader.reads[how] == count for how, count in before.items())
            ):
                time.sleep(0.05)
    finally:
        reader.stop.set()
        thread.join(timeout=60)
    assert not thread.is_alive()
    return reader


def _same_as_clean(devnet: Devnet, out: str, tmp: Path) -> None:
    """``out`` holds, row by row and type by type, what a clean local extraction of the node's chain gives."""
    clean = tmp / f"clean-{time.monotonic_ns()}"
    _extract(devnet, str(clean))
    for name, keys in (("blocks", ["block_number"]), ("logs", ["block_number", "log_index"])):
        want = pl.read_parquet(str(clean / name / "*.parquet")).sort(keys)
        got = scan(out, name).collect().sort(keys)
        assert got.schema == want.schema, name
        assert got.height == want.height > 0, name
        assert got.equals(want), name


@pytest.mark.slow  # 12 runs into a bucket, 1-3 s each
def test_readers_see_whole_snapshots_while_runs_extend_and_repair(
    chain: Devnet, node: NodeRPC, bucket: str, tmp_path: Path
) -> None:
    out = f"{bucket}/dev"
    started = time.monotonic()
    reader = _reads_during_runs(chain, node, out)
    print(f"\n{reader.reads} reads in {time.monotonic() - started:.1f} s, heads {min(reader.heads)}..", end="")
    print(f"{max(reader.heads)}: {len(reader.failures)} failed, {len(reader.twice)} with a row twice, ", end="")
    print(f"{len(reader.torn)} with a block missing, {len(reader.mixed)} with slots of two forks")
    during_runs, across_commits = reader.racing()
    print(f"{during_runs} whole reads during a run, {across_commits} across a commit")
    _same_as_clean(chain, out, tmp_path)
    assert reader.failures == [], reader.failures[:5]
    assert reader.twice == [], reader.twice[:5]
    assert reader.torn == [], reader.torn[:5]  # a round's slots are committed in block order
    assert reader.mixed == [], reader.mixed[:5]  # a repair's slots in one commit
    assert min(reader.reads.values()) >= 12, reader.reads  # both readers, a few dozen reads in all
    assert len(reader.heads) >= 5, reader.heads  # the reads saw the table grow
    # The race the test is for: reads open a snapshot while a run commits (12 of 24 reads here, on an idle machine
    # and under load, as with blocks 0:latest; a read by DuckDB takes about as long as a run).
    assert across_commits >= OPS // 4, (during_runs, across_commits)


def test_old_versions_read_as_they_were_until_vacuumed(
    chain: Devnet, node: NodeRPC, bucket: str, tmp_path: Path
) -> None:
    out = f"{bucket}/dev"
    folder = f"{out}/logs"
    options = storage_options(location(out))
    _extract(chain, out)
    first = deltalake.DeltaTable(folder, storage_options=options).version()
    first_rows = scan(out, "logs").select(pl.len()).collect().item()
    assert first_rows == sum(chain.truth.logs_per_block()[FIRST:])
    time.sleep(1.1)  # commit timestamps are in milliseconds: a time strictly between the two versions
    between = datetime.now(UTC)
    time.sleep(1.1)
    _mine(chain, node, 4)
    _extract(chain, out)  # the tip slot replaced: its old file removed from the table, not from the bucket
    _reorg(chain, node, 2)
    _extract(chain, out)
    latest = deltalake.DeltaTable(folder, storage_options=options).version()
    assert latest >= first + 2
    rows = first_rows + 4

    def blocks_at(**at: Any) -> list[int]:
        return sorted(set(scan(out, "logs", **at).collect()["block_number"].to_list()))

    old = scan(out, "logs", version=first).collect()
    assert old.height == first_rows
    assert blocks_at(version=first)[-1] == chain.truth.head  # before the extension: fewer blocks
    assert scan(out, "logs", as_of=between).collect().equals(old)
    assert scan(out, "logs", as_of=between.isoformat()).collect().equals(old)
    assert logs_problems(old, expected=chain.truth.logs_per_block(), first=FIRST) == []
    now = scan(out, "logs").collect()
    assert now.height == rows
    assert blocks_at()[-1] == chain.truth.head + 4
    assert logs_problems(now, expected=chain.truth.logs_per_block(), first=FIRST) == []

    # Any Delta reader reads the same snapshot: Polars' own, and delta-rs' pyarrow dataset inside DuckDB.
    for at in ({}, {"version": first}):
        want = scan(out, "logs", **at).select(pl.len()).collect().item()
        assert pl.scan_delta(folder, storage_options=options, **at).select(pl.len()).collect().item() == want
        con = duckdb.connect()
        con.register("logs", deltalake.DeltaTable(folder, storage_options=options, **at).to_pyarrow_dataset())
        assert con.sql("SELECT count(*) FROM logs").fetchall()[0][0] == want
        con.close()

    fs = s3_filesystem()
    data = {p for p in fs.find(f"{folder[5:]}/data") if p.endswith(".parquet")}
    live = {p.removeprefix("s3://") for p in deltalake.DeltaTable(folder, storage_options=options).file_uris()}
    assert len(data) > len(live)  # the replaced files are still there, for readers of older versions
    deleted = vacuum(out, retention_hours=0)
    assert deleted["logs"] == len(data) - len(live)
    assert {p for p in fs.find(f"{folder[5:]}/data") if p.endswith(".parquet")} == live
    assert scan(out, "logs").collect().equals(now)  # the latest version still reads whole
    assert open_duckdb(out).sql("SELECT count(*) FROM logs").fetchall()[0][0] == rows
    with pytest.raises(InputError, match=rf"version {first} of .* deleted by vacuum"):  # said before any read
        scan(out, "logs", version=first)
    _same_as_clean(chain, out, tmp_path)
