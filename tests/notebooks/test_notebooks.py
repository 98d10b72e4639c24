"""Every notebook runs top to bottom in a real Jupyter kernel against the devnet, as a reader would run it: by the
command the guide names (docs/python-api.md), once for all the tests here, with its ``--inplace`` keeping the outputs.

Each runs in a temporary folder and must write nothing beside itself nor leave anything in its TMPDIR; its plots
must be real pictures (each PNG is saved, decoded and checked for size and for more than one colour); binary values
must show as ``0x`` hex, never as Python bytes; and the extraction shows a progress bar without being asked.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat", reason="the notebook extra: pip install 'chainframe[notebook]'")
nbclient = pytest.importorskip("nbclient", reason="the notebook extra: pip install 'chainframe[notebook]'")
Image = pytest.importorskip("PIL.Image", reason="matplotlib's pillow, from the notebook extra")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
# What each notebook must show: its number of figures and texts its tables must hold.
EXPECTED = {
    "quickstart": (3, ["fees_eth", "Token", "reverted", "0x"]),
    "erc20_transfers": (2, ["balance", "transfers", "0x"]),
    "decoded_contract": (2, ["dive(uint256)", "arg_depth", "trace_address", "depth + 1: 129 of 129", "0x"]),
    "typed_client_tour": (1, ["trace_address", "storage_key", "Block(", "0x"]),
}
KERNEL_START_RACE = "Kernel died before replying to kernel_info"
BYTES_REPR = re.compile(r"""\bb['"]\\x""")  # b'\x..' or b"\x..": bytes shown raw instead of as 0x hex


@dataclass(frozen=True)
class Executed:
    """The guide's command, run once on copies of the notebooks: what it did and where."""

    done: subprocess.CompletedProcess[str]
    folder: Path  # the copies, executed in place: also the kernels' working folder
    before: list[str]  # the folder's names before the run
    beside: list[str]  # the repo's notebooks folder before the run
    scratch: Path  # the kernels' TMPDIR: what the notebooks' temporary folders left behind


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Executed:
    """Run the command of docs/python-api.md, plus the ``--inplace`` it names for keeping the outputs, on copies in a
    temporary folder. The kernel is this very Python: a kernelspec named as the notebooks name theirs ("python3"),
    first on JUPYTER_PATH, so a machine's other "python3" kernel cannot stand in; IPython's profile stays out of
    $HOME."""
    readme = (ROOT / "docs" / "python-api.md").read_text()
    command = re.search(r"^\.venv/bin/(jupyter execute notebooks/\S+)$", readme, re.MULTILINE)
    assert command, "docs/python-api.md names the command that runs the notebooks"
    tmp = tmp_path_factory.mktemp("notebooks")
    beside = sorted(os.listdir(NOTEBOOKS))
    spec = tmp / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "chainframe", "language": "python"}))
    scratch = tmp / "scratch"
    env = {**os.environ, "IPYTHONDIR": str(tmp / "ipython"), "JUPYTER_PLATFORM_DIRS": "1",
           "JUPYTER_PATH": str(tmp / "jupyter"), "TMPDIR": str(scratch)}  # fmt: skip
    jupyter, execute, pattern = command.group(1).split()
    for _ in range(2):
        shutil.rmtree(tmp / "notebooks", ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir()
        shutil.copytree(NOTEBOOKS, tmp / "notebooks")
        before = sorted(os.listdir(tmp / "notebooks"))
        argv = [str(Path(sys.executable).parent / jupyter), execute, "--inplace",
                *sorted(str(p) for p in tmp.glob(pattern))]  # fmt: skip  # the glob a shell expands
        done = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=tmp, env=env)
        # Jupyter's client picks the kernel's ports and the kernel binds them after: a port another test's server
        # took in between kills the kernel before any cell runs (seen once in a clean CI). That start, and only it,
        # is tried again, on fresh copies; a notebook that fails once running is a failure.
        if KERNEL_START_RACE not in done.stderr:
            break
    return Executed(done, tmp / "notebooks", before, beside, scratch)


def _outputs(notebook: Any) -> list[dict[str, Any]]:
    return [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]


def _texts(outputs: list[dict[str, Any]]) -> str:
    parts = []
    for output in outputs:
        if output["output_type"] == "stream":
            parts.append(output["text"])
        for mime in ("text/plain", "text/html"):
            parts.append(output.get("data", {}).get(mime, ""))
    return "\n".join(parts)


def test_every_notebook_is_tested() -> None:
    assert {p.stem for p in NOTEBOOKS.glob("*.ipynb")} == set(EXPECTED)


def test_the_guides_command_runs_the_notebooks(executed: Executed) -> None:
    assert executed.done.returncode == 0, executed.done.stderr[-3000:]
    assert executed.done.stderr.count("Executing notebook with kernel") == len(executed.before) == len(EXPECTED)
    assert sorted(os.listdir(executed.folder)) == executed.before  # nothing written beside them
    assert not os.listdir(executed.scratch), "a notebook left its temporary folder behind"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_runs_with_pictures(name: str, executed: Executed, tmp_path: Path) -> None:
    path = NOTEBOOKS / f"{name}.ipynb"
    committed = nbformat.read(path, as_version=4)
    assert not _outputs(committed), "commit notebooks without outputs"
    assert executed.done.returncode == 0, executed.done.stderr[-3000:]  # the first cell that failed, named
    notebook = nbformat.read(executed.folder / path.name, as_version=4)
    outputs = _outputs(notebook)

    assert sorted(os.listdir(NOTEBOOKS)) == executed.beside, "the notebook wrote beside itself"
    assert sorted(os.listdir(executed.folder)) == executed.before, (
        "the notebook wrote into its working folder (it should use a temporary one)"
    )
    figures, texts = EXPECTED[name]
    pictures = [o["data"]["image/png"] for o in outputs if "image/png" in o.get("data", {})]
    assert len(pictures) >= figures
    for i, encoded in enumerate(pictures):
        saved = tmp_path / f"{name}-{i}.png"
        saved.write_bytes(base64.b64decode(encoded))
        with Image.open(saved) as image:
            assert image.format == "PNG"
            assert image.width >= 300
            assert image.height >= 150
            colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
            assert colours is None or len(colours) > 10, f"{saved} is (nearly) one colour"
    shown = _texts(outputs)
    for text in texts:
        assert text in shown
    assert not BYTES_REPR.search(shown), f"bytes shown raw: {BYTES_REPR.search(shown)}"
    assert not [o for o in outputs if o["output_type"] == "error"]
    warnings = [o["text"] for o in outputs if o.get("name") == "stderr" and "Warning" in o["text"]]
    assert not warnings
    # extract and collect show their progress without being asked: widgets, which ran to the end
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
    widgets = notebook.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"].values()
    html = [str(w["state"].get("value", "")) for w in widgets if w["model_name"] == "HTMLModel"]
    texts_shown = [t.replace("\u2007", " ") for t in html]  # tqdm spaces its text with figure spaces
    assert any(t.startswith(("extract: 100%", "collect: 100%")) for t in texts_shown), texts_shown
    assert any(re.search(r"\b(\d+)/\1 .*rows=[\d,]+", t) for t in texts_shown)  # n/n blocks, with the rows


def test_the_notebooks_pass_the_house_lint_and_format() -> None:
    ruff = [sys.executable, "-m", "ruff"]
    lint = subprocess.run([*ruff, "check", str(NOTEBOOKS)], capture_output=True, text=True, check=False)
    assert lint.returncode == 0, lint.stdout
    layout = subprocess.run([*ruff, "format", "--check", str(NOTEBOOKS)], capture_output=True, text=True, check=False)
    assert layout.returncode == 0, layout.stdout
