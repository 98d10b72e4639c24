"""One writer per output folder: locally an advisory lock that the kernel releases when the process ends, however it
ends; on S3 a lease object (:mod:`chainframe.store._lease`), which can be lost: :func:`while_held` stops the work done
under it within a second of that."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import TracebackType
from typing import TypeVar

import anyio

from chainframe._errors import InputError, first_error
from chainframe.store._layout import lock_path
from chainframe.store._lease import ObjectLease
from chainframe.store._storage import Location, ObjectPath, location

T = TypeVar("T")
WATCH = 1.0
"""Seconds between two looks at whether a run's lease is still held (:func:`while_held`)."""


def folder_lock(out: Location | str) -> FolderLock | ObjectLease:
    """Held while a run writes into ``out``: a :class:`FolderLock` for a local folder, an :class:`ObjectLease` for an
    S3 prefix. A second run fails at once with a clear error."""
    out = location(out)
    return ObjectLease(out) if isinstance(out, ObjectPath) else FolderLock(out)


class FolderLock:
    """Hold ``OUT/.chainframe/lock`` while a run writes into ``OUT``; a second run fails at once with a clear error."""

    def __init__(self, out: Path) -> None:
        self.path = lock_path(Path(out))
        self._fd: int | None = None

    def __enter__(self) -> FolderLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise InputError(
                f"{self.path.parent.parent} is being written by another chainframe run (pid {holder}); "
                "wait for it to finish, or extract into another --out"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        return self

    def watch(self) -> None:
        """Nothing to watch: the kernel holds the lock until the process ends (a paused process still holds it)."""

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


async def while_held(lock: FolderLock | ObjectLease, work: Callable[[], Awaitable[T]]) -> T:
    """``await work()`` while ``lock`` is held. Every :data:`WATCH` seconds the lock is watched: a lease another run
    took over, or one not renewed for a whole lease period (S3 unreachable, this process paused), cancels the work
    whatever it was doing (fetching, writing, waiting for workers) and raises :class:`LeaseLost`. So a run that lost
    its output stops within a lease period, rather than fetching on until its next commit is refused."""
    done: list[T] = []

    async def watch() -> None:
        while True:
            await anyio.sleep(WATCH)
            lock.watch()

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(watch)
            done.append(await work())
            group.cancel_scope.cancel()
    except BaseExceptionGroup as errors:
        raise first_error(errors) from None
    return done[0]
