"""Block ranges as users write them, parsed before anything is sent and resolved against the node.

Grammar (``B`` is always **included**, as in eth_getLogs' ``toBlock``; cryo excludes it):

==============  ===========================================================
``A``           one block
``A:B``         blocks A to B, both included
``A:+N``        N blocks from A (A .. A+N-1)
``A:``          A to the safe end (cryo: to latest; write ``A:latest`` for the tip)
``:B``          0 to B
``-N:``         the last N blocks up to the safe end
``-N:B``        the N blocks ending at B (cryo's "minus on start")
``:``           0 to the safe end
``A:B:N``       every N-th block from A: A, A+N, ... up to B (cryo's "every nth value"; B included if on the step)
``A:B/N``       N blocks in all, evenly spaced from A to B, both included (cryo's "n values total")
==============  ===========================================================

Numbers may use ``_`` separators and ``k``/``M``/``B`` suffixes (``16M``, ``1.5k``). ``A`` and ``B`` may be tags:
``earliest``, ``latest``, ``safe``, ``finalized``. The *safe end* is ``finalized`` where the node knows it, else
``latest`` minus ``confirmations``: a default run never stores blocks that can still be reorganized.

Several ranges make one set of blocks (:class:`BlockSpec`): separated by spaces or commas (``"0:10 20:30"``), or given
as a list; a Parquet file's column gives blocks too (cryo's ``file.parquet[:COLUMN]``, ``block_number`` by default,
a glob for several files).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Literal, NamedTuple

from chainframe._errors import InputError
from chainframe.datasets import BlockRange
from chainframe.rpc import MalformedResponse, RPCError, TransientError
from chainframe.store import read_table

Tag = Literal["earliest", "latest", "safe", "finalized"]
TAGS: tuple[Tag, ...] = ("earliest", "latest", "safe", "finalized")
_SUFFIX = {"k": 10**3, "K": 10**3, "m": 10**6, "M": 10**6, "b": 10**9, "B": 10**9}
_NUMBER = re.compile(r"^(\d[\d_]*(?:\.\d+)?)([kKmMbB]?)$")
DEFAULT_CONFIRMATIONS = 64

Bound = int | Tag | None


@dataclass(frozen=True)
class RangeSpec:
    """A parsed range: bounds are numbers, tags, or None (0 for a start, the safe end for an end).
    ``last`` is set for ``-N:``; ``count`` for ``A:+N``."""

    text: str
    start: Bound
    end: Bound
    last: int | None = None
    count: int | None = None
    every: int | None = None
    """``A:B:N``: every N-th block from the start."""
    values: int | None = None
    """``A:B/N``: N blocks in all, evenly spaced over the range."""

    @property
    def open_end(self) -> bool:
        """Ends at the safe end (no end given)."""
        return self.end is None and self.count is None


def _number(token: str, text: str) -> int:
    m = _NUMBER.match(token)
    if not m:
        raise InputError(
            f"block range {text!r}: {token!r} is not a block number (e.g. 1000, 16M, 1.5k) or a tag ({', '.join(TAGS)})"
        )
    try:
        value = Decimal(m.group(1).replace("_", "")) * _SUFFIX.get(m.group(2), 1)
    except InvalidOperation:
        raise InputError(f"block range {text!r}: {token!r} is not a number") from None
    if value != value.to_integral_value():
        raise InputError(f"block range {text!r}: {token!r} is not a whole block number")
    return int(value)


def _bound(token: str, text: str) -> Bound:
    token = token.strip()
    if not token:
        return None
    for tag in TAGS:
        if token == tag:
            return tag
    return _number(token, text)


def parse_range(text: str | int | tuple[int, int] | BlockRange) -> RangeSpec:
    """Parse a range; raise :class:`InputError` saying what is wrong and what is accepted."""
    if isinstance(text, BlockRange):
        return RangeSpec(f"{text.start}:{text.end}", text.start, text.end)
    if isinstance(text, tuple):
        first, last = text
        return parse_range(f"{first}:{last}")
    if isinstance(text, int) and not isinstance(text, bool):
        if text < 0:
            raise InputError(f"block {text} is negative; for the last N blocks write '-{-text}:'")
        return RangeSpec(str(text), text, text)
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"blocks must be a range like '0:999', '16M:+1000', '-1000:' or a block number; got {text!r}")
    text = text.strip()
    if ":" not in text and "/" not in text:
        if text.startswith("-"):
            raise InputError(f"block range {text!r}: for the last N blocks write '{text}:'")
        bound = _bound(text, text)
        return RangeSpec(text, bound, bound)
    if "/" not in text and text.count(":") == 1:
        return _plain(text, text)
    body, sampled = text, {}
    if "/" in text:
        body, _, n = text.rpartition("/")
        sampled = {"values": _step(n, text, "'/N' asks for N blocks in all")}
    elif text.count(":") == 2:
        body, _, n = text.rpartition(":")
        sampled = {"every": _step(n, text, "':N' takes every N-th block")}
    spec = _plain(body.strip(), text)
    if sampled and (spec.last is not None or spec.count is not None):
        raise InputError(f"block range {text!r}: a step needs a range 'A:B', e.g. '0:1000:100' or '0:1000/11'")
    return RangeSpec(**{**spec.__dict__, "text": text, **sampled}) if sampled else spec


def _step(token: str, text: str, what: str) -> int:
    value = _number(token.strip(), text)
    if value < 1:
        raise InputError(f"block range {text!r}: {what}; N must be at least 1")
    return value


def _plain(text: str, whole: str) -> RangeSpec:
    if ":" not in text:
        raise InputError(f"block range {whole!r}: a step follows a range 'A:B'")
    left, _, right = text.partition(":")
    if ":" in right:
        raise InputError(f"block range {whole!r} has more than two ':' (A:B, or A:B:N for every N-th block)")
    left, right = left.strip(), right.strip()
    if left.startswith("-"):
        last = _number(left[1:], text)
        if last < 1:
            raise InputError(f"block range {text!r}: the last {last} blocks is empty")
        return RangeSpec(text, None, _bound(right, text), last=last)
    begin = _bound(left, text)
    if right.startswith("+"):
        count = _number(right[1:], text)
        if count < 1:
            raise InputError(f"block range {text!r}: '+{count}' asks for no blocks")
        if begin is None:
            raise InputError(f"block range {text!r}: '+N' needs a start, e.g. '1000:+{count}'")
        return RangeSpec(text, begin, None, count=count)
    finish = _bound(right, text)
    if isinstance(begin, int) and isinstance(finish, int) and begin > finish:
        raise InputError(
            f"block range {text!r} starts after it ends (the end is included: '{begin}:{begin}' is one block)"
        )
    return RangeSpec(text, begin, finish)


@dataclass(frozen=True)
class BlockSpec:
    """The blocks a run asks for: one range or several, each maybe with a step (``--blocks 0:10 20:30 100:200:5``)."""

    text: str
    parts: tuple[RangeSpec, ...]

    @property
    def open_end(self) -> bool:
        """Some range ends at the safe end (no end given)."""
        return any(p.open_end for p in self.parts)

    @property
    def sampled(self) -> bool:
        """Some range asks for blocks with a step: only those are fetched."""
        return any(p.every is not None or p.values is not None for p in self.parts)


BlocksArg = str | int | tuple[int, int] | BlockRange | Sequence[str | int | BlockRange] | BlockSpec
"""What ``blocks=`` takes: a range, several (a list, or one text separated by spaces or commas), a block number."""


def parse_blocks(given: BlocksArg) -> BlockSpec:
    """Parse what ``--blocks`` / ``blocks=`` holds: one or several ranges, or Parquet files' block column."""
    if isinstance(given, BlockSpec):
        return given
    if isinstance(given, str):
        items: list[Any] = given.replace(",", " ").split() or [given]
    elif isinstance(given, list | tuple) and not (isinstance(given, tuple) and len(given) == 2 and
                                                    all(isinstance(x, int) for x in given)):  # fmt: skip
        items = list(given)
        if not items:
            raise InputError("blocks=[] asks for no blocks; give a range such as '0:999'")
    else:
        items = [given]
    parts: list[RangeSpec] = []
    for item in items:
        if isinstance(item, str) and ".parquet" in item:
            parts.extend(_file_blocks(item))
        else:
            parts.append(parse_range(item))
    return BlockSpec(" ".join(str(i) for i in items) if len(items) > 1 else parts[0].text, tuple(parts))


def _file_blocks(text: str) -> list[RangeSpec]:
    """cryo's ``path.parquet[:COLUMN]`` (``block_number`` by default; a glob for several files): the column's blocks,
    as runs of consecutive numbers."""
    import glob

    import pyarrow.parquet as pq

    path, _, column = text.rpartition(":") if not text.endswith(".parquet") else (text, "", "")
    column = column or "block_number"
    files = sorted(glob.glob(path))
    if not files:
        raise InputError(f"--blocks {text!r}: no Parquet file matches {path!r}")
    numbers: set[int] = set()
    for file in files:
        try:
            table = read_table(file, columns=[column])  # exact types: a Delta data file holds uint64 as int64
        except (OSError, KeyError, ValueError) as exc:  # a missing column: KeyError; not Parquet: ArrowInvalid
            names = ", ".join(pq.read_schema(file).names) if isinstance(exc, KeyError) else ""
            found = f"; its columns: {names}" if names else f": {exc}"
            raise InputError(f"--blocks {text!r}: cannot read column {column!r} of {file}{found}") from None
        values = table.column(0).drop_null().to_pylist()
        if any(not isinstance(v, int) or isinstance(v, bool) or v < 0 for v in values):
            raise InputError(f"--blocks {text!r}: column {column!r} of {file} does not hold block numbers")
        numbers.update(values)
    if not numbers:
        raise InputError(f"--blocks {text!r}: column {column!r} holds no block numbers")
    runs: list[list[int]] = []
    for n in sorted(numbers):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return [RangeSpec(f"{a}:{b}", a, b) for a, b in runs]


async def _tag_number(client: Any, tag: Tag, head: int | None = None) -> int | None:
    if tag == "earliest":
        return 0
    if tag == "latest":
        return int(await client.block_number()) if head is None else head
    (block,) = await client.batch([("eth_getBlockByNumber", [tag, False])])  # an error comes back as the item
    return _tag_answer(block)


def _tag_answer(block: Any) -> int | None:
    """The number of a tagged block from its raw answer: None where the node does not know the tag."""
    if isinstance(block, TransientError):
        raise block
    if isinstance(block, RPCError) or block is None:
        return None  # the node does not know this tag
    try:
        return int(block["number"], 16)
    except (KeyError, TypeError, ValueError):
        raise MalformedResponse(f"the tagged block has no number: {str(block)[:100]}") from None


class ChainState(NamedTuple):
    chain_id: int
    head: int
    safe: int
    """The highest block a default run stores: see :func:`safe_end`."""
    why: str
    confirmations: int = DEFAULT_CONFIRMATIONS
    """Blocks kept back from the head where the node has no finalized block."""

    @property
    def safe_text(self) -> str:
        """What ``safe`` is, for a summary: ``finalized N``, or, where the node answered no finalized block, the head
        minus the confirmations (never called finalized)."""
        if self.why == "finalized":
            return f"finalized {self.safe}"
        return f"no finalized block: head {self.head} minus {self.confirmations} confirmations = {self.safe}"


async def chain_state(client: Any, confirmations: int = DEFAULT_CONFIRMATIONS) -> ChainState:
    """The chain id, head and safe end, read in one batch: one request where a run used to make three (a remote
    endpoint's latency is paid once)."""
    chain_id, latest, finalized = await client.batch(
        [("eth_chainId", []), ("eth_blockNumber", []), ("eth_getBlockByNumber", ["finalized", False])]
    )
    for answer in (chain_id, latest):
        if isinstance(answer, BaseException):
            raise answer
    head = int(latest, 16)
    final = _tag_answer(finalized)
    if final is not None:
        return ChainState(int(chain_id, 16), head, final, "finalized")
    return ChainState(
        int(chain_id, 16), head, max(0, head - confirmations), f"latest - {confirmations} confirmations", confirmations
    )


async def safe_end(client: Any, confirmations: int = DEFAULT_CONFIRMATIONS) -> tuple[int, str]:
    """The highest block a default run stores, and why: finalized if known, else latest - confirmations."""
    state = await chain_state(client, confirmations)
    return state.safe, state.why


async def resolve(
    spec: RangeSpec,
    client: Any,
    *,
    confirmations: int = DEFAULT_CONFIRMATIONS,
    head: int | None = None,
    safe: int | None = None,
) -> BlockRange:
    """Numbers for a parsed range, asking the node for the head and tags it needs (``head`` and the ``safe`` end,
    when the caller already has them, are not asked again)."""

    async def number(bound: Bound) -> int | None:
        if bound is None or isinstance(bound, int):
            return bound
        value = await _tag_number(client, bound, head)
        if value is None:
            raise InputError(f"block range {spec.text!r}: the node does not know the tag {bound!r}")
        return value

    start, end = await number(spec.start), await number(spec.end)
    if spec.count is not None:
        assert start is not None
        end = start + spec.count - 1
    if end is None:
        end = safe if safe is not None else (await safe_end(client, confirmations))[0]
    if spec.last is not None:
        start = max(0, end - spec.last + 1)
    start = 0 if start is None else start
    if start > end:
        raise InputError(f"block range {spec.text!r} resolves to {start}..{end}, which is empty")
    head = int(await client.block_number()) if head is None else head
    if end > head:
        raise InputError(f"block range {spec.text!r} ends at {end}, beyond the node's head {head}")
    return BlockRange(start, end)


async def resolve_blocks(
    spec: BlockSpec,
    client: Any,
    *,
    confirmations: int = DEFAULT_CONFIRMATIONS,
    head: int | None = None,
    safe: int | None = None,
) -> list[BlockRange]:
    """Numbers for every range of ``spec``: a step's blocks one by one, the rest as ranges; sorted and merged where
    they overlap or touch."""
    found: list[BlockRange] = []
    for part in spec.parts:
        whole = await resolve(part, client, confirmations=confirmations, head=head, safe=safe)
        if part.every or part.values:
            found.extend(BlockRange(b, b) for b in sampled(part, whole))
        else:
            found.append(whole)
    merged: list[BlockRange] = []
    for r in sorted(found, key=lambda r: r.start):
        if merged and r.start <= merged[-1].end + 1:
            merged[-1] = BlockRange(merged[-1].start, max(merged[-1].end, r.end))
        else:
            merged.append(r)
    return merged


def sampled(part: RangeSpec, whole: BlockRange) -> list[int]:
    """The blocks a step takes from its resolved range: every N-th from the start, or N evenly spaced with both ends."""
    if part.every is not None:
        return list(range(whole.start, whole.end + 1, part.every))
    assert part.values is not None
    n, span = part.values, whole.end - whole.start
    if n == 1:
        return [whole.start]
    return sorted({whole.start + i * span // (n - 1) for i in range(n)})
