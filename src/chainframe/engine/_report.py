"""Progress while a run goes (terminal or Jupyter), and what it did afterwards (summary and JSON report)."""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from chainframe._version import __version__
from chainframe.engine._engine import RunCounters
from chainframe.engine._plan import ChunkTask
from chainframe.families import FamilyBy, family_line
from chainframe.store import Location, location, report_path, write_bytes


def in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (where stderr is no terminal, yet a progress bar is wanted)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None  # imported already if we are in a kernel
    return getattr(shell, "kernel", None) is not None


def _bar_class() -> Any:
    """tqdm's widget bar in Jupyter when ipywidgets is there (``chainframe[notebook]``), else its text bar, which a
    notebook shows as text: never tqdm.auto's warning about a missing IProgress."""
    if in_notebook() and importlib.util.find_spec("ipywidgets") is not None:
        from tqdm.notebook import tqdm as notebook_bar

        return notebook_bar
    from tqdm.std import tqdm as text_bar

    return text_bar


class Progress:
    """A progress bar over blocks, with rows, retries and splits. ``enabled``: True, False, or None for on where
    someone watches (stderr is a terminal, or a Jupyter notebook).

    The bar counts blocks, each once however many datasets read it: 241 blocks of four datasets are 241 blocks. A
    chunk done moves it by its share (its blocks over all datasets' planned blocks) of the blocks planned."""

    def __init__(
        self, total_blocks: int, *, enabled: bool | None, client: Any, counters: RunCounters, desc: str = "extract"
    ) -> None:
        self._total = total_blocks
        self._spans: list[tuple[int, int]] = []  # every planned task's blocks, to count each block once
        self._work = self._done = 0  # blocks summed over tasks (a block read by two datasets counts twice)
        self._client, self._counters = client, counters
        self._rows = 0
        if enabled is None:
            enabled = in_notebook() or sys.stderr.isatty()
        # tqdm is imported (16 ms) only for a bar that shows.
        self._bar: Any = _bar_class()(total=total_blocks, unit="block", desc=desc) if enabled else None

    @property
    def blocks(self) -> int:
        """The distinct blocks planned so far."""
        return self._total

    def add_tasks(self, tasks: list[ChunkTask]) -> None:
        """Planned work: the blocks these tasks fetch count towards the bar's total, each block once."""
        before = _distinct(self._spans)
        self._spans += [(task.fetch_start, task.end) for task in tasks]
        self._work += sum(task.end - task.fetch_start + 1 for task in tasks)
        self._total += _distinct(self._spans) - before
        if self._bar is None:
            return
        self._bar.total = self._total
        self._show()

    def _show(self) -> None:
        self._bar.n = round(self._total * self._done / self._work) if self._work else 0
        self._bar.refresh()

    def chunk(self, task: ChunkTask, rows: int, written: bool) -> None:
        self._rows += rows
        if self._bar is None:
            return
        stats, split = self._client.stats, self._counters.split
        skipped = sum(d.skipped for d in self._counters.datasets.values())
        self._bar.set_postfix(
            rows=f"{self._rows:,}", retries=stats.retries, splits=split.splits, skipped=skipped, refresh=False
        )
        self._done += task.end - task.fetch_start + 1
        self._show()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _distinct(spans: list[tuple[int, int]]) -> int:
    """How many blocks the inclusive ranges ``spans`` cover together."""
    count, reached = 0, -1
    for start, end in sorted(spans):
        if end > reached:
            count += end - max(start, reached + 1) + 1
            reached = end
    return count


@dataclass(frozen=True)
class Covered:
    """What a run covered of the chain and why it stopped, as its report states it: made by the run, read by
    :meth:`RunReport.make`."""

    chain_id: int
    blocks: tuple[int, int] | None
    """The first and last block asked for; None: none (nothing new)."""
    text: str
    """The range as it was asked for."""
    head: int | None = None
    finalized: int | None = None
    stop: str = ""
    """Why the run stopped where it did, in words."""
    reorgs: list[dict[str, Any]] = field(default_factory=list)
    ranges: list[tuple[int, int]] = field(default_factory=list)
    """The runs of blocks asked for, where they are not one run."""
    chain_family: str = "ethereum"
    chain_family_by: FamilyBy = "chain id"


@dataclass
class RunReport:
    """What a run did. ``save`` writes it as JSON; ``summary`` is the lines printed at the end."""

    chainframe: str
    started: str
    seconds: float
    endpoint: str
    chain_id: int
    blocks: tuple[int, int] | None
    """The blocks asked for, resolved (None when nothing was left to ask, e.g. ``align`` before a whole chunk)."""
    range: str
    out: str | None
    datasets: dict[str, dict[str, Any]]
    requests: int
    calls: int
    retries: int
    rate_limited: int
    failovers: int
    """Requests an endpoint other than the first answered while the first was set aside, or after another failed
    them (requests shared over several endpoints are not failovers)."""
    bytes_received: int
    splits: int
    receipt_fallbacks: int
    errors: dict[str, int] = field(default_factory=dict)
    head: int | None = None
    """The node's head when the run started."""
    finalized: int | None = None
    """The finalized block (or head minus confirmations) the run checked against: rows above it were checked block by
    block against the chain's headers."""
    stop: str = ""
    """Where the run stopped, and why (the safe end, or as asked)."""
    reorgs: list[dict[str, Any]] = field(default_factory=list)
    """Reorganizations found in the folder and repaired: series, fork block, depth, chunks rewritten."""
    set_aside: dict[str, str] = field(default_factory=dict)
    """Endpoints (keys redacted) set aside during the run, and why: unreachable or 5xx (for a cool-down), or
    serving another chain."""
    missing_methods: dict[str, str] = field(default_factory=dict)
    """Methods the node answered as not served, with its answer, which the run read another way (receipts by
    transaction where eth_getBlockReceipts is missing)."""
    node_notes: dict[str, str] = field(default_factory=dict)
    """How the run read around the node's answers (a fallback taken, an inconsistency of the node mended), by topic."""
    lost_workers: list[str] = field(default_factory=list)
    """Dask workers lost while they held chunks of the run."""
    reassigned: list[str] = field(default_factory=list)
    """Chunks Dask ran again on another worker (their first worker was lost, or its task failed unexpectedly)."""
    ranges: list[tuple[int, int]] = field(default_factory=list)
    """The runs of blocks asked for, where ``blocks`` is not one run (several ranges, a step, a file's blocks)."""
    exports: list[str] = field(default_factory=list)
    """Files the run exported the asked blocks into (``--csv``, ``--json``, ``--hex``)."""
    endpoints: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per endpoint (key redacted), what it was sent: requests, calls, credits (by its own price table), errors."""
    chain_family: str = "ethereum"
    """The chain family whose rules the run read the chain by (its proofs, with ``verify``)."""
    chain_family_by: FamilyBy = "chain id"
    """How it was chosen: the chain id names it, ``assumed`` (no family knows the chain id: read as Ethereum), or
    ``user`` (``--chain-family``)."""
    decoded_with: list[dict[str, Any]] = field(default_factory=list)
    """With ``abi_dir``: which ABI decoded each asked address over which blocks, and why (as ``chainframe abi --json``
    says it)."""
    decoding_notes: list[str] = field(default_factory=list)
    """With ``abi_dir``: each stretch's ABIs, proxy entries set aside, names decoded into more than one series."""

    @classmethod
    def make(
        cls, covered: Covered, *, started: datetime, seconds: float, endpoint: str, out: Location | None,
        counters: RunCounters, client: Any,
    ) -> RunReport:  # fmt: skip
        """The report of a run that ``covered`` what it says, from its ``counters`` and its ``client``'s stats."""
        stats = client.stats
        return cls(
            chainframe=__version__,
            started=started.isoformat(timespec="seconds"),
            seconds=round(seconds, 3),
            endpoint=getattr(client, "via", endpoint),  # the URL requests went to: ws:// for the WebSocket transport
            chain_id=covered.chain_id,
            blocks=covered.blocks,
            range=covered.text,
            out=str(out) if out is not None else None,
            datasets={name: asdict(d) for name, d in counters.datasets.items()},
            requests=stats.requests,
            calls=stats.calls,
            retries=stats.retries,
            rate_limited=stats.rate_limited,
            failovers=stats.failovers,
            bytes_received=stats.bytes_received,
            splits=counters.split.splits,
            receipt_fallbacks=counters.split.receipt_fallbacks,
            errors=dict(stats.errors),
            head=covered.head,
            finalized=covered.finalized,
            stop=covered.stop,
            reorgs=list(covered.reorgs),
            set_aside=dict(stats.set_aside),
            endpoints={url: asdict(counts) for url, counts in getattr(stats, "endpoints", {}).items()},
            missing_methods=dict(getattr(client, "missing_methods", {})),
            node_notes=dict(getattr(client, "notes", {})),
            lost_workers=sorted(counters.lost_workers),
            reassigned=list(counters.reassigned),
            ranges=list(covered.ranges),
            chain_family=covered.chain_family,
            chain_family_by=covered.chain_family_by,
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        """Short: where and how much (``summary()`` has the lines, ``to_json()`` every field)."""
        what = f"blocks {self.blocks[0]}..{self.blocks[1]}" if self.blocks else "no new blocks"
        rows = sum(d["rows"] for d in self.datasets.values())
        names = ", ".join(self.datasets) or "no datasets"
        return f"<RunReport {what} of chain {self.chain_id}: {names}, {rows:,} rows>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython's terminal: the summary lines."""
        printer.text(self.summary())

    def _repr_html_(self) -> str:
        """In Jupyter: the summary, not a 600-character line of fields (``to_json()`` has them all)."""
        import html

        return f"<pre>{html.escape(self.summary())}</pre>"

    def save(self, path: Location | str) -> Location:
        """Write the report to ``path`` (a local file or an S3 object), atomically."""
        path = location(path)
        write_bytes(path, (json.dumps(self.to_json(), indent=2) + "\n").encode())
        return path

    def default_path(self) -> Location:
        assert self.out is not None
        stamp = self.started.replace(":", "").replace("-", "")
        return report_path(location(self.out), stamp)

    def follow_path(self) -> Location:
        """Where ``follow`` keeps its one rolling report: named after this (its first) round, rewritten each round."""
        assert self.out is not None
        return report_path(location(self.out), self.started.replace(":", "").replace("-", ""), follow=True)

    def described(self) -> str:
        """The blocks asked for, with the end's meaning spelled out (cryo's ``A:B`` leaves B out; ours takes it)."""
        if not self.blocks:
            return "no new blocks"
        if not self.ranges:
            first, last = self.blocks
            return f"blocks {first}..{last} ({last} included)" if last != first else f"block {first}"
        count = sum(b - a + 1 for a, b in self.ranges)
        shown = ", ".join(f"{a}..{b}" if a != b else str(a) for a, b in self.ranges[:4])
        more = f" and {len(self.ranges) - 4} more" if len(self.ranges) > 4 else ""
        return f"{count:,} blocks in {len(self.ranges)} runs: {shown}{more} (ends included)"

    def summary(self) -> str:
        what = self.described()
        lines = [f"{what} of chain {self.chain_id} in {self.seconds:.1f} s via {self.endpoint}"]
        if self.stop:
            lines.append(f"  {self.stop}")
        if (self.chain_family, self.chain_family_by) != ("ethereum", "chain id"):  # Ethereum by its id: unsaid
            lines.append(f"  {family_line(self.chain_family, self.chain_family_by, self.chain_id)}")
        for reorg in self.reorgs:
            lines.append(
                f"  reorg repaired in {reorg['series']}: forked at block {reorg['fork_block']}, {reorg['depth']} "
                f"stored block{'s' if reorg['depth'] != 1 else ''} replaced, {reorg['chunks_rewritten']} "
                f"chunk{'s' if reorg['chunks_rewritten'] != 1 else ''} rewritten"
            )
        for d in self.decoded_with:
            lines.append(f"  {d['address']} blocks {d['first_block']}..{d['last_block']}: {d['why']}")
        lines += [f"  {note}" for note in self.decoding_notes]
        for name, d in self.datasets.items():
            refetched = f"  {d['refetched']} refetched (chain moved)" if d.get("refetched") else ""
            series = d.get("series", 1)
            lines.append(
                f"  {name:<18} {d['rows']:>12,} rows  {d['written']:>5} chunks written  {d['skipped']:>5} skipped"
                + refetched
                + (f"  in {series} series" if series > 1 else "")
            )
            if d.get("decode_errors"):
                lines.append(f"  {'':<18} {d['decode_errors']:,} calls kept undecoded (see their decode_error)")
            if d.get("verified_blocks"):
                each = " (each series' own, summed)" if series > 1 else ""
                lines.append(f"  {'':<18} verified: {d['verified_blocks']:,} blocks, {d['verified_rows']:,} rows{each}")
            for check, reason in sorted(d.get("unverified", {}).items()):
                lines.append(f"  {'':<18} not verified: {check} ({reason})")
        lines.append(
            f"  {self.requests:,} requests ({self.calls:,} calls), {self.retries} retries, {self.splits} splits, "
            f"{self.rate_limited} rate limits, {self.bytes_received / 1e6:,.1f} MB received"
        )
        if len(self.endpoints) > 1:
            for endpoint, sent in self.endpoints.items():
                lines.append(
                    f"  endpoint {endpoint}: {sent['calls']:,} calls ({sent['requests']:,} requests), "
                    f"{sent['credits']:,} credits, {sent['errors']:,} errors"
                )
        for endpoint, reason in sorted(self.set_aside.items()):
            lines.append(f"  set aside: {endpoint} ({reason})")
        if self.failovers or self.set_aside:
            lines.append(f"  {self.failovers:,} requests answered by another endpoint than the first (failover)")
        for method, answer in sorted(self.missing_methods.items()):
            lines.append(f"  {method} not served by the node ({answer}): read another way")
        for note in sorted(self.node_notes.values()):
            lines.append(f"  {note}")
        for worker in self.lost_workers:
            lines.append(f"  lost Dask worker: {worker}")
        for path in self.exports:
            lines.append(f"  exported: {path}")
        if self.reassigned:
            count = len(self.reassigned)
            shown = ", ".join(self.reassigned[:5]) + (f" and {count - 5} more" if count > 5 else "")
            lines.append(f"  {count} chunk{'s' if count != 1 else ''} run again on another worker: {shown}")
        return "\n".join(lines)


def now() -> datetime:
    return datetime.now(UTC)
