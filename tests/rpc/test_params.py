"""Bad input fails with a message naming the argument, before any request is sent."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from chainframe import InputError
from chainframe.rpc import AsyncClient, MemoryTransport, Reply

pytestmark = pytest.mark.anyio

ADDRESS = "0x" + "11" * 20
HASH = "0x" + "22" * 32


def _never(body: bytes) -> Reply:
    raise AssertionError(f"a request was sent: {body!r}")


BAD: list[tuple[str, Callable[[AsyncClient], Awaitable[Any]], str]] = [
    ("block -1", lambda c: c.get_block(-1), "block must be a block number"),
    ("block tag", lambda c: c.get_block("newest"), "one of latest/earliest/pending/safe/finalized"),
    ("block float", lambda c: c.get_block(1.5), "block must be"),
    ("short address", lambda c: c.get_proof("0x1234"), "address must be 20 bytes"),
    ("address bytes", lambda c: c.get_proof(b"\x01" * 19), "address must be 20 bytes"),
    ("hash length", lambda c: c.get_transaction_receipt("0xabc"), "transaction_hash must be 32 bytes"),
    ("index", lambda c: c.get_transaction_by_block_number_and_index(1, -2), "index must be a non-negative integer"),
    ("uncle index", lambda c: c.get_uncle_by_block_hash_and_index(HASH, "0"), "index must be"),
    (
        "hash and range",
        lambda c: c.get_logs(block_hash=HASH, from_block=1),
        "block_hash excludes from_block and to_block",
    ),
    ("reversed", lambda c: c.get_logs(from_block=10, to_block=5), "from_block (10) is after to_block (5)"),
    ("five topics", lambda c: c.get_logs(topics=[None] * 5), "a log has at most 4"),
    ("topic size", lambda c: c.get_logs(topics=[["0x12"]]), "topics[0][0] must be 32 bytes"),
    ("address list", lambda c: c.get_logs(address=[ADDRESS, "0xzz"]), "address[1]"),
    ("storage key", lambda c: c.get_proof(ADDRESS, ["0x01"]), "storage_keys[0] must be 32 bytes"),
    ("trace to", lambda c: c.trace_call(to="0x00"), "to must be 20 bytes"),
    ("trace data", lambda c: c.trace_call(to=ADDRESS, data="0x123"), "data must be 0x-prefixed hex"),
]


@pytest.mark.parametrize(("case", "call", "message"), BAD, ids=[b[0] for b in BAD])
async def test_rejected_before_sending(case: str, call: Callable[[AsyncClient], Awaitable[Any]], message: str) -> None:
    transport = MemoryTransport(_never)
    async with AsyncClient("http://127.0.0.1:1/v3/k", transport=transport) as client:
        with pytest.raises(InputError) as error:
            await call(client)
    assert message in str(error.value)
    assert transport.requests == []


def test_client_options_are_checked() -> None:
    with pytest.raises(InputError, match="batch_size"):
        AsyncClient("http://127.0.0.1:1", batch_size=0)
    with pytest.raises(InputError, match="transport must be"):
        AsyncClient("http://127.0.0.1:1", transport="carrier-pigeon")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="RPC URL must look like"):
        AsyncClient("127.0.0.1:8545")
    with pytest.raises(InputError, match="has no WebSocket URL"):
        AsyncClient("http://127.0.0.1:8545", transport="ws")
