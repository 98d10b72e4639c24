"""Recorded eth_getProof answers hang together: each account proof leads from its root to the account, each storage
proof from the account's storageHash to the slot; a changed balance or proof node is caught."""

from __future__ import annotations

from typing import Any

import pytest

from chainframe.verify._hashing import keccak
from chainframe.verify._proofs import account_mismatch, slot_mismatch
from tests.fixtures import recorded_responses

RECORDS = [r for r in recorded_responses() if r.method == "eth_getProof" and isinstance(r.result, dict)]


def _b(text: str) -> bytes:
    return bytes.fromhex(text[2:].rjust(len(text[2:]) + len(text[2:]) % 2, "0"))


def _account(answer: dict[str, Any], *, balance_delta: int = 0, proof: list[bytes] | None = None) -> object:
    nodes = proof if proof is not None else [_b(p) for p in answer["accountProof"]]
    # The recorded answers come without their block header: the root is the first node's hash, which the walk
    # then ties to every node below it and to the account.
    root = keccak(_b(answer["accountProof"][0]))
    return account_mismatch(
        root, _b(answer["address"]), nodes, nonce=int(answer["nonce"], 16),
        balance=int(answer["balance"], 16) + balance_delta, storage_hash=_b(answer["storageHash"]),
        code_hash=_b(answer["codeHash"]),
    )  # fmt: skip


def test_there_are_recorded_proofs() -> None:
    assert len(RECORDS) >= 3


@pytest.mark.parametrize("record", RECORDS, ids=[r.id for r in RECORDS])
def test_recorded_proof_verifies_and_tampering_fails(record: Any) -> None:
    answer = record.result
    assert _account(answer) is None
    assert _account(answer, balance_delta=1) is not None
    nodes = [_b(p) for p in answer["accountProof"]]
    flipped = [*nodes[:-1], bytes([nodes[-1][0]]) + bytes([nodes[-1][1] ^ 1]) + nodes[-1][2:]]
    mismatch = _account(answer, proof=flipped)
    assert mismatch is not None
    for slot in answer.get("storageProof", []):
        proof = [_b(p) for p in slot["proof"]]
        value = int(slot["value"], 16)
        assert slot_mismatch(_b(answer["storageHash"]), _b(slot["key"]), proof, value=value) is None
        assert slot_mismatch(_b(answer["storageHash"]), _b(slot["key"]), proof, value=value + 1) is not None
