"""``chainframe datasets`` and ``chainframe schema DATASET``: every dataset's columns, types and descriptions, how it
is fetched, its sort key, filters and default chunk size, from the one column table. ``--markdown`` prints the
reference kept in ``docs/datasets.md`` (a test fails when that file and the table drift apart).

Each reads the catalogue as :mod:`chainframe.cli._described` keeps it, so these commands import no dataset (nor pyarrow
and numpy); given :func:`~chainframe.cli._described.live`, the same functions print it from the classes."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from chainframe._errors import InputError
from chainframe.cli._described import Catalogue, catalogue
from chainframe.families import FAMILIES, filled_by

DELTA_READERS = (
    "With --table delta, readers other than chainframe's (Polars' scan_delta, deltalake, Spark, Trino) see every",
    "uint64, nested ones too, as a signed 64-bit long: the same 64 bits, so a value >= 2^63 reads as negative",
    "(x + 2^64 gives it back). chainframe.scan and open_duckdb give these types, as for plain Parquet.",
)
"""What a Delta table's other readers see of these types (a Delta schema has no unsigned integers)."""


def families(dataset: str, column: str) -> str:
    """Which chain families fill the column: ``all``, or the ones that declare it as their own (and on which rows)."""
    fillers = filled_by(dataset, column)
    if len(fillers) == len(FAMILIES):
        return "all"
    return ", ".join(
        family.name if code is None else f"{family.name} ({family.transaction_types[code].name} rows)"
        for family, code in fillers.items()
    )


def _family_unprovable(dataset: Any) -> list[tuple[str, str, str]]:
    """(column, family, why) for each column provable on Ethereum that a family's headers do not commit to."""
    found = [(*key.split(".", 1), family.name, why) for family in FAMILIES
             for key, why in family.unprovable_columns().items()]  # fmt: skip
    return [(c, family, why) for d, c, family, why in found if d == dataset.name and c not in dataset.unprovable]


def _family_meanings(dataset: Any) -> list[tuple[str, str, str]]:
    """(column, family, what it holds there) for each column a family's chains fill with something else than
    Ethereum's do (OP's blob_gas_used from Jovian)."""
    found = [(*key.split(".", 1), family.name, what) for family in FAMILIES for key, what in family.meanings.items()]
    return [(c, family, what) for d, c, family, what in found if d == dataset.name]


def overview(found: Catalogue | None = None) -> str:
    datasets = (found or catalogue()).datasets
    width = max(map(len, datasets))
    lines = [f"{name:<{width}}  {dataset.doc}" for name, dataset in datasets.items()]
    return "\n".join(lines) + "\n\nchainframe schema DATASET shows its columns, types and how it is fetched.\n"


def describe(name: str, found: Catalogue | None = None) -> str:
    found = found or catalogue()
    dataset, columns = found.datasets[name], found.columns
    filters = ", ".join(f"{i.name} ({i.flag}{', needed' if i.name in dataset.needs else ''})" for i in dataset.inputs)
    width = max(len(c) for c in dataset.columns)
    kinds = max(len(columns[c][0]) for c in dataset.columns)
    lines = [
        f"{name}: {dataset.doc}",
        f"  fetched with  {dataset.fetched_with}",
        f"  sorted by     {', '.join(dataset.sort)}",
        f"  filters       {filters or 'none'}",
        f"  chunk size    {dataset.chunk_size:,} blocks by default",
        "",
        "  columns (with --u256 binary, decimal128(38, 0) columns are fixed_size_binary[32]; filled by which chain",
        "  families, all or those named):",
    ]
    fills = {c: families(name, c) for c in dataset.columns}
    spread = max(map(len, fills.values()))
    lines += [
        f"  {c:<{width}}  {columns[c][0]:<{kinds}}  {fills[c]:<{spread}}  {columns[c][1]}" for c in dataset.columns
    ]
    lines += ["", *(f"  {line}" for line in DELTA_READERS)]
    lines += ["", f"  {_proven(dataset)}"]
    if len(dataset.unprovable) < len(dataset.columns):
        lines += [f"  {c:<{width}}  not provable: {why}" for c, why in dataset.unprovable.items()]
    per_family = _family_unprovable(dataset)
    if per_family and len(dataset.unprovable) < len(dataset.columns):
        lines += ["", "  not provable on a chain family (chainframe verify skips their checks there, saying why):"]
        lines += [f"  {c:<{width}}  {family}: {why}" for c, family, why in per_family]
    if meanings := _family_meanings(dataset):
        lines += ["", "  meaning otherwise on a chain family:"]
        lines += [f"  {c:<{width}}  {family}: {what}" for c, family, what in meanings]
    return "\n".join(lines) + "\n"


def _proven(dataset: Any) -> str:
    """What ``chainframe verify`` proves of the dataset's columns, before the ones it cannot."""
    if len(dataset.unprovable) == len(dataset.columns):
        reasons = "; ".join(sorted(set(dataset.unprovable.values())))
        return f"no column is provable ({reasons}): chainframe verify lists its series as skipped"
    if not dataset.unprovable:
        return "every column is proven by chainframe verify"
    return "every column is proven by chainframe verify except:"


def markdown(found: Catalogue | None = None) -> str:
    """The column reference as Markdown: what ``docs/datasets.md`` holds."""
    found = found or catalogue()
    out = [
        "# Datasets and columns",
        "",
        "Generated from the one column table (`src/chainframe/datasets/_columns.py`) by",
        "`chainframe schema --markdown > docs/datasets.md`; a test fails when the two drift apart. The same facts are",
        "at hand with `chainframe datasets` and `chainframe schema DATASET`. With `--u256 binary`, every",
        "`decimal128(38, 0)` column is `fixed_size_binary[32]` (big-endian words) instead.",
        "",
        " ".join(DELTA_READERS),
        "",
    ]
    for name, dataset in found.datasets.items():
        filters = ", ".join(f"`{i.name}` (`{i.flag}`{', needed' if i.name in dataset.needs else ''})"
                            for i in dataset.inputs) or "none"  # fmt: skip
        out += [
            f"## {name}",
            "",
            dataset.doc,
            "",
            f"Fetched with {dataset.fetched_with}. Sorted by {', '.join(f'`{s}`' for s in dataset.sort)}. Filters: "
            f"{filters}. Chunks of {dataset.chunk_size:,} blocks by default.",
            "",
            "| column | type | chain families | description |",
            "|---|---|---|---|",
        ]
        out += [
            f"| `{c}` | `{found.columns[c][0]}` | {families(name, c)} | {found.columns[c][1]} |"
            for c in dataset.columns
        ]
        out += (
            ["", f"Verification: {_proven(dataset)}", ""]
            if len(dataset.unprovable) in (0, len(dataset.columns))
            else [
                "",
                f"Verification: {_proven(dataset)}",
                "",
                *(f"- `{c}`: {why}" for c, why in dataset.unprovable.items()),
                "",
            ]
        )
        per_family = _family_unprovable(dataset)
        if per_family and len(dataset.unprovable) < len(dataset.columns):
            out += ["Not provable on a chain family (verify skips their checks there, saying why):", ""]
            out += [*(f"- `{c}` on {family}: {why}" for c, family, why in per_family), ""]
        if meanings := _family_meanings(dataset):
            out += ["Meaning otherwise on a chain family:", ""]
            out += [*(f"- `{c}` on {family}: {what}" for c, family, what in meanings), ""]
        out.append("")
    return "\n".join(out)


def add_parser(commands: Any) -> None:
    listing: argparse.ArgumentParser = commands.add_parser("datasets", help="list the datasets, one line each")
    listing.set_defaults(run=lambda args: _print(overview()), asks_node=False)  # no RPC client (cli._main)
    p: argparse.ArgumentParser = commands.add_parser(
        "schema",
        help="show a dataset's columns, types and descriptions, and how it is fetched",
        description="A dataset's columns, types and descriptions, how it is fetched, its sort key and filters.",
        epilog="examples:\n  chainframe schema logs\n  chainframe schema --markdown > docs/datasets.md",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    names = ", ".join(catalogue().datasets)
    p.add_argument("datasets", nargs="*", metavar="DATASET", help=f"one or more of: {names}")
    p.add_argument("--markdown", action="store_true", help="every dataset, as the Markdown of docs/datasets.md")
    p.set_defaults(run=run, asks_node=False)


def _print(text: str) -> int:
    print(text, end="")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.markdown:
        return _print(markdown())
    found = catalogue()
    names: Sequence[str] = args.datasets or list(found.datasets)
    unknown = [n for n in names if n not in found.datasets]
    if unknown:
        raise InputError(f"unknown dataset {unknown[0]!r}; the datasets are: {', '.join(found.datasets)}")
    return _print("\n".join(describe(n, found) for n in names))
