"""Chain families: what a network's blocks do otherwise than Ethereum's, declared one family per module.

A family is its own room, not part of ``datasets`` or ``verify``: both read it (the datasets its columns, verify its
encodings and what its headers commit to), and it reads neither, so it sits below them. The family of a chain is
chosen from its id (:data:`FAMILIES`' tables); a chain no family names is read as Ethereum.
"""

from __future__ import annotations

from typing import Literal

from chainframe._errors import InputError
from chainframe.families._arbitrum import ARBITRUM_NITRO
from chainframe.families._avalanche import AVALANCHE
from chainframe.families._bsc import BSC
from chainframe.families._ethereum import ETHEREUM, UNDECLARED
from chainframe.families._family import ChainFamily, FromHardfork, ReceiptType, TransactionType
from chainframe.families._mantle import MANTLE
from chainframe.families._op_stack import L1_FEE_COLUMNS, OP_STACK
from chainframe.families._polygon import POLYGON_POS
from chainframe.families._scroll import SCROLL

FAMILIES: tuple[ChainFamily, ...] = (
    ETHEREUM, OP_STACK, ARBITRUM_NITRO, POLYGON_POS, BSC, AVALANCHE, SCROLL, MANTLE,
)  # fmt: skip
_BY_ID = {chain_id: family for family in FAMILIES for chain_id in family.chain_ids}


def family_of(chain_id: int | None) -> ChainFamily:
    """The family of the chain ``chain_id`` (Ethereum's for an unknown chain, or None)."""
    return _BY_ID.get(chain_id, ETHEREUM) if chain_id is not None else ETHEREUM


def family_named(name: str) -> ChainFamily:
    """The family called ``name`` (``--chain-family``, ``chain_family=``): refused, listing the families, if none is.
    Checked with the other options, before any request."""
    for family in FAMILIES:
        if family.name == name:
            return family
    families = ", ".join(family.name for family in FAMILIES)
    raise InputError(f"--chain-family {name!r} names no chain family; the families are: {families}")


def choose_family(chain_id: int, override: str | None = None) -> tuple[ChainFamily, bool]:
    """The family a run reads chain ``chain_id`` as (``--chain-family``'s ``override``, by name), and whether it was
    assumed: a chain no family knows, without an override, is read as Ethereum. An override naming no family, or
    another family than the one a known chain id is of, is refused (:class:`InputError`), naming both. A run asks
    this once it has the chain id (eth_chainId) and before it asks for any block."""
    known = _BY_ID.get(chain_id)
    if override is None:
        return (known, False) if known is not None else (ETHEREUM, True)
    chosen = family_named(override)
    if known is not None and chosen is not known:
        network = known.chain_ids[chain_id]
        raise InputError(
            f"chain {chain_id} ({network}) is {known.name}, not {override}: drop --chain-family or give {known.name} "
            "(refused after eth_chainId, before any block was asked for)"
        )
    return chosen, False


FamilyBy = Literal["chain id", "assumed", "user"]
"""How a run's family was chosen: the chain id names it, no family knows the chain id (read as Ethereum), or the
user named it (``--chain-family``)."""


def family_by(assumed: bool, override: str | None) -> FamilyBy:
    """How the family :func:`choose_family` gave (``assumed``, for ``override``) was chosen."""
    return "user" if override is not None else "assumed" if assumed else "chain id"


def family_line(name: str, by: FamilyBy, chain_id: int) -> str:
    """How a run's summary (and ``chainframe probe``) says which family it read chain ``chain_id`` as, and why."""
    if by == "assumed":
        why = f"; {UNDECLARED[chain_id]}" if chain_id in UNDECLARED else ""
        return f"chain family {name}, assumed: no family knows chain id {chain_id} (--chain-family names one){why}"
    if by == "user":
        return f"chain family {name}, chosen with --chain-family"
    network = _BY_ID[chain_id].chain_ids[chain_id] if chain_id in _BY_ID else f"chain {chain_id}"
    return f"chain family {name}, by the chain id ({network})"


def filled_by(dataset: str, column: str) -> dict[ChainFamily, int | None]:
    """The families that fill ``dataset.column``, each with the one transaction type whose rows have it (None: any
    row); every family for a column no family declares as its own."""
    own = {f: f.columns[dataset][column] for f in FAMILIES if column in f.columns.get(dataset, {})}
    return own or dict.fromkeys(FAMILIES)


__all__ = [
    "ARBITRUM_NITRO",
    "AVALANCHE",
    "BSC",
    "ETHEREUM",
    "FAMILIES",
    "L1_FEE_COLUMNS",
    "MANTLE",
    "OP_STACK",
    "POLYGON_POS",
    "SCROLL",
    "UNDECLARED",
    "ChainFamily",
    "FamilyBy",
    "FromHardfork",
    "ReceiptType",
    "TransactionType",
    "choose_family",
    "family_by",
    "family_line",
    "family_named",
    "family_of",
    "filled_by",
]
