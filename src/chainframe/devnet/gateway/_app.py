"""The Infura-compatible gateway: keys in the path, networks by Host, the spec's methods and limits, and faults.

One answer path serves both transports: :meth:`Gateway.answer` turns a request text into an :class:`Outcome`, which
the HTTP handler writes as a response and the WebSocket handler as a message (or a closed connection).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import WSMsgType, web

from chainframe.devnet.gateway._config import FaultRule, GatewayConfig, GatewaySettings
from chainframe.devnet.gateway._credits import CreditBucket, cost
from chainframe.devnet.gateway._faults import FaultInjector
from chainframe.devnet.gateway._jsonrpc import (
    ALLOWED_METHODS,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    Upstream,
    UpstreamError,
    error_bytes,
    rate_limited_bytes,
)
from chainframe.devnet.gateway._logs import get_logs

_JSON = "application/json"
_PAYMENT_REQUIRED = {
    "code": 402,
    "event": -33000,
    "message": "Payment Required",
    "details": "You have reached your daily credit limit. To continue using this service, upgrade your plan.",
}
_WS_MAX_MESSAGE = 64 * 2**20
_WS_IN_FLIGHT = 256  # per connection; a client that sends more waits for answers


@dataclass
class Outcome:
    """What to send back. ``status`` None with ``drop`` set means: close the connection, send nothing."""

    status: int = 200
    body: bytes = b""
    content_type: str = _JSON
    headers: dict[str, str] = field(default_factory=dict)
    drop: bool = False
    truncate: bool = False


@dataclass
class Stats:
    http_requests: int = 0
    ws_connections: int = 0
    ws_messages: int = 0
    batches: int = 0
    auth_failures: int = 0
    calls: Counter[str] = field(default_factory=Counter)
    limit_errors: Counter[str] = field(default_factory=Counter)
    rate_limited: int = 0
    credits: int = 0
    """Infura's credits for the requests served (refused ones are not billed), with or without a budget."""

    def to_json(self, faults: Counter[str]) -> dict[str, Any]:
        return {
            "http_requests": self.http_requests,
            "ws_connections": self.ws_connections,
            "ws_messages": self.ws_messages,
            "batches": self.batches,
            "auth_failures": self.auth_failures,
            "calls": dict(self.calls),
            "limit_errors": dict(self.limit_errors),
            "rate_limited": self.rate_limited,
            "credits": self.credits,
            "faults": dict(faults),
        }


def _unauthorized(message: str) -> web.Response:
    return web.Response(
        status=401,
        text=message + "\n",
        content_type="text/plain",
        headers={"www-authenticate": f'Basic realm="Auth failure, {message}"'},
    )


class Gateway:
    def __init__(self, config: GatewayConfig) -> None:
        self.config = config
        self._keys = [k.encode() for k in config.keys]
        self.stats = Stats()
        self._session: aiohttp.ClientSession | None = None
        self.upstreams: dict[str, Upstream] = {}
        self.apply(config.settings)

    def apply(self, settings: GatewaySettings) -> None:
        self.settings = settings
        self.faults = FaultInjector(settings.faults, settings.seed)
        self.credits = CreditBucket(settings.credits_per_second) if settings.credits_per_second else None

    # --- lifecycle -------------------------------------------------------------------------------------------

    async def _startup(self, app: web.Application) -> None:
        # Few, reused connections: hundreds of concurrent connects overflow the node's accept queue (1 s SYN retries).
        self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=32))
        self.upstreams = {name: Upstream(url, self._session) for name, url in self.config.networks.items()}

    async def _cleanup(self, app: web.Application) -> None:
        if self._session is not None:
            await self._session.close()

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 2**20)
        app.on_startup.append(self._startup)
        app.on_cleanup.append(self._cleanup)
        app.add_routes(
            [
                web.post("/v3/{key}", self._http),
                web.post("/v3/", self._http),
                web.post("/v3", self._http),
                web.get("/ws/v3/{key}", self._ws),
                web.get("/ws/v3/", self._ws),
                web.get("/ws/v3", self._ws),
                web.get("/_gateway/settings", self._get_settings),
                web.put("/_gateway/settings", self._put_settings),
                web.get("/_gateway/stats", self._get_stats),
                web.post("/_gateway/stats/reset", self._reset_stats),
            ]
        )
        return app

    # --- access ----------------------------------------------------------------------------------------------

    def _refuse(self, request: web.Request) -> web.Response | None:
        key = request.match_info.get("key", "")
        if not key:
            self.stats.auth_failures += 1
            return _unauthorized("project id required in the url")
        if not any(hmac.compare_digest(key.encode(), k) for k in self._keys):
            self.stats.auth_failures += 1
            return _unauthorized("invalid project id")
        return None

    def _network(self, request: web.Request) -> str:
        label = request.host.split(":", 1)[0].split(".", 1)[0]
        return label if label in self.upstreams else self.config.default_network

    def _admin(self, request: web.Request) -> None:
        token = request.headers.get("X-Admin-Token", "")
        if not hmac.compare_digest(token.encode(), self.config.admin_token.encode()):
            raise web.HTTPForbidden(text="admin token required (header X-Admin-Token)\n")

    # --- the answer path -------------------------------------------------------------------------------------

    async def answer(self, body: bytes, network: str, transport: str) -> Outcome:
        try:
            request = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return Outcome(body=error_bytes(None, PARSE_ERROR, "parse error"))
        is_batch = isinstance(request, list)
        calls: list[Any] = request if is_batch else [request]
        if not calls:
            return Outcome(body=error_bytes(None, INVALID_REQUEST, "empty batch"))
        methods = [c["method"] for c in calls if isinstance(c, dict) and isinstance(c.get("method"), str)]
        self.stats.batches += is_batch
        self.stats.calls.update(methods)

        if self.settings.latency:
            await asyncio.sleep(self.settings.latency)
        charge = cost(methods)
        if self.credits is not None:
            wait = self.credits.take(charge)
            if wait:
                self.stats.rate_limited += 1
                return self._rate_limited(calls, is_batch, math.ceil(wait * 1000) / 1000)
        self.stats.credits += charge  # as Infura bills: every request served, by its methods' weights
        routed = transport == "http" and next(
            (m for m in self.settings.missing if m.http_status is not None and m.method in methods), None
        )
        if routed:  # a gateway routing by method: the whole request refused, in HTTP's terms
            return Outcome(status=routed.http_status or 404, body=routed.body().encode(), content_type="text/plain")
        fault = self.faults.request_fault(methods, transport)
        slow = self.faults.first("slow", methods, transport)
        if slow is not None:
            await asyncio.sleep(slow.delay)
        if fault is not None and fault.kind != "truncate":
            return self._fault(fault, calls, is_batch)

        upstream = self.upstreams[network]
        if self.settings.no_state_overrides:
            calls = [_without_override(call) for call in calls]
        items: list[bytes] = [self._refusal(call, transport) for call in calls]
        pending = [i for i, item in enumerate(items) if not item]
        # Logs go one by one (each is held to the limits); the other calls go to the node as one batch, as a
        # provider's backend would: forwarding each alone made this gateway, not the tools, the bottleneck.
        logs = [i for i in pending if calls[i]["method"] == "eth_getLogs"]
        rest = [i for i in pending if calls[i]["method"] != "eth_getLogs"]
        async with asyncio.TaskGroup() as tg:
            for i in logs:
                tg.create_task(self._logs_item(items, i, calls[i], upstream))
            if rest:
                tg.create_task(self._forward_items(items, rest, calls, upstream))
        if self.settings.omit:
            for i in pending:
                items[i] = self._omitted(calls[i]["method"], items[i])
        if is_batch:
            if self.faults.first("batch_reorder", methods, transport) is not None:
                self.faults.shuffle(items)
            if len(items) > 1 and self.faults.first("batch_drop_item", methods, transport) is not None:
                del items[self.faults.pick(len(items))]
            out = b"[" + b",".join(items) + b"]"
        else:
            out = items[0]
        return Outcome(body=out, truncate=fault is not None)

    def _refusal(self, call: Any, transport: str) -> bytes:
        """The gateway's own answer to a call it does not forward (invalid, unknown or missing method, a tag it does
        not know, rate fault); else b""."""
        if not isinstance(call, dict) or not isinstance(call.get("method"), str) or call.get("jsonrpc") != "2.0":
            return error_bytes(
                call.get("id") if isinstance(call, dict) else None,
                INVALID_REQUEST,
                "invalid request: expected a JSON-RPC 2.0 object with a method",
            )
        call_id, method = call.get("id"), call["method"]
        if method not in ALLOWED_METHODS:
            return error_bytes(call_id, METHOD_NOT_FOUND, f"the method {method} does not exist/is not available")
        for missing in self.settings.missing:
            if missing.method == method:
                return error_bytes(call_id, *missing.error())
        pruned = self.settings.pruned
        block = pruned.refuses(method, call.get("params")) if pruned is not None else None
        if pruned is not None and block is not None:
            return error_bytes(call_id, *pruned.error(block))
        params = call.get("params")
        tag = params[0] if method == "eth_getBlockByNumber" and isinstance(params, list) and params else None
        if tag is not None and tag in self.settings.unknown_tags:
            return json.dumps({"jsonrpc": "2.0", "id": call_id, "result": None}).encode()
        rate = self.faults.first("rate_limit", [method], transport)
        if rate is not None:
            return rate_limited_bytes(call_id, rate.backoff)
        return b""

    def _omitted(self, method: str, answer: bytes) -> bytes:
        """``answer`` without the keys the settings leave out of ``method``'s answers."""
        rules = [rule for rule in self.settings.omit if method in rule.methods]
        if not rules:
            return answer
        try:
            envelope = json.loads(answer)
        except ValueError:
            return answer
        everywhere = {k for rule in rules if rule.nested for k in rule.keys}
        top = everywhere | {k for rule in rules for k in rule.keys}

        def strip(value: Any, keys: set[str]) -> Any:
            if isinstance(value, dict):
                return {k: strip(v, everywhere) for k, v in value.items() if k not in keys}
            if isinstance(value, list):
                return [strip(v, keys) for v in value]
            return value

        if isinstance(envelope, dict) and "result" in envelope:
            envelope["result"] = strip(envelope["result"], top)
        return json.dumps(envelope, separators=(",", ":")).encode()

    async def _logs_item(self, items: list[bytes], i: int, call: dict[str, Any], upstream: Upstream) -> None:
        try:
            items[i], refused_by = await get_logs(call.get("id"), call.get("params"), upstream, self.settings.limits)
        except UpstreamError:
            items[i] = error_bytes(call.get("id"), INTERNAL_ERROR, "upstream node unavailable")
            return
        if refused_by is not None:
            self.stats.limit_errors[refused_by] += 1

    async def _forward_items(self, items: list[bytes], which: list[int], calls: list[Any], upstream: Upstream) -> None:
        try:
            if len(which) == 1:
                items[which[0]] = await upstream.forward(calls[which[0]])
            else:
                for i, answer in zip(which, await upstream.forward_batch([calls[i] for i in which]), strict=True):
                    items[i] = answer
        except UpstreamError:
            for i in which:
                items[i] = error_bytes(calls[i].get("id"), INTERNAL_ERROR, "upstream node unavailable")

    def _rate_limited(self, calls: list[Any], is_batch: bool, backoff: float) -> Outcome:
        ids = [c.get("id") if isinstance(c, dict) else None for c in calls]
        bodies = [rate_limited_bytes(i, backoff) for i in ids]
        body = b"[" + b",".join(bodies) + b"]" if is_batch else bodies[0]
        return Outcome(status=429, body=body, headers={"Retry-After": str(max(1, math.ceil(backoff)))})

    def _fault(self, fault: FaultRule, calls: list[Any], is_batch: bool) -> Outcome:
        if fault.kind == "drop":
            return Outcome(drop=True)
        if fault.kind == "http_429":
            return self._rate_limited(calls, is_batch, fault.backoff)
        if fault.kind == "http_402":
            return Outcome(status=402, body=json.dumps(_PAYMENT_REQUIRED).encode())
        return Outcome(status=fault.status, body=b"upstream error\n", content_type="text/plain")

    # --- HTTP ------------------------------------------------------------------------------------------------

    async def _http(self, request: web.Request) -> web.StreamResponse:
        refused = self._refuse(request)
        if refused is not None:
            return refused
        self.stats.http_requests += 1
        outcome = await self.answer(await request.read(), self._network(request), "http")
        if outcome.drop:
            assert request.transport is not None
            request.transport.close()
            return web.Response(status=500)  # never reaches the client: the connection is gone
        if outcome.truncate:
            response = web.StreamResponse(status=outcome.status, headers={"Content-Type": outcome.content_type})
            response.content_length = len(outcome.body)
            await response.prepare(request)
            await response.write(outcome.body[: len(outcome.body) // 2])
            assert request.transport is not None
            request.transport.close()
            return response
        return web.Response(
            status=outcome.status,
            body=outcome.body,
            content_type=outcome.content_type,
            headers=outcome.headers,
        )

    # --- WebSocket -------------------------------------------------------------------------------------------

    async def _ws(self, request: web.Request) -> web.StreamResponse:
        refused = self._refuse(request)
        if refused is not None:
            return refused
        network = self._network(request)
        ws = web.WebSocketResponse(max_msg_size=_WS_MAX_MESSAGE)
        await ws.prepare(request)
        self.stats.ws_connections += 1
        in_flight = asyncio.Semaphore(_WS_IN_FLIGHT)
        async with asyncio.TaskGroup() as tg:
            async for message in ws:
                if message.type not in (WSMsgType.TEXT, WSMsgType.BINARY):
                    continue
                data = message.data if isinstance(message.data, bytes) else message.data.encode()
                await in_flight.acquire()
                tg.create_task(self._ws_message(request, ws, data, network, in_flight))
        return ws

    async def _ws_message(
        self,
        request: web.Request,
        ws: web.WebSocketResponse,
        data: bytes,
        network: str,
        done: asyncio.Semaphore,
    ) -> None:
        try:
            self.stats.ws_messages += 1
            outcome = await self.answer(data, network, "ws")
            if ws.closed:
                return
            if outcome.drop or outcome.truncate:
                if outcome.truncate:
                    await ws.send_str(outcome.body[: len(outcome.body) // 2].decode(errors="replace"))
                assert request.transport is not None
                request.transport.close()  # no close frame: the client sees the connection lost
            elif outcome.content_type != _JSON:
                await ws.close(code=1011, message=b"upstream error")
            else:
                await ws.send_str(outcome.body.decode())
        except ConnectionError:
            pass  # the client went away; nothing to answer
        finally:
            done.release()

    # --- admin -----------------------------------------------------------------------------------------------

    async def _get_settings(self, request: web.Request) -> web.Response:
        self._admin(request)
        return web.json_response(self.settings.to_json())

    async def _put_settings(self, request: web.Request) -> web.Response:
        self._admin(request)
        try:
            settings = GatewaySettings.from_json(await request.json())
        except (ValueError, TypeError) as exc:
            return web.json_response({"error": str(exc)}, status=400)
        self.apply(settings)
        return web.json_response(settings.to_json())

    async def _get_stats(self, request: web.Request) -> web.Response:
        self._admin(request)
        return web.json_response(self.stats.to_json(self.faults.injected))

    async def _reset_stats(self, request: web.Request) -> web.Response:
        self._admin(request)
        self.stats = Stats()
        self.faults.injected.clear()
        return web.json_response({"ok": True})


def _without_override(call: Any) -> Any:
    """An eth_call without its state override (its third parameter), as a node that ignores it is asked."""
    if isinstance(call, dict) and call.get("method") == "eth_call" and isinstance(call.get("params"), list):
        return {**call, "params": call["params"][:2]}
    return call
