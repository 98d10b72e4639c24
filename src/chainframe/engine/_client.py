"""The client a run reads through: where from (``rpc=`` one endpoint or several, or Infura's ``network=``) and how
(``client_options``, checked against :class:`~chainframe.rpc.AsyncClient`'s own parameters before any request).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

from chainframe._errors import InputError
from chainframe.rpc import AsyncClient, Endpoint

RPC = str | Endpoint | Sequence[str | Endpoint]
"""One endpoint, or several (keys or providers): the first is used, the others are its fallbacks; on a Dask
cluster each worker starts from another one (see :mod:`chainframe.engine._dask`)."""

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
    """The client for a run: ``client_options`` checked; further endpoints are the first one's fallbacks."""
    checked = client_options(options, rpc)
    if fallbacks:
        checked["fallbacks"] = [*fallbacks, *checked.get("fallbacks", ())]
    try:
        return AsyncClient(endpoint, **checked)
    except TypeError as exc:
        raise InputError(f"client_options: {exc}") from None


def endpoint_of(rpc: str | Endpoint | None, network: str | None, key: str | None) -> Endpoint:
    if (rpc is None) == (network is None):
        raise InputError("say where to read from: rpc='https://host/v3/KEY' (any JSON-RPC URL) or network='mainnet'")
    if network is not None:
        return Endpoint.infura(network, key)
    return rpc if isinstance(rpc, Endpoint) else Endpoint.from_url(str(rpc))


def endpoints_of(rpc: RPC | None, network: str | None, key: str | None) -> list[Endpoint]:
    """The endpoints of ``rpc`` (one or several) or of ``network``."""
    if isinstance(rpc, list | tuple):
        if not rpc:
            raise InputError("rpc=[] names no endpoint; give one URL or several")
        if network is not None:
            raise InputError("say where to read from with rpc=... or network=..., not both")
        return [endpoint_of(one, None, None) for one in rpc]
    if rpc is not None and not isinstance(rpc, str | Endpoint):
        raise InputError(f"rpc must be a URL, an Endpoint or a list of them; got {type(rpc).__name__}")
    return [endpoint_of(rpc, network, key)]
