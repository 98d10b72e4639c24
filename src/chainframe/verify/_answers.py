"""The node's receipts answers as the two tables a proof needs, the receipts and the logs inside them, in one pass.

Reading the logs out of ``eth_getBlockReceipts`` answers through Polars' JSON reader (:meth:`Logs.from_receipts`)
was the largest single cost of proving logs and receipts. The native scanner reads a receipt's logs as a list of
objects (as it reads a block's transactions), so one scan gives both tables. Where the scanner is off or declines an
answer, the datasets' own pure path gives the same tables (and names a bad value).
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
from pyarrow._compute import call_function

from chainframe import _kernels as pc
from chainframe.datasets import LOGS, RECEIPTS, build_arrow
from chainframe.verify._columns import zeros

_LOGS = "__logs"
"""The scanned receipts' column of their logs (a list of objects), not a receipts column."""


def receipts_and_logs(bodies: Sequence[bytes], *, chain_id: int) -> tuple[pa.Table, pa.Table]:
    """The receipts in ``bodies`` (``eth_getBlockReceipts`` batch answers) and their logs, wei columns as words."""
    scanned = _scanned(bodies, chain_id=chain_id)
    if scanned is not None:
        return scanned
    return (
        RECEIPTS.transform(bodies, chain_id=chain_id, u256="binary"),
        LOGS.from_receipts(bodies, chain_id=chain_id, u256="binary"),
    )


def _scanned(bodies: Sequence[bytes], *, chain_id: int) -> tuple[pa.Table, pa.Table] | None:
    # A receipt's log count is its logs' list's length (the Count kind reads the same list): one key, read once.
    kinds = {name: kind for name, kind in RECEIPTS.native_kinds("binary").items() if name != "log_count"}
    kinds[_LOGS] = ("logs", LOGS.native_kinds("binary"))
    scanned = RECEIPTS.scan_answers(bodies, kinds)
    if scanned is None:
        return None
    n, out = scanned
    lists = out.pop(_LOGS)
    out["log_count"] = pc.coalesce(pc.cast(pc.list_value_length(lists), pa.uint64()), zeros(n, pa.uint64()))
    receipts = build_arrow(out, RECEIPTS.columns, n, chain_id=chain_id, u256="binary")
    items = pc.list_flatten(lists)
    fields = dict(zip(LOGS.native_kinds("binary"), items.flatten(), strict=True))
    logs = build_arrow(fields, LOGS.columns, len(items), chain_id=chain_id, u256="binary")
    # As the pure path reads them: a list item without a log index is no log (it is null, or not one).
    if logs["log_index"].null_count:
        logs = pc.filter(logs, call_function("is_valid", [logs["log_index"]]))
    return receipts, logs
