"""What a Jupyter user finds by looking (issue 28.2): ``chainframe.<TAB>`` offers the public names without loading
them, ``help()`` on a blocking function shows its async twin's options and docstring, ``collect``'s type follows
``output=``, a wrong option type is named, and the guide's command (docs/python-api.md) runs the notebooks."""

from __future__ import annotations

import inspect
import os
import pydoc
import re
import shutil
import subprocess
import sys
import typing
from pathlib import Path

import pytest

import chainframe
from chainframe._errors import InputError
from chainframe.devnet import Devnet

ROOT = Path(__file__).resolve().parents[2]


def test_tab_completion_offers_the_public_names_and_loads_nothing() -> None:
    code = "import chainframe, sys; print(dir(chainframe)); print('pyarrow' in sys.modules, 'polars' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    listed, loaded = done.stdout.splitlines()
    names = eval(listed)  # noqa: S307  # our own print of a list of strings
    assert set(chainframe.__all__) <= set(names)
    assert {"rpc", "datasets", "devnet"} <= set(names)
    assert not any(n in names for n in ("importlib", "TYPE_CHECKING", "_importlib"))
    assert loaded == "False False"  # the lazy start-up kept: listing names imports nothing heavy
    assert chainframe.rpc.Client is not None  # a listed subpackage is reachable as an attribute


@pytest.mark.parametrize(
    ("blocking", "coroutine"),
    [("extract", "aextract"), ("collect", "acollect"), ("follow", "afollow"), ("repair", "arepair"),
     ("probe", "aprobe")],
)  # fmt: skip
def test_help_on_a_blocking_function_shows_its_async_twin(blocking: str, coroutine: str) -> None:
    twin, original = getattr(chainframe, blocking), getattr(chainframe, coroutine)
    assert inspect.signature(twin) == inspect.signature(original)
    page = pydoc.render_doc(twin, renderer=pydoc.plaintext)
    first = inspect.cleandoc(original.__doc__).splitlines()[0]
    assert first in page  # the async twin's docstring, whole
    assert inspect.cleandoc(original.__doc__).splitlines()[-1].strip() in page
    assert page.count("Blocking") >= 1  # and what makes this one blocking, on top
    for name in inspect.signature(original).parameters:
        assert f"{name}" in page


def test_collect_is_typed_by_output(tmp_path: Path) -> None:
    returns = {
        inspect.signature(o).parameters["output"].annotation: inspect.signature(o).return_annotation
        for o in typing.get_overloads(chainframe.engine._api.collect)
    }
    assert returns == {"Literal['arrow']": "pa.Table", "Literal['polars']": "pl.DataFrame", "Literal['pandas']": "Any"}
    (tmp_path / "use.py").write_text(
        "import chainframe\n"
        "reveal_type(chainframe.collect('blocks', blocks='0:1', rpc='http://h', output='polars'))\n"
        "reveal_type(chainframe.collect('blocks', blocks='0:1', rpc='http://h'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent", str(tmp_path / "use.py")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={**os.environ, "MYPYPATH": str(Path(chainframe.__file__).parents[1])},  # this very chainframe
    )  # fmt: skip
    revealed = re.findall(r'Revealed type is "([^"]+)"', done.stdout)
    # pyarrow ships no type information, so a type checker sees its Table as Any; polars' frame it knows.
    assert revealed == ["polars.dataframe.frame.DataFrame", "Any"], done.stdout


@pytest.mark.parametrize("option", ["pacing", "retry", "timeout"])
def test_a_dict_for_a_client_option_names_the_type_to_build(devnet: Devnet, tmp_path: Path, option: str) -> None:
    kind = {"pacing": "Pacing", "retry": "RetryPolicy", "timeout": "Timeout"}[option]
    with pytest.raises(InputError, match=rf"{option} must be a chainframe\.rpc\.{kind} .*; got dict"):
        chainframe.extract("blocks", blocks="0:3", out=tmp_path, rpc=devnet.http_url, progress=False,
                           client_options={option: {"max_concurrency": 2}})  # fmt: skip
    with pytest.raises(InputError, match=rf"{option} must be a chainframe\.rpc\.{kind}"):
        chainframe.collect("blocks", blocks="0:3", rpc=devnet.http_url, client_options={option: {}})


def test_the_readme_command_runs_the_notebooks(tmp_path: Path) -> None:
    pytest.importorskip("nbclient", reason="the notebook extra: pip install 'chainframe[notebook]'")
    readme = (ROOT / "docs" / "python-api.md").read_text()
    command = re.search(r"^\.venv/bin/(jupyter execute notebooks/\S+)$", readme, re.MULTILINE)
    assert command, "docs/python-api.md names the command that runs the notebooks"
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    before = sorted(p.name for p in (tmp_path / "notebooks").iterdir())
    jupyter, execute, pattern = command.group(1).split()
    argv = [str(Path(sys.executable).parent / jupyter), execute, *sorted(str(p) for p in tmp_path.glob(pattern))]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=tmp_path)  # the glob a shell expands
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr.count("Executing notebook with kernel") == len(before) == 3
    assert sorted(p.name for p in (tmp_path / "notebooks").iterdir()) == before  # nothing written beside them
