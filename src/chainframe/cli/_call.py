"""``chainframe call``: one JSON-RPC method through the client (retries, pacing, key redacted), JSON out.

The service spec's methods have their arguments checked before anything is sent (each error names the argument,
and a missing one is caught here, not by the node's parser); written as people type them: decimal or ``0x``
numbers, ``0x0`` indexes, storage keys shorter than 32 bytes (padded, as nodes do). Any other method the endpoint
serves (``eth_call``, ``eth_getBalance``, ...) is passed through: numbers become ``0x`` quantities, JSON stays
JSON, anything else is sent as text.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio

from chainframe._errors import InputError
from chainframe.cli._commands import help_of
from chainframe.cli._endpoint import add_endpoint_options
from chainframe.cli._extract import client_options
from chainframe.engine import endpoint_of
from chainframe.rpc import AsyncClient, MethodNotFound
from chainframe.rpc import params as p

_QUANTITY = re.compile(r"0x[0-9a-fA-F]+\Z")


def _object(value: Any, name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(f"{name} must be a JSON object; got {value!r}")
    return value


def _index(value: Any, name: str) -> str:
    if isinstance(value, str) and _QUANTITY.match(value):
        value = int(value, 16)
    return p.index(value, name)


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise InputError(f"{name} must be true or false; got {value!r}")
    return value


def _word(value: Any, name: str) -> str:
    """A storage key: ``0x1`` means slot 1, left-padded to 32 bytes as nodes read it."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        value = hex(value)
    if isinstance(value, str) and _QUANTITY.match(value) and len(value) < 66:
        value = "0x" + value[2:].rjust(64, "0")
    return p.hash32(value, name)


def _keys(value: Any, name: str) -> list[str]:
    if isinstance(value, str | int):
        value = [value]
    if not isinstance(value, list):
        raise InputError(f'{name} must be a JSON list of storage keys, e.g. \'["0x0", "0x1"]\'; got {value!r}')
    return [_word(v, f"{name}[{i}]") for i, v in enumerate(value)]


def _block_or_hash(value: Any, name: str) -> str:
    if isinstance(value, str) and len(value) == 66:
        return p.hash32(value, name)
    return p.block(value, name)


def _filter(value: Any, name: str) -> dict[str, Any]:
    f = _object(value, name)
    return p.log_filter(from_block=f.get("fromBlock"), to_block=f.get("toBlock"), block_hash=f.get("blockHash"),
                        address_=f.get("address"), topics=f.get("topics"))  # fmt: skip


def _call(value: Any, name: str) -> dict[str, Any]:
    return p.call_list([_object(value, name)], name)[0]


@dataclass(frozen=True)
class _Arg:
    name: str
    check: Callable[[Any, str], Any]
    required: bool = True


_BLOCK = _Arg("block", p.block)
_HASH = _Arg("block hash", p.hash32)
_INDEX = _Arg("index", _index)
_FULL = _Arg("full transactions (true/false)", _flag)
# The spec's methods, each argument with its checker; nodes refuse a call that leaves out a required one.
METHODS: dict[str, tuple[_Arg, ...]] = {
    "eth_blockNumber": (),
    "eth_chainId": (),
    "eth_getBlockByNumber": (_BLOCK, _FULL),
    "eth_getBlockByHash": (_HASH, _FULL),
    "eth_getBlockReceipts": (_Arg("block or block hash", _block_or_hash),),
    "eth_getTransactionReceipt": (_Arg("transaction hash", p.hash32),),
    "eth_getTransactionByBlockNumberAndIndex": (_BLOCK, _INDEX),
    "eth_getTransactionByBlockHashAndIndex": (_HASH, _INDEX),
    "eth_getUncleByBlockNumberAndIndex": (_BLOCK, _INDEX),
    "eth_getUncleByBlockHashAndIndex": (_HASH, _INDEX),
    "eth_getLogs": (_Arg("filter", _filter),),
    "eth_getProof": (_Arg("address", p.address), _Arg("storage keys", _keys), _BLOCK),
    "debug_traceCall": (_Arg("call", _call), _BLOCK, _Arg("tracer options", _object, required=False)),
}


def _arg(text: str) -> Any:
    """A command-line word as JSON where it is JSON (numbers, true, objects, lists), else as text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _passed_through(text: str) -> Any:
    value = _arg(text)
    if isinstance(value, int) and not isinstance(value, bool):
        return hex(value)  # JSON-RPC quantities are 0x text; a node's parser refuses a bare number
    return value


def check(method: str, raw: list[str]) -> list[Any]:
    """The parameters to send: the spec's methods checked, any other method passed through."""
    spec = METHODS.get(method)
    if spec is None:
        if not re.fullmatch(r"[a-z][a-z0-9]*_[A-Za-z0-9_]+", method):
            raise InputError(f"{method!r} is not a JSON-RPC method name (like eth_getBalance)")
        return [_passed_through(text) for text in raw]
    required = [a.name for a in spec if a.required]
    usage = " ".join(f"<{a.name}>" if a.required else f"[<{a.name}>]" for a in spec) or "no arguments"
    got = f"got {len(raw)} argument{'s' * (len(raw) != 1)}"
    if len(raw) > len(spec):
        raise InputError(f"{method} takes {usage}; {got}")
    params = [a.check(_arg(text), a.name) for a, text in zip(spec, raw, strict=False)]  # what is there, first
    if len(raw) < len(required):
        raise InputError(f"{method} takes {usage}; {got}; missing: {', '.join(required[len(raw) :])}")
    return params


def add_parser(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "call",
        help=help_of("call"),
        description="Call a method of the service through chainframe's client (retries, key redacted) and print the "
        "result as JSON. The spec's methods have their arguments checked before sending; any other method the "
        "endpoint serves is passed through (numbers become 0x quantities).",
        epilog="examples:\n"
        "  chainframe call eth_getBlockByNumber 1000 false --rpc http://127.0.0.1:8545\n"
        "  chainframe call eth_getTransactionByBlockNumberAndIndex 0x3e8 0x0 --rpc http://127.0.0.1:8545\n"
        "  chainframe call eth_getProof 0x5FbDB2315678afecb367f032d93F642f64180aa3 '[\"0x0\"]' latest "
        "--rpc http://127.0.0.1:8545\n"
        "  chainframe call eth_getBalance 0x5FbDB2315678afecb367f032d93F642f64180aa3 latest "
        "--rpc http://127.0.0.1:8545\n"
        f"\nchecked methods: {', '.join(METHODS)}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("method", metavar="METHOD")
    parser.add_argument("args", nargs="*", metavar="ARG", help="positional arguments: numbers, hex, or JSON")
    add_endpoint_options(parser)
    parser.add_argument("--transport", choices=("http", "ws"), help="http (default) or ws; a ws:// URL means ws")
    parser.set_defaults(run=run, requests_per_second=None, credits_per_second=None, max_in_flight=None)


def run(args: argparse.Namespace) -> int:
    params = check(args.method, args.args)
    endpoint = endpoint_of(args.rpc, args.network, None)
    options = client_options(args)
    if isinstance(args.rpc, str) and args.rpc.startswith(("ws://", "wss://")):
        options.setdefault("transport", "ws")

    async def main() -> Any:
        async with AsyncClient(endpoint, **options) as client:
            return await client.request(args.method, params)

    try:
        answer = anyio.run(main)
    except MethodNotFound as exc:  # the devnet's gateway, like a restricted key, serves the spec's methods only
        exc.add_note(f"(a node's own URL may serve {args.method}; `chainframe probe --rpc URL` lists what this serves)")
        raise
    print(json.dumps(answer, indent=2))
    return 0
