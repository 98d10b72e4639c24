"""Nodes that differ from anvil in ways real ones do (issues 26 and 31), played by the gateway in front of the devnet:
no eth_getBlockReceipts (in geth's, Hardhat's and Ganache's words, or a gateway's HTTP 404/405), receipts without
``blockTimestamp``, no ``finalized`` block. Each run's rows must equal, row by row, those of a run against the devnet
as it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from chainframe.cli import main
from chainframe.devnet import Devnet, GatewaySettings, LogLimits, MissingMethod, OmitKeys
from chainframe.devnet.gateway import NodeKind
from chainframe.engine import extract, verify_stored
from chainframe.rpc import Client, MethodNotFound

RECEIPTS = "eth_getBlockReceipts"
CHUNK = 60  # four chunks of the test chain: the missing method must be learned once, not per chunk


def _configure(devnet: Devnet, **settings: Any) -> None:
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(**settings))
    devnet.gateway.reset_stats()


def _calls(devnet: Devnet) -> dict[str, int]:
    assert devnet.gateway is not None
    calls: dict[str, int] = devnet.gateway.stats()["calls"]
    return calls


def _rows(out: Path, dataset: str) -> pl.DataFrame:
    keys = ["block_number", "log_index" if dataset == "logs" else "transaction_index"]
    return pl.read_parquet(out / dataset / "*.parquet").sort(keys)


@pytest.fixture(scope="module")
def reference(devnet_session: Devnet, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """receipts and logs of the whole chain, read from the devnet as it is (eth_getBlockReceipts served)."""
    out = tmp_path_factory.mktemp("reference")
    _configure(devnet_session)
    head = devnet_session.truth.head
    extract(["receipts", "logs"], blocks=f"0:{head}", out=out, rpc=devnet_session.http_url, chunk_size=CHUNK)
    return out


@pytest.mark.parametrize("like", ["geth", "hardhat", "ganache", "http_404", "http_405"])
def test_receipts_by_transaction_where_the_node_lacks_eth_getblockreceipts(
    devnet: Devnet, reference: Path, tmp_path: Path, like: NodeKind
) -> None:
    _configure(devnet, missing=(MissingMethod(method=RECEIPTS, like=like),))
    chunk = CHUNK // 2  # two chunks of 30: the rows of the chain's first quarter, five times over (one a wording)
    end = 2 * chunk - 1
    argv = ["extract", "receipts", "logs", "--blocks", f"0:{end}", "--chunk-size", str(chunk), "--verify",
            "--rpc", devnet.http_url, "--out", str(tmp_path), "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    for dataset in ("receipts", "logs"):
        expected = _rows(reference, dataset).filter(pl.col("block_number") <= end)
        assert _rows(tmp_path, dataset).equals(expected), dataset
    calls = _calls(devnet)
    transactions = sum(devnet.truth.txs_per_block()[: end + 1])
    assert calls["eth_getTransactionReceipt"] >= transactions  # every transaction's receipt, by transaction
    # Asked by the first pieces in flight only: each piece and each piece's proof asking would be 4 calls a block.
    assert calls[RECEIPTS] < end + 1
    report = verify_stored(tmp_path, rpc=devnet.http_url)
    assert report.ok, report.failures
    assert report.rows_verified["receipts"] == transactions
    assert report.rows_verified["logs"] == sum(devnet.truth.logs_per_block()[: end + 1])


def test_a_run_asks_for_the_missing_method_once(devnet: Devnet, reference: Path, tmp_path: Path) -> None:
    _configure(devnet, missing=(MissingMethod(method=RECEIPTS),))
    # Blocks 0..119: two chunks, the second of which must not ask again.
    report = extract(["receipts"], blocks=f"0:{2 * CHUNK - 1}", out=tmp_path, rpc=devnet.http_url, chunk_size=CHUNK)
    assert report.datasets["receipts"]["written"] == 2
    # Once, before any work (the run's routes are picked from the node's answers), then never again.
    assert _calls(devnet)[RECEIPTS] == 1
    assert _rows(tmp_path, "receipts").equals(_rows(reference, "receipts").filter(pl.col("block_number") < 2 * CHUNK))
    assert report.missing_methods == {
        RECEIPTS: "the method eth_getBlockReceipts does not exist/is not available [-32601]"
    }
    assert "eth_getBlockReceipts not served by the node (the method" in report.summary()
    assert (
        "receipts read by eth_getBlockByNumber + eth_getTransactionReceipt (the node lacks eth_getBlockReceipts)"
        in (report.summary())
    )


def test_the_client_raises_the_typed_error_and_remembers_the_method(devnet: Devnet) -> None:
    _configure(devnet, missing=(MissingMethod(method=RECEIPTS, like="hardhat"),))
    with Client(devnet.http_url, batch_size=4) as client:
        with pytest.raises(MethodNotFound, match="Method eth_getBlockReceipts is not supported"):
            client.batch_bytes([(RECEIPTS, [hex(n)]) for n in range(1, 20)])  # several batches: never a group
        assert client.missing_methods == {RECEIPTS: "Method eth_getBlockReceipts is not supported [-32004]"}


def test_logs_of_a_block_over_the_limit_from_receipts_by_transaction(
    devnet: Devnet, reference: Path, tmp_path: Path
) -> None:
    per_block = devnet.truth.logs_per_block()
    most = max(per_block)
    _configure(devnet, limits=LogLimits(max_results=most - 1), missing=(MissingMethod(method=RECEIPTS),))
    # The 20 blocks up to and past the block with the most logs, in two chunks: every range of blocks is over the
    # limit and is split, down to that one block, which no eth_getLogs can serve whole.
    fullest = per_block.index(most)
    first, last = max(0, fullest - 15), min(len(per_block) - 1, fullest + 4)
    report = extract(["logs"], blocks=f"{first}:{last}", out=tmp_path, rpc=devnet.http_url, chunk_size=10)
    assert report.receipt_fallbacks > 0  # a block eth_getLogs could not serve whole was read from its receipts
    assert _calls(devnet)["eth_getTransactionReceipt"] > 0
    expected = _rows(reference, "logs").filter(pl.col("block_number").is_between(first, last))
    assert _rows(tmp_path, "logs").equals(expected)


SHAPES = {
    "none": (OmitKeys(methods=(RECEIPTS, "eth_getTransactionReceipt", "eth_getLogs"), keys=("blockTimestamp",)),),
    "erigon": (OmitKeys(methods=(RECEIPTS, "eth_getTransactionReceipt"), keys=("blockTimestamp",), nested=False),),
}
"""Where a node leaves ``blockTimestamp`` off: everywhere (geth before 1.14, Hardhat, Ganache), or off the receipts
while their logs carry it (Erigon; the recorded Polygon and Arbitrum answers)."""


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("by_transaction", [False, True], ids=["eth_getBlockReceipts", "by transaction"])
def test_receipts_without_blocktimestamp_take_their_headers(
    devnet: Devnet, reference: Path, tmp_path: Path, by_transaction: bool, shape: str
) -> None:
    """Receipts and logs stored with their block's timestamp, judged object by object: an answer that holds the key
    on its logs but not on its receipts is no answer that holds it."""
    missing = (MissingMethod(method=RECEIPTS),) if by_transaction else ()
    _configure(devnet, omit=SHAPES[shape], missing=missing)
    with Client(devnet.http_url) as client:  # the gateway really leaves it out, where the shape says
        logged = next(tx for tx in devnet.truth.txs if tx.logs)
        receipt = client.request("eth_getTransactionReceipt", [logged.hash])
        assert "blockTimestamp" not in receipt
        assert [("blockTimestamp" in log) for log in receipt["logs"]] == [shape == "erigon"] * logged.logs
    end = CHUNK - 1  # blocks 0..59 in two chunks: 405 receipts and 3,570 logs, each stamped from a header
    extract(["receipts", "logs"], blocks=f"0:{end}", out=tmp_path, rpc=devnet.http_url,
            chunk_size=CHUNK // 2)  # fmt: skip
    for dataset in ("receipts", "logs"):
        rows = _rows(tmp_path, dataset)
        expected = _rows(reference, dataset).filter(pl.col("block_number") <= end)
        assert rows["block_timestamp"].null_count() == 0, dataset
        assert rows.equals(expected), dataset


def test_a_dataset_without_block_timestamp_reads_no_header_for_one(devnet: Devnet, tmp_path: Path) -> None:
    """address_appearances reads the receipts but has no block_timestamp column: where the receipts lack
    ``blockTimestamp`` it asks no header for it (receipts asks one per block), and its rows are those of a node that
    sends it."""
    end = CHUNK - 1
    calls, tables = [], []
    for shape in ((), SHAPES["none"]):
        _configure(devnet, omit=shape)
        out = tmp_path / str(len(shape))
        extract("address_appearances", blocks=f"0:{end}", out=out, rpc=devnet.http_url, chunk_size=CHUNK)
        calls.append(_calls(devnet))
        tables.append(pl.read_parquet(out / "address_appearances" / "*.parquet"))
    assert calls[0] == calls[1]  # the same calls, headers included
    assert calls[1]["eth_getBlockReceipts"] > end  # the receipts were read (with the timestamps left out)
    assert tables[0].height > 0
    assert tables[0].equals(tables[1])
