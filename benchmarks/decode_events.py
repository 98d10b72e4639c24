"""Event decoding throughput: the benchmark chain's ERC-20 Transfer logs -> typed columns, rows per second.

Compares, in the same run and on the same logs (extracted from the devnet's benchmark chain, then tiled so a run
lasts long enough to time):
- chainframe: ``erc20_transfers`` on a Polars logs frame (numpy slices of topics and data);
- baseline: eth-abi per row (``decode`` of the data, address slices of the topics), the usual hand-written path,
  into the same Arrow types.

Run: ``scripts/bench decode_events`` (add ``--repeat N``, ``--rows N``). Set ``POLARS_MAX_THREADS=1`` to hold
Polars to one core (the decoding itself is single-threaded numpy). Prints a table; exit code 0 whatever the figures.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import polars as pl
import pyarrow as pa
from eth_abi import decode as abi_decode

import chainframe
from benchmarks import best_rate
from chainframe.decode import ERC20_TRANSFER, parse_event
from chainframe.devnet import BENCH_WORKLOAD, Devnet, GatewaySettings, LogLimits


def _baseline(logs: pl.DataFrame) -> pa.Table:
    topic0 = parse_event(ERC20_TRANSFER).topic0
    rows: dict[str, list[Any]] = {"from_address": [], "to_address": [], "value": []}
    for topics, data in logs.select("topics", "data").iter_rows():
        if len(topics) != 3 or topics[0] != topic0:
            continue
        rows["from_address"].append(topics[1][12:])
        rows["to_address"].append(topics[2][12:])
        rows["value"].append(Decimal(abi_decode(["uint256"], data)[0]))
    types = {"from_address": pa.binary(20), "to_address": pa.binary(20), "value": pa.decimal128(38, 0)}
    return pa.table({k: pa.array(v, types[k]) for k, v in rows.items()})


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="best of N runs per figure")
    parser.add_argument("--rows", type=int, default=1_000_000, help="transfer logs to decode (tiled)")
    args = parser.parse_args(argv)
    print("starting the benchmark devnet and extracting its Transfer logs...")
    with Devnet(workload=BENCH_WORKLOAD, settings=GatewaySettings(limits=LogLimits(max_results=1_000_000))) as devnet:
        topic0 = "0x" + parse_event(ERC20_TRANSFER).topic0.hex()
        logs = chainframe.collect("logs", blocks="0:latest", rpc=devnet.http_url, output="polars", topics=[topic0])
    real = logs.height
    tiled = pl.concat([logs] * max(1, -(-args.rows // real)))
    rows = tiled.height
    assert chainframe.erc20_transfers(logs).height == real == _baseline(logs).num_rows
    ours = best_rate(lambda: chainframe.erc20_transfers(tiled), rows, args.repeat)
    sample = tiled.head(min(rows, 50_000))
    base = best_rate(lambda: _baseline(sample), sample.height, max(1, args.repeat // 2))
    print(f"\n{real:,} Transfer logs on the benchmark chain, tiled to {rows:,}")
    print(f"{'chainframe erc20_transfers':<30}{ours:>14,.0f} rows/s")
    print(f"{'eth-abi per row (baseline)':<30}{base:>14,.0f} rows/s")
    print(f"{'ratio':<30}{ours / base:>14.1f}x")


if __name__ == "__main__":
    main()
