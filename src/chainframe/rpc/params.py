"""Checking and encoding method arguments before anything is sent. Each error names the argument."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from chainframe._errors import InputError

BlockTag = Literal["latest", "earliest", "pending", "safe", "finalized"]
BLOCK_TAGS: tuple[str, ...] = ("latest", "earliest", "pending", "safe", "finalized")
BlockParam = int | BlockTag | str
Topic = bytes | str | None | Sequence[bytes | str]

_HEX = re.compile(r"0x[0-9a-fA-F]*\Z")
_QUANTITY = re.compile(r"0x(0|[1-9a-fA-F][0-9a-fA-F]*)\Z")


def _fixed(value: Any, size: int, name: str, what: str) -> str:
    if isinstance(value, bytes | bytearray):
        if len(value) != size:
            raise InputError(f"{name} must be {size} bytes ({what}); got {len(value)} bytes")
        return "0x" + bytes(value).hex()
    if isinstance(value, str) and _HEX.match(value):
        if len(value) != 2 + 2 * size:
            raise InputError(f"{name} must be {size} bytes ({what}): 0x and {2 * size} hex digits; got {value!r}")
        return value.lower()
    raise InputError(f"{name} must be {what} as 0x-prefixed hex or bytes; got {value!r}")


def address(value: Any, name: str = "address") -> str:
    return _fixed(value, 20, name, "an address")


def hash32(value: Any, name: str = "hash") -> str:
    return _fixed(value, 32, name, "a 32-byte hash")


def index(value: Any, name: str = "index") -> str:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"{name} must be a non-negative integer; got {value!r}")
    return hex(value)


def block(value: Any, name: str = "block") -> str:
    """A block number (int >= 0 or 0x quantity) or a tag."""
    if isinstance(value, str):
        if value in BLOCK_TAGS:
            return value
        if len(value) == 66 and value[:2].lower() == "0x":
            raise InputError(f"{name} {value[:10]}... is a block hash, not a number: use the method that takes a hash")
        if _QUANTITY.match(value):
            return value.lower()
    elif isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return hex(value)
    tags = "/".join(BLOCK_TAGS)
    raise InputError(f"{name} must be a block number (integer >= 0 or 0x hex) or one of {tags}; got {value!r}")


def data(value: Any, name: str = "data") -> str:
    if isinstance(value, bytes | bytearray):
        return "0x" + bytes(value).hex()
    if isinstance(value, str) and _HEX.match(value) and len(value) % 2 == 0:
        return value.lower()
    raise InputError(f"{name} must be 0x-prefixed hex with an even number of digits, or bytes; got {value!r}")


def quantity(value: Any, name: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return hex(value)
    if isinstance(value, str) and _QUANTITY.match(value):
        return value.lower()
    raise InputError(f"{name} must be a non-negative integer or 0x quantity; got {value!r}")


def storage_keys(values: Any, name: str = "storage_keys") -> list[str]:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise InputError(f"{name} must be a list of 32-byte keys; got {values!r}")
    return [hash32(v, f"{name}[{i}]") for i, v in enumerate(values)]


def _topic_position(value: Topic, name: str) -> str | list[str] | None:
    if value is None:
        return None
    if isinstance(value, bytes | str):
        return hash32(value, name)
    if isinstance(value, Sequence):
        return [hash32(v, f"{name}[{i}]") for i, v in enumerate(value)]
    raise InputError(f"{name} must be a 32-byte topic, a list of them (OR), or None (any); got {value!r}")


def log_filter(
    *,
    from_block: BlockParam | None = None,
    to_block: BlockParam | None = None,
    block_hash: bytes | str | None = None,
    address_: bytes | str | Sequence[bytes | str] | None = None,
    topics: Sequence[Topic] | None = None,
) -> dict[str, Any]:
    """An eth_getLogs filter object: blockHash excludes fromBlock/toBlock; at most 4 topic positions."""
    flt: dict[str, Any] = {}
    if block_hash is not None:
        if from_block is not None or to_block is not None:
            raise InputError("block_hash excludes from_block and to_block: give either a hash or a range")
        flt["blockHash"] = hash32(block_hash, "block_hash")
    else:
        if from_block is not None:
            flt["fromBlock"] = block(from_block, "from_block")
        if to_block is not None:
            flt["toBlock"] = block(to_block, "to_block")
        lo, hi = flt.get("fromBlock", ""), flt.get("toBlock", "")
        if lo.startswith("0x") and hi.startswith("0x") and int(lo, 16) > int(hi, 16):
            raise InputError(f"from_block ({int(lo, 16)}) is after to_block ({int(hi, 16)})")
    if address_ is not None:
        if isinstance(address_, bytes | str):
            flt["address"] = address(address_, "address")
        else:
            flt["address"] = [address(a, f"address[{i}]") for i, a in enumerate(address_)]
    if topics is not None:
        if isinstance(topics, str | bytes) or not isinstance(topics, Sequence):
            raise InputError(f"topics must be a list of up to 4 positions; got {topics!r}")
        if len(topics) > 4:
            raise InputError(f"topics has {len(topics)} positions; a log has at most 4")
        flt["topics"] = [_topic_position(t, f"topics[{i}]") for i, t in enumerate(topics)]
    return flt


def call_request(
    *,
    to: bytes | str,
    from_: bytes | str | None = None,
    data_: bytes | str | None = None,
    value: int | None = None,
    gas: int | None = None,
    gas_price: int | None = None,
    max_fee_per_gas: int | None = None,
    max_priority_fee_per_gas: int | None = None,
    nonce: int | None = None,
    type_: int | None = None,
    chain_id: int | None = None,
    access_list: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The transaction object of debug_traceCall (spec 4.3): ``to`` required, the rest optional."""
    obj: dict[str, Any] = {"to": address(to, "to")}
    if from_ is not None:
        obj["from"] = address(from_, "from_")
    if data_ is not None:
        obj["data"] = data(data_, "data")
    for key, value_, name in (
        ("value", value, "value"),
        ("gas", gas, "gas"),
        ("gasPrice", gas_price, "gas_price"),
        ("maxFeePerGas", max_fee_per_gas, "max_fee_per_gas"),
        ("maxPriorityFeePerGas", max_priority_fee_per_gas, "max_priority_fee_per_gas"),
        ("nonce", nonce, "nonce"),
        ("type", type_, "type"),
        ("chainId", chain_id, "chain_id"),
    ):
        if value_ is not None:
            obj[key] = quantity(value_, name)
    if access_list is not None:
        shape = "a list of {'address': .., 'storageKeys': [..]}"
        if isinstance(access_list, str | bytes | Mapping) or not isinstance(access_list, Sequence):
            raise InputError(f"access_list must be {shape}; got {access_list!r}")
        if not all(isinstance(entry, Mapping) for entry in access_list):
            raise InputError(f"access_list must be {shape}; got {access_list!r}")
        obj["accessList"] = [
            {
                "address": address(entry.get("address"), f"access_list[{i}].address"),
                "storageKeys": storage_keys(entry.get("storageKeys", ()), f"access_list[{i}].storageKeys"),
            }
            for i, entry in enumerate(access_list)
        ]
    return obj


def call_list(calls: Any, name: str = "calls") -> list[dict[str, str]]:
    """A list of debug_traceCall transaction objects (mappings with at least ``to``), checked and encoded."""
    if isinstance(calls, Mapping | str | bytes) or not isinstance(calls, Sequence) or not calls:
        raise InputError(
            f"{name} must be a non-empty list of transaction objects like {{'to': '0x..', 'data': '0x..'}}"
        )
    out = []
    for i, call in enumerate(calls):
        if not isinstance(call, Mapping) or call.get("to") is None:
            raise InputError(f"{name}[{i}] must be a transaction object with at least 'to'; got {call!r}")
        out.append(
            call_request(
                to=call["to"],
                from_=call.get("from"),
                data_=call.get("data", call.get("input")),
                value=call.get("value"),
                gas=call.get("gas"),
                gas_price=call.get("gasPrice"),
                max_fee_per_gas=call.get("maxFeePerGas"),
                max_priority_fee_per_gas=call.get("maxPriorityFeePerGas"),
                nonce=call.get("nonce"),
                type_=call.get("type"),
                chain_id=call.get("chainId"),
                access_list=call.get("accessList"),
            )
        )
    return out
