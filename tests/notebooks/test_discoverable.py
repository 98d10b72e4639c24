"""What a Jupyter user finds by looking (issue 28.2): ``chainframe.<TAB>`` offers the public names without loading
them, ``help()`` on a blocking function shows its async twin's options and docstring, ``collect``'s type follows
``output=``, and a wrong option type is named. (The guide's command that runs the notebooks is run by
test_notebooks.py, whose checks read what it executed.)"""

from __future__ import annotations

import inspect
import os
import pydoc
import re
import subprocess
import sys
import typing
from pathlib import Path

import pytest

import chainframe
import chainframe.engine._collect
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
        for o in typing.get_overloads(chainframe.engine._collect.collect)
    }
    assert returns == {"Literal['arrow']": "pa.Table", "Literal['polars']": "pl.DataFrame", "Literal['pandas']": "Any"}
    (tmp_path / "use.py").write_text(
        "import chainframe\n"
        "reveal_type(chainframe.collect('blocks', blocks='0:1', rpc='http://h', output='polars'))\n"
        "reveal_type(chainframe.collect('blocks', blocks='0:1', rpc='http://h'))\n"
    )
    # From the repo root with its own configuration, as `scripts/test` runs mypy just before pytest: the modules it
    # checked are read from its cache (1-2 CPU-s here, against 21 to check chainframe and its dependencies afresh;
    # a cold cache only makes this slower).
    done = subprocess.run(
        [sys.executable, "-m", "mypy", str(tmp_path / "use.py")], capture_output=True, text=True, timeout=300,
        cwd=ROOT, env={**os.environ, "MYPYPATH": str(Path(chainframe.__file__).parents[1])},  # this very chainframe
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
