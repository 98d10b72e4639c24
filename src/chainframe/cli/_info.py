"""``chainframe info DIR``: what an output folder holds, read from the Parquet footers only (fast on any size)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from chainframe.store import folder_info, format_info, series_json

DESCRIPTION = """\
Describe what chainframe wrote under DIR: one sub-folder per dataset (DIR/logs/,
DIR/blocks/, ...), one Parquet file per chunk of blocks. Only the files' footers are
read, so this is fast on any amount of data.

For each dataset it shows:
  blocks    block ranges covered, both ends included (adjacent chunks are joined)
  rows      rows, files and size on disk
  gaps      blocks missing between the covered ranges (extract them again to fill)
  problems  overlapping chunks (reading both duplicates rows); Parquet files that
            are not complete chainframe chunks (foreign, truncated or unfinished:
            they count for nothing); temporary files left by a killed run
Chunks extracted with other filters, chain ids or wei encodings are listed as
separate series.

examples:
  chainframe info ./data
  chainframe info ./data/logs      one dataset folder
  chainframe info ./data --json    the same facts, machine-readable
"""


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "info",
        help="show what an output folder holds: datasets, block ranges, rows, gaps, problems",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=DESCRIPTION,
    )
    p.add_argument("dir", metavar="DIR", type=Path, help="the output folder given to the extraction (e.g. ./data)")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON instead of the report")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    folder: Path = args.dir
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
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
    if args.json:
        print(json.dumps({name: series_json(info) for name, info in infos.items()}, indent=2))
    else:
        print(format_info(infos), end="")
    return 0
