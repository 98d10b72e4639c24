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


def test_erc1155_transfers_take_single_and_batch_logs_one_row_per_id() -> None:
    from chainframe.datasets import ERC1155_TRANSFERS
    from chainframe.datasets._transfers import ERC1155_BATCH_TOPIC0, ERC1155_SINGLE_TOPIC0
    from chainframe.decode import ERC1155_BATCH, ERC1155_SINGLE

    assert "0x" + parse_event(ERC1155_SINGLE).topic0.hex() == ERC1155_SINGLE_TOPIC0
    assert "0x" + parse_event(ERC1155_BATCH).topic0.hex() == ERC1155_BATCH_TOPIC0

    def word(value: int) -> bytes:
        return value.to_bytes(32, "big")

    operator, holder, to = (bytes(12) + bytes([n]) * 20 for n in (1, 2, 3))
    single = {"topics": [bytes.fromhex(ERC1155_SINGLE_TOPIC0[2:]), operator, holder, to], "data": word(7) + word(5)}
    batch_data = (
        word(64) + word(160) + word(2) + word(8) + word(9) + word(2) + word(1) + word(4)
    )  # ids [8, 9], values [1, 4]
    batch = {"topics": [bytes.fromhex(ERC1155_BATCH_TOPIC0[2:]), operator, holder, to], "data": batch_data}
    logs = pa.table({
        "block_number": pa.array([1, 2], pa.uint64()), "log_index": pa.array([0, 0], pa.uint64()),
        "address": pa.array([b"\x11" * 20] * 2, pa.binary(20)),
        "topics": pa.array([single["topics"], batch["topics"]], pa.list_(pa.binary(32))),
        "data": pa.array([single["data"], batch["data"]], pa.binary()),
    })  # fmt: skip
    table = ERC1155_TRANSFERS.from_logs(logs)
    assert table.column_names == list(ERC1155_TRANSFERS.columns)
    assert [(r["block_number"], int(r["token_id"]), int(r["value"]), r["batch_index"]) for r in table.to_pylist()] == [
        (1, 7, 5, 0), (2, 8, 1, 0), (2, 9, 4, 1),
    ]  # fmt: skip


def test_logs_with_event_store_decoded_columns_in_their_own_series(devnet: Devnet, tmp_path: Path) -> None:
    import polars as pl

    from chainframe import decode_event, scan, series_folder

    emitter = devnet.truth.contracts["Emitter"]
    ping = "Ping(address indexed sender, uint256 indexed seq, bytes payload)"
    abi = next(c["abi"] for n, c in _artifacts().items() if n == "Token")
    extract("logs", blocks="0:latest", out=tmp_path, rpc=devnet.http_url, chunk_size=50, progress=False)
    report = extract("logs", blocks="0:latest", out=tmp_path, rpc=devnet.http_url, chunk_size=50, progress=False,
                     event=[ping], address=emitter)  # fmt: skip
    folder = series_folder(tmp_path, "logs", event=[ping], address=emitter)
    assert folder.name.startswith("logs__Ping__f")  # named after its one event (store._series)
    assert folder != series_folder(tmp_path, "logs")  # a filtered series never mixes with the plain one
    stored = scan(tmp_path, "logs", event=[ping], address=emitter).collect()
    plain = scan(tmp_path, "logs").collect()
    expected = decode_event(plain, ping).filter(pl.col("address") == bytes.fromhex(emitter[2:]))
    assert report.datasets["logs"]["rows"] == stored.height == expected.height > 0
    assert stored.columns[-3:] == ["sender", "seq", "payload"]
    assert stored.select("block_number", "log_index", "sender", "seq", "payload").equals(
        expected.select("block_number", "log_index", "sender", "seq", "payload")
    )
    # The same topic0 with another indexed count is kept as a log but not misread: its decoded columns are null.
    wrong = "Ping(address indexed sender, uint256 seq, bytes payload)"
    misfit = collect("logs", blocks="0:latest", rpc=devnet.http_url, event=wrong, address=emitter, output="polars")
    assert misfit.height == stored.height
    assert misfit["seq"].null_count() == misfit.height
    # An ABI's events in one series: Transfer and Approval share the `value` column; the other names are each one's.
    both = collect("logs", blocks="0:latest", rpc=devnet.http_url, event=abi, output="polars")
    assert both.columns[-5:] == ["owner", "spender", "value", "from", "to"]
    transfers = both.filter(pl.col("from").is_not_null())
    reference = erc20_transfers(collect("logs", blocks="0:latest", rpc=devnet.node.url))
    assert transfers["value"].to_list() == reference["value"].to_pylist()
    assert both.filter(pl.col("owner").is_null() & pl.col("from").is_null()).height == 0


def _artifacts() -> dict[str, dict[str, list[dict[str, object]]]]:
    import json
    from importlib import resources

    text = resources.files("chainframe.devnet").joinpath("contracts/artifacts.json").read_text()
    contracts: dict[str, dict[str, list[dict[str, object]]]] = json.loads(text)["contracts"]
    return contracts
