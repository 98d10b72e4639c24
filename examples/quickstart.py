"""chainframe in a few lines, against the embedded local devnet (no API key, no network).

Run: .venv/bin/python examples/quickstart.py  (after scripts/setup). The notebooks in notebooks/ go further, with
plots. Point `rpc=` at any JSON-RPC URL, or use
`network="mainnet"` with $INFURA_API_KEY, for real chains.
"""

from __future__ import annotations

import tempfile

import polars as pl

import chainframe
from chainframe.datasets import hex_view
from chainframe.devnet import Devnet
from chainframe.rpc import Client


def main() -> None:
    with Devnet() as devnet, tempfile.TemporaryDirectory() as out:
        url = devnet.http_url

        # One call, typed: quantities are ints, hashes and addresses bytes (shown as 0x hex).
        with Client(url) as client:
            block = client.get_block(10, full_transactions=True)
            assert block is not None
            print(f"block {block.number} 0x{block.hash.hex()}: {len(block.transactions)} transactions, "
                  f"base fee {block.base_fee_per_gas} wei")  # fmt: skip

        # A dataset in memory, as a Polars frame: the ERC-20 Transfer logs of the first 100 blocks.
        transfer = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
        logs = chainframe.collect("logs", blocks="0:99", rpc=url, output="polars", topics=[transfer], progress=False)
        print(f"{logs.height} Transfer logs in blocks 0..99")
        print(hex_view(logs.select("block_number", "address", "topics").head(3)))  # binary columns as 0x text

        # Datasets to Parquet, then SQL over the files.
        report = chainframe.extract(["transactions", "receipts"], blocks="0:latest", rpc=url, out=out, progress=False)
        print(report.summary())
        con = chainframe.open_duckdb(out)
        print(
            con.sql("select transaction_type, count(*) as txs, ether(sum(value)) as eth from transactions group by 1")
        )
        print(chainframe.scan(out, "receipts").group_by("status").agg(pl.len()).sort("status").collect())


if __name__ == "__main__":
    main()
