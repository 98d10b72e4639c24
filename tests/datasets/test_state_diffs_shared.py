"""The four diff datasets in one run ask each block's replay once (engine._shared: the datasets declare the call as a
block's whole, ``block_params``, and the debug_traceBlockByNumber route's, ``block_fallbacks``, which the devnet's anvil
serves), with the rows of each extracted alone. Counted by the gateway on the real devnet, below its finalized block
(answers above it are asked again)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from chainframe import extract
from chainframe.devnet import Devnet

DIFFS = ["balance_diffs", "nonce_diffs", "code_diffs", "storage_diffs"]


def test_the_four_diff_datasets_ask_each_block_replay_once(devnet: Devnet, tmp_path: Path) -> None:
    assert devnet.gateway is not None
    last = min(40, devnet.truth.head - 70)
    assert last >= 20
    blocks = last + 1
    before = devnet.gateway.stats()["calls"].get("debug_traceBlockByNumber", 0)
    extract(DIFFS, blocks=f"0:{last}", rpc=devnet.http_url, out=tmp_path / "together", progress=False)
    calls = devnet.gateway.stats()["calls"]["debug_traceBlockByNumber"] - before
    # Unshared, each of the four asks every block's: 4 * blocks. Shared, once, beside the probe's route check.
    assert blocks <= calls <= blocks + 4, calls

    for name in DIFFS:  # the same rows as each extracted alone
        extract([name], blocks=f"0:{last}", rpc=devnet.http_url, out=tmp_path / name, progress=False)
        alone = pl.read_parquet(next((tmp_path / name).glob(f"{name}*")) / "*.parquet")
        together = pl.read_parquet(next((tmp_path / "together").glob(f"{name}*")) / "*.parquet")
        assert alone.height > 0, name
        assert together.equals(alone), name
