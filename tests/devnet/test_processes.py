"""Nodes and gateway are real processes that never outlive their owner."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from chainframe.devnet import Devnet
from tests.devnet.rpc import call


def _gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except FileNotFoundError:
            return True
        if "State:\tZ" in status:
            return True
        time.sleep(0.05)
    return False


def test_stop_leaves_no_process() -> None:
    devnet = Devnet()
    assert devnet.gateway is not None
    pids = [devnet.gateway.pid, devnet.node.pid]
    assert httpx.post(devnet.http_url, json=call("eth_chainId")).status_code == 200
    devnet.stop()
    assert all(_gone(pid) for pid in pids)


def test_killed_owner_takes_its_children_along() -> None:
    script = (
        "import sys, time\n"
        "from chainframe.devnet import Devnet\n"
        "d = Devnet()\n"
        "print(d.gateway.pid, d.node.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) as owner:
        assert owner.stdout is not None
        pids = [int(p) for p in owner.stdout.readline().split()]
        assert len(pids) == 2
        assert all(not _gone(pid, 0.1) for pid in pids)
        owner.send_signal(signal.SIGKILL)  # no cleanup code runs
    assert all(_gone(pid) for pid in pids)


def test_devnet_command_serves_until_ctrl_c(tmp_path: Path) -> None:
    with subprocess.Popen(
        [sys.executable, "-m", "chainframe.cli", "devnet", "--key", "k" * 32],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    ) as proc:
        assert proc.stdout is not None
        lines = {}
        for line in proc.stdout:
            label, _, value = line.partition(":")
            lines[label.strip()] = value.strip()
            if line.startswith("Ctrl-C"):
                break
        assert lines["API key"] == "k" * 32
        assert lines["Node"].startswith("http://127.0.0.1:")  # anvil itself
        assert lines["Contract"].split()[0] == "Token"  # the last of the sorted contract lines
        assert lines["WebSocket"].endswith("/ws/v3/" + "k" * 32)
        answer = httpx.post(lines["HTTP"], json=call("eth_chainId")).json()
        assert answer["result"] == "0x7a69"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 130
    with pytest.raises(httpx.ConnectError):  # the gateway is gone
        httpx.post(lines["HTTP"], json=call("eth_chainId"), timeout=2)


def test_a_child_that_exits_or_never_gets_ready_says_which() -> None:
    from chainframe.devnet import DevnetError
    from chainframe.devnet._process import Child

    def never(line: str) -> None:
        return None

    with pytest.raises(DevnetError, match=r"quitter exited with code 3; its last output:\nbye"):
        Child("quitter", [sys.executable, "-c", "print('bye'); raise SystemExit(3)"], ready=never, timeout=30)
    started = time.monotonic()
    with pytest.raises(DevnetError, match=r"sleeper was not ready within 1 s; its last output:\nhello"):
        Child("sleeper", [sys.executable, "-c", "print('hello', flush=True); import time; time.sleep(60)"],
              ready=never, timeout=1)  # fmt: skip
    assert time.monotonic() - started < 10  # the sleeper was stopped, not waited for
