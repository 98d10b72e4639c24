"""``transactionsRoot`` from the transactions, signatures included, and each row's hash = keccak(encoding).

Encodings: legacy (type 0, ``v`` as stored, EIP-155 or not), EIP-2930 (1), EIP-1559 (2), EIP-4844 (3, blob hashes
and blob fee; the network form with blobs is never in a block), EIP-7702 (4, authorizations).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from chainframe import _kernels as pc
from chainframe.families import ETHEREUM, ChainFamily
from chainframe.verify._columns import (
    binary,
    binary_lists,
    bools,
    int_values,
    integers,
    ints,
    lists,
    nulls,
    sorted_by,
    words,
    zeros,
)
from chainframe.verify._hashing import NATIVE, RlpItem, keccak, rlp, uint
from chainframe.verify._headers import integer
from chainframe.verify._report import Failure, Report
from chainframe.verify._senders import Signed, senders
from chainframe.verify._trie import ordered_root

KNOWN_TYPES = frozenset({0, 1, 2, 3, 4})
NAMES = (
    "block_number", "transaction_index", "transaction_hash", "transaction_type", "to_address", "value", "nonce",
    "gas", "gas_price", "max_fee_per_gas", "max_priority_fee_per_gas", "max_fee_per_blob_gas", "input",
    "transaction_chain_id", "v", "r", "s", "y_parity", "access_list", "blob_versioned_hashes", "authorization_list",
    "from_address",
)  # fmt: skip


_COMMON = ("nonce", "gas", "value", "input", "r", "s")
REQUIRED = {
    0: (*_COMMON, "gas_price", "v"),
    1: (*_COMMON, "transaction_chain_id", "gas_price"),
    2: (*_COMMON, "transaction_chain_id", "max_fee_per_gas", "max_priority_fee_per_gas"),
    3: (*_COMMON, "transaction_chain_id", "max_fee_per_gas", "max_priority_fee_per_gas", "max_fee_per_blob_gas"),
    4: (*_COMMON, "transaction_chain_id", "max_fee_per_gas", "max_priority_fee_per_gas"),
}
"""Fields a type's encoding holds that have no empty form (lists may be empty): null in a stored row, the row cannot
be the chain's transaction of that type, so its type or the field was changed."""


def unencodable(tx: dict[str, Any]) -> str | None:
    """Why ``tx`` cannot be encoded as its stored type (a field the type needs is null), or None when it can."""
    kind = tx["transaction_type"] or 0
    missing = [name for name in REQUIRED[kind] if tx.get(name) is None]
    if kind and tx.get("y_parity") is None and tx.get("v") is None:
        missing.append("y_parity")
    return f"cannot be encoded as type {kind}: missing {', '.join(missing)}" if missing else None


def _shown(value: bytes | None) -> str:
    """A stored hash or address as a failure shows it (a null as ``null``, as the other checks show one)."""
    return "null" if value is None else "0x" + value.hex()


def _at(tx: dict[str, Any]) -> str:
    """Where a row is, by its index (a null index as ``null``, as the other checks show one)."""
    index = tx["transaction_index"]
    return f"transaction_index {'null' if index is None else index}"


def _claimed(tx: dict[str, Any]) -> str:
    """A row's stored sender with the transaction it is claimed for: a sender failure's stored side."""
    index = "null" if tx["transaction_index"] is None else tx["transaction_index"]
    return f"transaction {index} {_shown(tx['transaction_hash'])} from {_shown(tx['from_address'])}"


def _word(value: bytes | None) -> bytes:
    return uint(int.from_bytes(value or b"", "big"))


def transaction_bytes(tx: dict[str, Any], *, signed: bool = True) -> bytes:
    """The transaction's encoding (its hash's preimage), or with ``signed=False`` the payload its sender signed."""
    kind = tx["transaction_type"] or 0
    to = tx["to_address"] or b""
    signature: list[RlpItem] = [_word(tx["r"]), _word(tx["s"])]
    if kind == 0:
        body = [uint(tx["nonce"]), integer(tx["gas_price"]), uint(tx["gas"]), to, integer(tx["value"]), tx["input"]]
        if signed:
            return rlp([*body, uint(tx["v"]), *signature])
        v = tx["v"]
        return rlp(body if v in (27, 28) else [*body, uint((v - 35) // 2), b"", b""])  # EIP-155 signs the chain id
    parity = uint(tx["y_parity"] if tx["y_parity"] is not None else tx["v"])
    access: list[RlpItem] = [[a["address"], list(a["storage_keys"])] for a in tx["access_list"] or []]
    if kind == 1:
        fields: list[RlpItem] = [uint(tx["transaction_chain_id"]), uint(tx["nonce"]), integer(tx["gas_price"]),
                                 uint(tx["gas"]), to, integer(tx["value"]), tx["input"], access]  # fmt: skip
    else:
        fields = [uint(tx["transaction_chain_id"]), uint(tx["nonce"]), integer(tx["max_priority_fee_per_gas"]),
                  integer(tx["max_fee_per_gas"]), uint(tx["gas"]), to, integer(tx["value"]), tx["input"],
                  access]  # fmt: skip
    if kind == 3:
        fields += [integer(tx["max_fee_per_blob_gas"]), list(tx["blob_versioned_hashes"] or [])]
    if kind == 4:
        fields.append(
            [
                [uint(a["chain_id"]), a["address"], uint(a["nonce"]), uint(a["y_parity"]), _word(a["r"]), _word(a["s"])]
                for a in tx["authorization_list"] or []
            ]
        )
    return bytes([kind]) + rlp([*fields, parity, *signature] if signed else fields)


def recovery_input(tx: dict[str, Any], payload_hash: bytes | None = None) -> Signed | None:
    """What ``tx``'s sender is recovered from: r || s, the recovery id and the signed payload's hash (None: its
    signature is incomplete or its recovery id out of range); ``payload_hash``: that hash, computed already."""
    v = tx["v"] if (tx["transaction_type"] or 0) == 0 else tx["y_parity"] if tx["y_parity"] is not None else tx["v"]
    if v is None or tx["r"] is None or tx["s"] is None:
        return None
    recovery = v - 27 if v in (27, 28) else (v - 35) % 2 if (tx["transaction_type"] or 0) == 0 else v
    if recovery not in (0, 1):
        return None
    rs = (tx["r"] or b"").rjust(32, b"\0") + (tx["s"] or b"").rjust(32, b"\0")
    if len(rs) != 64:
        return None
    return rs, recovery, payload_hash or keccak(transaction_bytes(tx, signed=False))


def sender(tx: dict[str, Any]) -> bytes | None:
    """The address that signed ``tx``, recovered from its signature (None when the signature cannot be recovered):
    the reference of :func:`chainframe.verify._senders.senders`."""
    from coincurve import PublicKey

    given = recovery_input(tx)
    if given is None:
        return None
    rs, recovery, message = given
    try:
        public = PublicKey.from_signature_and_message(rs + bytes([recovery]), message, hasher=None)
    except ValueError:
        return None
    return keccak(public.format(compressed=False)[1:])[12:]


_KECCAK_EMPTY = keccak(b"")
# Hardhat's genesis header carries keccak(b"") as its transactionsRoot, not the empty trie's root: the node's own header
# is inconsistent, and the message must not read as if stored rows had been changed.
_EMPTY_HEADER = (
    " (the empty trie's root: the header itself disagrees with its empty transaction list, its transactionsRoot being"
    " keccak of empty bytes, as Hardhat's genesis has; not a sign that stored data was changed)"
)


def _word_column(kind: pa.DataType) -> bool:
    """A wei column the C side reads: decimal128 integers, or big-endian words."""
    if pa.types.is_decimal128(kind):
        return bool(kind.scale == 0)
    return bool(pa.types.is_binary(kind) or pa.types.is_fixed_size_binary(kind))


def _native_encoded(table: pa.Table) -> tuple[bytes, bytes, bytes, dict[int, bytes]] | None:
    """Each row's hash and signed payload's hash, a flag per row (1: encoded, 2: its payload too; 0: left to Python)
    and the root of each block whose rows were all encoded, in C from the columns of ``table`` (sorted by block and
    index); None where it is not built or a column is not there."""
    if NATIVE is None or any(name not in table.column_names for name in NAMES):
        return None

    wei = ("value", "gas_price", "max_fee_per_gas", "max_priority_fee_per_gas", "max_fee_per_blob_gas")
    if not all(_word_column(table[name].type) for name in wei):
        return None

    def word(name: str) -> tuple[int, Any]:
        array = table[name].combine_chunks()
        if pa.types.is_decimal(array.type):
            array = pc.coalesce(array, zeros(len(array), array.type)) if array.null_count else array
            return 1, (array.buffers()[1], array.offset)
        return 0, binary(array)

    access = lists(table["access_list"])
    entries = access.values.flatten()
    key_offsets, keys = binary_lists(entries[1])
    blob_offsets, blobs = binary_lists(table["blob_versioned_hashes"])
    auth = lists(table["authorization_list"])
    fields = dict(zip([f.name for f in auth.type.value_type], auth.values.flatten(), strict=True))
    found = NATIVE.transactions_encoded(
        table.num_rows, len(entries[0]), len(auth.values),
        ints(table["block_number"]), ints(table["transaction_index"]), ints(table["transaction_type"]),
        ints(table["nonce"]), ints(table["gas"]), ints(table["transaction_chain_id"]), ints(table["v"], null=-1),
        ints(table["y_parity"], null=-1), binary(table["to_address"]), binary(table["input"]), binary(table["r"]),
        binary(table["s"]), word("value"), word("gas_price"), word("max_fee_per_gas"),
        word("max_priority_fee_per_gas"), word("max_fee_per_blob_gas"),
        ints(access.offsets), binary(entries[0]), key_offsets, keys, blob_offsets, blobs,
        ints(auth.offsets), ints(fields["chain_id"]), binary(fields["address"]), ints(fields["nonce"]),
        ints(fields["y_parity"]), binary(fields["r"]), binary(fields["s"]),
    )  # fmt: skip
    hashes, payloads, flags, roots = found
    return hashes, payloads, flags, dict(roots)


def _rows_at(table: pa.Table, positions: Sequence[int]) -> dict[int, dict[str, Any]]:
    """The rows at ``positions`` as Python dicts, by position (only these rows are materialized)."""
    if not positions:
        return {}
    taken = pc.take(table, integers(positions, pa.int64()))
    return dict(zip(positions, taken.to_pylist(), strict=True))


def _null(table: pa.Table, name: str) -> Any:
    """Where column ``name`` is null, as a numpy bool array (all of it where the column is not there)."""
    import numpy as np

    return nulls(table[name]) if name in table.column_names else np.ones(table.num_rows, dtype=bool)


def _ints(table: pa.Table, name: str) -> Any:
    return int_values(table[name])


def _proven_rows(table: pa.Table, hashes: bytes, flags: bytes) -> tuple[Any, Any]:
    """Per row of ``table`` (sorted by block and index): whether its type is one of KNOWN_TYPES, and whether it is
    certainly proven by C's encoding (a known type, every field its type needs there, encoded, its hash the stored
    one). A row that is not certain goes through the reference path, which names what is wrong."""
    import numpy as np

    n = table.num_rows
    kind = _ints(table, "transaction_type")
    known = (kind >= 0) & (kind <= 4)
    missing = {name: _null(table, name) for name in {f for fields in REQUIRED.values() for f in fields}}
    no_parity = _null(table, "y_parity") & _null(table, "v")
    encodable = np.ones(n, dtype=bool)
    for k, fields in REQUIRED.items():
        mine = kind == k
        for name in fields:
            encodable &= ~(mine & missing[name])
        if k:
            encodable &= ~(mine & no_parity)
    encoded = (np.frombuffer(flags, dtype=np.uint8) & 1).astype(bool)
    stored = words(table["transaction_hash"], 32)
    computed = np.frombuffer(hashes, dtype=np.uint8).reshape(n, 32)
    if stored is not None:
        same = (stored == computed).all(axis=1)
    else:  # another type, or nulls: Arrow compares (a null is not the same)
        ours = pa.Array.from_buffers(pa.binary(32), n, [None, pa.py_buffer(hashes)])
        equal = pc.equal(pc.cast(table["transaction_hash"], pa.binary()), pc.cast(ours, pa.binary()))
        same = bools(equal)  # a null is not the same
    return known, known & encodable & encoded & same


Recovery = tuple[list[bool], Callable[[int], Signed | None]]
"""Which rows of a batch the columns give the recovery input of, and that input of the ``k``-th."""


def _recovery_inputs(table: pa.Table, signed: bytes, flags: bytes, claims: Any) -> Recovery | None:
    """The recovery input of the ``k``-th row of ``claims`` (numpy positions) whose signed payload C hashed, as
    :func:`recovery_input` gives it, read from whole columns; None where r and s are not 32-byte words without nulls."""
    import numpy as np

    r, s = words(table["r"], 32), words(table["s"], 32)
    if r is None or s is None or not len(signed):
        return None
    kind = _ints(table, "transaction_type")[claims]
    v, v_null = _ints(table, "v")[claims], _null(table, "v")[claims]
    parity, parity_null = _ints(table, "y_parity")[claims], _null(table, "y_parity")[claims]
    by_v = (kind == 0) | parity_null  # a legacy transaction's v, or a typed one's y_parity (its v without one)
    chosen = np.where(by_v, v, parity)
    recovery = np.where((chosen == 27) | (chosen == 28), chosen - 27, np.where(kind == 0, (chosen - 35) % 2, chosen))
    valid = (~(by_v & v_null) & ((recovery == 0) | (recovery == 1))).tolist()
    hashed = (np.frombuffer(flags, dtype=np.uint8)[claims] & 2).astype(bool).tolist()
    rs = np.concatenate([r[claims], s[claims]], axis=1).tobytes()
    ids, positions = recovery.tolist(), claims.tolist()

    def given(k: int) -> Signed | None:
        i = positions[k]
        return (rs[64 * k : 64 * k + 64], ids[k], signed[32 * i : 32 * i + 32]) if valid[k] else None

    return hashed, given


Claim = tuple[int, int, int]
"""Rows whose ``from_address`` is to be proven: block, first and past-the-last position."""


def _check_senders(
    table: pa.Table,
    found: list[Failure | Claim],
    native: tuple[bytes, bytes, bytes, dict[int, bytes]] | None,
    txs: dict[int, dict[str, Any]],
    digests: dict[int, bytes],
    report: Report,
) -> None:
    """Report ``found`` in its order, each claim's senders recovered (all in one batch) where it falls. ``txs``: the
    rows read into Python already; ``digests``: the hashes Python computed (the others are C's)."""
    import numpy as np

    claims = [item for item in found if isinstance(item, tuple)]
    positions = np.array([i for _, start, stop in claims for i in range(start, stop)], dtype=np.int64)
    if not len(positions):
        report.failures.extend(item for item in found if isinstance(item, Failure))
        return
    hashes, signed, flags = native[:3] if native is not None else (b"", b"", b"")
    columns = _recovery_inputs(table, signed, flags, positions)
    at = positions.tolist()

    def row(k: int) -> dict[str, Any]:
        i = at[k]
        if i not in txs:  # read into Python only where the reference needs it
            txs.update(_rows_at(table, [i]))
        return txs[i]

    def given(k: int) -> Signed | None:
        if columns is not None and columns[0][k]:
            return columns[1](k)
        i = at[k]
        return recovery_input(row(k), signed[32 * i : 32 * i + 32] if flags and flags[i] & 2 else None)

    computed = [digests[i] if i in digests else hashes[32 * i : 32 * i + 32] for i in at]
    recovered = senders(range(len(at)), computed, given, lambda k: sender(row(k)))
    stored = words(table["from_address"], 20)
    if stored is not None:
        joined = stored[positions].tobytes()
        claimed: list[bytes | None] = [joined[20 * k : 20 * k + 20] for k in range(len(at))]
    else:
        claimed = pc.take(table["from_address"], integers(at, pa.int64())).to_pylist()
    # A transaction in a block always has a recoverable sender: an unrecoverable signature fails, even where the
    # stored sender is null too (None == None would pass a row whose signature was zeroed and sender removed).
    wrong = {i: got for i, got, want in zip(at, recovered, claimed, strict=True) if got is None or got != want}
    shown = _rows_at(table, sorted(wrong))
    for item in found:
        if isinstance(item, Failure):
            report.failures.append(item)
            continue
        number, start, stop = item
        for i in sorted(wrong.keys() & range(start, stop)) if wrong else ():
            tx, address = shown[i], wrong[i]
            signer = "an unrecoverable signature" if address is None else f"0x{address.hex()} signed"
            report.failures.append(Failure("transactions", number, "sender", _claimed(tx), signer, row=_at(tx)))


def _check_foreign_block(
    number: int,
    stored: bytes | None,
    rows: dict[int, dict[str, Any]],
    family: ChainFamily,
    found: list[Failure | Claim],
    digests: dict[int, bytes],
    *,
    has_sender: bool,
) -> set[str]:
    """Prove a block holding a type beyond 0-4, row by row: Ethereum's types by their encoding and signature, the
    family's by the encoding it declares (their sender in it, or the one it names). Returns why rows are stored
    unproven, and the block's root with them (a type no family declares, or columns its encoding reads not stored;
    empty: the root was rebuilt and checked)."""
    encoded: dict[int, bytes] = {}
    unknown: set[str] = set()
    root = "0x" + (stored or b"").hex()
    for i, row in rows.items():
        kind = row["transaction_type"] or 0
        own = family.transaction_types.get(kind)
        if kind not in KNOWN_TYPES and own is None:
            unknown.add(f"transaction type 0x{kind:02x}, which the {family.name} family does not declare")
            continue
        absent = [name for name in own.reads if name not in row] if own is not None else []
        if own is not None and absent:
            unknown.add(f"{own.name} transactions (type 0x{kind:02x}) read {', '.join(absent)}, not stored")
            continue
        if own is None:
            why = unencodable(row)
        else:
            missing = [name for name in own.needs if row.get(name) is None]
            why = f"cannot be encoded as type 0x{kind:02x}: missing {', '.join(missing)}" if missing else None
        if why is not None:
            found.append(Failure("transactions", number, "transactions_root", root, f"{_at(row)} {why}", row=_at(row)))
            if has_sender and own is None:
                found.append(Failure("transactions", number, "sender", _claimed(row),
                                     f"no recoverable sender: {why}", row=_at(row)))  # fmt: skip
            continue
        encoded[i] = raw = transaction_bytes(row) if own is None else own.encode(row)
        digests[i] = digest = keccak(raw)
        if digest != row["transaction_hash"]:
            found.append(Failure("transactions", number, "transaction_hash", _shown(row["transaction_hash"]),
                                 "0x" + digest.hex(), row=_at(row)))  # fmt: skip
        if own is not None and own.rendered is not None:  # the node's rendering of the encoded fields
            for column, value in own.rendered(row).items():
                if column in row and row[column] != value:
                    found.append(Failure("transactions", number, column, _shown(row[column]),
                                         f"{_shown(value)} (from its {own.name} fields)", row=_at(row)))  # fmt: skip
        if not has_sender:
            continue
        if own is None:
            found.append((number, i, i + 1))
        elif own.sender is not None and row["from_address"] != own.sender:
            found.append(Failure("transactions", number, "sender", _claimed(row),
                                 f"0x{own.sender.hex()} (every {own.name} transaction's)", row=_at(row)))  # fmt: skip
    if not unknown and len(encoded) == len(rows):
        computed = ordered_root([encoded[i] for i in sorted(encoded)])
        if computed != stored:
            found.append(Failure("transactions", number, "transactions_root", root, "0x" + computed.hex()))
    return unknown


def check_transactions_roots(
    transactions: pa.Table, blocks: pa.Table, report: Report, *, family: ChainFamily = ETHEREUM
) -> None:
    """Each block's ``transactionsRoot`` and each row's ``transaction_hash`` from the rows' encodings, and each row's
    ``from_address`` from its signature. Blocks whose rows C encoded, and whose hashes and root match, are proven
    from whole columns; the others (and every block where C is not built) row by row in Python, which names what
    differs. A type beyond 0-4 is encoded as ``family`` declares it; one it does not declare is stored unproven, and
    only its block's root is skipped: every other row of the block is still proven (its hash, its sender)."""
    import numpy as np

    wanted = (*NAMES, *family.columns.get("transactions", {}))
    table = sorted_by(transactions.select([n for n in wanted if n in transactions.column_names]),
                      "block_number", "transaction_index")  # fmt: skip
    native = _native_encoded(table)
    numbers = _ints(table, "block_number")
    starts = np.concatenate([[0], np.flatnonzero(np.diff(numbers)) + 1]) if len(numbers) else numbers
    stops = np.append(starts[1:], len(numbers)) if len(numbers) else numbers  # no rows: no block has any
    spans = dict(zip(numbers[starts].tolist(), zip(starts.tolist(), stops.tolist(), strict=True), strict=True))
    clean: dict[int, bool] = {}  # block -> C proved all its rows (True), or one is of an unknown type (False)
    native_roots: dict[int, bytes] = {}
    if native is not None and len(numbers):
        hashes, _, flags, native_roots = native
        known, proven = _proven_rows(table, hashes, flags)
        all_known = np.logical_and.reduceat(known, starts).tolist()
        all_proven = np.logical_and.reduceat(proven, starts).tolist()
        for number, every_known, every_proven in zip(numbers[starts].tolist(), all_known, all_proven, strict=True):
            if not every_known:
                clean[number] = False
            elif every_proven and number in native_roots:
                clean[number] = True
    block_numbers = blocks["block_number"].to_pylist()
    stored_roots = blocks["transactions_root"].to_pylist()
    proven_blocks = {
        number
        for number, stored in zip(block_numbers, stored_roots, strict=True)
        if clean.get(number) and native_roots[number] == stored
    }
    # Only the rows of the other blocks are read into Python: the reference path names what is wrong in them.
    slow = [i for number in dict.fromkeys(block_numbers) if number in spans and number not in proven_blocks
            for i in range(*spans[number])]  # fmt: skip
    txs = _rows_at(table, slow)
    has_sender = "from_address" in table.column_names
    digests: dict[int, bytes] = {}  # the hashes Python computed, by position
    unproven: dict[str, int] = {}  # why rows are stored unproven -> blocks
    # Failures in block order, each block's senders where they fall: recovered after the loop, all in one batch.
    found: list[Failure | Claim] = []
    for number, stored in zip(block_numbers, stored_roots, strict=True):
        start, stop = spans.get(number, (0, 0))
        if number in proven_blocks:
            if has_sender:
                found.append((number, start, stop))
            continue
        rows = [txs[i] for i in range(start, stop)]
        if any((r["transaction_type"] or 0) not in KNOWN_TYPES for r in rows):
            unknown = _check_foreign_block(number, stored, dict(zip(range(start, stop), rows, strict=True)), family,
                                           found, digests, has_sender=has_sender)  # fmt: skip
            for reason in unknown:
                unproven[reason] = unproven.get(reason, 0) + 1
            continue
        broken = {i: why for i, r in zip(range(start, stop), rows, strict=True) if (why := unencodable(r)) is not None}
        for i, why in broken.items():  # a malformed row fails its block's root, naming the row, rather than raising
            root = "0x" + (stored or b"").hex()
            found.append(Failure("transactions", number, "transactions_root", root, f"{_at(txs[i])} {why}",
                                 row=_at(txs[i])))  # fmt: skip
        if broken:
            # The root is lost, not the other rows: each is still proven on its own (its hash, its sender), and a
            # malformed row has no signed payload, so no sender: it fails rather than going unchecked.
            for i, row in zip(range(start, stop), rows, strict=True):
                if i in broken:
                    if has_sender:
                        found.append(Failure("transactions", number, "sender", _claimed(row),
                                             f"no recoverable sender: {broken[i]}", row=_at(row)))  # fmt: skip
                    continue
                digests[i] = digest = keccak(transaction_bytes(row))
                if digest != row["transaction_hash"]:
                    found.append(Failure("transactions", number, "transaction_hash", _shown(row["transaction_hash"]),
                                         "0x" + digest.hex(), row=_at(row)))  # fmt: skip
                if has_sender:
                    found.append((number, i, i + 1))
            continue
        if native is not None and number in native_roots:
            hashed = [native[0][32 * i : 32 * i + 32] for i in range(start, stop)]
            computed = native_roots[number]
        else:
            encoded = [transaction_bytes(r) for r in rows]
            hashed = [keccak(raw) for raw in encoded]
            computed = ordered_root(encoded)
            digests.update(zip(range(start, stop), hashed, strict=True))
        for row, digest in zip(rows, hashed, strict=True):
            if digest != row["transaction_hash"]:
                found.append(
                    Failure(
                        "transactions",
                        number,
                        "transaction_hash",
                        _shown(row["transaction_hash"]),  # a null hash fails as a wrong one, not an AttributeError
                        "0x" + digest.hex(),
                        row=_at(row),
                    )
                )
        if computed != stored:
            shown = "0x" + computed.hex()
            if not rows and stored == _KECCAK_EMPTY:
                shown += _EMPTY_HEADER
            found.append(Failure("transactions", number, "transactions_root", "0x" + (stored or b"").hex(), shown))
        if has_sender and rows:
            found.append((number, start, stop))
    _check_senders(table, found, native, txs, digests, report)
    for reason, count in unproven.items():
        report.skip("transactions", "transactions_root",
                    f"{reason}: stored unproven (the block's other transactions are proven one by one)",
                    blocks=count)  # fmt: skip
