"""A verifying run's datasets proven together: the headers, transactions, receipts and logs one run reads of the same
blocks are each other's proof, as a folder's are to ``chainframe verify`` offline.

Extracted alone, a dataset proves each piece against material fetched for it (:mod:`chainframe.engine._verified`):
the receipts' proof reads the blocks' headers and bodies, the logs' proof their headers and receipts, and each
transforms and proves them again. Extracted together, that material is the run's own rows. So the chunks of one slot
that a round fetches over the same blocks for ``blocks``, and for transactions, receipts and (unfiltered) logs whose
proof material is among them, are a :class:`Group`, which:

- takes each piece's rows once they are decoded and checked as an answer, as they are written (to a file nobody reads
  before it is published);
- proves them in parts, as offline verify's groups: the headers by their hashes; the transactions; the receipts with
  their logs (the root); what the receipts say of their transactions. Each part proves a window of blocks as soon as
  its own tables have come that far, in a decode thread while the run fetches on: the slowest member holds back only
  the parts that read it;
- lets a member publish only once every part has proven every block: the member waits at its commit, having given
  back its place among the fetching tasks (:class:`chainframe.engine._engine.Place`), so that others fetch meanwhile.

A group that fails a check, or loses a member (a reorganization, an error, a cancel), proves nothing: each member
raises :class:`Unproven`, fetches its chunk again and proves it piece by piece against fetched material, with the
retries and the one typed error (naming method, blocks, endpoint and check) of any answer.

A slot's members whose proofs read a dataset the run does not extract (receipts and logs without the blocks and
transactions) are given its rows by a *lent* task: the missing dataset's chunk, fetched and handed to the group as a
member's, never written (:meth:`Joint.lent`). What the members' pieces alone would fetch as material is then read
once, and proven once, for all of them.

Members wait for each other, never while fetching: a round hands its tasks out in order, slot by slot, and a waiting
member holds only its place among the tasks begun; a group is made only where those places can hold all its members,
so the members of the earliest unfinished group are all begun, and it finishes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import pyarrow as pa

from chainframe.datasets import BLOCKS, DATASETS, LOGS, RECEIPTS, TRANSACTIONS, BlockRange, Dataset
from chainframe.engine._plan import ChunkTask
from chainframe.engine._verified import Proven

if TYPE_CHECKING:
    from chainframe.families import ChainFamily
    from chainframe.verify import Report


def needs() -> dict[Dataset, tuple[Dataset, ...]]:
    """The datasets that can be proven together (a member's table is its ``verify_tables`` keyword: its name), each
    with those whose rows its proof reads, as the proof declares it (the receipts: the blocks and transactions, their
    root being rebuilt with their own logs; the logs: the blocks and receipts)."""
    return {d: d.proof.read(d) if d.proof is not None else () for d in (BLOCKS, TRANSACTIONS, RECEIPTS, LOGS)}


WINDOW = 250
"""Blocks proven at once, at least (but the slot's last): each proof's fixed costs against the wait at the end."""


class Unproven(Exception):
    """The group a chunk was in proved nothing (a check failed, or a member was lost): the chunk is fetched again and
    proven piece by piece."""


@dataclass
class _Table:
    """One table's rows given to a group and not yet proven by every part that reads them."""

    pieces: dict[int, tuple[int, pa.Table]] = field(default_factory=dict)
    """First block -> (last block, rows sorted by block)."""
    through: int = -1
    """The last block given without a gap (from the group's first)."""


@dataclass
class _Part:
    """One proof of the group's: the tables it reads, and the blocks it has proven."""

    reads: tuple[str, ...]
    proven_through: int


class Group:
    """The members of one slot proven together (see the module)."""

    def __init__(
        self, names: Sequence[str], blocks: BlockRange, *, chain_id: int, own_logs: bool, lent: Sequence[str] = (),
        family: ChainFamily | None = None,
    ) -> None:  # fmt: skip
        """``names``: every member's table, the lent ones (``lent``: read only to prove the others) among them.
        ``family``: the chain family whose rules the rows follow (None: the chain id's)."""
        self.blocks = blocks
        self.chain_id = chain_id
        self.family = family
        self.own_logs = own_logs
        """The receipts give their own logs (no logs member): the receipts root is rebuilt from them."""
        self.names = list(names)
        self._rows = dict.fromkeys(names, 0)
        self._parts = [_Part(reads, blocks.start - 1) for reads in _parts(set(names), set(lent))]
        self._tables = {name: _Table(through=blocks.start - 1) for part in self._parts for name in part.reads}
        self._report: Report | None = None
        self._broken: str | None = None
        self._given = anyio.Event()
        self._done = anyio.Event()

    def give(self, name: str, part: BlockRange, tables: Mapping[str, pa.Table]) -> None:
        """Member ``name``'s rows of blocks ``part`` (its own table, and the receipts' own logs where asked)."""
        if self._broken is not None:
            raise Unproven(self._broken)
        if part.start < self.blocks.start or part.end > self.blocks.end:
            self.abandon(f"{name} gave blocks {part.start}..{part.end}, outside {self.blocks.start}..{self.blocks.end}")
            raise Unproven(self._broken)
        self._rows[name] += tables[name].num_rows
        for key, rows in tables.items():
            table = self._tables[key]
            table.pieces[part.start] = (part.end, rows)
            while table.through + 1 in table.pieces:
                table.through = table.pieces[table.through + 1][0]
        self._given.set()

    def abandon(self, why: str) -> None:
        """A member's attempt ended before the group was proven: nobody publishes what the group holds."""
        if self._broken is None and not self._done.is_set():
            self._broken = why
            self._tables.clear()  # what was given is not needed any more
        self._done.set()
        self._given.set()

    def beside(self, name: str, bodies: Sequence[bytes]) -> dict[str, pa.Table]:
        """What member ``name`` gives beside its rows, from its answers: the receipts' own logs where no logs member
        gives them (in a decode thread)."""
        if not (self.own_logs and name == RECEIPTS.name):
            return {}
        # deferred: the verify wing (chainframe.verify), only when verifying
        from chainframe.verify import receipts_and_logs

        return {LOGS.name: receipts_and_logs(bodies, chain_id=self.chain_id)[1]}

    async def proven(self, name: str) -> Proven:
        """Wait until every block of the group is proven: member ``name``'s counts; :class:`Unproven` if the group
        failed or lost a member."""
        await self._done.wait()
        if self._broken is not None:
            raise Unproven(self._broken)
        assert self._report is not None
        return _counts(self._report, name, blocks=len(self.blocks), rows=self._rows[name])

    async def prove(self, decode: Any) -> None:
        """Prove each part's windows as the members give their rows, until every part has proven every block or the
        group is broken."""
        from chainframe.verify import Report  # deferred: the verify wing (chainframe.verify), only when verifying

        report = Report()
        while not self._done.is_set():
            await self._given.wait()
            self._given = anyio.Event()
            for part in self._parts:
                if self._done.is_set():  # broken meanwhile
                    return
                through = min(self._tables[name].through for name in part.reads)
                low = part.proven_through + 1
                if through < low or (through - low + 1 < WINDOW and through < self.blocks.end):
                    continue
                window = BlockRange(low, through)
                tables = {name: _rows(self._tables[name], window) for name in part.reads}
                found = await anyio.to_thread.run_sync(_prove, tables, self.chain_id, self.family, limiter=decode)
                if self._done.is_set():
                    return
                if found.failures:
                    first = found.failures[0]
                    self.abandon(f"block {first.block_number}: {first.dataset} {first.check}")
                    return
                _add(report, found)
                part.proven_through = through
                self._forget()
            if all(part.proven_through == self.blocks.end for part in self._parts):
                self._report = report
                self._done.set()

    def _forget(self) -> None:
        """Drop the pieces every part that reads them has proven."""
        for name, table in self._tables.items():
            done = min(part.proven_through for part in self._parts if name in part.reads)
            for start in [s for s, (end, _) in table.pieces.items() if end <= done]:
                del table.pieces[start]


def _depth(dataset: Dataset, wants: Mapping[Dataset, tuple[Dataset, ...]]) -> set[Dataset]:
    """Every dataset whose rows ``dataset``'s proof reads (``wants``: :func:`needs`), through the others'."""
    found: set[Dataset] = set()
    for need in wants[dataset]:
        found |= {need, *_depth(need, wants)}
    return found


def _parts(names: set[str], lent: set[str]) -> list[tuple[str, ...]]:
    """The proofs of a group of ``names``, each over the tables it reads (as offline verify's groups): each can go
    as far as its own tables have come, so the slowest member holds back only the proofs that read it. What lent
    receipts say of their transactions is not kept, so not proven."""
    headers, receipts = BLOCKS.name, RECEIPTS.name
    parts: list[tuple[str, ...]] = [(headers,)]
    if TRANSACTIONS.name in names:
        parts.append((headers, TRANSACTIONS.name))
    if receipts in names:
        parts.append((headers, receipts, LOGS.name))  # the root, with the logs member's logs or the receipts' own
        if TRANSACTIONS.name in names and receipts not in lent:
            parts.append((headers, receipts, TRANSACTIONS.name))
    return parts


def _rows(table: _Table, window: BlockRange) -> pa.Table:
    """The rows of ``window`` among ``table``'s pieces (views, not copies)."""
    parts = []
    for start in sorted(s for s, (end, _) in table.pieces.items() if s <= window.end and end >= window.start):
        end, rows = table.pieces[start]
        if start < window.start:
            rows = rows.slice(_first_after(rows, window.start - 1))
        if end > window.end:
            rows = rows.slice(0, _first_after(rows, window.end))
        parts.append(rows)
    return pa.concat_tables(parts) if len(parts) > 1 else parts[0]


def _first_after(table: pa.Table, block: int) -> int:
    """Where the rows of blocks after ``block`` start in ``table`` (sorted by block)."""
    import numpy as np

    return int(np.searchsorted(table["block_number"].to_numpy(), block, side="right"))


def _prove(tables: dict[str, Any], chain_id: int, family: ChainFamily | None = None) -> Report:
    """One part's window: the headers by their hashes, or the other tables against them."""
    # deferred: the verify wing (chainframe.verify), only when verifying
    from chainframe.verify import Report, check_receipts_from_transactions, verify_tables

    report = Report()
    headers = tables.pop(BLOCKS.name)
    if not tables:
        verify_tables(blocks=headers, report=report, chain_id=chain_id, family=family)
    elif set(tables) == {RECEIPTS.name, TRANSACTIONS.name}:  # what the receipts say of their transactions
        check_receipts_from_transactions(tables[RECEIPTS.name], tables[TRANSACTIONS.name], headers, report,
                                         chain_id=chain_id, family=family)  # fmt: skip
    else:
        verify_tables(blocks=headers, report=report, headers=False, chain_id=chain_id, family=family, **tables)
    return report


def _add(report: Report, found: Report) -> None:
    for skip in found.skipped:
        report.skip(skip.dataset, skip.check, skip.reason, blocks=skip.blocks)
    for (dataset, what), blocks in found.notes.items():
        report.note(dataset, what, blocks=blocks)


def _counts(report: Report, name: str, *, blocks: int, rows: int) -> Proven:
    return Proven(
        blocks=blocks,
        rows=rows,
        skipped={
            (s.dataset if s.check == "all" else f"{s.dataset} {s.check}"): s.reason
            for s in report.skipped
            if s.dataset == name
        },
        notes={what: f"verified: {what}" for dataset, what in report.notes if dataset == name},
    )


class Joint:
    """A round's groups (see the module): ``group(task)`` is the one a task is in, if any; ``lent`` the tasks fetched
    only to prove their groups' members."""

    def __init__(self, tasks: Sequence[ChunkTask], *, begun: int, chain_id: int) -> None:
        """``begun``: how many of the round's tasks may be begun and not done at once (a group larger, lent tasks
        counted, would wait for a member never begun)."""
        self._groups: dict[tuple[str, int], Group] = {}
        """By each member's slot file (its series' own) and first block fetched."""
        self._lent: dict[int, tuple[ChunkTask, Group]] = {}
        """By the lent task's id."""
        self._depths: dict[Dataset, int] = {}
        """How many of the others a member's proof reads, through theirs (:meth:`rank`)."""
        if not any(task.verify for task in tasks):
            return
        slots: dict[tuple[int, int, int, str], list[ChunkTask]] = {}
        wants = needs()
        self._depths = {dataset: len(_depth(dataset, wants)) for dataset in wants}
        for task in tasks:
            dataset = DATASETS[task.dataset]
            if task.verify and dataset in wants and not (dataset is LOGS and task.filters):
                slots.setdefault((task.start, task.fetch_start, task.end, task.u256), []).append(task)
        for (_, fetch_start, end, _), members in slots.items():
            present = {DATASETS[t.dataset] for t in members}
            if len(present) != len(members):
                continue  # a dataset twice in one slot (never planned so): proven alone
            lent = {need for d in present for need in wants[d]} - present
            every = present | lent
            if len(every) < 2 or len(every) > begun:
                continue
            own_logs = RECEIPTS in every and LOGS not in every
            group = Group(
                [d.name for d in every], BlockRange(fetch_start, end), chain_id=chain_id, own_logs=own_logs,
                lent=[d.name for d in lent], family=members[0].chain_family,
            )  # fmt: skip
            for task in members:
                self._groups[task.path, fetch_start] = group
            for dataset in lent:  # the slot's chunk of it, as a member's, with nothing of the member's own
                task = ChunkTask(**{**members[0].to_json(), "dataset": dataset.name, "filters": {}})
                self._lent[id(task)] = (task, group)

    @property
    def lent(self) -> list[ChunkTask]:
        """Tasks that fetch a dataset the run does not extract, only for their group's proofs: given to the group,
        never written."""
        return [task for task, _ in self._lent.values()]

    def is_lent(self, task: ChunkTask) -> bool:
        return id(task) in self._lent

    def rank(self, task: ChunkTask) -> int:
        """Where ``task`` is handed out among its slot's: a group's members (lent ones too) in the order their proofs
        read each other (headers, transactions, receipts, logs: a part waits for the last of its tables, so the
        costly transactions' part is not left for the end), then the others."""
        return self._depths[DATASETS[task.dataset]] if self.group(task) is not None else len(DATASETS)

    @property
    def groups(self) -> list[Group]:
        return list({id(g): g for g in self._groups.values()}.values())

    def group(self, task: ChunkTask) -> Group | None:
        if id(task) in self._lent:
            return self._lent[id(task)][1]
        return self._groups.get((task.path, task.fetch_start))
