"""A run pays only for what it uses: a CLI extraction of blocks, transactions, logs or receipts, in a fresh process,
loads neither Polars (the native scanner and Arrow kernels serve) nor DuckDB, the progress bar, the WebSocket and
HTTP/2 clients, the client's typed result classes, the verification or decoding code, the devnet, pyarrow.compute
(:mod:`chainframe._kernels` calls its kernels), tenacity before a request fails, nor pandas (which pyarrow imports
for a Python value turned into an Arrow array or scalar). Each of these cost start-up time before (``python -X
importtime``, and pandas 0.3 s in the first piece of every run). A first run stops short of the head and a second
extends its chunk to the head, so copying kept rows and checking unfinalized rows run too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chainframe.devnet import Devnet

UNUSED = (
    "polars", "duckdb", "tqdm", "websockets", "httpx", "chainframe.verify", "chainframe.decode", "chainframe.devnet",
    "chainframe.rpc._types",  # the typed result classes of the client's methods
    "pandas",  # pyarrow imports it (0.3 s) for a Python value made an Arrow array or scalar, or a group-by
    "pyarrow.compute",  # 39 ms to import: chainframe._kernels calls the same kernels by name
    "tenacity", "tornado",  # loaded when a first attempt fails; tenacity imports Tornado where installed (25 ms)
    "email", "difflib",  # a dated Retry-After header and a misspelled option's hint only
)  # fmt: skip

RUN = """
import json, sys
from chainframe.cli import main
for blocks in ("150:200", "150:latest"):  # the second run extends the first one's chunk, keeping its rows
    try:
        main(["extract", sys.argv[1], "--blocks", blocks, "--rpc", sys.argv[2], "--out", sys.argv[3], "--no-progress"])
    except SystemExit as exc:
        assert not exc.code, exc.code
print(json.dumps(sorted(sys.modules)))
"""


@pytest.mark.parametrize("dataset", ["blocks", "transactions", "logs", "receipts"])
def test_an_extraction_loads_only_what_it_uses(dataset: str, devnet: Devnet, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", RUN, dataset, devnet.http_url, str(tmp_path)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert list((tmp_path / dataset).glob("*.parquet")), "the run wrote nothing: the check below would mean nothing"
    assert "chainframe.datasets._native_rows" in loaded
    assert [m for m in loaded if m.startswith(UNUSED)] == []


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

    assert python_threads("from chainframe.cli import main") == 1
    if (os.cpu_count() or 1) > 1:
        assert python_threads("import pyarrow") > 1
