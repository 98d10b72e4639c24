"""The transfer datasets: fetched with eth_getLogs by the Transfer topic0, decoded, written to series folders like any
other dataset, and equal to the in-memory decoding of the same logs."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from chainframe import collect, erc20_transfers, extract
from chainframe.datasets import ERC20_TRANSFERS, ERC721_TRANSFERS
from chainframe.datasets._transfers import TRANSFER_TOPIC0
from chainframe.decode import ERC20_TRANSFER, ERC721_TRANSFER, parse_event
from chainframe.devnet import Devnet

KEYS = ["block_number", "log_index", "address", "from_address", "to_address", "value"]


def test_the_datasets_decode_the_decoders_events() -> None:
    assert (ERC20_TRANSFERS.event, ERC721_TRANSFERS.event) == (ERC20_TRANSFER, ERC721_TRANSFER)
    assert "0x" + parse_event(ERC20_TRANSFER).topic0.hex() == TRANSFER_TOPIC0


def test_transfer_datasets_extract_into_series_folders_like_any_other(devnet: Devnet, tmp_path: Path) -> None:
    token = devnet.truth.contracts["Token"]
    report = extract(["erc20_transfers", "erc721_transfers"], blocks="0:latest", out=tmp_path, rpc=devnet.http_url,
                     chunk_size=50, progress=False)  # fmt: skip
    stored = pa.concat_tables([pq.read_table(p) for p in sorted((tmp_path / "erc20_transfers").glob("*.parquet"))])
    reference = erc20_transfers(collect("logs", blocks="0:latest", rpc=devnet.node.url))
    assert report.datasets["erc20_transfers"]["rows"] == reference.num_rows > 100
    assert stored.select(KEYS).equals(reference.select(KEYS))
    assert stored.column_names == list(ERC20_TRANSFERS.columns)
    assert report.datasets["erc721_transfers"]["rows"] == 0
    one = extract("erc20_transfers", blocks="0:latest", out=tmp_path / "one", rpc=devnet.http_url, address=token,
                  progress=False)  # fmt: skip
    assert 0 < one.datasets["erc20_transfers"]["rows"] <= reference.num_rows
