"""The client a run reads through: where from (``rpc=`` one endpoint or several, or Infura's ``network=``) and how
(``client_options``, checked against :class:`~chainframe.rpc.AsyncClient`'s own parameters before any request).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

from chainframe._errors import InputError
from chainframe.rpc import AsyncClient, Endpoint, Pacing, Provider

RPC = str | Endpoint | Provider | Sequence[str | Endpoint | Provider]
"""One endpoint, or several (keys or providers): the calls are shared over them, each paced by its own budget (a
:class:`~chainframe.rpc._pool.Provider`'s, or one the size of ``client_options``' pacing), and one that fails or
serves another chain is set aside; on a Dask cluster each worker starts from another one, the others its fallbacks
(see :mod:`chainframe.engine._dask`)."""

_CLIENT_OPTIONS = frozenset(inspect.signature(AsyncClient.__init__).parameters) - {"self", "endpoint"}


def client_options(options: Mapping[str, Any] | None, rpc: Any = None) -> dict[str, Any]:
    """``client_options`` checked; a ``ws://`` or ``wss://`` URL means the WebSocket transport."""
    options = dict(options or {})
    first = rpc[0] if isinstance(rpc, list | tuple) and rpc else rpc
    if isinstance(first, str) and first.startswith(("ws://", "wss://")):
        options.setdefault("transport", "ws")
    unknown = sorted(set(options) - _CLIENT_OPTIONS)
    if unknown:
        raise InputError(
            f"client_options does not take {', '.join(unknown)}; it takes {', '.join(sorted(_CLIENT_OPTIONS))}"
        )
    return options


def make_client(
    endpoint: Endpoint, options: Mapping[str, Any] | None, rpc: Any = None, fallbacks: Sequence[Endpoint] = ()
) -> AsyncClient:
    """The client for a run: ``client_options`` checked; further endpoints share the calls with the first one (each
    its own budget); a :class:`~chainframe.rpc._pool.Provider` given brings its own pacing, the first one's too."""
    checked = client_options(options, rpc)
    first = next((p for p in _listed(rpc) if isinstance(p, Provider) and p.endpoint == endpoint), None)
    if first is not None and first.pacing is not None:
        checked["pacing"] = first.pacing
    if fallbacks:
        given = {p.endpoint: p for p in _listed(rpc) if isinstance(p, Provider)}
        checked["spread"] = [given.get(e, e) for e in fallbacks] + list(checked.get("spread", ()))
    try:
        return AsyncClient(endpoint, **checked)
    except TypeError as exc:
        raise InputError(f"client_options: {exc}") from None


def _listed(rpc: Any) -> list[Any]:
    return list(rpc) if isinstance(rpc, list | tuple) else [rpc]


def own_pacings(endpoints: Sequence[Endpoint], rpc: Any) -> list[Pacing | None]:
    """Each of ``endpoints``' own pacing where ``rpc`` gave it as a :class:`~chainframe.rpc._pool.Provider` with one
    (an endpoints file's budget and prices), else None."""
    given = {p.endpoint: p.pacing for p in _listed(rpc) if isinstance(p, Provider)}
    return [given.get(endpoint) for endpoint in endpoints]


def endpoint_of(rpc: str | Endpoint | Provider | None, network: str | None, key: str | None) -> Endpoint:
    if (rpc is None) == (network is None):
        raise InputError("say where to read from: rpc='https://host/v3/KEY' (any JSON-RPC URL) or network='mainnet'")
    if network is not None:
        return Endpoint.infura(network, key)
    if isinstance(rpc, Provider):
        return rpc.endpoint
    return rpc if isinstance(rpc, Endpoint) else Endpoint.from_url(str(rpc))


def endpoints_of(rpc: RPC | None, network: str | None, key: str | None) -> list[Endpoint]:
    """The endpoints of ``rpc`` (one or several) or of ``network``."""
    if isinstance(rpc, list | tuple):
        if not rpc:
            raise InputError("rpc=[] names no endpoint; give one URL or several")
        if network is not None:
            raise InputError("say where to read from with rpc=... or network=..., not both")
        return [endpoint_of(one, None, None) for one in rpc]
    if rpc is not None and not isinstance(rpc, str | Endpoint | Provider):
        raise InputError(f"rpc must be a URL, an Endpoint, a Provider or a list of them; got {type(rpc).__name__}")
    return [endpoint_of(rpc, network, key)]
