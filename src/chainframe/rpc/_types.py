"""Typed result objects for the JSON-RPC methods chainframe reads, decoded losslessly.

Each class stands for one JSON object: ``from_json`` decodes it, ``to_json`` writes it back, and the round trip is
*lossless*: ``to_json(from_json(x)) == x`` once hex strings are lowercased. Three things make that hold:

* **presence**: every object remembers the keys it was decoded from, in order, so a key the node left out stays out
  and a ``null`` stays ``null`` (pending blocks, Parity's ``"status": null``);
* **extra keys**: keys beyond the known fields (Parity's ``author`` and ``sealFields``, old geth's ``time``) are kept
  as raw JSON in ``extra`` and written back;
* **non-canonical text**: a scalar whose canonical encoding would differ from what the node sent (anvil's receipt
  ``blockTimestamp`` as a JSON integer, geth's storage-proof key ``"0x0"``) is remembered as sent. Only such values
  are kept twice; canonical ones are re-encoded.

Conventions: quantities -> ``int``; hashes, addresses, data, blooms and the 8-byte block nonce -> ``bytes`` (lengths
checked); JSON ``null`` -> ``None``; attributes are the JSON keys in snake_case (``from`` -> ``from_``). A missing
*required* key is an error; an absent *optional* one reads as its default (``None``, or an empty tuple or mapping).
Signature ``r`` and ``s`` are ``int``: the spec table calls them 32 bytes, but every node writes them as quantities,
leading zeros dropped.

One mechanism serves every class: each dataclass field carries its codec in its metadata (``field(metadata=
_wire(HASH))``), the JSON key is the field name in camelCase, and required means "no default". :class:`_Model`
decodes and encodes from that table. :func:`decode_result` picks the class for a method's result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Self, get_args, overload

from chainframe.rpc._hex import data, quantity, to_bytes, to_int

__all__ = [
    "AccessListEntry",
    "AccountProof",
    "Authorization",
    "Block",
    "CallFrame",
    "CallLog",
    "Log",
    "Prestate",
    "PrestateAccount",
    "PrestateDiff",
    "Receipt",
    "StorageProof",
    "Transaction",
    "Withdrawal",
    "decode_result",
]


# --- codecs: one JSON value <-> one Python value ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Codec:
    """How one JSON value becomes a Python value and back.

    Decoding re-encodes ``scalar`` values and compares, to catch non-canonical text; nested objects track their own.
    """

    decode: Callable[[Any], Any]
    encode: Callable[[Any], Any]
    scalar: bool = True


def _checked(kind: type, what: str) -> Callable[[Any], Any]:
    def decode(value: Any) -> Any:
        if type(value) is not kind:
            raise TypeError(f"expected {what}, got {type(value).__name__}")
        return value

    return decode


def _same(value: Any) -> Any:
    return value


def _sized(size: int, what: str) -> _Codec:
    def decode(value: Any) -> bytes:
        decoded = to_bytes(value)
        if len(decoded) != size:
            raise ValueError(f"{what} must be {size} bytes, got {len(decoded)}")
        return decoded

    return _Codec(decode, data)


def _word(value: Any) -> bytes:
    decoded = to_bytes(value)
    if len(decoded) > 32:
        raise ValueError(f"a storage key must be 32 bytes, got {len(decoded)}")
    return decoded.rjust(32, b"\0")


def _tuple_of(item: _Codec) -> _Codec:
    array = _checked(list, "a JSON array")
    return _Codec(
        lambda value: tuple(item.decode(x) for x in array(value)),
        lambda value: [item.encode(x) for x in value],
        item.scalar,
    )


def _mapping_of(key: _Codec, item: _Codec) -> _Codec:
    obj = _checked(dict, "a JSON object")
    return _Codec(
        lambda value: {key.decode(k): item.decode(v) for k, v in obj(value).items()},
        lambda value: {key.encode(k): item.encode(v) for k, v in value.items()},
        key.scalar and item.scalar,
    )


def _object(model: Callable[[], type[_Model]]) -> _Codec:
    """A nested result object; ``model`` is called at decode time, so a class can nest itself (call frames)."""
    return _Codec(lambda value: model().from_json(value), lambda value: value.to_json(), scalar=False)


QUANTITY = _Codec(to_int, quantity)
NUMBER = _Codec(to_int, _same)  # a quantity that nodes write as a plain JSON integer (prestateTracer's nonce)
DATA = _Codec(to_bytes, data)
HASH = _sized(32, "a hash")
ADDRESS = _sized(20, "an address")
BLOOM = _sized(256, "a logs bloom")
BLOCK_NONCE = _sized(8, "a block nonce")
WORD = _Codec(_word, data)  # a 32-byte storage key, left-padded when the node shortened it
BOOL = _Codec(_checked(bool, "a JSON boolean"), _same)
TEXT = _Codec(_checked(str, "a JSON string"), _same)
HASHES = _tuple_of(HASH)
DATAS = _tuple_of(DATA)


# --- the wire table and the generic model ------------------------------------------------------------------------

_META = "chainframe.wire"


@dataclass(frozen=True, slots=True)
class _Spec:
    codec: _Codec
    nullable: bool


def _wire(codec: _Codec, *, null: bool = False) -> dict[str, _Spec]:
    """Field metadata: the codec, and whether a *required* key may be null (an optional one may when its default
    is None)."""
    return {_META: _Spec(codec, null)}


@dataclass(frozen=True, slots=True)
class _Row:
    """One field of a class's wire table."""

    attr: str
    key: str
    codec: _Codec
    required: bool  # must be present; always written
    nullable: bool
    default: Any  # of an optional field; omitted from built objects' JSON when the value equals it


@dataclass(frozen=True, slots=True)
class _Table:
    rows: tuple[_Row, ...]
    by_key: Mapping[str, _Row]


_TABLES: dict[type[_Model], _Table] = {}  # derived from the class definitions, once per class


def _table(model: type[_Model]) -> _Table:
    """The wire table of a result class, from its dataclass fields."""
    table = _TABLES.get(model)
    if table is None:
        table = _TABLES[model] = _build_table(model)
    return table


def _build_table(model: type[_Model]) -> _Table:
    rows = []
    for f in dataclasses.fields(model):
        spec = f.metadata.get(_META)
        if spec is None:
            continue
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        nullable = spec.nullable or (not required and default is None)
        rows.append(_Row(f.name, _camel(f.name), spec.codec, required, nullable, None if required else default))
    return _Table(tuple(rows), {row.key: row for row in rows})


def _camel(attr: str) -> str:
    """``parent_hash`` -> ``parentHash``; ``from_`` -> ``from``."""
    head, *rest = attr.rstrip("_").split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


@dataclass(frozen=True, slots=True)
class _Received:
    """What a decoded object remembers of its JSON beyond the values: key order (so presence) and raw text."""

    keys: tuple[str, ...]
    raw: Mapping[str, Any]  # JSON key -> the value as sent, where its canonical encoding differs


@dataclass(frozen=True, slots=True, kw_only=True)
class _Model:
    """Base of the result objects: ``from_json`` and ``to_json`` driven by the fields' wire metadata."""

    #: Keys the node sent beyond the known fields, as raw JSON values; written back by ``to_json``.
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False, hash=False)
    _received: _Received | None = field(default=None, init=False, repr=False, compare=False, hash=False)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Self:
        """Decode one JSON object; raises ``ValueError`` naming the class and key on anything malformed."""
        if not isinstance(obj, Mapping):
            raise TypeError(f"{cls.__name__}: expected a JSON object, got {type(obj).__name__}")
        table = _table(cls)
        values: dict[str, Any] = {}
        raw: dict[str, Any] = {}
        for row in table.rows:
            if row.key not in obj:
                if row.required:
                    raise ValueError(f"{cls.__name__}: missing {row.key!r}")
                continue
            value = obj[row.key]
            if value is None:
                if not row.nullable:
                    raise ValueError(f"{cls.__name__}.{row.key}: null")
                values[row.attr] = None
                continue
            try:
                decoded = row.codec.decode(value)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{cls.__name__}.{row.key}: {exc}") from exc
            values[row.attr] = decoded
            if row.codec.scalar and row.codec.encode(decoded) != _lowercased(value):
                raw[row.key] = value
        extra = {key: value for key, value in obj.items() if key not in table.by_key}
        instance = cls(extra=extra, **values)
        object.__setattr__(instance, "_received", _Received(tuple(obj), raw))
        return instance

    def to_json(self) -> dict[str, Any]:
        """The JSON object: the keys received, in order; for an object built in Python, the required keys, the
        optional ones that differ from their default, then ``extra``."""
        table = _table(type(self))
        received = self._received
        if received is None:
            keys = [row.key for row in table.rows if row.required or getattr(self, row.attr) != row.default]
            keys += [key for key in self.extra if key not in table.by_key]
            raw: Mapping[str, Any] = {}
        else:
            keys, raw = list(received.keys), received.raw
        out: dict[str, Any] = {}
        for key in keys:
            row = table.by_key.get(key)
            if row is None:
                out[key] = self.extra[key]
            elif key in raw:
                out[key] = raw[key]
            else:
                value = getattr(self, row.attr)
                out[key] = None if value is None else row.codec.encode(value)
        return out

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython and Jupyter show every field with bytes as ``0x`` hex; ``repr`` stays one short line."""
        printer.text(_pretty(self))

    def __init_subclass__(cls) -> None:
        # IPython takes a class's own __repr__ (each dataclass has one) before an inherited _repr_pretty_. (No
        # super() call: slots=True rebuilds the class, which breaks zero-argument super; object's does nothing.)
        cls._repr_pretty_ = _Model._repr_pretty_  # type: ignore[method-assign]


def _pretty(value: Any, indent: str = "") -> str:
    """A result object for people (IPython and Jupyter): every field, bytes as ``0x`` hex, long lists cut at 5."""
    inner = indent + "  "
    if isinstance(value, bytes):
        text = "0x" + value.hex()
        return text if len(value) <= 32 else f"{text[:66]}... ({len(value)} bytes)"
    if isinstance(value, _Model):
        shown = [f for f in dataclasses.fields(value) if f.name[0] != "_" and (f.name != "extra" or value.extra)]
        lines = [f"{inner}{f.name}={_pretty(getattr(value, f.name), inner)}" for f in shown]
        return f"{type(value).__name__}(\n" + ",\n".join(lines) + f"\n{indent})"
    if isinstance(value, Mapping | tuple | list):
        pairs = list(value.items()) if isinstance(value, Mapping) else [(None, v) for v in value]
        if not pairs:
            return "{}" if isinstance(value, Mapping) else "()"
        lines = [f"{inner}{'' if k is None else _pretty(k, inner) + ': '}{_pretty(v, inner)}" for k, v in pairs[:5]]
        lines += [f"{inner}... {len(pairs) - 5} more"] if len(pairs) > 5 else []
        open_, close = "{}" if isinstance(value, Mapping) else "()"
        return f"{open_}\n" + ",\n".join(lines) + f"\n{indent}{close}"
    return repr(value)


def _lowercased(value: Any) -> Any:
    """The input as a canonical encoding is compared with it: hex digits are case-insensitive."""
    if isinstance(value, str):
        return value.lower() if value.startswith("0x") else value
    if isinstance(value, list):
        return [_lowercased(x) for x in value]
    if isinstance(value, dict):
        return {_lowercased(k): _lowercased(v) for k, v in value.items()}
    return value


def _short(value: bytes | None) -> str:
    return "None" if value is None else f"0x{value[:4].hex()}.."


# --- blocks and transactions -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class AccessListEntry(_Model):
    """One EIP-2930 access-list entry: an address and the storage keys the transaction declares it touches."""

    address: bytes = field(metadata=_wire(ADDRESS))
    storage_keys: tuple[bytes, ...] = field(metadata=_wire(HASHES))


@dataclass(frozen=True, slots=True, kw_only=True)
class Authorization(_Model):
    """One EIP-7702 authorization of a type-4 transaction: the signer delegates its code to ``address``."""

    chain_id: int = field(metadata=_wire(QUANTITY))
    address: bytes = field(metadata=_wire(ADDRESS))
    nonce: int = field(metadata=_wire(QUANTITY))
    y_parity: int = field(metadata=_wire(QUANTITY))
    r: int = field(metadata=_wire(QUANTITY))
    s: int = field(metadata=_wire(QUANTITY))


@dataclass(frozen=True, slots=True, kw_only=True)
class Transaction(_Model):
    """A transaction, from ``eth_getTransactionBy*`` or a full block; its location fields are None when pending."""

    block_hash: bytes | None = field(metadata=_wire(HASH, null=True))
    block_number: int | None = field(metadata=_wire(QUANTITY, null=True))
    from_: bytes = field(metadata=_wire(ADDRESS))
    gas: int = field(metadata=_wire(QUANTITY))
    gas_price: int = field(metadata=_wire(QUANTITY))
    hash: bytes = field(metadata=_wire(HASH))
    input: bytes = field(metadata=_wire(DATA))
    nonce: int = field(metadata=_wire(QUANTITY))
    to: bytes | None = field(metadata=_wire(ADDRESS, null=True))  # None for a contract creation
    transaction_index: int | None = field(metadata=_wire(QUANTITY, null=True))
    value: int = field(metadata=_wire(QUANTITY))
    type: int = field(metadata=_wire(QUANTITY))
    v: int = field(metadata=_wire(QUANTITY))
    r: int = field(metadata=_wire(QUANTITY))
    s: int = field(metadata=_wire(QUANTITY))
    block_timestamp: int | None = field(default=None, metadata=_wire(QUANTITY))
    chain_id: int | None = field(default=None, metadata=_wire(QUANTITY))
    y_parity: int | None = field(default=None, metadata=_wire(QUANTITY))
    max_fee_per_gas: int | None = field(default=None, metadata=_wire(QUANTITY))
    max_priority_fee_per_gas: int | None = field(default=None, metadata=_wire(QUANTITY))
    access_list: tuple[AccessListEntry, ...] | None = field(
        default=None, metadata=_wire(_tuple_of(_object(lambda: AccessListEntry)))
    )
    max_fee_per_blob_gas: int | None = field(default=None, metadata=_wire(QUANTITY))
    blob_versioned_hashes: tuple[bytes, ...] | None = field(default=None, metadata=_wire(HASHES))
    authorization_list: tuple[Authorization, ...] | None = field(
        default=None, metadata=_wire(_tuple_of(_object(lambda: Authorization)))
    )

    def __repr__(self) -> str:
        return f"Transaction(hash={_short(self.hash)}, block={self.block_number}, index={self.transaction_index})"


@dataclass(frozen=True, slots=True, kw_only=True)
class Withdrawal(_Model):
    """A validator withdrawal (EIP-4895) credited in a block; ``amount`` is in gwei."""

    index: int = field(metadata=_wire(QUANTITY))
    validator_index: int = field(metadata=_wire(QUANTITY))
    address: bytes = field(metadata=_wire(ADDRESS))
    amount: int = field(metadata=_wire(QUANTITY))


def _decode_transactions(value: Any) -> tuple[bytes, ...] | tuple[Transaction, ...]:
    items = _checked(list, "a JSON array")(value)
    if all(isinstance(item, str) for item in items):
        return tuple(HASH.decode(item) for item in items)
    return tuple(Transaction.from_json(item) for item in items)


def _encode_transactions(value: tuple[bytes, ...] | tuple[Transaction, ...]) -> list[Any]:
    return [item.to_json() if isinstance(item, Transaction) else data(item) for item in value]


@dataclass(frozen=True, slots=True, kw_only=True)
class Block(_Model):
    """A block header with its transactions (hashes, or full objects when asked for) and its uncles' hashes.

    Also the shape of an uncle, which has no ``transactions`` key (read as an empty tuple). ``number``, ``hash``,
    ``nonce``, ``logs_bloom`` and ``miner`` may be None for the pending block.
    """

    number: int | None = field(metadata=_wire(QUANTITY, null=True))
    hash: bytes | None = field(metadata=_wire(HASH, null=True))
    parent_hash: bytes = field(metadata=_wire(HASH))
    nonce: bytes | None = field(metadata=_wire(BLOCK_NONCE, null=True))
    sha3_uncles: bytes = field(metadata=_wire(HASH))
    logs_bloom: bytes | None = field(metadata=_wire(BLOOM, null=True))
    transactions_root: bytes = field(metadata=_wire(HASH))
    state_root: bytes = field(metadata=_wire(HASH))
    receipts_root: bytes = field(metadata=_wire(HASH))
    miner: bytes | None = field(metadata=_wire(ADDRESS, null=True))
    difficulty: int = field(metadata=_wire(QUANTITY))
    extra_data: bytes = field(metadata=_wire(DATA))
    size: int = field(metadata=_wire(QUANTITY))
    gas_limit: int = field(metadata=_wire(QUANTITY))
    gas_used: int = field(metadata=_wire(QUANTITY))
    timestamp: int = field(metadata=_wire(QUANTITY))
    uncles: tuple[bytes, ...] = field(metadata=_wire(HASHES))
    transactions: tuple[bytes, ...] | tuple[Transaction, ...] = field(
        default=(), metadata=_wire(_Codec(_decode_transactions, _encode_transactions, scalar=False))
    )
    total_difficulty: int | None = field(default=None, metadata=_wire(QUANTITY))  # dropped by geth after the merge
    mix_hash: bytes | None = field(default=None, metadata=_wire(HASH))
    base_fee_per_gas: int | None = field(default=None, metadata=_wire(QUANTITY))  # London on
    withdrawals_root: bytes | None = field(default=None, metadata=_wire(HASH))  # Shanghai on
    withdrawals: tuple[Withdrawal, ...] | None = field(
        default=None, metadata=_wire(_tuple_of(_object(lambda: Withdrawal)))
    )
    blob_gas_used: int | None = field(default=None, metadata=_wire(QUANTITY))  # Cancun on
    excess_blob_gas: int | None = field(default=None, metadata=_wire(QUANTITY))
    parent_beacon_block_root: bytes | None = field(default=None, metadata=_wire(HASH))
    requests_hash: bytes | None = field(default=None, metadata=_wire(HASH))  # Prague on

    def __repr__(self) -> str:
        return f"Block(number={self.number}, hash={_short(self.hash)}, transactions={len(self.transactions)})"


# --- logs and receipts -----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Log(_Model):
    """An event log, from ``eth_getLogs`` or a receipt; its location fields are None when pending."""

    address: bytes = field(metadata=_wire(ADDRESS))
    topics: tuple[bytes, ...] = field(metadata=_wire(HASHES))
    data: bytes = field(metadata=_wire(DATA))
    block_number: int | None = field(metadata=_wire(QUANTITY, null=True))
    transaction_hash: bytes | None = field(metadata=_wire(HASH, null=True))
    transaction_index: int | None = field(metadata=_wire(QUANTITY, null=True))
    block_hash: bytes | None = field(metadata=_wire(HASH, null=True))
    log_index: int | None = field(metadata=_wire(QUANTITY, null=True))
    removed: bool | None = field(default=None, metadata=_wire(BOOL))  # absent on Parity
    block_timestamp: int | None = field(default=None, metadata=_wire(QUANTITY))

    def __repr__(self) -> str:
        return f"Log(block={self.block_number}, index={self.log_index}, address={_short(self.address)})"


@dataclass(frozen=True, slots=True, kw_only=True)
class Receipt(_Model):
    """A transaction receipt: ``status`` (Byzantium on) or the post-state ``root`` (before it), gas, fees, logs."""

    block_hash: bytes = field(metadata=_wire(HASH))
    block_number: int = field(metadata=_wire(QUANTITY))
    contract_address: bytes | None = field(metadata=_wire(ADDRESS, null=True))
    cumulative_gas_used: int = field(metadata=_wire(QUANTITY))
    effective_gas_price: int = field(metadata=_wire(QUANTITY))
    gas_used: int = field(metadata=_wire(QUANTITY))
    logs: tuple[Log, ...] = field(metadata=_wire(_tuple_of(_object(lambda: Log))))
    logs_bloom: bytes = field(metadata=_wire(BLOOM))
    transaction_hash: bytes = field(metadata=_wire(HASH))
    transaction_index: int = field(metadata=_wire(QUANTITY))
    from_: bytes | None = field(default=None, metadata=_wire(ADDRESS))  # absent on Parity
    to: bytes | None = field(default=None, metadata=_wire(ADDRESS))
    root: bytes | None = field(default=None, metadata=_wire(HASH))
    status: int | None = field(default=None, metadata=_wire(QUANTITY))
    type: int | None = field(default=None, metadata=_wire(QUANTITY))
    blob_gas_used: int | None = field(default=None, metadata=_wire(QUANTITY))
    blob_gas_price: int | None = field(default=None, metadata=_wire(QUANTITY))
    block_timestamp: int | None = field(default=None, metadata=_wire(QUANTITY))

    def __repr__(self) -> str:
        return f"Receipt(transaction={_short(self.transaction_hash)}, block={self.block_number}, status={self.status})"


# --- account proofs --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class StorageProof(_Model):
    """One storage slot's value and its Merkle proof from the account's storage root."""

    key: bytes = field(metadata=_wire(WORD))  # 32 bytes, left-padded when the node shortened it
    value: int = field(metadata=_wire(QUANTITY))
    proof: tuple[bytes, ...] = field(metadata=_wire(DATAS))


@dataclass(frozen=True, slots=True, kw_only=True)
class AccountProof(_Model):
    """``eth_getProof``: an account's state with its Merkle proof from the state root, and the storage proofs."""

    address: bytes | None = field(default=None, metadata=_wire(ADDRESS))  # not in the spec's field list
    balance: int = field(metadata=_wire(QUANTITY))
    code_hash: bytes = field(metadata=_wire(HASH))
    nonce: int = field(metadata=_wire(QUANTITY))
    storage_hash: bytes = field(metadata=_wire(HASH))
    account_proof: tuple[bytes, ...] = field(metadata=_wire(DATAS))
    storage_proof: tuple[StorageProof, ...] = field(metadata=_wire(_tuple_of(_object(lambda: StorageProof))))


# --- traces ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class CallLog(_Model):
    """A log emitted in a call frame (callTracer ``withLog``); ``position`` is the number of sub-calls before it."""

    address: bytes = field(metadata=_wire(ADDRESS))
    topics: tuple[bytes, ...] = field(metadata=_wire(HASHES))
    data: bytes = field(metadata=_wire(DATA))
    position: int | None = field(default=None, metadata=_wire(QUANTITY))
    index: int | None = field(default=None, metadata=_wire(QUANTITY))  # in the transaction; newer geth only


@dataclass(frozen=True, slots=True, kw_only=True)
class CallFrame(_Model):
    """One callTracer frame and its sub-calls.

    ``type`` is CALL, STATICCALL, DELEGATECALL, CALLCODE, CREATE, CREATE2 or SELFDESTRUCT. Old geth wrote
    SELFDESTRUCT frames with ``type`` alone, and the old JS tracer left ``gas`` out of sub-calls, so the rest is
    optional.
    """

    type: str = field(metadata=_wire(TEXT))
    from_: bytes | None = field(default=None, metadata=_wire(ADDRESS))
    to: bytes | None = field(default=None, metadata=_wire(ADDRESS))
    value: int | None = field(default=None, metadata=_wire(QUANTITY))
    gas: int | None = field(default=None, metadata=_wire(QUANTITY))
    gas_used: int | None = field(default=None, metadata=_wire(QUANTITY))
    input: bytes | None = field(default=None, metadata=_wire(DATA))
    output: bytes | None = field(default=None, metadata=_wire(DATA))
    error: str | None = field(default=None, metadata=_wire(TEXT))
    revert_reason: str | None = field(default=None, metadata=_wire(TEXT))
    calls: tuple[CallFrame, ...] = field(default=(), metadata=_wire(_tuple_of(_object(lambda: CallFrame))))
    logs: tuple[CallLog, ...] = field(default=(), metadata=_wire(_tuple_of(_object(lambda: CallLog))))

    def depth(self) -> int:
        """Levels of nesting: 1 for a frame without sub-calls."""
        return 1 + max((call.depth() for call in self.calls), default=0)


@dataclass(frozen=True, slots=True, kw_only=True)
class PrestateAccount(_Model):
    """An account as prestateTracer reports it; what the tracer leaves out (unchanged, in diff mode) is None."""

    balance: int | None = field(default=None, metadata=_wire(QUANTITY))
    nonce: int | None = field(default=None, metadata=_wire(NUMBER))  # a JSON integer on the wire
    code: bytes | None = field(default=None, metadata=_wire(DATA))
    code_hash: bytes | None = field(default=None, metadata=_wire(HASH))
    storage: Mapping[bytes, bytes] = field(default_factory=dict, hash=False, metadata=_wire(_mapping_of(HASH, HASH)))


_ACCOUNTS = _mapping_of(ADDRESS, _object(lambda: PrestateAccount))


@dataclass(frozen=True, slots=True, kw_only=True)
class Prestate(Mapping[bytes, PrestateAccount]):
    """prestateTracer's default result: every account the call touched, as it was before the call.

    A mapping of address to account (``prestate[address]``), the shape of the JSON; ``accounts`` holds it.
    """

    accounts: Mapping[bytes, PrestateAccount] = field(hash=False)

    def __getitem__(self, address: bytes) -> PrestateAccount:
        return self.accounts[address]

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.accounts)

    def __len__(self) -> int:
        return len(self.accounts)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Self:
        """Decode the ``{address: account}`` object."""
        try:
            return cls(accounts=_ACCOUNTS.decode(obj))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{cls.__name__}: {exc}") from exc

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython and Jupyter: the accounts, addresses and bytes as ``0x`` hex."""
        printer.text(f"Prestate({_pretty(self.accounts)})")

    def to_json(self) -> dict[str, Any]:
        """The ``{address: account}`` object."""
        encoded: dict[str, Any] = _ACCOUNTS.encode(self.accounts)
        return encoded


@dataclass(frozen=True, slots=True, kw_only=True)
class PrestateDiff(_Model):
    """prestateTracer in ``diffMode``: the touched accounts before (``pre``) and after (``post``) the call."""

    pre: Mapping[bytes, PrestateAccount] = field(hash=False, metadata=_wire(_ACCOUNTS))
    post: Mapping[bytes, PrestateAccount] = field(hash=False, metadata=_wire(_ACCOUNTS))


# --- method -> result class ------------------------------------------------------------------------------------------

BlockMethod = Literal[
    "eth_getBlockByNumber",
    "eth_getBlockByHash",
    "eth_getUncleByBlockNumberAndIndex",
    "eth_getUncleByBlockHashAndIndex",
]
TransactionMethod = Literal[
    "eth_getTransactionByHash", "eth_getTransactionByBlockNumberAndIndex", "eth_getTransactionByBlockHashAndIndex"
]
_BLOCK_METHODS = frozenset(get_args(BlockMethod))
_TRANSACTION_METHODS = frozenset(get_args(TransactionMethod))
RpcResult = (
    Block | Transaction | Receipt | tuple[Receipt, ...] | tuple[Log, ...] | AccountProof | CallFrame | Prestate
    | PrestateDiff | int | None
)  # fmt: skip


@overload
def decode_result(method: BlockMethod, params: Sequence[Any], result: Any) -> Block | None: ...
@overload
def decode_result(method: TransactionMethod, params: Sequence[Any], result: Any) -> Transaction | None: ...
@overload
def decode_result(
    method: Literal["eth_getTransactionReceipt"], params: Sequence[Any], result: Any
) -> Receipt | None: ...
@overload
def decode_result(
    method: Literal["eth_getBlockReceipts"], params: Sequence[Any], result: Any
) -> tuple[Receipt, ...] | None: ...
@overload
def decode_result(method: Literal["eth_getLogs"], params: Sequence[Any], result: Any) -> tuple[Log, ...]: ...
@overload
def decode_result(method: Literal["eth_getProof"], params: Sequence[Any], result: Any) -> AccountProof: ...
@overload
def decode_result(
    method: Literal["debug_traceCall"], params: Sequence[Any], result: Any
) -> CallFrame | Prestate | PrestateDiff: ...
@overload
def decode_result(method: Literal["eth_blockNumber", "eth_chainId"], params: Sequence[Any], result: Any) -> int: ...
@overload
def decode_result(method: str, params: Sequence[Any], result: Any) -> RpcResult: ...
def decode_result(method: str, params: Sequence[Any], result: Any) -> RpcResult:
    """Decode the ``result`` of one JSON-RPC call into its typed object, chosen by ``method``.

    ``null`` stays None where the method may answer null (not found); lists become tuples. ``debug_traceCall``
    needs the tracing options in ``params[2]`` to tell a callTracer frame from a prestate or prestate-diff result.
    Raises ``ValueError`` for a method without a typed result, or a result that does not fit.
    """
    if method in _BLOCK_METHODS:
        return None if result is None else Block.from_json(result)
    if method in _TRANSACTION_METHODS:
        return None if result is None else Transaction.from_json(result)
    if method == "eth_getTransactionReceipt":
        return None if result is None else Receipt.from_json(result)
    if method == "eth_getBlockReceipts":
        return None if result is None else tuple(Receipt.from_json(item) for item in _array(method, result))
    if method == "eth_getLogs":
        return tuple(Log.from_json(item) for item in _array(method, result))
    if method == "eth_getProof":
        return AccountProof.from_json(_present(method, result))
    if method == "debug_traceCall":
        return _decode_trace(params, _present(method, result))
    if method in ("eth_blockNumber", "eth_chainId"):
        try:
            return to_int(result)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{method}: {exc}") from exc
    raise ValueError(f"no typed result for method {method!r}")


def _decode_trace(params: Sequence[Any], result: Any) -> CallFrame | Prestate | PrestateDiff:
    options = params[2] if len(params) > 2 and params[2] is not None else {}
    if not isinstance(options, Mapping):
        raise ValueError(f"debug_traceCall: tracing options must be an object, got {type(options).__name__}")
    tracer = options.get("tracer")
    config = options.get("tracerConfig") or {}
    if tracer == "callTracer":
        return CallFrame.from_json(result)
    if tracer == "prestateTracer":
        return PrestateDiff.from_json(result) if config.get("diffMode") else Prestate.from_json(result)
    raise ValueError(f"debug_traceCall: no typed result for tracer {tracer!r} (callTracer or prestateTracer)")


def _array(method: str, result: Any) -> list[Any]:
    if not isinstance(result, list):
        raise ValueError(f"{method}: expected a JSON array, got {type(result).__name__}")
    return result


def _present(method: str, result: Any) -> Any:
    if result is None:
        raise ValueError(f"{method}: null result")
    return result
