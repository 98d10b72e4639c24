"""``with_block_timestamps``: which answers get their blocks' timestamps added, and which are left as they are.

Each answer's block numbers and stamps are counted in C first (``_native.block_stamps``), and by the patterns where
the scanner is off; each case below names the headers the function must ask for, on both paths, and the counts are
the patterns' own on recorded answers and on their damaged copies."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import anyio
import pytest

from chainframe.datasets import with_block_timestamps
from chainframe.datasets._logs import _BLOCK_NUMBER, _STAMPED
from chainframe.datasets._native import available, block_stamps
from tests.fixtures import recorded_responses


class Headers:
    """A client that answers eth_getBlockByNumber batches with a header whose timestamp is the block's number + 1000,
    and records the blocks asked for."""

    def __init__(self) -> None:
        self.asked: list[int] = []

    async def batch(self, calls: list[tuple[str, list[Any]]]) -> list[dict[str, str]]:
        numbers = [int(params[0], 16) for method, params in calls if method == "eth_getBlockByNumber"]
        self.asked += numbers
        return [{"timestamp": hex(n + 1000)} for n in numbers]


def _log(block: int, stamp: str | None) -> str:
    text = f'{{"address":"0x{"11" * 20}","blockNumber":"{hex(block)}"'
    return text + (stamp or "") + ',"logIndex":"0x0","data":"0x"}'


def _answer(*logs: str) -> bytes:
    return ('{"jsonrpc":"2.0","id":1,"result":[' + ",".join(logs) + "]}").encode()


CASES = {
    "every stamp compact": ([(1, ',"blockTimestamp":"0x3e9"'), (2, ',"blockTimestamp":"0x3ea"')], []),
    "every stamp spaced": ([(1, ', "blockTimestamp" : "0x3e9"'), (2, ',"blockTimestamp":\n"0x3ea"')], []),
    "stamps as JSON numbers": ([(1, ',"blockTimestamp":1001'), (2, ',"blockTimestamp":1002')], []),
    "a JSON number not led by 1": ([(1, ',"blockTimestamp":1001'), (2, ',"blockTimestamp":0')], []),
    "no stamp": ([(1, None), (2, None)], [1, 2]),
    "one stamp null": ([(1, ',"blockTimestamp":"0x3e9"'), (2, ',"blockTimestamp":null')], [2]),
    "one stamp missing": ([(1, ',"blockTimestamp":"0x3e9"'), (2, None)], [2]),
    "one null, spaced": ([(1, ',"blockTimestamp":"0x3e9"'), (2, ',"blockTimestamp" : null')], [2]),
}


@pytest.mark.parametrize("native", ["1", "0"])
@pytest.mark.parametrize("case", CASES)
def test_only_the_blocks_without_a_stamp_are_asked_for(case: str, native: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHAINFRAME_NATIVE", native)
    logs, missing = CASES[case]
    client = Headers()
    body = _answer(*(_log(block, stamp) for block, stamp in logs))
    (out,) = anyio.run(with_block_timestamps, client, [body])
    assert client.asked == missing
    if not missing:
        assert out is body  # returned as it came: nothing parsed or rewritten
    stamps = [int(str(log["blockTimestamp"]), 0) for log in json.loads(out)["result"]]
    sent = {
        block: int(stamp.rsplit(":", 1)[1].strip(' \n"'), 0) for block, stamp in logs if stamp and "null" not in stamp
    }
    assert stamps == [sent.get(block, block + 1000) for block, _ in logs]  # every log has a timestamp, sent or added


def test_an_answer_naming_no_block_is_left_as_it_is() -> None:
    client = Headers()
    body = b'{"jsonrpc":"2.0","id":1,"result":[]}'
    assert anyio.run(with_block_timestamps, client, [body]) == [body]
    assert client.asked == []


def _patterns(body: bytes) -> tuple[int, int]:
    named = len(_BLOCK_NUMBER.findall(body))
    return named, len(_STAMPED.findall(body)) if named else 0


JUNK = [b" ", b"\t", b"\n", b"\x0b", b"\x0c", b"\r", b":", b'"', b"n", b"null", b"0x", b"0", b"f", b"F", b"g",
        b"1" * 17, b'"blockNumber"', b'"blockTimestamp"', b'"b', b"", b"}", b","]  # fmt: skip


KEYS = re.compile(rb'"block(?:Number|Timestamp)"')


def _damaged(rng: random.Random, body: bytes) -> bytes:
    """``body`` with bytes put in, replaced or cut just after a ``"blockNumber"`` or ``"blockTimestamp"`` key."""
    keys = [m.start() for m in KEYS.finditer(body)]
    for _ in range(rng.choice((1, 2, 3))):
        if not keys:
            return body
        at = rng.choice(keys) + rng.randrange(0, 24)
        cut = rng.choice((0, 0, 1, 2, 5))
        body = body[:at] + rng.choice(JUNK) + body[at + cut :]
    return body


@pytest.mark.skipif(not available(), reason="the C scanner is not built")
def test_the_native_counts_are_the_patterns_counts() -> None:
    """On every recorded eth_getLogs and eth_getBlockReceipts answer, and 3,000 copies damaged around the keys the
    patterns look for (spaces of each kind, nulls, quotes, 17 hex digits, keys cut or doubled)."""
    bodies = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "result": record.result}).encode()
        for record in recorded_responses()
        if record.method in ("eth_getLogs", "eth_getBlockReceipts") and record.result
    ]
    assert len(bodies) >= 5
    assert any(_patterns(b)[1] for b in bodies)  # some recorded answers hold stamps
    rng = random.Random(20261129)
    damaged = [_damaged(rng, rng.choice(bodies)) for _ in range(3000)]
    for body in bodies + damaged:
        assert block_stamps(body) == _patterns(body), body[:300]
    assert len({_patterns(b) for b in damaged}) > 10  # the damage moved both counts around
