"""An aiohttp server on 127.0.0.1 in a thread of its own, for tests that need a misbehaving HTTP peer."""

from __future__ import annotations

import asyncio
import gc
import threading
import warnings
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@contextmanager
def serve_in_thread(routes: Sequence[tuple[str, Handler]]) -> Iterator[int]:
    """Serve POST ``routes`` (path, handler) until the block ends; yields the port."""
    loop = ServerLoop()
    ready = threading.Event()
    box: dict[str, object] = {}

    def serve() -> None:
        asyncio.set_event_loop(loop)
        app = web.Application()
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
        stop_loop(loop, thread)


class ServerLoop(asyncio.SelectorEventLoop):
    """A test server's event loop that holds every socket transport it makes until :func:`stop_loop` aborts it.

    aiohttp's server can drop every reference to a connection it never closed (a client gone mid-request, an idle
    keep-alive connection at shutdown): the transport is then garbage with its socket open, and whenever the
    collector next runs, in whatever test, its ResourceWarning is raised as that test's failure
    (tests/engine/test_answers.py, a case at a time: 2 of 4 clean CIs at stop 51, every time under three workers
    here). Holding the transports a request arrived on missed idle ones (a clean CI failed so); held from their
    making, none can become garbage before it is closed."""

    def __init__(self) -> None:
        super().__init__()
        self.held: list[asyncio.BaseTransport] = []

    def _make_socket_transport(self, *args: Any, **kwargs: Any) -> Any:  # asyncio's own hook for every connection
        transport = super()._make_socket_transport(*args, **kwargs)  # type: ignore[misc]
        self.held.append(transport)
        return transport


def stop_loop(loop: ServerLoop, thread: threading.Thread) -> None:
    """Stop and close the loop a test's server runs in ``thread`` (its server shut down already), then collect what
    the server left.

    Stopped while clients are mid-request, aiohttp's server can leave connections its shutdown never closes: a
    transport and its socket, found only as garbage (14 to 52 ResourceWarnings over 40 stops of a proxy under 8
    clients' requests). Those the :class:`ServerLoop` held that are still open are aborted first,
    on the loop, and the loop runs once more so their sockets are closed (a transport closes its socket in a callback:
    a loop stopped right after leaves it open). What is left is collected here, as the server's, not in whichever
    later test runs when the collector next does: the young generations only, where this server's objects are. A
    whole collection took 0.1 s early in a worker and more as its heap grew (py-spy put 5% of the workers' samples in
    it over the suite), and what could warn (the connections) is held and closed above."""

    async def abort_left() -> None:
        # A connection accepted just before the server shut down gets its transport in a task of its own, made after
        # (seen once in a clean CI: four server-side sockets of tests/engine/test_answers.py's proxy left open): those
        # tasks end first, a second at most.
        others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        if others:
            await asyncio.wait(others, timeout=1)
        for transport in loop.held:  # every connection the loop made, a superset of those it lists itself
            if not transport.is_closing():
                transport.abort()  # type: ignore[attr-defined]
        await asyncio.sleep(0)

    if loop.is_running():
        asyncio.run_coroutine_threadsafe(abort_left(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    if not thread.is_alive() and any(_open(transport) for transport in loop.held):
        # The loop's thread has ended: a thread of its own runs the loop again (the caller may be in a loop of its
        # own, an async test's) to close what is left.
        closer = threading.Thread(target=lambda: loop.run_until_complete(abort_left()), daemon=True)
        closer.start()
        closer.join(10)
    loop.close()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect(1)


def _open(transport: asyncio.BaseTransport) -> bool:
    """Whether the transport's socket is still open (an aborted transport closes it in a callback of its loop)."""
    sock = transport.get_extra_info("socket")
    return sock is not None and sock.fileno() != -1
