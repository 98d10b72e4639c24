"""HTTP POST through httpx: pooled keep-alive connections, timeouts, optional HTTP/2."""

from __future__ import annotations

from collections.abc import Sequence

import httpx

from chainframe.rpc._errors import TransportError
from chainframe.rpc._transports.base import Reply, Transport
from chainframe.rpc._transports.options import Timeout


class HTTPTransport(Transport):
    def __init__(
        self,
        url: str,
        *,
        timeout: Timeout,
        max_connections: int = 64,
        http2: bool = False,
        host_header: str | None = None,
    ) -> None:
        self._url = url
        headers = {"content-type": "application/json", "accept-encoding": "gzip"}
        if host_header:
            headers["host"] = host_header
        self._client = httpx.AsyncClient(
            headers=headers,
            timeout=httpx.Timeout(timeout.read, connect=timeout.connect, pool=timeout.pool),
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
            http2=http2,
        )

    async def send(self, body: bytes, ids: Sequence[int]) -> Reply:
        try:
            response = await self._client.post(self._url, content=body)
        except httpx.TimeoutException as exc:
            raise TransportError(f"no answer in time ({type(exc).__name__})") from None
        except httpx.HTTPError as exc:
            # httpx's messages can carry the URL, hence the key: say only what kind of failure it was.
            raise TransportError(f"connection failed ({type(exc).__name__})") from None
        return Reply(response.status_code, response.content, response.headers)

    async def aclose(self) -> None:
        await self._client.aclose()
