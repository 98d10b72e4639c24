"""A run pays only for what it uses: the ``chainframe`` command extracting blocks, transactions, logs, receipts or state
diffs loads neither numpy (its process imports pyarrow without it: :mod:`chainframe.cli._process`), Polars (the native
scanner and Arrow kernels serve), DuckDB, the progress bar, the WebSocket and HTTP/2 clients, the client's typed result
classes, the verification or decoding code, the devnet, pyarrow.compute (:mod:`chainframe._kernels` calls its kernels),
tenacity before a request fails, nor pandas (which pyarrow imports for a Python value turned into an Arrow array or
scalar). Each of these cost start-up time before (``python -X importtime``, and pandas 0.3 s in the first piece of every
run). A first run stops short of the head and a second extends its chunk to the head, so copying kept rows and checking
unfinalized rows run too. What a process loaded is read from its ``-X importtime`` lines, which it prints as it imports:
the command leaves without a teardown, so nothing can be asked of it at its end.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from chainframe.cli._described import live
from chainframe.cli._schema import describe, markdown, overview
from chainframe.datasets._registry import REGISTRY
from chainframe.devnet import Devnet

UNUSED = (
    "polars", "duckdb", "tqdm", "websockets", "httpx", "chainframe.verify", "chainframe.decode", "chainframe.devnet",
    "chainframe.rpc._types",  # the typed result classes of the client's methods
    "pandas",  # pyarrow imports it (0.3 s) for a Python value made an Arrow array or scalar, or a group-by
    "pyarrow.compute",  # 39 ms to import: chainframe._kernels calls the same kernels by name
    "tenacity", "tornado",  # loaded when a first attempt fails; tenacity imports Tornado where installed (25 ms)
    "email", "difflib",  # a dated Retry-After header and a misspelled option's hint only
)  # fmt: skip


def loaded_by(argv: list[str]) -> set[str]:
    """The modules ``python -X importtime -m chainframe.cli ARGV`` imports (the command, in its own process)."""
    return run_loading(argv)[0]


def run_loading(argv: list[str]) -> tuple[set[str], str]:
    """What :func:`loaded_by` gives, and what the command printed on stdout.

    A module imported through ``importlib.import_module`` (the catalogue's datasets, a package's names read on first
    use) has no line of its own, the modules it imports have: check a package by its prefix (``pyarrow``'s
    ``pyarrow.lib``)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "chainframe.cli", *argv],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert lines, "no -X importtime lines: the check below would mean nothing"
    return {line.rsplit("|", 1)[1].strip() for line in lines[1:]}, done.stdout  # the first line is the header


@pytest.mark.parametrize("dataset", ["blocks", "transactions", "logs", "receipts", "balance_diffs", "storage_diffs"])
def test_an_extraction_loads_only_what_it_uses(dataset: str, devnet: Devnet, tmp_path: Path) -> None:
    loaded: set[str] = set()
    for blocks in ("150:200", "150:latest"):  # the second run extends the first one's chunk, keeping its rows
        loaded |= loaded_by(
            ["extract", dataset, "--blocks", blocks, "--rpc", devnet.http_url, "--out", str(tmp_path), "--no-progress"]
        )
    assert list((tmp_path / dataset).glob("*.parquet")), "the run wrote nothing: the check below would mean nothing"
    assert {"chainframe.datasets._native_rows", "pyarrow.lib"} <= loaded
    assert sorted(m for m in loaded if m.startswith((*UNUSED, "numpy"))) == []


@pytest.mark.parametrize("dataset", ["traces", "contracts", "native_transfers"])
def test_a_trace_family_run_loads_no_polars(dataset: str, devnet: Devnet, tmp_path: Path) -> None:
    """trace_block's documents are read by the native scanner with Arrow kernels and numpy, and their rows come in
    their sort's order (checked, not sorted): Polars' import was 0.4-0.5 s of a traces run."""
    loaded = loaded_by(
        ["extract", dataset, "--blocks", "0:60", "--rpc", devnet.http_url, "--out", str(tmp_path), "--no-progress"]
    )
    assert list((tmp_path / dataset).glob("*.parquet")), "the run wrote nothing: the check below would mean nothing"
    assert {"chainframe.datasets._native_rows", "chainframe.datasets._parity_native"} <= loaded
    assert sorted(m for m in loaded if m.startswith(UNUSED)) == []


def test_other_commands_load_numpy_as_before(devnet: Devnet, tmp_path: Path) -> None:
    """Decoding needs numpy: a command line that may decode imports pyarrow with it."""
    argv = ["extract", "logs", "--blocks", "150:160", "--rpc", devnet.http_url, "--out", str(tmp_path)]
    assert "numpy" in loaded_by([*argv, "--event", "Transfer(address indexed from, address indexed to, uint256 v)"])


THREADS = """
import os, sys
{imports}
assert "numpy" in sys.modules
print(sum(open(f"/proc/self/task/{{t}}/comm").read().strip() == "python" for t in os.listdir("/proc/self/task")))
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads through /proc")
def test_the_command_starts_no_openblas_threads() -> None:
    """OpenBLAS, loaded with numpy (which pyarrow imports), starts a thread per core that spins for about 0.1 CPU-s:
    the command's process asks for none. A plain import of pyarrow, the control, starts them on a multi-core machine."""
    # OMP_NUM_THREADS limits OpenBLAS too, and a Dask nanny of another test sets it in this process.
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}

    def python_threads(imports: str) -> int:
        code = THREADS.format(imports=imports)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0, done.stderr[-2000:]
        return int(done.stdout.strip())

    # A command line that loads numpy (the numpy-free ones do not load OpenBLAS at all).
    assert python_threads("from chainframe.cli._process import prepare\nprepare(['schema'])\nimport pyarrow") == 1
    if (os.cpu_count() or 1) > 1:
        assert python_threads("import pyarrow") > 1


@pytest.mark.parametrize("argv", [["--version"], ["--help"], []], ids=["version", "help", "nothing"])
def test_the_command_alone_loads_no_subcommand(argv: list[str]) -> None:
    """``--version`` and ``--help`` (and a bare ``chainframe``, which says a command is needed) name every
    subcommand but load none: no pyarrow, no RPC client, no engine."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "chainframe.cli", *argv],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == (2 if not argv else 0), done.stderr[-2000:]
    assert ("vacuum" in done.stdout + done.stderr) == (argv == ["--help"])  # the help names the subcommands
    lines = [line for line in done.stderr.splitlines() if line.startswith("import time:")]
    loaded = {line.rsplit("|", 1)[1].strip() for line in lines[1:]}
    assert "chainframe.cli._main" in loaded, "no -X importtime lines: the check below would mean nothing"
    heavy = ("pyarrow", "numpy", "polars", "chainframe.rpc", "chainframe.engine", "chainframe.store", "asyncio")
    own = ("chainframe.cli._main", "chainframe.cli._process", "chainframe.cli._commands")
    subcommands = {m for m in loaded if m.startswith("chainframe.cli._") and m not in own}
    assert sorted({m for m in loaded if m.startswith(heavy)} | subcommands) == []


@pytest.mark.parametrize(
    "argv", [["datasets"], ["schema"], ["schema", "--markdown"], *(["schema", name] for name in REGISTRY)], ids=" ".join
)
def test_describing_the_datasets_loads_none(argv: list[str]) -> None:
    """``datasets`` and ``schema`` print what the datasets' classes and the column table say, as their full import
    prints it, without importing a dataset (nor pyarrow and numpy with them: half of those commands' CPU before), or
    the RPC client (asyncio, httpx: a command that asks no node says so)."""
    loaded, out = run_loading(argv)
    assert "chainframe.cli._described" in loaded, "the check below would mean nothing"
    heavy = ("pyarrow", "numpy", "polars", "chainframe.datasets._", "chainframe.rpc", "asyncio")
    assert sorted(m for m in loaded if m.startswith(heavy)) == [
        "chainframe.datasets._inputs", "chainframe.datasets._registry",  # read by every command (cli._process)
    ]  # fmt: skip
    full = live()
    full = full._replace(datasets={name: full.datasets[name] for name in REGISTRY})  # none a test registered
    printed = (
        overview(full) if argv == ["datasets"]
        else markdown(full) if argv == ["schema", "--markdown"]
        else "\n".join(describe(name, full) for name in argv[1:] or REGISTRY)
    )  # fmt: skip
    assert out == printed, "regenerate chainframe/cli/_described.json: python -m chainframe.cli._described"


def test_keccak_is_the_c_one_loaded_as_a_leaf() -> None:
    """chainframe._keccak serves the C keccak of chainframe.verify._native without importing the chainframe.verify
    package (0.2 CPU-s) or pycryptodome's keccak (50-170 ms: cffi parses C declarations), and chainframe.verify later
    finds that same module."""
    code = (
        "import sys; from chainframe._keccak import keccak256\n"
        "assert keccak256(b'').hex() == 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470'\n"
        "print(sorted(m for m in sys.modules if m.startswith(('Crypto', 'chainframe.verify'))))\n"
        "from chainframe.verify._hashing import NATIVE; assert NATIVE is sys.modules['chainframe.verify._native']\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "['chainframe.verify._native']"


def test_decoding_small_integers_and_bools_loads_no_pandas() -> None:
    """pa.array(ndarray) imports pandas (about 0.4 CPU-s) to ask whether it was given a Series: the decoder hands
    Arrow the buffers of a bool or a 64-bit-or-less integer column instead."""
    code = (
        "import sys, numpy as np\n"
        "from chainframe.decode._abi import parse_type\nfrom chainframe.decode._words import decode_words\n"
        "words = np.zeros((3, 32), np.uint8); words[:, 31] = (1, 0, 1); words[2, 30] = 0\n"
        "out = [decode_words(words, parse_type(t), column='c', u256='decimal', locate=str).to_pylist()\n"
        "       for t in ('bool', 'uint64', 'int8')]\n"
        "print(out, 'pandas' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[[True, False, True], [1, 0, 1], [1, 0, 1]] False"


def test_decoding_calls_loads_no_pandas(devnet: Devnet, tmp_path: Path) -> None:
    """A run that keeps the calls of a function loads no pandas: the decoder reads and builds Arrow arrays through
    their buffers (validity, take indices, the selector, signature and reason columns), never ``to_numpy`` or
    ``pa.array`` of Python or numpy values, which import it (0.3-0.8 s of a run's CPU)."""
    import pyarrow.parquet as pq

    loaded = loaded_by(
        ["extract", "transactions", "--function", "transfer(address,uint256)", "--blocks", "0:latest",
         "--rpc", devnet.http_url, "--out", str(tmp_path), "--no-progress"]
    )  # fmt: skip
    files = list(tmp_path.glob("transactions__transfer__*/*.parquet"))
    assert files, "the run wrote no calls: the check below would mean nothing"
    calls = pq.read_table(files[0], columns=["selector", "function", "decode_error"])
    assert calls.num_rows
    assert calls["decode_error"].null_count == calls.num_rows
    assert set(calls["function"].to_pylist()) == {"transfer(address,uint256)"}
    assert set(calls["selector"].to_pylist()) == {bytes.fromhex("a9059cbb")}
    assert "chainframe.decode._calls" in loaded
    assert "pandas" not in loaded
    # A function no block of the range calls: its chunk is written with no rows (an empty table made without
    # schema.empty_table(), which imports pandas too).
    loaded = loaded_by(
        ["extract", "transactions", "--function", "approve(address,uint256)", "--blocks", "200:latest",
         "--rpc", devnet.http_url, "--out", str(tmp_path / "none"), "--no-progress"]
    )  # fmt: skip
    (empty,) = list((tmp_path / "none").glob("transactions__approve__*/*.parquet"))
    assert pq.read_metadata(empty).num_rows == 0
    assert "pandas" not in loaded
