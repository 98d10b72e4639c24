"""keccak-256, the hash Ethereum names events with (``hashlib.sha3_256`` is the NIST variant and gives other bytes).

The C keccak of :mod:`chainframe.verify._native` where it is built (and ``CHAINFRAME_NATIVE`` is not 0), loaded as a
leaf: importing it by name would first import the ``chainframe.verify`` package (about 0.2 CPU-s), and pycryptodome's
keccak, the fallback, costs 50-170 ms to import (cffi parses its C declarations). The module is registered under its
own name, so ``chainframe.verify`` later finds this same module rather than loading it twice.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

_NATIVE = "chainframe.verify._native"


def _native() -> ModuleType | None:
    """The compiled module, loaded without its package (None where it is not built or not wanted)."""
    if os.environ.get("CHAINFRAME_NATIVE", "1") == "0":
        return None
    if _NATIVE in sys.modules:
        return sys.modules[_NATIVE]
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = Path(__file__).parent / "verify" / f"_native{suffix}"
        spec = importlib.util.spec_from_file_location(_NATIVE, path) if path.is_file() else None
        if spec is None or spec.loader is None:
            continue
        try:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        except ImportError:  # built for another interpreter: the fallback serves
            return None
        sys.modules[_NATIVE] = module
        return module
    return None


def _pycryptodome(data: bytes) -> bytes:
    from Crypto.Hash import keccak

    return keccak.new(digest_bits=256, data=data).digest()


_built = _native()
keccak256: Callable[[bytes], bytes] = _built.keccak256 if _built is not None else _pycryptodome
"""The 32-byte keccak-256 digest of ``data``."""
