"""Verification: prove stored rows against the block headers they came from.

Each check recomputes a header field (the block hash, ``logsBloom``) or a count from the rows and compares it with
the stored value. A check that does not apply to a block is reported as skipped with its reason, never as passed.
"""

from chainframe.verify._answers import receipts_and_logs
from chainframe.verify._derived import check_header_columns, check_not_removed, check_receipts_with_transactions
from chainframe.verify._folder import TOGETHER, prove_together, read_folder, verify_folder
from chainframe.verify._report import Failure, Report, Skip
from chainframe.verify._tables import verify_tables

__all__ = [
    "TOGETHER",
    "Failure",
    "Report",
    "Skip",
    "check_header_columns",
    "check_not_removed",
    "check_receipts_with_transactions",
    "prove_together",
    "read_folder",
    "receipts_and_logs",
    "verify_folder",
    "verify_tables",
]
