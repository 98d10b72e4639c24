"""Transports: HTTP, WebSocket, and an in-memory one for unit tests."""

from chainframe.rpc._transports.base import Reply, Transport
from chainframe.rpc._transports.http import HTTPTransport
from chainframe.rpc._transports.memory import MemoryTransport
from chainframe.rpc._transports.options import Timeout

# httpx (HTTP/2, proxies) and the WebSocket library are imported where they are asked for.
__all__ = ["HTTPTransport", "MemoryTransport", "Reply", "Timeout", "Transport"]
