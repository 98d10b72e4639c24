"""The async JSON-RPC client: one request path for single calls and batches, over HTTP or WebSocket.

A call goes: arguments checked (typed wrappers, before anything is sent) -> pacing slot -> transport -> HTTP status
and JSON-RPC error classified -> retried by the policy if transient. Errors carry the method, block range and the
endpoint with its key redacted. Batches fail per item: a missing or failed item is retried alone, and an item that
still fails comes back as its exception in the result list, so one bad call never loses the others.

With several endpoints, any request whose endpoint cannot be reached or answers 5xx goes on to the next one, and the
failed one rests for the cool-down (the others are tried first meanwhile). Before an endpoint's first answer is used
its eth_chainId is asked, once in the client's life; one serving another chain than the first that answered is set
aside for good. What was set aside, and why, is in :attr:`ClientStats.set_aside`.

With ``spread`` endpoints the calls are shared: each request goes to whichever endpoint in service (the first, or one
of the spread ones) has budget by its own pacing (:mod:`chainframe.rpc._pool`); one that fails for a request is set
aside as above and the request goes to another. What each endpoint was sent is in :attr:`ClientStats.endpoints`.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import time
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

import anyio

from chainframe._errors import InputError, first_error
from chainframe._redact import guard_library_logs
from chainframe.rpc._endpoint import Endpoint
from chainframe.rpc._errors import (
    KeyRefused,
    MalformedResponse,
    MethodNotFound,
    QuotaExhausted,
    RateLimited,
    RPCError,
    ServiceUnavailable,
    StateUnavailable,
    TransientError,
    TransportError,
    WrongURL,
    classify,
)
from chainframe.rpc._pacing import Pacer, Pacing, _Bucket
from chainframe.rpc._pool import EndpointCounts, Pool, Provider
from chainframe.rpc._retry import Attempts, RetryPolicy
from chainframe.rpc._transports import HTTPTransport, Timeout, Transport
from chainframe.rpc._transports.options import MAX_ANSWER_BYTES
from chainframe.rpc._typed import TypedMethods

if TYPE_CHECKING:
    from tenacity import RetryCallState

try:
    from chainframe.rpc import _envelopes
except ImportError:  # not built: counted in Python
    _envelopes = None

_log = logging.getLogger("chainframe.rpc")
TransportKind = Literal["http", "ws"]
Call = tuple[str, Sequence[Any]]
ANSWER_BYTES = 1_000_000
"""What an answer of many rows is aimed at: a batch in :meth:`AsyncClient.batch_bytes`, and an eth_getLogs call where
calls are cheap (:attr:`AsyncClient.cheap_calls`). A node's work per byte grows with the answer: anvil spent 1.67 CPU-s
on the benchmark chain's 2,000 blocks of eth_getBlockReceipts in batches of 5 or 10 blocks (0.5-1.1 MB), 1.8 in 20,
2.0 in 50 and 2.2 in 100 (two connections, three runs each); 0.44 CPU-s on its 175 MB of eth_getLogs in 0.7 MB
answers, 0.49 in 1.4 MB, 0.84 in 4.2 MB, and 0.74 in 4.2 MB batches of 6 to 48 calls (the answer's size counts, not
its calls; 2026-11-24). A local node shares the machine's cores. Batching does not change what is called (credits
are per call), only how many requests carry the calls; and a provider's limits on answer size and time are met more
easily. Answers of small calls (headers) keep ``batch_size``."""
NEAR_ROUND_TRIP = 0.005
"""Seconds: an endpoint that has answered a request within this is near (this machine, its network), not a provider
across the internet (tens of milliseconds), so one more round trip costs next to nothing."""
PROBE_CALLS = 5
"""Calls in the first batch of a method whose answers have not been seen (at most ``batch_size``), sent alone when more
than one batch waits."""
_BLOCK_FIRST = frozenset(
    {
        "eth_getBlockByNumber",
        "eth_getBlockReceipts",
        "eth_getTransactionByBlockNumberAndIndex",
        "eth_getUncleByBlockNumberAndIndex",
    }
)


_BLOCK_AT = {
    "eth_getProof": 2, "eth_getStorageAt": 2, "debug_traceCall": 1, "eth_call": 1, "eth_getBalance": 1,
    "eth_getTransactionCount": 1, "eth_getCode": 1,
}  # fmt: skip
"""The position of the block parameter of the methods that read state at a block."""


def blocks_of(method: str, params: Sequence[Any]) -> tuple[int, int] | None:
    """The block range a call concerns, when its parameters say (for error messages and reports)."""

    def number(value: Any) -> int | None:
        return int(value, 16) if isinstance(value, str) and value.startswith("0x") and len(value) <= 18 else None

    if method == "eth_getLogs" and params and isinstance(params[0], dict):
        lo, hi = number(params[0].get("fromBlock")), number(params[0].get("toBlock"))
        return (lo, hi) if lo is not None and hi is not None else None
    position = 0 if method in _BLOCK_FIRST else _BLOCK_AT.get(method)
    if position is not None and len(params) > position:
        n = number(params[position])
        return (n, n) if n is not None else None
    return None


def _proxy_in_environment() -> bool:
    """A proxy named as httpx reads it (``HTTPS_PROXY``, ``ALL_PROXY``...): then httpx carries the requests."""
    names = ("http_proxy", "https_proxy", "all_proxy")
    return any(value and name.lower() in names for name, value in os.environ.items())


@dataclass
class ClientStats:
    """Counters for run reports."""

    requests: int = 0
    """HTTP requests or WebSocket messages sent (a batch is one)."""
    calls: int = 0
    """JSON-RPC calls sent, retries included."""
    retries: int = 0
    rate_limited: int = 0
    failovers: int = 0
    """Requests an endpoint other than the first answered while the first was set aside (it failed, rests or serves
    another chain), or after another endpoint failed them. Requests shared out by ``spread`` are not failovers."""
    bytes_received: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    set_aside: dict[str, str] = field(default_factory=dict)
    """Endpoint (its key redacted) -> why it was set aside: unreachable or 5xx (for the cool-down, the latest
    reason), or another chain (for good)."""
    endpoints: dict[str, EndpointCounts] = field(default_factory=dict)
    """Endpoint (its key redacted) -> what it was sent: requests, calls, credits by its own price table, errors."""


@dataclass(eq=False)  # each route is itself: compared by identity
class _Route:
    endpoint: Endpoint
    transport: Transport
    pacer: Pacer
    """Its own with ``spread``; the client's otherwise (fallbacks share the first one's budget)."""
    counts: EndpointCounts
    spread: bool = False
    """One of the endpoints the calls are shared over (the first is, when the client has spread ones)."""
    chain_id: int | None = None
    """Its eth_chainId, asked before its first answer is used (with several endpoints)."""
    resting_until: float = 0.0
    """Monotonic time until which the others are tried first."""
    failures: int = 0
    failed_with: RPCError | None = None
    checking: anyio.Lock = field(default_factory=anyio.Lock)
    """Held while its chain id is asked, so concurrent requests ask once."""


FOR_GOOD = (StateUnavailable, MethodNotFound, KeyRefused, QuotaExhausted)
"""Errors that asking again cannot change: a batch holding one raises it at once (:meth:`AsyncClient.batch_bytes`)."""


def plainly_complete(raw: bytes, calls: int) -> bool:
    """A batch answer holding one envelope per call and no error object anywhere, so it can be handed on unparsed.
    Counted in C without the GIL where it is built (and ``CHAINFRAME_NATIVE`` is not 0): two scans of the answer
    holding the GIL on the event loop's thread took a quarter of a local receipts run's CPU."""
    if raw[:1] != b"[":
        return False
    if _envelopes is not None and os.environ.get("CHAINFRAME_NATIVE", "1") != "0":
        members, error = _envelopes.scan(raw)
        return not error and members == calls
    return b'"error"' not in raw and raw.count(b'"jsonrpc"') == calls


def results_only(raw: bytes, ids: Sequence[int]) -> bool:
    """A batch answer that :func:`plainly_complete` turned down for an ``"error"`` inside some result (a reverted
    frame of a trace_block answer has one) that is still one success envelope per call: valid JSON cut into the
    calls' ids, each envelope's head naming its ``"result"`` before any ``"error"`` (the check a single answer gets,
    :meth:`AsyncClient._single_answer`). Handed on unparsed rather than asked again item by item."""
    from chainframe.rpc._split import split_answers  # deferred: only a batch answer holding an error is split

    spans = split_answers(raw)
    if spans is None or sorted(i for i, _, _ in spans) != sorted(ids):
        return False
    for _, start, end in spans:
        head = raw[start : min(end, start + 96)]
        result = head.find(b'"result"')
        if result == -1 or b'"error"' in head[:result]:
            return False
    return True


class AsyncClient(TypedMethods):
    """JSON-RPC over HTTP or WebSocket with retries, pacing and failover. Use ``async with``.

    - ``endpoint``: an :class:`Endpoint` or a URL (``https://mainnet.infura.io/v3/KEY``, ``http://127.0.0.1:8545``).
    - ``transport``: ``"http"`` (pooled keep-alive) or ``"ws"`` (one connection, many requests in flight).
    - ``fallbacks``: endpoints tried in turn when the one before cannot be reached or answers 5xx (any method);
      one that failed rests for ``failover_cooldown`` seconds. Each must serve the chain the first to answer serves.
    - ``spread``: endpoints that share the calls with the first one, each paced by its own budget (a
      :class:`~chainframe.rpc._pool.Provider`'s pacing, or one the size of ``pacing``); each request goes to one that
      has budget. They are set aside as fallbacks are.
    - ``batch_size``: calls per JSON-RPC batch in :meth:`batch`, and at most in :meth:`batch_bytes` (which cuts
      batches of large answers smaller: :data:`ANSWER_BYTES`).
    """

    def __init__(
        self,
        endpoint: Endpoint | str,
        *,
        transport: TransportKind | Transport = "http",
        timeout: Timeout = Timeout(),
        retry: RetryPolicy = RetryPolicy(),
        pacing: Pacing = Pacing(),
        batch_size: int = 50,
        fallbacks: Sequence[Endpoint | str] = (),
        spread: Sequence[Provider | Endpoint | str] = (),
        failover_cooldown: float = 30.0,
        http2: bool = False,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
    ) -> None:
        for name, value, kind in (
            ("timeout", timeout, Timeout),
            ("retry", retry, RetryPolicy),
            ("pacing", pacing, Pacing),
        ):
            if not isinstance(value, kind):  # a dict of its fields, say: name the object to build
                raise InputError(
                    f"{name} must be a chainframe.rpc.{kind.__name__} (e.g. {name}={kind.__name__}(...)); "
                    f"got {type(value).__name__}"
                )
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise InputError(f"batch_size must be a whole number, at least 1; got {batch_size!r}")
        if isinstance(transport, str) and transport not in ("http", "ws"):
            raise InputError(f"transport must be 'http' or 'ws'; got {transport!r}")
        self.endpoint = endpoint if isinstance(endpoint, Endpoint) else Endpoint.from_url(endpoint)
        if transport == "ws" and self.endpoint.ws_url is None:
            raise InputError(f"{self.endpoint.display} has no WebSocket URL; use transport='http' or give ws_url")
        self._fallback_endpoints = [e if isinstance(e, Endpoint) else Endpoint.from_url(e) for e in fallbacks]
        self._spread = [Provider.of(p) for p in spread]
        # httpx and websockets log request URLs: their records lose every key before any handler sees them.
        guard_library_logs(
            *self.endpoint.secrets,
            *(k for e in [*self._fallback_endpoints, *(p.endpoint for p in self._spread)] for k in e.secrets),
        )
        self._transport_kind = transport
        self._timeout = timeout
        self.retry = retry
        self.pacer = Pacer(pacing)
        self._pool = Pool()
        self.batch_size = batch_size
        self._cooldown = failover_cooldown
        self._http2 = http2
        self._max_answer_bytes = max_answer_bytes
        self._chain_id: int | None = None  # the first endpoint's to answer eth_chainId (several endpoints only)
        self.least_round_trip: float | None = None
        """Seconds: the quickest answer of the primary endpoint so far (a bound of its round trip); None before one."""
        self._next_id = 1
        self._call_bytes: dict[str, float] = {}  # answer bytes per call, by method, in its latest batch answer
        self._sizing: dict[str, anyio.Lock] = {}  # held while the first batch of a method sizes the others
        self._routes: list[_Route] = []
        self._stack: AsyncExitStack | None = None
        self.stats = ClientStats()
        self._missing: dict[str, MethodNotFound] = {}  # methods the endpoint answered as not served
        self.notes: dict[str, str] = {}
        """How the run read around this node's answers, by topic (a route taken, an inconsistency of the node
        mended): set by the datasets' fetches, said once in the run's summary."""

    @property
    def missing_methods(self) -> dict[str, str]:
        """Methods the endpoint answered as not served (:class:`MethodNotFound`), with its answer. A caller with
        another route (receipts by transaction) takes it at once, and :meth:`batch_bytes` raises the error again
        without asking: a run learns it once, not in every piece."""
        return {
            method: f"{e.detail} [{e.code}]" if e.code is not None else e.detail for method, e in self._missing.items()
        }

    def _known_missing(self, method: str) -> None:
        known = self._missing.get(method)
        if known is not None:
            raise copy.copy(known)  # each raiser its own traceback

    @property
    def cheap_calls(self) -> bool:
        """Whether a call costs the node's work and little else: the endpoint is near (it has answered within
        :data:`NEAR_ROUND_TRIP`) and no credit budget is set (credits are paid per call). Then many rows are fetched
        in several calls whose answers hold about :data:`ANSWER_BYTES` each, which a node serves with less work per
        byte than one large answer; elsewhere fewer, larger calls save round trips and credits."""
        near = self.least_round_trip is not None and self.least_round_trip < NEAR_ROUND_TRIP
        return near and self.pacer.pacing.credits_per_second is None

    # --- lifecycle -------------------------------------------------------------------------------------------

    def _make_transport(self, endpoint: Endpoint, task_group: Any, pacer: Pacer) -> Transport:
        if isinstance(self._transport_kind, Transport):
            return self._transport_kind
        if self._transport_kind == "ws" and endpoint.ws_url is not None:
            from chainframe.rpc._transports.ws import WebSocketTransport  # deferred: websockets, only for a ws endpoint

            return WebSocketTransport(
                endpoint.ws_url, timeout=self._timeout, task_group=task_group, host_header=endpoint.host_header,
                max_bytes=self._max_answer_bytes,
            )  # fmt: skip
        if self._http2 or _proxy_in_environment():
            if self._http2:
                try:
                    import h2  # noqa: F401
                except ImportError:
                    raise InputError("http2=True needs the h2 package: pip install 'chainframe[http2]'") from None
            # deferred: httpx, only for the httpx transport
            from chainframe.rpc._transports.httpx_ import HTTPXTransport

            return HTTPXTransport(
                endpoint.http_url,
                timeout=self._timeout,
                max_connections=pacer.pacing.max_concurrency,
                http2=self._http2,
                host_header=endpoint.host_header,
                max_bytes=self._max_answer_bytes,
            )
        return HTTPTransport(
            endpoint.http_url,
            timeout=self._timeout,
            max_connections=pacer.pacing.max_concurrency,
            host_header=endpoint.host_header,
            max_bytes=self._max_answer_bytes,
        )

    async def __aenter__(self) -> AsyncClient:
        stack = AsyncExitStack()
        task_group = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(task_group.cancel_scope.cancel)  # the WebSocket reader ends with the client
        spreading = bool(self._spread)
        given = [
            (self.endpoint, self.pacer, spreading),
            *((p.endpoint, Pacer(p.pacing or self.pacer.pacing), True) for p in self._spread),
            *((e, self.pacer, False) for e in self._fallback_endpoints),
        ]
        for endpoint, pacer, spread in given:
            if spread:
                pacer.start_empty()
            counts = self.stats.endpoints.setdefault(endpoint.display, EndpointCounts())
            route = _Route(endpoint, self._make_transport(endpoint, task_group, pacer), pacer, counts, spread)
            stack.push_async_callback(route.transport.aclose)
            self._routes.append(route)
        self._stack = stack
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        stack, self._stack = self._stack, None
        self._routes = []
        if stack is not None:
            await stack.aclose()

    def __repr__(self) -> str:
        return f"AsyncClient({self.endpoint.display!r}, transport={self._transport_kind!r})"

    @property
    def via(self) -> str:
        """The URL requests go to, key redacted: the WebSocket URL for the ``ws`` transport, else the HTTP one."""
        if self._transport_kind == "ws" and self.endpoint.ws_url:
            return self.endpoint.redact(self.endpoint.ws_url)
        return self.endpoint.display

    # --- the request path ------------------------------------------------------------------------------------

    def _ids(self, n: int) -> list[int]:
        first = self._next_id
        self._next_id += n
        return list(range(first, first + n))

    def _in_order(self, tried: Sequence[_Route] = ()) -> list[_Route]:
        """The endpoints to try, in their given order, the resting ones last; none serving another chain, none in
        ``tried``."""
        if not self._routes:
            raise RuntimeError("the client is not open: use 'async with AsyncClient(...) as client'")
        now = time.monotonic()
        usable = [r for r in self._routes if (r.chain_id is None or r.chain_id == self._chain_id) and r not in tried]
        return sorted(usable, key=lambda route: route.resting_until > now)

    async def _next_route(self, methods: Sequence[str], tried: Sequence[_Route]) -> tuple[_Route | None, bool]:
        """The endpoint to send to next, and whether its allowance is taken already: one of the spread endpoints in
        service that has budget (:class:`Pool`), else the first of the others in order (resting ones last)."""
        order = self._in_order(tried)
        now = time.monotonic()
        sharing = [r for r in order if r.spread and r.resting_until <= now]
        if sharing:
            return sharing[await self._pool.choose([r.pacer for r in sharing], methods)], True
        return (order[0] if order else None), False

    def _is_failover(self, route: _Route, tried: Sequence[_Route]) -> bool:
        first = self._routes[0]
        if route is first:
            return False
        if not route.spread or tried:
            return True
        set_aside = first.resting_until > time.monotonic() or first.chain_id not in (None, self._chain_id)
        return set_aside

    async def _exchange(self, methods: Sequence[str], body: bytes, ids: Sequence[int]) -> tuple[bytes, _Route]:
        """Send ``body`` to the first endpoint that answers it with HTTP 200; raise the last error otherwise. With
        several endpoints, one unreachable or answering 5xx rests and the next is tried; any other error is the
        answer (a terminal one would be the same anywhere, and the retry policy handles the transient ones)."""
        several = len(self._routes) > 1
        last: RPCError | None = None
        tried: list[_Route] = []
        while True:
            route, paid = await self._next_route(methods, tried)
            if route is None:
                break
            try:
                if several and not await self._on_our_chain(route):
                    tried.append(route)
                    continue
                raw = await self._send(route, methods, body, ids, paid=paid)
            except RPCError as exc:
                if not several or not isinstance(exc, TransportError | ServiceUnavailable | WrongURL):
                    raise
                self._rest(route, exc)
                tried.append(route)
                last = exc
                continue
            if self._is_failover(route, [r for r in tried if r.chain_id in (None, self._chain_id)]):
                self.stats.failovers += 1
            return raw, route
        if last is None:  # unreachable: the endpoint that set the chain is never left out, so one was tried
            last = TransportError("no endpoint serving this chain is left")
            last.attach(method=methods[0], blocks=None, endpoint=self.endpoint.display, secret=self.endpoint.key)
        raise last

    async def _send(
        self, route: _Route, methods: Sequence[str], body: bytes, ids: Sequence[int], *, paid: bool = False
    ) -> bytes:
        """One request to one endpoint: its HTTP-200 answer, or its error (with the method and endpoint)."""
        try:
            async with route.pacer.slot(methods, paid=paid):
                self.stats.requests += 1
                self.stats.calls += len(methods)
                route.counts.requests += 1
                route.counts.calls += len(methods)
                route.counts.credits += route.pacer.pacing.cost(methods)
                sent = time.monotonic()
                reply = await route.transport.send(body, ids)
                took = time.monotonic() - sent
                if route is self._routes[0] and (self.least_round_trip is None or took < self.least_round_trip):
                    self.least_round_trip = took
            self.stats.bytes_received += len(reply.body)
            if reply.status != 200:
                raise self._http_error(reply.status, reply.body, reply.headers)
        except RPCError as exc:
            route.counts.errors += 1
            if isinstance(exc, RateLimited) and exc.http_status == 429:
                route.counts.credits -= route.pacer.pacing.cost(methods)  # refused for the rate: not billed (Infura)
            missing = isinstance(exc, MethodNotFound)
            named = next((m for m in dict.fromkeys(methods) if missing and m in exc.detail), methods[0])
            exc.attach(method=named, blocks=None, endpoint=route.endpoint.display, secret=route.endpoint.key)
            if missing:  # a gateway's HTTP 404/405 naming the method: learned once, as a call's own answer would be
                self._count_error(exc)
            raise
        return reply.body

    async def _on_our_chain(self, route: _Route) -> bool:
        """Whether ``route`` serves the client's chain. Its eth_chainId is asked once in the client's life, before its
        first answer is used; the first endpoint to answer sets the chain (the primary, unless it is down then)."""
        if route.chain_id is None:
            failures = route.failures
            async with route.checking:
                if route.chain_id is None:
                    if route.failures != failures and route.failed_with is not None:
                        # It failed while this request waited for the check: not once more per waiting request.
                        failed = route.failed_with
                        again = type(failed)(failed.detail, code=failed.code, http_status=failed.http_status)
                        again.attach(method="eth_chainId", blocks=None, endpoint=route.endpoint.display)
                        raise again
                    route.chain_id = await self._ask_chain_id(route)
                    if self._chain_id is None:
                        self._chain_id = route.chain_id
                    elif route.chain_id != self._chain_id:
                        reason = f"serves chain {route.chain_id}, not {self._chain_id}"
                        self.stats.set_aside[route.endpoint.display] = reason
                        _log.warning("%s set aside: %s", route.endpoint.display, reason)
        return route.chain_id == self._chain_id

    async def _ask_chain_id(self, route: _Route) -> int:
        (call_id,) = self._ids(1)
        body = json.dumps({"jsonrpc": "2.0", "id": call_id, "method": "eth_chainId", "params": []}).encode()
        raw = self._single_answer(await self._send(route, ["eth_chainId"], body, [call_id]), "eth_chainId", (), route)
        try:
            return int(json.loads(raw)["result"], 16)
        except (ValueError, KeyError, TypeError):
            error = MalformedResponse("the eth_chainId answer is not a hex quantity")
            error.attach(method="eth_chainId", blocks=None, endpoint=route.endpoint.display, secret=route.endpoint.key)
            raise error from None

    def _rest(self, route: _Route, exc: RPCError) -> None:
        """Set ``route`` aside for the cool-down (the others go first until then), and say why."""
        now = time.monotonic()
        reason = route.endpoint.redact(" ".join(exc.detail.split())[:120])
        if isinstance(exc, ServiceUnavailable) and exc.http_status and not reason.startswith("HTTP"):
            reason = f"HTTP {exc.http_status}: {reason}"
        if route.resting_until <= now:
            _log.warning("%s set aside for %g s: %s", route.endpoint.display, self._cooldown, reason)
        route.resting_until = now + self._cooldown
        route.failures += 1
        route.failed_with = exc
        self.stats.set_aside[route.endpoint.display] = reason

    @staticmethod
    def _http_error(status: int, body: bytes, headers: Any) -> RPCError:
        code, message, data = None, body.decode(errors="replace").strip()[:500], None
        try:
            answer = json.loads(body)
        except ValueError:
            answer = None
        items = answer if isinstance(answer, list) else [answer]
        for item in items:
            if isinstance(item, dict) and isinstance(item.get("error"), dict):
                code, message, data = (
                    item["error"].get("code"),
                    str(item["error"].get("message", "")),
                    item["error"].get("data"),
                )
                break
            if isinstance(item, dict) and "message" in item:  # Infura's 402/429 credit-era shape
                message = f"{item.get('message')}: {item.get('details', '')}".strip(": ")
                break
        return classify(http_status=status, code=code, message=message, data=data, headers=headers)

    def _on_retry(self, state: RetryCallState) -> None:
        self.stats.retries += 1
        exc = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        # Errors carry no key. ``retry`` is for whoever shows it (the CLI's "retrying (n/N): reason" line).
        _log.info("attempt %d failed, retrying: %s", state.attempt_number, exc,
                  extra={"retry": (state.attempt_number, self.retry.attempts, wait, exc)})  # fmt: skip
        if isinstance(exc, RateLimited):
            self.stats.rate_limited += 1
            if exc.backoff:  # the endpoint that said so rests; with spread ones, the others go on
                told = next((r for r in self._routes if r.spread and r.endpoint.display == exc.endpoint), None)
                (told.pacer if told is not None else self.pacer).pause(exc.backoff)

    def _retrying(self) -> Attempts:
        return Attempts(self.retry, self._on_retry)

    def _count_error(self, exc: RPCError) -> None:
        name = type(exc).__name__
        self.stats.errors[name] = self.stats.errors.get(name, 0) + 1
        if isinstance(exc, MethodNotFound) and exc.method:
            self._missing.setdefault(exc.method, exc)

    @staticmethod
    def _item_error(item: dict[str, Any]) -> RPCError:
        error = item["error"] if isinstance(item.get("error"), dict) else {"message": str(item.get("error"))}
        code = error.get("code")
        return classify(
            code=code if isinstance(code, int) else None, message=str(error.get("message", "")), data=error.get("data")
        )

    def _single_answer(self, raw: bytes, method: str, params: Sequence[Any], route: _Route) -> bytes:
        head = raw[:96]
        if b'"result"' in head and b'"error"' not in head and raw.rstrip().endswith(b"}"):
            return raw  # fast path: a success envelope, left unparsed for the columnar decoders
        try:
            answer = json.loads(raw)
        except ValueError:
            error: RPCError = MalformedResponse(f"the answer is not JSON ({len(raw)} bytes, cut short?)")
        else:
            if isinstance(answer, dict) and "result" in answer and "error" not in answer:
                return raw
            if isinstance(answer, dict) and "error" in answer:
                error = self._item_error(answer)
            else:
                error = MalformedResponse("the answer is not a JSON-RPC response object")
        route.counts.errors += 1
        error.attach(
            method=method, blocks=blocks_of(method, params), endpoint=route.endpoint.display, secret=route.endpoint.key
        )
        raise error

    async def request_bytes(self, method: str, params: Sequence[Any] = ()) -> bytes:
        """One call; the whole answer envelope as received (``{"jsonrpc":..,"id":..,"result":..}``), or raise.

        The envelope is checked cheaply (its head and end) and left unparsed, for decoders that read it natively.
        """
        raw, _ = await self._call(method, params, parse=False)
        return raw

    async def request(self, method: str, params: Sequence[Any] = ()) -> Any:
        """One call; its ``result`` as parsed JSON (None for null), or raise a classified error."""
        return (await self._call(method, params, parse=True))[1]

    async def _call(self, method: str, params: Sequence[Any], *, parse: bool) -> tuple[bytes, Any]:
        params = list(params)
        (call_id,) = self._ids(1)
        body = json.dumps({"jsonrpc": "2.0", "id": call_id, "method": method, "params": params}).encode()
        blocks = blocks_of(method, params)
        try:
            async for attempt in self._retrying():
                with attempt:
                    try:
                        raw, route = await self._exchange([method], body, [call_id])
                    except RPCError as exc:
                        exc.blocks = blocks
                        raise
                    raw = self._single_answer(raw, method, params, route)
                    if not parse:
                        return raw, None
                    try:
                        return raw, json.loads(raw)["result"]
                    except (ValueError, KeyError):
                        error = MalformedResponse(f"the answer is not valid JSON-RPC ({len(raw)} bytes, cut short?)")
                        error.attach(method=method, blocks=blocks, endpoint=route.endpoint.display)
                        raise error from None
        except RPCError as exc:
            self._count_error(exc)
            raise
        raise AssertionError("unreachable: the retry loop returns or raises")

    async def batch(self, calls: Sequence[Call]) -> list[Any]:
        """Many calls in JSON-RPC batches of ``batch_size``, sent concurrently (within the pacing cap).

        Returns one entry per call, in call order: the parsed result, or the :class:`RPCError` that call ended with.
        A failure of a whole request (key refused, quota) raises instead.
        """
        results: list[Any] = [None] * len(calls)
        size = self._affordable(calls[0][0]) if calls else self.batch_size
        chunks = [range(i, min(i + size, len(calls))) for i in range(0, len(calls), size)]
        try:
            async with anyio.create_task_group() as tg:
                for chunk in chunks:
                    tg.start_soon(self._batch_chunk, calls, chunk, results)
        except BaseExceptionGroup as group:
            raise first_error(group) from None  # the typed error, as one request raises it
        return results

    async def batch_bytes(self, calls: Sequence[Call]) -> list[bytes]:
        """Many calls of one method, in concurrent batches; each batch's answer array as received, for native decoders.

        A batch holds as many calls as make an answer of about :data:`ANSWER_BYTES` by the method's latest
        answer, at most ``batch_size``. Where that is not known yet and the calls need more than one batch, the first
        :data:`PROBE_CALLS` go alone, and the rest (of every caller) wait for their answer. Answers may be in any order
        (decoders sort by id). A batch whose answer is not plainly complete and error-free is redone through
        :meth:`batch`, which retries items alone; an item that still fails raises. A method the endpoint has
        answered as not served raises :class:`MethodNotFound` again at once.
        """
        if not calls:
            return []
        method = calls[0][0]
        self._known_missing(method)
        first: list[bytes] = []
        if method not in self._call_bytes and len(calls) > self.batch_size:
            async with self._sizing.setdefault(method, anyio.Lock()):
                self._known_missing(method)  # the probe this caller waited for found the method missing
                if method not in self._call_bytes:
                    probe = min(PROBE_CALLS, self.batch_size)  # batch_size=1: a provider without batches
                    first.append(await self._batch_body(calls[:probe]))
                    calls = calls[probe:]
        size = self._calls_per_batch(method)
        chunks = [calls[i : i + size] for i in range(0, len(calls), size)]
        bodies: list[bytes] = [b""] * len(chunks)

        async def one(n: int) -> None:
            bodies[n] = await self._batch_body(chunks[n])

        try:
            async with anyio.create_task_group() as tg:
                for n in range(len(chunks)):
                    tg.start_soon(one, n)
        except BaseExceptionGroup as group:
            # The typed error, as one batch raises it: a caller's ``except MethodNotFound`` (the receipts' route by
            # transaction) must see it, not a group around it.
            raise first_error(group) from None
        return first + bodies

    def _calls_per_batch(self, method: str) -> int:
        per_call = self._call_bytes.get(method)
        if per_call is None:
            return self._affordable(method)
        return max(1, min(self._affordable(method), int(ANSWER_BYTES / max(per_call, 1.0))))

    def _affordable(self, method: str) -> int:
        """``batch_size``, or fewer with spread endpoints: a batch every one of them can pay from its allowance in
        hand. A dearer one would run its provider's bucket into debt, and a cheap request the pacer let go first but
        that arrived second would be refused."""
        size = self.batch_size
        for route in self._routes:
            pacing = route.pacer.pacing
            if route.spread and pacing.credits_per_second is not None and size > 1:
                hand = pacing.credits_per_second * _Bucket.BURST
                while size > 1 and pacing.cost([method] * size) > hand:
                    size -= 1
        return size

    async def _batch_body(self, calls: Sequence[Call]) -> bytes:
        ids = self._ids(len(calls))
        body = json.dumps(
            [{"jsonrpc": "2.0", "id": i, "method": m, "params": list(p)} for i, (m, p) in zip(ids, calls, strict=True)]
        ).encode()
        methods = [m for m, _ in calls]
        async for attempt in self._retrying():
            with attempt:
                raw, route = await self._exchange(methods, body, ids)
        if not plainly_complete(raw, len(calls)) and not results_only(raw, ids):
            refused = self._refused_for_good(raw, calls, ids, route)
            if refused is not None:
                raise refused
            results = await self.batch(calls)
            for result in results:
                if isinstance(result, RPCError):
                    raise result
            raw = json.dumps([{"jsonrpc": "2.0", "id": i, "result": r} for i, r in enumerate(results)]).encode()
        # Sized by answers, never by errors: callers waiting for a first batch that failed (a method the node lacks)
        # wait for the failure, then see it.
        if len(set(methods)) == 1:
            self._call_bytes[methods[0]] = len(raw) / len(calls)
        return raw

    def _refused_for_good(self, raw: bytes, calls: Sequence[Call], ids: list[int], route: _Route) -> RPCError | None:
        """The first item of a batch answer that the node refused for good (:data:`FOR_GOOD`: state it does not
        keep, a method it does not serve, a refused key or an exhausted quota), attached as :meth:`batch` would; None
        when nothing is. Redoing the batch could not help, so it is raised at once, not asked again."""
        try:
            answers = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(answers, list):
            return None
        by_id = {a.get("id"): a for a in answers if isinstance(a, dict)}
        for call_id, (method, params) in zip(ids, calls, strict=True):
            answer = by_id.get(call_id)
            if answer is None or "error" not in answer:
                continue
            error = self._item_error(answer)
            if isinstance(error, FOR_GOOD):
                error.attach(method=method, blocks=blocks_of(method, params), endpoint=route.endpoint.display,
                             secret=route.endpoint.key)  # fmt: skip
                self._count_error(error)
                return error
        return None

    async def _batch_chunk(self, calls: Sequence[Call], chunk: range, results: list[Any]) -> None:
        ids = self._ids(len(chunk))
        pending = dict(zip(ids, chunk, strict=True))  # id -> position in calls
        try:
            async for attempt in self._retrying():
                with attempt:
                    await self._batch_attempt(calls, pending, results)
        except TransientError as exc:
            for i in pending.values():  # what was still failing when the policy gave up
                results[i] = results[i] if isinstance(results[i], RPCError) else exc
                self._count_error(results[i])

    async def _batch_attempt(self, calls: Sequence[Call], pending: dict[int, int], results: list[Any]) -> None:
        body = json.dumps(
            [
                {"jsonrpc": "2.0", "id": i, "method": calls[n][0], "params": list(calls[n][1])}
                for i, n in pending.items()
            ]
        ).encode()
        methods = [calls[n][0] for n in pending.values()]
        raw, route = await self._exchange(methods, body, list(pending))
        try:
            answers = json.loads(raw)
        except ValueError:
            raise MalformedResponse(f"the batch answer is not JSON ({len(raw)} bytes, cut short?)") from None
        if isinstance(answers, dict):  # one error for the whole batch
            raise self._item_error(answers) if "error" in answers else MalformedResponse("a batch got a single answer")
        by_id = {a.get("id"): a for a in answers if isinstance(a, dict)}
        retry_with: TransientError | None = None
        for call_id, n in list(pending.items()):
            method, params = calls[n]
            answer = by_id.get(call_id)
            error: RPCError | None = None
            if answer is None:
                error = MalformedResponse("the batch answer left this call out")
            elif "error" in answer:
                error = self._item_error(answer)
            if error is None:
                assert answer is not None
                results[n] = answer.get("result")
                del pending[call_id]
                continue
            route.counts.errors += 1
            error.attach(
                method=method,
                blocks=blocks_of(method, params),
                endpoint=route.endpoint.display,
                secret=route.endpoint.key,
            )
            results[n] = error
            if isinstance(error, TransientError):
                retry_with = error
            else:
                self._count_error(error)
                del pending[call_id]
        if retry_with is not None:
            raise retry_with
