"""The key never appears in output, logs (ours or our libraries'), exceptions, files or metadata, whatever the URL
form: extractions through a real proxy that receives the key in each form, with logging at DEBUG."""

from __future__ import annotations

import base64
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chainframe import extract
from chainframe.devnet import Devnet
from chainframe.rpc import RetryPolicy, ServiceUnavailable
from tests.engine.hostile import Hostile

SENTINEL = "SentinelKey0123456789abcdefXYZ42"


def forms(base: str) -> dict[str, str]:
    host = base.removeprefix("http://").rstrip("/")
    return {
        "infura path": f"{base}v3/{SENTINEL}",
        "alchemy path": f"{base}v2/{SENTINEL}",
        "token segment": f"{base}{SENTINEL}/",
        "apikey query": f"{base}rpc?apikey={SENTINEL}",
        "key query": f"{base}rpc?chain=1&key={SENTINEL}",
        "basic auth": f"http://user:{SENTINEL}@{host}/rpc",
    }


def _everything_under(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


@pytest.mark.parametrize("form", sorted(forms("http://h/")))
def test_the_key_is_never_shown_logged_raised_or_written(
    devnet: Devnet, tmp_path: Path, form: str, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    with Hostile(devnet.node.url) as proxy:
        url = forms(proxy.url)[form]
        report = extract(["blocks", "logs"], blocks="0:30", out=tmp_path / "py", rpc=url, progress=False)
        print(report.summary())
        seen = "\n".join(proxy.seen)
        basic = base64.b64encode(f"user:{SENTINEL}".encode()).decode()
        assert SENTINEL in seen or basic in seen  # the key really travelled, in this form
        cli = subprocess.run(
            [sys.executable, "-m", "chainframe.cli", "extract", "blocks", "--blocks", "0:30", "--rpc-env", "RPC_URL",
             "--out", str(tmp_path / "cli"), "--no-progress"],
            capture_output=True, text=True, timeout=120, env={**os.environ, "RPC_URL": url},
        )  # fmt: skip
        assert cli.returncode == 0, cli.stderr
    with Hostile(devnet.node.url, status=503) as failing, pytest.raises(ServiceUnavailable) as caught:
        extract("blocks", blocks="0:30", out=tmp_path / "err", rpc=forms(failing.url)[form], progress=False,
                client_options={"retry": RetryPolicy(attempts=1)})  # fmt: skip
    out = capsys.readouterr()
    texts = {
        "log records": "\n".join(f"{r.name} {r.getMessage()}" for r in caplog.records),
        "stdout": out.out + cli.stdout,
        "stderr": out.err + cli.stderr,
        "error": f"{caught.value!s} {caught.value!r} {caught.value.endpoint}",
    }
    assert any("http" in r.name for r in caplog.records)  # httpx did log its requests
    for where, text in texts.items():
        assert SENTINEL not in text, where
    assert SENTINEL.encode() not in _everything_under(tmp_path), "files"
    assert SENTINEL not in " ".join(cli.args)  # --rpc-env: the key is not on the command line (nor in ps)
