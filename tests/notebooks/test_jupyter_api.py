"""What a notebook user meets first: misspelled options named as such, pandas frames, readable reprs."""

from __future__ import annotations

import importlib.util
import inspect
import pydoc
from pathlib import Path
from types import SimpleNamespace

import pytest

import chainframe
import chainframe.engine
from chainframe._errors import InputError
from chainframe.devnet import Devnet
from chainframe.rpc import Client

pd = pytest.importorskip("pandas", reason="the notebook extra: pip install 'chainframe[notebook]'")
pretty = pytest.importorskip("IPython.lib.pretty", reason="the notebook extra: pip install 'chainframe[notebook]'")


@pytest.mark.parametrize(
    ("call", "wrong", "meant"),
    [
        (chainframe.extract, "progres", "progress"),
        (chainframe.extract, "chunksize", "chunk_size"),
        (chainframe.collect, "progres", "progress"),
        (chainframe.collect, "adress", "address"),
        (chainframe.follow, "pol", "poll"),
    ],
)
def test_a_misspelled_option_is_named_with_the_likely_one(call, wrong, meant, tmp_path: Path) -> None:
    options = {"blocks": "0:1", "rpc": "http://127.0.0.1:9", wrong: 1}  # nothing listens: refused before sending
    if call is not chainframe.collect:
        options["out"] = tmp_path / "out"
    with pytest.raises(InputError, match=f"unknown option '{wrong}'; did you mean '{meant}'"):
        call("logs", **options)
    assert not (tmp_path / "out").exists()


def test_an_option_far_from_any_points_to_help() -> None:
    with pytest.raises(InputError, match=r"unknown option 'zzz'; help\(chainframe.collect\) lists them"):
        chainframe.collect("blocks", blocks="0:1", rpc="http://127.0.0.1:9", zzz=1)


def test_collect_gives_pandas_with_every_column_type(devnet: Devnet) -> None:
    # blocks hold lists of fixed-size hashes, which pyarrow alone cannot hand to pandas
    frame = chainframe.collect("blocks", blocks="0:5", rpc=devnet.http_url, output="pandas", progress=False)
    assert isinstance(frame, pd.DataFrame)
    assert list(frame["block_number"]) == [0, 1, 2, 3, 4, 5]
    assert len(frame["transaction_hashes"][1][0]) == 32
    assert frame["transaction_count"].sum() == sum(1 for t in devnet.truth.txs if t.block <= 5)


def test_a_run_report_reads_as_its_summary(devnet: Devnet, tmp_path: Path) -> None:
    report = chainframe.extract("blocks", blocks="0:9", rpc=devnet.http_url, out=tmp_path, progress=False)
    assert repr(report) == "<RunReport blocks 0..9 of chain 31337: blocks, 10 rows>"
    assert pretty.pretty(report) == report.summary()
    assert "blocks 0..9 (9 included) of chain 31337" in report._repr_html_()


def test_typed_results_show_every_field_as_hex(devnet: Devnet) -> None:
    with Client(devnet.http_url) as client:
        block = client.get_block(10, full_transactions=True)
        proof = client.get_proof(devnet.truth.contracts["Store"], [bytes(32)], block=10)
    assert block is not None
    shown = pretty.pretty(block)
    assert f"hash=0x{block.hash.hex()}," in shown
    assert f"from_=0x{block.transactions[0].from_.hex()}," in shown
    assert "(256 bytes)" in shown  # the bloom, cut
    assert "b'" not in shown
    assert repr(block).startswith("Block(number=10, hash=0x")  # repr stays one line
    shown = pretty.pretty(proof)
    assert f"storage_hash=0x{proof.storage_hash.hex()}" in shown
    assert "key=0x" + "00" * 32 in shown
    assert "b'" not in shown


def test_a_notebook_without_ipywidgets_gets_the_text_bar_unasked(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tqdm.std import tqdm as text_bar

    from chainframe.engine import _report
    from chainframe.engine._engine import RunCounters
    from chainframe.rpc import ClientStats

    real = importlib.util.find_spec
    monkeypatch.setattr(_report, "in_notebook", lambda: True)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ipywidgets" else real(name, *a))
    assert _report._bar_class() is text_bar  # not tqdm.auto, which warns that IProgress is missing (an error here)
    bar = _report.Progress(10, enabled=None, client=SimpleNamespace(stats=ClientStats()), counters=RunCounters())
    bar.close()
    assert "extract:" in capsys.readouterr().err
    monkeypatch.setattr(_report, "in_notebook", lambda: False)  # a pipe, no notebook: off unless asked
    bar = _report.Progress(10, enabled=None, client=SimpleNamespace(stats=ClientStats()), counters=RunCounters())
    bar.close()
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("name", ["extract", "collect", "follow", "repair", "off_chain"])
def test_the_blocking_functions_show_their_options(name: str) -> None:
    blocking, coroutine = getattr(chainframe.engine, name), getattr(chainframe.engine, f"a{name}")
    assert inspect.signature(blocking) == inspect.signature(coroutine)
    assert "**options" not in pydoc.render_doc(blocking, renderer=pydoc.plaintext)
