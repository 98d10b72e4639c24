"""Root of a Merkle-Patricia trie keyed by RLP(index): how headers commit to transactions, receipts, withdrawals.

Only the root is needed, never proofs of membership, so the trie is folded straight into its root from the sorted
keys (no node store): a few dozen lines instead of py-trie and its database layer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from chainframe.verify._hashing import NATIVE, RlpItem, keccak, python_rlp, uint

EMPTY_ROOT = keccak(python_rlp(b""))


def _nibbles(key: bytes) -> tuple[int, ...]:
    return tuple(n for byte in key for n in (byte >> 4, byte & 15))


def _hex_prefix(path: Sequence[int], *, leaf: bool) -> bytes:
    flag = 2 if leaf else 0
    path = (flag + 1, *path) if len(path) % 2 else (flag, 0, *path)
    return bytes(path[i] << 4 | path[i + 1] for i in range(0, len(path), 2))


def _ref(node: RlpItem) -> RlpItem:
    encoded = python_rlp(node)
    return node if len(encoded) < 32 else keccak(encoded)


def _node(pairs: list[tuple[tuple[int, ...], bytes]], depth: int) -> RlpItem:
    if len(pairs) == 1:
        key, value = pairs[0]
        return [_hex_prefix(key[depth:], leaf=True), value]
    first, last = pairs[0][0], pairs[-1][0]  # sorted: the common prefix of all is that of the first and last
    shared = 0
    while depth + shared < min(len(first), len(last)) and first[depth + shared] == last[depth + shared]:
        shared += 1
    if shared:
        return [_hex_prefix(first[depth : depth + shared], leaf=False), _ref(_node(pairs, depth + shared))]
    branch: list[RlpItem] = [b""] * 17
    groups: dict[int, list[tuple[tuple[int, ...], bytes]]] = {}
    for key, value in pairs:
        if len(key) == depth:
            branch[16] = value
        else:
            groups.setdefault(key[depth], []).append((key, value))
    for nibble, group in groups.items():
        branch[nibble] = _ref(_node(group, depth + 1))
    return branch


def python_ordered_root(values: Sequence[bytes]) -> bytes:
    """The root of the trie holding ``values[i]`` under key ``RLP(i)`` (the reference of the native one)."""
    if not values:
        return EMPTY_ROOT
    pairs = sorted((_nibbles(python_rlp(uint(i))), v) for i, v in enumerate(values))
    return keccak(python_rlp(_node(pairs, 0)))


ordered_root: Callable[[Sequence[bytes]], bytes] = NATIVE.ordered_root if NATIVE is not None else python_ordered_root
