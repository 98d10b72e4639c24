"""The fixed requests of a run, counted by the gateway: each one is a round trip a remote endpoint makes the user wait
for, so they are pinned here (chain id, head and finalized in one batch; no second check after a round that wrote
nothing)."""

from __future__ import annotations

from pathlib import Path

from chainframe.devnet import Devnet
from chainframe.engine import extract


def test_a_small_run_makes_four_requests_and_a_run_with_nothing_to_do_one(devnet: Devnet, tmp_path: Path) -> None:
    assert devnet.gateway is not None
    assert devnet.truth.head - 64 > 40  # blocks 1..40 are final: no witnesses, no recent headers
    report = extract("blocks", blocks="1:40", rpc=devnet.http_url, out=tmp_path, progress=False)
    assert report.datasets["blocks"]["rows"] == 40
    stats = devnet.gateway.stats()
    # chain id + head + finalized (one batch), the blocks (one batch), the chunk's edge headers, the head at the end
    assert stats["http_requests"] == 4, stats
    assert stats["batches"] == 3, stats

    devnet.gateway.reset_stats()
    extract("blocks", blocks="1:40", rpc=devnet.http_url, out=tmp_path, progress=False)
    stats = devnet.gateway.stats()
    assert stats["http_requests"] == 1, stats  # the chain's state; the stored chunk is final, nothing to check


def test_the_check_after_a_round_at_the_head_is_one_request(devnet: Devnet, tmp_path: Path) -> None:
    assert devnet.gateway is not None
    head = devnet.truth.head
    extract("blocks", blocks=f"{head - 29}:{head}", rpc=devnet.http_url, out=tmp_path, chunk_size=100, progress=False)
    stats = devnet.gateway.stats()
    # The chain's state (one batch), the 30 blocks (one batch), the piece's witness header before and after it, the
    # chunk's headers at commit, and after the round the head with the chunk's top header in one batch (two requests
    # when the head was read first).
    assert stats["http_requests"] == 6, stats
    assert stats["calls"]["eth_blockNumber"] == 2, stats  # the chain's state, and the check after the round
