"""Events as the ABI describes them: parsed from a signature (``"Transfer(address indexed from, address indexed to,
uint256 value)"``) or an ABI (a JSON list, or one event object), with the canonical signature and its topic0.

keccak-256 comes from pycryptodome (``hashlib.sha3_256`` is the NIST variant, which hashes differently).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from Crypto.Hash import keccak as _keccak

from chainframe._errors import InputError

_NAME = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
_SIZES = "|".join(str(8 * n) for n in range(1, 33))  # uint8 .. uint256 in steps of 8
_TYPE = re.compile(rf"^(u?int({_SIZES})?|address|bool|string|bytes([1-9]|[12][0-9]|3[0-2])?)(\[\d*\])*$")


def keccak(data: bytes) -> bytes:
    """keccak-256, as Ethereum uses it (not NIST SHA3-256)."""
    digest = _keccak.new(digest_bits=256)
    digest.update(data)
    return digest.digest()


@dataclass(frozen=True)
class Param:
    name: str
    type: str
    indexed: bool

    @property
    def dynamic(self) -> bool:
        """Whether the ABI encodes it out of line (and, indexed, stores only its hash in the topic)."""
        return self.type in ("string", "bytes") or self.type.endswith("[]") or "[" in self.type


@dataclass(frozen=True)
class Event:
    name: str
    params: tuple[Param, ...]
    anonymous: bool = False

    @property
    def signature(self) -> str:
        return f"{self.name}({','.join(p.type for p in self.params)})"

    @property
    def topic0(self) -> bytes:
        return keccak(self.signature.encode())

    @property
    def indexed(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.indexed)

    @property
    def data(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if not p.indexed)

    @property
    def topic_count(self) -> int:
        return len(self.indexed) + (0 if self.anonymous else 1)


def _canonical_type(text: str) -> str:
    kind = text.strip()
    kind = re.sub(r"^uint(?=$|\[)", "uint256", kind)
    kind = re.sub(r"^int(?=$|\[)", "int256", kind)
    if not _TYPE.match(kind):
        raise InputError(f"{text!r} is not an ABI type this decoder knows (address, bool, uintN, intN, bytesN, bytes, "
                         "string, and arrays of them)")  # fmt: skip
    return kind


def parse_signature(text: str) -> Event:
    """``"Transfer(address indexed from, address indexed to, uint256 value)"`` (names and ``indexed`` optional;
    without ``indexed``, no parameter is taken as indexed)."""
    match = re.fullmatch(r"\s*(?:event\s+)?([A-Za-z_$][A-Za-z0-9_$]*)\s*\((.*)\)\s*(anonymous)?\s*;?\s*", text)
    if not match:
        raise InputError(f"{text!r} is not an event signature like 'Transfer(address indexed from, "
                         "address indexed to, uint256 value)'")  # fmt: skip
    name, body, anonymous = match.groups()
    params: list[Param] = []
    for i, part in enumerate(p for p in body.split(",") if p.strip()):
        words = part.split()
        indexed = "indexed" in words[1:]
        rest = [w for w in words[1:] if w != "indexed"]
        if len(rest) > 1 or (rest and not _NAME.match(rest[0])):
            raise InputError(f"event {name}: {part.strip()!r} is not 'type [indexed] [name]'")
        params.append(Param(rest[0] if rest else f"arg{i}", _canonical_type(words[0]), indexed))
    if len(params) > 0 and sum(p.indexed for p in params) > (4 if anonymous else 3):
        raise InputError(f"event {name} has more indexed parameters than a log has topics")
    return Event(name, tuple(params), anonymous=bool(anonymous))


def from_abi(item: Mapping[str, Any]) -> Event:
    """One ``{"type": "event", "name": ..., "inputs": [...]}`` object of a JSON ABI."""
    if item.get("type") != "event":
        raise InputError(f"ABI item {item.get('name')!r} is a {item.get('type')!r}, not an event")
    params = tuple(
        Param(p.get("name") or f"arg{i}", _canonical_type(p["type"]), bool(p.get("indexed")))
        for i, p in enumerate(item.get("inputs", []))
    )
    return Event(item["name"], params, anonymous=bool(item.get("anonymous")))


def events_of(spec: str | Mapping[str, Any] | Sequence[Any]) -> list[Event]:
    """Events from a signature, several signatures, an ABI event object, or a whole ABI (JSON text or parsed)."""
    if isinstance(spec, str):
        text = spec.strip()
        if text.startswith(("[", "{")):
            return events_of(json.loads(text))
        return [parse_signature(text)]
    if isinstance(spec, Mapping):
        return [from_abi(spec)]
    out: list[Event] = []
    for item in spec:
        if isinstance(item, Mapping) and item.get("type") != "event":
            continue  # functions, errors, constructors of a whole ABI
        out += events_of(item)
    if not out:
        raise InputError("no event found in what was given (a signature, an ABI event, or an ABI with events)")
    return out


def topic0(signature: str) -> str:
    """The topic0 of an event signature, as 0x hex: ``topic0("Transfer(address,address,uint256)")``."""
    return "0x" + parse_signature(signature).topic0.hex()
