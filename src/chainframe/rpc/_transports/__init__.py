"""Transports: HTTP, WebSocket, and an in-memory one for unit tests."""

from chainframe.rpc._transports.base import Reply, Transport
from chainframe.rpc._transports.http import HTTPTransport
from chainframe.rpc._transports.memory import MemoryTransport
from chainframe.rpc._transports.options import Timeout

# The WebSocket transport (and the websockets package) is imported where a WebSocket is asked for.
__all__ = ["HTTPTransport", "MemoryTransport", "Reply", "Timeout", "Transport"]
