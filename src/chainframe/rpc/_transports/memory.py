"""A transport that calls a Python function: unit tests of the client without a network."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence

from chainframe.rpc._transports.base import Reply, Transport

Handler = Callable[[bytes], Reply | Awaitable[Reply]]


class MemoryTransport(Transport):
    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[bytes] = []

    async def send(self, body: bytes, ids: Sequence[int]) -> Reply:
        self.requests.append(body)
        reply = self.handler(body)
        if inspect.isawaitable(reply):
            reply = await reply
        assert isinstance(reply, Reply)
        return reply
