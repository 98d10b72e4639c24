"""An answer's body as it arrives: gzip undone here, in bounded steps, and both the bytes received and the bytes they
inflate to stopped at ``max_bytes`` (an endless body or a gzip bomb never becomes more than the cap in memory)."""

from __future__ import annotations

import zlib

from chainframe.rpc._errors import LimitExceeded, TransportError


class Body:
    def __init__(self, max_bytes: int, encoding: str) -> None:
        encoding = encoding.strip().lower()
        if encoding not in ("", "identity", "gzip"):
            raise TransportError(f"the answer came in an encoding we did not ask for ({encoding})")
        self._max = max_bytes
        self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if encoding == "gzip" else None
        self._parts: list[bytes] = []
        self.received = 0
        self._size = 0

    def expect(self, length: int) -> None:
        """Refuse at once an answer whose announced length is over the cap."""
        if length > self._max:
            raise self._too_large("announced")

    def feed(self, raw: bytes) -> None:
        self.received += len(raw)
        if self.received > self._max:
            raise self._too_large("received")
        if self._inflate is None:
            self._parts.append(raw)
            return
        chunk = raw
        while chunk:
            out = self._inflate.decompress(chunk, self._max - self._size + 1)
            self._size += len(out)
            if self._size > self._max:
                raise self._too_large("inflated")
            self._parts.append(out)
            chunk = self._inflate.unconsumed_tail

    def finish(self) -> bytes:
        if self._inflate is not None:
            self._parts.append(self._inflate.flush())
        parts, self._parts = self._parts, []
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def _too_large(self, how: str) -> LimitExceeded:
        return LimitExceeded(f"the answer is larger than {self._max:,} bytes ({how}); ask for less", reason="results")
