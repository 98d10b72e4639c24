"""chainframe: typed, query-ready Parquet datasets from an EVM chain's JSON-RPC service.

The public surface is what ``__all__`` lists (pinned by ``tests/test_public_api.py``): the extraction API here;
the client in :mod:`chainframe.rpc`, datasets in :mod:`chainframe.datasets`, the local devnet in
:mod:`chainframe.devnet`.
"""

from chainframe._errors import ChainframeError, InputError
from chainframe._version import __version__
from chainframe.engine import (
    RunReport,
    acollect,
    aextract,
    afollow,
    arepair,
    collect,
    extract,
    follow,
    open_duckdb,
    repair,
    scan,
    series_folder,
)
from chainframe.events import decode_events

__all__ = [
    "ChainframeError",
    "InputError",
    "RunReport",
    "__version__",
    "acollect",
    "aextract",
    "afollow",
    "arepair",
    "collect",
    "decode_events",
    "extract",
    "follow",
    "open_duckdb",
    "repair",
    "scan",
    "series_folder",
]
