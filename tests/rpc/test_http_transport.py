"""The HTTP/1.1 transport against a real aiohttp server on 127.0.0.1: every framing a server may choose
(content-length, chunked, the connection's end, gzip) gives the exact bytes; connections are pooled and reused; one
the server closed while idle is replaced without failing the request; credentials in the URL become basic auth; and a
proxy named in the environment hands the requests to httpx."""

from __future__ import annotations

import gzip
from collections.abc import Iterator

import anyio
import pytest
from aiohttp import web

from chainframe.rpc import AsyncClient, RetryPolicy, Timeout
from chainframe.rpc._transports.http import HTTPTransport
from tests.threaded_server import serve_in_thread

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


@pytest.mark.parametrize("how", ["length", "chunked", "close", "gzip"])
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
