"""The example script and the notebook's code run as shipped."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_quickstart_example_runs() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Transfer logs in blocks 0..99" in done.stdout
    assert "transaction_type" in done.stdout


def test_notebook_cells_run_in_order(tmp_path: Path) -> None:
    notebook = json.loads((ROOT / "notebooks" / "quickstart.ipynb").read_text())
    code = "\n\n".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code")
    # A notebook runs its cells while an event loop is running; do the same.
    script = "import asyncio\n\nasync def cell():\n" + "\n".join("    " + line for line in code.splitlines())
    script += "\n\nasyncio.run(cell())\n"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=tmp_path, check=False
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "data" / "logs").is_dir()
