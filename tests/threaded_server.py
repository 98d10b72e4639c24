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


def stop_loop(loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
    """Stop and close the loop a test's server runs in ``thread`` (its server shut down already), then collect what
    the server left.

    Stopped while clients are mid-request, aiohttp's server can leave connections its shutdown never closes: a
    transport and its socket, found only as garbage (14 to 52 ResourceWarnings over 40 stops of a proxy under 8
    clients' requests). Those still open are aborted first, on the loop, and the loop runs once more so their sockets
    are closed (a transport closes its socket in a callback: a loop stopped right after leaves it open). What is left
    is collected here, as the server's, not in whichever later test runs when the collector next does, where an
    unraisable ResourceWarning failed a test (once in seven CI runs; twice in four with the hostile proxy of
    tests/engine/test_answers.py before the abort)."""

    async def abort_left() -> None:
        for transport in list(getattr(loop, "_transports", {}).values()):  # the selector loop's own, by descriptor
            transport.abort()
        await asyncio.sleep(0)

    if loop.is_running():
        asyncio.run_coroutine_threadsafe(abort_left(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    loop.close()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
