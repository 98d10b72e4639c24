"""moto's S3 server as a process of its own, for the bucket tests and the S3 benchmark."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def moto_server(log: Path, *, requests_logged: bool = False) -> Iterator[str]:
    """Start moto's S3 server on a free loopback port (its output in ``log``, a line per request where
    ``requests_logged``: the Delta benchmark counts them); yield its URL; stop it after."""
    port = _free_port()
    quiet = [] if requests_logged else ["--quiet"]
    with open(log, "wb") as sink:
        server = subprocess.Popen(
            [sys.executable, __file__, "-H", "127.0.0.1", "-p", str(port), *quiet], stdout=sink, stderr=sink
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError(f"moto server did not start: {log.read_text()[-2000:]}") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


class _Counted:
    """A request's body as the application reads it, counted, so that what it left unread can be read after."""

    def __init__(self, raw: Any, length: int) -> None:
        self.raw, self.left = raw, length

    def read(self, size: int = -1) -> bytes:
        data: bytes = self.raw.read(self.left if size < 0 else min(size, self.left))
        self.left -= len(data)
        return data

    def readline(self, size: int = -1) -> bytes:
        data: bytes = self.raw.readline(self.left if size < 0 else min(size, self.left))
        self.left -= len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer)[: self.left]
        count: int = self.raw.readinto(view)
        self.left -= count
        return count

    def drain(self) -> None:
        while self.left and self.read(1 << 20):
            pass


def _keep_alive(handler: type[Any]) -> type[Any]:
    """werkzeug's handler with HTTP/1.1 keep-alive. werkzeug closes the connection after every response, because
    it cannot tell where an unread request body ends, and reads whatever comes within 10 ms after each response to
    spare the client a reset. So every S3 request cost a connection and a thread on both sides, and the wait. Here a
    body with a Content-Length is counted as the application reads it and its unread rest is read after; a chunked
    body (never sent by s3fs, aiobotocore or delta-rs here) keeps werkzeug's way: the connection is closed."""
    import selectors

    from werkzeug import serving

    class _NoLinger:  # werkzeug's after-response read, which would swallow the next request on a kept connection
        EVENT_READ = selectors.EVENT_READ

        class DefaultSelector:
            def register(self, *_args: Any) -> None:
                pass

            def select(self, timeout: float | None = None) -> list[Any]:
                return []

            def close(self) -> None:
                pass

    serving.selectors = _NoLinger  # type: ignore[attr-defined]

    class KeepAlive(handler):  # type: ignore[misc]
        # The headers and the body go out in separate writes: with Nagle's algorithm on, each response on a kept
        # connection then waited for the client's delayed ACK (test_s3.py took 141 s against 111 s closing them).
        disable_nagle_algorithm = True

        def run_wsgi(self) -> None:
            self.keep = "chunked" not in self.headers.get("Transfer-Encoding", "").lower()
            raw = self.rfile
            body = self.rfile = _Counted(raw, int(self.headers.get("Content-Length") or 0))
            try:
                super().run_wsgi()
            finally:
                self.rfile = raw
            if self.keep:
                body.drain()

        def send_header(self, keyword: str, value: str) -> None:
            if self.keep and keyword.lower() == "connection" and value.lower() == "close":
                return  # werkzeug's blanket close
            super().send_header(keyword, value)

    return KeepAlive


def _serve(argv: list[str]) -> None:
    """``moto.server``'s main, less three costs it pays on every request (measured with py-spy on the Delta readers'
    test, where moto was 43% of the CPU): it lists its own package's folders to route each request (18% of its CPU:
    listed once here, as they do not change), with ``--quiet`` it logs no line per request (9%), and it keeps its
    connections open (``_keep_alive``)."""
    import logging

    from moto import backends, server

    modules = tuple(backends.list_of_moto_modules())
    backends.list_of_moto_modules = lambda: modules
    server.MotoRequestHandler = _keep_alive(server.MotoRequestHandler)  # type: ignore[misc]
    if "--quiet" in argv:
        argv.remove("--quiet")
        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # errors still go to the log
        server.MotoRequestHandler.log_request = lambda *_args, **_kwargs: None  # type: ignore[method-assign]
    server.main(argv)


if __name__ == "__main__":
    _serve(sys.argv[1:])
