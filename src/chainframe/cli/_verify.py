"""``chainframe verify DIR``: prove the stored rows against the stored block headers (offline), or against the node's
(``--rpc``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chainframe._errors import InputError
from chainframe.cli._commands import help_of
from chainframe.cli._endpoint import add_endpoint_options
from chainframe.cli._family import add_chain_family

if TYPE_CHECKING:  # imported by the command that uses it: an extract does not pay for verification
    from chainframe.verify import Report

NOT_ALL_CHECKED = 3
"""Exit code when every check that ran passed but some were skipped: distinct from 0 (all proven), 1 (a check
failed) and 2 (bad input), so a script cannot take a partly checked folder for a proven one."""

DESCRIPTION = """\
Check what chainframe wrote under DIR (DIR/blocks, DIR/transactions, DIR/receipts,
DIR/logs, DIR/uncles, DIR/account_proofs, DIR/storage_proofs) against the block
headers stored in DIR/blocks, without the network:

  block_hash   keccak(RLP(header)) equals the stored hash: the block columns are the header
  transactions_root, transaction_hash
               the transactions (types 0-4, signatures) rebuild the root and their hashes
  withdrawals_root  the block's withdrawals rebuild the header's root
  sha3_uncles, uncle_hash  the stored uncle headers rebuild the nephew's sha3Uncles
  account_proof, storage_proof  eth_getProof answers against stateRoot / storageHash
  row_count    one transaction and one receipt row per transaction of each block
  logs_bloom   the bloom of each block's logs equals the header's logsBloom
  log_count    every log of every receipt is stored once (receipts' log_count)
  log_unique   no (block, log_index) is stored twice
  receipts_root  the receipts and their logs rebuild the header's receiptsRoot

  log_set      a series made of logs (logs__f..., erc20_transfers, ...) is exactly
               what its dataset makes of the raw logs (in DIR/logs, proven with their
               receipts) that its filter matches

The folder is read one blocks file at a time (memory bounded by a chunk). Series
made of logs with no proven raw logs beside them, and proofs, need the node:

  --rpc URL    prove every series in DIR against the node's headers and receipts
               (logs: exactly the receipts' logs that match the filter, decoded
               columns included; proofs; traces are listed as not provable).
               The plain series stored together prove each other as offline,
               and only their headers' hashes are asked of the node.

The rules are the chain family's its chain id names (Ethereum's for a chain no family
knows); --chain-family NAME reads the rows as another's (an OP-mode devnet, say):
a family a known chain id denies is refused before anything is checked.

Checks that cannot run (a dataset missing, a header field not stored) are listed
as skipped, never as passed, and the last line says how many series they touch.

exit codes:
  0  every check passed and nothing was skipped: all of DIR is proven
  1  a check failed (or the node or the files could not be read)
  2  bad input: DIR is not a folder, holds nothing to verify, or an option is wrong
  3  every check that ran passed, but something was skipped (listed): not all of DIR is proven

examples:
  chainframe verify ./data
  chainframe verify ./data --json
  chainframe verify ./data --rpc http://127.0.0.1:8545
"""


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "verify",
        help=help_of("verify"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=DESCRIPTION,
    )
    p.add_argument("dir", metavar="DIR", help="folder chainframe extracted into")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add_endpoint_options(p, required=False)
    add_chain_family(p)
    p.set_defaults(run=run)


def format_report(report: Report) -> str:
    lines = []
    for name in sorted(report.blocks_verified):
        lines.append(
            f"{name:<13} {report.blocks_verified[name]:>9,} blocks  {report.rows_verified[name]:>11,} rows checked"
        )
    for s in report.skipped:
        lines.append(f"skipped  {s.dataset} {s.check} for {s.blocks:,} blocks: {s.reason}")
    for (dataset, what), blocks in report.notes.items():
        lines.append(f"note     {dataset} for {blocks:,} blocks: {what}")
    for f in report.failures:
        lines.append(f"FAILED   {f.dataset} block {f.block_number} {f.check}: stored {f.expected}, computed {f.actual}")
    if report.failures:
        lines.append(f"{len(report.failures)} check(s) failed")
    elif report.skipped:
        checks: dict[str, list[str]] = {}
        for s in report.skipped:
            checks.setdefault(s.dataset, []).append(s.check)
        named = ", ".join(f"{name} ({', '.join(sorted(set(checks[name])))})" for name in sorted(checks))
        lines.append(f"passed, but not all checked: {len(checks)} series skipped in whole or part: {named}; why above")
    else:
        lines.append("verified: all checks passed")
    return "\n".join(lines)


def exit_code(report: Report) -> int:
    """1: a check failed; 3: nothing failed but something was skipped (not proven); 0: everything proven."""
    return 1 if report.failures else NOT_ALL_CHECKED if report.skipped else 0


def run(args: argparse.Namespace) -> int:
    # deferred: every command builds this parser; the store loads when it runs
    from chainframe.store import ObjectPath, location

    folder = location(args.dir)
    if args.rpc or args.network:
        # deferred: every command builds this parser; the engine loads when it runs
        from chainframe.engine import verify_stored

        report = verify_stored(folder, rpc=args.rpc, network=args.network, chain_family=args.chain_family)
    elif isinstance(folder, ObjectPath):
        raise InputError(f"{folder} is a bucket: verify it against the node with --rpc URL (offline reads folders)")
    elif not Path(folder).is_dir():
        raise InputError(f"{folder} is not a folder")
    else:
        # deferred: the verify wing (chainframe.verify), only when verifying
        from chainframe.verify import verify_folder

        report = verify_folder(folder, chain_family=args.chain_family)
    if not report.blocks_verified and not report.skipped:
        raise InputError(f"{folder} holds no blocks, transactions, receipts or logs to verify")
    print(json.dumps(report.as_dict(), indent=2) if args.json else format_report(report), file=sys.stdout)
    return exit_code(report)
