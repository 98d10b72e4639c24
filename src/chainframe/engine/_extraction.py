"""An extraction: its checked inputs, and one round of it over an output folder (resolve the range, pick routes
once, hold the folder's lock, run :func:`~chainframe.engine._run.extract_round`, say where it stopped)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import anyio

from chainframe._errors import InputError
from chainframe.datasets import DATASETS, U256, BlockRange
from chainframe.engine._engine import RunCounters, TaskRunner, run_tasks
from chainframe.engine._folder import check_out, prepare_out
from chainframe.engine._options import check_chunk_size, dataset_inputs, entry_key, series_filters, whole
from chainframe.engine._plan import Wanted
from chainframe.engine._ranges import BlocksArg as Blocks
from chainframe.engine._ranges import BlockSpec, chain_state, parse_blocks, resolve_blocks
from chainframe.engine._report import Covered, Progress, RunReport, now
from chainframe.engine._routes import preflight
from chainframe.engine._run import extract_round
from chainframe.engine._runcontext import RunContext
from chainframe.families import choose_family, family_by, family_named
from chainframe.rpc import Endpoint
from chainframe.store import Layout, Location, Publisher, choose_layout, folder_lock, location, series_name, while_held


# A NamedTuple, not a frozen dataclass: every run imports it, and a dataclass costs about 1.2 ms to make (issue 43).
class SeriesAsked(NamedTuple):
    """The series a call asks for, as given (checked by :meth:`Extraction.make`)."""

    datasets: str | Sequence[str]
    filters: Mapping[str, Any]
    """The datasets' inputs (a filter no asked dataset takes is refused, one no dataset has named as misspelt)."""
    takes: Callable[..., Any]
    """The public function called, whose options a misspelt filter is matched against."""
    u256: U256 = "decimal"
    chunk_size: int | None = None
    """None: each series' own (the dataset's default for a new one)."""
    each: bool = False
    """Each event and function of the filters its own series (``abi=``: one series per event and per function of a
    contract's ABI, named after it), not one series decoding them all. A dataset's series per function read each
    piece once (:mod:`chainframe.engine._pieces`)."""
    origins: Mapping[str, str] = {}
    """The ABI each entry came from (:func:`~chainframe.engine._options.abi_origins`), for its series' footers."""


def _series(
    per_dataset: Mapping[str, Mapping[str, Any]], given: Mapping[str, Any], u256: U256, size: int | None, *, each: bool,
    origins: Mapping[str, str],
) -> list[Wanted]:  # fmt: skip
    """The series of the asked datasets' checked filters (:func:`~chainframe.engine._options.series_filters`), each
    with the ABI its entry came from (``origins``); two entries naming one series are one."""
    out: dict[str, Wanted] = {}
    for name, filters in per_dataset.items():
        for one, entry in series_filters(name, filters, given, each=each):
            said = origins.get(entry_key(entry)) if entry is not None else None
            want = Wanted(dataset=name, filters=one, u256=u256, chunk_size=size, decoded_with=said)
            out.setdefault(series_name(name, one, u256), want)
    return list(out.values())


class Extraction:
    """The checked inputs of an extraction, and one round of it over an output folder."""

    def __init__(
        self, wanted: list[Wanted], spec: BlockSpec, folder: Location, concurrency: int, verify: bool = False, *,
        layout: Layout, chain_family: str | None = None,
    ) -> None:  # fmt: skip
        self.wanted, self.spec, self.folder, self.concurrency = wanted, spec, folder, concurrency
        self.verify = verify
        self.chain_family = chain_family
        """The chain family the user named (``--chain-family``), checked against the chain id before any block is
        asked for; None: the chain id's (Ethereum, assumed, for a chain no family knows)."""
        self.publisher = Publisher(folder, layout)
        """One for the whole run (every round of a follow): it holds the run's claim on each Delta table."""
        self.routes_picked = False
        """Each dataset's route was picked from the node's answers (:func:`~chainframe.engine._routes.preflight`):
        once a run, before its first round's work."""

    @classmethod
    def make(
        cls, asked: SeriesAsked, *, blocks: Blocks, out: str | Location, concurrency: int, verify: bool = False,
        table: Layout | None = None, distributed: bool = False, chain_family: str | None = None,
    ) -> Extraction:  # fmt: skip
        """The run's inputs checked (each refused in one line before any request), the output folder's layout
        chosen."""
        u256 = asked.u256
        per_dataset = dataset_inputs(asked.datasets, asked.filters, asked.takes)
        size = check_chunk_size(asked.chunk_size)
        spec = parse_blocks(blocks)
        folder = location(out)
        check_out(folder)
        if u256 not in ("decimal", "binary"):
            raise InputError(f"u256 must be 'decimal' or 'binary'; got {u256!r}")
        whole("concurrency", concurrency)
        wanted = _series(per_dataset, asked.filters, u256, size, each=asked.each, origins=asked.origins)
        if not isinstance(verify, bool):
            raise InputError(f"verify must be True or False; got {verify!r}")
        if chain_family is not None:
            family_named(chain_family)  # a name no family has is refused here; one the chain id denies, in once()
        layout = choose_layout(folder, table, distributed=distributed)
        return cls(wanted, spec, folder, concurrency, verify, layout=layout, chain_family=chain_family)

    async def once(
        self, client: Any, *, endpoint: Endpoint, overwrite: bool, align: bool, confirmations: int,
        progress: bool | None, repair_only: bool = False, runner: TaskRunner = run_tasks,
    ) -> RunReport:  # fmt: skip
        started, clock = now(), time.monotonic()
        if self.chain_family is not None:  # a family the chain id denies is refused before any block is asked for
            choose_family(await client.chain_id(), self.chain_family)
        state = await chain_state(client, confirmations)
        chain_id, head, finalized, why = state.chain_id, state.head, state.safe, state.why
        family, assumed = choose_family(chain_id, self.chain_family)
        if not self.routes_picked:
            await preflight(client, [DATASETS[w.dataset] for w in self.wanted], head)
            self.routes_picked = True
        resolved: list[BlockRange] | None = None
        if not repair_only:
            resolved = await resolve_blocks(self.spec, client, confirmations=confirmations, head=head, safe=finalized)
            self.check_step(resolved)
        if align and resolved is not None:
            resolved = aligned(resolved, self.wanted)
        counters = RunCounters()
        bar = Progress(0, enabled=progress, client=client, counters=counters)
        try:
            with folder_lock(self.folder) as lock:
                await anyio.to_thread.run_sync(prepare_out, self.folder)
                run = RunContext(
                    client, self.folder, self.publisher, chain_id, endpoint.display, self.concurrency, counters,
                    verify=self.verify, runner=runner, on_tasks=bar.add_tasks, on_chunk=bar.chunk, family=family,
                )  # fmt: skip
                result = await while_held(lock, lambda: extract_round(
                    run, wanted=self.wanted, blocks=resolved or None, head=head, finalized=finalized,
                    overwrite=overwrite,
                ))  # fmt: skip
        finally:
            bar.close()
        for dataset, skipped in result.skipped.items():
            counters.dataset(dataset).skipped += skipped
        for dataset, count in Counter(w.dataset for w in self.wanted).items():
            if count > 1 and dataset in counters.datasets:
                counters.datasets[dataset].series = count
        if repair_only:
            stop = f"checked against the chain at head {head}"
        elif not resolved:
            stop = "nothing to store: no whole chunk below the end (--align)"
        elif self.spec.open_end:
            safe = (
                f"finalized {finalized}" if why == "finalized" else f"head {head} minus {confirmations} confirmations"
            )
            stop = f"stopped at {safe}" + (f" (head {head})" if why == "finalized" else f" = {finalized}")
            # cryo's 'A:' means latest; ours the safe end: say how to reach the tip where the reader will look.
            stop += f"; write {_to_latest(self.spec)} for the tip" if head > finalized else ""
        else:
            stop = f"stopped at {resolved[-1].end} as asked (head {head}, {state.safe_text})"
        for dataset, gaps in result.between.items():
            shown = ", ".join(f"{a}..{b}" for a, b in gaps[:3]) + (" ..." if len(gaps) > 3 else "")
            stop += f"; {dataset}: blocks {shown} fetched too (a chunk file holds one run of blocks; see --chunk-size)"
        runs = [(r.start, r.end) for r in resolved or ()]
        covered = Covered(
            chain_id, (runs[0][0], runs[-1][1]) if runs else None, self.spec.text, head=head, finalized=finalized,
            stop=stop, reorgs=[r.to_json() for r in result.reorgs], ranges=runs if len(runs) > 1 else [],
            chain_family=family.name, chain_family_by=family_by(assumed, self.chain_family),
        )  # fmt: skip
        return RunReport.make(covered, started=started, seconds=time.monotonic() - clock, endpoint=endpoint.display,
                              out=self.folder, counters=counters, client=client)  # fmt: skip

    def check_step(self, resolved: list[BlockRange]) -> None:
        """A step asks for its blocks only; a chunk file holds one run of blocks, so two asked blocks in one chunk
        would have the blocks between them fetched too: refused, saying what to change."""
        if not self.spec.sampled:
            return
        for want in self.wanted:
            size = want.chunk_size or DATASETS[want.dataset].chunk_size_for(want.filters)
            slots_hit = [r.start // size for r in resolved]
            if len(set(slots_hit)) < len(slots_hit):
                raise InputError(
                    f"blocks {self.spec.text!r}: the step puts several blocks in one chunk of {size:,} "
                    f"({want.dataset}); a chunk file holds one run of blocks, so the blocks between would be fetched "
                    f"too: give a step of "
                    f"at least {size:,}, or --chunk-size at most the step"
                )


def _to_latest(spec: BlockSpec) -> str:
    """The same ranges, ending at the tip: what to write instead of an open end."""
    return " ".join(p.text + "latest" if p.open_end and p.text.endswith(":") else p.text for p in spec.parts)


def aligned(blocks: list[BlockRange], wanted: list[Wanted]) -> list[BlockRange]:
    """``blocks`` cut back to whole chunks (the smallest chunk size asked; series keep their own sizes): the last
    run ends where the last whole chunk does."""
    size = min(w.chunk_size or DATASETS[w.dataset].chunk_size_for(w.filters) for w in wanted)
    end = (blocks[-1].end + 1) // size * size - 1
    return [BlockRange(r.start, min(r.end, end)) for r in blocks if r.start <= end]
