"""What real providers answer that the typed client must take right: a null eth_getLogs, a block asked by its hash,
a traced call with every field of the spec's transaction object, an answer that is not the object it should be."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from chainframe import InputError
from chainframe.rpc import AsyncClient, MalformedResponse, RetryPolicy
from chainframe.rpc import params as p
from chainframe.rpc._transports import MemoryTransport, Reply

HASH = "0x" + "ab" * 32


def _answering(result: Any, seen: list[dict[str, Any]]) -> MemoryTransport:
    def handler(body: bytes) -> Reply:
        request = json.loads(body)
        seen.append(request)
        return Reply(200, json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode(), {})

    return MemoryTransport(handler)


def _run(result: Any, call: Any) -> tuple[Any, list[dict[str, Any]]]:
    seen: list[dict[str, Any]] = []

    async def main() -> Any:
        async with AsyncClient(
            "http://node.example/v3/KEY", transport=_answering(result, seen), retry=RetryPolicy(attempts=1)
        ) as c:
            return await call(c)

    return anyio.run(main), seen


def test_a_null_eth_getlogs_is_a_typed_error_naming_the_method() -> None:
    with pytest.raises(MalformedResponse, match="null where eth_getLogs answers a list") as caught:
        _run(None, lambda c: c.get_logs(from_block=1, to_block=2))
    assert caught.value.method == "eth_getLogs"
    assert "KEY" not in str(caught.value)


def test_an_answer_that_is_not_a_block_is_a_typed_error() -> None:
    with pytest.raises(MalformedResponse, match="not what the spec describes") as caught:
        _run({"number": "0x1"}, lambda c: c.get_block(1))
    assert caught.value.method == "eth_getBlockByNumber"


def test_a_block_hash_asks_for_the_block_by_hash() -> None:
    _, seen = _run(None, lambda c: c.get_block(HASH, full_transactions=True))
    assert seen[0]["method"] == "eth_getBlockByHash"
    assert seen[0]["params"] == [HASH, True]
    with pytest.raises(InputError, match="is a block hash, not a number"):
        p.block(HASH)


def test_traced_calls_keep_every_field_of_the_transaction_object() -> None:
    call = {
        "from": "0x" + "11" * 20, "to": "0x" + "22" * 20, "data": "0x00", "value": "0x1", "gas": "0x5208",
        "gasPrice": "0x3b9aca00", "maxFeePerGas": "0x4", "maxPriorityFeePerGas": "0x2", "nonce": "0x7", "type": "0x2",
        "chainId": "0x1", "accessList": [{"address": "0x" + "33" * 20, "storageKeys": [HASH]}],
    }  # fmt: skip
    assert p.call_list([call]) == [call]
    with pytest.raises(InputError, match="access_list must be"):
        p.call_list([{**call, "accessList": ["0x00"]}])
