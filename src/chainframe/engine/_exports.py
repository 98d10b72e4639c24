"""Exports (cryo's ``--csv``, ``--json``, ``--hex``, ``--columns``): the options checked before any request, and
each asked series' asked blocks written as one file beside it after the run (:mod:`chainframe.store._export`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chainframe._errors import InputError
from chainframe.datasets import DATASETS
from chainframe.engine._plan import Wanted
from chainframe.engine._report import RunReport
from chainframe.store import (
    FORMATS,
    ExportFormat,
    Location,
    check_compression,
    export,
    export_path,
    is_delta_table,
    load_series,
    location,
    series_folder,
    series_name,
    snapshot_uris,
)


def check_export(out: Any, format: Any, hex: Any, columns: Any, compression: Any) -> bool:
    """The export options checked before any request; True when the run exports."""
    if format not in FORMATS:
        raise InputError(f"format must be one of {', '.join(FORMATS)}; got {format!r}")
    if not isinstance(hex, bool):
        raise InputError(f"hex must be True or False; got {hex!r}")
    if columns is not None and (isinstance(columns, str) or not all(isinstance(c, str) for c in columns)):
        raise InputError(f"columns must be a list of column names; got {columns!r}")
    exporting = format != "parquet" or hex or bool(columns)
    if compression is not None and not exporting:
        raise InputError("compression applies to exports (--csv, --json, --hex, --columns); the series' chunk files "
                         "are always zstd")  # fmt: skip
    check_compression(compression.partition(":")[0] if isinstance(compression, str) else compression, format)
    if exporting and not isinstance(location(out), Path):
        raise InputError(f"exports (--csv, --json, --hex, --columns) are written to a local folder; {out} is not one")
    return exporting


def check_columns(
    wanted: list[Wanted], columns: Sequence[str] | None, exclude: Sequence[str] | None,
    include: Sequence[str] | None,
) -> dict[str, list[str] | None]:  # fmt: skip
    """Per asked series, the columns its export holds (None: every one), each name checked to be the dataset's."""
    if columns and exclude:
        raise InputError("give columns= (these only) or exclude_columns= (all but these), not both")
    picked: dict[str, list[str] | None] = {}
    for want in wanted:
        names = DATASETS[want.dataset].schema_with(want.filters, want.u256).names
        for given in (columns, exclude, include):
            unknown = [c for c in given or () if c not in names]
            if unknown:
                raise InputError(f"{want.dataset} has no column {unknown[0]!r}; its columns: {', '.join(names)}")
        chosen = [*columns, *(c for c in include or () if c not in columns)] if columns else None
        picked[series_name(want.dataset, want.filters, want.u256)] = (
            [c for c in names if c not in exclude] if exclude else chosen
        )
    return picked


def export_series(
    folder: Location, wanted: list[Wanted], report: RunReport, *, format: ExportFormat, hex: bool,
    columns: Mapping[str, list[str] | None], compression: str | None,
) -> None:  # fmt: skip
    """Each asked series' asked blocks as one file beside it (see :mod:`chainframe.store._export`)."""
    if report.blocks is None:
        return
    ranges = report.ranges or [report.blocks]
    assert isinstance(folder, Path)
    for want in wanted:
        name = series_name(want.dataset, want.filters, want.u256)
        series = series_folder(folder, name)  # an older chainframe's name for it, where it wrote it
        files = (snapshot_uris(series) if is_delta_table(series)
                 else [str(c.path) for c in load_series(series).chunks])  # fmt: skip
        target = export_path(folder, name, report.blocks[0], report.blocks[1], format, compression)
        dataset = DATASETS[want.dataset]
        export(files, target, ranges=ranges, sort=dataset.sort, format=format, hex=hex, columns=columns[name],
               compression=compression, block_column=dataset.block_column)  # fmt: skip
        report.exports.append(str(target))
