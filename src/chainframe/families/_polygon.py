"""Polygon PoS (Bor): headers, transactions and receipts encoded as Ethereum's, and the state-sync transaction.

Bor commits the state syncs from Ethereum (deposits bridged to Polygon) in the first block of a sprint and lists
them as one transaction after the block's others: from and to the zero address, gas, price and signature 0, its hash
keccak("matic-bor-receipt-" || the block number as 8 bytes || the block hash) (bor's ``GetDerivedBorTxHash`` of its
``BorReceiptKey``), and a receipt holding the sync's logs. Neither is in the header's transactions or receipts root:
they are stored, marked ``is_state_sync``, and kept out of the roots; that they are the block's state sync follows
from the hash alone, and what they hold (their logs) from nothing the header commits to.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from chainframe.families._family import ChainFamily

STATE_SYNC_PREFIX = b"matic-bor-receipt-"


class PolygonPos(ChainFamily):
    name = "polygon-pos"
    doc = "Polygon PoS: Ethereum's encodings, and Bor's state-sync transactions kept out of the roots."
    chain_ids: ClassVar[Mapping[int, str]] = {137: "Polygon PoS", 80002: "Polygon Amoy"}
    columns: ClassVar[Mapping[str, Mapping[str, int | None]]] = {
        "transactions": {"is_state_sync": None},
        "receipts": {"is_state_sync": None},
    }
    outside_roots = (
        "Bor's state-sync transaction and its receipt are in neither of the header's roots: that a row is the block's "
        "state sync is proven by its hash (keccak of 'matic-bor-receipt-', the block number and hash), what it holds "
        "(its logs) by nothing"
    )
    outside_roots_column = "is_state_sync"

    def outside_roots_hash(self, number: int, block_hash: bytes) -> bytes | None:
        # Only a Polygon chain's rows need it: pycryptodome's import loads cffi and ctypes, which every run paid
        # for at start-up once the datasets read the families (benchmarks.against_commit), kept for start-up time.
        from chainframe._keccak import keccak256

        return keccak256(STATE_SYNC_PREFIX + number.to_bytes(8, "big") + block_hash)


POLYGON_POS = PolygonPos()
