"""Fenced writers on a cluster: a killed, paused or superseded run can never publish rows after another run took its
bucket prefix over (issue 29). Real processes throughout: moto's S3 server, a Dask scheduler and two workers started
as processes of their own (an external cluster, which outlives a coordinator), the ``chainframe`` command as the
coordinator, and a devnet (one for the module, its chain as built for each test: ``tests.store.test_s3.ModuleDevnet``).
The cases without the external cluster (a run in one process, a coordinator with its own local cluster) are in
``test_dask_fencing_local.py``: another file, so that the suite's two workers can run the two halves side by side.

Each test ends with the bucket's tables equal, row by row, to a clean single-process extraction of the node's chain
(its first BLOCKS blocks), read through every reader (``assert_same_as_local``), and with no commit published after
the run that took over."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import deltalake
import distributed
import polars as pl
import pytest
import s3fs

from chainframe import scan
from chainframe.cli import main
from chainframe.devnet import Devnet
from chainframe.store import ObjectPath, is_delta_table, location, snapshot_uris, table_version
from chainframe.store._delta import storage_options
from tests.store.test_s3 import assert_same_as_local, bucket, chain, module_devnet, node, s3_endpoint

# the fixtures this module uses, from the store's S3 tests
__all__ = ["bucket", "chain", "module_devnet", "node", "s3_endpoint"]

DATASETS = ("blocks", "logs")
BLOCKS = "0:119"
"""The runs' range: six slots of CHUNK blocks, about 7,300 logs (the devnet's 240 blocks took twice as long to take
over, list and compare, and the fencing does not need them)."""
CHUNK = 20
LEASE = 4.0
"""Seconds of the coordinators' S3 lease here (CHAINFRAME_LEASE_SECONDS): a stopped run's lease can be taken over
after LEASE * 1.5, instead of 90 s with the default."""
CLOSE = 11.0
"""Seconds a stopped Dask coordinator may take to end after it stops its work: the workers get 10 s to drop the run's
chunks in flight (``chainframe.engine._dask.CLOSE_TIMEOUT``)."""
PACED = ["--requests-per-second", "15"]
"""The first run's budget: slow enough that it is still writing when the test stops it (on the cluster, under load
9-12: a run of BLOCKS took 31 s, its first commit after 21 s; at 20 requests a second, 18 s and 9 s)."""


@pytest.fixture(scope="module", autouse=True)
def _no_client_outlives_the_server(s3_endpoint: str) -> Iterator[None]:
    s3fs.S3FileSystem.clear_instance_cache()
    yield
    s3fs.S3FileSystem.clear_instance_cache()


class Cluster:
    """A Dask scheduler and two workers (no nannies: a killed worker stays dead), as separate processes that get the
    AWS_* variables from the environment, as workers on other machines would from theirs. One for the module: a
    worker a test killed is started again (under its name) for the next test."""

    NAMES = ("w1", "w2")

    def __init__(self, folder: Path) -> None:
        self.file = folder / "scheduler.json"
        self.log = open(folder / "cluster.log", "wb")  # noqa: SIM115 (closed by stop)
        self.dask = str(Path(sys.executable).with_name("dask"))
        self.processes: list[subprocess.Popen[bytes]] = []
        self.address = ""

    def start(self) -> None:
        self.processes.append(subprocess.Popen(
            [self.dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--scheduler-file", str(self.file),
             "--no-dashboard"], stdout=self.log, stderr=self.log,
        ))  # fmt: skip
        _wait(self.file.exists, 30, "the scheduler to start")
        self.processes += [self._worker(name) for name in self.NAMES]
        with distributed.Client(scheduler_file=str(self.file), timeout=30) as client:
            client.wait_for_workers(len(self.NAMES), timeout=60)
            self.address = client.scheduler.address

    def _worker(self, name: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [self.dask, "worker", "--scheduler-file", str(self.file), "--nthreads", "2", "--no-nanny", "--name", name,
             "--no-dashboard"], stdout=self.log, stderr=self.log,
        )  # fmt: skip

    def ready(self) -> tuple[str, list[subprocess.Popen[bytes]]]:
        """The scheduler's address and processes (scheduler, w1, w2), every worker alive and idle."""
        dead = [i for i in range(1, len(self.processes)) if self.processes[i].poll() is not None]
        with distributed.Client(self.address, timeout=30) as client:
            if dead:  # the scheduler forgets a killed worker once its connection drops: then its name is free
                _wait(lambda: len(client.scheduler_info()["workers"]) == len(self.NAMES) - len(dead), 60,
                      "the scheduler to forget the killed workers")  # fmt: skip
                for i in dead:
                    self.processes[i] = self._worker(self.NAMES[i - 1])
                client.wait_for_workers(len(self.NAMES), timeout=60)
            _wait(lambda: not any(client.processing().values()), 120, "the workers to be idle", every=0.5)
        return self.address, self.processes

    def stop(self) -> None:
        for process in reversed(self.processes):
            process.kill()
            process.wait(timeout=30)
        self.log.close()


@pytest.fixture(scope="module")
def module_cluster(tmp_path_factory: pytest.TempPathFactory, s3_endpoint: str) -> Iterator[Cluster]:
    cluster = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def cluster(module_cluster: Cluster) -> tuple[str, list[subprocess.Popen[bytes]]]:
    """The module's Dask cluster (``Cluster``): its scheduler's address and its processes, scheduler first."""
    return module_cluster.ready()


def _wait(condition: Callable[[], bool], seconds: float, what: str, *, every: float = 0.1) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(every)


def _env() -> dict[str, str]:
    return {**os.environ, "CHAINFRAME_LEASE_SECONDS": str(LEASE)}


def _argv(devnet: Devnet, out: str, *more: str, blocks: str = BLOCKS) -> list[str]:
    return [
        "extract", *DATASETS, "--blocks", blocks, "--rpc", devnet.http_url, "--out", out, "--chunk-size", str(CHUNK),
        "--no-progress", *more,
    ]  # fmt: skip


def _command(devnet: Devnet, out: str, *more: str, blocks: str = BLOCKS) -> list[str]:
    return [sys.executable, "-m", "chainframe.cli", *_argv(devnet, out, *more, blocks=blocks)]


def _in_process(argv: list[str]) -> None:
    """Run a take-over's command line in this process, with the coordinators' lease: the same run as the command's,
    without a new interpreter importing chainframe, Polars, delta-rs and s3fs again (1-2 CPU-s each time). The
    runs under test (the paused and killed ones) stay processes of their own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CHAINFRAME_LEASE_SECONDS", str(LEASE))
        assert main(argv) == 0, argv


def _committed(out: str) -> int:
    """Chunk files in the tables' latest snapshots."""
    folders = [location(f"{out}/{name}") for name in DATASETS]
    return sum(len(snapshot_uris(f)) for f in folders if is_delta_table(f))


def _versions(out: str) -> dict[str, int]:
    return {name: table_version(location(f"{out}/{name}")) for name in DATASETS}


def _wait_idle(address: str, what: str) -> None:
    """Wait until the cluster's workers hold no task (the dead run's tasks ran out): one client asking twice a
    second, where a client a look cost the scheduler and this process a connection and its handshake each time."""
    with distributed.Client(address, timeout=30) as client:
        _wait(lambda: not any(client.processing().values()), 120, what, every=0.5)


def _take_over(devnet: Devnet, out: str, *more: str, blocks: str = BLOCKS) -> None:
    """A second run, unpaced, in this process (``_in_process``): it must take the prefix over and finish."""
    _in_process(_argv(devnet, out, *more, blocks=blocks))


def _written(out: str) -> bool:
    """Whether a chunk file was written into a table's data folder (committed or not): one listing a table, where a
    look at the tables' snapshots loads each table's log, which took 0.3-1.5 s of the machine the first run needs."""
    fs = s3fs.S3FileSystem()
    for name in DATASETS:
        folder = location(f"{out}/{name}/data")
        assert isinstance(folder, ObjectPath)
        fs.invalidate_cache(folder.path)
        if fs.find(folder.path):
            return True
    return False


def _started(first: subprocess.Popen[str], out: str) -> None:
    """Wait until the first run has committed a chunk (and so is well under way): its snapshots are looked at once a
    chunk file was written (a commit follows its file), and twice a second (each look lists a table on moto's
    server, whose CPU the first run needs; its first commit comes 9-21 s in, 10 s before its end)."""
    _wait(
        lambda: first.poll() is not None or (_written(out) and _committed(out) > 0),
        90,
        "the first run's first commit",
        every=0.5,
    )
    if first.poll() is not None:  # what it said is the only clue to why (a clean CI failed here once, exit 1)
        said = first.communicate(timeout=10)[1] or ""
        raise AssertionError(
            f"the first run ended (exit {first.returncode}) before it could be stopped: {said[-3000:]}"
        )


def _paused_past_lease(
    first: subprocess.Popen[str], out: str, take_over: Callable[[], object], *, group: bool = False
) -> tuple[dict[str, int], float, str, str]:
    """Stop ``first`` (with ``group``, its whole process group) until its lease expired (with the allowance for
    clocks), run ``take_over`` meanwhile, continue it and read its output: the tables' versions right after the take
    over, the seconds ``first`` took to end once continued, its stdout and stderr."""
    stop = (lambda sig: os.killpg(first.pid, sig)) if group else first.send_signal
    stop(signal.SIGSTOP)
    try:
        time.sleep(LEASE * 1.5 + 1)
        take_over()
        versions = _versions(out)
    finally:
        stop(signal.SIGCONT)
        continued = time.monotonic()
    stdout, stderr = first.communicate(timeout=180)
    return versions, time.monotonic() - continued, stdout, stderr


@pytest.mark.slow
def test_a_killed_coordinators_tasks_finish_later_and_publish_nothing(
    chain: Devnet, bucket: str, tmp_path: Path, cluster: tuple[str, list[subprocess.Popen[bytes]]]
) -> None:
    """(1) The coordinator SIGKILLed on an external cluster, a second run takes the prefix over at once (the lease's
    holder is a gone process of this machine) and finishes; the first run's tasks still running on the workers end
    later, and nothing they wrote becomes visible."""
    address, _ = cluster
    out = f"{bucket}/dev"
    with subprocess.Popen(_command(chain, out, "--scheduler", address, *PACED), stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, env=_env()) as first:  # fmt: skip
        _started(first, out)
        first.kill()
    _take_over(chain, out)
    versions = _versions(out)
    _wait_idle(address, "the dead run's tasks to end on the workers")
    assert _versions(out) == versions  # not one commit after the run that took over
    assert_same_as_local(chain, out, tmp_path, datasets=DATASETS, chunk_size=CHUNK, blocks=BLOCKS)


TAKE_OVERS: dict[str, Callable[[Devnet, str], list[str]]] = {
    "extract": lambda devnet, out: _argv(devnet, out),
    "vacuum": lambda devnet, out: ["vacuum", out, "--retention-hours", "0"],
    "repair": lambda devnet, out: ["repair", out, "--rpc", devnet.http_url],
}
"""What takes a paused run's prefix over: another extraction, a vacuum that deletes every file no commit names (the
paused run's workers wrote some meanwhile), and a repair (which changes nothing here, but claims every table)."""


@pytest.mark.slow
@pytest.mark.parametrize("other", sorted(TAKE_OVERS))
def test_a_paused_coordinator_wakes_to_a_typed_error_not_a_success(
    chain: Devnet, bucket: str, tmp_path: Path, cluster: tuple[str, list[subprocess.Popen[bytes]]], other: str
) -> None:
    """(2) The coordinator SIGSTOPped past its lease while its workers go on writing files; another run, a vacuum or a
    repair takes over; SIGCONT: the first run publishes nothing more, fails with one clean line saying why within a
    lease period, and every version of every table names only files that exist and is read whole."""
    address, _ = cluster
    out = f"{bucket}/dev"
    with subprocess.Popen(_command(chain, out, "--scheduler", address, *PACED), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=_env()) as first:  # fmt: skip
        _started(first, out)

        versions, stopped, stdout, stderr = _paused_past_lease(
            first, out, lambda: _in_process(TAKE_OVERS[other](chain, out))
        )
    assert first.returncode != 0, stdout
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, stderr
    assert "Traceback" not in stderr
    assert "another run" in errors[0], stderr
    assert chain.key not in stdout + stderr
    print(f"{other}: the continued coordinator stopped {stopped:.1f} s after SIGCONT")
    assert stopped < LEASE + CLOSE, f"the continued run took {stopped:.1f} s to stop"
    _wait_idle(address, "the paused run's tasks to end on the workers")
    assert _versions(out) == versions
    _every_version_whole(out)
    if other == "extract":
        assert_same_as_local(chain, out, tmp_path, datasets=DATASETS, chunk_size=CHUNK, blocks=BLOCKS)
    else:  # the first run's commits stay as they were; a re-run completes the tables
        _take_over(chain, out)
        assert_same_as_local(chain, out, tmp_path, datasets=DATASETS, chunk_size=CHUNK, blocks=BLOCKS)


def _every_version_whole(out: str) -> None:
    """Every version of every table names only files that exist, and reads whole through delta-rs and ``scan``."""
    fs = s3fs.S3FileSystem()
    for name in DATASETS:
        folder = location(f"{out}/{name}")
        assert isinstance(folder, ObjectPath)
        fs.invalidate_cache(folder.path)
        stored = {f"s3://{key}" for key in fs.find(folder.path)}  # one listing, not a request for each file
        table = deltalake.DeltaTable(str(folder), version=0, storage_options=storage_options(folder))
        for version in range(table_version(folder) + 1):
            files = snapshot_uris(folder, version=version)
            missing = [f for f in files if f not in stored]
            assert missing == [], f"{name} version {version} names deleted files: {missing}"
            rows = scan(out, name, version=version).select(pl.len()).collect().item()
            table.load_as_version(version)  # one table moved forward: each version's commit read once
            assert table.version() == version
            assert table.to_pyarrow_dataset().count_rows() == rows, (name, version)


@pytest.mark.slow
def test_a_worker_killed_mid_chunk_costs_only_its_chunk(
    chain: Devnet, bucket: str, tmp_path: Path, cluster: tuple[str, list[subprocess.Popen[bytes]]]
) -> None:
    """(4) A worker SIGKILLed while it holds chunks: Dask runs them again on the other worker, the run finishes, and
    the table holds each block's rows once."""
    address, processes = cluster
    out = f"{bucket}/dev"
    faster = ["--requests-per-second", "20"]  # still under way when the worker is killed, done soon after
    with subprocess.Popen(_command(chain, out, "--scheduler", address, *faster), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=_env()) as run:  # fmt: skip
        _started(run, out)
        with distributed.Client(address, timeout=30) as client:
            busy = [w for w, keys in client.processing().items() if keys]
            workers = client.scheduler_info()["workers"]
        assert busy, "no worker holds a chunk"
        victim = workers[busy[0]]["name"]
        processes[1 if victim == "w1" else 2].kill()
        stdout, stderr = run.communicate(timeout=240)
    assert run.returncode == 0, stderr
    lost = next(a for a, w in workers.items() if w["name"] == victim)
    assert f"lost Dask worker: {lost}" in stdout  # the summary names the worker and the chunks run again
    assert "run again on another worker: " in stdout
    assert_same_as_local(chain, out, tmp_path, datasets=DATASETS, chunk_size=CHUNK, blocks=BLOCKS)
