"""Transactions' senders recovered from their signatures, a piece at a time: the one check no root makes cheaper.

libsecp256k1's recovery is most of a transaction's proof (about 30 us). Three things keep it to that:

- it is called through coincurve's compiled binding directly, without a key object per transaction (which doubled
  the cost), and that call releases the GIL: a large piece is recovered on two threads;
- a sender is remembered by the transaction's hash as computed from its signed encoding, which holds every input of
  the recovery (the signed payload and the signature), so a transaction proven twice in a run (``extract --verify``
  proves the receipts' transactions, then the transactions dataset's) is recovered once. The memory is bounded;
- where the binding's internals are not there (another coincurve), :func:`chainframe.verify._transactions.sender`
  recovers each one, as the reference does.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from chainframe.verify._hashing import keccak

REMEMBERED = 1 << 17
"""Senders kept (about 150 bytes each): a chunk of mainnet's transactions."""
THREADED = 512
"""Recoveries from which a piece is split over two threads (below it, starting them costs more than it saves)."""

_known: OrderedDict[bytes, bytes | None] = OrderedDict()
_lock = threading.Lock()  # pieces are proven on several decode threads at once

T = TypeVar("T")
Signed = tuple[bytes, int, bytes]
"""A recovery's input: r || s (64 bytes), the recovery id (0 or 1), and the signed payload's hash."""


def senders(
    txs: Sequence[T],
    hashes: Sequence[bytes],
    signed: Callable[[T], Signed | None],
    one: Callable[[T], bytes | None],
) -> list[bytes | None]:
    """The sender of each of ``txs`` (rows, or what names them: ``signed`` and ``one`` read them) (None: its signature
    recovers no key). ``hashes``: each one's hash computed from
    its signed encoding; ``signed``: a transaction's recovery input (None: it has none); ``one``: the reference
    recovery, for where the binding cannot be used."""
    out: list[bytes | None] = [None] * len(txs)
    todo: list[tuple[int, Signed]] = []
    with _lock:
        known = [_known.get(digest, _known) for digest in hashes]  # _known itself: not known
    for i, (tx, seen) in enumerate(zip(txs, known, strict=True)):
        if seen is not _known:
            out[i] = seen  # type: ignore[assignment]
            continue
        item = signed(tx)
        if item is not None:
            todo.append((i, item))
    recovered = _recover([item for _, item in todo]) if _BINDING is not None else None
    if recovered is None:
        recovered = [one(txs[i]) for i, _ in todo]
    for (i, _), address in zip(todo, recovered, strict=True):
        out[i] = address
    with _lock:
        for digest, address in zip(hashes, out, strict=True):
            _known[digest] = address
            _known.move_to_end(digest)
        while len(_known) > REMEMBERED:
            _known.popitem(last=False)
    return out


def _binding() -> tuple[Any, Any, Any] | None:
    try:
        from coincurve._libsecp256k1 import ffi, lib  # type: ignore[import-not-found]
        from coincurve.context import GLOBAL_CONTEXT
    except ImportError:
        return None
    return ffi, lib, GLOBAL_CONTEXT.ctx


_BINDING = _binding()


def _recover(items: list[Signed]) -> list[bytes | None]:
    if len(items) < THREADED:
        return _recover_some(items)
    half = len(items) // 2
    with ThreadPoolExecutor(2) as pool:
        first, second = pool.map(_recover_some, [items[:half], items[half:]])
    return first + second


def _recover_some(items: list[Signed]) -> list[bytes | None]:
    assert _BINDING is not None
    ffi, lib, ctx = _BINDING
    signature = ffi.new("secp256k1_ecdsa_recoverable_signature *")
    key = ffi.new("secp256k1_pubkey *")
    raw = ffi.new("unsigned char[65]")
    size = ffi.new("size_t *")
    out: list[bytes | None] = []
    for rs, recovery, message in items:
        if not lib.secp256k1_ecdsa_recoverable_signature_parse_compact(ctx, signature, rs, recovery):
            out.append(None)
            continue
        if not lib.secp256k1_ecdsa_recover(ctx, key, signature, message):
            out.append(None)
            continue
        size[0] = 65
        lib.secp256k1_ec_pubkey_serialize(ctx, raw, size, key, lib.SECP256K1_EC_UNCOMPRESSED)
        out.append(keccak(bytes(ffi.buffer(raw, 65))[1:])[12:])
    return out
