"""One writer per S3 prefix: a lease object created with a conditional PUT, renewed while the run writes.

S3 has no ``flock``. The run that writes ``s3://bucket/prefix`` holds ``prefix/.chainframe/lease``, a small JSON
object (owner token, host, boot id, pid, expiry; no credentials):

- **acquire**: ``PUT`` with ``If-None-Match: *``, which S3 (and moto, MinIO, R2) refuses with 412 when the object
  exists, so of two runs starting together exactly one creates it;
- **renew**: every :data:`RENEW` seconds a thread rewrites it with a later expiry, ``If-Match`` the ETag it last wrote;
  a 412 means another run took it over: the lease is lost;
- **take over** a lease that is stale (its expiry passed, with :data:`SKEW` seconds of allowance for clocks, or its
  holder was a process on this machine that is gone, as after a SIGKILL): ``PUT`` ``If-Match`` the stale ETag, so of
  two runs taking over together exactly one wins;
- **release**: ``DELETE`` ``If-Match`` our ETag, waited for at most :data:`RELEASE` seconds (a lease left behind
  expires; a run on this machine takes it over at once once its holder's process is gone).

Every commit (a chunk's PUT, a deletion) first checks that the lease is held and was renewed within :data:`VALID`
seconds; a run that cannot renew it (a network partition, a process paused for a minute) stops writing before its
lease can expire, and fails with :class:`LeaseLost`.

Limits, as for any lease without fencing tokens on the storage side: a PUT that was checked and then stalls in flight
for longer than ``TTL - VALID`` (30 s) could land after another run took over the prefix; and the clocks of two
machines sharing a prefix must agree within :data:`SKEW`. The server must support conditional writes (AWS S3 since
2024, moto, MinIO, Cloudflare R2); one that ignores the headers would let two runs write at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from chainframe._errors import InputError
from chainframe.store._layout import lease_path
from chainframe.store._local import process_alive
from chainframe.store._s3 import S3Objects, s3_storage
from chainframe.store._storage import LeaseLost, ObjectPath

TTL = 60.0
"""Seconds a lease lasts without renewal, unless ``CHAINFRAME_LEASE_SECONDS`` says otherwise (:func:`lease_seconds`);
renewals come every sixth of it, commits need one at most half of it old, and another machine waits half of it more
past the expiry (clocks are not exactly in step)."""
RENEW = 10.0
"""Seconds between renewals (with the default :data:`TTL`)."""
VALID = 30.0
"""A commit needs a renewal (or the acquisition) at most this many seconds old."""
SKEW = 30.0
"""Seconds past its expiry before another machine may take a lease over (clocks are not exactly in step)."""
RELEASE = 1.0
"""Seconds a run's end may wait for S3 to release its lease (the renewal in flight, then the DELETE)."""
LEASE_VARIABLE = "CHAINFRAME_LEASE_SECONDS"


def lease_seconds() -> float:
    """The lease's duration: ``$CHAINFRAME_LEASE_SECONDS`` (a shorter lease lets another run take over a stopped
    one's prefix sooner, at the price of more renewals), else :data:`TTL`."""
    text = os.environ.get(LEASE_VARIABLE)
    if not text:
        return TTL
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 1.0 <= seconds <= 86_400.0:
        raise InputError(f"{LEASE_VARIABLE} must be a number of seconds from 1 to 86400; got {text!r}")
    return seconds


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


class ObjectLease:
    """Hold the lease on an S3 prefix while a run writes into it (``with ObjectLease(root):``)."""

    def __init__(
        self, root: ObjectPath, objects: S3Objects | None = None, *, ttl: float | None = None,
        renew: float | None = None,
    ) -> None:  # fmt: skip
        self.root = root
        self.path = lease_path(root)
        self.objects = objects or s3_storage()
        self.ttl = lease_seconds() if ttl is None else ttl
        self.renew = renew if renew is not None else RENEW * self.ttl / TTL
        self.token = secrets.token_hex(8)
        self._etag: str | None = None
        self._renewed = 0.0
        self._lost = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the object --

    def _body(self) -> bytes:
        holder = {
            "owner": self.token, "host": socket.gethostname(), "boot": _boot_id(), "pid": os.getpid(),
            "expires": time.time() + self.ttl,
        }  # fmt: skip
        return json.dumps(holder, sort_keys=True).encode()

    def _put(self, **condition: str) -> str:
        path = self.path
        answer = self.objects.fs.call_s3(
            "put_object", Bucket=path.bucket, Key=path.key, Body=self._body(), ContentType="application/json",
            **condition,
        )  # fmt: skip
        etag: str = answer["ETag"]
        return etag

    def _read(self) -> tuple[dict[str, Any], str] | None:
        path = self.path
        try:
            answer = self.objects.fs.call_s3("get_object", Bucket=path.bucket, Key=path.key)
        except FileNotFoundError:
            return None
        data = _read_body(self.objects, answer["Body"])
        try:
            holder = json.loads(data)
        except ValueError:
            holder = {}
        return (holder if isinstance(holder, dict) else {}), str(answer["ETag"])

    # -- acquire, renew, release --

    def __enter__(self) -> ObjectLease:
        self.objects.call("take the lease on", self.root, self._acquire)
        self._renewed = time.monotonic()
        self.objects.leases.add(self)
        self._thread = threading.Thread(target=self._renew_loop, name="chainframe-lease", daemon=True)
        self._thread.start()
        return self

    def _acquire(self) -> None:
        for _ in range(3):  # the lease may vanish between a refused create and our read
            try:
                self._etag = self._put(IfNoneMatch="*")
                return
            except OSError as exc:
                if not _precondition(exc):
                    raise
            current = self._read()
            if current is None:
                continue
            holder, etag = current
            skew = min(SKEW, self.ttl / 2)
            why = _stale(holder, skew=skew)
            if not why:
                raise InputError(_busy(self.root, holder, skew=skew))
            try:
                self._etag = self._put(IfMatch=etag)
                return
            except OSError as exc:
                if not _precondition(exc):
                    raise
                continue  # another run took it over first: look again
        raise InputError(f"{self.root} is being written by another chainframe run (its lease keeps changing)")

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.renew):
            try:
                assert self._etag is not None
                self._etag = self._put(IfMatch=self._etag)
                self._renewed = time.monotonic()
            except OSError as exc:
                if _precondition(exc):
                    self._lost = "another run took the lease over"
                    return
            except Exception:  # noqa: S112 (a failed renewal is retried; check() stops commits once it is too old)
                continue

    @property
    def lost(self) -> str:
        """Why the lease was lost ("" while it is held)."""
        return self._lost

    def check(self, *, within: float | None = None) -> None:
        """Raise :class:`LeaseLost` if the lease was taken over, or not renewed within ``within`` seconds (by default
        what a commit needs: at most half the lease, so that it lands well before anyone may take the lease over)."""
        if self._lost:
            raise LeaseLost(f"the lease on {self.root} is lost ({self._lost}); nothing more is written")
        age = time.monotonic() - self._renewed
        if age > (min(VALID, self.ttl / 2) if within is None else within):
            raise LeaseLost(
                f"the lease on {self.root} was last renewed {age:.0f} s ago (S3 unreachable, or this process was "
                "paused): another run may take it over, so nothing more is written; run again"
            )

    def watch(self) -> None:
        """What a run checks while it works (:func:`~chainframe.store._lock.while_held`): the lease was taken over,
        or not renewed for a whole lease period. Laxer than a commit's :meth:`check`, so that a renewal slowed down
        (a loaded machine, a slow answer) stops the next commit, not all the work."""
        self.check(within=self.ttl)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Release the lease within :meth:`release_budget` seconds whatever S3 does (Ctrl-C stops within a second).
        Releasing is a courtesy: a lease left behind (a renewal or the DELETE still unanswered when the budget ends)
        is taken over at once by a run on this machine once this process is gone, and by any run once it expired."""
        deadline = time.monotonic() + self.release_budget()
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=deadline - time.monotonic())
        self.objects.leases.remove(self)
        idle = self._thread is None or not self._thread.is_alive()  # else a renewal is in flight: our ETag is moot
        if self._etag is not None and not self._lost and idle:
            path = self.path
            with contextlib.suppress(Exception):  # an expired lease is taken over by the next run anyway
                _bounded(self.objects, deadline - time.monotonic(), "delete_object", Bucket=path.bucket, Key=path.key,
                         IfMatch=self._etag)  # fmt: skip
        self._etag = None

    def release_budget(self) -> float:
        """Seconds the release may wait for S3 in all: :data:`RELEASE`, less for a lease under four times as long."""
        return min(RELEASE, self.ttl / 4)


def _bounded(objects: S3Objects, seconds: float, operation: str, **params: Any) -> None:
    """One S3 call given at most ``seconds`` (then cancelled: fsspec's ``sync`` raises its timeout error). The
    client's own timeouts (60 s a read, 4 attempts) suit a chunk's upload, not a wait at exit."""
    from fsspec.asyn import sync

    if seconds <= 0:
        raise TimeoutError(f"no time left for {operation}")
    sync(objects.fs.loop, objects.fs._call_s3, operation, timeout=seconds, **params)


def _read_body(objects: S3Objects, body: Any) -> bytes:
    """The bytes of a get_object answer's streaming body (aiobotocore's, read on s3fs's event loop)."""
    from fsspec.asyn import sync

    async def read() -> bytes:
        async with body:
            data: bytes = await body.read()
            return data

    result: bytes = sync(objects.fs.loop, read)
    return result


def _precondition(exc: BaseException) -> bool:
    """Whether S3 answered 412 Precondition Failed (s3fs turns it into FileExistsError or an OSError)."""
    return isinstance(exc, FileExistsError) or "pre-condition" in str(exc).lower() or "412" in str(exc)


def _stale(holder: dict[str, Any], *, skew: float) -> str:
    """Why the holder's lease can be taken over ("" if it cannot)."""
    same_machine = holder.get("host") == socket.gethostname() and holder.get("boot") == _boot_id()
    pid = holder.get("pid")
    if same_machine and isinstance(pid, int) and pid != os.getpid() and not process_alive(pid):
        return f"its holder (pid {pid} on this machine) is gone"
    expires = holder.get("expires")
    if not isinstance(expires, int | float) or expires + skew < time.time():
        return "it expired"
    return ""


def _busy(root: ObjectPath, holder: dict[str, Any], *, skew: float) -> str:
    """Why ``root`` cannot be taken now: the holder, and when its lease can be taken over (its expiry plus the
    ``skew`` this run allows for clocks: the wait actually in force, whatever the lease's length)."""
    expires = holder.get("expires")
    left = f"; if that run is gone, its lease can be taken over in {max(expires + skew - time.time(), 0):.0f} s" if (
        isinstance(expires, int | float)) else ""  # fmt: skip
    who = f"pid {holder.get('pid')} on {holder.get('host')}"
    return f"{root} is being written by another chainframe run ({who}){left}; wait for it, or write to another prefix"
