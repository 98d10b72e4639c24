"""Every command the README, its guide pages and the ``--help`` examples print runs as written, against the devnet.

The commands are read from the README and then each page of its guide in ``docs/``, in the README's order (their
``sh`` blocks, ``$ `` lines of their ``text`` blocks, and inline `` `chainframe ...` `` with arguments) and from each
subcommand's help epilog, then run in order through a shell in one working folder, as a reader would paste them.
Where a command names a real provider or a placeholder, the table below says what stands in for it on the devnet;
everything else (datasets, flags, ranges) is run as printed. A command that runs until stopped (``--follow``,
``devnet``) is stopped as its help says once it has shown it works.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chainframe.cli import build_parser, main
from chainframe.devnet import Devnet

ROOT = Path(__file__).resolve().parents[2]
# The pages of docs/ the README links to that are not its guide: their commands are checked elsewhere.
NOT_GUIDE = {
    "docs/datasets.md": "the column reference `chainframe schema --markdown` writes (tests/cli/test_schema.py)",
    "docs/service-spec.md": "the service spec the gateway implements, not how to use chainframe",
}
# What stands in for a real provider or a placeholder on the devnet ({...}: filled from the running devnet).
STAND_INS = {
    "--network mainnet": "--rpc {http}",  # Infura; the gateway answers as Infura does
    "--network base-mainnet": "--rpc {http}",
    "https://host/v3/KEY": "{http}",
    "--rpc URL": "--rpc {http}",
    "http://127.0.0.1:8545": "{node}",  # a local node: the devnet's anvil itself
    "--blocks 18M:+10k": "--blocks 0:+100",  # mainnet block numbers, beyond the devnet's 240 blocks
    "0xA0b8...": "{token}",  # shortened addresses and topics in the README's prose
    "0xddf2...": "{transfer}",
    "TOKEN": "{token}",
    "DIR": "data",
    ".venv/bin/chainframe": "chainframe",
    "--abi-dir abis": "--abi-dir {abis}",  # an ABI folder: the repository's, for the devnet's contracts
}
# A command run in place of the documented one, so what follows finds what it leaves (./data for the demo).
IN_PLACE_OF = {
    # tests/devnet/test_demo.py runs the demo itself; this is its own extraction, the first line it prints.
    "./scripts/demo": "chainframe extract blocks transactions receipts logs --blocks 0:latest --out data --rpc {http}",
}
NOT_RUN = {
    "source .venv/bin/activate": "puts .venv/bin on the PATH, as this test does for every command it runs",
    "./scripts/test": "the test suite itself",
    "export AWS_": "the bucket example's credentials and endpoint",
    "s3://": "tests/store/test_s3.py runs extract and info on a bucket of a moto server",
    "--scheduler tcp://": "a cluster elsewhere; tests/engine/test_dask.py runs extract on a running cluster's client",
}
# Commands that fail as written, for a reason outside the CLI: each is expected to fail (so this list cannot go stale).
KNOWN_BROKEN: dict[str, tuple[str, str]] = {}
"""Documented commands known to fail (prefix -> (text their output shows, why)): the test fails once they run."""
# None now: the demo's whole chain is in ./data before any filtered or decoded series, so `verify` proves every series
# offline and exits 0 (exit 3, a folder partly checked, is tests/verify/test_messages.py's).
EXIT_CODES: dict[str, tuple[int, str]] = {}
"""Documented commands that exit with another code than 0 as they should (command as written -> code, text shown)."""
LONG_RUNNING = {"--follow": ("head ", signal.SIGTERM), "chainframe devnet": ("Ctrl-C stops", signal.SIGINT)}


def _guide_pages() -> list[Path]:
    """The README, then every page of docs/ it links to, in the README's order (each once)."""
    readme = (ROOT / "README.md").read_text()
    linked = dict.fromkeys(re.findall(r"\]\((docs/[\w./-]+\.md)(?:#[\w-]*)?\)", readme))
    return [ROOT / "README.md"] + [ROOT / page for page in linked if page not in NOT_GUIDE]


def _readme_commands() -> list[str]:
    commands: list[str] = []
    for page in _guide_pages():
        commands += _page_commands(page.read_text())
    return commands


def _page_commands(text: str) -> list[str]:
    commands: list[str] = []
    for kind, body in re.findall(r"```(\w*)\n(.*?)```", text, flags=re.DOTALL):
        for line in body.splitlines():
            if kind == "sh" and line.strip() and not line.startswith("#"):
                commands.append(line.strip())
            elif kind == "text" and line.startswith("$ "):
                commands.append(line[2:].strip())
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    inline = re.findall(r"`(chainframe [^`\s]+ [^`]+)`", prose)  # with arguments: not a mention of the command
    commands += [c for c in inline if c != "chainframe schema --markdown"]  # shown whole in schema's help
    return commands


def _help_commands() -> list[str]:
    commands: list[str] = []
    parser = build_parser()
    sub = next(a for a in parser._actions if a.choices)  # the subcommands
    for name, command in sub.choices.items():
        lines = f"{command.description or ''}\n{command.epilog or ''}".splitlines()
        joined: list[str] = []
        for line in lines:
            if joined and joined[-1].endswith("\\"):
                joined[-1] = joined[-1][:-1].rstrip() + " " + line.strip()
            else:
                joined.append(line.strip())
        # An example may be followed by what it does, after a run of spaces.
        commands += [re.split(r" {3,}", c)[0] for c in joined if c.startswith(f"chainframe {name}")]
    return commands


def _filled(command: str, values: dict[str, str], used: set[str]) -> str:
    for placeholder, stand_in in STAND_INS.items():
        if placeholder in command:
            used.add(placeholder)
            command = command.replace(placeholder, stand_in.format(**values))
    return command


def _run(command: str, cwd: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Run one command: in this process when plain (no import cost per command), through a shell when it needs one
    (a redirection) or runs until stopped."""
    stop = next((how for marker, how in LONG_RUNNING.items() if marker in command), None)
    argv = shlex.split(command, comments=True)
    if stop is None and ">" not in argv:
        assert argv[0] == "chainframe"
        try:
            code = main(argv[1:])
        except SystemExit as exc:  # argparse refusing the command line
            code = exc.code if isinstance(exc.code, int) else 1
        captured = capsys.readouterr()
        return code, captured.out + captured.err
    bash = shutil.which("bash") or "/bin/bash"
    if stop is None:
        done = subprocess.run([bash, "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=180)
        return done.returncode, done.stdout + done.stderr
    marker, sig = stop
    child = subprocess.Popen([bash, "-c", f"exec {command}"], cwd=cwd, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)  # fmt: skip
    assert child.stdout is not None
    seen, deadline = [], time.monotonic() + 120
    for line in child.stdout:
        seen.append(line)
        if marker in line or time.monotonic() > deadline:
            break
    child.send_signal(sig)
    rest, _ = child.communicate(timeout=30)
    text = "".join(seen) + rest
    ok = marker in text and child.returncode in (0, 130)
    return (0 if ok else child.returncode or 1), text


def test_the_documents_hold_commands() -> None:
    readme, helps = _readme_commands(), _help_commands()
    assert len(readme) >= 12
    # Every guide page the README links to is read (a new page is not silently left out), and links back.
    pages = {str(p.relative_to(ROOT)) for p in _guide_pages()}
    on_disk = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")}
    assert on_disk - set(NOT_GUIDE) <= pages, f"docs pages the README does not link to: {on_disk - pages}"
    for page in pages - {"README.md"}:
        assert "](../README.md)" in (ROOT / page).read_text(), f"{page} links back to the README"
    assert len(helps) >= 12
    assert {c.split()[1] for c in helps if c.startswith("chainframe ")} >= {"extract", "call", "info", "repair"}


@pytest.mark.slow
def test_every_documented_command_runs_as_written(
    devnet: Devnet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    values = {
        "http": devnet.http_url,
        "node": devnet.node.url,
        "token": devnet.truth.contracts["Token"],
        "transfer": "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
        "abis": str(ROOT / "tests" / "data" / "abi"),
    }
    monkeypatch.delenv("INFURA_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "INFURA_API_KEY"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    (tmp_path / "docs").mkdir()  # `chainframe schema --markdown > docs/datasets.md` writes there
    used: set[str] = set()
    failures, timings, ran = [], [], 0
    for command in _readme_commands() + _help_commands():
        if any(skipped in command for skipped in NOT_RUN):
            continue
        instead = next((run for documented, run in IN_PLACE_OF.items() if command.startswith(documented)), None)
        filled = instead.format(**values) if instead else _filled(command, values, used)
        began = time.monotonic()
        code, output = _run(filled, tmp_path, env, capsys)
        timings.append(f"{time.monotonic() - began:5.1f} s  {filled}")
        ran += 1
        broken = next((why for prefix, why in KNOWN_BROKEN.items() if filled.startswith(prefix)), None)
        if broken is not None:
            if code == 0 or broken[0] not in output:
                failures.append(f"{command}\n  now runs (exit {code}): remove it from KNOWN_BROKEN\n{output[-400:]}")
            continue
        want, shown = EXIT_CODES.get(command, (0, ""))
        if code != want or shown not in output:
            failures.append(f"{command}\n  ran: {filled}\n  exit {code} (not {want}): {output.strip()[-800:]}")
    assert not failures, "\n\n".join(failures) + "\n\nall, with their times:\n" + "\n".join(timings)
    assert ran >= 24
    assert used == set(STAND_INS), f"stand-ins no document needs any more: {set(STAND_INS) - used}"
    assert (tmp_path / "docs" / "datasets.md").read_text() == (ROOT / "docs" / "datasets.md").read_text()
