"""``--abi-dir`` and ``chainframe abi``: ABIs read from a folder in Sourcify's layout and Etherscan's getabi JSON
(tests/data/abi), and an EIP-1967 proxy upgraded mid-range from Store to Emitter (tests/decode/proxy_chain.py) decoded
on each side with the implementation in force there; the decoded rows checked against the arguments the test sent
(eth-abi encoded them). Bad files refused before any request, naming the file and the reason."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from eth_abi import encode as abi_encode  # type: ignore[attr-defined]

import chainframe
from chainframe import InputError
from chainframe.decode import AbiFolder, implementations, keccak256
from chainframe.devnet import DEV_ACCOUNTS, AnvilNode, AnvilOptions
from chainframe.rpc import AsyncClient
from tests.decode.proxy_chain import CHAIN_ID, ProxyChain, abi_of, build
from tests.decode.test_calls import as_stored
from tests.decode.test_function_series import run_cli

ABIS = Path(__file__).resolve().parents[1] / "data" / "abi"
NOWHERE = "http://127.0.0.1:9"  # nothing listens: a command that sent a request would fail otherwise


@pytest.fixture(scope="module")
def chain() -> Iterator[ProxyChain]:
    with AnvilNode(AnvilOptions(chain_id=CHAIN_ID)) as node:
        yield build(node)


def test_the_fixtures_hold_the_contracts_abis() -> None:
    folder = AbiFolder(ABIS)
    store, emitter, proxy = (
        "0x5fbdb2315678afecb367f032d93f642f64180aa3",
        "0xe7f1725e7734ce288f8367e1bb143e90bb3f0512",
        "0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0",
    )
    found = folder.abi_of(CHAIN_ID, store.upper().replace("0X", "0x"))  # any letter case
    assert found is not None
    assert found.origin == "sourcify full_match"
    assert list(found.entries) == abi_of("Store")
    found = folder.abi_of(CHAIN_ID, emitter)
    assert found is not None
    assert (found.origin, list(found.entries)) == ("etherscan", abi_of("Emitter"))
    found = folder.abi_of(CHAIN_ID, proxy)
    assert found is not None
    assert found.origin == "sourcify partial_match"
    assert {e.get("name") for e in found.entries} == {"upgradeTo", "Upgraded", None}
    devnet = folder.abi_of(31337, store)  # the devnet's Token, at the same address on another chain
    assert devnet is not None
    assert list(devnet.entries) == abi_of("Token")
    assert folder.abi_of(1, store) is None  # no file for that chain, and no Etherscan file for the address


def _spans(chain: ProxyChain, from_logs: bool) -> tuple[list[tuple[int, int, str, str]], int]:
    """The proxy's stretches over the whole chain, and the requests it took to find them."""

    async def read() -> tuple[list[tuple[int, int, str, str]], int]:
        async with AsyncClient(chain.url) as client:
            spans = await implementations(client, chain.proxy, 1, chain.last, from_logs=from_logs)
            requests = client.stats.requests
        return [(s.first, s.last, s.code.how, s.code.address) for s in spans], requests

    return anyio.run(read)


def test_the_upgrade_is_found_by_its_log_and_by_bisection(chain: ProxyChain) -> None:
    expected = [
        (1, 2, "own", chain.proxy),  # not deployed yet: empty slots
        (3, chain.upgrade_block - 1, "eip1967", chain.store),
        (chain.upgrade_block, chain.last, "eip1967", chain.emitter),
    ]
    with_logs, by_bisection = _spans(chain, from_logs=True), _spans(chain, from_logs=False)
    assert with_logs[0] == by_bisection[0] == expected
    # A few reads per change (3 slots at most at a block), not one per block: two changes in 1..last (over 70 blocks).
    assert chain.last > 70
    assert by_bisection[1] <= 2 * 3 * (chain.last.bit_length() + 1)
    assert with_logs[1] <= by_bisection[1] + 1  # the logs' query, and no read more


def test_abi_command_says_which_abi_and_why(chain: ProxyChain) -> None:
    code, out, err = run_cli(["abi", chain.proxy, chain.store, "--abi-dir", str(ABIS), "--rpc", chain.url,
                           "-b", f"1:{chain.last}", "--json"])  # fmt: skip
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    got = [(r["address"], r["first_block"], r["last_block"], r["how"], r["decodes_with"], r["abi_origin"])
           for r in rows]  # fmt: skip
    u = chain.upgrade_block
    assert got == [
        (chain.proxy, 1, 2, "own", chain.proxy, "sourcify partial_match"),
        (chain.proxy, 3, u - 1, "eip1967", chain.store, "sourcify full_match"),
        (chain.proxy, u, chain.last, "eip1967", chain.emitter, "etherscan"),
        (chain.store, 1, chain.last, "own", chain.store, "sourcify full_match"),
    ]
    assert {r["chain_id"] for r in rows} == {CHAIN_ID}
    code, out, _ = run_cli(["abi", chain.proxy, "--abi-dir", str(ABIS), "--rpc", chain.url])  # latest, in words
    assert code == 0
    assert out.strip() == (
        f"{chain.proxy} blocks {chain.last}..{chain.last} (chain {CHAIN_ID}): EIP-1967 implementation slot of "
        f"{chain.proxy} holds {chain.emitter}; ABI {AbiFolder(ABIS).abi_of(CHAIN_ID, chain.emitter).digest} "  # type: ignore[union-attr]
        f"from {ABIS / (chain.emitter + '.json')} (etherscan); with the proxy's own ABI "
        f"{AbiFolder(ABIS).abi_of(CHAIN_ID, chain.proxy).digest} "  # type: ignore[union-attr]
        f"from {next(ABIS.glob('partial_match/*/*/metadata.json'))}"
    )


def test_beacon_and_eip1822_proxies(chain: ProxyChain) -> None:
    code, out, err = run_cli(["abi", chain.beacon_proxy, chain.uups_proxy, "--abi-dir", str(ABIS), "--rpc", chain.url,
                           "--json"])  # fmt: skip
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["address"], r["how"], r["decodes_with"], r["beacon"], r["abi_origin"]) for r in rows] == [
        (chain.beacon_proxy, "eip1967-beacon", chain.emitter, chain.beacon, "etherscan"),
        (chain.uups_proxy, "eip1822", chain.store, None, "sourcify full_match"),
    ]
    (uups_call,) = [s for s in chain.sent if s["to"] == chain.uups_proxy]
    assert uups_call["status"] == 1  # the EIP-1822 proxy runs Store's code: the slot is where its code is


def _series(out: Path, dataset: str) -> dict[str, list[tuple[str, pa.Table]]]:
    """Each decoded series of ``dataset`` (one event or function each), by the name of its event or function: the
    series folder and its rows (read from the footers' filters and the files, not through chainframe)."""
    found: dict[str, list[tuple[str, pa.Table]]] = {}
    for folder in sorted(out.iterdir()):
        if folder.name.split("__")[0] != dataset or not folder.is_dir():
            continue
        files = sorted(folder.glob("*.parquet"))
        filters = {json.dumps(json.loads(pq.read_metadata(f).metadata[b"chainframe.filters"])) for f in files}
        assert len(filters) == 1  # one filter in every chunk of a series
        (text,) = json.loads(filters.pop())["event" if dataset == "logs" else "function"]  # one entry a series
        assert folder.name.split("__")[1] == text.split("(")[0]  # named after it (issue 39)
        found.setdefault(text.split("(")[0], []).append(
            (folder.name, pa.concat_tables(pq.read_table(f) for f in files))
        )
    return found


def _decoded_with(out: Path, folder: str) -> set[str]:
    """What each chunk's footer of a series folder says decoded it (read from the files, not through chainframe)."""
    files = (out / folder).glob("*.parquet")
    return {json.loads(pq.read_metadata(f).metadata[b"chainframe.decoded_with"]) for f in files}


def _digest(entries: list[dict[str, Any]]) -> str:
    """An ABI's digest as the footers give it, computed here: sha-256 of its entries' canonical JSON, 16 hex digits."""
    return hashlib.sha256(json.dumps(entries, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


def _stored(value: Any) -> Any:
    """What the test sent as the decoded column holds it with --u256 binary: integers as 32-byte words."""
    if isinstance(value, int):
        return value.to_bytes(32, "big")
    return as_stored(value)


def _column(table: pa.Table, name: str) -> list[Any]:
    """A parameter's column: ``arg_``-named where the dataset has a column of that name (a transaction's value)."""
    values: list[Any] = table[f"arg_{name}" if f"arg_{name}" in table.column_names else name].to_pylist()
    return values


Logged = Callable[[list[Any], int], tuple[str, dict[str, Any]]]
EVENTS: dict[str, Logged] = {  # what each call to the proxy logs: (event, values by parameter name)
    "set(uint256,uint256)": lambda args, bumps: ("Set(uint256,uint256)", {"key": args[0], "value": args[1]}),
    "bump()": lambda args, bumps: ("Bumped(uint256)", {"counter": bumps}),
    "ping(uint256,bytes)": lambda args, bumps: ("Ping(address,uint256,bytes)", {"sender": DEV_ACCOUNTS[0],
                                                                               "seq": args[0], "payload": args[1]}),
}  # fmt: skip
NAMES = {"set(uint256,uint256)": ["key", "value"], "bump()": [], "ping(uint256,bytes)": ["seq", "payload"]}


def test_extract_decodes_each_side_with_its_implementation(chain: ProxyChain, tmp_path: Path) -> None:
    out = tmp_path / "out"
    argv = ["extract", "transactions", "logs", "-b", f"3:{chain.last}", "--rpc", chain.url, "-o", str(out),
            "--address", chain.proxy, "--abi-dir", str(ABIS), "--no-progress", "--u256", "binary"]  # fmt: skip
    code, plan, err = run_cli([*argv, "--dry"])  # first the plan: the proxy's reads made and counted, nothing written
    assert code == 0, err
    assert not out.exists()
    planned = set(re.findall(r"^  ((?:transactions|logs)__\w+) +chunks:", plan, flags=re.M))
    (line,) = [line for line in plan.splitlines() if line.startswith("  --abi-dir: ")]
    reads = dict((m, int(n)) for n, m in re.findall(r"([\d,]+) (eth_\w+)", line.split("(")[0]))

    async def proxy_reads() -> int:  # what finding the stretches asks of the node, counted by the client
        async with AsyncClient(chain.url) as client:
            await implementations(client, chain.proxy, 3, chain.last)
            return int(client.stats.calls)

    assert set(reads) == {"eth_getStorageAt", "eth_getLogs"}
    assert sum(reads.values()) == anyio.run(proxy_reads)
    code, printed, err = run_cli(argv)
    assert code == 0, err
    assert planned == {p.name for p in out.iterdir() if p.is_dir() and "__f" in p.name}  # the series the run wrote
    u = chain.upgrade_block
    assert f"blocks 3..{u - 1} decoded with ABI" in printed
    assert f"blocks {u}..{chain.last} decoded with ABI" in printed
    implementation = {3: "Store", u: "Emitter"}  # each stretch's first block
    methods = {name: {e["name"] for e in abi_of(name) if e["type"] == "function"} for name in implementation.values()}
    calls, logs = _series(out, "transactions"), _series(out, "logs")
    # One series per function and event of either side, and of the proxy's own ABI (upgradeTo, Upgraded).
    assert set(calls) == set().union(*methods.values()) | {"upgradeTo"}
    assert set(logs) == {"Set", "Bumped", "Ping", "Upgraded"}
    bumps = 0
    for first, name in implementation.items():
        end = u - 1 if first == 3 else chain.last
        # The calls of this side's functions that ran, with the arguments sent; the other side's (which reverted
        # here), the upgrade and the deployments are not this side's calls.
        sent = [s for s in chain.sent if s["to"] == chain.proxy and first <= s["block"] <= end
                and s["signature"].split("(")[0] in methods[name]]  # fmt: skip
        assert [s["status"] for s in sent] == [1] * len(sent)
        assert len(sent) >= 2
        for function in methods[name]:
            ((folder, table),) = calls[function]  # one series a function
            (said,) = _decoded_with(out, folder)  # each file's footer says which ABI decoded it (issue 39)
            file, digest = said.split(" sha256:")
            assert (ABIS / file).is_file(), said
            assert digest == _digest(abi_of(name)), (name, said)
            mine = [s for s in sent if s["signature"].split("(")[0] == function]
            assert table["transaction_hash"].to_pylist() == [bytes.fromhex(s["hash"][2:]) for s in mine]
            assert table["function"].to_pylist() == [s["signature"] for s in mine]
            for i, s in enumerate(mine):
                assert table["decode_error"][i].as_py() is None
                assert table["selector"][i].as_py() == keccak256(s["signature"].encode())[:4]
                assert [_column(table, n)[i] for n in NAMES[s["signature"]]] == [_stored(v) for v in s["args"]]
        # The logs: each call's event, decoded with this side's events, in its event's series.
        for s in sent:
            bumps += s["signature"] == "bump()"
            event, values = EVENTS[s["signature"]](s["args"], bumps)
            ((_, events),) = logs[event.split("(")[0]]
            (i,) = [i for i, h in enumerate(events["transaction_hash"].to_pylist()) if h.hex() == s["hash"][2:]]
            assert events["topics"][i].as_py()[0] == keccak256(event.encode())
            assert {n: _column(events, n)[i] for n in values} == {n: _stored(v) for n, v in values.items()}
    # The proxy's own function and event, decoded beside Emitter's: the upgrade's call and its log, at block u.
    ((folder, upgrade),) = calls["upgradeTo"]
    (said,) = _decoded_with(out, folder)  # the proxy's own ABI, not an implementation's
    assert said.split(" sha256:")[1] not in {_digest(abi_of(n)) for n in implementation.values()}
    ((_, upgraded),) = logs["Upgraded"]
    assert upgrade["block_number"].to_pylist() == upgraded["block_number"].to_pylist() == [u]
    assert (
        upgrade["newImplementation"].to_pylist()
        == upgraded["implementation"].to_pylist()
        == [bytes.fromhex(chain.emitter[2:])]
    )
    assert any(s["status"] == 0 for s in chain.sent)  # the test did send calls that only the other side has


NOT_VERIFIED = '{"status": "0", "message": "NOTOK", "result": "Contract source code not verified"}'
BURN = json.dumps([{"type": "function", "name": "burn", "inputs": [{"type": "uint256"}]}])
COLLATE = json.dumps([{"type": "function", "name": "collate_propagate_storage", "inputs": [{"type": "bytes16"}]}])
"""Two functions of one selector, 0x42966c68 (the well-known pair)."""


@pytest.mark.parametrize(
    ("files", "says"),
    [
        ({"0x" + "11" * 20 + ".json": "{not json"}, "is not readable JSON"),
        ({"full_match/1/0x" + "11" * 20 + "/metadata.json": '{"output": {"devdoc": {}}}'}, "no output.abi"),
        ({"0x" + "11" * 20 + ".json": NOT_VERIFIED}, "Contract source code not verified"),
        ({"0x" + "11" * 20 + ".json": BURN, "0x" + "22" * 20 + ".json": COLLATE}, "selector clash: burn(uint256)"),
    ],
)
def test_bad_files_are_refused_before_any_request(tmp_path: Path, files: dict[str, str], says: str) -> None:
    folder = tmp_path / "abis"
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    addresses = ["0x" + "11" * 20, "0x" + "22" * 20]
    for argv in (
        ["abi", *addresses, "--abi-dir", str(folder), "--rpc", NOWHERE],
        [
            "extract",
            "logs",
            "-b",
            "0:10",
            "--rpc",
            NOWHERE,
            "-o",
            str(tmp_path / "out"),
            "--abi-dir",
            str(folder),
            "--address",
            *addresses,
        ],
    ):
        code, _, err = run_cli(argv)
        assert code == 2, err  # refused: nothing was sent (a request to NOWHERE would fail with 1)
        assert says in err
        assert str(folder) in err
    assert not (tmp_path / "out").exists()


def test_abi_dir_needs_the_addresses_and_a_folder(tmp_path: Path) -> None:
    code, _, err = run_cli(["extract", "logs", "-b", "0:10", "--rpc", NOWHERE, "-o", str(tmp_path), "--abi-dir",
                         str(ABIS)])  # fmt: skip
    assert (code, "give --address" in err) == (2, True)
    code, _, err = run_cli(["abi", "0x" + "11" * 20, "--abi-dir", str(tmp_path / "none"), "--rpc", NOWHERE])
    assert (code, "is not a folder" in err) == (2, True)
    with pytest.raises(InputError, match=r"extract.*abi_dir=.*into a folder"):  # collect: one table, not a series each
        chainframe.collect("logs", blocks="0:10", rpc=NOWHERE, address="0x" + "11" * 20, abi_dir=ABIS)
    with pytest.raises(InputError, match="give address"):
        chainframe.extract("logs", blocks="0:10", rpc=NOWHERE, out=tmp_path, abi_dir=ABIS)
    # --abi ADDRESS: its ABI read from a folder, so a folder is needed; files and addresses are not mixed.
    address = "0x" + "11" * 20
    code, _, err = run_cli(["extract", "logs", "-b", "0:10", "--rpc", NOWHERE, "-o", str(tmp_path / "a"), "--abi",
                            address])  # fmt: skip
    assert (code, f"--abi {address}: a contract's ABI is read from a folder" in err) == (2, True), err
    with pytest.raises(InputError, match="ABI files or contract addresses, not both"):
        chainframe.extract("logs", blocks="0:10", rpc=NOWHERE, out=tmp_path, abi=[address, str(tmp_path / "x.json")],
                           abi_dir=ABIS)  # fmt: skip


def test_abi_an_address_decodes_as_its_address_and_folder(chain: ProxyChain, tmp_path: Path) -> None:
    """``--abi ADDRESS --abi-dir DIR`` is ``--address ADDRESS --abi-dir DIR``: the same series, the same rows."""
    common = ["-b", f"3:{chain.last}", "--rpc", chain.url, "--abi-dir", str(ABIS), "--no-progress", "--u256", "binary"]
    by_abi, by_address = tmp_path / "abi", tmp_path / "address"
    asked = ["extract", "transactions", "logs", *common]
    code, _, err = run_cli([*asked, "-o", str(by_abi), "--abi", chain.proxy])
    assert code == 0, err
    code, _, err = run_cli([*asked, "-o", str(by_address), "--address", chain.proxy])
    assert code == 0, err
    names = sorted(p.name for p in by_abi.iterdir() if p.is_dir() and not p.name.startswith("."))
    assert len(names) > 5
    assert names == sorted(p.name for p in by_address.iterdir() if p.is_dir() and not p.name.startswith("."))
    for name in names:
        assert pq.read_table(by_abi / name).equals(pq.read_table(by_address / name)), name


def test_python_api_one_series_per_function_across_an_upgrade(chain: ProxyChain, tmp_path: Path) -> None:
    """``chainframe.extract(..., abi_dir=)``, transactions alone (they take no address filter: ``address`` names the
    contracts whose ABIs decode). The upgrade's target is given a second version of Emitter's ABI that keeps Store's
    ``set`` (same text: its calls on both sides land in one series, read once each by DuckDB over the folder) and
    renames ``slots``' parameter (another text, other columns: a second series, said in the report)."""
    import duckdb

    folder = tmp_path / "abis"
    shutil.copytree(ABIS, folder)
    store = abi_of("Store")
    (set_entry,) = [e for e in store if e.get("name") == "set"]
    (slots,) = [e for e in store if e.get("name") == "slots"]
    renamed = {**slots, "inputs": [{**slots["inputs"][0], "name": "index"}]}
    (folder / f"{chain.emitter}.json").write_text(json.dumps([*abi_of("Emitter"), set_entry, renamed]))
    out = tmp_path / "out"
    report = chainframe.extract("transactions", blocks=f"3:{chain.last}", rpc=chain.url, out=out, progress=False,
                                address=chain.proxy, abi_dir=folder, u256="binary")  # fmt: skip
    u = chain.upgrade_block
    assert [
        (d["first_block"], d["last_block"], d["decodes_with"], d["own_abi_digest"]) for d in report.decoded_with
    ] == [
        (3, u - 1, chain.store, AbiFolder(folder).abi_of(CHAIN_ID, chain.proxy).digest),  # type: ignore[union-attr]
        (u, chain.last, chain.emitter, AbiFolder(folder).abi_of(CHAIN_ID, chain.proxy).digest),  # type: ignore[union-attr]
    ]
    calls = _series(out, "transactions")
    ((name, _),) = calls["set"]  # one series for set, over both stretches
    sent = [s for s in chain.sent if s["signature"].startswith("set(") and s["block"] >= 3]
    assert len([s for s in sent if s["block"] >= u]) == 2  # set(3, 4) to the upgraded proxy, the EIP-1822 proxy's
    db = duckdb.connect()
    query = "SELECT transaction_hash, block_number, key, arg_value FROM read_parquet(?) ORDER BY block_number"
    rows = db.execute(query, [f"{out / name}/*.parquet"]).fetchall()
    assert rows == [(bytes.fromhex(s["hash"][2:]), s["block"], *(_stored(v) for v in s["args"])) for s in sent]
    assert len(calls["slots"]) == 2  # slots(uint256 arg0) before, slots(uint256 index) after: two series
    assert any(n.startswith("transactions slots: 2 series") for n in report.decoding_notes)
    assert "transactions slots: 2 series" in report.summary()


def test_a_proxys_own_entries_beside_its_implementations() -> None:
    """The proxy's own ABI decodes beside its implementation's; where an entry of each shares a selector (a topic 0),
    the implementation's wins and the stretch says which of the proxy's was set aside."""
    from chainframe.decode import ContractAbi, Stretch

    def function(name: str, *params: tuple[str, str]) -> dict[str, Any]:
        return {"type": "function", "name": name, "inputs": [{"type": t, "name": n} for t, n in params]}

    upgraded = {"type": "event", "name": "Upgraded", "anonymous": False,
                "inputs": [{"type": "address", "name": "implementation", "indexed": True}]}  # fmt: skip
    proxy = ContractAbi("0x" + "11" * 20, (function("upgradeTo", ("address", "newImplementation")),
                        function("admin"), upgraded), "proxy.json", "etherscan")  # fmt: skip
    implementation = ContractAbi("0x" + "22" * 20, (function("upgradeTo", ("address", "to")),
                                 function("transfer", ("address", "to"), ("uint256", "amount")), upgraded),
                                 "implementation.json", "etherscan")  # fmt: skip
    stretch = Stretch(1, 10, (implementation,), (proxy,))
    functions = stretch.entries("function")
    assert [(f["name"], [i["name"] for i in f["inputs"]]) for f in functions] == [
        ("upgradeTo", ["to"]),  # the implementation's: same selector as the proxy's upgradeTo(address)
        ("transfer", ["to", "amount"]),
        ("admin", []),  # the proxy's own, no clash
    ]
    assert stretch.entries("event") == [upgraded]  # one text in both: once, not set aside
    assert [(abi.file, entry["name"]) for abi, entry in stretch.shadowed()] == [("proxy.json", "upgradeTo")]


def test_blocks_no_abi_decodes_are_said_and_left(chain: ProxyChain, tmp_path: Path) -> None:
    """A folder with Store's ABI alone: the proxy's blocks after its upgrade to Emitter have no ABI (neither the
    implementation's nor the proxy's own): said in the report, not extracted; Store's side is."""
    folder = tmp_path / "abis"
    shutil.copytree(ABIS / "full_match", folder / "full_match")
    out = tmp_path / "out"
    u = chain.upgrade_block
    report = chainframe.extract("logs", blocks=f"3:{chain.last}", rpc=chain.url, out=out, progress=False,
                                address=chain.proxy, abi_dir=folder, u256="binary")  # fmt: skip
    assert f"blocks {u}..{chain.last}: no ABI decodes them (none in the folder for the code there); not extracted" in (
        report.decoding_notes
    )
    logs = _series(out, "logs")
    assert set(logs) == {"Set", "Bumped"}
    assert max(b for (_, t) in logs["Set"] for b in t["block_number"].to_pylist()) < u
    assert report.blocks == (3, u - 1)


def test_follow_with_an_abi_folder(chain: ProxyChain, tmp_path: Path) -> None:
    """``chainframe.follow(..., abi_dir=)``: each round reads the proxy's slots again and extends the same series
    (one per event and function); a call made between two rounds is decoded once, nothing stored twice. Last in the
    file: it adds a block to the module's chain (and to ``chain.sent``, ``chain.last``) for the tests after it."""
    from chainframe.devnet._node_rpc import NodeRPC
    from tests.decode.proxy_chain import _send

    class Node:  # what _send needs of a node
        rpc = NodeRPC(chain.url)

    def call_between(report: Any) -> None:
        if len(rounds) == 0:
            args = [2**255, b"between"]
            data = keccak256(b"ping(uint256,bytes)")[:4] + abi_encode(["uint256", "bytes"], args)
            try:
                receipt = _send(Node(), data, chain.proxy)  # type: ignore[arg-type]
            finally:
                Node.rpc.close()
            block = int(receipt["blockNumber"], 16)
            chain.sent.append({"to": chain.proxy, "block": block, "args": args, "hash": receipt["transactionHash"],
                               "signature": "ping(uint256,bytes)", "status": 1})  # fmt: skip
            chain.last = chain.sent[-1]["block"]
        rounds.append(report)

    rounds: list[Any] = []
    out = tmp_path / "out"
    chainframe.follow(["transactions", "logs"], blocks=f"{chain.upgrade_block}:latest", rpc=chain.url, out=out,
                      rounds=2, poll=0.1, on_round=call_between, address=chain.proxy, abi_dir=ABIS,
                      u256="binary")  # fmt: skip
    assert [r.blocks[1] for r in rounds] == [chain.last - 1, chain.last]
    assert [d["decodes_with"] for d in rounds[1].decoded_with] == [chain.emitter]
    pings = [s for s in chain.sent if s["signature"] == "ping(uint256,bytes)" and s["status"] == 1]
    ((_, calls),) = _series(out, "transactions")["ping"]
    ((_, logs),) = _series(out, "logs")["Ping"]
    assert (
        calls["transaction_hash"].to_pylist()
        == logs["transaction_hash"].to_pylist()
        == [bytes.fromhex(s["hash"][2:]) for s in pings]
    )
    assert [(_column(calls, "seq")[i], _column(calls, "payload")[i]) for i in range(len(pings))] == [
        (_stored(s["args"][0]), _stored(s["args"][1])) for s in pings
    ]
