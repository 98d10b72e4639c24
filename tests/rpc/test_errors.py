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
    StateUnavailable,
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
    # -32005 with a text we do not know: retried a few times as an error, never waited out as a rate limit
    unknown = classify(code=-32005, message="something new")
    assert isinstance(unknown, TransientError)
    assert not isinstance(unknown, RateLimited)


def test_error_text_names_method_and_blocks_never_the_key() -> None:
    error = classify(code=-32005, message="query timeout exceeded")
    error.attach(method="eth_getLogs", blocks=(10, 20), endpoint="https://x.example/v3/s3cret", secret="s3cret")
    assert (
        str(error)
        == "eth_getLogs for blocks 10..20 via https://x.example/v3/<redacted>: query timeout exceeded [-32005]"
    )


# Every provider's eth_getLogs limit text (as the providers word them; docs/research/providers.md and the texts
# Ponder's getLogsRetryHelper matches), with the reason and the widest range the text allows, if it says one.
PROVIDER_TEXTS: list[tuple[str, int | None, str, str, int | None]] = [
    ("Infura", -32005, "query returned more than 10000 results. Try with this block range [0x1, 0x2].", "results",
     None),
    ("zkSync", -32602, "Query returned more than 10000 results. Try with this block range [0x1, 0x2].", "results",
     None),
    ("reth", -32602, "query exceeds max results 20000, retry with the range 100-200", "results", None),
    ("LlamaRPC", -32602, "query exceeds max results 20000", "results", None),
    ("erigon", -32602, "query returns too many logs, narrow your filter: 20000", "results", None),
    ("Alchemy paid", -32602, "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block "
     "range and no limit on the response size", "results", None),
    ("1RPC", -32000, "response size should not greater than 10000000 bytes", "results", None),
    ("Optimism", -32000, "backend response too large", "results", None),
    ("Arbitrum", -32000, "logs matched by query exceeds limit of 10000", "results", None),
    ("Infura timeout", -32005, "query timeout exceeded", "timeout", None),
    ("Avalanche", -32000, "requested too many blocks from 0 to 5000, maximum is set to 2048", "range", 2048),
    ("Cloudflare", -32000, "Max range: 800", "range", 800),
    ("thirdweb", -32000, "Maximum allowed number of requested blocks is 1000", "range", 1000),
    ("QuickNode", -32614, "eth_getLogs is limited to a 10,000 range", "range", 10_000),
    ("BlockPI", -32000, "eth_getLogs is limited to 1024 block range", "range", 1024),
    ("Blast paid", -32000, "block range 20000 exceeds the range allowed for your plan (20000 > 5000)", "range", 5000),
    ("Coinbase", -32000, "please limit the query to at most 1000 blocks", "range", 1000),
    ("PublicNode", -32000, "exceed maximum block range: 50000", "range", 50_000),
    ("Hyperliquid", -32602, "query exceeds max block range 1000", "range", 1000),
    ("Swell", -32000, "block range greater than 10000 max", "range", 10_000),
    ("Merkle", -32000, "eth_getLogs range is too large, max is 10k blocks", "range", 10_000),
    ("Harmony", -32000, "query must be smaller than size 1024", "range", 1024),
    ("Moonriver", -32000, "block range is too wide (maximum 1024)", "range", 1024),
    ("Alchemy free", -32600, "You can make eth_getLogs requests with up to a 500 block range. Based on your "
     "parameters, this block range should work: [0x1a30dfd, 0x1a30ff0]", "range", 500),
    ("Aurora", -32000, "up to a 2,000 block range", "range", 2000),
    ("Ankr TAC", -32000, "maximum [from, to] blocks distance: 5000", "range", 5000),
    ("Infura 2026", -32602, "range 1000000 exceeds limit of 10000", "range", 10_000),
    ("Somnia", -32000, "block range exceeds 1000", "range", 1000),
    ("erigon range", -32602, "query block range exceeds server limit, narrow your filter: 1000", "range", 1000),
    ("dRPC free", 35, "ranges over 10000 blocks are not supported on freetier", "range", 10_000),
    ("Ankr", -32600, "block range is too wide", "range", None),
    ("Optimism range", -32000, "Block range is too large", "range", None),
    ("Base", -32000, "block range too large", "range", None),
    ("Chainstack", -32602, "Block range limit exceeded.", "range", None),
    ("Besu", -32005, "Requested range exceeds maximum RPC range limit", "range", None),
]  # fmt: skip


@pytest.mark.parametrize(("provider", "code", "text", "reason", "width"), PROVIDER_TEXTS, ids=[t[0] for t in
                         PROVIDER_TEXTS])  # fmt: skip
def test_every_provider_limit_text_is_a_limit(
    provider: str, code: int, text: str, reason: str, width: int | None
) -> None:
    error = classify(code=code, message=text)
    assert isinstance(error, LimitExceeded), provider
    assert error.reason == reason
    assert error.max_blocks == width


def test_the_splitter_cuts_at_the_widest_range_a_text_allows() -> None:
    from chainframe.datasets import BlockRange
    from chainframe.engine._logs import _cut

    piece = BlockRange(1000, 9999)
    assert _cut(piece, None, 800) == 1799  # Cloudflare's "Max range: 800"
    assert _cut(piece, (1000, 1500), 800) == 1500  # a from-to hint wins
    assert _cut(piece, None, 20_000) == 5499  # wider than the piece: halve
    assert _cut(BlockRange(5, 5), None, 1) is None


MISSING_METHOD = [
    ("geth, Erigon, Infura", -32601, "the method eth_getBlockReceipts does not exist/is not available"),
    ("Hardhat 2.29", -32004, "Method eth_getBlockReceipts is not supported"),
    ("Ganache 7.9: a parse-error code", -32700, "The method eth_getBlockReceipts does not exist/is not available"),
    ("EIP-1474 text, another code", -32000, "Method not found"),
    ("Alchemy", -32600, "Unsupported method: trace_block. See available methods at https://docs.alchemy.com/"),
    ("named, no code", None, "eth_getBlockReceipts is not supported"),
]


@pytest.mark.parametrize(("node", "code", "text"), MISSING_METHOD, ids=[m[0] for m in MISSING_METHOD])
def test_a_missing_method_in_every_real_node_wording(node: str, code: int | None, text: str) -> None:
    assert isinstance(classify(code=code, message=text), MethodNotFound), node


def test_not_supported_alone_is_not_a_missing_method() -> None:
    # A genuine parse error stays one; limits that say "not supported" stay limits (dRPC), as do other refusals.
    assert type(classify(code=-32700, message="parse error")) is ServerError
    assert isinstance(
        classify(code=35, message="ranges over 10000 blocks are not supported on freetier"), LimitExceeded
    )
    assert type(classify(code=-32000, message="tracer not supported")) is ServerError
    assert type(classify(code=-32602, message="Hardhat currently only supports the default tracer")) is InvalidParams


def test_a_gateways_http_404_or_405_is_a_missing_method_only_when_it_names_one() -> None:
    # A gateway routing by method refuses the request in HTTP's terms; a bare 404 is a wrong URL, not a method.
    for status, text in ((404, "Not Found: eth_getBlockReceipts is not served by this endpoint"),
                         (405, "Method Not Allowed: debug_traceBlockByNumber")):  # fmt: skip
        assert isinstance(classify(http_status=status, message=text), MethodNotFound), status
    for status, text in ((404, "404 page not found"), (405, "Method Not Allowed")):
        error = classify(http_status=status, message=text)
        assert type(error) is ServerError, status
        assert f"unexpected HTTP {status}" in str(error)


NO_STATE = [
    # (node, code, message, data): docs/research/pruned-state.md
    ("geth", -32000, "missing trie node b03d68ac51042467d7637d4ef9e1c52370abc410f263166965cb1e280b1f6d17 (path )",
     None),
    ("geth recent", -32000, "missing trie node 3f8a (path) state 0x3f8a is not available, not found", None),
    ("erigon", -32000, "account changes purged for block 1200", None),
    ("reth", -32000, "state at block #1200 is pruned", None),
    ("nethermind", -32002, "No state available for block 0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd",
     None),
    ("nethermind before 2026", -32603, "Internal error",
     "Nethermind.Trie.MissingTrieNodeException: Node A: P:2 H:0x992e is missing from the DB"),
    ("besu", -32000, "World state unavailable", None),
    ("openethereum", -32000, "This request is not supported because your node is running with state pruning. Run "
     "with --pruning=archive.", None),
    ("anvil reloaded", -32602, "BlockOutOfRangeError: block height is 10 but requested was 5", None),
]  # fmt: skip


@pytest.mark.parametrize(("node", "code", "message", "data"), NO_STATE, ids=[n[0] for n in NO_STATE])
def test_a_node_without_old_state_says_so_in_its_own_words(node: str, code: int, message: str, data: object) -> None:
    error = classify(code=code, message=message, data=data)
    assert isinstance(error, StateUnavailable), (node, type(error))
    assert "archive" in str(error)
    assert message[:40] in str(error)  # the node's own words are kept


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (-32602, "BlockOutOfRangeError: block height is 10 but requested was 12"),  # anvil rolling a reorg back
        (-32000, "header not found"),  # geth: an unknown block, not pruned state (geth keeps the headers)
    ],
)
def test_a_block_the_node_does_not_have_is_not_pruned_state(code: int, message: str) -> None:
    assert not isinstance(classify(code=code, message=message), StateUnavailable)
