"""Rows of a block that none of its roots holds (Bor's state-sync transaction and its receipt), marked as such.

The chain's family says which hash such a row has (it follows from the block's number and hash alone) and names the
boolean column that marks it; on a chain of another family the column stays null. A family's chain pays one hash per
block and a set lookup per row, other chains a lookup per table.
"""

from __future__ import annotations

import pyarrow as pa

from chainframe import _kernels as pc


def mark_outside_roots(table: pa.Table, chain_id: int) -> pa.Table:
    """``table`` (transactions or receipts) with the family's mark set: true on the row the block's roots do not hold,
    false on the others; unchanged where the family has none."""
    from chainframe.families import family_of  # deferred: the families load when rows are built, not with the catalogue

    family = family_of(chain_id)
    column = family.outside_roots_column
    if column is None or column not in table.column_names or not table.num_rows:
        return table
    blocks = table.select(["block_number", "block_hash"]).group_by(["block_number", "block_hash"]).aggregate([])
    hashes = [
        family.outside_roots_hash(n, h)
        for n, h in zip(blocks["block_number"].to_pylist(), blocks["block_hash"].to_pylist(), strict=True)
        if n is not None and h is not None
    ]
    kind = table.schema.field("transaction_hash").type
    marks = pc.is_in(table["transaction_hash"], value_set=pa.array([h for h in hashes if h is not None], kind))
    index = table.schema.get_field_index(column)
    return table.set_column(index, table.schema.field(column), pc.coalesce(marks, False))
