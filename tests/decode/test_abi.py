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
        "Pair((uint256,uint256 p)",
        "Pair(() p)",
        "Pair((uint256 a, bool a) p)",
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


def test_tuples_in_signatures_and_abi_json_read_the_same() -> None:
    text = "Order((address maker, (uint256 amount, bytes32 salt)[] legs) indexed key, (uint8,string) info, bool ok)"
    event = parse_event(text)
    assert event.signature == "Order((address,(uint256,bytes32)[]),(uint8,string),bool)"
    assert [p.name for p in event.params] == ["key", "info", "ok"]
    assert [name for name, _ in event.params[1].type.components] == ["arg0", "arg1"]
    assert not event.params[0].type.is_elementary
    assert event.params[1].type.is_dynamic
    assert parse_event(event.text) == event  # the human-readable form reads back to the same event
    legs = {"name": "legs", "type": "tuple[]", "components": [
        {"name": "amount", "type": "uint256"}, {"name": "salt", "type": "bytes32"}]}  # fmt: skip
    abi = [{"type": "event", "name": "Order", "inputs": [
        {"name": "key", "type": "tuple", "indexed": True, "components": [{"name": "maker", "type": "address"}, legs]},
        {"name": "info", "type": "tuple",
         "components": [{"name": "", "type": "uint8"}, {"name": "", "type": "string"}]},
        {"name": "ok", "type": "bool"}]}]  # fmt: skip
    assert events_from_abi(abi) == [event]
    assert parse_event("P(tuple(uint256 a, bool b)[2] ps)").params[0].type.head_words == 4
