"""The ``chainframe`` command's own process (:mod:`chainframe.cli._process`): pyarrow without numpy where the command
line cannot need it, with the same rows as the Python API's; and an exit without a teardown that still runs the exit
handlers, flushes the output, keeps the exit code and waits for a thread still working."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from chainframe import extract
from chainframe.cli._process import numpy_free
from chainframe.datasets import DATASETS
from chainframe.datasets._registry import REGISTRY
from chainframe.devnet import DEV_ACCOUNTS, Devnet

URL = ["--rpc", "http://127.0.0.1:8545", "--out", "data"]
BUFFERED = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
"""The environment of a child whose output is buffered (as a command's piped output is), where it needs flushing."""


PLAIN_DATASETS = frozenset(name for name, entry in REGISTRY.items() if entry.numpy_free)


def test_reading_the_catalogue_imports_no_dataset() -> None:
    """The command decides on numpy before pyarrow loads: the catalogue's lines must be readable without it."""
    heavy = "('pyarrow', 'numpy', 'polars')"
    code = f"import sys, chainframe.cli._process; print(sorted(m for m in {heavy} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "argv",
    [
        ["extract", "blocks", "--blocks", "0:99", *URL],
        ["extract", "blocks", "transactions", "receipts", "logs", "uncles", "--blocks=-1000:", *URL, "--no-progress"],
        ["extract", "logs", "--blocks", "0:", "--follow", "--poll", "2", "--address", "0xab", *URL, "--u256", "binary"],
        ["extract", "--blocks", "-1000:", "receipts", "--rpc-env", "RPC", "--out", "s3://b/p", "--max-in-flight=4"],
    ],
)
def test_plain_extractions_are_numpy_free(argv: list[str]) -> None:
    assert numpy_free(argv)


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["schema", "blocks"],
        ["call", "eth_blockNumber", *URL],
        ["extract", "erc20_transfers", "--blocks", "0:99", *URL],
        ["extract", "logs", "--blocks", "0:99", *URL, "--event", "Transfer(address,address,uint256)"],
        ["extract", "logs", "--blocks", "0:99", *URL, "--topic0", "Transfer(address,address,uint256)"],
        ["extract", "logs", "--blocks", "0:99", *URL, "--verify"],
        ["extract", "logs", "--blocks", "0:99", *URL, "--workers", "2"],
        ["extract", "logs", "--blocks", "0:99", *URL, "--scheduler=tcp://x:8786"],
        ["extract", "logs", "--blocks", "0:99", *URL, "--over"],  # argparse would take it for --overwrite
        ["extract", "call_traces", "--blocks", "0:99", *URL, "--call", "{}"],
        ["extract", "blocks", "--help"],
    ],
)
def test_anything_else_loads_numpy(argv: list[str]) -> None:
    assert not numpy_free(argv)


BLOCKS = "0:30"


def test_the_numpy_free_command_writes_what_the_api_writes(devnet: Devnet, tmp_path: Path) -> None:
    """pyarrow without numpy stores the same rows, with the same schema, as pyarrow with it (this test's process).

    Blocks 0..30, not the whole chain: every dataset here has rows in them (code_diffs' first are at 1, 2, 6 and 14;
    uncles has none on the devnet at all), and the whole chain cost 35 CPU-s for no more datasets."""
    plain = sorted(d for d in PLAIN_DATASETS if not DATASETS[d].needs)
    argv = ["extract", *plain, "--blocks", BLOCKS, "--rpc", devnet.http_url, "--out", str(tmp_path / "cli")]
    code = "from chainframe.cli import command; command(); print('not reached')"
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code, *argv], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert " numpy" not in done.stderr
    assert "not reached" not in done.stdout
    assert "rows" in done.stdout  # the summary, flushed before the exit
    extract(plain, blocks=BLOCKS, rpc=devnet.http_url, out=tmp_path / "api", progress=False)
    for dataset in plain:
        cli = pq.read_table(tmp_path / "cli" / dataset)
        api = pq.read_table(tmp_path / "api" / dataset)
        assert cli.schema.equals(api.schema, check_metadata=False), dataset
        assert cli.num_rows == api.num_rows, dataset
        assert cli.num_rows > 0 or dataset == "uncles", dataset
        assert cli.equals(api), dataset


def test_numpy_free_datasets_with_inputs_run_without_numpy(devnet: Devnet, tmp_path: Path) -> None:
    """The state reads and eth_calls decode nothing either: with their inputs, the command still needs no numpy."""
    store = devnet.truth.contracts["Store"]
    inputs = {"--addresses": [store, DEV_ACCOUNTS[0]], "--storage-key": ["0x" + "00" * 32],
              "--call": [json.dumps({"to": store, "data": "0x"})]}  # fmt: skip
    needing = sorted(d for d in PLAIN_DATASETS if DATASETS[d].needs)
    assert needing, "the check below would mean nothing"
    argv = ["extract", *needing, "--blocks", "1:30", "--rpc", devnet.http_url, "--out", str(tmp_path), "--no-progress"]
    for flag, values in inputs.items():
        argv += [flag, *values]
    assert numpy_free(argv)
    code = "from chainframe.cli import command; command()"
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code, *argv], capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert " numpy" not in done.stderr
    assert all(any(p.name.startswith(d) for p in tmp_path.iterdir()) for d in needing)


LEAVE = """
import atexit, sys, threading, time
from chainframe.cli._process import leave
atexit.register(lambda: open(sys.argv[1] + "/atexit", "w").close())
if sys.argv[2] == "worker":
    def work() -> None:
        time.sleep(0.5)
        open(sys.argv[1] + "/worker", "w").close()
    threading.Thread(target=work).start()
print("summary", end="")  # unflushed: a pipe is block-buffered
leave(3)
"""


@pytest.mark.parametrize("thread", ["none", "worker"])
def test_leaving_runs_the_exit_handlers_flushes_and_waits_for_threads(thread: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", LEAVE, str(tmp_path), thread], capture_output=True, text=True, timeout=60, env=BUFFERED
    )
    assert (done.returncode, done.stdout) == (3, "summary"), done.stderr
    assert (tmp_path / "atexit").exists()
    assert (tmp_path / "worker").exists() == (thread == "worker")


def test_output_to_a_closed_pipe_is_an_exit_code_not_a_traceback() -> None:
    """As Python's own exit does (code 120), when the reader is gone before the output is flushed."""
    code = "import sys; from chainframe.cli._process import leave; print('x' * 100); sys.stdin.readline(); leave(0)"
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=BUFFERED,
    )  # fmt: skip
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    proc.stdout.close()  # as `chainframe ... | head -0` does, before the command flushes
    proc.stdin.write(b"go\n")
    proc.stdin.close()
    assert proc.wait(timeout=60) == 120
    with proc.stderr:
        assert proc.stderr.read() == b""


def test_arrays_round_trip_without_numpy_in_a_fresh_process() -> None:
    """The pyarrow the command loads without numpy builds and writes every type the datasets use."""
    code = (
        "import sys; sys.modules['numpy'] = None\n"
        "import io, pyarrow as pa, pyarrow.parquet as pq\n"
        "t = pa.table({'a': pa.array([1, None], pa.uint64()), 'b': pa.array([b'x', b'y'], pa.binary(1)),\n"
        "  'c': pa.array([10**37, 0], pa.decimal128(38, 0)), 'd': pa.array([[1], []], pa.list_(pa.int32()))})\n"
        "buf = io.BytesIO(); pq.write_table(t, buf); assert pq.read_table(pa.BufferReader(buf.getvalue())).equals(t)\n"
        "print(pa.lib.np is None)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "True", done.stderr[-2000:]
    assert pa.lib.np is not None  # this process's pyarrow has numpy: the comparison above was against it
