"""``chainframe demo``: the main job on the embedded default, end to end.

Start the local devnet (anvil behind the Infura-compatible gateway, Infura's 10,000-result limit), extract blocks,
transactions, receipts and logs of the whole chain into ``./data`` as Parquet, and query the files with DuckDB and
Polars.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from chainframe._redact import redact_url
from chainframe.cli._commands import help_of

DATASETS = ("blocks", "transactions", "receipts", "logs")

QUERY = """
with l as (select block_number, count(*) as logs from logs group by all),
     r as (select block_number, count(*) filter (where status = 0) as reverted, sum(gas_used) as gas_used,
                  sum(gas_used * effective_gas_price) / 1e18 as fees_eth
           from receipts group by all)
select b.block_number, b.block_time, b.transaction_count as txs, r.reverted, l.logs, r.fees_eth,
       hex0x(b.block_hash)[:18] || '..' as block_hash
from blocks b join r using (block_number) join l using (block_number)
order by l.logs desc, b.block_number limit 5
"""


DESCRIPTION = """\
The main job on the embedded default, end to end: start the local devnet (anvil
behind the Infura-compatible gateway, with Infura's 10,000-result limit), extract
blocks, transactions, receipts and logs of its whole chain into ./data as Parquet,
and query the files with DuckDB and Polars. Needs no key and no network.
"""


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "demo",
        help=help_of("demo"),
        description=DESCRIPTION,  # plain text: the module docstring's reST markup is for readers of the code
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--out", type=Path, default=Path("data"), help="output folder (default: ./data)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import polars as pl  # here, not at the top: every other command would pay for the devnet's import

    from chainframe.devnet import Devnet  # deferred: the devnet and httpx

    # deferred: every command builds this parser; the engine loads when it runs
    from chainframe.engine import extract, open_duckdb, scan

    print("starting the local devnet (the first start builds and caches the workload chain)...")
    with Devnet() as devnet:
        truth = devnet.truth
        print(f"devnet: {redact_url(devnet.http_url)} (and {redact_url(devnet.ws_url)})")
        print(
            f"chain {truth.chain_id}: blocks 0..{truth.head}, {truth.tx_count:,} transactions, {truth.log_count:,} logs"
        )
        print(f"\nchainframe extract {' '.join(DATASETS)} --blocks 0:latest --out {args.out}")
        report = extract(list(DATASETS), blocks="0:latest", out=args.out, rpc=devnet.http_url, progress=False)
    print(report.summary())

    print("\nDuckDB, over the Parquet files (one view per series folder):")
    con = open_duckdb(args.out)
    print(con.sql(QUERY))
    totals = con.execute("select count(*), count(*) filter (where status = 0), sum(log_count) from receipts").fetchone()
    assert totals is not None
    print(f"{totals[0]:,} transactions, {totals[1]:,} reverted, {totals[2]:,} logs (from the receipts)\n")

    print("Polars, lazily scanning the logs files: logs per topic count")
    per_topics = (
        scan(args.out, "logs")
        .group_by(pl.col("topics").list.len().alias("topics"))
        .agg(pl.len().alias("logs"))
        .sort("topics")
        .collect()
    )
    print(per_topics)
    return 0
