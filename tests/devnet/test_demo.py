"""The README's first command ends in `chainframe demo`; it must work and never print the key."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path


def test_demo_runs_and_redacts_the_key(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "chainframe.cli", "demo", "--out", str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "/v3/<redacted>" in done.stdout
    assert not re.search(r"/v3/[0-9a-f]{32}", done.stdout + done.stderr)
    assert '"number": "0xf0"' in done.stdout
