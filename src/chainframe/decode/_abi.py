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
from chainframe._keccak import keccak256

_ELEMENTARY = re.compile(r"^(address|bool|string|bytes|u?int(\d*)|bytes(\d+))$")
_ARRAY = re.compile(r"^(.+)\[(\d*)\]$")


@dataclass(frozen=True)
class AbiType:
    """One ABI type: elementary (``base``), an array of ``item`` (``length`` None when dynamic), or a tuple (``base``
    ``"tuple"``) of named ``components``."""

    base: str
    item: AbiType | None = None
    length: int | None = None
    components: tuple[tuple[str, AbiType], ...] = ()

    @property
    def canonical(self) -> str:
        if self.base == "tuple":
            return f"({','.join(t.canonical for _, t in self.components)})"
        if self.item is None:
            return self.base
        return f"{self.item.canonical}[{'' if self.length is None else self.length}]"

    @property
    def text(self) -> str:
        """The human-readable form, component names included: ``(address to,uint256 amount)[]``."""
        if self.base == "tuple":
            return f"({','.join(f'{t.text} {name}' for name, t in self.components)})"
        if self.item is None:
            return self.base
        return f"{self.item.text}[{'' if self.length is None else self.length}]"

    @property
    def is_elementary(self) -> bool:
        """Neither an array nor a tuple."""
        return self.item is None and self.base != "tuple"

    @property
    def is_dynamic(self) -> bool:
        if self.base == "tuple":
            return any(t.is_dynamic for _, t in self.components)
        if self.item is None:
            return self.base in ("string", "bytes")
        return self.length is None or self.item.is_dynamic

    @property
    def head_words(self) -> int:
        """How many 32-byte words the type takes in the head of an encoding (1 for a dynamic type's offset)."""
        if self.is_dynamic:
            return 1
        if self.base == "tuple":
            return sum(t.head_words for _, t in self.components)
        if self.item is None:
            return 1
        assert self.length is not None
        return self.length * self.item.head_words

    @property
    def bits(self) -> int:
        """Width of an integer type (``uint`` is ``uint256``)."""
        digits = self.base.removeprefix("u").removeprefix("int")
        return int(digits) if digits else 256


def split_top(text: str) -> list[str]:
    """``text`` split at the commas outside parentheses (the parameters of a list, not those of its tuples)."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += (char == "(") - (char == ")")
        if depth < 0:
            raise InputError(f"unbalanced parentheses in {text!r}")
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth:
        raise InputError(f"unbalanced parentheses in {text!r}")
    parts.append(text[start:])
    return [] if len(parts) == 1 and not parts[0].strip() else parts


def split_declaration(part: str) -> tuple[str, list[str]]:
    """A parameter declaration as its type and the words after it: ``(uint256 a, bool b)[] indexed pairs``."""
    part = part.strip()
    if part.startswith(("(", "tuple(")):
        depth = 0
        for i, char in enumerate(part):
            depth += (char == "(") - (char == ")")
            if char == ")" and depth == 0:
                end = i + 1
                while end < len(part) and not part[end].isspace():
                    end += 1  # array suffixes: [] or [3]
                return part[:end], part[end:].split()
        raise InputError(f"unbalanced parentheses in {part!r}")
    words = part.split()
    return (words[0] if words else ""), words[1:]


def parse_type(text: str) -> AbiType:
    """``uint256[]``, ``bytes32[3]``, ``address``, tuples ``(address to, uint256 amount)`` (names optional, the
    ``tuple`` keyword allowed) and arrays of them (``function`` and fixed-point types are not supported)."""
    text = text.strip()
    array = _ARRAY.match(text)
    if array:
        item, length = array.groups()
        return AbiType("array", parse_type(item), int(length) if length else None)
    if text.startswith(("(", "tuple(")) and text.endswith(")"):
        body = text[text.index("(") + 1 : -1]
        components = []
        for i, part in enumerate(split_top(body)):
            type_text, rest = split_declaration(part)
            if len(rest) > 1:
                raise InputError(f"tuple type {text!r}: cannot read component {part.strip()!r}")
            components.append((rest[0] if rest else f"arg{i}", parse_type(type_text)))
        if not components:
            raise InputError(f"tuple type {text!r} has no components")
        if len({name for name, _ in components}) != len(components):
            raise InputError(f"tuple type {text!r} has two components with the same name")
        return AbiType("tuple", components=tuple(components))
    match = _ELEMENTARY.match(text)
    if not match:
        raise InputError(
            f"event type {text!r} is not an ABI type this decoder knows (function and fixed-point types are not "
            "supported)"
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
    def text(self) -> str:
        """The human-readable form that :func:`parse_event` reads back to this event, names and ``indexed`` kept."""
        params = [f"{p.type.text}{' indexed' if p.indexed else ''} {p.name}" for p in self.params]
        return f"{self.name}({','.join(params)})"

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
    params = []
    for i, part in enumerate(split_top(body)):
        type_text, words = split_declaration(part)
        indexed = "indexed" in words
        rest = [w for w in words if w != "indexed"]
        if not type_text or len(rest) > 1:
            raise InputError(f"event signature {signature!r}: cannot read parameter {part.strip()!r}")
        params.append(Param(rest[0] if rest else f"arg{i}", parse_type(type_text), indexed))
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
        params = [
            Param(p.get("name") or f"arg{i}", _abi_type(p), bool(p.get("indexed", False)))
            for i, p in enumerate(item.get("inputs", []))
        ]
        events.append(_checked(Event(item["name"], tuple(params), bool(item.get("anonymous", False))), item["name"]))
    return events


def _abi_type(entry: dict[str, Any]) -> AbiType:
    """An ABI JSON parameter's type: ``tuple`` types take their ``components``, arrays of tuples too."""
    text = str(entry.get("type", ""))
    if not text.startswith("tuple"):
        return parse_type(text)
    inner = ",".join(f"{_abi_type(c).text} {c.get('name') or f'arg{i}'}" for i, c in enumerate(entry["components"]))
    return parse_type(f"({inner}){text.removeprefix('tuple')}")


def as_events(events: str | Event | list[Any] | tuple[Any, ...]) -> list[Event]:
    """One signature, an :class:`Event`, a list of signatures, or an ABI (JSON text or list of dicts)."""
    if isinstance(events, Event):
        return [events]
    if isinstance(events, str):
        return events_from_abi(events) if events.lstrip().startswith("[") else [parse_event(events)]
    if all(isinstance(e, dict) for e in events):
        return events_from_abi(list(events))
    out: list[Event] = []
    for e in events:  # signatures and ABI entries together (--event SIGNATURE with --abi FILE)
        out += events_from_abi([e]) if isinstance(e, dict) else [e if isinstance(e, Event) else parse_event(e)]
    return out


def _checked(event: Event, source: str) -> Event:
    if event.anonymous:
        raise InputError(f"event {source!r} is anonymous: it has no topic0 to find it by")
    if len(event.indexed) > 3:
        raise InputError(f"event {source!r} has {len(event.indexed)} indexed parameters; a log holds at most 3")
    names = [p.name for p in event.params]
    if len(set(names)) != len(names):
        raise InputError(f"event {source!r} has two parameters with the same name")
    return event


@dataclass(frozen=True)
class Function:
    """A function: its name and input parameters in declaration order. ``selector`` is the first 4 bytes of keccak-256
    of the canonical form, which a call's input starts with."""

    name: str
    params: tuple[Param, ...]
    outputs: tuple[Param, ...] = ()
    """What it returns (an ABI entry's ``outputs``, a signature's ``returns (...)``): not in the calldata, so not in
    :attr:`text` nor the selector; an ``eth_call``'s output is decoded with them (:attr:`full_text` keeps them).
    An unnamed output is named by its place (``0``, ``1``...)."""

    @property
    def signature(self) -> str:
        return f"{self.name}({','.join(p.type.canonical for p in self.params)})"

    @property
    def text(self) -> str:
        """The human-readable form that :func:`parse_function` reads back to this function, names kept."""
        return f"{self.name}({','.join(f'{p.type.text} {p.name}' for p in self.params)})"

    @property
    def full_text(self) -> str:
        """:attr:`text` and what it returns, as :func:`parse_function` reads it back."""
        if not self.outputs:
            return self.text
        return f"{self.text} returns ({','.join(f'{p.type.text} {p.name}' for p in self.outputs)})"

    @property
    def selector(self) -> bytes:
        return keccak256(self.signature.encode())[:4]

    @property
    def head_words(self) -> int:
        """The words of the arguments' head: a call shorter than 4 bytes and these cannot be this function's."""
        return sum(p.type.head_words for p in self.params)


def parse_function(signature: str) -> Function:
    """``"transfer(address to, uint256 amount)"`` (the ``function`` keyword and a visibility allowed and ignored;
    ``returns (...)`` read as its :attr:`~Function.outputs`, which only an ``eth_call``'s output is decoded with)."""
    text = signature.strip().removeprefix("function ").strip().rstrip(";")
    match = re.fullmatch(r"([A-Za-z_$][\w$]*)\s*\(", text[: text.find("(") + 1] if "(" in text else "")
    if not match:
        raise InputError(f"function signature {signature!r} is not of the form name(type [name], ...)")
    depth, end = 0, -1
    for i, char in enumerate(text):
        depth += (char == "(") - (char == ")")
        if char == ")" and depth == 0:
            end = i
            break
    if end < 0:
        raise InputError(f"function signature {signature!r}: unbalanced parentheses")
    params = _declared(signature, text[text.find("(") + 1 : end], "arg")
    outputs: list[Param] = []
    returns = re.search(r"\breturns\s*\(", text[end + 1 :])
    if returns:
        rest = text[end + 1 + returns.end() :].rstrip()
        if not rest.endswith(")"):
            raise InputError(f"function signature {signature!r}: unbalanced parentheses after returns")
        outputs = _declared(signature, rest[:-1], "")
    return _checked_function(Function(match.group(1), tuple(params), tuple(outputs)), signature)


def _declared(signature: str, text: str, unnamed: str) -> list[Param]:
    """A parameter list's declarations (``uint256 a, bytes memory b``): an unnamed one named ``unnamed`` + its
    place."""
    params = []
    for i, part in enumerate(split_top(text) if text.strip() else []):
        type_text, words = split_declaration(part)
        rest = [w for w in words if w not in ("memory", "calldata", "storage")]
        if not type_text or len(rest) > 1:
            raise InputError(f"function signature {signature!r}: cannot read parameter {part.strip()!r}")
        params.append(Param(rest[0] if rest else f"{unnamed}{i}", parse_type(type_text), False))
    return params


def functions_from_abi(abi: str | list[dict[str, Any]]) -> list[Function]:
    """The functions of an ABI (a JSON text or the parsed list); events, errors and constructors are ignored."""
    items = json.loads(abi) if isinstance(abi, str) else abi
    if not isinstance(items, list):
        raise InputError("an ABI is a JSON list of entries")
    functions = []
    for item in items:
        if not isinstance(item, dict) or item.get("type", "function") != "function":
            continue
        params = [Param(p.get("name") or f"arg{i}", _abi_type(p), False) for i, p in enumerate(item.get("inputs", []))]
        outputs = [Param(p.get("name") or str(i), _abi_type(p), False) for i, p in enumerate(item.get("outputs") or [])]
        functions.append(_checked_function(Function(item["name"], tuple(params), tuple(outputs)), item["name"]))
    return functions


def as_functions(functions: str | Function | list[Any] | tuple[Any, ...]) -> list[Function]:
    """One signature, a :class:`Function`, a list of signatures, or an ABI (JSON text or list of dicts); two
    functions of one selector are refused (a call could not say which it is)."""
    if isinstance(functions, Function):
        found = [functions]
    elif isinstance(functions, str):
        found = functions_from_abi(functions) if functions.lstrip().startswith("[") else [parse_function(functions)]
    elif all(isinstance(f, dict) for f in functions):
        found = functions_from_abi(list(functions))
    else:  # signatures and ABI entries together (--function SIGNATURE with --abi FILE)
        found = []
        for f in functions:
            found += (
                functions_from_abi([f])
                if isinstance(f, dict)
                else [f if isinstance(f, Function) else parse_function(f)]
            )
    seen: dict[bytes, Function] = {}
    for function in found:
        other = seen.setdefault(function.selector, function)
        if other.signature != function.signature:
            raise InputError(
                f"functions {other.signature} and {function.signature} share the selector 0x{function.selector.hex()}:"
                " a call could not say which it is; decode them separately"
            )
    unique = {f.signature: f for f in found}  # the same function given twice (two ABIs) is one
    return list(unique.values())


def _checked_function(function: Function, source: str) -> Function:
    for params, what in ((function.params, "parameters"), (function.outputs, "outputs")):
        names = [p.name for p in params]
        if len(set(names)) != len(names):
            raise InputError(f"function {source!r} has two {what} with the same name")
    return function
