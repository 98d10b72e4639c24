"""A run's end never waits long for S3: releasing the lease (the renewal in flight, then the DELETE) is given
:data:`~chainframe.store._lease.RELEASE` seconds in all, however S3 behaves. The S3 here is the session's moto server
behind a real TCP forwarder that can stop answering: requests are read and dropped, connections stay open, which is
what a partitioned network or a stalled server looks like to the client (whose own timeouts allow 60 s a read and four
attempts)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
import s3fs

from chainframe.store import ObjectPath
from chainframe.store._lease import RELEASE, ObjectLease
from chainframe.store._s3 import CLIENT_CONFIG, S3Objects, s3_filesystem
from tests.store.test_s3 import bucket, s3_endpoint

__all__ = ["bucket", "s3_endpoint"]  # the fixtures this module uses

SLACK = 0.5
"""Seconds allowed past the release's budget: thread wake-ups on a loaded two-core machine."""


class Stalling:
    """A TCP forwarder to ``upstream``; after :meth:`stall`, what clients send is read and dropped and nothing comes
    back, on open connections and new ones alike."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.stalled = threading.Event()
        self.dropped = 0
        self.sockets: list[socket.socket] = [self.listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def stall(self) -> None:
        self.stalled.set()

    def close(self) -> None:
        for each in self.sockets:
            each.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:  # closed
                return
            self.sockets.append(client)
            try:
                server = socket.create_connection(self.upstream)
            except OSError:  # S3 gone (the session ending): the client sees its connection closed
                client.close()
                continue
            self.sockets.append(server)
            for source, target in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, target), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                if self.stalled.is_set():
                    self.dropped += len(data)
                else:
                    target.sendall(data)
        except OSError:
            pass
        finally:  # one side closed: so is the other, as a direct connection would be
            for each in (source, target):
                each.close()


@pytest.fixture
def stalling(s3_endpoint: str) -> Iterator[Stalling]:
    proxy = Stalling(s3_endpoint)
    try:
        yield proxy
    finally:
        proxy.close()


def _through(proxy: Stalling) -> S3Objects:
    """The run's S3 objects, its client configured as every run's, reaching S3 through ``proxy``."""
    objects = S3Objects()
    objects._fs = s3fs.S3FileSystem(endpoint_url=proxy.url, use_listings_cache=False, skip_instance_cache=True,
                                    config_kwargs=CLIENT_CONFIG)  # fmt: skip
    return objects


def _lease_object(root: ObjectPath) -> bool:
    return bool(s3_filesystem().exists((root / ".chainframe" / "lease").path))


def test_a_release_answered_deletes_the_lease(bucket: str, stalling: Stalling) -> None:
    root = ObjectPath(f"{bucket}/answered")
    with ObjectLease(root, _through(stalling)):
        assert _lease_object(root)
    assert not _lease_object(root)
    assert stalling.dropped == 0


@pytest.mark.parametrize("renewing", [False, True], ids=["delete-unanswered", "renewal-unanswered"])
def test_a_release_unanswered_ends_within_its_budget(bucket: str, stalling: Stalling, renewing: bool) -> None:
    """S3 stops answering while the lease is held: with the renewal thread idle, the DELETE waits in vain; with a
    renewal sent and unanswered, the thread cannot be joined. Either way the release returns within its budget, and
    the lease is left behind (to expire, or to be taken over once this process is gone) rather than waited for."""
    root = ObjectPath(f"{bucket}/{'renewing' if renewing else 'idle'}")
    lease = ObjectLease(root, _through(stalling), renew=0.1 if renewing else None)
    lease.__enter__()
    stalling.stall()
    if renewing:
        time.sleep(0.5)  # a renewal goes out every 0.1 s: one is now waiting for its answer
    started = time.monotonic()
    lease.__exit__(None, None, None)
    took = time.monotonic() - started
    print(f"released in {took:.2f} s with S3 not answering ({stalling.dropped} bytes dropped)")
    assert took < RELEASE + SLACK, f"the release waited {took:.1f} s for S3"
    assert stalling.dropped > 0  # the request did go out, and went unanswered
    if renewing:
        assert lease._thread is not None
        assert lease._thread.is_alive()  # the renewal still waits: not joined
    assert _lease_object(root)  # left behind, not deleted
