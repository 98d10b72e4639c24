"""One exception root (issue 38): every exception class chainframe defines derives from
:class:`chainframe.ChainframeError`, but for signals caught where they are raised, which no caller ever sees."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import chainframe

SRC = Path(chainframe.__file__).parent
SIGNALS = {
    "chainframe.rpc._transports.http._Stale": "a reused connection closed before answering: caught there, a new one "
    "is tried",
    "chainframe.engine._joint.Unproven": "a group proved nothing: caught by the engine (except*), which fetches the "
    "chunk again and proves it piece by piece",
}


def _exception_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        module = ".".join(["chainframe", *(parts[:-1] if parts[-1] == "__init__" else parts)])
        classes = [n.name for n in ast.parse(path.read_text(encoding="utf-8")).body if isinstance(n, ast.ClassDef)]
        if not classes:
            continue
        loaded = importlib.import_module(module)
        for name in classes:
            cls = getattr(loaded, name)
            if isinstance(cls, type) and issubclass(cls, BaseException):
                found[f"{module}.{name}"] = cls
    return found


def test_every_error_derives_from_the_root() -> None:
    classes = _exception_classes()
    assert len(classes) >= 25, sorted(classes)  # the RPC tree, the store's, the engine's, decode's, the devnet's
    strays = sorted(n for n, c in classes.items() if not issubclass(c, chainframe.ChainframeError) and n not in SIGNALS)
    assert not strays, f"derive these from chainframe.ChainframeError: {strays}"
    assert set(SIGNALS) <= set(classes)


def test_the_devnet_error_is_still_a_runtime_error() -> None:
    from chainframe.devnet import DevnetError

    assert issubclass(DevnetError, chainframe.ChainframeError)
    assert issubclass(DevnetError, RuntimeError)
