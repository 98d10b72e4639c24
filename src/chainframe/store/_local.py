"""Chunk files in a local folder: rows go to a temporary beside the final name, committed by ``os.replace``."""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO

import pyarrow as pa
import pyarrow.parquet as pq

from chainframe._errors import InputError
from chainframe.store._storage import Entry, Location, Pending, Staged, StoreError

TEMPORARY = re.compile(r"^\..+\.tmp-(\d+)-[0-9a-f]+$")
"""Local temporaries: ``.<name>.tmp-<pid>-<random>``, which a ``*.parquet`` glob does not match."""


class _LocalPending:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.temporary = path.parent / f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
        self.sink: IO[bytes] = open(self.temporary, "xb")  # noqa: SIM115 (closed by commit or abort)

    def commit(self) -> None:
        LOCAL.publish(self.stage())

    def stage(self) -> Staged:
        self.sink.flush()
        os.fsync(self.sink.fileno())
        size = self.sink.tell()
        self.sink.close()
        return Staged(path=str(self.path), size=size, temporary=str(self.temporary))

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

    def publish(self, staged: Staged) -> None:
        if staged.temporary is None:
            raise StoreError(f"{staged.path} was not staged in a local folder")
        path = Path(staged.path)
        os.replace(staged.temporary, path)
        _fsync_folder(path.parent)

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

    def check_held(self, path: Location) -> None:
        """Nothing to check: a local folder's lock is the kernel's, held until the process ends (never lapses)."""

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
