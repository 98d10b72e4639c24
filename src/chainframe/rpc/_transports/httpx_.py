"""HTTP POST through httpx: for HTTP/2 (``http2=True``) and for a proxy named in the environment (``HTTPS_PROXY``...).

Plain HTTP/1.1 goes through :mod:`chainframe.rpc._transports.http`, which receives large answers with half the CPU
and does not import httpx. Every answer is read as a stream under one deadline for the whole answer
(:attr:`Timeout.total`), and gzip is undone by :class:`~chainframe.rpc._transports.body.Body`, not by httpx.
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio
import httpx

from chainframe._tls import verified_context
from chainframe.rpc._errors import TransportError
from chainframe.rpc._transports.base import Reply, Transport
from chainframe.rpc._transports.body import Body
from chainframe.rpc._transports.options import MAX_ANSWER_BYTES, Timeout


class HTTPXTransport(Transport):
    def __init__(
        self,
        url: str,
        *,
        timeout: Timeout,
        max_connections: int = 64,
        http2: bool = False,
        host_header: str | None = None,
        max_bytes: int = MAX_ANSWER_BYTES,
    ) -> None:
        self._url = url
        self._total = timeout.total
        self._max = max_bytes
        headers = {"content-type": "application/json", "accept-encoding": "gzip"}
        if host_header:
            headers["host"] = host_header
        self._client = httpx.AsyncClient(
            headers=headers,
            timeout=httpx.Timeout(timeout.read, connect=timeout.connect, pool=timeout.pool),
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
            http2=http2,
            verify=verified_context(),
        )

    async def send(self, body: bytes, ids: Sequence[int]) -> Reply:
        try:
            with anyio.fail_after(self._total):
                async with self._client.stream("POST", self._url, content=body) as response:
                    content = await self._read(response)
        except TimeoutError:
            raise TransportError(f"no complete answer within {self._total:g} s") from None
        except httpx.TimeoutException as exc:
            raise TransportError(f"no answer in time ({type(exc).__name__})") from None
        except httpx.HTTPError as exc:
            # httpx's messages can carry the URL, hence the key: say only what kind of failure it was.
            raise TransportError(f"connection failed ({type(exc).__name__})") from None
        return Reply(response.status_code, content, response.headers)

    async def _read(self, response: httpx.Response) -> bytes:
        body = Body(self._max, response.headers.get("content-encoding", ""))
        async for raw in response.aiter_raw():
            body.feed(raw)
        return body.finish()

    async def aclose(self) -> None:
        await self._client.aclose()
