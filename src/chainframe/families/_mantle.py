"""Mantle v2 "Tectonic" (mainnet 5000, Sepolia 5003): OP Stack derived, with its own deposit fields and fee fields.

- A deposit (type 0x7e) is OP's with Mantle's BVM_ETH fields (mantlenetworkio/op-geth ``core/types/deposit_tx.go``):
  ``0x7e || rlp([sourceHash, from, to, mint, value, gas, isSystemTx, ethValue, data, ethTxValue?])``: ``ethValue``
  (BVM_ETH minted; nil and zero both encode as the empty string) sits before the data, and ``ethTxValue`` (BVM_ETH sent
  to the callee) is appended only where the deposit has one (``rlp:"optional"``; nodes leave the key out then).
  Proven on a real Mantle mainnet deposit by its hash (``tests/families/test_scroll_mantle.py``).
- A deposit receipt is OP's: ``0x7e || rlp([status, cumulativeGasUsed, bloom, logs, depositNonce, version?])``, the
  deposit nonce from genesis (Regolith) and the receipt version from Arsia, which turns on OP's Canyon to Jovian
  (mantle-xyz/reth's chain specs); no recorded Mantle receipt was found to prove this on.
- Skadi (Mantle's Prague) turns on Shanghai's header fields with OP Isthmus' meaning: the withdrawals root is the
  L2ToL1MessagePasser's storage root (op-geth's ``genesis.go`` and ``eth/catalyst``), so it is declared unprovable
  from Skadi; before it headers have none.
- Receipts' ``l1Fee``, ``l1GasPrice``, ``l1GasUsed``, ``l1FeeScalar`` and the MNT/ETH ``tokenRatio`` are the node's
  arithmetic: no root commits to them. Mantle's meta transactions are ordinary signed transactions whose data carries
  a prefix: nothing of their encoding is Mantle's.

Hardfork times: the ``MANTLE_{MAINNET,SEPOLIA}_{SKADI,ARSIA}_TIMESTAMP`` constants mantle-xyz/reth's chain specs import
(``alloy_op_hardforks``, Mantle's fork; Sepolia's Skadi is also mantlenetworkio/op-geth's ``params/mantle.go``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from chainframe._rlp import RlpItem, python_rlp, uint
from chainframe.families._family import (
    ChainFamily,
    FromHardfork,
    ReceiptType,
    Row,
    TransactionType,
    integer,
    typed_receipt,
)
from chainframe.families._op_stack import FEE_PARAMETER_COLUMNS, L1_FEE_COLUMNS

DEPOSIT = 0x7E
HARDFORKS: Mapping[int, Mapping[str, int]] = {
    5000: {"skadi": 1756278000, "arsia": 1776841200},
    5003: {"skadi": 1752649200, "arsia": 1774422000},
}
"""Each chain's activation time (unix seconds) of the hardforks that change what is encoded; a chain not listed (a
devnet read with ``--chain-family mantle``) is read as having them from its genesis."""
_READS = ("source_hash", "from_address", "to_address", "mint", "value", "gas", "is_system_tx", "eth_value", "input",
          "eth_tx_value")  # fmt: skip
_FEES = "Mantle: the node's arithmetic over the block's L1 fee parameters and token ratio; no root commits to it"


def active(fork: str, chain_id: int | None, timestamp: int) -> bool:
    return timestamp >= HARDFORKS.get(chain_id or 0, {}).get(fork, 0)


def _deposit(tx: Row) -> bytes:
    fields: list[RlpItem] = [
        tx["source_hash"], tx["from_address"], tx["to_address"] or b"", integer(tx["mint"]), integer(tx["value"]),
        uint(tx["gas"]), uint(1 if tx["is_system_tx"] else 0), integer(tx["eth_value"]), tx["input"],
    ]  # fmt: skip
    if tx["eth_tx_value"] is not None:
        fields.append(integer(tx["eth_tx_value"]))
    return bytes([DEPOSIT]) + python_rlp(fields)


def _deposit_receipt_fields(timestamp: int, chain_id: int | None) -> tuple[str, ...]:
    return ("deposit_nonce",) + ("deposit_receipt_version",) * active("arsia", chain_id, timestamp)


def _deposit_receipt(receipt: Row, logs: list[RlpItem], timestamp: int, chain_id: int | None) -> bytes:
    return typed_receipt(DEPOSIT, receipt, logs, _deposit_receipt_fields(timestamp, chain_id))


class Mantle(ChainFamily):
    name = "mantle"
    doc = "Mantle v2: OP Stack deposits with BVM_ETH fields, deposit receipts, L1 fee fields and the token ratio."
    chain_ids: ClassVar[Mapping[int, str]] = {5000: "Mantle", 5003: "Mantle Sepolia"}
    transaction_types: ClassVar[Mapping[int, TransactionType]] = {
        DEPOSIT: TransactionType(
            DEPOSIT,
            "deposit",
            _deposit,
            reads=_READS,
            needs=("source_hash", "from_address", "gas", "input", "value"),
            creation="a Mantle deposit's encoding holds no nonce: the address a deposit creates follows from its "
            "sender's nonce at execution, which only the node's depositNonce reports",
        )
    }
    receipt_types: ClassVar[Mapping[int, ReceiptType]] = {
        DEPOSIT: ReceiptType(DEPOSIT, _deposit_receipt, _deposit_receipt_fields)
    }
    columns: ClassVar[Mapping[str, Mapping[str, int | None]]] = {
        "transactions": dict.fromkeys(("source_hash", "mint", "is_system_tx", "eth_value", "eth_tx_value"), DEPOSIT),
        "receipts": {
            **dict.fromkeys(("deposit_nonce", "deposit_receipt_version"), DEPOSIT),
            **dict.fromkeys((*L1_FEE_COLUMNS, *FEE_PARAMETER_COLUMNS, "token_ratio"), None),
        },
    }
    unprovable: ClassVar[Mapping[str, str]] = {
        f"receipts.{name}": _FEES for name in (*L1_FEE_COLUMNS, *FEE_PARAMETER_COLUMNS, "token_ratio")
    }
    unprovable_from: ClassVar[Mapping[str, FromHardfork]] = {
        "blocks.withdrawals_root": FromHardfork(
            "skadi", "from Skadi a Mantle header's withdrawals_root is the L2ToL1MessagePasser's storage root: no list"
        ),
    }

    def active(self, hardfork: str, chain_id: int | None, timestamp: int) -> bool:
        return active(hardfork, chain_id, timestamp)


MANTLE = Mantle()
