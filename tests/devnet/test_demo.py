"""The README's first command ends in `chainframe demo`: devnet -> Parquet in ./data -> DuckDB and Polars queries."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

from chainframe.devnet import TEST_WORKLOAD, ensure_chain


def test_demo_extracts_the_whole_chain_and_queries_it(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "chainframe.cli", "demo", "--out", str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    truth = ensure_chain(TEST_WORKLOAD).truth
    assert "/v3/<redacted>" in done.stdout
    assert not re.search(r"/v3/[0-9a-f]{32}", done.stdout + done.stderr)
    assert "DuckDB" in done.stdout
    assert "Polars" in done.stdout
    assert (
        f"{truth.tx_count:,} transactions, {truth.reverted_count:,} reverted, {truth.log_count:,} logs" in done.stdout
    )
    rows = {d: pq.read_table(tmp_path / "data" / d).num_rows for d in ("blocks", "transactions", "receipts", "logs")}
    assert rows == {
        "blocks": truth.block_count,
        "transactions": truth.tx_count,
        "receipts": truth.tx_count,
        "logs": truth.log_count,
    }
