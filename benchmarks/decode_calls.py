"""decode_calls throughput (issue 39): the devnet's transactions tiled to 1M rows; eth-abi per row as the baseline.

Run: POLARS_MAX_THREADS=1 scripts/bench decode_calls
"""

from __future__ import annotations

import time

import pyarrow as pa
from eth_abi import decode  # type: ignore[attr-defined]

import chainframe
from chainframe.decode import decode_calls
from chainframe.devnet import Devnet

FUNCTIONS = {
    "transfer(address to, uint256 amount)": ["address", "uint256"],
    "ping(uint256 nonce, bytes payload)": ["uint256", "bytes"],
}


def main() -> None:
    with Devnet() as devnet:
        transactions = chainframe.collect("transactions", blocks="0:latest", rpc=devnet.node.url)
    tiled = pa.concat_tables([transactions] * (1_000_000 // transactions.num_rows + 1)).combine_chunks()
    decode_calls(transactions, "dive(uint256 depth)")  # imports out of the timing
    for function, types in FUNCTIONS.items():
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            calls = decode_calls(tiled, function)
            best = min(best, time.perf_counter() - start)
        sample = calls["input"].to_pylist()[:20_000]
        start = time.perf_counter()
        for data in sample:
            decode(types, data[4:])
        baseline = len(sample) / (time.perf_counter() - start)
        print(
            f"{function}: {tiled.num_rows:,} transactions, {calls.num_rows:,} calls in {best:.3f} s = "
            f"{calls.num_rows / best / 1e6:.2f} M calls/s ({tiled.num_rows / best / 1e6:.1f} M transactions/s); "
            f"eth-abi per row {baseline / 1e6:.3f} M calls/s"
        )


if __name__ == "__main__":
    main()
