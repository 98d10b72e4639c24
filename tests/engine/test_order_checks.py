"""The order checks on Arrow kernels (``_in_order``, ``sort_table``) against plain Python on random rows: the fast
path must say "in order" exactly when the rows are, or a wrong answer would be kept (or a right one sorted). And the
block hashes a chunk check keeps from rows above the finalized block (``ChunkCheck.see_rows``): every distinct pair,
or a row from another fork would go unchecked."""

from __future__ import annotations

import random
from itertools import pairwise

import pyarrow as pa

from chainframe.engine._answers import _in_order
from chainframe.engine._canonical import ChunkCheck
from chainframe.engine._logs import _ascending, sort_table


def _reference_in_order(rows: list[tuple[int, int]], *, filtered: bool) -> bool:
    for i, (block, at) in enumerate(rows):
        if i == 0:
            if not filtered and at != 0:
                return False
            continue
        before_block, before_at = rows[i - 1]
        if block < before_block:
            return False
        if block == before_block and not (at > before_at if filtered else at == before_at + 1):
            return False
        if block > before_block and not filtered and at != 0:
            return False
    return True


def _random_rows(rng: random.Random) -> list[tuple[int, int]]:
    rows = []
    for block in sorted(rng.sample(range(100), rng.randint(1, 5))):
        rows += [(block, i) for i in range(rng.randint(1, 4))]
    match rng.randrange(5):
        case 0:
            pass
        case 1:  # a repeat
            i = rng.randrange(len(rows))
            rows.insert(i, rows[i])
        case 2:  # a gap
            i = rng.randrange(len(rows))
            rows[i] = (rows[i][0], rows[i][1] + 1)
        case 3:  # a swap
            i, j = rng.randrange(len(rows)), rng.randrange(len(rows))
            rows[i], rows[j] = rows[j], rows[i]
        case _:  # a filter keeps some
            rows = [r for r in rows if rng.random() < 0.6] or rows[:1]
    return rows


def test_in_order_agrees_with_python_on_random_rows() -> None:
    rng = random.Random(7)
    seen = {True: 0, False: 0}
    for _ in range(3000):
        rows = _random_rows(rng)
        block = pa.array([b for b, _ in rows], pa.uint64())
        at = pa.array([a for _, a in rows], pa.uint64())
        for filtered in (False, True):
            expected = _reference_in_order(rows, filtered=filtered)
            assert _in_order(block, at, filtered=filtered) is expected, (rows, filtered)
            seen[expected] += 1
    assert min(seen.values()) > 500  # both answers were tested often


def test_sort_table_agrees_with_a_stable_python_sort() -> None:
    rng = random.Random(8)
    for _ in range(500):
        rows = _random_rows(rng)
        table = pa.table(
            {
                "block_number": pa.array([b for b, _ in rows], pa.uint64()),
                "log_index": pa.array([a for _, a in rows], pa.uint64()),
                "n": pa.array(range(len(rows)), pa.int64()),
            }
        )
        want = sorted(table.to_pylist(), key=lambda r: (r["block_number"], r["log_index"]))
        assert sort_table(table, ("block_number", "log_index")).to_pylist() == want


def test_sort_table_sorts_list_keys_and_nulls_first() -> None:
    table = pa.table({"k": pa.array([[1, 2], [0], None, [1]], pa.list_(pa.uint64())), "n": [0, 1, 2, 3]})
    assert sort_table(table, ("k",))["n"].to_pylist() == [2, 1, 3, 0]


def test_the_order_check_of_text_keys_agrees_with_python_on_random_words() -> None:
    """Text keys (address_appearances' relationship) are checked in place as bytes, which is Python's order of the
    code points and Polars' sort: rows already in order are not sorted by Polars (its import was 0.7 CPU-s of an
    address_appearances run); rows out of it are, stably, nulls first."""
    rng = random.Random(12)
    letters = ["a", "b", "_", "é", "e\u0301", "\u00ff", "\U0001f600", "Z"]
    seen = {True: 0, False: 0}
    for _ in range(1000):
        n = rng.randrange(2, 7)
        block = sorted(rng.randrange(2) for _ in range(n))
        words: list[str | None] = ["".join(rng.choices(letters, k=rng.randrange(3))) for _ in range(n)]
        words = [None if rng.random() < 0.1 else w for w in words]
        keys = [(b, w is not None, w or "") for b, w in zip(block, words, strict=True)]
        if rng.random() < 0.5:
            keys.sort()
            block, words = [k[0] for k in keys], [k[2] if k[1] else None for k in keys]
        expected = all(a <= b for a, b in pairwise(keys))
        columns = [pa.array(block, pa.uint64()), pa.array(words, pa.string())]
        assert _ascending(columns) is expected, (block, words)
        seen[expected] += 1
        table = pa.table({"b": columns[0], "w": columns[1], "n": range(n)})
        want = sorted(table.to_pylist(), key=lambda r: (r["b"], r["w"] is not None, r["w"] or ""))
        assert sort_table(table, ("b", "w")).to_pylist() == want
        assert (sort_table(table, ("b", "w")) is table) is expected  # in order: the very table, no sort
    assert min(seen.values()) > 300  # both answers were tested often


def test_the_order_check_of_trace_addresses_agrees_with_python_on_random_paths() -> None:
    """Lists of numbers (a call tree's paths) are checked in place, lexicographically (a prefix first), so the trace
    family's rows, which come in preorder, are not sorted by Polars; rows out of that order are, stably."""
    rng = random.Random(9)
    seen = {True: 0, False: 0}
    for _ in range(3000):
        paths: list[list[int] | None] = []
        paths += [None] * rng.choice((0, 0, 1, 2))  # a block's rewards and withdrawals: before its frames
        paths += sorted([rng.randrange(3) for _ in range(rng.randrange(6))] for _ in range(rng.randrange(2, 7)))
        if rng.random() < 0.5:
            i, j = rng.randrange(len(paths)), rng.randrange(len(paths))
            paths[i], paths[j] = paths[j], paths[i]
        tx = sorted(rng.randrange(2) for _ in paths)
        keys = [(t, p is not None, p or []) for t, p in zip(tx, paths, strict=True)]  # nulls first
        expected = all(a <= b for a, b in pairwise(keys))
        columns = [pa.array(tx, pa.uint64()), pa.array(paths, pa.list_(pa.uint64()))]
        assert _ascending(columns) is expected, (tx, paths)
        seen[expected] += 1
        table = pa.table({"t": columns[0], "p": columns[1], "n": range(len(paths))})
        want = sorted(table.to_pylist(), key=lambda r: (r["t"], r["p"] is not None, r["p"] or []))
        assert sort_table(table, ("t", "p")).to_pylist() == want
    assert min(seen.values()) > 500  # both answers were tested often


def test_the_chunk_check_keeps_every_distinct_block_hash_above_the_finalized_block() -> None:
    rng = random.Random(11)
    hashes = [bytes([i]) * 32 for i in range(3)]
    for _ in range(2000):
        rows = [(block, rng.choice(hashes)) for block in sorted(rng.choices(range(20), k=rng.randint(1, 30)))]
        if rng.random() < 0.3:
            rng.shuffle(rows)
        finalized = rng.randrange(20)
        table = pa.table(
            {
                "block_number": pa.array([b for b, _ in rows], pa.uint64()),
                "block_hash": pa.array([h for _, h in rows], pa.binary(32)),
            }
        )
        check = ChunkCheck("logs", finalized)
        check.see_rows(table)
        expected: dict[int, set[bytes]] = {}
        for block, hash_ in rows:
            if block > finalized:
                expected.setdefault(block, set()).add(hash_)
        assert check.pairs == expected, (rows, finalized)


def _reference_matches(address: bytes, topics: list[bytes] | None, flt: dict[str, object]) -> bool:
    """eth_getLogs' filter rule, in plain Python: the address is one of the addresses, and each topic position
    given (not null, not empty) holds one of its values; a log with fewer topics does not match that position."""
    wanted = flt.get("address")
    if wanted is not None and address not in wanted:  # type: ignore[operator]
        return False
    for i, values in enumerate(flt.get("topics", [])):  # type: ignore[arg-type]
        if not values:
            continue
        if topics is None or len(topics) <= i or topics[i] not in values:
            return False
    return True


def test_the_log_filter_check_agrees_with_python_on_random_logs() -> None:
    """``_stray_logs`` (Arrow kernels: a filtered run loads no Polars) counts exactly the logs that fail the filter,
    on random logs (0 to 4 topics, some lists null, tables in several chunks and sliced) and random filters."""
    from chainframe.engine._answers import _stray_logs

    rng = random.Random(11)
    addresses = [bytes([i]) * 20 for i in range(4)]
    words = [bytes([i]) * 32 for i in range(5)]
    address_type, topics_type = pa.binary(20), pa.list_(pa.binary(32))
    seen = {True: 0, False: 0}
    for _ in range(400):
        n = rng.randint(1, 12)
        logs = [(rng.choice(addresses), None if rng.random() < 0.05 else rng.choices(words, k=rng.randint(0, 4)))
                for _ in range(n)]  # fmt: skip
        flt: dict[str, object] = {}
        if rng.random() < 0.5:
            flt["address"] = rng.sample(addresses, rng.randint(1, 2))
        flt["topics"] = [rng.choice([None, [], rng.sample(words, rng.randint(1, 2))]) for _ in range(rng.randint(0, 4))]
        hexed = {
            "address": ["0x" + a.hex() for a in flt["address"]] if "address" in flt else None,  # type: ignore[attr-defined]
            "topics": [None if not p else ["0x" + t.hex() for t in p] for p in flt["topics"]],  # type: ignore[attr-defined]
        }
        cut = rng.randint(0, n)
        pieces = [logs[:cut], logs[cut:]]
        table = pa.Table.from_batches(
            [pa.record_batch([pa.array([a for a, _ in p], address_type), pa.array([t for _, t in p], topics_type)],
                             names=["address", "topics"]) for p in pieces]
        )  # fmt: skip
        skip = rng.randint(0, 1)
        table = table.slice(skip)
        expected = sum(not _reference_matches(a, t, flt) for a, t in logs[skip:])
        assert _stray_logs(table, hexed) == expected, (logs, flt)
        seen[expected == 0] += 1
    assert min(seen.values()) > 50  # both outcomes were tried, many times
