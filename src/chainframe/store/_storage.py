"""Where chunk files live: a local folder or an S3 prefix, behind one small interface.

A *location* is a :class:`pathlib.Path` (a local folder or file) or an :class:`ObjectPath` (``s3://bucket/key``).
:func:`location` turns what a user gives into one; :func:`storage` gives the :class:`Storage` that reads and writes it.
The store above (series, chunks, info, lock) only ever calls these operations, so resume, extend, follow and reorg
repair are one code path for both. The implementations are :mod:`chainframe.store._local` and
:mod:`chainframe.store._s3`; the S3 prefix's single-writer lease is :mod:`chainframe.store._lease`.

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

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, NamedTuple, Protocol

import pyarrow.parquet as pq

from chainframe._errors import ChainframeError, InputError
from chainframe._redact import redact_url

_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
"""S3's rule for bucket names (no ``user:secret@`` either)."""


class StoreError(ChainframeError):
    """The storage refused or failed an operation (a missing bucket, access denied, an unreachable endpoint). The
    message names the location and the reason; never a credential."""


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


class Entry(NamedTuple):
    path: Location
    size: int


class Superseded(StoreError):
    """Another run took this output over while this one was writing (it was killed, paused or cut off past its lock
    or lease): nothing more of this run is published, and what it published before stays (it was whole). Re-run to
    continue from what the newer run left."""


class LeaseLost(Superseded):
    """This run no longer holds the lease on its S3 prefix (another run took it over, or may have: this one could not
    renew it in time): nothing more is written, and the run stops."""


@dataclass(frozen=True)
class Staged:
    """A whole file, not yet visible at its final name: plain data, so a Dask worker can hand it to the run's
    coordinator, which alone publishes (:meth:`Storage.publish`). ``temporary`` is a local temporary beside
    ``path``; ``spooled`` names a spool file of the process that staged it (S3), which only that process can
    publish."""

    path: str
    size: int
    temporary: str | None = None
    spooled: str | None = None


class Pending(Protocol):
    """A file being written: rows go to ``sink``; :meth:`commit` puts it at its final name in one atomic step,
    :meth:`abort` drops it (the final name is left as it was). :meth:`stage` finishes it without making it visible,
    for whoever holds the output's lock to :meth:`Storage.publish` it."""

    sink: IO[bytes]

    def commit(self) -> None: ...

    def stage(self) -> Staged: ...

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

    def publish(self, staged: Staged) -> None:
        """Put a staged file at its final name in one atomic step."""
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

    def check_held(self, path: Location) -> None:
        """Raise :class:`LeaseLost` if this process writes ``path`` under a lease it no longer safely holds: asked
        before every change that is not an object PUT of this storage (a Delta commit, a vacuum)."""
        ...
