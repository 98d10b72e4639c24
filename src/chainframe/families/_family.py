"""What a chain family is: the facts about a network's blocks that verification reads instead of Ethereum's.

A family is declared as a dataset is (one module each, class attributes read by whoever needs them): the transaction
types it adds and how each is encoded for its hash and the transactions root, the receipt types it encodes its own
way, what its headers commit to nothing of, and the hardforks that change any of these. Verification asks the family
of its chain (:func:`chainframe.families.family_of`) and never tests a chain id itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any, ClassVar, NamedTuple

from chainframe._rlp import RlpItem, python_rlp, uint

Row = Mapping[str, Any]
"""A stored row as Python values, column -> value."""


def integer(value: Any) -> bytes:
    """A stored integer as RLP's minimal big-endian bytes (wei columns are decimals, or 32-byte words)."""
    if value is None:
        return b""
    if isinstance(value, bytes):
        return uint(int.from_bytes(value, "big"))
    return uint(int(value) if isinstance(value, Decimal) else value)


def typed_receipt(kind: int, receipt: Row, logs: list[RlpItem], extra: Sequence[str] = ()) -> bytes:
    """A typed receipt's trie value: ``kind || rlp([status, cumulativeGasUsed, logsBloom, logs, *extra])``, the
    ``extra`` columns (a deposit's nonce and receipt version) as integers."""
    body: list[RlpItem] = [uint(receipt["status"]), uint(receipt["cumulative_gas_used"]), receipt["logs_bloom"], logs]
    return bytes([kind]) + python_rlp(body + [uint(receipt[name]) for name in extra])


# NamedTuples, not frozen dataclasses: every run imports the families, and a dataclass's generated methods cost
# about 1 ms each at import (3.4 of the package's 7.8 ms); immutable and compared by value either way.
class TransactionType(NamedTuple):
    """A transaction type a family adds to Ethereum's (0-4): how a stored row of it is encoded (its hash's preimage,
    the transactions trie's value) and how its sender is proven, since it carries no signature."""

    code: int
    name: str
    encode: Callable[[Row], bytes]
    """The row's encoding, from the columns of :attr:`needs`."""
    reads: tuple[str, ...]
    """The columns the encoding reads: one not stored, the type's rows are stored unproven."""
    needs: tuple[str, ...]
    """Those that have no empty form: null in a row, the row cannot be this type."""
    sender: bytes | None = None
    """The one address every transaction of the type is from (None: ``from_address`` is in the encoding, so the hash
    proves it)."""
    creation: str | None = None
    """Why the address a creation of this type made follows from nothing proven (its encoding holds no nonce), said
    where that check is skipped; None: from the sender and nonce, as Ethereum's."""
    rendered: Callable[[Row], Mapping[str, Any]] | None = None
    """The columns the node renders from the encoded fields rather than holding them (an Arbitrum submit-retryable's
    ``to_address`` and ``input``), as those fields give them: each checked equal, so the hash proves them too."""


class ReceiptType(NamedTuple):
    """A receipt type a family encodes otherwise than Ethereum (type byte || rlp([outcome, cumulative gas, bloom,
    logs]))."""

    code: int
    encode: Callable[[Row, list[RlpItem], int, int | None], bytes]
    """The receipt's encoding from its row, its logs as RLP items, its block's timestamp and its chain id (which
    hardforks are active)."""
    needs: Callable[[int, int | None], tuple[str, ...]]
    """The columns the encoding reads at a block's timestamp on a chain, none of which may be null."""


class FromHardfork(NamedTuple):
    """A column the family's headers stop committing to at a hardfork (OP's withdrawals root at Isthmus)."""

    hardfork: str
    """Its name, as :meth:`ChainFamily.active` knows it."""
    why: str
    """What the header holds instead, said where its checks are skipped."""


class ChainFamily:
    """Ethereum's rules, which every family starts from; a family overrides what its chain does otherwise."""

    name: ClassVar[str] = "ethereum"
    doc: ClassVar[str] = ""
    chain_ids: ClassVar[Mapping[int, str]] = {}
    """The chains known to be of this family, id -> network name."""
    transaction_types: ClassVar[Mapping[int, TransactionType]] = {}
    """Types beyond Ethereum's 0-4, by code. A type no family declares is stored and declared unproven."""
    receipt_types: ClassVar[Mapping[int, ReceiptType]] = {}
    """Receipt types not encoded the Ethereum way, by code."""
    unprovable: ClassVar[Mapping[str, str]] = {}
    """``dataset.column`` -> why no header of the family commits to it (its rule checks are skipped, saying so)."""
    meanings: ClassVar[Mapping[str, str]] = {}
    """``dataset.column`` -> what it holds on the family's chains where that is not what it holds on Ethereum's (OP's
    blob_gas_used from Jovian): proven or not as declared elsewhere, but not to be read as Ethereum's."""
    unprovable_from: ClassVar[Mapping[str, FromHardfork]] = {}
    """``dataset.column`` -> the hardfork from which no header of the family commits to it, and why: its checks are
    skipped in the blocks where :meth:`active` says the hardfork is in force, and run before."""
    columns: ClassVar[Mapping[str, Mapping[str, int | None]]] = {}
    """The family's own columns, dataset -> column -> the one transaction type whose rows have it (None: any row).
    Null elsewhere: on a chain of another family, and on rows of another type."""
    header_fields: ClassVar[tuple[tuple[str, ...], tuple[str, ...]] | None] = None
    """The header's RLP list as ``blocks`` columns where it is not Ethereum's: the fields every header has, then
    those its forks appended, in order (a header holds a prefix of them). None: Ethereum's."""
    hashed_into: ClassVar[Mapping[str, str]] = {}
    """``blocks`` column -> the header column holding keccak(rlp(its bytes)): data the block hash proves through a
    hash of it (Avalanche's atomic transactions, in no transactions root)."""

    outside_roots: ClassVar[str | None] = None
    """Why a block's transaction may be in none of its roots, nor its receipt (Bor's state-sync transaction): verify
    sets such rows aside, chosen by :meth:`outside_roots_hash`; None: every transaction of a block is in its roots."""
    outside_roots_column: ClassVar[str | None] = None
    """The boolean column of transactions and receipts that marks such a row where it is stored."""

    def outside_roots_hash(self, number: int, block_hash: bytes) -> bytes | None:
        """The hash the one transaction of block ``number`` that no root holds has, if the block has one (None: the
        family has none). What proves it is that transaction is this hash: it follows from the block alone."""
        return None

    def active(self, hardfork: str, chain_id: int | None, timestamp: int) -> bool:
        """Whether the family's ``hardfork`` is in force at ``timestamp`` on chain ``chain_id``."""
        return False

    def withdrawals_root(self, chain_id: int | None, timestamp: int) -> str | None:
        """Why a header of this time does not commit to the block's withdrawals list (None: it does)."""
        rule = self.unprovable_from.get("blocks.withdrawals_root")
        return rule.why if rule is not None and self.active(rule.hardfork, chain_id, timestamp) else None

    def unprovable_columns(self) -> dict[str, str]:
        """Every ``dataset.column`` the family's headers do not commit to, always or from a hardfork on, with why
        (what ``chainframe schema`` lists per family)."""
        return {**self.unprovable, **{column: rule.why for column, rule in self.unprovable_from.items()}}

    def header_columns(self, extra_data: bytes, mix_hash: bytes) -> dict[str, Any]:
        """The family's own header columns as the header the block hash proves holds them (its extra data and mix
        hash), column -> value; empty where it has none."""
        return {}

    def proofs(self, chain_id: int | None, timestamp: int) -> tuple[tuple[str, ...], dict[str, str]]:
        """What ``chainframe verify`` proves of a block of this family's chain ``chain_id`` at ``timestamp``, in
        words, and what it skips there, each with why (what is skipped on every chain is the datasets')."""
        types = ", ".join(f"{hex(t.code)} {t.name}" for t in self.transaction_types.values())
        receipts = ", ".join(hex(r.code) for r in self.receipt_types.values())
        proven = [
            "block hash (keccak of the header's fields)",
            "transactions root, and each sender's signature (types 0-4"
            + (f"; unsigned, their sender in their encoding or fixed: {types}" if types else "")
            + ")",
            "receipts root, rebuilt from the receipts and their logs"
            + (f" (type {receipts} in the family's own encoding)" if receipts else ""),
        ]
        skipped = dict(self.unprovable)
        withdrawals = self.withdrawals_root(chain_id, timestamp)
        if withdrawals is None:
            proven.append("withdrawals root")
        else:
            skipped["blocks.withdrawals_root"] = withdrawals
        if self.outside_roots is not None:
            skipped[f"rows marked {self.outside_roots_column}"] = self.outside_roots
        skipped["transactions of any other type"] = "stored with their fields as given and declared unproven"
        return tuple(proven), skipped

    def __repr__(self) -> str:
        return f"<chain family {self.name}>"
