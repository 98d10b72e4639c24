"""trace_block documents to the frames' typed columns with the native scanner: no Polars, no Python per frame.

A traces run's transform read its documents with Polars (:mod:`chainframe.datasets._parity_frames`): loading Polars
alone took 0.4-0.5 s of a ``chainframe extract traces`` process, and its JSON reader and expressions most of the
transform's CPU. Here the scanner (``_native_rows.c``) finds the document's members, reads the batch answers it holds
straight into typed Arrow arrays (each trace's ``action`` and ``result`` as structs), and the frames' values are
picked from them by their kind with Arrow kernels and numpy; their places in the call tree come from
:mod:`chainframe.datasets._trace_tree`, as on Polars' path.

It gives the very columns Polars' path gives (with the blocks' reward traces and the headers' withdrawals, for
native_transfers), or None: wherever the scanner declines a value (a type other than the one Polars' schema reads
the key as, an escape, a value out of its column's range), the document has members it does not read, a trace or a
header is of a block not asked, a batch's envelopes came out of their ids' order, or a text would need more than
ASCII to be upper-cased as Polars does, the caller takes Polars' path, which decides as before.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from chainframe import _kernels as pc
from chainframe.datasets import _native
from chainframe.datasets._columns import COLUMNS, U256
from chainframe.datasets._native import Object, Typed
from chainframe.datasets._trace_tree import places

_READ = frozenset({"route", "numbers", "gas_used", "answers", "header_answers"})
"""The members of a document this reader takes (others: Polars' path)."""


@dataclass
class Native:
    """A piece's documents read natively: its frames (callTracer's keys, with their places), the blocks' reward
    traces and the headers' withdrawals, each as typed arrays by name."""

    frames: dict[str, pa.Array]
    rewards: dict[str, pa.Array]
    """``block_number``, ``author``, ``value``, ``rewardType``: in block order."""
    withdrawals: dict[str, pa.Array]
    """``block_number`` (of the header), ``index``, ``address``, ``amount`` (Gwei): in block order."""


_ERROR_SELECTOR = bytes.fromhex("08c379a0")  # Error(string)


def _trace_kinds(u256: U256) -> _native.Kinds:
    wei = COLUMNS["value"].kind_for(u256)
    action = {
        "from": ("from", "address"),
        "to": ("to", "address"),
        "callType": ("callType", "string"),
        "gas": ("gas", Typed("text")),
        "input": ("input", "data"),
        "value": ("value", wei),
        "init": ("init", "data"),
        "address": ("address", "address"),
        "refundAddress": ("refundAddress", "address"),
        "balance": ("balance", wei),
        "creationMethod": ("creationMethod", "string"),
        "author": ("author", "address"),
        "rewardType": ("rewardType", "string"),
    }
    result = {
        "gasUsed": ("gasUsed", Typed("text")),
        "output": ("output", "data"),
        "address": ("address", "address"),
        "code": ("code", "data"),
    }
    return {
        "action": ("action", Object(action)),
        "result": ("result", Object(result)),
        "blockNumber": ("blockNumber", Typed("number")),
        "error": ("error", "string"),
        "traceAddress": ("traceAddress", "u64_list"),
        "transactionHash": ("transactionHash", "hash"),
        "transactionPosition": ("transactionPosition", Typed("number")),
        "type": ("type", "string"),
    }


def read(bodies: Sequence[bytes], *, parity: str, errors: Mapping[str, str], u256: U256) -> Native | None:
    """The documents' frames as typed arrays by callTracer's keys (``block_number``, ``transaction_index``,
    ``transaction_hash``, ``type``, ``from``, ``to``, ``value``, ``gas``, ``gasUsed``, ``input``, ``output``,
    ``error``, ``revertReason``, ``trace_address``, ``depth``, ``subcalls``, ``reverted``, ``top``), with the reward
    traces and the withdrawals of the headers a document holds, or None (see the module). ``parity``: the route's
    name in a document; ``errors``: parity's error texts as callTracer writes them."""
    answers: list[memoryview] = []
    headers: list[memoryview] = []
    asked: list[int] = []
    figures: list[tuple[int, int, int]] = []  # (block, transaction index, gas used) of the documents' receipts' figures
    for body in bodies:
        found = _members(body, parity)
        if found is None:
            return None
        numbers, used, spans, header_spans = found
        view = memoryview(body)
        answers += [view[start:end] for start, end in spans]
        headers += [view[start:end] for start, end in header_spans]
        asked += numbers
        for number, block in zip(numbers, used, strict=True):
            figures += [(number, i, g) for i, g in enumerate(block) if g is not None]
    if len(set(asked)) != len(asked):
        return None
    scanned = _native.scan(answers, _trace_kinds(u256), _native.BATCH_LISTS, as_received=True)
    if scanned is None:
        return None
    n, traces = scanned
    kinds = traces["type"]
    block = traces["blockNumber"]
    # The asked blocks' traces in the asked order, each block's in the node's, reward traces apart. A trace of a
    # block not asked, or of none, is the per-frame path's to judge.
    wanted = np.array(asked, dtype=np.int64)
    sorter = np.argsort(wanted)
    blocks = _ints(block, np.int64)
    at = np.minimum(np.searchsorted(wanted, blocks, sorter=sorter), max(len(wanted) - 1, 0))
    known = pc.valid_rows(block) & (wanted[sorter[at]] == blocks) if len(wanted) else np.zeros(n, dtype=bool)
    if not known.all():
        return None
    ordered = np.argsort(sorter[at] if n else np.zeros(0, dtype=np.int64), kind="stable")
    rewarded = _is(kinds, b"reward")[ordered]
    rows, paid = ordered[~rewarded], ordered[rewarded]
    action = traces["action"]
    rewards = {
        "block_number": _u64(blocks[paid]),
        "author": pc.take(action.field("author"), _u64(paid)),
        "value": pc.take(action.field("value"), _u64(paid)),
        "rewardType": pc.take(action.field("rewardType"), _u64(paid)),
    }
    if rows.size != n or (rows != np.arange(n)).any():
        traces = {key: pc.take(array, _u64(rows)) for key, array in traces.items()}
    frames = _frames(traces, len(rows), figures, errors)
    withdrawals = _withdrawals(headers, asked)
    if frames is None or withdrawals is None:
        return None
    return Native(frames, rewards, withdrawals)


_HEADER_KINDS: _native.Kinds = {
    "number": ("number", Typed("text")),
    "withdrawals": (
        "withdrawals",
        {"index": ("index", Typed("text")), "address": ("address", "address"), "amount": ("amount", Typed("text"))},
    ),
}


def _withdrawals(headers: list[memoryview], asked: list[int]) -> dict[str, pa.Array] | None:
    """The withdrawals of the headers' batch answers, block by block in the asked order; None where a header is of a
    block not asked (or twice), or a withdrawal lacks a value (the per-frame path judges those)."""
    scanned = _native.scan(headers, _HEADER_KINDS, _native.BATCH, as_received=True) if headers else (0, {})
    if scanned is None:
        return None
    n, columns = scanned
    if not n:
        empty = np.zeros(0, dtype=np.uint64)
        return {"block_number": _u64(empty), "index": _u64(empty), "amount": _u64(empty),
                "address": pa.nulls(0, pa.binary(20))}  # fmt: skip
    number = columns["number"]
    numbers = [int(x) for x in _ints(number, np.int64)]
    place = {block: i for i, block in enumerate(asked)}
    if number.null_count or len(set(numbers)) != n or any(x not in place for x in numbers):
        return None
    lists = columns["withdrawals"]
    lengths = np.diff(np.frombuffer(lists.buffers()[1], dtype=np.int32)[lists.offset : lists.offset + n + 1])
    order = np.argsort(np.array([place[x] for x in numbers], dtype=np.int64), kind="stable")
    items = pc.list_flatten(pc.take(lists, _u64(order)))  # null lists: no items, as no withdrawals
    if any(items.field(k).null_count for k in ("index", "address", "amount")) or items.null_count:
        return None
    parents = np.repeat(np.array(numbers, dtype=np.uint64)[order], lengths[order])
    return {"block_number": _u64(parents), "index": items.field("index"), "address": items.field("address"),
            "amount": items.field("amount")}  # fmt: skip


_NO_VALUE = (b"DELEGATECALL", b"STATICCALL", b"CALLCODE")
"""Frames that move no ether (as datasets/_block_traces says of them)."""
_INTERNAL = {b"SELFDESTRUCT": b"selfdestruct", b"CREATE": b"create", b"CREATE2": b"create"}


def transfers(read: Native, u256: U256) -> dict[str, pa.Array]:
    """native_transfers' columns from :func:`read`'s answer, as its per-frame path gives them: each frame that moved
    ether and was not undone (a transaction's own value, 'transaction'; else by its kind), then each block's rewards
    and withdrawals (in wei)."""
    frames = read.frames
    kind = frames["type"]
    value = frames["value"]
    still = ~_flags(frames["reverted"])
    for word in _NO_VALUE:
        still &= ~_is(kind, word)
    rows = np.flatnonzero(still & _nonzero(value))
    n = len(rows)
    names = _texts(b"call", n)  # by the frame's kind, picked with kernels (not a Python object per movement)
    for word, name in _INTERNAL.items():
        names = pc.if_else(_bools(_is(kind, word)[rows]), _texts(name, n), names)
    names = pc.if_else(_bools(_flags(frames["top"])[rows]), _texts(b"transaction", n), names)
    moves = {key: pc.take(frames[key], _u64(rows)) for key in ("block_number", "transaction_index", "transaction_hash",
             "trace_address", "from", "to", "value")}  # fmt: skip
    rewards, withdrawals = read.rewards, read.withdrawals
    paid, taken = len(rewards["block_number"]), len(withdrawals["block_number"])
    # Each block's rewards, then its withdrawals, in block order, after the movements (the run sorts the rows).
    blocks = np.concatenate([_ints(rewards["block_number"], np.int64), _ints(withdrawals["block_number"], np.int64)])
    extra = np.argsort(blocks, kind="stable")
    reward_names = [b"uncle_reward" if t == "uncle" else b"block_reward" for t in rewards["rewardType"].to_pylist()]
    amounts = [int(a) * 10**9 for a in _ints(withdrawals["amount"], np.uint64)]
    wei = _wei(amounts, u256)

    def extras(on_reward: pa.Array, on_withdrawal: pa.Array) -> pa.Array:
        return pc.take(pa.concat_arrays([on_reward, on_withdrawal]), _u64(extra))

    def column(on_move: pa.Array, on_reward: pa.Array, on_withdrawal: pa.Array) -> pa.Array:
        return pa.concat_arrays([on_move, extras(on_reward, on_withdrawal)])

    u64 = pa.uint64()
    return {
        "block_number": column(moves["block_number"], rewards["block_number"], withdrawals["block_number"]),
        "transaction_index": column(moves["transaction_index"], pa.nulls(paid, u64), pa.nulls(taken, u64)),
        "transaction_hash": column(
            moves["transaction_hash"], pa.nulls(paid, pa.binary(32)), pa.nulls(taken, pa.binary(32))
        ),
        "trace_address": column(moves["trace_address"], pa.nulls(paid, pa.list_(u64)), pa.nulls(taken, pa.list_(u64))),
        "transfer_type": column(
            names,
            _strings(dict(enumerate(reward_names)), paid),
            pa.concat_arrays([_texts(b"withdrawal", taken)]),
        ),
        "withdrawal_index": column(pa.nulls(n, u64), pa.nulls(paid, u64), withdrawals["index"]),
        "from_address": column(moves["from"], pa.nulls(paid, pa.binary(20)), pa.nulls(taken, pa.binary(20))),
        "to_address": column(moves["to"], rewards["author"], withdrawals["address"]),
        "value": column(moves["value"], rewards["value"], wei),
    }


def _nonzero(values: pa.Array) -> np.ndarray:
    """Where a wei array (decimal128, or 32 bytes) holds a value other than zero (not where it is null)."""
    width = values.type.byte_width
    data = np.frombuffer(values.buffers()[1], dtype=np.uint8)[
        values.offset * width : (values.offset + len(values)) * width
    ]
    moved: np.ndarray = data.reshape(len(values), width).any(axis=1) & pc.valid_rows(values)
    return moved


def _wei(values: list[int], u256: U256) -> pa.Array:
    """Amounts of wei as the value column's type: decimal128(38, 0), or 32 bytes big-endian (``u256="binary"``)."""
    if u256 == "binary":
        data = b"".join(v.to_bytes(32, "big") for v in values)
        return pa.Array.from_buffers(pa.binary(32), len(values), [None, pa.py_buffer(data)])
    data = b"".join(v.to_bytes(16, "little", signed=True) for v in values)
    return pa.Array.from_buffers(pa.decimal128(38, 0), len(values), [None, pa.py_buffer(data)])


def creations(frames: Mapping[str, pa.Array]) -> dict[str, pa.Array]:
    """contracts' columns from :func:`read`'s frames, as its per-frame path gives them: each creation not undone
    by a revert, with its transaction's sender (the top frame's ``from``) and its codes' hashes (a creation with no
    code: the empty code's)."""
    from chainframe._keccak import keccak256  # deferred: the keccak extension loads when contracts are hashed

    kind = frames["type"]
    made = (_is(kind, b"CREATE") | _is(kind, b"CREATE2")) & ~_flags(frames["reverted"])
    rows = np.flatnonzero(made)
    top = _flags(frames["top"])
    senders = np.maximum.accumulate(np.where(top, np.arange(len(top)), 0))[rows]
    taken = {key: pc.take(frames[key], _u64(rows)) for key in ("block_number", "transaction_index",
             "transaction_hash", "trace_address", "type", "to", "from", "value", "input", "output")}  # fmt: skip

    def hashed(codes: pa.Array) -> pa.Array:
        digests = b"".join(keccak256(code or b"") for code in codes.to_pylist())  # a creation's, not a frame's
        return pa.Array.from_buffers(pa.binary(32), len(codes), [None, pa.py_buffer(digests)])

    return {
        "block_number": taken["block_number"],
        "transaction_index": taken["transaction_index"],
        "transaction_hash": taken["transaction_hash"],
        "trace_address": taken["trace_address"],
        "call_type": taken["type"],
        "contract_address": taken["to"],
        "deployer": pc.take(frames["from"], _u64(senders)),
        "factory": taken["from"],
        "value": taken["value"],
        "init_code_hash": hashed(taken["input"]),
        "code_hash": hashed(taken["output"]),
    }


def _members(
    body: bytes, parity: str
) -> tuple[list[int], list[list[int | None]], list[tuple[int, int]], list[tuple[int, int]]] | None:
    """A document's block numbers, its figures per block (gas used by each transaction, from its receipts; each
    block's list may be empty), and the spans of its trace batch answers and of its header batch answers; None
    where it is not one this reader takes."""
    members = _native.members(body)
    if members is None:
        return None
    spans = {key.decode(): (start, end) for key, start, end in members}
    if len(spans) != len(members) or not set(spans) <= _READ or "answers" not in spans or "numbers" not in spans:
        return None
    try:
        route = json.loads(body[slice(*spans["route"])]) if "route" in spans else None
        numbers = json.loads(body[slice(*spans["numbers"])])
        gas = json.loads(body[slice(*spans["gas_used"])]) if "gas_used" in spans else None
    except ValueError:
        return None
    if route != parity or not isinstance(numbers, list) or not all(type(x) is int for x in numbers):
        return None
    if any(not -(2**63) <= x < 2**63 for x in numbers):
        return None
    used: list[list[int | None]] = [[] for _ in numbers]
    if gas is not None:
        if not isinstance(gas, list) or len(gas) != len(numbers):
            return None
        for i, block in enumerate(gas):
            if block is None:
                continue
            if not isinstance(block, list):
                return None
            figures = [_hex_u64(g) for g in block]
            if any(f is False for f in figures):
                return None
            used[i] = [f for f in figures if f is not False]
    answers = _native.members(body, spans["answers"])
    headers = _native.members(body, spans["header_answers"]) if "header_answers" in spans else []
    if answers is None or headers is None:
        return None
    return numbers, used, answers, headers


def _hex_u64(text: object) -> int | bool | None:
    """A receipt's gas used as the documents hold it (``0x`` and hex digits), None for null, False for anything the
    column's converter might read otherwise (Polars' path decides then)."""
    if text is None:
        return None
    if not isinstance(text, str) or not text.startswith("0x") or not 2 < len(text) <= 18:
        return False
    try:
        return int(text[2:], 16) if text[2:].isascii() and text[2:].isalnum() else False
    except ValueError:
        return False


def _frames(
    traces: dict[str, pa.Array], n: int, figures: list[tuple[int, int, int]], errors: Mapping[str, str]
) -> dict[str, pa.Array] | None:
    if traces["transactionPosition"].null_count:
        return None
    block = _ints(traces["blockNumber"], np.int64)
    paths = traces["traceAddress"]
    if paths.null_count:  # no trace address: the top frame's, []
        paths = pc.if_else(pc.is_null(paths), _empty_lists(n), paths)
    paths = pa.concat_arrays([paths]) if paths.offset else paths
    offsets = np.frombuffer(paths.buffers()[1], dtype=np.int32)[paths.offset : paths.offset + n + 1].astype(np.int64)
    items = paths.values
    values = np.frombuffer(items.buffers()[1], dtype=np.uint64)[items.offset : items.offset + len(items)]
    error = traces["error"]
    failed = pc.valid_rows(error) & (_lengths(error) > 0)
    found = places(offsets, values, block, _ints(traces["transactionPosition"], np.int64), failed)
    if found is None:
        return None
    action, result = traces["action"], traces["result"]
    kind = traces["type"]
    create = _is(kind, b"create")
    gone = _is(kind, b"suicide") | _is(kind, b"selfdestruct")

    def field(struct: pa.StructArray, name: str) -> pa.Array:
        return struct.field(name)  # null where the struct is: the scanner writes a null object's fields as nulls

    def by_kind(on_create: pa.Array, on_gone: pa.Array, on_call: pa.Array) -> pa.Array:
        return pc.if_else(_bools(create), on_create, pc.if_else(_bools(gone), on_gone, on_call))

    call_type = _upper(pc.coalesce(field(action, "callType"), _texts(b"call", n)))
    if call_type is None:
        return None
    create2 = _is(field(action, "creationMethod"), b"create2")
    call_type = by_kind(
        pc.if_else(_bools(create2), _texts(b"CREATE2", n), _texts(b"CREATE", n)), _texts(b"SELFDESTRUCT", n), call_type
    )
    zero = pc.constant(0, n, pa.uint64())
    value = by_kind(field(action, "value"), field(action, "balance"), field(action, "value"))
    value = pc.if_else(_bools(~_is(call_type, b"STATICCALL")), value, _nulls(value))  # callTracer sends none
    used = by_kind(field(result, "gasUsed"), zero, field(result, "gasUsed"))
    if figures:
        # The top frames' gas used from the document's figures (the receipts'), where it has them.
        given = {(b, i): g for b, i, g in figures}
        top_rows = np.flatnonzero(found.top)
        picked = [given.get((int(block[r]), int(found.index[r]))) for r in top_rows]
        has = np.array([g is not None for g in picked], dtype=bool)
        if has.any():
            figure = np.zeros(n, dtype=np.uint64)
            figure[top_rows[has]] = [g for g in picked if g is not None]
            mask = np.zeros(n, dtype=bool)
            mask[top_rows[has]] = True
            used = pc.if_else(_bools(mask), _u64(figure), used)
    output = by_kind(field(result, "code"), _nulls(field(result, "output")), field(result, "output"))
    output = pc.if_else(_bools(pc.valid_rows(output) & (_lengths(output) == 0)), _nulls(output), output)
    text = error
    for parity_text, tracer_text in errors.items():
        text = pc.if_else(_bools(_is(text, parity_text.encode())), _texts(tracer_text.encode(), n), text)
    return {
        "block_number": _u64(block),
        "transaction_index": _u64(found.index),
        "transaction_hash": traces["transactionHash"],
        "type": call_type,
        "from": by_kind(field(action, "from"), field(action, "address"), field(action, "from")),
        "to": by_kind(field(result, "address"), field(action, "refundAddress"), field(action, "to")),
        "value": value,
        "gas": by_kind(field(action, "gas"), zero, field(action, "gas")),
        "gasUsed": used,
        "input": by_kind(field(action, "init"), _texts(b"", n, pa.binary()), field(action, "input")),
        "output": output,
        "error": pc.if_else(_bools(failed), text, _nulls(text)),
        "revertReason": _reasons(output, failed, n),
        "trace_address": paths,
        "depth": _u64(found.depth),
        "subcalls": _u64(found.subcalls),
        "reverted": _bools(found.reverted),
        "top": _bools(found.top),
    }


def _reasons(output: pa.Array, failed: np.ndarray, n: int) -> pa.Array:
    """An ``Error(string)`` revert's text for each failed frame, as callTracer decodes it (null elsewhere)."""
    texts: dict[int, bytes] = {}
    for row in np.flatnonzero(failed & pc.valid_rows(output)):
        data = output[int(row)].as_py()
        if len(data) < 4 + 64 or data[:4] != _ERROR_SELECTOR:
            continue
        length = int.from_bytes(data[36:68], "big")
        try:
            texts[int(row)] = data[68 : 68 + length].decode("utf-8").encode()
        except UnicodeDecodeError:
            continue
    return _strings(texts, n)


def _ints(array: pa.Array, dtype: type) -> np.ndarray:
    """A uint64 array's values (nulls as 0) as ``dtype``."""
    values = np.frombuffer(array.buffers()[1], dtype=np.uint64)[array.offset : array.offset + len(array)]
    typed: np.ndarray = values.astype(dtype)
    return typed


def _lengths(array: pa.Array) -> np.ndarray:
    """Each value's length in bytes, of a string or binary array (0 for null)."""
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32)[array.offset : array.offset + len(array) + 1]
    lengths: np.ndarray = np.diff(offsets)
    return lengths


def _is(array: pa.Array, word: bytes) -> np.ndarray:
    """Where a string array's value is ``word`` (never where it is null)."""
    n = len(array)
    hit: np.ndarray = pc.valid_rows(array) & (_lengths(array) == len(word))
    rows = np.flatnonzero(hit)
    if rows.size and word:
        data = np.frombuffer(array.buffers()[2] or b"", dtype=np.uint8)
        starts = np.frombuffer(array.buffers()[1], dtype=np.int32)[array.offset : array.offset + n][rows]
        same = (data[starts[:, None] + np.arange(len(word))] == np.frombuffer(word, dtype=np.uint8)).all(axis=1)
        hit[rows[~same]] = False
    return hit


def _upper(array: pa.Array) -> pa.Array | None:
    """A string array upper-cased, or None where a text is not ASCII (Polars' Unicode rules decide then)."""
    array = pa.concat_arrays([array]) if array.offset else array
    validity, offsets, data = array.buffers()
    chars = np.frombuffer(data, dtype=np.uint8).copy() if data is not None else np.zeros(0, dtype=np.uint8)
    if (chars >= 0x80).any():
        return None
    chars[(chars >= ord("a")) & (chars <= ord("z"))] -= 32
    return pa.Array.from_buffers(pa.string(), len(array), [validity, offsets, pa.py_buffer(chars)], array.null_count)


def _texts(word: bytes, n: int, dtype: pa.DataType | None = None) -> pa.Array:
    """``word`` ``n`` times, as a string array (or ``dtype``: binary)."""
    offsets = (np.arange(n + 1, dtype=np.int32) * len(word)).astype(np.int32)
    return pa.Array.from_buffers(dtype or pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(word * n)])


def _strings(texts: Mapping[int, bytes], n: int) -> pa.Array:
    """A string array of ``n`` rows: ``texts`` at their rows, null elsewhere."""
    lengths = np.zeros(n, dtype=np.int32)
    valid = np.zeros(n, dtype=bool)
    for row, text in texts.items():
        lengths[row] = len(text)
        valid[row] = True
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    data = b"".join(texts[row] for row in sorted(texts))
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(pa.string(), n, [bitmap, pa.py_buffer(offsets), pa.py_buffer(data)], n - len(texts))


def _nulls(like: pa.Array) -> pa.Array:
    return pa.nulls(len(like), like.type)


def _empty_lists(n: int) -> pa.Array:
    items = pa.Array.from_buffers(pa.uint64(), 0, [None, pa.py_buffer(b"")])
    offsets = pa.py_buffer(np.zeros(n + 1, dtype=np.int32))
    return pa.Array.from_buffers(pa.list_(pa.uint64()), n, [None, offsets], 0, children=[items])


def _u64(values: np.ndarray) -> pa.Array:
    """A uint64 array of numpy values (without pyarrow's conversion, which imports pandas where it is installed)."""
    data = np.ascontiguousarray(values, dtype=np.uint64)
    return pa.Array.from_buffers(pa.uint64(), len(data), [None, pa.py_buffer(data)])


def _flags(array: pa.Array) -> np.ndarray:
    """A boolean array without nulls (as :func:`_bools` makes them) as numpy's."""
    bits = np.unpackbits(np.frombuffer(array.buffers()[1], dtype=np.uint8), bitorder="little")
    flags: np.ndarray = bits[array.offset : array.offset + len(array)].astype(bool)
    return flags


def _bools(mask: np.ndarray) -> pa.Array:
    return pa.Array.from_buffers(pa.bool_(), len(mask), [None, pa.py_buffer(np.packbits(mask, bitorder="little"))])
