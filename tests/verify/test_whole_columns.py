"""The checks that prove blocks from whole columns report exactly what the row-by-row reference reports.

``check_transactions_roots`` proves a block from C's hashes and root and the columns' recovery inputs when all agree,
and reads a block's rows into Python only when something differs: on real devnet transactions and random ones of
every type, each column changed in turn (to another value, to null), its failures, in their order, and its skips must
be those of the reference path (``NATIVE`` off: every row in Python).
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
from chainframe.verify import Report, _senders, _transactions
from chainframe.verify._folder import read_folder
from tests.verify.test_native import _random_transaction


@pytest.fixture(scope="module")
def stored(devnet_session: Devnet, tmp_path_factory: pytest.TempPathFactory) -> tuple[pa.Table, pa.Table]:
    out = tmp_path_factory.mktemp("whole_columns")
    extract(["blocks", "transactions"], blocks="0:60", rpc=devnet_session.node.url, out=out, progress=False)
    blocks, transactions = read_folder(Path(out), "blocks"), read_folder(Path(out), "transactions")
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
