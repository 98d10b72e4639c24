"""Avalanche C-Chain (coreth): the header's own fields, and the atomic transactions no transactions root holds.

- The header is Ethereum's first fifteen fields and ``extDataHash``, then, as its forks appended them: the base fee
  (Apricot 3), ``extDataGasUsed`` and ``blockGasCost`` (Apricot 4), the blob gas fields and beacon root (Cancun, as
  zeros), and ``timestampMilliseconds`` and ``minDelayExcess`` (Granite); no withdrawals root, no requests hash.
  The block hash is keccak of that list (proven on recorded mainnet headers of Apricot 4, Cancun and Granite,
  ``tests/verify/test_more_networks.py``).
- Atomic transactions (imports and exports between the C-Chain and Avalanche's other chains) are the block's
  ``blockExtraData``: in no transactions root, but ``extDataHash`` is keccak of their RLP, so the hash proves them.
- Its transactions and receipts are encoded as Ethereum's; no recorded C-Chain block with them was found, so nothing
  more is declared.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from chainframe.families._family import ChainFamily

_HEADER = (
    "parent_hash", "sha3_uncles", "miner", "state_root", "transactions_root", "receipts_root", "logs_bloom",
    "difficulty", "block_number", "gas_limit", "gas_used", "timestamp", "extra_data", "mix_hash", "block_nonce",
    "ext_data_hash",
)  # fmt: skip
_APPENDED = ("base_fee_per_gas", "ext_data_gas_used", "block_gas_cost", "blob_gas_used", "excess_blob_gas",
             "parent_beacon_block_root", "timestamp_milliseconds", "min_delay_excess")  # fmt: skip


class AvalancheCChain(ChainFamily):
    name = "avalanche"
    doc = "Avalanche C-Chain: extDataHash and the fee fields in the header, atomic transactions proven by their hash."
    chain_ids: ClassVar[Mapping[int, str]] = {43114: "Avalanche C-Chain", 43113: "Avalanche Fuji C-Chain"}
    columns: ClassVar[Mapping[str, Mapping[str, int | None]]] = {
        "blocks": dict.fromkeys(
            ("ext_data_hash", "ext_data_gas_used", "block_gas_cost", "block_extra_data", "timestamp_milliseconds",
             "min_delay_excess"),
            None,
        ),
    }  # fmt: skip
    header_fields = (_HEADER, _APPENDED)
    hashed_into: ClassVar[Mapping[str, str]] = {"block_extra_data": "ext_data_hash"}

    def proofs(self, chain_id: int | None, timestamp: int) -> tuple[tuple[str, ...], dict[str, str]]:
        """Ethereum's, less the withdrawals root its headers do not have, and with the atomic transactions."""
        proven, skipped = super().proofs(chain_id, timestamp)
        atomic = "atomic transactions (block_extra_data), through the header's extDataHash"
        return (*(p for p in proven if p != "withdrawals root"), atomic), skipped


AVALANCHE = AvalancheCChain()
