"""An aiohttp server on 127.0.0.1 in a thread of its own, for tests that need a misbehaving HTTP peer."""

from __future__ import annotations

import asyncio
import gc
import threading
import warnings
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@contextmanager
def serve_in_thread(routes: Sequence[tuple[str, Handler]]) -> Iterator[int]:
    """Serve POST ``routes`` (path, handler) until the block ends; yields the port."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    box: dict[str, object] = {}

    def serve() -> None:
        asyncio.set_event_loop(loop)
        app = web.Application()
        box["held"] = hold_connections(app)
        for path, handler in routes:
            app.router.add_post(path, handler)
        runner = web.AppRunner(app, access_log=None)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        box["runner"], box["port"] = runner, site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    ready.wait(10)
    try:
        yield int(box["port"])  # type: ignore[call-overload]
    finally:
        asyncio.run_coroutine_threadsafe(box["runner"].cleanup(), loop).result(10)  # type: ignore[attr-defined]
        stop_loop(loop, thread, box["held"])  # type: ignore[arg-type]


def hold_connections(app: web.Application) -> list[asyncio.BaseTransport]:
    """The connections ``app`` serves a request on, held from their first request until :func:`stop_loop` aborts
    them. aiohttp's server can drop every reference to a connection it never closed (a client gone mid-request, a
    shutdown): the transport is then garbage with its socket open, and whenever the collector next runs, in whatever
    test, its ResourceWarning is raised as that test's failure (tests/engine/test_answers.py, a case at a time, in 4
    of 7 clean CIs and every time here under three workers). Held, they cannot become garbage before they are
    closed."""
    held: list[asyncio.BaseTransport] = []

    @web.middleware
    async def hold(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.transport is not None:
            held.append(request.transport)
        return await handler(request)

    app.middlewares.append(hold)
    return held


def stop_loop(
    loop: asyncio.AbstractEventLoop, thread: threading.Thread, held: Sequence[asyncio.BaseTransport] = ()
) -> None:
    """Stop and close the loop a test's server runs in ``thread`` (its server shut down already), then collect what
    the server left.

    Stopped while clients are mid-request, aiohttp's server can leave connections its shutdown never closes: a
    transport and its socket, found only as garbage (14 to 52 ResourceWarnings over 40 stops of a proxy under 8
    clients' requests). Those still open, ``held`` (:func:`hold_connections`) and the loop's own, are aborted first,
    on the loop, and the loop runs once more so their sockets are closed (a transport closes its socket in a callback:
    a loop stopped right after leaves it open). What is left is collected here, as the server's, not in whichever
    later test runs when the collector next does: the young generations only, where this server's objects are. A
    whole collection took 0.1 s early in a worker and more as its heap grew (py-spy put 5% of the workers' samples in
    it over the suite), and what could warn (the connections) is held and closed above."""

    async def abort_left() -> None:
        left = [*held, *getattr(loop, "_transports", {}).values()]  # the selector loop's own too, by descriptor
        for transport in left:
            if not transport.is_closing():
                transport.abort()  # type: ignore[attr-defined]
        await asyncio.sleep(0)

    if loop.is_running():
        asyncio.run_coroutine_threadsafe(abort_left(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    loop.close()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect(1)
