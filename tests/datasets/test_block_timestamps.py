"""``with_block_timestamps``: which answers get their blocks' timestamps added, and which are left as they are.

The stamps of compact answers are counted before any pattern runs (``_logs._STAMP``); each case below names the
headers the function must ask for, whichever path decides it."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from chainframe.datasets import with_block_timestamps


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


@pytest.mark.parametrize("case", CASES)
def test_only_the_blocks_without_a_stamp_are_asked_for(case: str) -> None:
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
