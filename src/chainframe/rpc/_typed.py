"""Typed wrappers for the spec's ten methods plus eth_blockNumber and eth_chainId.

Arguments are checked (and errors name the argument) before any request; results come back as the typed objects of
:mod:`chainframe.rpc._types`, with not-found as None. Written once, against :meth:`request`; the sync client wraps
these same coroutines.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from chainframe.rpc import params as p
from chainframe.rpc._errors import MalformedResponse

if TYPE_CHECKING:  # imported where used: an extraction reads raw answers and never pays for the typed classes
    from chainframe.rpc._types import AccountProof, Block, CallFrame, Log, Prestate, PrestateDiff, Receipt, Transaction

T = TypeVar("T")


def _each(build: Callable[[Any], T]) -> Callable[[Any], tuple[T, ...]]:
    return lambda raw: tuple(build(item) for item in raw)


class TypedMethods:
    async def request(self, method: str, params: Sequence[Any] = ()) -> Any:
        raise NotImplementedError

    def _attached(self, error: MalformedResponse, method: str) -> MalformedResponse:
        endpoint = getattr(self, "endpoint", None)
        if endpoint is not None:
            error.attach(method=method, blocks=None, endpoint=endpoint.display, secret=endpoint.key)
        return error

    def _typed(self, method: str, build: Callable[[Any], T], raw: Any) -> T:
        """``build(raw)``; an answer that is not the object the spec describes is a typed error, not a bare one."""
        try:
            return build(raw)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            error = MalformedResponse(f"the answer is not what the spec describes ({exc})")
            raise self._attached(error, method) from None

    async def block_number(self) -> int:
        """eth_blockNumber: the head block's number."""
        return int(await self.request("eth_blockNumber"), 16)

    async def chain_id(self) -> int:
        """eth_chainId."""
        return int(await self.request("eth_chainId"), 16)

    async def get_block(self, block: p.BlockParam, *, full_transactions: bool = False) -> Block | None:
        """eth_getBlockByNumber: the block (transactions as hashes, or full objects), or None if there is none."""
        from chainframe.rpc._types import Block  # deferred: the typed result classes; an extraction reads raw answers

        if isinstance(block, bytes) or (isinstance(block, str) and len(block) == 66):  # a block hash, not a number
            raw = await self.request("eth_getBlockByHash", [p.hash32(block, "block"), bool(full_transactions)])
            return None if raw is None else self._typed("eth_getBlockByHash", Block.from_json, raw)
        raw = await self.request("eth_getBlockByNumber", [p.block(block), bool(full_transactions)])
        return None if raw is None else self._typed("eth_getBlockByNumber", Block.from_json, raw)

    async def get_block_receipts(self, block: p.BlockParam | bytes) -> tuple[Receipt, ...] | None:
        """eth_getBlockReceipts: every receipt of a block (by number, tag or hash), in order; None if no block."""
        from chainframe.rpc._types import Receipt  # deferred: the typed result classes; an extraction reads raw answers

        ref = (
            p.hash32(block, "block")
            if isinstance(block, bytes) or (isinstance(block, str) and len(block) == 66)
            else p.block(block)
        )
        raw = await self.request("eth_getBlockReceipts", [ref])
        return None if raw is None else self._typed("eth_getBlockReceipts", _each(Receipt.from_json), raw)

    async def get_transaction_receipt(self, transaction_hash: bytes | str) -> Receipt | None:
        """eth_getTransactionReceipt: the receipt, or None (unknown or pending transaction)."""
        from chainframe.rpc._types import Receipt  # deferred: the typed result classes; an extraction reads raw answers

        raw = await self.request("eth_getTransactionReceipt", [p.hash32(transaction_hash, "transaction_hash")])
        return None if raw is None else self._typed("eth_getTransactionReceipt", Receipt.from_json, raw)

    async def get_transaction_by_block_number_and_index(self, block: p.BlockParam, index: int) -> Transaction | None:
        """eth_getTransactionByBlockNumberAndIndex."""
        # deferred: the typed result classes; an extraction reads raw answers
        from chainframe.rpc._types import Transaction

        raw = await self.request("eth_getTransactionByBlockNumberAndIndex", [p.block(block), p.index(index)])
        build = Transaction.from_json
        return None if raw is None else self._typed("eth_getTransactionByBlockNumberAndIndex", build, raw)

    async def get_transaction_by_block_hash_and_index(self, block_hash: bytes | str, index: int) -> Transaction | None:
        """eth_getTransactionByBlockHashAndIndex."""
        # deferred: the typed result classes; an extraction reads raw answers
        from chainframe.rpc._types import Transaction

        params = [p.hash32(block_hash, "block_hash"), p.index(index)]
        raw = await self.request("eth_getTransactionByBlockHashAndIndex", params)
        build = Transaction.from_json
        return None if raw is None else self._typed("eth_getTransactionByBlockHashAndIndex", build, raw)

    async def get_uncle_by_block_number_and_index(self, block: p.BlockParam, index: int) -> Block | None:
        """eth_getUncleByBlockNumberAndIndex (use ``finalized`` rather than ``safe``, as the spec advises)."""
        from chainframe.rpc._types import Block  # deferred: the typed result classes; an extraction reads raw answers

        raw = await self.request("eth_getUncleByBlockNumberAndIndex", [p.block(block), p.index(index)])
        return None if raw is None else self._typed("eth_getUncleByBlockNumberAndIndex", Block.from_json, raw)

    async def get_uncle_by_block_hash_and_index(self, block_hash: bytes | str, index: int) -> Block | None:
        """eth_getUncleByBlockHashAndIndex."""
        from chainframe.rpc._types import Block  # deferred: the typed result classes; an extraction reads raw answers

        params = [p.hash32(block_hash, "block_hash"), p.index(index)]
        raw = await self.request("eth_getUncleByBlockHashAndIndex", params)
        return None if raw is None else self._typed("eth_getUncleByBlockHashAndIndex", Block.from_json, raw)

    async def get_logs(
        self,
        *,
        from_block: p.BlockParam | None = None,
        to_block: p.BlockParam | None = None,
        block_hash: bytes | str | None = None,
        address: bytes | str | Sequence[bytes | str] | None = None,
        topics: Sequence[p.Topic] | None = None,
    ) -> tuple[Log, ...]:
        """eth_getLogs. ``topics``: up to 4 positions, each a topic, a list of topics (OR) or None (any)."""
        from chainframe.rpc._types import Log  # deferred: the typed result classes; an extraction reads raw answers

        flt = p.log_filter(
            from_block=from_block, to_block=to_block, block_hash=block_hash, address_=address, topics=topics
        )
        raw = await self.request("eth_getLogs", [flt])
        if raw is None:  # eth_getLogs answers a list, empty when nothing matches: null is a broken answer
            raise self._attached(MalformedResponse("the node answered null where eth_getLogs answers a list"),
                                 "eth_getLogs")  # fmt: skip
        return self._typed("eth_getLogs", _each(Log.from_json), raw)

    async def get_proof(
        self, address: bytes | str, storage_keys: Sequence[bytes | str] = (), block: p.BlockParam = "latest"
    ) -> AccountProof:
        """eth_getProof: the account and one storage proof per key, in the order asked."""
        # deferred: the typed result classes; an extraction reads raw answers
        from chainframe.rpc._types import AccountProof

        params = [p.address(address), p.storage_keys(storage_keys), p.block(block)]
        return self._typed("eth_getProof", AccountProof.from_json, await self.request("eth_getProof", params))

    async def trace_call(
        self,
        *,
        to: bytes | str,
        block: p.BlockParam = "latest",
        from_: bytes | str | None = None,
        data: bytes | str | None = None,
        value: int | None = None,
        gas: int | None = None,
        only_top_call: bool = False,
        with_log: bool = False,
    ) -> CallFrame:
        """debug_traceCall with callTracer: the call tree (``calls`` nested), with logs when ``with_log``."""
        # deferred: the typed result classes; an extraction reads raw answers
        from chainframe.rpc._types import CallFrame

        call = p.call_request(to=to, from_=from_, data_=data, value=value, gas=gas)
        config = {"onlyTopCall": only_top_call, "withLog": with_log}
        raw = await self.request(
            "debug_traceCall", [call, p.block(block), {"tracer": "callTracer", "tracerConfig": config}]
        )
        return self._typed("debug_traceCall", CallFrame.from_json, raw)

    async def trace_prestate(
        self,
        *,
        to: bytes | str,
        block: p.BlockParam = "latest",
        from_: bytes | str | None = None,
        data: bytes | str | None = None,
        value: int | None = None,
        gas: int | None = None,
        diff_mode: bool = False,
    ) -> Prestate | PrestateDiff:
        """debug_traceCall with prestateTracer: accounts touched (``diff_mode``: their pre and post state)."""
        # deferred: the typed result classes; an extraction reads raw answers
        from chainframe.rpc._types import Prestate, PrestateDiff

        call = p.call_request(to=to, from_=from_, data_=data, value=value, gas=gas)
        options = {"tracer": "prestateTracer", "tracerConfig": {"diffMode": diff_mode}}
        raw = await self.request("debug_traceCall", [call, p.block(block), options])
        if diff_mode:
            return self._typed("debug_traceCall", PrestateDiff.from_json, raw)
        return self._typed("debug_traceCall", Prestate.from_json, raw)
