"""What an answer must be before its rows are kept: an answer to what was asked, consistent in itself.

The transforms read whatever a node sends (a null result is no rows, as a recorded answer says); the engine knows what
it asked for, so it checks here, on the answer bytes and on the decoded rows (vectorized: no per-row Python):

- no ``null`` result where a block, a list of logs or receipts was asked for (we only ask for blocks the node has),
  for datasets whose ``null_checked`` says so;
- by the dataset's declared :class:`~chainframe.datasets.RowChecks`: every row's block inside the asked blocks; the
  key columns (block number, indexes, hashes) never null; exactly one row per asked block (headers); per block, an
  index 0, 1, 2, ... with no gap or repeat (transactions, receipts, logs); a receipt has a status (or, before
  Byzantium, a state root);
- logs fetched with a filter: no repeated (block, log index), and every log matches the filter (address and topics),
  as the node was asked.

A failed check is :class:`WrongAnswer`: the piece is fetched again (:data:`ANSWER_ATTEMPTS` times in all); then the
error names the method, blocks, endpoint and check. Logs flagged ``removed`` are a reorganization, handled by the
chain checks (:mod:`chainframe.engine._canonical`).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import anyio
import pyarrow as pa

from chainframe import _kernels as pc
from chainframe._kernels import constant
from chainframe.datasets import BlockRange, DecodeError, RowChecks, ValueOutOfRange, null_result
from chainframe.engine._shared import SharedAnswers
from chainframe.rpc import TransientError, params

T = TypeVar("T")

ANSWER_ATTEMPTS = 3
"""Times a piece is fetched before an answer that keeps failing its checks is an error."""

_NULL_RESULT = re.compile(rb'"result"\s*:\s*null')


class WrongAnswer(TransientError):
    """An answer that is valid JSON-RPC but not an answer to what was asked (or not consistent in itself)."""

    def __init__(self, detail: str, *, check: str) -> None:
        super().__init__(f"{detail} (check: {check})")
        self.check = check


def check_bodies(bodies: Sequence[bytes]) -> None:
    """No null result in answers that must hold a block, or a list of receipts or logs (a dataset whose
    ``null_checked`` says so)."""
    for body in bodies:
        found = null_result(body)  # in C, the GIL released: 30 ms of a logs run's event loop otherwise
        if found is None:
            found = b"null" in body and _NULL_RESULT.search(body) is not None
        if found:
            raise WrongAnswer("the node answered null for a block it has", check="null result")


def check_rows(
    checks: RowChecks | None, table: pa.Table, blocks: BlockRange, log_filter: Mapping[str, Any] | None = None
) -> None:
    """The decoded rows of a piece answer what was asked for ``blocks`` (see the module's list), by the dataset's
    declared ``checks``; ``log_filter``: the rows are logs fetched with this filter, and every one must match it."""
    if checks is None or (table.num_rows == 0 and not checks.one_per_block):
        return
    for column in checks.keys:
        if table[column].null_count:
            raise WrongAnswer(f"{table[column].null_count} rows without {column}", check=f"{column} present")
    number = _flat(table["block_number"])
    if checks.one_per_block:
        if len(number) != len(blocks) or not _consecutive(number, blocks.start):
            raise WrongAnswer(
                f"asked for blocks {blocks.start}..{blocks.end}, got {len(number)} rows for blocks {_sample(number)}",
                check="one row per asked block",
            )
        return
    bounds = pc.min_max(number)
    low, high = bounds["min"].as_py(), bounds["max"].as_py()
    if low < blocks.start or high > blocks.end:
        raise WrongAnswer(
            f"rows for blocks {low}..{high} in an answer for blocks {blocks.start}..{blocks.end}",
            check="rows inside the asked blocks",
        )
    if checks.status:
        missing = pc.sum(pc.and_(pc.is_null(table["status"]), pc.is_null(table["root"]))).as_py()
        if missing:
            raise WrongAnswer(f"{missing} receipts with neither status nor root", check="receipt status present")
    filtered = bool(log_filter)
    if checks.index is not None and not _in_order(number, _flat(table[checks.index]), filtered=filtered):
        _repeats_and_gaps(table, checks.index, filtered=filtered)  # the common case above: one pass, no sort
    if log_filter:
        stray = _stray_logs(table, log_filter)
        if stray:
            raise WrongAnswer(f"{stray} logs do not match the filter asked for", check="logs match the filter")


def _stray_logs(table: pa.Table, log_filter: Mapping[str, Any]) -> int:
    """How many logs do not match the eth_getLogs filter (its addresses, and each topic position's values): with
    Arrow kernels, so a filtered run (token transfers, ``--topic0``) loads neither Polars (0.3 CPU-s to import) nor
    numpy. A log with fewer topics than a position asks for does not match it."""
    flt = params.log_filter(address_=log_filter.get("address"), topics=log_filter.get("topics"))
    n: int = table.num_rows
    ok = constant(True, n, pa.bool_())
    address = flt.get("address")
    if address is not None:
        column = _flat(table["address"])
        wanted = [bytes.fromhex(a[2:]) for a in (address if isinstance(address, list) else [address])]
        ok = pc.and_(ok, pc.is_in(column, value_set=_value_set(wanted, column.type)))
    topics = _flat(table["topics"])
    for i, position in enumerate(flt.get("topics", [])):
        if position is None or position == []:
            continue
        values = [bytes.fromhex(t[2:]) for t in (position if isinstance(position, list) else [position])]
        # Topic i of each log: its list's start (offsets index the whole child array) plus i, where the list is long
        # enough; index 0 stands in elsewhere and is masked out.
        lengths = pc.list_value_length(topics)
        long_enough = pc.coalesce(pc.greater(lengths, constant(i, n, lengths.type)), constant(False, n, pa.bool_()))
        child = topics.values
        if not len(child):
            return n
        at = pc.add(pc.cast(topics.offsets[:-1], pa.int64()), constant(i, n, pa.int64()))
        word = pc.take(child, pc.if_else(long_enough, at, constant(0, n, pa.int64())))
        ok = pc.and_(ok, pc.and_(long_enough, pc.is_in(word, value_set=_value_set(values, child.type))))
    return n - int(pc.sum(pc.coalesce(ok, constant(False, n, pa.bool_()))).as_py() or 0)


def _value_set(values: list[bytes], dtype: pa.DataType) -> pa.Array:
    """Byte strings as an Arrow array of ``dtype``; fixed-size ones (addresses, topics) built from one buffer: a
    Python value made into an Arrow array makes pyarrow import pandas (0.3 s) where it is installed."""
    if pa.types.is_fixed_size_binary(dtype) and all(len(v) == dtype.byte_width for v in values):
        return pa.Array.from_buffers(dtype, len(values), [None, pa.py_buffer(b"".join(values))])
    return pa.array(values, dtype)


def _flat(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def _consecutive(number: pa.Array, start: int) -> bool:
    """``number`` is start, start + 1, start + 2, ..."""
    if len(number) == 0:
        return True
    if number[0].as_py() != start:
        return False
    steps = pc.subtract(number[1:], number[:-1])
    return bool(pc.all(pc.equal(steps, constant(1, len(steps), steps.type))).as_py() is not False)


def _in_order(block: pa.Array, at: pa.Array, *, filtered: bool) -> bool:
    """True when the rows come ordered by block with indexes 0, 1, 2, ... in each block (filtered logs: strictly
    increasing), as nodes send them: then there are neither repeats nor gaps. False: look closer. Arrow kernels on
    neighbouring pairs (no Polars, no per-row Python)."""
    if len(block) == 0:
        return True
    b0, b1, a0, a1 = block[:-1], block[1:], at[:-1], at[1:]
    same = pc.equal(b0, b1)
    if filtered:
        ok = pc.or_(pc.greater(b1, b0), pc.and_(same, pc.greater(a1, a0)))
        return pc.all(ok).as_py() is not False
    if at[0].as_py() != 0:
        return False
    # Constants as Arrow buffers: a Python number here makes pyarrow import pandas (0.3 s) where it is installed.
    one, zero = constant(1, len(a1), a1.type), constant(0, len(a1), a1.type)
    ok = pc.if_else(same, pc.equal(a1, pc.add(a0, one)), pc.and_(pc.greater(b1, b0), pc.equal(a1, zero)))
    return pc.all(ok).as_py() is not False


def _repeats_and_gaps(table: pa.Table, index: str, *, filtered: bool) -> None:
    """Out of order: what is wrong, exactly (the rare path, so Polars is loaded only here)."""
    import polars as pl

    frame = pl.from_arrow(table.select(["block_number", index]))
    assert isinstance(frame, pl.DataFrame)
    repeated = frame.select(pl.struct("block_number", index).is_duplicated().sum()).item()
    if repeated:
        raise WrongAnswer(f"{repeated} rows share a (block, {index})", check=f"no repeated {index}")
    if not filtered:
        position = pl.int_range(pl.len()).over("block_number").cast(pl.UInt64)
        off = frame.sort("block_number", index).select((pl.col(index) != position).sum()).item()
        if off:
            raise WrongAnswer(f"{index} is not 0, 1, 2, ... in every block ({off} rows off)", check=f"{index} in order")


def _sample(values: pa.Array) -> str:
    shown = values[:6].to_pylist()
    return ", ".join(map(str, shown)) + (", ..." if len(values) > 6 else "")


async def checked(fetch: Callable[[], Awaitable[T]], *, method: str, blocks: BlockRange, client: Any) -> T:
    """``fetch()`` (a request, its decoding and the checks above), again while its answer fails a check or does not
    decode; then the last failure as :class:`WrongAnswer` naming the method, blocks, endpoint and check. A value too
    wide for its column is not retried: the answer is right, the encoding is the user's choice."""
    failure: WrongAnswer | None = None
    for attempt in range(ANSWER_ATTEMPTS):
        try:
            return await fetch()
        except ValueOutOfRange:
            raise
        except WrongAnswer as exc:
            failure = exc
        except DecodeError as exc:
            failure = WrongAnswer(str(exc), check="decodes")
        if attempt + 1 < ANSWER_ATTEMPTS:
            if isinstance(client, SharedAnswers):  # the answers shared in the run are asked again
                client.forget(blocks)
            await anyio.sleep(0.1 * 2**attempt)
    assert failure is not None
    endpoint = getattr(getattr(client, "endpoint", None), "display", "")
    failure.attach(method=method, blocks=(blocks.start, blocks.end), endpoint=endpoint)
    failure.detail += f"; still so after {ANSWER_ATTEMPTS} attempts"
    raise failure
