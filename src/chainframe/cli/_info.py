"""``chainframe info DIR``: what an output folder holds, read from the Parquet footers only (fast on any size)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from chainframe import engine
from chainframe._errors import InputError
from chainframe.cli._commands import help_of
from chainframe.cli._endpoint import add_endpoint_options
from chainframe.store import folder_info, format_info, location, other_files, series_json, storage

DESCRIPTION = """\
Describe what chainframe wrote under DIR: one sub-folder per dataset (DIR/logs/,
DIR/blocks/, ...), one Parquet file per chunk of blocks. Only the files' footers are
read, so this is fast on any amount of data.

For each dataset it shows:
  blocks    block ranges covered, both ends included (adjacent chunks are joined)
  rows      rows, files and size on disk
  gaps      blocks missing between the covered ranges (extract them again to fill)
  problems  Parquet files that are not chunks of the series (a glob would read
            them; open_duckdb leaves them out), damaged chunk files, adjacent chunks whose block hashes do
            not link, temporary files left by a killed run
Each series (a dataset with its filters and wei encoding) has a folder of its own,
shown with its filters in clear. With --check and an endpoint, stored chunks are
also compared with the node's chain (one header per linked run of chunks) and
those a reorganization took back are listed; 'chainframe repair DIR' rewrites them.
Files and folders in DIR that are not chainframe's are listed last.

examples:
  chainframe info ./data
  chainframe info ./data/logs      one dataset folder
  chainframe info ./data --json    the same facts, machine-readable
  chainframe info ./data --check --rpc http://127.0.0.1:8545
  chainframe info s3://bucket/prefix   a bucket (credentials and endpoint: the AWS_* variables)
"""


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "info",
        help=help_of("info"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=DESCRIPTION,
    )
    p.add_argument("dir", metavar="DIR", help="the output folder given to the extraction (./data, s3://bucket/prefix)")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON instead of the report")
    p.add_argument("--check", action="store_true", help="also compare the stored chunks with the node's chain")
    add_endpoint_options(p, required=False)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    folder = location(args.dir)
    if not storage(folder).exists(folder):
        what = "is not a folder" if isinstance(folder, Path) and folder.exists() else "does not exist"
        print(f"error: {folder} {what}", file=sys.stderr)
        return 1
    infos = folder_info(folder)
    if not any(info.chunks for info in infos.values()):
        found = sum(len(info.foreign) for info in infos.values())
        detail = f" ({found} Parquet files, none a complete chainframe chunk)" if found else ""
        print(
            f"error: {folder} holds no chainframe datasets{detail}; expected sub-folders like {folder}/logs/ "
            "with files written by a chainframe extraction",
            file=sys.stderr,
        )
        return 1
    off: list[dict[str, Any]] = []
    if args.check:
        if args.rpc is None and args.network is None:
            raise InputError("--check needs the node: add --rpc URL or --network NAME")
        off = engine.off_chain(folder, rpc=args.rpc, network=args.network)
    others = other_files(folder)
    if args.json:
        report: dict[str, Any] = {name: series_json(info) for name, info in infos.items()}
        if args.check:
            for name, info in report.items():
                info["off_chain"] = [o for o in off if o["series"] == name]
        if others:
            report[".other_files"] = others  # a key no series folder can have (hidden names are not series)
        print(json.dumps(report, indent=2))
        return 1 if off else 0
    print(format_info(infos), end="")
    if others:
        print(f"\nnot chainframe's (left alone; a glob over {folder} would read the Parquet ones):")
        print("".join(f"  {name}\n" for name in others), end="")
    if args.check:
        if not off:
            print("\nchecked against the node: every stored block is on its chain")
            return 0
        print("\noff the node's chain (a reorganization since they were written):")
        for o in off:
            print(
                f"  {o['series']}/{o['file']}: blocks {o['blocks'][0]}..{o['blocks'][1]} (forked at {o['fork_block']})"
            )
        print(f"repair: chainframe repair {folder} --rpc URL (or re-run the extraction into {folder})")
        return 1
    return 0
