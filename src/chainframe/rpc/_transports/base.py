"""The seam between the client and the wire: one request text in, one :class:`Reply` out.

Transports raise :class:`~chainframe.rpc._errors.TransportError` (or ``KeyRefused`` for a refused WebSocket
handshake) for failures below HTTP; everything at or above HTTP comes back as a ``Reply`` for the client to classify.
Messages never contain the URL: the client attaches a redacted endpoint.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)


class Transport(ABC):
    """Sends JSON-RPC request texts. ``ids`` are the JSON-RPC ids inside ``body`` (used to match WebSocket answers)."""

    @abstractmethod
    async def send(self, body: bytes, ids: Sequence[int]) -> Reply: ...

    async def aclose(self) -> None:  # noqa: B027 - optional hook; most transports have something to close
        """Release connections."""
