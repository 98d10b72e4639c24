"""Ethereum: L1 mainnet and its testnets, and any chain the table does not know (read as Ethereum)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from chainframe.families._family import ChainFamily


class Ethereum(ChainFamily):
    name = "ethereum"
    doc = "Ethereum's own rules: transaction types 0-4, receipts and headers as the execution specs encode them."
    chain_ids: ClassVar[Mapping[int, str]] = {1: "Ethereum", 11155111: "Sepolia", 17000: "Holesky", 560048: "Hoodi"}


ETHEREUM = Ethereum()
