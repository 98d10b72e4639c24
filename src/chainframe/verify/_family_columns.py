"""The chain families' own columns: null where the chain's family has none (or the row is of another type), and a
header's equal to what its hashed fields hold.

A column only some families have is proven by nothing on the others' chains: its value there could only have been
added, so it must be null. Whole columns are screened with numpy; only the rows that differ are read into Python.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from chainframe import _kernels as pc
from chainframe.families import FAMILIES, ChainFamily
from chainframe.verify._columns import int_values, nulls, positions
from chainframe.verify._hashing import keccak, rlp
from chainframe.verify._report import Failure, Report

_ANY: dict[str, set[str]] = {}
for _family in FAMILIES:
    for _dataset, _columns in _family.columns.items():
        _ANY.setdefault(_dataset, set()).update(_columns)


def _shown(value: Any) -> str:
    return "0x" + value.hex() if isinstance(value, bytes) else str(value)


def check_family_columns(name: str, table: pa.Table, family: ChainFamily, report: Report) -> None:
    """Each family column of ``table`` (of dataset ``name``) null on the rows ``family`` says have none."""
    import numpy as np

    mine = family.columns.get(name, {})
    for column in sorted(_ANY.get(name, set()) & set(table.column_names)):
        if table[column].null_count == table.num_rows:
            continue  # the common case (a chain of another family): nothing to read
        present = ~nulls(table[column])
        if column in mine and mine[column] is None:
            continue
        if column in mine:
            kind = int_values(table["transaction_type"]) if "transaction_type" in table.column_names else None
            wrong = present if kind is None else present & (kind != mine[column])
            why = f"null (only type 0x{mine[column]:02x} has {column})"
        else:
            wrong = present
            why = f"null (the {family.name} family has no {column})"
        at = np.flatnonzero(wrong)
        if not len(at):
            continue
        keys = [k for k in ("block_number", "transaction_index", "log_index") if k in table.column_names]
        for row in pc.take(table.select([*keys, column]), positions(at[:10])).to_pylist():
            where = f"transaction_index {row['transaction_index']}" if "transaction_index" in row else ""
            report.failures.append(Failure(name, row["block_number"], column, _shown(row[column]), why, row=where))


def check_header_family_columns(blocks: pa.Table, family: ChainFamily, report: Report) -> None:
    """The family's own header columns are what the hashed header holds (Arbitrum's send root in its extra data...),
    and the data it holds the hash of hashes to it (Avalanche's atomic transactions)."""
    for column, into in family.hashed_into.items():
        if column in blocks.column_names and into in blocks.column_names:
            for row in blocks.select(["block_number", column, into]).to_pylist():
                if row[column] is not None and row[into] is not None and keccak(rlp(row[column])) != row[into]:
                    why = f"data whose keccak(rlp) is {_shown(row[into])} ({into})"
                    report.failures.append(Failure("blocks", row["block_number"], column, _shown(row[column]), why))
    own = [c for c in family.columns.get("blocks", {}) if c in blocks.column_names]
    if not own or "extra_data" not in blocks.column_names or "mix_hash" not in blocks.column_names:
        return
    for row in blocks.select(["block_number", "extra_data", "mix_hash", *own]).to_pylist():
        if row["extra_data"] is None or row["mix_hash"] is None:
            continue
        held = family.header_columns(row["extra_data"], row["mix_hash"])
        for column in own:
            if column in held and row[column] != held[column]:
                report.failures.append(Failure("blocks", row["block_number"], column, _shown(row[column]),
                                               f"{_shown(held[column])} in the hashed header"))  # fmt: skip
