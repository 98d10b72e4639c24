"""One answer per call: the datasets of a run read the same blocks, and in a run that verifies are each other's proof.

A run that verifies asks for the same blocks again and again: the transactions' full blocks are the receipts' proof,
the receipts are the logs', and every dataset's proof starts from the headers the blocks dataset reads. Through
:class:`SharedAnswers` each such call (``eth_getBlockByNumber``, ``eth_getBlockReceipts`` or ``trace_block`` of one
block) is asked once and its answer handed to every asker of the run. A run that does not verify shares the same way
what several of its series read (each block's full body for transactions and four_byte_counts, its traces for
traces, native_transfers and contracts):

- each series of the run says which kinds of calls it reads (:meth:`SharedAnswers.expect`) and makes its calls
  inside :func:`asking`; an answer is dropped once every series expected to read it has;
- at most :data:`KEPT_BYTES` of answers are kept: memory is bounded by that, never by the range. When that many
  are kept, new answers are not: a series ahead of the others must not push out what those behind are about to
  read (they ask the node again for what was not kept);
- a call asked and not yet answered is waited for, not asked twice;
- an answer of a block above the run's finalized block (where the chain may move between askers) is handed to
  another asker with the block hash it carries, as a witness of the asker's chunk (:func:`asking`): the chunk is
  written only if the chain it commits to still has that block (same block hash, same answer), else it is read
  again, as when its own reads saw the chain move. An answer that carries no block hash (an empty block's receipts)
  is asked again, and so are the headers the chunks' checks read: never shared above the finalized block;
- answers of blocks whose rows failed a check, or moved to another fork, are forgotten (:meth:`SharedAnswers.forget`)
  before they are fetched again, so a retry asks the node.

Sharing changes no check: every asker checks an answer against what it asked, as it checks one of its own, and an
asker's answers keep its calls' order (their ids are numbered again in that order). What it saves beyond the calls:
a piece's calls made inside :func:`receiving` note which shared answers they were given, so what one dataset proved
of them (:meth:`Received.mark`: these transactions against their headers' roots) another that reads the very same
answers does not prove again (:meth:`Received.proven`); answers asked again are new answers, proven again.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import anyio

from chainframe.datasets import BlockRange, Dataset
from chainframe.rpc import Pacing, split_answers

SHARED_METHODS = frozenset(
    {
        "eth_getBlockByNumber",
        "eth_getBlockReceipts",
        "trace_block",
        "trace_replayBlockTransactions",
        "debug_traceBlockByNumber",
    }
)
"""The block methods whose answers the datasets of a run read for each other."""

KEPT_BYTES = 64_000_000
"""Answers kept for the askers still to read them, at most (about 700 blocks of the benchmark chain's receipts)."""

THREAD_BYTES = 1_000_000
"""Answers at least this large are cut into envelopes in a worker thread."""

REMEMBERED = 20_000
"""Calls whose askers are remembered (so an answer the others read already, when it was not kept, is not kept
for them): about 3 MB."""

_HEADS = (b'{"jsonrpc":"2.0","id":', b'{"id":')
"""How an envelope begins when it can be numbered again without parsing it (anvil, geth, Erigon, Nethermind): others
are handed on, not shared."""

Kind = tuple[str, tuple[Any, ...]]
"""A kind of call: its method and its parameters after the block number."""
Key = tuple[str, int, tuple[Any, ...]]

_ASKER: ContextVar[str] = ContextVar("chainframe_asker", default="")
_WITNESSES: ContextVar[list[tuple[int, bytes | None, bytes | None]] | None] = ContextVar(
    "chainframe_witnesses", default=None
)

_HEADER: Kind = ("eth_getBlockByNumber", (False,))
"""What the chunks' chain checks read: above the finalized block each asks it itself."""


def reads(dataset: Dataset, pacing: Pacing | None = None) -> set[Kind]:
    """The calls per block whose answers are a block's whole that extracting ``dataset`` makes (without ``verify``):
    its own (:attr:`Dataset.block_params`, :attr:`Dataset.block_fallbacks`, and what the run's ``pacing`` makes it
    read: :meth:`Dataset.paced_reads`), and a derived dataset's those of the datasets its fetch reads."""
    found: set[Kind] = set()
    for d in (dataset, *dataset.fetched_from):
        if d.block_params is not None:
            found.add((d.method, d.block_params))
        found.update(d.block_fallbacks)
        found.update(d.paced_reads(pacing))
    return found


@contextmanager
def asking(asker: str, witnesses: list[tuple[int, bytes | None, bytes | None]] | None = None) -> Iterator[None]:
    """The calls made inside are ``asker``'s (a series of the run). ``witnesses`` (a chunk's
    :attr:`~chainframe.engine._canonical.ChunkCheck.witnesses`): where answers of blocks above the finalized one
    that another asker read are noted, ``(block, its hash, its hash)``; without it they are asked again."""
    token = _ASKER.set(asker)
    seen = _WITNESSES.set(witnesses)
    try:
        yield
    finally:
        _WITNESSES.reset(seen)
        _ASKER.reset(token)


@contextmanager
def witnessing(witnesses: list[tuple[int, bytes | None, bytes | None]]) -> Iterator[None]:
    """Inside, the witnesses of answers other askers read are noted in ``witnesses`` (one piece's, which its reader
    hands on with its rows: :mod:`chainframe.engine._pieces`), not in the chunk's."""
    token = _WITNESSES.set(witnesses)
    try:
        yield
    finally:
        _WITNESSES.reset(token)


@dataclass(slots=True, eq=False)
class _Answer:
    """One call's answer, as its askers know it (its text is kept by :class:`SharedAnswers` only while kept: a
    batch answer holding its answers' texts as well would hold itself twice)."""

    id_at: int
    """Where its id's digits start (and ``id_end``, end): numbered again for each asker."""
    id_end: int
    block_hash: bytes | None = None
    """The hash of the block it answers, once read (above the finalized block only; empty: it carries none)."""
    proven: frozenset[Hashable] = frozenset()
    """What a dataset of the run proved it to be (a :class:`~chainframe.datasets.Proof`: its header, its
    transactions, its receipts)."""


Held = tuple[_Answer, bytes]
"""An answer and its envelope's text."""


_RECEIVED: ContextVar[Received | None] = ContextVar("chainframe_received", default=None)


@dataclass
class Received:
    """The shared answers a piece's calls were given, by the batch answer holding them (kept while the piece holds
    its answers anyway): what one dataset proved of them, another that reads the very same answers need not."""

    answers: dict[int, tuple[bytes, Sequence[_Answer]]] = field(default_factory=dict)

    def _of(self, body: bytes) -> Sequence[_Answer]:
        held = self.answers.get(id(body))
        return held[1] if held is not None and held[0] is body else ()

    def proven(self, bodies: Sequence[bytes], what: Hashable) -> bool:
        """Every answer in ``bodies`` is a shared one that a dataset of the run proved to be ``what`` already."""
        return bool(bodies) and all((held := self._of(b)) and all(what in a.proven for a in held) for b in bodies)

    def mark(self, bodies: Sequence[bytes], what: Hashable) -> None:
        """``bodies`` were proven to be ``what`` (all of them, nothing failed): said to their other askers."""
        for body in bodies:
            for answer in self._of(body):
                answer.proven |= {what}


@contextmanager
def receiving() -> Iterator[Received]:
    """The shared answers given to the calls made inside (a piece's), and what is known of them."""
    received = Received()
    token = _RECEIVED.set(received)
    try:
        yield received
    finally:
        _RECEIVED.reset(token)


class SharedAnswers:
    """``client`` with its block calls' answers shared between askers (see the module). Everything else, and the
    headers of blocks above ``through``, go to ``client`` as they are."""

    def __init__(self, client: Any, *, through: int, kept_bytes: int = KEPT_BYTES) -> None:
        self._client = client
        self._through = through
        self._limit = kept_bytes
        self._kept: dict[Key, Held] = {}
        self._bytes = 0
        self._asked: dict[Key, anyio.Event] = {}
        self._bits: dict[str, int] = {}
        """Each asker's bit: who asks and who has read are sets of them as ints (thousands of small sets would be
        objects the garbage collector walks)."""
        self._askers: dict[Kind, int] = {}
        self._readers: OrderedDict[Key, int] = OrderedDict()
        """Who has read each call's answer (kept or not), for the latest :data:`REMEMBERED` calls."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def expect(self, asker: str, kinds: Iterable[Kind]) -> None:
        """``asker`` will read the answers of these kinds of calls: each is kept until all who will have read it
        (an asker not expected finds an answer only while another is still to read it)."""
        bit = self._bit(asker)
        for kind in kinds:
            self._askers[kind] = self._askers.get(kind, 0) | bit

    def read_by_others(self, method: str, params: Sequence[Any]) -> bool:
        """Whether a series of the run other than the one asking reads this kind of call (a method and its
        parameters after the block's number): its answers are then kept for it, and cost the asker no call of its
        own (traces reads every full block where transactions read them anyway)."""
        expected = self._askers.get((method, tuple(_frozen(p) for p in params)), 0)
        return bool(expected & ~self._bits.get(_ASKER.get(), 0))

    def _bit(self, asker: str) -> int:
        return self._bits.setdefault(asker, 1 << len(self._bits))

    async def batch_bytes(self, calls: Sequence[tuple[str, Sequence[Any]]]) -> list[bytes]:
        """As :meth:`chainframe.rpc.AsyncClient.batch_bytes`, each call asked of the node once while its answer is
        kept; answers given by others come as one batch answer, numbered in the calls' order."""
        keys = [self._key(method, params) for method, params in calls]
        wanted = [k for k in keys if k is not None]
        if not wanted or len(wanted) != len(calls):
            return list(await self._client.batch_bytes(calls))
        asker = _ASKER.get()
        waits = {self._asked[k] for k in wanted if k in self._asked}
        mine = [i for i, k in enumerate(wanted) if k not in self._kept and k not in self._asked]
        if len(mine) == len(calls):  # nothing to share: asked as one, handed on as received
            bodies, cut = await self._ask(calls, wanted)
            for body, each in zip(bodies, cut or (), strict=False):
                _note(body, [answer for answer, _ in each])
            self._read(wanted, asker)
            return bodies
        found: list[Held | None] = [None] * len(calls)
        if mine:
            _, cut = await self._ask([calls[i] for i in mine], [wanted[i] for i in mine])
            for i, answer in zip(mine, [h for each in cut or () for h in each], strict=False):  # none: not cut
                found[i] = answer
        for event in waits:
            await event.wait()
        witnesses = _WITNESSES.get()
        for i, key in enumerate(wanted):
            if found[i] is None and (held := self._kept.get(key)) is not None:
                if key[1] <= self._through:
                    found[i] = held
                elif witnesses is not None and (stamp := _stamp(held)):  # the chunk commits to this block's hash
                    witnesses.append((key[1], stamp, stamp))
                    found[i] = held
        missing = [i for i, answer in enumerate(found) if answer is None]
        if missing:  # not kept, forgotten, failed or not shareable meanwhile: asked again, as any call
            again = await self._client.batch_bytes([calls[i] for i in missing])
            cut = await _cut(again, len(missing))
            if cut is None:
                return list(await self._client.batch_bytes(calls))
            for i, answer in zip(missing, [a for each in cut for a in each], strict=True):
                found[i] = answer
        given = [a for a in found if a is not None]
        self._read(wanted, asker)
        body = _numbered(given)
        _note(body, [answer for answer, _ in given])
        return [body]

    async def _ask(
        self, calls: Sequence[tuple[str, Sequence[Any]]], keys: list[Key]
    ) -> tuple[list[bytes], list[list[Held]] | None]:
        """Ask the node, keeping each answer for the others (who wait for it meanwhile): the batch answers as
        received, and each one's answers (None: they could not be cut into them, and are not kept)."""
        asked = {k: anyio.Event() for k in keys}
        self._asked.update(asked)
        try:
            bodies = list(await self._client.batch_bytes(calls))
            cut = await _cut(bodies, len(keys))
            if cut is None:
                return bodies, None
            for key, answer in zip(keys, [h for each in cut for h in each], strict=True):
                self._keep(key, answer)
            return bodies, cut
        finally:
            for key, event in asked.items():
                if self._asked.get(key) is event:
                    del self._asked[key]
                event.set()

    def _keep(self, key: Key, answer: Held) -> None:
        self._drop(key)
        if self._bytes + len(answer[1]) <= self._limit:
            self._kept[key] = answer
            self._bytes += len(answer[1])

    def _drop(self, key: Key) -> None:
        answer = self._kept.pop(key, None)
        if answer is not None:
            self._bytes -= len(answer[1])

    def _read(self, keys: Sequence[Key], asker: str) -> None:
        """``asker`` has the answers of ``keys``: one that all its expected askers have read is dropped."""
        bit = self._bit(asker)
        for key in keys:
            readers = self._readers.get(key)
            if readers is None:
                readers = 0
                if len(self._readers) >= REMEMBERED:
                    self._readers.popitem(last=False)
            readers = self._readers[key] = readers | bit
            expected = self._askers.get((key[0], key[2]), 0)
            if readers & expected == expected:
                self._drop(key)

    def forget(self, blocks: BlockRange) -> None:
        """Drop the answers of ``blocks``: their rows failed a check or their chain moved; they are asked again."""
        for key in [k for k in self._kept if blocks.start <= k[1] <= blocks.end]:
            self._drop(key)

    def _key(self, method: str, params: Sequence[Any]) -> Key | None:
        if method not in SHARED_METHODS or not params or not isinstance(params[0], str):
            return None
        try:
            number = int(params[0], 16)
        except ValueError:  # a tag ("latest"): its block is not fixed
            return None
        kind = (method, tuple(_frozen(p) for p in params[1:]))
        if kind not in self._askers and kind != _HEADER:
            return None  # no series of the run reads it (the trace family's callTracer through a shared method)
        if number > self._through and kind == _HEADER:
            return None
        return method, number, kind[1]


def _frozen(param: Any) -> Hashable:
    """A call's parameter as a kind holds it: a list (trace_replayBlockTransactions' ``["stateDiff"]``) as a tuple, a
    mapping as its sorted items, so that a dataset's :attr:`~chainframe.datasets.Dataset.block_params` name it."""
    if isinstance(param, list | tuple):
        return tuple(_frozen(p) for p in param)
    if isinstance(param, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in param.items()))
    return param  # type: ignore[no-any-return]


async def _cut(bodies: Sequence[bytes], calls: int) -> list[list[Held]] | None:
    """:func:`_envelopes`, in a worker thread when the answers are large (receipts): off the event loop, which
    carries every request of the run, and beside Python work elsewhere (the cut releases the GIL)."""
    if sum(map(len, bodies)) < THREAD_BYTES:
        return _envelopes(bodies, calls)
    return await anyio.to_thread.run_sync(_envelopes, bodies, calls)


def _envelopes(bodies: Sequence[bytes], calls: int) -> list[list[Held]] | None:
    """Each batch answer's envelopes by id (so in the calls' order: a batch's ids are given in its calls' order, and
    the answers come in the batches' order), or None when the answers cannot be cut so (not one envelope per call,
    or envelopes that begin otherwise)."""
    out: list[list[Held]] = []
    for body in bodies:
        spans = split_answers(body)
        if spans is None:
            return None
        each: list[Held] = []
        out.append(each)
        for number, start, end in sorted(spans):
            digits = str(number).encode()
            head = next((h for h in _HEADS if body.startswith(h + digits, start, end)), None)
            if head is None:
                return None
            each.append((_Answer(len(head), len(head) + len(digits)), body[start:end]))
    return out if sum(map(len, out)) == calls else None


def _stamp(held: Held) -> bytes | None:
    """The hash of the block ``held`` answers (a full body's own, a receipt's or a trace's ``blockHash``), or None
    (an empty list, a missing block, an answer of another shape). Read once per answer, and only above the finalized
    block: a few dozen blocks a run."""
    answer, envelope = held
    if answer.block_hash is None:
        try:
            result = json.loads(envelope).get("result")
            item = result[0] if isinstance(result, list) and result else result
            text = item.get("hash" if isinstance(result, dict) else "blockHash") if isinstance(item, dict) else None
            answer.block_hash = bytes.fromhex(text[2:]) if isinstance(text, str) and text.startswith("0x") else b""
        except (ValueError, AttributeError):
            answer.block_hash = b""
    return answer.block_hash or None


def _note(body: bytes, answers: Sequence[_Answer]) -> None:
    """``body`` holds ``answers``: noted for the piece whose call it answers, if it is :func:`receiving`."""
    received = _RECEIVED.get()
    if received is not None:
        received.answers[id(body)] = (body, answers)


def _numbered(answers: Sequence[Held]) -> bytes:
    """One batch answer of these envelopes, their ids 0, 1, ... in order (decoders order rows by id)."""
    parts: list[bytes | memoryview] = [b"["]
    for number, (answer, envelope) in enumerate(answers):
        view = memoryview(envelope)
        parts += [b"," if number else b"", view[: answer.id_at], str(number).encode(), view[answer.id_end :]]
    parts.append(b"]")
    return b"".join(parts)
