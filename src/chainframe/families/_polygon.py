"""Polygon PoS (Bor): headers, transactions and receipts encoded as Ethereum's.

Bor's state-sync transactions (from and to the zero address, listed by some nodes after a sprint's last block) are
in no transactions root; none is in the recorded blocks, so nothing is declared for them yet.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from chainframe.families._family import ChainFamily


class PolygonPos(ChainFamily):
    name = "polygon-pos"
    doc = "Polygon PoS: Ethereum's encodings (its recorded blocks prove as Ethereum's do)."
    chain_ids: ClassVar[Mapping[int, str]] = {137: "Polygon PoS", 80002: "Polygon Amoy"}


POLYGON_POS = PolygonPos()
