"""The HTTP/1.1 transport against real servers on 127.0.0.1 (aiohttp, and a bare one for what aiohttp will not
send): every framing a server may choose (content-length, chunked, the connection's end, gzip) gives the exact bytes,
however the body is cut into pieces on the way, and over TLS; an announced length over the cap is refused and one at
the cap is read; a body cut short or stalled fails in time instead of hanging; connections are pooled and reused; one
the server closed while idle is replaced without failing the request; credentials in the URL become basic auth; and a
proxy named in the environment hands the requests to httpx."""

from __future__ import annotations

import asyncio
import datetime
import gzip
import ipaddress
import re
import ssl
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from aiohttp import web

from chainframe.rpc import AsyncClient, LimitExceeded, RetryPolicy, Timeout, TransportError
from chainframe.rpc._transports import http
from chainframe.rpc._transports.body import KEPT_FROM, Buffers
from chainframe.rpc._transports.http import HTTPTransport
from tests.threaded_server import ServerLoop, serve_in_thread, stop_loop

ONCE = RetryPolicy(attempts=1)
BIG = b'{"jsonrpc":"2.0","id":1,"result":"0x' + b"ab" * 3_000_000 + b'"}'


class Server:
    def __init__(self) -> None:
        self.peers: set[object] = set()
        self.auth: list[str | None] = []

    async def framed(self, request: web.Request) -> web.StreamResponse:
        self.peers.add(request.transport)
        self.auth.append(request.headers.get("authorization"))
        body = await request.read()
        how = request.match_info["how"]
        if how == "length":
            return web.Response(body=BIG + body, content_type="application/json")
        if how == "gzip":
            return web.Response(body=gzip.compress(BIG + body), headers={"content-encoding": "gzip"})
        if how == "pieces":  # the announced length, written in 1,000 small pieces with pauses: many reads each
            response = web.StreamResponse(headers={"content-type": "application/json"})
            response.content_length = len(BIG) + len(body)
            await response.prepare(request)
            for i, start in enumerate(range(0, len(BIG), 6_000)):
                await response.write(BIG[start : start + 6_000])
                if i % 100 == 0:
                    await asyncio.sleep(0.005)
            await response.write(body)
            return response
        if how == "gzip-chunked":  # what geth sends for a large answer
            response = web.StreamResponse(headers={"content-encoding": "gzip"})
            response.enable_chunked_encoding()
            await response.prepare(request)
            packed = gzip.compress(BIG + body)
            for i in range(0, len(packed), 100_003):
                await response.write(packed[i : i + 100_003])
            return response
        if how == "close":  # HTTP/1.0 style: no length, the body ends with the connection
            response = web.StreamResponse(headers={"connection": "close"})
            response.force_close()
            await response.prepare(request)
            await response.write(BIG + body)
            return response
        response = web.StreamResponse()  # chunked
        response.enable_chunked_encoding()
        await response.prepare(request)
        for i in range(0, len(BIG), 1_000_003):
            await response.write(BIG[i : i + 1_000_003])
        await response.write(body)
        return response

    async def once(self, request: web.Request) -> web.StreamResponse:
        """Answers, then closes the connection without saying so: the client's pooled connection goes stale."""
        await request.read()
        response = web.Response(body=b'{"jsonrpc":"2.0","id":1,"result":"0x1"}', content_type="application/json")
        await response.prepare(request)
        await response.write_eof()
        assert request.transport is not None
        request.transport.close()
        return response


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Server]]:
    state = Server()
    with serve_in_thread([("/framed/{how}", state.framed), ("/once", state.once)]) as port:
        yield f"127.0.0.1:{port}", state


@pytest.mark.parametrize("how", ["length", "pieces", "chunked", "close", "gzip", "gzip-chunked"])
def test_every_framing_gives_the_exact_answer_and_connections_are_reused(server: tuple[str, Server], how: str) -> None:
    address, state = server
    state.peers.clear()

    async def main() -> None:
        transport = HTTPTransport(f"http://{address}/framed/{how}", timeout=Timeout(), max_connections=2)
        try:
            async with anyio.create_task_group() as tg:
                for i in range(8):

                    async def one(i: int = i) -> None:
                        reply = await transport.send(b"%d" % i, [i])
                        assert reply.status == 200
                        assert reply.body == BIG + b"%d" % i

                    tg.start_soon(one)
        finally:
            await transport.aclose()

    anyio.run(main)
    # At most two connections at once; kept alive unless the server closes each one.
    assert len(state.peers) == (8 if how == "close" else 2)


def test_a_connection_the_server_closed_while_idle_is_replaced(server: tuple[str, Server]) -> None:
    address, _ = server

    async def main() -> None:
        async with AsyncClient(f"http://{address}/once", retry=ONCE) as client:
            for _ in range(5):  # each pooled connection is stale by the next request: never a failure
                assert await client.chain_id() == 1
                await anyio.sleep(0.05)

    anyio.run(main)


def test_credentials_in_the_url_are_sent_as_basic_auth(server: tuple[str, Server]) -> None:
    address, state = server
    state.auth.clear()

    async def main() -> None:
        transport = HTTPTransport(f"http://user:p%40ss@{address}/framed/length", timeout=Timeout())
        await transport.send(b"1", [1])
        await transport.aclose()

    anyio.run(main)
    assert state.auth == ["Basic dXNlcjpwQHNz"]  # base64 of user:p@ss


def test_a_proxy_in_the_environment_goes_through_httpx(monkeypatch: pytest.MonkeyPatch) -> None:
    from chainframe.rpc._transports.httpx_ import HTTPXTransport

    async def kind() -> type:
        async with AsyncClient("http://127.0.0.1:9/", retry=ONCE) as client:
            return type(client._routes[0].transport)

    assert anyio.run(kind) is HTTPTransport
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    assert anyio.run(kind) is HTTPXTransport


# --- a bare server, for answers aiohttp will not send -----------------------------------------------------------

Respond = Callable[[asyncio.StreamWriter, bytes], Awaitable[bool]]
"""Writes the answer to one request's body; returns whether to keep the connection for the next request."""


@contextmanager
def serve_raw(respond: Respond, tls: ssl.SSLContext | None = None) -> Iterator[int]:
    """An HTTP/1.1 server on 127.0.0.1 in a thread of its own that reads each request and lets ``respond`` write
    whatever it likes; yields the port. Connections still open at the end are cancelled."""
    loop = ServerLoop()
    ready = threading.Event()
    box: dict[str, asyncio.Server] = {}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                found = re.search(rb"content-length: (\d+)", head, re.IGNORECASE)
                assert found is not None
                if not await respond(writer, await reader.readexactly(int(found[1]))):
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        box["server"] = loop.run_until_complete(asyncio.start_server(handle, "127.0.0.1", 0, ssl=tls))
        ready.set()
        loop.run_forever()

    async def stop() -> None:
        box["server"].close()
        tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    ready.wait(10)
    try:
        yield box["server"].sockets[0].getsockname()[1]
    finally:
        asyncio.run_coroutine_threadsafe(stop(), loop).result(10)
        stop_loop(loop, thread)


def _answer(body: bytes, *, length: int | None = None, extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % (len(body) if length is None else length) + body + extra


def _send_all(url: str, bodies: list[bytes], kept_bytes: int | None = None, **options: object) -> list[bytes]:
    async def main() -> list[bytes]:
        transport = HTTPTransport(url, timeout=options.pop("timeout", Timeout()), **options)  # type: ignore[arg-type]
        if kept_bytes is not None:
            transport._buffers = Buffers(kept_bytes)
        try:
            return [(await transport.send(body, [1])).body for body in bodies]
        finally:
            await transport.aclose()

    return anyio.run(main)


@pytest.mark.parametrize("kept_bytes", [None, 4 * 2**20])
def test_answers_of_any_size_one_after_another_come_back_exact(kept_bytes: int | None) -> None:
    """Each answer is received into a buffer kept from the answers before: a small one after a large one is not
    padded with what the large one left there, and none is changed by the next one's arrival. One longer than the
    kept buffers may be (here 9 MB over 4 MiB) is received in pieces instead."""
    sizes = [3_000_000, 10, 0, 2_000_000, 9_000_000, 1_500_000, 7]
    peers: set[object] = set()

    async def respond(writer: asyncio.StreamWriter, body: bytes) -> bool:
        peers.add(writer.transport)
        n = sizes[int(body)]
        writer.write(_answer(bytes([65 + int(body)]) * n))
        await writer.drain()
        return True

    with serve_raw(respond) as port:
        bodies = _send_all(f"http://127.0.0.1:{port}/", [b"%d" % i for i in range(len(sizes))], kept_bytes)
    assert bodies == [bytes([65 + i]) * n for i, n in enumerate(sizes)]
    assert len(peers) == 1  # one kept-alive connection


def test_kept_buffers_are_reused_and_bounded() -> None:
    buffers = Buffers(kept_bytes=16 * 2**20)
    first = buffers.take(3_000_000)
    assert len(first) == 4 * 2**20  # a quarter more, rounded up to a MiB
    buffers.give(first)
    assert buffers.take(2_000_000) is first  # reused by an answer it fits
    assert len(buffers.take(KEPT_FROM - 1)) == KEPT_FROM - 1  # small answers: a buffer of their own, never kept
    buffers.give(bytearray(KEPT_FROM - 1))
    big = buffers.take(10_000_000)
    buffers.give(first)
    buffers.give(big)  # 4 + 12 MiB: at the bound
    assert [len(b) for b in buffers._kept] == [4 * 2**20, 12 * 2**20]
    buffers.give(bytearray(2 * 2**20))  # over the bound: the smallest give way
    assert [len(b) for b in buffers._kept] == [2 * 2**20, 12 * 2**20]
    buffers.give(bytearray(17 * 2**20))  # larger than the bound: never kept
    assert sum(len(b) for b in buffers._kept) <= 16 * 2**20


def test_an_answer_at_the_cap_is_read_and_one_byte_over_is_refused_before_reading(server: tuple[str, Server]) -> None:
    address, _ = server
    size = len(BIG) + 1  # the answer to b"1"
    assert _send_all(f"http://{address}/framed/length", [b"1"], max_bytes=size) == [BIG + b"1"]
    started = time.monotonic()
    with pytest.raises(LimitExceeded, match=rf"larger than {size - 1:,} bytes \(announced\)"):
        _send_all(f"http://{address}/framed/length", [b"1"], max_bytes=size - 1)
    assert time.monotonic() - started < 5
    # Framed otherwise, the cap applies to the bytes as they arrive, and inflated.
    assert _send_all(f"http://{address}/framed/chunked", [b"1"], max_bytes=size) == [BIG + b"1"]
    with pytest.raises(LimitExceeded, match=r"\(received\)"):
        _send_all(f"http://{address}/framed/chunked", [b"1"], max_bytes=size - 1)
    assert _send_all(f"http://{address}/framed/gzip", [b"1"], max_bytes=size) == [BIG + b"1"]
    with pytest.raises(LimitExceeded, match=r"\(inflated\)"):
        _send_all(f"http://{address}/framed/gzip", [b"1"], max_bytes=size - 1)


def test_a_body_shorter_than_announced_then_closed_fails_at_once() -> None:
    async def respond(writer: asyncio.StreamWriter, body: bytes) -> bool:
        writer.write(_answer(b"x" * 500_000, length=2_000_000))
        await writer.drain()
        return False  # closes

    started = time.monotonic()
    with serve_raw(respond) as port, pytest.raises(TransportError, match=r"connection failed \(IncompleteReadError\)"):
        _send_all(f"http://127.0.0.1:{port}/", [b"1"], timeout=Timeout(read=30, total=60))
    assert time.monotonic() - started < 5


def test_a_body_that_stalls_fails_at_the_read_timeout_and_one_that_keeps_coming_does_not() -> None:
    async def respond(writer: asyncio.StreamWriter, body: bytes) -> bool:
        pause = float(body)  # seconds between pieces
        writer.write(_answer(b"y" * 400_000, length=500_000))  # the head and most of the body at once
        await writer.drain()
        for _ in range(4 if pause < 1 else 1):
            await asyncio.sleep(pause)
            writer.write(b"y" * 25_000)
            await writer.drain()
        return True

    with serve_raw(respond) as port:
        url = f"http://127.0.0.1:{port}/"
        # A piece every 0.3 s, 1.2 s in all, against a read timeout of 0.5 s: each wait is short, so no timeout.
        assert _send_all(url, [b"0.3"], timeout=Timeout(read=0.5, total=10)) == [b"y" * 500_000]
        started = time.monotonic()
        with pytest.raises(TransportError, match=r"no answer in time \(ReadTimeout\)"):
            _send_all(url, [b"30"], timeout=Timeout(read=0.5, total=10))
        assert time.monotonic() - started < 3


def test_unasked_bytes_after_an_answer_are_not_read_as_the_next_one() -> None:
    peers: set[object] = set()

    async def respond(writer: asyncio.StreamWriter, body: bytes) -> bool:
        peers.add(writer.transport)
        writer.write(_answer(b"[%s]" % body, extra=b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nnope"))
        await writer.drain()
        return True

    with serve_raw(respond) as port:
        assert _send_all(f"http://127.0.0.1:{port}/", [b"1", b"2", b"3"]) == [b"[1]", b"[2]", b"[3]"]
    assert len(peers) == 3  # each connection is given up after its answer


def test_headers_over_the_limit_are_refused() -> None:
    async def respond(writer: asyncio.StreamWriter, body: bytes) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\n" + b"x-filler: " + b"f" * (http.READ_SIZE + 10) + b"\r\n\r\n{}")
        await writer.drain()
        return True

    with serve_raw(respond) as port, pytest.raises(TransportError, match="the answer's headers are too long"):
        _send_all(f"http://127.0.0.1:{port}/", [b"1"])


def _tls_contexts(folder: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context with a fresh self-signed certificate for 127.0.0.1, and a client context trusting it."""
    pytest.importorskip("cryptography")
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    (folder / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / "key.pem").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    return server, ssl.create_default_context(cafile=folder / "cert.pem")


def test_tls_answers_are_received_into_the_buffer_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """asyncio's TLS layer hands a buffered protocol the decrypted bytes straight into its buffer (Python >= 3.11)."""
    server_tls, client_tls = _tls_contexts(tmp_path)
    monkeypatch.setattr(http, "_tls_context", lambda: client_tls)
    peers: set[object] = set()

    async def respond(writer: asyncio.StreamWriter, body: bytes) -> bool:
        peers.add(writer.transport)
        answer = BIG + body
        head, rest = _answer(answer)[: -len(answer)], answer
        writer.write(head + rest[:70_000])  # the head with the body's start, then the rest in pieces
        for i in range(70_000, len(rest), 1_000_003):
            await writer.drain()
            writer.write(rest[i : i + 1_000_003])
        await writer.drain()
        return True

    with serve_raw(respond, tls=server_tls) as port:
        bodies = _send_all(f"https://127.0.0.1:{port}/", [b"1", b"2", b"3"])
    assert bodies == [BIG + b"1", BIG + b"2", BIG + b"3"]
    assert len(peers) == 1


def test_a_pooled_connection_closed_as_the_request_arrives_is_replaced_and_a_new_one_is_not_retried() -> None:
    """The race an idle timeout makes: the server closes the kept connection just as the next request reaches it,
    with nothing of an answer sent. That request goes again on a new connection, once; a new connection closed the
    same way is a failure."""
    served: dict[object, int] = {}

    async def respond(writer: asyncio.StreamWriter, body: bytes) -> bool:
        served[writer.transport] = served.get(writer.transport, 0) + 1
        if served[writer.transport] > 1 or body == b"never":
            return False  # closes without a byte
        writer.write(_answer(b"[%s]" % body))
        await writer.drain()
        return True

    with serve_raw(respond) as port:
        url = f"http://127.0.0.1:{port}/"
        assert _send_all(url, [b"1", b"2", b"3"]) == [b"[1]", b"[2]", b"[3]"]
        assert len(served) == 3
        with pytest.raises(TransportError, match=r"connection failed \(IncompleteReadError\)"):
            _send_all(url, [b"never"])
