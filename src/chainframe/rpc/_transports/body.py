"""An answer's body as it arrives: gzip undone here, in bounded steps, and both the bytes received and the bytes they
inflate to stopped at ``max_bytes`` (an endless body or a gzip bomb never becomes more than the cap in memory).

A body framed by its length comes whole (:meth:`Body.whole`), received into a buffer kept for the next answers
(:class:`Buffers`); a body in pieces (chunked, or ending with the connection) is fed piece by piece
(:meth:`Body.feed`) and joined at the end."""

from __future__ import annotations

import zlib

from chainframe.rpc._errors import LimitExceeded, TransportError

KEPT_BYTES = 64 * 2**20
"""The most bytes of receive buffers kept between answers (per transport: eight answers of 6 MB in flight, say)."""
KEPT_FROM = 2**20
"""The smallest answer received into a kept buffer; a smaller one gets a buffer of its own, as cheap to make."""


class Buffers:
    """Receive buffers, kept for the next answers rather than made anew for each.

    A new buffer's pages are each zeroed and faulted in on first touch, which costs as much as copying the answer
    once more (measured on 175 MB of eth_getLogs answers: a new buffer per answer handed on as it is, with no copy,
    took the same CPU as a kept buffer copied into ``bytes``). A buffer is made a quarter larger than the answer it
    is first made for, rounded up to a MiB, so answers of about the same size reuse it; kept buffers are at most
    :data:`KEPT_BYTES` in all, the smallest given up first. Answers under :data:`KEPT_FROM` are left out.
    """

    def __init__(self, kept_bytes: int = KEPT_BYTES) -> None:
        self.limit = kept_bytes
        """Bytes kept at most; a longer answer is best received in pieces, its memory taken only as its bytes come."""
        self._kept: list[bytearray] = []  # smallest first

    def take(self, n: int) -> bytearray:
        """A buffer of at least ``n`` bytes, for one answer at a time; :meth:`give` it back when its bytes are read."""
        if n < KEPT_FROM:
            return bytearray(n)
        for i, buffer in enumerate(self._kept):
            if len(buffer) >= n:
                return self._kept.pop(i)
        size = -(-(n + n // 4) // 2**20) * 2**20
        return bytearray(size if size <= self.limit else n)

    def give(self, buffer: bytearray) -> None:
        if not KEPT_FROM <= len(buffer) <= self.limit:
            return
        kept = sum(map(len, self._kept))
        while kept + len(buffer) > self.limit:  # the smallest give way: answers that grew need the larger one
            kept -= len(self._kept.pop(0))
        self._kept.append(buffer)
        self._kept.sort(key=len)

    def clear(self) -> None:
        self._kept = []


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

    def feed(self, raw: bytes | bytearray | memoryview) -> None:
        self.received += len(raw)
        if self.received > self._max:
            raise self._too_large("received")
        if self._inflate is None:
            self._parts.append(bytes(raw))  # no copy of bytes
            return
        chunk = raw
        while chunk:
            out = self._inflate.decompress(chunk, self._max - self._size + 1)
            self._size += len(out)
            if self._size > self._max:
                raise self._too_large("inflated")
            self._parts.append(out)
            chunk = self._inflate.unconsumed_tail

    def whole(self, raw: bytes | bytearray | memoryview) -> bytes:
        """The whole body at once (its announced length, already checked by :meth:`expect`), inflated if gzipped.

        Unencoded, this is one copy of ``raw``: readers get ``bytes`` (immutable, what the client's types promise;
        no pure-Python way turns a filled buffer into ``bytes`` without one), and ``raw`` goes back to be reused."""
        if self._inflate is None:
            self.received += len(raw)
            return bytes(raw)
        self.feed(raw)
        return self.finish()

    def finish(self) -> bytes:
        if self._inflate is not None:
            self._parts.append(self._inflate.flush())
        parts, self._parts = self._parts, []
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def _too_large(self, how: str) -> LimitExceeded:
        return LimitExceeded(f"the answer is larger than {self._max:,} bytes ({how}); ask for less", reason="results")
