"""A URL that cannot work fails at once, in words that say what to fix (issue 28.3): an unresolvable host, and TLS
spoken to a plain-http port, over real sockets, through the command and the API."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from aiohttp import web

from chainframe import extract
from chainframe.rpc import WrongURL
from tests.threaded_server import serve_in_thread

HOST_NOT_FOUND = "host not found: check the URL"
PLAIN_HTTP = "TLS handshake failed: the port may speak plain http; try http://"


async def _plain(request: web.Request) -> web.Response:
    return web.json_response({"jsonrpc": "2.0", "id": 1, "result": "0x1"})


def _cli(tmp_path: Path, url: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "chainframe.cli", "extract", "blocks", "--blocks", "0:3", "--rpc", url,
         "--out", str(tmp_path / "out"), "--no-progress"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return done, time.monotonic() - started


def test_an_unknown_host_fails_at_once_saying_so(tmp_path: Path) -> None:
    done, seconds = _cli(tmp_path, "http://no-such-node.invalid:8545")
    assert done.returncode == 1
    assert done.stderr.strip() == f"error: eth_chainId via http://no-such-node.invalid:8545: {HOST_NOT_FOUND}"
    assert seconds < 5  # the interpreter's start included; not retried for ~9 s (and no 'retrying' line above)

    started = time.monotonic()
    with pytest.raises(WrongURL, match=HOST_NOT_FOUND):
        extract("blocks", blocks="0:3", out=tmp_path / "py", rpc="https://no-such-node.invalid/v3/KEY", progress=False)
    assert time.monotonic() - started < 1


def test_https_against_a_plain_http_port_says_try_http(tmp_path: Path) -> None:
    with serve_in_thread([("/", _plain)]) as port:
        done, seconds = _cli(tmp_path, f"https://127.0.0.1:{port}/")
        assert done.returncode == 1
        assert done.stderr.strip() == f"error: eth_chainId via https://127.0.0.1:{port}/: {PLAIN_HTTP}"
        assert seconds < 5

        started = time.monotonic()
        with pytest.raises(WrongURL, match="try http://"):
            extract("blocks", blocks="0:3", out=tmp_path / "py", rpc=f"https://127.0.0.1:{port}/", progress=False)
        assert time.monotonic() - started < 1
        with pytest.raises(WrongURL, match="the port may speak plain ws; try ws://"):
            extract("blocks", blocks="0:3", out=tmp_path / "ws", rpc=f"wss://127.0.0.1:{port}/", progress=False)
