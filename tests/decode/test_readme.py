"""The guide's "Decoding events" example (docs/datasets-and-decoding.md) runs as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_readme_decoding_example_runs(tmp_path: Path) -> None:
    readme = (ROOT / "docs" / "datasets-and-decoding.md").read_text()
    section = readme.split("## Decoding events", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "decimal[38,18]" in done.stdout
    assert "payload_bytes" in done.stdout
    assert "0x90f79bf6eb2c4f870365e785982e1f101e93b906" in done.stdout
