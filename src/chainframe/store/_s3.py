"""Chunk files under an S3 prefix, through s3fs (see :mod:`chainframe.store._storage` for the commit protocol)."""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
import threading
from collections.abc import Callable, Sequence
from functools import cache, partial
from typing import IO, TYPE_CHECKING, Any, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from chainframe._errors import InputError
from chainframe._redact import redact_text
from chainframe.store._layout import probe_path
from chainframe.store._storage import Entry, LeaseLost, Location, ObjectPath, Pending, Staged, StoreError

if TYPE_CHECKING:
    from chainframe.store._lease import ObjectLease

PART_BYTES = 64 * 2**20
"""Above this size an object is uploaded in parts of this size (memory holds one part, never the whole file)."""
FOOTER_TAIL = 64 * 2**10
"""Bytes read from the end of an object to get its Parquet footer in one request (a second one if it is longer)."""
T = TypeVar("T")


def footer_from_tail(tail: bytes, fetch: Callable[[int], bytes]) -> pq.FileMetaData | None:
    """The Parquet footer in ``tail``, the last bytes of a file (all of it if it is shorter than :data:`FOOTER_TAIL`);
    ``fetch(n)`` reads the last ``n`` bytes when the footer is longer. None if it is not a whole Parquet file."""
    if len(tail) < 12 or tail[-4:] != b"PAR1":
        return None
    need = int.from_bytes(tail[-8:-4], "little") + 8
    if need > len(tail):  # a long footer (or a short file that is not whole)
        tail = fetch(need + 4) if len(tail) >= FOOTER_TAIL else b""
        if len(tail) < need + 4:  # the file must hold the leading magic number too
            return None
    try:
        return pq.read_metadata(pa.BufferReader(tail[-need:]))
    except (OSError, ValueError, pa.ArrowException):
        return None


def s3_filesystem() -> Any:
    """The s3fs file system the store uses (to register with DuckDB, for one)."""
    return s3_storage().fs


@cache
def s3_storage() -> S3Objects:
    """One S3 storage per process (s3fs keeps a pool of connections and its own event loop thread)."""
    return S3Objects()


class _S3Pending:
    def __init__(self, owner: S3Objects, path: ObjectPath) -> None:
        self.owner, self.path = owner, path
        self.sink: IO[bytes] = tempfile.TemporaryFile(prefix="chainframe-spool-")  # noqa: SIM115 (closed below)

    def commit(self) -> None:
        try:
            self.owner.leases.check(self.path)
            self.sink.flush()
            size = self.sink.seek(0, os.SEEK_END)
            self.sink.seek(0)
            self.owner.upload(self.path, self.sink, size)
        finally:
            self.sink.close()

    def stage(self) -> Staged:
        """The spool is kept open (and unlinked, so a killed process leaves nothing) until :meth:`S3Objects.publish`
        uploads it, in this process: a spool cannot travel, so the plain layout on S3 is written by one process."""
        self.sink.flush()
        size = self.sink.seek(0, os.SEEK_END)
        token = f"{os.getpid()}-{secrets.token_hex(8)}"
        self.owner.spools[token] = self
        return Staged(path=str(self.path), size=size, spooled=token)

    def abort(self) -> None:
        self.sink.close()


class Leases:
    """The leases this process holds, by prefix: commits under a prefix check its lease (if this process took one)."""

    def __init__(self) -> None:
        self._held: dict[str, ObjectLease] = {}
        self._guard = threading.Lock()

    def add(self, lease: ObjectLease) -> None:
        with self._guard:
            self._held[str(lease.root)] = lease

    def remove(self, lease: ObjectLease) -> None:
        with self._guard:
            if self._held.get(str(lease.root)) is lease:
                del self._held[str(lease.root)]

    def check(self, path: ObjectPath) -> None:
        """Raise :class:`LeaseLost` if a lease of this process covers ``path`` and is no longer safely held."""
        with self._guard:
            held = [lease for root, lease in self._held.items() if str(path).startswith(root + "/")]
        for lease in held:
            lease.check()


CLIENT_CONFIG: dict[str, Any] = {
    "connect_timeout": 10,
    "read_timeout": 60,
    "retries": {"max_attempts": 4, "mode": "standard"},
}
"""botocore's settings for every S3 client of a run: each wait bounded (a call that must end sooner, as a lease's
release, is given its own deadline)."""


class S3Objects:
    """An S3 bucket (or an S3-compatible server) through s3fs; see the module docstring."""

    def __init__(self) -> None:
        self.leases = Leases()
        self.spools: dict[str, _S3Pending] = {}
        """Staged files of this process, waiting to be published."""
        self._fs: Any = None

    @property
    def fs(self) -> Any:
        """The s3fs file system: listings never cached (other runs change them); every wait bounded."""
        if self._fs is None:
            try:
                import s3fs
            except ImportError:
                raise InputError("s3:// output needs s3fs: pip install 'chainframe[s3]'") from None
            self._fs = s3fs.S3FileSystem(
                use_listings_cache=False,
                config_kwargs=CLIENT_CONFIG,
            )
        return self._fs

    def call(self, what: str, where: Location, action: Callable[[], T]) -> T:
        """``action()``, its errors translated into :class:`StoreError` naming ``what`` and ``where``."""
        try:
            return action()
        except (LeaseLost, InputError):
            raise
        except FileNotFoundError as exc:
            raise StoreError(f"cannot {what} {where}: not found ({_reason(exc)})") from None
        except PermissionError as exc:
            raise StoreError(f"cannot {what} {where}: access denied ({_reason(exc)})") from None
        except Exception as exc:  # botocore and s3fs errors have no common base besides Exception
            raise StoreError(f"cannot {what} {where}: {_reason(exc)}") from None

    def s3(self, what: str, where: Location, operation: str, **params: Any) -> Any:
        """One S3 API call (botocore's ``operation`` with ``params``), errors translated as by :meth:`call`."""
        return self.call(what, where, lambda: self.fs.call_s3(operation, **params))

    def files(self, folder: Location) -> list[Entry]:
        folder = _remote(folder)

        def ls() -> list[Entry]:
            try:
                found = self.fs.ls(folder.path, detail=True)
            except FileNotFoundError:
                return []
            return [
                Entry(ObjectPath("s3://" + e["name"]), int(e["size"]))
                for e in found
                if e["type"] == "file" and e["name"].endswith(".parquet")
            ]

        return sorted(self.call("list", folder, ls), key=lambda e: str(e.path))

    def folders(self, folder: Location) -> list[Location]:
        folder = _remote(folder)

        def ls() -> list[Location]:
            try:
                found = self.fs.ls(folder.path, detail=True)
            except FileNotFoundError:
                return []
            return [ObjectPath("s3://" + e["name"].rstrip("/")) for e in found if e["type"] == "directory"]

        return sorted(self.call("list", folder, ls), key=str)

    def exists(self, folder: Location) -> bool:
        """Whether the prefix holds an object: one listing of at most one key. (A whole listing of a Delta table's
        log, a thousand commits a page, was made up to five times a run to ask whether a folder is a table.)"""
        folder = _remote(folder)
        prefix = f"{folder.key}/" if folder.key else ""

        def look() -> bool:
            try:
                found = self.fs.call_s3("list_objects_v2", Bucket=folder.bucket, Prefix=prefix, MaxKeys=1)
            except FileNotFoundError:  # no such bucket
                return False
            return int(found.get("KeyCount", 0)) > 0

        return self.call("list", folder, look)

    def footers(self, paths: Sequence[Location]) -> list[pq.FileMetaData | None]:
        """Footers with one suffix-range GET per file, all of them at once (s3fs runs them concurrently)."""
        if not paths:
            return []
        names = [_remote(p).path for p in paths]
        tails = self.call(
            "read", paths[0].parent,
            lambda: self.fs.cat_ranges(names, [-FOOTER_TAIL] * len(names), [None] * len(names), on_error="return"),
        )  # fmt: skip
        out: list[pq.FileMetaData | None] = []
        for path, name, tail in zip(paths, names, tails, strict=True):
            if isinstance(tail, BaseException):
                if not isinstance(tail, FileNotFoundError):
                    self.call("read", path, partial(_raise, tail))
                out.append(None)
                continue

            def fetch(n: int, name: str = name, path: Location = path) -> bytes:
                data: bytes = self.call("read", path, lambda: self.fs.cat_file(name, start=-n))
                return data

            out.append(footer_from_tail(bytes(tail), fetch))
        return out

    def open_input(self, path: Location) -> IO[bytes]:
        path = _remote(path)
        handle: IO[bytes] = self.call(
            "read", path, lambda: self.fs.open(path.path, "rb", block_size=8 * 2**20, cache_type="readahead")
        )
        return handle

    def begin(self, path: Location) -> Pending:
        return _S3Pending(self, _remote(path))

    def upload(self, path: ObjectPath, source: IO[bytes], size: int) -> None:
        """``source`` as the object ``path``, visible whole or not at all: one PUT, or a multipart upload that is
        aborted (never completed) if a part fails."""
        where = {"Bucket": path.bucket, "Key": path.key}
        if size <= PART_BYTES:
            self.s3("write", path, "put_object", Body=source.read(), **where)
            return
        upload_id = self.s3("write", path, "create_multipart_upload", **where)["UploadId"]
        try:
            parts: list[dict[str, Any]] = []
            while chunk := source.read(PART_BYTES):
                number = len(parts) + 1
                done = self.s3("write", path, "upload_part", UploadId=upload_id, PartNumber=number, Body=chunk, **where)
                parts.append({"PartNumber": number, "ETag": done["ETag"]})
            self.leases.check(path)
            self.s3(
                "write", path, "complete_multipart_upload", UploadId=upload_id, MultipartUpload={"Parts": parts},
                **where,
            )  # fmt: skip
        except BaseException:
            with contextlib.suppress(Exception):
                self.fs.call_s3("abort_multipart_upload", Bucket=path.bucket, Key=path.key, UploadId=upload_id)
            raise

    def publish(self, staged: Staged) -> None:
        pending = self.spools.pop(staged.spooled or "", None)
        if pending is None:
            raise StoreError(
                f"{staged.path} was staged in another process: the plain Parquet layout on S3 is written by one "
                "process; write with --table delta (table='delta') to commit chunks written on Dask workers"
            )
        pending.commit()

    def delete(self, path: Location) -> None:
        path = _remote(path)
        self.leases.check(path)
        self.s3("delete", path, "delete_object", Bucket=path.bucket, Key=path.key)

    def _uploads(self, folder: ObjectPath) -> list[dict[str, Any]]:
        prefix = folder.key + "/" if folder.key else ""

        def pending() -> list[dict[str, Any]]:
            answer = self.fs.call_s3("list_multipart_uploads", Bucket=folder.bucket, Prefix=prefix)
            uploads: list[dict[str, Any]] = answer.get("Uploads", [])
            return [u for u in uploads if "/" not in u["Key"][len(prefix) :]]

        return self.call("list uploads in", folder, pending)

    def temporaries(self, folder: Location) -> list[Location]:
        """Multipart uploads that never completed: invisible to readers, but S3 bills their parts."""
        folder = _remote(folder)
        return sorted({ObjectPath(f"s3://{folder.bucket}/{u['Key']}") for u in self._uploads(folder)}, key=str)

    def clean_temporaries(self, folder: Location) -> int:
        """Called with the prefix's lease held: no other run is uploading into it, so every pending upload is a
        killed run's."""
        folder = _remote(folder)
        uploads = self._uploads(folder)
        for upload in uploads:
            self.s3(
                "abort an upload in", folder, "abort_multipart_upload", Bucket=folder.bucket, Key=upload["Key"],
                UploadId=upload["UploadId"],
            )  # fmt: skip
        return len(uploads)

    def check_held(self, path: Location) -> None:
        self.leases.check(_remote(path))

    def check_writable(self, folder: Location) -> None:
        """A small object put and deleted under ``.chainframe/`` (which no ``*/*.parquet`` glob reads)."""
        folder = _remote(folder)
        probe = probe_path(folder, secrets.token_hex(6))
        try:
            self.fs.call_s3("put_object", Bucket=probe.bucket, Key=probe.key, Body=b"")
            self.fs.call_s3("delete_object", Bucket=probe.bucket, Key=probe.key)
        except InputError:
            raise
        except Exception as exc:
            raise InputError(
                f"out={folder} is not writable ({_reason(exc)}); check the bucket name, the credentials "
                "(AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE) and, for an S3-compatible server, "
                "AWS_ENDPOINT_URL"
            ) from None


def _remote(path: Location) -> ObjectPath:
    if not isinstance(path, ObjectPath):
        raise TypeError(f"{path} is not an S3 path")
    return path


def _raise(exc: BaseException) -> None:
    raise exc


def _reason(exc: BaseException) -> str:
    """What the server or client said, in one line (botocore's texts name the operation and the error code)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    keys = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ACCESS_KEY_ID")
    return redact_text(text, *(os.environ.get(k, "") for k in keys))[:300]
