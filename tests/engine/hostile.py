"""A hostile JSON-RPC proxy for tests: a real HTTP server in front of a node that answers wrongly but plausibly, the
way broken providers and middleboxes do (null results, answers for other blocks, missing fields, repeated items).

``Hostile(node_url, case, times=N)`` rewrites the first N answers that the case applies to, then forwards faithfully;
``times=None`` rewrites every one. Cases are pure functions of the request and the answer (no randomness), so a run
is reproducible.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
from collections.abc import Callable
from typing import Any

import httpx
from aiohttp import web

from chainframe._tls import verified_context
from tests.threaded_server import ServerLoop, stop_loop

Call = dict[str, Any]
Rewrite = Callable[[Call, Any], Any]  # (request item, its result) -> the result to send


def _logs(rewrite: Callable[[list[Any], Call], list[Any] | None]) -> tuple[str, Rewrite]:
    return "eth_getLogs", lambda call, result: rewrite(result, call)


def _outside(logs: list[Any], call: Call) -> list[Any]:
    if not logs:
        return logs
    stray = copy.deepcopy(logs[0])
    stray["blockNumber"] = hex(int(call["params"][0]["toBlock"], 16) + 1)
    return [*logs, stray]


def _drop_key(key: str) -> Callable[[Any], Any]:
    def rewrite(result: Any) -> Any:
        items = result if isinstance(result, list) else [result]
        for item in items:
            if isinstance(item, dict):
                item.pop(key, None)
        return result

    return rewrite


def _next_block(call: Call, result: Any) -> Any:
    return ("next", int(call["params"][0], 16) + 1)  # resolved by the proxy: the next block's answer


CASES: dict[str, tuple[str, Rewrite]] = {
    "logs null": _logs(lambda logs, call: None),
    "logs outside the range": _logs(_outside),
    "a log twice": _logs(lambda logs, call: [*logs, logs[-1]] if logs else logs),
    "logs without logIndex": ("eth_getLogs", lambda call, result: _drop_key("logIndex")(result)),
    "logs without blockNumber": ("eth_getLogs", lambda call, result: _drop_key("blockNumber")(result)),
    "removed logs": _logs(lambda logs, call: [{**log, "removed": True} for log in logs]),
    "block null": ("eth_getBlockByNumber", lambda call, result: None),
    "block without hash": ("eth_getBlockByNumber", lambda call, result: _drop_key("hash")(result)),
    "block N+1 for N": ("eth_getBlockByNumber", _next_block),
    "receipts null": ("eth_getBlockReceipts", lambda call, result: None),
    "receipts without status": ("eth_getBlockReceipts", lambda call, result: _drop_key("status")(result)),
    "receipts of another block": ("eth_getBlockReceipts", _next_block),
}


def _flip(text: str) -> str:
    """A hex string with its last digit changed: same length, same shape, another value."""
    return text[:-1] + ("1" if text[-1] != "1" else "2")


def _change_log_data(logs: list[Any], call: Call) -> list[Any]:
    for log in logs:
        if len(log.get("data", "0x")) > 2:
            log["data"] = _flip(log["data"])
            break
    return logs


def _change_first(key: str) -> Rewrite:
    def rewrite(call: Call, result: Any) -> Any:
        items = result.get("transactions", []) if isinstance(result, dict) else result or []
        for item in items:
            if isinstance(item, dict) and key in item:
                item[key] = hex(int(item[key], 16) + 1)
                break
        return result

    return rewrite


def _change_proof_node(call: Call, result: Any) -> Any:
    proof = result["accountProof"]
    proof[-1] = _flip(proof[-1])
    return result


TAMPER: dict[str, tuple[str, Rewrite]] = {
    "a log's data changed": _logs(_change_log_data),
    "a log dropped": _logs(lambda logs, call: logs[:-1]),
    "a receipt's gas used changed": ("eth_getBlockReceipts", _change_first("gasUsed")),
    "a transaction's value changed": ("eth_getBlockByNumber", _change_first("value")),
    "a proof node changed": ("eth_getProof", _change_proof_node),
}
"""Wrong answers that are consistent in themselves (indexes in order, every key present): only a proof against the
block headers (``verify=True``) can tell them from the truth."""


LAG = 10
"""Blocks the lagging node is behind the head it reports."""


class Lagging:
    """A node behind a load balancer that reports the head but lacks the last LAG blocks: their logs come back as
    nothing, their headers and receipts as null. Rewrites every answer, not just the first."""

    def __init__(self, head: int) -> None:
        self.missing_from = head - LAG + 1

    def __call__(self, call: Call, result: Any) -> Any:
        method, params = call.get("method"), call.get("params") or []
        if method == "eth_getLogs":
            return [log for log in result or [] if int(log["blockNumber"], 16) < self.missing_from]
        if method in ("eth_getBlockByNumber", "eth_getBlockReceipts") and str(params[0]).startswith("0x"):
            return None if int(params[0], 16) >= self.missing_from else result
        return result


def _about(call: Call, low: int, high: int) -> bool:
    """Whether a call asks about blocks within ``low..high`` only (a block number, or a log filter's range)."""
    first = call["params"][-1 if call.get("method") == "eth_getProof" else 0]
    if isinstance(first, dict):
        return low <= int(first["fromBlock"], 16) and int(first["toBlock"], 16) <= high
    return low <= int(first, 16) <= high


class Hostile:
    """Start the proxy on 127.0.0.1 (a thread of its own); ``url`` takes JSON-RPC; :meth:`stop` (or ``with``)."""

    def __init__(
        self, node_url: str, case: str | None = None, *, times: int | None = 1, status: int = 200,
        lagging: Lagging | None = None, blocks: tuple[int, int] | None = None,
    ) -> None:  # fmt: skip
        """``case`` None forwards faithfully; ``status`` other than 200 answers every request with that status;
        ``lagging`` rewrites every answer as a node that lacks the newest blocks would; ``blocks``: only answers
        about blocks in this range are rewritten (a run's own start, its preflight at the head, is left alone)."""
        self.method, self.rewrite = {**CASES, **TAMPER}[case] if case else ("", lambda call, result: result)
        self.lagging = lagging
        self.blocks = blocks
        self.node_url, self.left, self.status = node_url, times, status
        self.seen: list[str] = []
        """What reached the proxy: each request's path and query, and its Authorization header."""
        self.rewritten = 0
        self._lock = threading.Lock()
        self._loop = ServerLoop()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        self._started.wait(10)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_post("/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)  # the server side logs nothing (it is not us)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._http = httpx.AsyncClient(timeout=60, verify=verified_context())
        self._started.set()
        self._loop.run_forever()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def _take(self) -> bool:
        with self._lock:
            if self.left is not None and self.left <= 0:
                return False
            if self.left is not None:
                self.left -= 1
            self.rewritten += 1
            return True

    async def _forward(self, payload: Any) -> Any:
        answer = await self._http.post(self.node_url, json=payload)
        return answer.json()

    def _may_rewrite(self, call: Call) -> bool:
        """Whether the case may rewrite the answer to ``call``, as far as the request tells."""
        if self.lagging is not None:
            return True
        if call.get("method") != self.method:
            return False
        by_tag = self.method not in ("eth_getLogs", "eth_getProof", "eth_blockNumber")
        if by_tag and not str(call["params"][0]).startswith("0x"):
            return False  # blocks asked by tag (the run's start: head, finalized) are left alone
        if self.rewrite is TAMPER["a transaction's value changed"][1] and call["params"][1] is not True:
            return False  # headers asked to prove the rows by are not the rows
        if self.left is not None and self.left <= 0:
            return False
        return self.blocks is None or _about(call, *self.blocks)

    async def _handle(self, request: web.Request) -> web.Response:
        self.seen.append(f"{request.path_qs} {request.headers.get('Authorization', '')}")
        if self.status != 200:
            return web.Response(status=self.status, text="upstream failed")
        body = await request.read()
        payload = json.loads(body)
        calls = payload if isinstance(payload, list) else [payload]
        if not any(self._may_rewrite(call) for call in calls):
            # The node's answer as it came: parsing and writing it again cost the tests' process most of the
            # proxy's CPU (a faithful proxy, or a case whose method is not asked or whose rewrites are used up).
            forwarded = await self._http.post(self.node_url, content=body, headers={"Content-Type": "application/json"})
            return web.Response(body=forwarded.content, content_type="application/json")
        answer = await self._forward(payload)
        answers = answer if isinstance(answer, list) else [answer]
        by_id = {a.get("id"): a for a in answers}
        for call in calls:
            item = by_id.get(call.get("id"))
            if self.lagging is not None and item is not None and "result" in item:
                item["result"] = self.lagging(call, item["result"])
                continue
            if item is None or "result" not in item or not self._may_rewrite(call):
                continue
            result = self.rewrite(call, copy.deepcopy(item["result"]))
            if isinstance(result, tuple) and result[0] == "next":
                other = await self._forward({**call, "params": [hex(result[1]), *call["params"][1:]]})
                result = other.get("result")
            if result == item["result"] or not self._take():
                continue  # an answer the case leaves as it is (a block with no transaction, say) is not counted
            item["result"] = result
        return web.Response(text=json.dumps(answer), content_type="application/json")

    def stop(self) -> None:
        async def close() -> None:
            await self._runner.cleanup()  # handlers first: one may still be forwarding to the node
            await self._http.aclose()

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
        stop_loop(self._loop, self._thread)

    def __enter__(self) -> Hostile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
