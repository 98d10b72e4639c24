"""chainframe: typed, query-ready Parquet datasets from an EVM chain's JSON-RPC service.

The public surface is what ``__all__`` lists (pinned by ``tests/test_public_api.py``): the extraction API and the
event decoders here (more in :mod:`chainframe.decode`); the client in :mod:`chainframe.rpc`, datasets in
:mod:`chainframe.datasets`, the local devnet in :mod:`chainframe.devnet`.
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING

from chainframe._errors import ChainframeError, InputError
from chainframe._version import __version__

if _TYPE_CHECKING:
    from chainframe.decode import decode_event, decode_events, erc20_transfers, erc721_transfers, erc1155_transfers
    from chainframe.engine import (
        RunReport,
        acollect,
        aextract,
        afollow,
        aprobe,
        arepair,
        collect,
        extract,
        follow,
        open_duckdb,
        probe,
        repair,
        scan,
        series_folder,
        vacuum,
    )

__all__ = [
    "ChainframeError",
    "InputError",
    "RunReport",
    "__version__",
    "acollect",
    "aextract",
    "afollow",
    "aprobe",
    "arepair",
    "collect",
    "decode_event",
    "decode_events",
    "erc1155_transfers",
    "erc20_transfers",
    "erc721_transfers",
    "extract",
    "follow",
    "open_duckdb",
    "probe",
    "repair",
    "scan",
    "series_folder",
    "vacuum",
]


_SUBPACKAGES = frozenset({"datasets", "decode", "devnet", "engine", "rpc", "store", "verify"})
_DECODE = frozenset({"decode_event", "decode_events", "erc20_transfers", "erc721_transfers", "erc1155_transfers"})


def __getattr__(name: str) -> object:
    # Loaded on first use: `import chainframe` (which the CLI's import implies) loads neither pyarrow nor numpy, so
    # the CLI can set up its process first; the event decoder (pycryptodome) loads only when asked for.
    if name in _DECODE or name == "decode":
        decode = _importlib.import_module("chainframe.decode")  # sets chainframe.decode: no second call for it
        return decode if name == "decode" else getattr(decode, name)
    if name in __all__ or name == "engine":
        engine = _importlib.import_module("chainframe.engine")  # sets chainframe.engine
        if name == "engine":
            return engine
        value = getattr(engine, name)
        globals()[name] = value  # found directly from now on
        return value
    if name in _SUBPACKAGES:  # chainframe.rpc.<TAB> works without an import statement first
        return _importlib.import_module(f"chainframe.{name}")
    raise AttributeError(f"module 'chainframe' has no attribute {name!r}")


def __dir__() -> list[str]:
    # What tab completion offers (``chainframe.<TAB>``): the public names, loaded or not, and the subpackages;
    # listing them imports nothing.
    return sorted({*__all__, *_SUBPACKAGES})
