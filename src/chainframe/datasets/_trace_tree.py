"""Where each of a block's parity traces stands in its transaction's call tree, from whole arrays: no Python per frame.

trace_block lists each transaction's frames in preorder, each with its trace address. From the addresses' Arrow
buffers (offsets and items) and the frames' blocks, transaction positions and failures, :func:`places` finds each
frame's transaction index, depth, number of direct subcalls and whether it or a frame above it failed, with numpy: a
loop per depth level, not per frame. Both readers of trace_block documents use it: Polars'
(:mod:`chainframe.datasets._parity_frames`) and the native scanner's (:mod:`chainframe.datasets._parity_native`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Places:
    """The frames' places, an array each, in the frames' order."""

    index: np.ndarray
    """The frame's transaction's index in its block (int64)."""
    depth: np.ndarray
    """The trace address's length (int64; 0: the transaction's top frame)."""
    subcalls: np.ndarray
    """Direct child frames (uint64)."""
    reverted: np.ndarray
    """The frame failed, or a frame above it did (bool)."""
    top: np.ndarray
    """The transaction's top frame (bool)."""


def places(
    offsets: np.ndarray, values: np.ndarray, block: np.ndarray, position: np.ndarray, failed: np.ndarray
) -> Places | None:
    """The places of frames whose trace addresses are ``values[offsets[i]:offsets[i + 1]]``, in ``block`` (grouped:
    a block's frames together) at transaction ``position``; ``failed``: the frame's own error. None where the frames
    are not each transaction's in preorder, the transactions in order from 0 (the per-frame reader decides then)."""
    n = len(block)
    depth = np.diff(offsets).astype(np.int64)
    rows = np.arange(n)
    first = np.ones(n, dtype=bool)
    first[1:] = block[1:] != block[:-1]
    top = depth == 0
    if not top[first].all():
        return None
    tops = np.cumsum(top)
    block_first = np.maximum.accumulate(np.where(first, rows, 0))
    index = tops - tops[block_first]  # the transaction's index in its block (tops before it there, from 0)
    if n and not (position == index).all():
        return None
    # Preorder: a frame after one of the same transaction is that one's first child or the next sibling of it or of
    # one of its ancestors (then its path is the previous one's up to its own depth, the last step one more).
    inner = np.flatnonzero(~top)
    if inner.size:
        before = inner - 1
        d, dp = depth[inner], depth[before]
        if not (d <= dp + 1).all():
            return None
        prefix = d - 1
        total = int(prefix.sum())
        if total:
            ramp = np.arange(total) - np.repeat(np.cumsum(prefix) - prefix, prefix)
            own = np.repeat(offsets[inner], prefix) + ramp
            previous = np.repeat(offsets[before], prefix) + ramp
            if not (values[own] == values[previous]).all():
                return None
        last = values[offsets[inner] + d - 1]
        child = d == dp + 1
        sibling_of = np.where(child, 0, values[offsets[before] + np.minimum(d, dp) - 1] + 1)
        if not (np.where(child, last == 0, last == sibling_of)).all():
            return None
    parent = np.full(n, -1, dtype=np.int64)
    reverted = failed.copy()
    for level in range(1, int(depth.max(initial=0)) + 1):
        at = np.flatnonzero(depth == level)
        above = np.flatnonzero(depth == level - 1)
        parent[at] = above[np.searchsorted(above, at) - 1]
        reverted[at] |= reverted[parent[at]]
    subcalls = np.bincount(parent[parent >= 0], minlength=n).astype(np.uint64)
    return Places(index=index, depth=depth, subcalls=subcalls, reverted=reverted, top=top)
