"""A series that decodes one event or one function is named after it (``logs__Transfer__f<digest>``), the digest kept
(same name and signature, other columns: another series); a folder an older chainframe named ``<dataset>__f<digest>``
is extended in place, in both layouts, and read, scanned, exported and verified under that name (issue 39)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import chainframe
import chainframe.engine
from chainframe import InputError, extract, open_duckdb, scan
from chainframe.cli import main
from chainframe.devnet import Devnet
from chainframe.devnet._node_rpc import NodeRPC
from chainframe.store import filters_digest, legacy_name, load_series, read_meta, series_name
from tests.decode.test_function_series import run_cli
from tests.devnets import chain, module_devnet, node

# the fixtures the reorganizing test uses: a devnet of the module's own (tests/devnets.py)
__all__ = ["chain", "module_devnet", "node"]

TRANSFER = "Transfer(address indexed from, address indexed to, uint256 value)"
CALL = "transfer(address to, uint256 amount)"
SAME = "transfer(address dst, uint256 wad)"
"""The same signature with other parameter names (WETH's): other columns, so another series of the same name."""
OVERLOAD = "transfer(address to, uint256 amount, bytes data)"
LAST = 40
"""The blocks the tests read (0..LAST): a few chunks of 10, Token transfers in most."""


def series_folder(out: Path, dataset: str, **filters: Any) -> Path:
    """:func:`chainframe.series_folder` of a local folder."""
    found = chainframe.series_folder(out, dataset, **filters)
    assert isinstance(found, Path)
    return found


def _rows(folder: Path) -> pa.Table:
    files = sorted(folder.rglob("*.parquet"))
    return pa.concat_tables(pq.read_table(f) for f in files if "_delta_log" not in str(f))


def test_names_from_the_filters_alone() -> None:
    """The name is a function of the footer's filters: one entry of ``event``/``function`` names it (cut to a
    path-safe word), several or none do not; ``legacy_name`` drops the word and keeps digest and encoding."""
    one = {"function": ["transfer(address to,uint256 amount)"]}
    digest = filters_digest(one)
    assert series_name("transactions", one, "decimal") == f"transactions__transfer__f{digest}"
    assert series_name("traces", one, "binary") == f"traces__transfer__f{digest}__binary"
    assert legacy_name(f"traces__transfer__f{digest}__binary") == f"traces__f{digest}__binary"
    two = {"function": ["transfer(address to,uint256 amount)", "ping(uint256 nonce,bytes payload)"]}
    assert series_name("transactions", two, "decimal") == f"transactions__f{filters_digest(two)}"
    plain = {"address": ["0x" + "11" * 20]}
    assert series_name("erc20_transfers", plain, "decimal") == f"erc20_transfers__f{filters_digest(plain)}"
    for name in ("logs", "blocks__binary", f"logs__f{digest}", f"erc20_transfers__f{digest}"):
        assert legacy_name(name) == name  # not a named series: its own name
    odd = {"event": ["event Über_Café__Deposit(uint256 x)"]}  # not a word a path takes as is
    assert series_name("logs", odd, "decimal") == f"logs__ber_Caf_Deposit__f{filters_digest(odd)}"
    long = {"event": [("X" * 100) + "(uint256 x)"]}
    assert series_name("logs", long, "decimal") == f"logs__{'X' * 64}__f{filters_digest(long)}"


@pytest.fixture(scope="module")
def named(devnet_session: Devnet, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One folder with the Token's Transfer logs, transfer calls (three ways: two parameter namings and an
    overload), and two functions given together (a series each)."""
    out = tmp_path_factory.mktemp("named")
    token = devnet_session.truth.contracts["Token"]
    common: dict[str, Any] = dict(blocks=f"0:{LAST}", out=out, rpc=devnet_session.http_url, chunk_size=10,
                                  progress=False)  # fmt: skip
    extract("logs", event=TRANSFER, address=token, **common)
    for function in (CALL, SAME, OVERLOAD, [CALL, "ping(uint256 nonce, bytes payload)"]):
        extract("transactions", function=function, **common)
    return {"out": out, "token": token}


def test_a_series_of_one_event_or_function_is_named_after_it(named: dict[str, Any]) -> None:
    out, token = named["out"], named["token"]
    logs = series_folder(out, "logs", event=TRANSFER, address=token)
    assert logs.name.startswith("logs__Transfer__f")
    assert logs.is_dir()
    footer = read_meta(next(logs.glob("*.parquet")))
    assert footer is not None
    assert footer.filters["event"] == ["Transfer(address indexed from,address indexed to,uint256 value)"]
    assert logs.name == f"logs__Transfer__f{filters_digest(footer.filters)}"  # the footer's filters name it
    assert legacy_name(logs.name) == f"logs__f{filters_digest(footer.filters)}"
    calls = series_folder(out, "transactions", function=CALL)
    assert calls.name.startswith("transactions__transfer__f")
    table = scan(out, "transactions", function=CALL).collect()
    assert table.height > 0
    assert set(table["function"]) == {"transfer(address,uint256)"}
    ping = "ping(uint256 nonce, bytes payload)"
    pings = series_folder(out, "transactions", function=ping)  # given with CALL: a series each, named after it
    assert pings.name.startswith("transactions__ping__f")
    written = {p.name for p in out.iterdir() if p.is_dir()}
    assert {logs.name, calls.name, pings.name} <= written
    assert not [n for n in written if n.startswith("transactions__f")]  # no series of both
    both = scan(out, "transactions", function=[CALL, ping]).collect()  # as extract was given them: both series
    assert both.height == table.height + scan(out, "transactions", function=ping).collect().height
    assert set(both["function"]) == {"transfer(address,uint256)", "ping(uint256,bytes)"}


def test_same_name_other_columns_or_overload_are_series_of_their_own(named: dict[str, Any]) -> None:
    """Two ABIs' ``transfer(address,uint256)`` with other parameter names, and an overload: one name, three series
    (the digest tells them apart; each footer holds its function's text)."""
    out = named["out"]
    folders = [series_folder(out, "transactions", function=f) for f in (CALL, SAME, OVERLOAD)]
    assert len({f.name for f in folders}) == 3
    assert all(f.name.startswith("transactions__transfer__f") and f.is_dir() for f in folders)
    texts = [read_meta(next(f.glob("*.parquet"))).filters["function"] for f in folders]  # type: ignore[union-attr]
    assert texts == [["transfer(address to,uint256 amount)"], ["transfer(address dst,uint256 wad)"],
                     ["transfer(address to,uint256 amount,bytes data)"]]  # fmt: skip
    mine, weth, overload = (_rows(f) for f in folders)
    assert mine.num_rows == weth.num_rows > 0
    assert overload.num_rows == 0  # the workload sends no 3-argument transfer
    assert mine["amount"].equals(weth["wad"])
    assert mine["to"].equals(weth["dst"])


@pytest.mark.parametrize("table", ["parquet", "delta"])
def test_a_folder_an_older_chainframe_named_is_extended_in_place(
    devnet_session: Devnet, tmp_path: Path, table: str
) -> None:
    """A real run's folder renamed to the name older versions gave it (``logs__f<digest>``): the next run extends it
    (no second folder: each block's rows once) and exports from it, and scan, DuckDB and ``verify`` read it under
    that name. A copy of it under the new name beside it (two folders of one series) is refused."""
    token = devnet_session.truth.contracts["Token"]
    out = tmp_path / "out"
    common: dict[str, Any] = dict(out=out, rpc=devnet_session.http_url, chunk_size=10, progress=False, table=table,
                                  event=TRANSFER, address=token)  # fmt: skip
    extract("logs", blocks="0:24", **common)  # ends inside a slot: the next run extends its file
    new = series_folder(out, "logs", event=TRANSFER, address=token)
    old = new.with_name(legacy_name(new.name))
    assert old != new
    new.rename(old)
    assert series_folder(out, "logs", event=TRANSFER, address=token) == old
    report = extract("logs", blocks=f"0:{LAST}", format="csv", **common)
    assert sorted(p.name for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")) == [old.name]
    series = load_series(old)
    assert not series.problems
    assert series.ranges == [(0, LAST)]
    assert series.key == new.name
    assert {c.series for c in series.chunks} == {new.name}
    fresh = extract("logs", blocks=f"0:{LAST}", **{**common, "out": tmp_path / "fresh"})
    assert report.datasets["logs"]["rows"] < fresh.datasets["logs"]["rows"]  # only the blocks added were fetched
    stored = scan(out, "logs", event=TRANSFER, address=token).collect()
    expected = scan(tmp_path / "fresh", "logs", event=TRANSFER, address=token).collect()
    keys = ["block_number", "log_index"]
    assert stored.height == expected.height > 0
    assert stored.select(keys).is_duplicated().sum() == 0
    assert stored.sort(keys).equals(expected.sort(keys))
    (exported,) = report.exports  # named for the series, read from the folder that holds it
    assert Path(exported).name.startswith(new.name + "__")
    assert pl.read_csv(exported).select(keys).sort(keys).equals(expected.select(keys).sort(keys))
    query = f'SELECT count(*) FROM "{old.name}"'  # noqa: S608 (a folder name the test made)
    assert open_duckdb(out).execute(query).fetchone() == (expected.height,)
    code, printed, errors = run_cli(["verify", str(out)])
    assert code == 3, errors  # found, and skipped offline: no raw logs beside it to prove it with
    assert old.name in printed
    assert main(["verify", str(out), "--rpc", devnet_session.http_url]) == 0
    shutil.copytree(old, new)  # both names hold it: a reader of either would miss the other's rows
    with pytest.raises(InputError, match="both hold series"):
        extract("logs", blocks=f"0:{LAST}", **common)


def test_off_chain_and_the_reorg_report_name_an_older_folder_by_its_own_name(
    chain: Devnet, node: NodeRPC, tmp_path: Path
) -> None:
    """A folder an older chainframe named (``transactions__f<digest>``), reorganized under: ``off_chain`` and the
    repairing run's report name the series by that folder, not by the name this version would give it."""
    out = tmp_path / "out"
    head = int(node.call("eth_blockNumber"), 16)
    common: dict[str, Any] = dict(out=out, rpc=chain.http_url, chunk_size=10, progress=False, function=[CALL])
    extract("transactions", blocks=f"{head - 30}:{head}", **common)
    new = series_folder(out, "transactions", function=[CALL])
    old = new.with_name(legacy_name(new.name))
    new.rename(old)
    node.call("anvil_reorg", 3, [])
    stale = chainframe.engine.off_chain(out, rpc=chain.http_url)
    assert stale
    assert {s["series"] for s in stale} == {old.name}
    report = extract("transactions", blocks=f"{head - 30}:{head}", **common)
    assert [r["series"] for r in report.to_json()["reorgs"]] == [old.name]
    assert sorted(p.name for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")) == [old.name]
