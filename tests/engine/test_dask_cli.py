"""``chainframe extract --workers N`` / ``--scheduler ADDR`` as a user runs it: the real command, in its own process,
with two endpoints read from a file (so no key is on the command line)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from chainframe.cli import main
from chainframe.devnet import Devnet
from chainframe.store import load_series


@pytest.mark.slow
def test_extract_on_two_local_workers_from_the_command_line(devnet: Devnet, tmp_path: Path) -> None:
    urls = tmp_path / "rpc.txt"
    urls.write_text(f"{devnet.http_url}\n{devnet.http_url}\n")  # two endpoints (the same key twice here)
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "chainframe.cli", "extract", "blocks", "logs", "--blocks", "0:latest", "--out", str(out),
         "--rpc-file", str(urls), "--workers", "2", "--chunk-size", "50", "--no-progress"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"{devnet.truth.log_count:,} rows" in done.stdout
    assert devnet.key not in done.stdout + done.stderr
    assert load_series(out / "logs").chunks  # written by the workers, under the slots' names
    assert sum(c.meta.rows for c in load_series(out / "logs").chunks) == devnet.truth.log_count


def test_bad_distributed_flags_are_one_clean_error(
    devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["extract", "blocks", "--blocks", "0:9", "--rpc", devnet.http_url, "--out", str(tmp_path)]
    assert main([*base, "--workers", "0"]) == 2
    assert "--workers must be at least 1" in capsys.readouterr().err
    assert main([*base, "--scheduler", "nowhere"]) == 2
    assert "not a Dask scheduler address" in capsys.readouterr().err
    # The no-progress bound, from the environment as Dask reads it (at import: so in a process of its own).
    wrong = subprocess.run(
        [sys.executable, "-m", "chainframe.cli", *base, "--workers", "1"], capture_output=True, text=True,
        timeout=60, check=False, env={**os.environ, "DASK_CHAINFRAME__NO_PROGRESS_TIMEOUT": "soon"},
    )  # fmt: skip
    assert wrong.returncode == 2, wrong.stderr
    assert "error: Dask config chainframe.no-progress-timeout" in wrong.stderr
    assert "'soon'" in wrong.stderr
    with pytest.raises(SystemExit):
        main([*base, "--workers", "2", "--scheduler", "tcp://127.0.0.1:8786"])
    assert "not allowed with argument" in capsys.readouterr().err
    assert devnet.gateway is not None
    assert devnet.gateway.stats()["http_requests"] == 0
