"""The Delta writer's fencing, on real tables on disk: a writer whose table another writer claimed since can commit
nothing more, whatever it tries (a slot's replacement, a new slot, a deletion), and the table is left exactly as the
newer writer made it."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from chainframe.store import ChunkMeta, ChunkWriter, Superseded, Written, data_file, load_series, table_version
from chainframe.store._delta import APP_ID, DeltaWriter, open_table

SCHEMA = pa.schema([("block_number", pa.uint64()), ("value", pa.decimal128(38, 0))])


def _written(folder: Path, start: int, end: int) -> Written:
    """A whole chunk file for blocks ``start..end`` of slot ``start // 10``, written but not committed."""
    path = data_file(folder, dataset="blocks", chain_id=1, slot=(start - start % 10, start - start % 10 + 9))
    rows = pa.table({"block_number": pa.array(range(start, end + 1), pa.uint64()),
                     "value": pa.array([10**30] * (end - start + 1), pa.decimal128(38, 0))})  # fmt: skip
    with ChunkWriter(path, SCHEMA) as writer:
        writer.write(rows)
        meta = ChunkMeta(dataset="blocks", chain_id=1, start=start, end=end, chunk_size=10, rows=rows.num_rows,
                         finalized=end)  # fmt: skip
        return writer.finish(meta, publish=True)


def _stored(folder: Path) -> list[tuple[int, int]]:
    return [(c.meta.start, c.meta.end) for c in load_series(folder).chunks]


def test_a_superseded_writer_commits_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "blocks"
    old = DeltaWriter(folder, SCHEMA, name="blocks")
    old.publish([_written(folder, 0, 9)])
    old.publish([_written(folder, 10, 14)])
    assert _stored(folder) == [(0, 9), (10, 14)]
    new = DeltaWriter(folder, None, name="blocks")  # another run takes the table over: epoch 2
    assert (old.epoch, new.epoch) == (1, 2)
    new.publish([_written(folder, 10, 19)])  # the tip extended by the newer run
    version = table_version(folder)
    for attempt in (
        lambda: old.publish([_written(folder, 10, 16)]),  # replace a slot the newer run rewrote
        lambda: old.publish([_written(folder, 20, 29)]),  # a slot nobody wrote: delta-rs alone would let it in
        lambda: old.delete([load_series(folder).chunks[-1].path]),
    ):
        with pytest.raises(Superseded, match="another run has written to this table"):
            attempt()
    assert table_version(folder) == version
    assert _stored(folder) == [(0, 9), (10, 19)]
    assert open_table(folder).transaction_version(APP_ID) == 2
    new.publish([_written(folder, 20, 25)])  # the newer run goes on
    assert _stored(folder) == [(0, 9), (10, 19), (20, 25)]


def test_a_slot_is_replaced_in_one_commit_and_old_snapshots_stay_readable(tmp_path: Path) -> None:
    folder = tmp_path / "blocks"
    writer = DeltaWriter(folder, SCHEMA, name="blocks")
    writer.publish([_written(folder, 0, 4)])
    before = table_version(folder)
    writer.publish([_written(folder, 0, 9)])
    assert table_version(folder) == before + 1
    assert _stored(folder) == [(0, 9)]
    history = open_table(folder).history(1)[0]
    assert history["operation"] == "WRITE"
    assert history["chainframe.blocks"] == "0..9"
    old = open_table(folder, version=before)
    assert old.to_pyarrow_table().num_rows == 5  # the replaced file is still there for a reader of that version


def test_a_delta_error_names_no_credential(monkeypatch: pytest.MonkeyPatch) -> None:
    """delta-rs' messages can carry what S3 answered, which may echo the access key id: never past our boundary."""
    from chainframe.store._delta import _reason

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIACHAINFRAMETEST")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret-of-the-test")
    answer = RuntimeError("<AWSAccessKeyId>AKIACHAINFRAMETEST</AWSAccessKeyId> signed with secret-of-the-test")
    text = _reason(answer)
    assert "AKIACHAINFRAMETEST" not in text
    assert "secret-of-the-test" not in text
    assert "AWSAccessKeyId" in text  # the rest of the message is kept
