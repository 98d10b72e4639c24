"""The rows a family's blocks hold outside their roots (Bor's state-sync transaction and its receipt), set aside
before the roots are rebuilt, after they are proven to be those rows.

Which row a block holds outside its roots follows from the block alone (its hash, :meth:`ChainFamily.
outside_roots_hash`), so the rows are chosen here from their hashes, not from the stored mark: a row marked that is
not the block's, or the block's row not marked, fails ``is_state_sync``, and a forged row cannot hide from the
roots by claiming the mark. What such a row holds (its logs) no header commits to: skipped with the family's reason.
"""

from __future__ import annotations

import pyarrow as pa

from chainframe import _kernels as pc
from chainframe.families import ChainFamily
from chainframe.verify._report import Failure, Report


def set_aside_outside_roots(
    tables: dict[str, pa.Table | None], blocks: pa.Table, family: ChainFamily, report: Report
) -> dict[str, pa.Table | None]:
    """``tables`` (transactions, receipts, logs) without the rows none of the block's roots holds; each mark checked
    against the hash rule. Unchanged for a family whose blocks have none."""
    if family.outside_roots is None or not blocks.num_rows:
        return tables
    hashes = dict(zip(blocks["block_number"].to_pylist(), blocks["block_hash"].to_pylist(), strict=True))
    expected = {n: family.outside_roots_hash(n, h) for n, h in hashes.items() if h is not None}
    column = family.outside_roots_column
    candidates = [h for h in expected.values() if h is not None]
    aside: list[bytes] = []
    out = dict(tables)
    for name in ("transactions", "receipts"):
        table = tables.get(name)
        if table is None or not table.num_rows:
            continue
        kind = table.schema.field("transaction_hash").type
        outside = pc.is_in(table["transaction_hash"], value_set=pa.array(candidates, kind))  # whole columns: cheap
        if column is not None and column in table.column_names:
            marked = pc.coalesce(table[column], False)
            wrong = table.filter(pc.not_equal(marked, outside))
            for row in wrong.select(["block_number", "transaction_hash", column]).to_pylist()[:10]:
                truth = row["transaction_hash"] == expected.get(row["block_number"])
                report.failures.append(Failure(name, row["block_number"], column, str(row[column]),
                                               f"{truth} (by the block's hash rule)",
                                               row=f"transaction 0x{row['transaction_hash'].hex()}"))  # fmt: skip
        if not pc.any(outside).as_py():
            continue
        held = table.filter(outside)
        aside += held["transaction_hash"].to_pylist()
        out[name] = table.filter(pc.not_equal(outside, True))
        report.skip(name, "outside the roots", family.outside_roots, blocks=len(set(held["block_number"].to_pylist())))
    logs = tables.get("logs")
    if logs is not None and aside and logs.num_rows:
        kind = logs.schema.field("transaction_hash").type
        out["logs"] = logs.filter(
            pc.not_equal(pc.is_in(logs["transaction_hash"], value_set=pa.array(aside, kind)), True)
        )
    return out
