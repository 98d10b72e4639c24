"""An aiohttp server on 127.0.0.1 in a thread of its own, for tests that need a misbehaving HTTP peer."""

from __future__ import annotations

import asyncio
import threading
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
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
