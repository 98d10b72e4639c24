"""Classification of every provider answer in the research catalogue (docs/research/providers.md)."""

from __future__ import annotations

import pytest

from chainframe.rpc import (
    InvalidParams,
    KeyRefused,
    LimitExceeded,
    MethodNotFound,
    QuotaExhausted,
    RateLimited,
    ServerError,
    ServiceUnavailable,
    TransientError,
)
from chainframe.rpc._errors import classify

LIMITS = [
    # (provider, code, message, data, reason, hint)
    ("infura", -32005, "query returned more than 10000 results", None, "results", None),
    ("infura", -32005, "query timeout exceeded", None, "timeout", None),
    (
        "infura observed",
        -32005,
        "query returned more than 10000 results. Try with this block range [0xBDE5F8, 0x102DBCC].",
        {"from": "0xBDE5F8", "limit": 10000, "to": "0x102DBCC"},
        "results",
        (0xBDE5F8, 0x102DBCC),
    ),
    ("infura 2026", -32602, "range 1000000 exceeds limit of 10000", None, "range", None),
    (
        "zksync",
        -32602,
        "Query returned more than 10000 results. Try with this block range [0x118dc91, 0x1198cc3].",
        None,
        "results",
        (0x118DC91, 0x1198CC3),
    ),
    (
        "alchemy paid",
        -32602,
        "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on "
        "the response size, or you can request any block range with a cap of 10K logs in the response. Based on your "
        "parameters and the response size limit, this block range should work: [0x0, 0xd043b8]",
        None,
        "results",
        (0, 0xD043B8),
    ),
    (
        "alchemy free",
        -32600,
        "You can make eth_getLogs requests with up to a 500 block range. Based on your parameters, this block range "
        "should work: [0x1a30dfd, 0x1a30ff0]",
        None,
        "range",
        (0x1A30DFD, 0x1A30FF0),
    ),
    ("quicknode", -32614, "eth_getLogs is limited to a 10,000 range", None, "range", None),
    ("ankr", -32600, "block range is too wide", None, "range", None),
    ("ankr results", None, "query exceeds max results", None, "results", None),
    ("chainstack", -32602, "Block range limit exceeded.", None, "range", None),
    ("blast", None, "exceeds the range allowed for your plan (5000 > 3000)", None, "range", None),
    ("cloudflare", None, "Max range: 800", None, "range", None),
    ("llamarpc", -32602, "query exceeds max results 20000", None, "results", None),
    ("drpc", 35, "ranges over 10000 blocks are not supported on freetier", None, "range", None),
    ("reth range", -32602, "query exceeds max block range 100000", None, "range", None),
    (
        "reth results",
        -32602,
        "query exceeds max results 20000, retry with the range 100-200",
        None,
        "results",
        (100, 200),
    ),
    ("erigon range", -32602, "query block range exceeds server limit, narrow your filter: 1000", None, "range", None),
    ("erigon results", -32602, "query returns too many logs, narrow your filter: 20000", None, "results", None),
    ("besu", -32005, "Requested range exceeds maximum RPC range limit", None, "range", None),
]


@pytest.mark.parametrize(("provider", "code", "message", "data", "reason", "hint"), LIMITS, ids=[r[0] for r in LIMITS])
def test_limit_errors(provider: str, code: int | None, message: str, data: object, reason: str, hint: object) -> None:
    error = classify(code=code, message=message, data=data)
    assert isinstance(error, LimitExceeded), provider
    assert error.reason == reason
    assert error.hint == hint


@pytest.mark.parametrize(
    ("data", "headers", "backoff"),
    [
        ({"current_rps": 13.3, "allowed_rps": 10.0, "backoff_seconds": 30.0}, None, 30.0),
        ({"rate": {"allowed_rps": 1, "backoff_seconds": 2.5, "current_rps": 1.2}}, None, 2.5),
        ({"see": "the dashboard"}, {"retry-after": "7"}, 7.0),
        (None, None, None),
    ],
)
def test_rate_limits_carry_the_backoff(data: object, headers: dict[str, str] | None, backoff: float | None) -> None:
    error = classify(code=-32005, message="project ID request rate exceeded", data=data, headers=headers)
    assert isinstance(error, RateLimited)
    assert isinstance(error, TransientError)
    assert error.backoff == backoff


def test_infura_credit_era_and_http_statuses() -> None:
    assert isinstance(classify(http_status=429, message="Too Many Requests"), RateLimited)
    assert isinstance(classify(http_status=402, message="Payment Required"), QuotaExhausted)
    assert isinstance(
        classify(code=-32005, message="daily request count exceeded, request rate limited"), QuotaExhausted
    )
    assert isinstance(classify(http_status=401, message="invalid project id"), KeyRefused)
    assert isinstance(classify(http_status=403, code=-32002, message="rejected due to project ID settings"), KeyRefused)
    assert isinstance(classify(http_status=503, message="upstream error"), ServiceUnavailable)
    assert isinstance(classify(code=-32601, message="the method x does not exist/is not available"), MethodNotFound)
    blockhash = "invalid params: cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other"
    assert isinstance(classify(code=-32602, message=blockhash), InvalidParams)
    future = "block range extends beyond current head block"  # geth: invalid input, not a size limit
    assert isinstance(classify(code=-32602, message=future), InvalidParams)
    assert isinstance(classify(code=3, message="execution reverted"), ServerError)
    # -32005 with a text we do not know: pace (retry with backoff) rather than fail a whole run
    assert isinstance(classify(code=-32005, message="something new"), RateLimited)


def test_error_text_names_method_and_blocks_never_the_key() -> None:
    error = classify(code=-32005, message="query timeout exceeded")
    error.attach(method="eth_getLogs", blocks=(10, 20), endpoint="https://x.example/v3/s3cret", secret="s3cret")
    assert (
        str(error)
        == "eth_getLogs for blocks 10..20 via https://x.example/v3/<redacted>: query timeout exceeded [-32005]"
    )
