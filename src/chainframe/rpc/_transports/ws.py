"""WebSocket: one persistent connection, many requests in flight, answers matched by JSON-RPC id.

The connection opens on first use and again after a drop; requests in flight when it drops fail with
``TransportError`` (transient, so the client retries them on the new connection). The reader task lives in the task
group the client opens for the transport's lifetime.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import anyio
from anyio.abc import TaskGroup
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from chainframe.rpc._errors import KeyRefused, RPCError, TransportError, connect_failure
from chainframe.rpc._transports.base import Reply, Transport
from chainframe.rpc._transports.options import MAX_ANSWER_BYTES, Timeout

# Answers put the id first in practice; look there before parsing a large answer.
_ID_NEAR_START = re.compile(rb'"id"\s*:\s*(\d+)')


class _Waiter:
    def __init__(self) -> None:
        self.done = anyio.Event()
        self.reply: str | None = None
        self.error: RPCError | None = None


class WebSocketTransport(Transport):
    def __init__(
        self, url: str, *, timeout: Timeout, task_group: TaskGroup, host_header: str | None = None,
        max_bytes: int = MAX_ANSWER_BYTES,
    ) -> None:  # fmt: skip
        self._max_bytes = max_bytes
        self._url = url
        self._timeout = timeout
        self._task_group = task_group
        self._headers = {"Host": host_header} if host_header else None
        self._conn: ClientConnection | None = None
        self._connecting = anyio.Lock()
        self._pending: dict[int, _Waiter] = {}

    async def _connection(self) -> ClientConnection:
        async with self._connecting:
            if self._conn is None:
                try:
                    with anyio.fail_after(self._timeout.connect):
                        conn = await connect(
                            self._url, max_size=self._max_bytes, additional_headers=self._headers, open_timeout=None
                        )
                except InvalidStatus as exc:
                    status = exc.response.status_code
                    if status in (401, 403):
                        raise KeyRefused(f"the service refused the API key (HTTP {status})") from None
                    raise TransportError(f"WebSocket handshake refused (HTTP {status})") from None
                except TimeoutError:
                    raise TransportError("WebSocket handshake timed out") from None
                except OSError as exc:
                    raise connect_failure(exc, self._url.partition(":")[0]) from None
                except InvalidHandshake as exc:
                    raise TransportError(f"WebSocket connection failed ({type(exc).__name__})") from None
                self._conn = conn
                self._task_group.start_soon(self._read, conn)
            return self._conn

    async def _read(self, conn: ClientConnection) -> None:
        try:
            async for message in conn:
                text = message if isinstance(message, str) else message.decode()
                self._deliver(text)
        except ConnectionClosed:
            pass
        finally:
            if self._conn is conn:
                self._conn = None
            self._fail_pending(conn)

    def _deliver(self, text: str) -> None:
        m = _ID_NEAR_START.search(text[:256].encode())
        ids: list[int] = []
        if m:
            ids = [int(m.group(1))]
        else:
            try:
                answer = json.loads(text)
            except ValueError:
                return  # unmatched garbage; its waiter times out or fails when the connection drops
            items = answer if isinstance(answer, list) else [answer]
            ids = [i["id"] for i in items if isinstance(i, dict) and isinstance(i.get("id"), int)]
        for i in ids:
            waiter = self._pending.get(i)
            if waiter is not None:
                waiter.reply = text
                waiter.done.set()
                return

    def _fail_pending(self, conn: ClientConnection) -> None:
        for waiter in set(self._pending.values()):
            if not waiter.done.is_set():
                waiter.error = TransportError("WebSocket connection lost before the answer")
                waiter.done.set()

    async def send(self, body: bytes, ids: Sequence[int]) -> Reply:
        conn = await self._connection()
        waiter = _Waiter()
        for i in ids:
            self._pending[i] = waiter
        try:
            try:
                await conn.send(body.decode())
            except ConnectionClosed:
                raise TransportError("WebSocket connection lost while sending") from None
            with anyio.move_on_after(self._timeout.read):
                await waiter.done.wait()
            if not waiter.done.is_set():
                raise TransportError(f"no WebSocket answer within {self._timeout.read:g} s")
            if waiter.error is not None:
                raise waiter.error
            assert waiter.reply is not None
            return Reply(200, waiter.reply.encode())
        finally:
            for i in ids:
                self._pending.pop(i, None)

    async def aclose(self) -> None:
        if self._conn is not None:
            await self._conn.close()
