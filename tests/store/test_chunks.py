"""The store: slot names, series folders, atomic writes, metadata in the footer, and `chainframe info`."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from chainframe._errors import InputError
from chainframe._version import __version__
from chainframe.cli import _info
from chainframe.datasets import DATASETS
from chainframe.store import (
    SCHEMA_VERSION,
    ChunkMeta,
    ChunkWriter,
    ObjectPath,
    canonical_filters,
    chunk_path,
    clean_temporaries,
    filters_digest,
    folder_info,
    format_info,
    load_series,
    location,
    read_meta,
    series_name,
    write_chunk,
)
from chainframe.store._s3 import FOOTER_TAIL, footer_from_tail

HASH = "0x" + "11" * 32
TX_HASH = "0x" + "22" * 32
EMITTER = "0x" + "ab" * 20
FILTERS = {"address": EMITTER, "topics": [HASH]}
DEAD_PID = 2**31 - 1  # above any pid_max, so never a live process


def _log(block: int, index: int) -> dict[str, Any]:
    return {
        "address": EMITTER,
        "topics": [HASH],
        "data": "0x01",
        "blockNumber": hex(block),
        "transactionHash": TX_HASH,
        "transactionIndex": "0x0",
        "blockHash": HASH,
        "logIndex": hex(index),
        "removed": False,
    }


def _logs(*blocks: int) -> pa.Table:
    objects = [_log(b, i) for i, b in enumerate(blocks)]
    return DATASETS["logs"].from_objects(json.dumps(objects).encode(), chain_id=1)


def _meta(table: pa.Table, start: int = 0, end: int = 9, **changes: Any) -> ChunkMeta:
    fields: dict[str, Any] = {
        "dataset": "logs",
        "chain_id": 1,
        "start": start,
        "end": end,
        "chunk_size": 10,
        "filters": {},
        "u256": "decimal",
        "first_block_hash": bytes.fromhex("aa" * 32),
        "first_parent_hash": bytes.fromhex("cc" * 32),
        "last_block_hash": bytes.fromhex("bb" * 32),
        "finalized": end,
        "rows": table.num_rows,
        "endpoint": "http://127.0.0.1:8545/v3/<redacted>",
    }
    return ChunkMeta(**{**fields, **changes})


def _write(out: Path, table: pa.Table, start: int, end: int, **changes: Any) -> Path:
    meta = _meta(table, start, end, **changes)
    folder = out / series_name(meta.dataset, meta.filters, meta.u256)
    path = chunk_path(folder, dataset=meta.dataset, chain_id=meta.chain_id, slot=meta.slot)
    write_chunk(table, path, meta)
    return path


def _read(path: Path) -> pa.Table:
    """The logs back, in Arrow's types: Parquet stores timestamp[s] as ms and names list items "element"."""
    return pq.read_table(path).cast(DATASETS["logs"].schema)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".tmp-" in p.name)


# --- metadata ------------------------------------------------------------------------------------------------------


def test_metadata_round_trip_in_memory_and_through_a_file(tmp_path: Path) -> None:
    table = _logs(3, 3, 7)
    meta = _meta(table, filters=FILTERS)
    kv = meta.to_metadata()
    assert set(kv) == {
        b"chainframe." + k.encode()
        for k in (
            "dataset", "chain_id", "start", "end", "chunk_size", "filters", "u256", "first_block_hash",
            "first_parent_hash", "last_block_hash", "finalized", "recent_hashes", "rows", "endpoint", "tool_version",
            "schema_version", "complete",
        )
    }  # fmt: skip
    assert kv[b"chainframe.complete"] == b"true"
    assert json.loads(kv[b"chainframe.first_block_hash"]) == "0x" + "aa" * 32
    assert ChunkMeta.from_metadata(kv) == meta
    assert meta.tool_version == __version__
    assert meta.schema_version == SCHEMA_VERSION

    path = tmp_path / "logs" / "chunk.parquet"
    write_chunk(table, path, meta)
    assert read_meta(path) == meta
    assert _read(path).equals(table)

    # The ABI that decoded it, only where one did: a footer without the key (every file before it) reads as None.
    said = dataclasses.replace(meta, decoded_with="Token.json sha256:0123456789abcdef")
    assert said.to_metadata() == kv | {b"chainframe.decoded_with": b'"Token.json sha256:0123456789abcdef"'}
    assert ChunkMeta.from_metadata(said.to_metadata()) == said
    assert meta.decoded_with is None  # read from kv above, without the key
    assert ChunkMeta.from_metadata({**kv, b"chainframe.decoded_with": b"5"}) is None


def test_from_metadata_refuses_what_is_not_a_complete_chunk() -> None:
    kv = _meta(_logs()).to_metadata()
    assert ChunkMeta.from_metadata(None) is None
    assert ChunkMeta.from_metadata({}) is None
    assert ChunkMeta.from_metadata({k: v for k, v in kv.items() if k != b"chainframe.complete"}) is None
    assert ChunkMeta.from_metadata({k: v for k, v in kv.items() if k != b"chainframe.rows"}) is None
    assert ChunkMeta.from_metadata({**kv, b"chainframe.rows": b"not json"}) is None
    assert ChunkMeta.from_metadata({**kv, b"chainframe.rows": b"-1"}) is None
    assert ChunkMeta.from_metadata({**kv, b"chainframe.first_block_hash": b'"0x1234"'}) is None


def test_the_api_key_never_reaches_the_metadata(tmp_path: Path) -> None:
    table = _logs(1)
    meta = _meta(table, endpoint="https://mainnet.example/v3/SECRETKEY")
    assert "SECRETKEY" not in meta.endpoint
    path = tmp_path / "logs" / "chunk.parquet"
    write_chunk(table, path, meta)
    footer = pq.read_metadata(path).metadata
    assert not any(b"SECRETKEY" in k or b"SECRETKEY" in v for k, v in footer.items())
    assert b"SECRETKEY" not in path.read_bytes()
    assert json.loads(footer[b"chainframe.endpoint"]) == "https://mainnet.example/v3/<redacted>"


def test_filters_are_stored_canonical() -> None:
    meta = _meta(
        _logs(), filters={"topics": [HASH.upper().replace("0X", "0x"), None], "address": bytes.fromhex("ab" * 20)}
    )
    assert meta.filters == {"address": EMITTER, "topics": [HASH, None]}
    assert canonical_filters({"address": None, "topics": []}) == {}


# --- names ---------------------------------------------------------------------------------------------------------


def test_slot_names_and_series_folders_are_deterministic(tmp_path: Path) -> None:
    assert chunk_path(tmp_path, dataset="logs", chain_id=1, slot=(0, 999)).name == (
        "logs__1__0000000000_to_0000000999.parquet"
    )
    assert series_name("logs", {}, "decimal") == series_name("logs", None, "decimal") == "logs"
    assert series_name("logs", {"address": None}, "decimal") == "logs"
    assert series_name("blocks", {}, "binary") == "blocks__binary"
    filtered = series_name("logs", FILTERS, "decimal")
    assert filtered == f"logs__f{filters_digest(FILTERS)}"
    assert len(filters_digest(FILTERS)) == 8
    # the same filters however written: key order, hex case, bytes
    same = {"topics": [HASH.replace("0x", "0X")], "address": bytes.fromhex("ab" * 20)}
    assert series_name("logs", same, "decimal") == filtered
    assert series_name("logs", {"address": "0x" + "cd" * 20}, "decimal") != filtered
    assert series_name("logs", FILTERS, "binary") == filtered + "__binary"
    assert filters_digest({}) == filters_digest(None) == ""


@pytest.mark.parametrize("dataset", ["../logs", "logs/x", "a__b", ""])
def test_chunk_names_refuse_unsafe_dataset_names(tmp_path: Path, dataset: str) -> None:
    with pytest.raises(ValueError, match="dataset name"):
        chunk_path(tmp_path, dataset=dataset, chain_id=1, slot=(0, 1))


def test_metadata_holds_one_slot_and_the_hashes_of_its_recent_blocks() -> None:
    table = _logs(1)
    with pytest.raises(ValueError, match="not inside one slot"):
        _meta(table, 5, 14)
    with pytest.raises(ValueError, match="recent_hashes"):
        _meta(table, 0, 9, finalized=6)  # blocks 7..9 need their hashes
    meta = _meta(table, 10, 19, finalized=16, recent_hashes=bytes(range(17, 20)) * 32)
    assert meta.slot == (10, 19)
    assert list(meta.recent_blocks) == [17, 18, 19]
    assert meta.recent_hash(18) == ((bytes(range(17, 20)) * 32)[32:64])
    assert meta.recent_hash(16) is None
    assert ChunkMeta.from_metadata(meta.to_metadata()) == meta


# --- what a folder holds -------------------------------------------------------------------------------------------


@pytest.fixture
def chunk(tmp_path: Path) -> Path:
    return _write(tmp_path, _logs(2, 5), 0, 9, filters=FILTERS)


def test_series_membership_is_checked_against_the_folder(tmp_path: Path, chunk: Path) -> None:
    series = load_series(chunk.parent)
    assert [c.path for c in series.chunks] == [chunk]
    assert series.foreign == ()
    assert series.meta is not None
    assert series.meta.filters == canonical_filters(FILTERS)
    moved = tmp_path / "logs" / chunk.name  # a filtered chunk in the unfiltered series' folder
    moved.parent.mkdir()
    chunk.rename(moved)
    assert [why for _, why in load_series(moved.parent).foreign] == [f"a chunk of series {chunk.parent.name!r}"]
    renamed = moved.with_name("logs__1__0000000010_to_0000000019.parquet")
    write_chunk(_logs(1), renamed, _meta(_logs(1)))
    assert "not named for their slot" in load_series(renamed.parent).foreign[-1][1]


def test_another_schema_version_is_not_a_chunk(tmp_path: Path) -> None:
    path = _write(tmp_path, _logs(1), 0, 9, schema_version=SCHEMA_VERSION - 1)
    assert read_meta(path) is None
    assert [p for _, p in load_series(path.parent).damaged] == [path]  # named for a slot: written anew when asked


@pytest.mark.parametrize("cut", [1, 4, 9, 200])
def test_a_truncated_file_is_not_complete(chunk: Path, cut: int) -> None:
    data = chunk.read_bytes()
    chunk.write_bytes(data[:-cut])  # what a writer killed without our atomic rename would leave
    assert read_meta(chunk) is None
    assert [p for _, p in load_series(chunk.parent).damaged] == [chunk]


def test_missing_empty_and_garbage_files_are_not_complete(tmp_path: Path) -> None:
    assert read_meta(tmp_path / "nope.parquet") is None
    (tmp_path / "empty.parquet").write_bytes(b"")
    (tmp_path / "garbage.parquet").write_bytes(b"PAR1 not really")
    assert read_meta(tmp_path / "empty.parquet") is None
    assert read_meta(tmp_path / "garbage.parquet") is None
    assert read_meta(tmp_path) is None  # a folder


def test_a_foreign_parquet_file_is_not_complete(tmp_path: Path) -> None:
    path = tmp_path / "foreign.parquet"
    pq.write_table(_logs(1, 2), path)
    assert read_meta(path) is None


def test_a_file_without_the_complete_marker_is_not_complete(tmp_path: Path) -> None:
    table = _logs(1, 2)
    kv = _meta(table, filters=FILTERS).to_metadata()
    del kv[b"chainframe.complete"]
    path = tmp_path / "unmarked.parquet"
    pq.write_table(table.replace_schema_metadata(kv), path)
    assert read_meta(path) is None


def test_a_row_count_other_than_the_metadata_is_not_complete(tmp_path: Path) -> None:
    table = _logs(1, 2)
    kv = _meta(table, filters=FILTERS, rows=3).to_metadata()
    path = tmp_path / "lying.parquet"
    pq.write_table(table.replace_schema_metadata(kv), path)
    assert read_meta(path) is None


# --- writing -------------------------------------------------------------------------------------------------------


def test_write_chunk_uses_zstd_row_groups_and_keeps_schema_metadata(tmp_path: Path) -> None:
    table = _logs(1, 2, 3, 4, 5).replace_schema_metadata({b"owner": b"kept", b"chainframe.stale": b"x"})
    path = tmp_path / "logs" / "chunk.parquet"
    write_chunk(table, path, _meta(table), row_group_rows=2)
    footer = pq.read_metadata(path)
    assert footer.num_row_groups == 3
    assert footer.row_group(0).column(0).compression == "ZSTD"
    assert footer.metadata[b"owner"] == b"kept"
    assert b"chainframe.stale" not in footer.metadata
    assert _read(path).equals(table)
    assert _leftovers(path.parent) == []


def test_write_chunk_writes_empty_tables(tmp_path: Path) -> None:
    table = DATASETS["logs"].empty()
    path = _write(tmp_path, table, 0, 9)
    assert read_meta(path) == _meta(table)
    back = pq.read_table(path)
    assert (back.num_rows, back.column_names) == (0, table.column_names)


def test_write_chunk_refuses_a_row_count_other_than_the_metadata(tmp_path: Path) -> None:
    table = _logs(1)
    with pytest.raises(ValueError, match="rows"):
        write_chunk(table, tmp_path / "x.parquet", _meta(table, rows=2))
    assert list(tmp_path.iterdir()) == []


def test_a_crash_before_the_rename_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = _logs(1, 2)
    path = tmp_path / "logs" / "chunk.parquet"

    def crash(*args: Any) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk gone"):
        write_chunk(table, path, _meta(table))
    assert list(path.parent.iterdir()) == []


def test_a_crash_while_writing_rows_leaves_the_old_file_intact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = _logs(1)
    path = tmp_path / "logs" / "chunk.parquet"
    write_chunk(old, path, _meta(old))

    def crash(self: Any, table: Any, row_group_size: int | None = None) -> None:
        raise KeyboardInterrupt  # a kill in the middle of the rows

    monkeypatch.setattr(pq.ParquetWriter, "write_table", crash)
    new = _logs(1, 2, 3)
    with pytest.raises(KeyboardInterrupt):
        write_chunk(new, path, _meta(new))
    assert _leftovers(path.parent) == []
    assert read_meta(path) == _meta(old)
    assert _read(path).equals(old)


def test_write_chunk_replaces_an_existing_file(tmp_path: Path) -> None:
    path = _write(tmp_path, _logs(1), 0, 9)
    new = _logs(1, 2)
    write_chunk(new, path, _meta(new))
    assert _read(path).equals(new)


def test_clean_temporaries_removes_only_dead_runs_leftovers(tmp_path: Path) -> None:
    dead = [tmp_path / f".logs__1__x.parquet.tmp-{DEAD_PID}-{n:08x}" for n in range(2)]
    alive = tmp_path / f".logs__1__y.parquet.tmp-{os.getpid()}-0badcafe"
    other = [tmp_path / ".hidden", tmp_path / "a.parquet.tmp-1-2", tmp_path / ".x.tmp-notapid-zz"]
    for p in (*dead, alive, *other):
        p.write_bytes(b"partial")
    assert clean_temporaries(tmp_path) == 2
    assert sorted(tmp_path.iterdir()) == sorted([alive, *other])
    assert clean_temporaries(tmp_path) == 0
    assert clean_temporaries(tmp_path / "missing") == 0


# --- folder_info ---------------------------------------------------------------------------------------------------


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """Logs slots 0..9, 10..19, 30..39 (gap 20..29), a foreign file, a temporary; a filtered series; chain 5 blocks."""
    _write(tmp_path, _logs(1, 2), 0, 9, last_block_hash=bytes.fromhex("01" * 32))
    _write(tmp_path, _logs(12), 10, 19, first_parent_hash=bytes.fromhex("01" * 32))
    _write(tmp_path, _logs(31, 32, 33), 30, 39)
    pq.write_table(_logs(1), tmp_path / "logs" / "foreign.parquet")
    (tmp_path / "logs" / f".logs__1__0000000040_to_0000000049.parquet.tmp-{DEAD_PID}-deadbeef").write_bytes(b"x")
    _write(tmp_path, _logs(5), 0, 9, filters=FILTERS)  # another series: a folder of its own
    blocks = DATASETS["blocks"].empty()
    _write(tmp_path, blocks, 0, 99, dataset="blocks", rows=0, chain_id=5, chunk_size=100)
    (tmp_path / "notes").mkdir()  # a folder without parquet files is no dataset
    return tmp_path


def test_folder_info_reads_series_ranges_gaps_and_problems(out: Path) -> None:
    infos = folder_info(out)
    filtered = series_name("logs", FILTERS, "decimal")
    assert sorted(infos) == ["blocks", "logs", filtered]
    logs = infos["logs"]
    assert logs.ranges == [(0, 19), (30, 39)]
    assert logs.gaps == [(20, 29)]
    assert logs.rows == 6
    assert len(logs.chunks) == 3
    assert [len(s) for s in logs.segments()] == [2, 1]  # 0..9 and 10..19 link by hash
    assert logs.nbytes == sum(p.stat().st_size for p in (out / "logs").glob("logs__*.parquet"))
    assert [p.name for p, _ in logs.foreign] == ["foreign.parquet"]
    assert len(logs.temporaries) == 1
    assert len(logs.problems) == 2
    assert infos[filtered].rows == 1
    assert infos[filtered].meta is not None
    assert infos[filtered].meta.filters == canonical_filters(FILTERS)
    blocks = infos["blocks"]
    assert blocks.meta is not None
    assert (blocks.meta.chain_id, blocks.ranges, blocks.gaps, blocks.rows, blocks.problems) == (5, [(0, 99)], [], 0, [])


def test_adjacent_chunks_that_do_not_link_are_a_problem(tmp_path: Path) -> None:
    _write(tmp_path, _logs(1), 0, 9)
    _write(tmp_path, _logs(12), 10, 19)  # its parent hash is not the first chunk's last hash
    logs = load_series(tmp_path / "logs")
    assert len(logs.broken_links()) == 1
    assert "do not link" in logs.problems[0]
    assert folder_info(tmp_path / "logs")["logs"].ranges == [(0, 19)]  # a series folder itself can be described


def test_format_info_is_a_short_report(out: Path) -> None:
    text = format_info(folder_info(out))
    assert "0..19, 30..39" in text
    assert "20..29" in text
    assert "foreign.parquet" in text
    assert '"address":"' + EMITTER + '"' in text  # filters in clear
    assert "MB" in text
    assert text.index("blocks  (") < text.index("logs  (")
    assert format_info({}) == ""


# --- chainframe info -----------------------------------------------------------------------------------------------


def _run_info(path: Path, *, as_json: bool = False) -> int:
    return _info.run(argparse.Namespace(dir=path, json=as_json, check=False, rpc=None, network=None))


def test_info_prints_the_report(out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run_info(out) == 0
    assert capsys.readouterr().out == format_info(folder_info(out))


def test_info_prints_json(out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run_info(out, as_json=True) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["logs"]["ranges"] == [[0, 19], [30, 39]]
    assert report["logs"]["gaps"] == [[20, 29]]
    assert report["logs"]["rows"] == 6
    assert report["blocks"]["chain_id"] == 5
    assert report[series_name("logs", FILTERS, "decimal")]["filters"] == canonical_filters(FILTERS)


def test_info_fails_clearly_without_datasets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run_info(tmp_path / "missing") == 1
    assert "does not exist" in capsys.readouterr().err
    assert _run_info(tmp_path) == 1
    assert "no chainframe datasets" in capsys.readouterr().err
    pq.write_table(_logs(1), tmp_path / "foreign.parquet")
    assert _run_info(tmp_path) == 1
    assert "none a complete chainframe chunk" in capsys.readouterr().err


def test_info_parser_has_help() -> None:
    parser = argparse.ArgumentParser(prog="chainframe")
    _info.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["info", "data", "--json"])
    assert (args.dir, args.json, args.run) == ("data", True, _info.run)


def test_chunk_writer_streams_pieces_into_full_row_groups(tmp_path: Path) -> None:
    pieces = [_logs(*range(i * 3, i * 3 + 3)) for i in range(4)]  # 12 rows in pieces of 3
    path = tmp_path / "logs" / "chunk.parquet"
    whole = pa.concat_tables(pieces)
    with ChunkWriter(path, pieces[0].schema, row_group_rows=5) as writer:
        for piece in pieces:
            writer.write(piece)
        assert not path.exists()  # nothing in place before the commit
        writer.commit(_meta(whole))
    footer = pq.read_metadata(path)
    assert [footer.row_group(i).num_rows for i in range(footer.num_row_groups)] == [5, 5, 2]
    assert read_meta(path) == _meta(whole)
    assert _read(path).equals(whole)
    assert _leftovers(path.parent) == []


def test_chunk_writer_left_on_an_error_keeps_the_old_file(tmp_path: Path) -> None:
    old = _logs(1)
    path = tmp_path / "logs" / "chunk.parquet"
    write_chunk(old, path, _meta(old))

    def fail_midway() -> None:
        with ChunkWriter(path, old.schema, row_group_rows=2) as writer:
            writer.write(_logs(1, 2, 3))  # a row group reached the temporary
            assert len(_leftovers(path.parent)) == 1
            raise RuntimeError("fetch failed")

    with pytest.raises(RuntimeError, match="fetch failed"):
        fail_midway()
    assert _leftovers(path.parent) == []
    assert _read(path).equals(old)


def test_chunk_writer_refuses_other_schemas_and_miscounted_metadata(tmp_path: Path) -> None:
    table = _logs(1, 2)
    path = tmp_path / "logs" / "chunk.parquet"
    with ChunkWriter(path, table.schema) as writer:
        with pytest.raises(ValueError, match="do not have the chunk's schema"):
            writer.write(table.drop_columns(["data"]))
        writer.write(table)
        with pytest.raises(ValueError, match="metadata says 3 rows but 2 were written"):
            writer.commit(_meta(table, rows=3))
    assert not path.parent.exists()  # held rows never reached a file


def test_locations_are_local_paths_or_s3_objects() -> None:
    assert location("data/out") == Path("data/out")
    root = location("s3://my-bucket//chains/dev/")
    assert root == ObjectPath("s3://my-bucket/chains/dev")
    assert isinstance(root, ObjectPath)
    chunk = root / "logs" / "logs__1__0000000000_to_0000000999.parquet"
    assert (chunk.bucket, chunk.key, chunk.path) == (
        "my-bucket", "chains/dev/logs/logs__1__0000000000_to_0000000999.parquet",
        "my-bucket/chains/dev/logs/logs__1__0000000000_to_0000000999.parquet",
    )  # fmt: skip
    assert (chunk.name, chunk.parent.name, str(chunk.parent.parent)) == (
        "logs__1__0000000000_to_0000000999.parquet", "logs", "s3://my-bucket/chains/dev"
    )  # fmt: skip
    assert location("s3://my-bucket").parent == location("s3://my-bucket")
    for bad in ("gs://bucket/x", "https://host/x"):
        with pytest.raises(InputError, match="no other URL scheme"):
            location(bad)
    for bad in ("s3://", "s3://UPPER/x", "s3://AKIA:hunter2secret@bucket/x"):
        with pytest.raises(InputError, match="valid bucket name") as refused:
            location(bad)
        assert "hunter2secret" not in str(refused.value)


def test_a_footer_is_read_from_the_tail_of_a_file_however_long_it_is(tmp_path: Path) -> None:
    table = _logs(1, 2)
    path = tmp_path / "logs" / "chunk.parquet"
    write_chunk(table, path, _meta(table))
    big = tmp_path / "big.parquet"
    pq.write_table(table.replace_schema_metadata({"padding": "x" * 3 * FOOTER_TAIL}), big)
    for file in (path, big):
        data = file.read_bytes()
        reads: list[int] = []

        def fetch(n: int, data: bytes = data, reads: list[int] = reads) -> bytes:
            reads.append(n)
            return data[-n:]

        footer = footer_from_tail(data[-FOOTER_TAIL:], fetch)
        assert footer is not None
        assert footer.num_rows == 2
        assert len(reads) == (1 if file == big else 0)  # a second read only for a footer longer than the tail
    data = big.read_bytes()
    assert footer_from_tail(data[-FOOTER_TAIL:], lambda n: data[-n:][:-1] + b"X") is None
    assert footer_from_tail(b"not parquet at all", lambda n: b"") is None
