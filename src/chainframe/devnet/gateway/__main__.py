"""Run a gateway as its own process: config JSON on stdin, one JSON line on stdout once listening.

``python -m chainframe.devnet.gateway < config.json`` prints ``{"event": "ready", "port": N}`` and serves until
SIGTERM or SIGINT. Keys arrive on stdin, never on the command line, so they do not show in the process list.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sys

from aiohttp import web

from chainframe.devnet.gateway._app import Gateway
from chainframe.devnet.gateway._config import GatewayConfig


async def serve(config: GatewayConfig) -> None:
    gateway = Gateway(config)
    # No access log: request paths carry API keys.
    runner = web.AppRunner(gateway.app(), access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, config.host, config.port)
    await site.start()
    server = site._server
    assert server is not None
    port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
    print(json.dumps({"event": "ready", "port": port}), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await runner.cleanup()


def main() -> None:
    # Handlers that write to a connection we closed on purpose (drop, truncate faults) log noise we do not want.
    logging.getLogger("aiohttp").setLevel(logging.CRITICAL)
    config = GatewayConfig.from_json(json.load(sys.stdin))
    asyncio.run(serve(config))


if __name__ == "__main__":
    main()
