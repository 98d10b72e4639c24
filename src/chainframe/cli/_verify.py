"""``chainframe verify DIR``: check a folder's datasets against their block headers, offline."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from chainframe._errors import InputError
from chainframe.verify import verify_folder

DESCRIPTION = """\
Check what chainframe stored under DIR against the block headers, without the node:
each block hashes (keccak of its RLP header) to its block_hash and links to the one
before; each block's transactions are the ones its header lists; one receipt per
transaction; per transaction as many logs as its receipt counts, and each block's
logsBloom rebuilt from its logs. Exit status 1 when any check fails; a check that
cannot run (a dataset missing) is shown as skipped, with why.

examples:
  chainframe verify ./data
  chainframe verify ./data --json
"""


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "verify", help="check stored rows against their block headers (offline)", description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    p.add_argument("dir", metavar="DIR", type=Path, help="the output folder given to the extraction")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if not args.dir.is_dir():
        raise InputError(f"{args.dir} is not a folder")
    results = verify_folder(args.dir)
    failed = any(r.failures for r in results)
    if args.json:
        print(json.dumps([asdict(r) for r in results], indent=2))
        return 1 if failed else 0
    for r in results:
        if r.skipped:
            print(f"{r.dataset:<13} skipped  {r.check}: {r.skipped}")
            continue
        state = "FAILED" if r.failures else "ok"
        print(f"{r.dataset:<13} {state:<8} {r.check}: {r.rows:,} rows, {r.blocks:,} blocks")
        for f in r.failures[:20]:
            print(f"    block {f.block}: expected {f.expected}, got {f.got}")
    return 1 if failed else 0
