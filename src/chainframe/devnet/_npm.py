"""Where the pinned npm packages of the devnet's nodes are, and a free loopback port for the nodes that cannot take
port 0 (Hardhat prints the port it was given, Ganache refuses 0)."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

from chainframe.devnet._errors import DevnetError


def find_in_node_modules(relative: Path, *, env: str, hint: str) -> Path:
    """``$env`` if set, else ``node_modules/<relative>`` above the working dir or this package."""
    explicit = os.environ.get(env)
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise DevnetError(f"{env} points at {path}, which is not a file; {hint}")
        return path
    relative = Path("node_modules") / relative
    for start in (Path.cwd(), Path(__file__).resolve()):
        for folder in (start, *start.parents):
            candidate = folder / relative
            if candidate.is_file():
                return candidate
    raise DevnetError(f"{relative} was not found; {hint}")


def node_binary() -> str:
    """The ``node`` that runs the JavaScript nodes (npm needs it too, so scripts/setup has checked it is there)."""
    found = shutil.which("node")
    if found is None:
        raise DevnetError("Hardhat and Ganache run on Node.js, and `node` is not on PATH; install Node.js >= 20")
    return found


def free_port() -> int:
    """A loopback port nobody listens on now. Another process may take it before the node does: callers retry."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port
