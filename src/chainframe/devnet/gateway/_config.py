"""What the gateway enforces and injects: fixed at start (:class:`GatewayConfig`) or changeable while it runs
(:class:`GatewaySettings`, through the admin endpoint, so each test sets its own limits and faults).

All of it round-trips through JSON, because the gateway runs as its own process and receives its config on stdin.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

FaultKind = Literal[
    "http_429",
    "http_402",
    "http_5xx",
    "rate_limit",
    "drop",
    "slow",
    "truncate",
    "batch_reorder",
    "batch_drop_item",
]
"""Injectable faults.

- ``http_429``: HTTP 429 with ``Retry-After`` and Infura's -32005 "project ID request rate exceeded" body carrying
  ``data.backoff_seconds`` (over WebSocket: that error object as the answer).
- ``http_402``: HTTP 402 "Payment Required", Infura's daily-credit-limit answer (over WebSocket: the same JSON).
- ``http_5xx``: an HTTP error status (``status``, default 503) with a text body (over WebSocket: close code 1011).
- ``rate_limit``: HTTP 200, each matching call answered with -32005 and ``data.backoff_seconds``.
- ``drop``: the connection is closed without an answer.
- ``slow``: the answer waits ``delay`` seconds (then other faults may still apply).
- ``truncate``: only the first half of the answer is sent, then the connection is closed.
- ``batch_reorder``: a batch answer comes back in shuffled order.
- ``batch_drop_item``: one item of a batch answer is left out.
"""

Transport = Literal["any", "http", "ws"]
NodeKind = Literal["geth", "hardhat", "ganache", "http_404", "http_405"]
"""Whose words a missing method is answered in (issue 31, observed on the real nodes); ``http_404``/``http_405``: a
gateway in front that routes by method and answers the whole HTTP request with that status and a text naming it."""
_MISSING_ANSWERS: dict[NodeKind, tuple[int, str]] = {
    "geth": (-32601, "the method {method} does not exist/is not available"),  # geth, Erigon, Infura
    "hardhat": (-32004, "Method {method} is not supported"),  # Hardhat 2.29 (EDR)
    "ganache": (-32700, "The method {method} does not exist/is not available"),  # Ganache 7.9: a parse-error code
    "http_404": (404, "Not Found: {method} is not served by this endpoint"),
    "http_405": (405, "Method Not Allowed: {method}"),
}


@dataclass(frozen=True, kw_only=True)
class FaultRule:
    """Inject ``kind`` into requests that match, with ``probability``, at most ``times`` times."""

    kind: FaultKind
    probability: float = 1.0
    """Chance per matching request (drawn from the gateway's seeded generator)."""
    times: int | None = None
    """Stop after this many injections; None: never stop."""
    methods: tuple[str, ...] = ()
    """Only requests calling one of these methods (any item of a batch); empty: every request."""
    transport: Transport = "any"
    status: int = 503
    """HTTP status for ``http_5xx``."""
    delay: float = 1.0
    """Seconds of delay for ``slow``."""
    backoff: float = 1.0
    """Seconds hinted by ``http_429`` (Retry-After and data.backoff_seconds) and ``rate_limit``."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.probability <= 1.0:
            raise ValueError(f"probability must be within [0, 1], got {self.probability}")
        object.__setattr__(self, "methods", tuple(self.methods))


@dataclass(frozen=True, kw_only=True)
class MissingMethod:
    """A method the gateway answers as a node that lacks it does (Hardhat and Ganache have no eth_getBlockReceipts)."""

    method: str
    like: NodeKind = "geth"
    """Whose answer: ``geth`` -32601, ``hardhat`` -32004 "Method X is not supported", ``ganache`` -32700 with geth's
    text; ``http_404``/``http_405``: that HTTP status for the whole request, a plain-text body naming the method (over
    WebSocket, where there is no status, geth's -32601)."""

    @property
    def http_status(self) -> int | None:
        """The HTTP status the whole request is answered with; None: HTTP 200 and a JSON-RPC error per call."""
        return _MISSING_ANSWERS[self.like][0] if self.like.startswith("http_") else None

    def error(self) -> tuple[int, str]:
        """The error code and message the node answers (the HTTP kinds: the status and the body's text)."""
        code, text = _MISSING_ANSWERS["geth" if self.like.startswith("http_") else self.like]
        return code, text.format(method=self.method)

    def body(self) -> str:
        """The text an ``http_*`` kind answers the whole request with."""
        return _MISSING_ANSWERS[self.like][1].format(method=self.method) + "\n"


@dataclass(frozen=True, kw_only=True)
class OmitKeys:
    """Keys left out of the answers of some methods, as a node that does not send them: wherever they occur in the
    result (receipts and their logs without ``blockTimestamp``: geth before 1.14, Hardhat, Ganache), or with
    ``nested=False`` only from the result's own objects (a receipt, each receipt of a list), not from objects inside
    them (Erigon: a receipt without ``blockTimestamp`` whose logs have it)."""

    methods: tuple[str, ...]
    keys: tuple[str, ...]
    nested: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "methods", tuple(self.methods))
        object.__setattr__(self, "keys", tuple(self.keys))


PrunedKind = Literal["geth", "erigon", "reth", "nethermind", "besu", "anvil"]
_PRUNED_ANSWERS: dict[PrunedKind, tuple[int, str]] = {
    "geth": (-32000, "missing trie node {hash} (path ) state {hash} is not available, not found"),
    "erigon": (-32000, "account changes purged for block {block}"),
    "reth": (-32000, "state at block #{block} is pruned"),
    "nethermind": (-32002, "No state available for block 0x{hash}"),
    "besu": (-32000, "World state unavailable"),
    "anvil": (-32602, "BlockOutOfRangeError: block height is {height} but requested was {block}"),
}
"""Each node's answer to a state read at a block whose state it dropped (docs/research/pruned-state.md)."""
STATE_BLOCK_PARAMETER = {
    "eth_getBalance": 1, "eth_getTransactionCount": 1, "eth_getCode": 1, "eth_call": 1, "debug_traceCall": 1,
    "eth_getStorageAt": 2, "eth_getProof": 2,
}  # fmt: skip
"""The methods that read state at a block, and where their block parameter stands."""


@dataclass(frozen=True, kw_only=True)
class PrunedState:
    """State the gateway answers as a full node that dropped it: a state read (:data:`STATE_BLOCK_PARAMETER`) at a
    block number below ``before`` gets ``like``'s own error, and the node behind is not asked."""

    before: int
    like: PrunedKind = "geth"

    def error(self, block: int) -> tuple[int, str]:
        """The code and message for a read at ``block`` (anvil's height: ``before``, the first block it serves)."""
        code, text = _PRUNED_ANSWERS[self.like]
        return code, text.format(block=block, hash=f"{block:064x}", height=self.before)

    def refuses(self, method: str, params: Any) -> int | None:
        """The block a call reads state at, when it is one this node dropped; else None."""
        position = STATE_BLOCK_PARAMETER.get(method)
        if position is None or not isinstance(params, list) or len(params) <= position:
            return None
        tag = params[position]
        if not isinstance(tag, str) or not tag.startswith("0x"):
            return None  # latest, safe, finalized, a block hash object: the node's recent state
        block = int(tag, 16)
        return block if block < self.before else None


@dataclass(frozen=True, kw_only=True)
class LogLimits:
    """Infura's eth_getLogs limits (the spec's section 8), configurable so tests can use small ones."""

    max_results: int = 10_000
    """More results than this: -32005 ``query returned more than N results``."""
    timeout: float = 10.0
    """Seconds an eth_getLogs may take upstream before -32005 ``query timeout exceeded``."""
    timeout_blocks: int | None = None
    """Deterministic timeout: a query spanning more blocks than this fails as if it had run too long."""
    max_range: int | None = None
    """A query spanning more blocks than this: -32602 ``range N exceeds limit of M`` (Infura, observed 2026)."""
    max_params: int = 5_000
    """Addresses plus topic values in one filter; more gives -32602."""
    hint: bool = True
    """Add Infura's observed hint to the results error: ``Try with this block range [0x.., 0x..].`` and data."""


@dataclass(frozen=True, kw_only=True)
class GatewaySettings:
    """The knobs a running gateway lets the admin change."""

    limits: LogLimits = LogLimits()
    faults: tuple[FaultRule, ...] = ()
    seed: int = 0
    """Seed of the fault generator; setting settings resets it, so a test's faults are reproducible."""
    latency: float = 0.0
    """Seconds added to every request, to look like a remote provider."""
    credits_per_second: float | None = None
    """Infura-style credit bucket (per-method weights); over it, HTTP 429 with a backoff. None: unlimited."""
    missing: tuple[MissingMethod, ...] = ()
    """Methods answered as not served, in a given node's words (the node behind is not asked)."""
    omit: tuple[OmitKeys, ...] = ()
    """Keys taken out of answers, as a node that does not send them."""
    unknown_tags: tuple[str, ...] = ()
    """Block tags (``finalized``, ``safe``) that eth_getBlockByNumber answers with null, as a node that does not track
    them (a chain without finality)."""
    pruned: PrunedState | None = None
    """State older than a block answered as a full node that dropped it, in a given node's words."""
    no_state_overrides: bool = False
    """eth_call's third parameter (a state override) dropped before the node is asked, as a node that ignores it."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GatewaySettings:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown gateway settings {sorted(unknown)}; known: {sorted(known)}")
        return cls(
            limits=LogLimits(**data.get("limits", {})),
            faults=tuple(FaultRule(**f) for f in data.get("faults", ())),
            seed=data.get("seed", 0),
            latency=data.get("latency", 0.0),
            credits_per_second=data.get("credits_per_second"),
            missing=tuple(MissingMethod(**m) for m in data.get("missing", ())),
            omit=tuple(OmitKeys(**o) for o in data.get("omit", ())),
            unknown_tags=tuple(data.get("unknown_tags", ())),
            pruned=PrunedState(**data["pruned"]) if data.get("pruned") else None,
            no_state_overrides=bool(data.get("no_state_overrides", False)),
        )


@dataclass(frozen=True, kw_only=True)
class GatewayConfig:
    """How to start a gateway."""

    networks: dict[str, str]
    """Network name -> upstream node URL. The first label of the Host header picks one (``sepolia.localhost``)."""
    default_network: str
    """Network for a Host header that names none (``127.0.0.1:port``)."""
    keys: tuple[str, ...]
    """API keys accepted in ``/v3/<KEY>``; any other key gets HTTP 401."""
    admin_token: str
    """Secret for the ``/_gateway/*`` admin endpoints (header ``X-Admin-Token``)."""
    settings: GatewaySettings = field(default_factory=GatewaySettings)
    host: str = "127.0.0.1"
    port: int = 0
    """0: a free port, reported on stdout when ready."""

    def __post_init__(self) -> None:
        if self.default_network not in self.networks:
            raise ValueError(f"default_network {self.default_network!r} is not one of {sorted(self.networks)}")
        if not self.keys:
            raise ValueError("a gateway needs at least one API key")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GatewayConfig:
        return cls(
            networks=dict(data["networks"]),
            default_network=data["default_network"],
            keys=tuple(data["keys"]),
            admin_token=data["admin_token"],
            settings=GatewaySettings.from_json(data.get("settings", {})),
            host=data.get("host", "127.0.0.1"),
            port=data.get("port", 0),
        )
