"""``eth_getProof`` answers against the block's ``stateRoot`` (account) and the account's ``storageHash`` (slots).

A proof is the list of trie nodes on the path keccak(key) from the root; each node must hash to the reference its
parent holds. The walk ends at the value (which must equal the stored account or slot) or proves absence (which
must match an empty account or a zero slot).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa

from chainframe.verify._hashing import RlpItem, keccak, rlp, uint
from chainframe.verify._report import Failure, Report
from chainframe.verify._trie import EMPTY_ROOT

EMPTY_CODE = keccak(b"")
UNPROVABLE_GENESIS = (
    "block 0's header gives the empty trie's root while the node proves accounts at block 0 under another root: "
    "anvil writes the empty root into its genesis header whatever its genesis allocation (anvil 1.7.1, a fresh node "
    "too), so the genesis state has no root to be proven against; block 1 onwards are proven"
)
"""Why an account proof at block 0 is not checked when the header's state root is the empty trie's and the node's
proof is not empty (an empty state's only proof of any account is the empty proof)."""


def rlp_decode(data: bytes) -> RlpItem:
    item, end = _decode(data, 0)
    if end != len(data):
        raise ValueError("trailing bytes after an RLP item")
    return item


def _decode(data: bytes, at: int) -> tuple[RlpItem, int]:
    first = data[at]
    if first < 0x80:
        return data[at : at + 1], at + 1
    if first < 0xB8:
        end = at + 1 + first - 0x80
        return data[at + 1 : end], end
    if first < 0xC0:
        size_len = first - 0xB7
        size = int.from_bytes(data[at + 1 : at + 1 + size_len], "big")
        start = at + 1 + size_len
        return data[start : start + size], start + size
    if first < 0xF8:
        start, end = at + 1, at + 1 + first - 0xC0
    else:
        size_len = first - 0xF7
        start = at + 1 + size_len
        end = start + int.from_bytes(data[at + 1 : start], "big")
    items: list[RlpItem] = []
    while start < end:
        item, start = _decode(data, start)
        items.append(item)
    return items, end


def _unprefix(encoded: bytes) -> tuple[tuple[int, ...], bool]:
    nibbles = tuple(n for b in encoded for n in (b >> 4, b & 15))
    flag = nibbles[0]
    return nibbles[2 - (flag & 1) :], flag >= 2


def proven_value(root: bytes, key: bytes, proof: Sequence[bytes]) -> bytes | None:
    """The value under ``keccak(key)`` in the trie of ``root`` that ``proof`` shows, or None when it shows absence.

    Raises ValueError when the proof does not hang together: a node on the path not matching its parent's reference,
    or any other node that no earlier node refers to (nodes send neighbours of an absent key's path too; each must be
    a node of this trie, so a changed one cannot pass unseen).
    """
    known = {root}
    for raw in proof:
        digest = keccak(raw)
        if digest not in known:
            raise ValueError("a proof node is not referred to by the root or an earlier node")
        known.update(_references(rlp_decode(raw)))
    return _walk(root, key, iter(proof))


def _references(node: RlpItem) -> list[bytes]:
    """The child hashes a branch or extension node holds (embedded nodes under 32 bytes, recursively)."""
    if not isinstance(node, list):
        return []
    children = node[:16] if len(node) == 17 else node[1:] if len(node) == 2 else []
    out: list[bytes] = []
    for child in children:
        if isinstance(child, bytes) and len(child) == 32:
            out.append(child)
        elif isinstance(child, list):
            out.extend(_references(child))
    return out


def _walk(root: bytes, key: bytes, nodes: Iterator[bytes]) -> bytes | None:
    path = tuple(n for b in keccak(key) for n in (b >> 4, b & 15))
    wanted: RlpItem = root
    node: RlpItem
    while True:
        if isinstance(wanted, list):
            node = wanted  # a node under 32 bytes is embedded in its parent
        else:
            if wanted in (b"", EMPTY_ROOT):
                return None  # an empty subtree or trie: nodes answer with no proof or with RLP("") for it
            raw = next(nodes, None)
            if raw is None or keccak(raw) != wanted:
                raise ValueError("proof node does not hash to its parent's reference")
            node = rlp_decode(raw)
        if not isinstance(node, list):
            raise ValueError("proof node is not a list")
        if len(node) == 17:
            if not path:
                value = node[16]
                return value if isinstance(value, bytes) and value else None
            wanted, path = node[path[0]], path[1:]
            continue
        if len(node) != 2 or not isinstance(node[0], bytes):
            raise ValueError("proof node is neither a branch, an extension nor a leaf")
        key_part, leaf = _unprefix(node[0])
        if path[: len(key_part)] != key_part or (leaf and len(key_part) != len(path)):
            return None  # the path leaves the trie here: proof of absence
        if leaf:
            return node[1] if isinstance(node[1], bytes) else None
        wanted, path = node[1], path[len(key_part) :]


def account_mismatch(
    state_root: bytes, address: bytes, proof: Sequence[bytes], *, nonce: int, balance: int, storage_hash: bytes,
    code_hash: bytes,
) -> tuple[str, str] | None:  # fmt: skip
    """None when the proof shows exactly this account (or its absence, for an empty one); else (proven, stored)."""
    stored = rlp([uint(nonce), uint(balance), storage_hash, code_hash])
    try:
        value = proven_value(state_root, address, proof)
    except ValueError as exc:
        return f"invalid proof: {exc}", "0x" + stored.hex()
    if value is None:
        empty = nonce == 0 and balance == 0 and storage_hash == EMPTY_ROOT and code_hash == EMPTY_CODE
        return None if empty else ("absent", "0x" + stored.hex())
    return None if value == stored else ("0x" + value.hex(), "0x" + stored.hex())


def slot_mismatch(storage_hash: bytes, slot: bytes, proof: Sequence[bytes], *, value: int) -> tuple[str, str] | None:
    """None when the proof shows this slot holding ``value`` (absence proves zero); else (proven, stored)."""
    try:
        proven = proven_value(storage_hash, slot.rjust(32, b"\0"), proof)
    except ValueError as exc:
        return f"invalid proof: {exc}", hex(value)
    if proven is None:
        return None if value == 0 else ("absent (0)", hex(value))
    decoded = rlp_decode(proven)
    number = int.from_bytes(decoded, "big") if isinstance(decoded, bytes) else -1
    return None if number == value else (hex(number), hex(value))


def _int(value: object) -> int:
    # Wei columns are decimal128 or 32-byte words (u256="binary"); words are big-endian.
    return int.from_bytes(value, "big") if isinstance(value, bytes) else int(str(value))


def check_proofs(accounts: pa.Table | None, storage: pa.Table | None, blocks: pa.Table, report: Report) -> None:
    """Account proofs against their block's ``stateRoot``, slot proofs against the proven account's storage root."""
    roots = dict(zip(blocks["block_number"].to_pylist(), blocks["state_root"].to_pylist(), strict=True))
    storage_roots: dict[tuple[int, bytes], bytes] = {}
    genesis_skipped = False
    if accounts is not None:
        for row in accounts.to_pylist():
            number = row["block_number"]
            if number not in roots:
                continue
            if number == 0 and roots[0] == EMPTY_ROOT and row["account_proof"]:
                genesis_skipped = True
                continue
            wrong = account_mismatch(roots[number], row["address"], row["account_proof"], nonce=row["nonce"],
                                     balance=_int(row["balance"]), storage_hash=row["storage_hash"],
                                     code_hash=row["code_hash"])  # fmt: skip
            if wrong is None:
                storage_roots[(number, row["address"])] = row["storage_hash"]
            else:
                report.failures.append(Failure("account_proofs", number, "account_proof", wrong[0], wrong[1]))
        if genesis_skipped:
            report.skip("account_proofs", "account_proof", UNPROVABLE_GENESIS, blocks=1)
        report.count("account_proofs", blocks=len({n for n, _ in storage_roots}), rows=accounts.num_rows)
    if storage is not None:
        unproven: set[int] = set()
        for row in storage.to_pylist():
            root = storage_roots.get((row["block_number"], row["address"]))
            if root is None:
                unproven.add(row["block_number"])  # without a proven account there is no storage root to check against
                continue
            wrong = slot_mismatch(root, row["storage_key"], row["storage_proof"], value=_int(row["storage_value"]))
            if wrong is not None:
                report.failures.append(Failure("storage_proofs", row["block_number"], "storage_proof", *wrong))
        report.skip("storage_proofs", "storage_proof", "no proven account proof for the slot's address and block "
                    "(stored beside the slots, or fetched by verify --rpc)", blocks=len(unproven))  # fmt: skip
        proven = [n for n in storage["block_number"].to_pylist() if n not in unproven]
        report.count("storage_proofs", blocks=len(set(proven)), rows=len(proven))
