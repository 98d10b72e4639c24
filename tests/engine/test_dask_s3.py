"""Dask workers writing into a bucket: the moto S3 server of the store's tests, two local worker processes (which
get the AWS_* variables from the environment, as workers elsewhere would from theirs)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import dask
import pytest
import s3fs

from chainframe import extract
from chainframe.devnet import Devnet
from chainframe.engine._dask import NO_PROGRESS_KEY
from tests.store.test_s3 import assert_same_as_local, bucket, chain, module_devnet, s3_endpoint

# the fixtures this module uses, from the store's S3 tests
__all__ = ["bucket", "chain", "module_devnet", "s3_endpoint"]


@pytest.fixture(scope="module", autouse=True)
def _no_client_outlives_the_server(s3_endpoint: str) -> Iterator[None]:
    """s3fs keeps one file system per set of arguments, bound to the endpoint it was made for: with this module's
    moto server gone, the next module's server would be asked for at this one's address (and the other way)."""
    s3fs.S3FileSystem.clear_instance_cache()
    yield
    s3fs.S3FileSystem.clear_instance_cache()


@pytest.mark.slow
def test_two_workers_fill_a_bucket_as_one_process_fills_a_folder(chain: Devnet, bucket: str, tmp_path: Path) -> None:
    out = f"{bucket}/chains/dev"
    # This test once hung in CI (both workers on their first chunks, none finishing): should it again, fail well
    # before pytest's timeout, with the chunks, their workers and the workers' stacks in the error and the log.
    with dask.config.set({NO_PROGRESS_KEY: "60s"}):
        report = extract(
            ["blocks", "logs"], blocks="0:latest", out=out, rpc=chain.http_url, chunk_size=50, progress=False,
            executor="local:2",
        )  # fmt: skip
    assert report.datasets["logs"]["written"] == 5
    assert_same_as_local(chain, out, tmp_path, datasets=("blocks", "logs"), chunk_size=50)
