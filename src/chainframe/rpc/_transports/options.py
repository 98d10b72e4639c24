"""Transport options as small value objects."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Timeout:
    """Seconds to wait, per request attempt."""

    connect: float = 10.0
    """To open a connection (TCP and TLS, or the WebSocket handshake)."""
    read: float = 60.0
    """Over HTTP, the longest time without a byte of the answer, from the request's sending on (a large eth_getLogs
    can take a while to start); over WebSocket, for the whole answer message. ``total`` bounds a whole answer."""
    pool: float = 60.0
    """For a free pooled connection when all are busy."""
    total: float = 120.0
    """For a whole answer, from sending the request to its last byte: a server that trickles bytes is cut off here,
    however short each pause between them."""


MAX_ANSWER_BYTES = 256 * 2**20
"""The largest answer read, before and after gzip is undone (a real eth_getLogs of 10,000 logs is about 10 MB): an
endless body or a gzip bomb stops here, with memory bounded by it."""
