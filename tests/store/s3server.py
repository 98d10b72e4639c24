"""moto's S3 server as a process of its own, for the bucket tests and the S3 benchmark."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


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


def _serve(argv: list[str]) -> None:
    """``moto.server``'s main, less two costs it pays on every request (measured with py-spy on the Delta readers'
    test, where moto was 43% of the CPU): it lists its own package's folders to route each request (18% of its CPU:
    listed once here, as they do not change), and with ``--quiet`` it logs no line per request (9%)."""
    import logging

    from moto import backends, server

    modules = tuple(backends.list_of_moto_modules())
    backends.list_of_moto_modules = lambda: modules
    if "--quiet" in argv:
        argv.remove("--quiet")
        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # errors still go to the log
        server.MotoRequestHandler.log_request = lambda *_args, **_kwargs: None  # type: ignore[method-assign]
    server.main(argv)


if __name__ == "__main__":
    _serve(sys.argv[1:])
