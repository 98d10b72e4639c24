"""keccak-256 and the RLP encoding of the values a header or bloom needs.

Both in C where ``_native.c`` is built (and ``CHAINFRAME_NATIVE`` is not 0): proving a chunk makes millions of RLP
calls and hundreds of thousands of hashes, and Python's call overhead was most of their cost. The pure-Python code
(:mod:`chainframe._rlp`) is the reference the native one is tested against, and what runs where nothing compiled.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from chainframe._keccak import keccak256
from chainframe._rlp import RlpItem as RlpItem  # the verify modules' one import of RLP
from chainframe._rlp import python_rlp as python_rlp
from chainframe._rlp import uint as uint

try:
    from chainframe.verify import _native as _built  # type: ignore[attr-defined]
except ImportError:  # not built (no C compiler at install time): the Python code serves
    _built = None

NATIVE: Any = None if os.environ.get("CHAINFRAME_NATIVE", "1") == "0" else _built
"""The compiled module (``keccak256``, ``rlp``, ``ordered_root``, ``receipts_roots``, ``blooms``,
``transactions_encoded``), or None."""

keccak: Callable[[bytes], bytes] = NATIVE.keccak256 if NATIVE is not None else keccak256
rlp: Callable[[RlpItem], bytes] = NATIVE.rlp if NATIVE is not None else python_rlp
