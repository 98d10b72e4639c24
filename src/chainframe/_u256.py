"""How 256-bit amounts are stored, a choice shared by the datasets and the event decoders."""

from __future__ import annotations

from typing import Literal

U256 = Literal["decimal", "binary"]
"""How wei columns are stored: ``decimal`` (decimal128(38, 0), sums everywhere) or ``binary`` (32-byte words, for
chains holding amounts above 1e38 - 1 wei, such as dev chains whose prefunded accounts hold nearly 2**256)."""
