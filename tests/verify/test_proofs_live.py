"""Devnet proofs (a contract with storage, and an address that never existed) verify against the block headers."""

from __future__ import annotations

import anyio
import pyarrow as pa

from chainframe.datasets import ACCOUNT_PROOFS, BLOCKS, STORAGE_PROOFS, BlockRange
from chainframe.devnet import Devnet
from chainframe.rpc import AsyncClient
from chainframe.verify import verify_tables


def _tables(devnet: Devnet) -> tuple[pa.Table, pa.Table, pa.Table]:
    truth = devnet.truth
    blocks = BlockRange(truth.head - 1, truth.head)
    addresses = [truth.contracts["Store"], "0x" + "00" * 18 + "dead"]
    keys = ["0x" + "00" * 31 + "01", "0x" + "00" * 32, "0x" + "ff" * 32]

    async def main() -> tuple[pa.Table, pa.Table, pa.Table]:
        async with AsyncClient(devnet.http_url) as client:
            chain = truth.chain_id
            return (
                BLOCKS.transform(await BLOCKS.fetch(client, blocks), chain_id=chain),
                ACCOUNT_PROOFS.transform(
                    await ACCOUNT_PROOFS.fetch(client, blocks, addresses=addresses, storage_keys=keys), chain_id=chain
                ),
                STORAGE_PROOFS.transform(
                    await STORAGE_PROOFS.fetch(client, blocks, addresses=addresses, storage_keys=keys), chain_id=chain
                ),
            )

    return anyio.run(main)


def test_devnet_proofs_verify_and_a_changed_value_fails(devnet: Devnet) -> None:
    blocks, accounts, storage = _tables(devnet)
    report = verify_tables(blocks=blocks, account_proofs=accounts, storage_proofs=storage)
    assert report.failures == []
    assert report.rows_verified["account_proofs"] == accounts.num_rows == 4
    assert report.rows_verified["storage_proofs"] == storage.num_rows == 12
    values = storage["storage_value"].to_pylist()
    values[0] = b"\x00" * 31 + (b"\x08" if values[0] == b"\x00" * 31 + b"\x07" else b"\x07")
    column = storage.column_names.index("storage_value")
    tampered = storage.set_column(column, "storage_value", pa.array(values, pa.binary(32)))
    report = verify_tables(blocks=blocks, account_proofs=accounts, storage_proofs=tampered)
    assert [(f.dataset, f.check) for f in report.failures] == [("storage_proofs", "storage_proof")]
