"""Scroll (mainnet 534352, Sepolia 534351): the L1 message transaction, and the L1 data fee its receipts carry.

- An L1 message (type 0x7e, as OP's deposit: the family is chosen by the chain id, so each declares its own meaning of
  the byte) is ``0x7e || rlp([queueIndex, gas, to, value, input, sender])`` (scroll-tech/go-ethereum
  ``core/types/l1_message_tx.go``): no signature, its sender inside the encoding, no nonce (nodes answer ``nonce``
  0 and ``sender`` beside ``from``). Its ``to`` is never empty: L1 messages create no contract. Proven on real
  Scroll mainnet L1 messages by their hashes (``tests/families/test_scroll_mantle.py``).
- Its receipt is encoded as Ethereum's typed receipts are (``0x7e || rlp([status, cumulativeGasUsed, bloom, logs])``):
  declared here only because verify sets aside receipts of types from 0x7e up that no family declares.
- Every receipt's ``l1Fee`` is the node's arithmetic over the L1 gas oracle's values (zero for L1 messages): no root
  commits to it.
- Headers are Ethereum's field list (the sequencer's seal in the extra data before Euclid, hashed as any extra data),
  without withdrawals.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from chainframe._rlp import RlpItem, python_rlp, uint
from chainframe.families._family import ChainFamily, ReceiptType, Row, TransactionType, integer, typed_receipt

L1_MESSAGE = 0x7E
_L1_FEE = (
    "Scroll's L1 data fee, the node's arithmetic over the L1 gas oracle's values at the block: the receipt's encoding "
    "leaves it out"
)


def _l1_message(tx: Row) -> bytes:
    fields: list[RlpItem] = [
        uint(tx["queue_index"]), uint(tx["gas"]), tx["to_address"], integer(tx["value"]), tx["input"],
        tx["from_address"],
    ]  # fmt: skip
    return bytes([L1_MESSAGE]) + python_rlp(fields)


def _receipt_fields(timestamp: int, chain_id: int | None) -> tuple[str, ...]:
    return ("status", "cumulative_gas_used", "logs_bloom")


def _l1_message_receipt(receipt: Row, logs: list[RlpItem], timestamp: int, chain_id: int | None) -> bytes:
    return typed_receipt(L1_MESSAGE, receipt, logs)


class Scroll(ChainFamily):
    name = "scroll"
    doc = "Scroll: L1 message transactions (type 0x7e, its own), receipts' L1 data fee."
    chain_ids: ClassVar[Mapping[int, str]] = {534352: "Scroll", 534351: "Scroll Sepolia"}
    transaction_types: ClassVar[Mapping[int, TransactionType]] = {
        L1_MESSAGE: TransactionType(
            L1_MESSAGE,
            "L1 message",
            _l1_message,
            reads=("queue_index", "gas", "to_address", "value", "input", "from_address"),
            needs=("queue_index", "gas", "to_address", "value", "input", "from_address"),
        )
    }
    receipt_types: ClassVar[Mapping[int, ReceiptType]] = {
        L1_MESSAGE: ReceiptType(L1_MESSAGE, _l1_message_receipt, _receipt_fields)
    }
    columns: ClassVar[Mapping[str, Mapping[str, int | None]]] = {
        "transactions": {"queue_index": L1_MESSAGE},
        "receipts": {"l1_fee": None},
    }
    unprovable: ClassVar[Mapping[str, str]] = {"receipts.l1_fee": _L1_FEE}


SCROLL = Scroll()
