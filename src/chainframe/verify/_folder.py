"""Verify what a folder holds: ``DIR/<dataset>/*.parquet`` read whole, then checked as one block range."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from chainframe.verify._report import Report
from chainframe.verify._tables import verify_tables

DATASETS = ("blocks", "transactions", "receipts", "logs", "uncles", "account_proofs", "storage_proofs")


def read_folder(folder: Path, dataset: str) -> pa.Table | None:
    """The rows of one dataset under ``folder``, or None when it was not extracted.

    The only place that knows the folder layout, so a new layout changes this function alone.
    """
    files = sorted((folder / dataset).glob("*.parquet"))
    if not files:
        return None
    return pa.concat_tables([pq.read_table(f) for f in files], promote_options="default")


def verify_folder(folder: str | Path) -> Report:
    """Verify the blocks, transactions, receipts and logs stored under ``folder`` against each other."""
    tables = {name: read_folder(Path(folder), name) for name in DATASETS}
    return verify_tables(**tables)
