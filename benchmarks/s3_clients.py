"""The two S3 clients the store could use, on the store's two hot operations, against a local S3 server (moto's).

``scripts/bench s3_clients [--files N] [--mib M]``: reads the footers of N chunk objects (what every run and
``info`` does) and uploads one object of M MiB (a chunk's commit), with s3fs as the store uses it (suffix-range GETs
run concurrently; one PUT) and with pyarrow.fs.S3FileSystem (``pq.read_metadata`` per object; an output stream).
Prints seconds and the ratio pyarrow / s3fs. The server is local, so this measures the clients' per-request costs,
not a network; the choice of s3fs rests on features (conditional writes, AWS_ENDPOINT_URL, DuckDB), this only checks
it costs nothing in speed.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from tests.store.s3server import moto_server

from chainframe.store import ObjectPath, s3_filesystem, storage
from chainframe.store._s3 import s3_storage


def _best(run: Callable[[], Any], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--mib", type=int, default=32)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, moto_server(Path(tmp) / "moto.log") as url:
        os.environ.update(
            AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_ENDPOINT_URL=url,  # noqa: S106
            AWS_DEFAULT_REGION="us-east-1", AWS_EC2_METADATA_DISABLED="true",
        )  # fmt: skip
        fs = s3_filesystem()
        fs.mkdir("bench")
        arrow = pafs.S3FileSystem(endpoint_override=url, region="us-east-1", scheme="http")
        table = pa.table({"block_number": pa.array(range(20_000), pa.uint64()), "x": pa.array(range(20_000))})
        local = Path(tmp) / "chunk.parquet"
        pq.write_table(table, local, compression="zstd")
        body = local.read_bytes()
        paths = [ObjectPath(f"s3://bench/footers/f{i:05d}.parquet") for i in range(args.files)]
        fs.pipe({p.path: body for p in paths})

        s3fs_footers = _best(lambda: storage(paths[0]).footers(paths))
        arrow_footers = _best(lambda: [pq.read_metadata(p.path, filesystem=arrow) for p in paths])

        blob = os.urandom(args.mib * 2**20)
        target = ObjectPath("s3://bench/upload/big.parquet")

        def s3fs_put() -> None:
            with tempfile.TemporaryFile() as spool:
                spool.write(blob)
                spool.seek(0)
                s3_storage().upload(target, spool, len(blob))  # the store's commit: one PUT, or parts

        def arrow_put() -> None:
            with arrow.open_output_stream(target.path) as stream:
                stream.write(blob)

        s3fs_upload = _best(s3fs_put)
        arrow_upload = _best(arrow_put)
    print(f"footers of {args.files} objects: s3fs {s3fs_footers:.3f} s, pyarrow.fs {arrow_footers:.3f} s "
          f"(pyarrow / s3fs = {arrow_footers / s3fs_footers:.2f}x)")  # fmt: skip
    print(f"upload of {args.mib} MiB: s3fs {s3fs_upload:.3f} s, pyarrow.fs {arrow_upload:.3f} s "
          f"(pyarrow / s3fs = {arrow_upload / s3fs_upload:.2f}x)")  # fmt: skip


if __name__ == "__main__":
    main()
