"""The Python API: ``extract`` (files), ``follow`` (files kept up to date as the chain grows), ``repair``,
``off_chain`` and ``verify_stored`` as thin layers over one engine, and their blocking twins (``plan``'s and
``collect``'s are beside their async ones, so an extraction does not load them).

Everything the user gives is checked before any request: datasets, filters, the block range's syntax, the output
folder and the endpoint. The blocking functions run the async ones on a portal thread, so they work in Jupyter.

Each concept has its own module: the client (:mod:`._client`), option checks (:mod:`._options`), where the tasks
run (:mod:`._executor`), the output folder made ready (:mod:`._folder`), exports (:mod:`._exports`), one round of an
extraction (:mod:`._extraction`), the plan (:mod:`._runplan`), ``collect`` (:mod:`._collect`), ``vacuum``
(:mod:`._vacuum`), and reading a folder: ``scan``, ``open_duckdb`` (:mod:`._read`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from chainframe._errors import InputError
from chainframe._twins import carry_over
from chainframe.datasets import U256
from chainframe.engine._canonical import head_and_stale
from chainframe.engine._client import RPC, endpoint_of, endpoints_of, make_client
from chainframe.engine._executor import checked_executor, runner_for
from chainframe.engine._exports import check_columns, check_export, export_series
from chainframe.engine._extraction import Extraction, SeriesAsked
from chainframe.engine._options import abi_of_addresses, abi_origins, whole, with_abi
from chainframe.engine._portal import blocking, typed_errors
from chainframe.engine._ranges import DEFAULT_CONFIRMATIONS, BlocksArg, parse_blocks
from chainframe.engine._report import RunReport
from chainframe.families import family_named
from chainframe.rpc import AsyncClient, Endpoint
from chainframe.store import ExportFormat, Layout, Location, choose_layout, load_series, location, series_folders

if TYPE_CHECKING:
    from chainframe.engine._abi_dir import AbiDirAsked

Blocks = BlocksArg


def _with_abis(
    datasets: str | Sequence[str], abi_dir: Any, filters: Mapping[str, Any], make: Any
) -> AbiDirAsked | None:
    """The run's decoding with an ABI folder's ABIs (``abi_dir``), checked; None without a folder. The folder's modules
    load only then: most runs decode nothing."""
    if abi_dir is None:
        return None
    from chainframe.engine._abi_dir import AbiDirAsked  # deferred: only a run given an ABI folder loads its modules

    return AbiDirAsked.make(datasets, abi_dir, filters, make)


@typed_errors
async def aextract(
    datasets: str | Sequence[str],
    *,
    blocks: Blocks,
    out: str | Location,
    rpc: RPC | None = None,
    network: str | None = None,
    key: str | None = None,
    chunk_size: int | None = None,
    overwrite: bool = False,
    align: bool = False,
    concurrency: int = 4,
    executor: Any = None,
    u256: U256 = "decimal",
    confirmations: int = DEFAULT_CONFIRMATIONS,
    progress: bool | None = None,
    report: str | Location | None = None,
    verify: bool = False,
    table: Layout | None = None,
    client_options: Mapping[str, Any] | None = None,
    format: ExportFormat = "parquet",
    hex: bool = False,
    columns: Sequence[str] | None = None,
    exclude_columns: Sequence[str] | None = None,
    include_columns: Sequence[str] | None = None,
    compression: str | None = None,
    chain_family: str | None = None,
    abi_dir: str | os.PathLike[str] | None = None,
    abi: Any = None,
    **filters: Any,
) -> RunReport:
    """Extract datasets over a block range into the series folders under ``out``; return the run report.

    ``blocks``: ``"A:B"`` (B included), ``"A:+N"``, ``"-N:"``, ``"A:"``, tags, k/M suffixes (see
    :mod:`chainframe.engine._ranges`). Filters: logs ``address``, ``topics``, ``event``; proofs ``addresses``,
    ``storage_keys``; traces ``calls`` (and ``only_top_call``, ``diff_mode``). Stored slots are skipped and a tip
    file is extended; ``overwrite`` refetches every asked slot; ``align`` stores whole chunks only. Every series in
    ``out`` is checked against the chain first and repaired where a reorganization took stored blocks back.
    ``verify``: every piece's rows are proven against its blocks' headers (and receipts, for logs) before they are
    kept; the report counts the blocks and rows verified and names the checks that could not run.
    ``chain_family``: read the chain as this family (``"op-stack"``, ``"arbitrum-nitro"``, ...; see
    ``chainframe.families.FAMILIES``) instead of the one its chain id names; a name no family has, or a family a known
    chain id denies, is refused before any block is asked for. Without it a chain no family knows is read as
    Ethereum, and the report says so (``chain_family_by="assumed"``).

    ``executor``: where the chunk tasks run: this process (None), ``"local:N"`` (N worker processes here), a Dask
    scheduler address or a ``distributed.Client`` (see :mod:`chainframe.engine._dask`); ``concurrency`` is then
    chunks at once per worker. ``rpc`` may list several endpoints (keys or providers).

    ``table``: ``"parquet"`` (a folder of slot files per series, the default on a local disk) or ``"delta"`` (a
    Delta Lake table per series: fenced commits, snapshot reads, time travel; the default for ``s3://``). A folder
    keeps the layout it was started with.

    Exports (cryo's ``--csv``, ``--json``, ``--hex``, ``--columns``): ``format="csv"`` or ``"json"`` (one object per
    line), ``hex=True`` (binary columns as ``0x`` text; always so in CSV and JSON) or ``columns=[...]`` also write
    the asked blocks of each series as one file ``OUT/<series>__<first>_to_<last>.<ext>``, with those columns in
    that order (or every one but ``exclude_columns``), compressed with ``compression`` (``"zstd:3"`` with a level;
    Parquet: zstd, lz4, snappy, gzip, brotli; text: gzip, zstd). ``include_columns``, cryo's "add to the defaults",
    only checks the columns exist: every column is in by default. The series itself stays whole and binary: it is
    what resumes, is repaired and verified. ``report.exports`` lists the files.

    ``abi_dir``: a folder of Sourcify and Etherscan ABI files (as ``--abi-dir``): the contracts ``address`` names
    decoded with their ABIs, a proxy's with its implementation's in force at each block and its own beside it (see
    :mod:`chainframe.engine._abi_dir`): one series per event and function; ``report.decoded_with`` says which ABI
    decoded which blocks, and why.

    ``abi``: a contract's ABI (the path of its JSON file, several paths, or its list of entries; as ``--abi``): its
    events decode ``logs``, a series per event (named after it, as ``event=`` given that event alone writes), and
    its functions ``transactions`` and ``traces``, a series per function (as ``function=`` given it alone writes).
    """
    exporting = check_export(out, format, hex, [*(columns or ()), *(exclude_columns or ())], compression)
    executor = checked_executor(executor)
    abi, abi_dir, filters = abi_of_addresses(abi, abi_dir, filters)  # --abi ADDRESS: its ABI from abi_dir
    filters = with_abi(datasets, filters, abi)
    origins = abi_origins(abi)  # the ABI each entry came from, for the footers

    def make(given: Mapping[str, Any]) -> Extraction:
        return Extraction.make(SeriesAsked(datasets, given, aextract, u256, chunk_size, each=abi is not None,
                                           origins=origins),
                               blocks=blocks, out=out, concurrency=concurrency, verify=verify, table=table,
                               distributed=executor is not None, chain_family=chain_family)  # fmt: skip

    with_abis = _with_abis(datasets, abi_dir, filters, make)
    run = with_abis.template if with_abis else make(filters)
    picked = check_columns(run.wanted, columns, exclude_columns, include_columns)
    first, *more = endpoints = endpoints_of(rpc, network, key)
    once: dict[str, Any] = {"endpoint": first, "overwrite": overwrite, "align": align, "progress": progress}
    exported = {"format": format, "hex": hex, "columns": picked, "compression": compression}
    async with (
        make_client(first, client_options, rpc, more) as client,
        runner_for(executor, endpoints, client_options, rpc, concurrency) as runner,
    ):
        if with_abis is not None:
            result = await with_abis.extract(
                client,
                once=once | {"runner": runner},
                confirmations=confirmations,
                export=exported if exporting else None,
            )
        else:
            result = await run.once(client, confirmations=confirmations, runner=runner, **once)  # fmt: skip
    if exporting and with_abis is None:
        await anyio.to_thread.run_sync(
            functools.partial(export_series, run.folder, run.wanted, result, format=format, hex=hex, columns=picked,
                              compression=compression)
        )  # fmt: skip
    result.save(report if report is not None else result.default_path())
    return result


@typed_errors
async def afollow(
    datasets: str | Sequence[str],
    *,
    blocks: Blocks = ":",
    out: str | Location,
    rpc: RPC | None = None,
    network: str | None = None,
    key: str | None = None,
    poll: float = 12.0,
    rounds: int | None = None,
    on_round: Callable[[RunReport], None] | None = None,
    chunk_size: int | None = None,
    concurrency: int = 4,
    executor: Any = None,
    u256: U256 = "decimal",
    confirmations: int = DEFAULT_CONFIRMATIONS,
    verify: bool = False,
    table: Layout | None = None,
    client_options: Mapping[str, Any] | None = None,
    chain_family: str | None = None,
    abi_dir: str | os.PathLike[str] | None = None,
    abi: Any = None,
    **filters: Any,
) -> RunReport | None:
    """Keep datasets in ``out`` up to date as the chain grows: a round like :func:`aextract` every ``poll`` seconds
    (each extends the series to the range's end, repairing reorganizations first), ``rounds`` times (None: until
    cancelled; Ctrl-C or SIGTERM in the CLI). The range's end is resolved again every round: the default (no end)
    follows the safe end (finalized, else latest minus ``confirmations``); ``"A:latest"`` follows the tip and
    relies on reorg repair. ``on_round(report)`` gets each round's report. Returns the last round's report.
    ``chain_family``: as :func:`aextract`'s. ``abi_dir``: as :func:`aextract`'s, the proxies' slots read again
    every round over the whole range (an upgrade since the last round starts a stretch of its own; the series are
    one per event and function, so the stretches' rows extend the same series).

    Cancelling between two rounds leaves every series as the last round left it; cancelling during a round leaves
    each slot's file as it was or as it became (never half-written), and the next round finishes the job."""
    executor = checked_executor(executor)
    abi, abi_dir, filters = abi_of_addresses(abi, abi_dir, filters)  # --abi ADDRESS: its ABI from abi_dir
    filters = with_abi(datasets, filters, abi)
    origins = abi_origins(abi)  # the ABI each entry came from, for the footers

    def make(given: Mapping[str, Any]) -> Extraction:
        return Extraction.make(SeriesAsked(datasets, given, afollow, u256, chunk_size, each=abi is not None,
                                           origins=origins),
                               blocks=blocks, out=out, concurrency=concurrency, verify=verify, table=table,
                               distributed=executor is not None, chain_family=chain_family)  # fmt: skip

    with_abis = _with_abis(datasets, abi_dir, filters, make)
    run = with_abis.template if with_abis else make(filters)
    if not isinstance(poll, int | float) or isinstance(poll, bool) or poll <= 0:
        raise InputError(f"poll must be a positive number of seconds; got {poll!r}")
    if rounds is not None:
        whole("rounds", rounds)
    first, *more = endpoints = endpoints_of(rpc, network, key)
    last: RunReport | None = None
    rolling: Location | None = None  # one report per follow, rewritten every round (not one file per round)
    done = 0
    async with (
        make_client(first, client_options, rpc, more) as client,
        runner_for(executor, endpoints, client_options, rpc, concurrency) as runner,
    ):
        while rounds is None or done < rounds:
            if done:
                await anyio.sleep(poll)
            once: dict[str, Any] = {"endpoint": first, "overwrite": False, "align": False, "progress": False}
            if with_abis is not None:
                last = await with_abis.extract(client, once=once | {"runner": runner}, confirmations=confirmations,
                                               export=None)  # fmt: skip
            else:
                last = await run.once(client, confirmations=confirmations, runner=runner, **once)
            rolling = rolling or last.follow_path()
            last.save(rolling)
            done += 1
            if on_round is not None:
                on_round(last)
    return last


@typed_errors
async def arepair(
    out: str | Location,
    *,
    rpc: str | Endpoint | None = None,
    network: str | None = None,
    key: str | None = None,
    concurrency: int = 4,
    client_options: Mapping[str, Any] | None = None,
) -> RunReport:
    """Check every series in ``out`` against the chain and rewrite what a reorganization took back (rows below each
    fork block are kept); nothing else is fetched. Every ``extract`` into ``out`` does the same first."""
    folder = location(out)
    if not series_folders(folder):
        raise InputError(f"{folder} holds no dataset folders with chunk files; nothing to repair")
    run = Extraction([], parse_blocks(":"), folder, concurrency, layout=choose_layout(folder, None))
    endpoint = endpoint_of(rpc, network, key)
    async with make_client(endpoint, client_options, rpc) as client:
        result = await run.once(
            client, endpoint=endpoint, overwrite=False, align=False, confirmations=DEFAULT_CONFIRMATIONS,
            progress=False, repair_only=True,
        )  # fmt: skip
    result.save(result.default_path())
    return result


@typed_errors
async def aoff_chain(
    out: str | Location, *, rpc: str | Endpoint | None = None, network: str | None = None, key: str | None = None
) -> list[dict[str, Any]]:
    """The stored chunks under ``out`` that are no longer on the node's chain (nothing is written): series (its
    folder's name, which an older chainframe may have given), file, fork block, and the stored blocks from there on
    that ``repair`` would rewrite."""
    folder = location(out)
    every = [load_series(p) for p in series_folders(folder)]
    async with AsyncClient(endpoint_of(rpc, network, key)) as client:
        _, stale = await head_and_stale(client, every)
    return [
        {"series": r.chunk.folder.name, "file": r.chunk.path.name, "fork_block": r.fork_block,
         "blocks": [r.fork_block, r.chunk.meta.end]}
        for r in stale
    ]  # fmt: skip


def extract(datasets: str | Sequence[str], **options: Any) -> RunReport:
    """Blocking :func:`aextract` (works inside Jupyter's running event loop)."""
    result: RunReport = blocking(aextract, datasets, **options)
    return result


def off_chain(out: str | Location, **options: Any) -> list[dict[str, Any]]:
    """Blocking :func:`aoff_chain`."""
    result: list[dict[str, Any]] = blocking(aoff_chain, out, **options)
    return result


def repair(out: str | Location, **options: Any) -> RunReport:
    """Blocking :func:`arepair`."""
    result: RunReport = blocking(arepair, out, **options)
    return result


def follow(datasets: str | Sequence[str], **options: Any) -> RunReport | None:
    """Blocking :func:`afollow` (works inside Jupyter's running event loop; interrupt the kernel to stop)."""
    result: RunReport | None = blocking(afollow, datasets, **options)
    return result


@typed_errors
async def averify_stored(
    out: str | Location,
    *,
    rpc: str | Endpoint | None = None,
    network: str | None = None,
    key: str | None = None,
    client_options: Mapping[str, Any] | None = None,
    chain_family: str | None = None,
) -> Any:
    """Prove every series stored under ``out`` against the node's headers (and receipts, for logs): a
    :class:`chainframe.verify.Report` (nothing is written). ``chain_family``: as :func:`aextract`'s."""
    from chainframe.engine._stored import averify_stored as prove_folder  # deferred: verify --rpc and its verify wing

    folder = location(out)
    if chain_family is not None:
        family_named(chain_family)  # a name no family has: refused before the client is made
    if not series_folders(folder):
        raise InputError(f"{folder} holds no dataset folders with chunk files; nothing to verify")
    async with make_client(endpoint_of(rpc, network, key), client_options, rpc) as client:
        return await prove_folder(folder, client, chain_family=chain_family)


def verify_stored(out: str | Location, **options: Any) -> Any:
    return blocking(averify_stored, out, **options)


# help(), IPython's ``?`` and editors inspecting live objects show the options and the whole docstring.
for _twin, _coroutine in ((extract, aextract), (follow, afollow), (repair, arepair), (off_chain, aoff_chain),
                          (verify_stored, averify_stored)):  # fmt: skip
    carry_over(_twin, _coroutine)
