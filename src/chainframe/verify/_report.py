"""What a verification found: per dataset the blocks and rows proven, every failure with both values, every skip."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Failure:
    """One check that did not hold."""

    dataset: str
    """The dataset whose rows were checked."""
    block_number: int
    """The block the check was about."""
    check: str
    """Name of the check, e.g. ``block_hash`` or ``log_count``."""
    expected: str
    """The stored value the check read (a header field, or a row's column with where the row is), as text."""
    actual: str
    """The value computed to compare with it (from the rows, the signature, the node's receipts), as text."""
    row: str = ""
    """Which row of the block, by its key (``transaction_index 3``, ``log_index 7``); empty for a check of the
    whole block (a root, the bloom, a count)."""


@dataclass(frozen=True)
class Skip:
    """A check that was not run, and why (never counted as passed)."""

    dataset: str
    check: str
    reason: str
    blocks: int
    """How many blocks it was skipped for."""


@dataclass
class Report:
    """Counts per dataset of blocks and rows proven, and every failure and skip."""

    blocks_verified: dict[str, int] = field(default_factory=dict)
    rows_verified: dict[str, int] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    notes: dict[tuple[str, str], int] = field(default_factory=dict)
    """(dataset, what) -> blocks: checks that passed only as the node itself encodes or numbers something other than
    the spec does (Ganache's receipts trie), said beside the result; never a skip, never a failure."""

    @property
    def ok(self) -> bool:
        return not self.failures

    def count(self, dataset: str, *, blocks: int, rows: int) -> None:
        self.blocks_verified[dataset] = self.blocks_verified.get(dataset, 0) + blocks
        self.rows_verified[dataset] = self.rows_verified.get(dataset, 0) + rows

    def skip(self, dataset: str, check: str, reason: str, *, blocks: int) -> None:
        """Record a check not run, adding to an earlier skip of the same check for the same reason."""
        if not blocks:
            return
        for i, earlier in enumerate(self.skipped):
            if (earlier.dataset, earlier.check, earlier.reason) == (dataset, check, reason):
                self.skipped[i] = Skip(dataset, check, reason, earlier.blocks + blocks)
                return
        self.skipped.append(Skip(dataset, check, reason, blocks))

    def note(self, dataset: str, what: str, *, blocks: int) -> None:
        if blocks:
            self.notes[dataset, what] = self.notes.get((dataset, what), 0) + blocks

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "datasets": {
                name: {"blocks_verified": self.blocks_verified[name], "rows_verified": self.rows_verified[name]}
                for name in sorted(self.blocks_verified)
            },
            "failures": [vars(f) for f in self.failures],
            "skipped": [vars(s) for s in self.skipped],
            "notes": [{"dataset": d, "note": what, "blocks": n} for (d, what), n in self.notes.items()],
        }
