"""One clean error: Python callers get the typed chainframe error itself (never an exception group); bad input is
refused before any request with a message that says what to fix; the CLI prints one line, never a traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from chainframe import InputError, collect, extract
from chainframe._errors import first_error
from chainframe.devnet import Devnet, FaultRule, GatewaySettings
from chainframe.rpc import KeyRefused, RetryPolicy, ServiceUnavailable
from chainframe.store import read_meta

NOWHERE = "http://127.0.0.1:1"  # nothing listens there: a request would fail with a connection error instead


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"chunk_size": 2.5}, "chunk_size must be a whole number"),
        ({"chunk_size": 0}, "chunk_size must be a whole number, at least 1"),
        ({"concurrency": "4"}, "concurrency must be a whole number"),
        ({"client_options": {"retires": 3}}, "client_options does not take retires"),
        ({"out": "/proc/chainframe-out"}, "is not writable"),
    ],
)
def test_bad_input_is_refused_before_any_request(tmp_path: Path, options: dict[str, Any], message: str) -> None:
    arguments: dict[str, Any] = {"blocks": "0:10", "out": tmp_path / "out", "rpc": NOWHERE, **options}
    with pytest.raises(InputError, match=message):
        extract("blocks", **arguments)
    assert not (tmp_path / "out").exists()


def test_an_output_folder_under_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is a file"):
        extract("blocks", blocks="0:10", out=tmp_path / "file" / "out", rpc=NOWHERE)


def test_collect_refuses_unknown_client_options() -> None:
    with pytest.raises(InputError, match="client_options does not take"):
        collect("blocks", blocks="0:10", rpc=NOWHERE, client_options={"nope": 1})


def test_an_error_inside_the_run_reaches_python_as_itself(devnet: Devnet, tmp_path: Path) -> None:
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(faults=(FaultRule(kind="http_5xx", methods=("eth_getLogs",)),)))
    with pytest.raises(ServiceUnavailable) as caught:
        extract("logs", blocks="0:60", out=tmp_path, rpc=devnet.http_url, chunk_size=20,
                client_options={"retry": RetryPolicy(attempts=2)})  # fmt: skip
    assert not isinstance(caught.value, BaseExceptionGroup)
    assert caught.value.method == "eth_getLogs"


def test_first_error_prefers_ours_and_counts_the_rest() -> None:
    ours = KeyRefused("invalid project id")
    group = BaseExceptionGroup("tasks", [RuntimeError("x"), ExceptionGroup("inner", [ours, ValueError("y")])])
    assert first_error(group) is ours
    assert ours.__notes__ == ["(2 more errors in other tasks of the same run)"]
    plain = ValueError("plain")
    assert first_error(plain) is plain


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chainframe.cli", *args], capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip


def test_the_cli_prints_one_error_line_for_a_refused_key(devnet: Devnet, tmp_path: Path) -> None:
    url = devnet.http_url.replace(devnet.key, "0" * 32)
    run = _cli("extract", "blocks", "--blocks", "0:10", "--rpc", url, "--out", str(tmp_path), "--no-progress")
    assert run.returncode == 1
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in run.stderr
    assert "0" * 32 not in run.stderr


def test_the_cli_prints_one_error_line_for_a_failure_mid_run(devnet: Devnet, tmp_path: Path) -> None:
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(faults=(FaultRule(kind="http_402", methods=("eth_getLogs",)),)))
    run = _cli("extract", "logs", "--blocks", "0:60", "--rpc", devnet.http_url, "--out", str(tmp_path),
               "--chunk-size", "20", "--no-progress")  # fmt: skip
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert "eth_getLogs" in run.stderr


def test_the_cli_refuses_an_unwritable_folder_before_any_request(tmp_path: Path) -> None:
    run = _cli("extract", "blocks", "--blocks", "0:10", "--rpc", NOWHERE, "--out", "/proc/chainframe-out")
    assert run.returncode == 2
    assert run.stderr.startswith("error: out=/proc/chainframe-out is not writable")


def _slow_extraction(devnet: Devnet, out: Path) -> subprocess.Popen[str]:
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(latency=0.05))
    argv = [
        sys.executable,
        "-m",
        "chainframe.cli",
        "extract",
        "receipts",
        "logs",
        "--blocks",
        "0:latest",
        "--rpc",
        devnet.http_url,
        "--out",
        str(out),
        "--chunk-size",
        "20",
        "--concurrency",
        "1",
        "--no-progress",
    ]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_stops_an_extraction_within_a_second(devnet: Devnet, tmp_path: Path, presses: int) -> None:
    with _slow_extraction(devnet, tmp_path) as run:
        deadline = time.monotonic() + 30
        while not list(tmp_path.rglob("*.parquet")) and time.monotonic() < deadline:
            time.sleep(0.02)
        for _ in range(presses):
            run.send_signal(signal.SIGINT)
            time.sleep(0.02)
        pressed = time.monotonic()
        _, err = run.communicate(timeout=30)
    assert time.monotonic() - pressed < 1.5
    assert "Traceback" not in err
    if presses == 1:
        assert run.returncode == 130
        assert "interrupted; everything started was stopped" in err
    else:  # stopped at once by our handler, or the first press had already stopped it and Python was exiting
        assert run.returncode in (130, -signal.SIGINT)
    files = list(tmp_path.rglob("*.parquet"))
    assert files
    assert all(read_meta(path) is not None for path in files)  # whatever a glob reads is a whole chunk
    if presses == 1:
        assert not list(tmp_path.rglob(".*.tmp-*"))  # the run cleaned up; after a second press the next run does


def test_four_processes_sharing_one_key_under_a_credit_limit_all_finish(devnet: Devnet, tmp_path: Path) -> None:
    """Rate limits are waited out within their own time budget, not the error attempts, so none gives up."""
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(credits_per_second=6000.0))

    def argv(out: Path) -> list[str]:
        return [sys.executable, "-m", "chainframe.cli", "extract", "blocks", "logs", "--blocks", "0:89", "--rpc",
                devnet.http_url, "--out", str(out), "--chunk-size", "30", "--no-progress"]  # fmt: skip

    runs = [subprocess.Popen(argv(tmp_path / str(i)), stderr=subprocess.PIPE, text=True) for i in range(4)]
    errors = [run.communicate(timeout=240)[1] for run in runs]
    assert [run.returncode for run in runs] == [0, 0, 0, 0], errors
    assert devnet.gateway.stats()["rate_limited"] > 0  # the key really was over its limit
    assert {len(list((tmp_path / str(i) / "logs").glob("*.parquet"))) for i in range(4)} == {3}


def test_a_misspelled_keyword_is_named_as_such(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"unknown option 'progres'; did you mean 'progress'\?"):
        extract("blocks", blocks="0:10", out=tmp_path, rpc=NOWHERE, progres=False)
    with pytest.raises(InputError, match="dataset 'blocks' takes no filters; got address"):
        extract("blocks", blocks="0:10", out=tmp_path, rpc=NOWHERE, address="0x" + "11" * 20)
