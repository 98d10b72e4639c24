"""Block ranges: the grammar, its errors (before any request), and resolution against the node."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from chainframe import InputError
from chainframe.datasets import BlockRange
from chainframe.devnet import Devnet, GatewaySettings
from chainframe.engine import extract
from chainframe.engine._ranges import RangeSpec, parse_range, resolve, safe_end
from chainframe.rpc import AsyncClient


@pytest.mark.parametrize(
    ("text", "start", "end", "last", "count"),
    [
        ("0:99", 0, 99, None, None),
        ("5", 5, 5, None, None),
        ("16M:+1k", 16_000_000, None, None, 1000),
        ("1.5k:2k", 1500, 2000, None, None),
        ("16_000_000:16_000_009", 16_000_000, 16_000_009, None, None),
        ("-1000:", None, None, 1000, None),
        ("100:", 100, None, None, None),
        (":100", None, 100, None, None),
        (":", None, None, None, None),
        ("0:latest", 0, "latest", None, None),
        ("finalized", "finalized", "finalized", None, None),
        (" 7 : 9 ", 7, 9, None, None),
    ],
)
def test_grammar(text: str, start: object, end: object, last: int | None, count: int | None) -> None:
    spec = parse_range(text)
    assert (spec.start, spec.end, spec.last, spec.count) == (start, end, last, count)


def test_other_forms() -> None:
    assert parse_range(12) == RangeSpec("12", 12, 12)
    assert parse_range((3, 8)).end == 8
    assert parse_range(BlockRange(2, 4)).start == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("abc", "is not a block number"),
        ("10:5", "starts after it ends"),
        ("1:2:3:4", "more than two ':'"),
        ("0:10:0", "N must be at least 1"),
        ("5/3", "a step follows a range"),
        ("0:+5:2", "a step needs a range"),
        ("-5", "write '-5:'"),
        ("1.5", "not a whole block number"),
        ("0:+0", "asks for no blocks"),
        (":+5", "needs a start"),
        ("", "blocks must be a range"),
        ("1e6", "is not a block number"),
        ("-0:", "is empty"),
        (-3, "negative"),
        ("pending", "is not a block number"),
    ],
)
def test_errors_say_what_is_accepted(text: object, message: str) -> None:
    with pytest.raises(InputError, match=None) as error:
        parse_range(text)  # type: ignore[arg-type]
    assert message in str(error.value)


def test_resolution_against_the_node(devnet: Devnet) -> None:
    head = devnet.truth.head

    async def main() -> None:
        async with AsyncClient(devnet.http_url) as client:
            end, why = await safe_end(client)
            assert (end, why) == (head - 64, "finalized")  # anvil: finalized trails the head by 64
            assert await resolve(parse_range("0:latest"), client) == BlockRange(0, head)
            assert await resolve(parse_range("-10:"), client) == BlockRange(end - 9, end)
            assert await resolve(parse_range("100:"), client) == BlockRange(100, end)
            assert await resolve(parse_range("3:+5"), client) == BlockRange(3, 7)
            assert await resolve(parse_range("safe"), client) == BlockRange(head - 32, head - 32)
            with pytest.raises(InputError, match="beyond the node's head"):
                await resolve(parse_range(f"0:{head + 1}"), client)

    anyio.run(main)


def test_the_summary_says_whether_the_safe_end_is_the_finalized_block(devnet: Devnet, tmp_path: Path) -> None:
    head, url = devnet.truth.head, devnet.http_url
    known = extract(["blocks"], blocks="0:20", out=tmp_path / "known", rpc=url)
    assert known.stop == f"stopped at 20 as asked (head {head}, finalized {head - 64})"
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(unknown_tags=("finalized",)))  # a node that answers null for it
    asked = extract(["blocks"], blocks="0:20", out=tmp_path / "asked", rpc=url, confirmations=10)
    unknown = f"no finalized block: head {head} minus 10 confirmations = {head - 10}"
    assert asked.stop == f"stopped at 20 as asked (head {head}, {unknown})"
    assert f"finalized {head - 10}" not in asked.summary()
    safe = extract(["blocks"], blocks="-5:", out=tmp_path / "safe", rpc=url, confirmations=10)
    # cryo's open end means latest; ours the safe end: the line says how to reach the tip.
    assert safe.stop == f"stopped at head {head} minus 10 confirmations = {head - 10}; write -5:latest for the tip"
    assert safe.blocks == (head - 14, head - 10)
