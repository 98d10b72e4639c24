"""What a dataset takes besides blocks: its filters and inputs, declared once with their CLI flag and help.

A dataset lists the :class:`Input` s it takes (``Dataset.inputs``) and which of them it needs; the engine refuses
anything else before any request, the CLI makes one option per input, and ``chainframe schema`` lists them. Each
input's ``check`` turns what a caller gave into its JSON-able, lowercase-hex form (the form a series' name and a
chunk task carry), raising :class:`~chainframe.InputError` with what was wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from chainframe._errors import InputError

Parse = Literal["values", "switch", "json", "own"]
"""How the CLI reads the input: ``values`` (``--flag A B``), ``switch`` (``--flag``), ``json`` (``--flag JSON``,
repeatable), ``own`` (the CLI's own syntax, such as the topic flags)."""


@dataclass(frozen=True)
class Input:
    """One filter or input: its keyword (``filters=`` key in Python), CLI flag, help and checker."""

    name: str
    flag: str
    help: str
    check: Callable[[Any], Any]
    parse: Parse = "values"
    metavar: str = "VALUE"
    also: tuple[str, ...] = ()
    """Other CLI flags for it, such as cryo's (``--contract`` for ``--address``)."""


def _addresses(values: Any) -> list[str]:
    # deferred: the command reads these declarations before it loads anything (cli._process), the RPC package included
    from chainframe.rpc import params

    if isinstance(values, str):
        values = [values]
    return [params.address(a, f"addresses[{i}]") for i, a in enumerate(values)]


def _tokens(values: Any) -> list[str]:
    # deferred: the command reads these declarations before it loads anything (cli._process), the RPC package included
    from chainframe.rpc import params

    if isinstance(values, str):
        values = [values]
    return [params.address(a, f"tokens[{i}]") for i, a in enumerate(values)]


def _storage_keys(values: Any) -> list[str]:
    # deferred: the command reads these declarations before it loads anything (cli._process), the RPC package included
    from chainframe.rpc import params

    return params.storage_keys(values)


def _calls(values: Any) -> list[dict[str, str]]:
    # deferred: the command reads these declarations before it loads anything (cli._process), the RPC package included
    from chainframe.rpc import params

    return params.call_list(values)


def _every(value: Any) -> int:
    if isinstance(value, list | tuple):  # the CLI's --every N
        if len(value) != 1:
            raise InputError(f"every takes one number of blocks; got {' '.join(map(str, value))}")
        value = value[0]
    text = str(value).strip() if isinstance(value, int | str) and not isinstance(value, bool) else ""
    if not text.isdigit() or int(text) < 1:
        raise InputError(f"every must be a whole number of blocks, 1 or more (rows at multiples of it); got {value!r}")
    return int(text)


def _switch(value: Any) -> bool:
    return bool(value)


def _as_given(value: Any) -> Any:
    return value  # checked with the other log filters, together (see log_filters)


ADDRESS = Input("address", "--address", "only logs from these contracts", _as_given, metavar="ADDR",
                also=("--contract",))  # fmt: skip
TOPICS = Input("topics", "--topic0 .. --topic3", "topics (hashes, or event signatures for topic 0)", _as_given,
               parse="own")  # fmt: skip
EVENT = Input("event", "--event", "decode logs of these events into typed columns (and fetch only them)", _as_given,
              parse="own")  # fmt: skip
ADDRESSES = Input("addresses", "--addresses", "the accounts to read", _addresses, metavar="ADDR")
TOKENS = Input("tokens", "--tokens", "ERC-20 token contracts to read", _tokens, metavar="ADDR")
STORAGE_KEYS = Input("storage_keys", "--storage-key", "storage slots to read", _storage_keys, metavar="KEY")
CALLS = Input("calls", "--call", 'a call, e.g. \'{"to": "0x..", "data": "0x.."}\' (repeatable)', _calls,
              parse="json", metavar="JSON")  # fmt: skip
EVERY = Input("every", "--every", "read state only at blocks that are multiples of N", _every, metavar="N")
ONLY_TOP_CALL = Input("only_top_call", "--only-top-call", "trace only the top call", _switch, parse="switch")
DIFF_MODE = Input("diff_mode", "--diff-mode", "pre and post state", _switch, parse="switch")


def check_inputs(
    dataset: str, takes: tuple[Input, ...], needs: frozenset[str], given: Mapping[str, Any]
) -> dict[str, Any]:
    """``given`` checked against what ``dataset`` takes (``takes``) and needs: unknown ones and missing ones refused,
    each value in its checked form. Empty values count as not given."""
    given = {k: v for k, v in given.items() if v is not None and v != () and v != []}
    allowed = {i.name: i for i in takes}
    extra = sorted(set(given) - set(allowed))
    if extra:
        says = f"takes only {', '.join(sorted(allowed))}" if allowed else "takes no filters"
        raise InputError(f"dataset {dataset!r} {says}; got {', '.join(extra)}")
    missing = sorted(needs - set(given))
    if missing:
        flags = ", ".join(f"{n}=[...] ({allowed[n].flag})" for n in missing)
        raise InputError(f"dataset {dataset!r} needs {flags}")
    return {name: allowed[name].check(value) for name, value in given.items()}
