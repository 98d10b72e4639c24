"""``--topic0`` takes an event signature as well as a hash; commas inside a signature are not an OR-list."""

from __future__ import annotations

import pytest

from chainframe import InputError
from chainframe.cli._extract import _topic

TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
APPROVAL = "0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925"


def test_signatures_are_hashed() -> None:
    assert _topic("Transfer(address,address,uint256)", signatures=True) == TRANSFER
    assert _topic("Transfer(address indexed from, address indexed to, uint256 value)", signatures=True) == TRANSFER
    both = "Transfer(address,address,uint256),Approval(address,address,uint256)"
    assert _topic(both, signatures=True) == [TRANSFER, APPROVAL]
    assert _topic(f"{TRANSFER},Approval(address,address,uint256)", signatures=True) == [TRANSFER, APPROVAL]


def test_hashes_and_or_lists_unchanged() -> None:
    assert _topic("0xaa,0xbb", signatures=True) == ["0xaa", "0xbb"]
    assert _topic("0xaa", signatures=False) == "0xaa"
    assert _topic(None, signatures=True) is None


def test_bad_signature_is_refused() -> None:
    with pytest.raises(InputError):
        _topic("Transfer(address,uint7)", signatures=True)
