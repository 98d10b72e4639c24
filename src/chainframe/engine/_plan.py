"""What to extract: validated inputs and the chunk tasks they make.

A :class:`ChunkTask` is plain data (JSON-able): it names a dataset, an inclusive block range, its filters and the
final file. Running it twice gives the same file, so tasks can be retried, resumed, or shipped to other workers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from chainframe._errors import InputError
from chainframe.datasets import DATASETS, U256, BlockRange
from chainframe.engine._files import chunk_path
from chainframe.rpc import _params as params

DEFAULT_CHUNK_SIZE: Mapping[str, int] = {
    "blocks": 1000,
    "transactions": 1000,
    "receipts": 1000,
    "logs": 1000,
    "uncles": 1000,
    "account_proofs": 100,
    "storage_proofs": 100,
    "call_traces": 100,
    "prestate_accounts": 100,
    "prestate_storage": 100,
}
# Which filters each dataset takes; anything else is refused before any request.
FILTERS: Mapping[str, frozenset[str]] = {
    "logs": frozenset({"address", "topics"}),
    "account_proofs": frozenset({"addresses", "storage_keys"}),
    "storage_proofs": frozenset({"addresses", "storage_keys"}),
    "call_traces": frozenset({"calls", "only_top_call"}),
    "prestate_accounts": frozenset({"calls", "diff_mode"}),
    "prestate_storage": frozenset({"calls", "diff_mode"}),
}
_NEEDED: Mapping[str, str] = {
    "account_proofs": "addresses",
    "storage_proofs": "addresses",
    "call_traces": "calls",
    "prestate_accounts": "calls",
    "prestate_storage": "calls",
}


def check_datasets(names: Sequence[str]) -> list[str]:
    if isinstance(names, str):
        names = [names]
    if not names:
        raise InputError(f"name at least one dataset: {', '.join(DATASETS)}")
    unknown = [n for n in names if n not in DATASETS]
    if unknown:
        raise InputError(f"unknown dataset {unknown[0]!r}; the datasets are: {', '.join(DATASETS)}")
    return list(dict.fromkeys(names))


def check_filters(dataset: str, filters: Mapping[str, Any]) -> dict[str, Any]:
    """Validate and normalize a dataset's filters (JSON-able, lowercase hex) without sending anything."""
    allowed = FILTERS.get(dataset, frozenset())
    given = {k: v for k, v in filters.items() if v is not None and v != () and v != []}
    extra = sorted(set(given) - allowed)
    if extra:
        takes = f"takes only {', '.join(sorted(allowed))}" if allowed else "takes no filters"
        raise InputError(f"dataset {dataset!r} {takes}; got {', '.join(extra)}")
    needed = _NEEDED.get(dataset)
    if needed and needed not in given:
        raise InputError(f"dataset {dataset!r} needs {needed}=[...]")
    out: dict[str, Any] = {}
    if dataset == "logs":
        flt = params.log_filter(address_=given.get("address"), topics=given.get("topics"))
        out = {k: v for k, v in (("address", flt.get("address")), ("topics", flt.get("topics"))) if v is not None}
    elif needed == "addresses":
        out["addresses"] = [params.address(a, f"addresses[{i}]") for i, a in enumerate(given["addresses"])]
        out["storage_keys"] = params.storage_keys(given.get("storage_keys", ()))
    elif needed == "calls":
        out["calls"] = params.call_list(given["calls"])
        for flag in ("only_top_call", "diff_mode"):
            if flag in given:
                out[flag] = bool(given[flag])
    json.dumps(out)  # JSON-able by construction; fail here rather than in a worker
    return out


@dataclass(frozen=True, kw_only=True)
class ChunkTask:
    dataset: str
    start: int
    end: int
    filters: Mapping[str, Any] = field(default_factory=dict)
    u256: U256 = "decimal"
    path: str

    @property
    def blocks(self) -> BlockRange:
        return BlockRange(self.start, self.end)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def plan(
    dataset: str,
    blocks: BlockRange,
    *,
    out: Path,
    chain_id: int,
    chunk_size: int,
    filters: Mapping[str, Any],
    u256: U256,
) -> Iterator[ChunkTask]:
    """The chunks of a range, aligned to multiples of ``chunk_size`` so reruns over other ranges reuse files."""
    first = blocks.start - blocks.start % chunk_size
    for aligned in range(first, blocks.end + 1, chunk_size):
        start, end = max(aligned, blocks.start), min(aligned + chunk_size - 1, blocks.end)
        path = chunk_path(out, dataset=dataset, chain_id=chain_id, start=start, end=end, filters=filters)
        yield ChunkTask(dataset=dataset, start=start, end=end, filters=dict(filters), u256=u256, path=str(path))
