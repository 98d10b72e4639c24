"""chainframe: typed, query-ready Parquet datasets from an EVM chain's JSON-RPC service.

The public surface is what ``__all__`` lists (pinned by ``tests/test_public_api.py``). The local devnet lives in
:mod:`chainframe.devnet`.
"""

from chainframe._errors import ChainframeError, InputError
from chainframe._version import __version__

__all__ = ["ChainframeError", "InputError", "__version__"]
