"""``transactionsRoot`` from the transactions, signatures included, and each row's hash = keccak(encoding).

Encodings: legacy (type 0, ``v`` as stored, EIP-155 or not), EIP-2930 (1), EIP-1559 (2), EIP-4844 (3, blob hashes
and blob fee; the network form with blobs is never in a block), EIP-7702 (4, authorizations).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from chainframe import _kernels as pc
from chainframe.verify._columns import binary, binary_lists, ints, lists, sorted_by, zeros
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


def check_transactions_roots(transactions: pa.Table, blocks: pa.Table, report: Report) -> None:
    table = sorted_by(transactions.select([n for n in NAMES if n in transactions.column_names]),
                      "block_number", "transaction_index")  # fmt: skip
    native = _native_encoded(table)
    by_block: dict[int, list[int]] = {}
    txs = table.to_pylist()
    for position, tx in enumerate(txs):
        by_block.setdefault(tx["block_number"], []).append(position)
    # The signed payloads' hashes the C side computed, by row (a row it left to Python has none).
    payloads: dict[int, bytes] = {}
    if native is not None:
        hashes, signed, flags, native_roots = native
        payloads = {id(txs[i]): signed[32 * i : 32 * i + 32] for i in range(len(txs)) if flags[i] & 2}
    foreign = 0
    # Failures in block order, each block's senders where they fall: recovered after the loop, all in one batch.
    found: list[Failure | tuple[int, dict[str, Any], bytes]] = []
    for number, stored in zip(blocks["block_number"].to_pylist(), blocks["transactions_root"].to_pylist(), strict=True):
        positions = by_block.get(number, [])
        rows = [txs[i] for i in positions]
        if any((r["transaction_type"] or 0) not in KNOWN_TYPES for r in rows):
            foreign += 1
            continue
        broken = [(r, why) for r in rows if (why := unencodable(r)) is not None]
        for row, why in broken:  # a malformed row fails its block's root, naming the row, rather than raising
            found.append(
                Failure(
                    "transactions",
                    number,
                    "transactions_root",
                    "0x" + (stored or b"").hex(),
                    f"transaction_index {row['transaction_index']} {why}",
                    row=f"transaction_index {row['transaction_index']}",
                )
            )
        if broken:
            continue
        if native is not None and number in native_roots:
            digests = [hashes[32 * i : 32 * i + 32] for i in positions]
            computed = native_roots[number]
        else:
            encoded = [transaction_bytes(r) for r in rows]
            digests = [keccak(raw) for raw in encoded]
            computed = ordered_root(encoded)
        for row, digest in zip(rows, digests, strict=True):
            if digest != row["transaction_hash"]:
                found.append(
                    Failure(
                        "transactions",
                        number,
                        "transaction_hash",
                        "0x" + row["transaction_hash"].hex(),
                        "0x" + digest.hex(),
                        row=f"transaction_index {row['transaction_index']}",
                    )
                )
        if computed != stored:
            shown = "0x" + computed.hex()
            if not rows and stored == _KECCAK_EMPTY:
                shown += _EMPTY_HEADER
            found.append(Failure("transactions", number, "transactions_root", "0x" + (stored or b"").hex(), shown))
        found.extend((number, row, digest) for row, digest in zip(rows, digests, strict=True) if "from_address" in row)
    claims = [item for item in found if isinstance(item, tuple)]
    signed_by = [row for _, row, _ in claims]
    given = lambda tx: recovery_input(tx, payloads.get(id(tx)))  # noqa: E731
    signers = iter(senders(signed_by, [d for _, _, d in claims], given, sender))
    for item in found:
        if isinstance(item, Failure):
            report.failures.append(item)
            continue
        number, row, _ = item
        recovered = next(signers)
        if recovered != row["from_address"]:
            signer = "an unrecoverable signature" if recovered is None else f"0x{recovered.hex()} signed"
            at = f"transaction {row['transaction_index']} 0x{row['transaction_hash'].hex()}"
            claimed = f"{at} from 0x{(row['from_address'] or b'').hex()}"
            report.failures.append(Failure("transactions", number, "sender", claimed, signer))
    report.skip("transactions", "transactions_root", "transaction types other than 0-4 (e.g. OP deposits)",
                blocks=foreign)  # fmt: skip
