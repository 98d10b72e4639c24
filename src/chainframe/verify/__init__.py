"""Verification: prove stored rows against the block headers they came from.

Each check recomputes a header field (the block hash, ``logsBloom``) or a count from the rows and compares it with
the stored value. A check that does not apply to a block is reported as skipped with its reason, never as passed.
"""

from chainframe.verify._answers import receipts_and_logs
from chainframe.verify._derived import check_header_columns, check_not_removed
from chainframe.verify._folder import (
    prove_from_logs,
    prove_together,
    read_folder,
    together_reads,
    unproven_lists,
    verify_folder,
)
from chainframe.verify._native_transfers import prove_native_transfers
from chainframe.verify._piece import (
    Piece,
    prove_accounts,
    prove_derived,
    prove_headers,
    prove_logs,
    prove_receipts,
    prove_slots,
    prove_transactions,
    prove_uncles,
)
from chainframe.verify._report import Failure, Report, Skip
from chainframe.verify._rows import check_log_set, check_same_rows
from chainframe.verify._state_diffs import prove_state_diffs
from chainframe.verify._state_reads import prove_state
from chainframe.verify._tables import check_receipts_from_transactions, verify_tables

__all__ = [
    "Failure",
    "Piece",
    "Report",
    "Skip",
    "check_header_columns",
    "check_log_set",
    "check_not_removed",
    "check_receipts_from_transactions",
    "check_same_rows",
    "prove_accounts",
    "prove_derived",
    "prove_from_logs",
    "prove_headers",
    "prove_logs",
    "prove_native_transfers",
    "prove_receipts",
    "prove_slots",
    "prove_state",
    "prove_state_diffs",
    "prove_together",
    "prove_transactions",
    "prove_uncles",
    "read_folder",
    "receipts_and_logs",
    "together_reads",
    "unproven_lists",
    "verify_folder",
    "verify_tables",
]
