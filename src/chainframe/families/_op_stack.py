"""OP Stack (OP Mainnet, Base, Zora, Mode, Unichain, Swellchain, Celo, Blast, opBNB, Hemi and their testnets):
deposit transactions and receipts, and the headers' fields that commit to something else than Ethereum's.

Which chains are OP Stack, by their chain ids (chainlist's ``ethereum-lists/chains``): those in the superchain registry
(``superchain/configs/``: Unichain 130/1301, Swellchain 1923/1924, Celo 42220), and forks of op-geth that keep its
deposit type and receipts: opBNB 204/5611 (bnb-chain/op-geth, ``params/config.go``), Blast 81457/168587773
(blast-io/blast, an op-geth fork), Hemi 43111/743111 (an op-geth fork). None of the added chains was proven on a
recorded block here; what they add is stored as given (Celo's fee-currency transaction, type 0x7b, is a type this
family does not declare: stored and declared unproven). Celo's blocks before its move to an L2 (block 31,056,500,
2025-03-26) are Celo L1's, which no family declares.

- A deposit (type 0x7e) is ``0x7e || rlp([sourceHash, from, to, mint, value, gas, isSystemTx, data])``: no
  signature, its sender inside the encoding.
- A deposit receipt is ``0x7e || rlp([status, cumulativeGasUsed, bloom, logs, depositNonce?, depositReceiptVersion?])``:
  Regolith adds the deposit nonce, Canyon the receipt version.
- From Isthmus the header's ``withdrawalsRoot`` is the L2ToL1MessagePasser's storage root (no list of withdrawals).
- From Jovian a receipt's ``blobGasUsed`` is its data-availability footprint, not blob gas; the header's
  ``blobGasUsed`` is the block's (the sum of its transactions' footprints, which gates the block as blob gas does
  on L1): hashed into the header, so proven, but not blob gas (declared in :attr:`OpStack.meanings`).
- The L1 fee fields of a receipt are the node's arithmetic over the L1 attributes: no root holds them; so are the
  fee parameters a receipt repeats from them (Isthmus' operator fee scalar and constant, Jovian's DA footprint gas
  scalar), which op-geth leaves off the receipt where they are zero or before their hardfork.
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

DEPOSIT = 0x7E

_MAINNET: dict[str, int | None] = {"regolith": 0, "canyon": 1704992401, "isthmus": 1746806401}
_SEPOLIA: dict[str, int | None] = {"regolith": 0, "canyon": 1699981200, "isthmus": 1744905600}
_CELO: dict[str, int | None] = {"regolith": 0, "canyon": 0, "isthmus": 1752073200}
_OPBNB: dict[str, int | None] = {"regolith": 0, "canyon": 1718870400, "isthmus": None}
_OPBNB_TESTNET: dict[str, int | None] = {"regolith": 0, "canyon": 1715753400, "isthmus": None}
HARDFORKS = {
    10: _MAINNET, 8453: _MAINNET, 7777777: _MAINNET, 34443: _MAINNET, 130: _MAINNET, 1923: _MAINNET,
    11155420: _SEPOLIA, 84532: _SEPOLIA, 1301: _SEPOLIA, 1924: _SEPOLIA, 42220: _CELO, 204: _OPBNB,
    5611: _OPBNB_TESTNET,
}  # fmt: skip
"""Each known chain's activation time (unix seconds) of the hardforks that change what is encoded, None where it has
not taken the fork: the superchain registry's (superchain-wide times for OP Mainnet, Base, Zora, Mode, Unichain and
Swellchain; Celo's own ``celo.toml``), opBNB's from bnb-chain/op-geth's ``params/config.go`` (``OPBNBMainNetConfig``,
``OPBNBTestNetConfig``: Canyon in June and May 2024, no Isthmus). A chain not listed (Blast, Hemi, Celo Sepolia) is
read as having all of them from its genesis: its withdrawals root is then never checked, never falsely failed."""


L1_FEE_COLUMNS = ("l1_fee", "l1_gas_price", "l1_gas_used", "l1_fee_scalar", "l1_base_fee_scalar", "l1_blob_base_fee",
                  "l1_blob_base_fee_scalar")  # fmt: skip
_L1_FEE = "the L1 fee fields are the node's arithmetic over the block's L1 attributes: no root commits to them"
FEE_PARAMETER_COLUMNS = ("operator_fee_scalar", "operator_fee_constant", "da_footprint_gas_scalar")
_FEE_PARAMETERS = (
    "the fee parameters of the block's L1 attributes transaction, repeated on each receipt by the node: its "
    "encoding leaves them out"
)
_MEANINGS = {
    "blocks.blob_gas_used": "from Jovian the block's data-availability footprint (the sum of its transactions' "
    "footprints: size estimate x da_footprint_gas_scalar), not blob gas; hashed, so proven as any header field",
    "receipts.blob_gas_used": "from Jovian the transaction's data-availability footprint, not blob gas",
}


def active(fork: str, chain_id: int | None, timestamp: int) -> bool:
    at = HARDFORKS.get(chain_id or 0, {}).get(fork, 0)
    return at is not None and timestamp >= at


def _deposit(tx: Row) -> bytes:
    fields: list[RlpItem] = [
        tx["source_hash"], tx["from_address"], tx["to_address"] or b"", integer(tx["mint"]), integer(tx["value"]),
        uint(tx["gas"]), uint(1 if tx["is_system_tx"] else 0), tx["input"],
    ]  # fmt: skip
    return bytes([DEPOSIT]) + python_rlp(fields)


def _deposit_receipt_fields(timestamp: int, chain_id: int | None) -> tuple[str, ...]:
    regolith = active("regolith", chain_id, timestamp)
    canyon = active("canyon", chain_id, timestamp)
    return ("deposit_nonce",) * regolith + ("deposit_receipt_version",) * canyon


def _deposit_receipt(receipt: Row, logs: list[RlpItem], timestamp: int, chain_id: int | None) -> bytes:
    return typed_receipt(DEPOSIT, receipt, logs, _deposit_receipt_fields(timestamp, chain_id))


class OpStack(ChainFamily):
    name = "op-stack"
    doc = "OP Stack rollups: deposit transactions and receipts, L1 fee fields, Isthmus' withdrawals root."
    chain_ids: ClassVar[Mapping[int, str]] = {
        10: "OP Mainnet", 8453: "Base", 7777777: "Zora", 34443: "Mode", 11155420: "OP Sepolia", 84532: "Base Sepolia",
        130: "Unichain", 1301: "Unichain Sepolia", 1923: "Swellchain", 1924: "Swellchain Testnet", 42220: "Celo",
        11142220: "Celo Sepolia", 81457: "Blast", 168587773: "Blast Sepolia", 204: "opBNB", 5611: "opBNB Testnet",
        43111: "Hemi", 743111: "Hemi Sepolia",
    }  # fmt: skip
    transaction_types: ClassVar[Mapping[int, TransactionType]] = {
        DEPOSIT: TransactionType(
            DEPOSIT,
            "deposit",
            _deposit,
            reads=("source_hash", "from_address", "to_address", "mint", "value", "gas", "is_system_tx", "input"),
            needs=("source_hash", "from_address", "gas", "input", "value"),
            creation="an OP deposit's encoding holds no nonce: the address a deposit creates follows from its sender's "
            "nonce at execution, which only the node's depositNonce reports (anvil 1.7.1 reports one more than that)",
        )
    }
    receipt_types: ClassVar[Mapping[int, ReceiptType]] = {
        DEPOSIT: ReceiptType(DEPOSIT, _deposit_receipt, _deposit_receipt_fields)
    }
    columns: ClassVar[Mapping[str, Mapping[str, int | None]]] = {
        "transactions": dict.fromkeys(("source_hash", "mint", "is_system_tx"), DEPOSIT),
        "receipts": {
            **dict.fromkeys(("deposit_nonce", "deposit_receipt_version"), DEPOSIT),
            **dict.fromkeys((*L1_FEE_COLUMNS, *FEE_PARAMETER_COLUMNS), None),
        },
    }
    unprovable: ClassVar[Mapping[str, str]] = {
        "receipts.blob_gas_used": "from Jovian an OP receipt's blob_gas_used is its data-availability footprint "
        "(the header's too), the node's arithmetic over the transaction's size: no root commits to it",
        **{f"receipts.{name}": _L1_FEE for name in L1_FEE_COLUMNS},
        **{f"receipts.{name}": _FEE_PARAMETERS for name in FEE_PARAMETER_COLUMNS},
    }

    meanings: ClassVar[Mapping[str, str]] = _MEANINGS
    unprovable_from: ClassVar[Mapping[str, FromHardfork]] = {
        "blocks.withdrawals_root": FromHardfork(
            "isthmus",
            "from Isthmus an OP header's withdrawals_root is the L2ToL1MessagePasser's storage root: no list",
        ),
    }

    def active(self, hardfork: str, chain_id: int | None, timestamp: int) -> bool:
        return active(hardfork, chain_id, timestamp)


OP_STACK = OpStack()
