"""The checks that prove rows from whole columns report exactly what the row-by-row reference reports.

``check_transactions_roots`` proves a block from C's hashes and root and the columns' recovery inputs when all agree,
and reads a block's rows into Python only when something differs; ``check_transaction_fields`` and
``check_receipts_with_transactions`` screen the columns for the rows that may be wrong and read only those. On real
devnet rows (and random transactions of every type), each column changed in turn (to another value, to null), the
failures, in their order, and the skips must be those of the reference: ``NATIVE`` off (every row in Python), or no
screen (every row read).
"""

from __future__ import annotations

import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from chainframe.devnet import Devnet
from chainframe.engine import extract
from chainframe.verify import Failure, Report, _derived, _senders, _transactions
from chainframe.verify._folder import read_folder
from tests.verify.test_native import _random_transaction


@pytest.fixture(scope="module")
def folder(devnet_session: Devnet, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("whole_columns")
    # Blocks 0..15 (0..30 before): 111 transactions of all four types the devnet mines, the EIP-7702 one included,
    # and the empty genesis block; the reference paths below read every row into Python for each change.
    extract(["blocks", "transactions", "receipts"], blocks="0:15", rpc=devnet_session.node.url, out=out,
            progress=False)  # fmt: skip
    return Path(out)


@pytest.fixture(scope="module")
def stored(folder: Path) -> tuple[pa.Table, pa.Table]:
    blocks, transactions = read_folder(folder, "blocks"), read_folder(folder, "transactions")
    assert blocks is not None
    assert transactions is not None
    return blocks, transactions


def _outcome(transactions: pa.Table, blocks: pa.Table, monkeypatch: pytest.MonkeyPatch, *, native: bool) -> Any:
    with monkeypatch.context() as m:
        m.setattr(_senders, "_known", type(_senders._known)())  # nothing remembered from the other path
        if not native:
            m.setattr(_transactions, "NATIVE", None)
        report = Report()
        try:
            _transactions.check_transactions_roots(transactions, blocks, report)
        except Exception as error:  # the reference's exception is the behaviour to match
            return type(error).__name__
        return report.failures, report.skipped


def _changed(value: Any, field: pa.Field, rng: random.Random) -> Any:
    """Another value of the column's type (or the same one where the type has no obvious other)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return rng.choice([value + 1, max(value - 1, 0), 27, 28, 35, 37, 0x7E, 5]) % (
            1 << min(field.type.bit_width, 62)
        )
    if isinstance(value, Decimal):
        return value + 1
    if isinstance(value, bytes):
        return (value[:-1] + bytes([value[-1] ^ 1])) if value else b"\x01"
    if isinstance(value, list):
        return value[1:] if value else value
    if value is None and pa.types.is_fixed_size_binary(field.type):
        return b"\x01" * field.type.byte_width
    if value is None and pa.types.is_integer(field.type):
        return 1
    return value


def _set(table: pa.Table, column: str, index: int, value: Any) -> pa.Table:
    values = table[column].to_pylist()
    values[index] = value
    field = table.schema.field(column)
    return table.set_column(table.column_names.index(column), field, pa.array(values, field.type))


def _random_table(seed: int) -> tuple[pa.Table, pa.Table]:
    """Random transactions of types 0-4 (random signatures: most recover another sender, some none) and headers
    with their true roots for some blocks and wrong ones for others."""
    from chainframe.datasets import TRANSACTIONS
    from chainframe.verify._hashing import keccak
    from chainframe.verify._trie import ordered_root

    rng = random.Random(seed)
    rows = [
        _random_transaction(rng, block, i, "decimal") for block in range(1, 7) for i in range(rng.choice([0, 1, 3]))
    ]
    for row in rows:
        row["transaction_hash"] = keccak(_transactions.transaction_bytes(row))
        row["from_address"] = rng.randbytes(20)
    table = pa.Table.from_pylist([{**row, "chain_id": 1} for row in rows], schema=TRANSACTIONS.schema_for("decimal"))
    roots = [
        ordered_root([_transactions.transaction_bytes(r) for r in rows if r["block_number"] == n]) for n in range(7)
    ]
    roots[3] = b"\x07" * 32
    headers = pa.table(
        {"block_number": pa.array(range(7), pa.uint64()), "transactions_root": pa.array(roots, pa.binary(32))}
    )
    return table, headers


def test_unchanged_tables_prove_the_same(stored: tuple[pa.Table, pa.Table], monkeypatch: pytest.MonkeyPatch) -> None:
    blocks, transactions = stored
    assert transactions.num_rows > 20
    fast = _outcome(transactions, blocks, monkeypatch, native=True)
    assert fast == ([], [])
    assert fast == _outcome(transactions, blocks, monkeypatch, native=False)
    random_table, headers = _random_table(0)
    assert _outcome(random_table, headers, monkeypatch, native=True) == _outcome(
        random_table, headers, monkeypatch, native=False
    )


@pytest.mark.parametrize("column", _transactions.NAMES)
def test_a_changed_column_fails_as_the_reference_says(
    column: str, stored: tuple[pa.Table, pa.Table], monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(column)
    blocks, transactions = stored
    random_table, headers = _random_table(len(column))
    for table, heads in ((transactions, blocks), (random_table, headers)):
        if column not in table.column_names or not table.num_rows:
            continue
        field = table.schema.field(column)
        values = table[column].to_pylist()
        for index in sorted(rng.sample(range(table.num_rows), min(4, table.num_rows))):
            for value in (_changed(values[index], field, rng), None):
                changed = _set(table, column, index, value)
                want = _outcome(changed, heads, monkeypatch, native=False)
                assert _outcome(changed, heads, monkeypatch, native=True) == want, (column, index, value)
    # A row dropped, every row twice, a header missing: roots fail, the senders still proven where they fall.
    for table, heads in ((transactions, blocks), (random_table, headers)):
        for edited, against in ((table.slice(1), heads), (pa.concat_tables([table, table]), heads),
                                (table, heads.slice(1))):  # fmt: skip
            assert _outcome(edited, against, monkeypatch, native=True) == _outcome(
                edited, against, monkeypatch, native=False
            )


def _screened(check: Any, *tables: pa.Table, monkeypatch: pytest.MonkeyPatch, screen: bool) -> Any:
    import numpy as np

    with monkeypatch.context() as m:
        if not screen:
            m.setattr(_derived, "_fields_screen", lambda t, _: np.ones(t.num_rows, dtype=bool))
            m.setattr(_derived, "_receipts_screen", lambda r, _t, _b: np.arange(r.num_rows))
        report = Report()
        try:
            check(*tables, report)
        except Exception as error:  # the reference's exception is the behaviour to match
            return type(error).__name__
        return report.failures


def _each_change(table: pa.Table, columns: Any, seed: str) -> Any:
    """``table`` with one value changed: each of ``columns`` in a few rows, to another value and to null."""
    rng = random.Random(seed)
    for column in columns:
        if column not in table.column_names:
            continue
        field = table.schema.field(column)
        values = table[column].to_pylist()
        for index in sorted(rng.sample(range(table.num_rows), min(3, table.num_rows))):
            for value in (_changed(values[index], field, rng), None):
                yield column, _set(table, column, index, value)


def _as_words(table: pa.Table | None, u256: str) -> pa.Table:
    """``table`` with its wei columns as 32-byte words (``u256="binary"``) or as stored."""
    assert table is not None
    if u256 != "binary":
        return table
    for i, field in enumerate(table.schema):
        if pa.types.is_decimal(field.type):
            values = [None if v is None else int(v).to_bytes(32, "big") for v in table[field.name].to_pylist()]
            table = table.set_column(i, pa.field(field.name, pa.binary(32)), pa.array(values, pa.binary(32)))
    return table


@pytest.mark.parametrize("u256", ["decimal", "binary", "headers"])
def test_screened_derived_checks_fail_as_the_reference_says(
    u256: str, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks, transactions, receipts = (  # "headers": an extraction's, proven against headers read as words
        _as_words(read_folder(folder, name), "binary" if u256 == "headers" and name == "blocks" else u256)
        for name in ("blocks", "transactions", "receipts")
    )
    fields = lambda t, b, r: _derived.check_transaction_fields(t, b, r)  # noqa: E731
    paired = lambda rc, t, b, r: _derived.check_receipts_with_transactions(rc, t, b, r)  # noqa: E731
    both = {"screen": True}, {"screen": False}
    assert _screened(fields, transactions, blocks, monkeypatch=monkeypatch, **both[0]) == []
    assert _screened(paired, receipts, transactions, blocks, monkeypatch=monkeypatch, **both[0]) == []
    found = 0
    for column, changed in _each_change(transactions, _derived.TX_NAMES, "transactions"):
        want = _screened(fields, changed, blocks, monkeypatch=monkeypatch, screen=False)
        assert _screened(fields, changed, blocks, monkeypatch=monkeypatch, screen=True) == want, column
        want = _screened(paired, receipts, changed, blocks, monkeypatch=monkeypatch, screen=False)
        assert _screened(paired, receipts, changed, blocks, monkeypatch=monkeypatch, screen=True) == want, column
        found += bool(want)
    for column, changed in _each_change(receipts, _derived.RECEIPT_NAMES, "receipts"):
        want = _screened(paired, changed, transactions, blocks, monkeypatch=monkeypatch, screen=False)
        assert _screened(paired, changed, transactions, blocks, monkeypatch=monkeypatch, screen=True) == want, column
        found += bool(want)
    for column, changed in _each_change(blocks, ["base_fee_per_gas", "block_number"], "blocks"):
        for check, given in ((fields, (transactions, changed)), (paired, (receipts, transactions, changed))):
            want = _screened(check, *given, monkeypatch=monkeypatch, screen=False)
            assert _screened(check, *given, monkeypatch=monkeypatch, screen=True) == want, column
    assert found > 20  # the changes were seen: the comparison above means something


def test_block_hashes_from_columns_are_the_reference(folder: Path) -> None:
    from chainframe.verify import _headers

    def both(blocks: pa.Table) -> tuple[Any, Any]:
        outcomes = []
        for check in (_headers.check_block_hashes, _headers._row_by_row):
            report = Report()
            check(blocks, report)
            outcomes.append((report.failures, report.skipped, report.blocks_verified))
        return outcomes[0], outcomes[1]

    blocks = read_folder(folder, "blocks")
    assert blocks is not None
    fast, reference = both(blocks)
    assert fast == reference
    assert fast[2] == {"blocks": blocks.num_rows}
    names = (*_headers.FIXED, *_headers.LATER, "block_hash")
    for column, changed in _each_change(blocks, names, "blocks"):
        fast, reference = both(changed)
        assert fast == reference, column
    for table in (blocks.slice(3, 20), blocks.drop_columns(["withdrawals_root"]), blocks.drop_columns(["miner"])):
        fast, reference = both(table)
        assert fast == reference


def test_screened_block_lists_fail_as_the_reference_says(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks, transactions = read_folder(folder, "blocks"), read_folder(folder, "transactions")
    assert blocks is not None
    assert transactions is not None

    def both(blocks: pa.Table, transactions: pa.Table | None) -> tuple[Any, Any]:
        outcomes = []
        for screen in (True, False):
            with monkeypatch.context() as m:
                if not screen:
                    m.setattr(_derived, "_lists_screen", lambda *_, **__: None)
                report = Report()
                try:
                    _derived.check_block_lists(blocks, report, transactions=transactions)
                except Exception as error:  # the reference's exception is the behaviour to match
                    outcomes.append(type(error).__name__)
                    continue
                outcomes.append(report.failures)
        return outcomes[0], outcomes[1]

    found = 0
    columns = ("block_number", "transaction_count", "transaction_hashes", "sha3_uncles", "uncles")
    for given in (None, transactions):
        fast, reference = both(blocks, given)
        assert fast == reference == []
        for column, changed in _each_change(blocks, columns, "lists"):
            fast, reference = both(changed, given)
            assert fast == reference, column
            found += bool(reference)
    for column, changed in _each_change(transactions, ("block_number", "transaction_index", "transaction_hash"), "tx"):
        fast, reference = both(blocks, changed)
        assert fast == reference, column
        found += bool(reference)
    fast, reference = both(blocks, pa.concat_tables([transactions, transactions]))
    assert fast == reference
    for given in (None, transactions):  # an uncle listed under the empty uncles hash
        fast, reference = both(_set(blocks, "uncles", 2, [b"\x01" * 32]), given)
        assert fast == reference
        found += bool(reference)
    assert found > 10


def test_log_counts_from_sorted_columns_are_the_reference(
    devnet_session: Devnet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chainframe.verify import _logs

    extract(["receipts", "logs"], blocks="0:40", rpc=devnet_session.node.url, out=tmp_path, progress=False)
    receipts, logs = read_folder(tmp_path, "receipts"), read_folder(tmp_path, "logs")
    assert receipts is not None
    assert logs is not None
    assert logs.num_rows > 10

    def both(logs: pa.Table, receipts: pa.Table) -> tuple[Any, Any]:
        outcomes = []
        for fast in (True, False):
            with monkeypatch.context() as m:
                if not fast:
                    m.setattr(_logs, "_counts_hold", lambda *_: None)
                report = Report()
                _logs.check_log_counts(logs, receipts, report)
                outcomes.append((report.failures, report.blocks_verified, report.rows_verified))
        return outcomes[0], outcomes[1]

    fast, reference = both(logs, receipts)
    assert fast == reference
    assert fast[0] == []
    found = 0
    keys = ("block_number", "transaction_index", "log_index")
    for column, changed in _each_change(logs, keys, "logs"):
        fast, reference = both(changed, receipts)
        assert fast == reference, column
        found += bool(reference[0])
    for column, changed in _each_change(receipts, ("block_number", "transaction_index", "log_count"), "receipts"):
        fast, reference = both(logs, changed)
        assert fast == reference, column
        found += bool(reference[0])
    for edited_logs, edited_receipts in ((logs.slice(1), receipts), (logs, receipts.slice(1)),
                                         (pa.concat_tables([logs, logs]), receipts),
                                         (logs, pa.concat_tables([receipts, receipts]))):  # fmt: skip
        fast, reference = both(edited_logs, edited_receipts)
        assert fast == reference
        found += bool(reference[0])
    assert found > 10


@pytest.mark.parametrize("seed", range(20))
def test_sorted_by_is_a_stable_sort(seed: int) -> None:
    from chainframe.verify._columns import sorted_by

    rng = random.Random(seed)
    n = rng.choice([0, 1, 2, 5, 50])
    rows = sorted((rng.choice([0, 1, 2]), rng.choice([0, 1, 2]), i) for i in range(n))
    if seed % 2:  # half of them out of order somewhere
        rng.shuffle(rows)
    table = pa.table({"a": pa.array([r[0] for r in rows], pa.uint64()), "b": pa.array([r[1] for r in rows], pa.uint8()),
                      "i": pa.array([r[2] for r in rows], pa.int64())})  # fmt: skip
    want = sorted(table.to_pylist(), key=lambda r: (r["a"], r["b"]))  # Python's sort is stable
    assert sorted_by(table, "a", "b").to_pylist() == want


@pytest.mark.parametrize("seed", range(30))
def test_rows_matched_in_numpy_are_the_joins_rows(seed: int) -> None:
    """``matched_rows`` (receipts to their transactions, logs to their receipts) pairs exactly the rows an inner join
    on block and index pairs, each with the last right row of its key; with ``unique`` it declines keys twice."""
    import polars as pl

    rng = random.Random(seed)

    def table(n: int) -> pa.Table:
        keys = [(rng.choice([None, 0, 1, 7, 2**31 - 1]), rng.choice([None, 0, 1, 3])) for _ in range(n)]
        return pa.table({"block_number": pa.array([k[0] for k in keys], pa.uint64()),
                         "transaction_index": pa.array([k[1] for k in keys], pa.uint64())})  # fmt: skip

    left, right = table(rng.choice([0, 1, 5, 40])), table(rng.choice([0, 1, 5, 40]))
    keys = ["block_number", "transaction_index"]
    frames = [pl.DataFrame(pl.from_arrow(t)).with_row_index(f"__{side}") for t, side in ((left, "l"), (right, "r"))]
    joined = frames[0].join(frames[1].unique(keys, keep="last"), on=keys, how="inner")
    matched = _derived.matched_rows(left, right)
    assert matched is not None
    assert sorted(zip(*(m.tolist() for m in matched), strict=True)) == sorted(joined.select("__l", "__r").rows())
    duplicated = right.drop_null().num_rows > len(set(zip(*right.drop_null().to_pydict().values(), strict=True)))
    assert (_derived.matched_rows(left, right, unique=True) is None) == duplicated
    wide = pa.table({"block_number": pa.array([2**31], pa.uint64()), "transaction_index": pa.array([0], pa.uint64())})
    assert _derived.matched_rows(wide, right) is None  # beyond one int64 key: joined in Polars


def test_indexes_from_sorted_columns_are_the_reference(
    folder: Path, tmp_path: Path, devnet_session: Devnet, monkeypatch: pytest.MonkeyPatch
) -> None:
    extract(["logs"], blocks="0:40", rpc=devnet_session.node.url, out=tmp_path, progress=False)
    tables = {name: read_folder(folder, name) for name in ("transactions", "receipts")}
    tables["logs"] = read_folder(tmp_path, "logs")

    def both(dataset: str, rows: pa.Table) -> tuple[Any, Any]:
        outcomes = []
        for fast in (True, False):
            with monkeypatch.context() as m:
                if not fast:
                    m.setattr(_derived, "_indexes_hold", lambda *_, **__: False)
                report = Report()
                _derived.check_indexes(dataset, rows, report)
                outcomes.append(sorted(report.failures, key=repr))  # Polars's order of ties is its own
        return outcomes[0], outcomes[1]

    found = 0
    for dataset, rows in tables.items():
        assert rows is not None
        fast, reference = both(dataset, rows)
        assert fast == reference == []
        for column, changed in _each_change(rows, ("block_number", "transaction_index", "log_index", "removed"), "i"):
            fast, reference = both(dataset, changed)
            assert fast == reference, (dataset, column)
            found += bool(reference)
        fast, reference = both(dataset, pa.concat_tables([rows, rows]))
        assert fast == reference
    assert found > 10


def test_row_counts_from_numpy_are_the_reference(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from chainframe.verify import _tables

    blocks, transactions = read_folder(folder, "blocks"), read_folder(folder, "transactions")
    assert blocks is not None
    assert transactions is not None

    def both(rows: pa.Table, blocks: pa.Table) -> tuple[Any, Any]:
        outcomes = []
        for fast in (True, False):
            with monkeypatch.context() as m:
                if not fast:
                    m.setattr(_tables, "_counts_hold", lambda *_: False)
                report = Report()
                _tables._check_counts("transactions", rows, blocks, report)
                outcomes.append((report.failures, report.blocks_verified, report.rows_verified))
        return outcomes[0], outcomes[1]

    found = 0
    for rows, heads in ((transactions, blocks), (transactions.slice(1), blocks), (transactions.slice(0, 0), blocks),
                        (pa.concat_tables([transactions, transactions]), blocks)):  # fmt: skip
        fast, reference = both(rows, heads)
        assert fast == reference
        found += bool(reference[0])
    for column, changed in _each_change(transactions, ("block_number",), "counts"):
        fast, reference = both(changed, blocks)
        assert fast == reference, column
        found += bool(reference[0])
    for column, changed in _each_change(blocks, ("block_number", "transaction_count"), "counts"):
        fast, reference = both(transactions, changed)
        assert fast == reference, column
        found += bool(reference[0])
    assert found > 5


def test_receipt_gas_from_numpy_is_the_reference(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from chainframe.verify import _receipts

    blocks, receipts = read_folder(folder, "blocks"), read_folder(folder, "receipts")
    assert blocks is not None
    assert receipts is not None

    def both(receipts: pa.Table, blocks: pa.Table) -> tuple[Any, Any]:
        outcomes = []
        for fast in (True, False):
            with monkeypatch.context() as m:
                if not fast:
                    m.setattr(_receipts, "_gas_holds", lambda *_: False)
                report = Report()
                _receipts.check_receipt_gas(receipts, blocks, report)
                outcomes.append(sorted(report.failures, key=repr))  # Polars's order of ties is its own
        return outcomes[0], outcomes[1]

    found = 0
    for rows in (receipts, receipts.slice(1), receipts.slice(0, 0), pa.concat_tables([receipts, receipts])):
        fast, reference = both(rows, blocks)
        assert fast == reference
        found += bool(reference)
    names = ("block_number", "transaction_index", "gas_used", "cumulative_gas_used")
    for column, changed in _each_change(receipts, names, "gas"):
        fast, reference = both(changed, blocks)
        assert fast == reference, column
        found += bool(reference)
    for column, changed in _each_change(blocks, ("block_number", "gas_used"), "gas"):
        fast, reference = both(receipts, changed)
        assert fast == reference, column
        found += bool(reference)
    assert found > 10


def test_empty_tables_are_proven_as_the_reference_proves_them(
    stored: tuple[pa.Table, pa.Table], folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A piece without rows (blocks without transactions, an empty chunk): every whole-column path as the reference."""
    blocks, transactions = stored
    receipts = read_folder(folder, "receipts")
    assert receipts is not None
    none, no_receipts = transactions.slice(0, 0), receipts.slice(0, 0)
    for heads in (blocks, blocks.slice(0, 0)):
        fast = _outcome(none, heads, monkeypatch, native=True)
        assert not isinstance(fast, str), fast  # no exception
        assert fast == _outcome(none, heads, monkeypatch, native=False)
        for check, given in (
            (_derived.check_transaction_fields, (none, heads)),
            (_derived.check_receipts_with_transactions, (no_receipts, none, heads)),
            (_derived.check_receipts_with_transactions, (receipts, none, heads)),
        ):
            want = _screened(check, *given, monkeypatch=monkeypatch, screen=False)
            assert _screened(check, *given, monkeypatch=monkeypatch, screen=True) == want
        report = Report()
        _derived.check_block_lists(heads, report, transactions=none)
        _derived.check_indexes("transactions", none, report)
        assert (report.failures == []) == (heads.num_rows == 0 or not any(heads["transaction_count"].to_pylist()))


def _a_block_with_rows(transactions: pa.Table, rows: int) -> tuple[int, list[int]]:
    """A block of ``transactions`` with at least ``rows`` rows, and the positions of its rows."""
    numbers = transactions["block_number"].to_pylist()
    block = next(n for n in dict.fromkeys(numbers) if numbers.count(n) >= rows)
    return block, [i for i, n in enumerate(numbers) if n == block]


@pytest.mark.parametrize("native", [True, False])
def test_a_null_hash_fails_as_a_wrong_hash_naming_the_row(
    native: bool, stored: tuple[pa.Table, pa.Table], monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks, transactions = stored
    block, positions = _a_block_with_rows(transactions, 2)
    index = positions[-1]
    row = transactions.slice(index, 1).to_pylist()[0]
    changed = _set(transactions, "transaction_hash", index, None)
    outcome = _outcome(changed, blocks, monkeypatch, native=native)
    assert not isinstance(outcome, str), outcome  # reported, not raised
    failures, _ = outcome
    assert [f.check for f in failures] == ["transaction_hash"]  # the root holds: the hash is not in the encoding
    (failure,) = failures
    assert (failure.dataset, failure.block_number) == ("transactions", block)
    assert failure.row == f"transaction_index {row['transaction_index']}"
    assert (failure.expected, failure.actual) == ("null", "0x" + row["transaction_hash"].hex())
    assert outcome == _outcome(changed, blocks, monkeypatch, native=not native)


def _unsigned(transactions: pa.Table, index: int, sender: bytes | None, r: bytes, s: bytes) -> pa.Table:
    """``transactions`` with row ``index``'s signature replaced by ``r`` and ``s`` and its sender by ``sender``."""
    for column, value in (("r", r), ("s", s), ("from_address", sender)):
        transactions = _set(transactions, column, index, value)
    return transactions


UNRECOVERABLE = {"zeroed": (bytes(32), bytes(32)), "out of range": (b"\xff" * 32, b"\xff" * 32)}
"""Signatures no key recovers from: r and s zero, and r and s above the curve's order."""


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("signature", sorted(UNRECOVERABLE))
@pytest.mark.parametrize("null_sender", [True, False])
def test_an_unrecoverable_signature_fails_the_sender_naming_the_transaction(
    null_sender: bool, signature: str, native: bool, stored: tuple[pa.Table, pa.Table], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A transaction in a block always has a sender: a signature that recovers none fails ``sender``, also where the
    stored sender is null (None is not a sender), whatever else fails with it (the hash and root, here)."""
    blocks, transactions = stored
    block, positions = _a_block_with_rows(transactions, 2)
    index = positions[0]
    row = transactions.slice(index, 1).to_pylist()[0]
    stored_sender = None if null_sender else row["from_address"]
    changed = _unsigned(transactions, index, stored_sender, *UNRECOVERABLE[signature])
    outcome = _outcome(changed, blocks, monkeypatch, native=native)
    assert not isinstance(outcome, str), outcome
    failures, _ = outcome
    assert {f.check for f in failures} == {"transaction_hash", "transactions_root", "sender"}
    assert {f.block_number for f in failures} == {block}
    (failure,) = [f for f in failures if f.check == "sender"]
    at = f"transaction {row['transaction_index']} 0x{row['transaction_hash'].hex()}"
    shown = "null" if null_sender else "0x" + row["from_address"].hex()
    assert (failure.dataset, failure.block_number) == ("transactions", block)
    assert failure.row == f"transaction_index {row['transaction_index']}"
    assert (failure.expected, failure.actual) == (f"{at} from {shown}", "an unrecoverable signature")
    assert outcome == _outcome(changed, blocks, monkeypatch, native=not native)


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("null_sender", [True, False])
def test_an_unrecoverable_signature_fails_where_the_hash_and_root_agree(
    null_sender: bool, native: bool, stored: tuple[pa.Table, pa.Table], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The row's hash and its header's root made to agree with its zeroed signature: C proves the block's root from
    whole columns, and the sender check alone is left to fail (it must be able to)."""
    from chainframe.verify._hashing import keccak
    from chainframe.verify._trie import ordered_root

    blocks, transactions = stored
    block, positions = _a_block_with_rows(transactions, 2)
    index = positions[1]
    changed = _unsigned(transactions, index, None if null_sender else b"\x33" * 20, bytes(32), bytes(32))
    rows = changed.slice(positions[0], len(positions)).to_pylist()
    encoded = [_transactions.transaction_bytes(r) for r in rows]
    row = rows[1]
    changed = _set(changed, "transaction_hash", index, keccak(encoded[1]))
    heads = _set(blocks, "transactions_root", blocks["block_number"].to_pylist().index(block), ordered_root(encoded))
    outcome = _outcome(changed, heads, monkeypatch, native=native)
    assert not isinstance(outcome, str), outcome
    failures, _ = outcome
    at = f"transaction {row['transaction_index']} 0x{keccak(encoded[1]).hex()}"
    shown = "null" if null_sender else "0x" + "33" * 20
    assert failures == [
        Failure(
            "transactions",
            block,
            "sender",
            f"{at} from {shown}",
            "an unrecoverable signature",
            row=f"transaction_index {row['transaction_index']}",
        )
    ]
    assert outcome == _outcome(changed, heads, monkeypatch, native=not native)
