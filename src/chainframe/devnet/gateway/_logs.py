"""eth_getLogs as Infura serves it: parameter, result and time limits, answered with Infura's codes and texts."""

from __future__ import annotations

import json
import time
from typing import Any

from chainframe.devnet.gateway._config import LogLimits
from chainframe.devnet.gateway._jsonrpc import INVALID_PARAMS, LIMIT_EXCEEDED, Upstream, UpstreamTimeout, error_bytes

_TAGS = ("latest", "pending", "safe", "finalized", "earliest")


def count_params(flt: dict[str, Any]) -> int:
    """Addresses plus topic values: what Infura's 5,000-parameter limit counts."""
    address = flt.get("address")
    n = len(address) if isinstance(address, list) else int(address is not None)
    for position in flt.get("topics") or ():
        n += len(position) if isinstance(position, list) else int(position is not None)
    return n


async def _block_number(upstream: Upstream, param: Any) -> int:
    if param is None:
        param = "latest"
    if isinstance(param, str) and param in _TAGS:
        if param == "earliest":
            return 0
        block = await upstream.result("eth_getBlockByNumber", [param, False])
        return int(block["number"], 16)
    return int(param, 16) if isinstance(param, str) else int(param)


def _hint(logs: list[dict[str, Any]], first: int, limit: int) -> tuple[int, int]:
    """The widest range from ``first`` whose logs fit the limit; just ``first`` when that block alone does not."""
    # Logs come in block order, so every block before the one holding log number limit+1 fits entirely.
    overflow_block = int(logs[limit]["blockNumber"], 16)
    return first, max(first, overflow_block - 1)


async def get_logs(call_id: Any, params: Any, upstream: Upstream, limits: LogLimits) -> tuple[bytes, str | None]:
    """Answer one eth_getLogs call; the second value names the limit that refused it, if one did."""
    if not isinstance(params, list) or len(params) != 1 or not isinstance(params[0], dict):
        return error_bytes(call_id, INVALID_PARAMS, "invalid params: expected one filter object"), "invalid"
    flt: dict[str, Any] = params[0]
    if "blockHash" in flt and ("fromBlock" in flt or "toBlock" in flt):
        message = "invalid params: cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other"
        return error_bytes(call_id, INVALID_PARAMS, message), "invalid"
    n = count_params(flt)
    if n > limits.max_params:
        message = f"too many parameters in filter: {n} (the limit is {limits.max_params})"
        return error_bytes(call_id, INVALID_PARAMS, message), "params"

    first = 0
    if "blockHash" not in flt:
        try:
            first = await _block_number(upstream, flt.get("fromBlock"))
            last = await _block_number(upstream, flt.get("toBlock"))
        except (ValueError, TypeError):
            return error_bytes(call_id, INVALID_PARAMS, "invalid params: bad block number"), "invalid"
        span = last - first + 1
        if limits.max_range is not None and span > limits.max_range:
            message = f"range {span} exceeds limit of {limits.max_range}"
            return error_bytes(call_id, INVALID_PARAMS, message), "range"
        if limits.timeout_blocks is not None and span > limits.timeout_blocks:
            return error_bytes(call_id, LIMIT_EXCEEDED, "query timeout exceeded"), "timeout"

    started = time.monotonic()
    try:
        raw = await upstream.forward(
            {"jsonrpc": "2.0", "id": call_id, "method": "eth_getLogs", "params": params},
            time_limit=limits.timeout,
        )
    except UpstreamTimeout:
        return error_bytes(call_id, LIMIT_EXCEEDED, "query timeout exceeded"), "timeout"
    if time.monotonic() - started > limits.timeout:
        return error_bytes(call_id, LIMIT_EXCEEDED, "query timeout exceeded"), "timeout"

    if raw.count(b'"logIndex"') <= limits.max_results:  # every log has the key once; values are hex: no parse
        return raw, None
    answer = json.loads(raw)
    logs = answer.get("result")
    if not isinstance(logs, list) or len(logs) <= limits.max_results:
        return raw, None
    message = f"query returned more than {limits.max_results} results"
    data = None
    if limits.hint:
        lo, hi = _hint(logs, first, limits.max_results)
        lo_hex, hi_hex = f"0x{lo:X}", f"0x{hi:X}"
        message += f". Try with this block range [{lo_hex}, {hi_hex}]."
        data = {"from": lo_hex, "limit": limits.max_results, "to": hi_hex}
    return error_bytes(call_id, LIMIT_EXCEEDED, message, data), "results"
