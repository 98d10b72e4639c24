"""Recorded JSON-RPC responses from public repositories, as (method, params, result or error) records.

The files live in the repository, in ``tests/data/recorded`` (sources, commits and licenses in
``tests/data/NOTICE.md``); ``CHAINFRAME_FIXTURES`` may point at another copy of the same collection, such as the full
one the files were taken from. Each source stores responses its own way; this module turns all of them into
:class:`Recorded`, named by the method whose *result shape* they have.

Used:

* ``execution-apis/tests/<method>/*.io`` (hive rpc-compat, geth on a test chain): ``>>`` request and ``<<`` response
  lines, ``//`` comments; every pair, errors included.
* ``ethereum-etl/**/web3_response.<method>_<params>.json`` (mainnet; mostly Parity): full response envelopes, the
  request in the file name. ``eth_getBlockByNumber`` and ``eth_getTransactionReceipt`` as named;
  ``eth_getFilterLogs`` as ``eth_getLogs`` (same result) with the filter taken from the sibling ``eth_newFilter`` file
  name; ``debug_traceBlockByNumber`` with callTracer split into one ``debug_traceCall`` callTracer result per
  transaction. Also ``test_export_tokens_job/token_with_invalid_data/eth_getBlockByNumber.json`` (an envelope whose
  request is not recorded).
* ``geth-tracers/testdata/{call_tracer,call_tracer_withLog,prestate_tracer,prestate_tracer_with_diff_mode}/*.json``:
  the ``result`` as a ``debug_traceCall`` result, with the file's ``tracerConfig`` in the tracing options.
* ``other/go-ethereum/internal/ethapi/testdata/<method>-<case>.json``: bare results of geth's API tests.
* ``other/ethereumjs/...``: bare blocks (by number; ``alchemy14151203.json`` by hash), the one uncle
  (``eth_getUncleByBlockHashAndIndex`` of its nephew, index 0), transactions, and ``eth_getProof`` results keyed by
  the block tag they were requested at (one record per tag).
* ``other/alloy/.../test_data/{call_tracer,pre_state_tracer}/*.json``: bare tracer results.

Deliberately not used, and not copied into the repository (see :data:`NOT_RPC_RESULTS`): chain and genesis files, the
hive fork environment and forkchoice request, the chain generator's state dump and tx index, ethereum-etl's expected
CSV/JSON output and intermediate trace file, Parity ``trace_block`` (no spec method, no typed class), ``eth_newFilter``
/ ``eth_uninstallFilter`` (a filter id and a boolean), the ``debug_traceBlockByNumber`` of an empty block (``[]``: no
frame), and the manifest itself. :func:`unaccounted_files` lists any file that is in neither group, so a file added to
the collection cannot be skipped silently. (The ``eth_newFilter`` files are copied all the same: their names give
the filters of the ``eth_getFilterLogs`` records.)

Where a source did not record the request, ``params`` hold what is recoverable (block number, hash, the tracer options
the decoder needs) and labels or placeholders elsewhere: ``{}`` for a traced call object that is not recorded,
``"latest"`` for an unknown block, and the case label (``"notfound"``) for an unknown hash.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import fnmatch
from functools import cache
from pathlib import Path
from typing import Any

FIXTURES_ENV = "CHAINFRAME_FIXTURES"
RECORDED_DIR = Path(__file__).resolve().parent / "data" / "recorded"

#: Files in the collection that hold no JSON-RPC result, with the reason they are left out.
NOT_RPC_RESULTS: dict[str, str] = {
    "MANIFEST.md": "the collection's description",
    "execution-apis/tests/chain.rlp": "RLP-encoded blocks, the chain the .io files were recorded on",
    "execution-apis/tests/genesis.json": "geth genesis and chain config",
    "execution-apis/tests/forkenv.json": "hive's fork environment variables",
    "execution-apis/tests/headfcu.json": "an engine_forkchoiceUpdatedV3 request, no result",
    "execution-apis/tools/chain/*.json": "the chain generator's state dump and tx index, not RPC output",
    "ethereum-etl/*/expected_*": "ethereum-etl's decoded output (CSV/JSON rows), not RPC output",
    "ethereum-etl/*/geth_traces.json": "ethereum-etl's intermediate trace form",
    "ethereum-etl/*/web3_response.trace_block_*.json": "Parity trace_block: not a spec method, no typed class",
    "ethereum-etl/*/block_without_transactions/web3_response.debug_traceBlockByNumber_*.json": (
        "an empty list: a block without transactions has no call frame to decode"
    ),
    "ethereum-etl/*/web3_response.eth_newFilter_*.json": "a filter id (its name gives eth_getFilterLogs' filter)",
    "ethereum-etl/*/web3_response.eth_uninstallFilter_*.json": "a boolean",
    "networks/*": (
        "OP, Arbitrum and Polygon blocks and receipts (read by tests/verify/test_l2_recorded.py) and Erigon's mainnet "
        "trace_block answers (read by tests/datasets/test_parity_native.py)"
    ),
}

_TRACER_DIRS = {
    "call_tracer": "callTracer",
    "call_tracer_withLog": "callTracer",
    "prestate_tracer": "prestateTracer",
    "prestate_tracer_with_diff_mode": "prestateTracer",
}
_ALLOY_TRACES = {
    "call_tracer/default.json": {"tracer": "callTracer"},
    "call_tracer/legacy.json": {"tracer": "callTracer"},
    "call_tracer/only_top_call.json": {"tracer": "callTracer", "tracerConfig": {"onlyTopCall": True}},
    "call_tracer/with_log.json": {"tracer": "callTracer", "tracerConfig": {"withLog": True}},
    "pre_state_tracer/default.json": {"tracer": "prestateTracer"},
    "pre_state_tracer/diff_mode.json": {"tracer": "prestateTracer", "tracerConfig": {"diffMode": True}},
    "pre_state_tracer/legacy.json": {"tracer": "prestateTracer"},
}
_ZERO_HASH = "0x" + "00" * 32


@dataclass(frozen=True, slots=True)
class Recorded:
    """One recorded response: the request it answers and its ``result`` (``None`` for null) or ``error``."""

    path: str  # relative to the fixtures root
    method: str
    params: list[Any]
    result: Any = None
    error: dict[str, Any] | None = None
    part: str = ""  # which response inside the file, when it holds several

    @property
    def id(self) -> str:
        """A stable test id: the path, plus the part when the file holds several responses."""
        return f"{self.path}#{self.part}" if self.part else self.path


class FixturesMissingError(RuntimeError):
    """The fixture collection is not where it should be; recorded-response tests cannot run without it."""


def fixtures_root() -> Path:
    """``$CHAINFRAME_FIXTURES`` if set, else the copy in the repository; raises if the folder is missing."""
    configured = os.environ.get(FIXTURES_ENV)
    root = Path(configured) if configured else RECORDED_DIR
    if not root.is_dir():
        raise FixturesMissingError(
            f"recorded fixtures not found at {root}; unset {FIXTURES_ENV} to use the copy in tests/data/recorded"
        )
    return root


def recorded_responses() -> list[Recorded]:
    """Every recorded response in the collection, in a stable order.

    A fresh list each call, but the records and their parsed JSON are shared (parsed once): treat them as read-only.
    """
    return list(_load(fixtures_root()))


def lowercased(value: Any) -> Any:
    """JSON with every hex string lowercased: hex digits are case-insensitive (addresses come checksummed)."""
    if isinstance(value, str):
        return value.lower() if value.startswith("0x") else value
    if isinstance(value, list):
        return [lowercased(x) for x in value]
    if isinstance(value, dict):
        return {lowercased(k): lowercased(v) for k, v in value.items()}
    return value


def assert_lossless(original: Any, decoded: Any) -> None:
    """``decoded`` (a typed object, a tuple of them, an int or None) encodes back to ``original``: the same JSON text,
    key order and ``true``/``1`` included, after :func:`lowercased`."""
    if isinstance(decoded, tuple):
        encoded: Any = [item.to_json() for item in decoded]
    elif decoded is None or isinstance(decoded, int):
        encoded = decoded
    else:
        encoded = decoded.to_json()
    assert json.dumps(lowercased(encoded)) == json.dumps(lowercased(original))


def unaccounted_files() -> list[str]:
    """Files in the collection that are neither read by a loader nor listed in :data:`NOT_RPC_RESULTS`."""
    root = fixtures_root()
    used = {r.path for r in _load(root)} | set(_filter_name_files(root))
    return sorted(
        rel
        for path in root.rglob("*")
        if path.is_file()
        and (rel := path.relative_to(root).as_posix()) not in used
        and not any(fnmatch(rel, pattern) for pattern in NOT_RPC_RESULTS)
    )


@cache
def _load(root: Path) -> tuple[Recorded, ...]:
    readers = (_execution_apis, _ethereum_etl, _geth_tracers, _go_ethereum, _ethereumjs, _alloy)
    return tuple(record for reader in readers for record in reader(root))


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


# --- execution-apis: hive .io files ---------------------------------------------------------------------------------


def _execution_apis(root: Path) -> Iterator[Recorded]:
    for path in sorted((root / "execution-apis" / "tests").glob("*/*.io")):
        request: dict[str, Any] | None = None
        pairs = 0
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith(">> "):
                request = json.loads(line[3:])
            elif line.startswith("<< "):
                if request is None:
                    raise ValueError(f"{path}: response before any request")
                response = json.loads(line[3:])
                pairs += 1
                yield Recorded(
                    path=_rel(root, path),
                    method=request["method"],
                    params=request.get("params", []),
                    result=response.get("result"),
                    error=response.get("error"),
                    part=str(pairs) if pairs > 1 else "",
                )
                request = None
            elif line.strip() and not line.startswith("//"):
                raise ValueError(f"{path}: unexpected line {line[:40]!r}")


# --- ethereum-etl: web3 mock-provider envelopes --------------------------------------------------------------------

_ETL_PREFIX = "web3_response."


def _ethereum_etl(root: Path) -> Iterator[Recorded]:
    base = root / "ethereum-etl"
    for path in sorted(base.rglob(f"{_ETL_PREFIX}*.json")):
        method, args = _etl_request(path.name)
        envelope = _read(path)
        rel = _rel(root, path)
        if method in ("eth_getBlockByNumber", "eth_getTransactionReceipt"):
            params: list[Any] = [_etl_scalar(arg) for arg in args]
            yield Recorded(
                path=rel, method=method, params=params, result=envelope["result"], error=envelope.get("error")
            )
        elif method == "eth_getFilterLogs":
            yield Recorded(path=rel, method="eth_getLogs", params=[_etl_filter(path)], result=envelope["result"])
        elif method == "debug_traceBlockByNumber":
            options = {"tracer": "callTracer"}  # the name has it lower-cased ("calltracer")
            for index, item in enumerate(envelope["result"]):
                yield Recorded(
                    path=rel,
                    method="debug_traceCall",
                    params=[{}, args[0], options],
                    result=item["result"],
                    part=f"tx{index}",
                )
    # The one envelope saved under a plain name: ethereum-etl requests blocks without full transactions by default.
    path = base / "tests/resources/test_export_tokens_job/token_with_invalid_data/eth_getBlockByNumber.json"
    block = _read(path)["result"]
    yield Recorded(path=_rel(root, path), method="eth_getBlockByNumber", params=[block["number"], False], result=block)


def _etl_request(name: str) -> tuple[str, list[str]]:
    """``web3_response.eth_getBlockByNumber_0x76250_true.json`` -> (method, ["0x76250", "true"])."""
    words = name.removeprefix(_ETL_PREFIX).removesuffix(".json").split("_")
    return f"{words[0]}_{words[1]}", words[2:]


def _etl_scalar(arg: str) -> Any:
    return {"true": True, "false": False}.get(arg, arg)


def _etl_filter(logs_path: Path) -> dict[str, Any]:
    """The filter of the ``eth_newFilter`` call saved next to an ``eth_getFilterLogs`` response, from its file name."""
    (new_filter,) = logs_path.parent.glob(f"{_ETL_PREFIX}eth_newFilter_*.json")
    _, args = _etl_request(new_filter.name)
    pairs = dict(zip(args[::2], args[1::2], strict=True))
    return {key: [value] if key == "topics" else value for key, value in pairs.items()}


def _filter_name_files(root: Path) -> Iterator[str]:
    for path in (root / "ethereum-etl").rglob(f"{_ETL_PREFIX}eth_newFilter_*.json"):
        yield _rel(root, path)


# --- geth tracer test cases ------------------------------------------------------------------------------------------


def _geth_tracers(root: Path) -> Iterator[Recorded]:
    for folder, tracer in _TRACER_DIRS.items():
        for path in sorted((root / "geth-tracers" / "testdata" / folder).glob("*.json")):
            case = _read(path)
            options: dict[str, Any] = {"tracer": tracer}
            if "tracerConfig" in case:
                options["tracerConfig"] = case["tracerConfig"]
            number = case["context"]["number"]  # decimal text in most files, hex in one
            block = number if number.startswith("0x") else hex(int(number))
            yield Recorded(
                path=_rel(root, path), method="debug_traceCall", params=[{}, block, options], result=case["result"]
            )


# --- go-ethereum internal/ethapi golden files ---------------------------------------------------------------------


def _go_ethereum(root: Path) -> Iterator[Recorded]:
    for path in sorted((root / "other/go-ethereum/internal/ethapi/testdata").glob("*.json")):
        method, _, case = path.stem.partition("-")
        result = _read(path)
        yield Recorded(
            path=_rel(root, path), method=method, params=_geth_api_params(method, case, result), result=result
        )


def _geth_api_params(method: str, case: str, result: Any) -> list[Any]:
    """Rebuild the request of a geth API test case from its name (``tag-pending-fullTx``) and, if any, its result."""
    full = case.endswith("-fullTx")
    kind, _, label = case.removesuffix("-fullTx").partition("-")
    first = result[0] if isinstance(result, list) and result else result
    if kind == "tag":
        target: Any = label
    elif kind == "number" and label.isdigit():
        target = hex(int(label))
    elif label == "empty":
        target = _ZERO_HASH
    elif isinstance(first, dict):  # the result names what was asked for
        target = first[_ASKED_BY[method]]
    else:
        target = label  # not recoverable: "notfound", "pending", "latest+1"
    return [target, full] if method.startswith("eth_getBlockBy") else [target]


_ASKED_BY = {
    "eth_getBlockByHash": "hash",
    "eth_getBlockByNumber": "number",
    "eth_getBlockReceipts": "blockHash",
    "eth_getTransactionReceipt": "transactionHash",
}


# --- ethereumjs: bare results captured from Infura / Alchemy ------------------------------------------------------

_EJS = "other/ethereumjs/packages"
_EJS_BY_HASH = {"alchemy14151203.json"}
_EJS_UNCLE = "testdata-from-rpc-with-uncles_uncle-block-data.json"
_EJS_NEPHEW = "testdata-from-rpc-with-uncles.json"


def _ethereumjs(root: Path) -> Iterator[Recorded]:
    block_dirs = (root / _EJS / "block/test/testdata", root / _EJS / "statemanager/test/testdata/providerData/blocks")
    for path in sorted(p for folder in block_dirs for p in folder.glob("*.json")):
        block = _read(path)
        rel = _rel(root, path)
        if path.name == _EJS_UNCLE:
            nephew = _read(path.parent / _EJS_NEPHEW)
            index = nephew["uncles"].index(block["hash"])
            yield Recorded(
                path=rel, method="eth_getUncleByBlockHashAndIndex", params=[nephew["hash"], hex(index)], result=block
            )
            continue
        full = any(isinstance(tx, dict) for tx in block["transactions"])
        if path.name in _EJS_BY_HASH:
            yield Recorded(path=rel, method="eth_getBlockByHash", params=[block["hash"], full], result=block)
        else:
            yield Recorded(path=rel, method="eth_getBlockByNumber", params=[block["number"], full], result=block)
    tx_files = [root / _EJS / "tx/test/json/rpcTx.json"]
    tx_files += sorted((root / _EJS / "statemanager/test/testdata/providerData/transactions").glob("*.json"))
    for path in tx_files:
        tx = _read(path)
        yield Recorded(path=_rel(root, path), method="eth_getTransactionByHash", params=[tx["hash"]], result=tx)
    for path in sorted((root / _EJS / "statemanager/test/testdata/providerData/accounts").glob("*.json")):
        for tag, proof in _read(path).items():
            keys = [entry["key"] for entry in proof["storageProof"]]
            yield Recorded(
                path=_rel(root, path), method="eth_getProof", params=[path.stem, keys, tag], result=proof, part=tag
            )


# --- alloy: bare tracer results --------------------------------------------------------------------------------------


def _alloy(root: Path) -> Iterator[Recorded]:
    base = root / "other/alloy/crates/rpc-types-trace/test_data"
    found = sorted(_rel(base, path) for path in base.rglob("*.json"))
    if found != sorted(_ALLOY_TRACES):
        raise ValueError(f"alloy trace files changed: {found}; say which tracer options made each")
    for name, options in _ALLOY_TRACES.items():
        path = base / name
        yield Recorded(
            path=_rel(root, path), method="debug_traceCall", params=[{}, "latest", options], result=_read(path)
        )
