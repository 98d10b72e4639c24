"""Verify what a folder holds, window by window: each stored file of ``blocks`` is a window, and the rows of the other
datasets in its blocks are read beside it (only the files that overlap it), so memory is bounded by a chunk, never by
the folder.

Offline, the plain series (those whose dataset's proof declares how a folder proves them,
:class:`~chainframe.datasets.Offline`: the headers, transactions, receipts, logs, uncles, the proofs) are proven
against the stored headers, and the series made of logs (filtered, decoded, token transfers) against the raw
logs proven so beside them: they must be exactly what their dataset makes of the logs their filter matches. Rows of
blocks whose header is not stored, series made of logs where no proven logs are stored, and every other series are
reported as skipped with the reason; ``rpc=`` proves every series against the node's headers instead
(:func:`chainframe.engine.verify_stored`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from chainframe import _kernels as pc
from chainframe.datasets import BLOCKS, DATASETS, LOGS, Fetch, Offline
from chainframe.families import ChainFamily, choose_family, family_named
from chainframe.verify._columns import integers
from chainframe.verify._derived import block_column
from chainframe.verify._report import Report
from chainframe.verify._rows import check_log_set

if TYPE_CHECKING:
    from chainframe.store import Series

_SLOT_NAME = re.compile(r"__(\d{10})_to_(\d{10})\.parquet$")


@dataclass(frozen=True)
class _File:
    path: Path
    low: int
    high: int
    """The blocks the file covers: from its chunk footer, else the span of its rows."""
    chain_id: int | None = None
    """The chain its footer names (None: no footer), which every row's ``chain_id`` must say."""
    family: ChainFamily | None = None
    """The chain family the user named (``--chain-family``) for its rows; None: the chain id's."""


def _files(folder: Path, dataset: str, chain_family: str | None = None) -> list[_File]:
    """The dataset's Parquet files with the blocks they cover (a chunk's footer says which blocks it holds, those
    without rows included; a file without one covers its slot's blocks, or else the span of its rows).
    ``chain_family``: the family the user named, refused (before any check) for a file of a chain of another."""
    from chainframe.store import read_meta  # deferred: the store (pyarrow.parquet, pyarrow.fs)

    named = family_named(chain_family) if chain_family is not None else None

    out = []
    column = block_column(dataset)
    for path in _stored(folder / dataset):
        meta = read_meta(path)
        if meta is not None:
            family = choose_family(meta.chain_id, chain_family)[0] if named is not None else None
            out.append(_File(path, meta.start, meta.end, meta.chain_id, family))
            continue
        slot = _SLOT_NAME.search(path.name)
        if slot is not None:  # footer gone (a tool rewrote the file): the blocks of its slot
            out.append(_File(path, int(slot.group(1)), int(slot.group(2)), family=named))
            continue
        numbers = _read(path, columns=[column])[column]
        if len(numbers) == 0:
            continue
        bounds = pc.min_max(numbers).as_py()
        out.append(_File(path, int(bounds["min"]), int(bounds["max"]), family=named))
    return out


def _stored(series: Path) -> list[Path]:
    """A series' files: a folder's ``*.parquet``, or a Delta table's files at its latest version (the files a commit
    removed stay on disk until vacuumed, and are not the table)."""
    from chainframe.store import is_delta_table, snapshot_uris  # deferred: the store (pyarrow.parquet, pyarrow.fs)

    if is_delta_table(series):
        return [Path(uri) for uri in snapshot_uris(series)]
    return sorted(series.glob("*.parquet"))


def _read(path: Path, columns: list[str] | None = None) -> pa.Table:
    """A Parquet file's rows, in chainframe's exact types (a Delta table's data file holds uint64 as int64)."""
    from chainframe.store import read_table  # deferred: the store (pyarrow.parquet, pyarrow.fs)

    return read_table(path, columns=columns)


def _rows(files: list[_File], dataset: str, low: int, high: int) -> pa.Table | None:
    column = block_column(dataset)
    tables = []
    for f in files:
        if f.high < low or f.low > high:
            continue
        tables.append(_within(_read(f.path), low, high, column))
    return pa.concat_tables(tables, promote_options="default") if tables else None


def _within(table: pa.Table, low: int, high: int, column: str = "block_number") -> pa.Table:
    """The rows of blocks ``low..high`` (all of them, without a copy, when they all are)."""
    numbers = table[column].combine_chunks()
    first, last = pc.constant(low, len(numbers), numbers.type), pc.constant(high, len(numbers), numbers.type)
    inside = pc.and_(pc.greater_equal(numbers, first), pc.less_equal(numbers, last))
    return table if pc.all(inside).as_py() is not False else pc.filter(table, inside)


def _covered(files: list[_File], low: int, high: int) -> set[int]:
    return {n for f in files for n in range(max(f.low, low), min(f.high, high) + 1)}


def offline() -> dict[str, Offline]:
    """The datasets a folder proves offline, by name (the headers' first), each with its proof's declaration of how:
    read from the catalogue (a dataset added with :func:`~chainframe.datasets.register` included) on every call."""
    found = {name: d.proof.offline for name, d in DATASETS.items() if d.proof is not None and d.proof.offline}
    return {BLOCKS.name: found.pop(BLOCKS.name), **found}


def _groups(declared: Mapping[str, Offline]) -> list[tuple[str, ...]]:
    """The tables checked together against the headers of the blocks they all cover (receipts' root needs their
    logs), as their datasets declare (the headers' own aside), in the catalogue's order."""
    groups: dict[tuple[str, ...], None] = {}
    for name, how in declared.items():
        if name != BLOCKS.name:
            groups[how.group or (name,)] = None
    return list(groups)


def _across(declared: Mapping[str, Offline]) -> set[str]:
    """The datasets one group proves of another's (receipts' transaction columns from the transactions)."""
    return {n for name, how in declared.items() if how.across for n in (name, how.across.dataset)}


def _verify_window(files: dict[str, list[_File]], window: _File, report: Report) -> None:
    """One blocks file's headers, and every other dataset's rows in its blocks, each group against the headers of
    just the blocks it covers (a block outside a series is not a block without transactions)."""
    declared = offline()
    across = _across(declared)
    blocks = _read(window.path)
    chain_id, family = window.chain_id, window.family
    declared[BLOCKS.name].run(blocks=blocks, report=report, chain_id=chain_id, family=family)
    if chain_id is None:
        report.skip(
            BLOCKS.name, "chain_id", "a blocks file without its chunk footer names no chain", blocks=blocks.num_rows
        )
    numbers = blocks["block_number"]
    kept: dict[str, pa.Table | None] = {}  # the window's transactions and receipts, for _across_groups: read once
    for group in _groups(declared):
        check = declared[group[0]]
        present = [name for name in group if _covered(files[name], window.low, window.high)]
        if not present:
            continue
        covered = set.intersection(*(_covered(files[name], window.low, window.high) for name in present))
        if len(present) < len(group) or covered:
            chosen = pc.filter(blocks, pc.is_in(numbers, value_set=integers(sorted(covered), numbers.type)))
            tables: dict[str, Any] = {name: _rows(files[name], name, window.low, window.high) for name in present}
            kept.update((name, tables[name]) for name in across if name in tables)
            check.run(blocks=chosen, report=report, headers=False, chain_id=chain_id, family=family, **tables)
        for name in present:  # blocks one dataset of the group covers and the other does not: checked alone
            alone = _covered(files[name], window.low, window.high) - covered
            if alone and len(present) > 1:
                chosen = pc.filter(blocks, pc.is_in(numbers, value_set=integers(sorted(alone), numbers.type)))
                rows = _rows(files[name], name, min(alone), max(alone))
                given: dict[str, Any] = {name: rows}  # the group check's keyword for its dataset's rows
                check.run(blocks=chosen, report=report, headers=False, chain_id=chain_id, family=family, **given)
    _across_groups(files, window, blocks, report, kept)


def _across_groups(
    files: dict[str, list[_File]], window: _File, blocks: pa.Table, report: Report, kept: dict[str, pa.Table | None]
) -> None:
    """What one group proves of another (receipts' transaction columns from the proven transactions), checked where
    both cover a block, and the block's lists of hashes from the rows that prove them (its transactions', its
    uncles'); what nothing covers is skipped."""
    numbers = blocks["block_number"]
    declared = offline()
    for name, how in declared.items():
        if how.across is None:
            continue
        other = how.across.dataset
        covered = {n: _covered(files[n], window.low, window.high) for n in (name, other)}
        both = covered[name] & covered[other]
        if both:
            chosen = pc.filter(blocks, pc.is_in(numbers, value_set=integers(sorted(both), numbers.type)))
            low, high = min(both), max(both)
            tables = {
                n: _rows(files[n], n, low, high) if kept.get(n) is None else _within(kept[n], low, high)
                for n in (name, other)
            }
            if all(table is not None for table in tables.values()):
                how.across.run(blocks=chosen, report=report, chain_id=window.chain_id, family=window.family,
                               **tables)  # fmt: skip
        report.skip(name, how.across.name, how.across.skipped, blocks=len(covered[name] - covered[other]))
    stored = {name: _covered(files[name], window.low, window.high) for name, how in declared.items() if how.lists}
    skip_unproven_lists(blocks, stored, report)


def skip_unproven_lists(blocks: pa.Table, stored: Mapping[str, set[int]], report: Report) -> None:
    """Report as skipped the lists :func:`unproven_lists` finds, each with why its dataset declares."""
    declared = offline()
    for name, (check, unproven) in unproven_lists(blocks, stored).items():
        listed = declared[name].lists
        assert listed is not None  # unproven_lists gives the declared lists only
        report.skip(BLOCKS.name, check, listed.skipped, blocks=len(unproven))


def unproven_lists(blocks: pa.Table, stored: Mapping[str, set[int]]) -> dict[str, tuple[str, set[int]]]:
    """A block's lists of hashes no header field holds (of its transactions, of its uncles) are proven against the
    rows of the dataset that declares it proves them only: by that dataset, the check and the blocks that have such a
    list not proven so (``stored``: by dataset, the blocks whose lists were; a dataset not named: none)."""
    lists = {name: how.lists for name, how in offline().items() if how.lists is not None}
    rows = blocks.select(["block_number", *dict.fromkeys(listed.column for listed in lists.values())]).to_pylist()
    found = {}
    for name, listed in lists.items():
        having = {r["block_number"] for r in rows if r[listed.column] not in listed.none}
        found[name] = (listed.check, having - set(stored.get(name, ())))
    return found


def together_reads() -> dict[str, tuple[str, ...]]:
    """The plain series a folder proves of itself, each where the series its proof reads are stored over the same
    blocks (then ``verify DIR --rpc`` needs nothing of the node for them but its block hashes), as their datasets
    declare (:attr:`Offline.together <chainframe.datasets.Offline.together>`): by series, the series it needs."""
    return {name: how.together for name, how in offline().items() if how.together is not None}


def prove_together(
    folder: str | Path, series: Collection[str] | None = None, *, leave: Collection[int] = (),
    chain_family: str | None = None,
) -> tuple[Report, dict[str, set[int]]]:  # fmt: skip
    """Prove ``series`` (of :func:`together_reads`'s; None: all of them) in ``folder`` against its stored headers,
    each in the blocks where every series its proof reads is stored too, but those of ``leave``: the report, and the
    blocks each series was proven in (its headers are the stored ones: whether they are a node's is for the caller
    to compare). ``chain_family``: the family the user named (None: each file's chain id's)."""
    folder = Path(folder)
    report = Report()
    declared, needs = offline(), together_reads()
    series = tuple(needs) if series is None else series
    files = {name: _files(folder, name, chain_family) if name in series else [] for name in needs}
    proven: dict[str, set[int]] = {name: set() for name in series}
    groups = [g for g in _groups(declared) if all(name in needs for name in g)]
    for window in files[BLOCKS.name]:
        covered = {name: _covered(files[name], window.low, window.high) - set(leave) for name in needs}
        if not covered[BLOCKS.name]:
            continue
        whole = {name: covered[name].intersection(*(covered[n] for n in needs[name])) for name in proven}
        stored = _read(window.path)

        def headers(of: set[int], stored: pa.Table = stored) -> pa.Table:
            return _of_blocks(stored, "block_number", of)

        def rows(name: str, of: set[int]) -> pa.Table:
            table = _rows(files[name], name, min(of), max(of))
            assert table is not None  # the blocks are covered
            return _of_blocks(table, block_column(name), of)

        chain_id, family = window.chain_id, window.family
        blocks = headers(covered[BLOCKS.name])
        declared[BLOCKS.name].run(blocks=blocks, report=report, chain_id=chain_id, family=family)
        if chain_id is None:
            report.skip(BLOCKS.name, "chain_id", "a blocks file without its chunk footer names no chain",
                        blocks=blocks.num_rows)  # fmt: skip
        proven[BLOCKS.name] |= covered[BLOCKS.name]
        for group in groups:  # in the catalogue's order: what a group reads of another's is proven by then
            if not all(name in whole for name in group):
                continue
            mine = set.intersection(*(whole[name] for name in group))
            if not mine:
                continue
            read = sorted({n for name in group for n in needs[name]} - {*group, BLOCKS.name})  # proven already
            tables = {name: rows(name, mine) for name in (*group, *read)}
            declared[group[0]].run(blocks=headers(mine), report=report, headers=False, chain_id=chain_id,
                                   proven=frozenset(read), family=family, **tables)  # fmt: skip
            for name in group:
                proven[name] |= mine
    return report, proven


def _of_blocks(table: pa.Table, column: str, blocks: set[int]) -> pa.Table:
    numbers = table[column]
    return pc.filter(table, pc.is_in(numbers, value_set=integers(sorted(blocks), numbers.type)))


def read_folder(folder: Path, dataset: str) -> pa.Table | None:
    """The rows of one plain dataset under ``folder`` (all of them: for small folders and tests), or None."""
    files = _stored(folder / dataset)
    if not files:
        return None
    return pa.concat_tables([_read(f) for f in files], promote_options="default")


def _headerless(files: Mapping[str, list[_File]], report: Report) -> None:
    """Blocks a series covers with no stored header are not proven: say so, per dataset."""
    stored = {n for f in files[BLOCKS.name] for n in range(f.low, f.high + 1)}
    if not stored:
        return  # verify_tables already reported every check that needs headers as skipped
    for name in files:
        if name == BLOCKS.name:
            continue
        missing = {n for f in files[name] for n in range(f.low, f.high + 1)} - stored
        report.skip(name, "against headers", "no stored header for these blocks (extract blocks over them)",
                    blocks=len(missing))  # fmt: skip


NOT_FROM_LOGS = "a filtered or decoded series: verify it with --rpc against the node"
NO_PROVEN_LOGS = (
    "no proven logs stored for these blocks (the logs series with its receipts, transactions and blocks): verify it "
    "with --rpc against the node"
)


def _other_series(folder: Path, files: Mapping[str, list[_File]], report: Report) -> None:
    """The series made of logs (filtered, decoded, token transfers) proven offline from the raw logs stored beside
    them, in the blocks where those are proven (:func:`together_reads`'s logs: with their receipts, transactions and
    headers); the rest, and every other series, reported as skipped."""
    from chainframe.store import load_series, series_folders  # deferred: the store (pyarrow.parquet, pyarrow.fs)

    logs = _proven_logs(files)
    for path in series_folders(folder):
        if path.name in files:
            continue
        series = load_series(path)
        dataset = DATASETS.get(series.dataset)
        blocks = sum(c.meta.end - c.meta.start + 1 for c in series.chunks)
        if dataset is None or dataset.fetched is not Fetch.LOGS or series.damaged or series.foreign:
            report.skip(path.name, "all", NOT_FROM_LOGS, blocks=blocks)
            continue
        proven = prove_from_logs(folder, series, logs, report, name=path.name)
        report.skip(path.name, "all", NO_PROVEN_LOGS, blocks=blocks - len(proven))


def prove_from_logs(folder: Path, series: Series, logs: Collection[int], report: Report, *, name: str) -> set[int]:
    """A series made of logs (filtered, decoded, token transfers) under ``folder``, proven in the blocks of ``logs``
    (whose raw logs stored in ``folder`` are proven) from those logs: each chunk's rows there must be exactly what its
    dataset makes of the raw logs its filter matches (``log_set``, added to ``report`` as series ``name``). Returns
    the blocks proven so."""
    dataset = DATASETS[series.dataset]
    raw_files = _files(folder, LOGS.name)
    done: set[int] = set()
    for chunk in series.chunks:
        meta = chunk.meta
        proven = {n for n in range(meta.start, meta.end + 1) if n in logs}
        if not proven:
            continue
        assert isinstance(chunk.path, Path)  # a folder's (proving from stored logs reads no bucket)
        rows = _of_blocks(_read(chunk.path), "block_number", proven)
        raw = _rows(raw_files, LOGS.name, min(proven), max(proven))
        assert raw is not None  # the blocks are covered
        check_log_set(dataset, rows, _of_blocks(raw, "block_number", proven), meta.filters, report,
                      u256=meta.u256, name=name)  # fmt: skip
        report.count(name, blocks=len(proven), rows=rows.num_rows)
        done |= proven
    return done


def _proven_logs(files: Mapping[str, list[_File]]) -> set[int]:
    """The blocks whose raw logs the folder proves: stored with what their proof reads (:func:`together_reads`)."""
    proven: set[int] = set()
    for window in files[BLOCKS.name]:
        covered = [_covered(files[name], window.low, window.high) for name in (LOGS.name, *together_reads()[LOGS.name])]
        proven |= set.intersection(*covered)
    return proven


def verify_folder(folder: str | Path, *, chain_family: str | None = None) -> Report:
    """Verify what ``folder`` holds, offline: the plain series against the stored headers, the series made of logs
    against the raw logs proven so. Against a node's headers (every series, and receipts for logs) it is
    :func:`chainframe.engine.verify_stored`, a run of the engine's. ``chain_family``: read the rows as this chain
    family's (``--chain-family``; a family the files' chain id denies is refused before any check) instead of the
    one their chain id names (Ethereum's for a chain no family knows)."""
    folder = Path(folder)
    report = Report()
    declared = offline()
    files = {name: _files(folder, name, chain_family) for name in declared}
    if files[BLOCKS.name]:
        for window in files[BLOCKS.name]:
            _verify_window(files, window, report)
    else:  # no headers: each file alone, its checks reported as skipped
        for name, how in declared.items():
            for f in files[name] if name != BLOCKS.name else ():
                how.run(**{name: _read(f.path)}, report=report)
    _headerless(files, report)
    _other_series(folder, files, report)
    return report
