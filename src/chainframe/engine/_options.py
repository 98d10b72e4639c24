"""The user's choices of what to extract checked before any request: datasets and their filters (a misspelled
option named with its closest match), chunk sizes and other whole numbers."""

from __future__ import annotations

import hashlib
import inspect
import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from chainframe._errors import InputError
from chainframe.datasets import DATASETS
from chainframe.engine._plan import check_datasets, check_filters
from chainframe.rpc import params


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


def read_abi(flag: str, path: str | os.PathLike[str], what: str = "") -> list[Any]:
    """The entries of the ABI file at ``path`` (a JSON list); refused, naming ``flag`` and the file, when it is not
    one."""
    try:
        with open(path, encoding="utf-8") as file:
            abi = json.load(file)
    except (OSError, ValueError) as exc:
        raise InputError(f"{flag} {str(path)!r} is {what}a readable ABI file: {exc}") from None
    if not isinstance(abi, list):
        raise InputError(f"{flag} {str(path)!r}: an ABI file holds a JSON list of entries")
    return abi


def abi_entries(abi: Sequence[Any], kind: str) -> list[dict[str, Any]]:
    """An ABI's entries of one kind (an entry without a type is a function, as the ABI spec says)."""
    return [e for e in abi if isinstance(e, dict) and e.get("type", "function") == kind]


def series_filters(
    name: str, filters: Mapping[str, Any], given: Mapping[str, Any], *, each: bool = False
) -> list[tuple[dict[str, Any], Any]]:
    """The filters of each series a dataset's checked ``filters`` write, with the entry each was made of (None: not
    split): one, or one per entry of a filter the dataset keeps its rows by
    (:attr:`~chainframe.datasets.Dataset.keeps_by`: a function), and with ``each`` (an ABI's) one per event too;
    each checked alone from what was ``given`` (as given alone: an event's topic 0 is its own hash then)."""
    own = {k: v for k, v in given.items() if k in filter_names(name)}
    alone = []
    for kind in ("event", "function"):
        split = filters.get(kind) and (each or kind in DATASETS[name].keeps_by)
        entries = _entries(own[kind], kind) if split else []
        alone += [(check_filters(name, {**own, kind: [entry]}), entry) for entry in entries]
    return alone or [(dict(filters), None)]


def entry_key(entry: Any) -> str:
    """An event or function as given (a signature, or an ABI entry), as a key of :func:`abi_origins`."""
    return json.dumps(entry, sort_keys=True) if isinstance(entry, dict) else str(entry)


def abi_origins(abi: Any) -> dict[str, str]:
    """Each entry of ``abi`` (as ``with_abi`` takes it) by :func:`entry_key`: the ABI it came from, as a chunk's footer
    names it (:attr:`chainframe.store.ChunkMeta.decoded_with`): its file (or ``the ABI given``) and ``sha256:``
    with the first 16 hex digits of its entries' canonical JSON (as an ABI folder's digest)."""
    out: dict[str, str] = {}
    for where, entries in _abis(abi):
        text = json.dumps(list(entries), sort_keys=True, separators=(",", ":"))
        said = f"{os.path.basename(where)} sha256:{hashlib.sha256(text.encode()).hexdigest()[:16]}"
        for entry in entries:
            out.setdefault(entry_key(entry), said)
    return out


def _entries(given: Any, kind: str) -> list[Any]:
    """A filter's entries as given, one per event or function: an ABI given as its JSON text gives its entries of
    ``kind`` (a text that is not JSON stays, refused by the dataset's check that names it)."""
    found = []
    for value in given if isinstance(given, list | tuple) else [given]:
        if isinstance(value, str) and value.lstrip().startswith("["):
            try:
                found += abi_entries(json.loads(value), kind)
                continue
            except ValueError:
                pass
        found.append(value)
    return found


def _abis(abi: Any) -> list[tuple[str, list[Any]]]:
    """``abi`` (``--abi``: the path of an ABI file, several paths, or one ABI as its list of entries; None: none) as
    each ABI's file (or ``the ABI given``) and entries."""
    if abi is None:
        return []
    if isinstance(abi, str | os.PathLike):
        return [(str(abi), read_abi("--abi", abi))]
    if abi and all(isinstance(e, Mapping) for e in abi):
        return [("the ABI given", list(abi))]
    return [(str(path), read_abi("--abi", path)) for path in abi]


def _is_address(value: Any) -> bool:
    try:
        params.address(value.strip() if isinstance(value, str) else value)
    except InputError:
        return False
    return isinstance(value, str)


def abi_of_addresses(abi: Any, abi_dir: Any, filters: Mapping[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    """``--abi ADDRESS``: the contract's ABI, read from ``--abi-dir`` as ``--address ADDRESS --abi-dir DIR`` reads
    it (a proxy's with its implementation's in force at each block): ``(abi, abi_dir, filters)`` with the addresses
    moved to ``address``. Refused without a folder (fetching from Sourcify or Etherscan is a source not built: the
    machines here reach no public service), or with files and addresses mixed. Anything else as given."""
    listed = [abi] if isinstance(abi, str) else list(abi) if isinstance(abi, list | tuple) else []
    named = [a for a in listed if _is_address(a)]
    if not named:
        return abi, abi_dir, dict(filters)
    if len(named) < len(listed):
        raise InputError("--abi takes ABI files or contract addresses, not both: give the files with --abi and the "
                         "addresses with --address and --abi-dir")  # fmt: skip
    if abi_dir is None:
        raise InputError(
            f"--abi {named[0]}: a contract's ABI is read from a folder of ABI files: give --abi-dir DIR (Sourcify's "
            "layout or Etherscan getabi JSON files); fetching it from those services is not built in"
        )
    given = filters.get("address")
    addresses = [given] if isinstance(given, str) else list(given or [])
    return None, abi_dir, {**filters, "address": list(dict.fromkeys([*addresses, *(a.strip() for a in named)]))}


def with_abi(datasets: str | Sequence[str], filters: Mapping[str, Any], abi: Any) -> dict[str, Any]:
    """``filters`` with the events and functions of ``abi`` (``--abi``: the path of an ABI file, several paths, or
    one ABI as its list of entries) added to the ``event`` and ``function`` of the asked datasets that take them.
    Refused before any request when no asked dataset decodes, or an ABI has no entries of a kind an asked dataset
    decodes. The run then writes one series per event and per function
    (:class:`~chainframe.engine._extraction.SeriesAsked`'s
    ``each``). Without an ABI (None), ``filters`` as they are."""
    if abi is None:
        return dict(filters)
    abis = _abis(abi)
    names = check_datasets([datasets] if isinstance(datasets, str) else datasets)
    takes = sorted({k for n in names for k in filter_names(n)} & {"event", "function"})
    if not takes:
        raise InputError("--abi decodes logs (its events), transactions and traces (its functions): ask for one")
    out = dict(filters)
    for where, entries in abis:
        for kind in takes:
            found = abi_entries(entries, kind)
            if not found:
                takers = ", ".join(n for n in names if kind in filter_names(n))
                raise InputError(f"--abi {where!r} has no {kind} entries, and {takers} decode its {kind}s")
            out[kind] = [*(out.get(kind) or []), *found]
    return out
