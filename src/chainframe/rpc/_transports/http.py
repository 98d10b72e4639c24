"""HTTP/1.1 POST over asyncio: pooled keep-alive connections, TLS, timeouts, gzip, size caps.

JSON-RPC needs one request shape (a POST with a JSON body) and one answer shape (a status, a few headers, a body
framed by ``content-length``, ``chunked`` or the connection's end), so this is all the HTTP it speaks.

A body of announced length (what anvil and most JSON-RPC servers send) is received by the socket straight into a
buffer of exactly that length (a slice of one kept for the next answers:
:class:`~chainframe.rpc._transports.body.Buffers`), through an :class:`asyncio.BufferedProtocol` (over TLS too:
asyncio's TLS layer decrypts into it), and copied once into the ``bytes`` handed on. Other bodies pass through the
connection's buffer in pieces, as does one longer than the kept buffers may be (64 MiB), so no answer takes more
memory than that ahead of its bytes. ``scripts/bench receive`` (175 MB of eth_getLogs answers from anvil, best and
median of 5) measured 0.140 and 0.144 CPU-s where asyncio streams took 0.157 and 0.176 with a new transport per pass
(its buffers made anew, as for each run), and 0.099 and 0.101 against 0.141 and 0.179 with one transport for every
pass (``--reuse``: a long run). httpx takes about twice the streams' CPU, and its import (with its urllib, email and
http imports) costs 60 ms of every run's start-up. HTTP/2 and proxies go through
:mod:`chainframe.rpc._transports.httpx_`.

Bounded waits: opening a connection (:attr:`Timeout.connect`), a free connection (:attr:`Timeout.pool`), each read
(:attr:`Timeout.read`: the time without a byte, from the request's sending on), and the whole answer from sending to
its last byte (:attr:`Timeout.total`). A reused connection that the server closed while idle is replaced once, before
anything of the answer was read.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Sequence
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

import anyio

from chainframe.rpc._errors import TransportError, connect_failure
from chainframe.rpc._transports.base import Reply, Transport
from chainframe.rpc._transports.body import Body, Buffers
from chainframe.rpc._transports.options import MAX_ANSWER_BYTES, Timeout

if TYPE_CHECKING:
    import ssl  # loaded for https only (18 ms of start-up)

READ_SIZE = 1 << 20
"""Bytes taken at a time from a connection's buffer for a body in pieces; also the longest status line plus headers
accepted. Reading pauses while a connection's buffer holds twice this."""
SCRATCH_SIZE = 1 << 18
"""Bytes asked of the socket per read outside a body of announced length (asyncio's own read size)."""


class _Stale(Exception):
    """A reused connection was closed by the server before any of the answer came back: try a new one."""


class _Connection(asyncio.BufferedProtocol):
    """One connection. The socket reads into a scratch buffer whose bytes are appended to :attr:`buffer` (status
    line, headers, bodies in pieces), except while :meth:`fill` waits for a body of announced length: then it reads
    straight into that body's own buffer, and the waiting task is woken once, when the body is whole."""

    def __init__(self, scratch: memoryview, read_timeout: float) -> None:
        self._loop = asyncio.get_running_loop()
        self._scratch = scratch
        self._read_timeout = read_timeout
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.closed = False
        """The server's end came, or the connection was lost: no byte more will arrive."""
        self.last = 0.0
        """The loop time of the latest byte (or of the request's sending): the read timeout counts from here."""
        self._error: Exception | None = None
        self._target: memoryview | None = None
        self._filled = 0
        self._waiter: asyncio.Future[None] | None = None
        self._drained: asyncio.Future[None] | None = None
        self._paused = False

    # --- called by asyncio's transport -------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._scratch if self._target is None else self._target[self._filled :]

    def buffer_updated(self, nbytes: int) -> None:
        self.last = self._loop.time()
        if self._target is None:
            self.buffer += self._scratch[:nbytes]
            if len(self.buffer) >= 2 * READ_SIZE and not self._paused and self.transport is not None:
                self._paused = True
                self.transport.pause_reading()
        else:
            self._filled += nbytes
            if self._filled < len(self._target):
                return
            self._target = None
        _wake(self._waiter)

    def eof_received(self) -> bool:
        self.closed = True
        _wake(self._waiter)
        return False  # asyncio closes the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._error = exc
        _wake(self._waiter)
        _wake(self._drained)

    def pause_writing(self) -> None:
        self._drained = self._loop.create_future()

    def resume_writing(self) -> None:
        _wake(self._drained)
        self._drained = None

    # --- called by the transport's request ---------------------------------------------------------------------

    async def send(self, data: bytes) -> None:
        if self.closed or self.transport is None:
            raise ConnectionResetError
        self.transport.write(data)
        self.last = self._loop.time()
        if self._drained is not None:  # bounded by the deadline for the whole answer, as the answer is
            await self._drained

    async def until(self, separator: bytes, too_long: str) -> bytes:
        """The bytes up to and including ``separator``; refused after :data:`READ_SIZE` bytes without it."""
        start = 0
        while (end := self.buffer.find(separator, start, READ_SIZE)) < 0:
            if len(self.buffer) >= READ_SIZE:
                raise TransportError(too_long)
            if self.closed:
                raise self._error or asyncio.IncompleteReadError(bytes(self.buffer), None)
            start = max(0, len(self.buffer) - len(separator) + 1)
            await self._wait()
        return self.take(end + len(separator))

    async def some(self, n: int) -> bytes:
        """Up to ``n`` bytes, as soon as there are any; ``b""`` at the connection's end."""
        while not self.buffer:
            if self.closed:
                if self._error is not None:
                    raise self._error
                return b""
            await self._wait()
        return self.take(min(n, len(self.buffer)))

    async def fill(self, view: memoryview) -> memoryview:
        """``view`` filled with the next ``len(view)`` bytes: those here copied in, the rest received into it."""
        n = len(view)
        have = min(n, len(self.buffer))
        view[:have] = memoryview(self.buffer)[:have]
        del self.buffer[:have]
        self._resume()
        if have < n:
            self._filled, self._target = have, view
            try:
                while self._target is not None:
                    if self.closed:
                        raise self._error or asyncio.IncompleteReadError(b"", n - self._filled)
                    await self._wait()
            finally:
                self._target = None  # on an error or a timeout too: later bytes go to the scratch buffer
        return view

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def take(self, n: int) -> bytes:
        """The first ``n`` bytes of :attr:`buffer`, there already."""
        data = bytes(memoryview(self.buffer)[:n])
        del self.buffer[:n]
        self._resume()
        return data

    def _resume(self) -> None:
        if self._paused and len(self.buffer) < READ_SIZE and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()

    async def _wait(self) -> None:
        """Until the transport has news (bytes here, the body whole, the end); ``TimeoutError`` once the read
        timeout passed without a byte."""
        while True:
            left = self.last + self._read_timeout - self._loop.time()
            if left <= 0:
                raise TimeoutError
            self._waiter = waiter = self._loop.create_future()
            with anyio.move_on_after(left):
                await waiter
                return


def _wake(waiter: asyncio.Future[None] | None) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(None)


class HTTPTransport(Transport):
    def __init__(
        self,
        url: str,
        *,
        timeout: Timeout,
        max_connections: int = 64,
        host_header: str | None = None,
        max_bytes: int = MAX_ANSWER_BYTES,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise TransportError(f"not an http(s) URL ({parts.scheme or 'no scheme'})")
        self._host = parts.hostname
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._tls = parts.scheme == "https"
        self._ssl: ssl.SSLContext | None = None
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        default_port = self._port == (443 if self._tls else 80)
        host = host_header or (self._host if default_port else f"{self._host}:{self._port}")
        if ":" in self._host and not host_header:  # an IPv6 literal
            host = f"[{self._host}]" if default_port else f"[{self._host}]:{self._port}"
        head = [
            f"POST {target} HTTP/1.1",
            f"host: {host}",
            "content-type: application/json",
            "accept: application/json",
            "accept-encoding: gzip",
            "user-agent: chainframe",
        ]
        if parts.username is not None:  # credentials in the URL: basic auth, as httpx did
            token = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
            head.append(f"authorization: Basic {base64.b64encode(token).decode()}")
        self._head = ("\r\n".join(head) + "\r\ncontent-length: ").encode()
        self._timeout = timeout
        self._max = max_bytes
        self._slots = anyio.Semaphore(max_connections)
        self._idle: list[_Connection] = []
        self._scratch = memoryview(bytearray(SCRATCH_SIZE))  # shared: each read is copied out before the next
        self._buffers = Buffers()

    async def send(self, body: bytes, ids: Sequence[int]) -> Reply:
        try:
            with anyio.fail_after(self._timeout.pool):
                await self._slots.acquire()
        except TimeoutError:
            raise TransportError(f"no free connection within {self._timeout.pool:g} s") from None
        try:
            with anyio.fail_after(self._timeout.total):
                request = self._head + b"%d\r\n\r\n" % len(body) + body
                while self._idle:  # a pooled connection, unless the server closed it while it was idle
                    conn = self._idle.pop()
                    if conn.closed or conn.buffer:  # seen closed (or sending unasked bytes) while idle
                        conn.close()
                        continue
                    try:
                        return await self._exchange(conn, request, reused=True)
                    except _Stale:
                        continue
                try:
                    return await self._exchange(await self._open(), request, reused=False)
                except _Stale:  # not raised for a new connection; here for the type checker
                    raise TransportError("connection closed before the answer") from None
        except TimeoutError:
            raise TransportError(f"no complete answer within {self._timeout.total:g} s") from None
        finally:
            self._slots.release()

    async def _open(self) -> _Connection:
        if self._tls and self._ssl is None:
            self._ssl = _tls_context()
        try:
            with anyio.fail_after(self._timeout.connect):
                _, conn = await asyncio.get_running_loop().create_connection(
                    lambda: _Connection(self._scratch, self._timeout.read),
                    self._host,
                    self._port,
                    ssl=self._ssl if self._tls else None,
                )
                return conn
        except TimeoutError:
            raise TransportError("no answer in time (ConnectTimeout)") from None
        except OSError as exc:  # ssl.SSLError included
            raise connect_failure(exc, "https" if self._tls else "http") from None

    async def _exchange(self, conn: _Connection, request: bytes, *, reused: bool) -> Reply:
        keep = False
        try:
            try:
                await conn.send(request)
                head = await conn.until(b"\r\n\r\n", "the answer's headers are too long")
            except (ConnectionError, asyncio.IncompleteReadError) as exc:
                if reused and not (isinstance(exc, asyncio.IncompleteReadError) and exc.partial):
                    raise _Stale from None
                raise
            status, headers = _parse_head(head)
            content = b"" if status in (204, 304) or status < 200 else await self._body(conn, headers)
            keep = headers.get("connection", "").lower() != "close" and not conn.closed and not conn.buffer
            return Reply(status, content, headers)
        except TimeoutError:
            raise TransportError("no answer in time (ReadTimeout)") from None
        except (OSError, asyncio.IncompleteReadError) as exc:
            raise TransportError(f"connection failed ({type(exc).__name__})") from None
        finally:
            if keep:
                self._idle.append(conn)
            else:
                conn.close()

    async def _body(self, conn: _Connection, headers: dict[str, str]) -> bytes:
        body = Body(self._max, headers.get("content-encoding", ""))
        if "chunked" in headers.get("transfer-encoding", "").lower():
            broken = "the answer's chunked framing is broken"
            while True:
                line = await conn.until(b"\r\n", broken)
                try:
                    size = int(line.split(b";", 1)[0], 16)
                except ValueError:
                    raise TransportError(broken) from None
                if size == 0:
                    while await conn.until(b"\r\n", broken) != b"\r\n":  # trailers, then the end
                        pass
                    return body.finish()
                await _pieces(conn, size, body)
                if await conn.until(b"\r\n", broken) != b"\r\n":
                    raise TransportError(broken)
        length = headers.get("content-length")
        if length is not None:
            if not length.isdigit() or not length.isascii():
                raise TransportError("the answer's content-length is not a number")
            n = int(length)
            body.expect(n)
            if len(conn.buffer) >= n:  # here already (a small answer comes with its head)
                return body.whole(conn.take(n))
            if n > self._buffers.limit:  # memory for such a length only as its bytes come
                await _pieces(conn, n, body)
                return body.finish()
            buffer = self._buffers.take(n)
            try:
                return body.whole(await conn.fill(memoryview(buffer)[:n]))
            finally:  # no byte arrives into it any more (fill ended), and none of it is kept (whole copied it)
                self._buffers.give(buffer)
        while data := await conn.some(READ_SIZE):  # no framing: the body ends with the connection
            body.feed(data)
        return body.finish()

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
        self._buffers.clear()


async def _pieces(conn: _Connection, size: int, body: Body) -> None:
    """The next ``size`` bytes into ``body``, as they come."""
    while size > 0:
        data = await conn.some(min(size, READ_SIZE))
        if not data:
            raise asyncio.IncompleteReadError(b"", size)
        size -= len(data)
        body.feed(data)


def _parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    try:
        if not version.startswith("HTTP/1."):
            raise ValueError
        status = int(rest[:3])
    except ValueError:
        raise TransportError("the answer is not HTTP/1.1") from None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            name = name.strip().lower()
            headers[name] = f"{headers[name]}, {value.strip()}" if name in headers else value.strip()
    return status, headers


def _tls_context() -> ssl.SSLContext:
    """The CA bundle httpx uses (certifi's), so a host trusted before is trusted now; else the system's."""
    import ssl

    try:
        import certifi
    except ImportError:
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=certifi.where())
