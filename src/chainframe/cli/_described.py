"""What ``chainframe datasets`` and ``chainframe schema`` print of the catalogue's datasets, read without importing
them: their modules import pyarrow, numpy and the RPC client, half of those commands' start-up before (0.48 CPU-s to
0.23, 342 modules to 215, by ``python -X importtime``).

The facts are the datasets' own (their classes' attributes, the column table's types and descriptions), written by
:func:`write` to ``_described.json`` beside this module, as ``docs/datasets.md`` is written from them: generated, never
edited. A test fails when the file and the classes drift apart, so the commands print what the classes say; after
changing a dataset's declaration or a column, regenerate it with ``python -m chainframe.cli._described``. A dataset
added with :func:`chainframe.datasets.register` is described from its class (its module is loaded already).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from chainframe.datasets._registry import REGISTRY, registered

FILE = Path(__file__).with_name("_described.json")


class Filter(NamedTuple):
    """A filter or input a dataset takes, as ``chainframe schema`` names it (of :class:`chainframe.datasets.Input`)."""

    name: str
    flag: str


class Described(NamedTuple):
    """A dataset as ``chainframe schema`` describes it: the attributes of :class:`chainframe.datasets.Dataset` it
    prints, by the same names."""

    name: str
    doc: str
    fetched_with: str
    sort: tuple[str, ...]
    inputs: tuple[Filter, ...]
    needs: frozenset[str]
    chunk_size: int
    columns: tuple[str, ...]
    unprovable: dict[str, str]


class Catalogue(NamedTuple):
    datasets: Mapping[str, Any]
    """Every dataset by name, the catalogue's in its order: each a :class:`Described`, or a dataset's class instance
    (those :func:`registered`, and all of them in :func:`live`)."""
    columns: Mapping[str, tuple[str, str]]
    """Every column of the column table: its Arrow type as text (with ``--u256 decimal``) and its description."""


def catalogue() -> Catalogue:
    """The catalogue as ``_described.json`` holds it, and any dataset registered in this process."""
    facts = json.loads(FILE.read_text(encoding="utf-8"))
    datasets: dict[str, Any] = {
        name: Described(
            name=name,
            doc=d["doc"],
            fetched_with=d["fetched_with"],
            sort=tuple(d["sort"]),
            inputs=tuple(Filter(*i) for i in d["inputs"]),
            needs=frozenset(d["needs"]),
            chunk_size=d["chunk_size"],
            columns=tuple(d["columns"]),
            unprovable=d["unprovable"],
        )
        for name, d in facts["datasets"].items()
    }
    datasets.update(registered())
    return Catalogue(datasets, {name: (kind, doc) for name, (kind, doc) in facts["columns"].items()})


def live() -> Catalogue:
    """The catalogue from the datasets' classes and the column table (importing every dataset, and pyarrow)."""
    # deferred: every dataset's module and pyarrow, which catalogue() is there to spare start-up
    from chainframe.datasets import COLUMNS, DATASETS

    columns = {name: (str(column.arrow_type_for("decimal")), column.doc) for name, column in COLUMNS.items()}
    return Catalogue(dict(DATASETS), columns)


def _facts(dataset: Any) -> dict[str, Any]:
    return {
        "doc": dataset.doc,
        "fetched_with": dataset.fetched_with,
        "sort": list(dataset.sort),
        "inputs": [[i.name, i.flag] for i in dataset.inputs],
        "needs": sorted(dataset.needs),
        "chunk_size": dataset.chunk_size,
        "columns": list(dataset.columns),
        "unprovable": dict(dataset.unprovable),
    }


def generated() -> str:
    """What ``_described.json`` holds, made from the classes and the column table: the catalogue's datasets only."""
    found = live()
    facts = {
        "datasets": {name: _facts(found.datasets[name]) for name in REGISTRY},
        "columns": {name: list(column) for name, column in found.columns.items()},
    }
    return json.dumps(facts, indent=1, ensure_ascii=False) + "\n"


def write() -> None:
    """Write ``_described.json`` anew from the classes and the column table."""
    FILE.write_text(generated(), encoding="utf-8")


if __name__ == "__main__":
    write()
