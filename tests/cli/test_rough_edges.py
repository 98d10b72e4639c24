"""Issue 28.3 and 28.5 through the real command: usage errors in one line, --network's key named as the CLI knows
it, a ws:// run's summary showing ws://, a full disk naming the file and folder, one rolling report per --follow, a
progress bar counting blocks, foreign files listed by info and left out of open_duckdb, demo --help in plain text."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import chainframe
from chainframe.cli import main
from chainframe.devnet import Devnet


def _cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "chainframe.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)  # fmt: skip


@pytest.mark.parametrize(
    ("args", "missing"),
    [(["--blocks", "0:3", "--rpc", "http://h"], "--out"), (["--out", "x", "--rpc", "http://h"], "--blocks"),
     (["--blocks", "0:3", "--out", "x"], "--rpc")],
)  # fmt: skip
def test_a_missing_option_is_one_line_and_a_pointer_to_help(args: list[str], missing: str) -> None:
    done = _cli("extract", "blocks", *args)
    assert done.returncode == 2
    first, second = done.stderr.strip().splitlines()  # not 18 lines of usage first
    assert first.startswith("error: ")
    assert missing in first
    assert second == "see 'chainframe extract --help'"


def test_network_without_a_key_names_the_variable(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "INFURA_API_KEY"}
    done = _cli("extract", "blocks", "--blocks", "0:3", "--network", "mainnet", "--out", str(tmp_path), env=env)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: --network mainnet needs an API key: set the INFURA_API_KEY environment variable (or use --rpc)"
    )


def test_a_websocket_run_says_ws_in_its_summary(devnet: Devnet, tmp_path: Path) -> None:
    done = _cli(
        "extract", "blocks", "--blocks", "0:20", "--rpc", devnet.ws_url, "--out", str(tmp_path), "--no-progress"
    )
    assert done.returncode == 0, done.stderr
    assert " via ws://127.0.0.1:" in done.stdout
    assert "/ws/v3/<redacted>" in done.stdout
    assert devnet.key not in done.stdout
    report = json.loads(next((tmp_path / ".chainframe" / "runs").glob("*.json")).read_text())
    assert report["endpoint"].startswith("ws://")


def test_a_full_disk_names_the_file_and_folder(devnet: Devnet, tmp_path: Path) -> None:
    small = tmp_path / "small"
    small.mkdir()
    mounted = subprocess.run(
        [shutil.which("mount") or "/bin/mount", "-t", "tmpfs", "-o", "size=40k", "tmpfs", str(small)],
        capture_output=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        done = _cli("extract", "blocks", "transactions", "receipts", "logs", "--blocks", "0:latest", "--rpc",
                    devnet.http_url, "--out", str(small / "data"), "--no-progress")  # fmt: skip
    finally:
        subprocess.run([shutil.which("umount") or "/bin/umount", str(small)], check=True)
    assert done.returncode == 1
    line = done.stderr.strip()
    assert line.startswith("error: no space left on device writing "), line
    assert f" in {small / 'data'}/" in line, line
    assert ".parquet in " in line, line
    assert line.endswith(": free space there or use another --out")


def test_a_full_disk_at_the_write_call_names_the_file_and_folder(
    devnet: Devnet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def full(self: object, *args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")  # what pyarrow raises: no file name

    monkeypatch.setattr(pq.ParquetWriter, "write_table", full)
    code = main(["extract", "blocks", "--blocks", "0:9", "--rpc", devnet.http_url, "--out", str(tmp_path / "d"),
                 "--no-progress"])  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert code == 1
    assert err == (
        "error: no space left on device writing blocks__31337__0000000000_to_0000000999.parquet in "
        f"{tmp_path / 'd' / 'blocks'}: free space there or use another --out"
    )


def test_follow_keeps_one_rolling_report(devnet: Devnet, tmp_path: Path) -> None:
    chainframe.follow(["blocks", "logs"], blocks="0:", out=tmp_path, rpc=devnet.http_url, poll=0.05, rounds=4)
    reports = list((tmp_path / ".chainframe" / "runs").iterdir())
    assert len(reports) == 1
    assert reports[0].name.startswith("follow-")
    assert json.loads(reports[0].read_text())["datasets"].keys() == {"blocks", "logs"}


def test_the_progress_bar_counts_blocks_once(
    devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chainframe.extract(["blocks", "transactions", "receipts", "logs"], blocks="0:240", out=tmp_path,
                       rpc=devnet.http_url, progress=True)  # fmt: skip
    bar = capsys.readouterr().err.replace("\r", "\n")
    assert "| 241/241 [" in bar, bar[-500:]  # blocks, each once
    assert "block/s" in bar
    assert "/964" not in bar  # 241 blocks x 4 datasets


def test_foreign_files_are_listed_by_info_and_left_out_of_duckdb(devnet: Devnet, tmp_path: Path) -> None:
    chainframe.extract(["blocks"], blocks="0:50", out=tmp_path, rpc=devnet.http_url, progress=False)
    pq.write_table(pa.table({"x": [1, 2]}), tmp_path / "blocks" / "mine.parquet")
    (tmp_path / "blocks" / "notes.txt").write_text("mine")
    pq.write_table(pa.table({"x": [1]}), tmp_path / "summary.parquet")
    done = _cli("info", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "mine.parquet" in done.stdout
    tail = done.stdout.split("not chainframe's")[1]
    assert "  blocks/notes.txt\n" in tail
    assert "  summary.parquet\n" in tail
    listed = json.loads(_cli("info", str(tmp_path), "--json").stdout)[".other_files"]
    assert listed == ["blocks/notes.txt", "summary.parquet"]
    with pytest.warns(UserWarning, match=r"left out of view 'blocks', not chunks of it: mine\.parquet"):
        con = chainframe.open_duckdb(tmp_path)
    assert con.execute("select count(*) from blocks").fetchone() == (51,)  # not 53: mine.parquet's rows


def test_demo_help_is_plain_text() -> None:
    done = _cli("demo", "--help")
    assert done.returncode == 0
    assert "``" not in done.stdout
    assert ":func:" not in done.stdout
    assert "./data" in done.stdout
