"""Where chunk files live: a local folder or an S3 prefix, behind one small interface.

A *location* is a :class:`pathlib.Path` (a local folder or file) or an :class:`ObjectPath` (``s3://bucket/key``).
:func:`location` turns what a user gives into one; :func:`storage` gives the :class:`Storage` that reads and writes it.
The store above (series, chunks, info, lock) only ever calls these operations, so resume, extend, follow and reorg
repair are one code path for both.

Committing a file maps onto each medium's atomic step:

- local: rows stream into ``.<name>.tmp-<pid>-<random>`` beside the final name; commit fsyncs it and ``os.replace``\\ s
  it over the slot's name, then fsyncs the folder (see :mod:`chainframe.store._chunks`);
- S3: rows stream into an anonymous local spool file (unlinked at creation: a killed process leaves nothing); commit
  uploads it as the slot's object in one PUT (or one multipart upload above :data:`PART_BYTES`, which S3 makes visible
  only when it completes). S3 replaces an object atomically, so a reader listing ``*.parquet`` sees the old object or
  the new one, never a half-written one, and no temporary is ever visible to a glob.

One difference remains, inherent in replacing an object in place: a local reader that opened the old file keeps
reading it, while an S3 reader reads an object in several ranged GETs, and if that very object is replaced between
them it reads across versions. s3fs (so ``open_duckdb``) sends ``If-Match`` with the ETag and fails with
``FileExpired``; readers that do not can fail to decode. Only a tip slot being extended and slots rewritten by a
reorg repair are ever replaced; ``--align`` (whole slots only) with the default safe end replaces nothing.

S3 access goes through s3fs (fsspec) with botocore's usual configuration: credentials from the environment
(``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``/``AWS_SESSION_TOKEN``), ``AWS_PROFILE`` and the shared config files;
``AWS_ENDPOINT_URL`` (or ``AWS_ENDPOINT_URL_S3``, or ``endpoint_url`` in the profile) for S3-compatible servers. The
same variables are read by Polars and by the AWS CLI, so every reader agrees on where the bucket is. Errors are
translated at this boundary into :class:`StoreError` naming the location and what the server said; credentials are
never part of them (botocore does not put them in its messages, and we never format its configuration).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import IO, Any, Protocol, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from chainframe._errors import ChainframeError, InputError
from chainframe._redact import redact_text, redact_url

PART_BYTES = 64 * 2**20
"""Above this size an object is uploaded in parts of this size (memory holds one part, never the whole file)."""
FOOTER_TAIL = 64 * 2**10
"""Bytes read from the end of an object to get its Parquet footer in one request (a second one if it is longer)."""
TEMPORARY = re.compile(r"^\..+\.tmp-(\d+)-[0-9a-f]+$")
"""Local temporaries: ``.<name>.tmp-<pid>-<random>``, which a ``*.parquet`` glob does not match."""

T = TypeVar("T")
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
"""S3's rule for bucket names (no ``user:secret@`` either)."""


class StoreError(ChainframeError):
    """The storage refused or failed an operation (a missing bucket, access denied, an unreachable endpoint). The
    message names the location and the reason; never a credential."""


class LeaseLost(StoreError):
    """This run no longer holds the lease on its S3 prefix (another run took it over after this one stopped renewing
    it): nothing more is written."""


@dataclass(frozen=True, order=True)
class ObjectPath:
    """An object (or a prefix, like a folder) in a bucket: ``s3://bucket/key``, with the parts of pathlib the store
    uses (``name``, ``parent``, ``/``)."""

    url: str

    def __post_init__(self) -> None:
        if not self.url.startswith("s3://") or not _BUCKET.match(self.bucket):
            raise InputError(
                f"{redact_url(self.url)!r} is not an S3 URL with a valid bucket name; write s3://bucket/prefix "
                "(credentials go in AWS_* variables or a profile, never in the URL)"
            )

    @property
    def bucket(self) -> str:
        return self.url[5:].split("/", 1)[0]

    @property
    def key(self) -> str:
        """The key (or prefix) inside the bucket, without a leading or trailing slash; ``""`` for the bucket."""
        parts = self.url[5:].split("/", 1)
        return parts[1] if len(parts) > 1 else ""

    @property
    def path(self) -> str:
        """``bucket/key``, as s3fs names it."""
        return self.url[5:]

    @property
    def name(self) -> str:
        return self.url.rsplit("/", 1)[-1] if self.key else self.bucket

    @property
    def parent(self) -> ObjectPath:
        return ObjectPath(self.url.rsplit("/", 1)[0]) if self.key else self

    def __truediv__(self, name: str) -> ObjectPath:
        return ObjectPath(f"{self.url}/{name.strip('/')}")

    def __str__(self) -> str:
        return self.url


Location = Path | ObjectPath
"""A local path or an object path: what every function of the store takes."""


def location(value: str | os.PathLike[str] | Location) -> Location:
    """``s3://bucket/prefix`` as an :class:`ObjectPath`, anything else as a local :class:`Path`; other URL schemes
    are refused (they would otherwise become a local folder named ``gs:``)."""
    if isinstance(value, ObjectPath | Path):
        return value
    text = os.fspath(value)
    if text.startswith("s3://"):
        return ObjectPath("s3://" + re.sub("/+", "/", text[5:]).strip("/"))
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]+://", text):
        raise InputError(f"{text!r}: output goes to a local folder or to s3://bucket/prefix; no other URL scheme")
    return Path(text)


@dataclass(frozen=True)
class Entry:
    path: Location
    size: int


class Pending(Protocol):
    """A file being written: rows go to ``sink``; :meth:`commit` puts it at its final name in one atomic step,
    :meth:`abort` drops it (the final name is left as it was)."""

    sink: IO[bytes]

    def commit(self) -> None: ...

    def abort(self) -> None: ...


class Storage(Protocol):
    """The file operations the store needs; one implementation per medium."""

    def files(self, folder: Location) -> list[Entry]:
        """The ``*.parquet`` files directly in ``folder`` (none if it does not exist), sorted by name."""
        ...

    def folders(self, folder: Location) -> list[Location]:
        """The sub-folders of ``folder`` (none if it does not exist), sorted by name."""
        ...

    def exists(self, folder: Location) -> bool:
        """Whether ``folder`` exists (for S3: the prefix holds an object; S3 has no empty folders)."""
        ...

    def footers(self, paths: Sequence[Location]) -> list[pq.FileMetaData | None]:
        """Each file's Parquet footer, None where it is missing or is not a whole Parquet file."""
        ...

    def open_input(self, path: Location) -> IO[bytes]:
        """A file to stream the rows of ``path`` from."""
        ...

    def begin(self, path: Location) -> Pending:
        """Start writing ``path``."""
        ...

    def delete(self, path: Location) -> None:
        """Remove ``path``; nothing if it is gone already."""
        ...

    def temporaries(self, folder: Location) -> list[Location]:
        """What killed writers left in ``folder`` (invisible to ``*.parquet`` globs, but taking space)."""
        ...

    def clean_temporaries(self, folder: Location) -> int:
        """Remove the temporaries of writers that are gone; return how many."""
        ...

    def check_writable(self, folder: Location) -> None:
        """Raise :class:`InputError` unless files can be written under ``folder``, leaving nothing behind."""
        ...


def storage(where: Location) -> Storage:
    """The storage that holds ``where``."""
    return s3_storage() if isinstance(where, ObjectPath) else LOCAL


def write_bytes(path: Location, data: bytes) -> None:
    """Put ``data`` at ``path`` atomically (a small file: run reports)."""
    pending = storage(path).begin(path)
    try:
        pending.sink.write(data)
        pending.commit()
    except BaseException:
        pending.abort()
        raise


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


# --- local -----------------------------------------------------------------------------------------------------------


class _LocalPending:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.temporary = path.parent / f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
        self.sink: IO[bytes] = open(self.temporary, "xb")  # noqa: SIM115 (closed by commit or abort)

    def commit(self) -> None:
        self.sink.flush()
        os.fsync(self.sink.fileno())
        self.sink.close()
        os.replace(self.temporary, self.path)
        _fsync_folder(self.path.parent)

    def abort(self) -> None:
        self.sink.close()
        with contextlib.suppress(FileNotFoundError):
            self.temporary.unlink()


class LocalFiles:
    """A local folder: temporaries beside the final name, ``os.replace`` to commit."""

    def files(self, folder: Location) -> list[Entry]:
        folder = _local(folder)
        if not folder.is_dir():
            return []
        return [Entry(p, p.stat().st_size) for p in sorted(folder.glob("*.parquet")) if p.is_file()]

    def folders(self, folder: Location) -> list[Location]:
        folder = _local(folder)
        return [p for p in sorted(folder.iterdir()) if p.is_dir()] if folder.is_dir() else []

    def exists(self, folder: Location) -> bool:
        return _local(folder).is_dir()

    def footers(self, paths: Sequence[Location]) -> list[pq.FileMetaData | None]:
        out: list[pq.FileMetaData | None] = []
        for path in paths:
            try:
                out.append(pq.read_metadata(_local(path)))
            except (OSError, ValueError, pa.ArrowException):
                out.append(None)
        return out

    def open_input(self, path: Location) -> IO[bytes]:
        return open(_local(path), "rb")

    def begin(self, path: Location) -> Pending:
        return _LocalPending(_local(path))

    def delete(self, path: Location) -> None:
        _local(path).unlink(missing_ok=True)

    def temporaries(self, folder: Location) -> list[Location]:
        folder = _local(folder)
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.glob(".*.tmp-*") if TEMPORARY.match(p.name) and p.is_file())

    def clean_temporaries(self, folder: Location) -> int:
        """A temporary whose process is still alive belongs to a concurrent writer and is kept."""
        removed = 0
        for path in self.temporaries(folder):
            match = TEMPORARY.match(path.name)
            if match is None or process_alive(int(match.group(1))):
                continue
            with contextlib.suppress(FileNotFoundError):
                _local(path).unlink()
                removed += 1
        return removed

    def check_writable(self, folder: Location) -> None:
        """Checked by making and removing a folder in the nearest existing ancestor."""
        folder = _local(folder)
        if folder.exists() and not folder.is_dir():
            raise InputError(f"out={folder} is a file; give a folder for the datasets")
        existing = folder
        while not existing.exists():
            existing = existing.parent
        if not existing.is_dir():
            raise InputError(f"out={folder} cannot be made: {existing} is a file; give a folder for the datasets")
        try:
            os.rmdir(tempfile.mkdtemp(prefix=".chainframe-check-", dir=existing))
        except OSError as exc:
            raise InputError(
                f"out={folder} is not writable ({exc.strerror}: {existing}); choose another --out"
            ) from None


LOCAL = LocalFiles()


def _local(path: Location) -> Path:
    if not isinstance(path, Path):
        raise TypeError(f"{path} is not a local path")
    return path


def _fsync_folder(folder: Path) -> None:
    """Make the rename durable (POSIX); a no-op where folders cannot be opened."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    try:
        fd = os.open(folder, flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def process_alive(pid: int) -> bool:
    if pid <= 0:
        return False  # kill(0) would signal our own process group
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except (OverflowError, OSError, ValueError):
        return False
    return True


# --- S3 --------------------------------------------------------------------------------------------------------------


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

    def abort(self) -> None:
        self.sink.close()


class S3Objects:
    """An S3 bucket (or an S3-compatible server) through s3fs; see the module docstring."""

    def __init__(self) -> None:
        from chainframe.store._lease import Leases

        self.leases = Leases()
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
                config_kwargs={
                    "connect_timeout": 10,
                    "read_timeout": 60,
                    "retries": {"max_attempts": 4, "mode": "standard"},
                },
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
        folder = _remote(folder)

        def look() -> bool:
            try:
                return bool(self.fs.ls(folder.path))  # a prefix exists while it holds an object
            except FileNotFoundError:
                return False

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

    def check_writable(self, folder: Location) -> None:
        """A small object put and deleted under ``.chainframe/`` (which no ``*/*.parquet`` glob reads)."""
        folder = _remote(folder)
        probe = folder / ".chainframe" / f"check-{secrets.token_hex(6)}"
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


def read_batches(path: Location | str, **options: Any) -> Iterator[pa.RecordBatch]:
    """The rows of the Parquet file at ``path``, batch by batch (``options`` as for ``ParquetFile.iter_batches``),
    streamed from its storage with page checksums verified."""
    path = location(path)
    with storage(path).open_input(path) as source:
        yield from pq.ParquetFile(source, page_checksum_verification=True).iter_batches(**options)
