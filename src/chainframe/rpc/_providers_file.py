"""An endpoints file: many endpoints, each with its own limits, for one run (``chainframe extract --endpoints FILE``).

TOML (or the same shape in JSON, by the file's suffix)::

    [[endpoint]]
    url = "https://mainnet.infura.io/v3/KEY"
    credits_per_second = 500          # its plan's budget, in its price table's unit
    prices = "infura"                 # infura (default), alchemy or quicknode: chainframe.rpc.PRICE_TABLES

    [[endpoint]]
    url_env = "ALCHEMY_URL"           # the URL from this environment variable: no key in the file
    credits_per_second = 300
    prices = "alchemy"
    requests_per_second = 20          # as well, or alone
    max_concurrency = 8

Each becomes a :class:`~chainframe.rpc.Provider`; the first is the run's first endpoint.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from chainframe._errors import InputError
from chainframe.rpc._endpoint import Endpoint
from chainframe.rpc._pacing import Pacing
from chainframe.rpc._pool import Provider

_KEYS = frozenset({"url", "url_env", "requests_per_second", "credits_per_second", "prices", "max_concurrency"})


def read_providers(path: Path) -> list[Provider]:
    """The endpoints of an endpoints file, in its order; an :class:`InputError` naming the file and entry otherwise."""
    # Imported here: tomllib compiles its regular expressions at import, 15 CPU-ms of every run's start-up, and
    # only a run given a providers file reads one (kept for start-up time).
    import tomllib

    try:
        text = path.read_text()
    except OSError as exc:
        raise InputError(f"--endpoints {path}: {exc.strerror}") from None
    try:
        data: Any = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except ValueError as exc:  # json.JSONDecodeError and tomllib.TOMLDecodeError are both ValueErrors
        kind = "JSON" if path.suffix == ".json" else "TOML"
        raise InputError(f"--endpoints {path} is not valid {kind}: {exc}") from None
    entries = data.get("endpoint") if isinstance(data, dict) else data
    if not isinstance(entries, list) or not entries:
        raise InputError(f"--endpoints {path} names no endpoint: write one [[endpoint]] table per endpoint")
    return [_provider(entry, f"--endpoints {path}, endpoint {n}") for n, entry in enumerate(entries, 1)]


def _provider(entry: Any, where: str) -> Provider:
    if not isinstance(entry, dict):
        raise InputError(f"{where}: expected a table of url, credits_per_second...; got {type(entry).__name__}")
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        raise InputError(f"{where}: unknown {', '.join(unknown)}; an endpoint takes {', '.join(sorted(_KEYS))}")
    if ("url" in entry) == ("url_env" in entry):
        raise InputError(f"{where}: give url or url_env (the environment variable holding the URL), one of them")
    url = entry.get("url") or os.environ.get(str(entry["url_env"]), "")
    if not url:
        raise InputError(f"{where}: the environment variable {entry['url_env']} is not set (or empty)")

    def rate(name: str) -> float | None:
        value = entry.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise InputError(f"{where}: {name} must be a number above 0; got {value!r}")
        return float(value)

    concurrency = entry.get("max_concurrency", 16)
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise InputError(f"{where}: max_concurrency must be a whole number, at least 1; got {concurrency!r}")
    try:
        pacing = Pacing.priced(
            str(entry.get("prices", "infura")),
            requests_per_second=rate("requests_per_second"),
            credits_per_second=rate("credits_per_second"),
            max_concurrency=concurrency,
        )
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None
    return Provider(Endpoint.from_url(str(url)), pacing)
