"""Errors from talking to a JSON-RPC service, classified by whether retrying can help.

::

    ChainframeError
    ├── InputError                      bad argument; raised before any request (chainframe._errors)
    └── RPCError                        .method, .blocks, .endpoint (key redacted)
        ├── TransientError              retrying the same request can succeed
        │   ├── RateLimited             .backoff: seconds the service asked for (None if it gave no hint)
        │   ├── TransportError          connection refused, dropped or timed out
        │   ├── ServiceUnavailable      HTTP 5xx
        │   └── MalformedResponse       body not JSON, truncated, or a batch item missing
        └── TerminalError               retrying the same request cannot help
            ├── WrongURL                    host not found, or TLS spoken to a plain-http port: fix the URL
            ├── KeyRefused              HTTP 401/403: missing, unknown or restricted key
            ├── QuotaExhausted          HTTP 402 or a daily limit: wait for the reset (00:00 UTC) or upgrade
            ├── LimitExceeded           too many results, too slow, or range too wide: .reason, .hint (from, to)
            ├── InvalidParams           -32602 (not a limit)
            ├── StateUnavailable        the node keeps no state for the asked block (a full node, not an archive)
            ├── MethodNotFound          -32601, -32004, or a text saying the method is not served
            └── ServerError             any other JSON-RPC error: .code, .data

:func:`classify` maps an HTTP status and a JSON-RPC error object to this tree. Providers disagree on codes (Infura
uses -32005 for both result limits and rate limiting; Besu for its range limit; Alchemy -32602 and -32600), so the
message decides, matched case-insensitively, following ``docs/research/providers.md``. A missing method is known by
its code (-32601; -32004, EIP-1474's "method not supported", which Hardhat sends) or by a text that names the method as
not served, whatever the code: Ganache sends geth's "the method X does not exist/is not available" with -32700, a
parse-error code; a gateway's HTTP 404 or 405 counts when its text names a method (a bare 404 is a wrong URL).
"Not supported" alone is not enough: limits say it too ("ranges over 10000 blocks are not supported").
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Mapping
from typing import Any, Literal

from chainframe._errors import ChainframeError
from chainframe._redact import redact_text

LimitReason = Literal["results", "timeout", "range"]


class RPCError(ChainframeError):
    """An error from the service (or the way to it). Says which method, blocks and endpoint it came from."""

    def __init__(self, detail: str, *, code: int | None = None, data: Any = None, http_status: int | None = None):
        super().__init__(detail)
        self.detail = detail
        self.code = code
        self.data = data
        self.http_status = http_status
        self.method: str | None = None
        self.blocks: tuple[int, int] | None = None
        self.endpoint: str | None = None

    def attach(self, *, method: str, blocks: tuple[int, int] | None, endpoint: str, secret: str = "") -> None:
        """Record where the error came from (the client does this); the key is redacted from everything."""
        self.method, self.blocks, self.endpoint = method, blocks, redact_text(endpoint, secret)
        self.detail = redact_text(self.detail, secret)

    def __str__(self) -> str:
        where = self.method or "request"
        if self.blocks is not None:
            lo, hi = self.blocks
            where += f" for block {lo}" if lo == hi else f" for blocks {lo}..{hi}"
        if self.endpoint:
            where += f" via {self.endpoint}"
        code = f" [{self.code}]" if self.code is not None else ""
        return f"{where}: {self.detail}{code}"


class TransientError(RPCError):
    """Retrying the same request can succeed."""


class RateLimited(TransientError):
    def __init__(self, detail: str, *, backoff: float | None = None, **kw: Any) -> None:
        super().__init__(detail, **kw)
        self.backoff = backoff


class TransportError(TransientError):
    """The connection failed: refused, dropped, or no answer in time."""


class ServiceUnavailable(TransientError):
    """HTTP 5xx."""


class MalformedResponse(TransientError):
    """The answer was not the JSON-RPC we asked for: not JSON, cut short, or a batch item missing."""


class TerminalError(RPCError):
    """Retrying the same request cannot help."""


class WrongURL(TerminalError):
    """The URL cannot work as written: its host is not found, or TLS met a port that does not speak it. Failed at
    once, not retried: another try asks the same resolver and the same port."""


def connect_failure(exc: OSError, scheme: str) -> RPCError:
    """The error for a connection that could not be opened: :class:`WrongURL` when the URL itself is wrong (said in
    words, with what to try), a retried :class:`TransportError` otherwise (refused, reset, a resolver that is down)."""
    import socket
    import ssl  # loaded by then: the transport that raised ``exc`` uses it

    # EAI_NONAME: no such name; EAI_NODATA (glibc): the name has no address. EAI_AGAIN (resolver down) is retried.
    no_such_host = (socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME))
    if isinstance(exc, socket.gaierror) and exc.errno in no_such_host:
        return WrongURL("host not found: check the URL")
    if isinstance(exc, ssl.SSLCertVerificationError):
        return WrongURL(f"TLS certificate not accepted ({exc.verify_message}): check the URL's host")
    if isinstance(exc, ssl.SSLError):
        plain = {"https": "http", "wss": "ws"}.get(scheme, "http")
        return WrongURL(f"TLS handshake failed: the port may speak plain {plain}; try {plain}://")
    return TransportError(f"connection failed ({type(exc).__name__})")


class KeyRefused(TerminalError):
    """The service refused the API key (missing, unknown, or restricted by its settings)."""


class QuotaExhausted(TerminalError):
    """A daily or paid quota is used up: wait for the reset (Infura: 00:00 UTC) or upgrade the plan."""


class LimitExceeded(TerminalError):
    """The query is too big for the service: narrow it. ``hint`` is a range the service suggested, if any."""

    def __init__(
        self, detail: str, *, reason: LimitReason, hint: tuple[int, int] | None = None, max_blocks: int | None = None,
        **kw: Any,
    ) -> None:  # fmt: skip
        super().__init__(detail, **kw)
        self.reason: LimitReason = reason
        self.hint = hint
        self.max_blocks = max_blocks
        """The widest range (in blocks) the provider's text says it allows, when it says one."""


class InvalidParams(TerminalError):
    """-32602: the service rejected the parameters."""


class MethodNotFound(TerminalError):
    """The service does not offer this method: -32601, -32004, or a text that says so (see :func:`classify`)."""


class StateUnavailable(TerminalError):
    """The node keeps no state for the asked block: a full (pruned) node, or anvil reloaded without its historical
    states. Not a reorganization, and asking again cannot help: an archive node, or a block within the node's recent
    window, serves it. Known by each client's own words (``docs/research/pruned-state.md``)."""

    def __init__(self, detail: str, *, said: str = "", **kw: Any) -> None:
        super().__init__(detail, **kw)
        self.said = said
        """The node's own words, as it answered."""


class ServerError(TerminalError):
    """Any other JSON-RPC error; ``code`` and ``data`` are the service's."""


# The texts below are matched case-insensitively (:func:`_found`), each compiled at its first use: compiling them
# all at import cost about 9 ms of every run's start-up, and most runs meet no error.
_QUOTA = r"daily|payment required|credit limit|quota"
_RATE = r"rate exceeded|rate.?limit|too many requests|request rate"
_N = r"([\d][\d,._]*k?)"  # a block count as providers write it: 10000, 10,000, 10.000, 10k
# Every provider's eth_getLogs limit text we know of (docs/research/providers.md, and the texts Ponder's
# getLogsRetryHelper matches). The first group, where there is one, is the widest
# range the provider allows; ranges hinted as [from, to] are read by parse_hint.
_LIMIT_TEXTS: tuple[tuple[LimitReason, str], ...] = (
    # too many results or too large an answer
    ("results", r"more than \d+ results"),  # Infura, zkSync, zkEVM, geth-likes
    ("results", r"too many (logs|results)"),  # erigon
    ("results", r"exceeds max results"),  # reth, LlamaRPC, Ankr
    ("results", r"response size exceeded"),  # Alchemy (paid)
    ("results", r"response size should not greater than"),  # 1RPC
    ("results", r"backend response too large"),  # Optimism
    ("results", r"logs matched by query exceeds limit"),  # Arbitrum
    ("results", r"returned more than"),  # generic
    ("timeout", r"query timeout|timeout exceeded"),  # Infura
    # block range too wide: the count, when given, is the widest range allowed
    ("range", rf"requested too many blocks from \d+ to \d+, maximum is set to {_N}"),  # Avalanche
    ("range", rf"max range: {_N}"),  # Cloudflare
    ("range", rf"maximum allowed number of requested blocks is {_N}"),  # thirdweb
    ("range", rf"limited to a {_N}"),  # QuickNode, 1RPC, Blast
    ("range", rf"limited to {_N} block"),  # BlockPI
    ("range", rf"exceeds the range allowed for your plan \(\d+ > {_N}\)"),  # Blast (paid)
    ("range", rf"please limit the query to at most {_N} blocks"),  # Coinbase
    ("range", rf"maximum block range: {_N}"),  # PublicNode
    ("range", rf"query exceeds max block range {_N}"),  # reth, Hyperliquid
    ("range", rf"block range greater than {_N} max"),  # Swell
    ("range", rf"range is too large, max is {_N} blocks"),  # Merkle
    ("range", rf"query must be smaller than size {_N}"),  # Harmony
    ("range", rf"block range is too wide \(maximum {_N}\)"),  # Moonriver
    ("range", rf"up to a {_N} block range"),  # Alchemy (free), Aurora
    ("range", rf"maximum \[from, to\] blocks distance: {_N}"),  # Ankr (TAC)
    ("range", rf"range \d+ exceeds limit of {_N}"),  # Infura (2026, -32602)
    ("range", rf"block range exceeds (?:server limit, narrow your filter: )?{_N}"),  # Somnia, erigon
    ("range", rf"ranges over {_N} blocks"),  # dRPC (free)
    ("range", r"block range (is )?too (wide|large)"),  # Ankr, Optimism, Base
    ("range", r"block range limit exceeded"),  # Chainstack
    ("range", r"range limit exceeded|exceeds maximum rpc range|range exceeds max|max range"),  # Besu, generic
    ("range", r"retry with the range"),  # reth, with a from-to hint
)
_METHOD = r"[a-z][a-z0-9]*_[a-z0-9_]+"  # eth_getBlockReceipts, debug_traceCall, trace_block
_MISSING_METHOD = (
    rf"\bmethod {_METHOD} (?:does not exist|is not available|is not supported|not supported|not found)"  # geth, Hardhat
    rf"|\b(?:method not found|unsupported method|method not supported)\b"  # EIP-1474; Alchemy "Unsupported method"
    rf"|\b{_METHOD} (?:is not supported|is not available|does not exist)"  # "eth_getBlockReceipts is not supported"
)
_METHOD_NOT_FOUND_CODES = frozenset({-32601, -32004})


_NO_STATE = (
    r"missing ?trie ?node"  # geth; Nethermind's MissingTrieNodeException
    r"|historical state [0-9a-fx]* ?(is )?not available|state [0-9a-fx]* ?is not available"  # geth
    r"|changes purged for block"  # Erigon
    r"|state at block #?\d+ is pruned"  # reth
    r"|no state available for block"  # Nethermind
    r"|world state unavailable"  # Besu
    r"|running with state pruning"  # OpenEthereum, Parity
)
_ANVIL_HEIGHT = r"block height is (\d+) but requested was (\d+)"


def _found(pattern: str, text: str) -> re.Match[str] | None:
    """``pattern`` (one of the texts above) in ``text``, case-insensitively."""
    return _compiled(pattern).search(text)


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _no_state(text: str, data: Any) -> bool:
    """Whether a node's error says it keeps no state for the asked block (see :class:`StateUnavailable`). anvil's
    ``BlockOutOfRangeError`` counts only for a block at or below its height: above it, anvil is rolling a
    reorganization back."""
    if _found(_NO_STATE, text) or (isinstance(data, str) and _found(_NO_STATE, data)):
        return True
    height = _found(_ANVIL_HEIGHT, text)
    return height is not None and int(height.group(2)) <= int(height.group(1))


def _count(text: str) -> int | None:
    digits = text.lower().replace(",", "").replace("_", "").replace(".", "")
    if digits.endswith("k"):
        return int(digits[:-1]) * 1000 if digits[:-1].isdigit() else None
    return int(digits) if digits.isdigit() else None


_HINT_BRACKETS = r"\[\s*(0x[0-9a-f]+)\s*,\s*(0x[0-9a-f]+)\s*\]"
_HINT_RETH = r"retry with the range (\d+)\s*-\s*(\d+)"


def _number(value: Any) -> int | None:
    try:
        if isinstance(value, int):
            return value
        if isinstance(value, str):
            return int(value, 16) if value.lower().startswith("0x") else int(value)
    except ValueError:
        return None
    return None


def parse_hint(message: str, data: Any) -> tuple[int, int] | None:
    """A block range the service suggested: ``data.from/to``, ``[0x.., 0x..]`` in the text, or reth's ``a-b``."""
    if isinstance(data, Mapping):
        lo, hi = _number(data.get("from")), _number(data.get("to"))
        if lo is not None and hi is not None:
            return lo, hi
    for pattern, base in ((_HINT_BRACKETS, 16), (_HINT_RETH, 10)):
        m = _found(pattern, message)
        if m:
            return int(m.group(1), base), int(m.group(2), base)
    return None


def parse_backoff(headers: Mapping[str, str] | None, data: Any) -> float | None:
    """Seconds to wait: ``data.backoff_seconds`` (flat or under ``rate``), else the Retry-After header."""
    if isinstance(data, Mapping):
        for holder in (data, data.get("rate")):
            if isinstance(holder, Mapping) and isinstance(holder.get("backoff_seconds"), int | float):
                return float(holder["backoff_seconds"])
    retry_after = (headers or {}).get("retry-after") or (headers or {}).get("Retry-After")
    if retry_after:
        try:
            return max(0.0, float(retry_after))
        except ValueError:
            import email.utils  # for a dated Retry-After only: 7 ms of every run's start-up otherwise

            when = email.utils.parsedate_to_datetime(retry_after)
            return max(0.0, when.timestamp() - time.time())
    return None


def classify(
    *,
    http_status: int = 200,
    code: int | None = None,
    message: str = "",
    data: Any = None,
    headers: Mapping[str, str] | None = None,
) -> RPCError:
    """The error for an HTTP status and (if any) a JSON-RPC error object."""
    kw: dict[str, Any] = {"code": code, "data": data, "http_status": http_status}
    text = message or f"HTTP {http_status}"
    if http_status in (401, 403):
        return KeyRefused(f"the service refused the API key ({text.strip()}); check the key and its settings", **kw)
    if http_status == 402 or _found(_QUOTA, text):
        return QuotaExhausted(f"quota exhausted ({text.strip()}); wait for the daily reset or upgrade", **kw)
    if http_status == 429 or _found(_RATE, text):
        return RateLimited(text, backoff=parse_backoff(headers, data), **kw)
    for reason, pattern in _LIMIT_TEXTS:
        if match := _found(pattern, text):
            width = _count(match.group(1)) if match.groups() and match.group(1) else None
            return LimitExceeded(text, reason=reason, hint=parse_hint(text, data), max_blocks=width, **kw)
    if code in _METHOD_NOT_FOUND_CODES or _found(_MISSING_METHOD, text):
        return MethodNotFound(text, **kw)
    if http_status in (404, 405) and _found(rf"\b{_METHOD}\b", text):
        # A gateway routing by method refuses the request in HTTP's terms, naming the method; a bare 404 (a wrong
        # path) names none and stays an unexpected status.
        return MethodNotFound(text, **kw)
    if _no_state(text, data):
        said = text.strip()[:200]
        return StateUnavailable(
            f"the node keeps no state for this block ({said}): it is a full node, not an archive; read this block's "
            "state from an archive node, or ask for blocks within the node's recent window",
            said=said,
            **kw,
        )
    if code == -32602:
        return InvalidParams(text, **kw)
    if http_status >= 500:
        return ServiceUnavailable(text, **kw)
    if code == -32005:  # Infura's ambiguous code with a text we do not know: retried a few times, not waited out
        return TransientError(f"{text} (an unrecognised -32005)", **kw)
    if http_status != 200:
        return ServerError(f"unexpected HTTP {http_status}: {text.strip()[:200]}", **kw)
    return ServerError(text, **kw)
