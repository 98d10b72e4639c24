"""Dask workers writing into a bucket: the moto S3 server of the store's tests, two local worker processes (which
get the AWS_* variables from the environment, as workers elsewhere would from theirs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chainframe import extract
from chainframe.devnet import Devnet
from tests.store.test_s3 import assert_same_as_local, bucket, chain, s3_endpoint

__all__ = ["bucket", "chain", "s3_endpoint"]  # the fixtures this module uses, from the store's S3 tests


@pytest.mark.slow
def test_two_workers_fill_a_bucket_as_one_process_fills_a_folder(chain: Devnet, bucket: str, tmp_path: Path) -> None:
    out = f"{bucket}/chains/dev"
    report = extract(
        ["blocks", "logs"], blocks="0:latest", out=out, rpc=chain.http_url, chunk_size=50, progress=False,
        executor="local:2",
    )  # fmt: skip
    assert report.datasets["logs"]["written"] == 5
    assert_same_as_local(chain, out, tmp_path, datasets=("blocks", "logs"), chunk_size=50)
