"""``abi_dir=`` (``--abi-dir``): the contracts ``address=`` names decoded with the ABIs a folder holds for them, a
proxy's with its implementation's in force at each block (and its own beside it).

Before any request the folder's files for the addresses are read (a file that is not an ABI refused, naming it) and
every other option checked as :func:`~chainframe.extract` checks it. Then the proxies' slots are read at the asked
blocks (:func:`chainframe.decode.decodings`), the blocks cut into stretches over which the ABIs in force stay the
same, and each stretch extracted with its ABIs: one series per event (logs) and per function (transactions,
traces), its filter that one entry, so a function or event of one text has one series whichever stretch it was
decoded in (a proxy upgraded to an implementation that keeps ``transfer`` keeps one ``transfer`` series). An entry
whose name comes back with another text (other types or parameter names: other columns) is another series; the
report says so (:func:`renamed`). The run's report is the stretches' reports added up, with the decodings
(``decoded_with``): which ABI decoded which address over which blocks, and why.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple

import anyio

from chainframe._errors import InputError
from chainframe.datasets import DATASETS, BlockRange
from chainframe.engine._exports import export_series
from chainframe.engine._extraction import Extraction
from chainframe.engine._options import entry_key, filter_names
from chainframe.engine._plan import Wanted, check_filters
from chainframe.engine._ranges import parse_blocks, resolve_blocks
from chainframe.engine._report import RunReport
from chainframe.store import series_name

if TYPE_CHECKING:  # chainframe.decode imports numpy: a plain extraction runs without it (cli._process)
    from chainframe.decode import AbiFolder, AbiKind, Decoding, Stretch

KINDS: tuple[AbiKind, ...] = ("event", "function")
"""The inputs an ABI's entries are given to: logs take its events, transactions and traces its functions."""


class _Counted:
    """A client whose requests are counted by method (the proxies' reads a plan makes)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.calls: Counter[str] = Counter()

    async def request(self, method: str, params: Any = ()) -> Any:
        self.calls[method] += 1
        return await self._client.request(method, params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


# A NamedTuple, not a frozen dataclass: every run imports it, and a dataclass costs about 1.2 ms to make (issue 43).
class AbisResolved(NamedTuple):
    """What some addresses decode with over some blocks."""

    chain_id: int
    decodings: tuple[Decoding, ...]
    """Each address over each stretch where its code stays in one place."""
    stretches: tuple[Stretch, ...]
    """The blocks cut where the set of ABIs changes: each decodes with its own set."""


def checked_folder(path: Any, addresses: Any, what: str = "address") -> tuple[AbiFolder, list[str]]:
    """The folder and the addresses, checked before any request: the files the folder holds for them read (a file
    that is not JSON, metadata without an ABI, a refused Etherscan answer named with its reason)."""
    # deferred: decode needs numpy; plan() loads this module without ABIs
    from chainframe.decode import AbiFolder, address_of

    if not addresses:
        raise InputError(f"the ABI folder decodes the contracts {what} names: give {what}")
    folder = AbiFolder(path)
    asked = [address_of(a, what) for a in ([addresses] if isinstance(addresses, str) else addresses)]
    folder.check(asked)
    return folder, asked


async def resolve_abis(
    client: Any, folder: AbiFolder, addresses: Sequence[str], ranges: Sequence[BlockRange]
) -> AbisResolved:
    """Which ABIs ``addresses`` decode with over ``ranges`` (resolved blocks), asked of ``client``'s node."""
    # deferred: decode needs numpy; plan() loads this module without ABIs
    from chainframe.decode import decodings, stretches

    chain_id = await client.chain_id()
    found = await decodings(client, folder, chain_id, addresses, [(r.start, r.end) for r in ranges])
    return AbisResolved(chain_id, tuple(found), tuple(stretches(found)))


def decoding_json(d: Decoding, chain_id: int) -> dict[str, Any]:
    """One decoding as the ``abi`` command's ``--json`` and the report's ``decoded_with`` say it."""
    return {
        "address": d.address, "chain_id": chain_id, "first_block": d.first, "last_block": d.last, "how": d.code.how,
        "decodes_with": d.code.address, "beacon": d.code.beacon, "abi_file": d.abi.file if d.abi else None,
        "abi_origin": d.abi.origin if d.abi else None, "abi_digest": d.abi.digest if d.abi else None,
        "own_abi_file": d.own.file if d.own else None, "own_abi_digest": d.own.digest if d.own else None,
        "why": d.why(),
    }  # fmt: skip


# A NamedTuple, not a frozen dataclass: every run imports it, and a dataclass costs about 1.2 ms to make (issue 43).
class AbiDirAsked(NamedTuple):
    """An ``abi_dir`` extraction's inputs, checked before any request."""

    folder: AbiFolder
    addresses: tuple[str, ...]
    datasets: tuple[str, ...]
    """The asked datasets (canonical names)."""
    filters: Mapping[str, Any]
    """The other filters, as given (``address`` kept only where an asked dataset takes it)."""
    template: Extraction
    """The run's inputs checked as a plain extraction of them: the folder's layout, block spec and options."""

    @classmethod
    def make(cls, datasets: str | Sequence[str], abi_dir: Any, filters: Mapping[str, Any], make: Any) -> AbiDirAsked:
        """``make(filters)``: the plain :class:`Extraction` of the datasets with ``filters`` (every option checked)."""
        folder, addresses = checked_folder(abi_dir, filters.get("address"))
        names = [datasets] if isinstance(datasets, str) else list(datasets)
        asked = [d.name for d in DATASETS.values() if d.name in names or set(d.aliases) & set(names)]
        if not any(filter_names(n) & set(KINDS) for n in asked):
            raise InputError("abi_dir decodes logs (events), transactions and traces (functions): ask for one")
        base = dict(filters)
        if not any("address" in filter_names(n) for n in asked):
            base.pop("address")  # it only names the contracts whose ABIs decode
        template = make(base)
        return cls(folder, tuple(addresses), tuple(asked), base, template)

    def wanted(self, stretch: Stretch) -> list[Wanted]:
        """The series of one stretch: each asked dataset that decodes once per entry of the stretch's ABIs (and of
        ``event=``/``function=`` given besides), the others once; none for a dataset no entry decodes."""
        u256, size = self.template.wanted[0].u256, self.template.wanted[0].chunk_size
        origins: dict[str, str] = {}  # each entry's ABI, for its series' footers (the contract's own before a proxy's)
        for abi in [*stretch.abis, *stretch.proxies]:
            for entry in abi.entries:
                origins.setdefault(entry_key(entry), f"{self._named(abi.file)} sha256:{abi.digest}")
        out: dict[str, Wanted] = {}
        for name in self.datasets:
            own = {k: v for k, v in self.filters.items() if k in filter_names(name)}
            kinds = [k for k in KINDS if k in filter_names(name)]
            if not kinds:
                want = Wanted(dataset=name, filters=check_filters(name, own), u256=u256, chunk_size=size)
                out.setdefault(series_name(name, want.filters, u256), want)
            for kind in kinds:
                given = check_filters(name, own).get(kind) or []  # an event= or function= given with abi_dir
                for entry in [*given, *stretch.entries(kind)]:
                    filters = check_filters(name, own | {kind: [entry]})
                    out.setdefault(
                        series_name(name, filters, u256),
                        Wanted(dataset=name, filters=filters, u256=u256, chunk_size=size,
                               decoded_with=origins.get(entry_key(entry))),
                    )  # fmt: skip
        return list(out.values())

    def _named(self, file: str) -> str:
        """An ABI's file as a footer names it: its path within the folder (a source's URL as it is)."""
        root = str(self.folder.path).rstrip("/") + "/"
        return file[len(root) :] if file.startswith(root) else file

    async def stretches_planned(
        self, client: Any, ranges: Sequence[BlockRange]
    ) -> tuple[list[tuple[list[BlockRange], list[Wanted]]], dict[str, int]]:
        """For a plan: each stretch's blocks and series (those no ABI decodes left out, as a run leaves them), and
        the proxies' reads it took, by method."""
        counted = _Counted(client)
        resolved = await resolve_abis(counted, self.folder, self.addresses, ranges)
        stretches = [([BlockRange(s.first, s.last)], self.wanted(s)) for s in resolved.stretches if s.abis or s.proxies]
        return stretches, dict(counted.calls)

    async def extract(
        self, client: Any, *, once: Mapping[str, Any], confirmations: int, export: Mapping[str, Any] | None
    ) -> RunReport:
        """Resolve the proxies, then run each stretch (``once``: :meth:`Extraction.once`'s options); the reports
        added up. ``export``: :func:`export_series`'s options, per stretch."""
        template = self.template
        ranges = await resolve_blocks(template.spec, client, confirmations=confirmations)
        resolved = await resolve_abis(client, self.folder, self.addresses, ranges)
        reports, found = [], []
        for stretch in resolved.stretches:
            wanted = self.wanted(stretch)
            if not stretch.abis and not stretch.proxies:
                continue  # no ABI decodes these blocks: nothing to decode them with
            run = Extraction(wanted, parse_blocks(f"{stretch.first}:{stretch.last}"), template.folder,
                             template.concurrency, template.verify, layout=template.publisher.layout,
                             chain_family=template.chain_family)  # fmt: skip
            run.publisher = template.publisher  # one claim on each Delta table for the whole run
            result = await run.once(client, confirmations=confirmations, **once)
            if export:
                exported = functools.partial(export_series, run.folder, run.wanted, result, **export)
                await anyio.to_thread.run_sync(exported)
            reports.append(result)
            found.append((stretch, wanted))
        if not reports:
            raise InputError(
                f"no ABI in {self.folder.path} decodes {', '.join(self.addresses)} over the asked blocks: "
                + "; ".join(d.why() for d in resolved.decodings)
            )
        return added_up(reports, resolved, found)


def renamed(found: Sequence[tuple[Stretch, list[Wanted]]]) -> list[str]:
    """Each event or function name decoded into more than one series (its text changed between stretches: other
    types or parameter names, so other columns), in words."""
    by_name: dict[tuple[str, str], dict[str, str]] = {}
    for _, wanted in found:
        for want in wanted:
            for kind in KINDS:
                for text in want.filters.get(kind) or ():
                    name = str(text).split("(")[0]
                    by_name.setdefault((want.dataset, name), {})[series_name(want.dataset, want.filters, want.u256)] = (
                        str(text)
                    )
    return [
        f"{dataset} {name}: {len(series)} series, one per text ({'; '.join(sorted(series.values()))})"
        for (dataset, name), series in sorted(by_name.items())
        if len(series) > 1
    ]


def added_up(
    reports: Sequence[RunReport], resolved: AbisResolved, found: Sequence[tuple[Stretch, list[Wanted]]]
) -> RunReport:
    """One report for the stretches' runs: rows and chunks added up per series, the client's counts (cumulative:
    one client) and the end as the last run's, the blocks from the first run's first to the last's last."""
    datasets: dict[str, dict[str, Any]] = {}
    for report in reports:
        for name, counts in report.datasets.items():
            into = datasets.setdefault(name, {})
            for key, value in counts.items():
                if isinstance(value, int):
                    into[key] = into.get(key, 0) + value
                elif isinstance(value, dict):
                    into[key] = {**into.get(key, {}), **value}
                else:
                    into[key] = value
    first, last = reports[0], reports[-1]
    blocks = (first.blocks[0], last.blocks[1]) if first.blocks and last.blocks else last.blocks
    notes = [
        f"blocks {s.first}..{s.last} decoded with ABI {', '.join(s.digests)}" for s, _ in found
    ] + [
        f"blocks {s.first}..{s.last}: {abi.file}'s {e.get('name')} set aside (the implementation's has its selector)"
        for s, _ in found for abi, e in s.shadowed()
    ] + renamed(found) + [
        f"blocks {s.first}..{s.last}: no ABI decodes them (none in the folder for the code there); not extracted"
        for s in resolved.stretches if not s.abis and not s.proxies
    ]  # fmt: skip
    return replace(
        last,
        started=first.started,
        seconds=round(sum(r.seconds for r in reports), 3),
        blocks=blocks,
        datasets=datasets,
        reorgs=[r for report in reports for r in report.reorgs],
        exports=[e for report in reports for e in report.exports],
        decoded_with=[decoding_json(d, resolved.chain_id) for d in resolved.decodings],
        decoding_notes=notes,
    )
