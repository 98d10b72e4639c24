"""Series of one run share the answers of blocks above the finalized block too (engine._shared), and a reorganization
seen by one gives no other stale rows: an answer another series read is handed on with the block hash it carries, a
witness the asker's chunk checks at its commit. On a devnet of the module's own, which the tests reorganize."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from chainframe import extract
from chainframe.datasets import BlockRange
from chainframe.devnet import DEV_ACCOUNTS, Devnet
from chainframe.devnet._node_rpc import NodeRPC
from chainframe.engine._canonical import ChunkCheck, StaleChunk, headers
from chainframe.engine._pieces import PieceTables
from chainframe.engine._shared import SharedAnswers, asking
from chainframe.rpc import AsyncClient
from tests.devnets import chain, module_devnet, node

# the fixtures this module uses: a devnet of its own, whose chain the tests reorganize (tests/devnets.py)
__all__ = ["chain", "module_devnet", "node"]

ABIS = Path(__file__).parent.parent / "data" / "abi"
TOKEN = "0x5fbdb2315678afecb367f032d93f642f64180aa3"  # the devnet's Token (tests/data/abi/full_match/31337)
APPROVE = "0x095ea7b3"  # approve(address,uint256): no call of it near the head on the old fork
BODY = ("eth_getBlockByNumber", (True,))
"""A block's full body: what transactions and four_byte_counts both read."""


def _reorg(node: NodeRPC, depth: int) -> None:
    """Replace the last ``depth`` blocks, the first new one with a transfer (so it differs even from an empty one)."""
    node.call("anvil_reorg", depth, [[{"from": DEV_ACCOUNTS[0], "to": DEV_ACCOUNTS[1], "value": "0x1"}, 0]])


@pytest.mark.anyio
async def test_a_recent_answer_read_before_a_reorg_is_a_witness_the_commit_refuses(
    chain: Devnet, node: NodeRPC
) -> None:
    head = int(node.call("eth_blockNumber"), 16)
    finalized, number = head - 64, head - 3
    call = [("eth_getBlockByNumber", [hex(number), True])]
    async with AsyncClient(chain.node.url) as client:
        shared = SharedAnswers(client, through=finalized)
        for asker in ("a", "b", "c"):
            shared.expect(asker, [BODY])
        first: list[tuple[int, bytes | None, bytes | None]] = []
        with asking("a", first):
            await shared.batch_bytes(call)
        assert first == []  # its own read: its piece's witnesses are read around it
        old = (await headers(client, [number]))[number]
        assert old is not None

        _reorg(node, 8)
        new = (await headers(client, [number]))[number]
        assert new is not None
        assert new.hash != old.hash

        # Another series is handed the answer read before the reorg, with the hash it carries: its commit refuses.
        second: list[tuple[int, bytes | None, bytes | None]] = []
        with asking("b", second):
            await shared.batch_bytes(call)
        assert second == [(number, old.hash, old.hash)]
        check = ChunkCheck("transactions", finalized, witnesses=second)
        with pytest.raises(StaleChunk, match=f"block {number} changed"):
            check.confirm(await headers(client, [number]), blocks=f"{number}..{number}")

        # An asker that keeps no witnesses is not handed it: it asks the node, and gets the new block.
        with asking("c"):
            body = await shared.batch_bytes(call)
        assert new.hash.hex() in body[0].decode()

        # The refused chunk forgets the blocks it read and reads them again: the node's answer, witnessed by its own.
        shared.forget(BlockRange(number, number))
        again: list[tuple[int, bytes | None, bytes | None]] = []
        with asking("b", again):
            body = await shared.batch_bytes(call)
        assert again == []
        assert new.hash.hex() in body[0].decode()

        # The headers the chunks' checks read are never shared above the finalized block.
        assert shared._key("eth_getBlockByNumber", [hex(number), False]) is None
        assert shared._key("eth_getBlockByNumber", [hex(finalized), False]) is not None


def _frames(out: Path) -> dict[str, pl.DataFrame]:
    return {p.name: pl.read_parquet(p / "*.parquet") for p in sorted(out.iterdir()) if not p.name.startswith(".")}


def test_series_share_recent_blocks_and_a_reorg_between_runs_leaves_none_stale(
    chain: Devnet, node: NodeRPC, tmp_path: Path
) -> None:
    """transactions and four_byte_counts read every full body once, above the finalized block too; after a reorg
    the next run's rows equal a clean extraction's from the node."""
    assert chain.gateway is not None
    names = ["transactions", "four_byte_counts"]
    head = int(node.call("eth_blockNumber"), 16)
    first = head - 100  # 64 blocks above the finalized one, 36 below
    extract(names, blocks=f"{first}:{head}", rpc=chain.http_url, out=tmp_path / "run", progress=False, chunk_size=25)
    calls = chain.gateway.stats()["calls"]["eth_getBlockByNumber"]
    # Each body once (101), plus the headers each series' chunks read above the finalized block (64 a series, each
    # piece's witnesses) and the run's chain state: 253. Shared only below the finalized block, the 64 recent bodies
    # were read once a series: 319.
    assert calls <= 101 + 2 * 64 + 40, calls

    _reorg(node, 5)
    extract(names, blocks=f"{first}:latest", rpc=chain.http_url, out=tmp_path / "run", progress=False, chunk_size=25)
    extract(names, blocks=f"{first}:latest", rpc=chain.node.url, out=tmp_path / "clean", progress=False, chunk_size=25)
    got, want = _frames(tmp_path / "run"), _frames(tmp_path / "clean")
    assert got.keys() == want.keys()
    for name in want:
        sort = [c for c in ("block_number", "transaction_index", "selector", "arguments_size") if c in want[name]]
        assert got[name].sort(sort).equals(want[name].sort(sort)), name


def test_a_kin_table_read_before_a_reorg_is_refused_at_the_commit_that_took_it(
    chain: Devnet, node: NodeRPC, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ABI folder's series per function read each piece once (engine._pieces). The chain is reorganized right
    after a series took a piece above the finalized block that another read: the witnesses handed on with the piece
    fail its commit, the chunk is read again, and every series equals a clean extraction's from the node."""
    head = int(node.call("eth_blockNumber"), 16)
    take, moved = PieceTables.take, []

    async def reorganizing(self: PieceTables, kin: Any, piece: BlockRange) -> Any:
        given = await take(self, kin, piece)
        if given[0] is not None and piece.end > head - 64 and not moved:
            # The new fork's first block holds an approve call, which the old fork's last blocks have none of: a
            # series that took the old fork's table and checked only its own rows would miss it.
            call = {"from": DEV_ACCOUNTS[0], "to": TOKEN, "data": APPROVE + "00" * 31 + "01" + "00" * 31 + "07"}
            node.call("anvil_reorg", 3, [[call, 0]])
            moved.append(piece)
        return given

    monkeypatch.setattr(PieceTables, "take", reorganizing)
    options = {"blocks": f"{head - 100}:{head}", "progress": False, "abi_dir": ABIS, "address": TOKEN}
    report = extract("transactions", rpc=chain.http_url, out=tmp_path / "run", **options)
    assert moved, "no series took a piece above the finalized block: the check below would mean nothing"
    assert report.datasets["transactions"]["refetched"] >= 1
    monkeypatch.setattr(PieceTables, "take", take)
    extract("transactions", rpc=chain.node.url, out=tmp_path / "clean", **options)
    got, want = _frames(tmp_path / "run"), _frames(tmp_path / "clean")
    assert len(want) >= 5
    (approvals,) = [f for name, f in want.items() if name.startswith("transactions__approve__")]
    assert approvals.filter(pl.col("block_number") == head - 2).height == 1  # the new fork's call
    assert got.keys() == want.keys()
    for name in want:
        assert (
            got[name]
            .sort("block_number", "transaction_index")
            .equals(want[name].sort("block_number", "transaction_index"))
        ), name
