"""State diffs add up: the check of :class:`~chainframe.datasets._state_diffs.StateDiffsProof`.

For every account (and slot) a block touches, read with eth_getProof at the block and the one before and those proofs
proven against the two headers' state roots:

- ``first_before``: its first row's value before is the state at the previous block;
- ``chained``: each further row's value before is the previous row's value after (rows in the block's order, as the
  dataset's ``change_order`` says: system calls, transactions by index, withdrawals);
- ``last_after``: its last row's value after is the state at the block;
- ``unexplained``: a value that differs between the two blocks has rows at all (a removed row fails here).

Before the merge a block credits its miner and its uncles' miners a reward no diff route reports; where the dataset
declares so (``unreported_rewards``) those accounts' ``last_after`` and ``unexplained`` are skipped with that reason
on a block whose header has a difficulty: the miner's, and every account's of a block with uncles.

A failure names the account (and slot), the block and the transaction.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from chainframe._keccak import keccak256
from chainframe.datasets import ACCOUNT_PROOFS, STORAGE_PROOFS
from chainframe.verify._report import Failure
from chainframe.verify._tables import verify_tables

if TYPE_CHECKING:
    from chainframe.verify._piece import Piece

_EMPTY_CODE = keccak256(b"")
_NO_CODE = bytes(32)  # some nodes prove an absent account with a zero code hash


def _number(value: Any) -> int:
    """A wei, nonce or word value as an integer (decimal128 or 32-byte big-endian)."""
    if isinstance(value, bytes):
        return int.from_bytes(value, "big")
    return int(str(value))


def prove_state_diffs(piece: Piece) -> None:
    """The rows add up to the state proven at the previous block and at the block (see the module)."""
    dataset, rows, report = piece.dataset, piece.rows, piece.report
    field: str = getattr(dataset, "field")  # noqa: B009 (declared on the state diff datasets only)
    before_column: str = getattr(dataset, "before")  # noqa: B009
    after_column: str = getattr(dataset, "after")  # noqa: B009
    answers = list(piece.of(dataset))
    accounts = ACCOUNT_PROOFS.transform(answers, chain_id=piece.chain_id, u256="binary") if answers else None
    storage = None
    if field == "storage" and answers:
        storage = STORAGE_PROOFS.transform(answers, chain_id=piece.chain_id, u256="binary")
    verify_tables(blocks=piece.headers, account_proofs=accounts, storage_proofs=storage, report=report,
                  chain_id=piece.chain_id)  # fmt: skip
    proven = _proven(field, accounts, storage)

    def value(raw: Any) -> Hashable:
        if field == "code":
            return keccak256(bytes(raw))
        return _number(raw)

    order: dict[str, int] = getattr(dataset, "change_order")  # noqa: B009
    keys = ["block_number", "address"] + (["storage_key"] if field == "storage" else [])
    ordered = sorted(
        rows.select([*keys, "transaction_index", "change_type", before_column, after_column]).to_pylist(),
        key=lambda r: (r["block_number"], order.get(r["change_type"], len(order)), r["transaction_index"] or 0),
    )
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in ordered:
        groups.setdefault(tuple(row[k] for k in keys), []).append(row)
    name, failures = piece.name, report.failures
    rewarded = _rewarded(piece.headers, getattr(dataset, "unreported_rewards", ""))
    skipped: set[int] = set()

    def unrewarded(number: int, address: Any) -> bool:
        """Not an account a pre-merge reward may have changed at this block (else its skip is counted)."""
        accounts = rewarded.get(number)
        if accounts is None or (accounts and address not in accounts):
            return True
        skipped.add(number)
        return False

    for key, series in groups.items():
        number = key[0]
        where = _where(key)
        if number not in piece.blocks:
            continue
        previous = proven.get((number - 1, *key[1:])) if number else 0
        if previous is None or (number, *key[1:]) not in proven:
            failures.append(Failure(name, number, "first_before", where, "no eth_getProof answer for it was read"))
            continue
        for row in series:
            index = row["transaction_index"]
            tx = f"{where} transaction_index {index}" if index is not None else f"{where} {row['change_type']}"
            before = value(row[before_column])
            if before != previous:
                check = "first_before" if row is series[0] else "chained"
                failures.append(Failure(name, number, check, f"{tx} {before_column} {_show(before)}",
                                        f"{'state at the previous block' if row is series[0] else 'the previous row'}"
                                        f" says {_show(previous)}", row=tx))  # fmt: skip
            previous = value(row[after_column])
        if previous != proven[(number, *key[1:])] and unrewarded(number, key[1]):
            failures.append(Failure(name, number, "last_after", f"{where} {after_column} {_show(previous)}",
                                    f"state at the block says {_show(proven[(number, *key[1:])])}",
                                    row=where))  # fmt: skip
    for (number, *rest), at in sorted(proven.items(), key=lambda item: repr(item[0])):
        earlier = proven.get((number - 1, *rest))
        if (
            number in piece.blocks
            and earlier is not None
            and earlier != at
            and (number, *rest) not in groups
            and unrewarded(number, rest[0])
        ):
            where = _where((number, *rest))
            failures.append(Failure(name, number, "unexplained", f"{where}: no row", f"state changed from "
                                    f"{_show(earlier)} at the previous block to {_show(at)}", row=where))  # fmt: skip

    if skipped:
        reason: str = getattr(dataset, "unreported_rewards")  # noqa: B009
        report.skip(name, "last_after", reason, blocks=len(skipped))
        report.skip(name, "unexplained", reason, blocks=len(skipped))


def _rewarded(headers: pa.Table, reason: str) -> dict[int, frozenset[bytes]]:
    """By pre-merge block, the accounts whose reward no row reports: its miner, or every account (an empty set) if it
    has uncles; none where the dataset declares no such reason."""
    if not reason or not headers.num_rows:
        return {}
    found: dict[int, frozenset[bytes]] = {}
    for row in headers.select(["block_number", "difficulty", "miner", "uncles"]).to_pylist():
        if row["difficulty"] is not None and _number(row["difficulty"]) > 0:
            found[row["block_number"]] = frozenset() if row["uncles"] else frozenset({bytes(row["miner"])})
    return found


def _proven(field: str, accounts: pa.Table | None, storage: pa.Table | None) -> dict[tuple[Any, ...], Hashable]:
    """The proven values by (block, address[, slot]), as the rows' values are compared (a code by its hash)."""
    found: dict[tuple[Any, ...], Hashable] = {}
    if field == "storage":
        for row in storage.to_pylist() if storage is not None else []:
            key = bytes(row["storage_key"]).rjust(32, b"\0")
            found[(row["block_number"], row["address"], key)] = _number(row["storage_value"])
        return found
    for row in accounts.to_pylist() if accounts is not None else []:
        if field == "code":
            code_hash = row["code_hash"]
            found[(row["block_number"], row["address"])] = _EMPTY_CODE if code_hash == _NO_CODE else code_hash
        else:
            found[(row["block_number"], row["address"])] = _number(row[field])
    return found


def _where(key: tuple[Any, ...]) -> str:
    at = f"address 0x{bytes(key[1]).hex()}"
    return at + (f" storage_key 0x{bytes(key[2]).hex()}" if len(key) > 2 else "")


def _show(value: Hashable) -> str:
    return f"0x{value.hex()}" if isinstance(value, bytes) else str(value)
