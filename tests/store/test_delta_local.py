"""A Delta output on a local disk (``table="delta"``) against a real devnet: one commit per rewritten chunk, reorgs
repaired, ``info`` and ``verify_stored`` as for folders, a layout never mixed, and the same rows and types as the
plain-Parquet layout. Every version a run commits is a whole table: time travel shows what a reader could see."""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

import deltalake
import polars as pl
import pytest

from chainframe import extract, scan
from chainframe.cli import main as cli_main
from chainframe.devnet import Devnet
from chainframe.devnet._node_rpc import NodeRPC
from chainframe.engine import verify_stored
from chainframe.store import folder_info
from chainframe.verify import verify_folder
from tests.engine.test_living import reorg
from tests.store.test_delta_readers import _mine, _reorg, blocks_problems, logs_problems
from tests.store.test_s3 import chain, module_devnet, node

__all__ = ["chain", "module_devnet", "node"]  # the fixtures this module uses, from the store's S3 tests

DATASETS = ("blocks", "logs")
KEYS = {"blocks": ["block_number"], "logs": ["block_number", "log_index"]}


def _history(out: Path, name: str) -> list[dict[str, Any]]:
    """The table's commits, oldest first."""
    return sorted(deltalake.DeltaTable(str(out / name)).history(), key=lambda c: c["version"])


def _written(commits: list[dict[str, Any]]) -> list[str]:
    """The block ranges of the commits that made a chunk file part of the table."""
    return [c["chainframe.blocks"] for c in commits if "chainframe.blocks" in c]


def _same_as_parquet(devnet: Devnet, out: Path, tmp: Path, **kw: Any) -> None:
    """``out`` holds, row by row and type by type, what a plain-Parquet extraction of the node's chain gives."""
    plain = tmp / f"plain-{time.monotonic_ns()}"
    extract(list(DATASETS), blocks="0:latest", out=plain, rpc=devnet.http_url, progress=False, table="parquet", **kw)
    for name in DATASETS:
        want = pl.read_parquet(str(plain / name / "*.parquet")).sort(KEYS[name])
        got = scan(out, name).collect().sort(KEYS[name])
        assert got.schema == want.schema, name
        assert got.height == want.height > 0, name
        assert got.equals(want), name


def test_extend_and_repair_commit_one_version_per_rewritten_chunk(
    chain: Devnet, node: NodeRPC, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    report = extract(list(DATASETS), blocks="0:latest", out=out, rpc=chain.http_url, chunk_size=100, progress=False,
                     table="delta")  # fmt: skip
    assert report.datasets["logs"]["written"] == 3
    head = chain.truth.head
    for name in DATASETS:
        assert (out / name / "_delta_log").is_dir()
        # In block order: each commit the consecutive slots done from the lowest not yet committed on.
        spans = [tuple(map(int, r.split(".."))) for r in _written(_history(out, name))]
        assert spans[0][0] == 0
        assert spans[-1][1] == head
        assert all(a[1] + 1 == b[0] for a, b in itertools.pairwise(spans)), spans

    node.call("anvil_mine", hex(7))  # the tip slot grows: one commit replaces its file
    before = {name: len(_history(out, name)) for name in DATASETS}
    again = extract(list(DATASETS), blocks="0:latest", out=out, rpc=chain.http_url, progress=False)
    assert again.datasets["logs"]["written"] == 1
    for name in DATASETS:
        commits = _history(out, name)[before[name] :]
        assert _written(commits) == [f"200..{head + 7}"]
        assert len(commits) == 2  # the run's claim of the table (its fencing epoch), and the one commit
        table = deltalake.DeltaTable(str(out / name))
        assert len(table.file_uris()) == 3  # the old tip file left the table (it stays on disk until vacuum)
        assert len(list((out / name / "data").glob("*.parquet"))) == 4
        assert folder_info(out)[name].outside == 1  # info says so, and vacuum frees it

    reorg(node, 5)
    before = {name: len(_history(out, name)) for name in DATASETS}
    repaired = extract(list(DATASETS), blocks="0:latest", out=out, rpc=chain.http_url, progress=False)
    assert {r["series"] for r in repaired.reorgs} == set(DATASETS)
    assert {r["fork_block"] for r in repaired.reorgs} == {head + 7 - 4}
    for name in DATASETS:
        assert _written(_history(out, name)[before[name] :]) == [f"200..{head + 7}"]

    capsys.readouterr()
    assert cli_main(["info", str(out)]) == 0
    shown = capsys.readouterr()
    said = [line.strip() for line in shown.out.splitlines() if "problem" in line.lower()]
    assert said == ["problems: none"] * len(DATASETS), shown.out
    assert "table   Delta" in shown.out
    for series in folder_info(out).values():
        assert series.problems == [], series.name
    proven = verify_stored(out, rpc=chain.node.url)
    assert proven.ok, proven.failures[:3]
    assert proven.rows_verified["logs"] == scan(out, "logs").select(pl.len()).collect().item() > 0
    offline = verify_folder(out)  # against the stored headers: the tables' files, not the replaced ones beside them
    assert offline.ok, offline.failures[:3]
    assert offline.rows_verified["logs"] == proven.rows_verified["logs"]
    _same_as_parquet(chain, out, tmp_path, chunk_size=100)


def test_a_delta_folder_refuses_a_plain_parquet_run(
    chain: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    argv = ["extract", *DATASETS, "--blocks", "0:99", "--rpc", chain.http_url, "--out", str(out), "--no-progress"]
    assert cli_main([*argv, "--table", "delta"]) == 0
    files = sorted(p.relative_to(out) for p in out.rglob("*") if ".chainframe" not in p.parts)
    capsys.readouterr()
    assert cli_main([*argv, "--table", "parquet"]) == 2
    refused = capsys.readouterr()
    assert "Traceback" not in refused.out + refused.err
    lines = refused.err.strip().splitlines()
    assert len(lines) == 1, refused.err
    assert "holds Delta tables" in lines[0]
    assert "--table delta" in lines[0]
    assert sorted(p.relative_to(out) for p in out.rglob("*") if ".chainframe" not in p.parts) == files  # untouched
    assert cli_main([*argv[:-3], "--blocks", "0:150", *argv[-3:]]) == 0  # no --table: the folder's own layout
    assert (out / "logs" / "_delta_log").is_dir()
    assert not list((out / "logs").glob("*.parquet"))


def test_every_committed_version_is_a_whole_table(chain: Devnet, node: NodeRPC, tmp_path: Path) -> None:
    """A run commits chunk after chunk: a reader (or a time-travel query) at any version between two of them must
    still see blocks 0..N once each, of one chain, with all their logs. Small slots and concurrent chunks: an
    extension crosses slots (several slots committed in one round), a repair spans two slots."""
    out = tmp_path / "out"
    _mine(chain, node, 3)  # past the built head: the repairs below keep the built chain's logs

    def run() -> None:
        extract(list(DATASETS), blocks="0:latest", out=out, rpc=chain.http_url, chunk_size=10, concurrency=8,
                progress=False, table="delta")  # fmt: skip

    run()  # while a first run fills an empty table, its slots appear as they finish, in any order
    first = {name: deltalake.DeltaTable(str(out / name)).version() for name in DATASETS}
    for step in range(4):
        _mine(chain, node, 12)  # the tip slot completed, a whole slot, and a new tip
        run()
        _reorg(chain, node, 6 + step)  # across a slot boundary for most heads
        run()
    expected = chain.truth.logs_per_block()
    problems = []
    for version in range(first["blocks"], deltalake.DeltaTable(str(out / "blocks")).version() + 1):
        blocks = scan(out, "blocks", version=version).collect()
        problems += [f"blocks v{version}: {p}" for p in blocks_problems(blocks, chunk=10, linked=True)]
    for version in range(first["logs"], deltalake.DeltaTable(str(out / "logs")).version() + 1):
        logs = scan(out, "logs", version=version).collect()
        problems += [f"logs v{version}: {p}" for p in logs_problems(logs, expected=expected)]
    assert problems == [], "\n".join(problems)
    _same_as_parquet(chain, out, tmp_path, chunk_size=10)
