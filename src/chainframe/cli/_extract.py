"""``chainframe extract``: datasets over a block range into Parquet files."""

from __future__ import annotations

import argparse
import json
from typing import Any

from chainframe._errors import InputError
from chainframe.cli._commands import help_of
from chainframe.cli._endpoint import add_endpoint_options
from chainframe.cli._family import add_chain_family
from chainframe.datasets import DATASETS, Input
from chainframe.engine import abi_entries, extract, follow, read_abi
from chainframe.families import family_named
from chainframe.rpc import Pacing

EXAMPLES = """\
examples:
  chainframe extract blocks transactions logs --blocks 0:199 --rpc http://127.0.0.1:8545 --out data
  chainframe extract logs --blocks 18M:+10k --network mainnet --out data \\
      --address 0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48 \\
      --topic0 0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef
  chainframe extract logs --blocks 0:199 --rpc http://127.0.0.1:8545 --out data \\
      --event 'Transfer(address indexed from, address indexed to, uint256 value)'
  chainframe extract receipts --blocks -1000: --network base-mainnet --out data
  chainframe extract blocks logs --blocks 0: --follow --rpc http://127.0.0.1:8545 --out data
  chainframe extract receipts logs --blocks -10k: --network mainnet --out data --dry --credits-per-second 500

re-running into the same --out extends what is there: stored chunks are skipped, the tip chunk is extended, and
every series in the folder is first checked against the chain and repaired where a reorganization took blocks back.
--follow keeps doing that every --poll seconds until Ctrl-C (or SIGTERM).

block ranges (the end is included): A:B, A:+N (N blocks from A), A: (to the safe end), -N: (the last N),
-N:B (the N ending at B), a single block A; numbers take k/M suffixes; tags latest, safe, finalized, earliest.
Without an explicit end a run stops at the safe end (finalized, else latest - confirmations), so it never stores
blocks that can be reorged; write A:latest for the tip.
several ranges: -b 0:10 20:30 (or '0:10,20:30'); a step: A:B:N (every N-th block from A) or A:B/N (N blocks in
all, evenly spaced, both ends included); blocks from Parquet files: -b blocks.parquet[:COLUMN] (block_number by
default; a glob for several files). Only the asked blocks are fetched, except that a chunk file holds one run of
blocks: two ranges inside one chunk have the blocks between them fetched too (a step must be at least the chunk size).

cryo habits: -b/-o, txs and events for transactions and logs, --contract for --address, $ETH_RPC_URL when no --rpc
or --network is given. Where the meaning differs it is said: cryo's A:B leaves B out and its A: goes to latest.
"""


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "extract",
        help=help_of("extract"),
        description="Extract datasets over a block range into Parquet files under OUT/<dataset>/, one file per "
        "chunk of blocks. Re-running skips complete chunks and redoes partial ones.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("datasets", nargs="+", metavar="DATASET", help=f"one or more of: {', '.join(DATASETS)}")
    p.add_argument("-b", "--blocks", required=True, metavar="RANGE",
                   help="block range(s), e.g. 0:999, 18M:+10k, -1000:, '0:10 20:30', 0:1000:100, file.parquet:column; "
                   "the end is included (cryo leaves it out)")  # fmt: skip
    add_endpoint_options(p, several=True)
    p.add_argument(
        "-o", "--out", required=True, metavar="DIR",
        help="output folder or s3://bucket/prefix (one sub-folder per dataset)",
    )  # fmt: skip
    p.add_argument(
        "--chunk-size", type=int, metavar="N", help="blocks per file (default: 1000; 100 for proofs, traces)"
    )
    p.add_argument("--concurrency", type=int, default=4, metavar="N",
                   help="chunks in flight at once (default: 4; per worker with --workers/--scheduler)")  # fmt: skip
    p.add_argument("--overwrite", action="store_true", help="refetch every asked chunk even if it is stored")
    p.add_argument("--align", action="store_true", help="store whole chunks only (the tip waits until it is full)")
    p.add_argument("--follow", action="store_true", help="keep the folder up to date as the chain grows, until Ctrl-C")
    p.add_argument("--poll", type=float, default=12.0, metavar="SECONDS",
                   help="with --follow: seconds between rounds (default: 12)")  # fmt: skip
    p.add_argument("--u256", choices=("decimal", "binary"), default="decimal",
                   help="wei columns as decimal128(38,0) (default) or lossless 32-byte words")  # fmt: skip
    p.add_argument("--confirmations", type=int, default=64, metavar="N",
                   help="blocks kept back from latest when the node has no 'finalized' tag (default: 64)")  # fmt: skip
    p.add_argument(
        "--report", metavar="FILE", help="where to write the JSON run report (default: OUT/.chainframe/runs/)"
    )
    p.add_argument("--table", choices=("parquet", "delta"),
                   help="parquet: a folder of slot files per series (default on a local disk); delta: a Delta Lake "
                   "table per series, with fenced commits and snapshot reads (default for s3://)")  # fmt: skip
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--verify", action="store_true",
                   help="prove every piece's rows against its blocks' headers (and receipts, for logs) before "
                   "keeping them; costs a header (and receipts) fetch per block")  # fmt: skip
    add_chain_family(p)
    p.add_argument(
        "--dry", action="store_true", help="print the plan (chunks, calls, estimated credits); fetch and write nothing"
    )
    out = p.add_argument_group(
        "exports (cryo's output options): the series stay whole, binary Parquet (what resumes, repairs, verifies); "
        "these also write the asked blocks of each as one file OUT/<series>__<first>_to_<last>.<ext>"
    )
    kind = out.add_mutually_exclusive_group()
    kind.add_argument("--csv", dest="format", action="store_const", const="csv", default="parquet",
                      help="a CSV file (binary columns as 0x hex)")  # fmt: skip
    kind.add_argument("--json", dest="format", action="store_const", const="json",
                      help="a JSON file, one object per line (binary columns as 0x hex)")  # fmt: skip
    out.add_argument("--hex", action="store_true", help="a Parquet file with binary columns as 0x hex text")
    out.add_argument("--columns", nargs="+", metavar="COL", help="only these columns, in this order")
    out.add_argument("-i", "--include-columns", nargs="+", metavar="COL",
                     help="cryo's 'add to the defaults': every column is in by default here, so this only checks "
                     "they exist (with --columns: added to them)")  # fmt: skip
    out.add_argument("-e", "--exclude-columns", nargs="+", metavar="COL", help="every column but these")
    out.add_argument("--compression", nargs="+", metavar="NAME [LEVEL]",
                     help="of the export: zstd (default), lz4, snappy, gzip, brotli, uncompressed for Parquet; "
                     "gzip, zstd for CSV and JSON")  # fmt: skip
    pace = p.add_argument_group("pacing (free provider tiers need it: Infura free is 500 credits/s)")
    pace.add_argument("--requests-per-second", type=float, metavar="N", help="at most N JSON-RPC calls per second")
    pace.add_argument("--credits-per-second", type=float, metavar="N", help="at most N provider credits per second")
    pace.add_argument("--max-in-flight", type=int, metavar="N", help="requests in flight at once (default: 16)")
    pace.add_argument("--transport", choices=("http", "ws"), help="http (default) or ws; a ws:// URL means ws")
    dask = p.add_argument_group(
        "distributed (Dask): chunk tasks on worker processes; planning and reorg checks stay here. The pacing "
        "budget is shared by the workers, and several --rpc URLs (keys or providers) are spread over them"
    )
    where = dask.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, metavar="N", help="start N local worker processes for the run")
    where.add_argument("--scheduler", metavar="ADDR",
                       help="run on the Dask cluster of this scheduler, e.g. tcp://10.0.0.5:8786 (workers need "
                       "chainframe installed and --out at the same path)")  # fmt: skip
    logs = p.add_argument_group("logs filters")
    logs.add_argument(
        "--topic0", metavar="T[,T...]",
        help="topic 0: a hash or an event signature such as 'Transfer(address,address,uint256)'; "
        "one value or a comma-separated OR-list",
    )  # fmt: skip
    logs.add_argument(
        "--event", action="append", metavar="SIGNATURE",
        help="decode logs of this event into typed columns (and fetch only them), e.g. 'Transfer(address indexed "
        "from, address indexed to, uint256 value)'; repeatable; or the path of an ABI JSON file",
    )  # fmt: skip
    for i in range(1, 4):
        logs.add_argument(f"--topic{i}", metavar="T[,T...]", help=f"topic {i}: one value or a comma-separated OR-list")
    p.add_argument(
        "--function", action="append", metavar="SIGNATURE",
        help="transactions, traces, eth_calls: keep only the calls of this function, its arguments decoded into typed "
        "columns, e.g. 'transfer(address to, uint256 amount)' (eth_calls: its outputs too, from 'returns (uint256 "
        "x)'); repeatable, or the path of an ABI JSON file (its functions): a series per function",
    )  # fmt: skip
    p.add_argument(
        "--abi", action="append", metavar="ABI.json",
        help="a contract's ABI file: its events decode logs (as --event) and its functions decode transactions and "
        "traces (as --function), for the datasets asked: a series per event and per function; repeatable; or a "
        "contract's address, its ABI read from --abi-dir",
    )  # fmt: skip
    p.add_argument(
        "--abi-dir", metavar="DIR",
        help="a folder of Sourcify (full_match/<chain>/<address>/metadata.json) and Etherscan (<address>.json) ABI "
        "files: each --address decodes with its ABI, a proxy's with its implementation's in force at each block and "
        "its own (see chainframe abi); one series per event and function",
    )  # fmt: skip
    inputs = p.add_argument_group("dataset inputs (each dataset declares the ones it takes: chainframe schema DATASET)")
    for given in dataset_inputs():
        takers = ", ".join(d.name for d in DATASETS.values() if given in d.inputs)
        text = f"{given.help} ({takers})"
        flags = (given.flag, *given.also)
        if given.parse == "switch":
            inputs.add_argument(*flags, dest=given.name, action="store_true", default=None, help=text)
        elif given.parse == "json":
            inputs.add_argument(*flags, dest=given.name, action="append", metavar=given.metavar, help=text)
        else:  # a repeated flag adds to the first one's values (it silently kept the last one's)
            inputs.add_argument(*flags, dest=given.name, nargs="+", action="extend", metavar=given.metavar, help=text)
    p.set_defaults(run=run)


def dataset_inputs() -> list[Input]:
    """Every input some dataset takes that has a plain option (the log filters' topics and events have their own
    syntax, above), once each, in the catalogue's order."""
    found = {i.name: i for d in DATASETS.values() for i in d.inputs if i.parse != "own"}
    return list(found.values())


def client_options(args: argparse.Namespace) -> dict[str, Any]:
    """The client options the pacing and transport flags ask for."""
    options: dict[str, Any] = {}
    if args.requests_per_second or args.credits_per_second or args.max_in_flight:
        options["pacing"] = Pacing(
            requests_per_second=args.requests_per_second,
            credits_per_second=args.credits_per_second,
            **({"max_concurrency": args.max_in_flight} if args.max_in_flight else {}),
        )
    if args.transport:
        options["transport"] = args.transport
    return options


def executor(args: argparse.Namespace) -> str | None:
    """Where the chunk tasks run: ``--workers N`` (local processes) or ``--scheduler ADDR``; None: here."""
    if args.workers is not None:
        if args.workers < 1:
            raise InputError(f"--workers must be at least 1; got {args.workers}")
        return f"local:{args.workers}"
    scheduler: str | None = args.scheduler
    return scheduler


def _topic(text: str | None) -> str | list[str] | None:
    """One topic filter: a value or an OR-list (split at commas outside parentheses, so that an event signature's
    parameters stay together; topic 0's signatures are hashed by the filter check)."""
    if text is None:
        return None
    from chainframe.decode import split_top  # deferred: decode needs numpy; a plain extraction runs without it

    items = split_top(text)
    return items if len(items) > 1 else items[0]


def _signatures(flag: str, kind: str, given: list[str] | None) -> list[Any] | None:
    """``--event`` or ``--function`` values: signatures, or paths of ABI JSON files (their entries of ``kind``); an
    ABI with none of them refused."""
    if not given:
        return None
    found: list[Any] = []
    for value in given:
        if "(" in value:
            found.append(value)
            continue
        article = "an" if kind[0] in "aeiou" else "a"
        entries = abi_entries(read_abi(flag, value, f"neither {article} {kind} signature nor "), kind)
        if not entries:
            raise InputError(f"{flag} {value!r}: the ABI has no {kind} entries")
        found.extend(entries)
    return found


def _filters(args: argparse.Namespace) -> dict[str, Any]:
    topics: list[Any] = [getattr(args, f"topic{i}") for i in range(4)]
    while topics and topics[-1] is None:
        topics.pop()
    filters: dict[str, Any] = {
        "topics": [_topic(t) for t in topics] or None,
        "event": _signatures("--event", "event", args.event),
        "function": _signatures("--function", "function", args.function),
    }
    if args.abi:  # an option, not a filter: the engine reads the files and makes a series of each entry
        filters["abi"] = args.abi
    for given in dataset_inputs():
        value = getattr(args, given.name)
        if given.parse == "json" and value:
            try:
                value = [json.loads(v) for v in value]
            except ValueError as exc:
                raise InputError(f"{given.flag} must be a JSON object: {exc}") from None
        filters[given.name] = value
    return {k: v for k, v in filters.items() if v is not None}


def exports(args: argparse.Namespace) -> dict[str, Any]:
    """The export options the flags ask for (none: no export)."""
    options: dict[str, Any] = {}
    if args.format != "parquet":
        options["format"] = args.format
    if args.hex:
        options["hex"] = True
    if args.columns or args.include_columns:
        options["columns"] = [*(args.columns or ()), *(args.include_columns or ())]
        if not args.columns:  # cryo's include adds to the defaults, which here are every column: a check only
            options["columns"] = None
            options["include_columns"] = args.include_columns
    if args.exclude_columns:
        options["exclude_columns"] = args.exclude_columns
    if args.compression:
        name, *level = args.compression
        if len(level) > 1 or (level and not level[0].isdigit()):
            raise InputError(f"--compression takes a name and an optional level, e.g. 'zstd 3'; got {args.compression}")
        options["compression"] = f"{name}:{level[0]}" if level else name
    return {k: v for k, v in options.items() if v is not None}


def run(args: argparse.Namespace) -> int:
    export = exports(args)
    if args.abi_dir and not args.address and not any(a.startswith("0x") for a in args.abi or ()):
        raise InputError("--abi-dir decodes the contracts --address (or --abi ADDRESS) names: give --address")
    if export and (args.follow or args.dry):
        raise InputError(
            f"exports ({', '.join(export)}) go with a plain run, not --{'follow' if args.follow else 'dry'}"
        )
    if args.dry:
        from chainframe.cli._dry import dry_run  # deferred: --dry's planner and pricing load only with --dry

        if args.chain_family is not None:  # a plan proves nothing, but a name no family has is still refused
            family_named(args.chain_family)
        with_abis = {"abi_dir": args.abi_dir} if args.abi_dir else {}
        return dry_run(args, _filters(args) | with_abis, client_options(args))
    if args.follow:
        return _follow(args)
    if args.abi_dir:
        return _run_abi_dir(args, export)
    report = extract(
        args.datasets,
        blocks=args.blocks,
        out=args.out,
        rpc=args.rpc,
        network=args.network,
        chunk_size=args.chunk_size,
        overwrite=args.overwrite,
        align=args.align,
        concurrency=args.concurrency,
        executor=executor(args),
        u256=args.u256,
        confirmations=args.confirmations,
        progress=False if args.no_progress else None,
        report=args.report,
        verify=args.verify,
        table=args.table,
        client_options=client_options(args),
        chain_family=args.chain_family,
        **export,
        **_filters(args),
    )
    print(report.summary())
    return 0


def _follow(args: argparse.Namespace) -> int:
    import signal
    import sys

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)

    def on_round(report: Any) -> None:
        stored = report.blocks[1] if report.blocks else "nothing new"
        rows = sum(d["rows"] for d in report.datasets.values())
        lag = f", lag {report.head - report.blocks[1]} blocks" if report.blocks else ""
        reorgs = f", {len(report.reorgs)} reorg repairs" if report.reorgs else ""
        print(f"head {report.head}, stored through {stored}{lag}: +{rows:,} rows{reorgs}", flush=True)

    if args.overwrite:
        raise InputError("--overwrite does not go with --follow (each round would refetch everything)")
    try:
        follow(
            args.datasets, blocks=args.blocks, out=args.out, rpc=args.rpc, network=args.network,
            chunk_size=args.chunk_size, concurrency=args.concurrency, executor=executor(args), u256=args.u256,
            confirmations=args.confirmations, poll=args.poll, on_round=on_round, client_options=client_options(args),
            verify=args.verify, table=args.table, chain_family=args.chain_family, abi_dir=args.abi_dir,
            **_filters(args),
        )  # fmt: skip
    except KeyboardInterrupt:
        print("stopped; every stored chunk is whole (re-run to continue)", file=sys.stderr)
        return 0
    return 0


def _run_abi_dir(args: argparse.Namespace, export: dict[str, Any]) -> int:
    """``--abi-dir``: ``extract(..., abi_dir=)`` (:mod:`chainframe.engine._abi_dir`): the asked addresses' ABIs (a
    proxy's implementation's, and its own) found for the asked blocks, each stretch decoded with its ABIs, one series
    per event and function."""
    report = extract(
        args.datasets, blocks=args.blocks, out=args.out, rpc=args.rpc, network=args.network,
        chunk_size=args.chunk_size, overwrite=args.overwrite, align=args.align, concurrency=args.concurrency,
        executor=executor(args), u256=args.u256, confirmations=args.confirmations,
        progress=False if args.no_progress else None, report=args.report, verify=args.verify, table=args.table,
        client_options=client_options(args), chain_family=args.chain_family, abi_dir=args.abi_dir, **export,
        **_filters(args),
    )  # fmt: skip
    print(report.summary())
    return 0
