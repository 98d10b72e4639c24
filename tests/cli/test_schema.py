"""Every column and type at hand from the CLI, and the column reference in docs/ generated from the same table."""

from __future__ import annotations

from pathlib import Path

import pytest

from chainframe.cli import build_parser, main
from chainframe.cli._main import _attached_values
from chainframe.cli._schema import markdown
from chainframe.datasets import COLUMNS, DATASETS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "datasets.md"


def test_the_column_reference_in_docs_is_the_table() -> None:
    assert DOCS.read_text() == markdown(), "regenerate: chainframe schema --markdown > docs/datasets.md"


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


def test_schema_refuses_an_unknown_dataset(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "nope"]) == 2
    assert capsys.readouterr().err.startswith("error: unknown dataset 'nope'")


@pytest.mark.parametrize("blocks", ["-1000:", "-5:", "-1k:"])
def test_a_range_counting_back_is_taken_as_printed(blocks: str) -> None:
    argv = ["extract", "blocks", "--blocks", blocks, "--rpc", "http://127.0.0.1:1", "--out", "x"]
    assert build_parser().parse_args(_attached_values(argv)).blocks == blocks
