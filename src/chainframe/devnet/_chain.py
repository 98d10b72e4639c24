"""Built chains, cached: a workload is built once per spec, dumped with its history, and loaded from then on.

The cache key covers everything that changes the chain (the spec, the compiled contracts, the anvil version, the
builder's own version), so a stale dump is never served. Building writes to temporary names and renames, under a
file lock, so concurrent runs and killed runs leave either a whole cache entry or none.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from chainframe.devnet._anvil import ANVIL_VERSION, AnvilNode, AnvilOptions
from chainframe.devnet._contracts import artifacts_digest
from chainframe.devnet._errors import DevnetError
from chainframe.devnet._workload import GroundTruth, WorkloadSpec, build_chain

_BUILDER_VERSION = 3  # bump when build_chain changes what it sends (2: a type-4 transaction in block 2; 3: Purse)


def default_cache_dir() -> Path:
    """``$CHAINFRAME_CACHE_DIR``, else ``$XDG_CACHE_HOME/chainframe``, else ``~/.cache/chainframe``."""
    explicit = os.environ.get("CHAINFRAME_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "chainframe"


@dataclass(frozen=True)
class BuiltChain:
    state: Path
    """anvil state dump (blocks, receipts, historical states) to start a node from with ``--load-state``."""
    truth: GroundTruth


def chain_key(spec: WorkloadSpec) -> str:
    material = json.dumps(
        {
            "spec": spec.to_json(),
            "contracts": artifacts_digest(),
            "anvil": ANVIL_VERSION,
            "builder": _BUILDER_VERSION,
        },
        sort_keys=True,
    )
    return hashlib.sha256(material.encode()).hexdigest()[:16]


def ensure_chain(spec: WorkloadSpec, cache_dir: Path | None = None) -> BuiltChain:
    """Return the cached chain for ``spec``, building it first if needed."""
    folder = (cache_dir or default_cache_dir()) / "devnet"
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{spec.name}-{chain_key(spec)}"
    state, truth = folder / f"{stem}.state.json", folder / f"{stem}.truth.json"
    with open(folder / f"{stem}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (state.is_file() and truth.is_file()):
            _build(spec, state, truth)
    return BuiltChain(state, GroundTruth.from_json(truth.read_text()))


def _build(spec: WorkloadSpec, state: Path, truth: Path) -> None:
    tmp_state = state.with_suffix(".tmp")
    tmp_state.unlink(missing_ok=True)
    options = AnvilOptions(
        chain_id=spec.chain_id,
        genesis_timestamp=spec.genesis_timestamp,
        auto_mine=False,
        gas_limit=spec.gas_limit,
        dump_state=tmp_state,
        network=spec.network,
    )
    node = AnvilNode(options)
    try:
        ground_truth = build_chain(spec, node)
    finally:
        node.stop(grace=600)  # anvil writes the dump on a clean exit; a large chain takes a while
    if not tmp_state.is_file():
        raise DevnetError(f"anvil exited without writing its state dump to {tmp_state}")
    tmp_truth = truth.with_suffix(".tmp")
    tmp_truth.write_text(ground_truth.to_json())
    os.replace(tmp_state, state)
    os.replace(tmp_truth, truth)
