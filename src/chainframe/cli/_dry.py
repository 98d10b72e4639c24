"""``chainframe extract --dry``: the plan of a run (chunks, calls, estimated credits), with nothing fetched or written.

The plan is the one a run would make: the same range resolution, the same series folders and slots, the same
decision per slot (new, extend, skip). The node is asked only what the range needs to become numbers: its head, and
the finalized block when the range has no explicit end. Call counts are exact for the per-block datasets and a floor
for eth_getLogs, whose pieces follow the size of the answers; credits use Infura's published weights.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from chainframe._errors import InputError
from chainframe.engine._api import _aligned, _inputs, aextract, endpoint_of
from chainframe.engine._plan import DEFAULT_CHUNK_SIZE, ChunkTask, plan, slots
from chainframe.engine._ranges import chain_state, parse_range, resolve
from chainframe.engine._run import Wanted
from chainframe.rpc import AsyncClient, Pacing
from chainframe.store import load_series, series_name

# Each dataset's method, and what one block costs in calls: one, one per address asked (proofs), one per call
# traced (traces); eth_getLogs answers a span of blocks per call ("span").
CALLS: Mapping[str, tuple[str, str]] = {
    "blocks": ("eth_getBlockByNumber", "block"),
    "transactions": ("eth_getBlockByNumber", "block"),
    "receipts": ("eth_getBlockReceipts", "block"),
    "logs": ("eth_getLogs", "span"),
    "uncles": ("eth_getBlockByNumber", "block"),  # then one eth_getUncleByBlockNumberAndIndex per uncle
    "account_proofs": ("eth_getProof", "addresses"),
    "storage_proofs": ("eth_getProof", "addresses"),
    "call_traces": ("debug_traceCall", "calls"),
    "prestate_accounts": ("debug_traceCall", "calls"),
    "prestate_storage": ("debug_traceCall", "calls"),
    "erc20_transfers": ("eth_getLogs", "span"),
    "erc721_transfers": ("eth_getLogs", "span"),
    "erc1155_transfers": ("eth_getLogs", "span"),
}
BATCH = 50  # the client's default batch size: a batch costs one call more (Infura counts 30 calls as 31)


@dataclass
class Estimate:
    dataset: str
    series: str
    tasks: list[ChunkTask]
    skipped: int
    blocks: int
    method: str
    calls: int
    floor: bool
    """``calls`` is a floor: eth_getLogs splits a span where the answers are large."""

    @property
    def credits(self) -> int:
        pacing = Pacing()
        batches = 0 if self.floor else math.ceil(self.calls / BATCH)
        return self.calls * pacing.credit_costs.get(self.method, pacing.default_cost) + batches * pacing.default_cost


def _estimate(dataset: str, name: str, tasks: list[ChunkTask], skipped: int, filters: Mapping[str, Any]) -> Estimate:
    method, per = CALLS[dataset]
    blocks = sum(t.end - t.fetch_start + 1 for t in tasks)
    calls = len(tasks) if per == "span" else blocks * (len(filters[per]) if per in ("addresses", "calls") else 1)
    return Estimate(dataset, name, tasks, skipped, blocks, method, calls, floor=per == "span")


class _Recording(AsyncClient):
    """The client, remembering which methods it was asked to call (the plan says what it cost)."""

    asked: list[str]

    async def request(self, method: str, params: Sequence[Any] = ()) -> Any:
        self.asked.append(method)
        return await super().request(method, params)

    async def batch(self, calls: Sequence[tuple[str, Sequence[Any]]], *args: Any, **kwargs: Any) -> Any:
        self.asked.extend(method for method, _ in calls)
        return await super().batch(calls, *args, **kwargs)


async def _numbers(args: argparse.Namespace, options: Mapping[str, Any]) -> tuple[Any, int, list[str]]:
    """The range as numbers, the head, and the calls it took to learn them."""
    spec = parse_range(args.blocks)
    endpoint = endpoint_of(args.rpc, args.network, None)
    options = dict(options)
    if isinstance(args.rpc, str) and args.rpc.startswith(("ws://", "wss://")):
        options.setdefault("transport", "ws")
    client = _Recording(endpoint, **options)
    client.asked = []
    async with client:
        safe = None
        if spec.end is None and spec.count is None:  # to the safe end: read as a run reads it, in one batch
            state = await chain_state(client, args.confirmations)
            head, safe = state.head, state.safe
        else:
            head = int(await client.block_number())
        if spec.end == "latest":  # known now: not asked twice
            spec = dataclasses.replace(spec, end=head)
        blocks = await resolve(spec, client, confirmations=args.confirmations, head=head, safe=safe)
    return blocks, head, client.asked


def dry_run(args: argparse.Namespace, filters: Mapping[str, Any], options: Mapping[str, Any]) -> int:
    per_dataset = _inputs(args.datasets, filters, aextract)  # refused here exactly as a run would refuse it
    if args.chunk_size is not None and (isinstance(args.chunk_size, bool) or args.chunk_size < 1):
        raise InputError(f"chunk_size must be a whole number, at least 1; got {args.chunk_size!r}")
    blocks, head, asked = anyio.run(_numbers, args, options)
    wanted = [Wanted(dataset=n, filters=f, u256=args.u256, chunk_size=args.chunk_size) for n, f in per_dataset.items()]
    if args.align:
        blocks = _aligned(blocks, wanted)
    out = Path(args.out)
    estimates = []
    for want in wanted:
        name = series_name(want.dataset, want.filters, want.u256)
        series = load_series(out / name)
        meta = series.meta
        size = want.chunk_size or (meta.chunk_size if meta else DEFAULT_CHUNK_SIZE[want.dataset])
        if meta is not None and size != meta.chunk_size:
            raise InputError(f"{series.folder} is in chunks of {meta.chunk_size:,} blocks, not {size:,}: drop "
                             "--chunk-size (or give it that value), or extract into another --out")  # fmt: skip
        tasks, _ = (
            plan(want.dataset, blocks, series=series, chain_id=meta.chain_id if meta else 0, chunk_size=size,
                 filters=want.filters, u256=want.u256, overwrite=args.overwrite, head=head)
            if blocks is not None else ([], [])
        )  # fmt: skip
        asked_slots = {s.start // size for s in slots(blocks, size)} if blocks is not None else set()
        skipped = len(asked_slots - {t.start // size for t in tasks})
        estimates.append(_estimate(want.dataset, name, tasks, skipped, want.filters))
    print(_report(args, blocks, head, asked, estimates))
    return 0


def _report(args: argparse.Namespace, blocks: Any, head: int, asked: list[str], estimates: list[Estimate]) -> str:
    where = f"blocks {blocks.start}..{blocks.end}" if blocks is not None else "no whole chunk below the end (--align)"
    lines = [f"plan: {where} (head {head}) into {args.out}; nothing fetched or written (--dry)"]
    for e in estimates:
        reasons = {r: sum(t.reason == r for t in e.tasks) for r in ("new", "extend", "overwrite", "repair")}
        chunks = ", ".join(f"{n} {r}" for r, n in reasons.items() if n) or "none"
        fetch = f"{'>= ' if e.floor else ''}{e.calls:,} {e.method}"
        lines.append(
            f"  {e.series:<26} chunks: {chunks}; {e.skipped} stored; {e.blocks:,} blocks to fetch: {fetch} calls, "
            f"{'>= ' if e.floor else ''}{e.credits:,} credits"
        )
    floor = any(e.floor for e in estimates)
    calls, credits = sum(e.calls for e in estimates), sum(e.credits for e in estimates)
    at_least = ">= " if floor else ""
    lines.append(f"  total: {at_least}{calls:,} calls, {at_least}{credits:,} credits (Infura's weights)")
    paces = [(args.credits_per_second, credits, "credits"), (args.requests_per_second, calls, "calls")]
    for rate, amount, unit in paces:
        if rate:
            lines.append(f"  at {rate:,g} {unit}/s: {'at least ' if floor else ''}{amount / rate:,.0f} s")
    lines.append(
        f"  to plan it the node was asked: {', '.join(asked)}. A run also checks the stored series against the chain "
        "and reads the headers of blocks above the finalized one (not counted here)."
    )
    if getattr(args, "verify", False):
        lines.append("  --verify adds a header fetch per block (and its receipts, for logs): not counted here.")
    return "\n".join(lines)
