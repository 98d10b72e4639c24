"""The user's choices of what to extract checked before any request: datasets and their filters (a misspelled
option named with its closest match), chunk sizes and other whole numbers."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from chainframe._errors import InputError
from chainframe.datasets import DATASETS
from chainframe.engine._plan import check_datasets, check_filters


def whole(name: str, value: Any, least: int = 1) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        raise InputError(f"{name} must be a whole number, at least {least}; got {value!r}")
    return value


def chunk_size_of(dataset: str, chunk_size: int | None) -> int:
    return DATASETS[dataset].chunk_size if chunk_size is None else whole("chunk_size", chunk_size)


def check_chunk_size(chunk_size: int | None) -> int | None:
    return None if chunk_size is None else whole("chunk_size", chunk_size)


def dataset_inputs(
    datasets: str | Sequence[str], filters: Mapping[str, Any], takes: Callable[..., Any]
) -> dict[str, dict[str, Any]]:
    names = check_datasets([datasets] if isinstance(datasets, str) else datasets)
    every_filter = {i.name for dataset in DATASETS.values() for i in dataset.inputs}
    unknown = sorted(set(filters) - every_filter)
    if unknown:  # a misspelled option, not a filter some dataset lacks
        options = [n for n, o in inspect.signature(takes).parameters.items() if o.kind is o.KEYWORD_ONLY]
        import difflib  # for this message only

        close = difflib.get_close_matches(unknown[0], [*options, *every_filter], n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"help(chainframe.{takes.__name__.lstrip('a')}) lists them"
        raise InputError(
            f"unknown option {unknown[0]!r}; {hint} (options: {', '.join(options)}; filters: "
            f"{', '.join(sorted(every_filter))})"
        )
    per_dataset: dict[str, dict[str, Any]] = {}
    for name in names:
        relevant = {k: v for k, v in filters.items() if k in filter_names(name) or len(names) == 1}
        per_dataset[name] = check_filters(name, relevant)
    unused = set(filters) - {k for n in names for k in filter_names(n)}
    if unused:
        raise InputError(f"no chosen dataset takes {', '.join(sorted(unused))} (datasets: {', '.join(names)})")
    return per_dataset


def filter_names(dataset: str) -> frozenset[str]:
    return frozenset(i.name for i in DATASETS[dataset].inputs)
