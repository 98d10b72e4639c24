"""HTTP POST through httpx: pooled keep-alive connections, timeouts, optional HTTP/2.

Every answer is read as a stream under one deadline for the whole answer (:attr:`Timeout.total`), and gzip is undone
here, not by httpx, so both the bytes received and the bytes they inflate to stop at ``max_bytes``.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import anyio
import httpx

from chainframe.rpc._errors import LimitExceeded, TransportError
from chainframe.rpc._transports.base import Reply, Transport
from chainframe.rpc._transports.options import MAX_ANSWER_BYTES, Timeout


class HTTPTransport(Transport):
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
        encoding = response.headers.get("content-encoding", "").lower()
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if encoding == "gzip" else None
        if encoding not in ("", "identity", "gzip"):
            raise TransportError(f"the answer came in an encoding we did not ask for ({encoding})")
        parts: list[bytes] = []
        received = size = 0
        async for raw in response.aiter_raw():
            received += len(raw)
            if received > self._max:
                raise self._too_large("received")
            if inflate is None:
                parts.append(raw)
                size = received
                continue
            chunk = raw
            while chunk:  # inflate in bounded steps: a few KB of a gzip bomb never become more than the cap
                out = inflate.decompress(chunk, self._max - size + 1)
                size += len(out)
                if size > self._max:
                    raise self._too_large("inflated")
                parts.append(out)
                chunk = inflate.unconsumed_tail
        if inflate is not None:
            parts.append(inflate.flush())
        return b"".join(parts)

    def _too_large(self, how: str) -> LimitExceeded:
        return LimitExceeded(f"the answer is larger than {self._max:,} bytes ({how}); ask for less", reason="results")

    async def aclose(self) -> None:
        await self._client.aclose()
