"""JSON-RPC 2.0 envelope pieces the gateway writes itself, and its upstream connection.

The upstream client is aiohttp's, already loaded for the gateway's server: httpx's client, used before, was 46% of the
gateway's CPU samples over the test suite (py-spy), and its import 0.13 s of every gateway's start-up."""

from __future__ import annotations

import json
from typing import Any

import aiohttp

from chainframe._errors import ChainframeError
from chainframe.rpc import split_answers

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
LIMIT_EXCEEDED = -32005  # Infura: result/timeout limits *and* rate limiting

# The spec's ten methods, plus the two every client needs to orient itself.
ALLOWED_METHODS = frozenset(
    {
        "debug_traceCall",
        "debug_traceBlockByNumber",
        "debug_traceTransaction",
        "trace_block",
        "eth_call",
        "eth_getLogs",
        "eth_getUncleByBlockNumberAndIndex",
        "eth_getUncleByBlockHashAndIndex",
        "eth_getTransactionByBlockNumberAndIndex",
        "eth_getTransactionByBlockHashAndIndex",
        "eth_getBlockByNumber",
        "eth_getTransactionReceipt",
        "eth_getBlockReceipts",
        "eth_getProof",
        "eth_getBalance",
        "eth_getTransactionCount",
        "eth_getCode",
        "eth_getStorageAt",
        "eth_blockNumber",
        "eth_chainId",
    }
)


def error_bytes(call_id: Any, code: int, message: str, data: Any = None) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return json.dumps({"jsonrpc": "2.0", "id": call_id, "error": error}).encode()


def rate_limited_bytes(call_id: Any, backoff: float) -> bytes:
    """Infura's legacy rate-limit answer (code -32005 with a flat ``data.backoff_seconds``)."""
    data = {"current_rps": 0.0, "allowed_rps": 0.0, "backoff_seconds": backoff}
    return error_bytes(call_id, LIMIT_EXCEEDED, "project ID request rate exceeded", data)


class UpstreamError(ChainframeError):
    """The node behind the gateway could not be reached or answered garbage."""


class UpstreamTimeout(UpstreamError):
    """The node behind the gateway gave no whole answer within the call's time limit."""


class Upstream:
    """One node behind the gateway, reached over pooled keep-alive HTTP."""

    def __init__(self, url: str, session: aiohttp.ClientSession) -> None:
        self.url = url
        self._session = session

    async def forward(self, call: dict[str, Any] | list[dict[str, Any]], *, time_limit: float = 300.0) -> bytes:
        """Send one call (or a batch) as is (ids are echoed) and return the node's answer bytes untouched."""
        try:
            async with self._session.post(
                self.url, data=json.dumps(call).encode(), headers={"content-type": "application/json"},
                timeout=aiohttp.ClientTimeout(total=time_limit),
            ) as response:  # fmt: skip
                return await response.read()
        except TimeoutError:  # asyncio's and aiohttp's timeouts are TimeoutError
            raise UpstreamTimeout(f"node gave no answer within {time_limit:g} s") from None
        except aiohttp.ClientError as exc:
            raise UpstreamError(f"node unreachable: {type(exc).__name__}") from exc

    async def forward_batch(self, calls: list[dict[str, Any]], *, time_limit: float = 300.0) -> list[bytes]:
        """Send calls as one batch; return each call's answer bytes, in the calls' order."""
        ids = [call.get("id") for call in calls]
        if None in ids or len(set(map(repr, ids))) != len(ids):
            # Answers are matched to calls by id: without distinct ids, send each alone.
            return [await self.forward(call, time_limit=time_limit) for call in calls]
        raw = await self.forward(calls, time_limit=time_limit)
        numbers = [i for i in ids if type(i) is int and i >= 0]
        if len(numbers) == len(ids):  # the client's usual ids: the answer cut, not parsed and written out again
            cut = split_answers(raw)
            spans = {} if cut is None else {at: (start, end) for at, start, end in cut}
            if len(spans) == len(ids) == len(cut or ()) and all(i in spans for i in numbers):
                return [raw[start:end] for start, end in (spans[i] for i in numbers)]
        try:
            answers = json.loads(raw)
            by_id = {repr(a.get("id")): a for a in answers}
            return [json.dumps(by_id[repr(i)], separators=(",", ":")).encode() for i in ids]
        except (ValueError, TypeError, AttributeError, KeyError):
            raise UpstreamError(f"node answered a batch of {len(calls)} with garbage") from None

    async def result(self, method: str, params: list[Any]) -> Any:
        raw = await self.forward({"jsonrpc": "2.0", "id": 0, "method": method, "params": params})
        answer = json.loads(raw)
        if "error" in answer:
            raise UpstreamError(f"node refused {method}: {answer['error']}")
        return answer["result"]
