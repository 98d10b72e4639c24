"""Decoding events: chainframe's vectorized decoder against a per-row Python decode of the same logs, in one run.

On the benchmark devnet chain's logs (read once with ``collect``), both decode the ERC-20 ``Transfer`` logs (topic0,
three topics, from/to/value) into the same values; the baseline walks the rows with ``int.from_bytes`` as a
hand-written loop would. Prints rows/s of each and the ratio. Run: ``scripts/bench events``.
"""

from __future__ import annotations

import time

import polars as pl

from chainframe import collect
from chainframe.devnet import BENCH_WORKLOAD, Devnet
from chainframe.events import erc20_transfers, topic0

TRANSFER = bytes.fromhex(topic0("Transfer(address,address,uint256)")[2:])


def per_row(logs: pl.DataFrame) -> list[tuple[bytes, bytes, int]]:
    out = []
    for topics, data in zip(logs["topics"].to_list(), logs["data"].to_list(), strict=True):
        if len(topics) == 3 and topics[0] == TRANSFER and len(data) == 32:
            out.append((topics[1][12:], topics[2][12:], int.from_bytes(data, "big")))
    return out


def best(function: object, *args: object, repeat: int = 3) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = function(*args)  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return min(times), result


def main() -> None:
    with Devnet(workload=BENCH_WORKLOAD) as devnet:
        logs = collect("logs", blocks="0:latest", rpc=devnet.node.url, output="polars")
    assert isinstance(logs, pl.DataFrame)
    ours_s, ours = best(erc20_transfers, logs)
    base_s, base = best(per_row, logs)
    assert isinstance(ours, pl.DataFrame)
    assert isinstance(base, list)
    assert ours.height == len(base)
    assert [int(v) for v in ours["value"].to_list()] == [v for _, _, v in base]
    n = logs.height
    print(f"{n:,} logs, {ours.height:,} ERC-20 transfers")
    print(f"chainframe erc20_transfers: {ours_s:.3f} s, {n / ours_s:,.0f} logs/s")
    print(f"per-row Python baseline:    {base_s:.3f} s, {n / base_s:,.0f} logs/s")
    print(f"ratio: {base_s / ours_s:.1f}x faster than the per-row loop")


if __name__ == "__main__":
    main()
