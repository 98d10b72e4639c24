"""``verify DIR --rpc``: a folder's series proven against the node.

A stored header hashes to its block hash (every field of it is what that hash names), so a folder whose headers are
the node's needs nothing more of the node for what it proves of itself. In a local folder, the plain series prove
each other offline where they are stored over the same blocks (:func:`chainframe.verify.prove_together`: the
transactions by their root and signatures, the receipts' root with the logs, and so on, against the stored headers),
and the stored headers' hashes are compared with the node's: only those are asked. The series made of logs (filtered,
decoded, token transfers) are then proven from the raw logs proven so, as offline (:func:`chainframe.verify.
prove_from_logs`). A block where the plain series' proof fails is proven against the node's material instead, whose
failures name the rows that differ. Everything else (proofs and state, a series stored without what its proof reads,
blocks whose raw logs are not proven in the folder, a bucket, a damaged file) is proven in pieces against material
fetched from the node (:mod:`chainframe.engine._verified`), as an extraction proves what it fetched alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import numpy as np
import pyarrow as pa

from chainframe import _kernels as pc
from chainframe._errors import InputError
from chainframe._kernels import constant
from chainframe.datasets import BLOCKS, DATASETS, LOGS, BlockRange, Fetch
from chainframe.engine._canonical import headers
from chainframe.engine._logs import sort_table
from chainframe.engine._verified import Rows, material, prove
from chainframe.families import ChainFamily, choose_family
from chainframe.store import ChunkMeta, Location, Series, load_series, read_table, series_folders

if TYPE_CHECKING:
    from chainframe.verify import Report

HASHES_ASKED = 500
"""Headers asked of the node in one batch, to compare their hashes with the stored ones."""


async def averify_stored(
    folder: Location, client: Any, *, piece_blocks: int = 100, chain_family: str | None = None
) -> Report:
    """Prove every series under ``folder`` against the node behind ``client`` (see the module): stored files proven
    against fetched material in pieces of ``piece_blocks`` blocks (memory bounded by a piece), every failure
    collected rather than raised. ``chain_family``: the family the user named (``--chain-family``), refused once the
    chain id is known if it denies it, before any block is asked for; None: the chain id's."""
    from chainframe.verify import Failure, Report  # deferred: the verify wing (chainframe.verify), only when verifying

    report = Report()
    chain_id = await client.chain_id()
    family = choose_family(chain_id, chain_family)[0]
    every: dict[str, Series] = {path.name: load_series(path) for path in series_folders(folder)}
    for series in every.values():
        for chunk in series.chunks:
            if chunk.meta.chain_id != chain_id:
                raise InputError(f"{chunk.path} is of chain {chunk.meta.chain_id}; the node serves chain {chain_id}")
    together = await _together(folder, every, client, report, chain_family)
    await _from_logs(folder, every, together, report)

    async def prove_file(name: str, meta: ChunkMeta, table: pa.Table, proven: set[int]) -> None:
        spec = DATASETS[meta.dataset]
        for part in _unproven(BlockRange(meta.start, meta.end), proven, piece_blocks):
            rows = _within(table, spec.block_column, part)
            if spec.selects(meta.filters):  # some of the raw rows (function=): the node's are proven, then kept so
                raw = spec.transform(await spec.fetch(client, part, **meta.filters), chain_id=chain_id, u256=meta.u256)
                proof = await material(client, spec, part, stored=raw, filters=meta.filters)
                prove(Rows(spec, raw, part, meta.filters, meta.u256, name), proof, chain_id=chain_id, report=report,
                      family=family)  # fmt: skip
                kept = spec.kept_rows(sort_table(raw, spec.sort), meta.filters, u256=meta.u256)
                _same_rows(rows, kept, report, name, spec.block_column)
                continue
            proof = await material(client, spec, part, stored=rows, filters=meta.filters)
            prove(Rows(spec, rows, part, meta.filters, meta.u256, name), proof, chain_id=chain_id, report=report,
                  family=family)  # fmt: skip
            if spec is BLOCKS:  # the rows are headers: proven to be themselves, and here to be the node's
                await _same_hashes(client, rows, report, name)

    for name, series in every.items():
        proven = together.get(name, set())
        for chunk in series.chunks:
            if not all(n in proven for n in range(chunk.meta.start, chunk.meta.end + 1)):
                await prove_file(name, chunk.meta, await anyio.to_thread.run_sync(read_table, chunk.path), proven)
        for bad, why in series.foreign:
            report.skip(name, "file", f"{bad.name}: {why}", blocks=1)
        for slot_start, bad in series.damaged:
            edited = await anyio.to_thread.run_sync(_edited, bad, series.dataset, chain_id)
            if edited is None:  # nothing to read the rows from: the blocks it was written for are unproven
                blocks = _blocks_named(bad.name) or f"from {slot_start}"
                stored = f"{bad.name}: not a complete chunk file"
                unproven = f"blocks {blocks} unproven: extract them again"
                report.failures.append(Failure(name, slot_start, "chunk_file", stored, unproven))
                continue
            # Rows removed or added after writing (the footer's count disagrees): prove what is there, so the
            # failures name the blocks and rows that differ from the chain.
            meta, table = edited
            stored = f"{table.num_rows:,} rows in {bad.name}"
            written = f"{meta.rows:,} rows written for blocks {meta.start}..{meta.end}"
            report.failures.append(Failure(name, meta.start, "chunk_file", stored, written))
            await prove_file(name, meta, table, set())
    if BLOCKS.name in every:  # last: the headers the lists are proven against have been compared with the node's
        for chunk in every[BLOCKS.name].chunks:
            rows = await anyio.to_thread.run_sync(read_table, chunk.path)
            await _lists(client, rows, together, report, chain_id=chain_id, piece_blocks=piece_blocks, family=family)
    return report


async def _together(
    folder: Location, every: dict[str, Series], client: Any, report: Report, chain_family: str | None = None
) -> dict[str, set[int]]:
    """What a local folder's plain series prove of each other, offline (added to ``report``), with the stored
    headers' hashes compared with the node's: the blocks each series is proven in so."""
    # deferred: the verify wing (chainframe.verify), only when verifying
    from chainframe.verify import prove_together, together_reads

    whole = [name for name in together_reads() if name in every and not every[name].damaged and not every[name].foreign]
    if not isinstance(folder, Path) or BLOCKS.name not in whole:
        return {}
    together = partial(prove_together, folder, whole, chain_family=chain_family)
    found, proven = await anyio.to_thread.run_sync(together)
    if found.failures:  # those blocks proven against the node's material instead: its failures name the rows
        leave = {f.block_number for f in found.failures}
        found, proven = await anyio.to_thread.run_sync(partial(together, leave=leave))
    for name, blocks in found.blocks_verified.items():
        report.count(name, blocks=blocks, rows=found.rows_verified.get(name, 0))
    report.failures.extend(found.failures)
    for skip in found.skipped:
        report.skip(skip.dataset, skip.check, skip.reason, blocks=skip.blocks)
    for (dataset, what), blocks in found.notes.items():
        report.note(dataset, what, blocks=blocks)
    mine = proven[BLOCKS.name]
    for chunk in every[BLOCKS.name].chunks:
        if any(n in mine for n in range(chunk.meta.start, chunk.meta.end + 1)):
            rows = await anyio.to_thread.run_sync(read_table, chunk.path)
            numbers = rows["block_number"]
            wanted = pa.array(np.fromiter(sorted(mine), np.int64, len(mine))).cast(numbers.type)
            rows = pc.filter(rows, pc.is_in(numbers, value_set=wanted))
            await _same_hashes(client, rows, report, BLOCKS.name)  # the others' are compared where they are proven
    return proven


async def _from_logs(folder: Location, every: dict[str, Series], together: dict[str, set[int]], report: Report) -> None:
    """The series made of logs (filtered, decoded, token transfers), proven in the blocks where the folder's raw logs
    were proven with the others (:func:`_together`) from those logs, as offline: added to ``together``."""
    # deferred: the verify wing (chainframe.verify), only when verifying
    from chainframe.verify import prove_from_logs, together_reads

    logs = together.get(LOGS.name)
    if not logs or not isinstance(folder, Path):
        return
    for name, series in every.items():
        dataset = DATASETS.get(series.dataset)
        if name in together_reads() or dataset is None or dataset.fetched is not Fetch.LOGS:
            continue
        together[name] = await anyio.to_thread.run_sync(partial(prove_from_logs, folder, series, logs, report,
                                                                name=name))  # fmt: skip


async def _same_hashes(client: Any, rows: pa.Table, report: Report, name: str) -> None:
    """Each stored header's hash is the node's for its block (the header proven to be itself, it is the node's)."""
    from chainframe.verify import Failure  # deferred: the verify wing (chainframe.verify), only when verifying

    stored = dict(zip(rows["block_number"].to_pylist(), rows["block_hash"].to_pylist(), strict=True))
    numbers = sorted(n for n in stored if n is not None)
    for at in range(0, len(numbers), HASHES_ASKED):
        nodes = await headers(client, numbers[at : at + HASHES_ASKED])
        for number in numbers[at : at + HASHES_ASKED]:
            node, mine = nodes.get(number), stored[number]
            if node is None or node.hash != mine:
                theirs = f"the node has no block {number}" if node is None else f"the node's: 0x{node.hash.hex()}"
                report.failures.append(Failure(name, number, "block_hash", "0x" + (mine or b"").hex(), theirs))


async def _lists(
    client: Any, blocks: pa.Table, listed: Mapping[str, set[int]], report: Report, *, chain_id: int,
    piece_blocks: int, family: ChainFamily,
) -> None:  # fmt: skip
    """The stored blocks' lists of transaction and uncle hashes that the folder does not prove (its transactions or
    uncles are not stored beside them), against the node's transactions and uncles of the block, which are proven
    against the header (whose hash is compared with the node's where the header is proven)."""
    # deferred: the verify wing (chainframe.verify), only when verifying
    from chainframe.verify import Report, unproven_lists, verify_tables

    wrong = {f.block_number for f in report.failures if f.dataset == BLOCKS.name}  # not the node's (or not itself)
    for name, (check, unproven) in unproven_lists(blocks, listed).items():
        dataset, wanted = DATASETS[name], unproven - wrong
        if not wanted:
            continue
        span = BlockRange(min(wanted), max(wanted))
        for part in _unproven(span, set(range(span.start, span.end + 1)) - wanted, piece_blocks):
            headers_of = _within(blocks, "block_number", part)
            fetched = dataset.transform(await dataset.fetch(client, part), chain_id=chain_id, u256="binary")
            if "from_address" in fetched.column_names:  # their root proves their hashes: no sender is needed
                fetched = fetched.drop_columns(["from_address"])
            found = Report()  # the node's rows are not the folder's: only what they show of the blocks is kept
            verify_tables(blocks=headers_of, report=found, headers=False, chain_id=chain_id, family=family,
                          **{dataset.name: fetched})  # fmt: skip
            report.failures.extend(f for f in found.failures if f.dataset == BLOCKS.name)
            why = f"the node's {dataset.name} of these blocks do not prove against their headers"
            report.skip(BLOCKS.name, check, why, blocks=len({f.block_number for f in found.failures
                                                             if f.dataset != BLOCKS.name}))  # fmt: skip


def _same_rows(stored: pa.Table, kept: pa.Table, report: Report, name: str, column: str) -> None:
    """A series' stored rows against the rows its filter keeps of the node's proven raw rows, block by block."""
    from chainframe.verify import Failure  # deferred: the verify wing (chainframe.verify), only when verifying

    mine: dict[int, list[dict[str, Any]]] = {}
    theirs: dict[int, list[dict[str, Any]]] = {}
    for rows, by_block in ((stored.select(kept.column_names), mine), (kept, theirs)):
        for row in rows.to_pylist():
            by_block.setdefault(row[column], []).append(row)
    for number in sorted(mine.keys() | theirs.keys()):
        a, b = mine.get(number, []), theirs.get(number, [])
        if a != b:
            said = f"{len(a)} rows"
            if len(a) == len(b):
                row, x, y = next((i, x, y) for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
                said += f", row {row}'s {next(c for c in x if x[c] != y[c])} differs"
            report.failures.append(Failure(name, number, "rows", said, f"{len(b)} rows kept of the node's proven rows"))


def _within(table: pa.Table, column: str, part: BlockRange) -> pa.Table:
    """The rows of ``table`` in the blocks of ``part``."""
    numbers = table[column].combine_chunks()
    first = constant(part.start, len(numbers), numbers.type)  # not a Python number: that loads pandas
    last = constant(part.end, len(numbers), numbers.type)
    return pc.filter(table, pc.and_(pc.greater_equal(numbers, first), pc.less_equal(numbers, last)))


def _unproven(blocks: BlockRange, proven: set[int], size: int) -> Iterator[BlockRange]:
    """The parts of ``blocks`` outside ``proven``, each of at most ``size`` blocks."""
    start = None
    for number in range(blocks.start, blocks.end + 2):
        inside = number <= blocks.end and number not in proven
        if inside and start is None:
            start = number
        if start is not None and (not inside or number - start == size):
            yield BlockRange(start, number - 1)
            start = number if inside else None


def _edited(path: Location, dataset: str, chain_id: int) -> tuple[ChunkMeta, pa.Table] | None:
    """A damaged chunk that is whole Parquet with our footer, its row count changed since (a tool deleted or added
    rows in place): its footer's metadata and rows. None when it cannot be read so."""
    try:
        rows = read_table(path)
    except (OSError, ValueError, pa.ArrowException):
        return None
    meta = ChunkMeta.from_metadata(rows.schema.metadata)
    if meta is None or meta.dataset != dataset or meta.chain_id != chain_id:
        return None
    return meta, rows


def _blocks_named(name: str) -> str | None:
    """The blocks a chunk file's name says it holds (``..._0000000100_to_0000000199.parquet``)."""
    found = re.search(r"__(\d{10})_to_(\d{10})", name)
    return f"{int(found.group(1))}..{int(found.group(2))}" if found else None
