"""Event signatures and ABI entries: parsed, made canonical, refused when they cannot be decoded."""

from __future__ import annotations

import pytest

from chainframe import InputError
from chainframe.decode import events_from_abi, parse_event


def test_signature_forms() -> None:
    event = parse_event("event Swap(address indexed sender, uint amount0In, int24 tick, bytes32[] ids);")
    assert event.signature == "Swap(address,uint256,int24,bytes32[])"
    assert [(p.name, p.indexed) for p in event.params] == [
        ("sender", True), ("amount0In", False), ("tick", False), ("ids", False),
    ]  # fmt: skip
    assert [p.name for p in parse_event("Transfer(address,address,uint256)").params] == ["arg0", "arg1", "arg2"]
    assert parse_event("Empty()").signature == "Empty()"


@pytest.mark.parametrize(
    "signature",
    [
        "Transfer(address indexed a, address indexed b, uint256 indexed c, uint256 indexed d)",
        "Bad(uint7 x)",
        "Bad(bytes33 x)",
        "Pair((uint256,uint256) p)",
        "NoParens",
        "Twice(uint256 a, uint256 a)",
        "Anon(uint256 a) anonymous",
    ],
)
def test_refused(signature: str) -> None:
    with pytest.raises(InputError):
        parse_event(signature)


def test_abi_entries() -> None:
    abi = [
        {"type": "constructor", "inputs": []},
        {"type": "event", "name": "Ping", "inputs": [{"name": "", "type": "bytes", "indexed": False}]},
    ]
    (ping,) = events_from_abi(abi)
    assert ping.signature == "Ping(bytes)"
    assert ping.params[0].name == "arg0"
