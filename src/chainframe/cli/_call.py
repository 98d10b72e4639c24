"""``chainframe call``: one JSON-RPC method through the client (checked arguments, retries), JSON out."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

import anyio

from chainframe._errors import InputError
from chainframe.cli._endpoint import add_endpoint_options
from chainframe.engine._api import endpoint_of
from chainframe.rpc import AsyncClient
from chainframe.rpc import _params as p


def _object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(f"expected a JSON object; got {value!r}")
    return value


def _filter_args(value: Any) -> dict[str, Any]:
    f = _object(value)
    return {"from_block": f.get("fromBlock"), "to_block": f.get("toBlock"), "block_hash": f.get("blockHash"),
            "address_": f.get("address"), "topics": f.get("topics")}  # fmt: skip


def _call_args(value: Any) -> dict[str, Any]:
    c = _object(value)
    return {"to": c.get("to"), "from_": c.get("from"), "data_": c.get("data") or c.get("input"),
            "value": c.get("value"), "gas": c.get("gas")}  # fmt: skip


# Per method: a checker for each positional argument (required ones first), and how many are required.
_ARGS: dict[str, tuple[list[Callable[[Any], Any]], int]] = {
    "eth_blockNumber": ([], 0),
    "eth_chainId": ([], 0),
    "eth_getBlockByNumber": ([p.block, bool], 1),
    "eth_getBlockReceipts": ([p.block], 1),
    "eth_getTransactionReceipt": ([p.hash32], 1),
    "eth_getTransactionByBlockNumberAndIndex": ([p.block, p.index], 2),
    "eth_getTransactionByBlockHashAndIndex": ([p.hash32, p.index], 2),
    "eth_getUncleByBlockNumberAndIndex": ([p.block, p.index], 2),
    "eth_getUncleByBlockHashAndIndex": ([p.hash32, p.index], 2),
    "eth_getLogs": ([lambda f: p.log_filter(**_filter_args(f))], 1),
    "eth_getProof": ([p.address, p.storage_keys, p.block], 2),
    "debug_traceCall": ([lambda c: p.call_request(**_call_args(c)), p.block, _object], 2),
}


def _arg(text: str) -> Any:
    if text.isdigit():
        return int(text)
    try:
        return json.loads(text)
    except ValueError:
        return text


def check(method: str, raw: list[str]) -> list[Any]:
    if method not in _ARGS:
        raise InputError(f"unknown method {method!r}; one of: {', '.join(_ARGS)}")
    checkers, required = _ARGS[method]
    if not required <= len(raw) <= len(checkers):
        raise InputError(f"{method} takes {required}..{len(checkers)} arguments; got {len(raw)}")
    return [checker(_arg(text)) for checker, text in zip(checkers, raw, strict=False)]


def add_parser(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "call",
        help="call one JSON-RPC method and print the result as JSON",
        description="Call one of the service's methods through chainframe's client (arguments checked before "
        "sending, retries, key redacted) and print the result as JSON.",
        epilog="example: chainframe call eth_getBlockByNumber 1000 false --rpc http://127.0.0.1:8545\n"
        f"methods: {', '.join(_ARGS)}",
    )
    parser.add_argument("method", metavar="METHOD")
    parser.add_argument("args", nargs="*", metavar="ARG", help="positional arguments: numbers, hex, or JSON")
    add_endpoint_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    params = check(args.method, args.args)
    endpoint = endpoint_of(args.rpc, args.network, None)

    async def main() -> Any:
        async with AsyncClient(endpoint) as client:
            return await client.request(args.method, params)

    print(json.dumps(anyio.run(main), indent=2))
    return 0
