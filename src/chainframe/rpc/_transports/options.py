"""Transport options as small value objects."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Timeout:
    """Seconds to wait, per request attempt."""

    connect: float = 10.0
    """To open a connection (TCP and TLS, or the WebSocket handshake)."""
    read: float = 60.0
    """For the answer to one request (a large eth_getLogs can take a while)."""
    pool: float = 60.0
    """For a free pooled connection when all are busy."""
