"""Output to an S3 bucket: a real S3-compatible server (moto's, started as its own process) and a real devnet.

The same guarantees as on disk: a bucket run equals a local run row by row (DuckDB, Polars, ``scan``,
``open_duckdb``), a SIGKILLed run leaves nothing half-written and the same command finishes the job, reorganizations
are repaired, one run writes a prefix at a time (a lease object), and the credentials appear nowhere."""

from __future__ import annotations

import json
import os
import random
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
import pytest
import s3fs

from chainframe import extract, follow, open_duckdb, scan
from chainframe._errors import InputError
from chainframe.cli import main as cli_main
from chainframe.devnet import Devnet, GatewaySettings
from chainframe.devnet._node_rpc import NodeRPC
from chainframe.engine import verify_stored
from chainframe.store import (
    ChunkMeta,
    LeaseLost,
    ObjectLease,
    ObjectPath,
    _s3,
    folder_info,
    is_delta_table,
    load_series,
    location,
    read_meta,
    s3_filesystem,
    snapshot_uris,
    storage,
    write_chunk,
)
from chainframe.store._delta import storage_options
from tests.devnets import chain, module_devnet, node, node_rpc
from tests.engine.test_living import kill_mid_run, reorg

# the fixtures this module uses (and the other S3 and Delta files import from here): a devnet of its own, whose chain
# the tests mine and reorganize (tests/devnets.py)
__all__ = ["chain", "module_devnet", "node"]

MAIN = ("blocks", "transactions", "receipts", "logs")
KILLED = ("blocks", "logs")  # the SIGKILL test's (fewer requests per round: the test stays fast)
KILLED_BLOCKS = "120:latest"
"""The SIGKILL test's range: three slots of 40 and the tip's, where a repair rewrites one or two (``0:latest`` made
each run and comparison twice as long, and a kill no likelier to come mid-run: ``kill_mid_run`` sees to that)."""
KEYS = {"blocks": "block_number", "logs": "block_number, log_index"}
RECENT = "100:latest"
"""The range of the tests that run MAIN or follow: two slots of 100 (the tip's, extended or repaired, and a whole one
before it) hold all a run into a bucket does; the chain's first 100 blocks would add requests to the S3 server, not
cases (1.4 CPU-s a run, and as much a comparison)."""
KEY_ID = "AKIACHAINFRAME" + secrets.token_hex(3).upper()
SECRET = "cfsecret" + secrets.token_hex(16)


@pytest.fixture(scope="module")
def s3_endpoint(s3_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The session's moto S3 server (its own process: tests/conftest.py), and the AWS_* variables every reader uses
    pointed at it for this module (each test makes its own bucket)."""
    isolated, url = tmp_path_factory.mktemp("aws"), s3_server
    with pytest.MonkeyPatch.context() as patch:
        env = {
            "AWS_ACCESS_KEY_ID": KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_ENDPOINT_URL": url,
            "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_CONFIG_FILE": str(isolated / "config"), "AWS_SHARED_CREDENTIALS_FILE": str(isolated / "credentials"),
        }  # fmt: skip
        for name, value in env.items():
            patch.setenv(name, value)
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3"):  # would override the above
            patch.delenv(name, raising=False)
        # s3fs keeps one file system per set of arguments, bound to the endpoint it was made for: a module that
        # imports these fixtures and runs first would leave the next module's client asking its gone server.
        _s3.s3_storage.cache_clear()
        s3fs.S3FileSystem.clear_instance_cache()
        try:
            yield url
        finally:
            _s3.s3_storage.cache_clear()
            s3fs.S3FileSystem.clear_instance_cache()


@pytest.fixture
def bucket(s3_endpoint: str) -> str:
    """A new empty bucket: ``s3://<name>``."""
    name = f"cf-{secrets.token_hex(4)}"
    s3_filesystem().mkdir(name)
    return f"s3://{name}"


@pytest.fixture(params=["parquet", "delta"])
def layout(request: pytest.FixtureRequest) -> str:
    """The bucket's layout: plain Parquet objects (one process), or a Delta table per series (the default)."""
    return str(request.param)


def _files(out: str, series: str) -> str:
    """What DuckDB's read_parquet reads for a series: its glob, or a Delta table's snapshot files."""
    folder = location(f"{out}/{series}")
    if is_delta_table(folder):
        return "[" + ", ".join(f"'{uri}'" for uri in snapshot_uris(folder)) + "]"
    return f"'{out}/{series}/*.parquet'"


def _read(files: str, series: str, con: Any = None) -> pl.DataFrame:
    keys = KEYS.get(series.split("__")[0], "block_number, transaction_index")
    con = con or duckdb.connect()
    if "s3://" in files and "s3" not in con.list_filesystems():
        con.register_filesystem(s3_filesystem())
    frame: pl.DataFrame = con.sql(f"SELECT * FROM read_parquet({files}) ORDER BY {keys}").pl()  # noqa: S608
    return frame


CLEAN: dict[tuple[Any, ...], Path] = {}
"""Clean local extractions by the chain's head block (its hash names the whole chain), the range, the datasets and the
options:
many tests compare with the same chain, and each extraction takes seconds."""


def clean_extraction(devnet: Devnet, tmp: Path, datasets: tuple[str, ...], blocks: str = "0:latest", **kw: Any) -> Path:
    """A clean local extraction of the node's chain as it is now (its ``blocks``): made once for a chain, range,
    datasets and options."""
    with node_rpc(devnet) as rpc:
        head = rpc.call("eth_getBlockByNumber", "latest", False)["hash"]
    key = (head, blocks, datasets, *sorted(kw.items()))
    if key not in CLEAN or not CLEAN[key].exists():
        clean = tmp / f"clean-{time.monotonic_ns()}"
        extract(list(datasets), blocks=blocks, out=clean, rpc=devnet.node.url, progress=False, **kw)
        with node_rpc(devnet) as rpc:  # the chain did not change meanwhile: the key names what was extracted
            assert rpc.call("eth_getBlockByNumber", "latest", False)["hash"] == head
        CLEAN[key] = clean
    return CLEAN[key]


def assert_same_as_local(devnet: Devnet, out: str, tmp: Path, datasets: tuple[str, ...] = MAIN, **kw: Any) -> None:
    """The bucket holds exactly what a clean local extraction of the node's chain (its ``blocks=``, by default all of
    it) gives, for every reader."""
    clean = clean_extraction(devnet, tmp, datasets, **kw)
    con, local = open_duckdb(out), duckdb.connect()  # one connection each for all reads (0.1 CPU-s a connection)
    for name in datasets:
        want = _read(f"'{clean / name}/*.parquet'", name, local)
        got = _read(_files(out, name), name, con)  # open_duckdb's connection reads the bucket already
        assert got.height == want.height > 0, name
        assert got.equals(want), name
        assert con.execute(f'SELECT count(*) FROM "{name}"').fetchall()[0][0] == want.height  # noqa: S608
        assert scan(out, name).select(pl.len()).collect().item() == want.height  # Polars reads the bucket itself
        if is_delta_table(location(f"{out}/{name}")):  # any Delta reader: Polars' own, with delta-rs' options
            options = storage_options(location(out))
            assert pl.scan_delta(f"{out}/{name}", storage_options=options).select(pl.len()).collect().item() == (
                want.height
            )
        else:
            assert pl.scan_parquet(f"{out}/{name}/*.parquet").select(pl.len()).collect().item() == want.height
    for series in folder_info(out).values():
        assert series.problems == [], series.name


def mine_the_same(node: NodeRPC, blocks: int) -> None:
    """Mine ``blocks`` empty blocks a second apart after the head: the same blocks, hashes and all, whichever test
    mines them on the built chain, so the cases of both layouts compare with one clean extraction (``CLEAN`` is keyed
    by the head's hash; ``anvil_mine`` stamps blocks from the clock, and each case had to extract again)."""
    stamp = int(node.call("eth_getBlockByNumber", "latest", False)["timestamp"], 16)
    for second in range(1, blocks + 1):
        node.call("evm_mine", {"timestamp": stamp + second})


def _objects(root: str) -> dict[str, bytes]:
    fs = s3_filesystem()
    return {key: fs.cat_file(key) for key in fs.find(root[5:])}


def _no_duplicates(out: str) -> None:
    con = duckdb.connect()
    for name in KILLED:
        folder = location(f"{out}/{name}")
        if snapshot_uris(folder) if is_delta_table(folder) else storage(folder).files(folder):
            frame = _read(_files(out, name), name, con)
            keys = ["block_number", "log_index" if name == "logs" else "transaction_index"]
            assert frame.select(keys[:1] if name == "blocks" else keys).is_duplicated().sum() == 0, name


@pytest.mark.slow  # with the test below, 15-70 s a layout: the file goes first on a worker (tests/conftest.py)
def test_a_bucket_run_equals_a_local_run_and_extends_in_place(
    chain: Devnet, node: NodeRPC, bucket: str, tmp_path: Path, layout: str
) -> None:
    out = f"{bucket}/chains/dev"
    report = extract(list(MAIN), blocks=RECENT, out=out, rpc=chain.http_url, chunk_size=100, progress=False,
                     table=layout)  # fmt: skip
    assert report.out == out
    assert report.datasets["logs"]["written"] == 2
    assert_same_as_local(chain, out, tmp_path, blocks=RECENT, chunk_size=100)
    tip = load_series(f"{out}/logs").chunks[-1]
    assert tip.meta.end == chain.truth.head
    if layout == "parquet":
        assert tip.path.name == "logs__31337__0000000200_to_0000000299.parquet"
    mine_the_same(node, 7)  # the tip is replaced by a longer one (the same key, or a Delta commit)
    again = extract(list(MAIN), blocks=RECENT, out=out, rpc=chain.http_url, progress=False)
    assert again.datasets["logs"]["written"] == 1
    assert len(load_series(f"{out}/logs").chunks) == 2
    assert_same_as_local(chain, out, tmp_path, blocks=RECENT, chunk_size=100)
    keys = s3_filesystem().find(out[5:])
    runs = [k for k in keys if "/.chainframe/runs/" in k]
    assert len(runs) >= 1  # the run reports are kept in the bucket, beside the data
    assert not [k for k in keys if k.endswith("/.chainframe/lease")]  # released
    proven = verify_stored(out, rpc=chain.node.url)  # every series in the bucket proven against the node
    assert proven.ok, proven.failures[:3]
    assert proven.rows_verified["logs"] == _read(_files(out, "logs"), "logs").height


@pytest.mark.slow
def test_sigkill_then_the_same_command_finishes_the_job(
    chain: Devnet, node: NodeRPC, bucket: str, tmp_path: Path, layout: str
) -> None:
    """Killed during a first run and during a reorg repair; a glob never sees a row twice, and the same command
    (which takes over the dead run's lease at once: its holder is a gone process of this machine) finishes. The
    finishing command runs in this process (``cli_main``): a new interpreter would only add its 0.6 CPU-s start-up."""
    rng = random.Random(1)
    assert chain.gateway is not None
    chain.gateway.configure(GatewaySettings(latency=0.01))
    out = f"{bucket}/dev"
    argv = [
        sys.executable, "-m", "chainframe.cli", "extract", *KILLED, "--blocks", KILLED_BLOCKS, "--rpc",
        chain.http_url, "--out", out, "--chunk-size", "40", "--concurrency", "2", "--no-progress", "--table", layout,
    ]  # fmt: skip
    lease = location(f"{out}/.chainframe/lease")
    assert isinstance(lease, ObjectPath)
    for phase in ("first run", "repair"):
        if phase == "repair":
            reorg(node, rng.randint(1, 30))
        # a run of the range asks for about 270 blocks (each block's header and its logs' witness), a repair 110
        kill_mid_run(chain, argv, rng.randint(10, 80))
        s3_filesystem().invalidate_cache()
        assert s3_filesystem().exists(lease.path), phase  # killed mid-run: its lease left behind, to be taken over
        _no_duplicates(out)
        assert cli_main(argv[3:]) == 0  # in this process: the killed run is the one whose process matters
    chain.gateway.configure(GatewaySettings())
    assert_same_as_local(chain, out, tmp_path, datasets=KILLED, blocks=KILLED_BLOCKS, chunk_size=40)


def test_a_reorg_between_runs_is_repaired_in_the_bucket(
    chain: Devnet, node: NodeRPC, bucket: str, tmp_path: Path, layout: str
) -> None:
    out = f"{bucket}/dev"
    extract(list(MAIN), blocks=RECENT, out=out, rpc=chain.http_url, chunk_size=100, progress=False, table=layout)
    reorg(node, 5)
    assert cli_main(["info", out, "--check", "--rpc", chain.http_url]) == 1  # it sees what the reorg took back
    report = extract(list(MAIN), blocks=RECENT, out=out, rpc=chain.http_url, progress=False)
    assert {r["series"] for r in report.reorgs} == set(MAIN)
    assert {r["fork_block"] for r in report.reorgs} == {chain.truth.head - 4}
    assert_same_as_local(chain, out, tmp_path, blocks=RECENT, chunk_size=100)


def test_follow_extends_and_repairs_the_bucket_round_after_round(
    chain: Devnet, node: NodeRPC, bucket: str, tmp_path: Path, layout: str
) -> None:
    out = f"{bucket}/dev"
    heads: list[int] = []

    def between_rounds(report: Any) -> None:
        heads.append(report.head)
        if len(heads) == 1:
            node.call("anvil_mine", hex(5))
        elif len(heads) == 2:
            reorg(node, 3)

    last = follow(list(KILLED), blocks=RECENT, out=out, rpc=chain.http_url, chunk_size=100, poll=0.05,
                  rounds=3, on_round=between_rounds, table=layout)  # fmt: skip
    assert heads == [240, 245, 245]
    assert last is not None
    assert {r["fork_block"] for r in last.reorgs} == {243}
    assert_same_as_local(chain, out, tmp_path, datasets=KILLED, blocks=RECENT, chunk_size=100)


def test_a_second_run_into_a_prefix_being_written_fails_at_once(chain: Devnet, bucket: str) -> None:
    assert chain.gateway is not None
    chain.gateway.configure(GatewaySettings(latency=0.05))
    out = f"{bucket}/dev"
    argv = [
        sys.executable, "-m", "chainframe.cli", "extract", *KILLED, "--blocks", "0:latest", "--rpc", chain.http_url,
        "--out", out, "--chunk-size", "20", "--no-progress",
    ]  # fmt: skip
    with subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as first:
        lease = location(f"{out}/.chainframe/lease")
        assert isinstance(lease, ObjectPath)
        deadline = time.monotonic() + 30
        while not s3_filesystem().exists(lease.path):
            assert first.poll() is None, "the first run ended before it was seen holding the lease"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        started = time.monotonic()
        with pytest.raises(InputError, match=r"being written by another chainframe run \(pid \d+ on "):
            extract(["blocks"], blocks="0:latest", out=out, rpc=chain.http_url, progress=False)
        assert time.monotonic() - started < 5
        assert first.wait(timeout=120) == 0, first.stderr.read() if first.stderr else ""
    chain.gateway.configure(GatewaySettings())
    assert not s3_filesystem().exists(lease.path)  # released at the end


def test_credentials_appear_in_no_output_object_or_error(
    chain: Devnet, bucket: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    out = f"{bucket}/dev"
    argv = ["extract", "blocks", "logs", "--blocks", "0:latest", "--rpc", chain.http_url, "--out", out]
    assert cli_main(argv) == 0
    assert cli_main(["info", out]) == 0
    assert cli_main(["info", out, "--json"]) == 0
    assert cli_main([*argv[:-1], "s3://no-such-bucket-cf/x"]) == 2  # refused before any request, in one line
    missing = subprocess.run(
        [sys.executable, "-m", "chainframe.cli", "info", "s3://no-such-bucket-cf/x"], capture_output=True, text=True
    )
    printed = capfd.readouterr()
    text = printed.out + printed.err + missing.stdout + missing.stderr
    assert "no-such-bucket-cf" in printed.err
    assert "Traceback" not in text
    objects = _objects(bucket)
    stored = b"".join(objects.values())
    assert b"_delta_log/" in b"\n".join(k.encode() for k in objects)  # the default layout on S3: Delta
    for secret in (SECRET, KEY_ID, chain.key):
        assert secret not in text
        assert secret.encode() not in stored
    with pytest.raises(InputError, match="not writable") as refused:
        extract(["blocks"], blocks="0:5", out="s3://no-such-bucket-cf/x", rpc=chain.http_url, progress=False)
    assert SECRET not in str(refused.value)
    assert chain.gateway is not None


def test_one_run_writes_a_prefix_at_a_time(bucket: str) -> None:
    root = ObjectPath(f"{bucket}/dev")
    with ObjectLease(root):
        with pytest.raises(InputError, match="being written by another chainframe run"):
            ObjectLease(root).__enter__()  # a live holder (this very process) is never taken over
        with ObjectLease(ObjectPath(f"{bucket}/other")):  # another prefix is another table
            pass
    lease = root / ".chainframe" / "lease"
    fs = s3_filesystem()
    # A holder elsewhere whose lease expired long ago is taken over; one still in time is not.
    for expires, taken in ((time.time() - 3600, True), (time.time() + 3600, False)):
        holder = {"owner": "x", "host": "elsewhere", "boot": "", "pid": 1, "expires": expires}
        fs.pipe_file(lease.path, json.dumps(holder).encode())
        if taken:
            with ObjectLease(root):
                assert json.loads(fs.cat_file(lease.path))["pid"] == os.getpid()
        else:
            with pytest.raises(InputError, match="pid 1 on elsewhere"):
                ObjectLease(root).__enter__()
    fs.rm(lease.path)


def test_a_lost_lease_stops_every_write(bucket: str) -> None:
    root = ObjectPath(f"{bucket}/dev")
    table = pa.table({"block_number": pa.array([1], pa.uint64())})
    meta = ChunkMeta(dataset="blocks", chain_id=1, start=1, end=1, chunk_size=10, rows=1, finalized=5)
    target = root / "blocks" / "blocks__1__0000000000_to_0000000009.parquet"
    with ObjectLease(root, renew=0.05) as held:
        write_chunk(table, target, meta)  # held: writes go through
        s3_filesystem().pipe_file((root / ".chainframe" / "lease").path, b"{}")  # another run took it over
        deadline = time.monotonic() + 10
        while not held.lost and time.monotonic() < deadline:
            time.sleep(0.05)
        with pytest.raises(LeaseLost, match="another run took the lease over"):
            write_chunk(table, target, meta)
        with pytest.raises(LeaseLost):
            storage(target).delete(target)
    assert read_meta(target) == meta  # the first write stands; nothing after the loss


def test_a_large_object_goes_up_in_parts_and_a_killed_upload_stays_invisible(
    bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_s3, "PART_BYTES", 5 * 2**20)  # S3's smallest part
    rows = 12
    blob = pa.array([os.urandom(2**20) for _ in range(rows)], pa.binary())  # incompressible: 12 MiB
    table = pa.table({"block_number": pa.array(range(rows), pa.uint64()), "data": blob})
    meta = ChunkMeta(dataset="blocks", chain_id=1, start=0, end=rows - 1, chunk_size=100, rows=rows, finalized=rows)
    folder = location(f"{bucket}/dev/blocks")
    target = folder / "blocks__1__0000000000_to_0000000099.parquet"
    write_chunk(table, target, meta, row_group_rows=4)
    assert read_meta(target) == meta
    assert _read(f"'{folder}/*.parquet'", "blocks")["data"].to_list() == blob.to_pylist()
    # A run killed mid-upload leaves an upload that never completed: no object, nothing for a glob to read.
    fs = s3_filesystem()
    assert isinstance(target, ObjectPath)
    other = folder / "blocks__1__0000000100_to_0000000199.parquet"
    assert isinstance(other, ObjectPath)
    started = fs.call_s3("create_multipart_upload", Bucket=other.bucket, Key=other.key)
    fs.call_s3(
        "upload_part", Bucket=other.bucket, Key=other.key, UploadId=started["UploadId"], PartNumber=1,
        Body=b"x" * 5 * 2**20,
    )  # fmt: skip
    assert [e.path for e in storage(folder).files(folder)] == [target]
    assert _read(f"'{folder}/*.parquet'", "blocks").height == rows
    assert load_series(folder).temporaries == (other,)  # info shows it (S3 bills its parts)
    assert storage(folder).clean_temporaries(folder) == 1
    assert load_series(folder).temporaries == ()
