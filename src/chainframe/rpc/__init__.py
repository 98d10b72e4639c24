"""The JSON-RPC client: endpoints and keys, HTTP and WebSocket transports, batches, classified errors, retries,
pacing, failover, and typed wrappers for every method of the service spec."""

from typing import TYPE_CHECKING

from chainframe._lazy import names_from
from chainframe.rpc._client import ANSWER_BYTES, AsyncClient, ClientStats
from chainframe.rpc._endpoint import INFURA_NETWORKS, KEY_ENV, Endpoint
from chainframe.rpc._errors import (
    InvalidParams,
    KeyRefused,
    LimitExceeded,
    MalformedResponse,
    MethodNotFound,
    QuotaExhausted,
    RateLimited,
    RPCError,
    ServerError,
    ServiceUnavailable,
    StateUnavailable,
    TerminalError,
    TransientError,
    TransportError,
    WrongURL,
)
from chainframe.rpc._pacing import DEFAULT_CREDITS, INFURA_CREDITS, PRICE_TABLES, Pacing, PriceTable
from chainframe.rpc._pool import EndpointCounts, Provider
from chainframe.rpc._retry import RetryPolicy
from chainframe.rpc._transports import MemoryTransport, Reply, Timeout, Transport

if TYPE_CHECKING:
    from chainframe.rpc._providers_file import read_providers
    from chainframe.rpc._split import split_answers
    from chainframe.rpc._sync import Client
    from chainframe.rpc._types import (
        AccessListEntry,
        AccountProof,
        Authorization,
        Block,
        CallFrame,
        CallLog,
        Log,
        Prestate,
        PrestateAccount,
        PrestateDiff,
        Receipt,
        StorageProof,
        Transaction,
        Withdrawal,
    )

__all__ = [
    "ANSWER_BYTES",
    "AccessListEntry",
    "AccountProof",
    "AsyncClient",
    "Authorization",
    "Block",
    "CallFrame",
    "CallLog",
    "Client",
    "ClientStats",
    "DEFAULT_CREDITS",
    "Endpoint",
    "EndpointCounts",
    "INFURA_CREDITS",
    "INFURA_NETWORKS",
    "InvalidParams",
    "KEY_ENV",
    "KeyRefused",
    "LimitExceeded",
    "Log",
    "MalformedResponse",
    "MemoryTransport",
    "MethodNotFound",
    "PRICE_TABLES",
    "Pacing",
    "Prestate",
    "PrestateAccount",
    "PrestateDiff",
    "PriceTable",
    "Provider",
    "QuotaExhausted",
    "RPCError",
    "RateLimited",
    "Receipt",
    "Reply",
    "RetryPolicy",
    "ServerError",
    "ServiceUnavailable",
    "StateUnavailable",
    "StorageProof",
    "TerminalError",
    "Timeout",
    "Transaction",
    "TransientError",
    "Transport",
    "TransportError",
    "Withdrawal",
    "WrongURL",
    "read_providers",
    "split_answers",
]


# Loaded on first use: the blocking client, the providers file, the batch splitter, and the typed result classes (an
# extraction reads raw answers and does not pay for them): every public name not imported above and not in _WHERE
# is a typed result class.
_WHERE = {"Client": "_sync", "read_providers": "_providers_file", "split_answers": "_split"}
_TYPES = [name for name in __all__ if name not in globals() and name not in _WHERE]
__getattr__ = names_from(__name__, _WHERE | dict.fromkeys(_TYPES, "_types"))
