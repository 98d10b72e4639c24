"""Events as the ABI describes them: parsed from a signature or ABI JSON, with their canonical name and topic0.

A signature is Solidity's human-readable form, ``"Transfer(address indexed from, address indexed to, uint256
value)"``; names are optional (unnamed parameters become ``arg0``, ``arg1``...). The canonical form
(``Transfer(address,address,uint256)``) is what topic0 hashes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from chainframe._errors import InputError
from chainframe.decode._keccak import keccak256

_ELEMENTARY = re.compile(r"^(address|bool|string|bytes|u?int(\d*)|bytes(\d+))$")
_ARRAY = re.compile(r"^(.+)\[(\d*)\]$")


@dataclass(frozen=True)
class AbiType:
    """One ABI type: elementary (``base``), or an array of ``item`` (``length`` None when dynamic)."""

    base: str
    item: AbiType | None = None
    length: int | None = None

    @property
    def canonical(self) -> str:
        if self.item is None:
            return self.base
        return f"{self.item.canonical}[{'' if self.length is None else self.length}]"

    @property
    def is_dynamic(self) -> bool:
        if self.item is None:
            return self.base in ("string", "bytes")
        return self.length is None or self.item.is_dynamic

    @property
    def head_words(self) -> int:
        """How many 32-byte words the type takes in the head of an encoding (1 for a dynamic type's offset)."""
        if self.is_dynamic:
            return 1
        if self.item is None:
            return 1
        assert self.length is not None
        return self.length * self.item.head_words

    @property
    def bits(self) -> int:
        """Width of an integer type (``uint`` is ``uint256``)."""
        digits = self.base.removeprefix("u").removeprefix("int")
        return int(digits) if digits else 256


def parse_type(text: str) -> AbiType:
    """``uint256[]``, ``bytes32[3]``, ``address``... (tuples, ``function`` and fixed-point are not supported yet)."""
    text = text.strip()
    array = _ARRAY.match(text)
    if array:
        item, length = array.groups()
        return AbiType("array", parse_type(item), int(length) if length else None)
    match = _ELEMENTARY.match(text)
    if not match:
        raise InputError(
            f"event type {text!r} is not an ABI type this decoder knows (tuples, function and fixed-point types are "
            "not supported yet)"
        )
    base = {"uint": "uint256", "int": "int256"}.get(text, text)
    if base.startswith(("uint", "int")):
        bits = int(base.removeprefix("u").removeprefix("int"))
        if not (8 <= bits <= 256 and bits % 8 == 0):
            raise InputError(f"event type {text!r}: integer widths are 8..256 in steps of 8")
    elif base.startswith("bytes") and base != "bytes" and not 1 <= int(base[5:]) <= 32:
        raise InputError(f"event type {text!r}: bytesN needs 1 <= N <= 32")
    return AbiType(base)


@dataclass(frozen=True)
class Param:
    name: str
    type: AbiType
    indexed: bool


@dataclass(frozen=True)
class Event:
    """An event: its name and parameters in declaration order. ``topic0`` is keccak-256 of the canonical form."""

    name: str
    params: tuple[Param, ...]
    anonymous: bool = False

    @property
    def signature(self) -> str:
        return f"{self.name}({','.join(p.type.canonical for p in self.params)})"

    @property
    def topic0(self) -> bytes:
        return keccak256(self.signature.encode())

    @property
    def indexed(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.indexed)

    @property
    def data_params(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if not p.indexed)


def parse_event(signature: str) -> Event:
    """``"Transfer(address indexed from, address indexed to, uint256 value)"`` (the ``event`` keyword is allowed)."""
    text = signature.strip().removeprefix("event ").strip().rstrip(";")
    match = re.fullmatch(r"([A-Za-z_$][\w$]*)\s*\((.*)\)\s*(anonymous)?", text, flags=re.S)
    if not match:
        raise InputError(f"event signature {signature!r} is not of the form Name(type [indexed] [name], ...)")
    name, body, anonymous = match.groups()
    if "(" in body:
        raise InputError(f"event signature {signature!r}: tuple parameters are not supported yet")
    params = []
    for i, part in enumerate(p for p in body.split(",") if p.strip()) if body.strip() else []:
        words = part.split()
        indexed = "indexed" in words[1:]
        rest = [w for w in words[1:] if w != "indexed"]
        if len(rest) > 1:
            raise InputError(f"event signature {signature!r}: cannot read parameter {part.strip()!r}")
        params.append(Param(rest[0] if rest else f"arg{i}", parse_type(words[0]), indexed))
    return _checked(Event(name, tuple(params), anonymous=bool(anonymous)), signature)


def events_from_abi(abi: str | list[dict[str, Any]]) -> list[Event]:
    """The events of an ABI (a JSON text or the parsed list); functions and errors in it are ignored."""
    items = json.loads(abi) if isinstance(abi, str) else abi
    if not isinstance(items, list):
        raise InputError("an ABI is a JSON list of entries")
    events = []
    for item in items:
        if item.get("type") != "event":
            continue
        params = []
        for i, p in enumerate(item.get("inputs", [])):
            if str(p.get("type", "")).startswith("tuple"):
                raise InputError(f"event {item.get('name')}: tuple parameters are not supported yet")
            params.append(Param(p.get("name") or f"arg{i}", parse_type(p["type"]), bool(p.get("indexed", False))))
        events.append(_checked(Event(item["name"], tuple(params), bool(item.get("anonymous", False))), item["name"]))
    return events


def as_events(events: str | Event | list[Any] | tuple[Any, ...]) -> list[Event]:
    """One signature, an :class:`Event`, a list of signatures, or an ABI (JSON text or list of dicts)."""
    if isinstance(events, Event):
        return [events]
    if isinstance(events, str):
        return events_from_abi(events) if events.lstrip().startswith("[") else [parse_event(events)]
    if all(isinstance(e, dict) for e in events):
        return events_from_abi(list(events))
    return [e if isinstance(e, Event) else parse_event(e) for e in events]


def _checked(event: Event, source: str) -> Event:
    if event.anonymous:
        raise InputError(f"event {source!r} is anonymous: it has no topic0 to find it by")
    if len(event.indexed) > 3:
        raise InputError(f"event {source!r} has {len(event.indexed)} indexed parameters; a log holds at most 3")
    names = [p.name for p in event.params]
    if len(set(names)) != len(names):
        raise InputError(f"event {source!r} has two parameters with the same name")
    return event
