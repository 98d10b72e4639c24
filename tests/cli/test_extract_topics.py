"""Topic 0 takes an event signature as well as a hash (``--topic0`` and ``topics=``); commas inside a signature are
not an OR-list; ``event=`` sets topic 0 from its events."""

from __future__ import annotations

import pytest

from chainframe import InputError
from chainframe.cli._extract import _topic
from chainframe.engine._plan import check_filters

TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
APPROVAL = "0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925"


def topic0(text: str) -> object:
    return check_filters("logs", {"topics": [_topic(text)]})["topics"][0]


def test_signatures_are_hashed() -> None:
    assert topic0("Transfer(address,address,uint256)") == TRANSFER
    assert topic0("Transfer(address indexed from, address indexed to, uint256 value)") == TRANSFER
    assert topic0("Transfer(address,address,uint256),Approval(address,address,uint256)") == [TRANSFER, APPROVAL]
    assert topic0(f"{TRANSFER},Approval(address,address,uint256)") == [TRANSFER, APPROVAL]


def test_hashes_and_or_lists_unchanged() -> None:
    assert _topic("0xaa,0xbb") == ["0xaa", "0xbb"]
    assert _topic("0xaa") == "0xaa"
    assert _topic(None) is None


def test_bad_signature_is_refused() -> None:
    with pytest.raises(InputError, match="uint7"):
        topic0("Transfer(address,uint7)")


def test_event_sets_topic0_and_keeps_the_other_positions() -> None:
    event = "Transfer(address indexed from, address indexed to, uint256 value)"
    flt = check_filters("logs", {"event": event, "topics": [None, "0x" + "00" * 32]})
    assert flt["topics"] == [TRANSFER, "0x" + "00" * 32]
    assert flt["event"] == ["Transfer(address indexed from,address indexed to,uint256 value)"]
    both = check_filters(
        "logs", {"event": [event, "Approval(address indexed owner, address indexed spender, uint256 value)"]}
    )
    assert both["topics"] == [[TRANSFER, APPROVAL]]
    with pytest.raises(InputError, match="leave topic 0 out"):
        check_filters("logs", {"event": event, "topics": [APPROVAL]})
    with pytest.raises(InputError, match="two types"):
        check_filters("logs", {"event": [event, "Other(bool value)"]})
    with pytest.raises(InputError, match="event must be"):
        check_filters("logs", {"event": 5})
