"""Every column and type at hand from the CLI, and the column reference in docs/ generated from the same table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chainframe.cli import build_parser, main
from chainframe.cli._described import FILE, generated, live
from chainframe.cli._main import _attached_values
from chainframe.cli._schema import markdown
from chainframe.datasets import COLUMNS, DATASETS
from chainframe.families import ARBITRUM_NITRO, FAMILIES, OP_STACK, ChainFamily

DOCS = Path(__file__).resolve().parents[2] / "docs" / "datasets.md"


def test_the_column_reference_in_docs_is_the_table() -> None:
    assert DOCS.read_text() == markdown(live()), "regenerate: chainframe schema --markdown > docs/datasets.md"


def test_the_catalogue_the_commands_read_is_the_classes() -> None:
    """``datasets`` and ``schema`` read the catalogue from a file written from the classes, sparing the import of
    every dataset: the file says what the classes say (tests/engine/test_startup.py compares what is printed)."""
    assert FILE.read_text(encoding="utf-8") == generated(), "regenerate: python -m chainframe.cli._described"


def test_datasets_lists_every_dataset(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert all(f"{name} " in out for name in DATASETS)


@pytest.mark.parametrize("name", list(DATASETS))
def test_schema_shows_every_column_with_its_type_and_description(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", name]) == 0
    out = capsys.readouterr().out
    for column in DATASETS[name].columns:
        line = next(line for line in out.splitlines() if line.split()[:1] == [column])
        assert str(COLUMNS[column].arrow_type) in line
        assert COLUMNS[column].doc in line
    assert "fetched with" in out


def _line(out: str, column: str) -> str:
    return next(line for line in out.splitlines() if line.split()[:1] == [column])


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_schema_names_the_families_that_fill_a_column(family: ChainFamily, capsys: pytest.CaptureFixture[str]) -> None:
    for dataset, columns in family.columns.items():
        assert main(["schema", dataset]) == 0
        out = capsys.readouterr().out
        for column, code in columns.items():
            named = family.name if code is None else f"{family.name} ({family.transaction_types[code].name} rows)"
            assert named in re.split(r"\s{2,}|, ", _line(out, column))  # a column two families fill: "a, b"
            assert re.search(rf"\| ([^|,]+, )*{re.escape(named)}(, [^|,]+)* \|", markdown())
            others = [f.name for f in FAMILIES if f is not family and column not in f.columns.get(dataset, {})]
            assert others
            assert not any(name in _line(out, column) for name in others)


def test_schema_says_a_column_every_family_fills_is_filled_by_all(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "receipts"]) == 0
    out = capsys.readouterr().out
    assert _line(out, "gas_used").split()[2] == "all"
    assert " ".join(_line(out, "deposit_nonce").split()[2:5]).rstrip(",") == "op-stack (deposit rows)"
    assert _line(out, "l1_fee").split()[3].rstrip(",") == "op-stack"


def test_schema_gives_why_a_family_cannot_prove_a_column(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "receipts"]) == 0
    out = capsys.readouterr().out.split("not provable on a chain family")[1]
    why = ARBITRUM_NITRO.unprovable["receipts.effective_gas_price"]
    assert f"effective_gas_price      arbitrum-nitro: {why}" in out
    assert f"op-stack: {OP_STACK.unprovable['receipts.blob_gas_used']}" in out
    assert "l1_fee " not in out  # no column at all is provable: said once, above


def test_schema_refuses_an_unknown_dataset(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "nope"]) == 2
    assert capsys.readouterr().err.startswith("error: unknown dataset 'nope'")


@pytest.mark.parametrize("blocks", ["-1000:", "-5:", "-1k:"])
def test_a_range_counting_back_is_taken_as_printed(blocks: str) -> None:
    argv = ["extract", "blocks", "--blocks", blocks, "--rpc", "http://127.0.0.1:1", "--out", "x"]
    assert build_parser().parse_args(_attached_values(argv)).blocks == blocks
