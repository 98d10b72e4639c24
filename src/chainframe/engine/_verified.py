"""``verify=True``: each piece's rows proven against its blocks' headers before they are kept.

The blocks, transactions, receipts and logs of one slot that a run fetches together are each other's proof, and are
proven together from their own rows (:mod:`chainframe.engine._joint`); this module proves every other piece, and
those of a group that proved nothing.

For a piece of blocks the engine fetches what the dataset's proof declares it reads
(:class:`chainframe.datasets.Proof`: the headers, and the transactions, receipts or accounts' proofs it needs), then
runs the check the proof names on them with the rows (:class:`chainframe.verify.Piece`); this module never asks which
kind of proof it runs. The catalogue's checks (:mod:`chainframe.verify`) prove that:

- every header hashes to its block hash (all header fields are what the node signed off);
- ``blocks``: the rows are headers themselves; ``transactions``: ``transactionsRoot``; ``receipts``: ``receiptsRoot``
  (with the logs inside the same answers); ``uncles``: ``sha3Uncles``; ``account_proofs`` and ``storage_proofs``: the
  proofs against ``stateRoot``, a slot's against its account's ``storageHash`` (in an extraction from the same
  ``eth_getProof`` answers; for stored slots, from the accounts' proofs fetched again at their blocks);
- logs (plain, filtered, ``event=`` series and the token transfers): the blocks' receipts are proven against
  ``receiptsRoot`` and ``logsBloom``, and the logs kept must be exactly the receipts' logs that match the filter
  (a dropped, added or altered log fails ``log_set``);
- every row's block hash is its header's.

A failed check is :class:`~chainframe.engine._answers.WrongAnswer`: the piece is fetched again, then the error names
the method, blocks, endpoint and the check with both values. Call traces have no header field that commits to them:
they are reported as skipped, with the reason, never as verified.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, NamedTuple

import pyarrow as pa

from chainframe.datasets import U256, BlockRange, Dataset
from chainframe.engine._answers import WrongAnswer
from chainframe.engine._shared import Received, reads

if TYPE_CHECKING:
    from chainframe.families import ChainFamily
    from chainframe.rpc import Pacing
    from chainframe.verify import Report


def _report() -> Report:
    from chainframe.verify import Report  # loaded by runs that verify, not by every run

    return Report()


@dataclass
class Material:
    """What a piece is proven against: the answers its dataset's proof declares it reads (the headers, and the
    transactions, receipts or accounts' proofs it needs), by the dataset whose answers they are."""

    answers: dict[Dataset, list[bytes]] = field(default_factory=dict)


@dataclass
class Proven:
    """Blocks and rows proven, and the checks skipped (with why), for a run's report."""

    blocks: int = 0
    rows: int = 0
    skipped: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    """Checks that passed as the node encodes something (Ganache's receipts trie), for the run's summary."""

    def add(self, other: Proven) -> None:
        self.blocks += other.blocks
        self.rows += other.rows
        self.skipped.update(other.skipped)
        self.notes.update(other.notes)


async def material(
    client: Any,
    dataset: Dataset,
    part: BlockRange,
    *,
    stored: pa.Table | None = None,
    filters: Mapping[str, Any] | None = None,
    answers: Sequence[bytes] | None = None,
) -> Material | None:
    """Fetch what ``dataset``'s rows for ``part`` are proven against, as its proof declares (None: nothing can prove
    them); ``stored``: the rows, read from a folder (their own answers, which an extraction has, are not stored);
    ``filters``: the rows' inputs (a state read's accounts and slots, proven by their own eth_getProof answers);
    ``answers``: in an extraction, the rows' own answers (a state diff's proof reads the accounts they name)."""
    if dataset.proof is None:
        return None
    found = await dataset.proof.material(client, dataset, part, stored=stored, filters=filters or {}, answers=answers)
    return Material(found)


def verify_reads(dataset: Dataset, pacing: Pacing | None = None) -> set[tuple[str, tuple[Any, ...]]]:
    """The calls per block (a method and its parameters after the block) that extracting ``dataset`` with ``verify``
    makes whose answers are a block's whole: what it reads without ``verify`` (its own, and what the run's ``pacing``
    makes it read: :func:`~chainframe.engine._shared.reads`) and what its proof reads in an extraction. The run
    shares them between its datasets (engine._shared)."""
    read = dataset.proof.read(dataset) if dataset.proof is not None else []
    return reads(dataset, pacing) | {(d.method, d.block_params) for d in read if d.block_params is not None}


class Rows(NamedTuple):
    """A series' rows of some blocks, as :func:`prove` proves them."""

    dataset: Dataset
    table: pa.Table
    """The rows (in an extraction, the logs datasets' logs before decoding)."""
    part: BlockRange
    filters: Mapping[str, Any]
    """The series' inputs (its filter)."""
    u256: U256 = "decimal"
    name: str = ""
    """The series, as the report names it; empty: the dataset's name."""
    bodies: Sequence[bytes] = ()
    """The rows' own answers (receipts carry their logs); without them, receipts are proven with the node's
    receipts' logs."""


def prove(
    of: Rows,
    proof: Material | None,
    *,
    chain_id: int,
    report: Report,
    received: Received | None = None,
    family: ChainFamily | None = None,
) -> None:
    """Prove the rows ``of`` a series against ``proof`` with the check its dataset's proof declares, adding counts,
    failures and skips to ``report``. ``received``: the shared answers among the piece's (in an extraction: what
    another dataset proved of them is not proven again). ``family``: the chain family whose rules the rows follow
    (None: the chain id's)."""
    from chainframe.verify import Piece  # deferred: the verify wing (chainframe.verify), only when verifying

    dataset, rows, part, bodies = of.dataset, of.table, of.part, of.bodies
    name = of.name or dataset.name
    received = received or Received()
    if proof is None or dataset.proof is None:
        reasons = "; ".join(sorted(set(dataset.unprovable.values()))) or "nothing to prove it against"
        report.skip(name, "all", reasons, blocks=len(part))
        return
    # The check counts what it proves per table (headers among them): only its failures, skips and notes are kept,
    # and the rows counted are this series' own.
    found = _report()
    dataset.proof.prove(Piece(dataset, name, rows, part, proof.answers, found, chain_id, of.filters, u256=of.u256,
                              bodies=bodies, proven=received.proven, family=family))  # fmt: skip
    for failure in found.failures:
        report.failures.append(replace(failure, dataset=name))
    for skip in found.skipped:
        report.skip(name, skip.check, skip.reason, blocks=skip.blocks)
    for (_, what), blocks in found.notes.items():
        report.note(name, what, blocks=blocks)
    report.count(name, blocks=len(part), rows=rows.num_rows)


def _said_proven(dataset: Dataset, proof: Material, bodies: Sequence[bytes], received: Received) -> None:
    """A piece proven: what its proof declares it proved of the answers, for the run's other datasets reading the
    same ones (by the dataset whose answers they are)."""
    assert dataset.proof is not None
    for read in dataset.proof.read(dataset):
        if read.name in dataset.proof.proves:
            received.mark(proof.answers.get(read, []), read)
    if dataset.proof.proves_own:
        received.mark(bodies, dataset)


def verify_piece(
    dataset: Dataset,
    rows: pa.Table,
    part: BlockRange,
    proof: Material | None,
    *,
    chain_id: int,
    filters: Mapping[str, Any],
    bodies: Sequence[bytes] = (),
    received: Received | None = None,
    family: ChainFamily | None = None,
) -> Proven:
    """:func:`prove` in an extraction: the first failure raises :class:`WrongAnswer` naming the block and check."""
    report = _report()
    received = received or Received()
    prove(Rows(dataset, rows, part, filters, bodies=bodies), proof, chain_id=chain_id, report=report,
          received=received, family=family)  # fmt: skip
    if report.failures:
        first = report.failures[0]
        more = f" (and {len(report.failures) - 1} more)" if len(report.failures) > 1 else ""
        raise WrongAnswer(
            f"block {first.block_number}: answered {first.expected}, computed {first.actual}{more}",
            check=f"verify {first.check}",
        )
    if proof is not None:
        _said_proven(dataset, proof, bodies, received)
    return Proven(
        blocks=len(part) if proof is not None else 0,
        rows=rows.num_rows if proof is not None else 0,
        skipped={(s.dataset if s.check == "all" else f"{s.dataset} {s.check}"): s.reason for s in report.skipped},
        notes={what: f"verified: {what}" for _, what in report.notes},
    )
