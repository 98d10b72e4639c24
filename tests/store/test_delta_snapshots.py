"""The latest snapshot a process keeps of each Delta table (``store._delta.latest``): brought up to date with the
commits any writer made since, and opened afresh when the table was deleted and made again under the same name."""

from __future__ import annotations

import shutil
from pathlib import Path

import deltalake
import pyarrow as pa

from chainframe.store import table_version
from chainframe.store._delta import latest, latest_if_table
from chainframe.store._series import load_series


def _write(folder: Path, rows: list[int]) -> None:
    deltalake.write_deltalake(str(folder), pa.table({"n": pa.array(rows, pa.int64())}), mode="append")


def test_a_kept_snapshot_sees_every_commit_and_a_table_made_again(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    assert latest_if_table(folder) is None
    _write(folder, [1])
    first = latest(folder)
    assert (first.version, len(first.files)) == (0, 1)
    _write(folder, [2])  # another writer (deltalake itself), after this process read the table
    _write(folder, [3])
    second = latest(folder)
    assert (second.version, len(second.files)) == (2, 3)
    assert {str(e.path) for e in first.files} < {str(e.path) for e in second.files}
    assert table_version(folder) == 2 == load_series(folder).version

    shutil.rmtree(folder)  # made again under the same name, with one commit: not version 2 with a new commit on it
    deltalake.write_deltalake(str(folder), pa.table({"m": pa.array(["x"])}))
    again = latest(folder)
    assert (again.version, len(again.files), again.schema.names) == (0, 1, ["m"])
    assert {str(e.path) for e in again.files} == {str(e.path) for e in latest(folder).files}
