"""``chainframe vacuum DIR``: free the space of chunk files that later commits replaced."""

from __future__ import annotations

import argparse
from typing import Any

from chainframe.cli._commands import help_of
from chainframe.engine import DEFAULT_RETENTION_HOURS, vacuum

DESCRIPTION = f"""\
In each Delta table under DIR (--table delta), delete the data files that commits
removed (a tip extended, a reorg repaired) at least --retention-hours ago, and the
log entries past that retention; in plain Parquet folders, the temporaries of killed
runs. Files newer than the retention stay: a reader holding an older snapshot, or a
time-travel query (scan(..., version=N)), still reads them. Holds DIR's lock and
claims each table, as a run does: a paused run's later commit of files deleted here
is refused, so no version of a table names a deleted file.

examples:
  chainframe vacuum ./data                       # keeps {DEFAULT_RETENTION_HOURS:g} hours (a week)
  chainframe vacuum s3://bucket/chains/mainnet --retention-hours 24
"""


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "vacuum",
        help=help_of("vacuum"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=DESCRIPTION,
    )
    p.add_argument("dir", metavar="DIR", help="the output folder given to the extraction (./data, s3://bucket/prefix)")
    p.add_argument("--retention-hours", type=float, default=DEFAULT_RETENTION_HOURS, metavar="H",
                   help=f"keep files removed less than H hours ago (default: {DEFAULT_RETENTION_HOURS:g})")  # fmt: skip
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    deleted = vacuum(args.dir, retention_hours=args.retention_hours)
    for series, count in deleted.items():
        print(f"{series:<28} {count:>6,} files deleted")
    return 0
