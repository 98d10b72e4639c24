"""Arbitrum Nitro (Arbitrum One, Nova, Sepolia): ArbOS's internal transactions, and the price rule it does not keep.

- The internal transaction ArbOS starts each block with (type 0x6a, ``ArbitrumInternalTx``) is
  ``0x6a || rlp([chainId, data])``, from and to ArbOS's address ``0x...0a4b05``; its receipt encodes as Ethereum's.
- Nitro charges the block's base fee, not ``min(max fee, base fee + tip)``: no header commits to the price paid.
- Its other types (deposits 0x64, unsigned 0x65, contract 0x66, retries 0x68 and 0x69, legacy 0x78) are stored and
  declared unproven until they are declared here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from chainframe._rlp import python_rlp, uint
from chainframe.families._family import ChainFamily, Row, TransactionType

INTERNAL = 0x6A
_READS = ("transaction_chain_id", "input")
ARBOS = bytes.fromhex("00000000000000000000000000000000000a4b05")


def _internal(tx: Row) -> bytes:
    return bytes([INTERNAL]) + python_rlp([uint(tx["transaction_chain_id"]), tx["input"]])


class ArbitrumNitro(ChainFamily):
    name = "arbitrum-nitro"
    doc = "Arbitrum Nitro rollups: ArbOS internal transactions, the base fee as the price paid."
    chain_ids: ClassVar[Mapping[int, str]] = {42161: "Arbitrum One", 42170: "Arbitrum Nova", 421614: "Arbitrum Sepolia"}
    transaction_types: ClassVar[Mapping[int, TransactionType]] = {
        INTERNAL: TransactionType(INTERNAL, "internal", _internal, reads=_READS, needs=_READS, sender=ARBOS)
    }
    columns: ClassVar[Mapping[str, Mapping[str, int | None]]] = {
        "blocks": dict.fromkeys(("send_root", "send_count", "l1_block_number"), None),
        "receipts": dict.fromkeys(("gas_used_for_l1", "l1_block_number"), None),
    }
    unprovable: ClassVar[Mapping[str, str]] = {
        "receipts.effective_gas_price": "Arbitrum charges the block's base fee, not Ethereum's min(max fee, base fee "
        "+ tip), and no header commits to the price paid",
    }

    def header_columns(self, extra_data: bytes, mix_hash: bytes) -> dict[str, Any]:
        """Nitro's header: the send root as its extra data, the send count and L1 block number in its mix hash."""
        return {
            "send_root": extra_data,
            "send_count": int.from_bytes(mix_hash[:8], "big"),
            "l1_block_number": int.from_bytes(mix_hash[8:16], "big"),
        }


ARBITRUM_NITRO = ArbitrumNitro()
