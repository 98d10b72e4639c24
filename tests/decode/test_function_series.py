"""``extract transactions traces --function``: decoded calls as series, checked against eth-abi's decoding of the raw
rows the node gives (``collect`` of the same blocks, no function), on the devnet's workload; a call cut short is kept
with its decode_error and counted in the summary; bad input is refused before any request."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import shutil
from collections import Counter
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from eth_abi import decode as abi_decode  # type: ignore[attr-defined]
from eth_abi import encode as abi_encode  # type: ignore[attr-defined]

import chainframe
import chainframe.engine
from chainframe.cli import main
from chainframe.decode import parse_function
from chainframe.devnet import DEV_ACCOUNTS, Devnet
from chainframe.store import read_meta
from tests.decode.test_calls import as_stored, send_calls

TRANSFER = "transfer(address to, uint256 amount)"
PING = "ping(uint256 nonce, bytes payload)"
SET = "set(uint256 slot, uint256 value)"
DIVE = "dive(uint256 depth)"
TYPES = {TRANSFER: ["address", "uint256"], PING: ["uint256", "bytes"], SET: ["uint256", "uint256"],
         DIVE: ["uint256"]}  # fmt: skip
COLUMNS = {TRANSFER: ["to", "amount"], PING: ["arg_nonce", "payload"], SET: ["slot", "arg_value"], DIVE: ["depth"]}
"""Each function's argument columns in the transactions' series: a parameter named like a transaction column (nonce,
value) is ``arg_``-named (in the traces' series, ``depth`` is a frame's column: the argument is ``arg_depth``)."""


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """``chainframe`` with ``argv`` in this process: its exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue()


def _series(out: Path, dataset: str) -> tuple[Path, pa.Table]:
    """The one series folder of ``dataset`` (or the folder named ``dataset``) in ``out``, and its rows."""
    (folder,) = [p for p in out.iterdir() if dataset in (p.name, p.name.split("__")[0])]
    return folder, pa.concat_tables(pq.read_table(f) for f in sorted(folder.glob("*.parquet")))


def _every(out: Path, dataset: str) -> dict[str, pa.Table]:
    """Each series of ``dataset`` in ``out`` (a series per function), by its folder's name."""
    return {p.name: pq.read_table(p) for p in sorted(out.iterdir()) if p.name.split("__")[0] == dataset}


def _calls(out: Path, dataset: str) -> pa.Table:
    """The rows of every series of ``dataset`` in ``out``, as one table (each function's columns null in the
    others' rows)."""
    return pa.concat_tables(_every(out, dataset).values(), promote_options="permissive")


@pytest.fixture(scope="module")
def extracted(devnet_session: Devnet, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The devnet's transactions and traces, raw (collected) and extracted with four functions (two as signatures,
    two from an ABI file), verified: a series per function and dataset."""
    url = devnet_session.http_url
    raw = chainframe.collect("transactions", blocks="0:latest", rpc=url)
    last = max(raw["block_number"].to_pylist())
    frames = chainframe.collect("traces", blocks=f"0:{last}", rpc=url)
    root = tmp_path_factory.mktemp("functions")
    abi = root / "abi.json"
    entries = [parse_function(s) for s in (SET, DIVE)]
    abi.write_text(json.dumps([{"type": "event", "name": "Ping", "inputs": []}] + [
        {"type": "function", "name": f.name, "inputs": [{"name": p.name, "type": p.type.canonical} for p in f.params]}
        for f in entries
    ]))  # fmt: skip
    out = root / "out"
    argv = ["extract", "transactions", "traces", "-b", f"0:{last}", "--rpc", url, "-o", str(out), "--no-progress",
            "--verify", "--function", TRANSFER, "--function", PING, "--function", str(abi)]  # fmt: skip
    code, printed, errors = run_cli(argv)
    assert code == 0, errors
    return {"raw": raw, "frames": frames, "out": out, "printed": printed}


def test_rows_equal_eth_abi_of_each_call(extracted: dict[str, Any]) -> None:
    every = _every(extracted["out"], "transactions")
    signatures = {parse_function(s).signature: s for s in TYPES}
    for name, table in every.items():  # a series per function, named after it, never mixed with plain transactions
        (function,) = set(table["function"].to_pylist())
        assert name.startswith(f"transactions__{parse_function(signatures[function]).name}__f"), name
    assert len(every) == len(TYPES)
    calls = _calls(extracted["out"], "transactions")
    raw = {(r["block_number"], r["transaction_index"]): r for r in extracted["raw"].to_pylist()}
    seen: Counter[str] = Counter()
    for row in calls.to_pylist():
        given = signatures[row["function"]]
        tx = raw[(row["block_number"], row["transaction_index"])]  # joins its raw row on the keys
        assert (row["transaction_hash"], row["input"]) == (tx["transaction_hash"], tx["input"])
        assert row["selector"] == tx["input"][:4] == parse_function(given).selector
        assert row["decode_error"] is None
        expected = [as_stored(v) for v in abi_decode(TYPES[given], tx["input"][4:])]
        assert [row[c] for c in COLUMNS[given]] == expected
        seen[given] += 1
    assert {s for s in seen if seen[s] > 10} == {TRANSFER, PING, SET, DIVE}  # every kind is there


def test_counts_equal_the_transactions_with_the_selector(extracted: dict[str, Any]) -> None:
    calls = _calls(extracted["out"], "transactions")
    got = Counter(calls["function"].to_pylist())
    for given in TYPES:
        function = parse_function(given)
        matching = [r for r in extracted["raw"].to_pylist() if r["to_address"] and r["input"][:4] == function.selector]
        assert got[function.signature] == len(matching), given
    assert calls.num_rows == sum(got.values()) < extracted["raw"].num_rows


def test_internal_calls_from_traces(extracted: dict[str, Any]) -> None:
    dive = parse_function(DIVE)
    (folder,) = extracted["out"].glob(f"traces__{dive.name}__*")
    calls = pq.read_table(folder)
    frames = [r for r in extracted["frames"].to_pylist() if r["input"][:4] == dive.selector
              and not r["call_type"].lower().startswith("create")]  # fmt: skip
    assert sum(1 for r in frames if r["trace_address"]) > 10  # internal calls, not only top-level ones
    expected = Counter((r["transaction_hash"], tuple(r["trace_address"]), Decimal(abi_decode(["uint256"],
                       r["input"][4:])[0])) for r in frames)  # fmt: skip
    mine = [r for r in calls.to_pylist() if r["function"] == dive.signature]
    assert Counter((r["transaction_hash"], tuple(r["trace_address"]), r["arg_depth"]) for r in mine) == expected


def test_footer_names_the_functions(extracted: dict[str, Any]) -> None:
    named = []
    for name, calls in _every(extracted["out"], "transactions").items():
        meta = read_meta(str(sorted((extracted["out"] / name).glob("*.parquet"))[0]))
        assert meta is not None
        assert meta.rows == calls.num_rows
        (text,) = meta.filters["function"]
        assert parse_function(text).text == text  # names kept
        named.append(parse_function(text).signature)
        assert meta.decoded_with is None  # --function, from a signature or a file's entries: --abi names its ABI
    assert sorted(named) == sorted(parse_function(s).signature for s in TYPES)
    assert "calls kept undecoded" not in extracted["printed"]  # the workload's calls all decode


def test_the_raw_rows_are_proven_before_the_calls_are_kept(extracted: dict[str, Any]) -> None:
    """With --verify, every transaction of the blocks is proven against its block's transactions root, then only the
    calls are kept: the summary's verified rows are all of them (for each function's series), its written rows the
    calls."""
    calls = _calls(extracted["out"], "transactions")
    lines = extracted["printed"].splitlines()
    line = next(i for i, text in enumerate(lines) if text.split()[:1] == ["transactions"])
    assert f"{calls.num_rows:,} rows" in lines[line]
    assert lines[line].endswith(f"in {len(TYPES)} series")
    assert f"{len(TYPES) * extracted['raw'].num_rows:,} rows (each series' own, summed)" in lines[line + 1]
    assert "verified" in lines[line + 1]


def test_a_wrong_signature_gives_no_rows(devnet_session: Devnet, extracted: dict[str, Any]) -> None:
    last = max(extracted["raw"]["block_number"].to_pylist())
    calls = chainframe.collect("transactions", blocks=f"0:{last}", rpc=devnet_session.http_url,
                               function="transfer(address to, uint128 amount)")  # fmt: skip
    assert calls.num_rows == 0
    assert {"selector", "function", "decode_error", "to", "amount"} <= set(calls.column_names)


def test_bad_input_refused_before_any_request(tmp_path: Path) -> None:
    out = tmp_path / "out"
    base = ["extract", "transactions", "-b", "0:10", "--rpc", "http://127.0.0.1:9", "-o", str(out), "--no-progress"]
    for given, says in [
        (["--function", "notasig("], "'notasig(': unbalanced parentheses"),
        (["--function", "burn(uint256)", "--function", "collate_propagate_storage(bytes16)"], "share the selector"),
        (["--function", str(tmp_path / "missing.json")], "neither a function signature nor a readable ABI file"),
    ]:
        code, _, errors = run_cli([*base, *given])  # nothing listens at port 9: a request would fail otherwise
        assert code == 2, errors
        assert errors.count("error:") == 1, errors
        assert says in errors, errors
        assert not out.exists()


@pytest.fixture(scope="module")
def chain() -> Iterator[Devnet]:
    """A devnet of its own: this test sends transactions to it."""
    with Devnet() as devnet:
        yield devnet


def test_a_call_cut_short_is_kept_and_counted(chain: Devnet, tmp_path: Path) -> None:
    token = chain.truth.contracts["Token"]
    transfer = parse_function(TRANSFER)
    sent = {"short": transfer.selector + bytes(10),
            "good": transfer.selector + abi_encode(["address", "uint256"], [DEV_ACCOUNTS[1], 3])}  # fmt: skip
    hashes, first, last = send_calls(chain.node.url, {name: (token, data) for name, data in sent.items()})
    out = tmp_path / "out"
    argv = ["extract", "transactions", "-b", f"{first}:{last}", "--rpc", chain.node.url, "-o", str(out),
            "--no-progress", "--function", TRANSFER]  # fmt: skip
    code, printed, errors = run_cli(argv)
    assert code == 0, errors
    _, calls = _series(out, "transactions")
    rows = {r["transaction_hash"]: r for r in calls.to_pylist()}
    assert set(rows) == set(hashes.values())  # the short call is a row, not dropped
    short, good = rows[hashes["short"]], rows[hashes["good"]]
    assert short["input"] == sent["short"]
    assert "too short" in short["decode_error"]
    assert (short["to"], short["amount"]) == (None, None)
    assert good["decode_error"] is None
    assert (good["to"], good["amount"]) == (bytes.fromhex(DEV_ACCOUNTS[1][2:]), Decimal(3))
    assert "1 calls kept undecoded" in printed


ARTIFACTS = Path(chainframe.devnet.__file__).parent / "contracts" / "artifacts.json"
"""The devnet's contracts as compiled, each with its ABI (in the package: solc's output for the contracts in it)."""


def _abi_file(folder: Path, contract: str) -> Path:
    path = folder / f"{contract}.json"
    path.write_text(json.dumps(json.loads(ARTIFACTS.read_text())["contracts"][contract]["abi"]))
    return path


def test_an_abi_decodes_its_events_and_its_functions(
    devnet_session: Devnet, extracted: dict[str, Any], tmp_path: Path
) -> None:
    """--abi Emitter.json on logs and transactions: its Ping events (a series named after the event) and its functions'
    calls (a series per function, named after it), each against eth-abi."""
    last = max(extracted["raw"]["block_number"].to_pylist())
    abi = json.loads(ARTIFACTS.read_text())["contracts"]["Emitter"]["abi"]
    out = tmp_path / "out"
    argv = ["extract", "logs", "transactions", "-b", f"0:{last}", "--rpc", devnet_session.http_url, "-o", str(out),
            "--no-progress", "--abi", str(_abi_file(tmp_path, "Emitter"))]  # fmt: skip
    code, _, errors = run_cli(argv)
    assert code == 0, errors
    functions = [parse_function(f"{e['name']}({','.join(p['type'] for p in e['inputs'])})")
                 for e in abi if e["type"] == "function"]  # fmt: skip
    by_selector = {f.selector: f for f in functions}
    # A series per function, named after it, each holding that function's calls only.
    folders = sorted(p for p in out.glob("transactions__*") if p.is_dir())
    assert sorted(p.name.split("__")[1] for p in folders) == sorted(f.name for f in functions)
    every = {p.name: pq.read_table(p) for p in folders}
    digest = hashlib.sha256(json.dumps(abi, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]
    for name, table in every.items():
        assert set(table["function"].to_pylist()) <= {f.signature for f in functions if name.split("__")[1] == f.name}
        for path in (out / name).glob("*.parquet"):  # each file says which ABI decoded it: the file and its digest
            meta = read_meta(str(path))
            assert meta is not None
            assert meta.decoded_with == f"Emitter.json sha256:{digest}"
    calls = pa.concat_tables(every.values(), promote_options="permissive")
    raw = [r for r in extracted["raw"].to_pylist() if r["to_address"] and r["input"][:4] in by_selector]
    assert sorted(calls["transaction_hash"].to_pylist()) == sorted(r["transaction_hash"] for r in raw)
    assert calls.num_rows > 10
    for row in calls.to_pylist():
        function = by_selector[row["input"][:4]]
        assert row["function"] == function.signature
        entry = next(e for e in abi if e.get("name") == function.name and e["type"] == "function")
        columns = [
            f"arg_{p['name']}" if p["name"] in extracted["raw"].column_names else p["name"] for p in entry["inputs"]
        ]
        expected = [as_stored(v) for v in abi_decode([p["type"] for p in entry["inputs"]], row["input"][4:])]
        assert [row[c] for c in columns] == expected
    ping = next(e for e in abi if e["type"] == "event")
    assert [e for e in abi if e["type"] == "event"] == [ping]  # Emitter has one event: one logs series, named after it
    folder, logs = _series(out, "logs")
    assert folder.name.startswith(f"logs__{ping['name']}__f")
    assert {read_meta(str(p)).decoded_with for p in folder.glob("*.parquet")} == {  # type: ignore[union-attr]
        f"Emitter.json sha256:{digest}"
    }
    every = chainframe.collect("logs", blocks=f"0:{last}", rpc=devnet_session.http_url)
    topic = "0x" + chainframe.decode.keccak256(
        f"{ping['name']}({','.join(p['type'] for p in ping['inputs'])})".encode()
    ).hex()  # fmt: skip
    pings = [r for r in every.to_pylist() if r["topics"] and "0x" + r["topics"][0].hex() == topic]
    assert logs.num_rows == len(pings) > 10
    data = [p["type"] for p in ping["inputs"] if not p["indexed"]]
    names = [p["name"] for p in ping["inputs"] if not p["indexed"]]
    for row, log in zip(logs.to_pylist(), pings, strict=True):
        assert row["log_index"] == log["log_index"]
        assert [row[n] for n in names] == [as_stored(v) for v in abi_decode(data, log["data"])]


def test_abi_in_python_writes_the_series_the_command_writes(
    devnet_session: Devnet, extracted: dict[str, Any], tmp_path: Path
) -> None:
    """``abi=`` (the ABI's list of entries, or its file) writes what ``--abi`` writes, series by series and row by row,
    and ``plan`` names the same series."""
    last = max(extracted["raw"]["block_number"].to_pylist())
    path = _abi_file(tmp_path, "Emitter")
    url = devnet_session.http_url
    code, _, errors = run_cli(["extract", "logs", "transactions", "-b", f"0:{last}", "--rpc", url, "-o",
                               str(tmp_path / "cli"), "--no-progress", "--abi", str(path)])  # fmt: skip
    assert code == 0, errors
    chainframe.extract(["logs", "transactions"], blocks=f"0:{last}", out=tmp_path / "api", rpc=url, progress=False,
                       abi=json.loads(path.read_text()))  # fmt: skip
    names = sorted(p.name for p in (tmp_path / "cli").iterdir() if not p.name.startswith("."))
    functions = [e for e in json.loads(path.read_text()) if e["type"] == "function"]
    assert len(names) == 1 + len(functions)  # Emitter's one event, and a series per function
    assert names == sorted(p.name for p in (tmp_path / "api").iterdir() if not p.name.startswith("."))
    for name in names:
        assert _series(tmp_path / "api", name)[1].equals(_series(tmp_path / "cli", name)[1]), name
    plan = chainframe.engine.plan
    planned = plan(["logs", "transactions"], blocks=f"0:{last}", out=tmp_path / "plan", rpc=url, abi=path)
    assert sorted(s.series for s in planned.series) == names


def test_an_abi_of_two_events_plans_the_series_each_event_alone_plans(devnet_session: Devnet, tmp_path: Path) -> None:
    """Token's ABI has two events: each is its own series, the one ``event=`` given that event alone plans (its topic
    0 its own hash, not both); each of its functions too, the one ``function=`` given it alone plans."""
    abi = json.loads(_abi_file(tmp_path, "Token").read_text())
    options = {"blocks": "0:5", "out": tmp_path / "out", "rpc": devnet_session.http_url}
    planned = chainframe.engine.plan(["logs", "transactions"], abi=abi, **options)
    functions = [e for e in abi if e["type"] == "function"]
    alone = [
        chainframe.engine.plan(["logs"], event=[e], **options).series[0].series for e in abi if e["type"] == "event"
    ]
    each = [chainframe.engine.plan(["transactions"], function=[f], **options).series[0].series for f in functions]
    assert sorted(s.series for s in planned.series) == sorted([*alone, *each])
    assert len(alone) == 2
    assert len(each) == len(functions) > 5


def test_functions_given_together_are_a_series_each(devnet_session: Devnet, tmp_path: Path) -> None:
    """``function=`` of several functions (signatures, or an ABI's JSON text) plans the series each function given
    alone plans, as ``abi=`` does: two functions with a parameter name of two types are two series, not refused."""
    options = {"blocks": "0:5", "out": tmp_path / "out", "rpc": devnet_session.http_url}
    plan = chainframe.engine.plan
    given = ["f(uint256 value)", "g(address value)"]
    planned = plan(["transactions", "traces"], function=given, **options)
    alone = [plan([d], function=f, **options).series[0].series for d in ("transactions", "traces") for f in given]
    assert sorted(s.series for s in planned.series) == sorted(alone)
    assert len(set(alone)) == 4
    abi = _abi_file(tmp_path, "Token").read_text()
    as_text = plan(["transactions"], function=abi, **options)
    assert sorted(s.series for s in as_text.series) == sorted(
        s.series for s in plan(["transactions"], abi=json.loads(abi), **options).series
    )
    assert len(as_text.series) > 5


def test_an_abi_without_what_is_asked_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    base = ["-b", "0:10", "--rpc", "http://127.0.0.1:9", "-o", str(out), "--no-progress"]
    for datasets, contract, says in [
        (["blocks"], "Emitter", "--abi decodes logs (its events), transactions and traces (its functions)"),
        (["logs", "transactions"], "Vault", "has no event entries, and logs decode its events"),
    ]:
        code, _, errors = run_cli(["extract", *datasets, *base, "--abi", str(_abi_file(tmp_path, contract))])
        assert code == 2, errors
        assert says in errors, errors
        assert not out.exists()


def test_verify_rpc_proves_the_raw_rows_and_finds_a_changed_call(
    devnet_session: Devnet, extracted: dict[str, Any], tmp_path: Path
) -> None:
    """verify DIR --rpc proves the node's raw transactions of each block against its header, keeps their calls as the
    series' filter does and compares them with the stored ones: a changed argument fails at its block."""
    folder = tmp_path / "copy"
    (transfers,) = extracted["out"].glob(f"transactions__{parse_function(TRANSFER).name}__*")
    shutil.copytree(transfers, folder / transfers.name)
    code, printed, errors = run_cli(["verify", str(folder), "--rpc", devnet_session.http_url])
    assert code == 0, errors
    line = next(text for text in printed.splitlines() if text.startswith(transfers.name))
    assert f"{extracted['raw'].num_rows:,} rows checked" in line
    series, calls = _series(folder, "transactions")
    (path,) = series.glob("*.parquet")
    footer = {k: v for k, v in (pq.read_metadata(path).metadata or {}).items() if k != b"ARROW:schema"}
    amounts = calls["amount"].to_pylist()
    changed = next(i for i, v in enumerate(amounts) if v is not None)
    amounts[changed] += 1
    column = calls.schema.get_field_index("amount")
    calls = calls.set_column(column, calls.schema.field(column), pa.array(amounts, calls.schema.field(column).type))
    pq.write_table(calls.replace_schema_metadata(footer), path)  # edited in place, its footer kept
    code, printed, errors = run_cli(["verify", str(folder), "--rpc", devnet_session.http_url])
    assert code == 1, errors
    block = calls["block_number"][changed].as_py()
    failed = [text for text in printed.splitlines() if text.startswith("FAILED")]
    assert len(failed) == 1, printed
    assert f"block {block} rows:" in failed[0]
    assert "'s amount differs" in failed[0]


def test_an_abis_traces_decode_each_functions_outputs(
    devnet_session: Devnet, extracted: dict[str, Any], tmp_path: Path
) -> None:
    """--abi Nest.json on traces: each function's series (one function: no two functions' outputs meet) decodes what
    its frames returned, equal to eth-abi's decoding of the callTracer frames' outputs; a frame that failed has
    none."""
    last = max(extracted["raw"]["block_number"].to_pylist())
    abi = json.loads(ARTIFACTS.read_text())["contracts"]["Nest"]["abi"]
    out = tmp_path / "out"
    chainframe.extract("traces", blocks=f"0:{last}", rpc=devnet_session.http_url, out=out, progress=False, abi=abi)
    frames = [r for r in extracted["frames"].to_pylist() if not r["call_type"].lower().startswith("create")]
    checked = failed = 0
    seen: dict[str, int] = {}
    for entry in (e for e in abi if e["type"] == "function" and e["outputs"]):
        function = parse_function(f"{entry['name']}({','.join(p['type'] for p in entry['inputs'])})")
        (folder,) = out.glob(f"traces__{entry['name']}__*")
        calls = pq.read_table(folder).to_pylist()
        mine = {
            (r["transaction_hash"], tuple(r["trace_address"])): r for r in frames if r["input"][:4] == function.selector
        }
        assert len(calls) == len(mine)
        names = [f"output_{p['name'] or i}" for i, p in enumerate(entry["outputs"])]
        for row in calls:
            frame = mine[(row["transaction_hash"], tuple(row["trace_address"]))]
            if frame["error"] is not None:
                assert [row[n] for n in names] == [None] * len(names)
                failed += 1
                continue
            expected = abi_decode([p["type"] for p in entry["outputs"]], frame["output"])
            assert [row[n] for n in names] == [as_stored(v) for v in expected], (entry["name"], row)
            checked += 1
        seen[entry["name"]] = len(calls)
    assert checked > 10, (checked, failed)
    assert sum(n > 0 for n in seen.values()) >= 2, seen  # more than one function's outputs
