"""Fenced writers without an external cluster (the cases with one are in ``test_dask_fencing.py``, whose helpers
these use): a run in one process paused while it fetches, and a coordinator stopped with its own local cluster. The
same real processes: moto's S3 server, the ``chainframe`` command, a devnet for the module (its chain as built for each
test); and the same ending: the bucket's tables equal, row by row, to a clean single-process extraction, with no
commit published after the run that took over."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from chainframe.devnet import Devnet
from tests.engine.test_dask_fencing import (
    BLOCKS,
    CHUNK,
    DATASETS,
    LEASE,
    PACED,
    _command,
    _env,
    _no_client_outlives_the_server,
    _paused_past_lease,
    _started,
    _take_over,
    _versions,
)
from tests.store.test_s3 import assert_same_as_local, bucket, chain, module_devnet, s3_endpoint

# the fixtures this module uses, from the store's S3 tests and the cluster's fencing tests
__all__ = ["_no_client_outlives_the_server", "bucket", "chain", "module_devnet", "s3_endpoint"]

WHOLE = "0:latest"
"""The paused fetcher's range: two slots of 120 blocks (the devnet's 240) and the head, so a second slot is being
fetched when it is paused."""


@pytest.mark.slow
def test_a_writer_paused_while_fetching_stops_within_a_lease_of_being_continued(
    chain: Devnet, bucket: str, tmp_path: Path
) -> None:
    """A run in one process, SIGSTOPped past its lease while it fetches, its prefix taken over by another run:
    continued, it stops within one lease period (its lease is watched once a second), not at its next commit, which
    with chunks of 120 paced blocks is about 14 s away."""
    out, chunk = f"{bucket}/dev", ["--chunk-size", "120"]
    with subprocess.Popen(_command(chain, out, *PACED, *chunk, blocks=WHOLE), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=_env()) as first:  # fmt: skip
        _started(first, out)
        versions, stopped, stdout, stderr = _paused_past_lease(
            first, out, lambda: _take_over(chain, out, *chunk, blocks=WHOLE)
        )
    print(f"the continued run stopped {stopped:.1f} s after SIGCONT")
    assert first.returncode != 0, stdout
    assert [line for line in stderr.splitlines() if line.strip()] == [stderr.strip()], stderr  # one line
    assert "another run" in stderr, stderr
    assert stopped < LEASE, f"the continued run took {stopped:.1f} s to stop"
    assert _versions(out) == versions
    assert_same_as_local(chain, out, tmp_path, datasets=DATASETS, chunk_size=120, blocks=WHOLE)


@pytest.mark.slow
def test_a_whole_stopped_process_group_publishes_nothing_when_continued(
    chain: Devnet, bucket: str, tmp_path: Path
) -> None:
    """(3) The coordinator and its local cluster (``--workers 2``: scheduler and workers in its process group) all
    stopped past the lease; another run takes over; the group continued: nothing of it becomes visible."""
    out = f"{bucket}/dev"
    with subprocess.Popen(_command(chain, out, "--workers", "2", *PACED), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=_env(), start_new_session=True) as first:  # fmt: skip
        _started(first, out)
        versions, _, stdout, stderr = _paused_past_lease(first, out, lambda: _take_over(chain, out), group=True)
    assert first.returncode != 0, stdout
    assert "Traceback" not in stderr
    assert _versions(out) == versions
    assert_same_as_local(chain, out, tmp_path, datasets=DATASETS, chunk_size=CHUNK, blocks=BLOCKS)


def test_a_dask_run_into_plain_parquet_on_s3_is_refused_before_any_request(
    chain: Devnet, bucket: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Plain Parquet objects on S3 are published by the process that spooled them: a Dask run there could not be
    fenced, so it is refused, naming the layout that can."""
    from chainframe import InputError, extract
    from chainframe.cli import main

    assert chain.gateway is not None
    chain.gateway.reset_stats()
    with pytest.raises(InputError, match=r"use --table delta \(table='delta'\)"):
        extract(["blocks"], blocks="0:latest", out=f"{bucket}/dev", rpc=chain.http_url, table="parquet",
                executor="local:2", progress=False)  # fmt: skip
    argv = ["extract", "blocks", "--blocks", "0:latest", "--rpc", chain.http_url, "--out", f"{bucket}/dev",
            "--table", "parquet", "--workers", "2"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "--table delta" in err
    assert chain.gateway.stats()["calls"] == {}  # nothing was sent
